//! The MLP on the GPU: parameters, gradients, optimizer state and activations in GPU buffers,
//! training steps recorded without host round trips, evaluation with GPU argmax.
//!
//! # Buffers
//! - parameters, gradients and optimizer slots: flat `f32` buffers in the layout of
//!   [`crate::params`] (`layer0.weight, layer0.bias, layer1.weight, ...`);
//! - per layer, activations `[max_batch, outputs]` (post-activation) and deltas
//!   `[max_batch, outputs]` (gradient w.r.t. the pre-activation);
//! - the step state `[t, cursor]` ([`crate::kernels::step`]): `t` counts optimizer steps on
//!   the GPU, so one submission can hold many steps and Adam still sees the right `t`.
//!
//! # A training step
//! `gather_batch`, one `linear_relu` per hidden layer and `linear_identity` for the logits,
//! `softmax_cross_entropy`, `mean_loss`, then per layer from the last: `linear_backward_weight`,
//! `bias_grad` and (except for the first layer) `linear_backward_input_relu`; then
//! `sgd_update` or `adam_update` over all parameters and `advance_step`.

use std::collections::HashMap;
use std::ops::Range;

use wgsl_dsl::KernelBuilder;
use wgsl_dsl::runtime::{BindArg, Gpu, GpuBuffer, Kernel, Recorder};

use crate::config::MlpConfig;
use crate::error::MlpError;
use crate::kernels::gather::{GATHER_WORKGROUP, rows_of_step};
use crate::kernels::optim::{OPTIM_WORKGROUP, adam_params, grid_2d};
use crate::kernels::tiled::tile_grid;
use crate::kernels::uniforms::{
    AdamParams, EvalParams, GatherParams, LinearDims, LossDims, SgdParams,
};
use crate::kernels::verify::grid_1d;
use crate::kernels::{backward, eval, gather, linear, loss, optim, step};
use crate::params::{Params, tensor_offsets};
use crate::reference::Activation;

mod fused;
mod inference;
mod optimizer;

pub use inference::Evaluation;
pub use optimizer::{OptimizerConfig, OptimizerState};

/// A dataset resident on the GPU: `images [len, inputs]` (`f32`, MNIST scaled to `[0, 1]`)
/// and `labels [len]`, plus the identity order used by evaluation.
#[derive(Debug)]
pub struct GpuDataset {
    images: GpuBuffer<f32>,
    labels: GpuBuffer<u32>,
    identity: GpuBuffer<u32>,
    len: usize,
    inputs: usize,
}

