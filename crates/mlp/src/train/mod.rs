//! The training loop: the data set on the GPU once, each epoch shuffled and recorded as GPU work
//! in chunks of steps, the host reading the losses back once per chunk. It reports through an
//! [`Observer`] ([`events`]) and prints nothing.
//!
//! - [`shard`]: the data set on the GPU in shards, the epoch's shuffle and order of chunks;
//! - [`events`]: what training reports;
//! - this module: [`train`], its settings and its errors.
//!
//! # One epoch
//! 1. A permutation of the training samples is drawn with ChaCha8 seeded from `(seed, epoch)`
//!    (so a resumed run shuffles exactly as an uninterrupted one) and written to a
//!    `GpuBuffer<u32>`. It is drawn while the GPU runs the previous epoch's last chunks (the
//!    first epoch's at its start).
//! 2. The epoch's `ceil(len / batch_size)` steps are recorded `steps_per_chunk` at a time into one
//!    [`Recorder`] and submitted; no host round trip between steps.
//!    With [`TrainSettings::pipeline`], the first chunk is recorded (not submitted) while the GPU
//!    runs the previous epoch's last chunks, after that epoch's last submit (the permutation is
//!    written then: `write_buffer` takes effect before the next submit, after the ones made),
//!    so that the GPU does not wait at each epoch's start for a chunk to be recorded.
//! 3. Each chunk's per-step losses are read back asynchronously
//!    ([`GpuMlp::read_losses_async`]): with [`TrainSettings::pipeline`] the host records and
//!    submits chunk n + 1 before it waits for the losses of chunk n, so the GPU has the next
//!    chunk queued while the host records ([`Event::Chunk`] comes when a chunk's losses are
//!    back, in order). The epoch's training
//!    loss is the mean of its steps' mean cross-entropy losses.
//! 4. The test set is evaluated on the GPU (argmax and correct count) ([`Event::Epoch`]), and,
//!    with a save path, a [`Checkpoint`] is written atomically ([`Event::CheckpointSaved`]); it
//!    records the number of training images ([`Checkpoint::train_images`]).

use std::ops::Range;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use wgsl_dsl::runtime::{Gpu, GpuBuffer, Recorder};

use crate::checkpoint::{Checkpoint, EpochRecord};
use crate::config::{MlpConfig, Precision};
use crate::data::Mnist;
use crate::error::MlpError;
use crate::model::{GpuMlp, OptimizerConfig, PendingLosses};
use crate::params::Params;
use crate::schedule::{LrSchedule, ScheduleSpec};

mod error;
pub mod events;
pub mod shard;

pub use error::TrainError;
pub use events::{ChunkReport, EpochReport, Event, Observer, Started};
pub use shard::{chunk_plan, epoch_order, evaluate, shard_len, upload};

/// Where training starts.
#[derive(Clone, Debug)]
pub enum Start {
    /// A new model, initialised from the seed ([`Params::init`]).
    Fresh {
        /// The model's shape.
        config: MlpConfig,
        /// The optimizer.
        optimizer: OptimizerConfig,
    },
    /// Continue from a checkpoint: parameters, optimizer state, epoch count and history.
    Resume(Box<Checkpoint>),
}

/// How to train. There are no defaults here: the caller decides (the `mnist` binary's are in
/// its plan).
#[derive(Clone, Debug, PartialEq)]
pub struct TrainSettings {
    /// Epochs to train in this run (after those already in a resumed checkpoint).
    pub epochs: usize,
    /// Samples per step (the last step of an epoch may have fewer).
    pub batch_size: usize,
    /// Seed of initialisation and shuffling.
    pub seed: u64,
    /// Steps recorded into one submit; the losses are read back once per chunk.
    pub steps_per_chunk: usize,
    /// Record and submit chunk n + 1 before waiting for the losses of chunk n, so the GPU never
    /// idles while the host records (`false`: wait for each chunk before recording the next,
    /// as before; the results are the same bit for bit, only the timing differs).
    pub pipeline: bool,
    /// Write a checkpoint here after every epoch.
    pub save: Option<PathBuf>,
    /// The learning-rate schedule of a fresh model, resolved over this run's epochs
    /// ([`ScheduleSpec::resolve`]); `None` for a constant learning rate. A resumed model
    /// continues its checkpoint's schedule, a cosine extended to end with this run
    /// ([`LrSchedule::extended_to`]), so `Some` is refused with [`Start::Resume`].
    pub schedule: Option<ScheduleSpec>,
    /// The fused step's first-layer forward product's element type ([`Precision::F16`]: on
    /// tensor cores, refused with [`MlpError::Precision`] where it cannot run).
    pub precision: Precision,
}

