//! Running the harness's data on either executor. The contract is the executors' own,
//! [`Executor`] (`wgsl_dsl::exec`: compile, upload, dispatch, read back; implemented by the
//! wgpu runtime's `Gpu` and the CPU interpreter); what the harness adds is its data:
//! [`Buffers`], one binding's buffer of any kind [`Data`] holds, and [`UploadStruct`], the
//! upload of a struct value (a uniform), the one step that names each executor's buffer type.

pub use wgsl_dsl::exec::Executor;
use wgsl_dsl::interp::{HostArg, Interpreter};
use wgsl_dsl::runtime::{BindArg, Gpu};

use crate::data::{Data, StructValue};

/// An executor's error, boxed: the harness only reports it.
pub type Error = Box<dyn std::error::Error>;

/// An executor the harness can give a struct value ([`Data::Struct`]), read-only (a uniform):
/// reading it back gives the uploaded value.
pub trait UploadStruct: Executor {
    /// A buffer holding `s`, as the executor binds it.
    ///
    /// # Errors
    /// The executor's, boxed (out of memory on the GPU).
    fn upload_struct(&self, s: &StructValue) -> Result<Box<Self::Arg>, Error>;
}

impl UploadStruct for Gpu {
    fn upload_struct(&self, s: &StructValue) -> Result<Box<dyn BindArg>, Error> {
        Ok(s.upload(self)?)
    }
}

impl UploadStruct for Interpreter {
    fn upload_struct(&self, s: &StructValue) -> Result<Box<dyn HostArg>, Error> {
        Ok(s.host())
    }
}

/// One binding's buffer on the executor `E`, of the kind its [`Data`] was.
pub enum Buffers<E: Executor> {
    /// `f32` elements.
    F32(E::Buffer<f32>),
    /// `u32` elements.
    U32(E::Buffer<u32>),
    /// `i32` elements.
    I32(E::Buffer<i32>),
    /// A struct value, and the value (what reading it back gives).
    Struct(Box<E::Arg>, StructValue),
}

impl<E: Executor> std::fmt::Debug for Buffers<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Buffers::F32(b) => f.debug_tuple("F32").field(b).finish(),
            Buffers::U32(b) => f.debug_tuple("U32").field(b).finish(),
            Buffers::I32(b) => f.debug_tuple("I32").field(b).finish(),
            Buffers::Struct(_, value) => f.debug_tuple("Struct").field(value).finish(),
        }
    }
}

impl<E: Executor> Buffers<E> {
    /// What [`Executor::dispatch`] binds.
    pub fn arg(&self) -> &E::Arg {
        match self {
            Buffers::F32(b) => E::arg(b),
            Buffers::U32(b) => E::arg(b),
            Buffers::I32(b) => E::arg(b),
            Buffers::Struct(b, _) => b.as_ref(),
        }
    }

    /// A buffer on `on` holding `data`.
    ///
    /// # Errors
    /// The executor's, boxed.
    pub fn upload(on: &E, data: &Data) -> Result<Self, Error>
    where
        E: UploadStruct,
    {
        Ok(match data {
            Data::F32(v) => Buffers::F32(on.upload(v)?),
            Data::U32(v) => Buffers::U32(on.upload(v)?),
            Data::I32(v) => Buffers::I32(on.upload(v)?),
            Data::Struct(s) => Buffers::Struct(on.upload_struct(s)?, s.clone()),
        })
    }

    /// The buffer's contents.
    ///
    /// # Errors
    /// The executor's, boxed (a lost device).
    pub fn read(&self, on: &E) -> Result<Data, Error> {
        Ok(match self {
            Buffers::F32(b) => Data::F32(on.read(b)?),
            Buffers::U32(b) => Data::U32(on.read(b)?),
            Buffers::I32(b) => Data::I32(on.read(b)?),
            Buffers::Struct(_, value) => Data::Struct(value.clone()),
        })
    }
}

/// The GPU's [`Buffers`].
pub type GpuBuffers = Buffers<Gpu>;

/// The interpreter's [`Buffers`].
pub type HostBuffers = Buffers<Interpreter>;
