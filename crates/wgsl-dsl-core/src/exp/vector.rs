//! Vector construction and components (WGSL spec §8.3, §8.5.1).

use super::{Exp, ExprKind, IntoExp};
use crate::site::CallSite;
use crate::types::*;

impl<T: Scalar, const N: usize> Exp<Vector<T, N>>
where
    D<N>: Dim,
{
    /// Component `x` (`e.x`, WGSL spec §8.5.1.1).
    #[track_caller]
    pub fn x(&self) -> Exp<T> {
        self.access_index(0)
    }
    /// Component `y`.
    #[track_caller]
    pub fn y(&self) -> Exp<T> {
        self.access_index(1)
    }
    /// `vecN(v, v, ...)`: every component `v` (WGSL spec §8.3).
    #[track_caller]
    pub fn splat(v: impl IntoExp<T>) -> Self {
        Exp::from_kind(
            ExprKind::Splat(<D<N> as Dim>::SIZE, v.into_exp().node),
            CallSite::caller(),
        )
    }
    /// `e.xy` (WGSL spec §8.5.1.1 "Vector Single Component Selection" and swizzles).
    #[track_caller]
    pub fn xy(&self) -> Exp<Vec2<T>> {
        use naga::SwizzleComponent::{W, X, Y};
        Exp::from_kind(
            ExprKind::Swizzle(naga::VectorSize::Bi, [X, Y, W, W], self.node.clone()),
            CallSite::caller(),
        )
    }
}

impl<T: Scalar> Exp<Vec3<T>> {
    /// Component `z`.
    #[track_caller]
    pub fn z(&self) -> Exp<T> {
        self.access_index(2)
    }
}

impl<T: Scalar> Exp<Vec4<T>> {
    /// Component `z`.
    #[track_caller]
    pub fn z(&self) -> Exp<T> {
        self.access_index(2)
    }
    /// Component `w`.
    #[track_caller]
    pub fn w(&self) -> Exp<T> {
        self.access_index(3)
    }
    /// `e.xyz`.
    #[track_caller]
    pub fn xyz(&self) -> Exp<Vec3<T>> {
        use naga::SwizzleComponent::{W, X, Y, Z};
        Exp::from_kind(
            ExprKind::Swizzle(naga::VectorSize::Tri, [X, Y, Z, W], self.node.clone()),
            CallSite::caller(),
        )
    }
}

/// `vec2<T>(x, y)` (WGSL spec §8.3).
#[track_caller]
pub fn vec2<T: Scalar>(x: impl IntoExp<T>, y: impl IntoExp<T>) -> Exp<Vec2<T>> {
    Exp::from_kind(
        ExprKind::Compose(vec![x.into_exp().node, y.into_exp().node]),
        CallSite::caller(),
    )
}

/// `vec3<T>(x, y, z)` (WGSL spec §8.3).
#[track_caller]
pub fn vec3<T: Scalar>(x: impl IntoExp<T>, y: impl IntoExp<T>, z: impl IntoExp<T>) -> Exp<Vec3<T>> {
    Exp::from_kind(
        ExprKind::Compose(vec![
            x.into_exp().node,
            y.into_exp().node,
            z.into_exp().node,
        ]),
        CallSite::caller(),
    )
}

/// `vec4<T>(x, y, z, w)` (WGSL spec §8.3).
#[track_caller]
pub fn vec4<T: Scalar>(
    x: impl IntoExp<T>,
    y: impl IntoExp<T>,
    z: impl IntoExp<T>,
    w: impl IntoExp<T>,
) -> Exp<Vec4<T>> {
    Exp::from_kind(
        ExprKind::Compose(vec![
            x.into_exp().node,
            y.into_exp().node,
            z.into_exp().node,
            w.into_exp().node,
        ]),
        CallSite::caller(),
    )
}

/// `matCxR<f32>(c0, c1, ...)` from column vectors (WGSL spec §8.3).
#[track_caller]
pub fn mat<const C: usize, const R: usize>(columns: [Exp<Vector<f32, R>>; C]) -> Exp<Mat<C, R>>
where
    D<C>: Dim,
    D<R>: Dim,
{
    Exp::from_kind(
        ExprKind::Compose(columns.into_iter().map(|c| c.node).collect()),
        CallSite::caller(),
    )
}

/// `array<T, N>(e0, e1, ...)` (WGSL spec §8.3).
#[track_caller]
pub fn array<T: Constructible, const N: usize>(elems: [Exp<T>; N]) -> Exp<Array<T, N>> {
    Exp::from_kind(
        ExprKind::Compose(elems.into_iter().map(|c| c.node).collect()),
        CallSite::caller(),
    )
}
