use wgsl_dsl::prelude::*;

fn main() {
    let mut k = KernelBuilder::new("k", [1, 1, 1]);
    let data = k.storage::<RuntimeArray<f32>, ReadOnly>("data");
    let _ = data.at(1.5f32).load();
}
