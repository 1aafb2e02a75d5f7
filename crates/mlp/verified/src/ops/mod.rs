//! The MLP's verified ops: every kernel of `mlp::kernels` with random cases for given sizes and
//! its `f64` specification from `mlp::reference`, for the verification harness. Each case's
//! grid comes from the kernel's own `KernelDef::workgroups`. The fused kernels' ops are in
//! [`fused`].

pub mod fused;
mod support;

use mlp::kernels::backward::{BiasGrad, LinearBackwardInput, LinearBackwardWeight};
use mlp::kernels::eval::ArgmaxAccuracy;
use mlp::kernels::gather::{GatherBatch, rows_of_step};
use mlp::kernels::linear::{Linear, LinearDirect, LinearKeepZ};
use mlp::kernels::loss::{
    MAX_CLASSES, MeanLoss, SoftmaxCrossEntropy, softmax_cross_entropy_backward,
};
use mlp::kernels::optim::{AdamUpdate, SgdUpdate};
use mlp::kernels::step::{AdvanceStep, BeginChunk, STATE_LEN};
use mlp::kernels::uniforms::{
    AdamParams, EvalParams, GatherParams, LinearDims, LossDims, SgdParams,
};
use mlp::reference::{self, Activation};
use wgsl_dsl::KernelBuilder;
use wgsl_dsl::runtime::KernelDef;
use wgsl_dsl_harness::{Case, Data, Expected, Rng, random_f32, random_u32};

pub use support::{CHECKED_SIZES, CaseSizes, MlpOp};
pub(crate) use support::{
    adam_hp, dims, layer_from_flat, random_gather, random_layer, random_schedule, sgd_hp,
};

/// Every MLP kernel's op, in the order of `mlp::kernels::all()`.
pub fn all() -> Vec<MlpOp> {
    let mut unfused = vec![MlpOp::new(GatherBatch, gather_case, gather_spec)];
    for act in Activation::ALL {
        unfused.push(MlpOp::new(Linear(Some(act)), linear_case, move |c| {
            linear_spec(c, Some(act))
        }));
        if !act.backward_reads_output() {
            unfused.push(MlpOp::new(LinearKeepZ(act), keep_z_case, move |c| {
                keep_z_spec(c, act)
            }));
        }
        unfused.push(MlpOp::new(
            LinearBackwardInput(act),
            input_grad_case,
            move |c| input_grad_spec(c, act),
        ));
    }
    unfused.push(MlpOp::new(Linear(None), linear_case, |c| {
        linear_spec(c, None)
    }));
    for act in Activation::ALL {
        unfused.push(MlpOp::new(LinearDirect(Some(act)), linear_case, move |c| {
            linear_spec(c, Some(act))
        }));
    }
    unfused.extend([
        MlpOp::new(LinearDirect(None), linear_case, |c| linear_spec(c, None)),
        MlpOp::new(
            SoftmaxCrossEntropy,
            |_, rng, s| {
                let logits = random_f32(rng, s.batch * s.classes, -8.0, 8.0);
                let labels = random_u32(rng, s.batch, s.classes as u32);
                softmax_case(logits, labels, s.classes)
            },
            softmax_spec,
        ),
        MlpOp::of_builder(
            softmax_backward_kernel,
            softmax_backward_case,
            softmax_backward_spec,
        ),
        MlpOp::new(MeanLoss, mean_loss_case, mean_loss_spec),
        MlpOp::new(LinearBackwardWeight, weight_grad_case, weight_grad_spec),
        MlpOp::new(BiasGrad, bias_grad_case, bias_grad_spec),
        MlpOp::new(SgdUpdate, sgd_case, sgd_spec),
        MlpOp::new(AdamUpdate, adam_case, adam_spec),
        MlpOp::new(BeginChunk, state_case, |c| {
            let s = c.u32s(0);
            vec![Expected::U32(vec![s[0], 0])]
        }),
        MlpOp::new(AdvanceStep, state_case, |c| {
            let s = c.u32s(0);
            vec![Expected::U32(vec![s[0] + 1, s[1] + 1])]
        }),
        MlpOp::new(ArgmaxAccuracy, argmax_case, argmax_spec),
    ]);
    unfused.into_iter().chain(fused::all()).collect()
}

// ---- gather ----

