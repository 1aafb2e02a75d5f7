//! Host data: the contents of a binding ([`Data`]), a run of a kernel ([`Case`]), and what a
//! specification says a written binding must hold ([`Expected`]).

use bytemuck::Pod;
use wgsl_dsl::interp::{HostArg, HostBuffer};
use wgsl_dsl::runtime::{BindArg, DispatchError, Gpu, GpuBuffer};
use wgsl_dsl::types::{Ty, WgslType};

/// The bit pattern written into output buffers before a kernel runs (`u32`, `i32`), so that an
/// element the kernel fails to write shows up; `f32` outputs are poisoned with NaN.
pub const POISON_U32: u32 = 0xDEAD_BEEF;

/// The contents of one binding, host side.
#[derive(Clone, Debug, PartialEq)]
pub enum Data {
    /// `array<f32>` or `f32`.
    F32(Vec<f32>),
    /// `array<u32>`, `array<atomic<u32>>` or `u32`.
    U32(Vec<u32>),
    /// `array<i32>`, `array<atomic<i32>>` or `i32`.
    I32(Vec<i32>),
    /// One value of a `#[derive(WgslStruct)]` struct, e.g. a uniform's contents.
    Struct(StructValue),
}

/// Uploads a struct value's bytes as a `GpuBuffer` of its Rust type.
type Upload = fn(&Gpu, &[u8]) -> Result<Box<dyn BindArg>, DispatchError>;
/// Copies a struct value's bytes into a `HostBuffer` of its Rust type.
type HostCopy = fn(&[u8]) -> Box<dyn HostArg>;

/// One value of a `#[derive(WgslStruct)]` struct: its WGSL type and its bytes (the Rust layout,
/// which the derive checks equals the WGSL layout).
#[derive(Clone)]
pub struct StructValue {
    /// The struct's WGSL type.
    pub ty: Ty,
    /// Its bytes.
    pub bytes: Vec<u8>,
    upload: Upload,
    host: HostCopy,
}

impl std::fmt::Debug for StructValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StructValue")
            .field("ty", &self.ty.wgsl_name())
            .field("bytes", &self.bytes.len())
            .finish()
    }
}

impl PartialEq for StructValue {
    fn eq(&self, other: &Self) -> bool {
        self.ty == other.ty && self.bytes == other.bytes
    }
}

impl StructValue {
    /// A `GpuBuffer<T>` holding the value, for the wgpu executor.
    pub(crate) fn upload(&self, gpu: &Gpu) -> Result<Box<dyn BindArg>, DispatchError> {
        (self.upload)(gpu, &self.bytes)
    }

    /// A `HostBuffer<T>` holding the value, for the interpreter.
    pub(crate) fn host(&self) -> Box<dyn HostArg> {
        (self.host)(&self.bytes)
    }
}

fn host_as<T: Pod + WgslType>(bytes: &[u8]) -> Box<dyn HostArg> {
    let value: T = bytemuck::pod_read_unaligned(bytes);
    Box::new(HostBuffer::from_value(value))
}

fn upload_as<T: Pod + WgslType>(
    gpu: &Gpu,
    bytes: &[u8],
) -> Result<Box<dyn BindArg>, DispatchError> {
    let value: T = bytemuck::pod_read_unaligned(bytes);
    Ok(Box::new(GpuBuffer::from_value(gpu, value)?))
}

