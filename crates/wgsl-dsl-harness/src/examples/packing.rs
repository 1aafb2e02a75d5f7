//! Examples of the built-ins on packed data, on the parts of floating-point numbers and on
//! vector geometry (WGSL spec §17.5 "Numeric Built-in Functions", §17.9 "Data Packing
//! Built-in Functions", §17.10 "Data Unpacking Built-in Functions"), each against a CPU
//! reference written from the spec's definition.

use wgsl_dsl::prelude::*;

use rand::Rng as _;

use super::support::{WG, case_1d, invocation_below, store_row};
use crate::{Case, Data, Example, Rng, random_f32, random_i32, random_u32};

/// Outputs of `packing` per element: 9 packs and 2 packed dot products (`u32`), 14 unpacked
/// floats, 8 unpacked integers.
const PACK_U: usize = 11;
const PACK_F: usize = 14;
const PACK_I: usize = 8;

/// Inputs per element: `f` 4 floats in `[-1.5, 1.5)`, `w` 2 words, `c` 4 integers in
/// `[-300, 300)`. Outputs: `u` (packs, dot products, unpack4xU8), `f_out` (unpacks), `i_out`
/// (unpack4xI8; dot4I8Packed).
fn packing() -> KernelBuilder {
    let mut k = KernelBuilder::new("packing", [WG, 1, 1]);
    let f = k.storage::<RuntimeArray<f32>, ReadOnly>("f");
    let w = k.storage::<RuntimeArray<u32>, ReadOnly>("w");
    let c = k.storage::<RuntimeArray<i32>, ReadOnly>("c");
    let u_out = k.storage::<RuntimeArray<u32>, ReadWrite>("u_out");
    let f_out = k.storage::<RuntimeArray<f32>, ReadWrite>("f_out");
    let i_out = k.storage::<RuntimeArray<i32>, ReadWrite>("i_out");
    let i = invocation_below(&mut k, w.len() / 2u32);
    let fv = k.let_(
        "fv",
        vec4(
            f.at(&i * 4u32).load(),
            f.at(&i * 4u32 + 1u32).load(),
            f.at(&i * 4u32 + 2u32).load(),
            f.at(&i * 4u32 + 3u32).load(),
        ),
    );
    let cv = k.let_(
        "cv",
        vec4(
            c.at(&i * 4u32).load(),
            c.at(&i * 4u32 + 1u32).load(),
            c.at(&i * 4u32 + 2u32).load(),
            c.at(&i * 4u32 + 3u32).load(),
        ),
    );
    let w0 = k.let_("w0", w.at(&i * 2u32).load());
    let w1 = k.let_("w1", w.at(&i * 2u32 + 1u32).load());
    let f2 = vec2(fv.x(), fv.y());
    // |c| as u32 (the same bits: abs of a value above i32::MIN).
    let cu = k.let_("cu", abs(&cv).bitcast::<Vec4<u32>>());
    let words = [
        pack4x8snorm(&fv),
        pack4x8unorm(&fv),
        pack2x16snorm(&f2),
        pack2x16unorm(&f2),
        pack2x16float(&f2),
        pack4x_i8(&cv),
        pack4x_u8(&cu),
        pack4x_i8_clamp(&cv),
        pack4x_u8_clamp(&cu),
        dot4_i8_packed(&w0, &w1).bitcast::<u32>(),
        dot4_u8_packed(&w0, &w1),
    ];
    store_row(&mut k, &u_out, &i, PACK_U as u32, words);
    let s8 = k.let_("s8", unpack4x8snorm(&w0));
    let u8 = k.let_("u8", unpack4x8unorm(&w0));
    let s16 = k.let_("s16", unpack2x16snorm(&w0));
    let u16 = k.let_("u16", unpack2x16unorm(&w0));
    let h16 = k.let_("h16", unpack2x16float(&w1));
    let floats = [
        s8.x(),
        s8.y(),
        s8.z(),
        s8.w(),
        u8.x(),
        u8.y(),
        u8.z(),
        u8.w(),
        s16.x(),
        s16.y(),
        u16.x(),
        u16.y(),
        h16.x(),
        h16.y(),
    ];
    store_row(&mut k, &f_out, &i, PACK_F as u32, floats);
    let si = k.let_("si", unpack4x_i8(&w0));
    let ui = k.let_("ui", unpack4x_u8(&w1));
    let ints = [
        si.x(),
        si.y(),
        si.z(),
        si.w(),
        ui.x().bitcast::<i32>(),
        ui.y().bitcast::<i32>(),
        ui.z().bitcast::<i32>(),
        ui.w().bitcast::<i32>(),
    ];
    store_row(&mut k, &i_out, &i, PACK_I as u32, ints);
    k
}

