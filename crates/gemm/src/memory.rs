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
//! Each kernel also comes in the variants a kernel author tries next ([`MemConfig`]): `vec4`
//! bindings (`array<vec4<f32>>`: 16-byte loads and stores, where the length or the row is a
//! multiple of 4), several `vec4`s per invocation for the element-wise kernels, and for the
//! transpose a 32 x 33 tile with four rows per invocation, `vec4` tiles, and a tile of `vec4`s
//! with an XOR swizzle instead of padding, moved as 4 x 4 blocks (32 or 64 wide; the 64-wide one
//! is the fastest on the H200, as fast as torch.compile's 64 x 64 Triton kernel).
//! [`MemConfig::candidates`] lists those valid for a shape; `gemm roofline` times each.
//!
//! GELU is the tanh approximation (Hendrycks & Gimpel 2016, eq. after (1); PyTorch's
//! `gelu(approximate="tanh")`): `0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))`.

use bytemuck::{Pod, Zeroable};
use wgsl_dsl::prelude::*;
use wgsl_dsl::types::{Float, Numeric, ScalarOrVector};

use crate::tiled::component;

/// Invocations per workgroup of every kernel here.
pub const WG: u32 = 256;
/// The transpose's tile side.
pub const TILE: u32 = 16;
/// The most `vec4`s per invocation a row kernel holds its row in (rows of up to 8192 `f32`).
pub const MAX_HELD: u32 = 8;
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

/// How a memory-bound kernel moves its data: the element type of its `x` and `y` bindings and
/// how much each invocation handles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MemConfig {
    /// `x` and `y` bind as `array<vec4<f32>>` (16-byte loads and stores). Needs the element
    /// count (element-wise kernels) or the row length (row kernels) to be a multiple of 4;
    /// not for the transpose or the row sum's `y`.
    pub vec4: bool,
    /// Element-wise kernels: elements (or `vec4`s) per invocation, `1`, `2` or `4`, each
    /// `256` apart so that a workgroup's loads stay contiguous. Transpose: `1` (a 16 x 16 tile,
    /// one element per invocation), `4` or `8` (a 32 x 32 tile of 32 x 8 or 32 x 4
    /// invocations, four or eight rows each). Row kernels: `1` (the row streamed from memory
    /// once per pass), or with `vec4` the `vec4`s each invocation holds in registers (the row
    /// read from memory once; rows of at most `4 * 256 * per_invocation` elements).
    pub per_invocation: u32,
    /// Transpose with `vec4` only: `0` for the padded 32 x 33 tile above; `32` or `64` for a
    /// `side x side` tile moved as 4 x 4 blocks through an XOR-swizzled tile of `vec4`s
    /// (`(side / 4)^2` invocations, each loading 4 `vec4`s of `x`, all issued before the first
    /// is stored, then storing 4 `vec4`s of `y` transposed in registers; no padding, so the
    /// 64-wide tile is 16 KiB, WebGPU's default limit).
    pub swizzled: u32,
    /// Transpose only: workgroup `x` walks the tiles down `x`'s rows (along `y`'s rows)
    /// instead of across its columns, so that consecutive workgroups write adjacent stretches
    /// of the same lines of `y`.
    pub grid_yx: bool,
}

impl MemConfig {
    /// One `f32` per invocation: the kernels as first written.
    pub const SCALAR: MemConfig = MemConfig {
        vec4: false,
        per_invocation: 1,
        swizzled: 0,
        grid_yx: false,
    };

    /// The configurations of `kind` valid for `x [rows, cols]`, [`MemConfig::SCALAR`] first.
    pub fn candidates(kind: MemKernel, rows: u32, cols: u32) -> Vec<MemConfig> {
        let mut v = vec![MemConfig::SCALAR];
        let vec4 = |per_invocation| MemConfig {
            vec4: true,
            per_invocation,
            ..MemConfig::SCALAR
        };
        match kind {
            MemKernel::Copy | MemKernel::Axpy | MemKernel::Gelu => {
                if (rows as u64 * cols as u64).is_multiple_of(4) {
                    v.extend([vec4(1), vec4(2), vec4(4)]);
                }
            }
            MemKernel::RowSum | MemKernel::RowSoftmax | MemKernel::RowLayerNorm => {
                if cols.is_multiple_of(4) {
                    v.push(vec4(1));
                    // The row held in registers: the fewest `vec4`s per invocation that hold
                    // it, up to 8 (rows of at most 8192 elements).
                    let held = (cols / 4).div_ceil(WG).max(2);
                    if held <= MAX_HELD {
                        v.push(vec4(held));
                    }
                }
            }
            MemKernel::Transpose => {
                v.extend([4, 8].map(|per_invocation| MemConfig {
                    per_invocation,
                    ..MemConfig::SCALAR
                }));
                if rows.is_multiple_of(4) && cols.is_multiple_of(4) {
                    v.extend([vec4(1), vec4(2), vec4(4)]);
                    // One change each from `vec4(1)`: the grid's order; the swizzled tile of
                    // 4 x 4 blocks, 32 and 64 wide; the 64-wide one in the other order.
                    let yx = |c: MemConfig| MemConfig { grid_yx: true, ..c };
                    let swizzled = |side| MemConfig {
                        swizzled: side,
                        ..vec4(1)
                    };
                    v.extend([yx(vec4(1)), swizzled(32), swizzled(64), yx(swizzled(64))]);
                }
            }
        }
        v
    }

