//! The derivative of every float built-in and operator the DSL has, in both modes, against
//! central differences of an f64 reference AND against the derivative's closed form (both
//! written here, independently of `wgsl_dsl::autodiff`), on random inputs including values at
//! and near kinks, run on the interpreter and the GPU.
//!
//! Each case is a scalar function of `arity` scalars (vector built-ins are reached through
//! `vecN(..)` of scalars and a `dot` with constant weights, so the vector rules are exercised
//! on vector values). For each invocation the kernel stores the gradient (`grad`, reverse
//! mode) and the directional derivative along a random tangent (`jvp`, forward mode).
//!
//! At a kink (`kinks`) only the closed form is checked, which holds the documented
//! subgradient (`abs` at 0 is 0, a tie of `max` goes to the second operand, `clamp` passes
//! nothing to `e` at its bounds, `length` of the zero vector is 0); elsewhere both. Samples
//! near a kink (within `1e-3`) are kept for the central differences, whose step is `1e-6`.

mod autodiff_support;

use autodiff_support::{On, central_difference, close, run};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::f64::consts::{LN_2, PI};
use std::ops::Range;
use wgsl_dsl::prelude::*;

type Dsl = Box<dyn Fn(&[Exp<f32>]) -> Exp<f32>>;
type F64 = Box<dyn Fn(&[f64]) -> f64>;
type Grad = Box<dyn Fn(&[f64]) -> Vec<f64>>;
type Domain = Box<dyn Fn(&mut StdRng) -> Vec<f64>>;

struct Case {
    name: &'static str,
    arity: usize,
    dsl: Dsl,
    f: F64,
    grad: Grad,
    domain: Domain,
    /// Points where the documented subgradient is checked (closed form only); their
    /// neighbours at `+-1e-3` in the first coordinate are checked both ways.
    kinks: &'static [&'static [f64]],
    /// Central-difference step (relative); larger for `quantizeToF16`, whose derivative is 1
    /// by convention but piecewise constant at scales below its rounding.
    fd_step: f64,
    tol: f64,
}

fn u(r: &mut StdRng, lo: f64, hi: f64) -> f64 {
    // Inputs are f32 on the device: round here so that the reference sees the same values.
    f64::from(r.random_range(lo..hi) as f32)
}

/// `u` away from the points `k + offset` (`k` an integer) by at least `gap`.
fn away(r: &mut StdRng, lo: f64, hi: f64, offset: f64, gap: f64) -> f64 {
    loop {
        let x = u(r, lo, hi);
        let d = (x - offset) - (x - offset).round();
        if d.abs() > gap {
            return x;
        }
    }
}

/// A nonzero value of either sign with magnitude in `[lo, hi)`.
fn signed(r: &mut StdRng, lo: f64, hi: f64) -> f64 {
    let m = u(r, lo, hi);
    if r.random_bool(0.5) { m } else { -m }
}

const W: [f64; 3] = [0.3, -0.7, 0.5];

fn w() -> Exp<Vec3<f32>> {
    vec3(W[0] as f32, W[1] as f32, W[2] as f32)
}

fn v3(a: &[Exp<f32>], o: usize) -> Exp<Vec3<f32>> {
    vec3(&a[o], &a[o + 1], &a[o + 2])
}

