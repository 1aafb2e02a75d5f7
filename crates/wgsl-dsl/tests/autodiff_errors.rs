//! A node that depends on the variables and cannot be differentiated is a
//! `BuildError::NotDifferentiable` naming the operation and the Rust line that built it, never
//! a silent zero; `vjp`/`jvp`/`grad` record it in the builder (returned by `build`), `try_vjp`
//! and `try_jvp` return it.

mod autodiff_support;

use autodiff_support::{On, run};
use wgsl_dsl::prelude::*;
use wgsl_dsl::{BuildError, CallSite};

/// A kernel of one invocation with an `f32` variable `x` (a `let` of a buffer element) and an
/// output.
fn kernel() -> (KernelBuilder, Exp<f32>, Buffer<f32, ReadWrite>) {
    let mut k = KernelBuilder::new("k", [1, 1, 1]);
    let input = k.storage::<RuntimeArray<f32>, ReadOnly>("input");
    let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
    let x = k.let_("x", input.at(0u32).load());
    (k, x, out)
}

/// The error `build` returns, which must be one `NotDifferentiable` at `line` of this file,
/// differentiated at `at_line`; its operation must contain `operation`.
#[track_caller]
fn expect_error(k: &KernelBuilder, operation: &str, line: u32, at_line: u32) -> String {
    match k.build() {
        Err(e @ BuildError::NotDifferentiable { .. }) => {
            let BuildError::NotDifferentiable {
                operation: op,
                site,
                differentiated_at,
                ..
            } = &e
            else {
                unreachable!()
            };
            assert!(
                op.contains(operation),
                "operation {op:?}, want {operation:?}: {e}"
            );
            assert_eq!((site.file, site.line), (file!(), line), "{e}");
            assert_eq!(
                (differentiated_at.file, differentiated_at.line),
                (file!(), at_line),
                "{e}"
            );
            let message = e.to_string();
            assert!(
                message.contains(&format!("{}:{line}:", file!())),
                "{message}"
            );
            message
        }
        other => panic!("expected NotDifferentiable, got {other:?}"),
    }
}

fn line_of(site: CallSite) -> u32 {
    site.line
}

#[test]
fn a_bitcast_to_float_is_refused_at_its_line() {
    let (mut k, x, out) = kernel();
    let (bits, line) = ((x.bitcast::<u32>() ^ 1u32).bitcast::<f32>(), line!());
    let y = &bits * &x;
    let (d, at) = (k.grad(&y, &x), line!());
    k.store(&out.at(0u32), d);
    let message = expect_error(&k, "bitcast", line, at);
    assert!(message.contains("bits"), "{message}");
}

#[test]
fn unpacking_dependent_bits_is_refused() {
    let (mut k, x, out) = kernel();
    let packed = pack2x16float(vec2(x.clone(), lit(1.0f32)));
    let (unpacked, line) = (unpack2x16float(packed), line!());
    let (d, at) = (k.grad(&unpacked.x(), &x), line!());
    k.store(&out.at(0u32), d);
    expect_error(&k, "unpack2x16float", line, at);
}

#[test]
fn a_subgroup_operation_is_refused() {
    let (mut k, x, out) = kernel();
    let (sum, line) = (k.subgroup_add(&x * 2.0f32), line!());
    let (d, at) = (k.grad(&(sum * &x), &x), line!());
    k.store(&out.at(0u32), d);
    expect_error(&k, "subgroupAdd", line, at);
}

#[test]
fn a_load_of_a_var_holding_a_dependent_value_is_refused() {
    let (mut k, x, out) = kernel();
    let acc = k.var("acc", 0.0f32);
    k.store(&acc, &x * 2.0f32);
    let (loaded, line) = (acc.load(), line!());
    let (d, at) = (k.grad(&(loaded * &x), &x), line!());
    k.store(&out.at(0u32), d);
    let message = expect_error(&k, "a load of `acc`", line, at);
    assert!(message.contains("memory"), "{message}");
}

/// The store comes after the derivative was taken: `build` finds it (the derivative assumed
/// the `var` constant).
#[test]
fn a_store_after_the_derivative_is_found_by_build() {
    let (mut k, x, out) = kernel();
    let acc = k.var("acc", 1.0f32);
    let (loaded, line) = (acc.load(), line!());
    let y = &loaded * &x;
    let (d, at) = (k.grad(&y, &x), line!());
    k.store(&acc, sin(&x));
    k.store(&out.at(0u32), &y + d);
    expect_error(&k, "a load of `acc`", line, at);
}

