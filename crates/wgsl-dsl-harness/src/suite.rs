//! What the workspace's test binaries share: the GPU of a test binary ([`gpu`], which
//! `WGSL_DSL_GPU=off` turns off) and the example kernel type ([`Example`]).

use std::sync::OnceLock;

use wgsl_dsl::KernelBuilder;
use wgsl_dsl::runtime::Gpu;

use crate::{Case, Data, Expected, Rng, VerifiedOp};

/// The environment variable that turns off the GPU half of the tests that go through [`gpu`]
/// (`WGSL_DSL_GPU=off`): they then check the interpreter alone, on a machine without any Vulkan
/// driver (BENCHMARKS.md lists the test binaries that need no adapter; the tests that open
/// `Gpu::new()` themselves still need one).
pub const GPU_SWITCH: &str = "WGSL_DSL_GPU";

/// True unless `WGSL_DSL_GPU=off`.
pub fn gpu_tests_enabled() -> bool {
    std::env::var(GPU_SWITCH).map_or(true, |v| v != "off")
}

/// The GPU the tests share (one per test binary), or `None` when GPU tests are off
/// (`WGSL_DSL_GPU=off`; the caller skips its GPU part). With GPU tests on, no adapter is a
/// failure, not a skip: CI installs lavapipe.
pub fn gpu() -> Option<&'static Gpu> {
    static GPU: OnceLock<Gpu> = OnceLock::new();
    if !gpu_tests_enabled() {
        eprintln!("{GPU_SWITCH}=off: skipping the GPU part of this test");
        return None;
    }
    Some(GPU.get_or_init(|| {
        Gpu::new().unwrap_or_else(|e| {
            panic!("no wgpu adapter ({e}); install mesa-vulkan-drivers, or set {GPU_SWITCH}=off")
        })
    }))
}

/// An example kernel with its specification.
#[derive(Debug, Clone, Copy)]
pub struct Example {
    /// The kernel's name (its entry point, and its snapshot's name).
    pub name: &'static str,
    /// Builds the kernel.
    pub build: fn() -> KernelBuilder,
    /// Random inputs of odd sizes, outputs poisoned.
    pub case: fn(&mut Rng) -> Case,
    /// Computes, on the CPU, what every binding holds after the kernel ran.
    pub reference: fn(&mut [Data]),
    /// Relative tolerance for `f32` outputs (0: bit-exact); absolute below magnitude 1.
    pub tolerance: f32,
    /// Needs subgroup operations.
    pub needs_subgroups: bool,
}

impl VerifiedOp for Example {
    fn name(&self) -> &str {
        self.name
    }
    fn kernel(&self) -> KernelBuilder {
        (self.build)()
    }
    /// The final contents of every binding.
    fn spec(&self, case: &Case) -> Vec<Expected> {
        let mut buffers = case.buffers.clone();
        (self.reference)(&mut buffers);
        buffers.iter().map(Expected::from).collect()
    }
    fn tolerance(&self) -> f64 {
        f64::from(self.tolerance)
    }
}
