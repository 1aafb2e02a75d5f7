//! The command line as typed ("low" arguments, as ripgrep's `lowargs`): clap parses it, checks
//! each value on its own, and nothing more. Options whose default depends on another (the
//! learning rate on the optimizer; everything the checkpoint holds when resuming) stay `None`
//! here; [`crate::plan`] resolves them, with every default in [`crate::defaults`].

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, CommandFactory, Parser, Subcommand};
use mlp::activation::Activation;
use mlp::config::Precision;

pub use crate::choices::{Center, Optimizer, Schedule};
use crate::defaults;

#[derive(Parser, Debug)]
#[command(
    name = "mnist",
    version,
    about = "Train, evaluate and use a multi-layer perceptron on MNIST; every GPU kernel is \
             written with wgsl-dsl",
    after_help = "Data: a directory with train-images, train-labels, t10k-images and t10k-labels \
                  in IDX format (raw or .gz, spelled `NAME-idxD-ubyte` or `NAME.idxD-ubyte`); \
                  by default the repository's data/mnist. Fashion-MNIST: \
                  `--data /usr/share/datasets/fashion-mnist` (Debian package dataset-fashion-mnist)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Train a model (784-128-10 on the full data by default) and report test accuracy.
    Train(TrainArgs),
    /// Accuracy and confusion matrix of a saved model on the test set.
    Eval(EvalArgs),
    /// Classify images of digits (PNG, PGM or JPEG; gray, colour, with or without alpha), centred
    /// as MNIST's were, with a saved model.
    Predict(PredictArgs),
    /// Write a static web page that runs a saved model on WebGPU: draw a digit, see the
    /// probabilities.
    ExportWeb(crate::web::ExportWebArgs),
}

#[derive(Args, Debug)]
pub struct DataArgs {
    /// Data directory [default: the repository's data/mnist].
    #[arg(long, value_name = "DIR")]
    pub data: Option<PathBuf>,
    /// Use only the first N test images.
    #[arg(long, value_name = "N", value_parser = positive_usize, allow_hyphen_values = true)]
    pub limit_test: Option<usize>,
}

