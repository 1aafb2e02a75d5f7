//! The GEMM kernels on the CPU interpreter (`wgsl_dsl::interp`), which checks every access for
//! bounds and data races and every barrier and cooperative-matrix operation for uniformity,
//! against the `f64` specification ([`wgsl_gemm::spec`]):
//!
//! - the SIMT kernel on odd sizes in every layout, with the tiles it chooses, and with the
//!   large tiles on partial tiles and partial steps of `K`, with scalar and `vec4` reads;
//! - every variant of the cooperative-matrix kernel (lavapipe has no cooperative matrices, so
//!   this is where CI runs them): `f16` and `f32` buffers, every layout, on sizes that are not
//!   multiples of 16 (`17 x 33 x 19`, `1 x 16 x 7`) with the tile `CoopConfig::choose` picks
//!   and with the 128x128 tile of eight subgroups the large products use, `vec4` accesses
//!   (`20 x 36 x 24`), every tile staged through one buffer per operand
//!   ([`CoopConfig::single`]) on sizes giving several steps of `K`, the last partial
//!   (`17 x 33 x 70`, and `20 x 36 x 72` with `vec4` accesses), and the direct kernel on a size its tile divides (the only sizes it
//!   takes). Subgroups of 32 invocations, as on NVIDIA GPUs.
//!
//! Bounds, relative to `sum_p |op(A)[i][p] op(B)[p][j]|` for each element (see `spec`): `f16`
//! inputs `gamma_K(2^-22)` ([`spec::coop_bound`], the bound the H200 is held to; the
//! interpreter, which rounds each `f32` addition to nearest, also meets `gamma_K(2^-24)`,
//! checked too); `f32` inputs rounded to `f16` by the kernel `2^-10 + 2^-22 + gamma_K(2^-22)`
//! ([`spec::coop_f32_input_bound`]).

use half::f16;
use wgsl_dsl::TargetLimits;
use wgsl_dsl::interp::{HostArg, HostBuffer, InterpOptions, Interpreter};
use wgsl_gemm::config::{COOP_TILES, DIRECT_TILES, SINGLE_TILES, WideLoad};
use wgsl_gemm::harness::random;
use wgsl_gemm::{CoopConfig, CoopInput, Layout, Problem, SimtConfig, TileConfig, spec};

#[test]
fn simt_kernel_on_the_interpreter_matches_the_specification() {
    let target = TargetLimits::default();
    for (seed, layout) in Layout::ALL.into_iter().enumerate() {
        for (m, n, k) in [(1, 1, 1), (37, 45, 61), (19, 7, 33)] {
            let p = Problem { m, n, k, layout };
            check_simt(&SimtConfig::choose(&p, &target), &p, seed as u64);
        }
    }
}

#[test]
fn simt_kernel_with_the_large_tiles_matches_the_specification_on_partial_tiles() {
    // Two of 128 x 128 tiles along each side, the second partial, and K of several steps, the
    // last partial; and one row (batch 1).
    for (seed, layout) in Layout::ALL.into_iter().enumerate() {
        for &tiles in &wgsl_gemm::tiled::LARGE_TILES {
            // Odd sizes (scalar reads) and multiples of 4 (vec4 reads).
            for (m, n, k) in [(133, 131, 41), (1, 129, 17), (132, 136, 44), (4, 132, 20)] {
                let p = Problem { m, n, k, layout };
                check_simt(&SimtConfig::with_tiles(&p, tiles), &p, 10 + seed as u64);
            }
        }
    }
}

#[test]
fn simt_kernel_without_bounds_checks_matches_the_specification_on_sizes_the_tiles_divide() {
    // `SimtConfig::whole_tiles`: no element checked against M, N, K, every output stored; two
    // tiles along M, three steps of K, every layout, reading vec4s and (forced) scalars, plus
    // the grouped 32 x 32 tiles of split groups (kg 4). The interpreter reports any read
    // outside A or B, so a prefetch past the last step would fail here.
    let mut seed = 700;
    let mut tiles = wgsl_gemm::tiled::LARGE_TILES.to_vec();
    tiles.push(wgsl_gemm::tiled::GROUPED);
    for (i, &tile) in tiles.iter().enumerate() {
        for layout in Layout::ALL {
            let p = Problem::new(2 * tile.tm, tile.tn, 3 * tile.depth(), layout);
            let config = SimtConfig::with_tiles(&p, tile).with_whole_tiles();
            assert!(config.accepts(&p), "{config:?}");
            // A size the tile does not divide is refused.
            assert!(!config.accepts(&Problem::new(
                2 * tile.tm,
                tile.tn + 4,
                3 * tile.depth(),
                layout
            )));
            check_simt(&config, &p, seed);
            if i == 0 {
                let scalar = SimtConfig {
                    vector_a: false,
                    vector_b: false,
                    ..config
                };
                check_simt(&scalar, &p, seed + 100);
            }
            seed += 1;
        }
    }
}

