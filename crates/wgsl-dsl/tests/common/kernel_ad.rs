//! Kernel AD's test helpers (`autodiff_loops.rs`, `autodiff_shared.rs`): a derived pass
//! checked by `autodiff::check` (central differences and the adjoint identity, which must be
//! checked and hold), and run alone on the interpreter (race, bounds and barrier checks on) for
//! comparisons with `f64` closed forms.

use rand::Rng;
use rand::rngs::StdRng;
use wgsl_dsl::autodiff::{
    Accumulation, Adjoint, Backward, CheckOptions, Data, Executor, Role, check,
};
use wgsl_dsl::interp::{HostArg, HostBuffer, Interpreter};
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
pub fn check_case(c: &Case, on: Executor<'_>) {
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

/// The backward pass run once on the interpreter with `data` for its roles' bindings (data
/// by the forward binding's name, `d_<output>` given, gradients zeroed); the gradients by
/// name, as `f32`s.
pub fn run_backward(
    backward: &Backward,
    data: &[(&str, Data)],
    grid: [u32; 3],
) -> Vec<(String, Vec<f32>)> {
    let bk = &backward.kernels[0];
    let program = Interpreter::new()
        .compile(&bk.kernel.build().expect("builds"))
        .expect("compiles");
    enum B {
        F(HostBuffer<f32>),
        U(HostBuffer<u32>),
    }
    let get = |name: &str| {
        data.iter()
            .find(|(n, _)| *n == name)
            .map(|(_, d)| d.clone())
            .unwrap_or_else(|| panic!("no data for {name}"))
    };
    let mut bufs = Vec::new();
    for (name, role) in &bk.roles {
        let d = match role {
            Role::Data { binding } => get(binding),
            Role::OutputGradient { .. } => get(name),
            Role::InputGradient {
                input,
                accumulation,
            } => {
                let n = match get(input) {
                    Data::F32(v) => v.len(),
                    _ => panic!("f32 input"),
                };
                match accumulation {
                    Accumulation::Atomic => Data::U32(vec![0; n]),
                    _ => Data::F32(vec![0.0; n]),
                }
            }
            Role::IterationLimit { .. } => Data::U32(vec![0]),
        };
        bufs.push(match d {
            Data::F32(v) => B::F(HostBuffer::from_slice(&v)),
            Data::U32(v) => B::U(HostBuffer::from_slice(&v)),
            Data::I32(_) => panic!("no i32 here"),
        });
    }
    let args: Vec<&dyn HostArg> = bufs
        .iter()
        .map(|b| -> &dyn HostArg {
            match b {
                B::F(b) => b,
                B::U(b) => b,
            }
        })
        .collect();
    Interpreter::new()
        .dispatch(&program, &args, grid)
        .expect("runs");
    let mut out = Vec::new();
    for ((name, role), b) in bk.roles.iter().zip(&bufs) {
        match (role, b) {
            (Role::InputGradient { .. }, B::F(b)) => out.push((name.clone(), b.read())),
            (Role::InputGradient { .. }, B::U(b)) => out.push((
                name.clone(),
                b.read().into_iter().map(f32::from_bits).collect(),
            )),
            (Role::IterationLimit { .. }, B::U(b)) => bk
                .check_iteration_limit(b.read()[0])
                .expect("within bounds"),
            _ => {}
        }
    }
    out
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
