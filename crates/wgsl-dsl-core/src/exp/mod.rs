//! Typed expressions: [`Exp<T>`].
//!
//! An `Exp<T>` is a WGSL expression of WGSL type `T` (see [`crate::types`]). It is a cheap-to-clone
//! handle on an immutable tree: building one computes nothing and emits nothing.
//!
//! # Evaluation
//! An expression is evaluated *where it is used*: when a statement that uses it is lowered, the
//! whole tree is emitted at that point, in that block. An `Exp` used twice is therefore a tree
//! evaluated twice, and an `Exp` that reads memory (a buffer element, a `var`) reads it anew at
//! each use. To evaluate once and reuse the value, bind it with
//! [`KernelBuilder::let_`](crate::KernelBuilder::let_): the result is an `Exp` naming the WGSL
//! `let`, valid in the block that declared it and the blocks nested inside it.
//!
//! Within one expression, operands are evaluated left to right (WGSL spec §14.1).
//!
//! # Typing
//! Operators come from `std::ops` where WGSL allows the operand types (including the vector-scalar
//! mixes of WGSL spec §8.7); comparisons are methods ([`Exp::lt`], [`Exp::eq`], ...) because
//! `PartialOrd` must return a Rust `bool`. Built-in functions are in [`builtins`].

pub mod builtins;
pub mod coop;
pub mod decompose;
pub(crate) mod node;
mod ops;
pub mod packing;
mod saturate;
pub mod vector;

use std::marker::PhantomData;
use std::rc::Rc;

pub use node::BuiltinValue;
pub(crate) use node::{
    ExprKind, Lit, MAX_DEPTH, Node, NodeRef, PlaceKind, PlaceNode, PlaceRef, is_pure, operands,
    place_indices,
};
pub use ops::{
    AddOperand, BitOperand, DivOperand, MulOperand, RemOperand, ShiftOperand, SubOperand,
};
#[doc(hidden)]
pub use ops::{LiteralScalar, literal_like};

use crate::site::CallSite;
use crate::types::*;

/// A typed WGSL expression. See the [module docs](self) for evaluation and typing rules.
#[must_use = "an expression does nothing until it is used (stored, bound with `let_`, returned); \
              a statement's result may be dropped with `let _ =`"]
pub struct Exp<T> {
    pub(crate) node: NodeRef,
    _t: PhantomData<fn() -> T>,
}

impl<T> Clone for Exp<T> {
    fn clone(&self) -> Self {
        Exp {
            node: self.node.clone(),
            _t: PhantomData,
        }
    }
}

impl<T> std::fmt::Debug for Exp<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Exp<{}> @ {}", self.node.ty.wgsl_name(), self.node.site)
    }
}

impl<T: WgslType> Exp<T> {
    pub(crate) fn from_kind(kind: ExprKind, site: CallSite) -> Self {
        Self::from_node(Node {
            kind,
            ty: T::ty(),
            site,
        })
    }

    pub(crate) fn from_node(node: Node) -> Self {
        Exp {
            node: Rc::new(node),
            _t: PhantomData,
        }
    }

    /// The `Exp<T>` of a node of type `T` (a derivative, which has its primal's type).
    pub(crate) fn from_ref(node: NodeRef) -> Self {
        debug_assert_eq!(node.ty, T::ty(), "a node of type {}", T::ty().wgsl_name());
        Exp {
            node,
            _t: PhantomData,
        }
    }

    /// The same node as an `Exp<U>`, for code that has checked that `U` is `T`.
    pub(crate) fn retype<U>(&self) -> Exp<U> {
        Exp {
            node: self.node.clone(),
            _t: PhantomData,
        }
    }

    /// The WGSL type of this expression.
    pub fn ty(&self) -> &Ty {
        &self.node.ty
    }

    /// Where this expression was built.
    pub fn site(&self) -> CallSite {
        self.node.site
    }

    /// The zero value of `T` (WGSL spec §6.6 "Zero Value Expressions").
    #[track_caller]
    pub fn zero() -> Self
    where
        T: Constructible,
    {
        Self::from_kind(ExprKind::ZeroValue, CallSite::caller())
    }
}

