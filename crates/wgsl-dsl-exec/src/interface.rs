//! Typed kernel interfaces (ARCHITECTURE.md decision *A kernel's interface is written once*):
//! a kernel's bindings, declared once, are also the type of its arguments, on either executor.
//!
//! - [`KernelArgs`]: an argument struct with one named field per binding, in binding order:
//!   `&E::Buffer<T>` for a read-only storage or uniform binding, `&mut E::Buffer<T>` for a
//!   read-write one, `E` the executor ([`ExecutorBuffers`]: the GPU's `GpuBuffer<T>` by
//!   default, the interpreter's `HostBuffer<T>`). A missing, extra, swapped or wrongly typed
//!   buffer is a compile error at the field; so is a read-write buffer bound twice, since
//!   `&mut` does not alias (WebGPU forbids a writable binding aliasing another).
//! - [`KernelDef`]: a kernel definition: how to build it, its argument struct, and how many
//!   workgroups cover a problem size (the grid lives with the kernel).
//!
//! `#[kernel]` writes both from the function's parameters (`fn sgd_update` gives the definition
//! `SgdUpdate` and the arguments `SgdUpdateArgs<'a, E = Gpu>`); a kernel written with the
//! builder declares its bindings with `#[derive(Bindings)]` and implements [`KernelDef`] by
//! hand. Each executor compiles a `KernelDef` into its own typed kernel (the runtime's
//! `TypedKernel`, the interpreter's `TypedProgram`), checking the kernel's bindings against the
//! struct's with [`check_interface`]; underneath, a typed dispatch is
//! the executor's positional dispatch with the fields in order.

use bytemuck::Pod;

use crate::checks::ceil_div;
use crate::error::{DispatchError, DispatchErrorKind};
use wgsl_dsl_core::kernel::{
    BindingKind, KernelBuilder, KernelSignature, Place, ReadOnly, ReadWrite, StorageTexture2d,
    Texture2d, TextureBinding, WriteOnly,
};
use wgsl_dsl_core::types::{Format, HostShareable, SampledType, Ty, WgslType};

/// The buffers of an executor, which an argument struct's fields borrow: the GPU's
/// (`wgsl_dsl::runtime::Gpu`: `GpuBuffer<T>`, bound as `dyn BindArg`) or the CPU interpreter's
/// (`wgsl_dsl::interp::Interpreter`: `wgsl_dsl::interp::HostBuffer<T>`,
/// bound as `dyn HostArg`). The executor type names the set: `SgdUpdateArgs<'a, Interpreter>`.
pub trait ExecutorBuffers: 'static {
    /// A buffer of `T` elements on this executor.
    type Buffer<T: 'static>: std::fmt::Debug + 'static;
    /// What the executor's positional dispatch takes for one binding.
    type Arg: ?Sized;
    /// `buffer` as the positional dispatch takes it.
    fn arg<T: Pod + WgslType>(buffer: &Self::Buffer<T>) -> &Self::Arg;
    /// A texture of format `F` on this executor, as a storage texture binds it (the GPU's
    /// `GpuTexture<F>`; the interpreter has none, [`NoTexture`]).
    type Texture<F: Format>: std::fmt::Debug + 'static;
    /// A texture of any format whose channel type is `T`, as a sampled `texture_2d<T>` binds
    /// it (on the GPU `dyn TextureOf<T>`).
    type SampledTexture<T: SampledType>: ?Sized + std::fmt::Debug + 'static;
    /// `texture` as the positional dispatch takes it.
    fn texture_arg<F: Format>(texture: &Self::Texture<F>) -> &Self::Arg;
    /// `texture` as the positional dispatch takes it.
    fn sampled_texture_arg<T: SampledType>(texture: &Self::SampledTexture<T>) -> &Self::Arg;
}

/// The textures of an executor that has none (the CPU interpreter, which refuses kernels with
/// textures): no value of this type exists, so an argument struct with a texture field cannot
/// be made for that executor.
#[derive(Debug)]
pub enum NoTexture {}

