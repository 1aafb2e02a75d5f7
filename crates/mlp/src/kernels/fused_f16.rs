//! The fused step's first-layer product on tensor cores (`mnist train --precision f16`):
//! `forward_gather_f16_*`, a drop-in for [`ForwardGather`](super::fused::ForwardGather) with
//! the same bindings ([`ForwardGatherBindings`]) and the same output, the split-K partial
//! sums `P [splits, batch, hidden]` that `softmax_head` adds, and the batch's labels.
//!
//! `P[s, r, o] = sum over k in part s of f16(images[order[start + r], k]) f16(W0[o, k])`,
//! parts of [`split_len`](wgsl_gemm::tiled::split_len)`(inputs, splits, block_k)`: each factor converted to `f16` (WGSL
//! `f16(x)`, section 15.7.5 "Floating Point Conversion": an inexact value becomes one of the two
//! `f16` values around it, which one the implementation's choice; the interpreter and the
//! specification round to nearest even), each product exact in `f32` and accumulated in `f32`
//! by 16 x 16 x 16 cooperative-matrix
//! multiply-adds (mixed-precision training as in Micikevicius et al. 2018, "Mixed Precision
//! Training", without the loss scaling: the forward's factors are pixels in `[0, 1]` and
//! weights of magnitude about `1 / sqrt(inputs)`, well inside `f16`'s normal range). The
//! weights, their gradients and the optimizer stay `f32`; only this product reads `f16`.
//!
//! The workgroup computes a `block_m x block_n` tile of one part's `P`; subgroup `s` its
//! `warp_m x warp_n` corner as `(warp_m / 16) x (warp_n / 16)` accumulators. Each step stages
//! `block_k` columns of the batch (rows read through the permutation, each row's dataset
//! offset read once) and of `W0` into workgroup memory as `f16`, rows `block_k + 8` long (16
//! bytes of padding), zero outside the matrices and the part; a barrier; the fragments are
//! loaded from there (`W0`'s rows are `B`'s columns: column-major) and multiplied; a barrier.
//! At the end each accumulator goes through workgroup memory to the elements of `P` inside
//! `[batch, hidden]`. Needs the cooperative-matrix capability with 16x16x16 `f16 -> f32`, and
//! subgroups of exactly [`CoopForward::subgroup_size`] invocations, subgroup `s` being
//! invocations `s * subgroup_size ..` of `local_invocation_index` (true of NVIDIA's 32-wide
//! subgroups; the fragments' addresses are computed from it).

use wgsl_dsl::prelude::*;
use wgsl_dsl::runtime::KernelDef;
use wgsl_gemm::tiled::{Target, split_k};

use super::fused::{ForwardGatherArgs, ForwardGatherBindings, batch_start};
use super::uniforms::load_layer_dims;

type F16 = half::f16;
type Frag<R> = CoopMat<F16, 16, 16, R>;
type AccFrag = CoopMat<f32, 16, 16, Accumulator>;

/// Where a staged row starts in its buffer, and whether it is inside the matrix, from its
/// row in the tile.
type RowBase<'a> = &'a dyn Fn(&mut KernelBuilder, &Exp<u32>) -> (Exp<u32>, Exp<bool>);

/// `f16` elements of padding after each staged row: 16 bytes, so that rows start 16-byte
/// aligned (as cooperative loads want) and fall on other banks.
const PAD: u32 = 8;

/// The tiles of `forward_gather_f16_*`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CoopForward {
    /// Rows of the batch per workgroup (a multiple of `warp_m`).
    pub block_m: u32,
    /// Hidden units per workgroup (a multiple of `warp_n`).
    pub block_n: u32,
    /// `K` staged per step (a multiple of 16).
    pub block_k: u32,
    /// Rows per subgroup (a multiple of 16).
    pub warp_m: u32,
    /// Hidden units per subgroup (a multiple of 16).
    pub warp_n: u32,
    /// Invocations per subgroup the kernel assumes (the adapter's only subgroup size).
    pub subgroup_size: u32,
    /// Parts `K` (the inputs) is split into, summed by `softmax_head`.
    pub splits: u32,
}