    /// Whether `kind` in configuration `self` computes `x [rows, cols]` right: a `vec4`
    /// kernel needs the length (element-wise) or the row (row kernels) to be a multiple of 4,
    /// and a row kernel holding its row in registers needs the row to fit
    /// (`cols <= 4 * 256 * per_invocation`).
    pub fn valid(self, kind: MemKernel, rows: u32, cols: u32) -> bool {
        let p = self.per_invocation;
        match (kind, self.vec4) {
            _ if kind != MemKernel::Transpose && (self.swizzled != 0 || self.grid_yx) => false,
            (MemKernel::Copy | MemKernel::Axpy | MemKernel::Gelu, vec4) => {
                [1, 2, 4].contains(&p) && (!vec4 || (rows as u64 * cols as u64).is_multiple_of(4))
            }
            (MemKernel::RowSum | MemKernel::RowSoftmax | MemKernel::RowLayerNorm, false) => p == 1,
            (MemKernel::RowSum | MemKernel::RowSoftmax | MemKernel::RowLayerNorm, true) => {
                cols.is_multiple_of(4) && (p == 1 || (p <= MAX_HELD && cols / 4 <= WG * p))
            }
            (MemKernel::Transpose, false) => [1, 4, 8].contains(&p) && self.swizzled == 0,
            (MemKernel::Transpose, true) => {
                rows.is_multiple_of(4)
                    && cols.is_multiple_of(4)
                    && match self.swizzled {
                        0 => [1, 2, 4].contains(&p),
                        32 | 64 => p == 1,
                        _ => false,
                    }
            }
        }
    }

    /// Whether `kind`'s `x` binds as `array<vec4<f32>>` in this configuration (bind the buffer
    /// through its `as_vec4` view).
    pub fn x_vec4(self) -> bool {
        self.vec4
    }

    /// Whether `kind`'s `y` binds as `array<vec4<f32>>` (the row sum's `y`, one value per row,
    /// stays `array<f32>`).
    pub fn y_vec4(self, kind: MemKernel) -> bool {
        self.vec4 && kind != MemKernel::RowSum
    }

    /// The elements one lane of the bindings holds: 4 for `vec4`, else 1.
    fn width(self) -> u32 {
        if self.vec4 { 4 } else { 1 }
    }
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

