//! `mnist export-web`: a static page that runs a saved model, of any hidden activation, on
//! WebGPU in a browser. The inference kernels are the model's own (`linear_direct_{activation}`
//! for the hidden layers, e.g. `linear_direct_gelu`, `linear_direct_identity` for the logits,
//! `softmax_cross_entropy`; the tiled `linear_relu` takes Chromium's SwiftShader minutes to
//! compile), exported by `wgsl_dsl::export` with their typed JavaScript bindings and named per
//! layer in `model.json` (documented in `docs/mnist-web.md`), from which the page
//! (`crates/mlp/web/`, built into the binary) takes them; it reads a picture into the
//! 784 inputs by the rule `mnist predict` applies ([`mlp::data::picture`], mirrored in
//! `picture.js`), so the page and `mnist predict` give the same probabilities for the same
//! PNG.

use std::path::{Path, PathBuf};

use clap::Args;
use mlp::checkpoint::{Checkpoint, write_atomic};
use mlp::kernels::linear::DIRECT_WORKGROUP;
use mlp::kernels::linear::LinearDirect;
use mlp::kernels::loss::{SOFTMAX_WORKGROUP, SoftmaxCrossEntropy};
use mlp::params::tensor_offsets;
use wgsl_dsl::Shader;
use wgsl_dsl::runtime::KernelDef;

use crate::error::CliError;
use crate::report::say;

/// The `--help` text after the options of `mnist export-web`.
pub const HELP: &str = "The page needs a browser with WebGPU (it says so when there is none) \
     and any static HTTP server (browsers do not run modules from file:// pages), e.g. \
     `python3 -m http.server --bind 127.0.0.1 -d DIR 8000`, then http://127.0.0.1:8000/. Draw \
     a digit with the mouse, a pen or a finger, or drop pictures of digits (PNG or JPEG): the \
     page reads them as `mnist predict` does, centring each as MNIST's digits were made (its \
     --help gives the rules) and shows the ten class probabilities.";

/// The rows the page classifies in one batch of dispatches.
const MAX_BATCH: usize = 128;

/// The page's own files (`crates/mlp/web/`), written beside the exported kernels.
const TEMPLATE: [(&str, &str); 4] = [
    ("index.html", include_str!("../../../web/index.html")),
    ("app.js", include_str!("../../../web/app.js")),
    ("picture.js", include_str!("../../../web/picture.js")),
    ("style.css", include_str!("../../../web/style.css")),
];

