use wgsl_dsl::prelude::*;

fn main() {
    let mut k = KernelBuilder::new("k", [1, 1, 1]);
    let scale = k.uniform::<f32>("scale");
    k.store(&scale, 2.0f32);
}
