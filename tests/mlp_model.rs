//! The whole model on the GPU against the `f64` reference: a few training steps of SGD and of
//! Adam (recorded into one submission, with a partial last batch), evaluation and
//! probabilities.

use mlp::config::MlpConfig;
use mlp::model::{GpuMlp, OptimizerConfig, OptimizerState};
use mlp::params::Params;
use mlp::reference::{self, RefModel};
use mlp::schedule::LrSchedule;
use mlp_verified::training::{ADAM, COSINE, Data, SGD, STEP, assert_close};
use wgsl_dsl::runtime::{Gpu, GpuBuffer};

#[path = "common/reference_run.rs"]
mod reference_run;

use reference_run::gpu_matches_reference;

fn gpu() -> Gpu {
    Gpu::new().expect("a GPU adapter (install mesa-vulkan-drivers for lavapipe)")
}

fn config() -> MlpConfig {
    MlpConfig {
        inputs: 23,
        hidden: vec![19, 13],
        classes: 7,
        ..MlpConfig::default()
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
    gpu_matches_reference(
        &gpu,
        &config,
        [5, 3],
        opt,
        schedule,
        chunks,
        |_, _| {},
        |_, _| {},
    );
}

#[test]
fn sgd_steps_equal_the_reference() {
    // One chunk of three steps, not a list of steps.
    #[allow(clippy::single_range_in_vec_init)]
    let one_chunk = [0..3];
    train_matches_reference(SGD, &one_chunk, LrSchedule::CONSTANT);
}

#[test]
fn adam_steps_equal_the_reference_across_submissions() {
    // Two submissions: the step count carries over on the GPU.
    train_matches_reference(ADAM, &[0..2, 2..3, 0..1], LrSchedule::CONSTANT);
}

/// Learning-rate schedules, followed step by step across submissions: a warm-up and a cosine
/// that ends before the last step (SGD), a warm-up and step decays (Adam).
#[test]
fn scheduled_steps_equal_the_reference() {
    train_matches_reference(SGD, &[0..2, 2..3, 0..3], COSINE);
    train_matches_reference(ADAM, &[0..3, 0..3], STEP);
}

#[test]
fn resuming_from_optimizer_state_continues_the_same_run() {
    let gpu = gpu();
    let config = config();
    let d = Data::random(&config, 30, 9);
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
    let d = Data::random(&config, n, 11);
    let params = Params::init(&config, 6);
    let opt = OptimizerConfig::Sgd {
        lr: 0.1,
        momentum: 0.0,
        weight_decay: 0.0,
    };
    let mut model = GpuMlp::new(&gpu, &config, &params, &opt, None, 16).unwrap();
    let dataset = model.upload_dataset(&gpu, &d.images, &d.labels).unwrap();
    let eval = model.evaluate(&gpu, &dataset).unwrap();

    let reference = RefModel::from_params(&params, config.activation);
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
        ..MlpConfig::default()
    };
    assert!(GpuMlp::new(&gpu, &other, &params, &opt, None, 8).is_err());
    assert!(GpuMlp::new(&gpu, &config, &params, &opt, None, 0).is_err());
    let bad_state = OptimizerState {
        step: 0,
        slots: vec![vec![0.0; 3]],
    };
    assert!(GpuMlp::new(&gpu, &config, &params, &opt, Some(&bad_state), 8).is_err());
    let mut model = GpuMlp::new(&gpu, &config, &params, &opt, None, 8).unwrap();
    let d = Data::random(&config, 10, 1);
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

    // More classes than the derived loss gradient's loops are bounded by: refused when the
    // model is made, naming the bound (at the bound: made).
    let many = |classes| MlpConfig {
        inputs: 3,
        hidden: vec![],
        classes,
        ..MlpConfig::default()
    };
    let bound = mlp::kernels::loss::MAX_CLASSES as usize;
    let over = many(bound + 1);
    let err = GpuMlp::new(&gpu, &over, &Params::init(&over, 1), &opt, None, 4)
        .expect_err("more classes than the bound");
    assert!(
        matches!(&err, mlp::error::MlpError::Config(_)) && err.to_string().contains("MAX_CLASSES"),
        "{err}"
    );
    let at = many(bound);
    GpuMlp::new(&gpu, &at, &Params::init(&at, 1), &opt, None, 4).expect("at the bound");
}
