//! The ceiling of issue 33: how fast the driver's cooperative matrices
//! (`VK_KHR_cooperative_matrix`) multiply `f16` matrices when the kernel is written the way NVIDIA
//! writes it, so that the DSL's tensor-core kernel ([`crate::coop`]) can be measured against what
//! this driver allows rather than against cuBLAS alone.
//!
//! The kernel is GLSL, `shaders/ceiling.comp`, written after NVIDIA's sample
//! `jeffbolznv/vk_cooperative_matrix_perf` (`shaders/shmem.comp`): 256 invocations as 4 x 2
//! subgroups of 32, a `TILE_M x TILE_N` tile of `C` per workgroup, `K` walked `TILE_K` at a
//! time through workgroup memory with 128-bit loads, rows padded by 16 bytes against bank
//! conflicts, and the next `K` slice loaded into registers while the current one is
//! multiplied; 16x16x16 multiply-adds, `f16` inputs, `f32` accumulators. It is compiled to
//! SPIR-V once per tile ([`CEILING_TILES`]; `shaders/compile.sh` regenerates the committed
//! `.spv`) and handed to the driver through wgpu's SPIR-V passthrough
//! (`Device::create_shader_module_passthrough`, device feature `PASSTHROUGH_SHADERS`): naga
//! never sees it.
//!
//! It computes `C [M, N] = A [M, K] B [K, N]`, all row-major
//! ([`Layout::AB`](crate::Layout::AB) only), `A` and `B` `f16`, `C` `f32`, for `M`, `N`, `K`
//! multiples of the tile's ([`CeilingTile::divides`]); it binds its buffers as the DSL kernels
//! do (binding 0 the [`GemmDims`](crate::GemmDims) uniform, 1 `A`, 2 `B`, 3 `C` read-write), so
//! that wgpu puts the same barrier between two of its dispatches as between two of theirs (`C`
//! is written by both: dispatches in one pass do not overlap).
//!
//! ```no_run
//! use wgsl_dsl::runtime::{GpuBuffer, GpuOptions};
//! use wgsl_gemm::ceiling::{self, CeilingKernel, CeilingTile};
//! use wgsl_gemm::{Layout, Problem};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // An error, not a panic, where the adapter has no cooperative matrices (lavapipe).
//! let gpu = ceiling::open_gpu(&GpuOptions::from_env())?;
//! let kernel = CeilingKernel::new(&gpu, CeilingTile::new(128, 128, 32))?;
//! let p = Problem::new(256, 384, 96, Layout::AB);
//! let a = GpuBuffer::from_slice(&gpu, &vec![half::f16::ONE; p.a_len()])?;
//! let b = GpuBuffer::from_slice(&gpu, &vec![half::f16::ONE; p.b_len()])?;
//! let c = GpuBuffer::<f32>::zeroed(&gpu, p.c_len())?;
//! let dims = GpuBuffer::from_value(&gpu, p.dims())?;
//! let bound = kernel.bind(&gpu, &p, &dims, &a, &b, &c)?;
//! kernel.run(&gpu, &bound)?;
//! assert!(c.read(&gpu)?.iter().all(|&x| x == 96.0));
//! # Ok(())
//! # }
//! ```

mod check;
mod error;
mod kernel;
mod tile;

pub use check::{CeilingCheck, run_and_check};
pub use error::CeilingError;
pub use kernel::{CeilingBinding, CeilingKernel, open_gpu, spirv_words};
pub use tile::{CEILING_TILES, CeilingTile, SUBGROUP_SIZE, WORKGROUP_SIZE};
