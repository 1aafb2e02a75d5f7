//! Learning-rate schedules: the learning rate of each optimizer step as a factor of the
//! optimizer's base learning rate, with an optional linear warm-up.
//!
//! The learning rate of the step that follows `s` steps already taken (`s` from 0) is
//! `lr * factor(s)`, where, with `W` warm-up steps and `u = s - W` (steps since the warm-up):
//! - warm-up (`s < W`): `factor = (s + 1) / W`, rising linearly to 1 at step `W - 1` (Goyal et
//!   al. 2017, "Accurate, Large Minibatch SGD", §2.2 "gradual warmup");
//! - then, by [`Decay`]:
//!   - constant ([`Decay::Constant`]), `1`;
//!   - a cosine ([`Decay::Cosine`]) over `D` steps to `f`, `f + (1 - f) (1 + cos(pi min(u, D) / D)) / 2`
//!     (Loshchilov & Hutter 2017, "SGDR", eq. 5 without restarts; PyTorch's
//!     `CosineAnnealingLR` with `eta_min = f lr`), `f` after the `D` steps;
//!   - a step decay ([`Decay::Step`]) every `k` steps by `gamma`, `gamma^floor(u / k)` (PyTorch's
//!     `StepLR`).
//!
//! The GPU computes the factor in `f32` in the optimizer's kernel from the step count `t` it keeps
//! (`crate::kernels::optim::scheduled_lr`), so a chunk of steps recorded into one submission
//! follows the schedule with no extra dispatch; [`LrSchedule::factor`] is the `f64` reference.
//! A [`ScheduleSpec`] states a schedule in epochs (as `mnist train --schedule` does); training
//! resolves it into steps once ([`ScheduleSpec::resolve`]) and the checkpoint keeps the
//! resolved [`LrSchedule`], so a resumed run continues the same schedule.

use crate::error::MlpError;

/// How the learning rate decays after the warm-up.
///
/// Serialized with its kind as a tag: `{"kind": "constant"}`,
/// `{"kind": "cosine", "steps": 4690, "final_factor": 0.0}`,
/// `{"kind": "step", "every": 938, "gamma": 0.5}`.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Decay {
    /// The base learning rate throughout.
    Constant,
    /// Cosine annealing from the base learning rate to `final_factor` times it over `steps`
    /// steps, then `final_factor` times it.
    Cosine {
        /// Steps of the decay (at least 1).
        steps: u64,
        /// The factor at the end, in `[0, 1]`.
        final_factor: f32,
    },
    /// Multiply the learning rate by `gamma` every `every` steps.
    Step {
        /// Steps between decays (at least 1).
        every: u64,
        /// The factor of each decay, in `(0, 1]`.
        gamma: f32,
    },
}

/// A learning-rate schedule in optimizer steps (see the [module docs](self) for the formula).
///
/// Serialized (checkpoint metadata `schedule`) as
/// `{"warmup_steps": 0, "decay": {"kind": "cosine", "steps": 4690, "final_factor": 0.0}}`.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LrSchedule {
    /// Steps of linear warm-up (0 for none).
    pub warmup_steps: u64,
    /// The decay after the warm-up.
    pub decay: Decay,
}

impl Default for LrSchedule {
    fn default() -> Self {
        LrSchedule::CONSTANT
    }
}

impl LrSchedule {
    /// The base learning rate at every step (what checkpoints without a schedule hold).
    pub const CONSTANT: LrSchedule = LrSchedule {
        warmup_steps: 0,
        decay: Decay::Constant,
    };

    /// The factor of the base learning rate for the step after `taken` steps, in `f64` (the
    /// reference of the GPU's `f32` computation).
    pub fn factor(&self, taken: u64) -> f64 {
        let w = self.warmup_steps;
        if taken < w {
            return (taken + 1) as f64 / w as f64;
        }
        let u = taken - w;
        match self.decay {
            Decay::Constant => 1.0,
            Decay::Cosine {
                steps,
                final_factor,
            } => {
                let f = f64::from(final_factor);
                let x = u.min(steps) as f64 / steps.max(1) as f64;
                f + (1.0 - f) * 0.5 * (1.0 + (std::f64::consts::PI * x).cos())
            }
            Decay::Step { every, gamma } => f64::from(gamma).powf((u / every.max(1)) as f64),
        }
    }

