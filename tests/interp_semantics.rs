//! Each WGSL rule of `wgsl_dsl::interp::semantics`, run as the same kernel on the interpreter
//! and on the GPU (lavapipe in CI), comparing bits (integers) or ulps (floats); and the
//! interpreter against the rule written out independently here. Each test cites the WGSL
//! spec sections it checks (numbers of the editors' draft, gpuweb/gpuweb `wgsl/index.bs` at
//! da251f9, 2026-08-19; anchors of <https://www.w3.org/TR/WGSL/> in parentheses). With
//! `WGSL_DSL_GPU=off` only the second comparison runs.
//!
//! Operands come from storage buffers (no constant folding), as `u32` bit patterns that the
//! kernel bitcasts, so one harness serves every type; outputs are poisoned first.

use rand::{Rng, SeedableRng, rngs::StdRng};
use wgsl_dsl::interp::{HostArg, HostBuffer, InterpOptions, Interpreter};
use wgsl_dsl::prelude::*;
use wgsl_dsl::runtime::{BindArg, GpuBuffer};
use wgsl_dsl_workspace_tests::gpu;

const POISON: u32 = 0xDEAD_BEEF;

/// A kernel body over `u32` bit patterns.
type Body = fn(&[Exp<u32>]) -> Exp<u32>;
/// The same operation on `i32`, written out.
type I32Rule = fn(i32, i32) -> i32;

/// `out[i] = body(in0[i], in1[i], ...)` over `u32` bit patterns, on the interpreter and, with
/// GPU tests on, on the GPU: `(interpreter, gpu)`.
fn run(
    name: &str,
    inputs: &[Vec<u32>],
    body: impl FnOnce(&[Exp<u32>]) -> Exp<u32>,
) -> (Vec<u32>, Option<Vec<u32>>) {
    run_with(name, inputs, InterpOptions::default(), |_, v| body(v))
}

fn run_with(
    name: &str,
    inputs: &[Vec<u32>],
    options: InterpOptions,
    body: impl FnOnce(&mut KernelBuilder, &[Exp<u32>]) -> Exp<u32>,
) -> (Vec<u32>, Option<Vec<u32>>) {
    let n = inputs[0].len();
    let mut k = KernelBuilder::new(format!("{name}_kernel"), [64, 1, 1]);
    let ins: Vec<_> = (0..inputs.len())
        .map(|j| k.storage::<RuntimeArray<u32>, ReadOnly>(&format!("in{j}")))
        .collect();
    let out = k.storage::<RuntimeArray<u32>, ReadWrite>("out");
    let i = k.let_("i", global_invocation_id().x());
    let compute = |k: &mut KernelBuilder| {
        let vals: Vec<Exp<u32>> = ins.iter().map(|b| k.let_("v", b.at(&i).load())).collect();
        let r = body(k, &vals);
        k.store(&out.at(&i), r);
    };
    if n.is_multiple_of(64) {
        // Whole workgroups: no guard, so subgroup operations are in uniform control flow.
        compute(&mut k);
    } else {
        k.if_(i.lt(out.len()), compute);
    }
    let gpu = gpu();
    let target = gpu.map(|g| g.target_limits()).unwrap_or_default();
    let shader = k.build_for(&target).expect("kernel builds");
    let groups = [(n as u32).div_ceil(64), 1, 1];

    let cpu = Interpreter::with_options(options);
    let program = cpu.compile(&shader).expect("interpreter compiles");
    let host_in: Vec<HostBuffer<u32>> = inputs.iter().map(|v| HostBuffer::from_slice(v)).collect();
    let host_out = HostBuffer::from_slice(&vec![POISON; n]);
    let mut args: Vec<&dyn HostArg> = host_in.iter().map(|b| b as &dyn HostArg).collect();
    args.push(&host_out);
    let report = cpu
        .dispatch(&program, &args, groups)
        .expect("interpreter runs");
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    let on_cpu = host_out.read();

    let on_gpu = gpu.map(|g| {
        let kernel = g.compile(&shader).expect("kernel compiles");
        let dev_in: Vec<GpuBuffer<u32>> = inputs
            .iter()
            .map(|v| GpuBuffer::from_slice(g, v).unwrap())
            .collect();
        let dev_out = GpuBuffer::from_slice(g, &vec![POISON; n]).unwrap();
        let mut args: Vec<&dyn BindArg> = dev_in.iter().map(|b| b as &dyn BindArg).collect();
        args.push(&dev_out);
        g.dispatch(&kernel, &args, groups).expect("dispatch");
        dev_out.read(g).expect("read back")
    });
    (on_cpu, on_gpu)
}

