//! Running the kernels: [`Gemm`], one compiled configuration, recorded with its buffers.

use bytemuck::Pod;
use wgsl_dsl::runtime::{BindArg, DispatchError, Gpu, GpuBuffer, Kernel, Recorder};
use wgsl_dsl::types::{Array, Scalar, Vec4};

use crate::config::{CoopConfig, CoopInput, SimtConfig, TileConfig, WideLoad};
use crate::{GemmDims, Problem};

/// Why a product could not be built or run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GemmError {
    /// The kernel did not build (validation, limits, capabilities).
    #[error(transparent)]
    Build(#[from] wgsl_dsl::BuildError),
    /// The kernel did not compile or dispatch.
    #[error(transparent)]
    Dispatch(#[from] DispatchError),
    /// The configuration cannot run the problem (another layout, or `vec4` accesses the sizes
    /// do not allow).
    #[error(
        "kernel `{kernel}` cannot compute {problem}: another layout, or sizes its tiles or \
         vector reads do not divide"
    )]
    Incompatible {
        /// The kernel.
        kernel: String,
        /// The problem.
        problem: Problem,
    },
    /// The adapter's subgroups do not have one size the cooperative kernel can assume.
    #[error(
        "the cooperative-matrix kernel needs subgroups of one size; the adapter has {min} to {max}"
    )]
    SubgroupSize {
        /// Smallest subgroup size.
        min: u32,
        /// Largest subgroup size.
        max: u32,
    },
}

/// Which kernel a [`Gemm`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// The SIMT `f32` kernel.
    Simt(SimtConfig),
    /// The cooperative-matrix kernel.
    Coop(CoopConfig),
}

impl Variant {
    /// The kernel's name.
    pub fn kernel_name(&self) -> String {
        match self {
            Variant::Simt(c) => c.kernel_name(),
            Variant::Coop(c) => c.kernel_name(),
        }
    }

    fn accepts(&self, problem: &Problem) -> bool {
        match self {
            Variant::Simt(c) => c.accepts(problem),
            Variant::Coop(c) => c.accepts(problem),
        }
    }

    fn grid(&self, problem: &Problem) -> [u32; 3] {
        match self {
            Variant::Simt(c) => c.grid(problem),
            Variant::Coop(c) => c.grid(problem),
        }
    }

    fn vectors(&self) -> (bool, bool, bool) {
        match self {
            Variant::Simt(c) => (c.vector_a, c.vector_b, false),
            // The cooperative kernel writes `c` as `array<f32>` either way.
            Variant::Coop(c) => (c.vector_a, c.vector_b, false),
        }
    }
}

/// A GEMM kernel compiled on a [`Gpu`].
#[derive(Debug, Clone)]
pub struct Gemm {
    variant: Variant,
    kernel: Kernel,
}

impl Gemm {
    /// The SIMT kernel [`SimtConfig::choose`] picks for `problem` on `gpu`.
    ///
    /// # Errors
    /// [`GemmError::Build`], [`GemmError::Dispatch`].
    pub fn simt(gpu: &Gpu, problem: &Problem) -> Result<Gemm, GemmError> {
        Gemm::with_simt(gpu, SimtConfig::choose(problem, &gpu.target_limits()))
    }

    /// The SIMT kernel of `config`.
    ///
    /// # Errors
    /// [`GemmError::Build`], [`GemmError::Dispatch`].
    pub fn with_simt(gpu: &Gpu, config: SimtConfig) -> Result<Gemm, GemmError> {
        let shader = crate::simt::build(&config).build_for(&gpu.target_limits())?;
        Ok(Gemm {
            variant: Variant::Simt(config),
            kernel: gpu.compile(&shader)?,
        })
    }

    /// The cooperative-matrix kernel [`CoopConfig::choose`] picks for `problem` on `gpu`.
    ///
    /// # Errors
    /// [`GemmError::SubgroupSize`]; [`GemmError::Build`] (among them
    /// `MissingCapability` on adapters without cooperative matrices, such as lavapipe);
    /// [`GemmError::Dispatch`] (`UnsupportedCooperativeShape` without 16x16x16 `f16 -> f32`).
    pub fn coop(gpu: &Gpu, problem: &Problem, input: CoopInput) -> Result<Gemm, GemmError> {
        let size = subgroup_size(gpu)?;
        Gemm::with_coop(
            gpu,
            CoopConfig::choose(problem, input, &gpu.target_limits(), size),
        )
    }

