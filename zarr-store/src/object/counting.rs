//! A request-counting [`ObjectStore`] wrapper, for tests (cargo features `object-store` and
//! `testing`; re-exported as `zarr_store::testing::CountingObjectStore`).

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use futures_util::stream::{BoxStream, StreamExt};
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult, RenameOptions,
};

/// An [`ObjectStore`] wrapper that counts the requests made to the store it wraps.
///
/// Each `get_opts` is one GET (or one HEAD), each `put_opts` one PUT, and so on, so the counts
/// are the HTTP requests of a remote store, with two approximations: a listing counts once
/// however many pages it takes, and deletes count the objects deleted (S3 and Azure batch
/// them, up to 1000 and 256 a request). Wrap the object store under an
/// [`ObjectStoreBackend`](crate::ObjectStoreBackend) with
/// [`ObjectStoreBackend::with_request_counter`](crate::ObjectStoreBackend::with_request_counter).
///
/// ```
/// use std::sync::Arc;
/// use zarr_store::object_store::memory::InMemory;
/// use zarr_store::{ByteRange, ObjectStoreBackend, Store, StoreExt};
/// // cargo features `object-store` and `testing`
///
/// let (store, requests) = ObjectStoreBackend::new(Arc::new(InMemory::new()), "")?
///     .with_request_counter();
/// store.set("shard", &[7; 1000])?;
/// requests.reset();
/// store.get_range("shard", ByteRange::Suffix(16))?; // the index of a shard
/// assert_eq!(requests.counts().get, 1);
/// assert_eq!(requests.counts().head, 0);
/// # Ok::<(), zarr_store::StoreError>(())
/// ```
#[derive(Debug)]
pub struct CountingObjectStore {
    inner: Arc<dyn ObjectStore>,
    counters: Arc<RequestCounters>,
}

/// A snapshot of the counts of a [`CountingObjectStore`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct RequestCounts {
    /// GET requests, whole or ranged.
    pub get: u64,
    /// HEAD requests.
    pub head: u64,
    /// PUT requests (single-part uploads).
    pub put: u64,
    /// Objects deleted (or asked to be).
    pub delete: u64,
    /// Recursive listings.
    pub list: u64,
    /// Listings of one level (with a delimiter).
    pub list_with_delimiter: u64,
    /// Everything else: copies, renames, multipart uploads started.
    pub other: u64,
    /// The most GET, HEAD and PUT requests in flight at once (see
    /// [`CountingObjectStore::set_latency`]).
    pub peak_in_flight: u64,
}

impl RequestCounts {
    /// Every request counted.
    #[must_use]
    pub fn total(&self) -> u64 {
        self.get
            + self.head
            + self.put
            + self.delete
            + self.list
            + self.list_with_delimiter
            + self.other
    }
}

#[derive(Debug, Default)]
struct RequestCounters {
    get: AtomicU64,
    head: AtomicU64,
    put: AtomicU64,
    delete: AtomicU64,
    list: AtomicU64,
    list_with_delimiter: AtomicU64,
    other: AtomicU64,
    in_flight: AtomicU64,
    peak_in_flight: AtomicU64,
    /// The wait before every GET, HEAD and PUT is served, in nanoseconds.
    latency: AtomicU64,
}

fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

impl CountingObjectStore {
    /// Wraps `inner`, with every count at zero.
    #[must_use]
    pub fn new(inner: Arc<dyn ObjectStore>) -> Self {
        Self {
            inner,
            counters: Arc::default(),
        }
    }

    /// The wrapped object store.
    #[must_use]
    pub fn inner(&self) -> &Arc<dyn ObjectStore> {
        &self.inner
    }

    /// The counts so far.
    #[must_use]
    pub fn counts(&self) -> RequestCounts {
        let c = &self.counters;
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        RequestCounts {
            get: load(&c.get),
            head: load(&c.head),
            put: load(&c.put),
            delete: load(&c.delete),
            list: load(&c.list),
            list_with_delimiter: load(&c.list_with_delimiter),
            other: load(&c.other),
            peak_in_flight: load(&c.peak_in_flight),
        }
    }

    /// Sets every count back to zero.
    pub fn reset(&self) {
        let c = &self.counters;
        for counter in [
            &c.get,
            &c.head,
            &c.put,
            &c.delete,
            &c.list,
            &c.list_with_delimiter,
            &c.other,
            &c.peak_in_flight,
        ] {
            counter.store(0, Ordering::Relaxed);
        }
    }
}

impl CountingObjectStore {
    /// Makes every GET, HEAD and PUT wait `latency` (on the runtime's timer: no thread
    /// waits) before it is served, as a remote server's round trip, so that a test sees how
    /// many requests a reader keeps in flight ([`RequestCounts::peak_in_flight`]).
    pub fn set_latency(&self, latency: std::time::Duration) {
        let nanos = u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX);
        self.counters.latency.store(nanos, Ordering::Relaxed);
    }

    /// Runs `request` counted in flight, after the latency.
    async fn in_flight<T>(&self, request: impl std::future::Future<Output = T>) -> T {
        let c = &self.counters;
        let now = c.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        c.peak_in_flight.fetch_max(now, Ordering::SeqCst);
        let latency = c.latency.load(Ordering::Relaxed);
        if latency > 0 {
            tokio::time::sleep(std::time::Duration::from_nanos(latency)).await;
        }
        let out = request.await;
        c.in_flight.fetch_sub(1, Ordering::SeqCst);
        out
    }
}

impl fmt::Display for CountingObjectStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Counting({})", self.inner)
    }
}

#[async_trait::async_trait]
impl ObjectStore for CountingObjectStore {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        bump(&self.counters.put);
        self.in_flight(self.inner.put_opts(location, payload, opts))
            .await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        bump(&self.counters.other);
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        bump(if options.head {
            &self.counters.head
        } else {
            &self.counters.get
        });
        self.in_flight(self.inner.get_opts(location, options)).await
    }

    // `get_ranges` is left to the trait's default, which coalesces the ranges and fetches
    // them through `get_opts` above, so every request is counted.

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        let counters = self.counters.clone();
        let counted = locations
            .inspect(move |location| {
                if location.is_ok() {
                    bump(&counters.delete);
                }
            })
            .boxed();
        self.inner.delete_stream(counted)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        bump(&self.counters.list);
        self.inner.list(prefix)
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        bump(&self.counters.list);
        self.inner.list_with_offset(prefix, offset)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        bump(&self.counters.list_with_delimiter);
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        bump(&self.counters.other);
        self.inner.copy_opts(from, to, options).await
    }

    async fn rename_opts(
        &self,
        from: &Path,
        to: &Path,
        options: RenameOptions,
    ) -> object_store::Result<()> {
        bump(&self.counters.other);
        self.inner.rename_opts(from, to, options).await
    }
}
