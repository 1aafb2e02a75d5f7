//! Every GEMM kernel builds and validates for an H200-like target (and its WGSL parses back);
//! the SIMT kernel runs on the test adapter (lavapipe in CI) against the CPU specification on
//! odd sizes in every layout; the cooperative kernel runs where the adapter has cooperative
//! matrices and is refused with `MissingCapability` where it has not.

use naga::valid::{Capabilities, ValidationFlags, Validator};
use wgsl_dsl::TargetLimits;
use wgsl_dsl::runtime::{Gpu, GpuOptions};
use wgsl_gemm::harness::{
    direct_checks, run_and_check, single_checks, whole_tile_checks, wide_checks,
};
use wgsl_gemm::{CoopConfig, CoopInput, Gemm, GemmError, Layout, Problem, SimtConfig, TileConfig};

fn h200() -> TargetLimits {
    wgsl_gemm::h200_limits()
}

/// Direct cooperative configurations (fragments straight from the buffers), one per tile and
/// layout.
fn direct_configs() -> Vec<CoopConfig> {
    direct_checks(32).into_iter().map(|(_, c)| c).collect()
}

/// Cooperative configurations staged through one buffer per operand, every tile, layout,
/// input and vector width.
fn single_configs() -> Vec<CoopConfig> {
    single_checks(32).into_iter().map(|(_, c)| c).collect()
}

/// The same with `f16` inputs read sixteen bytes at a time ([`CoopConfig::wide`]), both ways,
/// and without bounds checks ([`CoopConfig::whole_tiles`]).
fn wide_configs() -> Vec<CoopConfig> {
    wide_checks(32)
        .into_iter()
        .chain(whole_tile_checks(32))
        .map(|(_, c)| c)
        .collect()
}

fn problems() -> Vec<Problem> {
    Problem::every_layout(&[
        (1, 1, 1),
        (37, 45, 61),
        (65, 64, 40),
        (129, 7, 33),
        (64, 128, 784),
    ])
}

fn reparse(name: &str, wgsl: &str) {
    let module = naga::front::wgsl::parse_str(wgsl)
        .unwrap_or_else(|e| panic!("{name}: WGSL does not parse:\n{}", e.emit_to_string(wgsl)));
    Validator::new(ValidationFlags::all(), Capabilities::all())
        .validate(&module)
        .unwrap_or_else(|e| panic!("{name}: WGSL does not validate: {e:?}"));
}

#[test]
fn every_configuration_builds_and_its_wgsl_parses_back() {
    let target = h200();
    for p in problems() {
        let simt = SimtConfig::choose(&p, &target);
        let shader = wgsl_gemm::simt::build(&simt)
            .build_for(&target)
            .unwrap_or_else(|e| panic!("{}: {e}", simt.kernel_name()));
        reparse(&simt.kernel_name(), &shader.wgsl);
        for input in [CoopInput::F16, CoopInput::F32] {
            let coop = CoopConfig::choose(&p, input, &target, 32);
            let shader = wgsl_gemm::coop::build(&coop)
                .build_for(&target)
                .unwrap_or_else(|e| panic!("{}: {e}", coop.kernel_name()));
            assert!(shader.wgsl.contains("enable wgpu_cooperative_matrix;"));
            assert_eq!(shader.signature.cooperative_shapes.len(), 1);
            reparse(&coop.kernel_name(), &shader.wgsl);
        }
    }
    for coop in direct_configs()
        .into_iter()
        .chain(single_configs())
        .chain(wide_configs())
    {
        let shader = wgsl_gemm::coop::build(&coop)
            .build_for(&target)
            .unwrap_or_else(|e| panic!("{}: {e}", coop.kernel_name()));
        assert_eq!(
            u64::from(shader.signature.workgroup_memory),
            u64::from(coop.workgroup_bytes()),
            "{}",
            coop.kernel_name()
        );
        reparse(&coop.kernel_name(), &shader.wgsl);
    }
}

/// naga's SPIR-V writer (what wgpu's Vulkan backend runs) takes every cooperative kernel with
/// the options wgpu uses on Vulkan 1.3 (index clamping, loop bounding).
#[test]
fn cooperative_kernels_translate_to_spirv() {
    let target = h200();
    let options = naga::back::spv::Options {
        lang_version: (1, 6),
        bounds_check_policies: naga::proc::BoundsCheckPolicies {
            index: naga::proc::BoundsCheckPolicy::Restrict,
            buffer: naga::proc::BoundsCheckPolicy::Restrict,
            image_load: naga::proc::BoundsCheckPolicy::Restrict,
            binding_array: naga::proc::BoundsCheckPolicy::Unchecked,
        },
        force_loop_bounding: true,
        ..Default::default()
    };
    let mut configs = direct_configs();
    configs.extend(single_configs());
    configs.extend(wide_configs());
    for p in problems() {
        for input in [CoopInput::F16, CoopInput::F32] {
            configs.push(CoopConfig::choose(&p, input, &target, 32));
        }
    }
    {
        for coop in configs {
            let shader = wgsl_gemm::coop::build(&coop)
                .build_for(&target)
                .expect("builds");
            let pipeline = naga::back::spv::PipelineOptions {
                shader_stage: naga::ShaderStage::Compute,
                entry_point: coop.kernel_name(),
            };
            let words =
                naga::back::spv::write_vec(&shader.module, &shader.info, &options, Some(&pipeline))
                    .unwrap_or_else(|e| panic!("{}: {e}", coop.kernel_name()));
            // OpCapability CooperativeMatrixKHR (6022) is declared.
            assert!(words.windows(2).any(|w| w == [(2 << 16) | 17, 6022]));
        }
    }
}

