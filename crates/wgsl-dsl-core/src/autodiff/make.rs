//! Building the nodes of derivative expressions: untyped [`Node`]s with their WGSL type
//! computed from their operands, each recording the call site of the node it differentiates.
//!
//! The few simplifications made here are exact for every value: a product with the literal
//! `1`, a negation of a negation, a negated literal. Everything else is left to the lowering's
//! folding ([`crate::lower`]) and to the GPU compiler.

use std::rc::Rc;

use naga::{BinaryOperator as B, MathFunction as M, UnaryOperator as U};

use crate::exp::{ExprKind, Lit, Node, NodeRef, PlaceKind, PlaceNode, PlaceRef};
use crate::handle::{GlobalHandle, ValueId};
use crate::kernel::stmt::Stmt;
use crate::kernel::{GlobalDecl, GlobalKind, KernelBuilder};
use crate::site::CallSite;
use crate::types::{ScalarTy, Ty};

/// Statements a derivative emits, each with the call site it is attributed to.
pub(crate) type Block = Vec<(Stmt, CallSite)>;

/// A node of `ty` built at `site`.
pub(crate) fn node(kind: ExprKind, ty: Ty, site: CallSite) -> NodeRef {
    Rc::new(Node { kind, ty, site })
}

/// `let name = value;` into `out` (unless `value` is a literal or already a value); the
/// node naming it.
pub(crate) fn bind(out: &mut Block, name: &str, value: NodeRef, site: CallSite) -> NodeRef {
    if matches!(
        value.kind,
        ExprKind::Literal(_) | ExprKind::ZeroValue | ExprKind::Bound(_)
    ) {
        return value;
    }
    let id = ValueId::fresh();
    let ty = value.ty.clone();
    out.push((
        Stmt::Let {
            id,
            name: name.to_string(),
            value,
        },
        site,
    ));
    node(ExprKind::Bound(id), ty, site)
}

/// The float scalar type of a float scalar or vector type.
pub(crate) fn float_scalar(ty: &Ty) -> Option<ScalarTy> {
    match ty {
        Ty::Scalar(s @ (ScalarTy::F32 | ScalarTy::F16))
        | Ty::Vector(_, s @ (ScalarTy::F32 | ScalarTy::F16)) => Some(*s),
        _ => None,
    }
}

/// The number of components of a scalar (1) or vector type.
pub(crate) fn width(ty: &Ty) -> u8 {
    match ty {
        Ty::Vector(n, _) => *n,
        _ => 1,
    }
}

/// `ty` with `bool` components: the type of a comparison of two `ty`s.
fn bool_shape(ty: &Ty) -> Ty {
    match ty {
        Ty::Vector(n, _) => Ty::Vector(*n, ScalarTy::Bool),
        _ => Ty::Scalar(ScalarTy::Bool),
    }
}

pub(crate) fn vector_size(n: u8) -> naga::VectorSize {
    match n {
        2 => naga::VectorSize::Bi,
        3 => naga::VectorSize::Tri,
        _ => naga::VectorSize::Quad,
    }
}

/// The literal `v` of the float scalar `s`.
fn float_lit(s: ScalarTy, v: f64) -> Lit {
    match s {
        ScalarTy::F16 => Lit::F16(half::f16::from_f64(v).to_bits()),
        _ => Lit::F32(v as f32),
    }
}

/// The float literal's value, if `n` is a scalar float literal.
fn lit_value(n: &NodeRef) -> Option<f64> {
    match n.kind {
        ExprKind::Literal(Lit::F32(v)) => Some(f64::from(v)),
        ExprKind::Literal(Lit::F16(bits)) => Some(half::f16::from_bits(bits).to_f64()),
        _ => None,
    }
}

/// Builds derivative nodes at one call site (that of the node being differentiated).
#[derive(Clone, Copy, Debug)]
pub(crate) struct At(pub CallSite);

impl At {
    fn node(&self, kind: ExprKind, ty: Ty) -> NodeRef {
        node(kind, ty, self.0)
    }

    /// The float `v` with the shape of `ty` (a float scalar or vector): a literal, splat for
    /// a vector.
    pub fn float(&self, ty: &Ty, v: f64) -> NodeRef {
        let s = float_scalar(ty).unwrap_or(ScalarTy::F32);
        let scalar = self.node(ExprKind::Literal(float_lit(s, v)), Ty::Scalar(s));
        match ty {
            Ty::Vector(n, _) => self.splat(&scalar, *n),
            _ => scalar,
        }
    }

    /// The scalar float `v` of the scalar type of `ty`.
    pub fn scalar(&self, ty: &Ty, v: f64) -> NodeRef {
        let s = float_scalar(ty).unwrap_or(ScalarTy::F32);
        self.node(ExprKind::Literal(float_lit(s, v)), Ty::Scalar(s))
    }

    /// The zero value of `ty`.
    pub fn zero(&self, ty: &Ty) -> NodeRef {
        self.node(ExprKind::ZeroValue, ty.clone())
    }

