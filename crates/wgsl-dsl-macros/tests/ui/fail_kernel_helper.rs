use wgsl_dsl::prelude::*;

#[kernel(helper)]
fn no_result(x: f32) {
    let y = x;
}

#[kernel(helper)]
fn recursive(x: f32) -> f32 {
    recursive(x - 1.0)
}

fn main() {}
