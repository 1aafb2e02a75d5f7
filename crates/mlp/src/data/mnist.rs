//! The MNIST training and test sets (LeCun et al. 1998), or any data set in the same four-file
//! IDX layout with 10 classes (e.g. Fashion-MNIST, Xiao et al. 2017).
//!
//! A directory holds `train-images`, `train-labels`, `t10k-images` and `t10k-labels`, each
//! spelled `NAME-idxD-ubyte` (the original site, Debian's `dataset-fashion-mnist`) or
//! `NAME.idxD-ubyte` (some mirrors), raw or with `.gz`.

use std::path::{Path, PathBuf};

use super::{DataError, IdxArray, read_idx};

/// What the dimensions of an images file are, in errors.
const IMAGE_DIMS: &str = "images: count, rows, columns";
/// What the dimension of a labels file is, in errors.
const LABEL_DIMS: &str = "labels: count";

/// [`DataError::Rank`] unless `array` has `rank` dimensions, [`DataError::Dimensions`] unless
/// they are nonzero and give its length.
fn check_array(
    array: &IdxArray,
    path: &Path,
    rank: u8,
    what: &'static str,
) -> Result<(), DataError> {
    if array.dims.len() != usize::from(rank) {
        return Err(DataError::Rank {
            path: path.to_path_buf(),
            found: u8::try_from(array.dims.len()).unwrap_or(u8::MAX),
            expected: rank,
            what,
        });
    }
    let len = array
        .dims
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d));
    let reason = if array.dims.contains(&0) {
        Some("a dimension is zero")
    } else if len != Some(array.data.len()) {
        Some("the data's length is not the product of the dimensions")
    } else {
        None
    };
    match reason {
        None => Ok(()),
        Some(reason) => Err(DataError::Dimensions {
            path: path.to_path_buf(),
            dims: array
                .dims
                .iter()
                .map(|&d| u32::try_from(d).unwrap_or(u32::MAX))
                .collect(),
            reason,
        }),
    }
}

/// The number of classes (digits 0-9, or the ten Fashion-MNIST garment classes).
pub const CLASSES: usize = 10;

/// A set of labelled images on the host.
#[derive(Clone, Debug, PartialEq)]
pub struct Dataset {
    /// Pixels scaled to `[0, 1]` (byte / 255), `[len, rows * cols]`, row-major; each image is
    /// row-major too (MNIST: white digit, 1.0, on black background, 0.0).
    pub images: Vec<f32>,
    /// Class indices in `0..CLASSES`, `[len]`.
    pub labels: Vec<u32>,
    /// Image height in pixels.
    pub rows: usize,
    /// Image width in pixels.
    pub cols: usize,
}

impl Dataset {
    /// The number of samples.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Whether there is no sample.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// Features per sample: `rows * cols`.
    pub fn features(&self) -> usize {
        self.rows * self.cols
    }

    /// Keeps the first `limit` samples (all of them if there are fewer).
    pub fn truncate(&mut self, limit: usize) {
        let n = limit.min(self.len());
        self.labels.truncate(n);
        self.images.truncate(n * self.features());
    }

    /// The number of samples of each class, `[CLASSES]`.
    pub fn class_counts(&self) -> [usize; CLASSES] {
        let mut counts = [0; CLASSES];
        for &l in &self.labels {
            counts[l as usize] += 1;
        }
        counts
    }

    /// Reads an images file (3 dimensions: count, rows, columns) and a labels file (1 dimension:
    /// count) and checks that they agree and that every label is below [`CLASSES`].
    ///
    /// # Errors
    /// Any [`DataError`] of [`read_idx`] and of [`Dataset::from_idx_arrays`].
    pub fn from_idx_files(images_path: &Path, labels_path: &Path) -> Result<Dataset, DataError> {
        let images = read_idx(images_path, 3, IMAGE_DIMS)?;
        let labels = read_idx(labels_path, 1, LABEL_DIMS)?;
        Self::from_idx_arrays(images, images_path, labels, labels_path)
    }

