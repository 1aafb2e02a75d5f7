//! The ceiling of issue 33: how fast the driver's cooperative matrices (`VK_KHR_cooperative_matrix`)
//! multiply `f16` matrices when the kernel is written the way NVIDIA writes it, so that the DSL's
//! tensor-core kernel ([`crate::coop`]) can be measured against what this driver allows rather
//! than against cuBLAS alone.
//!
//! The kernel is GLSL, `shaders/ceiling.comp`, written after NVIDIA's sample
//! `jeffbolznv/vk_cooperative_matrix_perf` (`shaders/shmem.comp`): 256 invocations as 4 x 2
//! subgroups of 32, a `TILE_M x TILE_N` tile of `C` per workgroup, `K` walked `TILE_K` at a
//! time through workgroup memory with 128-bit loads, rows padded by 16 bytes against bank
//! conflicts, and the next `K` slice loaded into registers while the current one is
//! multiplied; 16x16x16 multiply-adds, `f16` inputs, `f32` accumulators. It is compiled to
//! SPIR-V once per tile ([`CEILING_TILES`]; `shaders/compile.sh` regenerates the committed
//! `.spv`) and handed to the driver through wgpu's SPIR-V passthrough
//! (`Device::create_shader_module_passthrough`, device feature `PASSTHROUGH_SHADERS`): naga
//! never sees it.
//!
//! It computes `C [M, N] = A [M, K] B [K, N]`, all row-major ([`Layout::AB`] only), `A` and `B`
//! `f16`, `C` `f32`, for `M`, `N`, `K` multiples of the tile's ([`CeilingTile::divides`]); it
//! binds its buffers as the DSL kernels do (binding 0 the [`GemmDims`] uniform, 1 `A`, 2 `B`,
//! 3 `C` read-write), so that wgpu puts the same barrier between two of its dispatches as
//! between two of theirs (`C` is written by both: dispatches in one pass do not overlap).
//!
//! ```no_run
//! use wgsl_dsl::runtime::{GpuBuffer, GpuOptions};
//! use wgsl_gemm::ceiling::{self, CeilingKernel, CeilingTile};
//! use wgsl_gemm::{Layout, Problem};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // An error, not a panic, where the adapter has no cooperative matrices (lavapipe).
//! let gpu = ceiling::open_gpu(&GpuOptions::from_env())?;
//! let kernel = CeilingKernel::new(&gpu, CeilingTile::new(128, 128, 32))?;
//! let p = Problem::new(256, 384, 96, Layout::AB);
//! let a = GpuBuffer::from_slice(&gpu, &vec![half::f16::ONE; p.a_len()])?;
//! let b = GpuBuffer::from_slice(&gpu, &vec![half::f16::ONE; p.b_len()])?;
//! let c = GpuBuffer::<f32>::zeroed(&gpu, p.c_len())?;
//! let dims = GpuBuffer::from_value(&gpu, p.dims())?;
//! let bound = kernel.bind(&gpu, &p, &dims, &a, &b, &c)?;
//! kernel.run(&gpu, &bound)?;
//! assert!(c.read(&gpu)?.iter().all(|&x| x == 96.0));
//! # Ok(())
//! # }
//! ```

use std::borrow::Cow;

use half::f16;
use wgsl_dsl::runtime::{DeviceError, DispatchError, Gpu, GpuBuffer, GpuOptions, wgpu};

use crate::spec::{self, Worst};
use crate::{Layout, Problem};

mod kernel;

pub use kernel::{CeilingBinding, CeilingKernel};

/// The invocations of one workgroup of the ceiling kernel (4 x 2 subgroups of 32).
pub const WORKGROUP_SIZE: u32 = 256;

/// The subgroup size the kernel assumes (`gl_SubgroupID` picks a subgroup's part of the tile).
pub const SUBGROUP_SIZE: u32 = 32;

/// A workgroup tile of the ceiling kernel: `m x n` elements of `C`, `K` walked `k` at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CeilingTile {
    /// Rows of `C` per workgroup (`TILE_M`).
    pub m: u32,
    /// Columns of `C` per workgroup (`TILE_N`).
    pub n: u32,
    /// The `K` slice staged in workgroup memory per step (`TILE_K`).
    pub k: u32,
}

