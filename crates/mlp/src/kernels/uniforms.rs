//! The kernels' uniform structs: run-time sizes and hyperparameters (ARCHITECTURE.md decision *Hyperparameters are data*:
//! "hyperparameters are data"), shared by the Rust host (`#[repr(C)]`, `bytemuck::Pod`) and
//! the WGSL kernels (`var<uniform>`).
//!
//! Every field is a 4-byte scalar (`u32` or `f32`) and every struct is padded with explicit
//! `_pad` members to a multiple of 16 bytes, so the Rust layout and WGSL's uniform layout
//! (WGSL spec §14.4 "Memory Layout") agree member for member.
//!
//! `#[derive(WgslStruct)]` implements the DSL's type traits and checks at compile time that
//! the Rust layout equals WGSL's uniform layout. Each struct gets an extension trait
//! (`LinearDimsFields`, ...) whose methods give a member's place: `dims.batch().load()` is
//! `dims.batch` in WGSL.

use bytemuck::{Pod, Zeroable};
use wgsl_dsl::WgslStruct;
use wgsl_dsl::prelude::{Exp, KernelBuilder, Place, ReadOnly};

/// Sizes of one linear layer for one batch size, and where its tensors start in the flat
/// parameter (and gradient) buffer.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable, WgslStruct)]
#[wgsl(uniform)]
pub struct LinearDims {
    /// Rows of the batch.
    pub batch: u32,
    /// Input features.
    pub inputs: u32,
    /// Output features.
    pub outputs: u32,
    /// Offset (elements) of `weight [outputs, inputs]` in the flat buffer.
    pub weight_offset: u32,
    /// Offset (elements) of `bias [outputs]` in the flat buffer.
    pub bias_offset: u32,
    /// Padding.
    pub _pad0: u32,
    /// Padding.
    pub _pad1: u32,
    /// Padding.
    pub _pad2: u32,
}

/// Sizes of the softmax cross-entropy.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable, WgslStruct)]
#[wgsl(uniform)]
pub struct LossDims {
    /// Rows of the batch.
    pub batch: u32,
    /// Classes (columns of the logits).
    pub classes: u32,
    /// Padding.
    pub _pad0: u32,
    /// Padding.
    pub _pad1: u32,
}

/// How a chunk of steps takes its batches from the GPU-resident dataset: step `s` (=
/// `first_step` + the step cursor) takes rows `order[s * batch_size ..]`, at most
/// `batch_size` of them and not past `order_len`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable, WgslStruct)]
#[wgsl(uniform)]
pub struct GatherParams {
    /// Index of the first step of the chunk in the `order` buffer, in batches.
    pub first_step: u32,
    /// Rows of a full batch.
    pub batch_size: u32,
    /// Entries of `order`.
    pub order_len: u32,
    /// Examples in the dataset (rows of `images`).
    pub dataset_len: u32,
    /// Features per example (columns of `images`).
    pub inputs: u32,
    /// Padding.
    pub _pad0: u32,
    /// Padding.
    pub _pad1: u32,
    /// Padding.
    pub _pad2: u32,
}

/// SGD hyperparameters (PyTorch's `torch.optim.SGD`, dampening 0) and the learning-rate
/// schedule (its position, the step count, is on the GPU in the step state).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable, WgslStruct)]
#[wgsl(uniform)]
pub struct SgdParams {
    /// Learning rate.
    pub lr: f32,
    /// Momentum factor (0 for plain SGD).
    pub momentum: f32,
    /// L2 penalty added to the gradient (`g + weight_decay * p`).
    pub weight_decay: f32,
    /// Number of parameters.
    pub len: u32,
    /// The learning-rate schedule ([`crate::schedule`]).
    pub schedule: ScheduleUniform,
}

/// Adam hyperparameters (Kingma & Ba 2015). The step number `t` is not here: it is kept
/// on the GPU in the step-state buffer (see [`crate::kernels::step`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable, WgslStruct)]
#[wgsl(uniform)]
pub struct AdamParams {
    /// Learning rate (alpha).
    pub lr: f32,
    /// Decay of the first moment estimate.
    pub beta1: f32,
    /// Decay of the second moment estimate.
    pub beta2: f32,
    /// Added to `sqrt(v^)` for numerical stability.
    pub eps: f32,
    /// Number of parameters.
    pub len: u32,
    /// `ln(beta1)`, computed on the host in `f64`.
    pub log_beta1: f32,
    /// `ln(beta2)`, computed on the host in `f64`.
    pub log_beta2: f32,
    /// Padding (the schedule starts at a multiple of 16 bytes, as WGSL's uniform layout
    /// requires of a nested struct).
    pub _pad0: u32,
    /// The learning-rate schedule ([`crate::schedule`]).
    pub schedule: ScheduleUniform,
}

/// A learning-rate schedule's fields, nested in [`SgdParams`] and [`AdamParams`] (validated:
/// [`LrSchedule::validate`](crate::schedule::LrSchedule::validate); made by
/// [`ScheduleUniform::of`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable, WgslStruct)]
#[wgsl(uniform)]
pub struct ScheduleUniform {
    /// The decay: [`crate::kernels::optim::SCHEDULE_CONSTANT`], `SCHEDULE_COSINE` or
    /// `SCHEDULE_STEP`.
    pub kind: u32,
    /// Steps of linear warm-up.
    pub warmup_steps: u32,
    /// Steps of the cosine, or between step decays.
    pub decay_steps: u32,
    /// The cosine's final factor, or the step decay's gamma.
    pub decay_factor: f32,
}

/// Sizes for evaluation: the batch at step cursor `c` holds examples
/// `c * batch_size .. c * batch_size + rows`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable, WgslStruct)]
#[wgsl(uniform)]
pub struct EvalParams {
    /// Rows of this batch.
    pub rows: u32,
    /// Classes.
    pub classes: u32,
    /// Rows of a full batch.
    pub batch_size: u32,
    /// Padding.
    pub _pad0: u32,
}

/// `[batch, inputs, outputs, weight_offset]` of a layer's `dims`, each bound in `k` by a `let`
/// of that name, in this order (the start of every kernel that reads one layer).
pub(crate) fn load_layer_dims(
    k: &mut KernelBuilder,
    dims: &Place<LinearDims, ReadOnly>,
) -> [Exp<u32>; 4] {
    [
        k.let_("batch", dims.batch().load()),
        k.let_("inputs", dims.inputs().load()),
        k.let_("outputs", dims.outputs().load()),
        k.let_("weight_offset", dims.weight_offset().load()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use wgsl_dsl::types::{ScalarTy, Ty, WgslStruct};

    #[test]
    fn sizes_are_multiples_of_16() {
        assert_eq!(size_of::<LinearDims>(), 32);
        assert_eq!(size_of::<LossDims>(), 16);
        assert_eq!(size_of::<GatherParams>(), 32);
        assert_eq!(size_of::<SgdParams>(), 32);
        assert_eq!(size_of::<AdamParams>(), 48);
        assert_eq!(size_of::<EvalParams>(), 16);
        assert_eq!(LinearDims::members().len() * 4, size_of::<LinearDims>());
        assert_eq!(AdamParams::members()[4], ("len", Ty::Scalar(ScalarTy::U32)));
    }
}