fn gather_case(def: &GatherBatch, rng: &mut Rng, s: &CaseSizes) -> Case {
    // The chunk's first step 1 and cursor 2, so this is step 3: the last, partial batch.
    let (batch_size, inputs) = (s.batch, s.inputs);
    let g = random_gather(rng, batch_size, inputs, 10, 2);
    let rows = rows_of_step(3, batch_size, g.order.len());
    Case {
        buffers: vec![
            Data::value(g.gp),
            Data::U32(g.state),
            Data::U32(g.order),
            Data::F32(g.images),
            Data::U32(g.labels),
            Data::poisoned_f32(rows * inputs),
            Data::poisoned_u32(rows),
        ],
        workgroups: def.workgroups((rows, inputs)),
    }
}

fn gather_spec(case: &Case) -> Vec<Expected> {
    let gp: GatherParams = case.value(0);
    let step = (gp.first_step + case.u32s(1)[1]) as usize;
    let (batch_size, inputs) = (gp.batch_size as usize, gp.inputs as usize);
    let (order, images, labels) = (case.u32s(2), case.f64s(3), case.u32s(4));
    let start = step * batch_size;
    let rows = rows_of_step(step, batch_size, gp.order_len as usize);
    let mut x = Vec::new();
    let mut y = Vec::new();
    for &e in &order[start..start + rows] {
        let e = e as usize;
        x.extend_from_slice(&images[e * inputs..(e + 1) * inputs]);
        y.push(labels[e]);
    }
    vec![Expected::F64(x), Expected::U32(y)]
}

// ---- linear layers ----

fn linear_case<K: KernelDef<Size = (usize, usize)>>(def: &K, rng: &mut Rng, s: &CaseSizes) -> Case {
    let (params, w, b) = random_layer(rng, s.inputs, s.outputs);
    Case {
        buffers: vec![
            Data::value(dims(s.batch, s.inputs, s.outputs, w, b)),
            Data::F32(random_f32(rng, s.batch * s.inputs, -1.0, 1.0)),
            Data::F32(params),
            Data::poisoned_f32(s.batch * s.outputs),
        ],
        workgroups: def.workgroups((s.batch, s.outputs)),
    }
}

fn linear_spec(case: &Case, act: Option<Activation>) -> Vec<Expected> {
    let d: LinearDims = case.value(0);
    let layer = layer_from_flat(&case.f64s(2), &d);
    let y = reference::linear_forward(&case.f64s(1), d.batch as usize, &layer, act);
    vec![Expected::F64(y)]
}

/// [`linear_case`] with the pre-activation's buffer, poisoned, after `y`.
fn keep_z_case(def: &LinearKeepZ, rng: &mut Rng, s: &CaseSizes) -> Case {
    let mut case = linear_case(def, rng, s);
    case.buffers.push(Data::poisoned_f32(s.batch * s.outputs));
    case
}

fn keep_z_spec(case: &Case, act: Activation) -> Vec<Expected> {
    let d: LinearDims = case.value(0);
    let layer = layer_from_flat(&case.f64s(2), &d);
    let x = case.f64s(1);
    let z = reference::linear_forward(&x, d.batch as usize, &layer, None);
    let y = reference::linear_forward(&x, d.batch as usize, &layer, Some(act));
    vec![Expected::F64(y), Expected::F64(z)]
}

fn weight_grad_case(def: &LinearBackwardWeight, rng: &mut Rng, s: &CaseSizes) -> Case {
    // The flat gradients start as noise the kernel must leave alone outside its tensor.
    let (grads, w, b) = random_layer(rng, s.inputs, s.outputs);
    Case {
        buffers: vec![
            Data::value(dims(s.batch, s.inputs, s.outputs, w, b)),
            Data::F32(random_f32(rng, s.batch * s.outputs, -1.0, 1.0)),
            Data::F32(random_f32(rng, s.batch * s.inputs, 0.0, 1.0)),
            Data::F32(grads),
        ],
        workgroups: def.workgroups((s.outputs, s.inputs)),
    }
}

fn weight_grad_spec(case: &Case) -> Vec<Expected> {
    let d: LinearDims = case.value(0);
    let (batch, i, o) = (d.batch as usize, d.inputs as usize, d.outputs as usize);
    let dw = reference::weight_grad(&case.f64s(1), &case.f64s(2), batch, i, o);
    let mut grads = case.f64s(3);
    let w = d.weight_offset as usize;
    grads[w..w + i * o].copy_from_slice(&dw);
    vec![Expected::F64(grads)]
}

