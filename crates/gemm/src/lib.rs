//! # wgsl-gemm: matrix products written with wgsl-dsl
//!
//! `C = op(A) op(B)` for `C [M, N]` row-major, with `op(A) [M, K]` and `op(B) [K, N]`, where
//! `op` is the identity or the transpose (the [`Layout`]): the products a multi-layer
//! perceptron needs are `A B` (input gradient), `A^T B` (weight gradient) and `A B^T`
//! (forward, weights stored `[out, in]`). Two kernels, each a DSL kernel with its CPU
//! specification ([`spec`]):
//!
//! - [`simt`]: `f32` on the ordinary ALUs. Each workgroup computes a `block_m x block_n` tile
//!   of `C`, each invocation a `thread_m x thread_n` block of it in registers; `K` is walked
//!   `block_k` at a time through two workgroup buffers (the next tile is loaded from memory
//!   while the current one is multiplied), with `vec4` loads and stores where the sizes
//!   allow. The tile sizes are chosen per shape by [`SimtConfig::choose`].
//! - [`coop`]: tensor cores through cooperative matrices ([`wgsl_dsl::types::CoopMat`]):
//!   `f16` inputs (or `f32` inputs rounded to `f16` as they are staged), `f32` accumulators,
//!   16x16x16 multiply-adds; each subgroup computes a `warp_m x warp_n` tile from workgroup
//!   memory, staged as in the SIMT kernel. Configuration by [`CoopConfig::choose`].
//!
//! Both handle any `M`, `N`, `K` (elements outside the matrices are read as zero and not
//! written) and every [`Layout`]. Both are checked against [`spec`] on the CPU interpreter
//! (`wgsl_dsl::interp`, which also runs the cooperative matrices lavapipe lacks: relative error
//! within `gamma_K(2^-22)` for `f16` inputs, see [`spec::coop_bound`]) in
//! `tests/interp.rs`, and on the GPU by `gemm check`. Sizes are run-time data (a [`GemmDims`] uniform); the tile
//! configuration is part of the kernel and of its name (`simt_abt_128x128x8_8x8_vec`).
//!
//! ```
//! use wgsl_gemm::{Layout, Problem, SimtConfig};
//! use wgsl_dsl::TargetLimits;
//!
//! let problem = Problem::new(4096, 4096, 4096, Layout::AB);
//! let config = SimtConfig::choose(&problem, &TargetLimits::default());
//! let shader = wgsl_gemm::simt::build(&config).build()?;
//! assert!(shader.wgsl.contains("workgroupBarrier()"));
//! # Ok::<(), wgsl_dsl::BuildError>(())
//! ```

pub mod config;
pub mod coop;
pub mod harness;
pub mod run;
pub mod simt;
pub mod spec;
mod stage;

pub use config::{CoopConfig, CoopInput, SimtConfig, TileConfig, h200_limits};
pub use run::{Gemm, GemmError};

use bytemuck::{Pod, Zeroable};
use wgsl_dsl::WgslStruct;

/// The kernels whose WGSL the workspace's snapshot test pins, with the target each is built
/// for: for every layout, the configurations an H200 runs 4096^3 with (SIMT, and tensor cores
/// on `f16` buffers), the tensor-core kernel loading fragments directly at 4096^3, the
/// tensor-core kernel on `f32` buffers for the MLP's forward over a whole epoch, and both
/// kernels with scalar accesses for odd sizes.
pub fn snapshot_kernels() -> Vec<(wgsl_dsl::KernelBuilder, wgsl_dsl::TargetLimits)> {
    let target = h200_limits();
    let mut v = Vec::new();
    for layout in Layout::ALL {
        let p = Problem::new(4096, 4096, 4096, layout);
        v.push((simt::build(&SimtConfig::choose(&p, &target)), target));
        v.push((
            coop::build(&CoopConfig::choose(&p, CoopInput::F16, &target, 32)),
            target,
        ));
    }
    let square = Problem::new(4096, 4096, 4096, Layout::AB);
    if let Some(direct) = CoopConfig::choose_direct(&square, &target, 32) {
        v.push((coop::build(&direct), target));
    }
    let forward = Problem::new(60000, 128, 784, Layout::ABt);
    v.push((
        coop::build(&CoopConfig::choose(&forward, CoopInput::F32, &target, 32)),
        target,
    ));
    let odd = Problem::new(37, 45, 61, Layout::ABt);
    v.push((simt::build(&SimtConfig::choose(&odd, &target)), target));
    v.push((
        coop::build(&CoopConfig::choose(&odd, CoopInput::F16, &target, 32)),
        target,
    ));
    v
}

