//! Object stores (S3, Google Cloud Storage, Azure, HTTP, in-memory...) through the
//! `object_store` crate, behind the synchronous [`Store`] trait (cargo feature `object-store`).

use std::future::Future;
use std::ops::Range;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use futures_util::stream::{self, FuturesUnordered, StreamExt, TryStreamExt};
use object_store::aws::AmazonS3ConfigKey as S3Key;
use object_store::azure::AzureConfigKey as AzureKey;
use object_store::gcp::GoogleConfigKey as GcsKey;
use object_store::path::Path;
use object_store::{
    BackoffConfig, ClientConfigKey, ClientOptions, GetOptions, GetRange, GetResult, ObjectMeta,
    ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, RetryConfig, UpdateVersion,
};
use tokio::runtime::{Handle, Runtime, RuntimeFlavor};

use crate::error::{Result, StoreError};
use crate::fetch::{Deliver, Fetch, Fetched as FetchedAnswer, Write};
use crate::key::{validate_key, validate_prefix};
use crate::open::{invalid, percent_decode};
use crate::range::{resolve_all, ByteRange};
use crate::remote::RemoteOptions;
use crate::store::{Condition, ListDir, Outcome, Store, Version};

#[cfg(feature = "testing")]
mod counting;
mod plain_http;
#[cfg(feature = "testing")]
pub use counting::{CountingObjectStore, RequestCounts};

/// The most requests one `get_ranges` call of an [`ObjectStoreBackend`] keeps in flight (its
/// byte ranges far apart); batches of requests ([`Store::fetch_each`], [`Store::get_many`])
/// keep up to [`RemoteOptions::concurrency`] in flight.
pub const MAX_CONCURRENT_REQUESTS: usize = 16;

/// Byte ranges of one key closer than this are fetched by one request, as `object_store`'s
/// own `get_ranges` does.
const COALESCE_GAP: u64 = object_store::OBJECT_STORE_COALESCE_DEFAULT;

/// A [`Store`] over any [`object_store::ObjectStore`] (S3, GCS, Azure, HTTP, in-memory...),
/// under a key prefix.
///
/// Key `a/c/0` is the object `<prefix>/a/c/0`, verbatim (no escaping), so other Zarr
/// implementations see the same object names. Listing skips objects whose names are not valid
/// store keys.
///
/// **Synchronous over async.** The Zarr layers above are synchronous and parallelise with
/// rayon, so this store blocks on a tokio runtime of its own (one multi-thread runtime shared
/// by every `ObjectStoreBackend` in the process, started at first use) and is safe to call
/// from any number of threads, rayon's included. Inside one call it works concurrently: the
/// byte ranges of a [`get_ranges`](Store::get_ranges) call are fetched in parallel (at most
/// [`MAX_CONCURRENT_REQUESTS`] at once, close ranges merged into one request), a batch of
/// [`fetch_each`](Store::fetch_each) runs up to [`RemoteOptions::concurrency`] requests at
/// once on the runtime (256 by default) and hands each answer over as it arrives, and
/// [`delete_prefix`](Store::delete_prefix) deletes in batches. Calling it from async code
/// works but blocks the calling thread for the whole call: on a multi-thread tokio runtime
/// through [`tokio::task::block_in_place`], on a current-thread runtime by running the call on
/// a helper thread. Async code should rather call it through `spawn_blocking`.
///
/// **Requests.** `get` is one GET; `size` one HEAD; `set` one PUT; `delete` one request;
/// `get_ranges` of one range is one ranged GET (a [`ByteRange::Suffix`] is one suffix request,
/// `bytes=-n`, with no HEAD first, and the response's `Content-Range` tells the size that
/// bounds checking needs); `list_prefix` and `delete_prefix` one LIST per page of 1000 keys;
/// `list_dir` one delimited LIST per page.
///
/// Unlike [`MemoryStore`](crate::MemoryStore) and [`FilesystemStore`](crate::FilesystemStore),
/// an object store holds a key and keys under it (`a` and `a/b`) side by side: it never
/// returns [`StoreError::KeyConflict`].
///
/// ```
/// use std::sync::Arc;
/// use zarr_store::object_store::memory::InMemory;
/// use zarr_store::{ByteRange, ObjectStoreBackend, Store, StoreExt};
///
/// let store = ObjectStoreBackend::new(Arc::new(InMemory::new()), "data/my.zarr")?;
/// store.set("arr/c/0", b"0123456789")?;
/// assert_eq!(store.get_range("arr/c/0", ByteRange::Suffix(3))?, Some(b"789".to_vec()));
/// assert_eq!(store.list_prefix("")?, ["arr/c/0"]);
/// # Ok::<(), zarr_store::StoreError>(())
/// ```
#[derive(Debug, Clone)]
pub struct ObjectStoreBackend {
    store: Arc<dyn ObjectStore>,
    /// `""` or a valid key: the objects of this store are `<prefix>/<key>`.
    prefix: String,
    read_only: bool,
    /// Whether conditional puts are used for [`Store::set_if`].
    conditional: bool,
    /// The retries of this backend's own (see [`ObjectStoreBackend::with_remote_options`]).
    retry: RemoteOptions,
}

impl ObjectStoreBackend {
    /// A store over `store`, with every key under `prefix` (`""` for the whole bucket, or a
    /// `/`-separated path such as `data/my.zarr`; a trailing `/` is ignored).
    ///
    /// # Errors
    ///
    /// [`StoreError::InvalidPrefix`] when `prefix` is not `""` or a valid key.
    pub fn new(store: Arc<dyn ObjectStore>, prefix: &str) -> Result<Self> {
        let trimmed = prefix.trim_end_matches('/');
        if !trimmed.is_empty() {
            validate_prefix(&format!("{trimmed}/")).map_err(|_| StoreError::InvalidPrefix {
                prefix: prefix.to_owned(),
                reason: "an object store prefix must be \"\" or a valid key",
            })?;
        }
        Ok(Self {
            store,
            prefix: trimmed.to_owned(),
            read_only: false,
            conditional: true,
            retry: RemoteOptions::default(),
        })
    }

