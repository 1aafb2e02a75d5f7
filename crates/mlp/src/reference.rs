//! An independent CPU reference in `f64`: forward, softmax cross-entropy, backward, SGD and
//! Adam. Written for clarity, not speed, and sharing no code with the kernels: it is the
//! specification the GPU kernels are tested against (the workspace's verification harness,
//! `tests/mlp_kernels.rs`).
//!
//! Shapes are row-major: activations `[batch, features]`, weights `[outputs, inputs]`. The
//! hidden layers' activations ([`Activation`]) are evaluated and differentiated in closed form
//! here ([`activate`], [`activation_derivative`]), where the kernels derive their derivatives.

use crate::params::{Layer, Params};

pub use crate::activation::Activation;

/// `f(z)` of a hidden layer's activation in `f64`, the closed forms written here without the
/// kernels' rewritings (see [`crate::activation`] for the definitions); `None` (the logits
/// layer) is the identity.
pub fn activate(act: Option<Activation>, z: f64) -> f64 {
    let sigmoid = |z: f64| 1.0 / (1.0 + (-z).exp());
    match act {
        None => z,
        Some(Activation::Relu) => z.max(0.0),
        Some(Activation::LeakyRelu) => {
            if z > 0.0 {
                z
            } else {
                f64::from(crate::activation::LEAKY_SLOPE) * z
            }
        }
        Some(Activation::Gelu) => {
            let c = (2.0 / std::f64::consts::PI).sqrt();
            0.5 * z * (1.0 + (c * (z + 0.044715 * z.powi(3))).tanh())
        }
        Some(Activation::Silu) => z * sigmoid(z),
        Some(Activation::Tanh) => z.tanh(),
        Some(Activation::Sigmoid) => sigmoid(z),
        // ln(1 + e^z) = max(z, 0) + ln(1 + e^-|z|), without overflow.
        Some(Activation::Softplus) => z.max(0.0) + (-z.abs()).exp().ln_1p(),
    }
}

/// `f'(z)` in closed form, by hand (the kernels derive theirs with the AD): at the kinks, `relu`
/// has 0 and `leaky-relu` the slope at `z = 0` (the subgradients the kernels' AD takes).
pub fn activation_derivative(act: Option<Activation>, z: f64) -> f64 {
    let sigmoid = |z: f64| 1.0 / (1.0 + (-z).exp());
    match act {
        None => 1.0,
        Some(Activation::Relu) => {
            if z > 0.0 {
                1.0
            } else {
                0.0
            }
        }
        Some(Activation::LeakyRelu) => {
            if z > 0.0 {
                1.0
            } else {
                f64::from(crate::activation::LEAKY_SLOPE)
            }
        }
        Some(Activation::Gelu) => {
            let c = (2.0 / std::f64::consts::PI).sqrt();
            let t = (c * (z + 0.044715 * z.powi(3))).tanh();
            0.5 * (1.0 + t) + 0.5 * z * (1.0 - t * t) * c * (1.0 + 3.0 * 0.044715 * z * z)
        }
        Some(Activation::Silu) => {
            let s = sigmoid(z);
            s * (1.0 + z * (1.0 - s))
        }
        Some(Activation::Tanh) => 1.0 - z.tanh().powi(2),
        Some(Activation::Sigmoid) => sigmoid(z) * (1.0 - sigmoid(z)),
        Some(Activation::Softplus) => sigmoid(z),
    }
}

/// One linear layer in `f64`: `weight [outputs, inputs]`, `bias [outputs]`.
pub type RefLayer = Layer<f64>;

/// The reference model: layers in `f64`; hidden layers use `activation`, the last one is the
/// logits.
#[derive(Clone, Debug, PartialEq)]
pub struct RefModel {
    /// First to last.
    pub layers: Vec<RefLayer>,
    /// The hidden layers' nonlinearity.
    pub activation: Activation,
}

/// Gradients of the mean cross-entropy, one `(dweight, dbias)` per layer, same shapes as the
/// parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct RefGrads {
    /// `(dL/dweight [outputs, inputs], dL/dbias [outputs])` per layer.
    pub layers: Vec<(Vec<f64>, Vec<f64>)>,
}

/// The result of softmax followed by cross-entropy on a batch.
#[derive(Clone, Debug, PartialEq)]
pub struct SoftmaxCrossEntropy {
    /// `[batch, classes]`: softmax probabilities.
    pub probs: Vec<f64>,
    /// `[batch]`: `-ln p[label]` per example.
    pub losses: Vec<f64>,
    /// Mean of `losses` over the batch.
    pub mean_loss: f64,
    /// `[batch, classes]`: gradient of `mean_loss` w.r.t. the logits, `(p - onehot) / batch`.
    pub dlogits: Vec<f64>,
}

