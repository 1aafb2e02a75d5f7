//! The `mnist` binary: every bad argument or file gives one line `error: ...` and a non-zero
//! exit, never a panic; and train -> eval -> predict work on a real subset.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mlp::checkpoint::Checkpoint;
use mlp::config::MlpConfig;
use mlp::data::Mnist;
use mlp::model::{OptimizerConfig, OptimizerState};
use mlp::params::Params;

fn mnist(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mnist"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run the mnist binary")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The run failed with `code` and exactly one line on stderr starting `error: `, containing
/// every one of `needles`. Lavapipe's own `XDG_RUNTIME_DIR` warnings are not ours and ignored.
#[track_caller]
fn fails(out: &Output, code: i32, needles: &[&str]) -> String {
    let err = stderr(out);
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| !l.contains("XDG_RUNTIME_DIR"))
        .filter(|l| l.starts_with("error"))
        .collect();
    assert_eq!(out.status.code(), Some(code), "stderr: {err}");
    assert_eq!(lines.len(), 1, "one error line expected: {err}");
    assert!(!err.contains("panicked"), "{err}");
    for n in needles {
        assert!(lines[0].contains(n), "`{n}` not in `{}`", lines[0]);
    }
    lines[0].to_string()
}

fn repo_data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/mnist")
}

#[test]
fn bad_arguments() {
    fails(&mnist(&[]), 2, &["command is required"]);
    fails(&mnist(&["fly"]), 2, &["fly"]);
    fails(
        &mnist(&["train", "--epochs", "0"]),
        2,
        &["positive integer"],
    );
    fails(&mnist(&["train", "--lr=-1"]), 2, &["--lr", "positive"]);
    fails(&mnist(&["train", "--lr", "nan"]), 2, &["positive"]);
    fails(&mnist(&["train", "--momentum", "1.5"]), 2, &["[0, 1)"]);
    fails(
        &mnist(&["train", "--optimizer", "rmsprop"]),
        2,
        &["rmsprop"],
    );
    fails(&mnist(&["train", "--hidden", "128,0"]), 2, &["positive"]);
    fails(
        &mnist(&["train", "--activation", "swish"]),
        2,
        &["swish", "gelu"],
    );
    fails(&mnist(&["train", "--frobnicate"]), 2, &["--frobnicate"]);
    fails(&mnist(&["eval"]), 2, &["--model"]);
    fails(&mnist(&["predict", "--model", "m"]), 2, &["IMAGE"]);
    let mom = mnist(&["train", "--optimizer", "adam", "--momentum", "0.5"]);
    fails(&mom, 2, &["--momentum applies to SGD only"]);
    let help = mnist(&["predict", "--help"]);
    assert!(help.status.success());
    let help = String::from_utf8_lossy(&help.stdout).into_owned();
    assert!(
        help.contains("--center") && help.contains("centre of mass"),
        "{help}"
    );
    // No rustdoc link syntax in any help (issue 34: `[`LEAKY_SLOPE`]`).
    for sub in ["train", "eval", "predict", "export-web"] {
        let out = mnist(&[sub, "--help"]);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success() && !text.contains("[`"),
            "{sub} --help: {text}"
        );
    }
}

/// Numbers too large for their type are called too large, not "not positive" (issue 34).
#[test]
fn numbers_too_large_say_so() {
    for (args, needle) in [
        (&["train", "--lr", "1e300"][..], "`1e300` is too large"),
        (&["train", "--step-epochs", "1e400"], "`1e400` is too large"),
        (
            &["train", "--warmup-epochs", "1e400"],
            "`1e400` is too large",
        ),
        (
            &["train", "--epochs", "99999999999999999999999"],
            "`99999999999999999999999` is too large",
        ),
    ] {
        let line = fails(&mnist(args), 2, &[needle]);
        assert!(!line.contains("not"), "{line}");
    }
    fails(
        &mnist(&["train", "--lr", "inf"]),
        2,
        &["is not a positive number"],
    );
}

/// The batch size is checked before any training: larger than the training set (from the
/// command line's limit, before the data are read, and from the data), and larger than the
/// device takes for the model, naming the largest it takes (issue 34: `--batch-size 45000`
/// failed mid-start with a binding size; a batch larger than the set was cut silently).
#[test]
fn batch_sizes_are_checked_before_training() {
    fails(
        &mnist(&["train", "--limit-train", "100", "--batch-size", "101"]),
        2,
        &[
            "batch size 101",
            "training set (100 images)",
            "--batch-size 100",
        ],
    );
    fails(
        &mnist(&["train", "--batch-size", "60001", "--limit-test", "10"]),
        2,
        &["batch size 60001", "training set (60000 images)"],
    );
    let gpu = wgsl_dsl::runtime::Gpu::new().expect("a GPU adapter (lavapipe)");
    let config = MlpConfig {
        inputs: 784,
        hidden: vec![8],
        classes: 10,
        ..MlpConfig::default()
    };
    let (largest, _) = mlp::model::GpuMlp::largest_batch(&gpu, &config);
    assert!(largest > 1000, "{largest}");
    if largest < 60_000 {
        let over = (largest + 1).to_string();
        fails(
            &mnist(&[
                "train",
                "--hidden",
                "8",
                "--batch-size",
                &over,
                "--limit-test",
                "10",
            ]),
            2,
            &[
                &format!("batch size {over}"),
                &format!("at most {largest}"),
                "max_storage_buffer_binding_size",
            ],
        );
    }
}

