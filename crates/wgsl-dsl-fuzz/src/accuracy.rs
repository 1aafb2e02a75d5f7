//! How far a conforming implementation's float result may be from the exact one: WGSL's
//! accuracy table and an abstract interpretation of float expressions built on it.
//!
//! # The table
//! WGSL spec §15.7.4 "Floating Point Accuracy" (<https://www.w3.org/TR/WGSL/#floating-point-accuracy>,
//! table "Accuracy of concrete floating point expressions"), for `f32` and `f16`:
//!
//! | expression | accuracy |
//! |---|---|
//! | `x + y`, `x - y`, `x * y`, `-x`, `abs`, `min`, `max`, `clamp`, `saturate`, `floor`, `ceil`, `round`, `trunc`, `sign`, `step`, `ldexp`, `frexp`, `modf`, `transpose`, `quantizeToF16`, conversions (§15.7.6) | correctly rounded |
//! | `x / y` | 2.5 ULP for `|y|` in `[2^-126, 2^126]` (`f16`: `[2^-14, 2^14]`) |
//! | `x % y` | inherited from `x - y * trunc(x / y)` |
//! | `exp`, `exp2` | `3 + 2 * |x|` ULP (`f16`: `1 + 2 * |x|`) |
//! | `log`, `log2` | 3 ULP outside `[0.5, 2.0]`; absolute error `< 2^-21` inside (`f16`: `2^-7`) |
//! | `sin`, `cos` | absolute error `<= 2^-11` inside `[-pi, pi]` (`f16`: `2^-7`) |
//! | `inverseSqrt` | 2 ULP |
//! | `sqrt` | inherited from `1.0 / inverseSqrt(x)` |
//! | `atan`, `atan2` | 4096 ULP (`f16`: 5 ULP) |
//! | `tan` | inherited from `sin(x) / cos(x)` |
//! | `asin`, `acos` | inherited from `atan2(x, sqrt(1 - x * x))`, `atan2(sqrt(1 - x * x), x)` |
//! | `sinh`, `cosh`, `tanh` | inherited from `(exp(x) - exp(-x)) * 0.5`, `(exp(x) + exp(-x)) * 0.5`, `sinh(x) / cosh(x)` |
//! | `asinh`, `acosh`, `atanh` | inherited from `log(x + sqrt(x * x + 1))`, `log(x + sqrt(x * x - 1))`, `log((1 + x) / (1 - x)) * 0.5` |
//! | `pow` | inherited from `exp2(y * log2(x))` |
//! | `fma`, `mix`, `smoothstep` | inherited from `x * y + z`, `x * (1 - z) + y * z` (or `x + (y - x) * z`: the conformance tests accept either, so the fuzzer takes the looser), `t * t * (3 - 2 * t)` with `t = clamp((x - low) / (high - low), 0, 1)` |
//! | `degrees`, `radians` | inherited from `x * 57.295779513082322865`, `x * 0.017453292519943295474` |
//! | `dot`, `length`, `distance`, `normalize`, `cross`, `reflect`, `refract`, `faceForward`, matrix products | inherited from their formulas (sums of products, `sqrt(dot(x, x))`, `length(x - y)`, `x / length(x)`, ...) |
//! | `determinant` | "Infinite ULP" (implementations should be pragmatically useful); the fuzzer holds it to its cofactor formula's bound, and reports a miss as such |
//! | `unpack4x8snorm`, `unpack4x8unorm`, `unpack2x16snorm`, `unpack2x16unorm` | 3 ULP |
//! | `unpack2x16float` | correctly rounded (exact) |
//!
//! Where this crate is unsure of a row it uses the looser bound (4096 ULP for `atan` in `f16`
//! too, `3 + 2|x|` ULP for `exp` in `f16`), which weakens the check and never fails a
//! conforming implementation.
//!
//! # The abstract values
//! A float value of the generated program is described by [`F`]: an interval holding its exact
//! value (the value with real arithmetic on the exact inputs), an absolute bound on how far any
//! conforming implementation's value may be from it, and, for exact values, a power of two
//! the value is a multiple of. Each operation propagates the bound through its Lipschitz
//! constant on the (widened) operand intervals and adds its own rounding from the table, so an
//! output slot's bound holds for every conforming implementation: two executors may differ by
//! twice it. An operation whose result jumps (`floor`, comparisons, conversions to integers,
//! `step`, `sign` near 0, packing to integers) takes exact operands only, so every integer and
//! `bool` the kernel computes is the same on every conforming implementation.
//!
//! Exact values stay exact when the result, on the grid of its operands, fits the mantissa and
//! stays at least the smallest normal (subnormals may be flushed, §15.7.2), so `+`, `-`, `*`
//! on such values are compared bit for bit. Signed zeros: WGSL lets an implementation ignore the
//! sign of a zero (§15.7.2), so float outputs compare `-0.0` equal to `0.0` and nothing
//! exposes a zero's sign bit (bitcasts and `pack2x16float` take operands without zero).

