//! The fused kernels' verified ops (`mlp::kernels::fused`), in the configurations the snapshots
//! pin ([`fused::verified_configs`]).

use std::collections::HashSet;

use mlp::activation::Activation;
use mlp::kernels::fused::{
    self, ForwardGather, FusedOptimizer, GradUpdate, SoftmaxHead, verified_configs,
};
use mlp::kernels::fused_f16::{CoopForward, ForwardGatherCoop};
use mlp::kernels::uniforms::{AdamParams, GatherParams, LinearDims, SgdParams};
use mlp::reference;
use wgsl_dsl::runtime::KernelDef;
use wgsl_dsl_harness::{Case, Data, Expected, Rng, random_f32, random_u32};
use wgsl_gemm::tiled::split_len;

use super::support::{
    CaseSizes, MlpOp, adam_hp, dims, layer_from_flat, random_gather, random_layer, sgd_hp,
};

/// The sizes every fused kernel of [`all`] is checked at (on the GPU and on the interpreter):
/// batches 1, 7, 65 and 129, widths that are multiples of no tile.
pub const CHECKED_SIZES: [CaseSizes; 4] = [
    CaseSizes::new(1, 61, 45, 11),
    CaseSizes::new(7, 33, 17, 10),
    CaseSizes::new(65, 70, 37, 3),
    CaseSizes::new(129, 45, 19, 10),
];

/// Every fused kernel of [`verified_configs`], each once.
pub fn all() -> Vec<MlpOp> {
    let mut ops = Vec::new();
    let mut seen = HashSet::new();
    for c in verified_configs() {
        if seen.insert(c.forward_name()) {
            ops.push(MlpOp::new(ForwardGather(c), forward_case, move |case| {
                forward_spec(case, &c)
            }));
        }
        if seen.insert(c.head_name()) {
            ops.push(MlpOp::new(
                SoftmaxHead(c, Activation::Relu),
                head_case,
                move |case| head_spec(case, c.splits as usize, Activation::Relu),
            ));
        }
        let sgd = c.grad_update_sgd();
        if seen.insert(sgd.config().name()) {
            ops.push(grad_op(sgd, sgd.config(), FusedOptimizer::Sgd));
        }
        let adam = c.grad_update_adam();
        if seen.insert(adam.config().name()) {
            ops.push(grad_op(adam, adam.config(), FusedOptimizer::Adam));
        }
    }
    // Every other activation's head, in the first configuration (as `fused::all`).
    let c = verified_configs()[0];
    for act in Activation::ALL.into_iter().skip(1) {
        ops.push(MlpOp::new(SoftmaxHead(c, act), head_case, move |case| {
            head_spec(case, c.splits as usize, act)
        }));
    }
    ops
}

/// The tensor-core forward (`forward_gather_f16_*`, `mnist train --precision f16`) in
/// configurations that cut the checked sizes into several partial tiles and parts: the one an
/// H200 trains MNIST with at batch 1024 ([`CoopForward::h200_mnist_1024`], the snapshot's: 13
/// parts, most of them empty at these widths), the one [`CoopForward::choose`] gives for these
/// sizes (64 x 64 tiles, `K` 32 deep, subgroups of 32), and 32 x 32 tiles of four 16 x 16
/// subgroups, 16 deep, in 3 parts. Each needs the cooperative-matrix capability (the
/// interpreter has it; lavapipe does not).
pub fn coop_forward_configs() -> [CoopForward; 3] {
    let snapshot = CoopForward::h200_mnist_1024();
    let chosen = CoopForward::choose(37, 45, 61, 32, wgsl_gemm::tiled::Target::gpu(132));
    let small = CoopForward {
        block_m: 32,
        block_n: 32,
        block_k: 16,
        warp_m: 16,
        warp_n: 16,
        subgroup_size: 32,
        splits: 3,
    };
    [snapshot, chosen, small]
}

/// The ops of [`coop_forward_configs`], checked against [`coop_forward_spec`].
pub fn coop_forward_ops() -> Vec<MlpOp> {
    coop_forward_configs()
        .into_iter()
        .map(|c| {
            MlpOp::new(ForwardGatherCoop(c), coop_forward_case, move |case| {
                coop_forward_spec(case, &c)
            })
        })
        .collect()
}