/// A checkpoint trained with the default cosine schedule resumes: the cosine is extended to
/// end with the resumed run (said on stderr), and the resumed epoch changes the model (it
/// does not train at rate 0); `--schedule` with `--resume` is refused with the reason.
/// Also the summary's `1 epoch` (issue 34: `1 epochs`).
#[test]
fn a_cosine_checkpoint_resumes_with_its_schedule_extended() {
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = (
        dir.path().join("a.safetensors"),
        dir.path().join("b.safetensors"),
    );
    let (a, b) = (first.to_str().unwrap(), second.to_str().unwrap());
    let common = [
        "--limit-train",
        "200",
        "--limit-test",
        "50",
        "--epochs",
        "1",
        "--batch-size",
        "50",
    ];
    let mut args = vec![
        "train",
        "--hidden",
        "8",
        "--warmup-epochs",
        "0",
        "--save",
        a,
    ];
    args.extend(common);
    let out = mnist(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("done: 1 epoch (epoch 1) of 200 samples"),
        "{stdout}"
    );
    assert!(
        stderr(&out).contains("cosine decay over 4 steps to 0"),
        "{}",
        stderr(&out)
    );
    let mut args = vec!["train", "--resume", a, "--save", b];
    args.extend(common);
    let out = mnist(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(
            "learning-rate schedule: cosine decay over 8 steps to 0 (the checkpoint's \
                      cosine decay over 4 steps to 0, extended to end with this run)"
        ),
        "{err}"
    );
    let (before, after) = (
        Checkpoint::load(&first).unwrap(),
        Checkpoint::load(&second).unwrap(),
    );
    assert_eq!(after.epoch, 2);
    assert_eq!(after.optimizer_state.step, 8);
    assert_ne!(
        before.params, after.params,
        "the resumed epoch did not change the model"
    );
    let mut args = vec!["train", "--resume", a, "--schedule", "cosine"];
    args.extend(common);
    fails(
        &mnist(&args),
        2,
        &["cannot be given with --resume", "extended"],
    );
}

/// Digits moved off-centre, or drawn 3 x larger off-centre in a 100 x 90 picture, are read
/// as their originals by `mnist predict` (centred as MNIST's digits were made, the default),
/// and not without (`--center never`, where the larger pictures are refused).
#[test]
fn shifted_test_digits_predict_as_the_originals_after_centring() {
    let dir = tempfile::tempdir().unwrap();
    let model = resaved_fixture(dir.path());
    let m = model.to_str().unwrap();
    let test = Mnist::load(&repo_data()).unwrap().test;
    let n = 60;
    let (mut originals, mut moved, mut large) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..n {
        let px = &test.images[i * 784..(i + 1) * 784];
        let ink = |x: i64, y: i64| {
            if (0..28).contains(&x) && (0..28).contains(&y) {
                (px[(y * 28 + x) as usize] * 255.0).round() as u8
            } else {
                0
            }
        };
        let (dx, dy) = ([4, -4, 3, -3][i % 4], [-3, 4, 4, -4][i / 4 % 4]);
        let save = |name: String, img: image::DynamicImage, to: &mut Vec<String>| {
            let path = dir.path().join(name).to_str().unwrap().to_string();
            img.save(&path).unwrap();
            to.push(path);
        };
        let gray = |f: &dyn Fn(i64, i64) -> u8| {
            image::GrayImage::from_fn(28, 28, |x, y| image::Luma([f(i64::from(x), i64::from(y))]))
        };
        save(
            format!("o{i}.png"),
            gray(&|x, y| ink(x, y)).into(),
            &mut originals,
        );
        save(
            format!("m{i}.png"),
            gray(&|x, y| ink(x - dx, y - dy)).into(),
            &mut moved,
        );
        let big = image::GrayImage::from_fn(100, 90, |x, y| {
            let (x, y) = (i64::from(x) - 5, i64::from(y) - 1);
            image::Luma([ink(x.div_euclid(3), y.div_euclid(3))])
        });
        save(format!("l{i}.png"), big.into(), &mut large);
    }
    let classes = |files: &[String], extra: &[&str]| -> Vec<usize> {
        let mut args = vec!["predict", "--model", m];
        args.extend(extra);
        args.extend(files.iter().map(String::as_str));
        let out = mnist(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| prediction(l).split(' ').next().unwrap().parse().unwrap())
            .collect()
    };
    let right = |got: &[usize]| {
        got.iter()
            .zip(&test.labels)
            .filter(|(g, l)| **g as u32 == **l)
            .count()
    };
    let want = classes(&originals, &[]);
    let as_is = classes(&originals, &["--center", "never"]);
    assert_eq!(
        want, as_is,
        "the MNIST digits themselves are read as they are"
    );
    let centred = classes(&moved, &[]);
    let uncentred = classes(&moved, &["--center", "never"]);
    let scaled = classes(&large, &["--center", "always"]);
    let same = |got: &[usize]| got.iter().zip(&want).filter(|(g, w)| g == w).count();
    eprintln!(
        "right of {n}: originals {}, moved {} centred and {} not, larger {}; as the originals: \
         {}, {}, {}",
        right(&want),
        right(&centred),
        right(&uncentred),
        right(&scaled),
        same(&centred),
        same(&uncentred),
        same(&scaled)
    );
    assert!(
        same(&centred) >= n * 9 / 10,
        "moved and centred: {centred:?} vs {want:?}"
    );
    assert!(
        same(&scaled) >= n * 9 / 10,
        "larger and centred: {scaled:?} vs {want:?}"
    );
    assert!(
        right(&centred) >= right(&uncentred) + n / 5,
        "centring gained too little"
    );
    fails(
        &mnist(&["predict", "--model", m, "--center", "never", &large[0]]),
        1,
        &["100x90", "28x28"],
    );
}

