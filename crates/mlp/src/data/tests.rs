//! Each failure class of the IDX reader and the MNIST loader, on small synthetic files, and the
//! real MNIST files of the repository.

use std::io::Write;
use std::path::{Path, PathBuf};

use flate2::Compression;
use flate2::write::GzEncoder;

use super::*;

/// An IDX file of unsigned bytes: header for `dims`, then `data`.
fn idx_bytes(dims: &[u32], data: &[u8]) -> Vec<u8> {
    let mut out = vec![0, 0, idx::UNSIGNED_BYTE, dims.len() as u8];
    for d in dims {
        out.extend_from_slice(&d.to_be_bytes());
    }
    out.extend_from_slice(data);
    out
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = GzEncoder::new(Vec::new(), Compression::default());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// Deterministic non-trivial pixels for `n` images of `rows x cols`.
fn pixels(n: usize, rows: usize, cols: usize) -> Vec<u8> {
    (0..n * rows * cols).map(|i| (i * 37 % 256) as u8).collect()
}

/// Writes a complete 4-file data set with `n_train` and `n_test` images of 3x5 pixels.
fn write_set(dir: &Path, sep: char, gz: bool, n_train: u32, n_test: u32) {
    for (prefix, n) in [("train", n_train), ("t10k", n_test)] {
        let images = idx_bytes(&[n, 3, 5], &pixels(n as usize, 3, 5));
        let labels: Vec<u8> = (0..n).map(|i| (i * 7 % 10) as u8).collect();
        let labels = idx_bytes(&[n], &labels);
        let ext = if gz { ".gz" } else { "" };
        let (images, labels) = if gz {
            (gzip(&images), gzip(&labels))
        } else {
            (images, labels)
        };
        write(
            dir,
            &format!("{prefix}-images{sep}idx3-ubyte{ext}"),
            &images,
        );
        write(
            dir,
            &format!("{prefix}-labels{sep}idx1-ubyte{ext}"),
            &labels,
        );
    }
}

#[test]
fn reads_raw_and_gzip_in_both_spellings() {
    for (sep, gz) in [('-', false), ('-', true), ('.', false), ('.', true)] {
        let dir = tempfile::tempdir().unwrap();
        write_set(dir.path(), sep, gz, 13, 7);
        let m = Mnist::load(dir.path()).unwrap();
        assert_eq!((m.train.len(), m.test.len()), (13, 7));
        assert_eq!((m.train.rows, m.train.cols, m.train.features()), (3, 5, 15));
        let expected: Vec<f32> = pixels(13, 3, 5).iter().map(|&b| b as f32 / 255.0).collect();
        assert_eq!(m.train.images, expected);
        let labels: Vec<u32> = (0..7).map(|i| i * 7 % 10).collect();
        assert_eq!(m.test.labels, labels);
    }
}

#[test]
fn truncate_keeps_a_prefix() {
    let dir = tempfile::tempdir().unwrap();
    write_set(dir.path(), '-', false, 13, 7);
    let mut m = Mnist::load(dir.path()).unwrap();
    let full = m.train.clone();
    m.train.truncate(4);
    assert_eq!(m.train.len(), 4);
    assert_eq!(m.train.images[..], full.images[..4 * 15]);
    m.test.truncate(100);
    assert_eq!(m.test.len(), 7);
}

/// Asserts that the error `$err` matches the pattern, showing the error if not.
macro_rules! assert_matches {
    ($err:expr, $pattern:pat $(if $guard:expr)?) => {{
        let err = $err;
        assert!(matches!(err, $pattern $(if $guard)?), "{err}");
    }};
}

fn read_err(bytes: &[u8], rank: u8) -> DataError {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "f-idx3-ubyte", bytes);
    let err = read_idx(&p, rank, "test").unwrap_err();
    assert!(
        err.to_string().contains("f-idx3-ubyte"),
        "the error names the file: {err}"
    );
    err
}

#[test]
fn missing_file() {
    let dir = tempfile::tempdir().unwrap();
    assert_matches!(
        read_idx(&dir.path().join("nope"), 1, "x").unwrap_err(),
        DataError::Io { .. }
    );
}

#[test]
fn bad_magic() {
    let mut b = idx_bytes(&[2], &[1, 2]);
    b[0] = 0x50; // e.g. a PNG or a text file
    assert_matches!(read_err(&b, 1), DataError::Magic { found, .. } if found >> 24 == 0x50);
}

#[test]
fn bad_element_type() {
    let mut b = idx_bytes(&[2], &[1, 2]);
    b[2] = 0x0D; // float
    assert_matches!(read_err(&b, 1), DataError::ElementType { found: 0x0D, .. });
}

#[test]
fn wrong_rank() {
    assert_matches!(
        read_err(&idx_bytes(&[2], &[1, 2]), 3),
        DataError::Rank {
            found: 1,
            expected: 3,
            ..
        }
    );
}