impl GpuDataset {
    /// Number of examples.
    pub fn len(&self) -> usize {
        self.len
    }
    /// True if there are no examples.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The compiled kernels.
#[derive(Debug)]
struct Kernels {
    gather: Kernel,
    linear_relu: Kernel,
    linear_identity: Kernel,
    softmax: Kernel,
    mean_loss: Kernel,
    weight_grad: Kernel,
    bias_grad: Kernel,
    input_grad: Kernel,
    optimizer: Kernel,
    begin_chunk: Kernel,
    advance: Kernel,
    argmax: Kernel,
}

fn compile(gpu: &Gpu, k: KernelBuilder) -> Result<Kernel, MlpError> {
    Ok(gpu.compile(&k.build_for(&gpu.target_limits())?)?)
}

/// The uniforms that depend on the number of rows of a batch.
#[derive(Debug)]
struct BatchUniforms {
    linear: Vec<GpuBuffer<LinearDims>>,
    loss: GpuBuffer<LossDims>,
    eval: GpuBuffer<EvalParams>,
}

#[derive(Debug)]
enum OptimizerBuffers {
    Sgd {
        hp: GpuBuffer<SgdParams>,
        velocity: GpuBuffer<f32>,
    },
    Adam {
        hp: GpuBuffer<AdamParams>,
        m: GpuBuffer<f32>,
        v: GpuBuffer<f32>,
    },
}

/// Buffers of one pass over batches (training or evaluation): the gathered batch, the
/// activations and deltas of every layer, the softmax outputs.
#[derive(Debug)]
struct Workspace {
    x: GpuBuffer<f32>,
    labels: GpuBuffer<u32>,
    acts: Vec<GpuBuffer<f32>>,
    deltas: Vec<GpuBuffer<f32>>,
    probs: GpuBuffer<f32>,
    example_losses: GpuBuffer<f32>,
}

/// The MLP on a [`Gpu`]: see the [module docs](self).
#[derive(Debug)]
pub struct GpuMlp {
    config: MlpConfig,
    max_batch: usize,
    offsets: Vec<(usize, usize)>,
    kernels: Kernels,
    params: GpuBuffer<f32>,
    grads: GpuBuffer<f32>,
    optimizer: OptimizerBuffers,
    state: GpuBuffer<u32>,
    work: Workspace,
    loss_history: GpuBuffer<f32>,
    batch_uniforms: HashMap<usize, BatchUniforms>,
    /// The fused training step, when the model has one (see [`GpuMlp::set_fused`]).
    fused: Option<fused::FusedStep>,
}

fn invalid(msg: impl Into<String>) -> MlpError {
    MlpError::InvalidArgument(msg.into())
}

fn to_u32(what: &str, n: usize) -> Result<u32, MlpError> {
    u32::try_from(n).map_err(|_| invalid(format!("{what} = {n} does not fit in u32")))
}

impl GpuMlp {
    /// Upload `params` (and `state`, if resuming) and compile the kernels. `max_batch` is the
    /// largest batch [`GpuMlp::record_train_steps`] accepts and the batch used by
    /// [`GpuMlp::evaluate`] and [`GpuMlp::predict_proba`].
    ///
    /// # Errors
    /// [`MlpError::Config`] for an invalid `config`; [`MlpError::InvalidArgument`] if
    /// `params` or `state` do not have the shapes `config` and `optimizer` ask for, if
    /// `max_batch` is 0 or too large, or hyperparameters are invalid (non-finite, betas outside
    /// `[0, 1)`); build, dispatch and device errors.
    pub fn new(
        gpu: &Gpu,
        config: &MlpConfig,
        params: &Params,
        optimizer: &OptimizerConfig,
        state: Option<&OptimizerState>,
        max_batch: usize,
    ) -> Result<GpuMlp, MlpError> {
        config.validate()?;
        optimizer.validate()?;
        if !params.matches(config) {
            return Err(invalid(
                "the parameters do not have the shapes of the config",
            ));
        }
        let widest = config
            .layer_sizes()
            .iter()
            .map(|&(i, o)| i.max(o))
            .max()
            .unwrap_or(1);
        if max_batch == 0 || max_batch.saturating_mul(widest) > crate::config::MAX_ELEMENTS {
            return Err(invalid(format!("max_batch = {max_batch} is out of range")));
        }
        let n = config.num_params();
        let tensors: Vec<usize> = config
            .layer_sizes()
            .iter()
            .flat_map(|&(i, o)| [i * o, o])
            .collect();
        let per = optimizer.slots_per_tensor();
        let (step, slots) = match state {
            Some(s) => {
                let shapes_ok = s.slots.len() == per * tensors.len()
                    && s.slots
                        .iter()
                        .zip(tensors.iter().cycle())
                        .all(|(slot, &len)| slot.len() == len);
                if !shapes_ok {
                    return Err(invalid(
                        "the optimizer state does not match the model and optimizer",
                    ));
                }
                let step = u32::try_from(s.step)
                    .map_err(|_| invalid(format!("optimizer step {} is too large", s.step)))?;
                let flat: Vec<Vec<f32>> =
                    s.slots.chunks(tensors.len()).map(|c| c.concat()).collect();
                (step, flat)
            }
            None => (0, vec![vec![0.0; n]; per]),
        };
        let kernels = Kernels {
            gather: compile(gpu, gather::gather_batch())?,
            linear_relu: compile(gpu, linear::linear_forward(Activation::Relu))?,
            linear_identity: compile(gpu, linear::linear_forward(Activation::Identity))?,
            softmax: compile(gpu, loss::softmax_cross_entropy())?,
            mean_loss: compile(gpu, loss::mean_loss())?,
            weight_grad: compile(gpu, backward::weight_grad())?,
            bias_grad: compile(gpu, backward::bias_grad())?,
            input_grad: compile(gpu, backward::input_grad_relu())?,
            optimizer: compile(
                gpu,
                match optimizer {
                    OptimizerConfig::Sgd { .. } => optim::sgd_update(),
                    OptimizerConfig::Adam { .. } => optim::adam_update(),
                },
            )?,
            begin_chunk: compile(gpu, step::begin_chunk())?,
            advance: compile(gpu, step::advance_step())?,
            argmax: compile(gpu, eval::argmax_accuracy())?,
        };
        let optimizer = match *optimizer {
            OptimizerConfig::Sgd {
                lr,
                momentum,
                weight_decay,
            } => OptimizerBuffers::Sgd {
                hp: GpuBuffer::from_value(
                    gpu,
                    SgdParams {
                        lr,
                        momentum,
                        weight_decay,
                        len: to_u32("parameters", n)?,
                    },
                )?,
                velocity: GpuBuffer::from_slice(gpu, &slots[0])?,
            },
            OptimizerConfig::Adam {
                lr,
                beta1,
                beta2,
                eps,
            } => OptimizerBuffers::Adam {
                hp: GpuBuffer::from_value(gpu, adam_params(lr, beta1, beta2, eps, n))?,
                m: GpuBuffer::from_slice(gpu, &slots[0])?,
                v: GpuBuffer::from_slice(gpu, &slots[1])?,
            },
        };
        let mut model = GpuMlp {
            config: config.clone(),
            max_batch,
            offsets: tensor_offsets(config),
            kernels,
            params: GpuBuffer::from_slice(gpu, &params.flatten())?,
            grads: GpuBuffer::zeroed(gpu, n)?,
            optimizer,
            state: GpuBuffer::from_slice(gpu, &[step, 0])?,
            work: Workspace::new(gpu, config, max_batch)?,
            loss_history: GpuBuffer::zeroed(gpu, 1)?,
            batch_uniforms: HashMap::new(),
            fused: None,
        };
        // The fused step on GPUs; on software adapters the unfused one, which measured faster
        // there (lavapipe: the fused kernels re-read the batch through the permutation for every
        // column tile, where the gather pass copies it once).
        if !gpu.is_software() {
            model.set_fused(gpu, Some(crate::kernels::product::Target::of(gpu)))?;
        }
        Ok(model)
    }

