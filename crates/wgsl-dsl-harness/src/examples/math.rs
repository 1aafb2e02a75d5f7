//! Elementwise examples: arithmetic and the numeric built-in families.

use wgsl_dsl::prelude::*;
use wgsl_dsl::types::Scalar;

use super::support::{
    Element, WG, case_1d, case_f32, case_f32_inputs, invocation_below, store_row,
};
use crate::{Data, Example, random_f32, random_i32, random_u32};

/// Elementwise kernel scaffold: `inputs` read-only `array<I>`s, one read-write `array<O>`
/// output `out` with `per` values per element; `body` gets the input values at `i` and
/// returns the outputs.
fn map<I: Scalar, O: Scalar>(
    name: &str,
    inputs: &[&str],
    per: u32,
    body: impl FnOnce(&mut KernelBuilder, Vec<Exp<I>>) -> Vec<Exp<O>>,
) -> KernelBuilder {
    let mut k = KernelBuilder::new(name, [WG, 1, 1]);
    let ins: Vec<_> = inputs
        .iter()
        .map(|n| k.storage::<RuntimeArray<I>, ReadOnly>(n))
        .collect();
    let out = k.storage::<RuntimeArray<O>, ReadWrite>("out");
    let i = invocation_below(&mut k, ins[0].len());
    let vals = ins.iter().map(|b| b.at(&i).load()).collect();
    let outs = body(&mut k, vals);
    store_row(&mut k, &out, &i, per, outs);
    k
}

/// [`map`] on `f32` inputs and outputs.
fn map_f32(
    name: &str,
    inputs: &[&str],
    per: u32,
    body: impl FnOnce(&mut KernelBuilder, Vec<Exp<f32>>) -> Vec<Exp<f32>>,
) -> KernelBuilder {
    map(name, inputs, per, body)
}

/// The reference of a [`map`] kernel: the input bindings' `I` values, the last binding's `per`
/// `O` values per element, computed by `f` from the element's inputs.
fn reference_map<I: Element, O: Element>(
    bufs: &mut [Data],
    per: usize,
    f: impl Fn(&[I]) -> Vec<O>,
) {
    let (ins, out) = bufs.split_at_mut(bufs.len() - 1);
    let ins: Vec<Vec<I>> = ins.iter_mut().map(|d| I::of(d).clone()).collect();
    let out = O::of(&mut out[0]);
    for i in 0..ins[0].len() {
        let args: Vec<I> = ins.iter().map(|v| v[i]).collect();
        let r = f(&args);
        out[i * per..(i + 1) * per].copy_from_slice(&r);
    }
}

/// [`reference_map`] on `f32` inputs and outputs.
fn reference_f32(bufs: &mut [Data], per: usize, f: impl Fn(&[f32]) -> Vec<f32>) {
    reference_map(bufs, per, f);
}

/// [`reference_f32`] computed in `f64`: `f` gets the inputs widened, its results are rounded
/// to `f32`.
fn reference_f64<R: IntoIterator<Item = f64>>(
    bufs: &mut [Data],
    per: usize,
    f: impl Fn(&[f64]) -> R,
) {
    reference_f32(bufs, per, |v| {
        let wide: Vec<f64> = v.iter().map(|&x| f64::from(x)).collect();
        f(&wide).into_iter().map(|r| r as f32).collect()
    });
}

fn saxpy() -> KernelBuilder {
    let mut k = KernelBuilder::new("saxpy", [WG, 1, 1]);
    let a = k.uniform::<f32>("a");
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let i = invocation_below(&mut k, y.len());
    k.store(&y.at(&i), fma(a.load(), x.at(&i).load(), y.at(&i).load()));
    k
}

fn activations() -> KernelBuilder {
    map_f32("activations", &["x"], 5, |_, v| {
        let x = &v[0];
        vec![
            max(x, 0.0),
            clamp(x, -0.5, 0.5),
            saturate(x),
            step(0.25, x),
            min(x, 0.1),
        ]
    })
}

fn transcendental() -> KernelBuilder {
    map_f32("transcendental", &["x"], 7, |_, v| {
        let x = &v[0];
        vec![
            exp(x),
            exp2(x),
            log(x),
            log2(x),
            pow(x, 1.5),
            sqrt(x),
            inverse_sqrt(x),
        ]
    })
}

