//! Memory-bound kernels as a kernel author writes them, for the roofline benchmark
//! (`gemm roofline`, issue 33): copy, `y = a x + y`, GELU, a sum per row, a softmax per row,
//! a layer norm per row and a transpose, each over a row-major `f32` matrix `[rows, cols]`,
//! each with its `f64` specification ([`MemKernel::spec`]) and the bytes it must move at least
//! ([`MemKernel::bytes`]), so that a time gives GB/s against the copy bandwidth.
//!
//! Bindings of every kernel: `dims: MemDims` (uniform: `rows`, `cols`, `a`), `x` (read-only
//! storage, `array<f32>`), `y` (read-write storage, `array<f32>`). Sizes are run-time data.
//!
//! - Element-wise kernels ([`MemKernel::Copy`], [`MemKernel::Axpy`], [`MemKernel::Gelu`]): one
//!   invocation per element, 256 per workgroup, a 2-D grid of workgroups where one dimension
//!   would pass the 65,535 limit.
//! - Row kernels ([`MemKernel::RowSum`], [`MemKernel::RowSoftmax`],
//!   [`MemKernel::RowLayerNorm`]): one workgroup of 256 invocations per row, each invocation
//!   walking the row with a stride of 256, a tree reduction in workgroup memory.
//!   `y[r] = sum_c x[r, c]`; softmax `y[r, c] = exp(x[r, c] - m_r) / sum_j exp(x[r, j] - m_r)`
//!   with `m_r` the row's maximum; layer norm `y[r, c] = (x[r, c] - mean_r) / sqrt(var_r +
//!   1e-5)` with the biased variance (PyTorch's `layer_norm` without weights).
//! - [`MemKernel::Transpose`]: `y [cols, rows] = x^T` through a 16 x 17 workgroup tile (the
//!   17th column keeps the tile's columns in different banks).
//!
//! GELU is the tanh approximation (Hendrycks & Gimpel 2016, eq. after (1); PyTorch's
//! `gelu(approximate="tanh")`): `0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))`.

use bytemuck::{Pod, Zeroable};
use wgsl_dsl::prelude::*;

/// Invocations per workgroup of every kernel here.
pub const WG: u32 = 256;
/// The transpose's tile side.
pub const TILE: u32 = 16;
/// The layer norm's epsilon (PyTorch's default).
pub const LAYER_NORM_EPS: f32 = 1e-5;

/// The sizes and the scalar a memory-bound kernel reads (its `var<uniform>` binding 0).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable, WgslStruct)]
#[wgsl(uniform)]
pub struct MemDims {
    /// Rows of `x`.
    pub rows: u32,
    /// Columns of `x`.
    pub cols: u32,
    /// The scalar `a` of `y = a x + y` (unused by the other kernels).
    pub a: f32,
    /// Padding to 16 bytes.
    pub _pad: u32,
}

/// One memory-bound kernel of the roofline benchmark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemKernel {
    /// `y = x`.
    Copy,
    /// `y = a x + y`.
    Axpy,
    /// `y = gelu(x)` (tanh approximation).
    Gelu,
    /// `y[r] = sum_c x[r, c]`.
    RowSum,
    /// `y = softmax(x)` along each row.
    RowSoftmax,
    /// `y = layer_norm(x)` along each row, without weights.
    RowLayerNorm,
    /// `y = x^T` (`y` is `[cols, rows]`).
    Transpose,
}

impl MemKernel {
    /// Every kernel, in the benchmark's order.
    pub const ALL: [MemKernel; 7] = [
        MemKernel::Copy,
        MemKernel::Axpy,
        MemKernel::Gelu,
        MemKernel::RowSum,
        MemKernel::RowSoftmax,
        MemKernel::RowLayerNorm,
        MemKernel::Transpose,
    ];