impl RefModel {
    /// The `f32` parameters widened to `f64`, hidden layers with `activation`.
    pub fn from_params(params: &Params, activation: Activation) -> RefModel {
        let widen = |v: &[f32]| v.iter().map(|&x| f64::from(x)).collect::<Vec<f64>>();
        RefModel {
            layers: params
                .layers
                .iter()
                .map(|l| RefLayer {
                    inputs: l.inputs,
                    outputs: l.outputs,
                    weight: widen(&l.weight),
                    bias: widen(&l.bias),
                })
                .collect(),
            activation,
        }
    }

    /// All parameters flattened as `layer0.weight, layer0.bias, layer1.weight, ...`.
    pub fn flatten(&self) -> Vec<f64> {
        let mut out = Vec::new();
        for l in &self.layers {
            out.extend_from_slice(&l.weight);
            out.extend_from_slice(&l.bias);
        }
        out
    }

    /// Overwrite the parameters from a flat vector in the [`RefModel::flatten`] order.
    pub fn set_flat(&mut self, flat: &[f64]) {
        let mut at = 0;
        for l in &mut self.layers {
            let n = l.weight.len();
            l.weight.copy_from_slice(&flat[at..at + n]);
            at += n;
            let n = l.bias.len();
            l.bias.copy_from_slice(&flat[at..at + n]);
            at += n;
        }
    }

    /// The activation of layer `index`: [`RefModel::activation`] for hidden layers, `None`
    /// (the identity) for the last.
    pub fn layer_activation(&self, index: usize) -> Option<Activation> {
        (index + 1 != self.layers.len()).then_some(self.activation)
    }

    /// Forward pass of `x [batch, inputs]`: the output of every layer (post-activation), the
    /// last being the logits `[batch, classes]`.
    pub fn forward(&self, x: &[f64], batch: usize) -> Vec<Vec<f64>> {
        self.forward_with_pre_activations(x, batch).0
    }

    /// Forward pass of `x [batch, inputs]`: every layer's output (post-activation) and its
    /// pre-activation `z = x W^T + b`, each `[batch, outputs]`.
    pub fn forward_with_pre_activations(
        &self,
        x: &[f64],
        batch: usize,
    ) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
        let mut outputs: Vec<Vec<f64>> = Vec::with_capacity(self.layers.len());
        let mut pre: Vec<Vec<f64>> = Vec::with_capacity(self.layers.len());
        for (i, layer) in self.layers.iter().enumerate() {
            let input = if i == 0 { x } else { &outputs[i - 1] };
            let z = linear_forward(input, batch, layer, None);
            let act = self.layer_activation(i);
            outputs.push(z.iter().map(|&z| activate(act, z)).collect());
            pre.push(z);
        }
        (outputs, pre)
    }

    /// Mean cross-entropy of the batch.
    pub fn loss(&self, x: &[f64], labels: &[u32], batch: usize) -> f64 {
        let outs = self.forward(x, batch);
        let classes = self.layers.last().map_or(0, |l| l.outputs);
        let logits = outs.last().map_or(&[][..], |v| v.as_slice());
        softmax_cross_entropy(logits, labels, batch, classes).mean_loss
    }

    /// Mean cross-entropy of the batch and its gradient w.r.t. every parameter
    /// (backpropagation).
    pub fn loss_and_grads(&self, x: &[f64], labels: &[u32], batch: usize) -> (f64, RefGrads) {
        let (outs, pre) = self.forward_with_pre_activations(x, batch);
        let classes = self.layers.last().map_or(0, |l| l.outputs);
        let logits = outs.last().map_or(&[][..], |v| v.as_slice());
        let sce = softmax_cross_entropy(logits, labels, batch, classes);
        let mut grads = vec![(Vec::new(), Vec::new()); self.layers.len()];
        // dy: gradient w.r.t. the current layer's pre-activation output.
        let mut dy = sce.dlogits;
        for i in (0..self.layers.len()).rev() {
            let input = if i == 0 { x } else { &outs[i - 1] };
            let layer = &self.layers[i];
            grads[i] = (
                weight_grad(&dy, input, batch, layer.inputs, layer.outputs),
                bias_grad(&dy, batch, layer.outputs),
            );
            if i > 0 {
                let dx = input_grad(&dy, &layer.weight, batch, layer.inputs, layer.outputs);
                dy = activation_backward(self.activation, &dx, &pre[i - 1]);
            }
        }
        (sce.mean_loss, RefGrads { layers: grads })
    }
}

impl RefGrads {
    /// Flattened in the parameter order `layer0.weight, layer0.bias, ...`.
    pub fn flatten(&self) -> Vec<f64> {
        let mut out = Vec::new();
        for (w, b) in &self.layers {
            out.extend_from_slice(w);
            out.extend_from_slice(b);
        }
        out
    }
}