fn trigonometry() -> KernelBuilder {
    map_f32("trigonometry", &["x"], 13, |_, v| {
        let x = &v[0];
        vec![
            sin(x),
            cos(x),
            tan(x),
            asin(x),
            acos(x),
            atan(x),
            atan2(x, 0.5),
            sinh(x),
            cosh(x),
            tanh(x),
            asinh(x),
            acosh(x + 2.0),
            atanh(x),
        ]
    })
}

fn rounding() -> KernelBuilder {
    map_f32("rounding", &["x"], 7, |_, v| {
        let x = &v[0];
        vec![
            floor(x),
            ceil(x),
            round(x),
            trunc(x),
            fract(x),
            sign(x),
            abs(x),
        ]
    })
}

fn interpolation() -> KernelBuilder {
    map_f32("interpolation", &["a", "b", "t"], 3, |_, v| {
        let (a, b, t) = (&v[0], &v[1], &v[2]);
        let ab = vec2(a, b);
        let mixed = mix(ab.clone(), Exp::<Vec2<f32>>::splat(2.0f32), Exp::splat(t));
        vec![
            mix(a, b, t),
            smoothstep(0.2, 0.8, t),
            (mixed * 0.5f32).y() - ab.x(),
        ]
    })
}

fn vector_geometry() -> KernelBuilder {
    map_f32(
        "vector_geometry",
        &["ax", "ay", "az", "bx", "by", "bz"],
        9,
        |k, v| {
            let a = k.let_("a", vec3(&v[0], &v[1], &v[2]));
            let b = k.let_("b", vec3(&v[3], &v[4], &v[5]));
            let n = normalize(a.clone());
            let c = k.let_("c", cross(a.clone(), b.clone()));
            vec![
                dot(a.clone(), b.clone()),
                length(a.clone()),
                distance(a.clone(), b),
                n.x(),
                n.y(),
                n.z(),
                c.x(),
                c.y(),
                c.z(),
            ]
        },
    )
}

fn matrix_transform() -> KernelBuilder {
    map_f32("matrix_transform", &["x", "y"], 4, |k, v| {
        let (x, y) = (&v[0], &v[1]);
        // A rotation-and-scale matrix built from the inputs, columns first.
        let m = k.let_("m", mat([vec2(x, y), vec2(-y.clone(), x.clone())]));
        let p = k.let_("p", vec2(1.0f32, 2.0f32));
        let q = m.clone() * p.clone();
        let r = transpose(m) * p;
        vec![q.x(), q.y(), r.x(), r.y()]
    })
}

fn integer_arith() -> KernelBuilder {
    map::<i32, i32>("integer_arith", &["a", "b"], 7, |k, v| {
        let x = k.let_("x", v[0].clone());
        let y = k.let_("y", v[1].clone());
        vec![
            &x / &y,
            &x % &y,
            -x.clone(),
            abs(&x),
            min(&x, &y),
            max(&x, &y),
            &x * 3i32 - 7i32,
        ]
    })
}

/// The defined alternatives of issue 12 §3: `square` and `powi` on bases of either sign
/// (floats, integers, vectors), and the saturating float-to-integer conversions on every kind
/// of `f32` (NaN, infinities, -0.0, the range's edges), read as bits so that no NaN is in an
/// `f32` binding.
fn defined_math() -> KernelBuilder {
    let mut k = KernelBuilder::new("defined_math", [WG, 1, 1]);
    let xs = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let ks = k.storage::<RuntimeArray<i32>, ReadOnly>("k");
    let bits = k.storage::<RuntimeArray<u32>, ReadOnly>("y_bits");
    let out_f = k.storage::<RuntimeArray<f32>, ReadWrite>("out_f");
    let out_i = k.storage::<RuntimeArray<i32>, ReadWrite>("out_i");
    let out_u = k.storage::<RuntimeArray<u32>, ReadWrite>("out_u");
    let i = invocation_below(&mut k, xs.len());
    let x = k.let_("x", xs.at(&i).load());
    let n = k.let_("n", ks.at(&i).load());
    let y = k.let_("y", bits.at(&i).load().bitcast::<f32>());
    let v = k.let_("v", powi(vec2(&x, -x.clone()), 5));
    let floats = [
        square(&x),
        powi(&x, 0),
        powi(&x, 1),
        powi(&x, 3),
        powi(&x, 10),
        v.x(),
        v.y(),
        powi(Exp::<Vec3<f32>>::splat(&x), 0).z(),
    ];
    store_row(&mut k, &out_f, &i, 8, floats);
    let ints = [square(&n), powi(&n, 3), powi(&n, 13), y.to_i32_saturating()];
    store_row(&mut k, &out_i, &i, 4, ints);
    let uints = [powi(n.bitcast::<u32>(), 5), y.to_u32_saturating()];
    store_row(&mut k, &out_u, &i, 2, uints);
    k
}

