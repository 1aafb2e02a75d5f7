//! The step state: a small `u32` buffer kept on the GPU, `state = [t, cursor]`.
//!
//! - `t` (`state[0]`): optimizer steps taken so far. Adam reads it (its step number is
//!   `t + 1`); it persists across submissions and is saved in checkpoints.
//! - `cursor` (`state[1]`): index of the current step within the chunk being run. The batch
//!   gather reads it to find its rows in `order`, `mean_loss` to find where to write the loss.
//!
//! Why on the GPU: a chunk of training steps is recorded into one submission, and
//! `queue.write_buffer` lands before the whole submission, so the host cannot change a uniform
//! between the steps of a chunk. Instead `begin_chunk` resets the cursor at the start of a
//! chunk and `advance_step` increments both counters at the end of each step.

use wgsl_dsl::prelude::*;

/// Elements of the step state buffer.
pub const STATE_LEN: usize = 2;

/// Kernel `begin_chunk`: `state[1] = 0`. Binding: `state`. One invocation (problem size `()`).
#[kernel(workgroup_size = [1, 1, 1], grid = |(): ()| [1, 1, 1])]
pub fn begin_chunk(#[storage(read_write)] state: &mut [u32]) {
    state[1u32] = 0u32;
}

/// Kernel `advance_step`: `state[0] += 1; state[1] += 1`. Binding: `state`. One invocation
/// (problem size `()`).
#[kernel(workgroup_size = [1, 1, 1], grid = |(): ()| [1, 1, 1])]
pub fn advance_step(#[storage(read_write)] state: &mut [u32]) {
    state[0u32] += 1u32;
    state[1u32] += 1u32;
}
