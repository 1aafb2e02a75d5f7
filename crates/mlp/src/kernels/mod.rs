//! Every kernel of the MLP, written with the wgsl-dsl builder, each paired with its CPU
//! specification ([`VerifiedOp`]).
//!
//! One training step is, in order (dispatches recorded into one compute pass, no host round
//! trip):
//!
//! | kernel | file | does |
//! |---|---|---|
//! | `gather_batch` | [`gather`] | `x, labels` of the step from the dataset through `order` |
//! | `linear_relu` / `linear_identity` | [`linear`] | `y = act(x W^T + b)` per layer, tiled |
//! | `softmax_cross_entropy` | [`loss`] | probabilities, per-example loss, `dlogits` |
//! | `mean_loss` | [`loss`] | batch mean into the loss history |
//! | `linear_backward_weight` | [`backward`] | `dW = dy^T x`, tiled |
//! | `bias_grad` | [`backward`] | `db = sum_batch dy`, workgroup reduction |
//! | `linear_backward_input_relu` | [`backward`] | `dx = (dy W) * [x > 0]`, tiled |
//! | `sgd_update` / `adam_update` | [`optim`] | the optimizer, over all parameters at once |
//! | `advance_step` | [`step`] | step counter and cursor on the GPU |
//!
//! plus `begin_chunk` ([`step`]) before a chunk and `argmax_accuracy` ([`eval`]) for
//! evaluation. Shapes are `[batch, features]`, row-major; parameters, gradients and optimizer
//! slots are flat buffers in the layout of [`crate::params`].

pub mod backward;
pub mod eval;
pub mod fused;
pub mod gather;
pub mod linear;
pub mod loss;
pub mod optim;
pub mod product;
pub mod step;
pub mod tiled;
pub mod uniforms;
pub mod verify;

pub use verify::{Case, CaseArg, CaseSizes, Role, UniformValue, Values, VerifiedOp};

use crate::reference::Activation;

/// Every kernel of the model with its specification.
pub fn all() -> Vec<Box<dyn VerifiedOp>> {
    let unfused: Vec<Box<dyn VerifiedOp>> = vec![
        Box::new(gather::GatherBatch),
        Box::new(linear::LinearForward(Activation::Relu)),
        Box::new(linear::LinearForward(Activation::Identity)),
        Box::new(loss::SoftmaxCrossEntropy),
        Box::new(loss::MeanLoss),
        Box::new(backward::WeightGrad),
        Box::new(backward::BiasGrad),
        Box::new(backward::InputGradRelu),
        Box::new(optim::Sgd),
        Box::new(optim::Adam),
        Box::new(step::BeginChunk),
        Box::new(step::AdvanceStep),
        Box::new(eval::ArgmaxAccuracy),
    ];
    unfused.into_iter().chain(fused::all()).collect()
}

/// `(name, builder)` of every kernel the model uses, for snapshots. Names are stable.
pub fn all_kernels() -> Vec<(String, wgsl_dsl::KernelBuilder)> {
    all()
        .into_iter()
        .map(|op| (op.name().to_string(), op.build()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_builds_and_validates_with_its_registered_name() {
        let mut names = std::collections::HashSet::new();
        for op in all() {
            let shader = op
                .build()
                .build()
                .unwrap_or_else(|e| panic!("{}: {e}", op.name()));
            assert_eq!(shader.signature.name, op.name());
            assert!(
                names.insert(op.name()),
                "duplicate kernel name {}",
                op.name()
            );
        }
    }

    #[test]
    fn every_case_matches_its_kernel_signature() {
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        for op in all() {
            let shader = op.build().build().expect("builds");
            let case = op.case(&mut rng, &CaseSizes::default());
            assert_eq!(
                case.args.len(),
                shader.signature.bindings.len(),
                "{}",
                op.name()
            );
            assert_eq!(case.outputs().len(), op.spec(&case).len(), "{}", op.name());
        }
    }
}
