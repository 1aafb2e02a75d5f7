//! The fused training step (one hidden layer: `forward_gather`, `softmax_head`,
//! `grad_update`) against the `f64` reference step: several steps of SGD with
//! momentum and weight decay, and of Adam, over two submissions, with a partial last batch, in
//! the CPU's kernel configuration and in the GPU's (small tiles, split-K), on lavapipe in CI.

use mlp::config::MlpConfig;
use mlp::kernels::product::Target;
use mlp::model::{GpuMlp, OptimizerConfig};
use mlp::params::Params;
use mlp::reference::{self, RefModel};
use mlp::schedule::{Decay, LrSchedule};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use wgsl_dsl::runtime::{Gpu, GpuBuffer};

const TOL: f64 = 1e-5;

struct Data {
    images: Vec<f32>,
    labels: Vec<u32>,
    order: Vec<u32>,
}

fn data(config: &MlpConfig, n: usize, seed: u64) -> Data {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
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

#[track_caller]
fn assert_close(what: &str, gpu: &[f32], reference: &[f64]) {
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
/// optimizer. Returns the mean loss of each step.
struct RefTrainer {
    model: RefModel,
    slots: Vec<Vec<f64>>,
    t: u64,
    schedule: LrSchedule,
}

impl RefTrainer {
    fn step(&mut self, d: &Data, inputs: usize, rows: &[u32], opt: &OptimizerConfig) -> f64 {
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
        match *opt {
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

fn fused_steps_match_reference(opt: OptimizerConfig, target: Target, schedule: LrSchedule) {
    let gpu = Gpu::new().expect("a GPU adapter (install mesa-vulkan-drivers for lavapipe)");
    // Widths that are multiples of no tile; 3 steps per pass over 41 examples, the last of 9.
    // 197 inputs: the GPU configuration splits them (4 steps of 64, one per part).
    let config = MlpConfig {
        inputs: 197,
        hidden: vec![19],
        classes: 7,
    };
    let (n, batch) = (41, 16);
    let d = data(&config, n, 11);
    let params = Params::init(&config, 4);
    let mut model = GpuMlp::new(&gpu, &config, &params, &opt, None, batch).expect("model");
    assert!(model.set_fused(&gpu, Some(target)).expect("fused kernels"));
    model.set_schedule(&gpu, &schedule).expect("schedule");
    let splits = model.fused_config().expect("fused").splits;
    if target == Target::Cpu {
        assert_eq!(splits, 1);
    } else {
        assert!(splits > 1, "K split");
    }
    let dataset = model
        .upload_dataset(&gpu, &d.images, &d.labels)
        .expect("dataset");
    let order = GpuBuffer::from_slice(&gpu, &d.order).expect("order");
    let mut reference = RefTrainer {
        model: RefModel::from_params(&params),
        slots: vec![vec![0.0; config.num_params()]; opt.slots_per_tensor()],
        t: 0,
        schedule,
    };
    for chunk in [0..2, 2..3, 0..3] {
        let mut rec = gpu.recorder();
        model
            .record_train_steps(&gpu, &mut rec, &dataset, &order, batch, chunk.clone())
            .expect("record");
        // begin_chunk, then 3 dispatches per step.
        assert_eq!(rec.dispatches(), 1 + 3 * chunk.len());
        rec.submit().expect("submit");
        let losses = model.read_losses(&gpu, chunk.len()).expect("losses");
        let ref_losses: Vec<f64> = chunk
            .clone()
            .map(|s| {
                let rows = &d.order[s * batch..((s + 1) * batch).min(n)];
                reference.step(&d, config.inputs, rows, &opt)
            })
            .collect();
        assert_close("losses", &losses, &ref_losses);
    }
    let trained = model.params(&gpu).expect("params").flatten();
    assert_close("parameters", &trained, &reference.model.flatten());
    assert!(
        trained
            .iter()
            .zip(params.flatten())
            .any(|(a, b)| (a - b).abs() > 1e-3)
    );
    let state = model.optimizer_state(&gpu).expect("state");
    assert_eq!(state.step, reference.t);
    let tensors = 2 * config.num_layers();
    for (k, flat) in reference.slots.iter().enumerate() {
        let gpu_flat: Vec<f32> = state.slots[k * tensors..(k + 1) * tensors].concat();
        assert_close("optimizer slot", &gpu_flat, flat);
    }
}

const SGD: OptimizerConfig = OptimizerConfig::Sgd {
    lr: 0.1,
    momentum: 0.9,
    weight_decay: 1e-3,
};
const ADAM: OptimizerConfig = OptimizerConfig::Adam {
    lr: 0.01,
    beta1: 0.9,
    beta2: 0.999,
    eps: 1e-8,
};
const GPU: Target = Target::gpu(512);

#[test]
fn fused_sgd_steps_equal_the_reference_with_cpu_tiles() {
    fused_steps_match_reference(SGD, Target::Cpu, LrSchedule::CONSTANT);
}

#[test]
fn fused_sgd_steps_equal_the_reference_with_gpu_tiles_and_split_k() {
    fused_steps_match_reference(SGD, GPU, LrSchedule::CONSTANT);
}

#[test]
fn fused_adam_steps_equal_the_reference_with_cpu_tiles() {
    fused_steps_match_reference(ADAM, Target::Cpu, LrSchedule::CONSTANT);
}

#[test]
fn fused_adam_steps_equal_the_reference_with_gpu_tiles_and_split_k() {
    fused_steps_match_reference(ADAM, GPU, LrSchedule::CONSTANT);
}

#[test]
fn models_with_two_hidden_layers_run_the_unfused_step() {
    let gpu = Gpu::new().expect("a GPU adapter");
    let config = MlpConfig {
        inputs: 5,
        hidden: vec![4, 3],
        classes: 2,
    };
    let params = Params::init(&config, 0);
    let mut model = GpuMlp::new(&gpu, &config, &params, &SGD, None, 4).expect("model");
    assert!(model.fused_config().is_none());
    assert!(!model.set_fused(&gpu, Some(GPU)).expect("no error"));
}

/// Warm-up, then a cosine that ends before the last of the 6 steps.
const COSINE: LrSchedule = LrSchedule {
    warmup_steps: 2,
    decay: Decay::Cosine {
        steps: 3,
        final_factor: 0.1,
    },
};
/// Warm-up, then halving every 2 steps.
const STEP: LrSchedule = LrSchedule {
    warmup_steps: 1,
    decay: Decay::Step {
        every: 2,
        gamma: 0.5,
    },
};

#[test]
fn fused_sgd_steps_follow_the_schedule_as_the_reference() {
    fused_steps_match_reference(SGD, GPU, COSINE);
}

#[test]
fn fused_adam_steps_follow_the_schedule_as_the_reference() {
    fused_steps_match_reference(ADAM, Target::Cpu, STEP);
}
