//! Optimizer kernels over the flat parameter buffer: SGD (with momentum and weight decay) and
//! Adam (Kingma & Ba 2015). Hyperparameters come from a uniform, so one pipeline serves every
//! step; Adam's step number `t` and the position in the learning-rate schedule
//! ([`crate::schedule`], `scheduled_lr`) come from the GPU step state ([`super::step`]),
//! because a chunk of steps is recorded into one submission and the host cannot change a
//! uniform between its steps.

use wgsl_dsl::prelude::*;
use wgsl_dsl::runtime::KernelDef;

pub use super::uniforms::ScheduleUniform;
use super::uniforms::{
    AdamParams, AdamParamsFields, ScheduleUniformFields, SgdParams, SgdParamsFields,
};
use crate::schedule::{Decay, LrSchedule};

/// Workgroup size of the optimizer kernels.
pub const OPTIM_WORKGROUP: u32 = 64;

/// Workgroups covering `n` invocations of `size`, as a 2D grid when `n` needs more than
/// 65535 workgroups along `x` (WebGPU's `maxComputeWorkgroupsPerDimension`).
pub fn grid_2d(n: usize, size: u32) -> [u32; 3] {
    let groups = n.div_ceil(size as usize).max(1);
    let x = groups.min(65535);
    [x as u32, groups.div_ceil(x) as u32, 1]
}

/// The bindings of `sgd_update`.
#[derive(Debug, Bindings)]
pub struct SgdUpdateBindings {
    /// [`SgdParams`].
    #[uniform]
    pub hp: Place<SgdParams, ReadOnly>,
    /// The step state; `state[0]` = steps taken (the learning-rate schedule's position).
    pub state: Buffer<u32, ReadOnly>,
    /// `[len]`.
    pub grads: Buffer<f32, ReadOnly>,
    /// `[len]`, updated in place.
    pub params: Buffer<f32, ReadWrite>,
    /// `[len]`, updated in place.
    pub velocity: Buffer<f32, ReadWrite>,
}

/// Kernel `sgd_update`, PyTorch's `torch.optim.SGD` (dampening 0, no Nesterov):
/// `g = grad + weight_decay * p; v = momentum * v + g; p -= lr_t * v`, with `lr_t` the
/// scheduled learning rate after `state[0]` steps (`scheduled_lr`). Bindings:
/// [`SgdUpdateBindings`]. Problem size: `len`, on a [`grid_2d`].
#[derive(Clone, Copy, Debug, Default)]
pub struct SgdUpdate;

impl KernelDef for SgdUpdate {
    type Args<'a> = SgdUpdateArgs<'a>;
    type Size = usize;
    fn build(&self) -> KernelBuilder {
        let (mut k, b, i) = begin_update("sgd_update", |b: &SgdUpdateBindings| b.hp.len().load());
        let hp = &b.hp;
        let lr = scheduled_lr(
            &mut k,
            hp.lr().load(),
            &ScheduleFields::load(hp.schedule()),
            b.state.at(0u32).load(),
        );
        let p = k.let_("p", b.params.at(&i).load());
        let (v, p) = sgd_step(
            &mut k,
            hp,
            lr,
            p,
            b.grads.at(&i).load(),
            b.velocity.at(&i).load(),
        );
        k.store(&b.velocity.at(&i), v);
        k.store(&b.params.at(&i), p);
        k
    }
    fn workgroups(&self, len: usize) -> [u32; 3] {
        grid_2d(len, OPTIM_WORKGROUP)
    }
}

/// A learning-rate schedule's fields ([`ScheduleUniform`], nested in [`SgdParams`] and
/// [`AdamParams`]), loaded.
#[derive(Debug)]
pub(crate) struct ScheduleFields {
    kind: Exp<u32>,
    warmup_steps: Exp<u32>,
    decay_steps: Exp<u32>,
    decay_factor: Exp<f32>,
}

