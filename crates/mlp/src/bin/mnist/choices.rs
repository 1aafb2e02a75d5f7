//! The value enums of the command line ([`Optimizer`], [`Schedule`]): below the defaults
//! (`defaults` names a `Schedule`), the parser (`cli`) and the plan, which all use them.

use clap::ValueEnum;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Optimizer {
    /// Stochastic gradient descent with (heavy-ball) momentum.
    Sgd,
    /// Adam (Kingma & Ba 2015), betas 0.9 and 0.999, eps 1e-8.
    Adam,
}

impl Optimizer {
    /// As typed on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Optimizer::Sgd => "sgd",
            Optimizer::Adam => "adam",
        }
    }
}

/// `mnist predict --center`: whether pictures are centred as MNIST's digits were made
/// ([`mlp::data::picture::center`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Center {
    /// Centre every picture except those already centred as MNIST's are (28x28, the ink 19 or
    /// 20 pixels on its longer side, its centre of mass within 0.6 pixels of the centre): the
    /// MNIST files themselves are read as they are.
    Auto,
    /// Centre every picture.
    Always,
    /// Read pictures as they are; they must be of the model's input size.
    Never,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Schedule {
    /// The same learning rate at every step.
    Constant,
    /// Cosine decay to 0 over the run's steps after the warm-up (Loshchilov & Hutter 2017).
    Cosine,
    /// Multiply the learning rate by --step-gamma every --step-epochs epochs.
    Step,
}

impl Schedule {
    /// As typed on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Schedule::Constant => "constant",
            Schedule::Cosine => "cosine",
            Schedule::Step => "step",
        }
    }
}
