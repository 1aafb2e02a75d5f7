//! The tiled `f32` product on the ordinary arithmetic units, the one every product of the
//! workspace is built from: `gemm`'s SIMT kernel ([`crate::simt`]), the MLP's unfused linear
//! kernels and its fused training step (`mlp::kernels`). Shape-aware (ARCHITECTURE.md decision
//! *Shape-aware kernels*): a workgroup computes a `tm x tn` tile of `C = A B`, each invocation `rm x rn` outputs in registers, with
//! the tile sizes a [`Tiles`] value chosen at kernel-build time from the problem's shape and the
//! device's limits ([`Tiles::for_product`]), a `K` range (for split-K), and operands given as
//! loads rather than buffers (a batch read through the permutation, a column of ones that turns
//! a weight gradient's product into the bias gradient too).
//!
//! The workgroup walks `K` `depth = kg * tk` at a time. Its `kg` groups of
//! `(tm / rm) x (tn / rn)` invocations (`local_invocation_id.z` is the group) each multiply one
//! `tk`-deep slice of the step, and at the end the groups' partial sums are added through
//! workgroup memory: `kg` times the warps per tile, and `kg` times fewer serial multiply-adds
//! per step than one group walking the same depth. The next step's elements are read from
//! memory into registers while the current step is multiplied (one memory latency per step
//! overlapped with the arithmetic, instead of one after it). Tiles are stored `K`-major with
//! one element of padding per column (`[depth][tm + 1]`, `[depth][tn + 1]`), so that neither the
//! cooperative stores nor the inner loop's reads hit one memory bank several times.
//!
//! Elements outside `[M, K]`, `[K, N]` or the `K` range are zero and outputs outside `[M, N]` are
//! not stored, so any sizes work. Every barrier is in uniform control flow.

use wgsl_dsl::prelude::*;
use wgsl_dsl::types::Scalar;

/// Where the product runs: what [`Tiles::for_product`] optimises for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A software rasteriser on a few CPU cores (Mesa lavapipe): few large workgroups, the
    /// fewest workgroup barriers; no split-K.
    Cpu,
    /// A GPU with many multiprocessors: enough workgroups to fill it (`workgroups` at least),
    /// short `K` walks (split-K where the product's consumer sums the parts), `K` split across
    /// the invocation groups of a workgroup.
    Gpu {
        /// Workgroups that fill the device (e.g. 4 per multiprocessor).
        workgroups: u32,
        /// The device's `maxComputeInvocationsPerWorkgroup`.
        max_invocations: u32,
        /// The device's `maxComputeWorkgroupStorageSize`, in bytes.
        shared_bytes: u32,
    },
}

impl Target {
    /// A GPU to be filled with `workgroups` workgroups, with WebGPU's default limits (256
    /// invocations and 16 KiB of workgroup memory per workgroup).
    pub const fn gpu(workgroups: u32) -> Target {
        Target::Gpu {
            workgroups,
            max_invocations: 256,
            shared_bytes: 16384,
        }
    }

    /// The target of a device: [`Target::Cpu`] for software adapters, else a GPU to be filled
    /// with 512 workgroups (4 per multiprocessor of an H100/H200), with the device's limits.
    pub fn of(gpu: &wgsl_dsl::runtime::Gpu) -> Target {
        if gpu.is_software() {
            Target::Cpu
        } else {
            let l = gpu.limits();
            Target::Gpu {
                workgroups: 512,
                max_invocations: l.max_compute_invocations_per_workgroup,
                shared_bytes: l.max_compute_workgroup_storage_size,
            }
        }
    }

    /// A GPU with `limits` (its invocations and workgroup memory per workgroup), to be filled
    /// with 512 workgroups (4 per multiprocessor of an H100/H200).
    pub fn from_limits(limits: &wgsl_dsl::TargetLimits) -> Target {
        Target::Gpu {
            workgroups: 512,
            max_invocations: limits.max_invocations_per_workgroup,
            shared_bytes: limits.max_workgroup_storage_size,
        }
    }

    /// Invocations per workgroup the target allows (256 on a CPU).
    pub fn max_invocations(&self) -> u32 {
        match *self {
            Target::Cpu => 256,
            Target::Gpu {
                max_invocations, ..
            } => max_invocations,
        }
    }

    /// `f32` elements of workgroup memory per workgroup the target allows (16 KiB on a CPU).
    pub fn shared_floats(&self) -> usize {
        match *self {
            Target::Cpu => 4096,
            Target::Gpu { shared_bytes, .. } => shared_bytes as usize / 4,
        }
    }
}

/// A tile configuration: `tm x tn` outputs per workgroup, `rm x rn` per invocation, `kg` groups
/// of invocations each taking `tk` of every `depth = kg * tk` deep step along `K`. The
/// workgroup is `[tn / rn, tm / rm, kg]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Tiles {
    /// Rows of `C` per workgroup.
    pub tm: u32,
    /// Columns of `C` per workgroup.
    pub tn: u32,
    /// Depth of one group's slice of a step along `K`.
    pub tk: u32,
    /// Rows of `C` per invocation.
    pub rm: u32,
    /// Columns of `C` per invocation.
    pub rn: u32,
    /// Groups of invocations splitting each step's `K` (1: the whole workgroup is one group).
    pub kg: u32,
    /// Registers and workgroup reads four elements at a time: an invocation's rows (columns)
    /// are groups of four adjacent ones, `tm / (rm / 4)` apart, its accumulators `vec4`s, each
    /// `K` element of `A`'s and `B`'s tiles read as `rm / 4 + rn / 4` `vec4`s from workgroup
    /// memory (`array<vec4<f32>>`, rows padded by one `vec4`) instead of `rm + rn` scalars.
    /// Needs `rm` and `rn` multiples of 4.
    pub vector: bool,
}

/// 32 x 32 tiles of 4 x 4 per invocation, 16 deep, one group: the CPU's (and the MLP's
/// unfused linear kernels').
pub const LARGE: Tiles = Tiles::new([32, 32, 16], [4, 4], 1);
/// [`LARGE`] with four groups of 64 invocations each taking 16 of a 64-deep step: the GPU's
/// (256 invocations; the fastest of the configurations measured on an H200 at batch 128 and
/// 1024, benches/NOTES.md).
pub const GROUPED: Tiles = Tiles { kg: 4, ..LARGE };
/// 16 x 16 tiles of 2 x 2 per invocation, four groups of 64 invocations each taking 16 of a
/// 64-deep step: 4 times the workgroups of [`GROUPED`].
pub const SMALL: Tiles = Tiles::new([16, 16, 16], [2, 2], 4);

