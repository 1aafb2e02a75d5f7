//! The rules of kernel AD that docs/autodiff.md states ("Rules"), each against derivatives
//! worked out by hand (exact), on the interpreter (its race and bounds checks on) and the GPU:
//! stores overwritten by later ones (last store wins), accumulation schemes proven from the
//! map of every invocation to the elements it reads, no NaN from the untaken operand of a
//! `select`, the names `Derive` is given, refusals at the author's line.

mod autodiff_support;
mod common;

use autodiff_support::On;
use common::kernel_ad::incoming_gradients;
use wgsl_dsl::BuildError;
use wgsl_dsl::autodiff::{Accumulation, Backward, Data, Derive, derive};
use wgsl_dsl::prelude::*;

/// Runs the backward pass over `workgroups` (`autodiff::run_backward`: each gradient zeroed,
/// atomic ones decoded from their bits) with `data` by the forward binding's name and each
/// output's incoming gradient as `d_<output>`; the gradient of each input by name.
fn run_backward(
    on: On,
    backward: &Backward,
    data: &[(&str, Data)],
    workgroups: [u32; 3],
) -> Vec<(String, Vec<f32>)> {
    let incoming = incoming_gradients(backward, data);
    on.run_backward(backward, data, &incoming, workgroups)
        .unwrap_or_else(|e| panic!("the backward pass runs: {e}"))
        .by_input
}

/// [`run_backward`] on each executor: the gradient of each input named in `want` against its
/// exact values, to `tol` ([`assert_close`]).
#[track_caller]
fn assert_gradients(
    backward: &Backward,
    data: &[(&str, Data)],
    workgroups: [u32; 3],
    want: &[(&str, &[f64])],
    tol: f64,
) {
    for on in executors() {
        let g = run_backward(on, backward, data, workgroups);
        for (input, want) in want {
            let what = format!("{on:?} d_{input}");
            assert_close(&what, gradient(&g, input), want, tol);
        }
    }
}

/// [`assert_gradients`] of a kernel of one input `x` and one output `y`: `d_x` at `xs` with the
/// incoming `dy`.
#[track_caller]
fn assert_d_x(
    backward: &Backward,
    xs: Vec<f32>,
    dy: Vec<f32>,
    workgroups: [u32; 3],
    want: &[f64],
    tol: f64,
) {
    let data = [("x", Data::F32(xs)), ("d_y", Data::F32(dy))];
    assert_gradients(backward, &data, workgroups, &[("x", want)], tol);
}

/// The elementwise kernel `name` of 16 invocations a workgroup over `x` (read) and `y`
/// (read-write): each invocation `i < arrayLength(y)` lets `v = x[i]`, then `body(k, y, i, v)`.
fn elementwise(
    name: &str,
    body: impl FnOnce(&mut KernelBuilder, &Place<RuntimeArray<f32>, ReadWrite>, &Exp<u32>, &Exp<f32>),
) -> KernelBuilder {
    let mut k = KernelBuilder::new(name, [16, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.lt(y.len()), |k| {
        let v = k.let_("v", x.at(&i).load());
        body(k, &y, &i, &v);
    });
    k
}

fn gradient<'a>(grads: &'a [(String, Vec<f32>)], input: &str) -> &'a [f32] {
    &grads
        .iter()
        .find(|(n, _)| n == input)
        .unwrap_or_else(|| panic!("no gradient of `{input}`"))
        .1
}

/// `got` against the exact `want`, to `tol` relative (absolute below 1), each element.
#[track_caller]
fn assert_close(what: &str, got: &[f32], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (j, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert!(
            (f64::from(g) - w).abs() <= tol * w.abs().max(1.0),
            "{what}[{j}]: {g}, want {w}"
        );
    }
}

fn executors() -> [On; 2] {
    [On::Interpreter, On::Gpu]
}

/// Deterministic data in `[-2, 2)`, away from 0 (no kinks hit).
fn data(n: usize, seed: u32) -> Vec<f32> {
    (0..n)
        .map(|j| {
            let h = (j as u32)
                .wrapping_mul(2_654_435_761)
                .wrapping_add(seed.wrapping_mul(40_503))
                .rotate_left(13)
                .wrapping_mul(2_246_822_519);
            let v = (h >> 8) as f32 / (1u32 << 24) as f32 * 4.0 - 2.0;
            if v.abs() < 0.05 { v + 0.1 } else { v }
        })
        .collect()
}

