//! `std::ops` for [`Exp`]: arithmetic (WGSL spec §8.7), bit operations (§8.9) and unary
//! operators, exactly where WGSL allows the operand types.
//!
//! ## Defined and undefined results
//! - Integers (`i32`, `u32`), WGSL spec §8.7 "Arithmetic Expressions" (#arithmetic-expr):
//!   `+`, `-`, `*` wrap modulo 2^32; `e / 0` is `e` and `e % 0` is 0; `i32::MIN / -1` is
//!   `i32::MIN` and `i32::MIN % -1` is 0 (Rust panics on all four); `%` has the sign of `e`.
//!   Shifts (§8.9 "Bit Expressions" (#bit-expr)) use the amount modulo 32 (`x << 33` is
//!   `x << 1`, where Rust panics in debug builds); `<<` drops the bits shifted out, also of
//!   `i32`; `>>` of an `i32` copies the sign bit. All defined at run time; with literal operands
//!   the division and remainder cases above, a shift by 32 or more and a `<<` that shifts out
//!   a set bit (for `i32`, one that differs from the sign bit) are build errors ([`BuildError::ConstExpression`](crate::BuildError::ConstExpression)),
//!   as WGSL makes them shader-creation errors (§8.1.1 "const Expressions").
//! - Floats: a result that overflows, or is infinite or NaN, is **undefined** at run time (an
//!   indeterminate value, §8.2; the Finite Math Assumption, §15.7.2 "Differences from
//!   IEEE-754" (#differences-from-ieee754); §15.7.3), which covers `x / 0.0` and `0.0 / 0.0`;
//!   `x % y` is `x - y * trunc(x / y)` (§8.7), undefined for `y == 0` (§15.7.2). Guard a
//!   divisor that can be zero, e.g. `x / max(y, eps)` or a `select`.
//!
//! `Exp<L> op R` is implemented once per operator, for every right operand `R` that implements
//! the operator's operand trait for `L` ([`AddOperand<L>`], [`MulOperand<L>`], ...). The operand
//! traits list WGSL's typing rules (same type; a vector and its scalar; the matrix products),
//! and an operand WGSL does not allow is reported through them: `Exp<f32> + Exp<u32>` reads
//! "cannot add `Exp<u32>` to `Exp<f32>`", with the conversions to write.

use std::ops::{Add, BitAnd, BitOr, BitXor, Div, Mul, Neg, Not, Rem, Shl, Shr, Sub};

use naga::BinaryOperator as B;

use super::{Exp, ExprKind, NodeRef};
use crate::site::CallSite;
use crate::types::*;

#[track_caller]
fn bin<O: WgslType>(op: B, a: NodeRef, b: NodeRef) -> Exp<O> {
    Exp::from_kind(ExprKind::Binary(op, a, b), CallSite::caller())
}

#[track_caller]
fn lit_node<T: super::Literal>(v: T) -> NodeRef {
    super::lit(v).node
}

/// The typing rules behind the operand traits: `R: Operand<L, AddOp>` where WGSL adds `R` to
/// an `L`. One trait with a marker per operator, so that each operand trait has one blanket
/// impl and its error message does not list the rules' impls.
#[doc(hidden)]
pub trait Operand<L, Op> {
    /// The result's type.
    type Output: WgslType;
    #[track_caller]
    fn node(self) -> NodeRef;
}

macro_rules! operand_trait {
    ($(#[$doc:meta])* $Trait:ident $Marker:ident, $msg:literal, $label:literal) => {
        #[doc(hidden)]
        #[derive(Debug)]
        pub struct $Marker;
        $(#[$doc])*
        #[diagnostic::on_unimplemented(
            message = $msg,
            label = $label,
            note = "WGSL converts nothing implicitly: convert one operand with `.to_f32()`, `.to_i32()` or `.to_u32()` (in `#[kernel]`: `x as f32`), or `.bitcast::<T>()` to reinterpret its bits",
            note = "a Rust literal operand is of the other operand's scalar type: `x + 2.0` (not `x + 2`) with an `f32`; a `Place` operand is read with `.load()`"
        )]
        pub trait $Trait<L> {
            /// The result's type.
            type Output: WgslType;
            #[doc(hidden)]
            #[track_caller]
            fn operand(self) -> NodeRef;
        }
        #[diagnostic::do_not_recommend]
        impl<L, R: Operand<L, $Marker>> $Trait<L> for R {
            type Output = R::Output;
            fn operand(self) -> NodeRef {
                self.node()
            }
        }
    };
}

