use wgsl_dsl::prelude::*;
type F16 = half::f16;

fn main() {
    let mut k = KernelBuilder::new("k", [32, 1, 1]);
    let a = k.storage::<RuntimeArray<F16>, ReadOnly>("a");
    // A is 16 x 16 (K = 16) but B is 8 x 16 (K = 8).
    let x: Exp<CoopMat<F16, 16, 16, MatrixA>> = a.at(0u32).coop_load(16u32, CoopLayout::RowMajor);
    let y: Exp<CoopMat<F16, 8, 16, MatrixB>> = a.at(0u32).coop_load(16u32, CoopLayout::RowMajor);
    let acc = Exp::<CoopMat<f32, 16, 16, Accumulator>>::zero();
    let _ = coop_multiply_add(&x, &y, &acc);
}
