//! The MLP on the GPU: parameters, gradients, optimizer state and activations in GPU buffers,
//! training steps recorded without host round trips, evaluation with GPU argmax.
//!
//! # Buffers
//! - parameters, gradients and optimizer slots: flat `f32` buffers in the layout of
//!   [`crate::params`] (`layer0.weight, layer0.bias, layer1.weight, ...`);
//! - per layer, activations `[max_batch, outputs]` (post-activation) and deltas
//!   `[max_batch, outputs]` (gradient w.r.t. the pre-activation); per hidden layer the
//!   pre-activation `z` `[max_batch, outputs]` when the activation's backward pass needs it
//!   (all but `relu` and `leaky-relu`: [`crate::activation::Activation::backward_reads_output`]);
//! - the step state `[t, cursor]` ([`crate::kernels::step`]): `t` counts optimizer steps on
//!   the GPU, so one submission can hold many steps and Adam still sees the right `t`, and
//!   every optimizer kernel its step's learning rate from the schedule ([`GpuMlp::set_schedule`]).
//!
//! # A training step
//! `gather_batch`, one `linear_{act}` (or `linear_{act}_keep_z`) per hidden layer and
//! `linear_identity` for the logits, `softmax_cross_entropy`, its derived backward
//! `softmax_cross_entropy_backward` (the logits' gradient, into the last deltas zeroed
//! first), `mean_loss`, then per layer from the last: `linear_backward_weight`, `bias_grad`
//! and (except for the first layer) `linear_backward_input_{act}`; then `sgd_update` or
//! `adam_update` over all parameters and `advance_step`. `{act}` is the config's
//! [`MlpConfig::activation`].

use std::collections::HashMap;
use std::ops::Range;

use wgsl_dsl::autodiff::Role;
use wgsl_dsl::runtime::{BindArg, Gpu, GpuBuffer, KernelDef, PendingRead, Recorder, TypedKernel};

use derived::DerivedKernel;

use crate::config::{MlpConfig, Precision};
use crate::error::MlpError;
use crate::kernels::backward::{
    BiasGrad, BiasGradArgs, LinearBackwardInput, LinearBackwardInputArgs, LinearBackwardWeight,
    LinearBackwardWeightArgs,
};
use crate::kernels::eval::ArgmaxAccuracy;
use crate::kernels::fused::{
    ForwardGather, FusedConfig, GradUpdateAdam, GradUpdateSgd, SoftmaxHead,
};
use crate::kernels::fused_f16::ForwardGatherCoop;
use crate::kernels::gather::{GatherBatch, GatherBatchArgs, rows_of_step};
use crate::kernels::linear::{Linear, LinearArgs, LinearKeepZ, LinearKeepZArgs};
use crate::kernels::loss::{
    MAX_CLASSES, MeanLoss, MeanLossArgs, SoftmaxCrossEntropy, SoftmaxCrossEntropyArgs,
    softmax_cross_entropy_backward,
};
use crate::kernels::optim::{
    AdamUpdate, AdamUpdateArgs, ScheduleUniform, SgdUpdate, SgdUpdateArgs, adam_params,
};
use crate::kernels::step::{AdvanceStep, AdvanceStepArgs, BeginChunk, BeginChunkArgs};
use crate::kernels::uniforms::{
    AdamParams, EvalParams, GatherParams, LinearDims, LossDims, SgdParams,
};
use crate::params::{Params, tensor_offsets};
use crate::schedule::LrSchedule;

mod derived;
mod fused;
mod inference;
mod optimizer;

pub use fused::FUSED_CONFIG_VAR;
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

/// The compiled kernels, each with its typed interface.
#[derive(Debug)]
struct Kernels {
    gather: TypedKernel<GatherBatch>,
    /// The hidden layers' forward.
    linear_hidden: TypedKernel<Linear>,
    /// The hidden layers' forward that also stores `z`, for activations that need it.
    linear_keep_z: Option<TypedKernel<LinearKeepZ>>,
    linear_identity: TypedKernel<Linear>,
    softmax: TypedKernel<SoftmaxCrossEntropy>,
    /// Its derived backward pass: the logits' gradient (kernel AD, not written by hand).
    softmax_backward: DerivedKernel,
    mean_loss: TypedKernel<MeanLoss>,
    weight_grad: TypedKernel<LinearBackwardWeight>,
    bias_grad: TypedKernel<BiasGrad>,
    input_grad: TypedKernel<LinearBackwardInput>,
    begin_chunk: TypedKernel<BeginChunk>,
    advance: TypedKernel<AdvanceStep>,
    argmax: TypedKernel<ArgmaxAccuracy>,
}

