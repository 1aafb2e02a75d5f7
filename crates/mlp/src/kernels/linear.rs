//! Linear forward fused with bias and activation: `y = act(x W^T + b)`.
//!
//! Bindings: `dims` ([`LinearDims`]), `x [batch, inputs]`, `params` (the flat parameter
//! buffer; `W [outputs, inputs]` at `dims.weight_offset`, `b [outputs]` at
//! `dims.bias_offset`), `y [batch, outputs]` (written). Grid: [`tile_grid`]`(batch, outputs)`.

use rand_chacha::ChaCha8Rng;
use wgsl_dsl::prelude::*;

use super::tiled::{Operand, tile_grid, tiled_product};
use super::uniforms::{LinearDims, LinearDimsFields};
use super::verify::*;
use crate::reference::{self, Activation, RefLayer};

/// The fused linear forward with activation `0`: kernels `linear_relu`, `linear_identity`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinearForward(pub Activation);

/// Build the forward kernel for `act`.
pub fn linear_forward(act: Activation) -> KernelBuilder {
    let name = match act {
        Activation::Relu => "linear_relu",
        Activation::Identity => "linear_identity",
    };
    let mut k = KernelBuilder::new(name, super::tiled::WORKGROUP);
    let dims = k.uniform::<LinearDims>("dims");
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let params = k.storage::<RuntimeArray<f32>, ReadOnly>("params");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let batch = k.let_("batch", dims.batch().load());
    let inputs = k.let_("inputs", dims.inputs().load());
    let outputs = k.let_("outputs", dims.outputs().load());
    let w_off = k.let_("weight_offset", dims.weight_offset().load());
    let b_off = k.let_("bias_offset", dims.bias_offset().load());
    // A = x [batch, inputs], row-major.
    let a = Operand {
        buffer: &x,
        rows: batch.clone(),
        cols: inputs.clone(),
        index: Box::new({
            let inputs = inputs.clone();
            move |r: &Exp<u32>, c: &Exp<u32>| r * &inputs + c
        }),
        cols_contiguous: true,
    };
    // B = W^T: B[i, o] = W[o, i], stored [outputs, inputs], so rows (i) are contiguous.
    let b = Operand {
        buffer: &params,
        rows: inputs.clone(),
        cols: outputs.clone(),
        index: Box::new({
            let (inputs, w_off) = (inputs.clone(), w_off.clone());
            move |r: &Exp<u32>, c: &Exp<u32>| &w_off + c * &inputs + r
        }),
        cols_contiguous: false,
    };
    tiled_product(&mut k, a, b, |k, out| {
        let z = out.value + params.at(&b_off + &out.col).load();
        let z = match act {
            Activation::Relu => max(z, 0.0f32),
            Activation::Identity => z,
        };
        k.store(&y.at(&out.row * &outputs + &out.col), z);
    });
    k
}

/// A random layer's tensors placed at odd offsets inside a flat buffer, as in the model.
pub(crate) fn random_layer(
    rng: &mut ChaCha8Rng,
    inputs: usize,
    outputs: usize,
) -> (Vec<f32>, usize, usize) {
    let w_off = 3;
    let b_off = w_off + inputs * outputs;
    let bound = 1.0 / (inputs as f32).sqrt();
    let flat = uniform_f32(rng, b_off + outputs + 2, -bound, bound);
    (flat, w_off, b_off)
}

/// The layer stored in `flat` at the offsets of `dims`, in `f64`.
pub(crate) fn layer_from_flat(flat: &[f64], dims: &LinearDims) -> RefLayer {
    let (i, o) = (dims.inputs as usize, dims.outputs as usize);
    let w = dims.weight_offset as usize;
    let b = dims.bias_offset as usize;
    RefLayer {
        inputs: i,
        outputs: o,
        weight: flat[w..w + i * o].to_vec(),
        bias: flat[b..b + o].to_vec(),
    }
}

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

impl VerifiedOp for LinearForward {
    fn name(&self) -> &'static str {
        match self.0 {
            Activation::Relu => "linear_relu",
            Activation::Identity => "linear_identity",
        }
    }
    fn build(&self) -> KernelBuilder {
        linear_forward(self.0)
    }
    fn case(&self, rng: &mut ChaCha8Rng, s: &CaseSizes) -> Case {
        let (params, w, b) = random_layer(rng, s.inputs, s.outputs);
        Case {
            args: vec![
                CaseArg::Uniform(UniformValue::Linear(dims(
                    s.batch, s.inputs, s.outputs, w, b,
                ))),
                CaseArg::F32(uniform_f32(rng, s.batch * s.inputs, -1.0, 1.0), Role::Input),
                CaseArg::F32(params, Role::Input),
                CaseArg::F32(vec![0.0; s.batch * s.outputs], Role::Output),
            ],
            workgroups: tile_grid(s.batch, s.outputs),
        }
    }
    fn spec(&self, case: &Case) -> Vec<Values> {
        let d: LinearDims = case.uniform(0);
        let layer = layer_from_flat(&case.f64s(2), &d);
        let y = reference::linear_forward(&case.f64s(1), d.batch as usize, &layer, self.0);
        vec![Values::F32(y)]
    }
}
