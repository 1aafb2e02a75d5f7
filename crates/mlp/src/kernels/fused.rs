//! The fused training step (design decision 13): three dispatches per step for one hidden
//! layer, where the unfused step has twelve.
//!
//! | kernel | does | replaces |
//! |---|---|---|
//! | `forward_gather` | `P[s] = X[order] W0^T` over the `s`-th part of `K` (split-K), the batch read straight from the dataset through the permutation; the batch's labels | `gather_batch`, the first layer's product |
//! | `softmax_head` | per row: `h = relu(sum_s P[s] + b0)`, logits `h W^T + b`, softmax cross-entropy (per-row loss), `dz = (p - onehot) / batch`, `dh = (dz W) * [h > 0]`; advances the step state | the first layer's bias and ReLU, `linear_identity`, `softmax_cross_entropy`, the last layer's input gradient, `advance_step` |
//! | `grad_update` | both layers in one dispatch: per layer `[dW db] = dz^T [x 1]` (the bias gradient as one more column), and in the epilogue the optimizer (SGD with momentum and weight decay, or Adam) on each parameter; the step's mean loss into the history | `linear_backward_weight` and `bias_grad` per layer, the optimizer pass, `mean_loss` |
//!
//! The only input gradient (the hidden layer's, in `softmax_head`) reads the last layer's
//! weights before `grad_update` writes them. Models with more hidden layers train with the
//! unfused kernels.
//!
//! The step state `[t, cursor]` ([`super::step`]) is advanced by `softmax_head` (no other
//! invocation of that dispatch reads it), so `grad_update` sees `t` = this step's 1-based
//! number and `cursor - 1` = this step's index in the chunk.
//!
//! Shapes: `X [dataset, inputs]`, `P [splits, batch, hidden]`, `h, dh [batch, hidden]`,
//! `dz [batch, classes]`, row-major; parameters and optimizer slots are the flat buffers of
//! [`crate::params`].

use std::collections::HashSet;
use std::sync::Mutex;

use rand_chacha::ChaCha8Rng;
use wgsl_dsl::prelude::*;

use super::linear::{dims, layer_from_flat, random_layer};
use super::optim::adam_params;
use super::product::{
    Output, Source, Target, TileMemory, Tiles, product, product_at, split_k, split_len,
};
use super::uniforms::{
    AdamParams, AdamParamsFields, GatherParams, GatherParamsFields, LinearDims, LinearDimsFields,
    SgdParams, SgdParamsFields,
};
use super::verify::*;
use crate::reference;

/// Workgroup size of `softmax_head`.
pub const HEAD_WORKGROUP: u32 = 64;
/// Workgroup memory of `softmax_head` for the rows' hidden activations: `rows * hidden` must
/// fit (with [`HEAD_CLASS_CAPACITY`], WebGPU's default 16 KiB of workgroup memory).
pub const HEAD_HIDDEN_CAPACITY: usize = 3840;
/// Workgroup memory of `softmax_head` for the rows' logits: `rows * classes` must fit.
pub const HEAD_CLASS_CAPACITY: usize = 256;

/// A `&'static str` for a configuration's kernel name (interned: each name leaks once).
fn static_name(name: String) -> &'static str {
    static NAMES: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut guard = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    let names = guard.get_or_insert_with(HashSet::new);
    if let Some(&n) = names.get(name.as_str()) {
        return n;
    }
    let leaked: &'static str = Box::leak(name.into_boxed_str());
    names.insert(leaked);
    leaked
}

/// The fused kernels' configuration for one model and device, chosen at build time from the
/// shapes ([`FusedConfig::choose`]); it is part of every kernel's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FusedConfig {
    /// Tiles of `forward_gather`.
    pub forward: Tiles,
    /// Parts `K` (the inputs) is split into by `forward_gather`, summed by `softmax_head`.
    pub splits: u32,
    /// Rows per workgroup of `softmax_head`.
    pub head_rows: u32,
    /// Tiles of `grad_update` for the first layer (`[hidden, inputs + 1]` over the batch).
    pub first_grad: Tiles,
    /// Tiles of `grad_update` for the other layers.
    pub grad: Tiles,
}

impl FusedConfig {
    /// The configuration for a model of `layer_sizes` (`(inputs, outputs)` per layer, at least
    /// two layers) trained in batches of up to `batch` on `target`; `None` when the model cannot
    /// be fused (one layer only, or a last hidden layer or class count too wide for
    /// `softmax_head`'s workgroup memory).
    pub fn choose(layer_sizes: &[(usize, usize)], batch: usize, target: Target) -> Option<Self> {
        let (&(inputs, hidden), _) = layer_sizes.split_first()?;
        let &(last_in, classes) = layer_sizes.last()?;
        if layer_sizes.len() < 2 || last_in == 0 || classes == 0 {
            return None;
        }
        let capacity = (HEAD_HIDDEN_CAPACITY / last_in).min(HEAD_CLASS_CAPACITY / classes);
        let wanted = match target {
            Target::Cpu => 16,
            Target::Gpu { .. } => 4,
        };
        let head_rows = wanted.min(capacity) as u32;
        if head_rows == 0 {
            return None;
        }
        let forward = Tiles::for_product(batch, hidden, target);
        let [x, y, _] = forward.grid(batch, hidden);
        let splits = split_k(x * y, inputs, forward.tk, target);
        Some(FusedConfig {
            forward,
            splits,
            head_rows,
            first_grad: Tiles::for_product(hidden, inputs + 1, target),
            grad: Tiles::for_product(classes, last_in + 1, target),
        })
    }

