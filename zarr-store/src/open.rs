//! Opening a store by url: [`open_url`].

use std::path::PathBuf;
use std::sync::Arc;

use crate::error::{Result, StoreError};
use crate::filesystem::FilesystemStore;
use crate::memory::MemoryStore;
use crate::remote::RemoteOptions;
use crate::store::Store;

/// The schemes of remote stores, all behind cargo feature `object-store`.
const REMOTE_SCHEMES: [&str; 6] = ["s3", "gs", "az", "azure", "http", "https"];

/// The cargo feature that adds remote stores.
#[cfg(not(feature = "object-store"))]
const OBJECT_STORE_FEATURE: &str = "object-store";

/// Opens the store a url names.
///
/// | url | store |
/// |---|---|
/// | `path/to/data.zarr`, `/abs/path` (no `scheme://`) | [`FilesystemStore`], directory created if missing |
/// | `file:///abs/path` (percent-decoded) | [`FilesystemStore`], directory created if missing |
/// | `memory://` | a new, empty [`MemoryStore`] |
/// | `s3://bucket/prefix` | Amazon S3 or any S3-compatible server (feature `object-store`) |
/// | `gs://bucket/prefix` | Google Cloud Storage (feature `object-store`) |
/// | `az://container/prefix`, `azure://container/prefix` | Azure Blob Storage (feature `object-store`) |
/// | `http://host/path`, `https://host/path` | a read-only store over plain HTTP GETs (feature `object-store`) |
///
/// Remote stores take their endpoint, region and credentials from the usual environment
/// variables (`AWS_ENDPOINT_URL`, `AWS_REGION`, `AWS_ACCESS_KEY_ID`, `GOOGLE_*`, `AZURE_*`...);
/// see the crate documentation. Without cargo feature `object-store` a remote url fails with
/// [`StoreError::UnsupportedUrl`], which names the feature; an unknown scheme or a malformed
/// url fails with [`StoreError::InvalidUrl`]. A remote store keeps up to
/// `ZARR_CONCURRENCY` requests in flight ([`RemoteOptions::from_env`]; an invalid value is
/// [`StoreError::InvalidOption`]).
///
/// ```
/// use zarr_store::{open_url, StoreError};
///
/// let store = open_url("memory://")?;
/// store.set("a/zarr.json", b"{}")?;
///
/// let dir = tempfile::tempdir()?;
/// let on_disk = open_url(dir.path().join("data.zarr").to_str().unwrap())?;
/// on_disk.set("zarr.json", b"{}")?;
/// assert!(dir.path().join("data.zarr/zarr.json").is_file());
///
/// assert!(matches!(open_url("ftp://host/x"), Err(StoreError::InvalidUrl { .. })));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn open_url(url: &str) -> Result<Arc<dyn Store>> {
    let options = if StoreUrl::parse(url)?.is_remote() {
        // a remote store's concurrency from `ZARR_CONCURRENCY`, when set
        RemoteOptions::from_env()?
    } else {
        RemoteOptions::default()
    };
    open_url_with(url, &options)
}

/// [`open_url`] with the timeouts and retries of `options` for a remote store (local and
/// memory stores have none).
///
/// # Errors
///
/// As [`open_url`].
pub fn open_url_with(url: &str, options: &RemoteOptions) -> Result<Arc<dyn Store>> {
    match StoreUrl::parse(url)? {
        StoreUrl::Path(path) => Ok(Arc::new(FilesystemStore::create(path)?)),
        StoreUrl::Memory => Ok(Arc::new(MemoryStore::new())),
        StoreUrl::Remote { scheme } => open_remote(url, &scheme, options),
    }
}