    /// The model's shape.
    pub fn config(&self) -> &MlpConfig {
        &self.config
    }

    /// The largest batch size.
    pub fn max_batch(&self) -> usize {
        self.max_batch
    }

    /// Put a dataset on the GPU: `images [n, inputs]` row-major, `labels [n]`.
    ///
    /// # Errors
    /// [`MlpError::InvalidArgument`] if `images.len() != labels.len() * inputs`, a label is
    /// `>= classes`, or the dataset is too large to index with `u32`; dispatch errors
    /// (allocation).
    pub fn upload_dataset(
        &self,
        gpu: &Gpu,
        images: &[f32],
        labels: &[u32],
    ) -> Result<GpuDataset, MlpError> {
        let inputs = self.config.inputs;
        if images.len() != labels.len().saturating_mul(inputs) {
            return Err(invalid(format!(
                "{} image values for {} labels of {inputs} features",
                images.len(),
                labels.len()
            )));
        }
        if images.len() > crate::config::MAX_ELEMENTS {
            return Err(invalid("the dataset is too large to index with u32"));
        }
        if let Some((i, &l)) = labels
            .iter()
            .enumerate()
            .find(|&(_, &l)| l as usize >= self.config.classes)
        {
            return Err(invalid(format!(
                "label {l} of example {i} is not below {} classes",
                self.config.classes
            )));
        }
        let identity: Vec<u32> = (0..labels.len() as u32).collect();
        Ok(GpuDataset {
            images: GpuBuffer::from_slice(gpu, images)?,
            labels: GpuBuffer::from_slice(gpu, labels)?,
            identity: GpuBuffer::from_slice(gpu, &identity)?,
            len: labels.len(),
            inputs,
        })
    }