/// A negative number after a numeric flag is that flag's value and reaches its range check
/// (issue 26): clap took `-1` for a flag and said "unexpected argument '-1'".
#[test]
fn negative_numbers_reach_the_range_check() {
    let cases: [(&[&str], &str); 15] = [
        (&["train", "--lr", "-1"], "`-1` is not a positive number"),
        (
            &["train", "--lr", "-1e-3"],
            "`-1e-3` is not a positive number",
        ),
        (
            &["train", "--epochs", "-3"],
            "`-3` is not a positive integer",
        ),
        (
            &["train", "--batch-size", "-64"],
            "`-64` is not a positive integer",
        ),
        (
            &["train", "--momentum", "-0.5"],
            "`-0.5` is not a number in [0, 1)",
        ),
        (
            &["train", "--warmup-epochs", "-1"],
            "`-1` is not a number >= 0",
        ),
        (
            &["train", "--step-epochs", "-2"],
            "`-2` is not a positive number",
        ),
        (
            &["train", "--step-gamma", "-0.1"],
            "`-0.1` is not a number in (0, 1]",
        ),
        (
            &["train", "--hidden", "-3"],
            "`-3` is not a positive integer",
        ),
        (
            &["train", "--hidden", "-3,5"],
            "`-3` is not a positive integer",
        ),
        (
            &["train", "--seed", "-1"],
            "`-1` is not an integer from 0 to",
        ),
        (
            &["train", "--limit-train", "-5"],
            "`-5` is not a positive integer",
        ),
        (
            &["train", "--limit-test", "-5"],
            "`-5` is not a positive integer",
        ),
        (
            &["train", "--steps-per-chunk", "-1"],
            "`-1` is not a positive integer",
        ),
        (
            &["eval", "--model", "m", "--limit-test", "-5"],
            "`-5` is not a positive integer",
        ),
    ];
    for (args, needle) in cases {
        let line = fails(&mnist(args), 2, &[needle, args[args.len() - 2]]);
        assert!(!line.contains("unexpected argument"), "{args:?}: {line}");
    }
    // An option where the value should be is said to be one.
    fails(
        &mnist(&["train", "--lr", "--epochs", "3"]),
        2,
        &["a value is missing after --lr: `--epochs` is an option"],
    );
}

/// A usage error inside a subcommand points to that subcommand's help (issue 26); one outside
/// any points to `mnist --help`.
#[test]
fn usage_errors_point_to_the_subcommands_help() {
    for (args, help) in [
        (&["train", "--frobnicate"][..], "(see `mnist train --help`)"),
        (&["train", "--epochs", "0"], "(see `mnist train --help`)"),
        (&["eval"], "(see `mnist eval --help`)"),
        (&["eval", "--model"], "(see `mnist eval --help`)"),
        (&["predict", "--model", "m"], "(see `mnist predict --help`)"),
        (
            &["predict", "--model", "m", "--invert=yes", "a.png"],
            "(see `mnist predict --help`)",
        ),
        (&["fly"], "(see `mnist --help`)"),
        (&["--frobnicate"], "(see `mnist --help`)"),
    ] {
        let line = fails(&mnist(args), 2, &[help]);
        assert_eq!(line.matches("(see `").count(), 1, "{line}");
    }
}

#[test]
fn missing_data_and_unwritable_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let nowhere = dir.path().join("nowhere");
    let nowhere = nowhere.to_str().unwrap();
    fails(
        &mnist(&["train", "--data", nowhere]),
        1,
        &["not a directory"],
    );
    let empty = dir.path().to_str().unwrap();
    fails(
        &mnist(&["train", "--data", empty]),
        1,
        &["no training images file", "train-images-idx3-ubyte.gz"],
    );
    let save = format!("{nowhere}/m.safetensors");
    fails(&mnist(&["train", "--save", &save]), 1, &["m.safetensors"]);
    fails(&mnist(&["train", "--plot", empty]), 1, &["is a directory"]);
}

