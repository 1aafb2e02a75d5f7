//! The printer writes Rust that builds the same kernel: `tests/printed/seed_N.rs` is
//! `fuzz --no-gpu --replay N`'s output (the generator's kernel of case seed `N` as builder
//! calls), compiled here, and its WGSL must equal the emitter's for the same seed. A change
//! of the generator changes these kernels: regenerate the files with that command.

#[allow(clippy::all, unused_imports, unused_parens)]
mod seed_11 {
    include!("printed/seed_11.rs");
}

/// Seed 30 has vector bitcasts (`.bitcast::<Vec2<i32>>()`, `Vec4<u32>`, `Vec4<f32>`): printed
/// with their width since the printer knows the result type.
#[allow(clippy::all, unused_imports, unused_parens)]
mod seed_30 {
    include!("printed/seed_30.rs");
}

use wgsl_dsl_fuzz::analysis::analyze;
use wgsl_dsl_fuzz::emit::emit;
use wgsl_dsl_fuzz::{GenOptions, generate};

fn emitted_wgsl(seed: u64) -> String {
    let prog = generate(seed, &GenOptions::default(), true);
    let an = analyze(&prog).expect("analysis");
    emit(&prog, &an).kernel.build().expect("build").wgsl
}

#[test]
fn printed_code_builds_the_kernel_it_prints() {
    for (seed, printed) in [(11, seed_11::kernel()), (30, seed_30::kernel())] {
        let wgsl = printed
            .build()
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"))
            .wgsl;
        assert_eq!(wgsl, emitted_wgsl(seed), "seed {seed}");
    }
}
