//! Texture types (WGSL spec §6.5 "Texture and Sampler Types"), two-dimensional: storage
//! textures `texture_storage_2d<F, access>` of a texel format (§6.5.5 "Storage Texture
//! Types", §6.5.6 "Texel Formats"), and sampled textures `texture_2d<T>` (§6.5.2 "Sampled
//! Texture Types"), which compute kernels read with `textureLoad`.
//!
//! | Rust marker | WGSL texel format | channel type | host texel (`GpuTexture`) |
//! |---|---|---|---|
//! | [`R32Float`] | `r32float` | `f32` | `f32` |
//! | [`R32Uint`] | `r32uint` | `u32` | `u32` |
//! | [`R32Sint`] | `r32sint` | `i32` | `i32` |
//! | [`Rgba8Unorm`] | `rgba8unorm` | `f32` (byte / 255) | `[u8; 4]` |
//! | [`Rgba32Float`] | `rgba32float` | `f32` | `[f32; 4]` |
//! | [`Rgba32Uint`] | `rgba32uint` | `u32` | `[u32; 4]` |
//! | [`Rgba32Sint`] | `rgba32sint` | `i32` | `[i32; 4]` |

use super::{Scalar, ScalarTy};

/// A texel format of a storage texture (WGSL spec §6.5.6 "Texel Formats").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TexelFormat {
    /// `r32float`: one `f32` channel.
    R32Float,
    /// `r32uint`: one `u32` channel.
    R32Uint,
    /// `r32sint`: one `i32` channel.
    R32Sint,
    /// `rgba8unorm`: four bytes, each read as `byte / 255.0` and written as
    /// `round(clamp(v, 0, 1) * 255)`.
    Rgba8Unorm,
    /// `rgba32float`: four `f32` channels.
    Rgba32Float,
    /// `rgba32uint`: four `u32` channels.
    Rgba32Uint,
    /// `rgba32sint`: four `i32` channels.
    Rgba32Sint,
}

impl TexelFormat {
    /// The WGSL spelling (`rgba8unorm`).
    pub fn wgsl_name(self) -> &'static str {
        match self {
            TexelFormat::R32Float => "r32float",
            TexelFormat::R32Uint => "r32uint",
            TexelFormat::R32Sint => "r32sint",
            TexelFormat::Rgba8Unorm => "rgba8unorm",
            TexelFormat::Rgba32Float => "rgba32float",
            TexelFormat::Rgba32Uint => "rgba32uint",
            TexelFormat::Rgba32Sint => "rgba32sint",
        }
    }

    /// The channel type: the element type of the `vec4` that `textureLoad` returns and
    /// `textureStore` takes (WGSL spec §6.5.6).
    pub fn channel(self) -> ScalarTy {
        match self {
            TexelFormat::R32Float | TexelFormat::Rgba8Unorm | TexelFormat::Rgba32Float => {
                ScalarTy::F32
            }
            TexelFormat::R32Uint | TexelFormat::Rgba32Uint => ScalarTy::U32,
            TexelFormat::R32Sint | TexelFormat::Rgba32Sint => ScalarTy::I32,
        }
    }

    /// Bytes of one texel.
    pub fn bytes_per_texel(self) -> u32 {
        match self {
            TexelFormat::R32Float | TexelFormat::R32Uint | TexelFormat::R32Sint => 4,
            TexelFormat::Rgba8Unorm => 4,
            TexelFormat::Rgba32Float | TexelFormat::Rgba32Uint | TexelFormat::Rgba32Sint => 16,
        }
    }

    pub(crate) fn naga(self) -> naga::StorageFormat {
        use naga::StorageFormat as S;
        match self {
            TexelFormat::R32Float => S::R32Float,
            TexelFormat::R32Uint => S::R32Uint,
            TexelFormat::R32Sint => S::R32Sint,
            TexelFormat::Rgba8Unorm => S::Rgba8Unorm,
            TexelFormat::Rgba32Float => S::Rgba32Float,
            TexelFormat::Rgba32Uint => S::Rgba32Uint,
            TexelFormat::Rgba32Sint => S::Rgba32Sint,
        }
    }
}

