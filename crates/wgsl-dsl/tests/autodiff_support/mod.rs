//! Helpers of the `autodiff_*` tests: running a kernel of float buffers on the interpreter and
//! the GPU, central differences in f64, tolerances.

#![allow(dead_code)]

pub mod pairwise;

use std::sync::OnceLock;

use wgsl_dsl::Shader;
use wgsl_dsl::autodiff::{self, Backward, CheckError, Data, Gradients};
use wgsl_dsl::exec::Executor;
use wgsl_dsl::interp::Interpreter;
use wgsl_dsl::runtime::Gpu;

/// One device for the test binary; no adapter is a failure (CI installs lavapipe).
pub fn gpu() -> &'static Gpu {
    static GPU: OnceLock<Gpu> = OnceLock::new();
    GPU.get_or_init(|| Gpu::new().unwrap_or_else(|e| panic!("no wgpu adapter: {e}")))
}

/// The executor a test runs a kernel on (a choice to iterate over; the running itself is
/// written once, against `wgsl_dsl::exec::Executor`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum On {
    Interpreter,
    Gpu,
}

impl On {
    /// `autodiff::run_backward` on this executor.
    pub fn run_backward(
        self,
        backward: &Backward,
        data: &[(&str, Data)],
        incoming: &[(&str, Vec<f32>)],
        workgroups: [u32; 3],
    ) -> Result<Gradients, CheckError> {
        match self {
            On::Interpreter => {
                autodiff::run_backward(backward, data, incoming, workgroups, &Interpreter::new())
            }
            On::Gpu => autodiff::run_backward(backward, data, incoming, workgroups, gpu()),
        }
    }
}

/// Runs `shader` over `workgroups` with the read-only `inputs` bound first, then one
/// read-write output of each length in `outputs` (poisoned with NaN first), on `executor`;
/// returns the outputs. The interpreter's race, bounds and barrier checks apply.
pub fn run(
    executor: On,
    shader: &Shader,
    inputs: &[&[f32]],
    outputs: &[usize],
    workgroups: [u32; 3],
) -> Vec<Vec<f32>> {
    match executor {
        On::Interpreter => run_on(&Interpreter::new(), shader, inputs, outputs, workgroups),
        On::Gpu => run_on(gpu(), shader, inputs, outputs, workgroups),
    }
}

/// [`run`] on `on`.
pub fn run_on<E: Executor>(
    on: &E,
    shader: &Shader,
    inputs: &[&[f32]],
    outputs: &[usize],
    workgroups: [u32; 3],
) -> Vec<Vec<f32>> {
    let name = &shader.signature.name;
    let fail = |what: &str, e: E::Error| -> ! { panic!("{name} on {}: {what}: {e}", on.name()) };
    let kernel = on.compile(shader).unwrap_or_else(|e| fail("compile", e));
    let upload = |d: &[f32]| on.upload(d).unwrap_or_else(|e| fail("upload", e));
    let ins: Vec<E::Buffer<f32>> = inputs.iter().map(|d| upload(d)).collect();
    let outs: Vec<E::Buffer<f32>> = outputs
        .iter()
        .map(|&n| upload(&vec![f32::NAN; n]))
        .collect();
    let args: Vec<&E::Arg> = ins.iter().chain(&outs).map(E::arg).collect();
    on.dispatch(&kernel, &args, workgroups)
        .unwrap_or_else(|e| fail("dispatch", e));
    outs.iter()
        .map(|b| on.read(b).unwrap_or_else(|e| fail("read back", e)))
        .collect()
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