    /// `forward_gather_s{splits}_{tiles}_tiles` (kernel names must not end in a digit).
    pub fn forward_name(&self) -> &'static str {
        static_name(format!(
            "forward_gather_s{}_{}_tiles",
            self.splits,
            self.forward.suffix()
        ))
    }

    /// `softmax_head_s{splits}_{rows}rows`.
    pub fn head_name(&self) -> &'static str {
        static_name(format!(
            "softmax_head_s{}_{}rows",
            self.splits, self.head_rows
        ))
    }

    /// The workgroups of `forward_gather` for a batch of `rows` and `hidden` outputs.
    pub fn forward_grid(&self, rows: usize, hidden: usize) -> [u32; 3] {
        let [x, y, _] = self.forward.grid(rows, hidden);
        [x, y, self.splits]
    }

    /// The `grad_update` kernel's configuration for `optimizer`.
    pub fn grad_update(&self, optimizer: FusedOptimizer) -> GradUpdate {
        GradUpdate {
            first: self.first_grad,
            last: self.grad,
            optimizer,
        }
    }

    /// The workgroups of `softmax_head` for a batch of `rows`.
    pub fn head_grid(&self, rows: usize) -> [u32; 3] {
        [rows.div_ceil(self.head_rows as usize).max(1) as u32, 1, 1]
    }
}

/// Kernel `forward_gather_*`: the first layer's product over one part of `K`, the batch read
/// from the dataset through the permutation. With `start = (gp.first_step + state[1]) *
/// gp.batch_size` and `s = workgroup_id.z`:
/// `partial[s, r, o] = sum over k in part s of images[order[start + r], k] * W0[o, k]` for
/// `r < dims.batch`, `o < dims.outputs`, parts of [`split_len`]`(inputs, splits, tk)`; and
/// `batch_labels[r] = labels[order[start + r]]`. Order entries must be below
/// `gp.dataset_len`.
///
/// Bindings: `dims` ([`LinearDims`] of the first layer), `gp` ([`GatherParams`]), `state`,
/// `order`, `images [dataset, inputs]`, `labels [dataset]`, `params`, and the written
/// `partial [splits, batch, outputs]`, `batch_labels [batch]`.
/// Grid: [`FusedConfig::forward_grid`].
pub fn forward_gather(config: &FusedConfig) -> KernelBuilder {
    let tiles = config.forward;
    let mut k = KernelBuilder::new(config.forward_name(), tiles.workgroup());
    let d = k.uniform::<LinearDims>("dims");
    let gp = k.uniform::<GatherParams>("gp");
    let state = k.storage::<RuntimeArray<u32>, ReadOnly>("state");
    let order = k.storage::<RuntimeArray<u32>, ReadOnly>("order");
    let images = k.storage::<RuntimeArray<f32>, ReadOnly>("images");
    let labels = k.storage::<RuntimeArray<u32>, ReadOnly>("labels");
    let params = k.storage::<RuntimeArray<f32>, ReadOnly>("params");
    let partial = k.storage::<RuntimeArray<f32>, ReadWrite>("partial");
    let batch_labels = k.storage::<RuntimeArray<u32>, ReadWrite>("batch_labels");
    let batch = k.let_("batch", d.batch().load());
    let inputs = k.let_("inputs", d.inputs().load());
    let outputs = k.let_("outputs", d.outputs().load());
    let w_off = k.let_("weight_offset", d.weight_offset().load());
    let start = k.let_(
        "start",
        (gp.first_step().load() + state.at(1u32).load()) * gp.batch_size().load(),
    );
    let split = k.let_("split", workgroup_id().z());
    let splits = num_workgroups().z();
    let part = k.let_(
        "part",
        ((&inputs + &splits - 1u32) / splits + (tiles.tk - 1)) / tiles.tk * tiles.tk,
    );
    let k_begin = &split * &part;
    let k_end = &k_begin + &part;
    // A = the batch [batch, inputs], row r is example order[start + r].
    let a = Source {
        rows: batch.clone(),
        cols: inputs.clone(),
        value: Box::new(|r, c| {
            let example = order.at(&start + r).load();
            images.at(example * &inputs + c).load()
        }),
        cols_contiguous: true,
    };
    // B = W0^T [inputs, outputs]: B[i, o] = W0[o, i], rows (i) contiguous.
    let b = Source {
        rows: inputs.clone(),
        cols: outputs.clone(),
        value: Box::new(|r, c| params.at(&w_off + c * &inputs + r).load()),
        cols_contiguous: false,
    };
    product(&mut k, tiles, a, b, k_begin, k_end, |k, out: Output| {
        k.store(
            &partial.at((&split * &batch + &out.row) * &outputs + &out.col),
            out.value,
        );
        k.if_(out.col.eq(0u32).and(split.eq(0u32)), |k| {
            let example = order.at(&start + &out.row).load();
            k.store(&batch_labels.at(&out.row), labels.at(example).load());
        });
    });
    k
}

/// `init + sum_{j < n} a(j) b(j)` with `unroll` independent accumulators: each round reads
/// `unroll` pairs before using any, so their memory latencies overlap instead of adding up
/// (a plain loop waits for each load). Terms past `n` count as zero.
fn dot(
    k: &mut KernelBuilder,
    name: &str,
    n: &Exp<u32>,
    init: Exp<f32>,
    unroll: u32,
    term: impl Fn(&Exp<u32>) -> (Exp<f32>, Exp<f32>),
) -> Exp<f32> {
    let acc: Vec<Var<f32>> = (0..unroll)
        .map(|u| {
            if u == 0 {
                k.var(&format!("{name}_acc0"), init.clone())
            } else {
                k.var(&format!("{name}_acc{u}"), 0.0f32)
            }
        })
        .collect();
    let rounds = (n + (unroll - 1)) / unroll;
    k.for_range(&format!("{name}_round"), 0u32, rounds, |k, t| {
        let pairs: Vec<(Exp<f32>, Exp<f32>)> = (0..unroll)
            .map(|u| {
                let j = k.let_(&format!("{name}_j"), &t * unroll + u);
                let (a, b) = term(&j);
                let a = k.let_(&format!("{name}_a"), j.lt(n.clone()).select(a, 0.0f32));
                let b = k.let_(&format!("{name}_b"), b);
                (a, b)
            })
            .collect();
        for (u, (a, b)) in pairs.into_iter().enumerate() {
            k.update(&acc[u], |s| fma(a, b, s));
        }
    });
    acc.iter()
        .map(|a| a.load())
        .reduce(|x, y| x + y)
        .unwrap_or(init)
}

