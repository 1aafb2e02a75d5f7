//! The fused training step (ARCHITECTURE.md decision *Fuse by data flow, verify each fused kernel*): three dispatches per step for one hidden
//! layer, where the unfused step has twelve.
//!
//! | kernel | does | replaces |
//! |---|---|---|
//! | `forward_gather` | `P[s] = X[order] W0^T` over the `s`-th part of `K` (split-K), the batch read straight from the dataset through the permutation; the batch's labels | `gather_batch`, the first layer's product |
//! | `softmax_head` | per row: `h = act(a)`, `a = sum_s P[s] + b0`, logits `h W^T + b`, softmax cross-entropy (per-row loss), `dz = (p - onehot) / batch` and `dh = (dz W) * act'(a)` (both derived by the expression AD); advances the step state | the first layer's bias and activation, `linear_identity`, `softmax_cross_entropy`, the last layer's input gradient, `advance_step` |
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

use wgsl_dsl::prelude::*;
use wgsl_dsl::runtime::KernelDef;

use super::optim::{ScheduleFields, scheduled_lr};
use super::uniforms::{
    AdamParams, AdamParamsFields, GatherParams, GatherParamsFields, LinearDims, LinearDimsFields,
    SgdParams, SgdParamsFields, load_layer_dims,
};
use crate::activation::Activation;
use wgsl_gemm::tiled::{
    Epilogue, Output, SharedArray, Source, Target, TileMemory, Tiles, product, product_at, split_k,
    store_only,
};

/// The most hidden units one `softmax_head` invocation holds (`per`), and the most classes.
pub const HEAD_MAX_PER: u32 = 8;
/// The most classes `softmax_head` holds in registers.
pub const HEAD_MAX_CLASSES: u32 = 32;

/// The shape of `softmax_head`: one workgroup of `invocations` per row, each invocation holding
/// `per` hidden units (`j = lid + i * invocations`) and the last layer's weights of its units
/// for up to `classes` classes in registers. It serves hidden layers up to `invocations * per`
/// wide and up to `classes` classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct HeadTiles {
    /// Invocations per workgroup (at least `classes`).
    pub invocations: u32,
    /// Hidden units per invocation.
    pub per: u32,
    /// Classes held (at most [`HEAD_MAX_CLASSES`]).
    pub classes: u32,
}

impl HeadTiles {
    /// The head for `hidden` units and `classes` on `target`: invocations a multiple of 32 up
    /// to 256 (or the target's maximum), as few units per invocation as that allows; `None`
    /// past [`HEAD_MAX_PER`] units per invocation or [`HEAD_MAX_CLASSES`] classes, or when the
    /// workgroup memory does not fit.
    pub fn choose(hidden: usize, classes: usize, target: Target) -> Option<HeadTiles> {
        let max = target.max_invocations().min(256) as usize;
        let invocations = hidden.div_ceil(32).max(1).saturating_mul(32).min(max);
        let head = HeadTiles {
            invocations: u32::try_from(invocations).ok()?,
            per: u32::try_from(hidden.div_ceil(invocations.max(1)).max(1)).ok()?,
            classes: u32::try_from(classes).ok()?,
        };
        (head.is_valid() && head.shared_floats() <= target.shared_floats()).then_some(head)
    }

    /// True if usable: 1 to [`HEAD_MAX_CLASSES`] classes, at most as many as invocations (the
    /// logits' reduction gives each class a share of the invocations), 1 to
    /// [`HEAD_MAX_PER`] units per invocation, 1 to 1024 invocations.
    pub fn is_valid(&self) -> bool {
        (1..=HEAD_MAX_CLASSES).contains(&self.classes)
            && self.classes <= self.invocations
            && (1..=HEAD_MAX_PER).contains(&self.per)
            && (1..=1024).contains(&self.invocations)
    }

    /// `f32` elements of workgroup memory: each invocation's share of every logit, the
    /// reduction's second stage, the logits.
    pub fn shared_floats(&self) -> usize {
        let (n, c) = (self.invocations as usize, self.classes as usize);
        c * n + n + c
    }

    /// `h{invocations}x{per}c{classes}`.
    pub fn suffix(&self) -> String {
        format!("h{}x{}c{}", self.invocations, self.per, self.classes)
    }

    /// Hidden units served: `invocations * per`.
    pub fn hidden_capacity(&self) -> usize {
        self.invocations as usize * self.per as usize
    }
}

/// The fused kernels' configuration for one model and device, chosen at build time from the
/// shapes ([`FusedConfig::choose`]); it is part of every kernel's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FusedConfig {
    /// Tiles of `forward_gather`.
    pub forward: Tiles,
    /// Parts `K` (the inputs) is split into by `forward_gather`, summed by `softmax_head`.
    pub splits: u32,
    /// The shape of `softmax_head`.
    pub head: HeadTiles,
    /// Tiles of `grad_update` for the first layer (`[hidden, inputs + 1]` over the batch).
    pub first_grad: Tiles,
    /// Tiles of `grad_update` for the other layers (the same workgroup size).
    pub grad: Tiles,
}

