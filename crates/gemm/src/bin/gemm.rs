//! `gemm`: check the GEMM kernels against their specification on this machine's GPU, and
//! measure them.
//!
//! ```text
//! gemm info                      adapter, features, cooperative-matrix configurations
//! gemm check                     every kernel on odd sizes and every layout, against the spec
//! gemm bench [--json FILE]       TFLOP/s on square sizes and the MLP's shapes
//! gemm sweep --size 4096         every tile configuration at one size
//! gemm roofline                  GB/s of the memory-bound kernels (wgsl_gemm::memory)
//! gemm ceiling --size 4096       NVIDIA's technique in GLSL (wgsl_gemm::ceiling) beside ours
//! ```
//!
//! Timing: GPU timestamps around one compute pass of `reps` dispatches (after warm-up), `reps`
//! chosen so that a pass takes about `--pass-ms`; the median of `--samples` passes.

use std::time::Instant;

use clap::{Parser, Subcommand};
use wgsl_dsl::runtime::{Gpu, GpuBuffer, GpuOptions};
use wgsl_gemm::config::WideLoad;
use wgsl_gemm::config::{COOP_TILES, DIRECT_TILES, SINGLE_TILES};
use wgsl_gemm::harness::{
    direct_checks, random, run_and_check, simt_whole_tile_checks, single_checks, whole_tile_checks,
    wide_checks,
};
use wgsl_gemm::run::Variant;
use wgsl_gemm::{CoopConfig, CoopInput, Gemm, GemmError, Layout, Problem, SimtConfig, TileConfig};

#[derive(Parser, Debug)]
#[command(about = "Check and measure the wgsl-gemm kernels")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// The adapter, its features and cooperative-matrix configurations.
    Info,
    /// Every kernel against the specification: odd sizes in every layout, and large sizes on
    /// sampled elements.
    Check,
    /// TFLOP/s of the kernels on square sizes and the MLP's shapes.
    Bench {
        /// Square sizes.
        #[arg(long, value_delimiter = ',', default_value = "1024,2048,4096,8192")]
        sizes: Vec<u32>,
        /// Leave out the MLP's shapes.
        #[arg(long)]
        no_mlp: bool,
        /// Kernels: simt (without bounds checks where its tile divides the problem),
        /// simt-checked (the same tile with them), simt-whole (without them, refused where
        /// the tile does not divide the problem), coop-f16, coop-f16-direct, coop-f16-pairs, coop-f16-words (the tile
        /// coop-f16 picks, reading sixteen bytes at a time, with bounds checks),
        /// coop-f16-whole, coop-f16-words-whole (without bounds checks, where the tile divides
        /// the problem; coop-f16 picks coop-f16-whole there), coop-f32.
        #[arg(
            long,
            value_delimiter = ',',
            default_value = "simt,coop-f16,coop-f16-direct,coop-f32",
            value_parser = clap::builder::PossibleValuesParser::new(KERNELS)
        )]
        kernels: Vec<String>,
        /// Write one JSON object per measurement to this file.
        #[arg(long)]
        json: Option<std::path::PathBuf>,
        #[command(flatten)]
        timing: TimingArgs,
    },
    /// GB/s of the memory-bound kernels (copy, y = a x + y, GELU, row sum, row softmax, row
    /// layer norm, transpose) on one `[rows, cols]` f32 matrix, each checked against its f64
    /// specification first.
    Roofline {
        /// Rows of the matrix.
        #[arg(long, default_value_t = 8192)]
        rows: u32,
        /// Columns of the matrix.
        #[arg(long, default_value_t = 4096)]
        cols: u32,
        /// Only the kernels whose name contains this (e.g. `mem_transpose`).
        #[arg(long)]
        only: Option<String>,
        #[command(flatten)]
        timing: TimingArgs,
    },
    /// The ceiling of the tensor-core kernel (wgsl_gemm::ceiling): NVIDIA's cooperative-matrix
    /// GEMM in GLSL through wgpu's SPIR-V passthrough, every tile checked against the f64
    /// specification and timed, then the DSL's f16 tensor-core kernels on the same device and
    /// problem, timed the same way.
    Ceiling {
        /// The square size (a multiple of 256).
        #[arg(long, default_value_t = 4096)]
        size: u32,
        /// Elements of C checked at that size (the corners and random others).
        #[arg(long, default_value_t = 256)]
        check_samples: usize,
        #[command(flatten)]
        timing: TimingArgs,
    },
    /// Every tile configuration of both kernels at one square size.
    Sweep {
        /// The size.
        #[arg(long, default_value_t = 4096)]
        size: u32,
        /// The layout (ab, atb, abt, atbt).
        #[arg(long, default_value = "ab")]
        layout: String,
        /// Only the tensor-core tiles staged through one buffer per operand.
        #[arg(long)]
        single_only: bool,
        #[command(flatten)]
        timing: TimingArgs,
    },
}