/// What a training run produced.
#[derive(Debug)]
pub struct Outcome {
    /// The final model, optimizer state and full history (resumed epochs included).
    pub checkpoint: Checkpoint,
    /// The test accuracy after the last epoch, in `[0, 1]` (`None` when no epoch ran).
    pub test_accuracy: Option<f64>,
    /// Time spent training this run's epochs (evaluation excluded).
    pub train_time: Duration,
    /// Time spent evaluating after each epoch.
    pub eval_time: Duration,
    /// Training samples per second over this run (training only).
    pub samples_per_second: f64,
}

/// Trains on `data.train`, evaluating on `data.test` after every epoch, reporting to
/// `observer`.
///
/// When the training images exceed one storage buffer binding they are split into shards
/// ([`upload`]); each shard is shuffled on its own and the shards' chunks alternate, so a batch
/// never mixes shards. With one shard (any device for the MNIST test set; devices with
/// bindings of 188 MB or more for its training set) the shuffle is global.
///
/// # Errors
/// [`TrainError::Settings`] (zero batch size or chunk, empty data), [`TrainError::InputSize`],
/// [`TrainError::Diverged`], [`TrainError::NonFiniteState`], [`TrainError::Model`],
/// [`TrainError::Checkpoint`].
pub fn train(
    gpu: &Gpu,
    data: &Mnist,
    start: Start,
    settings: &TrainSettings,
    observer: &mut dyn Observer,
) -> Result<Outcome, TrainError> {
    if settings.batch_size == 0 || settings.steps_per_chunk == 0 {
        return Err(TrainError::Settings(
            "the batch size and the steps per chunk must be at least 1".into(),
        ));
    }
    if data.train.is_empty() || data.test.is_empty() {
        return Err(TrainError::Settings(
            "the training and test sets must not be empty".into(),
        ));
    }
    let resumed_schedule = match &start {
        Start::Resume(c) if settings.schedule.is_some() => {
            return Err(TrainError::Settings(format!(
                "a resumed run continues its checkpoint's learning-rate schedule ({:?}); \
                 it cannot take another",
                c.schedule
            )));
        }
        Start::Resume(c) => Some(c.schedule),
        Start::Fresh { .. } => None,
    };
    let (config, optimizer, params, state, mut history, first_epoch) = match start {
        Start::Fresh { config, optimizer } => {
            let params = Params::init(&config, settings.seed);
            (config, optimizer, params, None, Vec::new(), 1)
        }
        Start::Resume(c) => {
            let c = *c;
            let next = c.epoch + 1;
            let state = Some(c.optimizer_state);
            (c.config, c.optimizer, c.params, state, c.history, next)
        }
    };
    let optimizer_step = state.as_ref().map_or(0, |s| s.step);
    let batch = settings.batch_size.min(data.train.len());
    let mut model = GpuMlp::new(gpu, &config, &params, &optimizer, state.as_ref(), batch)?;
    model.set_precision(gpu, settings.precision)?;
    let train_shards = upload(gpu, &model, &data.train)?;
    let test_shards = upload(gpu, &model, &data.test)?;
    let samples = data.train.len();
    let orders = train_shards
        .iter()
        .map(|s| GpuBuffer::<u32>::zeroed(gpu, s.len()).map_err(MlpError::from))
        .collect::<Result<Vec<_>, _>>()?;
    let shard_steps: Vec<usize> = train_shards
        .iter()
        .map(|s| s.len().div_ceil(batch))
        .collect();
    let steps: usize = shard_steps.iter().sum();
    let end_step =
        optimizer_step.saturating_add((steps as u64).saturating_mul(settings.epochs as u64));
    let schedule = match (resumed_schedule, &settings.schedule) {
        (Some(s), _) => s.extended_to(end_step),
        (None, Some(spec)) => spec.resolve(steps, settings.epochs)?,
        (None, None) => LrSchedule::CONSTANT,
    };
    model.set_schedule(gpu, &schedule)?;
    let last_epoch = first_epoch + settings.epochs - 1;
    observer.event(&Event::Started(&Started {
        first_epoch,
        last_epoch,
        optimizer_step,
        samples_per_epoch: samples,
        steps_per_epoch: steps,
        shards: train_shards.len(),
        schedule,
        extended_from: resumed_schedule.filter(|s| *s != schedule),
    }));

    let (mut train_time, mut eval_time) = (Duration::ZERO, Duration::ZERO);
    let mut test_accuracy = None;
    // Each shard's permutation for `epoch`.
    let shuffle = |epoch: usize| -> Vec<Vec<u32>> {
        let seeds = (0u64..).map(|k| settings.seed.wrapping_add(k));
        (train_shards.iter().zip(seeds))
            .map(|(shard, seed)| epoch_order(shard.len(), seed, epoch))
            .collect()
    };
    // The next epoch's permutations, drawn while the GPU runs this epoch's last chunks, and,
    // pipelined, its first chunk recorded then too (with the permutations already written).
    let mut next_orders = None;
    let mut prerecorded: Option<Recorder<'_>> = None;
    let plan = chunk_plan(&shard_steps, settings.steps_per_chunk);
    // Chunk `chunk` of shard `k`, recorded, not submitted.
    let record = |model: &mut GpuMlp, k: usize, chunk: &Range<usize>| {
        let mut rec = gpu.recorder();
        let (shard, order) = (&train_shards[k], &orders[k]);
        model.record_train_steps(gpu, &mut rec, shard, order, batch, chunk.clone())?;
        Ok::<_, MlpError>(rec)
    };
    for epoch in first_epoch..=last_epoch {
        let epoch_start = Instant::now();
        if prerecorded.is_none() {
            let epoch_orders = next_orders.take().unwrap_or_else(|| shuffle(epoch));
            for (order, host) in orders.iter().zip(&epoch_orders) {
                order.write(gpu, host).map_err(MlpError::from)?;
            }
        }
        observer.event(&Event::EpochStarted {
            epoch,
            last_epoch,
            samples,
        });
        let mut progress = EpochProgress {
            epoch,
            start: epoch_start,
            loss_sum: 0.0,
            steps_done: 0,
            samples_done: 0,
        };
        // Pipelined, chunk n + 1 is recorded and submitted before the losses of chunk n are
        // waited for, so the GPU runs chunk n while the host records the next one.
        let mut in_flight: Option<InFlight> = None;
        for (k, chunk) in plan.iter().cloned() {
            let shard = &train_shards[k];
            let rec = match prerecorded.take() {
                Some(rec) => rec,
                None => record(&mut model, k, &chunk)?,
            };
            rec.submit().map_err(MlpError::from)?;
            let losses = model.read_losses_async(gpu, chunk.len())?;
            let samples = (chunk.end * batch).min(shard.len()) - chunk.start * batch;
            let next = InFlight {
                chunk,
                samples,
                losses,
            };
            if let Some(done) = in_flight.replace(next) {
                progress.finish(gpu, done, observer)?;
            }
            if !settings.pipeline
                && let Some(done) = in_flight.take()
            {
                progress.finish(gpu, done, observer)?;
            }
        }
        // The GPU has this epoch's last chunks, the host nothing until their losses are back:
        // draw the next epoch's permutations now. Drawn at the next epoch's start instead, they
        // kept the GPU idle for as long (0.35-0.67 ms for MNIST's 60,000 samples on the 2-core
        // development machine, where an H200 epoch at batch 1024 takes 4.6 ms).
        if epoch < last_epoch {
            let next = shuffle(epoch + 1);
            match plan.first() {
                // Every chunk of this epoch is submitted: the writes land after them.
                Some((k, chunk)) if settings.pipeline => {
                    for (order, host) in orders.iter().zip(&next) {
                        order.write(gpu, host).map_err(MlpError::from)?;
                    }
                    prerecorded = Some(record(&mut model, *k, chunk)?);
                }
                _ => next_orders = Some(next),
            }
        }
        if let Some(done) = in_flight.take() {
            progress.finish(gpu, done, observer)?;
        }
        let loss_sum = progress.loss_sum;
        let epoch_train = epoch_start.elapsed();
        let eval_start = Instant::now();
        let eval = evaluate(gpu, &mut model, &test_shards)?;
        let epoch_eval = eval_start.elapsed();
        train_time += epoch_train;
        eval_time += epoch_eval;
        test_accuracy = Some(eval.accuracy());
        let report = EpochReport {
            last_epoch,
            record: EpochRecord {
                epoch,
                train_loss: (loss_sum / steps as f64) as f32,
                test_accuracy: eval.accuracy(),
                train_seconds: epoch_train.as_secs_f64(),
                eval_seconds: epoch_eval.as_secs_f64(),
            },
            correct: eval.correct,
            total: eval.total,
            samples,
            train_time: epoch_train,
            eval_time: epoch_eval,
        };
        observer.event(&Event::Epoch(&report));
        history.push(report.record);
        if let Some(path) = &settings.save {
            snapshot(gpu, &model, &optimizer, epoch, settings, samples, &history)?.save(path)?;
            observer.event(&Event::CheckpointSaved { epoch, path });
        }
    }
    let checkpoint = snapshot(
        gpu, &model, &optimizer, last_epoch, settings, samples, &history,
    )?;
    let samples_per_second =
        (samples * settings.epochs) as f64 / train_time.as_secs_f64().max(1e-9);
    Ok(Outcome {
        checkpoint,
        test_accuracy,
        train_time,
        eval_time,
        samples_per_second,
    })
}

