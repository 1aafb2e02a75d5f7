//! `std::ops` for [`Exp`]: arithmetic (WGSL spec §8.7), bit operations (§8.9) and unary
//! operators, exactly where WGSL allows the operand types.

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

/// Implements `$Trait<Rhs> for Lhs` for owned and borrowed operands, given the operand types and
/// the output type.
macro_rules! binop_impls {
    (
        [$($gen:tt)*] $Trait:ident $method:ident $op:expr;
        $L:ty, $R:ty => $O:ty $(where $($w:tt)*)?
    ) => {
        impl<$($gen)*> $Trait<Exp<$R>> for Exp<$L> $(where $($w)*)? {
            type Output = Exp<$O>;
            #[track_caller]
            fn $method(self, rhs: Exp<$R>) -> Exp<$O> { bin($op, self.node, rhs.node) }
        }
        impl<$($gen)*> $Trait<&Exp<$R>> for Exp<$L> $(where $($w)*)? {
            type Output = Exp<$O>;
            #[track_caller]
            fn $method(self, rhs: &Exp<$R>) -> Exp<$O> { bin($op, self.node, rhs.node.clone()) }
        }
        impl<$($gen)*> $Trait<Exp<$R>> for &Exp<$L> $(where $($w)*)? {
            type Output = Exp<$O>;
            #[track_caller]
            fn $method(self, rhs: Exp<$R>) -> Exp<$O> { bin($op, self.node.clone(), rhs.node) }
        }
        impl<$($gen)*> $Trait<&Exp<$R>> for &Exp<$L> $(where $($w)*)? {
            type Output = Exp<$O>;
            #[track_caller]
            fn $method(self, rhs: &Exp<$R>) -> Exp<$O> {
                bin($op, self.node.clone(), rhs.node.clone())
            }
        }
    };
}

/// Implements `$Trait<$S> for Exp<$L>` and `$Trait<Exp<$L>> for $S` with a Rust literal `$S`.
macro_rules! literal_impls {
    ([$($gen:tt)*] $Trait:ident $method:ident $op:expr; $L:ty, $S:ty => $O:ty $(where $($w:tt)*)?) => {
        impl<$($gen)*> $Trait<$S> for Exp<$L> $(where $($w)*)? {
            type Output = Exp<$O>;
            #[track_caller]
            fn $method(self, rhs: $S) -> Exp<$O> { bin($op, self.node, lit_node(rhs)) }
        }
        impl<$($gen)*> $Trait<$S> for &Exp<$L> $(where $($w)*)? {
            type Output = Exp<$O>;
            #[track_caller]
            fn $method(self, rhs: $S) -> Exp<$O> { bin($op, self.node.clone(), lit_node(rhs)) }
        }
        impl<$($gen)*> $Trait<Exp<$L>> for $S $(where $($w)*)? {
            type Output = Exp<$O>;
            #[track_caller]
            fn $method(self, rhs: Exp<$L>) -> Exp<$O> { bin($op, lit_node(self), rhs.node) }
        }
        impl<$($gen)*> $Trait<&Exp<$L>> for $S $(where $($w)*)? {
            type Output = Exp<$O>;
            #[track_caller]
            fn $method(self, rhs: &Exp<$L>) -> Exp<$O> {
                bin($op, lit_node(self), rhs.node.clone())
            }
        }
    };
}

macro_rules! arithmetic {
    ($Trait:ident $method:ident $op:expr) => {
        // T op T
        binop_impls!([T: Numeric] $Trait $method $op; T, T => T);
        // vecN<S> op S, S op vecN<S>
        binop_impls!([S: Scalar + Numeric<Elem = S>, const N: usize] $Trait $method $op;
            Vector<S, N>, S => Vector<S, N> where D<N>: Dim);
        binop_impls!([S: Scalar + Numeric<Elem = S>, const N: usize] $Trait $method $op;
            S, Vector<S, N> => Vector<S, N> where D<N>: Dim);
        arithmetic_literals!($Trait $method $op; f32, i32, u32);
    };
}
macro_rules! arithmetic_literals {
    ($Trait:ident $method:ident $op:expr; $($s:ty),*) => {$(
        literal_impls!([] $Trait $method $op; $s, $s => $s);
        literal_impls!([const N: usize] $Trait $method $op;
            Vector<$s, N>, $s => Vector<$s, N> where D<N>: Dim);
    )*};
}

arithmetic!(Add add B::Add);
arithmetic!(Sub sub B::Subtract);
arithmetic!(Mul mul B::Multiply);
arithmetic!(Div div B::Divide);
arithmetic!(Rem rem B::Modulo);

// Matrices (WGSL spec §8.7.4 "Matrix Arithmetic").
binop_impls!([const C: usize, const R: usize] Add add B::Add;
    Mat<C, R>, Mat<C, R> => Mat<C, R> where D<C>: Dim, D<R>: Dim);
binop_impls!([const C: usize, const R: usize] Sub sub B::Subtract;
    Mat<C, R>, Mat<C, R> => Mat<C, R> where D<C>: Dim, D<R>: Dim);
binop_impls!([const C: usize, const R: usize] Mul mul B::Multiply;
    Mat<C, R>, f32 => Mat<C, R> where D<C>: Dim, D<R>: Dim);
binop_impls!([const C: usize, const R: usize] Mul mul B::Multiply;
    f32, Mat<C, R> => Mat<C, R> where D<C>: Dim, D<R>: Dim);
binop_impls!([const C: usize, const R: usize] Mul mul B::Multiply;
    Mat<C, R>, Vector<f32, C> => Vector<f32, R> where D<C>: Dim, D<R>: Dim);
binop_impls!([const C: usize, const R: usize] Mul mul B::Multiply;
    Vector<f32, R>, Mat<C, R> => Vector<f32, C> where D<C>: Dim, D<R>: Dim);
binop_impls!([const K: usize, const C: usize, const R: usize] Mul mul B::Multiply;
    Mat<K, R>, Mat<C, K> => Mat<C, R> where D<C>: Dim, D<R>: Dim, D<K>: Dim);

// Bit operations on integers (WGSL spec §8.9).
binop_impls!([T: Integer] BitAnd bitand B::And; T, T => T);
binop_impls!([T: Integer] BitOr bitor B::InclusiveOr; T, T => T);
binop_impls!([T: Integer] BitXor bitxor B::ExclusiveOr; T, T => T);
// Shifts: the shift amount is always unsigned (WGSL spec §8.9).
binop_impls!([T: Integer] Shl shl B::ShiftLeft; T, T::Unsigned => T);
binop_impls!([T: Integer] Shr shr B::ShiftRight; T, T::Unsigned => T);
macro_rules! bit_literals {
    ($($s:ty),*) => {$(
        literal_impls!([] BitAnd bitand B::And; $s, $s => $s);
        literal_impls!([] BitOr bitor B::InclusiveOr; $s, $s => $s);
        literal_impls!([] BitXor bitxor B::ExclusiveOr; $s, $s => $s);
        impl Shl<u32> for Exp<$s> {
            type Output = Exp<$s>;
            #[track_caller]
            fn shl(self, rhs: u32) -> Exp<$s> { bin(B::ShiftLeft, self.node, lit_node(rhs)) }
        }
        impl Shr<u32> for Exp<$s> {
            type Output = Exp<$s>;
            #[track_caller]
            fn shr(self, rhs: u32) -> Exp<$s> { bin(B::ShiftRight, self.node, lit_node(rhs)) }
        }
    )*};
}
bit_literals!(i32, u32);

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
