//! Const-expressions (WGSL spec §8.1.1): an operation whose operands are all literals is
//! evaluated when the shader is created, and what WGSL rejects then is a `BuildError` at the
//! Rust call site that built the operation. Everything the DSL emits re-parses with naga's WGSL
//! front end, whose own evaluation of the re-parsed expression gives the value the DSL computed.

use half::f16;
use proptest::prelude::*;
use proptest::strategy::Union;
use std::collections::HashMap;
use wgsl_dsl::prelude::*;
use wgsl_dsl::types::{Scalar, ScalarOrVector};
use wgsl_dsl::{CallSite, ConstValue};

// ---------------------------------------------------------------------------------------------
// Located errors, one per rule.

/// Build a kernel that stores `e` (wrapped in a runtime operation) and return the error.
fn build_error<T: ScalarOrVector>(e: impl FnOnce(&Exp<T>) -> Exp<T>) -> BuildError {
    let mut k = KernelBuilder::new("bad", [1, 1, 1]);
    let out = k.storage::<RuntimeArray<T>, ReadWrite>("out");
    let x = k.let_("x", out.at(1u32).load());
    let v = e(&x);
    k.store(
        &out.at(0u32),
        select(v, x, global_invocation_id().x().eq(0u32)),
    );
    match k.build() {
        Ok(s) => panic!("built, but WGSL rejects it:\n{}", s.wgsl),
        Err(e) => e,
    }
}

/// The error is a const-expression error at `site` whose reason contains `needle`.
#[track_caller]
fn assert_rejected(err: BuildError, site: CallSite, needle: &str) {
    match &err {
        BuildError::ConstExpression {
            reason,
            site: at,
            rule,
        } => {
            assert_eq!(*at, site, "{err}");
            assert!(reason.contains(needle), "`{needle}` not in: {err}");
            assert!(rule.starts_with("WGSL spec §"), "{rule}");
            assert!(err.to_string().starts_with(&site.to_string()), "{err}");
        }
        other => panic!("expected ConstExpression at {site}, got {other}"),
    }
}

macro_rules! reject {
    ($t:ty, |$x:ident| $bad:expr, $needle:expr) => {{
        let mut site = None;
        let err = build_error::<$t>(|$x| {
            let bad: Exp<$t> = $bad;
            site = Some(bad.site());
            // The bad node sits inside a larger expression, as it would in a kernel.
            bad.clone()
        });
        assert_rejected(err, site.unwrap(), $needle);
    }};
}

#[test]
fn float_results_that_are_not_finite_are_rejected() {
    reject!(f32, |_x| lit(1.0f32) / lit(0.0f32), "infinite");
    reject!(f32, |_x| lit(0.0f32) / lit(0.0f32), "NaN");
    reject!(f32, |_x| lit(5.0f32) % lit(0.0f32), "NaN");
    reject!(f32, |_x| lit(f32::MAX) * lit(2.0f32), "overflows f32");
    reject!(f32, |_x| lit(-f32::MAX) - lit(f32::MAX), "overflows f32");
    reject!(f32, |_x| exp(lit(100.0f32)), "exp(100.0f)");
    reject!(f32, |_x| exp2(lit(200.0f32)), "exp2");
    reject!(f32, |_x| sinh(lit(100.0f32)), "sinh");
    reject!(f32, |_x| cosh(lit(-100.0f32)), "cosh");
    reject!(f32, |_x| degrees(lit(3e38f32)), "degrees");
    reject!(f32, |_x| inverse_sqrt(lit(0.0f32)), "infinite");
    reject!(f32, |_x| log(lit(0.0f32)), "infinite");
    reject!(f32, |_x| atanh(lit(1.0f32)), "infinite");
    reject!(f32, |_x| pow(lit(0.0f32), lit(-1.0f32)), "pow");
    reject!(
        f32,
        |_x| fma(lit(3e38f32), lit(3e38f32), lit(1.0f32)),
        "fma"
    );
    reject!(f32, |_x| length(vec2(lit(3e38f32), lit(3e38f32))), "length");
    reject!(
        f32,
        |_x| dot(
            vec2(lit(3e38f32), lit(1.0f32)),
            vec2(lit(2.0f32), lit(1.0f32))
        ),
        "dot"
    );
    reject!(
        f32,
        |_x| mix(lit(3e38f32), lit(-3e38f32), lit(-1.0f32)),
        "mix"
    );
    reject!(f32, |_x| lit(0x7f80_0000u32).bitcast::<f32>(), "infinite");
    reject!(f32, |_x| lit(0x7fc0_0000u32).bitcast::<f32>(), "NaN");
    reject!(
        Vec2<f32>,
        |_x| vec2(lit(1.0f32), lit(2.0f32)) / vec2(lit(1.0f32), lit(0.0f32)),
        "infinite"
    );
    reject!(
        f16,
        |_x| lit(f16::from_f32(60000.0)) + lit(f16::from_f32(60000.0)),
        "overflows f16"
    );
}

#[test]
fn arguments_outside_a_builtins_domain_are_rejected() {
    reject!(f32, |_x| sqrt(lit(-1.0f32)), "domain [0, +inf]");
    reject!(f32, |_x| log(lit(-1.0f32)), "domain");
    reject!(f32, |_x| log2(lit(-0.5f32)), "domain");
    reject!(f32, |_x| inverse_sqrt(lit(-4.0f32)), "domain");
    reject!(f32, |_x| pow(lit(-2.0f32), lit(0.5f32)), "domain of `pow`");
    reject!(f32, |_x| pow(lit(-2.0f32), lit(2.0f32)), "domain of `pow`");
    reject!(f32, |_x| pow(lit(0.0f32), lit(0.0f32)), "domain of `pow`");
    reject!(f32, |_x| acos(lit(2.0f32)), "domain [-1, 1]");
    reject!(f32, |_x| asin(lit(-1.5f32)), "domain [-1, 1]");
    reject!(f32, |_x| acosh(lit(0.5f32)), "domain [1, +inf]");
    reject!(f32, |_x| atanh(lit(2.0f32)), "domain [-1, 1]");
    reject!(
        Vec2<f32>,
        |_x| normalize(vec2(lit(0.0f32), lit(0.0f32))),
        "zero vector"
    );
    reject!(f16, |_x| sqrt(lit(f16::from_f32(-1.0))), "domain");
}

#[test]
fn ldexp_quantize_and_pack_outside_their_ranges_are_rejected() {
    use wgsl_dsl::exp::decompose::ldexp;
    use wgsl_dsl::exp::packing::{pack2x16float, quantize_to_f16};
    // The exponent above the bias + 1 is an error even when e1 is not constant (§17.5.37).
    reject!(f32, |_x| ldexp(lit(1.0f32), lit(129i32)), "above 128");
    reject!(f32, |x| ldexp(x.clone(), lit(200i32)), "above 128");
    reject!(
        f16,
        |_x| ldexp(lit(f16::from_f32(1.0)), lit(17i32)),
        "above 16"
    );
    reject!(f32, |_x| ldexp(lit(f32::MAX), lit(1i32)), "overflows f32");
    // Outside f16's finite range [-65504, 65504] (§17.5.47, §17.9).
    reject!(
        f32,
        |_x| quantize_to_f16(lit(65505.0f32)),
        "outside the finite range of f16"
    );
    reject!(
        f32,
        |_x| quantize_to_f16(lit(-1e6f32)),
        "outside the finite range of f16"
    );
    reject!(
        u32,
        |_x| pack2x16float(vec2(lit(1.0f32), lit(7e4f32))),
        "outside the finite range of f16"
    );
}

