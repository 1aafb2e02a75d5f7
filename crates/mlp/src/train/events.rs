//! What training reports while it runs: [`Event`]s delivered to an [`Observer`].
//!
//! The library prints nothing; the caller decides what an event becomes (the `mnist` binary
//! turns them into a progress bar and one line per epoch; tests collect them).

use std::ops::Range;
use std::path::Path;
use std::time::Duration;

use crate::checkpoint::EpochRecord;

/// Receives training's [`Event`]s, in order, on the thread that called
/// [`train`](super::train). Closures `FnMut(&Event<'_>)` are observers; `()` ignores
/// everything.
pub trait Observer {
    /// One event. Called between GPU submissions: keep it short.
    fn event(&mut self, event: &Event<'_>);
}

impl Observer for () {
    fn event(&mut self, _: &Event<'_>) {}
}

impl<F: FnMut(&Event<'_>)> Observer for F {
    fn event(&mut self, event: &Event<'_>) {
        self(event)
    }
}

/// One thing that happened during training.
#[derive(Debug)]
#[non_exhaustive]
pub enum Event<'a> {
    /// Data and model are on the GPU; the first epoch is about to start.
    Started(&'a Started),
    /// An epoch starts: the progress of its training goes from 0 to `samples`.
    EpochStarted {
        /// The epoch, counted from 1 (resumed runs continue the count).
        epoch: usize,
        /// The last epoch of this run.
        last_epoch: usize,
        /// Training samples in the epoch.
        samples: usize,
    },
    /// A chunk of training steps has run and its losses have been read back.
    Chunk(&'a ChunkReport),
    /// An epoch has been trained and evaluated.
    Epoch(&'a EpochReport),
    /// A checkpoint was written (atomically) after `epoch`.
    CheckpointSaved {
        /// The epoch it ends with.
        epoch: usize,
        /// Where it was written.
        path: &'a Path,
    },
}

/// [`Event::Started`]: what the run will do.
#[derive(Clone, Debug, PartialEq)]
pub struct Started {
    /// The first epoch of this run (1 unless resumed).
    pub first_epoch: usize,
    /// The last epoch of this run.
    pub last_epoch: usize,
    /// Optimizer steps taken before this run (0 unless resumed).
    pub optimizer_step: u64,
    /// Training samples per epoch.
    pub samples_per_epoch: usize,
    /// Optimizer steps per epoch.
    pub steps_per_epoch: usize,
    /// Shards the training set was uploaded in (see [`shard_len`](super::shard_len)).
    pub shards: usize,
    /// The learning-rate schedule, in steps (a resumed run's from its checkpoint, a cosine
    /// extended to end with this run: [`LrSchedule::extended_to`](crate::schedule::LrSchedule::extended_to)).
    pub schedule: crate::schedule::LrSchedule,
    /// The checkpoint's schedule, where `schedule` extends it.
    pub extended_from: Option<crate::schedule::LrSchedule>,
}

/// [`Event::Chunk`]: the losses of one chunk of steps.
#[derive(Clone, Debug, PartialEq)]
pub struct ChunkReport {
    /// The epoch, from 1.
    pub epoch: usize,
    /// The chunk's steps, numbered within their shard's part of the epoch.
    pub steps: Range<usize>,
    /// Steps of the epoch done, this chunk included.
    pub steps_done: usize,
    /// Samples of the epoch trained on, this chunk included.
    pub samples_done: usize,
    /// Mean over the chunk's steps of each step's mean cross-entropy (nats).
    pub mean_loss: f32,
    /// Training time of the epoch so far (host and GPU, from the epoch's start).
    pub elapsed: Duration,
}

/// [`Event::Epoch`]: an epoch's result.
#[derive(Clone, Debug, PartialEq)]
pub struct EpochReport {
    /// The last epoch of this run.
    pub last_epoch: usize,
    /// What the checkpoint's history keeps of the epoch.
    pub record: EpochRecord,
    /// Test examples classified correctly.
    pub correct: u64,
    /// Test examples.
    pub total: u64,
    /// Training samples of the epoch.
    pub samples: usize,
    /// Time training the epoch (until its last losses were read back).
    pub train_time: Duration,
    /// Time evaluating the test set after it.
    pub eval_time: Duration,
}

impl EpochReport {
    /// Training samples per second of the epoch (evaluation excluded).
    pub fn samples_per_second(&self) -> f64 {
        self.samples as f64 / self.train_time.as_secs_f64().max(1e-9)
    }
}