/// Kernel `softmax_head_*`: the rest of the forward pass and the start of the backward pass,
/// row by row, `head_rows` rows per workgroup. For each row `r < dims.batch` (`H =
/// dims.inputs`, `C = dims.outputs`, `W, b` the last layer at `dims`' offsets, `b0` the hidden
/// layer's bias at `prev.bias_offset`):
/// `h = relu(sum_s partial[s, r] + b0)`, `z = h W^T + b`, `p = softmax(z)`,
/// `losses[r] = -ln p[label]` (as `lse - (z[label] - max z)`), `dz[r] = (p - onehot(label)) /
/// batch`, `dh[r] = (dz[r] W) * [h > 0]`; written: `hidden[r] = h`, `dlogits[r]`, `dhidden[r]`,
/// `losses[r]`. The invocation 0 of workgroup 0 advances the step state (`t += 1`,
/// `cursor += 1`).
///
/// Bindings: `dims` ([`LinearDims`] of the last layer), `prev` ([`LinearDims`] of the hidden
/// layer before it), `params`, `partial [splits, batch, H]`, `batch_labels [batch]`, `state`
/// (read-write), and the written `hidden [batch, H]`, `dlogits [batch, C]`,
/// `dhidden [batch, H]`, `losses [batch]`. Grid: [`FusedConfig::head_grid`].
pub fn softmax_head(config: &FusedConfig) -> KernelBuilder {
    let rows_per = config.head_rows;
    let wg = HEAD_WORKGROUP;
    let mut k = KernelBuilder::new(config.head_name(), [wg, 1, 1]);
    let d = k.uniform::<LinearDims>("dims");
    let prev = k.uniform::<LinearDims>("prev");
    let params = k.storage::<RuntimeArray<f32>, ReadOnly>("params");
    let partial = k.storage::<RuntimeArray<f32>, ReadOnly>("partial");
    let batch_labels = k.storage::<RuntimeArray<u32>, ReadOnly>("batch_labels");
    let state = k.storage::<RuntimeArray<u32>, ReadWrite>("state");
    let hidden = k.storage::<RuntimeArray<f32>, ReadWrite>("hidden");
    let dlogits = k.storage::<RuntimeArray<f32>, ReadWrite>("dlogits");
    let dhidden = k.storage::<RuntimeArray<f32>, ReadWrite>("dhidden");
    let losses = k.storage::<RuntimeArray<f32>, ReadWrite>("losses");
    let sh_h = k.workgroup::<Array<f32, HEAD_HIDDEN_CAPACITY>>("rows_hidden");
    let sh_z = k.workgroup::<Array<f32, HEAD_CLASS_CAPACITY>>("rows_logits");
    let batch = k.let_("batch", d.batch().load());
    let h_size = k.let_("h_size", d.inputs().load());
    let classes = k.let_("classes", d.outputs().load());
    let w_off = k.let_("weight_offset", d.weight_offset().load());
    let b_off = k.let_("bias_offset", d.bias_offset().load());
    let b0_off = k.let_("hidden_bias_offset", prev.bias_offset().load());
    let lid = k.let_("lid", local_invocation_index());
    let row0 = k.let_("row0", workgroup_id().x() * rows_per);
    k.if_(workgroup_id().x().eq(0u32).and(lid.eq(0u32)), |k| {
        k.update(&state.at(0u32), |t| t + 1u32);
        k.update(&state.at(1u32), |c| c + 1u32);
    });
    // 1. The rows' hidden activations.
    let rh = k.let_("rows_h", &h_size * rows_per);
    k.for_step("e", lid.clone(), rh.clone(), wg, |k, e| {
        let r = k.let_("r", &e / &h_size);
        let j = k.let_("j", &e % &h_size);
        let row = k.let_("row", &row0 + &r);
        k.if_(row.lt(&batch), |k| {
            let sum = k.var("sum", params.at(&b0_off + &j).load());
            for s in 0..config.splits {
                k.update(&sum, |v| {
                    v + partial.at((&batch * s + &row) * &h_size + &j).load()
                });
            }
            let h = k.let_("h", max(sum.load(), 0.0f32));
            k.store(&sh_h.at(&e), h.clone());
            k.store(&hidden.at(&row * &h_size + &j), h);
        });
    });
    k.workgroup_barrier();
    // 2. Logits.
    let rc = k.let_("rows_c", &classes * rows_per);
    k.for_step("e", lid.clone(), rc.clone(), wg, |k, e| {
        let r = k.let_("r", &e / &classes);
        let c = k.let_("c", &e % &classes);
        k.if_((&row0 + &r).lt(&batch), |k| {
            let hb = k.let_("hidden_base", &r * &h_size);
            let wb = k.let_("weight_base", &w_off + &c * &h_size);
            let z = dot(k, "z", &h_size, params.at(&b_off + &c).load(), 8, |j| {
                (params.at(&wb + j).load(), sh_h.at(&hb + j).load())
            });
            k.store(&sh_z.at(&e), z);
        });
    });
    k.workgroup_barrier();
    // 3. Softmax cross-entropy, one invocation per row; dz replaces the row's logits.
    k.if_(lid.lt(rows_per), |k| {
        let row = k.let_("row", &row0 + &lid);
        k.if_(row.lt(&batch), |k| {
            let base = k.let_("base", &lid * &classes);
            let z_max = k.var("z_max", sh_z.at(&base).load());
            k.for_range("c", 1u32, classes.clone(), |k, c| {
                k.update(&z_max, |m| max(m, sh_z.at(&base + c).load()));
            });
            let m = k.let_("m", z_max.load());
            let sum = k.var("sum", 0.0f32);
            k.for_range("c", 0u32, classes.clone(), |k, c| {
                k.update(&sum, |s| s + exp(sh_z.at(&base + c).load() - &m));
            });
            let lse = k.let_("lse", log(sum.load()));
            let label = k.let_("label", batch_labels.at(&row).load());
            k.store(
                &losses.at(&row),
                &lse - (sh_z.at(&base + &label).load() - &m),
            );
            let inv_batch = k.let_("inv_batch", 1.0f32 / batch.to_f32());
            k.for_range("c", 0u32, classes.clone(), |k, c| {
                let at = k.let_("at", &base + &c);
                let p = k.let_("p", exp(sh_z.at(&at).load() - &m - &lse));
                let onehot = c.eq(&label).select(1.0f32, 0.0f32);
                let dz = k.let_("dz", (p - onehot) * &inv_batch);
                k.store(&sh_z.at(&at), dz.clone());
                k.store(&dlogits.at(&row * &classes + &c), dz);
            });
        });
    });
    k.workgroup_barrier();
    // 4. The hidden layer's gradient: (dz W) * [h > 0], with W before this step's update.
    k.for_step("e", lid.clone(), rh, wg, |k, e| {
        let r = k.let_("r", &e / &h_size);
        let j = k.let_("j", &e % &h_size);
        let row = k.let_("row", &row0 + &r);
        k.if_(row.lt(&batch), |k| {
            let zb = k.let_("dz_base", &r * &classes);
            let g = dot(k, "g", &classes, lit(0.0f32), 4, |c| {
                (
                    params.at(&w_off + c * &h_size + &j).load(),
                    sh_z.at(&zb + c).load(),
                )
            });
            let active = sh_h.at(&e).load().gt(0.0f32);
            k.store(&dhidden.at(&row * &h_size + &j), active.select(g, 0.0f32));
        });
    });
    k
}

