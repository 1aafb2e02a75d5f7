//! Tile configurations, chosen per problem shape and target (ARCHITECTURE.md decision *Shape-aware kernels*: pure
//! functions, unit-tested; the configuration is part of the kernel's name, so each has its own
//! snapshot and pipeline).

use wgsl_dsl::TargetLimits;

use crate::tiled::{Target, Tiles};
use crate::{Layout, Problem};

/// Workgroups a product should have to fill a large GPU (an H200 has 132 multiprocessors, each
/// running one or two of the large tiles at a time). Smaller tiles are chosen until a problem
/// has this many, down to the smallest.
pub const PARALLEL_TARGET: u64 = 128;

/// Tiles of `C` are walked in groups of this many tile rows, column by column, so that
/// workgroups running together share the rows of `A` and columns of `B` they read (in the L2
/// cache).
pub const GROUP_M: u32 = 8;

/// Extra `f16` elements at the end of each row of a workgroup tile of the cooperative kernel:
/// rows then start 16 bytes apart modulo 128 and a fragment's rows fall in different banks.
pub const COOP_PAD: u32 = 8;

/// The limits wgpu 30 reports for an NVIDIA H200 through Vulkan (1024 invocations per
/// workgroup, 48 KiB of workgroup memory) with every capability: the target the snapshots and
/// build tests use for the configurations that GPU runs.
pub fn h200_limits() -> TargetLimits {
    TargetLimits {
        max_invocations_per_workgroup: 1024,
        max_workgroup_size: [1024, 1024, 64],
        max_workgroup_storage_size: 49152,
        ..TargetLimits::default()
    }
}

/// The tiles of a configuration: `C` in tiles of `block_m x block_n`, one per workgroup, and
/// `K` walked `block_k` at a time, with `A` and `B` stored as `layout` says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Blocks {
    /// How `A` and `B` are stored.
    pub layout: Layout,
    /// Rows of `C` per tile.
    pub block_m: u32,
    /// Columns of `C` per tile.
    pub block_n: u32,
    /// Depth of `K` per step.
    pub block_k: u32,
}

impl Blocks {
    /// `<layout>_<block_m>x<block_n>x<block_k>`, the part of both kernels' names that names
    /// the tiles.
    pub(crate) fn name(&self) -> String {
        format!(
            "{}_{}x{}x{}",
            self.layout.name(),
            self.block_m,
            self.block_n,
            self.block_k
        )
    }
}

/// What the configurations of both kernels ([`SimtConfig`], [`CoopConfig`]) answer alike:
/// their grid and whether they fit a target, from their tiles, workgroup size and workgroup
/// memory.
pub trait TileConfig {
    /// The tiles.
    fn blocks(&self) -> Blocks;

    /// Invocations per workgroup.
    fn threads(&self) -> u32;

    /// Bytes of workgroup memory.
    fn workgroup_bytes(&self) -> u32;

    /// Why the configuration cannot be built, if it cannot.
    ///
    /// # Errors
    /// A message naming the configuration.
    fn valid(&self) -> Result<(), String>;

    /// Workgroups of `problem`: its tiles of `C`.
    fn workgroups(&self, problem: &Problem) -> u64 {
        let b = self.blocks();
        u64::from(problem.m.div_ceil(b.block_m)) * u64::from(problem.n.div_ceil(b.block_n))
    }

    /// The dispatch grid for `problem`: `[ceil(N / block_n), ceil(M / block_m), 1]`.
    fn grid(&self, problem: &Problem) -> [u32; 3] {
        let b = self.blocks();
        [
            problem.n.div_ceil(b.block_n),
            problem.m.div_ceil(b.block_m),
            1,
        ]
    }

    /// True when the configuration is valid and its workgroup fits `target`.
    fn fits(&self, target: &TargetLimits) -> bool {
        let threads = self.threads();
        self.valid().is_ok()
            && threads <= target.max_invocations_per_workgroup
            && threads <= target.max_workgroup_size[0]
            && self.workgroup_bytes() <= target.max_workgroup_storage_size
    }
}

/// Which of `A`, `B` and `C` `problem` lets a kernel access four elements at a time: those
/// whose stored rows are multiples of 4 long.
fn vectors(problem: &Problem) -> [bool; 3] {
    [
        problem.a_row_len().is_multiple_of(4),
        problem.b_row_len().is_multiple_of(4),
        problem.n.is_multiple_of(4),
    ]
}

/// True when `problem` has `layout` and allows the `vec4` accesses `[a, b, c]`.
fn accepts(layout: Layout, [a, b, c]: [bool; 3], problem: &Problem) -> bool {
    let [va, vb, vc] = vectors(problem);
    layout == problem.layout && (!a || va) && (!b || vb) && (!c || vc)
}