/// The tiles of large products on a GPU, in the order [`Tiles::for_product`] tries them, each
/// in `vec4`s ([`Tiles::vector`]) with one group: 128 x 128 outputs per workgroup, 8 x 8 per
/// invocation (256 invocations), 16 deep (16.5 KiB of workgroup memory) or 8 deep (8.3 KiB,
/// within WebGPU's default 16 KiB); 128 x 64, 8 x 4 per invocation, 16 deep; 64 x 64, 4 x 4,
/// 16 deep. Each is taken when the product has at least [`LARGE_PRODUCT_TILES`] of its tiles
/// and it fits the target. At 4096^3 on the H200 with `vec4` reads (`gemm sweep`,
/// benches/notes/issue29_simt.sh, BENCHMARKS.md): 35.0, 34.2, 32.4 and 28.2 TFLOP/s (32 deep:
/// 32.4).
pub const LARGE_TILES: [Tiles; 4] = [
    Tiles::new([128, 128, 16], [8, 8], 1).in_vec4s(),
    Tiles::new([128, 128, 8], [8, 8], 1).in_vec4s(),
    Tiles::new([128, 64, 16], [8, 4], 1).in_vec4s(),
    Tiles::new([64, 64, 16], [4, 4], 1).in_vec4s(),
];

/// [`Tiles::for_product`] takes [`LARGE_TILES`] for a product of this many of their tiles or
/// more (enough workgroups to fill an H200's 132 multiprocessors about once).
pub const LARGE_PRODUCT_TILES: usize = 128;

/// The largest workgroup array a product's kernel declares (`f32` elements; 48 KiB).
pub const MAX_SHARED_FLOATS: usize = 12288;

impl Tiles {
    /// `tm x tn` outputs per workgroup, `tk` deep per group (`[tm, tn, tk]`), `rm x rn` per
    /// invocation (`[rm, rn]`), `kg` groups of invocations; scalar registers.
    pub const fn new([tm, tn, tk]: [u32; 3], [rm, rn]: [u32; 2], kg: u32) -> Tiles {
        Tiles {
            tm,
            tn,
            tk,
            rm,
            rn,
            kg,
            vector: false,
        }
    }

    /// The same tiles in `vec4`s ([`Tiles::vector`]).
    pub const fn in_vec4s(self) -> Tiles {
        Tiles {
            vector: true,
            ..self
        }
    }

    /// The workgroup size.
    pub fn workgroup(&self) -> [u32; 3] {
        [self.tn / self.rn, self.tm / self.rm, self.kg]
    }

    /// Invocations per workgroup.
    pub fn invocations(&self) -> u32 {
        (self.tn / self.rn) * (self.tm / self.rm) * self.kg
    }

    /// Depth of one step along `K`: `kg * tk`.
    pub fn depth(&self) -> u32 {
        self.kg * self.tk
    }

    /// Workgroups `[x, y, 1]` covering `C [rows, cols]` (`x` along columns).
    pub fn grid(&self, rows: usize, cols: usize) -> [u32; 3] {
        [
            cols.div_ceil(self.tn as usize) as u32,
            rows.div_ceil(self.tm as usize) as u32,
            1,
        ]
    }

    /// `t{tm}x{tn}x{tk}r{rm}x{rn}`, then `g{kg}` when `kg > 1` and `v` when
    /// [`Tiles::vector`]: the configuration in a kernel name.
    pub fn suffix(&self) -> String {
        let groups = if self.kg > 1 {
            format!("g{}", self.kg)
        } else {
            String::new()
        };
        let vector = if self.vector { "v" } else { "" };
        format!(
            "t{}x{}x{}r{}x{}{groups}{vector}",
            self.tm, self.tn, self.tk, self.rm, self.rn
        )
    }

    /// The padding of a row of a staged tile: one element, or one `vec4` when
    /// [`Tiles::vector`].
    pub fn pad(&self) -> u32 {
        if self.vector { 4 } else { 1 }
    }

    /// `f32` elements of workgroup memory the product needs: the padded `A` and `B` tiles of one
    /// step (`[depth][tm + pad]`, `[depth][tn + pad]`, [`Tiles::pad`]), and room for the groups' partial sums
    /// (`kg * tm * tn`) and for one value per invocation (reductions after the product).
    pub fn shared_floats(&self) -> usize {
        let depth = self.depth() as usize;
        let pad = self.pad() as usize;
        let a = (self.tm as usize + pad) * depth;
        let b = (self.tn as usize + pad) * depth;
        let groups = if self.kg > 1 {
            (self.kg * self.tm * self.tn) as usize
        } else {
            0
        };
        (a + b).max(groups).max(self.invocations() as usize)
    }

    /// `f32` elements of the workgroup array [`TileMemory::declare`] declares for these tiles
    /// alone: [`Tiles::shared_floats`] rounded up to a whole `vec4` or to the capacity of a
    /// [`SharedArray`] (`None` past [`MAX_SHARED_FLOATS`]).
    pub fn memory_floats(&self) -> Option<usize> {
        let len = self.shared_floats();
        if self.vector {
            (len <= MAX_SHARED_FLOATS).then(|| len.next_multiple_of(4))
        } else {
            SharedArray::capacity(len)
        }
    }

    /// True if the configuration is usable: the tiles divide by the per-invocation block,
    /// 1 to 1024 invocations, the workgroup memory fits [`MAX_SHARED_FLOATS`], and a
    /// [`Tiles::vector`] block is made of `vec4`s.
    pub fn is_valid(&self) -> bool {
        self.rm > 0
            && self.rn > 0
            && self.tk > 0
            && self.kg > 0
            && self.tm.is_multiple_of(self.rm)
            && self.tn.is_multiple_of(self.rn)
            && (1..=1024).contains(&self.invocations())
            && self.shared_floats() <= MAX_SHARED_FLOATS
            && (!self.vector || (self.rm.is_multiple_of(4) && self.rn.is_multiple_of(4)))
    }

    /// True if the configuration is valid and fits `target`'s invocations and workgroup
    /// memory.
    pub fn fits(&self, target: Target) -> bool {
        self.is_valid()
            && self.invocations() <= target.max_invocations()
            && self.shared_floats() <= target.shared_floats()
    }

