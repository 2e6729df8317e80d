//! A store wrapper that counts calls, for tests that assert how many requests a read costs
//! (cargo feature `testing`; `zarr_store::testing::CountingStore`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::error::Result;
use crate::range::ByteRange;
use crate::store::{Condition, ListDir, Outcome, Piece, Store, StoredValue, Version};

/// Wraps a store and counts the calls made to it, method by method, and the bytes moved.
///
/// Tests use it to pin down the cost of an operation ("reading one inner chunk of a shard
/// costs one `get_ranges` call for the index and one for the chunk"). Every call is counted,
/// failed ones included. For the HTTP requests under a remote store, see
/// `CountingObjectStore` (cargo feature `object-store`).
///
/// ```
/// use zarr_store::testing::CountingStore; // cargo feature `testing`
/// use zarr_store::{ByteRange, MemoryStore, Store, StoreExt};
///
/// let store = CountingStore::new(MemoryStore::new());
/// store.set("a/c/0", b"0123456789")?;
/// store.get_range("a/c/0", ByteRange::Suffix(4))?;
/// store.get("a/c/1")?;
/// let counts = store.counts();
/// assert_eq!((counts.set, counts.get_ranges, counts.get), (1, 1, 1));
/// assert_eq!((counts.bytes_written, counts.bytes_read), (10, 4));
/// assert_eq!(counts.reads(), 2);
/// store.reset();
/// assert_eq!(store.counts().total(), 0);
/// # Ok::<(), zarr_store::StoreError>(())
/// ```
#[derive(Debug, Default)]
pub struct CountingStore<S> {
    inner: S,
    counters: Counters,
    /// What `fetch_concurrency` reports, when not the inner store's.
    fetch_concurrency: Option<usize>,
    /// How long every read waits before it is served (an object store's round trip).
    latency: Option<Duration>,
}

/// A snapshot of the counts of a [`CountingStore`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct StoreCounts {
    /// Calls of [`Store::get`].
    pub get: u64,
    /// Calls of [`Store::get_many`] (each of their keys also counts as a `get`).
    pub get_many: u64,
    /// Calls of [`Store::get_ranges`] (and so of `StoreExt::get_range`).
    pub get_ranges: u64,
    /// Byte ranges asked for in all `get_ranges` calls.
    pub ranges: u64,
    /// Calls of [`Store::size`] (and so of `StoreExt::exists`).
    pub size: u64,
    /// Calls of [`Store::set`].
    pub set: u64,
    /// Calls of [`Store::delete`].
    pub delete: u64,
    /// Calls of [`Store::delete_prefix`].
    pub delete_prefix: u64,
    /// Calls of [`Store::list_prefix`].
    pub list_prefix: u64,
    /// Calls of [`Store::list_dir`].
    pub list_dir: u64,
    /// Bytes returned by successful `get` and `get_ranges` calls.
    pub bytes_read: u64,
    /// Bytes passed to successful `set` calls, and the new bytes of successful
    /// [`StoredValue::replace`] calls.
    pub bytes_written: u64,
    /// Calls of [`Store::open_value`]; the reads of a value it opened count as `get_ranges`
    /// calls, and its `replace` as a `set`.
    pub open_value: u64,
    /// Bytes of the opened value that successful `replace` calls kept ([`Piece::Kept`]),
    /// which are not counted as written.
    pub bytes_kept: u64,
    /// The most reads served at once (a `get_many` counts its keys): the requests a reader
    /// keeps in flight, with [`CountingStore::with_latency`].
    pub peak_in_flight: u64,
}

impl StoreCounts {
    /// Calls that read values: `get`, `get_ranges`, `size` and `open_value`.
    #[must_use]
    pub fn reads(&self) -> u64 {
        self.get + self.get_ranges + self.size + self.open_value
    }

    /// Calls that change the store: `set`, `delete` and `delete_prefix`.
    #[must_use]
    pub fn writes(&self) -> u64 {
        self.set + self.delete + self.delete_prefix
    }

    /// Listing calls: `list_prefix` and `list_dir`.
    #[must_use]
    pub fn lists(&self) -> u64 {
        self.list_prefix + self.list_dir
    }

    /// Every call.
    #[must_use]
    pub fn total(&self) -> u64 {
        self.reads() + self.writes() + self.lists()
    }
}

