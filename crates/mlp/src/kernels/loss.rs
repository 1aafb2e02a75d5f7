//! Softmax fused with cross-entropy, and the batch mean of the loss.
//!
//! `softmax_cross_entropy` is numerically stable: with `m = max_j z[j]` and
//! `lse = ln(sum_j exp(z[j] - m))`, `ln p[c] = z[c] - m - lse`, so no `exp` overflows and the
//! loss `-ln p[label] = lse - (z[label] - m)` stays finite for logits like `[1000, 0, -1000]`.

use rand_chacha::ChaCha8Rng;
use wgsl_dsl::prelude::*;

use super::uniforms::{LossDims, LossDimsFields};
use super::verify::*;
use crate::reference;

/// Workgroup size of `softmax_cross_entropy` (one invocation per row).
pub const SOFTMAX_WORKGROUP: u32 = 64;
/// Workgroup size of `mean_loss` (a single workgroup).
pub const MEAN_LOSS_WORKGROUP: u32 = 256;

/// Kernel `softmax_cross_entropy`, one invocation per example. Bindings: `dims`
/// ([`LossDims`]), `logits [batch, classes]`, `labels [batch]` (each `< classes`), and the
/// written `probs [batch, classes]` (softmax), `dlogits [batch, classes]` (`(p - onehot) /
/// batch`, the gradient of the batch-mean loss) and `losses [batch]` (`-ln p[label]`).
/// Grid: `[ceil(batch / 64), 1, 1]`.
pub fn softmax_cross_entropy() -> KernelBuilder {
    let mut k = KernelBuilder::new("softmax_cross_entropy", [SOFTMAX_WORKGROUP, 1, 1]);
    let d = k.uniform::<LossDims>("dims");
    let logits = k.storage::<RuntimeArray<f32>, ReadOnly>("logits");
    let labels = k.storage::<RuntimeArray<u32>, ReadOnly>("labels");
    let probs = k.storage::<RuntimeArray<f32>, ReadWrite>("probs");
    let dlogits = k.storage::<RuntimeArray<f32>, ReadWrite>("dlogits");
    let losses = k.storage::<RuntimeArray<f32>, ReadWrite>("losses");
    let batch = k.let_("batch", d.batch().load());
    let classes = k.let_("classes", d.classes().load());
    let row = k.let_("row", global_invocation_id().x());
    k.if_(row.ge(&batch), |k| k.return_());
    let base = k.let_("base", &row * &classes);
    let z_max = k.var("z_max", logits.at(&base).load());
    k.for_range("c", 1u32, classes.clone(), |k, c| {
        k.update(&z_max, |m| max(m, logits.at(&base + c).load()));
    });
    let m = k.let_("m", z_max.load());
    let sum = k.var("sum", 0.0f32);
    k.for_range("c", 0u32, classes.clone(), |k, c| {
        k.update(&sum, |s| s + exp(logits.at(&base + c).load() - &m));
    });
    let lse = k.let_("lse", log(sum.load()));
    let label = k.let_("label", labels.at(&row).load());
    k.store(
        &losses.at(&row),
        &lse - (logits.at(&base + &label).load() - &m),
    );
    let inv_batch = k.let_("inv_batch", 1.0f32 / batch.to_f32());
    k.for_range("c", 0u32, classes.clone(), |k, c| {
        let at = k.let_("at", &base + &c);
        let p = k.let_("p", exp(logits.at(&at).load() - &m - &lse));
        k.store(&probs.at(&at), p.clone());
        let onehot = c.eq(&label).select(1.0f32, 0.0f32);
        k.store(&dlogits.at(&at), (p - onehot) * &inv_batch);
    });
    k
}

