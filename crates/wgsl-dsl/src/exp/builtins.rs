//! WGSL's numeric built-in functions (WGSL spec §17.5 "Numeric Built-in Functions") and
//! logical built-ins (§17.3), as typed free functions.
//!
//! Each takes its operands as [`IntoExp`], so `max(x, 0.0)` works for `x: Exp<f32>`. Vector
//! overloads apply componentwise, as in WGSL.

use super::{Exp, ExprKind, IntoExp};
use crate::site::CallSite;
use crate::types::*;
use naga::MathFunction as M;

#[track_caller]
fn math<O: WgslType>(fun: M, args: Vec<super::NodeRef>) -> Exp<O> {
    Exp::from_kind(ExprKind::Math(fun, args), CallSite::caller())
}

macro_rules! unary_fns {
    ($bound:ident: $($(#[$doc:meta])* $name:ident => $fun:ident;)*) => {$(
        $(#[$doc])*
        #[track_caller]
        pub fn $name<T: $bound>(e: impl IntoExp<T>) -> Exp<T> {
            math(M::$fun, vec![e.into_exp().node])
        }
    )*};
}

unary_fns! { Numeric:
    /// `abs(e)` (WGSL spec §17.5.1). For `i32::MIN` the result is `i32::MIN`.
    abs => Abs;
}
unary_fns! { Signed:
    /// `sign(e)`: -1, 0 or 1 (WGSL spec §17.5.52).
    sign => Sign;
}
unary_fns! { Float:
    /// `exp(e)`: e raised to `e` (WGSL spec §17.5.24).
    exp => Exp;
    /// `exp2(e)` (WGSL spec §17.5.25).
    exp2 => Exp2;
    /// `log(e)`: natural logarithm (WGSL spec §17.5.38).
    log => Log;
    /// `log2(e)` (WGSL spec §17.5.39).
    log2 => Log2;
    /// `sqrt(e)` (WGSL spec §17.5.57).
    sqrt => Sqrt;
    /// `inverseSqrt(e)`: `1 / sqrt(e)` (WGSL spec §17.5.33).
    inverse_sqrt => InverseSqrt;
    /// `sin(e)`, radians (WGSL spec §17.5.53).
    sin => Sin;
    /// `cos(e)`, radians (WGSL spec §17.5.15).
    cos => Cos;
    /// `tan(e)` (WGSL spec §17.5.60).
    tan => Tan;
    /// `asin(e)` (WGSL spec §17.5.5).
    asin => Asin;
    /// `acos(e)` (WGSL spec §17.5.2).
    acos => Acos;
    /// `atan(e)` (WGSL spec §17.5.7).
    atan => Atan;
    /// `sinh(e)` (WGSL spec §17.5.54).
    sinh => Sinh;
    /// `cosh(e)` (WGSL spec §17.5.16).
    cosh => Cosh;
    /// `tanh(e)` (WGSL spec §17.5.61).
    tanh => Tanh;
    /// `asinh(e)` (WGSL spec §17.5.6).
    asinh => Asinh;
    /// `acosh(e)` (WGSL spec §17.5.3).
    acosh => Acosh;
    /// `atanh(e)` (WGSL spec §17.5.9).
    atanh => Atanh;
    /// `floor(e)` (WGSL spec §17.5.28).
    floor => Floor;
    /// `ceil(e)` (WGSL spec §17.5.12).
    ceil => Ceil;
    /// `round(e)`: to nearest, ties to even (WGSL spec §17.5.50).
    round => Round;
    /// `trunc(e)` (WGSL spec §17.5.63).
    trunc => Trunc;
    /// `fract(e)`: `e - floor(e)` (WGSL spec §17.5.30).
    fract => Fract;
    /// `saturate(e)`: `clamp(e, 0, 1)` (WGSL spec §17.5.51).
    saturate => Saturate;
    /// `radians(e)` (WGSL spec §17.5.48).
    radians => Radians;
    /// `degrees(e)` (WGSL spec §17.5.17).
    degrees => Degrees;
}
unary_fns! { Integer:
    /// `countOneBits(e)` (WGSL spec §17.5.18).
    count_one_bits => CountOneBits;
    /// `countLeadingZeros(e)` (WGSL spec §17.5.19).
    count_leading_zeros => CountLeadingZeros;
    /// `countTrailingZeros(e)` (WGSL spec §17.5.20).
    count_trailing_zeros => CountTrailingZeros;
    /// `firstLeadingBit(e)` (WGSL spec §17.5.26, §17.5.27).
    first_leading_bit => FirstLeadingBit;
    /// `firstTrailingBit(e)` (WGSL spec §17.5.29).
    first_trailing_bit => FirstTrailingBit;
    /// `reverseBits(e)` (WGSL spec §17.5.49).
    reverse_bits => ReverseBits;
}

/// `min(a, b)` (WGSL spec §17.5.41).
#[track_caller]
pub fn min<T: Numeric>(a: impl IntoExp<T>, b: impl IntoExp<T>) -> Exp<T> {
    math(M::Min, vec![a.into_exp().node, b.into_exp().node])
}
/// `max(a, b)` (WGSL spec §17.5.40).
#[track_caller]
pub fn max<T: Numeric>(a: impl IntoExp<T>, b: impl IntoExp<T>) -> Exp<T> {
    math(M::Max, vec![a.into_exp().node, b.into_exp().node])
}
/// `clamp(e, low, high)` (WGSL spec §17.5.13).
#[track_caller]
pub fn clamp<T: Numeric>(
    e: impl IntoExp<T>,
    low: impl IntoExp<T>,
    high: impl IntoExp<T>,
) -> Exp<T> {
    math(
        M::Clamp,
        vec![e.into_exp().node, low.into_exp().node, high.into_exp().node],
    )
}
/// `pow(base, exponent)` (WGSL spec §17.5.47).
#[track_caller]
pub fn pow<T: Float>(base: impl IntoExp<T>, exponent: impl IntoExp<T>) -> Exp<T> {
    math(M::Pow, vec![base.into_exp().node, exponent.into_exp().node])
}
/// `atan2(y, x)` (WGSL spec §17.5.8).
#[track_caller]
pub fn atan2<T: Float>(y: impl IntoExp<T>, x: impl IntoExp<T>) -> Exp<T> {
    math(M::Atan2, vec![y.into_exp().node, x.into_exp().node])
}
/// `step(edge, x)`: 1.0 if `edge <= x`, else 0.0 (WGSL spec §17.5.56).
#[track_caller]
pub fn step<T: Float>(edge: impl IntoExp<T>, x: impl IntoExp<T>) -> Exp<T> {
    math(M::Step, vec![edge.into_exp().node, x.into_exp().node])
}
/// `mix(a, b, t)`: `a * (1 - t) + b * t` (WGSL spec §17.5.42).
#[track_caller]
pub fn mix<T: Float>(a: impl IntoExp<T>, b: impl IntoExp<T>, t: impl IntoExp<T>) -> Exp<T> {
    math(
        M::Mix,
        vec![a.into_exp().node, b.into_exp().node, t.into_exp().node],
    )
}
/// `smoothstep(low, high, x)`: Hermite interpolation (WGSL spec §17.5.55).
#[track_caller]
pub fn smoothstep<T: Float>(
    low: impl IntoExp<T>,
    high: impl IntoExp<T>,
    x: impl IntoExp<T>,
) -> Exp<T> {
    math(
        M::SmoothStep,
        vec![low.into_exp().node, high.into_exp().node, x.into_exp().node],
    )
}
/// `fma(a, b, c)`: `a * b + c` (WGSL spec §17.5.31).
#[track_caller]
pub fn fma<T: Float>(a: impl IntoExp<T>, b: impl IntoExp<T>, c: impl IntoExp<T>) -> Exp<T> {
    math(
        M::Fma,
        vec![a.into_exp().node, b.into_exp().node, c.into_exp().node],
    )
}
/// `dot(a, b)` (WGSL spec §17.5.22).
#[track_caller]
pub fn dot<T: Scalar + Numeric<Elem = T>, const N: usize>(
    a: impl IntoExp<Vector<T, N>>,
    b: impl IntoExp<Vector<T, N>>,
) -> Exp<T>
where
    D<N>: Dim,
{
    math(M::Dot, vec![a.into_exp().node, b.into_exp().node])
}
/// `cross(a, b)` (WGSL spec §17.5.14).
#[track_caller]
pub fn cross(a: impl IntoExp<Vec3<f32>>, b: impl IntoExp<Vec3<f32>>) -> Exp<Vec3<f32>> {
    math(M::Cross, vec![a.into_exp().node, b.into_exp().node])
}
/// `length(e)` (WGSL spec §17.5.36).
#[track_caller]
pub fn length<T: Float>(e: impl IntoExp<T>) -> Exp<T::Elem> {
    math(M::Length, vec![e.into_exp().node])
}
/// `distance(a, b)`: `length(a - b)` (WGSL spec §17.5.21).
#[track_caller]
pub fn distance<T: Float>(a: impl IntoExp<T>, b: impl IntoExp<T>) -> Exp<T::Elem> {
    math(M::Distance, vec![a.into_exp().node, b.into_exp().node])
}
/// `normalize(e)` (WGSL spec §17.5.45). Vectors only.
#[track_caller]
pub fn normalize<T: Scalar + Float + Numeric<Elem = T>, const N: usize>(
    e: impl IntoExp<Vector<T, N>>,
) -> Exp<Vector<T, N>>
where
    D<N>: Dim,
{
    math(M::Normalize, vec![e.into_exp().node])
}
/// `transpose(m)` (WGSL spec §17.5.62).
#[track_caller]
pub fn transpose<const C: usize, const R: usize>(m: impl IntoExp<Mat<C, R>>) -> Exp<Mat<R, C>>
where
    D<C>: Dim,
    D<R>: Dim,
{
    math(M::Transpose, vec![m.into_exp().node])
}
/// `extractBits(e, offset, count)` (WGSL spec §17.5.23): sign-extending for `i32`.
#[track_caller]
pub fn extract_bits<T: Integer>(
    e: impl IntoExp<T>,
    offset: impl IntoExp<u32>,
    count: impl IntoExp<u32>,
) -> Exp<T> {
    math(
        M::ExtractBits,
        vec![
            e.into_exp().node,
            offset.into_exp().node,
            count.into_exp().node,
        ],
    )
}
/// `insertBits(e, newbits, offset, count)` (WGSL spec §17.5.32).
#[track_caller]
pub fn insert_bits<T: Integer>(
    e: impl IntoExp<T>,
    newbits: impl IntoExp<T>,
    offset: impl IntoExp<u32>,
    count: impl IntoExp<u32>,
) -> Exp<T> {
    math(
        M::InsertBits,
        vec![
            e.into_exp().node,
            newbits.into_exp().node,
            offset.into_exp().node,
            count.into_exp().node,
        ],
    )
}
/// `select(reject, accept, condition)` in WGSL's argument order (WGSL spec §17.3.2).
#[track_caller]
pub fn select<T: ScalarOrVector>(
    reject: impl IntoExp<T>,
    accept: impl IntoExp<T>,
    condition: impl IntoExp<bool>,
) -> Exp<T> {
    Exp::from_kind(
        ExprKind::Select {
            condition: condition.into_exp().node,
            accept: accept.into_exp().node,
            reject: reject.into_exp().node,
        },
        CallSite::caller(),
    )
}

pub use super::decompose::{FloatShape, FrexpResult, ModfResult, frexp, ldexp, modf};
pub use super::packing::*;
