//! `mnist`: train an MLP on MNIST (or Fashion-MNIST) on the GPU, evaluate it, classify images.
//! Every kernel it runs is written with wgsl-dsl.
//!
//! ```text
//! cargo run --release -p mlp --bin mnist -- train                 # 784-128-10, 5 epochs
//! cargo run --release -p mlp --bin mnist -- train --save m.safetensors --plot m.png
//! cargo run --release -p mlp --bin mnist -- eval --model m.safetensors
//! cargo run --release -p mlp --bin mnist -- predict --model m.safetensors digit.png
//! ```
//!
//! Every failure prints one line `error: ...` to stderr and exits with a non-zero status
//! (2 for a bad command line, 1 otherwise).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::{Args, Parser, Subcommand, ValueEnum};
use mlp::checkpoint::Checkpoint;
use mlp::config::MlpConfig;
use mlp::data::{CLASSES, Dataset, Mnist, Split};
use mlp::model::{GpuMlp, OptimizerConfig};
use mlp::params::Params;
use mlp::profile::profile_training;
use mlp::train::{Start, TrainSettings, evaluate, plot_history, train, upload};
use wgsl_dsl::runtime::Gpu;

/// Default optimizer settings (measured in README: >= 97.5% test accuracy in 5 epochs).
const DEFAULT_BATCH: usize = 64;
const DEFAULT_SGD_LR: f32 = 0.05;
const DEFAULT_MOMENTUM: f32 = 0.9;
const DEFAULT_ADAM_LR: f32 = 1e-3;
/// Batch of evaluation and prediction (the test set goes through the GPU in such batches).
const EVAL_BATCH: usize = 500;

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
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Train a model (784-128-10 on the full data by default) and report test accuracy.
    Train(TrainArgs),
    /// Accuracy and confusion matrix of a saved model on the test set.
    Eval(EvalArgs),
    /// Classify 28x28 grayscale images (PNG or PGM) with a saved model.
    Predict(PredictArgs),
}

#[derive(Args, Debug)]
struct DataArgs {
    /// Data directory [default: the repository's data/mnist].
    #[arg(long, value_name = "DIR")]
    data: Option<PathBuf>,
    /// Use only the first N test images.
    #[arg(long, value_name = "N", value_parser = positive_usize)]
    limit_test: Option<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Optimizer {
    /// Stochastic gradient descent with (heavy-ball) momentum.
    Sgd,
    /// Adam (Kingma & Ba 2015), betas 0.9 and 0.999, eps 1e-8.
    Adam,
}

#[derive(Args, Debug)]
struct TrainArgs {
    /// Epochs to train (with --resume: epochs to add to the checkpoint's).
    #[arg(long, default_value_t = 5, value_parser = positive_usize)]
    epochs: usize,
    /// Samples per step [default: 64].
    #[arg(long, value_name = "N", value_parser = positive_usize)]
    batch_size: Option<usize>,
    /// Learning rate [default: 0.05 for SGD, 0.001 for Adam].
    #[arg(long, value_parser = positive_f32)]
    lr: Option<f32>,
    /// Optimizer [default: sgd].
    #[arg(long, value_enum)]
    optimizer: Option<Optimizer>,
    /// SGD momentum in [0, 1) [default: 0.9].
    #[arg(long, value_parser = momentum)]
    momentum: Option<f32>,
    /// Hidden layer widths, comma-separated [default: 128].
    #[arg(long, value_name = "N[,N...]", value_delimiter = ',', value_parser = positive_usize)]
    hidden: Option<Vec<usize>>,
    /// Seed of initialisation and shuffling [default: 0].
    #[arg(long)]
    seed: Option<u64>,
    #[command(flatten)]
    data: DataArgs,
    /// Use only the first N training images.
    #[arg(long, value_name = "N", value_parser = positive_usize)]
    limit_train: Option<usize>,
    /// Save a checkpoint (safetensors) here after every epoch.
    #[arg(long, value_name = "PATH")]
    save: Option<PathBuf>,
    /// Continue from a checkpoint (parameters, optimizer state, epoch count).
    #[arg(long, value_name = "PATH")]
    resume: Option<PathBuf>,
    /// Write a PNG of training loss and test accuracy per epoch here.
    #[arg(long, value_name = "PATH")]
    plot: Option<PathBuf>,
    /// Training steps recorded per GPU submit (the loss is read back once per chunk).
    #[arg(long, value_name = "N", default_value_t = 40, value_parser = positive_usize)]
    steps_per_chunk: usize,
    /// Before training, profile --steps-per-chunk training steps on the GPU and print where
    /// the time goes: per kernel, dispatches per step, GPU time, share of the step, and the
    /// host's recording time.
    #[arg(long)]
    profile: bool,
}

#[derive(Args, Debug)]
struct EvalArgs {
    /// A checkpoint written by `mnist train --save`.
    #[arg(long, value_name = "PATH")]
    model: PathBuf,
    #[command(flatten)]
    data: DataArgs,
}

#[derive(Args, Debug)]
#[command(
    after_help = "Images must have the model's input size (28x28 for MNIST); other sizes \
                        are rejected, not resized (resize first, keeping the digit centred, e.g. \
                        `convert in.png -resize 20x20 -gravity center -extent 28x28 out.png`). \
                        Colour images are converted to luminance, alpha is ignored. MNIST digits \
                        are white on black: pass --invert for dark digits on a light background."
)]
struct PredictArgs {
    /// A checkpoint written by `mnist train --save`.
    #[arg(long, value_name = "PATH")]
    model: PathBuf,
    /// Invert the images (for dark digits on a light background).
    #[arg(long)]
    invert: bool,
    /// PNG or PGM images, 28x28 grayscale.
    #[arg(value_name = "IMAGE", required = true)]
    images: Vec<PathBuf>,
}

