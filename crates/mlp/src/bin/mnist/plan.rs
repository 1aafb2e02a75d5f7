//! The resolved plan ("high" arguments, as ripgrep's `hiargs`): the command line
//! ([`crate::cli`]) with every default filled in from [`defaults`], the checkpoint to resume
//! loaded, paths checked, and contradictions refused, before any work starts. Nothing after
//! this module reads the command line.

use std::path::{Path, PathBuf};

use mlp::activation::Activation;
use mlp::checkpoint::{Checkpoint, CheckpointWarning};
use mlp::config::MlpConfig;
use mlp::data::CLASSES;
use mlp::model::OptimizerConfig;
use mlp::plot::PlotFormat;
use mlp::schedule::{Decay, DecaySpec, ScheduleSpec};
use mlp::train::{Start, TrainSettings};

use crate::cli::{
    Center, Cli, Command, DataArgs, EvalArgs, Optimizer, PredictArgs, Schedule, TrainArgs,
};
use crate::defaults;
use crate::error::CliError;

/// What the binary will do.
#[derive(Debug)]
pub enum Plan {
    /// `mnist train`.
    Train(TrainPlan),
    /// `mnist eval`.
    Eval(EvalPlan),
    /// `mnist predict`.
    Predict(PredictPlan),
    /// `mnist export-web` (its arguments need no resolving).
    ExportWeb(crate::web::ExportWebArgs),
}

/// Which data, and how much of it.
#[derive(Debug)]
pub struct DataPlan {
    /// The directory with the four IDX files.
    pub dir: PathBuf,
    /// Keep only the first N training images (`--limit-train`, or a resumed checkpoint's).
    pub limit_train: Option<usize>,
    /// Keep only the first N test images.
    pub limit_test: Option<usize>,
    /// A resumed run's training images, which the data must give again.
    pub same_train_images: Option<SameTrainImages>,
}

/// A resumed run trains on the images its checkpoint was trained on: as many (the first N).
#[derive(Debug)]
pub struct SameTrainImages {
    /// The checkpoint.
    pub checkpoint: PathBuf,
    /// The number of training images it records.
    pub images: usize,
    /// `--limit-train`, when given.
    pub limit_given: Option<usize>,
}

/// The model training starts from.
#[derive(Debug)]
pub enum ModelPlan {
    /// A new model of these hidden widths (the input width comes from the data).
    Fresh {
        /// Hidden layer widths.
        hidden: Vec<usize>,
        /// Their activation.
        activation: Activation,
        /// The optimizer.
        optimizer: OptimizerConfig,
    },
    /// A checkpoint, with the optimizer's hyperparameters the command line overrides.
    Resume {
        /// Where it was read from.
        path: PathBuf,
        /// What was read.
        checkpoint: Box<Checkpoint>,
        /// What loading it has to tell the user.
        warnings: Vec<CheckpointWarning>,
    },
}

/// `mnist train`, resolved.
#[derive(Debug)]
pub struct TrainPlan {
    /// The data.
    pub data: DataPlan,
    /// Where training starts.
    pub model: ModelPlan,
    /// Epochs, batch, seed, chunk, checkpoint path.
    pub settings: TrainSettings,
    /// Where to draw the history, and in which format.
    pub plot: Option<PlotPlan>,
    /// Profile a chunk of training steps before training (`--profile`).
    pub profile: bool,
}

/// `--plot`, resolved: the format is the extension's.
#[derive(Debug)]
pub struct PlotPlan {
    /// The picture's path.
    pub path: PathBuf,
    /// Its format.
    pub format: PlotFormat,
}

impl PlotPlan {
    /// [`CliError::Usage`] unless `path`'s extension names a format [`PlotFormat`] writes.
    fn resolve(path: PathBuf) -> Result<PlotPlan, CliError> {
        let format = PlotFormat::from_path(&path).ok_or_else(|| {
            let found = match path.extension() {
                Some(ext) => format!("cannot write a `.{}` picture", ext.to_string_lossy()),
                None => "the file name has no extension".into(),
            };
            CliError::Usage(format!(
                "--plot {}: {found}; the extension names the format: {}",
                path.display(),
                PlotFormat::extensions_text()
            ))
        })?;
        Ok(PlotPlan { path, format })
    }
}

/// `mnist eval`, resolved.
#[derive(Debug)]
pub struct EvalPlan {
    /// The checkpoint to evaluate.
    pub model: PathBuf,
    /// `--activation`: the activation the checkpoint's model must use, if given.
    pub activation: Option<Activation>,
    /// The data (its test set).
    pub data: DataPlan,
    /// Examples per GPU batch.
    pub batch: usize,
}