#[test]
fn zero_dimension() {
    assert_matches!(
        read_err(&idx_bytes(&[0, 28, 28], &[]), 3),
        DataError::Dimensions { .. }
    );
}

#[test]
fn overflowing_dimensions() {
    assert_matches!(
        read_err(&idx_bytes(&[u32::MAX, u32::MAX, u32::MAX], &[]), 3),
        DataError::Dimensions { .. }
    );
}

#[test]
fn truncated_data() {
    let b = idx_bytes(&[2, 3, 5], &pixels(2, 3, 5)[..29]);
    assert_matches!(
        read_err(&b, 3),
        DataError::Truncated {
            expected: 46,
            found: 45,
            ..
        }
    );
}

#[test]
fn truncated_header() {
    let b = idx_bytes(&[2, 3, 5], &[]);
    assert_matches!(
        read_err(&b[..9], 3),
        DataError::Truncated {
            expected: 16,
            found: 9,
            ..
        }
    );
    assert_matches!(
        read_err(&b[..3], 3),
        DataError::Truncated {
            expected: 4,
            found: 3,
            ..
        }
    );
    assert_matches!(read_err(&[], 3), DataError::Truncated { found: 0, .. });
}

#[test]
fn padded_data() {
    let mut b = idx_bytes(&[2, 3, 5], &pixels(2, 3, 5));
    b.push(0);
    assert_matches!(read_err(&b, 3), DataError::Padded { expected: 46, .. });
}

#[test]
fn truncated_gzip_stream() {
    let z = gzip(&idx_bytes(&[50, 3, 5], &pixels(50, 3, 5)));
    assert_matches!(read_err(&z[..z.len() / 2], 3), DataError::Gzip { .. });
}

#[test]
fn corrupt_gzip_stream() {
    let mut z = gzip(&idx_bytes(&[50, 3, 5], &pixels(50, 3, 5)));
    for b in &mut z[12..40] {
        *b ^= 0x5A;
    }
    assert_matches!(read_err(&z, 3), DataError::Gzip { .. });
}

#[test]
fn truncated_inside_gzip() {
    // A complete gzip stream whose content is cut: reported as truncated, not as gzip.
    let b = idx_bytes(&[2, 3, 5], &pixels(2, 3, 5)[..20]);
    assert_matches!(read_err(&gzip(&b), 3), DataError::Truncated { .. });
}

#[test]
fn count_mismatch() {
    let dir = tempfile::tempdir().unwrap();
    let i = write(dir.path(), "i", &idx_bytes(&[3, 2, 2], &[9; 12]));
    let l = write(dir.path(), "l", &idx_bytes(&[4], &[1, 2, 3, 4]));
    assert_matches!(
        Dataset::from_idx_files(&i, &l).unwrap_err(),
        DataError::CountMismatch {
            images: 3,
            labels: 4,
            ..
        }
    );
}

#[test]
fn label_out_of_range() {
    let dir = tempfile::tempdir().unwrap();
    let i = write(dir.path(), "i", &idx_bytes(&[3, 2, 2], &[9; 12]));
    let l = write(dir.path(), "l", &idx_bytes(&[3], &[1, 10, 3]));
    assert_matches!(
        Dataset::from_idx_files(&i, &l).unwrap_err(),
        DataError::Label {
            index: 1,
            label: 10,
            ..
        }
    );
}

#[test]
fn missing_file_in_directory() {
    let dir = tempfile::tempdir().unwrap();
    write_set(dir.path(), '-', false, 3, 2);
    std::fs::remove_file(dir.path().join("t10k-labels-idx1-ubyte")).unwrap();
    let err = Mnist::load(dir.path()).unwrap_err();
    assert_matches!(
        &err,
        DataError::NotFound {
            name: "test labels",
            ..
        }
    );
    assert!(
        err.to_string().contains("t10k-labels.idx1-ubyte.gz"),
        "{err}"
    );
}

#[test]
fn test_images_of_another_size() {
    let dir = tempfile::tempdir().unwrap();
    write_set(dir.path(), '-', false, 3, 2);
    write(
        dir.path(),
        "t10k-images-idx3-ubyte",
        &idx_bytes(&[2, 5, 3], &pixels(2, 5, 3)),
    );
    assert_matches!(
        Mnist::load(dir.path()).unwrap_err(),
        DataError::ImageShape { .. }
    );
}

