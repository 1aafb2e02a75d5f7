//! End to end on real MNIST (a subset, on whatever adapter `Gpu::new` finds; lavapipe in CI):
//! training reaches a useful accuracy, a saved checkpoint evaluates the same after reloading,
//! and resuming gives the same model as training straight through.

use std::path::Path;

use mlp::checkpoint::Checkpoint;
use mlp::config::MlpConfig;
use mlp::data::Mnist;
use mlp::model::{GpuMlp, OptimizerConfig};
use mlp::train::{Start, TrainSettings, evaluate, train, upload};
use wgsl_dsl::runtime::Gpu;

fn mnist(train: usize, test: usize) -> Mnist {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/mnist");
    let mut m = Mnist::load(&dir).expect("the repository's data/mnist");
    m.train.truncate(train);
    m.test.truncate(test);
    m
}

fn adam(lr: f32) -> OptimizerConfig {
    OptimizerConfig::Adam {
        lr,
        beta1: 0.9,
        beta2: 0.999,
        eps: 1e-8,
    }
}

fn fresh(optimizer: OptimizerConfig) -> Start {
    Start::Fresh {
        config: MlpConfig::default(),
        optimizer,
    }
}

/// 2,000 training and 500 test images, 2 epochs: >= 85% test accuracy; the checkpoint written
/// during training, reloaded into a new model, gives the same predictions.
#[test]
fn two_epochs_on_a_subset_then_reload() {
    let gpu = Gpu::new().expect("a GPU or software adapter");
    let data = mnist(2000, 500);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.safetensors");
    // Batches of 16 (250 steps in all): with 2,000 images, more small steps beat fewer large
    // ones; Adam's learning rate is doubled for the same reason (measured in README).
    let settings = TrainSettings {
        epochs: 2,
        batch_size: 16,
        seed: 0,
        steps_per_chunk: 50,
        verbose: false,
        save: Some(path.clone()),
    };
    let out = train(&gpu, &data, fresh(adam(2e-3)), &settings).unwrap();
    let accuracy = out.test_accuracy.unwrap();
    assert!(accuracy >= 0.85, "test accuracy {accuracy}");
    let history = &out.checkpoint.history;
    assert_eq!(history.len(), 2);
    assert!(history[1].train_loss < history[0].train_loss, "{history:?}");
    assert_eq!(out.checkpoint.optimizer_state.step, 2 * 125);

    let c = Checkpoint::load(&path).unwrap();
    assert_eq!(c, out.checkpoint);
    let mut model = GpuMlp::new(&gpu, &c.config, &c.params, &c.optimizer, None, 100).unwrap();
    let test = upload(&gpu, &model, &data.test).unwrap();
    let eval = evaluate(&gpu, &mut model, &test).unwrap();
    assert_eq!(eval.total, 500);
    assert_eq!(eval.accuracy(), accuracy);
    let correct = eval
        .predictions
        .iter()
        .zip(&data.test.labels)
        .filter(|(p, l)| p == l)
        .count();
    assert_eq!(correct as u64, eval.correct);
}

/// One epoch, save, resume for a second: the same parameters and optimizer state as two epochs
/// straight (same shuffles, Adam's step count restored).
#[test]
fn resume_continues_exactly() {
    let gpu = Gpu::new().expect("a GPU or software adapter");
    let data = mnist(301, 53);
    let settings = |epochs| TrainSettings {
        epochs,
        batch_size: 32,
        seed: 5,
        steps_per_chunk: 4,
        verbose: false,
        save: None,
    };
    let straight = train(&gpu, &data, fresh(adam(1e-3)), &settings(2)).unwrap();
    let first = train(&gpu, &data, fresh(adam(1e-3)), &settings(1)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("one.safetensors");
    first.checkpoint.save(&path).unwrap();
    let resumed = Start::Resume(Box::new(Checkpoint::load(&path).unwrap()));
    let second = train(&gpu, &data, resumed, &settings(1)).unwrap();
    let (a, b) = (&straight.checkpoint, &second.checkpoint);
    assert_eq!(b.epoch, 2);
    assert_eq!(b.optimizer_state.step, 2 * 10);
    assert_eq!(a.optimizer_state, b.optimizer_state);
    assert_eq!(a.params, b.params);
    assert_eq!(a.history.len(), b.history.len());
    assert_eq!(a.history[1].train_loss, b.history[1].train_loss);
    assert_eq!(straight.test_accuracy, second.test_accuracy);
}
