//! The typing and value rules of operators, built-in functions and conversions, for
//! [`crate::analysis`].

use std::collections::HashMap;

use crate::accuracy::{F, Ops, Reject, Rounding, ZERO_GRID, finish};
use crate::ast::*;
use crate::info::{Info, Num, full, ints_within};

type R = Result<Info, Reject>;

fn info(ty: Ty, num: Num) -> Info {
    Info {
        ty,
        num,
        konst: false,
        uniform: true,
    }
}

fn wrap(s: Scalar, lo: i64, hi: i64) -> Num {
    let Num::Int { lo: fl, hi: fh } = full(s) else {
        unreachable!()
    };
    if lo >= fl && hi <= fh && lo <= hi {
        Num::Int { lo, hi }
    } else {
        full(s)
    }
}

fn f_of(i: &Info) -> Result<F, Reject> {
    i.float()
        .ok_or_else(|| format!("a float operand, not {:?}", i.ty))
}

fn range_of(i: &Info) -> Result<(i64, i64), Reject> {
    i.range()
        .ok_or_else(|| format!("an integer operand, not {:?}", i.ty))
}

/// `x op y`; `same` when both operands are the same expression (`x * x` is a square).
pub fn binary(op: Bin, same: bool, x: &Info, y: &Info, y_literals: &[Lit]) -> R {
    use Bin::*;
    let (tx, ty) = (x.ty, y.ty);
    let arith = matches!(op, Add | Sub | Mul | Div | Rem);
    // The result type, by WGSL's rules as the DSL's operand traits give them.
    let out = match (tx, ty) {
        _ if tx.scalar() == Scalar::Bool || ty.scalar() == Scalar::Bool => {
            return Err("arithmetic on bools".into());
        }
        (a, b) if a == b && a.is_sv() => a,
        (Ty::V(s, n), Ty::S(t)) | (Ty::S(t), Ty::V(s, n)) if s == t && arith => Ty::V(s, n),
        (Ty::M(n), Ty::M(m)) if n == m && matches!(op, Add | Sub | Mul) => Ty::M(n),
        (Ty::M(n), Ty::V(Scalar::F32, m)) | (Ty::V(Scalar::F32, m), Ty::M(n))
            if n == m && op == Mul =>
        {
            Ty::V(Scalar::F32, n)
        }
        (Ty::M(n), Ty::S(Scalar::F32)) | (Ty::S(Scalar::F32), Ty::M(n)) if op == Mul => Ty::M(n),
        (a, b) if matches!(op, Shl | Shr) && a.is_sv() && b == a.with_scalar(Scalar::U32) => a,
        _ => return Err(format!("{op:?} of {tx:?} and {ty:?}")),
    };
    let s = out.scalar();
    if matches!(op, And | Or | Xor | Shl | Shr) && !s.is_int() {
        return Err("bit operations on non-integers".into());
    }
    if matches!(op, Shl | Shr) && (tx != out || ty != tx.with_scalar(Scalar::U32)) {
        return Err("a shift amount that is not u32 of the same shape".into());
    }
    if s.is_float() {
        let o = Ops::of(s);
        let (a, b) = (f_of(x)?, f_of(y)?);
        let n = out.width();
        let f = match (op, tx, ty) {
            (Mul, Ty::M(_), Ty::M(_) | Ty::V(..)) | (Mul, Ty::V(..), Ty::M(_)) => o.dot(a, b, n)?,
            (Add, ..) => o.add(a, b)?,
            (Sub, ..) => o.sub(a, b)?,
            (Mul, ..) if same => o.sqr(a)?,
            (Mul, ..) => o.mul(a, b)?,
            (Div, ..) => o.div(a, b)?,
            (Rem, ..) => o.rem(a, b)?,
            _ => return Err(format!("{op:?} on floats")),
        };
        return Ok(info(out, Num::Float(f)));
    }
    let ((xl, xh), (yl, yh)) = (range_of(x)?, range_of(y)?);
    if matches!(op, Div | Rem | Shl | Shr) && y.konst {
        // WGSL rejects `x / 0`, `x % 0` and shifts by 32 or more with a literal operand
        // (§8.1.1): only literal operands are checked here, other constants are refused.
        if y_literals.is_empty() {
            return Err("a constant divisor or shift that is not a literal".into());
        }
    }
    for l in y_literals {
        let v = match *l {
            Lit::I32(v) => i64::from(v),
            Lit::U32(v) => i64::from(v),
            _ => continue,
        };
        match op {
            Div | Rem if v == 0 => return Err("a literal zero divisor".into()),
            Div | Rem if v == -1 && x.konst => return Err("a constant i32::MIN / -1".into()),
            Shl | Shr if v >= 32 => return Err("a literal shift by 32 or more".into()),
            _ => {}
        }
    }
    if matches!(op, Shl | Shr) && x.konst && y.konst {
        return Err("a shift of a constant by a constant (overflow is a build error)".into());
    }
    let num = match op {
        Add => wrap(s, xl + yl, xh + yh),
        Sub => wrap(s, xl - yh, xh - yl),
        Mul => {
            let (xl, xh, yl, yh) = (xl as i128, xh as i128, yl as i128, yh as i128);
            let c = [xl * yl, xl * yh, xh * yl, xh * yh];
            let lo = c.iter().copied().min().unwrap_or(0);
            let hi = c.iter().copied().max().unwrap_or(0);
            if lo < i128::from(i64::MIN / 4) || hi > i128::from(i64::MAX / 4) {
                full(s)
            } else {
                wrap(s, lo as i64, hi as i64)
            }
        }
        Div if s == Scalar::U32 => Num::Int { lo: 0, hi: xh },
        Div => {
            let m = xl.abs().max(xh.abs());
            wrap(s, -m, m)
        }
        Rem if s == Scalar::U32 => Num::Int {
            lo: 0,
            hi: xh.min((yh - 1).max(0)),
        },
        Rem => {
            let m = yl.abs().max(yh.abs()) - 1;
            let m = m.max(0).min(xl.abs().max(xh.abs()));
            wrap(s, if xl < 0 { -m } else { 0 }, if xh > 0 { m } else { 0 })
        }
        And if xl >= 0 || yl >= 0 => {
            let hi = match (xl >= 0, yl >= 0) {
                (true, true) => xh.min(yh),
                (true, false) => xh,
                _ => yh,
            };
            Num::Int { lo: 0, hi }
        }
        Or if xl >= 0 && y_literals.len() == 1 && yl == yh && yl >= 0 => {
            let block = ((xh + 1).max(1) as u64)
                .checked_next_power_of_two()
                .map_or(i64::MAX, |b| b as i64);
            if yl % block == 0 {
                wrap(s, yl + xl, yl + xh)
            } else {
                full(s)
            }
        }
        // The amount is taken modulo 32 (§8.9).
        Shr if yl == yh && xl >= 0 => Num::Int {
            lo: xl >> (yl & 31),
            hi: xh >> (yl & 31),
        },
        Shl if yl == yh && xl >= 0 && xh < (1 << 31) => wrap(s, xl << (yl & 31), xh << (yl & 31)),
        _ => full(s),
    };
    Ok(info(out, num))
}