impl FusedConfig {
    /// The configuration for a model of `layer_sizes` (`(inputs, outputs)` per layer, at least
    /// two layers) trained in batches of up to `batch` on `target`; `None` when the model cannot
    /// be fused (one layer only, or a last hidden layer or class count too wide for
    /// `softmax_head`, see [`HeadTiles::choose`]).
    pub fn choose(layer_sizes: &[(usize, usize)], batch: usize, target: Target) -> Option<Self> {
        let (&(inputs, hidden), _) = layer_sizes.split_first()?;
        let &(last_in, classes) = layer_sizes.last()?;
        if layer_sizes.len() < 2 || last_in == 0 || classes == 0 {
            return None;
        }
        let head = HeadTiles::choose(last_in, classes, target)?;
        let forward = Tiles::for_product(batch, hidden, inputs, target);
        let [x, y, _] = forward.grid(batch, hidden);
        let splits = split_k(x * y, inputs, forward.depth(), target);
        // Both layers' gradients walk K = batch; the first layer's shape decides.
        let grad = Tiles::for_product(hidden, inputs + 1, batch, target);
        Some(FusedConfig {
            forward,
            splits,
            head,
            first_grad: grad,
            grad,
        })
    }

    /// [`FusedConfig::choose`], then the settings of `spec` (for measuring other
    /// configurations): comma-separated `forward=TILES`, `splits=N`, `grad=TILES` (both
    /// layers), `head=h{invocations}x{per}c{classes}`, with `TILES` as
    /// `t{tm}x{tn}x{tk}r{rm}x{rn}` and an optional `g{kg}` ([`Tiles::suffix`]). A new
    /// `forward` without `splits` gets the split [`split_k`] chooses for it.
    ///
    /// # Errors
    /// A message for a setting that does not parse, an invalid configuration, or a head too
    /// small for the model.
    pub fn choose_with(
        layer_sizes: &[(usize, usize)],
        batch: usize,
        target: Target,
        spec: Option<&str>,
    ) -> Result<Option<Self>, String> {
        let Some(mut c) = Self::choose(layer_sizes, batch, target) else {
            return Ok(None);
        };
        let Some(spec) = spec.filter(|s| !s.trim().is_empty()) else {
            return Ok(Some(c));
        };
        let mut splits = None;
        for item in spec.split(',').map(str::trim) {
            let (key, value) = item
                .split_once('=')
                .ok_or_else(|| format!("`{item}`: expected key=value"))?;
            match key {
                "forward" => c.forward = parse_tiles(value)?,
                "grad" => {
                    c.first_grad = parse_tiles(value)?;
                    c.grad = c.first_grad;
                }
                "splits" => {
                    splits = Some(
                        value
                            .parse::<u32>()
                            .ok()
                            .filter(|&s| (1..=64).contains(&s))
                            .ok_or_else(|| format!("`{item}`: splits from 1 to 64"))?,
                    )
                }
                "head" => c.head = parse_head(value)?,
                _ => return Err(format!("`{item}`: unknown setting `{key}`")),
            }
        }
        let (inputs, hidden) = layer_sizes[0];
        let (last_in, classes) = layer_sizes[layer_sizes.len() - 1];
        c.splits = splits.unwrap_or_else(|| {
            let [x, y, _] = c.forward.grid(batch, hidden);
            split_k(x * y, inputs, c.forward.depth(), target)
        });
        if !c.head.is_valid()
            || c.head.hidden_capacity() < last_in
            || (c.head.classes as usize) < classes
        {
            return Err(format!(
                "head {} does not serve {last_in} hidden units and {classes} classes",
                c.head.suffix()
            ));
        }
        for t in [c.forward, c.grad] {
            if !t.is_valid() {
                return Err(format!("tiles {} are not valid", t.suffix()));
            }
        }
        Ok(Some(c))
    }

    /// `forward_gather_s{splits}_{tiles}_tiles` (kernel names must not end in a digit).
    pub fn forward_name(&self) -> String {
        format!(
            "forward_gather_s{}_{}_tiles",
            self.splits,
            self.forward.suffix()
        )
    }

    /// `softmax_head_s{splits}_{head}_rows`: the head of a ReLU model ([`SoftmaxHead`]).
    pub fn head_name(&self) -> String {
        self.head_name_with(Activation::Relu)
    }