/// The optimizer a `grad_update` kernel applies in its epilogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FusedOptimizer {
    /// [`super::optim::sgd_update`]'s rule.
    Sgd,
    /// [`super::optim::adam_update`]'s rule, with `t = state[0]`.
    Adam,
}

/// A `grad_update` kernel's configuration: the tiles of each layer's product (the same
/// workgroup size) and the optimizer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GradUpdate {
    /// Tiles over the first layer's `[hidden, inputs + 1]`.
    pub first: Tiles,
    /// Tiles over the last layer's `[classes, hidden + 1]`.
    pub last: Tiles,
    /// The optimizer of the epilogue.
    pub optimizer: FusedOptimizer,
}

impl GradUpdate {
    /// `grad_update_{sgd|adam}_{first tiles}_{last tiles}_tiles`.
    pub fn name(&self) -> &'static str {
        static_name(format!(
            "grad_update_{}_{}_{}_tiles",
            match self.optimizer {
                FusedOptimizer::Sgd => "sgd",
                FusedOptimizer::Adam => "adam",
            },
            self.first.suffix(),
            self.last.suffix()
        ))
    }

    /// Workgroups `[last layer's tiles + first layer's tiles, 1, 1]` for a model of `inputs`,
    /// `hidden` and `classes`.
    pub fn grid(&self, inputs: usize, hidden: usize, classes: usize) -> [u32; 3] {
        let count = |t: Tiles, rows: usize, cols: usize| {
            let [x, y, _] = t.grid(rows, cols);
            x * y
        };
        [
            count(self.last, classes, hidden + 1) + count(self.first, hidden, inputs + 1),
            1,
            1,
        ]
    }
}

/// `e^x - 1` without cancellation for small `|x|` (as [`super::optim`]'s).
fn expm1(k: &mut KernelBuilder, name: &str, x: Exp<f32>) -> Exp<f32> {
    let x = k.let_(name, x);
    let mut poly: Exp<f32> = lit(1.0f32);
    for n in (2..=6).rev() {
        poly = 1.0f32 + &x / n as f32 * poly;
    }
    let series = &x * poly;
    abs(x.clone()).lt(0.1f32).select(series, exp(x) - 1.0f32)
}

/// Adam's hyperparameters and this step's two bias corrections.
type AdamRefs = (Place<AdamParams, ReadOnly>, Exp<f32>, Exp<f32>);

/// An element of a layer's input, `x(row, column)`.
type InputFn<'a> = &'a dyn Fn(&Exp<u32>, &Exp<u32>) -> Exp<f32>;

/// The optimizer's bindings and per-invocation values.
struct OptimizerRefs {
    sgd: Option<Place<SgdParams, ReadOnly>>,
    adam: Option<AdamRefs>,
    slots: Vec<Buffer<f32, ReadWrite>>,
}

