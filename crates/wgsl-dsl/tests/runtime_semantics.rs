//! WGSL semantics that differ from Rust's, pinned with values computed on the GPU (Mesa lavapipe
//! in CI) and compared with the WGSL spec's rules, implemented below in Rust.
//!
//! Operands come from storage buffers, so no compiler can fold them; sizes are odd (not
//! multiples of the workgroup size); outputs are poisoned before each run.

use bytemuck::Pod;
use rand::{Rng, SeedableRng, rngs::StdRng};
use wgsl_dsl::prelude::*;
use wgsl_dsl::runtime::GpuBuffer;
use wgsl_dsl::types::Constructible;

mod common;
use common::{compiled_on, gpu};

const POISON_I32: i32 = 0xDEAD_BEEFu32 as i32;
const POISON_U32: u32 = 0xDEAD_BEEF;

/// `out[i] = op(a[i], b[i])` on the GPU for every `i`, with `out` poisoned first.
fn binary<A, B, O>(
    name: &str,
    a: &[A],
    b: &[B],
    poison: O,
    op: impl FnOnce(Exp<A>, Exp<B>) -> Exp<O>,
) -> Vec<O>
where
    A: Pod + Constructible,
    B: Pod + Constructible,
    O: Pod + Constructible,
{
    assert_eq!(a.len(), b.len());
    let gpu = gpu();
    let mut k = KernelBuilder::new(name, [64, 1, 1]);
    let ab = k.storage::<RuntimeArray<A>, ReadOnly>("a");
    let bb = k.storage::<RuntimeArray<B>, ReadOnly>("b");
    let out = k.storage::<RuntimeArray<O>, ReadWrite>("out");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.lt(out.len()), |k| {
        let x = k.let_("x", ab.at(&i).load());
        let y = k.let_("y", bb.at(&i).load());
        k.store(&out.at(&i), op(x, y));
    });
    let kernel = compiled_on(gpu, &k);
    let a_buf = GpuBuffer::from_slice(gpu, a).unwrap();
    let b_buf = GpuBuffer::from_slice(gpu, b).unwrap();
    let out_buf = GpuBuffer::from_slice(gpu, &vec![poison; a.len()]).unwrap();
    let groups = kernel.workgroups_for([a.len() as u32, 1, 1]);
    gpu.dispatch(&kernel, &[&a_buf, &b_buf, &out_buf], groups)
        .expect("dispatch");
    out_buf.read(gpu).expect("read back")
}

/// Operand pairs: the edge cases the spec names, then random ones of both signs, some with a
/// zero divisor. 45 pairs in all.
fn i32_pairs(rng: &mut StdRng) -> (Vec<i32>, Vec<i32>) {
    let mut pairs = vec![
        (i32::MIN, -1),
        (i32::MIN, 1),
        (i32::MIN, 0),
        (i32::MAX, -1),
        (i32::MAX, 0),
        (7, 0),
        (-7, 0),
        (0, 0),
        (-7, 2),
        (7, -2),
        (-7, -2),
        (-1, 2),
        (i32::MIN, 3),
    ];
    while pairs.len() < 45 {
        let a = if rng.random_bool(0.5) {
            rng.random::<i32>()
        } else {
            rng.random_range(-100..=100)
        };
        pairs.push((a, rng.random_range(-9..=9)));
    }
    pairs.into_iter().unzip()
}

/// WGSL spec §8.7 "Arithmetic Expressions", `e1 / e2` on a concrete signed integer type:
/// `e1` when `e2` is zero or when `e1` is the most negative value and `e2` is -1; otherwise
/// the quotient truncated toward zero (computed in i64, where it cannot overflow).
fn wgsl_div_i32(e1: i32, e2: i32) -> i32 {
    if e2 == 0 || (e1 == i32::MIN && e2 == -1) {
        e1
    } else {
        let q = i64::from(e1) / i64::from(e2);
        i32::try_from(q).expect("in range outside the special cases")
    }
}

/// WGSL spec §8.7, `e1 % e2` on a concrete signed integer type: 0 when `e2` is zero or when
/// `e1` is the most negative value and `e2` is -1; otherwise `e1 - trunc(e1 / e2) * e2`
/// (the remainder has the sign of `e1`).
fn wgsl_rem_i32(e1: i32, e2: i32) -> i32 {
    if e2 == 0 || (e1 == i32::MIN && e2 == -1) {
        0
    } else {
        let (a, b) = (i64::from(e1), i64::from(e2));
        i32::try_from(a - (a / b) * b).expect("|remainder| < |e2|")
    }
}

#[test]
fn signed_division_truncates_and_division_by_zero_yields_e1() {
    let mut rng = StdRng::seed_from_u64(1);
    let (a, b) = i32_pairs(&mut rng);
    let q = binary("i32_div", &a, &b, POISON_I32, |x, y| x / y);
    for ((&e1, &e2), &got) in a.iter().zip(&b).zip(&q) {
        assert_eq!(got, wgsl_div_i32(e1, e2), "{e1} / {e2}");
    }
    // The cases where WGSL differs from Rust (which panics) are present and hold.
    assert!(a.iter().zip(&b).any(|(&x, &y)| x == i32::MIN && y == -1));
    assert!(b.contains(&0));
}

