//! [`Executor`]: what runs a kernel for the harness, through the positional (untyped) layer.
//! The wgpu runtime implements it here; the CPU interpreter implements it too.

use wgsl_dsl::runtime::{BindArg, Gpu, GpuBuffer, Kernel};
use wgsl_dsl::{KernelBuilder, KernelSignature};

use crate::data::{Data, StructValue};

/// An executor's error, boxed: the harness only reports it.
pub type Error = Box<dyn std::error::Error>;

/// Runs kernels on host data: compile, upload, dispatch with the buffers in binding order,
/// read back. A struct value ([`Data::Struct`]) is read-only (a uniform); reading it back gives
/// the uploaded value.
pub trait Executor {
    /// A compiled kernel.
    type Kernel;
    /// One binding's buffer.
    type Buffer;
    /// Build `kernel` for this executor's limits and compile it.
    ///
    /// # Errors
    /// Build and compile errors.
    fn compile(&self, kernel: &KernelBuilder) -> Result<Self::Kernel, Error>;
    /// The compiled kernel's signature: its bindings in order, with their access.
    fn signature<'k>(&self, kernel: &'k Self::Kernel) -> &'k KernelSignature;
    /// A buffer holding `data`.
    ///
    /// # Errors
    /// Allocation errors.
    fn upload(&self, data: &Data) -> Result<Self::Buffer, Error>;
    /// Run `kernel` once over `workgroups` with `args` bound in binding order, and wait.
    ///
    /// # Errors
    /// The executor's checks of the arguments, and errors while running.
    fn dispatch(
        &self,
        kernel: &Self::Kernel,
        args: &[&Self::Buffer],
        workgroups: [u32; 3],
    ) -> Result<(), Error>;
    /// The contents of `buffer`.
    ///
    /// # Errors
    /// Read-back errors.
    fn read(&self, buffer: &Self::Buffer) -> Result<Data, Error>;
}

/// A binding's buffer on the GPU.
#[derive(Debug)]
pub enum GpuBuffers {
    /// `f32` elements.
    F32(GpuBuffer<f32>),
    /// `u32` elements.
    U32(GpuBuffer<u32>),
    /// `i32` elements.
    I32(GpuBuffer<i32>),
    /// A struct value, and what was uploaded.
    Struct(Box<dyn BindArg>, StructValue),
}

/// The wgpu runtime: [`Gpu::compile`] of the kernel built for the adapter's limits,
/// [`Gpu::dispatch`] with its checks, [`GpuBuffer::read`].
impl Executor for Gpu {
    type Kernel = Kernel;
    type Buffer = GpuBuffers;

    fn compile(&self, kernel: &KernelBuilder) -> Result<Kernel, Error> {
        Ok(Gpu::compile(
            self,
            &kernel.build_for(&self.target_limits())?,
        )?)
    }

    fn signature<'k>(&self, kernel: &'k Kernel) -> &'k KernelSignature {
        kernel.signature()
    }

    fn upload(&self, data: &Data) -> Result<GpuBuffers, Error> {
        Ok(match data {
            Data::F32(v) => GpuBuffers::F32(GpuBuffer::from_slice(self, v)?),
            Data::U32(v) => GpuBuffers::U32(GpuBuffer::from_slice(self, v)?),
            Data::I32(v) => GpuBuffers::I32(GpuBuffer::from_slice(self, v)?),
            Data::Struct(s) => GpuBuffers::Struct(s.upload(self)?, s.clone()),
        })
    }

    fn dispatch(
        &self,
        kernel: &Kernel,
        args: &[&GpuBuffers],
        workgroups: [u32; 3],
    ) -> Result<(), Error> {
        let args: Vec<&dyn BindArg> = args
            .iter()
            .map(|b| match b {
                GpuBuffers::F32(b) => b as &dyn BindArg,
                GpuBuffers::U32(b) => b,
                GpuBuffers::I32(b) => b,
                GpuBuffers::Struct(b, _) => b.as_ref(),
            })
            .collect();
        Gpu::dispatch(self, kernel, &args, workgroups)?;
        Ok(())
    }

    fn read(&self, buffer: &GpuBuffers) -> Result<Data, Error> {
        Ok(match buffer {
            GpuBuffers::F32(b) => Data::F32(b.read(self)?),
            GpuBuffers::U32(b) => Data::U32(b.read(self)?),
            GpuBuffers::I32(b) => Data::I32(b.read(self)?),
            GpuBuffers::Struct(_, value) => Data::Struct(value.clone()),
        })
    }
}
