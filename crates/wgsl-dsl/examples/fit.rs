//! Fitting `y = a sin(b x + c) + d` to noisy samples by gradient descent on the GPU, the
//! loss's gradient from a derived kernel only (`wgsl_dsl::autodiff::derive`): no derivative
//! is written by hand. Before training, the derived gradient is checked against central
//! differences (`autodiff::check`) on the interpreter.
//!
//! `cargo run -p wgsl-dsl --example fit` (on the interpreter when no GPU adapter is found).

#[path = "fit_model/mod.rs"]
mod fit_model;

use fit_model::PARAMS;
use wgsl_dsl::autodiff::{CheckOptions, Data, check};
use wgsl_dsl::interp::Interpreter;
use wgsl_dsl::runtime::{Gpu, GpuBuffer};

const SAMPLES: usize = 301;
const STEPS: usize = 300;
const RATE: f32 = 0.05;

/// The truth the samples come from, and the starting guess.
const TRUTH: [f32; PARAMS] = [1.5, 2.0, 0.5, -0.25];
const START: [f32; PARAMS] = [1.0, 1.6, 0.0, 0.0];

/// A small deterministic generator (SplitMix64) for the samples' noise, in `[-1, 1)`.
fn noise(state: &mut u64) -> f32 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 23) as f32 - 1.0
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut state = 3;
    let xs: Vec<f32> = (0..SAMPLES)
        .map(|i| -3.0 + 6.0 * i as f32 / (SAMPLES - 1) as f32)
        .collect();
    let [a, b, c, d] = TRUTH;
    let ts: Vec<f32> = xs
        .iter()
        .map(|x| a * (b * x + c).sin() + d + 0.05 * noise(&mut state))
        .collect();

    let forward = fit_model::squared_error();
    let backward = fit_model::squared_error_backward()?;
    println!("{backward}");

    // The derived gradient against central differences, on 37 samples.
    let report = check(
        &forward,
        &backward,
        &[
            ("p", Data::F32(START.to_vec())),
            ("x", Data::F32(xs[..37].to_vec())),
            ("t", Data::F32(ts[..37].to_vec())),
            ("loss", Data::F32(vec![0.0; 37])),
        ],
        [1, 1, 1],
        &Interpreter::new(),
        CheckOptions::default(),
    )?;
    println!("{report}");

    let gpu = match Gpu::new() {
        Ok(gpu) => gpu,
        Err(e) => {
            println!(
                "no GPU adapter ({e}): the gradient check above ran on the interpreter; stopping"
            );
            return Ok(());
        }
    };
    let limits = gpu.target_limits();
    let loss_kernel = gpu.compile(&forward.build_for(&limits)?)?;
    let grad_kernel = gpu.compile(&backward.kernels[0].kernel.build_for(&limits)?)?;
    let descend = gpu.compile(&fit_model::descend().build_for(&limits)?)?;

    let p = GpuBuffer::from_slice(&gpu, &START)?;
    let x = GpuBuffer::from_slice(&gpu, &xs)?;
    let t = GpuBuffer::from_slice(&gpu, &ts)?;
    let loss = GpuBuffer::<f32>::zeroed(&gpu, SAMPLES)?;
    // The mean loss's incoming gradient: 1 / n for every sample.
    let d_loss = GpuBuffer::from_slice(&gpu, &vec![1.0 / SAMPLES as f32; SAMPLES])?;
    let d_p = GpuBuffer::<u32>::zeroed(&gpu, PARAMS)?;
    let rate = GpuBuffer::from_value(&gpu, RATE)?;
    let grid = loss_kernel.workgroups_for([SAMPLES as u32, 1, 1]);

    for step in 0..=STEPS {
        gpu.dispatch(&loss_kernel, &[&p, &x, &t, &loss], grid)?;
        if step % 50 == 0 {
            let mean = loss.read(&gpu)?.iter().map(|l| f64::from(*l)).sum::<f64>() / SAMPLES as f64;
            let params = p.read(&gpu)?;
            println!("step {step:>4}: mean squared error {mean:.6}, [a, b, c, d] = {params:.4?}");
        }
        if step == STEPS {
            break;
        }
        gpu.dispatch(&grad_kernel, &[&p, &x, &t, &d_loss, &d_p], grid)?;
        gpu.dispatch(&descend, &[&rate, &p, &d_p], [1, 1, 1])?;
    }
    println!("truth:                                    [a, b, c, d] = {TRUTH:.4?}");
    Ok(())
}