/// The uniforms that depend on the number of rows of a batch.
#[derive(Debug)]
struct BatchUniforms {
    linear: Vec<GpuBuffer<LinearDims>>,
    loss: GpuBuffer<LossDims>,
    /// `[rows]`, each `1 / rows`: the gradient of the batch-mean loss with respect to each
    /// example's loss, the seed of the derived loss gradient.
    loss_seed: GpuBuffer<f32>,
    eval: GpuBuffer<EvalParams>,
}

/// The optimizer's kernel, hyperparameters and slots.
#[derive(Debug)]
enum Optimizer {
    Sgd {
        kernel: TypedKernel<SgdUpdate>,
        hp: GpuBuffer<SgdParams>,
        /// What `hp` holds.
        host: SgdParams,
        velocity: GpuBuffer<f32>,
    },
    Adam {
        kernel: TypedKernel<AdamUpdate>,
        hp: GpuBuffer<AdamParams>,
        /// What `hp` holds.
        host: AdamParams,
        m: GpuBuffer<f32>,
        v: GpuBuffer<f32>,
    },
}

/// Buffers of one pass over batches (training or evaluation): the gathered batch, the
/// activations and deltas of every layer, the softmax outputs.
#[derive(Debug)]
struct Workspace {
    /// `(inputs, outputs)` of every layer.
    layers: Vec<(usize, usize)>,
    x: GpuBuffer<f32>,
    labels: GpuBuffer<u32>,
    acts: Vec<GpuBuffer<f32>>,
    deltas: Vec<GpuBuffer<f32>>,
    /// Per hidden layer, `z` (empty when the activation's backward reads its output).
    pre: Vec<GpuBuffer<f32>>,
    probs: GpuBuffer<f32>,
    example_losses: GpuBuffer<f32>,
    /// The derived loss gradient's iteration-limit flag (`Role::IterationLimit`): never
    /// raised, since a model has at most [`MAX_CLASSES`] classes (checked by [`GpuMlp::new`]).
    iteration_limit: GpuBuffer<u32>,
}

/// The parameters and their gradients, flat.
#[derive(Debug)]
struct Tensors {
    params: GpuBuffer<f32>,
    grads: GpuBuffer<f32>,
}

/// Losses on their way back from the GPU: [`GpuMlp::read_losses_async`].
#[derive(Debug)]
#[must_use = "the losses are collected with `wait`"]
pub struct PendingLosses {
    read: PendingRead<f32>,
    count: usize,
}

impl PendingLosses {
    /// Waits for the copy (not for work submitted after it) and returns the losses.
    ///
    /// # Errors
    /// Device errors (lost, timeout, mapping).
    pub fn wait(self, gpu: &Gpu) -> Result<Vec<f32>, MlpError> {
        let mut v = self.read.wait(gpu)?;
        v.truncate(self.count);
        Ok(v)
    }
}

/// The MLP on a [`Gpu`]: see the [module docs](self).
#[derive(Debug)]
pub struct GpuMlp {
    config: MlpConfig,
    max_batch: usize,
    offsets: Vec<(usize, usize)>,
    kernels: Kernels,
    tensors: Tensors,
    optimizer: Optimizer,
    state: GpuBuffer<u32>,
    work: Workspace,
    loss_history: GpuBuffer<f32>,
    batch_uniforms: HashMap<usize, BatchUniforms>,
    /// The fused training step, when the model has one (see [`GpuMlp::set_fused`]).
    fused: Option<FusedStep>,
    /// The fused step's first-layer forward product's precision ([`GpuMlp::set_precision`]).
    precision: Precision,
    /// The learning-rate schedule in the optimizer's uniform.
    schedule: LrSchedule,
}

