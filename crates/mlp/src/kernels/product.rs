//! The shape-aware tiled product of the fused training step (design decision 14): the same
//! algorithm as [`super::tiled`] (a workgroup computes a `tm x tn` tile of `C`, each invocation
//! `rm x rn` outputs in registers, `K` walked `tk` at a time through workgroup memory), with the
//! tile sizes a [`Tiles`] value chosen at kernel-build time from the problem's shape and the
//! device ([`Tiles::for_product`]), a `K` range (for split-K), and operands given as loads
//! rather than buffers (a batch read through the permutation, a column of ones that turns a
//! weight gradient's product into the bias gradient too).
//!
//! Elements outside `[M, K]`, `[K, N]` or the `K` range are zero and outputs outside `[M, N]` are
//! not stored, so any sizes work. Every barrier is in uniform control flow.

use wgsl_dsl::prelude::*;

/// Elements of each workgroup tile buffer: `tm * tk` and `tk * tn` must fit.
pub const TILE_CAPACITY: usize = 1024;

/// Where the product runs: what [`Tiles::for_product`] optimises for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A software rasteriser on a few CPU cores (Mesa lavapipe): few large workgroups, the
    /// fewest workgroup barriers; no split-K.
    Cpu,
    /// A GPU with many multiprocessors: enough workgroups to fill it (`workgroups` at least),
    /// short `K` walks (split-K where the product's consumer sums the parts).
    Gpu {
        /// Workgroups that fill the device (e.g. 4 per multiprocessor).
        workgroups: u32,
    },
}

impl Target {
    /// The target of a device: [`Target::Cpu`] for software adapters, else a GPU to be filled
    /// with 512 workgroups (4 per multiprocessor of an H100/H200).
    pub fn of(gpu: &wgsl_dsl::runtime::Gpu) -> Target {
        if gpu.is_software() {
            Target::Cpu
        } else {
            Target::Gpu { workgroups: 512 }
        }
    }
}

/// A tile configuration: `tm x tn` outputs per workgroup, `rm x rn` per invocation, `tk` deep
/// steps along `K`. The workgroup is `[tn / rn, tm / rm, 1]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Tiles {
    /// Rows of `C` per workgroup.
    pub tm: u32,
    /// Columns of `C` per workgroup.
    pub tn: u32,
    /// Depth of one step along `K`.
    pub tk: u32,
    /// Rows of `C` per invocation.
    pub rm: u32,
    /// Columns of `C` per invocation.
    pub rn: u32,
}

/// 32 x 32 tiles of 4 x 4 per invocation, 16 deep: the CPU's (and [`super::tiled`]'s).
pub const LARGE: Tiles = Tiles {
    tm: 32,
    tn: 32,
    tk: 16,
    rm: 4,
    rn: 4,
};
/// 16 x 16 tiles of 2 x 2 per invocation, 32 deep: 4 times the workgroups of [`LARGE`], half the
/// barriers per `K`.
pub const SMALL: Tiles = Tiles {
    tm: 16,
    tn: 16,
    tk: 32,
    rm: 2,
    rn: 2,
};

impl Tiles {
    /// The workgroup size.
    pub fn workgroup(&self) -> [u32; 3] {
        [self.tn / self.rn, self.tm / self.rm, 1]
    }

    /// Invocations per workgroup.
    pub fn invocations(&self) -> u32 {
        (self.tn / self.rn) * (self.tm / self.rm)
    }

    /// Workgroups `[x, y, 1]` covering `C [rows, cols]` (`x` along columns).
    pub fn grid(&self, rows: usize, cols: usize) -> [u32; 3] {
        [
            cols.div_ceil(self.tn as usize) as u32,
            rows.div_ceil(self.tm as usize) as u32,
            1,
        ]
    }

    /// `t{tm}x{tn}x{tk}r{rm}x{rn}`: the configuration in a kernel name.
    pub fn suffix(&self) -> String {
        format!(
            "t{}x{}x{}r{}x{}",
            self.tm, self.tn, self.tk, self.rm, self.rn
        )
    }