/// A configuration of the SIMT `f32` kernel ([`crate::simt`]): the layout and the tiles of the
/// tiled product ([`Tiles`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SimtConfig {
    /// Which operands are stored transposed.
    pub layout: Layout,
    /// The tiles of [`crate::tiled`].
    pub tiles: Tiles,
    /// `A` is read as `vec4<f32>`, four elements at a time (its stored rows are a multiple of
    /// 4 long).
    pub vector_a: bool,
    /// `B` is read as `vec4<f32>`.
    pub vector_b: bool,
    /// No bounds checks ([`Source::whole`](crate::tiled::Source::whole)): only for problems
    /// the tiles divide ([`SimtConfig::divides`]). [`SimtConfig::choose`] picks it where they
    /// do.
    pub whole_tiles: bool,
}

/// The tiles `gemm sweep` measures the SIMT kernel with at large sizes: the large ones
/// [`Tiles::for_product`] chooses from ([`tiled::LARGE_TILES`](crate::tiled::LARGE_TILES)), and
/// neighbours of them.
pub fn simt_sweep_tiles() -> Vec<Tiles> {
    let mut v = crate::tiled::LARGE_TILES.to_vec();
    v.extend([
        Tiles::new([128, 128, 32], [8, 8], 1).in_vec4s(),
        Tiles::new([64, 64, 32], [4, 4], 1).in_vec4s(),
        Tiles::new([256, 128, 8], [8, 8], 1).in_vec4s(),
        // Twice the outputs per invocation (128 accumulators), 256 invocations.
        Tiles::new([256, 128, 16], [16, 8], 1).in_vec4s(),
        Tiles::new([128, 256, 8], [8, 16], 1).in_vec4s(),
    ]);
    v
}

impl SimtConfig {
    /// The configuration for `problem` on `target`: the tiles [`Tiles::for_product`] chooses
    /// for `M x N x K` on a GPU with `target`'s limits ([`Target::from_limits`]), the one tile
    /// chooser of every product of the workspace; without bounds checks
    /// ([`SimtConfig::whole_tiles`]) where the tiles divide the problem (at 4096^3 on the
    /// H200, 38.5 TFLOP/s against 35.2 with them, two rounds of one call, BENCHMARKS.md
    /// "The SIMT kernel without bounds checks").
    pub fn choose(problem: &Problem, target: &TargetLimits) -> SimtConfig {
        let tiles = Tiles::for_product(
            problem.m as usize,
            problem.n as usize,
            problem.k as usize,
            Target::from_limits(target),
        );
        let checked = SimtConfig::with_tiles(problem, tiles);
        let whole = checked.with_whole_tiles();
        if whole.accepts(problem) {
            whole
        } else {
            checked
        }
    }

    /// `problem`'s layout with `tiles`, `A` and `B` read four elements at a time where their
    /// stored rows are multiples of 4 long, with bounds checks.
    pub fn with_tiles(problem: &Problem, tiles: Tiles) -> SimtConfig {
        let [vector_a, vector_b, _] = vectors(problem);
        SimtConfig {
            layout: problem.layout,
            tiles,
            vector_a,
            vector_b,
            whole_tiles: false,
        }
    }

    /// This configuration without bounds checks ([`SimtConfig::whole_tiles`]), for problems
    /// it [divides](SimtConfig::divides).
    pub fn with_whole_tiles(self) -> SimtConfig {
        SimtConfig {
            whole_tiles: true,
            ..self
        }
    }

    /// True when the tiles divide `problem`: `M` a multiple of `tm`, `N` of `tn` and `K` of
    /// a step's depth ([`Tiles::depth`]).
    pub fn divides(&self, problem: &Problem) -> bool {
        problem.m.is_multiple_of(self.tiles.tm)
            && problem.n.is_multiple_of(self.tiles.tn)
            && problem.k.is_multiple_of(self.tiles.depth())
    }

    /// True when `problem` can run with this kernel: same layout, the `vec4` reads the
    /// kernel makes fit the sizes, and the tiles divide it if [`SimtConfig::whole_tiles`].
    pub fn accepts(&self, problem: &Problem) -> bool {
        (!self.whole_tiles || self.divides(problem))
            && accepts(self.layout, [self.vector_a, self.vector_b, false], problem)
    }

    /// The kernel's name: `simt_<layout>_<tiles>_<ab>`, with the tiles as [`Tiles::suffix`]
    /// names them and each of `a`, `b` `v` (`vec4` reads) or `s` (scalar), then `_whole` for
    /// [`SimtConfig::whole_tiles`]: `simt_ab_t128x128x16r8x8v_vv_whole` (what `choose` picks
    /// at 4096^3), `simt_ab_t128x128x16r8x8v_vv` with bounds checks.
    pub fn kernel_name(&self) -> String {
        let letters = vector_letters(self.vector_a, self.vector_b, false);
        format!(
            "simt_{}_{}_{}{}",
            self.layout.name(),
            self.tiles.suffix(),
            &letters[..2],
            if self.whole_tiles { "_whole" } else { "" }
        )
    }
}

impl TileConfig for SimtConfig {
    /// `block_m x block_n` the tiles' `tm x tn`, `block_k` a step's depth (`kg * tk`).
    fn blocks(&self) -> Blocks {
        Blocks {
            layout: self.layout,
            block_m: self.tiles.tm,
            block_n: self.tiles.tn,
            block_k: self.tiles.depth(),
        }
    }