/// Kernel `mean_loss`: `loss_history[state[1]] = mean(losses[0..batch])`, the batch mean of
/// the per-example losses, written at the step cursor (`state[1]`, see [`super::step`]).
/// Bindings: `dims` ([`LossDims`]), `state` (`u32` step state), `losses [batch]`,
/// `loss_history` (written at one index). One workgroup: a strided sum then a tree reduction
/// in workgroup memory. Grid: `[1, 1, 1]`.
pub fn mean_loss() -> KernelBuilder {
    let n = MEAN_LOSS_WORKGROUP;
    let mut k = KernelBuilder::new("mean_loss", [n, 1, 1]);
    let d = k.uniform::<LossDims>("dims");
    let state = k.storage::<RuntimeArray<u32>, ReadOnly>("state");
    let losses = k.storage::<RuntimeArray<f32>, ReadOnly>("losses");
    let history = k.storage::<RuntimeArray<f32>, ReadWrite>("loss_history");
    let partial = k.workgroup::<Array<f32, { MEAN_LOSS_WORKGROUP as usize }>>("partial");
    let batch = k.let_("batch", d.batch().load());
    let lid = k.let_("lid", local_invocation_index());
    let sum = k.var("sum", 0.0f32);
    k.for_step("b", lid.clone(), batch.clone(), n, |k, b| {
        k.update(&sum, |s| s + losses.at(b).load());
    });
    let total = k.workgroup_reduce(&partial, &lid, sum.load(), |a, b| a + b);
    k.if_(lid.eq(0u32), |k| {
        let cursor = state.at(1u32).load();
        k.store(&history.at(cursor), total / batch.to_f32());
    });
    k
}

/// Verified op for [`softmax_cross_entropy`].
#[derive(Clone, Copy, Debug)]
pub struct SoftmaxCrossEntropy;
/// Verified op for [`mean_loss`].
#[derive(Clone, Copy, Debug)]
pub struct MeanLoss;

/// A [`softmax_cross_entropy`] case for the given logits and labels.
pub fn softmax_case(logits: Vec<f32>, labels: Vec<u32>, classes: usize) -> Case {
    let batch = labels.len();
    Case {
        args: vec![
            CaseArg::Uniform(UniformValue::Loss(LossDims {
                batch: batch as u32,
                classes: classes as u32,
                ..Default::default()
            })),
            CaseArg::F32(logits, Role::Input),
            CaseArg::U32(labels, Role::Input),
            CaseArg::F32(vec![0.0; batch * classes], Role::Output),
            CaseArg::F32(vec![0.0; batch * classes], Role::Output),
            CaseArg::F32(vec![0.0; batch], Role::Output),
        ],
        workgroups: grid_1d(batch, SOFTMAX_WORKGROUP),
    }
}

impl VerifiedOp for SoftmaxCrossEntropy {
    fn name(&self) -> &'static str {
        "softmax_cross_entropy"
    }
    fn build(&self) -> KernelBuilder {
        softmax_cross_entropy()
    }
    fn case(&self, rng: &mut ChaCha8Rng, s: &CaseSizes) -> Case {
        let logits = uniform_f32(rng, s.batch * s.classes, -8.0, 8.0);
        let labels = uniform_u32(rng, s.batch, s.classes as u32);
        softmax_case(logits, labels, s.classes)
    }
    fn spec(&self, case: &Case) -> Vec<Values> {
        let d: LossDims = case.uniform(0);
        let r = reference::softmax_cross_entropy(
            &case.f64s(1),
            case.u32s(2),
            d.batch as usize,
            d.classes as usize,
        );
        vec![
            Values::F32(r.probs),
            Values::F32(r.dlogits),
            Values::F32(r.losses),
        ]
    }
}

impl VerifiedOp for MeanLoss {
    fn name(&self) -> &'static str {
        "mean_loss"
    }
    fn build(&self) -> KernelBuilder {
        mean_loss()
    }
    fn case(&self, rng: &mut ChaCha8Rng, s: &CaseSizes) -> Case {
        // More rows than the workgroup, so the strided loop runs several times.
        let batch = s.batch * 11;
        let history_len = 7;
        Case {
            args: vec![
                CaseArg::Uniform(UniformValue::Loss(LossDims {
                    batch: batch as u32,
                    classes: s.classes as u32,
                    ..Default::default()
                })),
                CaseArg::U32(vec![5, 3], Role::Input),
                CaseArg::F32(uniform_f32(rng, batch, 0.0, 5.0), Role::Input),
                CaseArg::F32(uniform_f32(rng, history_len, 0.0, 5.0), Role::InOut),
            ],
            workgroups: [1, 1, 1],
        }
    }
    fn spec(&self, case: &Case) -> Vec<Values> {
        let losses = case.f64s(2);
        let mut history = case.f64s(3);
        let cursor = case.u32s(1)[1] as usize;
        history[cursor] = losses.iter().sum::<f64>() / losses.len() as f64;
        vec![Values::F32(history)]
    }
}
