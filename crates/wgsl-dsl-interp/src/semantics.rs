//! WGSL's semantics, in one place: every rule where WGSL differs from what Rust's operators
//! would do, each citing the section of the WGSL specification it follows
//! (<https://www.w3.org/TR/WGSL/>; section numbers of the editors' draft, gpuweb/gpuweb
//! `wgsl/index.bs` at da251f9 of 2026-08-19, anchors in parentheses).
//!
//! Values are carried as 32-bit words: `f32` as its bits, `i32` as its two's complement bits,
//! `u32` as itself, `bool` as 0 or 1, `f16` as its bits in the low half. The functions here take
//! and return words, so the executor moves values without knowing their type.
//!
//! Each rule has a test that runs the same kernel on the interpreter and on the GPU and
//! compares bits (integers) or ulps (floats): `tests/interp_semantics.rs`.

use half::f16;

/// The scalar type of a value, as far as the arithmetic is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    F32,
    F16,
    I32,
    U32,
    Bool,
}

impl Kind {
    pub fn is_float(self) -> bool {
        matches!(self, Kind::F32 | Kind::F16)
    }
}

#[inline(always)]
pub(crate) fn f(x: u32) -> f32 {
    f32::from_bits(x)
}
#[inline(always)]
pub(crate) fn w(x: f32) -> u32 {
    x.to_bits()
}
#[inline(always)]
fn i(x: u32) -> i32 {
    x as i32
}
#[inline(always)]
fn h(x: u32) -> f16 {
    f16::from_bits(x as u16)
}
#[inline(always)]
fn hw(x: f16) -> u32 {
    u32::from(x.to_bits())
}
#[inline(always)]
pub(crate) fn b(x: bool) -> u32 {
    u32::from(x)
}

/// A float of `kind` as `f32` (exact: every `f16` is an `f32`).
#[inline(always)]
pub(crate) fn to_f32(kind: Kind, x: u32) -> f32 {
    match kind {
        Kind::F16 => h(x).to_f32(),
        _ => f(x),
    }
}

/// An `f32` rounded to `kind` (to nearest even for `f16`). Computing an `f16` operation in
/// `f32` and rounding once is correctly rounded for `+ - * / sqrt` (f32 carries more than
/// 2 * 11 + 2 bits), and within the accuracy WGSL allows for the others (§15.7.4
/// "Floating Point Accuracy", `#floating-point-accuracy`).
#[inline(always)]
pub(crate) fn from_f32(kind: Kind, x: f32) -> u32 {
    match kind {
        Kind::F16 => hw(f16::from_f32(x)),
        _ => w(x),
    }
}

/// Applies a float function to a value of float `kind`.
#[inline(always)]
pub(crate) fn float1(kind: Kind, x: u32, op: impl Fn(f32) -> f32) -> u32 {
    from_f32(kind, op(to_f32(kind, x)))
}
#[inline(always)]
pub(crate) fn float2(kind: Kind, x: u32, y: u32, op: impl Fn(f32, f32) -> f32) -> u32 {
    from_f32(kind, op(to_f32(kind, x), to_f32(kind, y)))
}
#[inline(always)]
pub(crate) fn float3(kind: Kind, x: u32, y: u32, z: u32, op: impl Fn(f32, f32, f32) -> f32) -> u32 {
    from_f32(kind, op(to_f32(kind, x), to_f32(kind, y), to_f32(kind, z)))
}

// ---- §8.7 "Arithmetic Expressions" (#arithmetic-expr) ----

/// `e1 + e2`, `e1 - e2`, `e1 * e2` on concrete integers: two's complement, wrapping
/// ("the result is the mathematical result modulo 2^32", §8.7). The same bits for `i32` and
/// `u32`.
#[inline(always)]
pub(crate) fn int_add(a: u32, b: u32) -> u32 {
    a.wrapping_add(b)
}
#[inline(always)]
pub(crate) fn int_sub(a: u32, b: u32) -> u32 {
    a.wrapping_sub(b)
}
#[inline(always)]
pub(crate) fn int_mul(a: u32, b: u32) -> u32 {
    a.wrapping_mul(b)
}

/// `-e` on `i32` (§8.7): wrapping, so `-i32::MIN` is `i32::MIN`.
#[inline(always)]
pub(crate) fn i32_neg(a: u32) -> u32 {
    i(a).wrapping_neg() as u32
}

