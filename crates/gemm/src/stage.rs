//! What the kernels share: their first `let`s ([`Start`]), the order of the tiles of `C`,
//! staging tiles of an operand from a storage buffer into workgroup memory, four elements at a
//! time ([`Stager`]), and the loop over `K` of the staged kernels through one or two buffers
//! of workgroup memory ([`Pipeline`]).

use wgsl_dsl::prelude::*;
use wgsl_dsl::types::Scalar;

use crate::config::{Blocks, GROUP_M, TileConfig, WideLoad};
use crate::tiled::component;
use crate::{GemmDims, GemmDimsFields};

/// The tile `(tile_m, tile_n)` of `C` this workgroup computes. The grid is
/// `[tiles along N, tiles along M, 1]`; its workgroups are numbered row by row and handed out
/// in groups of [`GROUP_M`] tile rows, down each column of the group before the next column,
/// so that workgroups running together read the same rows of `A` and columns of `B`.
pub(crate) fn tile_coords(k: &mut KernelBuilder) -> (Exp<u32>, Exp<u32>) {
    let wg = workgroup_id();
    let grid = num_workgroups();
    let grid_n = k.let_("grid_n", grid.x());
    let grid_m = k.let_("grid_m", grid.y());
    let pid = k.let_("pid", wg.y() * &grid_n + wg.x());
    let width = k.let_("group_width", &grid_n * GROUP_M);
    let first_m = k.let_("first_m", (&pid / &width) * GROUP_M);
    let rows = k.let_("group_rows", min(&grid_m - &first_m, GROUP_M));
    let in_group = k.let_("in_group", &pid % &width);
    let tile_m = k.let_("tile_m", &first_m + &in_group % &rows);
    let tile_n = k.let_("tile_n", &in_group / &rows);
    (tile_m, tile_n)
}

/// A storage buffer holding an operand, read one element, four or eight elements at a time.
pub(crate) enum Global<E> {
    /// `array<E>`
    Scalar(Buffer<E, ReadOnly>),
    /// `array<vec4<E>>`: the stored rows are a multiple of 4 long.
    Vec4(Buffer<Vec4<E>, ReadOnly>),
    /// `array<array<vec4<E>, 2>>` ([`WideLoad::Pairs`]): the stored rows are a multiple of 8
    /// long.
    Pairs(Buffer<Array<Vec4<E>, 2>, ReadOnly>),
    /// `array<vec4<u32>>` holding the bits of eight elements each ([`WideLoad::Words`]),
    /// turned into two `vec4<E>` by the function (the stored rows are a multiple of 8 long).
    Words(Buffer<Vec4<u32>, ReadOnly>, Unpack<E>),
}

/// Eight elements from the bits of a `vec4<u32>`, bound as `let`s named after the `&str`.
pub(crate) type Unpack<E> = fn(&mut KernelBuilder, &str, &Exp<Vec4<u32>>) -> [Exp<Vec4<E>>; 2];

/// How a kernel reads an operand's storage buffer.
#[derive(Clone, Copy)]
pub(crate) enum Access<E> {
    /// One element at a time (`array<E>`).
    Scalar,
    /// Four (`array<vec4<E>>`).
    Vec4,
    /// Eight, as [`WideLoad`] says; [`WideLoad::Words`] with the function that unpacks them.
    Wide(WideLoad, Option<Unpack<E>>),
}

impl<E: Scalar + Literal0> Global<E> {
    /// Declare the next binding, `array<vec4<E>>` if `vector`, else `array<E>`.
    pub(crate) fn declare(k: &mut KernelBuilder, name: &str, vector: bool) -> Global<E> {
        let access = if vector { Access::Vec4 } else { Access::Scalar };
        Global::declare_for(k, name, access)
    }

    /// Declare the next binding for `access`. [`WideLoad::Words`] without its function reads
    /// as [`WideLoad::Pairs`] (no `unpack` for `E`; [`crate::CoopConfig::valid`] refuses wide
    /// loads of `f32`).
    pub(crate) fn declare_for(k: &mut KernelBuilder, name: &str, access: Access<E>) -> Global<E> {
        match access {
            Access::Scalar => Global::Scalar(k.storage::<RuntimeArray<E>, ReadOnly>(name)),
            Access::Vec4 => Global::Vec4(k.storage::<RuntimeArray<Vec4<E>>, ReadOnly>(name)),
            Access::Wide(WideLoad::Words, Some(unpack)) => {
                Global::Words(k.storage::<RuntimeArray<Vec4<u32>>, ReadOnly>(name), unpack)
            }
            Access::Wide(_, _) => {
                Global::Pairs(k.storage::<RuntimeArray<Array<Vec4<E>, 2>>, ReadOnly>(name))
            }
        }
    }