fn coop_forward_case(def: &ForwardGatherCoop, rng: &mut Rng, s: &CaseSizes) -> Case {
    gather_forward_case(rng, s, def.0.splits, def.workgroups((s.batch, s.outputs)))
}

/// `forward_gather`'s specification (the partial sums and the labels) with every factor rounded to the
/// nearest `f16` first (`half::f16::from_f64` of the exact `f32` values, round to nearest
/// even, as the interpreter's `f16(x)`; WGSL lets a GPU take either neighbour, so on a GPU the
/// tolerance would have to allow for that): the products are then exact, and only the `f32`
/// accumulation's rounding is left to the tolerance.
pub fn coop_forward_spec(case: &Case, c: &CoopForward) -> Vec<Expected> {
    partial_sums(case, c.splits, c.block_k, |x| {
        half::f16::from_f64(x).to_f64()
    })
}

/// The op of the `grad_update` kernel `def` of configuration `g`, checked against the spec of
/// `optimizer` (given by the caller, not read from `g`, so that a kernel whose configuration
/// names the wrong optimizer fails).
fn grad_op<K: KernelDef<Size = (usize, usize, usize)> + Clone + 'static>(
    def: K,
    g: GradUpdate,
    optimizer: FusedOptimizer,
) -> MlpOp {
    MlpOp::new(
        def,
        move |def, rng, s| grad_case(&g, def, rng, s),
        move |case| grad_spec(case, optimizer),
    )
}

fn forward_case(def: &ForwardGather, rng: &mut Rng, s: &CaseSizes) -> Case {
    gather_forward_case(rng, s, def.0.splits, def.workgroups((s.batch, s.outputs)))
}

/// A case of a first-layer forward (`forward_gather` or its `f16` form, the same bindings):
/// a random gather and layer, the partial sums of `splits` parts and the labels poisoned.
fn gather_forward_case(rng: &mut Rng, s: &CaseSizes, splits: u32, workgroups: [u32; 3]) -> Case {
    let g = random_gather(rng, s.batch, s.inputs, s.classes, 1);
    let (params, w, b) = random_layer(rng, s.inputs, s.outputs);
    Case {
        buffers: vec![
            Data::value(dims(s.batch, s.inputs, s.outputs, w, b)),
            Data::value(g.gp),
            Data::U32(g.state),
            Data::U32(g.order),
            Data::F32(g.images),
            Data::U32(g.labels),
            Data::F32(params),
            Data::poisoned_f32(splits as usize * s.batch * s.outputs),
            Data::poisoned_u32(s.batch),
        ],
        workgroups,
    }
}

fn forward_spec(case: &Case, config: &fused::FusedConfig) -> Vec<Expected> {
    partial_sums(case, config.splits, config.forward.depth(), |x| x)
}

/// What a first-layer forward writes for `case`: the partial sums of the batch's rows by the
/// layer's weights over each of `splits` parts of the inputs (parts of
/// `split_len(inputs, splits, depth)`), every factor through `factor` first, and the batch's
/// labels.
fn partial_sums(
    case: &Case,
    splits: u32,
    depth: u32,
    factor: impl Fn(f64) -> f64,
) -> Vec<Expected> {
    let d: LinearDims = case.value(0);
    let gp: GatherParams = case.value(1);
    let (batch, inputs, outputs) = (d.batch as usize, d.inputs as usize, d.outputs as usize);
    let start = (gp.first_step + case.u32s(2)[1]) as usize * gp.batch_size as usize;
    let order = case.u32s(3);
    let images: Vec<f64> = case.f64s(4).into_iter().map(&factor).collect();
    let labels = case.u32s(5);
    let flat: Vec<f64> = case.f64s(6).into_iter().map(&factor).collect();
    let layer = layer_from_flat(&flat, &d);
    let part = split_len(inputs as u32, splits, depth) as usize;
    let mut partial = vec![0.0; splits as usize * batch * outputs];
    for s in 0..splits as usize {
        let ks = (s * part).min(inputs)..((s + 1) * part).min(inputs);
        for r in 0..batch {
            let e = order[start + r] as usize;
            for o in 0..outputs {
                partial[(s * batch + r) * outputs + o] = ks
                    .clone()
                    .map(|i| images[e * inputs + i] * layer.weight[o * inputs + i])
                    .sum();
            }
        }
    }
    let batch_labels = (0..batch)
        .map(|r| labels[order[start + r] as usize])
        .collect();
    vec![Expected::F64(partial), Expected::U32(batch_labels)]
}

