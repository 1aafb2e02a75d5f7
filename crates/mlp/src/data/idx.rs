//! The IDX file format (LeCun et al., <http://yann.lecun.com/exdb/mnist/>), raw or gzip-compressed.
//!
//! An IDX file is a big-endian header followed by the data, row-major:
//!
//! | bytes           | content                                              |
//! |-----------------|------------------------------------------------------|
//! | 0, 1            | zero                                                 |
//! | 2               | element type (`0x08`: unsigned byte; the only one read here) |
//! | 3               | number of dimensions `d`                             |
//! | 4 .. 4 + 4d     | each dimension, `u32` big-endian                     |
//! | 4 + 4d ..       | `dim0 * dim1 * ...` elements                         |
//!
//! A file starting with the gzip magic bytes `1f 8b` is decompressed first (flate2), whatever its
//! name. The reader checks the header and that exactly the announced number of bytes follows it.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use flate2::read::GzDecoder;

use super::DataError;

/// The IDX element type code of unsigned bytes.
pub const UNSIGNED_BYTE: u8 = 0x08;

/// Preallocate at most this many bytes before data arrives (a header cannot make us allocate more).
const MAX_PREALLOCATION: u64 = 64 << 20;

/// A checked IDX array of unsigned bytes: `dims` from the header, `data` row-major with
/// `data.len() == dims.iter().product()`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdxArray {
    /// The dimensions, outermost first (e.g. `[count, rows, columns]` for images).
    pub dims: Vec<usize>,
    /// The elements, row-major.
    pub data: Vec<u8>,
}

/// Reads the IDX file at `path` (raw or gzip), expecting `rank` dimensions; `what` describes them
/// in errors (e.g. `"images: count, rows, columns"`).
///
/// # Errors
/// [`DataError::Io`] if the file cannot be opened, then as [`read_idx_from`].
pub fn read_idx(path: &Path, rank: u8, what: &'static str) -> Result<IdxArray, DataError> {
    let file = File::open(path).map_err(|source| DataError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    read_idx_from(BufReader::new(file), path, rank, what)
}

/// Reads an IDX file (raw or gzip) from `source`, expecting `rank` dimensions; `path` names it
/// in errors and `what` describes the dimensions (e.g. `"images: count, rows, columns"`).
/// Reading stops one byte after the data the header announces.
///
/// # Errors
/// [`DataError::Io`] if `source` fails, [`DataError::Gzip`] for a corrupt gzip stream,
/// [`DataError::Magic`], [`DataError::ElementType`], [`DataError::Rank`],
/// [`DataError::Dimensions`] (a zero dimension or a size that overflows) for a bad header,
/// [`DataError::Truncated`] and [`DataError::Padded`] when fewer or more bytes than announced follow.
pub fn read_idx_from(
    source: impl Read,
    path: &Path,
    rank: u8,
    what: &'static str,
) -> Result<IdxArray, DataError> {
    let io_err = |source| DataError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = source;
    let mut first = [0u8; 2];
    let n = read_up_to(&mut file, &mut first).map_err(io_err)?;
    let prefix = std::io::Cursor::new(first[..n].to_vec());
    let gzip = n == 2 && first == [0x1f, 0x8b];
    let mut reader: Box<dyn Read + '_> = if gzip {
        Box::new(GzDecoder::new(prefix.chain(file)))
    } else {
        Box::new(prefix.chain(file))
    };
    let stream_err = |source| {
        if gzip {
            DataError::Gzip {
                path: path.to_path_buf(),
                source,
            }
        } else {
            DataError::Io {
                path: path.to_path_buf(),
                source,
            }
        }
    };
    let truncated = |expected: u64, found: u64| DataError::Truncated {
        path: path.to_path_buf(),
        expected,
        found,
    };

    let mut magic = [0u8; 4];
    let got = read_up_to(&mut reader, &mut magic).map_err(stream_err)?;
    if got >= 2 && magic[..2] != [0, 0] || got == 1 && magic[0] != 0 {
        return Err(DataError::Magic {
            path: path.to_path_buf(),
            found: u32::from_be_bytes(magic),
        });
    }
    if got < 4 {
        return Err(truncated(4, got as u64));
    }
    if magic[2] != UNSIGNED_BYTE {
        return Err(DataError::ElementType {
            path: path.to_path_buf(),
            found: magic[2],
        });
    }
    if magic[3] != rank {
        return Err(DataError::Rank {
            path: path.to_path_buf(),
            found: magic[3],
            expected: rank,
            what,
        });
    }
    let header_len = 4 + 4 * u64::from(rank);
    let mut dim_bytes = vec![0u8; 4 * usize::from(rank)];
    let got = read_up_to(&mut reader, &mut dim_bytes).map_err(stream_err)?;
    if got < dim_bytes.len() {
        return Err(truncated(header_len, 4 + got as u64));
    }
    let dims: Vec<u32> = dim_bytes
        .chunks_exact(4)
        .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let bad_dims = |reason| DataError::Dimensions {
        path: path.to_path_buf(),
        dims: dims.clone(),
        reason,
    };
    if dims.contains(&0) {
        return Err(bad_dims("a dimension is zero"));
    }
    let count = dims
        .iter()
        .try_fold(1u64, |acc, &d| acc.checked_mul(u64::from(d)))
        .filter(|&c| usize::try_from(c).is_ok())
        .ok_or_else(|| bad_dims("the number of elements does not fit in memory"))?;

    // Read one byte more than announced, to tell a padded file from an exact one.
    let mut data = Vec::with_capacity(count.min(MAX_PREALLOCATION) as usize);
    (&mut reader)
        .take(count + 1)
        .read_to_end(&mut data)
        .map_err(stream_err)?;
    let found = data.len() as u64;
    if found < count {
        return Err(truncated(header_len + count, header_len + found));
    }
    if found > count {
        return Err(DataError::Padded {
            path: path.to_path_buf(),
            expected: header_len + count,
        });
    }
    Ok(IdxArray {
        dims: dims.iter().map(|&d| d as usize).collect(),
        data,
    })
}

/// Reads until `buf` is full or the stream ends; returns the bytes read.
fn read_up_to(reader: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}