#[test]
fn integer_division_shifts_and_ranges_are_rejected() {
    reject!(i32, |_x| lit(i32::MIN) / lit(-1i32), "overflows i32");
    reject!(i32, |_x| lit(i32::MIN) % lit(-1i32), "overflows i32");
    reject!(
        i32,
        |_x| lit(5i32) / lit(0i32),
        "division by the literal zero"
    );
    reject!(
        u32,
        |_x| lit(5u32) % lit(0u32),
        "remainder by the literal zero"
    );
    // Only the divisor needs to be constant (WGSL spec §8.7).
    reject!(i32, |x| x / lit(0i32), "division by the literal zero");
    reject!(
        i32,
        |x| x % (lit(3i32) - lit(3i32)),
        "remainder by the literal zero"
    );
    reject!(u32, |x| x / (lit(2u32) * lit(0u32)), "division");
    // Shifts: the amount must be below 32 even when the shifted value is not constant (§8.9).
    reject!(u32, |x| x << lit(32u32), "shift by 32u");
    reject!(i32, |x| x >> (lit(16u32) + lit(16u32)), "shift by 32u");
    reject!(u32, |_x| lit(1u32) << lit(33u32), "shift by 33u");
    reject!(i32, |_x| lit(1i32) << lit(31u32), "overflows i32");
    reject!(i32, |_x| lit(3i32) << lit(30u32), "overflows i32");
    reject!(u32, |_x| lit(3u32) << lit(31u32), "overflows u32");
    // clamp's bounds, extractBits/insertBits ranges, smoothstep's edges: the named operands
    // constant suffices.
    reject!(
        f32,
        |x| clamp(x, lit(2.0f32), lit(1.0f32)),
        "low is greater than high"
    );
    reject!(
        i32,
        |x| clamp(x, lit(2i32), lit(-2i32)),
        "low is greater than high"
    );
    reject!(
        u32,
        |_x| clamp(lit(1u32), lit(2u32), lit(0u32)),
        "low is greater than high"
    );
    reject!(
        u32,
        |x| extract_bits(x, lit(30u32), lit(5u32)),
        "offset + count exceeds 32"
    );
    reject!(
        i32,
        |x| insert_bits(x, x, lit(1u32), lit(32u32)),
        "offset + count exceeds 32"
    );
    reject!(
        f32,
        |x| smoothstep(lit(1.0f32), lit(1.0f32), x),
        "edges are equal"
    );
}

/// The lowering folds the identities `x + 0`, `x * 1`, `x - 0`, ... (the operation becomes its
/// other operand); a folded operation of literals keeps its value, so an error WGSL reports in
/// an operation using it is still reported.
#[test]
fn folded_identities_keep_their_value_for_the_operations_using_them() {
    reject!(
        f32,
        |_x| (lit(f32::MAX) * lit(1.0f32)) * lit(2.0f32),
        "overflows f32"
    );
    reject!(
        f32,
        |_x| (lit(1.0f32) - lit(0.0f32)) / (lit(0.0f32) + lit(-0.0f32)),
        "infinite"
    );
    reject!(
        i32,
        |x| x / ((lit(3i32) * lit(1i32)) - lit(3i32)),
        "division by the literal zero"
    );
    reject!(u32, |x| x << (lit(32u32) + lit(0u32)), "shift by 32u");
    reject!(u32, |x| x >> (lit(0u32) | lit(40u32)), "shift by 40u");
}

/// `false && b` and `true || b` do not evaluate `b` (WGSL spec §8.1.1: the short-circuiting
/// operators guard their right-hand side), so what `b` would reject is no error, whether `b`
/// is pure (a literal division by zero) or loads (a literal index out of bounds); where the
/// left operand leaves the result open, `b` is evaluated and rejected.
#[test]
fn short_circuited_right_operands_are_not_evaluated() {
    fn kernel(b: impl Fn(&Exp<u32>) -> Exp<bool>, left: Exp<bool>) -> Result<String, BuildError> {
        let mut k = KernelBuilder::new("guarded", [1, 1, 1]);
        let out = k.storage::<RuntimeArray<u32>, ReadWrite>("out");
        let x = k.let_("x", out.at(1u32).load());
        let v = left.and(b(&x)).or(lit(true).or(b(&x)));
        k.store(&out.at(0u32), v.select(lit(1u32), lit(0u32)));
        k.build().map(|s| s.wgsl)
    }
    let pure = |x: &Exp<u32>| (lit(5i32) / lit(0i32)).gt(x.to_i32());
    let loads = |x: &Exp<u32>| array([lit(1u32), lit(2u32)]).index(lit(7u32)).gt(x.clone());
    for b in [&pure as &dyn Fn(&Exp<u32>) -> Exp<bool>, &loads] {
        let wgsl = kernel(b, lit(false)).unwrap_or_else(|e| panic!("guarded, yet: {e}"));
        assert!(!wgsl.contains("7u") && !wgsl.contains("/ 0"), "{wgsl}");
        let err = kernel(b, lit(true)).expect_err("`true && b` evaluates b");
        assert!(
            matches!(err, BuildError::ConstExpression { .. }),
            "not a const error: {err}"
        );
    }
}

#[test]
fn literal_indices_out_of_bounds_are_rejected() {
    reject!(
        f32,
        |_x| array([lit(1.0f32), lit(2.0f32)]).index(lit(2u32)),
        "out of bounds"
    );
    reject!(
        f32,
        |_x| array([lit(1.0f32), lit(2.0f32)]).index(lit(-1i32)),
        "out of bounds"
    );
    reject!(
        f32,
        |x| vec3(x.clone(), x.clone(), x.clone()).index(lit(3u32)),
        "out of bounds"
    );
    reject!(
        f32,
        |x| vec2(x.clone(), x.clone()).index(lit(1u32) + lit(1u32)),
        "out of bounds"
    );

    // Places: a fixed-size workgroup array, a runtime-sized buffer with a negative index.
    let mut k = KernelBuilder::new("bad", [1, 1, 1]);
    let tile = k.workgroup::<Array<f32, 4>>("tile");
    let line = line!() + 1;
    k.store(&tile.at(lit(2u32) * lit(2u32)), lit(1.0f32));
    assert_rejected_at_line(&k, line, "out of bounds");
    let mut k = KernelBuilder::new("bad", [1, 1, 1]);
    let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
    let line = line!() + 1;
    k.store(&out.at(lit(-1i32)), lit(1.0f32));
    assert_rejected_at_line(&k, line, "negative");
}

/// `k` fails to build with a const-expression error at `line` of this file whose reason
/// contains `needle`.
#[track_caller]
fn assert_rejected_at_line(k: &KernelBuilder, line: u32, needle: &str) {
    match k.build() {
        Err(BuildError::ConstExpression { site, reason, .. }) => {
            assert_eq!((site.file, site.line), (file!(), line), "{reason}");
            assert!(reason.contains(needle), "{reason}");
        }
        other => panic!("{other:?}"),
    }
}

