//! Cost per dispatch of small dependent dispatches (`y[i] += 1` over 1024 elements, 16
//! workgroups): all recorded into one compute pass and submitted once ([`Recorder`]), against
//! one submit per dispatch ([`Gpu::dispatch`]), and against the peer: the same kernel (its
//! WGSL) dispatched with bare wgpu calls (one pipeline, one bind group made once, one pass).
//! Each iteration waits for the GPU. The last lines print the runtime's cost over the bare
//! loop's, measured interleaved in the same run.
//!
//! `cargo bench -p wgsl-dsl --bench runtime` (on the adapter `Gpu::new` picks; set
//! `WGPU_ADAPTER_NAME` to choose).
//!
//! [`Recorder`]: wgsl_dsl::runtime::Recorder
//! [`Gpu::dispatch`]: wgsl_dsl::runtime::Gpu::dispatch

use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use wgsl_dsl::prelude::*;
use wgsl_dsl::runtime::{DispatchError, Gpu, GpuBuffer, Kernel, Recorder, wgpu};

const DISPATCHES: u64 = 100;
const N: u32 = 1024;

/// The kernel, and its WGSL for the bare-wgpu peer.
fn add_one(gpu: &Gpu) -> (Kernel, String) {
    let mut k = KernelBuilder::new("add_one", [64, 1, 1]);
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.lt(y.len()), |k| k.update(&y.at(&i), |v| v + 1.0));
    let shader = k.build_for(&gpu.target_limits()).expect("valid kernel");
    (gpu.compile(&shader).expect("compiles"), shader.wgsl)
}

/// The peer: what a hand-written wgpu program does for the same work.
struct Bare {
    pipeline: wgpu::ComputePipeline,
    group: wgpu::BindGroup,
}

impl Bare {
    fn new(gpu: &Gpu, wgsl: &str, y: &GpuBuffer<f32>) -> Bare {
        let device = gpu.device();
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("bare add_one"),
            source: wgpu::ShaderSource::Wgsl(wgsl.into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("bare add_one"),
            layout: None,
            module: &module,
            entry_point: Some("add_one"),
            compilation_options: Default::default(),
            cache: None,
        });
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("bare add_one"),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: y.raw().as_entire_binding(),
            }],
        });
        Bare { pipeline, group }
    }

    /// Record `DISPATCHES` dispatches into one pass; submit (and wait) if `submit`.
    fn run(&self, gpu: &Gpu, groups: [u32; 3], submit: bool) {
        let mut encoder = gpu.device().create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            for _ in 0..DISPATCHES {
                pass.set_pipeline(&self.pipeline);
                pass.set_bind_group(0, &self.group, &[]);
                pass.dispatch_workgroups(groups[0], groups[1], groups[2]);
            }
        }
        if submit {
            gpu.queue().submit([encoder.finish()]);
            gpu.wait().expect("wait");
        }
    }
}

/// Records `DISPATCHES` dispatches of `kernel` on `y` with `rec`.
fn record(
    rec: &mut Recorder<'_>,
    kernel: &Kernel,
    y: &GpuBuffer<f32>,
    groups: [u32; 3],
) -> Result<(), DispatchError> {
    for _ in 0..DISPATCHES {
        rec.dispatch(kernel, &[y], groups)?;
    }
    Ok(())
}

/// The runtime's recorder: `DISPATCHES` dispatches in one pass; submit (and wait) if `submit`.
fn ours(gpu: &Gpu, kernel: &Kernel, y: &GpuBuffer<f32>, groups: [u32; 3], submit: bool) {
    let mut rec = gpu.recorder();
    record(&mut rec, kernel, y, groups).expect("dispatch");
    if submit {
        rec.submit().expect("submit");
        gpu.wait().expect("wait");
    }
}

/// Median time of `f` over `n` runs.
fn median(n: usize, mut f: impl FnMut()) -> Duration {
    let mut t: Vec<Duration> = (0..n)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed()
        })
        .collect();
    t.sort();
    t[n / 2]
}

fn bench(c: &mut Criterion) {
    let gpu = Gpu::new().expect("a wgpu adapter");
    let name = gpu.adapter_info().name.clone();
    let (kernel, wgsl) = add_one(&gpu);
    let y = GpuBuffer::<f32>::zeroed(&gpu, N as usize).expect("buffer");
    let groups = kernel.workgroups_for([N, 1, 1]);
    let bare = Bare::new(&gpu, &wgsl, &y);

    let mut g = c.benchmark_group(format!("{DISPATCHES}_dependent_dispatches/{name}"));
    g.sample_size(20);
    g.throughput(Throughput::Elements(DISPATCHES));
    g.bench_function("recorder: one pass, one submit", |b| {
        b.iter(|| ours(&gpu, &kernel, &y, groups, true))
    });
    g.bench_function("bare wgpu (peer): one pass, one submit", |b| {
        b.iter(|| bare.run(&gpu, groups, true))
    });
    g.bench_function("host only: record into one pass, no submit", |b| {
        b.iter(|| ours(&gpu, &kernel, &y, groups, false))
    });
    g.bench_function("bare wgpu (peer), host only: record, no submit", |b| {
        b.iter(|| bare.run(&gpu, groups, false))
    });
    g.bench_function("one submit per dispatch", |b| {
        b.iter(|| {
            for _ in 0..DISPATCHES {
                gpu.dispatch(&kernel, &[&y], groups).expect("dispatch");
            }
            gpu.wait().expect("wait");
        })
    });
    g.finish();

    // The ratio, from runs interleaved in this process (medians of 5 x 20 runs each).
    let (mut t_ours, mut t_bare, mut h_ours, mut h_bare) = (vec![], vec![], vec![], vec![]);
    for _ in 0..5 {
        t_ours.push(median(20, || ours(&gpu, &kernel, &y, groups, true)));
        t_bare.push(median(20, || bare.run(&gpu, groups, true)));
        h_ours.push(median(20, || ours(&gpu, &kernel, &y, groups, false)));
        h_bare.push(median(20, || bare.run(&gpu, groups, false)));
    }
    let per = |v: &mut Vec<Duration>| {
        v.sort();
        v[v.len() / 2] / DISPATCHES as u32
    };
    let (t_ours, t_bare, h_ours, h_bare) = (
        per(&mut t_ours),
        per(&mut t_bare),
        per(&mut h_ours),
        per(&mut h_bare),
    );
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();
    println!(
        "per dependent dispatch on {name}: runtime {t_ours:?}, bare wgpu {t_bare:?} ({:.2}x); \
         host recording only: runtime {h_ours:?}, bare wgpu {h_bare:?} ({:.2}x)",
        ratio(t_ours, t_bare),
        ratio(h_ours, h_bare)
    );
    let stats = gpu.bind_group_stats();
    println!(
        "bind group cache: {} entries, {} hits, {} misses",
        stats.entries, stats.hits, stats.misses
    );

    if let Ok(Some(t)) = gpu.time(|rec| record(rec, &kernel, &y, groups)) {
        println!(
            "GPU timestamps, {DISPATCHES} dispatches in one pass: {t:?} ({:?} each)",
            t / DISPATCHES as u32
        );
    }
    if let Ok(Some(p)) = gpu.profile(|rec| record(rec, &kernel, &y, groups)) {
        println!(
            "GPU profile ({:?}), {DISPATCHES} dispatches: {:?} in all, {:?} each; recording {:?}",
            p.method,
            p.total(),
            p.total() / DISPATCHES as u32,
            p.recording
        );
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