    /// Opens the object store a url names: `s3://bucket/prefix`, `gs://bucket/prefix`,
    /// `az://container/prefix` (or `azure://`), `http(s)://host/path` (read-only), with the
    /// default timeouts and retries of [`RemoteOptions`].
    ///
    /// Endpoint, region and credentials come from the environment, as `object_store`'s
    /// `from_env` builders read it: `AWS_ENDPOINT_URL`, `AWS_REGION`, `AWS_ACCESS_KEY_ID`,
    /// `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_ALLOW_HTTP`...; `GOOGLE_*`;
    /// `AZURE_*`. Nothing is contacted until the first operation.
    ///
    /// An `http://` store loads no TLS root certificates (the system's take some
    /// milliseconds to read, before the first request): its requests go through a client
    /// that follows no redirect, and a server that redirects gets the request again through
    /// `object_store`'s own client (which loads them and follows it), as do all the store's
    /// later requests. With a proxy in the environment (`HTTP_PROXY`, `ALL_PROXY`, which may
    /// be reached over TLS) the store uses `object_store`'s client from the start.
    ///
    /// # Errors
    ///
    /// [`StoreError::InvalidUrl`] when the url is malformed, its scheme is not one of these,
    /// or the store cannot be configured (no bucket, unreadable credentials file...).
    pub fn from_url(url: &str) -> Result<Self> {
        Self::from_url_with(url, &RemoteOptions::default())
    }

    /// [`from_url`](Self::from_url) with the timeouts and retries of `options` (they replace
    /// the client timeouts the environment may set, and `object_store`'s retry defaults).
    ///
    /// # Errors
    ///
    /// As [`from_url`](Self::from_url).
    pub fn from_url_with(url: &str, options: &RemoteOptions) -> Result<Self> {
        Self::from_url_with_config(url, std::iter::empty(), options)
    }

