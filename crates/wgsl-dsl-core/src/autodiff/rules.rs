//! The derivative of every operation, as one linear map per operand ([`Lin`]). The table is
//! in the module docs of [`crate::autodiff`]; each rule below is the derivative of the
//! function's definition in the WGSL spec (§8.7 arithmetic, §17.5 numeric built-ins), with
//! the subgradients chosen at kinks written next to it.

use std::f64::consts::{LN_2, PI};

use naga::{BinaryOperator as B, MathFunction as M, UnaryOperator as U};

use super::error::NotDifferentiable;
use super::graph::Graph;
use super::linear::Lin;
use super::make::{At, float_scalar};
use crate::exp::{ExprKind, NodeRef};
use crate::kernel::values::ValueDef;
use crate::types::{ScalarTy, Ty};

/// What a dependent operand of a rule is.
enum Operand {
    /// Not dependent on the variables, or an integer or `bool` (a constant: its derivative
    /// is zero).
    Constant,
    /// A float scalar or vector that depends on the variables.
    Float,
}

fn not_diff(
    operation: impl Into<String>,
    reason: impl Into<String>,
    n: &NodeRef,
) -> NotDifferentiable {
    NotDifferentiable {
        operation: operation.into(),
        reason: reason.into(),
        site: n.site,
    }
}

/// What `c`, an operand, is to a rule; an error where it depends on the variables but is a
/// value differentiation does not handle (a matrix, array or struct).
fn operand(g: &Graph<'_>, c: &NodeRef) -> Result<Operand, NotDifferentiable> {
    if !g.depends(c) {
        return Ok(Operand::Constant);
    }
    match &c.ty {
        Ty::Scalar(ScalarTy::F32 | ScalarTy::F16)
        | Ty::Vector(_, ScalarTy::F32 | ScalarTy::F16) => Ok(Operand::Float),
        Ty::Scalar(_) | Ty::Vector(..) => Ok(Operand::Constant),
        other => Err(not_diff(
            format!("a {} value", other.wgsl_name()),
            "derivatives are taken through float scalars and vectors only; a matrix, array, \
             struct or cooperative matrix that depends on the variables cannot be differentiated",
            c,
        )),
    }
}

/// The rules' output: the dependent float operands with their linear maps.
struct Terms<'g, 'k> {
    g: &'g Graph<'k>,
    out: Vec<(NodeRef, Lin)>,
}

impl Terms<'_, '_> {
    /// Add `lin` for `c` if `c` is a dependent float; `lin` is built only then.
    fn term(&mut self, c: &NodeRef, lin: impl FnOnce() -> Lin) -> Result<(), NotDifferentiable> {
        if let Operand::Float = operand(self.g, c)? {
            self.out.push((c.clone(), lin()));
        }
        Ok(())
    }

    /// Error if `c` depends on the variables: `operation` cannot pass its derivative on.
    fn refuse(
        &self,
        c: &NodeRef,
        n: &NodeRef,
        operation: &str,
        reason: &str,
    ) -> Result<(), NotDifferentiable> {
        if self.g.depends(c) {
            return Err(not_diff(operation, reason, n));
        }
        Ok(())
    }
}

