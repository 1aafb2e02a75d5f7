//! The memory-bound kernels of `gemm roofline` (`wgsl_gemm::memory`) against their `f64`
//! specification on odd shapes (a single element, rows shorter and longer than a workgroup,
//! columns that are not multiples of the 16 x 16 transpose tile), outputs poisoned with NaN
//! first: on the CPU interpreter, which also checks every access for bounds and data races and
//! every barrier for uniformity, and on the test adapter (lavapipe in CI).

use wgsl_dsl::interp::{HostBuffer, Interpreter};
use wgsl_dsl::runtime::{Gpu, GpuBuffer};
use wgsl_gemm::harness::random;
use wgsl_gemm::memory::{MemDims, MemKernel, check};

const SHAPES: [(u32, u32); 5] = [(1, 1), (3, 301), (7, 257), (2, 1000), (17, 33)];
const A: f32 = -0.625;

/// `x` in [-4, 4] and `y` before the kernel (random for `y = a x + y`, else NaN).
fn inputs(kind: MemKernel, rows: u32, cols: u32, seed: u64) -> (Vec<f32>, Vec<f32>) {
    let x = random(rows as usize * cols as usize, seed)
        .iter()
        .map(|v| 4.0 * v)
        .collect();
    let len = kind.output_len(rows, cols);
    let y0 = match kind {
        MemKernel::Axpy => random(len, seed + 1),
        _ => vec![f32::NAN; len],
    };
    (x, y0)
}

fn dims(rows: u32, cols: u32) -> MemDims {
    MemDims {
        rows,
        cols,
        a: A,
        _pad: 0,
    }
}

#[test]
fn memory_kernels_on_the_interpreter_match_the_specification() {
    let cpu = Interpreter::new();
    for (seed, kind) in MemKernel::ALL.into_iter().enumerate() {
        let shader = kind.build().build().expect("builds");
        let program = cpu.compile(&shader).expect("the interpreter takes it");
        for (rows, cols) in SHAPES {
            let (x, y0) = inputs(kind, rows, cols, seed as u64);
            let d = HostBuffer::from_value(dims(rows, cols));
            let xb = HostBuffer::from_slice(&x);
            let yb = HostBuffer::from_slice(&y0);
            cpu.dispatch(&program, &[&d, &xb, &yb], kind.grid(rows, cols))
                .unwrap_or_else(|e| panic!("{} [{rows}, {cols}]: {e}", kind.name()));
            check(kind, (rows, cols), A, &x, &y0, &yb.read())
                .unwrap_or_else(|e| panic!("interpreter, [{rows}, {cols}]: {e}"));
        }
    }
}

#[test]
fn memory_kernels_on_the_gpu_match_the_specification() {
    let gpu = Gpu::new().expect("a GPU or lavapipe");
    for (seed, kind) in MemKernel::ALL.into_iter().enumerate() {
        let shader = kind.build().build().expect("builds");
        let kernel = gpu.compile(&shader).expect("compiles");
        for (rows, cols) in SHAPES {
            let (x, y0) = inputs(kind, rows, cols, 100 + seed as u64);
            let d = GpuBuffer::from_value(&gpu, dims(rows, cols)).unwrap();
            let xb = GpuBuffer::from_slice(&gpu, &x).unwrap();
            let yb = GpuBuffer::from_slice(&gpu, &y0).unwrap();
            let mut rec = gpu.recorder();
            rec.dispatch(&kernel, &[&d, &xb, &yb], kind.grid(rows, cols))
                .unwrap();
            rec.submit().unwrap();
            check(kind, (rows, cols), A, &x, &y0, &yb.read(&gpu).unwrap())
                .unwrap_or_else(|e| panic!("GPU, [{rows}, {cols}]: {e}"));
        }
    }
}

/// The bytes each kernel must move, against a hand count for `[3, 5]`.
#[test]
fn bytes_moved_count_reads_and_writes() {
    let n = 15.0 * 4.0;
    assert_eq!(MemKernel::Copy.bytes(3, 5), 2.0 * n);
    assert_eq!(MemKernel::Axpy.bytes(3, 5), 3.0 * n);
    assert_eq!(MemKernel::RowSum.bytes(3, 5), n + 12.0);
    assert_eq!(MemKernel::Transpose.bytes(3, 5), 2.0 * n);
}
