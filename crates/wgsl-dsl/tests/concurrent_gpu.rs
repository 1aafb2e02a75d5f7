//! One `Gpu` shared by several threads: workers upload, dispatch and read back while other
//! threads wait on the device (`Gpu::wait` polls it), and every result is checked against a CPU
//! reference. wgpu runs a buffer's map callback on whichever thread's poll collects it, maybe
//! after the reading thread's own poll has returned; a read-back that assumed its poll had run
//! the callback failed now and then with "the map callback did not run" (13 of 6,000 reads by
//! three threads, with three threads waiting, on lavapipe).

use std::sync::atomic::{AtomicBool, Ordering};

use rand::{Rng, SeedableRng, rngs::StdRng};
use wgsl_dsl::prelude::*;
use wgsl_dsl::runtime::{Gpu, GpuBuffer};

mod common;

const THREADS: u32 = 3;
const WAITERS: u32 = 3;
const ITERATIONS: u32 = 40;
/// Read-backs of the result per iteration.
const READS: u32 = 10;
const ROUNDS: u32 = 3;
const SIZES: [usize; 5] = [1, 7, 37, 65, 129];

/// `out[i] = x[i] * 3 + k` for `i < arrayLength(out)`.
fn kernel() -> Shader {
    common::guarded_map::<u32, u32, u32>("scale_add", ["add", "x", "out"], |add, x, _, i| {
        x.at(i).load() * 3u32 + add.load()
    })
    .build()
    .expect("kernel builds")
}

/// One thread's work; returns what went wrong, if anything.
fn worker(gpu: &Gpu, shader: &Shader, thread: u32, round: u32) -> Vec<String> {
    let mut errors = Vec::new();
    let mut rng = StdRng::seed_from_u64(u64::from(round * 100 + thread));
    let kernel = match gpu.compile(shader) {
        Ok(k) => k,
        Err(e) => return vec![format!("thread {thread}: compile: {e}")],
    };
    for it in 0..ITERATIONS {
        let n = SIZES[(it as usize + thread as usize) % SIZES.len()];
        let x: Vec<u32> = (0..n).map(|_| rng.random_range(0..1_000_000)).collect();
        let add = thread * 1000 + it;
        let run = || -> Result<(), String> {
            let xb = GpuBuffer::from_slice(gpu, &x).map_err(|e| format!("upload: {e}"))?;
            let ab = GpuBuffer::from_value(gpu, add).map_err(|e| format!("upload: {e}"))?;
            let out = GpuBuffer::from_slice(gpu, &vec![0xDEAD_BEEFu32; n])
                .map_err(|e| format!("upload: {e}"))?;
            gpu.dispatch(
                &kernel,
                &[&ab, &xb, &out],
                kernel.workgroups_for([n as u32, 1, 1]),
            )
            .map_err(|e| format!("dispatch: {e}"))?;
            let want: Vec<u32> = x.iter().map(|v| v * 3 + add).collect();
            for _ in 0..READS {
                let got = out.read(gpu).map_err(|e| format!("read back: {e}"))?;
                if got != want {
                    return Err(format!("wrong values for n = {n}"));
                }
            }
            // A write, then a read of the same buffer; and a full wait now and then.
            let y: Vec<u32> = x.iter().map(|v| v ^ add).collect();
            xb.write(gpu, &y).map_err(|e| format!("write: {e}"))?;
            if xb.read(gpu).map_err(|e| format!("read back: {e}"))? != y {
                return Err("write then read: wrong values".into());
            }
            if it % 8 == 0 {
                gpu.wait().map_err(|e| format!("wait: {e}"))?;
            }
            Ok(())
        };
        if let Err(e) = run() {
            errors.push(format!("thread {thread}, iteration {it}: {e}"));
        }
    }
    errors
}

#[test]
fn one_gpu_shared_by_threads_loses_no_read_back() {
    let gpu = Gpu::new().unwrap_or_else(|e| panic!("no wgpu adapter: {e}"));
    let shader = kernel();
    for round in 0..ROUNDS {
        let done = AtomicBool::new(false);
        let errors: Vec<String> = std::thread::scope(|s| {
            for _ in 0..WAITERS {
                let (gpu, done) = (&gpu, &done);
                s.spawn(move || {
                    while !done.load(Ordering::Relaxed) {
                        gpu.wait().expect("wait");
                    }
                });
            }
            let handles: Vec<_> = (0..THREADS)
                .map(|t| {
                    let (gpu, shader) = (&gpu, &shader);
                    s.spawn(move || worker(gpu, shader, t, round))
                })
                .collect();
            let errors = handles
                .into_iter()
                .flat_map(|h| h.join().expect("worker panicked"))
                .collect();
            done.store(true, Ordering::Relaxed);
            errors
        });
        assert!(
            errors.is_empty(),
            "round {round}: {} of {} iterations failed:\n{}",
            errors.len(),
            THREADS * ITERATIONS,
            errors.join("\n")
        );
    }
}
