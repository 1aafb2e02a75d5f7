//! Data sets on the host: the IDX file format and the MNIST training and test sets.
//!
//! - [`idx`]: one IDX file (raw or gzip) into a checked array of unsigned bytes.
//! - [`mnist`]: the four files of MNIST (or any data set in its format, such as Fashion-MNIST) into
//!   a [`Dataset`] of pixels scaled to `[0, 1]` and labels.
//!
//! Every malformed file is a [`DataError`] naming the file and what is wrong; nothing panics.

mod error;
pub mod idx;
pub mod mnist;

pub use error::DataError;
pub use idx::{IdxArray, read_idx};
pub use mnist::{CLASSES, Dataset, Mnist, Split};

#[cfg(test)]
mod tests;