/// `y[b, o] = act(bias[o] + sum_i x[b, i] * weight[o, i])`: `x [batch, inputs]` ->
/// `[batch, outputs]`.
/// `act = None` is the identity (the logits layer).
pub fn linear_forward(
    x: &[f64],
    batch: usize,
    layer: &RefLayer,
    act: Option<Activation>,
) -> Vec<f64> {
    let (n_in, n_out) = (layer.inputs, layer.outputs);
    let mut y = vec![0.0; batch * n_out];
    for b in 0..batch {
        for o in 0..n_out {
            let mut z = layer.bias[o];
            for i in 0..n_in {
                z += x[b * n_in + i] * layer.weight[o * n_in + i];
            }
            y[b * n_out + o] = activate(act, z);
        }
    }
    y
}

/// Softmax and cross-entropy of `logits [batch, classes]` against `labels [batch]`
/// (each `< classes`), computed stably: `ln p[c] = z[c] - max(z) - ln(sum_j exp(z[j] - max(z)))`.
pub fn softmax_cross_entropy(
    logits: &[f64],
    labels: &[u32],
    batch: usize,
    classes: usize,
) -> SoftmaxCrossEntropy {
    let mut probs = vec![0.0; batch * classes];
    let mut losses = vec![0.0; batch];
    let mut dlogits = vec![0.0; batch * classes];
    for b in 0..batch {
        let row = &logits[b * classes..(b + 1) * classes];
        let max = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = row.iter().map(|z| (z - max).exp()).sum();
        let log_sum = sum.ln();
        let label = labels[b] as usize;
        losses[b] = -(row[label] - max - log_sum);
        for c in 0..classes {
            let p = (row[c] - max - log_sum).exp();
            probs[b * classes + c] = p;
            let onehot = if c == label { 1.0 } else { 0.0 };
            dlogits[b * classes + c] = (p - onehot) / batch as f64;
        }
    }
    let mean_loss = losses.iter().sum::<f64>() / batch as f64;
    SoftmaxCrossEntropy {
        probs,
        losses,
        mean_loss,
        dlogits,
    }
}

/// `dweight[o, i] = sum_b dy[b, o] * x[b, i]`, i.e. `dy^T x`: `[outputs, inputs]`.
pub fn weight_grad(dy: &[f64], x: &[f64], batch: usize, inputs: usize, outputs: usize) -> Vec<f64> {
    sum_over((outputs, inputs), batch, |o, i, b| {
        dy[b * outputs + o] * x[b * inputs + i]
    })
}

/// `dbias[o] = sum_b dy[b, o]`: `[outputs]`.
pub fn bias_grad(dy: &[f64], batch: usize, outputs: usize) -> Vec<f64> {
    (0..outputs)
        .map(|o| (0..batch).map(|b| dy[b * outputs + o]).sum())
        .collect()
}

/// `dx[b, i] = sum_o dy[b, o] * weight[o, i]`, i.e. `dy W`: `[batch, inputs]`.
pub fn input_grad(
    dy: &[f64],
    weight: &[f64],
    batch: usize,
    inputs: usize,
    outputs: usize,
) -> Vec<f64> {
    sum_over((batch, inputs), outputs, |b, i, o| {
        dy[b * outputs + o] * weight[o * inputs + i]
    })
}

/// `out[r, c] = sum_{d < depth} term(r, c, d)` for `(rows, cols)`: `[rows, cols]`, each sum
/// taken in the order of `d`.
fn sum_over(
    (rows, cols): (usize, usize),
    depth: usize,
    term: impl Fn(usize, usize, usize) -> f64,
) -> Vec<f64> {
    (0..rows * cols)
        .map(|rc| (0..depth).map(|d| term(rc / cols, rc % cols, d)).sum())
        .collect()
}

/// ReLU backward: `dz = dx` where the layer's output `y = relu(z)` is positive, else 0.
pub fn relu_backward(dx: &[f64], y: &[f64]) -> Vec<f64> {
    dx.iter()
        .zip(y)
        .map(|(&d, &a)| if a > 0.0 { d } else { 0.0 })
        .collect()
}

/// An activation's backward: `dz = dx f'(z)` from the pre-activation `z` (each
/// `[batch, features]`), with [`activation_derivative`].
pub fn activation_backward(act: Activation, dx: &[f64], z: &[f64]) -> Vec<f64> {
    dx.iter()
        .zip(z)
        .map(|(&d, &z)| d * activation_derivative(Some(act), z))
        .collect()
}

