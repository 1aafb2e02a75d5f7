//! Taking a batch from the GPU-resident dataset through a permutation, with no host round
//! trip: step `s = first_step + state[1]` takes the examples `order[s * batch_size ..]`
//! (at most `batch_size`, not past `order_len`).

use rand_chacha::ChaCha8Rng;
use wgsl_dsl::prelude::*;

use super::uniforms::{GatherParams, GatherParamsFields};
use super::verify::*;

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
/// [batch]`. Grid: `[ceil(inputs / 64), rows, 1]`.
pub fn gather_batch() -> KernelBuilder {
    let mut k = KernelBuilder::new("gather_batch", [GATHER_WORKGROUP, 1, 1]);
    let gp = k.uniform::<GatherParams>("gp");
    let state = k.storage::<RuntimeArray<u32>, ReadOnly>("state");
    let order = k.storage::<RuntimeArray<u32>, ReadOnly>("order");
    let images = k.storage::<RuntimeArray<f32>, ReadOnly>("images");
    let labels = k.storage::<RuntimeArray<u32>, ReadOnly>("labels");
    let x = k.storage::<RuntimeArray<f32>, ReadWrite>("x");
    let batch_labels = k.storage::<RuntimeArray<u32>, ReadWrite>("batch_labels");
    let inputs = k.let_("inputs", gp.inputs().load());
    let batch_size = k.let_("batch_size", gp.batch_size().load());
    let order_len = k.let_("order_len", gp.order_len().load());
    let start = k.let_(
        "start",
        (gp.first_step().load() + state.at(1u32).load()) * &batch_size,
    );
    let rows = k.let_(
        "rows",
        start
            .lt(&order_len)
            .select(min(batch_size.clone(), &order_len - &start), 0u32),
    );
    let r = k.let_("r", global_invocation_id().y());
    let i = k.let_("i", global_invocation_id().x());
    k.if_(r.ge(&rows).or(i.ge(&inputs)), |k| k.return_());
    let example = k.let_("example", order.at(&start + &r).load());
    let valid = k.let_("valid", example.lt(gp.dataset_len().load()));
    let out = x.at(&r * &inputs + &i);
    k.if_else(
        valid.clone(),
        |k| k.store(&out, images.at(&example * &inputs + &i).load()),
        |k| k.store(&out, 0.0f32),
    );
    k.if_(i.eq(0u32), |k| {
        k.if_else(
            valid,
            |k| k.store(&batch_labels.at(&r), labels.at(&example).load()),
            |k| k.store(&batch_labels.at(&r), 0u32),
        );
    });
    k
}

/// Verified op for [`gather_batch`].
#[derive(Clone, Copy, Debug)]
pub struct GatherBatch;

impl VerifiedOp for GatherBatch {
    fn name(&self) -> &'static str {
        "gather_batch"
    }
    fn build(&self) -> KernelBuilder {
        gather_batch()
    }
    fn case(&self, rng: &mut ChaCha8Rng, s: &CaseSizes) -> Case {
        // A dataset of 3 batches and a bit; an order covering it with repeats; the chunk's
        // first step 1 and cursor 2, so this is step 3: the last, partial batch.
        let (batch_size, inputs) = (s.batch, s.inputs);
        let len = batch_size * 3 + 5;
        let order = uniform_u32(rng, len, len as u32);
        let step = 3;
        let rows = rows_of_step(step, batch_size, len);
        Case {
            args: vec![
                CaseArg::Uniform(UniformValue::Gather(GatherParams {
                    first_step: 1,
                    batch_size: batch_size as u32,
                    order_len: len as u32,
                    dataset_len: len as u32,
                    inputs: inputs as u32,
                    ..Default::default()
                })),
                CaseArg::U32(vec![17, 2], Role::Input),
                CaseArg::U32(order, Role::Input),
                CaseArg::F32(uniform_f32(rng, len * inputs, 0.0, 1.0), Role::Input),
                CaseArg::U32(uniform_u32(rng, len, 10), Role::Input),
                CaseArg::F32(vec![0.0; rows * inputs], Role::Output),
                CaseArg::U32(vec![0; rows], Role::Output),
            ],
            workgroups: [(inputs as u32).div_ceil(GATHER_WORKGROUP), rows as u32, 1],
        }
    }
    fn spec(&self, case: &Case) -> Vec<Values> {
        let gp: GatherParams = case.uniform(0);
        let step = (gp.first_step + case.u32s(1)[1]) as usize;
        let (batch_size, inputs) = (gp.batch_size as usize, gp.inputs as usize);
        let order = case.u32s(2);
        let images = case.f64s(3);
        let labels = case.u32s(4);
        let start = step * batch_size;
        let rows = rows_of_step(step, batch_size, gp.order_len as usize);
        let mut x = Vec::new();
        let mut y = Vec::new();
        for &e in &order[start..start + rows] {
            let e = e as usize;
            x.extend_from_slice(&images[e * inputs..(e + 1) * inputs]);
            y.push(labels[e]);
        }
        vec![Values::F32(x), Values::U32(y)]
    }
}