/// The linear maps of `n`'s derivative with respect to each of its operands that depends on
/// the variables (float ones; integer and `bool` operands are constants). `n` is not a
/// variable itself.
pub(crate) fn linearize(
    n: &NodeRef,
    g: &Graph<'_>,
) -> Result<Vec<(NodeRef, Lin)>, NotDifferentiable> {
    let mut t = Terms { g, out: Vec::new() };
    let at = At(n.site);
    let float_node = float_scalar(&n.ty).is_some();
    match &n.kind {
        ExprKind::Literal(_)
        | ExprKind::ZeroValue
        | ExprKind::Builtin(_)
        | ExprKind::Param { .. }
        | ExprKind::ArrayLength(_)
        | ExprKind::TextureDimensions { .. }
        | ExprKind::Relational(..)
        | ExprKind::Invalid(_) => {}
        ExprKind::Binary(op, a, b) => {
            if !float_node {
                // Comparisons, logic and integer arithmetic are piecewise constant (zero);
                // a matrix result gets its derivative from its user, or an error there.
                return Ok(t.out);
            }
            if is_matrix(&a.ty) || is_matrix(&b.ty) {
                // `m * v` or `v * m` with a constant matrix.
                if is_matrix(&a.ty) {
                    operand(g, a)?;
                    t.term(b, || Lin::MatLeft(a.clone()))?;
                } else {
                    operand(g, b)?;
                    t.term(a, || Lin::MatRight(b.clone()))?;
                }
                return Ok(t.out);
            }
            match op {
                B::Add => {
                    t.term(a, || Lin::Scale(None))?;
                    t.term(b, || Lin::Scale(None))?;
                }
                B::Subtract => {
                    t.term(a, || Lin::Scale(None))?;
                    t.term(b, || Lin::Scale(Some(at.scalar(&n.ty, -1.0))))?;
                }
                B::Multiply => {
                    t.term(a, || Lin::Scale(Some(b.clone())))?;
                    t.term(b, || Lin::Scale(Some(a.clone())))?;
                }
                B::Divide => {
                    // d(a / b) = da / b - (a / b) db / b
                    t.term(a, || Lin::DivBy(b.clone()))?;
                    t.term(b, || Lin::Scale(Some(at.neg(&at.div(n, b)))))?;
                }
                B::Modulo => {
                    // a % b = a - b trunc(a / b) (WGSL spec §8.7): trunc is piecewise constant.
                    t.term(a, || Lin::Scale(None))?;
                    t.term(b, || {
                        Lin::Scale(Some(at.neg(&at.math1(M::Trunc, &at.div(a, b)))))
                    })?;
                }
                _ => {}
            }
        }
        ExprKind::Unary(op, a) => {
            if float_node && *op == U::Negate {
                t.term(a, || Lin::Scale(Some(at.scalar(&n.ty, -1.0))))?;
            }
        }
        ExprKind::Math(fun, args) => math(*fun, args, n, &mut t, at)?,
        ExprKind::Select {
            accept,
            reject,
            condition,
            ..
        } => {
            t.term(accept, || Lin::Mask {
                condition: condition.clone(),
                when: true,
            })?;
            t.term(reject, || Lin::Mask {
                condition: condition.clone(),
                when: false,
            })?;
        }
        ExprKind::As {
            value,
            convert,
            kind,
        } => {
            let float_value = float_scalar(&value.ty).is_some();
            match convert {
                None if *kind == naga::ScalarKind::Float => t.refuse(
                    value,
                    n,
                    "bitcast to a float type",
                    "a value's bits are not a differentiable function of it",
                )?,
                Some(_) if float_node && float_value => t.term(value, || Lin::Convert)?,
                // To an integer or `bool` (piecewise constant), or from one (a constant).
                _ => {}
            }
        }
        ExprKind::Compose(parts) => {
            if float_node {
                let mut offset = 0u32;
                for p in parts {
                    let o = offset;
                    t.term(p, || Lin::Part { offset: o })?;
                    offset += u32::from(super::make::width(&p.ty));
                }
            } else {
                for p in parts {
                    operand(g, p)?;
                }
            }
        }
        ExprKind::Splat(_, a) => {
            let n_width = super::make::width(&n.ty);
            t.term(a, || Lin::Splat(n_width))?;
        }
        ExprKind::Swizzle(size, pattern, a) => t.term(a, || Lin::Swizzle(*size, *pattern))?,
        ExprKind::AccessIndex(base, index) => access_index(base, *index, n, &mut t)?,
        ExprKind::Access(base, index) => match &base.ty {
            Ty::Vector(..) => t.term(base, || Lin::DynComponent(index.clone()))?,
            _ => {
                operand(g, base)?;
            }
        },
        ExprKind::Load(place) | ExprKind::TextureLoad { texture: place, .. } => {
            if g.depends_through_memory(n) {
                let what = match g.place_name(place) {
                    Some(name) => format!("a load of `{name}`"),
                    None => "a load".to_string(),
                };
                return Err(not_diff(
                    what,
                    "the kernel stores values that depend on the variables into the memory it \
                     reads, and expression differentiation does not follow memory: bind the \
                     value with `let_` and differentiate with respect to it, or derive the \
                     whole kernel (`autodiff::derive`)",
                    n,
                ));
            }
            // Otherwise only its index depends on the variables: piecewise constant.
        }
        ExprKind::CoopLoad { .. } | ExprKind::CoopMultiplyAdd(..) => {
            if g.depends(n) {
                return Err(not_diff(
                    "a cooperative-matrix operation",
                    "cooperative matrices are not differentiated; give the product a custom \
                     derivative",
                    n,
                ));
            }
        }
        ExprKind::Bound(id) => match g.value_def(*id) {
            Some(ValueDef::Let { value, .. }) => t.term(value, || Lin::Scale(None))?,
            Some(ValueDef::Call { .. }) => {
                let ops = g.operands(n);
                if g.is_inlined(*id) {
                    if let Some(result) = ops.first() {
                        t.term(result, || Lin::Scale(None))?;
                    }
                } else if ops.iter().any(|c| g.depends(c)) {
                    return Err(not_diff(
                        "a call of a helper function",
                        "its body is not `let`s and one `return`, so it is not inlined into the \
                         derivative; derive the kernel (`autodiff::derive`), or write the \
                         function as a Rust function of `Exp`s",
                        n,
                    ));
                }
            }
            Some(ValueDef::Opaque { operation, .. }) if g.depends(n) => {
                return Err(not_diff(
                    operation.clone(),
                    "it has no derivative rule (it is a statement: an atomic, subgroup or \
                     workgroup operation)",
                    n,
                ));
            }
            Some(ValueDef::Opaque { .. }) | None => {}
        },
    }
    Ok(t.out)
}

