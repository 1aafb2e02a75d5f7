//! The parsers the fuzz targets of `fuzz/` exercise (FUZZING.md): their seed corpus, checked
//! here so that it stays what it claims (files named `ok-*` load, `bad-*` are refused with one
//! line), and a regression test for each failure a fuzzing run found, named after it. CI runs
//! these; it does not run cargo fuzz.
//!
//! The seeds are written by `cargo test -p mlp --test fuzz_regressions -- --ignored
//! write_fuzz_seeds` (the checkpoints' metadata order varies from run to run, so their bytes
//! do too).

use std::io::Write;
use std::path::{Path, PathBuf};

use mlp::checkpoint::{Checkpoint, EpochRecord};
use mlp::config::MlpConfig;
use mlp::data::{Dataset, picture, read_idx_from};
use mlp::model::{OptimizerConfig, OptimizerState};
use mlp::params::Params;
use mlp::schedule::{Decay, LrSchedule};

fn seeds(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/seeds")
        .join(target)
}

/// The idx target's input: a little-endian `u16` length, the images file, the labels file.
fn idx_input(images: &[u8], labels: &[u8]) -> Vec<u8> {
    let n = u16::try_from(images.len()).unwrap();
    [&n.to_le_bytes()[..], images, labels].concat()
}

/// What the idx target does with `data`: the data set, or the first error's text.
fn idx_target(data: &[u8]) -> Result<Dataset, String> {
    let (n, rest) = match data {
        [a, b, rest @ ..] => (usize::from(u16::from_le_bytes([*a, *b])), rest),
        _ => (0, data),
    };
    let (images, labels) = rest.split_at(n.min(rest.len()));
    let (ip, lp) = (Path::new("images"), Path::new("labels"));
    let err = |e: mlp::data::DataError| e.to_string();
    let images = read_idx_from(images, ip, 3, "images: count, rows, columns").map_err(err)?;
    let labels = read_idx_from(labels, lp, 1, "labels: count").map_err(err)?;
    Dataset::from_idx_arrays(images, ip, labels, lp).map_err(err)
}

fn idx_file(magic3: u8, dims: &[u32], data: &[u8]) -> Vec<u8> {
    let mut out = vec![0, 0, 8, magic3];
    for d in dims {
        out.extend_from_slice(&d.to_be_bytes());
    }
    out.extend_from_slice(data);
    out
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

/// A checkpoint of a 4-3-10 model (small: the fuzzer mutates every byte of it).
fn tiny(optimizer: OptimizerConfig) -> Checkpoint {
    let config = MlpConfig {
        inputs: 4,
        hidden: vec![3],
        classes: 10,
        ..MlpConfig::default()
    };
    let params = Params::init(&config, 3);
    let mut state = OptimizerState::zeroed(&optimizer, &params);
    state.step = 7;
    for (k, slot) in state.slots.iter_mut().enumerate() {
        for (i, v) in slot.iter_mut().enumerate() {
            *v = (k * 31 + i) as f32 / 100.0;
        }
    }
    Checkpoint {
        config,
        params,
        optimizer,
        optimizer_state: state,
        schedule: LrSchedule {
            warmup_steps: 2,
            decay: Decay::Cosine {
                steps: 20,
                final_factor: 0.0,
            },
        },
        epoch: 1,
        batch_size: 8,
        seed: 5,
        history: vec![EpochRecord {
            epoch: 1,
            train_loss: 2.25,
            test_accuracy: 0.125,
            train_seconds: 0.5,
            eval_seconds: 0.25,
        }],
        train_images: Some(56),
    }
}

fn sgd() -> OptimizerConfig {
    OptimizerConfig::Sgd {
        lr: 0.1,
        momentum: 0.9,
        weight_decay: 0.0,
    }
}

fn adam() -> OptimizerConfig {
    OptimizerConfig::Adam {
        lr: 1e-3,
        beta1: 0.9,
        beta2: 0.999,
        eps: 1e-8,
    }
}

/// `bytes` as a file written before the digests: format `wgsl-dsl-mlp/1`, no `sha256`.
fn without_digests(bytes: &[u8]) -> Vec<u8> {
    let st = safetensors::SafeTensors::deserialize(bytes).unwrap();
    let (_, meta) = safetensors::SafeTensors::read_metadata(bytes).unwrap();
    let mut metadata = meta.metadata().clone().unwrap();
    metadata.remove("sha256");
    metadata.remove("train_images");
    metadata.insert(
        "format".into(),
        mlp::checkpoint::FORMAT_WITHOUT_DIGESTS.into(),
    );
    safetensors::serialize(st.tensors(), Some(metadata)).unwrap()
}

fn encoded(img: image::DynamicImage, format: image::ImageFormat) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, format).unwrap();
    out.into_inner()
}

/// A 28x28 "digit" (a ring) as gray levels.
fn digit(x: u32, y: u32) -> u8 {
    let (dx, dy) = (x as i32 - 14, y as i32 - 14);
    let r2 = dx * dx + dy * dy;
    if (25..=64).contains(&r2) { 255 } else { 0 }
}

