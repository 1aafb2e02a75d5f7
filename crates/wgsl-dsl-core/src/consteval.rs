//! Const-expressions: operations whose operands are all literals.
//!
//! WGSL evaluates such an expression when the shader module is created, and an evaluation that
//! WGSL does not define is a *shader-creation error* (WGSL spec §8.1.1 "const Expressions",
//! §15.7.2 "Differences from IEEE-754": the Finite Math Assumption). naga's WGSL front end
//! follows these rules, so a kernel whose WGSL contains, say, `1f / 0f` does not re-parse. This
//! module evaluates literal-only subtrees of a kernel while it is lowered and reports every such
//! case as [`BuildError::ConstExpression`](crate::BuildError::ConstExpression) at the Rust call
//! site that built the operation:
//!
//! - a floating-point result that overflows or is infinite or NaN (`1.0 / 0.0`, `exp(100.0)`,
//!   `f32::MAX * 2.0`, `0.0 % 0.0`), including conversions to `f16` out of its range and
//!   `bitcast`s that produce a NaN or an infinity;
//! - an argument outside a built-in's domain (`sqrt(-1.0)`, `log(0.0)`, `pow(-2.0, 0.5)`,
//!   `acos(2.0)`, `normalize` of the zero vector, ...);
//! - integer division or remainder by zero, `i32::MIN / -1` and `i32::MIN % -1` (§8.7);
//! - shifts by 32 or more, and left shifts of literals that overflow (§8.9);
//! - `clamp` with `low > high`, `smoothstep` with equal edges, `extractBits`/`insertBits` with
//!   `offset + count > 32`, and out-of-bounds literal indices (§8.5) — these four also when only
//!   the operands named by the rule are literals (`clamp(x, 2.0, 1.0)`, `x / 0`, `x << 32u`,
//!   `a[7]` on an `array<f32, 4>`), as WGSL specifies. A vector divisor or shift amount with
//!   some literal components (`x << vec2(n, 32u)`) is rejected too, as naga's validator does.
//!
//! Concrete integer overflow (`i32::MAX + 1`) wraps (WGSL spec §6.2.4 "Integer Types") and is
//! not an error. Both operands of `&&`/`||` and all three of `select` are evaluated, so an error
//! in an operand WGSL would skip is still reported (stricter than WGSL, as naga's front end is).
//!
//! The rules are the WGSL spec's; floating-point results are computed in the operand type with
//! Rust's IEEE-754 arithmetic (correctly rounded for `+ - * /`), within the accuracy the spec
//! allows for the others (§15.7.3 "Floating Point Accuracy").

use std::fmt;

use naga::{BinaryOperator as B, MathFunction as M, RelationalFunction as R, ScalarKind};

use crate::error::BuildError;
use crate::exp::{Exp, ExprKind, Lit, Node, NodeRef};
use crate::types::{ScalarTy, Ty, WgslType};

/// The value of a const-expression.
///
/// Vectors, matrices (as their columns), arrays and structs are [`ConstValue::Composite`]s of
/// their components in order.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ConstValue {
    /// `bool`
    Bool(bool),
    /// `i32`
    I32(i32),
    /// `u32`
    U32(u32),
    /// `f32` (always finite)
    F32(f32),
    /// `f16` (always finite)
    #[cfg(feature = "f16")]
    F16(half::f16),
    /// A vector, matrix (columns), array or struct.
    Composite(Vec<ConstValue>),
}

impl fmt::Display for ConstValue {
    /// WGSL spelling: `1.5f`, `-3i`, `7u`, `true`, `(1f, 2f)` for composites.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConstValue::Bool(b) => write!(f, "{b}"),
            ConstValue::I32(v) => write!(f, "{v}i"),
            ConstValue::U32(v) => write!(f, "{v}u"),
            ConstValue::F32(v) => write!(f, "{v:?}f"),
            #[cfg(feature = "f16")]
            ConstValue::F16(v) => write!(f, "{:?}h", v.to_f32()),
            ConstValue::Composite(parts) => {
                write!(f, "(")?;
                for (i, p) in parts.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{p}")?;
                }
                write!(f, ")")
            }
        }
    }
}

/// Why a const-expression is a shader-creation error.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ConstError {
    /// The operation and its literal operands, and what is wrong.
    pub reason: String,
    /// The rule of the WGSL spec that makes it an error.
    pub rule: &'static str,
}

impl ConstError {
    /// The [`BuildError`](crate::BuildError) naming `site`.
    pub(crate) fn at(self, site: crate::site::CallSite) -> crate::BuildError {
        crate::BuildError::ConstExpression {
            reason: self.reason,
            rule: self.rule,
            site,
        }
    }
}

type Res<T> = Result<T, ConstError>;

fn err<T>(reason: String, rule: &'static str) -> Res<T> {
    Err(ConstError { reason, rule })
}

const FINITE_MATH: &str = "WGSL spec §15.7.2 \"Differences from IEEE-754\", Finite Math Assumption (#differences-from-ieee754)";
const ARITHMETIC: &str = "WGSL spec §8.7 \"Arithmetic Expressions\" (#arithmetic-expr)";
const SHIFTS: &str = "WGSL spec §8.9 \"Bit Expressions\" (#bit-expr)";
const INDEXING: &str =
    "WGSL spec §8.5 \"Indexing Expressions\" (#vector-access-expr, #array-access-expr)";
const CONVERSION: &str =
    "WGSL spec §15.7.6 \"Floating Point Conversion\" (#floating-point-conversion)";

/// A floating-point scalar type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FTy {
    F32,
    #[cfg(feature = "f16")]
    F16,
}

impl FTy {
    fn name(self) -> &'static str {
        match self {
            FTy::F32 => "f32",
            #[cfg(feature = "f16")]
            FTy::F16 => "f16",
        }
    }
    /// Round an exact (or f64) value into this type.
    fn round(self, x: f64) -> f64 {
        match self {
            FTy::F32 => f64::from(x as f32),
            #[cfg(feature = "f16")]
            FTy::F16 => half::f16::from_f64(x).to_f64(),
        }
    }
    fn make(self, x: f64) -> ConstValue {
        match self {
            FTy::F32 => ConstValue::F32(x as f32),
            #[cfg(feature = "f16")]
            FTy::F16 => ConstValue::F16(half::f16::from_f64(x)),
        }
    }
    /// Largest finite value.
    fn max(self) -> f64 {
        match self {
            FTy::F32 => f64::from(f32::MAX),
            #[cfg(feature = "f16")]
            FTy::F16 => 65504.0,
        }
    }
}

/// `sign(e)` on floats (WGSL spec §17.5.54): 1, 0 or -1 (0 for a zero of either sign, and for
/// NaN). For `f64` here and for `f32` in the interpreter.
#[inline(always)]
pub fn float_sign<F: PartialOrd + From<i8>>(x: F) -> F {
    let zero = F::from(0);
    if x > zero {
        F::from(1)
    } else if x < zero {
        F::from(-1)
    } else {
        zero
    }
}

fn float_of(v: &ConstValue) -> Option<(f64, FTy)> {
    match v {
        ConstValue::F32(x) => Some((f64::from(*x), FTy::F32)),
        #[cfg(feature = "f16")]
        ConstValue::F16(x) => Some((x.to_f64(), FTy::F16)),
        _ => None,
    }
}

/// `name(a, b, ...)` for messages.
fn call(name: &str, args: &[&ConstValue]) -> String {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    format!("{name}({})", args.join(", "))
}

/// Round a floating-point result into `t` and check that it is finite.
fn fin(t: FTy, x: f64, what: impl FnOnce() -> String) -> Res<f64> {
    let r = t.round(x);
    if r.is_nan() {
        err(format!("`{}` is NaN", what()), FINITE_MATH)
    } else if r.is_infinite() {
        err(
            format!(
                "`{}` overflows {} (the result is infinite)",
                what(),
                t.name()
            ),
            FINITE_MATH,
        )
    } else {
        Ok(r)
    }
}

/// [`fin`], as a value of type `t`.
fn finite(t: FTy, x: f64, what: impl FnOnce() -> String) -> Res<ConstValue> {
    fin(t, x, what).map(|r| t.make(r))
}

/// `x op y` in `t`, rounded and checked: the step of an "inherited from" formula
/// (WGSL spec §15.7.3), whose every subexpression follows the overflow rules.
fn step(t: FTy, op: B, x: f64, y: f64, what: &dyn Fn() -> String) -> Res<f64> {
    fin(t, float_arith(op, t, x, y), what)
}

