//! The optional cache of decoded chunks ([`Array::with_cache`]): repeated small reads (points,
//! slabs, orthogonal selections) of the same chunks decode each chunk once.
//!
//! The cache maps chunk keys to decoded chunks (`None` for a chunk that is not stored, which
//! reads as the fill value), in least-recently-used order, bounded by the bytes it holds. It
//! sees the writes made through the array handle that owns it (and its clones): the handle's
//! store is wrapped in [`Invalidating`], which drops a key's entry after each `set`,
//! `delete` or `delete_prefix`. Writes made elsewhere (another handle, another process) are not
//! seen: a cached chunk stays as it was read until it is evicted, written through this handle,
//! or the cache is dropped.
//!
//! The same map, keyed by shard key and holding decoded shard indexes, is the array's index
//! cache ([`Array::with_index_cache`]): a read of part of a shard on a store whose requests
//! have latency asks for its index once, and later reads of that shard only for the inner
//! chunks they need. It is kept true by the same [`Invalidating`] store, and an index a write
//! elsewhere made stale is caught where the read can tell (see
//! [`Array::with_index_cache`]).
//!
//! [`Array::with_cache`]: crate::Array::with_cache
//! [`Array::with_index_cache`]: crate::Array::with_index_cache

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use lru::LruCache;
use zarr_codecs::AlignedBuffer;
use zarr_store::{
    ByteRange, Condition, ListDir, Outcome, Piece, Result as StoreResult, Store, StoredValue,
    Version,
};

/// A decoded chunk, or `None` for a chunk that is not stored.
pub(crate) type Entry = Option<Arc<AlignedBuffer>>;

/// What a cache holds and how often it was used: [`Array::cache_stats`](crate::Array::cache_stats).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct CacheStats {
    /// Chunk lookups the cache answered.
    pub hits: u64,
    /// Chunk lookups that fetched and decoded the chunk.
    pub misses: u64,
    /// Chunks (and absent chunks) held.
    pub entries: usize,
    /// Bytes held, counted as the decoded bytes plus the key and a fixed overhead per entry.
    pub bytes: usize,
    /// The bound on `bytes`.
    pub capacity: usize,
}

/// The bytes an entry is counted as: its decoded bytes, its key and the bookkeeping of the map.
fn cost(key: &str, entry: &Entry) -> usize {
    const OVERHEAD: usize = 96;
    OVERHEAD + key.len() + entry.as_ref().map_or(0, |b| b.len())
}

struct Inner {
    map: LruCache<String, Entry>,
    bytes: usize,
}

