//! # The AD fuzzer: random differentiable kernels, their derived backward passes checked
//!
//! [`program::generate`] makes a kernel of the generator's differentiable subset (1-, 2- and
//! 3-D grids, gathers and scatters through index maps, several stores to an element,
//! `if`/`select`/`switch`, unrolled loops, run-time loops bounded by `max_iterations`,
//! workgroup memory and a barrier, helper functions, kinks: see [`program`]);
//! [`emit::emit`] builds it with the DSL. [`check`] then:
//!
//! 1. derives its backward pass (`autodiff::derive`): a refusal must be a
//!    `BuildError::NotDifferentiable` located at a line of the kernel's author (here, the
//!    fuzzer's [`emit`]), never inside the library, and never a panic;
//! 2. runs `autodiff::check` on the interpreter (race, bounds and barrier checks on): the
//!    adjoint identity `<u, J v> = <J^T u, v>` between the forward kernel's tangent kernel
//!    (forward mode, `autodiff::derive_tangent`) and the backward pass must hold; the
//!    central differences are recorded (a kink within the step makes them disagree with a
//!    right derivative, so they are reported, not failed);
//! 3. on the GPU too when one is given (the backward pass also runs on the interpreter's
//!    checks there).
//!
//! A failure is shrunk ([`shrink`]) to a small kernel printed as DSL builder calls
//! ([`emit::print`]). Everything is deterministic from the case seed.

pub mod emit;
pub mod program;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use wgsl_dsl::BuildError;
use wgsl_dsl::autodiff::{Adjoint, CheckError, CheckOptions, Data, Executor, check as grad_check};
use wgsl_dsl::interp::Interpreter;
use wgsl_dsl::runtime::Gpu;

use program::{AdProgram, E, S};

/// What a failing case did wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A panic in the library (derive, forward mode, build, the checker).
    Panic,
    /// The forward kernel did not build (a bug of the generator or the builder).
    ForwardBuild,
    /// The derivation was refused at a site inside the library, not the author's line.
    UnlocatedRefusal,
    /// The derived backward kernel did not build, or the derivation failed otherwise.
    BackwardBuild,
    /// The interpreter found a race, an out-of-bounds access or a barrier problem.
    Interp,
    /// The adjoint identity failed (a wrong derivative, or a non-finite one).
    Identity,
    /// Forward mode refused a kernel that reverse mode derived.
    NoForwardMode,
    /// The GPU failed.
    Gpu,
}

/// A failing case.
#[derive(Clone, Debug)]
pub struct AdFailure {
    pub kind: Kind,
    pub message: String,
}

impl std::fmt::Display for AdFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}: {}", self.kind, self.message)
    }
}

/// What a passing case was.
#[derive(Clone, Copy, Debug, Default)]
pub struct AdPassed {
    /// The derivation was refused (with a located error).
    pub refused: bool,
    /// The central differences disagreed with the derivative beyond the checker's
    /// tolerance (kinks, ill-conditioning) while the identity held.
    pub differences_disagree: bool,
    /// It ran on the GPU too.
    pub gpu: bool,
}

/// Random data of case `seed` for `p`'s bindings, values in `[-1, 1)`.
fn data(p: &AdProgram, seed: u64) -> Vec<(String, Data)> {
    let mut s = seed ^ 0xda7a;
    let mut next = move || {
        s = s.wrapping_add(crate::SPLITMIX64_GAMMA);
        let z = crate::splitmix64(s);
        ((z >> 40) as f32 / (1u64 << 23) as f32) - 1.0
    };
    let mut out = Vec::new();
    for (i, len) in p.inputs.iter().enumerate() {
        out.push((
            format!("in{i}"),
            Data::F32((0..*len).map(|_| next()).collect()),
        ));
    }
    for i in 0..p.outputs {
        out.push((
            format!("out{i}"),
            Data::F32(vec![0.0; p.invocations() as usize]),
        ));
    }
    if p.has_run_time_loop() {
        out.push(("counts".to_string(), Data::U32(p.counts.clone())));
    }
    if p.bins > 0 {
        out.push(("acc".to_string(), Data::U32(vec![0; p.bins as usize])));
    }
    out
}

fn panic_message(e: Box<dyn std::any::Any + Send>) -> String {
    e.downcast_ref::<String>()
        .cloned()
        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "a panic".into())
}