    /// The data set of an images array (3 dimensions: count, rows, columns) and a labels array
    /// (1 dimension: count), read from the files named in errors: checks that they agree and
    /// that every label is below [`CLASSES`].
    ///
    /// # Errors
    /// [`DataError::Rank`] or [`DataError::Dimensions`] for an array whose dimensions are not
    /// those or do not give its length (arrays not made by [`read_idx`]),
    /// [`DataError::CountMismatch`], [`DataError::Label`].
    pub fn from_idx_arrays(
        images: IdxArray,
        images_path: &Path,
        labels: IdxArray,
        labels_path: &Path,
    ) -> Result<Dataset, DataError> {
        for (array, path, rank, what) in [
            (&images, images_path, 3, IMAGE_DIMS),
            (&labels, labels_path, 1, LABEL_DIMS),
        ] {
            check_array(array, path, rank, what)?;
        }
        if images.dims[0] != labels.dims[0] {
            return Err(DataError::CountMismatch {
                images_path: images_path.to_path_buf(),
                images: images.dims[0],
                labels_path: labels_path.to_path_buf(),
                labels: labels.dims[0],
            });
        }
        if let Some((index, &label)) = labels
            .data
            .iter()
            .enumerate()
            .find(|&(_, &l)| usize::from(l) >= CLASSES)
        {
            return Err(DataError::Label {
                path: labels_path.to_path_buf(),
                index,
                label,
                classes: CLASSES,
            });
        }
        Ok(Dataset {
            images: images.data.iter().map(|&b| f32::from(b) / 255.0).collect(),
            labels: labels.data.iter().map(|&l| u32::from(l)).collect(),
            rows: images.dims[1],
            cols: images.dims[2],
        })
    }
}

/// Which half of the data set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Split {
    /// The training set (`train-*`, 60,000 samples for MNIST).
    Train,
    /// The test set (`t10k-*`, 10,000 samples for MNIST).
    Test,
}

impl Split {
    fn prefix(self) -> &'static str {
        match self {
            Split::Train => "train",
            Split::Test => "t10k",
        }
    }
}

/// Finds a file of the data set in `dir`: `kind` is `"images"` (idx3) or `"labels"` (idx1).
///
/// # Errors
/// [`DataError::NotFound`] listing the spellings tried.
pub fn find_file(dir: &Path, split: Split, kind: &'static str) -> Result<PathBuf, DataError> {
    let rank = if kind == "images" { 3 } else { 1 };
    let stem = format!("{}-{kind}", split.prefix());
    let candidates: Vec<String> = ['-', '.']
        .iter()
        .flat_map(|sep| {
            let raw = format!("{stem}{sep}idx{rank}-ubyte");
            [format!("{raw}.gz"), raw]
        })
        .collect();
    candidates
        .iter()
        .map(|c| dir.join(c))
        .find(|p| p.is_file())
        .ok_or_else(|| DataError::NotFound {
            dir: dir.to_path_buf(),
            name: match (split, rank) {
                (Split::Train, 3) => "training images",
                (Split::Train, _) => "training labels",
                (Split::Test, 3) => "test images",
                (Split::Test, _) => "test labels",
            },
            candidates,
        })
}

/// The training and test sets of one directory.
#[derive(Clone, Debug, PartialEq)]
pub struct Mnist {
    /// The training set.
    pub train: Dataset,
    /// The test set (same image size as the training set).
    pub test: Dataset,
}

impl Mnist {
    /// Loads both sets from `dir` (see the module docs for the file names).
    ///
    /// # Errors
    /// [`DataError::NotFound`], any error of [`Dataset::from_idx_files`], and
    /// [`DataError::ImageShape`] if the test images differ in size from the training images.
    pub fn load(dir: &Path) -> Result<Mnist, DataError> {
        let train = Self::load_split(dir, Split::Train)?;
        let test = Self::load_split(dir, Split::Test)?;
        if (test.rows, test.cols) != (train.rows, train.cols) {
            return Err(DataError::ImageShape {
                path: find_file(dir, Split::Test, "images")?,
                rows: train.rows,
                cols: train.cols,
                found_rows: test.rows,
                found_cols: test.cols,
            });
        }
        Ok(Mnist { train, test })
    }

    /// Loads one set from `dir`.
    ///
    /// # Errors
    /// As [`Mnist::load`], without the shape comparison.
    pub fn load_split(dir: &Path, split: Split) -> Result<Dataset, DataError> {
        let images = find_file(dir, split, "images")?;
        let labels = find_file(dir, split, "labels")?;
        Dataset::from_idx_files(&images, &labels)
    }
}
