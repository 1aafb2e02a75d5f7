//! Compile-fail and pass cases for `#[derive(WgslStruct)]` and `#[kernel]`; the expected
//! compiler output is in `tests/ui/*.stderr` (toolchain pinned in `rust-toolchain.toml`).
//! Regenerate with `TRYBUILD=overwrite cargo test -p wgsl-dsl-macros --test ui` and review.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/fail_*.rs");
    t.pass("tests/ui/pass_*.rs");
}
