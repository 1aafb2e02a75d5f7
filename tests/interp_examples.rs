//! Every example kernel of the registry runs on the interpreter (no GPU needed) through the
//! verification harness: random inputs of odd sizes, outputs poisoned first, every binding's
//! final contents equal to the CPU reference's, and none of the interpreter's checks (races,
//! bounds, divergent barriers, reads of unwritten variables) fires.

use wgsl_dsl_harness::{Interpreter, verify};
use wgsl_dsl_workspace_tests::examples;

#[test]
fn every_example_kernel_matches_its_cpu_reference_on_the_interpreter() {
    let cpu = Interpreter::new();
    examples::check_all(
        |_| true,
        |e, case| {
            verify(&cpu, e, case)
                .err()
                .map(|err| err.to_string())
                .into_iter()
                .collect()
        },
    );
}