    /// The head's name for hidden layers with `activation`: [`FusedConfig::head_name`] for
    /// `relu` (the name it always had), `softmax_head_{activation}_s{splits}_{head}_rows` for
    /// the others.
    pub fn head_name_with(&self, activation: Activation) -> String {
        let act = match activation {
            Activation::Relu => String::new(),
            other => format!("{}_", other.ident()),
        };
        format!(
            "softmax_head_{act}s{}_{}_rows",
            self.splits,
            self.head.suffix()
        )
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

    /// The workgroups of `softmax_head` for a batch of `rows`: one per row.
    pub fn head_grid(&self, rows: usize) -> [u32; 3] {
        [rows.max(1) as u32, 1, 1]
    }
}

/// `[prefix]{a}x{b}...`: the numbers after each of `prefixes`, in order.
fn parse_numbers(s: &str, prefixes: &[char]) -> Option<Vec<u32>> {
    let mut rest = s;
    let mut out = Vec::new();
    for (i, &p) in prefixes.iter().enumerate() {
        rest = rest.strip_prefix(p)?;
        let end = rest
            .find(|ch: char| !ch.is_ascii_digit())
            .unwrap_or(rest.len());
        out.push(rest[..end].parse().ok()?);
        rest = &rest[end..];
        if i + 1 == prefixes.len() && !rest.is_empty() {
            return None;
        }
    }
    Some(out)
}

/// `t{tm}x{tn}x{tk}r{rm}x{rn}` with an optional `g{kg}`.
fn parse_tiles(s: &str) -> Result<Tiles, String> {
    let (body, kg) = match s.split_once('g') {
        Some((body, g)) => (body, g.parse::<u32>().ok()),
        None => (s, Some(1)),
    };
    let n = parse_numbers(body, &['t', 'x', 'x', 'r', 'x']);
    match (n.as_deref(), kg) {
        (Some(&[tm, tn, tk, rm, rn]), Some(kg)) => Ok(Tiles::new([tm, tn, tk], [rm, rn], kg)),
        _ => Err(format!("`{s}`: expected tiles as t16x16x32r2x2g4")),
    }
}

/// `h{invocations}x{per}c{classes}`.
fn parse_head(s: &str) -> Result<HeadTiles, String> {
    match parse_numbers(s, &['h', 'x', 'c']).as_deref() {
        Some(&[invocations, per, classes]) => Ok(HeadTiles {
            invocations,
            per,
            classes,
        }),
        _ => Err(format!("`{s}`: expected a head as h128x1c10")),
    }
}

/// Kernel `forward_gather_*`: the first layer's product over one part of `K`, the batch read
/// from the dataset through the permutation. With `start = (gp.first_step + state[1]) *
/// gp.batch_size` and `s = workgroup_id.z`:
/// `partial[s, r, o] = sum over k in part s of images[order[start + r], k] * W0[o, k]` for
/// `r < dims.batch`, `o < dims.outputs`, parts of [`split_len`](wgsl_gemm::tiled::split_len)`(inputs, splits, tk)`; and
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

/// `start`, the step's first row in the permutation: `(gp.first_step + state[1]) *
/// gp.batch_size` (the chunk's first step plus the cursor, in rows).
pub(crate) fn batch_start(
    k: &mut KernelBuilder,
    gp: &Place<GatherParams, ReadOnly>,
    state: &Buffer<u32, ReadOnly>,
) -> Exp<u32> {
    k.let_(
        "start",
        (gp.first_step().load() + state.at(1u32).load()) * gp.batch_size().load(),
    )
}

fn forward_gather(config: &FusedConfig) -> KernelBuilder {
    let tiles = config.forward;
    let depth = tiles.depth();
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
    let [batch, inputs, outputs, w_off] = load_layer_dims(&mut k, &d);
    let start = batch_start(&mut k, &gp, &state);
    let split = k.let_("split", workgroup_id().z());
    let splits = num_workgroups().z();
    let part = k.let_(
        "part",
        ((&inputs + &splits - 1u32) / splits + (depth - 1)) / depth * depth,
    );
    let k_begin = &split * &part;
    let k_end = &k_begin + &part;
    // A = the batch [batch, inputs], row r is example order[start + r]: its offset in the
    // dataset is read once per row (the row key), not once per step.
    let a = Source {
        rows: batch.clone(),
        cols: inputs.clone(),
        value: Box::new(|offset, c| images.at(offset + c).load()),
        row_key: Some(Box::new(|r| order.at(&start + r).load() * &inputs)),
        cols_contiguous: true,
        vector: None,
        whole: false,
    };
    // B = W0^T [inputs, outputs]: B[i, o] = W0[o, i], rows (i) contiguous.
    let b = Source {
        rows: inputs.clone(),
        cols: outputs.clone(),
        value: Box::new(|r, c| params.at(&w_off + c * &inputs + r).load()),
        row_key: None,
        cols_contiguous: false,
        vector: None,
        whole: false,
    };
    let epilogue = store_only(|k: &mut KernelBuilder, out: &Output, _| {
        k.if_(out.inside.clone(), |k| {
            k.store(
                &partial.at((&split * &batch + &out.row) * &outputs + &out.col),
                out.value.clone(),
            );
            k.if_(out.col.eq(0u32).and(split.eq(0u32)), |k| {
                let example = order.at(&start + &out.row).load();
                k.store(&batch_labels.at(&out.row), labels.at(example).load());
            });
        });
    });
    product(&mut k, tiles, a, b, k_begin, k_end, epilogue);
    k
}

/// Kernel `softmax_head_*`: the rest of the forward pass and the start of the backward pass,
/// one workgroup per row ([`HeadTiles`]), for hidden layers with the activation `act` (the
/// second field). For each row `r < dims.batch` (`H = dims.inputs` at most
/// [`HeadTiles::hidden_capacity`], `C = dims.outputs` at most `head.classes`, `W, b` the last
/// layer at `dims`' offsets, `b0` the hidden layer's bias at `prev.bias_offset`):
/// `a = sum_s partial[s, r] + b0`, `h = act(a)`, `z = h W^T + b`, `p = softmax(z)`,
/// `losses[r] = -ln p[label]` (as `L = lse + m - z[label]`, `m = max z`,
/// `lse = ln(sum_j exp(z_j - m))`), `dz[r] = (p - onehot(label)) / batch`,
/// `dh[r] = (dz[r] W) * act'(a)`; written: `hidden[r] = h`, `dlogits[r]`, `dhidden[r]`,
/// `losses[r]`. The invocation 0 of workgroup 0 advances the step state (`t += 1`,
/// `cursor += 1`).
///
/// Both derivatives are **derived** by the expression AD: `dz = vjp(L, 1 / batch, (z_0, ..,
/// z_{C-1}, m))` from the loss expression (the logits are `let`s, the class count is the
/// head's, known at build time; `m` is one of the variables so that it is held fixed: the
/// loss does not depend on it, and differentiating through the `max` would only add rounding
/// to the class that is the maximum), and `act'(a)` by [`Activation::backward`] at the
/// pre-activation `a`, which the invocation holds in registers (never stored). The products
/// (`h W^T`, `dz W`) are the hand-written custom derivatives of GEMMs.
///
/// Each invocation reads its hidden units' partial sums and their column of `W` in one round
/// of independent loads, keeps the column in registers for `dh`, and the logits are summed
/// over the invocations in two stages through workgroup memory (each class's values in
/// segments, then the segments): three barriers, no loop waiting on memory.
///
/// Bindings: [`SoftmaxHeadBindings`]. Problem size: `rows`, covered by
/// [`FusedConfig::head_grid`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SoftmaxHead(pub FusedConfig, pub Activation);

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
        softmax_head(&self.0, self.1)
    }
    fn workgroups(&self, rows: usize) -> [u32; 3] {
        self.0.head_grid(rows)
    }
}

