//! MLP kernels written with `#[kernel]` in Rust syntax produce exactly the WGSL of their
//! builder versions in `crates/mlp/src/kernels/`, so either form can be maintained.

use mlp::kernels::uniforms::{GatherParams, GatherParamsFields, SgdParams, SgdParamsFields};
use wgsl_dsl::prelude::*;

/// `torch.optim.SGD` step; the builder version is `mlp::kernels::optim::sgd_update`.
#[kernel(workgroup_size = [64, 1, 1])]
fn sgd_update(
    #[uniform] hp: SgdParams,
    #[storage(read)] grads: &[f32],
    #[storage(read_write)] params: &mut [f32],
    #[storage(read_write)] velocity: &mut [f32],
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
    #[builtin(num_workgroups)] groups: Vec3<u32>,
) {
    let i = gid.x + gid.y * groups.x * 64u32;
    if i >= hp.len {
        return;
    }
    let p = params[i];
    let g = fma(hp.weight_decay, p, grads[i]);
    let v = fma(hp.momentum, velocity[i], g);
    velocity[i] = v;
    params[i] = p - hp.lr * v;
}

/// Batch gather through the permutation; the builder version is
/// `mlp::kernels::gather::gather_batch`.
#[kernel(workgroup_size = [64, 1, 1])]
fn gather_batch(
    #[uniform] gp: GatherParams,
    #[storage(read)] state: &[u32],
    #[storage(read)] order: &[u32],
    #[storage(read)] images: &[f32],
    #[storage(read)] labels: &[u32],
    #[storage(read_write)] x: &mut [f32],
    #[storage(read_write)] batch_labels: &mut [u32],
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
) {
    let inputs = gp.inputs;
    let batch_size = gp.batch_size;
    let order_len = gp.order_len;
    let start = (gp.first_step + state[1u32]) * batch_size;
    let rows = select(0u32, min(batch_size, order_len - start), start < order_len);
    let r = gid.y;
    let i = gid.x;
    if r >= rows || i >= inputs {
        return;
    }
    let example = order[start + r];
    let valid = example < gp.dataset_len;
    if valid {
        x[r * inputs + i] = images[example * inputs + i];
    } else {
        x[r * inputs + i] = 0.0;
    }
    if i == 0u32 {
        if valid {
            batch_labels[r] = labels[example];
        } else {
            batch_labels[r] = 0u32;
        }
    }
}

/// The step counters; the builder version is `mlp::kernels::step::advance_step`.
#[kernel(workgroup_size = [1, 1, 1])]
fn advance_step(#[storage(read_write)] state: &mut [u32]) {
    state[0u32] += 1u32;
    state[1u32] += 1u32;
}

fn assert_same_wgsl(from_macro: KernelBuilder, from_builder: KernelBuilder) {
    let a = from_macro.build().expect("#[kernel] version builds");
    let b = from_builder.build().expect("builder version builds");
    assert_eq!(a.signature, b.signature.clone().with_sites_of(&a.signature));
    assert_eq!(a.wgsl, b.wgsl);
}

trait SameSites {
    fn with_sites_of(self, other: &Self) -> Self;
}
impl SameSites for wgsl_dsl::KernelSignature {
    /// Call sites differ by construction (two source files); compare everything else.
    fn with_sites_of(mut self, other: &Self) -> Self {
        for (b, o) in self.bindings.iter_mut().zip(&other.bindings) {
            b.site = o.site;
        }
        self
    }
}

#[test]
fn sgd_update_matches_the_builder_version() {
    assert_same_wgsl(sgd_update(), mlp::kernels::optim::sgd_update());
}

#[test]
fn gather_batch_matches_the_builder_version() {
    assert_same_wgsl(gather_batch(), mlp::kernels::gather::gather_batch());
}

#[test]
fn advance_step_matches_the_builder_version() {
    assert_same_wgsl(advance_step(), mlp::kernels::step::advance_step());
}
