//! Typed kernel interfaces (ARCHITECTURE.md decision *A kernel's interface is written once*): a kernel's bindings, declared once, are also
//! the type of its arguments.
//!
//! - [`KernelArgs`]: an argument struct with one named field per binding, in binding order:
//!   `&GpuBuffer<T>` for a read-only storage or uniform binding, `&mut GpuBuffer<T>` for a
//!   read-write one. A missing, extra, swapped (of another type or access) or wrongly typed
//!   buffer is a compile error at the field; so is a read-write buffer bound twice, since
//!   `&mut` does not alias (WebGPU forbids a writable binding aliasing another).
//! - [`KernelDef`]: a kernel definition: how to build it, its argument struct, and how many
//!   workgroups cover a problem size (the grid lives with the kernel).
//! - [`TypedKernel`]: a compiled `KernelDef`, whose [`TypedKernel::dispatch`] and
//!   [`TypedKernel::record`] take the argument struct and the problem size.
//!
//! `#[kernel]` writes all three from the function's parameters (`fn sgd_update` gives the
//! definition `SgdUpdate` and the arguments `SgdUpdateArgs<'a>`); a kernel written with the
//! builder declares its bindings with `#[derive(Bindings)]`, which writes the argument struct,
//! and implements [`KernelDef`] by hand. Underneath, a typed dispatch is the positional,
//! checked-at-run-time [`Gpu::dispatch`] / [`Recorder::dispatch`] with the fields in order.
//!
//! An argument struct is generic over the executor whose buffers it borrows
//! ([`ExecutorBuffers`]), the GPU by default: `SgdUpdateArgs<'a>` is
//! `SgdUpdateArgs<'a, Gpu>`, of `GpuBuffer`s, and `SgdUpdateArgs<'a, Interpreter>` is the same
//! struct of `wgsl_dsl::interp::HostBuffer`s, which
//! `wgsl_dsl::interp::Interpreter::compile_typed` dispatches with
//! the same compile-time checks (the field names and types are the same; only the buffer type
//! differs, and the executor is inferred from the dispatch that takes the struct).
//!
//! ```
//! use wgsl_dsl::prelude::*;
//! use wgsl_dsl::runtime::{Gpu, GpuBuffer};
//!
//! #[kernel(workgroup_size = 64)]
//! fn scale(
//!     #[uniform] factor: f32,
//!     #[storage(read)] x: &[f32],
//!     #[storage(read_write)] y: &mut [f32],
//!     #[builtin(global_invocation_id)] gid: Vec3<u32>,
//! ) {
//!     let i = gid.x;
//!     if i < y.len() {
//!         y[i] = factor * x[i];
//!     }
//! }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let gpu = Gpu::new()?;
//! let kernel = gpu.compile_typed(Scale)?;
//! let factor = GpuBuffer::from_value(&gpu, 3.0f32)?;
//! let x = GpuBuffer::from_slice(&gpu, &[1.0f32, 2.0, 3.0])?;
//! let mut y = GpuBuffer::<f32>::zeroed(&gpu, 3)?;
//! // `#[kernel]`'s default problem size: invocations per dimension.
//! kernel.dispatch(&gpu, ScaleArgs { factor: &factor, x: &x, y: &mut y }, [3, 1, 1])?;
//! assert_eq!(y.read(&gpu)?, vec![3.0, 6.0, 9.0]);
//! # Ok(())
//! # }
//! ```

use bytemuck::Pod;

use super::buffer::{BindArg, GpuBuffer};
use super::gpu::Gpu;
use super::pipeline::Kernel;
use super::recorder::Recorder;
use wgsl_dsl_core::types::{Format, SampledType, WgslType};
use wgsl_dsl_exec::{
    ArgsOn, DispatchError, ExecutorBuffers, KernelArgs, KernelDef, check_interface,
};

