//! WGSL types as Rust marker types.
//!
//! Every type a kernel can compute with implements [`WgslType`], which knows its WGSL type as a
//! [`Ty`] (a small description that lowering turns into a `naga::Type`). The marker traits below
//! ([`Scalar`], [`Numeric`], [`Float`], [`Integer`], ...) encode the WGSL typing rules (WGSL spec
//! §6 "Types", §8.7 "Arithmetic Expressions"), so that an ill-typed expression such as
//! `Exp<f32> + Exp<u32>` is a Rust compile error.
//!
//! | Rust | WGSL |
//! |---|---|
//! | `f32`, `i32`, `u32`, `bool` | `f32`, `i32`, `u32`, `bool` |
//! | `half::f16` (feature `f16`) | `f16` (needs `enable f16;`, adapter capability) |
//! | [`Vector<T, N>`] ([`Vec2`], [`Vec3`], [`Vec4`]) | `vecN<T>` |
//! | [`Mat<C, R>`] ([`Mat2x2`] ... [`Mat4x4`]) | `matCxR<f32>` (C columns, R rows) |
//! | [`Array<T, N>`] | `array<T, N>` |
//! | [`RuntimeArray<T>`] | `array<T>` (storage buffers only) |
//! | [`SizedArray<T>`] | `array<T, N>`, `N` given when the kernel is built (workgroup tiles) |
//! | [`Atomic<T>`] | `atomic<T>`, `T` is `i32` or `u32` |
//! | `#[derive(WgslStruct)]` | `struct` |
//! | [`texture::Format`] markers, [`Texture2d`](crate::kernel::Texture2d) | `texture_storage_2d<F, access>`, `texture_2d<T>` (bindings only, see [`texture`]) |
//! | [`CoopMat<T, R, C, Role>`](CoopMat) | `coop_matCxR<T, role>` (extension `wgpu_cooperative_matrix`, see [`coop`]) |

pub mod coop;
pub mod texture;
mod ty;

use std::marker::PhantomData;

pub use coop::{
    Accumulator, CoopDim, CoopElement, CoopLayout, CoopMat, CoopRole, CoopScalar, CoopShape,
    MatrixA, MatrixB, MultiplyAddShape, Role, Shape,
};
pub use texture::{
    Format, R32Float, R32Sint, R32Uint, Rgba8Unorm, Rgba32Float, Rgba32Sint, Rgba32Uint,
    SampledType, TexelFormat, TextureAccess, TextureTy,
};
pub use ty::{ScalarTy, Ty};

/// A Rust type standing for a WGSL type.
///
/// Implemented for the scalars, [`Vector`], [`Mat`], [`Array`], [`RuntimeArray`], [`Atomic`],
/// and by `#[derive(WgslStruct)]` for structs.
pub trait WgslType: 'static {
    /// The WGSL type.
    fn ty() -> Ty;
}

/// A type that may be held in a `let`, a `var`, passed to and returned from functions:
/// WGSL's *constructible* types (WGSL spec §6.2.9), i.e. no atomics and no runtime-sized arrays.
pub trait Constructible: WgslType {}

/// A WGSL scalar type (`bool`, `i32`, `u32`, `f32`, `f16`).
pub trait Scalar: Constructible + ScalarOrVector + Copy {
    /// Which scalar.
    const SCALAR: ScalarTy;
}

/// Scalars and vectors of numbers: what arithmetic applies to (WGSL spec §8.7).
pub trait Numeric: Constructible {
    /// The scalar element type (`f32` for `vec3<f32>`).
    type Elem: Scalar;
}

/// Numeric types that can be negated (`f32`, `i32`, `f16`, and their vectors).
pub trait Signed: Numeric {}

/// Floating-point scalars and vectors (`f32`, `f16`, `vecN<f32>`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a floating-point type",
    label = "this WGSL built-in takes `f32`, `f16` or a vector of them"
)]
pub trait Float: Signed {}

/// Integer scalars and vectors (`i32`, `u32`, `vecN<i32>`, `vecN<u32>`).
pub trait Integer: Numeric {
    /// The matching unsigned type (shift amounts, `countOneBits` results are of this type).
    type Unsigned: Integer;
}

/// Scalars and vectors of any scalar, booleans included: what comparisons and `select` apply to.
pub trait ScalarOrVector: Constructible {
    /// The scalar element type.
    type Elem: Scalar;
    /// The same shape with `bool` elements (`bool` or `vecN<bool>`).
    type Bool: ScalarOrVector;
}

macro_rules! scalar {
    ($t:ty, $s:ident) => {
        impl WgslType for $t {
            fn ty() -> Ty {
                Ty::Scalar(ScalarTy::$s)
            }
        }
        impl Constructible for $t {}
        impl Scalar for $t {
            const SCALAR: ScalarTy = ScalarTy::$s;
        }
        impl ScalarOrVector for $t {
            type Elem = $t;
            type Bool = bool;
        }
    };
}
scalar!(bool, Bool);
scalar!(i32, I32);
scalar!(u32, U32);
scalar!(f32, F32);
#[cfg(feature = "f16")]
scalar!(half::f16, F16);