/// The access mode of a storage texture (WGSL spec §6.5.5 "Storage Texture Types"; `read` and
/// `read_write` need the format's support for them: every format above supports `read`, the
/// `r32` ones `read_write`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TextureAccess {
    /// `read`: `textureLoad` only.
    Read,
    /// `write`: `textureStore` only.
    Write,
    /// `read_write`: both.
    ReadWrite,
}

impl TextureAccess {
    /// The WGSL spelling.
    pub fn wgsl_name(self) -> &'static str {
        match self {
            TextureAccess::Read => "read",
            TextureAccess::Write => "write",
            TextureAccess::ReadWrite => "read_write",
        }
    }

    /// True for `write` and `read_write`.
    pub fn writes(self) -> bool {
        self != TextureAccess::Read
    }

    pub(crate) fn naga(self) -> naga::StorageAccess {
        match self {
            TextureAccess::Read => naga::StorageAccess::LOAD,
            TextureAccess::Write => naga::StorageAccess::STORE,
            TextureAccess::ReadWrite => naga::StorageAccess::LOAD | naga::StorageAccess::STORE,
        }
    }
}

/// The type of a texture binding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TextureTy {
    /// `texture_storage_2d<format, access>`.
    Storage {
        /// The texel format.
        format: TexelFormat,
        /// The access mode.
        access: TextureAccess,
    },
    /// `texture_2d<T>`, `T` being `f32`, `i32` or `u32` (read with `textureLoad` at a mip
    /// level; bound as an unfilterable texture).
    Sampled(ScalarTy),
}

impl TextureTy {
    /// The WGSL spelling (`texture_storage_2d<rgba8unorm, write>`).
    pub fn wgsl_name(self) -> String {
        match self {
            TextureTy::Storage { format, access } => format!(
                "texture_storage_2d<{}, {}>",
                format.wgsl_name(),
                access.wgsl_name()
            ),
            TextureTy::Sampled(s) => format!("texture_2d<{}>", s.wgsl_name()),
        }
    }

    /// True for a storage texture written by the kernel.
    pub fn writes(self) -> bool {
        matches!(self, TextureTy::Storage { access, .. } if access.writes())
    }

    /// True if a texture of `format` can be bound here: the same format for a storage
    /// texture, a format of channel type `T` for a `texture_2d<T>`.
    pub fn accepts(self, format: TexelFormat) -> bool {
        match self {
            TextureTy::Storage { format: f, .. } => f == format,
            TextureTy::Sampled(s) => format.channel() == s,
        }
    }
}

/// A texel format as a Rust marker type: [`R32Float`], [`Rgba8Unorm`], ...
pub trait Format: 'static {
    /// The format.
    const FORMAT: TexelFormat;
    /// The channel type: `textureLoad` gives a `vec4<Channel>`, `textureStore` takes one.
    type Channel: Scalar;
    /// One texel as the host holds it (`GpuTexture` uploads and reads back these).
    type Texel: Copy + 'static;
}

macro_rules! formats {
    ($($(#[$doc:meta])* $name:ident => $variant:ident, $channel:ty, $texel:ty;)*) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct $name;
        impl Format for $name {
            const FORMAT: TexelFormat = TexelFormat::$variant;
            type Channel = $channel;
            type Texel = $texel;
        }
    )*};
}

formats! {
    /// `r32float` (WGSL spec §6.5.6).
    R32Float => R32Float, f32, f32;
    /// `r32uint` (WGSL spec §6.5.6).
    R32Uint => R32Uint, u32, u32;
    /// `r32sint` (WGSL spec §6.5.6).
    R32Sint => R32Sint, i32, i32;
    /// `rgba8unorm` (WGSL spec §6.5.6): bytes on the host, `f32` in `[0, 1]` in the kernel.
    Rgba8Unorm => Rgba8Unorm, f32, [u8; 4];
    /// `rgba32float` (WGSL spec §6.5.6).
    Rgba32Float => Rgba32Float, f32, [f32; 4];
    /// `rgba32uint` (WGSL spec §6.5.6).
    Rgba32Uint => Rgba32Uint, u32, [u32; 4];
    /// `rgba32sint` (WGSL spec §6.5.6).
    Rgba32Sint => Rgba32Sint, i32, [i32; 4];
}

/// The channel types of a sampled texture `texture_2d<T>`: `f32`, `i32`, `u32`.
pub trait SampledType: Scalar {}
impl SampledType for f32 {}
impl SampledType for i32 {}
impl SampledType for u32 {}