impl ScheduleFields {
    /// The fields of `schedule`, the member of a uniform.
    pub(crate) fn load(schedule: Place<ScheduleUniform, ReadOnly>) -> ScheduleFields {
        ScheduleFields {
            kind: schedule.kind().load(),
            warmup_steps: schedule.warmup_steps().load(),
            decay_steps: schedule.decay_steps().load(),
            decay_factor: schedule.decay_factor().load(),
        }
    }
}

/// `schedule` of [`SgdParams`] and [`AdamParams`]: no decay.
pub const SCHEDULE_CONSTANT: u32 = 0;
/// `schedule`: cosine decay over `decay_steps` to `decay_factor`.
pub const SCHEDULE_COSINE: u32 = 1;
/// `schedule`: multiply by `decay_factor` every `decay_steps`.
pub const SCHEDULE_STEP: u32 = 2;

/// The learning rate of the step after `taken` steps: `lr` times the factor of
/// [`crate::schedule`] (linear warm-up over `warmup_steps`, then by `kind`: 1, a cosine over
/// `decay_steps` to `decay_factor`, or `decay_factor^floor(u / decay_steps)`), in `f32`. With
/// no warm-up and no decay it is `lr * 1 * 1`, i.e. `lr` exactly. Both decays are evaluated and
/// one is selected (a uniform choice; `pow` of the unselected one may be undefined, WGSL spec
/// §17.5.43, and is discarded).
pub(crate) fn scheduled_lr(
    k: &mut KernelBuilder,
    lr: Exp<f32>,
    fields: &ScheduleFields,
    taken: Exp<u32>,
) -> Exp<f32> {
    let s = k.let_("steps_taken", taken);
    let w = k.let_("warmup_steps", fields.warmup_steps.clone());
    let warm = k.let_(
        "warmup_factor",
        s.lt(&w).select((&s + 1u32).to_f32() / w.to_f32(), 1.0f32),
    );
    let u = k.let_("decay_step", max(s.clone(), w.clone()) - &w);
    let d = k.let_("decay_steps", max(fields.decay_steps.clone(), 1u32));
    let f = k.let_("decay_factor", fields.decay_factor.clone());
    let x = min(u.clone(), d.clone()).to_f32() / d.to_f32();
    let cosine = &f + (1.0f32 - &f) * (0.5f32 * (1.0f32 + cos(std::f32::consts::PI * x)));
    let step = pow(f.clone(), (u / d).to_f32());
    let kind = k.let_("schedule", fields.kind.clone());
    let decay = kind
        .eq(SCHEDULE_COSINE)
        .select(cosine, kind.eq(SCHEDULE_STEP).select(step, 1.0f32));
    let decay = k.let_("decay", decay);
    k.let_("lr", lr * warm * decay)
}

/// One step of `torch.optim.SGD` (dampening 0, no Nesterov) for one parameter `p` of gradient
/// `grad` and velocity `velocity`: `g = grad + weight_decay * p; v = momentum * v + g`, giving
/// the new velocity and `p - lr * v`. The update of `sgd_update` and of the fused step's
/// `grad_update`, written once (`p` is used twice: pass a `let`).
pub(crate) fn sgd_step(
    k: &mut KernelBuilder,
    hp: &Place<SgdParams, ReadOnly>,
    lr: Exp<f32>,
    p: Exp<f32>,
    grad: Exp<f32>,
    velocity: Exp<f32>,
) -> (Exp<f32>, Exp<f32>) {
    let g = k.let_("g", fma(hp.weight_decay().load(), p.clone(), grad));
    let v = k.let_("v", fma(hp.momentum().load(), velocity, g));
    (v.clone(), p - lr * v)
}

/// Adam's bias corrections `c1 = 1 - beta1^t`, `c2 = 1 - beta2^t` for step `t` (from 1), as
/// `-expm1(t ln beta)` from the uniform's `log_beta1`, `log_beta2`: full precision where
/// `1 - beta^t` is small. Shared by `adam_update` and the fused step.
pub(crate) fn bias_corrections(
    k: &mut KernelBuilder,
    hp: &Place<AdamParams, ReadOnly>,
    t: &Exp<f32>,
) -> (Exp<f32>, Exp<f32>) {
    let c1 = -expm1(k, "t_log_beta1", t * hp.log_beta1().load());
    let c1 = k.let_("bias_correction1", c1);
    let c2 = -expm1(k, "t_log_beta2", t * hp.log_beta2().load());
    let c2 = k.let_("bias_correction2", c2);
    (c1, c2)
}

