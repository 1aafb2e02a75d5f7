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

use rand_chacha::ChaCha8Rng;
use wgsl_dsl::prelude::*;

use super::verify::*;

/// Elements of the step state buffer.
pub const STATE_LEN: usize = 2;

/// Kernel `begin_chunk`: `state[1] = 0`. Binding: `state`. Grid: `[1, 1, 1]`.
pub fn begin_chunk() -> KernelBuilder {
    let mut k = KernelBuilder::new("begin_chunk", [1, 1, 1]);
    let state = k.storage::<RuntimeArray<u32>, ReadWrite>("state");
    k.store(&state.at(1u32), 0u32);
    k
}

/// Kernel `advance_step`: `state[0] += 1; state[1] += 1`. Binding: `state`. Grid: `[1, 1, 1]`.
pub fn advance_step() -> KernelBuilder {
    let mut k = KernelBuilder::new("advance_step", [1, 1, 1]);
    let state = k.storage::<RuntimeArray<u32>, ReadWrite>("state");
    k.update(&state.at(0u32), |t| t + 1u32);
    k.update(&state.at(1u32), |c| c + 1u32);
    k
}

/// Verified op for [`begin_chunk`].
#[derive(Clone, Copy, Debug)]
pub struct BeginChunk;
/// Verified op for [`advance_step`].
#[derive(Clone, Copy, Debug)]
pub struct AdvanceStep;

fn state_case(rng: &mut ChaCha8Rng) -> Case {
    Case {
        args: vec![CaseArg::U32(uniform_u32(rng, STATE_LEN, 1000), Role::InOut)],
        workgroups: [1, 1, 1],
    }
}

impl VerifiedOp for BeginChunk {
    fn name(&self) -> &'static str {
        "begin_chunk"
    }
    fn build(&self) -> KernelBuilder {
        begin_chunk()
    }
    fn case(&self, rng: &mut ChaCha8Rng, _: &CaseSizes) -> Case {
        state_case(rng)
    }
    fn spec(&self, case: &Case) -> Vec<Values> {
        let s = case.u32s(0);
        vec![Values::U32(vec![s[0], 0])]
    }
}

impl VerifiedOp for AdvanceStep {
    fn name(&self) -> &'static str {
        "advance_step"
    }
    fn build(&self) -> KernelBuilder {
        advance_step()
    }
    fn case(&self, rng: &mut ChaCha8Rng, _: &CaseSizes) -> Case {
        state_case(rng)
    }
    fn spec(&self, case: &Case) -> Vec<Values> {
        let s = case.u32s(0);
        vec![Values::U32(vec![s[0] + 1, s[1] + 1])]
    }
}