fn positive_usize(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("`{s}` is not a positive integer")),
    }
}

fn positive_f32(s: &str) -> Result<f32, String> {
    match s.parse::<f32>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
        _ => Err(format!("`{s}` is not a positive number")),
    }
}

fn momentum(s: &str) -> Result<f32, String> {
    match s.parse::<f32>() {
        Ok(x) if (0.0..1.0).contains(&x) => Ok(x),
        _ => Err(format!("`{s}` is not a number in [0, 1)")),
    }
}

/// One line of error for the user.
type Failure = String;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(&e),
    };
    let result = match cli.command {
        Command::Train(args) => run_train(args),
        Command::Eval(args) => run_eval(args),
        Command::Predict(args) => run_predict(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {}", one_line(&message));
            ExitCode::FAILURE
        }
    }
}

/// clap's error as one line (help and version are printed whole and succeed).
fn usage_error(e: &clap::Error) -> ExitCode {
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            print!("{e}");
            ExitCode::SUCCESS
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand | ErrorKind::MissingSubcommand => {
            eprintln!("error: a command is required: train, eval or predict (see `mnist --help`)");
            ExitCode::from(2)
        }
        _ => {
            // clap's message is its first paragraph (a list of missing arguments is indented
            // under it); usage and tips follow a blank line.
            let text = e.render().to_string();
            let message = one_line(text.split("\n\n").next().unwrap_or("invalid arguments"));
            let message = message.strip_prefix("error: ").unwrap_or(&message);
            eprintln!("error: {message} (see `mnist --help`)");
            ExitCode::from(2)
        }
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The repository's `data/mnist`, found from the build's source directory or the current
/// directory.
fn default_data_dir() -> Result<PathBuf, Failure> {
    let candidates = [
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/mnist"),
        PathBuf::from("data/mnist"),
    ];
    candidates
        .iter()
        .find(|p| p.is_dir())
        .map(|p| p.canonicalize().unwrap_or_else(|_| p.clone()))
        .ok_or_else(|| {
            format!(
                "no MNIST directory found (looked for {} and {}); pass --data DIR",
                candidates[0].display(),
                candidates[1].display()
            )
        })
}

fn data_dir(arg: &Option<PathBuf>) -> Result<PathBuf, Failure> {
    match arg {
        Some(dir) if dir.is_dir() => Ok(dir.clone()),
        Some(dir) => Err(format!("{}: not a directory", dir.display())),
        None => default_data_dir(),
    }
}

/// Fails early (before training) if `path` cannot be written: its directory must exist.
fn check_writable(path: &Path, what: &str) -> Result<(), Failure> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if path.is_dir() {
        return Err(format!(
            "{}: is a directory, not a {what} file",
            path.display()
        ));
    }
    tempfile::tempfile_in(dir)
        .map(drop)
        .map_err(|e| format!("{}: cannot write the {what} there: {e}", path.display()))
}