/// The repository's MNIST (`data/mnist/`).
#[test]
fn real_mnist() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/mnist");
    let m = Mnist::load(&dir).unwrap();
    assert_eq!((m.train.len(), m.test.len()), (60_000, 10_000));
    assert_eq!((m.train.rows, m.train.cols), (28, 28));
    assert_eq!(
        m.train.class_counts(),
        [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]
    );
    assert_eq!(m.test.class_counts().iter().sum::<usize>(), 10_000);
    assert!(m.train.images.iter().all(|&p| (0.0..=1.0).contains(&p)));
    assert!(m.train.images.contains(&1.0) && m.train.images.contains(&0.0));
}

/// `read_idx_from` reads from memory what `read_idx` reads from a file, raw or gzip, with the
/// same errors naming the path it is given.
#[test]
fn reads_from_memory_as_from_a_file() {
    let raw = idx_bytes(&[4, 3, 5], &pixels(4, 3, 5));
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "f", &raw);
    let from_file = read_idx(&p, 3, "x").unwrap();
    for bytes in [raw.clone(), gzip(&raw)] {
        assert_eq!(read_idx_from(&bytes[..], &p, 3, "x").unwrap(), from_file);
    }
    let err = read_idx_from(&raw[..raw.len() - 1], Path::new("in/memory"), 3, "x").unwrap_err();
    assert_matches!(&err, DataError::Truncated { .. });
    assert!(err.to_string().starts_with("in/memory: "), "{err}");
}

/// Arrays not made by the reader (its fields are public) are checked before use: a wrong rank
/// or a length that is not the dimensions' product is an error, not an index out of bounds.
#[test]
fn data_sets_from_arrays_check_the_arrays() {
    let (ip, lp) = (Path::new("images"), Path::new("labels"));
    let array = |dims: &[usize], data: Vec<u8>| IdxArray {
        dims: dims.to_vec(),
        data,
    };
    let images = || array(&[2, 3, 5], pixels(2, 3, 5));
    let labels = || array(&[2], vec![1, 9]);
    let set = Dataset::from_idx_arrays(images(), ip, labels(), lp).unwrap();
    assert_eq!((set.len(), set.rows, set.cols), (2, 3, 5));
    assert_matches!(
        Dataset::from_idx_arrays(array(&[], vec![]), ip, labels(), lp).unwrap_err(),
        DataError::Rank {
            found: 0,
            expected: 3,
            ..
        }
    );
    assert_matches!(
        Dataset::from_idx_arrays(images(), ip, array(&[2], vec![1]), lp).unwrap_err(),
        DataError::Dimensions { ref path, .. } if path == lp
    );
    assert_matches!(
        Dataset::from_idx_arrays(array(&[0, 3, 5], vec![]), ip, labels(), lp).unwrap_err(),
        DataError::Dimensions {
            reason: "a dimension is zero",
            ..
        }
    );
    let huge = array(&[usize::MAX, 2, 2], vec![]);
    assert_matches!(
        Dataset::from_idx_arrays(huge, ip, labels(), lp).unwrap_err(),
        DataError::Dimensions { .. }
    );
}

/// A PNG of `width` x `height` gray pixels.
fn png(width: u32, height: u32) -> Vec<u8> {
    let img = image::GrayImage::from_fn(width, height, |x, y| image::Luma([(x * 9 + y) as u8]));
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

/// `picture::decode`: the format is the content's, the size is checked from the header before
/// the pixels are decoded, and every failure is one line naming the file.
#[test]
fn pictures_decode_or_say_why_not() {
    let path = Path::new("digit.png");
    let img = picture::decode(&png(28, 28), path, 28).unwrap();
    assert_eq!((img.width(), img.height()), (28, 28));
    // A PGM under a PNG's name is read as what it is.
    let pgm = [&b"P5\n28 28\n255\n"[..], &[7u8; 784]].concat();
    assert_eq!(
        picture::decode(&pgm, path, 28).unwrap().to_luma8().as_raw(),
        &[7u8; 784]
    );
    assert_matches!(
        picture::decode(&png(20, 28), path, 28).unwrap_err(),
        DataError::PictureSize {
            width: 20,
            height: 28,
            side: 28,
            ..
        }
    );
    // A header announcing 100000 x 100000 pixels is refused without decoding any.
    let big = b"P5\n100000 100000\n255\n";
    assert_matches!(
        picture::decode(big, path, 28).unwrap_err(),
        DataError::PictureSize { width: 100_000, .. }
    );
    let mut cut = png(28, 28);
    cut.truncate(cut.len() - 30);
    let short = [&b"P5\n28 28\n255\n"[..], &[7u8; 10]].concat();
    for (bytes, needle) in [
        (&b"not a picture"[..], "not a picture in a format read here"),
        (&short[..], "truncated"),
        (&cut[..], "digit.png: "),
    ] {
        let err = picture::decode(bytes, path, 28).unwrap_err();
        assert_matches!(&err, DataError::Picture { .. });
        let text = err.to_string();
        assert!(text.contains(needle) && !text.contains('\n'), "{text}");
    }
}