#[derive(Args, Debug)]
pub struct TrainArgs {
    /// Epochs to train (with --resume: epochs to add to the checkpoint's).
    #[arg(long, default_value_t = defaults::EPOCHS, value_parser = positive_usize,
          allow_hyphen_values = true)]
    pub epochs: usize,
    #[arg(long, value_name = "N", value_parser = positive_usize, allow_hyphen_values = true,
          help = format!("Samples per step [default: {}; with --resume, the checkpoint's]",
                         defaults::BATCH_SIZE))]
    pub batch_size: Option<usize>,
    #[arg(long, value_parser = positive_f32, allow_hyphen_values = true,
          help = format!("Learning rate [default: {} for SGD, {} for Adam; with --resume, the \
                          checkpoint's]", defaults::SGD_LR, defaults::ADAM_LR))]
    pub lr: Option<f32>,
    #[arg(
        long,
        value_enum,
        help = "Optimizer [default: sgd; with --resume, the checkpoint's, which cannot change]"
    )]
    pub optimizer: Option<Optimizer>,
    #[arg(long, value_parser = momentum, allow_hyphen_values = true,
          help = format!("SGD momentum in [0, 1) [default: {}; with --resume, the checkpoint's]",
                         defaults::MOMENTUM))]
    pub momentum: Option<f32>,
    #[arg(long, value_enum,
          help = format!("Learning-rate schedule over the run's epochs [default: {}; with \
                          --resume, the checkpoint's, which continues]",
                         defaults::SCHEDULE.name()))]
    pub schedule: Option<Schedule>,
    #[arg(long, value_name = "EPOCHS", value_parser = non_negative_f64, allow_hyphen_values = true,
          help = format!("Linear learning-rate warm-up, in epochs (fractions allowed), before \
                          any --schedule, constant included; 0 for none [default: {}]",
                         defaults::WARMUP_EPOCHS))]
    pub warmup_epochs: Option<f64>,
    #[arg(long, value_name = "EPOCHS", value_parser = positive_f64, allow_hyphen_values = true,
          help = format!("--schedule step: epochs between decays [default: {}]",
                         defaults::STEP_EPOCHS))]
    pub step_epochs: Option<f64>,
    #[arg(long, value_name = "FACTOR", value_parser = gamma, allow_hyphen_values = true,
          help = format!("--schedule step: factor of each decay, in (0, 1] [default: {}]",
                         defaults::STEP_GAMMA))]
    pub step_gamma: Option<f32>,
    #[arg(long, value_enum,
          help = format!("Activation of the hidden layers [default: {}; with --resume, the \
                          checkpoint's, which cannot change]", defaults::ACTIVATION))]
    pub activation: Option<Activation>,
    #[arg(long, value_name = "N[,N...]", value_delimiter = ',', value_parser = positive_usize,
          allow_hyphen_values = true,
          help = format!("Hidden layer widths, comma-separated [default: {}; with --resume, the \
                          checkpoint's, which cannot change]", defaults::hidden_text()))]
    pub hidden: Option<Vec<usize>>,
    #[arg(long, value_parser = any_u64, allow_hyphen_values = true,
          help = format!("Seed of initialisation and shuffling [default: {}; with \
                                --resume, the checkpoint's]", defaults::SEED))]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub data: DataArgs,
    /// Use only the first N training images (with --resume: the checkpoint's, which cannot
    /// change).
    #[arg(long, value_name = "N", value_parser = positive_usize, allow_hyphen_values = true)]
    pub limit_train: Option<usize>,
    /// Save a checkpoint (safetensors) here after every epoch.
    #[arg(long, value_name = "PATH")]
    pub save: Option<PathBuf>,
    /// Continue from a checkpoint (parameters, optimizer state, epoch count, learning-rate
    /// schedule: a cosine, the default, is extended to end with the resumed run, as if the
    /// run had been planned with its epochs and these; --schedule cannot change it).
    #[arg(long, value_name = "PATH")]
    pub resume: Option<PathBuf>,
    /// Draw the training loss and test accuracy per epoch here, as PNG or JPEG: the extension
    /// (.png, .jpg or .jpeg) names the format.
    #[arg(long, value_name = "PATH")]
    pub plot: Option<PathBuf>,
    /// Training steps recorded per GPU submit (the loss is read back once per chunk).
    #[arg(long, value_name = "N", default_value_t = defaults::STEPS_PER_CHUNK,
          value_parser = positive_usize, allow_hyphen_values = true)]
    pub steps_per_chunk: usize,
    /// Wait for each chunk's losses before recording the next (by default the host records
    /// chunk n + 1 while the GPU runs chunk n; the results are the same, only the time differs).
    #[arg(long)]
    pub no_pipeline: bool,
    /// The element type of the first layer's forward product. The weights, the gradients and
    /// the optimizer stay f32 either way. f16 needs one hidden layer on a hardware GPU whose
    /// adapter has cooperative matrices and a single subgroup size (NVIDIA through Vulkan:
    /// measured on an H200); the device is then opened with wgpu's experimental
    /// cooperative-matrix feature. Elsewhere (software adapters such as lavapipe) it is
    /// refused before training.
    #[arg(long, value_enum, default_value_t = Precision::F32)]
    pub precision: Precision,
    /// Before training, profile --steps-per-chunk training steps on the GPU and print where
    /// the time goes: per kernel, dispatches per step, GPU time, share of the step, and the
    /// host's recording time.
    #[arg(long)]
    pub profile: bool,
}

#[derive(Args, Debug)]
pub struct EvalArgs {
    /// A checkpoint written by `mnist train --save`.
    #[arg(long, value_name = "PATH")]
    pub model: PathBuf,
    /// Check that the model's hidden layers use this activation (the checkpoint says which;
    /// a mismatch is an error).
    #[arg(long, value_enum)]
    pub activation: Option<Activation>,
    #[command(flatten)]
    pub data: DataArgs,
}

#[derive(Args, Debug)]
#[command(after_help = crate::predict::HELP)]
pub struct PredictArgs {
    /// A checkpoint written by `mnist train --save`.
    #[arg(long, value_name = "PATH")]
    pub model: PathBuf,
    /// Check that the model's hidden layers use this activation (the checkpoint says which;
    /// a mismatch is an error).
    #[arg(long, value_enum)]
    pub activation: Option<Activation>,
    /// Dark digits on a light background (see the rule for transparency below).
    #[arg(long)]
    pub invert: bool,
    /// Centre each picture as MNIST's digits were made: the ink's bounding box scaled to 20
    /// pixels on its longer side (keeping its aspect), then placed in 28x28 with its centre of
    /// mass at the centre. `auto` centres every picture but those already centred so.
    #[arg(long, value_enum, default_value_t = Center::Auto)]
    pub center: Center,
    /// PNG, PGM or JPEG images: any size up to 2048x2048 when centred, else the model's input
    /// size (28x28 for MNIST).
    #[arg(value_name = "IMAGE", required = true)]
    pub images: Vec<PathBuf>,
}