/// Copies the repository's MNIST into `dir`, then replaces `name` by `bytes`.
fn broken_copy(dir: &Path, name: &str, bytes: &[u8]) {
    for entry in std::fs::read_dir(repo_data()).unwrap() {
        let e = entry.unwrap();
        std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
    }
    std::fs::write(dir.join(name), bytes).unwrap();
}

fn idx(magic: [u8; 4], dims: &[u32], data: &[u8]) -> Vec<u8> {
    let mut out = magic.to_vec();
    for d in dims {
        out.extend_from_slice(&d.to_be_bytes());
    }
    out.extend_from_slice(data);
    out
}

#[test]
fn every_idx_failure_is_one_line() {
    let labels = "t10k-labels.idx1-ubyte.gz";
    let images = "t10k-images.idx3-ubyte.gz";
    let u8_1 = [0, 0, 8, 1];
    let u8_3 = [0, 0, 8, 3];
    let cases: Vec<(&str, Vec<u8>, &[&str])> = vec![
        (labels, b"PK\x03\x04 not idx".to_vec(), &["not an IDX file"]),
        (
            labels,
            idx([0, 0, 0x0D, 1], &[3], &[1; 12]),
            &["element type 0x0d"],
        ),
        (
            labels,
            idx([0, 0, 8, 2], &[3, 1], &[1; 3]),
            &["2 dimensions, expected 1"],
        ),
        (labels, idx(u8_1, &[0], &[]), &["a dimension is zero"]),
        (labels, idx(u8_1, &[10_000], &[1; 9_999]), &["truncated"]),
        (
            labels,
            idx(u8_1, &[10_000], &[1; 10_001]),
            &["trailing bytes"],
        ),
        (
            labels,
            idx(u8_1, &[9_999], &[1; 9_999]),
            &["10000 images", "9999 labels"],
        ),
        (
            labels,
            idx(u8_1, &[10_000], &[11; 10_000]),
            &["label 11 at index 0"],
        ),
        (
            images,
            idx(u8_3, &[10_000, 27, 28], &vec![0; 10_000 * 27 * 28]),
            &["27x28"],
        ),
        (images, vec![0x1f, 0x8b, 8, 0, 0, 0], &["gzip"]),
    ];
    for (name, bytes, needles) in cases {
        let dir = tempfile::tempdir().unwrap();
        broken_copy(dir.path(), name, &bytes);
        let out = mnist(&["train", "--data", dir.path().to_str().unwrap()]);
        let line = fails(&out, 1, needles);
        assert!(line.contains(name), "the error names the file: {line}");
    }
}

/// A valid checkpoint for a 784-[16]-10 model (random parameters), saved in `dir`.
fn small_checkpoint(dir: &Path) -> PathBuf {
    let config = MlpConfig {
        inputs: 784,
        hidden: vec![16],
        classes: 10,
        ..MlpConfig::default()
    };
    let params = Params::init(&config, 1);
    let optimizer = OptimizerConfig::Sgd {
        lr: 0.1,
        momentum: 0.9,
        weight_decay: 0.0,
    };
    let path = dir.join("small.safetensors");
    Checkpoint {
        config,
        optimizer_state: OptimizerState::zeroed(&optimizer, &params),
        params,
        optimizer,
        epoch: 0,
        batch_size: 64,
        seed: 0,
        history: vec![],
        schedule: mlp::schedule::LrSchedule::CONSTANT,
        train_images: None,
    }
    .save(&path)
    .unwrap();
    path
}