    /// The entry point (and snapshot name) of `self` in configuration `c`: [`MemKernel::name`]
    /// for [`MemConfig::SCALAR`], else with `_vec4`, `_x<per_invocation>` or `_32x8`/`_32x4`
    /// (the transpose's 32 x 32 tile and its workgroup) appended; the `vec4` transposes are
    /// `mem_transpose_vec4_32` and `mem_transpose_vec4_32_x2`/`_x4` (`vec4`s each way per
    /// invocation); the swizzled tiles `mem_transpose_vec4_32_swz`/`_64_swz`; `_yx` appended
    /// where the grid walks `x`'s rows first.
    pub fn kernel_name(self, c: MemConfig) -> String {
        let mut name = self.name().to_string();
        if c.vec4 {
            name.push_str("_vec4");
        }
        if self == MemKernel::Transpose && c.vec4 {
            name.push_str(&format!("_{}", transpose_side(c)));
            if c.per_invocation > 1 {
                name.push_str(&format!("_x{}", c.per_invocation));
            }
            if c.swizzled != 0 {
                name.push_str("_swz");
            }
        } else if c.per_invocation > 1 {
            if self == MemKernel::Transpose {
                name.push_str(&format!("_32x{}", 32 / c.per_invocation));
            } else {
                name.push_str(&format!("_x{}", c.per_invocation));
            }
        }
        if c.grid_yx {
            name.push_str("_yx");
        }
        name
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

    /// Workgroups to dispatch for `x [rows, cols]` ([`MemConfig::SCALAR`]).
    pub fn grid(self, rows: u32, cols: u32) -> [u32; 3] {
        self.grid_for(MemConfig::SCALAR, rows, cols)
    }

    /// Workgroups to dispatch for `x [rows, cols]` in configuration `c`.
    pub fn grid_for(self, c: MemConfig, rows: u32, cols: u32) -> [u32; 3] {
        match self {
            MemKernel::Copy | MemKernel::Axpy | MemKernel::Gelu => {
                let units = (rows as u64 * cols as u64) / u64::from(c.width());
                let groups = units.div_ceil(u64::from(WG * c.per_invocation));
                let x = groups.min(65535) as u32;
                [x.max(1), groups.div_ceil(65535).max(1) as u32, 1]
            }
            MemKernel::RowSum | MemKernel::RowSoftmax | MemKernel::RowLayerNorm => {
                [rows.clamp(1, 65535), rows.div_ceil(65535).max(1), 1]
            }
            MemKernel::Transpose => {
                let side = transpose_side(c);
                let (across, down) = (cols.div_ceil(side).max(1), rows.div_ceil(side).max(1));
                if c.grid_yx {
                    [down, across, 1]
                } else {
                    [across, down, 1]
                }
            }
        }
    }

    /// The kernel ([`MemConfig::SCALAR`]).
    pub fn build(self) -> KernelBuilder {
        self.build_for(MemConfig::SCALAR)
    }

    /// The kernel in configuration `c` (one of [`MemConfig::candidates`] for the shapes it
    /// will run on: a `vec4` kernel reads `x` four elements at a time).
    pub fn build_for(self, c: MemConfig) -> KernelBuilder {
        match (self, c.vec4) {
            (MemKernel::Copy | MemKernel::Axpy | MemKernel::Gelu, false) => {
                elementwise::<f32>(self, c)
            }
            (MemKernel::Copy | MemKernel::Axpy | MemKernel::Gelu, true) => {
                elementwise::<Vec4<f32>>(self, c)
            }
            (MemKernel::RowSum | MemKernel::RowSoftmax | MemKernel::RowLayerNorm, false) => {
                row::<f32>(self, c)
            }
            (MemKernel::RowSum | MemKernel::RowSoftmax | MemKernel::RowLayerNorm, true) => {
                if c.per_invocation > 1 {
                    row_held(self, c)
                } else {
                    row::<Vec4<f32>>(self, c)
                }
            }
            (MemKernel::Transpose, _) => transpose(c),
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

/// What the kernels here bind `x` and `y` as: `f32` or `vec4<f32>`, with the few operations
/// that differ between the two written once.
trait Lane: Sized + Float + Numeric<Elem = f32> + ScalarOrVector<Elem = f32> {
    /// Elements per lane.
    const WIDTH: u32;
    /// A lane of `v`s (`v` itself for `f32`).
    fn splat(v: Exp<f32>) -> Exp<Self>;
    /// The sum of the lane's elements.
    fn total(v: Exp<Self>) -> Exp<f32>;
    /// The largest of the lane's elements.
    fn most(v: Exp<Self>) -> Exp<f32>;
}

impl Lane for f32 {
    const WIDTH: u32 = 1;
    fn splat(v: Exp<f32>) -> Exp<f32> {
        v
    }
    fn total(v: Exp<f32>) -> Exp<f32> {
        v
    }
    fn most(v: Exp<f32>) -> Exp<f32> {
        v
    }
}

impl Lane for Vec4<f32> {
    const WIDTH: u32 = 4;
    fn splat(v: Exp<f32>) -> Exp<Vec4<f32>> {
        Exp::<Vec4<f32>>::splat(v)
    }
    fn total(v: Exp<Vec4<f32>>) -> Exp<f32> {
        (v.x() + v.y()) + (v.z() + v.w())
    }
    fn most(v: Exp<Vec4<f32>>) -> Exp<f32> {
        max(max(v.x(), v.y()), max(v.z(), v.w()))
    }
}

fn elementwise<L: Lane>(kind: MemKernel, c: MemConfig) -> KernelBuilder {
    let mut k = KernelBuilder::new(kind.kernel_name(c), [WG, 1, 1]);
    let dims = k.uniform::<MemDims>("dims");
    let x = k.storage::<RuntimeArray<L>, ReadOnly>("x");
    let y = k.storage::<RuntimeArray<L>, ReadWrite>("y");
    // `n`: lanes of `x` (the element count is a multiple of the lane's width).
    let elements = dims.rows().load() * dims.cols().load();
    let n = k.let_(
        "n",
        if L::WIDTH == 1 {
            elements
        } else {
            elements / L::WIDTH
        },
    );
    // A 2-D grid of workgroups: workgroup (gx, gy) covers lanes from
    // (gy * 65535 + gx) * 256 * per_invocation, its invocations 256 lanes apart.
    let group = k.let_("group", workgroup_id().y() * 65535u32 + workgroup_id().x());
    let first = k.let_(
        "i",
        group * (WG * c.per_invocation) + local_invocation_index(),
    );
    for j in 0..c.per_invocation {
        let i = if j == 0 {
            first.clone()
        } else {
            k.let_(&format!("i{j}"), &first + j * WG)
        };
        k.if_(i.lt(&n), |k| {
            let v = k.let_("v", x.at(&i).load());
            match kind {
                MemKernel::Copy => k.store(&y.at(&i), v),
                MemKernel::Axpy => {
                    let a = k.let_("a", L::splat(dims.a().load()));
                    k.store(&y.at(&i), fma(a, v, y.at(&i).load()));
                }
                _ => {
                    let c = (2.0f64 / std::f64::consts::PI).sqrt() as f32;
                    let cube = L::splat(lit(0.044715f32)) * &v * &v * &v;
                    let inner = k.let_("inner", L::splat(lit(c)) * (&v + cube));
                    k.store(
                        &y.at(&i),
                        L::splat(lit(0.5f32)) * &v * (L::splat(lit(1.0f32)) + tanh(inner)),
                    );
                }
            }
        });
    }
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

/// What every row kernel declares first: its bindings (`dims`, `x`; `y` of `f32`s, one per row, for the
/// row sum: `Err`; of lanes otherwise: `Ok`), the reduction's workgroup array, and the lets
/// `rows`, `cols`, `lid`, `r` (this workgroup's row), `live`, `lanes`, `len` and `base`.
struct RowStart<L: Lane> {
    k: KernelBuilder,
    x: Place<RuntimeArray<L>, ReadOnly>,
    y: Result<Place<RuntimeArray<L>, ReadWrite>, Place<RuntimeArray<f32>, ReadWrite>>,
    partial: Place<Array<f32, { WG as usize }>, ReadWrite>,
    cols: Exp<u32>,
    lid: Exp<u32>,
    r: Exp<u32>,
    /// Whether `r` is a row (the 2-D grid's tail is not).
    live: Exp<bool>,
    /// Lanes of the row this workgroup reads (0 past the last row).
    len: Exp<u32>,
    /// The row's first lane.
    base: Exp<u32>,
}

fn row_start<L: Lane>(kind: MemKernel, c: MemConfig) -> RowStart<L> {
    let mut k = KernelBuilder::new(kind.kernel_name(c), [WG, 1, 1]);
    let dims = k.uniform::<MemDims>("dims");
    let x = k.storage::<RuntimeArray<L>, ReadOnly>("x");
    let y = match kind {
        MemKernel::RowSum => Err(k.storage::<RuntimeArray<f32>, ReadWrite>("y")),
        _ => Ok(k.storage::<RuntimeArray<L>, ReadWrite>("y")),
    };
    let partial = k.workgroup::<Array<f32, { WG as usize }>>("partial");
    let rows = k.let_("rows", dims.rows().load());
    let cols = k.let_("cols", dims.cols().load());
    let lid = k.let_("lid", local_invocation_index());
    let r = k.let_("r", workgroup_id().y() * 65535u32 + workgroup_id().x());
    // Workgroups past the last row (the 2-D grid's tail) skip the work but not the barriers:
    // their invocations read no element (the loops run zero times) and write nothing.
    let live = k.let_("live", r.lt(&rows));
    // `len` and `base` count lanes: a row is `cols / 4` `vec4`s.
    let lanes = if L::WIDTH == 1 {
        cols.clone()
    } else {
        k.let_("lanes", &cols / L::WIDTH)
    };
    let len = k.let_("len", select(lit(0u32), lanes.clone(), live.clone()));
    let base = k.let_("base", &r * &lanes);
    RowStart {
        k,
        x,
        y,
        partial,
        cols,
        lid,
        r,
        live,
        len,
        base,
    }
}

fn row<L: Lane>(kind: MemKernel, c: MemConfig) -> KernelBuilder {
    let s = row_start::<L>(kind, c);
    let (mut k, x, partial, cols, lid, r) = (s.k, s.x, s.partial, s.cols, s.lid, s.r);
    let (partial_and_y, live, len, base) = (s.y, s.live, s.len, s.base);
    let add = |a: Exp<f32>, b: Exp<f32>| a + b;
    let zero = || L::splat(lit(0.0f32));
    match partial_and_y {
        Err(y) => {
            let acc = k.var("acc", zero());
            k.for_step("c", lid.clone(), len.clone(), WG, |k, c| {
                k.update(&acc, |s| s + x.at(&base + c).load());
            });
            k.store(&partial.at(&lid), L::total(acc.load()));
            let sum = reduce(&mut k, &partial, &lid, "sum", add);
            k.if_(live.and(lid.eq(0u32)), |k| k.store(&y.at(&r), sum));
        }
        Ok(y) if kind == MemKernel::RowSoftmax => {
            let m = k.var("m", L::splat(lit(f32::MIN)));
            k.for_step("c", lid.clone(), len.clone(), WG, |k, c| {
                k.update(&m, |m| max(m, x.at(&base + c).load()));
            });
            k.store(&partial.at(&lid), L::most(m.load()));
            let row_max = reduce(&mut k, &partial, &lid, "row_max", |a, b| max(a, b));
            let s = k.var("s", zero());
            k.for_step("c", lid.clone(), len.clone(), WG, |k, c| {
                k.update(&s, |s| {
                    s + exp(x.at(&base + c).load() - L::splat(row_max.clone()))
                });
            });
            k.store(&partial.at(&lid), L::total(s.load()));
            let total = reduce(&mut k, &partial, &lid, "total", add);
            let inv = k.let_("inv", lit(1.0f32) / total);
            k.for_step("c", lid.clone(), len.clone(), WG, |k, c| {
                let e = exp(x.at(&base + &c).load() - L::splat(row_max.clone()));
                k.store(&y.at(&base + c), e * L::splat(inv.clone()));
            });
        }
        Ok(y) => {
            let s = k.var("s", zero());
            k.for_step("c", lid.clone(), len.clone(), WG, |k, c| {
                k.update(&s, |s| s + x.at(&base + c).load());
            });
            k.store(&partial.at(&lid), L::total(s.load()));
            let total = reduce(&mut k, &partial, &lid, "total", add);
            let mean = k.let_("mean", total / cols.to_f32());
            let q = k.var("q", zero());
            k.for_step("c", lid.clone(), len.clone(), WG, |k, c| {
                let d = x.at(&base + c).load() - L::splat(mean.clone());
                k.update(&q, |q| fma(d.clone(), d, q));
            });
            k.store(&partial.at(&lid), L::total(q.load()));
            let squares = reduce(&mut k, &partial, &lid, "squares", add);
            let inv = k.let_(
                "inv",
                inverse_sqrt(squares / cols.to_f32() + lit(LAYER_NORM_EPS)),
            );
            k.for_step("c", lid.clone(), len.clone(), WG, |k, c| {
                let v = x.at(&base + &c).load();
                k.store(
                    &y.at(&base + c),
                    (v - L::splat(mean.clone())) * L::splat(inv.clone()),
                );
            });
        }
    }
    k
}

/// A row kernel with the row held in registers: each invocation loads `per_invocation`
/// `vec4`s (lanes `lid + 256 j`) once, and every pass reads them from there.
fn row_held(kind: MemKernel, c: MemConfig) -> KernelBuilder {
    type L = Vec4<f32>;
    let s = row_start::<L>(kind, c);
    let (mut k, x, partial, cols, lid, r) = (s.k, s.x, s.partial, s.cols, s.lid, s.r);
    let (partial_and_y, live, len, base) = (s.y, s.live, s.len, s.base);
    // Lane `lid + 256 j` of the row, and whether it is in the row; outside it the value is
    // `fill` (0, or the lowest f32 for a maximum), which no result depends on.
    let fill = if kind == MemKernel::RowSoftmax {
        f32::MIN
    } else {
        0.0
    };
    let mut held = Vec::new();
    for j in 0..c.per_invocation {
        let col = k.let_(&format!("c{j}"), &lid + j * WG);
        let inside = k.let_(&format!("in{j}"), col.lt(&len));
        let v = k.var(&format!("v{j}"), Exp::<L>::splat(lit(fill)));
        k.if_(inside.clone(), |k| k.store(&v, x.at(&base + &col).load()));
        held.push((col, inside, v.load()));
    }
    let add = |a: Exp<f32>, b: Exp<f32>| a + b;
    // The sum of the held lanes (those outside the row hold 0).
    let row_sum = || -> Exp<L> {
        held.iter()
            .map(|(_, _, v)| v.clone())
            .reduce(|a, b| a + b)
            .expect("at least one lane")
    };
    match partial_and_y {
        Err(y) => {
            k.store(&partial.at(&lid), L::total(row_sum()));
            let sum = reduce(&mut k, &partial, &lid, "sum", add);
            k.if_(live.and(lid.eq(0u32)), |k| k.store(&y.at(&r), sum));
        }
        Ok(y) if kind == MemKernel::RowSoftmax => {
            let m = held
                .iter()
                .map(|(_, _, v)| v.clone())
                .reduce(max)
                .expect("at least one lane");
            k.store(&partial.at(&lid), L::most(m));
            let row_max = reduce(&mut k, &partial, &lid, "row_max", |a, b| max(a, b));
            let e: Vec<Exp<L>> = held
                .iter()
                .enumerate()
                .map(|(j, (_, _, v))| k.let_(&format!("e{j}"), exp(v - L::splat(row_max.clone()))))
                .collect();
            let s = e.iter().cloned().reduce(|a, b| a + b).expect("one lane");
            k.store(&partial.at(&lid), L::total(s));
            let sum = reduce(&mut k, &partial, &lid, "total", add);
            let inv = k.let_("inv", lit(1.0f32) / sum);
            for ((col, inside, _), e) in held.iter().zip(e) {
                k.if_(inside.clone(), |k| {
                    k.store(&y.at(&base + col), e * L::splat(inv.clone()))
                });
            }
        }
        Ok(y) => {
            k.store(&partial.at(&lid), L::total(row_sum()));
            let sum = reduce(&mut k, &partial, &lid, "total", add);
            let mean = k.let_("mean", sum / cols.to_f32());
            let centred: Vec<Exp<L>> = held
                .iter()
                .enumerate()
                .map(|(j, (_, inside, v))| {
                    let d = v - L::splat(mean.clone());
                    k.let_(
                        &format!("d{j}"),
                        select(L::splat(lit(0.0f32)), d, inside.clone()),
                    )
                })
                .collect();
            let q = centred
                .iter()
                .map(|d| d * d)
                .reduce(|a, b| a + b)
                .expect("one lane");
            k.store(&partial.at(&lid), L::total(q));
            let squares = reduce(&mut k, &partial, &lid, "squares", add);
            let inv = k.let_(
                "inv",
                inverse_sqrt(squares / cols.to_f32() + lit(LAYER_NORM_EPS)),
            );
            for ((col, inside, _), d) in held.iter().zip(centred) {
                k.if_(inside.clone(), |k| {
                    k.store(&y.at(&base + col), d * L::splat(inv.clone()))
                });
            }
        }
    }
    k
}

/// The transpose's tile side in configuration `c`: 16, or 32 with several rows per invocation;
/// with `vec4`, 32 (one `vec4` per invocation each way; a 64-wide tile would pass WebGPU's
/// default 16 KiB of workgroup memory).
fn transpose_side(c: MemConfig) -> u32 {
    if c.swizzled != 0 {
        return c.swizzled;
    }
    match (c.vec4, c.per_invocation) {
        (true, _) => 2 * TILE,
        (false, 1) => TILE,
        (false, _) => 2 * TILE,
    }
}

fn transpose(cfg: MemConfig) -> KernelBuilder {
    match cfg.swizzled {
        32 => return transpose_swizzled::<{ 32 * 32 / 4 }>(cfg),
        64 => return transpose_swizzled::<{ 64 * 64 / 4 }>(cfg),
        _ => {}
    }
    if cfg.vec4 {
        return transpose_vec4_in::<{ (2 * TILE * (2 * TILE + 1)) as usize }>(cfg);
    }
    if transpose_side(cfg) == TILE {
        transpose_in::<{ (TILE * (TILE + 1)) as usize }>(cfg)
    } else {
        transpose_in::<{ (2 * TILE * (2 * TILE + 1)) as usize }>(cfg)
    }
}

/// The transpose through a tile of `N = side * (side + 1)` elements.
fn transpose_in<const N: usize>(cfg: MemConfig) -> KernelBuilder {
    let side = transpose_side(cfg);
    // Rows of the tile each pass covers: the workgroup is `side x step` invocations.
    let step = side / cfg.per_invocation;
    let name = MemKernel::Transpose.kernel_name(cfg);
    let mut k = KernelBuilder::new(name, [side, step, 1]);
    let (bx, by) = tile_ids(cfg);
    let dims = k.uniform::<MemDims>("dims");
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    // The padding column keeps a column of the tile in different banks.
    let pitch = side + 1;
    let tile = k.workgroup::<Array<f32, N>>("tile");
    let rows = k.let_("rows", dims.rows().load());
    let cols = k.let_("cols", dims.cols().load());
    let tx = k.let_("tx", local_invocation_id().x());
    let ty = k.let_("ty", local_invocation_id().y());
    // Read x[r, c] for the tile's rows r and columns c, coalesced along c.
    let c = k.let_("c", bx() * side + &tx);
    for j in 0..cfg.per_invocation {
        let row = if j == 0 { ty.clone() } else { &ty + j * step };
        let r = k.let_(&suffixed("r", j), by() * side + &row);
        k.if_(r.lt(&rows).and(c.lt(&cols)), |k| {
            k.store(&tile.at(&row * pitch + &tx), x.at(&r * &cols + &c).load());
        });
    }
    k.workgroup_barrier();
    // Write y[c', r'] = x[r', c'] coalesced along r': invocation (tx, ty) writes columns
    // c' = group.x * side + ty (+ step j), row r' = group.y * side + tx.
    let mut yr: Option<Exp<u32>> = None;
    for j in 0..cfg.per_invocation {
        let col = if j == 0 { ty.clone() } else { &ty + j * step };
        let yc = k.let_(&suffixed("yc", j), bx() * side + &col);
        let yr = match &yr {
            Some(yr) => yr.clone(),
            None => yr.insert(k.let_("yr", by() * side + &tx)).clone(),
        };
        k.if_(yr.lt(&rows).and(yc.lt(&cols)), |k| {
            k.store(&y.at(&yc * &rows + &yr), tile.at(&tx * pitch + &col).load());
        });
    }
    k
}

/// The transpose with `vec4` loads and stores (rows and columns multiples of 4): a workgroup of
/// `256 / per_invocation` moves a `side x side` tile (`N = side * (side + 1)` elements of
/// workgroup memory), each invocation loading `per_invocation` `vec4`s along rows of `x` into
/// the tile and storing as many along rows of `y`, gathered from columns of it.
fn transpose_vec4_in<const N: usize>(cfg: MemConfig) -> KernelBuilder {
    let side = transpose_side(cfg);
    let size = WG / cfg.per_invocation;
    let groups = side / 4; // vec4s across the tile
    let step = size / groups; // tile rows one pass covers
    let passes = side / step;
    let mut k = KernelBuilder::new(MemKernel::Transpose.kernel_name(cfg), [size, 1, 1]);
    let (bx, by) = tile_ids(cfg);
    let dims = k.uniform::<MemDims>("dims");
    let x = k.storage::<RuntimeArray<Vec4<f32>>, ReadOnly>("x");
    let y = k.storage::<RuntimeArray<Vec4<f32>>, ReadWrite>("y");
    let tile = k.workgroup::<Array<f32, N>>("tile");
    let pitch = side + 1;
    let rows = k.let_("rows", dims.rows().load());
    let cols = k.let_("cols", dims.cols().load());
    // `vec4`s per row of x and of y.
    let x_width = k.let_("x_width", &cols / 4u32);
    let y_width = k.let_("y_width", &rows / 4u32);
    let lid = k.let_("lid", local_invocation_index());
    let g = k.let_("g", &lid % groups);
    let t = k.let_("t", &lid / groups);
    // x[r, 4 c4 .. 4 c4 + 4] into the tile's row r - group.y * side.
    let c4 = k.let_("c4", bx() * groups + &g);
    for j in 0..passes {
        let tr = k.let_(&suffixed("tr", j), &t + j * step);
        let r = k.let_(&suffixed("r", j), by() * side + &tr);
        k.if_(r.lt(&rows).and(c4.lt(&x_width)), |k| {
            let v = k.let_("v", x.at(&r * &x_width + &c4).load());
            let at = k.let_("at", &tr * pitch + &g * 4u32);
            for (i, part) in [v.x(), v.y(), v.z(), v.w()].into_iter().enumerate() {
                k.store(&tile.at(&at + i as u32), part);
            }
        });
    }
    k.workgroup_barrier();
    // y[c, 4 r4 .. 4 r4 + 4] = x[4 r4 .. 4 r4 + 4, c]: column c - group.x * side of the tile.
    let r4 = k.let_("r4", by() * groups + &g);
    for j in 0..passes {
        let tc = k.let_(&suffixed("tc", j), &t + j * step);
        let c = k.let_(&suffixed("c", j), bx() * side + &tc);
        k.if_(c.lt(&cols).and(r4.lt(&y_width)), |k| {
            let at = k.let_("at", &g * (4 * pitch) + &tc);
            let part = |i: u32| tile.at(&at + i * pitch).load();
            k.store(
                &y.at(&c * &y_width + &r4),
                vec4(part(0), part(1), part(2), part(3)),
            );
        });
    }
    k
}

/// A tile's index along one side of `x`, from the workgroup's id.
type TileId = fn() -> Exp<u32>;

/// The tile a transpose's workgroup moves, as functions giving (tile column, tile row) of `x`:
/// `workgroup_id` (x, y), or (y, x) with [`MemConfig::grid_yx`].
fn tile_ids(cfg: MemConfig) -> (TileId, TileId) {
    let x = || workgroup_id().x();
    let y = || workgroup_id().y();
    if cfg.grid_yx { (y, x) } else { (x, y) }
}

/// The transpose through a swizzled tile of `vec4`s ([`MemConfig::swizzled`]: `side` 32 or 64,
/// `N = side * side / 4`), rows and columns multiples of 4. `(side / 4)^2` invocations; each
/// loads 4 `vec4`s along rows of `x` (rows `t`, `t + step`, ... of the tile, `vec4` column
/// `g`), every load issued before the first store: an index past the matrix is clamped to its
/// last row or column (a value read there is never stored). The tile holds `vec4` `q` of tile
/// row `r` at `r * side / 4 + (q ^ ((r >> 2) & 7))`: a quarter of a warp stores 8 `vec4`s of
/// one row, and reads `vec4` `q` of 8 rows `4 i + k`, in different banks either way. Then each
/// invocation reads the 4 x 4 block of tile rows `4 g .. 4 g + 4`, `vec4` column `q`, and
/// stores its 4 columns as `vec4`s of `y`'s rows `4 q .. 4 q + 4` (of the tile).
fn transpose_swizzled<const N: usize>(cfg: MemConfig) -> KernelBuilder {
    let side = cfg.swizzled;
    let w = side / 4; // vec4s across the tile
    let size = w * w;
    let step = size / w; // tile rows one load covers
    let mut k = KernelBuilder::new(MemKernel::Transpose.kernel_name(cfg), [size, 1, 1]);
    let (bx, by) = tile_ids(cfg);
    let dims = k.uniform::<MemDims>("dims");
    let x = k.storage::<RuntimeArray<Vec4<f32>>, ReadOnly>("x");
    let y = k.storage::<RuntimeArray<Vec4<f32>>, ReadWrite>("y");
    let tile = k.workgroup::<Array<Vec4<f32>, N>>("tile");
    let rows = k.let_("rows", dims.rows().load());
    let cols = k.let_("cols", dims.cols().load());
    let x_width = k.let_("x_width", &cols / 4u32);
    let y_width = k.let_("y_width", &rows / 4u32);
    let lid = k.let_("lid", local_invocation_index());
    let g = k.let_("g", &lid % w);
    let t = k.let_("t", &lid / w);
    let c4 = k.let_("c4", min(bx() * w + &g, &x_width - 1u32));
    let slot = |row: &Exp<u32>, q: &Exp<u32>| row * w + (q ^ ((row >> 2u32) & 7u32));
    let mut loaded = Vec::new();
    for j in 0..side / step {
        let tr = k.let_(&suffixed("tr", j), &t + j * step);
        let r = min(by() * side + &tr, &rows - 1u32);
        let v = k.let_(&suffixed("v", j), x.at(r * &x_width + &c4).load());
        loaded.push((tr, v));
    }
    for (tr, v) in loaded {
        k.store(&tile.at(slot(&tr, &g)), v);
    }
    k.workgroup_barrier();
    // Invocation (g, q) = (lid % w, lid / w): tile rows 4 g + i, vec4 column q.
    let block: Vec<Exp<Vec4<f32>>> = (0..4u32)
        .map(|i| {
            let row = k.let_(&format!("br{i}"), &g * 4u32 + i);
            k.let_(&format!("b{i}"), tile.at(slot(&row, &t)).load())
        })
        .collect();
    // y[c, 4 r4 .. 4 r4 + 4] = x[4 r4 .. 4 r4 + 4, c] for the tile's columns c = 4 q + m.
    let r4 = k.let_("r4", by() * w + &g);
    for m in 0..4u32 {
        let c = k.let_(&suffixed("c", m), bx() * side + &t * 4u32 + m);
        let part = |b: &Exp<Vec4<f32>>| component(b, m);
        k.if_(c.lt(&cols).and(r4.lt(&y_width)), |k| {
            k.store(
                &y.at(&c * &y_width + &r4),
                vec4(
                    part(&block[0]),
                    part(&block[1]),
                    part(&block[2]),
                    part(&block[3]),
                ),
            );
        });
    }
    k
}

/// `name` for the first of several, `name{j}` for the others.
fn suffixed(name: &str, j: u32) -> String {
    if j == 0 {
        name.to_string()
    } else {
        format!("{name}{j}")
    }
}