fn gpu() -> Result<Gpu, Failure> {
    let gpu = Gpu::new().map_err(|e| e.to_string())?;
    eprintln!("GPU: {}", gpu.adapter_info().name);
    Ok(gpu)
}

fn run_train(args: TrainArgs) -> Result<(), Failure> {
    for (path, what) in [(&args.save, "checkpoint"), (&args.plot, "plot")] {
        if let Some(p) = path {
            check_writable(p, what)?;
        }
    }
    let dir = data_dir(&args.data.data)?;
    let mut data = Mnist::load(&dir).map_err(|e| e.to_string())?;
    if let Some(n) = args.limit_train {
        data.train.truncate(n);
    }
    if let Some(n) = args.data.limit_test {
        data.test.truncate(n);
    }
    let (start, seed, batch) = match &args.resume {
        Some(path) => resume(&args, Checkpoint::load(path).map_err(|e| e.to_string())?)?,
        None => fresh(&args, data.train.features())?,
    };
    eprintln!(
        "data: {} ({} training, {} test images of {}x{})",
        dir.display(),
        data.train.len(),
        data.test.len(),
        data.train.rows,
        data.train.cols
    );
    let settings = TrainSettings {
        epochs: args.epochs,
        batch_size: batch,
        seed,
        steps_per_chunk: args.steps_per_chunk,
        verbose: true,
        save: args.save.clone(),
    };
    let gpu = gpu()?;
    if args.profile {
        let (config, params, optimizer) = match &start {
            Start::Fresh { config, optimizer } => (config, Params::init(config, seed), optimizer),
            Start::Resume(c) => (&c.config, c.params.clone(), &c.optimizer),
        };
        let profile = profile_training(
            &gpu,
            &data.train,
            config,
            &params,
            optimizer,
            batch,
            args.steps_per_chunk,
        )
        .map_err(|e| e.to_string())?;
        println!("{profile}");
    }
    let outcome = train(&gpu, &data, start, &settings).map_err(|e| e.to_string())?;
    if let Some(path) = &args.save {
        println!("saved {}", path.display());
    }
    if let Some(path) = &args.plot {
        plot_history(&outcome.checkpoint.history, path)?;
        println!("plot written to {}", path.display());
    }
    Ok(())
}

fn describe(config: &MlpConfig, optimizer: &OptimizerConfig, batch: usize) -> String {
    let mut sizes = vec![config.inputs];
    sizes.extend(&config.hidden);
    sizes.push(config.classes);
    let shape = sizes.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let opt = match optimizer {
        OptimizerConfig::Sgd { lr, momentum, .. } => format!("SGD lr {lr} momentum {momentum}"),
        OptimizerConfig::Adam { lr, .. } => format!("Adam lr {lr}"),
    };
    format!("model {}, {opt}, batch {batch}", shape.join("-"))
}