/// What WGSL defines builds, and re-parses: concrete integer overflow wraps (§6.2.4), a `let`
/// is not a const-expression (§8.1.1), float-to-integer conversion clamps (§15.7.6).
#[test]
fn defined_const_expressions_build_and_reparse() {
    let mut k = KernelBuilder::new("fine", [1, 1, 1]);
    let oi = k.storage::<RuntimeArray<i32>, ReadWrite>("oi");
    let ou = k.storage::<RuntimeArray<u32>, ReadWrite>("ou");
    let of = k.storage::<RuntimeArray<f32>, ReadWrite>("of");
    let cases_i: Vec<(Exp<i32>, i32)> = vec![
        (lit(i32::MAX) + lit(1i32), i32::MIN),
        (-lit(i32::MIN), i32::MIN),
        (abs(lit(i32::MIN)), i32::MIN),
        (lit(-1i32) >> lit(31u32), -1),
        (lit(-7i32) / lit(2i32), -3),
        (lit(-7i32) % lit(2i32), -1),
        (lit(1e20f32).to_i32(), 2_147_483_520),
        (lit(-1e20f32).to_i32(), i32::MIN),
        (lit(-3.9f32).to_i32(), -3),
        (lit(u32::MAX).to_i32(), -1),
        (extract_bits(lit(-8i32), lit(2u32), lit(3u32)), -2),
        (
            insert_bits(lit(0i32), lit(-1i32), lit(4u32), lit(4u32)),
            0xf0,
        ),
        (first_leading_bit(lit(-1i32)), -1),
        (first_leading_bit(lit(-16i32)), 3),
        (lit(-1i32) << lit(31u32), i32::MIN),
    ];
    let cases_u: Vec<(Exp<u32>, u32)> = vec![
        (lit(0u32) - lit(1u32), u32::MAX),
        (lit(u32::MAX) + lit(1u32), 0),
        (lit(1u32) << lit(31u32), 1 << 31),
        (lit(-1.0f32).to_u32(), 0),
        (lit(1e20f32).to_u32(), 4_294_967_040),
        (lit(3.9f32).to_u32(), 3),
        (first_trailing_bit(lit(0u32)), u32::MAX),
        (extract_bits(lit(0xf0u32), lit(4u32), lit(28u32)), 0xf),
        (count_leading_zeros(lit(1u32)), 31),
        (reverse_bits(lit(1u32)), 1 << 31),
        (
            dot(vec2(lit(u32::MAX), lit(2u32)), vec2(lit(2u32), lit(3u32))),
            4,
        ),
        (
            wgsl_dsl::exp::packing::pack2x16float(vec2(lit(1.0f32), lit(-2.0f32))),
            0x3c00 | (0xc000 << 16),
        ),
    ];
    let cases_f: Vec<(Exp<f32>, f32)> = vec![
        (lit(-0.0f32) - lit(0.0f32), -0.0),
        (lit(1e-38f32) / lit(1e10f32), 1e-48_f64 as f32),
        (lit(-5.5f32) % lit(2.0f32), -1.5),
        (atan2(lit(0.0f32), lit(0.0f32)), 0.0),
        (round(lit(2.5f32)), 2.0),
        (round(lit(-3.5f32)), -4.0),
        (fract(lit(-1.25f32)), 0.75),
        (sign(lit(-0.0f32)), 0.0),
        (step(lit(1.0f32), lit(1.0f32)), 1.0),
        (saturate(lit(7.0f32)), 1.0),
        (smoothstep(lit(0.0f32), lit(2.0f32), lit(1.0f32)), 0.5),
        (mix(lit(1.0f32), lit(3.0f32), lit(0.25f32)), 1.5),
        (pow(lit(0.0f32), lit(2.0f32)), 0.0),
        (length(lit(-3e38f32)), 3e38),
        (
            distance(
                vec2(lit(1.0f32), lit(1.0f32)),
                vec2(lit(4.0f32), lit(5.0f32)),
            ),
            5.0,
        ),
        (lit(7u32).to_f32(), 7.0),
        (
            wgsl_dsl::exp::decompose::ldexp(lit(1.5f32), lit(3i32)),
            12.0,
        ),
        (
            wgsl_dsl::exp::decompose::ldexp(lit(1.0f32), lit(-149i32)),
            f32::from_bits(1),
        ),
        (
            wgsl_dsl::exp::packing::quantize_to_f16(lit(0.1f32)),
            f16::from_f32(0.1).to_f32(),
        ),
        (
            wgsl_dsl::exp::packing::quantize_to_f16(lit(65504.0f32)),
            65504.0,
        ),
        (
            (mat([
                vec2(lit(1.0f32), lit(2.0f32)),
                vec2(lit(3.0f32), lit(4.0f32)),
            ]) * vec2(lit(1.0f32), lit(1.0f32)))
            .y(),
            6.0,
        ),
        (
            (transpose(mat([
                vec2(lit(1.0f32), lit(2.0f32)),
                vec2(lit(3.0f32), lit(4.0f32)),
            ])) * vec2(lit(1.0f32), lit(0.0f32)))
            .y(),
            3.0,
        ),
    ];
    fold_and_store(&mut k, &oi, cases_i, ConstValue::I32);
    fold_and_store(&mut k, &ou, cases_u, ConstValue::U32);
    fold_and_store(&mut k, &of, cases_f, ConstValue::F32);
    // A `let` is not a const-expression: `y / 0.0` is a run-time division, whose result WGSL
    // leaves indeterminate but does not reject.
    let y = k.let_("y", lit(1.0f32) + lit(0.0f32));
    k.store(&of.at(100u32), y / lit(0.0f32));
    let shader = k.build().expect("defined const-expressions build");
    reparse(&shader.wgsl).expect("re-parses");
}

/// Each case's expression folds to its value (as `value` wraps it) and is stored at
/// `out[case]`, so that the kernel's WGSL holds every one of them.
fn fold_and_store<T: Scalar>(
    k: &mut KernelBuilder,
    out: &Place<RuntimeArray<T>, ReadWrite>,
    cases: Vec<(Exp<T>, T)>,
    value: fn(T) -> ConstValue,
) {
    for (i, (e, want)) in cases.into_iter().enumerate() {
        assert_eq!(
            e.eval_const().unwrap(),
            Some(value(want)),
            "case {i} of the {} cases",
            std::any::type_name::<T>()
        );
        k.store(&out.at(i as u32), e);
    }
}

/// naga's WGSL writer inlines a `let` of a literal, so its uses are const-expressions in the
/// WGSL text: the DSL treats them so.
#[test]
fn a_let_of_a_literal_is_a_literal() {
    let mut k = KernelBuilder::new("bad", [1, 1, 1]);
    let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
    let zero = k.let_("zero", lit(0.0f32));
    let bad = lit(1.0f32) / zero;
    let site = bad.site();
    k.store(&out.at(0u32), bad);
    assert_rejected(k.build().unwrap_err(), site, "infinite");
}

fn reparse(wgsl: &str) -> Result<naga::Module, String> {
    naga::front::wgsl::parse_str(wgsl).map_err(|e| e.emit_to_string(wgsl))
}

// ---------------------------------------------------------------------------------------------
// The property: random expression trees over every operator and built-in.

/// The types trees are built over.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum T {
    F,
    I,
    U,
    B,
    H,
    V2,
    V3,
    V4,
    VB,
    VU,
    M2,
    A3,
}
use T::*;