    /// Elements per chunk a [`Stager`] moves: 8 for the wide accesses, else 4.
    fn chunk(&self) -> u32 {
        match self {
            Global::Scalar(_) | Global::Vec4(_) => 4,
            Global::Pairs(_) | Global::Words(..) => 8,
        }
    }
}

/// [`Unpack`] for `f16`: each word's two halves by `unpack2x16float`, then each `vec4<f32>`
/// converted to `vec4<f16>` (exact). Element `2 i` of the eight is the low half of word `i`
/// (the buffer's bytes, little-endian, as stored from `&[f16]`).
pub(crate) fn unpack_f16(
    k: &mut KernelBuilder,
    name: &str,
    words: &Exp<Vec4<u32>>,
) -> [Exp<Vec4<half::f16>>; 2] {
    let parts = [words.x(), words.y(), words.z(), words.w()];
    let halves: Vec<Exp<Vec2<f32>>> = parts
        .into_iter()
        .enumerate()
        .map(|(i, w)| k.let_(&format!("{name}_h{i}"), unpack2x16float(w)))
        .collect();
    let four = |a: &Exp<Vec2<f32>>, b: &Exp<Vec2<f32>>| vec4(a.x(), a.y(), b.x(), b.y()).to_f16();
    [four(&halves[0], &halves[1]), four(&halves[2], &halves[3])]
}

/// Scalars with a zero literal (for the elements outside a matrix).
pub(crate) trait Literal0: Scalar {
    fn zero() -> Exp<Self>;
}
impl Literal0 for f32 {
    fn zero() -> Exp<f32> {
        lit(0.0f32)
    }
}
impl Literal0 for half::f16 {
    fn zero() -> Exp<half::f16> {
        lit(half::f16::ZERO)
    }
}

/// How a staged tile lies in workgroup memory: a `vec4` array of two buffers, each of `rows`
/// rows `row_stride` vectors apart.
pub(crate) struct Placement {
    /// Rows of the staged tile.
    pub rows: u32,
    /// Vectors from one row of the staged tile to the next.
    pub row_stride: u32,
    /// The tile is stored transposed: a stored row `r` of the operand becomes column `r` of
    /// the staged tile (each of the four elements of a chunk goes to its own row).
    pub transposed: bool,
}

/// Copies `tile_rows x tile_cols` tiles (in the operand's stored orientation) of a row-major
/// matrix `[rows, cols]` into workgroup memory: each invocation moves the same chunks of four
/// (eight for the wide accesses) consecutive elements of a row at every step, loading them
/// ([`Stager::load`]) before the multiply-adds of the previous step and storing them
/// ([`Stager::store`]) after. Elements outside the matrix are zero.
pub(crate) struct Stager<E> {
    global: Global<E>,
    rows: Exp<u32>,
    cols: Exp<u32>,
    /// Per chunk of this invocation: its row and first column within the tile, and whether
    /// the chunk exists (when the tile has fewer chunks than the workgroup's invocations
    /// times the chunks per invocation).
    chunks: Vec<Chunk>,
    /// Chunks are checked against the matrix's rows and columns (outside: zero); without,
    /// the tiles must lie wholly inside the matrix.
    checked: bool,
}

/// One chunk of four (or eight) elements an invocation moves: its row and first column within the
/// tile, and whether it exists (`None`: always).
type Chunk = (Exp<u32>, Exp<u32>, Option<Exp<bool>>);