/// `x[0] * y[0] + x[1] * y[1] + ...` in `t`, step by step (`dot`'s formula, WGSL spec §17.5.21).
fn dot_in(t: FTy, x: &[f64], y: &[f64], what: &dyn Fn() -> String) -> Res<f64> {
    let mut acc = 0.0;
    for (x, y) in x.iter().zip(y) {
        let p = step(t, B::Multiply, *x, *y, what)?;
        acc = step(t, B::Add, acc, p, what)?;
    }
    Ok(acc)
}

/// Apply `f` to corresponding scalar components of `a` and `b`, a scalar operand standing for
/// every component (WGSL's vector-scalar forms, matrix-scalar multiplication).
fn zip2(
    a: &ConstValue,
    b: &ConstValue,
    f: &mut dyn FnMut(&ConstValue, &ConstValue) -> Res<ConstValue>,
) -> Res<ConstValue> {
    match (a, b) {
        (ConstValue::Composite(x), ConstValue::Composite(y)) => Ok(ConstValue::Composite(
            x.iter()
                .zip(y)
                .map(|(x, y)| zip2(x, y, f))
                .collect::<Res<_>>()?,
        )),
        (ConstValue::Composite(x), s) => Ok(ConstValue::Composite(
            x.iter().map(|x| zip2(x, s, f)).collect::<Res<_>>()?,
        )),
        (s, ConstValue::Composite(y)) => Ok(ConstValue::Composite(
            y.iter().map(|y| zip2(s, y, f)).collect::<Res<_>>()?,
        )),
        (x, y) => f(x, y),
    }
}

fn map1(a: &ConstValue, f: &mut dyn FnMut(&ConstValue) -> Res<ConstValue>) -> Res<ConstValue> {
    match a {
        ConstValue::Composite(x) => Ok(ConstValue::Composite(
            x.iter().map(|x| map1(x, f)).collect::<Res<_>>()?,
        )),
        s => f(s),
    }
}

fn zip3(
    a: &ConstValue,
    b: &ConstValue,
    c: &ConstValue,
    f: &mut dyn FnMut(&ConstValue, &ConstValue, &ConstValue) -> Res<ConstValue>,
) -> Res<ConstValue> {
    match (a, b, c) {
        (ConstValue::Composite(x), _, _)
        | (_, ConstValue::Composite(x), _)
        | (_, _, ConstValue::Composite(x)) => {
            let part = |v: &ConstValue, i: usize| match v {
                ConstValue::Composite(p) => p.get(i).cloned(),
                s => Some(s.clone()),
            };
            let mut out = Vec::with_capacity(x.len());
            for i in 0..x.len() {
                match (part(a, i), part(b, i), part(c, i)) {
                    (Some(a), Some(b), Some(c)) => out.push(zip3(&a, &b, &c, f)?),
                    _ => return err("operands of different sizes".into(), ARITHMETIC),
                }
            }
            Ok(ConstValue::Composite(out))
        }
        (a, b, c) => f(a, b, c),
    }
}

/// The scalar components of a value, in order (vectors; matrices column by column).
fn scalars(v: &ConstValue) -> Vec<&ConstValue> {
    match v {
        ConstValue::Composite(parts) => parts.iter().flat_map(scalars).collect(),
        s => vec![s],
    }
}

/// The zero value of `ty` (WGSL spec §6.6 "Zero Value Expressions"); `None` for types without
/// one (runtime-sized arrays, atomics).
pub(crate) fn zero(ty: &Ty) -> Option<ConstValue> {
    let scalar = |s: ScalarTy| -> Option<ConstValue> {
        Some(match s {
            ScalarTy::Bool => ConstValue::Bool(false),
            ScalarTy::I32 => ConstValue::I32(0),
            ScalarTy::U32 => ConstValue::U32(0),
            ScalarTy::F32 => ConstValue::F32(0.0),
            #[cfg(feature = "f16")]
            ScalarTy::F16 => ConstValue::F16(half::f16::ZERO),
            #[cfg(not(feature = "f16"))]
            ScalarTy::F16 => return None,
        })
    };
    match ty {
        Ty::Scalar(s) => scalar(*s),
        Ty::Vector(n, s) => Some(ConstValue::Composite(vec![scalar(*s)?; usize::from(*n)])),
        Ty::Matrix {
            columns,
            rows,
            scalar: s,
        } => Some(ConstValue::Composite(vec![
            ConstValue::Composite(vec![
                scalar(*s)?;
                usize::from(*rows)
            ]);
            usize::from(*columns)
        ])),
        Ty::Array { elem, len: Some(n) } => {
            Some(ConstValue::Composite(vec![zero(elem)?; *n as usize]))
        }
        Ty::Struct { members, .. } => Some(ConstValue::Composite(
            members
                .iter()
                .map(|(_, t)| zero(t))
                .collect::<Option<_>>()?,
        )),
        Ty::Array { len: None, .. } | Ty::Atomic(_) | Ty::CoopMatrix { .. } | Ty::Texture(_) => {
            None
        }
    }
}

/// The value of a literal. Non-finite float literals are reported by the lowering itself
/// (`BuildError::NonFiniteLiteral`); here they make the literal non-constant.
pub(crate) fn literal(lit: &Lit) -> Option<ConstValue> {
    match *lit {
        Lit::Bool(b) => Some(ConstValue::Bool(b)),
        Lit::I32(v) => Some(ConstValue::I32(v)),
        Lit::U32(v) => Some(ConstValue::U32(v)),
        Lit::F32(v) => v.is_finite().then_some(ConstValue::F32(v)),
        #[cfg(feature = "f16")]
        Lit::F16(bits) => {
            let v = half::f16::from_bits(bits);
            v.is_finite().then_some(ConstValue::F16(v))
        }
        #[cfg(not(feature = "f16"))]
        Lit::F16(_) => None,
    }
}

/// Check a literal index against the number of elements of what it indexes (`None`: a
/// runtime-sized array, where only negative indices are known to be out of bounds).
pub(crate) fn check_index(index: &ConstValue, len: Option<u32>, what: &str) -> Res<()> {
    let i = match *index {
        ConstValue::I32(i) => i64::from(i),
        ConstValue::U32(i) => i64::from(i),
        _ => return Ok(()),
    };
    match len {
        Some(n) if i < 0 || i >= i64::from(n) => err(
            format!("index {index} is out of bounds for {what} of {n} elements"),
            INDEXING,
        ),
        None if i < 0 => err(
            format!("index {index} is negative (indexing {what})"),
            INDEXING,
        ),
        _ => Ok(()),
    }
}

/// The number of elements `ty` has when indexed: vector components, matrix columns, array
/// elements (`None` for runtime-sized arrays and types that are not indexed).
pub(crate) fn index_len(ty: &Ty) -> Option<Option<u32>> {
    match ty {
        Ty::Vector(n, _) => Some(Some(u32::from(*n))),
        Ty::Matrix { columns, .. } => Some(Some(u32::from(*columns))),
        Ty::Array { len, .. } => Some(*len),
        _ => None,
    }
}