/// A submitted chunk whose losses are on their way back.
struct InFlight {
    chunk: Range<usize>,
    samples: usize,
    losses: PendingLosses,
}

/// Where an epoch's training stands, as its chunks' losses come back.
struct EpochProgress {
    epoch: usize,
    start: Instant,
    loss_sum: f64,
    steps_done: usize,
    samples_done: usize,
}

impl EpochProgress {
    /// Waits for `done`'s losses (the GPU keeps running what was submitted after it), checks
    /// them and reports the chunk.
    fn finish(
        &mut self,
        gpu: &Gpu,
        done: InFlight,
        observer: &mut dyn Observer,
    ) -> Result<(), TrainError> {
        let losses = done.losses.wait(gpu)?;
        if let Some((i, &loss)) = losses.iter().enumerate().find(|(_, l)| !l.is_finite()) {
            return Err(TrainError::Diverged {
                epoch: self.epoch,
                step: self.steps_done + i,
                loss,
            });
        }
        self.loss_sum += losses.iter().map(|&l| f64::from(l)).sum::<f64>();
        self.steps_done += done.chunk.len();
        self.samples_done += done.samples;
        observer.event(&Event::Chunk(&ChunkReport {
            epoch: self.epoch,
            mean_loss: losses.iter().sum::<f32>() / losses.len().max(1) as f32,
            steps: done.chunk,
            steps_done: self.steps_done,
            samples_done: self.samples_done,
            elapsed: self.start.elapsed(),
        }));
        Ok(())
    }
}

