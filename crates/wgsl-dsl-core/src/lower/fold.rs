//! Folding the identities the DSL itself produces (`i + 0u` from an unrolled loop's first
//! copy, `x * 1.0`, `n - 0`): the operation is replaced by its other operand where that is
//! exact for every value of it (WGSL spec §8.7 and IEEE-754):
//!
//! | operation | folded when the literal is |
//! |---|---|
//! | `x + l`, `l + x` | integer `0`; float `-0.0` (`x + 0.0` is not `x` for `x = -0.0`) |
//! | `x - l` | integer `0`, float `+0.0` |
//! | `x * l`, `l * x` | `1` (integer or float; exact for NaN, infinities and `-0.0` too) |
//! | `x / l` | `1` |
//! | `x << l`, `x >> l` | `0u` |
//! | `x \| l`, `l \| x`, `x ^ l`, `l ^ x` | `0` |
//! | `x & l`, `l & x` | all ones (`0xffffffffu`, `-1i`) |
//! | `x && l`, `l && x` | `true` (and `false && x` is `false`) |
//! | `x \|\| l`, `l \|\| x` | `false` (and `true \|\| x` is `true`) |
//!
//! A literal on the left of `&&` / `||` decides as Rust does: `false && x` and `true || x`
//! are the literal, and `x` is not evaluated (lowering does not get here when `x` loads: it
//! folds before lowering `x`). `x && false` and `x || true` keep `x`, which Rust evaluates.
//!
//! Literals are scalars, so the other operand has the operation's type (a vector or matrix
//! operand with a scalar literal gives a vector or matrix). Only literal operands fold:
//! `x * 0` is not `0` for NaN, and values that are constant without being literals are left to
//! the GPU compiler.

use naga::{BinaryOperator as B, Expression, Literal};

/// Which operand an identity leaves, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Keep {
    Left,
    Right,
}

fn lit(e: &Expression) -> Option<Literal> {
    match e {
        Expression::Literal(l) => Some(*l),
        _ => None,
    }
}

fn is_zero_int(l: Literal) -> bool {
    matches!(l, Literal::I32(0) | Literal::U32(0))
}

fn is_one(l: Literal) -> bool {
    match l {
        Literal::I32(v) => v == 1,
        Literal::U32(v) => v == 1,
        Literal::F32(v) => v == 1.0,
        Literal::F16(v) => v.to_f32() == 1.0,
        _ => false,
    }
}

fn is_all_ones(l: Literal) -> bool {
    matches!(l, Literal::I32(-1) | Literal::U32(u32::MAX))
}

/// `-0.0` (`positive: false`) or `+0.0` (`positive: true`), bit for bit.
fn is_float_zero(l: Literal, positive: bool) -> bool {
    match l {
        Literal::F32(v) => v == 0.0 && v.is_sign_positive() == positive,
        Literal::F16(v) => v.to_f32() == 0.0 && v.is_sign_positive() == positive,
        _ => false,
    }
}

/// Whether a literal is the `bool` `value`.
fn is_bool(value: bool) -> impl Fn(Literal) -> bool {
    move |l| l == Literal::Bool(value)
}

/// The operand `left op right` equals for every value of it, if one is a literal identity.
pub(crate) fn identity(op: B, left: &Expression, right: &Expression) -> Option<Keep> {
    let (l, r) = (lit(left), lit(right));
    let right_is = |f: &dyn Fn(Literal) -> bool| r.is_some_and(f);
    let left_is = |f: &dyn Fn(Literal) -> bool| l.is_some_and(f);
    let additive_zero = |x: Literal| is_zero_int(x) || is_float_zero(x, false);
    match op {
        B::Add if right_is(&additive_zero) => Some(Keep::Left),
        B::Add if left_is(&additive_zero) => Some(Keep::Right),
        B::Subtract if right_is(&|x| is_zero_int(x) || is_float_zero(x, true)) => Some(Keep::Left),
        B::Multiply if right_is(&is_one) => Some(Keep::Left),
        B::Multiply if left_is(&is_one) => Some(Keep::Right),
        B::Divide if right_is(&is_one) => Some(Keep::Left),
        B::ShiftLeft | B::ShiftRight if right_is(&is_zero_int) => Some(Keep::Left),
        B::InclusiveOr | B::ExclusiveOr if right_is(&is_zero_int) => Some(Keep::Left),
        B::InclusiveOr | B::ExclusiveOr if left_is(&is_zero_int) => Some(Keep::Right),
        B::And if right_is(&is_all_ones) => Some(Keep::Left),
        B::And if left_is(&is_all_ones) => Some(Keep::Right),
        B::LogicalAnd if right_is(&is_bool(true)) => Some(Keep::Left),
        B::LogicalAnd if left_is(&is_bool(true)) => Some(Keep::Right),
        B::LogicalAnd if left_is(&is_bool(false)) => Some(Keep::Left),
        B::LogicalOr if right_is(&is_bool(false)) => Some(Keep::Left),
        B::LogicalOr if left_is(&is_bool(false)) => Some(Keep::Right),
        B::LogicalOr if left_is(&is_bool(true)) => Some(Keep::Left),
        _ => None,
    }
}
