//! Evaluating the register-only [`Op`]s (arithmetic, built-ins, conversions, composites) for a
//! set of lanes. The rules themselves are in [`super::semantics`]; this file only loops.
//!
//! Each loop runs over one component at a time and the active lanes, with the operation
//! chosen before the loop, so that the interpreter pays one dispatch per operation per
//! workgroup rather than per invocation.

use naga::BinaryOperator as B;
use naga::MathFunction as M;

use super::mask::Mask;
use super::program::{Op, Src};
use super::semantics::{self as sem, Kind, f, w};

/// What a register-only op needs besides the registers.
pub(crate) struct Lanes<'a> {
    pub mask: &'a Mask,
    /// The workgroup's lane count when `mask` holds all lanes, else 0 (fast loop).
    pub full: usize,
    /// Lanes per workgroup: the component stride of per-lane slots.
    pub n: usize,
}

#[inline(always)]
fn map1(regs: &mut [u32], ln: &Lanes<'_>, n: u8, a: Src, dst: u32, op: impl Fn(u32) -> u32) {
    for c in 0..u32::from(n) {
        let d = dst as usize + c as usize * ln.n;
        ln.mask
            .for_each(ln.full, |l| regs[d + l] = op(regs[a.idx(c, l)]));
    }
}

#[inline(always)]
fn map2(
    regs: &mut [u32],
    ln: &Lanes<'_>,
    n: u8,
    a: Src,
    b: Src,
    dst: u32,
    op: impl Fn(u32, u32) -> u32,
) {
    for c in 0..u32::from(n) {
        let d = dst as usize + c as usize * ln.n;
        ln.mask.for_each(ln.full, |l| {
            regs[d + l] = op(regs[a.idx(c, l)], regs[b.idx(c, l)])
        });
    }
}

#[inline(always)]
fn map3(
    regs: &mut [u32],
    ln: &Lanes<'_>,
    n: u8,
    s: [Src; 3],
    dst: u32,
    op: impl Fn(u32, u32, u32) -> u32,
) {
    for c in 0..u32::from(n) {
        let d = dst as usize + c as usize * ln.n;
        ln.mask.for_each(ln.full, |l| {
            regs[d + l] = op(
                regs[s[0].idx(c, l)],
                regs[s[1].idx(c, l)],
                regs[s[2].idx(c, l)],
            )
        });
    }
}