impl Numeric for i32 {
    type Elem = i32;
}
impl Numeric for u32 {
    type Elem = u32;
}
impl Numeric for f32 {
    type Elem = f32;
}
impl Signed for i32 {}
impl Signed for f32 {}
impl Float for f32 {}
impl Integer for i32 {
    type Unsigned = u32;
}
impl Integer for u32 {
    type Unsigned = u32;
}
#[cfg(feature = "f16")]
impl Numeric for half::f16 {
    type Elem = half::f16;
}
#[cfg(feature = "f16")]
impl Signed for half::f16 {}
#[cfg(feature = "f16")]
impl Float for half::f16 {}

/// `vecN<T>`: a vector of `N` (2, 3 or 4) scalars `T` (WGSL spec §6.2.6).
#[derive(Debug)]
pub struct Vector<T, const N: usize>(PhantomData<T>);
/// `vec2<T>`
pub type Vec2<T> = Vector<T, 2>;
/// `vec3<T>`
pub type Vec3<T> = Vector<T, 3>;
/// `vec4<T>`
pub type Vec4<T> = Vector<T, 4>;

/// Vector and matrix dimensions WGSL allows (2, 3, 4).
pub trait Dim {
    /// The dimension.
    const N: u8;
    /// As a naga vector size.
    const SIZE: naga::VectorSize;
}
/// Carries a const generic dimension to the [`Dim`] trait.
#[derive(Debug)]
pub struct D<const N: usize>;
impl Dim for D<2> {
    const N: u8 = 2;
    const SIZE: naga::VectorSize = naga::VectorSize::Bi;
}
impl Dim for D<3> {
    const N: u8 = 3;
    const SIZE: naga::VectorSize = naga::VectorSize::Tri;
}
impl Dim for D<4> {
    const N: u8 = 4;
    const SIZE: naga::VectorSize = naga::VectorSize::Quad;
}

impl<T: Scalar, const N: usize> WgslType for Vector<T, N>
where
    D<N>: Dim,
{
    fn ty() -> Ty {
        Ty::Vector(<D<N> as Dim>::N, T::SCALAR)
    }
}
impl<T: Scalar, const N: usize> Constructible for Vector<T, N> where D<N>: Dim {}
impl<T: Scalar, const N: usize> ScalarOrVector for Vector<T, N>
where
    D<N>: Dim,
{
    type Elem = T;
    type Bool = Vector<bool, N>;
}
impl<T: Scalar + Numeric<Elem = T>, const N: usize> Numeric for Vector<T, N>
where
    D<N>: Dim,
{
    type Elem = T;
}
impl<T: Scalar + Signed + Numeric<Elem = T>, const N: usize> Signed for Vector<T, N> where D<N>: Dim {}
impl<T: Scalar + Float + Numeric<Elem = T>, const N: usize> Float for Vector<T, N> where D<N>: Dim {}
impl<const N: usize> Integer for Vector<i32, N>
where
    D<N>: Dim,
{
    type Unsigned = Vector<u32, N>;
}
impl<const N: usize> Integer for Vector<u32, N>
where
    D<N>: Dim,
{
    type Unsigned = Vector<u32, N>;
}

/// `matCxR<f32>`: `C` columns of `R` rows (WGSL spec §6.2.7). Column-major.
#[derive(Debug)]
pub struct Mat<const C: usize, const R: usize>;
/// `mat2x2<f32>`
pub type Mat2x2 = Mat<2, 2>;
/// `mat2x3<f32>`
pub type Mat2x3 = Mat<2, 3>;
/// `mat2x4<f32>`
pub type Mat2x4 = Mat<2, 4>;
/// `mat3x2<f32>`
pub type Mat3x2 = Mat<3, 2>;
/// `mat3x3<f32>`
pub type Mat3x3 = Mat<3, 3>;
/// `mat3x4<f32>`
pub type Mat3x4 = Mat<3, 4>;
/// `mat4x2<f32>`
pub type Mat4x2 = Mat<4, 2>;
/// `mat4x3<f32>`
pub type Mat4x3 = Mat<4, 3>;
/// `mat4x4<f32>`
pub type Mat4x4 = Mat<4, 4>;

impl<const C: usize, const R: usize> WgslType for Mat<C, R>
where
    D<C>: Dim,
    D<R>: Dim,
{
    fn ty() -> Ty {
        Ty::Matrix {
            columns: <D<C> as Dim>::N,
            rows: <D<R> as Dim>::N,
            scalar: ScalarTy::F32,
        }
    }
}
impl<const C: usize, const R: usize> Constructible for Mat<C, R>
where
    D<C>: Dim,
    D<R>: Dim,
{
}