fn optimizer_from(
    kind: Optimizer,
    lr: Option<f32>,
    m: Option<f32>,
) -> Result<OptimizerConfig, Failure> {
    Ok(match kind {
        Optimizer::Sgd => OptimizerConfig::Sgd {
            lr: lr.unwrap_or(DEFAULT_SGD_LR),
            momentum: m.unwrap_or(DEFAULT_MOMENTUM),
            weight_decay: 0.0,
        },
        Optimizer::Adam if m.is_some() => {
            return Err("--momentum applies to SGD only (Adam uses beta1 = 0.9)".into());
        }
        Optimizer::Adam => OptimizerConfig::Adam {
            lr: lr.unwrap_or(DEFAULT_ADAM_LR),
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
        },
    })
}

fn fresh(args: &TrainArgs, inputs: usize) -> Result<(Start, u64, usize), Failure> {
    let config = MlpConfig {
        inputs,
        hidden: args.hidden.clone().unwrap_or_else(|| vec![128]),
        classes: CLASSES,
    };
    config.validate().map_err(|e| e.to_string())?;
    let optimizer = optimizer_from(
        args.optimizer.unwrap_or(Optimizer::Sgd),
        args.lr,
        args.momentum,
    )?;
    let batch = args.batch_size.unwrap_or(DEFAULT_BATCH);
    eprintln!("{}", describe(&config, &optimizer, batch));
    Ok((
        Start::Fresh { config, optimizer },
        args.seed.unwrap_or(0),
        batch,
    ))
}

/// Continue from `c`: the model's shape and optimizer kind are the checkpoint's (giving others
/// is an error); the learning rate, momentum, batch size and seed may be changed.
fn resume(args: &TrainArgs, mut c: Checkpoint) -> Result<(Start, u64, usize), Failure> {
    let path = args.resume.as_deref().unwrap_or(Path::new("")).display();
    if let Some(h) = args.hidden.as_ref().filter(|h| **h != c.config.hidden) {
        return Err(format!(
            "{path}: the checkpoint has hidden layers {:?}, --hidden asks for {h:?}",
            c.config.hidden
        ));
    }
    let kind = match c.optimizer {
        OptimizerConfig::Sgd { .. } => Optimizer::Sgd,
        OptimizerConfig::Adam { .. } => Optimizer::Adam,
    };
    if args.optimizer.is_some_and(|o| o != kind) {
        return Err(format!(
            "{path}: the checkpoint was trained with {kind:?}; its optimizer state cannot continue \
             another optimizer"
        ));
    }
    match &mut c.optimizer {
        OptimizerConfig::Sgd { lr, momentum, .. } => {
            *lr = args.lr.unwrap_or(*lr);
            *momentum = args.momentum.unwrap_or(*momentum);
        }
        OptimizerConfig::Adam { lr, .. } => {
            if args.momentum.is_some() {
                return Err("--momentum applies to SGD only (Adam uses beta1 = 0.9)".into());
            }
            *lr = args.lr.unwrap_or(*lr);
        }
    }
    let batch = args.batch_size.unwrap_or(c.batch_size);
    let seed = args.seed.unwrap_or(c.seed);
    eprintln!(
        "resuming {path} after epoch {} (optimizer step {}): {}",
        c.epoch,
        c.optimizer_state.step,
        describe(&c.config, &c.optimizer, batch)
    );
    Ok((Start::Resume(Box::new(c)), seed, batch))
}

fn load_model(gpu: &Gpu, c: &Checkpoint, max_batch: usize) -> Result<GpuMlp, Failure> {
    GpuMlp::new(gpu, &c.config, &c.params, &c.optimizer, None, max_batch).map_err(|e| e.to_string())
}