/// Evaluate a register-only op. Returns `false` if `op` is not one (memory ops are the
/// executor's).
pub(crate) fn eval(op: &Op, regs: &mut [u32], ln: &Lanes<'_>) -> bool {
    match *op {
        Op::Unary {
            op,
            kind,
            n,
            a,
            dst,
        } => unary(op, kind, n, a, dst, regs, ln),
        Op::Binary {
            op,
            kind,
            n,
            a,
            b,
            dst,
        } => binary(op, kind, n, a, b, dst, regs, ln),
        Op::MatMul {
            kind,
            r,
            k,
            c,
            a,
            b,
            dst,
        } => {
            // `(r x k) * (k x c)`, column-major, products summed in order of `k` (WGSL spec
            // §8.7.4 "Matrix Arithmetic").
            let (r, k, c) = (u32::from(r), u32::from(k), u32::from(c));
            for col in 0..c {
                for row in 0..r {
                    let d = dst as usize + (col * r + row) as usize * ln.n;
                    ln.mask.for_each(ln.full, |l| {
                        let mut acc = 0.0f32;
                        for i in 0..k {
                            let x = sem::to_f32(kind, regs[a.idx(i * r + row, l)]);
                            let y = sem::to_f32(kind, regs[b.idx(col * k + i, l)]);
                            acc = sem::to_f32(kind, sem::from_f32(kind, acc + x * y));
                        }
                        regs[d + l] = sem::from_f32(kind, acc);
                    });
                }
            }
        }
        Op::Math {
            fun,
            kind,
            n,
            args,
            dst,
        } => math(fun, kind, n, args, dst, regs, ln),
        Op::VectorMath {
            fun,
            kind,
            n,
            args,
            dst,
        } => vector_math(fun, kind, n, args, dst, regs, ln),
        Op::Transpose { c, r, a, dst } => {
            for i in 0..u32::from(c) {
                for j in 0..u32::from(r) {
                    // out is r columns of c rows: out[j][i] = in[i][j].
                    let d = dst as usize + (j * u32::from(c) + i) as usize * ln.n;
                    ln.mask.for_each(ln.full, |l| {
                        regs[d + l] = regs[a.idx(i * u32::from(r) + j, l)]
                    });
                }
            }
        }
        Op::Determinant { kind, n, a, dst } => {
            let d = dst as usize;
            ln.mask.for_each(ln.full, |l| {
                let m = |c: u32, r: u32| {
                    f64::from(sem::to_f32(kind, regs[a.idx(c * u32::from(n) + r, l)]))
                };
                let det = determinant(n, &m);
                regs[d + l] = sem::from_f32(kind, det as f32);
            });
        }
        Op::Decompose {
            fun,
            kind,
            n,
            a,
            dst,
        } => {
            let n = u32::from(n);
            for c in 0..n {
                let (d0, d1) = (
                    dst as usize + c as usize * ln.n,
                    dst as usize + (n + c) as usize * ln.n,
                );
                ln.mask.for_each(ln.full, |l| {
                    let x = sem::to_f32(kind, regs[a.idx(c, l)]);
                    let (first, second) = if fun == M::Modf {
                        let (fract, whole) = sem::modf(x);
                        (sem::from_f32(kind, fract), sem::from_f32(kind, whole))
                    } else {
                        let (fract, exp) = sem::frexp(x);
                        (sem::from_f32(kind, fract), exp as u32)
                    };
                    regs[d0 + l] = first;
                    regs[d1 + l] = second;
                });
            }
        }
        Op::Packing { fun, n, a, b, dst } => {
            let d = dst as usize;
            ln.mask.for_each(ln.full, |l| {
                let mut words = [0u32; 4];
                for (c, w) in words.iter_mut().enumerate().take(usize::from(n)) {
                    *w = regs[a.idx(c as u32, l)];
                }
                let mut out = [0u32; 4];
                let count = sem::packing(fun, &words, regs[b.idx(0, l)], &mut out);
                for (c, v) in out.iter().enumerate().take(count) {
                    regs[d + c * ln.n + l] = *v;
                }
            });
        }
        Op::Relational {
            fun,
            kind,
            n,
            a,
            dst,
        } => {
            use naga::RelationalFunction as R;
            match fun {
                R::All | R::Any => {
                    let d = dst as usize;
                    let all = fun == R::All;
                    ln.mask.for_each(ln.full, |l| {
                        let mut acc = all;
                        for c in 0..u32::from(n) {
                            let v = regs[a.idx(c, l)] != 0;
                            acc = if all { acc && v } else { acc || v };
                        }
                        regs[d + l] = sem::b(acc);
                    });
                }
                R::IsNan => map1(regs, ln, n, a, dst, |x| {
                    sem::b(sem::to_f32(kind, x).is_nan())
                }),
                R::IsInf => map1(regs, ln, n, a, dst, |x| {
                    sem::b(sem::to_f32(kind, x).is_infinite())
                }),
            }
        }
        Op::Select {
            n,
            cond,
            accept,
            reject,
            dst,
        } => map3(regs, ln, n, [cond, accept, reject], dst, sem::select),
        Op::Convert {
            from,
            to,
            n,
            a,
            dst,
        } => map1(regs, ln, n, a, dst, |x| sem::convert(from, to, x)),
        Op::Swizzle { n, pattern, a, dst } => {
            for (c, &from) in pattern.iter().enumerate().take(usize::from(n)) {
                let d = dst as usize + c * ln.n;
                let from = u32::from(from);
                ln.mask
                    .for_each(ln.full, |l| regs[d + l] = regs[a.idx(from, l)]);
            }
        }
        Op::Compose { ref parts, dst } => {
            let mut c = 0usize;
            for &(src, width) in parts {
                for j in 0..width {
                    let d = dst as usize + c * ln.n;
                    ln.mask
                        .for_each(ln.full, |l| regs[d + l] = regs[src.idx(j, l)]);
                    c += 1;
                }
            }
        }
        _ => return false,
    }
    true
}