    /// [`from_url_with`](Self::from_url_with) with `config`, settings of the object store as
    /// `object_store`'s builders name them (and as obstore's stores report them in their
    /// `config` and `client_options`): `endpoint`, `region`, `access_key_id`,
    /// `secret_access_key`, `session_token`, `skip_signature` for `s3://`; `service_account`,
    /// `skip_signature`... for `gs://`; `account_name`, `access_key`... for `az://`; and for
    /// every scheme the HTTP client's (`allow_http`, `timeout`, `user_agent`...). They apply
    /// over the environment's, and over the timeouts of `options` (except for a plain
    /// `http://` store, whose requests keep those of `options`: see
    /// [`from_url`](Self::from_url)); `bucket` (or `container_name`) must agree with the
    /// url's when given.
    ///
    /// ```
    /// # #[cfg(feature = "object-store")] {
    /// use zarr_store::{ObjectStoreBackend, RemoteOptions, StoreError};
    ///
    /// let config = [("endpoint", "http://127.0.0.1:9000"), ("allow_http", "true"),
    ///               ("region", "eu-west-1"), ("skip_signature", "true")];
    /// let store = ObjectStoreBackend::from_url_with_config(
    ///     "s3://bucket/data.zarr", config, &RemoteOptions::default())?;
    /// assert_eq!(store.prefix(), "data.zarr");
    /// let bad = ObjectStoreBackend::from_url_with_config(
    ///     "s3://bucket", [("no_such_setting", "1")], &RemoteOptions::default());
    /// assert!(matches!(bad, Err(StoreError::InvalidUrl { .. })));
    /// # }
    /// # Ok::<(), zarr_store::StoreError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`from_url`](Self::from_url); [`StoreError::InvalidUrl`] too for a setting the
    /// scheme's builder does not know, or a bucket that is not the url's.
    pub fn from_url_with_config<'a>(
        url: &str,
        config: impl IntoIterator<Item = (&'a str, &'a str)>,
        options: &RemoteOptions,
    ) -> Result<Self> {
        let config: Vec<(&str, &str)> = config.into_iter().collect();
        // Url parsing resolves `.` and `..` segments (`s3://b/x/../y` is `s3://b/y`): refuse
        // them first, as keys refuse them.
        let raw_path = url
            .split_once("://")
            .and_then(|(_, rest)| rest.split_once('/'))
            .map_or("", |(_, path)| path);
        let dot_segment = raw_path
            .split(['/', '?', '#'])
            .any(|segment| matches!(percent_decode(segment).as_deref(), Some("." | "..")));
        if dot_segment {
            return Err(invalid(url, "'.' and '..' segments are not allowed"));
        }
        let parsed = url::Url::parse(url).map_err(|e| StoreError::InvalidUrl {
            url: url.to_owned(),
            source: e.into(),
        })?;
        if parsed.query().is_some() || parsed.fragment().is_some() {
            return Err(invalid(url, "a store url takes no query or fragment"));
        }
        if parsed.host_str().is_none_or(str::is_empty) {
            return Err(invalid(
                url,
                "no bucket, container or host (expected scheme://bucket/prefix)",
            ));
        }
        let path = parsed.path().trim_matches('/');
        let prefix =
            percent_decode(path).ok_or_else(|| invalid(url, "bad percent-encoding in the path"))?;
        if !prefix.is_empty() {
            validate_key(&prefix).map_err(|e| invalid(url, format!("bad prefix: {e}")))?;
        }
        let base = &parsed[..url::Position::BeforePath];
        let host = parsed.host_str().unwrap_or_default();
        let built = |result: object_store::Result<Arc<dyn ObjectStore>>| {
            result.map_err(|e| StoreError::InvalidUrl {
                url: url.to_owned(),
                source: Box::new(e),
            })
        };
        let retry = options.retry_config();
        let (timeout, connect) = (
            humantime(options.request_timeout),
            humantime(options.connect_timeout),
        );
        // The HTTP clients are made inside the runtime that will drive them.
        let _runtime = runtime()?.enter();
        let (store, read_only) = match parsed.scheme() {
            "s3" => {
                let builder = object_store::aws::AmazonS3Builder::from_env()
                    .with_url(base)
                    .with_config(S3Key::Client(ClientConfigKey::Timeout), timeout)
                    .with_config(S3Key::Client(ClientConfigKey::ConnectTimeout), connect)
                    .with_retry(retry.clone());
                let builder = configured(
                    builder,
                    (url, host, &config),
                    &[S3Key::Bucket],
                    object_store::aws::AmazonS3Builder::with_config,
                )?;
                (built(builder.build().map(|s| Arc::new(s) as _))?, false)
            }
            "gs" => {
                let builder = object_store::gcp::GoogleCloudStorageBuilder::from_env()
                    .with_url(base)
                    .with_config(GcsKey::Client(ClientConfigKey::Timeout), timeout)
                    .with_config(GcsKey::Client(ClientConfigKey::ConnectTimeout), connect)
                    .with_retry(retry.clone());
                let builder = configured(
                    builder,
                    (url, host, &config),
                    &[GcsKey::Bucket],
                    object_store::gcp::GoogleCloudStorageBuilder::with_config,
                )?;
                (built(builder.build().map(|s| Arc::new(s) as _))?, false)
            }
            "az" | "azure" => {
                let builder = object_store::azure::MicrosoftAzureBuilder::from_env()
                    .with_url(base)
                    .with_config(AzureKey::Client(ClientConfigKey::Timeout), timeout)
                    .with_config(AzureKey::Client(ClientConfigKey::ConnectTimeout), connect)
                    .with_retry(retry.clone());
                let builder = configured(
                    builder,
                    (url, host, &config),
                    &[AzureKey::ContainerName],
                    object_store::azure::MicrosoftAzureBuilder::with_config,
                )?;
                (built(builder.build().map(|s| Arc::new(s) as _))?, false)
            }
            "http" | "https" => {
                let mut builder = configured(
                    object_store::http::HttpBuilder::new()
                        .with_url(base)
                        .with_client_options(options.client_options().with_allow_http(true))
                        .with_retry(retry),
                    (url, host, &config),
                    &[],
                    object_store::http::HttpBuilder::with_config,
                )?;
                if parsed.scheme() == "http" && !plain_http::proxied() {
                    // no TLS roots loaded for plain HTTP, unless a server redirects
                    builder = builder.with_http_connector(plain_http::PlainHttpConnector::new(
                        options.request_timeout,
                        options.connect_timeout,
                    ));
                }
                (built(builder.build().map(|s| Arc::new(s) as _))?, true)
            }
            other => {
                return Err(invalid(
                    url,
                    format!("unknown object store scheme {other:?} (expected s3, gs, az, azure, http or https)"),
                ))
            }
        };
        Ok(Self::new(store, &prefix)?
            .read_only(read_only)
            .with_remote_options(options))
    }

    /// The retries this backend makes itself, on top of those of the `object_store`
    /// underneath (which [`from_url_with`](Self::from_url_with) configures with the same
    /// `options`): `object_store` retries a request that fails before its answer's head, and
    /// resumes a GET whose body is cut short, but it reads the body of a listing (and of a
    /// bulk delete) after its retry loop, so a listing cut short fails. This backend sends
    /// such a listing (or delete) again, up to `options.max_retries` times within
    /// `options.retry_timeout`, after the same backoff (without jitter). Default:
    /// [`RemoteOptions::default`].
    #[must_use]
    pub fn with_remote_options(mut self, options: &RemoteOptions) -> Self {
        self.retry = options.clone();
        self
    }

    /// Whether [`Store::set_if`] uses the object store's conditional puts (on by default):
    /// `PutMode::Create` (`If-None-Match: *`) for a key read as absent, `PutMode::Update`
    /// (`If-Match` with the entity tag and version read by [`Store::get_versioned`]) for one
    /// read with a value. S3 (with `object_store`'s default `S3ConditionalPut::ETagMatch`;
    /// `AWS_CONDITIONAL_PUT=disabled` turns it off), GCS, Azure and `object_store`'s in-memory
    /// store support them. Turn it off for a server that ignores the preconditions: the store
    /// then says it has no conditional writes, and callers fall back to plain writes, where
    /// the last writer wins.
    #[must_use]
    pub fn with_conditional_writes(mut self, conditional: bool) -> Self {
        self.conditional = conditional;
        self
    }

    /// Whether writes and deletes are refused with [`StoreError::ReadOnly`] (stores opened
    /// from `http(s)://` urls are read-only).
    #[must_use]
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.read_only = read_only;
        self
    }

    /// Whether the store refuses writes and deletes.
    #[must_use]
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// The object store underneath.
    #[must_use]
    pub fn object_store(&self) -> &Arc<dyn ObjectStore> {
        &self.store
    }

    /// The prefix of every key (`""` or a path without a trailing `/`).
    #[must_use]
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The same store with its object store wrapped in a [`CountingObjectStore`], and that
    /// counter, so that tests can count the requests an operation costs (cargo feature
    /// `testing`, with the test doubles of [`crate::testing`]).
    #[cfg(feature = "testing")]
    #[must_use]
    pub fn with_request_counter(self) -> (Self, Arc<CountingObjectStore>) {
        let counter = Arc::new(CountingObjectStore::new(self.store));
        let store = Self {
            store: counter.clone(),
            prefix: self.prefix,
            read_only: self.read_only,
            conditional: self.conditional,
            retry: self.retry,
        };
        (store, counter)
    }

    /// The object of `key` (already validated).
    fn location(&self, key: &str) -> Result<Path> {
        let full = if self.prefix.is_empty() {
            Path::parse(key)
        } else {
            Path::parse(format!("{}/{key}", self.prefix))
        };
        full.map_err(|_| StoreError::InvalidKey {
            key: key.to_owned(),
            reason: "control characters are not allowed in object store keys",
        })
    }

    /// The object prefix of `prefix` (already validated); `None` for the whole bucket.
    fn prefix_location(&self, prefix: &str) -> Result<Option<Path>> {
        let inner = prefix.trim_end_matches('/');
        let full = match (self.prefix.is_empty(), inner.is_empty()) {
            (true, true) => return Ok(None),
            (false, true) => self.prefix.clone(),
            (true, false) => inner.to_owned(),
            (false, false) => format!("{}/{inner}", self.prefix),
        };
        Path::parse(full)
            .map(Some)
            .map_err(|_| StoreError::InvalidPrefix {
                prefix: prefix.to_owned(),
                reason: "control characters are not allowed in object store keys",
            })
    }

    /// The store key of an object, or `None` when it lies outside the store's prefix or its
    /// name is not a valid key.
    fn key_of<'a>(&self, location: &'a Path) -> Option<&'a str> {
        let raw = location.as_ref();
        let key = if self.prefix.is_empty() {
            raw
        } else {
            raw.strip_prefix(self.prefix.as_str())?.strip_prefix('/')?
        };
        validate_key(key).is_ok().then_some(key)
    }

    fn check_writable(&self, key: &str) -> Result<()> {
        if self.read_only {
            return Err(StoreError::ReadOnly {
                key: key.to_owned(),
            });
        }
        Ok(())
    }

    /// Runs `op` again while it fails on a response cut short that `object_store` did not
    /// retry itself (see [`with_remote_options`](Self::with_remote_options)).
    async fn retry_cut<T, F, Fut>(&self, mut op: F) -> object_store::Result<T>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = object_store::Result<T>>,
    {
        let start = Instant::now();
        let mut backoff = self.retry.initial_backoff;
        let mut retries = 0;
        loop {
            match op().await {
                Err(e)
                    if retries < self.retry.max_retries
                        && start.elapsed() < self.retry.retry_timeout
                        && is_unretried_transport_error(&e) =>
                {
                    tokio::time::sleep(backoff).await;
                    backoff = backoff
                        .mul_f64(self.retry.backoff_base)
                        .min(self.retry.max_backoff);
                    retries += 1;
                }
                other => return other,
            }
        }
    }

    /// Fetches `ranges` of `location`, every request in parallel.
    async fn fetch(&self, location: &Path, ranges: &[ByteRange]) -> FetchResult {
        let requests = plan_requests(ranges);
        if requests.is_empty() {
            return Ok(Fetched::Nothing);
        }
        let results: Vec<object_store::Result<Piece>> = stream::iter(requests)
            .map(|range| async move {
                let result = self
                    .store
                    .get_opts(location, GetOptions::new().with_range(Some(range)))
                    .await?;
                Piece::read(result).await
            })
            .buffer_unordered(MAX_CONCURRENT_REQUESTS)
            .collect()
            .await;
        // A missing key wins over any other failure (the responses come in any order).
        if results
            .iter()
            .any(|r| matches!(r, Err(object_store::Error::NotFound { .. })))
        {
            return Ok(Fetched::Missing);
        }
        results
            .into_iter()
            .collect::<object_store::Result<Vec<Piece>>>()
            .map(Fetched::Pieces)
    }

    /// One request of a [`Store::write_each`] batch.
    async fn write_one(&self, write: &Write<'_>) -> Result<()> {
        let key = write.key();
        let location = self.location(key)?;
        match *write {
            Write::Set(_, value) => self
                .store
                .put(&location, PutPayload::from(value.to_vec()))
                .await
                .map(drop)
                .map_err(|e| remote(key, "set", e)),
            Write::Delete(_) => match self.store.delete(&location).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
                Err(e) => Err(remote(key, "delete", e)),
            },
        }
    }

    /// One request of a [`Store::fetch_each`] batch.
    async fn fetch_one(&self, request: &Fetch<'_>) -> Result<FetchedAnswer> {
        let key = request.key();
        validate_key(key)?;
        let location = self.location(key)?;
        Ok(match *request {
            Fetch::Value(_) => FetchedAnswer::Value(match self.store.get(&location).await {
                Ok(result) => Some(
                    whole_value(result)
                        .await
                        .map_err(|e| remote(key, "get", e))?,
                ),
                Err(object_store::Error::NotFound { .. }) => None,
                Err(e) => return Err(remote(key, "get", e)),
            }),
            Fetch::Ranges(_, ranges) => {
                FetchedAnswer::Ranges(self.read_ranges(key, &location, ranges).await?)
            }
            Fetch::Size(_) => FetchedAnswer::Size(
                self.head_size(&location)
                    .await
                    .map_err(|e| remote(key, "size", e))?,
            ),
        })
    }

    /// The size of `location` by a HEAD request, `None` when it does not exist.
    async fn head_size(&self, location: &Path) -> object_store::Result<Option<u64>> {
        match self.store.head(location).await {
            Ok(meta) => Ok(Some(meta.size)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn read_ranges(
        &self,
        key: &str,
        location: &Path,
        ranges: &[ByteRange],
    ) -> Result<Option<Vec<Vec<u8>>>> {
        let remote = |e| remote(key, "get_ranges", e);
        match self.fetch(location, ranges).await {
            Ok(Fetched::Missing) => Ok(None),
            Ok(Fetched::Pieces(pieces)) => assemble(key, ranges, &pieces).map(Some),
            Ok(Fetched::Nothing) => {
                // Only empty ranges: the size alone decides.
                let Some(size) = self.head_size(location).await.map_err(remote)? else {
                    return Ok(None);
                };
                resolve_all(key, ranges, size)?;
                Ok(Some(vec![Vec::new(); ranges.len()]))
            }
            Err(object_store::Error::NotSupported { .. }) => {
                // A plain HTTP server that ignores `Range` (it answered 200 with everything):
                // read the whole value and cut the ranges out of it.
                let value = match self.store.get(location).await {
                    Ok(result) => result.bytes().await.map_err(remote)?,
                    Err(object_store::Error::NotFound { .. }) => return Ok(None),
                    Err(e) => return Err(remote(e)),
                };
                let resolved = resolve_all(key, ranges, value.len() as u64)?;
                Ok(Some(
                    resolved
                        .into_iter()
                        .map(|range| value[range].to_vec())
                        .collect(),
                ))
            }
            Err(error) => {
                // A range the server refused (it starts past the end, or it is a suffix of an
                // empty value) or a real failure: the size tells which.
                let Ok(size) = self.head_size(location).await else {
                    return Err(remote(error));
                };
                let Some(size) = size else {
                    return Ok(None);
                };
                let exact: Vec<ByteRange> = resolve_all(key, ranges, size)?
                    .into_iter()
                    .map(|r| ByteRange::from(r.start as u64..r.end as u64))
                    .collect();
                match self.fetch(location, &exact).await.map_err(remote)? {
                    Fetched::Missing => Ok(None),
                    Fetched::Nothing => Ok(Some(vec![Vec::new(); ranges.len()])),
                    Fetched::Pieces(pieces) => assemble(key, &exact, &pieces).map(Some),
                }
            }
        }
    }
}

type FetchResult = object_store::Result<Fetched>;

/// The outcome of fetching the ranges of one key.
enum Fetched {
    /// The key does not exist.
    Missing,
    /// No range needed a request (all of them are empty).
    Nothing,
    /// The responses, in no particular order.
    Pieces(Vec<Piece>),
}

/// One ranged response: the bytes of `range` of a value of `size` bytes.
struct Piece {
    range: Range<u64>,
    size: u64,
    bytes: Vec<u8>,
}

impl Piece {
    async fn read(result: GetResult) -> object_store::Result<Self> {
        let range = result.range.clone();
        let size = result.meta.size;
        let bytes = Vec::from(result.bytes().await?);
        Ok(Self { range, size, bytes })
    }
}

/// The requests that fetch `ranges`: non-empty bounded ranges merged when closer than
/// [`COALESCE_GAP`], each offset and each non-empty suffix as one request of its own (no HEAD
/// is needed: every ranged response carries the size).
fn plan_requests(ranges: &[ByteRange]) -> Vec<GetRange> {
    let mut bounded: Vec<Range<u64>> = ranges
        .iter()
        .filter_map(|range| match *range {
            ByteRange::Range { start, end } if start < end => Some(start..end),
            _ => None,
        })
        .collect();
    bounded.sort_unstable_by_key(|r| (r.start, r.end));
    let mut requests: Vec<GetRange> = Vec::new();
    let mut current: Option<Range<u64>> = None;
    for range in bounded {
        match &mut current {
            Some(group) if range.start <= group.end.saturating_add(COALESCE_GAP) => {
                group.end = group.end.max(range.end);
            }
            _ => {
                if let Some(group) = current.replace(range) {
                    requests.push(GetRange::Bounded(group));
                }
            }
        }
    }
    if let Some(group) = current {
        requests.push(GetRange::Bounded(group));
    }
    for range in ranges {
        let request = match *range {
            ByteRange::FromStart(offset) => GetRange::Offset(offset),
            ByteRange::Suffix(len) if len > 0 => GetRange::Suffix(len),
            _ => continue,
        };
        if !requests.contains(&request) {
            requests.push(request);
        }
    }
    requests
}

/// Cuts `ranges` out of the responses, after checking them against the value's size.
fn assemble(key: &str, ranges: &[ByteRange], pieces: &[Piece]) -> Result<Vec<Vec<u8>>> {
    let inconsistent = |what: String| StoreError::Remote {
        key: key.to_owned(),
        op: "get_ranges",
        source: what.into(),
    };
    let Some(size) = pieces.first().map(|p| p.size) else {
        return Err(inconsistent("no response".to_owned()));
    };
    if let Some(other) = pieces.iter().find(|p| p.size != size) {
        return Err(inconsistent(format!(
            "the value changed during the read ({size} bytes, then {} bytes)",
            other.size
        )));
    }
    for piece in pieces {
        if piece.bytes.len() as u64 != piece.range.end.saturating_sub(piece.range.start) {
            return Err(inconsistent(format!(
                "the response for bytes {}..{} holds {} bytes",
                piece.range.start,
                piece.range.end,
                piece.bytes.len()
            )));
        }
    }
    let resolved = resolve_all(key, ranges, size)?;
    resolved
        .into_iter()
        .map(|range| {
            if range.is_empty() {
                return Ok(Vec::new());
            }
            let (start, end) = (range.start as u64, range.end as u64);
            let piece = pieces
                .iter()
                .find(|p| p.range.start <= start && end <= p.range.end)
                .ok_or_else(|| inconsistent(format!("no response covers bytes {start}..{end}")))?;
            let offset = (start - piece.range.start) as usize;
            Ok(piece.bytes[offset..offset + range.len()].to_vec())
        })
        .collect()
}

impl RemoteOptions {
    /// `object_store`'s retry configuration of these options, for an `object_store` built by
    /// hand (cargo feature `object-store`).
    #[must_use]
    pub fn retry_config(&self) -> RetryConfig {
        RetryConfig {
            backoff: BackoffConfig {
                init_backoff: self.initial_backoff,
                max_backoff: self.max_backoff,
                base: self.backoff_base,
            },
            max_retries: self.max_retries,
            retry_timeout: self.retry_timeout,
        }
    }

    /// `object_store`'s client options with the timeouts of these options (and its other
    /// defaults), for an `object_store` built by hand (cargo feature `object-store`).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use zarr_store::object_store::http::HttpBuilder;
    /// use zarr_store::{ObjectStoreBackend, RemoteOptions};
    ///
    /// let options = RemoteOptions::default().with_max_retries(2);
    /// let http = HttpBuilder::new()
    ///     .with_url("http://127.0.0.1:1")
    ///     .with_client_options(options.client_options().with_allow_http(true))
    ///     .with_retry(options.retry_config())
    ///     .build()?;
    /// let store = ObjectStoreBackend::new(Arc::new(http), "data.zarr")?.read_only(true);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn client_options(&self) -> ClientOptions {
        ClientOptions::new()
            .with_timeout(self.request_timeout)
            .with_connect_timeout(self.connect_timeout)
    }
}

/// The body of a whole-value GET, checked against the size its answer announced: a body
/// cut short is an error, never a value (HTTP/1.1 catches a cut against `Content-Length`
/// already; this holds for answers without one too).
async fn whole_value(result: GetResult) -> object_store::Result<Vec<u8>> {
    let announced = result.range.end.saturating_sub(result.range.start);
    let bytes = result.bytes().await?;
    if bytes.len() as u64 != announced {
        return Err(object_store::Error::Generic {
            store: "object store",
            source: format!(
                "the response holds {} bytes where its headers announced {announced}",
                bytes.len()
            )
            .into(),
        });
    }
    Ok(Vec::from(bytes))
}

/// Whether `error` is a transport failure (a connection cut, a body cut short) that
/// `object_store`'s retry loop did not see: an `HttpError` in its sources and no retry
/// error (whose message starts with "Error performing"; its type is not public) above it.
fn is_unretried_transport_error(error: &object_store::Error) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = cause {
        if e.to_string().starts_with("Error performing ") {
            return false;
        }
        if e.downcast_ref::<object_store::client::HttpError>()
            .is_some()
        {
            return true;
        }
        cause = e.source();
    }
    false
}

