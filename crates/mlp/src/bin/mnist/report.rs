//! What `mnist train` shows while it trains: a progress bar per epoch (stderr) and one line per
//! epoch (stdout), from the trainer's [`Event`]s.

use std::io::Write;

use indicatif::{ProgressBar, ProgressState, ProgressStyle};
use mlp::train::{EpochReport, Event, Observer, Outcome};

/// The [`Observer`] of `mnist train`.
#[derive(Debug, Default)]
pub struct Report {
    bar: Option<ProgressBar>,
}

impl Observer for Report {
    fn event(&mut self, event: &Event<'_>) {
        match event {
            Event::Started(s) => match &s.extended_from {
                Some(old) => eprintln!(
                    "learning-rate schedule: {} (the checkpoint's {old}, extended to end with \
                     this run)",
                    s.schedule
                ),
                None => eprintln!("learning-rate schedule: {}", s.schedule),
            },
            Event::EpochStarted {
                epoch,
                last_epoch,
                samples,
            } => self.bar = Some(progress_bar(*samples, *epoch, *last_epoch)),
            Event::Chunk(chunk) => {
                if let Some(bar) = &self.bar {
                    bar.set_position(chunk.samples_done as u64);
                    bar.set_message(format!("{:.4}", chunk.mean_loss));
                }
            }
            Event::Epoch(report) => {
                if let Some(bar) = self.bar.take() {
                    bar.finish_and_clear();
                }
                say(&epoch_line(report));
            }
            _ => {}
        }
    }
}

impl Drop for Report {
    /// A run that fails mid-epoch leaves the bar where it stopped, above the error line.
    fn drop(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.abandon();
        }
    }
}

/// `epoch 3/5: train loss 0.0776, test accuracy 97.35% (9735/10000), train 19.2 s (3125
/// samples/s), eval 0.8 s`.
pub fn epoch_line(r: &EpochReport) -> String {
    format!(
        "epoch {}/{}: train loss {:.4}, test accuracy {:.2}% ({}/{}), train {:.1} s \
         ({:.0} samples/s), eval {:.1} s",
        r.record.epoch,
        r.last_epoch,
        r.record.train_loss,
        100.0 * r.record.test_accuracy,
        r.correct,
        r.total,
        r.train_time.as_secs_f64(),
        r.samples_per_second(),
        r.eval_time.as_secs_f64()
    )
}

/// The run's last line; it ends with the final test accuracy.
pub fn done_line(outcome: &Outcome, epochs: usize, samples: usize) -> Option<String> {
    let accuracy = outcome.test_accuracy?;
    let last = outcome.checkpoint.epoch;
    Some(format!(
        "done: {} ({}) of {samples} samples: training {:.1} s \
         ({:.0} samples/s), evaluation {:.1} s; final test accuracy {:.2}%",
        plural(epochs, "epoch"),
        if epochs == 1 {
            format!("epoch {last}")
        } else {
            format!("{} to {last}", last + 1 - epochs)
        },
        outcome.train_time.as_secs_f64(),
        outcome.samples_per_second,
        outcome.eval_time.as_secs_f64(),
        100.0 * accuracy
    ))
}

/// `1 epoch`, `3 epochs`.
pub fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// A number as people write it: plain from 0.001 to 99999 (`0.1`, `1000`), else in
/// scientific notation (`1e9`, `1e-7`), never `1000000000` or `0.0000001`.
pub fn number(x: f32) -> String {
    if x == 0.0 || (1e-3..1e5).contains(&x.abs()) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// Prints a line to stdout; a closed stdout (e.g. `| head`) is not an error worth a panic.
pub fn say(line: &str) {
    let _ = writeln!(std::io::stdout().lock(), "{line}");
}

fn progress_bar(samples: usize, epoch: usize, last: usize) -> ProgressBar {
    let bar = ProgressBar::new(samples as u64);
    let style = ProgressStyle::with_template(
        "epoch {prefix} [{bar:30}] {pos}/{len} loss {msg} {rate} eta {eta}",
    )
    .map(|s| {
        s.progress_chars("=> ").with_key(
            "rate",
            |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{:.0} samples/s", state.per_sec());
            },
        )
    })
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar.set_prefix(format!("{epoch}/{last}"));
    bar
}
