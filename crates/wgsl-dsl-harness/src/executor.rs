//! [`Executor`]: what runs a kernel for the harness, through the positional (untyped) layer.
//! The wgpu runtime and the CPU interpreter (`wgsl_dsl::interp`) implement it here.

use bytemuck::Pod;
use wgsl_dsl::interp::{HostArg, HostBuffer, Interpreter, Program};
use wgsl_dsl::runtime::{BindArg, Gpu, GpuBuffer, Kernel};
use wgsl_dsl::types::WgslType;
use wgsl_dsl::{KernelBuilder, KernelSignature};

use crate::data::{Data, StructValue};

/// An executor's error, boxed: the harness only reports it.
pub type Error = Box<dyn std::error::Error>;

/// Runs kernels on host data: compile, upload, dispatch with the buffers in binding order,
/// read back. A struct value ([`Data::Struct`]) is read-only (a uniform); reading it back gives
/// the uploaded value.
///
/// An executor provides its typed buffers; [`Executor::upload`] and [`Executor::read`] map
/// [`Data`] onto them, [`Buffers::arg`] gives what [`Executor::dispatch`] binds.
pub trait Executor {
    /// A compiled kernel.
    type Kernel;
    /// A buffer of `T` elements.
    type Typed<T: Pod + WgslType>: std::fmt::Debug;
    /// What a dispatch binds: a typed buffer or a struct value's buffer.
    type Arg: ?Sized + std::fmt::Debug;
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
    fn upload_slice<T: Pod + WgslType>(&self, data: &[T]) -> Result<Self::Typed<T>, Error>;
    /// A buffer holding the struct value `s`.
    ///
    /// # Errors
    /// Allocation errors.
    fn upload_struct(&self, s: &StructValue) -> Result<Box<Self::Arg>, Error>;
    /// `buffer` as a dispatch binds it.
    fn arg<T: Pod + WgslType>(buffer: &Self::Typed<T>) -> &Self::Arg;
    /// Run `kernel` once over `workgroups` with `args` bound in binding order, and wait.
    ///
    /// # Errors
    /// The executor's checks of the arguments, and errors while running.
    fn dispatch(
        &self,
        kernel: &Self::Kernel,
        args: &[&Self::Arg],
        workgroups: [u32; 3],
    ) -> Result<(), Error>;
    /// The contents of `buffer`.
    ///
    /// # Errors
    /// Read-back errors.
    fn read_slice<T: Pod + WgslType>(&self, buffer: &Self::Typed<T>) -> Result<Vec<T>, Error>;

    /// A buffer holding `data`.
    ///
    /// # Errors
    /// Allocation errors.
    fn upload(&self, data: &Data) -> Result<Buffers<Self>, Error> {
        Ok(match data {
            Data::F32(v) => Buffers::F32(self.upload_slice(v)?),
            Data::U32(v) => Buffers::U32(self.upload_slice(v)?),
            Data::I32(v) => Buffers::I32(self.upload_slice(v)?),
            Data::Struct(s) => Buffers::Struct(self.upload_struct(s)?, s.clone()),
        })
    }
    /// The contents of `buffer`.
    ///
    /// # Errors
    /// Read-back errors.
    fn read(&self, buffer: &Buffers<Self>) -> Result<Data, Error> {
        Ok(match buffer {
            Buffers::F32(b) => Data::F32(self.read_slice(b)?),
            Buffers::U32(b) => Data::U32(self.read_slice(b)?),
            Buffers::I32(b) => Data::I32(self.read_slice(b)?),
            Buffers::Struct(_, value) => Data::Struct(value.clone()),
        })
    }
}

/// A binding's buffer on the executor `E`.
#[derive(Debug)]
pub enum Buffers<E: Executor + ?Sized> {
    /// `f32` elements.
    F32(E::Typed<f32>),
    /// `u32` elements.
    U32(E::Typed<u32>),
    /// `i32` elements.
    I32(E::Typed<i32>),
    /// A struct value, and what was uploaded.
    Struct(Box<E::Arg>, StructValue),
}

