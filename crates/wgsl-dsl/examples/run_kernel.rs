//! Build two kernels with the DSL, run them on the GPU wgpu finds and on the CPU interpreter,
//! and check both results against the same computation in plain Rust:
//!
//! ```text
//! cargo run -p wgsl-dsl --example run_kernel
//! RUST_LOG=info cargo run -p wgsl-dsl --example run_kernel   # also log the adapter choice
//! ```
//!
//! `y = a * x + y` (saxpy) over `n` elements, then the sum of each block of 64 elements of `y`
//! (a workgroup tree reduction), both recorded into one compute pass and submitted once.
//! Exits with status 1 if any result differs from the CPU's by more than a float tolerance.
//! `crates/wgsl-dsl/tests/run_kernel_example.rs` runs the interpreter half as a test.

use rand::{Rng, SeedableRng};
use wgsl_dsl::interp::{HostBuffer, Interpreter};
use wgsl_dsl::prelude::*;
use wgsl_dsl::runtime::{Gpu, GpuBuffer, ceil_div};

const BLOCK: u32 = 64;
/// The problem size: not a multiple of the block, so the last block is partial.
pub const N: u32 = 1001;

#[path = "kernels/saxpy.rs"]
mod saxpy;

use saxpy::saxpy;

/// `sums[w] = y[w*64] + ... + y[w*64 + 63]` (missing elements count as 0).
fn block_sums() -> KernelBuilder {
    let mut k = KernelBuilder::new("block_sums", [BLOCK, 1, 1]);
    let n = k.uniform::<u32>("n");
    let y = k.storage::<RuntimeArray<f32>, ReadOnly>("y");
    let sums = k.storage::<RuntimeArray<f32>, ReadWrite>("sums");
    let tile = k.workgroup::<Array<f32, { BLOCK as usize }>>("tile");
    let i = k.let_("i", global_invocation_id().x());
    let lid = k.let_("lid", local_invocation_id().x());
    // `y[i]` is read only for `i < n`: an `if` value whose arm loads is a branch. (A
    // `select(0.0, y[i], i < n)` would read `y[i]` for every `i`, out of bounds in the last
    // block, which the interpreter reports.)
    let v = k.if_value("v", i.lt(n.load()), |_| y.at(&i).load(), |_| lit(0.0f32));
    k.store(&tile.at(&lid), v);
    k.workgroup_barrier();
    // The halving loop is unrolled in Rust: one `if` and one barrier per step.
    let mut stride = BLOCK / 2;
    while stride > 0 {
        k.if_(lid.lt(stride), |k| {
            k.store(
                &tile.at(&lid),
                tile.at(&lid).load() + tile.at(&lid + stride).load(),
            );
        });
        k.workgroup_barrier();
        stride /= 2;
    }
    k.if_(lid.eq(0u32), |k| {
        k.store(&sums.at(workgroup_id().x()), tile.at(0u32).load());
    });
    k
}

/// The inputs for `n` elements: `a`, `x` and the initial `y`, random in `[-1, 1)`.
#[derive(Debug)]
pub struct Inputs {
    a: f32,
    x: Vec<f32>,
    y0: Vec<f32>,
}

impl Inputs {
    pub fn random(n: u32) -> Self {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        Inputs {
            a: 0.75,
            x: (0..n).map(|_| rng.random_range(-1.0..1.0)).collect(),
            y0: (0..n).map(|_| rng.random_range(-1.0..1.0)).collect(),
        }
    }

    fn n(&self) -> u32 {
        self.x.len() as u32
    }
}

/// What a run gives back: the new `y` and the block sums.
#[derive(Debug)]
pub struct Outputs {
    pub y: Vec<f32>,
    pub sums: Vec<f32>,
}

/// `Ok` with the largest errors of `y` and of the sums if `got` is within a float tolerance of
/// the computation in Rust (sums in `f64`), else `Err` with both.
pub fn check(inputs: &Inputs, got: &Outputs) -> Result<(f32, f64), String> {
    let y_cpu: Vec<f32> = inputs
        .x
        .iter()
        .zip(&inputs.y0)
        .map(|(x, y)| inputs.a.mul_add(*x, *y))
        .collect();
    let sums_cpu: Vec<f64> = y_cpu
        .chunks(BLOCK as usize)
        .map(|c| c.iter().map(|&v| f64::from(v)).sum())
        .collect();
    let y_err = got
        .y
        .iter()
        .zip(&y_cpu)
        .map(|(g, c)| (g - c).abs())
        .fold(0.0, f32::max);
    let sum_err = got
        .sums
        .iter()
        .zip(&sums_cpu)
        .map(|(g, c)| (f64::from(*g) - c).abs())
        .fold(0.0, f64::max);
    let ok = got.y.len() == y_cpu.len()
        && got.sums.len() == sums_cpu.len()
        && y_err <= 1e-6
        && sum_err <= 1e-4
        && got.sums.iter().all(|s| s.is_finite());
    if ok {
        Ok((y_err, sum_err))
    } else {
        Err(format!(
            "max |y - cpu| = {y_err:e}, max |sum - cpu| = {sum_err:e} ({} of {} sums finite)",
            got.sums.iter().filter(|s| s.is_finite()).count(),
            got.sums.len()
        ))
    }
}

