//! `mnist export-web` in a real browser: a small model is trained (`mnist train
//! --limit-train`), its page exported, served on loopback and opened in headless Chromium
//! (Debian's `/usr/bin/chromium`, WebGPU on SwiftShader) through playwright-core
//! (`tests/web/browser.cjs`). 100 MNIST test images, saved as PNG (90 opaque gray, 10 as white
//! strokes on transparency), and 10 more moved off-centre or drawn larger in a larger picture
//! (which the page and `mnist predict` centre as MNIST's digits were made), are chosen in the
//! page's file input; its predictions must equal `mnist predict`'s and its probabilities those
//! `mnist predict` computes (the same picture rule and the model on lavapipe) within 1e-5.
//! Ticking "Opaque images" must classify them again (the opaque ones differently), unticking it
//! as before. Then digits drawn on the canvas with the mouse (pointer events), a 7 among them,
//! must show a prediction, `mnist predict` must give their saved inputs the same, and the 7
//! must read as 7; at 900 x 700 and 1400 x 800 the probabilities must stand beside the canvas,
//! inside the window. The page without `navigator.gpu` must say
//! that the browser has no WebGPU, and the page given a `model.json` that names a kernel
//! `kernels.js` lacks must say which. One case per hidden activation tried: `relu`, `gelu`,
//! `tanh`, and `leaky-relu` with two hidden layers; `model.json` must name each layer's kernel
//! (`linear_direct_{activation}`, `linear_direct_identity` for the logits).
//!
//! Needs node, playwright-core (`.ci/run` installs it into `.web-test/`, or set `NODE_PATH`)
//! and chromium (`MNIST_WEB_CHROMIUM` for another path). Without them the test is skipped
//! with a message, unless `CI` is set: then it fails. `MNIST_WEB_SCREENSHOT=path.png` keeps
//! the page's screenshot (the README's is made so).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use image::{GrayImage, Luma, Rgba, RgbaImage};
use mlp::checkpoint::Checkpoint;
use mlp::data::picture;
use mlp::data::{Mnist, Split};
use mlp::kernels::linear::LinearDirect;
use mlp::model::GpuMlp;
use wgsl_dsl::runtime::Gpu;