/// One layer's `[dW db] = dz^T [x 1]` for the tile `tile` and the optimizer on each parameter.
#[allow(clippy::too_many_arguments)]
fn layer_update(
    k: &mut KernelBuilder,
    tiles: Tiles,
    memory: &TileMemory,
    tile: [Exp<u32>; 2],
    d: &Place<LinearDims, ReadOnly>,
    dz: &Buffer<f32, ReadOnly>,
    x_at: InputFn<'_>,
    params: &Buffer<f32, ReadWrite>,
    opt: &OptimizerRefs,
) {
    let batch = k.let_("batch", d.batch().load());
    let inputs = k.let_("inputs", d.inputs().load());
    let outputs = k.let_("outputs", d.outputs().load());
    let w_off = k.let_("weight_offset", d.weight_offset().load());
    let b_off = k.let_("bias_offset", d.bias_offset().load());
    // A = dz^T [outputs, batch]: A[o, r] = dz[r, o]; rows (o) contiguous.
    let a = Source {
        rows: outputs.clone(),
        cols: batch.clone(),
        value: Box::new(|o, r| dz.at(r * &outputs + o).load()),
        cols_contiguous: false,
    };
    // B = [x 1] [batch, inputs + 1].
    let b = Source {
        rows: batch.clone(),
        cols: &inputs + 1u32,
        value: Box::new(|r, i| i.lt(&inputs).select(x_at(r, i), 1.0f32)),
        cols_contiguous: true,
    };
    product_at(
        k,
        tiles,
        memory,
        tile,
        a,
        b,
        lit(0u32),
        batch.clone(),
        |k, out: Output| {
            let at = k.let_(
                "at",
                out.col
                    .lt(&inputs)
                    .select(&w_off + &out.row * &inputs + &out.col, &b_off + &out.row),
            );
            let p = k.let_("p", params.at(&at).load());
            let slots = &opt.slots;
            match (&opt.sgd, &opt.adam) {
                (Some(hp), _) => {
                    let g = k.let_("g", fma(hp.weight_decay().load(), p.clone(), out.value));
                    let v = k.let_("v", fma(hp.momentum().load(), slots[0].at(&at).load(), g));
                    k.store(&slots[0].at(&at), v.clone());
                    k.store(&params.at(&at), p - hp.lr().load() * v);
                }
                (None, Some((hp, c1, c2))) => {
                    let g = k.let_("g", out.value);
                    let b1 = k.let_("beta1", hp.beta1().load());
                    let b2 = k.let_("beta2", hp.beta2().load());
                    let m_new =
                        k.let_("m_new", &b1 * slots[0].at(&at).load() + (1.0f32 - &b1) * &g);
                    let v_new = k.let_(
                        "v_new",
                        &b2 * slots[1].at(&at).load() + (1.0f32 - &b2) * &g * &g,
                    );
                    k.store(&slots[0].at(&at), m_new.clone());
                    k.store(&slots[1].at(&at), v_new.clone());
                    k.store(
                        &params.at(&at),
                        p - hp.lr().load() * (m_new / c1.clone())
                            / (sqrt(v_new / c2.clone()) + hp.eps().load()),
                    );
                }
                _ => unreachable!("one optimizer is declared"),
            }
        },
    );
}

