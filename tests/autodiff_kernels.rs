//! Kernel AD: every backward pass of `wgsl_dsl_workspace_tests::derived` (derived ones and a
//! custom one) against central differences of its forward kernel (`autodiff::check`), at odd
//! sizes, on the interpreter (whose race, bounds and barrier checks every dispatch passes:
//! a finding is an error of `check`) and on the GPU; what kernel AD refuses, at its Rust line.

use wgsl_dsl::BuildError;
use wgsl_dsl::autodiff::{
    Accumulation, Adjoint, Backward, CheckError, CheckOptions, Data, Derive, Executor,
    GradientReport, Role, check, derive, run_backward,
};
use wgsl_dsl::interp::InterpError;
use wgsl_dsl::interp::Interpreter;
use wgsl_dsl::prelude::*;
use wgsl_dsl_workspace_tests::derived::{self, DerivedCase};

/// `$body` with `$on` the interpreter, then the GPU when there is one: each a different
/// `Executor` type, so that the body is written once and compiled for each.
macro_rules! on_each_executor {
    (|$on:ident| $body:block) => {{
        {
            let $on = &Interpreter::new();
            $body
        }
        if let Some($on) = wgsl_dsl_workspace_tests::gpu() {
            $body
        }
    }};
}

/// Worst `|derived - central| / max(1, |central|)` allowed: central differences of `f32`
/// kernels with the default step (2e-3) are good to about 1e-4 here.
const TOLERANCE: f64 = 2e-3;

/// `autodiff::check` with the default options (those of every check here).
fn check_with_defaults<X: Executor>(
    forward: &KernelBuilder,
    backward: &Backward,
    data: &[(&str, Data)],
    grid: [u32; 3],
    on: &X,
) -> Result<GradientReport, CheckError> {
    check(forward, backward, data, grid, on, CheckOptions::default())
}

/// The case of `derived::all()` named `name`.
fn case_named(name: &str) -> DerivedCase {
    derived::all()
        .into_iter()
        .find(|c| c.name == name)
        .expect("the case")
}

fn check_case<X: Executor>(case: &DerivedCase, on: &X) {
    let forward = (case.forward)();
    let backward = (case.backward)().unwrap_or_else(|e| panic!("{}: {e}", case.name));
    let (data, grid) = (case.data)(&mut derived::rng(7));
    let report = check_with_defaults(&forward, &backward, &data, grid, on)
        .unwrap_or_else(|e| panic!("{}: {e}", case.name));
    eprintln!("{backward}{report}");
    assert!(
        !report.worst.is_empty(),
        "{}: no gradient checked",
        case.name
    );
    assert!(report.max_error() < TOLERANCE, "{}:\n{report}", case.name);
    // The adjoint identity against the forward-mode kernel holds where forward mode is made
    // (not of `branches`' helper function with a `var` and an `if`).
    assert!(
        report.identity_holds(),
        "{}: identity fails:\n{report}",
        case.name
    );
}

