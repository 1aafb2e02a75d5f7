//! [`TrainError`]: what can stop training, returned by the loop (`train`) and by the data
//! set's upload and evaluation (`train::shard`), so it lives below both, as `data/error.rs`
//! does for the data stage.

use crate::checkpoint::CheckpointError;
use crate::error::MlpError;

/// What can stop training.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TrainError {
    /// The GPU model failed (building kernels, dispatching, reading back).
    #[error(transparent)]
    Model(#[from] MlpError),
    /// Writing the checkpoint failed.
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    /// The model's input size differs from the data's image size.
    #[error("the model takes {model} input features but the images have {data} pixels")]
    InputSize {
        /// The model's input features.
        model: usize,
        /// Pixels per image.
        data: usize,
    },
    /// A setting is out of range.
    #[error("{0}")]
    Settings(String),
    /// The loss became NaN or infinite.
    #[error(
        "training diverged: the loss is {loss} at epoch {epoch}, step {step}; \
         try a smaller learning rate"
    )]
    Diverged {
        /// The epoch (from 1).
        epoch: usize,
        /// The step within the epoch (from 0).
        step: usize,
        /// The loss read back.
        loss: f32,
    },
    /// The parameters or the optimizer state became NaN or infinite in an update after the
    /// last loss was read (each step's loss is computed before its update); found when the run
    /// takes its checkpoint, which is then neither saved nor returned.
    #[error(
        "training diverged: {what} hold a non-finite value after epoch {epoch}; \
         try a smaller learning rate"
    )]
    NonFiniteState {
        /// The epoch (from 1) after which the state was read.
        epoch: usize,
        /// `"the parameters"` or `"the optimizer state"`.
        what: &'static str,
    },
}
