//! Built-ins that split or build floating-point numbers (WGSL spec §17.5 "Numeric Built-in
//! Functions": `modf`, `frexp`, `ldexp`; anchors `#modf-builtin` ...), with their struct results as DSL values:
//! [`ModfResult<T>`] (`.fract()`, `.whole()`) and [`FrexpResult<T>`] (`.fract()`, `.exp()`),
//! naga's predeclared `__modf_result_*` and `__frexp_result_*` types.

use std::marker::PhantomData;

use super::{Exp, ExprKind, IntoExp};
use crate::site::CallSite;
use crate::types::*;
use naga::MathFunction as M;

/// Floating-point scalars and vectors with the integer type of the same shape (`i32` for
/// `f32`, `vecN<i32>` for `vecN<f32>`): the exponents of [`frexp`] and [`ldexp`].
pub trait FloatShape: Float + ScalarOrVector {
    /// `i32` or `vecN<i32>`.
    type Int: ScalarOrVector;
}
impl FloatShape for f32 {
    type Int = i32;
}
#[cfg(feature = "f16")]
impl FloatShape for half::f16 {
    type Int = i32;
}
impl<T: Scalar + Float + Numeric<Elem = T>, const N: usize> FloatShape for Vector<T, N>
where
    D<N>: Dim,
    Vector<i32, N>: ScalarOrVector,
{
    type Int = Vector<i32, N>;
}

/// Name prefixes of the predeclared result structs: lowering makes them naga's.
pub(crate) const MODF_RESULT: &str = "__modf_result";
pub(crate) const FREXP_RESULT: &str = "__frexp_result";

/// The result of [`modf`]: `fract` and `whole` parts, each of type `T` (WGSL spec §17.5, `modf`).
#[derive(Debug)]
pub struct ModfResult<T>(PhantomData<T>);

/// The result of [`frexp`]: the fraction (`T`) and the exponent (`i32` or `vecN<i32>`)
/// (WGSL spec §17.5, `frexp`).
#[derive(Debug)]
pub struct FrexpResult<T>(PhantomData<T>);

impl<T: FloatShape> WgslType for ModfResult<T> {
    fn ty() -> Ty {
        Ty::Struct {
            name: MODF_RESULT,
            members: vec![("fract", T::ty()), ("whole", T::ty())],
        }
    }
}
impl<T: FloatShape> Constructible for ModfResult<T> {}

impl<T: FloatShape> WgslType for FrexpResult<T>
where
    T::Int: WgslType,
{
    fn ty() -> Ty {
        Ty::Struct {
            name: FREXP_RESULT,
            members: vec![("fract", T::ty()), ("exp", T::Int::ty())],
        }
    }
}
impl<T: FloatShape> Constructible for FrexpResult<T> {}

impl<T: FloatShape> Exp<ModfResult<T>> {
    /// The fractional part, with the sign of the argument (`e - trunc(e)`).
    #[track_caller]
    pub fn fract(&self) -> Exp<T> {
        self.access_index(0)
    }

    /// The whole part, `trunc(e)`.
    #[track_caller]
    pub fn whole(&self) -> Exp<T> {
        self.access_index(1)
    }
}

impl<T: FloatShape> Exp<FrexpResult<T>> {
    /// The fraction, of magnitude in `[0.5, 1)` (0 for 0).
    #[track_caller]
    pub fn fract(&self) -> Exp<T> {
        self.access_index(0)
    }

    /// The exponent: `e = fract * 2^exp`.
    #[track_caller]
    pub fn exp(&self) -> Exp<T::Int> {
        self.access_index(1)
    }
}

/// `modf(e)`: `e` split into its fractional and whole parts, both with `e`'s sign (WGSL spec
/// §17.5, `modf`).
#[track_caller]
pub fn modf<T: FloatShape>(e: impl IntoExp<T>) -> Exp<ModfResult<T>> {
    Exp::from_kind(
        ExprKind::Math(M::Modf, vec![e.into_exp().node]),
        CallSite::caller(),
    )
}

/// `frexp(e)`: `e = fract * 2^exp` with `|fract|` in `[0.5, 1)`, or both 0 for 0 (WGSL spec
/// §17.5, `frexp`).
#[track_caller]
pub fn frexp<T: FloatShape>(e: impl IntoExp<T>) -> Exp<FrexpResult<T>>
where
    T::Int: WgslType,
{
    Exp::from_kind(
        ExprKind::Math(M::Frexp, vec![e.into_exp().node]),
        CallSite::caller(),
    )
}

/// `ldexp(e1, e2)`: `e1 * 2^e2` (WGSL spec §17.5.37 (#ldexp-builtin)).
///
/// **Undefined** where the result overflows `T` (§15.7.3, the Finite Math Assumption of
/// §15.7.2: an indeterminate value, §8.2, not necessarily infinity) and where `e2` is above the
/// exponent bias + 1 (128 for `f32`, 16 for `f16`; §17.5.37); with literal arguments those are
/// build errors, as WGSL makes them shader-creation errors. The result may be 0 where
/// `e2 + bias <= 0` (127 for `f32`: subnormal results may be flushed).
#[track_caller]
pub fn ldexp<T: FloatShape>(e1: impl IntoExp<T>, e2: impl IntoExp<T::Int>) -> Exp<T> {
    Exp::from_kind(
        ExprKind::Math(M::Ldexp, vec![e1.into_exp().node, e2.into_exp().node]),
        CallSite::caller(),
    )
}
