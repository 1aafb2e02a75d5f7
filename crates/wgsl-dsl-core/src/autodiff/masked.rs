//! Masked adjoints: no NaN from the branch not taken (JAX's `where` pitfall).
//!
//! `select(f, t, c)` passes its adjoint to `t` where `c` holds and an exact zero elsewhere
//! (and `max`, `min`, `clamp`, `saturate` likewise to the operand they do not pick). The
//! operand not taken may have a non-finite local derivative there: `select(0.0, sqrt(x), x >
//! 0.0)` at `x < 0`, where `sqrt'` is NaN, or the `log(1 + exp(x))` branch of a softplus at
//! `x = 100`, where `exp(x)` overflows. Reverse mode multiplies the zero into that derivative,
//! and `0 * inf` is NaN: a NaN gradient where the forward value is finite.
//!
//! So every adjoint that may be such a masked zero (one that came through a masking edge, or
//! from a node whose adjoint may be) passes a nonlinear edge as `select(J^T a, 0, a == 0)`:
//! an exact zero adjoint gives an exact zero contribution whatever the local derivative is.
//! Adjoints that are not zero are unchanged, so a non-finite derivative of the branch taken
//! still shows. Linear edges (sums, components, conversions) need no guard: they carry a zero
//! as a zero. Adjoints that no mask reaches are not guarded (no cost outside `select`s).

use super::linear::Lin;
use super::make::{At, width};
use crate::exp::{ExprKind, NodeRef};
use crate::types::Ty;

/// True if `lin` passes an exact zero to its operand where a condition does not hold: the
/// operands of `select`, and the indicators of `max`, `min`, `clamp`, `saturate`.
pub(crate) fn masks(lin: &Lin) -> bool {
    match lin {
        Lin::Mask { .. } | Lin::Masked(..) => true,
        Lin::Scale(Some(p)) => is_indicator(p),
        _ => false,
    }
}

/// `select(0, _, c)`: zero where a condition does not hold (an indicator, [`At::indicator`]).
fn is_indicator(p: &NodeRef) -> bool {
    let zero = |n: &NodeRef| match &n.kind {
        ExprKind::Literal(l) => lit_zero(l),
        ExprKind::Splat(_, s) => matches!(&s.kind, ExprKind::Literal(l) if lit_zero(l)),
        _ => false,
    };
    matches!(&p.kind, ExprKind::Select { reject, .. } if zero(reject))
}

fn finite_literal(p: &NodeRef) -> bool {
    let lit = |n: &NodeRef| match &n.kind {
        ExprKind::Literal(crate::exp::Lit::F32(v)) => v.is_finite(),
        _ => false,
    };
    lit(p) || matches!(&p.kind, ExprKind::Splat(_, s) if lit(s))
}

fn lit_zero(l: &crate::exp::Lit) -> bool {
    use crate::exp::Lit;
    match *l {
        Lit::F32(v) => v == 0.0,
        Lit::F16(bits) => bits & 0x7fff == 0,
        _ => false,
    }
}

/// True if `lin` multiplies by a factor that depends on values (which may be non-finite).
fn multiplies(lin: &Lin) -> bool {
    // A finite constant factor carries a zero as a zero (leaky ReLU's slope).
    if let Lin::Scale(Some(p)) = lin
        && finite_literal(p)
    {
        return false;
    }
    !matches!(
        lin,
        Lin::Scale(None)
            | Lin::Convert
            | Lin::Component(_)
            | Lin::DynComponent(_)
            | Lin::Swizzle(..)
            | Lin::Splat(_)
            | Lin::Part { .. }
            | Lin::Mask { .. }
    )
}

/// True if `lin` is componentwise (its `J` is diagonal), so that a zero component of the
/// adjoint gives a zero component of the contribution.
fn componentwise(lin: &Lin) -> bool {
    match lin {
        Lin::Scale(_) | Lin::DivBy(_) | Lin::Mask { .. } => true,
        Lin::Masked(_, inner) => componentwise(inner),
        _ => false,
    }
}

/// The contribution `c = J^T adjoint` of a node whose adjoint may be a masked zero: zero
/// where `adjoint` is zero (componentwise for a componentwise `J` of one shape, else where
/// all of it is).
pub(crate) fn guard(lin: &Lin, adjoint: &NodeRef, c: NodeRef, at: At) -> NodeRef {
    if !multiplies(lin) {
        return c;
    }
    let zero_a = at.float(&adjoint.ty, 0.0);
    let is_zero = at.cmp(naga::BinaryOperator::Equal, adjoint, &zero_a);
    let condition = if width(&adjoint.ty) == 1 || (adjoint.ty == c.ty && componentwise(lin)) {
        is_zero
    } else {
        super::make::node(
            ExprKind::Relational(naga::RelationalFunction::All, is_zero),
            Ty::Scalar(crate::types::ScalarTy::Bool),
            at.0,
        )
    };
    let zero_c = at.float(&c.ty, 0.0);
    at.select(&condition, &zero_c, &c)
}