/// Every seed, by target: file name and bytes.
fn all_seeds() -> Vec<(&'static str, String, Vec<u8>)> {
    let mut out = Vec::new();
    let pixels: Vec<u8> = (0..3 * 4 * 5).map(|i| (i * 37 % 256) as u8).collect();
    let images = idx_file(3, &[3, 4, 5], &pixels);
    let labels = idx_file(1, &[3], &[1, 7, 9]);
    for (name, data) in [
        ("ok-raw", idx_input(&images, &labels)),
        ("ok-gzip", idx_input(&gzip(&images), &gzip(&labels))),
        (
            "bad-label",
            idx_input(&images, &idx_file(1, &[3], &[1, 12, 9])),
        ),
        ("bad-count", idx_input(&images, &idx_file(1, &[2], &[1, 7]))),
        (
            "bad-truncated",
            idx_input(&images[..images.len() - 1], &labels),
        ),
        ("bad-rank", idx_input(&labels, &images)),
    ] {
        out.push(("idx", name.to_string(), data));
    }
    let gray = image::GrayImage::from_fn(28, 28, |x, y| image::Luma([digit(x, y)]));
    let gray16 = image::ImageBuffer::<image::Luma<u16>, Vec<u16>>::from_fn(28, 28, |x, y| {
        image::Luma([u16::from(digit(x, y)) * 257])
    });
    let la = image::GrayAlphaImage::from_fn(28, 28, |x, y| image::LumaA([0, digit(x, y)]));
    let rgba = image::RgbaImage::from_fn(28, 28, |x, y| image::Rgba([200, 30, 30, digit(x, y)]));
    let rgb = image::RgbImage::from_fn(28, 28, |x, y| image::Rgb([255 - digit(x, y); 3]));
    use image::ImageFormat::{Jpeg, Png, Pnm};
    for (name, data) in [
        ("ok-gray.png", encoded(gray.clone().into(), Png)),
        ("ok-gray16.png", encoded(gray16.into(), Png)),
        ("ok-gray-alpha.png", encoded(la.into(), Png)),
        ("ok-rgba.png", encoded(rgba.into(), Png)),
        ("ok-rgb.jpg", encoded(rgb.clone().into(), Jpeg)),
        ("ok-gray.pgm", encoded(gray.clone().into(), Pnm)),
        ("ok-rgb.ppm", encoded(rgb.into(), Pnm)),
        (
            "ok-ascii.pgm",
            format!(
                "P2\n28 28\n255\n{}\n",
                gray.as_raw()
                    .iter()
                    .map(|v| v.to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            )
            .into_bytes(),
        ),
        (
            "ok-gray.pam",
            [
                &b"P7\nWIDTH 28\nHEIGHT 28\nDEPTH 1\nMAXVAL 255\nTUPLTYPE GRAYSCALE\nENDHDR\n"[..],
                gray.as_raw(),
            ]
            .concat(),
        ),
        (
            "bad-size.png",
            encoded(image::GrayImage::new(20, 28).into(), Png),
        ),
        (
            "bad-truncated.pgm",
            [&b"P5\n28 28\n255\n"[..], &[9; 100]].concat(),
        ),
    ] {
        out.push(("picture", name.to_string(), data));
    }
    let path = Path::new("seed");
    let sgd_bytes = tiny(sgd()).to_bytes(path).unwrap();
    let mut flipped = sgd_bytes.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 1;
    for (name, data) in [
        ("ok-sgd.safetensors", sgd_bytes.clone()),
        ("ok-adam.safetensors", tiny(adam()).to_bytes(path).unwrap()),
        ("ok-v1-sgd.safetensors", without_digests(&sgd_bytes)),
        ("bad-flipped.safetensors", flipped),
    ] {
        out.push(("checkpoint", name.to_string(), data));
    }
    out
}

/// Writes the seed corpus into `fuzz/seeds/` (run by hand; see the module docs).
#[test]
#[ignore = "writes fuzz/seeds/; run by hand"]
fn write_fuzz_seeds() {
    for (target, name, data) in all_seeds() {
        let dir = seeds(target);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(name), data).unwrap();
    }
}

/// What the target `target` does with the file: `Ok(())` when it loads, else the error.
fn run_target(target: &str, data: &[u8]) -> Result<(), String> {
    match target {
        "idx" => idx_target(data).map(drop),
        "picture" => picture::decode(data, Path::new("seed"), 28)
            .map(drop)
            .map_err(|e| e.to_string()),
        "checkpoint" => Checkpoint::from_bytes(data, Path::new("seed"))
            .map(drop)
            .map_err(|e| e.to_string()),
        other => panic!("no target {other}"),
    }
}

/// Every committed seed does what its name says, and every seed `all_seeds` makes is there.
#[test]
fn the_seed_corpus_is_what_it_says() {
    let mut count = 0;
    for target in ["idx", "picture", "checkpoint"] {
        let mut names: Vec<String> = std::fs::read_dir(seeds(target))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        for name in &names {
            let data = std::fs::read(seeds(target).join(name)).unwrap();
            match (name.starts_with("ok-"), run_target(target, &data)) {
                (true, Ok(())) => {}
                (false, Err(e)) => assert!(!e.contains('\n'), "{target}/{name}: {e}"),
                (true, Err(e)) => panic!("{target}/{name} should load: {e}"),
                (false, Ok(())) => panic!("{target}/{name} should be refused"),
            }
            count += 1;
        }
        for (t, name, _) in all_seeds() {
            assert!(
                t != target || names.contains(&name),
                "{target}/{name} is missing"
            );
        }
    }
    assert_eq!(count, all_seeds().len());
}