    /// The kernel's name (also its entry point and snapshot name).
    pub fn name(self) -> &'static str {
        match self {
            MemKernel::Copy => "mem_copy",
            MemKernel::Axpy => "mem_axpy",
            MemKernel::Gelu => "mem_gelu",
            MemKernel::RowSum => "mem_row_sum",
            MemKernel::RowSoftmax => "mem_row_softmax",
            MemKernel::RowLayerNorm => "mem_row_layer_norm",
            MemKernel::Transpose => "mem_transpose",
        }
    }

    /// Elements of `y` for `x [rows, cols]`.
    pub fn output_len(self, rows: u32, cols: u32) -> usize {
        match self {
            MemKernel::RowSum => rows as usize,
            _ => rows as usize * cols as usize,
        }
    }

    /// Bytes the kernel must move at least: every element of `x` read once, every element of
    /// `y` written once (and read once for `y = a x + y`).
    pub fn bytes(self, rows: u32, cols: u32) -> f64 {
        let n = rows as f64 * cols as f64 * 4.0;
        match self {
            MemKernel::Axpy => 3.0 * n,
            MemKernel::RowSum => n + rows as f64 * 4.0,
            _ => 2.0 * n,
        }
    }

    /// Workgroups to dispatch for `x [rows, cols]`.
    pub fn grid(self, rows: u32, cols: u32) -> [u32; 3] {
        match self {
            MemKernel::Copy | MemKernel::Axpy | MemKernel::Gelu => {
                let groups = (rows as u64 * cols as u64).div_ceil(WG as u64);
                let x = groups.min(65535) as u32;
                [x.max(1), groups.div_ceil(65535).max(1) as u32, 1]
            }
            MemKernel::RowSum | MemKernel::RowSoftmax | MemKernel::RowLayerNorm => {
                [rows.clamp(1, 65535), rows.div_ceil(65535).max(1), 1]
            }
            MemKernel::Transpose => [cols.div_ceil(TILE).max(1), rows.div_ceil(TILE).max(1), 1],
        }
    }

    /// The kernel.
    pub fn build(self) -> KernelBuilder {
        match self {
            MemKernel::Copy | MemKernel::Axpy | MemKernel::Gelu => elementwise(self),
            MemKernel::RowSum | MemKernel::RowSoftmax | MemKernel::RowLayerNorm => row(self),
            MemKernel::Transpose => transpose(),
        }
    }

    /// The `f64` specification: `y` from `x [rows, cols]`, `a` and `y`'s value before the
    /// kernel (read by `y = a x + y` only).
    pub fn spec(self, rows: u32, cols: u32, a: f32, x: &[f32], y0: &[f32]) -> Vec<f64> {
        let (rows, cols) = (rows as usize, cols as usize);
        let x: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
        let row = |r: usize| &x[r * cols..(r + 1) * cols];
        match self {
            MemKernel::Copy => x,
            MemKernel::Axpy => x
                .iter()
                .zip(y0)
                .map(|(&v, &w)| f64::from(a) * v + f64::from(w))
                .collect(),
            MemKernel::Gelu => x.iter().map(|&v| gelu_f64(v)).collect(),
            MemKernel::RowSum => (0..rows).map(|r| row(r).iter().sum()).collect(),
            MemKernel::RowSoftmax => (0..rows)
                .flat_map(|r| {
                    let m = row(r).iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    let s: f64 = row(r).iter().map(|&v| (v - m).exp()).sum();
                    row(r)
                        .iter()
                        .map(move |&v| (v - m).exp() / s)
                        .collect::<Vec<_>>()
                })
                .collect(),
            MemKernel::RowLayerNorm => (0..rows)
                .flat_map(|r| {
                    let mean = row(r).iter().sum::<f64>() / cols as f64;
                    let var = row(r).iter().map(|&v| (v - mean).powi(2)).sum::<f64>() / cols as f64;
                    let inv = 1.0 / (var + f64::from(LAYER_NORM_EPS)).sqrt();
                    row(r)
                        .iter()
                        .map(move |&v| (v - mean) * inv)
                        .collect::<Vec<_>>()
                })
                .collect(),
            MemKernel::Transpose => {
                let mut y = vec![0.0; rows * cols];
                for r in 0..rows {
                    for c in 0..cols {
                        y[c * rows + r] = x[r * cols + c];
                    }
                }
                y
            }
        }
    }

    /// The largest error allowed against [`MemKernel::spec`] for one element of `y`, whose
    /// `magnitude` is: for `y = a x + y`, `|a x| + |y|`; for a row sum, the sum of the row's
    /// `|x|`; for the others, `|spec|`. Copies are exact; element-wise arithmetic a few `f32`
    /// roundings; the row kernels a sum's bound, `cols * 2^-23` relative to the magnitude
    /// (softmax: relative to the element; layer norm: to the element plus one, since the
    /// mean's error is subtracted from every element).
    pub fn tolerance(self, cols: u32, magnitude: f64) -> f64 {
        let eps = f64::from(f32::EPSILON);
        let sum = f64::from(cols) * eps;
        match self {
            MemKernel::Copy | MemKernel::Transpose => 0.0,
            MemKernel::Axpy => 2.0 * eps * magnitude,
            // WGSL's tanh is accurate as sinh(x) / cosh(x) (WGSL spec §15.7.4): a few ULP of
            // the result's scale.
            MemKernel::Gelu => 64.0 * eps * magnitude.max(1.0),
            MemKernel::RowSum => sum * magnitude,
            // exp's error is 3 + 2|x| ULP (§15.7.4) with |x - max| < 16 here: 64 ULP.
            MemKernel::RowSoftmax => (2.0 * sum + 64.0 * eps) * magnitude,
            MemKernel::RowLayerNorm => (4.0 * sum + 64.0 * eps) * (magnitude + 1.0),
        }
    }
}

