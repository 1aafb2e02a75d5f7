//! `mnist`: train an MLP on MNIST (or Fashion-MNIST) on the GPU, evaluate it, classify images.
//! Every kernel it runs is written with wgsl-dsl.
//!
//! ```text
//! cargo run --release -p mlp --bin mnist -- train                 # 784-128-10, 5 epochs
//! cargo run --release -p mlp --bin mnist -- train --save m.safetensors --plot m.png
//! cargo run --release -p mlp --bin mnist -- eval --model m.safetensors
//! cargo run --release -p mlp --bin mnist -- predict --model m.safetensors digit.png
//! cargo run --release -p mlp --bin mnist -- export-web --model m.safetensors --out web  # a page
//! ```
//!
//! The command line goes through three stages: [`cli`] parses it (clap), [`plan`] resolves it
//! into one plan with every default filled in, and the `run_*` functions below carry the plan
//! out. The library reports training through events; [`report`] turns them into output. Every
//! failure is a [`CliError`], printed as one line `error: ...` to stderr with a non-zero exit
//! status (2 for a bad command line, 1 otherwise).

mod choices;
mod cli;
mod defaults;
mod error;
mod plan;
mod predict;
mod report;
mod web;

use std::ffi::OsString;
use std::path::Path;
use std::process::ExitCode;

use clap::Parser;
use clap::error::ErrorKind;
use mlp::checkpoint::{Checkpoint, CheckpointWarning, write_atomic};
use mlp::config::{MlpConfig, Precision};
use mlp::data::{CLASSES, Dataset, Mnist, Split};
use mlp::model::{GpuMlp, OptimizerConfig};
use mlp::params::Params;
use mlp::profile::profile_training;
use mlp::train::{Start, evaluate, train, upload};
use wgsl_dsl::runtime::Gpu;

use crate::cli::Cli;
use crate::error::{CliError, one_line};
use crate::plan::{DataPlan, EvalPlan, ModelPlan, Plan, PlotPlan, PredictPlan, TrainPlan};
use crate::report::{Report, done_line, say};

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    let help = help_command(&args);
    if let Some((option, next)) = cli::option_without_value(&args) {
        eprintln!(
            "error: a value is missing after --{option}: `{next}` is an option (see `{help}`)"
        );
        return ExitCode::from(2);
    }
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => return usage_error(&e, &help),
    };
    let result = Plan::resolve(cli).and_then(|plan| match plan {
        Plan::Train(plan) => run_train(plan),
        Plan::Eval(plan) => run_eval(plan),
        Plan::Predict(plan) => run_predict(plan),
        Plan::ExportWeb(args) => web::run(&args),
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", one_line(&e.to_string()));
            e.exit_code()
        }
    }
}

/// The help to point a usage error to: `mnist SUBCOMMAND --help` when the command line names a
/// subcommand ([`cli::subcommand`]), else `mnist --help`.
fn help_command(args: &[OsString]) -> String {
    let name = <Cli as clap::CommandFactory>::command()
        .get_name()
        .to_string();
    match cli::subcommand(args) {
        Some(sub) => format!("{name} {} --help", sub.get_name()),
        None => format!("{name} --help"),
    }
}

/// clap's error as one line ending with the help to read (help and version are printed whole
/// and succeed).
fn usage_error(e: &clap::Error, help: &str) -> ExitCode {
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            print!("{e}");
            ExitCode::SUCCESS
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand | ErrorKind::MissingSubcommand => {
            eprintln!(
                "error: a command is required: train, eval, predict or export-web (see `mnist --help`)"
            );
            ExitCode::from(2)
        }
        _ => {
            // clap's message is its first paragraph (a list of missing arguments is indented
            // under it); usage and tips follow a blank line.
            let text = e.render().to_string();
            let message = one_line(text.split("\n\n").next().unwrap_or("invalid arguments"));
            let message = message.strip_prefix("error: ").unwrap_or(&message);
            eprintln!("error: {message} (see `{help}`)");
            ExitCode::from(2)
        }
    }
}

/// The GPU, opened for training in `precision` (`f16` needs its cooperative matrices).
fn gpu(precision: Precision) -> Result<Gpu, CliError> {
    let gpu = Gpu::with_options(&GpuMlp::gpu_options(precision))?;
    eprintln!("GPU: {}", gpu.adapter_info().name);
    Ok(gpu)
}

/// The data of `plan`: truncated to its limits, and as many training images as a resumed
/// checkpoint was trained on, if it says.
fn load_data(plan: &DataPlan) -> Result<Mnist, CliError> {
    let mut data = Mnist::load(&plan.dir)?;
    if let Some(n) = plan.limit_train {
        data.train.truncate(n);
    }
    if let Some(n) = plan.limit_test {
        data.test.truncate(n);
    }
    if let Some(same) = &plan.same_train_images
        && data.train.len() != same.images
    {
        let have = match same.limit_given {
            Some(n) => format!(
                "--limit-train {n} gives {} (leave it out)",
                data.train.len()
            ),
            None => format!("{} has {}", plan.dir.display(), data.train.len()),
        };
        return Err(CliError::path(
            &same.checkpoint,
            format!(
                "the checkpoint was trained on the first {} training images, and a resumed run \
                 trains on the same ones: {have}",
                same.images
            ),
        ));
    }
    Ok(data)
}

/// Loads the checkpoint at `path`, printing its warnings.
fn load_checkpoint(path: &Path) -> Result<Checkpoint, CliError> {
    let (checkpoint, warnings) = Checkpoint::load_with_warnings(path)?;
    warn(&warnings);
    Ok(checkpoint)
}

/// Prints each warning as one line `warning: ...` on stderr.
fn warn(warnings: &[CheckpointWarning]) {
    for w in warnings {
        eprintln!("warning: {}", one_line(&w.to_string()));
    }
}