/// The interpreter and the GPU agree bit for bit.
fn same_bits(what: &str, inputs: &[Vec<u32>], (cpu, gpu): &(Vec<u32>, Option<Vec<u32>>)) {
    if let Some(gpu) = gpu {
        for (k, (c, g)) in cpu.iter().zip(gpu).enumerate() {
            let operands: Vec<String> = inputs.iter().map(|v| format!("{:#x}", v[k])).collect();
            assert_eq!(
                c,
                g,
                "{what}({}): interpreter {c:#x}, GPU {g:#x}",
                operands.join(", ")
            );
        }
    }
}

/// Distance in units in the last place (0 for two NaNs, and for -0.0 and 0.0).
fn ulps(a: f32, b: f32) -> u64 {
    if a.is_nan() && b.is_nan() {
        return 0;
    }
    let ordered = |x: f32| {
        let i = x.to_bits() as i32;
        i64::from(if i < 0 { i32::MIN.wrapping_sub(i) } else { i })
    };
    ordered(a).abs_diff(ordered(b))
}

/// The interpreter and the GPU agree within `max_ulps`, or within `abs` absolutely.
fn close(
    what: &str,
    inputs: &[Vec<u32>],
    (cpu, gpu): &(Vec<u32>, Option<Vec<u32>>),
    max_ulps: u64,
    abs: f32,
) {
    if let Some(gpu) = gpu {
        for (k, (&c, &g)) in cpu.iter().zip(gpu).enumerate() {
            let (c, g) = (f32::from_bits(c), f32::from_bits(g));
            let operands: Vec<f32> = inputs.iter().map(|v| f32::from_bits(v[k])).collect();
            assert!(
                ulps(c, g) <= max_ulps || (c - g).abs() <= abs,
                "{what}{operands:?}: interpreter {c:e}, GPU {g:e} ({} ulps)",
                ulps(c, g)
            );
        }
    }
}

fn rng() -> StdRng {
    StdRng::seed_from_u64(11)
}

/// Edge cases then random values: 67 in all (not a multiple of the workgroup size).
fn i32_operands(rng: &mut StdRng, edges: &[i32]) -> Vec<u32> {
    let mut v: Vec<u32> = edges.iter().map(|&x| x as u32).collect();
    while v.len() < 67 {
        let x: i32 = if rng.random_bool(0.5) {
            rng.random()
        } else {
            rng.random_range(-9..=9)
        };
        v.push(x as u32);
    }
    v
}

/// Normal (not subnormal) floats of both signs and mixed magnitudes.
fn f32_operands(rng: &mut StdRng, edges: &[f32], lo: f32, hi: f32) -> Vec<u32> {
    let mut v: Vec<u32> = edges.iter().map(|x| x.to_bits()).collect();
    while v.len() < 67 {
        let x: f32 = rng.random_range(lo..hi);
        v.push(x.to_bits());
    }
    v
}

fn as_f32(e: &Exp<u32>) -> Exp<f32> {
    e.bitcast::<f32>()
}
fn as_i32(e: &Exp<u32>) -> Exp<i32> {
    e.bitcast::<i32>()
}

// ---- §8.7 "Arithmetic Expressions" ----

/// §8.7 "Arithmetic Expressions" (#arithmetic-expr): `+`, `-`, `*` on `i32` wrap (two's
/// complement, the result modulo 2^32).
#[test]
fn integer_arithmetic_wraps() {
    let mut r = rng();
    let a = i32_operands(&mut r, &[i32::MAX, i32::MIN, -1, 0, 65536, i32::MAX]);
    let b = i32_operands(&mut r, &[1, -1, i32::MIN, 0, 65536, i32::MAX]);
    let ins = [a.clone(), b.clone()];
    let cases: [(&str, Body, I32Rule); 4] = [
        (
            "i32_add",
            |v| (as_i32(&v[0]) + as_i32(&v[1])).bitcast(),
            i32::wrapping_add,
        ),
        (
            "i32_sub",
            |v| (as_i32(&v[0]) - as_i32(&v[1])).bitcast(),
            i32::wrapping_sub,
        ),
        (
            "i32_mul",
            |v| (as_i32(&v[0]) * as_i32(&v[1])).bitcast(),
            i32::wrapping_mul,
        ),
        (
            "i32_neg_abs",
            |v| (-as_i32(&v[0]) + abs(as_i32(&v[1]))).bitcast(),
            |x, y| x.wrapping_neg().wrapping_add(y.wrapping_abs()),
        ),
    ];
    for (name, op, rule) in cases {
        let out = run(name, &ins, op);
        for (k, &got) in out.0.iter().enumerate() {
            assert_eq!(got as i32, rule(a[k] as i32, b[k] as i32), "{name} {k}");
        }
        same_bits(name, &ins, &out);
    }
    let out = run("u32_mul_add", &ins, |v| &v[0] * &v[1] + &v[0]);
    for (k, &got) in out.0.iter().enumerate() {
        assert_eq!(got, a[k].wrapping_mul(b[k]).wrapping_add(a[k]));
    }
    same_bits("u32_mul_add", &ins, &out);
}

