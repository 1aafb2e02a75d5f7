//! `y[i] = a * x[i] + y[i]` for `i < len(y)`: the README's kernel, shared by the examples
//! `print_wgsl`, `export` and `run_kernel` (`#[path]`).

use wgsl_dsl::prelude::*;

/// The kernel as the README writes it: `a` a uniform scalar, `x` and `y` storage buffers, one
/// invocation per element.
pub fn saxpy() -> KernelBuilder {
    // y[i] = a * x[i] + y[i], for i < n
    let mut k = KernelBuilder::new("saxpy", [64, 1, 1]);
    let a = k.uniform::<f32>("a");
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.lt(y.len()), |k| {
        let v = k.let_("v", fma(a.load(), x.at(&i).load(), y.at(&i).load()));
        k.store(&y.at(&i), v);
    });
    k
}
