//! How remote stores retry and time out: [`RemoteOptions`].

use std::time::Duration;

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
}

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
        }
    }
}

impl RemoteOptions {
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

#[cfg(test)]
mod tests {
    use super::*;

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
