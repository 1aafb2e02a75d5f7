//! Helpers shared by the test files of this directory (each file is its own crate: one that
//! does not use a helper would warn about it, hence the `allow(dead_code)`s).

use wgsl_dsl::prelude::*;
use wgsl_dsl::{CallSite, TargetLimits};

/// Builds `k` for a target without any optional capability (WebGL) and returns the call site
/// and the capabilities of the `MissingCapability` error it must give.
#[allow(dead_code)]
#[track_caller]
pub fn missing_capability(k: &KernelBuilder) -> (CallSite, naga::valid::Capabilities) {
    let webgl = TargetLimits {
        capabilities: naga::valid::Capabilities::empty(),
        ..TargetLimits::default()
    };
    match k.build_for(&webgl) {
        Err(BuildError::MissingCapability { site, needed, .. }) => (site, needed),
        other => panic!("expected MissingCapability, got {other:?}"),
    }
}