fn bias_grad_case(def: &BiasGrad, rng: &mut Rng, s: &CaseSizes) -> Case {
    // More rows than the workgroup, so the strided loop runs several times.
    let batch = s.batch * 3;
    let (grads, w, b) = random_layer(rng, s.inputs, s.outputs);
    Case {
        buffers: vec![
            Data::value(dims(batch, s.inputs, s.outputs, w, b)),
            Data::F32(random_f32(rng, batch * s.outputs, -1.0, 1.0)),
            Data::F32(grads),
        ],
        workgroups: def.workgroups(s.outputs),
    }
}

fn bias_grad_spec(case: &Case) -> Vec<Expected> {
    let d: LinearDims = case.value(0);
    let (batch, o) = (d.batch as usize, d.outputs as usize);
    let db = reference::bias_grad(&case.f64s(1), batch, o);
    let mut grads = case.f64s(2);
    let b = d.bias_offset as usize;
    grads[b..b + o].copy_from_slice(&db);
    vec![Expected::F64(grads)]
}

fn input_grad_case(def: &LinearBackwardInput, rng: &mut Rng, s: &CaseSizes) -> Case {
    let (params, w, b) = random_layer(rng, s.inputs, s.outputs);
    // What the backward reads: relu's outputs, about a third exactly zero; leaky-relu's,
    // negative ones and a fifth exactly zero (z = 0, the kink); the pre-activation z of the
    // others, over their curved range.
    let n = s.batch * s.inputs;
    let saved: Vec<f32> = match def.0 {
        Activation::Relu => random_f32(rng, n, -0.5, 1.0)
            .into_iter()
            .map(|v| v.max(0.0))
            .collect(),
        Activation::LeakyRelu => random_f32(rng, n, -1.0, 1.0)
            .into_iter()
            .enumerate()
            .map(|(i, z)| if i % 5 == 0 { 0.0 } else { z.max(0.01 * z) })
            .collect(),
        _ => random_f32(rng, n, -4.0, 4.0),
    };
    Case {
        buffers: vec![
            Data::value(dims(s.batch, s.inputs, s.outputs, w, b)),
            Data::F32(random_f32(rng, s.batch * s.outputs, -1.0, 1.0)),
            Data::F32(params),
            Data::F32(saved),
            Data::poisoned_f32(s.batch * s.inputs),
        ],
        workgroups: def.workgroups((s.batch, s.inputs)),
    }
}

/// `dx = (dy W) f'(z)`. For relu and leaky-relu the case holds `y = f(z)`, and `f'(z)` is
/// `f'(y)`: both keep the sign and their derivative depends only on it (0 gives the kink's
/// value, as `z = 0` does).
fn input_grad_spec(case: &Case, act: Activation) -> Vec<Expected> {
    let d: LinearDims = case.value(0);
    let layer = layer_from_flat(&case.f64s(2), &d);
    let batch = d.batch as usize;
    let dx = reference::input_grad(
        &case.f64s(1),
        &layer.weight,
        batch,
        layer.inputs,
        layer.outputs,
    );
    vec![Expected::F64(reference::activation_backward(
        act,
        &dx,
        &case.f64s(3),
    ))]
}

// ---- loss ----

/// The `LossDims` of a batch of `batch` rows of `classes` logits.
fn loss_dims(batch: usize, classes: usize) -> LossDims {
    LossDims {
        batch: batch as u32,
        classes: classes as u32,
        ..Default::default()
    }
}

/// A `softmax_cross_entropy` case for the given logits `[batch, classes]` and labels.
pub fn softmax_case(logits: Vec<f32>, labels: Vec<u32>, classes: usize) -> Case {
    let batch = labels.len();
    Case {
        buffers: vec![
            Data::value(loss_dims(batch, classes)),
            Data::F32(logits),
            Data::U32(labels),
            Data::poisoned_f32(batch * classes),
            Data::poisoned_f32(batch),
        ],
        workgroups: SoftmaxCrossEntropy.workgroups(batch),
    }
}

/// The specification of `softmax_cross_entropy`: probabilities, losses.
pub fn softmax_spec(case: &Case) -> Vec<Expected> {
    let d: LossDims = case.value(0);
    let (batch, classes) = (d.batch as usize, d.classes as usize);
    let r = reference::softmax_cross_entropy(&case.f64s(1), case.u32s(2), batch, classes);
    vec![Expected::F64(r.probs), Expected::F64(r.losses)]
}