#[allow(clippy::too_many_arguments)]
fn unary(
    op: naga::UnaryOperator,
    kind: Kind,
    n: u8,
    a: Src,
    dst: u32,
    regs: &mut [u32],
    ln: &Lanes<'_>,
) {
    use naga::UnaryOperator as U;
    match (op, kind) {
        (U::Negate, Kind::F32) => map1(regs, ln, n, a, dst, |x| x ^ 0x8000_0000),
        (U::Negate, Kind::F16) => map1(regs, ln, n, a, dst, |x| x ^ 0x8000),
        (U::Negate, _) => map1(regs, ln, n, a, dst, sem::i32_neg),
        (U::LogicalNot, _) => map1(regs, ln, n, a, dst, |x| x ^ 1),
        (U::BitwiseNot, _) => map1(regs, ln, n, a, dst, |x| !x),
    }
}

#[allow(clippy::too_many_arguments)]
fn binary(op: B, kind: Kind, n: u8, a: Src, b: Src, dst: u32, regs: &mut [u32], ln: &Lanes<'_>) {
    macro_rules! go {
        ($f:expr) => {
            map2(regs, ln, n, a, b, dst, $f)
        };
    }
    match (op, kind) {
        (B::Add, Kind::F32) => go!(|x, y| w(f(x) + f(y))),
        (B::Subtract, Kind::F32) => go!(|x, y| w(f(x) - f(y))),
        (B::Multiply, Kind::F32) => go!(|x, y| w(f(x) * f(y))),
        (B::Divide, Kind::F32) => go!(|x, y| w(f(x) / f(y))),
        (B::Modulo, Kind::F32) => go!(|x, y| w(sem::float_rem(f(x), f(y)))),
        (B::Add, Kind::F16) => go!(|x, y| sem::float2(Kind::F16, x, y, |p, q| p + q)),
        (B::Subtract, Kind::F16) => go!(|x, y| sem::float2(Kind::F16, x, y, |p, q| p - q)),
        (B::Multiply, Kind::F16) => go!(|x, y| sem::float2(Kind::F16, x, y, |p, q| p * q)),
        (B::Divide, Kind::F16) => go!(|x, y| sem::float2(Kind::F16, x, y, |p, q| p / q)),
        (B::Modulo, Kind::F16) => go!(|x, y| sem::float2(Kind::F16, x, y, sem::float_rem)),
        (B::Add, _) => go!(sem::int_add),
        (B::Subtract, _) => go!(sem::int_sub),
        (B::Multiply, _) => go!(sem::int_mul),
        (B::Divide, Kind::I32) => go!(sem::i32_div),
        (B::Divide, _) => go!(sem::u32_div),
        (B::Modulo, Kind::I32) => go!(sem::i32_rem),
        (B::Modulo, _) => go!(sem::u32_rem),
        (B::Equal | B::NotEqual | B::Less | B::LessEqual | B::Greater | B::GreaterEqual, k) => {
            match k {
                Kind::F32 => go!(|x, y| sem::b(sem::compare(op, f(x), f(y)))),
                Kind::F16 => go!(|x, y| sem::b(sem::compare(
                    op,
                    sem::to_f32(Kind::F16, x),
                    sem::to_f32(Kind::F16, y)
                ))),
                Kind::I32 => go!(|x, y| sem::b(sem::compare(op, x as i32, y as i32))),
                _ => go!(|x, y| sem::b(sem::compare(op, x, y))),
            }
        }
        (B::And | B::LogicalAnd, _) => go!(|x, y| x & y),
        (B::InclusiveOr | B::LogicalOr, _) => go!(|x, y| x | y),
        (B::ExclusiveOr, _) => go!(|x, y| x ^ y),
        (B::ShiftLeft, _) => go!(sem::shl),
        (B::ShiftRight, Kind::I32) => go!(sem::i32_shr),
        (B::ShiftRight, _) => go!(sem::u32_shr),
    }
}

