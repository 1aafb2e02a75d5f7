//! The linear maps of derivatives: how a node's tangent follows from one operand's
//! ([`Lin::apply`], forward mode) and an operand's adjoint from the node's ([`Lin::transpose`],
//! reverse mode). Every derivative rule ([`super::rules`]) is written once, as one `Lin` per
//! operand, so the two modes agree by construction (`crates/wgsl-dsl/tests/autodiff_modes.rs` checks that
//! `<J t, g> = <t, J^T g>`).

use naga::{MathFunction as M, SwizzleComponent, VectorSize};

use super::make::{At, float_scalar, width};
use crate::exp::{ExprKind, Lit, NodeRef};
use crate::types::{ScalarTy, Ty};

/// The derivative of a node with respect to one operand, as a linear map `J` from the
/// operand's tangent `t` to the node's.
#[derive(Debug, Clone)]
pub(crate) enum Lin {
    /// `J t = p * t` componentwise (`None`: `p = 1`), a scalar operand broadcast over a vector
    /// node; the adjoint of a broadcast operand sums the components.
    Scale(Option<NodeRef>),
    /// `J t = t / d` componentwise.
    DivBy(NodeRef),
    /// `J t = T(t)`: conversion between float types (`f32(e)`, `f16(e)`).
    Convert,
    /// `J t = t[i]` of a vector operand.
    Component(u32),
    /// `J t = t[index]` of a vector operand, `index` an integer node.
    DynComponent(NodeRef),
    /// `J t = t.pattern` (a swizzle of `size` components).
    Swizzle(VectorSize, [SwizzleComponent; 4]),
    /// `J t = vecN(t)` of a scalar operand.
    Splat(u8),
    /// The operand is components `offset..offset + width` of a vector composed of parts.
    Part { offset: u32 },
    /// `J t = select(0, t, condition)` (`when: true`, the accepted operand of a `select`) or
    /// `select(t, 0, condition)` (the rejected one).
    Mask { condition: NodeRef, when: bool },
    /// `J t = dot(w, t)`: a vector operand, a scalar node.
    Dot(NodeRef),
    /// `J t = alpha t + u dot(v, t)` (`alpha = None`: 0): vector operand and node.
    RankOne {
        alpha: Option<NodeRef>,
        u: NodeRef,
        v: NodeRef,
    },
    /// `J t = cross(t, b)`.
    CrossLeft(NodeRef),
    /// `J t = cross(a, t)`.
    CrossRight(NodeRef),
    /// `J t = m * t`: the operand is the vector right of a constant matrix `m`.
    MatLeft(NodeRef),
    /// `J t = t * m`: the operand is the vector left of a constant matrix `m`.
    MatRight(NodeRef),
    /// `J t = select(0, inner t, condition)`.
    Masked(NodeRef, Box<Lin>),
}

impl Lin {
    /// The map whose coefficients are this one's magnitudes (`|J|` entry by entry, or a
    /// bound of it), for non-negative tangents: the tangent kernel built of these
    /// ([`super::derive_tangent_magnitude`]) bounds the sum of the magnitudes of the chain
    /// rule's contributions to each output, the scale of the rounding in a derivative (terms
    /// that cancel, such as those of `x - x`, each count). `None` for a matrix operand (WGSL
    /// has no `abs` of a matrix).
    pub(crate) fn absolute(&self, at: At) -> Option<Lin> {
        let abs = |p: &NodeRef| at.math1(M::Abs, p);
        Some(match self {
            Lin::Scale(p) => Lin::Scale(p.as_ref().map(abs)),
            Lin::DivBy(d) => Lin::DivBy(abs(d)),
            Lin::Dot(w) => Lin::Dot(abs(w)),
            // `|alpha I + u v^T| <= |alpha| I + |u| |v|^T`, entry by entry.
            Lin::RankOne { alpha, u, v } => Lin::RankOne {
                alpha: alpha.as_ref().map(abs),
                u: abs(u),
                v: abs(v),
            },
            // Each component of `cross(t, b)` is `+-b_j t_k - +-b_k t_j`: at most
            // `dot(|b|, t)` for `t >= 0`.
            Lin::CrossLeft(b) | Lin::CrossRight(b) => Lin::RankOne {
                alpha: None,
                u: at.float(&b.ty, 1.0),
                v: abs(b),
            },
            Lin::MatLeft(_) | Lin::MatRight(_) => return None,
            Lin::Masked(condition, inner) => {
                Lin::Masked(condition.clone(), Box::new(inner.absolute(at)?))
            }
            // Selections, conversions and masks: coefficients 0 and 1.
            Lin::Convert
            | Lin::Component(_)
            | Lin::DynComponent(_)
            | Lin::Swizzle(..)
            | Lin::Splat(_)
            | Lin::Part { .. }
            | Lin::Mask { .. } => self.clone(),
        })
    }