/// Run the SIMT kernel of `config` on `p` on the interpreter (random operands from `seed`, `C`
/// poisoned with NaN, the H200's workgroup limits) and check it against the specification.
fn check_simt(config: &SimtConfig, p: &Problem, seed: u64) {
    let name = config.kernel_name();
    let target = wgsl_gemm::h200_limits();
    assert!(config.fits(&target), "{name}");
    let (cpu, program) = compile_h200(&name, wgsl_gemm::simt::build(config), 32);
    let a = random(p.a_len(), seed);
    let b = random(p.b_len(), seed + 1);
    let dims = HostBuffer::from_value(p.dims());
    let ab = HostBuffer::from_slice(&a);
    let bb = HostBuffer::from_slice(&b);
    let cb = HostBuffer::from_slice(&vec![f32::NAN; p.c_len()]);
    let (a4, b4) = (ab.as_vec4(), bb.as_vec4());
    let a_arg: &dyn HostArg = match (config.vector_a, &a4) {
        (true, Ok(a4)) => a4,
        (true, Err(e)) => panic!("{name}: a as vec4s: {e}"),
        (false, _) => &ab,
    };
    let b_arg: &dyn HostArg = match (config.vector_b, &b4) {
        (true, Ok(b4)) => b4,
        (true, Err(e)) => panic!("{name}: b as vec4s: {e}"),
        (false, _) => &bb,
    };
    cpu.dispatch(&program, &[&dims, a_arg, b_arg, &cb], config.grid(p))
        .unwrap_or_else(|e| panic!("{name} on {p:?}: {e}"));
    spec::check(
        p,
        &widen(&a),
        &widen(&b),
        &cb.read(),
        spec::simt_bound(p.k),
        None,
    )
    .unwrap_or_else(|e| panic!("{name} on {p:?}: {e}"));
}

/// `kernel` built for the H200's limits and compiled by [`h200_interpreter`].
fn compile_h200(
    name: &str,
    kernel: wgsl_dsl::KernelBuilder,
    subgroup_size: u32,
) -> (Interpreter, wgsl_dsl::interp::Program) {
    let target = wgsl_gemm::h200_limits();
    let shader = kernel
        .build_for(&target)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let cpu = h200_interpreter(&target, subgroup_size);
    let program = cpu
        .compile(&shader)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    (cpu, program)
}

/// The interpreter with the H200's workgroup limits (48 KiB of workgroup memory, 1024
/// invocations), which the large tiles need, as the GPU run checks them, and subgroups of
/// `subgroup_size`.
fn h200_interpreter(target: &TargetLimits, subgroup_size: u32) -> Interpreter {
    let mut limits = wgsl_dsl::runtime::interpreter_limits();
    limits.max_compute_workgroup_storage_size = target.max_workgroup_storage_size;
    limits.max_compute_invocations_per_workgroup = target.max_invocations_per_workgroup;
    limits.max_compute_workgroup_size_x = target.max_workgroup_size[0];
    Interpreter::with_options(InterpOptions {
        limits,
        subgroup_size,
        ..InterpOptions::default()
    })
}

fn widen(v: &[f32]) -> Vec<f64> {
    v.iter().map(|&x| f64::from(x)).collect()
}