#[derive(Args, Debug)]
#[command(after_help = HELP)]
pub struct ExportWebArgs {
    /// A checkpoint written by `mnist train --save`.
    #[arg(long, value_name = "PATH")]
    pub model: PathBuf,
    /// The directory to write the page into (created if missing; the page's files in it are
    /// replaced, other files are left alone).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// The version of `model.json`'s format: 2 added each layer's `kernel`, the model's
/// `activation` and `softmax_kernel` (version 1 pages ran ReLU models only).
const MODEL_FORMAT_VERSION: u32 = 2;

/// The inference kernels of a model of `config` (the hidden layers' `linear_direct_{activation}`,
/// `linear_direct_identity`, `softmax_cross_entropy`), built for WebGPU's default limits (which
/// every WebGPU device has).
fn inference_kernels(config: &mlp::config::MlpConfig) -> Result<Vec<Shader>, CliError> {
    let build = |k: wgsl_dsl::KernelBuilder| k.build().map_err(mlp::error::MlpError::from);
    let mut kernels = Vec::new();
    if !config.hidden.is_empty() {
        kernels.push(build(LinearDirect(Some(config.activation)).build())?);
    }
    kernels.push(build(LinearDirect(None).build())?);
    kernels.push(build(SoftmaxCrossEntropy.build())?);
    Ok(kernels)
}

/// `model.json`: the model's shape, where each layer's tensors are in `weights.bin`, the
/// kernel that computes each layer, and what the page needs to size the dispatches (the
/// kernels' tiles); `softmax_kernel` names the kernel that turns the logits into
/// probabilities. Its fields are documented in `docs/mnist-web.md`.
fn model_json(
    c: &Checkpoint,
    model: &Path,
    side: usize,
    softmax_kernel: &str,
) -> serde_json::Value {
    let sizes = c.config.layer_sizes();
    let layers: Vec<serde_json::Value> = sizes
        .iter()
        .zip(tensor_offsets(&c.config))
        .enumerate()
        .map(|(l, (&(inputs, outputs), (w, b)))| {
            let activation = (l + 1 < sizes.len()).then_some(c.config.activation);
            serde_json::json!({
                "inputs": inputs,
                "outputs": outputs,
                "weight_offset": w,
                "bias_offset": b,
                "activation": activation.map_or("identity", |a| a.name()),
                "kernel": LinearDirect(activation).name(),
            })
        })
        .collect();
    serde_json::json!({
        "format_version": MODEL_FORMAT_VERSION,
        "checkpoint": model.file_name().map(|n| n.to_string_lossy().into_owned()),
        "epoch": c.epoch,
        "side": side,
        "inputs": c.config.inputs,
        "hidden": c.config.hidden,
        "classes": c.config.classes,
        "activation": c.config.activation.name(),
        "params": c.config.num_params(),
        "weights": "weights.bin",
        "layers": layers,
        "softmax_kernel": softmax_kernel,
        "linear_workgroup": DIRECT_WORKGROUP,
        "softmax_workgroup": SOFTMAX_WORKGROUP,
        "max_batch": MAX_BATCH,
    })
}

/// `mnist export-web --model PATH --out DIR`.
///
/// # Errors
/// [`CliError::Checkpoint`] for a checkpoint that cannot be read; [`CliError::Path`] for a
/// model that does not take square images, or a file that cannot be written;
/// [`CliError::Export`], [`CliError::Model`] if the kernels do not export (never for the
/// model's own kernels).
pub fn run(args: &ExportWebArgs) -> Result<(), CliError> {
    let c = Checkpoint::load(&args.model)?;
    let side = CliError::image_side(&args.model, c.config.inputs)?;
    let shaders = inference_kernels(&c.config)?;
    let softmax_kernel = SoftmaxCrossEntropy.build().name().to_string();
    let refs: Vec<&Shader> = shaders.iter().collect();
    let export = wgsl_dsl::export::export(&refs)?;
    let weights: Vec<u8> = c
        .params
        .flatten()
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let mut model =
        serde_json::to_string_pretty(&model_json(&c, &args.model, side, &softmax_kernel))
            .map_err(|e| CliError::path(&args.model, e))?;
    model.push('\n');

    let out = &args.out;
    std::fs::create_dir_all(out).map_err(|e| CliError::path(out, e))?;
    let mut files: Vec<(&str, &[u8])> = export
        .files()
        .iter()
        .map(|f| (f.name.as_str(), f.contents.as_bytes()))
        .collect();
    files.extend(TEMPLATE.iter().map(|(n, t)| (*n, t.as_bytes())));
    files.push(("model.json", model.as_bytes()));
    files.push(("weights.bin", &weights));
    for (name, bytes) in &files {
        let path = out.join(name);
        write_atomic(&path, bytes).map_err(|e| CliError::path(&path, e))?;
    }
    say(&format!(
        "wrote the page to {} ({} files: index.html, kernels.js and {} kernels, model.json, \
         weights.bin of {} parameters)",
        out.display(),
        files.len(),
        shaders.len(),
        c.config.num_params()
    ));
    say(&format!(
        "open it through any static server, e.g. `python3 -m http.server --bind 127.0.0.1 -d {} \
         8000`, then http://127.0.0.1:8000/",
        out.display()
    ));
    Ok(())
}