/// `mnist predict`, resolved.
#[derive(Debug)]
pub struct PredictPlan {
    /// The checkpoint.
    pub model: PathBuf,
    /// `--activation`: the activation the checkpoint's model must use, if given.
    pub activation: Option<Activation>,
    /// Dark digits on a light background.
    pub invert: bool,
    /// `--center`.
    pub center: Center,
    /// The images, in order.
    pub images: Vec<PathBuf>,
    /// Images per GPU batch, at most.
    pub batch: usize,
}

impl Plan {
    /// Resolves the parsed command line.
    ///
    /// # Errors
    /// [`CliError::Usage`] for contradicting options; [`CliError::Path`] for a data directory
    /// that is not one, or an output that cannot be written; [`CliError::Checkpoint`] for a
    /// checkpoint to resume that cannot be read.
    pub fn resolve(cli: Cli) -> Result<Plan, CliError> {
        Ok(match cli.command {
            Command::Train(args) => Plan::Train(TrainPlan::resolve(args)?),
            Command::Eval(EvalArgs {
                model,
                activation,
                data,
            }) => Plan::Eval(EvalPlan {
                model,
                activation,
                data: DataPlan::resolve(&data, None)?,
                batch: defaults::EVAL_BATCH,
            }),
            Command::Predict(PredictArgs {
                model,
                activation,
                invert,
                center,
                images,
            }) => Plan::Predict(PredictPlan {
                model,
                activation,
                invert,
                center,
                images,
                batch: defaults::EVAL_BATCH,
            }),
            Command::ExportWeb(args) => Plan::ExportWeb(args),
        })
    }
}

impl DataPlan {
    fn resolve(args: &DataArgs, limit_train: Option<usize>) -> Result<DataPlan, CliError> {
        let dir = match &args.data {
            Some(dir) if dir.is_dir() => dir.clone(),
            Some(dir) => return Err(CliError::path(dir, "not a directory")),
            None => default_data_dir()?,
        };
        Ok(DataPlan {
            dir,
            limit_train,
            limit_test: args.limit_test,
            same_train_images: None,
        })
    }
}

/// The repository's `data/mnist`, found from the build's source directory or the current
/// directory.
fn default_data_dir() -> Result<PathBuf, CliError> {
    let candidates = [
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/mnist"),
        PathBuf::from("data/mnist"),
    ];
    candidates
        .iter()
        .find(|p| p.is_dir())
        .map(|p| p.canonicalize().unwrap_or_else(|_| p.clone()))
        .ok_or_else(|| {
            CliError::Usage(format!(
                "no MNIST directory found (looked for {} and {}); pass --data DIR",
                candidates[0].display(),
                candidates[1].display()
            ))
        })
}

/// Fails early (before training) if `path` cannot be written: its directory must exist.
fn check_writable(path: &Path, what: &str) -> Result<(), CliError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if path.is_dir() {
        return Err(CliError::path(
            path,
            format!("is a directory, not a {what} file"),
        ));
    }
    tempfile::tempfile_in(dir)
        .map(drop)
        .map_err(|e| CliError::path(path, format!("cannot write the {what} there: {e}")))
}

fn momentum_is_sgd_only() -> CliError {
    CliError::Usage("--momentum applies to SGD only (Adam uses beta1 = 0.9)".into())
}

impl TrainPlan {
    fn resolve(args: TrainArgs) -> Result<TrainPlan, CliError> {
        for (path, what) in [(&args.save, "checkpoint"), (&args.plot, "plot")] {
            if let Some(p) = path {
                check_writable(p, what)?;
            }
        }
        let plot = args.plot.clone().map(PlotPlan::resolve).transpose()?;
        let mut data = DataPlan::resolve(&args.data, args.limit_train)?;
        let (model, batch_size, seed, schedule) = match &args.resume {
            Some(_) if schedule_given(&args) => {
                return Err(CliError::Usage(
                    "--schedule, --warmup-epochs, --step-epochs and --step-gamma cannot be \
                     given with --resume: the checkpoint's schedule continues (a cosine \
                     extended to end with the resumed run); --lr changes its base rate"
                        .into(),
                ));
            }
            Some(path) => {
                let (checkpoint, warnings) = Checkpoint::load_with_warnings(path)?;
                let batch = args.batch_size.unwrap_or(checkpoint.batch_size);
                let seed = args.seed.unwrap_or(checkpoint.seed);
                // Checkpoints written before `train_images` was recorded train on what
                // --limit-train says, as they did.
                if let Some(images) = checkpoint.train_images {
                    data.limit_train = Some(args.limit_train.unwrap_or(images));
                    data.same_train_images = Some(SameTrainImages {
                        checkpoint: path.clone(),
                        images,
                        limit_given: args.limit_train,
                    });
                }
                let model = resume(&args, path, checkpoint, warnings)?;
                (model, batch, seed, None)
            }
            None => (
                fresh(&args)?,
                args.batch_size.unwrap_or(defaults::BATCH_SIZE),
                args.seed.unwrap_or(defaults::SEED),
                Some(schedule(&args)?),
            ),
        };
        if let Some(n) = data.limit_train {
            check_batch_size(batch_size, n)?;
        }
        Ok(TrainPlan {
            data,
            model,
            settings: TrainSettings {
                epochs: args.epochs,
                batch_size,
                seed,
                steps_per_chunk: args.steps_per_chunk,
                pipeline: !args.no_pipeline,
                save: args.save,
                schedule,
                precision: args.precision,
            },
            plot,
            profile: args.profile,
        })
    }
}