/// An expression tree: literals, values read from buffers (`Runtime`), operations.
#[derive(Clone, Debug)]
enum Tree {
    F(f32),
    I(i32),
    U(u32),
    B(bool),
    H(f16),
    Runtime(T),
    Op(&'static str, Vec<Tree>),
}

impl Tree {
    fn is_const(&self) -> bool {
        match self {
            Tree::Runtime(_) => false,
            Tree::Op(_, args) => args.iter().all(Tree::is_const),
            _ => true,
        }
    }
}

/// An operation: its name, result type, operand types, whether it is a constructor (used for
/// the leaves of composite types), and how it builds its expression from its operands (taken
/// left to right from `n`).
type Op = (
    &'static str,
    T,
    &'static [T],
    bool,
    fn(&mut dyn FnMut() -> E) -> E,
);

/// The first line of [`OPS`]: errors must point into the table (at the operation that built
/// the failing node).
const OP_FIRST_LINE: u32 = line!();
/// Every operation.
const OPS: &[Op] = &[
    // f32
    ("f_add", F, &[F, F], false, |n| E::F(f(n()) + f(n()))),
    ("f_sub", F, &[F, F], false, |n| E::F(f(n()) - f(n()))),
    ("f_mul", F, &[F, F], false, |n| E::F(f(n()) * f(n()))),
    ("f_div", F, &[F, F], false, |n| E::F(f(n()) / f(n()))),
    ("f_rem", F, &[F, F], false, |n| E::F(f(n()) % f(n()))),
    ("f_neg", F, &[F], false, |n| E::F(-f(n()))),
    ("f_abs", F, &[F], false, |n| E::F(abs(f(n())))),
    ("f_sign", F, &[F], false, |n| E::F(sign(f(n())))),
    ("f_exp", F, &[F], false, |n| E::F(exp(f(n())))),
    ("f_exp2", F, &[F], false, |n| E::F(exp2(f(n())))),
    ("f_log", F, &[F], false, |n| E::F(log(f(n())))),
    ("f_log2", F, &[F], false, |n| E::F(log2(f(n())))),
    ("f_sqrt", F, &[F], false, |n| E::F(sqrt(f(n())))),
    ("f_inverse_sqrt", F, &[F], false, |n| {
        E::F(inverse_sqrt(f(n())))
    }),
    ("f_sin", F, &[F], false, |n| E::F(sin(f(n())))),
    ("f_cos", F, &[F], false, |n| E::F(cos(f(n())))),
    ("f_tan", F, &[F], false, |n| E::F(tan(f(n())))),
    ("f_asin", F, &[F], false, |n| E::F(asin(f(n())))),
    ("f_acos", F, &[F], false, |n| E::F(acos(f(n())))),
    ("f_atan", F, &[F], false, |n| E::F(atan(f(n())))),
    ("f_sinh", F, &[F], false, |n| E::F(sinh(f(n())))),
    ("f_cosh", F, &[F], false, |n| E::F(cosh(f(n())))),
    ("f_tanh", F, &[F], false, |n| E::F(tanh(f(n())))),
    ("f_asinh", F, &[F], false, |n| E::F(asinh(f(n())))),
    ("f_acosh", F, &[F], false, |n| E::F(acosh(f(n())))),
    ("f_atanh", F, &[F], false, |n| E::F(atanh(f(n())))),
    ("f_floor", F, &[F], false, |n| E::F(floor(f(n())))),
    ("f_ceil", F, &[F], false, |n| E::F(ceil(f(n())))),
    ("f_round", F, &[F], false, |n| E::F(round(f(n())))),
    ("f_trunc", F, &[F], false, |n| E::F(trunc(f(n())))),
    ("f_fract", F, &[F], false, |n| E::F(fract(f(n())))),
    ("f_saturate", F, &[F], false, |n| E::F(saturate(f(n())))),
    ("f_radians", F, &[F], false, |n| E::F(radians(f(n())))),
    ("f_degrees", F, &[F], false, |n| E::F(degrees(f(n())))),
    ("f_min", F, &[F, F], false, |n| E::F(min(f(n()), f(n())))),
    ("f_max", F, &[F, F], false, |n| E::F(max(f(n()), f(n())))),
    ("f_pow", F, &[F, F], false, |n| E::F(pow(f(n()), f(n())))),
    ("f_atan2", F, &[F, F], false, |n| {
        E::F(atan2(f(n()), f(n())))
    }),
    ("f_step", F, &[F, F], false, |n| E::F(step(f(n()), f(n())))),
    ("f_clamp", F, &[F, F, F], false, |n| {
        E::F(clamp(f(n()), f(n()), f(n())))
    }),
    ("f_mix", F, &[F, F, F], false, |n| {
        E::F(mix(f(n()), f(n()), f(n())))
    }),
    ("f_smoothstep", F, &[F, F, F], false, |n| {
        E::F(smoothstep(f(n()), f(n()), f(n())))
    }),
    ("f_fma", F, &[F, F, F], false, |n| {
        E::F(fma(f(n()), f(n()), f(n())))
    }),
    ("f_dot", F, &[V2, V2], false, |n| {
        E::F(dot(v2(n()), v2(n())))
    }),
    ("f_length", F, &[F], false, |n| E::F(length(f(n())))),
    ("f_length_v", F, &[V2], false, |n| E::F(length(v2(n())))),
    ("f_distance", F, &[F, F], false, |n| {
        E::F(distance(f(n()), f(n())))
    }),
    ("f_distance_v", F, &[V2, V2], false, |n| {
        E::F(distance(v2(n()), v2(n())))
    }),
    ("f_of_i", F, &[I], false, |n| E::F(i(n()).to_f32())),
    ("f_of_u", F, &[U], false, |n| E::F(u(n()).to_f32())),
    ("f_of_b", F, &[B], false, |n| E::F(b(n()).to_f32())),
    ("f_bits_u", F, &[U], false, |n| {
        E::F(u(n()).bitcast::<f32>())
    }),
    ("f_bits_i", F, &[I], false, |n| {
        E::F(i(n()).bitcast::<f32>())
    }),
    ("f_v2x", F, &[V2], false, |n| E::F(v2(n()).x())),
    ("f_v3z", F, &[V3], false, |n| E::F(v3(n()).z())),
    ("f_v4w", F, &[V4], false, |n| E::F(v4(n()).w())),
    ("f_a3_u", F, &[A3, U], false, |n| {
        E::F(a3(n()).index(u(n())))
    }),
    ("f_a3_i", F, &[A3, I], false, |n| {
        E::F(a3(n()).index(i(n())))
    }),
    ("f_v2_idx", F, &[V2, U], false, |n| {
        E::F(v2(n()).index(u(n())))
    }),
    ("f_select", F, &[F, F, B], false, |n| {
        E::F(select(f(n()), f(n()), b(n())))
    }),
    ("f_zero", F, &[], false, |_| E::F(Exp::zero())),
    // i32
    ("i_add", I, &[I, I], false, |n| E::I(i(n()) + i(n()))),
    ("i_sub", I, &[I, I], false, |n| E::I(i(n()) - i(n()))),
    ("i_mul", I, &[I, I], false, |n| E::I(i(n()) * i(n()))),
    ("i_div", I, &[I, I], false, |n| E::I(i(n()) / i(n()))),
    ("i_rem", I, &[I, I], false, |n| E::I(i(n()) % i(n()))),
    ("i_and", I, &[I, I], false, |n| E::I(i(n()) & i(n()))),
    ("i_or", I, &[I, I], false, |n| E::I(i(n()) | i(n()))),
    ("i_xor", I, &[I, I], false, |n| E::I(i(n()) ^ i(n()))),
    ("i_shl", I, &[I, U], false, |n| E::I(i(n()) << u(n()))),
    ("i_shr", I, &[I, U], false, |n| E::I(i(n()) >> u(n()))),
    ("i_neg", I, &[I], false, |n| E::I(-i(n()))),
    ("i_not", I, &[I], false, |n| E::I(!i(n()))),
    ("i_abs", I, &[I], false, |n| E::I(abs(i(n())))),
    ("i_sign", I, &[I], false, |n| E::I(sign(i(n())))),
    ("i_count_one_bits", I, &[I], false, |n| {
        E::I(count_one_bits(i(n())))
    }),
    ("i_clz", I, &[I], false, |n| {
        E::I(count_leading_zeros(i(n())))
    }),
    ("i_ctz", I, &[I], false, |n| {
        E::I(count_trailing_zeros(i(n())))
    }),
    ("i_flb", I, &[I], false, |n| E::I(first_leading_bit(i(n())))),
    ("i_ftb", I, &[I], false, |n| {
        E::I(first_trailing_bit(i(n())))
    }),
    ("i_reverse_bits", I, &[I], false, |n| {
        E::I(reverse_bits(i(n())))
    }),
    ("i_min", I, &[I, I], false, |n| E::I(min(i(n()), i(n())))),
    ("i_max", I, &[I, I], false, |n| E::I(max(i(n()), i(n())))),
    ("i_clamp", I, &[I, I, I], false, |n| {
        E::I(clamp(i(n()), i(n()), i(n())))
    }),
    ("i_extract", I, &[I, U, U], false, |n| {
        E::I(extract_bits(i(n()), u(n()), u(n())))
    }),
    ("i_insert", I, &[I, I, U, U], false, |n| {
        E::I(insert_bits(i(n()), i(n()), u(n()), u(n())))
    }),
    ("i_of_f", I, &[F], false, |n| E::I(f(n()).to_i32())),
    ("i_of_u", I, &[U], false, |n| E::I(u(n()).to_i32())),
    ("i_of_b", I, &[B], false, |n| E::I(b(n()).to_i32())),
    ("i_bits_u", I, &[U], false, |n| {
        E::I(u(n()).bitcast::<i32>())
    }),
    ("i_bits_f", I, &[F], false, |n| {
        E::I(f(n()).bitcast::<i32>())
    }),
    ("i_select", I, &[I, I, B], false, |n| {
        E::I(select(i(n()), i(n()), b(n())))
    }),
    ("i_zero", I, &[], false, |_| E::I(Exp::zero())),
    // u32
    ("u_add", U, &[U, U], false, |n| E::U(u(n()) + u(n()))),
    ("u_sub", U, &[U, U], false, |n| E::U(u(n()) - u(n()))),
    ("u_mul", U, &[U, U], false, |n| E::U(u(n()) * u(n()))),
    ("u_div", U, &[U, U], false, |n| E::U(u(n()) / u(n()))),
    ("u_rem", U, &[U, U], false, |n| E::U(u(n()) % u(n()))),
    ("u_and", U, &[U, U], false, |n| E::U(u(n()) & u(n()))),
    ("u_or", U, &[U, U], false, |n| E::U(u(n()) | u(n()))),
    ("u_xor", U, &[U, U], false, |n| E::U(u(n()) ^ u(n()))),
    ("u_shl", U, &[U, U], false, |n| E::U(u(n()) << u(n()))),
    ("u_shr", U, &[U, U], false, |n| E::U(u(n()) >> u(n()))),
    ("u_not", U, &[U], false, |n| E::U(!u(n()))),
    ("u_abs", U, &[U], false, |n| E::U(abs(u(n())))),
    ("u_count_one_bits", U, &[U], false, |n| {
        E::U(count_one_bits(u(n())))
    }),
    ("u_clz", U, &[U], false, |n| {
        E::U(count_leading_zeros(u(n())))
    }),
    ("u_ctz", U, &[U], false, |n| {
        E::U(count_trailing_zeros(u(n())))
    }),
    ("u_flb", U, &[U], false, |n| E::U(first_leading_bit(u(n())))),
    ("u_ftb", U, &[U], false, |n| {
        E::U(first_trailing_bit(u(n())))
    }),
    ("u_reverse_bits", U, &[U], false, |n| {
        E::U(reverse_bits(u(n())))
    }),
    ("u_min", U, &[U, U], false, |n| E::U(min(u(n()), u(n())))),
    ("u_max", U, &[U, U], false, |n| E::U(max(u(n()), u(n())))),
    ("u_clamp", U, &[U, U, U], false, |n| {
        E::U(clamp(u(n()), u(n()), u(n())))
    }),
    ("u_extract", U, &[U, U, U], false, |n| {
        E::U(extract_bits(u(n()), u(n()), u(n())))
    }),
    ("u_insert", U, &[U, U, U, U], false, |n| {
        E::U(insert_bits(u(n()), u(n()), u(n()), u(n())))
    }),
    ("u_of_f", U, &[F], false, |n| E::U(f(n()).to_u32())),
    ("u_of_i", U, &[I], false, |n| E::U(i(n()).to_u32())),
    ("u_of_b", U, &[B], false, |n| E::U(b(n()).to_u32())),
    ("u_bits_i", U, &[I], false, |n| {
        E::U(i(n()).bitcast::<u32>())
    }),
    ("u_bits_f", U, &[F], false, |n| {
        E::U(f(n()).bitcast::<u32>())
    }),
    ("u_dot", U, &[VU, VU], false, |n| {
        E::U(dot(vu(n()), vu(n())))
    }),
    ("u_vux", U, &[VU], false, |n| E::U(vu(n()).x())),
    ("u_select", U, &[U, U, B], false, |n| {
        E::U(select(u(n()), u(n()), b(n())))
    }),
    ("u_zero", U, &[], false, |_| E::U(Exp::zero())),
    // bool
    ("b_lt_f", B, &[F, F], false, |n| E::B(f(n()).lt(f(n())))),
    ("b_le_f", B, &[F, F], false, |n| E::B(f(n()).le(f(n())))),
    ("b_gt_f", B, &[F, F], false, |n| E::B(f(n()).gt(f(n())))),
    ("b_ge_f", B, &[F, F], false, |n| E::B(f(n()).ge(f(n())))),
    ("b_eq_f", B, &[F, F], false, |n| E::B(f(n()).eq(f(n())))),
    ("b_ne_f", B, &[F, F], false, |n| E::B(f(n()).ne(f(n())))),
    ("b_lt_i", B, &[I, I], false, |n| E::B(i(n()).lt(i(n())))),
    ("b_eq_i", B, &[I, I], false, |n| E::B(i(n()).eq(i(n())))),
    ("b_ge_u", B, &[U, U], false, |n| E::B(u(n()).ge(u(n())))),
    ("b_ne_u", B, &[U, U], false, |n| E::B(u(n()).ne(u(n())))),
    ("b_and", B, &[B, B], false, |n| E::B(b(n()).and(b(n())))),
    ("b_or", B, &[B, B], false, |n| E::B(b(n()).or(b(n())))),
    ("b_not", B, &[B], false, |n| E::B(b(n()).not())),
    ("b_eq_b", B, &[B, B], false, |n| E::B(b(n()).eq(b(n())))),
    ("b_any", B, &[VB], false, |n| E::B(vb(n()).any())),
    ("b_all", B, &[VB], false, |n| E::B(vb(n()).all())),
    ("b_of_f", B, &[F], false, |n| E::B(f(n()).to_bool())),
    ("b_of_i", B, &[I], false, |n| E::B(i(n()).to_bool())),
    ("b_of_u", B, &[U], false, |n| E::B(u(n()).to_bool())),
    ("b_select", B, &[B, B, B], false, |n| {
        E::B(select(b(n()), b(n()), b(n())))
    }),
    ("b_vbx", B, &[VB], false, |n| E::B(vb(n()).x())),
    ("b_zero", B, &[], false, |_| E::B(Exp::zero())),
    // f16
    ("h_add", H, &[H, H], false, |n| E::H(h(n()) + h(n()))),
    ("h_sub", H, &[H, H], false, |n| E::H(h(n()) - h(n()))),
    ("h_mul", H, &[H, H], false, |n| E::H(h(n()) * h(n()))),
    ("h_div", H, &[H, H], false, |n| E::H(h(n()) / h(n()))),
    ("h_neg", H, &[H], false, |n| E::H(-h(n()))),
    ("h_sqrt", H, &[H], false, |n| E::H(sqrt(h(n())))),
    ("h_exp", H, &[H], false, |n| E::H(exp(h(n())))),
    ("h_log", H, &[H], false, |n| E::H(log(h(n())))),
    ("h_abs", H, &[H], false, |n| E::H(abs(h(n())))),
    ("h_min", H, &[H, H], false, |n| E::H(min(h(n()), h(n())))),
    ("h_fma", H, &[H, H, H], false, |n| {
        E::H(fma(h(n()), h(n()), h(n())))
    }),
    // vec2<bool>
    ("vb_new", VB, &[B, B], true, |n| E::VB(vec2(b(n()), b(n())))),
    ("vb_lt", VB, &[V2, V2], false, |n| {
        E::VB(v2(n()).lt(v2(n())))
    }),
    ("vb_select", VB, &[VB, VB, B], false, |n| {
        E::VB(select(vb(n()), vb(n()), b(n())))
    }),
    // vec2<u32>
    ("vu_new", VU, &[U, U], true, |n| E::VU(vec2(u(n()), u(n())))),
    ("vu_add", VU, &[VU, VU], false, |n| E::VU(vu(n()) + vu(n()))),
    ("vu_div", VU, &[VU, VU], false, |n| E::VU(vu(n()) / vu(n()))),
    ("vu_shl", VU, &[VU, VU], false, |n| {
        E::VU(vu(n()) << vu(n()))
    }),
    // vec2<f32>
    ("v2_new", V2, &[F, F], true, |n| E::V2(vec2(f(n()), f(n())))),
    ("v2_splat", V2, &[F], true, |n| {
        E::V2(Exp::<Vec2<f32>>::splat(f(n())))
    }),
    ("v2_zero", V2, &[], true, |_| E::V2(Exp::zero())),
    ("v2_add", V2, &[V2, V2], false, |n| E::V2(v2(n()) + v2(n()))),
    ("v2_sub", V2, &[V2, V2], false, |n| E::V2(v2(n()) - v2(n()))),
    ("v2_mul", V2, &[V2, V2], false, |n| E::V2(v2(n()) * v2(n()))),
    ("v2_div", V2, &[V2, V2], false, |n| E::V2(v2(n()) / v2(n()))),
    ("v2_rem", V2, &[V2, V2], false, |n| E::V2(v2(n()) % v2(n()))),
    ("v2_muls", V2, &[V2, F], false, |n| E::V2(v2(n()) * f(n()))),
    ("v2_sdiv", V2, &[F, V2], false, |n| E::V2(f(n()) / v2(n()))),
    ("v2_neg", V2, &[V2], false, |n| E::V2(-v2(n()))),
    ("v2_normalize", V2, &[V2], false, |n| {
        E::V2(normalize(v2(n())))
    }),
    ("v2_sqrt", V2, &[V2], false, |n| E::V2(sqrt(v2(n())))),
    ("v2_min", V2, &[V2, V2], false, |n| {
        E::V2(min(v2(n()), v2(n())))
    }),
    ("v2_clamp", V2, &[V2, V2, V2], false, |n| {
        E::V2(clamp(v2(n()), v2(n()), v2(n())))
    }),
    ("v2_mix", V2, &[V2, V2, V2], false, |n| {
        E::V2(mix(v2(n()), v2(n()), v2(n())))
    }),
    ("v2_mv", V2, &[M2, V2], false, |n| E::V2(m2(n()) * v2(n()))),
    ("v2_vm", V2, &[V2, M2], false, |n| E::V2(v2(n()) * m2(n()))),
    ("v2_xy3", V2, &[V3], false, |n| E::V2(v3(n()).xy())),
    ("v2_select", V2, &[V2, V2, VB], false, |n| {
        let (r, a, c) = (v2(n()), v2(n()), vb(n()));
        E::V2(c.select(a, r))
    }),
    ("v2_select_s", V2, &[V2, V2, B], false, |n| {
        E::V2(select(v2(n()), v2(n()), b(n())))
    }),
    // vec3<f32>, vec4<f32>
    ("v3_new", V3, &[F, F, F], true, |n| {
        E::V3(vec3(f(n()), f(n()), f(n())))
    }),
    ("v3_zero", V3, &[], true, |_| E::V3(Exp::zero())),
    ("v3_cross", V3, &[V3, V3], false, |n| {
        E::V3(cross(v3(n()), v3(n())))
    }),
    ("v3_xyz", V3, &[V4], false, |n| E::V3(v4(n()).xyz())),
    ("v4_new", V4, &[F, F, F, F], true, |n| {
        E::V4(vec4(f(n()), f(n()), f(n()), f(n())))
    }),
    ("v4_splat", V4, &[F], true, |n| {
        E::V4(Exp::<Vec4<f32>>::splat(f(n())))
    }),
    // mat2x2<f32>
    ("m2_new", M2, &[V2, V2], true, |n| {
        E::M2(mat([v2(n()), v2(n())]))
    }),
    ("m2_zero", M2, &[], true, |_| E::M2(Exp::zero())),
    ("m2_add", M2, &[M2, M2], false, |n| E::M2(m2(n()) + m2(n()))),
    ("m2_sub", M2, &[M2, M2], false, |n| E::M2(m2(n()) - m2(n()))),
    ("m2_mm", M2, &[M2, M2], false, |n| E::M2(m2(n()) * m2(n()))),
    ("m2_ms", M2, &[M2, F], false, |n| E::M2(m2(n()) * f(n()))),
    ("m2_sm", M2, &[F, M2], false, |n| E::M2(f(n()) * m2(n()))),
    ("m2_t", M2, &[M2], false, |n| E::M2(transpose(m2(n())))),
    // array<f32, 3>
    ("a3_new", A3, &[F, F, F], true, |n| {
        E::A3(array([f(n()), f(n()), f(n())]))
    }),
    ("a3_zero", A3, &[], true, |_| E::A3(Exp::zero())),
];
const OP_LAST_LINE: u32 = line!();

/// A built expression, of one of the types.
enum E {
    F(Exp<f32>),
    I(Exp<i32>),
    U(Exp<u32>),
    B(Exp<bool>),
    H(Exp<f16>),
    V2(Exp<Vec2<f32>>),
    V3(Exp<Vec3<f32>>),
    V4(Exp<Vec4<f32>>),
    VB(Exp<Vec2<bool>>),
    VU(Exp<Vec2<u32>>),
    M2(Exp<Mat2x2>),
    A3(Exp<Array<f32, 3>>),
}

macro_rules! take {
    ($($f:ident: $v:ident => $t:ty;)*) => {$(
        fn $f(e: E) -> Exp<$t> {
            match e {
                E::$v(x) => x,
                _ => unreachable!("operand of the wrong type"),
            }
        }
    )*};
}
take! {
    f: F => f32; i: I => i32; u: U => u32; b: B => bool; h: H => f16; v2: V2 => Vec2<f32>;
    v3: V3 => Vec3<f32>; v4: V4 => Vec4<f32>; vb: VB => Vec2<bool>; vu: VU => Vec2<u32>;
    m2: M2 => Mat2x2; a3: A3 => Array<f32, 3>;
}

/// Values read from buffers, for `Tree::Runtime` leaves.
struct Rt {
    f: Exp<f32>,
    i: Exp<i32>,
    u: Exp<u32>,
    b: Exp<bool>,
}

fn build(t: &Tree, rt: &Rt) -> E {
    match t {
        Tree::F(v) => E::F(lit(*v)),
        Tree::I(v) => E::I(lit(*v)),
        Tree::U(v) => E::U(lit(*v)),
        Tree::B(v) => E::B(lit(*v)),
        Tree::H(v) => E::H(lit(*v)),
        Tree::Runtime(ty) => match ty {
            F => E::F(rt.f.clone()),
            I => E::I(rt.i.clone()),
            U => E::U(rt.u.clone()),
            _ => E::B(rt.b.clone()),
        },
        Tree::Op(name, args) => {
            let mut a = args
                .iter()
                .map(|t| build(t, rt))
                .collect::<Vec<_>>()
                .into_iter();
            let mut n = move || a.next().expect("operand");
            op(name, &mut n)
        }
    }
}

/// Builds operation `name` of [`OPS`] from the operands `n` gives.
fn op(name: &str, n: &mut dyn FnMut() -> E) -> E {
    match OPS.iter().find(|o| o.0 == name) {
        Some((.., build)) => build(n),
        None => unreachable!("no operation {name}"),
    }
}

/// Build the kernel storing `tree` to `out[0]`; also return the DSL's value of what is stored.
fn kernel(tree: &Tree) -> (KernelBuilder, Result<Option<ConstValue>, BuildError>) {
    let mut k = KernelBuilder::new("tree", [1, 1, 1]);
    let in_f = k.storage::<RuntimeArray<f32>, ReadOnly>("in_f");
    let in_i = k.storage::<RuntimeArray<i32>, ReadOnly>("in_i");
    let in_u = k.storage::<RuntimeArray<u32>, ReadOnly>("in_u");
    let rt = Rt {
        f: in_f.at(0u32).load(),
        i: in_i.at(0u32).load(),
        u: in_u.at(0u32).load(),
        b: in_u.at(1u32).load().gt(5u32),
    };
    macro_rules! store {
        ($t:ty, $e:expr) => {{
            let e: Exp<$t> = $e;
            let out = k.storage::<RuntimeArray<$t>, ReadWrite>("out");
            k.store(&out.at(0u32), e.clone());
            e.eval_const()
        }};
    }
    let value = match build(tree, &rt) {
        E::F(e) => store!(f32, e),
        E::I(e) => store!(i32, e),
        E::U(e) => store!(u32, e),
        E::B(e) => store!(u32, e.select(1u32, 0u32)),
        E::H(e) => store!(f16, e),
        E::V2(e) => store!(Vec2<f32>, e),
        E::V3(e) => store!(Vec3<f32>, e),
        E::V4(e) => store!(Vec4<f32>, e),
        E::VB(e) => store!(
            Vec2<u32>,
            e.select(Exp::<Vec2<u32>>::splat(1u32), Exp::<Vec2<u32>>::zero())
        ),
        E::VU(e) => store!(Vec2<u32>, e),
        E::M2(e) => store!(Mat2x2, e),
        E::A3(e) => store!(Array<f32, 3>, e),
    };
    (k, value)
}

/// The scalar components of a value, as f64 (bools as 0 and 1).
fn flat(v: &ConstValue, out: &mut Vec<f64>) {
    match v {
        ConstValue::Bool(b) => out.push(f64::from(u8::from(*b))),
        ConstValue::I32(x) => out.push(f64::from(*x)),
        ConstValue::U32(x) => out.push(f64::from(*x)),
        ConstValue::F32(x) => out.push(f64::from(*x)),
        ConstValue::F16(x) => out.push(x.to_f64()),
        ConstValue::Composite(parts) => parts.iter().for_each(|p| flat(p, out)),
        _ => unreachable!(),
    }
}

/// The value naga's front end folded `h` to, if it folded it (a tree of literals, compositions,
/// zero values and splats).
fn naga_value(
    module: &naga::Module,
    exprs: &naga::Arena<naga::Expression>,
    h: naga::Handle<naga::Expression>,
    out: &mut Vec<f64>,
) -> bool {
    use naga::{Expression as Ex, Literal as L, TypeInner as TI};
    match &exprs[h] {
        Ex::Literal(l) => out.push(match *l {
            L::F32(x) => f64::from(x),
            L::F16(x) => x.to_f64(),
            L::I32(x) => f64::from(x),
            L::U32(x) => f64::from(x),
            L::Bool(x) => f64::from(u8::from(x)),
            _ => return false,
        }),
        Ex::Compose { components, .. } => {
            return components
                .iter()
                .all(|c| naga_value(module, exprs, *c, out));
        }
        Ex::Splat { size, value } => {
            for _ in 0..*size as usize {
                if !naga_value(module, exprs, *value, out) {
                    return false;
                }
            }
        }
        Ex::ZeroValue(ty) => {
            let n = match module.types[*ty].inner {
                TI::Scalar(_) => 1,
                TI::Vector { size, .. } => size as usize,
                TI::Matrix { columns, rows, .. } => columns as usize * rows as usize,
                TI::Array {
                    size: naga::ArraySize::Constant(n),
                    ..
                } => n.get() as usize,
                _ => return false,
            };
            out.extend(std::iter::repeat_n(0.0, n));
        }
        _ => return false,
    }
    true
}

/// What [`check`] saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Outcome {
    /// A located `BuildError::ConstExpression`.
    Rejected,
    /// Built and re-parsed; the value folded by naga equals the DSL's.
    SameValue,
    /// Built and re-parsed; naga left the value unfolded (a built-in its evaluator lacks).
    NotFolded,
    /// Built and re-parsed; the tree reads buffers.
    Runtime,
}

