//! How remote stores retry and time out: [`RemoteOptions`].

use std::time::Duration;

use crate::error::{Result, StoreError};

/// Timeouts and retries of the requests of a remote store (`s3://`, `gs://`, `az://`,
/// `http(s)://`; cargo feature `object-store`), given to
/// [`open_url_with`](crate::open_url_with) or `ObjectStoreBackend::from_url_with`.
///
/// Every request is bounded by [`request_timeout`](Self::request_timeout) (the whole
/// request, the response body included) and its connection by
/// [`connect_timeout`](Self::connect_timeout). A request that fails with a 5xx answer
/// (`SlowDown` included), a 429, a dropped connection, a timeout or a response body cut short
/// is sent again after a backoff (exponential with jitter, from
/// [`initial_backoff`](Self::initial_backoff) growing by [`backoff_base`](Self::backoff_base)
/// up to [`max_backoff`](Self::max_backoff)), until [`max_retries`](Self::max_retries) retries
/// were made or [`retry_timeout`](Self::retry_timeout) has passed since the first attempt.
/// A cut body is resumed by a ranged request for the rest (when the object still has the same
/// ETag), never returned short. Answers that retrying cannot change (403, 404, 412...) fail
/// at once. So a request that keeps failing is reported after at most about
/// `retry_timeout + max_backoff + request_timeout` (105 s with the defaults).
///
/// The defaults are `object_store`'s own, except the retry timeout (its default is 3 min):
///
/// | option | default |
/// |---|---|
/// | `request_timeout` | 30 s |
/// | `connect_timeout` | 5 s |
/// | `max_retries` | 10 |
/// | `retry_timeout` | 60 s |
/// | `initial_backoff` | 100 ms |
/// | `max_backoff` | 15 s |
/// | `backoff_base` | 2 |
///
/// and the batched reads of [`Store::fetch_each`](crate::Store::fetch_each) (which every
/// read path of zarr-array goes through on a remote store) keep up to
/// [`concurrency`](Self::concurrency) requests in flight (default
/// [`DEFAULT_REMOTE_CONCURRENCY`], 256, as Icechunk; `ZARR_CONCURRENCY` in the environment
/// sets it for [`RemoteOptions::from_env`], which [`open_url`](crate::open_url) uses), and
/// start no request while [`max_bytes_in_flight`](Self::max_bytes_in_flight) bytes (default
/// 256 MiB) are on their way or waiting to be decoded.
///
/// ```
/// use std::time::Duration;
/// use zarr_store::RemoteOptions;
///
/// let options = RemoteOptions::default()
///     .with_request_timeout(Duration::from_secs(10))
///     .with_max_retries(3)
///     .with_retry_timeout(Duration::from_secs(20));
/// assert_eq!(options.connect_timeout, Duration::from_secs(5));
/// assert_eq!(options.max_retries, 3);
/// // without cargo feature `object-store` a remote url is refused whatever the options
/// # #[cfg(feature = "object-store")]
/// let store = zarr_store::open_url_with("s3://bucket/data.zarr", &options)?;
/// # Ok::<(), zarr_store::StoreError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RemoteOptions {
    /// The longest a request may take, from sending it to the last byte of its answer.
    pub request_timeout: Duration,
    /// The longest opening a connection may take.
    pub connect_timeout: Duration,
    /// How many times a failed request is sent again (0: never).
    pub max_retries: usize,
    /// No retry starts later than this after the first attempt of a request.
    pub retry_timeout: Duration,
    /// The wait before the first retry.
    pub initial_backoff: Duration,
    /// The longest wait between two attempts.
    pub max_backoff: Duration,
    /// The factor by which the wait grows from one retry to the next (at least 1).
    pub backoff_base: f64,
    /// The most requests a batched read keeps in flight at once (at least 1).
    pub concurrency: usize,
    /// The most bytes a batched read has on their way or delivered and not yet consumed, past
    /// which it starts no further request (the requests whose size is known beforehand, the
    /// byte ranges, count from their start; whole values from their arrival).
    pub max_bytes_in_flight: u64,
}

/// The default of [`RemoteOptions::concurrency`]: requests in flight at once on a remote store.
pub const DEFAULT_REMOTE_CONCURRENCY: usize = 256;

/// The environment variable that sets [`RemoteOptions::concurrency`] in
/// [`RemoteOptions::from_env`].
pub const CONCURRENCY_ENV: &str = "ZARR_CONCURRENCY";

