//! The training loop: the data set on the GPU once, each epoch shuffled and recorded as GPU work
//! in chunks of steps, the host reading the losses back once per chunk.
//!
//! # One epoch
//! 1. A permutation of the training samples is drawn with ChaCha8 seeded from `(seed, epoch)`
//!    (so a resumed run shuffles exactly as an uninterrupted one) and written to a
//!    `GpuBuffer<u32>`.
//! 2. The epoch's `ceil(len / batch_size)` steps are recorded `steps_per_chunk` at a time into one
//!    [`Recorder`](wgsl_dsl::runtime::Recorder) and submitted; no host round trip between steps.
//! 3. After each chunk the host reads that chunk's per-step losses (the progress bar's loss and
//!    samples/s); the epoch's training loss is the mean of its steps' mean cross-entropy losses.
//! 4. The test set is evaluated on the GPU (argmax and correct count), and, with a save path,
//!    a [`Checkpoint`] is written atomically.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use wgsl_dsl::runtime::{Gpu, GpuBuffer};

use crate::checkpoint::{Checkpoint, CheckpointError, EpochRecord};
use crate::config::MlpConfig;
use crate::data::{Dataset, Mnist};
use crate::error::MlpError;
use crate::model::{Evaluation, GpuDataset, GpuMlp, OptimizerConfig};
use crate::params::Params;

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
}

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

/// How to train.
#[derive(Clone, Debug)]
pub struct TrainSettings {
    /// Epochs to train in this run (after those already in a resumed checkpoint).
    pub epochs: usize,
    /// Samples per step (the last step of an epoch may have fewer).
    pub batch_size: usize,
    /// Seed of initialisation and shuffling.
    pub seed: u64,
    /// Steps recorded into one submit; the losses are read back once per chunk.
    pub steps_per_chunk: usize,
    /// Show a progress bar and print one line per epoch and a summary (to stderr/stdout).
    pub verbose: bool,
    /// Write a checkpoint here after every epoch.
    pub save: Option<PathBuf>,
}

impl Default for TrainSettings {
    /// 5 epochs of batches of 64, seed 0, 40 steps per chunk, quiet, no checkpoint.
    fn default() -> Self {
        TrainSettings {
            epochs: 5,
            batch_size: 64,
            seed: 0,
            steps_per_chunk: 40,
            verbose: false,
            save: None,
        }
    }
}

/// What a training run produced.
#[derive(Debug)]
pub struct Outcome {
    /// The final model, optimizer state and full history (resumed epochs included).
    pub checkpoint: Checkpoint,
    /// The test accuracy after the last epoch, in `[0, 1]` (`None` when no epoch ran).
    pub test_accuracy: Option<f64>,
    /// Wall-clock time of this run's epochs (training and evaluation).
    pub elapsed: Duration,
    /// Training samples per second over this run (training steps only).
    pub samples_per_second: f64,
}

