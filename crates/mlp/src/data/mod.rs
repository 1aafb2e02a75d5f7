//! Data sets on the host: the IDX file format and the MNIST training and test sets.
//!
//! - [`idx`]: one IDX file (raw or gzip) into a checked array of unsigned bytes.
//! - [`mnist`]: the four files of MNIST (or any data set in its format, such as Fashion-MNIST) into
//!   a [`Dataset`] of pixels scaled to `[0, 1]` and labels.
//! - [`picture`]: a decoded picture (PNG, PGM, ...) into input pixels: the rule for colour and
//!   transparency.
//!
//! Every malformed file is a [`DataError`] naming the file and what is wrong; nothing panics.

mod error;
pub mod idx;
pub mod mnist;
pub mod picture;

pub use error::DataError;
pub use idx::{IdxArray, read_idx, read_idx_from};
pub use mnist::{CLASSES, Dataset, Mnist, Split};

#[cfg(test)]
mod tests;