fn accumulation(b: &Backward, input: &str) -> Accumulation {
    b.choices
        .iter()
        .find(|c| c.input == input)
        .unwrap_or_else(|| panic!("no choice for `{input}`"))
        .accumulation
}

const N: usize = 37; // odd: the last workgroup of 16 is partial

// --- 1. Last store wins ---------------------------------------------------------------

/// `y[i] = x; y[i] = 3 x`: the first value never reaches `y`, dy/dx = 3 (it derived 4).
#[test]
fn a_store_overwritten_later_gets_no_gradient() {
    let k = elementwise("store_twice", |k, y, i, v| {
        k.store(&y.at(i), v.clone());
        k.store(&y.at(i), v * 3.0f32);
    });
    let b = derive(&k, &Derive::new()).expect("derives");
    let (xs, dy) = (data(N, 1), data(N, 2));
    let want: Vec<f64> = dy.iter().map(|&g| 3.0 * f64::from(g)).collect();
    assert_d_x(&b, xs, dy, [3, 1, 1], &want, 1e-6);
}

/// `y[i] = x; if x > 0 { y[i] = 2 x }`: 2 where `x > 0`, 1 elsewhere (it derived 3 and 1).
#[test]
fn a_store_overwritten_under_an_if_keeps_its_gradient_where_the_if_is_not_taken() {
    let k = elementwise("store_then_maybe", |k, y, i, v| {
        k.store(&y.at(i), v.clone());
        k.if_(v.gt(0.0f32), |k| k.store(&y.at(i), v * 2.0f32));
    });
    let b = derive(&k, &Derive::new()).expect("derives");
    let (xs, dy) = (data(N, 3), data(N, 4));
    let want: Vec<f64> = xs
        .iter()
        .zip(&dy)
        .map(|(&v, &g)| if v > 0.0 { 2.0 } else { 1.0 } * f64::from(g))
        .collect();
    assert_d_x(&b, xs, dy, [3, 1, 1], &want, 1e-6);
}

