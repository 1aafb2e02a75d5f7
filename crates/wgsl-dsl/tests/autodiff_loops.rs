//! Kernel AD of loops whose trip count is known only at run time, bounded by their author
//! (`KernelBuilder::max_iterations`): a row-wise softmax and a layer norm over a run-time row
//! length, a `while` with a per-invocation trip count, nested run-time loops. Each derived
//! backward pass against central differences of its forward kernel (`autodiff::check`) at odd
//! sizes on the interpreter (race, bounds and barrier checks on) and on the GPU; softmax and
//! layer norm also against their closed-form gradients in `f64`; a loop that runs past its
//! bound is an error, never a truncated gradient; what is still refused, at its Rust line.

mod common;

use common::kernel_ad::{
    Case, TOLERANCE, assert_close, check_case, check_one_workgroup, gradient, refused,
    run_backward, uniform,
};
use wgsl_dsl::interp::Interpreter;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use wgsl_dsl::autodiff::{Accumulation, CheckError, CheckOptions, Data, Derive, check, derive};
use wgsl_dsl::prelude::*;

/// The frame of the row kernels: the bindings `n` (a uniform: the run-time row length) and
/// `y` (the output) declared, then `body(k, y, base, len)` for the row of each invocation
/// (`row < len(y) / n`), `base = row * n` its first element and `len = n`.
fn each_row(
    k: &mut KernelBuilder,
    body: impl FnOnce(&mut KernelBuilder, &Place<RuntimeArray<f32>, ReadWrite>, Exp<u32>, Exp<u32>),
) {
    let n = k.uniform::<u32>("n");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let row = k.let_("row", global_invocation_id().x());
    let len = k.let_("len", n.load());
    k.if_(row.lt(y.len() / &len), |k| {
        let base = k.let_("base", &row * &len);
        body(k, &y, base, len)
    });
}