/// Check one kernel (see the module docs); `gpu` adds the GPU executor.
pub fn check(p: &AdProgram, seed: u64, gpu: Option<&Gpu>) -> Result<AdPassed, AdFailure> {
    let fail = |kind, message: String| AdFailure { kind, message };
    let forward = catch_unwind(AssertUnwindSafe(|| emit::emit(p)))
        .map_err(|e| fail(Kind::Panic, format!("emitting: {}", panic_message(e))))?;
    if let Err(e) = forward.build() {
        return Err(fail(Kind::ForwardBuild, e.to_string()));
    }
    let derived = catch_unwind(AssertUnwindSafe(|| forward.derive_backward()))
        .map_err(|e| fail(Kind::Panic, format!("deriving: {}", panic_message(e))))?;
    let backward = match derived {
        Ok(b) => b,
        Err(e @ BuildError::NotDifferentiable { .. }) => {
            let BuildError::NotDifferentiable { site, .. } = &e else {
                unreachable!()
            };
            if !site.file.contains("wgsl-dsl-fuzz") {
                return Err(fail(
                    Kind::UnlocatedRefusal,
                    format!("refused at {site}, not at the author's line: {e}"),
                ));
            }
            return Ok(AdPassed {
                refused: true,
                ..AdPassed::default()
            });
        }
        Err(e) => return Err(fail(Kind::BackwardBuild, e.to_string())),
    };
    let data = data(p, seed);
    let named: Vec<(&str, Data)> = data.iter().map(|(n, d)| (n.as_str(), d.clone())).collect();
    let options = CheckOptions {
        seed,
        ..CheckOptions::default()
    };
    let mut passed = AdPassed::default();
    let ad = Checked {
        forward: &forward,
        backward: &backward,
        data: &named,
        workgroups: p.workgroups(),
        options,
    };
    passed.differences_disagree |= ad.on(&Interpreter::new())?;
    if let Some(g) = gpu {
        passed.gpu = true;
        passed.differences_disagree |= ad.on(g)?;
    }
    Ok(passed)
}

/// One derived kernel and its data, checked by [`grad_check`] on each executor.
struct Checked<'a> {
    forward: &'a wgsl_dsl::KernelBuilder,
    backward: &'a wgsl_dsl::autodiff::Backward,
    data: &'a [(&'a str, Data)],
    workgroups: [u32; 3],
    options: CheckOptions,
}

impl Checked<'_> {
    /// Check on `on`: a failure if the check fails or the adjoint identity does not hold;
    /// else whether the central differences disagreed (which the identity overrules).
    fn on<X: Executor>(&self, on: &X) -> Result<bool, AdFailure> {
        let fail = |kind, message: String| AdFailure { kind, message };
        let report = catch_unwind(AssertUnwindSafe(|| {
            grad_check(
                self.forward,
                self.backward,
                self.data,
                self.workgroups,
                on,
                self.options,
            )
        }))
        .map_err(|e| fail(Kind::Panic, format!("checking: {}", panic_message(e))))?;
        let report = match report {
            Ok(r) => r,
            Err(CheckError::Interp(e)) => return Err(fail(Kind::Interp, e.to_string())),
            Err(CheckError::Build(e)) => return Err(fail(Kind::BackwardBuild, e.to_string())),
            Err(e) => return Err(fail(Kind::Gpu, e.to_string())),
        };
        match &report.adjoint {
            Adjoint::Checked(a) if !a.holds() => Err(fail(Kind::Identity, report.to_string())),
            Adjoint::NotMade(why) => Err(fail(Kind::NoForwardMode, why.clone())),
            Adjoint::Checked(_) => Ok(report.max_error() > report.difference_tolerance),
        }
    }
}

// ---- shrinking ----