/// `e1 / e2` on `u32` (§8.7): `e1` when `e2` is zero, otherwise the quotient rounded toward
/// zero.
#[inline(always)]
pub(crate) fn u32_div(a: u32, b: u32) -> u32 {
    a.checked_div(b).unwrap_or(a)
}

/// `e1 / e2` on `i32` (§8.7): `e1` when `e2` is zero or when `e1` is `i32::MIN` and `e2` is
/// -1; otherwise the quotient truncated toward zero.
#[inline(always)]
pub(crate) fn i32_div(a: u32, b: u32) -> u32 {
    let (a, b) = (i(a), i(b));
    if b == 0 || (a == i32::MIN && b == -1) {
        a as u32
    } else {
        (a / b) as u32
    }
}

/// `e1 % e2` on `u32` (§8.7): 0 when `e2` is zero.
#[inline(always)]
pub(crate) fn u32_rem(a: u32, b: u32) -> u32 {
    if b == 0 { 0 } else { a % b }
}

/// `e1 % e2` on `i32` (§8.7): 0 when `e2` is zero or when `e1` is `i32::MIN` and `e2` is -1;
/// otherwise `e1 - trunc(e1 / e2) * e2`, which has the sign of `e1` (as Rust's `%`).
#[inline(always)]
pub(crate) fn i32_rem(a: u32, b: u32) -> u32 {
    let (a, b) = (i(a), i(b));
    if b == 0 || (a == i32::MIN && b == -1) {
        0
    } else {
        (a % b) as u32
    }
}

/// `e1 % e2` on floats (§8.7): `e1 - e2 * trunc(e1 / e2)`, evaluated in the type (not the
/// exact `fmod` of Rust's `%`).
#[inline(always)]
pub(crate) fn float_rem(a: f32, b: f32) -> f32 {
    a - b * (a / b).trunc()
}

// ---- §8.9 "Bit Expressions" (#bit-expr) ----

/// `e1 << e2` (§8.9): the shift amount is `e2` modulo the bit width (32) for runtime values;
/// bits shifted out are lost (also for `i32`).
#[inline(always)]
pub(crate) fn shl(a: u32, b: u32) -> u32 {
    a << (b & 31)
}

/// `e1 >> e2` on `u32` (§8.9): logical shift, amount modulo 32.
#[inline(always)]
pub(crate) fn u32_shr(a: u32, b: u32) -> u32 {
    a >> (b & 31)
}

/// `e1 >> e2` on `i32` (§8.9): arithmetic shift (the sign bit is copied), amount modulo 32.
#[inline(always)]
pub(crate) fn i32_shr(a: u32, b: u32) -> u32 {
    (i(a) >> (b & 31)) as u32
}

// ---- §8.8 "Comparison Expressions" ----

/// `<`, `<=`, `>`, `>=`, `==`, `!=` (`op`; any other operator is `>=`). On floats they follow
/// IEEE-754, as Rust's `PartialOrd` does: every comparison with a NaN is false except `!=`,
/// and `-0.0 == 0.0`. Integers compare as `T` (`i32` or `u32`).
#[inline(always)]
pub(crate) fn compare<T: PartialOrd>(op: naga::BinaryOperator, a: T, b: T) -> bool {
    use naga::BinaryOperator as B;
    match op {
        B::Equal => a == b,
        B::NotEqual => a != b,
        B::Less => a < b,
        B::LessEqual => a <= b,
        B::Greater => a > b,
        _ => a >= b,
    }
}

// ---- §15.7.6 "Floating Point Conversion" (#floating-point-conversion) and §17.1.2
// "Value Constructor Built-in Functions" (#value-constructor-builtin-function) ----

/// `i32(e)` for a float `e` (§15.7.6): truncate toward zero; a value out of range becomes
/// the value of `i32` closest to it that the float type can represent exactly (for `f32`:
/// `[-2^31, 2^31 - 128]`, so `i32(3e9)` is 2147483520, not `i32::MAX`). NaN gives an
/// indeterminate value; the interpreter gives 0.
#[inline(always)]
pub(crate) fn float_to_i32(from: Kind, x: u32) -> u32 {
    let v = to_f32(from, x);
    let (lo, hi) = match from {
        Kind::F16 => (-65504.0, 65504.0),
        _ => (-2147483648.0, 2147483520.0),
    };
    if v.is_nan() {
        0
    } else {
        (v.clamp(lo, hi) as i32) as u32
    }
}

