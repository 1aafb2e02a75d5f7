//! [`Executor`]: what runs a kernel for the harness, through the positional (untyped) layer.
//! The wgpu runtime and the CPU interpreter (`wgsl_dsl::interp`) implement it here.

use wgsl_dsl::interp::{HostArg, HostBuffer, Interpreter, Program};
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

/// A binding's buffer in host memory, for the interpreter.
#[derive(Debug)]
pub enum HostBuffers {
    /// `f32` elements.
    F32(HostBuffer<f32>),
    /// `u32` elements.
    U32(HostBuffer<u32>),
    /// `i32` elements.
    I32(HostBuffer<i32>),
    /// A struct value, and what was uploaded.
    Struct(Box<dyn HostArg>, StructValue),
}

/// The CPU interpreter: the kernel built with the default [`TargetLimits`]
/// (`wgsl_dsl::TargetLimits`, WebGPU's), [`Interpreter::compile`], [`Interpreter::dispatch`]
/// with the runtime's argument checks. Besides a wrong result, the harness fails a kernel the
/// interpreter finds at fault: an out-of-bounds access, a data race, a divergent barrier
/// (errors), or a read of a variable before anything was written to it (a warning of the
/// interpreter, an error here: a verified kernel reads nothing it did not write).
impl Executor for Interpreter {
    type Kernel = Program;
    type Buffer = HostBuffers;

    fn compile(&self, kernel: &KernelBuilder) -> Result<Program, Error> {
        Ok(Interpreter::compile(self, &kernel.build()?)?)
    }

    fn signature<'k>(&self, kernel: &'k Program) -> &'k KernelSignature {
        kernel.signature()
    }

    fn upload(&self, data: &Data) -> Result<HostBuffers, Error> {
        Ok(match data {
            Data::F32(v) => HostBuffers::F32(HostBuffer::from_slice(v)),
            Data::U32(v) => HostBuffers::U32(HostBuffer::from_slice(v)),
            Data::I32(v) => HostBuffers::I32(HostBuffer::from_slice(v)),
            Data::Struct(s) => HostBuffers::Struct(s.host(), s.clone()),
        })
    }

    fn dispatch(
        &self,
        kernel: &Program,
        args: &[&HostBuffers],
        workgroups: [u32; 3],
    ) -> Result<(), Error> {
        let args: Vec<&dyn HostArg> = args
            .iter()
            .map(|b| match b {
                HostBuffers::F32(b) => b as &dyn HostArg,
                HostBuffers::U32(b) => b,
                HostBuffers::I32(b) => b,
                HostBuffers::Struct(b, _) => b.as_ref(),
            })
            .collect();
        let report = Interpreter::dispatch(self, kernel, &args, workgroups)?;
        match report.warnings.first() {
            Some(w) => Err(format!("interpreter warning: {w}").into()),
            None => Ok(()),
        }
    }

    fn read(&self, buffer: &HostBuffers) -> Result<Data, Error> {
        Ok(match buffer {
            HostBuffers::F32(b) => Data::F32(b.read()),
            HostBuffers::U32(b) => Data::U32(b.read()),
            HostBuffers::I32(b) => Data::I32(b.read()),
            HostBuffers::Struct(_, value) => Data::Struct(value.clone()),
        })
    }
}
