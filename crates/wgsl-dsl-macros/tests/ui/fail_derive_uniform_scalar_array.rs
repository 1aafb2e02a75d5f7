use wgsl_dsl::prelude::*;

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, WgslStruct)]
#[repr(C)]
#[wgsl(uniform)]
struct Weights {
    w: [f32; 8],
}

fn main() {}