fn bit_ops() -> KernelBuilder {
    map::<u32, u32>("bit_ops", &["a", "b"], 14, |k, v| {
        let x = k.let_("x", v[0].clone());
        let y = k.let_("y", v[1].clone());
        let s = k.let_("s", &y & 31u32);
        vec![
            &x & &y,
            &x | &y,
            &x ^ &y,
            x.clone() << s.clone(),
            x.clone() >> s,
            !x.clone(),
            count_one_bits(&x),
            count_leading_zeros(&x),
            count_trailing_zeros(&x),
            first_leading_bit(&x),
            first_trailing_bit(&x),
            reverse_bits(&x),
            extract_bits(&x, 3u32, 7u32),
            insert_bits(&x, &y, 5u32, 9u32),
        ]
    })
}

fn conversions() -> KernelBuilder {
    let mut k = KernelBuilder::new("conversions", [WG, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let u = k.storage::<RuntimeArray<u32>, ReadOnly>("u");
    let ints = k.storage::<RuntimeArray<i32>, ReadWrite>("ints");
    let uints = k.storage::<RuntimeArray<u32>, ReadWrite>("uints");
    let floats = k.storage::<RuntimeArray<f32>, ReadWrite>("floats");
    let i = invocation_below(&mut k, x.len());
    let v = k.let_("v", x.at(&i).load());
    k.store(&ints.at(&i), v.to_i32());
    k.store(&uints.at(&i * 2u32), abs(&v).to_u32());
    k.store(&uints.at(&i * 2u32 + 1u32), v.bitcast::<u32>());
    k.store(&floats.at(&i * 2u32), u.at(&i).load().to_f32());
    k.store(
        &floats.at(&i * 2u32 + 1u32),
        u.at(&i).load().bitcast::<f32>(),
    );
    k
}

fn logic_select() -> KernelBuilder {
    map::<f32, u32>("logic_select", &["a", "b"], 9, |k, v| {
        let x = k.let_("x", v[0].clone());
        let y = k.let_("y", v[1].clone());
        let pos = vec2(&x, &y).gt(Exp::<Vec2<f32>>::splat(0.0f32));
        let conds = [
            x.gt(0.0).and(y.gt(0.0)),
            x.gt(0.0).or(y.gt(0.0)),
            x.gt(0.0).not(),
            pos.any(),
            pos.all(),
            x.lt(&y),
            x.le(&y).and(x.ne(&y)),
            x.eq(&x),
        ];
        let smaller = select(abs(&y).to_u32(), abs(&x).to_u32(), x.lt(&y));
        let mut outs: Vec<_> = conds.map(|c| c.select(1u32, 0u32)).to_vec();
        outs.push(smaller);
        outs
    })
}

pub(super) fn examples() -> Vec<Example> {
    vec![
        Example {
            name: "saxpy",
            build: saxpy,
            case: |rng| {
                let n = 1001;
                case_1d(
                    n,
                    vec![
                        Data::F32(vec![1.75]),
                        Data::F32(random_f32(rng, n, -4.0, 4.0)),
                        Data::F32(random_f32(rng, n, -4.0, 4.0)),
                    ],
                )
            },
            reference: |b| {
                let a = b[0].f32()[0];
                let x = b[1].f32().clone();
                for (y, x) in b[2].f32().iter_mut().zip(x) {
                    *y = a.mul_add(x, *y);
                }
            },
            tolerance: 1e-6,
            needs_subgroups: false,
        },
        Example {
            name: "activations",
            build: activations,
            case: |rng| case_f32(rng, 1, 5, -2.0, 2.0),
            reference: |b| {
                reference_f32(b, 5, |v| {
                    let x = v[0];
                    vec![
                        x.max(0.0),
                        x.clamp(-0.5, 0.5),
                        x.clamp(0.0, 1.0),
                        if 0.25 <= x { 1.0 } else { 0.0 },
                        x.min(0.1),
                    ]
                })
            },
            tolerance: 0.0,
            needs_subgroups: false,
        },
        Example {
            name: "transcendental",
            build: transcendental,
            case: |rng| case_f32(rng, 1, 7, 0.1, 4.0),
            reference: |b| {
                reference_f64(b, 7, |v| {
                    let x = v[0];
                    [
                        x.exp(),
                        x.exp2(),
                        x.ln(),
                        x.log2(),
                        x.powf(1.5),
                        x.sqrt(),
                        1.0 / x.sqrt(),
                    ]
                })
            },
            tolerance: 1e-4,
            needs_subgroups: false,
        },
        Example {
            name: "trigonometry",
            build: trigonometry,
            case: |rng| case_f32(rng, 1, 13, -0.9, 0.9),
            reference: |b| {
                reference_f64(b, 13, |v| {
                    let x = v[0];
                    [
                        x.sin(),
                        x.cos(),
                        x.tan(),
                        x.asin(),
                        x.acos(),
                        x.atan(),
                        x.atan2(0.5),
                        x.sinh(),
                        x.cosh(),
                        x.tanh(),
                        x.asinh(),
                        (x + 2.0).acosh(),
                        x.atanh(),
                    ]
                })
            },
            // WGSL allows 4096 ULP for atan/atan2, and asin/acos inherit atan2's error
            // (WGSL spec §15.5.1 "Floating Point Accuracy"); lavapipe's asin is off by ~3e-4.
            tolerance: 5e-4,
            needs_subgroups: false,
        },
        Example {
            name: "rounding",
            build: rounding,
            case: |rng| case_f32(rng, 1, 7, -10.0, 10.0),
            reference: |b| {
                reference_f32(b, 7, |v| {
                    let x = v[0];
                    let sign = if x > 0.0 {
                        1.0
                    } else if x < 0.0 {
                        -1.0
                    } else {
                        0.0
                    };
                    vec![
                        x.floor(),
                        x.ceil(),
                        x.round_ties_even(),
                        x.trunc(),
                        x - x.floor(),
                        sign,
                        x.abs(),
                    ]
                })
            },
            tolerance: 1e-6,
            needs_subgroups: false,
        },
        Example {
            name: "interpolation",
            build: interpolation,
            case: |rng| case_f32(rng, 3, 3, 0.0, 1.0),
            reference: |b| {
                reference_f64(b, 3, |v| {
                    let (a, bb, t) = (v[0], v[1], v[2]);
                    let s = ((t - 0.2) / 0.6).clamp(0.0, 1.0);
                    let mixed_y = bb * (1.0 - t) + 2.0 * t;
                    [
                        a * (1.0 - t) + bb * t,
                        s * s * (3.0 - 2.0 * s),
                        mixed_y * 0.5 - a,
                    ]
                })
            },
            tolerance: 1e-5,
            needs_subgroups: false,
        },
        Example {
            name: "vector_geometry",
            build: vector_geometry,
            case: |rng| case_f32(rng, 6, 9, -3.0, 3.0),
            reference: |b| {
                reference_f64(b, 9, |v| {
                    let (a, bb) = (&v[0..3], &v[3..6]);
                    let dot = a[0] * bb[0] + a[1] * bb[1] + a[2] * bb[2];
                    let len = (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt();
                    let d: Vec<f64> = (0..3).map(|j| a[j] - bb[j]).collect();
                    let dist = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
                    [
                        dot,
                        len,
                        dist,
                        a[0] / len,
                        a[1] / len,
                        a[2] / len,
                        a[1] * bb[2] - a[2] * bb[1],
                        a[2] * bb[0] - a[0] * bb[2],
                        a[0] * bb[1] - a[1] * bb[0],
                    ]
                })
            },
            tolerance: 1e-5,
            needs_subgroups: false,
        },
        Example {
            name: "matrix_transform",
            build: matrix_transform,
            case: |rng| case_f32(rng, 2, 4, -2.0, 2.0),
            reference: |b| {
                reference_f64(b, 4, |v| {
                    let (x, y) = (v[0], v[1]);
                    // m = [[x, y], [-y, x]] as columns; m * (1, 2) and transpose(m) * (1, 2).
                    let q = [x - 2.0 * y, y + 2.0 * x];
                    let r = [x + 2.0 * y, -y + 2.0 * x];
                    [q[0], q[1], r[0], r[1]]
                })
            },
            tolerance: 1e-6,
            needs_subgroups: false,
        },
        Example {
            name: "integer_arith",
            build: integer_arith,
            case: |rng| {
                let n = 999;
                let b = random_i32(rng, n, -50, 50)
                    .into_iter()
                    .map(|v| if v == 0 { 7 } else { v })
                    .collect();
                case_1d(
                    n,
                    vec![
                        Data::I32(random_i32(rng, n, -100_000, 100_000)),
                        Data::I32(b),
                        Data::poisoned_i32(n * 7),
                    ],
                )
            },
            reference: |bufs| {
                reference_map(bufs, 7, |v: &[i32]| {
                    let (x, y) = (v[0], v[1]);
                    // WGSL integer division truncates toward zero, like Rust's.
                    vec![x / y, x % y, -x, x.abs(), x.min(y), x.max(y), x * 3 - 7]
                })
            },
            tolerance: 0.0,
            needs_subgroups: false,
        },
        Example {
            name: "defined_math",
            build: defined_math,
            case: |rng| {
                let n = 389;
                // Every kind of f32 the conversions must handle, then random values around
                // and beyond the ranges of i32 and u32.
                let special: [u32; 20] = [
                    f32::NAN.to_bits(),
                    0xffc0_0000, // -NaN
                    0x7f80_0001, // a signalling NaN's bits
                    f32::INFINITY.to_bits(),
                    f32::NEG_INFINITY.to_bits(),
                    0.0f32.to_bits(),
                    (-0.0f32).to_bits(),
                    0.75f32.to_bits(),
                    (-0.75f32).to_bits(),
                    2147483520.0f32.to_bits(),
                    2147483648.0f32.to_bits(),
                    (-2147483648.0f32).to_bits(),
                    (-2147483904.0f32).to_bits(),
                    4294967040.0f32.to_bits(),
                    4294967296.0f32.to_bits(),
                    1e20f32.to_bits(),
                    (-1e20f32).to_bits(),
                    f32::MAX.to_bits(),
                    f32::MIN_POSITIVE.to_bits(),
                    1u32, // the smallest subnormal
                ];
                let y = random_f32(rng, n, -6.0e9, 6.0e9)
                    .into_iter()
                    .enumerate()
                    .map(|(i, v)| special.get(i).copied().unwrap_or(v.to_bits()))
                    .collect();
                case_1d(
                    n,
                    vec![
                        Data::F32(random_f32(rng, n, -3.0, 3.0)),
                        Data::I32(random_i32(rng, n, -100_000, 100_000)),
                        Data::U32(y),
                        Data::poisoned_f32(n * 8),
                        Data::poisoned_i32(n * 4),
                        Data::poisoned_u32(n * 2),
                    ],
                )
            },
            reference: |bufs| {
                let x = bufs[0].f32().clone();
                let k = bufs[1].i32().clone();
                let y = bufs[2].u32().clone();
                for i in 0..x.len() {
                    let p = |e: f64, n: i32| (e.powi(n)) as f32;
                    let e = f64::from(x[i]);
                    let f = [
                        p(e, 2),
                        1.0,
                        x[i],
                        p(e, 3),
                        p(e, 10),
                        p(e, 5),
                        p(-e, 5),
                        1.0,
                    ];
                    bufs[3].f32()[i * 8..i * 8 + 8].copy_from_slice(&f);
                    // Rust's `as` from a float saturates and maps NaN to 0.
                    let yf = f32::from_bits(y[i]);
                    let n = k[i];
                    let ints = [
                        n.wrapping_mul(n),
                        n.wrapping_pow(3),
                        n.wrapping_pow(13),
                        yf as i32,
                    ];
                    bufs[4].i32()[i * 4..i * 4 + 4].copy_from_slice(&ints);
                    let uints = [(n as u32).wrapping_pow(5), yf as u32];
                    bufs[5].u32()[i * 2..i * 2 + 2].copy_from_slice(&uints);
                }
            },
            tolerance: 1e-6,
            needs_subgroups: false,
        },
        Example {
            name: "bit_ops",
            build: bit_ops,
            case: |rng| {
                let n = 1003;
                let mut a = random_u32(rng, n, u32::MAX);
                a[0] = 0;
                a[1] = u32::MAX;
                case_1d(
                    n,
                    vec![
                        Data::U32(a),
                        Data::U32(random_u32(rng, n, u32::MAX)),
                        Data::poisoned_u32(n * 14),
                    ],
                )
            },
            reference: |bufs| {
                reference_map(bufs, 14, |v: &[u32]| {
                    let (x, y) = (v[0], v[1]);
                    let s = y & 31;
                    let first_leading = if x == 0 {
                        u32::MAX
                    } else {
                        31 - x.leading_zeros()
                    };
                    let first_trailing = if x == 0 { u32::MAX } else { x.trailing_zeros() };
                    let mask = ((1u32 << 9) - 1) << 5;
                    vec![
                        x & y,
                        x | y,
                        x ^ y,
                        x << s,
                        x >> s,
                        !x,
                        x.count_ones(),
                        x.leading_zeros(),
                        x.trailing_zeros(),
                        first_leading,
                        first_trailing,
                        x.reverse_bits(),
                        (x >> 3) & ((1 << 7) - 1),
                        (x & !mask) | ((y << 5) & mask),
                    ]
                })
            },
            tolerance: 0.0,
            needs_subgroups: false,
        },
        Example {
            name: "conversions",
            build: conversions,
            case: |rng| {
                let n = 777;
                case_1d(
                    n,
                    vec![
                        Data::F32(random_f32(rng, n, -2.0e9, 2.0e9)),
                        Data::U32(random_u32(rng, n, u32::MAX)),
                        Data::poisoned_i32(n),
                        Data::poisoned_u32(2 * n),
                        Data::poisoned_f32(2 * n),
                    ],
                )
            },
            reference: |bufs| {
                let x = bufs[0].f32().clone();
                let u = bufs[1].u32().clone();
                for i in 0..x.len() {
                    // In range, WGSL's f32 -> i32/u32 conversion truncates toward zero.
                    bufs[2].i32()[i] = x[i] as i32;
                    bufs[3].u32()[2 * i] = x[i].abs() as u32;
                    bufs[3].u32()[2 * i + 1] = x[i].to_bits();
                    bufs[4].f32()[2 * i] = u[i] as f32;
                    bufs[4].f32()[2 * i + 1] = f32::from_bits(u[i]);
                }
            },
            tolerance: 0.0,
            needs_subgroups: false,
        },
        Example {
            name: "logic_select",
            build: logic_select,
            case: |rng| case_f32_inputs(rng, 2, -100.0, 100.0, |n| Data::poisoned_u32(n * 9)),
            reference: |bufs| {
                reference_map(bufs, 9, |v: &[f32]| {
                    let (x, y) = (v[0], v[1]);
                    // Spelled as the kernel spells them; the inputs are never NaN.
                    #[allow(clippy::neg_cmp_op_on_partial_ord, clippy::eq_op)]
                    let c = [
                        x > 0.0 && y > 0.0,
                        x > 0.0 || y > 0.0,
                        !(x > 0.0),
                        x > 0.0 || y > 0.0,
                        x > 0.0 && y > 0.0,
                        x < y,
                        x < y,
                        x == x,
                    ];
                    let mut r: Vec<u32> = c.map(u32::from).to_vec();
                    // In range, f32 -> u32 truncates toward zero.
                    r.push(if x < y {
                        x.abs() as u32
                    } else {
                        y.abs() as u32
                    });
                    r
                })
            },
            tolerance: 0.0,
            needs_subgroups: false,
        },
    ]
}
