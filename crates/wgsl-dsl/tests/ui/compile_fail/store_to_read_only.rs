use wgsl_dsl::prelude::*;

fn main() {
    let mut k = KernelBuilder::new("k", [1, 1, 1]);
    let input = k.storage::<RuntimeArray<f32>, ReadOnly>("input");
    k.store(&input.at(0u32), 1.0f32);
}
