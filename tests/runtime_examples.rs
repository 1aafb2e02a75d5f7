//! Every example kernel of the registry runs on the GPU (lavapipe in CI) through the
//! verification harness: random inputs of odd sizes, outputs poisoned first, and every
//! binding's final contents equal to the CPU reference's, and to the interpreter's
//! (`wgsl_dsl_harness::agree`: within the example's tolerance, integers exactly).

use wgsl_dsl::runtime::Gpu;
use wgsl_dsl_harness::{Interpreter, SeedableRng, agree, verify};
use wgsl_dsl_workspace_tests::{Rng, examples};

#[test]
fn every_example_kernel_matches_its_cpu_reference_on_the_gpu() {
    let gpu = Gpu::new().expect("a GPU adapter (CI installs lavapipe: mesa-vulkan-drivers)");
    let cpu = Interpreter::new();
    let mut failures = Vec::new();
    let all = examples::all();
    for e in &all {
        if e.needs_subgroups
            && !gpu
                .features()
                .contains(wgsl_dsl::runtime::wgpu::Features::SUBGROUP)
        {
            continue;
        }
        for seed in [1, 2] {
            let case = (e.case)(&mut Rng::seed_from_u64(seed));
            if let Err(err) = verify(&gpu, e, &case) {
                failures.push(format!("{err} (seed {seed})"));
            }
            if let Err(err) = agree(&gpu, &cpu, e, &case) {
                failures.push(format!("{err} (seed {seed}, GPU against the interpreter)"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} examples failed:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
}