#[test]
fn signed_remainder_has_the_sign_of_e1_and_by_zero_is_zero() {
    let mut rng = StdRng::seed_from_u64(2);
    let (a, b) = i32_pairs(&mut rng);
    let r = binary("i32_rem", &a, &b, POISON_I32, |x, y| x % y);
    for ((&e1, &e2), &got) in a.iter().zip(&b).zip(&r) {
        assert_eq!(got, wgsl_rem_i32(e1, e2), "{e1} % {e2}");
    }
}

#[test]
fn unsigned_division_and_remainder_by_zero() {
    let mut rng = StdRng::seed_from_u64(3);
    let n = 37;
    let a: Vec<u32> = (0..n).map(|_| rng.random()).collect();
    // About a third of the divisors are zero.
    let b: Vec<u32> = (0..n)
        .map(|_| {
            if rng.random_bool(0.33) {
                0
            } else {
                rng.random_range(1..50)
            }
        })
        .collect();
    let q = binary("u32_div", &a, &b, POISON_U32, |x, y| x / y);
    let r = binary("u32_rem", &a, &b, POISON_U32, |x, y| x % y);
    for i in 0..n {
        // WGSL §8.7: for e2 == 0, `e1 / e2` is e1 and `e1 % e2` is 0.
        let (want_q, want_r) = match a[i].checked_div(b[i]) {
            None => (a[i], 0),
            Some(q) => (q, a[i] - q * b[i]),
        };
        assert_eq!((q[i], r[i]), (want_q, want_r), "{} / {}", a[i], b[i]);
    }
    assert!(b.contains(&0));
}

#[test]
fn signed_overflow_wraps() {
    let mut rng = StdRng::seed_from_u64(4);
    let n = 45;
    let mut a: Vec<i32> = (0..n).map(|_| rng.random()).collect();
    let mut b: Vec<i32> = (0..n).map(|_| rng.random()).collect();
    a[0] = i32::MAX;
    b[0] = 1;
    a[1] = i32::MIN;
    b[1] = -1;
    let sum = binary("i32_add", &a, &b, POISON_I32, |x, y| x + y);
    let product = binary("i32_mul", &a, &b, POISON_I32, |x, y| x * y);
    for i in 0..n {
        // WGSL §8.7: concrete integer arithmetic is modulo 2^32 (two's complement).
        let wrap = |v: i64| (v.rem_euclid(1 << 32) as u32) as i32;
        let (x, y) = (i64::from(a[i]), i64::from(b[i]));
        assert_eq!(sum[i], wrap(x + y), "{x} + {y}");
        assert_eq!(product[i], wrap(x * y), "{x} * {y}");
    }
}

#[test]
fn float_remainder_truncates_toward_zero() {
    let mut rng = StdRng::seed_from_u64(5);
    let mut pairs: Vec<(f32, f32)> = vec![(-7.5, 2.0), (7.5, -2.0), (-7.5, -2.0), (-0.5, 3.0)];
    while pairs.len() < 61 {
        let a: f32 = rng.random_range(-100.0..100.0);
        let b: f32 = rng.random_range(-10.0..10.0);
        let q = f64::from(a) / f64::from(b);
        // Skip quotients near an integer, where `trunc` may go either way within the
        // precision WGSL allows for `/`.
        let frac = q.abs().fract();
        if b.abs() > 0.1 && frac > 1e-3 && frac < 1.0 - 1e-3 {
            pairs.push((a, b));
        }
    }
    let (a, b): (Vec<f32>, Vec<f32>) = pairs.into_iter().unzip();
    let r = binary("f32_rem", &a, &b, f32::NAN, |x, y| x % y);
    for i in 0..a.len() {
        // WGSL §8.7: for floats, `e1 % e2` is `e1 - e2 * trunc(e1 / e2)`.
        let (e1, e2) = (f64::from(a[i]), f64::from(b[i]));
        let want = e1 - e2 * (e1 / e2).trunc();
        let tol = 1e-5 * e1.abs().max(1.0);
        assert!(
            (f64::from(r[i]) - want).abs() <= tol,
            "{e1} % {e2}: got {}, want {want}",
            r[i]
        );
        // Truncated, not floored: the result has the sign of e1 (GLSL's mod() would not).
        assert!(r[i] == 0.0 || r[i].signum() == a[i].signum(), "{e1} % {e2}");
    }
}

/// WGSL §8.9 "Bit Expressions": when the shift amount is not a const-expression, only its
/// low 5 bits (for 32-bit types) are used: `e1 << (e2 & 31)`.
fn shift_amounts(rng: &mut StdRng, n: usize) -> Vec<u32> {
    let mut s = vec![0, 1, 31, 32, 33, 63, 64, 100, u32::MAX];
    while s.len() < n {
        s.push(rng.random_range(0..200));
    }
    s
}

