//! Atomic gradients reduced in the workgroup: where every invocation adds to the same element
//! of an atomic gradient (an index known when the kernel is built), the derived kernel sums
//! each invocation's additions in a private `var`, adds those up in workgroup memory at the
//! end and makes one atomic addition per workgroup and element. Checked against `f64` closed
//! forms on the interpreter (race, bounds and barrier checks) and the GPU, on odd sizes,
//! workgroups of a power of two and not, several workgroups, more elements than are reduced.

mod autodiff_support;

use wgsl_dsl::autodiff::{
    Accumulation, Backward, Data, Derive, Executor, MAX_REDUCED, derive, run_backward,
};
use wgsl_dsl::interp::Interpreter;
use wgsl_dsl::prelude::*;

/// Test data in `[-1.0, 1.0)`.
fn random(n: usize, seed: u64) -> Vec<f32> {
    autodiff_support::uniform(n, seed, -1.0, 1.0)
}

/// `y[i] = sum_{j < m} p[j] * x[i]^(j % 3) + p[0] * p[1]` for `i < len(y)`, on a 2-D grid of
/// workgroups `size` (the invocation `i = gid.y * row + gid.x`); every invocation reads the
/// `m` parameters `p[j]` at indices known when the kernel is built.
fn polynomial(size: [u32; 3], row: u32, m: u32) -> KernelBuilder {
    let mut k = KernelBuilder::new("polynomial", size);
    let p = k.storage::<RuntimeArray<f32>, ReadOnly>("p");
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let gid = global_invocation_id();
    let i = k.let_("i", gid.y() * row + gid.x());
    k.if_(i.lt(y.len()).and(gid.x().lt(row)), |k| {
        let v = k.let_("v", x.at(&i).load());
        let mut sum = p.at(0u32).load() * p.at(1u32).load();
        for j in 0..m {
            let power = match j % 3 {
                0 => lit(1.0f32),
                1 => v.clone(),
                _ => &v * &v,
            };
            sum = sum + p.at(j).load() * power;
        }
        k.store(&y.at(&i), sum);
    });
    k
}

/// `dL/dp` of [`polynomial`] for the incoming gradient `dy`, in `f64`.
fn polynomial_dp(p: &[f32], x: &[f32], dy: &[f32]) -> Vec<f64> {
    let mut d = vec![0.0f64; p.len()];
    for (i, (&v, &g)) in x.iter().zip(dy).enumerate() {
        let _ = i;
        let (v, g) = (f64::from(v), f64::from(g));
        for (j, dj) in d.iter_mut().enumerate() {
            *dj += g * [1.0, v, v * v][j % 3];
        }
        d[0] += g * f64::from(p[1]);
        d[1] += g * f64::from(p[0]);
    }
    d
}

fn gradient_of_p<X: Executor>(
    backward: &Backward,
    p: &[f32],
    x: &[f32],
    dy: &[f32],
    grid: [u32; 3],
    on: &X,
) -> Vec<f32> {
    let g = run_backward(
        backward,
        &[("p", Data::F32(p.to_vec())), ("x", Data::F32(x.to_vec()))],
        &[("y", dy.to_vec())],
        grid,
        on,
    )
    .unwrap_or_else(|e| panic!("{}: {e}", on.name()));
    g.get("p").expect("p is differentiated").to_vec()
}

fn check(what: &str, got: &[f32], want: &[f64], magnitude: f64) {
    for (j, (&g, &w)) in got.iter().zip(want).enumerate() {
        let err = (f64::from(g) - w).abs();
        // Sums of a few thousand f32 products in any order.
        assert!(
            err <= 1e-5 * magnitude,
            "{what}: d_p[{j}] = {g}, want {w} (error {err:e})"
        );
    }
}

