//! Running a kernel on random operands and checking it against the [`spec`]: what
//! the tests and the `gemm check` command share.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use wgsl_dsl::runtime::{Gpu, GpuBuffer};

use crate::config::{DIRECT_TILES, SINGLE_TILES, WideLoad};
use crate::run::{Gemm, Variant};
use crate::spec::{self, Worst};
use crate::{CoopConfig, CoopInput, GemmDims, GemmError, Layout, Problem, SimtConfig};

/// `len` values uniform in `[-1, 1)` from `seed`.
pub fn random(len: usize, seed: u64) -> Vec<f32> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..len).map(|_| rng.random_range(-1.0f32..1.0)).collect()
}

/// Every direct cooperative configuration ([`CoopConfig::direct_with_tile`] of each of
/// [`DIRECT_TILES`]) for subgroups of `subgroup_size`, in every layout, with a problem all of
/// them divide (256 x 384 x 192): what the tests and `gemm check` build and run.
pub fn direct_checks(subgroup_size: u32) -> Vec<(Problem, CoopConfig)> {
    let mut v = Vec::new();
    for layout in Layout::ALL {
        let p = Problem::new(256, 384, 192, layout);
        for tile in DIRECT_TILES {
            v.push((p, CoopConfig::direct_with_tile(&p, tile, subgroup_size)));
        }
    }
    v
}

/// Every cooperative configuration staged through one buffer per operand
/// ([`CoopConfig::single_with_tile`] of each of [`SINGLE_TILES`]) for subgroups of
/// `subgroup_size`, in every layout, `f16` and `f32` inputs: on `300 x 270 x 200` (no side a
/// multiple of 16; scalar accesses; several steps of `K`, the last partial) and on
/// `260 x 292 x 136` (`vec4` accesses, partial tiles on every side). What the tests and
/// `gemm check` build and run.
pub fn single_checks(subgroup_size: u32) -> Vec<(Problem, CoopConfig)> {
    let mut v = Vec::new();
    for layout in Layout::ALL {
        for (m, n, k) in [(300, 270, 200), (260, 292, 136)] {
            let p = Problem::new(m, n, k, layout);
            for input in [CoopInput::F16, CoopInput::F32] {
                for tile in SINGLE_TILES {
                    v.push((
                        p,
                        CoopConfig::single_with_tile(&p, input, tile, subgroup_size),
                    ));
                }
            }
        }
    }
    v
}

/// Every cooperative configuration reading `A` and `B` sixteen bytes at a time
/// ([`CoopConfig::wide`], both [`WideLoad`]s) with `f16` inputs, through one buffer per
/// operand with each tile of [`SINGLE_TILES`], for subgroups of `subgroup_size`, in every
/// layout, on `264 x 296 x 136` (stored rows multiples of 8 but not of 16, partial tiles on
/// every side, a partial last step of `K`). What the tests and `gemm check` build and run.
pub fn wide_checks(subgroup_size: u32) -> Vec<(Problem, CoopConfig)> {
    let mut v = Vec::new();
    for layout in Layout::ALL {
        let p = Problem::new(264, 296, 136, layout);
        for wide in [WideLoad::Pairs, WideLoad::Words] {
            for tile in SINGLE_TILES {
                let config = CoopConfig::single_with_tile(&p, CoopInput::F16, tile, subgroup_size);
                v.push((p, config.with_wide(wide)));
            }
        }
    }
    v
}

/// Every cooperative configuration without bounds checks ([`CoopConfig::whole_tiles`]),
/// through one buffer per operand with each tile of [`SINGLE_TILES`], `f16` inputs read as
/// `vec4`s or sixteen bytes at a time ([`WideLoad::Words`]), for subgroups of
/// `subgroup_size`, in every layout, on `256 x 512 x 192` (which every such tile divides;
/// several steps of `K`). What the tests and `gemm check` build and run.
pub fn whole_tile_checks(subgroup_size: u32) -> Vec<(Problem, CoopConfig)> {
    let mut v = Vec::new();
    for layout in Layout::ALL {
        let p = Problem::new(256, 512, 192, layout);
        for tile in SINGLE_TILES {
            let config = CoopConfig::single_with_tile(&p, CoopInput::F16, tile, subgroup_size)
                .with_whole_tiles();
            v.push((p, config));
            v.push((p, config.with_wide(WideLoad::Words)));
        }
    }
    v
}

/// Every SIMT sweep tile without bounds checks ([`SimtConfig::whole_tiles`]), each on a size it
/// divides (two tiles along `M` and `N`, three steps of `K`), in every layout: what `gemm
/// check` runs them on.
pub fn simt_whole_tile_checks() -> Vec<(Problem, SimtConfig)> {
    let mut v = Vec::new();
    for layout in Layout::ALL {
        for tile in crate::config::simt_sweep_tiles() {
            let p = Problem::new(2 * tile.tm, 2 * tile.tn, 3 * tile.depth(), layout);
            v.push((p, SimtConfig::with_tiles(&p, tile).with_whole_tiles()));
        }
    }
    v
}

