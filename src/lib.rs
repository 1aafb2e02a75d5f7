//! The workspace's cross-crate tests (`tests/`) and benchmarks (`benches/`). Their support code
//! (the example kernels, the MLP's verified ops, the training references, the shared GPU) is
//! in [`wgsl_dsl_harness`], the one home of test support; this re-export keeps the paths the
//! tests name (`wgsl_dsl_workspace_tests::examples::all`, `::ops`, `::gpu`, ...).

pub use wgsl_dsl_harness::*;
