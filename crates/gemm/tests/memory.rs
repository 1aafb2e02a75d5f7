//! The memory-bound kernels of `gemm roofline` (`wgsl_gemm::memory`) against their `f64`
//! specification in every configuration ([`MemConfig::candidates`]) on odd shapes (a single
//! element, rows shorter and longer than a workgroup, columns that are not multiples of the
//! transpose's tile), outputs poisoned with NaN
//! first: on the CPU interpreter, which also checks every access for bounds and data races and
//! every barrier for uniformity, and on the test adapter (lavapipe in CI).

use wgsl_dsl::interp::{HostArg, HostBuffer, Interpreter};
use wgsl_dsl::runtime::{BindArg, Gpu, GpuBuffer};
use wgsl_gemm::harness::random;
use wgsl_gemm::memory::{MemConfig, MemDims, MemKernel, check};

/// Odd shapes (scalar kernels only), and shapes whose rows are a multiple of 4 long (the `vec4`
/// kernels too; both sides a multiple of 4 for the `vec4` transpose), among them rows shorter
/// than a workgroup's 256 lanes and longer, and sides that are not multiples of the
/// transpose's tiles (16, 32, 64).
const SHAPES: [(u32, u32); 13] = [
    (1, 1),
    (3, 301),
    (7, 257),
    (2, 1000),
    (17, 33),
    (1, 4),
    (5, 1028),
    (33, 36),
    (3, 2052),
    (4, 4),
    (12, 100),
    (68, 36),
    (100, 132),
];
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

/// A kernel, a configuration, and the shapes (`[rows, cols]`) it is valid for.
type Case = (MemKernel, MemConfig, Vec<(u32, u32)>);

/// Every configuration of every kernel with the shapes it is valid for.
fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for kind in MemKernel::ALL {
        // The configurations offered for small rows and for rows of 4096 and 8192 (which
        // hold their row in 2, 4 and 8 `vec4`s per invocation).
        let mut configs: Vec<MemConfig> = Vec::new();
        for (rows, cols) in [(4, 4), (1, 4096), (1, 8192)] {
            for c in MemConfig::candidates(kind, rows, cols) {
                if !configs.contains(&c) {
                    configs.push(c);
                }
            }
        }
        for config in configs {
            let shapes: Vec<_> = SHAPES
                .into_iter()
                .filter(|&(rows, cols)| config.valid(kind, rows, cols))
                .collect();
            v.push((kind, config, shapes));
        }
    }
    v
}

#[test]
fn every_configuration_is_tested_on_several_shapes() {
    let cases = cases();
    // 3 element-wise kernels x 4; 3 row kernels x 5 (scalar, vec4, the row held in 2, 4 and
    // 8 vec4s); the transpose x 10 (16 x 16, 32 x 32 by 32 x 8 and 32 x 4 invocations, vec4
    // with a tile of 32 by 256, 128 and 64 invocations, by 256 with the grid's order swapped,
    // the swizzled tiles 32 and 64 wide, the 64-wide one in the other order).
    assert_eq!(cases.len(), 3 * 4 + 3 * 5 + 10);
    for (kind, config, shapes) in &cases {
        assert!(
            shapes.len() >= 4,
            "{}: {shapes:?}",
            kind.kernel_name(*config)
        );
    }
}

#[test]
fn memory_kernels_on_the_interpreter_match_the_specification() {
    let cpu = Interpreter::new();
    for (seed, (kind, config, shapes)) in cases().into_iter().enumerate() {
        let name = kind.kernel_name(config);
        let shader = kind.build_for(config).build().expect("builds");
        let program = cpu.compile(&shader).expect("the interpreter takes it");
        for (rows, cols) in shapes {
            let (x, y0) = inputs(kind, rows, cols, seed as u64);
            let d = HostBuffer::from_value(dims(rows, cols));
            let xb = HostBuffer::from_slice(&x);
            let yb = HostBuffer::from_slice(&y0);
            let (x4, y4) = (xb.as_vec4(), yb.as_vec4());
            let xa: &dyn HostArg = if config.x_vec4() {
                x4.as_ref().unwrap()
            } else {
                &xb
            };
            let ya: &dyn HostArg = if config.y_vec4(kind) {
                y4.as_ref().unwrap()
            } else {
                &yb
            };
            cpu.dispatch(&program, &[&d, xa, ya], kind.grid_for(config, rows, cols))
                .unwrap_or_else(|e| panic!("{name} [{rows}, {cols}]: {e}"));
            check(kind, (rows, cols), A, &x, &y0, &yb.read())
                .unwrap_or_else(|e| panic!("interpreter, {name} [{rows}, {cols}]: {e}"));
        }
    }
}