/// What a store url names, told without opening, creating or contacting anything: callers
/// that must not create a directory (opening an existing array, say) look here first.
///
/// ```
/// use std::path::PathBuf;
/// use zarr_store::StoreUrl;
///
/// assert_eq!(StoreUrl::parse("data/my.zarr")?, StoreUrl::Path(PathBuf::from("data/my.zarr")));
/// assert_eq!(StoreUrl::parse("file:///tmp/a%20b")?, StoreUrl::Path(PathBuf::from("/tmp/a b")));
/// assert_eq!(StoreUrl::parse("memory://")?, StoreUrl::Memory);
/// let remote = StoreUrl::parse("s3://bucket/prefix")?;
/// assert!(remote.is_remote());
/// assert_eq!(remote, StoreUrl::Remote { scheme: "s3".into() });
/// assert!(StoreUrl::parse("ftp://host/x").is_err());
/// # Ok::<(), zarr_store::StoreError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreUrl {
    /// A directory: a plain path, or a `file://` url (percent-decoded).
    Path(PathBuf),
    /// `memory://`: a new, empty [`MemoryStore`].
    Memory,
    /// An object store: `s3`, `gs`, `az`, `azure`, `http` or `https` (lower-cased). Only the
    /// scheme is checked here; [`open_url`] checks the rest, and needs cargo feature
    /// `object-store`.
    Remote {
        /// The scheme, lower-cased.
        scheme: String,
    },
}

impl StoreUrl {
    /// Tells what `url` names.
    ///
    /// # Errors
    ///
    /// [`StoreError::InvalidUrl`] for an empty url, an unknown scheme, a malformed `file://`
    /// url or a `memory://` url with a path.
    pub fn parse(url: &str) -> Result<StoreUrl> {
        let Some((scheme, rest)) = split_scheme(url) else {
            if url.is_empty() {
                return Err(invalid(url, "it is empty"));
            }
            return Ok(StoreUrl::Path(PathBuf::from(url)));
        };
        match scheme.as_str() {
            "file" => Ok(StoreUrl::Path(file_url_path(url, rest)?)),
            "memory" => {
                if !rest.is_empty() && rest != "/" {
                    return Err(invalid(
                        url,
                        "memory:// takes no path (each memory:// store is new and empty)",
                    ));
                }
                Ok(StoreUrl::Memory)
            }
            remote if REMOTE_SCHEMES.contains(&remote) => Ok(StoreUrl::Remote { scheme }),
            other => Err(invalid(
                url,
                format!(
                    "unknown scheme {other:?} (expected a path, file://, memory://, s3://, \
                     gs://, az://, azure://, http:// or https://)"
                ),
            )),
        }
    }

    /// Whether the url names an object store (reached over the network).
    #[must_use]
    pub fn is_remote(&self) -> bool {
        matches!(self, StoreUrl::Remote { .. })
    }

    /// Whether the store refuses writes: `http://` and `https://` stores are read-only.
    #[must_use]
    pub fn is_read_only(&self) -> bool {
        matches!(self, StoreUrl::Remote { scheme } if scheme == "http" || scheme == "https")
    }
}

#[cfg(feature = "object-store")]
fn open_remote(url: &str, _scheme: &str, options: &RemoteOptions) -> Result<Arc<dyn Store>> {
    Ok(Arc::new(crate::object::ObjectStoreBackend::from_url_with(
        url, options,
    )?))
}

#[cfg(not(feature = "object-store"))]
fn open_remote(url: &str, scheme: &str, _options: &RemoteOptions) -> Result<Arc<dyn Store>> {
    Err(StoreError::UnsupportedUrl {
        url: url.to_owned(),
        scheme: scheme.to_owned(),
        feature: OBJECT_STORE_FEATURE,
    })
}

/// An [`StoreError::InvalidUrl`].
pub(crate) fn invalid(url: &str, reason: impl Into<String>) -> StoreError {
    StoreError::InvalidUrl {
        url: url.to_owned(),
        source: reason.into().into(),
    }
}

/// `(scheme, rest)` of `scheme://rest`, the scheme lower-cased, or `None` when `url` has no
/// `scheme://` (a plain path; `C:/x` and `C:\x` are paths too).
fn split_scheme(url: &str) -> Option<(String, &str)> {
    let (scheme, rest) = url.split_once("://")?;
    let mut chars = scheme.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    valid.then(|| (scheme.to_ascii_lowercase(), rest))
}

