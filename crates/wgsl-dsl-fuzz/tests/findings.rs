//! Regression tests named after what the fuzzer found (FUZZING.md, "Findings"): each builds
//! the shrunk kernel's program by hand and checks that the analysis (which the generator and
//! the shrinker consult) refuses it for the reason found, where the executors or the DSL
//! disagree on it.

use wgsl_dsl_fuzz::analysis::analyze;
use wgsl_dsl_fuzz::ast::*;
use wgsl_dsl_fuzz::{GenOptions, generate};

/// A program of `body`, with the inputs and grid of a generated one.
fn program(body: Vec<Stmt>) -> Program {
    let mut p = generate(1, &GenOptions::default(), false);
    p.funcs.clear();
    p.coop = None;
    p.texture = None;
    p.body = body;
    p
}

fn lit_f32(v: f32) -> Expr {
    Expr::Lit(Lit::F32(v))
}

fn load_f32(i: u32) -> Expr {
    Expr::Input(Scalar::F32, Box::new(Expr::Lit(Lit::U32(i))))
}

/// Case 2727628442361685124 of the 30-minute run, oracle (a): `in_i32[0] / v` with `let v =
/// vec2<i32>()` failed to build ("integer division by the literal zero": the DSL checks a
/// `let` of a constant as the constant) where the analysis had let it through. Fixed in
/// 9e0150e (a `let` of a constant counts as a constant divisor).
#[test]
fn a_let_of_a_zero_vector_as_divisor_is_refused() {
    let body = vec![
        Stmt::Let(1, Expr::Zero(Ty::V(Scalar::I32, 2))),
        Stmt::Let(
            2,
            Expr::Bin(
                Bin::Div,
                Box::new(Expr::Input(Scalar::I32, Box::new(Expr::Lit(Lit::U32(0))))),
                Box::new(Expr::Value(1)),
            ),
        ),
    ];
    let prog = program(body);
    let err = analyze(&prog).expect_err("the analysis refuses the division");
    assert!(err.contains("divisor") || err.contains("constant"), "{err}");
}

/// Case 1438706623654173776 of the H200 run of seed 3434, oracle (b): `let v9 = 2147483647i /
/// 2i;` then `out[..] = v9 << 28u`. A run-time shift in WGSL (a `let` is no const-expression),
/// so the DSL's WGSL parses; but naga's front end folds `v9`, its writer prints
/// `1073741823i << 28u`, and re-parsing that text fails ("<< operation overflowed"). The
/// analysis refuses a left shift whose operands are both constants or `let`s of them, and
/// keeps shifts with a run-time operand.
#[test]
fn a_left_shift_of_a_let_of_a_constant_by_a_constant_is_refused() {
    let shift = |value: Expr| {
        program(vec![
            Stmt::Let(
                1,
                Expr::Bin(
                    Bin::Div,
                    Box::new(Expr::Lit(Lit::I32(2147483647))),
                    Box::new(Expr::Lit(Lit::I32(2))),
                ),
            ),
            Stmt::Out(
                Scalar::I32,
                0,
                Expr::Bin(Bin::Shl, Box::new(value), Box::new(Expr::Lit(Lit::U32(28)))),
            ),
        ])
    };
    let err = analyze(&shift(Expr::Value(1))).expect_err("naga would fold the let");
    assert!(err.contains("shift"), "{err}");
    let run_time = shift(Expr::Input(Scalar::I32, Box::new(Expr::Lit(Lit::U32(0)))));
    analyze(&run_time).unwrap_or_else(|e| panic!("a shift of a loaded value is kept: {e}"));
}

