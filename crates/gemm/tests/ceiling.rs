//! The ceiling kernel (`wgsl_gemm::ceiling`): its committed modules are SPIR-V, every tile fits
//! 48 KiB of workgroup memory and the shader's copy loops (`shaders/ceiling.comp`), and where
//! the adapter runs it (cooperative matrices, passthrough shaders, subgroups of 32) every tile
//! matches the `f64` specification on every element of an odd multiple of the tile. Where it
//! cannot (Mesa lavapipe in CI) opening the device is a typed error, and the GPU test says so
//! and returns.

use wgsl_dsl::runtime::GpuOptions;
use wgsl_gemm::ceiling::{
    self, CEILING_TILES, CeilingError, CeilingKernel, CeilingTile, SUBGROUP_SIZE, WORKGROUP_SIZE,
};
use wgsl_gemm::{Layout, Problem};

#[test]
fn every_tile_has_a_spirv_module() {
    for tile in CEILING_TILES {
        let bytes = tile.spirv().unwrap_or_else(|| panic!("{tile}: no module"));
        let words = ceiling::spirv_words(bytes).unwrap_or_else(|e| panic!("{tile}: {e}"));
        assert_eq!(words[0], 0x0723_0203);
    }
    assert!(CeilingTile::new(64, 64, 16).spirv().is_none());
}

#[test]
fn bytes_that_are_not_spirv_are_an_error() {
    assert!(matches!(
        ceiling::spirv_words(&[0u8; 22]),
        Err(CeilingError::NotSpirv(_))
    ));
    assert!(matches!(
        ceiling::spirv_words(&[0u8; 24]),
        Err(CeilingError::NotSpirv(_))
    ));
}

/// The shader's assumptions on a tile: 48 KiB (NVIDIA's Vulkan limit), whole 16x16 fragments
/// per subgroup of the 4 x 2 grid, and copy loops whose rows per pass divide the tile's rows.
#[test]
fn every_tile_fits_the_shader() {
    let elements_per_vec4 = 8;
    for tile in CEILING_TILES {
        assert!(tile.workgroup_bytes() <= 48 * 1024, "{tile}");
        assert_eq!(tile.m % (2 * 16), 0, "{tile}: C_ROWS");
        assert_eq!(tile.n % (4 * 16), 0, "{tile}: C_COLS");
        assert_eq!(tile.k % 16, 0, "{tile}: TILE_K / lK");
        let rows_per_pass_a = WORKGROUP_SIZE / (tile.k / elements_per_vec4);
        let rows_per_pass_b = WORKGROUP_SIZE / (tile.n / elements_per_vec4);
        assert_eq!(tile.m % rows_per_pass_a, 0, "{tile}: A's copy");
        assert_eq!(tile.k % rows_per_pass_b, 0, "{tile}: B's copy");
        assert_eq!(WORKGROUP_SIZE, 8 * SUBGROUP_SIZE);
    }
    // 256x128x64 would need 54,272 bytes.
    assert!(CeilingTile::new(256, 128, 64).workgroup_bytes() > 48 * 1024);
}

#[test]
fn tiles_divide_only_multiples_in_layout_ab() {
    let tile = CeilingTile::new(128, 256, 32);
    assert!(tile.divides(&Problem::new(384, 512, 96, Layout::AB)));
    assert_eq!(
        tile.grid(&Problem::new(384, 512, 96, Layout::AB)),
        [2, 3, 1]
    );
    assert!(!tile.divides(&Problem::new(384, 512, 96, Layout::ABt)));
    assert!(!tile.divides(&Problem::new(385, 512, 96, Layout::AB)));
    assert!(!tile.divides(&Problem::new(384, 512, 100, Layout::AB)));
    assert!(!tile.divides(&Problem::new(0, 512, 96, Layout::AB)));
    for tile in CEILING_TILES {
        assert!(tile.divides(&tile.check_problem()), "{tile}");
    }
}

#[test]
fn every_tile_matches_the_spec_where_the_adapter_runs_it() {
    let gpu = match ceiling::open_gpu(&GpuOptions::from_env()) {
        Ok(gpu) => gpu,
        Err(
            e @ (CeilingError::Unsupported { .. }
            | CeilingError::SubgroupSize { .. }
            | CeilingError::Device(wgsl_dsl::runtime::DeviceError::NoAdapter { .. })),
        ) => {
            println!("skipped, the adapter cannot run the ceiling kernel: {e}");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    for (seed, tile) in CEILING_TILES.into_iter().enumerate() {
        let kernel = CeilingKernel::new(&gpu, tile).unwrap_or_else(|e| panic!("{tile}: {e}"));
        let p = tile.check_problem();
        let checked = ceiling::run_and_check(&gpu, &kernel, &p, seed as u64, None)
            .unwrap_or_else(|e| panic!("{tile}: {e}"));
        assert_eq!(checked.checked, p.c_len());
    }
}
