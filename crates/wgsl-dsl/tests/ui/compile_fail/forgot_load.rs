// A place (a buffer element, a `var`) where a value belongs is an error that names the fix,
// `.load()` (issue 21, item 6): stored, bound to a `let`, an operand on either side, compared.
use wgsl_dsl::prelude::*;

fn main() {
    let mut k = KernelBuilder::new("forgot_load", [64, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let i = k.let_("i", global_invocation_id().x());
    k.store(&y.at(&i), x.at(&i));
    let _ = k.let_("v", x.at(&i));
    let _ = x.at(&i) * 2.0f32;
    let _ = 2.0f32 * x.at(&i);
    let _ = x.at(&i).lt(1.0f32);
}