operand_trait!(
    /// Right operands of `Exp<L> + R` (WGSL spec §8.7): `Exp<L>` for a scalar or vector `L`,
    /// a scalar and a vector of it either way round, matrices of one shape, Rust literals.
    AddOperand AddOp,
    "cannot add `{Self}` to `wgsl_dsl::Exp<{L}>`",
    "WGSL adds values of one type (or a vector and its scalar)"
);
operand_trait!(
    /// Right operands of `Exp<L> - R` (WGSL spec §8.7), as for [`AddOperand`].
    SubOperand SubOp,
    "cannot subtract `{Self}` from `wgsl_dsl::Exp<{L}>`",
    "WGSL subtracts values of one type (or a vector and its scalar)"
);
operand_trait!(
    /// Right operands of `Exp<L> * R` (WGSL spec §8.7, §8.7.4): as for [`AddOperand`], plus
    /// matrix times scalar, vector or matrix of matching sizes.
    MulOperand MulOp,
    "cannot multiply `wgsl_dsl::Exp<{L}>` by `{Self}`",
    "WGSL multiplies values of one type, a vector or matrix by its scalar, or matrices and vectors of matching sizes"
);
operand_trait!(
    /// Right operands of `Exp<L> / R` (WGSL spec §8.7), as for [`AddOperand`] without matrices.
    ///
    /// Integers: defined for every operand, `e / 0` is `e` and `i32::MIN / -1` is `i32::MIN`
    /// (§8.7; a build error with literal operands). Floats: a result that is infinite or NaN,
    /// as `x / 0.0` gives, is **undefined** (an indeterminate value: §15.7.2, §8.2).
    DivOperand DivOp,
    "cannot divide `wgsl_dsl::Exp<{L}>` by `{Self}`",
    "WGSL divides values of one type (or a vector and its scalar)"
);
operand_trait!(
    /// Right operands of `Exp<L> % R` (WGSL spec §8.7), as for [`DivOperand`].
    ///
    /// Integers: the sign of `e`, and defined for every operand: `e % 0` is 0 and
    /// `i32::MIN % -1` is 0 (§8.7; a build error with literal operands). Floats:
    /// `x - y * trunc(x / y)`, **undefined** for `y == 0` (§8.7, §15.7.2).
    RemOperand RemOp,
    "cannot compute the remainder of `wgsl_dsl::Exp<{L}>` by `{Self}`",
    "WGSL's `%` takes values of one type (or a vector and its scalar)"
);
operand_trait!(
    /// Right operands of `Exp<L> & R`, `|`, `^` (WGSL spec §8.9): integers of the same type.
    BitOperand BitOp,
    "cannot combine the bits of `wgsl_dsl::Exp<{L}>` and `{Self}`",
    "WGSL's `&`, `|` and `^` take integers (or `bool`s for `&`, `|`) of one type"
);
operand_trait!(
    /// Shift amounts of `Exp<L> << R`, `>>` (WGSL spec §8.9): unsigned, of `L`'s shape.
    ///
    /// Defined for every amount: it is taken modulo the bit width, 32 (`x << 33` is `x << 1`);
    /// `>>` of an `i32` copies the sign bit. With literal operands a shift by 32 or more, or a
    /// `<<` that shifts out a set bit (for `i32`, one that differs from the sign bit), is a
    /// build error (§8.9).
    ShiftOperand ShiftOp,
    "cannot shift `wgsl_dsl::Exp<{L}>` by `{Self}`",
    "WGSL shift amounts are `u32` (or `vecN<u32>` for vectors)"
);

/// `impl $Trait<$L> for Exp<$R>` and `&Exp<$R>`, giving `$O`.
macro_rules! operand {
    ([$($gen:tt)*] $Marker:ident; $L:ty, $R:ty => $O:ty $(where $($w:tt)*)?) => {
        impl<$($gen)*> Operand<$L, $Marker> for Exp<$R> $(where $($w)*)? {
            type Output = $O;
            fn node(self) -> NodeRef { self.node }
        }
        impl<$($gen)*> Operand<$L, $Marker> for &Exp<$R> $(where $($w)*)? {
            type Output = $O;
            fn node(self) -> NodeRef { self.node.clone() }
        }
    };
}

