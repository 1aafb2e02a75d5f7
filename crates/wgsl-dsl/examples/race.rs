//! A workgroup-memory race a GPU would hide, and the interpreter's report naming both Rust
//! lines: `cargo run -p wgsl-dsl --example race`.
use wgsl_dsl::interp::{HostBuffer, Interpreter};
use wgsl_dsl::prelude::*;

fn main() {
    // y[i] = x[i + 1] within each workgroup, through workgroup memory; the barrier between
    // the store and the load is missing.
    let mut k = KernelBuilder::new("shift_left", [64, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let tile = k.workgroup::<Array<f32, 65>>("tile");
    let l = k.let_("l", local_invocation_index());
    let g = k.let_("g", global_invocation_id().x());
    k.store(&tile.at(&l), x.at(&g).load());
    // k.workgroup_barrier();
    let next = tile.at(&l + 1u32).load();
    k.store(&y.at(&g), next);
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