/// A duration as the builders' string configuration reads it (`humantime`), to the
/// nanosecond.
/// `builder` with each setting of `config` (`(url, bucket, settings)`) applied by `set`,
/// its key parsed as the builder's; a setting of `fixed` (the bucket or container, which the
/// url gives) must be the url's.
fn configured<B, K: std::str::FromStr + PartialEq>(
    builder: B,
    (url, bucket, config): (&str, &str, &[(&str, &str)]),
    fixed: &[K],
    set: fn(B, K, String) -> B,
) -> Result<B> {
    let scheme = url.split_once("://").map_or("", |(s, _)| s);
    config.iter().try_fold(builder, |builder, &(key, value)| {
        let parsed: K = key
            .parse()
            .map_err(|_| invalid(url, format!("{scheme}:// stores have no setting {key:?}")))?;
        if fixed.contains(&parsed) {
            if value != bucket {
                return Err(invalid(
                    url,
                    format!("setting {key:?} is {value:?}, not the url's {bucket:?}"),
                ));
            }
            return Ok(builder);
        }
        Ok(set(builder, parsed, value.to_owned()))
    })
}

fn humantime(duration: std::time::Duration) -> String {
    format!("{}ns", duration.as_nanos())
}

/// A [`StoreError::Remote`].
fn remote(key: &str, op: &'static str, source: object_store::Error) -> StoreError {
    StoreError::Remote {
        key: key.to_owned(),
        op,
        source: Box::new(source),
    }
}

