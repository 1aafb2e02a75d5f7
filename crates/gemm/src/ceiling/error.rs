//! [`CeilingError`]: why the ceiling kernel cannot be built, bound, run, or is wrong.

use wgsl_dsl::runtime::{DeviceError, DispatchError};

use super::tile::{CeilingTile, SUBGROUP_SIZE};
use crate::Problem;

/// Why the ceiling kernel cannot be built, bound or run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CeilingError {
    /// Opening the device or waiting on it failed.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// A buffer could not be made or read.
    #[error(transparent)]
    Dispatch(#[from] DispatchError),
    /// The adapter lacks something the kernel needs (on Mesa lavapipe: cooperative matrices).
    #[error("adapter `{adapter}` cannot run the ceiling kernel: it lacks {missing}")]
    Unsupported {
        /// The adapter's name.
        adapter: String,
        /// What it lacks.
        missing: String,
    },
    /// The adapter's subgroups are not all of [`SUBGROUP_SIZE`] invocations.
    #[error(
        "the ceiling kernel assumes subgroups of {SUBGROUP_SIZE}; the adapter's are {min} to {max}"
    )]
    SubgroupSize {
        /// Smallest subgroup size.
        min: u32,
        /// Largest subgroup size.
        max: u32,
    },
    /// The tile has no compiled module (not one of [`CEILING_TILES`](super::CEILING_TILES)).
    #[error("no SPIR-V module for tile {tile}; the tiles are those of CEILING_TILES")]
    NoModule {
        /// The tile.
        tile: CeilingTile,
    },
    /// The tile needs more workgroup memory than the device has.
    #[error("tile {tile} needs {needed} bytes of workgroup memory; the device has {limit}")]
    WorkgroupMemory {
        /// The tile.
        tile: CeilingTile,
        /// Bytes it declares.
        needed: u32,
        /// The device's `max_compute_workgroup_storage_size`.
        limit: u32,
    },
    /// The tile does not divide the problem, or the layout is not `A B`.
    #[error(
        "ceiling tile {tile} cannot compute {problem}: layout A B only, with M, N, K multiples \
         of the tile's"
    )]
    Incompatible {
        /// The tile.
        tile: CeilingTile,
        /// The problem.
        problem: Problem,
    },
    /// A buffer is shorter than the problem needs.
    #[error("buffer {name} has {len} elements; {problem} needs {needed}")]
    ShortBuffer {
        /// `a`, `b` or `c`.
        name: &'static str,
        /// Its length.
        len: usize,
        /// The length needed.
        needed: usize,
        /// The problem.
        problem: Problem,
    },
    /// The bytes of a module are not SPIR-V.
    #[error("not a SPIR-V module: {0}")]
    NotSpirv(String),
    /// wgpu refused a call (module, pipeline, bind group, submit, timestamp read-back).
    #[error("wgpu: {0}")]
    Wgpu(String),
    /// The kernel's result is outside the specification's bound.
    #[error("{tile} on {problem} is wrong: {message}")]
    Wrong {
        /// The tile.
        tile: CeilingTile,
        /// The problem.
        problem: Problem,
        /// The first element beyond the bound, its value and the specification's.
        message: String,
    },
}