    /// True if the configuration is usable: the tiles divide by the per-invocation block,
    /// fit [`TILE_CAPACITY`], and give 1 to 256 invocations.
    pub fn is_valid(&self) -> bool {
        let fits = |a: u32, b: u32| (a as usize) * (b as usize) <= TILE_CAPACITY;
        self.rm > 0
            && self.rn > 0
            && self.tk > 0
            && self.tm.is_multiple_of(self.rm)
            && self.tn.is_multiple_of(self.rn)
            && fits(self.tm, self.tk)
            && fits(self.tk, self.tn)
            && (1..=256).contains(&self.invocations())
    }

    /// The tiles for `C [m, n] = A [m, k] B [k, n]` on `target`: [`LARGE`] on a CPU, and on a GPU
    /// [`LARGE`] when it already gives the target's workgroups, else [`SMALL`].
    pub fn for_product(m: usize, n: usize, target: Target) -> Tiles {
        match target {
            Target::Cpu => LARGE,
            Target::Gpu { workgroups } => {
                let [x, y, _] = LARGE.grid(m, n);
                if u64::from(x) * u64::from(y) >= u64::from(workgroups) {
                    LARGE
                } else {
                    SMALL
                }
            }
        }
    }
}

/// How many parts to split `K` into for a product of `tiles_count` workgroups whose consumer
/// sums the parts: 1 on a CPU; on a GPU enough parts to reach the target's workgroups, each at
/// least two `tk` steps deep, at most 16.
pub fn split_k(tiles_count: u32, k: usize, tk: u32, target: Target) -> u32 {
    match target {
        Target::Cpu => 1,
        Target::Gpu { workgroups } => {
            let steps = k.div_ceil(tk as usize).max(1) as u32;
            let wanted = workgroups.div_ceil(tiles_count.max(1));
            wanted.min(steps / 2).clamp(1, 16)
        }
    }
}

/// `K` elements per part when `k` is split into `parts`: a multiple of `tk`.
pub fn split_len(k: u32, parts: u32, tk: u32) -> u32 {
    k.div_ceil(parts.max(1)).div_ceil(tk) * tk
}

/// The operand's element `(row, col)`. It is evaluated for every slot of a tile, also outside
/// the operand (then its value is discarded), so it must only read memory: WGSL bounds every
/// access (an out-of-bounds read returns a value of the buffer or zero, never undefined
/// behaviour), which makes the unconditional read safe, and lets the tile's loads be issued
/// together instead of one branch (and one memory latency) at a time.
pub(crate) type ValueFn<'a> = Box<dyn Fn(&Exp<u32>, &Exp<u32>) -> Exp<f32> + 'a>;

/// One operand, a logical matrix `[rows, cols]`.
pub(crate) struct Source<'a> {
    /// Logical rows.
    pub rows: Exp<u32>,
    /// Logical columns.
    pub cols: Exp<u32>,
    /// Element `(row, col)`.
    pub value: ValueFn<'a>,
    /// True if consecutive columns are adjacent in memory, false if consecutive rows are: the
    /// tile is loaded so that adjacent invocations read adjacent addresses.
    pub cols_contiguous: bool,
}

/// What the product gives the epilogue, for each output inside `[M, N]`.
pub(crate) struct Output {
    /// Row of `C`.
    pub row: Exp<u32>,
    /// Column of `C`.
    pub col: Exp<u32>,
    /// `C[row, col]` over the `K` range.
    pub value: Exp<f32>,
}

/// The workgroup memory of a product: one `A` and one `B` tile buffer, shared by every
/// product a kernel emits.
pub(crate) struct TileMemory {
    a: Place<Array<f32, TILE_CAPACITY>>,
    b: Place<Array<f32, TILE_CAPACITY>>,
}

impl TileMemory {
    /// Declare the buffers (`a_tile`, `b_tile`).
    pub(crate) fn declare(k: &mut KernelBuilder) -> TileMemory {
        TileMemory {
            a: k.workgroup::<Array<f32, TILE_CAPACITY>>("a_tile"),
            b: k.workgroup::<Array<f32, TILE_CAPACITY>>("b_tile"),
        }
    }
}

