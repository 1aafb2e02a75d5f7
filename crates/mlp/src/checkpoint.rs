//! Checkpoints: a trained model, its optimizer state and where training stands, in one
//! [safetensors](https://huggingface.co/docs/safetensors) file.
//!
//! # Format
//! Tensors, all `F32`, little-endian:
//! - `layers.{i}.weight`: `[outputs, inputs]`, row-major (as PyTorch's `nn.Linear.weight`);
//! - `layers.{i}.bias`: `[outputs]`;
//! - optimizer slots, each shaped like the parameter it belongs to: SGD with momentum
//!   `optimizer.velocity.layers.{i}.weight` / `.bias`; Adam (Kingma & Ba 2015)
//!   `optimizer.m.layers.{i}.weight`, ..., then `optimizer.v.layers.{i}.weight`, ...
//!
//! Metadata (string to string; every value is JSON, written and read with serde):
//! - `format`: [`FORMAT`] (a JSON-less plain string, as in every version);
//! - `config`: [`MlpConfig`], `{"inputs": 784, "hidden": [128], "classes": 10, "activation":
//!   "relu"}`; files written before the activation was recorded have no `activation` and read
//!   as `relu` (what they were trained with; the format's version is unchanged: an older
//!   reader ignores the key);
//! - `optimizer`: [`OptimizerConfig`], `{"kind": "sgd", "lr", "momentum", "weight_decay"}` or
//!   `{"kind": "adam", "lr", "beta1", "beta2", "eps"}`;
//! - `optimizer_slots`: the number of slot tensors; `step`: optimizer steps taken;
//! - `epoch`: epochs completed; `batch_size`; `seed`; `history`: one [`EpochRecord`] per epoch,
//!   `{"epoch", "train_loss", "test_accuracy", "seconds", "eval_seconds"}`;
//! - `schedule`: the learning-rate schedule in steps ([`LrSchedule`]), whose position is `step`;
//!   absent (a constant learning rate) in files written before schedules existed;
//! - `train_images`: how many training images the run trained on (the first N of the training
//!   set: `mnist train --limit-train`), `null` when unknown; absent in files written before it
//!   was recorded;
//! - `sha256`: the digests below, `{"metadata": HEX, "tensors": {NAME: HEX, ...}}`.
//!
//! # Digests
//! Each tensor's SHA-256 (FIPS 180-4, with the `sha2` crate) is that of its little-endian bytes
//! as stored (`sha256sum` of the tensor's byte range gives the same). The metadata's is that of
//! every other metadata entry and every tensor digest, so a changed value or a changed recorded
//! digest is found too: the entries sorted by key, each written as its key's length (`u64`,
//! little-endian), the key, its value's length and the value, then the tensors' names and
//! digests sorted by name, written the same way. Loading checks the metadata digest before the
//! tensors' (so a mismatch in a tensor is damage to its data) and the file is refused at the
//! first mismatch ([`CheckpointError::Digest`]). They cover every byte of the file but the JSON
//! syntax of the header (whitespace, the order of keys), which holds no value.
//!
//! # Versions
//! [`FORMAT`] (`wgsl-dsl-mlp/2`) files carry the digests and must. Files of
//! [`FORMAT_WITHOUT_DIGESTS`] (`wgsl-dsl-mlp/1`, written before the digests) still load, with a
//! [`CheckpointWarning::NoDigest`] for the caller to show: damage to their tensors that keeps the
//! values finite cannot be found. Saved again, they get digests. Files written before the
//! metadata was derived with serde (format `wgsl-dsl-mlp/1` without `eval_seconds`) load
//! unchanged: `tests/mnist_checkpoint.rs` reads fixtures written then.
//!
//! Files are written atomically ([`write_atomic`]): a temporary file in the same directory,
//! flushed to disk, then renamed over the destination, so a reader sees the old file or the new
//! one, never a part. Loading checks every shape against the config in the metadata, and that
//! no tensor holds NaN or an infinity; saving refuses such tensors, so it never writes a file
//! that would not load.