/// Evaluate `node` given the const values of its operands (`get` answers `None` for an
/// operand that is not a const-expression).
///
/// Returns `Ok(Some(value))` when the node is a const-expression, `Ok(None)` when it is not
/// (an operand is not constant, or the node reads memory or a built-in value), and the error
/// WGSL reports at shader creation otherwise — including the rules that apply when only some
/// operands are constant (integer division by a literal zero, shifts by 32 or more, `clamp`
/// bounds, `extractBits`/`insertBits` ranges, `smoothstep` edges, literal indices).
/// `ExprKind::Bound` (a `let`) is the caller's business: it answers `None` here.
pub(crate) fn eval(
    node: &Node,
    get: &mut dyn FnMut(&NodeRef) -> Option<ConstValue>,
) -> Res<Option<ConstValue>> {
    match &node.kind {
        ExprKind::Literal(lit) => Ok(literal(lit)),
        ExprKind::ZeroValue => Ok(zero(&node.ty)),
        ExprKind::Binary(op @ (B::LogicalAnd | B::LogicalOr), a, _)
            if decides(*op, get(a)).is_some() =>
        {
            // `false && b`, `true || b`: the left operand's value; `b` is not evaluated
            // (WGSL spec §8.1.1), even where it is not a const-expression.
            Ok(decides(*op, get(a)))
        }
        ExprKind::Binary(op, a, b) => {
            // The divisor or shift amount: its literal components, even when others are not
            // (naga's validator rejects `x << vec2(n, 32u)` too).
            for s in known(b, get).into_iter().flatten() {
                partial_binary(*op, &s)?;
            }
            let (va, vb) = (get(a), get(b));
            match (va, vb) {
                (Some(va), Some(vb)) => binary(*op, &va, &a.ty, &vb, &b.ty).map(Some),
                _ => Ok(None),
            }
        }
        ExprKind::Unary(op, a) => match get(a) {
            Some(v) => unary(*op, &v).map(Some),
            None => Ok(None),
        },
        ExprKind::Math(fun, args) => {
            let values: Vec<Option<ConstValue>> = args.iter().map(&mut *get).collect();
            partial_math(*fun, &values)?;
            match values.into_iter().collect::<Option<Vec<_>>>() {
                Some(values) if evaluated(*fun) => math(*fun, &values).map(Some),
                _ => Ok(None),
            }
        }
        ExprKind::Relational(fun, a) => Ok(get(a).and_then(|v| {
            let mut bools = scalars(&v)
                .into_iter()
                .map(|s| matches!(s, ConstValue::Bool(true)));
            match fun {
                R::All => Some(ConstValue::Bool(bools.all(|b| b))),
                R::Any => Some(ConstValue::Bool(bools.any(|b| b))),
                _ => None,
            }
        })),
        ExprKind::Select {
            condition,
            accept,
            reject,
        } => {
            let (c, a, r) = (get(condition), get(accept), get(reject));
            match (c, a, r) {
                (Some(c), Some(a), Some(r)) => select(&c, &a, &r).map(Some),
                _ => Ok(None),
            }
        }
        ExprKind::As {
            value,
            kind,
            convert,
        } => match get(value) {
            Some(v) => map1(&v, &mut |s| match convert {
                Some(width) => convert_scalar(s, *kind, *width),
                None => bitcast_scalar(s, *kind),
            })
            .map(Some),
            None => Ok(None),
        },
        ExprKind::Compose(parts) => {
            let values: Option<Vec<ConstValue>> = parts.iter().map(&mut *get).collect();
            Ok(values.map(|values| match node.ty {
                // A vector may be composed of smaller vectors: flatten to its components.
                Ty::Vector(..) => {
                    ConstValue::Composite(values.iter().flat_map(scalars).cloned().collect())
                }
                _ => ConstValue::Composite(values),
            }))
        }
        ExprKind::Splat(size, v) => {
            Ok(get(v).map(|v| ConstValue::Composite(vec![v; *size as usize])))
        }
        ExprKind::Swizzle(size, pattern, v) => Ok(get(v).and_then(|v| match v {
            ConstValue::Composite(parts) => pattern[..*size as usize]
                .iter()
                .map(|c| parts.get(*c as usize).cloned())
                .collect::<Option<Vec<_>>>()
                .map(ConstValue::Composite),
            _ => None,
        })),
        ExprKind::AccessIndex(base, index) => Ok(get(base).and_then(|v| match v {
            ConstValue::Composite(parts) => parts.get(*index as usize).cloned(),
            _ => None,
        })),
        ExprKind::Access(base, index) => {
            let i = get(index);
            if let (Some(i), Some(Some(len))) = (&i, index_len(&base.ty)) {
                check_index(i, Some(len), &base.ty.wgsl_name())?;
            }
            let b = get(base);
            Ok(match (b, i) {
                (Some(ConstValue::Composite(parts)), Some(i)) => {
                    let i = match i {
                        ConstValue::I32(i) => usize::try_from(i).ok(),
                        ConstValue::U32(i) => usize::try_from(i).ok(),
                        _ => None,
                    };
                    i.and_then(|i| parts.get(i).cloned())
                }
                _ => None,
            })
        }
        ExprKind::Load(_)
        | ExprKind::ArrayLength(_)
        | ExprKind::TextureLoad { .. }
        | ExprKind::TextureDimensions { .. }
        | ExprKind::Builtin(_)
        | ExprKind::Bound(_)
        | ExprKind::Param { .. }
        | ExprKind::CoopLoad { .. }
        | ExprKind::CoopMultiplyAdd(..)
        | ExprKind::Invalid(_) => Ok(None),
    }
}

/// The scalar components of `node` whose values are known: all of them for a const-expression,
/// the constant components of a vector built from parts (`vec2(x, 32u)`, a splat), `None` for
/// the others.
fn known(
    node: &NodeRef,
    get: &mut dyn FnMut(&NodeRef) -> Option<ConstValue>,
) -> Vec<Option<ConstValue>> {
    if let Some(v) = get(node) {
        return scalars(&v).into_iter().cloned().map(Some).collect();
    }
    match (&node.kind, &node.ty) {
        (ExprKind::Compose(parts), Ty::Vector(..)) => {
            parts.iter().flat_map(|p| known(p, get)).collect()
        }
        (ExprKind::Splat(size, v), _) => {
            let k = known(v, get);
            (0..*size as usize).flat_map(|_| k.clone()).collect()
        }
        _ => vec![None],
    }
}

/// Rules that need only the right operand to be constant (WGSL spec §8.7, §8.9).
fn partial_binary(op: B, b: &ConstValue) -> Res<()> {
    for s in scalars(b) {
        match (op, s) {
            (B::Divide | B::Modulo, ConstValue::I32(0) | ConstValue::U32(0)) => {
                let what = if op == B::Divide {
                    "division"
                } else {
                    "remainder"
                };
                return err(
                    format!("integer {what} by the literal zero {s}"),
                    ARITHMETIC,
                );
            }
            (B::ShiftLeft | B::ShiftRight, ConstValue::U32(n)) if *n >= 32 => {
                return err(
                    format!(
                        "shift by {s}, which is not less than the 32-bit width of the shifted value"
                    ),
                    SHIFTS,
                );
            }
            _ => {}
        }
    }
    Ok(())
}

/// Where arguments `i` and `j` are both constant, `check` of each pair of their components
/// (a scalar paired with every component of a vector).
fn check_pair(
    args: &[Option<ConstValue>],
    i: usize,
    j: usize,
    check: &mut dyn FnMut(&ConstValue, &ConstValue) -> Res<()>,
) -> Res<()> {
    if let (Some(Some(a)), Some(Some(b))) = (args.get(i), args.get(j)) {
        zip2(a, b, &mut |x, y| {
            check(x, y).map(|()| ConstValue::Bool(true))
        })?;
    }
    Ok(())
}

/// Rules of built-ins that need only some arguments to be constant.
fn partial_math(fun: M, args: &[Option<ConstValue>]) -> Res<()> {
    match fun {
        M::Clamp => check_pair(args, 1, 2, &mut |l, h| {
            let greater = match (l, h) {
                (ConstValue::I32(l), ConstValue::I32(h)) => l > h,
                (ConstValue::U32(l), ConstValue::U32(h)) => l > h,
                _ => match (float_of(l), float_of(h)) {
                    (Some((l, _)), Some((h, _))) => l > h,
                    _ => false,
                },
            };
            if greater {
                return err(
                    format!("`clamp(e, {l}, {h})`: low is greater than high"),
                    "WGSL spec §17.5.10 `clamp` (#clamp)",
                );
            }
            Ok(())
        })?,
        M::SmoothStep => check_pair(args, 0, 1, &mut |a, b| {
            if a == b {
                return err(
                    format!("`smoothstep({a}, {b}, x)`: the edges are equal"),
                    "WGSL spec §17.5.57 `smoothstep` (#smoothstep-builtin)",
                );
            }
            Ok(())
        })?,
        M::Ldexp => {
            // e2 alone constant: above 128 it is an error for f32 and f16 alike (the type of a
            // non-constant e1 is not known here, so f16's lower limit of 16 is checked only
            // when e1 is constant too).
            if let (Some(None), Some(Some(e2))) = (args.first(), args.get(1)) {
                map1(e2, &mut |n| match *n {
                    ConstValue::I32(k) => ldexp_exponent(FTy::F32, k).map(|()| ConstValue::I32(k)),
                    _ => Ok(n.clone()),
                })?;
            }
        }
        M::ExtractBits | M::InsertBits => {
            let at = if fun == M::ExtractBits { 1 } else { 2 };
            if let (Some(Some(ConstValue::U32(offset))), Some(Some(ConstValue::U32(count)))) =
                (args.get(at), args.get(at + 1))
                && u64::from(*offset) + u64::from(*count) > 32
            {
                let name = if fun == M::ExtractBits {
                    "extractBits"
                } else {
                    "insertBits"
                };
                return err(
                    format!(
                        "`{name}` with offset {offset} and count {count}: offset + count exceeds 32 bits"
                    ),
                    "WGSL spec §17.5.26 `extractBits`, §17.5.35 `insertBits` (#extractBits-unsigned-builtin, #insertBits-builtin)",
                );
            }
        }
        _ => {}
    }
    Ok(())
}