#[derive(Debug, Default)]
struct Counters {
    get: AtomicU64,
    get_many: AtomicU64,
    get_ranges: AtomicU64,
    ranges: AtomicU64,
    size: AtomicU64,
    set: AtomicU64,
    delete: AtomicU64,
    delete_prefix: AtomicU64,
    list_prefix: AtomicU64,
    list_dir: AtomicU64,
    bytes_read: AtomicU64,
    bytes_written: AtomicU64,
    open_value: AtomicU64,
    bytes_kept: AtomicU64,
    in_flight: AtomicU64,
    peak_in_flight: AtomicU64,
}

fn bump(counter: &AtomicU64, by: u64) {
    counter.fetch_add(by, Ordering::Relaxed);
}

impl<S> CountingStore<S> {
    /// Wraps `inner`, with every count at zero.
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            counters: Counters::default(),
            fetch_concurrency: None,
            latency: None,
        }
    }

    /// Makes every read (`get`, `get_many`, `get_ranges`, `size`, `open_value`) wait
    /// `latency` before it is served, as an object store's requests do, so that a test can
    /// see how many requests a reader keeps in flight ([`StoreCounts::peak_in_flight`]).
    #[must_use]
    pub fn with_latency(mut self, latency: Duration) -> Self {
        self.latency = Some(latency);
        self
    }

    /// Counts `n` reads in flight while `serve` runs, after the latency.
    fn in_flight<T>(&self, n: u64, serve: impl FnOnce() -> T) -> T {
        let c = &self.counters;
        let now = c.in_flight.fetch_add(n, Ordering::SeqCst) + n;
        c.peak_in_flight.fetch_max(now, Ordering::SeqCst);
        if let Some(latency) = self.latency {
            std::thread::sleep(latency);
        }
        let out = serve();
        c.in_flight.fetch_sub(n, Ordering::SeqCst);
        out
    }

    /// Makes the wrapper report `n` as its [`Store::fetch_concurrency`] instead of the inner
    /// store's, so that a test can take the batched read paths of an object store (values
    /// fetched together through [`Store::get_many`]) on a local store.
    #[must_use]
    pub fn with_fetch_concurrency(mut self, n: usize) -> Self {
        self.fetch_concurrency = Some(n.max(1));
        self
    }

    /// The wrapped store.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// Unwraps the store.
    pub fn into_inner(self) -> S {
        self.inner
    }

    /// The counts so far.
    pub fn counts(&self) -> StoreCounts {
        let c = &self.counters;
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        StoreCounts {
            get: load(&c.get),
            get_many: load(&c.get_many),
            get_ranges: load(&c.get_ranges),
            ranges: load(&c.ranges),
            size: load(&c.size),
            set: load(&c.set),
            delete: load(&c.delete),
            delete_prefix: load(&c.delete_prefix),
            list_prefix: load(&c.list_prefix),
            list_dir: load(&c.list_dir),
            bytes_read: load(&c.bytes_read),
            bytes_written: load(&c.bytes_written),
            open_value: load(&c.open_value),
            bytes_kept: load(&c.bytes_kept),
            peak_in_flight: load(&c.peak_in_flight),
        }
    }

    /// Sets every count back to zero.
    pub fn reset(&self) {
        let c = &self.counters;
        for counter in [
            &c.get,
            &c.get_many,
            &c.get_ranges,
            &c.ranges,
            &c.size,
            &c.set,
            &c.delete,
            &c.delete_prefix,
            &c.list_prefix,
            &c.list_dir,
            &c.bytes_read,
            &c.bytes_written,
            &c.open_value,
            &c.bytes_kept,
            &c.peak_in_flight,
        ] {
            counter.store(0, Ordering::Relaxed);
        }
    }
}