/// Kernel `grad_update_*`: the end of a step for both layers in one dispatch. For each layer,
/// the gradient of the weights and the bias as one product, `G [outputs, inputs + 1] = dz^T
/// [x 1]` over the batch (`G[o, i] = dW[o, i]` for `i < inputs`, `G[o, inputs] = db[o]`), and
/// the optimizer step on each parameter in the epilogue (no gradient buffer, no separate
/// optimizer pass):
/// - SGD: `g += weight_decay * p; v = momentum * v + g; p -= lr * v`;
/// - Adam: `t = state[0]` (already advanced by `softmax_head`), `m = b1 m + (1 - b1) g;
///   v = b2 v + (1 - b2) g^2; p -= lr (m / c1) / (sqrt(v / c2) + eps)`, `c = -expm1(t ln b)`.
///
/// The first workgroups take the last layer's tiles (`dz = dlogits`, `x = hidden`), the others
/// the first layer's (`dz = dhidden`, `x` the batch gathered from the dataset with the step's
/// `start = (gp.first_step + state[1] - 1) * gp.batch_size`); the branch is uniform per
/// workgroup, so each product's barriers are. Workgroup 0 also writes the step's mean loss:
/// `loss_history[state[1] - 1] = mean(losses[0..batch])`. Every input gradient of the step
/// (in `softmax_head`) has read the weights before this kernel changes them.
///
/// Bindings: `first`, `last` ([`LinearDims`] of the two layers), `hp` ([`SgdParams`] or
/// [`AdamParams`]), `state`, `dhidden [batch, hidden]`, `dlogits [batch, classes]`, `hidden
/// [batch, hidden]`, `gp` ([`GatherParams`]), `order`, `images [dataset, inputs]`, `params`,
/// then `velocity` (SGD) or `m`, `v` (Adam), then `losses [batch]`, `loss_history`.
/// Grid: [`GradUpdate::grid`].
pub fn grad_update(config: &GradUpdate) -> KernelBuilder {
    assert_eq!(
        config.first.workgroup(),
        config.last.workgroup(),
        "both layers' tiles need one workgroup size"
    );
    let mut k = KernelBuilder::new(config.name(), config.first.workgroup());
    let first = k.uniform::<LinearDims>("first");
    let last = k.uniform::<LinearDims>("last");
    let (sgd, adam_hp) = match config.optimizer {
        FusedOptimizer::Sgd => (Some(k.uniform::<SgdParams>("hp")), None),
        FusedOptimizer::Adam => (None, Some(k.uniform::<AdamParams>("hp"))),
    };
    let state = k.storage::<RuntimeArray<u32>, ReadOnly>("state");
    let dhidden = k.storage::<RuntimeArray<f32>, ReadOnly>("dhidden");
    let dlogits = k.storage::<RuntimeArray<f32>, ReadOnly>("dlogits");
    let hidden = k.storage::<RuntimeArray<f32>, ReadOnly>("hidden");
    let gp = k.uniform::<GatherParams>("gp");
    let order = k.storage::<RuntimeArray<u32>, ReadOnly>("order");
    let images = k.storage::<RuntimeArray<f32>, ReadOnly>("images");
    let params = k.storage::<RuntimeArray<f32>, ReadWrite>("params");
    let slots: Vec<Buffer<f32, ReadWrite>> = match config.optimizer {
        FusedOptimizer::Sgd => vec![k.storage::<RuntimeArray<f32>, ReadWrite>("velocity")],
        FusedOptimizer::Adam => vec![
            k.storage::<RuntimeArray<f32>, ReadWrite>("m"),
            k.storage::<RuntimeArray<f32>, ReadWrite>("v"),
        ],
    };
    let losses = k.storage::<RuntimeArray<f32>, ReadOnly>("losses");
    let history = k.storage::<RuntimeArray<f32>, ReadWrite>("loss_history");
    let memory = TileMemory::declare(&mut k);
    let scratch = k.workgroup::<Array<f32, 64>>("loss_partial");
    let cursor = k.let_("cursor", state.at(1u32).load() - 1u32);
    let adam = adam_hp.map(|hp| {
        let t = k.let_("t", state.at(0u32).load().to_f32());
        let c1 = -expm1(&mut k, "t_log_beta1", &t * hp.log_beta1().load());
        let c1 = k.let_("bias_correction1", c1);
        let c2 = -expm1(&mut k, "t_log_beta2", &t * hp.log_beta2().load());
        let c2 = k.let_("bias_correction2", c2);
        (hp, c1, c2)
    });
    let opt = OptimizerRefs { sgd, adam, slots };
    let tiles_along = |n: Exp<u32>, t: u32| (n + (t - 1)) / t;
    let last_x = k.let_(
        "last_tiles_x",
        tiles_along(last.inputs().load() + 1u32, config.last.tn),
    );
    let last_count = k.let_(
        "last_tiles",
        &last_x * tiles_along(last.outputs().load(), config.last.tm),
    );
    let first_x = k.let_(
        "first_tiles_x",
        tiles_along(first.inputs().load() + 1u32, config.first.tn),
    );
    let w = k.let_("w", workgroup_id().x());
    k.if_else(
        w.lt(&last_count),
        |k| {
            let h_size = k.let_("hidden_size", last.inputs().load());
            let x_at = |r: &Exp<u32>, i: &Exp<u32>| hidden.at(r * &h_size + i).load();
            let tile = [&w / &last_x, &w % &last_x];
            layer_update(
                k,
                config.last,
                &memory,
                tile,
                &last,
                &dlogits,
                &x_at,
                &params,
                &opt,
            );
        },
        |k| {
            let v = k.let_("v_index", &w - &last_count);
            let inputs = k.let_("image_size", first.inputs().load());
            let start = k.let_(
                "start",
                (gp.first_step().load() + &cursor) * gp.batch_size().load(),
            );
            let x_at = |r: &Exp<u32>, i: &Exp<u32>| {
                images.at(order.at(&start + r).load() * &inputs + i).load()
            };
            let tile = [&v / &first_x, &v % &first_x];
            layer_update(
                k,
                config.first,
                &memory,
                tile,
                &first,
                &dhidden,
                &x_at,
                &params,
                &opt,
            );
        },
    );
    // The step's mean loss, by workgroup 0 (every workgroup runs the reduction's barriers).
    let batch = k.let_("loss_batch", first.batch().load());
    let lid = k.let_("loss_lid", local_invocation_index());
    let first_wg = k.let_("first_workgroup", w.eq(0u32));
    let sum = k.var("loss_sum", 0.0f32);
    k.if_(first_wg.clone(), |k| {
        k.for_step("r", lid.clone(), batch.clone(), 64, |k, r| {
            k.update(&sum, |s| s + losses.at(r).load());
        });
    });
    let total = k.workgroup_reduce(&scratch, &lid, sum.load(), |a, b| a + b);
    k.if_(first_wg.and(lid.eq(0u32)), |k| {
        k.store(&history.at(&cursor), total / batch.to_f32());
    });
    k
}

// ---------------------------------------------------------------------------------------------
// Verified ops.

/// The configurations verified: the CPU's (large tiles, no split), and a GPU's (small tiles,
/// `K` split in 3, 3 rows per `softmax_head` workgroup) whose split leaves parts empty at
/// the verified sizes.
fn verify_configs() -> [FusedConfig; 2] {
    let sizes = [(61, 45), (45, 11)];
    let cpu = FusedConfig::choose(&sizes, 37, Target::Cpu).expect("fusable");
    let gpu = FusedConfig {
        forward: super::product::SMALL,
        splits: 3,
        head_rows: 3,
        first_grad: super::product::SMALL,
        grad: super::product::SMALL,
    };
    [cpu, gpu]
}

/// Verified op for [`forward_gather`].
#[derive(Clone, Copy, Debug)]
pub struct ForwardGather(pub FusedConfig);
/// Verified op for [`softmax_head`].
#[derive(Clone, Copy, Debug)]
pub struct SoftmaxHead(pub FusedConfig);
/// Verified op for [`grad_update`].
#[derive(Clone, Copy, Debug)]
pub struct GradUpdateOp(pub GradUpdate);

/// Every fused kernel in the configurations [`verify_configs`] gives (for the registry).
pub fn all() -> Vec<Box<dyn VerifiedOp>> {
    let mut ops: Vec<Box<dyn VerifiedOp>> = Vec::new();
    let mut seen = HashSet::new();
    for c in verify_configs() {
        if seen.insert(c.forward_name()) {
            ops.push(Box::new(ForwardGather(c)));
        }
        if seen.insert(c.head_name()) {
            ops.push(Box::new(SoftmaxHead(c)));
        }
        for optimizer in [FusedOptimizer::Sgd, FusedOptimizer::Adam] {
            let g = c.grad_update(optimizer);
            if seen.insert(g.name()) {
                ops.push(Box::new(GradUpdateOp(g)));
            }
        }
    }
    ops
}

/// A dataset of `len` examples, a permutation-like order with repeats, the step's start.
struct GatherCase {
    gp: GatherParams,
    state: Vec<u32>,
    order: Vec<u32>,
    images: Vec<f32>,
    labels: Vec<u32>,
}