impl CoopForward {
    /// Tiles of 64 x 64 in four subgroups of 32 x 32, `K` 32 deep per step, split into as
    /// many parts as [`split_k`] gives for a batch of `batch` and `hidden` units on `target`.
    /// Not swept on a GPU (on the H200 at batch 1024 it takes a step's forward from 32.6 to
    /// 20.3 us in `mnist train --profile`, BENCHMARKS.md, issue 32).
    pub fn choose(
        batch: usize,
        hidden: usize,
        inputs: usize,
        subgroup_size: u32,
        target: Target,
    ) -> CoopForward {
        let mut c = CoopForward {
            block_m: 64,
            block_n: 64,
            block_k: 32,
            warp_m: 32,
            warp_n: 32,
            subgroup_size,
            splits: 1,
        };
        let [x, y, _] = c.grid(batch, hidden);
        c.splits = split_k(x * y, inputs, c.block_k, target);
        c
    }

    /// The configuration an H200 (subgroups of 32, filled by 512 workgroups) trains the
    /// 784-128-10 model with at batch 1024: the one the snapshots pin.
    pub fn h200_mnist_1024() -> CoopForward {
        CoopForward::choose(1024, 128, 784, 32, Target::gpu(512))
    }

    /// Subgroups per workgroup.
    pub fn warps(&self) -> u32 {
        (self.block_m / self.warp_m.max(1)) * (self.block_n / self.warp_n.max(1))
    }

    /// Invocations per workgroup.
    pub fn invocations(&self) -> u32 {
        self.warps() * self.subgroup_size
    }

    /// Why the tiles cannot be built, if they cannot.
    ///
    /// # Errors
    /// A message naming the rule broken.
    pub fn valid(&self) -> Result<(), String> {
        let sixteens = [self.block_k, self.warp_m, self.warp_n];
        if sixteens.iter().any(|&v| v == 0 || v % 16 != 0) {
            return Err(format!(
                "{self:?}: block_k, warp_m, warp_n must be multiples of 16"
            ));
        }
        if !self.block_m.is_multiple_of(self.warp_m) || !self.block_n.is_multiple_of(self.warp_n) {
            return Err(format!(
                "{self:?}: the blocks must be multiples of the subgroups' tiles"
            ));
        }
        if !(1..=128).contains(&self.subgroup_size) || !(1..=64).contains(&self.splits) {
            return Err(format!("{self:?}: subgroup size or splits out of range"));
        }
        if self.invocations() > 1024 {
            return Err(format!("{self:?}: more than 1024 invocations"));
        }
        Ok(())
    }

    /// Workgroups for a batch of `rows` and `hidden` units: `[hidden / block_n, rows /
    /// block_m, splits]`, rounded up.
    pub fn grid(&self, rows: usize, hidden: usize) -> [u32; 3] {
        let up = |n: usize, d: u32| n.div_ceil(d.max(1) as usize).max(1) as u32;
        [
            up(hidden, self.block_n),
            up(rows, self.block_m),
            self.splits,
        ]
    }

    /// `forward_gather_f16_s{splits}_b{bm}x{bn}x{bk}_w{wm}x{wn}_g{subgroup}_tiles`.
    pub fn name(&self) -> String {
        format!(
            "forward_gather_f16_s{}_b{}x{}x{}_w{}x{}_g{}_tiles",
            self.splits,
            self.block_m,
            self.block_n,
            self.block_k,
            self.warp_m,
            self.warp_n,
            self.subgroup_size
        )
    }
}

/// Kernel `forward_gather_f16_*` (see the [module docs](self)). Bindings:
/// [`ForwardGatherBindings`]; problem size `(rows, hidden)`, covered by [`CoopForward::grid`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ForwardGatherCoop(pub CoopForward);

impl KernelDef for ForwardGatherCoop {
    type Args<'a> = ForwardGatherArgs<'a>;
    type Size = (usize, usize);
    fn build(&self) -> KernelBuilder {
        forward_gather_coop(&self.0)
    }
    fn workgroups(&self, (rows, hidden): (usize, usize)) -> [u32; 3] {
        self.0.grid(rows, hidden)
    }
}

/// The `K` range of part `workgroup_id.z`, as [`split_len`](wgsl_gemm::tiled::split_len) cuts it: `(k_begin, k_end)`, both
/// at most `inputs`.
fn part_range(k: &mut KernelBuilder, inputs: &Exp<u32>, depth: u32) -> (Exp<u32>, Exp<u32>) {
    let split = workgroup_id().z();
    let splits = num_workgroups().z();
    let part = k.let_(
        "part",
        ((inputs + &splits - 1u32) / splits + (depth - 1)) / depth * depth,
    );
    let k_begin = k.let_("k_begin", min(split * &part, inputs.clone()));
    let k_end = k.let_("k_end", min(&k_begin + &part, inputs.clone()));
    (k_begin, k_end)
}

