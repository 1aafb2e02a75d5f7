//! `examples/run_kernel.rs` on the interpreter at its own size (n = 1001, a partial last
//! block): the interpreter checks every index, so a kernel that reads `y[i]` for the 23
//! invocations past the end fails here where the GPU's robust access hides it (issue 21,
//! item 2).

#[path = "../examples/run_kernel.rs"]
#[allow(dead_code)]
mod run_kernel;

#[test]
fn the_run_kernel_example_passes_on_the_interpreter_at_its_own_size() {
    let inputs = run_kernel::Inputs::random(run_kernel::N);
    let got = run_kernel::run_on_interpreter(&inputs).unwrap_or_else(|e| panic!("{e}"));
    if let Err(e) = run_kernel::check(&inputs, &got) {
        panic!("{e}");
    }
}