/// The step (first step 1, cursor `cursor`) takes `batch` rows from an order of 3 batches and
/// a bit over a dataset of as many examples.
fn gather_case(
    rng: &mut ChaCha8Rng,
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
        order: uniform_u32(rng, len, len as u32),
        images: uniform_f32(rng, len * inputs, 0.0, 1.0),
        labels: uniform_u32(rng, len, classes as u32),
    }
}

impl VerifiedOp for ForwardGather {
    fn name(&self) -> &'static str {
        self.0.forward_name()
    }
    fn build(&self) -> KernelBuilder {
        forward_gather(&self.0)
    }
    fn case(&self, rng: &mut ChaCha8Rng, s: &CaseSizes) -> Case {
        let g = gather_case(rng, s.batch, s.inputs, s.classes, 1);
        let (params, w, b) = random_layer(rng, s.inputs, s.outputs);
        let splits = self.0.splits as usize;
        Case {
            args: vec![
                CaseArg::Uniform(UniformValue::Linear(dims(
                    s.batch, s.inputs, s.outputs, w, b,
                ))),
                CaseArg::Uniform(UniformValue::Gather(g.gp)),
                CaseArg::U32(g.state, Role::Input),
                CaseArg::U32(g.order, Role::Input),
                CaseArg::F32(g.images, Role::Input),
                CaseArg::U32(g.labels, Role::Input),
                CaseArg::F32(params, Role::Input),
                CaseArg::F32(vec![0.0; splits * s.batch * s.outputs], Role::Output),
                CaseArg::U32(vec![0; s.batch], Role::Output),
            ],
            workgroups: self.0.forward_grid(s.batch, s.outputs),
        }
    }
    fn spec(&self, case: &Case) -> Vec<Values> {
        let d: LinearDims = case.uniform(0);
        let gp: GatherParams = case.uniform(1);
        let (batch, inputs, outputs) = (d.batch as usize, d.inputs as usize, d.outputs as usize);
        let start = (gp.first_step + case.u32s(2)[1]) as usize * gp.batch_size as usize;
        let order = case.u32s(3);
        let images = case.f64s(4);
        let labels = case.u32s(5);
        let layer = layer_from_flat(&case.f64s(6), &d);
        let splits = self.0.splits;
        let part = split_len(inputs as u32, splits, self.0.forward.tk) as usize;
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
        vec![Values::F32(partial), Values::U32(batch_labels)]
    }
}

impl VerifiedOp for SoftmaxHead {
    fn name(&self) -> &'static str {
        self.0.head_name()
    }
    fn build(&self) -> KernelBuilder {
        softmax_head(&self.0)
    }
    fn case(&self, rng: &mut ChaCha8Rng, s: &CaseSizes) -> Case {
        // The hidden layer: s.outputs wide; the last layer: s.outputs -> s.classes. Both
        // layers' tensors in one flat buffer.
        let (h, c) = (s.outputs, s.classes);
        let (mut flat, w, b) = random_layer(rng, h, c);
        let b0 = flat.len();
        flat.extend(uniform_f32(rng, h, -0.5, 0.5));
        let splits = self.0.splits as usize;
        Case {
            args: vec![
                CaseArg::Uniform(UniformValue::Linear(dims(s.batch, h, c, w, b))),
                CaseArg::Uniform(UniformValue::Linear(dims(s.batch, s.inputs, h, 0, b0))),
                CaseArg::F32(flat, Role::Input),
                CaseArg::F32(
                    uniform_f32(rng, splits * s.batch * h, -1.0, 1.0),
                    Role::Input,
                ),
                CaseArg::U32(uniform_u32(rng, s.batch, c as u32), Role::Input),
                CaseArg::U32(vec![41, 3], Role::InOut),
                CaseArg::F32(vec![0.0; s.batch * h], Role::Output),
                CaseArg::F32(vec![0.0; s.batch * c], Role::Output),
                CaseArg::F32(vec![0.0; s.batch * h], Role::Output),
                CaseArg::F32(vec![0.0; s.batch], Role::Output),
            ],
            workgroups: self.0.head_grid(s.batch),
        }
    }
    fn spec(&self, case: &Case) -> Vec<Values> {
        let d: LinearDims = case.uniform(0);
        let prev: LinearDims = case.uniform(1);
        let (batch, h, c) = (d.batch as usize, d.inputs as usize, d.outputs as usize);
        let flat = case.f64s(2);
        let layer = layer_from_flat(&flat, &d);
        let b0 = &flat[prev.bias_offset as usize..prev.bias_offset as usize + h];
        let partial = case.f64s(3);
        let labels = case.u32s(4);
        let state = case.u32s(5);
        let hidden: Vec<f64> = (0..batch * h)
            .map(|e| {
                let (r, j) = (e / h, e % h);
                let s: f64 = (0..self.0.splits as usize)
                    .map(|s| partial[(s * batch + r) * h + j])
                    .sum();
                (s + b0[j]).max(0.0)
            })
            .collect();
        let logits =
            reference::linear_forward(&hidden, batch, &layer, reference::Activation::Identity);
        let sce = reference::softmax_cross_entropy(&logits, labels, batch, c);
        let dh = reference::input_grad(&sce.dlogits, &layer.weight, batch, h, c);
        vec![
            Values::U32(vec![state[0] + 1, state[1] + 1]),
            Values::F32(hidden.clone()),
            Values::F32(sce.dlogits),
            Values::F32(reference::relu_backward(&dh, &hidden)),
            Values::F32(sce.losses),
        ]
    }
}

