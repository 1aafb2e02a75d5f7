//! A new model trained on the GPU against the `f64` reference (`mlp_verified::training::Run`)
//! on random data: shared by `mlp_model.rs` and `mlp_fused_step.rs`.

use std::ops::Range;

use mlp::config::MlpConfig;
use mlp::model::{GpuMlp, OptimizerConfig};
use mlp::params::Params;
use mlp::schedule::LrSchedule;
use mlp_verified::training::{Data, Run};
use wgsl_dsl::runtime::{Gpu, Recorder};

/// Examples of the random data, in batches of [`BATCH`]: 3 steps a pass, the last of 9.
pub const EXAMPLES: usize = 41;
/// Examples a step.
pub const BATCH: usize = 16;

/// A model of `config` made on `gpu` with `optimizer` (then `prepare`d) and the reference
/// train `chunks` of steps under `schedule` over [`EXAMPLES`] random examples
/// (`Data::random` of `data_seed`) from the parameters `Params::init` of `params_seed`,
/// compared after each chunk ([`Run::matches_reference`], which passes each chunk's
/// recording to `check_recording`).
#[allow(clippy::too_many_arguments)]
pub fn gpu_matches_reference(
    gpu: &Gpu,
    config: &MlpConfig,
    [data_seed, params_seed]: [u64; 2],
    optimizer: OptimizerConfig,
    schedule: LrSchedule,
    chunks: &[Range<usize>],
    prepare: impl FnOnce(&Gpu, &mut GpuMlp),
    check_recording: impl Fn(&Recorder<'_>, usize),
) {
    let data = Data::random(config, EXAMPLES, data_seed);
    let params = Params::init(config, params_seed);
    let mut model = GpuMlp::new(gpu, config, &params, &optimizer, None, BATCH).expect("model");
    prepare(gpu, &mut model);
    let run = Run {
        config,
        params: &params,
        optimizer,
        schedule,
        data: &data,
        batch: BATCH,
    };
    run.matches_reference(gpu, &mut model, chunks, check_recording);
}
