//! Texture bindings and the texture built-ins of compute kernels (WGSL spec §6.5 "Texture and
//! Sampler Types", §17.7 "Texture Built-in Functions"): 2-D storage textures
//! ([`StorageTexture2d`], `texture_storage_2d<F, access>`) and sampled textures read with
//! `textureLoad` ([`Texture2d`], `texture_2d<T>`).
//!
//! ```
//! # use wgsl_dsl_core as wgsl_dsl;
//! use wgsl_dsl::prelude::*;
//! use wgsl_dsl::types::{R32Float, Rgba8Unorm};
//!
//! // out[x, y] = src[x, y] * gain[x, y].r, for the texels inside `out`.
//! let mut k = KernelBuilder::new("gain", [8, 8, 1]);
//! let src = k.texture::<f32>("src");
//! let gain = k.storage_texture::<R32Float, ReadOnly>("gain");
//! let out = k.storage_texture::<Rgba8Unorm, WriteOnly>("out");
//! let p = k.let_("p", global_invocation_id().xy());
//! let size = out.dimensions();
//! k.if_(p.x().lt(size.x()).and(p.y().lt(size.y())), |k| {
//!     let v = src.load(&p, 0u32) * gain.load(&p).x();
//!     k.texture_store(&out, &p, v);
//! });
//! let wgsl = k.build()?.wgsl;
//! // naga writes no space after the comma.
//! assert!(wgsl.contains("var out: texture_storage_2d<rgba8unorm,write>;"));
//! assert!(wgsl.contains("textureStore(out, p, "));
//! # Ok::<(), wgsl_dsl::BuildError>(())
//! ```
//!
//! On the GPU runtime they bind `wgsl_dsl::runtime::GpuTexture`s; the CPU
//! interpreter does not execute textures: it refuses a kernel with a texture binding
//! (`wgsl_dsl::interp::InterpError::UnsupportedTexture`, naming
//! the binding). In a `#[kernel]`, a texture is a `#[texture]` parameter of type
//! `Texture2d<T>` or `StorageTexture2d<F, A>` (see `wgsl_dsl::kernel_syntax`).

use std::marker::PhantomData;
use std::rc::Rc;

use super::{BindingKind, GlobalDecl, GlobalKind, KernelBuilder, ReadOnly, ReadWrite};
use crate::exp::{Exp, ExprKind, IntoExp, PlaceKind, PlaceNode, PlaceRef};
use crate::handle::GlobalHandle;
use crate::site::CallSite;
use crate::types::{Format, IndexScalar, SampledType, TextureAccess, TextureTy, Ty, Vec2, Vec4};

/// Access mode marker of a storage texture that is only written (`write`).
#[derive(Debug)]
pub struct WriteOnly;

/// The access mode of a storage texture: [`ReadOnly`] (`read`), [`WriteOnly`] (`write`) or
/// [`ReadWrite`] (`read_write`).
pub trait TextureAccessMode: 'static {
    /// The mode.
    const ACCESS: TextureAccess;
}
impl TextureAccessMode for ReadOnly {
    const ACCESS: TextureAccess = TextureAccess::Read;
}
impl TextureAccessMode for WriteOnly {
    const ACCESS: TextureAccess = TextureAccess::Write;
}
impl TextureAccessMode for ReadWrite {
    const ACCESS: TextureAccess = TextureAccess::ReadWrite;
}
/// Modes that allow `textureLoad`.
#[diagnostic::on_unimplemented(
    message = "a `{Self}` storage texture cannot be read",
    label = "`textureLoad` needs a `ReadOnly` or `ReadWrite` storage texture",
    note = "declare it with `k.storage_texture::<F, ReadOnly>(..)` or `k.storage_texture::<F, ReadWrite>(..)`"
)]
pub trait TextureReadable: TextureAccessMode {}
impl TextureReadable for ReadOnly {}
impl TextureReadable for ReadWrite {}
/// Modes that allow `textureStore`.
#[diagnostic::on_unimplemented(
    message = "a `{Self}` storage texture cannot be written",
    label = "`textureStore` needs a `WriteOnly` or `ReadWrite` storage texture",
    note = "declare it with `k.storage_texture::<F, WriteOnly>(..)` or `k.storage_texture::<F, ReadWrite>(..)`"
)]
pub trait TextureWritable: TextureAccessMode {}
impl TextureWritable for WriteOnly {}
impl TextureWritable for ReadWrite {}

