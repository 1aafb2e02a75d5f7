//! Loading and storing cooperative matrices ([`CoopMat`]): `coopLoad`, `coopLoadT`,
//! `coopStore`, `coopStoreT` of wgpu's `wgpu_cooperative_matrix` WGSL extension.

use super::stmt::Stmt;
use super::{KernelBuilder, Place, ReadWrite};
use crate::exp::{Exp, ExprKind, IntoExp};
use crate::site::CallSite;
use crate::types::*;

impl<T: CoopElement, A: super::Access> Place<T, A> {
    /// `coopLoad<coop_matCxR<S, role>>(&place, stride)` (column-major) or `coopLoadT` (row-major):
    /// the `R x C` matrix whose element `(row, column)` is scalar `row * stride * N + column`
    /// ([`CoopLayout::RowMajor`]) or `column * stride * N + row`
    /// ([`CoopLayout::ColumnMajor`]) counted from `place`'s first, where `T` is a scalar
    /// (`N = 1`: `place[row * stride + column]`) or a `vecN` (`stride` counts vectors; a row
    /// or column runs on through consecutive components: as on the H200 and in the
    /// interpreter). `place` is an element of a storage buffer or workgroup array; the whole matrix
    /// must lie inside it. Read by the subgroup together: every invocation of the subgroup must
    /// evaluate the load with the same `place` and `stride`. On Vulkan the address of the first
    /// element and the stride in bytes should be multiples of 16.
    ///
    /// The result's size and role come from the type it is used as:
    /// `let a: Exp<CoopMat<F16, 16, 16, MatrixA>> = tile.at(i).coop_load(stride, RowMajor);`.
    #[track_caller]
    pub fn coop_load<const R: usize, const C: usize, Ro: Role>(
        &self,
        stride: impl IntoExp<u32>,
        layout: CoopLayout,
    ) -> Exp<CoopMat<T::Scalar, R, C, Ro>>
    where
        CoopMat<T::Scalar, R, C, Ro>: WgslType,
    {
        Exp::from_kind(
            ExprKind::CoopLoad {
                place: self.node.clone(),
                stride: stride.into_exp().node,
                row_major: layout.row_major(),
            },
            CallSite::caller(),
        )
    }
}

impl KernelBuilder {
    /// `coopStore(value, &target, stride)` (column-major) or `coopStoreT` (row-major): write the
    /// `R x C` matrix `value` so that element `(row, column)` lands at
    /// `target[row * stride + column]` ([`CoopLayout::RowMajor`]) or
    /// `target[column * stride + row]` ([`CoopLayout::ColumnMajor`]) for a scalar `T` (for
    /// a `vecN`, `stride` counts vectors, as in [`Place::coop_load`]). Written by the
    /// subgroup together: every invocation of the subgroup must reach the store with the same
    /// arguments. The element types of `value` and `target` agree.
    #[track_caller]
    pub fn coop_store<T, const R: usize, const C: usize, Ro: Role>(
        &mut self,
        value: &Exp<CoopMat<T::Scalar, R, C, Ro>>,
        target: &Place<T, ReadWrite>,
        stride: impl IntoExp<u32>,
        layout: CoopLayout,
    ) where
        T: CoopElement,
        CoopMat<T::Scalar, R, C, Ro>: WgslType,
    {
        let site = CallSite::caller();
        let stride = stride.into_exp();
        self.push(
            Stmt::CoopStore {
                value: value.node.clone(),
                place: target.node.clone(),
                stride: stride.node,
                row_major: layout.row_major(),
            },
            site,
        );
    }
}
