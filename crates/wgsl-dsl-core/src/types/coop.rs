//! Cooperative matrices: `coop_matCxR<T, role>` of wgpu's experimental WGSL extension
//! `wgpu_cooperative_matrix` (naga's `TypeInner::CooperativeMatrix`; Vulkan's
//! `VK_KHR_cooperative_matrix`, the tensor cores of NVIDIA GPUs).
//!
//! A cooperative matrix is one `R x C` matrix held by a whole **subgroup**: every invocation of
//! the subgroup keeps an implementation-defined share of its elements. It is loaded from memory,
//! multiplied and added, and stored back by all invocations of the subgroup together, so every
//! operation on it must be reached in subgroup-uniform control flow.
//!
//! The type records the matrix's role in `D = A * B + C`:
//!
//! | Rust | WGSL | shape |
//! |---|---|---|
//! | `CoopMat<T, M, K, MatrixA>` | `coop_matKxM<T, A>` | `M x K`, left operand |
//! | `CoopMat<T, K, N, MatrixB>` | `coop_matNxK<T, B>` | `K x N`, right operand |
//! | `CoopMat<T, M, N, Accumulator>` | `coop_matNxM<T, C>` | `M x N`, accumulator and result |
//!
//! (WGSL names a matrix type columns first, as in `mat2x3`: `coop_mat8x16` has 8 columns and 16
//! rows.) Rows and columns are 8 or 16 (naga's `CooperativeSize`); elements are `f16` or `f32`.
//! Which `(M, N, K, input, accumulator)` configurations multiply is a property of the adapter
//! (`wgpu::Adapter::cooperative_matrix_properties`); [`MultiplyAddShape`] lists those any
//! adapter wgpu 30 supports offers, so that other shapes and element types do not compile, and
//! the runtime checks the kernel's configurations against the adapter's list.

use std::marker::PhantomData;

pub use super::ty::CoopRole;
use super::{Constructible, D, Scalar, ScalarTy, Ty, Vector, WgslType};

/// `coop_matCxR<T, role>`: an `R x C` cooperative matrix of `T` (`f16` or `f32`) with role
/// [`MatrixA`], [`MatrixB`] or [`Accumulator`], held by a subgroup. See the
/// [module docs](self).
#[derive(Debug)]
pub struct CoopMat<T, const R: usize, const C: usize, Role>(PhantomData<(T, Role)>);

/// Role marker: the left operand `A` (`M x K`) of `A * B + C`.
#[derive(Debug)]
pub struct MatrixA;
/// Role marker: the right operand `B` (`K x N`) of `A * B + C`.
#[derive(Debug)]
pub struct MatrixB;
/// Role marker: the accumulator `C` (`M x N`) of `A * B + C`, and its result.
#[derive(Debug)]
pub struct Accumulator;

/// The role markers [`MatrixA`], [`MatrixB`], [`Accumulator`].
pub trait Role: 'static {
    /// Which role.
    const ROLE: CoopRole;
}
impl Role for MatrixA {
    const ROLE: CoopRole = CoopRole::A;
}
impl Role for MatrixB {
    const ROLE: CoopRole = CoopRole::B;
}
impl Role for Accumulator {
    const ROLE: CoopRole = CoopRole::Accumulator;
}

/// The element types of cooperative matrices: `f32` and `f16` (naga allows no other).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an element of a cooperative matrix",
    label = "cooperative matrices hold `f16` or `f32`"
)]
pub trait CoopScalar: Scalar {}
impl CoopScalar for f32 {}
#[cfg(feature = "f16")]
impl CoopScalar for half::f16 {}

/// The sizes of cooperative matrices: 8 and 16 (naga's `CooperativeSize`).
#[diagnostic::on_unimplemented(
    message = "a cooperative matrix has 8 or 16 rows and columns",
    label = "naga's `CooperativeSize` is 8 or 16"
)]
pub trait CoopDim {
    /// The size.
    const N: u8;
}
impl CoopDim for D<8> {
    const N: u8 = 8;
}
impl CoopDim for D<16> {
    const N: u8 = 16;
}

impl<T: CoopScalar, const R: usize, const C: usize, Ro: Role> WgslType for CoopMat<T, R, C, Ro>
where
    D<R>: CoopDim,
    D<C>: CoopDim,
{
    fn ty() -> Ty {
        Ty::CoopMatrix {
            rows: <D<R> as CoopDim>::N,
            columns: <D<C> as CoopDim>::N,
            scalar: T::SCALAR,
            role: Ro::ROLE,
        }
    }
}
impl<T: CoopScalar, const R: usize, const C: usize, Ro: Role> Constructible for CoopMat<T, R, C, Ro>
where
    D<R>: CoopDim,
    D<C>: CoopDim,
{
}