/// §8.7 "Arithmetic Expressions" (#arithmetic-expr): `e1 / 0` is `e1`, `e1 % 0` is 0,
/// `i32::MIN / -1` is `i32::MIN` and `i32::MIN % -1` is 0; signed `%` takes the dividend's sign.
#[test]
fn integer_division_and_remainder_by_zero_and_overflow() {
    let mut r = rng();
    let a = i32_operands(&mut r, &[i32::MIN, i32::MIN, 7, -7, 0, 7, -7, -7, i32::MAX]);
    let b = i32_operands(&mut r, &[-1, 0, 0, 0, 0, -2, 2, -2, -1]);
    let ins = [a.clone(), b.clone()];
    // The rules, written independently of the interpreter (WGSL spec §8.7).
    let div = |x: i32, y: i32| {
        if y == 0 || (x == i32::MIN && y == -1) {
            x
        } else {
            x / y
        }
    };
    let rem = |x: i32, y: i32| {
        if y == 0 || (x == i32::MIN && y == -1) {
            0
        } else {
            x - (x / y) * y
        }
    };
    let out = run("i32_div", &ins, |v| {
        (as_i32(&v[0]) / as_i32(&v[1])).bitcast()
    });
    for k in 0..a.len() {
        assert_eq!(out.0[k] as i32, div(a[k] as i32, b[k] as i32));
    }
    same_bits("i32_div", &ins, &out);
    let out = run("i32_rem", &ins, |v| {
        (as_i32(&v[0]) % as_i32(&v[1])).bitcast()
    });
    for k in 0..a.len() {
        assert_eq!(out.0[k] as i32, rem(a[k] as i32, b[k] as i32));
    }
    same_bits("i32_rem", &ins, &out);
    let out = run("u32_div_rem", &ins, |v| {
        &v[0] / &v[1] + (&v[0] % &v[1]) * 3u32
    });
    for k in 0..a.len() {
        let (x, y) = (a[k], b[k]);
        let q = x.checked_div(y).unwrap_or(x);
        let m = if y == 0 { 0 } else { x % y };
        assert_eq!(out.0[k], q.wrapping_add(m.wrapping_mul(3)));
    }
    same_bits("u32_div_rem", &ins, &out);
}

/// §8.7 "Arithmetic Expressions" (#arithmetic-expr): float `e1 % e2` is
/// `e1 - e2 * trunc(e1 / e2)`.
#[test]
fn float_remainder_is_e1_minus_e2_times_trunc_e1_over_e2() {
    let mut r = rng();
    let a = f32_operands(&mut r, &[7.5, -7.5, 1.0e6, 5.25], -100.0, 100.0);
    let b = f32_operands(&mut r, &[2.0, 2.0, 3.0, -0.5], 0.5, 9.0);
    let ins = [a.clone(), b.clone()];
    let out = run("f32_rem", &ins, |v| {
        (as_f32(&v[0]) % as_f32(&v[1])).bitcast()
    });
    for k in 0..a.len() {
        let (x, y) = (f32::from_bits(a[k]), f32::from_bits(b[k]));
        assert_eq!(f32::from_bits(out.0[k]), x - y * (x / y).trunc());
    }
    // The GPU's division may be 2.5 ulp off (Vulkan), so the remainder too.
    close("f32_rem", &ins, &out, 4, 1e-5);
}

/// §8.7 "Arithmetic Expressions" and §15.7.3 "Floating Point Rounding and Overflow"
/// (#floating-point-rounding-and-overflow): each operation correctly rounded in `f32`.
#[test]
fn float_arithmetic_is_ieee() {
    let mut r = rng();
    let a = f32_operands(&mut r, &[1.0, 3.0, 0.1, -2.5e10], -1e4, 1e4);
    let b = f32_operands(&mut r, &[3.0, 7.0, 0.2, 1.0e-10], -1e4, 1e4);
    let ins = [a.clone(), b.clone()];
    for (name, op, rule, tol) in [
        (
            "f32_add",
            (|v| (as_f32(&v[0]) + as_f32(&v[1])).bitcast()) as Body,
            (|x, y| x + y) as fn(f32, f32) -> f32,
            0,
        ),
        (
            "f32_sub",
            |v| (as_f32(&v[0]) - as_f32(&v[1])).bitcast(),
            |x, y| x - y,
            0,
        ),
        (
            "f32_mul",
            |v| (as_f32(&v[0]) * as_f32(&v[1])).bitcast(),
            |x, y| x * y,
            0,
        ),
        // Vulkan allows 2.5 ulp for division.
        (
            "f32_div",
            |v| (as_f32(&v[0]) / as_f32(&v[1])).bitcast(),
            |x, y| x / y,
            3,
        ),
    ] {
        let out = run(name, &ins, op);
        for k in 0..a.len() {
            let want = rule(f32::from_bits(a[k]), f32::from_bits(b[k]));
            assert_eq!(out.0[k], want.to_bits(), "{name}");
        }
        close(name, &ins, &out, tol, 0.0);
    }
}