impl<E: Scalar + Literal0> Stager<E> {
    /// The chunks invocation `local` of `threads` moves for a tile of `tile_rows x tile_cols`
    /// (`tile_cols` a multiple of the chunk, 4 or 8) of the matrix `global [rows, cols]`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        k: &mut KernelBuilder,
        name: &str,
        global: Global<E>,
        rows: Exp<u32>,
        cols: Exp<u32>,
        tile_rows: u32,
        tile_cols: u32,
        local: &Exp<u32>,
        threads: u32,
    ) -> Stager<E> {
        let chunk = global.chunk();
        let per_row = tile_cols / chunk;
        let total = tile_rows * per_row;
        let mut chunks = Vec::new();
        for i in 0..total.div_ceil(threads) {
            let q = k.let_(&format!("{name}_chunk{i}"), local + i * threads);
            let r = k.let_(&format!("{name}_row{i}"), &q / per_row);
            let c = k.let_(&format!("{name}_col{i}"), (&q % per_row) * chunk);
            let exists = (!total.is_multiple_of(threads)).then(|| q.lt(total));
            chunks.push((r, c, exists));
        }
        Stager {
            global,
            rows,
            cols,
            chunks,
            checked: true,
        }
    }

    /// Load this invocation's chunks of the tile whose first element is `(row0, col0)`, each
    /// converted by `convert`, as `let`s named `name0`, `name1`, ... (a wide chunk's two
    /// `vec4`s `name0_0`, `name0_1`, ...).
    pub(crate) fn load<S: Scalar>(
        &self,
        k: &mut KernelBuilder,
        name: &str,
        row0: &Exp<u32>,
        col0: &Exp<u32>,
        convert: &dyn Fn(Exp<Vec4<E>>) -> Exp<Vec4<S>>,
    ) -> Vec<Exp<Vec4<S>>> {
        let mut values = Vec::new();
        for (i, (r, c, exists)) in self.chunks.iter().enumerate() {
            let row = row0 + r;
            let col = col0 + c;
            // Whether the chunk is read: inside the matrix (and existing), or, without bounds
            // checks, existing; `None`: always.
            let guard = |k: &mut KernelBuilder, cols: bool| -> Option<Exp<bool>> {
                if !self.checked {
                    return exists
                        .as_ref()
                        .map(|e| k.let_(&format!("{name}_in{i}"), e.clone()));
                }
                let row_in = match exists {
                    Some(e) => row.lt(&self.rows).and(e),
                    None => row.lt(&self.rows),
                };
                Some(if cols {
                    k.let_(&format!("{name}_in{i}"), row_in.and(col.lt(&self.cols)))
                } else {
                    k.let_(&format!("{name}_row_in{i}"), row_in)
                })
            };
            // `load(index)`, or `zero` where `guard` is false (reading element 0 instead).
            fn guarded<V: wgsl_dsl::types::ScalarOrVector>(
                guard: &Option<Exp<bool>>,
                index: Exp<u32>,
                load: impl Fn(Exp<u32>) -> Exp<V>,
                zero: impl Fn() -> Exp<V>,
            ) -> Exp<V> {
                match guard {
                    Some(g) => g.select(load(g.select(index, 0u32)), zero()),
                    None => load(index),
                }
            }
            let value = match &self.global {
                Global::Pairs(buf) => {
                    let guard = guard(k, true);
                    let index = (&row * &self.cols + &col) / 8u32;
                    let safe = match &guard {
                        Some(g) => g.select(index, 0u32),
                        None => index,
                    };
                    let pair = k.let_(&format!("{name}_pair{i}"), buf.at(safe).load());
                    for h in 0..2u32 {
                        let half = match &guard {
                            Some(g) => g.select(pair.index(h), Exp::<Vec4<E>>::zero()),
                            None => pair.index(h),
                        };
                        values.push(k.let_(&format!("{name}{i}_{h}"), convert(half)));
                    }
                    continue;
                }
                Global::Words(buf, unpack) => {
                    let guard = guard(k, true);
                    let index = (&row * &self.cols + &col) / 8u32;
                    let words = guarded(
                        &guard,
                        index,
                        |at| buf.at(at).load(),
                        || Exp::<Vec4<u32>>::zero(),
                    );
                    let words = k.let_(&format!("{name}_words{i}"), words);
                    let halves = unpack(k, &format!("{name}{i}"), &words);
                    for (h, half) in halves.into_iter().enumerate() {
                        values.push(k.let_(&format!("{name}{i}_{h}"), convert(half)));
                    }
                    continue;
                }
                Global::Vec4(buf) => {
                    let guard = guard(k, true);
                    let index = (&row * &self.cols + &col) / 4u32;
                    guarded(
                        &guard,
                        index,
                        |at| buf.at(at).load(),
                        || Exp::<Vec4<E>>::zero(),
                    )
                }
                Global::Scalar(buf) => {
                    let row_in = guard(k, false);
                    let base = k.let_(&format!("{name}_at{i}"), &row * &self.cols + &col);
                    let element = |j: u32| {
                        let inside = match (&row_in, self.checked) {
                            (Some(r), true) => Some(r.and((&col + j).lt(&self.cols))),
                            (r, _) => r.clone(),
                        };
                        guarded(&inside, &base + j, |at| buf.at(at).load(), E::zero)
                    };
                    vec4(element(0), element(1), element(2), element(3))
                }
            };
            values.push(k.let_(&format!("{name}{i}"), convert(value)));
        }
        values
    }

    /// Store `values` (from [`Stager::load`]) into the staged tile starting at vector `base`
    /// of `shared`.
    pub(crate) fn store<S: Scalar>(
        &self,
        k: &mut KernelBuilder,
        values: &[Exp<Vec4<S>>],
        shared: &Tiles<S>,
        base: &Exp<u32>,
        placement: &Placement,
    ) {
        let per_chunk = (self.global.chunk() / 4) as usize;
        for ((r, c, exists), chunk) in self.chunks.iter().zip(values.chunks(per_chunk)) {
            let write = |k: &mut KernelBuilder| {
                for (h, value) in (0u32..).zip(chunk) {
                    // The vector's first element is column `c + 4 h` of the stored row `r`.
                    let c = if h == 0 { c.clone() } else { c + 4 * h };
                    if placement.transposed {
                        // Element j of the vector is stored row c + j, column r.
                        for j in 0..4u32 {
                            let at = base + (&c + j) * placement.row_stride + r / 4u32;
                            k.store(&shared.at(at).at(r % 4u32), component(value, j));
                        }
                    } else {
                        let at = base + r * placement.row_stride + &c / 4u32;
                        k.store(&shared.at(at), value);
                    }
                }
            };
            match exists {
                Some(e) => k.if_(e, write),
                None => write(k),
            }
        }
    }
}