/// A `texture_storage_2d<F, A>` binding, declared by [`KernelBuilder::storage_texture`].
#[derive(Clone, Debug)]
pub struct StorageTexture2d<F, A> {
    node: PlaceRef,
    _m: PhantomData<fn() -> (F, A)>,
}

/// A `texture_2d<T>` binding, declared by [`KernelBuilder::texture`]: read-only, read with
/// [`Texture2d::load`] at a mip level.
#[derive(Clone, Debug)]
pub struct Texture2d<T> {
    node: PlaceRef,
    _m: PhantomData<fn() -> T>,
}

fn query(texture: &PlaceRef, level: Option<crate::exp::NodeRef>, site: CallSite) -> Exp<Vec2<u32>> {
    Exp::from_kind(
        ExprKind::TextureDimensions {
            texture: texture.clone(),
            level,
        },
        site,
    )
}

impl<F: Format, A: TextureAccessMode> StorageTexture2d<F, A> {
    /// `textureDimensions(t)`: width and height in texels (WGSL spec §17.7.1
    /// "textureDimensions").
    #[track_caller]
    pub fn dimensions(&self) -> Exp<Vec2<u32>> {
        query(&self.node, None, CallSite::caller())
    }
}

impl<F: Format, A: TextureReadable> StorageTexture2d<F, A> {
    /// `textureLoad(t, coords)`: the texel at `coords` (`x` across, `y` down) as a
    /// `vec4<F::Channel>`, the channels a format lacks being `0, 0, 1` (WGSL spec §17.7.4
    /// "textureLoad", §6.5.6). Out-of-bounds coordinates give an indeterminate texel of the
    /// texture or zero (§17.7.4, robust access).
    #[track_caller]
    pub fn load<C: IndexScalar>(&self, coords: impl IntoExp<Vec2<C>>) -> Exp<Vec4<F::Channel>> {
        Exp::from_kind(
            ExprKind::TextureLoad {
                texture: self.node.clone(),
                coords: coords.into_exp().node,
                level: None,
            },
            CallSite::caller(),
        )
    }
}

impl<T: SampledType> Texture2d<T> {
    /// `textureDimensions(t)`: width and height of mip level 0 (WGSL spec §17.7.1
    /// "textureDimensions").
    #[track_caller]
    pub fn dimensions(&self) -> Exp<Vec2<u32>> {
        query(&self.node, None, CallSite::caller())
    }

    /// `textureLoad(t, coords, level)`: the texel at `coords` of mip level `level`, as a
    /// `vec4<T>` (WGSL spec §17.7.4 "textureLoad"; no filtering, no sampler). Out-of-bounds
    /// coordinates or levels give an indeterminate texel of the texture or zero.
    #[track_caller]
    pub fn load<C: IndexScalar, L: IndexScalar>(
        &self,
        coords: impl IntoExp<Vec2<C>>,
        level: impl IntoExp<L>,
    ) -> Exp<Vec4<T>> {
        Exp::from_kind(
            ExprKind::TextureLoad {
                texture: self.node.clone(),
                coords: coords.into_exp().node,
                level: Some(level.into_exp().node),
            },
            CallSite::caller(),
        )
    }
}

/// A texture binding type, declared by [`KernelBuilder::texture_binding`]: [`Texture2d<T>`]
/// and [`StorageTexture2d<F, A>`]. What `#[texture]` parameters of a `#[kernel]` and
/// `#[texture]` fields of a `#[derive(Bindings)]` struct are.
pub trait TextureBinding: Sized + 'static {
    /// The binding's WGSL type.
    const TEXTURE: TextureTy;
    /// Declare the next binding, named `name`, as this texture.
    #[doc(hidden)]
    fn declare(k: &mut KernelBuilder, name: &str, site: CallSite) -> Self;
}