    /// The node's tangent (of type `node`) from the operand's tangent `t` (of type `operand`).
    pub(crate) fn apply(&self, t: &NodeRef, operand: &Ty, node: &Ty, at: At) -> NodeRef {
        match self {
            Lin::Scale(None) => at.fit(t, node),
            Lin::Scale(Some(p)) => at.fit(&at.mul(p, t), node),
            Lin::DivBy(d) => at.fit(&at.div(t, d), node),
            Lin::Convert => at.convert(t, node),
            Lin::Component(i) => at.component(t, *i),
            Lin::DynComponent(index) => {
                let s = float_scalar(operand).unwrap_or(ScalarTy::F32);
                super::make::node(
                    ExprKind::Access(t.clone(), index.clone()),
                    Ty::Scalar(s),
                    at.0,
                )
            }
            Lin::Swizzle(size, pattern) => super::make::node(
                ExprKind::Swizzle(*size, *pattern, t.clone()),
                node.clone(),
                at.0,
            ),
            Lin::Splat(n) => at.splat(t, *n),
            Lin::Part { offset } => {
                // Forward mode composes the tangents of all parts at once (`forward.rs`);
                // alone, a part's contribution is the node's zero with it in place.
                let n = width(node);
                let w = width(operand);
                let parts = (0..u32::from(n))
                    .map(|j| {
                        if j >= *offset && j < offset + u32::from(w) {
                            at.component(t, j - offset)
                        } else {
                            at.scalar(node, 0.0)
                        }
                    })
                    .collect();
                at.compose(node, parts)
            }
            Lin::Mask { condition, when } => {
                let zero = at.float(node, 0.0);
                if *when {
                    at.select(condition, t, &zero)
                } else {
                    at.select(condition, &zero, t)
                }
            }
            Lin::Dot(w) => at.dot(w, t),
            Lin::RankOne { alpha, u, v } => {
                let rank = at.mul(u, &at.dot(v, t));
                match alpha {
                    Some(a) => at.add(&at.mul(a, t), &rank),
                    None => rank,
                }
            }
            Lin::CrossLeft(b) => at.math(M::Cross, &[t, b], node),
            Lin::CrossRight(a) => at.math(M::Cross, &[a, t], node),
            Lin::MatLeft(m) => at.mul_typed(m, t, node.clone()),
            Lin::MatRight(m) => at.mul_typed(t, m, node.clone()),
            Lin::Masked(condition, inner) => {
                let inner = inner.apply(t, operand, node, at);
                at.select(condition, &inner, &at.float(node, 0.0))
            }
        }
    }

    /// The operand's adjoint (of type `operand`) from the node's adjoint `g` (of type `node`):
    /// `J^T g`.
    pub(crate) fn transpose(&self, g: &NodeRef, operand: &Ty, node: &Ty, at: At) -> NodeRef {
        match self {
            Lin::Scale(None) => at.fit(g, operand),
            Lin::Scale(Some(p)) => at.fit(&at.mul(g, p), operand),
            Lin::DivBy(d) => at.fit(&at.div(g, d), operand),
            Lin::Convert => at.convert(g, operand),
            Lin::Component(i) => {
                let n = width(operand);
                let parts = (0..u32::from(n))
                    .map(|j| {
                        if j == *i {
                            g.clone()
                        } else {
                            at.scalar(operand, 0.0)
                        }
                    })
                    .collect();
                at.compose(operand, parts)
            }
            Lin::DynComponent(index) => {
                let n = width(operand);
                let lanes = (0..u32::from(n))
                    .map(|j| {
                        let lit = match index.ty {
                            Ty::Scalar(ScalarTy::I32) => Lit::I32(j as i32),
                            _ => Lit::U32(j),
                        };
                        super::make::node(ExprKind::Literal(lit), index.ty.clone(), at.0)
                    })
                    .collect();
                let index_ty = match index.ty {
                    Ty::Scalar(s) => Ty::Vector(n, s),
                    _ => Ty::Vector(n, ScalarTy::U32),
                };
                let lanes = at.compose(&index_ty, lanes);
                let here = at.cmp(naga::BinaryOperator::Equal, &lanes, &at.splat(index, n));
                at.select(&here, &at.splat(g, n), &at.float(operand, 0.0))
            }
            Lin::Swizzle(size, pattern) => {
                let n = width(operand);
                let used = match size {
                    VectorSize::Bi => 2,
                    VectorSize::Tri => 3,
                    VectorSize::Quad => 4,
                };
                let parts = (0..u32::from(n))
                    .map(|j| {
                        let terms: Vec<NodeRef> = (0..used)
                            .filter(|p| pattern[*p] as u32 == j)
                            .map(|p| at.component(g, p as u32))
                            .collect();
                        at.sum(terms).unwrap_or_else(|| at.scalar(operand, 0.0))
                    })
                    .collect();
                at.compose(operand, parts)
            }
            Lin::Splat(_) => at.sum_components(g),
            Lin::Part { offset } => {
                let w = width(operand);
                if w == 1 {
                    return at.component(g, *offset);
                }
                use SwizzleComponent as S;
                let c = [S::X, S::Y, S::Z, S::W];
                let mut pattern = [S::W; 4];
                for (i, p) in pattern.iter_mut().enumerate().take(usize::from(w)) {
                    *p = c[*offset as usize + i];
                }
                super::make::node(
                    ExprKind::Swizzle(super::make::vector_size(w), pattern, g.clone()),
                    operand.clone(),
                    at.0,
                )
            }
            Lin::Mask { condition, when } => {
                let zero = at.float(node, 0.0);
                let masked = if *when {
                    at.select(condition, g, &zero)
                } else {
                    at.select(condition, &zero, g)
                };
                at.fit(&masked, operand)
            }
            Lin::Dot(w) => at.mul(g, w),
            Lin::RankOne { alpha, u, v } => {
                let rank = at.mul(v, &at.dot(u, g));
                match alpha {
                    Some(a) => at.add(&at.mul(a, g), &rank),
                    None => rank,
                }
            }
            Lin::CrossLeft(b) => at.math(M::Cross, &[b, g], operand),
            Lin::CrossRight(a) => at.math(M::Cross, &[g, a], operand),
            Lin::MatLeft(m) => at.mul_typed(g, m, operand.clone()),
            Lin::MatRight(m) => at.mul_typed(m, g, operand.clone()),
            Lin::Masked(condition, inner) => {
                let masked = at.select(condition, g, &at.float(node, 0.0));
                inner.transpose(&masked, operand, node, at)
            }
        }
    }
}