fn determinant(n: u8, m: &dyn Fn(u32, u32) -> f64) -> f64 {
    match n {
        2 => m(0, 0) * m(1, 1) - m(1, 0) * m(0, 1),
        3 => {
            m(0, 0) * (m(1, 1) * m(2, 2) - m(2, 1) * m(1, 2))
                - m(1, 0) * (m(0, 1) * m(2, 2) - m(2, 1) * m(0, 2))
                + m(2, 0) * (m(0, 1) * m(1, 2) - m(1, 1) * m(0, 2))
        }
        _ => {
            // Laplace expansion along the first column.
            let mut det = 0.0;
            for row in 0..4u32 {
                let minor = |c: u32, r: u32| m(c + 1, if r >= row { r + 1 } else { r });
                let sign = if row % 2 == 0 { 1.0 } else { -1.0 };
                det += sign * m(0, row) * determinant(3, &minor);
            }
            det
        }
    }
}

/// A float function of one argument, or `None` if `fun` is not one.
fn float1(fun: M) -> Option<fn(f32) -> f32> {
    Some(match fun {
        M::Abs => f32::abs,
        M::Saturate => sem::saturate,
        M::Cos => f32::cos,
        M::Cosh => f32::cosh,
        M::Sin => f32::sin,
        M::Sinh => f32::sinh,
        M::Tan => f32::tan,
        M::Tanh => f32::tanh,
        M::Acos => f32::acos,
        M::Asin => f32::asin,
        M::Atan => f32::atan,
        M::Asinh => f32::asinh,
        M::Acosh => f32::acosh,
        M::Atanh => f32::atanh,
        M::Radians => sem::radians,
        M::Degrees => sem::degrees,
        M::Ceil => f32::ceil,
        M::Floor => f32::floor,
        M::Round => sem::round,
        M::Fract => sem::fract,
        M::Trunc => f32::trunc,
        M::Exp => f32::exp,
        M::Exp2 => f32::exp2,
        M::Log => f32::ln,
        M::Log2 => f32::log2,
        M::Sign => sem::float_sign,
        M::Sqrt => f32::sqrt,
        M::InverseSqrt => sem::inverse_sqrt,
        M::QuantizeToF16 => sem::quantize_to_f16,
        _ => return None,
    })
}

fn float2(fun: M) -> Option<fn(f32, f32) -> f32> {
    Some(match fun {
        M::Min => sem::float_min,
        M::Max => sem::float_max,
        M::Atan2 => f32::atan2,
        M::Pow => f32::powf,
        M::Step => sem::step,
        _ => return None,
    })
}

fn float3(fun: M) -> Option<fn(f32, f32, f32) -> f32> {
    Some(match fun {
        M::Clamp => sem::float_clamp,
        M::Mix => sem::mix,
        M::SmoothStep => sem::smoothstep,
        M::Fma => f32::mul_add,
        _ => return None,
    })
}

fn int1(fun: M, signed: bool) -> Option<fn(u32) -> u32> {
    Some(match (fun, signed) {
        (M::Abs, true) => sem::i32_abs,
        (M::Abs, false) => |x| x,
        (M::Sign, true) => sem::i32_sign,
        (M::CountTrailingZeros, _) => u32::trailing_zeros,
        (M::CountLeadingZeros, _) => u32::leading_zeros,
        (M::CountOneBits, _) => u32::count_ones,
        (M::ReverseBits, _) => u32::reverse_bits,
        (M::FirstTrailingBit, _) => sem::first_trailing_bit,
        (M::FirstLeadingBit, true) => sem::i32_first_leading_bit,
        (M::FirstLeadingBit, false) => sem::u32_first_leading_bit,
        _ => return None,
    })
}

