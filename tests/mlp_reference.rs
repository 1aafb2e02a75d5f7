//! The `f64` reference's gradients against central finite differences of its own loss.

use mlp::config::MlpConfig;
use mlp::params::Params;
use mlp::reference::RefModel;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn check_gradients(config: &MlpConfig, batch: usize, seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let model = RefModel::from_params(&Params::init(config, seed), config.activation);
    let x: Vec<f64> = (0..batch * config.inputs)
        .map(|_| rng.random_range(-1.0..1.0))
        .collect();
    let labels: Vec<u32> = (0..batch)
        .map(|_| rng.random_range(0..config.classes as u32))
        .collect();
    let (loss, grads) = model.loss_and_grads(&x, &labels, batch);
    assert!((loss - model.loss(&x, &labels, batch)).abs() < 1e-12);
    let analytic = grads.flatten();
    let flat = model.flatten();
    assert_eq!(analytic.len(), flat.len());
    let h = 1e-6;
    let mut probe = model.clone();
    let mut worst = 0.0f64;
    for i in 0..flat.len() {
        let mut p = flat.clone();
        p[i] = flat[i] + h;
        probe.set_flat(&p);
        let up = probe.loss(&x, &labels, batch);
        p[i] = flat[i] - h;
        probe.set_flat(&p);
        let down = probe.loss(&x, &labels, batch);
        let numeric = (up - down) / (2.0 * h);
        let err = (numeric - analytic[i]).abs() / analytic[i].abs().max(1.0);
        worst = worst.max(err);
        assert!(
            err < 1e-7,
            "parameter {i}: finite difference {numeric}, backprop {}",
            analytic[i]
        );
    }
    // Not vacuous: the gradient is not all zeros.
    assert!(analytic.iter().any(|g| g.abs() > 1e-3));
    eprintln!("worst relative error {worst:e}");
}

#[test]
fn gradients_match_finite_differences_one_hidden_layer() {
    let config = MlpConfig {
        inputs: 7,
        hidden: vec![5],
        classes: 3,
        ..MlpConfig::default()
    };
    check_gradients(&config, 9, 1);
}

#[test]
fn gradients_match_finite_differences_deeper() {
    let config = MlpConfig {
        inputs: 6,
        hidden: vec![5, 4, 3],
        classes: 4,
        ..MlpConfig::default()
    };
    check_gradients(&config, 7, 2);
}

#[test]
fn gradients_match_finite_differences_no_hidden_layer() {
    let config = MlpConfig {
        inputs: 5,
        hidden: vec![],
        classes: 3,
        ..MlpConfig::default()
    };
    check_gradients(&config, 4, 3);
}

/// Every activation's backpropagation (its hand-written derivative) against central
/// differences of the loss, through two hidden layers.
#[test]
fn gradients_match_finite_differences_for_every_activation() {
    for (i, activation) in mlp::activation::Activation::ALL.into_iter().enumerate() {
        let config = MlpConfig {
            inputs: 6,
            hidden: vec![5, 4],
            classes: 3,
            activation,
        };
        check_gradients(&config, 5, 10 + i as u64);
    }
}