/// Run the cooperative kernel of `config` on `p` on the interpreter (random operands from
/// `seed`, `C` poisoned with NaN) and check it against the specification.
fn check_coop(config: &CoopConfig, p: &Problem, seed: u64) {
    let name = config.kernel_name();
    assert!(config.accepts(p), "{name} takes {p:?}");
    let (cpu, program) = compile_h200(&name, wgsl_gemm::coop::build(config), config.subgroup_size);
    let a = random(p.a_len(), seed);
    let b = random(p.b_len(), seed + 1);
    let dims = HostBuffer::from_value(p.dims());
    let c = HostBuffer::from_slice(&vec![f32::NAN; p.c_len()]);
    // `c` is `array<f32>` whatever `vector_c` says (it selects the stores of whole tiles).
    let run = |ab: &dyn HostArg, bb: &dyn HostArg| {
        cpu.dispatch(&program, &[&dims, ab, bb, &c], config.grid(p))
            .unwrap_or_else(|e| panic!("{name} on {p:?}: {e}"));
    };
    let (a64, b64, bound, tight) = match config.input {
        CoopInput::F16 => {
            let ah: Vec<f16> = a.iter().map(|&x| f16::from_f32(x)).collect();
            let bh: Vec<f16> = b.iter().map(|&x| f16::from_f32(x)).collect();
            let (ab, bb) = (HostBuffer::from_slice(&ah), HostBuffer::from_slice(&bh));
            bind(config, &ab, &bb, run);
            let wide = |v: &[f16]| v.iter().map(|x| f64::from(x.to_f32())).collect::<Vec<_>>();
            (
                wide(&ah),
                wide(&bh),
                spec::coop_bound(p.k),
                spec::gamma(p.k, 2f64.powi(-24)),
            )
        }
        CoopInput::F32 => {
            let (ab, bb) = (HostBuffer::from_slice(&a), HostBuffer::from_slice(&b));
            bind(config, &ab, &bb, run);
            let u16 = 2f64.powi(-11);
            (
                widen(&a),
                widen(&b),
                spec::coop_f32_input_bound(p.k),
                2.0 * u16 + u16 * u16 + spec::gamma(p.k, 2f64.powi(-24)),
            )
        }
    };
    let worst = spec::check(p, &a64, &b64, &c.read(), bound, None)
        .unwrap_or_else(|e| panic!("{name} on {p:?}: {e}"));
    assert!(
        worst.relative <= tight,
        "{name} on {p:?}: {worst:?} beyond the interpreter's own bound {tight:e}"
    );
}

/// Call `run` with `a` and `b` bound as the configuration reads them (`vec4` or scalars, or
/// sixteen bytes at a time as `array<array<vec4<T>, 2>>` or `array<vec4<u32>>`).
fn bind<T: bytemuck::Pod + wgsl_dsl::types::Scalar>(
    config: &CoopConfig,
    a: &HostBuffer<T>,
    b: &HostBuffer<T>,
    run: impl Fn(&dyn HostArg, &dyn HostArg),
) {
    use wgsl_dsl::types::{Array, Vec4};
    match config.wide {
        Some(WideLoad::Pairs) => {
            let (a8, b8) = (
                a.view::<Array<Vec4<T>, 2>>(8),
                b.view::<Array<Vec4<T>, 2>>(8),
            );
            return run(&a8.expect("rows of 8"), &b8.expect("rows of 8"));
        }
        Some(WideLoad::Words) => {
            let (a8, b8) = (a.view::<Vec4<u32>>(8), b.view::<Vec4<u32>>(8));
            return run(&a8.expect("rows of 8"), &b8.expect("rows of 8"));
        }
        None => {}
    }
    let (a4, b4) = (a.as_vec4(), b.as_vec4());
    let a_arg: &dyn HostArg = if config.vector_a {
        a4.as_ref().expect("a's rows are multiples of 4")
    } else {
        a
    };
    let b_arg: &dyn HostArg = if config.vector_b {
        b4.as_ref().expect("b's rows are multiples of 4")
    } else {
        b
    };
    run(a_arg, b_arg);
}

#[test]
fn cooperative_kernels_on_the_interpreter_match_the_specification_on_odd_sizes() {
    let target = wgsl_gemm::h200_limits();
    let mut seed = 100;
    for input in [CoopInput::F16, CoopInput::F32] {
        for layout in Layout::ALL {
            for (m, n, k) in [(17, 33, 19), (1, 16, 7)] {
                let p = Problem { m, n, k, layout };
                let config = CoopConfig::choose(&p, input, &target, 32);
                check_coop(&config, &p, seed);
                seed += 2;
            }
        }
    }
}