use std::collections::{BTreeMap, HashMap};
#[cfg(unix)]
use std::fs::Permissions;
use std::io::Write;
#[cfg(unix)]
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use safetensors::tensor::{Dtype, SafeTensors, TensorView};
use serde::Serialize;
use serde::de::DeserializeOwned;
use sha2::{Digest as _, Sha256};

use crate::config::{ConfigError, MlpConfig};
use crate::model::{OptimizerConfig, OptimizerState};
use crate::params::{LayerParams, Params};
use crate::schedule::LrSchedule;

/// The value of the `format` metadata key in the files written now (with digests).
pub const FORMAT: &str = "wgsl-dsl-mlp/2";

/// The `format` of files written before the digests; they load with a warning.
pub const FORMAT_WITHOUT_DIGESTS: &str = "wgsl-dsl-mlp/1";

/// The metadata key of the digests.
const DIGESTS_KEY: &str = "sha256";

/// What part of a checkpoint does not match its digest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Corrupted {
    /// The tensor of this name: its data changed.
    Tensor(String),
    /// The metadata: a value or a recorded tensor digest changed.
    Metadata,
}

impl std::fmt::Display for Corrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Corrupted::Tensor(name) => write!(f, "tensor `{name}`"),
            Corrupted::Metadata => f.write_str("the metadata"),
        }
    }
}

/// Something a loaded checkpoint's caller should tell its user (the library prints nothing).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CheckpointWarning {
    /// The file has no digests (written before them): damage to it may go unnoticed.
    NoDigest {
        /// The file.
        path: PathBuf,
    },
}

impl std::fmt::Display for CheckpointWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CheckpointWarning::NoDigest { path } => write!(
                f,
                "{}: written before checkpoints carried SHA-256 digests (format \
                 {FORMAT_WITHOUT_DIGESTS}), so damage to its tensors cannot be detected; save it \
                 again to add them (e.g. `mnist train --resume` with `--save`)",
                path.display()
            ),
        }
    }
}

/// What went wrong saving or loading a checkpoint. Every variant names the file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CheckpointError {
    /// The file could not be read, or written and renamed into place.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a valid safetensors file (corrupt header, truncated or padded data).
    #[error("{}: not a valid safetensors checkpoint (corrupt or truncated): {source}", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// The safetensors crate's error.
        #[source]
        source: safetensors::SafeTensorError,
    },
    /// A metadata entry is missing or unreadable.
    #[error("{}: metadata `{key}`: {reason}", path.display())]
    Metadata {
        /// The file.
        path: PathBuf,
        /// The metadata key.
        key: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// The config in the metadata describes no usable model.
    #[error("{}: invalid model config: {source}", path.display())]
    Config {
        /// The file.
        path: PathBuf,
        /// Why the config is refused.
        #[source]
        source: ConfigError,
    },
    /// A tensor the config calls for is absent.
    #[error("{}: missing tensor `{name}`", path.display())]
    MissingTensor {
        /// The file.
        path: PathBuf,
        /// The tensor's name.
        name: String,
    },
    /// A tensor's shape or element type is not the one the config calls for.
    #[error("{}: tensor `{name}` is {found}, expected F32 {expected:?}", path.display())]
    Shape {
        /// The file.
        path: PathBuf,
        /// The tensor's name.
        name: String,
        /// The shape the config calls for.
        expected: Vec<usize>,
        /// The element type and shape found, e.g. `F32 [10, 128]`.
        found: String,
    },
    /// A tensor holds NaN or an infinity: found loading (a damaged file, or one written by a run
    /// that diverged) or refused saving (nothing is written then).
    #[error("{}: tensor `{name}` has a non-finite value ({value}) at index {index}", path.display())]
    NonFinite {
        /// The file.
        path: PathBuf,
        /// The tensor's name.
        name: String,
        /// The first non-finite element's index in the row-major data.
        index: usize,
        /// That element (NaN, inf or -inf).
        value: f32,
    },
    /// A tensor or the metadata does not have the SHA-256 digest the file records: the file was
    /// changed or damaged after it was written.
    #[error(
        "{}: {what} does not match its SHA-256 digest: the file was changed or damaged after it \
         was written",
        path.display()
    )]
    Digest {
        /// The file.
        path: PathBuf,
        /// The tensor, or the metadata.
        what: Corrupted,
        /// The digest recorded in the file, 64 hex digits.
        expected: String,
        /// The digest of what the file holds.
        found: String,
    },
    /// Saving a checkpoint whose parameters or slots do not match its config.
    #[error("{}: cannot save: {reason}", path.display())]
    Inconsistent {
        /// The file.
        path: PathBuf,
        /// What disagrees.
        reason: String,
    },
}

