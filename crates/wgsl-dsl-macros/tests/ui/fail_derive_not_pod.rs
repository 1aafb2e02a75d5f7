use wgsl_dsl::prelude::*;

#[derive(Clone, Copy, WgslStruct)]
#[repr(C)]
struct Params {
    lr: f32,
}

fn main() {}
