//! Interpreter throughput on the example kernels, against the peer of the same kernel on the
//! GPU (wgpu; lavapipe on a machine without one), in the same process:
//! `cargo bench --bench interp` (append `-- NAME` to run examples whose name contains NAME).
//! Set `WGSL_DSL_GPU=off` to time the interpreter alone.
//!
//! Per example: the case of seed 1 (the test suite's sizes), run once to warm up, then the
//! median of 7 runs of one dispatch (interpreter: checks on, buffers copied in and back;
//! GPU: upload, dispatch, read back of every binding, as the test harness does).

use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand::rngs::StdRng;
use wgsl_dsl::interp::{HostArg, HostBuffer, InterpOptions, Interpreter};
use wgsl_dsl::runtime::{BindArg, Gpu, GpuBuffer};
use wgsl_dsl_workspace_tests::{Data, examples};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time(runs: usize, mut f: impl FnMut()) -> Duration {
    f();
    median(
        (0..runs)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .collect(),
    )
}

fn host(d: &Data) -> Box<dyn HostArg> {
    match d {
        Data::F32(v) => Box::new(HostBuffer::from_slice(v)),
        Data::U32(v) => Box::new(HostBuffer::from_slice(v)),
        Data::I32(v) => Box::new(HostBuffer::from_slice(v)),
    }
}

enum Dev {
    F32(GpuBuffer<f32>),
    U32(GpuBuffer<u32>),
    I32(GpuBuffer<i32>),
}

fn main() {
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let gpu = wgsl_dsl_workspace_tests::gpu();
    if let Some(g) = gpu {
        println!("GPU peer: {}", g.adapter_info().name);
    }
    let checked = Interpreter::new();
    let unchecked = Interpreter::with_options(InterpOptions {
        checks: false,
        ..Default::default()
    });
    println!(
        "| example | invocations | interpreter, checks on | invocations/s | checks off | GPU (upload, dispatch, read back) | interpreter / GPU time |"
    );
    println!("|---|---|---|---|---|---|---|");
    let (mut total_inv, mut total_cpu, mut total_gpu) = (0u64, Duration::ZERO, Duration::ZERO);
    for e in examples::all() {
        if filter.as_ref().is_some_and(|f| !e.name.contains(f.as_str())) || e.needs_subgroups {
            continue;
        }
        let shader = (e.build)().build().expect("builds");
        let case = (e.case)(&mut StdRng::seed_from_u64(1));
        let program = checked.compile(&shader).expect("compiles");
        let invocations = case.workgroups.iter().map(|&n| u64::from(n)).product::<u64>()
            * shader.signature.workgroup_size.iter().map(|&n| u64::from(n)).product::<u64>();
        let run_cpu = |cpu: &Interpreter| {
            time(7, || {
                let bufs: Vec<Box<dyn HostArg>> = case.buffers.iter().map(host).collect();
                let args: Vec<&dyn HostArg> = bufs.iter().map(|b| b.as_ref()).collect();
                cpu.dispatch(&program, &args, case.workgroups).expect("runs");
            })
        };
        let on_cpu = run_cpu(&checked);
        let on_cpu_unchecked = run_cpu(&unchecked);
        let on_gpu = gpu.map(|g| gpu_time(g, &shader, &case.buffers, case.workgroups));
        total_inv += invocations;
        total_cpu += on_cpu;
        let ratio = match on_gpu {
            Some(t) => {
                total_gpu += t;
                format!("{:.2}", on_cpu.as_secs_f64() / t.as_secs_f64())
            }
            None => "-".into(),
        };
        println!(
            "| {} | {invocations} | {:.3} ms | {:.1} M | {:.3} ms | {} | {ratio} |",
            e.name,
            on_cpu.as_secs_f64() * 1e3,
            invocations as f64 / on_cpu.as_secs_f64() / 1e6,
            on_cpu_unchecked.as_secs_f64() * 1e3,
            on_gpu.map_or("-".into(), |t| format!("{:.3} ms", t.as_secs_f64() * 1e3)),
        );
    }
    println!(
        "| all | {total_inv} | {:.2} ms | {:.1} M | | {} | {} |",
        total_cpu.as_secs_f64() * 1e3,
        total_inv as f64 / total_cpu.as_secs_f64() / 1e6,
        if total_gpu.is_zero() { "-".into() } else { format!("{:.2} ms", total_gpu.as_secs_f64() * 1e3) },
        if total_gpu.is_zero() {
            "-".into()
        } else {
            format!("{:.2}", total_cpu.as_secs_f64() / total_gpu.as_secs_f64())
        },
    );
}

fn gpu_time(g: &Gpu, shader: &wgsl_dsl::Shader, data: &[Data], workgroups: [u32; 3]) -> Duration {
    let kernel = g.compile(shader).expect("compiles");
    time(7, || {
        let bufs: Vec<Dev> = data
            .iter()
            .map(|d| match d {
                Data::F32(v) => Dev::F32(GpuBuffer::from_slice(g, v).unwrap()),
                Data::U32(v) => Dev::U32(GpuBuffer::from_slice(g, v).unwrap()),
                Data::I32(v) => Dev::I32(GpuBuffer::from_slice(g, v).unwrap()),
            })
            .collect();
        let args: Vec<&dyn BindArg> = bufs
            .iter()
            .map(|b| match b {
                Dev::F32(b) => b as &dyn BindArg,
                Dev::U32(b) => b,
                Dev::I32(b) => b,
            })
            .collect();
        g.dispatch(&kernel, &args, workgroups).expect("dispatch");
        for b in &bufs {
            match b {
                Dev::F32(b) => drop(b.read(g).unwrap()),
                Dev::U32(b) => drop(b.read(g).unwrap()),
                Dev::I32(b) => drop(b.read(g).unwrap()),
            }
        }
    })
}