    /// The tiles for `C [m, n] = A [m, k] B [k, n]` on `target`: [`LARGE`] on a CPU; on a GPU
    /// the first of [`LARGE_TILES`] for products of at least [`LARGE_PRODUCT_TILES`] of its
    /// tiles, else 32 x 32 tiles ([`GROUPED`]), or 16 x 16 ([`SMALL`]) when `C` has fewer than
    /// [`SMALL_BELOW`] tiles of 32 x 32, with 8 groups when `k` is at least [`DEEP_K`] and
    /// 4 otherwise, or as many groups (2, 1) and as deep a slice (16, 8) as the target's
    /// invocations and workgroup memory allow, 8 deep when `k` is shorter than a step of 16.
    /// Measured on the H200 (benches/notes/round3/call1): the batch-128 forward (128 x 128 x
    /// 784: 16 tiles of 32 x 32) took 12.1 us per dispatch in 16 x 16 tiles against 13.8 us,
    /// the batch-1024 forward (128 tiles) 35.4 against 31.8 us; the batch-1024 weight gradient
    /// (`K` = 1024) 33.1 us with 8 groups against 37.4 us with 4, the same at `K` = 128.
    pub fn for_product(m: usize, n: usize, k: usize, target: Target) -> Tiles {
        match target {
            Target::Cpu => LARGE,
            Target::Gpu { .. } => {
                let large = LARGE_TILES.iter().find(|t| {
                    let [x, y, _] = t.grid(m, n);
                    (x as usize) * (y as usize) >= LARGE_PRODUCT_TILES && t.fits(target)
                });
                if let Some(&t) = large {
                    return t;
                }
                let [x, y, _] = GROUPED.grid(m, n);
                let base = if (x as usize) * (y as usize) < SMALL_BELOW {
                    SMALL
                } else {
                    GROUPED
                };
                let groups: &[u32] = if k >= DEEP_K {
                    &[8, 4, 2, 1]
                } else {
                    &[4, 2, 1]
                };
                [16, 8]
                    .iter()
                    .flat_map(|&tk| groups.iter().map(move |&kg| (kg, tk)))
                    .map(|(kg, tk)| Tiles { kg, tk, ..base })
                    .filter(|t| t.tk == 8 || k >= t.depth() as usize)
                    .find(|t| t.fits(target))
                    .unwrap_or(Tiles {
                        kg: 1,
                        tk: 8,
                        ..base
                    })
            }
        }
    }
}

/// [`Tiles::for_product`] takes 16 x 16 tiles for a product of fewer 32 x 32 tiles than this.
pub const SMALL_BELOW: usize = 64;

/// [`Tiles::for_product`] takes 8 groups of invocations (512 per workgroup) for a `K` this long
/// or longer, where the target allows them.
pub const DEEP_K: usize = 1024;

/// How many parts to split `K` into for a product of `tiles_count` workgroups of `depth`-deep
/// steps whose consumer sums the parts: 1 on a CPU; on a GPU enough parts to reach the
/// target's workgroups, each a whole number of steps (as few steps as that allows), at most 16.
pub fn split_k(tiles_count: u32, k: usize, depth: u32, target: Target) -> u32 {
    match target {
        Target::Cpu => 1,
        Target::Gpu { workgroups, .. } => {
            let steps = k.div_ceil(depth as usize).max(1) as u32;
            let wanted = workgroups.div_ceil(tiles_count.max(1)).max(1);
            let per_part = steps.div_ceil(wanted).max(1);
            steps.div_ceil(per_part).clamp(1, 16)
        }
    }
}

/// `K` elements per part when `k` is split into `parts`: a multiple of `depth`.
pub fn split_len(k: u32, parts: u32, depth: u32) -> u32 {
    k.div_ceil(parts.max(1)).div_ceil(depth) * depth
}

/// The operand's element `(row, col)`. It is evaluated for every slot of a tile, also outside
/// the operand: there the product passes row and column 0 (or the row's key of row 0) and
/// discards the value, so every read stays in bounds and the tile's loads can be issued
/// together instead of one branch (and one memory latency) at a time.
pub type ValueFn<'a> = Box<dyn Fn(&Exp<u32>, &Exp<u32>) -> Exp<f32> + 'a>;

/// A per-row value computed once before the `K` walk (e.g. the row's offset in the dataset,
/// read through the permutation), passed to [`ValueFn`] in place of the row.
pub type RowKeyFn<'a> = Box<dyn Fn(&Exp<u32>) -> Exp<u32> + 'a>;

/// One operand, a logical matrix `[rows, cols]`: any loads ([`Source::value`]), or a storage
/// buffer ([`Source::row_major`], [`Source::transposed`]).
pub struct Source<'a> {
    /// Logical rows.
    pub rows: Exp<u32>,
    /// Logical columns.
    pub cols: Exp<u32>,
    /// Element `(row, col)`, or `(row_key(row), col)` with a [`Source::row_key`].
    pub value: ValueFn<'a>,
    /// For `A` only (whose rows do not change along `K`): a key per row, read once.
    pub row_key: Option<RowKeyFn<'a>>,
    /// True if consecutive columns are adjacent in memory, false if consecutive rows are: the
    /// tile is loaded so that adjacent invocations read adjacent addresses.
    pub cols_contiguous: bool,
    /// Four adjacent elements at once, `(row, col..col + 4)` if [`Source::cols_contiguous`],
    /// else `(row..row + 4, col)`, for `(row, col)` whose contiguous coordinate is a multiple of
    /// 4 (a `vec4` load). Only for operands whose contiguous extent is a multiple of 4 (then
    /// four such elements are all inside or all outside the operand, and the product reads
    /// them at once where a tile's contiguous side is a multiple of 4), without a
    /// [`Source::row_key`], in a product whose `K` range starts and ends at multiples of 4.
    pub vector: Option<VectorFn<'a>>,
    /// The product's tiles never cross this operand's edges ([`Source::whole_tiles`]): its
    /// fixed side (`A`'s rows, `B`'s columns) is a multiple of the tile, so those coordinates
    /// are not checked. When both operands say so, `K` is not checked either (the caller
    /// promises that the `K` range is a multiple of [`Tiles::depth`]), and every output is
    /// inside `C`.
    pub whole: bool,
}

/// Four adjacent elements of an operand ([`Source::vector`]).
pub type VectorFn<'a> = Box<dyn Fn(&Exp<u32>, &Exp<u32>) -> Exp<Vec4<f32>> + 'a>;

impl std::fmt::Debug for Source<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Source")
            .field("rows", &self.rows)
            .field("cols", &self.cols)
            .field("row_key", &self.row_key.is_some())
            .field("cols_contiguous", &self.cols_contiguous)
            .field("vector", &self.vector.is_some())
            .field("whole", &self.whole)
            .finish_non_exhaustive()
    }
}

