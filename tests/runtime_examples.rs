//! Every example kernel of the registry runs on the GPU (lavapipe in CI) on random inputs of
//! odd sizes, with outputs poisoned first, and every binding's final contents equal the CPU
//! reference's.

use rand::SeedableRng;
use rand::rngs::StdRng;
use wgsl_dsl::runtime::{BindArg, Gpu, GpuBuffer};
use wgsl_dsl_workspace_tests::examples::{self, close};
use wgsl_dsl_workspace_tests::{Data, Example};

enum Buf {
    F32(GpuBuffer<f32>),
    U32(GpuBuffer<u32>),
    I32(GpuBuffer<i32>),
}

impl Buf {
    fn upload(gpu: &Gpu, d: &Data) -> Buf {
        match d {
            Data::F32(v) => Buf::F32(GpuBuffer::from_slice(gpu, v).expect("upload")),
            Data::U32(v) => Buf::U32(GpuBuffer::from_slice(gpu, v).expect("upload")),
            Data::I32(v) => Buf::I32(GpuBuffer::from_slice(gpu, v).expect("upload")),
        }
    }
    fn arg(&self) -> &dyn BindArg {
        match self {
            Buf::F32(b) => b,
            Buf::U32(b) => b,
            Buf::I32(b) => b,
        }
    }
    fn read(&self, gpu: &Gpu) -> Data {
        match self {
            Buf::F32(b) => Data::F32(b.read(gpu).expect("read back")),
            Buf::U32(b) => Data::U32(b.read(gpu).expect("read back")),
            Buf::I32(b) => Data::I32(b.read(gpu).expect("read back")),
        }
    }
}

fn run(gpu: &Gpu, e: &Example, seed: u64) -> Result<(), String> {
    let shader = (e.build)()
        .build_for(&gpu.target_limits())
        .map_err(|err| format!("build: {err}"))?;
    let kernel = gpu
        .compile(&shader)
        .map_err(|err| format!("compile: {err}"))?;
    let case = (e.case)(&mut StdRng::seed_from_u64(seed));
    let bufs: Vec<Buf> = case.buffers.iter().map(|d| Buf::upload(gpu, d)).collect();
    let args: Vec<&dyn BindArg> = bufs.iter().map(Buf::arg).collect();
    gpu.dispatch(&kernel, &args, case.workgroups)
        .map_err(|err| format!("dispatch: {err}"))?;
    let mut expected = case.buffers.clone();
    (e.reference)(&mut expected);
    for (b, (buf, want)) in bufs.iter().zip(&expected).enumerate() {
        let got = buf.read(gpu);
        let mismatch = match (&got, want) {
            (Data::F32(g), Data::F32(w)) => g
                .iter()
                .zip(w)
                .position(|(g, w)| !close(*g, *w, e.tolerance))
                .map(|i| format!("[{i}]: got {}, want {}", g[i], w[i])),
            (Data::U32(g), Data::U32(w)) => g
                .iter()
                .zip(w)
                .position(|(g, w)| g != w)
                .map(|i| format!("[{i}]: got {:#x}, want {:#x}", g[i], w[i])),
            (Data::I32(g), Data::I32(w)) => g
                .iter()
                .zip(w)
                .position(|(g, w)| g != w)
                .map(|i| format!("[{i}]: got {}, want {}", g[i], w[i])),
            _ => Some("type changed".into()),
        };
        if got.len() != want.len() {
            return Err(format!(
                "binding {b}: length {} != {}",
                got.len(),
                want.len()
            ));
        }
        if let Some(m) = mismatch {
            return Err(format!("binding {b} {m}"));
        }
    }
    Ok(())
}

#[test]
fn every_example_kernel_matches_its_cpu_reference_on_the_gpu() {
    let gpu = Gpu::new().expect("a GPU adapter (CI installs lavapipe: mesa-vulkan-drivers)");
    let mut failures = Vec::new();
    let all = examples::all();
    for e in &all {
        if e.needs_subgroups
            && !gpu
                .features()
                .contains(wgsl_dsl::runtime::wgpu::Features::SUBGROUP)
        {
            continue;
        }
        for seed in [1, 2] {
            if let Err(err) = run(&gpu, e, seed) {
                failures.push(format!("{} (seed {seed}): {err}", e.name));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} examples failed:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
}
