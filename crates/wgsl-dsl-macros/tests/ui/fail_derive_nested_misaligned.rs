use wgsl_dsl::prelude::*;

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, WgslStruct)]
#[repr(C)]
struct Inner {
    #[wgsl(vec)]
    v: [f32; 4],
}

// `Inner` is 16-byte aligned in WGSL; the macro only knows it when the crate compiles.
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, WgslStruct)]
#[repr(C)]
struct Outer {
    n: u32,
    inner: Inner,
}

fn main() {}
