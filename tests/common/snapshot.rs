//! The WGSL snapshot assertion of `snapshots.rs`, shared with `snapshot_ci.rs`, which checks
//! that the environment cannot switch it off in CI.

use std::path::Path;

/// Whether the tests run in CI: the `CI` variable is set (`.ci/run` sets `CI=true`).
pub fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// Assert that `wgsl` is the snapshot `<dir>/<suite>@<name>.snap`.
///
/// Outside CI this is insta's `assert_snapshot!` (a change is written as `.snap.new` for
/// `cargo insta review`, or as insta's `INSTA_UPDATE` says). In CI insta is not called: the
/// stored snapshot is read and compared, and nothing is written, whatever `INSTA_UPDATE`,
/// `INSTA_FORCE_PASS` or an insta config file say, so that a changed shader always fails CI.
pub fn assert_wgsl_snapshot(dir: &Path, suite: &str, name: &str, wgsl: &str) {
    if in_ci() {
        let path = dir.join(format!("{suite}@{name}.snap"));
        let stored = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "{}: no snapshot ({e}); in CI snapshots are never written: run \
                 `cargo insta test` locally, review, and commit the file",
                path.display()
            )
        });
        let body = snapshot_body(&stored)
            .unwrap_or_else(|| panic!("{}: not an insta snapshot file", path.display()));
        let (expected, actual) = (normalize(body), normalize(wgsl));
        if expected != actual {
            let line = expected
                .lines()
                .zip(actual.lines())
                .position(|(a, b)| a != b)
                .unwrap_or_else(|| expected.lines().count().min(actual.lines().count()));
            panic!(
                "{}: the WGSL of kernel `{name}` changed (first difference at line {}: \
                 stored {:?}, emitted {:?}); in CI snapshots are never updated: run \
                 `cargo insta test` locally, review with `cargo insta review`, commit",
                path.display(),
                line + 1,
                expected.lines().nth(line).unwrap_or("<end>"),
                actual.lines().nth(line).unwrap_or("<end>"),
            );
        }
        return;
    }
    insta::with_settings!({
        snapshot_path => dir,
        prepend_module_to_snapshot => false,
        snapshot_suffix => name,
        omit_expression => true,
        description => format!("WGSL of kernel `{name}`"),
    }, {
        insta::assert_snapshot!(suite, wgsl);
    });
}

/// The contents of an insta `.snap` file: what follows its `---` header.
fn snapshot_body(file: &str) -> Option<&str> {
    let rest = file.strip_prefix("---\n")?;
    let end = rest.find("\n---\n")?;
    Some(&rest[end + "\n---\n".len()..])
}

/// Line endings and trailing whitespace as insta compares text snapshots.
fn normalize(s: &str) -> String {
    s.replace("\r\n", "\n").trim_end().to_string()
}
