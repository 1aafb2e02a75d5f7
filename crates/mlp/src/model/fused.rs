//! The fused training step of a model with one hidden layer ([`crate::kernels::fused`]): three
//! dispatches per step (`forward_gather`, `softmax_head`, `grad_update`) where the unfused step
//! has twelve; models with more hidden layers run the unfused step.

use wgsl_dsl::runtime::{BindArg, Gpu, GpuBuffer, Kernel, Recorder};

use super::{BatchUniforms, GpuDataset, GpuMlp, OptimizerBuffers, compile};
use crate::config::MlpConfig;
use crate::error::MlpError;
use crate::kernels::fused::{
    FusedConfig, FusedOptimizer, GradUpdate, forward_gather, grad_update, softmax_head,
};
use crate::kernels::product::Target;
use crate::kernels::uniforms::GatherParams;

/// The compiled fused kernels and the split-K partial sums of the first layer.
#[derive(Debug)]
pub(super) struct FusedStep {
    config: FusedConfig,
    forward: Kernel,
    head: Kernel,
    grad: Kernel,
    grad_config: GradUpdate,
    /// `[splits, max_batch, hidden]`.
    partial: GpuBuffer<f32>,
}

impl FusedStep {
    /// The fused step for `config` on `target`, or `None` when the model is not one hidden
    /// layer or does not fit the fused kernels ([`FusedConfig::choose`]).
    pub(super) fn new(
        gpu: &Gpu,
        config: &MlpConfig,
        optimizer: FusedOptimizer,
        max_batch: usize,
        target: Target,
    ) -> Result<Option<FusedStep>, MlpError> {
        let sizes = config.layer_sizes();
        if sizes.len() != 2 {
            return Ok(None);
        }
        let Some(c) = FusedConfig::choose(&sizes, max_batch, target) else {
            return Ok(None);
        };
        let hidden = sizes[0].1;
        let grad_config = c.grad_update(optimizer);
        Ok(Some(FusedStep {
            config: c,
            forward: compile(gpu, forward_gather(&c))?,
            head: compile(gpu, softmax_head(&c))?,
            grad: compile(gpu, grad_update(&grad_config))?,
            grad_config,
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
        &self,
        model: &GpuMlp,
        rec: &mut Recorder<'_>,
        u: &BatchUniforms,
        gp: &GpuBuffer<GatherParams>,
        order: &GpuBuffer<u32>,
        data: &GpuDataset,
        rows: usize,
    ) -> Result<(), MlpError> {
        let w = &model.work;
        let sizes = model.config.layer_sizes();
        let ((inputs, hidden), (_, classes)) = (sizes[0], sizes[1]);
        let state = &model.state;
        let params = &model.params;
        rec.dispatch(
            &self.forward,
            &[
                &u.linear[0],
                gp,
                state,
                order,
                &data.images,
                &data.labels,
                params,
                &self.partial,
                &w.labels,
            ],
            self.config.forward_grid(rows, hidden),
        )?;
        rec.dispatch(
            &self.head,
            &[
                &u.linear[1],
                &u.linear[0],
                params,
                &self.partial,
                &w.labels,
                state,
                &w.acts[0],
                &w.deltas[1],
                &w.deltas[0],
                &w.example_losses,
            ],
            self.config.head_grid(rows),
        )?;
        let mut args: Vec<&dyn BindArg> = vec![&u.linear[0], &u.linear[1]];
        let slots: Vec<&dyn BindArg> = match &model.optimizer {
            OptimizerBuffers::Sgd { hp, velocity } => {
                args.push(hp);
                vec![velocity]
            }
            OptimizerBuffers::Adam { hp, m, v } => {
                args.push(hp);
                vec![m, v]
            }
        };
        args.extend([
            state as &dyn BindArg,
            &w.deltas[0],
            &w.deltas[1],
            &w.acts[0],
            gp,
            order,
            &data.images,
            params,
        ]);
        args.extend(slots);
        args.extend([&w.example_losses as &dyn BindArg, &model.loss_history]);
        rec.dispatch(
            &self.grad,
            &args,
            self.grad_config.grid(inputs, hidden, classes),
        )?;
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
    /// Build and dispatch errors compiling the kernels.
    pub fn set_fused(&mut self, gpu: &Gpu, target: Option<Target>) -> Result<bool, MlpError> {
        let optimizer = match self.optimizer {
            OptimizerBuffers::Sgd { .. } => FusedOptimizer::Sgd,
            OptimizerBuffers::Adam { .. } => FusedOptimizer::Adam,
        };
        self.fused = match target {
            Some(t) => FusedStep::new(gpu, &self.config, optimizer, self.max_batch, t)?,
            None => None,
        };
        Ok(self.fused.is_some())
    }

    /// The fused step's configuration, if the fused step is in use.
    pub fn fused_config(&self) -> Option<&FusedConfig> {
        self.fused.as_ref().map(FusedStep::config)
    }
}
