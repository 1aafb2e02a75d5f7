//! Evaluation and prediction: the forward pass and loss over a dataset in batches of
//! `max_batch`, argmax and the count of correct predictions on the GPU.

use std::ops::Range;

use wgsl_dsl::runtime::{Gpu, GpuBuffer, Recorder};

use super::{BatchUniforms, GpuDataset, GpuMlp, invalid};
use crate::error::MlpError;
use crate::kernels::gather::rows_of_step;
use crate::kernels::verify::grid_1d;
use crate::kernels::{eval, step};

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

impl GpuMlp {
    /// Record the forward pass and loss over `data` in batches of `max_batch`, with a fresh
    /// step state; `per_batch` records what follows the loss of each batch.
    fn record_inference(
        &mut self,
        gpu: &Gpu,
        rec: &mut Recorder<'_>,
        data: &GpuDataset,
        state: &GpuBuffer<u32>,
        batches: Range<usize>,
        mut per_batch: impl FnMut(
            &Self,
            &mut Recorder<'_>,
            &BatchUniforms,
            usize,
        ) -> Result<(), MlpError>,
    ) -> Result<(), MlpError> {
        let gp = self.gather_params(gpu, data, batches.start, self.max_batch, data.len)?;
        for b in batches {
            let rows = rows_of_step(b, self.max_batch, data.len);
            self.uniforms(gpu, rows)?;
            let u = &self.batch_uniforms[&rows];
            self.record_gather(rec, &gp, state, &data.identity, data, rows)?;
            self.record_forward(rec, u, rows)?;
            self.record_softmax(rec, u, rows)?;
            per_batch(self, rec, u, rows)?;
            rec.dispatch(&self.kernels.advance, &[state], [1, 1, 1])?;
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
        let state = GpuBuffer::<u32>::zeroed(gpu, step::STATE_LEN)?;
        let predictions = GpuBuffer::<u32>::zeroed(gpu, data.len)?;
        let losses = GpuBuffer::<f32>::zeroed(gpu, data.len)?;
        let correct = GpuBuffer::<u32>::zeroed(gpu, 1)?;
        let mut rec = gpu.recorder();
        let batches = data.len.div_ceil(self.max_batch);
        self.record_inference(
            gpu,
            &mut rec,
            data,
            &state,
            0..batches,
            |me, rec, u, rows| {
                let w = &me.work;
                let last = me.offsets.len() - 1;
                rec.dispatch(
                    &me.kernels.argmax,
                    &[
                        &u.eval,
                        &state,
                        &w.acts[last],
                        &w.labels,
                        &w.example_losses,
                        &predictions,
                        &losses,
                        &correct,
                    ],
                    grid_1d(rows, eval::EVAL_WORKGROUP),
                )?;
                Ok(())
            },
        )?;
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
            let state = GpuBuffer::<u32>::zeroed(gpu, step::STATE_LEN)?;
            let mut rec = gpu.recorder();
            self.record_inference(gpu, &mut rec, &data, &state, b..b + 1, |_, _, _, _| Ok(()))?;
            rec.submit()?;
            let probs = self.work.probs.read(gpu)?;
            out.extend_from_slice(&probs[..rows * classes]);
        }
        Ok(out)
    }
}