    /// This schedule for a run that now ends after `end` steps from the start (a resumed run):
    /// a cosine whose decay would end before `end` is stretched to end there, as if the run
    /// had been planned to `end` steps (the warm-up and the final factor unchanged), so no step
    /// of the run is left at the final factor (0 by default: no training at all); other
    /// schedules, and a cosine that ends at or after `end`, are returned unchanged.
    pub fn extended_to(&self, end: u64) -> LrSchedule {
        match self.decay {
            Decay::Cosine {
                steps,
                final_factor,
            } if self.warmup_steps.saturating_add(steps) < end => LrSchedule {
                warmup_steps: self.warmup_steps,
                decay: Decay::Cosine {
                    steps: end - self.warmup_steps,
                    final_factor,
                },
            },
            _ => *self,
        }
    }

    /// Checks the ranges of the module docs; every count must also fit in a `u32` (the GPU's
    /// step counter).
    ///
    /// # Errors
    /// [`MlpError::InvalidArgument`] naming the value.
    pub fn validate(&self) -> Result<(), MlpError> {
        let fits = |n: u64| u32::try_from(n).is_ok();
        let ok = fits(self.warmup_steps)
            && match self.decay {
                Decay::Constant => true,
                Decay::Cosine {
                    steps,
                    final_factor,
                } => steps >= 1 && fits(steps) && (0.0..=1.0).contains(&final_factor),
                Decay::Step { every, gamma } => {
                    every >= 1 && fits(every) && gamma > 0.0 && gamma <= 1.0
                }
            };
        if ok {
            Ok(())
        } else {
            Err(MlpError::InvalidArgument(format!(
                "invalid learning-rate schedule {self:?}"
            )))
        }
    }
}

impl std::fmt::Display for LrSchedule {
    /// `constant`, `linear warm-up over 469 steps, then cosine decay over 4221 steps to 0`,
    /// `cosine decay over 10 steps to 0.1 times the base rate`, `step decay: times 0.1 every
    /// 1876 steps`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.warmup_steps > 0 {
            write!(f, "linear warm-up over {} steps, then ", self.warmup_steps)?;
        }
        match self.decay {
            Decay::Constant => write!(f, "constant"),
            Decay::Cosine {
                steps,
                final_factor: 0.0,
            } => write!(f, "cosine decay over {steps} steps to 0"),
            Decay::Cosine {
                steps,
                final_factor,
            } => write!(
                f,
                "cosine decay over {steps} steps to {final_factor} times the base rate"
            ),
            Decay::Step { every, gamma } => {
                write!(f, "step decay: times {gamma} every {every} steps")
            }
        }
    }
}

/// How the decay of a [`ScheduleSpec`] is stated, in epochs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DecaySpec {
    /// [`Decay::Constant`].
    Constant,
    /// [`Decay::Cosine`] over the rest of the run after the warm-up, to `final_factor`.
    Cosine {
        /// The factor at the end of the run, in `[0, 1]`.
        final_factor: f32,
    },
    /// [`Decay::Step`] every `every_epochs` epochs (fractions allowed) by `gamma`.
    Step {
        /// Epochs between decays (> 0).
        every_epochs: f64,
        /// The factor of each decay, in `(0, 1]`.
        gamma: f32,
    },
}

/// A schedule stated in epochs, for a run of a known length: see [`ScheduleSpec::resolve`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScheduleSpec {
    /// Epochs of linear warm-up (fractions allowed; 0 for none).
    pub warmup_epochs: f64,
    /// The decay after the warm-up.
    pub decay: DecaySpec,
}

impl ScheduleSpec {
    /// The base learning rate throughout.
    pub const CONSTANT: ScheduleSpec = ScheduleSpec {
        warmup_epochs: 0.0,
        decay: DecaySpec::Constant,
    };