/// Reads the model back into a checkpoint after `epoch` of training on `train_images` images;
/// [`TrainError::NonFiniteState`] if a parameter or optimizer slot is NaN or infinite.
fn snapshot(
    gpu: &Gpu,
    model: &GpuMlp,
    optimizer: &OptimizerConfig,
    epoch: usize,
    settings: &TrainSettings,
    train_images: usize,
    history: &[EpochRecord],
) -> Result<Checkpoint, TrainError> {
    let params = model.params(gpu)?;
    let optimizer_state = model.optimizer_state(gpu)?;
    let finite = |v: &[f32]| v.iter().all(|x| x.is_finite());
    let what = if !params
        .layers
        .iter()
        .all(|l| finite(&l.weight) && finite(&l.bias))
    {
        Some("the parameters")
    } else if !optimizer_state.slots.iter().all(|s| finite(s)) {
        Some("the optimizer state")
    } else {
        None
    };
    if let Some(what) = what {
        return Err(TrainError::NonFiniteState { epoch, what });
    }
    Ok(Checkpoint {
        config: model.config().clone(),
        params,
        optimizer: optimizer.clone(),
        optimizer_state,
        epoch,
        batch_size: settings.batch_size,
        seed: settings.seed,
        history: history.to_vec(),
        schedule: *model.schedule(),
        train_images: Some(train_images),
    })
}