fn same_types(infos: &[Info]) -> Result<Ty, Reject> {
    let t = infos.first().ok_or("no operands")?.ty;
    if infos.iter().any(|i| i.ty != t) {
        return Err("operands of different types".into());
    }
    Ok(t)
}

fn float_ty(t: Ty) -> Result<Scalar, Reject> {
    match t {
        Ty::S(s) | Ty::V(s, _) if s.is_float() => Ok(s),
        _ => Err(format!("a float operand, not {t:?}")),
    }
}

fn int_ty(t: Ty) -> Result<Scalar, Reject> {
    match t {
        Ty::S(s) | Ty::V(s, _) if s.is_int() => Ok(s),
        _ => Err(format!("an integer operand, not {t:?}")),
    }
}

/// `[lo, hi]` holds a literal `bool`/integer argument's value.
fn lit_u32(e: &Expr, lets: &HashMap<Id, Lit>) -> Option<u32> {
    match e {
        Expr::Lit(Lit::U32(v)) => Some(*v),
        Expr::Value(id) => match lets.get(id) {
            Some(Lit::U32(v)) => Some(*v),
            _ => None,
        },
        _ => None,
    }
}

/// A built-in function of `args` described by `infos`.
pub fn math(fun: Fun, args: &[Expr], infos: &[Info], lets: &HashMap<Id, Lit>) -> R {
    use Fun::*;
    let arity = match fun {
        Min | Max | Pow | Atan2 | Step | Dot | Cross | Distance | Reflect | Ldexp
        | Dot4I8Packed | Dot4U8Packed => 2,
        Clamp | Mix | Smoothstep | Fma | FaceForward | Refract | ExtractBits => 3,
        InsertBits => 4,
        _ => 1,
    };
    if infos.len() != arity {
        return Err(format!("{} takes {arity} operands", fun.name()));
    }
    let a = infos[0];
    let t = a.ty;
    let s = t.scalar();
    let n = t.width();
    let fl = |f: F| Num::Float(f);
    let o = Ops::of(if s.is_float() { s } else { Scalar::F32 });
    let float_unary = |f: &dyn Fn(Ops, F) -> Result<F, Reject>| -> R {
        float_ty(t)?;
        Ok(info(t, Num::Float(f(o, f_of(&a)?)?)))
    };
    match fun {
        Abs => {
            if !t.is_sv() || s == Scalar::Bool {
                return Err("abs of a non-number".into());
            }
            let num = match a.num {
                Num::Float(f) => fl(o.abs(f)),
                Num::Int { lo, hi } if s == Scalar::I32 => {
                    if lo > i64::from(i32::MIN) {
                        let m = lo.abs().max(hi.abs());
                        Num::Int {
                            lo: if lo >= 0 {
                                lo
                            } else if hi >= 0 {
                                0
                            } else {
                                -hi
                            },
                            hi: m,
                        }
                    } else {
                        full(s)
                    }
                }
                num => num,
            };
            Ok(info(t, num))
        }
        Sign => {
            if !t.is_sv() || !matches!(s, Scalar::I32 | Scalar::F32 | Scalar::F16) {
                return Err("sign of an unsigned".into());
            }
            let num = match a.num {
                Num::Float(f) => fl(o.sign(f)?),
                _ => Num::Int { lo: -1, hi: 1 },
            };
            Ok(info(t, num))
        }
        Exp => float_unary(&|o, f| o.exp(f, false)),
        Exp2 => float_unary(&|o, f| o.exp(f, true)),
        Log => float_unary(&|o, f| o.log(f, false)),
        Log2 => float_unary(&|o, f| o.log(f, true)),
        Sqrt => float_unary(&|o, f| o.sqrt(f)),
        InverseSqrt => float_unary(&|o, f| o.inverse_sqrt(f)),
        Sin => float_unary(&|o, f| o.sin_cos(f, false)),
        Cos => float_unary(&|o, f| o.sin_cos(f, true)),
        Tan => float_unary(&|o, f| o.tan(f)),
        Asin => float_unary(&|o, f| o.asin_acos(f, false)),
        Acos => float_unary(&|o, f| o.asin_acos(f, true)),
        Atan => float_unary(&|o, f| o.atan(f)),
        Sinh => float_unary(&|o, f| o.sinh_cosh(f, false)),
        Cosh => float_unary(&|o, f| o.sinh_cosh(f, true)),
        Tanh => float_unary(&|o, f| o.tanh(f)),
        Asinh => float_unary(&|o, f| o.asinh(f)),
        Acosh => float_unary(&|o, f| o.acosh(f)),
        Atanh => float_unary(&|o, f| o.atanh(f)),
        Floor => float_unary(&|o, f| o.round_to_int(f, f64::floor)),
        Ceil => float_unary(&|o, f| o.round_to_int(f, f64::ceil)),
        Round => float_unary(&|o, f| o.round_to_int(f, f64::round)),
        Trunc => float_unary(&|o, f| o.round_to_int(f, f64::trunc)),
        Fract => float_unary(&|o, f| o.fract(f)),
        Saturate => float_unary(&|o, f| o.clamp(f, F::lit(0.0), F::lit(1.0))),
        Radians => float_unary(&|o, f| o.mul_const(f, std::f64::consts::PI / 180.0)),
        Degrees => float_unary(&|o, f| o.mul_const(f, 180.0 / std::f64::consts::PI)),
        QuantizeToF16 => {
            if s != Scalar::F32 {
                return Err("quantizeToF16 of a non-f32".into());
            }
            let f = f_of(&a)?;
            let q = Ops::of(Scalar::F16).convert(f)?;
            Ok(info(t, fl(q)))
        }
        CountOneBits | CountLeadingZeros | CountTrailingZeros => {
            int_ty(t)?;
            Ok(info(t, Num::Int { lo: 0, hi: 32 }))
        }
        FirstLeadingBit | FirstTrailingBit | ReverseBits => {
            let s = int_ty(t)?;
            Ok(info(t, full(s)))
        }
        Min | Max => {
            let t = same_types(infos)?;
            if !t.is_sv() || s == Scalar::Bool {
                return Err("min/max of non-numbers".into());
            }
            let num = match (a.num, infos[1].num) {
                (Num::Float(x), Num::Float(y)) => fl(o.min_max(x, y, fun == Max)),
                (Num::Int { lo, hi }, Num::Int { lo: l2, hi: h2 }) => {
                    if fun == Max {
                        Num::Int {
                            lo: lo.max(l2),
                            hi: hi.max(h2),
                        }
                    } else {
                        Num::Int {
                            lo: lo.min(l2),
                            hi: hi.min(h2),
                        }
                    }
                }
                _ => return Err("min/max".into()),
            };
            Ok(info(t, num))
        }
        Clamp => {
            let t = same_types(infos)?;
            if !t.is_sv() || s == Scalar::Bool {
                return Err("clamp of non-numbers".into());
            }
            let num = match (a.num, infos[1].num, infos[2].num) {
                (Num::Float(x), Num::Float(l), Num::Float(h)) => fl(o.clamp(x, l, h)?),
                (Num::Int { lo, hi }, Num::Int { lo: ll, hi: lh }, Num::Int { lo: hl, hi: hh }) => {
                    if infos[1].konst && infos[2].konst {
                        // Literal bounds must not cross (a build error, §8.1.1).
                        if !(matches!(args[1], Expr::Lit(_)) && matches!(args[2], Expr::Lit(_)))
                            || lh > hl
                        {
                            return Err("constant clamp bounds that may cross".into());
                        }
                    }
                    if lh <= hl {
                        Num::Int {
                            lo: lo.max(ll).min(hh).max(ll.min(hl)),
                            hi: hi.min(hh).max(ll),
                        }
                    } else {
                        full(s)
                    }
                }
                _ => return Err("clamp".into()),
            };
            Ok(info(t, num))
        }
        Pow | Atan2 | Step => {
            let t = same_types(infos)?;
            float_ty(t)?;
            let (x, y) = (f_of(&a)?, f_of(&infos[1])?);
            let f = match fun {
                Pow => o.pow(x, y)?,
                Atan2 => o.atan2(x, y)?,
                _ => o.step(x, y)?,
            };
            Ok(info(t, fl(f)))
        }
        Mix | Fma | Smoothstep => {
            let t = same_types(infos)?;
            float_ty(t)?;
            let (x, y, z) = (f_of(&a)?, f_of(&infos[1])?, f_of(&infos[2])?);
            let f = match fun {
                Mix => o.mix(x, y, z)?,
                Fma => o.fma(x, y, z)?,
                _ => {
                    if infos[0].konst && infos[1].konst {
                        // Literal edges: they must differ (a build error otherwise).
                        if x.lo == y.lo {
                            return Err("equal smoothstep edges".into());
                        }
                    }
                    o.smoothstep(x, y, z)?
                }
            };
            Ok(info(t, fl(f)))
        }
        Square | Powi(_) => {
            if !t.is_sv() || s == Scalar::Bool {
                return Err("a power of a non-number".into());
            }
            let k = if let Powi(k) = fun { k } else { 2 };
            if k > 5 {
                return Err("a large power".into());
            }
            if k == 0 {
                // `powi(e, 0)` is the literal 1 whatever `e` is: a constant the syntax does not
                // show, which would hide const-expression errors from the rules here.
                return Err("powi(e, 0)".into());
            }
            let num = match a.num {
                Num::Float(f) => {
                    if k == 0 {
                        fl(F::lit(1.0))
                    } else {
                        let mut acc = f;
                        let mut power = f;
                        let mut first = true;
                        let mut m = k;
                        // Binary exponentiation, as `powi` builds it.
                        loop {
                            if m & 1 == 1 {
                                acc = if first { power } else { o.mul(acc, power)? };
                                first = false;
                            }
                            m >>= 1;
                            if m == 0 {
                                break;
                            }
                            power = o.sqr(power)?;
                        }
                        fl(acc)
                    }
                }
                _ if k == 0 => Num::Int { lo: 1, hi: 1 },
                _ => full(s),
            };
            Ok(info(t, num))
        }
        Dot => {
            let t = same_types(infos)?;
            let Ty::V(s, n) = t else {
                return Err("dot of non-vectors".into());
            };
            if s == Scalar::Bool {
                return Err("dot of bools".into());
            }
            let num = match (a.num, infos[1].num) {
                (Num::Float(x), Num::Float(y)) => {
                    if args[0] == args[1] {
                        fl(o.dot_self(x, n)?)
                    } else {
                        fl(o.dot(x, y, n)?)
                    }
                }
                _ => full(s),
            };
            Ok(info(Ty::S(s), num))
        }
        Cross => {
            let t = same_types(infos)?;
            if t != Ty::V(Scalar::F32, 3) {
                return Err("cross of non-vec3<f32>".into());
            }
            let (x, y) = (f_of(&a)?, f_of(&infos[1])?);
            let p = o.mul(x, y)?;
            Ok(info(t, fl(o.sub(p, p)?)))
        }
        Length => {
            float_ty(t)?;
            Ok(info(Ty::S(s), fl(o.length(f_of(&a)?, n)?)))
        }
        Distance => {
            let t = same_types(infos)?;
            float_ty(t)?;
            let d = o.sub(f_of(&a)?, f_of(&infos[1])?)?;
            Ok(info(Ty::S(s), fl(o.length(d, n)?)))
        }
        Normalize => {
            if !matches!(t, Ty::V(..)) {
                return Err("normalize of a scalar".into());
            }
            float_ty(t)?;
            let f = f_of(&a)?;
            let len = o.length(f, n)?;
            Ok(info(t, fl(o.div(f, len)?)))
        }
        FaceForward => {
            let t = same_types(infos)?;
            if !matches!(t, Ty::V(..)) {
                return Err("faceForward of scalars".into());
            }
            float_ty(t)?;
            let (e1, e2, e3) = (f_of(&a)?, f_of(&infos[1])?, f_of(&infos[2])?);
            let d = o.dot(e2, e3, n)?;
            if !d.is_exact() && d.min_mag() == 0.0 {
                return Err("faceForward whose dot product may be near 0".into());
            }
            Ok(info(t, fl(e1.join(o.neg(e1)))))
        }
        Reflect => {
            let t = same_types(infos)?;
            if !matches!(t, Ty::V(..)) {
                return Err("reflect of scalars".into());
            }
            float_ty(t)?;
            let (e1, e2) = (f_of(&a)?, f_of(&infos[1])?);
            let d = o.dot(e2, e1, n)?;
            let k = o.mul(o.mul(F::lit(2.0), d)?, e2)?;
            Ok(info(t, fl(o.sub(e1, k)?)))
        }
        Refract => {
            if !matches!(t, Ty::V(..)) || infos[1].ty != t || infos[2].ty != Ty::S(s) {
                return Err("refract's operands".into());
            }
            float_ty(t)?;
            let (e1, e2, e3) = (f_of(&a)?, f_of(&infos[1])?, f_of(&infos[2])?);
            let d = o.dot(e2, e1, n)?;
            let k = o.sub(
                F::lit(1.0),
                o.mul(o.sqr(e3)?, o.sub(F::lit(1.0), o.sqr(d)?)?)?,
            )?;
            let (klo, khi) = k.widened();
            if khi < 0.0 {
                return Ok(info(t, fl(F::lit(0.0))));
            }
            if klo <= 0.0 {
                return Err("refract whose k may be near 0".into());
            }
            let r = o.sub(
                o.mul(e3, e1)?,
                o.mul(o.add(o.mul(e3, d)?, o.sqrt(k)?)?, e2)?,
            )?;
            Ok(info(t, fl(r)))
        }
        Transpose => match t {
            Ty::M(_) => Ok(info(t, a.num)),
            _ => Err("transpose of a non-matrix".into()),
        },
        Determinant => {
            let Ty::M(n) = t else {
                return Err("determinant of a non-matrix".into());
            };
            let f = f_of(&a)?;
            // Cofactor expansion, as a sum of n products of an entry and a minor.
            let mut det = o.sub(o.mul(f, f)?, o.mul(f, f)?)?;
            for _ in 3..=n {
                let term = o.mul(f, det)?;
                let mut sum = term;
                for _ in 1..n {
                    sum = o.add(sum, term)?;
                }
                det = sum;
            }
            Ok(info(Ty::S(Scalar::F32), fl(det)))
        }
        ExtractBits | InsertBits => {
            let s = int_ty(t)?;
            let (value_args, rest) = if fun == ExtractBits { (1, 1) } else { (2, 2) };
            let _ = rest;
            if fun == InsertBits && infos[1].ty != t {
                return Err("insertBits of another type".into());
            }
            let (off, cnt) = (&args[value_args], &args[value_args + 1]);
            let (oi, ci) = (infos[value_args], infos[value_args + 1]);
            if oi.ty != Ty::S(Scalar::U32) || ci.ty != Ty::S(Scalar::U32) {
                return Err("bit offsets that are not u32".into());
            }
            if oi.konst && ci.konst {
                match (lit_u32(off, lets), lit_u32(cnt, lets)) {
                    (Some(o), Some(c)) if u64::from(o) + u64::from(c) <= 32 => {}
                    _ => return Err("constant bit ranges past 32 bits".into()),
                }
            }
            Ok(info(t, full(s)))
        }
        Pack4x8snorm | Pack4x8unorm | Pack2x16snorm | Pack2x16unorm => {
            let (want, scale, lo) = match fun {
                Pack4x8snorm => (4, 127.0, -1.0),
                Pack4x8unorm => (4, 255.0, 0.0),
                Pack2x16snorm => (2, 32767.0, -1.0),
                _ => (2, 65535.0, 0.0),
            };
            if t != Ty::V(Scalar::F32, want) {
                return Err("a pack of another type".into());
            }
            let f = f_of(&a)?;
            // floor(0.5 + scale * clamp(e, lo, 1)): every step exact, or the result may differ.
            let c = o.clamp(f, F::lit(lo), F::lit(1.0))?;
            let r = o.add(o.mul(F::lit(scale), c)?, F::lit(0.5))?;
            if !r.is_exact() {
                return Err("a pack whose rounding is not exact".into());
            }
            // A component of -0.5 is a tie of the snorm packs (`scale * -0.5` is `-k - 0.5`):
            // WGSL gives `floor(0.5 + (-k - 0.5))` = `-k`, naga's SPIR-V backend lowers the
            // pack to GLSL.std.450 `PackSnorm*`, whose `round` Vulkan leaves to the
            // implementation (lavapipe: `-k - 1`). The one tie that differs (unorm ties and
            // +0.5 round up either way); FUZZING.md naga finding 4, pinned by
            // `tests/naga_findings.rs` and `tests/lavapipe_findings.rs`.
            if lo < 0.0 && f.grid <= -1 && f.lo <= -0.5 && f.hi >= -0.5 {
                return Err(
                    "a snorm pack of a component that may be -0.5 (a tie naga's SPIR-V rounds otherwise)"
                        .into(),
                );
            }
            // Mesa's constant folding of `pack4x8snorm` (lavapipe, Mesa 22.3) sign-extends
            // each negative field into the fields above it: `pack4x8snorm(vec4(1, 1, -1, 1))`
            // gives `0xff817f7f`, not `0x7f817f7f`. FUZZING.md lavapipe finding 1, pinned by
            // `tests/lavapipe_findings.rs`.
            if fun == Pack4x8snorm && a.konst && f.lo < 0.0 {
                return Err(
                    "a snorm pack of a constant that may be negative (lavapipe folds it wrongly)"
                        .into(),
                );
            }
            Ok(info(Ty::S(Scalar::U32), full(Scalar::U32)))
        }
        Pack2x16float => {
            if t != Ty::V(Scalar::F32, 2) {
                return Err("pack2x16float of another type".into());
            }
            let f = f_of(&a)?;
            let h = Ops::of(Scalar::F16).convert(f)?;
            if !h.is_exact() || f.min_mag() == 0.0 {
                return Err("pack2x16float of values not exactly f16, or zeros".into());
            }
            Ok(info(Ty::S(Scalar::U32), full(Scalar::U32)))
        }
        Pack4xI8 | Pack4xI8Clamp => {
            if t != Ty::V(Scalar::I32, 4) {
                return Err("pack4xI8 of another type".into());
            }
            Ok(info(Ty::S(Scalar::U32), full(Scalar::U32)))
        }
        Pack4xU8 | Pack4xU8Clamp => {
            if t != Ty::V(Scalar::U32, 4) {
                return Err("pack4xU8 of another type".into());
            }
            Ok(info(Ty::S(Scalar::U32), full(Scalar::U32)))
        }
        Unpack4x8snorm | Unpack4x8unorm | Unpack2x16snorm | Unpack2x16unorm => {
            if t != Ty::S(Scalar::U32) {
                return Err("an unpack of a non-u32".into());
            }
            let (w, lo) = match fun {
                Unpack4x8snorm => (4, -1.0),
                Unpack4x8unorm => (4, 0.0),
                Unpack2x16snorm => (2, -1.0),
                _ => (2, 0.0),
            };
            let f = finish(o.fmt, lo, 1.0, 0.0, None, Rounding::Ulps(3.0))?;
            Ok(info(Ty::V(Scalar::F32, w), fl(f)))
        }
        Unpack2x16float => {
            if t != Ty::S(Scalar::U32) {
                return Err("unpack2x16float of a non-u32".into());
            }
            // Only operands whose halves are normal, finite f16s: `(x & 0x3bff3bff) | 0x04000400`.
            let ok = match &args[0] {
                Expr::Bin(Bin::Or, x, m) => {
                    **m == Expr::Lit(Lit::U32(0x0400_0400))
                        && matches!(&**x, Expr::Bin(Bin::And, _, k) if **k == Expr::Lit(Lit::U32(0x3bff_3bff)))
                }
                _ => false,
            };
            if !ok {
                return Err("unpack2x16float of halves that may not be normal".into());
            }
            // Mesa's constant folding of `unpack2x16float` (lavapipe, Mesa 22.3) gives 0.0 for
            // the high half: `unpack2x16float(0x3c000c01).y` of a constant is 0, not 1 (the
            // low half and any loaded word unpack right). FUZZING.md lavapipe finding 3,
            // pinned by `tests/lavapipe_findings.rs`.
            if a.konst {
                return Err(
                    "unpack2x16float of a constant (lavapipe folds its high half to 0)".into(),
                );
            }
            let f = F::exact_range(2f64.powi(-14), 2.0, -24);
            Ok(info(Ty::V(Scalar::F32, 2), fl(f)))
        }
        Unpack4xI8 => {
            if t != Ty::S(Scalar::U32) {
                return Err("unpack4xI8 of a non-u32".into());
            }
            Ok(info(Ty::V(Scalar::I32, 4), Num::Int { lo: -128, hi: 127 }))
        }
        Unpack4xU8 => {
            if t != Ty::S(Scalar::U32) {
                return Err("unpack4xU8 of a non-u32".into());
            }
            Ok(info(Ty::V(Scalar::U32, 4), Num::Int { lo: 0, hi: 255 }))
        }
        Dot4I8Packed | Dot4U8Packed => {
            same_types(infos)?;
            if t != Ty::S(Scalar::U32) {
                return Err("packed dot products of non-u32".into());
            }
            Ok(if fun == Dot4I8Packed {
                info(
                    Ty::S(Scalar::I32),
                    Num::Int {
                        lo: -65536,
                        hi: 65536,
                    },
                )
            } else {
                info(
                    Ty::S(Scalar::U32),
                    Num::Int {
                        lo: 0,
                        hi: 4 * 255 * 255,
                    },
                )
            })
        }
        Ldexp => {
            float_ty(t)?;
            if infos[1].ty != t.with_scalar(Scalar::I32) {
                return Err("an ldexp exponent of another shape".into());
            }
            let (lo, hi) = range_of(&infos[1])?;
            if s == Scalar::F16 && hi > 15 {
                return Err("an f16 ldexp exponent above the bias".into());
            }
            Ok(info(t, fl(o.ldexp(f_of(&a)?, lo, hi)?)))
        }
    }
}

