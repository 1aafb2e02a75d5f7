use wgsl_dsl::prelude::*;
type F16 = half::f16;

fn main() {
    let mut k = KernelBuilder::new("k", [32, 1, 1]);
    let a = k.storage::<RuntimeArray<F16>, ReadOnly>("a");
    let x: Exp<CoopMat<F16, 16, 16, MatrixA>> = a.at(0u32).coop_load(16u32, CoopLayout::RowMajor);
    let acc = Exp::<CoopMat<f32, 16, 16, Accumulator>>::zero();
    // An A-role matrix where the B operand belongs.
    let _ = coop_multiply_add(&x, &x, &acc);
}
