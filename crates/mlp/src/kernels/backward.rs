//! Backward kernels of a linear layer `y = act(x W^T + b)`, given `dy`, the gradient of the
//! loss w.r.t. the layer's pre-activation output `z = x W^T + b` (`[batch, outputs]`):
//!
//! - `linear_backward_weight`: `dW = dy^T x` (`[outputs, inputs]`), tiled; written into the
//!   flat gradient buffer at `dims.weight_offset`.
//! - `bias_grad`: `db = sum over the batch of dy` (`[outputs]`), a workgroup reduction; written
//!   at `dims.bias_offset`.
//! - `linear_backward_input_relu`: `dx = (dy W) * [x_act > 0]` (`[batch, inputs]`): the
//!   gradient w.r.t. the previous layer's pre-activation, with that layer's ReLU backward
//!   fused (`x_act` is the previous layer's ReLU output, the input of this layer).

use rand_chacha::ChaCha8Rng;
use wgsl_dsl::prelude::*;

use super::linear::{dims, layer_from_flat, random_layer};
use super::tiled::{Operand, WORKGROUP, tile_grid, tiled_product};
use super::uniforms::{LinearDims, LinearDimsFields};
use super::verify::*;
use crate::reference;

/// Workgroup size of `bias_grad`.
pub const BIAS_GRAD_WORKGROUP: u32 = 64;

/// Kernel `linear_backward_weight`. Bindings: `dims`, `dy [batch, outputs]`,
/// `x [batch, inputs]`, `grads` (flat, written at `weight_offset`).
/// Grid: [`tile_grid`]`(outputs, inputs)`.
pub fn weight_grad() -> KernelBuilder {
    let mut k = KernelBuilder::new("linear_backward_weight", WORKGROUP);
    let d = k.uniform::<LinearDims>("dims");
    let dy = k.storage::<RuntimeArray<f32>, ReadOnly>("dy");
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let grads = k.storage::<RuntimeArray<f32>, ReadWrite>("grads");
    let batch = k.let_("batch", d.batch().load());
    let inputs = k.let_("inputs", d.inputs().load());
    let outputs = k.let_("outputs", d.outputs().load());
    let w_off = k.let_("weight_offset", d.weight_offset().load());
    // A = dy^T [outputs, batch]: A[o, b] = dy[b, o]; consecutive rows (o) are contiguous.
    let a = Operand {
        buffer: &dy,
        rows: outputs.clone(),
        cols: batch.clone(),
        index: Box::new({
            let outputs = outputs.clone();
            move |r: &Exp<u32>, c: &Exp<u32>| c * &outputs + r
        }),
        cols_contiguous: false,
    };
    // B = x [batch, inputs], row-major.
    let b = Operand {
        buffer: &x,
        rows: batch.clone(),
        cols: inputs.clone(),
        index: Box::new({
            let inputs = inputs.clone();
            move |r: &Exp<u32>, c: &Exp<u32>| r * &inputs + c
        }),
        cols_contiguous: true,
    };
    tiled_product(&mut k, a, b, |k, out| {
        k.store(&grads.at(&w_off + &out.row * &inputs + &out.col), out.value);
    });
    k
}