/// The tokio runtime every [`ObjectStoreBackend`] blocks on, started at first use, one per
/// process: a process forked from one that used it (`multiprocessing`'s fork, a Dask worker)
/// has none of its threads, so that no request would ever be answered; the first call in
/// the child starts a runtime of its own (the parent's is left as it is, never shut down).
/// Stores opened in the parent keep their clients, bound to the parent's runtime: open them
/// again in the child.
fn runtime() -> Result<&'static Runtime> {
    static RUNTIME: Mutex<Option<(u32, &'static Runtime)>> = Mutex::new(None);
    let pid = std::process::id();
    let mut held = RUNTIME.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((owner, runtime)) = *held {
        if owner == pid {
            return Ok(runtime);
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .thread_name("zarr-store-io")
        .enable_all()
        .build()
        .map_err(|e| StoreError::Io {
            key: String::new(),
            source: std::io::Error::other(format!(
                "cannot start the tokio runtime of the object store: {e}"
            )),
        })?;
    // one runtime per process, for as long as it runs
    let runtime: &'static Runtime = Box::leak(Box::new(runtime));
    *held = Some((pid, runtime));
    Ok(runtime)
}

/// Runs `future` to completion on the shared runtime, from any thread.
///
/// `Runtime::block_on` panics when the calling thread is already inside a runtime, so from a
/// multi-thread runtime's thread the call goes through `block_in_place`, and from a
/// current-thread runtime (which cannot block in place) through a helper thread.
fn block_on<F>(future: F) -> Result<F::Output>
where
    F: Future + Send,
    F::Output: Send,
{
    let runtime = runtime()?;
    Ok(match Handle::try_current() {
        Err(_) => runtime.block_on(future),
        Ok(handle) if handle.runtime_flavor() == RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(|| runtime.block_on(future))
        }
        Ok(_) => std::thread::scope(|scope| {
            scope
                .spawn(|| runtime.block_on(future))
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        }),
    })
}

impl Store for ObjectStoreBackend {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        validate_key(key)?;
        let location = self.location(key)?;
        block_on(async {
            match self.store.get(&location).await {
                Ok(result) => whole_value(result).await.map(Some),
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(e),
            }
        })?
        .map_err(|e| remote(key, "get", e))
    }

    /// Up to [`RemoteOptions::concurrency`] GETs in flight at once.
    fn get_many(&self, keys: &[&str]) -> Result<Vec<Option<Vec<u8>>>> {
        let locations = keys
            .iter()
            .map(|key| {
                validate_key(key)?;
                self.location(key)
            })
            .collect::<Result<Vec<Path>>>()?;
        let results: Vec<object_store::Result<Option<Vec<u8>>>> = block_on(async {
            let store = &self.store;
            stream::iter(locations)
                .map(|location: Path| async move {
                    match store.get(&location).await {
                        Ok(result) => whole_value(result).await.map(Some),
                        Err(object_store::Error::NotFound { .. }) => Ok(None),
                        Err(e) => Err(e),
                    }
                })
                .buffered(self.retry.concurrency)
                .collect()
                .await
        })?;
        results
            .into_iter()
            .zip(keys)
            .map(|(result, key)| result.map_err(|e| remote(key, "get", e)))
            .collect()
    }

    fn fetch_concurrency(&self) -> usize {
        self.retry.concurrency
    }

    fn max_bytes_in_flight(&self) -> u64 {
        self.retry.max_bytes_in_flight
    }

    /// Every request on the shared runtime, up to [`RemoteOptions::concurrency`] in flight
    /// (no thread waits on any of them), each answer delivered on the calling thread as it
    /// arrives. No request starts while the byte ranges in flight and the answers being
    /// delivered pass [`RemoteOptions::max_bytes_in_flight`] (one at least always runs).
    fn fetch_each(&self, requests: &[Fetch<'_>], deliver: &mut Deliver<'_>) -> Result<()> {
        block_on(async {
            let (concurrency, budget) = (self.retry.concurrency, self.retry.max_bytes_in_flight);
            let mut pending = FuturesUnordered::new();
            let (mut next, mut held) = (0, 0u64);
            loop {
                while let Some(request) = requests.get(next) {
                    let len = request.known_len();
                    let room = pending.is_empty()
                        || (pending.len() < concurrency && held.saturating_add(len) <= budget);
                    if !room {
                        break;
                    }
                    held = held.saturating_add(len);
                    let i = next;
                    pending.push(async move { (i, len, self.fetch_one(request).await) });
                    next += 1;
                }
                let Some((i, len, answer)) = pending.next().await else {
                    break;
                };
                held = held.saturating_sub(len);
                deliver(i, answer);
            }
        })
    }

    fn get_ranges(&self, key: &str, ranges: &[ByteRange]) -> Result<Option<Vec<Vec<u8>>>> {
        validate_key(key)?;
        let location = self.location(key)?;
        block_on(self.read_ranges(key, &location, ranges))?
    }

    /// Every PUT and DELETE on the shared runtime, up to [`RemoteOptions::concurrency`] in
    /// flight.
    fn write_each(&self, writes: &[Write<'_>]) -> Result<()> {
        for write in writes {
            validate_key(write.key())?;
            self.check_writable(write.key())?;
        }
        block_on(async {
            let mut pending = FuturesUnordered::new();
            let mut first_error = None;
            let mut next = writes.iter();
            loop {
                while pending.len() < self.retry.concurrency {
                    let Some(write) = next.next() else {
                        break;
                    };
                    pending.push(self.write_one(write));
                }
                let Some(result) = pending.next().await else {
                    break;
                };
                if let Err(e) = result {
                    first_error.get_or_insert(e);
                }
            }
            first_error.map_or(Ok(()), Err)
        })?
    }

    fn size(&self, key: &str) -> Result<Option<u64>> {
        validate_key(key)?;
        let location = self.location(key)?;
        block_on(self.head_size(&location))?.map_err(|e| remote(key, "size", e))
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        validate_key(key)?;
        self.check_writable(key)?;
        let location = self.location(key)?;
        let payload = PutPayload::from(value.to_vec());
        block_on(self.store.put(&location, payload))?
            .map(drop)
            .map_err(|e| remote(key, "set", e))
    }

    /// `false` for a read-only store or one made
    /// [`with_conditional_writes(false)`](ObjectStoreBackend::with_conditional_writes).
    fn conditional_writes(&self) -> bool {
        self.conditional && !self.read_only
    }

    /// One GET; the version is the object's entity tag and version id from its answer.
    fn get_versioned(&self, key: &str) -> Result<Option<(Vec<u8>, Version)>> {
        validate_key(key)?;
        let location = self.location(key)?;
        block_on(async {
            match self.store.get(&location).await {
                Ok(result) => {
                    let version =
                        Version::object(result.meta.e_tag.clone(), result.meta.version.clone());
                    result.bytes().await.map(|b| Some((Vec::from(b), version)))
                }
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(e),
            }
        })?
        .map_err(|e| remote(key, "get", e))
    }

    /// One conditional PUT (see
    /// [`with_conditional_writes`](ObjectStoreBackend::with_conditional_writes)); a failed
    /// precondition, or an object that exists (for [`Condition::Absent`]) or is gone (for
    /// [`Condition::Matches`]), is [`Outcome::Conflict`].
    fn set_if(&self, key: &str, value: &[u8], condition: &Condition) -> Result<Outcome> {
        validate_key(key)?;
        self.check_writable(key)?;
        if !self.conditional {
            return Err(StoreError::NoConditionalWrites {
                key: key.to_owned(),
            });
        }
        let location = self.location(key)?;
        let mode = match condition {
            Condition::Absent => PutMode::Create,
            Condition::Matches(version) => {
                let Some((e_tag, version)) = version.object_tags() else {
                    // a version of another kind of store can never match here
                    return Ok(Outcome::Conflict);
                };
                PutMode::Update(UpdateVersion {
                    e_tag: e_tag.map(str::to_owned),
                    version: version.map(str::to_owned),
                })
            }
        };
        let payload = PutPayload::from(value.to_vec());
        match block_on(
            self.store
                .put_opts(&location, payload, PutOptions::from(mode)),
        )? {
            Ok(put) => Ok(Outcome::Written(Version::object(put.e_tag, put.version))),
            Err(
                object_store::Error::Precondition { .. }
                | object_store::Error::AlreadyExists { .. }
                | object_store::Error::NotFound { .. },
            ) => Ok(Outcome::Conflict),
            Err(e) => Err(remote(key, "set_if", e)),
        }
    }

    fn delete(&self, key: &str) -> Result<()> {
        validate_key(key)?;
        self.check_writable(key)?;
        let location = self.location(key)?;
        match block_on(self.store.delete(&location))? {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(remote(key, "delete", e)),
        }
    }

    fn delete_prefix(&self, prefix: &str) -> Result<()> {
        validate_prefix(prefix)?;
        self.check_writable(prefix)?;
        let location = self.prefix_location(prefix)?;
        block_on(self.retry_cut(|| async {
            let doomed = self
                .store
                .list(location.as_ref())
                .map_ok(|meta| meta.location)
                .boxed();
            let mut deleted = self.store.delete_stream(doomed);
            while let Some(result) = deleted.next().await {
                match result {
                    Ok(_) | Err(object_store::Error::NotFound { .. }) => {}
                    Err(e) => return Err(e),
                }
            }
            Ok(())
        }))?
        .map_err(|e| remote(prefix, "delete_prefix", e))
    }

    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        validate_prefix(prefix)?;
        let location = self.prefix_location(prefix)?;
        let objects: Vec<ObjectMeta> =
            block_on(self.retry_cut(|| self.store.list(location.as_ref()).try_collect()))?
                .map_err(|e| remote(prefix, "list", e))?;
        let mut keys: Vec<String> = objects
            .iter()
            .filter_map(|meta| self.key_of(&meta.location))
            .filter(|key| key.starts_with(prefix))
            .map(str::to_owned)
            .collect();
        keys.sort_unstable();
        keys.dedup();
        Ok(keys)
    }

    /// One listing: the sizes come with it (no HEAD per key).
    fn list_prefix_sizes(&self, prefix: &str) -> Result<Vec<(String, u64)>> {
        validate_prefix(prefix)?;
        let location = self.prefix_location(prefix)?;
        let objects: Vec<ObjectMeta> =
            block_on(self.retry_cut(|| self.store.list(location.as_ref()).try_collect()))?
                .map_err(|e| remote(prefix, "list", e))?;
        let mut keys: Vec<(String, u64)> = objects
            .iter()
            .filter_map(|meta| Some((self.key_of(&meta.location)?, meta.size)))
            .filter(|(key, _)| key.starts_with(prefix))
            .map(|(key, size)| (key.to_owned(), size))
            .collect();
        keys.sort_unstable();
        keys.dedup_by(|a, b| a.0 == b.0);
        Ok(keys)
    }

    fn list_dir(&self, prefix: &str) -> Result<ListDir> {
        validate_prefix(prefix)?;
        let location = self.prefix_location(prefix)?;
        let listing =
            block_on(self.retry_cut(|| self.store.list_with_delimiter(location.as_ref())))?
                .map_err(|e| remote(prefix, "list_dir", e))?;
        let mut keys: Vec<String> = listing
            .objects
            .iter()
            .filter_map(|meta| self.key_of(&meta.location))
            .filter(|key| {
                key.strip_prefix(prefix)
                    .is_some_and(|rest| !rest.contains('/'))
            })
            .map(str::to_owned)
            .collect();
        let mut prefixes: Vec<String> = listing
            .common_prefixes
            .iter()
            .filter_map(|location| self.key_of(location))
            .filter(|sub| {
                sub.strip_prefix(prefix)
                    .is_some_and(|rest| !rest.contains('/'))
            })
            .map(|sub| format!("{sub}/"))
            .collect();
        keys.sort_unstable();
        keys.dedup();
        prefixes.sort_unstable();
        prefixes.dedup();
        Ok(ListDir { keys, prefixes })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_planned_and_merged() {
        let r = |start, end| ByteRange::Range { start, end };
        assert_eq!(
            plan_requests(&[ByteRange::Suffix(16)]),
            [GetRange::Suffix(16)]
        );
        assert!(plan_requests(&[ByteRange::Suffix(0), r(5, 5)]).is_empty());
        assert_eq!(
            plan_requests(&[r(100, 200), r(0, 10), r(150, 300), ByteRange::FromStart(7)]),
            [GetRange::Bounded(0..300), GetRange::Offset(7)]
        );
        let far = COALESCE_GAP * 4;
        assert_eq!(
            plan_requests(&[
                r(far, far + 1),
                r(0, 1),
                ByteRange::Suffix(3),
                ByteRange::Suffix(3)
            ]),
            [
                GetRange::Bounded(0..1),
                GetRange::Bounded(far..far + 1),
                GetRange::Suffix(3)
            ]
        );
        // Out-of-order or inverted ranges fetch nothing: they fail the bounds check.
        assert!(plan_requests(&[r(9, 3)]).is_empty());
    }

    #[test]
    fn a_short_body_is_an_error() {
        let body = |bytes: &'static [u8], announced: u64| {
            let chunks: Vec<object_store::Result<_>> =
                PutPayload::from_static(bytes).into_iter().map(Ok).collect();
            GetResult {
                payload: object_store::GetResultPayload::Stream(stream::iter(chunks).boxed()),
                meta: ObjectMeta {
                    location: Path::from("k"),
                    last_modified: Default::default(),
                    size: announced,
                    e_tag: None,
                    version: None,
                },
                range: 0..announced,
                attributes: Default::default(),
                extensions: Default::default(),
            }
        };
        let got = block_on(whole_value(body(b"abcde", 5))).unwrap();
        assert_eq!(got.unwrap(), b"abcde");
        let short = block_on(whole_value(body(b"abc", 5))).unwrap();
        let message = short.unwrap_err().to_string();
        assert!(
            message.contains("holds 3 bytes where its headers announced 5"),
            "{message}"
        );
    }

    #[test]
    fn prefixes_and_keys() {
        let memory = Arc::new(object_store::memory::InMemory::new());
        let store = ObjectStoreBackend::new(memory.clone(), "data/x.zarr/").unwrap();
        assert_eq!(store.prefix(), "data/x.zarr");
        assert_eq!(
            store.location("a/c/0").unwrap().as_ref(),
            "data/x.zarr/a/c/0"
        );
        assert_eq!(
            store.prefix_location("a/").unwrap().unwrap().as_ref(),
            "data/x.zarr/a"
        );
        assert_eq!(
            store.prefix_location("").unwrap().unwrap().as_ref(),
            "data/x.zarr"
        );
        let other = Path::from("data/x.zarrr/k");
        assert_eq!(store.key_of(&other), None);
        let inside = Path::from("data/x.zarr/a/k");
        assert_eq!(store.key_of(&inside), Some("a/k"));
        assert!(matches!(
            store.location("a\tb"),
            Err(StoreError::InvalidKey { .. })
        ));
        let root = ObjectStoreBackend::new(memory, "").unwrap();
        assert_eq!(root.prefix_location("").unwrap(), None);
        for bad in ["../x", "a//b", "a/./b", ".tmp-x"] {
            let memory = Arc::new(object_store::memory::InMemory::new());
            assert!(
                matches!(
                    ObjectStoreBackend::new(memory, bad),
                    Err(StoreError::InvalidPrefix { .. })
                ),
                "{bad:?}"
            );
        }
    }
}