// ---- §8.9 "Bit Expressions" ----

/// §8.9 "Bit Expressions" (#bit-expr): the shift amount of a runtime `<<`/`>>` is taken
/// modulo 32; `>>` on `i32` is arithmetic.
#[test]
fn shift_amounts_are_taken_modulo_32() {
    let mut r = rng();
    let a = i32_operands(&mut r, &[1, -1, i32::MIN, 0x1234_5678, -8]);
    let amounts: Vec<u32> = (0..a.len() as u32).map(|k| (k * 7) % 100).collect();
    let ins = [a.clone(), amounts.clone()];
    let out = run("u32_shl", &ins, |v| &v[0] << &v[1]);
    for k in 0..a.len() {
        assert_eq!(out.0[k], a[k] << (amounts[k] % 32));
    }
    same_bits("u32_shl", &ins, &out);
    let out = run("u32_shr", &ins, |v| &v[0] >> &v[1]);
    for k in 0..a.len() {
        assert_eq!(out.0[k], a[k] >> (amounts[k] % 32));
    }
    same_bits("u32_shr", &ins, &out);
    let out = run("i32_shr", &ins, |v| (as_i32(&v[0]) >> &v[1]).bitcast());
    for k in 0..a.len() {
        assert_eq!(out.0[k] as i32, (a[k] as i32) >> (amounts[k] % 32));
    }
    same_bits("i32_shr", &ins, &out);
}

// ---- §15.7.6 "Floating Point Conversion", §17.1.2 value constructors, §17.2 bitcast ----

/// §15.7.6 "Floating Point Conversion" (#floating-point-conversion), §17.1.2.5 `i32` and
/// §17.1.2.16 `u32`: truncation toward zero, out-of-range values clamped to the nearest value
/// the float type represents within the integer type.
#[test]
fn float_to_integer_conversion_saturates_to_representable_values() {
    let mut r = rng();
    let edges = [
        3.0e9,
        -3.0e9,
        2147483520.0,
        2147483648.0,
        -2147483648.0,
        4294967040.0,
        4294967296.0,
        -1.5,
        -0.5,
        0.5,
        2.999,
        -2.999,
        1.0e20,
        -1.0e20,
        f32::INFINITY,
        f32::NEG_INFINITY,
    ];
    let a = f32_operands(&mut r, &edges, -5.0e9, 5.0e9);
    let ins = [a.clone()];
    // WGSL: truncate toward zero; out of range gives the closest value of the integer type
    // that f32 represents exactly.
    let to_i32 = |x: f32| x.clamp(-2147483648.0, 2147483520.0) as i32;
    let to_u32 = |x: f32| x.clamp(0.0, 4294967040.0) as u32;
    let out = run("f32_to_i32", &ins, |v| as_f32(&v[0]).to_i32().bitcast());
    for (k, &x) in a.iter().enumerate() {
        assert_eq!(
            out.0[k] as i32,
            to_i32(f32::from_bits(x)),
            "{}",
            f32::from_bits(x)
        );
    }
    same_bits("i32(f32)", &ins, &out);
    let out = run("f32_to_u32", &ins, |v| as_f32(&v[0]).to_u32());
    for (k, &x) in a.iter().enumerate() {
        assert_eq!(out.0[k], to_u32(f32::from_bits(x)), "{}", f32::from_bits(x));
    }
    same_bits("u32(f32)", &ins, &out);
}

