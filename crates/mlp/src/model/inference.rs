//! Evaluation and prediction: the forward pass and loss over a dataset in batches of
//! `max_batch`, argmax and the count of correct predictions on the GPU.

use std::ops::Range;

use wgsl_dsl::runtime::{Gpu, GpuBuffer, Recorder};

use super::{BatchUniforms, GpuDataset, GpuMlp, Kernels, Workspace, invalid};
use crate::error::MlpError;
use crate::kernels::eval::ArgmaxAccuracyArgs;
use crate::kernels::gather::rows_of_step;
use crate::kernels::step::{self, AdvanceStepArgs};

/// The result of [`GpuMlp::evaluate`].
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    /// Examples whose argmax prediction equals the label.
    pub correct: u64,
    /// Examples evaluated.
    pub total: u64,
    /// Predicted class of every example, in dataset order.
    pub predictions: Vec<u32>,
    /// Mean cross-entropy over the dataset (nats).
    pub mean_loss: f32,
}

impl Evaluation {
    /// `correct / total` (0 when empty).
    pub fn accuracy(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.correct as f64 / self.total as f64
        }
    }
}

/// What an inference pass records after the loss of each batch: given the kernels, the
/// recorder, the batch's uniforms, the workspace, the step state and the batch's rows.
type PerBatch<'f> = dyn FnMut(
        &Kernels,
        &mut Recorder<'_>,
        &BatchUniforms,
        &Workspace,
        &GpuBuffer<u32>,
        usize,
    ) -> Result<(), MlpError>
    + 'f;

impl GpuMlp {
    /// Record the forward pass and loss over `data` in batches of `max_batch`, with the step
    /// state `state` (cursor 0 at batch `batches.start`); `per_batch` records what follows
    /// the loss of each batch.
    fn record_inference(
        &mut self,
        gpu: &Gpu,
        rec: &mut Recorder<'_>,
        data: &GpuDataset,
        state: &mut GpuBuffer<u32>,
        batches: Range<usize>,
        per_batch: &mut PerBatch<'_>,
    ) -> Result<(), MlpError> {
        let gp = self.gather_params(gpu, data, batches.start, self.max_batch, data.len)?;
        for b in batches.clone() {
            self.prepare_uniforms(gpu, rows_of_step(b, self.max_batch, data.len))?;
        }
        let GpuMlp {
            kernels: k,
            tensors,
            work,
            batch_uniforms,
            max_batch,
            ..
        } = self;
        for b in batches {
            let rows = rows_of_step(b, *max_batch, data.len);
            let u = &batch_uniforms[&rows];
            k.record_gather(rec, &gp, state, &data.identity, data, work, rows)?;
            k.record_forward(rec, u, &tensors.params, work, rows)?;
            k.record_softmax(rec, u, work, rows)?;
            per_batch(k, rec, u, work, state, rows)?;
            k.advance.record(rec, AdvanceStepArgs { state }, ())?;
        }
        Ok(())
    }

    /// Accuracy and mean cross-entropy over `data`, with predictions; argmax, the count of
    /// correct predictions and the per-example losses are computed on the GPU.
    ///
    /// # Errors
    /// [`MlpError::InvalidArgument`] if `data` is empty or has another number of features;
    /// dispatch and device errors.
    pub fn evaluate(&mut self, gpu: &Gpu, data: &GpuDataset) -> Result<Evaluation, MlpError> {
        if data.is_empty() || data.inputs != self.config.inputs {
            return Err(invalid(
                "evaluation needs a non-empty dataset of the model's features",
            ));
        }
        let mut state = GpuBuffer::<u32>::zeroed(gpu, step::STATE_LEN)?;
        let mut predictions = GpuBuffer::<u32>::zeroed(gpu, data.len)?;
        let mut losses = GpuBuffer::<f32>::zeroed(gpu, data.len)?;
        let mut correct = GpuBuffer::<u32>::zeroed(gpu, 1)?;
        let mut rec = gpu.recorder();
        let batches = data.len.div_ceil(self.max_batch);
        let mut argmax = |k: &Kernels,
                          rec: &mut Recorder<'_>,
                          u: &BatchUniforms,
                          work: &Workspace,
                          state: &GpuBuffer<u32>,
                          rows: usize| {
            let args = ArgmaxAccuracyArgs {
                ep: &u.eval,
                state,
                logits: &work.acts[work.acts.len() - 1],
                labels: &work.labels,
                losses: &work.example_losses,
                predictions: &mut predictions,
                all_losses: &mut losses,
                correct: &mut correct,
            };
            Ok(k.argmax.record(rec, args, rows)?)
        };
        self.record_inference(gpu, &mut rec, data, &mut state, 0..batches, &mut argmax)?;
        rec.submit()?;
        let losses = losses.read(gpu)?;
        let mean_loss = losses.iter().map(|&l| f64::from(l)).sum::<f64>() / data.len as f64;
        Ok(Evaluation {
            correct: u64::from(correct.read(gpu)?[0]),
            total: data.len as u64,
            predictions: predictions.read(gpu)?,
            mean_loss: mean_loss as f32,
        })
    }

    /// Softmax probabilities `[n, classes]` for `images [n, inputs]`.
    ///
    /// # Errors
    /// [`MlpError::InvalidArgument`] if `images.len()` is not a positive multiple of
    /// `inputs`; dispatch and device errors.
    pub fn predict_proba(&mut self, gpu: &Gpu, images: &[f32]) -> Result<Vec<f32>, MlpError> {
        let inputs = self.config.inputs;
        if images.is_empty() || !images.len().is_multiple_of(inputs) {
            return Err(invalid(format!(
                "{} values are not a whole number of images of {inputs} features",
                images.len()
            )));
        }
        let n = images.len() / inputs;
        let data = self.upload_dataset(gpu, images, &vec![0; n])?;
        let classes = self.config.classes;
        let mut out = Vec::with_capacity(n * classes);
        for b in 0..n.div_ceil(self.max_batch) {
            let rows = rows_of_step(b, self.max_batch, n);
            // Batch `b` is step `b` of the gather: first step `b`, cursor 0.
            let mut state = GpuBuffer::<u32>::zeroed(gpu, step::STATE_LEN)?;
            let mut rec = gpu.recorder();
            let mut nothing = |_: &Kernels,
                               _: &mut Recorder<'_>,
                               _: &BatchUniforms,
                               _: &Workspace,
                               _: &GpuBuffer<u32>,
                               _: usize| Ok(());
            self.record_inference(gpu, &mut rec, &data, &mut state, b..b + 1, &mut nothing)?;
            rec.submit()?;
            let probs = self.work.probs.read(gpu)?;
            out.extend_from_slice(&probs[..rows * classes]);
        }
        Ok(out)
    }
}
