//! End to end on real MNIST (a subset, on whatever adapter `Gpu::new` finds; lavapipe in CI):
//! training reaches a useful accuracy, a saved checkpoint evaluates the same after reloading,
//! and resuming gives the same model as training straight through.

use std::path::Path;

use mlp::checkpoint::Checkpoint;
use mlp::config::{MlpConfig, Precision};
use mlp::data::Mnist;
use mlp::model::{GpuMlp, OptimizerConfig};
use mlp::schedule::{Decay, DecaySpec, LrSchedule, ScheduleSpec};
use mlp::train::{Event, Start, TrainError, TrainSettings, evaluate, train, upload};
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

/// Pipelined training with no checkpoint written and a constant learning rate.
fn pipelined(epochs: usize, batch_size: usize, seed: u64, steps_per_chunk: usize) -> TrainSettings {
    TrainSettings {
        epochs,
        batch_size,
        seed,
        steps_per_chunk,
        pipeline: true,
        save: None,
        schedule: None,
        precision: Precision::F32,
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
        save: Some(path.clone()),
        ..pipelined(2, 16, 0, 50)
    };
    let mut events = Vec::new();
    let mut observer = |e: &Event<'_>| {
        events.push(match e {
            Event::Started(s) => format!("started {}..={}", s.first_epoch, s.last_epoch),
            Event::EpochStarted { epoch, .. } => format!("epoch {epoch}"),
            Event::Chunk(c) => format!("chunk {} {}", c.steps_done, c.samples_done),
            Event::Epoch(r) => format!("end {} {}/{}", r.record.epoch, r.correct, r.total),
            Event::CheckpointSaved { epoch, .. } => format!("saved {epoch}"),
            _ => "other".into(),
        })
    };
    let out = train(&gpu, &data, fresh(adam(2e-3)), &settings, &mut observer).unwrap();
    let accuracy = out.test_accuracy.unwrap();
    assert!(accuracy >= 0.85, "test accuracy {accuracy}");
    // 125 steps per epoch in chunks of 50: 3 chunks, the last of 25 steps (400 samples).
    let correct = (accuracy * 500.0).round();
    let expected = [
        "started 1..=2",
        "epoch 1",
        "chunk 50 800",
        "chunk 100 1600",
        "chunk 125 2000",
        &format!("end 1 {}/500", (history_accuracy(&out, 0) * 500.0).round()),
        "saved 1",
        "epoch 2",
        "chunk 50 800",
        "chunk 100 1600",
        "chunk 125 2000",
        &format!("end 2 {correct}/500"),
        "saved 2",
    ];
    assert_eq!(events, expected);
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

fn history_accuracy(out: &mlp::train::Outcome, epoch: usize) -> f64 {
    out.checkpoint.history[epoch].test_accuracy
}