/// The argument a texture binding of type `Self` ([`Texture2d<T>`](wgsl_dsl_core::kernel::Texture2d),
/// [`StorageTexture2d<F, A>`](wgsl_dsl_core::kernel::StorageTexture2d)) takes on the executor `E`:
/// `&'a E::SampledTexture<T>` for a sampled texture (on the GPU `&'a dyn TextureOf<T>`, which
/// any `&GpuTexture<F>` of channel type `T` coerces to), `&'a E::Texture<F>` for a `read`
/// storage texture, `&'a mut E::Texture<F>` for a `write` or `read_write` one (on the GPU
/// `&'a [mut] GpuTexture<F>`). Used by `#[kernel]`'s `#[texture]` parameters and
/// `#[derive(Bindings)]`'s `#[texture]` fields.
pub trait TextureArg: TextureBinding {
    /// What the argument borrows.
    type Target<E: ExecutorBuffers>: ?Sized + std::fmt::Debug + 'static;
    /// The argument type: `&'a Self::Target<E>` or `&'a mut Self::Target<E>`.
    type Arg<'a, E: ExecutorBuffers>;
    /// The borrowed texture as the positional dispatch takes it.
    fn bind<E: ExecutorBuffers>(texture: &Self::Target<E>) -> &E::Arg;
}

impl<T: SampledType> TextureArg for Texture2d<T> {
    type Target<E: ExecutorBuffers> = E::SampledTexture<T>;
    type Arg<'a, E: ExecutorBuffers> = &'a E::SampledTexture<T>;
    fn bind<E: ExecutorBuffers>(texture: &E::SampledTexture<T>) -> &E::Arg {
        E::sampled_texture_arg(texture)
    }
}

macro_rules! storage_texture_arg {
    ($($access:ty => $($mut:ident)?;)*) => {$(
        impl<F: Format> TextureArg for StorageTexture2d<F, $access> {
            type Target<E: ExecutorBuffers> = E::Texture<F>;
            type Arg<'a, E: ExecutorBuffers> = &'a $($mut)? E::Texture<F>;
            fn bind<E: ExecutorBuffers>(texture: &E::Texture<F>) -> &E::Arg {
                E::texture_arg(texture)
            }
        }
    )*};
}

storage_texture_arg! {
    ReadOnly => ;
    WriteOnly => mut;
    ReadWrite => mut;
}

/// One binding as an argument struct declares it: what [`check_interface`] compares with
/// the kernel's signature.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgBinding {
    /// The field (and binding) name.
    pub name: &'static str,
    /// Uniform, read-only or read-write storage.
    pub kind: BindingKind,
    /// The binding's store type (`array<f32>` for a buffer of `f32`).
    pub ty: Ty,
}

impl ArgBinding {
    /// The binding `name` of store type `T`: a uniform if `uniform`, otherwise a storage
    /// binding whose access is `A`.
    pub fn of<T: WgslType, A: wgsl_dsl_core::kernel::Access>(
        name: &'static str,
        uniform: bool,
    ) -> Self {
        let kind = match (uniform, A::WRITABLE) {
            (true, _) => BindingKind::Uniform,
            (false, false) => BindingKind::StorageRead,
            (false, true) => BindingKind::StorageReadWrite,
        };
        ArgBinding {
            name,
            kind,
            ty: T::ty(),
        }
    }

    /// The texture binding `name` of type `T` (`Texture2d<f32>`, `StorageTexture2d<F, A>`).
    pub fn texture<T: TextureBinding>(name: &'static str) -> Self {
        ArgBinding {
            name,
            kind: BindingKind::Texture,
            ty: Ty::Texture(T::TEXTURE),
        }
    }
}

/// A kernel's argument struct: one field per binding, in binding order, borrowing the
/// buffers of [`Self::Executor`]. Written by `#[kernel]` and `#[derive(Bindings)]` (as
/// `NameArgs<'a, E: ExecutorBuffers = Gpu>`); see [`KernelDef`].
pub trait KernelArgs {
    /// The executor whose buffers the fields borrow.
    type Executor: ExecutorBuffers;
    /// The same struct over the buffers of the executor `E` (`NameArgs<'b, E>`).
    type With<'b, E: ExecutorBuffers>: KernelArgs<Executor = E>;
    /// The bindings the fields stand for, in order.
    fn bindings() -> Vec<ArgBinding>;
    /// Call `f` with the fields in binding order, as the executor's positional layer takes
    /// them.
    fn with_bind_args<R>(
        &self,
        f: impl FnOnce(&[&<Self::Executor as ExecutorBuffers>::Arg]) -> R,
    ) -> R;
}

