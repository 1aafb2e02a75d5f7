//! The hidden layers' nonlinearity, [`Activation`]: each a DSL function of the pre-activation
//! `z` ([`Activation::apply`]), its derivative **derived** with the expression AD
//! (`wgsl_dsl::autodiff`, [`Activation::backward`]): no kernel writes an activation's
//! derivative by hand. The `f64` reference ([`crate::reference`]) has the same functions with
//! their closed-form derivatives, written independently.
//!
//! | name (CLI, checkpoint) | `f(z)` | written as (`f32`, no overflow for any finite `z`) |
//! |---|---|---|
//! | `relu` | `max(z, 0)` | `max(z, 0)` |
//! | `leaky-relu` | `z` for `z > 0`, else `0.01 z` | `select(0.01 z, z, z > 0)` |
//! | `gelu` | `0.5 z (1 + tanh(sqrt(2 / pi) (z + 0.044715 z^3)))` | as is (the tanh form of Hendrycks & Gimpel 2016, "Gaussian Error Linear Units (GELUs)", eq. 2) |
//! | `silu` | `z sigmoid(z)` (Elfwing et al. 2018; Swish-1) | `z (0.5 + 0.5 tanh(z / 2))` |
//! | `tanh` | `tanh(z)` | `tanh(z)` |
//! | `sigmoid` | `1 / (1 + exp(-z))` | `0.5 + 0.5 tanh(z / 2)` |
//! | `softplus` | `ln(1 + exp(z))` | `r + ln(1 + exp(q))` with `r = select(0, z, z > 0)`, `q = select(z, -z, z > 0)` (`q = -abs(z)`) |
//!
//! The logistic function is written through `tanh` (the same function: `sigmoid(z) =
//! (1 + tanh(z / 2)) / 2`) so that no `exp` of a large argument makes an infinity whose
//! product with a zero adjoint would be NaN in the derivative; softplus likewise never takes
//! `exp` of a positive number. Softplus's two pieces are `select`s rather than `max` and `abs`
//! because the AD's subgradients at kinks (`max(x, 0)` and `abs` pass 0 at `x = 0`) would make
//! its derived derivative 0 at `z = 0` where the true one is 0.5 (the pieces' kinks cancel);
//! with the `select`s it is `sigmoid(z)` everywhere, 0.5 at 0 (`docs/autodiff.md`, "Kink
//! conventions compose").
//!
//! Subgradients at the kinks, from the AD's rules (`wgsl_dsl::autodiff` module docs): `relu`
//! passes 0 at `z = 0` (`max`'s tie goes to its second operand); `leaky-relu` passes `0.01`
//! at `z = 0` (the `select` takes its reject branch there), as PyTorch's `leaky_relu` does.
//! The reference uses the same conventions.
//!
//! **What the backward pass reads** ([`Activation::backward_reads_output`]): `relu` and
//! `leaky-relu` keep the sign of `z` (`f(z) > 0` exactly when `z > 0`), so their derivative at
//! `z` equals the AD's derivative of the same function at `y = f(z)`: the backward pass reads
//! the layer's output `y`, which the next layer reads anyway, and training costs what it cost
//! before derivatives were derived (no extra buffer, no extra store). The others are not
//! invertible from `y` by their derivative alone (`gelu`, `silu`), or would need a derivative
//! written in terms of `y` by hand (`tanh`, `sigmoid`, `softplus`), so the unfused forward
//! kernel stores `z` as well (`linear_*_keep_z`, one more `[batch, outputs]` buffer per hidden
//! layer) and the backward pass differentiates `f` at `z`; the fused step has `z` in registers
//! and never stores it.

use wgsl_dsl::prelude::*;

/// The nonlinearity of every hidden layer (the last layer has none: its outputs are the
/// logits). Spelled on the command line (`mnist train --activation NAME`) and in checkpoints
/// as [`Activation::name`]; [`std::str::FromStr`] also takes `leaky_relu`.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Activation {
    /// `max(z, 0)` (the default, the source's network).
    #[default]
    Relu,
    /// `z` for `z > 0`, else `0.01 z`: negative slope 0.01 (`LEAKY_SLOPE`, PyTorch's default).
    #[value(alias = "leaky_relu")]
    #[serde(alias = "leaky_relu")]
    LeakyRelu,
    /// `0.5 z (1 + tanh(sqrt(2 / pi) (z + 0.044715 z^3)))`, the tanh form of Hendrycks &
    /// Gimpel 2016.
    Gelu,
    /// `z sigmoid(z)` (SiLU, Swish-1).
    Silu,
    /// `tanh(z)`.
    Tanh,
    /// `1 / (1 + exp(-z))`.
    Sigmoid,
    /// `ln(1 + exp(z))`.
    Softplus,
}

/// The negative slope of [`Activation::LeakyRelu`] (PyTorch's `negative_slope` default).
pub const LEAKY_SLOPE: f32 = 0.01;

/// `sqrt(2 / pi)`, the GELU tanh form's scale.
pub const GELU_SCALE: f32 = 0.797_884_6;

/// The cubic coefficient of the GELU tanh form.
pub const GELU_CUBIC: f32 = 0.044_715;

/// A string that names no [`Activation`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown activation `{0}`: expected one of {names}", names = Activation::names_text())]
pub struct UnknownActivation(pub String);