/// Check one tree: a located error, or WGSL that re-parses and whose value (naga's evaluation
/// of the re-parsed text) is the DSL's.
fn check(tree: &Tree) -> Result<Outcome, TestCaseError> {
    let (k, value) = kernel(tree);
    match k.build() {
        Err(err) => {
            let BuildError::ConstExpression { site, .. } = &err else {
                return Err(TestCaseError::fail(format!("not a const error: {err}")));
            };
            prop_assert!(
                site.file == file!() && (OP_FIRST_LINE..=OP_LAST_LINE).contains(&site.line),
                "error not at an operation: {err}"
            );
            // The tree alone reports the same error (operands first, left to right).
            prop_assert_eq!(value, Err(err));
            Ok(Outcome::Rejected)
        }
        Ok(shader) => {
            let module = reparse(&shader.wgsl).map_err(|e| {
                TestCaseError::fail(format!(
                    "emitted WGSL does not re-parse:\n{}\n{e}",
                    shader.wgsl
                ))
            })?;
            let value = value.map_err(|e| TestCaseError::fail(format!("eval_const: {e}")))?;
            if !tree.is_const() {
                return Ok(Outcome::Runtime);
            }
            let Some(value) = value else {
                return Err(TestCaseError::fail("a literal-only tree has no value"));
            };
            let func = &module.entry_points[0].function;
            let stored = func.body.iter().find_map(|s| match s {
                naga::Statement::Store { value, .. } => Some(*value),
                _ => None,
            });
            let mut theirs = Vec::new();
            if let Some(h) = stored
                && naga_value(&module, &func.expressions, h, &mut theirs)
            {
                let mut ours = Vec::new();
                flat(&value, &mut ours);
                prop_assert_eq!(ours.len(), theirs.len());
                for (a, b) in ours.iter().zip(&theirs) {
                    prop_assert!(
                        a == b,
                        "DSL value {} vs naga's {:?}\n{}",
                        value,
                        theirs,
                        shader.wgsl
                    );
                }
                Ok(Outcome::SameValue)
            } else {
                Ok(Outcome::NotFolded)
            }
        }
    }
}