/// §17.1.2.4 `f32` (#f32-builtin, rounding per §15.7.6) and §17.1.2.2 `bool` (#bool-builtin):
/// integers to the nearest float, ties to even; `bool(x)` is `x != 0`.
#[test]
fn integer_to_float_and_bool_conversions() {
    let mut r = rng();
    let a = i32_operands(&mut r, &[i32::MAX, i32::MIN, 16777217, -16777217, 0, 1, -1]);
    let ins = [a.clone()];
    let out = run("i32_to_f32", &ins, |v| as_i32(&v[0]).to_f32().bitcast());
    for (k, &x) in a.iter().enumerate() {
        assert_eq!(f32::from_bits(out.0[k]), (x as i32) as f32);
    }
    same_bits("f32(i32)", &ins, &out);
    let out = run("u32_to_f32", &ins, |v| v[0].to_f32().bitcast());
    for (k, &x) in a.iter().enumerate() {
        assert_eq!(f32::from_bits(out.0[k]), x as f32);
    }
    same_bits("f32(u32)", &ins, &out);
    // bool(x) is x != 0, also for -0.0; u32(bool) is 0 or 1.
    let f = f32_operands(&mut r, &[0.0, -0.0, 1.0e-3, -5.0], -2.0, 2.0);
    let ins = [a.clone(), f.clone()];
    let out = run("to_bool", &ins, |v| {
        v[0].to_bool().to_u32() + as_f32(&v[1]).to_bool().to_u32() * 2u32
    });
    for k in 0..a.len() {
        let want = u32::from(a[k] != 0) + 2 * u32::from(f32::from_bits(f[k]) != 0.0);
        assert_eq!(out.0[k], want);
    }
    same_bits("bool()", &ins, &out);
}

// ---- §17.3.3 "select" ----

/// §17.3.3 `select` (#select-builtin): `t` where `cond`, else `f`, component by component.
#[test]
fn select_picks_per_component() {
    let mut r = rng();
    let a = i32_operands(&mut r, &[]);
    let b = i32_operands(&mut r, &[]);
    let c = i32_operands(&mut r, &[]);
    let ins = [a.clone(), b.clone(), c.clone()];
    let out = run("select_vec", &ins, |v| {
        let x = vec2(v[0].clone(), v[1].clone());
        let y = vec2(v[1].clone(), v[2].clone());
        let cond = vec2((&v[2] & 1u32).eq(1u32), (&v[2] & 2u32).eq(2u32));
        let s = cond.select(x, y);
        s.x() ^ (s.y() << 1u32) ^ select(v[0].clone(), v[1].clone(), v[2].gt(v[0].clone()))
    });
    for k in 0..a.len() {
        let sx = if c[k] & 1 == 1 { a[k] } else { b[k] };
        let sy = if c[k] & 2 == 2 { b[k] } else { c[k] };
        let s = if c[k] > a[k] { b[k] } else { a[k] };
        assert_eq!(out.0[k], sx ^ (sy << 1) ^ s);
    }
    same_bits("select", &ins, &out);
}

// ---- §17.5 numeric built-ins ----

/// §17.5.41 `max` (#max-float-builtin), §17.5.42 `min` (#min-float-builtin), §17.5.10 `clamp`
/// (#clamp), on floats and integers.
#[test]
fn min_max_clamp() {
    let mut r = rng();
    let a = i32_operands(&mut r, &[i32::MIN, i32::MAX, -1, 0]);
    let b = i32_operands(&mut r, &[0, -1, 1, 5]);
    let ins = [a.clone(), b.clone()];
    let out = run("int_min_max", &ins, |v| {
        let s = clamp(as_i32(&v[0]), -100i32, 100i32) + min(as_i32(&v[0]), as_i32(&v[1]));
        s.bitcast::<u32>() ^ max(v[0].clone(), v[1].clone()) ^ clamp(v[0].clone(), 10u32, 1000u32)
    });
    for k in 0..a.len() {
        let (x, y) = (a[k] as i32, b[k] as i32);
        let s = x.clamp(-100, 100).wrapping_add(x.min(y)) as u32;
        assert_eq!(out.0[k], s ^ a[k].max(b[k]) ^ a[k].clamp(10, 1000));
    }
    same_bits("min/max/clamp (int)", &ins, &out);

    let fa = f32_operands(&mut r, &[1.0, -1.0, 0.25], -3.0, 3.0);
    let fb = f32_operands(&mut r, &[2.0, -2.0, 0.5], -3.0, 3.0);
    let ins = [fa.clone(), fb.clone()];
    for (name, op, rule) in [
        (
            "f32_min",
            (|v| min(as_f32(&v[0]), as_f32(&v[1])).bitcast()) as Body,
            (|x: f32, y: f32| x.min(y)) as fn(f32, f32) -> f32,
        ),
        (
            "f32_max",
            |v| max(as_f32(&v[0]), as_f32(&v[1])).bitcast(),
            |x, y| x.max(y),
        ),
        (
            "f32_clamp",
            |v| clamp(as_f32(&v[0]), -1.0f32, abs(as_f32(&v[1]))).bitcast(),
            |x, y| x.max(-1.0).min(y.abs()),
        ),
        (
            "f32_saturate_step",
            |v| (saturate(as_f32(&v[0])) + step(as_f32(&v[1]), as_f32(&v[0]))).bitcast(),
            |x, y| x.clamp(0.0, 1.0) + if y <= x { 1.0 } else { 0.0 },
        ),
    ] {
        let out = run(name, &ins, op);
        for k in 0..fa.len() {
            let want = rule(f32::from_bits(fa[k]), f32::from_bits(fb[k]));
            assert_eq!(f32::from_bits(out.0[k]), want, "{name}");
        }
        close(name, &ins, &out, 0, 0.0);
    }
}