/// Every tile a module is compiled for: the sample's 128- and 256-wide tiles (it runs 128x128,
/// 128x256, 256x128 and 256x256) with `K` slices of 16, 32 and 64, less those whose workgroup
/// memory exceeds the 48 KiB NVIDIA's Vulkan driver offers (256x128x64 and 128x256x64 need
/// 53 and 51 KiB) and 256x256, which the sample leaves out for `f32` results (32 accumulator
/// fragments per subgroup: "too slow and may TDR").
pub const CEILING_TILES: [CeilingTile; 7] = [
    CeilingTile::new(128, 128, 16),
    CeilingTile::new(128, 128, 32),
    CeilingTile::new(128, 128, 64),
    CeilingTile::new(256, 128, 16),
    CeilingTile::new(256, 128, 32),
    CeilingTile::new(128, 256, 16),
    CeilingTile::new(128, 256, 32),
];

/// The SPIR-V of each of [`CEILING_TILES`], as `shaders/compile.sh` writes it.
const MODULES: [(CeilingTile, &[u8]); 7] = [
    (
        CEILING_TILES[0],
        include_bytes!("../../shaders/ceiling_128x128x16.spv"),
    ),
    (
        CEILING_TILES[1],
        include_bytes!("../../shaders/ceiling_128x128x32.spv"),
    ),
    (
        CEILING_TILES[2],
        include_bytes!("../../shaders/ceiling_128x128x64.spv"),
    ),
    (
        CEILING_TILES[3],
        include_bytes!("../../shaders/ceiling_256x128x16.spv"),
    ),
    (
        CEILING_TILES[4],
        include_bytes!("../../shaders/ceiling_256x128x32.spv"),
    ),
    (
        CEILING_TILES[5],
        include_bytes!("../../shaders/ceiling_128x256x16.spv"),
    ),
    (
        CEILING_TILES[6],
        include_bytes!("../../shaders/ceiling_128x256x32.spv"),
    ),
];

impl CeilingTile {
    /// The tile `m x n`, slices of `k`.
    pub const fn new(m: u32, n: u32, k: u32) -> CeilingTile {
        CeilingTile { m, n, k }
    }

    /// `ceiling_{m}x{n}x{k}`, the name of its module.
    pub fn name(&self) -> String {
        format!("ceiling_{}x{}x{}", self.m, self.n, self.k)
    }

    /// Bytes of workgroup memory the kernel declares: the `m x k` tile of `A` and the `k x n`
    /// tile of `B`, `f16`, each row padded by 8 elements (16 bytes).
    pub fn workgroup_bytes(&self) -> u32 {
        2 * (self.m * (self.k + 8) + self.k * (self.n + 8))
    }

    /// True when the kernel computes `problem`: layout [`Layout::AB`], and `M`, `N`, `K`
    /// non-zero multiples of the tile's `m`, `n`, `k`.
    pub fn divides(&self, problem: &Problem) -> bool {
        problem.layout == Layout::AB
            && problem.m > 0
            && problem.n > 0
            && problem.k > 0
            && problem.m.is_multiple_of(self.m)
            && problem.n.is_multiple_of(self.n)
            && problem.k.is_multiple_of(self.k)
    }

    /// Workgroups for `problem`: `[N / n, M / m, 1]`.
    pub fn grid(&self, problem: &Problem) -> [u32; 3] {
        [problem.n / self.n, problem.m / self.m, 1]
    }

    /// A problem the tile divides with odd multiples of it, for checking every element:
    /// `3 m x 5 n x 7 k` (e.g. 384 x 640 x 224 for 128x128x32).
    pub fn check_problem(&self) -> Problem {
        Problem::new(3 * self.m, 5 * self.n, 7 * self.k, Layout::AB)
    }

    /// The compiled module's bytes, `None` for a tile that has none.
    pub fn spirv(&self) -> Option<&'static [u8]> {
        MODULES
            .iter()
            .find(|(t, _)| t == self)
            .map(|&(_, bytes)| bytes)
    }
}

impl std::fmt::Display for CeilingTile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}x{}x{}", self.m, self.n, self.k)
    }
}

