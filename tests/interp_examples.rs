//! Every example kernel of the registry runs on the interpreter (no GPU needed) through the
//! verification harness: random inputs of odd sizes, outputs poisoned first, every binding's
//! final contents equal to the CPU reference's, and none of the interpreter's checks (races,
//! bounds, divergent barriers, reads of unwritten variables) fires.

use wgsl_dsl_harness::{Interpreter, SeedableRng, verify};
use wgsl_dsl_workspace_tests::{Rng, examples};

#[test]
fn every_example_kernel_matches_its_cpu_reference_on_the_interpreter() {
    let cpu = Interpreter::new();
    let mut failures = Vec::new();
    let all = examples::all();
    for e in &all {
        for seed in [1, 2] {
            let case = (e.case)(&mut Rng::seed_from_u64(seed));
            if let Err(err) = verify(&cpu, e, &case) {
                failures.push(format!("{err} (seed {seed})"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} examples failed:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
}