/// The epoch's shuffle: ChaCha8 seeded from `seed` and the epoch (from 1).
pub fn epoch_order(len: usize, seed: u64, epoch: usize) -> Vec<u32> {
    let mix = seed ^ (epoch as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut rng = ChaCha8Rng::seed_from_u64(mix);
    let mut order: Vec<u32> = (0..len as u32).collect();
    order.shuffle(&mut rng);
    order
}

/// Samples per shard: as many images (`f32`) as one storage buffer binding of this device holds
/// (`max_storage_buffer_binding_size`, 128 MiB on lavapipe: 42,799 MNIST images).
pub fn shard_len(gpu: &Gpu, inputs: usize) -> usize {
    let limit = gpu.limits().max_storage_buffer_binding_size as usize;
    (limit / (size_of::<f32>() * inputs.max(1))).max(1)
}

/// Uploads a host data set to the model's GPU, once, in as few shards as the device's storage
/// buffer binding size allows ([`shard_len`]): one for the MNIST test set, two for its training
/// set on lavapipe.
///
/// # Errors
/// [`TrainError::InputSize`] if the images do not have the model's input size; [`MlpError`].
pub fn upload(gpu: &Gpu, model: &GpuMlp, data: &Dataset) -> Result<Vec<GpuDataset>, TrainError> {
    let inputs = model.config().inputs;
    if data.features() != inputs {
        return Err(TrainError::InputSize {
            model: inputs,
            data: data.features(),
        });
    }
    let per = shard_len(gpu, inputs);
    data.labels
        .chunks(per)
        .zip(data.images.chunks(per * inputs))
        .map(|(labels, images)| Ok(model.upload_dataset(gpu, images, labels)?))
        .collect()
}

/// Evaluates the model on every shard and merges the results (predictions in data set order).
///
/// # Errors
/// [`MlpError`].
pub fn evaluate(
    gpu: &Gpu,
    model: &mut GpuMlp,
    shards: &[GpuDataset],
) -> Result<Evaluation, TrainError> {
    let mut all = Evaluation {
        correct: 0,
        total: 0,
        predictions: Vec::new(),
        mean_loss: 0.0,
    };
    let mut loss_sum = 0.0f64;
    for shard in shards {
        let e = model.evaluate(gpu, shard)?;
        all.correct += e.correct;
        all.total += e.total;
        all.predictions.extend(e.predictions);
        loss_sum += f64::from(e.mean_loss) * e.total as f64;
    }
    all.mean_loss = (loss_sum / all.total.max(1) as f64) as f32;
    Ok(all)
}

/// The epoch's chunks: `(shard, steps)`, the shards' chunks interleaved round-robin.
fn schedule(shard_steps: &[usize], per_chunk: usize) -> Vec<(usize, Range<usize>)> {
    let mut out = Vec::new();
    let mut next = vec![0; shard_steps.len()];
    while out.len() < shard_steps.iter().map(|s| s.div_ceil(per_chunk)).sum() {
        for (k, &steps) in shard_steps.iter().enumerate() {
            if next[k] < steps {
                let end = (next[k] + per_chunk).min(steps);
                out.push((k, next[k]..end));
                next[k] = end;
            }
        }
    }
    out
}

/// Trains on `data.train`, evaluating on `data.test` after every epoch.
///
/// When the training images exceed one storage buffer binding they are split into shards
/// ([`upload`]); each shard is shuffled on its own and the shards' chunks alternate, so a batch
/// never mixes shards. With one shard (any device for the MNIST test set; devices with
/// bindings of 188 MB or more for its training set) the shuffle is global.
///
/// # Errors
/// [`TrainError::Settings`] (zero batch size or chunk), [`TrainError::InputSize`],
/// [`TrainError::Diverged`], [`TrainError::Model`], [`TrainError::Checkpoint`].
pub fn train(
    gpu: &Gpu,
    data: &Mnist,
    start: Start,
    settings: &TrainSettings,
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
    let batch = settings.batch_size.min(data.train.len());
    let mut model = GpuMlp::new(gpu, &config, &params, &optimizer, state.as_ref(), batch)?;
    let train_shards = upload(gpu, &model, &data.train)?;
    let test_shards = upload(gpu, &model, &data.test)?;
    let n = data.train.len();
    let orders = train_shards
        .iter()
        .map(|s| GpuBuffer::<u32>::zeroed(gpu, s.len()).map_err(MlpError::from))
        .collect::<Result<Vec<_>, _>>()?;
    let shard_steps: Vec<usize> = train_shards
        .iter()
        .map(|s| s.len().div_ceil(batch))
        .collect();
    let steps: usize = shard_steps.iter().sum();
    let last_epoch = first_epoch + settings.epochs - 1;

    let started = Instant::now();
    let mut train_time = Duration::ZERO;
    let mut test_accuracy = None;
    for epoch in first_epoch..=last_epoch {
        let epoch_start = Instant::now();
        for (k, (order, shard)) in orders.iter().zip(&train_shards).enumerate() {
            let seed = settings.seed.wrapping_add(k as u64);
            order
                .write(gpu, &epoch_order(shard.len(), seed, epoch))
                .map_err(MlpError::from)?;
        }
        let bar = progress_bar(settings.verbose, n, epoch, last_epoch);
        let mut loss_sum = 0.0f64;
        let (mut steps_done, mut samples_done) = (0, 0);
        for (k, chunk) in schedule(&shard_steps, settings.steps_per_chunk) {
            let shard = &train_shards[k];
            let mut rec = gpu.recorder();
            model.record_train_steps(gpu, &mut rec, shard, &orders[k], batch, chunk.clone())?;
            rec.submit().map_err(MlpError::from)?;
            let losses = model.read_losses(gpu, chunk.len())?;
            if let Some((i, &loss)) = losses.iter().enumerate().find(|(_, l)| !l.is_finite()) {
                bar.abandon();
                return Err(TrainError::Diverged {
                    epoch,
                    step: steps_done + i,
                    loss,
                });
            }
            loss_sum += losses.iter().map(|&l| f64::from(l)).sum::<f64>();
            steps_done += chunk.len();
            samples_done += (chunk.end * batch).min(shard.len()) - chunk.start * batch;
            let chunk_loss = losses.iter().sum::<f32>() / losses.len() as f32;
            bar.set_position(samples_done as u64);
            bar.set_message(format!("{chunk_loss:.4}"));
        }
        let epoch_train = epoch_start.elapsed();
        train_time += epoch_train;
        bar.finish_and_clear();
        let eval = evaluate(gpu, &mut model, &test_shards)?;
        let accuracy = eval.accuracy();
        test_accuracy = Some(accuracy);
        let record = EpochRecord {
            epoch,
            train_loss: (loss_sum / steps as f64) as f32,
            test_accuracy: accuracy,
            seconds: epoch_start.elapsed().as_secs_f64(),
        };
        if settings.verbose {
            say(format_args!(
                "epoch {epoch}/{last_epoch}: train loss {:.4}, test accuracy {:.2}% ({}/{}), \
                 {:.1} s ({:.0} samples/s)",
                record.train_loss,
                100.0 * accuracy,
                eval.correct,
                eval.total,
                record.seconds,
                n as f64 / epoch_train.as_secs_f64()
            ));
        }
        history.push(record);
        if let Some(path) = &settings.save {
            snapshot(gpu, &model, &optimizer, epoch, settings, &history)?.save(path)?;
        }
    }
    let checkpoint = snapshot(gpu, &model, &optimizer, last_epoch, settings, &history)?;
    let elapsed = started.elapsed();
    let samples_per_second = (n * settings.epochs) as f64 / train_time.as_secs_f64().max(1e-9);
    if let (true, Some(acc)) = (settings.verbose, test_accuracy) {
        say(format_args!(
            "done: {} epochs ({first_epoch} to {last_epoch}) of {n} samples in {:.1} s \
             ({samples_per_second:.0} samples/s), final test accuracy {:.2}%",
            settings.epochs,
            elapsed.as_secs_f64(),
            100.0 * acc
        ));
    }
    Ok(Outcome {
        checkpoint,
        test_accuracy,
        elapsed,
        samples_per_second,
    })
}

/// Prints a line to stdout; a closed stdout (e.g. `| head`) is not an error worth a panic.
fn say(line: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let _ = writeln!(std::io::stdout().lock(), "{line}");
}

/// Reads the model back into a checkpoint after `epoch`.
fn snapshot(
    gpu: &Gpu,
    model: &GpuMlp,
    optimizer: &OptimizerConfig,
    epoch: usize,
    settings: &TrainSettings,
    history: &[EpochRecord],
) -> Result<Checkpoint, TrainError> {
    Ok(Checkpoint {
        config: model.config().clone(),
        params: model.params(gpu)?,
        optimizer: optimizer.clone(),
        optimizer_state: model.optimizer_state(gpu)?,
        epoch,
        batch_size: settings.batch_size,
        seed: settings.seed,
        history: history.to_vec(),
    })
}

fn progress_bar(verbose: bool, samples: usize, epoch: usize, last: usize) -> ProgressBar {
    if !verbose {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(samples as u64);
    let style = ProgressStyle::with_template(
        "epoch {prefix} [{bar:30}] {pos}/{len} loss {msg} {per_sec} eta {eta}",
    )
    .map(|s| s.progress_chars("=> "))
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar.set_prefix(format!("{epoch}/{last}"));
    bar
}

/// Writes a PNG of the training loss and the test accuracy per epoch to `path` (atomically).
///
/// Text (title, axis labels) is drawn with a TrueType font read from a common system location
/// (DejaVu Sans, Liberation Sans; `fonts-dejavu-core` on Debian) through plotters' `ab_glyph`
/// backend, so the binary does not link fontconfig; when none can be loaded the chart is drawn
/// without text, so a machine without fonts still gets the curves.
///
/// # Errors
/// A message naming the file: an empty history, a drawing or PNG encoding failure, or the
/// error writing the file.
pub fn plot_history(history: &[EpochRecord], path: &Path) -> Result<(), String> {
    let fail = |e: String| format!("{}: cannot write the plot: {e}", path.display());
    if history.is_empty() {
        return Err(fail("no epoch to plot".into()));
    }
    let (w, h) = (960u32, 480u32);
    let mut pixels = vec![255u8; (w * h * 3) as usize];
    let text = plot::register_system_font();
    if !text || plot::draw(history, &mut pixels, (w, h), true).is_err() {
        pixels.fill(255);
        plot::draw(history, &mut pixels, (w, h), false).map_err(fail)?;
    }
    let mut png = Vec::new();
    image::ImageEncoder::write_image(
        image::codecs::png::PngEncoder::new(&mut png),
        &pixels,
        w,
        h,
        image::ExtendedColorType::Rgb8,
    )
    .map_err(|e| fail(e.to_string()))?;
    crate::checkpoint::write_atomic(path, &png).map_err(|e| fail(e.to_string()))
}

mod plot {
    use std::sync::OnceLock;

    use plotters::prelude::*;

    const FONT_PATHS: &[&str] = &[
        "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
        "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
        "/usr/share/fonts/TTF/DejaVuSans.ttf",
        "/usr/share/fonts/dejavu/DejaVuSans.ttf",
        "/Library/Fonts/Arial.ttf",
        "C:\\Windows\\Fonts\\arial.ttf",
    ];

    /// Registers the first readable font of [`FONT_PATHS`] as plotters' "sans-serif", once.
    /// Returns whether text can be drawn.
    pub(super) fn register_system_font() -> bool {
        static REGISTERED: OnceLock<bool> = OnceLock::new();
        *REGISTERED.get_or_init(|| {
            FONT_PATHS.iter().any(|path| {
                std::fs::read(path).is_ok_and(|bytes| {
                    // plotters keeps registered fonts for the whole process.
                    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                    plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok()
                })
            })
        })
    }

    use crate::checkpoint::EpochRecord;

    /// Draws two panels (loss, accuracy) into an RGB buffer; `text` draws captions and labels.
    pub(super) fn draw(
        history: &[EpochRecord],
        pixels: &mut [u8],
        (w, h): (u32, u32),
        text: bool,
    ) -> Result<(), String> {
        let root = BitMapBackend::with_buffer(pixels, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let (left, right) = root.split_horizontally(w / 2);
        let first = history.first().map_or(1, |r| r.epoch) as f64;
        let last = history.last().map_or(1, |r| r.epoch) as f64;
        let x = (first - 0.5)..(last + 0.5);
        let max_loss = history.iter().map(|r| r.train_loss).fold(0.0f32, f32::max) as f64;
        let min_acc = history.iter().map(|r| r.test_accuracy).fold(1.0, f64::min);
        let panels = [
            (
                left,
                "training loss (cross-entropy)",
                0.0..max_loss * 1.1 + 1e-6,
                history
                    .iter()
                    .map(|r| (r.epoch as f64, f64::from(r.train_loss)))
                    .collect::<Vec<_>>(),
                RED,
            ),
            (
                right,
                "test accuracy (%)",
                (100.0 * min_acc - 1.0).max(0.0)..100.0,
                history
                    .iter()
                    .map(|r| (r.epoch as f64, 100.0 * r.test_accuracy))
                    .collect(),
                BLUE,
            ),
        ];
        for (area, title, y, points, color) in panels {
            let mut builder = ChartBuilder::on(&area);
            builder.margin(20);
            if text {
                builder
                    .caption(title, ("sans-serif", 20))
                    .x_label_area_size(35)
                    .y_label_area_size(55);
            }
            let mut chart = builder
                .build_cartesian_2d(x.clone(), y.clone())
                .map_err(|e| e.to_string())?;
            if !text {
                // A frame instead of the axes, whose tick labels need a font.
                let frame = [(x.start, y.start), (x.end, y.end)];
                chart
                    .draw_series([Rectangle::new(frame, BLACK.stroke_width(1))])
                    .map_err(|e| e.to_string())?;
            }
            let mut mesh = chart.configure_mesh();
            if text {
                mesh.x_desc("epoch")
                    .x_labels(history.len().min(20) + 2)
                    .x_label_formatter(&|v| {
                        if (v - v.round()).abs() < 1e-6 {
                            format!("{v:.0}")
                        } else {
                            String::new()
                        }
                    });
            } else {
                mesh.disable_x_mesh().disable_y_mesh();
            }
            mesh.draw().map_err(|e| e.to_string())?;
            chart
                .draw_series(LineSeries::new(
                    points.iter().copied(),
                    color.stroke_width(2),
                ))
                .map_err(|e| e.to_string())?;
            chart
                .draw_series(points.iter().map(|&p| Circle::new(p, 4, color.filled())))
                .map_err(|e| e.to_string())?;
        }
        root.present().map_err(|e| e.to_string())?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn history() -> Vec<EpochRecord> {
        (1..=4)
            .map(|e| EpochRecord {
                epoch: e,
                train_loss: 1.0 / e as f32,
                test_accuracy: 0.9 + 0.02 * e as f64,
                seconds: 1.5,
            })
            .collect()
    }

    #[test]
    fn plot_is_a_png_with_curves_in_both_modes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plot.png");
        plot_history(&history(), &path).unwrap();
        let img = image::open(&path).unwrap().to_rgb8();
        assert_eq!(img.dimensions(), (960, 480));
        let red = img.pixels().filter(|p| p.0 == [255, 0, 0]).count();
        let blue = img.pixels().filter(|p| p.0 == [0, 0, 255]).count();
        assert!(red > 100 && blue > 100, "red {red}, blue {blue}");
        // Without text (no fonts needed): still the curves.
        let (w, h) = (960u32, 480u32);
        let mut pixels = vec![255u8; (w * h * 3) as usize];
        plot::draw(&history(), &mut pixels, (w, h), false).unwrap();
        let red = pixels.chunks(3).filter(|p| p == &[255, 0, 0]).count();
        assert!(red > 100, "red {red}");
        img.save(std::env::temp_dir().join("mlp_plot_check.png"))
            .unwrap();
    }

    #[test]
    fn schedule_covers_every_step_once_interleaving_shards() {
        let s = schedule(&[7, 3], 3);
        assert_eq!(s, vec![(0, 0..3), (1, 0..3), (0, 3..6), (0, 6..7)]);
        let one = schedule(&[938], 40);
        assert_eq!(one.len(), 24);
        assert!(one.windows(2).all(|w| w[0].1.end == w[1].1.start));
        assert_eq!(one.last(), Some(&(0, 920..938)));
    }

    #[test]
    fn epoch_order_is_a_seeded_permutation() {
        let a = epoch_order(61, 3, 1);
        let mut sorted = a.clone();
        sorted.sort();
        assert_eq!(sorted, (0..61).collect::<Vec<u32>>());
        assert_eq!(a, epoch_order(61, 3, 1));
        assert_ne!(a, epoch_order(61, 3, 2));
        assert_ne!(a, epoch_order(61, 4, 1));
    }

    #[test]
    fn empty_history_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = plot_history(&[], &dir.path().join("p.png")).unwrap_err();
        assert!(err.contains("no epoch"), "{err}");
    }
}
