//! `coopMultiplyAdd` on cooperative matrices ([`CoopMat`]); loads and stores are on places
//! ([`Place::coop_load`](crate::Place::coop_load),
//! [`KernelBuilder::coop_store`](crate::KernelBuilder::coop_store)).

use super::{Exp, ExprKind};
use crate::site::CallSite;
use crate::types::*;

/// `coopMultiplyAdd(a, b, c)`: `a * b + c` for an `M x K` matrix `a`, a `K x N` matrix `b`
/// and an `M x N` accumulator `c`, computed by the subgroup together (tensor cores on NVIDIA
/// GPUs). Every invocation of the subgroup must evaluate it (subgroup-uniform control flow).
///
/// The roles, sizes and element types are checked by Rust: an `A` where a `B` belongs, a `K`
/// that differs between `a` and `b`, or a configuration no adapter has (e.g. `f32` inputs at
/// 16x16x16, see [`MultiplyAddShape`]) does not compile. The kernel then needs the
/// cooperative-matrix capability, and its signature lists the configuration, which the
/// runtime checks against the adapter's.
///
/// ```
/// # use wgsl_dsl_core as wgsl_dsl;
/// use wgsl_dsl::prelude::*;
/// use wgsl_dsl::types::{Accumulator, CoopLayout, CoopMat, MatrixA, MatrixB};
/// type F16 = half::f16;
///
/// // One 16x16 product: c = a * b for row-major 16x16 matrices.
/// let mut k = KernelBuilder::new("mma", [32, 1, 1]);
/// let a = k.storage::<RuntimeArray<F16>, ReadOnly>("a");
/// let b = k.storage::<RuntimeArray<F16>, ReadOnly>("b");
/// let c = k.storage::<RuntimeArray<f32>, ReadWrite>("c");
/// let x: Exp<CoopMat<F16, 16, 16, MatrixA>> =
///     k.let_("x", a.at(0u32).coop_load(16u32, CoopLayout::RowMajor));
/// let y: Exp<CoopMat<F16, 16, 16, MatrixB>> =
///     k.let_("y", b.at(0u32).coop_load(16u32, CoopLayout::RowMajor));
/// let zero = Exp::<CoopMat<f32, 16, 16, Accumulator>>::zero();
/// let d = k.let_("d", coop_multiply_add(&x, &y, &zero));
/// k.coop_store(&d, &c.at(0u32), 16u32, CoopLayout::RowMajor);
/// let shader = k.build()?;
/// assert!(shader.wgsl.contains("enable wgpu_cooperative_matrix;"));
/// assert!(shader.wgsl.contains("coopMultiplyAdd(x, y, "));
/// # Ok::<(), wgsl_dsl::BuildError>(())
/// ```
#[track_caller]
pub fn coop_multiply_add<I, Acc, const M: usize, const N: usize, const K: usize>(
    a: &Exp<CoopMat<I, M, K, MatrixA>>,
    b: &Exp<CoopMat<I, K, N, MatrixB>>,
    c: &Exp<CoopMat<Acc, M, N, Accumulator>>,
) -> Exp<CoopMat<Acc, M, N, Accumulator>>
where
    Shape<I, Acc, M, N, K>: MultiplyAddShape,
    CoopMat<Acc, M, N, Accumulator>: WgslType,
{
    Exp::from_kind(
        ExprKind::CoopMultiplyAdd(a.node.clone(), b.node.clone(), c.node.clone()),
        CallSite::caller(),
    )
}