    fn uniforms(&mut self, gpu: &Gpu, rows: usize) -> Result<&BatchUniforms, MlpError> {
        if !self.batch_uniforms.contains_key(&rows) {
            let linear = self
                .config
                .layer_sizes()
                .iter()
                .zip(&self.offsets)
                .map(|(&(i, o), &(w, b))| {
                    GpuBuffer::from_value(
                        gpu,
                        LinearDims {
                            batch: rows as u32,
                            inputs: i as u32,
                            outputs: o as u32,
                            weight_offset: w as u32,
                            bias_offset: b as u32,
                            ..Default::default()
                        },
                    )
                })
                .collect::<Result<Vec<_>, _>>()?;
            let classes = self.config.classes as u32;
            let u = BatchUniforms {
                linear,
                loss: GpuBuffer::from_value(
                    gpu,
                    LossDims {
                        batch: rows as u32,
                        classes,
                        ..Default::default()
                    },
                )?,
                eval: GpuBuffer::from_value(
                    gpu,
                    EvalParams {
                        rows: rows as u32,
                        classes,
                        batch_size: self.max_batch as u32,
                        ..Default::default()
                    },
                )?,
            };
            self.batch_uniforms.insert(rows, u);
        }
        Ok(&self.batch_uniforms[&rows])
    }

    fn gather_params(
        &self,
        gpu: &Gpu,
        data: &GpuDataset,
        first_step: usize,
        batch_size: usize,
        order_len: usize,
    ) -> Result<GpuBuffer<GatherParams>, MlpError> {
        Ok(GpuBuffer::from_value(
            gpu,
            GatherParams {
                first_step: to_u32("first step", first_step)?,
                batch_size: batch_size as u32,
                order_len: to_u32("order length", order_len)?,
                dataset_len: data.len as u32,
                inputs: data.inputs as u32,
                ..Default::default()
            },
        )?)
    }

    /// Record (not submit) training steps `steps` into `rec`: step `s` uses the examples
    /// `order[s * batch_size .. (s + 1) * batch_size]` (the last batch may be smaller), all
    /// on the GPU with no host round trip between steps. Step `s`'s mean cross-entropy is
    /// written to the loss history at `s - steps.start` (read it with
    /// [`GpuMlp::read_losses`] after submitting). `order` holds indices into `data`.
    ///
    /// `gpu` is needed (beyond the interface first sketched) to create the chunk's small
    /// uniform buffers. Record one chunk per submission: a second chunk recorded into the same
    /// recorder overwrites the first one's loss history.
    ///
    /// # Errors
    /// [`MlpError::InvalidArgument`] if `batch_size` is 0 or above `max_batch`, `data` has
    /// another number of features, or a step has no examples (past the end of `order`);
    /// dispatch errors.
    pub fn record_train_steps(
        &mut self,
        gpu: &Gpu,
        rec: &mut Recorder<'_>,
        data: &GpuDataset,
        order: &GpuBuffer<u32>,
        batch_size: usize,
        steps: Range<usize>,
    ) -> Result<(), MlpError> {
        if batch_size == 0 || batch_size > self.max_batch {
            return Err(invalid(format!(
                "batch size {batch_size} is not in 1..={}",
                self.max_batch
            )));
        }
        if data.inputs != self.config.inputs {
            return Err(invalid("the dataset has another number of features"));
        }
        if steps.is_empty() {
            return Ok(());
        }
        if rows_of_step(steps.end - 1, batch_size, order.len()) == 0 {
            return Err(invalid(format!(
                "step {} is past the end of an order of {} examples in batches of {batch_size}",
                steps.end - 1,
                order.len()
            )));
        }
        if self.loss_history.len() < steps.len() {
            self.loss_history = GpuBuffer::zeroed(gpu, steps.len())?;
        }
        let gp = self.gather_params(gpu, data, steps.start, batch_size, order.len())?;
        rec.dispatch(&self.kernels.begin_chunk, &[&self.state], [1, 1, 1])?;
        for s in steps {
            let rows = rows_of_step(s, batch_size, order.len());
            self.uniforms(gpu, rows)?;
            let u = &self.batch_uniforms[&rows];
            if let Some(f) = &self.fused {
                f.record_step(self, rec, u, &gp, order, data, rows)?;
                continue;
            }
            self.record_gather(rec, &gp, &self.state, order, data, rows)?;
            self.record_forward(rec, u, rows)?;
            self.record_loss(rec, u, &self.state, rows)?;
            self.record_backward(rec, u, rows)?;
            self.record_optimizer(rec)?;
            rec.dispatch(&self.kernels.advance, &[&self.state], [1, 1, 1])?;
        }
        Ok(())
    }