use crate::ty::Scalar;

/// A float format.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fmt {
    /// Significand bits, the implicit one included (24, 11).
    pub precision: i32,
    /// Exponent of the smallest normal (-126, -14).
    pub emin: i32,
    /// Largest magnitude the generator lets a value reach (well inside the finite range).
    pub safe_max: f64,
}

impl Fmt {
    /// `f32` or `f16`.
    pub fn of(s: Scalar) -> Fmt {
        match s {
            Scalar::F16 => Fmt {
                precision: 11,
                emin: -14,
                safe_max: 16384.0,
            },
            _ => Fmt {
                precision: 24,
                emin: -126,
                safe_max: 1e18,
            },
        }
    }
    /// The smallest normal.
    pub fn min_normal(self) -> f64 {
        2f64.powi(self.emin)
    }
    /// The ULP of every value of magnitude at most `m` (WGSL §15.7.4's definition: the gap
    /// between the two floats around `m`, its upper bound on `[0, m]`).
    pub fn ulp(self, m: f64) -> f64 {
        let m = m.abs();
        if m < self.min_normal() {
            return 2f64.powi(self.emin - self.precision + 1);
        }
        2f64.powi(m.log2().floor() as i32 - self.precision + 1)
    }
}

/// How much an operation's own result may be off (§15.7.4).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rounding {
    /// Correctly rounded: half an ULP (none where the result is exact on its operands' grid).
    Correct,
    /// `k` ULP of the result.
    Ulps(f64),
    /// An absolute error.
    Absolute(f64),
}

/// Marks the grid of the value 0: a multiple of every power of two.
pub const ZERO_GRID: i32 = 4096;

/// An abstract float value (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct F {
    /// The exact value is in `[lo, hi]`.
    pub lo: f64,
    /// See `lo`.
    pub hi: f64,
    /// An implementation's value is within `err` of the exact value (0: bit for bit, up to
    /// the sign of zero).
    pub err: f64,
    /// For an exact value: it is a multiple of `2^grid`.
    pub grid: i32,
    /// Every implementation computes a value `>= 0` (squares and sums of them).
    pub nonneg: bool,
}

/// Why an operation is not allowed on these operands.
pub type Reject = String;
type R = Result<F, Reject>;

fn corners(a: F, b: F, f: impl Fn(f64, f64) -> f64) -> (f64, f64) {
    let v = [f(a.lo, b.lo), f(a.lo, b.hi), f(a.hi, b.lo), f(a.hi, b.hi)];
    (
        v.iter().copied().fold(f64::INFINITY, f64::min),
        v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    )
}

/// The largest power-of-two exponent `g` with `v` a multiple of `2^g`.
pub fn grid_of(v: f64) -> i32 {
    if v == 0.0 {
        return ZERO_GRID;
    }
    let mut g = 64;
    while g > -200 {
        if (v / 2f64.powi(g)).fract() == 0.0 {
            return g;
        }
        g -= 1;
    }
    -200
}