/// §17.5.52 `round` (ties to even), §17.5.31 `floor`, §17.5.9 `ceil`, §17.5.63 `trunc`,
/// §17.5.33 `fract`, §17.5.54 `sign`.
#[test]
fn rounding_built_ins() {
    let mut r = rng();
    let a = f32_operands(
        &mut r,
        &[
            0.5,
            1.5,
            2.5,
            -0.5,
            -1.5,
            -2.5,
            3.49,
            -3.51,
            1.0e7 + 0.5,
            0.0,
        ],
        -50.0,
        50.0,
    );
    let ins = [a.clone()];
    for (name, op, rule) in [
        (
            "f32_round",
            (|v| round(as_f32(&v[0])).bitcast()) as Body,
            f32::round_ties_even as fn(f32) -> f32,
        ),
        ("f32_floor", |v| floor(as_f32(&v[0])).bitcast(), f32::floor),
        ("f32_ceil", |v| ceil(as_f32(&v[0])).bitcast(), f32::ceil),
        ("f32_trunc", |v| trunc(as_f32(&v[0])).bitcast(), f32::trunc),
        (
            "f32_fract",
            |v| fract(as_f32(&v[0])).bitcast(),
            |x| x - x.floor(),
        ),
        (
            "f32_sign",
            |v| sign(as_f32(&v[0])).bitcast(),
            |x| {
                if x > 0.0 {
                    1.0
                } else if x < 0.0 {
                    -1.0
                } else {
                    0.0
                }
            },
        ),
    ] {
        let out = run(name, &ins, op);
        for (k, &x) in a.iter().enumerate() {
            let want = rule(f32::from_bits(x));
            assert_eq!(
                f32::from_bits(out.0[k]),
                want,
                "{name}({})",
                f32::from_bits(x)
            );
        }
        close(name, &ins, &out, 0, 0.0);
    }
}

/// §17.5.13-15 `countLeadingZeros`/`countOneBits`/`countTrailingZeros`, §17.5.28-29
/// `firstLeadingBit` (signed, unsigned), §17.5.30 `firstTrailingBit`, §17.5.51 `reverseBits`,
/// §17.5.25-26 `extractBits` and §17.5.35 `insertBits` (offset and count clamped).
#[test]
fn bit_built_ins() {
    let mut r = rng();
    let a = i32_operands(&mut r, &[0, -1, 1, i32::MIN, i32::MAX, 0x00F0_0000, -2]);
    let offsets: Vec<u32> = (0..a.len() as u32).map(|k| (k * 5) % 40).collect();
    let counts: Vec<u32> = (0..a.len() as u32).map(|k| (k * 11) % 37).collect();
    let ins = [a.clone(), offsets.clone(), counts.clone()];
    let cases: [(&str, Body); 8] = [
        ("count_one_bits", |v| count_one_bits(v[0].clone())),
        ("count_leading_zeros", |v| count_leading_zeros(v[0].clone())),
        ("count_trailing_zeros", |v| {
            count_trailing_zeros(v[0].clone())
        }),
        ("first_leading_bit_u32", |v| first_leading_bit(v[0].clone())),
        ("first_leading_bit_i32", |v| {
            first_leading_bit(as_i32(&v[0])).bitcast()
        }),
        ("first_trailing_bit", |v| first_trailing_bit(v[0].clone())),
        ("reverse_bits", |v| reverse_bits(v[0].clone())),
        ("extract_insert_bits", |v| {
            extract_bits(v[0].clone(), v[1].clone(), v[2].clone())
                ^ extract_bits(as_i32(&v[0]), v[1].clone(), v[2].clone()).bitcast::<u32>()
                ^ insert_bits(v[0].clone(), v[2].clone(), v[1].clone(), v[2].clone())
        }),
    ];
    let low = |c: u32| if c >= 32 { u32::MAX } else { (1u32 << c) - 1 };
    let clamp = |o: u32, c: u32| (o.min(32), c.min(32 - o.min(32)));
    for (name, op) in cases {
        let out = run(name, &ins, op);
        for k in 0..a.len() {
            let x = a[k];
            let (o, c) = clamp(offsets[k], counts[k]);
            let want = match name {
                "count_one_bits" => x.count_ones(),
                "count_leading_zeros" => x.leading_zeros(),
                "count_trailing_zeros" => x.trailing_zeros(),
                "first_leading_bit_u32" => {
                    if x == 0 {
                        u32::MAX
                    } else {
                        31 - x.leading_zeros()
                    }
                }
                "first_leading_bit_i32" => {
                    let y = if (x as i32) < 0 { !x } else { x };
                    if y == 0 {
                        u32::MAX
                    } else {
                        31 - y.leading_zeros()
                    }
                }
                "first_trailing_bit" => {
                    if x == 0 {
                        u32::MAX
                    } else {
                        x.trailing_zeros()
                    }
                }
                "reverse_bits" => x.reverse_bits(),
                _ => {
                    let ue = if c == 0 { 0 } else { (x >> o) & low(c) };
                    let se = if c == 0 {
                        0
                    } else {
                        (((ue << (32 - c)) as i32) >> (32 - c)) as u32
                    };
                    let ins = if c == 0 {
                        x
                    } else {
                        let m = low(c) << o;
                        (x & !m) | ((counts[k] << o) & m)
                    };
                    ue ^ se ^ ins
                }
            };
            assert_eq!(
                out.0[k], want,
                "{name}({x:#x}, {}, {})",
                offsets[k], counts[k]
            );
        }
        same_bits(name, &ins, &out);
    }
}