/// Rust literals as right operands: `impl $Trait<$L> for $S`, giving `$O`.
macro_rules! literal_operand {
    ([$($gen:tt)*] $Marker:ident; $L:ty, $S:ty => $O:ty $(where $($w:tt)*)?) => {
        impl<$($gen)*> Operand<$L, $Marker> for $S $(where $($w)*)? {
            type Output = $O;
            #[track_caller]
            fn node(self) -> NodeRef { lit_node(self) }
        }
    };
}

/// `impl $Op<R> for Exp<L>` and `&Exp<L>` for every `R: $Trait<L>`.
macro_rules! operator {
    ($Op:ident $method:ident $Trait:ident $op:expr) => {
        impl<L: WgslType, R: $Trait<L>> $Op<R> for Exp<L> {
            type Output = Exp<R::Output>;
            #[track_caller]
            fn $method(self, rhs: R) -> Exp<R::Output> {
                bin($op, self.node, rhs.operand())
            }
        }
        impl<L: WgslType, R: $Trait<L>> $Op<R> for &Exp<L> {
            type Output = Exp<R::Output>;
            #[track_caller]
            fn $method(self, rhs: R) -> Exp<R::Output> {
                bin($op, self.node.clone(), rhs.operand())
            }
        }
    };
}

/// A Rust literal on the left: `impl $Op<Exp<$R>> for $S` (and `&Exp<$R>`), giving `$O`.
macro_rules! literal_left {
    ([$($gen:tt)*] $Op:ident $method:ident $op:expr; $S:ty, $R:ty => $O:ty $(where $($w:tt)*)?) => {
        impl<$($gen)*> $Op<Exp<$R>> for $S $(where $($w)*)? {
            type Output = Exp<$O>;
            #[track_caller]
            fn $method(self, rhs: Exp<$R>) -> Exp<$O> { bin($op, lit_node(self), rhs.node) }
        }
        impl<$($gen)*> $Op<&Exp<$R>> for $S $(where $($w)*)? {
            type Output = Exp<$O>;
            #[track_caller]
            fn $method(self, rhs: &Exp<$R>) -> Exp<$O> {
                bin($op, lit_node(self), rhs.node.clone())
            }
        }
    };
}

/// The rules every arithmetic operator shares (WGSL spec §8.7): `T op T`, `vecN<S> op S`,
/// `S op vecN<S>`, and Rust literals of the scalar on either side.
macro_rules! arithmetic {
    ($Op:ident $method:ident $Trait:ident $Marker:ident $op:expr) => {
        operator!($Op $method $Trait $op);
        operand!([T: Numeric] $Marker; T, T => T);
        operand!([S: Scalar + Numeric<Elem = S>, const N: usize] $Marker;
            Vector<S, N>, S => Vector<S, N> where D<N>: Dim);
        operand!([S: Scalar + Numeric<Elem = S>, const N: usize] $Marker;
            S, Vector<S, N> => Vector<S, N> where D<N>: Dim);
        arithmetic_literals!($Op $method $Marker $op; f32, i32, u32);
    };
}
macro_rules! arithmetic_literals {
    ($Op:ident $method:ident $Marker:ident $op:expr; $($s:ty),*) => {$(
        literal_operand!([] $Marker; $s, $s => $s);
        literal_operand!([const N: usize] $Marker; Vector<$s, N>, $s => Vector<$s, N>
            where D<N>: Dim);
        literal_left!([] $Op $method $op; $s, $s => $s);
        literal_left!([const N: usize] $Op $method $op; $s, Vector<$s, N> => Vector<$s, N>
            where D<N>: Dim);
    )*};
}

arithmetic!(Add add AddOperand AddOp B::Add);
arithmetic!(Sub sub SubOperand SubOp B::Subtract);
arithmetic!(Mul mul MulOperand MulOp B::Multiply);
arithmetic!(Div div DivOperand DivOp B::Divide);
arithmetic!(Rem rem RemOperand RemOp B::Modulo);

// Matrices (WGSL spec §8.7.4 "Matrix Arithmetic").
operand!([const C: usize, const R: usize] AddOp;
    Mat<C, R>, Mat<C, R> => Mat<C, R> where D<C>: Dim, D<R>: Dim);
operand!([const C: usize, const R: usize] SubOp;
    Mat<C, R>, Mat<C, R> => Mat<C, R> where D<C>: Dim, D<R>: Dim);
operand!([const C: usize, const R: usize] MulOp;
    Mat<C, R>, f32 => Mat<C, R> where D<C>: Dim, D<R>: Dim);
operand!([const C: usize, const R: usize] MulOp;
    f32, Mat<C, R> => Mat<C, R> where D<C>: Dim, D<R>: Dim);
