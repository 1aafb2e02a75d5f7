//! # wgsl-dsl: WGSL compute kernels written in typed Rust
//!
//! Build a compute kernel with typed expressions ([`Exp<T>`]) and a statement builder
//! ([`KernelBuilder`]); get a validated `naga::Module` and the WGSL naga writes for it, or a
//! [`BuildError`] that names the Rust line that built the offending node.
//!
//! ```
//! use wgsl_dsl::prelude::*;
//!
//! // y[i] = a * x[i] + y[i], for i < n
//! let mut k = KernelBuilder::new("saxpy", [64, 1, 1]);
//! let a = k.uniform::<f32>("a");
//! let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
//! let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
//! let i = k.let_("i", global_invocation_id().x());
//! k.if_(i.lt(y.len()), |k| {
//!     let v = k.let_("v", fma(a.load(), x.at(&i).load(), y.at(&i).load()));
//!     k.store(&y.at(&i), v);
//! });
//! let shader = k.build()?;
//!
//! assert!(shader.wgsl.contains("y: array<f32>;"));
//! assert!(shader.wgsl.contains("let v = fma("));
//! assert_eq!(shader.signature.bindings.len(), 3);
//! # Ok::<(), wgsl_dsl::BuildError>(())
//! ```
//!
//! The same kernel can be written in Rust syntax with the [`#[kernel]`](macro@kernel) attribute
//! (`fn saxpy(#[uniform] a: f32, #[storage(read)] x: &[f32], ...)`); its syntax reference is
//! [`kernel_syntax`], and [`cookbook`] has the kernels new authors write first (a prefix sum,
//! an atomic histogram, a 3x3 blur with a uniform struct), each a tested program.
//!
//! Ill-typed kernels do not compile: `Exp<f32> + Exp<u32>`, `&&` on vectors, atomics on `f32`,
//! indexing with an `f32`, assigning to a `let` and storing into a read-only binding are all
//! Rust type errors.
//!
//! ## The pipeline
//! [`types`] → [`exp`] (expressions) → [`kernel`](mod@kernel) (statements, bindings, functions) →
//! `lower` (into `naga::Module`) → [`shader`] (validation, WGSL emission) → `runtime` (wgpu);
//! [`autodiff`] differentiates expressions (and kernels) on the way, before lowering; beside the
//! runtime, [`export`] writes a kernel's WGSL, its ABI as a manifest and a JavaScript module for
//! other hosts (a browser page, an engine loading `.wgsl`).

pub mod autodiff;
mod consteval;
mod error;
pub mod exp;
pub mod export;
#[cfg(feature = "runtime")]
mod gradcheck;
#[doc(hidden)]
pub mod handle;
#[cfg(feature = "runtime")]
pub mod interp;
pub mod kernel;
#[doc = include_str!("../docs/kernel_syntax.md")]
pub mod kernel_syntax {}
#[doc = include_str!("../docs/cookbook.md")]
pub mod cookbook {}
mod lower;
#[cfg(feature = "runtime")]
pub mod runtime;
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
pub use shader::{BuildError, NonUniformControlFlow, Shader, TargetLimits};
pub use site::CallSite;
pub use wgsl_dsl_macros::{Bindings, WgslStruct, kernel};

/// Expands to its input when the `runtime` feature is on, to nothing otherwise: the typed
/// interfaces `#[kernel]` and `#[derive(Bindings)]` generate use the runtime's buffer types.
#[cfg(feature = "runtime")]
#[doc(hidden)]
#[macro_export]
macro_rules! __with_runtime {
    ($($item:item)*) => { $($item)* };
}
/// Expands to its input when the `runtime` feature is on, to nothing otherwise.
#[cfg(not(feature = "runtime"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __with_runtime {
    ($($item:item)*) => {};
}

/// Everything a kernel author needs: `use wgsl_dsl::prelude::*;`.
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
    pub use wgsl_dsl_macros::{Bindings, WgslStruct, kernel};
}