/// `f32` atomic additions in the forward kernel (`atomic_add_f32`, a weighted histogram):
/// the derived gradients against their `f64` closed forms, on both executors, and the
/// adjoint identity checked (forward mode adds tangents the same way).
#[test]
fn an_f32_atomic_addition_is_derived() {
    let case = case_named("scatter_add");
    let forward = (case.forward)();
    let backward = (case.backward)().expect("derives");
    let (data, grid) = (case.data)(&mut derived::rng(21));
    let get = |name: &str| data.iter().find(|(n, _)| *n == name).expect(name).1.clone();
    let (Data::F32(x), Data::F32(s), Data::U32(idx)) = (get("x"), get("s"), get("idx")) else {
        panic!("the case's data types");
    };
    let mut r = derived::rng(22);
    let u: Vec<f32> = (0..derived::SCATTER_BINS)
        .map(|_| rand::Rng::random_range(&mut r, -1.0..1.0))
        .collect();
    let p = derived::SCATTER_PERIOD;
    let want_x: Vec<f64> = (0..x.len())
        .map(|i| f64::from(u[idx[i] as usize]) * f64::from(x[i]).cos() * f64::from(s[i % p]))
        .collect();
    let mut want_s = vec![0.0f64; p];
    for i in 0..x.len() {
        want_s[i % p] += f64::from(u[idx[i] as usize]) * f64::from(x[i]).sin();
    }
    on_each_executor!(|on| {
        let g = run_backward(&backward, &data, &[("out", u.clone())], grid, on).expect("runs");
        for (input, want) in [("x", &want_x), ("s", &want_s)] {
            for (j, (a, b)) in g
                .get(input)
                .expect(input)
                .iter()
                .zip(want.iter())
                .enumerate()
            {
                assert!(
                    (f64::from(*a) - b).abs() <= 1e-5 * b.abs().max(1.0),
                    "{input}[{j}]: {a} vs {b}"
                );
            }
        }
        let report = check_with_defaults(&forward, &backward, &data, grid, on).expect("checks");
        assert!(
            matches!(&report.adjoint, Adjoint::Checked(a) if a.holds()),
            "{report}"
        );
        assert!(report.passed(), "{report}");
    });
}

#[test]
fn every_backward_pass_matches_central_differences_on_the_interpreter() {
    for case in derived::all() {
        check_case(&case, &Interpreter::new());
    }
}

#[test]
fn every_backward_pass_matches_central_differences_on_the_gpu() {
    let Some(gpu) = wgsl_dsl_workspace_tests::gpu() else {
        return;
    };
    for case in derived::all() {
        check_case(&case, gpu);
    }
}

