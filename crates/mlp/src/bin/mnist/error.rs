//! [`CliError`]: every way the `mnist` binary can fail, each printed as one line `error: ...`.

use std::path::PathBuf;
use std::process::ExitCode;

use mlp::activation::Activation;
use mlp::checkpoint::CheckpointError;
use mlp::data::DataError;
use mlp::error::MlpError;
use mlp::plot::PlotError;
use mlp::train::TrainError;
use wgsl_dsl::runtime::DeviceError;

/// What stopped the binary.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The command line asks for something impossible (beyond what clap checks on its own).
    #[error("{0}")]
    Usage(String),
    /// A data set file is missing or malformed.
    #[error(transparent)]
    Data(#[from] DataError),
    /// A checkpoint could not be read or written.
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    /// Training stopped.
    #[error(transparent)]
    Train(#[from] TrainError),
    /// The model failed on the GPU (evaluation, prediction).
    #[error(transparent)]
    Model(#[from] MlpError),
    /// No usable GPU.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// The plot could not be drawn.
    #[error("{}: cannot write the plot: {source}", path.display())]
    Plot {
        /// The picture's path.
        path: PathBuf,
        /// Why.
        source: PlotError,
    },
    /// The kernels could not be exported (`mnist export-web`).
    #[error(transparent)]
    Export(#[from] wgsl_dsl::export::ExportError),
    /// `--activation` names another activation than the checkpoint's model uses.
    #[error(
        "{}: the model was trained with --activation {checkpoint}, --activation {asked} was \
         given (a model's activation cannot change; leave --activation out to use the \
         checkpoint's)",
        path.display()
    )]
    ActivationMismatch {
        /// The checkpoint.
        path: PathBuf,
        /// The activation the checkpoint's model uses.
        checkpoint: Activation,
        /// The activation the command line asks for.
        asked: Activation,
    },
    /// A file or directory given on the command line cannot be used.
    #[error("{}: {reason}", path.display())]
    Path {
        /// The path.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
}

impl CliError {
    /// A [`CliError::Path`].
    pub fn path(path: impl Into<PathBuf>, reason: impl std::fmt::Display) -> CliError {
        CliError::Path {
            path: path.into(),
            reason: reason.to_string(),
        }
    }

    /// [`CliError::ActivationMismatch`] if `asked` is given and is not `checkpoint`.
    pub fn check_activation(
        path: &std::path::Path,
        checkpoint: Activation,
        asked: Option<Activation>,
    ) -> Result<(), CliError> {
        match asked {
            Some(asked) if asked != checkpoint => Err(CliError::ActivationMismatch {
                path: path.to_path_buf(),
                checkpoint,
                asked,
            }),
            _ => Ok(()),
        }
    }

    /// The side of the square images a model of `inputs` features takes; a
    /// [`CliError::path`] error naming `path` (the model's file) if `inputs` is not a square.
    pub fn image_side(path: &std::path::Path, inputs: usize) -> Result<usize, CliError> {
        let side = (inputs as f64).sqrt().round() as usize;
        if side * side == inputs {
            Ok(side)
        } else {
            Err(CliError::path(
                path,
                format!("the model takes {inputs} features, not a square image"),
            ))
        }
    }

    /// 2 for a bad command line, 1 for everything else.
    pub fn exit_code(&self) -> ExitCode {
        match self {
            CliError::Usage(_) => ExitCode::from(2),
            _ => ExitCode::FAILURE,
        }
    }
}

/// `s` on one line: every run of whitespace (newlines included) becomes one space.
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
