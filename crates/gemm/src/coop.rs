//! The tensor-core kernel: `C = op(A) op(B)` with cooperative matrices, `f16` inputs and
//! `f32` accumulators.
//!
//! Bindings: `dims: GemmDims` (uniform), `a`, `b` (read-only storage of `f16`, or of `f32`
//! rounded to `f16` when staged; `vec4` arrays when the stored rows are multiples of 4;
//! `array<array<vec4<f16>, 2>>` or `array<vec4<u32>>` views of the `f16` buffers, sixteen
//! bytes a load, with [`CoopConfig::wide`](crate::CoopConfig::wide)),
//! `c: array<f32>` (read-write). Grid: [`CoopConfig::grid`]. Needs the cooperative-matrix
//! capability, 16x16x16 `f16 -> f32` multiply-adds, and subgroups of exactly
//! [`CoopConfig::subgroup_size`] invocations (subgroup `s` is invocations
//! `s * subgroup_size ..`; true of NVIDIA's 32-wide subgroups).
//!
//! The workgroup computes a `block_m x block_n` tile of `C`; subgroup `s` computes its
//! `warp_m x warp_n` part as `(warp_m / 16) x (warp_n / 16)` accumulators of 16x16 `f32`.
//! `K` is walked `block_k` at a time through two buffers of workgroup memory, as in
//! [`crate::simt`], or through one ([`CoopConfig::single`]: the next step's tiles wait in
//! registers while the current ones are multiplied, two barriers per step): the `A` and `B`
//! tiles are staged as stored (`A [M, K]` as `block_m` rows
//! of `block_k`, `A^T` as `block_k` rows of `block_m`, likewise `B`), each row padded by
//! [`COOP_PAD`](crate::config::COOP_PAD) elements, and the 16x16 fragments are loaded from
//! them row-major or column-major as the operand's layout requires. Outside the matrices the
//! staged elements are zero, which adds nothing.
//!
//! At the end, a tile wholly inside `C` (with `N` a multiple of 4) is stored by
//! `coopStoreT` straight into `C`; otherwise each fragment is stored into workgroup memory and
//! its elements inside `C` copied out. Both branches are uniform over the workgroup.
//!
//! Accumulation: each multiply-add sums 16 products of `f16` values (exact in `f32`) into the
//! `f32` accumulator in the tensor cores' order and rounding.

use wgsl_dsl::prelude::*;

use crate::config::{CoopConfig, CoopInput, TileConfig};
use crate::stage::{Access, Global, Literal0, Pipeline, Placement, Start, Unpack, unpack_f16};
use crate::{GemmDims, Problem};

type F16 = half::f16;
type Frag<R> = CoopMat<F16, 16, 16, R>;
type AccFrag = CoopMat<f32, 16, 16, Accumulator>;

/// Build the kernel for `config` (see the [module docs](self)). Check the configuration first
/// with [`CoopConfig::valid`].
pub fn build(config: &CoopConfig) -> KernelBuilder {
    if config.direct {
        return build_direct(config);
    }
    match config.input {
        CoopInput::F16 => build_with::<F16>(config, &|v| v, Some(unpack_f16)),
        CoopInput::F32 => build_with::<f32>(config, &|v| v.to_f16(), None),
    }
}

/// [`build`] for the configuration [`CoopConfig::choose`] picks.
pub fn build_for(
    problem: &Problem,
    input: CoopInput,
    target: &wgsl_dsl::TargetLimits,
    subgroup_size: u32,
) -> KernelBuilder {
    build(&CoopConfig::choose(problem, input, target, subgroup_size))
}