/// Both kernels on the GPU, recorded into one pass and submitted once.
fn run_on_gpu(gpu: &Gpu, inputs: &Inputs) -> Result<Outputs, Box<dyn std::error::Error>> {
    let target = gpu.target_limits();
    let saxpy = gpu.compile(&saxpy().build_for(&target)?)?;
    let block_sums = gpu.compile(&block_sums().build_for(&target)?)?;
    let n = inputs.n();
    let a_buf = GpuBuffer::from_value(gpu, inputs.a)?;
    let n_buf = GpuBuffer::from_value(gpu, n)?;
    let x_buf = GpuBuffer::from_slice(gpu, &inputs.x)?;
    let y_buf = GpuBuffer::from_slice(gpu, &inputs.y0)?;
    // Poisoned: a block sum the kernel fails to write stays NaN and fails the check.
    let sums_buf = GpuBuffer::from_slice(gpu, &vec![f32::NAN; ceil_div(n, BLOCK) as usize])?;
    let mut rec = gpu.recorder();
    rec.dispatch(
        &saxpy,
        &[&a_buf, &x_buf, &y_buf],
        saxpy.workgroups_for([n, 1, 1]),
    )?;
    rec.dispatch(
        &block_sums,
        &[&n_buf, &y_buf, &sums_buf],
        block_sums.workgroups_for([n, 1, 1]),
    )?;
    rec.submit()?;
    Ok(Outputs {
        y: y_buf.read(gpu)?,
        sums: sums_buf.read(gpu)?,
    })
}

/// Both kernels on the CPU interpreter, which also checks every index and every pair of
/// accesses for races.
pub fn run_on_interpreter(inputs: &Inputs) -> Result<Outputs, Box<dyn std::error::Error>> {
    let cpu = Interpreter::new();
    let saxpy = cpu.compile(&saxpy().build()?)?;
    let block_sums = cpu.compile(&block_sums().build()?)?;
    let n = inputs.n();
    let a_buf = HostBuffer::from_value(inputs.a);
    let n_buf = HostBuffer::from_value(n);
    let x_buf = HostBuffer::from_slice(&inputs.x);
    let y_buf = HostBuffer::from_slice(&inputs.y0);
    let sums_buf = HostBuffer::from_slice(&vec![f32::NAN; ceil_div(n, BLOCK) as usize]);
    cpu.dispatch(
        &saxpy,
        &[&a_buf, &x_buf, &y_buf],
        saxpy.workgroups_for([n, 1, 1]),
    )?;
    cpu.dispatch(
        &block_sums,
        &[&n_buf, &y_buf, &sums_buf],
        block_sums.workgroups_for([n, 1, 1]),
    )?;
    Ok(Outputs {
        y: y_buf.read(),
        sums: sums_buf.read(),
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    env_logger::init();
    let gpu = Gpu::new()?;
    let info = gpu.adapter_info();
    println!(
        "adapter: {} ({:?}, {:?}, driver {} {})",
        info.name, info.backend, info.device_type, info.driver, info.driver_info
    );
    let inputs = Inputs::random(N);
    let blocks = ceil_div(N, BLOCK);
    let mut ok = true;
    for (executor, run) in [
        ("gpu", run_on_gpu(&gpu, &inputs)),
        ("interpreter", run_on_interpreter(&inputs)),
    ] {
        let got = run?;
        match check(&inputs, &got) {
            Ok((y_err, sum_err)) => println!(
                "{executor}: saxpy over {N} elements: max |{executor} - cpu| = {y_err:e}; \
                 {blocks} block sums: max |{executor} - cpu| = {sum_err:e}; sum of y {:.6}",
                got.sums.iter().map(|&s| f64::from(s)).sum::<f64>()
            ),
            Err(e) => {
                eprintln!("MISMATCH: {executor}: {e}");
                ok = false;
            }
        }
    }
    if ok {
        println!("OK: the GPU's and the interpreter's results match the CPU");
        Ok(())
    } else {
        std::process::exit(1);
    }
}