/// `u32(e)` for a float `e` (§15.7.6): truncate toward zero; out of range becomes the closest
/// `u32` the float type represents exactly (`[0, 2^32 - 256]` for `f32`). NaN: 0.
#[inline(always)]
pub(crate) fn float_to_u32(from: Kind, x: u32) -> u32 {
    let v = to_f32(from, x);
    let hi = match from {
        Kind::F16 => 65504.0,
        _ => 4294967040.0,
    };
    if v.is_nan() {
        0
    } else {
        v.clamp(0.0, hi) as u32
    }
}

/// Scalar conversion `T(e)` (§17.1.2): integers to floats round to nearest (ties to even);
/// `i32` <-> `u32` keep the bits; `bool(e)` is `e != 0` (so `bool(-0.0)` is false and
/// `bool(NaN)` true); `bool` to a number is 0 or 1; `f32` to `f16` rounds to nearest even,
/// overflowing to infinity.
#[inline(always)]
pub(crate) fn convert(from: Kind, to: Kind, x: u32) -> u32 {
    match (from, to) {
        (a, b) if a == b => x,
        (Kind::Bool, Kind::F32 | Kind::F16) => from_f32(to, if x != 0 { 1.0 } else { 0.0 }),
        (Kind::Bool, _) => b(x != 0),
        (Kind::F32 | Kind::F16, Kind::Bool) => b(to_f32(from, x) != 0.0),
        (_, Kind::Bool) => b(x != 0),
        (Kind::F32 | Kind::F16, Kind::I32) => float_to_i32(from, x),
        (Kind::F32 | Kind::F16, Kind::U32) => float_to_u32(from, x),
        (Kind::F32, Kind::F16) => hw(f16::from_f32(f(x))),
        (Kind::F16, Kind::F32) => w(h(x).to_f32()),
        (Kind::I32, Kind::F32) => w(i(x) as f32),
        (Kind::U32, Kind::F32) => w(x as f32),
        // Through f64: exact for every i32/u32, then one rounding to f16.
        (Kind::I32, Kind::F16) => hw(f16::from_f64(f64::from(i(x)))),
        (Kind::U32, Kind::F16) => hw(f16::from_f64(f64::from(x))),
        // i32 <-> u32: the same bits.
        _ => x,
    }
}

// ---- §17.5 "Numeric Built-in Functions" ----

/// `min(e1, e2)` on floats (§17.5.42): `e2` if `e2 < e1`, else `e1`; if one operand is a NaN
/// the other is returned.
#[inline(always)]
pub(crate) fn float_min(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        b
    } else if b.is_nan() || a <= b {
        a
    } else {
        b
    }
}

/// `max(e1, e2)` on floats (§17.5.41): `e2` if `e1 < e2`, else `e1`; if one operand is a NaN
/// the other is returned.
#[inline(always)]
pub(crate) fn float_max(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        b
    } else if b.is_nan() || a >= b {
        a
    } else {
        b
    }
}

/// `clamp(e, low, high)` on floats (§17.5.10): `min(max(e, low), high)` (the spec also allows
/// the median of the three; they differ only when `low > high`, whose result the spec
/// leaves to the implementation at run time).
#[inline(always)]
pub(crate) fn float_clamp(e: f32, low: f32, high: f32) -> f32 {
    float_min(float_max(e, low), high)
}

/// `clamp(e, low, high)` on integers (§17.5.10): `min(max(e, low), high)`.
#[inline(always)]
pub(crate) fn i32_clamp(e: u32, low: u32, high: u32) -> u32 {
    i(e).max(i(low)).min(i(high)) as u32
}
#[inline(always)]
pub(crate) fn u32_clamp(e: u32, low: u32, high: u32) -> u32 {
    e.max(low).min(high)
}

/// `abs(e)` on `i32` (§17.5.1): wrapping, so `abs(i32::MIN)` is `i32::MIN`.
#[inline(always)]
pub(crate) fn i32_abs(a: u32) -> u32 {
    i(a).wrapping_abs() as u32
}

