// A buffer borrowed read-only cannot be bound where the kernel writes: read-write bindings
// take `&mut GpuBuffer<T>`.
use wgsl_dsl::prelude::*;
use wgsl_dsl::runtime::{DispatchError, Gpu, GpuBuffer, TypedKernel};

#[kernel(workgroup_size = 64)]
fn axpy(
    #[uniform] a: f32,
    #[storage(read)] x: &[f32],
    #[storage(read_write)] y: &mut [f32],
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
) {
    let i = gid.x;
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

fn run(
    gpu: &Gpu,
    kernel: &TypedKernel<Axpy>,
    a: &GpuBuffer<f32>,
    x: &GpuBuffer<f32>,
    y: &GpuBuffer<f32>,
) -> Result<(), DispatchError> {
    kernel.dispatch(gpu, AxpyArgs { a, x, y }, [37, 1, 1])
}

fn main() {}