    /// Invocations per workgroup: [`Tiles::invocations`].
    fn threads(&self) -> u32 {
        self.tiles.invocations()
    }

    /// Bytes of workgroup memory: the array [`TileMemory`](crate::tiled::TileMemory) declares.
    fn workgroup_bytes(&self) -> u32 {
        let floats = self.tiles.memory_floats().unwrap_or(usize::MAX / 4);
        (floats * 4).try_into().unwrap_or(u32::MAX)
    }

    /// Why the tiles cannot be built, if they cannot ([`Tiles::is_valid`]).
    fn valid(&self) -> Result<(), String> {
        if self.tiles.is_valid() {
            Ok(())
        } else {
            Err(format!("invalid SIMT tiles {:?}", self.tiles))
        }
    }

    /// True when the tiles are valid and fit `target`: invocations, workgroup size per
    /// dimension and workgroup memory.
    fn fits(&self, target: &TargetLimits) -> bool {
        let [x, y, z] = self.tiles.workgroup();
        let max = target.max_workgroup_size;
        self.valid().is_ok()
            && self.threads() <= target.max_invocations_per_workgroup
            && x <= max[0]
            && y <= max[1]
            && z <= max[2]
            && self.workgroup_bytes() <= target.max_workgroup_storage_size
    }
}

/// What the cooperative kernel reads: `f16` buffers, or `f32` buffers rounded to `f16` as they
/// are staged (the tensor cores multiply `f16` either way).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CoopInput {
    /// `A` and `B` are `f16` buffers.
    F16,
    /// `A` and `B` are `f32` buffers, rounded to the nearest `f16` when staged.
    F32,
}

impl CoopInput {
    /// `f16` or `f32`.
    pub fn name(self) -> &'static str {
        match self {
            CoopInput::F16 => "f16",
            CoopInput::F32 => "f32",
        }
    }
}

/// A configuration of the cooperative-matrix kernel ([`crate::coop`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CoopConfig {
    /// Which operands are stored transposed.
    pub layout: Layout,
    /// Element type of the `A` and `B` buffers.
    pub input: CoopInput,
    /// Rows of `C` per workgroup.
    pub block_m: u32,
    /// Columns of `C` per workgroup.
    pub block_n: u32,
    /// Depth of `K` staged per step (a multiple of 16).
    pub block_k: u32,
    /// Rows of `C` per subgroup (a multiple of 16).
    pub warp_m: u32,
    /// Columns of `C` per subgroup (a multiple of 16).
    pub warp_n: u32,
    /// Invocations per subgroup the kernel assumes (the adapter's only subgroup size).
    pub subgroup_size: u32,
    /// `A` is read four elements at a time (its stored rows are a multiple of 4 long).
    pub vector_a: bool,
    /// `B` is read four elements at a time.
    pub vector_b: bool,
    /// Whole tiles of `C` are stored straight from the matrices (`N` is a multiple of 4, so
    /// rows start 16-byte aligned); otherwise every fragment goes through workgroup memory.
    pub vector_c: bool,
    /// Fragments are loaded straight from the `f16` storage buffers, without workgroup
    /// memory or barriers (the L1 cache shares them between subgroups): only for `f16` inputs
    /// and problems whose `M`, `N`, `K` are multiples of the tile.
    pub direct: bool,
    /// One buffer of workgroup memory per operand instead of two: the next step's tiles wait
    /// in registers while the current ones are multiplied and are stored between two
    /// barriers (NVIDIA's `vk_cooperative_matrix_perf` technique), so a step can be twice as
    /// deep in the same workgroup memory. Not with [`CoopConfig::direct`].
    pub single: bool,
    /// `A` and `B` are read sixteen bytes (eight `f16`) at a time, by one load each, instead
    /// of eight (`vec4<f16>`); `None`: as [`CoopConfig::vector_a`] and
    /// [`CoopConfig::vector_b`] say. Needs `f16` inputs, both operands' stored rows multiples
    /// of 8 long, and not [`CoopConfig::direct`].
    pub wide: Option<WideLoad>,
    /// Only for problems the tile divides ([`CoopConfig::divides`]): the staging checks no
    /// chunk against `M`, `N`, `K` (no compare and `select` per chunk) and every tile of `C`
    /// is stored straight from the accumulators. Not with [`CoopConfig::direct`] (which
    /// checks nothing already).
    pub whole_tiles: bool,
}

/// How the cooperative kernel reads sixteen bytes (eight `f16`) of `A` or `B` with one load
/// ([`CoopConfig::wide`]); WGSL has no eight-component vector, and naga's `bitcast` keeps the
/// component width, so it cannot turn a `vec2<u32>` into a `vec4<f16>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WideLoad {
    /// The buffer binds as `array<array<vec4<f16>, 2>>` (the `f16` buffer through
    /// `GpuBuffer::view`): one load of a 16-byte array value, its two halves taken apart.
    /// No conversion; whether the driver emits one 16-byte load is its choice (the elements are
    /// only 8-byte aligned in WGSL).
    Pairs,
    /// The buffer binds as `array<vec4<u32>>` (NVIDIA's `shmem.comp` loads `uvec4`s): one
    /// 16-byte-aligned load, each word unpacked by `unpack2x16float` to two `f32` and the
    /// four halves of each `vec4<f32>` converted back to `f16` (exact: every `f16` is an `f32`).
    Words,
}

