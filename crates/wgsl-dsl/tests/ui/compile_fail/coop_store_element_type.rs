use wgsl_dsl::prelude::*;
type F16 = half::f16;

fn main() {
    let mut k = KernelBuilder::new("k", [32, 1, 1]);
    let c = k.storage::<RuntimeArray<F16>, ReadWrite>("c");
    // An f32 accumulator cannot be stored into f16 memory.
    let acc = Exp::<CoopMat<f32, 16, 16, Accumulator>>::zero();
    k.coop_store(&acc, &c.at(0u32), 16u32, CoopLayout::RowMajor);
}
