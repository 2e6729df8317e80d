//! Byte ranges for partial reads: [`ByteRange`] (zarr-buffer's, the one range type of the
//! workspace) and resolving a request's ranges against a value's size.

use std::ops::Range;

pub use zarr_buffer::ByteRange;

use crate::error::{Result, StoreError};

/// Resolves `ranges` against a value of `size` bytes, all of them before anything is read or
/// allocated: [`StoreError::RangeOutOfBounds`] names the first range that does not lie inside
/// the value.
pub(crate) fn resolve_all(key: &str, ranges: &[ByteRange], size: u64) -> Result<Vec<Range<usize>>> {
    ranges
        .iter()
        .map(|&range| {
            let bytes = range
                .resolve(size)
                .ok_or_else(|| StoreError::RangeOutOfBounds {
                    key: key.to_owned(),
                    range,
                    size,
                })?;
            match (usize::try_from(bytes.start), usize::try_from(bytes.end)) {
                (Ok(start), Ok(end)) => Ok(start..end),
                _ => Err(StoreError::io(
                    key,
                    std::io::Error::new(
                        std::io::ErrorKind::InvalidInput,
                        "byte range does not fit in this platform's address space",
                    ),
                )),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_all_reports_the_first_bad_range() {
        let ranges = [
            ByteRange::FromStart(1),
            ByteRange::Suffix(4),
            ByteRange::Suffix(3),
        ];
        match resolve_all("k", &ranges, 3) {
            Err(StoreError::RangeOutOfBounds { key, range, size }) => {
                assert_eq!((key.as_str(), range, size), ("k", ByteRange::Suffix(4), 3));
            }
            other => panic!("expected RangeOutOfBounds, got {other:?}"),
        }
        let ok = resolve_all("k", &ranges[..2], 4).ok();
        assert_eq!(ok, Some(vec![1..4, 0..4]));
    }

    #[test]
    fn out_of_bounds_message() {
        let err = StoreError::RangeOutOfBounds {
            key: "a/c/0".into(),
            range: ByteRange::Suffix(5),
            size: 3,
        };
        assert_eq!(
            err.to_string(),
            "byte range -5 is out of bounds for key \"a/c/0\" of 3 bytes"
        );
    }
}
