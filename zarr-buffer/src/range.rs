//! [`ByteRange`]: a range of bytes within a stored value, for partial reads.

use std::fmt;
use std::ops::{Range, RangeFrom};

/// A range of bytes within a stored value: what a partial read asks a store (`zarr_store`'s
/// `Store::get_ranges`) or a codec's byte-range source for.
///
/// A range must lie inside the value: a range that does not is an error
/// of the store or source, never a shorter result.
///
/// ```
/// use zarr_buffer::ByteRange;
///
/// assert_eq!(ByteRange::Range { start: 2, end: 5 }.resolve(10), Some(2..5));
/// assert_eq!(ByteRange::FromStart(7).resolve(10), Some(7..10));
/// assert_eq!(ByteRange::Suffix(4).resolve(10), Some(6..10));
/// assert_eq!(ByteRange::Suffix(11).resolve(10), None);
/// assert_eq!(ByteRange::from(3..4), ByteRange::Range { start: 3, end: 4 });
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ByteRange {
    /// Bytes `start..end` (`end` exclusive); `start <= end <= size` is required.
    Range {
        /// The first byte.
        start: u64,
        /// One past the last byte.
        end: u64,
    },
    /// Bytes from the offset to the end of the value; `offset <= size` is required.
    FromStart(u64),
    /// The last `len` bytes of the value; `len <= size` is required.
    Suffix(u64),
}

impl ByteRange {
    /// The bytes this range selects in a value of `size` bytes, or `None` when the range does
    /// not lie inside the value.
    #[must_use]
    pub fn resolve(self, size: u64) -> Option<Range<u64>> {
        match self {
            Self::Range { start, end } if start <= end && end <= size => Some(start..end),
            Self::FromStart(offset) if offset <= size => Some(offset..size),
            Self::Suffix(len) if len <= size => Some(size - len..size),
            _ => None,
        }
    }
}

/// `start..end`, `offset..` or `-len` (the last `len` bytes, as in HTTP ranges).
impl fmt::Display for ByteRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Range { start, end } => write!(f, "{start}..{end}"),
            Self::FromStart(offset) => write!(f, "{offset}.."),
            Self::Suffix(len) => write!(f, "-{len}"),
        }
    }
}

impl From<Range<u64>> for ByteRange {
    fn from(range: Range<u64>) -> Self {
        Self::Range {
            start: range.start,
            end: range.end,
        }
    }
}

impl From<RangeFrom<u64>> for ByteRange {
    fn from(range: RangeFrom<u64>) -> Self {
        Self::FromStart(range.start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_bounds() {
        let r = |start, end| ByteRange::Range { start, end };
        assert_eq!(r(0, 0).resolve(0), Some(0..0));
        assert_eq!(r(0, 10).resolve(10), Some(0..10));
        assert_eq!(r(10, 10).resolve(10), Some(10..10));
        assert_eq!(r(0, 11).resolve(10), None);
        assert_eq!(r(11, 11).resolve(10), None);
        assert_eq!(r(5, 4).resolve(10), None);
        assert_eq!(r(u64::MAX, u64::MAX).resolve(10), None);
        assert_eq!(ByteRange::FromStart(10).resolve(10), Some(10..10));
        assert_eq!(ByteRange::FromStart(11).resolve(10), None);
        assert_eq!(ByteRange::Suffix(0).resolve(0), Some(0..0));
        assert_eq!(ByteRange::Suffix(10).resolve(10), Some(0..10));
        assert_eq!(ByteRange::Suffix(u64::MAX).resolve(10), None);
    }

    #[test]
    fn display() {
        assert_eq!(ByteRange::from(1..3).to_string(), "1..3");
        assert_eq!(ByteRange::from(4..).to_string(), "4..");
        assert_eq!(ByteRange::Suffix(5).to_string(), "-5");
    }
}
