//! The fused training-step kernels (`mlp::kernels::fused`) against their `f64` specifications on
//! the GPU (lavapipe in CI), in the CPU's configuration and in the GPU's (small tiles, split-K),
//! at the batch sizes 1, 7, 65 and 129 and widths that are not multiples of any tile: random
//! inputs, outputs poisoned before the run, relative error <= 1e-5.

use mlp::kernels::fused;
use mlp::kernels::verify::{compare, run_case};
use mlp::kernels::{CaseSizes, VerifiedOp};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use wgsl_dsl::runtime::Gpu;

const TOL: f64 = 1e-5;

fn check(gpu: &Gpu, op: &dyn VerifiedOp, sizes: &CaseSizes, seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let case = op.case(&mut rng, sizes);
    let expected = op.spec(&case);
    let actual = run_case(gpu, op, &case).unwrap_or_else(|e| panic!("{}: {e}", op.name()));
    if let Err(msg) = compare(op.name(), &actual, &expected, TOL) {
        panic!("{msg} (sizes {sizes:?}, seed {seed})");
    }
}

#[test]
fn every_fused_kernel_matches_its_reference_at_odd_batches_and_widths() {
    let gpu = Gpu::new().expect("a GPU adapter (install mesa-vulkan-drivers for lavapipe)");
    let sizes = [
        (1, 61, 45, 11),
        (7, 33, 17, 10),
        (65, 70, 37, 3),
        (129, 45, 19, 10),
    ];
    let ops = fused::all();
    assert_eq!(
        ops.len(),
        8,
        "two configurations: forward, head, SGD and Adam updates"
    );
    for op in &ops {
        for (i, &(batch, inputs, outputs, classes)) in sizes.iter().enumerate() {
            let s = CaseSizes {
                batch,
                inputs,
                outputs,
                classes,
            };
            check(&gpu, op.as_ref(), &s, 200 + i as u64);
        }
    }
}
