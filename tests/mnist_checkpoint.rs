//! Checkpoints: round trips (SGD and Adam, odd sizes), files written by earlier versions, and the
//! errors for corrupt, truncated, mismatched and non-finite files. No GPU needed.

use std::path::Path;

use mlp::checkpoint::{Checkpoint, CheckpointError, EpochRecord, write_atomic};
use mlp::config::MlpConfig;
use mlp::model::{OptimizerConfig, OptimizerState};
use mlp::params::Params;
use mlp::schedule::{Decay, LrSchedule};
use rand::{Rng, SeedableRng};

fn config() -> MlpConfig {
    MlpConfig {
        inputs: 37,
        hidden: vec![45, 13],
        classes: 10,
    }
}

/// A checkpoint with random parameters and slots (`slots_per_tensor` groups).
fn checkpoint(
    optimizer: OptimizerConfig,
    slots_per_tensor: usize,
    schedule: LrSchedule,
) -> Checkpoint {
    let config = config();
    let params = Params::init(&config, 7);
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    let tensors: Vec<usize> = params
        .layers
        .iter()
        .flat_map(|l| [l.weight.len(), l.bias.len()])
        .collect();
    let slots = (0..slots_per_tensor)
        .flat_map(|_| tensors.iter())
        .map(|&n| (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect())
        .collect();
    Checkpoint {
        config,
        params,
        optimizer,
        optimizer_state: OptimizerState { step: 1234, slots },
        schedule,
        epoch: 3,
        batch_size: 61,
        seed: u64::MAX - 5,
        history: (1..=3)
            .map(|e| EpochRecord {
                epoch: e,
                train_loss: 0.1 + 1.0 / e as f32,
                test_accuracy: 0.9 + 0.01 * e as f64,
                train_seconds: 1.25 * e as f64,
                eval_seconds: 0.5 * e as f64,
            })
            .collect(),
    }
}

fn sgd() -> Checkpoint {
    checkpoint(
        OptimizerConfig::Sgd {
            lr: 0.1,
            momentum: 0.9,
            weight_decay: 1e-4,
        },
        1,
        LrSchedule {
            warmup_steps: 100,
            decay: Decay::Cosine {
                steps: 4590,
                final_factor: 0.01,
            },
        },
    )
}

fn adam() -> Checkpoint {
    checkpoint(
        OptimizerConfig::Adam {
            lr: 1e-3,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
        },
        2,
        LrSchedule {
            warmup_steps: 0,
            decay: Decay::Step {
                every: 938,
                gamma: 0.5,
            },
        },
    )
}

/// The file's entries besides `keep`.
fn leftovers(dir: &Path, keep: &[&str]) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !keep.contains(&n.as_str()))
        .collect()
}

#[test]
fn round_trip_sgd_and_adam() {
    let dir = tempfile::tempdir().unwrap();
    for c in [sgd(), adam()] {
        let path = dir.path().join("m.safetensors");
        c.save(&path).unwrap();
        let back = Checkpoint::load(&path).unwrap();
        assert_eq!(back, c);
        assert_eq!(
            leftovers(dir.path(), &["m.safetensors"]),
            Vec::<String>::new()
        );
    }
}

#[test]
fn tensors_are_named_and_shaped_as_documented() {
    let c = adam();
    let bytes = c.to_bytes(Path::new("x")).unwrap();
    let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
    let shape = |n: &str| st.tensor(n).unwrap().shape().to_vec();
    assert_eq!(shape("layers.0.weight"), [45, 37]);
    assert_eq!(shape("layers.1.bias"), [13]);
    assert_eq!(shape("layers.2.weight"), [10, 13]);
    assert_eq!(shape("optimizer.m.layers.2.weight"), [10, 13]);
    assert_eq!(shape("optimizer.v.layers.0.bias"), [45]);
    let first = st.tensor("layers.0.weight").unwrap();
    let w0 = f32::from_le_bytes(first.data()[..4].try_into().unwrap());
    assert_eq!(w0, c.params.layers[0].weight[0]);
    let (_, meta) = safetensors::SafeTensors::read_metadata(&bytes).unwrap();
    let meta = meta.metadata().clone().unwrap();
    assert_eq!(meta["step"], "1234");
    let config: serde_json::Value = serde_json::from_str(&meta["config"]).unwrap();
    assert_eq!(config["hidden"], serde_json::json!([45, 13]));
}

