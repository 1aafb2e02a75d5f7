//! [`run_and_check`]: the ceiling kernel against the `f64` specification.

use half::f16;
use wgsl_dsl::runtime::{Gpu, GpuBuffer};

use super::error::CeilingError;
use super::kernel::CeilingKernel;
use crate::Problem;
use crate::spec::{self, Worst};

/// How far the ceiling kernel is from the `f64` specification.
#[derive(Clone, Copy, Debug)]
pub struct CeilingCheck {
    /// The worst element checked.
    pub worst: Worst,
    /// The bound it was held to ([`spec::coop_bound`], relative to the sum of `|products|`).
    pub bound: f64,
    /// Elements compared.
    pub checked: usize,
}

/// Run `kernel` once on random `f16` operands in `[-1, 1)` (seeded by `seed`), `C` poisoned
/// with NaN first, and compare `C` with the `f64` product of the same `f16` values
/// ([`spec::check`], bound [`spec::coop_bound`]): every element when `samples` is `None`,
/// else the four corners and `samples - 4` random elements.
///
/// # Errors
/// As [`CeilingKernel::bind`] and [`CeilingKernel::run`]; [`CeilingError::Wrong`] with the
/// first element beyond the bound.
pub fn run_and_check(
    gpu: &Gpu,
    kernel: &CeilingKernel,
    problem: &Problem,
    seed: u64,
    samples: Option<usize>,
) -> Result<CeilingCheck, CeilingError> {
    let half = |v: Vec<f32>| -> Vec<f16> { v.into_iter().map(f16::from_f32).collect() };
    let a = half(crate::harness::random(problem.a_len(), seed));
    let b = half(crate::harness::random(
        problem.b_len(),
        seed.wrapping_add(1),
    ));
    let dims = GpuBuffer::from_value(gpu, problem.dims())?;
    let (ab, bb) = (
        GpuBuffer::from_slice(gpu, &a)?,
        GpuBuffer::from_slice(gpu, &b)?,
    );
    let c = GpuBuffer::from_slice(gpu, &vec![f32::NAN; problem.c_len()])?;
    let bound = kernel.bind(gpu, problem, &dims, &ab, &bb, &c)?;
    kernel.run(gpu, &bound)?;
    let got = c.read(gpu)?;
    let widen = |v: &[f16]| -> Vec<f64> { v.iter().map(|x| f64::from(x.to_f32())).collect() };
    let cells = samples.map(|n| crate::harness::sample_cells(problem, n, seed));
    let allowed = spec::coop_bound(problem.k);
    let worst = spec::check(
        problem,
        &widen(&a),
        &widen(&b),
        &got,
        allowed,
        cells.as_deref(),
    )
    .map_err(|message| CeilingError::Wrong {
        tile: kernel.tile(),
        problem: *problem,
        message,
    })?;
    Ok(CeilingCheck {
        worst,
        bound: allowed,
        checked: cells.map_or(problem.c_len(), |c| c.len()),
    })
}