/// `y[row, :] = softmax(x[row, :])`, one invocation per row of the run-time length `n` (a
/// uniform): three loops (max, sum of exponentials, the outputs), each bounded by `bound`.
fn row_softmax(bound: u32) -> KernelBuilder {
    let mut k = KernelBuilder::new("row_softmax", [16, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    each_row(&mut k, |k, y, base, len| {
        let m = k.var("m", -3.0e38f32);
        k.max_iterations(bound).for_range("j", 0u32, &len, |k, j| {
            k.store(&m, max(m.load(), x.at(&base + &j).load()))
        });
        let s = k.var("s", 0.0f32);
        k.max_iterations(bound).for_range("j", 0u32, &len, |k, j| {
            k.store(&s, s.load() + exp(x.at(&base + &j).load() - m.load()))
        });
        let inv = k.let_("inv", 1.0f32 / s.load());
        k.max_iterations(bound).for_range("j", 0u32, &len, |k, j| {
            k.store(
                &y.at(&base + &j),
                exp(x.at(&base + &j).load() - m.load()) * &inv,
            )
        });
    });
    k
}

/// `y[row, :] = (x - mean) / sqrt(var + eps) * gamma + beta` over a run-time row length.
fn layer_norm(bound: u32) -> KernelBuilder {
    let mut k = KernelBuilder::new("layer_norm", [16, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let gamma = k.storage::<RuntimeArray<f32>, ReadOnly>("gamma");
    let beta = k.storage::<RuntimeArray<f32>, ReadOnly>("beta");
    each_row(&mut k, |k, y, base, len| {
        let s = k.var("s", 0.0f32);
        k.max_iterations(bound).for_range("j", 0u32, &len, |k, j| {
            k.store(&s, s.load() + x.at(&base + &j).load())
        });
        let mean = k.let_("mean", s.load() / len.to_f32());
        let q = k.var("q", 0.0f32);
        k.max_iterations(bound).for_range("j", 0u32, &len, |k, j| {
            let d = k.let_("d", x.at(&base + &j).load() - &mean);
            k.store(&q, q.load() + &d * &d)
        });
        let inv = k.let_("inv", inverse_sqrt(q.load() / len.to_f32() + 1e-5f32));
        k.max_iterations(bound).for_range("j", 0u32, &len, |k, j| {
            k.store(
                &y.at(&base + &j),
                (x.at(&base + &j).load() - &mean) * &inv * gamma.at(&j).load() + beta.at(&j).load(),
            )
        });
    });
    k
}

/// `s = x[i]; repeat steps[i] times: s = 0.75 s + sin(s) w[t]`: a `while` whose trip count
/// differs between invocations.
fn damped_while(bound: u32) -> KernelBuilder {
    let mut k = KernelBuilder::new("damped_while", [16, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let w = k.storage::<RuntimeArray<f32>, ReadOnly>("w");
    let steps = k.storage::<RuntimeArray<u32>, ReadOnly>("steps");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.lt(y.len()), |k| {
        let s = k.var("s", x.at(&i).load());
        let t = k.var("t", 0u32);
        k.max_iterations(bound)
            .while_(t.load().lt(steps.at(&i).load()), |k| {
                k.store(
                    &s,
                    s.load() * 0.75f32 + sin(s.load()) * w.at(t.load()).load(),
                );
                k.store(&t, t.load() + 1u32);
            });
        k.store(&y.at(&i), s.load());
    });
    k
}

/// Two nested run-time loops (`rows` and `cols` uniforms), the inner one's carried value
/// declared in the outer one's body.
fn nested(bound: u32) -> KernelBuilder {
    let mut k = KernelBuilder::new("nested", [16, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let rows = k.uniform::<u32>("rows");
    let cols = k.uniform::<u32>("cols");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.lt(y.len()), |k| {
        let (nr, nc) = (k.let_("nr", rows.load()), k.let_("nc", cols.load()));
        let acc = k.var("acc", 0.25f32);
        k.max_iterations(bound).for_range("r", 0u32, &nr, |k, r| {
            let inner = k.var("inner", acc.load() * 0.5f32);
            k.max_iterations(bound).for_range("c", 0u32, &nc, |k, c| {
                let v = x.at((&i * &nr + &r) * &nc + &c).load();
                k.store(&inner, inner.load() + tanh(inner.load() * 0.3f32 + v));
            });
            k.store(&acc, acc.load() + inner.load() * inner.load() * 0.1f32);
        });
        k.store(&y.at(&i), acc.load());
    });
    k
}

/// The same loops written with `#[kernel]`: `#[max_iterations(n)]` on a `for` over a uniform's
/// count and on a `while` (the attribute states the bound as `k.max_iterations(n)` does).
/// `y[i] = s / (1 + t)`, `s` the sum over `j < n` of `x[i * n + j]^2`, `t` = `s` halved while above
/// `1 + x[i * n]^2`.
#[kernel(workgroup_size = 8, differentiable)]
fn attribute_bounded(
    #[storage(read)] x: &[f32],
    #[uniform] n: u32,
    #[storage(read_write)] y: &mut [f32],
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
) {
    let i = gid.x;
    if i < y.len() {
        let mut s = 0.0;
        #[max_iterations(12)]
        for j in 0u32..n {
            let v = x[i * n + j];
            s += v * v;
        }
        let mut t = s;
        #[max_iterations(40)]
        while t > 1.0 + x[i * n] * x[i * n] {
            t = t * 0.5;
        }
        y[i] = s / (1.0 + t);
    }
}

/// The case `name`: `forward`'s kernel and the backward pass derived from it with `options`.
fn case(
    name: &'static str,
    forward: impl Fn() -> KernelBuilder,
    options: &Derive,
    data: Vec<(&'static str, Data)>,
    grid: [u32; 3],
) -> Case {
    let backward = derive(&forward(), options).expect("derives");
    Case {
        name,
        forward: forward(),
        backward,
        data,
        grid,
    }
}

/// The data of a row-wise kernel: `x`, `rows` rows of `n` uniform in `[-scale, scale)`; the
/// uniform `n`; the output `y` of `y_len` zeros.
fn row_data(
    r: &mut StdRng,
    (rows, n): (usize, usize),
    scale: f32,
    y_len: usize,
) -> Vec<(&'static str, Data)> {
    vec![
        ("x", Data::F32(uniform(r, rows * n, scale))),
        ("n", Data::U32(vec![n as u32])),
        ("y", Data::F32(vec![0.0; y_len])),
    ]
}

fn cases() -> Vec<Case> {
    let r = &mut StdRng::seed_from_u64(31);
    let mut v = Vec::new();
    // softmax: 9 rows of 7 (the bound 8 not reached), automatic (atomic) accumulation.
    let data = row_data(r, (9, 7), 2.0, 9 * 7);
    let auto = Derive::new();
    v.push(case(
        "row_softmax",
        || row_softmax(8),
        &auto,
        data,
        [1, 1, 1],
    ));
    // softmax, exclusive accumulation: each row is one invocation's (the interpreter's race
    // check agrees).
    let data = row_data(r, (5, 13), 2.0, 5 * 13);
    let exclusive = Derive::new().accumulate("x", Accumulation::Exclusive);
    v.push(case(
        "row_softmax_exclusive",
        || row_softmax(13),
        &exclusive,
        data,
        [1, 1, 1],
    ));
    let (rows, n) = (19, 11);
    let x = uniform(r, rows * n, 1.5);
    let data = vec![
        ("x", Data::F32(x)),
        ("gamma", Data::F32(uniform(r, n, 1.0))),
        ("beta", Data::F32(uniform(r, n, 1.0))),
        ("n", Data::U32(vec![n as u32])),
        ("y", Data::F32(vec![0.0; rows * n])),
    ];
    v.push(case(
        "layer_norm",
        || layer_norm(16),
        &auto,
        data,
        [2, 1, 1],
    ));
    let m = 21;
    let data = vec![
        ("x", Data::F32(uniform(r, m, 1.5))),
        ("w", Data::F32(uniform(r, 9, 1.0))),
        (
            "steps",
            Data::U32((0..m).map(|_| r.random_range(0..=9)).collect()),
        ),
        ("y", Data::F32(vec![0.0; m])),
    ];
    v.push(case(
        "damped_while",
        || damped_while(9),
        &auto,
        data,
        [2, 1, 1],
    ));
    v.push(Case {
        name: "attribute_bounded",
        forward: attribute_bounded(),
        backward: attribute_bounded_backward().expect("derives"),
        data: row_data(r, (13, 11), 2.0, 13),
        grid: [2, 1, 1],
    });
    let (m, nr, nc) = (7, 3, 5);
    let data = vec![
        ("x", Data::F32(uniform(r, m * nr * nc, 1.0))),
        ("rows", Data::U32(vec![nr as u32])),
        ("cols", Data::U32(vec![nc as u32])),
        ("y", Data::F32(vec![0.0; m])),
    ];
    v.push(case("nested", || nested(5), &auto, data, [1, 1, 1]));
    v
}

#[test]
fn run_time_loops_match_central_differences_on_the_interpreter() {
    for c in cases() {
        check_case(&c, &Interpreter::new());
    }
}

#[test]
fn run_time_loops_match_central_differences_on_the_gpu() {
    let gpu = common::gpu();
    for c in cases() {
        check_case(&c, gpu);
    }
}

/// Softmax: `dx = y * (dy - <dy, y>)` per row, in `f64`: a reference that shares nothing
/// with the derivation.
#[test]
fn row_softmax_gradient_matches_its_closed_form_in_f64() {
    let r = &mut StdRng::seed_from_u64(5);
    let (rows, n) = (6, 17);
    let x = uniform(r, rows * n, 3.0);
    let dy = uniform(r, rows * n, 1.0);
    let b = derive(&row_softmax(32), &Derive::new()).expect("derives");
    let g = run_backward(
        &b,
        &[
            ("x", Data::F32(x.clone())),
            ("n", Data::U32(vec![n as u32])),
            ("d_y", Data::F32(dy.clone())),
        ],
        [1, 1, 1],
    );
    let mut want = vec![0.0f64; rows * n];
    for row in 0..rows {
        let xs: Vec<f64> = x[row * n..][..n].iter().map(|v| f64::from(*v)).collect();
        let m = xs.iter().cloned().fold(f64::MIN, f64::max);
        let s: f64 = xs.iter().map(|v| (v - m).exp()).sum();
        let y: Vec<f64> = xs.iter().map(|v| (v - m).exp() / s).collect();
        let dys = &dy[row * n..][..n];
        let dot: f64 = y.iter().zip(dys).map(|(a, b)| a * f64::from(*b)).sum();
        for j in 0..n {
            want[row * n + j] = y[j] * (f64::from(dys[j]) - dot);
        }
    }
    assert_close("d_x", gradient(&g, "d_x"), &want);
}

/// Layer norm: `dx = inv (g - mean(g) - xhat mean(g xhat))` with `g = dy gamma`,
/// `dgamma = sum_rows dy xhat`, `dbeta = sum_rows dy`, in `f64`.
#[test]
fn layer_norm_gradient_matches_its_closed_form_in_f64() {
    let r = &mut StdRng::seed_from_u64(6);
    let (rows, n) = (7, 9);
    let x = uniform(r, rows * n, 2.0);
    let gamma = uniform(r, n, 1.0);
    let beta = uniform(r, n, 1.0);
    let dy = uniform(r, rows * n, 1.0);
    let b = derive(&layer_norm(9), &Derive::new()).expect("derives");
    let g = run_backward(
        &b,
        &[
            ("x", Data::F32(x.clone())),
            ("gamma", Data::F32(gamma.clone())),
            ("beta", Data::F32(beta)),
            ("n", Data::U32(vec![n as u32])),
            ("d_y", Data::F32(dy.clone())),
        ],
        [1, 1, 1],
    );
    let (mut dx, mut dgamma, mut dbeta) = (vec![0.0; rows * n], vec![0.0; n], vec![0.0; n]);
    for row in 0..rows {
        let xs: Vec<f64> = x[row * n..][..n].iter().map(|v| f64::from(*v)).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n as f64;
        let inv = 1.0 / (var + 1e-5).sqrt();
        let xhat: Vec<f64> = xs.iter().map(|v| (v - mean) * inv).collect();
        let dys: Vec<f64> = dy[row * n..][..n].iter().map(|v| f64::from(*v)).collect();
        let gs: Vec<f64> = (0..n).map(|j| dys[j] * f64::from(gamma[j])).collect();
        let gm = gs.iter().sum::<f64>() / n as f64;
        let gx = gs.iter().zip(&xhat).map(|(a, b)| a * b).sum::<f64>() / n as f64;
        for j in 0..n {
            dx[row * n + j] = inv * (gs[j] - gm - xhat[j] * gx);
            dgamma[j] += dys[j] * xhat[j];
            dbeta[j] += dys[j];
        }
    }
    assert_close("d_x", gradient(&g, "d_x"), &dx);
    assert_close("d_gamma", gradient(&g, "d_gamma"), &dgamma);
    assert_close("d_beta", gradient(&g, "d_beta"), &dbeta);
}

/// A loop that runs past its bound raises the flag: the checker returns the error, naming
/// the loop's Rust line, instead of a gradient.
#[test]
fn a_loop_past_its_bound_is_an_error_not_a_truncated_gradient() {
    let build = |bound: u32| -> (KernelBuilder, u32) {
        let mut k = KernelBuilder::new("bounded", [16, 1, 1]);
        let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
        let n = k.uniform::<u32>("n");
        let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
        let i = k.let_("i", global_invocation_id().x());
        let mut line = 0;
        k.if_(i.lt(y.len()), |k| {
            let s = k.var("s", 0.0f32);
            let bounded = k.max_iterations(bound);
            line = line!() + 1;
            bounded.for_range("j", 0u32, n.load(), |k, j| {
                k.store(&s, s.load() + sin(x.at(&i * n.load() + &j).load()))
            });
            k.store(&y.at(&i), s.load());
        });
        (k, line)
    };
    let (m, n) = (5, 7);
    let data = |r: &mut StdRng| {
        vec![
            ("x", Data::F32(uniform(r, m * n, 1.0))),
            ("n", Data::U32(vec![n as u32])),
            ("y", Data::F32(vec![0.0; m])),
        ]
    };
    let r = &mut StdRng::seed_from_u64(2);
    on_each_executor!(|on| {
        // Bound 7: every iteration fits; bound 6: one too few.
        let (k, _) = build(7);
        let ok = check(
            &k,
            &derive(&k, &Derive::new()).expect("derives"),
            &data(r),
            [1, 1, 1],
            on,
            CheckOptions::default(),
        )
        .expect("within its bound");
        assert!(ok.max_error() < TOLERANCE, "{ok}");
        let (k, line) = build(6);
        let b = derive(&k, &Derive::new()).expect("derives");
        match check(&k, &b, &data(r), [1, 1, 1], on, CheckOptions::default()) {
            Err(CheckError::IterationLimit(e)) => {
                assert_eq!((e.site.file, e.site.line), (file!(), line), "{e}");
                assert_eq!(e.max_iterations, 6);
                assert_eq!(e.kernel, "bounded_backward");
            }
            other => panic!("expected the iteration limit, got {other:?}"),
        }
    });
}

/// Without a bound, a run-time loop is refused at its line, the message naming
/// `max_iterations`; a bounded loop of a shape not derived (`break if`, a `break` in the
/// middle) is refused at its line too.
#[test]
fn unbounded_and_unsupported_run_time_loops_are_refused_at_their_line() {
    /// `y[0] = s` after `s = 0` and the loop `summing(k, x, n, s)` writes over `x` (read) to
    /// the uniform `n`, returning the line that must be refused; refused with `words`.
    #[track_caller]
    fn refused_loop(
        name: &str,
        words: &str,
        summing: impl FnOnce(
            &mut KernelBuilder,
            &Place<RuntimeArray<f32>, ReadOnly>,
            Exp<u32>,
            &wgsl_dsl::kernel::Var<f32>,
        ) -> u32,
    ) {
        let mut k = KernelBuilder::new(name, [16, 1, 1]);
        let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
        let n = k.uniform::<u32>("n");
        let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
        let s = k.var("s", 0.0f32);
        let line = summing(&mut k, &x, n.load(), &s);
        k.store(&y.at(0u32), s.load());
        refused(&k, words, line);
    }
    refused_loop("unbounded", "max_iterations", |k, x, n, s| {
        let line = line!() + 1;
        k.for_range("j", 0u32, n, |k, j| k.store(s, s.load() + x.at(&j).load()));
        line
    });
    refused_loop("reversed", "exit test", |k, x, n, s| {
        let line = line!() + 1;
        let range = wgsl_dsl::kernel::LoopRange::new(0u32, n).rev();
        k.max_iterations(8).for_in("j", range, |k, j| {
            k.store(s, s.load() * 0.5f32 + x.at(&j).load())
        });
        line
    });
    refused_loop("middle_break", "break", |k, x, n, s| {
        let mut line = 0;
        k.max_iterations(8).for_range("j", 0u32, n, |k, j| {
            k.store(s, s.load() + x.at(&j).load());
            line = line!() + 1;
            k.if_(s.load().gt(1.0f32), |k| k.break_());
        });
        line
    });
}

/// A bound belongs to the loop it was stated for, not to the Rust line that made the loop:
/// two loops made by one line (a Rust helper called twice), the first of 3 iterations known
/// when the kernel is built, the second bounded by `max_iterations(2)`. Bounds were kept by
/// call site, so the first loop took the second's bound and its backward kernel raised the
/// iteration-limit flag on every run (AD fuzzer, case 7175113923353399962).
#[test]
fn a_bound_belongs_to_its_loop_not_to_the_line_that_made_it() {
    fn squares(
        k: &mut KernelBuilder,
        bound: Option<u32>,
        end: Exp<u32>,
        x: &Place<RuntimeArray<f32>, ReadOnly>,
        s: &wgsl_dsl::kernel::Var<f32>,
    ) {
        if let Some(b) = bound {
            k.max_iterations(b);
        }
        k.for_range("j", 0u32, end, |k, j| {
            k.store(s, s.load() + x.at(&j).load() * x.at(&j).load())
        });
    }
    let mut k = KernelBuilder::new("one_line_two_loops", [4, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let n = k.uniform::<u32>("n");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.lt(1u32), |k| {
        let s = k.var("s", 0.0f32);
        squares(k, None, lit(3u32), &x, &s);
        squares(k, Some(2), min(n.load(), 2u32), &x, &s);
        k.store(&y.at(&i), s.load());
    });
    let backward = derive(&k, &Derive::new()).expect("derives");
    assert_eq!(
        backward.kernels[0].bounded_loops().map(<[_]>::len),
        Some(1),
        "only the second loop is bounded"
    );
    let data = vec![
        ("x", Data::F32(vec![0.5, -1.25, 2.0])),
        ("n", Data::U32(vec![5])),
        ("y", Data::F32(vec![0.0])),
    ];
    let report = check_one_workgroup(&k, &backward, &data, CheckOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(report.passed(), "{report}");
    // y = sum_{j<3} x_j^2 + sum_{j<min(5, 2)} x_j^2: d y / d x = (4 x_0, 4 x_1, 2 x_2).
    let g = run_backward(
        &backward,
        &[
            ("x", Data::F32(vec![0.5, -1.25, 2.0])),
            ("n", Data::U32(vec![5])),
            ("d_y", Data::F32(vec![1.0])),
        ],
        [1, 1, 1],
    );
    assert_close("d_x", gradient(&g, "d_x"), &[2.0, -5.0, 4.0]);
}

/// A store inside a run-time loop at an index the loop does not change overwrites itself
/// each iteration: only the last iteration's store reaches the output. `y[i] = x[i * 4 +
/// j]^2` for `j < n[i]` leaves `x[i * 4 + n - 1]^2` (nothing for `n = 0`), so the gradient is
/// `2 x` at that one element; every iteration's store was seeded before (the AD fuzzer's
/// Identity failures with run-time loops). A store at an index that may repeat across
/// iterations (`y[j % 2]`) is refused at its line.
#[test]
fn a_store_in_a_run_time_loop_keeps_only_its_last_iteration() {
    /// `name`: invocation `i < arrayLength(y)` runs `j < n[i]` (at most 4) iterations of
    /// `body(k, x, y, i, j)`; its derived pass run on `xs`, the rows' `counts` and `dy`.
    fn run_rows(
        name: &str,
        body: impl Fn(
            &mut KernelBuilder,
            &Place<RuntimeArray<f32>, ReadOnly>,
            &Place<RuntimeArray<f32>, ReadWrite>,
            &Exp<u32>,
            Exp<u32>,
        ),
        xs: &[f32],
        counts: &[u32],
        dy: &[f32],
    ) -> Vec<(String, Vec<f32>)> {
        let mut k = KernelBuilder::new(name, [8, 1, 1]);
        let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
        let n = k.storage::<RuntimeArray<u32>, ReadOnly>("n");
        let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
        let i = k.let_("i", global_invocation_id().x());
        k.if_(i.lt(y.len()), |k| {
            k.max_iterations(4)
                .for_range("j", 0u32, n.at(&i).load(), |k, j| body(k, &x, &y, &i, j));
        });
        let backward = derive(&k, &Derive::new()).expect("derives");
        let data = [
            ("x", Data::F32(xs.to_vec())),
            ("n", Data::U32(counts.to_vec())),
            ("d_y", Data::F32(dy.to_vec())),
        ];
        run_backward(&backward, &data, [1, 1, 1])
    }
    let counts = [3u32, 0, 1, 4, 2];
    let xs: Vec<f32> = (0..20).map(|v| 0.25 * v as f32 - 2.0).collect();
    let dy = [1.0f32, 0.5, -2.0, 1.5, 3.0];
    let g = run_rows(
        "last_iteration",
        |k, x, y, i, j| {
            let v = x.at(i * 4u32 + &j).load();
            k.store(&y.at(i), &v * &v);
        },
        &xs,
        &counts,
        &dy,
    );
    let mut want = vec![0.0f64; 20];
    for (r, &c) in counts.iter().enumerate() {
        if c > 0 {
            let at = r * 4 + c as usize - 1;
            want[at] = 2.0 * f64::from(xs[at]) * f64::from(dy[r]);
        }
    }
    assert_close("d_x", gradient(&g, "d_x"), &want);

    // Two stores per iteration: `y[i] = 0.5`, then `y[i] = x` where `x > 0`. The second store
    // of an iteration is overwritten by the first store of the next: only the last
    // iteration's counts (AD fuzzer case 12946708503231815506, after the fix above).
    // Every third element negative: row 3's last iteration stores nothing of `x` though its
    // earlier ones did.
    let xs: Vec<f32> = (0..20)
        .map(|v| {
            if v % 3 == 0 {
                -1.0
            } else {
                0.5 + 0.1 * v as f32
            }
        })
        .collect();
    let g = run_rows(
        "two_stores",
        |k, x, y, i, j| {
            k.store(&y.at(i), 0.5f32);
            let v = k.let_("v", x.at(i * 4u32 + &j).load());
            k.if_(v.gt(0.0f32), |k| k.store(&y.at(i), &v * 3.0f32));
        },
        &xs,
        &counts,
        &dy,
    );
    let mut want = vec![0.0f64; 20];
    for (r, &c) in counts.iter().enumerate() {
        let at = r * 4 + c as usize;
        if c > 0 && xs[at - 1] > 0.0 {
            want[at - 1] = 3.0 * f64::from(dy[r]);
        }
    }
    assert_close("d_x", gradient(&g, "d_x"), &want);

    let mut k = KernelBuilder::new("repeating", [8, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let n = k.uniform::<u32>("n");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let mut line = 0;
    k.max_iterations(4).for_range("j", 0u32, n.load(), |k, j| {
        line = line!() + 1;
        k.store(&y.at(&j % 2u32), x.at(&j).load());
    });
    refused(&k, "may repeat", line);
}

/// A run-time loop that contributes nothing to a gradient (it stores only into a `no_diff`
/// output, and nothing reads what it leaves) is not in the derived kernel: not run, not
/// taped, not flagged. Here it runs past its bound (7 iterations, `max_iterations(2)`): the
/// derived pass gives the gradient of the loop that matters, without an iteration-limit error.
/// (The MLP loss's loop storing the probabilities was such a loop.)
#[test]
fn a_loop_that_contributes_no_gradient_is_dropped() {
    let mut k = KernelBuilder::new("dead_loop", [16, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let n = k.uniform::<u32>("n");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let side = k.storage::<RuntimeArray<f32>, ReadWrite>("side");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.lt(y.len()), |k| {
        let s = k.var("s", 0.0f32);
        k.max_iterations(8).for_range("j", 0u32, n.load(), |k, j| {
            k.store(&s, s.load() + sin(x.at(&i * n.load() + &j).load()))
        });
        k.store(&y.at(&i), s.load());
        // Dead for the gradient: `side` is no_diff, nothing reads what the loop leaves.
        k.max_iterations(2).for_range("j", 0u32, n.load(), |k, j| {
            k.store(
                &side.at(&i * n.load() + &j),
                x.at(&i * n.load() + &j).load() * 2.0f32,
            )
        });
    });
    let backward = derive(&k, &Derive::new().no_diff("side")).expect("derives");
    let loops = backward.kernels[0].bounded_loops().expect("a bounded loop");
    assert_eq!(loops.len(), 1, "{loops:?}");
    let (m, len) = (5usize, 7usize);
    let r = &mut StdRng::seed_from_u64(9);
    let data = vec![
        ("x", Data::F32(uniform(r, m * len, 1.0))),
        ("n", Data::U32(vec![len as u32])),
        ("y", Data::F32(vec![0.0; m])),
        ("side", Data::F32(vec![0.0; m * len])),
    ];
    on_each_executor!(|on| {
        let report = check(&k, &backward, &data, [1, 1, 1], on, CheckOptions::default())
            .expect("no iteration-limit error: the loop past its bound is not derived");
        assert!(report.passed(), "{report}");
    });
}