/// Values that convert to an `Exp<T>`: an `Exp<T>`, a `&Exp<T>`, or a Rust value of the scalar
/// type (`1.5f32`, `3u32`, `true`), which becomes a literal.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a value of type `{T}`",
    label = "expected an `Exp<{T}>`, a `&Exp<{T}>` or a Rust `{T}` value",
    note = "a `Place` (a binding, a `var`, a workgroup variable, or an element or member of one) \
            is a memory location: read its value with `.load()`, e.g. `x.at(&i).load()`",
    note = "WGSL converts nothing implicitly: convert with `.to_f32()`, `.to_i32()` or `.to_u32()` \
            (in `#[kernel]`: `x as f32`); a Rust literal is of the type it is written in \
            (`2.0`, not `2`, for an `f32`)"
)]
pub trait IntoExp<T> {
    /// Convert, recording the caller as the site of a new literal.
    #[track_caller]
    fn into_exp(self) -> Exp<T>;
}
impl<T> IntoExp<T> for Exp<T> {
    fn into_exp(self) -> Exp<T> {
        self
    }
}
impl<T> IntoExp<T> for &Exp<T> {
    fn into_exp(self) -> Exp<T> {
        self.clone()
    }
}

/// Make a literal. `f32` literals keep every finite value bit-exactly (subnormals and `-0.0`
/// included); NaN and infinities cannot be written in WGSL and are reported by
/// [`KernelBuilder::build`](crate::KernelBuilder::build) as
/// [`BuildError::NonFiniteLiteral`](crate::BuildError::NonFiniteLiteral) naming this call site.
#[track_caller]
pub fn lit<T: Literal>(value: T) -> Exp<T> {
    Exp::from_kind(ExprKind::Literal(value.lit()), CallSite::caller())
}

/// Rust scalars that are WGSL literals (WGSL spec §5.2 "Literals").
pub trait Literal: Scalar {
    #[doc(hidden)]
    fn lit(self) -> Lit;
}
macro_rules! literal {
    ($t:ty, $v:ident, $e:expr) => {
        impl Literal for $t {
            fn lit(self) -> Lit {
                let $v = self;
                $e
            }
        }
        impl IntoExp<$t> for $t {
            #[track_caller]
            fn into_exp(self) -> Exp<$t> {
                Exp::from_kind(ExprKind::Literal(self.lit()), CallSite::caller())
            }
        }
        impl From<$t> for Exp<$t> {
            #[track_caller]
            fn from(v: $t) -> Self {
                v.into_exp()
            }
        }
    };
}
literal!(bool, v, Lit::Bool(v));
literal!(i32, v, Lit::I32(v));
literal!(u32, v, Lit::U32(v));
literal!(f32, v, Lit::F32(v));
#[cfg(feature = "f16")]
literal!(half::f16, v, Lit::F16(v.to_bits()));

// ---- comparisons, logic, select, conversions ----