fn head_case(def: &SoftmaxHead, rng: &mut Rng, s: &CaseSizes) -> Case {
    // The hidden layer: s.outputs wide; the last layer: s.outputs -> s.classes. Both layers'
    // tensors in one flat buffer.
    let (h, c) = (s.outputs, s.classes);
    let (mut flat, w, b) = random_layer(rng, h, c);
    let b0 = flat.len();
    flat.extend(random_f32(rng, h, -0.5, 0.5));
    let splits = def.0.splits as usize;
    Case {
        buffers: vec![
            Data::value(dims(s.batch, h, c, w, b)),
            Data::value(dims(s.batch, s.inputs, h, 0, b0)),
            Data::F32(flat),
            Data::F32(random_f32(rng, splits * s.batch * h, -1.0, 1.0)),
            Data::U32(random_u32(rng, s.batch, c as u32)),
            Data::U32(vec![41, 3]),
            Data::poisoned_f32(s.batch * h),
            Data::poisoned_f32(s.batch * c),
            Data::poisoned_f32(s.batch * h),
            Data::poisoned_f32(s.batch),
        ],
        workgroups: def.workgroups(s.batch),
    }
}

fn head_spec(case: &Case, splits: usize, act: Activation) -> Vec<Expected> {
    let d: LinearDims = case.value(0);
    let prev: LinearDims = case.value(1);
    let (batch, h, c) = (d.batch as usize, d.inputs as usize, d.outputs as usize);
    let flat = case.f64s(2);
    let layer = layer_from_flat(&flat, &d);
    let b0 = &flat[prev.bias_offset as usize..prev.bias_offset as usize + h];
    let partial = case.f64s(3);
    let labels = case.u32s(4);
    let state = case.u32s(5);
    let pre: Vec<f64> = (0..batch * h)
        .map(|e| {
            let (r, j) = (e / h, e % h);
            let s: f64 = (0..splits).map(|s| partial[(s * batch + r) * h + j]).sum();
            s + b0[j]
        })
        .collect();
    let hidden: Vec<f64> = pre
        .iter()
        .map(|&z| reference::activate(Some(act), z))
        .collect();
    let logits = reference::linear_forward(&hidden, batch, &layer, None);
    let sce = reference::softmax_cross_entropy(&logits, labels, batch, c);
    let dh = reference::input_grad(&sce.dlogits, &layer.weight, batch, h, c);
    vec![
        Expected::U32(vec![state[0] + 1, state[1] + 1]),
        Expected::F64(hidden.clone()),
        Expected::F64(sce.dlogits),
        Expected::F64(reference::activation_backward(act, &dh, &pre)),
        Expected::F64(sce.losses),
    ]
}

