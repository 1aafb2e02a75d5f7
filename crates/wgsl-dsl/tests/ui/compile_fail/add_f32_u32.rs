use wgsl_dsl::prelude::*;

fn main() {
    let a: Exp<f32> = lit(1.0f32);
    let b: Exp<u32> = lit(2u32);
    let _ = a + b;
}