impl WideLoad {
    /// The letter standing for an operand read this way in a kernel name (`v` is `vec4`).
    fn letter(self) -> char {
        match self {
            WideLoad::Pairs => 'p',
            WideLoad::Words => 'u',
        }
    }
}

/// `(block_m, block_n, block_k, warp_m, warp_n)` of the cooperative kernel, largest first.
/// (At 4096^3 on the H200, `gemm sweep` of 2026-12-01, benches/notes/round3/call1: 128x256
/// tiles of eight 64x64 subgroup tiles, 16 deep, ran at 142 TFLOP/s, 256x128 at 134; 128x128
/// tiles at 123 with eight 64x32 subgroup tiles, 94 with four 64x64, 72 with eight 64x32 16
/// deep. Eight 64x64 subgroups 32 deep would need 54 KiB of workgroup memory, past the 48.)
pub const COOP_TILES: [(u32, u32, u32, u32, u32); 6] = [
    (128, 256, 16, 64, 64),
    (128, 128, 32, 64, 32),
    (128, 64, 32, 64, 32),
    (64, 64, 32, 32, 32),
    (32, 32, 32, 16, 16),
    (16, 16, 32, 16, 16),
];

/// `(block_m, block_n, block_k, warp_m, warp_n)` of the cooperative kernel staged through one
/// buffer per operand ([`CoopConfig::single`]), 32 or 64 deep where two buffers would not fit
/// 48 KiB (128x256x32: 26.5 KiB of tiles and 8 KiB of edge staging), the fastest at 4096^3 on
/// the H200 first (`gemm sweep` of 2026-12-04, benches/notes/issue33_dsl_coop/call1.txt:
/// 172.3, 165.9, 160.8 and 159.4 TFLOP/s, where the best tile through two buffers,
/// 128x256x16, ran at 141.7).
pub const SINGLE_TILES: [(u32, u32, u32, u32, u32); 4] = [
    (128, 128, 32, 64, 64),
    (128, 256, 32, 64, 64),
    (256, 128, 32, 64, 64),
    (128, 128, 64, 64, 32),
];

/// `(block_m, block_n, block_k, warp_m, warp_n)` of the cooperative kernel loading straight
/// from the buffers ([`CoopConfig::direct`]), largest first.
pub const DIRECT_TILES: [(u32, u32, u32, u32, u32); 4] = [
    (128, 128, 32, 64, 64),
    (128, 128, 16, 64, 64),
    (64, 64, 32, 32, 32),
    (64, 64, 16, 32, 32),
];

impl CoopConfig {
    /// The configuration for `problem` on `target` with subgroups of `subgroup_size`: the
    /// first of [`CoopConfig::candidates`] that fits and gives at least [`PARALLEL_TARGET`]
    /// workgroups, else the fitting one with the most workgroups. (Staged through workgroup
    /// memory: on the H200 the direct loads of [`CoopConfig::choose_direct`] measured slower,
    /// 76 against 94-122 TFLOP/s at 4096^3, see BENCHMARKS.md.) A one-buffer configuration of
    /// `f16` inputs whose tile divides the problem goes without bounds checks
    /// ([`CoopConfig::whole_tiles`]: at 4096^3 on the H200, 269 TFLOP/s against 173 with them,
    /// BENCHMARKS.md "Sixteen-byte loads and no bounds checks").
    pub fn choose(
        problem: &Problem,
        input: CoopInput,
        target: &TargetLimits,
        subgroup_size: u32,
    ) -> CoopConfig {
        let c = choose_config(
            &CoopConfig::candidates(problem, input, subgroup_size),
            problem,
            target,
        );
        let whole = c.with_whole_tiles();
        if c.single && input == CoopInput::F16 && whole.valid().is_ok() && whole.accepts(problem) {
            whole
        } else {
            c
        }
    }

    /// What [`CoopConfig::choose`] picks from, in order of preference: the first tile of
    /// [`SINGLE_TILES`] through one buffer per operand ([`CoopConfig::single`]), then the tiles
    /// of [`COOP_TILES`] through two.
    pub fn candidates(problem: &Problem, input: CoopInput, subgroup_size: u32) -> Vec<CoopConfig> {
        let mut v = vec![CoopConfig::single_with_tile(
            problem,
            input,
            SINGLE_TILES[0],
            subgroup_size,
        )];
        v.extend(
            COOP_TILES
                .iter()
                .map(|&tile| CoopConfig::with_tile(problem, input, tile, subgroup_size)),
        );
        v
    }