fn accumulation(backward: &Backward, input: &str) -> Accumulation {
    backward.kernels[0]
        .roles
        .iter()
        .find_map(|(_, r)| match r {
            Role::InputGradient {
                input: i,
                accumulation,
            } if i == input => Some(*accumulation),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no gradient of `{input}`"))
}

/// Exclusive where every read is at the invocation's own index, atomic where invocations
/// share elements; the author's override is kept.
#[test]
fn the_accumulation_scheme_is_chosen_per_input_and_can_be_overridden() {
    let b = derive(&derived::branches(), &Derive::new()).expect("derives");
    assert_eq!(accumulation(&b, "x"), Accumulation::Exclusive);
    assert_eq!(accumulation(&b, "w"), Accumulation::Exclusive);
    let d = derive(&derived::dense_tanh(5), &Derive::new()).expect("derives");
    assert_eq!(accumulation(&d, "w"), Accumulation::Atomic);
    assert_eq!(accumulation(&d, "x"), Accumulation::Atomic);
    assert_eq!(accumulation(&d, "b"), Accumulation::Exclusive);
    let o = derive(
        &derived::dense_tanh(5),
        &Derive::new().accumulate("w", Accumulation::Exclusive),
    )
    .expect("derives");
    assert_eq!(accumulation(&o, "w"), Accumulation::Exclusive);
    // no_diff: no gradient, the binding is data.
    let n = derive(&derived::dense_tanh(5), &Derive::new().no_diff("x")).expect("derives");
    assert!(
        n.kernels[0]
            .roles
            .iter()
            .any(|(name, r)| name == "x" && matches!(r, Role::Data { .. }))
    );
    assert!(!n.kernels[0].roles.iter().any(|(name, _)| name == "d_x"));
}

/// An exclusive override where invocations share an input's elements is a data race, and the
/// interpreter says so at the accumulation's Rust line.
#[test]
fn a_wrong_exclusive_override_is_a_race_the_interpreter_finds() {
    let forward = derived::dense_tanh(5);
    let backward = derive(
        &forward,
        &Derive::new().accumulate("x", Accumulation::Exclusive),
    )
    .expect("derives");
    let case = case_named("dense_tanh");
    let (data, grid) = (case.data)(&mut derived::rng(7));
    let err =
        check_with_defaults(&forward, &backward, &data, grid, &Interpreter::new()).unwrap_err();
    assert!(
        matches!(&err, CheckError::Interp(e) if matches!(**e, InterpError::DataRace { .. })),
        "{err}"
    );
}

#[track_caller]
fn refused(k: &KernelBuilder, operation: &str, line: u32) {
    match derive(k, &Derive::new()) {
        Err(e @ BuildError::NotDifferentiable { .. }) => {
            let BuildError::NotDifferentiable {
                operation: op,
                site,
                ..
            } = &e
            else {
                unreachable!()
            };
            assert!(
                e.to_string().contains(operation) || op.contains(operation),
                "{e}"
            );
            assert_eq!((site.file, site.line), (file!(), line), "{e}");
        }
        other => panic!("expected NotDifferentiable, got {other:?}"),
    }
}

/// Workgroup memory and barriers are derived: the tiled product's derived backward gives
/// the gradients of its custom backward (`product_backward`, itself checked against central
/// differences above) on the interpreter, to rounding.
#[test]
fn the_tiled_products_derived_backward_matches_its_custom_backward() {
    let forward = derived::tiled_product(derived::PRODUCT);
    let derived_pass = derive(&forward, &Derive::new()).expect("derives");
    let custom = derived::product_backward(derived::PRODUCT);
    let case = case_named("tiled_product_13x11x7");
    let (data, grid) = (case.data)(&mut derived::rng(11));
    let derived::Shape { m, n, .. } = derived::PRODUCT;
    let mut r = derived::rng(12);
    let dc: Vec<f32> = (0..m * n)
        .map(|_| rand::Rng::random_range(&mut r, -1.0..1.0))
        .collect();
    let incoming = [("c", dc)];
    let run = |pass| run_backward(pass, &data, &incoming, grid, &Interpreter::new()).expect("runs");
    let (d, c) = (run(&derived_pass), run(&custom));
    for name in ["a", "b"] {
        let (dv, cv) = (d.get(name).expect(name), c.get(name).expect(name));
        assert_eq!(dv.len(), cv.len());
        for (j, (x, y)) in dv.iter().zip(cv).enumerate() {
            assert!(
                (x - y).abs() <= 1e-5 * y.abs().max(1.0),
                "{name}[{j}]: derived {x}, custom {y}"
            );
        }
    }
}

#[test]
fn reading_an_output_is_refused() {
    let mut k = KernelBuilder::new("read_output", [64, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let i = k.let_("i", global_invocation_id().x());
    k.store(&y.at(&i), x.at(&i).load());
    let (v, line) = (y.at(&i).load(), line!());
    k.store(&y.at(&i), v * 2.0f32);
    refused(&k, "output", line);
}

/// AD fuzzer case 4065946614790714619 (shrunk): a value defined before an `if` and added
/// with `atomic_add_f32` inside it. Its adjoint crosses the `if` in a `var` of the seed's
/// type, which was the output's `atomic<u32>` (not storable in a `var`: the backward kernel
/// did not build); the seed is now typed as the incoming gradient's `f32`.
#[test]
fn an_addition_under_an_if_of_a_value_defined_before_it_is_derived() {
    let mut k = KernelBuilder::new("add_under_if", [8, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let acc = k.storage::<RuntimeArray<Atomic<u32>>, ReadWrite>("acc");
    let i = k.let_("i", global_invocation_id().x());
    let v = k.let_("v", sin(x.at(&i % 7u32).load()));
    k.if_(i.lt(x.len()), |k| {
        k.atomic_add_f32(&acc.at(&i % 3u32), v.clone() * 2.0f32);
    });
    let backward = derive(&k, &Derive::new()).expect("derives");
    let mut r = derived::rng(5);
    let xs: Vec<f32> = (0..19)
        .map(|_| rand::Rng::random_range(&mut r, -2.0..2.0))
        .collect();
    let data = [("x", Data::F32(xs)), ("acc", Data::U32(vec![0; 3]))];
    on_each_executor!(|on| {
        let report =
            check(&k, &backward, &data, [3, 1, 1], on, CheckOptions::default()).expect("checks");
        assert!(report.passed(), "{report}");
        assert!(matches!(report.adjoint, Adjoint::Checked(_)), "{report}");
    });
}
