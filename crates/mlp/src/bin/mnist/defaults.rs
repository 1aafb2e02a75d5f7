//! Every default of the binary, in one place (the `--help` texts are made from these).

use mlp::activation::Activation;

use crate::choices::Schedule;

/// The hidden layers' activation (the source's ReLU).
pub const ACTIVATION: Activation = Activation::Relu;
/// Epochs of `train` (and epochs added with `--resume`).
pub const EPOCHS: usize = 5;
/// Samples per training step.
pub const BATCH_SIZE: usize = 64;
/// SGD's peak learning rate (measured in docs/training.md with the schedule below: >= 98.0%
/// test accuracy in 5 epochs for seeds 0, 1, 2).
pub const SGD_LR: f32 = 0.1;
/// SGD's momentum.
pub const MOMENTUM: f32 = 0.9;
/// Adam's learning rate.
pub const ADAM_LR: f32 = 1e-3;
/// Adam's moment decays and epsilon (Kingma & Ba 2015's).
pub const ADAM_BETAS_EPS: (f32, f32, f32) = (0.9, 0.999, 1e-8);
/// Hidden layer widths: the source's 784-128-10 network.
pub const HIDDEN: &[usize] = &[128];
/// Seed of initialisation and shuffling.
pub const SEED: u64 = 0;
/// Training steps per GPU submit.
pub const STEPS_PER_CHUNK: usize = 40;
/// Batch of evaluation and prediction (the test set goes through the GPU in such batches).
pub const EVAL_BATCH: usize = 500;
/// The learning-rate schedule (measured in docs/training.md).
pub const SCHEDULE: Schedule = Schedule::Cosine;
/// Epochs of linear warm-up.
pub const WARMUP_EPOCHS: f64 = 0.5;
/// `--schedule step`: epochs between decays.
pub const STEP_EPOCHS: f64 = 2.0;
/// `--schedule step`: the factor of each decay.
pub const STEP_GAMMA: f32 = 0.1;

/// [`HIDDEN`] as typed on the command line.
pub fn hidden_text() -> String {
    let widths: Vec<String> = HIDDEN.iter().map(|w| w.to_string()).collect();
    widths.join(",")
}
