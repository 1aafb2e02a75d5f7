//! The whole training step with every hidden activation (`mlp::activation`, derivatives derived
//! by the expression AD in the kernels) against the `f64` reference step (closed-form
//! derivatives written by hand), at batches 1, 7, 65 and 129, on the unfused step (two hidden
//! layers: `linear_{act}[_keep_z]`, `linear_backward_input_{act}`) and the fused one (one
//! hidden layer: `softmax_head_{act}_*`, whose loss gradient is derived too). Three steps per
//! run (the last one partial), SGD with momentum and weight decay: losses, parameters and
//! velocities within `training::TOL`. Small widths keep the time on lavapipe short.

use mlp::activation::Activation;
use mlp::config::MlpConfig;
use mlp::model::GpuMlp;
use mlp::params::Params;
use mlp::schedule::LrSchedule;
use mlp_verified::training::{Data, Run, SGD};
use wgsl_dsl::runtime::Gpu;
use wgsl_gemm::tiled::Target;

const BATCHES: [usize; 4] = [1, 7, 65, 129];

fn gpu() -> Gpu {
    Gpu::new().expect("a GPU adapter (install mesa-vulkan-drivers for lavapipe)")
}

/// Three steps of `batch` (the last of 3 examples) with `activation`, fused or not.
fn steps_match_reference(gpu: &Gpu, activation: Activation, batch: usize, fused: bool) {
    let config = MlpConfig {
        inputs: 23,
        hidden: if fused { vec![9] } else { vec![9, 7] },
        classes: 5,
        activation,
    };
    let n = 2 * batch + 3;
    let d = Data::random(&config, n, 7 + batch as u64);
    let params = Params::init(&config, 3);
    let mut model = GpuMlp::new(gpu, &config, &params, &SGD, None, batch).expect("model");
    let target = fused.then_some(Target::Cpu);
    assert_eq!(model.set_fused(gpu, target).expect("kernels"), fused);
    let run = Run {
        config: &config,
        params: &params,
        optimizer: SGD,
        schedule: LrSchedule::CONSTANT,
        data: &d,
        batch,
    };
    // One chunk of three steps (not a list of steps).
    #[allow(clippy::single_range_in_vec_init)]
    let one_chunk = [0..3];
    run.matches_reference(gpu, &mut model, &one_chunk, |rec, steps| {
        // Unfused, three layers: gather, 3 forwards, softmax, its derived backward (the loss
        // gradient), mean loss, 3 x (weight, bias), 2 input gradients, the optimizer, advance.
        let per_step = if fused { 3 } else { 1 + 3 + 3 + 3 * 2 + 2 + 2 };
        assert_eq!(rec.dispatches(), 1 + per_step * steps, "{activation}");
    });
}

#[test]
fn unfused_steps_with_every_activation_equal_the_reference() {
    let gpu = gpu();
    for activation in Activation::ALL {
        for batch in BATCHES {
            steps_match_reference(&gpu, activation, batch, false);
        }
    }
}

#[test]
fn fused_steps_with_every_activation_equal_the_reference() {
    let gpu = gpu();
    for activation in Activation::ALL {
        for batch in BATCHES {
            steps_match_reference(&gpu, activation, batch, true);
        }
    }
}