fn build_with<E: wgsl_dsl::types::Scalar + Literal0>(
    config: &CoopConfig,
    convert: &dyn Fn(Exp<Vec4<E>>) -> Exp<Vec4<F16>>,
    unpack: Option<Unpack<E>>,
) -> KernelBuilder {
    let c = *config;
    let mut k = KernelBuilder::new(c.kernel_name(), [c.threads(), 1, 1]);
    let dims = k.uniform::<GemmDims>("dims");
    let access = |vector: bool| match c.wide {
        Some(wide) => Access::Wide(wide, unpack),
        None if vector => Access::Vec4,
        None => Access::Scalar,
    };
    let a = Global::<E>::declare_for(&mut k, "a", access(c.vector_a));
    let b = Global::<E>::declare_for(&mut k, "b", access(c.vector_b));
    let out = k.storage::<RuntimeArray<f32>, ReadWrite>("c");
    let (a_rows_staged, a_row_len) = c.a_tile_shape();
    let (b_rows_staged, b_row_len) = c.b_tile_shape();
    let a_stride = a_row_len / 4;
    let b_stride = b_row_len / 4;

    let start = Start::new(&mut k, &dims);
    let (m, n) = (start.m.clone(), start.n.clone());
    let m0 = k.let_("m0", &start.tile_m * c.block_m);
    let n0 = k.let_("n0", &start.tile_n * c.block_n);
    let warps_n = c.block_n / c.warp_n;
    let warp = k.let_("warp", &start.local / c.subgroup_size);
    let lane = k.let_("lane", &start.local % c.subgroup_size);
    let wm0 = k.let_("wm0", (&warp / warps_n) * c.warp_m);
    let wn0 = k.let_("wn0", (&warp % warps_n) * c.warp_n);

    // Staged as stored, rows padded.
    let pipeline = Pipeline::new(
        &mut k,
        &start,
        &c,
        (m0.clone(), n0.clone()),
        (a, b),
        (
            Placement {
                rows: a_rows_staged,
                row_stride: a_stride,
                transposed: false,
            },
            Placement {
                rows: b_rows_staged,
                row_stride: b_stride,
                transposed: false,
            },
        ),
        c.buffers(),
        convert,
    );
    let pipeline = if c.whole_tiles {
        pipeline.without_bounds_checks()
    } else {
        pipeline
    };
    let (a_tile, b_tile) = pipeline.tiles();
    let staging = k.workgroup_array::<f32>("staging", c.warps() * 256);

    let frags_m = c.warp_m / 16;
    let frags_n = c.warp_n / 16;
    let acc: Vec<Var<AccFrag>> = (0..frags_m * frags_n)
        .map(|i| k.var(&format!("acc{i}"), Exp::<AccFrag>::zero()))
        .collect();

    let steps = pipeline.first(&mut k);

    // Fragment strides, as `let`s (naga's SPIR-V writer wants a cooperative load's operands
    // emitted before it).
    let a_stride_e = k.let_("a_stride", lit(a_stride));
    let b_stride_e = k.let_("b_stride", lit(b_stride));
    let a_layout = fragment_layout(c.layout.a_transposed());
    let b_layout = fragment_layout(c.layout.b_transposed());
    // Where fragment (i, kk) of A and (kk, j) of B start in a buffer, in vectors, relative to
    // the subgroup's corner.
    let a_warp = if c.layout.a_transposed() {
        k.let_("a_warp", &wm0 / 4u32)
    } else {
        k.let_("a_warp", &wm0 * a_stride)
    };
    let b_warp = if c.layout.b_transposed() {
        k.let_("b_warp", &wn0 * b_stride)
    } else {
        k.let_("b_warp", &wn0 / 4u32)
    };
    let a_offset = |i: u32, kk: u32| {
        if c.layout.a_transposed() {
            kk * a_stride + i * 4
        } else {
            i * 16 * a_stride + kk / 4
        }
    };
    let b_offset = |j: u32, kk: u32| {
        if c.layout.b_transposed() {
            j * 16 * b_stride + kk / 4
        } else {
            kk * b_stride + j * 4
        }
    };

    pipeline.for_each_step(&mut k, &steps, (&a_warp, &b_warp), |k, a_cur, b_cur| {
        for kk in (0..c.block_k).step_by(16) {
            let fa: Vec<Exp<Frag<MatrixA>>> = load_fragments(
                k,
                ('a', kk, frags_m),
                |i| a_cur + a_offset(i, kk),
                |at| a_tile.at(at).coop_load(&a_stride_e, a_layout),
            );
            let fb: Vec<Exp<Frag<MatrixB>>> = load_fragments(
                k,
                ('b', kk, frags_n),
                |j| b_cur + b_offset(j, kk),
                |at| b_tile.at(at).coop_load(&b_stride_e, b_layout),
            );
            multiply_add(k, &acc, &fa, &fb);
        }
    });

    // Epilogue.
    let row0 = k.let_("row0", &m0 + &wm0);
    let col0 = k.let_("col0", &n0 + &wn0);
    let through_staging = |k: &mut KernelBuilder| {
        let base = k.let_("staging_base", &warp * 256u32);
        for i in 0..frags_m {
            for j in 0..frags_n {
                let value = acc[(i * frags_n + j) as usize].load();
                k.coop_store(&value, &staging.at(&base), 16u32, CoopLayout::RowMajor);
                k.workgroup_barrier();
                for q in 0..256 / c.subgroup_size {
                    let e = k.let_(&format!("e{i}_{j}_{q}"), &lane + q * c.subgroup_size);
                    let row = &row0 + (i * 16) + &e / 16u32;
                    let col = &col0 + (j * 16) + &e % 16u32;
                    let row = k.let_(&format!("r{i}_{j}_{q}"), row);
                    let col = k.let_(&format!("c{i}_{j}_{q}"), col);
                    k.if_(row.lt(&m).and(col.lt(&n)), |k| {
                        k.store(&out.at(&row * &n + &col), staging.at(&base + &e).load());
                    });
                }
                k.workgroup_barrier();
            }
        }
    };
    if c.whole_tiles {
        store_accumulators(&mut k, &acc, frags_n, (&row0, &col0), &n, &out);
    } else if c.vector_c {
        let whole = (&m0 + c.block_m).le(&m).and((&n0 + c.block_n).le(&n));
        k.if_else(
            whole,
            |k| store_accumulators(k, &acc, frags_n, (&row0, &col0), &n, &out),
            through_staging,
        );
    } else {
        through_staging(&mut k);
    }
    k
}