/// Compare a kernel's output `got` with [`MemKernel::spec`] element by element, each within
/// [`MemKernel::tolerance`]; `x`, `a` and `y0` are what the kernel was given (`y0`: `y` before
/// the kernel, NaN-poisoned except for `y = a x + y`).
///
/// # Errors
/// The first element outside its bound (a NaN included), as a message naming it.
pub fn check(
    kind: MemKernel,
    (rows, cols): (u32, u32),
    a: f32,
    x: &[f32],
    y0: &[f32],
    got: &[f32],
) -> Result<Checked, String> {
    let want = kind.spec(rows, cols, a, x, y0);
    if got.len() != want.len() {
        return Err(format!(
            "{}: {} elements, want {}",
            kind.name(),
            got.len(),
            want.len()
        ));
    }
    let mut checked = Checked::default();
    let width = cols as usize;
    for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
        let magnitude = match kind {
            MemKernel::Axpy => (f64::from(a) * f64::from(x[i])).abs() + f64::from(y0[i]).abs(),
            MemKernel::RowSum => x[i * width..(i + 1) * width]
                .iter()
                .map(|v| f64::from(v.abs()))
                .sum(),
            _ => w.abs(),
        };
        let allowed = kind.tolerance(cols, magnitude);
        let err = (f64::from(g) - w).abs();
        if err.partial_cmp(&allowed).is_none_or(|o| o.is_gt()) {
            return Err(format!(
                "{}: element {i}: got {g}, want {w} (error {err:e}, allowed {allowed:e})",
                kind.name()
            ));
        }
        if err > checked.worst {
            checked = Checked {
                worst: err,
                allowed,
            };
        }
    }
    Ok(checked)
}

/// The largest error [`check`] found, with the bound of that element.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Checked {
    /// The largest absolute error.
    pub worst: f64,
    /// The bound of the element where it was found.
    pub allowed: f64,
}

/// GELU, tanh approximation, in `f64`.
pub fn gelu_f64(x: f64) -> f64 {
    let c = (2.0 / std::f64::consts::PI).sqrt();
    0.5 * x * (1.0 + (c * (x + 0.044715 * x * x * x)).tanh())
}

fn elementwise(kind: MemKernel) -> KernelBuilder {
    let mut k = KernelBuilder::new(kind.name(), [WG, 1, 1]);
    let dims = k.uniform::<MemDims>("dims");
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let n = k.let_("n", dims.rows().load() * dims.cols().load());
    // A 2-D grid of workgroups: workgroup (gx, gy) covers elements from (gy * 65535 + gx) * 256.
    let group = k.let_("group", workgroup_id().y() * 65535u32 + workgroup_id().x());
    let i = k.let_("i", group * WG + local_invocation_index());
    k.if_(i.lt(&n), |k| {
        let v = k.let_("v", x.at(&i).load());
        match kind {
            MemKernel::Copy => k.store(&y.at(&i), v),
            MemKernel::Axpy => {
                let a = k.let_("a", dims.a().load());
                k.store(&y.at(&i), fma(a, v, y.at(&i).load()));
            }
            _ => {
                let c = (2.0f64 / std::f64::consts::PI).sqrt() as f32;
                let inner = k.let_("inner", lit(c) * (&v + lit(0.044715f32) * &v * &v * &v));
                k.store(&y.at(&i), lit(0.5f32) * &v * (lit(1.0f32) + tanh(inner)));
            }
        }
    });
    k
}

/// `partial[0] = op(partial[0..WG])` by a tree in workgroup memory; every invocation then reads
/// the result. Called in uniform control flow.
fn reduce(
    k: &mut KernelBuilder,
    partial: &Place<Array<f32, { WG as usize }>, ReadWrite>,
    lid: &Exp<u32>,
    name: &str,
    op: fn(Exp<f32>, Exp<f32>) -> Exp<f32>,
) -> Exp<f32> {
    k.workgroup_barrier();
    let mut stride = WG / 2;
    while stride > 0 {
        k.if_(lid.lt(stride), |k| {
            let other = partial.at(lid + stride).load();
            let mine = partial.at(lid).load();
            k.store(&partial.at(lid), op(mine, other));
        });
        k.workgroup_barrier();
        stride /= 2;
    }
    let result = k.let_(name, partial.at(0u32).load());
    // Every invocation has read partial[0] before the array is written again.
    k.workgroup_barrier();
    result
}