/// The `let`s every kernel starts with: the problem's sizes from the `dims` uniform, this
/// invocation's index in its workgroup, and the tile of `C` its workgroup computes
/// ([`tile_coords`]).
pub(crate) struct Start {
    /// Rows of `C` (`M`).
    pub m: Exp<u32>,
    /// Columns of `C` (`N`).
    pub n: Exp<u32>,
    /// The length of the products (`K`).
    pub depth: Exp<u32>,
    /// `local_invocation_index`.
    pub local: Exp<u32>,
    /// The tile's row among the tiles of `C`.
    pub tile_m: Exp<u32>,
    /// The tile's column among the tiles of `C`.
    pub tile_n: Exp<u32>,
}

impl Start {
    /// Emit the `let`s `m`, `n`, `depth`, `local` and those of [`tile_coords`].
    pub(crate) fn new(k: &mut KernelBuilder, dims: &Place<GemmDims, ReadOnly>) -> Start {
        let m = k.let_("m", dims.m().load());
        let n = k.let_("n", dims.n().load());
        let depth = k.let_("depth", dims.k().load());
        let local = k.let_("local", local_invocation_index());
        let (tile_m, tile_n) = tile_coords(k);
        Start {
            m,
            n,
            depth,
            local,
            tile_m,
            tile_n,
        }
    }
}

/// A workgroup array of `vec4`s holding staged tiles.
pub(crate) type Tiles<S> = Place<SizedArray<Vec4<S>>, ReadWrite>;

/// One operand's buffers (one or two) in workgroup memory: `buffer` vectors each, back to
/// back, a staged tile lying in them as `placement` says.
struct Buffers<S> {
    /// The buffers.
    tile: Tiles<S>,
    /// Vectors per buffer.
    buffer: u32,
    /// How a staged tile lies in a buffer.
    placement: Placement,
}

impl<S: Scalar> Buffers<S> {
    /// Declare the workgroup array `name` of `count` buffers of tiles lying as `placement`
    /// says.
    fn declare(k: &mut KernelBuilder, name: &str, placement: Placement, count: u32) -> Buffers<S> {
        let buffer = placement.rows * placement.row_stride;
        Buffers {
            tile: k.workgroup_array::<Vec4<S>>(name, count * buffer),
            buffer,
            placement,
        }
    }
}