/// Kernel `linear_backward_input_relu`. Bindings: `dims`, `dy [batch, outputs]`, `params`
/// (flat, `W` at `weight_offset`), `x_act [batch, inputs]` (the ReLU output feeding this
/// layer), `dx [batch, inputs]` (written). Grid: [`tile_grid`]`(batch, inputs)`.
pub fn input_grad_relu() -> KernelBuilder {
    let mut k = KernelBuilder::new("linear_backward_input_relu", WORKGROUP);
    let d = k.uniform::<LinearDims>("dims");
    let dy = k.storage::<RuntimeArray<f32>, ReadOnly>("dy");
    let params = k.storage::<RuntimeArray<f32>, ReadOnly>("params");
    let x_act = k.storage::<RuntimeArray<f32>, ReadOnly>("x_act");
    let dx = k.storage::<RuntimeArray<f32>, ReadWrite>("dx");
    let batch = k.let_("batch", d.batch().load());
    let inputs = k.let_("inputs", d.inputs().load());
    let outputs = k.let_("outputs", d.outputs().load());
    let w_off = k.let_("weight_offset", d.weight_offset().load());
    // A = dy [batch, outputs], row-major.
    let a = Operand {
        buffer: &dy,
        rows: batch.clone(),
        cols: outputs.clone(),
        index: Box::new({
            let outputs = outputs.clone();
            move |r: &Exp<u32>, c: &Exp<u32>| r * &outputs + c
        }),
        cols_contiguous: true,
    };
    // B = W [outputs, inputs], row-major.
    let b = Operand {
        buffer: &params,
        rows: outputs.clone(),
        cols: inputs.clone(),
        index: Box::new({
            let (inputs, w_off) = (inputs.clone(), w_off.clone());
            move |r: &Exp<u32>, c: &Exp<u32>| &w_off + r * &inputs + c
        }),
        cols_contiguous: true,
    };
    tiled_product(&mut k, a, b, |k, out| {
        let at = k.let_("at", &out.row * &inputs + &out.col);
        let active = x_act.at(&at).load().gt(0.0f32);
        k.store(&dx.at(&at), active.select(out.value, 0.0f32));
    });
    k
}

/// Kernel `bias_grad`. Bindings: `dims`, `dy [batch, outputs]`, `grads` (flat, written at
/// `bias_offset`). One workgroup of [`BIAS_GRAD_WORKGROUP`] invocations per output: each sums
/// a strided part of the column, then a tree reduction in workgroup memory (barriers in
/// uniform control flow). Grid: `[outputs, 1, 1]`.
pub fn bias_grad() -> KernelBuilder {
    let n = BIAS_GRAD_WORKGROUP;
    let mut k = KernelBuilder::new("bias_grad", [n, 1, 1]);
    let d = k.uniform::<LinearDims>("dims");
    let dy = k.storage::<RuntimeArray<f32>, ReadOnly>("dy");
    let grads = k.storage::<RuntimeArray<f32>, ReadWrite>("grads");
    let partial = k.workgroup::<Array<f32, { BIAS_GRAD_WORKGROUP as usize }>>("partial");
    let outputs = k.let_("outputs", d.outputs().load());
    let o = k.let_("o", workgroup_id().x());
    let lid = k.let_("lid", local_invocation_index());
    // Workgroups past the last output (none with the documented grid) sum nothing.
    let rows = k.let_("rows", o.lt(&outputs).select(d.batch().load(), 0u32));
    let sum = k.var("sum", 0.0f32);
    k.for_step("b", lid.clone(), rows, n, |k, b| {
        k.update(&sum, |s| s + dy.at(b * &outputs + &o).load());
    });
    let total = k.workgroup_reduce(&partial, &lid, sum.load(), |a, b| a + b);
    k.if_(lid.eq(0u32).and(o.lt(&outputs)), |k| {
        k.store(&grads.at(d.bias_offset().load() + &o), total);
    });
    k
}

/// Verified op for [`weight_grad`].
#[derive(Clone, Copy, Debug)]
pub struct WeightGrad;
/// Verified op for [`input_grad_relu`].
#[derive(Clone, Copy, Debug)]
pub struct InputGradRelu;
/// Verified op for [`bias_grad`].
#[derive(Clone, Copy, Debug)]
pub struct BiasGrad;

/// A flat gradient buffer of the size `random_layer` uses, filled with noise that the
/// kernels must leave alone outside their tensor.
fn grads_arg(rng: &mut ChaCha8Rng, s: &CaseSizes) -> (CaseArg, LinearDims) {
    let (flat, w, b) = random_layer(rng, s.inputs, s.outputs);
    (
        CaseArg::F32(flat, Role::InOut),
        dims(s.batch, s.inputs, s.outputs, w, b),
    )
}

