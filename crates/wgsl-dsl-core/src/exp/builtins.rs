//! WGSL's numeric built-in functions (WGSL spec §17.5 "Numeric Built-in Functions") and
//! logical built-ins (§17.3), as typed free functions.
//!
//! Each takes its operands as [`IntoExp`], so `max(x, 0.0)` works for `x: Exp<f32>`. Vector
//! overloads apply componentwise, as in WGSL. Section numbers are those of the WGSL W3C
//! Candidate Recommendation; each function's section has the anchor `#NAME-builtin`
//! (<https://www.w3.org/TR/WGSL/#pow-builtin>).
//!
//! ## Results WGSL leaves undefined
//! Outside a floating-point built-in's *domain* (the domain row of each function in §17.5,
//! and §15.7.7 "Domains of Floating Point Expressions and Built-in Functions"), and wherever a
//! result overflows or is infinite or NaN (the Finite Math Assumption of §15.7.2 "Differences
//! from IEEE-754" (#differences-from-ieee754); §15.7.3 "Floating Point Rounding and
//! Overflow"), the result at run time is an *indeterminate value* (§8.2 "Indeterminate
//! Values" (#indeterminate-values)): any value of the type, possibly different on each GPU,
//! driver or run, and never an error. Each function below says where this applies. With
//! literal arguments the same cases are build errors
//! ([`BuildError::ConstExpression`](crate::BuildError::ConstExpression)), as WGSL makes them
//! shader-creation errors (§8.1.1 "const Expressions" (#const-expr)).
//!
//! Defined alternatives: [`square`] and [`powi`] (integer powers by multiplication, for a base
//! of either sign), [`Exp::to_i32_saturating`] and [`Exp::to_u32_saturating`] (float to
//! integer for every input, NaN included), and clamping the argument into the domain first,
//! e.g. `sqrt(max(x, 0.0))`, `acos(clamp(x, -1.0, 1.0))`, `log(max(x, f32::MIN_POSITIVE))`.

use std::marker::PhantomData;

use super::{Exp, ExprKind, IntoExp, Lit, NodeRef};
use crate::site::CallSite;
use crate::types::*;
use naga::BinaryOperator as B;
use naga::MathFunction as M;

#[track_caller]
pub(super) fn math<O: WgslType>(fun: M, args: Vec<super::NodeRef>) -> Exp<O> {
    Exp::from_kind(ExprKind::Math(fun, args), CallSite::caller())
}

