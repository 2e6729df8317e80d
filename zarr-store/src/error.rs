//! The error type of zarr-store.

use std::path::PathBuf;

use crate::range::ByteRange;

/// The result type of every store operation.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// Everything that can go wrong in a store operation.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The key is not a valid store key (see [`validate_key`](crate::validate_key)).
    #[error("invalid key {key:?}: {reason}")]
    InvalidKey {
        /// The key as given.
        key: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The prefix is neither `""` nor a valid key followed by `/`
    /// (see [`validate_prefix`](crate::validate_prefix)).
    #[error("invalid prefix {prefix:?}: {reason}")]
    InvalidPrefix {
        /// The prefix as given.
        prefix: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The key does not exist (from [`StoreExt::get_or_err`](crate::StoreExt::get_or_err)).
    #[error("key {key:?} not found")]
    NotFound {
        /// The missing key.
        key: String,
    },
    /// A byte range does not lie inside the value.
    #[error("byte range {range} is out of bounds for key {key:?} of {size} bytes")]
    RangeOutOfBounds {
        /// The key read.
        key: String,
        /// The offending range.
        range: ByteRange,
        /// The size of the value in bytes.
        size: u64,
    },
    /// The key would be both a value and a prefix of other keys (`a` and `a/b`), which a
    /// filesystem cannot hold.
    #[error(
        "key {key:?} conflicts with {existing:?}: a key cannot also be a prefix of other keys \
         (delete one of them first)"
    )]
    KeyConflict {
        /// The key being written.
        key: String,
        /// The existing key (`a`) or prefix (`a/`) it conflicts with.
        existing: String,
    },
    /// A path component under the store root is a symbolic link; the filesystem store never
    /// follows links, so that no key can reach outside its root.
    #[error("refusing symbolic link {} for key {key:?} (the filesystem store does not follow links)", path.display())]
    Symlink {
        /// The key (or prefix) being accessed.
        key: String,
        /// The path that is a symbolic link.
        path: PathBuf,
    },
    /// The root of a filesystem store cannot be opened or created.
    #[error("cannot open store root {}", path.display())]
    Root {
        /// The root directory.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The store is read-only (for example one opened from an `http(s)://` url), so the key
    /// (or prefix) cannot be written or deleted.
    #[error("cannot write {key:?}: the store is read-only")]
    ReadOnly {
        /// The key (or prefix) being written or deleted.
        key: String,
    },
    /// The store cannot write conditionally ([`Store::conditional_writes`](crate::Store::conditional_writes)
    /// is `false`), so [`Store::set_if`](crate::Store::set_if) of the key cannot be done.
    #[error("cannot write {key:?} conditionally: the store has no conditional writes")]
    NoConditionalWrites {
        /// The key being written.
        key: String,
    },
    /// A request to a remote object store failed (network, permissions, server error...).
    ///
    /// With cargo feature `object-store` the source is an `object_store::Error` (downcast it
    /// to look closer), or a message when the answer itself was inconsistent.
    #[error("object store {op} of {key:?} failed")]
    Remote {
        /// The key (or prefix) being accessed.
        key: String,
        /// What was being done: `get`, `get_ranges`, `size`, `set`, `delete`, `list`...
        op: &'static str,
        /// The underlying error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A store url (see [`open_url`](crate::open_url)) cannot be parsed, or the store it names
    /// cannot be configured from it (a missing bucket, bad credentials configuration...).
    #[error("invalid store url {url:?}")]
    InvalidUrl {
        /// The url as given.
        url: String,
        /// What is wrong with it.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A store url names a kind of store compiled out of this build.
    #[error("unsupported store url {url:?}: no {scheme}:// stores in this build (enable cargo feature {feature:?})")]
    UnsupportedUrl {
        /// The url as given.
        url: String,
        /// Its scheme (`s3`, `gs`, ...).
        scheme: String,
        /// The cargo feature of zarr-store that supports it.
        feature: &'static str,
    },
    /// An option of the stores (an environment variable, a command-line option) has a value
    /// it cannot take.
    #[error("invalid {option}: {reason}")]
    InvalidOption {
        /// The option (`ZARR_CONCURRENCY`, `--concurrency`...).
        option: &'static str,
        /// What is wrong with its value.
        reason: String,
    },
    /// An I/O error while accessing a key (or prefix).
    #[error("i/o error on key {key:?}")]
    Io {
        /// The key (or prefix) being accessed.
        key: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

impl StoreError {
    /// An [`StoreError::Io`] for `key`.
    pub(crate) fn io(key: &str, source: std::io::Error) -> Self {
        Self::Io {
            key: key.to_owned(),
            source,
        }
    }
}