/// The compiled `grad_update` kernel, for the model's optimizer. The fused step's types are
/// defined here, beside the model that holds them; `fused` implements them (it sits above
/// this file, which does not name it).
#[derive(Debug)]
enum GradKernel {
    Sgd(TypedKernel<GradUpdateSgd>),
    Adam(TypedKernel<GradUpdateAdam>),
}

/// The first layer's forward product of the fused step, in the step's precision.
#[derive(Debug)]
enum ForwardKernel {
    /// `f32` ([`ForwardGather`]).
    F32(TypedKernel<ForwardGather>),
    /// `f16` factors on tensor cores ([`ForwardGatherCoop`]).
    F16(TypedKernel<ForwardGatherCoop>),
}

/// The compiled fused kernels and the split-K partial sums of the first layer.
#[derive(Debug)]
struct FusedStep {
    config: FusedConfig,
    /// What the kernels were chosen for.
    target: wgsl_gemm::tiled::Target,
    forward: ForwardKernel,
    head: TypedKernel<SoftmaxHead>,
    grad: GradKernel,
    /// `[splits, max_batch, hidden]`.
    partial: GpuBuffer<f32>,
}

/// The model's buffers a fused step reads and writes.
struct StepBuffers<'a> {
    pub state: &'a mut GpuBuffer<u32>,
    pub params: &'a mut GpuBuffer<f32>,
    pub optimizer: &'a mut Optimizer,
    pub work: &'a mut Workspace,
    pub loss_history: &'a mut GpuBuffer<f32>,
}

fn invalid(msg: impl Into<String>) -> MlpError {
    MlpError::InvalidArgument(msg.into())
}

fn to_u32(what: &str, n: usize) -> Result<u32, MlpError> {
    u32::try_from(n).map_err(|_| invalid(format!("{what} = {n} does not fit in u32")))
}

impl GpuMlp {
    /// The largest training batch a model of `config` takes on `gpu` (0 when not
    /// even one row fits), and the device limit that bounds it. A batch of `b` rows needs
    /// storage buffers of `b * widest` `f32` (the gathered inputs `x` and each layer's
    /// activations, `widest` the widest layer) and, where the fused step is chosen
    /// ([`crate::kernels::fused::FusedConfig::choose`]), `splits * b * hidden` partial sums;
    /// each must fit `max_storage_buffer_binding_size` and `max_buffer_size`, and the gather
    /// kernel's grid has `b` workgroups on y (`max_compute_workgroups_per_dimension`). On
    /// lavapipe (128 MiB bindings) a 784-128-10 model takes 42,799.
    pub fn largest_batch(gpu: &Gpu, config: &MlpConfig) -> (usize, &'static str) {
        let limits = gpu.limits();
        let bytes = usize::try_from(
            limits
                .max_storage_buffer_binding_size
                .min(limits.max_buffer_size),
        )
        .unwrap_or(usize::MAX);
        let sizes = config.layer_sizes();
        let widest = sizes
            .iter()
            .map(|&(i, o)| i.max(o))
            .max()
            .unwrap_or(1)
            .max(1);
        let hidden = sizes.first().map_or(1, |&(_, o)| o.max(1));
        let target = wgsl_gemm::tiled::Target::of(gpu);
        let by_binding = (bytes / (4 * widest)).min(crate::config::MAX_ELEMENTS / widest);
        let by_grid = limits.max_compute_workgroups_per_dimension as usize;
        let (mut best, why) = if by_binding <= by_grid {
            (by_binding, "max_storage_buffer_binding_size")
        } else {
            (by_grid, "max_compute_workgroups_per_dimension")
        };
        let fused_fits = |b: usize| match FusedConfig::choose(&sizes, b, target) {
            Some(c) if sizes.len() == 2 => {
                (c.splits as usize)
                    .saturating_mul(b)
                    .saturating_mul(hidden)
                    .saturating_mul(4)
                    <= bytes
            }
            _ => true,
        };
        if best > 0 && !fused_fits(best) {
            // The partial sums are the larger buffer: the largest batch whose partial sums fit.
            let (mut lo, mut hi) = (0usize, best);
            while lo < hi {
                let mid = lo + (hi - lo).div_ceil(2);
                if fused_fits(mid) {
                    lo = mid;
                } else {
                    hi = mid - 1;
                }
            }
            best = lo;
            return (
                best,
                "max_storage_buffer_binding_size (the fused step's partial sums)",
            );
        }
        (best, why)
    }