fn run_eval(args: EvalArgs) -> Result<(), Failure> {
    let c = Checkpoint::load(&args.model).map_err(|e| e.to_string())?;
    let dir = data_dir(&args.data.data)?;
    let mut test: Dataset = Mnist::load_split(&dir, Split::Test).map_err(|e| e.to_string())?;
    if let Some(n) = args.data.limit_test {
        test.truncate(n);
    }
    let gpu = gpu()?;
    let mut model = load_model(&gpu, &c, EVAL_BATCH)?;
    let set = upload(&gpu, &model, &test).map_err(|e| e.to_string())?;
    let eval = evaluate(&gpu, &mut model, &set).map_err(|e| e.to_string())?;
    println!(
        "{}: epoch {}, test accuracy {:.2}% ({}/{}) on {}, mean loss {:.4}",
        args.model.display(),
        c.epoch,
        100.0 * eval.accuracy(),
        eval.correct,
        eval.total,
        dir.display(),
        eval.mean_loss
    );
    print!("{}", confusion_matrix(&test.labels, &eval.predictions));
    Ok(())
}

/// Rows: true class; columns: predicted class; last column: recall of the row's class.
fn confusion_matrix(labels: &[u32], predictions: &[u32]) -> String {
    let mut m = [[0usize; CLASSES]; CLASSES];
    for (&l, &p) in labels.iter().zip(predictions) {
        if let (Some(row), true) = (m.get_mut(l as usize), (p as usize) < CLASSES) {
            row[p as usize] += 1;
        }
    }
    let mut out = String::from("confusion matrix (rows: true class, columns: predicted)\n");
    out.push_str("true\\pred");
    for c in 0..CLASSES {
        out.push_str(&format!("{c:>6}"));
    }
    out.push_str("  recall\n");
    for (t, row) in m.iter().enumerate() {
        out.push_str(&format!("{t:>9}"));
        for n in row {
            out.push_str(&format!("{n:>6}"));
        }
        let total: usize = row.iter().sum();
        let recall = 100.0 * row[t] as f64 / total.max(1) as f64;
        out.push_str(&format!("  {recall:>5.1}%\n"));
    }
    out
}

/// An image as `[rows * cols]` pixels in [0, 1] (white digit on black).
fn read_image(path: &Path, side: usize, invert: bool) -> Result<Vec<f32>, Failure> {
    let fail = |e: String| format!("{}: {e}", path.display());
    let img = image::ImageReader::open(path)
        .map_err(|e| fail(e.to_string()))?
        .with_guessed_format()
        .map_err(|e| fail(e.to_string()))?
        .decode()
        .map_err(|e| fail(e.to_string()))?;
    if (img.width() as usize, img.height() as usize) != (side, side) {
        return Err(fail(format!(
            "the image is {}x{}, the model takes {side}x{side} (resize it first; see `mnist \
             predict --help`)",
            img.width(),
            img.height()
        )));
    }
    Ok(img
        .to_luma8()
        .pixels()
        .map(|p| {
            let v = f32::from(p.0[0]) / 255.0;
            if invert { 1.0 - v } else { v }
        })
        .collect())
}

fn run_predict(args: PredictArgs) -> Result<(), Failure> {
    let checkpoint = Checkpoint::load(&args.model).map_err(|e| e.to_string())?;
    let side = (checkpoint.config.inputs as f64).sqrt().round() as usize;
    if side * side != checkpoint.config.inputs {
        return Err(format!(
            "{}: the model takes {} features, not a square image",
            args.model.display(),
            checkpoint.config.inputs
        ));
    }
    let mut pixels = Vec::new();
    for path in &args.images {
        pixels.extend(read_image(path, side, args.invert)?);
    }
    let gpu = gpu()?;
    let c = checkpoint;
    let mut model = load_model(&gpu, &c, args.images.len().min(EVAL_BATCH))?;
    let classes = c.config.classes;
    let probs = model
        .predict_proba(&gpu, &pixels)
        .map_err(|e| e.to_string())?;
    for (path, p) in args.images.iter().zip(probs.chunks(classes)) {
        let (best, &pb) = p
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .unwrap_or((0, &0.0));
        let all: Vec<String> = p
            .iter()
            .enumerate()
            .map(|(k, v)| format!("{k}:{v:.3}"))
            .collect();
        println!(
            "{}: {best} ({:.1}%)  [{}]",
            path.display(),
            100.0 * pb,
            all.join(" ")
        );
    }
    Ok(())
}
