//! Every MLP kernel against its `f64` reference on the GPU (lavapipe in CI): random inputs of
//! odd sizes, outputs poisoned before the run, relative error <= 1e-5.

use mlp::kernels::loss::softmax_case;
use mlp::kernels::verify::{compare, run_case};
use mlp::kernels::{CaseSizes, VerifiedOp};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use wgsl_dsl::runtime::Gpu;

const TOL: f64 = 1e-5;

fn gpu() -> Gpu {
    Gpu::new().expect("a GPU adapter (install mesa-vulkan-drivers for lavapipe)")
}

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
fn every_kernel_matches_its_reference_on_odd_sizes() {
    let gpu = gpu();
    let sizes = [
        CaseSizes::default(), // batch 37, inputs 61, outputs 45, classes 11
        CaseSizes {
            batch: 5,
            inputs: 17,
            outputs: 3,
            classes: 2,
        },
    ];
    for op in mlp::kernels::all() {
        for (i, s) in sizes.iter().enumerate() {
            check(&gpu, op.as_ref(), s, 100 + i as u64);
        }
    }
}

#[test]
fn softmax_cross_entropy_is_finite_and_exact_on_extreme_logits() {
    let gpu = gpu();
    let op = mlp::kernels::loss::SoftmaxCrossEntropy;
    #[rustfmt::skip]
    let logits = vec![
        1000.0, 0.0, -1000.0,    // huge spread, label on the smallest: loss 2000
        1000.0, 0.0, -1000.0,    // label on the largest: loss ~0
        3.5, 3.5, 3.5,           // all equal: p = 1/3, loss ln 3
        -80.0, -80.0, -80.0,     // all equal and very negative (exp underflows without the max)
        88.0, -88.0, 0.0,        // exp(88) is near f32::MAX without the max
        30.0, 0.0, 0.0,          // very confident, label right
        30.0, 0.0, 0.0,          // very confident, label wrong: loss ~30
    ];
    let labels = vec![2, 0, 1, 2, 1, 0, 1];
    let case = softmax_case(logits, labels, 3);
    let expected = op.spec(&case);
    let actual = run_case(&gpu, &op, &case).expect("runs");
    for v in &actual {
        if let mlp::kernels::Values::F32(v) = v {
            assert!(v.iter().all(|x| x.is_finite()), "non-finite output {v:?}");
        }
    }
    compare(op.name(), &actual, &expected, TOL).unwrap_or_else(|m| panic!("{m}"));
    // The loss of the first row is 2000 to f32 precision.
    let mlp::kernels::Values::F32(losses) = &actual[2] else {
        panic!("losses are f32")
    };
    assert!((losses[0] - 2000.0).abs() <= 2000.0 * 1e-6, "{}", losses[0]);
    assert!((losses[2] - 3f64.ln()).abs() < 1e-6, "{}", losses[2]);
}

#[test]
fn a_wrong_kernel_is_caught() {
    // The comparison is not vacuous: a case whose expected values are perturbed fails, and
    // NaN (an unwritten, poisoned element) never passes.
    use mlp::kernels::Values;
    let e = vec![Values::F32(vec![1.0, 2.0, -3.0])];
    assert!(compare("t", &[Values::F32(vec![1.0, 2.0, -3.0])], &e, TOL).is_ok());
    assert!(compare("t", &[Values::F32(vec![1.0, 2.0001, -3.0])], &e, TOL).is_err());
    assert!(compare("t", &[Values::F32(vec![1.0, f64::NAN, -3.0])], &e, TOL).is_err());
    assert!(compare("t", &[Values::U32(vec![1])], &[Values::U32(vec![2])], TOL).is_err());
}