/// `values[c]` for the `c` equal to `index` (0 past the end).
fn pick(values: &[Exp<f32>], index: &Exp<u32>) -> Exp<f32> {
    values.iter().enumerate().fold(lit(0.0f32), |acc, (c, v)| {
        index.eq(c as u32).select(v.clone(), acc)
    })
}

fn softmax_head(config: &FusedConfig, act: Activation) -> KernelBuilder {
    let HeadTiles {
        invocations: n,
        per,
        classes: cc,
    } = config.head;
    let mut k = KernelBuilder::new(config.head_name_with(act), [n, 1, 1]);
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
    let sums = SharedArray::declare(&mut k, "head_sums", config.head.shared_floats())
        .unwrap_or_else(|| panic!("head {:?} needs too much memory", config.head));
    // Regions of `sums`: [cc][n] per-invocation shares, [cc][segments], [cc] logits.
    let (stage2, logits_at) = (cc * n, cc * n + n);
    let batch = k.let_("batch", d.batch().load());
    let h_size = k.let_("h_size", d.inputs().load());
    let classes = k.let_("classes", d.outputs().load());
    let w_off = k.let_("weight_offset", d.weight_offset().load());
    let b_off = k.let_("bias_offset", d.bias_offset().load());
    let b0_off = k.let_("hidden_bias_offset", prev.bias_offset().load());
    let lid = k.let_("lid", local_invocation_index());
    let row = k.let_("row", workgroup_id().x());
    k.if_(row.eq(0u32).and(lid.eq(0u32)), |k| {
        k.update(&state.at(0u32), |t| t + 1u32);
        k.update(&state.at(1u32), |c| c + 1u32);
    });
    // Rows past the batch read row 0 and store nothing.
    let live = k.let_("live_row", row.lt(&batch));
    let srow = k.let_("safe_row", live.select(&row, 0u32));
    let label = k.let_("label", batch_labels.at(&srow).load());
    // 1. This invocation's hidden units and their columns of W, in one round of loads.
    let mut units = Vec::new();
    for i in 0..per {
        let j = k.let_(&format!("j{i}"), &lid + i * n);
        let in_h = k.let_(&format!("in_h{i}"), j.lt(&h_size));
        let sj = k.let_(&format!("safe_j{i}"), in_h.select(&j, 0u32));
        let sum = (0..config.splits).fold(params.at(&b0_off + &sj).load(), |acc, s| {
            acc + partial.at((&batch * s + &srow) * &h_size + &sj).load()
        });
        let a = k.let_(&format!("a{i}"), sum);
        let h = k.let_(&format!("h{i}"), in_h.select(act.apply(&a), 0.0f32));
        let w: Vec<Exp<f32>> = (0..cc)
            .map(|c| {
                let inside = in_h.and(classes.gt(c));
                let at = inside.select(&w_off + &h_size * c + &sj, 0u32);
                k.let_(
                    &format!("w{i}_{c}"),
                    inside.select(params.at(at).load(), 0.0f32),
                )
            })
            .collect();
        units.push((j, in_h, a, h, w));
    }
    // 2. Logits: each invocation's share, summed by class in segments, then the segments.
    for c in 0..cc {
        let share = units.iter().fold(lit(0.0f32), |acc, (_, _, _, h, w)| {
            fma(h.clone(), w[c as usize].clone(), acc)
        });
        k.store(&sums.at(&lid + c * n), share);
    }
    k.workgroup_barrier();
    let segments = n / cc;
    let seg_len = n.div_ceil(segments);
    k.if_(lid.lt(cc * segments), |k| {
        let c = k.let_("seg_class", &lid / segments);
        let s = k.let_("segment", &lid % segments);
        let first = k.let_("seg_first", &s * seg_len);
        let total = (0..seg_len).fold(lit(0.0f32), |acc, m| {
            let inside = (&first + m).lt(n);
            let at = &c * n + inside.select(&first + m, 0u32);
            acc + inside.select(sums.at(at).load(), 0.0f32)
        });
        k.store(&sums.at(&lid + stage2), total);
    });
    k.workgroup_barrier();
    k.if_(lid.lt(cc), |k| {
        let in_c = lid.lt(&classes);
        let bias = params.at(in_c.select(&b_off + &lid, 0u32)).load();
        let z = (0..segments).fold(bias, |acc, s| {
            acc + sums.at(&lid * segments + (stage2 + s)).load()
        });
        k.store(&sums.at(&lid + logits_at), z);
    });
    k.workgroup_barrier();
    // 3. Softmax cross-entropy of the row, in every invocation (classes past C ignored).
    let z: Vec<Exp<f32>> = (0..cc)
        .map(|c| k.let_(&format!("z{c}"), sums.at(c + logits_at).load()))
        .collect();
    let m = (1..cc as usize).fold(z[0].clone(), |m, c| {
        classes.gt(c as u32).select(max(m.clone(), z[c].clone()), m)
    });
    let m = k.let_("z_max", m);
    // `exp(z_c - m)` and their sum are `let`s: the derivative reuses them (exp's derivative is
    // its value, log's is 1 / the sum) instead of computing them again.
    let exps: Vec<Exp<f32>> = (0..cc as usize)
        .map(|c| k.let_(&format!("exp{c}"), exp(&z[c] - &m)))
        .collect();
    let sum = (0..cc as usize).fold(lit(0.0f32), |s, c| {
        s + classes.gt(c as u32).select(&exps[c], 0.0f32)
    });
    let sum = k.let_("sum_exp", sum);
    let lse = k.let_("lse", log(&sum));
    let loss = k.let_("loss", &lse + &m - pick(&z, &label));
    let inv_batch = k.let_("inv_batch", 1.0f32 / batch.to_f32());
    // The gradient of the batch-mean loss: derived, with the max held fixed (a variable).
    // Classes past C get 0 (their terms are `select`ed out of the sum, and the label is < C).
    let variables: Vec<&Exp<f32>> = z.iter().chain(std::iter::once(&m)).collect();
    let mut dz = k.vjp(&loss, inv_batch.clone(), &variables[..]);
    dz.truncate(cc as usize);
    k.if_(live.clone().and(lid.eq(0u32)), |k| {
        k.store(&losses.at(&row), loss.clone());
    });
    k.if_(live.clone().and(lid.lt(&classes)), |k| {
        k.store(&dlogits.at(&row * &classes + &lid), pick(&dz, &lid));
    });
    // 4. The hidden layer's gradient: (dz W) * act'(a), with W before this step's update;
    // act' derived at the pre-activation a.
    for (j, in_h, a, h, w) in &units {
        k.if_(live.clone().and(in_h.clone()), |k| {
            let g =
                (0..cc as usize).fold(lit(0.0f32), |acc, c| fma(dz[c].clone(), w[c].clone(), acc));
            let at = k.let_("unit_at", &row * &h_size + j);
            k.store(&hidden.at(&at), h.clone());
            let dh = act.backward(k, a, g);
            k.store(&dhidden.at(&at), dh);
        });
    }
    k
}

