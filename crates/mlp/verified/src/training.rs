//! Training steps on the GPU against the `f64` reference (`mlp::reference`), shared by
//! `mlp_model.rs` (the unfused step) and `mlp_fused_step.rs` (the fused step): random data, the
//! reference training loop, and the comparison of losses, parameters and optimizer state.

use std::ops::Range;

use mlp::config::MlpConfig;
use mlp::model::{GpuMlp, OptimizerConfig};
use mlp::params::Params;
use mlp::reference::{self, Activation, RefModel};
use mlp::schedule::{Decay, LrSchedule};
use rand::seq::SliceRandom;
use rand::{Rng as _, SeedableRng};
use wgsl_dsl::runtime::{Gpu, GpuBuffer, Recorder};

use wgsl_dsl_harness::Rng;

/// Relative error allowed between the GPU's `f32` results and the reference's `f64` ones
/// (absolute below magnitude 1).
pub const TOL: f64 = 1e-5;

/// SGD with momentum and weight decay.
pub const SGD: OptimizerConfig = OptimizerConfig::Sgd {
    lr: 0.1,
    momentum: 0.9,
    weight_decay: 1e-3,
};

/// Adam with the usual moment decays.
pub const ADAM: OptimizerConfig = OptimizerConfig::Adam {
    lr: 0.01,
    beta1: 0.9,
    beta2: 0.999,
    eps: 1e-8,
};

/// Warm-up for 2 steps, then a cosine that ends after 3 more (before the last of 6 steps).
pub const COSINE: LrSchedule = LrSchedule {
    warmup_steps: 2,
    decay: Decay::Cosine {
        steps: 3,
        final_factor: 0.1,
    },
};

/// Warm-up for 1 step, then halving every 2 steps.
pub const STEP: LrSchedule = LrSchedule {
    warmup_steps: 1,
    decay: Decay::Step {
        every: 2,
        gamma: 0.5,
    },
};

/// A random data set: `images` `[n, inputs]` row-major in `[0, 1)`, `labels` `[n]` below
/// `classes`, and a random permutation `order` of the `n` examples (the batches are its runs).
#[derive(Debug, Clone)]
pub struct Data {
    /// `[n, inputs]`, row-major.
    pub images: Vec<f32>,
    /// `[n]`.
    pub labels: Vec<u32>,
    /// A permutation of `0..n`.
    pub order: Vec<u32>,
}

impl Data {
    /// `n` random examples for `config`, from `seed`.
    pub fn random(config: &MlpConfig, n: usize, seed: u64) -> Self {
        let mut rng = Rng::seed_from_u64(seed);
        let images = (0..n * config.inputs)
            .map(|_| rng.random_range(0.0..1.0))
            .collect();
        let labels = (0..n)
            .map(|_| rng.random_range(0..config.classes as u32))
            .collect();
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.shuffle(&mut rng);
        Data {
            images,
            labels,
            order,
        }
    }
}

/// Asserts that `gpu` equals `reference` within [`TOL`] relative (absolute below magnitude 1).
#[track_caller]
pub fn assert_close(what: &str, gpu: &[f32], reference: &[f64]) {
    assert_eq!(gpu.len(), reference.len(), "{what}: lengths");
    for (i, (&a, &b)) in gpu.iter().zip(reference).enumerate() {
        let err = (f64::from(a) - b).abs() / b.abs().max(1.0);
        assert!(
            err <= TOL,
            "{what}[{i}]: GPU {a}, reference {b} (error {err:e})"
        );
    }
}

/// The reference training loop: per step, the batch through `order`, backprop, the
/// scheduled optimizer step.
#[derive(Debug)]
pub struct RefTrainer {
    /// The model being trained.
    pub model: RefModel,
    /// The optimizer's slots, each over the flat parameters (SGD: velocity; Adam: m, v).
    pub slots: Vec<Vec<f64>>,
    /// Steps taken.
    pub t: u64,
    schedule: LrSchedule,
    optimizer: OptimizerConfig,
}

impl RefTrainer {
    /// A trainer at step 0 from `params` (hidden layers with `activation`), with zero slots.
    pub fn new(
        params: &Params,
        activation: Activation,
        optimizer: OptimizerConfig,
        schedule: LrSchedule,
    ) -> Self {
        RefTrainer {
            model: RefModel::from_params(params, activation),
            slots: vec![vec![0.0; params.len()]; optimizer.slots_per_tensor()],
            t: 0,
            schedule,
            optimizer,
        }
    }

