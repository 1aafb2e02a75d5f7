use wgsl_dsl::prelude::*;

fn main() {
    let mut k = KernelBuilder::new("k", [1, 1, 1]);
    let x = k.let_("x", lit(1.0f32));
    k.store(&x, 2.0f32);
}
