//! Build two kernels with the DSL, run them on the GPU wgpu finds, and check the result
//! against the same computation on the CPU:
//!
//! ```text
//! cargo run -p wgsl-dsl --example run_kernel
//! RUST_LOG=info cargo run -p wgsl-dsl --example run_kernel   # also log the adapter choice
//! ```
//!
//! `y = a * x + y` (saxpy) over `n` elements, then the sum of each block of 64 elements of `y`
//! (a workgroup tree reduction), both recorded into one compute pass and submitted once.
//! Exits with status 1 if any result differs from the CPU's by more than a float tolerance.

use rand::{Rng, SeedableRng};
use wgsl_dsl::prelude::*;
use wgsl_dsl::runtime::{Gpu, GpuBuffer, ceil_div};

const BLOCK: u32 = 64;

fn saxpy() -> KernelBuilder {
    let mut k = KernelBuilder::new("saxpy", [BLOCK, 1, 1]);
    let a = k.uniform::<f32>("a");
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.lt(y.len()), |k| {
        k.store(&y.at(&i), fma(a.load(), x.at(&i).load(), y.at(&i).load()));
    });
    k
}

/// `sums[w] = y[w*64] + ... + y[w*64 + 63]` (missing elements count as 0).
fn block_sums() -> KernelBuilder {
    let mut k = KernelBuilder::new("block_sums", [BLOCK, 1, 1]);
    let n = k.uniform::<u32>("n");
    let y = k.storage::<RuntimeArray<f32>, ReadOnly>("y");
    let sums = k.storage::<RuntimeArray<f32>, ReadWrite>("sums");
    let tile = k.workgroup::<Array<f32, { BLOCK as usize }>>("tile");
    let i = k.let_("i", global_invocation_id().x());
    let lid = k.let_("lid", local_invocation_id().x());
    k.store(
        &tile.at(&lid),
        select(0.0f32, y.at(&i).load(), i.lt(n.load())),
    );
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

fn main() -> Result<(), Box<dyn std::error::Error>> {
    env_logger::init();
    let gpu = Gpu::new()?;
    let info = gpu.adapter_info();
    println!(
        "adapter: {} ({:?}, {:?}, driver {} {})",
        info.name, info.backend, info.device_type, info.driver, info.driver_info
    );

    let target = gpu.target_limits();
    let saxpy = gpu.compile(&saxpy().build_for(&target)?)?;
    let block_sums = gpu.compile(&block_sums().build_for(&target)?)?;

    let n: u32 = 1001;
    let blocks = ceil_div(n, BLOCK);
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let a = 0.75f32;
    let x: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    let y0: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();

    let a_buf = GpuBuffer::from_value(&gpu, a)?;
    let n_buf = GpuBuffer::from_value(&gpu, n)?;
    let x_buf = GpuBuffer::from_slice(&gpu, &x)?;
    let y_buf = GpuBuffer::from_slice(&gpu, &y0)?;
    // Poisoned: a block sum the kernel fails to write stays NaN and fails the check.
    let sums_buf = GpuBuffer::from_slice(&gpu, &vec![f32::NAN; blocks as usize])?;

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
    let y = y_buf.read(&gpu)?;
    let sums = sums_buf.read(&gpu)?;

    let y_cpu: Vec<f32> = x.iter().zip(&y0).map(|(x, y)| a.mul_add(*x, *y)).collect();
    let sums_cpu: Vec<f64> = y_cpu
        .chunks(BLOCK as usize)
        .map(|c| c.iter().map(|&v| f64::from(v)).sum())
        .collect();
    let y_err = y
        .iter()
        .zip(&y_cpu)
        .map(|(g, c)| (g - c).abs())
        .fold(0.0, f32::max);
    let sum_err = sums
        .iter()
        .zip(&sums_cpu)
        .map(|(g, c)| (f64::from(*g) - c).abs())
        .fold(0.0, f64::max);
    let ok = y.len() == y_cpu.len()
        && sums.len() == sums_cpu.len()
        && y_err <= 1e-6
        && sum_err <= 1e-4
        && sums.iter().all(|s| s.is_finite());
    println!(
        "saxpy over {n} elements: max |gpu - cpu| = {y_err:e}; {blocks} block sums: max |gpu - cpu| = {sum_err:e}"
    );
    println!(
        "sum of y: gpu {:.6}, cpu {:.6}",
        sums.iter().map(|&s| f64::from(s)).sum::<f64>(),
        sums_cpu.iter().sum::<f64>()
    );
    if ok {
        println!("OK: GPU result matches the CPU");
        Ok(())
    } else {
        eprintln!("MISMATCH: GPU result differs from the CPU");
        std::process::exit(1);
    }
}
