//! Evaluation on the GPU: per-example predictions (argmax of the logits), a count of the
//! correct ones (`atomicAdd`, WGSL spec §17.8.3) and the per-example losses, collected over
//! the batches of an evaluation.

use wgsl_dsl::prelude::*;

use super::uniforms::{EvalParams, EvalParamsFields};

/// Workgroup size of `argmax_accuracy` (one invocation per example).
pub const EVAL_WORKGROUP: u32 = 64;

/// Kernel `argmax_accuracy`. For each row `r < rows` of the batch at step cursor
/// `c = state[1]`, at `n = c * batch_size + r`: `predictions[n] = argmax(logits[r, ..])`
/// (the first maximum), `all_losses[n] = losses[r]`, and `correct[0] += 1` if the
/// prediction equals `labels[r]`.
/// Bindings: `ep` ([`EvalParams`]), `state`, `logits [rows, classes]`, `labels [rows]`,
/// `losses [rows]`, and the written `predictions [n_total]`, `all_losses [n_total]`,
/// `correct` (`atomic<u32>`). Problem size: `rows`.
#[kernel(
    workgroup_size = [EVAL_WORKGROUP, 1, 1],
    grid = |rows: usize| [(rows as u32).div_ceil(EVAL_WORKGROUP), 1, 1]
)]
pub fn argmax_accuracy(
    #[uniform] ep: EvalParams,
    #[storage(read)] state: &[u32],
    #[storage(read)] logits: &[f32],
    #[storage(read)] labels: &[u32],
    #[storage(read)] losses: &[f32],
    #[storage(read_write)] predictions: &mut [u32],
    #[storage(read_write)] all_losses: &mut [f32],
    #[storage(read_write)] correct: &mut [Atomic<u32>],
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
) {
    let r = gid.x;
    if r >= ep.rows {
        return;
    }
    let classes = ep.classes;
    let base = r * classes;
    let mut best = 0u32;
    let mut best_z = logits[base];
    for c in 1u32..classes {
        let z = logits[base + c];
        if z > best_z {
            best = c;
            best_z = z;
        }
    }
    let n = state[1u32] * ep.batch_size + r;
    let prediction = best;
    predictions[n] = prediction;
    all_losses[n] = losses[r];
    if prediction == labels[r] {
        correct[0u32].atomic_add(1u32);
    }
}
