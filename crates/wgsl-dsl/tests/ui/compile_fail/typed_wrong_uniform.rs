// A uniform of another struct than the kernel declares does not compile.
use wgsl_dsl::prelude::*;
use wgsl_dsl::runtime::{DispatchError, Gpu, GpuBuffer, TypedKernel};

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, WgslStruct)]
#[repr(C)]
#[wgsl(uniform)]
struct SgdParams {
    lr: f32,
    len: u32,
    _pad0: u32,
    _pad1: u32,
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, WgslStruct)]
#[repr(C)]
#[wgsl(uniform)]
struct AdamParams {
    lr: f32,
    beta1: f32,
    beta2: f32,
    len: u32,
}

#[kernel(workgroup_size = 64)]
fn sgd(
    #[uniform] hp: SgdParams,
    #[storage(read)] grads: &[f32],
    #[storage(read_write)] params: &mut [f32],
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
) {
    let i = gid.x;
    if i < hp.len {
        params[i] -= hp.lr * grads[i];
    }
}

fn run(
    gpu: &Gpu,
    kernel: &TypedKernel<Sgd>,
    hp: &GpuBuffer<AdamParams>,
    grads: &GpuBuffer<f32>,
    params: &mut GpuBuffer<f32>,
) -> Result<(), DispatchError> {
    kernel.dispatch(gpu, SgdArgs { hp, grads, params }, [37, 1, 1])
}

fn main() {}
