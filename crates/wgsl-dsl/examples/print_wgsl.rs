//! Print the WGSL of a small kernel: `cargo run -p wgsl-dsl --example print_wgsl`.
use wgsl_dsl::prelude::*;

fn main() -> Result<(), BuildError> {
    let mut k = KernelBuilder::new("saxpy", [64, 1, 1]);
    let a = k.uniform::<f32>("a");
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.ge(y.len()), |k| k.return_());
    let acc = k.var("acc", 0.0f32);
    k.for_range("j", 0u32, 4u32, |k, j| {
        k.update(&acc, |old| old + j.to_f32());
    });
    let v = k.let_(
        "v",
        fma(a.load(), x.at(&i).load(), y.at(&i).load()) + acc.load(),
    );
    k.store(&y.at(&i), v);
    let shader = k.build()?;
    println!("{}", shader.wgsl);
    Ok(())
}