/// Emit `C = A B` over `K` in `[k_begin, k_end)` into `k` with `tiles`; `epilogue` stores each
/// output. Dispatch [`Tiles::grid`]`(M, N)` workgroups of [`Tiles::workgroup`].
///
/// # Panics
/// If `tiles` is not [`Tiles::is_valid`] (a bug in the configuration chooser, not user input).
pub(crate) fn product(
    k: &mut KernelBuilder,
    tiles: Tiles,
    a: Source<'_>,
    b: Source<'_>,
    k_begin: Exp<u32>,
    k_end: Exp<u32>,
    epilogue: impl Fn(&mut KernelBuilder, Output),
) {
    let memory = TileMemory::declare(k);
    let tile = [workgroup_id().y(), workgroup_id().x()];
    product_at(k, tiles, &memory, tile, a, b, k_begin, k_end, epilogue);
}

/// As [`product`], for the tile `[row, column]` (in tiles) given, with `memory` declared by the
/// caller: a kernel can hold several products (in branches uniform per workgroup).
#[allow(clippy::too_many_arguments)]
pub(crate) fn product_at(
    k: &mut KernelBuilder,
    tiles: Tiles,
    memory: &TileMemory,
    [tile_row, tile_col]: [Exp<u32>; 2],
    a: Source<'_>,
    b: Source<'_>,
    k_begin: Exp<u32>,
    k_end: Exp<u32>,
    epilogue: impl Fn(&mut KernelBuilder, Output),
) {
    assert!(tiles.is_valid(), "invalid tiles {tiles:?}");
    let Tiles { tm, tn, tk, rm, rn } = tiles;
    let [wx, wy, _] = tiles.workgroup();
    let (a_tile, b_tile) = (&memory.a, &memory.b);
    let tx = k.let_("tx", local_invocation_id().x());
    let ty = k.let_("ty", local_invocation_id().y());
    let lid = k.let_("lid", local_invocation_index());
    let m_size = k.let_("m_size", a.rows.clone());
    let n_size = k.let_("n_size", b.cols.clone());
    let k_begin = k.let_("k_begin", k_begin);
    let k_end = k.let_("k_end", min(k_end, a.cols.clone()));
    let tile_row0 = k.let_("tile_row0", tile_row * tm);
    let tile_col0 = k.let_("tile_col0", tile_col * tn);
    let acc: Vec<Var<f32>> = (0..rm * rn)
        .map(|i| k.var(&format!("acc{i}"), 0.0f32))
        .collect();
    let steps = k.let_(
        "k_steps",
        k_end
            .gt(&k_begin)
            .select((&k_end - &k_begin + (tk - 1)) / tk, 0u32),
    );
    let invocations = tiles.invocations();
    k.for_range("t", 0u32, steps, |k, t| {
        let k0 = k.let_("k0", &k_begin + t * tk);
        load_tile(
            k,
            a_tile,
            &a,
            [tm, tk],
            [&tile_row0, &k0],
            [&m_size, &k_end],
            &lid,
            invocations,
            "a",
        );
        load_tile(
            k,
            b_tile,
            &b,
            [tk, tn],
            [&k0, &tile_col0],
            [&k_end, &n_size],
            &lid,
            invocations,
            "b",
        );
        k.workgroup_barrier();
        for kk in 0..tk {
            let av: Vec<Exp<f32>> = (0..rm)
                .map(|i| {
                    let r = &ty + i * wy;
                    k.let_(&format!("a{i}"), a_tile.at(r * tk + kk).load())
                })
                .collect();
            let bv: Vec<Exp<f32>> = (0..rn)
                .map(|j| {
                    let c = &tx + j * wx;
                    k.let_(&format!("b{j}"), b_tile.at(c + kk * tn).load())
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
        k.workgroup_barrier();
    });
    for i in 0..rm {
        for j in 0..rn {
            let row = k.let_(&format!("row{i}"), &tile_row0 + &ty + i * wy);
            let col = k.let_(&format!("col{j}"), &tile_col0 + &tx + j * wx);
            let value = acc[(i * rn + j) as usize].load();
            k.if_(row.lt(&m_size).and(col.lt(&n_size)), |k| {
                let value = k.let_("value", value);
                epilogue(k, Output { row, col, value });
            });
        }
    }
}

/// `tile[r * cols + c] = op[r0 + r, c0 + c]`, zero outside `[0, limit)` in each dimension (the
/// operand's bounds, and the end of the `K` range), loaded cooperatively: every invocation first
/// reads all its elements into registers (independent loads, in flight together), then stores
/// them.
#[allow(clippy::too_many_arguments)]
fn load_tile(
    k: &mut KernelBuilder,
    tile: &Place<Array<f32, TILE_CAPACITY>>,
    op: &Source<'_>,
    [rows, cols]: [u32; 2],
    [r0, c0]: [&Exp<u32>; 2],
    [row_limit, col_limit]: [&Exp<u32>; 2],
    lid: &Exp<u32>,
    invocations: u32,
    prefix: &str,
) {
    let per = (rows * cols).div_ceil(invocations);
    let mut loaded = Vec::new();
    for j in 0..per {
        // Slots past the tile (when the invocations do not divide it) wrap onto slot
        // `e - rows * cols` and are not stored.
        let e = k.let_(&format!("{prefix}_e"), lid + j * invocations);
        let (r, c) = if op.cols_contiguous {
            (&e / cols % rows, &e % cols)
        } else {
            (&e % rows, &e / rows % cols)
        };
        let r = k.let_(&format!("{prefix}_r"), r);
        let c = k.let_(&format!("{prefix}_c"), c);
        let row = k.let_(&format!("{prefix}_row"), r0 + &r);
        let col = k.let_(&format!("{prefix}_col"), c0 + &c);
        let inside = row
            .lt(row_limit.clone())
            .and(col.lt(col_limit.clone()))
            .and(row.lt(op.rows.clone()))
            .and(col.lt(op.cols.clone()));
        // Outside the matrix, load element (0, 0) instead and discard it: the load stays in
        // bounds (the interpreter reports out-of-bounds reads a GPU would hide).
        let inside = k.let_(&format!("{prefix}_inside"), inside);
        let (lr, lc) = (inside.select(&row, 0u32), inside.select(&col, 0u32));
        let v = k.let_(
            &format!("{prefix}_v"),
            inside.select((op.value)(&lr, &lc), 0.0f32),
        );
        loaded.push((e, r * cols + c, v, (j + 1) * invocations > rows * cols));
    }
    for (e, slot, v, partial) in loaded {
        if partial {
            k.if_(e.lt(rows * cols), |k| k.store(&tile.at(slot), v));
        } else {
            k.store(&tile.at(slot), v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_named_configurations_are_valid_and_named() {
        assert!(LARGE.is_valid() && SMALL.is_valid());
        assert_eq!(LARGE.workgroup(), [8, 8, 1]);
        assert_eq!(SMALL.workgroup(), [8, 8, 1]);
        assert_eq!(LARGE.suffix(), "t32x32x16r4x4");
        assert!(
            !Tiles {
                tm: 64,
                tn: 64,
                tk: 32,
                rm: 4,
                rn: 4
            }
            .is_valid()
        );
        assert!(
            !Tiles {
                tm: 30,
                tn: 32,
                tk: 16,
                rm: 4,
                rn: 4
            }
            .is_valid()
        );
    }

    #[test]
    fn cpus_get_large_tiles_and_no_split() {
        assert_eq!(Tiles::for_product(128, 128, Target::Cpu), LARGE);
        assert_eq!(split_k(16, 784, 16, Target::Cpu), 1);
    }

    #[test]
    fn small_gpu_products_get_small_tiles_and_split_k() {
        let gpu = Target::Gpu { workgroups: 512 };
        // The 128 x 784 -> 128 forward at batch 128: 16 large tiles, so small ones (64) and
        // K split 8 ways (784 = 25 steps of 32; 512 / 64 = 8 parts of 4 steps).
        assert_eq!(Tiles::for_product(128, 128, gpu), SMALL);
        assert_eq!(SMALL.grid(128, 128), [8, 8, 1]);
        assert_eq!(split_k(64, 784, 32, gpu), 8);
        assert_eq!(split_len(784, 8, 32), 128);
        // Batch 4096: 512 large tiles fill it alone.
        assert_eq!(Tiles::for_product(4096, 128, gpu), LARGE);
        assert_eq!(split_k(512, 784, 16, gpu), 1);
        // A short K is never split below two steps per part.
        assert_eq!(split_k(1, 64, 32, gpu), 1);
        assert_eq!(split_k(1, 10_000, 16, gpu), 16);
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
    }
}