impl<T: SampledType> TextureBinding for Texture2d<T> {
    const TEXTURE: TextureTy = TextureTy::Sampled(T::SCALAR);
    fn declare(k: &mut KernelBuilder, name: &str, site: CallSite) -> Self {
        Texture2d {
            node: k.texture_global(name, Self::TEXTURE, site),
            _m: PhantomData,
        }
    }
}

impl<F: Format, A: TextureAccessMode> TextureBinding for StorageTexture2d<F, A> {
    const TEXTURE: TextureTy = TextureTy::Storage {
        format: F::FORMAT,
        access: A::ACCESS,
    };
    fn declare(k: &mut KernelBuilder, name: &str, site: CallSite) -> Self {
        StorageTexture2d {
            node: k.texture_global(name, Self::TEXTURE, site),
            _m: PhantomData,
        }
    }
}

impl KernelBuilder {
    /// Declare the next binding as the texture type `T`: `k.texture_binding::<Texture2d<f32>>(
    /// "src")` is `k.texture::<f32>("src")`, `k.texture_binding::<StorageTexture2d<F, A>>(..)`
    /// is `k.storage_texture::<F, A>(..)` (what `#[kernel]`'s `#[texture]` parameters and
    /// `#[derive(Bindings)]`'s `#[texture]` fields expand to).
    #[track_caller]
    pub fn texture_binding<T: TextureBinding>(&mut self, name: &str) -> T {
        T::declare(self, name, CallSite::caller())
    }

    fn texture_global(&mut self, name: &str, ty: TextureTy, site: CallSite) -> PlaceRef {
        let binding = self.next_binding;
        self.next_binding += 1;
        let ty = Ty::Texture(ty);
        self.globals.push(GlobalDecl {
            name: name.to_string(),
            ty: ty.clone(),
            kind: GlobalKind::Binding(BindingKind::Texture, binding),
            site,
        });
        Rc::new(PlaceNode {
            kind: PlaceKind::Global(GlobalHandle {
                builder: self.id,
                index: self.globals.len() - 1,
            }),
            ty,
            site,
        })
    }

    /// Declare the next binding as a storage texture, `var name: texture_storage_2d<F, A>`
    /// (WGSL spec §6.5.5 "Storage Texture Types"): format `F` ([`R32Float`](crate::types::R32Float),
    /// [`Rgba8Unorm`](crate::types::Rgba8Unorm), ...), access [`ReadOnly`], [`WriteOnly`] or
    /// [`ReadWrite`] (`read_write` needs an `r32` format on WebGPU).
    #[track_caller]
    pub fn storage_texture<F: Format, A: TextureAccessMode>(
        &mut self,
        name: &str,
    ) -> StorageTexture2d<F, A> {
        let ty = TextureTy::Storage {
            format: F::FORMAT,
            access: A::ACCESS,
        };
        StorageTexture2d {
            node: self.texture_global(name, ty, CallSite::caller()),
            _m: PhantomData,
        }
    }

    /// Declare the next binding as a sampled texture read without a sampler,
    /// `var name: texture_2d<T>` (WGSL spec §6.5.2 "Sampled Texture Types").
    #[track_caller]
    pub fn texture<T: SampledType>(&mut self, name: &str) -> Texture2d<T> {
        Texture2d {
            node: self.texture_global(name, TextureTy::Sampled(T::SCALAR), CallSite::caller()),
            _m: PhantomData,
        }
    }

    /// `textureStore(t, coords, value)`: write the texel at `coords` (WGSL spec §17.7.6
    /// "textureStore"); a format with fewer channels keeps the first ones, `rgba8unorm`
    /// clamps to `[0, 1]` and rounds. Out-of-bounds coordinates write nothing or an
    /// indeterminate texel of the texture.
    #[track_caller]
    pub fn texture_store<F: Format, A: TextureWritable, C: IndexScalar>(
        &mut self,
        texture: &StorageTexture2d<F, A>,
        coords: impl IntoExp<Vec2<C>>,
        value: impl IntoExp<Vec4<F::Channel>>,
    ) {
        self.push(
            super::stmt::Stmt::TextureStore {
                texture: texture.node.clone(),
                coords: coords.into_exp().node,
                value: value.into_exp().node,
            },
            CallSite::caller(),
        );
    }
}