/// A later store at an index known only at run time overwrites the first where it is equal:
/// `y[i] = 2 x; y[j] = 5 x` with `j = i` or `j = n + i` (read from a buffer).
#[test]
fn a_store_overwritten_at_an_index_known_only_at_run_time() {
    let mut k = KernelBuilder::new("store_maybe_same", [16, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let to = k.storage::<RuntimeArray<u32>, ReadOnly>("to");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.lt(x.len()), |k| {
        let v = k.let_("v", x.at(&i).load());
        let j = k.let_("j", to.at(&i).load());
        k.store(&y.at(&i), &v * 2.0f32);
        k.store(&y.at(&j), &v * 5.0f32);
    });
    let b = derive(&k, &Derive::new()).expect("derives");
    let xs = data(N, 5);
    let to: Vec<u32> = (0..N as u32)
        .map(|i| if i % 3 == 0 { i } else { N as u32 + i })
        .collect();
    let dy = data(2 * N, 6);
    let want: Vec<f64> = (0..N)
        .map(|i| {
            let j = to[i] as usize;
            let first = if j == i { 0.0 } else { 2.0 * f64::from(dy[i]) };
            first + 5.0 * f64::from(dy[j])
        })
        .collect();
    assert_gradients(
        &b,
        &[
            ("x", Data::F32(xs)),
            ("to", Data::U32(to)),
            ("d_y", Data::F32(dy)),
        ],
        [3, 1, 1],
        &[("x", &want)],
        1e-6,
    );
}

/// An unrolled loop storing into one element: the last iteration's value is the output.
#[test]
fn a_loop_storing_one_element_each_iteration_keeps_the_last_store() {
    let k = elementwise("store_in_loop", |k, y, i, v| {
        k.for_range("j", 1u32, 4u32, |k, j| {
            // y = x^j: the last is x^3
            let p = k.let_("p", pow(v, j.to_f32()));
            k.if_(j.ge(2u32), |k| k.store(&y.at(i), p.clone()));
        });
    });
    let b = derive(&k, &Derive::new()).expect("derives");
    let (xs, dy) = (data(N, 7), data(N, 8));
    let xs: Vec<f32> = xs.iter().map(|v| v.abs() + 0.5).collect();
    let want: Vec<f64> = xs
        .iter()
        .zip(&dy)
        .map(|(&v, &g)| 3.0 * f64::from(v).powi(2) * f64::from(g))
        .collect();
    assert_d_x(&b, xs, dy, [3, 1, 1], &want, 1e-5);
}

// --- 2. Exclusive only where proven -----------------------------------------------------

const COLS: u32 = 13;
const ROWS: u32 = 7;

/// `out[r * n + c] = x[c] * s[r]` with `c = gid.x`, `r = gid.y`: every row reads `x[c]`, so
/// `d_x` is atomic (Exclusive raced), and so is `d_s`; the interpreter's race checks pass and
/// the sums are exact.
#[test]
fn an_input_read_by_every_row_of_a_2d_grid_is_accumulated_atomically() {
    let mut k = KernelBuilder::new("outer", [8, 4, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let s = k.storage::<RuntimeArray<f32>, ReadOnly>("s");
    let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
    let c = k.let_("c", global_invocation_id().x());
    let r = k.let_("r", global_invocation_id().y());
    k.if_(c.lt(COLS).and(r.lt(ROWS)), |k| {
        k.store(&out.at(&r * COLS + &c), x.at(&c).load() * s.at(&r).load());
    });
    let b = derive(&k, &Derive::new()).expect("derives");
    assert_eq!(accumulation(&b, "x"), Accumulation::Atomic, "{b}");
    assert_eq!(accumulation(&b, "s"), Accumulation::Atomic, "{b}");
    let text = b.to_string();
    assert!(text.contains("because the read of `x` at"), "{text}");
    let (xs, ss) = (data(COLS as usize, 9), data(ROWS as usize, 10));
    let dout = data((COLS * ROWS) as usize, 11);
    let at = |r: usize, c: usize| f64::from(dout[r * COLS as usize + c]);
    let want_x: Vec<f64> = (0..COLS as usize)
        .map(|c| {
            (0..ROWS as usize)
                .map(|r| f64::from(ss[r]) * at(r, c))
                .sum()
        })
        .collect();
    let want_s: Vec<f64> = (0..ROWS as usize)
        .map(|r| {
            (0..COLS as usize)
                .map(|c| f64::from(xs[c]) * at(r, c))
                .sum()
        })
        .collect();
    assert_gradients(
        &b,
        &[
            ("x", Data::F32(xs)),
            ("s", Data::F32(ss)),
            ("d_out", Data::F32(dout)),
        ],
        [2, 2, 1],
        &[("x", &want_x), ("s", &want_s)],
        1e-5,
    );
}

/// Elementwise on a 2-D grid (`out[e] = x[e]^2`, `e = r n + c`): each read is at the element
/// its invocation stores, so `d_x` is exclusive, race-free on the interpreter.
#[test]
fn an_elementwise_read_on_a_2d_grid_is_exclusive_with_its_reason() {
    let mut k = KernelBuilder::new("square2d", [8, 4, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
    let c = k.let_("c", global_invocation_id().x());
    let r = k.let_("r", global_invocation_id().y());
    k.if_(c.lt(COLS).and(r.lt(ROWS)), |k| {
        let e = k.let_("e", &r * COLS + &c);
        let v = k.let_("v", x.at(&e).load());
        k.store(&out.at(&e), &v * &v);
    });
    let b = derive(&k, &Derive::new()).expect("derives");
    assert_eq!(accumulation(&b, "x"), Accumulation::Exclusive, "{b}");
    assert!(
        b.to_string().contains("that the reading invocation stores"),
        "{b}"
    );
    let n = (COLS * ROWS) as usize;
    let (xs, dout) = (data(n, 12), data(n, 13));
    let want: Vec<f64> = xs
        .iter()
        .zip(&dout)
        .map(|(&v, &g)| 2.0 * f64::from(v) * f64::from(g))
        .collect();
    assert_gradients(
        &b,
        &[("x", Data::F32(xs)), ("d_out", Data::F32(dout))],
        [2, 2, 1],
        &[("x", &want)],
        1e-6,
    );
}

/// A 1-D kernel reading `x[gid.x]` but storing elsewhere: nothing proves that the grid has
/// one invocation per `x` (a grid of several rows would share them), so it is atomic.
#[test]
fn the_own_global_index_alone_does_not_prove_exclusive() {
    let mut k = KernelBuilder::new("gather_to_zero", [16, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.eq(0u32), |k| {
        k.store(&y.at(0u32), x.at(&i).load() * 2.0f32)
    });
    let b = derive(&k, &Derive::new()).expect("derives");
    assert_eq!(accumulation(&b, "x"), Accumulation::Atomic, "{b}");
}

// --- 3. No NaN from the operand not taken ----------------------------------------------

/// Exact reference: `select(0, sqrt(x), x > 0)` has derivative `0.5 / sqrt(x)` for `x > 0`,
/// 0 elsewhere (where `sqrt'` is NaN or infinite).
fn sqrt_where_positive(x: f32) -> f64 {
    if x > 0.0 {
        0.5 / f64::from(x).sqrt()
    } else {
        0.0
    }
}

fn select_points() -> Vec<f32> {
    let mut v = vec![-2.0, -0.5, 0.0, -0.0, 1e-30, 0.25, 4.0, -1e-30];
    v.extend(data(13, 14));
    v
}

#[test]
fn select_passes_no_nan_from_its_untaken_operand_in_kernel_ad() {
    let k = elementwise("select_sqrt", |k, y, i, v| {
        let s = k.let_("s", sqrt(v)); // a `let`: the mask crosses it
        k.store(&y.at(i), select(0.0f32, &s, v.gt(0.0f32)));
    });
    let b = derive(&k, &Derive::new()).expect("derives");
    let xs = select_points();
    let dy = vec![1.0f32; xs.len()];
    let want: Vec<f64> = xs.iter().map(|&v| sqrt_where_positive(v)).collect();
    // sqrt'(1e-30) is 5e14: relative tolerance.
    assert_d_x(&b, xs, dy, [2, 1, 1], &want, 1e-6);
}

/// An `if` value with pure arms is a `select`: at `x <= 0` the untaken `sqrt(x)` passes no
/// NaN (the derivative is 0 there, `0.5 / sqrt(x)` elsewhere), on the interpreter and the GPU.
#[kernel(workgroup_size = 64, differentiable)]
fn sqrt_or_zero(
    #[storage(read)] x: &[f32],
    #[storage(read_write)] y: &mut [f32],
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
) {
    let i = gid.x;
    if i < y.len() {
        let v = x[i];
        y[i] = if v > 0.0 { sqrt(v) } else { 0.0 };
    }
}

#[test]
fn an_if_value_passes_no_nan_from_its_untaken_arm() {
    let b = sqrt_or_zero_backward().expect("derives");
    let kernel = &b.kernels[0];
    assert_eq!(
        kernel
            .roles
            .iter()
            .map(|(n, _)| n.as_str())
            .collect::<Vec<_>>(),
        ["x", "d_y", "d_x"]
    );
    assert_eq!(b.choices[0].accumulation, Accumulation::Exclusive);
    let xs = select_points();
    let dy = vec![1.0f32; xs.len()];
    let want: Vec<f64> = xs.iter().map(|&v| sqrt_where_positive(v)).collect();
    assert_d_x(&b, xs, dy, [1, 1, 1], &want, 1e-6);
}

/// Softplus written with `select` between its two smooth forms (docs/autodiff.md): right at
/// `x = +-100`, where the untaken form overflows (`exp(100)` is infinite in `f32`), and so is
/// `clamp(exp(x), 0, 1)` at `x = 100` (0: clamped); expression AD (`k.grad`), checked in a
/// kernel that stores the derivatives.
#[test]
fn softplus_by_select_and_a_clamped_exp_have_finite_gradients_at_plus_minus_100() {
    let mut k = KernelBuilder::new("softplus_grad", [16, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.lt(x.len()), |k| {
        let v = k.let_("v", x.at(&i).load());
        let soft = select(
            log(exp(&v) + 1.0f32),
            &v + log(exp(-&v) + 1.0f32),
            v.gt(0.0f32),
        );
        let d = k.grad(&soft, &v);
        k.store(&y.at(&i * 2u32), d);
        let clamped = clamp(exp(&v), 0.0f32, 1.0f32);
        let e = k.grad(&clamped, &v);
        k.store(&y.at(&i * 2u32 + 1u32), e);
    });
    let shader = k.build().expect("builds");
    let xs: Vec<f32> = vec![100.0, -100.0, 0.5, -0.5, 88.0, -88.0, 0.0];
    let want: Vec<f64> = xs
        .iter()
        .flat_map(|&v| {
            let v = f64::from(v);
            let sigmoid = 1.0 / (1.0 + (-v).exp());
            let clamp_d = if v.exp() < 1.0 { v.exp() } else { 0.0 };
            [sigmoid, clamp_d]
        })
        .collect();
    for on in executors() {
        let out = autodiff_support::run(on, &shader, &[&xs], &[2 * xs.len()], [1, 1, 1]);
        // Absolute 1e-6: sigmoid(-100) is below f32's normal range (flushed or not).
        for (j, (&g, &w)) in out[0].iter().zip(&want).enumerate() {
            assert!(
                g.is_finite() && (f64::from(g) - w).abs() <= 1e-6 * w.abs().max(1.0),
                "{on:?} [{j}] (x = {}): {g}, want {w}",
                xs[j / 2]
            );
        }
    }
}

// --- 4. The names given to Derive -------------------------------------------------------

fn with_indices() -> KernelBuilder {
    let mut k = KernelBuilder::new("gather", [16, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let idx = k.storage::<RuntimeArray<u32>, ReadOnly>("idx");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.lt(y.len()), |k| {
        k.store(&y.at(&i), x.at(idx.at(&i).load()).load())
    });
    k
}

#[track_caller]
fn option_error(result: Result<Backward, BuildError>, option: &str, binding: &str, line: u32) {
    match result {
        Err(
            ref e @ BuildError::DeriveOption {
                option: o,
                binding: ref b,
                site,
                ..
            },
        ) => {
            assert_eq!((o, b.as_str()), (option, binding), "{e}");
            assert_eq!((site.file, site.line), (file!(), line), "{e}");
        }
        other => panic!("expected DeriveOption, got {other:?}"),
    }
}

#[test]
fn an_accumulation_for_a_binding_that_is_no_differentiable_input_is_an_error() {
    let k = with_indices();
    let line = line!() + 1;
    let opts = Derive::new().accumulate("idx", Accumulation::Exclusive);
    option_error(derive(&k, &opts), "accumulate", "idx", line);
    let line = line!() + 1;
    let opts = Derive::new().accumulate("no_such", Accumulation::Atomic);
    option_error(derive(&k, &opts), "accumulate", "no_such", line);
    let (opts, line) = (Derive::new().accumulate("x", Accumulation::Write), line!());
    option_error(derive(&k, &opts), "accumulate", "x", line);
    // The right ones are taken.
    let b = derive(&k, &Derive::new().accumulate("x", Accumulation::Atomic)).expect("derives");
    assert_eq!(accumulation(&b, "x"), Accumulation::Atomic);
}

#[test]
fn no_diff_of_a_name_that_is_no_binding_is_an_error() {
    let k = with_indices();
    let (opts, line) = (Derive::new().no_diff("no_such_binding"), line!());
    option_error(derive(&k, &opts), "no_diff", "no_such_binding", line);
    let b = derive(&k, &Derive::new().no_diff("x")).expect("derives");
    assert!(b.choices.is_empty());
}

// --- 5. Refusals at the author's line --------------------------------------------------

#[track_caller]
fn refused_at(k: &KernelBuilder, words: &str, line: u32) {
    match derive(k, &Derive::new()) {
        Err(e @ BuildError::NotDifferentiable { .. }) => {
            let BuildError::NotDifferentiable { site, .. } = &e else {
                unreachable!()
            };
            let text = e.to_string();
            assert!(text.contains(words), "{text}");
            assert!(
                !text.contains("`break`"),
                "a `break` the author never wrote: {text}"
            );
            assert_eq!((site.file, site.line), (file!(), line), "{e}");
        }
        other => panic!("expected NotDifferentiable, got {other:?}"),
    }
}

#[test]
fn a_while_loop_on_a_run_time_value_is_refused_at_its_line() {
    let mut k = KernelBuilder::new("while_runtime", [16, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let n = k.uniform::<u32>("n");
    let acc = k.var("acc", 0.0f32);
    let j = k.var("j", 0u32);
    let line = line!() + 1;
    k.while_(j.load().lt(n.load()), |k| {
        k.store(&acc, acc.load() + x.at(j.load()).load());
        k.store(&j, j.load() + 1u32);
    });
    k.store(&y.at(0u32), acc.load());
    refused_at(&k, "trip count", line);
}

#[test]
fn a_for_range_to_a_uniform_is_refused_for_its_trip_count_not_a_break() {
    let mut k = KernelBuilder::new("for_runtime", [16, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let n = k.uniform::<u32>("n");
    let acc = k.var("acc", 0.0f32);
    let line = line!() + 1;
    k.for_range("j", 0u32, n.load(), |k, j| {
        k.store(&acc, acc.load() + x.at(&j).load())
    });
    k.store(&y.at(0u32), acc.load());
    refused_at(&k, "trip count", line);
}
