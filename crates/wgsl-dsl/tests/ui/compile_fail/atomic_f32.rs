use wgsl_dsl::prelude::*;

fn main() {
    let mut k = KernelBuilder::new("k", [1, 1, 1]);
    let counters = k.storage::<RuntimeArray<Atomic<f32>>, ReadWrite>("counters");
    k.atomic_add(&counters.at(0u32), 1.0f32);
}