    fn record_gather(
        &self,
        rec: &mut Recorder<'_>,
        gp: &GpuBuffer<GatherParams>,
        state: &GpuBuffer<u32>,
        order: &GpuBuffer<u32>,
        data: &GpuDataset,
        rows: usize,
    ) -> Result<(), MlpError> {
        let w = &self.work;
        let args: [&dyn BindArg; 7] = [
            gp,
            state,
            order,
            &data.images,
            &data.labels,
            &w.x,
            &w.labels,
        ];
        let grid = [
            (data.inputs as u32).div_ceil(GATHER_WORKGROUP),
            rows as u32,
            1,
        ];
        Ok(rec.dispatch(&self.kernels.gather, &args, grid)?)
    }

    fn record_forward(
        &self,
        rec: &mut Recorder<'_>,
        u: &BatchUniforms,
        rows: usize,
    ) -> Result<(), MlpError> {
        let w = &self.work;
        let last = self.offsets.len() - 1;
        for (l, &(_, outputs)) in self.config.layer_sizes().iter().enumerate() {
            let input = if l == 0 { &w.x } else { &w.acts[l - 1] };
            let kernel = if l == last {
                &self.kernels.linear_identity
            } else {
                &self.kernels.linear_relu
            };
            rec.dispatch(
                kernel,
                &[&u.linear[l], input, &self.params, &w.acts[l]],
                tile_grid(rows, outputs),
            )?;
        }
        Ok(())
    }

    /// Softmax cross-entropy of the last layer's logits: probabilities, per-example losses and
    /// the logits' gradient.
    fn record_softmax(
        &self,
        rec: &mut Recorder<'_>,
        u: &BatchUniforms,
        rows: usize,
    ) -> Result<(), MlpError> {
        let w = &self.work;
        let last = self.offsets.len() - 1;
        rec.dispatch(
            &self.kernels.softmax,
            &[
                &u.loss,
                &w.acts[last],
                &w.labels,
                &w.probs,
                &w.deltas[last],
                &w.example_losses,
            ],
            grid_1d(rows, loss::SOFTMAX_WORKGROUP),
        )?;
        Ok(())
    }

    fn record_loss(
        &self,
        rec: &mut Recorder<'_>,
        u: &BatchUniforms,
        state: &GpuBuffer<u32>,
        rows: usize,
    ) -> Result<(), MlpError> {
        let w = &self.work;
        self.record_softmax(rec, u, rows)?;
        rec.dispatch(
            &self.kernels.mean_loss,
            &[&u.loss, state, &w.example_losses, &self.loss_history],
            [1, 1, 1],
        )?;
        Ok(())
    }

