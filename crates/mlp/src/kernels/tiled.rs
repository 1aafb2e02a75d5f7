//! The tiled matrix product shared by the linear forward and the two backward products.
//!
//! `C[m, n] = sum_k A[m, k] * B[k, n]` for `C [M, N]`: each workgroup of [`WORKGROUP`]
//! (8 x 8) invocations computes one `TILE_M x TILE_N` (32 x 32) tile of `C`, each invocation
//! `RM x RN` (4 x 4) outputs held in registers. `K` is walked `TILE_K` (16) at a time: the
//! workgroup copies a `32 x 16` block of `A` and a `16 x 32` block of `B` into workgroup
//! memory, synchronises (`workgroupBarrier`, WGSL spec §17.11), and each invocation
//! accumulates its 16 outputs from workgroup memory.
//!
//! Elements outside `[M, K]` or `[K, N]` are loaded as zero and outputs outside `[M, N]` are
//! not stored, so any sizes work. Every barrier is in uniform control flow: all invocations
//! run the same number of `K` steps (a uniform value) and only the final stores are guarded.
//!
//! Tile sizes: at batch 128 the 784 -> 128 forward is 16 workgroups and its weight gradient
//! 100. Measured on lavapipe (2 cores), a default-model training step at batch 128 takes
//! about 60 ms with 32 x 32 tiles and 4 x 4 outputs per invocation, 160 ms with 16 x 16 tiles
//! and 2 x 2, and 300 ms with 16 x 16 and one output per invocation. The constants below are
//! the only place to change for a GPU that wants more workgroups (16 x 16 tiles give 64).
//!
//! How each operand is read is an `Operand`: which buffer, the element index of `(row,
//! col)`, and which of the two is contiguous in memory (adjacent invocations then read
//! adjacent addresses when loading a tile).

use wgsl_dsl::prelude::*;

/// Rows of `C` per workgroup tile.
pub const TILE_M: u32 = 32;
/// Columns of `C` per workgroup tile.
pub const TILE_N: u32 = 32;
/// Depth of one step along `K` (elements of `A` and `B` staged in workgroup memory).
pub const TILE_K: u32 = 16;
/// Rows of `C` per invocation.
pub const RM: u32 = 4;
/// Columns of `C` per invocation.
pub const RN: u32 = 4;
/// The workgroup size: `[TILE_N / RN, TILE_M / RM, 1]`.
pub const WORKGROUP: [u32; 3] = [TILE_N / RN, TILE_M / RM, 1];
const INVOCATIONS: u32 = WORKGROUP[0] * WORKGROUP[1];
const A_ELEMS: usize = (TILE_M * TILE_K) as usize;
const B_ELEMS: usize = (TILE_K * TILE_N) as usize;

/// The buffer index of a logical element `(row, col)`.
pub(crate) type IndexFn<'a> = Box<dyn Fn(&Exp<u32>, &Exp<u32>) -> Exp<u32> + 'a>;

/// One operand of the product, a logical matrix `[rows, cols]` in a storage buffer.
pub(crate) struct Operand<'a> {
    /// The buffer holding it.
    pub buffer: &'a Buffer<f32, ReadOnly>,
    /// Logical rows.
    pub rows: Exp<u32>,
    /// Logical columns.
    pub cols: Exp<u32>,
    /// The buffer index of element `(row, col)`.
    pub index: IndexFn<'a>,
    /// True if consecutive columns are adjacent in memory (row-major), false if consecutive
    /// rows are (the matrix is stored transposed).
    pub cols_contiguous: bool,
}

impl<'a> Operand<'a> {
    /// `[rows, cols]` stored row-major from `offset` (0 if `None`): element `(r, c)` at
    /// `offset + r * cols + c`.
    pub(crate) fn row_major(
        buffer: &'a Buffer<f32, ReadOnly>,
        rows: Exp<u32>,
        cols: Exp<u32>,
        offset: Option<Exp<u32>>,
    ) -> Self {
        Operand::strided(buffer, rows, cols, offset, true)
    }

    /// `[rows, cols]` stored transposed (column-major) from `offset` (0 if `None`): element
    /// `(r, c)` at `offset + c * rows + r`.
    pub(crate) fn transposed(
        buffer: &'a Buffer<f32, ReadOnly>,
        rows: Exp<u32>,
        cols: Exp<u32>,
        offset: Option<Exp<u32>>,
    ) -> Self {
        Operand::strided(buffer, rows, cols, offset, false)
    }

    /// Row-major if `cols_contiguous`, else transposed: the index of `(r, c)` is `offset +
    /// outer * stride + inner`, with `(outer, inner)` = `(r, c)` and the stride `cols`, or
    /// `(c, r)` and `rows`.
    fn strided(
        buffer: &'a Buffer<f32, ReadOnly>,
        rows: Exp<u32>,
        cols: Exp<u32>,
        offset: Option<Exp<u32>>,
        cols_contiguous: bool,
    ) -> Self {
        let stride = if cols_contiguous { &cols } else { &rows }.clone();
        Operand {
            buffer,
            rows,
            cols,
            index: Box::new(move |r, c| {
                let (outer, inner) = if cols_contiguous { (r, c) } else { (c, r) };
                match &offset {
                    Some(o) => o + outer * &stride + inner,
                    None => outer * &stride + inner,
                }
            }),
            cols_contiguous,
        }
    }
}