/// Bytes of a word, byte `i` from bits `8i..8i+8`.
fn bytes(w: u32) -> [u32; 4] {
    [0, 1, 2, 3].map(|i| (w >> (8 * i)) & 0xff)
}

/// 16-bit halves of a word.
fn halves(w: u32) -> [u32; 2] {
    [w & 0xffff, w >> 16]
}

fn pack_bytes(b: [u32; 4]) -> u32 {
    b.iter()
        .enumerate()
        .fold(0, |acc, (i, &b)| acc | ((b & 0xff) << (8 * i)))
}

fn pack_halves(h: [u32; 2]) -> u32 {
    (h[0] & 0xffff) | (h[1] << 16)
}

/// The spec's `floor(0.5 + scale * clamp(x, lo, 1))` as the integer it converts to.
fn norm(x: f32, lo: f32, scale: f32) -> u32 {
    (0.5 + scale * x.clamp(lo, 1.0)).floor() as i32 as u32
}

fn packing_reference(bufs: &mut [Data]) {
    let f = bufs[0].f32().clone();
    let w = bufs[1].u32().clone();
    let c = bufs[2].i32().clone();
    for i in 0..w.len() / 2 {
        let fv = [f[4 * i], f[4 * i + 1], f[4 * i + 2], f[4 * i + 3]];
        let cv = [c[4 * i], c[4 * i + 1], c[4 * i + 2], c[4 * i + 3]];
        let cu = cv.map(i32::unsigned_abs);
        let (w0, w1) = (w[2 * i], w[2 * i + 1]);
        let (b0, b1) = (bytes(w0), bytes(w1));
        let dot_i: i32 = (0..4)
            .map(|j| i32::from(b0[j] as u8 as i8) * i32::from(b1[j] as u8 as i8))
            .sum();
        let dot_u: u32 = (0..4).map(|j| b0[j] * b1[j]).sum();
        let words = [
            pack_bytes(fv.map(|x| norm(x, -1.0, 127.0))),
            pack_bytes(fv.map(|x| norm(x, 0.0, 255.0))),
            pack_halves([fv[0], fv[1]].map(|x| norm(x, -1.0, 32767.0))),
            pack_halves([fv[0], fv[1]].map(|x| norm(x, 0.0, 65535.0))),
            pack_halves([fv[0], fv[1]].map(|x| u32::from(half::f16::from_f32(x).to_bits()))),
            pack_bytes(cv.map(|x| x as u32)),
            pack_bytes(cu),
            pack_bytes(cv.map(|x| x.clamp(-128, 127) as u32)),
            pack_bytes(cu.map(|x| x.min(255))),
            dot_i as u32,
            dot_u,
        ];
        bufs[3].u32()[i * PACK_U..(i + 1) * PACK_U].copy_from_slice(&words);
        let s8 = b0.map(|b| (f32::from(b as u8 as i8) / 127.0).max(-1.0));
        let u8 = b0.map(|b| b as f32 / 255.0);
        let h = halves(w0);
        let s16 = h.map(|h| (f32::from(h as u16 as i16) / 32767.0).max(-1.0));
        let u16 = h.map(|h| h as f32 / 65535.0);
        let h16 = halves(w1).map(|h| half::f16::from_bits(h as u16).to_f32());
        let floats: Vec<f32> = [&s8[..], &u8, &s16, &u16, &h16].concat();
        bufs[4].f32()[i * PACK_F..(i + 1) * PACK_F].copy_from_slice(&floats);
        let si = b0.map(|b| i32::from(b as u8 as i8));
        let ui = bytes(w1).map(|b| b as i32);
        let ints: Vec<i32> = [&si[..], &ui].concat();
        bufs[5].i32()[i * PACK_I..(i + 1) * PACK_I].copy_from_slice(&ints);
    }
}