/// The argument a binding declared as the place type `Self` takes on the executor `E`:
/// `&'a E::Buffer<H>` for a read-only binding (storage or uniform), `&'a mut E::Buffer<H>`
/// for a read-write one, `H` the store type's [`HostShareable::Host`] (on the GPU,
/// `&'a GpuBuffer<H>` and `&'a mut GpuBuffer<H>`). Used by `#[derive(Bindings)]`.
pub trait PlaceArg {
    /// The argument type.
    type Arg<'a, E: ExecutorBuffers>;
}
impl<T: HostShareable> PlaceArg for Place<T, ReadOnly> {
    type Arg<'a, E: ExecutorBuffers> = &'a E::Buffer<T::Host>;
}
impl<T: HostShareable> PlaceArg for Place<T, ReadWrite> {
    type Arg<'a, E: ExecutorBuffers> = &'a mut E::Buffer<T::Host>;
}

/// A kernel definition with a typed interface: how to build the kernel, the type of its
/// arguments, and the workgroups that cover a problem size. `#[kernel] fn name` implements it
/// for the generated type `Name`; builder-written kernels implement it by hand.
pub trait KernelDef {
    /// The argument struct (`NameArgs<'a>`, over GPU buffers by default); an executor `E`
    /// takes `<Self::Args<'a> as KernelArgs>::With<'a, E>`, the same struct over its buffers
    /// ([`ArgsOn`]).
    type Args<'a>: KernelArgs;
    /// What one dispatch covers, e.g. `(rows, cols)` of an output, or `[u32; 3]`
    /// invocations.
    type Size;
    /// Build the kernel.
    fn build(&self) -> KernelBuilder;
    /// The workgroups to dispatch for `size`.
    fn workgroups(&self, size: Self::Size) -> [u32; 3];
}

/// A kernel definition's argument struct over the buffers of executor `E`: `SgdUpdateArgs<'a,
/// E>` for `K = SgdUpdate`.
pub type ArgsOn<'a, K, E> = <<K as KernelDef>::Args<'a> as KernelArgs>::With<'a, E>;

/// Workgroups of `workgroup_size` covering `invocations` per dimension (the default grid of
/// `#[kernel]`).
pub fn workgroups_covering(invocations: [u32; 3], workgroup_size: [u32; 3]) -> [u32; 3] {
    [
        ceil_div(invocations[0], workgroup_size[0]),
        ceil_div(invocations[1], workgroup_size[1]),
        ceil_div(invocations[2], workgroup_size[2]),
    ]
}

/// [`DispatchErrorKind::Interface`] unless the kernel of signature `sig` declares exactly the
/// bindings `declared`, in order (names, kinds, store types).
pub fn check_interface(
    sig: &KernelSignature,
    declared: &[ArgBinding],
) -> Result<(), DispatchError> {
    let err = |message: String| {
        DispatchError::new(sig.name.clone(), DispatchErrorKind::Interface { message })
    };
    if sig.bindings.len() != declared.len() {
        return Err(err(format!(
            "the kernel declares {} bindings, its argument struct {}",
            sig.bindings.len(),
            declared.len()
        )));
    }
    for (b, a) in sig.bindings.iter().zip(declared) {
        if b.name != a.name || b.kind != a.kind || b.ty != a.ty {
            return Err(err(format!(
                "binding {} is `{}` ({:?}, {}) in the kernel but `{}` ({:?}, {}) in its argument struct",
                b.binding,
                b.name,
                b.kind,
                b.ty.wgsl_name(),
                a.name,
                a.kind,
                a.ty.wgsl_name()
            )));
        }
    }
    Ok(())
}
