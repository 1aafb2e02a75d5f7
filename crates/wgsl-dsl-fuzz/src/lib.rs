//! # wgsl-dsl-fuzz: a differential fuzzer for the DSL
//!
//! In the spirit of Csmith and wgslsmith: random well-typed compute kernels, made through the
//! DSL's own public builder ([`wgsl_dsl::KernelBuilder`], [`wgsl_dsl::Exp`],
//! [`wgsl_dsl::Place`]), free of undefined behaviour by construction, deterministic from a
//! seed, then checked by four oracles:
//!
//! - **(a)** `build()` returns a shader, or (only for a planted mistake) a located error;
//!   never a panic, and never a naga validation error for a kernel the DSL accepted;
//! - **(b)** the WGSL it emits re-parses with naga's WGSL front end, validates, and re-emits
//!   the same text (up to naga's renaming; where naga's front end folds or lowers part of the
//!   module, the re-emission is a fixed point and runs the same: [`oracle::text_check`]);
//! - **(c)** the interpreter and the GPU agree: integers and `bool`s bit for bit, floats
//!   within twice the bound the analysis derives from WGSL's accuracy table
//!   ([`accuracy`]), and each executor within the bound of the exact value's interval;
//! - **(d)** every output whose expression is a constant (folded by the DSL,
//!   `Exp::eval_const`) equals what the executors compute for it, and for its twin built from
//!   the same values loaded from a buffer.
//!
//! A failing case is shrunk ([`shrink`]) and printed as Rust builder calls ([`mod@print`]).
//!
//! The pipeline: [`generator`] makes a [`ast::Program`]; [`analysis`] proves it UB-free and
//! bounds every output; [`emit`] builds it with the DSL; [`oracle`] runs the checks.

pub mod accuracy;
pub mod ad;
pub mod analysis;
mod analysis_math;
pub mod ast;
mod coop;
pub mod emit;
mod emit_ops;
mod emitted;
pub mod generator;
mod info;
pub mod oracle;
pub mod print;
pub mod roundtrip;
pub mod shrink;
mod texture;
mod ty;
pub mod value;

use std::fmt;
use std::time::{Duration, Instant};

pub use generator::{GenOptions, generate};
pub use oracle::{Failure, Oracle, Passed, Targets, check};

/// The seed of case `i` of a run started from `seed` (SplitMix64), so that any case can be
/// regenerated alone: `fuzz --replay <case seed>`.
pub fn case_seed(seed: u64, i: u64) -> u64 {
    splitmix64(seed.wrapping_add(i.wrapping_add(1).wrapping_mul(SPLITMIX64_GAMMA)))
}

/// SplitMix64's increment.
pub(crate) const SPLITMIX64_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// SplitMix64's output function of the state `z`.
pub(crate) fn splitmix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// When a run stops.
#[derive(Clone, Copy, Debug)]
pub enum Budget {
    /// After this many cases.
    Cases(u64),
    /// After this long (the case in progress finishes).
    Time(Duration),
}

impl Budget {
    /// Whether a run that started at `start` and has run `cases` cases is over.
    pub fn spent(self, cases: u64, start: Instant) -> bool {
        match self {
            Budget::Cases(n) => cases >= n,
            Budget::Time(t) => start.elapsed() >= t,
        }
    }
}

/// A failing case: `F` is the failure, [`Failure`] here, [`ad::AdFailure`] in the AD fuzzer.
#[derive(Clone, Debug)]
pub struct Found<F = Failure> {
    /// Its case seed.
    pub seed: u64,
    /// The failure of the generated program.
    pub failure: F,
    /// The shrunk program's failure and Rust source (if shrinking ran).
    pub shrunk: Option<(F, String)>,
}

impl<F: Clone> Found<F> {
    /// The case `seed` that failed with `failure`; `small` is its shrunk program (if shrinking
    /// ran), whose failure `recheck` finds (`failure` where it finds none) and whose source
    /// `print` writes.
    pub(crate) fn new<P>(
        seed: u64,
        failure: F,
        small: Option<P>,
        recheck: impl FnOnce(&P) -> Option<F>,
        print: impl FnOnce(&P) -> String,
    ) -> Self {
        let shrunk = small.map(|p| {
            let f = recheck(&p).unwrap_or_else(|| failure.clone());
            (f, print(&p))
        });
        Found {
            seed,
            failure,
            shrunk,
        }
    }
}

/// `case <seed>: <failure>`, then the shrunk program's failure and source.
impl<F: fmt::Display> fmt::Display for Found<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "case {}: {}", self.seed, self.failure)?;
        if let Some((sf, code)) = &self.shrunk {
            write!(f, "\nshrunk: {sf}\n{code}")?;
        }
        Ok(())
    }
}

/// What a run did.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Cases run.
    pub cases: u64,
    /// Cases that also ran on the GPU.
    pub gpu_cases: u64,
    /// Planted mistakes rejected with a located error.
    pub mistakes: u64,
    /// Cooperative-matrix cases.
    pub coop: u64,
    /// Output values compared (per invocation).
    pub slots: u64,
    /// Constant outputs compared with their folded values.
    pub consts: u64,
    /// Kernels whose WGSL naga re-emitted as the same text (oracle (b); the others have
    /// constructs naga's front end folds or lowers, and only the re-emission's fixed point is
    /// compared as text).
    pub text_identical: u64,
    /// The failures.
    pub failures: Vec<Found>,
    /// Time taken.
    pub elapsed: Duration,
}

impl Report {
    /// Kernels per second.
    pub fn rate(&self) -> f64 {
        self.cases as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// Run cases from `seed` until `budget` is spent, shrinking failures when `shrink` is set.
/// `renew` reopens the targets every `renew_every` cases (the GPU's pipeline cache grows with
/// every distinct kernel); `progress` sees the report after each case.
pub fn run(
    seed: u64,
    budget: Budget,
    opts: &GenOptions,
    shrink: bool,
    targets: &mut Targets,
    renew: &mut dyn FnMut() -> Option<Targets>,
    progress: &mut dyn FnMut(&Report),
) -> Report {
    let start = Instant::now();
    let mut report = Report::default();
    const RENEW_EVERY: u64 = 400;
    while !budget.spent(report.cases, start) {
        if report.cases > 0
            && report.cases % RENEW_EVERY == 0
            && let Some(t) = renew()
        {
            *targets = t;
        }
        let s = case_seed(seed, report.cases);
        let prog = generate(s, opts, targets.subgroups());
        report.cases += 1;
        report.coop += u64::from(prog.coop.is_some());
        match check(&prog, targets) {
            Ok(p) => {
                report.gpu_cases += u64::from(p.gpu);
                report.mistakes += u64::from(p.mistake);
                report.slots += p.slots;
                report.consts += p.consts;
                report.text_identical += u64::from(p.text_identical);
            }
            Err(failure) => {
                let small = shrink.then(|| shrink::shrink(&prog, failure.oracle, targets).0);
                report.failures.push(Found::new(
                    s,
                    failure,
                    small,
                    |small| check(small, targets).err(),
                    print::program,
                ));
            }
        }
        report.elapsed = start.elapsed();
        progress(&report);
    }
    report.elapsed = start.elapsed();
    report
}
