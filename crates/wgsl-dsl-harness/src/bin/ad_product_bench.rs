//! `ad_product_bench`: the derived backward pass of the tiled product
//! (`wgsl_dsl_workspace_tests::derived::tiled_product`, `autodiff::derive`) against its custom
//! one (`product_backward`, `Backward::custom`) on this machine's GPU: first both once on
//! zeroed gradients, compared (max relative difference), then GPU time per pass.
//!
//! ```text
//! cargo run --release -p wgsl-dsl-harness --bin ad_product_bench -- [SIZE] [REPS] [WGSL]
//! ```
//!
//! `SIZE` (default 1024): the product `SIZE x SIZE x SIZE`; `REPS` (default 10): passes
//! timed, the median printed; the three passes are timed in turn, twice (A B C A B C). The
//! third is the derived pass with its gradients accumulated `Exclusive` instead of by
//! compare-exchange loops: wrong (invocations race on `d_a` and `d_b`), timed only to
//! attribute the derived pass's time to its atomic accumulation or to the rest. Time: GPU timestamps (`Gpu::profile`) summed over each pass's
//! dispatches. Also printed, for each pass: the wall time to derive it, to build each kernel
//! (lowering and naga's validation) and to compile it on the device (wgpu and the driver), and
//! each kernel's WGSL size; the forward kernel is unrolled over `SIZE / 4` tiles when it is
//! built, so the derived kernel grows with `SIZE`. The derived pass's accumulation choices are
//! printed with their reasons; `WGSL`, if given, is a file the derived kernel's WGSL is
//! written to.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use wgsl_dsl::autodiff::{Accumulation, Backward, Derive, Role, derive};
use wgsl_dsl::runtime::{BindArg, Gpu, GpuBuffer, Kernel};
use wgsl_dsl_harness::derived::{Shape, product_backward, product_grid, tiled_product};

enum Buf {
    F(GpuBuffer<f32>),
    U(GpuBuffer<u32>),
}

impl Buf {
    fn arg(&self) -> &dyn BindArg {
        match self {
            Buf::F(b) => b,
            Buf::U(b) => b,
        }
    }
}

/// Each kernel of the pass compiled, with its bindings' buffer names.
struct Pass {
    kernels: Vec<(Kernel, Vec<String>)>,
}

fn prepare(
    gpu: &Gpu,
    backward: &Backward,
    bufs: &mut HashMap<String, Buf>,
    len: &dyn Fn(&str) -> usize,
) -> Result<Pass, Box<dyn std::error::Error>> {
    let mut kernels = Vec::new();
    for bk in &backward.kernels {
        let start = Instant::now();
        let shader = bk.kernel.build_for(&gpu.target_limits())?;
        let built = start.elapsed();
        let start = Instant::now();
        let kernel = gpu.compile(&shader)?;
        println!(
            "  kernel {}: {} lines of WGSL, built in {:.2?}, compiled in {:.2?}",
            bk.kernel.name(),
            shader.wgsl.lines().count(),
            built,
            start.elapsed()
        );
        let mut names = Vec::new();
        for (name, role) in &bk.roles {
            let key = match role {
                Role::Data { binding } => binding.clone(),
                Role::OutputGradient { .. } => name.clone(),
                Role::InputGradient {
                    input,
                    accumulation: Accumulation::Atomic,
                } => {
                    let key = format!("{name} (bits)");
                    if !bufs.contains_key(&key) {
                        bufs.insert(key.clone(), Buf::U(GpuBuffer::zeroed(gpu, len(input))?));
                    }
                    key
                }
                Role::InputGradient { input, .. } => {
                    if !bufs.contains_key(name) {
                        bufs.insert(name.clone(), Buf::F(GpuBuffer::zeroed(gpu, len(input))?));
                    }
                    name.clone()
                }
                Role::IterationLimit { .. } => {
                    bufs.insert(name.clone(), Buf::U(GpuBuffer::zeroed(gpu, 1)?));
                    name.clone()
                }
            };
            names.push(key);
        }
        kernels.push((kernel, names));
    }
    Ok(Pass { kernels })
}

fn gradient(gpu: &Gpu, bufs: &HashMap<String, Buf>, name: &str) -> Vec<f32> {
    match (bufs.get(name), bufs.get(&format!("{name} (bits)"))) {
        (Some(Buf::F(b)), _) => b.read(gpu).expect("reads"),
        (_, Some(Buf::U(b))) => b
            .read(gpu)
            .expect("reads")
            .into_iter()
            .map(f32::from_bits)
            .collect(),
        _ => panic!("no gradient {name}"),
    }
}

