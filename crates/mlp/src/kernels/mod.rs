//! Every kernel of the MLP, each with its typed interface (`wgsl_dsl::runtime::KernelDef`):
//! written with `#[kernel]` where the macro expresses it, with the builder where Rust code
//! generates the kernel (the tiled products, workgroup reductions, Adam's `expm1`).
//!
//! One training step is, in order (dispatches recorded into one compute pass, no host round
//! trip):
//!
//! | kernel (entry point) | definition | file | does |
//! |---|---|---|---|
//! | `gather_batch` | [`GatherBatch`](gather::GatherBatch) | [`gather`] | `x, labels` of the step from the dataset through `order` |
//! | `linear_{act}` / `linear_identity` | [`Linear`](linear::Linear) | [`linear`] | `y = act(x W^T + b)` per layer, tiled |
//! | `linear_{act}_keep_z` | [`LinearKeepZ`](linear::LinearKeepZ) | [`linear`] | the same, also storing `z = x W^T + b` (activations whose backward needs `z`) |
//! | `softmax_cross_entropy` | [`SoftmaxCrossEntropy`](loss::SoftmaxCrossEntropy) | [`loss`] | probabilities, per-example loss |
//! | `softmax_cross_entropy_backward` | [`softmax_cross_entropy_backward`](loss::softmax_cross_entropy_backward) (derived by kernel AD) | [`loss`] | `dlogits = (p - onehot) / batch`, into the zeroed last deltas |
//! | `mean_loss` | [`MeanLoss`](loss::MeanLoss) | [`loss`] | batch mean into the loss history |
//! | `linear_backward_weight` | [`LinearBackwardWeight`](backward::LinearBackwardWeight) | [`backward`] | `dW = dy^T x`, tiled |
//! | `bias_grad` | [`BiasGrad`](backward::BiasGrad) | [`backward`] | `db = sum_batch dy`, workgroup reduction |
//! | `linear_backward_input_{act}` | [`LinearBackwardInput`](backward::LinearBackwardInput) | [`backward`] | `dx = (dy W) * act'(z)`, tiled; `act'` derived |
//! | `sgd_update` / `adam_update` | [`SgdUpdate`](optim::SgdUpdate) / [`AdamUpdate`](optim::AdamUpdate) | [`optim`] | the optimizer, over all parameters at once |
//! | `advance_step` | [`AdvanceStep`](step::AdvanceStep) | [`step`] | step counter and cursor on the GPU |
//!
//! plus `begin_chunk` ([`BeginChunk`](step::BeginChunk)) before a chunk, `linear_direct_{act}` /
//! `linear_direct_identity` ([`LinearDirect`](linear::LinearDirect): the forward without tiles,
//! for the web page of `mnist export-web`, one per activation) and `argmax_accuracy`
//! ([`ArgmaxAccuracy`](eval::ArgmaxAccuracy)) for evaluation. Shapes are `[batch, features]`,
//! row-major; parameters, gradients and optimizer slots are flat buffers in the layout of
//! [`crate::params`]. On GPUs a model with one hidden layer trains with the three kernels of
//! [`fused`] instead (`forward_gather_*`, `softmax_head_*`, `grad_update_*`, tiles chosen by
//! [`wgsl_gemm::tiled`]); with `mnist train --precision f16` the first of them is
//! `forward_gather_f16_*` of [`fused_f16`] (tensor cores). Each kernel's problem size (`KernelDef::Size`) is the shape of what it
//! writes. Every kernel is checked against an `f64` specification on random cases by the
//! workspace's verification harness (`wgsl-dsl-harness`, `tests/mlp_kernels.rs`).
//!
//! `{act}` is the hidden layers' [`Activation`] ([`Activation::ident`]: `relu`, `leaky_relu`,
//! `gelu`, `silu`, `tanh`, `sigmoid`, `softplus`), a DSL function whose derivative is derived
//! by the expression AD ([`crate::activation`]). The only derivatives written by hand in this
//! module are the products' and sums' (the custom derivatives of the GEMMs: `dW = dy^T x`,
//! `dx = dy W`, `db = sum dy`, here and in [`fused`]: their tiled loops run over a run-time
//! number of tiles with workgroup memory inside, which kernel AD refuses yet, and the derived
//! tiled product is much slower where it is derived, `BENCHMARKS.md`). The loss gradient is
//! derived: by kernel AD through the loops over the run-time class count in the unfused
//! `softmax_cross_entropy` ([`loss`]), by the expression AD in the fused `softmax_head`.

pub mod backward;
pub mod eval;
pub mod fused;
pub mod fused_f16;
pub mod gather;
pub mod linear;
pub mod loss;
pub mod optim;
pub mod step;
pub mod tiled;
pub mod uniforms;

use wgsl_dsl::KernelBuilder;
use wgsl_dsl::runtime::KernelDef;

use crate::activation::Activation;

/// Every kernel the model uses, built: for the snapshots. Entry point names are stable; the
/// fused kernels are those of [`fused::verified_configs`] (with every activation's head in
/// the first of them), then the tensor-core forward of [`fused_f16`] as chosen for an H200 at
/// batch 1024.
pub fn all() -> Vec<KernelBuilder> {
    let mut unfused = vec![gather::GatherBatch.build()];
    for act in Activation::ALL {
        unfused.push(linear::Linear(Some(act)).build());
        if !act.backward_reads_output() {
            unfused.push(linear::LinearKeepZ(act).build());
        }
        unfused.push(backward::LinearBackwardInput(act).build());
    }
    unfused.push(linear::Linear(None).build());
    for act in Activation::ALL {
        unfused.push(linear::LinearDirect(Some(act)).build());
    }
    unfused.extend([
        linear::LinearDirect(None).build(),
        loss::SoftmaxCrossEntropy.build(),
        loss_backward(),
        loss::MeanLoss.build(),
        backward::LinearBackwardWeight.build(),
        backward::BiasGrad.build(),
        optim::SgdUpdate.build(),
        optim::AdamUpdate.build(),
        step::BeginChunk.build(),
        step::AdvanceStep.build(),
        eval::ArgmaxAccuracy.build(),
    ]);
    // The tensor-core forward (`--precision f16`) as the H200 runs it at batch 1024.
    let f16_forward = fused_f16::ForwardGatherCoop(fused_f16::CoopForward::h200_mnist_1024());
    unfused
        .into_iter()
        .chain(fused::all())
        .chain([f16_forward.build()])
        .collect()
}

/// `softmax_cross_entropy_backward`, derived by kernel AD ([`loss::softmax_cross_entropy`]).
/// The kernel is fixed, so deriving it fails only on a bug of this crate, which the unit
/// test below (every kernel builds) and the model's construction report.
fn loss_backward() -> KernelBuilder {
    let mut b = loss::softmax_cross_entropy_backward()
        .expect("softmax_cross_entropy is derivable (a fixed kernel: a bug if not)");
    b.kernels.remove(0).kernel
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_kernel_builds_and_validates_under_a_unique_name() {
        let mut names = std::collections::HashSet::new();
        for k in super::all() {
            let shader = k.build().unwrap_or_else(|e| panic!("{}: {e}", k.name()));
            assert_eq!(shader.signature.name, k.name());
            assert!(names.insert(k.name().to_string()), "duplicate {}", k.name());
        }
    }
}