fn is_matrix(ty: &Ty) -> bool {
    matches!(ty, Ty::Matrix { .. })
}

/// A binary operation on constant operands of types `ta`, `tb`.
pub(crate) fn binary(op: B, a: &ConstValue, ta: &Ty, b: &ConstValue, tb: &Ty) -> Res<ConstValue> {
    if op == B::Multiply
        && (is_matrix(ta) || is_matrix(tb))
        && !matches!(ta, Ty::Scalar(_))
        && !matches!(tb, Ty::Scalar(_))
    {
        return linear_algebra(a, ta, b, tb);
    }
    zip2(a, b, &mut |x, y| binary_scalar(op, x, y))
}

fn binary_scalar(op: B, a: &ConstValue, b: &ConstValue) -> Res<ConstValue> {
    use ConstValue::{Bool, I32, U32};
    let sym = op_symbol(op);
    let text = || format!("{a} {sym} {b}");
    Ok(match (a, b) {
        (Bool(x), Bool(y)) => Bool(match op {
            B::Equal => x == y,
            B::NotEqual => x != y,
            B::LogicalAnd | B::And => *x && *y,
            B::LogicalOr | B::InclusiveOr => *x || *y,
            B::ExclusiveOr => x != y,
            _ => return err(format!("`{}` on bool", text()), ARITHMETIC),
        }),
        (I32(x), I32(y)) => {
            let (x, y) = (*x, *y);
            match op {
                B::Add => I32(x.wrapping_add(y)),
                B::Subtract => I32(x.wrapping_sub(y)),
                B::Multiply => I32(x.wrapping_mul(y)),
                B::Divide | B::Modulo => {
                    if y == 0 {
                        partial_binary(op, b)?;
                    }
                    if x == i32::MIN && y == -1 {
                        return err(
                            format!("`{}` overflows i32 (i32::MIN by -1)", text()),
                            ARITHMETIC,
                        );
                    }
                    I32(if op == B::Divide { x / y } else { x % y })
                }
                B::And => I32(x & y),
                B::InclusiveOr => I32(x | y),
                B::ExclusiveOr => I32(x ^ y),
                _ => Bool(compare(op, &x, &y).ok_or_else(|| ConstError {
                    reason: format!("`{}` is not an i32 operation", text()),
                    rule: ARITHMETIC,
                })?),
            }
        }
        (U32(x), U32(y)) => {
            let (x, y) = (*x, *y);
            match op {
                B::Add => U32(x.wrapping_add(y)),
                B::Subtract => U32(x.wrapping_sub(y)),
                B::Multiply => U32(x.wrapping_mul(y)),
                B::Divide | B::Modulo => {
                    if y == 0 {
                        partial_binary(op, b)?;
                    }
                    U32(if op == B::Divide { x / y } else { x % y })
                }
                B::And => U32(x & y),
                B::InclusiveOr => U32(x | y),
                B::ExclusiveOr => U32(x ^ y),
                B::ShiftLeft => {
                    partial_binary(op, b)?;
                    // The `y` most significant bits must be 0 (WGSL spec §8.9).
                    if y > 0 && x >> (32 - y) != 0 {
                        return err(format!("`{}` overflows u32", text()), SHIFTS);
                    }
                    U32(x << y)
                }
                B::ShiftRight => {
                    partial_binary(op, b)?;
                    U32(x >> y)
                }
                _ => Bool(compare(op, &x, &y).ok_or_else(|| ConstError {
                    reason: format!("`{}` is not a u32 operation", text()),
                    rule: ARITHMETIC,
                })?),
            }
        }
        (I32(x), U32(y)) => {
            let (x, y) = (*x, *y);
            partial_binary(op, b)?;
            match op {
                B::ShiftLeft => {
                    // The `y + 1` most significant bits must all equal (WGSL spec §8.9).
                    let top = x >> (31 - y);
                    if top != 0 && top != -1 {
                        return err(format!("`{}` overflows i32", text()), SHIFTS);
                    }
                    I32(x << y)
                }
                B::ShiftRight => I32(x >> y),
                _ => return err(format!("`{}` mixes i32 and u32", text()), ARITHMETIC),
            }
        }
        _ => match (float_of(a), float_of(b)) {
            (Some((x, t)), Some((y, _))) => match op {
                B::Add | B::Subtract | B::Multiply | B::Divide | B::Modulo => {
                    finite(t, float_arith(op, t, x, y), text)?
                }
                _ => Bool(compare(op, &x, &y).ok_or_else(|| ConstError {
                    reason: format!("`{}` is not a floating-point operation", text()),
                    rule: ARITHMETIC,
                })?),
            },
            _ => {
                return err(
                    format!("`{}`: operands of different types", text()),
                    ARITHMETIC,
                );
            }
        },
    })
}

/// `+ - * / %` in the operand type: f32 arithmetic is Rust's (IEEE-754, correctly rounded);
/// f16 operands are exact in f64, whose result is then rounded to f16.
fn float_arith(op: B, t: FTy, x: f64, y: f64) -> f64 {
    match t {
        FTy::F32 => {
            let (x, y) = (x as f32, y as f32);
            f64::from(match op {
                B::Add => x + y,
                B::Subtract => x - y,
                B::Multiply => x * y,
                B::Divide => x / y,
                _ => x % y,
            })
        }
        #[cfg(feature = "f16")]
        FTy::F16 => match op {
            B::Add => x + y,
            B::Subtract => x - y,
            B::Multiply => x * y,
            B::Divide => x / y,
            _ => x % y,
        },
    }
}

fn compare<T: PartialOrd>(op: B, x: &T, y: &T) -> Option<bool> {
    Some(match op {
        B::Equal => x == y,
        B::NotEqual => x != y,
        B::Less => x < y,
        B::LessEqual => x <= y,
        B::Greater => x > y,
        B::GreaterEqual => x >= y,
        _ => return None,
    })
}

fn op_symbol(op: B) -> &'static str {
    match op {
        B::Add => "+",
        B::Subtract => "-",
        B::Multiply => "*",
        B::Divide => "/",
        B::Modulo => "%",
        B::Equal => "==",
        B::NotEqual => "!=",
        B::Less => "<",
        B::LessEqual => "<=",
        B::Greater => ">",
        B::GreaterEqual => ">=",
        B::And => "&",
        B::ExclusiveOr => "^",
        B::InclusiveOr => "|",
        B::LogicalAnd => "&&",
        B::LogicalOr => "||",
        B::ShiftLeft => "<<",
        B::ShiftRight => ">>",
    }
}

/// Matrix-vector, vector-matrix and matrix-matrix products (WGSL spec §8.7 "Matrix
/// Arithmetic"): each result component is a dot product, evaluated as `dot` is.
fn linear_algebra(a: &ConstValue, ta: &Ty, b: &ConstValue, tb: &Ty) -> Res<ConstValue> {
    let columns = |v: &ConstValue| -> Vec<Vec<f64>> {
        match v {
            ConstValue::Composite(c) => c.iter().map(|col| floats(&scalars(col)).0).collect(),
            _ => Vec::new(),
        }
    };
    let (_, t) = floats(&scalars(a));
    let text = || format!("{a} * {b}");
    let make = |xs: Res<Vec<f64>>| -> Res<ConstValue> {
        Ok(ConstValue::Composite(
            xs?.into_iter().map(|x| t.make(x)).collect(),
        ))
    };
    // Row `r` of a matrix given as columns.
    let row = |m: &[Vec<f64>], r: usize| -> Vec<f64> { m.iter().map(|c| c[r]).collect() };
    match (is_matrix(ta), is_matrix(tb)) {
        // m * v: component r is dot(row r of m, v).
        (true, false) => {
            let (m, v) = (columns(a), floats(&scalars(b)).0);
            let rows = m.first().map_or(0, Vec::len);
            make(
                (0..rows)
                    .map(|r| dot_in(t, &row(&m, r), &v, &text))
                    .collect(),
            )
        }
        // v * m: component c is dot(v, column c of m).
        (false, true) => {
            let (v, m) = (floats(&scalars(a)).0, columns(b));
            make(m.iter().map(|col| dot_in(t, &v, col, &text)).collect())
        }
        // a * b: column c is a * (column c of b).
        _ => {
            let (ma, mb) = (columns(a), columns(b));
            let rows = ma.first().map_or(0, Vec::len);
            let result = mb
                .iter()
                .map(|bc| {
                    make(
                        (0..rows)
                            .map(|r| dot_in(t, &row(&ma, r), bc, &text))
                            .collect(),
                    )
                })
                .collect::<Res<_>>()?;
            Ok(ConstValue::Composite(result))
        }
    }
}