#[test]
fn corrupt_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.safetensors");
    let mut bytes = sgd().to_bytes(&path).unwrap();
    // Scramble the JSON header.
    for b in &mut bytes[8..40] {
        *b = b'#';
    }
    let err = load_error(&path, &bytes);
    assert!(matches!(err, CheckpointError::Format { .. }), "{err}");
    assert!(err.to_string().contains("m.safetensors"), "{err}");
    // Not a safetensors file at all.
    let err = load_error(&path, b"hello");
    assert!(matches!(err, CheckpointError::Format { .. }), "{err}");
}

#[test]
fn truncated_and_padded_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.safetensors");
    let bytes = adam().to_bytes(&path).unwrap();
    for cut in [bytes.len() - 1, bytes.len() / 2, 100, 7, 0] {
        let err = load_error(&path, &bytes[..cut]);
        assert!(
            matches!(err, CheckpointError::Format { .. }),
            "{cut}: {err}"
        );
    }
    let mut padded = bytes.clone();
    padded.extend_from_slice(&[0; 4]);
    let err = load_error(&path, &padded);
    assert!(matches!(err, CheckpointError::Format { .. }), "{err}");
}

/// `bytes` with `from` replaced by `to` (same length), once.
fn patched(bytes: &[u8], from: &str, to: &str) -> Vec<u8> {
    assert_eq!(from.len(), to.len());
    let mut bytes = bytes.to_vec();
    let at = bytes
        .windows(from.len())
        .position(|w| w == from.as_bytes())
        .unwrap();
    bytes[at..at + to.len()].copy_from_slice(to.as_bytes());
    bytes
}

/// The error of loading `bytes` written to `path`.
#[track_caller]
fn load_error(path: &Path, bytes: &[u8]) -> CheckpointError {
    std::fs::write(path, bytes).unwrap();
    Checkpoint::load(path).unwrap_err()
}

#[test]
fn shape_mismatch() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.safetensors");
    let bytes = sgd().to_bytes(&path).unwrap();
    // The metadata now claims 44 hidden units where the tensors have 45.
    let err = load_error(&path, &patched(&bytes, "[45,13]", "[44,13]"));
    match &err {
        CheckpointError::Shape { name, expected, .. } => {
            assert_eq!(name, "layers.0.weight");
            assert_eq!(expected, &[44, 37]);
        }
        other => panic!("expected a shape error, got {other}"),
    }
}