/// `softmax_cross_entropy_backward`, derived by kernel AD from `softmax_cross_entropy`.
fn softmax_backward_kernel() -> KernelBuilder {
    let mut b = softmax_cross_entropy_backward().expect("the loss is derived");
    b.kernels.remove(0).kernel
}

/// A case of the derived loss gradient: random logits, labels and per-example incoming
/// gradients `d_losses`; `d_logits` holds random values first (the pass adds into it), `probs`
/// too (not differentiated: the pass must leave it), the iteration-limit flag 0. At most
/// `MAX_CLASSES` classes, the bound of its loops (`tests/mlp_kernels.rs` checks that bound
/// and one past it).
fn softmax_backward_case(rng: &mut Rng, s: &CaseSizes) -> Case {
    let (batch, classes) = (s.batch, s.classes.min(MAX_CLASSES as usize));
    Case {
        buffers: vec![
            Data::value(loss_dims(batch, classes)),
            Data::F32(random_f32(rng, batch * classes, -8.0, 8.0)),
            Data::U32(random_u32(rng, batch, classes as u32)),
            Data::F32(random_f32(rng, batch * classes, 0.0, 1.0)),
            Data::F32(random_f32(rng, batch, -2.0, 2.0)),
            Data::F32(random_f32(rng, batch * classes, -1.0, 1.0)),
            Data::U32(vec![0]),
        ],
        workgroups: SoftmaxCrossEntropy.workgroups(batch),
    }
}

/// The specification of the derived loss gradient, from the closed form of the `f64`
/// reference: `d_logits += d_losses[row] * (p - onehot)` (the reference's `dlogits` is
/// `(p - onehot) / batch`), `probs` unchanged, the flag still 0.
fn softmax_backward_spec(case: &Case) -> Vec<Expected> {
    let d: LossDims = case.value(0);
    let (batch, classes) = (d.batch as usize, d.classes as usize);
    let r = reference::softmax_cross_entropy(&case.f64s(1), case.u32s(2), batch, classes);
    let (seed, before) = (case.f64s(4), case.f64s(5));
    let d_logits = (0..batch * classes)
        .map(|i| before[i] + seed[i / classes] * r.dlogits[i] * batch as f64)
        .collect();
    vec![
        Expected::from(&case.buffers[3]),
        Expected::F64(d_logits),
        Expected::U32(vec![0]),
    ]
}

fn mean_loss_case(def: &MeanLoss, rng: &mut Rng, s: &CaseSizes) -> Case {
    // More rows than the workgroup, so the strided loop runs several times.
    let batch = s.batch * 11;
    Case {
        buffers: vec![
            Data::value(loss_dims(batch, s.classes)),
            Data::U32(vec![5, 3]),
            Data::F32(random_f32(rng, batch, 0.0, 5.0)),
            Data::F32(random_f32(rng, 7, 0.0, 5.0)),
        ],
        workgroups: def.workgroups(()),
    }
}

fn mean_loss_spec(case: &Case) -> Vec<Expected> {
    let losses = case.f64s(2);
    let mut history = case.f64s(3);
    history[case.u32s(1)[1] as usize] = losses.iter().sum::<f64>() / losses.len() as f64;
    vec![Expected::F64(history)]
}

// ---- optimizers ----

fn optim_len(s: &CaseSizes) -> usize {
    s.inputs * s.outputs + s.outputs
}

/// The buffers of an optimizer kernel's case: the hyperparameters `hp`, the step state after
/// `taken` steps, random gradients and parameters `[n]`, and one random slot `[n]` for each
/// range of `slots` (velocity; or first and second moments).
fn optim_buffers(rng: &mut Rng, hp: Data, taken: u32, n: usize, slots: &[(f32, f32)]) -> Vec<Data> {
    let mut buffers = vec![
        hp,
        Data::U32(vec![taken, 0]),
        Data::F32(random_f32(rng, n, -1.0, 1.0)),
        Data::F32(random_f32(rng, n, -1.0, 1.0)),
    ];
    for &(low, high) in slots {
        buffers.push(Data::F32(random_f32(rng, n, low, high)));
    }
    buffers
}

fn sgd_case(def: &SgdUpdate, rng: &mut Rng, s: &CaseSizes) -> Case {
    let n = optim_len(s);
    let (schedule, taken) = random_schedule(rng);
    let hp = sgd_hp(n, &schedule);
    Case {
        buffers: optim_buffers(rng, Data::value(hp), taken, n, &[(-0.1, 0.1)]),
        workgroups: def.workgroups(n),
    }
}