/// The kernel of a [`CoopConfig::direct`] configuration: every subgroup loads its fragments
/// straight from the `f16` buffers (rows `K`, `M` or `N` elements apart, all multiples of 16:
/// the tile divides the problem), two steps of 16 along `K` per iteration, all of an
/// iteration's loads before its multiply-adds; no workgroup memory, no barrier. Subgroups of
/// a workgroup that need the same rows of `A` or columns of `B` find them in the L1 cache.
fn build_direct(c: &CoopConfig) -> KernelBuilder {
    let mut k = KernelBuilder::new(c.kernel_name(), [c.threads(), 1, 1]);
    let dims = k.uniform::<GemmDims>("dims");
    let a = k.storage::<RuntimeArray<F16>, ReadOnly>("a");
    let b = k.storage::<RuntimeArray<F16>, ReadOnly>("b");
    let out = k.storage::<RuntimeArray<f32>, ReadWrite>("c");
    let Start {
        m,
        n,
        depth,
        local,
        tile_m,
        tile_n,
    } = Start::new(&mut k, &dims);
    let warps_n = c.block_n / c.warp_n;
    let warp = k.let_("warp", &local / c.subgroup_size);
    let row0 = k.let_("row0", &tile_m * c.block_m + (&warp / warps_n) * c.warp_m);
    let col0 = k.let_("col0", &tile_n * c.block_n + (&warp % warps_n) * c.warp_n);
    let (a_t, b_t) = (c.layout.a_transposed(), c.layout.b_transposed());
    // Row strides of the stored operands, and the layouts their fragments are read in.
    let a_stride = k.let_("a_stride", if a_t { m.clone() } else { depth.clone() });
    let b_stride = k.let_("b_stride", if b_t { depth.clone() } else { n.clone() });
    let a_layout = fragment_layout(a_t);
    let b_layout = fragment_layout(b_t);
    let frags_m = c.warp_m / 16;
    let frags_n = c.warp_n / 16;
    let acc: Vec<Var<AccFrag>> = (0..frags_m * frags_n)
        .map(|i| k.var(&format!("acc{i}"), Exp::<AccFrag>::zero()))
        .collect();
    let steps = k.let_("steps", &depth / c.block_k);
    k.for_range("step", 0u32, &steps, |k, step| {
        let k0 = k.let_("k0", &step * c.block_k);
        let mut fa = Vec::new();
        let mut fb = Vec::new();
        for kk in (0..c.block_k).step_by(16) {
            let kx = k.let_(&format!("kx{kk}"), &k0 + kk);
            // A [M, K]: row0 + 16 i, column kx; A^T [K, M]: row kx, column row0 + 16 i.
            let row: Vec<Exp<Frag<MatrixA>>> = load_fragments(
                k,
                ('a', kk, frags_m),
                |i| {
                    if a_t {
                        &kx * &a_stride + &row0 + i * 16
                    } else {
                        (&row0 + i * 16) * &a_stride + &kx
                    }
                },
                |at| a.at(at).coop_load(&a_stride, a_layout),
            );
            // B [K, N]: row kx, column col0 + 16 j; B^T [N, K]: row col0 + 16 j.
            let col: Vec<Exp<Frag<MatrixB>>> = load_fragments(
                k,
                ('b', kk, frags_n),
                |j| {
                    if b_t {
                        (&col0 + j * 16) * &b_stride + &kx
                    } else {
                        &kx * &b_stride + &col0 + j * 16
                    }
                },
                |at| b.at(at).coop_load(&b_stride, b_layout),
            );
            fa.push(row);
            fb.push(col);
        }
        for (fa, fb) in fa.iter().zip(&fb) {
            multiply_add(k, &acc, fa, fb);
        }
    });
    store_accumulators(&mut k, &acc, frags_n, (&row0, &col0), &n, &out);
    k
}