fn unary(op: naga::UnaryOperator, v: &ConstValue) -> Res<ConstValue> {
    use naga::UnaryOperator as U;
    map1(v, &mut |s| {
        Ok(match (op, s) {
            (U::Negate, ConstValue::I32(x)) => ConstValue::I32(x.wrapping_neg()),
            (U::LogicalNot, ConstValue::Bool(b)) => ConstValue::Bool(!b),
            (U::BitwiseNot, ConstValue::I32(x)) => ConstValue::I32(!x),
            (U::BitwiseNot, ConstValue::U32(x)) => ConstValue::U32(!x),
            (U::Negate, s) => match float_of(s) {
                Some((x, t)) => t.make(-x),
                None => return err(format!("`-{s}`"), ARITHMETIC),
            },
            (_, s) => return err(format!("unary operation on {s}"), ARITHMETIC),
        })
    })
}

fn select(c: &ConstValue, a: &ConstValue, r: &ConstValue) -> Res<ConstValue> {
    match c {
        ConstValue::Bool(true) => Ok(a.clone()),
        ConstValue::Bool(false) => Ok(r.clone()),
        _ => zip3(c, a, r, &mut |c, a, r| {
            Ok(if matches!(c, ConstValue::Bool(true)) {
                a.clone()
            } else {
                r.clone()
            })
        }),
    }
}

/// `T(e)` for a scalar `e` (WGSL spec §17.1.2 value constructors, §15.7.6 conversions).
fn convert_scalar(s: &ConstValue, kind: ScalarKind, width: u8) -> Res<ConstValue> {
    use ConstValue::{Bool, I32, U32};
    Ok(match kind {
        ScalarKind::Bool => Bool(match s {
            Bool(b) => *b,
            I32(v) => *v != 0,
            U32(v) => *v != 0,
            s => float_of(s).is_some_and(|(x, _)| x != 0.0),
        }),
        ScalarKind::Sint => I32(match s {
            Bool(b) => i32::from(*b),
            I32(v) => *v,
            U32(v) => *v as i32,
            // Clamp to the nearest i32 representable in f32, then truncate (§15.7.6).
            s => match float_of(s) {
                Some((x, _)) => x.clamp(-2147483648.0, 2147483520.0) as i32,
                None => return err(format!("i32({s})"), CONVERSION),
            },
        }),
        ScalarKind::Uint => U32(match s {
            Bool(b) => u32::from(*b),
            I32(v) => *v as u32,
            U32(v) => *v,
            s => match float_of(s) {
                Some((x, _)) => x.clamp(0.0, 4294967040.0) as u32,
                None => return err(format!("u32({s})"), CONVERSION),
            },
        }),
        ScalarKind::Float => {
            let t = if width == 2 {
                #[cfg(feature = "f16")]
                {
                    FTy::F16
                }
                #[cfg(not(feature = "f16"))]
                {
                    return err(format!("f16({s}) without the `f16` feature"), CONVERSION);
                }
            } else {
                FTy::F32
            };
            let x = match s {
                Bool(b) => f64::from(u8::from(*b)),
                I32(v) => f64::from(*v),
                U32(v) => f64::from(*v),
                s => float_of(s).map_or(0.0, |(x, _)| x),
            };
            // A value outside the destination's finite range is an error (§15.7.6).
            if x.abs() > t.max() {
                return err(
                    format!(
                        "`{}({s})`: the value is outside the finite range of {}",
                        t.name(),
                        t.name()
                    ),
                    CONVERSION,
                );
            }
            t.make(t.round(x))
        }
        _ => return err(format!("conversion of {s}"), CONVERSION),
    })
}

/// `bitcast<T>(e)` for a 32-bit scalar `e` (WGSL spec §17.2.1); a float result must be finite.
fn bitcast_scalar(s: &ConstValue, kind: ScalarKind) -> Res<ConstValue> {
    let bits = match s {
        ConstValue::I32(v) => *v as u32,
        ConstValue::U32(v) => *v,
        ConstValue::F32(v) => v.to_bits(),
        s => return err(format!("bitcast of {s}"), "WGSL spec §17.2.1 `bitcast`"),
    };
    Ok(match kind {
        ScalarKind::Sint => ConstValue::I32(bits as i32),
        ScalarKind::Uint => ConstValue::U32(bits),
        _ => {
            let v = f32::from_bits(bits);
            if !v.is_finite() {
                return err(
                    format!(
                        "`bitcast<f32>({s})` is {}",
                        if v.is_nan() { "NaN" } else { "infinite" }
                    ),
                    FINITE_MATH,
                );
            }
            ConstValue::F32(v)
        }
    })
}

fn domain<T>(fun: &str, x: &ConstValue, domain: &str, anchor: &'static str) -> Res<T> {
    err(
        format!("`{fun}({x})`: {x} is outside the domain {domain} of `{fun}`"),
        anchor,
    )
}

