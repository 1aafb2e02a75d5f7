//! Every MLP kernel against its `f64` reference on the GPU (lavapipe in CI), through the
//! verification harness: random inputs of odd sizes, outputs poisoned before the run, written
//! bindings within 1e-5 relative, read-only bindings unchanged; and the GPU's outputs against
//! the interpreter's (`wgsl_dsl_harness::agree`).

use std::collections::BTreeSet;

use mlp_verified::ops::{self, softmax_case, softmax_spec};
use wgsl_dsl::runtime::Gpu;
use wgsl_dsl_harness::{
    Data, Expected, Interpreter, SeedableRng, VerifiedOp, agree, compare, run, verify,
};
use wgsl_dsl_workspace_tests::Rng;

fn gpu() -> Gpu {
    Gpu::new().expect("a GPU adapter (install mesa-vulkan-drivers for lavapipe)")
}

#[test]
fn every_kernel_of_the_model_has_a_verified_op() {
    let kernels: BTreeSet<String> = mlp::kernels::all()
        .iter()
        .map(|k| k.name().to_string())
        .collect();
    let names = |ops: Vec<mlp_verified::ops::MlpOp>| -> BTreeSet<String> {
        ops.iter().map(|o| o.name().to_string()).collect()
    };
    let ops = names(ops::all());
    // The tensor-core forward's ops run on the interpreter (tests/interp_mlp.rs): lavapipe has
    // no cooperative matrices.
    let coop = names(ops::fused::coop_forward_ops());
    let covered: BTreeSet<String> = ops.union(&coop).cloned().collect();
    assert!(
        kernels.is_subset(&covered),
        "{:?}",
        kernels.difference(&covered)
    );
    assert!(ops.is_subset(&kernels), "{:?}", ops.difference(&kernels));
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
    let kernel =
        wgsl_dsl_harness::Executor::build_and_compile(&gpu, &op.kernel()).expect("compiles");
    let actual = run(&gpu, &kernel, &case).expect("runs");
    for d in &actual[3..] {
        let Data::F32(v) = d else {
            panic!("f32 outputs")
        };
        assert!(v.iter().all(|x| x.is_finite()), "non-finite output {v:?}");
    }
    // The loss of the first row is 2000 to f32 precision, the third ln 3.
    let Data::F32(losses) = &actual[4] else {
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
    assert_eq!(softmax_spec(&case).len(), 2);

    // The derived gradient at the same logits: finite, and `d_losses * (p - onehot)` added
    // into the previous contents (the op's spec, from the f64 reference).
    let backward = ops::all()
        .into_iter()
        .find(|o| o.name() == "softmax_cross_entropy_backward")
        .expect("registered");
    let mut case = case;
    let rows = 7;
    case.buffers.truncate(3);
    case.buffers.extend([
        Data::F32(vec![0.5; rows * 3]),
        Data::F32(vec![1.0 / rows as f32; rows]),
        Data::F32(vec![0.25; rows * 3]),
        Data::U32(vec![0]),
    ]);
    verify(&gpu, &backward, &case).unwrap_or_else(|m| panic!("{m}"));
    let kernel =
        wgsl_dsl_harness::Executor::build_and_compile(&gpu, &backward.kernel()).expect("compiles");
    let actual = run(&gpu, &kernel, &case).expect("runs");
    let Data::F32(d_logits) = &actual[5] else {
        panic!("d_logits is f32")
    };
    assert!(d_logits.iter().all(|x| x.is_finite()), "{d_logits:?}");
}

/// The derived loss gradient at its loops' bound (`MAX_CLASSES` classes) matches the `f64`
/// closed form; one class more raises its iteration-limit flag (the second loop, over all
/// the classes, runs past the bound), which names the loop's line in `loss.rs`, and adds no
/// gradient: never a truncated one. (The model refuses such a config when it is made.)
#[test]
fn the_derived_loss_gradient_holds_at_its_class_bound_and_flags_past_it() {
    use mlp::kernels::loss::{MAX_CLASSES, softmax_cross_entropy_backward};
    use mlp_verified::ops::CaseSizes;
    let gpu = gpu();
    let op = ops::all()
        .into_iter()
        .find(|o| o.name() == "softmax_cross_entropy_backward")
        .expect("registered");
    let classes = MAX_CLASSES as usize;
    let sizes = CaseSizes::new(3, 1, 1, classes);
    let case = op.case(&mut Rng::seed_from_u64(5), &sizes);
    verify(&gpu, &op, &case).unwrap_or_else(|m| panic!("{m}"));

    let mut past = op.case(&mut Rng::seed_from_u64(6), &sizes);
    let rows = 3;
    let logits: Vec<f32> = (0..rows * (classes + 1)).map(|i| (i % 7) as f32).collect();
    past.buffers[0] = Data::value(mlp::kernels::uniforms::LossDims {
        batch: rows as u32,
        classes: classes as u32 + 1,
        ..Default::default()
    });
    past.buffers[1] = Data::F32(logits);
    past.buffers[3] = Data::F32(vec![0.0; rows * (classes + 1)]);
    past.buffers[5] = Data::F32(vec![0.0; rows * (classes + 1)]);
    let kernel =
        wgsl_dsl_harness::Executor::build_and_compile(&gpu, &op.kernel()).expect("compiles");
    let actual = run(&gpu, &kernel, &past).expect("runs");
    let Data::U32(flag) = &actual[6] else {
        panic!("the flag is u32")
    };
    let Data::F32(d_logits) = &actual[5] else {
        panic!("d_logits is f32")
    };
    assert!(
        d_logits.iter().all(|&g| g == 0.0),
        "no gradient past the bound"
    );
    let backward = softmax_cross_entropy_backward().expect("derives");
    let err = backward.kernels[0]
        .check_iteration_limit(flag[0])
        .expect_err("the flag is raised");
    assert_eq!(err.max_iterations, MAX_CLASSES);
    assert!(err.site.file.ends_with("kernels/loss.rs"), "{err}");
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