/// The fragments `f{operand}{kk}_{i}` of `(operand, kk, count)` for `i < count`: fragment `i`
/// loaded by `load` from the index `at(i)`, bound first as `{operand}_at{kk}_{i}`.
fn load_fragments<R: wgsl_dsl::types::Role>(
    k: &mut KernelBuilder,
    (operand, kk, count): (char, u32, u32),
    at: impl Fn(u32) -> Exp<u32>,
    load: impl Fn(&Exp<u32>) -> Exp<Frag<R>>,
) -> Vec<Exp<Frag<R>>>
where
    Frag<R>: WgslType,
{
    (0..count)
        .map(|i| {
            let at = k.let_(&format!("{operand}_at{kk}_{i}"), at(i));
            k.let_(&format!("f{operand}{kk}_{i}"), load(&at))
        })
        .collect()
}

/// `acc[i fb.len() + j] += fa[i] fb[j]` for every pair of an `A` and a `B` fragment.
fn multiply_add(
    k: &mut KernelBuilder,
    acc: &[Var<AccFrag>],
    fa: &[Exp<Frag<MatrixA>>],
    fb: &[Exp<Frag<MatrixB>>],
) {
    for (i, a) in fa.iter().enumerate() {
        for (j, b) in fb.iter().enumerate() {
            let cell = &acc[i * fb.len() + j];
            k.store(cell, coop_multiply_add(a, b, &cell.load()));
        }
    }
}

/// Every accumulator stored straight into `C` (`out`, rows `n` long): fragment `(i, j)` of
/// `acc` (`frags_n` per row of fragments) at row `row0 + 16 i`, column `col0 + 16 j`, its
/// index bound as `c_at{i}_{j}`.
fn store_accumulators(
    k: &mut KernelBuilder,
    acc: &[Var<AccFrag>],
    frags_n: u32,
    (row0, col0): (&Exp<u32>, &Exp<u32>),
    n: &Exp<u32>,
    out: &Place<RuntimeArray<f32>, ReadWrite>,
) {
    for (f, cell) in (0u32..).zip(acc) {
        let (i, j) = (f / frags_n, f % frags_n);
        let at = k.let_(&format!("c_at{i}_{j}"), (row0 + i * 16) * n + col0 + j * 16);
        k.coop_store(&cell.load(), &out.at(&at), n, CoopLayout::RowMajor);
    }
}

/// The layout a fragment is loaded in from an operand stored transposed or not: a transposed
/// operand's rows are the fragment's columns.
fn fragment_layout(transposed: bool) -> CoopLayout {
    if transposed {
        CoopLayout::ColumnMajor
    } else {
        CoopLayout::RowMajor
    }
}