/// A conversion of `a`.
pub fn convert(c: Conv, a: &Info) -> R {
    if !a.ty.is_sv() {
        return Err("a conversion of a matrix".into());
    }
    let from = a.ty.scalar();
    match c {
        Conv::To(to) => {
            let ty = a.ty.with_scalar(to);
            let num = match (a.num, to) {
                (Num::Bool, Scalar::Bool) => Num::Bool,
                (Num::Bool, s) if s.is_int() => Num::Int { lo: 0, hi: 1 },
                (Num::Bool, _) => Num::Float(F::exact_range(0.0, 1.0, 0)),
                (Num::Int { .. }, Scalar::Bool) => Num::Bool,
                (Num::Int { lo, hi }, s) if s.is_int() => ints_within(lo, hi, s),
                (Num::Int { lo, hi }, s) => {
                    let m = lo.abs().max(hi.abs()) as f64;
                    let o = Ops::of(s);
                    if m > o.fmt.safe_max {
                        return Err("an integer beyond the float's range".into());
                    }
                    let f = F {
                        lo: lo as f64,
                        hi: hi as f64,
                        err: 0.0,
                        grid: 0,
                        nonneg: lo >= 0,
                    };
                    Num::Float(o.convert(f)?)
                }
                (Num::Float(f), Scalar::Bool) => {
                    if !f.is_exact() {
                        return Err("bool of an inexact float".into());
                    }
                    Num::Bool
                }
                (Num::Float(f), s) if s.is_int() => {
                    if !f.is_exact() {
                        return Err("an integer of an inexact float".into());
                    }
                    let (lo, hi) = (f.lo.trunc(), f.hi.trunc());
                    match s {
                        Scalar::I32 if lo > -2147483520.0 && hi < 2147483520.0 => Num::Int {
                            lo: lo as i64,
                            hi: hi as i64,
                        },
                        Scalar::U32 if f.lo > -1.0 && hi < 4294967040.0 => Num::Int {
                            lo: lo.max(0.0) as i64,
                            hi: hi.max(0.0) as i64,
                        },
                        _ => return Err("a float beyond the integer's range".into()),
                    }
                }
                (Num::Float(f), s) if s == from => Num::Float(f),
                (Num::Float(f), Scalar::F32) => Num::Float(f),
                (Num::Float(f), s) => Num::Float(Ops::of(s).convert(f)?),
            };
            Ok(info(ty, num))
        }
        Conv::Bitcast(ty) => {
            let to = ty.scalar();
            let ok = |s: Scalar| matches!(s, Scalar::I32 | Scalar::U32 | Scalar::F32);
            if !ok(from) || !ok(to) {
                return Err("a bitcast of a non-32-bit type".into());
            }
            if a.ty.with_scalar(to) != ty {
                return Err("a bitcast to another width".into());
            }
            let num = match (a.num, to) {
                (Num::Int { lo, hi }, Scalar::F32) => {
                    // Only integers that are the bits of positive, normal, finite floats.
                    if lo < 0x0080_0000 || hi > 0x5d00_0000 {
                        return Err(
                            "a bitcast to f32 of bits that may not be a normal float".into()
                        );
                    }
                    let (flo, fhi) = (
                        f64::from(f32::from_bits(lo as u32)),
                        f64::from(f32::from_bits(hi as u32)),
                    );
                    let grid = flo.log2().floor() as i32 - 23;
                    Num::Float(F::exact_range(flo, fhi, grid))
                }
                (Num::Int { lo, hi }, s) => ints_within(lo, hi, s),
                (Num::Float(f), Scalar::F32) => Num::Float(f),
                (Num::Float(f), s) => {
                    if !f.is_exact() || f.min_mag() == 0.0 {
                        return Err("a bitcast of an inexact float or of a zero".into());
                    }
                    full(s)
                }
                _ => return Err("a bitcast".into()),
            };
            Ok(info(ty, num))
        }
        Conv::Saturating(to) => {
            if a.ty != Ty::S(Scalar::F32) || !to.is_int() {
                return Err("a saturating conversion of a non-f32".into());
            }
            let f = f_of(a)?;
            if !f.is_exact() {
                return Err("a saturating conversion of an inexact float".into());
            }
            let (lo, hi) = (f.lo.trunc(), f.hi.trunc());
            let num = match to {
                Scalar::I32 => Num::Int {
                    lo: lo.max(f64::from(i32::MIN)) as i64,
                    hi: hi.min(f64::from(i32::MAX)) as i64,
                },
                _ => Num::Int {
                    lo: lo.max(0.0) as i64,
                    hi: hi.clamp(0.0, f64::from(u32::MAX)) as i64,
                },
            };
            Ok(info(Ty::S(to), num))
        }
    }
}