fn f32_lit() -> BoxedStrategy<f32> {
    let edges = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        2.0,
        0.5,
        -2.5,
        3.75,
        10.0,
        88.0,
        89.0,
        100.0,
        1e10,
        -1e10,
        1e30,
        3e38,
        -3e38,
        f32::MAX,
        f32::MIN_POSITIVE,
        1e-40,
        0.1,
        std::f32::consts::PI,
        1.5707964,
    ];
    prop_oneof![
        3 => proptest::sample::select(edges),
        1 => -1000.0f32..1000.0,
        1 => any::<f32>().prop_filter("finite", |v| v.is_finite()),
    ]
    .boxed()
}

fn i32_lit() -> BoxedStrategy<i32> {
    let edges = vec![
        0,
        1,
        -1,
        2,
        3,
        7,
        -7,
        31,
        32,
        i32::MAX,
        i32::MIN,
        1 << 30,
        -(1 << 30),
    ];
    prop_oneof![3 => proptest::sample::select(edges), 1 => -40i32..40, 1 => any::<i32>()].boxed()
}

fn u32_lit() -> BoxedStrategy<u32> {
    let edges = vec![0, 1, 2, 3, 5, 16, 30, 31, 32, 33, u32::MAX, 1 << 31, 65536];
    prop_oneof![3 => proptest::sample::select(edges), 1 => 0u32..40, 1 => any::<u32>()].boxed()
}