/// One step of Adam (Kingma & Ba 2015, Algorithm 1) for one parameter `p` of gradient `grad`
/// and moments `(m, v)`, with the scheduled rate and bias corrections `(lr, c1, c2)`
/// (`c = 1 - beta^t`): `m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2`, giving the new moments
/// and `p - lr (m / c1) / (sqrt(v / c2) + eps)`. The update of `adam_update` and of the fused
/// step's `grad_update`, written once.
pub(crate) fn adam_step(
    k: &mut KernelBuilder,
    hp: &Place<AdamParams, ReadOnly>,
    (lr, c1, c2): (Exp<f32>, Exp<f32>, Exp<f32>),
    p: Exp<f32>,
    grad: Exp<f32>,
    (m, v): (Exp<f32>, Exp<f32>),
) -> (Exp<f32>, Exp<f32>, Exp<f32>) {
    let g = k.let_("g", grad);
    let b1 = k.let_("beta1", hp.beta1().load());
    let b2 = k.let_("beta2", hp.beta2().load());
    let m_new = k.let_("m_new", &b1 * m + (1.0f32 - &b1) * &g);
    let v_new = k.let_("v_new", &b2 * v + (1.0f32 - &b2) * &g * &g);
    let p_new = p - lr * (m_new.clone() / c1) / (sqrt(v_new.clone() / c2) + hp.eps().load());
    (m_new, v_new, p_new)
}

/// The start of an optimizer kernel `name`: its bindings `B`, and the flat index `i` of the
/// parameter this invocation updates, returning when `i` is not below `len` of the bindings.
fn begin_update<B: Bindings>(
    name: &str,
    len: impl FnOnce(&B) -> Exp<u32>,
) -> (KernelBuilder, B, Exp<u32>) {
    let mut k = KernelBuilder::new(name, [OPTIM_WORKGROUP, 1, 1]);
    let b: B = k.bindings();
    let i = k.let_("i", flat_index(OPTIM_WORKGROUP));
    k.if_(i.ge(len(&b)), |k| k.return_());
    (k, b, i)
}

/// The flat invocation index for a [`grid_2d`] dispatch of workgroups of `size`.
fn flat_index(size: u32) -> Exp<u32> {
    let g = global_invocation_id();
    g.x() + g.y() * num_workgroups().x() * size
}

/// `e^x - 1` without cancellation for small `|x|`: a Taylor polynomial below 0.1 (error below
/// `|x|^7 / 5040`, i.e. relative `1e-10`), `exp(x) - 1` above.
pub(crate) fn expm1(k: &mut KernelBuilder, name: &str, x: Exp<f32>) -> Exp<f32> {
    let x = k.let_(name, x);
    // x (1 + x/2 (1 + x/3 (1 + x/4 (1 + x/5 (1 + x/6)))))
    let mut poly: Exp<f32> = lit(1.0f32);
    for n in (2..=6).rev() {
        poly = 1.0f32 + &x / n as f32 * poly;
    }
    let series = &x * poly;
    abs(x.clone()).lt(0.1f32).select(series, exp(x) - 1.0f32)
}

/// The bindings of `adam_update`.
#[derive(Debug, Bindings)]
pub struct AdamUpdateBindings {
    /// [`AdamParams`].
    #[uniform]
    pub hp: Place<AdamParams, ReadOnly>,
    /// The step state; `state[0]` = steps taken.
    pub state: Buffer<u32, ReadOnly>,
    /// `[len]`.
    pub grads: Buffer<f32, ReadOnly>,
    /// `[len]`, updated in place.
    pub params: Buffer<f32, ReadWrite>,
    /// First moments `[len]`, updated in place.
    pub m: Buffer<f32, ReadWrite>,
    /// Second moments `[len]`, updated in place.
    pub v: Buffer<f32, ReadWrite>,
}

