//! Which element of a buffer an index of the symbolic program names: the same value as
//! another index (structurally, through the SSA values of one invocation), provably another
//! element (one base plus different constant offsets), or unknown. Used to find stores that
//! overwrite earlier ones ([`super::overwrite`]) and reads that only one invocation makes
//! ([`super::exclusive`]).

use std::rc::Rc;

use crate::exp::{ExprKind, Lit, NodeRef, PlaceKind, PlaceRef};

/// How two indices (of one invocation) relate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Relation {
    /// The same value whatever the invocation's data.
    Same,
    /// Different values (different elements) whatever the data.
    Distinct,
    /// Not known when the kernel is derived.
    Unknown,
}

/// The index of `place` into its root global: `(global index, i)` of `g[i]`.
pub(crate) fn element(place: &PlaceRef) -> Option<(usize, NodeRef)> {
    match &place.kind {
        PlaceKind::Index(base, i) => match &base.kind {
            PlaceKind::Global(g) => Some((g.index, i.clone())),
            _ => None,
        },
        _ => None,
    }
}

/// How the integer indices `a` and `b` relate.
pub(crate) fn relation(a: &NodeRef, b: &NodeRef) -> Relation {
    if same(a, b) {
        return Relation::Same;
    }
    let (base_a, off_a) = split(a);
    let (base_b, off_b) = split(b);
    let same_base = match (&base_a, &base_b) {
        (None, None) => true,
        (Some(x), Some(y)) => same(x, y),
        _ => false,
    };
    if a.ty == b.ty && same_base {
        // u32/i32 arithmetic wraps: offsets name the same element only if equal mod 2^32.
        if (off_a - off_b).rem_euclid(1 << 32) != 0 {
            return Relation::Distinct;
        }
        return Relation::Same;
    }
    Relation::Unknown
}

fn int(n: &NodeRef) -> Option<i64> {
    match n.kind {
        ExprKind::Literal(Lit::U32(v)) => Some(i64::from(v)),
        ExprKind::Literal(Lit::I32(v)) => Some(i64::from(v)),
        _ => None,
    }
}

/// `n` as `base + offset` with a constant offset (`base` `None`: a constant).
fn split(n: &NodeRef) -> (Option<NodeRef>, i64) {
    use naga::BinaryOperator as B;
    if let Some(v) = int(n) {
        return (None, v);
    }
    match &n.kind {
        ExprKind::Binary(B::Add, a, b) => {
            if let Some(c) = int(b) {
                let (base, o) = split(a);
                return (base, o + c);
            }
            if let Some(c) = int(a) {
                let (base, o) = split(b);
                return (base, o + c);
            }
        }
        ExprKind::Binary(B::Subtract, a, b) => {
            if let Some(c) = int(b) {
                let (base, o) = split(a);
                return (base, o - c);
            }
        }
        _ => {}
    }
    (Some(n.clone()), 0)
}

/// True if `a` and `b` are the same value in one invocation: the same node, or the same
/// operation of the same values (values of one invocation, loads of the same element of
/// memory the symbolic program only reads, built-ins).
pub(crate) fn same(a: &NodeRef, b: &NodeRef) -> bool {
    if Rc::ptr_eq(a, b) {
        return true;
    }
    if a.ty != b.ty {
        return false;
    }
    use ExprKind as K;
    match (&a.kind, &b.kind) {
        (K::Literal(x), K::Literal(y)) => x == y,
        (K::Binary(o1, a1, b1), K::Binary(o2, a2, b2)) => o1 == o2 && same(a1, a2) && same(b1, b2),
        (K::Unary(o1, a1), K::Unary(o2, a2)) => o1 == o2 && same(a1, a2),
        (K::Math(f1, x), K::Math(f2, y)) => {
            f1 == f2 && x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (
            K::Select {
                condition: c1,
                accept: a1,
                reject: r1,
            },
            K::Select {
                condition: c2,
                accept: a2,
                reject: r2,
            },
        ) => same(c1, c2) && same(a1, a2) && same(r1, r2),
        (
            K::As {
                value: v1,
                kind: k1,
                convert: c1,
            },
            K::As {
                value: v2,
                kind: k2,
                convert: c2,
            },
        ) => k1 == k2 && c1 == c2 && same(v1, v2),
        (K::Swizzle(s1, p1, v1), K::Swizzle(s2, p2, v2)) => s1 == s2 && p1 == p2 && same(v1, v2),
        (K::Splat(s1, v1), K::Splat(s2, v2)) => s1 == s2 && same(v1, v2),
        (K::AccessIndex(v1, i1), K::AccessIndex(v2, i2)) => i1 == i2 && same(v1, v2),
        (K::Access(v1, i1), K::Access(v2, i2)) => same(v1, v2) && same(i1, i2),
        (K::Compose(x), K::Compose(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (K::Builtin(x), K::Builtin(y)) => x == y,
        (K::Bound(x), K::Bound(y)) => x == y,
        (K::ZeroValue, K::ZeroValue) => true,
        (K::Load(p), K::Load(q)) | (K::ArrayLength(p), K::ArrayLength(q)) => same_place(p, q),
        _ => false,
    }
}

/// The same element of a global (a `var`'s place never is: it may be stored between).
fn same_place(p: &PlaceRef, q: &PlaceRef) -> bool {
    match (&p.kind, &q.kind) {
        (PlaceKind::Global(x), PlaceKind::Global(y)) => x == y,
        (PlaceKind::Index(b1, i1), PlaceKind::Index(b2, i2)) => same_place(b1, b2) && same(i1, i2),
        (PlaceKind::Field(b1, f1), PlaceKind::Field(b2, f2)) => f1 == f2 && same_place(b1, b2),
        _ => false,
    }
}