fn describe(config: &MlpConfig, optimizer: &OptimizerConfig, batch: usize) -> String {
    let mut sizes = vec![config.inputs];
    sizes.extend(&config.hidden);
    sizes.push(config.classes);
    let shape = sizes.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let opt = match optimizer {
        OptimizerConfig::Sgd { lr, momentum, .. } => {
            format!("SGD lr {} momentum {momentum}", report::number(*lr))
        }
        OptimizerConfig::Adam { lr, .. } => format!("Adam lr {}", report::number(*lr)),
    };
    format!(
        "model {} ({}), {opt}, batch {batch}",
        shape.join("-"),
        config.activation
    )
}

fn run_train(plan: TrainPlan) -> Result<(), CliError> {
    let TrainPlan {
        data: data_plan,
        model,
        settings,
        plot,
        profile,
    } = plan;
    let data = load_data(&data_plan)?;
    plan::check_batch_size(settings.batch_size, data.train.len())?;
    if let ModelPlan::Resume {
        path,
        checkpoint,
        warnings,
    } = &model
    {
        warn(warnings);
        eprintln!(
            "resuming {} after epoch {} (optimizer step {})",
            path.display(),
            checkpoint.epoch,
            checkpoint.optimizer_state.step
        );
    }
    let start = model.into_start(data.train.features())?;
    let (config, optimizer) = match &start {
        Start::Fresh { config, optimizer } => (config, optimizer),
        Start::Resume(c) => (&c.config, &c.optimizer),
    };
    eprintln!("{}", describe(config, optimizer, settings.batch_size));
    eprintln!(
        "data: {} ({} training, {} test images of {}x{})",
        data_plan.dir.display(),
        data.train.len(),
        data.test.len(),
        data.train.rows,
        data.train.cols
    );
    let gpu = gpu(settings.precision)?;
    let (largest, limit) = GpuMlp::largest_batch(&gpu, config);
    if settings.batch_size > largest {
        return Err(CliError::Usage(format!(
            "the batch size {} is more than this GPU takes for this model: at most {largest} \
             (its {limit}); pass --batch-size {largest} or less",
            settings.batch_size
        )));
    }
    if profile {
        let params = match &start {
            Start::Fresh { config, .. } => Params::init(config, settings.seed),
            Start::Resume(c) => c.params.clone(),
        };
        let profile = profile_training(
            &gpu,
            &data.train,
            config,
            &params,
            optimizer,
            settings.batch_size,
            settings.steps_per_chunk,
            settings.precision,
        )?;
        say(&profile.to_string());
    }
    let mut report = Report::default();
    let outcome = train(&gpu, &data, start, &settings, &mut report)?;
    drop(report);
    if let Some(line) = done_line(&outcome, settings.epochs, data.train.len()) {
        say(&line);
    }
    if let Some(path) = &settings.save {
        say(&format!("saved {}", path.display()));
    }
    if let Some(PlotPlan { path, format }) = &plot {
        let picture =
            mlp::plot::history_picture(&outcome.checkpoint.history, *format).map_err(|source| {
                CliError::Plot {
                    path: path.clone(),
                    source,
                }
            })?;
        write_atomic(path, &picture).map_err(|e| CliError::path(path, e))?;
        say(&format!("plot written to {}", path.display()));
    }
    Ok(())
}

fn load_model(gpu: &Gpu, c: &Checkpoint, max_batch: usize) -> Result<GpuMlp, CliError> {
    Ok(GpuMlp::new(
        gpu,
        &c.config,
        &c.params,
        &c.optimizer,
        None,
        max_batch,
    )?)
}

fn run_eval(plan: EvalPlan) -> Result<(), CliError> {
    let c = load_checkpoint(&plan.model)?;
    CliError::check_activation(&plan.model, c.config.activation, plan.activation)?;
    let mut test: Dataset = Mnist::load_split(&plan.data.dir, Split::Test)?;
    if let Some(n) = plan.data.limit_test {
        test.truncate(n);
    }
    let gpu = gpu(Precision::F32)?;
    let mut model = load_model(&gpu, &c, plan.batch)?;
    let set = upload(&gpu, &model, &test)?;
    let eval = evaluate(&gpu, &mut model, &set)?;
    say(&format!(
        "{}: epoch {}, test accuracy {:.2}% ({}/{}) on {}, mean loss {:.4}",
        plan.model.display(),
        c.epoch,
        100.0 * eval.accuracy(),
        eval.correct,
        eval.total,
        plan.data.dir.display(),
        eval.mean_loss
    ));
    say(confusion_matrix(&test.labels, &eval.predictions).trim_end());
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

fn run_predict(plan: PredictPlan) -> Result<(), CliError> {
    let c = load_checkpoint(&plan.model)?;
    CliError::check_activation(&plan.model, c.config.activation, plan.activation)?;
    let side = CliError::image_side(&plan.model, c.config.inputs)?;
    let mut pixels = Vec::new();
    for path in &plan.images {
        let (values, warning) = predict::read_image(path, side, plan.invert, plan.center)?;
        if let Some(w) = warning {
            eprintln!("warning: {w}");
        }
        pixels.extend(values);
    }
    let gpu = gpu(Precision::F32)?;
    let mut model = load_model(&gpu, &c, plan.images.len().min(plan.batch))?;
    let classes = c.config.classes;
    let probs = model.predict_proba(&gpu, &pixels)?;
    for (path, p) in plan.images.iter().zip(probs.chunks(classes)) {
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
        say(&format!(
            "{}: {best} ({:.1}%)  [{}]",
            path.display(),
            100.0 * pb,
            all.join(" ")
        ));
    }
    Ok(())
}