/// The comparison methods, one per `naga::BinaryOperator`: `self op rhs`, a `bool` (or a vector
/// of them) of the operands' shape.
macro_rules! comparisons {
    ($($(#[$doc:meta])* $name:ident => $op:ident;)*) => {$(
        $(#[$doc])*
        #[track_caller]
        pub fn $name(&self, rhs: impl IntoExp<T>) -> Exp<T::Bool> {
            self.compare(naga::BinaryOperator::$op, rhs.into_exp())
        }
    )*};
}

/// The conversion methods, one per scalar type: `S(self)`, componentwise on vectors.
macro_rules! conversions {
    ($($(#[$doc:meta])* $name:ident => $s:ty, $kind:ident;)*) => {$(
        $(#[$doc])*
        #[track_caller]
        pub fn $name(&self) -> Exp<<T as Convert<$s>>::Output>
        where
            T: Convert<$s>,
        {
            self.convert(naga::ScalarKind::$kind)
        }
    )*};
}

impl<T: ScalarOrVector> Exp<T> {
    #[track_caller]
    fn compare(&self, op: naga::BinaryOperator, rhs: Exp<T>) -> Exp<T::Bool> {
        Exp::from_kind(
            ExprKind::Binary(op, self.node.clone(), rhs.node),
            CallSite::caller(),
        )
    }
    comparisons! {
        /// `self < rhs` (WGSL spec §8.8 "Comparison Expressions"); componentwise on vectors.
        lt => Less;
        /// `self <= rhs` (WGSL spec §8.8).
        le => LessEqual;
        /// `self > rhs` (WGSL spec §8.8).
        gt => Greater;
        /// `self >= rhs` (WGSL spec §8.8).
        ge => GreaterEqual;
        /// `self == rhs` (WGSL spec §8.8).
        eq => Equal;
        /// `self != rhs` (WGSL spec §8.8).
        ne => NotEqual;
    }

    conversions! {
        /// Convert to `f32` (`f32(e)`, WGSL spec §17.1.2.4 (#f32-builtin)); componentwise on
        /// vectors. From an integer beyond 2^24 in magnitude: one of the two nearest `f32`s
        /// (§15.7.6 "Floating Point Conversion" (#floating-point-conversion)).
        to_f32 => f32, Float;
        /// Convert to `i32` (`i32(e)`, WGSL spec §17.1.2.5 (#i32-builtin)); componentwise on
        /// vectors. From `u32`: the same bits.
        ///
        /// From a float: rounded toward zero, and a value beyond the range of `i32` is clamped
        /// to the nearest `i32` the float type represents (`1e20` gives 2147483520, not
        /// `i32::MAX`): §15.7.6 "Floating Point Conversion" (#floating-point-conversion).
        /// **Undefined** for NaN (an indeterminate value, §15.7.6, §8.2), and, by the Finite
        /// Math Assumption (§15.7.2), possibly for infinities. Defined for every input:
        /// [`Exp::to_i32_saturating`].
        to_i32 => i32, Sint;
        /// Convert to `u32` (`u32(e)`, WGSL spec §17.1.2.16 (#u32-builtin)); componentwise on
        /// vectors. From `i32`: the same bits.
        ///
        /// From a float: rounded toward zero, negative values give 0, and a value beyond the
        /// range of `u32` gives the largest `u32` the float type represents (4294967040 for
        /// `f32`): §15.7.6. **Undefined** for NaN (§15.7.6, §8.2), and possibly for infinities
        /// (§15.7.2). Defined for every input: [`Exp::to_u32_saturating`].
        to_u32 => u32, Uint;
        /// Convert to `bool` (`bool(e)`, WGSL spec §17.1.2.2 (#bool-builtin): true when
        /// non-zero; `-0.0` and `0.0` are false, NaN is true).
        to_bool => bool, Bool;
    }

    /// Convert to `f16` (`f16(e)`, WGSL spec §17.1.2.5; needs `enable f16;`): rounds to the
    /// nearest `f16`; componentwise on vectors.
    #[cfg(feature = "f16")]
    #[track_caller]
    pub fn to_f16(&self) -> Exp<<T as Convert<half::f16>>::Output>
    where
        T: Convert<half::f16>,
    {
        Exp::from_kind(
            ExprKind::As {
                value: self.node.clone(),
                kind: naga::ScalarKind::Float,
                convert: Some(2),
            },
            CallSite::caller(),
        )
    }

    #[track_caller]
    fn convert<U: WgslType>(&self, kind: naga::ScalarKind) -> Exp<U> {
        let width = if kind == naga::ScalarKind::Bool { 1 } else { 4 };
        Exp::from_kind(
            ExprKind::As {
                value: self.node.clone(),
                kind,
                convert: Some(width),
            },
            CallSite::caller(),
        )
    }

    /// Reinterpret the bits as another 32-bit numeric type of the same shape
    /// (`bitcast<U>(e)`, WGSL spec §17.2.1).
    #[track_caller]
    pub fn bitcast<U: ScalarOrVector>(&self) -> Exp<U>
    where
        T: Bitcast<U>,
    {
        Exp::from_kind(
            ExprKind::As {
                value: self.node.clone(),
                kind: U::Elem::SCALAR.naga().kind,
                convert: None,
            },
            CallSite::caller(),
        )
    }
}

/// `T` converts to scalar `S` with WGSL's value constructors; `Output` is `S` or `vecN<S>`.
pub trait Convert<S: Scalar>: ScalarOrVector {
    /// The converted type.
    type Output: ScalarOrVector;
}
macro_rules! convert_all {
    ($($from:ty),*) => {$(
        impl<S: Scalar> Convert<S> for $from { type Output = S; }
        impl<S: Scalar, const N: usize> Convert<S> for Vector<$from, N>
        where D<N>: Dim, Vector<S, N>: ScalarOrVector { type Output = Vector<S, N>; }
    )*};
}
convert_all!(f32, i32, u32, bool);
#[cfg(feature = "f16")]
convert_all!(half::f16);

/// `bitcast<U>(T)` is allowed: 32-bit numeric scalars or vectors of the same size.
pub trait Bitcast<U> {}
macro_rules! bitcast_all {
    ($($a:ty),*) => {$(
        impl Bitcast<f32> for $a {}
        impl Bitcast<i32> for $a {}
        impl Bitcast<u32> for $a {}
        impl<const N: usize> Bitcast<Vector<f32, N>> for Vector<$a, N> where D<N>: Dim {}
        impl<const N: usize> Bitcast<Vector<i32, N>> for Vector<$a, N> where D<N>: Dim {}
        impl<const N: usize> Bitcast<Vector<u32, N>> for Vector<$a, N> where D<N>: Dim {}
    )*};
}
bitcast_all!(f32, i32, u32);

/// `select(reject, accept, condition)` (WGSL spec §17.3.2), for a scalar or vector condition.
#[track_caller]
fn select_node<T: WgslType>(condition: &NodeRef, accept: Exp<T>, reject: Exp<T>) -> Exp<T> {
    Exp::from_kind(
        ExprKind::Select {
            condition: condition.clone(),
            accept: accept.node,
            reject: reject.node,
        },
        CallSite::caller(),
    )
}

impl Exp<bool> {
    #[track_caller]
    fn logical(&self, op: naga::BinaryOperator, rhs: Exp<bool>) -> Exp<bool> {
        Exp::from_kind(
            ExprKind::Binary(op, self.node.clone(), rhs.node),
            CallSite::caller(),
        )
    }
    /// `self && rhs`, short-circuiting as in Rust (WGSL spec §8.6 "Logical Expressions"):
    /// `rhs` is evaluated only where `self` is true. Scalar `bool` only.
    ///
    /// When `rhs` reads memory (a buffer element, a `var`) or indexes a value with an `Exp`,
    /// it is lowered as WGSL's own front end lowers `&&` (naga's `LogicalAnd` evaluates both
    /// operands): a `var` assigned in an `if` on `self`, so that `i.lt(n).and(x.at(&i).load()
    /// .gt(0.0))` never reads `x[i]` for `i >= n` (the interpreter would report that read out
    /// of bounds). Otherwise evaluating `rhs` cannot be observed, and it is WGSL's `&&`.
    /// A statement in the right operand (a helper call, an atomic) is recorded when the Rust
    /// code calling the builder runs, before this `Exp` exists: to make it conditional too,
    /// record it in a branch ([`KernelBuilder::if_value`](crate::KernelBuilder::if_value), as
    /// `#[kernel]` does for `a && f(b)`).
    ///
    /// ```
    /// # use wgsl_dsl_core as wgsl_dsl;
    /// use wgsl_dsl::prelude::*;
    /// let mut k = KernelBuilder::new("positive", [64, 1, 1]);
    /// let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    /// let out = k.storage::<RuntimeArray<u32>, ReadWrite>("out");
    /// let i = k.let_("i", global_invocation_id().x());
    /// let positive = k.let_("positive", i.lt(x.len()).and(x.at(&i).load().gt(0.0f32)));
    /// k.if_(positive, |k| k.store(&out.at(&i), 1u32));
    /// let wgsl = k.build()?.wgsl;
    /// // `var and: bool;` then `if (i < arrayLength((&x))) { .. and = (_e8 > 0f); } else {
    /// // and = false; }`, then `let positive = and;`.
    /// assert!(wgsl.contains("and = false;") && !wgsl.contains("&&"), "{wgsl}");
    /// # Ok::<(), wgsl_dsl::BuildError>(())
    /// ```
    #[track_caller]
    pub fn and(&self, rhs: impl IntoExp<bool>) -> Exp<bool> {
        self.logical(naga::BinaryOperator::LogicalAnd, rhs.into_exp())
    }
    /// `self || rhs`, short-circuiting as in Rust (WGSL spec §8.6): `rhs` is evaluated only
    /// where `self` is false, a branch when `rhs` reads memory (see [`Exp::and`]). Scalar
    /// `bool` only.
    #[track_caller]
    pub fn or(&self, rhs: impl IntoExp<bool>) -> Exp<bool> {
        self.logical(naga::BinaryOperator::LogicalOr, rhs.into_exp())
    }
    /// `!self` (WGSL spec §8.6).
    #[track_caller]
    pub fn not(&self) -> Exp<bool> {
        Exp::from_kind(
            ExprKind::Unary(naga::UnaryOperator::LogicalNot, self.node.clone()),
            CallSite::caller(),
        )
    }
    /// `select(reject, accept, self)`: `accept` if `self` is true, else `reject`
    /// (WGSL spec §17.3.2). Eager, as WGSL's `select` is: both operands are evaluated, so
    /// `c.select(x.at(&i).load(), 0.0)` reads `x[i]` whatever `c` (the interpreter reports the
    /// read if it is out of bounds). To read only where a condition holds, use
    /// [`KernelBuilder::if_value`](crate::KernelBuilder::if_value), a branch when an arm
    /// loads (in `#[kernel]`: `if c { x[i] } else { 0.0 }`).
    #[track_caller]
    pub fn select<T: ScalarOrVector>(
        &self,
        accept: impl IntoExp<T>,
        reject: impl IntoExp<T>,
    ) -> Exp<T> {
        select_node(&self.node, accept.into_exp(), reject.into_exp())
    }
}

impl<const N: usize> Exp<Vector<bool, N>>
where
    D<N>: Dim,
{
    /// `any(self)`: true if any component is true (WGSL spec §17.3.1).
    #[track_caller]
    pub fn any(&self) -> Exp<bool> {
        Exp::from_kind(
            ExprKind::Relational(naga::RelationalFunction::Any, self.node.clone()),
            CallSite::caller(),
        )
    }
    /// `all(self)`: true if every component is true (WGSL spec §17.3.1).
    #[track_caller]
    pub fn all(&self) -> Exp<bool> {
        Exp::from_kind(
            ExprKind::Relational(naga::RelationalFunction::All, self.node.clone()),
            CallSite::caller(),
        )
    }
    /// Componentwise `select(reject, accept, self)` (WGSL spec §17.3.2). Eager: both
    /// operands are evaluated (see [`select`](crate::exp::builtins::select)).
    #[track_caller]
    pub fn select<T: Scalar>(
        &self,
        accept: impl IntoExp<Vector<T, N>>,
        reject: impl IntoExp<Vector<T, N>>,
    ) -> Exp<Vector<T, N>>
    where
        Vector<T, N>: WgslType,
    {
        select_node(&self.node, accept.into_exp(), reject.into_exp())
    }
}

// ---- indexing values ----

impl<T: Indexable> Exp<T> {
    /// `self[index]` on an array or vector *value* (WGSL spec §8.5 "Indexing Expressions").
    /// To index a buffer or a `var`, index the place instead ([`crate::Place::at`]).
    #[track_caller]
    pub fn index<I: IndexScalar>(&self, index: impl IntoExp<I>) -> Exp<T::Elem> {
        Exp::from_kind(
            ExprKind::Access(self.node.clone(), index.into_exp().node),
            CallSite::caller(),
        )
    }
}

impl<T> Exp<T> {
    /// Member or component `index` of this value, typed `F` by the caller (a vector's
    /// component, a member of a built-in function's result struct).
    #[track_caller]
    pub(crate) fn access_index<F: WgslType>(&self, index: u32) -> Exp<F> {
        Exp::from_kind(
            ExprKind::AccessIndex(self.node.clone(), index),
            CallSite::caller(),
        )
    }
}

impl<T: WgslStruct> Exp<T> {
    /// Member `index` of a struct value, typed `F`. Used by `#[derive(WgslStruct)]`'s accessors;
    /// lowering checks `F` against the member's declared type.
    #[doc(hidden)]
    #[track_caller]
    pub fn member<F: WgslType>(&self, index: u32) -> Exp<F> {
        let members = T::members();
        let kind = match members.get(index as usize) {
            Some((_, ty)) if *ty == F::ty() => ExprKind::AccessIndex(self.node.clone(), index),
            Some((name, ty)) => ExprKind::Invalid(format!(
                "member `{name}` has type {}, not {}",
                ty.wgsl_name(),
                F::ty().wgsl_name()
            )),
            None => ExprKind::Invalid(format!("struct has no member {index}")),
        };
        Exp::from_kind(kind, CallSite::caller())
    }
}

/// `T(args...)`: construct a struct or array value from its members
/// (WGSL spec §8.3 "Value Constructor Expressions"). Lowering checks arity and member types.
#[doc(hidden)]
#[track_caller]
pub fn compose<T: Constructible>(parts: Vec<NodeHandle>) -> Exp<T> {
    Exp::from_kind(
        ExprKind::Compose(parts.into_iter().map(|p| p.0).collect()),
        CallSite::caller(),
    )
}

/// An untyped expression handle, for generated code ([`compose`]).
#[doc(hidden)]
#[derive(Clone, Debug)]
pub struct NodeHandle(pub(crate) NodeRef);
impl<T> From<Exp<T>> for NodeHandle {
    fn from(e: Exp<T>) -> Self {
        NodeHandle(e.node)
    }
}