impl Default for RemoteOptions {
    fn default() -> Self {
        Self {
            request_timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(5),
            max_retries: 10,
            retry_timeout: Duration::from_secs(60),
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(15),
            backoff_base: 2.0,
            concurrency: DEFAULT_REMOTE_CONCURRENCY,
            max_bytes_in_flight: 256 << 20,
        }
    }
}

impl RemoteOptions {
    /// The defaults, with [`concurrency`](Self::concurrency) from `ZARR_CONCURRENCY` when it
    /// is set.
    ///
    /// # Errors
    /// [`StoreError::InvalidOption`] when `ZARR_CONCURRENCY` is set to anything but a
    /// whole number from 1 up.
    pub fn from_env() -> Result<Self> {
        let options = Self::default();
        match std::env::var(CONCURRENCY_ENV) {
            Err(std::env::VarError::NotPresent) => Ok(options),
            Ok(value) => Ok(options.with_concurrency(parse_concurrency(CONCURRENCY_ENV, &value)?)),
            Err(std::env::VarError::NotUnicode(_)) => Err(StoreError::InvalidOption {
                option: CONCURRENCY_ENV,
                reason: "not valid unicode".to_owned(),
            }),
        }
    }

    /// The most requests a batched read keeps in flight (0 counts as 1).
    #[must_use]
    pub fn with_concurrency(mut self, concurrency: usize) -> Self {
        self.concurrency = concurrency.max(1);
        self
    }

    /// The most bytes a batched read has in flight before it waits (0 counts as 1: one
    /// request at a time).
    #[must_use]
    pub fn with_max_bytes_in_flight(mut self, bytes: u64) -> Self {
        self.max_bytes_in_flight = bytes.max(1);
        self
    }

    /// The longest a request may take, its answer included.
    #[must_use]
    pub fn with_request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// The longest opening a connection may take.
    #[must_use]
    pub fn with_connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// How many times a failed request is sent again (0: never).
    #[must_use]
    pub fn with_max_retries(mut self, retries: usize) -> Self {
        self.max_retries = retries;
        self
    }

    /// No retry starts later than this after the first attempt.
    #[must_use]
    pub fn with_retry_timeout(mut self, timeout: Duration) -> Self {
        self.retry_timeout = timeout;
        self
    }

    /// The backoff between attempts: `initial` before the first retry, then growing by `base`
    /// (a `base` below 1, or not a number, counts as 1: a constant wait) up to `max`.
    #[must_use]
    pub fn with_backoff(mut self, initial: Duration, max: Duration, base: f64) -> Self {
        self.initial_backoff = initial;
        self.max_backoff = max.max(initial);
        self.backoff_base = if base.is_finite() && base >= 1.0 {
            base
        } else {
            1.0
        };
        self
    }
}

/// A concurrency as written in `option` (`ZARR_CONCURRENCY`, `--concurrency`): a whole
/// number from 1 up.
///
/// # Errors
/// [`StoreError::InvalidOption`] naming `option` for anything else.
pub fn parse_concurrency(option: &'static str, value: &str) -> Result<usize> {
    match value.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(StoreError::InvalidOption {
            option,
            reason: format!("{value:?} is not a whole number from 1 up"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concurrency_is_parsed_and_kept_sane() {
        assert_eq!(parse_concurrency("x", " 64 ").ok(), Some(64));
        for bad in ["0", "-3", "many", ""] {
            let err = parse_concurrency("ZARR_CONCURRENCY", bad).unwrap_err();
            assert!(
                err.to_string().starts_with("invalid ZARR_CONCURRENCY: "),
                "{err}"
            );
        }
        assert_eq!(RemoteOptions::default().concurrency, 256);
        assert_eq!(RemoteOptions::default().with_concurrency(0).concurrency, 1);
        let o = RemoteOptions::default().with_max_bytes_in_flight(0);
        assert_eq!(o.max_bytes_in_flight, 1);
    }

    #[test]
    fn backoff_is_kept_sane() {
        let d = Duration::from_millis;
        let o = RemoteOptions::default().with_backoff(d(50), d(10), f64::NAN);
        assert_eq!(
            (o.initial_backoff, o.max_backoff, o.backoff_base),
            (d(50), d(50), 1.0)
        );
        let o = RemoteOptions::default().with_backoff(d(50), d(900), 0.5);
        assert_eq!(o.backoff_base, 1.0);
        let o = RemoteOptions::default().with_backoff(d(50), d(900), 3.0);
        assert_eq!((o.max_backoff, o.backoff_base), (d(900), 3.0));
    }
}
