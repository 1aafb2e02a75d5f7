// A buffer borrowed read-only cannot be bound where the kernel writes: read-write bindings
// take `&mut GpuBuffer<T>`.
use wgsl_dsl::prelude::*;
use wgsl_dsl::runtime::{DispatchError, Gpu, GpuBuffer, TypedKernel};

include!("support/axpy.rs");

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