fn packing_case(rng: &mut Rng) -> Case {
    let n = 333;
    // Away from f16's subnormals, which an implementation may flush (WGSL spec §15.7.3), and
    // from the ties of the norm packs: the spec writes floor(0.5 + scale * x), implementations
    // round to nearest even, and `scale * x` rounded to f32 lands on a half often enough.
    let f = (0..4 * n)
        .map(|_| {
            loop {
                let x: f32 = rng.random_range(-1.5..1.5);
                let tie = [(127.0, -1.0), (255.0, 0.0), (32767.0, -1.0), (65535.0, 0.0)]
                    .iter()
                    .any(|&(scale, lo)| {
                        let v = scale * f64::from(x.clamp(lo, 1.0));
                        (v - v.floor() - 0.5).abs() < 0.01
                    });
                if x.abs() >= 1e-3 && !tie {
                    break x;
                }
            }
        })
        .collect();
    // w1's halves are finite normal f16 values (exponent field odd, at most 15): unpack2x16float.
    let w = random_u32(rng, 2 * n, u32::MAX)
        .into_iter()
        .enumerate()
        .map(|(j, x)| {
            if j % 2 == 1 {
                (x & 0xbfff_bfff) | 0x0400_0400
            } else {
                x
            }
        })
        .collect();
    case_1d(
        n,
        vec![
            Data::F32(f),
            Data::U32(w),
            Data::I32(random_i32(rng, 4 * n, -300, 300)),
            Data::poisoned_u32(n * PACK_U),
            Data::poisoned_f32(n * PACK_F),
            Data::poisoned_i32(n * PACK_I),
        ],
    )
}

/// Outputs of `float_parts` per element: 9 floats, 3 integers.
const PARTS_F: usize = 9;
const PARTS_I: usize = 3;