fn forward_gather_coop(c: &CoopForward) -> KernelBuilder {
    if let Err(e) = c.valid() {
        panic!("invalid tensor-core forward tiles: {e}");
    }
    let threads = c.invocations();
    let mut k = KernelBuilder::new(c.name(), [threads, 1, 1]);
    let ForwardGatherBindings {
        dims: d,
        gp,
        state,
        order,
        images,
        labels,
        params,
        partial,
        batch_labels,
    } = k.bindings();
    let [batch, inputs, outputs, w_off] = load_layer_dims(&mut k, &d);
    let start = batch_start(&mut k, &gp, &state);
    let split = k.let_("split", workgroup_id().z());
    let (k_begin, k_end) = part_range(&mut k, &inputs, c.block_k);
    let m0 = k.let_("m0", workgroup_id().y() * c.block_m);
    let n0 = k.let_("n0", workgroup_id().x() * c.block_n);
    let lid = k.let_("lid", local_invocation_index());
    let warp = k.let_("warp", &lid / c.subgroup_size);
    let lane = k.let_("lane", &lid % c.subgroup_size);
    let warps_n = c.block_n / c.warp_n;
    let wm0 = k.let_("wm0", (&warp / warps_n) * c.warp_m);
    let wn0 = k.let_("wn0", (&warp % warps_n) * c.warp_n);
    let stride = c.block_k + PAD;
    let a_tile = k.workgroup_array::<F16>("a_tile", c.block_m * stride);
    let b_tile = k.workgroup_array::<F16>("b_tile", c.block_n * stride);
    let staging = k.workgroup_array::<f32>("staging", c.warps() * 256);

    // The staging slots of this invocation: element e = lid + j * threads of a
    // [rows, block_k] tile is row e / block_k, column e % block_k (adjacent invocations
    // read adjacent columns). A's rows are examples (their dataset offsets read once, 0 when
    // past the batch), B's rows hidden units (W0's rows).
    struct Slot {
        /// Row in the tile.
        row: Exp<u32>,
        /// Column in the tile (along `K`).
        col: Exp<u32>,
        /// Where the row starts in its buffer.
        base: Exp<u32>,
        /// Whether the row is inside the matrix.
        row_ok: Exp<bool>,
        /// Whether the slot is inside the tile (the invocations need not divide it).
        in_tile: Option<Exp<bool>>,
    }
    let slots = |k: &mut KernelBuilder, name: char, rows: u32, row_base: RowBase<'_>| {
        let units = rows * c.block_k;
        (0..units.div_ceil(threads))
            .map(|j| {
                let e = k.let_(&format!("{name}_e{j}"), &lid + j * threads);
                let in_tile = ((j + 1) * threads > units).then(|| e.lt(units));
                let row = k.let_(&format!("{name}_row{j}"), &e / c.block_k % rows);
                let col = k.let_(&format!("{name}_col{j}"), &e % c.block_k);
                let (base, row_ok) = row_base(k, &row);
                let base = k.let_(&format!("{name}_base{j}"), base);
                let row_ok = k.let_(&format!("{name}_ok{j}"), row_ok);
                Slot {
                    row,
                    col,
                    base,
                    row_ok,
                    in_tile,
                }
            })
            .collect::<Vec<_>>()
    };
    let a_slots = slots(&mut k, 'a', c.block_m, &|k, row| {
        let r = k.let_("r", &m0 + row);
        let ok = r.lt(&batch);
        // Past the batch, row 0's entry is read (in bounds) and its values are not used.
        let example = order.at(&start + ok.clone().select(r, 0u32)).load();
        (example * &inputs, ok)
    });
    let b_slots = slots(&mut k, 'b', c.block_n, &|k, row| {
        let o = k.let_("o", &n0 + row);
        let ok = o.lt(&outputs);
        (&w_off + ok.clone().select(o, 0u32) * &inputs, ok)
    });

    let frags_m = c.warp_m / 16;
    let frags_n = c.warp_n / 16;
    let acc: Vec<Var<AccFrag>> = (0..frags_m * frags_n)
        .map(|i| k.var(&format!("acc{i}"), Exp::<AccFrag>::zero()))
        .collect();
    let steps = k.let_("k_steps", (&k_end - &k_begin + (c.block_k - 1)) / c.block_k);
    let stride_e = k.let_("tile_stride", lit(stride));
    k.for_range("t", 0u32, &steps, |k, t| {
        let k0 = k.let_("k0", &k_begin + t * c.block_k);
        // Every read of the step first, then the stores into the tiles.
        let mut staged = Vec::new();
        for (slots, buffer, tile) in [(&a_slots, &images, &a_tile), (&b_slots, &params, &b_tile)] {
            for s in slots {
                let along = &k0 + &s.col;
                let inside = k.let_("inside", s.row_ok.clone().and(along.lt(&k_end)));
                let at = &s.base + inside.select(along, 0u32);
                let value = inside.select(buffer.at(at).load(), 0.0f32);
                let value = k.let_("staged", value.to_f16());
                staged.push((tile, s, value));
            }
        }
        for (tile, s, value) in staged {
            let store = |k: &mut KernelBuilder| {
                k.store(&tile.at(&s.row * stride + &s.col), value.clone());
            };
            match &s.in_tile {
                Some(in_tile) => k.if_(in_tile.clone(), store),
                None => store(k),
            }
        }
        k.workgroup_barrier();
        for kk in (0..c.block_k).step_by(16) {
            let fa: Vec<Exp<Frag<MatrixA>>> = (0..frags_m)
                .map(|i| {
                    let at = k.let_(&format!("a_at{kk}_{i}"), (&wm0 + i * 16) * stride + kk);
                    k.let_(
                        &format!("fa{kk}_{i}"),
                        a_tile.at(&at).coop_load(&stride_e, CoopLayout::RowMajor),
                    )
                })
                .collect();
            // B [K, N] = W0^T: its columns are W0's rows, staged as rows: column-major.
            let fb: Vec<Exp<Frag<MatrixB>>> = (0..frags_n)
                .map(|j| {
                    let at = k.let_(&format!("b_at{kk}_{j}"), (&wn0 + j * 16) * stride + kk);
                    k.let_(
                        &format!("fb{kk}_{j}"),
                        b_tile.at(&at).coop_load(&stride_e, CoopLayout::ColumnMajor),
                    )
                })
                .collect();
            for (i, a) in fa.iter().enumerate() {
                for (j, b) in fb.iter().enumerate() {
                    let cell = &acc[i * fb.len() + j];
                    k.store(cell, coop_multiply_add(a, b, &cell.load()));
                }
            }
        }
        k.workgroup_barrier();
    });

    // Each accumulator through the subgroup's 16 x 16 of workgroup memory, then its elements
    // inside [batch, hidden] into P.
    let base = k.let_("staging_base", &warp * 256u32);
    for i in 0..frags_m {
        for j in 0..frags_n {
            let value = acc[(i * frags_n + j) as usize].load();
            k.coop_store(&value, &staging.at(&base), 16u32, CoopLayout::RowMajor);
            k.workgroup_barrier();
            for q in 0..256u32.div_ceil(c.subgroup_size) {
                let e = k.let_(&format!("e{i}_{j}_{q}"), &lane + q * c.subgroup_size);
                let row = k.let_(&format!("r{i}_{j}_{q}"), &m0 + &wm0 + i * 16 + &e / 16u32);
                let col = k.let_(&format!("c{i}_{j}_{q}"), &n0 + &wn0 + j * 16 + &e % 16u32);
                let inside = row.lt(&batch).and(col.lt(&outputs)).and(e.lt(256u32));
                k.if_(inside, |k| {
                    k.store(
                        &partial.at((&split * &batch + &row) * &outputs + &col),
                        staging.at(&base + &e).load(),
                    );
                });
            }
            k.workgroup_barrier();
        }
    }
    // The batch's labels, once: by the first part's first column of workgroups.
    k.if_(split.eq(0u32).and(workgroup_id().x().eq(0u32)), |k| {
        for q in 0..c.block_m.div_ceil(threads) {
            let r = k.let_(&format!("label_row{q}"), &m0 + &lid + q * threads);
            let in_tile = (&lid + q * threads).lt(c.block_m);
            k.if_(r.lt(&batch).and(in_tile), |k| {
                let example = order.at(&start + &r).load();
                k.store(&batch_labels.at(&r), labels.at(example).load());
            });
        }
    });
    k
}
