//! Helpers of the `autodiff_*` tests: running a kernel of float buffers on the interpreter and
//! the GPU, central differences in f64, tolerances.

#![allow(dead_code)]

use std::sync::OnceLock;

use wgsl_dsl::Shader;
use wgsl_dsl::interp::{HostBuffer, Interpreter};
use wgsl_dsl::runtime::{BindArg, Gpu, GpuBuffer};

/// One device for the test binary; no adapter is a failure (CI installs lavapipe).
pub fn gpu() -> &'static Gpu {
    static GPU: OnceLock<Gpu> = OnceLock::new();
    GPU.get_or_init(|| Gpu::new().unwrap_or_else(|e| panic!("no wgpu adapter: {e}")))
}

/// The executors a kernel runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Executor {
    Interpreter,
    Gpu,
}

/// Runs `shader` over `workgroups` with the read-only `inputs` bound first, then one
/// read-write output of each length in `outputs` (poisoned with NaN first), on `executor`;
/// returns the outputs. The interpreter's race, bounds and barrier checks apply.
pub fn run(
    executor: Executor,
    shader: &Shader,
    inputs: &[&[f32]],
    outputs: &[usize],
    workgroups: [u32; 3],
) -> Vec<Vec<f32>> {
    match executor {
        Executor::Interpreter => {
            let cpu = Interpreter::new();
            let program = cpu
                .compile(shader)
                .expect("the interpreter compiles the kernel");
            let ins: Vec<HostBuffer<f32>> =
                inputs.iter().map(|d| HostBuffer::from_slice(d)).collect();
            let outs: Vec<HostBuffer<f32>> = outputs
                .iter()
                .map(|&n| HostBuffer::from_slice(&vec![f32::NAN; n]))
                .collect();
            let mut args: Vec<&dyn wgsl_dsl::interp::HostArg> = Vec::new();
            for b in &ins {
                args.push(b);
            }
            for b in &outs {
                args.push(b);
            }
            cpu.dispatch(&program, &args, workgroups)
                .unwrap_or_else(|e| panic!("{}: {e}", shader.signature.name));
            outs.iter().map(HostBuffer::read).collect()
        }
        Executor::Gpu => {
            let gpu = gpu();
            let kernel = gpu.compile(shader).expect("the GPU compiles the kernel");
            let ins: Vec<GpuBuffer<f32>> = inputs
                .iter()
                .map(|d| GpuBuffer::from_slice(gpu, d).expect("upload"))
                .collect();
            let outs: Vec<GpuBuffer<f32>> = outputs
                .iter()
                .map(|&n| GpuBuffer::from_slice(gpu, &vec![f32::NAN; n]).expect("upload"))
                .collect();
            let mut args: Vec<&dyn BindArg> = Vec::new();
            for b in &ins {
                args.push(b);
            }
            for b in &outs {
                args.push(b);
            }
            gpu.dispatch(&kernel, &args, workgroups)
                .unwrap_or_else(|e| panic!("{}: {e}", shader.signature.name));
            outs.iter()
                .map(|b| b.read(gpu).expect("read back"))
                .collect()
        }
    }
}

/// The central difference of `f` in coordinate `j` at `x`, step `h * max(1, |x_j|)`.
pub fn central_difference(f: impl Fn(&[f64]) -> f64, x: &[f64], j: usize, h: f64) -> f64 {
    let h = h * x[j].abs().max(1.0);
    let mut plus = x.to_vec();
    let mut minus = x.to_vec();
    plus[j] += h;
    minus[j] -= h;
    (f(&plus) - f(&minus)) / (2.0 * h)
}

/// `|got - want| <= tol (1 + |want|)`, NaN never close.
pub fn close(got: f64, want: f64, tol: f64) -> bool {
    (got - want).abs() <= tol * (1.0 + want.abs())
}

/// `n` values spread over `[low, high)`, the same for the same `seed` (an xorshift of the
/// seed; not a statistical generator, only varied test data).
pub fn uniform(n: usize, seed: u64, low: f32, high: f32) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            low + (s >> 40) as f32 / (1u64 << 24) as f32 * (high - low)
        })
        .collect()
}