#[test]
fn bad_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.safetensors");
    let good = adam().to_bytes(&path).unwrap();
    let metadata_key = |from: &str, to: &str| match load_error(&path, &patched(&good, from, to)) {
        CheckpointError::Metadata { key, .. } => key,
        other => panic!("{from} -> {to}: expected a metadata error, got {other}"),
    };
    // Inside the metadata's JSON string.
    assert_eq!(metadata_key("adam", "adan"), "optimizer");
    assert_eq!(metadata_key(r#"gamma\":0.5"#, r#"gamma\":7.5"#), "schedule");
    let err = load_error(&path, &patched(&good, r#"inputs\":37"#, r#"inputs\": 0"#));
    assert!(matches!(err, CheckpointError::Config { .. }), "{err}");
    let err = load_error(
        &path,
        &patched(
            &good,
            "optimizer.v.layers.1.bias",
            "optimizer.w.layers.1.bias",
        ),
    );
    assert!(
        matches!(&err, CheckpointError::MissingTensor { name, .. } if name == "optimizer.v.layers.1.bias"),
        "{err}"
    );
}

/// `bytes` with element `index` of tensor `name` set to `value`.
fn with_element(bytes: &[u8], name: &str, index: usize, value: f32) -> Vec<u8> {
    let (header, meta) = safetensors::SafeTensors::read_metadata(bytes).unwrap();
    let (start, end) = meta.info(name).unwrap().data_offsets;
    let at = 8 + header + start + 4 * index;
    assert!(at + 4 <= 8 + header + end, "{name} has no element {index}");
    let mut bytes = bytes.to_vec();
    bytes[at..at + 4].copy_from_slice(&value.to_le_bytes());
    bytes
}

/// A file whose header is valid but whose tensors hold NaN or an infinity (a parameter, an
/// optimizer slot) is refused, naming the tensor and the element.
#[test]
fn non_finite_tensors_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.safetensors");
    let good = adam().to_bytes(&path).unwrap();
    for (name, index, value) in [
        ("layers.1.weight", 123, f32::NAN),
        ("layers.2.bias", 9, f32::INFINITY),
        ("optimizer.v.layers.0.bias", 0, f32::NEG_INFINITY),
    ] {
        let err = load_error(&path, &with_element(&good, name, index, value));
        match &err {
            CheckpointError::NonFinite {
                name: n,
                index: i,
                value: v,
                ..
            } => {
                assert_eq!((n.as_str(), *i), (name, index));
                assert_eq!(v.to_bits(), value.to_bits());
            }
            other => panic!("{name}: expected a non-finite error, got {other}"),
        }
        let msg = err.to_string();
        for needle in [
            "m.safetensors",
            name,
            &format!("index {index}"),
            "non-finite",
        ] {
            assert!(msg.contains(needle), "`{needle}` not in `{msg}`");
        }
    }
    // The unpatched bytes still load.
    std::fs::write(&path, &good).unwrap();
    assert_eq!(Checkpoint::load(&path).unwrap(), adam());
}

/// Saving refuses what loading would refuse, and writes nothing: a parameter or slot that is NaN
/// or infinite, or a history number (serde_json would write it as `null`).
#[test]
fn non_finite_checkpoint_is_not_saved() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.safetensors");
    let mut c = sgd();
    c.params.layers[1].weight[7] = f32::NAN;
    match c.save(&path).unwrap_err() {
        CheckpointError::NonFinite { name, index, .. } => {
            assert_eq!((name.as_str(), index), ("layers.1.weight", 7));
        }
        other => panic!("expected a non-finite error, got {other}"),
    }
    let mut c = adam();
    c.optimizer_state.slots[8][2] = f32::INFINITY;
    let err = c.save(&path).unwrap_err();
    assert!(
        matches!(&err, CheckpointError::NonFinite { name, index: 2, .. } if name == "optimizer.v.layers.1.weight"),
        "{err}"
    );
    let mut c = sgd();
    c.history[1].train_loss = f32::NAN;
    let err = c.save(&path).unwrap_err();
    assert!(matches!(err, CheckpointError::Inconsistent { .. }), "{err}");
    assert!(err.to_string().contains("epoch 2"), "{err}");
    assert_eq!(leftovers(dir.path(), &[]), Vec::<String>::new());
}

#[test]
fn missing_file() {
    let dir = tempfile::tempdir().unwrap();
    let err = Checkpoint::load(&dir.path().join("none.safetensors")).unwrap_err();
    assert!(matches!(err, CheckpointError::Io { .. }), "{err}");
}

#[test]
fn inconsistent_checkpoint_is_not_saved() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.safetensors");
    let mut c = sgd();
    c.optimizer_state.slots.pop();
    let err = c.save(&path).unwrap_err();
    assert!(matches!(err, CheckpointError::Inconsistent { .. }), "{err}");
    let mut c = sgd();
    c.params.layers[1].bias.push(0.0);
    assert!(matches!(
        c.save(&path),
        Err(CheckpointError::Inconsistent { .. })
    ));
    assert!(!path.exists());
}

