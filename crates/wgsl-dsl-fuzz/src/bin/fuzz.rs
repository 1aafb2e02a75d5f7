//! `fuzz`: run the kernel fuzzer (crates/wgsl-dsl-fuzz) for a time or a number of cases.
//!
//! `cargo run -p wgsl-dsl-fuzz --release --bin fuzz -- --seconds 60 --seed 1`

use std::time::Duration;

use clap::Parser;
use wgsl_dsl_fuzz::{Budget, GenOptions, Targets, case_seed, check, generate, print, run};

#[derive(Debug, Parser)]
#[command(
    about = "Differential fuzzer of the wgsl-dsl builder: build, naga round trip, interpreter vs GPU, constant folding"
)]
struct Args {
    /// Run for this many seconds.
    #[arg(long, conflicts_with = "cases")]
    seconds: Option<f64>,
    /// Run this many cases.
    #[arg(long)]
    cases: Option<u64>,
    /// The run's seed; case i uses a seed derived from it (printed with each failure).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Interpreter-only oracles (a), (b), (d) and the interpreter's own checks.
    #[arg(long)]
    no_gpu: bool,
    /// Do not shrink failures.
    #[arg(long)]
    no_shrink: bool,
    /// Print one case (its case seed) as Rust builder calls and its WGSL, then check it (and
    /// shrink it if it fails, unless `--no-shrink`).
    #[arg(long)]
    replay: Option<u64>,
    /// Statements per kernel (at most).
    #[arg(long, default_value_t = GenOptions::default().statements)]
    statements: i32,
    /// Run the AD fuzzer instead (`wgsl_dsl_fuzz::ad`): differentiable kernels, their
    /// derived backward passes checked by the adjoint identity (`--seconds`, `--cases`,
    /// `--seed`, `--no-gpu`, `--no-shrink`, `--replay` apply to it).
    #[arg(long)]
    ad: bool,
    /// With `--ad`: every how many cases one also runs on the GPU.
    #[arg(long, default_value_t = 4)]
    ad_gpu_every: u64,
}

impl Args {
    /// `--cases`, else `--seconds`, else 60 seconds.
    fn budget(&self) -> Budget {
        match (self.seconds, self.cases) {
            (_, Some(n)) => Budget::Cases(n),
            (Some(s), None) => Budget::Time(Duration::from_secs_f64(s)),
            (None, None) => Budget::Time(Duration::from_secs(60)),
        }
    }
}

/// The AD fuzzer's statements per kernel (at most).
const AD_STATEMENTS: i32 = 14;

fn ad_main(args: &Args) {
    use wgsl_dsl_fuzz::ad;
    let gpu = if args.no_gpu {
        None
    } else {
        match wgsl_dsl::runtime::Gpu::new() {
            Ok(g) => Some(g),
            Err(e) => {
                eprintln!("error: no GPU adapter ({e}); pass --no-gpu for the interpreter only");
                std::process::exit(2);
            }
        }
    };
    if let Some(s) = args.replay {
        let p = ad::program::generate(s, AD_STATEMENTS);
        println!("{}", ad::emit::print(&p));
        match ad::check(&p, s, gpu.as_ref()) {
            Ok(passed) => println!("case {s}: passed ({passed:?})"),
            Err(f) => {
                println!("case {s}: FAILED {f}");
                if !args.no_shrink {
                    let small = ad::shrink(&p, s, f.kind, gpu.as_ref(), 2000);
                    let sf = ad::check(&small, s, gpu.as_ref()).err().unwrap_or(f);
                    println!("shrunk ({sf}):\n{}", ad::emit::print(&small));
                }
                std::process::exit(1);
            }
        }
        return;
    }
    let budget = args.budget();
    let mut last = std::time::Instant::now();
    let report = ad::run(
        args.seed,
        budget,
        AD_STATEMENTS,
        gpu.as_ref(),
        args.ad_gpu_every,
        !args.no_shrink,
        &mut |r| {
            if last.elapsed() >= Duration::from_secs(30) {
                last = std::time::Instant::now();
                println!(
                    "[{:>6.0} s] {} kernels, {:.1} kernels/s, {} refused, {} failures",
                    r.elapsed.as_secs_f64(),
                    r.cases,
                    r.rate(),
                    r.refused,
                    r.failures.len()
                );
            }
        },
    );
    for f in &report.failures {
        println!("\nFAILED case {}: {}", f.seed, f.failure);
        if let Some((sf, code)) = &f.shrunk {
            println!("shrunk ({sf}):\n{code}");
        }
        println!(
            "replay: cargo run -p wgsl-dsl-fuzz --release --bin fuzz -- --ad --replay {}",
            f.seed
        );
    }
    let mut kinds: Vec<(String, usize)> = Vec::new();
    for f in &report.failures {
        let k = format!("{:?}", f.failure.kind);
        match kinds.iter_mut().find(|(n, _)| *n == k) {
            Some((_, c)) => *c += 1,
            None => kinds.push((k, 1)),
        }
    }
    println!("\nAD: {report} {kinds:?}");
    if !report.failures.is_empty() {
        std::process::exit(1);
    }
}

