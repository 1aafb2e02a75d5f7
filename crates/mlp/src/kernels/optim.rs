//! Optimizer kernels over the flat parameter buffer: SGD (with momentum and weight decay) and
//! Adam (Kingma & Ba 2015). Hyperparameters come from a uniform, so one pipeline serves every
//! step; Adam's step number `t` comes from the GPU step state ([`super::step`]), because a
//! chunk of steps is recorded into one submission and the host cannot change a uniform
//! between its steps.

use rand_chacha::ChaCha8Rng;
use wgsl_dsl::prelude::*;

use super::uniforms::{AdamParams, AdamParamsFields, SgdParams, SgdParamsFields};
use super::verify::*;
use crate::reference;

/// Workgroup size of the optimizer kernels.
pub const OPTIM_WORKGROUP: u32 = 64;

/// Workgroups covering `n` invocations of `size`, as a 2D grid when `n` needs more than
/// 65535 workgroups along `x` (WebGPU's `maxComputeWorkgroupsPerDimension`).
pub fn grid_2d(n: usize, size: u32) -> [u32; 3] {
    let groups = n.div_ceil(size as usize).max(1);
    let x = groups.min(65535);
    [x as u32, groups.div_ceil(x) as u32, 1]
}

/// The flat invocation index for a [`grid_2d`] dispatch of workgroups of `size`.
fn flat_index(size: u32) -> Exp<u32> {
    let g = global_invocation_id();
    g.x() + g.y() * num_workgroups().x() * size
}

/// Kernel `sgd_update`, PyTorch's `torch.optim.SGD` (dampening 0, no Nesterov):
/// `g = grad + weight_decay * p; v = momentum * v + g; p -= lr * v`.
/// Bindings: `hp` ([`SgdParams`]), `grads [len]`, `params [len]` and `velocity [len]` (both
/// updated in place). Grid: [`grid_2d`]`(len, 64)`.
pub fn sgd_update() -> KernelBuilder {
    let mut k = KernelBuilder::new("sgd_update", [OPTIM_WORKGROUP, 1, 1]);
    let hp = k.uniform::<SgdParams>("hp");
    let grads = k.storage::<RuntimeArray<f32>, ReadOnly>("grads");
    let params = k.storage::<RuntimeArray<f32>, ReadWrite>("params");
    let velocity = k.storage::<RuntimeArray<f32>, ReadWrite>("velocity");
    let i = k.let_("i", flat_index(OPTIM_WORKGROUP));
    k.if_(i.ge(hp.len().load()), |k| k.return_());
    let p = k.let_("p", params.at(&i).load());
    let g = k.let_(
        "g",
        fma(hp.weight_decay().load(), p.clone(), grads.at(&i).load()),
    );
    let v = k.let_("v", fma(hp.momentum().load(), velocity.at(&i).load(), g));
    k.store(&velocity.at(&i), v.clone());
    k.store(&params.at(&i), p - hp.lr().load() * v);
    k
}

/// `e^x - 1` without cancellation for small `|x|`: a Taylor polynomial below 0.1 (error below
/// `|x|^7 / 5040`, i.e. relative `1e-10`), `exp(x) - 1` above.
fn expm1(k: &mut KernelBuilder, name: &str, x: Exp<f32>) -> Exp<f32> {
    let x = k.let_(name, x);
    // x (1 + x/2 (1 + x/3 (1 + x/4 (1 + x/5 (1 + x/6)))))
    let mut poly: Exp<f32> = lit(1.0f32);
    for n in (2..=6).rev() {
        poly = 1.0f32 + &x / n as f32 * poly;
    }
    let series = &x * poly;
    abs(x.clone()).lt(0.1f32).select(series, exp(x) - 1.0f32)
}

