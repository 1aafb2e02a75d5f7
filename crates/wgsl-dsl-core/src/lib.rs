//! The compiler of [wgsl-dsl](https://github.com/wgsl-dsl/wgsl-dsl): typed expressions
//! ([`Exp<T>`]) and a statement builder ([`KernelBuilder`]) lowered straight into a
//! `naga::Module`, validated by naga and by the WGSL uniformity analysis, and emitted as WGSL
//! by naga's writer; automatic differentiation ([`autodiff`]) before the lowering, and the
//! export of the result ([`export`]) after it. It depends on naga and nothing of wgpu; feature
//! `f16` adds `half::f16` as the WGSL type `f16`.
//!
//! ```
//! use wgsl_dsl_core::prelude::*;
//!
//! let mut k = KernelBuilder::new("double", [64, 1, 1]);
//! let x = k.storage::<RuntimeArray<f32>, ReadWrite>("x");
//! let i = k.let_("i", global_invocation_id().x());
//! k.if_(i.lt(x.len()), |k| k.store(&x.at(&i), x.at(&i).load() * 2.0));
//! let shader = k.build()?; // Result<Shader, BuildError>
//! assert!(shader.wgsl.contains("@compute @workgroup_size(64, 1, 1)"));
//! assert_eq!(shader.signature.bindings.len(), 1);
//! # Ok::<(), BuildError>(())
//! ```
//!
//! Kernel authors depend on `wgsl-dsl`, which re-exports this crate (as `wgsl_dsl::exp`,
//! `wgsl_dsl::Exp`, `wgsl_dsl::prelude`, ...) with the `#[kernel]` macros (which expand to
//! `wgsl_dsl::` paths, so they need that crate), the wgpu runtime (`wgsl-dsl-runtime`) and the
//! CPU interpreter (`wgsl-dsl-interp`); its documentation is the guide. The examples on this
//! crate's pages are written as users of `wgsl-dsl` write them (`use wgsl_dsl::prelude::*`);
//! with this crate alone, write `wgsl_dsl_core::` instead, as below.
//!
//! ## The pipeline
//! [`types`] → [`exp`] (expressions) → [`kernel`](mod@kernel) (statements, bindings, functions) →
//! `lower` (private: into `naga::Module`; literal-only subtrees through the private `consteval`) → [`shader`]
//! (naga validation, the uniformity analysis, WGSL emission). [`autodiff`] differentiates
//! expressions and kernels before lowering; [`export`] writes a kernel's WGSL, its ABI as a
//! manifest and a JavaScript module for other hosts.

pub mod autodiff;
mod consteval;
mod error;
pub mod exp;
pub mod export;
#[doc(hidden)]
pub mod handle;
pub mod kernel;
mod lower;
pub mod shader;
mod site;
pub mod types;
mod uniformity;

pub use consteval::ConstValue;
pub use exp::{Exp, IntoExp, lit};
pub use kernel::{
    Access, BindingDesc, BindingKind, Bindings, Buffer, Function, KernelBuilder, KernelSignature,
    Place, ReadOnly, ReadWrite, Var,
};
pub use naga;
pub use shader::{BuildError, NonUniformControlFlow, Shader, TargetLimits, ValidationCause};
pub use site::CallSite;

/// Everything a kernel author needs but the macros (`wgsl_dsl::prelude` adds them).
pub mod prelude {
    pub use crate::autodiff::{Differentiable, tangent};
    pub use crate::exp::builtins::*;
    pub use crate::exp::coop::coop_multiply_add;
    pub use crate::exp::vector::{array, mat, vec2, vec3, vec4};
    pub use crate::exp::{Exp, IntoExp, lit};
    pub use crate::kernel::{
        Bindings, Buffer, Function, KernelBuilder, Place, ReadOnly, ReadWrite, StorageTexture2d,
        Texture2d, Var, WriteOnly, global_invocation_id, local_invocation_id,
        local_invocation_index, num_workgroups, subgroup_invocation_id, subgroup_size,
        workgroup_id,
    };
    pub use crate::shader::{BuildError, Shader};
    pub use crate::types::{
        Accumulator, Array, Atomic, CoopLayout, CoopMat, Mat, Mat2x2, Mat3x3, Mat4x4, MatrixA,
        MatrixB, RuntimeArray, SizedArray, Vec2, Vec3, Vec4, Vector, WgslStruct, WgslType,
    };
}

/// What the runtime and the interpreter crates use of the compiler's internals; not part of
/// the public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::consteval::float_sign;
    pub use crate::error::capability_hint;
    pub use crate::lower::DebugPrintDecl;
}