/// A kernel definition's argument struct over GPU buffers: `SgdUpdateArgs<'a>` (that is,
/// `SgdUpdateArgs<'a, Gpu>`) for `K = SgdUpdate`. What [`TypedKernel::dispatch`] takes.
pub type GpuArgs<'a, K> = ArgsOn<'a, K, Gpu>;

/// The GPU's buffers and textures, which argument structs borrow by default.
impl ExecutorBuffers for Gpu {
    type Buffer<T: 'static> = GpuBuffer<T>;
    type Arg = dyn BindArg;
    fn arg<T: Pod + WgslType>(buffer: &GpuBuffer<T>) -> &Self::Arg {
        buffer
    }
    type Texture<F: Format> = super::GpuTexture<F>;
    type SampledTexture<T: SampledType> = dyn super::TextureOf<T>;
    fn texture_arg<F: Format>(texture: &super::GpuTexture<F>) -> &Self::Arg {
        texture
    }
    fn sampled_texture_arg<T: SampledType>(texture: &Self::SampledTexture<T>) -> &Self::Arg {
        texture
    }
}

/// A compiled [`KernelDef`] on one [`Gpu`]: dispatches take its argument struct and problem
/// size. Made by [`Gpu::compile_typed`].
#[derive(Clone, Debug)]
pub struct TypedKernel<K> {
    def: K,
    kernel: Kernel,
}

impl<K: KernelDef> TypedKernel<K> {
    /// The definition it was compiled from.
    pub fn def(&self) -> &K {
        &self.def
    }

    /// The untyped kernel (signature, pipeline), for the positional layer.
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// Run the kernel over the workgroups covering `size`, and submit (see [`Gpu::dispatch`]:
    /// the arguments are still checked against the bindings, for sizes and limits).
    ///
    /// # Errors
    /// As [`Gpu::dispatch`].
    #[track_caller]
    pub fn dispatch(
        &self,
        gpu: &Gpu,
        args: GpuArgs<'_, K>,
        size: K::Size,
    ) -> Result<(), DispatchError> {
        let caller = std::panic::Location::caller();
        let workgroups = self.def.workgroups(size);
        args.with_bind_args(|a| gpu.dispatch(&self.kernel, a, workgroups))
            .map_err(|e| e.called_at(caller))
    }

    /// Record a dispatch over the workgroups covering `size` into `rec` (see
    /// [`Recorder::dispatch`]).
    ///
    /// # Errors
    /// As [`Recorder::dispatch`].
    #[track_caller]
    pub fn record(
        &self,
        rec: &mut Recorder<'_>,
        args: GpuArgs<'_, K>,
        size: K::Size,
    ) -> Result<(), DispatchError> {
        let caller = std::panic::Location::caller();
        let workgroups = self.def.workgroups(size);
        args.with_bind_args(|a| rec.dispatch(&self.kernel, a, workgroups))
            .map_err(|e| e.called_at(caller))
    }
}

impl Gpu {
    /// Build `def`'s kernel for this device's limits, compile it (see [`Gpu::compile`]) and
    /// check that its bindings are exactly those of `K::Args`, in order (names, kinds, store
    /// types), so that every later typed dispatch binds each buffer where it belongs.
    ///
    /// # Errors
    /// [`DispatchErrorKind::Build`](wgsl_dsl_exec::DispatchErrorKind::Build) if the kernel does not build; [`DispatchErrorKind::Interface`](wgsl_dsl_exec::DispatchErrorKind::Interface) if
    /// its bindings differ from its argument struct's; the errors of [`Gpu::compile`].
    pub fn compile_typed<K: KernelDef>(&self, def: K) -> Result<TypedKernel<K>, DispatchError> {
        let shader = def.build().build_for(&self.target_limits())?;
        let kernel = self.compile(&shader)?;
        check_interface(kernel.signature(), &K::Args::bindings())?;
        Ok(TypedKernel { def, kernel })
    }
}
