//! Data sets on the GPU in shards, and the order in which an epoch visits them.
//!
//! A storage buffer binding has a device limit (`max_storage_buffer_binding_size`: 128 MiB on
//! lavapipe, where MNIST's 60,000 training images as `f32` take 188 MB), so a data set is
//! uploaded as [`shard_len`]-sized shards. Each shard is shuffled on its own ([`epoch_order`])
//! and an epoch's chunks of steps alternate between the shards ([`chunk_plan`]), so a batch
//! never mixes shards.

use std::ops::Range;

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use wgsl_dsl::runtime::Gpu;

use super::error::TrainError;
use crate::data::Dataset;
use crate::model::{Evaluation, GpuDataset, GpuMlp};

/// The epoch's shuffle of `len` samples: ChaCha8 seeded from `seed` and the epoch (from 1), so
/// a resumed run shuffles exactly as an uninterrupted one.
pub fn epoch_order(len: usize, seed: u64, epoch: usize) -> Vec<u32> {
    let mix = seed ^ (epoch as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut rng = ChaCha8Rng::seed_from_u64(mix);
    let mut order: Vec<u32> = (0..len as u32).collect();
    order.shuffle(&mut rng);
    order
}

/// Samples per shard: as many images (`f32`) as one storage buffer binding of this device holds
/// (`max_storage_buffer_binding_size`, 128 MiB on lavapipe: 42,799 MNIST images).
pub fn shard_len(gpu: &Gpu, inputs: usize) -> usize {
    let limit = gpu.limits().max_storage_buffer_binding_size as usize;
    (limit / (size_of::<f32>() * inputs.max(1))).max(1)
}

/// Uploads a host data set to the model's GPU, once, in as few shards as the device's storage
/// buffer binding size allows ([`shard_len`]): one for the MNIST test set, two for its training
/// set on lavapipe.
///
/// # Errors
/// [`TrainError::InputSize`] if the images do not have the model's input size;
/// [`TrainError::Model`] for allocation failures.
pub fn upload(gpu: &Gpu, model: &GpuMlp, data: &Dataset) -> Result<Vec<GpuDataset>, TrainError> {
    let inputs = model.config().inputs;
    if data.features() != inputs {
        return Err(TrainError::InputSize {
            model: inputs,
            data: data.features(),
        });
    }
    let per = shard_len(gpu, inputs);
    data.labels
        .chunks(per)
        .zip(data.images.chunks(per * inputs))
        .map(|(labels, images)| Ok(model.upload_dataset(gpu, images, labels)?))
        .collect()
}

/// Evaluates the model on every shard and merges the results (predictions in data set order,
/// the mean loss weighted by shard size).
///
/// # Errors
/// [`TrainError::Model`] for GPU failures or an empty shard.
pub fn evaluate(
    gpu: &Gpu,
    model: &mut GpuMlp,
    shards: &[GpuDataset],
) -> Result<Evaluation, TrainError> {
    let mut all = Evaluation {
        correct: 0,
        total: 0,
        predictions: Vec::new(),
        mean_loss: 0.0,
    };
    let mut loss_sum = 0.0f64;
    for shard in shards {
        let e = model.evaluate(gpu, shard)?;
        all.correct += e.correct;
        all.total += e.total;
        all.predictions.extend(e.predictions);
        loss_sum += f64::from(e.mean_loss) * e.total as f64;
    }
    all.mean_loss = (loss_sum / all.total.max(1) as f64) as f32;
    Ok(all)
}

/// The epoch's chunks: `(shard, steps of that shard)`, at most `per_chunk` steps each, the
/// shards' chunks interleaved round-robin; every step of every shard exactly once, in order.
pub fn chunk_plan(shard_steps: &[usize], per_chunk: usize) -> Vec<(usize, Range<usize>)> {
    let per_chunk = per_chunk.max(1);
    let mut out = Vec::new();
    let mut next = vec![0; shard_steps.len()];
    let total: usize = shard_steps.iter().map(|s| s.div_ceil(per_chunk)).sum();
    while out.len() < total {
        for (k, &steps) in shard_steps.iter().enumerate() {
            if next[k] < steps {
                let end = (next[k] + per_chunk).min(steps);
                out.push((k, next[k]..end));
                next[k] = end;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_plan_covers_every_step_once_interleaving_shards() {
        let s = chunk_plan(&[7, 3], 3);
        assert_eq!(s, vec![(0, 0..3), (1, 0..3), (0, 3..6), (0, 6..7)]);
        let one = chunk_plan(&[938], 40);
        assert_eq!(one.len(), 24);
        assert!(one.windows(2).all(|w| w[0].1.end == w[1].1.start));
        assert_eq!(one.last(), Some(&(0, 920..938)));
    }

    #[test]
    fn epoch_order_is_a_seeded_permutation() {
        let a = epoch_order(61, 3, 1);
        let mut sorted = a.clone();
        sorted.sort();
        assert_eq!(sorted, (0..61).collect::<Vec<u32>>());
        assert_eq!(a, epoch_order(61, 3, 1));
        assert_ne!(a, epoch_order(61, 3, 2));
        assert_ne!(a, epoch_order(61, 4, 1));
    }
}
