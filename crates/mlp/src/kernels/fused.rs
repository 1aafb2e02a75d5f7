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

use wgsl_dsl::prelude::*;
use wgsl_dsl::runtime::KernelDef;

use super::optim::expm1;
use super::product::{Output, Source, Target, TileMemory, Tiles, product, product_at, split_k};
use super::uniforms::{
    AdamParams, AdamParamsFields, GatherParams, GatherParamsFields, LinearDims, LinearDimsFields,
    SgdParams, SgdParamsFields,
};

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

    /// The `grad_update` kernel with SGD.
    pub fn grad_update_sgd(&self) -> GradUpdateSgd {
        GradUpdateSgd {
            first: self.first_grad,
            last: self.grad,
        }
    }

    /// The `grad_update` kernel with Adam.
    pub fn grad_update_adam(&self) -> GradUpdateAdam {
        GradUpdateAdam {
            first: self.first_grad,
            last: self.grad,
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
/// Bindings: [`ForwardGatherBindings`]. Problem size: `(rows, hidden)`, covered by
/// [`FusedConfig::forward_grid`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ForwardGather(pub FusedConfig);

/// The bindings of `forward_gather_*`.
#[derive(Debug, Bindings)]
pub struct ForwardGatherBindings {
    /// [`LinearDims`] of the first layer.
    #[uniform]
    pub dims: Place<LinearDims, ReadOnly>,
    /// [`GatherParams`].
    #[uniform]
    pub gp: Place<GatherParams, ReadOnly>,
    /// The step state.
    pub state: Buffer<u32, ReadOnly>,
    /// The permutation.
    pub order: Buffer<u32, ReadOnly>,
    /// `[dataset, inputs]`.
    pub images: Buffer<f32, ReadOnly>,
    /// `[dataset]`.
    pub labels: Buffer<u32, ReadOnly>,
    /// The flat parameters.
    pub params: Buffer<f32, ReadOnly>,
    /// `[splits, batch, outputs]`, written.
    pub partial: Buffer<f32, ReadWrite>,
    /// `[batch]`, written.
    pub batch_labels: Buffer<u32, ReadWrite>,
}

impl KernelDef for ForwardGather {
    type Args<'a> = ForwardGatherArgs<'a>;
    type Size = (usize, usize);
    fn build(&self) -> KernelBuilder {
        forward_gather(&self.0)
    }
    fn workgroups(&self, (rows, hidden): (usize, usize)) -> [u32; 3] {
        self.0.forward_grid(rows, hidden)
    }
}

fn forward_gather(config: &FusedConfig) -> KernelBuilder {
    let tiles = config.forward;
    let mut k = KernelBuilder::new(config.forward_name(), tiles.workgroup());
    let ForwardGatherBindings {
        dims: d,
        gp,
        state,
        order,
        images,
        labels,
        params,
        partial,
        batch_labels,
    } = k.bindings();
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
                let live = k.let_(&format!("{name}_live"), j.lt(n.clone()));
                // Past `n`, load term 0 (in bounds, written) and discard it.
                let (a, b) = term(&live.select(&j, 0u32));
                let a = k.let_(&format!("{name}_a"), live.select(a, 0.0f32));
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
/// Bindings: [`SoftmaxHeadBindings`]. Problem size: `rows`, covered by
/// [`FusedConfig::head_grid`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SoftmaxHead(pub FusedConfig);

/// The bindings of `softmax_head_*`.
#[derive(Debug, Bindings)]
pub struct SoftmaxHeadBindings {
    /// [`LinearDims`] of the last layer.
    #[uniform]
    pub dims: Place<LinearDims, ReadOnly>,
    /// [`LinearDims`] of the hidden layer before it.
    #[uniform]
    pub prev: Place<LinearDims, ReadOnly>,
    /// The flat parameters.
    pub params: Buffer<f32, ReadOnly>,
    /// `[splits, batch, H]`.
    pub partial: Buffer<f32, ReadOnly>,
    /// `[batch]`.
    pub batch_labels: Buffer<u32, ReadOnly>,
    /// The step state, advanced.
    pub state: Buffer<u32, ReadWrite>,
    /// `[batch, H]`, written.
    pub hidden: Buffer<f32, ReadWrite>,
    /// `[batch, C]`, written.
    pub dlogits: Buffer<f32, ReadWrite>,
    /// `[batch, H]`, written.
    pub dhidden: Buffer<f32, ReadWrite>,
    /// `[batch]`, written.
    pub losses: Buffer<f32, ReadWrite>,
}

impl KernelDef for SoftmaxHead {
    type Args<'a> = SoftmaxHeadArgs<'a>;
    type Size = usize;
    fn build(&self) -> KernelBuilder {
        softmax_head(&self.0)
    }
    fn workgroups(&self, rows: usize) -> [u32; 3] {
        self.0.head_grid(rows)
    }
}

fn softmax_head(config: &FusedConfig) -> KernelBuilder {
    let rows_per = config.head_rows;
    let wg = HEAD_WORKGROUP;
    let mut k = KernelBuilder::new(config.head_name(), [wg, 1, 1]);
    let SoftmaxHeadBindings {
        dims: d,
        prev,
        params,
        partial,
        batch_labels,
        state,
        hidden,
        dlogits,
        dhidden,
        losses,
    } = k.bindings();
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
        // Column `inputs` is the bias's 1; x is read at column 0 there (in bounds) and
        // discarded.
        value: Box::new(|r, i| {
            let x = i.lt(&inputs);
            x.select(x_at(r, &x.select(i, 0u32)), 1.0f32)
        }),
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
/// Bindings: [`GradUpdateSgdBindings`] or [`GradUpdateAdamBindings`] (they differ in `hp` and
/// the optimizer's slots). Problem size: `(inputs, hidden, classes)` of the model, covered by
/// [`GradUpdate::grid`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GradUpdateSgd {
    /// Tiles over the first layer's `[hidden, inputs + 1]`.
    pub first: Tiles,
    /// Tiles over the last layer's `[classes, hidden + 1]`.
    pub last: Tiles,
}

/// `grad_update_adam_*`: [`GradUpdateSgd`] with Adam in the epilogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GradUpdateAdam {
    /// Tiles over the first layer's `[hidden, inputs + 1]`.
    pub first: Tiles,
    /// Tiles over the last layer's `[classes, hidden + 1]`.
    pub last: Tiles,
}

/// The bindings of `grad_update_sgd_*`, in order.
#[derive(Debug, Bindings)]
pub struct GradUpdateSgdBindings {
    /// [`LinearDims`] of the first layer.
    #[uniform]
    pub first: Place<LinearDims, ReadOnly>,
    /// [`LinearDims`] of the last layer.
    #[uniform]
    pub last: Place<LinearDims, ReadOnly>,
    /// [`SgdParams`].
    #[uniform]
    pub hp: Place<SgdParams, ReadOnly>,
    /// The step state (advanced by `softmax_head`).
    pub state: Buffer<u32, ReadOnly>,
    /// `[batch, hidden]`.
    pub dhidden: Buffer<f32, ReadOnly>,
    /// `[batch, classes]`.
    pub dlogits: Buffer<f32, ReadOnly>,
    /// `[batch, hidden]`.
    pub hidden: Buffer<f32, ReadOnly>,
    /// [`GatherParams`].
    #[uniform]
    pub gp: Place<GatherParams, ReadOnly>,
    /// The permutation.
    pub order: Buffer<u32, ReadOnly>,
    /// `[dataset, inputs]`.
    pub images: Buffer<f32, ReadOnly>,
    /// The flat parameters, updated.
    pub params: Buffer<f32, ReadWrite>,
    /// SGD's velocity, updated.
    pub velocity: Buffer<f32, ReadWrite>,
    /// `[batch]`.
    pub losses: Buffer<f32, ReadOnly>,
    /// Written at the step's cursor.
    pub loss_history: Buffer<f32, ReadWrite>,
}

/// The bindings of `grad_update_adam_*`, in order.
#[derive(Debug, Bindings)]
pub struct GradUpdateAdamBindings {
    /// [`LinearDims`] of the first layer.
    #[uniform]
    pub first: Place<LinearDims, ReadOnly>,
    /// [`LinearDims`] of the last layer.
    #[uniform]
    pub last: Place<LinearDims, ReadOnly>,
    /// [`AdamParams`].
    #[uniform]
    pub hp: Place<AdamParams, ReadOnly>,
    /// The step state (advanced by `softmax_head`).
    pub state: Buffer<u32, ReadOnly>,
    /// `[batch, hidden]`.
    pub dhidden: Buffer<f32, ReadOnly>,
    /// `[batch, classes]`.
    pub dlogits: Buffer<f32, ReadOnly>,
    /// `[batch, hidden]`.
    pub hidden: Buffer<f32, ReadOnly>,
    /// [`GatherParams`].
    #[uniform]
    pub gp: Place<GatherParams, ReadOnly>,
    /// The permutation.
    pub order: Buffer<u32, ReadOnly>,
    /// `[dataset, inputs]`.
    pub images: Buffer<f32, ReadOnly>,
    /// The flat parameters, updated.
    pub params: Buffer<f32, ReadWrite>,
    /// Adam's first moments, updated.
    pub m: Buffer<f32, ReadWrite>,
    /// Adam's second moments, updated.
    pub v: Buffer<f32, ReadWrite>,
    /// `[batch]`.
    pub losses: Buffer<f32, ReadOnly>,
    /// Written at the step's cursor.
    pub loss_history: Buffer<f32, ReadWrite>,
}

impl KernelDef for GradUpdateSgd {
    type Args<'a> = GradUpdateSgdArgs<'a>;
    type Size = (usize, usize, usize);
    fn build(&self) -> KernelBuilder {
        let config = self.config();
        let mut k = KernelBuilder::new(config.name(), config.first.workgroup());
        let b: GradUpdateSgdBindings = k.bindings();
        let common = GradCommon {
            first: b.first,
            last: b.last,
            state: b.state,
            dhidden: b.dhidden,
            dlogits: b.dlogits,
            hidden: b.hidden,
            gp: b.gp,
            order: b.order,
            images: b.images,
            params: b.params,
            losses: b.losses,
            history: b.loss_history,
        };
        grad_update(k, &config, common, GradOptimizer::Sgd(b.hp, b.velocity))
    }
    fn workgroups(&self, (inputs, hidden, classes): Self::Size) -> [u32; 3] {
        self.config().grid(inputs, hidden, classes)
    }
}

impl KernelDef for GradUpdateAdam {
    type Args<'a> = GradUpdateAdamArgs<'a>;
    type Size = (usize, usize, usize);
    fn build(&self) -> KernelBuilder {
        let config = self.config();
        let mut k = KernelBuilder::new(config.name(), config.first.workgroup());
        let b: GradUpdateAdamBindings = k.bindings();
        let common = GradCommon {
            first: b.first,
            last: b.last,
            state: b.state,
            dhidden: b.dhidden,
            dlogits: b.dlogits,
            hidden: b.hidden,
            gp: b.gp,
            order: b.order,
            images: b.images,
            params: b.params,
            losses: b.losses,
            history: b.loss_history,
        };
        grad_update(k, &config, common, GradOptimizer::Adam(b.hp, b.m, b.v))
    }
    fn workgroups(&self, (inputs, hidden, classes): Self::Size) -> [u32; 3] {
        self.config().grid(inputs, hidden, classes)
    }
}

impl GradUpdateSgd {
    /// The configuration (for the name and the grid).
    pub fn config(&self) -> GradUpdate {
        GradUpdate {
            first: self.first,
            last: self.last,
            optimizer: FusedOptimizer::Sgd,
        }
    }
}

impl GradUpdateAdam {
    /// The configuration (for the name and the grid).
    pub fn config(&self) -> GradUpdate {
        GradUpdate {
            first: self.first,
            last: self.last,
            optimizer: FusedOptimizer::Adam,
        }
    }
}

/// The bindings both `grad_update` kernels declare.
struct GradCommon {
    first: Place<LinearDims, ReadOnly>,
    last: Place<LinearDims, ReadOnly>,
    state: Buffer<u32, ReadOnly>,
    dhidden: Buffer<f32, ReadOnly>,
    dlogits: Buffer<f32, ReadOnly>,
    hidden: Buffer<f32, ReadOnly>,
    gp: Place<GatherParams, ReadOnly>,
    order: Buffer<u32, ReadOnly>,
    images: Buffer<f32, ReadOnly>,
    params: Buffer<f32, ReadWrite>,
    losses: Buffer<f32, ReadOnly>,
    history: Buffer<f32, ReadWrite>,
}

/// The optimizer's bindings: hyperparameters and slots.
enum GradOptimizer {
    Sgd(Place<SgdParams, ReadOnly>, Buffer<f32, ReadWrite>),
    Adam(
        Place<AdamParams, ReadOnly>,
        Buffer<f32, ReadWrite>,
        Buffer<f32, ReadWrite>,
    ),
}

/// The body of `grad_update_*`, after its bindings.
fn grad_update(
    mut k: KernelBuilder,
    config: &GradUpdate,
    b: GradCommon,
    optimizer: GradOptimizer,
) -> KernelBuilder {
    assert_eq!(
        config.first.workgroup(),
        config.last.workgroup(),
        "both layers' tiles need one workgroup size"
    );
    let GradCommon {
        first,
        last,
        state,
        dhidden,
        dlogits,
        hidden,
        gp,
        order,
        images,
        params,
        losses,
        history,
    } = b;
    let (sgd, adam_hp, slots) = match optimizer {
        GradOptimizer::Sgd(hp, velocity) => (Some(hp), None, vec![velocity]),
        GradOptimizer::Adam(hp, m, v) => (None, Some(hp), vec![m, v]),
    };
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

/// The configurations the tests verify and the snapshots pin: the CPU's (large tiles, no
/// split), and a GPU's (small tiles, `K` split in 3, 3 rows per `softmax_head` workgroup)
/// whose split leaves parts empty at the verified sizes.
pub fn verified_configs() -> [FusedConfig; 2] {
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

/// Every fused kernel in the [`verified_configs`], each once (for the snapshots).
pub fn all() -> Vec<KernelBuilder> {
    let mut kernels = Vec::new();
    let mut seen = HashSet::new();
    for c in verified_configs() {
        let candidates = [
            ForwardGather(c).build(),
            SoftmaxHead(c).build(),
            c.grad_update_sgd().build(),
            c.grad_update_adam().build(),
        ];
        for k in candidates {
            if seen.insert(k.name().to_string()) {
                kernels.push(k);
            }
        }
    }
    kernels
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
