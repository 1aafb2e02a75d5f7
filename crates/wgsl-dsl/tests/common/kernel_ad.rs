//! Kernel AD's test helpers (`autodiff_loops.rs`, `autodiff_shared.rs`): a derived pass
//! checked by `autodiff::check` (central differences and the adjoint identity, which must be
//! checked and hold), and run alone on the interpreter (race, bounds and barrier checks on) for
//! comparisons with `f64` closed forms.

use rand::Rng;
use rand::rngs::StdRng;
use wgsl_dsl::autodiff::{
    self, Adjoint, Backward, CheckError, CheckOptions, Data, Executor, GradientReport, Role, check,
};
use wgsl_dsl::interp::Interpreter;
use wgsl_dsl::prelude::*;

/// Worst `|derived - central| / max(1, |central|)` allowed.
pub const TOLERANCE: f64 = 2e-3;

/// `n` values uniform in `[-scale, scale)`.
pub fn uniform(r: &mut StdRng, n: usize, scale: f32) -> Vec<f32> {
    (0..n).map(|_| r.random_range(-scale..scale)).collect()
}

/// A forward kernel, its derived backward pass, data by binding name, the grid.
pub struct Case {
    pub name: &'static str,
    pub forward: KernelBuilder,
    pub backward: Backward,
    pub data: Vec<(&'static str, Data)>,
    pub grid: [u32; 3],
}

/// `autodiff::check` of `c` on `on`: the differences within [`TOLERANCE`], the adjoint
/// identity checked and holding.
pub fn check_case<X: Executor>(c: &Case, on: &X) {
    let report = check(
        &c.forward,
        &c.backward,
        &c.data,
        c.grid,
        on,
        CheckOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{}: {e}", c.name));
    eprintln!("{}{report}", c.backward);
    assert!(!report.worst.is_empty(), "{}: nothing checked", c.name);
    assert!(report.max_error() < TOLERANCE, "{}:\n{report}", c.name);
    // The adjoint identity against the forward-mode kernel: checked, and holding.
    match &report.adjoint {
        Adjoint::Checked(a) => assert!(a.holds(), "{}: adjoint identity fails:\n{report}", c.name),
        Adjoint::NotMade(why) => panic!("{}: no forward mode ({why})", c.name),
    }
}

/// `autodiff::check` of a kernel dispatched as one workgroup, on the interpreter (race, bounds
/// and barrier checks on).
pub fn check_one_workgroup(
    forward: &KernelBuilder,
    backward: &Backward,
    data: &[(&str, Data)],
    options: CheckOptions,
) -> Result<GradientReport, CheckError> {
    check(
        forward,
        backward,
        data,
        [1, 1, 1],
        &Interpreter::new(),
        options,
    )
}

/// The backward pass run once on the interpreter (`autodiff::run_backward`: race, bounds and
/// barrier checks on, gradients zeroed first, the iteration-limit flag checked) with `data`
/// by the forward binding's name and each output's incoming gradient as `d_<output>` (the
/// backward kernel's name for it); the gradients as `d_<input>`.
pub fn run_backward(
    backward: &Backward,
    data: &[(&str, Data)],
    grid: [u32; 3],
) -> Vec<(String, Vec<f32>)> {
    let incoming = incoming_gradients(backward, data);
    autodiff::run_backward(backward, data, &incoming, grid, &Interpreter::new())
        .unwrap_or_else(|e| panic!("the backward pass runs: {e}"))
        .by_input
        .into_iter()
        .map(|(input, g)| (format!("d_{input}"), g))
        .collect()
}

/// Each output's incoming gradient, by the output's name: the `f32` data of `data` bound to
/// the backward kernels' `d_<output>` bindings.
pub fn incoming_gradients<'a>(
    backward: &'a Backward,
    data: &[(&str, Data)],
) -> Vec<(&'a str, Vec<f32>)> {
    let mut incoming = Vec::new();
    for (name, role) in backward.kernels.iter().flat_map(|k| &k.roles) {
        if let (Role::OutputGradient { output }, Some((_, Data::F32(u)))) =
            (role, data.iter().find(|(n, _)| n == name))
        {
            incoming.push((output.as_str(), u.clone()));
        }
    }
    incoming
}

/// The gradient named `name` of [`run_backward`]'s result.
pub fn gradient<'a>(g: &'a [(String, Vec<f32>)], name: &str) -> &'a [f32] {
    &g.iter().find(|(n, _)| n == name).expect("gradient").1
}

/// `got` within `1e-5` of `want` relative to `max(1, |want|)`, element by element.
pub fn assert_close(name: &str, got: &[f32], want: &[f64]) {
    assert_eq!(got.len(), want.len());
    for (j, (g, w)) in got.iter().zip(want).enumerate() {
        let err = (f64::from(*g) - w).abs() / w.abs().max(1.0);
        assert!(err < 1e-5, "{name}[{j}]: derived {g}, f64 {w}");
    }
}

/// `derive(k)` is refused with a `NotDifferentiable` whose message contains `words`, located
/// at line `line` of the calling test's file.
#[track_caller]
pub fn refused(k: &KernelBuilder, words: &str, line: u32) {
    let file = std::panic::Location::caller().file();
    match autodiff::derive(k, &autodiff::Derive::new()) {
        Err(e @ wgsl_dsl::BuildError::NotDifferentiable { .. }) => {
            let wgsl_dsl::BuildError::NotDifferentiable { site, .. } = &e else {
                unreachable!()
            };
            assert!(e.to_string().contains(words), "{e}");
            assert_eq!((site.file, site.line), (file, line), "{e}");
        }
        other => panic!("expected NotDifferentiable, got {other:?}"),
    }
}
