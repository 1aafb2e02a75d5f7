//! # wgsl-gemm: matrix products written with wgsl-dsl
//!
//! `C = op(A) op(B)` for `C [M, N]` row-major, with `op(A) [M, K]` and `op(B) [K, N]`, where
//! `op` is the identity or the transpose (the [`Layout`]): the products a multi-layer
//! perceptron needs are `A B` (input gradient), `A^T B` (weight gradient) and `A B^T`
//! (forward, weights stored `[out, in]`). Two kernels, each a DSL kernel with its CPU
//! specification ([`spec`]):
//!
//! - [`simt`]: `f32` on the ordinary ALUs, the tiled product of [`tiled`] over storage
//!   buffers. Each workgroup computes a `tm x tn` tile of `C`, each invocation an `rm x rn`
//!   block of it in registers (`vec4`s for the large tiles); `K` is walked a step at a time
//!   through padded workgroup tiles, the next step read into registers while the current one
//!   is multiplied. [`tiled`] is also what the MLP's kernels are built from (`mlp` depends on
//!   this crate), with one tile chooser, [`tiled::Tiles::for_product`], which
//!   [`SimtConfig::choose`] calls.
//! - [`coop`]: tensor cores through cooperative matrices ([`wgsl_dsl::types::CoopMat`]):
//!   `f16` inputs (or `f32` inputs rounded to `f16` as they are staged), `f32` accumulators,
//!   16x16x16 multiply-adds; each subgroup computes a `warp_m x warp_n` tile from workgroup
//!   memory, staged as in the SIMT kernel. Configuration by [`CoopConfig::choose`].
//!
//! Both handle any `M`, `N`, `K` (elements outside the matrices are read as zero and not
//! written) and every [`Layout`]. Both are checked against [`spec`] on the CPU interpreter
//! (`wgsl_dsl::interp`, which also runs the cooperative matrices lavapipe lacks: relative error
//! within `gamma_K(2^-22)` for `f16` inputs, see [`spec::coop_bound`]) in
//! `tests/interp.rs`, and on the GPU by `gemm check`. Sizes are run-time data (a [`GemmDims`] uniform); the tile
//! configuration is part of the kernel and of its name (`simt_abt_t128x128x32r8x8v`).
//!
//! [`memory`] has the memory-bound kernels of the roofline benchmark (`gemm roofline`: copy,
//! `y = a x + y`, GELU, row sum, row softmax, row layer norm, transpose), each with its `f64`
//! specification, checked in `tests/memory.rs`.
//!
//! [`ceiling`] is the yardstick of the tensor-core kernel (`gemm ceiling`): NVIDIA's
//! cooperative-matrix GEMM technique as a GLSL kernel compiled to SPIR-V, run through wgpu's
//! SPIR-V passthrough on the same driver and timed the same way.
//!
//! ```
//! use wgsl_gemm::{Layout, Problem, SimtConfig};
//! use wgsl_dsl::TargetLimits;
//!
//! let problem = Problem::new(4096, 4096, 4096, Layout::AB);
//! let config = SimtConfig::choose(&problem, &TargetLimits::default());
//! let shader = wgsl_gemm::simt::build(&config).build()?;
//! assert!(shader.wgsl.contains("workgroupBarrier()"));
//! # Ok::<(), wgsl_dsl::BuildError>(())
//! ```

pub mod ceiling;
pub mod config;
pub mod coop;
pub mod harness;
pub mod memory;
mod problem;
pub mod run;
pub mod simt;
pub mod spec;
mod stage;
pub mod tiled;

pub use config::{CoopConfig, CoopInput, SimtConfig, TileConfig, h200_limits};
pub use problem::{GemmDims, GemmDimsFields, Layout, Problem};
pub use run::{Gemm, GemmError};

/// The kernels whose WGSL the workspace's snapshot test pins, with the target each is built
/// for: for every layout, the configurations an H200 runs 4096^3 with (SIMT without bounds
/// checks ([`SimtConfig::whole_tiles`]) and the same tiles with them, and tensor cores
/// on `f16` buffers, without bounds checks since [`CoopConfig::whole_tiles`], and the same
/// tile with them), the tensor-core kernel loading fragments directly at 4096^3, the
/// tensor-core kernel on `f32` buffers for the MLP's forward over a whole epoch, the
/// tensor-core configurations through two buffers that those were before one buffer
/// ([`CoopConfig::single`]) was preferred (128x256x16 for every layout, 128x128x32 of eight
/// 64x32 subgroups for the forward), the tensor-core kernel at 4096^3 reading sixteen bytes
/// a load both ways ([`CoopConfig::wide`]) and, as `u32`s, without bounds checks, and both
/// kernels with scalar accesses for odd sizes; and the memory-bound kernels of [`memory`]
/// (`gemm roofline`) in every configuration.
pub fn snapshot_kernels() -> Vec<(wgsl_dsl::KernelBuilder, wgsl_dsl::TargetLimits)> {
    let target = h200_limits();
    let mut v = Vec::new();
    for layout in Layout::ALL {
        let p = Problem::new(4096, 4096, 4096, layout);
        // What `choose` picks (without bounds checks), and the same tiles with them.
        let simt_config = SimtConfig::choose(&p, &target);
        v.push((simt::build(&simt_config), target));
        v.push((
            simt::build(&SimtConfig::with_tiles(&p, simt_config.tiles)),
            target,
        ));
        v.push((
            coop::build(&CoopConfig::choose(&p, CoopInput::F16, &target, 32)),
            target,
        ));
        // The same tile with bounds checks (what `choose` picks where it does not divide the
        // problem, and picked at 4096^3 before `whole_tiles`).
        let checked = CoopConfig::single_with_tile(&p, CoopInput::F16, config::SINGLE_TILES[0], 32);
        v.push((coop::build(&checked), target));
        let two = CoopConfig::with_tile(&p, CoopInput::F16, config::COOP_TILES[0], 32);
        v.push((coop::build(&two), target));
    }
    let square = Problem::new(4096, 4096, 4096, Layout::AB);
    if let Some(direct) = CoopConfig::choose_direct(&square, &target, 32) {
        v.push((coop::build(&direct), target));
    }
    // What `choose` picks at 4096^3 (without bounds checks), with them.
    let chosen = CoopConfig::single_with_tile(&square, CoopInput::F16, config::SINGLE_TILES[0], 32);
    for wide in [config::WideLoad::Pairs, config::WideLoad::Words] {
        v.push((coop::build(&chosen.with_wide(wide)), target));
    }
    let words = chosen.with_wide(config::WideLoad::Words);
    v.push((coop::build(&words.with_whole_tiles()), target));
    let forward = Problem::new(60000, 128, 784, Layout::ABt);
    v.push((
        coop::build(&CoopConfig::choose(&forward, CoopInput::F32, &target, 32)),
        target,
    ));
    let two = CoopConfig::with_tile(&forward, CoopInput::F32, config::COOP_TILES[1], 32);
    v.push((coop::build(&two), target));
    let odd = Problem::new(37, 45, 61, Layout::ABt);
    v.push((simt::build(&SimtConfig::choose(&odd, &target)), target));
    v.push((
        coop::build(&CoopConfig::choose(&odd, CoopInput::F16, &target, 32)),
        target,
    ));
    for kind in memory::MemKernel::ALL {
        for config in memory::MemConfig::candidates(kind, 8192, 4096) {
            v.push((kind.build_for(config), wgsl_dsl::TargetLimits::default()));
        }
    }
    v
}
