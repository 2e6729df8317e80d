//! The HTTP client of `http://` stores: no TLS roots loaded unless a server redirects.
//!
//! `object_store`'s client loads the system's TLS roots (a file per certificate authority,
//! about 150 on a Linux system, some milliseconds) when it is built, before the first
//! request, whether or not any connection will use TLS. A store opened from an `http://`
//! url connects in plain HTTP: its requests go through a client without roots that follows
//! no redirects. A redirect (to `https://`, say) is the one case where the requests may
//! need TLS: the request is sent again through `object_store`'s own client (built then,
//! with the roots, following redirects as before), as is every later request of the store.
//! With a proxy in the environment (which may be reached over TLS) the store keeps
//! `object_store`'s client.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use async_trait::async_trait;
use object_store::client::{
    HttpClient, HttpConnector, HttpError, HttpErrorKind, HttpRequest, HttpResponse, HttpService,
    ReqwestConnector,
};
use object_store::ClientOptions;

/// Whether the environment names a proxy for plain HTTP requests (`reqwest` reads these
/// variables; a proxy may be reached over TLS, which needs the roots): then `http://` stores
/// keep `object_store`'s own client.
pub(crate) fn proxied() -> bool {
    ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"]
        .iter()
        .any(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()))
}

/// The [`HttpConnector`] of `http://` stores (see the module documentation).
#[derive(Debug)]
pub(crate) struct PlainHttpConnector {
    /// The timeouts of the plain client (those of the options given to `connect` are
    /// `object_store`'s own configuration values; these are the same, as durations).
    timeout: Duration,
    connect_timeout: Duration,
}

impl PlainHttpConnector {
    pub(crate) fn new(timeout: Duration, connect_timeout: Duration) -> Self {
        Self {
            timeout,
            connect_timeout,
        }
    }
}

impl HttpConnector for PlainHttpConnector {
    fn connect(&self, options: &ClientOptions) -> object_store::Result<HttpClient> {
        // as `object_store` configures its client (no compression: it needs the lengths the
        // answers announce), without TLS roots and without following redirects
        let plain = reqwest::ClientBuilder::new()
            .user_agent(USER_AGENT)
            .timeout(self.timeout)
            .connect_timeout(self.connect_timeout)
            .no_gzip()
            .no_brotli()
            .no_zstd()
            .no_deflate()
            .tls_certs_only([])
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| object_store::Error::Generic {
                store: "HTTP",
                source: Box::new(e),
            })?;
        Ok(HttpClient::new(PlainFirst {
            plain,
            options: options.clone(),
            full: Arc::new(OnceLock::new()),
        }))
    }
}

/// The user agent of the plain client.
const USER_AGENT: &str = concat!("zarr-store/", env!("CARGO_PKG_VERSION"));

/// Requests through the plain client until a server redirects, then through the full one.
#[derive(Debug)]
struct PlainFirst {
    plain: reqwest::Client,
    options: ClientOptions,
    /// `object_store`'s client, built at the first redirect.
    full: Arc<OnceLock<HttpClient>>,
}

impl PlainFirst {
    fn full(&self) -> Result<&HttpClient, HttpError> {
        if let Some(full) = self.full.get() {
            return Ok(full);
        }
        let client = ReqwestConnector::default()
            .connect(&self.options)
            .map_err(|e| HttpError::new(HttpErrorKind::Connect, e))?;
        Ok(self.full.get_or_init(|| client))
    }
}

#[async_trait]
impl HttpService for PlainFirst {
    async fn call(&self, req: HttpRequest) -> Result<HttpResponse, HttpError> {
        if let Some(full) = self.full.get() {
            return full.execute(req).await;
        }
        let (parts, body) = req.into_parts();
        let again = HttpRequest::from_parts(parts.clone(), body.clone());
        let response = HttpService::call(&self.plain, HttpRequest::from_parts(parts, body)).await?;
        // the redirects `reqwest` follows (not 304, the answer to a conditional request)
        if !matches!(response.status().as_u16(), 301 | 302 | 303 | 307 | 308) {
            return Ok(response);
        }
        // the server sends us elsewhere, maybe over TLS: from now on as `object_store` does
        drop(response);
        self.full()?.execute(again).await
    }
}