/// A part of `modf(a)` or `frexp(a)`.
pub fn split(part: Part, a: &Info) -> R {
    if !a.ty.is_sv() {
        return Err("modf/frexp of a matrix".into());
    }
    if float_ty(a.ty)? == Scalar::F16 && matches!(part, Part::FrexpFract | Part::FrexpExp) {
        // naga 30 predeclares frexp's result for f16 with an i16 exponent, which its own
        // validator refuses (FUZZING.md, "naga"): not generated until it is fixed.
        return Err("frexp of f16 (a naga bug)".into());
    }
    let f = f_of(a)?;
    if !f.is_exact() {
        return Err("modf/frexp of an inexact float (the parts jump)".into());
    }
    let e_max = if f.mag() == 0.0 {
        0
    } else {
        f.mag().log2().floor() as i32 + 1
    };
    Ok(match part {
        Part::ModfFract => info(
            a.ty,
            Num::Float(F::exact_range(
                if f.lo < 0.0 { -1.0 } else { 0.0 },
                if f.hi > 0.0 { 1.0 } else { 0.0 },
                f.grid,
            )),
        ),
        Part::ModfWhole => info(
            a.ty,
            Num::Float(F::exact_range(f.lo.trunc(), f.hi.trunc(), f.grid.max(0))),
        ),
        Part::FrexpFract => info(
            a.ty,
            Num::Float(F::exact_range(
                if f.lo < 0.0 { -1.0 } else { 0.0 },
                if f.hi > 0.0 { 1.0 } else { 0.0 },
                if f.grid == ZERO_GRID {
                    ZERO_GRID
                } else {
                    f.grid - e_max
                },
            )),
        ),
        Part::FrexpExp => {
            let lo = if f.grid == ZERO_GRID {
                0
            } else {
                (f.grid + 1).min(0)
            };
            info(
                a.ty.with_scalar(Scalar::I32),
                Num::Int {
                    lo: i64::from(lo),
                    hi: i64::from(e_max.max(0)),
                },
            )
        }
    })
}