    /// One step on the examples `rows` of `d`; returns the step's mean loss.
    pub fn step(&mut self, d: &Data, inputs: usize, rows: &[u32]) -> f64 {
        let x: Vec<f64> = rows
            .iter()
            .flat_map(|&r| {
                let r = r as usize;
                d.images[r * inputs..(r + 1) * inputs]
                    .iter()
                    .map(|&v| f64::from(v))
            })
            .collect();
        let labels: Vec<u32> = rows.iter().map(|&r| d.labels[r as usize]).collect();
        let (loss, grads) = self.model.loss_and_grads(&x, &labels, rows.len());
        let mut p = self.model.flatten();
        let g = grads.flatten();
        // The scheduled learning rate after the `t` steps taken before this one.
        let factor = self.schedule.factor(self.t);
        self.t += 1;
        match self.optimizer {
            OptimizerConfig::Sgd {
                lr,
                momentum,
                weight_decay,
            } => reference::sgd_step(
                &mut p,
                &g,
                &mut self.slots[0],
                f64::from(lr) * factor,
                momentum.into(),
                weight_decay.into(),
            ),
            OptimizerConfig::Adam {
                lr,
                beta1,
                beta2,
                eps,
            } => {
                let (m, v) = self.slots.split_at_mut(1);
                reference::adam_step(
                    &mut p,
                    &g,
                    &mut m[0],
                    &mut v[0],
                    self.t,
                    f64::from(lr) * factor,
                    beta1.into(),
                    beta2.into(),
                    eps.into(),
                );
            }
        }
        self.model.set_flat(&p);
        loss
    }
}

/// One training run to compare: the model `model` (built from `params` with `optimizer`, with
/// any kernels chosen) trained on `data` in batches of `batch` under `schedule`.
#[derive(Debug)]
pub struct Run<'a> {
    /// The model's architecture.
    pub config: &'a MlpConfig,
    /// The parameters the model was built from.
    pub params: &'a Params,
    /// The optimizer the model was built with.
    pub optimizer: OptimizerConfig,
    /// The learning-rate schedule (set on the model by [`Run::matches_reference`]).
    pub schedule: LrSchedule,
    /// The training set.
    pub data: &'a Data,
    /// Examples per step (the last step of a pass takes what is left).
    pub batch: usize,
}

impl Run<'_> {
    /// Trains `model` for each range of steps in `chunks` (one submission per chunk) and the
    /// reference alongside; asserts that each chunk's losses, and at the end the parameters
    /// (which must have moved), the step count and the optimizer's slots agree within [`TOL`].
    /// `check_recording` sees each chunk's recorder before submission, with the chunk's steps.
    #[track_caller]
    pub fn matches_reference(
        &self,
        gpu: &Gpu,
        model: &mut GpuMlp,
        chunks: &[Range<usize>],
        check_recording: impl Fn(&Recorder<'_>, usize),
    ) {
        let (config, d, batch) = (self.config, self.data, self.batch);
        let n = d.labels.len();
        model.set_schedule(gpu, &self.schedule).expect("schedule");
        let dataset = model
            .upload_dataset(gpu, &d.images, &d.labels)
            .expect("dataset");
        let order = GpuBuffer::from_slice(gpu, &d.order).expect("order");
        let mut reference = RefTrainer::new(
            self.params,
            config.activation,
            self.optimizer.clone(),
            self.schedule,
        );
        for chunk in chunks {
            let mut rec = gpu.recorder();
            model
                .record_train_steps(gpu, &mut rec, &dataset, &order, batch, chunk.clone())
                .expect("record");
            check_recording(&rec, chunk.len());
            rec.submit().expect("submit");
            let losses = model.read_losses(gpu, chunk.len()).expect("losses");
            let ref_losses: Vec<f64> = chunk
                .clone()
                .map(|s| {
                    let rows = &d.order[s * batch..((s + 1) * batch).min(n)];
                    reference.step(d, config.inputs, rows)
                })
                .collect();
            assert_close("losses", &losses, &ref_losses);
        }
        let trained = model.params(gpu).expect("params").flatten();
        assert_close("parameters", &trained, &reference.model.flatten());
        // The parameters did move.
        assert!(
            trained
                .iter()
                .zip(self.params.flatten())
                .any(|(a, b)| (a - b).abs() > 1e-3)
        );
        let state = model.optimizer_state(gpu).expect("state");
        assert_eq!(state.step, reference.t);
        let tensors = 2 * config.num_layers();
        assert_eq!(
            state.slots.len(),
            tensors * self.optimizer.slots_per_tensor()
        );
        for (k, flat) in reference.slots.iter().enumerate() {
            let gpu_flat: Vec<f32> = state.slots[k * tensors..(k + 1) * tensors].concat();
            assert_close("optimizer slot", &gpu_flat, flat);
        }
    }
}
