//! # mlp-verified: the MLP's verified ops and training references
//!
//! Test support, not published, beside the MLP (`crates/mlp/verified`): every kernel of the
//! `mlp` crate paired with its specification as a verified op of the verification harness,
//! `wgsl-dsl-harness`, which keeps only what the workspace's tests share and does not depend on
//! `mlp`.
//!
//! - [`ops::all`]: every kernel of `mlp::kernels` (in the order of `mlp::kernels::all()`), with
//!   random cases of given sizes and its `f64` specification from `mlp::reference`
//!   ([`ops::MlpOp`], a `wgsl_dsl_harness::VerifiedOp`); [`ops::fused::all`]: the fused kernels
//!   in the configurations their snapshots pin.
//! - [`training`]: whole training steps of the model on the GPU against the reference training
//!   loop.
//!
//! The workspace's cross-crate tests run them: `tests/mlp_kernels.rs` and `tests/mlp_fused.rs`
//! on the GPU, `tests/interp_mlp.rs` on the interpreter, `tests/mlp_model.rs` and
//! `tests/mlp_fused_step.rs` for training steps.
//!
//! ```
//! use mlp_verified::ops;
//! use wgsl_dsl_harness::{Interpreter, Rng, SeedableRng, verify};
//!
//! // The batch gather, the first kernel, at the small checked sizes, on the interpreter.
//! let op = &ops::all()[0];
//! let case = op.case(&mut Rng::seed_from_u64(1), &ops::CHECKED_SIZES[1]);
//! verify(&Interpreter::new(), op, &case)?;
//! # Ok::<(), String>(())
//! ```

pub mod ops;
pub mod training;
