//! Where a training step's time goes: `mnist train --profile`.
//!
//! [`profile_training`] runs one chunk of training steps to warm up (pipelines, bind groups),
//! then the same number of steps three more ways, each one submit:
//! 1. recorded and submitted, to time the host's work per step (the GPU then runs it);
//! 2. timed as a whole with two GPU timestamps ([`Gpu::time`]): the GPU time of a step as it
//!    runs in training;
//! 3. profiled, one timestamp per dispatch ([`Gpu::profile`]): each kernel's share.
//!
//! The per-dispatch timestamps add a little time of their own (and, on devices without
//! `TIMESTAMP_QUERY_INSIDE_PASSES`, a compute pass per dispatch), so the profiled step is longer
//! than the whole-chunk step of 2; the shares are what the profile is for.

use std::fmt;
use std::time::{Duration, Instant};

use wgsl_dsl::runtime::{DispatchError, Gpu, GpuBuffer, Recorder, TimestampMethod};

use crate::config::{MlpConfig, Precision};
use crate::data::Dataset;
use crate::error::MlpError;
use crate::model::{GpuMlp, OptimizerConfig};
use crate::params::Params;
use crate::train::{TrainError, epoch_order, upload};

/// One kernel's line of a [`StepProfile`].
#[derive(Clone, Debug, PartialEq)]
pub struct KernelLine {
    /// The kernel's entry point name.
    pub kernel: String,
    /// Its dispatches per training step.
    pub per_step: f64,
    /// GPU time of all its dispatches over the profiled steps.
    pub total: Duration,
    /// GPU time per dispatch.
    pub mean: Duration,
}

/// What [`profile_training`] measured.
#[derive(Clone, Debug, PartialEq)]
pub struct StepProfile {
    /// The adapter's name.
    pub adapter: String,
    /// Steps in each measured submit.
    pub steps: usize,
    /// Samples per step.
    pub batch_size: usize,
    /// Per kernel, in the order of a step.
    pub kernels: Vec<KernelLine>,
    /// Dispatches per step.
    pub dispatches_per_step: f64,
    /// GPU time per step, the sum of its dispatches' times with per-dispatch timestamps.
    pub profiled_step: Duration,
    /// GPU time per step of the chunk timed as a whole (`None` without timestamps).
    pub step: Option<Duration>,
    /// Host time recording and submitting one step (checks, bind group look-ups, wgpu's
    /// recording and its processing of the pass at the submit).
    pub recording: Duration,
    /// How the per-dispatch timestamps were placed (`None`: the device has no timestamps).
    pub method: Option<TimestampMethod>,
}

/// Profile `steps` training steps of a fresh copy of `params` on the first shard of `train`, in
/// batches of `batch_size`, the first layer's forward product in `precision` (see the [module
/// docs](self)). The model trained is a throwaway.
///
/// # Errors
/// [`TrainError::Settings`] for a zero batch size or step count or an empty data set;
/// [`TrainError::InputSize`]; [`TrainError::Model`] for GPU failures, and
/// [`MlpError::Precision`] where `precision` cannot run.
#[allow(clippy::too_many_arguments)] // the model, its data and the run's settings, each needed
pub fn profile_training(
    gpu: &Gpu,
    train: &Dataset,
    config: &MlpConfig,
    params: &Params,
    optimizer: &OptimizerConfig,
    batch_size: usize,
    steps: usize,
    precision: Precision,
) -> Result<StepProfile, TrainError> {
    if batch_size == 0 || steps == 0 || train.is_empty() {
        return Err(TrainError::Settings(
            "profiling needs a batch size and steps of at least 1 and training data".into(),
        ));
    }
    let batch = batch_size.min(train.len());
    let mut model = GpuMlp::new(gpu, config, params, optimizer, None, batch)?;
    model.set_precision(gpu, precision)?;
    let shards = upload(gpu, &model, train)?;
    let shard = &shards[0];
    let order =
        GpuBuffer::from_slice(gpu, &epoch_order(shard.len(), 0, 1)).map_err(MlpError::from)?;
    let steps = steps.min(shard.len().div_ceil(batch));
    let chunk = 0..steps;

    // 0. Warm-up.
    let mut rec = gpu.recorder();
    model.record_train_steps(gpu, &mut rec, shard, &order, batch, chunk.clone())?;
    rec.submit().map_err(MlpError::from)?;
    gpu.wait().map_err(MlpError::from)?;

    // 1. What the host spends per step: recording and submitting (wgpu processes the pass's
    //    commands when it ends, at the submit).
    let started = Instant::now();
    let mut rec = gpu.recorder();
    model.record_train_steps(gpu, &mut rec, shard, &order, batch, chunk.clone())?;
    rec.submit().map_err(MlpError::from)?;
    let recording = started.elapsed() / steps as u32;
    gpu.wait().map_err(MlpError::from)?;

    // 2. The chunk timed as a whole.
    let record = |model: &mut GpuMlp, rec: &mut Recorder<'_>| {
        model.record_train_steps(gpu, rec, shard, &order, batch, chunk.clone())
    };
    let whole = measured(|r| gpu.time(r), |rec| record(&mut model, rec))?;

    // 3. Per dispatch.
    let profile = measured(|r| gpu.profile(r), |rec| record(&mut model, rec))?;

    let per_step = |n: usize| n as f64 / steps as f64;
    let (kernels, dispatches, profiled_total, method) = match &profile {
        Some(p) => (
            p.per_label()
                .into_iter()
                .map(|l| KernelLine {
                    kernel: l.label.to_string(),
                    per_step: per_step(l.dispatches),
                    total: l.total,
                    mean: l.total / l.dispatches.max(1) as u32,
                })
                .collect(),
            p.dispatches.len(),
            p.total(),
            Some(p.method),
        ),
        None => (Vec::new(), 0, Duration::ZERO, None),
    };
    Ok(StepProfile {
        adapter: gpu.adapter_info().name.clone(),
        steps,
        batch_size: batch,
        kernels,
        dispatches_per_step: per_step(dispatches),
        profiled_step: profiled_total / steps as u32,
        step: whole.map(|t| t / steps as u32),
        recording,
        method,
    })
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

