//! `#[kernel(differentiable)]` generates `<name>_backward`, the kernel's derived backward pass:
//! the same as `wgsl_dsl::autodiff::derive` of the kernel with the default `Derive`.

use wgsl_dsl::BuildError;
use wgsl_dsl::autodiff::{Accumulation, Derive, Role, derive};
use wgsl_dsl::prelude::*;

include!("../../wgsl-dsl/tests/kernels/softplus_scaled.rs");

#[test]
fn differentiable_generates_the_derived_backward_pass() {
    let generated = softplus_scaled_backward(0.5).expect("derives");
    let by_hand = derive(&softplus_scaled(0.5), &Derive::new()).expect("derives");
    let (a, b) = (&generated.kernels[0].kernel, &by_hand.kernels[0].kernel);
    assert_eq!(a.name(), "softplus_scaled_backward");
    assert_eq!(
        a.build().expect("builds").wgsl,
        b.build().expect("builds").wgsl
    );
    assert!(generated.derived);
    assert_eq!(
        generated.kernels[0].roles,
        vec![
            (
                "x".to_string(),
                Role::Data {
                    binding: "x".into()
                }
            ),
            (
                "d_y".to_string(),
                Role::OutputGradient { output: "y".into() }
            ),
            (
                "d_x".to_string(),
                Role::InputGradient {
                    input: "x".into(),
                    accumulation: Accumulation::Exclusive
                }
            ),
        ]
    );
}

/// `out[r * n + c] = x[c] * s[r]` on a 2-D grid, with `x` data (`no_diff`) and `s`'s
/// gradient atomic by the attribute.
#[kernel(workgroup_size = [8, 4, 1], differentiable(no_diff(x), accumulate(s = Atomic)))]
fn scaled_rows(
    n: u32,
    #[storage(read)] x: &[f32],
    #[storage(read)] s: &[f32],
    #[storage(read_write)] out: &mut [f32],
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
) {
    let c = gid.x;
    let r = gid.y;
    if c < n && r < s.len() {
        out[r * n + c] = x[c] * s[r];
    }
}

#[test]
fn differentiable_takes_no_diff_and_accumulate() {
    let generated = scaled_rows_backward(5).expect("derives");
    let by_hand = derive(
        &scaled_rows(5),
        &Derive::new()
            .no_diff("x")
            .accumulate("s", Accumulation::Atomic),
    )
    .expect("derives");
    assert_eq!(generated.kernels[0].roles, by_hand.kernels[0].roles);
    assert!(
        generated.kernels[0]
            .roles
            .iter()
            .any(|(n, r)| n == "x" && matches!(r, Role::Data { .. }))
    );
    assert_eq!(generated.choices.len(), 1);
    assert_eq!(generated.choices[0].accumulation, Accumulation::Atomic);
}

/// A name the kernel does not have, given in the attribute: the error is at that line.
#[kernel(workgroup_size = 64, differentiable(no_diff(no_such_binding)))]
fn misnamed(
    #[storage(read)] x: &[f32],
    #[storage(read_write)] y: &mut [f32],
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
) {
    let i = gid.x;
    if i < y.len() {
        y[i] = x[i] * 2.0;
    }
}
const MISNAMED_LINE: u32 = line!() - 11; // the attribute

#[test]
fn a_misnamed_option_is_an_error_at_the_attribute() {
    match misnamed_backward() {
        Err(BuildError::DeriveOption {
            option,
            binding,
            site,
            ..
        }) => {
            assert_eq!((option, binding.as_str()), ("no_diff", "no_such_binding"));
            assert_eq!((site.file, site.line), (file!(), MISNAMED_LINE));
        }
        other => panic!("expected DeriveOption, got {other:?}"),
    }
}

/// A `while` on a run-time value: refused for its trip count at the `while`'s line (it was
/// located inside the library).
#[kernel(workgroup_size = 64, differentiable)]
fn running_sum(
    #[storage(read)] x: &[f32],
    #[storage(read_write)] y: &mut [f32],
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
) {
    let i = gid.x;
    let mut acc = 0.0;
    let mut j = 0u32;
    while j < i {
        acc += x[j];
        j += 1u32;
    }
    if i < y.len() {
        y[i] = acc;
    }
}
const WHILE_LINE: u32 = line!() - 8; // the `while`

#[test]
fn a_while_on_a_run_time_value_is_refused_at_its_line() {
    match running_sum_backward() {
        Err(e @ BuildError::NotDifferentiable { .. }) => {
            let BuildError::NotDifferentiable { site, .. } = &e else {
                unreachable!()
            };
            assert!(e.to_string().contains("trip count"), "{e}");
            assert!(!e.to_string().contains("`break`"), "{e}");
            assert_eq!((site.file, site.line), (file!(), WHILE_LINE), "{e}");
        }
        other => panic!("expected NotDifferentiable, got {other:?}"),
    }
}