/// The subcommand `args` (the whole command line, program name first) names: its first
/// argument that is not an option (`mnist` itself takes only `--help` and `--version`).
pub fn subcommand(args: &[OsString]) -> Option<clap::Command> {
    let first = args
        .iter()
        .skip(1)
        .find(|a| !a.to_string_lossy().starts_with('-'))?;
    Cli::command().find_subcommand(first).cloned()
}

/// A numeric option of `args` followed by another option where its value should be
/// (`--lr --epochs 3`), as `("lr", "--epochs")`. The numeric options take values starting
/// with `-` (clap's `allow_hyphen_values`), so that `--lr -1` reaches the range check instead
/// of clap's "unexpected argument '-1'"; clap would then take `--epochs` for the value and
/// fail on `3`, so this is told first.
pub fn option_without_value(args: &[OsString]) -> Option<(String, String)> {
    let sub = subcommand(args)?;
    args.windows(2).find_map(|w| {
        let name = w[0].to_str()?.strip_prefix("--")?;
        let next = w[1].to_str()?;
        let arg = sub.get_arguments().find(|a| a.get_long() == Some(name))?;
        (arg.is_allow_hyphen_values_set() && next.starts_with("--"))
            .then(|| (name.to_string(), next.to_string()))
    })
}

/// `s` parsed as a `T` for which `ok` holds, or an error saying that `s` is not `what`.
fn parse_where<T: std::str::FromStr>(
    s: &str,
    ok: impl Fn(&T) -> bool,
    what: &str,
) -> Result<T, String> {
    match s.parse::<T>() {
        Ok(x) if ok(&x) => Ok(x),
        _ => Err(format!("`{s}` is not {what}")),
    }
}

fn any_u64(s: &str) -> Result<u64, String> {
    parse_where(
        s,
        |_: &u64| true,
        "an integer from 0 to 18446744073709551615",
    )
}

fn positive_usize(s: &str) -> Result<usize, String> {
    let digits = s.strip_prefix('+').unwrap_or(s);
    if !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && s.parse::<usize>().is_err()
    {
        return Err(format!(
            "`{s}` is too large (a positive integer up to {})",
            usize::MAX
        ));
    }
    parse_where(s, |&n: &usize| n >= 1, "a positive integer")
}

/// A positive `f32`; a positive number beyond `f32`'s range is called too large, not "not
/// positive" (`--lr 1e300`).
fn positive_f32(s: &str) -> Result<f32, String> {
    match s.parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 && !(x as f32).is_finite() => Err(format!(
            "`{s}` is too large (a positive number up to {:e})",
            f32::MAX
        )),
        _ => parse_where(s, |&x: &f32| x.is_finite() && x > 0.0, "a positive number"),
    }
}

fn non_negative_f64(s: &str) -> Result<f64, String> {
    too_large_f64(s, "a number >= 0")?;
    parse_where(s, |&x: &f64| x.is_finite() && x >= 0.0, "a number >= 0")
}

/// An error for `s` when it is a finite decimal number too large for an `f64` (`1e400`).
fn too_large_f64(s: &str, what: &str) -> Result<(), String> {
    match s.parse::<f64>() {
        Ok(x) if x == f64::INFINITY && !s.to_ascii_lowercase().contains("inf") => {
            Err(format!("`{s}` is too large ({what} up to {:e})", f64::MAX))
        }
        _ => Ok(()),
    }
}

fn positive_f64(s: &str) -> Result<f64, String> {
    too_large_f64(s, "a positive number")?;
    parse_where(s, |&x: &f64| x.is_finite() && x > 0.0, "a positive number")
}

fn gamma(s: &str) -> Result<f32, String> {
    parse_where(s, |&x: &f32| x > 0.0 && x <= 1.0, "a number in (0, 1]")
}

fn momentum(s: &str) -> Result<f32, String> {
    parse_where(s, |&x: &f32| (0.0..1.0).contains(&x), "a number in [0, 1)")
}
