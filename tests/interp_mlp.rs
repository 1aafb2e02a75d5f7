//! Every MLP kernel against its `f64` reference on the interpreter (no GPU needed), through the
//! verification harness, at the sizes `mlp_kernels.rs` and `mlp_fused.rs` use on the GPU:
//! random inputs of odd sizes, outputs poisoned before the run, relative error <= 1e-5, and no
//! race, out-of-bounds access, divergent barrier or read of an unwritten variable.

use mlp_verified::ops::{self, fused};
use wgsl_dsl_harness::{Interpreter, SeedableRng, verify};
use wgsl_dsl_workspace_tests::Rng;

#[test]
fn every_mlp_kernel_matches_its_reference_on_the_interpreter() {
    let cpu = Interpreter::new();
    let mut failures = Vec::new();
    for op in ops::all() {
        for (i, s) in ops::CHECKED_SIZES.iter().enumerate() {
            let seed = 100 + i as u64;
            let case = op.case(&mut Rng::seed_from_u64(seed), s);
            if let Err(m) = verify(&cpu, &op, &case) {
                failures.push(format!("{m} (sizes {s:?}, seed {seed})"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_fused_kernel_matches_its_reference_on_the_interpreter_at_odd_batches_and_widths() {
    let cpu = Interpreter::new();
    let mut failures = Vec::new();
    for op in &fused::all() {
        for (i, s) in fused::CHECKED_SIZES.iter().enumerate() {
            let seed = 200 + i as u64;
            let case = op.case(&mut Rng::seed_from_u64(seed), s);
            if let Err(m) = verify(&cpu, op, &case) {
                failures.push(format!("{m} (sizes {s:?}, seed {seed})"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_tensor_core_forward_matches_its_reference_on_the_interpreter() {
    // `forward_gather_f16_*` (`mnist train --precision f16`) at the fused kernels' odd sizes
    // (batch 1, 7, 65, 129), on the interpreter's cooperative matrices with subgroups of 32;
    // the reference rounds each factor to f16 (fused::coop_forward_spec).
    let cpu = Interpreter::new();
    let mut failures = Vec::new();
    for op in &fused::coop_forward_ops() {
        for (i, s) in fused::CHECKED_SIZES.iter().enumerate() {
            let seed = 300 + i as u64;
            let case = op.case(&mut Rng::seed_from_u64(seed), s);
            if let Err(m) = verify(&cpu, op, &case) {
                failures.push(format!("{m} (sizes {s:?}, seed {seed})"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