fn grad_case<K: KernelDef<Size = (usize, usize, usize)>>(
    g: &GradUpdate,
    def: &K,
    rng: &mut Rng,
    s: &CaseSizes,
) -> Case {
    // First layer s.inputs -> s.outputs, last layer s.outputs -> s.classes, in one flat buffer
    // with noise around them (which must not change).
    let (i, h, c) = (s.inputs, s.outputs, s.classes);
    let (mut params, w0, b0) = random_layer(rng, i, h);
    let w1 = params.len();
    params.extend(random_f32(rng, h * c + c + 3, -0.3, 0.3));
    let b1 = w1 + h * c;
    let n = params.len();
    // Step t = taken + 1 (the state is advanced already), cursor 2: this is the chunk's step 1.
    let (schedule, taken) = super::support::random_schedule(rng);
    let state = vec![taken + 1, 2];
    let gc = random_gather(rng, s.batch, i, c, state[1] - 1);
    // ReLU outputs: about a third exactly zero.
    let hidden = random_f32(rng, s.batch * h, -0.5, 1.0)
        .into_iter()
        .map(|v| v.max(0.0))
        .collect();
    let mut buffers = vec![
        Data::value(dims(s.batch, i, h, w0, b0)),
        Data::value(dims(s.batch, h, c, w1, b1)),
        match g.optimizer {
            FusedOptimizer::Sgd => Data::value(sgd_hp(n, &schedule)),
            FusedOptimizer::Adam => Data::value(adam_hp(n, &schedule)),
        },
        Data::U32(state),
        Data::F32(random_f32(rng, s.batch * h, -1.0, 1.0)),
        Data::F32(random_f32(rng, s.batch * c, -1.0, 1.0)),
        Data::F32(hidden),
        Data::value(gc.gp),
        Data::U32(gc.order),
        Data::F32(gc.images),
        Data::F32(params),
        Data::F32(random_f32(rng, n, -0.1, 0.1)),
    ];
    if g.optimizer == FusedOptimizer::Adam {
        buffers.push(Data::F32(random_f32(rng, n, 0.0, 0.01)));
    }
    buffers.push(Data::F32(random_f32(rng, s.batch, 0.0, 5.0)));
    buffers.push(Data::F32(random_f32(rng, 7, 0.0, 5.0)));
    Case {
        buffers,
        workgroups: def.workgroups((i, h, c)),
    }
}

fn grad_spec(case: &Case, optimizer: FusedOptimizer) -> Vec<Expected> {
    let first: LinearDims = case.value(0);
    let last: LinearDims = case.value(1);
    let batch = first.batch as usize;
    let state = case.u32s(3);
    // Steps taken before this one (the state counts this step already).
    let taken = u64::from(state[0]) - 1;
    let gp: GatherParams = case.value(7);
    let start = (gp.first_step + state[1] - 1) as usize * gp.batch_size as usize;
    let (order, images) = (case.u32s(8), case.f64s(9));
    let inputs = first.inputs as usize;
    let x: Vec<f64> = (0..batch)
        .flat_map(|r| {
            let e = order[start + r] as usize;
            images[e * inputs..(e + 1) * inputs].to_vec()
        })
        .collect();
    // (dims, dz, x) per layer.
    let layers = [(first, case.f64s(4), x), (last, case.f64s(5), case.f64s(6))];
    let mut params = case.f64s(10);
    let mut slots = vec![case.f64s(11)];
    let mut next = 12;
    if optimizer == FusedOptimizer::Adam {
        slots.push(case.f64s(12));
        next = 13;
    }
    for (d, dz, x) in &layers {
        let (inputs, outputs) = (d.inputs as usize, d.outputs as usize);
        let dw = reference::weight_grad(dz, x, batch, inputs, outputs);
        let db = reference::bias_grad(dz, batch, outputs);
        let (w, b) = (d.weight_offset as usize, d.bias_offset as usize);
        for (range, grad) in [(w..w + inputs * outputs, &dw), (b..b + outputs, &db)] {
            match optimizer {
                FusedOptimizer::Sgd => {
                    let hp: SgdParams = case.value(2);
                    let factor = hp.schedule.schedule().factor(taken);
                    reference::sgd_step(
                        &mut params[range.clone()],
                        grad,
                        &mut slots[0][range],
                        f64::from(hp.lr) * factor,
                        hp.momentum.into(),
                        hp.weight_decay.into(),
                    );
                }
                FusedOptimizer::Adam => {
                    let hp: AdamParams = case.value(2);
                    let factor = hp.schedule.schedule().factor(taken);
                    let (m, v) = slots.split_at_mut(1);
                    reference::adam_step(
                        &mut params[range.clone()],
                        grad,
                        &mut m[0][range.clone()],
                        &mut v[0][range],
                        u64::from(state[0]),
                        f64::from(hp.lr) * factor,
                        hp.beta1.into(),
                        hp.beta2.into(),
                        hp.eps.into(),
                    );
                }
            }
        }
    }
    let losses = case.f64s(next);
    let mut history = case.f64s(next + 1);
    history[state[1] as usize - 1] = losses.iter().sum::<f64>() / batch as f64;
    let mut out = vec![Expected::F64(params)];
    out.extend(slots.into_iter().map(Expected::F64));
    out.push(Expected::F64(history));
    out
}