/// Built-ins that are one `Math` expression of their operands, one function each, written as
/// its signature (every operand an `impl IntoExp`) and its `naga::MathFunction`.
///
/// `float vectors:` entries are generic over the float vectors `Vector<T, N>` and name `T` and
/// `N` without declaring them.
macro_rules! math_fns {
    (float vectors: $($(#[$doc:meta])*
        fn $name:ident ($($arg:ident: $arg_ty:ty),+) -> $ret:ty = $fun:ident;
    )*) => {$(
        $(#[$doc])*
        #[track_caller]
        pub fn $name<T: Scalar + Float + Numeric<Elem = T>, const N: usize>(
            $($arg: impl IntoExp<$arg_ty>),+
        ) -> Exp<$ret>
        where
            D<N>: Dim,
        {
            math(M::$fun, vec![$($arg.into_exp().node),+])
        }
    )*};
    ($($(#[$doc:meta])*
        fn $name:ident $(<T: $bound:ident>)? ($($arg:ident: $arg_ty:ty),+) -> $ret:ty = $fun:ident;
    )*) => {$(
        $(#[$doc])*
        #[track_caller]
        pub fn $name $(<T: $bound>)? ($($arg: impl IntoExp<$arg_ty>),+) -> Exp<$ret> {
            math(M::$fun, vec![$($arg.into_exp().node),+])
        }
    )*};
}
pub(super) use math_fns;

/// The built-ins of one operand `e` with the bound `$bound`: `math_fns` for one operand, in a
/// table of their own (`crates/wgsl-dsl/tests/ui/compile_fail/sqrt_of_integer.stderr` quotes this macro).
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
    /// `sign(e)`: -1, 0 or 1 (WGSL spec §17.5.54).
    sign => Sign;
}
unary_fns! { Float:
    /// `exp(e)`: e raised to `e` (WGSL spec §17.5.23).
    ///
    /// **Undefined** where the result overflows (`e` above about 88.72 for `f32`): an
    /// indeterminate value, not necessarily infinity (§15.7.3, §15.7.2).
    exp => Exp;
    /// `exp2(e)`: 2 raised to `e` (WGSL spec §17.5.24).
    ///
    /// **Undefined** where the result overflows (`e >= 128` for `f32`): an indeterminate
    /// value, not necessarily infinity (§15.7.3, §15.7.2).
    exp2 => Exp2;
    /// `log(e)`: natural logarithm (WGSL spec §17.5.39).
    ///
    /// **Undefined** for `e < 0` (outside the domain `[0, +inf]`, §17.5.39, §15.7.7) and for
    /// `e == 0` (the result, -inf, is not finite: §15.7.2): an indeterminate value, not
    /// necessarily NaN or -inf. Defined alternative: `log(max(e, f32::MIN_POSITIVE))`.
    log => Log;
    /// `log2(e)`: base-2 logarithm (WGSL spec §17.5.40).
    ///
    /// **Undefined** for `e <= 0`, as [`log()`] (§17.5.40, §15.7.7, §15.7.2).
    log2 => Log2;
    /// `sqrt(e)` (WGSL spec §17.5.58).
    ///
    /// **Undefined** for `e < 0` (outside the domain `[0, +inf]`, §17.5.58, §15.7.7): an
    /// indeterminate value, not necessarily NaN. Defined alternative: `sqrt(max(e, 0.0))`.
    sqrt => Sqrt;
    /// `inverseSqrt(e)`: `1 / sqrt(e)` (WGSL spec §17.5.36).
    ///
    /// **Undefined** for `e < 0` (outside the domain, §17.5.36, §15.7.7) and for `e == 0` (the
    /// result, +inf, is not finite: §15.7.2). Defined alternative: `inverse_sqrt(max(e, eps))`
    /// with the smallest `eps > 0` that suits the data.
    inverse_sqrt => InverseSqrt;
    /// `sin(e)`, radians (WGSL spec §17.5.55).
    sin => Sin;
    /// `cos(e)`, radians (WGSL spec §17.5.11).
    cos => Cos;
    /// `tan(e)` (WGSL spec §17.5.60).
    tan => Tan;
    /// `asin(e)` (WGSL spec §17.5.4).
    ///
    /// **Undefined** for `|e| > 1` (outside the domain `[-1, 1]`, §17.5.4, §15.7.7). Defined
    /// alternative: `asin(clamp(e, -1.0, 1.0))`.
    asin => Asin;
    /// `acos(e)` (WGSL spec §17.5.2).
    ///
    /// **Undefined** for `|e| > 1` (outside the domain `[-1, 1]`, §17.5.2, §15.7.7). Defined
    /// alternative: `acos(clamp(e, -1.0, 1.0))`.
    acos => Acos;
    /// `atan(e)` (WGSL spec §17.5.6).
    atan => Atan;
    /// `sinh(e)` (WGSL spec §17.5.56).
    ///
    /// **Undefined** where the result overflows (`|e|` above about 89.4 for `f32`): §15.7.3,
    /// §15.7.2.
    sinh => Sinh;
    /// `cosh(e)` (WGSL spec §17.5.12).
    ///
    /// **Undefined** where the result overflows (`|e|` above about 89.4 for `f32`): §15.7.3,
    /// §15.7.2.
    cosh => Cosh;
    /// `tanh(e)` (WGSL spec §17.5.61).
    tanh => Tanh;
    /// `asinh(e)` (WGSL spec §17.5.5).
    asinh => Asinh;
    /// `acosh(e)` (WGSL spec §17.5.3).
    ///
    /// **Undefined** for `e < 1` (outside the domain `[1, +inf]`, §17.5.3, §15.7.7). Defined
    /// alternative: `acosh(max(e, 1.0))`.
    acosh => Acosh;
    /// `atanh(e)` (WGSL spec §17.5.7).
    ///
    /// **Undefined** for `|e| > 1` (outside the domain, §17.5.7, §15.7.7) and for `|e| == 1`
    /// (the result is infinite: §15.7.2).
    atanh => Atanh;
    /// `floor(e)` (WGSL spec §17.5.31).
    floor => Floor;
    /// `ceil(e)` (WGSL spec §17.5.9).
    ceil => Ceil;
    /// `round(e)`: to nearest, ties to even (WGSL spec §17.5.52).
    round => Round;
    /// `trunc(e)` (WGSL spec §17.5.63).
    trunc => Trunc;
    /// `fract(e)`: `e - floor(e)` (WGSL spec §17.5.33).
    fract => Fract;
    /// `saturate(e)`: `clamp(e, 0, 1)` (WGSL spec §17.5.53).
    saturate => Saturate;
    /// `radians(e)` (WGSL spec §17.5.48).
    radians => Radians;
    /// `degrees(e)` (WGSL spec §17.5.17).
    degrees => Degrees;
}
unary_fns! { Integer:
    /// `countOneBits(e)` (WGSL spec §17.5.14).
    count_one_bits => CountOneBits;
    /// `countLeadingZeros(e)` (WGSL spec §17.5.13).
    count_leading_zeros => CountLeadingZeros;
    /// `countTrailingZeros(e)` (WGSL spec §17.5.15).
    count_trailing_zeros => CountTrailingZeros;
    /// `firstLeadingBit(e)` (WGSL spec §17.5.28, §17.5.29).
    first_leading_bit => FirstLeadingBit;
    /// `firstTrailingBit(e)` (WGSL spec §17.5.30).
    first_trailing_bit => FirstTrailingBit;
    /// `reverseBits(e)` (WGSL spec §17.5.51).
    reverse_bits => ReverseBits;
}

math_fns! {
    /// `min(a, b)` (WGSL spec §17.5.42).
    fn min<T: Numeric>(a: T, b: T) -> T = Min;
    /// `max(a, b)` (WGSL spec §17.5.41).
    fn max<T: Numeric>(a: T, b: T) -> T = Max;
    /// `clamp(e, low, high)` (WGSL spec §17.5.10).
    fn clamp<T: Numeric>(e: T, low: T, high: T) -> T = Clamp;
    /// `pow(base, exponent)` (WGSL spec §17.5.46), computed by GPUs as
    /// `exp2(exponent * log2(base))`.
    ///
    /// **Undefined** for a negative `base`, whatever the exponent, even an integer one
    /// (`pow(-2.0, 2.0)` need not be 4), for `base == 0` with `exponent <= 0`, for `base == 1`
    /// with an infinite exponent and for an infinite base with exponent 0 (outside the domain,
    /// §17.5.46, §15.7.7), and where the result overflows (§15.7.3, §15.7.2). Defined
    /// alternatives for integer exponents: [`square`] and [`powi`], right in sign for a base of
    /// either sign.
    fn pow<T: Float>(base: T, exponent: T) -> T = Pow;
    /// `atan2(y, x)` (WGSL spec §17.5.8).
    ///
    /// Its error is **unbounded** at the origin `(0, 0)`, and for subnormal `x` or infinite `y`
    /// (§17.5.8; accuracy §15.7.4).
    fn atan2<T: Float>(y: T, x: T) -> T = Atan2;
    /// `step(edge, x)`: 1.0 if `edge <= x`, else 0.0 (WGSL spec §17.5.59).
    fn step<T: Float>(edge: T, x: T) -> T = Step;
    /// `mix(a, b, t)`: `a * (1 - t) + b * t` (WGSL spec §17.5.43).
    fn mix<T: Float>(a: T, b: T, t: T) -> T = Mix;
    /// `smoothstep(low, high, x)`: Hermite interpolation (WGSL spec §17.5.57).
    ///
    /// **Undefined** when `low == high` (a division by zero, §17.5.57, §15.7.2); with literal
    /// edges a build error.
    fn smoothstep<T: Float>(low: T, high: T, x: T) -> T = SmoothStep;
    /// `fma(a, b, c)`: `a * b + c` (WGSL spec §17.5.32).
    fn fma<T: Float>(a: T, b: T, c: T) -> T = Fma;
}
/// `e * e`: the square of `e`, defined for every finite `e` of either sign (a multiplication,
/// WGSL spec §8.7 "Arithmetic Expressions" (#arithmetic-expr), correctly rounded: §15.7.4),
/// where `pow(e, 2.0)` is undefined for a negative `e` (see [`pow`]). Integers wrap on
/// overflow, as `*` does (§8.7); a float result beyond the type's range is undefined
/// (§15.7.3). Componentwise on vectors.
#[track_caller]
pub fn square<T: Numeric>(e: impl IntoExp<T>) -> Exp<T> {
    powi(e, 2)
}

/// `e` raised to the integer power `n` (a Rust constant), by multiplication: repeated squaring,
/// at most `2 * log2(n)` multiplications (`powi(e, 3)` is `e * (e * e)`), each correctly rounded
/// for floats (WGSL spec §8.7, §15.7.4), so the result is within about `2 * log2(n)` ULP of the
/// exact power for every `e` of either sign whose power is finite, where [`pow`] is undefined
/// for a negative base. `powi(e, 0)` is 1 for every `e` and `powi(e, 1)` is `e`. Integers wrap
/// on overflow, as `*` does (§8.7); a float result beyond the type's range is undefined
/// (§15.7.3). For a negative power divide: `1.0 / powi(e, n)`. Componentwise on vectors.
#[track_caller]
pub fn powi<T: Numeric>(e: impl IntoExp<T>, n: u32) -> Exp<T> {
    let site = CallSite::caller();
    let e = e.into_exp();
    if n == 0 {
        return one::<T>(site);
    }
    let mul = |a: &NodeRef, b: &NodeRef| {
        Exp::<T>::from_kind(ExprKind::Binary(B::Multiply, a.clone(), b.clone()), site).node
    };
    // Binary exponentiation: `power` is e^(2^k), `result` the product of the powers whose bit
    // is set in the bits of n seen so far.
    let mut power = e.node;
    let mut result: Option<NodeRef> = None;
    let mut n = n;
    loop {
        if n & 1 == 1 {
            result = Some(match &result {
                Some(r) => mul(r, &power),
                None => power.clone(),
            });
        }
        n >>= 1;
        if n == 0 {
            break;
        }
        power = mul(&power, &power);
    }
    Exp {
        node: result.unwrap_or(power),
        _t: PhantomData,
    }
}

/// The value 1 of the numeric type `T`: a literal, splat for a vector.
fn one<T: Numeric>(site: CallSite) -> Exp<T> {
    let lit = match <T::Elem as Scalar>::SCALAR {
        ScalarTy::I32 => Lit::I32(1),
        ScalarTy::U32 => Lit::U32(1),
        ScalarTy::F32 => Lit::F32(1.0),
        ScalarTy::F16 => Lit::F16(0x3c00),
        ScalarTy::Bool => Lit::Bool(true),
    };
    let scalar = Exp::<T::Elem>::from_kind(ExprKind::Literal(lit), site);
    match T::ty() {
        Ty::Vector(n, _) => {
            let size = match n {
                2 => naga::VectorSize::Bi,
                3 => naga::VectorSize::Tri,
                _ => naga::VectorSize::Quad,
            };
            Exp::from_kind(ExprKind::Splat(size, scalar.node), site)
        }
        _ => Exp {
            node: scalar.node,
            _t: PhantomData,
        },
    }
}

/// `dot(a, b)` (WGSL spec §17.5.20).
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
math_fns! {
    /// `cross(a, b)` (WGSL spec §17.5.16).
    fn cross(a: Vec3<f32>, b: Vec3<f32>) -> Vec3<f32> = Cross;
    /// `length(e)` (WGSL spec §17.5.38), computed as `sqrt(dot(e, e))`.
    ///
    /// **Undefined** where `dot(e, e)` overflows (components above about 1.8e19 for `f32`):
    /// §15.7.4 (accuracy inherited from `sqrt(dot(e, e))`), §15.7.2.
    fn length<T: Float>(e: T) -> T::Elem = Length;
    /// `distance(a, b)`: `length(a - b)` (WGSL spec §17.5.19). **Undefined** where [`length`]
    /// is.
    fn distance<T: Float>(a: T, b: T) -> T::Elem = Distance;
}
math_fns! { float vectors:
    /// `normalize(e)` (WGSL spec §17.5.45). Vectors only.
    ///
    /// **Undefined** for the zero vector (outside the domain, §17.5.45, §15.7.7), and where
    /// [`length`] is.
    fn normalize(e: Vector<T, N>) -> Vector<T, N> = Normalize;
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
math_fns! {
    /// `extractBits(e, offset, count)` (WGSL spec §17.5.25, §17.5.26): sign-extending for `i32`.
    fn extract_bits<T: Integer>(e: T, offset: u32, count: u32) -> T = ExtractBits;
    /// `insertBits(e, newbits, offset, count)` (WGSL spec §17.5.35).
    fn insert_bits<T: Integer>(e: T, newbits: T, offset: u32, count: u32) -> T = InsertBits;
}
/// `select(reject, accept, condition)` in WGSL's argument order (WGSL spec §17.3.2).
///
/// Eager, as in WGSL: `reject` and `accept` are both evaluated whatever `condition`, so
/// `select(0.0, x.at(&i).load(), i.lt(n))` reads `x[i]` for every `i`, and the interpreter
/// reports the reads past the end of `x` even though their values are discarded (a GPU's
/// robust access, WGSL spec §14.5, hides them). To read only where the condition holds, use
/// [`KernelBuilder::if_value`](crate::KernelBuilder::if_value) (a branch when an arm loads;
/// in `#[kernel]`, `if i < n { x[i] } else { 0.0 }`) or `&&` ([`Exp::and`](crate::Exp::and)).
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