impl F {
    /// The literal `v` (exact).
    pub fn lit(v: f64) -> F {
        F {
            lo: v,
            hi: v,
            err: 0.0,
            grid: grid_of(v),
            nonneg: v >= 0.0,
        }
    }
    /// The interval `[lo, hi]` of exact values on the grid `2^grid`.
    pub fn exact_range(lo: f64, hi: f64, grid: i32) -> F {
        F {
            lo,
            hi,
            err: 0.0,
            grid,
            nonneg: lo >= 0.0,
        }
    }
    /// Exact (compared bit for bit).
    pub fn is_exact(self) -> bool {
        self.err == 0.0
    }
    /// Largest magnitude of an exact value.
    pub fn mag(self) -> f64 {
        self.lo.abs().max(self.hi.abs())
    }
    /// The interval an implementation's value lies in.
    pub fn widened(self) -> (f64, f64) {
        (self.lo - self.err, self.hi + self.err)
    }
    /// Smallest magnitude of an implementation's value, 0 if the widened interval holds 0.
    pub fn min_mag(self) -> f64 {
        let (lo, hi) = self.widened();
        if lo > 0.0 {
            lo
        } else if hi < 0.0 {
            -hi
        } else {
            0.0
        }
    }
    /// The union of two values' descriptions (a `select`, a join of paths).
    pub fn join(self, b: F) -> F {
        F {
            lo: self.lo.min(b.lo),
            hi: self.hi.max(b.hi),
            err: self.err.max(b.err),
            grid: self.grid.min(b.grid),
            nonneg: self.nonneg && b.nonneg,
        }
    }
    /// Whether `self` lies within `contract` (its interval and error, and its grid if exact).
    pub fn fits(self, contract: F) -> bool {
        self.lo >= contract.lo
            && self.hi <= contract.hi
            && self.err <= contract.err
            && (contract.err > 0.0 || self.grid >= contract.grid)
    }
}

/// The result `[lo, hi]` of an operation whose operands' errors propagate to `prop`, exact on
/// `grid` where `prop` is 0 and the result fits, else rounded by `rounding`.
pub fn finish(fmt: Fmt, lo: f64, hi: f64, prop: f64, grid: Option<i32>, rounding: Rounding) -> R {
    if !(lo.is_finite() && hi.is_finite() && prop.is_finite()) {
        return Err("a result that is not finite".into());
    }
    let m = lo.abs().max(hi.abs());
    if m + prop > fmt.safe_max {
        return Err(format!("a result of magnitude up to {:e}", m + prop));
    }
    if prop == 0.0
        && rounding == Rounding::Correct
        && let Some(g) = grid
        && (g >= fmt.emin || g == ZERO_GRID)
        && (m == 0.0 || m < 2f64.powi(g.saturating_add(fmt.precision)))
    {
        return Ok(F {
            lo,
            hi,
            err: 0.0,
            grid: if m == 0.0 { ZERO_GRID } else { g },
            nonneg: lo >= 0.0,
        });
    }
    let own = match rounding {
        Rounding::Correct => 0.5 * fmt.ulp(m + prop),
        Rounding::Ulps(k) => k * fmt.ulp(m + prop),
        Rounding::Absolute(a) => a,
    };
    let mut err = prop + own;
    // Subnormal results and operands may be flushed to zero (§15.7.2).
    if lo - err < fmt.min_normal() && hi + err > -fmt.min_normal() {
        err += fmt.min_normal();
    }
    Ok(F {
        lo,
        hi,
        err,
        grid: 0,
        nonneg: lo >= 0.0,
    })
}

fn exact_only(a: F, what: &str) -> Result<(), Reject> {
    if a.is_exact() {
        Ok(())
    } else {
        Err(format!(
            "{what} of an inexact value (the result jumps; implementations could differ)"
        ))
    }
}

/// The abstract operations, in the format `fmt`.
#[derive(Clone, Copy, Debug)]
pub struct Ops {
    /// The format.
    pub fmt: Fmt,
}

impl Ops {
    /// For `s` (`f32` or `f16`).
    pub fn of(s: Scalar) -> Ops {
        Ops { fmt: Fmt::of(s) }
    }