/// What a cooperative matrix is loaded from and stored to: memory of its element type `T` or of
/// vectors of it (`vecN<T>`; the stride then counts vectors). The pointer passed to
/// `coopLoad`/`coopStore` points at one such element.
pub trait CoopElement: WgslType {
    /// The matrix element type.
    type Scalar: CoopScalar;
}
impl CoopElement for f32 {
    type Scalar = f32;
}
#[cfg(feature = "f16")]
impl CoopElement for half::f16 {
    type Scalar = half::f16;
}
impl<T: CoopScalar, const N: usize> CoopElement for Vector<T, N>
where
    Vector<T, N>: WgslType,
{
    type Scalar = T;
}

/// How a cooperative matrix lies in memory (the `Layout` of `OpCooperativeMatrixLoadKHR`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CoopLayout {
    /// Element `(row, column)` at `pointer[row * stride + column]` (WGSL `coopLoadT`/`coopStoreT`).
    RowMajor,
    /// Element `(row, column)` at `pointer[column * stride + row]` (WGSL `coopLoad`/`coopStore`).
    ColumnMajor,
}

impl CoopLayout {
    /// True for [`CoopLayout::RowMajor`] (naga's `CooperativeData::row_major`).
    pub fn row_major(self) -> bool {
        self == CoopLayout::RowMajor
    }
}

/// One multiply-add configuration: `A` is `M x K` and `B` is `K x N` of `Input`, `C` and the
/// result are `M x N` of `Acc`. Implements [`MultiplyAddShape`] where some adapter has it.
#[derive(Debug)]
pub struct Shape<Input, Acc, const M: usize, const N: usize, const K: usize>(
    PhantomData<(Input, Acc)>,
);

/// The multiply-add configurations adapters offer through wgpu 30 (its Vulkan backend keeps
/// sizes of 8 and 16; NVIDIA's tensor cores take `f16` inputs at `16x16x16`, `16x8x16` and
/// `16x8x8` (`M x N x K`) with `f16` or `f32` accumulators; Apple's simdgroup matrices are
/// `8x8x8` of `f32`, or `f16` inputs). A configuration outside this list does not compile; one
/// inside it that the adapter lacks is refused by the runtime
/// (`wgsl_dsl::runtime::DispatchErrorKind::UnsupportedCooperativeShape`).
#[diagnostic::on_unimplemented(
    message = "no adapter multiplies cooperative matrices of `{Self}`",
    label = "tensor cores take `f16` inputs (16x16x16, 16x8x16, 16x8x8 as M x N x K) with `f16` or `f32` accumulators; `f32` inputs only at 8x8x8",
    note = "convert the inputs to `f16` (`Shape<Input, Accumulator, M, N, K>`)"
)]
pub trait MultiplyAddShape {
    /// `(M, N, K)`.
    const MNK: (u8, u8, u8);
}

macro_rules! shapes {
    ($input:ty, $acc:ty: $(($m:literal, $n:literal, $k:literal)),*) => {$(
        impl MultiplyAddShape for Shape<$input, $acc, $m, $n, $k> {
            const MNK: (u8, u8, u8) = ($m, $n, $k);
        }
    )*};
}
#[cfg(feature = "f16")]
shapes!(half::f16, f32: (16, 16, 16), (16, 8, 16), (16, 8, 8), (8, 8, 8));
#[cfg(feature = "f16")]
shapes!(half::f16, half::f16: (16, 16, 16), (16, 8, 16), (16, 8, 8), (8, 8, 8));
shapes!(f32, f32: (8, 8, 8));

/// A multiply-add configuration a kernel uses, as recorded in its
/// [`KernelSignature`](crate::KernelSignature): `M x K` times `K x N` of `input`, accumulated
/// in `accumulator`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CoopShape {
    /// Rows of `A` and of the accumulator.
    pub m: u8,
    /// Columns of `B` and of the accumulator.
    pub n: u8,
    /// Columns of `A`, rows of `B`.
    pub k: u8,
    /// Element type of `A` and `B`.
    pub input: ScalarTy,
    /// Element type of the accumulator and the result.
    pub accumulator: ScalarTy,
}

impl std::fmt::Display for CoopShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}x{}x{} (M x N x K) of {} inputs with {} accumulators",
            self.m,
            self.n,
            self.k,
            self.input.wgsl_name(),
            self.accumulator.wgsl_name()
        )
    }
}
