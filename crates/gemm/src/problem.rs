//! The problem a kernel solves: its sizes and [`Layout`] ([`Problem`]) and the uniform the
//! kernels read them from ([`GemmDims`]). Below the configurations (`config`), the kernels'
//! stages and the kernels, which all take a `Problem`; `lib.rs` re-exports them.

use bytemuck::{Pod, Zeroable};
use wgsl_dsl::WgslStruct;

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

impl std::fmt::Display for Problem {
    /// `MxNxK layout`, e.g. `250x250x250 ab`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}x{}x{} {}", self.m, self.n, self.k, self.layout.name())
    }
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