/// A NaN that enters in a run's last update (after the last loss was read: here a NaN SGD
/// velocity, one step per epoch) is divergence: the run fails with
/// [`TrainError::NonFiniteState`] and writes no checkpoint.
#[test]
fn divergence_in_the_last_update_is_reported_and_nothing_saved() {
    let gpu = Gpu::new().expect("a GPU or software adapter");
    let data = mnist(32, 10);
    let config = MlpConfig::default();
    let params = mlp::params::Params::init(&config, 0);
    let optimizer = OptimizerConfig::Sgd {
        lr: 0.1,
        momentum: 0.9,
        weight_decay: 0.0,
    };
    let mut state = mlp::model::OptimizerState::zeroed(&optimizer, &params);
    state.slots[3][7] = f32::NAN; // the velocity of layers.1.bias
    let checkpoint = Checkpoint {
        config,
        params,
        optimizer,
        optimizer_state: state,
        schedule: LrSchedule::CONSTANT,
        epoch: 0,
        batch_size: 32,
        seed: 0,
        history: Vec::new(),
        train_images: None,
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.safetensors");
    let settings = TrainSettings {
        save: Some(path.clone()),
        ..pipelined(1, 32, 0, 1)
    };
    let start = Start::Resume(Box::new(checkpoint));
    match train(&gpu, &data, start, &settings, &mut ()) {
        Err(TrainError::NonFiniteState { epoch: 1, what }) => {
            assert_eq!(what, "the parameters");
        }
        other => panic!("{:?}", other.map(|o| o.test_accuracy)),
    }
    assert!(!path.exists());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// One epoch, save, resume for a second: the same parameters and optimizer state as two epochs
/// straight (same shuffles, Adam's step count restored).
#[test]
fn resume_continues_exactly() {
    let gpu = Gpu::new().expect("a GPU or software adapter");
    let data = mnist(301, 53);
    let settings = |epochs| pipelined(epochs, 32, 5, 4);
    let straight = train(&gpu, &data, fresh(adam(1e-3)), &settings(2), &mut ()).unwrap();
    let first = train(&gpu, &data, fresh(adam(1e-3)), &settings(1), &mut ()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("one.safetensors");
    first.checkpoint.save(&path).unwrap();
    let resumed = Start::Resume(Box::new(Checkpoint::load(&path).unwrap()));
    let second = train(&gpu, &data, resumed, &settings(1), &mut ()).unwrap();
    let (a, b) = (&straight.checkpoint, &second.checkpoint);
    assert_eq!(b.epoch, 2);
    assert_eq!(b.optimizer_state.step, 2 * 10);
    assert_eq!(a.optimizer_state, b.optimizer_state);
    assert_eq!(a.params, b.params);
    assert_eq!(a.history.len(), b.history.len());
    assert_eq!(a.history[1].train_loss, b.history[1].train_loss);
    assert_eq!(straight.test_accuracy, second.test_accuracy);
}

/// A run with a learning-rate schedule (warm-up, then a cosine over the run), stopped after its
/// first epoch and resumed from that epoch's checkpoint, continues the schedule: the checkpoint
/// holds it, and the resumed run ends with the parameters of the run straight through, bit for
/// bit. Asking a resumed run for another schedule is an error.
#[test]
fn resume_continues_the_schedule() {
    let gpu = Gpu::new().expect("a GPU or software adapter");
    let data = mnist(150, 20);
    let dir = tempfile::tempdir().unwrap();
    let (path, first) = (
        dir.path().join("m.safetensors"),
        dir.path().join("one.safetensors"),
    );
    let spec = ScheduleSpec {
        warmup_epochs: 0.5,
        decay: DecaySpec::Cosine { final_factor: 0.0 },
    };
    let settings = |epochs, schedule, save| TrainSettings {
        save,
        schedule,
        ..pipelined(epochs, 16, 2, 4)
    };
    let sgd = OptimizerConfig::Sgd {
        lr: 0.1,
        momentum: 0.9,
        weight_decay: 0.0,
    };
    let mut keep_first = |e: &Event<'_>| {
        if let Event::CheckpointSaved { epoch: 1, path } = e {
            std::fs::copy(path, &first).unwrap();
        }
    };
    let straight = train(
        &gpu,
        &data,
        fresh(sgd.clone()),
        &settings(3, Some(spec), Some(path)),
        &mut keep_first,
    )
    .unwrap()
    .checkpoint;
    // 10 steps per epoch: 5 of warm-up, a cosine over the other 25.
    let expected = LrSchedule {
        warmup_steps: 5,
        decay: Decay::Cosine {
            steps: 25,
            final_factor: 0.0,
        },
    };
    assert_eq!(straight.schedule, expected);
    let one = Checkpoint::load(&first).unwrap();
    assert_eq!((one.epoch, one.optimizer_state.step), (1, 10));
    assert_eq!(one.schedule, expected);
    let again = Start::Resume(Box::new(one.clone()));
    let err = train(&gpu, &data, again, &settings(2, Some(spec), None), &mut ()).unwrap_err();
    assert!(matches!(err, TrainError::Settings(_)), "{err}");
    let resumed = train(
        &gpu,
        &data,
        Start::Resume(Box::new(one)),
        &settings(2, None, None),
        &mut (),
    )
    .unwrap()
    .checkpoint;
    assert_eq!(resumed.schedule, expected);
    assert_eq!(resumed.optimizer_state.step, 30);
    let bits =
        |c: &Checkpoint| -> Vec<u32> { c.params.flatten().iter().map(|x| x.to_bits()).collect() };
    assert_eq!(bits(&resumed), bits(&straight));
    assert_eq!(
        resumed.history[2].train_loss,
        straight.history[2].train_loss
    );
}

/// Pipelined chunks (chunk n + 1 recorded and submitted before the losses of chunk n are read)
/// train exactly as chunks waited for one by one: the same per-chunk losses, reported in the same
/// order, and the same parameters and optimizer state, bit for bit; for SGD with momentum and
/// for Adam, over an epoch boundary, with a short last chunk.
#[test]
fn pipelined_chunks_train_exactly_as_serial_ones() {
    let gpu = Gpu::new().expect("a GPU or software adapter");
    let data = mnist(150, 20);
    let sgd = OptimizerConfig::Sgd {
        lr: 0.05,
        momentum: 0.9,
        weight_decay: 0.0,
    };
    for optimizer in [sgd, adam(1e-3)] {
        let run = |pipeline| {
            let settings = TrainSettings {
                pipeline,
                ..pipelined(2, 16, 3, 4)
            };
            let mut chunks = Vec::new();
            let mut observer = |e: &Event<'_>| {
                if let Event::Chunk(c) = e {
                    chunks.push((
                        c.epoch,
                        c.steps.clone(),
                        c.steps_done,
                        c.samples_done,
                        c.mean_loss.to_bits(),
                    ));
                }
            };
            let start = fresh(optimizer.clone());
            let out = train(&gpu, &data, start, &settings, &mut observer).unwrap();
            (chunks, out.checkpoint)
        };
        let (serial_chunks, serial) = run(false);
        let (piped_chunks, piped) = run(true);
        // 150 samples in batches of 16: 10 steps per epoch (the last of 6), chunks of 4, 4, 2.
        assert_eq!(serial_chunks.len(), 6);
        assert_eq!(serial_chunks[2].1, 8..10);
        assert_eq!(serial_chunks[2].3, 150);
        assert_eq!(piped_chunks, serial_chunks, "{optimizer:?}");
        let bits = |c: &Checkpoint| -> Vec<u32> {
            c.params.flatten().iter().map(|x| x.to_bits()).collect()
        };
        assert_eq!(bits(&piped), bits(&serial), "{optimizer:?}");
        let slot_bits = |c: &Checkpoint| -> Vec<u32> {
            let slots = c.optimizer_state.slots.iter().flatten();
            slots.map(|x| x.to_bits()).collect()
        };
        assert_eq!(slot_bits(&piped), slot_bits(&serial), "{optimizer:?}");
        assert_eq!(piped.optimizer_state.step, serial.optimizer_state.step);
        for (a, b) in piped.history.iter().zip(&serial.history) {
            assert_eq!(a.train_loss.to_bits(), b.train_loss.to_bits());
            assert_eq!(a.test_accuracy, b.test_accuracy);
        }
    }
}

/// Checkpoints written before the serde metadata (commit 82f9de3; see
/// `crates/mlp/tests/fixtures/README.md`) resume with today's trainer: one more epoch on the same
/// 500 training images gives what the old trainer gave (`-resumed` files), within float
/// tolerance (kernels may sum in another order since).
#[test]
fn old_checkpoints_resume_as_they_did() {
    let gpu = Gpu::new().expect("a GPU or software adapter");
    let data = mnist(500, 100);
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/mlp/tests/fixtures");
    for kind in ["sgd", "adam"] {
        let old =
            Checkpoint::load(&fixtures.join(format!("v1-{kind}-784-16-10.safetensors"))).unwrap();
        let then =
            Checkpoint::load(&fixtures.join(format!("v1-{kind}-784-16-10-resumed.safetensors")))
                .unwrap();
        let settings = pipelined(1, old.batch_size, old.seed, 40);
        let now = train(
            &gpu,
            &data,
            Start::Resume(Box::new(old)),
            &settings,
            &mut (),
        )
        .unwrap()
        .checkpoint;
        assert_eq!(now.epoch, 3);
        assert_eq!(now.optimizer_state.step, then.optimizer_state.step);
        assert_eq!(now.history.len(), 3);
        assert_eq!(now.history[..2], then.history[..2]);
        let (a, b) = (&now.history[2], &then.history[2]);
        assert!(
            (a.train_loss - b.train_loss).abs() < 1e-4,
            "{kind}: {a:?} vs {b:?}"
        );
        let (p, q) = (now.params.flatten(), then.params.flatten());
        let worst = p
            .iter()
            .zip(&q)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0f32, f32::max);
        assert!(worst < 1e-4, "{kind}: parameters differ by up to {worst}");
    }
}
