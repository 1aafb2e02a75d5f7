use wgsl_dsl::prelude::*;

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, WgslStruct)]
#[repr(C)]
struct Pair {
    a: f32,
    b: f32,
}

// In uniform buffers a struct member starts at a multiple of 16 (WGSL spec §14.4.4).
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, WgslStruct)]
#[repr(C)]
#[wgsl(uniform)]
struct Uniforms {
    scale: f32,
    pair: Pair,
}

fn main() {}