/// The local path of `file://rest`: `file:///abs/path` or `file://localhost/abs/path`,
/// percent-decoded.
fn file_url_path(url: &str, rest: &str) -> Result<PathBuf> {
    let path = if rest.starts_with('/') {
        rest
    } else if let Some(path) = rest.strip_prefix("localhost") {
        path
    } else {
        return Err(invalid(
            url,
            "a file url names a local absolute path: file:///path (or file://localhost/path)",
        ));
    };
    if path.contains(['?', '#']) {
        return Err(invalid(
            url,
            "a file url takes no query or fragment (percent-encode '?' and '#')",
        ));
    }
    let decoded = percent_decode(path).ok_or_else(|| {
        invalid(
            url,
            "bad percent-encoding (a '%' must start a '%XX' escape of UTF-8 bytes)",
        )
    })?;
    if decoded.is_empty() || decoded == "/" {
        return Err(invalid(url, "a file url needs a path below the root"));
    }
    Ok(PathBuf::from(decoded))
}

/// Decodes `%XX` escapes; `None` for a bad escape or bytes that are not UTF-8.
pub(crate) fn percent_decode(s: &str) -> Option<String> {
    let mut out = Vec::with_capacity(s.len());
    let mut bytes = s.bytes();
    while let Some(b) = bytes.next() {
        if b == b'%' {
            let hex = [bytes.next()?, bytes.next()?];
            let hex = std::str::from_utf8(&hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
        } else {
            out.push(b);
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemes() {
        assert_eq!(split_scheme("s3://b/p"), Some(("s3".into(), "b/p")));
        assert_eq!(split_scheme("HTTPS://h/p"), Some(("https".into(), "h/p")));
        assert_eq!(split_scheme("memory://"), Some(("memory".into(), "")));
        assert_eq!(split_scheme("relative/path"), None);
        assert_eq!(split_scheme("/abs/path"), None);
        assert_eq!(split_scheme("C:\\data"), None);
        assert_eq!(split_scheme("dir/x://y"), None);
        assert_eq!(split_scheme("://x"), None);
    }

    #[test]
    fn file_urls() {
        let path = |url: &str| {
            let (_, rest) = split_scheme(url).unwrap();
            file_url_path(url, rest).ok()
        };
        assert_eq!(path("file:///tmp/a b"), Some(PathBuf::from("/tmp/a b")));
        assert_eq!(path("file:///tmp/a%20b"), Some(PathBuf::from("/tmp/a b")));
        assert_eq!(
            path("file://localhost/tmp/x"),
            Some(PathBuf::from("/tmp/x"))
        );
        assert_eq!(path("file:///tmp/%C3%BC"), Some(PathBuf::from("/tmp/ü")));
        assert_eq!(path("file://host/tmp/x"), None);
        assert_eq!(path("file:///tmp/%zz"), None);
        assert_eq!(path("file:///tmp/%ff"), None);
        assert_eq!(path("file:///tmp/%2"), None);
        assert_eq!(path("file:///"), None);
        assert_eq!(path("file:///tmp/x?y"), None);
    }

    #[test]
    fn memory_and_unknown() {
        let store = open_url("memory://").unwrap();
        assert_eq!(store.list_prefix("").unwrap(), Vec::<String>::new());
        for url in ["memory://x", "ftp://host/x", "", "s4://b"] {
            match open_url(url) {
                Err(StoreError::InvalidUrl { url: u, .. }) => assert_eq!(u, url),
                other => panic!("{url:?}: expected InvalidUrl, got {other:?}"),
            }
        }
    }

    #[cfg(not(feature = "object-store"))]
    #[test]
    fn remote_urls_name_the_feature() {
        for url in [
            "s3://bucket/prefix",
            "gs://bucket",
            "az://container/p",
            "azure://container",
            "http://127.0.0.1:1/x",
            "https://example.invalid/data.zarr",
        ] {
            let err = open_url(url).err().unwrap();
            assert!(matches!(err, StoreError::UnsupportedUrl { .. }), "{url}");
            let message = err.to_string();
            assert!(
                message.contains("(enable cargo feature \"object-store\")"),
                "{message}"
            );
        }
    }
}