fn targets(no_gpu: bool) -> Targets {
    if no_gpu {
        return Targets::interpreter_only();
    }
    match Targets::with_gpu() {
        Ok(t) => t,
        Err(e) => {
            eprintln!(
                "error: no GPU adapter ({e}); pass --no-gpu for the interpreter-only oracles"
            );
            std::process::exit(2);
        }
    }
}

fn main() {
    let args = Args::parse();
    if args.ad {
        ad_main(&args);
        return;
    }
    let opts = GenOptions {
        statements: args.statements,
        ..GenOptions::default()
    };
    let mut t = targets(args.no_gpu);
    println!("targets: {}", t.describe());
    if let Some(s) = args.replay {
        let prog = generate(s, &opts, t.subgroups());
        println!("{}", print::program(&prog));
        if let Ok(an) = wgsl_dsl_fuzz::analysis::analyze(&prog)
            && let Ok(shader) = wgsl_dsl_fuzz::emit::emit(&prog, &an).kernel.build()
        {
            println!("// WGSL:\n{}", shader.wgsl);
            if let Ok(m) = wgsl_dsl::naga::front::wgsl::parse_str(&shader.wgsl)
                && let Ok(i) = wgsl_dsl::naga::valid::Validator::new(
                    wgsl_dsl::naga::valid::ValidationFlags::all(),
                    wgsl_dsl::naga::valid::Capabilities::all(),
                )
                .validate(&m)
                && let Ok(w) = wgsl_dsl::naga::back::wgsl::write_string(
                    &m,
                    &i,
                    wgsl_dsl::naga::back::wgsl::WriterFlags::empty(),
                )
            {
                println!("// re-emitted WGSL:\n{w}");
            }
        }
        match check(&prog, &t) {
            Ok(p) => println!("case {s}: passed ({p:?})"),
            Err(f) => {
                println!("case {s}: FAILED {f}");
                if !args.no_shrink {
                    let (small, _) = wgsl_dsl_fuzz::shrink::shrink(&prog, f.oracle, &t);
                    let sf = check(&small, &t).err().unwrap_or(f);
                    println!(
                        "shrunk ({}): {}\n{}",
                        sf.oracle,
                        sf.message,
                        print::program(&small)
                    );
                }
                std::process::exit(1);
            }
        }
        return;
    }
    let budget = args.budget();
    let no_gpu = args.no_gpu;
    let mut last = std::time::Instant::now();
    let report = run(
        args.seed,
        budget,
        &opts,
        !args.no_shrink,
        &mut t,
        &mut || (!no_gpu).then(|| targets(false)),
        &mut |r| {
            if last.elapsed() >= Duration::from_secs(30) {
                last = std::time::Instant::now();
                println!(
                    "[{:>6.0} s] {} cases, {:.1} kernels/s, {} failures",
                    r.elapsed.as_secs_f64(),
                    r.cases,
                    r.rate(),
                    r.failures.len()
                );
            }
        },
    );
    for f in &report.failures {
        println!(
            "\nFAILED case {} ({}): {}",
            f.seed, f.failure.oracle, f.failure.message
        );
        if let Some((sf, code)) = &f.shrunk {
            println!("shrunk ({}): {}\n{code}", sf.oracle, sf.message);
        }
        println!(
            "replay: cargo run -p wgsl-dsl-fuzz --release --bin fuzz -- --replay {}",
            f.seed
        );
    }
    let _ = case_seed;
    println!(
        "\n{} cases in {:.1} s: {:.2} kernels/s; {} on the GPU, {} cooperative-matrix, {} planted mistakes rejected, {} re-emitted as the same WGSL text, {} output values and {} folded constants compared; {} failures",
        report.cases,
        report.elapsed.as_secs_f64(),
        report.rate(),
        report.gpu_cases,
        report.coop,
        report.mistakes,
        report.text_identical,
        report.slots,
        report.consts,
        report.failures.len()
    );
    if !report.failures.is_empty() {
        std::process::exit(1);
    }
}