literal_operand!([const C: usize, const R: usize] MulOp;
    Mat<C, R>, f32 => Mat<C, R> where D<C>: Dim, D<R>: Dim);
literal_left!([const C: usize, const R: usize] Mul mul B::Multiply;
    f32, Mat<C, R> => Mat<C, R> where D<C>: Dim, D<R>: Dim);
// `matCxR * vecC` is a `vecR`; `vecR * matCxR` is a `vecC`.
operand!([const C: usize, const R: usize] MulOp;
    Mat<C, R>, Vector<f32, C> => Vector<f32, R> where D<C>: Dim, D<R>: Dim);
operand!([const C: usize, const R: usize] MulOp;
    Vector<f32, R>, Mat<C, R> => Vector<f32, C> where D<C>: Dim, D<R>: Dim);
// `matKxR * matCxK` is a `matCxR`.
operand!([const K: usize, const C: usize, const R: usize] MulOp;
    Mat<K, R>, Mat<C, K> => Mat<C, R> where D<C>: Dim, D<R>: Dim, D<K>: Dim);

// Bit operations on integers (WGSL spec §8.9).
operator!(BitAnd bitand BitOperand B::And);
operator!(BitOr bitor BitOperand B::InclusiveOr);
operator!(BitXor bitxor BitOperand B::ExclusiveOr);
operand!([T: Integer] BitOp; T, T => T);
// Shifts: the shift amount is always unsigned (WGSL spec §8.9).
operator!(Shl shl ShiftOperand B::ShiftLeft);
operator!(Shr shr ShiftOperand B::ShiftRight);
operand!([T: Integer] ShiftOp; T, T::Unsigned => T);
macro_rules! bit_literals {
    ($($s:ty),*) => {$(
        literal_operand!([] BitOp; $s, $s => $s);
        literal_left!([] BitAnd bitand B::And; $s, $s => $s);
        literal_left!([] BitOr bitor B::InclusiveOr; $s, $s => $s);
        literal_left!([] BitXor bitxor B::ExclusiveOr; $s, $s => $s);
        literal_operand!([] ShiftOp; $s, u32 => $s);
    )*};
}
bit_literals!(i32, u32);

/// The scalar a Rust literal operand of an `Exp<Self>` has (`f32` for `Exp<vec3<f32>>` and
/// matrices). `#[kernel]` gives an unsuffixed integer literal this type
/// ([`literal_like`]), so that `x + 10` with an `f32` `x` is rustc's own "expected `f32`,
/// found integer", with its fix, `10.0`.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`{Self}` takes no literal operand",
    label = "arithmetic and comparisons with a literal take scalars, vectors and matrices"
)]
pub trait LiteralScalar {
    /// The literal's type.
    type Scalar;
}
impl<T: ScalarOrVector> LiteralScalar for T {
    type Scalar = T::Elem;
}
impl<const C: usize, const R: usize> LiteralScalar for Mat<C, R>
where
    D<C>: Dim,
    D<R>: Dim,
{
    type Scalar = f32;
}

/// `value`, typed as the scalar of `other`: what `#[kernel]` makes of the literal in
/// `other op 10`.
#[doc(hidden)]
pub fn literal_like<T: LiteralScalar>(other: &Exp<T>, value: T::Scalar) -> T::Scalar {
    let _ = other;
    value
}

// Unary operators (WGSL spec §8.7.1, §8.9).
macro_rules! unary {
    ([$($gen:tt)*] $Trait:ident $method:ident $op:expr; $T:ty) => {
        impl<$($gen)*> $Trait for Exp<$T> {
            type Output = Exp<$T>;
            #[track_caller]
            fn $method(self) -> Exp<$T> {
                Exp::from_kind(ExprKind::Unary($op, self.node), CallSite::caller())
            }
        }
        impl<$($gen)*> $Trait for &Exp<$T> {
            type Output = Exp<$T>;
            #[track_caller]
            fn $method(self) -> Exp<$T> {
                Exp::from_kind(ExprKind::Unary($op, self.node.clone()), CallSite::caller())
            }
        }
    };
}
unary!([T: Signed] Neg neg naga::UnaryOperator::Negate; T);
unary!([] Not not naga::UnaryOperator::BitwiseNot; u32);
unary!([] Not not naga::UnaryOperator::BitwiseNot; i32);
unary!([] Not not naga::UnaryOperator::LogicalNot; bool);
