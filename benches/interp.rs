//! The interpreter against the GPU (wgpu; lavapipe on a machine without one), in one process:
//! `cargo bench --bench interp` (append `-- NAME` to keep the examples whose name contains
//! NAME). Set `WGSL_DSL_GPU=off` to time the interpreter alone.
//!
//! 1. Throughput per example kernel: the case of seed 1 (the test suite's sizes), run once to
//!    warm up, then the median of 7 runs of [`run`] (upload every binding, one dispatch, read
//!    every binding back), the kernel compiled once. The interpreter with its checks (races,
//!    unwritten reads) on and off.
//! 2. The test suite's kernel checks: every [`verify`] of `interp_examples.rs`/`runtime_examples.rs`
//!    and `interp_mlp.rs`/`mlp_kernels.rs`+`mlp_fused.rs` (build, compile, run, compare), timed
//!    once in full on each executor.

use std::time::{Duration, Instant};

use mlp_verified::ops::{self, fused};
use wgsl_dsl::interp::{InterpOptions, Interpreter};
use wgsl_dsl_harness::{Case, SeedableRng, UploadStruct, VerifiedOp, run, verify};
use wgsl_dsl_workspace_tests::{Rng, examples};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time(runs: usize, mut f: impl FnMut()) -> Duration {
    f();
    median(
        (0..runs)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .collect(),
    )
}

/// The median time of one run of `case`, the kernel compiled before.
fn run_time<E: UploadStruct>(exec: &E, op: &dyn VerifiedOp, case: &Case) -> Duration {
    let kernel = exec.build_and_compile(&op.kernel()).expect("compiles");
    time(7, || {
        run(exec, &kernel, case).expect("runs");
    })
}

/// The kernels the test suite verifies, and its checks: (index of the kernel, case) in the
/// tests' order.
type Suite = (Vec<Box<dyn VerifiedOp>>, Vec<(usize, Case)>);

fn suite() -> Suite {
    let mut kernels: Vec<Box<dyn VerifiedOp>> = Vec::new();
    let mut checks = Vec::new();
    for e in examples::all() {
        for seed in examples::SEEDS {
            checks.push((kernels.len(), (e.case)(&mut Rng::seed_from_u64(seed))));
        }
        kernels.push(Box::new(e));
    }
    for op in ops::all() {
        for (i, s) in ops::CHECKED_SIZES.iter().enumerate() {
            let case = op.case(&mut Rng::seed_from_u64(100 + i as u64), s);
            checks.push((kernels.len(), case));
        }
        kernels.push(Box::new(op));
    }
    for op in fused::all() {
        for (i, s) in fused::CHECKED_SIZES.iter().enumerate() {
            let case = op.case(&mut Rng::seed_from_u64(200 + i as u64), s);
            checks.push((kernels.len(), case));
        }
        kernels.push(Box::new(op));
    }
    (kernels, checks)
}

/// Every check of [`suite`] on `exec`: (time, failures).
fn suite_time<E: UploadStruct>(exec: &E, (kernels, checks): &Suite) -> (Duration, usize) {
    let t = Instant::now();
    let failures = checks
        .iter()
        .filter(|(k, case)| verify(exec, kernels[*k].as_ref(), case).is_err())
        .count();
    (t.elapsed(), failures)
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

fn main() {
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let gpu = wgsl_dsl_workspace_tests::gpu();
    if let Some(g) = gpu {
        println!("GPU peer: {}", g.adapter_info().name);
    }
    let checked = Interpreter::new();
    let unchecked = Interpreter::with_options(InterpOptions {
        checks: false,
        ..Default::default()
    });
    println!(
        "| example | invocations | interpreter, checks on | invocations/s | checks off | GPU | interpreter / GPU time |"
    );
    println!("|---|---|---|---|---|---|---|");
    let (mut total_inv, mut total_cpu, mut total_gpu) = (0u64, Duration::ZERO, Duration::ZERO);
    for e in examples::all() {
        if filter
            .as_ref()
            .is_some_and(|f| !e.name.contains(f.as_str()))
        {
            continue;
        }
        let case = (e.case)(&mut Rng::seed_from_u64(1));
        let size = (e.build)()
            .build()
            .expect("builds")
            .signature
            .workgroup_size;
        let invocations = case
            .workgroups
            .iter()
            .map(|&n| u64::from(n))
            .product::<u64>()
            * size.iter().map(|&n| u64::from(n)).product::<u64>();
        let on_cpu = run_time(&checked, &e, &case);
        let on_cpu_unchecked = run_time(&unchecked, &e, &case);
        let on_gpu = gpu
            .filter(|g| {
                !e.needs_subgroups
                    || g.features()
                        .contains(wgsl_dsl::runtime::wgpu::Features::SUBGROUP)
            })
            .map(|g| run_time(g, &e, &case));
        total_inv += invocations;
        total_cpu += on_cpu;
        let ratio = match on_gpu {
            Some(t) => {
                total_gpu += t;
                format!("{:.2}", on_cpu.as_secs_f64() / t.as_secs_f64())
            }
            None => "-".into(),
        };
        println!(
            "| {} | {invocations} | {} | {:.2} M | {} | {} | {ratio} |",
            e.name,
            ms(on_cpu),
            invocations as f64 / on_cpu.as_secs_f64() / 1e6,
            ms(on_cpu_unchecked),
            on_gpu.map_or("-".into(), ms),
        );
    }
    println!(
        "| all | {total_inv} | {} | {:.2} M | | {} | {} |",
        ms(total_cpu),
        total_inv as f64 / total_cpu.as_secs_f64() / 1e6,
        if total_gpu.is_zero() {
            "-".into()
        } else {
            ms(total_gpu)
        },
        if total_gpu.is_zero() {
            "-".into()
        } else {
            format!("{:.2}", total_cpu.as_secs_f64() / total_gpu.as_secs_f64())
        },
    );
    if filter.is_some() {
        return;
    }
    println!();
    let checks = suite();
    println!(
        "| the test suite's {} kernel checks | time | failures |",
        checks.1.len()
    );
    println!("|---|---|---|");
    let (t, f) = suite_time(&checked, &checks);
    println!("| interpreter, checks on | {} | {f} |", ms(t));
    if let Some(g) = gpu {
        let (t, f) = suite_time(g, &checks);
        println!("| GPU ({}) | {} | {f} |", g.adapter_info().name, ms(t));
    }
}