/// The batch size against the training set's `images`: a batch larger than the training set
/// is refused (it would be silently cut to the set).
///
/// # Errors
/// [`CliError::Usage`] saying both.
pub fn check_batch_size(batch: usize, images: usize) -> Result<(), CliError> {
    if batch > images {
        return Err(CliError::Usage(format!(
            "the batch size {batch} is larger than the training set ({images} images): pass \
             --batch-size {images} or less"
        )));
    }
    Ok(())
}

fn schedule_given(args: &TrainArgs) -> bool {
    args.schedule.is_some()
        || args.warmup_epochs.is_some()
        || args.step_epochs.is_some()
        || args.step_gamma.is_some()
}

/// The schedule of a fresh run, from `--schedule` and its options.
fn schedule(args: &TrainArgs) -> Result<ScheduleSpec, CliError> {
    let kind = args.schedule.unwrap_or(defaults::SCHEDULE);
    if kind != Schedule::Step && (args.step_epochs.is_some() || args.step_gamma.is_some()) {
        return Err(CliError::Usage(
            "--step-epochs and --step-gamma apply to --schedule step only".into(),
        ));
    }
    let decay = match kind {
        Schedule::Constant => DecaySpec::Constant,
        Schedule::Cosine => DecaySpec::Cosine { final_factor: 0.0 },
        Schedule::Step => DecaySpec::Step {
            every_epochs: args.step_epochs.unwrap_or(defaults::STEP_EPOCHS),
            gamma: args.step_gamma.unwrap_or(defaults::STEP_GAMMA),
        },
    };
    let warmup_epochs = args.warmup_epochs.unwrap_or(defaults::WARMUP_EPOCHS);
    if warmup_epochs > args.epochs as f64 {
        return Err(CliError::Usage(format!(
            "--warmup-epochs {warmup_epochs} is longer than the run ({} epochs)",
            args.epochs
        )));
    }
    Ok(ScheduleSpec {
        warmup_epochs,
        decay,
    })
}

fn fresh(args: &TrainArgs) -> Result<ModelPlan, CliError> {
    let optimizer = match args.optimizer.unwrap_or(Optimizer::Sgd) {
        Optimizer::Sgd => OptimizerConfig::Sgd {
            lr: args.lr.unwrap_or(defaults::SGD_LR),
            momentum: args.momentum.unwrap_or(defaults::MOMENTUM),
            weight_decay: 0.0,
        },
        Optimizer::Adam if args.momentum.is_some() => return Err(momentum_is_sgd_only()),
        Optimizer::Adam => {
            let (beta1, beta2, eps) = defaults::ADAM_BETAS_EPS;
            OptimizerConfig::Adam {
                lr: args.lr.unwrap_or(defaults::ADAM_LR),
                beta1,
                beta2,
                eps,
            }
        }
    };
    Ok(ModelPlan::Fresh {
        hidden: args
            .hidden
            .clone()
            .unwrap_or_else(|| defaults::HIDDEN.to_vec()),
        activation: args.activation.unwrap_or(defaults::ACTIVATION),
        optimizer,
    })
}