impl<S: Store> Store for CountingStore<S> {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        bump(&self.counters.get, 1);
        let value = self.in_flight(1, || self.inner.get(key))?;
        if let Some(value) = &value {
            bump(&self.counters.bytes_read, value.len() as u64);
        }
        Ok(value)
    }

    fn get_many(&self, keys: &[&str]) -> Result<Vec<Option<Vec<u8>>>> {
        // counted as one `get` per key, as the default would, but fetched by the inner store
        bump(&self.counters.get_many, 1);
        bump(&self.counters.get, keys.len() as u64);
        let values = self.in_flight(keys.len() as u64, || self.inner.get_many(keys))?;
        let read: u64 = values.iter().flatten().map(|v| v.len() as u64).sum();
        bump(&self.counters.bytes_read, read);
        Ok(values)
    }

    fn fetch_concurrency(&self) -> usize {
        self.fetch_concurrency
            .unwrap_or_else(|| self.inner.fetch_concurrency())
    }

    fn cheap_ranged_reads(&self) -> bool {
        self.inner.cheap_ranged_reads()
    }

    fn get_ranges(&self, key: &str, ranges: &[ByteRange]) -> Result<Option<Vec<Vec<u8>>>> {
        bump(&self.counters.get_ranges, 1);
        bump(&self.counters.ranges, ranges.len() as u64);
        let parts = self.in_flight(1, || self.inner.get_ranges(key, ranges))?;
        if let Some(parts) = &parts {
            let read: usize = parts.iter().map(Vec::len).sum();
            bump(&self.counters.bytes_read, read as u64);
        }
        Ok(parts)
    }

    fn size(&self, key: &str) -> Result<Option<u64>> {
        bump(&self.counters.size, 1);
        self.in_flight(1, || self.inner.size(key))
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        bump(&self.counters.set, 1);
        self.inner.set(key, value)?;
        bump(&self.counters.bytes_written, value.len() as u64);
        Ok(())
    }

    /// Counted as a `set` of the parts' bytes.
    fn set_parts(&self, key: &str, parts: &[&[u8]]) -> Result<()> {
        bump(&self.counters.set, 1);
        self.inner.set_parts(key, parts)?;
        let len: usize = parts.iter().map(|p| p.len()).sum();
        bump(&self.counters.bytes_written, len as u64);
        Ok(())
    }

    fn conditional_writes(&self) -> bool {
        self.inner.conditional_writes()
    }

    /// Counted as a `get`.
    fn get_versioned(&self, key: &str) -> Result<Option<(Vec<u8>, Version)>> {
        bump(&self.counters.get, 1);
        let value = self.inner.get_versioned(key)?;
        if let Some((value, _)) = &value {
            bump(&self.counters.bytes_read, value.len() as u64);
        }
        Ok(value)
    }

    /// Counted as a `set` (its bytes only when written).
    fn set_if(&self, key: &str, value: &[u8], condition: &Condition) -> Result<Outcome> {
        bump(&self.counters.set, 1);
        let outcome = self.inner.set_if(key, value, condition)?;
        if matches!(outcome, Outcome::Written(_)) {
            bump(&self.counters.bytes_written, value.len() as u64);
        }
        Ok(outcome)
    }

    fn delete(&self, key: &str) -> Result<()> {
        bump(&self.counters.delete, 1);
        self.inner.delete(key)
    }

    fn delete_prefix(&self, prefix: &str) -> Result<()> {
        bump(&self.counters.delete_prefix, 1);
        self.inner.delete_prefix(prefix)
    }

    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        bump(&self.counters.list_prefix, 1);
        self.inner.list_prefix(prefix)
    }

    fn list_dir(&self, prefix: &str) -> Result<ListDir> {
        bump(&self.counters.list_dir, 1);
        self.inner.list_dir(prefix)
    }

    fn list_prefix_sizes(&self, prefix: &str) -> Result<Vec<(String, u64)>> {
        // one listing as far as this counter goes, whatever the inner store makes of it
        bump(&self.counters.list_prefix, 1);
        self.inner.list_prefix_sizes(prefix)
    }

    fn open_value(&self, key: &str) -> Result<Option<Box<dyn StoredValue + '_>>> {
        bump(&self.counters.open_value, 1);
        Ok(self
            .in_flight(1, || self.inner.open_value(key))?
            .map(|inner| {
                Box::new(CountedValue {
                    inner,
                    counters: &self.counters,
                }) as Box<dyn StoredValue + '_>
            }))
    }
}

/// A value opened through a [`CountingStore`]: its reads and its replacement counted.
struct CountedValue<'s> {
    inner: Box<dyn StoredValue + 's>,
    counters: &'s Counters,
}

impl StoredValue for CountedValue<'_> {
    fn size(&self) -> u64 {
        self.inner.size()
    }

    fn get_ranges(&self, ranges: &[ByteRange]) -> Result<Vec<Vec<u8>>> {
        bump(&self.counters.get_ranges, 1);
        bump(&self.counters.ranges, ranges.len() as u64);
        let parts = self.inner.get_ranges(ranges)?;
        let read: usize = parts.iter().map(Vec::len).sum();
        bump(&self.counters.bytes_read, read as u64);
        Ok(parts)
    }

    fn replace(self: Box<Self>, pieces: &[Piece]) -> Result<()> {
        bump(&self.counters.set, 1);
        let counters = self.counters;
        self.inner.replace(pieces)?;
        for piece in pieces {
            match piece {
                Piece::Kept(_) => bump(&counters.bytes_kept, piece.len()),
                Piece::New(bytes) => bump(&counters.bytes_written, bytes.len() as u64),
            }
        }
        Ok(())
    }
}