/// Both operands' tiles staged step by step through workgroup memory: [`Pipeline::first`]
/// stages step 0's tiles into buffer 0; in the loop of [`Pipeline::for_each_step`], each
/// invocation loads its part of step `t + 1`'s tiles (step `t`'s again at the last step) into
/// registers before step `t`'s multiply-adds, so that the loads are in flight while they run,
/// and stores them after them:
///
/// - two buffers per operand (double buffering): into the other buffer; one
///   `workgroupBarrier` per step suffices, as a buffer is written only after every invocation
///   has passed the barrier that ended the step reading it;
/// - one buffer per operand (the technique of NVIDIA's `vk_cooperative_matrix_perf`, half the
///   workgroup memory, so twice the depth per step): into the same buffer, between two
///   barriers (every invocation has read the current tiles; the next ones are staged).
pub(crate) struct Pipeline<'k, E, S> {
    blocks: Blocks,
    /// Buffers per operand: 1 or 2.
    buffers: u32,
    depth: Exp<u32>,
    m0: Exp<u32>,
    n0: Exp<u32>,
    a: Stager<E>,
    b: Stager<E>,
    a_buffers: Buffers<S>,
    b_buffers: Buffers<S>,
    convert: &'k dyn Fn(Exp<Vec4<E>>) -> Exp<Vec4<S>>,
}

