//! A small byte-range source, so that codecs can read parts of a stored chunk (a shard's index,
//! some of its inner chunks) without knowing about stores.
//!
//! zarr-array implements [`ByteRangeSource`] for a key of any store; tests count requests with
//! a counting source.
//!
//! ```
//! use zarr_codecs::{ByteRange, ByteRangeSource, SourceError};
//!
//! let value: &[u8] = b"0123456789";
//! let got = value.get_ranges(&[ByteRange::Range { start: 2, end: 5 }, ByteRange::Suffix(3)])?;
//! assert_eq!(got, Some(vec![b"234".to_vec(), b"789".to_vec()]));
//! assert_eq!(value.size()?, Some(10));
//! # Ok::<(), SourceError>(())
//! ```

use std::error::Error as StdError;
use std::sync::Arc;

pub use zarr_buffer::ByteRange;

use crate::buffer::AlignedBuffer;
use crate::error::{CodecError, Result};

/// The error of a [`ByteRangeSource`]: whatever the underlying storage reported.
#[derive(Debug)]
pub struct SourceError {
    source: Box<dyn StdError + Send + Sync>,
    out_of_range: bool,
}

impl SourceError {
    /// Wraps any error (a store's error, an I/O error).
    pub fn new(source: impl Into<Box<dyn StdError + Send + Sync>>) -> Self {
        SourceError {
            source: source.into(),
            out_of_range: false,
        }
    }

    /// Wraps the error of a request for a byte range that does not lie inside the value: a
    /// sign that what the range came from (a kept shard index) no longer describes the value
    /// ([`SourceError::is_out_of_range`]).
    pub fn out_of_range(source: impl Into<Box<dyn StdError + Send + Sync>>) -> Self {
        SourceError {
            source: source.into(),
            out_of_range: true,
        }
    }

    /// Whether the request failed because a byte range does not lie inside the value
    /// ([`SourceError::out_of_range`]), rather than because the storage failed.
    pub fn is_out_of_range(&self) -> bool {
        self.out_of_range
    }

    /// The wrapped error.
    pub fn inner(&self) -> &(dyn StdError + Send + Sync + 'static) {
        &*self.source
    }

    /// Unwraps the error.
    pub fn into_inner(self) -> Box<dyn StdError + Send + Sync> {
        self.source
    }
}

// transparent, as `#[error(transparent)]` would be: its message and its sources are the
// wrapped error's
impl std::fmt::Display for SourceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&*self.source, f)
    }
}

impl StdError for SourceError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.source.source()
    }
}

/// One stored value (a chunk or shard) that can be read a few byte ranges at a time.
pub trait ByteRangeSource: Sync {
    /// Several byte ranges of the value in one request, in the order asked, or `None` when the
    /// value does not exist. Every range must lie inside the value; otherwise the request
    /// fails.
    ///
    /// # Errors
    /// Whatever the storage reports.
    fn get_ranges(&self, ranges: &[ByteRange]) -> Result<Option<Vec<Vec<u8>>>, SourceError>;

    /// The size of the value in bytes, or `None` when it does not exist.
    ///
    /// # Errors
    /// Whatever the storage reports.
    fn size(&self) -> Result<Option<u64>, SourceError>;

    /// The whole value, or `None` when it does not exist (one request).
    ///
    /// # Errors
    /// Whatever the storage reports.
    fn get(&self) -> Result<Option<Vec<u8>>, SourceError> {
        Ok(self
            .get_ranges(&[ByteRange::FromStart(0)])?
            .and_then(|mut parts| parts.pop()))
    }

    /// Whether a request for a small range costs little more than copying its bytes (a value
    /// in memory, a file opened once and read with positioned reads). A sharded read then
    /// fetches each inner chunk where it is decoded, in parallel, into a buffer of its own
    /// size that the allocator hands out again, instead of joining them into one request and
    /// one shard-sized buffer. `false` (the default): requests have latency (an object
    /// store), so they are joined.
    fn cheap_requests(&self) -> bool {
        false
    }

    /// The decoded shard index of this value kept from an earlier read, if the source keeps
    /// indexes (zarr-array's per-array index cache on a store whose requests have latency;
    /// the default keeps none). A sharded read then skips its index request. A read with a
    /// kept index that fails as a stale index would (the value gone or shorter, a range
    /// outside it, an inner chunk that does not decode) drops it ([`Self::drop_index`]),
    /// reads the index again and tries once more. Updates of a shard never use it: they read
    /// the stored index.
    fn cached_index(&self) -> Option<Arc<AlignedBuffer>> {
        None
    }

