//! Every example kernel of the registry runs on the GPU (lavapipe in CI) through the
//! verification harness: random inputs of odd sizes, outputs poisoned first, and every
//! binding's final contents equal to the CPU reference's, and to the interpreter's
//! (`wgsl_dsl_harness::agree`: within the example's tolerance, integers exactly).

use wgsl_dsl::runtime::{Gpu, wgpu};
use wgsl_dsl_harness::{Interpreter, agree, verify};
use wgsl_dsl_workspace_tests::examples;

#[test]
fn every_example_kernel_matches_its_cpu_reference_on_the_gpu() {
    let gpu = Gpu::new().expect("a GPU adapter (CI installs lavapipe: mesa-vulkan-drivers)");
    let cpu = Interpreter::new();
    let subgroups = gpu.features().contains(wgpu::Features::SUBGROUP);
    examples::check_all(
        |e| subgroups || !e.needs_subgroups,
        |e, case| {
            let mut errors = Vec::new();
            if let Err(err) = verify(&gpu, e, case) {
                errors.push(err.to_string());
            }
            if let Err(err) = agree(&gpu, &cpu, e, case) {
                errors.push(format!("{err} (GPU against the interpreter)"));
            }
            errors
        },
    );
}