#[test]
fn the_large_cooperative_tile_on_the_interpreter_matches_the_specification() {
    // The 128x256 tile of eight 64x64 subgroups 16 deep, as used from 2048^3 up, and the
    // 128x128 tile of eight 64x32 subgroups 32 deep, with edges on every side (K = 19: two
    // steps of 16, one of 32); and the vec4 accesses, on sizes that are multiples of 4 but not
    // of 16.
    let mut seed = 200;
    for layout in Layout::ALL {
        let p = Problem::new(17, 33, 19, layout);
        assert_eq!(COOP_TILES[0], (128, 256, 16, 64, 64));
        for tile in [COOP_TILES[0], COOP_TILES[1]] {
            let config = CoopConfig::with_tile(&p, CoopInput::F16, tile, 32);
            check_coop(&config, &p, seed);
            seed += 1;
        }
        let p = Problem::new(20, 36, 24, layout);
        let config = CoopConfig::with_tile(&p, CoopInput::F16, COOP_TILES[4], 32);
        assert!(config.vector_a && config.vector_b && config.vector_c);
        check_coop(&config, &p, seed + 2);
        seed += 4;
    }
}

#[test]
fn the_cooperative_kernel_through_one_buffer_on_the_interpreter_matches_the_specification() {
    // Several steps of K through the one buffer (70 = 2 x 32 + 6 = 64 + 6), edges on every side;
    // f16 and f32 inputs; scalar and vec4 accesses.
    let mut seed = 400;
    for layout in Layout::ALL {
        for (i, tile) in SINGLE_TILES.into_iter().enumerate() {
            let input = if i % 2 == 0 {
                CoopInput::F16
            } else {
                CoopInput::F32
            };
            let p = Problem::new(17, 33, 70, layout);
            let config = CoopConfig::single_with_tile(&p, input, tile, 32);
            assert!(config.single && config.buffers() == 1);
            check_coop(&config, &p, seed);
            let p = Problem::new(20, 36, 72, layout);
            let config = CoopConfig::single_with_tile(&p, input, tile, 32);
            assert!(config.vector_a && config.vector_b && config.vector_c);
            check_coop(&config, &p, seed + 1);
            seed += 2;
        }
    }
}

#[test]
fn the_direct_cooperative_kernel_on_the_interpreter_matches_the_specification() {
    // The direct kernel takes only sizes its tile divides: 64 x 64 x 32 with 32x32 subgroup
    // tiles, and two steps of K.
    for (seed, layout) in Layout::ALL.into_iter().enumerate() {
        let p = Problem::new(64, 64, 64, layout);
        let config = CoopConfig::direct_with_tile(&p, DIRECT_TILES[2], 32);
        check_coop(&config, &p, 300 + seed as u64);
    }
}

#[test]
fn the_cooperative_kernel_reading_sixteen_bytes_on_the_interpreter_matches_the_specification() {
    // Both wide loads (`array<array<vec4<f16>, 2>>` and `array<vec4<u32>>` unpacked), every
    // layout, through one buffer with the tile `CoopConfig::choose` prefers: stored rows that
    // are multiples of 8 but not of 16, edges on every side, several steps of K (72 = 2 x 32
    // + 8), the last partial.
    let mut seed = 500;
    for layout in Layout::ALL {
        let p = Problem::new(24, 40, 72, layout);
        for wide in [WideLoad::Pairs, WideLoad::Words] {
            let config = CoopConfig::single_with_tile(&p, CoopInput::F16, SINGLE_TILES[0], 32)
                .with_wide(wide);
            assert!(config.valid().is_ok() && config.accepts(&p), "{config:?}");
            check_coop(&config, &p, seed);
            seed += 1;
        }
    }
}

#[test]
fn the_cooperative_kernel_without_bounds_checks_on_the_interpreter_matches_the_specification() {
    // `CoopConfig::whole_tiles` (no chunk checked against M, N, K; every tile stored straight
    // into C) on a size the tile divides, two steps of K, every layout, reading `vec4`s and
    // sixteen bytes at a time; the interpreter reports any read outside A or B.
    let mut seed = 600;
    for layout in Layout::ALL {
        let p = Problem::new(128, 128, 64, layout);
        let config = CoopConfig::single_with_tile(&p, CoopInput::F16, SINGLE_TILES[0], 32)
            .with_whole_tiles();
        for config in [config, config.with_wide(WideLoad::Words)] {
            assert!(config.valid().is_ok() && config.accepts(&p), "{config:?}");
            check_coop(&config, &p, seed);
            seed += 1;
        }
        assert!(!config.accepts(&Problem::new(128, 128, 72, layout)));
    }
}