/// Kernel `adam_update`, Algorithm 1 of Kingma & Ba 2015 with `t = state[0] + 1`:
/// `m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2; p -= lr_t (m / c1) / (sqrt(v / c2) + eps)`
/// with `lr_t` the scheduled learning rate after `state[0]` steps (`scheduled_lr`),
/// with the bias corrections `c = 1 - beta^t` computed as `-expm1(t ln beta)` (from the
/// uniform's `log_beta1`, `log_beta2`) so that they keep full precision when `1 - beta^t` is
/// small. Bindings: [`AdamUpdateBindings`]. Problem size: `len`, on a [`grid_2d`]. Written
/// with the builder: `expm1`'s polynomial is generated by Rust code, twice.
#[derive(Clone, Copy, Debug, Default)]
pub struct AdamUpdate;

impl KernelDef for AdamUpdate {
    type Args<'a> = AdamUpdateArgs<'a>;
    type Size = usize;
    fn build(&self) -> KernelBuilder {
        let (mut k, b, i) = begin_update("adam_update", |b: &AdamUpdateBindings| b.hp.len().load());
        let (hp, m, v) = (&b.hp, &b.m, &b.v);
        let t_taken = k.let_("t_taken", b.state.at(0u32).load());
        let t = k.let_("t", (&t_taken + 1u32).to_f32());
        let (c1, c2) = bias_corrections(&mut k, hp, &t);
        let lr = scheduled_lr(
            &mut k,
            hp.lr().load(),
            &ScheduleFields::load(hp.schedule()),
            t_taken,
        );
        let (m_new, v_new, p) = adam_step(
            &mut k,
            hp,
            (lr, c1, c2),
            b.params.at(&i).load(),
            b.grads.at(&i).load(),
            (m.at(&i).load(), v.at(&i).load()),
        );
        k.store(&m.at(&i), m_new);
        k.store(&v.at(&i), v_new);
        k.store(&b.params.at(&i), p);
        k
    }
    fn workgroups(&self, len: usize) -> [u32; 3] {
        grid_2d(len, OPTIM_WORKGROUP)
    }
}

/// The [`AdamParams`] for the given hyperparameters and parameter count (the logarithms of
/// the betas are computed in `f64`).
pub fn adam_params(lr: f32, beta1: f32, beta2: f32, eps: f32, len: usize) -> AdamParams {
    AdamParams {
        lr,
        beta1,
        beta2,
        eps,
        len: len as u32,
        log_beta1: f64::from(beta1).ln() as f32,
        log_beta2: f64::from(beta2).ln() as f32,
        ..AdamParams::default()
    }
}

impl ScheduleUniform {
    /// The fields for `schedule`.
    pub fn of(schedule: &LrSchedule) -> ScheduleUniform {
        let n = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
        let (kind, decay_steps, decay_factor) = match schedule.decay {
            Decay::Constant => (SCHEDULE_CONSTANT, 0, 0.0),
            Decay::Cosine {
                steps,
                final_factor,
            } => (SCHEDULE_COSINE, n(steps), final_factor),
            Decay::Step { every, gamma } => (SCHEDULE_STEP, n(every), gamma),
        };
        ScheduleUniform {
            kind,
            warmup_steps: n(schedule.warmup_steps),
            decay_steps,
            decay_factor,
        }
    }
}

impl ScheduleUniform {
    /// The schedule these fields hold (the inverse of [`ScheduleUniform::of`]; an unknown
    /// `kind` is constant, as the kernels treat it).
    pub fn schedule(&self) -> LrSchedule {
        let decay = match self.kind {
            SCHEDULE_COSINE => Decay::Cosine {
                steps: u64::from(self.decay_steps),
                final_factor: self.decay_factor,
            },
            SCHEDULE_STEP => Decay::Step {
                every: u64::from(self.decay_steps),
                gamma: self.decay_factor,
            },
            _ => Decay::Constant,
        };
        LrSchedule {
            warmup_steps: u64::from(self.warmup_steps),
            decay,
        }
    }
}
