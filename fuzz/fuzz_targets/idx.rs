//! IDX files as `mnist train` and `mnist eval` read them (`mlp::data::idx`, `mlp::data::Dataset`):
//! an images file and a labels file, raw or gzip, each checked, then made into a data set.
//!
//! Input: a little-endian `u16` n, then the images file (its first n bytes, or all that is
//! left), then the labels file. Every input must give a data set whose sizes agree, or an
//! error of one line; nothing may panic.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use mlp::data::{CLASSES, Dataset, read_idx_from};

#[track_caller]
fn one_line(e: &impl std::fmt::Display) {
    let text = e.to_string();
    assert!(
        !text.is_empty() && !text.contains('\n'),
        "not one line: {text:?}"
    );
}

fuzz_target!(|data: &[u8]| {
    let (n, rest) = match data {
        [a, b, rest @ ..] => (usize::from(u16::from_le_bytes([*a, *b])), rest),
        _ => (0, data),
    };
    let (images, labels) = rest.split_at(n.min(rest.len()));
    let images_path = Path::new("fuzz/train-images-idx3-ubyte");
    let labels_path = Path::new("fuzz/train-labels-idx1-ubyte");
    let images = read_idx_from(images, images_path, 3, "images: count, rows, columns");
    let labels = read_idx_from(labels, labels_path, 1, "labels: count");
    for array in [&images, &labels] {
        match array {
            Ok(a) => {
                assert!(a.dims.iter().all(|&d| d > 0));
                assert_eq!(a.data.len(), a.dims.iter().product::<usize>());
            }
            Err(e) => one_line(e),
        }
    }
    let (Ok(images), Ok(labels)) = (images, labels) else {
        return;
    };
    match Dataset::from_idx_arrays(images, images_path, labels, labels_path) {
        Ok(set) => {
            assert_eq!(set.images.len(), set.len() * set.features());
            assert!(set.labels.iter().all(|&l| (l as usize) < CLASSES));
            assert!(set.images.iter().all(|v| (0.0..=1.0).contains(v)));
        }
        Err(e) => one_line(&e),
    }
});
