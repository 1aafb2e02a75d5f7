//! What the ops of [`super`] and [`super::fused`] share: the sizes of a case ([`CaseSizes`]),
//! the op type ([`MlpOp`]), and the random tensors, schedules and hyperparameters their cases
//! are made of. Below both; `ops` re-exports the public items.

use mlp::kernels::optim::adam_params;
use mlp::kernels::uniforms::{AdamParams, GatherParams, LinearDims, ScheduleUniform, SgdParams};
use mlp::reference::RefLayer;
use mlp::schedule::{Decay, LrSchedule};
use wgsl_dsl::KernelBuilder;
use wgsl_dsl::runtime::KernelDef;
use wgsl_dsl_harness::{Case, Expected, Rng, VerifiedOp, random_f32, random_u32};

/// Sizes a random case is made for. Use odd sizes that are not multiples of the tile size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CaseSizes {
    /// Rows of the batch.
    pub batch: usize,
    /// Input features of a layer.
    pub inputs: usize,
    /// Output features of a layer.
    pub outputs: usize,
    /// Classes of the loss.
    pub classes: usize,
}

impl Default for CaseSizes {
    /// Batch 37, inputs 61, outputs 45, classes 11.
    fn default() -> Self {
        CHECKED_SIZES[0]
    }
}

impl CaseSizes {
    /// Sizes in the order of the fields.
    pub const fn new(batch: usize, inputs: usize, outputs: usize, classes: usize) -> Self {
        CaseSizes {
            batch,
            inputs,
            outputs,
            classes,
        }
    }
}

/// The sizes every kernel of [`all`](super::all) is checked at (on the GPU and on the interpreter): the
/// default (batch 37, inputs 61, outputs 45, classes 11) and a small one.
pub const CHECKED_SIZES: [CaseSizes; 2] =
    [CaseSizes::new(37, 61, 45, 11), CaseSizes::new(5, 17, 3, 2)];

/// Makes a random case for given sizes.
type CaseFn = Box<dyn Fn(&mut Rng, &CaseSizes) -> Case>;
/// The final contents of the written bindings.
type SpecFn = Box<dyn Fn(&Case) -> Vec<Expected>>;

/// An MLP kernel with its cases and specification.
pub struct MlpOp {
    name: String,
    kernel: Box<dyn Fn() -> KernelBuilder>,
    case: CaseFn,
    spec: SpecFn,
}

impl std::fmt::Debug for MlpOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MlpOp({})", self.name)
    }
}

impl MlpOp {
    /// The op of kernel `def`: `case` makes random cases (the grid from `def`'s problem size),
    /// `spec` gives the final contents of the bindings the kernel writes.
    pub(crate) fn new<K: KernelDef + Clone + 'static>(
        def: K,
        case: impl Fn(&K, &mut Rng, &CaseSizes) -> Case + 'static,
        spec: impl Fn(&Case) -> Vec<Expected> + 'static,
    ) -> MlpOp {
        let name = def.build().name().to_string();
        let for_case = def.clone();
        MlpOp {
            name,
            kernel: Box::new(move || def.build()),
            case: Box::new(move |rng, sizes| case(&for_case, rng, sizes)),
            spec: Box::new(spec),
        }
    }

    /// The op of a kernel made by `kernel` (a derived backward kernel, which has no
    /// [`KernelDef`]): `case` makes random cases, `spec` as in [`MlpOp::new`].
    pub(crate) fn of_builder(
        kernel: impl Fn() -> KernelBuilder + 'static,
        case: impl Fn(&mut Rng, &CaseSizes) -> Case + 'static,
        spec: impl Fn(&Case) -> Vec<Expected> + 'static,
    ) -> MlpOp {
        MlpOp {
            name: kernel().name().to_string(),
            kernel: Box::new(kernel),
            case: Box::new(case),
            spec: Box::new(spec),
        }
    }

    /// A random case for `sizes`.
    pub fn case(&self, rng: &mut Rng, sizes: &CaseSizes) -> Case {
        (self.case)(rng, sizes)
    }
}

impl VerifiedOp for MlpOp {
    fn name(&self) -> &str {
        &self.name
    }
    fn kernel(&self) -> KernelBuilder {
        (self.kernel)()
    }
    fn spec(&self, case: &Case) -> Vec<Expected> {
        (self.spec)(case)
    }
}