#[test]
fn failed_write_keeps_the_old_file_and_leaves_no_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.safetensors");
    write_atomic(&path, b"old").unwrap();
    write_atomic(&path, b"new content").unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"new content");
    // The destination is a non-empty directory: the rename fails, the temporary is removed.
    let blocked = dir.path().join("blocked");
    std::fs::create_dir(&blocked).unwrap();
    std::fs::write(blocked.join("inside"), b"x").unwrap();
    assert!(sgd().save(&blocked).is_err());
    assert_eq!(std::fs::read(blocked.join("inside")).unwrap(), b"x");
    let mut left = leftovers(dir.path(), &["m.safetensors", "blocked"]);
    left.sort();
    assert_eq!(left, Vec::<String>::new());
    // A missing directory is an I/O error naming the file.
    let err = sgd()
        .save(&dir.path().join("no/such/dir/m.safetensors"))
        .unwrap_err();
    assert!(matches!(err, CheckpointError::Io { .. }), "{err}");
}

/// Files written atomically get the mode `File::create` gives a new file (0o666 less the umask,
/// read here from a file made that way), not a temporary file's 0o600; writing over a file keeps
/// its mode, whatever it is.
#[cfg(unix)]
#[test]
fn written_files_get_the_mode_of_a_plain_create() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
    let plain = dir.path().join("plain");
    std::fs::File::create(&plain).unwrap();
    let expected = mode(&plain);
    assert_eq!(expected & !0o666, 0, "{expected:o}");
    let path = dir.path().join("m.safetensors");
    write_atomic(&path, b"old").unwrap();
    assert_eq!(mode(&path), expected, "new: {:o}", mode(&path));
    write_atomic(&path, b"new content").unwrap();
    assert_eq!(mode(&path), expected, "overwritten: {:o}", mode(&path));
    let saved = dir.path().join("saved.safetensors");
    sgd().save(&saved).unwrap();
    assert_eq!(mode(&saved), expected, "saved: {:o}", mode(&saved));
    for kept in [0o640, 0o604] {
        std::fs::set_permissions(&saved, std::fs::Permissions::from_mode(kept)).unwrap();
        adam().save(&saved).unwrap();
        assert_eq!(mode(&saved), kept, "{:o}", mode(&saved));
    }
    assert_eq!(Checkpoint::load(&saved).unwrap(), adam());
}

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("crates/mlp/tests/fixtures")
        .join(name)
}

/// Checkpoints written by the hand-built JSON of commit 82f9de3 (format `wgsl-dsl-mlp/1`, see
/// the fixtures' README) load with every value they were written with, and save again into a
/// file that loads to the same checkpoint.
#[test]
fn files_written_before_serde_still_load() {
    let sgd = Checkpoint::load(&fixture("v1-sgd-784-16-10.safetensors")).unwrap();
    assert_eq!(sgd.config.layer_sizes(), [(784, 16), (16, 10)]);
    assert_eq!(
        sgd.optimizer,
        OptimizerConfig::Sgd {
            lr: 0.05,
            momentum: 0.9,
            weight_decay: 0.0
        }
    );
    assert_eq!((sgd.epoch, sgd.batch_size, sgd.seed), (2, 64, 0));
    assert_eq!(sgd.optimizer_state.step, 16);
    assert_eq!(sgd.optimizer_state.slots.len(), 4);
    assert_eq!(sgd.history.len(), 2);
    assert_eq!(sgd.history[1].test_accuracy, 0.57);
    assert_eq!(sgd.history[1].train_loss, 1.8371131420135498f64 as f32);
    assert_eq!(sgd.history[0].train_seconds, 0.423282456);
    assert_eq!(sgd.history[0].eval_seconds, 0.0);
    let adam = Checkpoint::load(&fixture("v1-adam-784-16-10.safetensors")).unwrap();
    assert_eq!(
        adam.optimizer,
        OptimizerConfig::Adam {
            lr: 1e-3,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8
        }
    );
    assert_eq!(
        (adam.epoch, adam.seed, adam.optimizer_state.step),
        (2, 3, 16)
    );
    assert_eq!(adam.optimizer_state.slots.len(), 8);
    // Written before schedules: a constant learning rate.
    assert_eq!(sgd.schedule, LrSchedule::CONSTANT);
    assert_eq!(adam.schedule, LrSchedule::CONSTANT);
    let dir = tempfile::tempdir().unwrap();
    for c in [sgd, adam] {
        let path = dir.path().join("again.safetensors");
        c.save(&path).unwrap();
        assert_eq!(Checkpoint::load(&path).unwrap(), c);
    }
}