    /// `-a`
    pub fn neg(self, a: F) -> F {
        F {
            lo: -a.hi,
            hi: -a.lo,
            nonneg: a.hi <= 0.0 && a.is_exact(),
            ..a
        }
    }
    /// `abs(a)`
    pub fn abs(self, a: F) -> F {
        let (lo, hi) = if a.lo >= 0.0 {
            (a.lo, a.hi)
        } else if a.hi <= 0.0 {
            (-a.hi, -a.lo)
        } else {
            (0.0, a.mag())
        };
        F {
            lo,
            hi,
            nonneg: true,
            ..a
        }
    }
    /// `a + b`
    pub fn add(self, a: F, b: F) -> R {
        let mut r = finish(
            self.fmt,
            a.lo + b.lo,
            a.hi + b.hi,
            a.err + b.err,
            Some(a.grid.min(b.grid)),
            Rounding::Correct,
        )?;
        r.nonneg = a.nonneg && b.nonneg;
        Ok(r)
    }
    /// `a - b`
    pub fn sub(self, a: F, b: F) -> R {
        self.add(a, self.neg(b))
    }
    /// `a * b`
    pub fn mul(self, a: F, b: F) -> R {
        let (lo, hi) = corners(a, b, |x, y| x * y);
        let prop = a.mag() * b.err + b.mag() * a.err + a.err * b.err;
        let mut r = finish(
            self.fmt,
            lo,
            hi,
            prop,
            Some(a.grid.saturating_add(b.grid).min(ZERO_GRID)),
            Rounding::Correct,
        )?;
        r.nonneg = a.nonneg && b.nonneg;
        Ok(r)
    }
    /// `a * a` (the same value twice: its square is never negative).
    pub fn sqr(self, a: F) -> R {
        let ab = self.abs(a);
        let mut r = self.mul(ab, ab)?;
        r.nonneg = true;
        Ok(r)
    }
    /// `a / b`: 2.5 ULP, for divisors bounded away from 0 (and below the range limit).
    pub fn div(self, a: F, b: F) -> R {
        let m = b.min_mag();
        let (blo, bhi) = b.widened();
        if m < 2f64.powi(-20) || bhi.abs().max(blo.abs()) > 2f64.powi(-self.fmt.emin) {
            return Err("a divisor not bounded away from 0".into());
        }
        let (lo, hi) = corners(a, b, |x, y| x / y);
        let prop = a.err / m + a.mag() * b.err / (m * m);
        let mut r = finish(self.fmt, lo, hi, prop, None, Rounding::Ulps(2.5))?;
        r.nonneg = a.nonneg && b.nonneg;
        Ok(r)
    }
    /// `a % b`, inherited from `a - b * trunc(a / b)`: the computed `trunc` may be one off
    /// where the quotient is near an integer, so the bound includes `|b|`.
    pub fn rem(self, a: F, b: F) -> R {
        let q = self.div(a, b)?;
        let t = q.mag().max(1.0);
        if t > 2f64.powi(self.fmt.precision - 4) {
            return Err("a quotient too large for `%`".into());
        }
        let y = b.mag() + b.err;
        let lo = if a.lo < 0.0 { -y } else { 0.0 };
        let hi = if a.hi > 0.0 { y } else { 0.0 };
        let prop = y + a.err + t * b.err;
        finish(
            self.fmt,
            lo,
            hi,
            prop,
            None,
            Rounding::Absolute(3.0 * self.fmt.ulp(a.mag() + y * t)),
        )
    }
    /// `min(a, b)` / `max(a, b)`: exact choices, errors carried over.
    pub fn min_max(self, a: F, b: F, max: bool) -> F {
        let (lo, hi) = if max {
            (a.lo.max(b.lo), a.hi.max(b.hi))
        } else {
            (a.lo.min(b.lo), a.hi.min(b.hi))
        };
        F {
            lo,
            hi,
            err: a.err.max(b.err),
            grid: a.grid.min(b.grid),
            nonneg: if max {
                a.nonneg || b.nonneg
            } else {
                a.nonneg && b.nonneg
            },
        }
    }
    /// `clamp(e, low, high)`: needs `low <= high` on every implementation.
    pub fn clamp(self, e: F, low: F, high: F) -> R {
        if low.widened().1 > high.widened().0 {
            return Err("clamp bounds that may cross".into());
        }
        Ok(self.min_max(self.min_max(e, low, true), high, false))
    }
    /// `select`: the join.
    pub fn select(self, a: F, b: F) -> F {
        a.join(b)
    }
    /// `floor`, `ceil`, `round`, `trunc`: exact operands only.
    pub fn round_to_int(self, a: F, f: fn(f64) -> f64) -> R {
        exact_only(a, "rounding to an integer")?;
        let (lo, hi) = (f(a.lo).min(f(a.hi)), f(a.lo).max(f(a.hi)));
        let (lo, hi) = (lo.min(a.lo.floor()), hi.max(a.hi.ceil()));
        Ok(F::exact_range(lo, hi, a.grid.max(0)))
    }
    /// `fract(a)` = `a - floor(a)`: exact operands only.
    pub fn fract(self, a: F) -> R {
        exact_only(a, "fract")?;
        Ok(F::exact_range(0.0, 1.0, a.grid.min(0)))
    }
    /// `sign(a)`: exact, or away from 0.
    pub fn sign(self, a: F) -> R {
        if !a.is_exact() && a.min_mag() == 0.0 {
            return Err("sign of an inexact value near 0".into());
        }
        Ok(F::exact_range(-1.0, 1.0, 0))
    }
    /// `step(edge, x)`: `x - edge` exact or away from 0.
    pub fn step(self, edge: F, x: F) -> R {
        if !(edge.is_exact() && x.is_exact()) {
            let d = self.sub(x, edge)?;
            if d.min_mag() == 0.0 {
                return Err("step near its edge with inexact operands".into());
            }
        }
        Ok(F::exact_range(0.0, 1.0, 0))
    }
    /// `sqrt(a)`, inherited from `1 / inverseSqrt(a)`.
    pub fn sqrt(self, a: F) -> R {
        let (lo_w, _) = a.widened();
        if !(a.nonneg || lo_w >= 0.0) {
            return Err("sqrt of a value that may be negative".into());
        }
        let lo = a.lo.max(0.0).sqrt();
        let hi = a.hi.max(0.0).sqrt();
        // |sqrt(x) - sqrt(y)| <= sqrt(|x - y|), and <= |x - y| / (2 sqrt(min)).
        let mut prop = a.err.sqrt();
        if lo_w > 0.0 {
            prop = prop.min(a.err / (2.0 * lo_w.sqrt()));
        }
        let mut r = finish(self.fmt, lo, hi, prop, None, Rounding::Ulps(5.5))?;
        r.nonneg = true;
        Ok(r)
    }
    /// `inverseSqrt(a)`: 2 ULP, operands bounded away from 0.
    pub fn inverse_sqrt(self, a: F) -> R {
        let (lo_w, _) = a.widened();
        if lo_w < 2f64.powi(-10) {
            return Err("inverseSqrt near or below 0".into());
        }
        let prop = a.err * 0.5 * lo_w.powf(-1.5);
        let mut r = finish(
            self.fmt,
            1.0 / a.hi.sqrt(),
            1.0 / a.lo.sqrt(),
            prop,
            None,
            Rounding::Ulps(2.0),
        )?;
        r.nonneg = true;
        Ok(r)
    }
    /// `exp(a)` (`base2 = false`) or `exp2(a)`: `3 + 2|x|` ULP.
    pub fn exp(self, a: F, base2: bool) -> R {
        let (lo_w, hi_w) = a.widened();
        let f = |x: f64| if base2 { x.exp2() } else { x.exp() };
        let slope = if base2 { std::f64::consts::LN_2 } else { 1.0 };
        let prop = f(hi_w) * slope * a.err * 1.01;
        let ulps = 3.0 + 2.0 * lo_w.abs().max(hi_w.abs());
        let mut r = finish(self.fmt, f(a.lo), f(a.hi), prop, None, Rounding::Ulps(ulps))?;
        r.nonneg = true;
        Ok(r)
    }
    /// `log(a)` or `log2(a)`: 3 ULP outside `[0.5, 2]`, an absolute error inside.
    pub fn log(self, a: F, base2: bool) -> R {
        let (lo_w, hi_w) = a.widened();
        if lo_w < 2f64.powi(-10) {
            return Err("log near or below 0".into());
        }
        let scale = if base2 {
            1.0 / std::f64::consts::LN_2
        } else {
            1.0
        };
        let prop = a.err / lo_w * scale;
        let (lo, hi) = (a.lo.ln() * scale, a.hi.ln() * scale);
        let abs = if self.fmt.precision == 11 {
            2f64.powi(-7)
        } else {
            2f64.powi(-21)
        };
        let inside = lo_w >= 0.5 && hi_w <= 2.0;
        let outside = hi_w < 0.5 || lo_w > 2.0;
        let m = lo.abs().max(hi.abs()) + prop;
        let rounding = if inside {
            Rounding::Absolute(abs)
        } else if outside {
            Rounding::Ulps(3.0)
        } else {
            Rounding::Absolute(abs.max(3.0 * self.fmt.ulp(m)))
        };
        finish(self.fmt, lo, hi, prop, None, rounding)
    }
    /// `sin(a)` (`cos = false`) or `cos(a)`: an absolute error inside `[-pi, pi]`.
    pub fn sin_cos(self, a: F, cos: bool) -> R {
        let (lo_w, hi_w) = a.widened();
        let pi = std::f64::consts::PI;
        if lo_w < -pi || hi_w > pi {
            return Err("sin or cos outside [-pi, pi]".into());
        }
        let (lo, hi) = if cos {
            let c = [a.lo.cos(), a.hi.cos()];
            let hi = if a.lo <= 0.0 && a.hi >= 0.0 {
                1.0
            } else {
                c[0].max(c[1])
            };
            (c[0].min(c[1]), hi)
        } else {
            let s = [a.lo.sin(), a.hi.sin()];
            let h = std::f64::consts::FRAC_PI_2;
            let hi = if a.lo <= h && a.hi >= h {
                1.0
            } else {
                s[0].max(s[1])
            };
            let lo = if a.lo <= -h && a.hi >= -h {
                -1.0
            } else {
                s[0].min(s[1])
            };
            (lo, hi)
        };
        let abs = if self.fmt.precision == 11 {
            2f64.powi(-7)
        } else {
            2f64.powi(-11)
        };
        finish(self.fmt, lo, hi, a.err, None, Rounding::Absolute(abs))
    }
    /// `atan(a)`: 4096 ULP.
    pub fn atan(self, a: F) -> R {
        finish(
            self.fmt,
            a.lo.atan(),
            a.hi.atan(),
            a.err,
            None,
            Rounding::Ulps(4096.0),
        )
    }
    /// `atan2(y, x)`: 4096 ULP, away from the origin, and not across the branch cut.
    pub fn atan2(self, y: F, x: F) -> R {
        let (xlo, _) = x.widened();
        let (ylo, _) = y.widened();
        if !(xlo > 0.0 || ylo > 0.0) {
            return Err("atan2 near the origin or its branch cut".into());
        }
        let r = x.min_mag().max(y.min_mag());
        if r < 2f64.powi(-8) {
            return Err("atan2 near the origin".into());
        }
        let prop = (x.err + y.err) / r;
        let pi = std::f64::consts::PI;
        let (lo, hi) = if xlo > 0.0 {
            (-pi / 2.0, pi / 2.0)
        } else {
            (0.0, pi)
        };
        finish(self.fmt, lo, hi, prop, None, Rounding::Ulps(4096.0))
    }
    /// `pow(x, y)`, inherited from `exp2(y * log2(x))`.
    pub fn pow(self, x: F, y: F) -> R {
        let l = self.log(x, true)?;
        let t = self.mul(y, l)?;
        self.exp(t, true)
    }
    /// `fma(a, b, c)`, inherited from `a * b + c`.
    pub fn fma(self, a: F, b: F, c: F) -> R {
        let p = self.mul(a, b)?;
        self.add(p, c)
    }
    /// `mix(a, b, t)`: inherited from `a * (1 - t) + b * t` (the spec's formula) or from
    /// `a + (b - a) * t`, whichever is looser. The WebGPU conformance tests accept either
    /// (`mixIntervals = [mixImpreciseInterval, mixPreciseInterval]` in the CTS's
    /// `util/floating_point.ts`), and drivers use the second (NVIDIA's on the H200: case
    /// 18132885704316271577 of seed 777123, FUZZING.md): with `t = 1` the first is `b` exactly,
    /// the second rounds `b - a` first, so `mix(144h, 2.4375h, 1h)` may be `2.5` in `f16`.
    pub fn mix(self, a: F, b: F, t: F) -> R {
        let one = F::lit(1.0);
        let l = self.mul(a, self.sub(one, t)?)?;
        let r = self.mul(b, t)?;
        let precise = self.add(l, r)?;
        let imprecise = self.add(a, self.mul(self.sub(b, a)?, t)?)?;
        Ok(precise.join(imprecise))
    }
    /// `smoothstep(low, high, x)`, inherited from `t * t * (3 - 2t)`.
    pub fn smoothstep(self, low: F, high: F, x: F) -> R {
        let t = self.div(self.sub(x, low)?, self.sub(high, low)?)?;
        let t = self.clamp(t, F::lit(0.0), F::lit(1.0))?;
        let tt = self.sqr(t)?;
        let s = self.sub(F::lit(3.0), self.mul(F::lit(2.0), t)?)?;
        self.mul(tt, s)
    }
    /// `x * c` for a constant `c` not exactly representable (`degrees`, `radians`): the
    /// constant rounded once, then the product rounded.
    pub fn mul_const(self, x: F, c: f64) -> R {
        let k = F {
            lo: c,
            hi: c,
            err: 0.5 * self.fmt.ulp(c),
            grid: 0,
            nonneg: c >= 0.0,
        };
        self.mul(x, k)
    }
    /// `tan(a)`, inherited from `sin(a) / cos(a)`.
    pub fn tan(self, a: F) -> R {
        self.div(self.sin_cos(a, false)?, self.sin_cos(a, true)?)
    }
    /// `sinh` (`cosh = false`) or `cosh`, inherited from `(exp(x) -/+ exp(-x)) * 0.5`.
    pub fn sinh_cosh(self, a: F, cosh: bool) -> R {
        let p = self.exp(a, false)?;
        let m = self.exp(self.neg(a), false)?;
        let s = if cosh {
            self.add(p, m)?
        } else {
            self.sub(p, m)?
        };
        self.mul(s, F::lit(0.5))
    }
    /// `tanh(a)`, inherited from `sinh(a) / cosh(a)`.
    pub fn tanh(self, a: F) -> R {
        self.div(self.sinh_cosh(a, false)?, self.sinh_cosh(a, true)?)
    }
    /// `asin(a)` (inherited from `atan2(a, sqrt(1 - a * a))`) or `acos(a)`
    /// (`atan2(sqrt(1 - a * a), a)`).
    pub fn asin_acos(self, a: F, acos: bool) -> R {
        let s = self.sqrt(self.sub(F::lit(1.0), self.sqr(a)?)?)?;
        if acos {
            self.atan2(s, a)
        } else {
            self.atan2(a, s)
        }
    }
    /// `asinh(a)`, inherited from `log(a + sqrt(a * a + 1))`.
    pub fn asinh(self, a: F) -> R {
        let s = self.sqrt(self.add(self.sqr(a)?, F::lit(1.0))?)?;
        self.log(self.add(a, s)?, false)
    }
    /// `acosh(a)`, inherited from `log(a + sqrt(a * a - 1))`.
    pub fn acosh(self, a: F) -> R {
        let s = self.sqrt(self.sub(self.sqr(a)?, F::lit(1.0))?)?;
        self.log(self.add(a, s)?, false)
    }
    /// `atanh(a)`, inherited from `log((1 + a) / (1 - a)) * 0.5`.
    pub fn atanh(self, a: F) -> R {
        let one = F::lit(1.0);
        let q = self.div(self.add(one, a)?, self.sub(one, a)?)?;
        self.mul(self.log(q, false)?, F::lit(0.5))
    }
    /// `ldexp(a, n)` for `n` in `[nlo, nhi]`: correctly rounded.
    pub fn ldexp(self, a: F, nlo: i64, nhi: i64) -> R {
        if !(-60..=60).contains(&nlo) || !(-60..=60).contains(&nhi) {
            return Err("an ldexp exponent out of the generator's range".into());
        }
        let (slo, shi) = (2f64.powi(nlo as i32), 2f64.powi(nhi as i32));
        let lo = (a.lo * slo).min(a.lo * shi);
        let hi = (a.hi * slo).max(a.hi * shi);
        let grid = a.grid.saturating_add(nlo as i32).min(ZERO_GRID);
        finish(self.fmt, lo, hi, a.err * shi, Some(grid), Rounding::Correct)
    }
    /// Sum of `n` products `a_i * b_i` (`dot`, the components of matrix products).
    pub fn dot(self, a: F, b: F, n: u8) -> R {
        let p = self.mul(a, b)?;
        let mut s = p;
        for _ in 1..n {
            s = self.add(s, p)?;
        }
        Ok(s)
    }
    /// Sum of `n` squares (`dot(v, v)`).
    pub fn dot_self(self, a: F, n: u8) -> R {
        let p = self.sqr(a)?;
        let mut s = p;
        for _ in 1..n {
            s = self.add(s, p)?;
        }
        s.nonneg = true;
        Ok(s)
    }
    /// `length(v)` of `n` components (1 for a scalar: `abs`, as WGSL's `length(x)` is `sqrt(x * x)`).
    pub fn length(self, a: F, n: u8) -> R {
        self.sqrt(self.dot_self(a, n)?)
    }
    /// The value converted to this format from one of `from`: exact where it fits, else one of
    /// the two nearest (§15.7.6); it must be finite in this format.
    pub fn convert(self, a: F) -> R {
        if a.is_exact()
            && let Ok(r) = finish(self.fmt, a.lo, a.hi, 0.0, Some(a.grid), Rounding::Correct)
            && r.is_exact()
        {
            return Ok(r);
        }
        finish(self.fmt, a.lo, a.hi, a.err, None, Rounding::Ulps(1.0))
    }
}