fn float_parts() -> KernelBuilder {
    let mut k = KernelBuilder::new("float_parts", [WG, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let e = k.storage::<RuntimeArray<i32>, ReadOnly>("e");
    let f_out = k.storage::<RuntimeArray<f32>, ReadWrite>("f_out");
    let i_out = k.storage::<RuntimeArray<i32>, ReadWrite>("i_out");
    let i = invocation_below(&mut k, x.len());
    let v = k.let_("v", x.at(&i).load());
    let m = k.let_("m", modf(&v));
    let fr = k.let_("fr", frexp(&v));
    let v2 = k.let_("v2", vec2(v.clone(), &v * 3.0f32));
    let m2 = k.let_("m2", modf(&v2));
    let fr2 = k.let_("fr2", frexp(&v2));
    let floats = [
        m.fract(),
        m.whole(),
        fr.fract(),
        ldexp(&v, e.at(&i).load()),
        ldexp(fr.fract(), fr.exp()),
        quantize_to_f16(&v),
        m2.fract().y(),
        m2.whole().y(),
        fr2.fract().y(),
    ];
    store_row(&mut k, &f_out, &i, PARTS_F as u32, floats);
    let ints = [fr.exp(), fr2.exp().x(), fr2.exp().y()];
    store_row(&mut k, &i_out, &i, PARTS_I as u32, ints);
    k
}

/// `frexp` of a normal `f32` or zero: the fraction in `[0.5, 1)` with `x`'s sign, the exponent.
fn frexp_ref(x: f32) -> (f32, i32) {
    if x == 0.0 {
        return (x, 0);
    }
    let bits = x.to_bits();
    let exp = ((bits >> 23) & 0xff) as i32 - 126;
    (f32::from_bits((bits & 0x807f_ffff) | (126 << 23)), exp)
}

fn float_parts_reference(bufs: &mut [Data]) {
    let x = bufs[0].f32().clone();
    let e = bufs[1].i32().clone();
    for i in 0..x.len() {
        let v = x[i];
        let (f, ex) = frexp_ref(v);
        let y = v * 3.0;
        let (fy, ey) = frexp_ref(y);
        // Both parts of modf have the argument's sign (-7 -> -0 and -7).
        let floats = [
            (v - v.trunc()).copysign(v),
            v.trunc(),
            f,
            v * 2f32.powi(e[i]),
            v,
            half::f16::from_f32(v).to_f32(),
            (y - y.trunc()).copysign(y),
            y.trunc(),
            fy,
        ];
        bufs[2].f32()[i * PARTS_F..(i + 1) * PARTS_F].copy_from_slice(&floats);
        bufs[3].i32()[i * PARTS_I..(i + 1) * PARTS_I].copy_from_slice(&[ex, ex, ey]);
    }
}

fn float_parts_case(rng: &mut Rng) -> Case {
    let n = 1001;
    // Values of either sign and magnitude between 2^-13 and 2^15 (inside f16's normal range,
    // for quantizeToF16; the large ones whole numbers), and a zero.
    let mut x: Vec<f32> = random_f32(rng, n, -13.0, 15.0)
        .into_iter()
        .zip(random_u32(rng, n, 2))
        .map(|(t, s)| {
            let sign = if s == 0 { -1.0 } else { 1.0 };
            sign * 2f32.powf(t)
        })
        .collect();
    x[0] = 0.0;
    x[1] = 3.0;
    x[2] = -7.0;
    case_1d(
        n,
        vec![
            Data::F32(x),
            Data::I32(random_i32(rng, n, -20, 21)),
            Data::poisoned_f32(n * PARTS_F),
            Data::poisoned_i32(n * PARTS_I),
        ],
    )
}

/// Outputs per element: faceForward, reflect, refract (3 each), determinants of a 2x2, 3x3
/// and 4x4 matrix.
const GEOMETRY_OUT: u32 = 12;

fn reflection() -> KernelBuilder {
    let mut k = KernelBuilder::new("reflection", [WG, 1, 1]);
    let v = k.storage::<RuntimeArray<f32>, ReadOnly>("v");
    let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
    let i = invocation_below(&mut k, v.len() / 7u32);
    let at = |j: u32| v.at(&i * 7u32 + j).load();
    let a = k.let_("a", vec3(at(0), at(1), at(2)));
    let n = k.let_("n", normalize(vec3(at(3), at(4), at(5))));
    let eta = k.let_("eta", at(6));
    let ff = k.let_("ff", face_forward(&a, &n, vec3(1.0f32, -0.5f32, 0.25f32)));
    let rl = k.let_("rl", reflect(&a, &n));
    let rr = k.let_("rr", refract(&a, &n, &eta));
    let m2 = mat([vec2(a.x(), a.y()), vec2(n.x(), n.y())]);
    let m3 = mat([a.clone(), n.clone(), rl.clone()]);
    let m4 = mat([
        vec4(a.x(), a.y(), a.z(), eta.clone()),
        vec4(n.x(), n.y(), n.z(), 1.0f32),
        vec4(1.0f32, 2.0f32, eta.clone(), a.x()),
        vec4(-1.0f32, n.z(), 0.5f32, a.y()),
    ]);
    let results = [
        ff.x(),
        ff.y(),
        ff.z(),
        rl.x(),
        rl.y(),
        rl.z(),
        rr.x(),
        rr.y(),
        rr.z(),
        determinant(m2),
        determinant(m3),
        determinant(m4),
    ];
    store_row(&mut k, &out, &i, GEOMETRY_OUT, results);
    k
}

fn dot3(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// Determinant by Laplace expansion along the first column; `m[c][r]`, columns first.
fn det(m: &[Vec<f64>]) -> f64 {
    let n = m.len();
    if n == 1 {
        return m[0][0];
    }
    (0..n)
        .map(|r| {
            let minor: Vec<Vec<f64>> = m[1..]
                .iter()
                .map(|col| (0..n).filter(|&rr| rr != r).map(|rr| col[rr]).collect())
                .collect();
            let sign = if r % 2 == 0 { 1.0 } else { -1.0 };
            sign * m[0][r] * det(&minor)
        })
        .sum()
}

fn reflection_reference(bufs: &mut [Data]) {
    let v = bufs[0].f32().clone();
    let out = bufs[1].f32();
    for i in 0..v.len() / 7 {
        let g = |j: usize| f64::from(v[7 * i + j]);
        let a = [g(0), g(1), g(2)];
        let len = dot3([g(3), g(4), g(5)], [g(3), g(4), g(5)]).sqrt();
        let n = [g(3) / len, g(4) / len, g(5) / len];
        let eta = g(6);
        // faceForward(e1, e2, e3) = e1 if dot(e2, e3) < 0 else -e1 (WGSL spec §17.5).
        let ff = if dot3(n, [1.0, -0.5, 0.25]) < 0.0 {
            a
        } else {
            a.map(|x| -x)
        };
        let dn = dot3(n, a);
        let rl = [0, 1, 2].map(|j| a[j] - 2.0 * dn * n[j]);
        let kk = 1.0 - eta * eta * (1.0 - dn * dn);
        let rr = if kk < 0.0 {
            [0.0; 3]
        } else {
            [0, 1, 2].map(|j| eta * a[j] - (eta * dn + kk.sqrt()) * n[j])
        };
        let d2 = det(&[vec![a[0], a[1]], vec![n[0], n[1]]]);
        let d3 = det(&[a.to_vec(), n.to_vec(), rl.to_vec()]);
        let d4 = det(&[
            vec![a[0], a[1], a[2], eta],
            vec![n[0], n[1], n[2], 1.0],
            vec![1.0, 2.0, eta, a[0]],
            vec![-1.0, n[2], 0.5, a[1]],
        ]);
        let r = [
            ff[0], ff[1], ff[2], rl[0], rl[1], rl[2], rr[0], rr[1], rr[2], d2, d3, d4,
        ];
        for (j, r) in r.into_iter().enumerate() {
            out[i * GEOMETRY_OUT as usize + j] = r as f32;
        }
    }
}

fn reflection_case(rng: &mut Rng) -> Case {
    let n = 257;
    let mut v = random_f32(rng, 7 * n, -2.0, 2.0);
    for i in 0..n {
        // A normal of length at least 0.5 (normalize is exact enough) and a ratio of
        // indices in [0.5, 2): both refraction and total internal reflection occur.
        if v[7 * i + 3].abs() < 0.5 {
            v[7 * i + 3] = 0.5_f32.copysign(v[7 * i + 3]);
        }
        v[7 * i + 6] = 0.5 + 0.375 * (v[7 * i + 6] + 2.0);
    }
    case_1d(
        n,
        vec![Data::F32(v), Data::poisoned_f32(n * GEOMETRY_OUT as usize)],
    )
}

pub(super) fn examples() -> Vec<Example> {
    vec![
        Example {
            name: "packing",
            build: packing,
            case: packing_case,
            reference: packing_reference,
            // The unpacked values are quotients (v / 127, v / 65535); the rest is exact.
            tolerance: 1e-6,
            needs_subgroups: false,
        },
        Example {
            name: "float_parts",
            build: float_parts,
            case: float_parts_case,
            reference: float_parts_reference,
            tolerance: 0.0,
            needs_subgroups: false,
        },
        Example {
            name: "reflection",
            build: reflection,
            case: reflection_case,
            reference: reflection_reference,
            // f32 evaluation of the dot products, square root and determinants (4x4: 24
            // products of magnitude up to ~16).
            tolerance: 1e-4,
            needs_subgroups: false,
        },
    ]
}