    /// Offers the decoded shard index just read from this value, for [`Self::cached_index`]
    /// of later reads (the default keeps nothing).
    fn keep_index(&self, index: &Arc<AlignedBuffer>) {
        let _ = index;
    }

    /// Drops the kept index of this value: a read with it failed as a stale index would.
    fn drop_index(&self) {}
}

#[derive(Debug, thiserror::Error)]
#[error("byte range {range} does not lie inside a value of {size} bytes")]
struct OutOfBounds {
    range: ByteRange,
    size: u64,
}

/// An in-memory value is a source (handy in tests and for values already read).
impl ByteRangeSource for [u8] {
    fn get_ranges(&self, ranges: &[ByteRange]) -> Result<Option<Vec<Vec<u8>>>, SourceError> {
        let size = self.len() as u64;
        let mut out = Vec::with_capacity(ranges.len());
        for &range in ranges {
            let r = range
                .resolve(size)
                .ok_or_else(|| SourceError::new(OutOfBounds { range, size }))?;
            // the range lies inside the slice, so both ends fit in usize
            out.push(self[r.start as usize..r.end as usize].to_vec());
        }
        Ok(Some(out))
    }

    fn size(&self) -> Result<Option<u64>, SourceError> {
        Ok(Some(self.len() as u64))
    }

    fn cheap_requests(&self) -> bool {
        true
    }
}

/// A missing value: every read returns `None`.
impl ByteRangeSource for Option<&[u8]> {
    fn get_ranges(&self, ranges: &[ByteRange]) -> Result<Option<Vec<Vec<u8>>>, SourceError> {
        match self {
            Some(v) => v.get_ranges(ranges),
            None => Ok(None),
        }
    }

    fn size(&self) -> Result<Option<u64>, SourceError> {
        Ok(self.map(|v| v.len() as u64))
    }

    fn cheap_requests(&self) -> bool {
        true
    }
}

impl ByteRangeSource for Vec<u8> {
    fn get_ranges(&self, ranges: &[ByteRange]) -> Result<Option<Vec<Vec<u8>>>, SourceError> {
        self.as_slice().get_ranges(ranges)
    }

    fn size(&self) -> Result<Option<u64>, SourceError> {
        self.as_slice().size()
    }

    fn cheap_requests(&self) -> bool {
        true
    }
}

impl<T: ByteRangeSource + ?Sized> ByteRangeSource for &T {
    fn get_ranges(&self, ranges: &[ByteRange]) -> Result<Option<Vec<Vec<u8>>>, SourceError> {
        (**self).get_ranges(ranges)
    }

    fn size(&self) -> Result<Option<u64>, SourceError> {
        (**self).size()
    }

    fn cheap_requests(&self) -> bool {
        (**self).cheap_requests()
    }

    fn cached_index(&self) -> Option<Arc<AlignedBuffer>> {
        (**self).cached_index()
    }

    fn keep_index(&self, index: &Arc<AlignedBuffer>) {
        (**self).keep_index(index);
    }

    fn drop_index(&self) {
        (**self).drop_index();
    }
}

/// The one range a single-range request returned, checked for length.
pub(crate) fn single_range(mut got: Vec<Vec<u8>>, expected: u64) -> Result<Vec<u8>> {
    if got.len() != 1 {
        return Err(CodecError::SourceRanges {
            expected: 1,
            got: got.len(),
        });
    }
    let bytes = got.pop().unwrap_or_default();
    if bytes.len() as u64 != expected {
        return Err(CodecError::ShortRead {
            expected,
            got: bytes.len() as u64,
        });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_and_out_of_bounds() {
        assert_eq!(ByteRange::Suffix(4).resolve(10), Some(6..10));
        assert_eq!(ByteRange::Range { start: 5, end: 4 }.resolve(10), None);
        assert_eq!(ByteRange::FromStart(11).resolve(10), None);
        let v: &[u8] = b"abc";
        let err = v.get_ranges(&[ByteRange::Suffix(4)]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "byte range -4 does not lie inside a value of 3 bytes"
        );
        let missing: Option<&[u8]> = None;
        assert_eq!(missing.get().unwrap(), None);
    }
}