/// The optimizer a `grad_update` kernel applies in its epilogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FusedOptimizer {
    /// [`sgd_update`](super::optim::SgdUpdate)'s rule.
    Sgd,
    /// [`adam_update`](super::optim::AdamUpdate)'s rule, with `t = state[0]`.
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
    pub fn name(&self) -> String {
        format!(
            "grad_update_{}_{}_{}_tiles",
            match self.optimizer {
                FusedOptimizer::Sgd => "sgd",
                FusedOptimizer::Adam => "adam",
            },
            self.first.suffix(),
            self.last.suffix()
        )
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
    /// This step's scheduled learning rate.
    lr: Exp<f32>,
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
    let [batch, inputs, outputs, w_off] = load_layer_dims(k, d);
    let b_off = k.let_("bias_offset", d.bias_offset().load());
    // A = dz^T [outputs, batch]: A[o, r] = dz[r, o]; rows (o) contiguous.
    let a = Source {
        rows: outputs.clone(),
        cols: batch.clone(),
        value: Box::new(|o, r| dz.at(r * &outputs + o).load()),
        row_key: None,
        cols_contiguous: false,
        vector: None,
        whole: false,
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
        row_key: None,
        cols_contiguous: true,
        vector: None,
        whole: false,
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
        Epilogue {
            // The parameter and its optimizer slots (at parameter 0 outside the layer).
            load: |k: &mut KernelBuilder, out: &Output| {
                let at = out
                    .col
                    .lt(&inputs)
                    .select(&w_off + &out.row * &inputs + &out.col, &b_off + &out.row);
                let at = k.let_("at", out.inside.select(at, 0u32));
                let mut loaded = vec![k.let_("p", params.at(&at).load())];
                for (i, slot) in opt.slots.iter().enumerate() {
                    loaded.push(k.let_(&format!("slot{i}"), slot.at(&at).load()));
                }
                loaded
            },
            store: |k: &mut KernelBuilder, out: &Output, loaded: Vec<Exp<f32>>| {
                let slots = &opt.slots;
                let at = out
                    .col
                    .lt(&inputs)
                    .select(&w_off + &out.row * &inputs + &out.col, &b_off + &out.row);
                let p = loaded[0].clone();
                k.if_(out.inside.clone(), |k| {
                    let at = k.let_("at", at);
                    match (&opt.sgd, &opt.adam) {
                        (Some(hp), _) => {
                            let (v, p) = super::optim::sgd_step(
                                k,
                                hp,
                                opt.lr.clone(),
                                p,
                                out.value.clone(),
                                loaded[1].clone(),
                            );
                            k.store(&slots[0].at(&at), v);
                            k.store(&params.at(&at), p);
                        }
                        (None, Some((hp, c1, c2))) => {
                            let (m_new, v_new, p) = super::optim::adam_step(
                                k,
                                hp,
                                (opt.lr.clone(), c1.clone(), c2.clone()),
                                p,
                                out.value.clone(),
                                (loaded[1].clone(), loaded[2].clone()),
                            );
                            k.store(&slots[0].at(&at), m_new);
                            k.store(&slots[1].at(&at), v_new);
                            k.store(&params.at(&at), p);
                        }
                        _ => unreachable!("one optimizer is declared"),
                    }
                });
            },
        },
    );
}

