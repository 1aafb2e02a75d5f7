//! Taking a batch from the GPU-resident dataset through a permutation, with no host round
//! trip: step `s = first_step + state[1]` takes the examples `order[s * batch_size ..]`
//! (at most `batch_size`, not past `order_len`).

use wgsl_dsl::prelude::*;

use super::uniforms::{GatherParams, GatherParamsFields};

/// Workgroup size of `gather_batch` (along the features).
pub const GATHER_WORKGROUP: u32 = 64;

/// Rows step `step` takes: `min(batch_size, order_len - step * batch_size)`, 0 past the end.
pub fn rows_of_step(step: usize, batch_size: usize, order_len: usize) -> usize {
    let start = step.saturating_mul(batch_size);
    order_len.saturating_sub(start).min(batch_size)
}

/// Kernel `gather_batch`: `x[r, i] = images[order[start + r], i]`,
/// `batch_labels[r] = labels[order[start + r]]` for `r < rows`, `start = (first_step +
/// state[1]) * batch_size`, `rows` as [`rows_of_step`]. An `order` entry `>= dataset_len`
/// (not a valid example) gives a zero row with label 0.
/// Bindings: `gp` ([`GatherParams`]), `state`, `order [order_len]`, `images [dataset_len,
/// inputs]`, `labels [dataset_len]`, and the written `x [batch, inputs]`, `batch_labels
/// [batch]`. Problem size: `(rows, inputs)` of `x`.
#[kernel(
    workgroup_size = [GATHER_WORKGROUP, 1, 1],
    grid = |(rows, inputs): (usize, usize)| [(inputs as u32).div_ceil(GATHER_WORKGROUP), rows as u32, 1]
)]
pub fn gather_batch(
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