/// What the kernel computed and how far it is from the specification.
#[derive(Clone, Copy, Debug)]
pub struct Checked {
    /// The worst element.
    pub worst: Worst,
    /// The bound it was held to (relative to the sum of absolute products).
    pub bound: f64,
}

/// Why a check failed.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// The kernel could not run.
    #[error(transparent)]
    Gemm(#[from] GemmError),
    /// Reading back failed.
    #[error(transparent)]
    Device(#[from] wgsl_dsl::runtime::DeviceError),
    /// The result is outside the bound.
    #[error("{kernel} on {problem}: {message}")]
    Wrong {
        /// The kernel.
        kernel: String,
        /// The problem.
        problem: Problem,
        /// What is wrong.
        message: String,
    },
}

impl CheckError {
    /// True when the kernel ran and its result is outside the bound ([`CheckError::Wrong`]);
    /// false when it could not run here (a device limit, a refused configuration, a device
    /// failure).
    pub fn is_wrong(&self) -> bool {
        matches!(self, CheckError::Wrong { .. })
    }
}

/// Run `gemm` on `problem` with random operands (seeded by `seed`), `C` poisoned with NaN
/// first, and compare with the specification: every element when `M N <= 65536`, else
/// `samples` elements spread over `C` (its corners included).
///
/// # Errors
/// [`CheckError`].
pub fn run_and_check(
    gpu: &Gpu,
    gemm: &Gemm,
    problem: &Problem,
    seed: u64,
    samples: usize,
) -> Result<Checked, CheckError> {
    let a = random(problem.a_len(), seed);
    let b = random(problem.b_len(), seed.wrapping_add(1));
    let dims = GpuBuffer::from_value(gpu, problem.dims()).map_err(GemmError::from)?;
    let c = GpuBuffer::from_slice(gpu, &vec![f32::NAN; problem.c_len().max(1)])
        .map_err(GemmError::from)?;
    let (a64, b64, bound): (Vec<f64>, Vec<f64>, f64) = match gemm.variant() {
        Variant::Simt(_) => {
            upload_and_run(gpu, gemm, problem, &dims, (&a, &b), &c)?;
            (widen(&a), widen(&b), spec::simt_bound(problem.k))
        }
        Variant::Coop(config) if config.input == CoopInput::F16 => {
            let ah: Vec<half::f16> = a.iter().map(|&x| half::f16::from_f32(x)).collect();
            let bh: Vec<half::f16> = b.iter().map(|&x| half::f16::from_f32(x)).collect();
            upload_and_run(gpu, gemm, problem, &dims, (&ah, &bh), &c)?;
            let a64 = ah.iter().map(|x| f64::from(x.to_f32())).collect();
            let b64 = bh.iter().map(|x| f64::from(x.to_f32())).collect();
            (a64, b64, spec::coop_bound(problem.k))
        }
        Variant::Coop(_) => {
            upload_and_run(gpu, gemm, problem, &dims, (&a, &b), &c)?;
            (widen(&a), widen(&b), spec::coop_f32_input_bound(problem.k))
        }
    };
    let got = c.read(gpu)?;
    let cells = if problem.c_len() <= 65536 {
        None
    } else {
        Some(sample_cells(problem, samples, seed))
    };
    let worst =
        spec::check(problem, &a64, &b64, &got, bound, cells.as_deref()).map_err(|message| {
            CheckError::Wrong {
                kernel: gemm.variant().kernel_name(),
                problem: *problem,
                message,
            }
        })?;
    Ok(Checked { worst, bound })
}

fn widen(v: &[f32]) -> Vec<f64> {
    v.iter().map(|&x| f64::from(x)).collect()
}

/// Upload `a` and `b`, record `gemm` on them into `c` and submit.
fn upload_and_run<T: bytemuck::Pod + wgsl_dsl::types::Scalar>(
    gpu: &Gpu,
    gemm: &Gemm,
    problem: &Problem,
    dims: &GpuBuffer<GemmDims>,
    (a, b): (&[T], &[T]),
    c: &GpuBuffer<f32>,
) -> Result<(), GemmError> {
    let (ab, bb) = (
        GpuBuffer::from_slice(gpu, a)?,
        GpuBuffer::from_slice(gpu, b)?,
    );
    let mut rec = gpu.recorder();
    gemm.record(&mut rec, problem, dims, &ab, &bb, c)?;
    Ok(rec.submit()?)
}

/// `count` elements of `C`: its four corners and random others.
pub fn sample_cells(problem: &Problem, count: usize, seed: u64) -> Vec<(usize, usize)> {
    let (m, n) = (problem.m as usize, problem.n as usize);
    let mut cells = vec![(0, 0), (0, n - 1), (m - 1, 0), (m - 1, n - 1)];
    let mut rng = StdRng::seed_from_u64(seed ^ 0x5eed);
    while cells.len() < count {
        cells.push((rng.random_range(0..m), rng.random_range(0..n)));
    }
    cells
}
