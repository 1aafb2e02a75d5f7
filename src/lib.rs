//! Support code for the workspace's cross-crate integration tests in `tests/`.
//!
//! [`examples::all`] is the registry of example kernels: each is a DSL kernel paired with random
//! inputs of odd sizes and an independent CPU reference of what it computes. The snapshot test
//! pins every example's WGSL; the runtime test runs every example on the GPU and compares it with
//! the reference.

pub mod examples;

use rand::Rng;
use rand::rngs::StdRng;

/// The contents of one binding, host side.
#[derive(Clone, Debug, PartialEq)]
pub enum Data {
    /// `array<f32>` or `f32`
    F32(Vec<f32>),
    /// `array<u32>`, `array<atomic<u32>>` or `u32`
    U32(Vec<u32>),
    /// `array<i32>` or `i32`
    I32(Vec<i32>),
}

/// The bit pattern written into output buffers before a kernel runs, so that an element the
/// kernel fails to write shows up.
pub const POISON_U32: u32 = 0xDEAD_BEEF;

impl Data {
    /// An output buffer of `len` poisoned `f32`s (NaN).
    pub fn poisoned_f32(len: usize) -> Data {
        Data::F32(vec![f32::NAN; len])
    }
    /// An output buffer of `len` poisoned `u32`s.
    pub fn poisoned_u32(len: usize) -> Data {
        Data::U32(vec![POISON_U32; len])
    }
    /// An output buffer of `len` poisoned `i32`s.
    pub fn poisoned_i32(len: usize) -> Data {
        Data::I32(vec![POISON_U32 as i32; len])
    }
    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            Data::F32(v) => v.len(),
            Data::U32(v) => v.len(),
            Data::I32(v) => v.len(),
        }
    }
    /// True if empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The `f32` contents; panics (test code) on another type.
    pub fn f32(&mut self) -> &mut Vec<f32> {
        match self {
            Data::F32(v) => v,
            other => panic!("expected f32 data, found {other:?}"),
        }
    }
    /// The `u32` contents; panics (test code) on another type.
    pub fn u32(&mut self) -> &mut Vec<u32> {
        match self {
            Data::U32(v) => v,
            other => panic!("expected u32 data, found {other:?}"),
        }
    }
    /// The `i32` contents; panics (test code) on another type.
    pub fn i32(&mut self) -> &mut Vec<i32> {
        match self {
            Data::I32(v) => v,
            other => panic!("expected i32 data, found {other:?}"),
        }
    }
}

/// One run of an example: the initial contents of every binding, in binding order, and the
/// dispatch size in workgroups.
#[derive(Clone, Debug)]
pub struct Case {
    /// Initial contents, one per binding (outputs poisoned).
    pub buffers: Vec<Data>,
    /// Workgroups to dispatch.
    pub workgroups: [u32; 3],
}

/// An example kernel with its specification.
#[derive(Debug, Clone, Copy)]
pub struct Example {
    /// The kernel's name (its entry point, and its snapshot's name).
    pub name: &'static str,
    /// Builds the kernel.
    pub build: fn() -> wgsl_dsl::KernelBuilder,
    /// Random inputs of odd sizes.
    pub case: fn(&mut StdRng) -> Case,
    /// Computes, on the CPU, what every binding holds after the kernel ran.
    pub reference: fn(&mut [Data]),
    /// Relative tolerance for `f32` outputs (0: bit-exact); absolute below magnitude 1.
    pub tolerance: f32,
    /// Needs subgroup operations.
    pub needs_subgroups: bool,
}

/// `n` uniformly random `f32`s in `[lo, hi)`.
pub fn random_f32(rng: &mut StdRng, n: usize, lo: f32, hi: f32) -> Vec<f32> {
    (0..n).map(|_| rng.random_range(lo..hi)).collect()
}

/// `n` uniformly random `u32`s below `hi`.
pub fn random_u32(rng: &mut StdRng, n: usize, hi: u32) -> Vec<u32> {
    (0..n).map(|_| rng.random_range(0..hi)).collect()
}

/// `n` uniformly random `i32`s in `[lo, hi)`.
pub fn random_i32(rng: &mut StdRng, n: usize, lo: i32, hi: i32) -> Vec<i32> {
    (0..n).map(|_| rng.random_range(lo..hi)).collect()
}

/// Workgroups for `n` invocations in groups of `wg` along x.
pub fn groups_1d(n: usize, wg: u32) -> [u32; 3] {
    [(n as u32).div_ceil(wg), 1, 1]
}