#[test]
fn corrupt_truncated_and_mismatched_checkpoints() {
    let dir = tempfile::tempdir().unwrap();
    let good = small_checkpoint(dir.path());
    let bytes = std::fs::read(&good).unwrap();
    let truncated = dir.path().join("truncated.safetensors");
    std::fs::write(&truncated, &bytes[..bytes.len() - 100]).unwrap();
    let corrupt = dir.path().join("corrupt.safetensors");
    let mut c = bytes.clone();
    c[8..20].fill(b'!');
    std::fs::write(&corrupt, &c).unwrap();
    // A valid header and shapes, but a NaN in the first weight: the data does not match its
    // digest.
    let nan = dir.path().join("nan.safetensors");
    let (header, meta) = safetensors::SafeTensors::read_metadata(&bytes).unwrap();
    let at = 8 + header + meta.info("layers.0.weight").unwrap().data_offsets.0;
    let mut n = bytes.clone();
    n[at..at + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    std::fs::write(&nan, &n).unwrap();
    for (path, needle) in [
        (&truncated, "truncated"),
        (&corrupt, "corrupt"),
        (
            &nan,
            "tensor `layers.0.weight` does not match its SHA-256 digest",
        ),
    ] {
        let p = path.to_str().unwrap();
        fails(&mnist(&["eval", "--model", p]), 1, &[needle, p]);
        fails(&mnist(&["predict", "--model", p, "x.png"]), 1, &[needle]);
        fails(
            &mnist(&["train", "--resume", p, "--limit-train", "5"]),
            1,
            &[needle],
        );
    }
    let missing = dir.path().join("missing.safetensors");
    fails(
        &mnist(&["eval", "--model", missing.to_str().unwrap()]),
        1,
        &["missing.safetensors"],
    );
    // Resuming with another shape or optimizer.
    let g = good.to_str().unwrap();
    fails(
        &mnist(&["train", "--resume", g, "--hidden", "32"]),
        1,
        &["hidden layers [16]"],
    );
    fails(
        &mnist(&["train", "--resume", g, "--optimizer", "adam"]),
        1,
        &["trained with --optimizer sgd"],
    );
}

#[test]
fn images_of_the_wrong_size_or_format() {
    let dir = tempfile::tempdir().unwrap();
    let model = small_checkpoint(dir.path());
    let m = model.to_str().unwrap();
    let big = dir.path().join("big.png");
    image::GrayImage::from_pixel(20, 28, image::Luma([3]))
        .save(&big)
        .unwrap();
    fails(
        &mnist(&[
            "predict",
            "--model",
            m,
            "--center",
            "never",
            big.to_str().unwrap(),
        ]),
        1,
        &["big.png", "20x28", "28x28", "--center never"],
    );
    // Centred (the default), any size up to 2048x2048 is read; larger is refused from the
    // header.
    let huge = dir.path().join("huge.pgm");
    std::fs::write(&huge, b"P5\n3000 10\n255\n").unwrap();
    fails(
        &mnist(&["predict", "--model", m, huge.to_str().unwrap()]),
        1,
        &["huge.pgm", "3000x10", "2048x2048"],
    );
    let text = dir.path().join("digit.png");
    std::fs::write(&text, b"not an image").unwrap();
    fails(
        &mnist(&["predict", "--model", m, text.to_str().unwrap()]),
        1,
        &["digit.png"],
    );
    // A PGM header for 28x28 with 10 of its 784 pixels.
    let short = dir.path().join("short.pgm");
    std::fs::write(&short, [&b"P5\n28 28\n255\n"[..], &[7u8; 10]].concat()).unwrap();
    fails(
        &mnist(&["predict", "--model", m, short.to_str().unwrap()]),
        1,
        &["short.pgm", "truncated"],
    );
    let none = dir.path().join("none.pgm");
    fails(
        &mnist(&["predict", "--model", m, none.to_str().unwrap()]),
        1,
        &["none.pgm"],
    );
}

/// `--plot` writes the format its extension names, PNG or JPEG (any case), and refuses another
/// or none before training starts, listing the ones it writes (issue 26: `--plot p.jpg` wrote
/// a PNG under that name).
#[test]
fn plot_format_follows_the_extension() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["p.gif", "p.svg", "p", "p.png.txt"] {
        let path = dir.path().join(name);
        // Small, so that a regression trains quickly and fails below instead of hanging.
        let small = ["--limit-train", "8", "--limit-test", "8", "--epochs", "1"];
        let mut args = vec!["train", "--plot", path.to_str().unwrap()];
        args.extend(small);
        let out = mnist(&args);
        fails(&out, 2, &[name, "--plot", ".png", ".jpg", ".jpeg"]);
        assert!(
            out.stdout.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(
            !stderr(&out).contains("GPU:"),
            "refused after starting: {}",
            stderr(&out)
        );
        assert!(!path.exists());
    }
    for (name, format) in [
        ("h.jpg", image::ImageFormat::Jpeg),
        ("h.JPEG", image::ImageFormat::Jpeg),
        ("h.Png", image::ImageFormat::Png),
    ] {
        let path = dir.path().join(name);
        let out = mnist(&[
            "train",
            "--limit-train",
            "64",
            "--limit-test",
            "32",
            "--epochs",
            "1",
            "--hidden",
            "4",
            "--plot",
            path.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(image::guess_format(&bytes).unwrap(), format, "{name}");
        let picture = image::load_from_memory_with_format(&bytes, format).unwrap();
        assert_eq!(
            (picture.width(), picture.height()),
            mlp::plot::SIZE,
            "{name}"
        );
    }
}

/// Writes an MNIST directory whose training set is the first `train` images of the repository's
/// (the test set is copied whole).
fn subset_copy(dir: &Path, train: usize) {
    let data = Mnist::load(&repo_data()).unwrap();
    let pixels: Vec<u8> = data.train.images[..train * 784]
        .iter()
        .map(|&v| (v * 255.0).round() as u8)
        .collect();
    let labels: Vec<u8> = data.train.labels[..train]
        .iter()
        .map(|&l| l as u8)
        .collect();
    let n = train as u32;
    std::fs::write(
        dir.join("train-images-idx3-ubyte"),
        idx([0, 0, 8, 3], &[n, 28, 28], &pixels),
    )
    .unwrap();
    std::fs::write(
        dir.join("train-labels-idx1-ubyte"),
        idx([0, 0, 8, 1], &[n], &labels),
    )
    .unwrap();
    for entry in std::fs::read_dir(repo_data()).unwrap() {
        let e = entry.unwrap();
        if e.file_name().to_string_lossy().starts_with("t10k") {
            std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
        }
    }
}

/// The number of training images a run's `data:` line on stderr reports.
fn training_images(out: &Output) -> usize {
    let err = stderr(out);
    let line = err
        .lines()
        .find(|l| l.starts_with("data: "))
        .unwrap_or_else(|| panic!("{err}"));
    let (_, after) = line.split_once(" (").unwrap();
    after.split(' ').next().unwrap().parse().unwrap()
}

/// The checkpoint records how many training images the run used (`--limit-train`), and
/// `--resume` trains on the same ones (issue 26: without `--limit-train` again it trained on
/// all 60,000, and the schedule in steps no longer matched its epochs); another
/// `--limit-train`, or data with fewer training images, is an error before training.
#[test]
fn resume_trains_on_the_checkpoints_images() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("first.safetensors");
    let second = dir.path().join("second.safetensors");
    let (a, b) = (first.to_str().unwrap(), second.to_str().unwrap());
    let common = ["--limit-test", "50", "--epochs", "1", "--batch-size", "50"];
    let mut args = vec!["train", "--limit-train", "300", "--hidden", "8"];
    args.extend(["--schedule", "constant", "--save", a]);
    args.extend(common);
    let out = mnist(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(training_images(&out), 300);

    let mut args = vec!["train", "--resume", a, "--save", b];
    args.extend(common);
    let out = mnist(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(training_images(&out), 300, "{}", stderr(&out));
    let resumed = Checkpoint::load(&second).unwrap();
    assert_eq!(
        (resumed.epoch, resumed.optimizer_state.step),
        (2, 2 * 300 / 50)
    );

    // The same number given again is no mismatch.
    let mut args = vec!["train", "--resume", a, "--limit-train", "300"];
    args.extend(common);
    let out = mnist(&args);
    assert!(out.status.success(), "{}", stderr(&out));

    let out = mnist(&["train", "--resume", a, "--limit-train", "200"]);
    let line = fails(&out, 1, &[a, "300 training images", "--limit-train 200"]);
    assert!(!stderr(&out).contains("GPU:"), "{line}");

    let small = dir.path().join("small");
    std::fs::create_dir(&small).unwrap();
    subset_copy(&small, 120);
    let out = mnist(&["train", "--resume", a, "--data", small.to_str().unwrap()]);
    let line = fails(&out, 1, &[a, "300 training images", "120"]);
    assert!(!stderr(&out).contains("GPU:"), "{line}");
}

/// Train on a subset with the CLI, then eval and predict with the saved model.
#[test]
fn train_eval_predict() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.safetensors");
    let plot = dir.path().join("m.png");
    let (m, p) = (model.to_str().unwrap(), plot.to_str().unwrap());
    let out = mnist(&[
        "train",
        "--limit-train",
        "1000",
        "--limit-test",
        "200",
        "--epochs",
        "2",
        "--batch-size",
        "16",
        "--optimizer",
        "adam",
        "--lr",
        "0.002",
        "--hidden",
        "32",
        "--save",
        m,
        "--plot",
        p,
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}{stdout}", stderr(&out));
    assert!(stdout.contains("epoch 2/2"), "{stdout}");
    let final_line = stdout.lines().find(|l| l.starts_with("done:")).unwrap();
    let accuracy = final_line.rsplit(' ').next().unwrap().to_string();
    assert!(image::open(&plot).is_ok());
    // Both files get the mode `File::create` gives (0o666 less the umask), not 0o600.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        let plain = dir.path().join("plain");
        std::fs::File::create(&plain).unwrap();
        assert_eq!(mode(&model), mode(&plain), "{:o}", mode(&model));
        assert_eq!(mode(&plot), mode(&plain), "{:o}", mode(&plot));
    }

    let out = mnist(&["eval", "--model", m, "--limit-test", "200"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout.contains(&format!("test accuracy {accuracy}")),
        "{stdout} vs {accuracy}"
    );
    assert!(stdout.contains("confusion matrix"), "{stdout}");

    // The first test images as PGM and PNG files, classified like `eval` does.
    let test = Mnist::load(&repo_data()).unwrap().test;
    let mut files = Vec::new();
    for i in 0..4 {
        let pixels: Vec<u8> = test.images[i * 784..(i + 1) * 784]
            .iter()
            .map(|&v| (v * 255.0).round() as u8)
            .collect();
        let img = image::GrayImage::from_raw(28, 28, pixels).unwrap();
        let path = dir.path().join(format!("t{i}.{}", ["pgm", "png"][i % 2]));
        img.save(&path).unwrap();
        files.push(path.to_str().unwrap().to_string());
    }
    let mut args = vec!["predict", "--model", m];
    args.extend(files.iter().map(String::as_str));
    let out = mnist(&args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", stderr(&out));
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{stdout}");
    let right = lines
        .iter()
        .zip(&test.labels)
        .filter(|(l, label)| {
            l.split(": ")
                .nth(1)
                .unwrap()
                .starts_with(&label.to_string())
        })
        .count();
    assert!(right >= 3, "{stdout} vs {:?}", &test.labels[..4]);
}

/// The part of a `predict` line after the file name: class, probability, all probabilities.
fn prediction(line: &str) -> &str {
    line.split_once(": ").map_or(line, |(_, p)| p)
}

/// A checkpoint in the repository's fixtures (written by the binary of commit 82f9de3).
fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// The fixture `v1-sgd-784-16-10-resumed.safetensors` saved again as `dir/model.safetensors`:
/// the fixture has no digests, and its warning is not the calling test's.
fn resaved_fixture(dir: &Path) -> PathBuf {
    let model = dir.join("model.safetensors");
    Checkpoint::load(&fixture("v1-sgd-784-16-10-resumed.safetensors"))
        .unwrap()
        .save(&model)
        .unwrap();
    model
}

/// A checkpoint written before the digests loads in `eval`, `predict` and `train --resume`,
/// which print one warning line saying that its damage could go unnoticed (issue 21); one
/// with digests prints none.
#[test]
fn checkpoints_without_digests_load_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let old = fixture("v1-sgd-784-16-10.safetensors");
    let old = old.to_str().unwrap();
    let picture = dir.path().join("blank.pgm");
    std::fs::write(&picture, [&b"P5\n28 28\n255\n"[..], &[9u8; 784]].concat()).unwrap();
    let p = picture.to_str().unwrap();
    let new = small_checkpoint(dir.path());
    let new = new.to_str().unwrap();
    for (args, warned) in [
        (vec!["eval", "--model", old, "--limit-test", "20"], true),
        (vec!["predict", "--model", old, p], true),
        (
            vec![
                "train",
                "--resume",
                old,
                "--limit-train",
                "100",
                "--limit-test",
                "20",
                "--epochs",
                "1",
            ],
            true,
        ),
        (vec!["predict", "--model", new, p], false),
    ] {
        let out = mnist(&args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        let warnings: Vec<&str> = err
            .lines()
            .filter(|l| l.starts_with("warning: ") && l.contains("SHA-256"))
            .collect();
        assert_eq!(warnings.len(), usize::from(warned), "{args:?}: {err}");
        if warned {
            assert!(
                warnings[0].contains("v1-sgd-784-16-10.safetensors"),
                "{err}"
            );
        }
    }
}

/// A drawing whose content is in the alpha channel (black strokes on transparency, as a
/// browser canvas exports it), RGBA or gray+alpha, predicts exactly as its opaque white-on-black
/// version, and as its dark-on-light version with --invert; a blank image gets a warning.
#[test]
fn transparent_drawings_predict_as_opaque_ones() {
    let dir = tempfile::tempdir().unwrap();
    let model = resaved_fixture(dir.path());
    let test = Mnist::load(&repo_data()).unwrap().test;
    let file = |name: String| dir.path().join(name).to_str().unwrap().to_string();
    let (mut plain, mut inverted) = (Vec::new(), Vec::new());
    for i in 0..3 {
        let ink: Vec<u8> = test.images[i * 784..(i + 1) * 784]
            .iter()
            .map(|&v| (v * 255.0).round() as u8)
            .collect();
        let at = |x: u32, y: u32| ink[(y * 28 + x) as usize];
        let versions = [
            (
                format!("rgba{i}.png"),
                image::DynamicImage::from(image::RgbaImage::from_fn(28, 28, |x, y| {
                    image::Rgba([0, 0, 0, at(x, y)])
                })),
            ),
            (
                format!("la{i}.png"),
                image::GrayAlphaImage::from_fn(28, 28, |x, y| image::LumaA([0, at(x, y)])).into(),
            ),
            (
                format!("white_on_black{i}.png"),
                image::GrayImage::from_fn(28, 28, |x, y| image::Luma([at(x, y)])).into(),
            ),
        ];
        for (name, img) in versions {
            img.save(file(name.clone())).unwrap();
            plain.push(file(name));
        }
        let dark_on_light =
            image::RgbImage::from_fn(28, 28, |x, y| image::Rgb([255 - at(x, y); 3]));
        dark_on_light.save(file(format!("dark{i}.png"))).unwrap();
        inverted.push(file(format!("dark{i}.png")));
    }
    let m = model.to_str().unwrap();
    let run = |files: &[String], invert: bool| -> Vec<String> {
        let mut args = vec!["predict", "--model", m];
        if invert {
            args.push("--invert");
        }
        args.extend(files.iter().map(String::as_str));
        let out = mnist(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(!stderr(&out).contains("warning"), "{}", stderr(&out));
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        stdout.lines().map(|l| prediction(l).to_string()).collect()
    };
    let plain = run(&plain, false);
    let inverted = run(&inverted, true);
    assert_eq!(plain.len(), 9);
    for i in 0..3 {
        let reference = &plain[3 * i + 2];
        assert_eq!(&plain[3 * i], reference, "RGBA drawing {i}");
        assert_eq!(&plain[3 * i + 1], reference, "gray+alpha drawing {i}");
        assert_eq!(&inverted[i], reference, "dark on light, --invert, {i}");
    }
    // The same drawing is read alike with --invert (the transparency is the background).
    assert_eq!(run(&[file("rgba0.png".into())], true)[0], plain[2]);

    let blank = file("blank.png".into());
    image::RgbaImage::from_pixel(28, 28, image::Rgba([0, 0, 0, 0]))
        .save(&blank)
        .unwrap();
    let white = file("white.png".into());
    image::GrayImage::from_pixel(28, 28, image::Luma([255]))
        .save(&white)
        .unwrap();
    let out = mnist(&["predict", "--model", m, &blank, &white]);
    assert!(out.status.success(), "{}", stderr(&out));
    let warnings: Vec<String> = stderr(&out)
        .lines()
        .filter(|l| l.starts_with("warning: "))
        .map(String::from)
        .collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings[0].contains("blank.png") && warnings[0].contains("blank after conversion"));
    assert!(warnings[1].contains("white.png") && warnings[1].contains("--invert"));
}

/// `--activation`: a model trained with `gelu` records it in its checkpoint; `eval`, `predict`
/// and `train --resume` given another activation refuse it with one error naming both (before
/// any GPU work), and accept the same one or none; a checkpoint written before activations
/// were recorded reads as `relu`.
#[test]
fn the_activation_is_saved_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("gelu.safetensors");
    let m = model.to_str().unwrap();
    let train = |extra: &[&str]| {
        let mut args = vec![
            "train",
            "--limit-train",
            "300",
            "--limit-test",
            "100",
            "--epochs",
            "1",
            "--batch-size",
            "32",
            "--hidden",
            "16",
            "--save",
            m,
        ];
        args.extend_from_slice(extra);
        mnist(&args)
    };
    // A constant rate, so that the run can be resumed (a cosine ends at 0).
    let out = train(&["--activation", "gelu", "--schedule", "constant"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("(gelu)"), "{}", stderr(&out));
    let c = Checkpoint::load(&model).unwrap();
    assert_eq!(c.config.activation, mlp::activation::Activation::Gelu);

    let image = dir.path().join("digit.png");
    image::GrayImage::new(28, 28).save(&image).unwrap();
    let img = image.to_str().unwrap();
    for args in [
        &["eval", "--model", m, "--activation", "relu"][..],
        &["predict", "--model", m, "--activation", "relu", img],
        &["train", "--resume", m, "--activation", "relu"],
    ] {
        let out = mnist(args);
        let line = fails(&out, 1, &[m, "--activation gelu", "--activation relu"]);
        assert!(!stderr(&out).contains("GPU:"), "{args:?}: {line}");
    }
    let out = mnist(&[
        "eval",
        "--model",
        m,
        "--activation",
        "gelu",
        "--limit-test",
        "100",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("test accuracy"));
    let out = mnist(&["predict", "--model", m, img]);
    assert!(out.status.success(), "{}", stderr(&out));
    let web = dir.path().join("web");
    let out = mnist(&["export-web", "--model", m, "--out", web.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let page: serde_json::Value =
        serde_json::from_slice(&std::fs::read(web.join("model.json")).unwrap()).unwrap();
    assert_eq!(page["activation"], "gelu");
    assert_eq!(page["layers"][0]["kernel"], "linear_direct_gelu");
    assert!(web.join("linear_direct_gelu.wgsl").is_file());
    let out = train(&["--resume", m, "--activation", "leaky_relu"]);
    fails(&out, 1, &["--activation gelu", "--activation leaky-relu"]);
    let out = train(&["--resume", m]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(Checkpoint::load(&model).unwrap().epoch, 2);

    let old = fixture("v1-sgd-784-16-10.safetensors");
    let old = old.to_str().unwrap();
    assert_eq!(
        Checkpoint::load(Path::new(old)).unwrap().config.activation,
        mlp::activation::Activation::Relu
    );
    let out = mnist(&["eval", "--model", old, "--activation", "tanh"]);
    fails(&out, 1, &[old, "--activation relu", "--activation tanh"]);
}

#[test]
fn precision_f16_is_refused_where_it_cannot_run() {
    // lavapipe trains with the unfused step (and has no cooperative matrices): one line
    // naming the option and why, before any training, exit 1.
    fails(
        &mnist(&[
            "train",
            "--precision",
            "f16",
            "--limit-train",
            "64",
            "--limit-test",
            "10",
            "--epochs",
            "1",
        ]),
        1,
        &["--precision f16 cannot run here", "fused training step"],
    );
    fails(
        &mnist(&["train", "--precision", "f8"]),
        2,
        &["invalid value 'f8'", "--precision"],
    );
}