impl<'a> Source<'a> {
    /// `[rows, cols]` in a storage buffer from `offset` (0 if `None`): row-major (element
    /// `(r, c)` at `offset + r * cols + c`) if `cols_contiguous`, else transposed (column-major,
    /// at `offset + c * rows + r`).
    pub fn buffer(
        buffer: &'a Buffer<f32, ReadOnly>,
        rows: Exp<u32>,
        cols: Exp<u32>,
        offset: Option<Exp<u32>>,
        cols_contiguous: bool,
    ) -> Source<'a> {
        let stride = if cols_contiguous { &cols } else { &rows }.clone();
        Source {
            rows,
            cols,
            value: Box::new(move |r, c| {
                let (outer, inner) = if cols_contiguous { (r, c) } else { (c, r) };
                let at = outer * &stride + inner;
                buffer
                    .at(offset.as_ref().map_or(at.clone(), |o| o + at))
                    .load()
            }),
            row_key: None,
            cols_contiguous,
            vector: None,
            whole: false,
        }
    }

    /// `[rows, cols]` in a storage buffer of `vec4`s, row-major if `cols_contiguous`, else
    /// transposed (as [`Source::buffer`]); its contiguous extent (`cols` or `rows`) must be a
    /// multiple of 4, and the product reads it four elements at a time ([`Source::vector`]).
    pub fn buffer_vec4(
        buffer: &'a Buffer<Vec4<f32>, ReadOnly>,
        rows: Exp<u32>,
        cols: Exp<u32>,
        cols_contiguous: bool,
    ) -> Source<'a> {
        let stride = if cols_contiguous { &cols } else { &rows }.clone();
        let index = move |r: &Exp<u32>, c: &Exp<u32>| {
            let (outer, inner) = if cols_contiguous { (r, c) } else { (c, r) };
            outer * &stride + inner
        };
        let index4 = index.clone();
        Source {
            rows,
            cols,
            value: Box::new(move |r, c| {
                let at = index(r, c);
                buffer.at(&at / 4u32).at(&at % 4u32).load()
            }),
            row_key: None,
            cols_contiguous,
            vector: Some(Box::new(move |r, c| buffer.at(index4(r, c) / 4u32).load())),
            whole: false,
        }
    }

    /// This operand with no bounds checks ([`Source::whole`]): for problems whose sizes are
    /// multiples of the tile (`M` of `tm`, `N` of `tn`, `K` of [`Tiles::depth`]). Reads outside
    /// the operand are then not prevented: a caller that breaks the promise reads past its
    /// buffer (robust buffer access clamps it on WebGPU) and gets wrong sums.
    pub fn whole_tiles(self) -> Source<'a> {
        Source {
            whole: true,
            ..self
        }
    }

    /// `[rows, cols]` stored row-major from `offset` ([`Source::buffer`]).
    pub fn row_major(
        buffer: &'a Buffer<f32, ReadOnly>,
        rows: Exp<u32>,
        cols: Exp<u32>,
        offset: Option<Exp<u32>>,
    ) -> Source<'a> {
        Source::buffer(buffer, rows, cols, offset, true)
    }

    /// `[rows, cols]` stored transposed from `offset` ([`Source::buffer`]).
    pub fn transposed(
        buffer: &'a Buffer<f32, ReadOnly>,
        rows: Exp<u32>,
        cols: Exp<u32>,
        offset: Option<Exp<u32>>,
    ) -> Source<'a> {
        Source::buffer(buffer, rows, cols, offset, false)
    }
}

/// What the product gives the epilogue for each of an invocation's outputs, also those
/// outside `[M, N]` (`inside` false: the epilogue reads in bounds and stores nothing).
#[derive(Debug)]
pub struct Output {
    /// Row of `C`.
    pub row: Exp<u32>,
    /// Column of `C`.
    pub col: Exp<u32>,
    /// `C[row, col]` over the `K` range.
    pub value: Exp<f32>,
    /// Whether `(row, col)` is inside `[M, N]`.
    pub inside: Exp<bool>,
}

impl Output {
    /// `C[row, col] = value`, stored only if `inside`.
    fn new(row: Exp<u32>, col: Exp<u32>, value: Exp<f32>, inside: Exp<bool>) -> Output {
        Output {
            row,
            col,
            value,
            inside,
        }
    }
}

/// What a product does with its outputs, in two phases: `load` reads what each output needs
/// (unconditionally: in bounds also outside `[M, N]`), for all of an invocation's outputs
/// before any is stored, so that their memory latencies overlap (a read after a store to the
/// same buffer would wait for it); then `store` finishes each output (storing only where
/// `inside`).
#[allow(missing_debug_implementations)] // Closures.
pub struct Epilogue<L, S> {
    /// Reads for one output.
    pub load: L,
    /// Finishes one output with its reads.
    pub store: S,
}

impl<L, S> Epilogue<L, S>
where
    L: Fn(&mut KernelBuilder, &Output) -> Vec<Exp<f32>>,
    S: Fn(&mut KernelBuilder, &Output, Vec<Exp<f32>>),
{
    fn emit(&self, k: &mut KernelBuilder, outputs: Vec<Output>) {
        let loaded: Vec<Vec<Exp<f32>>> = outputs.iter().map(|o| (self.load)(k, o)).collect();
        for (o, l) in outputs.iter().zip(loaded) {
            (self.store)(k, o, l);
        }
    }
}

/// An epilogue that only stores.
pub fn store_only<S>(store: S) -> Epilogue<impl Fn(&mut KernelBuilder, &Output) -> Vec<Exp<f32>>, S>
where
    S: Fn(&mut KernelBuilder, &Output, Vec<Exp<f32>>),
{
    Epilogue {
        load: |_: &mut KernelBuilder, _: &Output| Vec::new(),
        store,
    }
}

/// Declares `array<f32, N>` workgroup arrays of a few capacities (the element count is part of
/// the WGSL type).
macro_rules! shared_arrays {
    ($($variant:ident = $n:literal),* $(,)?) => {
        /// A workgroup `array<f32, N>`, `N` the smallest listed capacity that holds what its
        /// kernel needs, or an `array<vec4<f32>, N / 4>` read element by element or four at a
        /// time ([`SharedArray::declare_vec4`]).
        #[derive(Debug)]
        pub enum SharedArray {
            $($variant(Place<Array<f32, $n>, ReadWrite>),)*
            /// `array<vec4<f32>, N / 4>`.
            Vec4(Place<SizedArray<Vec4<f32>>, ReadWrite>),
        }

        impl SharedArray {
            /// Declare `name` with room for `len` elements (`None` past the largest capacity).
            pub fn declare(k: &mut KernelBuilder, name: &str, len: usize) -> Option<Self> {
                $(if len <= $n {
                    return Some(SharedArray::$variant(k.workgroup::<Array<f32, $n>>(name)));
                })*
                None
            }

            /// The capacity [`SharedArray::declare`] gives `len` elements (`None` past the
            /// largest).
            pub fn capacity(len: usize) -> Option<usize> {
                [$($n),*].into_iter().find(|&n| len <= n)
            }

            /// Declare `name` as an `array<vec4<f32>>` with room for `len` elements (`None`
            /// past [`MAX_SHARED_FLOATS`]).
            pub fn declare_vec4(k: &mut KernelBuilder, name: &str, len: usize) -> Option<Self> {
                let vectors = u32::try_from(len.div_ceil(4)).ok()?;
                (len <= MAX_SHARED_FLOATS)
                    .then(|| SharedArray::Vec4(k.workgroup_array::<Vec4<f32>>(name, vectors)))
            }

            /// Element `i` (of a `vec4` array: component `i % 4` of vector `i / 4`).
            pub fn at(&self, i: impl IntoExp<u32>) -> Place<f32, ReadWrite> {
                match self {
                    $(SharedArray::$variant(p) => p.at(i),)*
                    SharedArray::Vec4(p) => {
                        let i = i.into_exp();
                        p.at(&i / 4u32).at(&i % 4u32)
                    }
                }
            }

            /// Elements `4 i .. 4 i + 4` of a `vec4` array (`None` for an `f32` one).
            pub fn at4(&self, i: impl IntoExp<u32>) -> Option<Place<Vec4<f32>, ReadWrite>> {
                match self {
                    SharedArray::Vec4(p) => Some(p.at(i)),
                    _ => None,
                }
            }
        }
    };
}