/// Cases 4236882638576173860 and 4240022552846851206, oracle (c): `pack2x16snorm` of a
/// component `-0.5` (a tie) is `0xc001` on the interpreter (WGSL) and `0xc000` on lavapipe
/// (naga finding 4). The analysis refuses snorm packs that may see `-0.5`, and only those.
#[test]
fn a_snorm_pack_that_may_round_a_tie_is_refused() {
    let pack = |f: Fun, parts: Vec<Expr>| {
        program(vec![Stmt::Out(
            Scalar::U32,
            0,
            Expr::Math(f, vec![Expr::Compose(parts)]),
        )])
    };
    let mut tie = pack(Fun::Pack2x16snorm, vec![load_f32(0), lit_f32(0.25)]);
    tie.inputs.f32[0] = -0.5;
    let err = analyze(&tie).expect_err("the input is -0.5");
    assert!(err.contains("-0.5"), "{err}");
    let tie = pack(Fun::Pack2x16snorm, vec![lit_f32(-0.5), lit_f32(0.25)]);
    assert!(analyze(&tie).is_err());
    // +0.5 and unorm ties round up either way; -0.25 is no tie.
    for ok in [
        pack(Fun::Pack2x16snorm, vec![lit_f32(0.5), lit_f32(-0.25)]),
        pack(Fun::Pack2x16unorm, vec![load_f32(0), lit_f32(0.5)]),
    ] {
        analyze(&ok).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// Case 2579888129684154304, oracle (c), shrunk to one store: `pack4x8snorm` of literals
/// with a negative component is `0x7f817f7f` on the interpreter (WGSL) and `0xff817f7f` on
/// lavapipe, whose constant folding sign-extends the negative field (lavapipe finding 1).
/// The analysis refuses `pack4x8snorm` of a constant that may be negative, and only that.
#[test]
fn a_constant_pack4x8snorm_of_a_negative_component_is_refused() {
    let pack = |parts: Vec<Expr>| {
        program(vec![Stmt::Out(
            Scalar::U32,
            0,
            Expr::Math(Fun::Pack4x8snorm, vec![Expr::Compose(parts)]),
        )])
    };
    // The shrunk case's values clamped (its own also span -0.5, refused as a possible tie).
    let shrunk = pack(vec![
        lit_f32(1.0),
        lit_f32(1.0),
        lit_f32(-1.0),
        lit_f32(1.0),
    ]);
    let err = analyze(&shrunk).expect_err("a negative constant field");
    assert!(err.contains("constant"), "{err}");
    let positive = pack(vec![
        lit_f32(1.0),
        lit_f32(0.25),
        lit_f32(0.75),
        lit_f32(2.0),
    ]);
    analyze(&positive).unwrap_or_else(|e| panic!("{e}"));
}

/// Case 10395902025556148847 of the 20-minute run, oracle (c): the interpreter's
/// `degrees(6.4375)` was `368.841552734375`, 0.93 ULP below the exact value, outside WGSL's
/// accuracy ("inherited from `e * 57.295779513082322865`": the constant rounded to `f32`,
/// then one correctly rounded product), because it multiplied by `180.0 / PI` computed in
/// `f32`, one ULP below the rounded constant. The same for `radians`.
#[test]
fn the_interpreter_computes_degrees_and_radians_within_wgsl_accuracy() {
    use wgsl_dsl::interp::{HostBuffer, Interpreter};
    use wgsl_dsl::prelude::*;
    let mut k = KernelBuilder::new("degrees_radians", [64, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.clone().lt(x.len()), |k| {
        k.store(&out.at(i.clone() * 2u32), degrees(x.at(i.clone()).load()));
        k.store(
            &out.at(i.clone() * 2u32 + 1u32),
            radians(x.at(i.clone()).load()),
        );
    });
    let shader = k.build().expect("build");
    // Multiples of 1/16 in [-8, 8], as the fuzzer's inputs, and some odd values.
    let xs: Vec<f32> = (-128..=128)
        .map(|n| n as f32 / 16.0)
        .chain([6.4375, 1.0e-3, 123.456, -987.25])
        .collect();
    let interp = Interpreter::new();
    let program = interp.compile(&shader).expect("compile");
    let (hx, hout) = (
        HostBuffer::from_slice(&xs),
        HostBuffer::from_slice(&vec![f32::NAN; 2 * xs.len()]),
    );
    interp
        .dispatch(
            &program,
            &[&hx, &hout],
            [xs.len().div_ceil(64) as u32, 1, 1],
        )
        .expect("dispatch");
    let got = hout.read();
    let ulp = |v: f64| {
        let v = (v.abs() as f32).max(f32::MIN_POSITIVE);
        f64::from(f32::from_bits(v.to_bits() + 1) - v)
    };
    for (j, &x) in xs.iter().enumerate() {
        for (c, v) in [
            (180.0 / std::f64::consts::PI, got[2 * j]),
            (std::f64::consts::PI / 180.0, got[2 * j + 1]),
        ] {
            let exact = f64::from(x) * c;
            let bound = 0.5 * ulp(c) * f64::from(x).abs() + 0.5 * ulp(exact);
            assert!(
                (f64::from(v) - exact).abs() <= bound,
                "{x} * {c}: {v} (exact {exact}, bound {bound:e})"
            );
        }
    }
}

/// Case 12121527670108094070 of the H200 run, oracle (c): `unpack4xI8(in_u32[0]).z +
/// in_i32[17] / 3`, as `(unpack4xI8(u) + vec4(x) / vec4(3i)).z`, stored to `out_i32`, left
/// the poison on NVIDIA's driver (580.159.04): the store, and every later store of the
/// invocation, is not performed (NVIDIA finding 1). The analysis refuses an integer vector
/// operation of an `unpack4xI8`/`unpack4xU8` and a division, and only that: each half alone
/// is let through.
#[test]
fn an_unpack4x8_beside_a_vector_division_is_refused() {
    let u = || Expr::Input(Scalar::U32, Box::new(Expr::Lit(Lit::U32(0))));
    let x = || Expr::Input(Scalar::I32, Box::new(Expr::Lit(Lit::U32(17))));
    let unpack = || Expr::Math(Fun::Unpack4xI8, vec![u()]);
    let quotient = || {
        Expr::Bin(
            Bin::Div,
            Box::new(Expr::Splat(4, Box::new(x()))),
            Box::new(Expr::Splat(4, Box::new(Expr::Lit(Lit::I32(3))))),
        )
    };
    let store = |e: Expr| {
        program(vec![Stmt::Out(
            Scalar::I32,
            0,
            Expr::Component(2, Box::new(e)),
        )])
    };
    let found = store(Expr::Bin(
        Bin::Add,
        Box::new(unpack()),
        Box::new(quotient()),
    ));
    let err = analyze(&found).expect_err("the H200's dropped store");
    assert!(err.contains("NVIDIA"), "{err}");
    let unsigned = program(vec![Stmt::Out(
        Scalar::U32,
        0,
        Expr::Component(
            2,
            Box::new(Expr::Bin(
                Bin::Add,
                Box::new(Expr::Math(Fun::Unpack4xU8, vec![u()])),
                Box::new(Expr::Bin(
                    Bin::Div,
                    Box::new(Expr::Splat(4, Box::new(u()))),
                    Box::new(Expr::Splat(4, Box::new(Expr::Lit(Lit::U32(3))))),
                )),
            )),
        ),
    )]);
    assert!(analyze(&unsigned).is_err_and(|e| e.contains("NVIDIA")));
    for alone in [
        Expr::Bin(
            Bin::Add,
            Box::new(unpack()),
            Box::new(Expr::Splat(4, Box::new(x()))),
        ),
        quotient(),
        unpack(),
    ] {
        analyze(&store(alone)).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// Cases 9657257968591335609 and 8582678391912307656 of the 20-minute run, oracle (c):
/// `unpack2x16float(0x04000400)` of a constant gave 0.0 on lavapipe, whose constant folding
/// of `unpack2x16float` gives 0 for the high half (lavapipe finding 3). The analysis refuses
/// `unpack2x16float` of a constant, and lets the same reconditioned word loaded through.
#[test]
fn a_constant_unpack2x16float_is_refused() {
    let recondition = |w: Expr| {
        Expr::Bin(
            Bin::Or,
            Box::new(Expr::Bin(
                Bin::And,
                Box::new(w),
                Box::new(Expr::Lit(Lit::U32(0x3bff_3bff))),
            )),
            Box::new(Expr::Lit(Lit::U32(0x0400_0400))),
        )
    };
    let store = |w: Expr| {
        program(vec![Stmt::Out(
            Scalar::F32,
            0,
            Expr::Component(
                1,
                Box::new(Expr::Math(Fun::Unpack2x16float, vec![recondition(w)])),
            ),
        )])
    };
    let err = analyze(&store(Expr::Lit(Lit::U32(0x0400_0400)))).expect_err("a constant");
    assert!(err.contains("constant"), "{err}");
    let loaded = store(Expr::Input(Scalar::U32, Box::new(Expr::Lit(Lit::U32(0)))));
    analyze(&loaded).unwrap_or_else(|e| panic!("{e}"));
}

/// Case 18132885704316271577 of the H200 run of seed 777123, oracle (c): an `f16`
/// `mix(square(a * b), c, saturate(d))`: interpreter 2.4375, H200 2.5, allowed difference 0.
/// The analysis bounded `mix` by the spec's formula `a * (1 - t) + b * t` alone, exact on
/// exact operands; the driver computes `a + (b - a) * t`, which rounds `b - a` first (with
/// `t = saturate(d) = 1`, `a = 144`, `b = 2.4375`: `b - a = -141.5625` rounds to `-141.5` in
/// `f16`, so `2.5`). The conformance tests accept both formulas; so does the analysis now.
#[test]
fn mix_is_bounded_by_both_formulas_the_conformance_tests_accept() {
    use half::f16;
    use wgsl_dsl_fuzz::accuracy::{F, Ops};
    let ops = Ops::of(Scalar::F16);
    // The case: the H200's 2.5 is within the bound of the exact 2.4375.
    let r = ops
        .mix(F::lit(144.0), F::lit(2.4375), F::lit(1.0))
        .expect("mix of the case");
    assert!(r.lo <= 2.4375 && 2.4375 <= r.hi, "{r:?}");
    assert!(
        (2.5f64 - 2.4375).abs() <= r.err,
        "the H200's 2.5 outside {r:?}"
    );

    // The class: on exact `f16` operands, both formulas evaluated with correctly rounded
    // `f16` operations (each f64 result of two `f16` operands is exact, then rounded once)
    // lie within the analysis's bound, wherever it accepts the operands.
    let h = |v: f64| f64::from(f16::from_f64(v));
    let (mut checked, mut differ) = (0, 0);
    for ai in -40i32..=40 {
        let a = f64::from(ai) * f64::from(ai.abs()) / 4.0; // squares: up to 400
        for bi in -24..=24 {
            let b = f64::from(bi) / 8.0 + 0.0625 * f64::from(bi % 3);
            for ti in 0..=32 {
                let t = f64::from(ti) / 32.0;
                let Ok(r) = ops.mix(F::lit(a), F::lit(b), F::lit(t)) else {
                    continue;
                };
                let precise = h(h(a * h(1.0 - t)) + h(b * t));
                let imprecise = h(a + h(h(b - a) * t));
                for (name, v) in [
                    ("a * (1 - t) + b * t", precise),
                    ("a + (b - a) * t", imprecise),
                ] {
                    assert!(
                        r.lo - r.err <= v && v <= r.hi + r.err,
                        "mix({a}, {b}, {t}) by {name} in f16: {v}, outside {r:?}"
                    );
                }
                checked += 1;
                differ += usize::from(precise != imprecise);
            }
        }
    }
    assert!(
        checked > 10_000 && differ > 100,
        "{checked} operands, {differ} where the formulas differ"
    );
}

/// Case 5378828363366603443 of the H200 run of seed 20261206, oracle (a): `let v10 =
/// vec4(in_u32[..], 255u, 31u, in_u32[..]);` then `vec4<i32>(..) << v10` failed to build:
/// naga's validator checks the constant parts of a composed shift amount even through a
/// `let` (naga finding 8). The analysis checks such a `let`'s parts as if written in place;
/// a `let` of run-time parts only is kept.
#[test]
fn a_shift_by_a_let_of_a_vector_with_a_large_literal_part_is_refused() {
    let u = |i: u32| Expr::Input(Scalar::U32, Box::new(Expr::Lit(Lit::U32(i))));
    let i = |k: u32| Expr::Input(Scalar::I32, Box::new(Expr::Lit(Lit::U32(k))));
    let shift = |amount: Vec<Expr>| {
        program(vec![
            Stmt::Let(1, Expr::Compose(amount)),
            Stmt::Let(
                2,
                Expr::Bin(
                    Bin::Shl,
                    Box::new(Expr::Compose(vec![i(0), i(1), i(2), i(3)])),
                    Box::new(Expr::Value(1)),
                ),
            ),
        ])
    };
    let large = vec![
        u(22),
        Expr::Lit(Lit::U32(255)),
        Expr::Lit(Lit::U32(31)),
        u(18),
    ];
    let err = analyze(&shift(large)).expect_err("naga would refuse the shift");
    assert!(err.contains("shift"), "{err}");
    let run_time = shift(vec![u(22), u(1), u(2), u(18)]);
    analyze(&run_time).unwrap_or_else(|e| panic!("a shift by loaded values is kept: {e}"));
}
