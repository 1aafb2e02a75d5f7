//! The SIMT `f32` kernel: `C = op(A) op(B)` on the ordinary arithmetic units.
//!
//! Bindings: `dims: GemmDims` (uniform), `a`, `b` (read-only storage, `array<vec4<f32>>` or
//! `array<f32>`), `c` (read-write storage). Grid: [`SimtConfig::grid`].
//!
//! Each workgroup computes the `block_m x block_n` tile of `C` that `stage::tile_coords` gives it;
//! invocation `(tx, ty)` computes `thread_m x thread_n` elements of it, kept in registers as
//! `vec4`s: rows `ty * 4 + g * block_m / (thread_m / 4) + 0..4` for each group `g` of four,
//! columns likewise (groups of four far apart, so that the invocations of a subgroup read
//! adjacent vectors of workgroup memory). `K` is walked `block_k` at a time: the tile of `A`
//! is staged `[block_k][block_m]` and that of `B` `[block_k][block_n]` in one of two buffers;
//! while the workgroup multiplies one buffer, each invocation has already loaded its part of
//! the next tile into registers, and stores it into the other buffer after the multiply-adds.
//! One `workgroupBarrier` per step suffices: a buffer is written only after every invocation
//! has passed the barrier that ended the step reading it.
//!
//! Every barrier is in uniform control flow (the step count is uniform); loads outside the
//! matrices are replaced by zeros without branching, and stores outside `C` are skipped.
//! Accumulation: one `fma` per product, in `f32`, in `k` order within an invocation.

use wgsl_dsl::prelude::*;

use crate::config::{SimtConfig, TileConfig};
use crate::stage::{Global, Pipeline, Placement, Start, component};
use crate::{GemmDims, Problem};

/// The output buffer, written four elements at a time or one.
enum Output {
    Scalar(Buffer<f32, ReadWrite>),
    Vec4(Buffer<Vec4<f32>, ReadWrite>),
}

/// Build the kernel for `config` (see the [module docs](self)). Check the configuration first
/// with [`SimtConfig::valid`]; an invalid one builds a kernel that computes garbage.
pub fn build(config: &SimtConfig) -> KernelBuilder {
    let c = *config;
    let mut k = KernelBuilder::new(c.kernel_name(), [c.threads(), 1, 1]);
    let dims = k.uniform::<GemmDims>("dims");
    let a = Global::<f32>::declare(&mut k, "a", c.vector_a);
    let b = Global::<f32>::declare(&mut k, "b", c.vector_b);
    let out = if c.vector_c {
        Output::Vec4(k.storage::<RuntimeArray<Vec4<f32>>, ReadWrite>("c"))
    } else {
        Output::Scalar(k.storage::<RuntimeArray<f32>, ReadWrite>("c"))
    };

    let start = Start::new(&mut k, &dims);
    let (m, n) = (start.m.clone(), start.n.clone());
    let m0 = k.let_("m0", &start.tile_m * c.block_m);
    let n0 = k.let_("n0", &start.tile_n * c.block_n);
    let threads_n = c.block_n / c.thread_n;
    let tx = k.let_("tx", &start.local % threads_n);
    let ty = k.let_("ty", &start.local / threads_n);

    // Staged as [k][m] and [k][n] (block_k rows of block_m / 4 and block_n / 4 vectors): A as
    // stored when transposed, B when not.
    let same = |v: Exp<Vec4<f32>>| v;
    let pipeline = Pipeline::new(
        &mut k,
        &start,
        &c,
        (m0.clone(), n0.clone()),
        (a, b),
        (
            Placement {
                rows: c.block_k,
                row_stride: c.block_m / 4,
                transposed: !c.layout.a_transposed(),
            },
            Placement {
                rows: c.block_k,
                row_stride: c.block_n / 4,
                transposed: c.layout.b_transposed(),
            },
        ),
        2,
        &same,
    );
    let (a_tile, b_tile) = pipeline.tiles();

    let groups_n = c.thread_n / 4;
    let acc: Vec<Var<Vec4<f32>>> = (0..c.thread_m * groups_n)
        .map(|i| k.var(&format!("acc{i}"), Exp::<Vec4<f32>>::zero()))
        .collect();

    // The first step's tiles into buffer 0.
    let steps = pipeline.first(&mut k);

    pipeline.for_each_step(&mut k, &steps, (&ty, &tx), |k, a_cur, b_cur| {
        for kk in 0..c.block_k {
            let a_vectors: Vec<Exp<Vec4<f32>>> = (0..c.thread_m / 4)
                .map(|g| {
                    let at = a_cur + (kk * c.block_m / 4 + g * c.block_m / c.thread_m);
                    k.let_(&format!("a{kk}_{g}"), a_tile.at(at).load())
                })
                .collect();
            let b_vectors: Vec<Exp<Vec4<f32>>> = (0..groups_n)
                .map(|h| {
                    let at = b_cur + (kk * c.block_n / 4 + h * c.block_n / c.thread_n);
                    k.let_(&format!("b{kk}_{h}"), b_tile.at(at).load())
                })
                .collect();
            for i in 0..c.thread_m {
                let a_value = component(&a_vectors[(i / 4) as usize], i % 4);
                let a_splat = Exp::<Vec4<f32>>::splat(a_value);
                for (h, b_vector) in b_vectors.iter().enumerate() {
                    let cell = &acc[(i * groups_n) as usize + h];
                    k.store(cell, fma(&a_splat, b_vector, cell.load()));
                }
            }
        }
    });

    // Epilogue: each invocation's block of C, outside elements skipped.
    let row_base = k.let_("row_base", &m0 + &ty * 4u32);
    let col_base = k.let_("col_base", &n0 + &tx * 4u32);
    for i in 0..c.thread_m {
        let row = k.let_(
            &format!("row{i}"),
            &row_base + ((i / 4) * c.block_m / (c.thread_m / 4) + i % 4),
        );
        for h in 0..groups_n {
            let col = k.let_(
                &format!("col{i}_{h}"),
                &col_base + h * c.block_n / (c.thread_n / 4),
            );
            let value = acc[(i * groups_n + h) as usize].load();
            match &out {
                Output::Vec4(buf) => {
                    k.if_(row.lt(&m).and(col.lt(&n)), |k| {
                        k.store(&buf.at((&row * &n + &col) / 4u32), value);
                    });
                }
                Output::Scalar(buf) => {
                    let value = k.let_(&format!("out{i}_{h}"), value);
                    for j in 0..4u32 {
                        k.if_(row.lt(&m).and((&col + j).lt(&n)), |k| {
                            k.store(&buf.at(&row * &n + &col + j), component(&value, j));
                        });
                    }
                }
            }
        }
    }
    k
}

/// [`build`] for the configuration [`SimtConfig::choose`] picks for `problem` on `target`.
pub fn build_for(problem: &Problem, target: &wgsl_dsl::TargetLimits) -> KernelBuilder {
    build(&SimtConfig::choose(problem, target))
}
