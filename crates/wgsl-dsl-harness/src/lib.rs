//! # wgsl-dsl-harness: one verification harness for every kernel
//!
//! Test support, not published. A verified kernel ([`VerifiedOp`]) is a kernel and its
//! specification: given the initial contents of every binding (a [`Case`], with the outputs
//! poisoned), the final contents of the bindings the kernel writes, computed on the CPU (in
//! `f64` for floats, [`Expected`]). [`verify`] runs a case through an [`Executor`] (upload,
//! dispatch with the buffers in binding order, read back) and compares: every written binding
//! with the specification (floats within a relative tolerance, integers exactly, NaN never),
//! every read-only binding with its initial contents.
//!
//! The executor is what runs the kernel: the wgpu runtime ([`Gpu`] implements [`Executor`])
//! and the CPU interpreter ([`Interpreter`], which also fails a kernel that races, reads out
//! of bounds or reaches a barrier divergently) run the same cases.
//!
//! The DSL's own verified kernels live here too, each with random cases and a CPU
//! specification (the cross-crate tests in the workspace's `tests/` run them):
//!
//! - [`examples::all`]: the example kernels, one or more per family of built-ins and statement
//!   kind of the DSL ([`Example`]).
//! - [`derived`]: kernels with backward passes (`wgsl_dsl::autodiff`), derived or custom, with
//!   data to check them against central differences.
//! - [`blocks`]: scans, subgroup and quad operations; [`textures`]: the texture kernel.
//!
//! The MLP's verified ops and training references are beside the MLP (`mlp-verified`, in
//! `crates/mlp/verified`), which depends on this crate, not the other way round.
//!
//! The snapshot test pins every one's WGSL; `runtime_examples.rs` runs every example on the
//! GPU through the harness and compares with the specification (`mlp_kernels.rs` does the same
//! for the MLP's ops).
//!
//! ```
//! use wgsl_dsl::prelude::*;
//! use wgsl_dsl_harness::{Case, Data, Expected, VerifiedOp, verify};
//!
//! /// `y[i] = 2 x[i]`.
//! struct Double;
//! impl VerifiedOp for Double {
//!     fn name(&self) -> &str {
//!         "double"
//!     }
//!     fn kernel(&self) -> KernelBuilder {
//!         let mut k = KernelBuilder::new("double", [64, 1, 1]);
//!         let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
//!         let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
//!         let i = k.let_("i", global_invocation_id().x());
//!         k.if_(i.lt(y.len()), |k| k.store(&y.at(&i), x.at(&i).load() * 2.0));
//!         k
//!     }
//!     fn spec(&self, case: &Case) -> Vec<Expected> {
//!         vec![Expected::F64(case.f64s(0).iter().map(|x| 2.0 * x).collect())]
//!     }
//! }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let gpu = wgsl_dsl::runtime::Gpu::new()?;
//! let case = Case {
//!     buffers: vec![Data::F32(vec![1.0, -2.5, 3.0]), Data::poisoned_f32(3)],
//!     workgroups: [1, 1, 1],
//! };
//! verify(&gpu, &Double, &case)?;
//! # Ok(())
//! # }
//! ```

pub mod blocks;
mod data;
pub mod derived;
pub mod examples;
mod executor;
mod suite;
pub mod textures;
mod verify;

pub use data::{Case, Data, Expected, POISON_U32, StructValue};
pub use executor::{Buffers, Error, Executor, GpuBuffers, HostBuffers, UploadStruct};
pub use suite::{Example, GPU_SWITCH, gpu, gpu_tests_enabled};
pub use verify::{VerifiedOp, agree, compare, run, verify};

use rand::Rng as _;
pub use rand::SeedableRng;
pub use rand_chacha::ChaCha8Rng as Rng;
pub use wgsl_dsl::interp::Interpreter;
pub use wgsl_dsl::runtime::Gpu;

/// `n` values uniform in `[lo, hi)`.
pub fn random_f32(rng: &mut Rng, n: usize, lo: f32, hi: f32) -> Vec<f32> {
    (0..n).map(|_| rng.random_range(lo..hi)).collect()
}

/// `n` values uniform in `0..bound`.
pub fn random_u32(rng: &mut Rng, n: usize, bound: u32) -> Vec<u32> {
    (0..n).map(|_| rng.random_range(0..bound)).collect()
}

/// `n` values uniform in `[lo, hi)`.
pub fn random_i32(rng: &mut Rng, n: usize, lo: i32, hi: i32) -> Vec<i32> {
    (0..n).map(|_| rng.random_range(lo..hi)).collect()
}

/// `[x, 1, 1]` workgroups of `size` invocations covering `n` (at least one).
pub fn groups_1d(n: usize, size: u32) -> [u32; 3] {
    [n.div_ceil(size as usize).max(1) as u32, 1, 1]
}