#[test]
fn shifts_use_the_low_five_bits_of_the_amount() {
    let mut rng = StdRng::seed_from_u64(6);
    let n = 37;
    let s = shift_amounts(&mut rng, n);
    let u: Vec<u32> = (0..n).map(|_| rng.random()).collect();
    let v: Vec<i32> = (0..n).map(|_| rng.random()).collect();
    let ushl = binary("u32_shl", &u, &s, POISON_U32, |x, y| x << y);
    let ushr = binary("u32_shr", &u, &s, POISON_U32, |x, y| x >> y);
    let ishl = binary("i32_shl", &v, &s, POISON_I32, |x, y| x << y);
    let ishr = binary("i32_shr", &v, &s, POISON_I32, |x, y| x >> y);
    for i in 0..n {
        let k = s[i] % 32;
        // Bits shifted out are lost; `>>` is logical for u32 and arithmetic (copies the
        // sign bit) for i32, i.e. floor division by 2^k.
        let shl = |x: u32| ((u64::from(x) << k) & 0xFFFF_FFFF) as u32;
        assert_eq!(ushl[i], shl(u[i]), "{} << {}", u[i], s[i]);
        assert_eq!(ushr[i], u[i] / (1u32 << k), "{} >> {}", u[i], s[i]);
        assert_eq!(ishl[i], shl(v[i] as u32) as i32, "{} << {}", v[i], s[i]);
        let floor_div = i64::from(v[i]).div_euclid(1i64 << k);
        assert_eq!(i64::from(ishr[i]), floor_div, "{} >> {}", v[i], s[i]);
    }
}

#[test]
fn out_of_range_reads_and_writes_do_not_crash_or_leak() {
    // WGSL §14.5.2 (robust buffer access): an out-of-bounds read returns the value of some
    // in-bounds element or zero; an out-of-bounds write is discarded or lands in bounds of
    // the same buffer. Neither may touch another buffer.
    let gpu = gpu();
    let mut rng = StdRng::seed_from_u64(7);
    let (n, m, small_len) = (37usize, 45usize, 5usize);
    let x: Vec<f32> = (0..n).map(|_| rng.random_range(1.0..2.0)).collect();
    let mut idx: Vec<u32> = vec![n as u32, n as u32 + 1, 1000, 1 << 31, u32::MAX];
    while idx.len() < m {
        idx.push(if rng.random_bool(0.5) {
            rng.random_range(0..n as u32)
        } else {
            rng.random()
        });
    }

    let mut k = KernelBuilder::new("out_of_range", [64, 1, 1]);
    let xb = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let ib = k.storage::<RuntimeArray<u32>, ReadOnly>("idx");
    let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
    let twice = k.storage::<RuntimeArray<f32>, ReadWrite>("twice");
    let small = k.storage::<RuntimeArray<f32>, ReadWrite>("small");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.lt(out.len()), |k| {
        let j = k.let_("j", ib.at(&i).load());
        k.store(&out.at(&i), xb.at(&j).load());
        k.store(&twice.at(&i), i.to_f32() * 2.0);
        k.store(&small.at(&j), 1.0f32);
    });
    let kernel = compiled_on(gpu, &k);
    let x_buf = GpuBuffer::from_slice(gpu, &x).unwrap();
    let idx_buf = GpuBuffer::from_slice(gpu, &idx).unwrap();
    let out_buf = GpuBuffer::from_slice(gpu, &vec![f32::NAN; m]).unwrap();
    let twice_buf = GpuBuffer::from_slice(gpu, &vec![f32::NAN; m]).unwrap();
    let small_buf = GpuBuffer::from_slice(gpu, &vec![-1.0f32; small_len]).unwrap();
    // Allocated after `small`: an unchecked write past `small` could land here.
    let guard: Vec<f32> = (0..n).map(|_| rng.random_range(-2.0..-1.0)).collect();
    let guard_buf = GpuBuffer::from_slice(gpu, &guard).unwrap();
    gpu.dispatch(
        &kernel,
        &[&x_buf, &idx_buf, &out_buf, &twice_buf, &small_buf],
        kernel.workgroups_for([m as u32, 1, 1]),
    )
    .unwrap();

    let out = out_buf.read(gpu).unwrap();
    for (i, (&j, &v)) in idx.iter().zip(&out).enumerate() {
        if (j as usize) < n {
            assert_eq!(v, x[j as usize], "in-range read x[{j}] at {i}");
        } else {
            assert!(v == 0.0 || x.contains(&v), "x[{j}] gave {v}");
        }
    }
    let twice = twice_buf.read(gpu).unwrap();
    for (i, &v) in twice.iter().enumerate() {
        assert_eq!(v, i as f32 * 2.0);
    }
    let small = small_buf.read(gpu).unwrap();
    for (s, &v) in small.iter().enumerate() {
        let written = idx.contains(&(s as u32));
        assert!(
            v == 1.0 || (!written && v == -1.0),
            "small[{s}] = {v} (written: {written})"
        );
    }
    assert_eq!(guard_buf.read(gpu).unwrap(), guard);
}
