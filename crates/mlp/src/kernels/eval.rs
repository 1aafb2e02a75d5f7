//! Evaluation on the GPU: per-example predictions (argmax of the logits), a count of the
//! correct ones (`atomicAdd`, WGSL spec §17.8.3) and the per-example losses, collected over
//! the batches of an evaluation.

use rand_chacha::ChaCha8Rng;
use wgsl_dsl::prelude::*;

use super::uniforms::{EvalParams, EvalParamsFields};
use super::verify::*;
use crate::reference;

/// Workgroup size of `argmax_accuracy` (one invocation per example).
pub const EVAL_WORKGROUP: u32 = 64;

/// Kernel `argmax_accuracy`. For each row `r < rows` of the batch at step cursor
/// `c = state[1]`, at `n = c * batch_size + r`: `predictions[n] = argmax(logits[r, ..])`
/// (the first maximum), `all_losses[n] = losses[r]`, and `correct[0] += 1` if the
/// prediction equals `labels[r]`.
/// Bindings: `ep` ([`EvalParams`]), `state`, `logits [rows, classes]`, `labels [rows]`,
/// `losses [rows]`, and the written `predictions [n_total]`, `all_losses [n_total]`,
/// `correct` (`atomic<u32>`). Grid: `[ceil(rows / 64), 1, 1]`.
pub fn argmax_accuracy() -> KernelBuilder {
    let mut k = KernelBuilder::new("argmax_accuracy", [EVAL_WORKGROUP, 1, 1]);
    let ep = k.uniform::<EvalParams>("ep");
    let state = k.storage::<RuntimeArray<u32>, ReadOnly>("state");
    let logits = k.storage::<RuntimeArray<f32>, ReadOnly>("logits");
    let labels = k.storage::<RuntimeArray<u32>, ReadOnly>("labels");
    let losses = k.storage::<RuntimeArray<f32>, ReadOnly>("losses");
    let predictions = k.storage::<RuntimeArray<u32>, ReadWrite>("predictions");
    let all_losses = k.storage::<RuntimeArray<f32>, ReadWrite>("all_losses");
    let correct = k.storage::<RuntimeArray<Atomic<u32>>, ReadWrite>("correct");
    let r = k.let_("r", global_invocation_id().x());
    k.if_(r.ge(ep.rows().load()), |k| k.return_());
    let classes = k.let_("classes", ep.classes().load());
    let base = k.let_("base", &r * &classes);
    let best = k.var("best", 0u32);
    let best_z = k.var("best_z", logits.at(&base).load());
    k.for_range("c", 1u32, classes.clone(), |k, c| {
        let z = k.let_("z", logits.at(&base + &c).load());
        k.if_(z.gt(best_z.load()), |k| {
            k.store(&best, c);
            k.store(&best_z, z);
        });
    });
    let n = k.let_("n", state.at(1u32).load() * ep.batch_size().load() + &r);
    let prediction = k.let_("prediction", best.load());
    k.store(&predictions.at(&n), prediction.clone());
    k.store(&all_losses.at(&n), losses.at(&r).load());
    k.if_(prediction.eq(labels.at(&r).load()), |k| {
        k.atomic_add(&correct.at(0u32), 1u32);
    });
    k
}

/// Verified op for [`argmax_accuracy`].
#[derive(Clone, Copy, Debug)]
pub struct ArgmaxAccuracy;

impl VerifiedOp for ArgmaxAccuracy {
    fn name(&self) -> &'static str {
        "argmax_accuracy"
    }
    fn build(&self) -> KernelBuilder {
        argmax_accuracy()
    }
    fn case(&self, rng: &mut ChaCha8Rng, s: &CaseSizes) -> Case {
        // The batch at cursor 2 of batches of `batch` rows; a partial one of `rows` rows.
        let (batch_size, classes) = (s.batch, s.classes);
        let rows = batch_size - 4;
        let total = batch_size * 2 + rows;
        let logits = uniform_f32(rng, rows * classes, -3.0, 3.0);
        // About half the labels are the argmax, so both branches of the count run.
        let argmax = reference::argmax_rows(
            &logits.iter().map(|&v| f64::from(v)).collect::<Vec<_>>(),
            rows,
            classes,
        );
        let labels = argmax
            .iter()
            .zip(uniform_u32(rng, rows, classes as u32 * 2))
            .map(|(&a, r)| if r < classes as u32 { r } else { a })
            .collect();
        Case {
            args: vec![
                CaseArg::Uniform(UniformValue::Eval(EvalParams {
                    rows: rows as u32,
                    classes: classes as u32,
                    batch_size: batch_size as u32,
                    ..Default::default()
                })),
                CaseArg::U32(vec![9, 2], Role::Input),
                CaseArg::F32(logits, Role::Input),
                CaseArg::U32(labels, Role::Input),
                CaseArg::F32(uniform_f32(rng, rows, 0.0, 4.0), Role::Input),
                CaseArg::U32(uniform_u32(rng, total, 100), Role::InOut),
                CaseArg::F32(uniform_f32(rng, total, 0.0, 4.0), Role::InOut),
                CaseArg::AtomicU32(vec![13], Role::InOut),
            ],
            workgroups: grid_1d(rows, EVAL_WORKGROUP),
        }
    }
    fn spec(&self, case: &Case) -> Vec<Values> {
        let ep: EvalParams = case.uniform(0);
        let (rows, classes) = (ep.rows as usize, ep.classes as usize);
        let offset = case.u32s(1)[1] as usize * ep.batch_size as usize;
        let argmax = reference::argmax_rows(&case.f64s(2), rows, classes);
        let labels = case.u32s(3);
        let mut predictions = case.u32s(5).to_vec();
        let mut all_losses = case.f64s(6);
        let losses = case.f64s(4);
        predictions[offset..offset + rows].copy_from_slice(&argmax);
        all_losses[offset..offset + rows].copy_from_slice(&losses);
        let hits = argmax.iter().zip(labels).filter(|(a, l)| a == l).count() as u32;
        vec![
            Values::U32(predictions),
            Values::F32(all_losses),
            Values::U32(vec![case.u32s(7)[0] + hits]),
        ]
    }
}