/// What the product gives to the epilogue.
pub(crate) struct TileOutput {
    /// Row of `C`.
    pub row: Exp<u32>,
    /// Column of `C`.
    pub col: Exp<u32>,
    /// `C[row, col]`.
    pub value: Exp<f32>,
}

/// Emit the tiled product of `a [M, K]` and `b [K, N]` into `k`; `epilogue` is called for
/// each of the `RM x RN` outputs of an invocation, inside `if row < M && col < N`, to store
/// it. Dispatch [`tile_grid`]`(M, N)` workgroups of [`WORKGROUP`].
pub(crate) fn tiled_product(
    k: &mut KernelBuilder,
    a: Operand<'_>,
    b: Operand<'_>,
    epilogue: impl Fn(&mut KernelBuilder, TileOutput),
) {
    let a_tile = k.workgroup::<Array<f32, A_ELEMS>>("a_tile");
    let b_tile = k.workgroup::<Array<f32, B_ELEMS>>("b_tile");
    let tx = k.let_("tx", local_invocation_id().x());
    let ty = k.let_("ty", local_invocation_id().y());
    let lid = k.let_("lid", local_invocation_index());
    let m_size = k.let_("m_size", a.rows.clone());
    let n_size = k.let_("n_size", b.cols.clone());
    let k_size = k.let_("k_size", a.cols.clone());
    let tile_row0 = k.let_("tile_row0", workgroup_id().y() * TILE_M);
    let tile_col0 = k.let_("tile_col0", workgroup_id().x() * TILE_N);
    let acc: Vec<Var<f32>> = (0..RM * RN)
        .map(|i| k.var(&format!("acc{i}"), 0.0f32))
        .collect();
    let tiles = k.let_("k_tiles", (&k_size + (TILE_K - 1)) / TILE_K);
    k.for_range("t", 0u32, tiles, |k, t| {
        let k0 = k.let_("k0", t * TILE_K);
        load_tile(k, &a_tile, &a, [TILE_M, TILE_K], &tile_row0, &k0, &lid, "a");
        load_tile(k, &b_tile, &b, [TILE_K, TILE_N], &k0, &tile_col0, &lid, "b");
        k.workgroup_barrier();
        for kk in 0..TILE_K {
            let av: Vec<Exp<f32>> = (0..RM)
                .map(|i| {
                    let r = &ty + i * WORKGROUP[1];
                    k.let_(&format!("a{i}"), a_tile.at(r * TILE_K + kk).load())
                })
                .collect();
            let bv: Vec<Exp<f32>> = (0..RN)
                .map(|j| {
                    let c = &tx + j * WORKGROUP[0];
                    k.let_(&format!("b{j}"), b_tile.at(c + kk * TILE_N).load())
                })
                .collect();
            for i in 0..RM as usize {
                for j in 0..RN as usize {
                    let acc = &acc[i * RN as usize + j];
                    k.update(acc, |s| fma(av[i].clone(), bv[j].clone(), s));
                }
            }
        }
        k.workgroup_barrier();
    });
    for i in 0..RM {
        for j in 0..RN {
            let row = k.let_(&format!("row{i}"), &tile_row0 + &ty + i * WORKGROUP[1]);
            let col = k.let_(&format!("col{j}"), &tile_col0 + &tx + j * WORKGROUP[0]);
            let value = acc[(i * RN + j) as usize].load();
            k.if_(row.lt(&m_size).and(col.lt(&n_size)), |k| {
                let value = k.let_("value", value);
                epilogue(k, TileOutput { row, col, value });
            });
        }
    }
}

/// `tile[r * cols + c] = op[r0 + r, c0 + c]` (zero outside the matrix) for the `[rows,
/// cols]` tile, loaded cooperatively by the workgroup's invocations; consecutive invocations
/// read consecutive addresses along the operand's contiguous dimension.
#[allow(clippy::too_many_arguments)]
fn load_tile<const N: usize>(
    k: &mut KernelBuilder,
    tile: &Place<Array<f32, N>>,
    op: &Operand<'_>,
    [rows, cols]: [u32; 2],
    r0: &Exp<u32>,
    c0: &Exp<u32>,
    lid: &Exp<u32>,
    prefix: &str,
) {
    for j in 0..(rows * cols).div_ceil(INVOCATIONS) {
        let e = k.let_(&format!("{prefix}_e"), lid + j * INVOCATIONS);
        let (r, c) = if op.cols_contiguous {
            (&e / cols, &e % cols)
        } else {
            (&e % rows, &e / rows)
        };
        let r = k.let_(&format!("{prefix}_r"), r);
        let c = k.let_(&format!("{prefix}_c"), c);
        let slot = tile.at(&r * cols + &c);
        let row = k.let_(&format!("{prefix}_row"), r0 + &r);
        let col = k.let_(&format!("{prefix}_col"), c0 + &c);
        k.if_else(
            row.lt(op.rows.clone()).and(col.lt(op.cols.clone())),
            |k| k.store(&slot, op.buffer.at((op.index)(&row, &col)).load()),
            |k| k.store(&slot, 0.0f32),
        );
    }
}

/// `[x, y, 1]` workgroups covering `C [rows, cols]` with `TILE_M x TILE_N` tiles (`x` along
/// columns).
pub fn tile_grid(rows: usize, cols: usize) -> [u32; 3] {
    [
        cols.div_ceil(TILE_N as usize) as u32,
        rows.div_ceil(TILE_M as usize) as u32,
        1,
    ]
}