    /// The largest tile of [`DIRECT_TILES`] that divides `problem` and gives at least
    /// [`PARALLEL_TARGET`] workgroups, loading fragments straight from the `f16` buffers
    /// ([`CoopConfig::direct`]); `None` when no tile does.
    pub fn choose_direct(
        problem: &Problem,
        target: &TargetLimits,
        subgroup_size: u32,
    ) -> Option<CoopConfig> {
        DIRECT_TILES
            .iter()
            .map(|&tile| CoopConfig::direct_with_tile(problem, tile, subgroup_size))
            .filter(|c| c.fits(target) && c.divides(problem))
            .find(|c| c.workgroups(problem) >= PARALLEL_TARGET)
    }

    /// `problem`'s layout and vector widths with the tile `(block_m, block_n, block_k,
    /// warp_m, warp_n)`.
    pub fn with_tile(
        problem: &Problem,
        input: CoopInput,
        tile: (u32, u32, u32, u32, u32),
        subgroup_size: u32,
    ) -> CoopConfig {
        let (block_m, block_n, block_k, warp_m, warp_n) = tile;
        let [vector_a, vector_b, vector_c] = vectors(problem);
        CoopConfig {
            layout: problem.layout,
            input,
            block_m,
            block_n,
            block_k,
            warp_m,
            warp_n,
            subgroup_size,
            vector_a,
            vector_b,
            vector_c,
            direct: false,
            single: false,
            wide: None,
            whole_tiles: false,
        }
    }

    /// This configuration without bounds checks ([`CoopConfig::whole_tiles`]), for problems
    /// the tile divides (checked by [`CoopConfig::accepts`]).
    pub fn with_whole_tiles(self) -> CoopConfig {
        CoopConfig {
            whole_tiles: true,
            ..self
        }
    }

    /// This configuration reading `A` and `B` sixteen bytes at a time as `wide` says
    /// ([`CoopConfig::wide`]); check it with [`CoopConfig::accepts`] against the problem.
    pub fn with_wide(self, wide: WideLoad) -> CoopConfig {
        CoopConfig {
            wide: Some(wide),
            ..self
        }
    }

    /// [`CoopConfig::with_tile`] staged through one buffer per operand
    /// ([`CoopConfig::single`]).
    pub fn single_with_tile(
        problem: &Problem,
        input: CoopInput,
        tile: (u32, u32, u32, u32, u32),
        subgroup_size: u32,
    ) -> CoopConfig {
        CoopConfig {
            single: true,
            ..CoopConfig::with_tile(problem, input, tile, subgroup_size)
        }
    }

    /// Buffers of workgroup memory per operand: 1 ([`CoopConfig::single`]) or 2 (0 for
    /// [`CoopConfig::direct`], which stages nothing).
    pub fn buffers(&self) -> u32 {
        if self.direct {
            0
        } else if self.single {
            1
        } else {
            2
        }
    }

    /// [`CoopConfig::with_tile`] loading fragments straight from the buffers
    /// ([`CoopConfig::direct`]).
    pub fn direct_with_tile(
        problem: &Problem,
        tile: (u32, u32, u32, u32, u32),
        subgroup_size: u32,
    ) -> CoopConfig {
        CoopConfig {
            direct: true,
            vector_a: false,
            vector_b: false,
            vector_c: true,
            ..CoopConfig::with_tile(problem, CoopInput::F16, tile, subgroup_size)
        }
    }

    /// Subgroups per workgroup.
    pub fn warps(&self) -> u32 {
        (self.block_m / self.warp_m) * (self.block_n / self.warp_n)
    }

    /// Rows and row length (in `f16`, padding included) of the staged `A` tile: `block_m` rows
    /// of `block_k`, or `block_k` rows of `block_m` when `A` is stored transposed.
    pub fn a_tile_shape(&self) -> (u32, u32) {
        if self.layout.a_transposed() {
            (self.block_k, self.block_m + COOP_PAD)
        } else {
            (self.block_m, self.block_k + COOP_PAD)
        }
    }

    /// Rows and row length (in `f16`, padding included) of the staged `B` tile.
    pub fn b_tile_shape(&self) -> (u32, u32) {
        if self.layout.b_transposed() {
            (self.block_n, self.block_k + COOP_PAD)
        } else {
            (self.block_k, self.block_n + COOP_PAD)
        }
    }

    /// True when `problem` can run with this kernel.
    pub fn accepts(&self, problem: &Problem) -> bool {
        if self.direct {
            return self.layout == problem.layout && self.divides(problem);
        }
        if self.wide.is_some()
            && !(problem.a_row_len().is_multiple_of(8) && problem.b_row_len().is_multiple_of(8))
        {
            return false;
        }
        if self.whole_tiles && !self.divides(problem) {
            return false;
        }
        accepts(
            self.layout,
            [self.vector_a, self.vector_b, self.vector_c],
            problem,
        )
    }

    /// True when the tile divides `problem` (`M`, `N`, `K` multiples of the block), as
    /// [`CoopConfig::direct`] needs.
    pub fn divides(&self, problem: &Problem) -> bool {
        problem.m.is_multiple_of(self.block_m)
            && problem.n.is_multiple_of(self.block_n)
            && problem.k.is_multiple_of(self.block_k)
    }