impl Activation {
    /// Every activation, in the order of the table in the [module docs](self).
    pub const ALL: [Activation; 7] = [
        Activation::Relu,
        Activation::LeakyRelu,
        Activation::Gelu,
        Activation::Silu,
        Activation::Tanh,
        Activation::Sigmoid,
        Activation::Softplus,
    ];

    /// As spelled on the command line and in checkpoints: `relu`, `leaky-relu`, `gelu`,
    /// `silu`, `tanh`, `sigmoid`, `softplus`.
    pub fn name(self) -> &'static str {
        match self {
            Activation::Relu => "relu",
            Activation::LeakyRelu => "leaky-relu",
            Activation::Gelu => "gelu",
            Activation::Silu => "silu",
            Activation::Tanh => "tanh",
            Activation::Sigmoid => "sigmoid",
            Activation::Softplus => "softplus",
        }
    }

    /// The name as a WGSL identifier part (kernel names): `leaky_relu` for `leaky-relu`.
    pub fn ident(self) -> &'static str {
        match self {
            Activation::LeakyRelu => "leaky_relu",
            other => other.name(),
        }
    }

    /// Every name, comma-separated (for messages).
    pub fn names_text() -> String {
        let names: Vec<&str> = Self::ALL.iter().map(|a| a.name()).collect();
        names.join(", ")
    }

    /// `f(z)` as a DSL expression (see the [module docs](self) for each formula).
    #[track_caller]
    pub fn apply(self, z: &Exp<f32>) -> Exp<f32> {
        let sigmoid = |z: &Exp<f32>| tanh(z * 0.5f32) * 0.5f32 + 0.5f32;
        match self {
            Activation::Relu => max(z, 0.0f32),
            Activation::LeakyRelu => z.gt(0.0f32).select(z, z * LEAKY_SLOPE),
            Activation::Gelu => {
                let u = (z + z * z * z * GELU_CUBIC) * GELU_SCALE;
                z * 0.5f32 * (tanh(u) + 1.0f32)
            }
            Activation::Silu => z * sigmoid(z),
            Activation::Tanh => tanh(z),
            Activation::Sigmoid => sigmoid(z),
            Activation::Softplus => {
                let positive = z.gt(0.0f32);
                let r = positive.select(z, 0.0f32);
                let q = positive.select(-z, z);
                r + log(exp(q) + 1.0f32)
            }
        }
    }

    /// True if the backward pass reads the layer's output `y = f(z)` rather than `z`:
    /// `relu` and `leaky-relu`, whose derivative at `z` is the derivative of `f` at `f(z)`
    /// (they keep `z`'s sign, and their derivative depends on nothing else). See the
    /// [module docs](self).
    pub fn backward_reads_output(self) -> bool {
        matches!(self, Activation::Relu | Activation::LeakyRelu)
    }

    /// `g f'(saved)`, derived by the expression AD (`k.vjp`): the gradient with respect to
    /// the pre-activation given `g`, the gradient with respect to the output. `saved` must be
    /// a `let` (a variable of the AD): the pre-activation `z`, or for the activations whose
    /// [`Activation::backward_reads_output`] the output `y = f(z)` (the same derivative). The
    /// result is a `let` at this point of the kernel.
    #[track_caller]
    pub fn backward(self, k: &mut KernelBuilder, saved: &Exp<f32>, g: Exp<f32>) -> Exp<f32> {
        let y = self.apply(saved);
        k.vjp(&y, g, saved)
    }
}

impl std::fmt::Display for Activation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Activation {
    type Err = UnknownActivation;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|a| a.name() == s || a.ident() == s)
            .ok_or_else(|| UnknownActivation(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_as_the_cli_spells_them() {
        for a in Activation::ALL {
            assert_eq!(a.to_string().parse::<Activation>(), Ok(a));
            assert_eq!(a.ident().parse::<Activation>(), Ok(a));
            let json = serde_json::to_string(&a).unwrap();
            assert_eq!(json, format!("\"{}\"", a.name()));
            assert_eq!(serde_json::from_str::<Activation>(&json).unwrap(), a);
            let cli = <Activation as clap::ValueEnum>::from_str(a.name(), false);
            assert_eq!(cli, Ok(a));
        }
        assert_eq!(
            serde_json::from_str::<Activation>("\"leaky_relu\"").unwrap(),
            Activation::LeakyRelu
        );
        let err = "swish".parse::<Activation>().unwrap_err();
        assert!(err.to_string().contains("relu, leaky-relu, gelu"), "{err}");
        assert_eq!(Activation::default(), Activation::Relu);
    }

    /// Each activation's derived derivative builds and validates (the values are checked
    /// against the reference's closed forms on the GPU and the interpreter in the workspace's
    /// tests).
    #[test]
    fn every_derived_derivative_builds() {
        for a in Activation::ALL {
            let mut k = KernelBuilder::new("activation_backward", [64, 1, 1]);
            let z = k.storage::<RuntimeArray<f32>, ReadOnly>("z");
            let dy = k.storage::<RuntimeArray<f32>, ReadOnly>("dy");
            let dz = k.storage::<RuntimeArray<f32>, ReadWrite>("dz");
            let i = k.let_("i", global_invocation_id().x());
            k.if_(i.lt(dz.len()), |k| {
                let zi = k.let_("zi", z.at(&i).load());
                let d = a.backward(k, &zi, dy.at(&i).load());
                k.store(&dz.at(&i), d);
            });
            k.build().unwrap_or_else(|e| panic!("{a}: {e}"));
        }
    }
}
