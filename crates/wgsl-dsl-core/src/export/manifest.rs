//! The manifest's types (the format of the [module docs](super)) and [`ExportError`]: what the
//! export writes and the JavaScript module is generated from, below both.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The manifest format written by this version of the crate.
pub const FORMAT_VERSION: u32 = 1;

/// The ABI of one kernel: see the [module docs](super) for the format.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`FORMAT_VERSION`].
    pub format_version: u32,
    /// The kernel's name.
    pub kernel: String,
    /// The entry point's name in the WGSL.
    pub entry_point: String,
    /// The WGSL file's name (`<kernel>.wgsl`).
    pub wgsl: String,
    /// `@workgroup_size(x, y, z)`.
    pub workgroup_size: [u32; 3],
    /// naga capabilities beyond portable WGSL, by name.
    pub capabilities: Vec<String>,
    /// The WebGPU features the capabilities need.
    pub features: Vec<String>,
    /// What the kernel needs of each WebGPU limit, by the limit's WebGPU name.
    pub limits: BTreeMap<String, u64>,
    /// The bindings, in binding order.
    pub bindings: Vec<Binding>,
}

/// One binding of a [`Manifest`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Binding {
    /// The author's name (the JavaScript property that takes its buffer).
    pub name: String,
    /// The global variable's name in the WGSL.
    pub wgsl_name: String,
    /// `@group`.
    pub group: u32,
    /// `@binding`.
    pub binding: u32,
    /// The resource it takes.
    pub resource: Resource,
    /// WGSL's access mode.
    pub access: Access,
    /// Bytes a buffer bound to it needs at least (0 for textures).
    pub min_binding_size: u64,
    /// The store type and its layout.
    #[serde(rename = "type")]
    pub ty: TypeLayout,
}

/// What a binding takes, in WebGPU's terms (`GPUBufferBindingType`, and the texture kinds of
/// `GPUBindGroupLayoutEntry`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Resource {
    /// `var<uniform>`.
    Uniform,
    /// `var<storage, read_write>`.
    Storage,
    /// `var<storage, read>`.
    ReadOnlyStorage,
    /// `texture_storage_2d<F, access>`.
    StorageTexture,
    /// `texture_2d<T>`.
    Texture,
}

/// WGSL's access mode of a binding (a uniform and a sampled texture are `read`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// `read`.
    Read,
    /// `write` (storage textures).
    Write,
    /// `read_write`.
    ReadWrite,
}

/// A type and its memory layout (WGSL spec §14.4, as naga's `Layouter` computes it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TypeLayout {
    /// `f32`, `i32`, `u32`, `f16`, `bool`.
    Scalar {
        /// The WGSL spelling.
        wgsl: String,
        /// Bytes.
        size: u32,
        /// Alignment in bytes.
        align: u32,
    },
    /// `vecN<S>`.
    Vector {
        /// The WGSL spelling.
        wgsl: String,
        /// Bytes.
        size: u32,
        /// Alignment in bytes.
        align: u32,
        /// `N`.
        components: u32,
        /// `S`.
        scalar: String,
    },
    /// `matCxR<S>`: `C` columns of `vecR<S>`.
    Matrix {
        /// The WGSL spelling.
        wgsl: String,
        /// Bytes.
        size: u32,
        /// Alignment in bytes.
        align: u32,
        /// `C`.
        columns: u32,
        /// `R`.
        rows: u32,
        /// `S`.
        scalar: String,
        /// Bytes from one column to the next.
        column_stride: u32,
    },
    /// `atomic<S>`.
    Atomic {
        /// The WGSL spelling.
        wgsl: String,
        /// Bytes.
        size: u32,
        /// Alignment in bytes.
        align: u32,
        /// `S`.
        scalar: String,
    },
    /// `array<E, N>` or `array<E>`.
    Array {
        /// The WGSL spelling.
        wgsl: String,
        /// Bytes; `None` when runtime-sized.
        size: Option<u32>,
        /// Alignment in bytes.
        align: u32,
        /// `N`; `None` when runtime-sized.
        length: Option<u32>,
        /// Bytes from one element to the next.
        stride: u32,
        /// `E`.
        element: Box<TypeLayout>,
    },
    /// A struct.
    Struct {
        /// Its name in the WGSL.
        wgsl: String,
        /// Bytes.
        size: u32,
        /// Alignment in bytes.
        align: u32,
        /// The members in declaration order.
        members: Vec<Member>,
    },
    /// `texture_storage_2d<format, access>`.
    StorageTexture {
        /// The WGSL spelling.
        wgsl: String,
        /// The texel format (`rgba8unorm`; WGSL's and WebGPU's spelling).
        format: String,
        /// WebGPU's `GPUStorageTextureAccess` (`write-only`, `read-only`, `read-write`).
        access: String,
        /// WebGPU's view dimension (`2d`).
        dimension: String,
    },
    /// `texture_2d<T>`, read with `textureLoad`.
    Texture {
        /// The WGSL spelling.
        wgsl: String,
        /// WebGPU's `GPUTextureSampleType` (`unfilterable-float`, `sint`, `uint`).
        sample_type: String,
        /// WebGPU's view dimension (`2d`).
        dimension: String,
    },
}

impl TypeLayout {
    /// The WGSL spelling.
    pub fn wgsl(&self) -> &str {
        match self {
            TypeLayout::Scalar { wgsl, .. }
            | TypeLayout::Vector { wgsl, .. }
            | TypeLayout::Matrix { wgsl, .. }
            | TypeLayout::Atomic { wgsl, .. }
            | TypeLayout::Array { wgsl, .. }
            | TypeLayout::Struct { wgsl, .. }
            | TypeLayout::StorageTexture { wgsl, .. }
            | TypeLayout::Texture { wgsl, .. } => wgsl,
        }
    }
}

/// A struct member.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Member {
    /// Its name in the WGSL.
    pub name: String,
    /// Bytes from the struct's start.
    pub offset: u32,
    /// Its type.
    #[serde(rename = "type")]
    pub ty: TypeLayout,
}

/// Why an export failed. Nothing is written when the export itself fails; a failed write
/// leaves no partly written file (each file is written beside its place and renamed).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// The module's types could not be laid out (not a validated kernel's module).
    #[error("kernel `{kernel}`: {message}")]
    Layout {
        /// The kernel.
        kernel: String,
        /// naga's message, or the binding that is missing from the module.
        message: String,
    },
    /// Two kernels of one export have the same name (their files would collide).
    #[error("two kernels are named `{0}`; the names of exported kernels must differ")]
    DuplicateKernel(String),
    /// Two kernels' names give the same JavaScript type name (`a_b` and `aB` both `AB`), or two
    /// struct types the same encoder.
    #[error("`{first}` and `{second}` both become `{js}` in the JavaScript module; rename one")]
    NameCollision {
        /// One name.
        first: String,
        /// The other.
        second: String,
        /// The JavaScript name both give.
        js: String,
    },
    /// A file could not be written.
    #[error("{}: {message}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's message.
        message: String,
    },
}