/// Smaller variants of a block: each statement removed, each compound statement replaced by
/// one of its blocks, each block shrunk in place, each expression simplified.
fn block_variants(body: &[S]) -> Vec<Vec<S>> {
    let mut out = Vec::new();
    for i in 0..body.len() {
        let mut v = body.to_vec();
        v.remove(i);
        out.push(v);
    }
    for i in 0..body.len() {
        let replace = |with: Vec<S>| {
            let mut v = body[..i].to_vec();
            v.extend(with);
            v.extend_from_slice(&body[i + 1..]);
            v
        };
        match &body[i] {
            S::If {
                cond,
                then,
                otherwise,
            } => {
                out.push(replace(then.clone()));
                out.push(replace(otherwise.clone()));
                for t in block_variants(then) {
                    out.push(replace(vec![S::If {
                        cond: cond.clone(),
                        then: t,
                        otherwise: otherwise.clone(),
                    }]));
                }
                for o in block_variants(otherwise) {
                    out.push(replace(vec![S::If {
                        cond: cond.clone(),
                        then: then.clone(),
                        otherwise: o,
                    }]));
                }
            }
            S::Switch { modulus, arms } => {
                for (a, arm) in arms.iter().enumerate() {
                    out.push(replace(arm.clone()));
                    for v in block_variants(arm) {
                        let mut arms = arms.clone();
                        arms[a] = v;
                        out.push(replace(vec![S::Switch {
                            modulus: *modulus,
                            arms,
                        }]));
                    }
                }
            }
            S::Loop {
                trips,
                run_time,
                body: inner,
            } => {
                out.push(replace(inner.clone()));
                if *trips > 1 {
                    out.push(replace(vec![S::Loop {
                        trips: 1,
                        run_time: *run_time,
                        body: inner.clone(),
                    }]));
                }
                if *run_time {
                    out.push(replace(vec![S::Loop {
                        trips: *trips,
                        run_time: false,
                        body: inner.clone(),
                    }]));
                }
                for v in block_variants(inner) {
                    out.push(replace(vec![S::Loop {
                        trips: *trips,
                        run_time: *run_time,
                        body: v,
                    }]));
                }
            }
            S::Let(id, e) | S::Var(id, e) | S::Assign(id, e) => {
                for f in exp_variants(e) {
                    out.push(replace(vec![match &body[i] {
                        S::Let(..) => S::Let(*id, f),
                        S::Var(..) => S::Var(*id, f),
                        _ => S::Assign(*id, f),
                    }]));
                }
            }
            S::Store { out: o, value } => {
                for f in exp_variants(value) {
                    out.push(replace(vec![S::Store { out: *o, value: f }]));
                }
            }
            S::Accumulate { bin, value } => {
                for f in exp_variants(value) {
                    out.push(replace(vec![S::Accumulate {
                        bin: bin.clone(),
                        value: f,
                    }]));
                }
            }
        }
    }
    out
}

/// Simpler expressions: a literal, each operand in its place.
fn exp_variants(e: &E) -> Vec<E> {
    let mut out = Vec::new();
    if !matches!(e, E::Lit(_)) {
        out.push(E::Lit(0.5));
    }
    match e {
        E::Un(op, a) => {
            out.push((**a).clone());
            for v in exp_variants(a) {
                out.push(E::Un(*op, Box::new(v)));
            }
        }
        E::Bin(op, a, b) => {
            out.push((**a).clone());
            out.push((**b).clone());
            for v in exp_variants(a) {
                out.push(E::Bin(*op, Box::new(v), b.clone()));
            }
            for v in exp_variants(b) {
                out.push(E::Bin(*op, a.clone(), Box::new(v)));
            }
        }
        E::Select(_, a, b) | E::Call(_, a, b) => {
            out.push((**a).clone());
            out.push((**b).clone());
        }
        E::GuardedSqrt(a) => out.push((**a).clone()),
        _ => {}
    }
    out
}

fn size(body: &[S]) -> usize {
    body.iter()
        .map(|s| match s {
            S::If {
                then, otherwise, ..
            } => 1 + size(then) + size(otherwise),
            S::Switch { arms, .. } => 1 + arms.iter().map(|a| size(a)).sum::<usize>(),
            S::Loop { body, .. } => 1 + size(body),
            _ => 1,
        })
        .sum()
}

