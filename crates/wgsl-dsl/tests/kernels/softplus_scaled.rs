// A differentiable `#[kernel]` shared by `crates/wgsl-dsl/tests/autodiff_typed.rs` and
// `crates/wgsl-dsl-macros/tests/differentiable.rs` (`include!`d: it needs
// `wgsl_dsl::prelude::*` in scope).
/// `y[i] = log(exp(x[i] * s) + 1)` for `i < len(y)`: softplus of a scaled input, `s` baked in.
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
