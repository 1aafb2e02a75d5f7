//! The fused training-step kernels (`mlp::kernels::fused`) against their `f64` specifications on
//! the GPU (lavapipe in CI), through the verification harness, in the CPU's configuration and
//! in the GPU's (small tiles, split-K), at the batch sizes 1, 7, 65 and 129 and widths that are
//! not multiples of any tile: random inputs, outputs poisoned before the run, relative error
//! <= 1e-5; and the GPU's outputs against the interpreter's (`wgsl_dsl_harness::agree`). The
//! ReLU head in every configuration, the other activations' heads in the first.

use mlp_verified::ops::fused;
use wgsl_dsl::runtime::Gpu;
use wgsl_dsl_harness::{Interpreter, SeedableRng, agree, verify};
use wgsl_dsl_workspace_tests::Rng;

#[test]
fn every_fused_kernel_matches_its_reference_at_odd_batches_and_widths() {
    let gpu = Gpu::new().expect("a GPU adapter (install mesa-vulkan-drivers for lavapipe)");
    let ops = fused::all();
    assert_eq!(
        ops.len(),
        12 + 6,
        "three configurations: forward, head, SGD and Adam updates; the heads of the six other \
         activations in the first"
    );
    for op in &ops {
        for (i, s) in fused::CHECKED_SIZES.iter().enumerate() {
            let seed = 200 + i as u64;
            let case = op.case(&mut Rng::seed_from_u64(seed), s);
            verify(&gpu, op, &case).unwrap_or_else(|m| panic!("{m} (sizes {s:?}, seed {seed})"));
            agree(&gpu, &Interpreter::new(), op, &case).unwrap_or_else(|m| {
                panic!("{m} (sizes {s:?}, seed {seed}, GPU against the interpreter)")
            });
        }
    }
}