fn f16_lit() -> BoxedStrategy<f16> {
    let edges: Vec<f16> = [
        0.0f32, -0.0, 1.0, -1.0, 2.0, 0.5, 3.0, 100.0, 300.0, 60000.0, 65504.0,
    ]
    .iter()
    .map(|v| f16::from_f32(*v))
    .collect();
    proptest::sample::select(edges).boxed()
}

const ALL: [T; 12] = [F, I, U, B, H, V2, V3, V4, VB, VU, M2, A3];
const DEPTH: usize = 4;

/// Strategies for trees of each type, of depth at most `DEPTH`.
fn strategies() -> HashMap<T, BoxedStrategy<Tree>> {
    let op_strategy = |name: &'static str, args: &[T], level: &HashMap<T, BoxedStrategy<Tree>>| {
        let args: Vec<BoxedStrategy<Tree>> = args.iter().map(|a| level[a].clone()).collect();
        args.prop_map(move |v| Tree::Op(name, v)).boxed()
    };
    // Depth 0: literals and run-time values for scalars; constructors of them for the others.
    let mut level: HashMap<T, BoxedStrategy<Tree>> = HashMap::new();
    let runtime = |t: T| Just(Tree::Runtime(t));
    level.insert(
        F,
        prop_oneof![9 => f32_lit().prop_map(Tree::F), 1 => runtime(F)].boxed(),
    );
    level.insert(
        I,
        prop_oneof![9 => i32_lit().prop_map(Tree::I), 1 => runtime(I)].boxed(),
    );
    level.insert(
        U,
        prop_oneof![9 => u32_lit().prop_map(Tree::U), 1 => runtime(U)].boxed(),
    );
    level.insert(
        B,
        prop_oneof![9 => any::<bool>().prop_map(Tree::B), 1 => runtime(B)].boxed(),
    );
    level.insert(H, f16_lit().prop_map(Tree::H).boxed());
    for (_, t, _, ctor, _) in OPS {
        if *ctor && !level.contains_key(t) {
            let options: Vec<BoxedStrategy<Tree>> = OPS
                .iter()
                .filter(|(_, r, a, c, _)| r == t && *c && a.iter().all(|a| level.contains_key(a)))
                .map(|(name, _, args, ..)| op_strategy(name, args, &level))
                .collect();
            level.insert(*t, Union::new(options).boxed());
        }
    }
    for _ in 0..DEPTH {
        let mut next = HashMap::new();
        for t in ALL {
            let mut options: Vec<(u32, BoxedStrategy<Tree>)> = Vec::new();
            for (name, r, args, ..) in OPS {
                if *r == t {
                    options.push((1, op_strategy(name, args, &level)));
                }
            }
            // As likely a leaf as an operation.
            options.push((options.len() as u32, level[&t].clone()));
            next.insert(t, Union::new_weighted(options).boxed());
        }
        level = next;
    }
    level
}

fn any_tree() -> BoxedStrategy<Tree> {
    let s = strategies();
    Union::new(ALL.iter().map(|t| s[t].clone())).boxed()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn const_trees_are_rejected_at_their_site_or_reparse_to_the_same_value(tree in any_tree()) {
        check(&tree)?;
    }
}

/// The trees are neither all rejected nor all accepted: each outcome is a sizeable share (at
/// least 1 in 40; since `false && b` and `true || b` fold without `b`, 5% of 400 trees were
/// "not folded", and 4.75% after).
#[test]
fn random_trees_reach_every_outcome() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = any_tree();
    let mut seen: HashMap<Outcome, u32> = HashMap::new();
    let n = 400;
    for _ in 0..n {
        let tree = strategy.new_tree(&mut runner).unwrap().current();
        *seen.entry(check(&tree).unwrap()).or_default() += 1;
    }
    eprintln!("outcomes of {n} trees: {seen:?}");
    for o in [
        Outcome::Rejected,
        Outcome::SameValue,
        Outcome::NotFolded,
        Outcome::Runtime,
    ] {
        assert!(
            seen.get(&o).copied().unwrap_or(0) >= n / 40,
            "{o:?}: {seen:?}"
        );
    }
}

