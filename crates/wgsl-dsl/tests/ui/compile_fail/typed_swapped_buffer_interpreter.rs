// On the interpreter too, buffers passed to each other's bindings do not compile (issue 21,
// item 4): the same argument structs as on the GPU, over `HostBuffer`s. Here the batch of
// `f32` features and the batch of `u32` labels of a builder-written kernel
// (`#[derive(Bindings)]`), and the parameters (written) and the gradients (only read) of a
// `#[kernel]`.
use wgsl_dsl::interp::{HostBuffer, InterpError, Interpreter, Report, TypedProgram};
use wgsl_dsl::prelude::*;

include!("support/gather_sgd.rs");

fn gather(
    images: &HostBuffer<f32>,
    labels: &HostBuffer<u32>,
    x: &mut HostBuffer<f32>,
    batch_labels: &mut HostBuffer<u32>,
) {
    let _args: GatherArgs<'_, Interpreter> = GatherArgs {
        images,
        labels,
        x: batch_labels,
        batch_labels: x,
    };
}

fn step(
    cpu: &Interpreter,
    kernel: &TypedProgram<Sgd>,
    grads: &HostBuffer<f32>,
    params: &mut HostBuffer<f32>,
) -> Result<Report, InterpError> {
    kernel.dispatch(cpu, SgdArgs { grads: params, params: grads }, [37, 1, 1])
}

fn main() {}
