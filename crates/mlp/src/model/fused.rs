//! The fused training step of a model with one hidden layer ([`crate::kernels::fused`]): three
//! dispatches per step (`forward_gather`, `softmax_head`, `grad_update`) where the unfused step
//! has twelve; models with more hidden layers run the unfused step.

use wgsl_dsl::naga::valid::Capabilities;
use wgsl_dsl::runtime::{Gpu, GpuBuffer, GpuOptions, Recorder};
use wgsl_dsl::types::{CoopShape, ScalarTy};

use super::{
    BatchUniforms, ForwardKernel, FusedStep, GpuDataset, GpuMlp, GradKernel, Optimizer,
    StepBuffers, invalid,
};
use crate::config::{MlpConfig, Precision};
use crate::error::MlpError;
use crate::kernels::fused::{
    ForwardGather, ForwardGatherArgs, FusedConfig, FusedOptimizer, GradUpdateAdamArgs,
    GradUpdateSgdArgs, SoftmaxHead, SoftmaxHeadArgs,
};
use crate::kernels::fused_f16::{CoopForward, ForwardGatherCoop};
use crate::kernels::uniforms::GatherParams;
use wgsl_gemm::tiled::Target;

/// The environment variable that overrides the fused kernels' configuration (a spec of
/// [`FusedConfig::choose_with`]), for measuring configurations on a device.
pub const FUSED_CONFIG_VAR: &str = "MLP_FUSED_CONFIG";

impl FusedStep {
    /// The fused step for `config` on `target`, or `None` when the model is not one hidden
    /// layer or does not fit the fused kernels ([`FusedConfig::choose`]).
    pub(super) fn new(
        gpu: &Gpu,
        config: &MlpConfig,
        optimizer: FusedOptimizer,
        max_batch: usize,
        target: Target,
        precision: Precision,
    ) -> Result<Option<FusedStep>, MlpError> {
        let sizes = config.layer_sizes();
        if sizes.len() != 2 {
            return Ok(None);
        }
        // MLP_FUSED_CONFIG overrides the chosen tiles, for measuring other configurations
        // (`FusedConfig::choose_with`; benches/NOTES.md).
        let spec = std::env::var(FUSED_CONFIG_VAR).ok();
        let chosen = FusedConfig::choose_with(&sizes, max_batch, target, spec.as_deref())
            .map_err(|e| invalid(format!("{FUSED_CONFIG_VAR}: {e}")))?;
        let Some(mut c) = chosen else {
            return Ok(None);
        };
        let (inputs, hidden) = sizes[0];
        let forward = match precision {
            Precision::F32 => ForwardKernel::F32(gpu.compile_typed(ForwardGather(c))?),
            Precision::F16 => {
                // The tensor-core forward has tiles of its own: a spec's `forward` or `splits`
                // would be silently ignored.
                if let Some(key) = ["forward=", "splits="]
                    .into_iter()
                    .find(|k| spec.as_deref().is_some_and(|s| s.contains(k)))
                {
                    return Err(MlpError::Precision {
                        precision,
                        why: format!(
                            "{FUSED_CONFIG_VAR} sets `{key}..`, which the tensor-core forward \
                             does not take (its tiles are CoopForward::choose's)"
                        ),
                    });
                }
                let subgroup_size = single_subgroup_size(gpu)?;
                tensor_cores(gpu)?;
                let coop = CoopForward::choose(max_batch, hidden, inputs, subgroup_size, target);
                // `softmax_head` sums as many parts as the tensor-core forward writes.
                c.splits = coop.splits;
                let kernel = gpu.compile_typed(ForwardGatherCoop(coop)).map_err(|e| {
                    MlpError::Precision {
                        precision,
                        why: format!("the tensor-core forward does not compile: {e}"),
                    }
                })?;
                ForwardKernel::F16(kernel)
            }
        };
        let grad = match optimizer {
            FusedOptimizer::Sgd => GradKernel::Sgd(gpu.compile_typed(c.grad_update_sgd())?),
            FusedOptimizer::Adam => GradKernel::Adam(gpu.compile_typed(c.grad_update_adam())?),
        };
        Ok(Some(FusedStep {
            config: c,
            target,
            forward,
            head: gpu.compile_typed(SoftmaxHead(c, config.activation))?,
            grad,
            partial: GpuBuffer::zeroed(gpu, c.splits as usize * max_batch * hidden)?,
        }))
    }

    /// The configuration chosen.
    pub(super) fn config(&self) -> &FusedConfig {
        &self.config
    }