fn is_matrix(ty: &Ty) -> bool {
    matches!(ty, Ty::Matrix { .. })
}

/// `base.index`: a vector component, or a member of `modf`'s or `frexp`'s result.
fn access_index(
    base: &NodeRef,
    index: u32,
    n: &NodeRef,
    t: &mut Terms<'_, '_>,
) -> Result<(), NotDifferentiable> {
    let g = t.g;
    if let Ty::Vector(..) = base.ty {
        return t.term(base, || Lin::Component(index));
    }
    if !g.depends(base) {
        return Ok(());
    }
    // The struct results of `modf` and `frexp`, maybe through `let`s.
    let mut def = base.clone();
    while let ExprKind::Bound(id) = def.kind {
        match g.value_def(id) {
            Some(ValueDef::Let { value, .. }) => def = value.clone(),
            _ => break,
        }
    }
    let at = At(n.site);
    match &def.kind {
        ExprKind::Math(M::Modf, args) => {
            // fract = e - trunc(e): 1; whole = trunc(e): piecewise constant.
            if index == 0 {
                t.term(&args[0], || Lin::Scale(None))?;
            }
            Ok(())
        }
        ExprKind::Math(M::Frexp, args) => {
            // fract = e * 2^-exp with exp piecewise constant: 2^-exp.
            if index == 0 {
                let e = &args[0];
                t.term(e, || {
                    let exp_ty = match &e.ty {
                        Ty::Vector(k, _) => Ty::Vector(*k, ScalarTy::I32),
                        _ => Ty::Scalar(ScalarTy::I32),
                    };
                    let exp = super::make::node(
                        ExprKind::AccessIndex(base.clone(), 1),
                        exp_ty.clone(),
                        n.site,
                    );
                    let minus = super::make::node(ExprKind::Unary(U::Negate, exp), exp_ty, n.site);
                    Lin::Scale(Some(at.math(
                        M::Ldexp,
                        &[&at.float(&e.ty, 1.0), &minus],
                        &e.ty,
                    )))
                })?;
            }
            Ok(())
        }
        _ => {
            operand(g, base)?;
            Err(not_diff(
                "a member of a struct value",
                "derivatives are taken through float scalars and vectors only",
                n,
            ))
        }
    }
}