    /// Upload `params` (and `state`, if resuming) and compile the kernels. `max_batch` is the
    /// largest batch [`GpuMlp::record_train_steps`] accepts and the batch used by
    /// [`GpuMlp::evaluate`] and [`GpuMlp::predict_proba`].
    ///
    /// # Errors
    /// [`MlpError::Config`] for an invalid `config` or one of more than
    /// [`MAX_CLASSES`] classes; [`MlpError::InvalidArgument`] if
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
        if config.classes > MAX_CLASSES as usize {
            // The bound of the derived loss gradient's loops over the classes.
            return Err(crate::config::ConfigError::TooLarge {
                what: "classes (the loss gradient's loop bound, kernels::loss::MAX_CLASSES)",
                value: config.classes,
                limit: MAX_CLASSES as usize,
            }
            .into());
        }
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
            gather: gpu.compile_typed(GatherBatch)?,
            linear_hidden: gpu.compile_typed(Linear(Some(config.activation)))?,
            linear_keep_z: match config.activation {
                a if a.backward_reads_output() => None,
                a => Some(gpu.compile_typed(LinearKeepZ(a))?),
            },
            linear_identity: gpu.compile_typed(Linear(None))?,
            softmax: gpu.compile_typed(SoftmaxCrossEntropy)?,
            softmax_backward: DerivedKernel::compile(gpu, softmax_cross_entropy_backward()?)?,
            mean_loss: gpu.compile_typed(MeanLoss)?,
            weight_grad: gpu.compile_typed(LinearBackwardWeight)?,
            bias_grad: gpu.compile_typed(BiasGrad)?,
            input_grad: gpu.compile_typed(LinearBackwardInput(config.activation))?,
            begin_chunk: gpu.compile_typed(BeginChunk)?,
            advance: gpu.compile_typed(AdvanceStep)?,
            argmax: gpu.compile_typed(ArgmaxAccuracy)?,
        };
        let optimizer = match *optimizer {
            OptimizerConfig::Sgd {
                lr,
                momentum,
                weight_decay,
            } => {
                let host = SgdParams {
                    lr,
                    momentum,
                    weight_decay,
                    len: to_u32("parameters", n)?,
                    ..SgdParams::default()
                };
                Optimizer::Sgd {
                    kernel: gpu.compile_typed(SgdUpdate)?,
                    hp: GpuBuffer::from_value(gpu, host)?,
                    host,
                    velocity: GpuBuffer::from_slice(gpu, &slots[0])?,
                }
            }
            OptimizerConfig::Adam {
                lr,
                beta1,
                beta2,
                eps,
            } => {
                let host = adam_params(lr, beta1, beta2, eps, n);
                Optimizer::Adam {
                    kernel: gpu.compile_typed(AdamUpdate)?,
                    hp: GpuBuffer::from_value(gpu, host)?,
                    host,
                    m: GpuBuffer::from_slice(gpu, &slots[0])?,
                    v: GpuBuffer::from_slice(gpu, &slots[1])?,
                }
            }
        };
        let mut model = GpuMlp {
            config: config.clone(),
            max_batch,
            offsets: tensor_offsets(config),
            kernels,
            tensors: Tensors {
                params: GpuBuffer::from_slice(gpu, &params.flatten())?,
                grads: GpuBuffer::zeroed(gpu, n)?,
            },
            optimizer,
            state: GpuBuffer::from_slice(gpu, &[step, 0])?,
            work: Workspace::new(gpu, config, max_batch)?,
            loss_history: GpuBuffer::zeroed(gpu, 1)?,
            batch_uniforms: HashMap::new(),
            fused: None,
            precision: Precision::F32,
            schedule: LrSchedule::CONSTANT,
        };
        // The fused step on GPUs; on software adapters the unfused one, which measured faster
        // there (lavapipe: the fused kernels re-read the batch through the permutation for every
        // column tile, where the gather pass copies it once).
        if !gpu.is_software() {
            model.set_fused(gpu, Some(wgsl_gemm::tiled::Target::of(gpu)))?;
        }
        Ok(model)
    }

    /// The model's shape.
    pub fn config(&self) -> &MlpConfig {
        &self.config
    }

    /// Follow `schedule` from the next step on: the learning rate of a step is the
    /// optimizer's times [`LrSchedule::factor`] of the steps taken before it (the GPU's step
    /// count, which a resumed model starts from its checkpoint's). A new model follows
    /// [`LrSchedule::CONSTANT`]. Takes effect for work submitted after this call.
    ///
    /// # Errors
    /// [`MlpError::InvalidArgument`] for a schedule out of range ([`LrSchedule::validate`]);
    /// dispatch errors.
    pub fn set_schedule(&mut self, gpu: &Gpu, schedule: &LrSchedule) -> Result<(), MlpError> {
        schedule.validate()?;
        match &mut self.optimizer {
            Optimizer::Sgd { hp, host, .. } => {
                host.schedule = ScheduleUniform::of(schedule);
                hp.write(gpu, &[*host])?;
            }
            Optimizer::Adam { hp, host, .. } => {
                host.schedule = ScheduleUniform::of(schedule);
                hp.write(gpu, &[*host])?;
            }
        }
        self.schedule = *schedule;
        Ok(())
    }

    /// The learning-rate schedule the model follows ([`GpuMlp::set_schedule`]).
    pub fn schedule(&self) -> &LrSchedule {
        &self.schedule
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

    /// Make the uniforms of batches of `rows` rows, once.
    fn prepare_uniforms(&mut self, gpu: &Gpu, rows: usize) -> Result<(), MlpError> {
        if self.batch_uniforms.contains_key(&rows) {
            return Ok(());
        }
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
            loss_seed: GpuBuffer::from_slice(gpu, &vec![1.0 / rows as f32; rows])?,
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
        Ok(())
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
        for s in steps.clone() {
            self.prepare_uniforms(gpu, rows_of_step(s, batch_size, order.len()))?;
        }
        let GpuMlp {
            kernels: k,
            tensors,
            optimizer,
            state,
            work,
            loss_history,
            batch_uniforms,
            fused,
            ..
        } = self;
        let args = BeginChunkArgs { state };
        k.begin_chunk.record(rec, args, ())?;
        for s in steps {
            let rows = rows_of_step(s, batch_size, order.len());
            let u = &batch_uniforms[&rows];
            if let Some(f) = fused {
                let parts = StepBuffers {
                    state,
                    params: &mut tensors.params,
                    optimizer,
                    work,
                    loss_history,
                };
                f.record_step(rec, u, &gp, order, data, rows, parts)?;
                continue;
            }
            k.record_gather(rec, &gp, state, order, data, work, rows)?;
            k.record_forward(rec, u, &tensors.params, work, rows)?;
            k.record_softmax(rec, u, work, rows)?;
            k.record_loss_gradient(rec, u, work, rows)?;
            let args = MeanLossArgs {
                dims: &u.loss,
                state,
                losses: &work.example_losses,
                loss_history,
            };
            k.mean_loss.record(rec, args, ())?;
            k.record_backward(rec, u, tensors, work, rows)?;
            optimizer.record(rec, tensors, state)?;
            k.advance.record(rec, AdvanceStepArgs { state }, ())?;
        }
        Ok(())
    }

    /// The mean losses of the first `count` steps of the last recorded chunk (waits for the
    /// GPU).
    ///
    /// # Errors
    /// As [`GpuMlp::read_losses_async`]; device errors.
    pub fn read_losses(&self, gpu: &Gpu, count: usize) -> Result<Vec<f32>, MlpError> {
        self.read_losses_async(gpu, count)?.wait(gpu)
    }

    /// Queue the read-back of the mean losses of the first `count` steps of the last submitted
    /// chunk, without waiting: the copy is ordered after that chunk and before anything
    /// submitted later, so the next chunk may be recorded, submitted (it overwrites the loss
    /// history on the GPU, after the copy) and run while [`PendingLosses::wait`] waits for this
    /// one only.
    ///
    /// # Errors
    /// [`MlpError::InvalidArgument`] if `count` exceeds the loss history; device errors.
    pub fn read_losses_async(&self, gpu: &Gpu, count: usize) -> Result<PendingLosses, MlpError> {
        if count > self.loss_history.len() {
            return Err(invalid(format!(
                "{count} losses asked, the history holds {}",
                self.loss_history.len()
            )));
        }
        Ok(PendingLosses {
            read: self.loss_history.read_async(gpu)?,
            count,
        })
    }

    /// The parameters, read back from the GPU.
    ///
    /// # Errors
    /// Device errors.
    pub fn params(&self, gpu: &Gpu) -> Result<Params, MlpError> {
        let flat = self.tensors.params.read(gpu)?;
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
            Optimizer::Sgd { velocity, .. } => vec![velocity.read(gpu)?],
            Optimizer::Adam { m, v, .. } => vec![m.read(gpu)?, v.read(gpu)?],
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

/// The input of layer `l` and its output (activations `[rows, outputs]`), borrowed apart.
fn layer_io(work: &mut Workspace, l: usize) -> (&GpuBuffer<f32>, &mut GpuBuffer<f32>) {
    let (before, from_l) = work.acts.split_at_mut(l);
    let input = if l == 0 { &work.x } else { &before[l - 1] };
    (input, &mut from_l[0])
}

impl Kernels {
    /// `gather_batch`: the step's rows of `data` through `order` into `work.x`, `work.labels`.
    #[allow(clippy::too_many_arguments)]
    fn record_gather(
        &self,
        rec: &mut Recorder<'_>,
        gp: &GpuBuffer<GatherParams>,
        state: &GpuBuffer<u32>,
        order: &GpuBuffer<u32>,
        data: &GpuDataset,
        work: &mut Workspace,
        rows: usize,
    ) -> Result<(), MlpError> {
        let args = GatherBatchArgs {
            gp,
            state,
            order,
            images: &data.images,
            labels: &data.labels,
            x: &mut work.x,
            batch_labels: &mut work.labels,
        };
        Ok(self.gather.record(rec, args, (rows, data.inputs))?)
    }

    /// The layers, first to last: `linear_{act}` (or `linear_{act}_keep_z`, which also
    /// stores `z` into `work.pre`) for hidden layers, `linear_identity` for the logits.
    fn record_forward(
        &self,
        rec: &mut Recorder<'_>,
        u: &BatchUniforms,
        params: &GpuBuffer<f32>,
        work: &mut Workspace,
        rows: usize,
    ) -> Result<(), MlpError> {
        let layers = work.layers.len();
        for (l, dims) in u.linear.iter().enumerate() {
            let outputs = work.layers[l].1;
            let hidden = l + 1 < layers;
            match &self.linear_keep_z {
                Some(kernel) if hidden => {
                    let (before, from_l) = work.acts.split_at_mut(l);
                    let x = if l == 0 { &work.x } else { &before[l - 1] };
                    let args = LinearKeepZArgs {
                        dims,
                        x,
                        params,
                        y: &mut from_l[0],
                        z: &mut work.pre[l],
                    };
                    kernel.record(rec, args, (rows, outputs))?;
                }
                _ => {
                    let kernel = if hidden {
                        &self.linear_hidden
                    } else {
                        &self.linear_identity
                    };
                    let (x, y) = layer_io(work, l);
                    let args = LinearArgs { dims, x, params, y };
                    kernel.record(rec, args, (rows, outputs))?;
                }
            }
        }
        Ok(())
    }

    /// The gradient of the batch-mean loss with respect to the logits, into the last layer's
    /// deltas: the derived backward pass of `softmax_cross_entropy` (kernel AD) seeded with
    /// `1 / rows` per example, after zeroing the deltas it adds into.
    fn record_loss_gradient(
        &self,
        rec: &mut Recorder<'_>,
        u: &BatchUniforms,
        work: &Workspace,
        rows: usize,
    ) -> Result<(), MlpError> {
        let last = work.acts.len() - 1;
        rec.clear(&work.deltas[last])?;
        let arg = |name: &str, role: &Role| -> Option<&dyn BindArg> {
            Some(match (name, role) {
                ("dims", Role::Data { .. }) => &u.loss,
                ("logits", Role::Data { .. }) => &work.acts[last],
                ("labels", Role::Data { .. }) => &work.labels,
                ("probs", Role::Data { .. }) => &work.probs,
                (_, Role::OutputGradient { output }) if output == "losses" => &u.loss_seed,
                (_, Role::InputGradient { input, .. }) if input == "logits" => &work.deltas[last],
                (_, Role::IterationLimit { .. }) => &work.iteration_limit,
                _ => return None,
            })
        };
        self.softmax_backward
            .record(rec, arg, SoftmaxCrossEntropy.workgroups(rows))
    }

    /// Softmax cross-entropy of the last layer's logits: probabilities and per-example losses.
    fn record_softmax(
        &self,
        rec: &mut Recorder<'_>,
        u: &BatchUniforms,
        work: &mut Workspace,
        rows: usize,
    ) -> Result<(), MlpError> {
        let last = work.acts.len() - 1;
        let args = SoftmaxCrossEntropyArgs {
            dims: &u.loss,
            logits: &work.acts[last],
            labels: &work.labels,
            probs: &mut work.probs,
            losses: &mut work.example_losses,
        };
        Ok(self.softmax.record(rec, args, rows)?)
    }

    /// Per layer from the last: the weight and bias gradients, and (but for the first layer)
    /// the gradient of the previous layer's pre-activation.
    fn record_backward(
        &self,
        rec: &mut Recorder<'_>,
        u: &BatchUniforms,
        tensors: &mut Tensors,
        work: &mut Workspace,
        rows: usize,
    ) -> Result<(), MlpError> {
        for (l, dims) in u.linear.iter().enumerate().rev() {
            let (inputs, outputs) = work.layers[l];
            let (earlier, from_l) = work.deltas.split_at_mut(l);
            let dy = &from_l[0];
            let x = if l == 0 { &work.x } else { &work.acts[l - 1] };
            let args = LinearBackwardWeightArgs {
                dims,
                dy,
                x,
                grads: &mut tensors.grads,
            };
            self.weight_grad.record(rec, args, (outputs, inputs))?;
            let args = BiasGradArgs {
                dims,
                dy,
                grads: &mut tensors.grads,
            };
            self.bias_grad.record(rec, args, outputs)?;
            if l > 0 {
                // What the previous layer's activation is differentiated at: its output (relu,
                // leaky-relu) or its pre-activation.
                let saved = if self.linear_keep_z.is_some() {
                    &work.pre[l - 1]
                } else {
                    &work.acts[l - 1]
                };
                let args = LinearBackwardInputArgs {
                    dims,
                    dy,
                    params: &tensors.params,
                    saved,
                    dx: &mut earlier[l - 1],
                };
                self.input_grad.record(rec, args, (rows, inputs))?;
            }
        }
        Ok(())
    }
}

impl Optimizer {
    /// One optimizer step over all parameters.
    fn record(
        &mut self,
        rec: &mut Recorder<'_>,
        tensors: &mut Tensors,
        state: &GpuBuffer<u32>,
    ) -> Result<(), MlpError> {
        let len = tensors.params.len();
        match self {
            Optimizer::Sgd {
                kernel,
                hp,
                velocity,
                ..
            } => {
                let args = SgdUpdateArgs {
                    hp,
                    state,
                    grads: &tensors.grads,
                    params: &mut tensors.params,
                    velocity,
                };
                kernel.record(rec, args, len)?;
            }
            Optimizer::Adam {
                kernel, hp, m, v, ..
            } => {
                let args = AdamUpdateArgs {
                    hp,
                    state,
                    grads: &tensors.grads,
                    params: &mut tensors.params,
                    m,
                    v,
                };
                kernel.record(rec, args, len)?;
            }
        }
        Ok(())
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
            layers: config.layer_sizes(),
            x: GpuBuffer::zeroed(gpu, max_batch * config.inputs)?,
            labels: GpuBuffer::zeroed(gpu, max_batch)?,
            acts: per_layer(gpu)?,
            deltas: per_layer(gpu)?,
            pre: if config.activation.backward_reads_output() {
                Vec::new()
            } else {
                config
                    .hidden
                    .iter()
                    .map(|&h| Ok(GpuBuffer::zeroed(gpu, max_batch * h)?))
                    .collect::<Result<_, MlpError>>()?
            },
            probs: GpuBuffer::zeroed(gpu, max_batch * config.classes)?,
            example_losses: GpuBuffer::zeroed(gpu, max_batch)?,
            iteration_limit: GpuBuffer::zeroed(gpu, 1)?,
        })
    }
}