/// §15.7.4.1 "Accuracy of Concrete Floating Point Expressions" (#concrete-float-accuracy) for
/// §17.5 `exp`, `exp2`, `log`, `log2`, `sin`, `cos`, `sqrt`, `inverseSqrt`, `pow`.
#[test]
fn transcendentals_are_within_the_accuracy_wgsl_allows() {
    let mut r = rng();
    let a = f32_operands(&mut r, &[0.5, 1.0, 2.0, 3.0], 0.1, 3.0);
    let ins = [a.clone()];
    // (name, op, ulps, absolute): WGSL spec §15.7.4 "Floating Point Accuracy": exp and exp2
    // 3 + 2|x| ulp, log and log2 3 ulp outside [0.5, 2] and 2^-21 absolute inside, sin and
    // cos 2^-11 absolute, sqrt and inverseSqrt 2-3 ulp, pow inherited from exp2(y log2 x).
    let cases: [(&str, Body, u64, f32); 7] = [
        ("exp", |v| exp(as_f32(&v[0])).bitcast(), 9, 0.0),
        ("exp2", |v| exp2(as_f32(&v[0])).bitcast(), 9, 0.0),
        ("log", |v| log(as_f32(&v[0])).bitcast(), 3, 1.0 / 2097152.0),
        (
            "log2",
            |v| log2(as_f32(&v[0])).bitcast(),
            3,
            1.0 / 2097152.0,
        ),
        (
            "sin_cos",
            |v| (sin(as_f32(&v[0])) + cos(as_f32(&v[0]))).bitcast(),
            0,
            2.0 / 2048.0,
        ),
        (
            "sqrt_inverse_sqrt",
            |v| (sqrt(as_f32(&v[0])) * inverse_sqrt(as_f32(&v[0]))).bitcast(),
            6,
            0.0,
        ),
        ("pow", |v| pow(as_f32(&v[0]), 1.7f32).bitcast(), 16, 0.0),
    ];
    for (name, op, tol, abs) in cases {
        let out = run(name, &ins, op);
        close(name, &ins, &out, tol, abs);
    }
}

// ---- capabilities: f16 and subgroups ----