/// The numeric built-ins (WGSL spec §17.5).
fn math(
    fun: M,
    args: &[NodeRef],
    n: &NodeRef,
    t: &mut Terms<'_, '_>,
    at: At,
) -> Result<(), NotDifferentiable> {
    let x = &args[0];
    let ty = &n.ty;
    let one = || at.float(ty, 1.0);
    let scale = |p: NodeRef| Lin::Scale(Some(p));
    if float_scalar(ty).is_none() {
        // Integer or `bool` results, and packing (float to `u32`): piecewise constant. A
        // matrix or struct result gets its derivative from its user (transpose, determinant,
        // modf, frexp), or an error there.
        return Ok(());
    }
    match fun {
        // ---- one argument, componentwise ----
        // |x|' = sign(x); at 0, sign(0) = 0 (the subgradient 0).
        M::Abs => t.term(x, || scale(at.math1(M::Sign, x)))?,
        // Piecewise constant: sign, floor, ceil, round, trunc.
        M::Sign | M::Floor | M::Ceil | M::Round | M::Trunc => {}
        // fract(x) = x - floor(x).
        M::Fract => t.term(x, || Lin::Scale(None))?,
        // saturate(x) = clamp(x, 0, 1): 1 strictly inside (0, 1), 0 at and beyond the bounds.
        M::Saturate => t.term(x, || {
            let inside = at.and(
                &at.cmp(B::Greater, x, &at.float(ty, 0.0)),
                &at.cmp(B::Less, x, &one()),
            );
            scale(at.indicator(&inside, ty))
        })?,
        M::Exp => t.term(x, || scale(n.clone()))?,
        M::Exp2 => t.term(x, || scale(at.mul(n, &at.scalar(ty, LN_2))))?,
        M::Log => t.term(x, || Lin::DivBy(x.clone()))?,
        M::Log2 => t.term(x, || scale(at.div(&at.scalar(ty, 1.0 / LN_2), x)))?,
        // sqrt(x)' = 1 / (2 sqrt(x)).
        M::Sqrt => t.term(x, || scale(at.div(&at.scalar(ty, 0.5), n)))?,
        // inverseSqrt(x)' = -x^(-3/2) / 2 = -y^3 / 2.
        M::InverseSqrt => t.term(x, || {
            scale(at.mul(&at.scalar(ty, -0.5), &at.mul(n, &at.mul(n, n))))
        })?,
        M::Sin => t.term(x, || scale(at.math1(M::Cos, x)))?,
        M::Cos => t.term(x, || scale(at.neg(&at.math1(M::Sin, x))))?,
        // tan' = 1 + tan^2.
        M::Tan => t.term(x, || scale(at.add(&one(), &at.mul(n, n))))?,
        // asin' = 1 / sqrt(1 - x^2), acos' = -asin'.
        M::Asin => t.term(x, || {
            scale(at.math1(M::InverseSqrt, &at.sub(&one(), &at.mul(x, x))))
        })?,
        M::Acos => t.term(x, || {
            scale(at.neg(&at.math1(M::InverseSqrt, &at.sub(&one(), &at.mul(x, x)))))
        })?,
        M::Atan => t.term(x, || Lin::DivBy(at.add(&one(), &at.mul(x, x))))?,
        M::Sinh => t.term(x, || scale(at.math1(M::Cosh, x)))?,
        M::Cosh => t.term(x, || scale(at.math1(M::Sinh, x)))?,
        // tanh' = 1 - tanh^2.
        M::Tanh => t.term(x, || scale(at.sub(&one(), &at.mul(n, n))))?,
        M::Asinh => t.term(x, || {
            scale(at.math1(M::InverseSqrt, &at.add(&at.mul(x, x), &one())))
        })?,
        M::Acosh => t.term(x, || {
            scale(at.math1(M::InverseSqrt, &at.sub(&at.mul(x, x), &one())))
        })?,
        M::Atanh => t.term(x, || Lin::DivBy(at.sub(&one(), &at.mul(x, x))))?,
        M::Radians => t.term(x, || scale(at.scalar(ty, PI / 180.0)))?,
        M::Degrees => t.term(x, || scale(at.scalar(ty, 180.0 / PI)))?,
        // Rounding to f16's precision is treated as the float conversion it is (1), as
        // `f16(x)` is.
        M::QuantizeToF16 => t.term(x, || Lin::Scale(None))?,
        // ---- two or three arguments, componentwise ----
        // Ties go to the second operand: max(x, 0) at x = 0 passes nothing to x.
        M::Max => {
            let (a, b) = (x, &args[1]);
            t.term(a, || scale(at.indicator(&at.cmp(B::Greater, a, b), ty)))?;
            t.term(b, || scale(at.indicator(&at.cmp(B::LessEqual, a, b), ty)))?;
        }
        M::Min => {
            let (a, b) = (x, &args[1]);
            t.term(a, || scale(at.indicator(&at.cmp(B::Less, a, b), ty)))?;
            t.term(b, || {
                scale(at.indicator(&at.cmp(B::GreaterEqual, a, b), ty))
            })?;
        }
        // clamp(e, lo, hi) = min(max(e, lo), hi) (WGSL spec §17.5.10) with the ties above:
        // e gets 1 strictly inside (lo, hi), lo at e <= lo, hi where the result is hi.
        M::Clamp => {
            let (e, lo, hi) = (x, &args[1], &args[2]);
            let below_hi = || at.cmp(B::Less, n, hi);
            t.term(e, || {
                scale(at.indicator(&at.and(&at.cmp(B::Greater, e, lo), &below_hi()), ty))
            })?;
            t.term(lo, || {
                scale(at.indicator(&at.and(&at.cmp(B::LessEqual, e, lo), &below_hi()), ty))
            })?;
            t.term(hi, || {
                scale(at.indicator(&at.cmp(B::GreaterEqual, n, hi), ty))
            })?;
        }
        // pow(b, e)' = (e b^(e-1), b^e ln b).
        M::Pow => {
            let (b, e) = (x, &args[1]);
            t.term(b, || {
                scale(at.mul(e, &at.math(M::Pow, &[b, &at.sub(e, &one())], ty)))
            })?;
            t.term(e, || scale(at.mul(n, &at.math1(M::Log, b))))?;
        }
        // atan2(y, x)' = (x, -y) / (x^2 + y^2); undefined at the origin, as atan2 is.
        M::Atan2 => {
            let (y, xx) = (x, &args[1]);
            let r = || at.add(&at.mul(xx, xx), &at.mul(y, y));
            t.term(y, || scale(at.div(xx, &r())))?;
            t.term(xx, || scale(at.neg(&at.div(y, &r()))))?;
        }
        // step is piecewise constant.
        M::Step => {}
        // mix(a, b, s) = a (1 - s) + b s.
        M::Mix => {
            let (a, b, s) = (x, &args[1], &args[2]);
            t.term(a, || scale(at.sub(&one(), s)))?;
            t.term(b, || scale(s.clone()))?;
            t.term(s, || scale(at.sub(b, a)))?;
        }
        M::Fma => {
            let (a, b, c) = (x, &args[1], &args[2]);
            t.term(a, || scale(b.clone()))?;
            t.term(b, || scale(a.clone()))?;
            t.term(c, || Lin::Scale(None))?;
        }
        // smoothstep(lo, hi, x) = s^2 (3 - 2 s), s = clamp((x - lo) / (hi - lo), 0, 1):
        // with g = 6 s (1 - s) / (hi - lo), the partials are (g (s - 1), -g s, g).
        M::SmoothStep => {
            let (lo, hi, e) = (x, &args[1], &args[2]);
            let width = at.sub(hi, lo);
            let s = at.math(
                M::Clamp,
                &[&at.div(&at.sub(e, lo), &width), &at.float(ty, 0.0), &one()],
                ty,
            );
            let g = at.div(
                &at.mul(&at.scalar(ty, 6.0), &at.mul(&s, &at.sub(&one(), &s))),
                &width,
            );
            t.term(lo, || scale(at.mul(&g, &at.sub(&s, &one()))))?;
            t.term(hi, || scale(at.neg(&at.mul(&g, &s))))?;
            t.term(e, || scale(g.clone()))?;
        }
        // ldexp(e1, e2) = e1 2^e2; e2 is an integer.
        M::Ldexp => t.term(x, || scale(at.math(M::Ldexp, &[&one(), &args[1]], ty)))?,
        // ---- vectors ----
        M::Dot => {
            let (a, b) = (x, &args[1]);
            t.term(a, || Lin::Dot(b.clone()))?;
            t.term(b, || Lin::Dot(a.clone()))?;
        }
        // length(e)' = e / length(e), and 0 at the zero vector (a subgradient); |x|' for
        // a scalar.
        M::Length => match x.ty {
            Ty::Vector(..) => t.term(x, || Lin::Dot(unit_or_zero(x, n, at)))?,
            _ => t.term(x, || scale(at.math1(M::Sign, x)))?,
        },
        M::Distance => {
            let (a, b) = (x, &args[1]);
            let d = at.sub(a, b);
            match a.ty {
                Ty::Vector(..) => {
                    let w = unit_or_zero(&d, n, at);
                    t.term(a, || Lin::Dot(w.clone()))?;
                    t.term(b, || Lin::Dot(at.neg(&w)))?;
                }
                _ => {
                    let s = at.math1(M::Sign, &d);
                    t.term(a, || scale(s.clone()))?;
                    t.term(b, || scale(at.neg(&s)))?;
                }
            }
        }
        // normalize(e)' t = (t - n dot(n, t)) / length(e), n = normalize(e).
        M::Normalize => t.term(x, || {
            let len = at.math(
                M::Length,
                &[x],
                &Ty::Scalar(float_scalar(ty).unwrap_or(ScalarTy::F32)),
            );
            let inv = at.div(&at.scalar(ty, 1.0), &len);
            Lin::RankOne {
                alpha: Some(inv.clone()),
                u: at.neg(&at.mul(n, &inv)),
                v: n.clone(),
            }
        })?,
        M::Cross => {
            let (a, b) = (x, &args[1]);
            t.term(a, || Lin::CrossLeft(b.clone()))?;
            t.term(b, || Lin::CrossRight(a.clone()))?;
        }
        // faceForward(e1, e2, e3) = e1 if dot(e2, e3) < 0, else -e1: e2, e3 piecewise constant.
        M::FaceForward => t.term(x, || {
            let toward = at.cmp(B::Less, &at.dot(&args[1], &args[2]), &at.scalar(ty, 0.0));
            scale(at.select(&toward, &at.scalar(ty, 1.0), &at.scalar(ty, -1.0)))
        })?,
        // reflect(i, m) = i - 2 dot(m, i) m.
        M::Reflect => {
            let (i, m) = (x, &args[1]);
            let minus_two = || at.scalar(ty, -2.0);
            t.term(i, || {
                Lin::RankOne {
                    alpha: None,
                    u: at.mul(&minus_two(), m),
                    v: m.clone(),
                }
                .plus_identity(at, ty)
            })?;
            t.term(m, || Lin::RankOne {
                alpha: Some(at.mul(&minus_two(), &at.dot(m, i))),
                u: at.mul(&minus_two(), m),
                v: i.clone(),
            })?;
        }
        M::Refract => refract(args, n, t, at)?,
        // Matrices, packed data and the bit-level built-ins: results are integers or matrices
        // (no rule needed), or floats unpacked from integer bits.
        M::Unpack4x8snorm
        | M::Unpack4x8unorm
        | M::Unpack2x16snorm
        | M::Unpack2x16unorm
        | M::Unpack2x16float => t.refuse(
            x,
            n,
            consteval_name(fun),
            "it unpacks floats from the bits of an integer, which are not a differentiable \
             function of the variables",
        )?,
        M::Determinant | M::Transpose | M::Inverse | M::Outer => {
            operand(t.g, x)?;
        }
        other => {
            for a in args {
                t.refuse(
                    a,
                    n,
                    consteval_name(other),
                    "it has no derivative rule here",
                )?;
            }
        }
    }
    Ok(())
}