impl<'k, E: Scalar + Literal0, S: Scalar> Pipeline<'k, E, S> {
    /// The staging of `a` and `b` by the invocations of a workgroup of `config` whose tile of
    /// `C` starts at row `m0` and column `n0`: declares the workgroup arrays `a_tile` and `b_tile`
    /// of `buffers` (1 or 2) buffers each ([`Pipeline::tiles`]) for tiles lying as
    /// `a_placement` and `b_placement` say, emits the `let`s of each operand's [`Stager`], and
    /// converts each staged vector by `convert`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        k: &mut KernelBuilder,
        start: &Start,
        config: &impl TileConfig,
        (m0, n0): (Exp<u32>, Exp<u32>),
        (a, b): (Global<E>, Global<E>),
        (a_placement, b_placement): (Placement, Placement),
        buffers: u32,
        convert: &'k dyn Fn(Exp<Vec4<E>>) -> Exp<Vec4<S>>,
    ) -> Self {
        let (blocks, threads) = (config.blocks(), config.threads());
        let Blocks {
            layout,
            block_m,
            block_n,
            block_k,
        } = blocks;
        let a_buffers = Buffers::declare(k, "a_tile", a_placement, buffers);
        let b_buffers = Buffers::declare(k, "b_tile", b_placement, buffers);
        let (m, n, depth) = (&start.m, &start.n, &start.depth);
        // Operands as stored: A is [M, K] or [K, M], B is [K, N] or [N, K].
        let (a_rows, a_cols, a_tile_rows, a_tile_cols) = if layout.a_transposed() {
            (depth.clone(), m.clone(), block_k, block_m)
        } else {
            (m.clone(), depth.clone(), block_m, block_k)
        };
        let (b_rows, b_cols, b_tile_rows, b_tile_cols) = if layout.b_transposed() {
            (n.clone(), depth.clone(), block_n, block_k)
        } else {
            (depth.clone(), n.clone(), block_k, block_n)
        };
        let a = Stager::new(
            k,
            "a",
            a,
            a_rows,
            a_cols,
            a_tile_rows,
            a_tile_cols,
            &start.local,
            threads,
        );
        let b = Stager::new(
            k,
            "b",
            b,
            b_rows,
            b_cols,
            b_tile_rows,
            b_tile_cols,
            &start.local,
            threads,
        );
        Pipeline {
            blocks,
            buffers,
            depth: depth.clone(),
            m0,
            n0,
            a,
            b,
            a_buffers,
            b_buffers,
            convert,
        }
    }

    /// The same staging without bounds checks: every tile lies wholly inside `A` and `B`
    /// (the tile divides `M`, `N` and `K`), so no chunk is compared with the matrices' sizes.
    pub(crate) fn without_bounds_checks(mut self) -> Self {
        self.a.checked = false;
        self.b.checked = false;
        self
    }

    /// The workgroup arrays `a_tile` and `b_tile`, each holding the buffers of its operand.
    pub(crate) fn tiles(&self) -> (&Tiles<S>, &Tiles<S>) {
        (&self.a_buffers.tile, &self.b_buffers.tile)
    }

    /// The first element, as stored, of the tiles of `A` and `B` at step `k0` of `K`.
    fn origins(&self, k0: &Exp<u32>) -> [(Exp<u32>, Exp<u32>); 2] {
        let layout = self.blocks.layout;
        let a = if layout.a_transposed() {
            (k0.clone(), self.m0.clone())
        } else {
            (self.m0.clone(), k0.clone())
        };
        let b = if layout.b_transposed() {
            (self.n0.clone(), k0.clone())
        } else {
            (k0.clone(), self.n0.clone())
        };
        [a, b]
    }

    /// This invocation's part of the tiles at step `k0`, in registers (`let`s named
    /// `{a,b}_{name}0`, ...).
    fn load(&self, k: &mut KernelBuilder, name: &str, k0: &Exp<u32>) -> [Vec<Exp<Vec4<S>>>; 2] {
        let [(ar, ac), (br, bc)] = self.origins(k0);
        [
            self.a.load(k, &format!("a_{name}"), &ar, &ac, self.convert),
            self.b.load(k, &format!("b_{name}"), &br, &bc, self.convert),
        ]
    }

    /// Store `values` (from [`Pipeline::load`]) into the buffers at `base` (in buffers).
    fn store(&self, k: &mut KernelBuilder, [a, b]: &[Vec<Exp<Vec4<S>>>; 2], base: &Exp<u32>) {
        let (ab, bb) = (&self.a_buffers, &self.b_buffers);
        self.a
            .store(k, a, &ab.tile, &(base * ab.buffer), &ab.placement);
        self.b
            .store(k, b, &bb.tile, &(base * bb.buffer), &bb.placement);
    }

    /// Emit `steps` (the steps of `block_k` covering `K`) and stage step 0's tiles into
    /// buffer 0, then a barrier. Returns `steps`.
    pub(crate) fn first(&self, k: &mut KernelBuilder) -> Exp<u32> {
        let block_k = self.blocks.block_k;
        let steps = k.let_("steps", (&self.depth + (block_k - 1)) / block_k);
        let zero = lit(0u32);
        let first = self.load(k, "first", &zero);
        let [a, b] = &first;
        let (ab, bb) = (&self.a_buffers, &self.b_buffers);
        self.a.store(k, a, &ab.tile, &zero, &ab.placement);
        self.b.store(k, b, &bb.tile, &zero, &bb.placement);
        k.workgroup_barrier();
        steps
    }

    /// The loop over the `steps` of `K`: per step, `multiply(k, a_cur, b_cur)` between the
    /// loads of the next step's tiles and their stores, with `a_cur`, `b_cur` the current
    /// buffers' first vectors plus `a_offset`, `b_offset` (see [`Pipeline`] for the barriers).
    pub(crate) fn for_each_step(
        &self,
        k: &mut KernelBuilder,
        steps: &Exp<u32>,
        (a_offset, b_offset): (&Exp<u32>, &Exp<u32>),
        multiply: impl FnOnce(&mut KernelBuilder, &Exp<u32>, &Exp<u32>),
    ) {
        let block_k = self.blocks.block_k;
        if self.buffers == 1 {
            k.for_range("step", 0u32, steps, |k, step| {
                let next = k.let_("next", min(&step + 1u32, steps - 1u32));
                let k_next = k.let_("k_next", &next * block_k);
                let next = self.load(k, "next", &k_next);
                multiply(k, a_offset, b_offset);
                // Every invocation has read this step's tiles: overwrite them.
                k.workgroup_barrier();
                self.store(k, &next, &lit(0u32));
                k.workgroup_barrier();
            });
            return;
        }
        k.for_range("step", 0u32, steps, |k, step| {
            let parity = k.let_("parity", &step % 2u32);
            let a_cur = k.let_("a_cur", &parity * self.a_buffers.buffer + a_offset);
            let b_cur = k.let_("b_cur", &parity * self.b_buffers.buffer + b_offset);
            // The next step's tiles (the last step's again at the end), loaded before the
            // multiply-adds so that the loads are in flight while they run.
            let next = k.let_("next", min(&step + 1u32, steps - 1u32));
            let k_next = k.let_("k_next", &next * block_k);
            let next = self.load(k, "next", &k_next);
            multiply(k, &a_cur, &b_cur);
            let other = k.let_("other", (&step + 1u32) % 2u32);
            self.store(k, &next, &other);
            k.workgroup_barrier();
        });
    }
}