shared_arrays!(
    S256 = 256,
    S512 = 512,
    S1024 = 1024,
    S2048 = 2048,
    S3072 = 3072,
    S4096 = 4096,
    S5120 = 5120,
    S6144 = 6144,
    S8192 = 8192,
    S10240 = 10240,
    S12288 = 12288,
);

/// The workgroup memory of a kernel's products (one array, `tiles` below): the `A` tile, then
/// the `B` tile, or the groups' partial sums, or a reduction's values after the product.
#[derive(Debug)]
pub struct TileMemory {
    /// The array.
    pub tiles: SharedArray,
}

impl TileMemory {
    /// Declare the array (`tiles`), large enough for each of `configs`: of `vec4`s when they
    /// are all [`Tiles::vector`].
    ///
    /// # Panics
    /// If a configuration needs more than [`MAX_SHARED_FLOATS`] (not [`Tiles::is_valid`]: a bug
    /// in the configuration chooser, not user input).
    pub fn declare(k: &mut KernelBuilder, configs: &[Tiles]) -> TileMemory {
        let len = configs.iter().map(Tiles::shared_floats).max().unwrap_or(1);
        let tiles = if !configs.is_empty() && configs.iter().all(|t| t.vector) {
            SharedArray::declare_vec4(k, "tiles", len)
        } else {
            SharedArray::declare(k, "tiles", len)
        };
        TileMemory {
            tiles: tiles.unwrap_or_else(|| panic!("tiles {configs:?} need {len} floats of memory")),
        }
    }
}

/// Emit `C = A B` over `K` in `[k_begin, k_end)` into `k` with `tiles`; `epilogue` finishes
/// each output. Dispatch [`Tiles::grid`]`(M, N)` workgroups of [`Tiles::workgroup`].
///
/// # Panics
/// If `tiles` is not [`Tiles::is_valid`] (a bug in the configuration chooser, not user input).
pub fn product(
    k: &mut KernelBuilder,
    tiles: Tiles,
    a: Source<'_>,
    b: Source<'_>,
    k_begin: Exp<u32>,
    k_end: Exp<u32>,
    epilogue: Epilogue<
        impl Fn(&mut KernelBuilder, &Output) -> Vec<Exp<f32>>,
        impl Fn(&mut KernelBuilder, &Output, Vec<Exp<f32>>),
    >,
) {
    let memory = TileMemory::declare(k, &[tiles]);
    let tile = [workgroup_id().y(), workgroup_id().x()];
    product_at(k, tiles, &memory, tile, a, b, k_begin, k_end, epilogue);
}

/// One slot of a cooperative tile load: the element `(r, c)` of the tile an invocation reads
/// into a register every step. Along `K` the slot moves every step; across (`A`'s rows, `B`'s
/// columns) it stays, so that coordinate, its bounds check and the row's key are computed
/// once.
struct Slot {
    /// The coordinate along `K` within the tile (`A`'s column, `B`'s row).
    along: Exp<u32>,
    /// The fixed coordinate in the operand, or row 0 (or its key) when outside the operand.
    fixed: Exp<u32>,
    /// Whether the fixed coordinate is inside the operand; `None` if it always is
    /// ([`Source::whole`]).
    fixed_ok: Option<Exp<bool>>,
    /// The slot's place in the tile memory, relative to the step's tile.
    at: Exp<u32>,
    /// `Some((e, n))` when the slot can be past the tile: stored only if `e < n`.
    partial: Option<(Exp<u32>, u32)>,
    /// The register: one element, or four adjacent ones ([`Source::vector`]) lying
    /// `chunk_stride` apart in the tile memory.
    value: Register,
}

/// A slot's register.
enum Register {
    /// One element.
    One(Var<f32>),
    /// Four adjacent elements, `chunk_stride` apart in the tile memory.
    Four {
        value: Var<Vec4<f32>>,
        chunk_stride: u32,
    },
}

/// Which operand a tile load is for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    /// `A [M, K]`: rows fixed, columns along `K`.
    A,
    /// `B [K, N]`: rows along `K`, columns fixed.
    B,
}

/// The slots of invocation `lid` for a `[rows, cols]` tile of `op` at the fixed offset `fixed0`
/// (`A`'s first row or `B`'s first column) loaded by `invocations` invocations, so that
/// adjacent invocations read adjacent addresses; stored at `base + r * row_stride + c *
/// col_stride`.
#[allow(clippy::too_many_arguments)]
fn slots(
    k: &mut KernelBuilder,
    op: &Source<'_>,
    side: Side,
    [rows, cols]: [u32; 2],
    lid: &Exp<u32>,
    invocations: u32,
    fixed0: &Exp<u32>,
    base: u32,
    [row_stride, col_stride]: [u32; 2],
) -> Vec<Slot> {
    let prefix = match side {
        Side::A => "a",
        Side::B => "b",
    };
    // Four elements at a time where the operand allows it and the tile's contiguous side is a
    // multiple of 4.
    let contiguous = if op.cols_contiguous { cols } else { rows };
    let four = op.vector.is_some() && op.row_key.is_none() && contiguous.is_multiple_of(4);
    let width = if four { 4 } else { 1 };
    let units = rows * cols / width;
    let per = units.div_ceil(invocations);
    (0..per)
        .map(|j| {
            // Slots past the tile (when the invocations do not divide it) wrap onto slot
            // `e - units` and are not stored.
            let e = k.let_(&format!("{prefix}_e{j}"), lid + j * invocations);
            let (r, c) = match (op.cols_contiguous, four) {
                (true, false) => (&e / cols % rows, &e % cols),
                (false, false) => (&e % rows, &e / rows % cols),
                (true, true) => (&e / (cols / 4) % rows, (&e % (cols / 4)) * 4u32),
                (false, true) => ((&e % (rows / 4)) * 4u32, &e / (rows / 4) % cols),
            };
            let r = k.let_(&format!("{prefix}_r{j}"), r);
            let c = k.let_(&format!("{prefix}_c{j}"), c);
            let (along, across, limit) = match side {
                Side::A => (c.clone(), r.clone(), &op.rows),
                Side::B => (r.clone(), c.clone(), &op.cols),
            };
            let fixed = k.let_(&format!("{prefix}_fixed{j}"), fixed0 + &across);
            let (fixed_ok, safe) = if op.whole {
                (None, fixed)
            } else {
                let ok = k.let_(&format!("{prefix}_fixed_ok{j}"), fixed.lt(limit.clone()));
                let safe = ok.select(&fixed, 0u32);
                (Some(ok), safe)
            };
            let fixed = match &op.row_key {
                Some(key) => key(&safe),
                None => safe,
            };
            let fixed = k.let_(&format!("{prefix}_safe{j}"), fixed);
            let at = k.let_(
                &format!("{prefix}_at{j}"),
                r * row_stride + c * col_stride + base,
            );
            let value = if four {
                Register::Four {
                    value: k.var(&format!("{prefix}_v{j}"), Exp::<Vec4<f32>>::zero()),
                    chunk_stride: if op.cols_contiguous {
                        col_stride
                    } else {
                        row_stride
                    },
                }
            } else {
                Register::One(k.var(&format!("{prefix}_v{j}"), 0.0f32))
            };
            Slot {
                along,
                fixed,
                fixed_ok,
                at,
                partial: ((j + 1) * invocations > units).then_some((e, units)),
                value,
            }
        })
        .collect()
}