fn row(kind: MemKernel) -> KernelBuilder {
    let mut k = KernelBuilder::new(kind.name(), [WG, 1, 1]);
    let dims = k.uniform::<MemDims>("dims");
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let partial = k.workgroup::<Array<f32, { WG as usize }>>("partial");
    let rows = k.let_("rows", dims.rows().load());
    let cols = k.let_("cols", dims.cols().load());
    let lid = k.let_("lid", local_invocation_index());
    let r = k.let_("r", workgroup_id().y() * 65535u32 + workgroup_id().x());
    // Workgroups past the last row (the 2-D grid's tail) skip the work but not the barriers:
    // their invocations read no element (the loops run zero times) and write nothing.
    let live = k.let_("live", r.lt(&rows));
    let len = k.let_("len", select(lit(0u32), cols.clone(), live.clone()));
    let base = k.let_("base", &r * &cols);
    let add = |a: Exp<f32>, b: Exp<f32>| a + b;
    match kind {
        MemKernel::RowSum => {
            let acc = k.var("acc", 0.0f32);
            k.for_step("c", lid.clone(), len.clone(), WG, |k, c| {
                k.update(&acc, |s| s + x.at(&base + c).load());
            });
            k.store(&partial.at(&lid), acc.load());
            let sum = reduce(&mut k, &partial, &lid, "sum", add);
            k.if_(live.and(lid.eq(0u32)), |k| k.store(&y.at(&r), sum));
        }
        MemKernel::RowSoftmax => {
            let m = k.var("m", f32::MIN);
            k.for_step("c", lid.clone(), len.clone(), WG, |k, c| {
                k.update(&m, |m| max(m, x.at(&base + c).load()));
            });
            k.store(&partial.at(&lid), m.load());
            let row_max = reduce(&mut k, &partial, &lid, "row_max", |a, b| max(a, b));
            let s = k.var("s", 0.0f32);
            k.for_step("c", lid.clone(), len.clone(), WG, |k, c| {
                k.update(&s, |s| s + exp(x.at(&base + c).load() - &row_max));
            });
            k.store(&partial.at(&lid), s.load());
            let total = reduce(&mut k, &partial, &lid, "total", add);
            let inv = k.let_("inv", lit(1.0f32) / total);
            k.for_step("c", lid.clone(), len.clone(), WG, |k, c| {
                let e = exp(x.at(&base + &c).load() - &row_max);
                k.store(&y.at(&base + c), e * &inv);
            });
        }
        _ => {
            let s = k.var("s", 0.0f32);
            k.for_step("c", lid.clone(), len.clone(), WG, |k, c| {
                k.update(&s, |s| s + x.at(&base + c).load());
            });
            k.store(&partial.at(&lid), s.load());
            let total = reduce(&mut k, &partial, &lid, "total", add);
            let mean = k.let_("mean", total / cols.to_f32());
            let q = k.var("q", 0.0f32);
            k.for_step("c", lid.clone(), len.clone(), WG, |k, c| {
                let d = x.at(&base + c).load() - &mean;
                k.update(&q, |q| fma(d.clone(), d, q));
            });
            k.store(&partial.at(&lid), q.load());
            let squares = reduce(&mut k, &partial, &lid, "squares", add);
            let inv = k.let_(
                "inv",
                inverse_sqrt(squares / cols.to_f32() + lit(LAYER_NORM_EPS)),
            );
            k.for_step("c", lid.clone(), len.clone(), WG, |k, c| {
                let v = x.at(&base + &c).load();
                k.store(&y.at(&base + c), (v - &mean) * &inv);
            });
        }
    }
    k
}

fn transpose() -> KernelBuilder {
    let mut k = KernelBuilder::new(MemKernel::Transpose.name(), [TILE, TILE, 1]);
    let dims = k.uniform::<MemDims>("dims");
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let tile = k.workgroup::<Array<f32, { (TILE * (TILE + 1)) as usize }>>("tile");
    let rows = k.let_("rows", dims.rows().load());
    let cols = k.let_("cols", dims.cols().load());
    let tx = k.let_("tx", local_invocation_id().x());
    let ty = k.let_("ty", local_invocation_id().y());
    // Read x[r, c] for the tile's rows r and columns c, coalesced along c.
    let c = k.let_("c", workgroup_id().x() * TILE + &tx);
    let r = k.let_("r", workgroup_id().y() * TILE + &ty);
    k.if_(r.lt(&rows).and(c.lt(&cols)), |k| {
        k.store(
            &tile.at(&ty * (TILE + 1) + &tx),
            x.at(&r * &cols + &c).load(),
        );
    });
    k.workgroup_barrier();
    // Write y[c', r'] = x[r', c'] coalesced along r': invocation (tx, ty) writes column
    // c' = group.x * 16 + ty, row r' = group.y * 16 + tx.
    let yc = k.let_("yc", workgroup_id().x() * TILE + &ty);
    let yr = k.let_("yr", workgroup_id().y() * TILE + &tx);
    k.if_(yr.lt(&rows).and(yc.lt(&cols)), |k| {
        k.store(
            &y.at(&yc * &rows + &yr),
            tile.at(&tx * (TILE + 1) + &ty).load(),
        );
    });
    k
}