impl Data {
    /// One value of a struct (`#[derive(WgslStruct)]`).
    pub fn value<T: Pod + WgslType>(value: T) -> Data {
        Data::Struct(StructValue {
            ty: T::ty(),
            bytes: bytemuck::bytes_of(&value).to_vec(),
            upload: upload_as::<T>,
            host: host_as::<T>,
        })
    }
    /// An output buffer of `len` poisoned `f32`s (NaN).
    pub fn poisoned_f32(len: usize) -> Data {
        Data::F32(vec![f32::NAN; len])
    }
    /// An output buffer of `len` poisoned `u32`s ([`POISON_U32`]).
    pub fn poisoned_u32(len: usize) -> Data {
        Data::U32(vec![POISON_U32; len])
    }
    /// An output buffer of `len` poisoned `i32`s ([`POISON_U32`]'s bits).
    pub fn poisoned_i32(len: usize) -> Data {
        Data::I32(vec![POISON_U32 as i32; len])
    }
    /// Number of elements (1 for a struct value).
    pub fn len(&self) -> usize {
        match self {
            Data::F32(v) => v.len(),
            Data::U32(v) => v.len(),
            Data::I32(v) => v.len(),
            Data::Struct(_) => 1,
        }
    }
    /// True if there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The `f32` contents; panics (test code) on another type.
    pub fn f32(&mut self) -> &mut Vec<f32> {
        match self {
            Data::F32(v) => v,
            other => panic!("expected f32 data, found {other:?}"),
        }
    }
    /// The `u32` contents; panics (test code) on another type.
    pub fn u32(&mut self) -> &mut Vec<u32> {
        match self {
            Data::U32(v) => v,
            other => panic!("expected u32 data, found {other:?}"),
        }
    }
    /// The `i32` contents; panics (test code) on another type.
    pub fn i32(&mut self) -> &mut Vec<i32> {
        match self {
            Data::I32(v) => v,
            other => panic!("expected i32 data, found {other:?}"),
        }
    }
}

/// One run of a kernel: the initial contents of every binding, in binding order (outputs
/// poisoned), and the workgroups to dispatch.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    /// One per binding.
    pub buffers: Vec<Data>,
    /// Workgroups to dispatch.
    pub workgroups: [u32; 3],
}

impl Case {
    /// The `f32` contents of binding `i`, widened to `f64`. Panics if it holds another type:
    /// cases and specifications are written together, so that is a bug in the test.
    pub fn f64s(&self, i: usize) -> Vec<f64> {
        match &self.buffers[i] {
            Data::F32(v) => v.iter().map(|&x| f64::from(x)).collect(),
            other => panic!("binding {i} is not an f32 buffer: {other:?}"),
        }
    }

    /// The `u32` contents of binding `i`; panics on another type.
    pub fn u32s(&self, i: usize) -> &[u32] {
        match &self.buffers[i] {
            Data::U32(v) => v,
            other => panic!("binding {i} is not a u32 buffer: {other:?}"),
        }
    }

    /// The struct value at binding `i`; panics if it is not a `T`.
    pub fn value<T: Pod + WgslType>(&self, i: usize) -> T {
        match &self.buffers[i] {
            Data::Struct(s) if s.ty == T::ty() => bytemuck::pod_read_unaligned(&s.bytes),
            other => panic!(
                "binding {i} is not a {}: {other:?}",
                std::any::type_name::<T>()
            ),
        }
    }
}

/// What a specification says a binding holds after the kernel ran.
#[derive(Clone, Debug, PartialEq)]
pub enum Expected {
    /// Floats, computed in `f64`, compared with a relative tolerance.
    F64(Vec<f64>),
    /// Floats computed in `f32` (or unchanged contents), compared with a relative tolerance
    /// or, at tolerance 0, bit for bit.
    F32(Vec<f32>),
    /// Unsigned integers, compared exactly.
    U32(Vec<u32>),
    /// Signed integers, compared exactly.
    I32(Vec<i32>),
    /// A struct value's bytes, compared exactly.
    Bytes(Vec<u8>),
}

impl From<&Data> for Expected {
    /// The contents themselves.
    fn from(d: &Data) -> Expected {
        match d {
            Data::F32(v) => Expected::F32(v.clone()),
            Data::U32(v) => Expected::U32(v.clone()),
            Data::I32(v) => Expected::I32(v.clone()),
            Data::Struct(s) => Expected::Bytes(s.bytes.clone()),
        }
    }
}