#[test]
fn memory_kernels_on_the_gpu_match_the_specification() {
    let gpu = Gpu::new().expect("a GPU or lavapipe");
    for (seed, (kind, config, shapes)) in cases().into_iter().enumerate() {
        let name = kind.kernel_name(config);
        let shader = kind.build_for(config).build().expect("builds");
        let kernel = gpu.compile(&shader).expect("compiles");
        for (rows, cols) in shapes {
            let (x, y0) = inputs(kind, rows, cols, 100 + seed as u64);
            let d = GpuBuffer::from_value(&gpu, dims(rows, cols)).unwrap();
            let xb = GpuBuffer::from_slice(&gpu, &x).unwrap();
            let yb = GpuBuffer::from_slice(&gpu, &y0).unwrap();
            let (x4, y4) = (xb.as_vec4(), yb.as_vec4());
            let xa: &dyn BindArg = if config.x_vec4() {
                x4.as_ref().unwrap()
            } else {
                &xb
            };
            let ya: &dyn BindArg = if config.y_vec4(kind) {
                y4.as_ref().unwrap()
            } else {
                &yb
            };
            let mut rec = gpu.recorder();
            rec.dispatch(&kernel, &[&d, xa, ya], kind.grid_for(config, rows, cols))
                .unwrap();
            rec.submit().unwrap();
            check(kind, (rows, cols), A, &x, &y0, &yb.read(&gpu).unwrap())
                .unwrap_or_else(|e| panic!("GPU, {name} [{rows}, {cols}]: {e}"));
        }
    }
}

/// A `vec4` configuration is offered only where the length or the row is a multiple of 4, and
/// the names tell the configurations apart.
#[test]
fn configurations_follow_the_shape() {
    let names = |kind, rows, cols| -> Vec<String> {
        MemConfig::candidates(kind, rows, cols)
            .into_iter()
            .map(|c| kind.kernel_name(c))
            .collect()
    };
    assert_eq!(
        names(MemKernel::Copy, 3, 4),
        [
            "mem_copy",
            "mem_copy_vec4",
            "mem_copy_vec4_x2",
            "mem_copy_vec4_x4"
        ]
    );
    // 2 x 6 = 12 elements: a multiple of 4 although the rows are not.
    assert_eq!(names(MemKernel::Gelu, 2, 6).len(), 4);
    assert_eq!(names(MemKernel::Axpy, 3, 5), ["mem_axpy"]);
    assert_eq!(names(MemKernel::RowSoftmax, 2, 6), ["mem_row_softmax"]);
    assert_eq!(
        names(MemKernel::RowLayerNorm, 2, 8),
        [
            "mem_row_layer_norm",
            "mem_row_layer_norm_vec4",
            "mem_row_layer_norm_vec4_x2"
        ]
    );
    // 4096 columns: 1024 vec4s, 4 per invocation; past 8192 no row is held.
    assert_eq!(names(MemKernel::RowSum, 2, 4096)[2], "mem_row_sum_vec4_x4");
    assert_eq!(names(MemKernel::RowSum, 2, 8196).len(), 2);
    let held = MemConfig {
        vec4: true,
        per_invocation: 2,
        ..MemConfig::SCALAR
    };
    assert!(held.valid(MemKernel::RowSoftmax, 3, 2048));
    assert!(!held.valid(MemKernel::RowSoftmax, 3, 2052));
    assert_eq!(
        names(MemKernel::Transpose, 3, 5),
        ["mem_transpose", "mem_transpose_32x8", "mem_transpose_32x4"]
    );
    assert_eq!(
        names(MemKernel::Transpose, 4, 8)[3..],
        [
            "mem_transpose_vec4_32",
            "mem_transpose_vec4_32_x2",
            "mem_transpose_vec4_32_x4",
            "mem_transpose_vec4_32_yx",
            "mem_transpose_vec4_32_swz",
            "mem_transpose_vec4_64_swz",
            "mem_transpose_vec4_64_swz_yx"
        ]
    );
    // The transposes' workgroups are what their names say.
    for (c, size) in MemConfig::candidates(MemKernel::Transpose, 4, 8)
        .into_iter()
        .zip([
            [16, 16, 1],
            [32, 8, 1],
            [32, 4, 1],
            [256, 1, 1],
            [128, 1, 1],
            [64, 1, 1],
            [256, 1, 1],
            [64, 1, 1],
            [256, 1, 1],
            [256, 1, 1],
        ])
    {
        let shader = MemKernel::Transpose.build_for(c).build().expect("builds");
        assert_eq!(shader.signature.workgroup_size, size, "{c:?}");
    }
    // The 64-wide swizzled tile is WebGPU's default limit of workgroup memory exactly.
    let swizzled = |side| MemConfig {
        vec4: true,
        swizzled: side,
        ..MemConfig::SCALAR
    };
    for (side, bytes) in [(32, 4096), (64, 16384)] {
        let shader = MemKernel::Transpose.build_for(swizzled(side)).build();
        assert_eq!(shader.expect("builds").signature.workgroup_memory, bytes);
    }
    // The swapped grid covers the same tiles, transposed.
    let yx = MemConfig {
        grid_yx: true,
        ..swizzled(64)
    };
    assert_eq!(MemKernel::Transpose.grid_for(yx, 100, 132), [2, 3, 1]);
    assert_eq!(
        MemKernel::Transpose.grid_for(swizzled(64), 100, 132),
        [3, 2, 1]
    );
    assert!(!swizzled(64).valid(MemKernel::Transpose, 100, 130));
    assert!(!swizzled(64).valid(MemKernel::Copy, 4, 4));
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
