//! The kernels' uniform structs: run-time sizes and hyperparameters (design decision 7:
//! "hyperparameters are data"), shared by the Rust host (`#[repr(C)]`, `bytemuck::Pod`) and
//! the WGSL kernels (`var<uniform>`).
//!
//! Every field is a 4-byte scalar (`u32` or `f32`) and every struct is padded with explicit
//! `_pad` members to a multiple of 16 bytes, so the Rust layout and WGSL's uniform layout
//! (WGSL spec §14.4 "Memory Layout") agree member for member.
//!
//! `WgslType`, `Constructible` and `WgslStruct` are implemented by hand with the
//! [`uniform_struct!`] macro below, until `#[derive(WgslStruct)]` lands. Each struct gets an
//! extension trait (`LinearDimsFields`, ...) whose methods read one member of a uniform place:
//! `dims.batch()` is `dims.batch` in WGSL.

use bytemuck::{Pod, Zeroable};
use wgsl_dsl::types::{Constructible, Ty, WgslStruct, WgslType};
use wgsl_dsl::{Exp, Place, kernel::Access};

macro_rules! uniform_struct {
    (
        $(#[$meta:meta])*
        pub struct $name:ident, fields $fields:ident {
            $( $(#[$fmeta:meta])* pub $field:ident : $fty:ty ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $fty ),*
        }

        impl WgslType for $name {
            fn ty() -> Ty {
                Ty::Struct { name: stringify!($name), members: Self::members() }
            }
        }
        impl Constructible for $name {}
        impl WgslStruct for $name {
            fn members() -> Vec<(&'static str, Ty)> {
                vec![$( (stringify!($field), <$fty as WgslType>::ty()) ),*]
            }
        }

        #[doc = concat!("Typed reads of the members of a `", stringify!($name), "` place.")]
        #[allow(clippy::used_underscore_items)]
        pub trait $fields {
            $(
                #[doc = concat!("`place.", stringify!($field), "`")]
                fn $field(&self) -> Exp<$fty>;
            )*
        }
        impl<A: Access> $fields for Place<$name, A> {
            $(
                #[track_caller]
                fn $field(&self) -> Exp<$fty> {
                    let index = <$name as WgslStruct>::members()
                        .iter()
                        .position(|(n, _)| *n == stringify!($field))
                        .expect("the member is declared by this macro") as u32;
                    self.member::<$fty>(index).load()
                }
            )*
        }
    };
}

uniform_struct! {
    /// Sizes of one linear layer for one batch size, and where its tensors start in the flat
    /// parameter (and gradient) buffer.
    pub struct LinearDims, fields LinearDimsFields {
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
}

uniform_struct! {
    /// Sizes of the softmax cross-entropy.
    pub struct LossDims, fields LossDimsFields {
        /// Rows of the batch.
        pub batch: u32,
        /// Classes (columns of the logits).
        pub classes: u32,
        /// Padding.
        pub _pad0: u32,
        /// Padding.
        pub _pad1: u32,
    }
}

uniform_struct! {
    /// How a chunk of steps takes its batches from the GPU-resident dataset: step `s` (=
    /// `first_step` + the step cursor) takes rows `order[s * batch_size ..]`, at most
    /// `batch_size` of them and not past `order_len`.
    pub struct GatherParams, fields GatherParamsFields {
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
}

uniform_struct! {
    /// SGD hyperparameters (PyTorch's `torch.optim.SGD`, dampening 0).
    pub struct SgdParams, fields SgdParamsFields {
        /// Learning rate.
        pub lr: f32,
        /// Momentum factor (0 for plain SGD).
        pub momentum: f32,
        /// L2 penalty added to the gradient (`g + weight_decay * p`).
        pub weight_decay: f32,
        /// Number of parameters.
        pub len: u32,
    }
}

uniform_struct! {
    /// Adam hyperparameters (Kingma & Ba 2015). The step number `t` is not here: it is kept
    /// on the GPU in the step-state buffer (see [`crate::kernels::step`]).
    pub struct AdamParams, fields AdamParamsFields {
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
        /// Padding.
        pub _pad0: u32,
    }
}

uniform_struct! {
    /// Sizes for evaluation: the batch at step cursor `c` holds examples
    /// `c * batch_size .. c * batch_size + rows`.
    pub struct EvalParams, fields EvalParamsFields {
        /// Rows of this batch.
        pub rows: u32,
        /// Classes.
        pub classes: u32,
        /// Rows of a full batch.
        pub batch_size: u32,
        /// Padding.
        pub _pad0: u32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_multiples_of_16() {
        assert_eq!(size_of::<LinearDims>(), 32);
        assert_eq!(size_of::<LossDims>(), 16);
        assert_eq!(size_of::<GatherParams>(), 32);
        assert_eq!(size_of::<SgdParams>(), 16);
        assert_eq!(size_of::<AdamParams>(), 32);
        assert_eq!(size_of::<EvalParams>(), 16);
        assert_eq!(LinearDims::members().len() * 4, size_of::<LinearDims>());
        assert_eq!(
            AdamParams::members()[4],
            ("len", Ty::Scalar(wgsl_dsl::types::ScalarTy::U32))
        );
    }
}
