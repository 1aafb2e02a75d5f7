//! The model's shape: input features, hidden layer widths, classes, the hidden layers'
//! activation.

use crate::activation::Activation;

/// Why an [`MlpConfig`] is unusable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A layer has zero inputs or outputs.
    #[error("layer {layer} has {inputs} inputs and {outputs} outputs; both must be at least 1")]
    EmptyLayer {
        /// Index of the layer (0 = the first linear layer).
        layer: usize,
        /// Its input features.
        inputs: usize,
        /// Its output features.
        outputs: usize,
    },
    /// A size does not fit the `u32` the kernels index with.
    #[error("{what} = {value} is too large for the GPU kernels (at most {limit})")]
    TooLarge {
        /// What was measured.
        what: &'static str,
        /// Its value.
        value: usize,
        /// The largest value allowed.
        limit: usize,
    },
}

/// The largest parameter count (and any size) the kernels index with `u32`.
pub const MAX_ELEMENTS: usize = u32::MAX as usize / 2;

/// A multi-layer perceptron: `inputs -> hidden[0] (act) -> ... -> hidden[n-1] (act) -> classes`
/// (softmax, inside the loss). Every hidden layer is a linear layer followed by `activation`
/// (ReLU by default); the last linear layer produces the logits.
///
/// Serialized (checkpoint metadata) as `{"inputs": 784, "hidden": [128], "classes": 10,
/// "activation": "relu"}`; without `activation` (files written before it existed) it reads
/// as `relu`, what those models were trained with.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MlpConfig {
    /// Input features (784 for MNIST's 28x28 images).
    pub inputs: usize,
    /// Widths of the hidden layers, in order; may be empty (a linear softmax classifier).
    pub hidden: Vec<usize>,
    /// Output classes (10 for MNIST).
    pub classes: usize,
    /// The hidden layers' nonlinearity.
    #[serde(default)]
    pub activation: Activation,
}

impl Default for MlpConfig {
    /// 784 -> 128 (ReLU) -> 10, the source's network.
    fn default() -> Self {
        MlpConfig {
            inputs: 784,
            hidden: vec![128],
            classes: 10,
            activation: Activation::Relu,
        }
    }
}

impl MlpConfig {
    /// `(in_features, out_features)` of each linear layer, first to last.
    pub fn layer_sizes(&self) -> Vec<(usize, usize)> {
        let mut sizes = Vec::with_capacity(self.hidden.len() + 1);
        let mut prev = self.inputs;
        for &h in self.hidden.iter().chain(std::iter::once(&self.classes)) {
            sizes.push((prev, h));
            prev = h;
        }
        sizes
    }

    /// Number of linear layers (hidden layers + the output layer).
    pub fn num_layers(&self) -> usize {
        self.hidden.len() + 1
    }

    /// Total number of parameters (all weights and biases).
    pub fn num_params(&self) -> usize {
        self.layer_sizes()
            .iter()
            .map(|&(i, o)| i.saturating_mul(o).saturating_add(o))
            .fold(0usize, |a, b| a.saturating_add(b))
    }

    /// Check that every layer has at least one input and one output and that the parameter
    /// count fits the kernels' `u32` indexing.
    ///
    /// # Errors
    /// [`ConfigError::EmptyLayer`], [`ConfigError::TooLarge`].
    pub fn validate(&self) -> Result<(), ConfigError> {
        for (layer, (inputs, outputs)) in self.layer_sizes().into_iter().enumerate() {
            if inputs == 0 || outputs == 0 {
                return Err(ConfigError::EmptyLayer {
                    layer,
                    inputs,
                    outputs,
                });
            }
        }
        let n = self.num_params();
        if n > MAX_ELEMENTS {
            return Err(ConfigError::TooLarge {
                what: "parameter count",
                value: n,
                limit: MAX_ELEMENTS,
            });
        }
        Ok(())
    }
}

/// The element type of the fused step's first-layer forward product (`mnist train
/// --precision`). Everything else (the weights, the other products, the gradients and the
/// optimizer) stays `f32` either way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Precision {
    /// f32 on the ordinary arithmetic units (the default)
    #[default]
    F32,
    /// Both factors rounded to f16, multiplied on tensor cores, summed in f32
    #[doc = ""]
    /// (`crate::kernels::fused_f16`). Needs the fused step (one hidden layer, a hardware GPU)
    /// and an adapter with 16x16x16 `f16 -> f32` cooperative matrices and a single subgroup
    /// size.
    F16,
}

impl std::fmt::Display for Precision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Precision::F32 => "f32",
            Precision::F16 => "f16",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_the_source_network() {
        let c = MlpConfig::default();
        assert_eq!(c.layer_sizes(), vec![(784, 128), (128, 10)]);
        assert_eq!(c.num_params(), 784 * 128 + 128 + 128 * 10 + 10);
        assert_eq!(c.validate(), Ok(()));
    }

    #[test]
    fn any_number_of_hidden_layers() {
        let c = MlpConfig {
            inputs: 5,
            hidden: vec![7, 3, 4],
            classes: 2,
            activation: Activation::Relu,
        };
        assert_eq!(c.layer_sizes(), vec![(5, 7), (7, 3), (3, 4), (4, 2)]);
        let none = MlpConfig {
            inputs: 5,
            hidden: vec![],
            classes: 2,
            activation: Activation::Relu,
        };
        assert_eq!(none.layer_sizes(), vec![(5, 2)]);
    }

    #[test]
    fn empty_layers_are_rejected() {
        let c = MlpConfig {
            inputs: 5,
            hidden: vec![7, 0],
            classes: 2,
            activation: Activation::Relu,
        };
        assert!(matches!(
            c.validate(),
            Err(ConfigError::EmptyLayer { layer: 1, .. })
        ));
    }
}