/// Continue from `c`: the model's shape, activation and optimizer kind are the checkpoint's
/// (asking for others is an error: [`CliError::ActivationMismatch`] for the activation); the
/// learning rate, momentum, batch size and seed may be changed (the training images may not:
/// [`SameTrainImages`]). The schedule continues; a cosine is extended to end with the resumed
/// run (the trainer's `LrSchedule::extended_to`), so even one that has ended trains again. A
/// step decay that has brought the rate to 0 is refused: resuming it would not change the
/// model.
fn resume(
    args: &TrainArgs,
    path: &Path,
    mut c: Checkpoint,
    warnings: Vec<CheckpointWarning>,
) -> Result<ModelPlan, CliError> {
    if let Some(h) = args.hidden.as_ref().filter(|h| **h != c.config.hidden) {
        return Err(CliError::path(
            path,
            format!(
                "the checkpoint has hidden layers {:?}, --hidden asks for {h:?}",
                c.config.hidden
            ),
        ));
    }
    CliError::check_activation(path, c.config.activation, args.activation)?;
    let kind = match c.optimizer {
        OptimizerConfig::Sgd { .. } => Optimizer::Sgd,
        OptimizerConfig::Adam { .. } => Optimizer::Adam,
    };
    if args.optimizer.is_some_and(|o| o != kind) {
        return Err(CliError::path(
            path,
            format!(
                "the checkpoint was trained with --optimizer {}; its optimizer state cannot \
                 continue another optimizer",
                kind.name()
            ),
        ));
    }
    // A cosine extends to the resumed run's end (`LrSchedule::extended_to`): its rate is 0
    // only at its end, which the run no longer reaches. A step decay reaches 0 only by f64
    // underflow, after hundreds of decays.
    let taken = c.optimizer_state.step;
    if c.schedule.factor(taken) == 0.0 && !matches!(c.schedule.decay, Decay::Cosine { .. }) {
        return Err(CliError::path(
            path,
            format!(
                "the checkpoint's learning-rate schedule has decayed the rate to 0 (step \
                 {taken}): resuming would not change the model; to continue a run later, train \
                 it with a slower --step-gamma or --step-epochs"
            ),
        ));
    }
    match &mut c.optimizer {
        OptimizerConfig::Sgd { lr, momentum, .. } => {
            *lr = args.lr.unwrap_or(*lr);
            *momentum = args.momentum.unwrap_or(*momentum);
        }
        OptimizerConfig::Adam { .. } if args.momentum.is_some() => {
            return Err(momentum_is_sgd_only());
        }
        OptimizerConfig::Adam { lr, .. } => *lr = args.lr.unwrap_or(*lr),
    }
    Ok(ModelPlan::Resume {
        path: path.to_path_buf(),
        checkpoint: Box::new(c),
        warnings,
    })
}