/// `p` made smaller while [`check`] still fails with `kind` (greedy, first improvement;
/// at most `budget` checks); the smallest failing program.
pub fn shrink(p: &AdProgram, seed: u64, kind: Kind, gpu: Option<&Gpu>, budget: usize) -> AdProgram {
    let mut best = p.clone();
    let mut checks = 0;
    let still = |q: &AdProgram, checks: &mut usize| {
        *checks += 1;
        matches!(check(q, seed, gpu), Err(f) if f.kind == kind)
    };
    'outer: loop {
        let mut candidates: Vec<AdProgram> = Vec::new();
        if best.stage.is_some() {
            let mut q = best.clone();
            q.stage = None;
            candidates.push(q);
        }
        if best.bins > 0 && !program::accumulates(&best.body) {
            let mut q = best.clone();
            q.bins = 0;
            candidates.push(q);
        }
        if best.helpers.iter().any(|_| true) {
            let mut q = best.clone();
            if !body_calls(&q.body) {
                q.helpers.clear();
                candidates.push(q);
            }
        }
        if best.extent.iter().product::<u32>() > 1 {
            for d in 0..3 {
                if best.extent[d] > 1 {
                    let mut q = best.clone();
                    q.extent[d] = (q.extent[d] / 2).max(1);
                    candidates.push(q);
                }
            }
        }
        for v in block_variants(&best.body) {
            let mut q = best.clone();
            q.body = v;
            candidates.push(q);
        }
        for q in candidates {
            if checks >= budget {
                break 'outer;
            }
            let smaller = size(&q.body) < size(&best.body)
                || q.extent.iter().product::<u32>() < best.extent.iter().product::<u32>()
                || q.helpers.len() < best.helpers.len()
                || q.bins < best.bins
                || format!("{:?}", q.body).len() < format!("{:?}", best.body).len();
            if smaller && still(&q, &mut checks) {
                best = q;
                continue 'outer;
            }
        }
        break;
    }
    best
}

fn body_calls(body: &[S]) -> bool {
    format!("{body:?}").contains("Call(")
}

// ---- runs ----

/// A failing case of a run (the shrunk kernel as DSL builder calls).
pub type AdFound = crate::Found<AdFailure>;

/// What an AD run did.
#[derive(Clone, Debug, Default)]
pub struct AdReport {
    pub cases: u64,
    /// Derivations refused with a located error.
    pub refused: u64,
    /// Cases checked on the GPU too.
    pub gpu_cases: u64,
    /// Cases whose differences disagreed while the identity held (kinks, conditioning).
    pub differences_disagree: u64,
    pub failures: Vec<AdFound>,
    pub elapsed: Duration,
}

impl AdReport {
    pub fn rate(&self) -> f64 {
        self.cases as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// The run's counts, one line (the failures' kinds apart).
impl std::fmt::Display for AdReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} kernels in {:.1} s: {:.2} kernels/s; {} on the GPU too, {} derivations refused (located), {} with differences off at kinks while the identity held; {} failures",
            self.cases,
            self.elapsed.as_secs_f64(),
            self.rate(),
            self.gpu_cases,
            self.refused,
            self.differences_disagree,
            self.failures.len()
        )
    }
}

/// Run AD cases from `seed` until `budget` is spent; every `gpu_every`-th case also on the
/// GPU (when one is given); failures shrunk when `shrink` is set.
#[allow(clippy::too_many_arguments)]
pub fn run(
    seed: u64,
    budget: crate::Budget,
    statements: i32,
    gpu: Option<&Gpu>,
    gpu_every: u64,
    shrink_failures: bool,
    progress: &mut dyn FnMut(&AdReport),
) -> AdReport {
    let start = Instant::now();
    let mut report = AdReport::default();
    while !budget.spent(report.cases, start) {
        let s = crate::case_seed(seed, report.cases);
        let p = program::generate(s, statements);
        let on_gpu = gpu.filter(|_| report.cases % gpu_every.max(1) == 0);
        report.cases += 1;
        match check(&p, s, on_gpu) {
            Ok(passed) => {
                report.refused += u64::from(passed.refused);
                report.gpu_cases += u64::from(passed.gpu);
                report.differences_disagree += u64::from(passed.differences_disagree);
            }
            Err(failure) => {
                let small = shrink_failures.then(|| shrink(&p, s, failure.kind, on_gpu, 400));
                report.failures.push(AdFound::new(
                    s,
                    failure,
                    small,
                    |small| check(small, s, on_gpu).err(),
                    emit::print,
                ));
            }
        }
        report.elapsed = start.elapsed();
        progress(&report);
    }
    report.elapsed = start.elapsed();
    report
}