/// Declares a `grad_update` kernel for one optimizer (`$opt`, a [`FusedOptimizer`] and
/// [`GradOptimizer`] variant): the kernel type `$kernel` (its tiles), its bindings `$bindings`
/// (those of [`GradCommon`] with the optimizer's `hp: $hp` uniform third and its `$slot`
/// buffers after `params`; `#[derive(Bindings)]` makes `$args`), and its [`KernelDef`].
macro_rules! grad_update_kernel {
    (
        $(#[$doc:meta])*
        $kernel:ident,
        $bindings:ident,
        $args:ident,
        $opt:ident,
        $hp:ident,
        $($(#[$slot_doc:meta])* $slot:ident),+
    ) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct $kernel {
            /// Tiles over the first layer's `[hidden, inputs + 1]`.
            pub first: Tiles,
            /// Tiles over the last layer's `[classes, hidden + 1]`.
            pub last: Tiles,
        }

        #[doc = concat!("The bindings of [`", stringify!($kernel), "`], in order.")]
        #[derive(Debug, Bindings)]
        pub struct $bindings {
            /// [`LinearDims`] of the first layer.
            #[uniform]
            pub first: Place<LinearDims, ReadOnly>,
            /// [`LinearDims`] of the last layer.
            #[uniform]
            pub last: Place<LinearDims, ReadOnly>,
            #[doc = concat!("[`", stringify!($hp), "`].")]
            #[uniform]
            pub hp: Place<$hp, ReadOnly>,
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
            $(
                $(#[$slot_doc])*
                pub $slot: Buffer<f32, ReadWrite>,
            )+
            /// `[batch]`.
            pub losses: Buffer<f32, ReadOnly>,
            /// Written at the step's cursor.
            pub loss_history: Buffer<f32, ReadWrite>,
        }

        impl KernelDef for $kernel {
            type Args<'a> = $args<'a>;
            type Size = (usize, usize, usize);
            fn build(&self) -> KernelBuilder {
                let config = self.config();
                let mut k = KernelBuilder::new(config.name(), config.first.workgroup());
                let b: $bindings = k.bindings();
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
                grad_update(k, &config, common, GradOptimizer::$opt(b.hp, $(b.$slot),+))
            }
            fn workgroups(&self, (inputs, hidden, classes): Self::Size) -> [u32; 3] {
                self.config().grid(inputs, hidden, classes)
            }
        }

        impl $kernel {
            /// The configuration (for the name and the grid).
            pub fn config(&self) -> GradUpdate {
                GradUpdate {
                    first: self.first,
                    last: self.last,
                    optimizer: FusedOptimizer::$opt,
                }
            }
        }
    };
}

grad_update_kernel! {
    /// Kernel `grad_update_*`: the end of a step for both layers in one dispatch. For each layer,
    /// the gradient of the weights and the bias as one product, `G [outputs, inputs + 1] = dz^T
    /// [x 1]` over the batch (`G[o, i] = dW[o, i]` for `i < inputs`, `G[o, inputs] = db[o]`), and
    /// the optimizer step on each parameter in the epilogue (no gradient buffer, no separate
    /// optimizer pass):
    /// - SGD: `g += weight_decay * p; v = momentum * v + g; p -= lr_t * v`;
    /// - Adam: `t = state[0]` (already advanced by `softmax_head`), `m = b1 m + (1 - b1) g;
    ///   v = b2 v + (1 - b2) g^2; p -= lr_t (m / c1) / (sqrt(v / c2) + eps)`, `c = -expm1(t ln b)`;
    ///
    /// with `lr_t` the scheduled learning rate after `state[0] - 1` steps
    /// (`optim::scheduled_lr`, computed once per invocation).
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
    GradUpdateSgd,
    GradUpdateSgdBindings,
    GradUpdateSgdArgs,
    Sgd,
    SgdParams,
    /// SGD's velocity, updated.
    velocity
}

grad_update_kernel! {
    /// `grad_update_adam_*`: [`GradUpdateSgd`] with Adam in the epilogue.
    GradUpdateAdam,
    GradUpdateAdamBindings,
    GradUpdateAdamArgs,
    Adam,
    AdamParams,
    /// Adam's first moments, updated.
    m,
    /// Adam's second moments, updated.
    v
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
    let memory = TileMemory::declare(&mut k, &[config.first, config.last]);
    let cursor = k.let_("cursor", state.at(1u32).load() - 1u32);
    // This step's learning rate: `state[0]` counts this step already, `state[0] - 1` were taken.
    let taken = state.at(0u32).load() - 1u32;
    let (lr, schedule) = match (&sgd, &adam_hp) {
        (Some(hp), _) => (hp.lr().load(), hp.schedule()),
        (None, Some(hp)) => (hp.lr().load(), hp.schedule()),
        (None, None) => unreachable!("one optimizer is declared"),
    };
    let lr = scheduled_lr(&mut k, lr, &ScheduleFields::load(schedule), taken);
    let adam = adam_hp.map(|hp| {
        let t = k.let_("t", state.at(0u32).load().to_f32());
        let (c1, c2) = super::optim::bias_corrections(&mut k, &hp, &t);
        (hp, c1, c2)
    });
    let opt = OptimizerRefs {
        sgd,
        adam,
        slots,
        lr,
    };
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
    // The step's mean loss, by workgroup 0 (a branch uniform per workgroup) in the tile memory
    // once its product is done: a tree over the invocations' strided sums.
    let invocations = config.first.invocations();
    k.if_(w.eq(0u32), |k| {
        let batch = k.let_("loss_batch", first.batch().load());
        let lid = k.let_("loss_lid", local_invocation_index());
        let sum = k.var("loss_sum", 0.0f32);
        k.for_step("r", lid.clone(), batch.clone(), invocations, |k, r| {
            k.update(&sum, |s| s + losses.at(r).load());
        });
        k.workgroup_barrier();
        k.store(&memory.tiles.at(&lid), sum.load());
        k.workgroup_barrier();
        let mut stride = invocations.next_power_of_two() / 2;
        while stride > 0 {
            k.if_(lid.lt(stride).and((&lid + stride).lt(invocations)), |k| {
                let other = memory.tiles.at(&lid + stride).load();
                k.update(&memory.tiles.at(&lid), |s| s + other);
            });
            k.workgroup_barrier();
            stride /= 2;
        }
        k.if_(lid.eq(0u32), |k| {
            let total = memory.tiles.at(0u32).load();
            k.store(&history.at(&cursor), total / batch.to_f32());
        });
    });
    k
}

/// The configurations the tests verify and the snapshots pin: the CPU's (32 x 32 tiles, one
/// group, no split, a head of 64 invocations of one unit each), and two GPU-like ones with
/// shallow steps so that the verified sizes walk several of them. The first: the forward in
/// the GPU's 32 x 32 tiles of four groups, 4 deep, with `K` split in 3 (parts left empty at
/// some sizes), a head of 32 invocations of two units each for up to 12 classes, and the
/// gradients in 16 x 32 tiles of 2 x 4 per invocation in two groups 8 deep. The second, the
/// shapes [`Tiles::for_product`] takes at small batches and long `K`: the forward in the
/// 16 x 16 tiles of four groups ([`wgsl_gemm::tiled::SMALL`]), 4 deep, `K` in 2 parts, and the
/// gradients in eight groups (16 x 16 tiles of 2 x 4, 4 deep: 256 invocations, within the
/// interpreter's and WebGPU's default limits, where the GPU's 32 x 32 tiles of eight groups
/// take 512).
pub fn verified_configs() -> [FusedConfig; 3] {
    let sizes = [(61, 45), (45, 11)];
    let cpu = FusedConfig::choose(&sizes, 37, Target::Cpu).expect("fusable");
    let grad = Tiles::new([16, 32, 8], [2, 4], 2);
    let gpu = FusedConfig {
        forward: Tiles {
            tk: 4,
            ..wgsl_gemm::tiled::GROUPED
        },
        splits: 3,
        head: HeadTiles {
            invocations: 32,
            per: 2,
            classes: 12,
        },
        first_grad: grad,
        grad,
    };
    let deep = Tiles::new([16, 16, 4], [2, 4], 8);
    let small_batch = FusedConfig {
        forward: Tiles {
            tk: 4,
            ..wgsl_gemm::tiled::SMALL
        },
        splits: 2,
        first_grad: deep,
        grad: deep,
        ..gpu
    };
    [cpu, gpu, small_batch]
}

/// Every fused kernel in the [`verified_configs`], each once (for the snapshots).
pub fn all() -> Vec<KernelBuilder> {
    let mut kernels = Vec::new();
    let mut seen = HashSet::new();
    for c in verified_configs() {
        let candidates = [
            ForwardGather(c).build(),
            SoftmaxHead(c, Activation::Relu).build(),
            c.grad_update_sgd().build(),
            c.grad_update_adam().build(),
        ];
        for k in candidates {
            if seen.insert(k.name().to_string()) {
                kernels.push(k);
            }
        }
    }
    // Every other activation's head, in the first (the CPU's) configuration.
    for act in Activation::ALL.into_iter().skip(1) {
        kernels.push(SoftmaxHead(verified_configs()[0], act).build());
    }
    kernels
}

#[cfg(test)]
mod tests {
    use super::*;
    use wgsl_gemm::tiled::H200;

    #[test]
    fn the_mnist_model_is_fused_with_tiles_for_its_device() {
        let sizes = [(784, 128), (128, 10)];
        let cpu = FusedConfig::choose(&sizes, 64, Target::Cpu).expect("fusable");
        assert_eq!(cpu.splits, 1);
        assert_eq!(cpu.forward, wgsl_gemm::tiled::LARGE);
        assert_eq!(cpu.head.suffix(), "h128x1c10");
        let gpu = FusedConfig::choose(&sizes, 128, H200).expect("fusable");
        assert_eq!(gpu.forward.suffix(), "t16x16x16r2x2g4");
        assert_eq!(gpu.splits, 7);
        assert_eq!(gpu.forward_grid(128, 128), [8, 8, 7]);
        assert_eq!(gpu.head_grid(128), [128, 1, 1]);
        assert_eq!(
            gpu.forward_name(),
            "forward_gather_s7_t16x16x16r2x2g4_tiles"
        );
        assert_eq!(gpu.head_name(), "softmax_head_s7_h128x1c10_rows");
        assert_eq!(gpu.first_grad, gpu.grad);
        assert_eq!(gpu.grad.suffix(), "t32x32x16r4x4g4");
        // Batch 1024: 128 forward tiles of 32 x 32, K in 4 parts; the gradients walk K = 1024
        // in 8 groups.
        let b1024 = FusedConfig::choose(&sizes, 1024, H200).expect("fusable");
        assert_eq!(b1024.forward.suffix(), "t32x32x16r4x4g4");
        assert_eq!(b1024.splits, 4);
        assert_eq!(b1024.grad.suffix(), "t32x32x16r4x4g8");
        // One layer, or a too wide last hidden layer: not fused.
        assert!(FusedConfig::choose(&[(784, 10)], 64, Target::Cpu).is_none());
        assert!(FusedConfig::choose(&[(784, 5000), (5000, 10)], 64, Target::Cpu).is_none());
        assert!(FusedConfig::choose(&[(784, 64), (64, 40)], 64, Target::Cpu).is_none());
    }

    #[test]
    fn heads_cover_their_layer() {
        for hidden in [1usize, 19, 45, 128, 300, 2048] {
            for classes in [1usize, 3, 10, 32] {
                let h = HeadTiles::choose(hidden, classes, H200).expect("a head");
                assert!(h.is_valid());
                assert!(h.hidden_capacity() >= hidden);
                assert!(h.hidden_capacity() < hidden + h.invocations as usize);
                assert_eq!(h.classes as usize, classes);
            }
        }
        // 64 invocations at most: wider layers take more units per invocation.
        let narrow = Target::Gpu {
            workgroups: 512,
            max_invocations: 64,
            shared_bytes: 16384,
        };
        let h = HeadTiles::choose(128, 10, narrow).expect("a head");
        assert_eq!((h.invocations, h.per), (64, 2));
    }

    #[test]
    fn configurations_can_be_set_for_measurements() {
        let sizes = [(784, 128), (128, 10)];
        let chosen = FusedConfig::choose(&sizes, 128, H200);
        assert_eq!(
            FusedConfig::choose_with(&sizes, 128, H200, None),
            Ok(chosen)
        );
        assert_eq!(
            FusedConfig::choose_with(&sizes, 128, H200, Some(" ")),
            Ok(chosen)
        );
        let c = FusedConfig::choose_with(
            &sizes,
            128,
            H200,
            Some("forward=t32x32x16r4x4, grad=t16x16x16r2x2g2,head=h64x2c10"),
        )
        .expect("parses")
        .expect("fused");
        assert_eq!(c.forward, wgsl_gemm::tiled::LARGE);
        // 16 tiles of 32 x 32, 49 steps of 16: 32 parts wanted, 16 at most.
        assert_eq!(c.splits, 16);
        assert_eq!(c.grad.suffix(), "t16x16x16r2x2g2");
        assert_eq!(c.first_grad, c.grad);
        assert_eq!(c.head.suffix(), "h64x2c10");
        let c = FusedConfig::choose_with(&sizes, 128, H200, Some("splits=4"))
            .expect("parses")
            .expect("fused");
        assert_eq!(c.splits, 4);
        for bad in [
            "forward",
            "forward=t16",
            "forward=t16x16x16r2x2gx",
            "forward=t16x16x16r3x2",
            "splits=0",
            "head=h32x1c10",
            "head=h128x1c9",
            "tiles=t16x16x16r2x2",
        ] {
            assert!(
                FusedConfig::choose_with(&sizes, 128, H200, Some(bad)).is_err(),
                "{bad}"
            );
        }
    }
}