/// Kernel `adam_update`, Algorithm 1 of Kingma & Ba 2015 with `t = state[0] + 1`:
/// `m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2; p -= lr (m / c1) / (sqrt(v / c2) + eps)`,
/// with the bias corrections `c = 1 - beta^t` computed as `-expm1(t ln beta)` (from the
/// uniform's `log_beta1`, `log_beta2`) so that they keep full precision when `1 - beta^t` is
/// small. Bindings: `hp` ([`AdamParams`]), `state` (the step state; `state[0]` = steps taken),
/// `grads [len]`, and `params`, `m`, `v` (each `[len]`, updated in place).
/// Grid: [`grid_2d`]`(len, 64)`.
pub fn adam_update() -> KernelBuilder {
    let mut k = KernelBuilder::new("adam_update", [OPTIM_WORKGROUP, 1, 1]);
    let hp = k.uniform::<AdamParams>("hp");
    let state = k.storage::<RuntimeArray<u32>, ReadOnly>("state");
    let grads = k.storage::<RuntimeArray<f32>, ReadOnly>("grads");
    let params = k.storage::<RuntimeArray<f32>, ReadWrite>("params");
    let m = k.storage::<RuntimeArray<f32>, ReadWrite>("m");
    let v = k.storage::<RuntimeArray<f32>, ReadWrite>("v");
    let i = k.let_("i", flat_index(OPTIM_WORKGROUP));
    k.if_(i.ge(hp.len().load()), |k| k.return_());
    let t = k.let_("t", (state.at(0u32).load() + 1u32).to_f32());
    let c1 = -expm1(&mut k, "t_log_beta1", &t * hp.log_beta1().load());
    let c1 = k.let_("bias_correction1", c1);
    let c2 = -expm1(&mut k, "t_log_beta2", &t * hp.log_beta2().load());
    let c2 = k.let_("bias_correction2", c2);
    let g = k.let_("g", grads.at(&i).load());
    let b1 = k.let_("beta1", hp.beta1().load());
    let b2 = k.let_("beta2", hp.beta2().load());
    let m_new = k.let_("m_new", &b1 * m.at(&i).load() + (1.0f32 - &b1) * &g);
    let v_new = k.let_("v_new", &b2 * v.at(&i).load() + (1.0f32 - &b2) * &g * &g);
    k.store(&m.at(&i), m_new.clone());
    k.store(&v.at(&i), v_new.clone());
    let m_hat = m_new / c1;
    let v_hat = v_new / c2;
    k.store(
        &params.at(&i),
        params.at(&i).load() - hp.lr().load() * m_hat / (sqrt(v_hat) + hp.eps().load()),
    );
    k
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
        _pad0: 0,
    }
}

/// Verified op for [`sgd_update`].
#[derive(Clone, Copy, Debug)]
pub struct Sgd;
/// Verified op for [`adam_update`].
#[derive(Clone, Copy, Debug)]
pub struct Adam;

fn optim_len(s: &CaseSizes) -> usize {
    s.inputs * s.outputs + s.outputs
}

impl VerifiedOp for Sgd {
    fn name(&self) -> &'static str {
        "sgd_update"
    }
    fn build(&self) -> KernelBuilder {
        sgd_update()
    }
    fn case(&self, rng: &mut ChaCha8Rng, s: &CaseSizes) -> Case {
        let n = optim_len(s);
        Case {
            args: vec![
                CaseArg::Uniform(UniformValue::Sgd(SgdParams {
                    lr: 0.05,
                    momentum: 0.9,
                    weight_decay: 1e-3,
                    len: n as u32,
                })),
                CaseArg::F32(uniform_f32(rng, n, -1.0, 1.0), Role::Input),
                CaseArg::F32(uniform_f32(rng, n, -1.0, 1.0), Role::InOut),
                CaseArg::F32(uniform_f32(rng, n, -0.1, 0.1), Role::InOut),
            ],
            workgroups: grid_2d(n, OPTIM_WORKGROUP),
        }
    }
    fn spec(&self, case: &Case) -> Vec<Values> {
        let hp: SgdParams = case.uniform(0);
        let (mut p, mut v) = (case.f64s(2), case.f64s(3));
        reference::sgd_step(
            &mut p,
            &case.f64s(1),
            &mut v,
            hp.lr.into(),
            hp.momentum.into(),
            hp.weight_decay.into(),
        );
        vec![Values::F32(p), Values::F32(v)]
    }
}

impl VerifiedOp for Adam {
    fn name(&self) -> &'static str {
        "adam_update"
    }
    fn build(&self) -> KernelBuilder {
        adam_update()
    }
    fn case(&self, rng: &mut ChaCha8Rng, s: &CaseSizes) -> Case {
        let n = optim_len(s);
        // Steps taken so far: 4, so this is step t = 5.
        Case {
            args: vec![
                CaseArg::Uniform(UniformValue::Adam(adam_params(0.01, 0.9, 0.999, 1e-8, n))),
                CaseArg::U32(vec![4, 0], Role::Input),
                CaseArg::F32(uniform_f32(rng, n, -1.0, 1.0), Role::Input),
                CaseArg::F32(uniform_f32(rng, n, -1.0, 1.0), Role::InOut),
                CaseArg::F32(uniform_f32(rng, n, -0.1, 0.1), Role::InOut),
                CaseArg::F32(uniform_f32(rng, n, 0.0, 0.01), Role::InOut),
            ],
            workgroups: grid_2d(n, OPTIM_WORKGROUP),
        }
    }
    fn spec(&self, case: &Case) -> Vec<Values> {
        let hp: AdamParams = case.uniform(0);
        let t = u64::from(case.u32s(1)[0]) + 1;
        let (mut p, mut m, mut v) = (case.f64s(3), case.f64s(4), case.f64s(5));
        reference::adam_step(
            &mut p,
            &case.f64s(2),
            &mut m,
            &mut v,
            t,
            hp.lr.into(),
            hp.beta1.into(),
            hp.beta2.into(),
            hp.eps.into(),
        );
        vec![Values::F32(p), Values::F32(m), Values::F32(v)]
    }
}