#[test]
fn a_load_of_a_read_write_binding_written_with_a_dependent_value_is_refused() {
    let (mut k, x, out) = kernel();
    k.store(&out.at(1u32), exp(&x));
    let (loaded, line) = (out.at(1u32).load(), line!());
    let (d, at) = (k.grad(&loaded, &x), line!());
    k.store(&out.at(0u32), d);
    expect_error(&k, "a load of `out`", line, at);
}

#[test]
fn a_helper_function_with_control_flow_is_refused() {
    let (mut k, x, out) = kernel();
    let relu = k.function::<(f32,), f32>("relu", ["v"], |k, (v,)| {
        let r = k.var("r", v.clone());
        k.if_(v.lt(0.0f32), |k| k.store(&r, 0.0f32));
        r.load()
    });
    let (y, line) = (k.call(&relu, (x.clone(),)), line!());
    let (d, at) = (k.grad(&y, &x), line!());
    k.store(&out.at(0u32), d);
    expect_error(&k, "a call of a helper function", line, at);
}

#[test]
fn a_dependent_matrix_is_refused() {
    let (mut k, x, out) = kernel();
    let line = line!() + 1;
    let m = mat([vec2(x.clone(), lit(1.0f32)), vec2(0.0f32, 1.0f32)]);
    let v = m * vec2(1.0f32, 2.0f32);
    let (d, at) = (k.grad(&v.x(), &x), line!());
    k.store(&out.at(0u32), d);
    expect_error(&k, "mat2x2<f32>", line, at);
}

/// `try_vjp` returns the error and adds nothing: the kernel still builds.
#[test]
fn try_vjp_returns_the_error_and_records_nothing() {
    let (mut k, x, out) = kernel();
    let (bits, line) = (x.bitcast::<u32>().bitcast::<f32>(), line!());
    let err = k.try_vjp(&bits, 1.0f32, &x).unwrap_err();
    let BuildError::NotDifferentiable { site, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(line_of(*site), line);
    let err = k.try_jvp(&bits, [tangent(&x, 1.0f32)]).unwrap_err();
    assert!(
        matches!(err, BuildError::NotDifferentiable { .. }),
        "{err:?}"
    );
    k.store(&out.at(0u32), bits);
    k.build().expect("nothing was recorded");
}

/// Several derivatives that fail are all reported, in program order, even unused.
#[test]
fn every_failure_is_reported_even_if_unused() {
    let (mut k, x, _out) = kernel();
    let (a, line_a) = (x.bitcast::<u32>().bitcast::<f32>(), line!());
    let _ = k.grad(&a, &x);
    let (b, line_b) = (k.subgroup_max(x.clone()), line!());
    let _ = k.jvp(&b, [tangent(&x, 1.0f32)]);
    match k.build() {
        Err(BuildError::Several(errors)) => {
            let lines: Vec<u32> = errors
                .iter()
                .map(|e| match e {
                    BuildError::NotDifferentiable { site, .. } => site.line,
                    other => panic!("{other:?}"),
                })
                .collect();
            assert_eq!(lines, vec![line_a, line_b]);
        }
        other => panic!("expected two errors, got {other:?}"),
    }
}

/// Piecewise-constant functions of undifferentiable values are not errors: their derivative
/// is zero whatever is inside (in both modes); integers and conversions to them are constants.
#[test]
fn piecewise_constant_uses_are_zero_not_errors() {
    let (mut k, x, out) = kernel();
    let bits = (x.bitcast::<u32>() >> 1u32).bitcast::<f32>();
    let y = floor(bits) + step(&x, lit(0.5f32)) + x.to_i32().to_f32() + sign(&x);
    let d = k.grad(&y, &x);
    let t = k.jvp(&y, [tangent(&x, 1.0f32)]);
    k.store(&out.at(0u32), d + t);
    let shader = k.build().expect("builds");
    let r = run(On::Interpreter, &shader, &[&[0.3]], &[1], [1, 1, 1]);
    assert_eq!(r[0], vec![0.0]);
}
