//! The AD fuzzer's CI run: differentiable kernels from a fixed seed for about a minute
//! (a fixed number of cases), each derived backward pass checked by the adjoint identity
//! against forward mode on the interpreter (race checks on), every fourth also on the GPU
//! (lavapipe in CI); a refusal must be located at the author's line. Fails with the shrunk
//! kernel as DSL builder calls. `WGSL_DSL_GPU=off` runs the interpreter only. FUZZING.md
//! ("AD fuzzer") has the long runs.

use wgsl_dsl_fuzz::Budget;
use wgsl_dsl_fuzz::ad;

/// Kernels per CI run, of at most `STATEMENTS` statements each.
const CASES: u64 = 150;
const STATEMENTS: i32 = 10;
const SEED: u64 = 0xad_2026;

#[test]

fn differentiable_kernels_pass_the_adjoint_identity() {
    let gpu_on = std::env::var("WGSL_DSL_GPU").map_or(true, |v| v != "off");
    let gpu = gpu_on.then(|| {
        wgsl_dsl::runtime::Gpu::new().unwrap_or_else(|e| {
            panic!("no wgpu adapter ({e}); install mesa-vulkan-drivers, or set WGSL_DSL_GPU=off")
        })
    });
    let report = ad::run(
        SEED,
        Budget::Cases(CASES),
        STATEMENTS,
        gpu.as_ref(),
        4,
        true,
        &mut |_| {},
    );
    eprintln!("{report}");
    assert_eq!(report.cases, CASES);
    let failures: Vec<String> = report.failures.iter().map(ToString::to_string).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
