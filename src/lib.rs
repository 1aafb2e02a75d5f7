//! The workspace's cross-crate tests (`tests/`) and benchmarks (`benches/`). Their support code
//! (the example kernels, the shared GPU) is in [`wgsl_dsl_harness`], the home of shared test
//! support; this re-export keeps the paths the tests name
//! (`wgsl_dsl_workspace_tests::examples::all`, `::gpu`, ...). The MLP's verified ops and
//! training references are beside the MLP, in `mlp_verified` (`ops`, `training`).

pub use wgsl_dsl_harness::*;