/// Every operation of the table is reachable by the property test.
#[test]
fn the_property_covers_every_operation() {
    let rt_leaf = |t: T| match t {
        F => Tree::F(1.5),
        I => Tree::I(3),
        U => Tree::U(2),
        B => Tree::B(true),
        H => Tree::H(f16::from_f32(1.5)),
        _ => unreachable!(),
    };
    fn sample(t: T, leaf: &dyn Fn(T) -> Tree) -> Tree {
        match t {
            F | I | U | B | H => leaf(t),
            _ => {
                let (name, _, args, ..) = OPS.iter().find(|(_, r, _, c, _)| *r == t && *c).unwrap();
                Tree::Op(name, args.iter().map(|a| sample(*a, leaf)).collect())
            }
        }
    }
    for (name, _, args, ..) in OPS {
        let tree = Tree::Op(name, args.iter().map(|a| sample(*a, &rt_leaf)).collect());
        check(&tree).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

// ---------------------------------------------------------------------------------------------
// The DSL's values against the GPU's: the same expressions, evaluated by the device (Mesa
// lavapipe in CI), including the built-ins naga's front end does not fold.

/// A case: the expression's bits as stored, and whether a float must match exactly (else a
/// relative 4e-5, or WGSL's 4096 ULP for the inverse tangent family).
struct GpuCase {
    name: &'static str,
    stored: Exp<u32>,
    value: ConstValue,
    exact: bool,
}

/// `atan` and `atan2` are accurate to 4096 ULP on f32, and `asin`, `acos` inherit that bound
/// from `atan2` (WGSL spec §15.7.3, "Accuracy of Concrete Floating Point Expressions").
fn within_4096_ulp(got: f32, want: f32) -> bool {
    let ulp = f32::EPSILON * 2f32.powi(want.abs().log2().floor() as i32);
    (got - want).abs() <= 4096.0 * ulp
}

fn float_case(name: &'static str, e: Exp<f32>, exact: bool) -> GpuCase {
    let value = e.eval_const().unwrap().unwrap();
    GpuCase {
        name,
        stored: e.bitcast::<u32>(),
        value,
        exact,
    }
}

fn int_case(name: &'static str, e: Exp<i32>) -> GpuCase {
    let value = e.eval_const().unwrap().unwrap();
    GpuCase {
        name,
        stored: e.bitcast::<u32>(),
        value,
        exact: true,
    }
}

fn uint_case(name: &'static str, e: Exp<u32>) -> GpuCase {
    let value = e.eval_const().unwrap().unwrap();
    GpuCase {
        name,
        stored: e,
        value,
        exact: true,
    }
}

#[test]
fn const_values_match_the_gpu() {
    let l = |v: f32| lit(v);
    let m = || mat([vec2(l(1.5), l(-2.0)), vec2(l(0.25), l(3.0))]);
    let cases = vec![
        float_case("mix", mix(l(-2.0), l(8.0), l(0.7)), false),
        float_case("smoothstep", smoothstep(l(0.0), l(2.0), l(0.5)), false),
        float_case(
            "smoothstep down",
            smoothstep(l(1.0), l(-1.0), l(0.2)),
            false,
        ),
        float_case(
            "transpose",
            (transpose(m()) * vec2(l(1.0), l(2.0))).x(),
            false,
        ),
        float_case("m * v", (m() * vec2(l(3.0), l(-1.0))).y(), false),
        float_case("v * m", (vec2(l(3.0), l(-1.0)) * m()).x(), false),
        float_case("m * m", ((m() * m()) * vec2(l(1.0), l(1.0))).y(), false),
        float_case(
            "m - m",
            ((m() - m() * l(2.0)) * vec2(l(1.0), l(1.0))).x(),
            false,
        ),
        float_case("fma", fma(l(1.5), l(2.25), l(-0.75)), false),
        float_case("pow", pow(l(2.0), l(10.5)), false),
        float_case("sqrt", sqrt(l(2.0)), false),
        float_case("exp", exp(l(1.5)), false),
        float_case("exp2", exp2(l(-3.25)), false),
        float_case("log", log(l(7.5)), false),
        float_case("log2", log2(l(0.3)), false),
        float_case("sin", sin(l(1.0)), false),
        float_case("cos", cos(l(-2.0)), false),
        float_case("tan", tan(l(0.5)), false),
        float_case("asin", asin(l(0.5)), false),
        float_case("acos", acos(l(-0.25)), false),
        float_case("atan", atan(l(3.0)), false),
        float_case("atan2", atan2(l(1.0), l(-1.0)), false),
        float_case("sinh", sinh(l(1.25)), false),
        float_case("cosh", cosh(l(-0.5)), false),
        float_case("tanh", tanh(l(0.5)), false),
        float_case("asinh", asinh(l(2.0)), false),
        float_case("acosh", acosh(l(2.0)), false),
        float_case("atanh", atanh(l(0.5)), false),
        float_case("inverseSqrt", inverse_sqrt(l(4.0)), false),
        float_case("degrees", degrees(l(1.0)), false),
        float_case("radians", radians(l(90.0)), false),
        float_case("length", length(vec2(l(3.0), l(4.0))), false),
        float_case(
            "distance",
            distance(vec2(l(1.0), l(1.0)), vec2(l(4.0), l(5.0))),
            false,
        ),
        float_case("normalize", normalize(vec2(l(3.0), l(4.0))).y(), false),
        float_case(
            "cross",
            cross(vec3(l(1.0), l(2.0), l(3.0)), vec3(l(-1.0), l(0.5), l(2.0))).z(),
            false,
        ),
        float_case(
            "dot",
            dot(vec2(l(1.5), l(2.0)), vec2(l(-4.0), l(0.25))),
            true,
        ),
        float_case("fract", fract(l(-1.25)), true),
        float_case("round", round(l(2.5)), true),
        float_case("floor", floor(l(-2.5)), true),
        float_case("trunc", trunc(l(-2.5)), true),
        float_case("ceil", ceil(l(2.1)), true),
        float_case("sign", sign(l(-3.0)), true),
        float_case("saturate", saturate(l(1.5)), true),
        float_case("step", step(l(1.0), l(0.5)), true),
        float_case("clamp", clamp(l(5.0), l(-1.0), l(1.0)), true),
        float_case("min", min(l(5.0), l(-1.0)), true),
        float_case("rem", l(-5.5) % l(2.0), true),
        float_case("div", l(1.0) / l(3.0), false),
        float_case("bitcast", lit(0x3fc0_0000u32).bitcast::<f32>(), true),
        float_case("f32(u32)", lit(16_777_217u32).to_f32(), true),
        float_case("select", select(l(1.0), l(2.0), l(3.0).gt(l(2.0))), true),
        float_case(
            "array index",
            array([l(1.0), l(2.0), l(3.0)]).index(lit(2i32)),
            true,
        ),
        int_case(
            "extractBits i32",
            extract_bits(lit(-8i32), lit(2u32), lit(3u32)),
        ),
        int_case(
            "insertBits i32",
            insert_bits(lit(0i32), lit(-1i32), lit(4u32), lit(4u32)),
        ),
        int_case("firstLeadingBit i32", first_leading_bit(lit(-16i32))),
        int_case("firstTrailingBit i32", first_trailing_bit(lit(-16i32))),
        int_case("countOneBits i32", count_one_bits(lit(-1i32))),
        int_case("reverseBits i32", reverse_bits(lit(1i32))),
        int_case("i32(f32)", lit(-3.9f32).to_i32()),
        int_case("i32(1e20)", lit(1e20f32).to_i32()),
        int_case("i32 /", lit(-7i32) / lit(2i32)),
        int_case("i32 %", lit(-7i32) % lit(2i32)),
        int_case("i32 >>", lit(-64i32) >> lit(3u32)),
        int_case("sign i32", sign(lit(-5i32))),
        int_case("abs i32::MIN", abs(lit(i32::MIN))),
        int_case("i32::MAX + 1", lit(i32::MAX) + lit(1i32)),
        uint_case(
            "extractBits u32",
            extract_bits(lit(0xf0u32), lit(4u32), lit(28u32)),
        ),
        uint_case(
            "insertBits u32",
            insert_bits(lit(0u32), lit(0xffu32), lit(28u32), lit(4u32)),
        ),
        uint_case("firstLeadingBit 0u", first_leading_bit(lit(0u32))),
        uint_case("countLeadingZeros", count_leading_zeros(lit(1u32))),
        uint_case("countTrailingZeros", count_trailing_zeros(lit(8u32))),
        uint_case("u32(-1.0)", lit(-1.0f32).to_u32()),
        uint_case("u32(1e20)", lit(1e20f32).to_u32()),
        uint_case(
            "dot u32",
            dot(vec2(lit(u32::MAX), lit(2u32)), vec2(lit(2u32), lit(3u32))),
        ),
        uint_case("u32 <<", lit(3u32) << lit(30u32)),
        uint_case("0u - 1u", lit(0u32) - lit(1u32)),
        uint_case("any", vec2(lit(false), lit(true)).any().select(7u32, 9u32)),
        uint_case("all", vec2(lit(false), lit(true)).all().select(7u32, 9u32)),
    ];

    let gpu = wgsl_dsl::runtime::Gpu::new().expect("a wgpu adapter (lavapipe in CI)");
    let mut k = KernelBuilder::new("consts", [1, 1, 1]);
    let out = k.storage::<RuntimeArray<u32>, ReadWrite>("out");
    for (i, c) in cases.iter().enumerate() {
        k.store(&out.at(i as u32), c.stored.clone());
    }
    let shader = k.build_for(&gpu.target_limits()).expect("builds");
    reparse(&shader.wgsl).expect("re-parses");
    let kernel = gpu.compile(&shader).expect("compiles");
    let buf =
        wgsl_dsl::runtime::GpuBuffer::from_slice(&gpu, &vec![0xDEAD_BEEFu32; cases.len()]).unwrap();
    gpu.dispatch(&kernel, &[&buf], [1, 1, 1]).expect("dispatch");
    let got = buf.read(&gpu).expect("read back");
    let mut bad = Vec::new();
    for (c, bits) in cases.iter().zip(got) {
        let ok = match c.value {
            ConstValue::F32(want) => {
                let g = f32::from_bits(bits);
                if c.exact {
                    g == want
                } else if ["asin", "acos", "atan", "atan2"].contains(&c.name) {
                    within_4096_ulp(g, want)
                } else {
                    (g - want).abs() <= 4e-5 * want.abs().max(1.0)
                }
            }
            ConstValue::I32(want) => bits as i32 == want,
            ConstValue::U32(want) => bits == want,
            _ => false,
        };
        if !ok {
            bad.push(format!("{}: DSL {} GPU bits {bits:#010x}", c.name, c.value));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
