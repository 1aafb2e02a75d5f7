//! The whole model on the GPU against the `f64` reference: a few training steps of SGD and of
//! Adam (recorded into one submission, with a partial last batch), evaluation and
//! probabilities.

use mlp::config::MlpConfig;
use mlp::model::{GpuMlp, OptimizerConfig, OptimizerState};
use mlp::params::Params;
use mlp::reference::{self, RefModel};
use mlp::schedule::{Decay, LrSchedule};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use wgsl_dsl::runtime::{Gpu, GpuBuffer};

const TOL: f64 = 1e-5;

fn gpu() -> Gpu {
    Gpu::new().expect("a GPU adapter (install mesa-vulkan-drivers for lavapipe)")
}

fn config() -> MlpConfig {
    MlpConfig {
        inputs: 23,
        hidden: vec![19, 13],
        classes: 7,
    }
}

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

/// Train `chunks` of steps on the GPU (one submission per chunk) and with the reference, and
/// compare losses, parameters and optimizer state.
fn train_matches_reference(
    opt: OptimizerConfig,
    chunks: &[std::ops::Range<usize>],
    schedule: LrSchedule,
) {
    let gpu = gpu();
    let config = config();
    let (n, batch) = (41, 16); // steps 0, 1 full; step 2 has 9 examples
    let d = data(&config, n, 5);
    let params = Params::init(&config, 3);
    let mut model = GpuMlp::new(&gpu, &config, &params, &opt, None, batch).expect("model");
    model.set_schedule(&gpu, &schedule).expect("schedule");
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
    for chunk in chunks {
        let mut rec = gpu.recorder();
        model
            .record_train_steps(&gpu, &mut rec, &dataset, &order, batch, chunk.clone())
            .expect("record");
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
    // The parameters did move.
    assert!(
        trained
            .iter()
            .zip(params.flatten())
            .any(|(a, b)| (a - b).abs() > 1e-3)
    );
    let state = model.optimizer_state(&gpu).expect("state");
    assert_eq!(state.step, reference.t);
    let tensors = 2 * config.num_layers();
    assert_eq!(state.slots.len(), tensors * opt.slots_per_tensor());
    for (k, flat) in reference.slots.iter().enumerate() {
        let gpu_flat: Vec<f32> = state.slots[k * tensors..(k + 1) * tensors].concat();
        assert_close("optimizer slot", &gpu_flat, flat);
    }
}

#[test]
fn sgd_steps_equal_the_reference() {
    let opt = OptimizerConfig::Sgd {
        lr: 0.1,
        momentum: 0.9,
        weight_decay: 1e-3,
    };
    // One chunk of three steps, not a list of steps.
    #[allow(clippy::single_range_in_vec_init)]
    let one_chunk = [0..3];
    train_matches_reference(opt, &one_chunk, LrSchedule::CONSTANT);
}

#[test]
fn adam_steps_equal_the_reference_across_submissions() {
    let opt = OptimizerConfig::Adam {
        lr: 0.01,
        beta1: 0.9,
        beta2: 0.999,
        eps: 1e-8,
    };
    // Two submissions: the step count carries over on the GPU.
    train_matches_reference(opt, &[0..2, 2..3, 0..1], LrSchedule::CONSTANT);
}

/// Learning-rate schedules, followed step by step across submissions: a warm-up and a cosine
/// that ends before the last step (SGD), a warm-up and step decays (Adam).
#[test]
fn scheduled_steps_equal_the_reference() {
    let sgd = OptimizerConfig::Sgd {
        lr: 0.1,
        momentum: 0.9,
        weight_decay: 1e-3,
    };
    let cosine = LrSchedule {
        warmup_steps: 2,
        decay: Decay::Cosine {
            steps: 3,
            final_factor: 0.1,
        },
    };
    train_matches_reference(sgd, &[0..2, 2..3, 0..3], cosine);
    let adam = OptimizerConfig::Adam {
        lr: 0.01,
        beta1: 0.9,
        beta2: 0.999,
        eps: 1e-8,
    };
    let step = LrSchedule {
        warmup_steps: 1,
        decay: Decay::Step {
            every: 2,
            gamma: 0.5,
        },
    };
    train_matches_reference(adam, &[0..3, 0..3], step);
}

#[test]
fn resuming_from_optimizer_state_continues_the_same_run() {
    let gpu = gpu();
    let config = config();
    let d = data(&config, 30, 9);
    let opt = OptimizerConfig::Adam {
        lr: 0.01,
        beta1: 0.9,
        beta2: 0.99,
        eps: 1e-8,
    };
    let params = Params::init(&config, 4);
    let run = |model: &mut GpuMlp, steps: std::ops::Range<usize>| {
        let dataset = model.upload_dataset(&gpu, &d.images, &d.labels).unwrap();
        let order = GpuBuffer::from_slice(&gpu, &d.order).unwrap();
        let mut rec = gpu.recorder();
        model
            .record_train_steps(&gpu, &mut rec, &dataset, &order, 10, steps)
            .unwrap();
        rec.submit().unwrap();
    };
    let mut a = GpuMlp::new(&gpu, &config, &params, &opt, None, 10).unwrap();
    run(&mut a, 0..3);
    let mut b = GpuMlp::new(&gpu, &config, &params, &opt, None, 10).unwrap();
    run(&mut b, 0..1);
    let state: OptimizerState = b.optimizer_state(&gpu).unwrap();
    assert_eq!(state.step, 1);
    let mut c = GpuMlp::new(
        &gpu,
        &config,
        &b.params(&gpu).unwrap(),
        &opt,
        Some(&state),
        10,
    )
    .unwrap();
    run(&mut c, 1..3);
    let (pa, pc) = (a.params(&gpu).unwrap(), c.params(&gpu).unwrap());
    assert_eq!(pa, pc, "resumed run differs");
    assert_eq!(
        a.optimizer_state(&gpu).unwrap(),
        c.optimizer_state(&gpu).unwrap()
    );
}

#[test]
fn evaluation_and_probabilities_equal_the_reference() {
    let gpu = gpu();
    let config = config();
    let n = 45; // 3 batches of 16, the last of 13
    let d = data(&config, n, 11);
    let params = Params::init(&config, 6);
    let opt = OptimizerConfig::Sgd {
        lr: 0.1,
        momentum: 0.0,
        weight_decay: 0.0,
    };
    let mut model = GpuMlp::new(&gpu, &config, &params, &opt, None, 16).unwrap();
    let dataset = model.upload_dataset(&gpu, &d.images, &d.labels).unwrap();
    let eval = model.evaluate(&gpu, &dataset).unwrap();

    let reference = RefModel::from_params(&params);
    let x: Vec<f64> = d.images.iter().map(|&v| f64::from(v)).collect();
    let logits = reference.forward(&x, n).pop().unwrap();
    let sce = reference::softmax_cross_entropy(&logits, &d.labels, n, config.classes);
    let predictions = reference::argmax_rows(&logits, n, config.classes);
    let correct = predictions
        .iter()
        .zip(&d.labels)
        .filter(|(p, l)| p == l)
        .count() as u64;
    assert_eq!(eval.predictions, predictions);
    assert_eq!((eval.correct, eval.total), (correct, n as u64));
    assert_close("mean loss", &[eval.mean_loss], &[sce.mean_loss]);

    let probs = model.predict_proba(&gpu, &d.images).unwrap();
    assert_close("probabilities", &probs, &sce.probs);
}

#[test]
fn invalid_arguments_are_errors_not_panics() {
    let gpu = gpu();
    let config = config();
    let params = Params::init(&config, 1);
    let opt = OptimizerConfig::Sgd {
        lr: 0.1,
        momentum: 0.0,
        weight_decay: 0.0,
    };
    let other = MlpConfig {
        inputs: 5,
        hidden: vec![],
        classes: 2,
    };
    assert!(GpuMlp::new(&gpu, &other, &params, &opt, None, 8).is_err());
    assert!(GpuMlp::new(&gpu, &config, &params, &opt, None, 0).is_err());
    let bad_state = OptimizerState {
        step: 0,
        slots: vec![vec![0.0; 3]],
    };
    assert!(GpuMlp::new(&gpu, &config, &params, &opt, Some(&bad_state), 8).is_err());
    let mut model = GpuMlp::new(&gpu, &config, &params, &opt, None, 8).unwrap();
    let d = data(&config, 10, 1);
    assert!(
        model
            .upload_dataset(&gpu, &d.images[1..], &d.labels)
            .is_err()
    );
    let mut bad_labels = d.labels.clone();
    bad_labels[3] = config.classes as u32;
    assert!(model.upload_dataset(&gpu, &d.images, &bad_labels).is_err());
    let dataset = model.upload_dataset(&gpu, &d.images, &d.labels).unwrap();
    let order = GpuBuffer::from_slice(&gpu, &d.order).unwrap();
    let mut rec = gpu.recorder();
    // Batch too large; step past the end of the order.
    assert!(
        model
            .record_train_steps(&gpu, &mut rec, &dataset, &order, 9, 0..1)
            .is_err()
    );
    assert!(
        model
            .record_train_steps(&gpu, &mut rec, &dataset, &order, 8, 0..3)
            .is_err()
    );
    assert!(model.predict_proba(&gpu, &d.images[1..]).is_err());
}