impl VerifiedOp for WeightGrad {
    fn name(&self) -> &'static str {
        "linear_backward_weight"
    }
    fn build(&self) -> KernelBuilder {
        weight_grad()
    }
    fn case(&self, rng: &mut ChaCha8Rng, s: &CaseSizes) -> Case {
        let (grads, d) = grads_arg(rng, s);
        Case {
            args: vec![
                CaseArg::Uniform(UniformValue::Linear(d)),
                CaseArg::F32(
                    uniform_f32(rng, s.batch * s.outputs, -1.0, 1.0),
                    Role::Input,
                ),
                CaseArg::F32(uniform_f32(rng, s.batch * s.inputs, 0.0, 1.0), Role::Input),
                grads,
            ],
            workgroups: tile_grid(s.outputs, s.inputs),
        }
    }
    fn spec(&self, case: &Case) -> Vec<Values> {
        let d: LinearDims = case.uniform(0);
        let (batch, i, o) = (d.batch as usize, d.inputs as usize, d.outputs as usize);
        let dw = reference::weight_grad(&case.f64s(1), &case.f64s(2), batch, i, o);
        let mut grads = case.f64s(3);
        let w = d.weight_offset as usize;
        grads[w..w + i * o].copy_from_slice(&dw);
        vec![Values::F32(grads)]
    }
}

impl VerifiedOp for InputGradRelu {
    fn name(&self) -> &'static str {
        "linear_backward_input_relu"
    }
    fn build(&self) -> KernelBuilder {
        input_grad_relu()
    }
    fn case(&self, rng: &mut ChaCha8Rng, s: &CaseSizes) -> Case {
        let (params, w, b) = random_layer(rng, s.inputs, s.outputs);
        // ReLU outputs: about a third exactly zero.
        let x_act = uniform_f32(rng, s.batch * s.inputs, -0.5, 1.0)
            .into_iter()
            .map(|v| v.max(0.0))
            .collect();
        Case {
            args: vec![
                CaseArg::Uniform(UniformValue::Linear(dims(
                    s.batch, s.inputs, s.outputs, w, b,
                ))),
                CaseArg::F32(
                    uniform_f32(rng, s.batch * s.outputs, -1.0, 1.0),
                    Role::Input,
                ),
                CaseArg::F32(params, Role::Input),
                CaseArg::F32(x_act, Role::Input),
                CaseArg::F32(vec![0.0; s.batch * s.inputs], Role::Output),
            ],
            workgroups: tile_grid(s.batch, s.inputs),
        }
    }
    fn spec(&self, case: &Case) -> Vec<Values> {
        let d: LinearDims = case.uniform(0);
        let layer = layer_from_flat(&case.f64s(2), &d);
        let dx = reference::input_grad(
            &case.f64s(1),
            &layer.weight,
            d.batch as usize,
            layer.inputs,
            layer.outputs,
        );
        vec![Values::F32(reference::relu_backward(&dx, &case.f64s(3)))]
    }
}

impl VerifiedOp for BiasGrad {
    fn name(&self) -> &'static str {
        "bias_grad"
    }
    fn build(&self) -> KernelBuilder {
        bias_grad()
    }
    fn case(&self, rng: &mut ChaCha8Rng, s: &CaseSizes) -> Case {
        // More rows than the workgroup, so the strided loop runs several times.
        let batch = s.batch * 3;
        let (grads, mut d) = grads_arg(rng, s);
        d.batch = batch as u32;
        Case {
            args: vec![
                CaseArg::Uniform(UniformValue::Linear(d)),
                CaseArg::F32(uniform_f32(rng, batch * s.outputs, -1.0, 1.0), Role::Input),
                grads,
            ],
            workgroups: [s.outputs as u32, 1, 1],
        }
    }
    fn spec(&self, case: &Case) -> Vec<Values> {
        let d: LinearDims = case.uniform(0);
        let (batch, o) = (d.batch as usize, d.outputs as usize);
        let db = reference::bias_grad(&case.f64s(1), batch, o);
        let mut grads = case.f64s(2);
        let b = d.bias_offset as usize;
        grads[b..b + o].copy_from_slice(&db);
        vec![Values::F32(grads)]
    }
}