    /// Record one step of `rows` examples (see [`crate::kernels::fused`] for the data flow).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn record_step(
        &mut self,
        rec: &mut Recorder<'_>,
        u: &BatchUniforms,
        gp: &GpuBuffer<GatherParams>,
        order: &GpuBuffer<u32>,
        data: &GpuDataset,
        rows: usize,
        b: StepBuffers<'_>,
    ) -> Result<(), MlpError> {
        let StepBuffers {
            state,
            params,
            optimizer,
            work: w,
            loss_history,
        } = b;
        let ((inputs, hidden), (_, classes)) = (w.layers[0], w.layers[1]);
        let args = ForwardGatherArgs {
            dims: &u.linear[0],
            gp,
            state,
            order,
            images: &data.images,
            labels: &data.labels,
            params,
            partial: &mut self.partial,
            batch_labels: &mut w.labels,
        };
        match &self.forward {
            ForwardKernel::F32(kernel) => kernel.record(rec, args, (rows, hidden))?,
            ForwardKernel::F16(kernel) => kernel.record(rec, args, (rows, hidden))?,
        }
        let (hidden_deltas, last_deltas) = w.deltas.split_at_mut(1);
        let args = SoftmaxHeadArgs {
            dims: &u.linear[1],
            prev: &u.linear[0],
            params,
            partial: &self.partial,
            batch_labels: &w.labels,
            state,
            hidden: &mut w.acts[0],
            dlogits: &mut last_deltas[0],
            dhidden: &mut hidden_deltas[0],
            losses: &mut w.example_losses,
        };
        self.head.record(rec, args, rows)?;
        let size = (inputs, hidden, classes);
        // The arguments of either `grad_update` kernel: the bindings both declare, and the
        // optimizer's (`hp` and the slots) given.
        macro_rules! grad_update_args {
            ($args:ident { $($optimizer:ident),* }) => {
                $args {
                    first: &u.linear[0],
                    last: &u.linear[1],
                    state,
                    dhidden: &w.deltas[0],
                    dlogits: &w.deltas[1],
                    hidden: &w.acts[0],
                    gp,
                    order,
                    images: &data.images,
                    params,
                    losses: &w.example_losses,
                    loss_history,
                    $($optimizer),*
                }
            };
        }
        match (&self.grad, optimizer) {
            (GradKernel::Sgd(kernel), Optimizer::Sgd { hp, velocity, .. }) => {
                let args = grad_update_args!(GradUpdateSgdArgs { hp, velocity });
                kernel.record(rec, args, size)?;
            }
            (GradKernel::Adam(kernel), Optimizer::Adam { hp, m, v, .. }) => {
                let args = grad_update_args!(GradUpdateAdamArgs { hp, m, v });
                kernel.record(rec, args, size)?;
            }
            _ => {
                return Err(invalid(
                    "the fused step was built for another optimizer than the model's",
                ));
            }
        }
        Ok(())
    }
}

impl GpuMlp {
    /// Use the fused training step built for `target` (`Some`), or the unfused one (`None`).
    /// [`GpuMlp::new`] picks the fused step for [`Target::of`] a hardware device when the model
    /// has one hidden layer that fits it, and the unfused step on software adapters (faster on
    /// lavapipe, see BENCHMARKS.md). Returns whether the fused step is in use.
    ///
    /// # Errors
    /// [`MlpError::Precision`] when the model's [`GpuMlp::precision`] needs the fused step
    /// and none results, or it cannot run on this adapter; build and dispatch errors compiling
    /// the kernels.
    pub fn set_fused(&mut self, gpu: &Gpu, target: Option<Target>) -> Result<bool, MlpError> {
        let optimizer = match self.optimizer {
            Optimizer::Sgd { .. } => FusedOptimizer::Sgd,
            Optimizer::Adam { .. } => FusedOptimizer::Adam,
        };
        let precision = self.precision;
        let step = match target {
            Some(t) => FusedStep::new(gpu, &self.config, optimizer, self.max_batch, t, precision)?,
            None => None,
        };
        if step.is_none() && precision != Precision::F32 {
            return Err(MlpError::Precision {
                precision,
                why: "the fused training step is not in use".into(),
            });
        }
        self.fused = step;
        Ok(self.fused.is_some())
    }