    pub fn splat(&self, scalar: &NodeRef, n: u8) -> NodeRef {
        let Ty::Scalar(s) = scalar.ty else {
            return scalar.clone();
        };
        self.node(
            ExprKind::Splat(vector_size(n), scalar.clone()),
            Ty::Vector(n, s),
        )
    }

    /// `a op b` for arithmetic: of the vector operand's type when one operand is a scalar.
    fn arith(&self, op: B, a: &NodeRef, b: &NodeRef) -> NodeRef {
        let ty = match (&a.ty, &b.ty) {
            (Ty::Scalar(_), t @ Ty::Vector(..)) => t.clone(),
            (t, _) => t.clone(),
        };
        self.node(ExprKind::Binary(op, a.clone(), b.clone()), ty)
    }

    pub fn add(&self, a: &NodeRef, b: &NodeRef) -> NodeRef {
        self.arith(B::Add, a, b)
    }

    pub fn sub(&self, a: &NodeRef, b: &NodeRef) -> NodeRef {
        self.arith(B::Subtract, a, b)
    }

    /// `a * b`; a literal `1` operand leaves the other (exact for every value).
    pub fn mul(&self, a: &NodeRef, b: &NodeRef) -> NodeRef {
        if lit_value(a) == Some(1.0) && width(&b.ty) >= width(&a.ty) {
            return b.clone();
        }
        if lit_value(b) == Some(1.0) && width(&a.ty) >= width(&b.ty) {
            return a.clone();
        }
        if lit_value(a) == Some(-1.0) && width(&b.ty) >= width(&a.ty) {
            return self.neg(b);
        }
        if lit_value(b) == Some(-1.0) && width(&a.ty) >= width(&b.ty) {
            return self.neg(a);
        }
        self.arith(B::Multiply, a, b)
    }

    /// `a * b` of a vector and a matrix, or a matrix and a vector: the product's vector type.
    pub fn mul_typed(&self, a: &NodeRef, b: &NodeRef, ty: Ty) -> NodeRef {
        self.node(ExprKind::Binary(B::Multiply, a.clone(), b.clone()), ty)
    }

    pub fn div(&self, a: &NodeRef, b: &NodeRef) -> NodeRef {
        if lit_value(b) == Some(1.0) && width(&a.ty) >= width(&b.ty) {
            return a.clone();
        }
        self.arith(B::Divide, a, b)
    }

    /// `-a`; `-(-a)` is `a`, `-literal` a literal.
    pub fn neg(&self, a: &NodeRef) -> NodeRef {
        match &a.kind {
            ExprKind::Unary(U::Negate, inner) => inner.clone(),
            ExprKind::Literal(Lit::F32(v)) => {
                self.node(ExprKind::Literal(Lit::F32(-v)), a.ty.clone())
            }
            ExprKind::Literal(Lit::F16(bits)) => {
                self.node(ExprKind::Literal(Lit::F16(bits ^ 0x8000)), a.ty.clone())
            }
            _ => self.node(ExprKind::Unary(U::Negate, a.clone()), a.ty.clone()),
        }
    }

    /// `op(a, b)` for a comparison: `bool` of the operands' shape.
    pub fn cmp(&self, op: B, a: &NodeRef, b: &NodeRef) -> NodeRef {
        let shape = if width(&a.ty) >= width(&b.ty) {
            &a.ty
        } else {
            &b.ty
        };
        self.node(
            ExprKind::Binary(op, a.clone(), b.clone()),
            bool_shape(shape),
        )
    }

    /// `a & b` of two `bool`s or `bool` vectors (not short-circuiting).
    pub fn and(&self, a: &NodeRef, b: &NodeRef) -> NodeRef {
        self.node(ExprKind::Binary(B::And, a.clone(), b.clone()), a.ty.clone())
    }

    /// `select(reject, accept, condition)`, of `accept`'s type.
    pub fn select(&self, condition: &NodeRef, accept: &NodeRef, reject: &NodeRef) -> NodeRef {
        self.node(
            ExprKind::Select {
                condition: condition.clone(),
                accept: accept.clone(),
                reject: reject.clone(),
            },
            accept.ty.clone(),
        )
    }

    /// `1` where `condition` holds, else `0`, of the float type `ty`: the derivative of a
    /// piecewise-linear function's pieces.
    pub fn indicator(&self, condition: &NodeRef, ty: &Ty) -> NodeRef {
        self.select(condition, &self.float(ty, 1.0), &self.float(ty, 0.0))
    }

    /// A math function of `args`, of type `ty`.
    pub fn math(&self, fun: M, args: &[&NodeRef], ty: &Ty) -> NodeRef {
        self.node(
            ExprKind::Math(fun, args.iter().map(|a| (*a).clone()).collect()),
            ty.clone(),
        )
    }

    /// A math function of one argument, of the argument's type.
    pub fn math1(&self, fun: M, a: &NodeRef) -> NodeRef {
        self.math(fun, &[a], &a.ty)
    }

    /// `dot(a, b)` of two float vectors: a scalar.
    pub fn dot(&self, a: &NodeRef, b: &NodeRef) -> NodeRef {
        let s = float_scalar(&a.ty).unwrap_or(ScalarTy::F32);
        self.math(M::Dot, &[a, b], &Ty::Scalar(s))
    }

