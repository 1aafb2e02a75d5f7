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

use super::Scalar;
pub use super::ty::{TexelFormat, TextureAccess, TextureTy};

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