/// Test images as they are in the MNIST files.
const IMAGES: usize = 100;
/// Test images moved or drawn larger, after them.
const MOVED: usize = 10;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn mnist(args: &[&std::ffi::OsStr]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_mnist"))
        .args(args)
        .output()
        .expect("run mnist");
    assert!(
        out.status.success(),
        "mnist {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// What the browser side needs, or why it is missing.
fn browser() -> Result<(PathBuf, std::ffi::OsString), String> {
    let chromium = std::env::var_os("MNIST_WEB_CHROMIUM")
        .map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from);
    if !chromium.is_file() {
        return Err(format!(
            "no chromium at {} (apt-get install chromium)",
            chromium.display()
        ));
    }
    let node_path = std::env::var_os("NODE_PATH")
        .unwrap_or_else(|| root().join(".web-test/node_modules").into_os_string());
    let probe = Command::new("node")
        .args(["-e", "require('playwright-core')"])
        .env("NODE_PATH", &node_path)
        .output();
    match probe {
        Err(e) => Err(format!("no node ({e})")),
        Ok(o) if !o.status.success() => Err(format!(
            "node cannot load playwright-core from NODE_PATH={} (npm install --prefix .web-test \
             playwright-core)",
            node_path.to_string_lossy()
        )),
        Ok(_) => Ok((chromium, node_path)),
    }
}

#[derive(Debug, serde::Deserialize)]
struct FileResult {
    name: String,
    reading: Option<String>,
    prediction: Option<usize>,
    probabilities: Option<Vec<f64>>,
    error: Option<String>,
}

#[derive(Debug, serde::Deserialize)]
struct CanvasResult {
    prediction: usize,
    probabilities: Vec<f64>,
    shown: String,
    /// The model's input, `data:image/png;base64,...`.
    png: String,
}

#[derive(Debug, serde::Deserialize)]
struct Bounds {
    x: f64,
    y: f64,
    width: f64,
    height: f64,
}

#[derive(Debug, serde::Deserialize)]
struct Layout {
    width: f64,
    height: f64,
    canvas: Bounds,
    bars: Bounds,
}

#[derive(Debug, serde::Deserialize)]
struct PageRun {
    status: String,
    files: Vec<FileResult>,
    inverted: Vec<FileResult>,
    restored: Vec<FileResult>,
    drawings: std::collections::BTreeMap<String, CanvasResult>,
    layout: Vec<Layout>,
    no_webgpu: String,
    missing_kernel: String,
}

/// `mnist predict`'s lines: `PATH: CLASS (P%)  [0:p0 1:p1 ...]`.
fn parse_predict(stdout: &str) -> Vec<(String, usize, Vec<f64>)> {
    stdout
        .lines()
        .map(|line| {
            let (path, rest) = line.split_once(": ").unwrap_or_else(|| panic!("{line}"));
            let (class, probs) = rest.split_once(" (").expect("class");
            let probs = probs.split_once('[').expect("[").1.trim_end_matches(']');
            let probs = probs
                .split_whitespace()
                .map(|kv| kv.split_once(':').expect("k:v").1.parse().expect("p"))
                .collect();
            let name = Path::new(path).file_name().expect("name").to_string_lossy();
            (name.into_owned(), class.parse().expect("class"), probs)
        })
        .collect()
}

/// The browser runs one at a time: on a machine of few cores, two SwiftShader pages at once
/// could outlast the browser script's 60 s waits.
static ONE_BROWSER: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn the_exported_page_classifies_as_mnist_predict_does_in_chromium() {
    check_page_against_predict("relu", "24");
}

#[test]
fn a_gelu_models_page_classifies_as_mnist_predict_does_in_chromium() {
    check_page_against_predict("gelu", "24");
}

#[test]
fn a_tanh_models_page_classifies_as_mnist_predict_does_in_chromium() {
    check_page_against_predict("tanh", "24");
}

/// Two hidden layers, and an activation whose kernel name (`linear_direct_leaky_relu`) is not
/// its CLI name.
#[test]
fn a_two_layer_leaky_relu_models_page_classifies_as_mnist_predict_does_in_chromium() {
    check_page_against_predict("leaky-relu", "24,13");
}

/// Train a small model of `activation` (`mnist train --activation`) and hidden widths `hidden`
/// (`--hidden`), export its page and check it in Chromium against `mnist predict` (the module
/// docs say what is checked). Skipped with a message where the browser side is missing, unless
/// `CI` is set.
fn check_page_against_predict(activation: &str, hidden: &str) {
    let (chromium, node_path) = match browser() {
        Ok(b) => b,
        Err(why) if std::env::var_os("CI").is_none() => {
            eprintln!("SKIPPED the browser test of `mnist export-web`: {why}");
            return;
        }
        Err(why) => panic!("CI is set, and the browser test cannot run: {why}"),
    };
    let _one = ONE_BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().expect("temporary directory");
    let work = dir.path();
    let data = root().join("data/mnist");
    let model = work.join("m.safetensors");
    mnist(&[
        "train".as_ref(),
        "--data".as_ref(),
        data.as_os_str(),
        "--limit-train".as_ref(),
        "2000".as_ref(),
        "--limit-test".as_ref(),
        "100".as_ref(),
        "--epochs".as_ref(),
        "1".as_ref(),
        "--hidden".as_ref(),
        hidden.as_ref(),
        "--activation".as_ref(),
        activation.as_ref(),
        "--seed".as_ref(),
        "5".as_ref(),
        "--save".as_ref(),
        model.as_os_str(),
    ]);
    let page = work.join("page");
    let out = mnist(&[
        "export-web".as_ref(),
        "--model".as_ref(),
        model.as_os_str(),
        "--out".as_ref(),
        page.as_os_str(),
    ]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("http.server"));

    // 100 test images as PNG: 90 opaque gray, 10 white strokes on transparency.
    let test = Mnist::load_split(&data, Split::Test).expect("test set");
    let side = test.cols as u32;
    let mut images = Vec::new();
    for i in 0..IMAGES {
        let px: Vec<u8> = test.images[i * 784..(i + 1) * 784]
            .iter()
            .map(|&v| (v * 255.0).round() as u8)
            .collect();
        let path = work.join(format!("digit{i:03}.png"));
        if i % 10 == 9 {
            RgbaImage::from_fn(side, side, |x, y| {
                Rgba([255, 255, 255, px[(y * side + x) as usize]])
            })
            .save(&path)
            .expect("png");
        } else {
            GrayImage::from_fn(side, side, |x, y| Luma([px[(y * side + x) as usize]]))
                .save(&path)
                .expect("png");
        }
        images.push(path);
    }
    // Moved off-centre (opaque), and drawn 3 x larger off-centre in 100 x 90 (strokes).
    for k in 0..MOVED {
        let i = 20 + k;
        let px = &test.images[i * 784..(i + 1) * 784];
        let ink = |x: i64, y: i64| {
            if (0..28).contains(&x) && (0..28).contains(&y) {
                (px[(y * 28 + x) as usize] * 255.0).round() as u8
            } else {
                0
            }
        };
        let path = work.join(format!("moved{k}.png"));
        if k < MOVED / 2 {
            let (dx, dy) = ([3, -3, 4, -2, 2][k], [-3, 2, 1, 4, -4][k]);
            GrayImage::from_fn(side, side, |x, y| {
                Luma([ink(i64::from(x) - dx, i64::from(y) - dy)])
            })
            .save(&path)
            .expect("png");
        } else {
            RgbaImage::from_fn(100, 90, |x, y| {
                let (x, y) = (i64::from(x) - 12, i64::from(y) - 2);
                Rgba([255, 255, 255, ink(x.div_euclid(3), y.div_euclid(3))])
            })
            .save(&path)
            .expect("png");
        }
        images.push(path);
    }
    let count = IMAGES + MOVED;

    // `mnist predict`: its printed classes and probabilities (3 decimals), and the same
    // computation in full precision: the picture rule, then the model on the GPU.
    let mut args: Vec<&std::ffi::OsStr> = vec!["predict".as_ref(), "--model".as_ref()];
    args.push(model.as_os_str());
    args.extend(images.iter().map(|p| p.as_os_str()));
    let printed = parse_predict(&String::from_utf8_lossy(&mnist(&args).stdout));
    assert_eq!(printed.len(), count);
    let checkpoint = Checkpoint::load(&model).expect("checkpoint");
    assert_eq!(checkpoint.config.activation.name(), activation);

    // model.json names each layer's kernel, exported beside it: the hidden layers' activation,
    // then none on the logits.
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(page.join("model.json")).expect("model.json"))
            .expect("model.json parses");
    let layers = json["layers"].as_array().expect("model.json's layers");
    assert_eq!(layers.len(), checkpoint.config.hidden.len() + 1);
    for (l, layer) in layers.iter().enumerate() {
        let act = (l < checkpoint.config.hidden.len()).then_some(checkpoint.config.activation);
        let kernel = LinearDirect(act).name();
        assert_eq!(layer["kernel"], kernel, "layer {l}");
        assert_eq!(layer["activation"], act.map_or("identity", |a| a.name()));
        assert!(
            page.join(format!("{kernel}.wgsl")).is_file(),
            "{kernel}.wgsl"
        );
    }
    let mut pixels = Vec::new();
    for (i, p) in images.iter().enumerate() {
        let img = image::open(p).expect("decode");
        let values = picture::pixels(&img, false).values;
        let centred = picture::is_centered(&values, 28);
        assert_eq!(centred, i < IMAGES, "{}: centred as MNIST's", p.display());
        if centred {
            pixels.extend(values);
        } else {
            let (w, h) = (img.width() as usize, img.height() as usize);
            pixels.extend(picture::center(&values, w, h, 28));
        }
    }
    let gpu = Gpu::new().expect("a GPU adapter (lavapipe)");
    let mut mlp = GpuMlp::new(
        &gpu,
        &checkpoint.config,
        &checkpoint.params,
        &checkpoint.optimizer,
        None,
        count,
    )
    .expect("model");
    let probs = mlp.predict_proba(&gpu, &pixels).expect("predict");

    // The browser.
    let shot = work.join("page.png");
    let mut cmd = Command::new("node");
    cmd.arg(root().join("crates/mlp/tests/web/browser.cjs"))
        .arg(&page)
        .arg(&shot)
        .args(&images)
        .env("NODE_PATH", &node_path)
        .env("MNIST_WEB_CHROMIUM", &chromium);
    let out = cmd.output().expect("run node");
    assert!(
        out.status.success(),
        "the browser run failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run: PageRun = serde_json::from_slice(&out.stdout).expect("the browser run's JSON");
    assert!(run.status.contains("on WebGPU"), "{}", run.status);
    assert_eq!(run.files.len(), count);
    let mut worst = 0.0f64;
    for (i, ((f, (name, class, rounded)), want)) in run
        .files
        .iter()
        .zip(&printed)
        .zip(probs.chunks(10))
        .enumerate()
    {
        assert_eq!(&f.name, name);
        assert!(f.error.is_none(), "{}: {:?}", f.name, f.error);
        let drawing = if i < IMAGES {
            i % 10 == 9
        } else {
            i >= IMAGES + MOVED / 2
        };
        let reading = if drawing { "drawing" } else { "opaque" };
        assert_eq!(f.reading.as_deref(), Some(reading), "{}", f.name);
        assert_eq!(f.prediction, Some(*class), "{}: the prediction", f.name);
        let got = f.probabilities.as_ref().expect("probabilities");
        assert_eq!(got.len(), 10);
        for d in 0..10 {
            let diff = (got[d] - f64::from(want[d])).abs();
            worst = worst.max(diff);
            assert!(
                diff <= 1e-5,
                "{} class {d}: page {} vs predict {}",
                f.name,
                got[d],
                want[d]
            );
            assert!(
                (got[d] - rounded[d]).abs() <= 5e-4 + 1e-6,
                "{} class {d}: page {} vs printed {}",
                f.name,
                got[d],
                rounded[d]
            );
        }
    }
    eprintln!("page vs mnist predict: {count} images, largest probability difference {worst:.2e}");

    // "Opaque images" re-reads the files: opaque ones inverted (other inputs), drawings alike
    // (their opacity is the ink either way); unticked, as at first.
    let moved = |a: &FileResult, b: &FileResult| {
        let (a, b) = (
            a.probabilities.as_ref().unwrap(),
            b.probabilities.as_ref().unwrap(),
        );
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max)
    };
    assert_eq!(run.inverted.len(), count);
    assert_eq!(run.restored.len(), count);
    let mut changed = 0;
    for ((f, inv), back) in run.files.iter().zip(&run.inverted).zip(&run.restored) {
        assert_eq!((&f.name, &f.name), (&inv.name, &back.name));
        assert!(
            moved(f, back) <= 1e-6,
            "{}: unticked, not as at first",
            f.name
        );
        if f.reading.as_deref() == Some("drawing") {
            assert!(
                moved(f, inv) <= 1e-6,
                "{}: a drawing read otherwise",
                f.name
            );
        } else if moved(f, inv) > 1e-3 {
            changed += 1;
        }
    }
    assert!(
        changed >= 90,
        "only {changed} opaque images read otherwise with \"Opaque images\""
    );

    // The drawings: a prediction shown, the same as `mnist predict` gives their saved inputs;
    // the 7 reads as 7.
    let mut saved = Vec::new();
    for (name, c) in &run.drawings {
        assert!(c.prediction < 10);
        assert_eq!(c.shown, c.prediction.to_string(), "{name}");
        let sum: f64 = c.probabilities.iter().sum();
        assert!(
            (sum - 1.0).abs() < 1e-4,
            "the drawing's probabilities sum to {sum}"
        );
        let b64 = c
            .png
            .strip_prefix("data:image/png;base64,")
            .expect("a PNG data URL");
        let path = work.join(format!("drawn-{name}.png"));
        std::fs::write(&path, base64_decode(b64)).expect("write the drawing");
        saved.push(path);
    }
    let mut args: Vec<&std::ffi::OsStr> = vec!["predict".as_ref(), "--model".as_ref()];
    args.push(model.as_os_str());
    args.extend(saved.iter().map(|p| p.as_os_str()));
    let printed = parse_predict(&String::from_utf8_lossy(&mnist(&args).stdout));
    for ((name, c), (_, class, rounded)) in run.drawings.iter().zip(&printed) {
        eprintln!("drawn {name}: {} {:?}", c.prediction, c.probabilities);
        assert_eq!(c.prediction, *class, "drawn {name}: page vs mnist predict");
        for (d, (page, printed)) in c.probabilities.iter().zip(rounded).enumerate() {
            assert!(
                (page - printed).abs() <= 5e-4 + 1e-6,
                "drawn {name} class {d}: page {page} vs printed {printed}",
            );
        }
    }
    assert_eq!(
        run.drawings["seven"].prediction, 7,
        "a drawn 7: {:?}",
        run.drawings["seven"]
    );

    // The probabilities beside the canvas, inside the window.
    assert_eq!(run.layout.len(), 2);
    for l in &run.layout {
        let (c, b) = (&l.canvas, &l.bars);
        assert!(
            b.x >= c.x + c.width
                && b.y < c.y + c.height
                && b.y + b.height <= l.height
                && b.x + b.width <= l.width,
            "{} x {}: the probabilities at {b:?}, the canvas at {c:?}",
            l.width,
            l.height
        );
    }
    assert!(run.no_webgpu.contains("no WebGPU"), "{}", run.no_webgpu);
    assert!(
        run.missing_kernel.contains("linear_direct_missing")
            && run.missing_kernel.contains("kernels.js"),
        "{}",
        run.missing_kernel
    );
    if let Some(keep) = std::env::var_os("MNIST_WEB_SCREENSHOT") {
        std::fs::copy(&shot, &keep).expect("keep the screenshot");
        let keep = PathBuf::from(keep);
        for size in ["900x700", "1400x800"] {
            let from = work.join(format!("page-{size}.png"));
            let to = keep.with_file_name(format!(
                "{}-{size}.png",
                keep.file_stem().unwrap_or_default().to_string_lossy()
            ));
            std::fs::copy(from, to).expect("keep the screenshots");
        }
    }
}

/// Standard base64 (RFC 4648, with padding) decoded; panics on anything else (test data).
fn base64_decode(text: &str) -> Vec<u8> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for &ch in text.as_bytes().iter().filter(|&&ch| ch != b'=') {
        let v = ALPHABET.iter().position(|&a| a == ch).expect("base64") as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}