impl<E: Executor + ?Sized> Buffers<E> {
    /// The buffer as [`Executor::dispatch`] binds it.
    pub fn arg(&self) -> &E::Arg {
        match self {
            Buffers::F32(b) => E::arg(b),
            Buffers::U32(b) => E::arg(b),
            Buffers::I32(b) => E::arg(b),
            Buffers::Struct(b, _) => b.as_ref(),
        }
    }
}

/// A binding's buffer on the GPU.
pub type GpuBuffers = Buffers<Gpu>;

/// A binding's buffer in host memory, for the interpreter.
pub type HostBuffers = Buffers<Interpreter>;

/// The wgpu runtime: [`Gpu::compile`] of the kernel built for the adapter's limits,
/// [`Gpu::dispatch`] with its checks, [`GpuBuffer::read`].
impl Executor for Gpu {
    type Kernel = Kernel;
    type Typed<T: Pod + WgslType> = GpuBuffer<T>;
    type Arg = dyn BindArg;

    fn compile(&self, kernel: &KernelBuilder) -> Result<Kernel, Error> {
        Ok(Gpu::compile(
            self,
            &kernel.build_for(&self.target_limits())?,
        )?)
    }

    fn signature<'k>(&self, kernel: &'k Kernel) -> &'k KernelSignature {
        kernel.signature()
    }

    fn upload_slice<T: Pod + WgslType>(&self, data: &[T]) -> Result<GpuBuffer<T>, Error> {
        Ok(GpuBuffer::from_slice(self, data)?)
    }

    fn upload_struct(&self, s: &StructValue) -> Result<Box<dyn BindArg>, Error> {
        Ok(s.upload(self)?)
    }

    fn arg<T: Pod + WgslType>(buffer: &GpuBuffer<T>) -> &Self::Arg {
        buffer
    }

    fn dispatch(
        &self,
        kernel: &Kernel,
        args: &[&dyn BindArg],
        workgroups: [u32; 3],
    ) -> Result<(), Error> {
        Gpu::dispatch(self, kernel, args, workgroups)?;
        Ok(())
    }

    fn read_slice<T: Pod + WgslType>(&self, buffer: &GpuBuffer<T>) -> Result<Vec<T>, Error> {
        Ok(buffer.read(self)?)
    }
}

/// The CPU interpreter: the kernel built with the default
/// [`TargetLimits`](wgsl_dsl::TargetLimits) (WebGPU's), [`Interpreter::compile`], [`Interpreter::dispatch`]
/// with the runtime's argument checks. Besides a wrong result, the harness fails a kernel the
/// interpreter finds at fault: an out-of-bounds access, a data race, a divergent barrier
/// (errors), or a read of a variable before anything was written to it (a warning of the
/// interpreter, an error here: a verified kernel reads nothing it did not write).
impl Executor for Interpreter {
    type Kernel = Program;
    type Typed<T: Pod + WgslType> = HostBuffer<T>;
    type Arg = dyn HostArg;

    fn compile(&self, kernel: &KernelBuilder) -> Result<Program, Error> {
        Ok(Interpreter::compile(self, &kernel.build()?)?)
    }

    fn signature<'k>(&self, kernel: &'k Program) -> &'k KernelSignature {
        kernel.signature()
    }

    fn upload_slice<T: Pod + WgslType>(&self, data: &[T]) -> Result<HostBuffer<T>, Error> {
        Ok(HostBuffer::from_slice(data))
    }

    fn upload_struct(&self, s: &StructValue) -> Result<Box<dyn HostArg>, Error> {
        Ok(s.host())
    }

    fn arg<T: Pod + WgslType>(buffer: &HostBuffer<T>) -> &Self::Arg {
        buffer
    }

    fn dispatch(
        &self,
        kernel: &Program,
        args: &[&dyn HostArg],
        workgroups: [u32; 3],
    ) -> Result<(), Error> {
        let report = Interpreter::dispatch(self, kernel, args, workgroups)?;
        match report.warnings.first() {
            Some(w) => Err(format!("interpreter warning: {w}").into()),
            None => Ok(()),
        }
    }

    fn read_slice<T: Pod + WgslType>(&self, buffer: &HostBuffer<T>) -> Result<Vec<T>, Error> {
        Ok(buffer.read())
    }
}