    /// The kernel's name:
    /// `coop_<input>_<layout>_<bm>x<bn>x<bk>_w<wm>x<wn>_s<subgroup>_<abc>` (each of `a`, `b`,
    /// `c`: `s` scalar, `v` `vec4`, `p` or `u` sixteen bytes, [`WideLoad`]), then `_single`
    /// for [`CoopConfig::single`], then `_whole` for [`CoopConfig::whole_tiles`]; or
    /// `..._direct` for [`CoopConfig::direct`].
    pub fn kernel_name(&self) -> String {
        let (input, accesses) = if self.direct {
            ("f16", "direct".to_string())
        } else {
            let mut letters = vector_letters(self.vector_a, self.vector_b, self.vector_c);
            if let Some(wide) = self.wide {
                letters.replace_range(0..2, &String::from_iter([wide.letter(); 2]));
            }
            (self.input.name(), letters)
        };
        format!(
            "coop_{input}_{}_w{}x{}_s{}_{accesses}{}{}",
            self.blocks().name(),
            self.warp_m,
            self.warp_n,
            self.subgroup_size,
            if self.single && !self.direct {
                "_single"
            } else {
                ""
            },
            if self.whole_tiles && !self.direct {
                "_whole"
            } else {
                ""
            },
        )
    }
}

impl TileConfig for CoopConfig {
    fn blocks(&self) -> Blocks {
        Blocks {
            layout: self.layout,
            block_m: self.block_m,
            block_n: self.block_n,
            block_k: self.block_k,
        }
    }

    /// Invocations per workgroup.
    fn threads(&self) -> u32 {
        self.warps() * self.subgroup_size
    }

    /// Bytes of workgroup memory: [`CoopConfig::buffers`] buffers of `A` and `B` tiles of
    /// `f16`, and a 16x16 `f32` fragment per subgroup for stores at the edges.
    fn workgroup_bytes(&self) -> u32 {
        if self.direct {
            return 0;
        }
        let (ar, al) = self.a_tile_shape();
        let (br, bl) = self.b_tile_shape();
        self.buffers() * (ar * al + br * bl) * 2 + self.warps() * 256 * 4
    }

    /// Why the tile cannot be built, if it cannot.
    fn valid(&self) -> Result<(), String> {
        let ok = self.warp_m.is_multiple_of(16)
            && self.warp_n.is_multiple_of(16)
            && self.warp_m > 0
            && self.warp_n > 0
            && self.block_m.is_multiple_of(self.warp_m)
            && self.block_n.is_multiple_of(self.warp_n)
            && self.block_k.is_multiple_of(16)
            && self.block_k > 0
            && self.subgroup_size.is_power_of_two()
            && self.subgroup_size <= 256
            && (!self.direct || (self.input == CoopInput::F16 && !self.single))
            && (self.wide.is_none()
                || (self.input == CoopInput::F16
                    && !self.direct
                    && self.vector_a
                    && self.vector_b))
            && !(self.whole_tiles && (self.direct || !self.vector_c));
        if ok {
            Ok(())
        } else {
            Err(format!("invalid cooperative tile {self:?}"))
        }
    }
}

fn vector_letters(a: bool, b: bool, c: bool) -> String {
    [a, b, c]
        .iter()
        .map(|&v| if v { 'v' } else { 's' })
        .collect()
}