/// A built-in function on constant arguments (WGSL spec §17.5 "Numeric Built-in Functions").
pub(crate) fn math(fun: M, args: &[ConstValue]) -> Res<ConstValue> {
    let name = math_name(fun);
    let arg = |i: usize| {
        args.get(i).ok_or_else(|| ConstError {
            reason: format!("`{name}` is missing argument {i}"),
            rule: "WGSL spec §17.5",
        })
    };
    match fun {
        // Componentwise on one argument.
        M::Abs
        | M::Sign
        | M::Exp
        | M::Exp2
        | M::Log
        | M::Log2
        | M::Sqrt
        | M::InverseSqrt
        | M::Sin
        | M::Cos
        | M::Tan
        | M::Asin
        | M::Acos
        | M::Atan
        | M::Sinh
        | M::Cosh
        | M::Tanh
        | M::Asinh
        | M::Acosh
        | M::Atanh
        | M::Floor
        | M::Ceil
        | M::Round
        | M::Trunc
        | M::Fract
        | M::Saturate
        | M::Radians
        | M::Degrees
        | M::CountOneBits
        | M::CountLeadingZeros
        | M::CountTrailingZeros
        | M::FirstLeadingBit
        | M::FirstTrailingBit
        | M::ReverseBits => map1(arg(0)?, &mut |s| math1(fun, name, s)),
        M::Min | M::Max | M::Pow | M::Atan2 | M::Step => {
            zip2(arg(0)?, arg(1)?, &mut |a, b| math2(fun, name, a, b))
        }
        M::Clamp | M::Fma | M::Mix | M::SmoothStep => {
            zip3(arg(0)?, arg(1)?, arg(2)?, &mut |a, b, c| {
                math3(fun, name, a, b, c)
            })
        }
        M::ExtractBits => {
            let (ConstValue::U32(offset), ConstValue::U32(count)) = (arg(1)?, arg(2)?) else {
                return err(format!("`{name}` arguments"), "WGSL spec §17.5.26");
            };
            let (o, c) = bit_range(*offset, *count);
            map1(arg(0)?, &mut |s| {
                Ok(match *s {
                    ConstValue::U32(e) => ConstValue::U32(if c == 0 {
                        0
                    } else {
                        (e >> o) & (u32::MAX >> (32 - c))
                    }),
                    ConstValue::I32(e) => ConstValue::I32(if c == 0 {
                        0
                    } else {
                        // Shift the field to the top, then arithmetic-shift it back down.
                        (e << (32 - o - c)) >> (32 - c)
                    }),
                    _ => return err(format!("`{name}({s}, ...)`"), "WGSL spec §17.5.26"),
                })
            })
        }
        M::InsertBits => {
            let (ConstValue::U32(offset), ConstValue::U32(count)) = (arg(2)?, arg(3)?) else {
                return err(format!("`{name}` arguments"), "WGSL spec §17.5.35");
            };
            let (o, c) = bit_range(*offset, *count);
            let mask = if c == 0 {
                0
            } else {
                (u32::MAX >> (32 - c)) << o
            };
            zip2(arg(0)?, arg(1)?, &mut |e, n| {
                let ins = |e: u32, n: u32| (e & !mask) | (n.wrapping_shl(o) & mask);
                Ok(match (e, n) {
                    (ConstValue::U32(e), ConstValue::U32(n)) => ConstValue::U32(ins(*e, *n)),
                    (ConstValue::I32(e), ConstValue::I32(n)) => {
                        ConstValue::I32(ins(*e as u32, *n as u32) as i32)
                    }
                    _ => return err(format!("`{name}({e}, {n}, ...)`"), "WGSL spec §17.5.35"),
                })
            })
        }
        M::Dot => {
            let (a, b) = (arg(0)?, arg(1)?);
            let (xs, ys) = (scalars(a), scalars(b));
            match xs.first() {
                Some(ConstValue::I32(_)) => Ok(ConstValue::I32(
                    xs.iter()
                        .zip(&ys)
                        .map(|(x, y)| match (x, y) {
                            (ConstValue::I32(x), ConstValue::I32(y)) => x.wrapping_mul(*y),
                            _ => 0,
                        })
                        .fold(0i32, i32::wrapping_add),
                )),
                Some(ConstValue::U32(_)) => Ok(ConstValue::U32(
                    xs.iter()
                        .zip(&ys)
                        .map(|(x, y)| match (x, y) {
                            (ConstValue::U32(x), ConstValue::U32(y)) => x.wrapping_mul(*y),
                            _ => 0,
                        })
                        .fold(0u32, u32::wrapping_add),
                )),
                _ => {
                    let (xs, t) = floats(&xs);
                    let (ys, _) = floats(&ys);
                    dot_in(t, &xs, &ys, &|| call(name, &[a, b])).map(|r| t.make(r))
                }
            }
        }
        M::Cross => {
            let (a, b) = (arg(0)?, arg(1)?);
            let (x, t) = floats(&scalars(a));
            let (y, _) = floats(&scalars(b));
            if x.len() != 3 || y.len() != 3 {
                return err(format!("`{}`", call(name, &[a, b])), "WGSL spec §17.5.16");
            }
            // x[i] * y[j] - x[j] * y[i] (WGSL spec §15.7.3, `cross`).
            let text = || call(name, &[a, b]);
            let c = |i: usize, j: usize| -> Res<ConstValue> {
                let p = step(t, B::Multiply, x[i], y[j], &text)?;
                let q = step(t, B::Multiply, x[j], y[i], &text)?;
                step(t, B::Subtract, p, q, &text).map(|r| t.make(r))
            };
            Ok(ConstValue::Composite(vec![c(1, 2)?, c(2, 0)?, c(0, 1)?]))
        }
        M::Length | M::Distance | M::Normalize => {
            let a = arg(0)?;
            let (mut x, t) = floats(&scalars(a));
            let text = || match args.get(1) {
                Some(b) => call(name, &[a, b]),
                None => call(name, &[a]),
            };
            if fun == M::Distance {
                // length(a - b), the difference in the type.
                let (y, _) = floats(&scalars(arg(1)?));
                for (x, y) in x.iter_mut().zip(&y) {
                    *x = step(t, B::Subtract, *x, *y, &text)?;
                }
            }
            // The length of a scalar is its absolute value (§17.5.38); of a vector,
            // sqrt(dot(e, e)).
            let len = if let [x] = x[..] {
                x.abs()
            } else {
                let sq = dot_in(t, &x, &x, &text)?;
                fin(t, fcall(t, sq, f32::sqrt, f64::sqrt), text)?
            };
            if fun != M::Normalize {
                return Ok(t.make(len));
            }
            if len == 0.0 {
                return err(
                    format!(
                        "`{}`: the zero vector is outside the domain of `normalize`",
                        text()
                    ),
                    "WGSL spec §17.5.45 `normalize` (#normalize-builtin)",
                );
            }
            Ok(ConstValue::Composite(
                x.iter()
                    .map(|x| step(t, B::Divide, *x, len, &text).map(|r| t.make(r)))
                    .collect::<Res<_>>()?,
            ))
        }
        M::Transpose => {
            let a = arg(0)?;
            let ConstValue::Composite(columns) = a else {
                return err(format!("`{}`", call(name, &[a])), "WGSL spec §17.5");
            };
            let rows = match columns.first() {
                Some(ConstValue::Composite(c)) => c.len(),
                _ => 0,
            };
            Ok(ConstValue::Composite(
                (0..rows)
                    .map(|r| {
                        ConstValue::Composite(
                            columns
                                .iter()
                                .filter_map(|c| match c {
                                    ConstValue::Composite(c) => c.get(r).cloned(),
                                    _ => None,
                                })
                                .collect(),
                        )
                    })
                    .collect(),
            ))
        }
        M::Ldexp => zip2(arg(0)?, arg(1)?, &mut |a, b| {
            let (Some((x, t)), ConstValue::I32(n)) = (float_of(a), b) else {
                return err(format!("`{}`", call(name, &[a, b])), LDEXP);
            };
            ldexp_exponent(t, *n)?;
            // x * 2^n is exact in f64 for every finite f32/f16 x and n <= 128; `finite` rounds
            // into the type and rejects an overflow (§15.7.2).
            finite(t, x * 2f64.powi(*n), || call(name, &[a, b]))
        }),
        M::QuantizeToF16 => map1(arg(0)?, &mut |s| match *s {
            ConstValue::F32(x) => {
                f16_of(x, || call(name, &[s]), QUANTIZE).map(|h| ConstValue::F32(h.to_f32()))
            }
            _ => err(format!("`{}`", call(name, &[s])), QUANTIZE),
        }),
        M::Pack2x16float => {
            let a = arg(0)?;
            let [ConstValue::F32(x), ConstValue::F32(y)] = scalars(a)[..] else {
                return err(format!("`{}`", call(name, &[a])), PACK2X16FLOAT);
            };
            let text = || call(name, &[a]);
            let (lo, hi) = (
                f16_of(*x, text, PACK2X16FLOAT)?,
                f16_of(*y, text, PACK2X16FLOAT)?,
            );
            Ok(ConstValue::U32(
                u32::from(lo.to_bits()) | (u32::from(hi.to_bits()) << 16),
            ))
        }
        _ => err(
            format!("`{name}` is not evaluated by the DSL"),
            "WGSL spec §17.5",
        ),
    }
}

const LDEXP: &str = "WGSL spec §17.5.37 `ldexp` (#ldexp-builtin)";
const QUANTIZE: &str = "WGSL spec §17.5.47 `quantizeToF16` (#quantizeToF16-builtin)";
const PACK2X16FLOAT: &str = "WGSL spec §17.9 `pack2x16float` (#pack2x16float-builtin)";

/// `ldexp`'s exponent above the bias + 1 (128 for `f32`, 16 for `f16`) is a shader-creation
/// error when it is a const-expression, whether or not `e1` is (WGSL spec §17.5.37).
fn ldexp_exponent(t: FTy, n: i32) -> Res<()> {
    let limit = match t {
        FTy::F32 => 128,
        #[cfg(feature = "f16")]
        FTy::F16 => 16,
    };
    if n > limit {
        err(
            format!(
                "`ldexp(e1, {n})`: the exponent is above {limit}, the {} bias + 1",
                t.name()
            ),
            LDEXP,
        )
    } else {
        Ok(())
    }
}

/// `x` as an IEEE binary16, rounded to nearest even (§15.7.6); a value outside `f16`'s finite
/// range is a shader-creation error in a const-expression (`quantizeToF16` §17.5.47,
/// `pack2x16float` §17.9).
fn f16_of(x: f32, what: impl FnOnce() -> String, rule: &'static str) -> Res<half::f16> {
    // The finite range is [-65504, 65504] (WGSL spec §15.7.6): a value just above it, which
    // IEEE rounding would bring back to 65504, is outside it all the same.
    if x.abs() <= 65504.0 {
        Ok(half::f16::from_f32(x))
    } else {
        err(
            format!(
                "`{}`: {x} is outside the finite range of f16 (|e| <= 65504)",
                what()
            ),
            rule,
        )
    }
}

/// True for the built-ins [`math`] evaluates (every one the DSL offers).
pub(crate) fn evaluated(fun: M) -> bool {
    math_name(fun) != "a built-in"
}

/// `o = min(offset, 32)`, `c = min(count, 32 - o)` (WGSL spec §17.5.26, §17.5.35).
fn bit_range(offset: u32, count: u32) -> (u32, u32) {
    let o = offset.min(32);
    (o, count.min(32 - o))
}

fn floats(xs: &[&ConstValue]) -> (Vec<f64>, FTy) {
    let mut t = FTy::F32;
    let v = xs
        .iter()
        .filter_map(|s| {
            float_of(s).map(|(x, ty)| {
                t = ty;
                x
            })
        })
        .collect();
    (v, t)
}

/// Apply a float function in the argument's type: f32 with Rust's f32 function (libm), f16
/// through f64, rounded.
fn fcall(t: FTy, x: f64, f32f: fn(f32) -> f32, f64f: fn(f64) -> f64) -> f64 {
    #[cfg(not(feature = "f16"))]
    let _ = f64f;
    match t {
        FTy::F32 => f64::from(f32f(x as f32)),
        #[cfg(feature = "f16")]
        FTy::F16 => {
            let _ = f32f;
            f64f(x)
        }
    }
}

