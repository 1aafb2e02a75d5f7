//! A workgroup-memory race a GPU would hide, and the interpreter's report naming both Rust
//! lines: `cargo run -p wgsl-dsl --example race`.
use wgsl_dsl::interp::{HostBuffer, Interpreter};

// Its `FILE` serves the race test.
#[allow(dead_code)]
#[path = "kernels/shift.rs"]
mod shift;

fn main() {
    // y[g] = x[g + 1] within each workgroup, through workgroup memory; the barrier between
    // the store and the load is missing.
    let (k, _, _) = shift::shift_kernel(false);
    let shader = k
        .build()
        .expect("the kernel builds: naga does not see the race");

    let cpu = Interpreter::new();
    let program = cpu
        .compile(&shader)
        .expect("the interpreter runs every DSL kernel");
    let xs = HostBuffer::from_slice(&[1.0f32; 128]);
    let ys = HostBuffer::from_slice(&[0.0f32; 128]);
    match cpu.dispatch(&program, &[&xs, &ys], [2, 1, 1]) {
        Ok(_) => {
            eprintln!("unexpectedly no race");
            std::process::exit(1);
        }
        Err(e) => println!("error: {e}"),
    }
}