/// A bounded, least-recently-used map of chunk keys to decoded chunks.
pub(crate) struct ChunkCache {
    capacity: usize,
    inner: Mutex<Inner>,
    /// Incremented by every invalidation: a chunk read before it may not be inserted after it.
    generation: AtomicU64,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl std::fmt::Debug for ChunkCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChunkCache")
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl ChunkCache {
    /// An empty cache holding at most `capacity` bytes.
    pub(crate) fn new(capacity: usize) -> Self {
        ChunkCache {
            capacity,
            inner: Mutex::new(Inner {
                map: LruCache::unbounded(),
                bytes: 0,
            }),
            generation: AtomicU64::new(0),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    /// The map, also after a panic of another thread holding it (every update leaves it
    /// consistent before anything can panic).
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The generation to pass to [`ChunkCache::insert`] for a chunk about to be read.
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// The entry of `key`, made the most recently used; counts a hit or a miss.
    pub(crate) fn get(&self, key: &str) -> Option<Entry> {
        let found = self.lock().map.get(key).cloned();
        let counter = if found.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    /// Whether `key` has an entry (without using it).
    #[cfg(test)]
    pub(crate) fn contains(&self, key: &str) -> bool {
        self.lock().map.contains(key)
    }

    /// Keeps `entry` for `key`, read when the generation was `generation`, unless an
    /// invalidation came since (the entry may be stale) or it is larger than the whole
    /// cache; evicts the least recently used entries until the cache is within its bound.
    pub(crate) fn insert(&self, generation: u64, key: &str, entry: Entry) {
        let size = cost(key, &entry);
        if size > self.capacity {
            return;
        }
        let mut inner = self.lock();
        // under the lock: invalidations bump the generation while holding it
        if self.generation.load(Ordering::Acquire) != generation {
            return;
        }
        if let Some(old) = inner.map.put(key.to_string(), entry) {
            inner.bytes -= cost(key, &old);
        }
        inner.bytes += size;
        while inner.bytes > self.capacity {
            let Some((k, e)) = inner.map.pop_lru() else {
                break;
            };
            inner.bytes -= cost(&k, &e);
        }
    }

    /// Drops the entry of `key` because a read found it stale (not a write: the generation
    /// stays, so what that read fetches again may be kept).
    pub(crate) fn forget(&self, key: &str) {
        let mut inner = self.lock();
        if let Some(e) = inner.map.pop(key) {
            inner.bytes -= cost(key, &e);
        }
    }

    /// Drops the entry of `key`, after a write of it: one lookup, no scan of the map (this
    /// runs for every chunk a write stores).
    fn invalidate_key(&self, key: &str) {
        let mut inner = self.lock();
        self.generation.fetch_add(1, Ordering::AcqRel);
        if let Some(e) = inner.map.pop(key) {
            inner.bytes -= cost(key, &e);
        }
    }

    /// Drops the entries whose key `matches`, after a write of those keys (a scan: for
    /// prefixes).
    fn invalidate(&self, matches: impl Fn(&str) -> bool) {
        let mut inner = self.lock();
        self.generation.fetch_add(1, Ordering::AcqRel);
        let stale: Vec<String> = inner
            .map
            .iter()
            .filter(|(k, _)| matches(k))
            .map(|(k, _)| k.clone())
            .collect();
        for k in stale {
            if let Some(e) = inner.map.pop(&k) {
                inner.bytes -= cost(&k, &e);
            }
        }
    }

    /// What the cache holds and how often it was used.
    pub(crate) fn stats(&self) -> CacheStats {
        let inner = self.lock();
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            entries: inner.map.len(),
            bytes: inner.bytes,
            capacity: self.capacity,
        }
    }
}

/// A store that drops the caches' entries of the keys written through it, after each write:
/// the decoded-chunk cache ([`Array::with_cache`](crate::Array::with_cache)) and the shard
/// index cache ([`Array::with_index_cache`](crate::Array::with_index_cache)), whichever the
/// array has.
///
/// Dropping after the write (and bumping the generation) means a reader can never keep a
/// value older than the write: one that fetched before it cannot insert after it, and one that
/// inserted before it is dropped by it.
#[derive(Debug)]
pub(crate) struct Invalidating {
    pub(crate) inner: Arc<dyn Store>,
    pub(crate) chunks: Option<Arc<ChunkCache>>,
    pub(crate) indexes: Option<Arc<ChunkCache>>,
}

impl Invalidating {
    fn caches(&self) -> impl Iterator<Item = &ChunkCache> {
        self.chunks.iter().chain(&self.indexes).map(|c| &**c)
    }

    fn invalidate_key(&self, key: &str) {
        for cache in self.caches() {
            cache.invalidate_key(key);
        }
    }
}

/// A value opened through [`Invalidating`]: replacing it drops the caches' entries of its key.
struct InvalidatingValue<'a> {
    value: Box<dyn StoredValue + 'a>,
    key: String,
    store: &'a Invalidating,
}

impl StoredValue for InvalidatingValue<'_> {
    fn size(&self) -> u64 {
        self.value.size()
    }
    fn get_ranges(&self, ranges: &[ByteRange]) -> StoreResult<Vec<Vec<u8>>> {
        self.value.get_ranges(ranges)
    }
    fn replace(self: Box<Self>, pieces: &[Piece]) -> StoreResult<()> {
        let InvalidatingValue { value, key, store } = *self;
        let done = value.replace(pieces);
        store.invalidate_key(&key);
        done
    }
}

impl Store for Invalidating {
    fn get(&self, key: &str) -> StoreResult<Option<Vec<u8>>> {
        self.inner.get(key)
    }
    fn get_ranges(&self, key: &str, ranges: &[ByteRange]) -> StoreResult<Option<Vec<Vec<u8>>>> {
        self.inner.get_ranges(key, ranges)
    }
    fn size(&self, key: &str) -> StoreResult<Option<u64>> {
        self.inner.size(key)
    }
    fn set(&self, key: &str, value: &[u8]) -> StoreResult<()> {
        let done = self.inner.set(key, value);
        self.invalidate_key(key);
        done
    }
    fn set_parts(&self, key: &str, parts: &[&[u8]]) -> StoreResult<()> {
        let done = self.inner.set_parts(key, parts);
        self.invalidate_key(key);
        done
    }
    fn delete(&self, key: &str) -> StoreResult<()> {
        let done = self.inner.delete(key);
        self.invalidate_key(key);
        done
    }
    fn delete_prefix(&self, prefix: &str) -> StoreResult<()> {
        let done = self.inner.delete_prefix(prefix);
        for cache in self.caches() {
            cache.invalidate(|k| k.starts_with(prefix));
        }
        done
    }
    fn list_prefix(&self, prefix: &str) -> StoreResult<Vec<String>> {
        self.inner.list_prefix(prefix)
    }
    fn list_dir(&self, prefix: &str) -> StoreResult<ListDir> {
        self.inner.list_dir(prefix)
    }
    fn list_prefix_sizes(&self, prefix: &str) -> StoreResult<Vec<(String, u64)>> {
        self.inner.list_prefix_sizes(prefix)
    }
    fn get_many(&self, keys: &[&str]) -> StoreResult<Vec<Option<Vec<u8>>>> {
        self.inner.get_many(keys)
    }
    fn fetch_concurrency(&self) -> usize {
        self.inner.fetch_concurrency()
    }
    fn max_bytes_in_flight(&self) -> u64 {
        self.inner.max_bytes_in_flight()
    }
    fn fetch_each(
        &self,
        requests: &[zarr_store::Fetch<'_>],
        deliver: &mut zarr_store::Deliver<'_>,
    ) -> StoreResult<()> {
        self.inner.fetch_each(requests, deliver)
    }
    fn write_each(&self, writes: &[zarr_store::Write<'_>]) -> StoreResult<()> {
        let done = self.inner.write_each(writes);
        for write in writes {
            self.invalidate_key(write.key());
        }
        done
    }
    fn cheap_ranged_reads(&self) -> bool {
        self.inner.cheap_ranged_reads()
    }
    fn conditional_writes(&self) -> bool {
        self.inner.conditional_writes()
    }
    fn get_versioned(&self, key: &str) -> StoreResult<Option<(Vec<u8>, Version)>> {
        self.inner.get_versioned(key)
    }
    fn set_if(&self, key: &str, value: &[u8], condition: &Condition) -> StoreResult<Outcome> {
        let done = self.inner.set_if(key, value, condition);
        // a conflict wrote nothing, but dropping the entry then is harmless
        self.invalidate_key(key);
        done
    }
    fn open_value(&self, key: &str) -> StoreResult<Option<Box<dyn StoredValue + '_>>> {
        Ok(self.inner.open_value(key)?.map(|value| {
            Box::new(InvalidatingValue {
                value,
                key: key.to_owned(),
                store: self,
            }) as Box<dyn StoredValue + '_>
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(n: usize) -> Entry {
        Some(Arc::new(AlignedBuffer::zeroed(n)))
    }

    #[test]
    fn the_least_recently_used_entries_go_first_and_the_bound_holds() {
        let c = ChunkCache::new(3 * cost("k0", &chunk(1000)));
        for k in ["k0", "k1", "k2"] {
            c.insert(c.generation(), k, chunk(1000));
        }
        assert!(c.get("k0").is_some()); // k1 is now the least recently used
        c.insert(c.generation(), "k3", chunk(1000));
        assert!(!c.contains("k1"));
        assert!(c.contains("k0") && c.contains("k2") && c.contains("k3"));
        let s = c.stats();
        assert_eq!((s.entries, s.hits, s.misses), (3, 1, 0));
        assert!(s.bytes <= s.capacity);
        // an entry larger than the whole cache is not kept, and evicts nothing
        c.insert(c.generation(), "big", chunk(10_000));
        assert!(!c.contains("big"));
        assert_eq!(c.stats().entries, 3);
    }

    #[test]
    fn a_chunk_read_before_an_invalidation_is_not_kept() {
        let c = ChunkCache::new(1 << 20);
        let before = c.generation();
        c.invalidate_key("other");
        c.insert(before, "k", chunk(8));
        assert!(!c.contains("k"));
        c.insert(c.generation(), "k", None);
        assert!(matches!(c.get("k"), Some(None)));
        c.invalidate(|k| k.starts_with('k'));
        assert!(c.get("k").is_none());
        assert_eq!(c.stats().bytes, 0);
    }
}