fn dot3(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn x3(x: &[f64], o: usize) -> [f64; 3] {
    [x[o], x[o + 1], x[o + 2]]
}

fn cross64(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn scale(a: [f64; 3], s: f64) -> [f64; 3] {
    a.map(|c| c * s)
}

fn add(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

fn norm(a: [f64; 3]) -> f64 {
    dot3(a, a).sqrt()
}

/// WGSL's `refract` (spec §17.5) in f64.
fn refract64(i: [f64; 3], n: [f64; 3], eta: f64) -> [f64; 3] {
    let d = dot3(n, i);
    let k = 1.0 - eta * eta * (1.0 - d * d);
    if k < 0.0 {
        return [0.0; 3];
    }
    add(scale(i, eta), scale(n, -(eta * d + k.sqrt())))
}

/// The gradient of `dot(W, refract(i, n, eta))`, derived by hand: with `d = n.i`,
/// `k = 1 - eta^2 (1 - d^2)`, `mu = eta d + sqrt(k)`, `y = eta i - mu n`:
/// `dmu/dd = eta + eta^2 d / sqrt(k)`, `dmu/deta = d - eta (1 - d^2) / sqrt(k)`.
fn refract_grad(x: &[f64]) -> Vec<f64> {
    let (i, n, eta) = (x3(x, 0), x3(x, 3), x[6]);
    let d = dot3(n, i);
    let k = 1.0 - eta * eta * (1.0 - d * d);
    if k <= 0.0 {
        return vec![0.0; 7];
    }
    let s = k.sqrt();
    let mu = eta * d + s;
    let dmu_dd = eta + eta * eta * d / s;
    let dmu_deta = d - eta * (1.0 - d * d) / s;
    let wn = dot3(W, n);
    // dy/di^T W = eta W - dmu/dd (W.n) n ; dy/dn^T W = -mu W - dmu/dd (W.n) i.
    let gi = add(scale(W, eta), scale(n, -dmu_dd * wn));
    let gn = add(scale(W, -mu), scale(i, -dmu_dd * wn));
    let geta = dot3(W, i) - dmu_deta * wn;
    let mut g = gi.to_vec();
    g.extend(gn);
    g.push(geta);
    g
}

fn f16_round(x: f64) -> f64 {
    half::f16::from_f64(x).to_f64()
}

/// `frexp`'s exponent: `x = f 2^e` with `|f|` in `[0.5, 1)`.
fn frexp_exp(x: f64) -> i32 {
    if x == 0.0 {
        return 0;
    }
    x.abs().log2().floor() as i32 + 1
}

/// A case with no kinks, the default step and tolerance.
fn d(
    name: &'static str,
    arity: usize,
    dsl: impl Fn(&[Exp<f32>]) -> Exp<f32> + 'static,
    f: impl Fn(&[f64]) -> f64 + 'static,
    grad: impl Fn(&[f64]) -> Vec<f64> + 'static,
    domain: impl Fn(&mut StdRng) -> Vec<f64> + 'static,
) -> Case {
    Case {
        name,
        arity,
        dsl: Box::new(dsl),
        f: Box::new(f),
        grad: Box::new(grad),
        domain: Box::new(domain),
        kinks: &[],
        fd_step: 1e-6,
        tol: 1e-4,
    }
}

/// A case of one argument drawn uniformly from `domain`, its derivative `df`.
fn unary(
    name: &'static str,
    dsl: fn(&Exp<f32>) -> Exp<f32>,
    f: fn(f64) -> f64,
    df: fn(f64) -> f64,
    domain: Range<f64>,
) -> Case {
    d(
        name,
        1,
        move |a| dsl(&a[0]),
        move |x| f(x[0]),
        move |x| vec![df(x[0])],
        move |r| vec![u(r, domain.start, domain.end)],
    )
}

/// [`unary`] of the DSL's one-argument built-in `$f`, named after it.
macro_rules! unary {
    ($f:ident, $f64:expr, $df:expr, $domain:expr) => {
        unary(stringify!($f), |a| $f(a), $f64, $df, $domain)
    };
}

fn cases() -> Vec<Case> {
    let with_kinks = |mut c: Case, kinks: &'static [&'static [f64]]| {
        c.kinks = kinks;
        c
    };
    // One argument in `[-3, 3)`, away from the integers (where these functions step).
    let between_integers = |name,
                            dsl: fn(&[Exp<f32>]) -> Exp<f32>,
                            f: fn(&[f64]) -> f64,
                            grad: fn(&[f64]) -> Vec<f64>| {
        d(name, 1, dsl, f, grad, |r| {
            vec![away(r, -3.0, 3.0, 0.0, 1e-3)]
        })
    };
    // `max` or `min` of two arguments in `[-2, 2)`: the gradient goes to the first where it is
    // `picked` over the second, else (a tie included) to the second.
    let extremum = |name,
                    dsl: fn(&[Exp<f32>]) -> Exp<f32>,
                    f: fn(f64, f64) -> f64,
                    picked: fn(f64, f64) -> bool| {
        with_kinks(
            d(
                name,
                2,
                dsl,
                move |x| f(x[0], x[1]),
                move |x| {
                    if picked(x[0], x[1]) {
                        vec![1.0, 0.0]
                    } else {
                        vec![0.0, 1.0]
                    }
                },
                |r| vec![u(r, -2.0, 2.0), u(r, -2.0, 2.0)],
            ),
            &[&[0.5, 0.5]],
        )
    };
    vec![
        // ---- operators (WGSL spec §8.7) ----
        d(
            "add",
            2,
            |a| &a[0] + &a[1],
            |x| x[0] + x[1],
            |_| vec![1.0, 1.0],
            |r| vec![u(r, -3.0, 3.0), u(r, -3.0, 3.0)],
        ),
        d(
            "sub",
            2,
            |a| &a[0] - &a[1],
            |x| x[0] - x[1],
            |_| vec![1.0, -1.0],
            |r| vec![u(r, -3.0, 3.0), u(r, -3.0, 3.0)],
        ),
        d(
            "mul",
            2,
            |a| &a[0] * &a[1],
            |x| x[0] * x[1],
            |x| vec![x[1], x[0]],
            |r| vec![u(r, -3.0, 3.0), u(r, -3.0, 3.0)],
        ),
        d(
            "div",
            2,
            |a| &a[0] / &a[1],
            |x| x[0] / x[1],
            |x| vec![1.0 / x[1], -x[0] / (x[1] * x[1])],
            |r| vec![u(r, -3.0, 3.0), signed(r, 0.5, 3.0)],
        ),
        d(
            "rem",
            2,
            |a| &a[0] % &a[1],
            |x| x[0] - x[1] * (x[0] / x[1]).trunc(),
            |x| vec![1.0, -(x[0] / x[1]).trunc()],
            |r| loop {
                let (a, b) = (u(r, -5.0, 5.0), u(r, 0.7, 2.0));
                let q = a / b;
                if (q - q.round()).abs() > 1e-3 {
                    return vec![a, b];
                }
            },
        ),
        unary("neg", |a| -a, |x| -x, |_| -1.0, -3.0..3.0),
        unary!(square, |x| x * x, |x| 2.0 * x, -3.0..3.0),
        unary(
            "powi5",
            |a| powi(a, 5),
            |x| x.powi(5),
            |x| 5.0 * x.powi(4),
            -2.0..2.0,
        ),
        // a float through an integer: trunc(x) x, the integer part piecewise constant.
        d(
            "to_i32",
            1,
            |a| &a[0] * a[0].to_i32().to_f32(),
            |x| x[0] * x[0].trunc(),
            |x| vec![x[0].trunc()],
            |r| vec![away(r, -4.0, 4.0, 0.0, 1e-3)],
        ),
        // ---- one argument (WGSL spec §17.5) ----
        unary!(exp, f64::exp, |x| x.exp(), -3.0..3.0),
        unary!(exp2, f64::exp2, |x| x.exp2() * LN_2, -3.0..3.0),
        unary!(log, f64::ln, |x| 1.0 / x, 0.05..5.0),
        unary!(log2, f64::log2, |x| 1.0 / (x * LN_2), 0.05..5.0),
        unary!(sqrt, f64::sqrt, |x| 0.5 / x.sqrt(), 0.05..5.0),
        unary!(
            inverse_sqrt,
            |x| 1.0 / x.sqrt(),
            |x| -0.5 * x.powf(-1.5),
            0.05..5.0
        ),
        unary!(sin, f64::sin, |x| x.cos(), -3.0..3.0),
        unary!(cos, f64::cos, |x| -x.sin(), -3.0..3.0),
        unary!(tan, f64::tan, |x| 1.0 / (x.cos() * x.cos()), -1.2..1.2),
        unary!(asin, f64::asin, |x| 1.0 / (1.0 - x * x).sqrt(), -0.95..0.95),
        unary!(
            acos,
            f64::acos,
            |x| -1.0 / (1.0 - x * x).sqrt(),
            -0.95..0.95
        ),
        unary!(atan, f64::atan, |x| 1.0 / (1.0 + x * x), -3.0..3.0),
        unary!(sinh, f64::sinh, |x| x.cosh(), -3.0..3.0),
        unary!(cosh, f64::cosh, |x| x.sinh(), -3.0..3.0),
        unary!(tanh, f64::tanh, |x| 1.0 / (x.cosh() * x.cosh()), -3.0..3.0),
        unary!(asinh, f64::asinh, |x| 1.0 / (x * x + 1.0).sqrt(), -3.0..3.0),
        unary!(acosh, f64::acosh, |x| 1.0 / (x * x - 1.0).sqrt(), 1.1..5.0),
        unary!(atanh, f64::atanh, |x| 1.0 / (1.0 - x * x), -0.9..0.9),
        with_kinks(
            d(
                "abs",
                1,
                |a| abs(&a[0]),
                |x| x[0].abs(),
                |x| {
                    vec![if x[0] > 0.0 {
                        1.0
                    } else if x[0] < 0.0 {
                        -1.0
                    } else {
                        0.0
                    }]
                },
                |r| vec![u(r, -3.0, 3.0)],
            ),
            &[&[0.0]],
        ),
        with_kinks(
            d(
                "sign",
                1,
                |a| sign(&a[0]),
                |x| x[0].signum(),
                |_| vec![0.0],
                |r| vec![signed(r, 1e-2, 3.0)],
            ),
            &[&[0.0]],
        ),
        between_integers("floor", |a| floor(&a[0]), |x| x[0].floor(), |_| vec![0.0]),
        between_integers("ceil", |a| ceil(&a[0]), |x| x[0].ceil(), |_| vec![0.0]),
        d(
            "round",
            1,
            |a| round(&a[0]),
            |x| x[0].round_ties_even(),
            |_| vec![0.0],
            |r| vec![away(r, -3.0, 3.0, 0.5, 1e-3)],
        ),
        between_integers("trunc", |a| trunc(&a[0]), |x| x[0].trunc(), |_| vec![0.0]),
        between_integers(
            "fract",
            |a| fract(&a[0]),
            |x| x[0] - x[0].floor(),
            |_| vec![1.0],
        ),
        with_kinks(
            unary!(
                saturate,
                |x| x.clamp(0.0, 1.0),
                |x| if x > 0.0 && x < 1.0 { 1.0 } else { 0.0 },
                -0.5..1.5
            ),
            &[&[0.0], &[1.0]],
        ),
        unary!(radians, f64::to_radians, |_| PI / 180.0, -180.0..180.0),
        unary!(degrees, f64::to_degrees, |_| 180.0 / PI, -3.0..3.0),
        Case {
            fd_step: 0.2,
            tol: 1e-2,
            ..d(
                "quantize_to_f16",
                1,
                |a| quantize_to_f16(&a[0]),
                |x| f16_round(x[0]),
                |_| vec![1.0],
                |r| vec![u(r, 0.5, 2.0)],
            )
        },
        between_integers(
            "modf_fract",
            |a| modf(&a[0]).fract(),
            |x| x[0] - x[0].trunc(),
            |_| vec![1.0],
        ),
        between_integers(
            "modf_whole",
            |a| modf(&a[0]).whole() * &a[0],
            |x| x[0].trunc() * x[0],
            |x| vec![x[0].trunc()],
        ),
        d(
            "frexp_fract",
            1,
            |a| frexp(&a[0]).fract(),
            |x| x[0] / 2f64.powi(frexp_exp(x[0])),
            |x| vec![1.0 / 2f64.powi(frexp_exp(x[0]))],
            // away from powers of two, where the exponent steps
            |r| loop {
                let x = signed(r, 0.1, 10.0);
                let l = x.abs().log2();
                if (l - l.round()).abs() > 1e-3 {
                    return vec![x];
                }
            },
        ),
        unary(
            "ldexp",
            |a| ldexp(a, 3i32) + ldexp(a, -2i32),
            |x| x * 8.0 + x * 0.25,
            |_| 8.25,
            -3.0..3.0,
        ),
        // ---- two and three arguments ----
        extremum("max", |a| max(&a[0], &a[1]), f64::max, |a, b| a > b),
        extremum("min", |a| min(&a[0], &a[1]), f64::min, |a, b| a < b),
        // ReLU: max(x, 0) passes 0 at x = 0.
        with_kinks(
            unary(
                "relu",
                |a| max(a, 0.0f32),
                |x| x.max(0.0),
                |x| if x > 0.0 { 1.0 } else { 0.0 },
                -2.0..2.0,
            ),
            &[&[0.0]],
        ),
        with_kinks(
            d(
                "clamp",
                3,
                |a| clamp(&a[0], &a[1], &a[2]),
                |x| x[0].max(x[1]).min(x[2]),
                |x| {
                    if x[0] >= x[2] {
                        vec![0.0, 0.0, 1.0]
                    } else if x[0] <= x[1] {
                        vec![0.0, 1.0, 0.0]
                    } else {
                        vec![1.0, 0.0, 0.0]
                    }
                },
                |r| vec![u(r, -2.0, 2.0), u(r, -1.0, 0.0), u(r, 0.1, 1.0)],
            ),
            &[&[-0.5, -0.5, 0.5], &[0.5, -0.5, 0.5]],
        ),
        d(
            "pow",
            2,
            |a| pow(&a[0], &a[1]),
            |x| x[0].powf(x[1]),
            |x| vec![x[1] * x[0].powf(x[1] - 1.0), x[0].powf(x[1]) * x[0].ln()],
            |r| vec![u(r, 0.2, 3.0), u(r, -2.0, 2.0)],
        ),
        d(
            "atan2",
            2,
            |a| atan2(&a[0], &a[1]),
            |x| x[0].atan2(x[1]),
            |x| {
                let r = x[0] * x[0] + x[1] * x[1];
                vec![x[1] / r, -x[0] / r]
            },
            |r| loop {
                let (y, x) = (u(r, -2.0, 2.0), u(r, -2.0, 2.0));
                // away from the origin and from the cut along the negative x axis
                if y * y + x * x > 0.09 && !(x < 0.0 && y.abs() < 1e-3) {
                    return vec![y, x];
                }
            },
        ),
        d(
            "step",
            2,
            |a| step(&a[0], &a[1]) * &a[1],
            |x| if x[0] <= x[1] { x[1] } else { 0.0 },
            |x| vec![0.0, if x[0] <= x[1] { 1.0 } else { 0.0 }],
            |r| loop {
                let (e, x) = (u(r, -2.0, 2.0), u(r, -2.0, 2.0));
                if (e - x).abs() > 1e-3 {
                    return vec![e, x];
                }
            },
        ),
        d(
            "mix",
            3,
            |a| mix(&a[0], &a[1], &a[2]),
            |x| x[0] * (1.0 - x[2]) + x[1] * x[2],
            |x| vec![1.0 - x[2], x[2], x[1] - x[0]],
            |r| vec![u(r, -2.0, 2.0), u(r, -2.0, 2.0), u(r, -0.5, 1.5)],
        ),
        d(
            "smoothstep",
            3,
            |a| smoothstep(&a[0], &a[1], &a[2]),
            |x| {
                let t = ((x[2] - x[0]) / (x[1] - x[0])).clamp(0.0, 1.0);
                t * t * (3.0 - 2.0 * t)
            },
            |x| {
                let (lo, hi, e) = (x[0], x[1], x[2]);
                let t = (e - lo) / (hi - lo);
                if t <= 0.0 || t >= 1.0 {
                    return vec![0.0; 3];
                }
                // dy/dt = 6 t (1 - t); dt/dlo = (e - hi) / (hi - lo)^2,
                // dt/dhi = -(e - lo) / (hi - lo)^2, dt/de = 1 / (hi - lo).
                let dy = 6.0 * t * (1.0 - t);
                let w2 = (hi - lo) * (hi - lo);
                vec![dy * (e - hi) / w2, -dy * (e - lo) / w2, dy / (hi - lo)]
            },
            |r| loop {
                let (lo, hi, e) = (u(r, -1.0, 0.0), u(r, 0.5, 1.5), u(r, -1.5, 2.0));
                let t = (e - lo) / (hi - lo);
                if t.abs() > 1e-3 && (t - 1.0).abs() > 1e-3 {
                    return vec![lo, hi, e];
                }
            },
        ),
        d(
            "fma",
            3,
            |a| fma(&a[0], &a[1], &a[2]),
            |x| x[0] * x[1] + x[2],
            |x| vec![x[1], x[0], 1.0],
            |r| vec![u(r, -2.0, 2.0), u(r, -2.0, 2.0), u(r, -2.0, 2.0)],
        ),
        d(
            "select",
            2,
            |a| select(&a[0] * &a[0], &a[1] * 3.0f32, a[0].gt(0.0f32)),
            |x| if x[0] > 0.0 { 3.0 * x[1] } else { x[0] * x[0] },
            |x| {
                if x[0] > 0.0 {
                    vec![0.0, 3.0]
                } else {
                    vec![2.0 * x[0], 0.0]
                }
            },
            |r| vec![signed(r, 1e-3, 2.0), u(r, -2.0, 2.0)],
        ),
        // ---- vectors, through vec3(..) of the scalars and a dot with constant weights ----
        d(
            "dot",
            6,
            |a| dot(v3(a, 0), v3(a, 3)),
            |x| dot3(x3(x, 0), x3(x, 3)),
            |x| [&x[3..6], &x[0..3]].concat(),
            |r| (0..6).map(|_| u(r, -2.0, 2.0)).collect(),
        ),
        with_kinks(
            d(
                "length",
                3,
                |a| length(v3(a, 0)),
                |x| norm(x3(x, 0)),
                |x| {
                    let n = norm(x3(x, 0));
                    if n == 0.0 {
                        vec![0.0; 3]
                    } else {
                        scale(x3(x, 0), 1.0 / n).to_vec()
                    }
                },
                |r| (0..3).map(|_| u(r, -2.0, 2.0)).collect(),
            ),
            &[&[0.0, 0.0, 0.0]],
        ),
        d(
            "length_scalar",
            1,
            |a| length(&a[0]),
            |x| x[0].abs(),
            |x| vec![x[0].signum()],
            |r| vec![signed(r, 1e-2, 2.0)],
        ),
        d(
            "distance",
            6,
            |a| distance(v3(a, 0), v3(a, 3)),
            |x| norm(add(x3(x, 0), scale(x3(x, 3), -1.0))),
            |x| {
                let dv = add(x3(x, 0), scale(x3(x, 3), -1.0));
                let g = scale(dv, 1.0 / norm(dv));
                [g.to_vec(), scale(g, -1.0).to_vec()].concat()
            },
            |r| (0..6).map(|_| u(r, -2.0, 2.0)).collect(),
        ),
        d(
            "normalize",
            3,
            |a| dot(w(), normalize(v3(a, 0))),
            |x| dot3(W, scale(x3(x, 0), 1.0 / norm(x3(x, 0)))),
            |x| {
                // d(v/|v|)^T W = (W - n (n.W)) / |v|
                let v = x3(x, 0);
                let l = norm(v);
                let n = scale(v, 1.0 / l);
                scale(add(W, scale(n, -dot3(n, W))), 1.0 / l).to_vec()
            },
            |r| loop {
                let v: Vec<f64> = (0..3).map(|_| u(r, -2.0, 2.0)).collect();
                if norm(x3(&v, 0)) > 0.3 {
                    return v;
                }
            },
        ),
        d(
            "cross",
            6,
            |a| dot(w(), cross(v3(a, 0), v3(a, 3))),
            |x| dot3(W, cross64(x3(x, 0), x3(x, 3))),
            // W.(a x b) = a.(b x W) = b.(W x a)
            |x| [cross64(x3(x, 3), W).to_vec(), cross64(W, x3(x, 0)).to_vec()].concat(),
            |r| (0..6).map(|_| u(r, -2.0, 2.0)).collect(),
        ),
        d(
            "reflect",
            6,
            |a| dot(w(), reflect(v3(a, 0), v3(a, 3))),
            |x| {
                let (i, n) = (x3(x, 0), x3(x, 3));
                dot3(W, add(i, scale(n, -2.0 * dot3(n, i))))
            },
            |x| {
                let (i, n) = (x3(x, 0), x3(x, 3));
                let gi = add(W, scale(n, -2.0 * dot3(n, W)));
                let gn = add(scale(W, -2.0 * dot3(n, i)), scale(i, -2.0 * dot3(n, W)));
                [gi.to_vec(), gn.to_vec()].concat()
            },
            |r| (0..6).map(|_| u(r, -2.0, 2.0)).collect(),
        ),
        d(
            "refract",
            7,
            |a| dot(w(), refract(v3(a, 0), v3(a, 3), &a[6])),
            |x| dot3(W, refract64(x3(x, 0), x3(x, 3), x[6])),
            refract_grad,
            |r| loop {
                let mut v: Vec<f64> = (0..6).map(|_| u(r, -1.0, 1.0)).collect();
                v.push(u(r, 0.3, 1.5));
                let (i, n, eta) = (x3(&v, 0), x3(&v, 3), v[6]);
                let d = dot3(n, i);
                if 1.0 - eta * eta * (1.0 - d * d) > 0.05 {
                    return v;
                }
            },
        ),
        d(
            "face_forward",
            9,
            |a| dot(w(), face_forward(v3(a, 0), v3(a, 3), v3(a, 6))),
            |x| {
                let s = if dot3(x3(x, 3), x3(x, 6)) < 0.0 {
                    1.0
                } else {
                    -1.0
                };
                s * dot3(W, x3(x, 0))
            },
            |x| {
                let s = if dot3(x3(x, 3), x3(x, 6)) < 0.0 {
                    1.0
                } else {
                    -1.0
                };
                [scale(W, s).to_vec(), vec![0.0; 6]].concat()
            },
            |r| loop {
                let v: Vec<f64> = (0..9).map(|_| u(r, -2.0, 2.0)).collect();
                if dot3(x3(&v, 3), x3(&v, 6)).abs() > 1e-2 {
                    return v;
                }
            },
        ),
        // componentwise built-ins on vectors, swizzles, splats, dynamic components
        d(
            "vector_exp_max",
            3,
            |a| {
                dot(
                    w(),
                    exp(v3(a, 0)) + max(v3(a, 0), Exp::<Vec3<f32>>::splat(0.25f32)),
                )
            },
            |x| dot3(W, x3(x, 0).map(|c| c.exp() + c.max(0.25))),
            |x| {
                (0..3)
                    .map(|j| W[j] * (x[j].exp() + if x[j] > 0.25 { 1.0 } else { 0.0 }))
                    .collect()
            },
            |r| (0..3).map(|_| away(r, -2.0, 2.0, 0.25, 1e-3)).collect(),
        ),
        d(
            "swizzle_splat_index",
            3,
            |a| {
                let v = v3(a, 0);
                let s = v.xy();
                dot(s, vec2(0.5f32, -1.5f32))
                    + dot(w(), Exp::<Vec3<f32>>::splat(&a[2] * &a[2]))
                    + v.index(lit(1u32)) * v.index(lit(2i32))
            },
            |x| 0.5 * x[0] - 1.5 * x[1] + (W[0] + W[1] + W[2]) * x[2] * x[2] + x[1] * x[2],
            |x| vec![0.5, -1.5 + x[2], 2.0 * (W[0] + W[1] + W[2]) * x[2] + x[1]],
            |r| (0..3).map(|_| u(r, -2.0, 2.0)).collect(),
        ),
        d(
            "vector_scalar_broadcast",
            4,
            |a| dot(w(), v3(a, 0) * &a[3] + &a[3] / v3(a, 0)),
            |x| dot3(W, x3(x, 0).map(|c| c * x[3] + x[3] / c)),
            |x| {
                let mut g: Vec<f64> = (0..3)
                    .map(|j| W[j] * (x[3] - x[3] / (x[j] * x[j])))
                    .collect();
                g.push((0..3).map(|j| W[j] * (x[j] + 1.0 / x[j])).sum());
                g
            },
            |r| {
                vec![
                    signed(r, 0.5, 2.0),
                    signed(r, 0.5, 2.0),
                    signed(r, 0.5, 2.0),
                    u(r, -2.0, 2.0),
                ]
            },
        ),
        d(
            "constant_matrix",
            3,
            |a| {
                let m = mat([
                    vec3(1.0f32, 2.0f32, 0.5f32),
                    vec3(-1.0f32, 0.0f32, 3.0f32),
                    vec3(0.25f32, -2.0f32, 1.0f32),
                ]);
                dot(w(), &m * v3(a, 0)) + dot(v3(a, 0) * &m, w())
            },
            |x| {
                // columns c_j; m v = sum_j v_j c_j; (v m)_j = v . c_j
                let c = [[1.0, 2.0, 0.5], [-1.0, 0.0, 3.0], [0.25, -2.0, 1.0]];
                let v = x3(x, 0);
                let mv = (0..3).fold([0.0; 3], |acc, j| add(acc, scale(c[j], v[j])));
                let vm = [dot3(v, c[0]), dot3(v, c[1]), dot3(v, c[2])];
                dot3(W, mv) + dot3(vm, W)
            },
            |_| {
                let c = [[1.0, 2.0, 0.5], [-1.0, 0.0, 3.0], [0.25, -2.0, 1.0]];
                (0..3)
                    .map(|j| dot3(c[j], W) + (0..3).map(|i| c[i][j] * W[i]).sum::<f64>())
                    .collect()
            },
            |r| (0..3).map(|_| u(r, -2.0, 2.0)).collect(),
        ),
    ]
}

/// The kernel of a case: for invocation `i < n`, `a_j = x[i * arity + j]`, the gradient of
/// `y = dsl(a)` into `grad[i * arity + j]`, and its tangent along `t[i * arity ..]` into
/// `jvp[i]`.
fn kernel(case: &Case) -> KernelBuilder {
    let arity = case.arity as u32;
    let mut k = KernelBuilder::new(format!("d_{}", case.name), [64, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let t = k.storage::<RuntimeArray<f32>, ReadOnly>("t");
    let grad = k.storage::<RuntimeArray<f32>, ReadWrite>("grad");
    let jvp_out = k.storage::<RuntimeArray<f32>, ReadWrite>("jvp");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.lt(jvp_out.len()), |k| {
        let a: Vec<Exp<f32>> = (0..arity)
            .map(|j| k.let_(&format!("a{j}"), x.at(&i * arity + j).load()))
            .collect();
        let y = (case.dsl)(&a);
        let vars: Vec<&Exp<f32>> = a.iter().collect();
        let g = k.grad(&y, vars.as_slice());
        for (j, gj) in g.iter().enumerate() {
            k.store(&grad.at(&i * arity + j as u32), gj);
        }
        let tangents: Vec<_> = (0..arity)
            .map(|j| tangent(&a[j as usize], t.at(&i * arity + j).load()))
            .collect();
        let dy = k.jvp(&y, tangents);
        k.store(&jvp_out.at(&i), dy);
    });
    k
}

fn check_case(case: &Case, executors: &[On]) -> Vec<String> {
    let mut rng = StdRng::seed_from_u64(0x5eed ^ (case.name.len() as u64 * 7919));
    // Samples: random ones, then each kink and its neighbours.
    let mut points: Vec<(Vec<f64>, bool)> =
        (0..61).map(|_| ((case.domain)(&mut rng), false)).collect();
    for kink in case.kinks {
        points.push((kink.to_vec(), true));
        // The first coordinate breaks the tie in every kink here (moving another, such as
        // `hi` of `clamp(e, lo, hi)` at `e = lo`, stays at the kink).
        for s in [-1e-3, 1e-3] {
            let mut p = kink.to_vec();
            p[0] = f64::from((p[0] + s) as f32);
            points.push((p, false));
        }
    }
    let n = points.len();
    let arity = case.arity;
    let xs: Vec<f32> = points
        .iter()
        .flat_map(|(p, _)| p.iter().map(|&v| v as f32))
        .collect();
    let ts: Vec<f32> = (0..n * arity)
        .map(|_| rng.random_range(-1.0f32..1.0))
        .collect();
    let shader = kernel(case)
        .build()
        .unwrap_or_else(|e| panic!("{}: {e}", case.name));
    let mut failures = Vec::new();
    for &ex in executors {
        let out = run(
            ex,
            &shader,
            &[&xs, &ts],
            &[n * arity, n],
            [n.div_ceil(64) as u32, 1, 1],
        );
        let (grad, jvp) = (&out[0], &out[1]);
        for (p, (x, at_kink)) in points.iter().enumerate() {
            let closed = (case.grad)(x);
            let mut directional = 0.0;
            for j in 0..arity {
                let got = f64::from(grad[p * arity + j]);
                let want = closed[j];
                directional += f64::from(ts[p * arity + j]) * want;
                if !close(got, want, case.tol) {
                    failures.push(format!(
                        "{} ({ex:?}): d/dx{j} at {x:?} is {got}, closed form {want}",
                        case.name
                    ));
                }
                if !at_kink {
                    let fd = central_difference(&case.f, x, j, case.fd_step);
                    if !close(got, fd, case.tol.max(1e-4)) {
                        failures.push(format!(
                            "{} ({ex:?}): d/dx{j} at {x:?} is {got}, central difference {fd}",
                            case.name
                        ));
                    }
                }
            }
            let got = f64::from(jvp[p]);
            if !close(got, directional, case.tol * arity as f64) {
                failures.push(format!(
                    "{} ({ex:?}): jvp at {x:?} is {got}, closed form {directional}",
                    case.name
                ));
            }
        }
    }
    failures
}

/// Every case on `executor`, all failures reported at once.
fn every_builtin_on(executor: On) {
    let failures: Vec<String> = cases()
        .iter()
        .flat_map(|c| check_case(c, &[executor]))
        .collect();
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_builtin_against_central_differences_and_closed_forms_on_the_interpreter() {
    every_builtin_on(On::Interpreter);
}

#[test]
fn every_builtin_against_central_differences_and_closed_forms_on_the_gpu() {
    every_builtin_on(On::Gpu);
}

/// The closed forms here are checked against central differences too (in f64, away from
/// kinks), so that a wrong closed form cannot agree with a wrong rule.
#[test]
fn the_closed_forms_agree_with_central_differences() {
    for case in cases() {
        let mut rng = StdRng::seed_from_u64(17);
        for _ in 0..50 {
            let x = (case.domain)(&mut rng);
            let closed = (case.grad)(&x);
            for (j, c) in closed.iter().enumerate() {
                let fd = central_difference(&case.f, &x, j, case.fd_step);
                assert!(
                    close(*c, fd, case.tol.max(1e-6)),
                    "{}: d/dx{j} at {x:?}: closed form {c}, central difference {fd}",
                    case.name
                );
            }
        }
    }
}