/// One SGD step as in PyTorch's `torch.optim.SGD` (dampening 0, no Nesterov):
/// `g = grad + weight_decay * p; v = momentum * v + g; p = p - lr * v`.
/// With `momentum = 0` this is plain `p -= lr * (grad + weight_decay * p)`.
pub fn sgd_step(
    params: &mut [f64],
    grads: &[f64],
    velocity: &mut [f64],
    lr: f64,
    momentum: f64,
    weight_decay: f64,
) {
    for ((p, &g), v) in params.iter_mut().zip(grads).zip(velocity.iter_mut()) {
        let g = g + weight_decay * *p;
        *v = momentum * *v + g;
        *p -= lr * *v;
    }
}

/// One Adam step, Algorithm 1 of Kingma & Ba 2015 ("Adam: A Method for Stochastic
/// Optimization"), with `t` the 1-based step number:
/// `m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2; m^ = m / (1 - b1^t); v^ = v / (1 - b2^t);
/// p = p - lr m^ / (sqrt(v^) + eps)`.
#[allow(clippy::too_many_arguments)]
pub fn adam_step(
    params: &mut [f64],
    grads: &[f64],
    m: &mut [f64],
    v: &mut [f64],
    t: u64,
    lr: f64,
    beta1: f64,
    beta2: f64,
    eps: f64,
) {
    let t = t as f64;
    for i in 0..params.len() {
        let g = grads[i];
        m[i] = beta1 * m[i] + (1.0 - beta1) * g;
        v[i] = beta2 * v[i] + (1.0 - beta2) * g * g;
        let m_hat = m[i] / (1.0 - beta1.powf(t));
        let v_hat = v[i] / (1.0 - beta2.powf(t));
        params[i] -= lr * m_hat / (v_hat.sqrt() + eps);
    }
}

/// The index of the largest value of each row of `[rows, classes]`; the first one on ties.
pub fn argmax_rows(values: &[f64], rows: usize, classes: usize) -> Vec<u32> {
    (0..rows)
        .map(|r| {
            let row = &values[r * classes..(r + 1) * classes];
            let mut best = 0;
            for (c, &v) in row.iter().enumerate() {
                if v > row[best] {
                    best = c;
                }
            }
            best as u32
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn softmax_is_stable_for_extreme_logits() {
        let logits = [1000.0, 0.0, -1000.0, 5.0, 5.0, 5.0];
        let s = softmax_cross_entropy(&logits, &[2, 1], 2, 3);
        assert!((s.losses[0] - 2000.0).abs() < 1e-9);
        assert!((s.losses[1] - 3f64.ln()).abs() < 1e-12);
        assert!(s.probs.iter().chain(&s.dlogits).all(|v| v.is_finite()));
        assert!((s.probs[0] - 1.0).abs() < 1e-12);
    }

    #[test]
    fn adam_first_step_moves_by_lr() {
        // At t = 1, m^ / sqrt(v^) = g / |g|: each parameter moves by lr against its gradient.
        let mut p = vec![1.0, -2.0];
        let (mut m, mut v) = (vec![0.0; 2], vec![0.0; 2]);
        adam_step(
            &mut p,
            &[0.5, -3.0],
            &mut m,
            &mut v,
            1,
            0.1,
            0.9,
            0.999,
            0.0,
        );
        assert!((p[0] - 0.9).abs() < 1e-12 && (p[1] + 1.9).abs() < 1e-12);
    }

    /// The hand-written derivatives against central differences of the functions, away from
    /// the kinks, and the kinks' conventions.
    #[test]
    fn activation_derivatives_match_central_differences() {
        for act in Activation::ALL {
            for i in 0..=80 {
                let z = -8.0 + 0.2 * f64::from(i) + 0.013;
                let h = 1e-6;
                let numeric = (activate(Some(act), z + h) - activate(Some(act), z - h)) / (2.0 * h);
                let closed = activation_derivative(Some(act), z);
                assert!(
                    (numeric - closed).abs() < 1e-6,
                    "{act} at {z}: {numeric} vs {closed}"
                );
            }
        }
        assert_eq!(activation_derivative(Some(Activation::Relu), 0.0), 0.0);
        assert_eq!(
            activation_derivative(Some(Activation::LeakyRelu), 0.0),
            f64::from(0.01f32)
        );
        assert_eq!(activation_derivative(Some(Activation::Softplus), 0.0), 0.5);
        assert!((activate(Some(Activation::Softplus), 800.0) - 800.0).abs() < 1e-12);
        assert_eq!(activate(Some(Activation::Softplus), -800.0), 0.0);
    }

    #[test]
    fn argmax_takes_the_first_maximum() {
        assert_eq!(
            argmax_rows(&[1.0, 3.0, 3.0, 0.0, -1.0, -2.0], 2, 3),
            vec![1, 0]
        );
    }
}
