//! Every kernel of the workspace has its emitted WGSL pinned in `snapshots/<suite>@<kernel>.snap`,
//! and the emitted WGSL is parsed back with naga's WGSL front end and validated again.
//!
//! Review changes with `cargo insta review`; `cargo insta test --unreferenced reject` also
//! rejects snapshot files no test refers to (and so does `no_unreferenced_snapshots` below).
//! With `CI` set (`.ci/run`) a changed snapshot fails and nothing is written, whatever insta's
//! variables say (`common/snapshot.rs`; `snapshot_ci.rs` checks it).

#[path = "common/snapshot.rs"]
mod snapshot;

use std::collections::BTreeSet;
use std::path::PathBuf;

use naga::valid::{Capabilities, ValidationFlags, Validator};
use wgsl_dsl::TargetLimits;

fn snapshot_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("snapshots")
}

/// Parse WGSL with naga's front end and validate it with all flags.
fn reparse(name: &str, wgsl: &str, caps: Capabilities) {
    let module = naga::front::wgsl::parse_str(wgsl).unwrap_or_else(|e| {
        panic!(
            "{name}: emitted WGSL does not parse:\n{}",
            e.emit_to_string(wgsl)
        )
    });
    Validator::new(ValidationFlags::all(), caps)
        .validate(&module)
        .unwrap_or_else(|e| panic!("{name}: emitted WGSL does not validate: {e:?}"));
}

fn assert_snapshot(suite: &str, name: &str, wgsl: &str) {
    snapshot::assert_wgsl_snapshot(&snapshot_dir(), suite, name, wgsl);
}

/// The `(suite, kernel)` pairs pinned by this file, each with the target it is built for.
fn registry() -> Vec<(&'static str, String, wgsl_dsl::KernelBuilder, TargetLimits)> {
    let mut v = Vec::new();
    let default = TargetLimits::default();
    for e in wgsl_dsl_workspace_tests::examples::all() {
        v.push(("examples", e.name.to_string(), (e.build)(), default));
    }
    for k in mlp::kernels::all() {
        v.push(("mlp", k.name().to_string(), k, default));
    }
    for (k, target) in wgsl_gemm::snapshot_kernels() {
        v.push(("gemm", k.name().to_string(), k, target));
    }
    for (name, k) in wgsl_dsl_workspace_tests::blocks::all() {
        v.push(("blocks", name, k, default));
    }
    v.push((
        "textures",
        "texture_ops".to_string(),
        wgsl_dsl_workspace_tests::textures::texture_ops(),
        default,
    ));
    // Textures in `#[kernel]` (issue 26).
    v.push((
        "textures",
        "tint".to_string(),
        wgsl_dsl_workspace_tests::textures::tint(),
        default,
    ));
    // Kernels with backward passes (wgsl_dsl::autodiff), and those passes.
    let derived = wgsl_dsl_workspace_tests::derived::snapshot_kernels()
        .unwrap_or_else(|e| panic!("derived: {e}"));
    for k in derived {
        v.push(("derived", k.name().to_string(), k, default));
    }
    v
}

#[test]
fn every_kernel_matches_its_snapshot_and_reparses() {
    let mut failures = Vec::new();
    for (suite, name, k, target) in registry() {
        let shader = k
            .build_for(&target)
            .unwrap_or_else(|e| panic!("{suite}/{name}: {e}"));
        assert_eq!(
            shader.signature.name, name,
            "kernel name and registry name differ"
        );
        reparse(&name, &shader.wgsl, shader.signature.capabilities);
        if let Err(e) = std::panic::catch_unwind(|| assert_snapshot(suite, &name, &shader.wgsl)) {
            failures.push((name, e));
        }
    }
    if let Some((name, e)) = failures.into_iter().next() {
        eprintln!("snapshot of `{name}` changed");
        std::panic::resume_unwind(e);
    }
}

#[test]
fn at_least_fifteen_example_kernels() {
    assert!(wgsl_dsl_workspace_tests::examples::all().len() >= 15);
}

#[test]
fn no_unreferenced_snapshots() {
    let expected: BTreeSet<String> = registry()
        .into_iter()
        .map(|(suite, name, _, _)| format!("{suite}@{name}.snap"))
        .collect();
    let mut unreferenced = Vec::new();
    for entry in std::fs::read_dir(snapshot_dir()).expect("snapshots/ exists") {
        let file = entry
            .expect("readable dir entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        // The macros@ suite is checked by the macros crate's own tests.
        let ours = [
            "examples@",
            "mlp@",
            "gemm@",
            "blocks@",
            "derived@",
            "textures@",
        ]
        .iter()
        .any(|suite| file.starts_with(suite));
        if ours && file.ends_with(".snap") && !expected.contains(&file) {
            unreferenced.push(file);
        }
    }
    assert!(
        unreferenced.is_empty(),
        "unreferenced snapshot files: {unreferenced:?}"
    );
}
