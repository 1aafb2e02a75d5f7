//! The fuzzer's CI run: a fixed number of kernels from a fixed seed through every oracle, on
//! the GPU (lavapipe in CI) and the interpreter, failing on any mismatch with the shrunk
//! kernel as Rust builder calls. `WGSL_DSL_GPU=off` runs the interpreter-only oracles.
//! FUZZING.md has the long runs.

use wgsl_dsl_fuzz::{Budget, GenOptions, Targets, run};

/// Kernels per CI run (about 2 minutes on the 2-core CI machine with lavapipe), of at most
/// `STATEMENTS` statements each (the long runs of FUZZING.md use the default, 24).
const CASES: u64 = 1000;
const STATEMENTS: i32 = 8;
/// The run's seed (case seeds derive from it: `fuzz --replay <case seed>` reruns one).
const SEED: u64 = 0x5eed_2026;

#[test]
fn a_thousand_kernels_pass_every_oracle() {
    let gpu = std::env::var("WGSL_DSL_GPU").map_or(true, |v| v != "off");
    let mut targets = if gpu {
        Targets::with_gpu().unwrap_or_else(|e| {
            panic!("no wgpu adapter ({e}); install mesa-vulkan-drivers, or set WGSL_DSL_GPU=off")
        })
    } else {
        Targets::interpreter_only()
    };
    eprintln!("targets: {}", targets.describe());
    let report = run(
        SEED,
        Budget::Cases(CASES),
        &GenOptions {
            statements: STATEMENTS,
            ..GenOptions::default()
        },
        true,
        &mut targets,
        &mut || if gpu { Targets::with_gpu().ok() } else { None },
        &mut |_| {},
    );
    eprintln!(
        "{} cases in {:.1} s ({:.1} kernels/s), {} on the GPU, {} output values, {} folded constants",
        report.cases,
        report.elapsed.as_secs_f64(),
        report.rate(),
        report.gpu_cases,
        report.slots,
        report.consts
    );
    assert_eq!(report.cases, CASES);
    let failures: Vec<String> = report.failures.iter().map(ToString::to_string).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    if gpu {
        assert!(
            report.gpu_cases > CASES / 2,
            "{} cases ran on the GPU",
            report.gpu_cases
        );
    }
}