/// Read the step's tile starting at `k0` along `K` into the slots' registers: zero outside the
/// operand and past `k_end` (unless `check_k` is false: the caller reads only whole steps
/// inside `K`); every read is issued before any is used.
fn load_slots(
    k: &mut KernelBuilder,
    op: &Source<'_>,
    side: Side,
    slots: &[Slot],
    k0: &Exp<u32>,
    k_end: &Exp<u32>,
    check_k: bool,
) {
    for s in slots {
        let along = k0 + &s.along;
        let inside = match (&s.fixed_ok, check_k) {
            (Some(ok), true) => Some(ok.clone().and(along.lt(k_end.clone()))),
            (Some(ok), false) => Some(ok.clone()),
            (None, true) => Some(along.lt(k_end.clone())),
            (None, false) => None,
        };
        // Outside the operand, read its element 0 instead and discard it: the read stays in
        // bounds.
        let inside = inside.map(|inside| k.let_("inside", inside));
        let along = match &inside {
            Some(inside) => inside.select(along, 0u32),
            None => along,
        };
        let (row, col) = match side {
            Side::A => (&s.fixed, &along),
            Side::B => (&along, &s.fixed),
        };
        match (&s.value, &op.vector) {
            (Register::One(var), _) => {
                let value = (op.value)(row, col);
                let value = match &inside {
                    Some(inside) => inside.select(value, 0.0f32),
                    None => value,
                };
                k.store(var, value);
            }
            (Register::Four { value: var, .. }, Some(vector)) => {
                let value = vector(row, col);
                let value = match &inside {
                    Some(inside) => inside.select(value, Exp::<Vec4<f32>>::zero()),
                    None => value,
                };
                k.store(var, value);
            }
            (Register::Four { .. }, None) => unreachable!("four-element slots need Source::vector"),
        }
    }
}

/// Store the slots' registers into the tile memory: four adjacent elements as one `vec4` where
/// they are adjacent there too (and the memory is of `vec4`s), else one by one.
fn store_slots(k: &mut KernelBuilder, memory: &TileMemory, slots: &[Slot]) {
    for s in slots {
        let store = |k: &mut KernelBuilder| match &s.value {
            Register::One(var) => k.store(&memory.tiles.at(&s.at), var.load()),
            Register::Four {
                value,
                chunk_stride,
            } => match memory.tiles.at4(&s.at / 4u32) {
                Some(place) if *chunk_stride == 1 => k.store(&place, value.load()),
                _ => {
                    let v = value.load();
                    for j in 0..4u32 {
                        k.store(&memory.tiles.at(&s.at + j * chunk_stride), component(&v, j));
                    }
                }
            },
        };
        match &s.partial {
            Some((e, n)) => k.if_(e.lt(*n), store),
            None => store(k),
        }
    }
}

