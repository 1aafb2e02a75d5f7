//! `#[kernel(differentiable)]` generates `<name>_backward`, the kernel's derived backward pass:
//! the same as `wgsl_dsl::autodiff::derive` of the kernel with the default `Derive`.

use wgsl_dsl::autodiff::{Accumulation, Derive, Role, derive};
use wgsl_dsl::prelude::*;

/// `y[i] = log(exp(x[i] * s) + 1)`, for `i < len(y)`, with a Rust parameter `s` baked in.
#[kernel(workgroup_size = 64, differentiable)]
fn softplus_scaled(
    s: f32,
    #[storage(read)] x: &[f32],
    #[storage(read_write)] y: &mut [f32],
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
) {
    let i = gid.x;
    if i < y.len() {
        let v = x[i] * s;
        y[i] = log(exp(v) + 1.0);
    }
}

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
