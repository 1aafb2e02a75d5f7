//! Reverse mode is linear in the size of the DAG: a subexpression shared by 10,000 uses (the
//! same `Rc`, or a `let`) sums its adjoint once and propagates it once. Node counts come from
//! `KernelBuilder::dag_size` (distinct nodes, through `let`s). The timing of 1k/10k/100k
//! uses is `cargo bench -p wgsl-dsl --bench autodiff`.

mod autodiff_support;

use autodiff_support::pairwise::pairwise_sum;
use autodiff_support::{On, close, run};
use wgsl_dsl::prelude::*;

/// A subtree of about `3 * depth` nodes over `x`: `s <- sin(s) * x + 0.5 s`, `depth` times.
fn deep(x: &Exp<f32>, depth: usize) -> Exp<f32> {
    let mut s = x.clone();
    for _ in 0..depth {
        s = sin(&s) * x + &s * 0.5f32;
    }
    s
}

fn deep64(x: f64, depth: usize) -> f64 {
    let mut s = x;
    for _ in 0..depth {
        s = s.sin() * x + s * 0.5;
    }
    s
}

/// `sum_j c_j s` over `uses` uses of the shared `s`, summed pairwise, `c_j = 1 + j / uses`.
fn uses_of(s: &Exp<f32>, uses: usize) -> Exp<f32> {
    pairwise_sum(
        (0..uses)
            .map(|j| s * (1.0 + j as f32 / uses as f32))
            .collect(),
    )
    .expect("at least one use")
}

/// (primal size, derivative size, the kernel) for `uses` uses of a shared subtree of
/// `depth` steps, the subtree bound with `let_` or shared as an `Rc`.
fn sizes(uses: usize, depth: usize, as_let: bool) -> (usize, usize, KernelBuilder) {
    let mut k = KernelBuilder::new("shared", [1, 1, 1]);
    let input = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
    let x = k.let_("x", input.at(0u32).load());
    let s = deep(&x, depth);
    let s = if as_let { k.let_("s", s) } else { s };
    let y = uses_of(&s, uses);
    let dx = k.grad(&y, &x);
    let sizes = (k.dag_size(&y), k.dag_size(&dx));
    k.store(&out.at(0u32), dx);
    (sizes.0, sizes.1, k)
}

#[test]
fn a_subexpression_shared_by_10000_uses_gives_a_derivative_linear_in_the_dag() {
    const DEPTH: usize = 100;
    for as_let in [false, true] {
        let (primal, derivative, _) = sizes(10_000, DEPTH, as_let);
        // A tree walk would propagate into the shared subtree once per use: ~10,000 * 300
        // nodes. Summed once, the derivative is a constant times the DAG.
        assert!(
            derivative <= 4 * primal,
            "let: {as_let}: derivative {derivative} nodes for a DAG of {primal}"
        );
        assert!(primal < 10_000 * 4 + 3 * DEPTH + 10, "primal {primal}");
        // Linear in the number of uses: ten times the uses, about ten times the nodes.
        let (primal_1k, derivative_1k, _) = sizes(1_000, DEPTH, as_let);
        eprintln!(
            "shared as a let: {as_let}: 1k uses: DAG {primal_1k} nodes, derivative {derivative_1k}; \
             10k uses: DAG {primal}, derivative {derivative}"
        );
        let ratio = derivative as f64 / derivative_1k as f64;
        assert!(
            (6.0..=11.0).contains(&ratio),
            "let: {as_let}: {derivative_1k} nodes for 1k uses, {derivative} for 10k ({ratio}x); DAG {primal_1k}, {primal}"
        );
    }
}

/// The 10,000-use derivative is right, and its kernel builds, validates and runs.
#[test]
fn the_shared_derivative_is_right() {
    const DEPTH: usize = 20;
    const USES: usize = 10_000;
    let (_, _, k) = sizes(USES, DEPTH, false);
    let shader = k.build().expect("builds");
    let x = 0.7f64;
    let r = run(On::Interpreter, &shader, &[&[x as f32]], &[1], [1, 1, 1]);
    // d/dx sum_j c_j s(x) = (sum_j c_j) s'(x)
    let c: f64 = (0..USES).map(|j| 1.0 + j as f64 / USES as f64).sum();
    let h = 1e-6;
    let ds = (deep64(x + h, DEPTH) - deep64(x - h, DEPTH)) / (2.0 * h);
    let want = c * ds;
    assert!(
        close(f64::from(r[0][0]), want, 1e-4),
        "{} want {want}",
        r[0][0]
    );
}