fn math1(fun: M, name: &'static str, s: &ConstValue) -> Res<ConstValue> {
    match *s {
        ConstValue::I32(x) => Ok(ConstValue::I32(match fun {
            M::Abs => x.wrapping_abs(),
            M::Sign => x.signum(),
            M::CountOneBits => x.count_ones() as i32,
            M::CountLeadingZeros => x.leading_zeros() as i32,
            M::CountTrailingZeros => x.trailing_zeros() as i32,
            M::ReverseBits => x.reverse_bits(),
            // -1 for 0 and -1; otherwise the most significant bit differing from the sign.
            M::FirstLeadingBit => {
                let y = if x < 0 { !x } else { x };
                if y == 0 {
                    -1
                } else {
                    31 - y.leading_zeros() as i32
                }
            }
            M::FirstTrailingBit => {
                if x == 0 {
                    -1
                } else {
                    x.trailing_zeros() as i32
                }
            }
            _ => return err(format!("`{name}({s})` on i32"), "WGSL spec §17.5"),
        })),
        ConstValue::U32(x) => Ok(ConstValue::U32(match fun {
            M::Abs => x,
            M::CountOneBits => x.count_ones(),
            M::CountLeadingZeros => x.leading_zeros(),
            M::CountTrailingZeros => x.trailing_zeros(),
            M::ReverseBits => x.reverse_bits(),
            M::FirstLeadingBit => {
                if x == 0 {
                    u32::MAX
                } else {
                    31 - x.leading_zeros()
                }
            }
            M::FirstTrailingBit => {
                if x == 0 {
                    u32::MAX
                } else {
                    x.trailing_zeros()
                }
            }
            _ => return err(format!("`{name}({s})` on u32"), "WGSL spec §17.5"),
        })),
        _ => {
            let Some((x, t)) = float_of(s) else {
                return err(format!("`{name}({s})`"), "WGSL spec §17.5");
            };
            let text = || call(name, &[s]);
            // Outside its domain a function of a constant is an error (§15.7.7).
            let outside = match fun {
                M::Log | M::Log2 => Some((
                    x < 0.0,
                    "[0, +inf]",
                    "WGSL spec §17.5.39 `log`, §17.5.40 `log2` (#log-builtin, #log2-builtin)",
                )),
                M::Sqrt | M::InverseSqrt => Some((
                    x < 0.0,
                    "[0, +inf]",
                    "WGSL spec §17.5.58 `sqrt`, §17.5.36 `inverseSqrt` (#sqrt-builtin, #inverseSqrt-builtin)",
                )),
                M::Asin | M::Acos => Some((
                    x.abs() > 1.0,
                    "[-1, 1]",
                    "WGSL spec §17.5.2 `acos`, §17.5.4 `asin` (#acos-builtin, #asin-builtin)",
                )),
                M::Acosh => Some((
                    x < 1.0,
                    "[1, +inf]",
                    "WGSL spec §17.5.3 `acosh` (#acosh-builtin)",
                )),
                M::Atanh => Some((
                    x.abs() > 1.0,
                    "[-1, 1]",
                    "WGSL spec §17.5.7 `atanh` (#atanh-builtin)",
                )),
                _ => None,
            };
            if let Some((true, interval, anchor)) = outside {
                return domain(name, s, interval, anchor);
            }
            let r = match fun {
                M::Abs => x.abs(),
                M::Sign => float_sign(x),
                M::Exp => fcall(t, x, f32::exp, f64::exp),
                M::Exp2 => fcall(t, x, f32::exp2, f64::exp2),
                M::Log => fcall(t, x, f32::ln, f64::ln),
                M::Log2 => fcall(t, x, f32::log2, f64::log2),
                M::Sqrt => fcall(t, x, f32::sqrt, f64::sqrt),
                M::InverseSqrt => 1.0 / fcall(t, x, f32::sqrt, f64::sqrt),
                M::Sin => fcall(t, x, f32::sin, f64::sin),
                M::Cos => fcall(t, x, f32::cos, f64::cos),
                M::Tan => fcall(t, x, f32::tan, f64::tan),
                M::Asin => fcall(t, x, f32::asin, f64::asin),
                M::Acos => fcall(t, x, f32::acos, f64::acos),
                M::Atan => fcall(t, x, f32::atan, f64::atan),
                M::Sinh => fcall(t, x, f32::sinh, f64::sinh),
                M::Cosh => fcall(t, x, f32::cosh, f64::cosh),
                M::Tanh => fcall(t, x, f32::tanh, f64::tanh),
                M::Asinh => x.asinh(),
                M::Acosh => x.acosh(),
                M::Atanh => fcall(t, x, f32::atanh, f64::atanh),
                M::Floor => x.floor(),
                M::Ceil => x.ceil(),
                M::Round => x.round_ties_even(),
                M::Trunc => x.trunc(),
                // e - floor(e), in the type.
                M::Fract => t.round(x - x.floor()),
                M::Saturate => x.clamp(0.0, 1.0),
                M::Radians => fcall(t, x, f32::to_radians, f64::to_radians),
                M::Degrees => fcall(t, x, f32::to_degrees, f64::to_degrees),
                _ => return err(format!("`{}` on floats", text()), "WGSL spec §17.5"),
            };
            finite(t, r, text)
        }
    }
}

fn math2(fun: M, name: &'static str, a: &ConstValue, b: &ConstValue) -> Res<ConstValue> {
    match (a, b) {
        (ConstValue::I32(x), ConstValue::I32(y)) => Ok(ConstValue::I32(match fun {
            M::Min => *x.min(y),
            M::Max => *x.max(y),
            _ => {
                return err(
                    format!("`{}` on i32", call(name, &[a, b])),
                    "WGSL spec §17.5",
                );
            }
        })),
        (ConstValue::U32(x), ConstValue::U32(y)) => Ok(ConstValue::U32(match fun {
            M::Min => *x.min(y),
            M::Max => *x.max(y),
            _ => {
                return err(
                    format!("`{}` on u32", call(name, &[a, b])),
                    "WGSL spec §17.5",
                );
            }
        })),
        _ => {
            let (Some((x, t)), Some((y, _))) = (float_of(a), float_of(b)) else {
                return err(format!("`{}`", call(name, &[a, b])), "WGSL spec §17.5");
            };
            let text = || call(name, &[a, b]);
            let r = match fun {
                M::Min => x.min(y),
                M::Max => x.max(y),
                M::Step => {
                    if x <= y {
                        1.0
                    } else {
                        0.0
                    }
                }
                M::Atan2 => match t {
                    FTy::F32 => f64::from((x as f32).atan2(y as f32)),
                    #[cfg(feature = "f16")]
                    FTy::F16 => x.atan2(y),
                },
                M::Pow => {
                    // Domain: x >= 0, and (x, y) not (1, inf) or (inf, 0) (WGSL spec §17.5.46);
                    // pow(0, 0) = exp2(0 * log2(0)) is NaN.
                    if x < 0.0 || (x == 0.0 && y == 0.0) {
                        return err(
                            format!(
                                "`{}`: ({a}, {b}) is outside the domain of `pow` (base >= 0, not 0 to the 0)",
                                text()
                            ),
                            "WGSL spec §17.5.46 `pow` (#pow-builtin)",
                        );
                    }
                    match t {
                        FTy::F32 => f64::from((x as f32).powf(y as f32)),
                        #[cfg(feature = "f16")]
                        FTy::F16 => x.powf(y),
                    }
                }
                _ => return err(format!("`{}`", text()), "WGSL spec §17.5"),
            };
            finite(t, r, text)
        }
    }
}