/// The WGSL name of a built-in, for messages.
fn consteval_name(fun: M) -> &'static str {
    match fun {
        M::Unpack4x8snorm => "unpack4x8snorm",
        M::Unpack4x8unorm => "unpack4x8unorm",
        M::Unpack2x16snorm => "unpack2x16snorm",
        M::Unpack2x16unorm => "unpack2x16unorm",
        M::Unpack2x16float => "unpack2x16float",
        other => crate::consteval::math_name(other),
    }
}

/// `e / |e|`, or the zero vector where `|e| = 0` (`len` is `length(e)`).
fn unit_or_zero(e: &NodeRef, len: &NodeRef, at: At) -> NodeRef {
    let positive = at.cmp(B::Greater, len, &at.scalar(&len.ty, 0.0));
    at.select(&positive, &at.div(e, len), &at.float(&e.ty, 0.0))
}

impl Lin {
    /// `J + I` for a [`Lin::RankOne`] without `alpha`: `alpha = 1`.
    fn plus_identity(self, at: At, ty: &Ty) -> Lin {
        match self {
            Lin::RankOne { alpha: None, u, v } => Lin::RankOne {
                alpha: Some(at.scalar(ty, 1.0)),
                u,
                v,
            },
            other => other,
        }
    }
}

/// `refract(i, m, eta)` (WGSL spec §17.5): with `d = dot(m, i)`, `k = 1 - eta^2 (1 - d^2)`,
/// `s = sqrt(k)`, `mu = eta d + s`, the result is `eta i - mu m` where `k > 0` (0 where
/// `k < 0`, and the derivative 0 there). `dmu/dd = eta + eta^2 d / s = c`,
/// `dmu/deta = d - eta (1 - d^2) / s`:
/// `J_i t = eta t - c m dot(m, t)`, `J_m t = -mu t - c m dot(i, t)`,
/// `J_eta t = (i - m dmu/deta) t`.
fn refract(
    args: &[NodeRef],
    n: &NodeRef,
    t: &mut Terms<'_, '_>,
    at: At,
) -> Result<(), NotDifferentiable> {
    let (i, m, eta) = (&args[0], &args[1], &args[2]);
    let _ = n;
    let s_ty = &eta.ty;
    let one = at.scalar(s_ty, 1.0);
    let d = at.dot(m, i);
    let one_minus_d2 = at.sub(&one, &at.mul(&d, &d));
    let k = at.sub(&one, &at.mul(&at.mul(eta, eta), &one_minus_d2));
    let s = at.math1(M::Sqrt, &k);
    let mu = at.add(&at.mul(eta, &d), &s);
    let c = at.add(eta, &at.div(&at.mul(&at.mul(eta, eta), &d), &s));
    let positive = at.cmp(B::Greater, &k, &at.scalar(s_ty, 0.0));
    let masked = |lin: Lin| Lin::Masked(positive.clone(), Box::new(lin));
    t.term(i, || {
        masked(Lin::RankOne {
            alpha: Some(eta.clone()),
            u: at.neg(&at.mul(&c, m)),
            v: m.clone(),
        })
    })?;
    t.term(m, || {
        masked(Lin::RankOne {
            alpha: Some(at.neg(&mu)),
            u: at.neg(&at.mul(&c, m)),
            v: i.clone(),
        })
    })?;
    t.term(eta, || {
        let dmu = at.sub(&d, &at.div(&at.mul(eta, &one_minus_d2), &s));
        masked(Lin::Scale(Some(at.sub(i, &at.mul(&dmu, m)))))
    })?;
    Ok(())
}
