// A typed dispatch without one of the kernel's buffers does not compile.
use wgsl_dsl::prelude::*;
use wgsl_dsl::runtime::{DispatchError, Gpu, GpuBuffer, TypedKernel};

include!("support/axpy.rs");

fn run(
    gpu: &Gpu,
    kernel: &TypedKernel<Axpy>,
    a: &GpuBuffer<f32>,
    y: &mut GpuBuffer<f32>,
) -> Result<(), DispatchError> {
    kernel.dispatch(gpu, AxpyArgs { a, y }, [37, 1, 1])
}

fn main() {}