fn cases(size: [u32; 3], row: u32, rows: u32, m: u32) {
    let k = polynomial(size, row, m);
    let backward = derive(&k, &Derive::new()).expect("derives");
    let choice = backward
        .choices
        .iter()
        .find(|c| c.input == "p")
        .expect("p is an input");
    assert_eq!(choice.accumulation, Accumulation::Atomic);
    let reduced = (m as usize).min(MAX_REDUCED);
    assert!(
        choice.reason.contains("summed in each workgroup first"),
        "{}",
        choice.reason
    );
    // One compare-exchange loop per reduced element at the end, and one per read of the
    // elements past MAX_REDUCED (which those are follows the reverse pass's order; `p[0]` and
    // `p[1]` are read twice).
    let wgsl = backward.kernels[0].kernel.build().expect("builds").wgsl;
    let loops = wgsl.matches("atomicCompareExchangeWeak").count();
    if (m as usize) <= MAX_REDUCED {
        assert_eq!(loops, reduced, "{wgsl}");
    } else {
        let past = m as usize - MAX_REDUCED;
        assert!(
            (reduced + past..=reduced + past + 2).contains(&loops),
            "{loops} loops"
        );
    }
    assert!(wgsl.contains("var<workgroup> d_partial"), "{wgsl}");

    let n = (row * rows) as usize;
    let p = random(m as usize, 1);
    let x = random(n, 2);
    let dy = random(n, 3);
    let grid = [row.div_ceil(size[0]), rows.div_ceil(size[1]), 1];
    let want = polynomial_dp(&p, &x, &dy);
    let magnitude = dy.iter().map(|v| f64::from(v.abs())).sum::<f64>() * 2.0;
    let what = |on: &str| format!("{on}, workgroup {size:?}, m {m}");
    let cpu = Interpreter::new();
    let got = gradient_of_p(&backward, &p, &x, &dy, grid, &cpu);
    check(&what(cpu.name()), &got, &want, magnitude);
    let gpu = autodiff_support::gpu();
    let got = gradient_of_p(&backward, &p, &x, &dy, grid, gpu);
    check(&what(gpu.name()), &got, &want, magnitude);
}

#[test]
fn parameters_every_invocation_reads_are_summed_in_the_workgroup_first() {
    // 64 invocations per workgroup, 1-D: 999 invocations over 16 workgroups.
    cases([64, 1, 1], 999, 1, 5);
}

#[test]
fn a_workgroup_that_is_not_a_power_of_two_reduces_right() {
    // 5 x 3 = 15 invocations per workgroup, a 2-D grid: rows of 37 over 23 rows.
    cases([5, 3, 1], 37, 23, 7);
}

#[test]
fn elements_past_the_limit_keep_their_atomic_at_the_read() {
    cases([16, 1, 1], 45, 1, MAX_REDUCED as u32 + 3);
}

/// A kernel that returns early keeps the compare-exchange at each read (the reduction's
/// barriers need every invocation at the end).
#[test]
fn a_kernel_with_return_keeps_its_atomics_at_the_reads() {
    let mut k = KernelBuilder::new("early", [64, 1, 1]);
    let p = k.storage::<RuntimeArray<f32>, ReadOnly>("p");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.ge(y.len()), |k| k.return_());
    k.store(&y.at(&i), p.at(0u32).load() * i.to_f32());
    let backward = derive(&k, &Derive::new()).expect("derives");
    let wgsl = backward.kernels[0].kernel.build().expect("builds").wgsl;
    assert!(!wgsl.contains("d_partial"), "{wgsl}");
    assert!(
        !backward.choices[0]
            .reason
            .contains("summed in each workgroup")
    );
    let n = 100;
    let dy = random(n, 4);
    let want: f64 = dy
        .iter()
        .enumerate()
        .map(|(i, &g)| f64::from(g) * i as f64)
        .sum();
    let got = run_backward(
        &backward,
        &[("p", Data::F32(vec![0.5]))],
        &[("y", dy)],
        [2, 1, 1],
        &Interpreter::new(),
    )
    .expect("runs");
    let got = f64::from(got.get("p").expect("p")[0]);
    assert!(
        (got - want).abs() <= 1e-4 * want.abs().max(1.0),
        "{got} vs {want}"
    );
}
