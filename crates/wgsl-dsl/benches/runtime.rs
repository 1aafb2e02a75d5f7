//! Cost per dispatch of small dependent dispatches (`y[i] += 1` over 1024 elements, 16
//! workgroups): all recorded into one compute pass and submitted once ([`Recorder`]), against
//! one submit per dispatch ([`Gpu::dispatch`]). Each iteration waits for the GPU.
//!
//! `cargo bench -p wgsl-dsl --bench runtime` (on the adapter `Gpu::new` picks; set
//! `WGPU_ADAPTER_NAME` to choose).
//!
//! [`Recorder`]: wgsl_dsl::runtime::Recorder
//! [`Gpu::dispatch`]: wgsl_dsl::runtime::Gpu::dispatch

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use wgsl_dsl::prelude::*;
use wgsl_dsl::runtime::{Gpu, GpuBuffer, Kernel};

const DISPATCHES: u64 = 100;
const N: u32 = 1024;

fn add_one(gpu: &Gpu) -> Kernel {
    let mut k = KernelBuilder::new("add_one", [64, 1, 1]);
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.lt(y.len()), |k| k.update(&y.at(&i), |v| v + 1.0));
    let shader = k.build_for(&gpu.target_limits()).expect("valid kernel");
    gpu.compile(&shader).expect("compiles")
}

fn bench(c: &mut Criterion) {
    let gpu = Gpu::new().expect("a wgpu adapter");
    let name = gpu.adapter_info().name.clone();
    let kernel = add_one(&gpu);
    let y = GpuBuffer::<f32>::zeroed(&gpu, N as usize).expect("buffer");
    let groups = kernel.workgroups_for([N, 1, 1]);

    let mut g = c.benchmark_group(format!("{DISPATCHES}_dependent_dispatches/{name}"));
    g.sample_size(20);
    g.throughput(Throughput::Elements(DISPATCHES));
    g.bench_function("recorder: one pass, one submit", |b| {
        b.iter(|| {
            let mut rec = gpu.recorder();
            for _ in 0..DISPATCHES {
                rec.dispatch(&kernel, &[&y], groups).expect("dispatch");
            }
            rec.submit().expect("submit");
            gpu.wait().expect("wait");
        })
    });
    g.bench_function("host only: record into one pass, no submit", |b| {
        b.iter(|| {
            let mut rec = gpu.recorder();
            for _ in 0..DISPATCHES {
                rec.dispatch(&kernel, &[&y], groups).expect("dispatch");
            }
            drop(rec);
        })
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

    if let Ok(Some(t)) = gpu.time(|rec| {
        for _ in 0..DISPATCHES {
            rec.dispatch(&kernel, &[&y], groups)?;
        }
        Ok(())
    }) {
        println!(
            "GPU timestamps, {DISPATCHES} dispatches in one pass: {t:?} ({:?} each)",
            t / DISPATCHES as u32
        );
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
