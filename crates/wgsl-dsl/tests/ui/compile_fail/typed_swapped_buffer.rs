// Buffers passed to each other's bindings do not compile: here the batch of `f32` features
// and the batch of `u32` labels of a builder-written kernel (`#[derive(Bindings)]`), and the
// parameters (written) and the gradients (only read) of a `#[kernel]`.
use wgsl_dsl::prelude::*;
use wgsl_dsl::runtime::{DispatchError, Gpu, GpuBuffer, TypedKernel};

include!("support/gather_sgd.rs");

fn gather(
    images: &GpuBuffer<f32>,
    labels: &GpuBuffer<u32>,
    x: &mut GpuBuffer<f32>,
    batch_labels: &mut GpuBuffer<u32>,
) {
    // Annotated: a struct literal that no dispatch takes has no executor to infer.
    let _args: GatherArgs<'_> = GatherArgs {
        images,
        labels,
        x: batch_labels,
        batch_labels: x,
    };
}

fn step(
    gpu: &Gpu,
    kernel: &TypedKernel<Sgd>,
    grads: &GpuBuffer<f32>,
    params: &mut GpuBuffer<f32>,
) -> Result<(), DispatchError> {
    kernel.dispatch(gpu, SgdArgs { grads: params, params: grads }, [37, 1, 1])
}

fn main() {}