fn time(
    gpu: &Gpu,
    pass: &Pass,
    bufs: &HashMap<String, Buf>,
    grid: [u32; 3],
    reps: usize,
) -> Result<Option<Duration>, Box<dyn std::error::Error>> {
    let mut times = Vec::new();
    for _ in 0..reps {
        let profile = gpu.profile(|rec| {
            for (k, names) in &pass.kernels {
                let args: Vec<&dyn BindArg> = names.iter().map(|n| bufs[n].arg()).collect();
                rec.dispatch(k, &args, grid)?;
            }
            Ok(())
        })?;
        let Some(p) = profile else { return Ok(None) };
        times.push(p.dispatches.iter().map(|d| d.time).sum::<Duration>());
    }
    times.sort();
    Ok(times.get(times.len() / 2).copied())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let size: usize = args.get(1).map_or(Ok(1024), |s| s.parse())?;
    let reps: usize = args.get(2).map_or(Ok(10), |s| s.parse())?;
    let shape = Shape {
        m: size,
        n: size,
        k: size,
    };
    let gpu = Gpu::new()?;
    println!("adapter: {:?}", gpu.adapter_info().name);
    let forward = tiled_product(shape);
    let start = Instant::now();
    let derived_pass = derive(&forward, &Derive::new())?;
    println!("derived the backward pass in {:.2?}", start.elapsed());
    println!("{derived_pass}");
    if let Some(path) = args.get(3) {
        let shader = derived_pass.kernels[0]
            .kernel
            .build_for(&gpu.target_limits())?;
        std::fs::write(path, &shader.wgsl)?;
    }
    let racy = derive(
        &forward,
        &Derive::new()
            .accumulate("a", Accumulation::Exclusive)
            .accumulate("b", Accumulation::Exclusive),
    )?;
    let custom = product_backward(shape);
    let grid = product_grid(shape);
    let mut r = 0x2545_f491_4f6c_dd1du64;
    let mut random = |n: usize| -> Vec<f32> {
        (0..n)
            .map(|_| {
                r ^= r << 13;
                r ^= r >> 7;
                r ^= r << 17;
                (r >> 40) as f32 / (1u64 << 23) as f32 - 1.0
            })
            .collect()
    };
    let lens: HashMap<&str, usize> = [("a", size * size), ("b", size * size)].into();
    let len = |name: &str| lens[name];
    let inputs: Vec<(&str, Vec<f32>)> = ["a", "b", "d_c"]
        .into_iter()
        .map(|n| (n, random(size * size)))
        .collect();
    let mut passes = Vec::new();
    let mut grads = Vec::new();
    let labels = [
        "custom",
        "derived",
        "derived, exclusive (racy: timing only)",
    ];
    for (label, backward) in labels.iter().zip([&custom, &derived_pass, &racy]) {
        let mut bufs: HashMap<String, Buf> = HashMap::new();
        for (name, v) in &inputs {
            bufs.insert(name.to_string(), Buf::F(GpuBuffer::from_slice(&gpu, v)?));
        }
        println!("{label}:");
        let pass = prepare(&gpu, backward, &mut bufs, &len)?;
        time(&gpu, &pass, &bufs, grid, 1)?; // the run compared below
        let g: Vec<Vec<f32>> = ["d_a", "d_b"]
            .iter()
            .map(|n| gradient(&gpu, &bufs, n))
            .collect();
        grads.push(g);
        passes.push((label, pass, bufs));
    }
    for (i, name) in ["d_a", "d_b"].iter().enumerate() {
        let worst = grads[0][i]
            .iter()
            .zip(&grads[1][i])
            .map(|(c, d)| (c - d).abs() / c.abs().max(1.0))
            .fold(0.0f32, f32::max);
        println!("{name}: max |derived - custom| / max(1, |custom|) = {worst:.2e}");
    }
    for round in 1..=2 {
        let mut timed = Vec::new();
        for (label, pass, bufs) in &passes {
            let median = time(&gpu, pass, bufs, grid, reps)?;
            println!(
                "round {round}: {label:>8} backward of the tiled product {size}^3: {} kernel(s), median {:?} over {reps} passes",
                pass.kernels.len(),
                median
            );
            timed.push(median);
        }
        if let [Some(c), Some(d), Some(x)] = [timed[0], timed[1], timed[2]] {
            println!(
                "round {round}: derived / custom {:.2}x, derived exclusive / custom {:.2}x",
                d.as_secs_f64() / c.as_secs_f64(),
                x.as_secs_f64() / c.as_secs_f64()
            );
        }
    }
    Ok(())
}