fn sgd_spec(case: &Case) -> Vec<Expected> {
    let hp: SgdParams = case.value(0);
    let taken = u64::from(case.u32s(1)[0]);
    let (mut p, mut v) = (case.f64s(3), case.f64s(4));
    let lr = f64::from(hp.lr) * hp.schedule.schedule().factor(taken);
    let (momentum, decay) = (hp.momentum.into(), hp.weight_decay.into());
    reference::sgd_step(&mut p, &case.f64s(2), &mut v, lr, momentum, decay);
    vec![Expected::F64(p), Expected::F64(v)]
}

fn adam_case(def: &AdamUpdate, rng: &mut Rng, s: &CaseSizes) -> Case {
    let n = optim_len(s);
    // `taken` steps taken so far, so this is step t = taken + 1.
    let (schedule, taken) = random_schedule(rng);
    let hp = adam_hp(n, &schedule);
    Case {
        buffers: optim_buffers(rng, Data::value(hp), taken, n, &[(-0.1, 0.1), (0.0, 0.01)]),
        workgroups: def.workgroups(n),
    }
}

fn adam_spec(case: &Case) -> Vec<Expected> {
    let hp: AdamParams = case.value(0);
    let taken = u64::from(case.u32s(1)[0]);
    let t = taken + 1;
    let (mut p, mut m, mut v) = (case.f64s(3), case.f64s(4), case.f64s(5));
    let g = case.f64s(2);
    let lr = f64::from(hp.lr) * hp.schedule.schedule().factor(taken);
    let (b1, b2, eps) = (hp.beta1.into(), hp.beta2.into(), hp.eps.into());
    reference::adam_step(&mut p, &g, &mut m, &mut v, t, lr, b1, b2, eps);
    vec![Expected::F64(p), Expected::F64(m), Expected::F64(v)]
}

// ---- step state, evaluation ----

fn state_case<K: KernelDef<Size = ()>>(def: &K, rng: &mut Rng, _: &CaseSizes) -> Case {
    Case {
        buffers: vec![Data::U32(random_u32(rng, STATE_LEN, 1000))],
        workgroups: def.workgroups(()),
    }
}

fn argmax_case(def: &ArgmaxAccuracy, rng: &mut Rng, s: &CaseSizes) -> Case {
    // The batch at cursor 2 of batches of `batch` rows; a partial one of `rows` rows.
    let (batch_size, classes) = (s.batch, s.classes);
    let rows = batch_size - 4;
    let total = batch_size * 2 + rows;
    let logits = random_f32(rng, rows * classes, -3.0, 3.0);
    // About half the labels are the argmax, so both branches of the count run.
    let wide: Vec<f64> = logits.iter().map(|&v| f64::from(v)).collect();
    let argmax = reference::argmax_rows(&wide, rows, classes);
    let labels = argmax
        .iter()
        .zip(random_u32(rng, rows, classes as u32 * 2))
        .map(|(&a, r)| if r < classes as u32 { r } else { a })
        .collect();
    let ep = EvalParams {
        rows: rows as u32,
        classes: classes as u32,
        batch_size: batch_size as u32,
        ..Default::default()
    };
    Case {
        buffers: vec![
            Data::value(ep),
            Data::U32(vec![9, 2]),
            Data::F32(logits),
            Data::U32(labels),
            Data::F32(random_f32(rng, rows, 0.0, 4.0)),
            Data::U32(random_u32(rng, total, 100)),
            Data::F32(random_f32(rng, total, 0.0, 4.0)),
            Data::U32(vec![13]),
        ],
        workgroups: def.workgroups(rows),
    }
}

fn argmax_spec(case: &Case) -> Vec<Expected> {
    let ep: EvalParams = case.value(0);
    let (rows, classes) = (ep.rows as usize, ep.classes as usize);
    let offset = case.u32s(1)[1] as usize * ep.batch_size as usize;
    let argmax = reference::argmax_rows(&case.f64s(2), rows, classes);
    let labels = case.u32s(3);
    let mut predictions = case.u32s(5).to_vec();
    let mut all_losses = case.f64s(6);
    predictions[offset..offset + rows].copy_from_slice(&argmax);
    all_losses[offset..offset + rows].copy_from_slice(&case.f64s(4));
    let hits = argmax.iter().zip(labels).filter(|(a, l)| a == l).count() as u32;
    vec![
        Expected::U32(predictions),
        Expected::F64(all_losses),
        Expected::U32(vec![case.u32s(7)[0] + hits]),
    ]
}
