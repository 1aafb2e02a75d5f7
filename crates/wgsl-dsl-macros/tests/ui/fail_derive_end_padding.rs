use wgsl_dsl::prelude::*;

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, WgslStruct)]
#[repr(C)]
struct Particle {
    #[wgsl(vec)]
    position: [f32; 4],
    mass: f32,
}

fn main() {}