fn math3(
    fun: M,
    name: &'static str,
    a: &ConstValue,
    b: &ConstValue,
    c: &ConstValue,
) -> Res<ConstValue> {
    let text = || call(name, &[a, b, c]);
    match (fun, a, b, c) {
        (M::Clamp, ConstValue::I32(x), ConstValue::I32(l), ConstValue::I32(h)) => {
            partial_math(fun, &[None, Some(b.clone()), Some(c.clone())])?;
            Ok(ConstValue::I32(*x.max(l).min(h)))
        }
        (M::Clamp, ConstValue::U32(x), ConstValue::U32(l), ConstValue::U32(h)) => {
            partial_math(fun, &[None, Some(b.clone()), Some(c.clone())])?;
            Ok(ConstValue::U32(*x.max(l).min(h)))
        }
        _ => {
            let (Some((x, t)), Some((y, _)), Some((z, _))) =
                (float_of(a), float_of(b), float_of(c))
            else {
                return err(format!("`{}`", text()), "WGSL spec §17.5");
            };
            let r = match fun {
                M::Clamp => {
                    partial_math(fun, &[None, Some(b.clone()), Some(c.clone())])?;
                    x.max(y).min(z)
                }
                // Fused (one rounding), which WGSL allows (§17.5.32).
                M::Fma => match t {
                    FTy::F32 => f64::from((x as f32).mul_add(y as f32, z as f32)),
                    #[cfg(feature = "f16")]
                    FTy::F16 => x.mul_add(y, z),
                },
                // e1 * (1 - e3) + e2 * e3, in the type (§15.7.3, `mix`).
                M::Mix => {
                    let s = |op, p, q| step(t, op, p, q, &text);
                    let u = s(B::Multiply, x, s(B::Subtract, 1.0, z)?)?;
                    let v = s(B::Multiply, y, z)?;
                    s(B::Add, u, v)?
                }
                // u * u * (3 - 2 * u), u = clamp((x - e0) / (e1 - e0), 0, 1) (§17.5.57).
                M::SmoothStep => {
                    partial_math(fun, &[Some(a.clone()), Some(b.clone()), None])?;
                    let s = |op, p, q| step(t, op, p, q, &text);
                    let u = s(B::Divide, s(B::Subtract, z, x)?, s(B::Subtract, y, x)?)?;
                    let u = u.clamp(0.0, 1.0);
                    let w = s(B::Subtract, 3.0, s(B::Multiply, 2.0, u)?)?;
                    s(B::Multiply, s(B::Multiply, u, u)?, w)?
                }
                _ => return err(format!("`{}`", text()), "WGSL spec §17.5"),
            };
            finite(t, r, text)
        }
    }
}

/// WGSL's name of a built-in function, for messages.
pub(crate) fn math_name(fun: M) -> &'static str {
    match fun {
        M::Abs => "abs",
        M::Min => "min",
        M::Max => "max",
        M::Clamp => "clamp",
        M::Saturate => "saturate",
        M::Cos => "cos",
        M::Cosh => "cosh",
        M::Sin => "sin",
        M::Sinh => "sinh",
        M::Tan => "tan",
        M::Tanh => "tanh",
        M::Acos => "acos",
        M::Asin => "asin",
        M::Atan => "atan",
        M::Atan2 => "atan2",
        M::Asinh => "asinh",
        M::Acosh => "acosh",
        M::Atanh => "atanh",
        M::Radians => "radians",
        M::Degrees => "degrees",
        M::Ceil => "ceil",
        M::Floor => "floor",
        M::Round => "round",
        M::Fract => "fract",
        M::Trunc => "trunc",
        M::Exp => "exp",
        M::Exp2 => "exp2",
        M::Log => "log",
        M::Log2 => "log2",
        M::Pow => "pow",
        M::Dot => "dot",
        M::Cross => "cross",
        M::Distance => "distance",
        M::Length => "length",
        M::Normalize => "normalize",
        M::Sign => "sign",
        M::Fma => "fma",
        M::Mix => "mix",
        M::Step => "step",
        M::SmoothStep => "smoothstep",
        M::Sqrt => "sqrt",
        M::InverseSqrt => "inverseSqrt",
        M::Transpose => "transpose",
        M::CountTrailingZeros => "countTrailingZeros",
        M::CountLeadingZeros => "countLeadingZeros",
        M::CountOneBits => "countOneBits",
        M::ReverseBits => "reverseBits",
        M::ExtractBits => "extractBits",
        M::InsertBits => "insertBits",
        M::FirstTrailingBit => "firstTrailingBit",
        M::FirstLeadingBit => "firstLeadingBit",
        M::Ldexp => "ldexp",
        M::QuantizeToF16 => "quantizeToF16",
        M::Pack2x16float => "pack2x16float",
        _ => "a built-in",
    }
}

/// The operand nodes of `kind` (places excluded: a node that reads memory is not constant).
fn operands(kind: &ExprKind) -> Vec<&NodeRef> {
    match kind {
        ExprKind::Binary(_, a, b) | ExprKind::Access(a, b) => vec![a, b],
        ExprKind::Unary(_, a)
        | ExprKind::Relational(_, a)
        | ExprKind::As { value: a, .. }
        | ExprKind::Splat(_, a)
        | ExprKind::Swizzle(_, _, a)
        | ExprKind::AccessIndex(a, _) => vec![a],
        ExprKind::CoopLoad { stride, .. } => vec![stride],
        ExprKind::TextureLoad { coords, level, .. } => {
            std::iter::once(coords).chain(level.as_ref()).collect()
        }
        ExprKind::TextureDimensions { level, .. } => level.iter().collect(),
        ExprKind::CoopMultiplyAdd(a, b, c) => vec![a, b, c],
        ExprKind::Math(_, args) | ExprKind::Compose(args) => args.iter().collect(),
        ExprKind::Select {
            condition,
            accept,
            reject,
        } => vec![condition, accept, reject],
        ExprKind::Literal(_)
        | ExprKind::ZeroValue
        | ExprKind::Load(_)
        | ExprKind::ArrayLength(_)
        | ExprKind::Builtin(_)
        | ExprKind::Bound(_)
        | ExprKind::Param { .. }
        | ExprKind::Invalid(_) => Vec::new(),
    }
}

/// [`Exp::eval_const`] lives here, beside the evaluator it calls, so that `exp` (below this
/// module) does not name it.
impl<T: WgslType> Exp<T> {
    /// The value of this expression if it is a *const-expression* (WGSL spec §8.1.1): every
    /// leaf a literal or a zero value, evaluated as WGSL evaluates it when the shader is
    /// created. `Ok(None)` if it reads memory, a built-in value, a parameter or a `let`.
    ///
    /// [`KernelBuilder::build`](crate::KernelBuilder::build) evaluates every such subtree (and
    /// treats a `let_` of a literal as the literal, since the WGSL naga writes inlines it).
    ///
    /// # Errors
    /// [`BuildError::ConstExpression`] at the call site of
    /// the first operation (operands first) that WGSL rejects at shader creation, such as
    /// `lit(1.0) / lit(0.0)` or `sqrt(lit(-1.0))`;
    /// [`BuildError::NonFiniteLiteral`].
    pub fn eval_const(&self) -> Result<Option<ConstValue>, BuildError> {
        eval_tree(&self.node)
    }
}

/// The value of `left op b` (`op` is `&&` or `||`) when the left operand's value `left`
/// decides it alone, `b` unevaluated: `false && b` and `true || b` (WGSL spec §8.1.1).
pub(crate) fn decides(op: B, left: Option<ConstValue>) -> Option<ConstValue> {
    left.filter(|l| matches!(l, ConstValue::Bool(l) if *l != (op == B::LogicalAnd)))
}

/// Evaluate a whole tree: the value of `root` if it is a const-expression, the first error
/// (in evaluation order: operands before operations) otherwise.
pub(crate) fn eval_tree(root: &NodeRef) -> Result<Option<ConstValue>, crate::BuildError> {
    use std::collections::HashMap;
    fn go(
        node: &NodeRef,
        memo: &mut HashMap<*const Node, Option<ConstValue>>,
        depth: usize,
    ) -> Result<Option<ConstValue>, crate::BuildError> {
        let key = std::rc::Rc::as_ptr(node);
        if let Some(v) = memo.get(&key) {
            return Ok(v.clone());
        }
        if depth > crate::exp::MAX_DEPTH {
            return Ok(None);
        }
        match &node.kind {
            // The right operand of `&&` and `||` only where the left one leaves the result
            // open (WGSL spec §8.1.1).
            ExprKind::Binary(op @ (B::LogicalAnd | B::LogicalOr), a, b) => {
                let left = go(a, memo, depth + 1)?;
                if decides(*op, left).is_none() {
                    go(b, memo, depth + 1)?;
                }
            }
            kind => {
                for child in operands(kind) {
                    go(child, memo, depth + 1)?;
                }
            }
        }
        if let ExprKind::Literal(Lit::F32(v)) = node.kind
            && !v.is_finite()
        {
            return Err(crate::BuildError::NonFiniteLiteral {
                value: v,
                site: node.site,
            });
        }
        let value = eval(node, &mut |n| {
            memo.get(&std::rc::Rc::as_ptr(n)).cloned().flatten()
        })
        .map_err(|e| e.at(node.site))?;
        memo.insert(key, value.clone());
        Ok(value)
    }
    go(root, &mut HashMap::new(), 0)
}
