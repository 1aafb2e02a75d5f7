//! Every MLP kernel against its `f64` reference on the GPU (lavapipe in CI), through the
//! verification harness: random inputs of odd sizes, outputs poisoned before the run, written
//! bindings within 1e-5 relative, read-only bindings unchanged; and the GPU's outputs against
//! the interpreter's (`wgsl_dsl_harness::agree`).

use std::collections::BTreeSet;

use wgsl_dsl::runtime::Gpu;
use wgsl_dsl_harness::{
    Data, Expected, Interpreter, SeedableRng, VerifiedOp, agree, compare, run, verify,
};
use wgsl_dsl_workspace_tests::Rng;
use wgsl_dsl_workspace_tests::ops::{self, softmax_case, softmax_spec};

fn gpu() -> Gpu {
    Gpu::new().expect("a GPU adapter (install mesa-vulkan-drivers for lavapipe)")
}

#[test]
fn every_kernel_of_the_model_has_a_verified_op() {
    let kernels: BTreeSet<String> = mlp::kernels::all()
        .iter()
        .map(|k| k.name().to_string())
        .collect();
    let ops: BTreeSet<String> = ops::all().iter().map(|o| o.name().to_string()).collect();
    assert_eq!(kernels, ops);
}

#[test]
fn every_kernel_matches_its_reference_on_odd_sizes() {
    let gpu = gpu();
    for op in ops::all() {
        for (i, s) in ops::CHECKED_SIZES.iter().enumerate() {
            let seed = 100 + i as u64;
            let case = op.case(&mut Rng::seed_from_u64(seed), s);
            verify(&gpu, &op, &case).unwrap_or_else(|m| panic!("{m} (sizes {s:?}, seed {seed})"));
            agree(&gpu, &Interpreter::new(), &op, &case).unwrap_or_else(|m| {
                panic!("{m} (sizes {s:?}, seed {seed}, GPU against the interpreter)")
            });
        }
    }
}

#[test]
fn softmax_cross_entropy_is_finite_and_exact_on_extreme_logits() {
    let gpu = gpu();
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
    let op = ops::all()
        .into_iter()
        .find(|o| o.name() == "softmax_cross_entropy")
        .expect("registered");
    verify(&gpu, &op, &case).unwrap_or_else(|m| panic!("{m}"));
    let kernel = wgsl_dsl_harness::Executor::compile(&gpu, &op.kernel()).expect("compiles");
    let actual = run(&gpu, &kernel, &case).expect("runs");
    for d in &actual[3..] {
        let Data::F32(v) = d else {
            panic!("f32 outputs")
        };
        assert!(v.iter().all(|x| x.is_finite()), "non-finite output {v:?}");
    }
    // The loss of the first row is 2000 to f32 precision, the third ln 3.
    let Data::F32(losses) = &actual[5] else {
        panic!("losses are f32")
    };
    assert!(
        (f64::from(losses[0]) - 2000.0).abs() <= 2000.0 * 1e-6,
        "{}",
        losses[0]
    );
    assert!(
        (f64::from(losses[2]) - 3f64.ln()).abs() < 1e-6,
        "{}",
        losses[2]
    );
    assert_eq!(softmax_spec(&case).len(), 3);
}

#[test]
fn a_wrong_result_is_caught() {
    // The comparison is not vacuous: a perturbed value fails, NaN (an unwritten, poisoned
    // element) never passes, integers compare exactly, and tolerance 0 means the same bits.
    let e = Expected::F64(vec![1.0, 2.0, -3.0]);
    assert!(compare(&Data::F32(vec![1.0, 2.0, -3.0]), &e, 1e-5).is_ok());
    assert!(compare(&Data::F32(vec![1.0, 2.0001, -3.0]), &e, 1e-5).is_err());
    assert!(compare(&Data::F32(vec![1.0, f32::NAN, -3.0]), &e, 1e-5).is_err());
    assert!(compare(&Data::U32(vec![1]), &Expected::U32(vec![2]), 1e-5).is_err());
    let bits = Expected::F32(vec![0.0]);
    assert!(compare(&Data::F32(vec![-0.0]), &bits, 0.0).is_err());
    assert!(compare(&Data::F32(vec![0.0]), &bits, 0.0).is_ok());
}
