//! [`Unconditional`]: a store that cannot write conditionally, for tests of what holds then.

use crate::error::Result;
use crate::range::ByteRange;
use crate::store::{ListDir, Store};

/// Wraps a store and hides its conditional writes: [`Store::conditional_writes`] is `false`
/// and [`Store::set_if`] fails with [`StoreError::NoConditionalWrites`](crate::StoreError::NoConditionalWrites),
/// as from a store that has none (an S3-compatible server that ignores `If-Match`). Every
/// other call goes to the wrapped store.
///
/// ```
/// use zarr_store::testing::Unconditional; // cargo feature `testing`
/// use zarr_store::{Condition, MemoryStore, Store};
///
/// let store = Unconditional::new(MemoryStore::new());
/// assert!(!store.conditional_writes());
/// assert!(store.set_if("k", b"v", &Condition::Absent).is_err());
/// store.set("k", b"v")?; // plain writes work: the last writer wins
/// # Ok::<(), zarr_store::StoreError>(())
/// ```
#[derive(Debug, Default)]
pub struct Unconditional<S> {
    inner: S,
}

impl<S> Unconditional<S> {
    /// Wraps `inner`.
    pub fn new(inner: S) -> Self {
        Self { inner }
    }

    /// The wrapped store.
    pub fn inner(&self) -> &S {
        &self.inner
    }
}

impl<S: Store> Store for Unconditional<S> {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        self.inner.get(key)
    }
    fn get_ranges(&self, key: &str, ranges: &[ByteRange]) -> Result<Option<Vec<Vec<u8>>>> {
        self.inner.get_ranges(key, ranges)
    }
    fn size(&self, key: &str) -> Result<Option<u64>> {
        self.inner.size(key)
    }
    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        self.inner.set(key, value)
    }
    fn delete(&self, key: &str) -> Result<()> {
        self.inner.delete(key)
    }
    fn delete_prefix(&self, prefix: &str) -> Result<()> {
        self.inner.delete_prefix(prefix)
    }
    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        self.inner.list_prefix(prefix)
    }
    fn list_dir(&self, prefix: &str) -> Result<ListDir> {
        self.inner.list_dir(prefix)
    }
    fn get_many(&self, keys: &[&str]) -> Result<Vec<Option<Vec<u8>>>> {
        self.inner.get_many(keys)
    }
    fn list_prefix_sizes(&self, prefix: &str) -> Result<Vec<(String, u64)>> {
        self.inner.list_prefix_sizes(prefix)
    }
    fn fetch_concurrency(&self) -> usize {
        self.inner.fetch_concurrency()
    }
    fn max_bytes_in_flight(&self) -> u64 {
        self.inner.max_bytes_in_flight()
    }
    fn fetch_each(
        &self,
        requests: &[crate::Fetch<'_>],
        deliver: &mut crate::Deliver<'_>,
    ) -> Result<()> {
        self.inner.fetch_each(requests, deliver)
    }
    fn write_each(&self, writes: &[crate::Write<'_>]) -> Result<()> {
        self.inner.write_each(writes)
    }
    // `conditional_writes`, `get_versioned` and `set_if`: the trait's defaults (none).
}