fn math(fun: M, kind: Kind, n: u8, s: [Src; 4], dst: u32, regs: &mut [u32], ln: &Lanes<'_>) {
    if kind.is_float() {
        if fun == M::Ldexp {
            // The exponent is an i32.
            return map2(regs, ln, n, s[0], s[1], dst, |x, e| {
                sem::float1(kind, x, |v| sem::ldexp(v, e as i32))
            });
        }
        if let Some(g) = float1(fun) {
            match kind {
                Kind::F32 => map1(regs, ln, n, s[0], dst, |x| w(g(f(x)))),
                _ => map1(regs, ln, n, s[0], dst, |x| sem::float1(kind, x, g)),
            }
        } else if let Some(g) = float2(fun) {
            map2(regs, ln, n, s[0], s[1], dst, |x, y| {
                sem::float2(kind, x, y, g)
            });
        } else if let Some(g) = float3(fun) {
            map3(regs, ln, n, [s[0], s[1], s[2]], dst, |x, y, z| {
                sem::float3(kind, x, y, z, g)
            });
        }
        return;
    }
    let signed = kind == Kind::I32;
    if let Some(g) = int1(fun, signed) {
        return map1(regs, ln, n, s[0], dst, g);
    }
    match (fun, signed) {
        (M::Min, true) => map2(regs, ln, n, s[0], s[1], dst, |x, y| {
            (x as i32).min(y as i32) as u32
        }),
        (M::Min, false) => map2(regs, ln, n, s[0], s[1], dst, u32::min),
        (M::Max, true) => map2(regs, ln, n, s[0], s[1], dst, |x, y| {
            (x as i32).max(y as i32) as u32
        }),
        (M::Max, false) => map2(regs, ln, n, s[0], s[1], dst, u32::max),
        (M::Clamp, true) => map3(regs, ln, n, [s[0], s[1], s[2]], dst, sem::i32_clamp),
        (M::Clamp, false) => map3(regs, ln, n, [s[0], s[1], s[2]], dst, sem::u32_clamp),
        (M::ExtractBits, true) => map3(regs, ln, n, [s[0], s[1], s[2]], dst, sem::i32_extract_bits),
        (M::ExtractBits, false) => {
            map3(regs, ln, n, [s[0], s[1], s[2]], dst, sem::u32_extract_bits)
        }
        (M::InsertBits, _) => {
            for c in 0..u32::from(n) {
                let d = dst as usize + c as usize * ln.n;
                ln.mask.for_each(ln.full, |l| {
                    regs[d + l] = sem::insert_bits(
                        regs[s[0].idx(c, l)],
                        regs[s[1].idx(c, l)],
                        regs[s[2].idx(c, l)],
                        regs[s[3].idx(c, l)],
                    )
                });
            }
        }
        _ => {}
    }
}