    /// The schedule in steps for a run of `epochs` epochs of `steps_per_epoch` steps: epoch
    /// counts are rounded to the nearest step; a cosine decays over the steps left after the
    /// warm-up (at least 1), a step decay every `every_epochs` epochs (at least 1 step).
    ///
    /// # Errors
    /// [`MlpError::InvalidArgument`] for values out of range (negative or non-finite epochs, a
    /// warm-up longer than the run, factors outside their ranges) or counts beyond `u32`.
    pub fn resolve(&self, steps_per_epoch: usize, epochs: usize) -> Result<LrSchedule, MlpError> {
        let invalid = |what: &str| {
            MlpError::InvalidArgument(format!("learning-rate schedule {self:?}: {what}"))
        };
        let steps = |e: f64| (e * steps_per_epoch as f64).round() as u64;
        let total = (steps_per_epoch as u64).saturating_mul(epochs as u64);
        if !(self.warmup_epochs.is_finite() && self.warmup_epochs >= 0.0) {
            return Err(invalid(
                "the warm-up must be a finite number of epochs >= 0",
            ));
        }
        let warmup_steps = steps(self.warmup_epochs);
        if warmup_steps > total {
            return Err(invalid("the warm-up is longer than the run"));
        }
        let decay = match self.decay {
            DecaySpec::Constant => Decay::Constant,
            DecaySpec::Cosine { final_factor } => Decay::Cosine {
                steps: (total - warmup_steps).max(1),
                final_factor,
            },
            DecaySpec::Step {
                every_epochs,
                gamma,
            } => {
                if !(every_epochs.is_finite() && every_epochs > 0.0) {
                    return Err(invalid("the step decay's period must be > 0 epochs"));
                }
                Decay::Step {
                    every: steps(every_epochs).max(1),
                    gamma,
                }
            }
        };
        let schedule = LrSchedule {
            warmup_steps,
            decay,
        };
        schedule.validate()?;
        Ok(schedule)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn constant_is_one_everywhere() {
        for s in [0, 1, 17, 1 << 31] {
            assert_eq!(LrSchedule::CONSTANT.factor(s), 1.0);
        }
    }

    #[test]
    fn warmup_rises_linearly_then_the_decay_starts() {
        let s = LrSchedule {
            warmup_steps: 4,
            decay: Decay::Cosine {
                steps: 10,
                final_factor: 0.0,
            },
        };
        let f: Vec<f64> = (0..4).map(|t| s.factor(t)).collect();
        assert_eq!(f, [0.25, 0.5, 0.75, 1.0]);
        // Step 4 is the cosine's first: factor 1; half way (u = 5): 1/2; the end and after: 0.
        assert!(close(s.factor(4), 1.0));
        assert!(close(s.factor(4 + 5), 0.5));
        assert!(close(s.factor(4 + 10), 0.0));
        assert!(close(s.factor(4 + 1000), 0.0));
        // A quarter of the way: (1 + cos(pi / 4)) / 2.
        let s = LrSchedule {
            warmup_steps: 0,
            decay: Decay::Cosine {
                steps: 8,
                final_factor: 0.1,
            },
        };
        let q = 0.5 * (1.0 + std::f64::consts::FRAC_1_SQRT_2);
        let f = f64::from(0.1f32);
        assert!(close(s.factor(2), f + (1.0 - f) * q));
        assert!(close(s.factor(8), f64::from(0.1f32)));
    }

    #[test]
    fn step_decay_multiplies_by_gamma_every_period() {
        let s = LrSchedule {
            warmup_steps: 2,
            decay: Decay::Step {
                every: 3,
                gamma: 0.5,
            },
        };
        let f: Vec<f64> = (0..11).map(|t| s.factor(t)).collect();
        assert_eq!(
            f,
            [0.5, 1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25]
        );
    }

    #[test]
    fn specs_resolve_to_steps_of_the_run() {
        let spec = ScheduleSpec {
            warmup_epochs: 0.5,
            decay: DecaySpec::Cosine { final_factor: 0.0 },
        };
        let s = spec.resolve(938, 5).unwrap();
        assert_eq!(s.warmup_steps, 469);
        assert_eq!(
            s.decay,
            Decay::Cosine {
                steps: 5 * 938 - 469,
                final_factor: 0.0
            }
        );
        let step = ScheduleSpec {
            warmup_epochs: 0.0,
            decay: DecaySpec::Step {
                every_epochs: 2.0,
                gamma: 0.1,
            },
        };
        assert_eq!(
            step.resolve(10, 7).unwrap(),
            LrSchedule {
                warmup_steps: 0,
                decay: Decay::Step {
                    every: 20,
                    gamma: 0.1
                }
            }
        );
        assert_eq!(
            ScheduleSpec::CONSTANT.resolve(938, 5).unwrap(),
            LrSchedule::CONSTANT
        );
    }

    #[test]
    fn schedules_describe_themselves() {
        let s = ScheduleSpec {
            warmup_epochs: 0.5,
            decay: DecaySpec::Cosine { final_factor: 0.0 },
        };
        assert_eq!(
            s.resolve(938, 5).unwrap().to_string(),
            "linear warm-up over 469 steps, then cosine decay over 4221 steps to 0"
        );
        assert_eq!(LrSchedule::CONSTANT.to_string(), "constant");
        let step = LrSchedule {
            warmup_steps: 0,
            decay: Decay::Step {
                every: 1876,
                gamma: 0.1,
            },
        };
        assert_eq!(step.to_string(), "step decay: times 0.1 every 1876 steps");
        let cosine = LrSchedule {
            warmup_steps: 0,
            decay: Decay::Cosine {
                steps: 10,
                final_factor: 0.25,
            },
        };
        assert_eq!(
            cosine.to_string(),
            "cosine decay over 10 steps to 0.25 times the base rate"
        );
    }

    /// A resumed cosine that would end before the run does is stretched to the run's end: the
    /// factor of every step of the run is above the final one, the same as a cosine planned
    /// to that end from the start; one that ends later, and other decays, are unchanged.
    #[test]
    fn a_cosine_extends_to_the_end_of_a_resumed_run() {
        let planned = |steps| LrSchedule {
            warmup_steps: 5,
            decay: Decay::Cosine {
                steps,
                final_factor: 0.0,
            },
        };
        let ended = planned(95);
        assert_eq!(ended.factor(100), 0.0);
        let resumed = ended.extended_to(150);
        assert_eq!(resumed, planned(145));
        for taken in 100..150 {
            let f = resumed.factor(taken);
            assert!(f > 0.0 && f < 1.0, "step {taken}: factor {f}");
        }
        assert_eq!(resumed.factor(150), 0.0);
        // 50 steps left of 145: (1 + cos(pi * 95 / 145)) / 2.
        let want = 0.5 * (1.0 + (std::f64::consts::PI * 95.0 / 145.0).cos());
        assert!(close(resumed.factor(100), want));
        assert_eq!(planned(200).extended_to(150), planned(200));
        assert_eq!(planned(145).extended_to(150), planned(145));
        let step = LrSchedule {
            warmup_steps: 0,
            decay: Decay::Step {
                every: 3,
                gamma: 0.5,
            },
        };
        assert_eq!(step.extended_to(1000), step);
        assert_eq!(LrSchedule::CONSTANT.extended_to(1000), LrSchedule::CONSTANT);
    }

    #[test]
    fn out_of_range_values_are_refused() {
        let bad = [
            ScheduleSpec {
                warmup_epochs: 6.0,
                decay: DecaySpec::Constant,
            },
            ScheduleSpec {
                warmup_epochs: f64::NAN,
                decay: DecaySpec::Constant,
            },
            ScheduleSpec {
                warmup_epochs: 0.0,
                decay: DecaySpec::Cosine { final_factor: 1.5 },
            },
            ScheduleSpec {
                warmup_epochs: 0.0,
                decay: DecaySpec::Step {
                    every_epochs: 0.0,
                    gamma: 0.5,
                },
            },
            ScheduleSpec {
                warmup_epochs: 0.0,
                decay: DecaySpec::Step {
                    every_epochs: 1.0,
                    gamma: 0.0,
                },
            },
        ];
        for spec in bad {
            let err = spec.resolve(100, 5).unwrap_err();
            assert!(matches!(err, MlpError::InvalidArgument(_)), "{spec:?}");
        }
        let huge = LrSchedule {
            warmup_steps: 1 << 40,
            decay: Decay::Constant,
        };
        assert!(huge.validate().is_err());
    }
}