    /// The cooperative-matrix kernel loading fragments straight from the buffers that
    /// [`CoopConfig::choose_direct`] picks, if a tile divides `problem`.
    ///
    /// # Errors
    /// [`GemmError::Incompatible`] when no direct tile divides `problem`; as [`Gemm::coop`].
    pub fn coop_direct(gpu: &Gpu, problem: &Problem) -> Result<Gemm, GemmError> {
        let size = subgroup_size(gpu)?;
        let config = CoopConfig::choose_direct(problem, &gpu.target_limits(), size).ok_or(
            GemmError::Incompatible {
                kernel: "coop_f16_direct".into(),
                problem: *problem,
            },
        )?;
        Gemm::with_coop(gpu, config)
    }

    /// The cooperative-matrix kernel of `config`.
    ///
    /// # Errors
    /// As [`Gemm::coop`].
    pub fn with_coop(gpu: &Gpu, config: CoopConfig) -> Result<Gemm, GemmError> {
        let size = subgroup_size(gpu)?;
        if size != config.subgroup_size {
            return Err(GemmError::SubgroupSize {
                min: size,
                max: size,
            });
        }
        let shader = crate::coop::build(&config).build_for(&gpu.target_limits())?;
        Ok(Gemm {
            variant: Variant::Coop(config),
            kernel: gpu.compile(&shader)?,
        })
    }

    /// The configuration.
    pub fn variant(&self) -> &Variant {
        &self.variant
    }

    /// The compiled kernel.
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// Record `c = op(a) op(b)` for `problem` into `rec`. `dims` holds `problem.dims()`; `a` and
    /// `b` hold the operands as stored (`f32`, or `f16` for the cooperative kernel's `f16`
    /// input), `c` has at least `M N` elements.
    ///
    /// # Errors
    /// [`GemmError::Incompatible`] if this kernel cannot compute `problem`; the dispatch's
    /// checks ([`GemmError::Dispatch`], naming the line that called this).
    #[track_caller]
    pub fn record<T: Pod + Scalar>(
        &self,
        rec: &mut Recorder<'_>,
        problem: &Problem,
        dims: &GpuBuffer<GemmDims>,
        a: &GpuBuffer<T>,
        b: &GpuBuffer<T>,
        c: &GpuBuffer<f32>,
    ) -> Result<(), GemmError> {
        if !self.variant.accepts(problem) {
            return Err(GemmError::Incompatible {
                kernel: self.variant.kernel_name(),
                problem: *problem,
            });
        }
        if let Variant::Coop(CoopConfig {
            wide: Some(wide), ..
        }) = self.variant
        {
            return record_wide(
                rec,
                &self.kernel,
                wide,
                (dims, a, b, c),
                self.variant.grid(problem),
            );
        }
        let (va, vb, vc) = self.variant.vectors();
        let (a4, b4, c4);
        let a_arg: &dyn BindArg = if va {
            a4 = a.as_vec4()?;
            &a4
        } else {
            a
        };
        let b_arg: &dyn BindArg = if vb {
            b4 = b.as_vec4()?;
            &b4
        } else {
            b
        };
        let c_arg: &dyn BindArg = if vc {
            c4 = c.as_vec4()?;
            &c4
        } else {
            c
        };
        rec.dispatch(
            &self.kernel,
            &[dims, a_arg, b_arg, c_arg],
            self.variant.grid(problem),
        )?;
        Ok(())
    }
}

/// Dispatch `kernel`, which reads `a` and `b` sixteen bytes at a time as `wide` says, on them.
#[track_caller]
fn record_wide<T: Pod + Scalar>(
    rec: &mut Recorder<'_>,
    kernel: &Kernel,
    wide: WideLoad,
    (dims, a, b, c): (
        &GpuBuffer<GemmDims>,
        &GpuBuffer<T>,
        &GpuBuffer<T>,
        &GpuBuffer<f32>,
    ),
    grid: [u32; 3],
) -> Result<(), GemmError> {
    match wide {
        WideLoad::Pairs => {
            let (a8, b8) = (
                a.view::<Array<Vec4<T>, 2>>(8)?,
                b.view::<Array<Vec4<T>, 2>>(8)?,
            );
            rec.dispatch(kernel, &[dims, &a8, &b8, c], grid)?;
        }
        WideLoad::Words => {
            let (a8, b8) = (a.view::<Vec4<u32>>(8)?, b.view::<Vec4<u32>>(8)?);
            rec.dispatch(kernel, &[dims, &a8, &b8, c], grid)?;
        }
    }
    Ok(())
}

/// The adapter's subgroup size, when it has only one.
fn subgroup_size(gpu: &Gpu) -> Result<u32, GemmError> {
    gpu.single_subgroup_size().ok_or_else(|| {
        let info = gpu.adapter_info();
        GemmError::SubgroupSize {
            min: info.subgroup_min_size,
            max: info.subgroup_max_size,
        }
    })
}
