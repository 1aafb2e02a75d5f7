//! The optimizer's configuration and its saved state.

use crate::error::MlpError;
use crate::params::Params;

/// The optimizer and its hyperparameters.
///
/// Serialized (checkpoint metadata) with its kind as a tag:
/// `{"kind": "sgd", "lr": 0.05, "momentum": 0.9, "weight_decay": 0.0}` or
/// `{"kind": "adam", "lr": 0.001, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8}`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum OptimizerConfig {
    /// PyTorch's `torch.optim.SGD` (dampening 0, no Nesterov): `g = grad + weight_decay * p;
    /// v = momentum * v + g; p -= lr * v`.
    Sgd {
        /// Learning rate.
        lr: f32,
        /// Momentum (0 for plain SGD).
        momentum: f32,
        /// L2 penalty.
        weight_decay: f32,
    },
    /// Adam, Kingma & Ba 2015, with bias-corrected moment estimates.
    Adam {
        /// Learning rate.
        lr: f32,
        /// First moment decay, in `[0, 1)`.
        beta1: f32,
        /// Second moment decay, in `[0, 1)`.
        beta2: f32,
        /// Added to `sqrt(v^)`.
        eps: f32,
    },
}

impl OptimizerConfig {
    /// Slots per parameter tensor: 1 for SGD (velocity), 2 for Adam (m, v).
    pub fn slots_per_tensor(&self) -> usize {
        match self {
            OptimizerConfig::Sgd { .. } => 1,
            OptimizerConfig::Adam { .. } => 2,
        }
    }

    pub(super) fn validate(&self) -> Result<(), MlpError> {
        let ok = match *self {
            OptimizerConfig::Sgd {
                lr,
                momentum,
                weight_decay,
            } => lr.is_finite() && momentum.is_finite() && weight_decay.is_finite(),
            OptimizerConfig::Adam {
                lr,
                beta1,
                beta2,
                eps,
            } => {
                lr.is_finite()
                    && (0.0..1.0).contains(&beta1)
                    && (0.0..1.0).contains(&beta2)
                    && eps.is_finite()
                    && eps >= 0.0
            }
        };
        if ok {
            Ok(())
        } else {
            Err(MlpError::InvalidArgument(format!(
                "invalid optimizer hyperparameters {self:?}"
            )))
        }
    }
}

/// Optimizer state, for checkpoints. `step`: optimizer steps taken. `slots[i]`: one buffer per
/// parameter tensor and slot, each as long as its tensor, tensors in the order
/// `layer0.weight, layer0.bias, layer1.weight, ...`:
/// - SGD: the velocity of every tensor (kept even when `momentum` is 0);
/// - Adam: `m` of every tensor, then `v` of every tensor.
#[derive(Clone, Debug, PartialEq)]
pub struct OptimizerState {
    /// Optimizer steps taken.
    pub step: u64,
    /// Per-tensor slots, in the order above.
    pub slots: Vec<Vec<f32>>,
}

impl OptimizerState {
    /// The state of `optimizer` before its first step on `params`: step 0, every slot zero
    /// (what training starts from).
    pub fn zeroed(optimizer: &OptimizerConfig, params: &Params) -> OptimizerState {
        let lens: Vec<usize> = params
            .layers
            .iter()
            .flat_map(|l| [l.weight.len(), l.bias.len()])
            .collect();
        let slots = (0..optimizer.slots_per_tensor())
            .flat_map(|_| lens.iter().map(|&len| vec![0.0; len]))
            .collect();
        OptimizerState { step: 0, slots }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::MlpConfig;

    /// One zero slot per tensor and slot, in the documented order (Adam: every `m`, then every
    /// `v`), each as long as its tensor.
    #[test]
    fn zeroed_state_has_the_checkpoint_layout() {
        let config = MlpConfig {
            inputs: 5,
            hidden: vec![3],
            classes: 2,
            ..MlpConfig::default()
        };
        let params = Params::init(&config, 0);
        let lens = [15, 3, 6, 2];
        let adam = OptimizerConfig::Adam {
            lr: 1e-3,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
        };
        let sgd = OptimizerConfig::Sgd {
            lr: 0.1,
            momentum: 0.0,
            weight_decay: 0.0,
        };
        for (optimizer, slots) in [(adam, 2), (sgd, 1)] {
            let s = OptimizerState::zeroed(&optimizer, &params);
            assert_eq!(s.step, 0);
            let got: Vec<usize> = s.slots.iter().map(Vec::len).collect();
            assert_eq!(got, lens.repeat(slots));
            assert!(s.slots.iter().flatten().all(|&x| x == 0.0));
        }
    }
}
