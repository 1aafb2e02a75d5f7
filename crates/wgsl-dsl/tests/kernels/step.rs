// The uniform of the gradient-descent kernels of `typed.rs` and `rust_meaning.rs`
// (`include!`d: it needs `wgsl_dsl::prelude::*` in scope): the learning rate and the length,
// padded to 16 bytes.
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable, WgslStruct)]
#[repr(C)]
#[wgsl(uniform)]
struct Step {
    lr: f32,
    len: u32,
    _pad0: u32,
    _pad1: u32,
}