/// `out[i] = (a + b) * a - b / a` in `f16`, on the interpreter and (if the adapter has f16)
/// the GPU. §15.7.3 "Floating Point Rounding and Overflow"
/// (#floating-point-rounding-and-overflow): each `f16` operation rounds to `f16` (§6.2.4
/// "Floating Point Types", the `f16` extension).
#[test]
fn f16_arithmetic_rounds_each_operation_to_f16() {
    use half::f16;
    let mut k = KernelBuilder::new("f16_ops", [64, 1, 1]);
    let a = k.storage::<RuntimeArray<f16>, ReadOnly>("a");
    let b = k.storage::<RuntimeArray<f16>, ReadOnly>("b");
    let out = k.storage::<RuntimeArray<f16>, ReadWrite>("out");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.lt(a.len()), |k| {
        let x = k.let_("x", a.at(&i).load());
        let y = k.let_("y", b.at(&i).load());
        k.store(&out.at(&i), (&x + &y) * &x - &y / &x);
    });
    let shader = k.build().expect("builds");
    let mut r = rng();
    let n = 67; // odd: the buffers' last element shares a 4-byte word with padding
    let xs: Vec<f16> = (0..n)
        .map(|_| f16::from_f32(r.random_range(0.5..60.0)))
        .collect();
    let ys: Vec<f16> = (0..n)
        .map(|_| f16::from_f32(r.random_range(-60.0..60.0)))
        .collect();
    let step = |v: f32| f16::from_f32(v).to_f32();
    let want: Vec<f16> = xs
        .iter()
        .zip(&ys)
        .map(|(x, y)| {
            let (x, y) = (x.to_f32(), y.to_f32());
            f16::from_f32(step(step(x + y) * x) - step(y / x))
        })
        .collect();

    let cpu = Interpreter::new();
    let program = cpu.compile(&shader).unwrap();
    let (ha, hb) = (HostBuffer::from_slice(&xs), HostBuffer::from_slice(&ys));
    let hout = HostBuffer::from_slice(&vec![f16::NAN; n]);
    cpu.dispatch(
        &program,
        &[&ha, &hb, &hout],
        program.workgroups_for([n as u32, 1, 1]),
    )
    .unwrap();
    let on_cpu = hout.read();
    assert_eq!(
        on_cpu.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        want.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );

    let Some(g) = gpu() else { return };
    if !g
        .capabilities()
        .contains(naga::valid::Capabilities::SHADER_FLOAT16)
    {
        eprintln!("adapter has no f16: interpreter part only");
        return;
    }
    let kernel = g.compile(&shader).unwrap();
    let (da, db) = (
        GpuBuffer::from_slice(g, &xs).unwrap(),
        GpuBuffer::from_slice(g, &ys).unwrap(),
    );
    let dout = GpuBuffer::from_slice(g, &vec![f16::NAN; n]).unwrap();
    g.dispatch(
        &kernel,
        &[&da, &db, &dout],
        kernel.workgroups_for([n as u32, 1, 1]),
    )
    .unwrap();
    let on_gpu = dout.read(g).unwrap();
    for (c, d) in on_cpu.iter().zip(&on_gpu) {
        // f16 division may be off by an ulp on the GPU.
        let (ci, di) = (c.to_bits() as i32, d.to_bits() as i32);
        assert!((ci - di).abs() <= 1, "interpreter {c}, GPU {d}");
    }
}

/// Subgroup reductions, scans, broadcasts and shuffles, with the interpreter's subgroup size
/// set to the GPU's (measured by the kernel itself). §17.12 "Subgroup Built-in Functions"
/// (#subgroup-builtin-functions) and §15.6.3 "Subgroup Operations" (#subgroup-ops).
#[test]
fn subgroup_operations_match_the_gpu() {
    let mut r = rng();
    let n = 256;
    let a: Vec<u32> = (0..n).map(|_| r.random_range(0..1000)).collect();
    let ins = [a.clone()];
    let body = |k: &mut KernelBuilder, v: &[Exp<u32>]| {
        let sum = k.subgroup_add(v[0].clone());
        let scan = k.subgroup_exclusive_add(v[0].clone());
        let top = k.subgroup_max(v[0].clone());
        let first = k.subgroup_broadcast_first(v[0].clone());
        let lane = subgroup_invocation_id();
        let next = k.subgroup_shuffle(v[0].clone(), (&lane + 1u32) % subgroup_size());
        sum ^ (scan << 3u32)
            ^ (top << 7u32)
            ^ (first << 11u32)
            ^ (next << 13u32)
            ^ (subgroup_size() << 24u32)
    };
    let size = match gpu() {
        Some(g)
            if g.capabilities()
                .contains(naga::valid::Capabilities::SUBGROUP) =>
        {
            let (_, gpu_out) = run_with(
                "subgroup_size_probe",
                &ins,
                InterpOptions::default(),
                |_, _| subgroup_size(),
            );
            gpu_out.map(|v| v[0])
        }
        _ => None,
    };
    let sg = size.unwrap_or(32);
    let options = InterpOptions {
        subgroup_size: sg,
        ..Default::default()
    };
    let out = run_with("subgroup_ops", &ins, options, body);
    // The rules, per subgroup of consecutive invocations.
    for (s, chunk) in a.chunks(sg as usize).enumerate() {
        let sum = chunk.iter().fold(0u32, |x, y| x.wrapping_add(*y));
        let top = *chunk.iter().max().unwrap();
        for (l, _) in chunk.iter().enumerate() {
            let scan = chunk[..l].iter().fold(0u32, |x, y| x.wrapping_add(*y));
            let next = chunk[(l + 1) % chunk.len()];
            let want =
                sum ^ (scan << 3) ^ (top << 7) ^ (chunk[0] << 11) ^ (next << 13) ^ (sg << 24);
            assert_eq!(out.0[s * sg as usize + l], want, "subgroup {s} lane {l}");
        }
    }
    if size.is_some() {
        same_bits("subgroup ops", &ins, &out);
    }
}