/// Which operands are stored transposed. `A` is logically `[M, K]` and `B` `[K, N]`; a
/// transposed operand is stored as the transpose, row-major (`A^T` as `[K, M]`, `B^T` as
/// `[N, K]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// `C = A B`: `A [M, K]`, `B [K, N]`.
    AB,
    /// `C = A^T B`: `A` stored `[K, M]`, `B [K, N]` (an MLP's weight gradient `dY^T X`).
    AtB,
    /// `C = A B^T`: `A [M, K]`, `B` stored `[N, K]` (an MLP's forward `X W^T`).
    ABt,
    /// `C = A^T B^T`: `A` stored `[K, M]`, `B` stored `[N, K]`.
    AtBt,
}

impl Layout {
    /// All four layouts.
    pub const ALL: [Layout; 4] = [Layout::AB, Layout::AtB, Layout::ABt, Layout::AtBt];

    /// True when `A` is stored transposed (`[K, M]`).
    pub fn a_transposed(self) -> bool {
        matches!(self, Layout::AtB | Layout::AtBt)
    }

    /// True when `B` is stored transposed (`[N, K]`).
    pub fn b_transposed(self) -> bool {
        matches!(self, Layout::ABt | Layout::AtBt)
    }

    /// The name used in kernel names: `ab`, `atb`, `abt`, `atbt`.
    pub fn name(self) -> &'static str {
        match self {
            Layout::AB => "ab",
            Layout::AtB => "atb",
            Layout::ABt => "abt",
            Layout::AtBt => "atbt",
        }
    }

    /// Parse [`Layout::name`].
    pub fn from_name(name: &str) -> Option<Layout> {
        Layout::ALL.into_iter().find(|l| l.name() == name)
    }
}

/// One product: sizes and layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Problem {
    /// Rows of `C` and `op(A)`.
    pub m: u32,
    /// Columns of `C` and `op(B)`.
    pub n: u32,
    /// Columns of `op(A)`, rows of `op(B)`.
    pub k: u32,
    /// Which operands are stored transposed.
    pub layout: Layout,
}

impl Problem {
    /// `C [m, n] = op(A) [m, k] op(B) [k, n]` with `A` and `B` stored as `layout` says.
    pub const fn new(m: u32, n: u32, k: u32, layout: Layout) -> Problem {
        Problem { m, n, k, layout }
    }

    /// Each of `sizes` (`(m, n, k)`) in every layout: all sizes in [`Layout::ALL`]'s first
    /// layout, then in the next.
    pub fn every_layout(sizes: &[(u32, u32, u32)]) -> Vec<Problem> {
        Layout::ALL
            .into_iter()
            .flat_map(|layout| {
                sizes
                    .iter()
                    .map(move |&(m, n, k)| Problem::new(m, n, k, layout))
            })
            .collect()
    }

    /// Elements of the buffer holding `A` (`M K`).
    pub fn a_len(&self) -> usize {
        self.m as usize * self.k as usize
    }
    /// Elements of the buffer holding `B` (`K N`).
    pub fn b_len(&self) -> usize {
        self.k as usize * self.n as usize
    }
    /// Elements of `C` (`M N`).
    pub fn c_len(&self) -> usize {
        self.m as usize * self.n as usize
    }
    /// Floating-point operations of the product, `2 M N K`.
    pub fn flops(&self) -> f64 {
        2.0 * f64::from(self.m) * f64::from(self.n) * f64::from(self.k)
    }
    /// The row length of `A` as stored (`K`, or `M` when transposed): what `vec4` loads of
    /// `A` need to be a multiple of 4.
    pub fn a_row_len(&self) -> u32 {
        if self.layout.a_transposed() {
            self.m
        } else {
            self.k
        }
    }
    /// The row length of `B` as stored (`N`, or `K` when transposed).
    pub fn b_row_len(&self) -> u32 {
        if self.layout.b_transposed() {
            self.k
        } else {
            self.n
        }
    }
    /// The uniform the kernels read.
    pub fn dims(&self) -> GemmDims {
        GemmDims {
            m: self.m,
            n: self.n,
            k: self.k,
            _pad: 0,
        }
    }
}

/// The sizes a GEMM kernel reads (its `var<uniform>` binding 0).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable, WgslStruct)]
#[wgsl(uniform)]
pub struct GemmDims {
    /// Rows of `C`.
    pub m: u32,
    /// Columns of `C`.
    pub n: u32,
    /// The inner dimension.
    pub k: u32,
    /// Padding to 16 bytes.
    pub _pad: u32,
}