    /// Compute the fused step's first-layer forward product in `precision`
    /// ([`Precision::F16`]: on tensor cores, [`crate::kernels::fused_f16`]), rebuilding the
    /// fused step for it. The model's parameters, optimizer state and step count are kept.
    ///
    /// # Errors
    /// [`MlpError::Precision`] for [`Precision::F16`] when the model does not train with the
    /// fused step (more than one hidden layer, or a software adapter: [`GpuMlp::new`] chooses
    /// the unfused step there) or the adapter has no single subgroup size or no 16x16x16
    /// `f16 -> f32` cooperative matrices (lavapipe has neither), or the device was opened
    /// without them ([`GpuMlp::gpu_options`]); the model is then left as it
    /// was. Build and dispatch errors compiling the kernels.
    ///
    /// # Example
    /// Open the GPU with the options `f16` needs, then switch the model over:
    /// ```no_run
    /// # use mlp::config::{MlpConfig, Precision};
    /// # use mlp::model::{GpuMlp, OptimizerConfig};
    /// # use mlp::params::Params;
    /// # use wgsl_dsl::runtime::Gpu;
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let gpu = Gpu::with_options(&GpuMlp::gpu_options(Precision::F16))?;
    /// let config = MlpConfig::default();
    /// let params = Params::init(&config, 0);
    /// let optimizer = OptimizerConfig::Sgd {
    ///     lr: 0.1,
    ///     momentum: 0.0,
    ///     weight_decay: 0.0,
    /// };
    /// let mut model = GpuMlp::new(&gpu, &config, &params, &optimizer, None, 1024)?;
    /// model.set_precision(&gpu, Precision::F16)?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn set_precision(&mut self, gpu: &Gpu, precision: Precision) -> Result<(), MlpError> {
        if precision == self.precision {
            return Ok(());
        }
        let Some(target) = self.fused.as_ref().map(|f| f.target) else {
            let hidden = self.config.hidden.len();
            let why = if hidden != 1 {
                format!(
                    "it needs the fused training step, which takes one hidden layer; this \
                     model has {hidden}"
                )
            } else if gpu.is_software() {
                format!(
                    "it needs the fused training step, which runs on hardware GPUs only; {} \
                     is a software adapter",
                    gpu.adapter_info().name
                )
            } else {
                "it needs the fused training step, which this model does not use \
                 (GpuMlp::set_fused)"
                    .into()
            };
            return Err(MlpError::Precision { precision, why });
        };
        let before = self.precision;
        self.precision = precision;
        match self.set_fused(gpu, Some(target)) {
            Ok(_) => Ok(()),
            Err(e) => {
                self.precision = before;
                Err(e)
            }
        }
    }

    /// The options to open the GPU with for training in `precision`:
    /// [`GpuOptions::from_env`], and for [`Precision::F16`] also
    /// [`GpuOptions::cooperative_matrix`] (the tensor-core forward's cooperative matrices are
    /// a wgpu feature a device has only when it is opened with it). Open the [`Gpu`] with
    /// these ([`Gpu::with_options`]) before [`GpuMlp::set_precision`].
    pub fn gpu_options(precision: Precision) -> GpuOptions {
        GpuOptions {
            cooperative_matrix: precision == Precision::F16,
            ..GpuOptions::from_env()
        }
    }

    /// The precision of the fused step's first-layer forward product.
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// The fused step's configuration, if the fused step is in use. With
    /// [`Precision::F16`] its `splits` are the tensor-core forward's and its `forward` tiles
    /// are not used (the forward's are [`CoopForward::choose`]'s).
    pub fn fused_config(&self) -> Option<&FusedConfig> {
        self.fused.as_ref().map(FusedStep::config)
    }
}

/// The adapter's subgroup size when it has only one (the tensor-core forward assumes it).
/// `Ok` if the device multiplies 16x16x16 `f16` cooperative matrices into `f32` (what
/// the tensor-core forward is built of); else why not: the adapter has none, or the device was
/// opened without them ([`GpuOptions::cooperative_matrix`], which
/// [`GpuMlp::gpu_options`] sets for [`Precision::F16`]).
fn tensor_cores(gpu: &Gpu) -> Result<(), MlpError> {
    let wanted = CoopShape {
        m: 16,
        n: 16,
        k: 16,
        input: ScalarTy::F16,
        accumulator: ScalarTy::F32,
    };
    if gpu.cooperative_shapes().contains(&wanted) {
        return Ok(());
    }
    let name = &gpu.adapter_info().name;
    let why = if !gpu
        .capabilities()
        .contains(Capabilities::COOPERATIVE_MATRIX)
    {
        format!(
            "the tensor-core forward needs cooperative matrices, and the device on {name} was \
             opened without them: open it with GpuOptions::cooperative_matrix set \
             (GpuMlp::gpu_options(Precision::F16) does; the adapter must have wgpu's \
             EXPERIMENTAL_COOPERATIVE_MATRIX)"
        )
    } else {
        format!("{name} has no 16x16x16 f16 -> f32 cooperative matrix multiply-add")
    };
    Err(MlpError::Precision {
        precision: Precision::F16,
        why,
    })
}

fn single_subgroup_size(gpu: &Gpu) -> Result<u32, MlpError> {
    gpu.single_subgroup_size().ok_or_else(|| {
        let info = gpu.adapter_info();
        MlpError::Precision {
            precision: Precision::F16,
            why: format!(
                "the tensor-core forward needs a single subgroup size; this adapter's \
                 subgroups range from {} to {} invocations",
                info.subgroup_min_size, info.subgroup_max_size
            ),
        }
    })
}
