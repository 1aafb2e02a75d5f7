//! [`DataError`]: what can be wrong with a data file or directory.

use std::path::PathBuf;

/// What is wrong with an IDX file, an MNIST directory or a picture. Every variant names the file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DataError {
    /// The file could not be opened or read.
    #[error("{}: cannot read: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The file starts like gzip but its stream is corrupt or cut short.
    #[error("{}: corrupt or truncated gzip stream: {source}", path.display())]
    Gzip {
        /// The file.
        path: PathBuf,
        /// flate2's error.
        #[source]
        source: std::io::Error,
    },
    /// The first two bytes are not zero, so this is not an IDX file.
    #[error(
        "{}: not an IDX file (magic number {found:#010x}; an IDX file starts with two zero bytes)",
        path.display()
    )]
    Magic {
        /// The file.
        path: PathBuf,
        /// The first four bytes, big-endian.
        found: u32,
    },
    /// The element type (third byte) is not unsigned byte (`0x08`).
    #[error(
        "{}: element type {found:#04x} is not supported (only unsigned byte, 0x08)",
        path.display()
    )]
    ElementType {
        /// The file.
        path: PathBuf,
        /// The third byte of the header.
        found: u8,
    },
    /// The number of dimensions (fourth byte) is not what this file should have.
    #[error("{}: {found} dimensions, expected {expected} ({what})", path.display())]
    Rank {
        /// The file.
        path: PathBuf,
        /// Dimensions in the header.
        found: u8,
        /// Dimensions expected.
        expected: u8,
        /// What the file should hold, e.g. "images: count, rows, columns".
        what: &'static str,
    },
    /// A dimension is zero, or the total size does not fit in memory.
    #[error("{}: bad dimensions {dims:?}: {reason}", path.display())]
    Dimensions {
        /// The file.
        path: PathBuf,
        /// The dimensions in the header.
        dims: Vec<u32>,
        /// Why they are refused.
        reason: &'static str,
    },
    /// The file ends before the header or the data it announces is complete.
    #[error(
        "{}: truncated: {found} bytes, but its header announces {expected} (header included)",
        path.display()
    )]
    Truncated {
        /// The file.
        path: PathBuf,
        /// Bytes announced (header included; for a cut header, the header's length so far).
        expected: u64,
        /// Bytes present (after gzip decompression).
        found: u64,
    },
    /// Bytes follow the data the header announces.
    #[error(
        "{}: trailing bytes after the {expected} bytes its header announces (header included)",
        path.display()
    )]
    Padded {
        /// The file.
        path: PathBuf,
        /// Bytes announced (header included).
        expected: u64,
    },
    /// The images and labels files disagree on the number of samples.
    #[error(
        "{} holds {images} images but {} holds {labels} labels",
        images_path.display(),
        labels_path.display()
    )]
    CountMismatch {
        /// The images file.
        images_path: PathBuf,
        /// Images in it.
        images: usize,
        /// The labels file.
        labels_path: PathBuf,
        /// Labels in it.
        labels: usize,
    },
    /// A label is not a class index (`0..10`).
    #[error("{}: label {label} at index {index} is not a class (expected 0..{classes})", path.display())]
    Label {
        /// The labels file.
        path: PathBuf,
        /// The sample index.
        index: usize,
        /// The label found.
        label: u8,
        /// The number of classes.
        classes: usize,
    },
    /// The training and test images have different sizes.
    #[error(
        "{}: images are {found_rows}x{found_cols}, but the training images are {rows}x{cols}",
        path.display()
    )]
    ImageShape {
        /// The test images file.
        path: PathBuf,
        /// Rows of the training images.
        rows: usize,
        /// Columns of the training images.
        cols: usize,
        /// Rows found.
        found_rows: usize,
        /// Columns found.
        found_cols: usize,
    },
    /// A picture is in no format read here, or malformed or truncated.
    #[error("{}: {reason}", path.display())]
    Picture {
        /// The picture's file.
        path: PathBuf,
        /// What is wrong (the decoder's words, on one line).
        reason: String,
    },
    /// A picture is not of the model's input size.
    #[error("{}: the image is {width}x{height}, the model takes {side}x{side}", path.display())]
    PictureSize {
        /// The picture's file.
        path: PathBuf,
        /// Its width in pixels.
        width: u32,
        /// Its height in pixels.
        height: u32,
        /// The model's input side.
        side: usize,
    },
    /// A picture is larger than pictures are read ([`super::picture::decode_up_to`]).
    #[error(
        "{}: the image is {width}x{height}, larger than the {max}x{max} pixels read",
        path.display()
    )]
    PictureTooLarge {
        /// The picture's file.
        path: PathBuf,
        /// Its width in pixels.
        width: u32,
        /// Its height in pixels.
        height: u32,
        /// The largest side read.
        max: u32,
    },
    /// None of the accepted spellings of a file exists in the directory.
    #[error("{}: no {name} file (looked for {})", dir.display(), candidates.join(", "))]
    NotFound {
        /// The directory.
        dir: PathBuf,
        /// The file's role, e.g. "training images".
        name: &'static str,
        /// The file names tried.
        candidates: Vec<String>,
    },
}