impl fmt::Display for StepProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let how = match self.method {
            Some(TimestampMethod::InsidePasses) => "timestamps inside the step's compute pass",
            Some(TimestampMethod::PassPerDispatch) => {
                "timestamps around a compute pass per dispatch (this device has no timestamps \
                 inside passes: dispatches cost more than in training)"
            }
            None => "this device has no timestamp queries: no GPU times",
        };
        writeln!(
            f,
            "profile on {}: {} training steps of batch {} after as many to warm up; {how}",
            self.adapter, self.steps, self.batch_size
        )?;
        writeln!(
            f,
            "{:<32} {:>10} {:>12} {:>10} {:>7}",
            "kernel", "per step", "total us", "mean us", "share"
        )?;
        let sum = us(self.profiled_step) * self.steps as f64;
        for k in &self.kernels {
            writeln!(
                f,
                "{:<32} {:>10} {:>12.1} {:>10.2} {:>6.1}%",
                k.kernel,
                fmt_count(k.per_step),
                us(k.total),
                us(k.mean),
                100.0 * us(k.total) / sum.max(1e-9)
            )?;
        }
        writeln!(
            f,
            "{:<32} {:>10} {:>12.1} {:>10.2} {:>6.1}%",
            "step (sum of dispatches)",
            fmt_count(self.dispatches_per_step),
            sum,
            us(self.profiled_step),
            100.0
        )?;
        match self.step {
            Some(t) => writeln!(
                f,
                "GPU time per step, the chunk timed as a whole (no per-dispatch timestamps): {:.2} us",
                us(t)
            )?,
            None => writeln!(f, "GPU time per step: no timestamps on this device")?,
        }
        write!(
            f,
            "host time per step, recording and submitting: {:.2} us ({:.2} us per dispatch)",
            us(self.recording),
            us(self.recording) / self.dispatches_per_step.max(1.0)
        )
    }
}

/// `12` for whole counts, `1.02` otherwise (a chunk's first step adds `begin_chunk`).
fn fmt_count(n: f64) -> String {
    if (n - n.round()).abs() < 1e-9 {
        format!("{}", n.round() as u64)
    } else {
        format!("{n:.2}")
    }
}

/// What `measure` ([`Gpu::time`] or [`Gpu::profile`]) gives for the work `record` records.
/// `measure`'s closure can fail only with the runtime's error, so the model's error is kept
/// aside and returned after it.
fn measured<T>(
    measure: impl FnOnce(
        &mut dyn FnMut(&mut Recorder<'_>) -> Result<(), DispatchError>,
    ) -> Result<T, DispatchError>,
    mut record: impl FnMut(&mut Recorder<'_>) -> Result<(), MlpError>,
) -> Result<T, MlpError> {
    let mut failure = None;
    let out = measure(&mut |rec| {
        if let Err(e) = record(rec) {
            failure = Some(e);
        }
        Ok(())
    })?;
    match failure {
        Some(e) => Err(e),
        None => Ok(out),
    }
}