/// Why the ceiling kernel cannot be built, bound or run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CeilingError {
    /// Opening the device or waiting on it failed.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// A buffer could not be made or read.
    #[error(transparent)]
    Dispatch(#[from] DispatchError),
    /// The adapter lacks something the kernel needs (on Mesa lavapipe: cooperative matrices).
    #[error("adapter `{adapter}` cannot run the ceiling kernel: it lacks {missing}")]
    Unsupported {
        /// The adapter's name.
        adapter: String,
        /// What it lacks.
        missing: String,
    },
    /// The adapter's subgroups are not all of [`SUBGROUP_SIZE`] invocations.
    #[error(
        "the ceiling kernel assumes subgroups of {SUBGROUP_SIZE}; the adapter's are {min} to {max}"
    )]
    SubgroupSize {
        /// Smallest subgroup size.
        min: u32,
        /// Largest subgroup size.
        max: u32,
    },
    /// The tile has no compiled module (not one of [`CEILING_TILES`]).
    #[error("no SPIR-V module for tile {tile}; the tiles are those of CEILING_TILES")]
    NoModule {
        /// The tile.
        tile: CeilingTile,
    },
    /// The tile needs more workgroup memory than the device has.
    #[error("tile {tile} needs {needed} bytes of workgroup memory; the device has {limit}")]
    WorkgroupMemory {
        /// The tile.
        tile: CeilingTile,
        /// Bytes it declares.
        needed: u32,
        /// The device's `max_compute_workgroup_storage_size`.
        limit: u32,
    },
    /// The tile does not divide the problem, or the layout is not `A B`.
    #[error(
        "ceiling tile {tile} cannot compute {problem:?}: layout A B only, with M, N, K multiples \
         of the tile's"
    )]
    Incompatible {
        /// The tile.
        tile: CeilingTile,
        /// The problem.
        problem: Problem,
    },
    /// A buffer is shorter than the problem needs.
    #[error("buffer {name} has {len} elements; {problem:?} needs {needed}")]
    ShortBuffer {
        /// `a`, `b` or `c`.
        name: &'static str,
        /// Its length.
        len: usize,
        /// The length needed.
        needed: usize,
        /// The problem.
        problem: Problem,
    },
    /// The bytes of a module are not SPIR-V.
    #[error("not a SPIR-V module: {0}")]
    NotSpirv(String),
    /// wgpu refused a call (module, pipeline, bind group, submit, timestamp read-back).
    #[error("wgpu: {0}")]
    Wgpu(String),
    /// The kernel's result is outside the specification's bound.
    #[error("{tile} on {problem:?} is wrong: {message}")]
    Wrong {
        /// The tile.
        tile: CeilingTile,
        /// The problem.
        problem: Problem,
        /// The first element beyond the bound, its value and the specification's.
        message: String,
    },
}

/// The multiply-add shape the kernel uses.
fn shape_16x16x16_f16_f32(p: &wgpu::CooperativeMatrixProperties) -> bool {
    (p.m_size, p.n_size, p.k_size) == (16, 16, 16)
        && p.ab_type == wgpu::CooperativeScalarType::F16
        && p.cr_type == wgpu::CooperativeScalarType::F32
}

/// A device that runs the ceiling kernel: the adapter `options` select (as `gemm` selects it),
/// opened with cooperative matrices, the features [`Gpu::with_options`] asks for by default
/// and `PASSTHROUGH_SHADERS`.
///
/// # Errors
/// [`CeilingError::Unsupported`] when the adapter is not Vulkan or lacks cooperative matrices
/// with 16x16x16 `f16 -> f32` multiply-adds, `SHADER_F16` or passthrough shaders (Mesa lavapipe
/// has no cooperative matrices); [`CeilingError::SubgroupSize`]; [`CeilingError::Device`] when
/// no adapter is found or the device does not open.
pub fn open_gpu(options: &GpuOptions) -> Result<Gpu, CeilingError> {
    let options = GpuOptions {
        cooperative_matrix: true,
        ..options.clone()
    };
    // Opened once with the default features to learn them, then again with passthrough.
    let probe = Gpu::with_options(&options)?;
    let info = probe.adapter_info().clone();
    let unsupported = |missing: &str| CeilingError::Unsupported {
        adapter: info.name.clone(),
        missing: missing.to_string(),
    };
    if info.backend != wgpu::Backend::Vulkan {
        return Err(unsupported("Vulkan (the module is SPIR-V)"));
    }
    let features = probe.features();
    if !features.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX) {
        return Err(unsupported(
            "cooperative matrices (VK_KHR_cooperative_matrix, wgpu's EXPERIMENTAL_COOPERATIVE_MATRIX)",
        ));
    }
    if !probe
        .adapter()
        .cooperative_matrix_properties()
        .iter()
        .any(shape_16x16x16_f16_f32)
    {
        return Err(unsupported(
            "the 16x16x16 cooperative multiply-add of f16 inputs with f32 accumulators",
        ));
    }
    if !features.contains(wgpu::Features::SHADER_F16) {
        return Err(unsupported("SHADER_F16"));
    }
    if !probe
        .adapter()
        .features()
        .contains(wgpu::Features::PASSTHROUGH_SHADERS)
    {
        return Err(unsupported("PASSTHROUGH_SHADERS"));
    }
    let (min, max) = (info.subgroup_min_size, info.subgroup_max_size);
    if (min, max) != (SUBGROUP_SIZE, SUBGROUP_SIZE) {
        return Err(CeilingError::SubgroupSize { min, max });
    }
    drop(probe);
    Ok(Gpu::with_options(&GpuOptions {
        features: Some(features | wgpu::Features::PASSTHROUGH_SHADERS),
        ..options
    })?)
}

