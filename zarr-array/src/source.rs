//! The byte-range source of zarr-codecs, implemented for a key of any store.

use zarr_codecs::{ByteRange, ByteRangeSource, CodecChain, SourceError};
use zarr_store::{Store, StoreError, StoredValue};

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
pub(crate) struct ValueSource<'a> {
    value: &'a dyn StoredValue,
    /// Whether its store's ranged reads are cheap ([`Store::cheap_ranged_reads`]).
    cheap: bool,
}

impl<'a> ValueSource<'a> {
    /// The opened `value` of `store`.
    pub(crate) fn new(store: &dyn Store, value: &'a dyn StoredValue) -> Self {
        ValueSource {
            value,
            cheap: store.cheap_ranged_reads(),
        }
    }
}

impl ByteRangeSource for ValueSource<'_> {
    fn get_ranges(&self, ranges: &[ByteRange]) -> Result<Option<Vec<Vec<u8>>>, SourceError> {
        self.value
            .get_ranges(ranges)
            .map(Some)
            .map_err(SourceError::new)
    }

    fn size(&self) -> Result<Option<u64>, SourceError> {
        Ok(Some(self.value.size()))
    }

    fn cheap_requests(&self) -> bool {
        self.cheap
    }
}

/// Calls `read` with a source of the chunk at `key` of `store`, encoded by `chain`, that serves
/// a read of a part of it best. For a sharded chunk on a store of cheap ranged reads
/// ([`Store::cheap_ranged_reads`], a local file) that is the value opened once: every range
/// comes from the version opened, and each inner chunk is read where it is decoded. Otherwise
/// it is the key, read range by range ([`StoreSource`]).
///
/// # Errors
/// Opening the value fails.
pub(crate) fn with_part_source<R>(
    store: &dyn Store,
    key: &str,
    chain: &CodecChain,
    read: impl FnOnce(&dyn ByteRangeSource) -> R,
) -> Result<R, StoreError> {
    let sharded = chain.partial_decoder().inner_chunk_shape().is_some();
    if sharded && store.cheap_ranged_reads() {
        return Ok(match store.open_value(key)? {
            Some(value) => read(&ValueSource::new(store, &*value)),
            // not stored: every read of it says so
            None => read(&None::<&[u8]>),
        });
    }
    Ok(read(&StoreSource::new(store, key)))
}