/// Whole-vector functions (WGSL spec §17.5: `dot` §17.5.20, `cross` §17.5.16, `length`
/// §17.5.38, `distance` §17.5.19, `normalize` §17.5.45, `faceForward`, `reflect`, `refract`).
/// Floats
/// accumulate in the type, in component order.
fn vector_math(fun: M, kind: Kind, n: u8, s: [Src; 3], dst: u32, regs: &mut [u32], ln: &Lanes<'_>) {
    let n = u32::from(n);
    let d = dst as usize;
    let lanes = ln.n;
    if !kind.is_float() {
        // Integer `dot`: wrapping.
        ln.mask.for_each(ln.full, |l| {
            let mut acc = 0u32;
            for c in 0..n {
                acc = sem::int_add(
                    acc,
                    sem::int_mul(regs[s[0].idx(c, l)], regs[s[1].idx(c, l)]),
                );
            }
            regs[d + l] = acc;
        });
        return;
    }
    let get = |regs: &[u32], src: Src, c: u32, l: usize| sem::to_f32(kind, regs[src.idx(c, l)]);
    let round = |x: f32| sem::to_f32(kind, sem::from_f32(kind, x));
    let dot = |regs: &[u32], a: Src, b: Src, l: usize| {
        let mut acc = 0.0f32;
        for c in 0..n {
            acc = round(acc + get(regs, a, c, l) * get(regs, b, c, l));
        }
        acc
    };
    match fun {
        M::Dot => ln.mask.for_each(ln.full, |l| {
            regs[d + l] = sem::from_f32(kind, dot(regs, s[0], s[1], l))
        }),
        M::Length => ln.mask.for_each(ln.full, |l| {
            regs[d + l] = sem::from_f32(kind, dot(regs, s[0], s[0], l).sqrt())
        }),
        M::Distance => ln.mask.for_each(ln.full, |l| {
            let mut acc = 0.0f32;
            for c in 0..n {
                let x = round(get(regs, s[0], c, l) - get(regs, s[1], c, l));
                acc = round(acc + x * x);
            }
            regs[d + l] = sem::from_f32(kind, acc.sqrt());
        }),
        M::Normalize => ln.mask.for_each(ln.full, |l| {
            let len = round(dot(regs, s[0], s[0], l).sqrt());
            for c in 0..n {
                regs[d + c as usize * lanes + l] = sem::from_f32(kind, get(regs, s[0], c, l) / len);
            }
        }),
        M::Cross => ln.mask.for_each(ln.full, |l| {
            let a = |c| get(regs, s[0], c, l);
            let b = |c| get(regs, s[1], c, l);
            let out = [
                a(1) * b(2) - a(2) * b(1),
                a(2) * b(0) - a(0) * b(2),
                a(0) * b(1) - a(1) * b(0),
            ];
            for (c, v) in out.iter().enumerate() {
                regs[d + c * lanes + l] = sem::from_f32(kind, *v);
            }
        }),
        M::FaceForward => ln.mask.for_each(ln.full, |l| {
            // faceForward(e1, e2, e3) = e1 if dot(e2, e3) < 0 else -e1.
            let flip = dot(regs, s[1], s[2], l) >= 0.0;
            for c in 0..n {
                let v = get(regs, s[0], c, l);
                regs[d + c as usize * lanes + l] = sem::from_f32(kind, if flip { -v } else { v });
            }
        }),
        M::Reflect => ln.mask.for_each(ln.full, |l| {
            // reflect(e1, e2) = e1 - 2 * dot(e2, e1) * e2.
            let k = 2.0 * dot(regs, s[1], s[0], l);
            for c in 0..n {
                let v = get(regs, s[0], c, l) - k * get(regs, s[1], c, l);
                regs[d + c as usize * lanes + l] = sem::from_f32(kind, v);
            }
        }),
        M::Refract => ln.mask.for_each(ln.full, |l| {
            // refract(e1, e2, e3): k = 1 - e3^2 (1 - dot(e2, e1)^2); 0 if k < 0, else
            // e3 e1 - (e3 dot(e2, e1) + sqrt(k)) e2 (§17.5).
            let eta = get(regs, s[2], 0, l);
            let dn = dot(regs, s[1], s[0], l);
            let k = round(1.0 - round(eta * eta) * round(1.0 - round(dn * dn)));
            for c in 0..n {
                let v = if k < 0.0 {
                    0.0
                } else {
                    eta * get(regs, s[0], c, l) - (eta * dn + k.sqrt()) * get(regs, s[1], c, l)
                };
                regs[d + c as usize * lanes + l] = sem::from_f32(kind, v);
            }
        }),
        _ => {}
    }
}