impl VerifiedOp for GradUpdateOp {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn build(&self) -> KernelBuilder {
        grad_update(&self.0)
    }
    fn case(&self, rng: &mut ChaCha8Rng, s: &CaseSizes) -> Case {
        let g = self.0;
        // First layer s.inputs -> s.outputs, last layer s.outputs -> s.classes, in one flat
        // buffer with noise around them (which must not change).
        let (i, h, c) = (s.inputs, s.outputs, s.classes);
        let (mut params, w0, b0) = random_layer(rng, i, h);
        let w1 = params.len();
        params.extend(uniform_f32(rng, h * c + c + 3, -0.3, 0.3));
        let b1 = w1 + h * c;
        let n = params.len();
        // Step t = 5 (the state is advanced already), cursor 2: this is the chunk's step 1.
        let state = vec![5u32, 2];
        let gc = gather_case(rng, s.batch, i, c, state[1] - 1);
        // ReLU outputs: about a third exactly zero.
        let hidden = uniform_f32(rng, s.batch * h, -0.5, 1.0)
            .into_iter()
            .map(|v| v.max(0.0))
            .collect();
        let mut args = vec![
            CaseArg::Uniform(UniformValue::Linear(dims(s.batch, i, h, w0, b0))),
            CaseArg::Uniform(UniformValue::Linear(dims(s.batch, h, c, w1, b1))),
            CaseArg::Uniform(match g.optimizer {
                FusedOptimizer::Sgd => UniformValue::Sgd(SgdParams {
                    lr: 0.05,
                    momentum: 0.9,
                    weight_decay: 1e-3,
                    len: n as u32,
                }),
                FusedOptimizer::Adam => UniformValue::Adam(adam_params(0.01, 0.9, 0.999, 1e-8, n)),
            }),
            CaseArg::U32(state, Role::Input),
            CaseArg::F32(uniform_f32(rng, s.batch * h, -1.0, 1.0), Role::Input),
            CaseArg::F32(uniform_f32(rng, s.batch * c, -1.0, 1.0), Role::Input),
            CaseArg::F32(hidden, Role::Input),
            CaseArg::Uniform(UniformValue::Gather(gc.gp)),
            CaseArg::U32(gc.order, Role::Input),
            CaseArg::F32(gc.images, Role::Input),
            CaseArg::F32(params, Role::InOut),
        ];
        args.push(CaseArg::F32(uniform_f32(rng, n, -0.1, 0.1), Role::InOut));
        if g.optimizer == FusedOptimizer::Adam {
            args.push(CaseArg::F32(uniform_f32(rng, n, 0.0, 0.01), Role::InOut));
        }
        args.push(CaseArg::F32(
            uniform_f32(rng, s.batch, 0.0, 5.0),
            Role::Input,
        ));
        args.push(CaseArg::F32(uniform_f32(rng, 7, 0.0, 5.0), Role::InOut));
        Case {
            args,
            workgroups: g.grid(i, h, c),
        }
    }
    fn spec(&self, case: &Case) -> Vec<Values> {
        let g = self.0;
        let first: LinearDims = case.uniform(0);
        let last: LinearDims = case.uniform(1);
        let batch = first.batch as usize;
        let state = case.u32s(3);
        let gp: GatherParams = case.uniform(7);
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
        if g.optimizer == FusedOptimizer::Adam {
            slots.push(case.f64s(12));
            next = 13;
        }
        for (d, dz, x) in &layers {
            let (inputs, outputs) = (d.inputs as usize, d.outputs as usize);
            let dw = reference::weight_grad(dz, x, batch, inputs, outputs);
            let db = reference::bias_grad(dz, batch, outputs);
            let (w, b) = (d.weight_offset as usize, d.bias_offset as usize);
            for (range, grad) in [(w..w + inputs * outputs, &dw), (b..b + outputs, &db)] {
                match g.optimizer {
                    FusedOptimizer::Sgd => {
                        let hp: SgdParams = case.uniform(2);
                        reference::sgd_step(
                            &mut params[range.clone()],
                            grad,
                            &mut slots[0][range],
                            hp.lr.into(),
                            hp.momentum.into(),
                            hp.weight_decay.into(),
                        );
                    }
                    FusedOptimizer::Adam => {
                        let hp: AdamParams = case.uniform(2);
                        let (m, v) = slots.split_at_mut(1);
                        reference::adam_step(
                            &mut params[range.clone()],
                            grad,
                            &mut m[0][range.clone()],
                            &mut v[0][range],
                            u64::from(state[0]),
                            hp.lr.into(),
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
        let mut out = vec![Values::F32(params)];
        out.extend(slots.into_iter().map(Values::F32));
        out.push(Values::F32(history));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mnist_model_is_fused_with_tiles_for_its_device() {
        let sizes = [(784, 128), (128, 10)];
        let cpu = FusedConfig::choose(&sizes, 64, Target::Cpu).expect("fusable");
        assert_eq!((cpu.splits, cpu.head_rows), (1, 16));
        assert_eq!(cpu.forward, super::super::product::LARGE);
        let gpu =
            FusedConfig::choose(&sizes, 128, Target::Gpu { workgroups: 512 }).expect("fusable");
        assert_eq!(gpu.forward, super::super::product::SMALL);
        assert_eq!(gpu.splits, 8);
        assert_eq!(gpu.forward_grid(128, 128), [8, 8, 8]);
        assert_eq!(gpu.head_rows, 4);
        assert_eq!(gpu.forward_name(), "forward_gather_s8_t16x16x32r2x2_tiles");
        // One layer, or a too wide last hidden layer: not fused.
        assert!(FusedConfig::choose(&[(784, 10)], 64, Target::Cpu).is_none());
        assert!(FusedConfig::choose(&[(784, 5000), (5000, 10)], 64, Target::Cpu).is_none());
    }

    #[test]
    fn names_are_interned() {
        let a = static_name("x_1".into());
        let b = static_name(String::from("x_1"));
        assert!(std::ptr::eq(a, b));
    }
}