#[test]
fn cooperative_kernels_need_the_capability() {
    let p = Problem::new(64, 64, 64, Layout::AB);
    let portable = TargetLimits {
        capabilities: Capabilities::SUBGROUP | Capabilities::SHADER_FLOAT16,
        ..h200()
    };
    let coop = CoopConfig::choose(&p, CoopInput::F16, &h200(), 32);
    let err = wgsl_gemm::coop::build(&coop)
        .build_for(&portable)
        .unwrap_err();
    assert!(
        matches!(err, wgsl_dsl::BuildError::MissingCapability { needed, .. } if needed == Capabilities::COOPERATIVE_MATRIX),
        "{err}"
    );
    assert!(err.to_string().contains("lavapipe"), "{err}");
}

fn gpu() -> Gpu {
    Gpu::with_options(&GpuOptions {
        cooperative_matrix: true,
        ..GpuOptions::from_env()
    })
    .expect("a GPU adapter (CI installs lavapipe)")
}

#[test]
fn simt_kernels_match_the_specification_on_odd_sizes() {
    let gpu = gpu();
    let mut failures = Vec::new();
    for (seed, p) in problems().into_iter().enumerate() {
        let result = Gemm::simt(&gpu, &p)
            .map_err(|e| e.to_string())
            .and_then(|g| run_and_check(&gpu, &g, &p, seed as u64, 64).map_err(|e| e.to_string()));
        if let Err(e) = result {
            failures.push(format!("{p:?}: {e}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_simt_tile_matches_the_specification() {
    let gpu = gpu();
    let p = Problem::new(67, 45, 21, Layout::AtB);
    let mut tiles = wgsl_gemm::config::simt_sweep_tiles();
    tiles.extend([
        wgsl_gemm::tiled::LARGE,
        wgsl_gemm::tiled::GROUPED,
        wgsl_gemm::tiled::SMALL,
    ]);
    for tile in tiles {
        let config = SimtConfig::with_tiles(&p, tile);
        if !config.fits(&gpu.target_limits()) {
            continue;
        }
        let g = Gemm::with_simt(&gpu, config).expect("compiles");
        run_and_check(&gpu, &g, &p, 7, 64).unwrap_or_else(|e| panic!("{tile:?}: {e}"));
    }
}

#[test]
fn simt_kernels_without_bounds_checks_match_the_specification_on_sizes_their_tiles_divide() {
    // `SimtConfig::whole_tiles` on the GPU: every sweep tile that fits, two tiles along M and N
    // and three steps of K, output poisoned first (run_and_check).
    let gpu = gpu();
    let mut tiles = wgsl_gemm::config::simt_sweep_tiles();
    tiles.extend([wgsl_gemm::tiled::GROUPED, wgsl_gemm::tiled::SMALL]);
    for (seed, tile) in tiles.into_iter().enumerate() {
        let layout = Layout::ALL[seed % Layout::ALL.len()];
        let p = Problem::new(2 * tile.tm, 2 * tile.tn, 3 * tile.depth(), layout);
        let config = SimtConfig::with_tiles(&p, tile).with_whole_tiles();
        if !config.fits(&gpu.target_limits()) {
            continue;
        }
        assert!(config.accepts(&p), "{config:?}");
        let g = Gemm::with_simt(&gpu, config).expect("compiles");
        run_and_check(&gpu, &g, &p, 30 + seed as u64, 64)
            .unwrap_or_else(|e| panic!("{}: {e}", config.kernel_name()));
    }
}

#[test]
fn cooperative_kernels_match_the_specification_or_are_refused() {
    let gpu = gpu();
    let p = Problem::new(37, 45, 61, Layout::ABt);
    match Gemm::coop(&gpu, &p, CoopInput::F16) {
        Err(GemmError::Build(wgsl_dsl::BuildError::MissingCapability { needed, .. })) => {
            assert!(needed.contains(Capabilities::COOPERATIVE_MATRIX));
            eprintln!("adapter has no cooperative matrices: refused as it should be");
        }
        Err(GemmError::SubgroupSize { .. }) => {
            eprintln!("adapter has no single subgroup size: refused");
        }
        Err(e) => panic!("unexpected error: {e}"),
        Ok(_) => {
            for (seed, p) in problems().into_iter().enumerate() {
                for input in [CoopInput::F16, CoopInput::F32] {
                    let g = Gemm::coop(&gpu, &p, input).expect("compiles");
                    run_and_check(&gpu, &g, &p, seed as u64, 64).unwrap_or_else(|e| panic!("{e}"));
                }
            }
        }
    }
}
