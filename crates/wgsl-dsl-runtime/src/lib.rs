//! Running kernels on wgpu: a [`Gpu`] (adapter, device, queue, pipeline cache), typed buffers
//! ([`GpuBuffer<T>`]) and textures ([`GpuTexture<F>`]), compiled kernels ([`Kernel`]), checked dispatches, and a [`Recorder`]
//! for many dispatches in one submit.
//!
//! ```
//! use wgsl_dsl::prelude::*;
//! use wgsl_dsl::runtime::{Gpu, GpuBuffer};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let gpu = Gpu::new()?; // WGPU_BACKEND / WGPU_ADAPTER_NAME / WGPU_POWER_PREF, else the best adapter
//!
//! // y[i] = a * x[i] + y[i]
//! let mut k = KernelBuilder::new("saxpy", [64, 1, 1]);
//! let a = k.uniform::<f32>("a");
//! let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
//! let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
//! let i = k.let_("i", global_invocation_id().x());
//! k.if_(i.lt(y.len()), |k| k.store(&y.at(&i), a.load() * x.at(&i).load() + y.at(&i).load()));
//! let kernel = gpu.compile(&k.build_for(&gpu.target_limits())?)?;
//!
//! let n = 37;
//! let a_buf = GpuBuffer::from_value(&gpu, 2.0f32)?;
//! let x_buf = GpuBuffer::from_slice(&gpu, &vec![1.0f32; n])?;
//! let y_buf = GpuBuffer::from_slice(&gpu, &vec![0.5f32; n])?;
//! // Arguments in binding order; each is checked against its binding before submission.
//! gpu.dispatch(&kernel, &[&a_buf, &x_buf, &y_buf], kernel.workgroups_for([n as u32, 1, 1]))?;
//! assert_eq!(y_buf.read(&gpu)?, vec![2.5f32; n]);
//! # Ok(())
//! # }
//! ```
//!
//! The arguments above are positional, checked at run time. A kernel's typed interface
//! ([`KernelDef`], [`KernelArgs`], [`TypedKernel`]; written by `#[kernel]` and
//! `#[derive(Bindings)]`) names them instead, so that a missing,
//! swapped or wrongly typed buffer does not compile:
//! `kernel.dispatch(&gpu, SaxpyArgs { a: &a_buf, x: &x_buf, y: &mut y_buf }, [n, 1, 1])`.
//!
//! ## What is checked, and when
//! - [`Gpu::compile`]: the kernel against the device ([`check_limits`]): capabilities,
//!   workgroup size per dimension and in total, workgroup memory, binding numbers, storage and
//!   uniform bindings per stage, binding sizes, each a [`DispatchErrorKind::ExceedsDevice`] naming
//!   the limit, the kernel's need and the device's value; then wgpu's validation of the module
//!   and pipeline.
//! - [`Gpu::dispatch`], [`Recorder::dispatch`] ([`Gpu::check`] lists the checks): argument
//!   count, element types, strides, minimum sizes, aliasing, binding size and workgroup count
//!   limits, before anything is recorded or submitted.
//! - Every wgpu call that can fail runs inside error scopes; wgpu's errors come back as
//!   [`DispatchErrorKind::Wgpu`], never as a panic.
//! - [`GpuBuffer::read`] and [`Gpu::wait`] give up after [`GpuOptions::readback_timeout`] and
//!   report a lost device.
//!
//! ## Inside an existing wgpu program
//! [`Gpu::from_wgpu`] takes the caller's adapter, device and queue (checking the kernels it
//! will run against them), [`GpuBuffer::from_wgpu`] the caller's buffers, and
//! [`TypedKernel::record_in_encoder`] / [`TypedKernel::record_in_pass`] record checked
//! dispatches among the caller's own commands; [`WgpuShader`] gives a plain wgpu program
//! a kernel's shader module, bind group layout entries and entry point. `wgsl-dsl`'s
//! `byod` example (`cargo run -p wgsl-dsl --example byod`) is such a program.
//!
//! Users reach this crate as `wgsl_dsl::runtime` (the `wgsl-dsl` facade, feature `runtime`).

mod backward;
mod bind_cache;
mod buffer;
mod dispatch;
mod executor;
mod gpu;
mod interop;
mod pipeline;
mod profile;
mod readback;
mod recorder;
mod scan;
mod texture;
mod timing;
mod typed;

pub use backward::{BackwardArgs, DifferentiableDef, TypedBackward};
pub use buffer::{Arg, BindArg, GpuBuffer, Vec4View, View};
pub use gpu::{BindGroupStats, Gpu, GpuOptions, limits_of};
pub use interop::WgpuShader;
pub use pipeline::Kernel;
pub use profile::{DispatchTime, LabelTotal, Profile};
pub use readback::PendingRead;
pub use recorder::Recorder;
pub use scan::PrefixScan;
pub use texture::{GpuTexture, TextureOf};
pub use timing::TimestampMethod;
pub use typed::{GpuArgs, TypedKernel};
pub use wgpu;
// The executor contract, shared with the interpreter (`wgsl_dsl::exec`), under the paths
// users wrote before it was a crate of its own.
pub use wgsl_dsl_exec::{
    ArgBinding, DeviceError, DeviceLimit, DispatchError, DispatchErrorKind, Executor,
    ExecutorBuffers, KernelArgs, KernelDef, Limits, NoTexture, PlaceArg, TextureArg, ceil_div,
    check_limits, interpreter_limits, workgroups_covering,
};