/// What one epoch of training achieved (kept in checkpoints, so plots survive `--resume`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct EpochRecord {
    /// The epoch, counted from 1.
    pub epoch: usize,
    /// Mean training cross-entropy loss over the epoch's steps (nats).
    pub train_loss: f32,
    /// Test accuracy after the epoch, in `[0, 1]`.
    pub test_accuracy: f64,
    /// Wall-clock seconds the epoch's training took (in files written before `eval_seconds`
    /// existed, training and evaluation).
    #[serde(rename = "seconds")]
    pub train_seconds: f64,
    /// Wall-clock seconds the evaluation after the epoch took (0 in older files).
    #[serde(default)]
    pub eval_seconds: f64,
}

/// A model, its optimizer and where training stands.
#[derive(Clone, Debug, PartialEq)]
pub struct Checkpoint {
    /// The model's shape.
    pub config: MlpConfig,
    /// The parameters, shaped by `config`.
    pub params: Params,
    /// The optimizer and its hyperparameters.
    pub optimizer: OptimizerConfig,
    /// The optimizer's step count and slots (see the module docs for their names and order).
    pub optimizer_state: OptimizerState,
    /// The learning-rate schedule (its position is `optimizer_state.step`).
    pub schedule: LrSchedule,
    /// Epochs completed.
    pub epoch: usize,
    /// The batch size training used.
    pub batch_size: usize,
    /// The seed of initialisation and shuffling.
    pub seed: u64,
    /// One record per completed epoch.
    pub history: Vec<EpochRecord>,
    /// How many training images the run trained on (the first N of the training set); `None`
    /// when unknown (files written before it was recorded).
    pub train_images: Option<usize>,
}

/// Names of the parameter tensors in order: `layers.0.weight, layers.0.bias, layers.1.weight, ...`
/// with their shapes.
fn param_tensors(config: &MlpConfig) -> Vec<(String, Vec<usize>)> {
    config
        .layer_sizes()
        .into_iter()
        .enumerate()
        .flat_map(|(i, (inputs, outputs))| {
            [
                (format!("layers.{i}.weight"), vec![outputs, inputs]),
                (format!("layers.{i}.bias"), vec![outputs]),
            ]
        })
        .collect()
}

