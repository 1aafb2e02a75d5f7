use wgsl_dsl::prelude::*;

fn main() {
    let mut k = KernelBuilder::new("k", [32, 1, 1]);
    let a = k.storage::<RuntimeArray<f32>, ReadOnly>("a");
    // Tensor cores take f16 inputs at 16x16x16; f32 inputs do not compile.
    let x: Exp<CoopMat<f32, 16, 16, MatrixA>> = a.at(0u32).coop_load(16u32, CoopLayout::RowMajor);
    let y: Exp<CoopMat<f32, 16, 16, MatrixB>> = a.at(0u32).coop_load(16u32, CoopLayout::RowMajor);
    let acc = Exp::<CoopMat<f32, 16, 16, Accumulator>>::zero();
    let _ = coop_multiply_add(&x, &y, &acc);
}