/// A dataset of `len` examples, a permutation-like order with repeats, the step's start.
pub(crate) struct GatherCase {
    pub gp: GatherParams,
    pub state: Vec<u32>,
    pub order: Vec<u32>,
    pub images: Vec<f32>,
    pub labels: Vec<u32>,
}

/// The step (first step 1, cursor `cursor`) takes `batch` rows from an order of 3 batches and
/// a bit over a dataset of as many examples.
pub(crate) fn random_gather(
    rng: &mut Rng,
    batch: usize,
    inputs: usize,
    classes: usize,
    cursor: u32,
) -> GatherCase {
    let len = batch * 3 + 5;
    GatherCase {
        gp: GatherParams {
            first_step: 1,
            batch_size: batch as u32,
            order_len: len as u32,
            dataset_len: len as u32,
            inputs: inputs as u32,
            ..Default::default()
        },
        state: vec![17, cursor],
        order: random_u32(rng, len, len as u32),
        images: random_f32(rng, len * inputs, 0.0, 1.0),
        labels: random_u32(rng, len, classes as u32),
    }
}

/// A random layer's tensors placed at odd offsets inside a flat buffer, as in the model:
/// `(flat, weight offset, bias offset)`.
pub(crate) fn random_layer(
    rng: &mut Rng,
    inputs: usize,
    outputs: usize,
) -> (Vec<f32>, usize, usize) {
    let (w, b) = (3, 3 + inputs * outputs);
    let bound = 1.0 / (inputs as f32).sqrt();
    (random_f32(rng, b + outputs + 2, -bound, bound), w, b)
}

/// The `LinearDims` of a layer of `batch` rows with its tensors at `w` and `b`.
pub(crate) fn dims(batch: usize, inputs: usize, outputs: usize, w: usize, b: usize) -> LinearDims {
    LinearDims {
        batch: batch as u32,
        inputs: inputs as u32,
        outputs: outputs as u32,
        weight_offset: w as u32,
        bias_offset: b as u32,
        ..Default::default()
    }
}

/// The layer stored in `flat` at the offsets of `dims`.
pub(crate) fn layer_from_flat(flat: &[f64], dims: &LinearDims) -> RefLayer {
    let (i, o) = (dims.inputs as usize, dims.outputs as usize);
    let (w, b) = (dims.weight_offset as usize, dims.bias_offset as usize);
    RefLayer {
        inputs: i,
        outputs: o,
        weight: flat[w..w + i * o].to_vec(),
        bias: flat[b..b + o].to_vec(),
    }
}

/// A random learning-rate schedule and the steps taken before the case's step, so that the
/// cases cover the warm-up, each decay and the end of a cosine.
pub(crate) fn random_schedule(rng: &mut Rng) -> (LrSchedule, u32) {
    let mut r = |bound: u32| random_u32(rng, 1, bound)[0];
    let warmup_steps = u64::from(r(4));
    let decay = match r(3) {
        0 => Decay::Constant,
        1 => Decay::Cosine {
            steps: u64::from(1 + r(9)),
            final_factor: 0.1,
        },
        _ => Decay::Step {
            every: u64::from(1 + r(4)),
            gamma: 0.5,
        },
    };
    let taken = r(16);
    (
        LrSchedule {
            warmup_steps,
            decay,
        },
        taken,
    )
}

/// The SGD hyperparameters of the cases (momentum and weight decay on) for `len` parameters,
/// scheduled by `schedule`.
pub(crate) fn sgd_hp(len: usize, schedule: &LrSchedule) -> SgdParams {
    SgdParams {
        lr: 0.05,
        momentum: 0.9,
        weight_decay: 1e-3,
        len: len as u32,
        schedule: ScheduleUniform::of(schedule),
    }
}

/// The Adam hyperparameters of the cases for `len` parameters, scheduled by `schedule`.
pub(crate) fn adam_hp(len: usize, schedule: &LrSchedule) -> AdamParams {
    AdamParams {
        schedule: ScheduleUniform::of(schedule),
        ..adam_params(0.01, 0.9, 0.999, 1e-8, len)
    }
}