/// Names and shapes of `count` optimizer slots: groups of one slot per parameter tensor, named
/// after the optimizer's state (`velocity`; `m`, `v`).
fn slot_tensors(
    config: &MlpConfig,
    optimizer: &OptimizerConfig,
    count: usize,
) -> Vec<(String, Vec<usize>)> {
    let groups: &[&str] = match optimizer {
        OptimizerConfig::Sgd { .. } => &["velocity"],
        OptimizerConfig::Adam { .. } => &["m", "v"],
    };
    let params = param_tensors(config);
    (0..count)
        .map(|k| {
            let g = k / params.len().max(1);
            let (name, shape) = &params[k % params.len().max(1)];
            let group = groups.get(g).map_or(format!("slot{g}"), |s| s.to_string());
            (format!("optimizer.{group}.{name}"), shape.clone())
        })
        .collect()
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The digests of a file, as in its `sha256` metadata entry.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Digests {
    /// [`metadata_digest`] of the other entries and of `tensors`.
    metadata: String,
    /// Each tensor's name and [`sha256_hex`] of its bytes.
    tensors: BTreeMap<String, String>,
}

/// SHA-256 of `bytes`, as 64 lower-case hex digits.
fn sha256_hex(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

/// SHA-256 of the metadata entries other than the digests' and of the tensor digests (see the
/// module docs for the encoding).
fn metadata_digest(
    metadata: &HashMap<String, String>,
    tensors: &BTreeMap<String, String>,
) -> String {
    let mut hasher = Sha256::new();
    let mut write = |bytes: &[u8]| {
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    };
    let entries: BTreeMap<&String, &String> =
        metadata.iter().filter(|(k, _)| *k != DIGESTS_KEY).collect();
    for (key, value) in entries.into_iter().chain(tensors) {
        write(key.as_bytes());
        write(value.as_bytes());
    }
    format!("{:x}", hasher.finalize())
}

/// Whether `s` is a SHA-256 digest as written: 64 lower-case hex digits.
fn is_digest(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// [`CheckpointError::NonFinite`] for the first NaN or infinity in tensor `name`, if any.
fn check_finite(path: &Path, name: &str, data: &[f32]) -> Result<(), CheckpointError> {
    match data.iter().position(|x| !x.is_finite()) {
        None => Ok(()),
        Some(index) => Err(CheckpointError::NonFinite {
            path: path.to_path_buf(),
            name: name.to_string(),
            index,
            value: data[index],
        }),
    }
}

impl Checkpoint {
    /// Serializes into safetensors bytes.
    ///
    /// # Errors
    /// [`CheckpointError::Inconsistent`] if the parameters or slots do not match the config or
    /// the history holds a non-finite number, [`CheckpointError::NonFinite`] if a tensor holds
    /// NaN or an infinity (`path` is only used to name the destination in the error): such a
    /// file could not be loaded again.
    pub fn to_bytes(&self, path: &Path) -> Result<Vec<u8>, CheckpointError> {
        let inconsistent = |reason: String| CheckpointError::Inconsistent {
            path: path.to_path_buf(),
            reason,
        };
        if !self.params.matches(&self.config) {
            return Err(inconsistent(
                "the parameters do not have the config's shapes".into(),
            ));
        }
        let expected = self.optimizer.slots_per_tensor() * 2 * self.config.num_layers();
        if self.optimizer_state.slots.len() != expected {
            return Err(inconsistent(format!(
                "{} optimizer slots, the optimizer keeps {expected}",
                self.optimizer_state.slots.len()
            )));
        }
        let slot_names = slot_tensors(
            &self.config,
            &self.optimizer,
            self.optimizer_state.slots.len(),
        );
        let mut named: Vec<(String, Vec<usize>, Vec<u8>)> = Vec::new();
        let params = self.params.layers.iter().flat_map(|l| [&l.weight, &l.bias]);
        for ((name, shape), data) in param_tensors(&self.config).into_iter().zip(params) {
            check_finite(path, &name, data)?;
            named.push((name, shape, f32_bytes(data)));
        }
        for ((name, shape), data) in slot_names.into_iter().zip(&self.optimizer_state.slots) {
            if data.len() != shape.iter().product::<usize>() {
                return Err(inconsistent(format!(
                    "optimizer slot `{name}` has {} elements, expected {shape:?}",
                    data.len()
                )));
            }
            check_finite(path, &name, data)?;
            named.push((name, shape, f32_bytes(data)));
        }
        // serde_json writes NaN and infinities as `null`, which would not load again.
        if let Some(r) = self.history.iter().find(|r| {
            !(r.train_loss.is_finite()
                && r.test_accuracy.is_finite()
                && r.train_seconds.is_finite()
                && r.eval_seconds.is_finite())
        }) {
            return Err(inconsistent(format!(
                "the history of epoch {} holds a non-finite number: {r:?}",
                r.epoch
            )));
        }
        let c = self;
        let mut metadata: HashMap<String, String> = [
            ("format", FORMAT.to_string()),
            ("config", to_json(&c.config, path)?),
            ("optimizer", to_json(&c.optimizer, path)?),
            (
                "optimizer_slots",
                to_json(&c.optimizer_state.slots.len(), path)?,
            ),
            ("step", to_json(&c.optimizer_state.step, path)?),
            ("epoch", to_json(&c.epoch, path)?),
            ("batch_size", to_json(&c.batch_size, path)?),
            ("seed", to_json(&c.seed, path)?),
            ("history", to_json(&c.history, path)?),
            ("schedule", to_json(&c.schedule, path)?),
            ("train_images", to_json(&c.train_images, path)?),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        let tensors: BTreeMap<String, String> = named
            .iter()
            .map(|(name, _, data)| (name.clone(), sha256_hex(data)))
            .collect();
        let digests = Digests {
            metadata: metadata_digest(&metadata, &tensors),
            tensors,
        };
        metadata.insert(DIGESTS_KEY.into(), to_json(&digests, path)?);
        let views = named
            .iter()
            .map(|(name, shape, data)| {
                TensorView::new(Dtype::F32, shape.clone(), data).map(|v| (name.clone(), v))
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| inconsistent(e.to_string()))?;
        safetensors::serialize(views, Some(metadata)).map_err(|e| inconsistent(e.to_string()))
    }

    /// Writes the checkpoint to `path` atomically (see [`write_atomic`]).
    ///
    /// # Errors
    /// [`CheckpointError::Inconsistent`], [`CheckpointError::NonFinite`] (nothing is written
    /// then), [`CheckpointError::Io`].
    pub fn save(&self, path: &Path) -> Result<(), CheckpointError> {
        let bytes = self.to_bytes(path)?;
        write_atomic(path, &bytes).map_err(|source| CheckpointError::Io {
            path: path.to_path_buf(),
            source,
        })
    }

    /// Reads and checks the checkpoint at `path`, dropping the warnings (use
    /// [`Checkpoint::load_with_warnings`] to show them).
    ///
    /// # Errors
    /// As [`Checkpoint::load_with_warnings`].
    pub fn load(path: &Path) -> Result<Checkpoint, CheckpointError> {
        Self::load_with_warnings(path).map(|(c, _)| c)
    }

    /// Reads and checks the checkpoint at `path`, with what its caller should tell the user
    /// (a file without digests).
    ///
    /// # Errors
    /// [`CheckpointError::Io`], then as [`Checkpoint::from_bytes_with_warnings`].
    pub fn load_with_warnings(
        path: &Path,
    ) -> Result<(Checkpoint, Vec<CheckpointWarning>), CheckpointError> {
        let bytes = std::fs::read(path).map_err(|source| CheckpointError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Self::from_bytes_with_warnings(&bytes, path)
    }

    /// [`Checkpoint::from_bytes_with_warnings`] without the warnings.
    ///
    /// # Errors
    /// As [`Checkpoint::from_bytes_with_warnings`].
    pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<Checkpoint, CheckpointError> {
        Self::from_bytes_with_warnings(bytes, path).map(|(c, _)| c)
    }

    /// Parses safetensors bytes (`path` names the source in errors): the metadata's values,
    /// then the metadata's digest, then each tensor's element type and shape against the config
    /// in the metadata, its digest, and that every element is finite (see the module docs).
    /// A file of [`FORMAT_WITHOUT_DIGESTS`] loads without the digest checks, with a
    /// [`CheckpointWarning::NoDigest`].
    ///
    /// # Errors
    /// [`CheckpointError::Format`] for a corrupt or truncated file, [`CheckpointError::Metadata`],
    /// [`CheckpointError::Config`], [`CheckpointError::Digest`],
    /// [`CheckpointError::MissingTensor`], [`CheckpointError::Shape`],
    /// [`CheckpointError::NonFinite`].
    pub fn from_bytes_with_warnings(
        bytes: &[u8],
        path: &Path,
    ) -> Result<(Checkpoint, Vec<CheckpointWarning>), CheckpointError> {
        let st = SafeTensors::deserialize(bytes).map_err(|source| CheckpointError::Format {
            path: path.to_path_buf(),
            source,
        })?;
        let (_, header) =
            SafeTensors::read_metadata(bytes).map_err(|source| CheckpointError::Format {
                path: path.to_path_buf(),
                source,
            })?;
        let empty = HashMap::new();
        let meta = Meta {
            map: header.metadata().as_ref().unwrap_or(&empty),
            path,
        };
        let format = meta.string("format")?;
        let digests: Option<Digests> = match format {
            FORMAT => Some(meta.json(DIGESTS_KEY)?),
            FORMAT_WITHOUT_DIGESTS => None,
            _ => {
                return Err(meta.error(
                    "format",
                    format!("`{format}`, expected `{FORMAT}` or `{FORMAT_WITHOUT_DIGESTS}`"),
                ));
            }
        };
        let config: MlpConfig = meta.json("config")?;
        config
            .validate()
            .map_err(|source| CheckpointError::Config {
                path: path.to_path_buf(),
                source,
            })?;
        let optimizer: OptimizerConfig = meta.json("optimizer")?;
        let n_slots: usize = meta.json("optimizer_slots")?;
        let expected = optimizer.slots_per_tensor() * 2 * config.num_layers();
        if n_slots != expected {
            return Err(meta.error(
                "optimizer_slots",
                format!("{n_slots}, but the optimizer keeps {expected} slot tensors"),
            ));
        }
        let history: Vec<EpochRecord> = meta.json("history")?;
        let schedule: LrSchedule = match meta.map.contains_key("schedule") {
            true => meta.json("schedule")?,
            false => LrSchedule::CONSTANT,
        };
        schedule
            .validate()
            .map_err(|e| meta.error("schedule", e.to_string()))?;
        let train_images: Option<usize> = match meta.map.contains_key("train_images") {
            true => meta.json("train_images")?,
            false => None,
        };
        let step: u64 = meta.json("step")?;
        let epoch: usize = meta.json("epoch")?;
        let batch_size: usize = meta.json("batch_size")?;
        let seed: u64 = meta.json("seed")?;
        let param_names = param_tensors(&config);
        let slot_names = slot_tensors(&config, &optimizer, n_slots);
        if let Some(d) = &digests {
            let bad = d
                .tensors
                .iter()
                .find(|(_, hex)| !is_digest(hex))
                .map(|(name, hex)| format!("`{hex}` for `{name}` is not a SHA-256 digest"))
                .or_else(|| {
                    (!is_digest(&d.metadata)).then(|| "the metadata's digest is not one".into())
                })
                .or_else(|| {
                    let names: Vec<&String> = param_names
                        .iter()
                        .chain(&slot_names)
                        .map(|(n, _)| n)
                        .collect();
                    let expected: std::collections::BTreeSet<&String> = names.into_iter().collect();
                    let recorded: std::collections::BTreeSet<&String> = d.tensors.keys().collect();
                    (expected != recorded).then(|| {
                        format!(
                            "digests for the tensors {recorded:?}, but the model has {expected:?}"
                        )
                    })
                });
            if let Some(reason) = bad {
                return Err(meta.error(DIGESTS_KEY, reason));
            }
            let found = metadata_digest(meta.map, &d.tensors);
            if found != d.metadata {
                return Err(CheckpointError::Digest {
                    path: path.to_path_buf(),
                    what: Corrupted::Metadata,
                    expected: d.metadata.clone(),
                    found,
                });
            }
        }

        let read = |name: &str, shape: &[usize]| -> Result<Vec<f32>, CheckpointError> {
            let t = st
                .tensor(name)
                .map_err(|_| CheckpointError::MissingTensor {
                    path: path.to_path_buf(),
                    name: name.to_string(),
                })?;
            if t.dtype() != Dtype::F32 || t.shape() != shape {
                return Err(CheckpointError::Shape {
                    path: path.to_path_buf(),
                    name: name.to_string(),
                    expected: shape.to_vec(),
                    found: format!("{:?} {:?}", t.dtype(), t.shape()),
                });
            }
            if let Some(d) = &digests {
                // Every name has a digest: checked above.
                let expected = d.tensors.get(name).cloned().unwrap_or_default();
                let found = sha256_hex(t.data());
                if found != expected {
                    return Err(CheckpointError::Digest {
                        path: path.to_path_buf(),
                        what: Corrupted::Tensor(name.to_string()),
                        expected,
                        found,
                    });
                }
            }
            let data: Vec<f32> = t
                .data()
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            check_finite(path, name, &data)?;
            Ok(data)
        };
        let mut tensors = param_names
            .into_iter()
            .map(|(name, shape)| read(&name, &shape))
            .collect::<Result<Vec<_>, _>>()?
            .into_iter();
        let layers = config
            .layer_sizes()
            .into_iter()
            .map(|(inputs, outputs)| LayerParams {
                inputs,
                outputs,
                // `param_tensors` yields a weight and a bias per layer.
                weight: tensors.next().unwrap_or_default(),
                bias: tensors.next().unwrap_or_default(),
            })
            .collect();
        let slots = slot_names
            .into_iter()
            .map(|(name, shape)| read(&name, &shape))
            .collect::<Result<Vec<_>, _>>()?;
        let warnings = match digests {
            Some(_) => Vec::new(),
            None => vec![CheckpointWarning::NoDigest {
                path: path.to_path_buf(),
            }],
        };
        let checkpoint = Checkpoint {
            params: Params { layers },
            optimizer_state: OptimizerState { step, slots },
            optimizer,
            epoch,
            batch_size,
            seed,
            history,
            schedule,
            config,
            train_images,
        };
        Ok((checkpoint, warnings))
    }
}

/// `value` as JSON (`path` names the destination in errors; serde_json fails only on types
/// it cannot represent, which the metadata has none of).
fn to_json<T: Serialize>(value: &T, path: &Path) -> Result<String, CheckpointError> {
    serde_json::to_string(value).map_err(|e| CheckpointError::Inconsistent {
        path: path.to_path_buf(),
        reason: format!("metadata cannot be written as JSON: {e}"),
    })
}

/// The metadata of one file, with errors naming it.
struct Meta<'a> {
    map: &'a HashMap<String, String>,
    path: &'a Path,
}

impl Meta<'_> {
    fn error(&self, key: &'static str, reason: String) -> CheckpointError {
        CheckpointError::Metadata {
            path: self.path.to_path_buf(),
            key,
            reason,
        }
    }

    fn string(&self, key: &'static str) -> Result<&str, CheckpointError> {
        self.map
            .get(key)
            .map(String::as_str)
            .ok_or_else(|| self.error(key, "missing".into()))
    }

    /// The value of `key`, parsed from JSON with serde.
    fn json<T: DeserializeOwned>(&self, key: &'static str) -> Result<T, CheckpointError> {
        let s = self.string(key)?;
        serde_json::from_str(s).map_err(|e| self.error(key, format!("`{s}`: {e}")))
    }
}

/// Writes `bytes` to `path` so that `path` holds either its old content or all of `bytes`, never
/// a part: a temporary file in the same directory, written, flushed to disk (`fsync`), renamed
/// over `path`, then the directory flushed (on Unix) so the rename itself survives a crash.
///
/// On Unix the file gets the permissions writing it with [`std::fs::File::create`] would give:
/// an existing regular file at `path` keeps its permission bits; a new one gets `0o666` less the
/// umask (the temporary is created with mode `0o666`, which `open(2)` masks with the umask, not
/// the `0o600` a temporary file gets by default). A symbolic or hard link at `path` is replaced
/// by the new file, not written through.
///
/// # Errors
/// The operating system's error from any of those steps; the temporary file is removed then.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".tmp-").suffix(".partial");
    #[cfg(unix)]
    builder.permissions(Permissions::from_mode(0o666));
    let mut tmp = builder.tempfile_in(dir)?;
    #[cfg(unix)]
    if let Ok(old) = std::fs::metadata(path)
        && old.is_file()
    {
        // Only the permission bits: set-user/group-ID would not survive a write in place either.
        let mode = old.permissions().mode() & 0o777;
        tmp.as_file()
            .set_permissions(Permissions::from_mode(mode))?;
    }
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    #[cfg(unix)]
    std::fs::File::open(dir)?.sync_all()?;
    Ok(())
}