/// The first of `configs` (largest tiles first) that fits `target`, is no wider or taller
/// than `problem` (a 256-wide tile on 128 columns would compute as much outside `C` as inside)
/// and gives `problem` at least [`PARALLEL_TARGET`] workgroups; else the fitting one with the
/// most workgroups (the larger tile on ties); else the last (smallest). `configs` is not empty.
fn choose_config<C: TileConfig + Copy>(
    configs: &[C],
    problem: &Problem,
    target: &TargetLimits,
) -> C {
    let fitting: Vec<C> = configs.iter().copied().filter(|c| c.fits(target)).collect();
    let workgroups_and_area = |c: &&C| {
        let b = c.blocks();
        (c.workgroups(problem), b.block_m * b.block_n)
    };
    let within = |c: &&C| {
        let b = c.blocks();
        b.block_m <= problem.m.max(16) && b.block_n <= problem.n.max(16)
    };
    fitting
        .iter()
        .filter(within)
        .find(|c| c.workgroups(problem) >= PARALLEL_TARGET)
        .or_else(|| fitting.iter().max_by_key(workgroups_and_area))
        .copied()
        .unwrap_or_else(|| configs[configs.len() - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h200() -> TargetLimits {
        h200_limits()
    }

    #[test]
    fn large_square_products_take_the_large_tiles() {
        let p = Problem::new(4096, 4096, 4096, Layout::AB);
        let c = SimtConfig::choose(&p, &h200());
        assert_eq!(c.tiles, crate::tiled::LARGE_TILES[0]);
        assert_eq!(c.threads(), 256);
        // The tiles divide 4096^3: no bounds checks; 4000^3 keeps them.
        assert!(c.whole_tiles);
        assert_eq!(c.kernel_name(), "simt_ab_t128x128x16r8x8v_vv_whole");
        let odd = SimtConfig::choose(&Problem::new(4000, 4000, 4000, Layout::AB), &h200());
        assert_eq!(odd.kernel_name(), "simt_ab_t128x128x16r8x8v_vv");
        assert_eq!(odd.with_whole_tiles(), c);
        assert!(c.vector_a && c.vector_b);
        assert_eq!(c.grid(&p), [32, 32, 1]);
        assert!(c.fits(&h200()));
    }

    #[test]
    fn smaller_products_take_the_mlps_tiles() {
        // 1024^2: 64 tiles of 128x128 are too few, 128 of 128 x 64 enough; 512^2 has 64 of
        // 64 x 64: the 32 x 32 tiles of four groups.
        let p = Problem::new(1024, 1024, 1024, Layout::AB);
        let c = SimtConfig::choose(&p, &h200());
        assert_eq!(c.tiles, crate::tiled::LARGE_TILES[2]);
        let p = Problem::new(1024, 784, 128, Layout::AB);
        let c = SimtConfig::choose(&p, &h200());
        assert_eq!(c.tiles, crate::tiled::LARGE_TILES[3]);
        let p = Problem::new(512, 512, 512, Layout::AB);
        let c = SimtConfig::choose(&p, &h200());
        assert_eq!((c.tiles.tm, c.tiles.tn, c.tiles.kg), (32, 32, 4));
        // The MLP's forward at batch 128 (128 x 128 outputs): 16 x 16 tiles, 64 workgroups,
        // as the MLP's own kernels choose.
        let p = Problem::new(128, 128, 784, Layout::ABt);
        let c = SimtConfig::choose(&p, &h200());
        assert_eq!(c.tiles, crate::tiled::SMALL);
        assert_eq!(c.workgroups(&p), 64);
        // A whole epoch's batch: plenty of rows.
        let c = SimtConfig::choose(&Problem::new(60000, 128, 784, Layout::ABt), &h200());
        assert_eq!((c.tiles.tm, c.tiles.tn), (128, 128));
        // A vec4 kernel refuses sizes it cannot read four at a time, and other layouts; a
        // scalar one takes any sizes.
        assert!(!c.accepts(&Problem::new(37, 45, 61, Layout::ABt)));
        assert!(!c.accepts(&Problem::new(64, 64, 64, Layout::AB)));
        let odd = Problem::new(37, 45, 61, Layout::ABt);
        let s = SimtConfig::choose(&odd, &h200());
        assert!(!s.vector_a && !s.vector_b && s.accepts(&odd));
        assert!(s.kernel_name().ends_with("_ss"), "{}", s.kernel_name());
        // A^T B with M = 37: A is stored [K, M], rows of 37: scalar reads of A only.
        let t = SimtConfig::choose(&Problem::new(37, 64, 128, Layout::AtB), &h200());
        assert!(!t.vector_a && t.vector_b);
    }

    #[test]
    fn tiles_respect_the_target_limits() {
        // WebGPU's defaults: 256 invocations, 16 KiB: 8 deep, not 32.
        let d = TargetLimits::default();
        let c = SimtConfig::choose(&Problem::new(4096, 4096, 4096, Layout::AB), &d);
        assert!(c.fits(&d), "{c:?}");
        assert_eq!(c.tiles, crate::tiled::LARGE_TILES[1]);
        let small = TargetLimits {
            max_workgroup_storage_size: 4096,
            ..d
        };
        let c = SimtConfig::choose(&Problem::new(4096, 4096, 4096, Layout::AB), &small);
        assert!(c.workgroup_bytes() <= 4096, "{c:?}");
        let p = Problem::new(1, 1, 1, Layout::AB);
        for tiles in simt_sweep_tiles() {
            let c = SimtConfig::with_tiles(&p, tiles);
            assert!(c.valid().is_ok() && c.fits(&h200()), "{tiles:?}");
        }
    }

    #[test]
    fn direct_loads_need_tiles_that_divide_the_problem() {
        let p = Problem::new(4096, 4096, 4096, Layout::AB);
        let c = CoopConfig::choose_direct(&p, &h200(), 32).expect("128 divides 4096");
        assert!(c.direct && c.workgroup_bytes() == 0);
        assert_eq!(
            (c.block_m, c.block_n, c.block_k, c.warps()),
            (128, 128, 32, 4)
        );
        assert_eq!(c.kernel_name(), "coop_f16_ab_128x128x32_w64x64_s32_direct");
        // 1024^2: 64 tiles of 128x128 are too few, 256 of 64x64 are enough.
        let c =
            CoopConfig::choose_direct(&Problem::new(1024, 1024, 1024, Layout::ABt), &h200(), 32);
        assert_eq!(c.map(|c| c.block_m), Some(64));
        // K = 784 is a multiple of 16, not 32.
        let p = Problem::new(4096, 4096, 784, Layout::AB);
        let c = CoopConfig::choose_direct(&p, &h200(), 32).expect("16 divides 784");
        assert_eq!(c.block_k, 16);
        assert!(c.accepts(&p) && !c.accepts(&Problem::new(4096, 4096, 776, Layout::AB)));
        for p in [
            Problem::new(60000, 128, 784, Layout::ABt),
            Problem::new(37, 45, 61, Layout::AB),
        ] {
            assert!(
                CoopConfig::choose_direct(&p, &h200(), 32).is_none(),
                "{p:?}"
            );
        }
    }

    #[test]
    fn cooperative_tiles_fit_the_h200_and_shrink_for_small_problems() {
        let p = Problem::new(4096, 4096, 4096, Layout::AB);
        let c = CoopConfig::choose(&p, CoopInput::F16, &h200(), 32);
        assert_eq!((c.block_m, c.block_n, c.block_k), (128, 128, 32));
        assert_eq!((c.warps(), c.threads(), c.buffers()), (4, 128, 1));
        // One buffer: (128 x 40 + 32 x 136) f16 x 2 bytes + 4 x 1 KiB of f32 staging.
        assert_eq!(c.workgroup_bytes(), (128 * 40 + 32 * 136) * 2 + 4096);
        assert!(c.fits(&h200()) && !c.direct && c.single);
        // The tile divides 4096^3: no bounds checks; 4000^3 keeps them.
        assert!(c.whole_tiles && c.wide.is_none());
        assert_eq!(
            c.kernel_name(),
            "coop_f16_ab_128x128x32_w64x64_s32_vvv_single_whole"
        );
        let odd = Problem::new(4000, 4000, 4000, Layout::AB);
        let e = CoopConfig::choose(&odd, CoopInput::F16, &h200(), 32);
        assert_eq!(
            e.kernel_name(),
            "coop_f16_ab_128x128x32_w64x64_s32_vvv_single"
        );
        // Wide loads need f16 inputs and vec4 accesses; whole tiles a tile that divides.
        assert!(c.with_wide(WideLoad::Words).valid().is_ok());
        let f32_input = CoopConfig::choose(&p, CoopInput::F32, &h200(), 32);
        assert!(!f32_input.whole_tiles);
        assert!(f32_input.with_wide(WideLoad::Pairs).valid().is_err());
        assert!(!e.with_whole_tiles().accepts(&odd));
        assert!(
            !e.with_wide(WideLoad::Words)
                .accepts(&Problem::new(4000, 4000, 4004, Layout::AB))
        );
        // Two buffers 16 deep: 2 x (128 x 24 + 16 x 264) f16 x 2 bytes + 8 KiB; 32 deep would
        // not fit 48 KiB.
        let d = CoopConfig::with_tile(&p, CoopInput::F16, COOP_TILES[0], 32);
        assert_eq!(d.workgroup_bytes(), 2 * (128 * 24 + 16 * 264) * 2 + 8192);
        assert_eq!(d.kernel_name(), "coop_f16_ab_128x256x16_w64x64_s32_vvv");
        let deep = CoopConfig::with_tile(&p, CoopInput::F16, (128, 256, 32, 64, 64), 32);
        assert!(!deep.fits(&h200()));
        for tile in SINGLE_TILES {
            let s = CoopConfig::single_with_tile(&p, CoopInput::F16, tile, 32);
            assert!(s.fits(&h200()) && s.valid().is_ok(), "{tile:?}");
        }
        // One buffer and direct loads do not go together.
        let both = CoopConfig {
            single: true,
            ..CoopConfig::direct_with_tile(&p, DIRECT_TILES[0], 32)
        };
        assert!(both.valid().is_err());
        // 1024^2: 32 tiles of 128x256 are too few, 64 of 128x128 too, 128 of 128x64 enough.
        let c = CoopConfig::choose(
            &Problem::new(1024, 1024, 1024, Layout::AB),
            CoopInput::F16,
            &h200(),
            32,
        );
        assert_eq!((c.block_m, c.block_n), (128, 64));
        // Transposed operands are staged as stored: A^T is K rows of M.
        let t = CoopConfig::choose(
            &Problem::new(4096, 4096, 4096, Layout::AtBt),
            CoopInput::F16,
            &h200(),
            32,
        );
        assert_eq!(t.a_tile_shape(), (32, 136));
        assert_eq!(t.b_tile_shape(), (128, 40));
        assert!(t.fits(&h200()));
        // 128 columns: no 256-wide tile, although it would give enough workgroups.
        let narrow = Problem::new(60000, 128, 784, Layout::ABt);
        let c = CoopConfig::choose(&narrow, CoopInput::F32, &h200(), 32);
        assert_eq!((c.block_m, c.block_n, c.block_k), (128, 128, 32));
        // The MLP's forward at batch 128: 16x16 tiles, one subgroup each.
        let f = Problem::new(128, 128, 784, Layout::ABt);
        let c = CoopConfig::choose(&f, CoopInput::F32, &h200(), 32);
        assert_eq!((c.block_m, c.block_n, c.warps()), (16, 16, 1));
        for tile in COOP_TILES {
            assert!(
                CoopConfig::with_tile(&f, CoopInput::F16, tile, 32)
                    .valid()
                    .is_ok()
            );
        }
        // WebGPU's 16 KiB: only smaller tiles fit.
        let c = CoopConfig::choose(&p, CoopInput::F16, &TargetLimits::default(), 32);
        assert!(c.workgroup_bytes() <= 16384, "{c:?}");
    }
}
