use wgsl_dsl::prelude::*;

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, WgslStruct)]
#[repr(C)]
struct Light {
    intensity: f32,
    #[wgsl(vec)]
    direction: [f32; 3],
}

fn main() {}
