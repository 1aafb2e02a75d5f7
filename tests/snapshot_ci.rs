//! The snapshot check cannot be switched off by the environment (issue 12 §4): a changed shader
//! fails the CI command whatever `INSTA_UPDATE` or `INSTA_FORCE_PASS` say, and no snapshot file
//! is written.
//!
//! Cheap: no cargo is run. A scratch directory holds one changed snapshot; this test binary is
//! run again as a child, inside the environment `.ci/run` sets (`source .ci/env`), with the
//! variables set that would have insta accept and rewrite the change, and its helper test
//! asserts that snapshot with the assertion of `snapshots.rs`.

#[path = "common/snapshot.rs"]
mod snapshot;

use std::path::{Path, PathBuf};
use std::process::Command;

/// Where the child finds the scratch snapshot directory.
const SCRATCH: &str = "WGSL_DSL_SNAPSHOT_SCRATCH";
const SUITE: &str = "examples";

fn kernel() -> (String, String) {
    let e = &wgsl_dsl_workspace_tests::examples::all()[0];
    let shader = (e.build)().build().expect("the example builds");
    (e.name.to_string(), shader.wgsl)
}

/// A scratch copy of the kernel's snapshot, with one line of its WGSL changed.
fn scratch(name: &str) -> (tempfile::TempDir, PathBuf, String) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let real = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("snapshots")
        .join(format!("{SUITE}@{name}.snap"));
    let stored = std::fs::read_to_string(&real).expect("the kernel's snapshot");
    let changed = stored.replacen("fn ", "fn /* changed */ ", 1);
    assert_ne!(stored, changed);
    let path = dir.path().join(format!("{SUITE}@{name}.snap"));
    std::fs::write(&path, &changed).expect("write the scratch snapshot");
    (dir, path, changed)
}

/// Run the helper test of this binary in `dir`, with insta told to accept and rewrite, inside
/// the CI environment (`source .ci/env`) or outside it. The caller's CI and INSTA_ variables
/// are removed first.
fn run_child(dir: &Path, ci_env: bool) -> std::process::Output {
    let exe = std::env::current_exe().expect("the test binary");
    let root = env!("CARGO_MANIFEST_DIR");
    let script = if ci_env {
        format!("source '{root}/.ci/env' && exec \"$@\"")
    } else {
        "exec \"$@\"".to_string()
    };
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg(script)
        .arg("bash")
        .arg(exe)
        .args(["--ignored", "--exact", "child_asserts_the_scratch_snapshot"])
        .args(["--test-threads", "1"]);
    for (k, _) in std::env::vars_os() {
        if k == "CI" || k.to_string_lossy().starts_with("INSTA_") {
            cmd.env_remove(k);
        }
    }
    cmd.env(SCRATCH, dir)
        .env("INSTA_UPDATE", "always")
        .env("INSTA_FORCE_PASS", "1")
        .output()
        .expect("run the test binary")
}

#[test]
fn the_ci_command_runs_the_tests_in_the_ci_environment() {
    let root = env!("CARGO_MANIFEST_DIR");
    let run = std::fs::read_to_string(format!("{root}/.ci/run")).expect(".ci/run");
    let commands: Vec<&str> = run
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#'))
        .collect();
    let env = commands.iter().position(|l| *l == "source .ci/env");
    let test = commands.iter().position(|l| l.starts_with("cargo test"));
    assert!(
        matches!((env, test), (Some(e), Some(t)) if e < t),
        ".ci/run must `source .ci/env` before `cargo test`:\n{run}"
    );
}

#[test]
fn ci_fails_on_a_changed_snapshot_whatever_insta_is_told() {
    let (name, _) = kernel();

    // Inside the CI environment: fails, writes nothing.
    let (dir, path, changed) = scratch(&name);
    let out = run_child(dir.path(), true);
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !out.status.success(),
        "the changed snapshot passed in CI:\n{log}"
    );
    assert!(log.contains("changed"), "{log}");
    assert_eq!(
        std::fs::read_to_string(&path).expect("the scratch snapshot"),
        changed,
        "the snapshot file was rewritten:\n{log}"
    );
    let files: Vec<_> = std::fs::read_dir(dir.path())
        .expect("the scratch directory")
        .map(|e| e.expect("an entry").file_name())
        .collect();
    assert_eq!(files.len(), 1, "files were written: {files:?}\n{log}");

    // The same outside it: insta does as told (accepts and rewrites), which is what the CI
    // environment and the CI branch of the assertion prevent.
    let (dir, path, changed) = scratch(&name);
    let out = run_child(dir.path(), false);
    let rewritten = std::fs::read_to_string(&path).expect("the scratch snapshot");
    assert_ne!(
        rewritten,
        changed,
        "insta no longer rewrites with INSTA_UPDATE=always outside CI: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Run by [`ci_fails_on_a_changed_snapshot_whatever_insta_is_told`] in a child process.
#[test]
#[ignore = "a child of ci_fails_on_a_changed_snapshot_whatever_insta_is_told"]
fn child_asserts_the_scratch_snapshot() {
    let dir = std::env::var_os(SCRATCH)
        .expect("run by the parent test, which sets the scratch directory");
    let (name, wgsl) = kernel();
    snapshot::assert_wgsl_snapshot(Path::new(&dir), SUITE, &name, &wgsl);
}
