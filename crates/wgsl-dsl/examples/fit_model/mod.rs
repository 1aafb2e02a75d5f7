//! The kernels of `examples/fit.rs`: fitting `y = a sin(b x + c) + d` to samples by gradient
//! descent, with the gradient of the loss derived (`wgsl_dsl::autodiff`), not written.
//! (Included by the workspace's snapshot test too, so every kernel here has its WGSL pinned.)

use wgsl_dsl::autodiff::{Backward, Derive, derive};
use wgsl_dsl::prelude::*;
use wgsl_dsl::{BuildError, KernelBuilder};

/// The parameters `[a, b, c, d]` of the model.
pub const PARAMS: usize = 4;

/// The model at `x` with parameters `p`: `a sin(b x + c) + d`.
pub fn model(p: [&Exp<f32>; PARAMS], x: &Exp<f32>) -> Exp<f32> {
    let [a, b, c, d] = p;
    a * sin(b * x + c) + d
}

/// `loss[i] = (model(p, x[i]) - t[i])^2` for each sample `i < arrayLength(loss)`.
/// Bindings: `p` (`[a, b, c, d]`), `x`, `t` (read), `loss` (written).
pub fn squared_error() -> KernelBuilder {
    let mut k = KernelBuilder::new("fit_squared_error", [64, 1, 1]);
    let p = k.storage::<RuntimeArray<f32>, ReadOnly>("p");
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let t = k.storage::<RuntimeArray<f32>, ReadOnly>("t");
    let loss = k.storage::<RuntimeArray<f32>, ReadWrite>("loss");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.lt(loss.len()), |k| {
        let params: Vec<Exp<f32>> = (0..PARAMS as u32)
            .map(|j| k.let_(["a", "b", "c", "d"][j as usize], p.at(j).load()))
            .collect();
        let xi = k.let_("xi", x.at(&i).load());
        let y = model([&params[0], &params[1], &params[2], &params[3]], &xi);
        let r = k.let_("r", y - t.at(&i).load());
        k.store(&loss.at(&i), &r * &r);
    });
    k
}

/// The derived backward pass of [`squared_error`]: the gradient of `sum_i d_loss[i] loss[i]`
/// with respect to `p` only (`x` and `t` are data), accumulated atomically into `d_p`
/// (every invocation reads every parameter). Bindings: `p`, `x`, `t`, `d_loss`, `d_p`
/// (`array<atomic<u32>>`: the bits of four `f32`s).
pub fn squared_error_backward() -> Result<Backward, BuildError> {
    derive(&squared_error(), &Derive::new().no_diff("x").no_diff("t"))
}

/// One step of gradient descent: `p[j] -= rate * g[j]`, then `g[j] = 0` (`g` holds the bits
/// of the accumulated gradient). Bindings: `rate` (uniform), `p` (read-write), `g`
/// (read-write `u32`s).
pub fn descend() -> KernelBuilder {
    let mut k = KernelBuilder::new("fit_descend", [PARAMS as u32, 1, 1]);
    let rate = k.uniform::<f32>("rate");
    let p = k.storage::<RuntimeArray<f32>, ReadWrite>("p");
    let g = k.storage::<RuntimeArray<u32>, ReadWrite>("g");
    let j = k.let_("j", local_invocation_index());
    let grad = k.let_("grad", g.at(&j).load().bitcast::<f32>());
    k.store(&p.at(&j), p.at(&j).load() - rate.load() * grad);
    k.store(&g.at(&j), 0u32);
    k
}