#[derive(clap::Args, Debug, Clone, Copy)]
struct TimingArgs {
    /// GPU time per timed pass, in milliseconds.
    #[arg(long, default_value_t = 40.0)]
    pass_ms: f64,
    /// Timed passes (the median is reported).
    #[arg(long, default_value_t = 7)]
    samples: usize,
}

type Error = Box<dyn std::error::Error>;

fn main() {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let cli = Cli::parse();
    if let Err(e) = run(cli) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run(cli: Cli) -> Result<(), Error> {
    let options = GpuOptions {
        cooperative_matrix: true,
        ..GpuOptions::from_env()
    };
    let gpu = match cli.command {
        // The same adapter and features, and passthrough shaders.
        Command::Ceiling { .. } => wgsl_gemm::ceiling::open_gpu(&options)?,
        _ => Gpu::with_options(&options)?,
    };
    match cli.command {
        Command::Info => info(&gpu),
        Command::Check => check(&gpu),
        Command::Bench {
            sizes,
            no_mlp,
            kernels,
            json,
            timing,
        } => bench(&gpu, &sizes, !no_mlp, &kernels, json.as_deref(), timing),
        Command::Roofline {
            rows,
            cols,
            only,
            timing,
        } => roofline(&gpu, rows, cols, only.as_deref(), timing),
        Command::Ceiling {
            size,
            check_samples,
            timing,
        } => ceiling(&gpu, size, check_samples, timing),
        Command::Sweep {
            size,
            layout,
            single_only,
            timing,
        } => {
            let layout = Layout::from_name(&layout).ok_or("layout: ab, atb, abt or atbt")?;
            sweep(&gpu, size, layout, single_only, timing)
        }
    }
}

fn info(gpu: &Gpu) -> Result<(), Error> {
    let i = gpu.adapter_info();
    println!(
        "adapter: {} ({:?}, {:?}), driver {} {}",
        i.name, i.backend, i.device_type, i.driver, i.driver_info
    );
    println!(
        "subgroup sizes {}..{}",
        i.subgroup_min_size, i.subgroup_max_size
    );
    println!("capabilities: {:?}", gpu.capabilities());
    let l = gpu.limits();
    println!(
        "workgroup storage {} bytes, {} invocations per workgroup, storage binding {} bytes",
        l.max_compute_workgroup_storage_size,
        l.max_compute_invocations_per_workgroup,
        l.max_storage_buffer_binding_size
    );
    let shapes = gpu.cooperative_shapes();
    if shapes.is_empty() {
        println!("cooperative matrices: none");
    }
    for s in shapes {
        println!("cooperative matrix: {s}");
    }
    Ok(())
}

/// The kernels to check or measure on a problem, by name: `simt`, `coop-f16` (the
/// configuration `CoopConfig::choose` picks), `coop-f16-direct` (fragments loaded straight from
/// the buffers, where a tile divides the problem), `coop-f32` (`f32` buffers).
fn kernels_for(
    gpu: &Gpu,
    problem: &Problem,
    names: &[String],
) -> Vec<(String, Result<Gemm, GemmError>)> {
    names
        .iter()
        .map(|name| {
            let gemm = match name.as_str() {
                "coop-f16" => Gemm::coop(gpu, problem, CoopInput::F16),
                "coop-f16-direct" => Gemm::coop_direct(gpu, problem),
                "coop-f16-pairs" => coop_variant(gpu, problem, Some(WideLoad::Pairs), false),
                "coop-f16-words" => coop_variant(gpu, problem, Some(WideLoad::Words), false),
                "coop-f16-whole" => coop_variant(gpu, problem, None, true),
                "coop-f16-words-whole" => coop_variant(gpu, problem, Some(WideLoad::Words), true),
                "coop-f32" => Gemm::coop(gpu, problem, CoopInput::F32),
                "simt-whole" => simt_variant(gpu, problem, true),
                "simt-checked" => simt_variant(gpu, problem, false),
                "simt" => Gemm::simt(gpu, problem),
                other => unreachable!("`{other}` is not in KERNELS, which the parser checks"),
            };
            (name.clone(), gemm)
        })
        .collect()
}

/// The tile `SimtConfig::choose` picks, without bounds checks if `whole_tiles` (refused where
/// it does not divide the problem), else with them.
fn simt_variant(gpu: &Gpu, problem: &Problem, whole_tiles: bool) -> Result<Gemm, GemmError> {
    let chosen = SimtConfig::choose(problem, &gpu.target_limits());
    let checked = SimtConfig::with_tiles(problem, chosen.tiles);
    let config = if whole_tiles {
        checked.with_whole_tiles()
    } else {
        checked
    };
    if !config.accepts(problem) {
        return Err(GemmError::Incompatible {
            kernel: config.kernel_name(),
            problem: *problem,
        });
    }
    Gemm::with_simt(gpu, config)
}

/// The tile `CoopConfig::choose` picks for `f16` buffers, reading `A` and `B` sixteen bytes at
/// a time as `wide` says, with bounds checks unless `whole_tiles`.
fn coop_variant(
    gpu: &Gpu,
    problem: &Problem,
    wide: Option<WideLoad>,
    whole_tiles: bool,
) -> Result<Gemm, GemmError> {
    let subgroup = gpu.adapter_info().subgroup_min_size;
    let mut config = CoopConfig::choose(problem, CoopInput::F16, &gpu.target_limits(), subgroup);
    if let Some(wide) = wide {
        config = config.with_wide(wide);
    }
    // `choose` leaves out the bounds checks where the tile divides the problem; put them back
    // unless `whole_tiles`.
    config.whole_tiles = false;
    if whole_tiles {
        config = config.with_whole_tiles();
    }
    if config.valid().is_err() || !config.accepts(problem) {
        return Err(GemmError::Incompatible {
            kernel: config.kernel_name(),
            problem: *problem,
        });
    }
    Gemm::with_coop(gpu, config)
}

/// Every kernel name `--kernels` takes (a name outside it is refused by the parser, not run
/// as another kernel).
const KERNELS: [&str; 10] = [
    "simt",
    "simt-checked",
    "simt-whole",
    "coop-f16",
    "coop-f16-direct",
    "coop-f16-pairs",
    "coop-f16-words",
    "coop-f16-whole",
    "coop-f16-words-whole",
    "coop-f32",
];

fn all_kernels() -> Vec<String> {
    KERNELS.map(String::from).to_vec()
}

fn check(gpu: &Gpu) -> Result<(), Error> {
    let mut problems = Problem::every_layout(&[
        (1, 1, 1),
        (7, 37, 65),
        (37, 45, 61),
        (65, 129, 33),
        (129, 64, 784),
        (200, 136, 97),
    ]);
    for (m, n, k, layout) in [
        (1000, 1000, 1000, Layout::AB),
        (1023, 1021, 517, Layout::AtB),
        (4096, 4096, 4096, Layout::AB),
        (60000, 128, 784, Layout::ABt),
    ] {
        problems.push(Problem { m, n, k, layout });
    }
    let mut runs: Vec<(Problem, Result<Gemm, GemmError>)> = Vec::new();
    for p in &problems {
        for (_, gemm) in kernels_for(gpu, p, &all_kernels()) {
            runs.push((*p, gemm));
        }
    }
    // The direct cooperative kernel in every layout and tile, on sizes its tiles divide.
    for (p, config) in direct_checks(gpu.adapter_info().subgroup_min_size) {
        runs.push((p, Gemm::with_coop(gpu, config)));
    }
    // The cooperative kernel through one buffer per operand, every tile and layout, odd sizes.
    for (p, config) in single_checks(gpu.adapter_info().subgroup_min_size) {
        runs.push((p, Gemm::with_coop(gpu, config)));
    }
    // The same reading sixteen bytes at a time, both ways, on rows multiples of 8.
    for (p, config) in wide_checks(gpu.adapter_info().subgroup_min_size) {
        runs.push((p, Gemm::with_coop(gpu, config)));
    }
    // The same without bounds checks, on sizes every tile divides.
    for (p, config) in whole_tile_checks(gpu.adapter_info().subgroup_min_size) {
        runs.push((p, Gemm::with_coop(gpu, config)));
    }
    // The SIMT kernel without bounds checks, every sweep tile and layout, on sizes it divides.
    for (p, config) in simt_whole_tile_checks() {
        if config.fits(&gpu.target_limits()) {
            runs.push((p, Gemm::with_simt(gpu, config)));
        }
    }
    let (mut passed, mut failed, mut refused) = (0, 0, 0);
    let mut worst = std::collections::BTreeMap::<String, (f64, f64)>::new();
    for (seed, (p, gemm)) in runs.into_iter().enumerate() {
        let p = &p;
        {
            let gemm = match gemm {
                Ok(g) => g,
                Err(e) => {
                    refused += 1;
                    if refused <= 2 {
                        println!("refused: {e}");
                    }
                    continue;
                }
            };
            let family = match gemm.variant() {
                Variant::Simt(c) if c.whole_tiles => "simt f32, no bounds checks",
                Variant::Simt(_) => "simt f32",
                Variant::Coop(c) if c.direct => "coop f16 inputs, direct",
                Variant::Coop(c) if c.whole_tiles => {
                    "coop f16 inputs, one buffer, no bounds checks"
                }
                Variant::Coop(c) if c.wide.is_some() => {
                    "coop f16 inputs, one buffer, sixteen-byte loads"
                }
                Variant::Coop(c) if c.single && c.input == CoopInput::F16 => {
                    "coop f16 inputs, staged through one buffer"
                }
                Variant::Coop(c) if c.input == CoopInput::F16 => "coop f16 inputs, staged",
                Variant::Coop(_) => "coop f32 inputs rounded to f16",
            };
            match run_and_check(gpu, &gemm, p, seed as u64, 256) {
                Ok(c) => {
                    passed += 1;
                    let e = worst.entry(family.to_string()).or_insert((0.0, 0.0));
                    if c.worst.relative / c.bound >= e.0 / e.1.max(f64::MIN_POSITIVE) {
                        *e = (c.worst.relative, c.bound);
                    }
                }
                // A problem this device cannot hold (lavapipe's 128 MiB bindings) is refused,
                // not failed: nothing wrong was computed.
                Err(e) if !e.is_wrong() => {
                    refused += 1;
                    println!("refused {}: {e}", gemm.variant().kernel_name());
                }
                Err(e) => {
                    failed += 1;
                    println!("FAILED {}: {e}", gemm.variant().kernel_name());
                }
            }
        }
    }
    for (family, (rel, bound)) in &worst {
        println!(
            "{family}: worst error {rel:.2e} of the sum of |products| (bound {bound:.2e} at that K)"
        );
    }
    println!("check: {passed} passed, {failed} failed, {refused} refused");
    if failed > 0 {
        return Err(format!("{failed} checks failed").into());
    }
    Ok(())
}

/// `x` with two decimals, or three significant digits below 1 (a software adapter's
/// TFLOP/s would all print as 0.00).
fn three_digits(x: f64) -> String {
    if x >= 1.0 || x == 0.0 {
        format!("{x:.2}")
    } else {
        let decimals = (2.0 - x.log10().floor()).clamp(2.0, 12.0) as usize;
        format!("{x:.decimals$}")
    }
}

/// One measurement.
#[derive(Debug, Clone)]
struct Measured {
    kernel: String,
    family: String,
    problem: Problem,
    seconds: f64,
}

impl Measured {
    fn tflops(&self) -> f64 {
        self.problem.flops() / self.seconds / 1e12
    }
}

/// Operands on the GPU for one problem: `f32` and `f16` copies.
struct Operands {
    dims: GpuBuffer<wgsl_gemm::GemmDims>,
    a32: GpuBuffer<f32>,
    b32: GpuBuffer<f32>,
    a16: GpuBuffer<half::f16>,
    b16: GpuBuffer<half::f16>,
    c: GpuBuffer<f32>,
}

impl Operands {
    fn new(gpu: &Gpu, p: &Problem) -> Result<Operands, Error> {
        let a = random(p.a_len(), 1);
        let b = random(p.b_len(), 2);
        let half =
            |v: &[f32]| -> Vec<half::f16> { v.iter().map(|&x| half::f16::from_f32(x)).collect() };
        Ok(Operands {
            dims: GpuBuffer::from_value(gpu, p.dims())?,
            a16: GpuBuffer::from_slice(gpu, &half(&a))?,
            b16: GpuBuffer::from_slice(gpu, &half(&b))?,
            a32: GpuBuffer::from_slice(gpu, &a)?,
            b32: GpuBuffer::from_slice(gpu, &b)?,
            c: GpuBuffer::zeroed(gpu, p.c_len())?,
        })
    }

    fn record(
        &self,
        rec: &mut wgsl_dsl::runtime::Recorder<'_>,
        gemm: &Gemm,
        p: &Problem,
    ) -> Result<(), GemmError> {
        match gemm.variant() {
            Variant::Coop(c) if c.input == CoopInput::F16 => {
                gemm.record(rec, p, &self.dims, &self.a16, &self.b16, &self.c)
            }
            _ => gemm.record(rec, p, &self.dims, &self.a32, &self.b32, &self.c),
        }
    }
}

/// Median seconds per product: [`median_seconds`] of the product's dispatches.
fn time(gpu: &Gpu, gemm: &Gemm, p: &Problem, ops: &Operands, t: TimingArgs) -> Result<f64, Error> {
    median_seconds(gpu, t, |rec| {
        ops.record(rec, gemm, p).map_err(|e| {
            wgsl_dsl::runtime::DispatchError::from(wgsl_dsl::runtime::DispatchErrorKind::Wgpu(
                e.to_string(),
            ))
        })
    })
}

/// Median seconds per dispatch recorded by `record`: warm-up, then `samples` passes of `reps`
/// dispatches (`reps` chosen so that a pass takes about `pass_ms`) timed with GPU timestamps
/// (wall-clock around submit and wait where the adapter has none).
fn median_seconds(
    gpu: &Gpu,
    t: TimingArgs,
    record: impl Fn(
        &mut wgsl_dsl::runtime::Recorder<'_>,
    ) -> Result<(), wgsl_dsl::runtime::DispatchError>,
) -> Result<f64, Error> {
    median_of_passes(t, |reps| {
        let start = Instant::now();
        let gpu_time = gpu.time(|rec| {
            for _ in 0..reps {
                record(rec)?;
            }
            Ok(())
        })?;
        Ok(gpu_time.unwrap_or_else(|| start.elapsed()))
    })
}

/// Median seconds per dispatch of passes timed by `pass` (a pass of `reps` dispatches, its
/// duration): warm-up, then `samples` passes of `reps` dispatches, `reps` chosen so that a pass
/// takes about `pass_ms`. What `bench`, `sweep`, `roofline` and `ceiling` share.
fn median_of_passes(
    t: TimingArgs,
    pass: impl Fn(usize) -> Result<std::time::Duration, Error>,
) -> Result<f64, Error> {
    let pass = |reps: usize| -> Result<f64, Error> { Ok(pass(reps)?.as_secs_f64() / reps as f64) };
    pass(2)?;
    let one = pass(3)?.max(1e-7);
    let reps = ((t.pass_ms * 1e-3 / one).ceil() as usize).clamp(3, 2000);
    let mut samples: Vec<f64> = (0..t.samples.max(1))
        .map(|_| pass(reps))
        .collect::<Result<_, _>>()?;
    samples.sort_by(f64::total_cmp);
    Ok(samples[samples.len() / 2])
}

/// The MLP's products (784-128-10 at batches 128, 1024 and the whole 60,000): the forward
/// `X W^T` (`M` = batch, `K` = 784, `N` = 128), and at batch 1024 and 128 the weight gradient
/// `dY^T X` (`M` = 128, `N` = 784, `K` = batch) and the input gradient `dY W`
/// (`M` = batch, `N` = 784, `K` = 128).
fn mlp_problems() -> Vec<Problem> {
    let mut v = Vec::new();
    for batch in [128, 1024, 60000] {
        v.push(Problem::new(batch, 128, 784, Layout::ABt));
    }
    for batch in [128, 1024] {
        v.push(Problem::new(128, 784, batch, Layout::AtB));
        v.push(Problem::new(batch, 784, 128, Layout::AB));
    }
    v
}

fn bench(
    gpu: &Gpu,
    sizes: &[u32],
    mlp: bool,
    kernels: &[String],
    json: Option<&std::path::Path>,
    t: TimingArgs,
) -> Result<(), Error> {
    let mut problems: Vec<Problem> = sizes
        .iter()
        .map(|&s| Problem::new(s, s, s, Layout::AB))
        .collect();
    if mlp {
        problems.extend(mlp_problems());
    }
    println!("{}", adapter_line(gpu));
    println!("| M x N x K | layout | kernel | configuration | ms | TFLOP/s |");
    println!("|---|---|---|---|---|---|");
    let mut out = Vec::new();
    // Warm up first, as `sweep` does: the GPU's clocks ramp up during the first timings (in
    // one H200 call, benches/notes/round3/call1, `bench` gave the 4096^3 tensor-core kernel
    // 100.8 TFLOP/s where the warmed-up `sweep` gave the same kernel 122.9).
    let mut warm = false;
    for p in &problems {
        let ops = Operands::new(gpu, p)?;
        for (name, gemm) in kernels_for(gpu, p, kernels) {
            let gemm = match gemm {
                Ok(g) => g,
                Err(e) => {
                    let at = format!("{}x{}x{} | {} | {name}", p.m, p.n, p.k, p.layout.name());
                    println!("| {at} | skipped: {e} | | |");
                    continue;
                }
            };
            // Each measured kernel's result is checked on sampled elements first.
            if let Err(e) = run_and_check(gpu, &gemm, p, 11, 32) {
                let at = format!("{}x{}x{} | {} | {name}", p.m, p.n, p.k, p.layout.name());
                let what = if e.is_wrong() { "WRONG" } else { "skipped" };
                println!("| {at} | {what}: {e} | | |");
                continue;
            }
            if !warm {
                time(gpu, &gemm, p, &ops, t)?;
                warm = true;
            }
            let seconds = time(gpu, &gemm, p, &ops, t)?;
            let m = Measured {
                kernel: gemm.variant().kernel_name(),
                family: name,
                problem: *p,
                seconds,
            };
            println!(
                "| {}x{}x{} | {} | {} | `{}` | {:.4} | {} |",
                p.m,
                p.n,
                p.k,
                p.layout.name(),
                m.family,
                m.kernel,
                seconds * 1e3,
                three_digits(m.tflops())
            );
            out.push(m);
        }
    }
    if let Some(path) = json {
        let lines: Vec<String> = out
            .iter()
            .map(|m| {
                format!(
                    "{{\"kernel\": \"{}\", \"config\": \"{}\", \"m\": {}, \"n\": {}, \"k\": {}, \"layout\": \"{}\", \"seconds\": {:e}, \"tflops\": {:.4}}}",
                    m.family,
                    m.kernel,
                    m.problem.m,
                    m.problem.n,
                    m.problem.k,
                    m.problem.layout.name(),
                    m.seconds,
                    m.tflops()
                )
            })
            .collect();
        let adapter = format!(
            "{{\"adapter\": \"{}\"}}",
            adapter_line(gpu).replace('"', "'")
        );
        std::fs::write(path, format!("{adapter}\n{}\n", lines.join("\n")))?;
    }
    Ok(())
}

fn adapter_line(gpu: &Gpu) -> String {
    let i = gpu.adapter_info();
    format!(
        "adapter: {} ({:?}), driver {} {}",
        i.name, i.backend, i.driver, i.driver_info
    )
}

fn sweep(
    gpu: &Gpu,
    size: u32,
    layout: Layout,
    single_only: bool,
    t: TimingArgs,
) -> Result<(), Error> {
    let p = Problem::new(size, size, size, layout);
    let ops = Operands::new(gpu, &p)?;
    let target = gpu.target_limits();
    println!("{}", adapter_line(gpu));
    let mut gemms = Vec::new();
    let all = !single_only;
    for tiles in wgsl_gemm::config::simt_sweep_tiles()
        .into_iter()
        .filter(|_| all)
    {
        // Each tile with bounds checks, then without where it divides the problem.
        let c = SimtConfig::with_tiles(&p, tiles);
        for c in [c, c.with_whole_tiles()] {
            if c.fits(&target) && c.accepts(&p) {
                gemms.push(Gemm::with_simt(gpu, c));
            }
        }
    }
    let subgroup = gpu.adapter_info().subgroup_min_size;
    let mut coop_tiles = COOP_TILES[..2].to_vec();
    coop_tiles.extend([
        (128, 128, 32, 64, 64),
        (128, 128, 32, 32, 64),
        (128, 128, 16, 64, 32),
        (256, 128, 16, 64, 64),
        (128, 64, 32, 32, 32),
        (64, 128, 32, 32, 32),
    ]);
    for &tile in coop_tiles.iter().filter(|_| all) {
        let c = CoopConfig::with_tile(&p, CoopInput::F16, tile, subgroup);
        if c.fits(&target) {
            gemms.push(Gemm::with_coop(gpu, c));
        }
    }
    let mut single_tiles = SINGLE_TILES.to_vec();
    single_tiles.extend([
        (128, 128, 64, 64, 64),
        (128, 128, 32, 64, 32),
        (128, 128, 32, 32, 64),
    ]);
    for &tile in &single_tiles {
        let c = CoopConfig::single_with_tile(&p, CoopInput::F16, tile, subgroup);
        if c.fits(&target) {
            gemms.push(Gemm::with_coop(gpu, c));
        }
    }
    // The same reading sixteen bytes a load, then also without bounds checks.
    for &tile in &single_tiles {
        let c = CoopConfig::single_with_tile(&p, CoopInput::F16, tile, subgroup)
            .with_wide(WideLoad::Words);
        for c in [c, c.with_whole_tiles()] {
            if c.fits(&target) && c.accepts(&p) {
                gemms.push(Gemm::with_coop(gpu, c));
            }
        }
    }
    let mut direct_tiles = DIRECT_TILES.to_vec();
    direct_tiles.extend([
        (128, 128, 32, 64, 32),
        (128, 128, 32, 32, 64),
        (256, 128, 32, 64, 64),
        (128, 256, 32, 64, 64),
        (128, 128, 64, 64, 64),
        (64, 128, 32, 32, 64),
    ]);
    for &tile in direct_tiles.iter().filter(|_| all) {
        let c = CoopConfig::direct_with_tile(&p, tile, subgroup);
        if c.fits(&target) && c.divides(&p) {
            gemms.push(Gemm::with_coop(gpu, c));
        }
    }
    // The GPU's clocks ramp up during the first timings: warm up first.
    if let Some(Ok(first)) = gemms.first() {
        time(gpu, first, &p, &ops, t)?;
    }
    for gemm in gemms {
        let gemm = match gemm {
            Ok(g) => g,
            Err(e) => {
                println!("skipped: {e}");
                continue;
            }
        };
        let started = Instant::now();
        let checked = run_and_check(gpu, &gemm, &p, 5, 32);
        let seconds = match &checked {
            Ok(_) => time(gpu, &gemm, &p, &ops, t)?,
            Err(_) => f64::NAN,
        };
        println!(
            "{:<48} {:>8.2} TFLOP/s  {:>8.3} ms  {}  ({:.1} s)",
            gemm.variant().kernel_name(),
            p.flops() / seconds / 1e12,
            seconds * 1e3,
            match checked {
                Ok(c) => format!("ok, worst {:.1e}", c.worst.relative),
                Err(e) => format!("WRONG: {e}"),
            },
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

/// `gemm roofline`: each memory-bound kernel checked against its `f64` specification on the
/// whole matrix (output poisoned with NaN first), then timed as the products are (`time`'s
/// passes of back-to-back dispatches; wgpu puts a barrier between two dispatches that write
/// the same storage buffer, so they do not overlap); GB/s = the bytes the kernel must move at
/// least (`MemKernel::bytes`) / the median time.
fn roofline(
    gpu: &Gpu,
    rows: u32,
    cols: u32,
    only: Option<&str>,
    t: TimingArgs,
) -> Result<(), Error> {
    use wgsl_dsl::runtime::BindArg;
    use wgsl_gemm::memory::{MemConfig, MemDims, MemKernel};
    println!("{}", adapter_line(gpu));
    println!(
        "x [{rows}, {cols}] f32 ({:.1} MiB)",
        rows as f64 * cols as f64 * 4.0 / 1048576.0
    );
    println!("| kernel | checked (max error / allowed) | us | GB/s |");
    println!("|---|---|---|---|");
    let n = rows as usize * cols as usize;
    let x = random(n, 7).iter().map(|v| 4.0 * v).collect::<Vec<f32>>();
    let dims = MemDims {
        rows,
        cols,
        a: 0.75,
        _pad: 0,
    };
    let dims_buf = GpuBuffer::from_value(gpu, dims)?;
    let xb = GpuBuffer::from_slice(gpu, &x)?;
    for kind in MemKernel::ALL {
        let len = kind.output_len(rows, cols);
        let y0: Vec<f32> = match kind {
            MemKernel::Axpy => random(len, 8),
            _ => vec![f32::NAN; len],
        };
        for config in MemConfig::candidates(kind, rows, cols) {
            if only.is_some_and(|o| !kind.kernel_name(config).contains(o)) {
                continue;
            }
            let shader = kind.build_for(config).build()?;
            let kernel = gpu.compile(&shader)?;
            let yb = GpuBuffer::from_slice(gpu, &y0)?;
            let (x4, y4) = (xb.as_vec4(), yb.as_vec4());
            let xa: &dyn BindArg = match &x4 {
                Ok(v) if config.x_vec4() => v,
                _ => &xb,
            };
            let ya: &dyn BindArg = match &y4 {
                Ok(v) if config.y_vec4(kind) => v,
                _ => &yb,
            };
            let grid = kind.grid_for(config, rows, cols);
            let mut rec = gpu.recorder();
            rec.dispatch(&kernel, &[&dims_buf, xa, ya], grid)?;
            rec.submit()?;
            let got = yb.read(gpu)?;
            let checked = wgsl_gemm::memory::check(kind, (rows, cols), dims.a, &x, &y0, &got)?;
            let secs = median_seconds(gpu, t, |rec| {
                rec.dispatch(&kernel, &[&dims_buf, xa, ya], grid)
            })?;
            println!(
                "| {} | {:.1e} / {:.1e} | {:.1} | {:.0} |",
                kind.kernel_name(config),
                checked.worst,
                checked.allowed,
                secs * 1e6,
                kind.bytes(rows, cols) / secs / 1e9
            );
        }
    }
    Ok(())
}

/// `gemm ceiling`: each tile of the ceiling kernel (`wgsl_gemm::ceiling`) checked against the
/// `f64` specification on every element of `CeilingTile::check_problem` and on `samples`
/// elements at `size`^3, then timed at `size`^3 as `bench` times ours (`median_of_passes`: one
/// pass of back-to-back dispatches between two GPU timestamps, wgpu's barrier between
/// dispatches since each writes `C`); then the DSL's `coop-f16` and `coop-f16-direct` kernels
/// on the same device and operands, timed the same way.
fn ceiling(gpu: &Gpu, size: u32, samples: usize, t: TimingArgs) -> Result<(), Error> {
    use wgsl_gemm::ceiling::{self, CEILING_TILES, CeilingKernel};
    let p = Problem::new(size, size, size, Layout::AB);
    let ops = Operands::new(gpu, &p)?;
    println!("{}", adapter_line(gpu));
    println!(
        "| kernel | workgroup bytes | checked (elements: worst / bound) | {size}^3 sampled ({samples}) | ms | TFLOP/s |"
    );
    println!("|---|---|---|---|---|---|");
    let mut best: Option<(String, f64)> = None;
    let mut warm = false;
    for tile in CEILING_TILES {
        let kernel = match CeilingKernel::new(gpu, tile) {
            Ok(k) => k,
            Err(e) => {
                println!("| {} | skipped: {e} |", tile.name());
                continue;
            }
        };
        let small = tile.check_problem();
        let checked = ceiling::run_and_check(gpu, &kernel, &small, 3, None).and_then(|full| {
            Ok((
                full,
                ceiling::run_and_check(gpu, &kernel, &p, 5, Some(samples))?,
            ))
        });
        let (full, sampled) = match checked {
            Ok(c) => c,
            Err(e) => {
                println!("| {} | WRONG: {e} |", tile.name());
                continue;
            }
        };
        let bound = kernel.bind(gpu, &p, &ops.dims, &ops.a16, &ops.b16, &ops.c)?;
        let time = |reps: usize| -> Result<std::time::Duration, Error> {
            let start = Instant::now();
            Ok(kernel
                .time(gpu, &bound, reps)?
                .unwrap_or_else(|| start.elapsed()))
        };
        if !warm {
            median_of_passes(t, time)?;
            warm = true;
        }
        let seconds = median_of_passes(t, time)?;
        let tflops = p.flops() / seconds / 1e12;
        println!(
            "| {} | {} | {}x{}x{} all {}: {:.1e} / {:.1e} | {:.1e} / {:.1e} | {:.4} | {:.2} |",
            tile.name(),
            tile.workgroup_bytes(),
            small.m,
            small.n,
            small.k,
            full.checked,
            full.worst.relative,
            full.bound,
            sampled.worst.relative,
            sampled.bound,
            seconds * 1e3,
            tflops
        );
        if best.as_ref().is_none_or(|(_, b)| tflops > *b) {
            best = Some((tile.name(), tflops));
        }
    }
    let Some((best_name, best_tflops)) = best else {
        return Err("no ceiling kernel ran".into());
    };
    println!("ceiling: {best_name} {best_tflops:.2} TFLOP/s");
    let names = ["coop-f16", "coop-f16-direct"].map(String::from);
    for (name, gemm) in kernels_for(gpu, &p, &names) {
        let gemm = match gemm {
            Ok(g) => g,
            Err(e) => {
                println!("ours {name}: skipped: {e}");
                continue;
            }
        };
        if let Err(e) = run_and_check(gpu, &gemm, &p, 11, 32) {
            println!("ours {name}: WRONG: {e}");
            continue;
        }
        let seconds = time(gpu, &gemm, &p, &ops, t)?;
        let tflops = p.flops() / seconds / 1e12;
        println!(
            "ours {name} `{}`: {:.4} ms, {tflops:.2} TFLOP/s, {:.3}x the ceiling",
            gemm.variant().kernel_name(),
            seconds * 1e3,
            tflops / best_tflops
        );
    }
    Ok(())
}