    /// Component `i` of a vector (the vector itself for a scalar).
    pub fn component(&self, v: &NodeRef, i: u32) -> NodeRef {
        match v.ty {
            Ty::Vector(_, s) => self.node(ExprKind::AccessIndex(v.clone(), i), Ty::Scalar(s)),
            _ => v.clone(),
        }
    }

    /// The sum of the components of `v` (`v` itself for a scalar), left to right.
    pub fn sum_components(&self, v: &NodeRef) -> NodeRef {
        let n = width(&v.ty);
        let mut sum = self.component(v, 0);
        for i in 1..u32::from(n) {
            sum = self.add(&sum, &self.component(v, i));
        }
        sum
    }

    /// `v` with the shape of `ty`: its components summed for a scalar `ty` (the adjoint of a
    /// scalar broadcast over a vector), splat for a vector `ty` (a tangent), else itself.
    pub fn fit(&self, v: &NodeRef, ty: &Ty) -> NodeRef {
        match (&v.ty, ty) {
            (Ty::Vector(..), Ty::Scalar(_)) => self.sum_components(v),
            (Ty::Scalar(_), Ty::Vector(n, _)) => self.splat(v, *n),
            _ => v.clone(),
        }
    }

    /// A vector of type `ty` from its components (scalars).
    pub fn compose(&self, ty: &Ty, parts: Vec<NodeRef>) -> NodeRef {
        self.node(ExprKind::Compose(parts), ty.clone())
    }

    /// `convert(v)` to the float type `ty` (`f32(v)`, `f16(v)`), or `v` if it has that type.
    pub fn convert(&self, v: &NodeRef, ty: &Ty) -> NodeRef {
        if v.ty == *ty {
            return v.clone();
        }
        let width = match float_scalar(ty) {
            Some(ScalarTy::F16) => 2,
            _ => 4,
        };
        self.node(
            ExprKind::As {
                value: v.clone(),
                kind: naga::ScalarKind::Float,
                convert: Some(width),
            },
            ty.clone(),
        )
    }

    /// The balanced sum of `terms` (all of one type): pairwise, so that its depth is
    /// `log2(terms.len())`, however many uses a node has.
    pub fn sum(&self, mut terms: Vec<NodeRef>) -> Option<NodeRef> {
        while terms.len() > 1 {
            let mut next = Vec::with_capacity(terms.len().div_ceil(2));
            let mut it = terms.into_iter();
            while let Some(a) = it.next() {
                match it.next() {
                    Some(b) => next.push(self.add(&a, &b)),
                    None => next.push(a),
                }
            }
            terms = next;
        }
        terms.pop()
    }
}

/// The workgroup variable `name: ty` declared in `b`.
pub(crate) fn declare_workgroup(
    b: &mut KernelBuilder,
    name: &str,
    ty: Ty,
    site: CallSite,
) -> GlobalHandle {
    b.capabilities |= ty.capabilities();
    b.globals.push(GlobalDecl {
        name: name.to_string(),
        ty,
        kind: GlobalKind::Workgroup,
        site,
    });
    GlobalHandle {
        builder: b.id,
        index: b.globals.len() - 1,
    }
}

/// A workgroup `array<f32, len>` named `name` declared in `b`, as a place.
pub(crate) fn declare_array(
    b: &mut KernelBuilder,
    name: &str,
    len: u32,
    site: CallSite,
) -> PlaceRef {
    let ty = Ty::Array {
        elem: Box::new(Ty::Scalar(ScalarTy::F32)),
        len: Some(len),
    };
    let handle = declare_workgroup(b, name, ty.clone(), site);
    Rc::new(PlaceNode {
        kind: PlaceKind::Global(handle),
        ty,
        site,
    })
}

/// The private `var` `var` of type `ty`, as a place.
pub(crate) fn local(var: ValueId, ty: &Ty, site: CallSite) -> PlaceRef {
    Rc::new(PlaceNode {
        kind: PlaceKind::Local(var),
        ty: ty.clone(),
        site,
    })
}

/// A load of `place`.
pub(crate) fn load(place: &PlaceRef, site: CallSite) -> NodeRef {
    node(ExprKind::Load(place.clone()), place.ty.clone(), site)
}

/// `u32`.
pub(crate) fn u32_ty() -> Ty {
    Ty::Scalar(ScalarTy::U32)
}

/// `i` as a `u32` (`u32(i)`; `i` itself if it is one).
pub(crate) fn as_u32(i: &NodeRef, site: CallSite) -> NodeRef {
    if i.ty == u32_ty() {
        return i.clone();
    }
    node(
        ExprKind::As {
            value: i.clone(),
            kind: naga::ScalarKind::Uint,
            convert: None,
        },
        u32_ty(),
        site,
    )
}

/// The `u32` literal `v`.
pub(crate) fn u32_lit(v: u32, site: CallSite) -> NodeRef {
    node(ExprKind::Literal(Lit::U32(v)), u32_ty(), site)
}
