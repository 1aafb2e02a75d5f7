//! Every example kernel of the registry runs on the interpreter (no GPU needed) on random
//! inputs of odd sizes, with outputs poisoned first, and every binding's final contents equal
//! the CPU reference's; the interpreter's checks (races, bounds, barriers) pass.

use rand::SeedableRng;
use rand::rngs::StdRng;
use wgsl_dsl::interp::{HostArg, HostBuffer, Interpreter};
use wgsl_dsl_workspace_tests::examples::{self, close};
use wgsl_dsl_workspace_tests::{Data, Example};

enum Buf {
    F32(HostBuffer<f32>),
    U32(HostBuffer<u32>),
    I32(HostBuffer<i32>),
}

impl Buf {
    fn upload(d: &Data) -> Buf {
        match d {
            Data::F32(v) => Buf::F32(HostBuffer::from_slice(v)),
            Data::U32(v) => Buf::U32(HostBuffer::from_slice(v)),
            Data::I32(v) => Buf::I32(HostBuffer::from_slice(v)),
        }
    }
    fn arg(&self) -> &dyn HostArg {
        match self {
            Buf::F32(b) => b,
            Buf::U32(b) => b,
            Buf::I32(b) => b,
        }
    }
    fn read(&self) -> Data {
        match self {
            Buf::F32(b) => Data::F32(b.read()),
            Buf::U32(b) => Data::U32(b.read()),
            Buf::I32(b) => Data::I32(b.read()),
        }
    }
}

fn run(cpu: &Interpreter, e: &Example, seed: u64) -> Result<(), String> {
    let shader = (e.build)().build().map_err(|err| format!("build: {err}"))?;
    let program = cpu
        .compile(&shader)
        .map_err(|err| format!("compile: {err}"))?;
    let case = (e.case)(&mut StdRng::seed_from_u64(seed));
    let bufs: Vec<Buf> = case.buffers.iter().map(Buf::upload).collect();
    let args: Vec<&dyn HostArg> = bufs.iter().map(Buf::arg).collect();
    let report = cpu
        .dispatch(&program, &args, case.workgroups)
        .map_err(|err| format!("dispatch: {err}"))?;
    if !report.warnings.is_empty() {
        return Err(format!("warnings: {:?}", report.warnings));
    }
    let mut expected = case.buffers.clone();
    (e.reference)(&mut expected);
    for (b, (buf, want)) in bufs.iter().zip(&expected).enumerate() {
        let got = buf.read();
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
        if let Some(m) = mismatch {
            return Err(format!("binding {b} {m}"));
        }
    }
    Ok(())
}

#[test]
fn every_example_kernel_matches_its_cpu_reference_on_the_interpreter() {
    let cpu = Interpreter::new();
    let mut failures = Vec::new();
    let all = examples::all();
    for e in &all {
        for seed in [1, 2] {
            if let Err(err) = run(&cpu, e, seed) {
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