// `sign(e)` (§17.5.54) on floats: the const evaluator's, which builds without the runtime.
pub(crate) use wgsl_dsl_core::__private::float_sign;
#[inline(always)]
pub(crate) fn i32_sign(a: u32) -> u32 {
    i(a).signum() as u32
}

/// `round(e)` (§17.5.52): to the nearest integer, ties to even (`round(2.5)` is 2).
#[inline(always)]
pub(crate) fn round(x: f32) -> f32 {
    x.round_ties_even()
}

/// `fract(e)` (§17.5.33): `e - floor(e)`, evaluated in the type (so it may round to 1.0 for
/// tiny negative `e`, as the spec notes).
#[inline(always)]
pub(crate) fn fract(x: f32) -> f32 {
    x - x.floor()
}

/// `saturate(e)` (§17.5.53): `clamp(e, 0.0, 1.0)`.
#[inline(always)]
pub(crate) fn saturate(x: f32) -> f32 {
    float_clamp(x, 0.0, 1.0)
}

/// `step(edge, x)` (§17.5.59): 1.0 if `edge <= x`, else 0.0.
#[inline(always)]
pub(crate) fn step(edge: f32, x: f32) -> f32 {
    if edge <= x { 1.0 } else { 0.0 }
}

/// `smoothstep(low, high, x)` (§17.5.57): `t * t * (3.0 - 2.0 * t)` with
/// `t = clamp((x - low) / (high - low), 0.0, 1.0)`.
#[inline(always)]
pub(crate) fn smoothstep(low: f32, high: f32, x: f32) -> f32 {
    let t = float_clamp((x - low) / (high - low), 0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// `mix(e1, e2, e3)` (§17.5.43): `e1 * (1 - e3) + e2 * e3`.
#[inline(always)]
pub(crate) fn mix(a: f32, b: f32, t: f32) -> f32 {
    a * (1.0 - t) + b * t
}

/// `inverseSqrt(e)` (§17.5.36): `1 / sqrt(e)`.
#[inline(always)]
pub(crate) fn inverse_sqrt(x: f32) -> f32 {
    1.0 / x.sqrt()
}

/// `degrees(e)` (§17.5.17) and `radians(e)` (§17.5.48).
#[inline(always)]
pub(crate) fn degrees(x: f32) -> f32 {
    // WGSL: inherited from `e * 57.295779513082322865` (§17.5.17), the constant rounded to
    // f32 once (`180.0 / PI` in f32 is one ULP below it: found by the kernel fuzzer).
    x * 57.295_78_f32
}
#[inline(always)]
pub(crate) fn radians(x: f32) -> f32 {
    // WGSL: inherited from `e * 0.017453292519943295474` (§17.5.48), rounded to f32 once.
    x * 0.017_453_293_f32
}

/// `ldexp(e1, e2)` (§17.5.37): `e1 * 2^e2`.
#[inline(always)]
pub(crate) fn ldexp(x: f32, e: i32) -> f32 {
    (f64::from(x) * 2f64.powi(e)) as f32
}

/// `quantizeToF16(e)` (§17.5.47): round to `f16` and back (overflow gives an indeterminate
/// value; the interpreter gives infinity).
#[inline(always)]
pub(crate) fn quantize_to_f16(x: f32) -> f32 {
    f16::from_f32(x).to_f32()
}

/// `modf(e)` (§17.5): `(fract, whole)`, both with `e`'s sign (`-7` gives `(-0, -7)`).
pub(crate) fn modf(x: f32) -> (f32, f32) {
    let whole = x.trunc();
    ((x - whole).copysign(x), whole)
}

/// `frexp(e)` (§17.5): `(fract, exp)` with `e = fract * 2^exp` and `|fract|` in `[0.5, 1)`;
/// `(e, 0)` for zero (and, indeterminate in WGSL, for infinities and NaN).
pub(crate) fn frexp(x: f32) -> (f32, i32) {
    if x == 0.0 || !x.is_finite() {
        return (x, 0);
    }
    // Every finite f32 (subnormals too) is a normal f64.
    let bits = f64::from(x).to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32 - 1022;
    let fract = f64::from_bits((bits & !(0x7ff << 52)) | (1022 << 52));
    (fract as f32, exp)
}

// ---- §17.9 "Data Packing Built-in Functions", §17.10 "Data Unpacking Built-in Functions",
// §17.5 `dot4I8Packed` / `dot4U8Packed` ----

/// `floor(0.5 + scale * clamp(x, lo, 1))` as the integer it converts to (the norm packs).
fn norm(x: u32, lo: f32, scale: f32) -> u32 {
    (0.5 + scale * f(x).clamp(lo, 1.0)).floor() as i32 as u32
}

fn bytes(v: [u32; 4]) -> u32 {
    v.iter()
        .enumerate()
        .fold(0, |acc, (i, &b)| acc | ((b & 0xff) << (8 * i)))
}

fn halves(lo: u32, hi: u32) -> u32 {
    (lo & 0xffff) | (hi << 16)
}

/// Components `0..k` of an unpacking built-in's result, `component(i)` each, into `out`;
/// returns `k`.
fn unpack(out: &mut [u32; 4], k: u32, component: impl Fn(u32) -> u32) -> usize {
    for i in 0..k {
        out[i as usize] = component(i);
    }
    k as usize
}

/// The packing built-in `fun` of the components `a` (and, for the packed dot products, the
/// second word `b`) into `out`; returns how many words it wrote.
pub(crate) fn packing(fun: naga::MathFunction, a: &[u32; 4], b: u32, out: &mut [u32; 4]) -> usize {
    use naga::MathFunction as M;
    let byte = |w: u32, i: u32| (w >> (8 * i)) & 0xff;
    let sbyte = |w: u32, i: u32| i32::from(byte(w, i) as u8 as i8);
    let half = |w: u32, i: u32| (w >> (16 * i)) & 0xffff;
    let f16_bits = |x: u32| u32::from(f16::from_f32(f(x)).to_bits());
    match fun {
        M::Pack4x8snorm => out[0] = bytes(a.map(|x| norm(x, -1.0, 127.0))),
        M::Pack4x8unorm => out[0] = bytes(a.map(|x| norm(x, 0.0, 255.0))),
        M::Pack2x16snorm => out[0] = halves(norm(a[0], -1.0, 32767.0), norm(a[1], -1.0, 32767.0)),
        M::Pack2x16unorm => out[0] = halves(norm(a[0], 0.0, 65535.0), norm(a[1], 0.0, 65535.0)),
        M::Pack2x16float => out[0] = halves(f16_bits(a[0]), f16_bits(a[1])),
        M::Pack4xI8 | M::Pack4xU8 => out[0] = bytes(*a),
        M::Pack4xI8Clamp => out[0] = bytes(a.map(|x| (x as i32).clamp(-128, 127) as u32)),
        M::Pack4xU8Clamp => out[0] = bytes(a.map(|x| x.min(255))),
        M::Unpack4x8snorm => {
            return unpack(out, 4, |i| w((sbyte(a[0], i) as f32 / 127.0).max(-1.0)));
        }
        M::Unpack4x8unorm => return unpack(out, 4, |i| w(byte(a[0], i) as f32 / 255.0)),
        M::Unpack2x16snorm => {
            return unpack(out, 2, |i| {
                let v = f32::from(half(a[0], i) as u16 as i16);
                w((v / 32767.0).max(-1.0))
            });
        }
        M::Unpack2x16unorm => return unpack(out, 2, |i| w(half(a[0], i) as f32 / 65535.0)),
        M::Unpack2x16float => {
            return unpack(out, 2, |i| w(f16::from_bits(half(a[0], i) as u16).to_f32()));
        }
        M::Unpack4xI8 => return unpack(out, 4, |i| sbyte(a[0], i) as u32),
        M::Unpack4xU8 => return unpack(out, 4, |i| byte(a[0], i)),
        // Exact: at most 4 * 128 * 128 in magnitude.
        M::Dot4I8Packed => {
            out[0] = (0..4).map(|i| sbyte(a[0], i) * sbyte(b, i)).sum::<i32>() as u32
        }
        M::Dot4U8Packed => out[0] = (0..4).map(|i| byte(a[0], i) * byte(b, i)).sum(),
        _ => return 0,
    }
    1
}

// ---- §17.5 bit built-ins on integers ----

/// `firstLeadingBit(e)` on `u32` (§17.5.29): the position of the most significant 1 bit, or
/// `0xFFFFFFFF` for 0.
#[inline(always)]
pub(crate) fn u32_first_leading_bit(a: u32) -> u32 {
    if a == 0 {
        u32::MAX
    } else {
        31 - a.leading_zeros()
    }
}

/// `firstLeadingBit(e)` on `i32` (§17.5.28): -1 for 0 and -1; otherwise the position of the
/// most significant bit that differs from the sign bit.
#[inline(always)]
pub(crate) fn i32_first_leading_bit(a: u32) -> u32 {
    u32_first_leading_bit(if i(a) < 0 { !a } else { a })
}

/// `firstTrailingBit(e)` (§17.5.30): the position of the least significant 1 bit, or
/// `0xFFFFFFFF` (-1 for `i32`) for 0.
#[inline(always)]
pub(crate) fn first_trailing_bit(a: u32) -> u32 {
    if a == 0 { u32::MAX } else { a.trailing_zeros() }
}

/// The clamped `(offset, count)` of `extractBits`/`insertBits` (§17.5.25-26, §17.5.35):
/// `o = min(offset, 32)`, `c = min(count, 32 - o)`.
#[inline(always)]
fn bit_range(offset: u32, count: u32) -> (u32, u32) {
    let o = offset.min(32);
    (o, count.min(32 - o))
}

#[inline(always)]
fn low_mask(c: u32) -> u32 {
    if c >= 32 { u32::MAX } else { (1u32 << c) - 1 }
}

/// `extractBits(e, offset, count)` on `u32` (§17.5.26): bits `o..o + c` of `e`, zero
/// extended; 0 when `c` is 0.
#[inline(always)]
pub(crate) fn u32_extract_bits(e: u32, offset: u32, count: u32) -> u32 {
    let (o, c) = bit_range(offset, count);
    if c == 0 { 0 } else { (e >> o) & low_mask(c) }
}

/// `extractBits(e, offset, count)` on `i32` (§17.5.25): bits `o..o + c` of `e`, sign
/// extended from bit `c - 1`; 0 when `c` is 0.
#[inline(always)]
pub(crate) fn i32_extract_bits(e: u32, offset: u32, count: u32) -> u32 {
    let (o, c) = bit_range(offset, count);
    if c == 0 {
        0
    } else {
        let bits = (e >> o) & low_mask(c);
        let shift = 32 - c;
        (i(bits << shift) >> shift) as u32
    }
}

/// `insertBits(e, newbits, offset, count)` (§17.5.35): `e` with bits `o..o + c` replaced by
/// the low `c` bits of `newbits`.
#[inline(always)]
pub(crate) fn insert_bits(e: u32, newbits: u32, offset: u32, count: u32) -> u32 {
    let (o, c) = bit_range(offset, count);
    if c == 0 {
        return e;
    }
    let mask = low_mask(c) << o;
    (e & !mask) | ((newbits << o) & mask)
}

// ---- §17.3.3 "select" ----

/// `select(f, t, cond)` (§17.3.3): `t` when `cond` is true, else `f` (both evaluated: they
/// are values).
#[inline(always)]
pub(crate) fn select(cond: u32, accept: u32, reject: u32) -> u32 {
    if cond != 0 { accept } else { reject }
}

/// `coopMultiplyAdd(a, b, c)` (wgpu's `wgpu_cooperative_matrix` extension; SPIR-V's
/// `OpCooperativeMatrixMulAddKHR` of SPV_KHR_cooperative_matrix, which naga 30 emits): `a * b + c`
/// for an `m x k` matrix `a`, a `k x n` matrix `b` and an `m x n` accumulator `c`, each stored
/// row-major (element `(r, c)` at `r * columns + c`), `input` the element type of `a` and
/// `b`, `acc` that of `c` and the result.
///
/// The extension leaves the order and precision of the sums to the implementation. The
/// interpreter computes each element as tensor cores take it: the products of the inputs in
/// `f32` (exact for `f16` inputs: 11 + 11 significant bits fit in 24), added in order of `p`
/// to `c` in `f32`, rounded to nearest once per addition, and the sum rounded to `acc` at the
/// end (once, for `f16` accumulators). Its error against the exact product is within
/// `gamma_k(2^-24)` of the sum of absolute products (Higham, *Accuracy and Stability of
/// Numerical Algorithms*, §3.1), inside the bound any GPU's tensor cores are held to.
pub(crate) fn coop_multiply_add(
    (m, n, k): (usize, usize, usize),
    input: Kind,
    acc: Kind,
    a: impl Fn(usize) -> u32,
    b: impl Fn(usize) -> u32,
    c: impl Fn(usize) -> u32,
    out: &mut [u32],
) {
    let x: Vec<f32> = (0..m * k).map(|i| to_f32(input, a(i))).collect();
    let y: Vec<f32> = (0..k * n).map(|i| to_f32(input, b(i))).collect();
    for i in 0..m {
        for j in 0..n {
            let mut sum = to_f32(acc, c(i * n + j));
            for p in 0..k {
                sum += x[i * k + p] * y[p * n + j];
            }
            out[i * n + j] = from_f32(acc, sum);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_division_rules() {
        assert_eq!(i32_div(7, 0), 7);
        assert_eq!(i32_div(i32::MIN as u32, -1i32 as u32), i32::MIN as u32);
        assert_eq!(i32_div(-7i32 as u32, 2) as i32, -3);
        assert_eq!(i32_rem(-7i32 as u32, 2) as i32, -1);
        assert_eq!(i32_rem(7, -2i32 as u32) as i32, 1);
        assert_eq!(i32_rem(i32::MIN as u32, -1i32 as u32), 0);
        assert_eq!(u32_div(9, 0), 9);
        assert_eq!(u32_rem(9, 0), 0);
    }

    #[test]
    fn shifts_mask_the_amount() {
        assert_eq!(shl(1, 33), 2);
        assert_eq!(u32_shr(0x8000_0000, 63), 1);
        assert_eq!(i32_shr(0x8000_0000, 31), u32::MAX);
    }

    #[test]
    fn float_to_int_saturates_to_float_representable_values() {
        assert_eq!(float_to_i32(Kind::F32, w(3e9)) as i32, 2147483520);
        assert_eq!(float_to_i32(Kind::F32, w(-3e9)) as i32, i32::MIN);
        assert_eq!(float_to_i32(Kind::F32, w(-2.7)) as i32, -2);
        assert_eq!(float_to_u32(Kind::F32, w(5e9)), 4294967040);
        assert_eq!(float_to_u32(Kind::F32, w(-1.5)), 0);
        assert_eq!(float_to_i32(Kind::F32, w(f32::INFINITY)) as i32, 2147483520);
    }

    #[test]
    fn bits() {
        assert_eq!(i32_first_leading_bit(-1i32 as u32), u32::MAX);
        assert_eq!(i32_first_leading_bit(-2i32 as u32), 0);
        assert_eq!(u32_first_leading_bit(0x10), 4);
        assert_eq!(i32_extract_bits(0xF0, 4, 4) as i32, -1);
        assert_eq!(u32_extract_bits(0xF0, 4, 4), 0xF);
        assert_eq!(u32_extract_bits(0xF0, 40, 4), 0);
        assert_eq!(insert_bits(0, 0xFF, 28, 8), 0xF000_0000);
        assert_eq!(insert_bits(0x1234, 0, 0, 32), 0);
    }

    #[test]
    fn coop_multiply_add_accumulates_f16_products_in_f32() {
        // 1x2 times 2x1 plus 1: 2049 is not an f16 but the f32 sum keeps it; the f16
        // accumulator rounds it once, to even (2048).
        let a = [hw(f16::from_f32(2048.0)), hw(f16::from_f32(1.0))];
        let b = [hw(f16::from_f32(1.0)), hw(f16::from_f32(1.0))];
        // The `acc` accumulator, starting at `c`.
        let multiply_add = |acc: Kind, c: u32| {
            let mut out = [0u32];
            coop_multiply_add(
                (1, 1, 2),
                Kind::F16,
                acc,
                |i| a[i],
                |i| b[i],
                |_| c,
                &mut out,
            );
            out[0]
        };
        assert_eq!(f(multiply_add(Kind::F32, w(0.5))), 2049.5);
        assert_eq!(h(multiply_add(Kind::F16, hw(f16::ZERO))).to_f32(), 2048.0);
    }

    #[test]
    fn min_max_return_the_non_nan_operand() {
        assert_eq!(float_max(f32::NAN, 2.0), 2.0);
        assert_eq!(float_min(3.0, f32::NAN), 3.0);
        assert_eq!(float_clamp(5.0, -1.0, 1.0), 1.0);
        assert_eq!(round(2.5), 2.0);
        assert_eq!(round(-3.5), -4.0);
    }
}
