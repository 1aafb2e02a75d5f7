//! [`MlpError`]: what can go wrong building, running or reading back the model's kernels.

use wgsl_dsl::BuildError;
use wgsl_dsl::runtime::{DeviceError, DispatchError};

use crate::config::ConfigError;

/// Errors of the GPU model ([`crate::model::GpuMlp`]) and the kernel runner.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum MlpError {
    /// The model's shape is unusable.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A kernel failed to build or validate (a bug in the kernel, or a device whose limits
    /// it exceeds).
    #[error(transparent)]
    Build(#[from] BuildError),
    /// A dispatch, buffer allocation or submission failed.
    #[error(transparent)]
    Dispatch(#[from] DispatchError),
    /// The device failed (lost, timed out) or a read-back failed.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// An argument does not fit the model: wrong length, label out of range, batch size 0
    /// or larger than the model's maximum, and the like.
    #[error("{0}")]
    InvalidArgument(String),
    /// The precision asked for cannot run here: `--precision f16` without the fused step or
    /// on an adapter without cooperative matrices or a single subgroup size.
    #[error("--precision {precision} cannot run here: {why}")]
    Precision {
        /// The precision asked for.
        precision: crate::config::Precision,
        /// Why not.
        why: String,
    },
}