/// How far the ceiling kernel is from the `f64` specification.
#[derive(Clone, Copy, Debug)]
pub struct CeilingCheck {
    /// The worst element checked.
    pub worst: Worst,
    /// The bound it was held to ([`spec::coop_bound`], relative to the sum of `|products|`).
    pub bound: f64,
    /// Elements compared.
    pub checked: usize,
}

/// Run `kernel` once on random `f16` operands in `[-1, 1)` (seeded by `seed`), `C` poisoned
/// with NaN first, and compare `C` with the `f64` product of the same `f16` values
/// ([`spec::check`], bound [`spec::coop_bound`]): every element when `samples` is `None`,
/// else the four corners and `samples - 4` random elements.
///
/// # Errors
/// As [`CeilingKernel::bind`] and [`CeilingKernel::run`]; [`CeilingError::Wgpu`] with the
/// first element beyond the bound.
pub fn run_and_check(
    gpu: &Gpu,
    kernel: &CeilingKernel,
    problem: &Problem,
    seed: u64,
    samples: Option<usize>,
) -> Result<CeilingCheck, CeilingError> {
    let half = |v: Vec<f32>| -> Vec<f16> { v.into_iter().map(f16::from_f32).collect() };
    let a = half(crate::harness::random(problem.a_len(), seed));
    let b = half(crate::harness::random(
        problem.b_len(),
        seed.wrapping_add(1),
    ));
    let dims = GpuBuffer::from_value(gpu, problem.dims())?;
    let (ab, bb) = (
        GpuBuffer::from_slice(gpu, &a)?,
        GpuBuffer::from_slice(gpu, &b)?,
    );
    let c = GpuBuffer::from_slice(gpu, &vec![f32::NAN; problem.c_len()])?;
    let bound = kernel.bind(gpu, problem, &dims, &ab, &bb, &c)?;
    kernel.run(gpu, &bound)?;
    let got = c.read(gpu)?;
    let widen = |v: &[f16]| -> Vec<f64> { v.iter().map(|x| f64::from(x.to_f32())).collect() };
    let cells = samples.map(|n| crate::harness::sample_cells(problem, n, seed));
    let allowed = spec::coop_bound(problem.k);
    let worst = spec::check(
        problem,
        &widen(&a),
        &widen(&b),
        &got,
        allowed,
        cells.as_deref(),
    )
    .map_err(|message| CeilingError::Wrong {
        tile: kernel.tile(),
        problem: *problem,
        message,
    })?;
    Ok(CeilingCheck {
        worst,
        bound: allowed,
        checked: cells.map_or(problem.c_len(), |c| c.len()),
    })
}

/// The module's words, after checking that `bytes` is SPIR-V (a whole number of words
/// starting with the magic number, in either byte order).
///
/// # Errors
/// [`CeilingError::NotSpirv`] otherwise.
pub fn spirv_words(bytes: &[u8]) -> Result<Cow<'static, [u32]>, CeilingError> {
    const MAGIC: u32 = 0x0723_0203;
    if bytes.len() < 20 || !bytes.len().is_multiple_of(4) {
        return Err(CeilingError::NotSpirv(format!(
            "a SPIR-V module is a whole number of 4-byte words, at least 5; got {} bytes",
            bytes.len()
        )));
    }
    let mut words: Vec<u32> = bytemuck::pod_collect_to_vec(bytes);
    if words[0] == MAGIC.swap_bytes() {
        words.iter_mut().for_each(|w| *w = w.swap_bytes());
    }
    if words[0] != MAGIC {
        return Err(CeilingError::NotSpirv(format!(
            "the first word is {:#010x}, not the magic number {MAGIC:#010x}",
            words[0]
        )));
    }
    Ok(Cow::Owned(words))
}
