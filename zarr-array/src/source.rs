//! The byte-range source of zarr-codecs, implemented for a key of any store.

use zarr_codecs::{ByteRange, ByteRangeSource, SourceError};
use zarr_store::{Store, StoredValue};

/// One stored value (a chunk or shard) read through a store, range by range.
#[derive(Debug)]
pub struct StoreSource<'a> {
    store: &'a dyn Store,
    key: &'a str,
}

impl<'a> StoreSource<'a> {
    /// The value at `key` of `store`.
    pub fn new(store: &'a dyn Store, key: &'a str) -> Self {
        StoreSource { store, key }
    }
}

impl ByteRangeSource for StoreSource<'_> {
    fn get_ranges(&self, ranges: &[ByteRange]) -> Result<Option<Vec<Vec<u8>>>, SourceError> {
        // one range type for the whole stack (zarr-buffer's): no conversion
        self.store
            .get_ranges(self.key, ranges)
            .map_err(SourceError::new)
    }

    fn size(&self) -> Result<Option<u64>, SourceError> {
        self.store.size(self.key).map_err(SourceError::new)
    }

    fn get(&self) -> Result<Option<Vec<u8>>, SourceError> {
        self.store.get(self.key).map_err(SourceError::new)
    }
}

/// A value opened by [`Store::open_value`], read range by range: every read sees the version
/// opened.
pub(crate) struct ValueSource<'a>(pub(crate) &'a dyn StoredValue);

impl ByteRangeSource for ValueSource<'_> {
    fn get_ranges(&self, ranges: &[ByteRange]) -> Result<Option<Vec<Vec<u8>>>, SourceError> {
        self.0
            .get_ranges(ranges)
            .map(Some)
            .map_err(SourceError::new)
    }

    fn size(&self) -> Result<Option<u64>, SourceError> {
        Ok(Some(self.0.size()))
    }
}
