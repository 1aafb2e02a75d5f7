//! The fused training step (one hidden layer: `forward_gather`, `softmax_head`,
//! `grad_update`) against the `f64` reference step: several steps of SGD with
//! momentum and weight decay, and of Adam, over two submissions, with a partial last batch, in
//! the CPU's kernel configuration and in the GPU's (small tiles, split-K), on lavapipe in CI.

use mlp::config::MlpConfig;
use mlp::model::{GpuMlp, OptimizerConfig};
use mlp::params::Params;
use mlp::schedule::LrSchedule;
use mlp_verified::training::{ADAM, COSINE, SGD, STEP};
use wgsl_dsl::runtime::Gpu;
use wgsl_gemm::tiled::Target;

#[path = "common/reference_run.rs"]
mod reference_run;

use reference_run::gpu_matches_reference;

fn fused_steps_match_reference(opt: OptimizerConfig, target: Target, schedule: LrSchedule) {
    let gpu = Gpu::new().expect("a GPU adapter (install mesa-vulkan-drivers for lavapipe)");
    // Widths that are multiples of no tile; 3 steps per pass over 41 examples, the last of 9.
    // 197 inputs: the GPU configuration splits them (4 steps of 64, one per part).
    let config = MlpConfig {
        inputs: 197,
        hidden: vec![19],
        classes: 7,
        ..MlpConfig::default()
    };
    let prepare = |gpu: &Gpu, model: &mut GpuMlp| {
        assert!(model.set_fused(gpu, Some(target)).expect("fused kernels"));
        let splits = model.fused_config().expect("fused").splits;
        if target == Target::Cpu {
            assert_eq!(splits, 1);
        } else {
            assert!(splits > 1, "K split");
        }
    };
    let chunks = [0..2, 2..3, 0..3];
    gpu_matches_reference(
        &gpu,
        &config,
        [11, 4],
        opt,
        schedule,
        &chunks,
        prepare,
        |rec, steps| {
            // begin_chunk, then 3 dispatches per step.
            assert_eq!(rec.dispatches(), 1 + 3 * steps);
        },
    );
}

const GPU: Target = Target::gpu(512);

#[test]
fn fused_sgd_steps_equal_the_reference_with_cpu_tiles() {
    fused_steps_match_reference(SGD, Target::Cpu, LrSchedule::CONSTANT);
}

#[test]
fn fused_sgd_steps_equal_the_reference_with_gpu_tiles_and_split_k() {
    fused_steps_match_reference(SGD, GPU, LrSchedule::CONSTANT);
}

#[test]
fn fused_adam_steps_equal_the_reference_with_cpu_tiles() {
    fused_steps_match_reference(ADAM, Target::Cpu, LrSchedule::CONSTANT);
}

#[test]
fn fused_adam_steps_equal_the_reference_with_gpu_tiles_and_split_k() {
    fused_steps_match_reference(ADAM, GPU, LrSchedule::CONSTANT);
}

#[test]
fn models_with_two_hidden_layers_run_the_unfused_step() {
    let gpu = Gpu::new().expect("a GPU adapter");
    let config = MlpConfig {
        inputs: 5,
        hidden: vec![4, 3],
        classes: 2,
        ..MlpConfig::default()
    };
    let params = Params::init(&config, 0);
    let mut model = GpuMlp::new(&gpu, &config, &params, &SGD, None, 4).expect("model");
    assert!(model.fused_config().is_none());
    assert!(!model.set_fused(&gpu, Some(GPU)).expect("no error"));
}

#[test]
fn fused_sgd_steps_follow_the_schedule_as_the_reference() {
    fused_steps_match_reference(SGD, GPU, COSINE);
}

#[test]
fn fused_adam_steps_follow_the_schedule_as_the_reference() {
    fused_steps_match_reference(ADAM, Target::Cpu, STEP);
}

#[test]
fn precision_f16_is_refused_without_tensor_cores_and_the_model_keeps_training_in_f32() {
    // The fused step forced on lavapipe, which has no cooperative matrices: set_precision(F16)
    // fails with MlpError::Precision and leaves the f32 step as it was. Without the fused
    // step it fails before compiling anything. (On a GPU with cooperative matrices the f16
    // forward is checked by tests/interp_mlp.rs on the interpreter and by `mnist train
    // --precision f16` on the H200, BENCHMARKS.md.)
    use mlp::config::Precision;
    use mlp::error::MlpError;
    // f16 training opens the device with cooperative matrices; f32 leaves them off (wgpu
    // marks them experimental).
    assert!(GpuMlp::gpu_options(Precision::F16).cooperative_matrix);
    assert!(!GpuMlp::gpu_options(Precision::F32).cooperative_matrix);
    let gpu = Gpu::new().expect("a GPU adapter");
    let config = MlpConfig {
        inputs: 61,
        hidden: vec![19],
        classes: 7,
        ..MlpConfig::default()
    };
    let params = Params::init(&config, 0);
    let mut model = GpuMlp::new(&gpu, &config, &params, &SGD, None, 16).expect("model");
    if gpu.is_software() {
        assert!(model.fused_config().is_none());
        match model.set_precision(&gpu, Precision::F16) {
            Err(MlpError::Precision { precision, why }) => {
                assert_eq!(precision, Precision::F16);
                assert!(why.contains("fused training step"), "{why}");
            }
            other => panic!("expected a precision error, got {other:?}"),
        }
    }
    assert!(model.set_fused(&gpu, Some(GPU)).expect("fused kernels"));
    let splits = model.fused_config().expect("fused").splits;
    let has_coop = gpu
        .features()
        .contains(wgsl_dsl::runtime::wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX);
    match model.set_precision(&gpu, Precision::F16) {
        Err(e @ MlpError::Precision { .. }) => {
            assert!(!has_coop, "{e}");
            let message = e.to_string();
            assert!(
                message.starts_with("--precision f16 cannot run here: "),
                "{message}"
            );
            // The cause is named: a range of subgroup sizes, or a device opened without
            // cooperative matrices (what `mnist train --precision f16` did on the H200 before
            // it opened the GPU with GpuMlp::gpu_options), not a kernel that fails to compile.
            let cause = if gpu.single_subgroup_size().is_some() {
                "opened without them"
            } else {
                "single subgroup size"
            };
            assert!(message.contains(cause), "{message}");
            assert_eq!(model.precision(), Precision::F32);
            assert_eq!(model.fused_config().expect("still fused").splits, splits);
        }
        Ok(()) => assert_eq!(model.precision(), Precision::F16),
        Err(e) => panic!("expected a precision error, got {e}"),
    }
}