/// `array<T, N>`: a fixed-size array (WGSL spec §6.2.9).
#[derive(Debug)]
pub struct Array<T, const N: usize>(PhantomData<T>);
impl<T: WgslType, const N: usize> WgslType for Array<T, N> {
    fn ty() -> Ty {
        Ty::Array {
            elem: Box::new(T::ty()),
            len: Some(N as u32),
        }
    }
}
impl<T: Constructible, const N: usize> Constructible for Array<T, N> {}

/// `array<T>`: a runtime-sized array, only as the (last member of the) store type of a storage
/// buffer (WGSL spec §6.2.9).
#[derive(Debug)]
pub struct RuntimeArray<T>(PhantomData<T>);
impl<T: WgslType> WgslType for RuntimeArray<T> {
    fn ty() -> Ty {
        Ty::Array {
            elem: Box::new(T::ty()),
            len: None,
        }
    }
}

/// `array<T, N>` whose length `N` is a value given when the kernel is built (a tile size chosen
/// for a problem shape) rather than a Rust constant. Declared with
/// [`KernelBuilder::workgroup_array`](crate::KernelBuilder::workgroup_array), which records
/// the length; [`WgslType::ty`] of this marker knows no length and describes it as `array<T>`.
#[derive(Debug)]
pub struct SizedArray<T>(PhantomData<T>);
impl<T: WgslType> WgslType for SizedArray<T> {
    fn ty() -> Ty {
        RuntimeArray::<T>::ty()
    }
}

/// Types that can be indexed with `[i]`: arrays and vectors. `Elem` is the element type.
pub trait Indexable: WgslType {
    /// Element type.
    type Elem: WgslType;
}
impl<T: WgslType, const N: usize> Indexable for Array<T, N> {
    type Elem = T;
}
impl<T: WgslType> Indexable for RuntimeArray<T> {
    type Elem = T;
}
impl<T: WgslType> Indexable for SizedArray<T> {
    type Elem = T;
}
impl<T: Scalar, const N: usize> Indexable for Vector<T, N>
where
    D<N>: Dim,
{
    type Elem = T;
}

/// `atomic<T>` for `T` = `i32` or `u32` (WGSL spec §6.2.8). There is no `atomic<f32>` in
/// portable WGSL, so `Atomic<f32>` does not implement [`WgslType`].
#[derive(Debug)]
pub struct Atomic<T>(PhantomData<T>);

/// The scalars an [`Atomic`] may hold: `i32` and `u32`.
#[diagnostic::on_unimplemented(
    message = "`atomic<{Self}>` does not exist in portable WGSL",
    label = "atomics hold `i32` or `u32` only (WGSL spec §6.2.8)"
)]
pub trait AtomicScalar: Scalar + Integer {}
impl AtomicScalar for i32 {}
impl AtomicScalar for u32 {}

impl<T: AtomicScalar> WgslType for Atomic<T> {
    fn ty() -> Ty {
        Ty::Atomic(T::SCALAR)
    }
}

/// A WGSL struct. Implemented by `#[derive(WgslStruct)]` (crate `wgsl-dsl-macros`).
pub trait WgslStruct: Constructible {
    /// Field names and types in declaration order.
    fn members() -> Vec<(&'static str, Ty)>;
}

/// Types whose expressions can be indexed by `u32` or `i32`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot index an array or vector",
    label = "WGSL indices are `i32` or `u32` (WGSL spec §8.5)"
)]
pub trait IndexScalar: Scalar + Integer {}
impl IndexScalar for u32 {}
impl IndexScalar for i32 {}

/// Store types a host buffer can be bound to, and the element type of that buffer
/// (`GpuBuffer<Self::Host>` in a typed kernel interface): `f32` for `array<f32>` and for `f32`,
/// `u32` for `array<atomic<u32>>`, the struct itself for a `#[derive(WgslStruct)]` struct.
/// Vectors, matrices and `bool` have no host type here (the runtime binds buffers of scalars
/// and derived structs).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the store type of a binding a host buffer is bound to",
    label = "bindings hold `i32`, `u32`, `f32`, atomics of these, derived structs, or arrays of them"
)]
pub trait HostShareable: WgslType {
    /// The element type of a host buffer bound to this store type.
    type Host: 'static;
}
macro_rules! host_scalar {
    ($($(#[$attr:meta])* $t:ty),*) => {$(
        $(#[$attr])*
        impl HostShareable for $t {
            type Host = $t;
        }
    )*};
}
host_scalar!(
    i32,
    u32,
    f32,
    #[cfg(feature = "f16")]
    half::f16
);
impl<T: AtomicScalar> HostShareable for Atomic<T> {
    type Host = T;
}
impl<T: HostShareable> HostShareable for RuntimeArray<T> {
    type Host = T::Host;
}
impl<T: HostShareable, const N: usize> HostShareable for Array<T, N> {
    type Host = T::Host;
}
impl<T: WgslStruct> HostShareable for T {
    type Host = T;
}