impl ModelPlan {
    /// The trainer's [`Start`] for images of `inputs` features.
    ///
    /// # Errors
    /// [`CliError::Usage`] for a fresh model that cannot exist (too large).
    pub fn into_start(self, inputs: usize) -> Result<Start, CliError> {
        Ok(match self {
            ModelPlan::Fresh {
                hidden,
                activation,
                optimizer,
            } => {
                let config = MlpConfig {
                    inputs,
                    hidden,
                    classes: CLASSES,
                    activation,
                };
                config
                    .validate()
                    .map_err(|e| CliError::Usage(e.to_string()))?;
                Start::Fresh { config, optimizer }
            }
            ModelPlan::Resume { checkpoint, .. } => Start::Resume(checkpoint),
        })
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use mlp::model::OptimizerState;

    use super::*;

    fn plan(args: &[&str]) -> Result<TrainPlan, CliError> {
        let cli = Cli::try_parse_from(["mnist", "train"].iter().chain(args)).unwrap();
        match Plan::resolve(cli)? {
            Plan::Train(t) => Ok(t),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn defaults_fill_what_the_command_line_leaves_out() {
        let p = plan(&[]).unwrap();
        assert_eq!(p.settings.epochs, defaults::EPOCHS);
        assert_eq!(p.settings.batch_size, defaults::BATCH_SIZE);
        assert_eq!(p.settings.seed, defaults::SEED);
        assert_eq!(p.settings.steps_per_chunk, defaults::STEPS_PER_CHUNK);
        assert!(p.settings.pipeline);
        assert!(!plan(&["--no-pipeline"]).unwrap().settings.pipeline);
        match p.model {
            ModelPlan::Fresh {
                hidden,
                activation,
                optimizer,
            } => {
                assert_eq!(hidden, defaults::HIDDEN);
                assert_eq!(activation, defaults::ACTIVATION);
                assert_eq!(
                    optimizer,
                    OptimizerConfig::Sgd {
                        lr: defaults::SGD_LR,
                        momentum: defaults::MOMENTUM,
                        weight_decay: 0.0
                    }
                );
            }
            other => panic!("{other:?}"),
        }
        let adam = plan(&["--optimizer", "adam"]).unwrap();
        assert!(matches!(
            adam.model,
            ModelPlan::Fresh { optimizer: OptimizerConfig::Adam { lr, .. }, .. }
                if lr == defaults::ADAM_LR
        ));
        let err = plan(&["--optimizer", "adam", "--momentum", "0.5"]).unwrap_err();
        assert!(matches!(err, CliError::Usage(_)), "{err}");
    }

    /// A checkpoint whose cosine has reached 0 resumes (the trainer extends the cosine to the
    /// resumed run's end), as one a step before its end does; one whose step decay has brought
    /// the rate to 0 is refused before any training (resuming it would spend epochs without
    /// changing the model), and so is `--schedule` with `--resume`, with the reason.
    #[test]
    fn resuming_a_cosine_works_and_a_rate_of_0_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let config = MlpConfig {
            inputs: 784,
            hidden: vec![3],
            classes: CLASSES,
            ..MlpConfig::default()
        };
        let params = mlp::params::Params::init(&config, 0);
        let sgd = OptimizerConfig::Sgd {
            lr: 0.1,
            momentum: 0.9,
            weight_decay: 0.0,
        };
        let cosine = Decay::Cosine {
            steps: 10,
            final_factor: 0.0,
        };
        let underflowing = Decay::Step {
            every: 1,
            gamma: 1e-30,
        };
        for (step, decay, refused) in [
            (9, cosine, false),
            (10, cosine, false),
            (40, underflowing, true),
        ] {
            let c = Checkpoint {
                config: config.clone(),
                params: params.clone(),
                optimizer: sgd.clone(),
                optimizer_state: OptimizerState {
                    step,
                    ..OptimizerState::zeroed(&sgd, &params)
                },
                schedule: mlp::schedule::LrSchedule {
                    warmup_steps: 0,
                    decay,
                },
                epoch: 1,
                batch_size: 64,
                seed: 0,
                history: Vec::new(),
                train_images: None,
            };
            let path = dir.path().join(format!("step{step}.safetensors"));
            c.save(&path).unwrap();
            let p = path.to_str().unwrap();
            match (refused, plan(&["--resume", p])) {
                (false, Ok(_)) => {}
                (true, Err(CliError::Path { reason, .. })) => {
                    assert!(
                        reason.contains("decayed the rate to 0 (step 40)"),
                        "{reason}"
                    );
                }
                (_, other) => panic!("step {step}: {other:?}"),
            }
            match plan(&["--resume", p, "--schedule", "constant"]) {
                Err(CliError::Usage(m)) => {
                    assert!(
                        m.contains("cannot be given with --resume") && m.contains("extended"),
                        "{m}"
                    );
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn schedules_resolve_and_contradictions_are_refused() {
        let default = plan(&[]).unwrap().settings.schedule.unwrap();
        assert_eq!(default.warmup_epochs, defaults::WARMUP_EPOCHS);
        let step = plan(&[
            "--schedule",
            "step",
            "--step-gamma",
            "0.5",
            "--warmup-epochs",
            "1",
        ])
        .unwrap()
        .settings
        .schedule
        .unwrap();
        assert_eq!(
            step,
            ScheduleSpec {
                warmup_epochs: 1.0,
                decay: DecaySpec::Step {
                    every_epochs: defaults::STEP_EPOCHS,
                    gamma: 0.5
                }
            }
        );
        let constant = plan(&["--schedule", "constant"]).unwrap();
        assert_eq!(
            constant.settings.schedule.unwrap().decay,
            DecaySpec::Constant
        );
        for bad in [
            &["--schedule", "cosine", "--step-epochs", "1"][..],
            &["--warmup-epochs", "9", "--epochs", "3"],
        ] {
            let err = plan(bad).unwrap_err();
            assert!(matches!(err, CliError::Usage(_)), "{bad:?}: {err}");
        }
        let cli = Cli::try_parse_from(["mnist", "train", "--step-gamma", "1.5"]);
        assert!(cli.is_err());
    }

    #[test]
    fn help_shows_the_defaults() {
        let help = <Cli as clap::CommandFactory>::command()
            .find_subcommand_mut("train")
            .unwrap()
            .render_long_help()
            .to_string();
        for needle in [
            format!("[default: {}]", defaults::EPOCHS),
            format!("[default: {};", defaults::BATCH_SIZE),
            format!(
                "{} for SGD, {} for Adam",
                defaults::SGD_LR,
                defaults::ADAM_LR
            ),
            format!("[default: {}]", defaults::STEPS_PER_CHUNK),
            format!("[default: {};", defaults::SCHEDULE.name()),
        ] {
            assert!(help.contains(&needle), "`{needle}` not in {help}");
        }
    }
}