/// As [`product`], for the tile `[row, column]` (in tiles) given, with `memory` declared by the
/// caller: a kernel can hold several products (in branches uniform per workgroup).
#[allow(clippy::too_many_arguments)]
pub fn product_at(
    k: &mut KernelBuilder,
    tiles: Tiles,
    memory: &TileMemory,
    [tile_row, tile_col]: [Exp<u32>; 2],
    a: Source<'_>,
    b: Source<'_>,
    k_begin: Exp<u32>,
    k_end: Exp<u32>,
    epilogue: Epilogue<
        impl Fn(&mut KernelBuilder, &Output) -> Vec<Exp<f32>>,
        impl Fn(&mut KernelBuilder, &Output, Vec<Exp<f32>>),
    >,
) {
    assert!(tiles.is_valid(), "invalid tiles {tiles:?}");
    assert!(
        b.row_key.is_none(),
        "row keys are for A, whose rows stay along K"
    );
    let Tiles {
        tm,
        tn,
        tk,
        rm,
        rn,
        kg,
        ..
    } = tiles;
    let [wx, wy, _] = tiles.workgroup();
    let depth = tiles.depth();
    // Padded strides: A as [depth][tm + pad], B as [depth][tn + pad] after it.
    let (sa, sb) = (tm + tiles.pad(), tn + tiles.pad());
    let b_base = sa * depth;
    let tx = k.let_("tx", local_invocation_id().x());
    let ty = k.let_("ty", local_invocation_id().y());
    let lid = k.let_("lid", local_invocation_index());
    let m_size = k.let_("m_size", a.rows.clone());
    let n_size = k.let_("n_size", b.cols.clone());
    let k_begin = k.let_("k_begin", k_begin);
    let k_end = k.let_("k_end", min(min(k_end, a.cols.clone()), b.rows.clone()));
    let tile_row0 = k.let_("tile_row0", tile_row * tm);
    let tile_col0 = k.let_("tile_col0", tile_col * tn);
    let registers = Registers::declare(k, tiles);
    let steps = k.let_(
        "k_steps",
        k_end
            .gt(&k_begin)
            .select((&k_end - &k_begin + (depth - 1)) / depth, 0u32),
    );
    let invocations = tiles.invocations();
    // A as [depth][tm + pad], B as [depth][tn + pad] after it.
    let a_slots = slots(
        k,
        &a,
        Side::A,
        [tm, depth],
        &lid,
        invocations,
        &tile_row0,
        0,
        [1, sa],
    );
    let b_slots = slots(
        k,
        &b,
        Side::B,
        [depth, tn],
        &lid,
        invocations,
        &tile_col0,
        b_base,
        [sb, 1],
    );
    // Both operands whole: every step lies inside `K`, and only the prefetch past the last
    // step is skipped (one branch per step, uniform in the workgroup).
    let whole = a.whole && b.whole;
    let load = |k: &mut KernelBuilder, k0: &Exp<u32>| {
        load_slots(k, &a, Side::A, &a_slots, k0, &k_end, !whole);
        load_slots(k, &b, Side::B, &b_slots, k0, &k_end, !whole);
    };
    if whole {
        k.if_(k_begin.lt(&k_end), |k| load(k, &k_begin));
    } else {
        load(k, &k_begin);
    }
    // Offset of this group's slice in a step.
    let slice = k.let_("slice", local_invocation_id().z() * tk);
    k.for_range("t", 0u32, steps, |k, t| {
        store_slots(k, memory, &a_slots);
        store_slots(k, memory, &b_slots);
        k.workgroup_barrier();
        // The next step's elements (zero past the range), read while this step is multiplied.
        let next = k.let_("k_next", &k_begin + (t + 1u32) * depth);
        if whole {
            k.if_(next.lt(&k_end), |k| load(k, &next));
        } else {
            load(k, &next);
        }
        match &registers {
            Registers::Scalar(acc) => {
                let a_base = k.let_("a_base", &slice * sa + &ty);
                let b_off = k.let_("b_base", &slice * sb + &tx + b_base);
                for kk in 0..tk {
                    let av: Vec<Exp<f32>> = (0..rm)
                        .map(|i| {
                            let at = &a_base + (kk * sa + i * wy);
                            k.let_(&format!("a{i}"), memory.tiles.at(at).load())
                        })
                        .collect();
                    let bv: Vec<Exp<f32>> = (0..rn)
                        .map(|j| {
                            let at = &b_off + (kk * sb + j * wx);
                            k.let_(&format!("b{j}"), memory.tiles.at(at).load())
                        })
                        .collect();
                    for i in 0..rm as usize {
                        for j in 0..rn as usize {
                            k.update(&acc[i * rn as usize + j], |s| {
                                fma(av[i].clone(), bv[j].clone(), s)
                            });
                        }
                    }
                }
            }
            Registers::Vector(acc) => {
                // In vec4s: the strides and bases are multiples of 4 (`pad` is 4).
                let (ga, gb) = (rm / 4, rn / 4);
                let a_base = k.let_("a_base", (&slice * sa) / 4u32 + &ty);
                let b_off = k.let_("b_base", (&slice * sb + b_base) / 4u32 + &tx);
                let at4 = |i: Exp<u32>| {
                    memory
                        .tiles
                        .at4(i)
                        .expect("vector tiles are declared as vec4s")
                        .load()
                };
                for kk in 0..tk {
                    let av: Vec<Exp<Vec4<f32>>> = (0..ga)
                        .map(|g| {
                            let at = &a_base + (kk * sa + g * (tm / ga)) / 4;
                            k.let_(&format!("a{g}"), at4(at))
                        })
                        .collect();
                    let bv: Vec<Exp<Vec4<f32>>> = (0..gb)
                        .map(|h| {
                            let at = &b_off + (kk * sb + h * (tn / gb)) / 4;
                            k.let_(&format!("b{h}"), at4(at))
                        })
                        .collect();
                    for i in 0..rm {
                        let a_value = component(&av[(i / 4) as usize], i % 4);
                        let splat = Exp::<Vec4<f32>>::splat(a_value);
                        for (h, b) in bv.iter().enumerate() {
                            let cell = &acc[(i * gb) as usize + h];
                            k.store(cell, fma(&splat, b, cell.load()));
                        }
                    }
                }
            }
        }
        k.workgroup_barrier();
    });
    // Each register: its row and column in the tile, each an invocation's base plus a
    // constant, and its value.
    type Cell = ((Exp<u32>, u32), (Exp<u32>, u32), Exp<f32>);
    let cells: Vec<Cell> = match &registers {
        Registers::Scalar(acc) => (0..rm)
            .flat_map(|i| (0..rn).map(move |j| (i, j)))
            .map(|(i, j)| {
                (
                    (ty.clone(), i * wy),
                    (tx.clone(), j * wx),
                    acc[(i * rn + j) as usize].load(),
                )
            })
            .collect(),
        Registers::Vector(acc) => {
            let (ga, gb) = (rm / 4, rn / 4);
            let (ty4, tx4) = (k.let_("ty4", &ty * 4u32), k.let_("tx4", &tx * 4u32));
            (0..rm)
                .flat_map(|i| (0..rn).map(move |j| (i, j)))
                .map(|(i, j)| {
                    let cell = acc[(i * gb + j / 4) as usize].load();
                    (
                        (ty4.clone(), (i / 4) * (tm / ga) + i % 4),
                        (tx4.clone(), (j / 4) * (tn / gb) + j % 4),
                        component(&cell, j % 4),
                    )
                })
                .collect()
        }
    };
    if kg == 1 {
        let mut outputs = Vec::new();
        for (q, ((r, r_off), (c, c_off), value)) in cells.into_iter().enumerate() {
            let (i, j) = (q as u32 / rn, q as u32 % rn);
            let row = k.let_(&format!("row{i}"), &tile_row0 + r + r_off);
            let col = k.let_(&format!("col{j}"), &tile_col0 + c + c_off);
            let inside = if whole {
                lit(true)
            } else {
                k.let_("inside", row.lt(&m_size).and(col.lt(&n_size)))
            };
            let value = k.let_("value", value);
            outputs.push(Output::new(row, col, value, inside));
        }
        epilogue.emit(k, outputs);
        return;
    }
    // The groups' partial sums through the tile memory (free after the walk's last barrier),
    // then each output summed and finished by one invocation.
    let tile = tm * tn;
    let group_base = k.let_("group_base", local_invocation_id().z() * tile);
    for ((r, r_off), (c, c_off), value) in cells {
        let at = &group_base + (r + r_off) * tn + c + c_off;
        k.store(&memory.tiles.at(at), value);
    }
    k.workgroup_barrier();
    let mut outputs = Vec::new();
    for q in 0..tile.div_ceil(invocations) {
        let o = k.let_("out", &lid + q * invocations);
        // Past the tile (when the invocations do not divide it): output 0, not stored.
        let (o, in_tile) = if (q + 1) * invocations > tile {
            let in_tile = k.let_("in_tile", o.lt(tile));
            (k.let_("out_safe", in_tile.select(&o, 0u32)), Some(in_tile))
        } else {
            (o, None)
        };
        let value = (1..kg)
            .map(|g| memory.tiles.at(&o + g * tile).load())
            .fold(memory.tiles.at(&o).load(), |s, v| s + v);
        let value = k.let_("value", value);
        let row = k.let_("row", &tile_row0 + &o / tn);
        let col = k.let_("col", &tile_col0 + &o % tn);
        let inside = match (whole, in_tile) {
            (true, None) => lit(true),
            (true, Some(t)) => t,
            (false, in_tile) => {
                let inside = row.lt(&m_size).and(col.lt(&n_size));
                k.let_(
                    "inside",
                    match in_tile {
                        Some(t) => inside.and(t),
                        None => inside,
                    },
                )
            }
        };
        outputs.push(Output::new(row, col, value, inside));
    }
    epilogue.emit(k, outputs);
}

