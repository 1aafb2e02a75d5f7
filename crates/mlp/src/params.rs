//! Parameters of the MLP: one weight matrix and one bias vector per linear layer, and their
//! initialisation.
//!
//! # Layout
//! - `weight`: `[outputs, inputs]`, row-major (as PyTorch's `nn.Linear.weight`): the weight from
//!   input `i` to output `o` is `weight[o * inputs + i]`.
//! - `bias`: `[outputs]`.
//!
//! On the GPU all tensors live in one flat buffer in the order `layer0.weight, layer0.bias,
//! layer1.weight, layer1.bias, ...` ([`Params::flatten`], [`tensor_offsets`]); gradients and
//! optimizer slots use the same layout.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::config::MlpConfig;

/// One linear layer `y = x W^T + b` with elements `T`: [`LayerParams`] (the model's, `f32`)
/// or [`RefLayer`](crate::reference::RefLayer) (the reference's, `f64`).
#[derive(Clone, Debug, PartialEq)]
pub struct Layer<T> {
    /// Input features.
    pub inputs: usize,
    /// Output features.
    pub outputs: usize,
    /// `[outputs, inputs]`, row-major.
    pub weight: Vec<T>,
    /// `[outputs]`.
    pub bias: Vec<T>,
}

/// The parameters of one linear layer `y = x W^T + b`.
pub type LayerParams = Layer<f32>;

/// The parameters of every layer, first to last.
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    /// One entry per linear layer.
    pub layers: Vec<LayerParams>,
}

/// Where each layer's tensors start in the flat layout: `(weight_offset, bias_offset)` per
/// layer, in elements.
pub fn tensor_offsets(config: &MlpConfig) -> Vec<(usize, usize)> {
    let mut offset = 0;
    config
        .layer_sizes()
        .into_iter()
        .map(|(i, o)| {
            let w = offset;
            let b = w + i * o;
            offset = b + o;
            (w, b)
        })
        .collect()
}

impl Params {
    /// PyTorch's `nn.Linear` initialisation, deterministic in `seed`: weights
    /// `kaiming_uniform_(a = sqrt(5))` (He et al. 2015, "Delving Deep into Rectifiers"), which is
    /// `U(-1/sqrt(in), 1/sqrt(in))`, and biases `U(-1/sqrt(in), 1/sqrt(in))`.
    ///
    /// The random stream is ChaCha8 seeded with `seed` (`rand_chacha`), so a seed gives the
    /// same parameters on every platform. Layers are drawn in order, weight before bias.
    pub fn init(config: &MlpConfig, seed: u64) -> Params {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let layers = config
            .layer_sizes()
            .into_iter()
            .map(|(inputs, outputs)| {
                let bound = 1.0 / (inputs.max(1) as f64).sqrt();
                let mut draw = |n: usize| -> Vec<f32> {
                    (0..n)
                        .map(|_| rng.random_range(-bound..bound) as f32)
                        .collect()
                };
                let weight = draw(inputs * outputs);
                let bias = draw(outputs);
                LayerParams {
                    inputs,
                    outputs,
                    weight,
                    bias,
                }
            })
            .collect();
        Params { layers }
    }

    /// Total number of parameters.
    pub fn len(&self) -> usize {
        self.layers
            .iter()
            .map(|l| l.weight.len() + l.bias.len())
            .sum()
    }

    /// True if there are no parameters.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether these parameters have the shapes `config` asks for.
    pub fn matches(&self, config: &MlpConfig) -> bool {
        let sizes = config.layer_sizes();
        sizes.len() == self.layers.len()
            && sizes.iter().zip(&self.layers).all(|(&(i, o), l)| {
                l.inputs == i && l.outputs == o && l.weight.len() == i * o && l.bias.len() == o
            })
    }

    /// All tensors in one vector, in the order `layer0.weight, layer0.bias, layer1.weight, ...`.
    pub fn flatten(&self) -> Vec<f32> {
        let mut out = Vec::with_capacity(self.len());
        for l in &self.layers {
            out.extend_from_slice(&l.weight);
            out.extend_from_slice(&l.bias);
        }
        out
    }

    /// The inverse of [`Params::flatten`]; `None` unless `flat.len()` is the parameter count of
    /// `config`.
    pub fn from_flat(config: &MlpConfig, flat: &[f32]) -> Option<Params> {
        if flat.len() != config.num_params() {
            return None;
        }
        let layers = config
            .layer_sizes()
            .into_iter()
            .zip(tensor_offsets(config))
            .map(|((inputs, outputs), (w, b))| LayerParams {
                inputs,
                outputs,
                weight: flat[w..b].to_vec(),
                bias: flat[b..b + outputs].to_vec(),
            })
            .collect();
        Some(Params { layers })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_is_deterministic_and_bounded() {
        let c = MlpConfig {
            inputs: 37,
            hidden: vec![45],
            classes: 11,
            ..MlpConfig::default()
        };
        let a = Params::init(&c, 7);
        assert_eq!(a, Params::init(&c, 7));
        assert_ne!(a, Params::init(&c, 8));
        assert!(a.matches(&c));
        for l in &a.layers {
            let bound = 1.0 / (l.inputs as f32).sqrt();
            assert!(l.weight.iter().chain(&l.bias).all(|v| v.abs() <= bound));
            // Uniform on (-bound, bound): the mean of |w| is about bound / 2.
            let mean_abs = l.weight.iter().map(|v| v.abs()).sum::<f32>() / l.weight.len() as f32;
            assert!(
                (mean_abs - bound / 2.0).abs() < 0.1 * bound,
                "{mean_abs} vs {bound}"
            );
        }
    }

    #[test]
    fn flatten_round_trips() {
        let c = MlpConfig {
            inputs: 5,
            hidden: vec![3, 4],
            classes: 2,
            ..MlpConfig::default()
        };
        let p = Params::init(&c, 1);
        let flat = p.flatten();
        assert_eq!(flat.len(), c.num_params());
        let offsets = tensor_offsets(&c);
        assert_eq!(offsets, vec![(0, 15), (18, 30), (34, 42)]);
        assert_eq!(flat[offsets[1].0], p.layers[1].weight[0]);
        assert_eq!(Params::from_flat(&c, &flat), Some(p));
        assert_eq!(Params::from_flat(&c, &flat[1..]), None);
    }
}
