//! The byte-range source of zarr-codecs, implemented for a key of any store.

use std::sync::Arc;

use zarr_codecs::{AlignedBuffer, ByteRange, ByteRangeSource, CodecChain, SourceError};
use zarr_store::{Store, StoreError, StoredValue};

use crate::cache::ChunkCache;

/// The shard index cache of an array for the reads of one operation, and the cache's
/// generation before the operation's first request ([`crate::Array::index_hook`]).
pub(crate) type IndexHook<'a> = Option<(&'a ChunkCache, u64)>;

/// One stored value (a chunk or shard) read through a store, range by range.
#[derive(Debug)]
pub struct StoreSource<'a> {
    store: &'a dyn Store,
    key: &'a str,
    indexes: IndexHook<'a>,
}

impl<'a> StoreSource<'a> {
    /// The value at `key` of `store`.
    pub fn new(store: &'a dyn Store, key: &'a str) -> Self {
        StoreSource {
            store,
            key,
            indexes: None,
        }
    }

    /// The value at `key` of `store`, whose shard index is kept in (and taken from) the
    /// array's index cache.
    pub(crate) fn with_indexes(store: &'a dyn Store, key: &'a str, indexes: IndexHook<'a>) -> Self {
        StoreSource {
            store,
            key,
            indexes,
        }
    }
}

impl ByteRangeSource for StoreSource<'_> {
    fn get_ranges(&self, ranges: &[ByteRange]) -> Result<Option<Vec<Vec<u8>>>, SourceError> {
        // one range type for the whole stack (zarr-buffer's): no conversion
        self.store
            .get_ranges(self.key, ranges)
            .map_err(source_error)
    }

    fn cached_index(&self) -> Option<Arc<AlignedBuffer>> {
        cached_index(self.indexes, self.key)
    }

    fn keep_index(&self, index: &Arc<AlignedBuffer>) {
        keep_index(self.indexes, self.key, index);
    }

    fn drop_index(&self) {
        drop_index(self.indexes, self.key);
    }

    fn size(&self) -> Result<Option<u64>, SourceError> {
        self.store.size(self.key).map_err(SourceError::new)
    }

    fn get(&self) -> Result<Option<Vec<u8>>, SourceError> {
        self.store.get(self.key).map_err(SourceError::new)
    }
}

/// A store's error as a source's: a range outside the value is a sign that the ranges came
/// from a stale shard index ([`SourceError::out_of_range`]).
fn source_error(e: StoreError) -> SourceError {
    match e {
        StoreError::RangeOutOfBounds { .. } => SourceError::out_of_range(e),
        e => SourceError::new(e),
    }
}

/// The index of the shard at `key` kept in `indexes`, if any.
fn cached_index(indexes: IndexHook<'_>, key: &str) -> Option<Arc<AlignedBuffer>> {
    let (cache, _) = indexes?;
    cache.get(key)?
}

/// Keeps the index of the shard at `key` in `indexes` (unless a write came since the read
/// began).
fn keep_index(indexes: IndexHook<'_>, key: &str, index: &Arc<AlignedBuffer>) {
    if let Some((cache, generation)) = indexes {
        cache.insert(generation, key, Some(index.clone()));
    }
}

/// Drops the kept index of the shard at `key`: a read found it stale.
fn drop_index(indexes: IndexHook<'_>, key: &str) {
    if let Some((cache, _)) = indexes {
        cache.forget(key);
    }
}

/// A value opened by [`Store::open_value`], read range by range: every read sees the version
/// opened.
pub(crate) struct ValueSource<'a> {
    value: &'a dyn StoredValue,
    /// Whether its store's ranged reads are cheap ([`Store::cheap_ranged_reads`]).
    cheap: bool,
    /// Its key and the index cache for a read ([`ValueSource::with_indexes`]).
    key: &'a str,
    indexes: IndexHook<'a>,
}

impl<'a> ValueSource<'a> {
    /// The opened `value` of `store`.
    pub(crate) fn new(store: &dyn Store, value: &'a dyn StoredValue) -> Self {
        ValueSource {
            value,
            cheap: store.cheap_ranged_reads(),
            key: "",
            indexes: None,
        }
    }

    /// The opened `value` at `key` of `store`, whose shard index is kept in (and taken from)
    /// the array's index cache, for a read.
    fn with_indexes(
        store: &dyn Store,
        value: &'a dyn StoredValue,
        key: &'a str,
        indexes: IndexHook<'a>,
    ) -> Self {
        ValueSource {
            key,
            indexes,
            ..ValueSource::new(store, value)
        }
    }
}

impl ByteRangeSource for ValueSource<'_> {
    fn get_ranges(&self, ranges: &[ByteRange]) -> Result<Option<Vec<Vec<u8>>>, SourceError> {
        self.value
            .get_ranges(ranges)
            .map(Some)
            .map_err(source_error)
    }

    fn size(&self) -> Result<Option<u64>, SourceError> {
        Ok(Some(self.value.size()))
    }

    fn cheap_requests(&self) -> bool {
        self.cheap
    }

    fn cached_index(&self) -> Option<Arc<AlignedBuffer>> {
        cached_index(self.indexes, self.key)
    }

    fn keep_index(&self, index: &Arc<AlignedBuffer>) {
        keep_index(self.indexes, self.key, index);
    }

    fn drop_index(&self) {
        drop_index(self.indexes, self.key);
    }
}

/// Calls `read` with a source of the chunk at `key` of `store`, encoded by `chain`, that serves
/// a read of a part of it best. For a sharded chunk on a store of cheap ranged reads
/// ([`Store::cheap_ranged_reads`], a local file) that is the value opened once: every range
/// comes from the version opened, and each inner chunk is read where it is decoded. Otherwise
/// it is the key, read range by range ([`StoreSource`]). Either keeps its shard index in
/// `indexes` (the array's index cache, if it has one).
///
/// # Errors
/// Opening the value fails.
pub(crate) fn with_part_source<R>(
    store: &dyn Store,
    key: &str,
    chain: &CodecChain,
    indexes: IndexHook<'_>,
    read: impl FnOnce(&dyn ByteRangeSource) -> R,
) -> Result<R, StoreError> {
    let sharded = chain.partial_decoder().inner_chunk_shape().is_some();
    if sharded && store.cheap_ranged_reads() {
        return Ok(match store.open_value(key)? {
            Some(value) => read(&ValueSource::with_indexes(store, &*value, key, indexes)),
            // not stored: every read of it says so
            None => read(&None::<&[u8]>),
        });
    }
    Ok(read(&StoreSource::with_indexes(store, key, indexes)))
}
