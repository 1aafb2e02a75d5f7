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
//! `lower` (into `naga::Module`; private to `wgsl_dsl_core`) → [`shader`] (validation, WGSL
//! emission) → [`runtime`] (wgpu) or [`interp`] (the CPU interpreter, which reports races);
//! [`autodiff`] differentiates expressions (and kernels) on the way, before lowering; beside the
//! runtime, [`export`] writes a kernel's WGSL, its ABI as a manifest and a JavaScript module for
//! other hosts (a browser page, an engine loading `.wgsl`).
//!
//! ## The crates
//! This crate is the one to depend on; it re-exports the public stages under the paths above,
//! each in a crate of its own: [`wgsl_dsl_core`] (the compiler, from `types` to WGSL, with `autodiff` and
//! `export`; naga and no wgpu), `wgsl_dsl_runtime` (re-exported as `runtime`, on wgpu) and
//! `wgsl_dsl_interp` (as `interp`), both with the `runtime` feature (default), and the macros of
//! `wgsl_dsl_macros`.

// The stages, each a crate (ARCHITECTURE.md has the graph): the compiler (`wgsl-dsl-core`,
// no wgpu), the wgpu runtime (`wgsl-dsl-runtime`) and the CPU interpreter (`wgsl-dsl-interp`),
// re-exported here under the paths users write.
// Hidden, as it was before the split (the builder's typed table handles).
#[doc(hidden)]
pub use wgsl_dsl_core::handle;
pub use wgsl_dsl_core::{exp, export, kernel, shader, types};

pub mod autodiff {
    //! Automatic differentiation of expressions and kernels (ARCHITECTURE.md decision *Derivatives on the builder's DAG*): everything of
    //! the compiler's [`wgsl_dsl_core::autodiff`] (its page is the guide: [`KernelBuilder::vjp`],
    //! [`KernelBuilder::jvp`], [`derive()`], [`Backward::custom`], [`Accumulation`]), and, with
    //! the `runtime` feature, the gradient checker [`check`], which runs a backward pass against
    //! central differences of its forward kernel on the interpreter or the GPU, and
    //! [`run_backward`], which runs a backward pass in one call (every binding bound by its
    //! role) and returns the inputs' gradients.
    #[cfg(doc)]
    use crate::KernelBuilder;
    #[doc(inline)]
    pub use wgsl_dsl_core::autodiff::*;
    /// The gradient checker (`wgsl-dsl-gradcheck`); `Executor` is where it runs kernels:
    /// `&Interpreter::new()` or a `&Gpu`.
    #[cfg(feature = "runtime")]
    #[doc(inline)]
    pub use wgsl_dsl_gradcheck::{
        Adjoint, AdjointCheck, CheckError, CheckOptions, Data, Executor, GradientReport, Gradients,
        IDENTITY_ULPS, Unwritten, Verdict, WorstError, check, run_backward,
    };
}
/// The executor contract both executors implement ([`wgsl_dsl_exec`]): the [`Executor`](exec::Executor)
/// trait, the typed kernel interfaces, the dispatch checks, [`Limits`](exec::Limits) and the
/// errors. The runtime re-exports most of it under `wgsl_dsl::runtime` as well.
#[doc(inline)]
pub use wgsl_dsl_exec as exec;
#[cfg(feature = "runtime")]
#[doc(inline)]
pub use wgsl_dsl_interp as interp;
#[cfg(feature = "runtime")]
#[doc(inline)]
pub use wgsl_dsl_runtime as runtime;
#[doc = include_str!("../docs/kernel_syntax.md")]
pub mod kernel_syntax {}
#[doc = include_str!("../docs/cookbook.md")]
pub mod cookbook {}

pub use wgsl_dsl_core::{
    Access, BindingDesc, BindingKind, Bindings, Buffer, BuildError, CallSite, ConstValue, Exp,
    Function, IntoExp, KernelBuilder, KernelSignature, NonUniformControlFlow, Place, ReadOnly,
    ReadWrite, Shader, TargetLimits, ValidationCause, Var, lit, naga,
};
// `Bindings` and `WgslStruct` are each a trait (above) and its derive macro (here).
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

/// Everything a kernel author needs: `use wgsl_dsl::prelude::*;`: the compiler's prelude
/// ([`wgsl_dsl_core::prelude`]) and the macros.
pub mod prelude {
    pub use wgsl_dsl_core::prelude::*;
    pub use wgsl_dsl_macros::{Bindings, WgslStruct, kernel};
}
