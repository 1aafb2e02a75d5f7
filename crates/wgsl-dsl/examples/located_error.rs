//! An invalid kernel and the error that names the Rust line at fault:
//! `cargo run -p wgsl-dsl --example located_error`.
use wgsl_dsl::prelude::*;

fn main() {
    let mut k = KernelBuilder::new("constant_index_out_of_bounds", [1, 1, 1]);
    let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
    let values = k.let_("values", array([lit(1.0f32), lit(2.0f32), lit(3.0f32)]));
    let oops = values.index(5u32); // the line the error names
    k.store(&out.at(0u32), oops);
    match k.build() {
        Ok(_) => {
            eprintln!("unexpectedly valid");
            std::process::exit(1);
        }
        Err(e) => println!("error: {e}"),
    }
}
