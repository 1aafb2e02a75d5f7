//! Ill-typed kernels are Rust compile errors. Each case in `tests/ui/compile_fail/` has the
//! expected compiler output beside it (`.stderr`); the toolchain is pinned in
//! `rust-toolchain.toml` so messages stay stable. Regenerate with `TRYBUILD=overwrite`.

#[test]
fn ill_typed_kernels_do_not_compile() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/compile_fail/*.rs");
}
