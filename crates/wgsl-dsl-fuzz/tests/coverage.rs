//! The generator covers every expression and statement kind of the DSL's builder
//! (`wgsl_dsl::kernel::{EXPR_KINDS, STMT_KINDS}`, read back from the built kernels with
//! `KernelBuilder::node_kinds`), and its own analysis accepts every program it makes.

use std::collections::BTreeSet;

use wgsl_dsl::kernel::{EXPR_KINDS, STMT_KINDS};
use wgsl_dsl_fuzz::analysis::analyze;
use wgsl_dsl_fuzz::emit::emit;
use wgsl_dsl_fuzz::{GenOptions, generate};

/// Seeds the assertion is made over.
const SEEDS: u64 = 400;

#[test]
fn the_generator_covers_every_expression_and_statement_kind() {
    let opts = GenOptions::default();
    let mut seen = BTreeSet::new();
    for seed in 0..SEEDS {
        let prog = generate(seed, &opts, true);
        let an = analyze(&prog).unwrap_or_else(|e| panic!("seed {seed}: refused: {e}"));
        seen.extend(emit(&prog, &an).kernel.node_kinds());
    }
    let missing: Vec<&str> = EXPR_KINDS
        .iter()
        .chain(STMT_KINDS)
        .copied()
        .filter(|k| !seen.contains(k))
        .collect();
    assert!(
        missing.is_empty(),
        "not generated in {SEEDS} seeds: {missing:?}"
    );
    // Nothing outside the lists either (they name every variant).
    let all: BTreeSet<&str> = EXPR_KINDS.iter().chain(STMT_KINDS).copied().collect();
    assert!(
        seen.is_subset(&all),
        "{:?}",
        seen.difference(&all).collect::<Vec<_>>()
    );
}

#[test]
fn generation_is_deterministic() {
    let opts = GenOptions::default();
    for seed in [0, 1, 77, u64::MAX] {
        assert_eq!(
            generate(seed, &opts, true),
            generate(seed, &opts, true),
            "seed {seed}"
        );
    }
}