    fn record_backward(
        &self,
        rec: &mut Recorder<'_>,
        u: &BatchUniforms,
        rows: usize,
    ) -> Result<(), MlpError> {
        let w = &self.work;
        let sizes = self.config.layer_sizes();
        for l in (0..sizes.len()).rev() {
            let (inputs, outputs) = sizes[l];
            let input = if l == 0 { &w.x } else { &w.acts[l - 1] };
            rec.dispatch(
                &self.kernels.weight_grad,
                &[&u.linear[l], &w.deltas[l], input, &self.grads],
                tile_grid(outputs, inputs),
            )?;
            rec.dispatch(
                &self.kernels.bias_grad,
                &[&u.linear[l], &w.deltas[l], &self.grads],
                [outputs as u32, 1, 1],
            )?;
            if l > 0 {
                rec.dispatch(
                    &self.kernels.input_grad,
                    &[
                        &u.linear[l],
                        &w.deltas[l],
                        &self.params,
                        &w.acts[l - 1],
                        &w.deltas[l - 1],
                    ],
                    tile_grid(rows, inputs),
                )?;
            }
        }
        Ok(())
    }

    fn record_optimizer(&self, rec: &mut Recorder<'_>) -> Result<(), MlpError> {
        let grid = grid_2d(self.params.len(), OPTIM_WORKGROUP);
        match &self.optimizer {
            OptimizerBuffers::Sgd { hp, velocity } => rec.dispatch(
                &self.kernels.optimizer,
                &[hp, &self.grads, &self.params, velocity],
                grid,
            )?,
            OptimizerBuffers::Adam { hp, m, v } => rec.dispatch(
                &self.kernels.optimizer,
                &[hp, &self.state, &self.grads, &self.params, m, v],
                grid,
            )?,
        }
        Ok(())
    }

    /// The mean losses of the first `count` steps of the last recorded chunk (waits for the
    /// GPU).
    ///
    /// # Errors
    /// [`MlpError::InvalidArgument`] if `count` exceeds the loss history; device errors.
    pub fn read_losses(&self, gpu: &Gpu, count: usize) -> Result<Vec<f32>, MlpError> {
        if count > self.loss_history.len() {
            return Err(invalid(format!(
                "{count} losses asked, the history holds {}",
                self.loss_history.len()
            )));
        }
        let mut v = self.loss_history.read(gpu)?;
        v.truncate(count);
        Ok(v)
    }

    /// The parameters, read back from the GPU.
    ///
    /// # Errors
    /// Device errors.
    pub fn params(&self, gpu: &Gpu) -> Result<Params, MlpError> {
        let flat = self.params.read(gpu)?;
        Params::from_flat(&self.config, &flat)
            .ok_or_else(|| invalid("the parameter buffer has the wrong length"))
    }

    /// The optimizer state, read back from the GPU (see [`OptimizerState`] for the order).
    ///
    /// # Errors
    /// Device errors.
    pub fn optimizer_state(&self, gpu: &Gpu) -> Result<OptimizerState, MlpError> {
        let step = u64::from(self.state.read(gpu)?[0]);
        let flats = match &self.optimizer {
            OptimizerBuffers::Sgd { velocity, .. } => vec![velocity.read(gpu)?],
            OptimizerBuffers::Adam { m, v, .. } => vec![m.read(gpu)?, v.read(gpu)?],
        };
        let mut slots = Vec::new();
        for flat in flats {
            for (&(w, b), &(i, o)) in self.offsets.iter().zip(&self.config.layer_sizes()) {
                slots.push(flat[w..w + i * o].to_vec());
                slots.push(flat[b..b + o].to_vec());
            }
        }
        Ok(OptimizerState { step, slots })
    }
}

impl Workspace {
    fn new(gpu: &Gpu, config: &MlpConfig, max_batch: usize) -> Result<Workspace, MlpError> {
        let per_layer = |gpu: &Gpu| -> Result<Vec<GpuBuffer<f32>>, MlpError> {
            config
                .layer_sizes()
                .iter()
                .map(|&(_, o)| Ok(GpuBuffer::zeroed(gpu, max_batch * o)?))
                .collect()
        };
        Ok(Workspace {
            x: GpuBuffer::zeroed(gpu, max_batch * config.inputs)?,
            labels: GpuBuffer::zeroed(gpu, max_batch)?,
            acts: per_layer(gpu)?,
            deltas: per_layer(gpu)?,
            probs: GpuBuffer::zeroed(gpu, max_batch * config.classes)?,
            example_losses: GpuBuffer::zeroed(gpu, max_batch)?,
        })
    }
}