/// An invocation's accumulators: `rm x rn` scalars, or `rm x rn / 4` `vec4`s
/// ([`Tiles::vector`]).
enum Registers {
    Scalar(Vec<Var<f32>>),
    Vector(Vec<Var<Vec4<f32>>>),
}

impl Registers {
    fn declare(k: &mut KernelBuilder, tiles: Tiles) -> Registers {
        if tiles.vector {
            Registers::Vector(
                (0..tiles.rm * tiles.rn / 4)
                    .map(|i| k.var(&format!("acc{i}"), Exp::<Vec4<f32>>::zero()))
                    .collect(),
            )
        } else {
            Registers::Scalar(
                (0..tiles.rm * tiles.rn)
                    .map(|i| k.var(&format!("acc{i}"), 0.0f32))
                    .collect(),
            )
        }
    }
}

/// An H200 as wgpu reports it through Vulkan (1024 invocations and 48 KiB of workgroup memory
/// per workgroup), to be filled with 512 workgroups: the target the unit tests and the
/// snapshots choose for.
pub const H200: Target = Target::Gpu {
    workgroups: 512,
    max_invocations: 1024,
    shared_bytes: 49152,
};

/// Component `j` (0..4) of a `vec4`.
pub(crate) fn component<S: Scalar>(v: &Exp<Vec4<S>>, j: u32) -> Exp<S> {
    match j {
        0 => v.x(),
        1 => v.y(),
        2 => v.z(),
        _ => v.w(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_named_configurations_are_valid_and_named() {
        assert!(LARGE.is_valid() && SMALL.is_valid() && GROUPED.is_valid());
        assert_eq!(LARGE.workgroup(), [8, 8, 1]);
        assert_eq!(GROUPED.workgroup(), [8, 8, 4]);
        assert_eq!(SMALL.workgroup(), [8, 8, 4]);
        assert_eq!(GROUPED.invocations(), 256);
        assert_eq!(GROUPED.depth(), 64);
        assert_eq!(LARGE.suffix(), "t32x32x16r4x4");
        assert_eq!(GROUPED.suffix(), "t32x32x16r4x4g4");
        assert_eq!(SMALL.suffix(), "t16x16x16r2x2g4");
        // Padded tiles: 17 x 64 twice; 33 x 64 twice, or the groups' 4 x 32 x 32 sums.
        assert_eq!(SMALL.shared_floats(), 2 * 17 * 64);
        assert_eq!(GROUPED.shared_floats(), 2 * 33 * 64);
        // 16.5 KiB: past WebGPU's default 16 KiB.
        assert!(!GROUPED.fits(Target::gpu(512)));
        let too_deep = Tiles { tk: 128, ..SMALL };
        assert!(!too_deep.is_valid());
        let ragged = Tiles { tm: 30, ..LARGE };
        assert!(!ragged.is_valid());
        let too_many = Tiles { kg: 32, ..SMALL };
        assert!(!too_many.is_valid());
    }

    #[test]
    fn cpus_get_large_tiles_and_no_split() {
        assert_eq!(Tiles::for_product(128, 128, 784, Target::Cpu), LARGE);
        assert_eq!(split_k(16, 784, 16, Target::Cpu), 1);
    }

    #[test]
    fn gpus_get_grouped_tiles_within_their_limits_and_split_k() {
        // The 128 x 784 -> 128 forward at batch 128: 16 tiles of 32 x 32, so 64 of 16 x 16;
        // 784 = 13 steps of 64, 8 parts wanted, so 7 of two steps (the last of one).
        let t = Tiles::for_product(128, 128, 784, H200);
        assert_eq!(t, SMALL);
        assert_eq!(t.grid(128, 128), [8, 8, 1]);
        assert_eq!(split_k(64, 784, 64, H200), 7);
        assert_eq!(split_len(784, 7, 64), 128);
        // 32 x 32 tiles at 16 (13 parts of one step) and more.
        assert_eq!(split_k(16, 784, 64, H200), 13);
        assert_eq!(split_len(784, 13, 64), 64);
        // Batch 1024: 128 tiles of 32 x 32, 4 parts of 4 steps (the last of 1).
        assert_eq!(Tiles::for_product(1024, 128, 784, H200), GROUPED);
        assert_eq!(split_k(128, 784, 64, H200), 4);
        // Its weight gradient walks K = 1024: 8 groups, 8 steps of 128.
        let deep = Tiles::for_product(128, 785, 1024, H200);
        assert_eq!(deep, Tiles { kg: 8, ..GROUPED });
        assert_eq!((deep.invocations(), deep.depth()), (512, 128));
        assert_eq!(Tiles::for_product(128, 785, 1023, H200), GROUPED);
        // WebGPU's default 16 KiB of workgroup memory allow two groups of 32 x 32 tiles, its
        // 256 invocations four groups, not eight.
        assert_eq!(
            Tiles::for_product(1024, 128, 784, Target::gpu(512)),
            Tiles { kg: 2, ..GROUPED }
        );
        assert_eq!(Tiles::for_product(128, 128, 784, Target::gpu(512)), SMALL);
        assert_eq!(
            Tiles::for_product(128, 785, 4096, Target::gpu(512)),
            Tiles { kg: 2, ..GROUPED }
        );
        // A short K gets 8-deep slices; a device of 64 invocations one group, 32 KiB of
        // memory two.
        assert_eq!(Tiles::for_product(10, 129, 7, H200).tk, 8);
        let narrow = Target::Gpu {
            workgroups: 512,
            max_invocations: 64,
            shared_bytes: 16384,
        };
        assert_eq!(Tiles::for_product(128, 785, 128, narrow).kg, 1);
        let small_memory = Target::Gpu {
            workgroups: 512,
            max_invocations: 1024,
            shared_bytes: 8192,
        };
        let t = Tiles::for_product(128, 785, 128, small_memory);
        assert!(t.fits(small_memory) && t.kg < 4, "{t:?}");
        // Parts never exceed 16.
        assert_eq!(split_k(1, 100_000, 16, H200), 16);
        assert_eq!(split_k(1, 64, 128, H200), 1);
    }

    #[test]
    fn split_parts_cover_k() {
        for k in [1u32, 7, 16, 61, 784, 1000] {
            for parts in 1..=9 {
                let len = split_len(k, parts, 16);
                assert_eq!(len % 16, 0);
                assert!(len * parts >= k, "k {k} parts {parts}");
                // Within one step of an even split.
                assert!(len < k.div_ceil(parts) + 16, "k {k} parts {parts}");
            }
        }
        // The GPU's split: whole steps per part, no part empty.
        for k in [61usize, 197, 784, 1000, 4096] {
            for tiles in [1u32, 7, 64, 100, 512] {
                let parts = split_k(tiles, k, 64, H200);
                let len = split_len(k as u32, parts, 64) as usize;
                assert!(len * parts as usize >= k);
                assert!(len * (parts as usize - 1) < k, "k {k} tiles {tiles}");
            }
        }
    }
}
