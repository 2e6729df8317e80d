//! Where arrays live: opening stores (the one place that turns a PATH, a directory or a url,
//! into a store) and opening arrays and groups with the registries the global `--without`
//! options leave.

use std::path::Path;
use std::sync::Arc;

use zarr_array::zarr_store::{
    self, FilesystemStore, MemoryStore, RemoteOptions, Store, StoreError, StoreUrl,
};
use zarr_array::{Array, ArrayBuilder, Extensions, Group};

use crate::error::{zarr, CliError, Result};
use crate::layout::{REGULAR_BOUNDED, SPARSE_CODEC};

/// What the caller is about to do with a store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Read or modify what is there: a local directory must exist.
    Existing,
    /// Create a node: a local directory is created when missing.
    Create,
    /// Write a new hierarchy: the location must be new or empty (a local directory is
    /// created; a remote prefix must hold no object).
    Empty,
}

/// What a PATH names.
///
/// # Errors
/// An empty PATH, an unknown scheme or a malformed url (usage errors).
pub fn store_url(location: &str) -> Result<StoreUrl> {
    if location.is_empty() {
        return Err(CliError::usage("an empty PATH (give a directory or a url)"));
    }
    StoreUrl::parse(location).map_err(|e| CliError::usage(crate::error::chain(&e)))
}

/// Whether PATH names a remote store (`s3://`, `gs://`, `az://`, `azure://`, `http(s)://`),
/// where every operation is a request and listing can be slow.
pub fn is_remote(location: &str) -> bool {
    StoreUrl::parse(location).is_ok_and(|u| u.is_remote())
}

/// Opens the store at `location`, a remote one with the timeouts and retries of `remote`.
///
/// This is the only function that interprets a PATH: a directory (plain path or
/// `file:///abs/path`), `memory://`, or, with cargo feature `object-store` (on by default),
/// an object store url: `s3://bucket/prefix`, `gs://bucket/prefix`, `az://container/prefix`,
/// `http(s)://host/path` (read-only), configured from the environment (`AWS_ENDPOINT_URL`,
/// `AWS_REGION`, `AWS_ACCESS_KEY_ID`, ...) by [`zarr_store::open_url_with`]. Opening a remote
/// store sends no request.
///
/// # Errors
/// A missing local directory (for [`Access::Existing`]), a file where a directory is
/// expected, a location that is not empty (for [`Access::Empty`]), a malformed url, a
/// remote url in a build without the `object-store` feature, a read-only url for writing,
/// or the store's errors.
pub fn open_store(
    location: &str,
    access: Access,
    remote: &RemoteOptions,
) -> Result<Arc<dyn Store>> {
    let url = store_url(location)?;
    let store_err = |e: StoreError| zarr(location, zarr_array::ArrayError::Store(e));
    match url {
        StoreUrl::Path(path) => open_local(location, &path, access),
        StoreUrl::Remote { .. } if url.is_read_only() && access != Access::Existing => {
            Err(CliError::input(format!(
                "{location}: http(s):// urls are read-only (write to s3://, gs://, az:// or a \
                 directory)"
            )))
        }
        _ => {
            let store = zarr_store::open_url_with(location, remote).map_err(|e| match e {
                StoreError::UnsupportedUrl {
                    scheme, feature, ..
                } => CliError::usage(format!(
                    "{location}: this zarr was built without {scheme}:// and the other remote \
                     stores (cargo feature \"{feature}\" of zarr-cli, on by default: rebuild \
                     without --no-default-features)"
                )),
                StoreError::InvalidUrl { .. } => CliError::usage(crate::error::chain(&e)),
                other => store_err(other),
            })?;
            if access == Access::Empty {
                let top = store.list_dir("").map_err(store_err)?;
                if !top.keys.is_empty() || !top.prefixes.is_empty() {
                    return Err(CliError::input(format!(
                        "{location} is not empty (give a new or empty prefix)"
                    )));
                }
            }
            Ok(store)
        }
    }
}

/// A store on a local directory.
fn open_local(location: &str, path: &Path, access: Access) -> Result<Arc<dyn Store>> {
    match access {
        Access::Existing => {
            match std::fs::metadata(path) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Err(CliError::input(format!(
                        "{location}: no such directory (check the path; `zarr create` or \
                         `zarr import` make new arrays)"
                    )))
                }
                Err(e) => return Err(CliError::io(location, e)),
                Ok(m) if !m.is_dir() => {
                    return Err(CliError::input(format!(
                        "{location} is a file, not a Zarr directory (PATH is the directory that \
                         holds zarr.json)"
                    )))
                }
                Ok(_) => {}
            }
            let store = FilesystemStore::open(path)
                .map_err(|e| zarr(location, zarr_array::ArrayError::Store(e)))?;
            Ok(Arc::new(store))
        }
        Access::Create | Access::Empty => {
            if access == Access::Empty {
                crate::require_empty_dir(path)?;
            }
            if path.is_file() {
                return Err(CliError::input(format!(
                    "{location} is a file (give a directory for the new array)"
                )));
            }
            let store = FilesystemStore::create(path)
                .map_err(|e| zarr(location, zarr_array::ArrayError::Store(e)))?;
            Ok(Arc::new(store))
        }
    }
}

/// The extension registries to open nodes with, and the names left out.
#[derive(Debug, Clone)]
pub struct Ctx {
    /// Every registry, minus the `--without` names.
    pub extensions: Extensions,
    /// The names given with `--without`.
    pub without: Vec<String>,
    /// The timeouts and retries of remote stores (`--request-timeout`, `--retries`...).
    pub remote: RemoteOptions,
}

/// Extensions of this project that `--without` accepts even when this build lacks them.
const PROJECT_EXTENSIONS: [&str; 2] = [REGULAR_BOUNDED, SPARSE_CODEC];

impl Ctx {
    /// The registries of this build without the extensions named.
    ///
    /// # Errors
    /// A name no registry knows (a usage error, to catch typos).
    pub fn new(without: &[String]) -> Result<Ctx> {
        let all = Extensions::default();
        let mut extensions = all.clone();
        for name in without {
            let known = all.data_types.contains(name)
                || all.chunk_grids.contains(name)
                || all.chunk_key_encodings.contains(name)
                || all.codecs.contains(name)
                || all.storage_transformers.contains(name)
                || PROJECT_EXTENSIONS.contains(&name.as_str());
            if !known {
                let mut names: Vec<&str> = all
                    .chunk_grids
                    .names()
                    .chain(all.chunk_key_encodings.names())
                    .chain(all.codecs.names())
                    .chain(PROJECT_EXTENSIONS)
                    .collect();
                names.sort_unstable();
                names.dedup();
                return Err(CliError::usage(format!(
                    "--without {name}: no extension of that name (known: {})",
                    names.join(", ")
                )));
            }
            extensions = extensions.without(name);
        }
        Ok(Ctx {
            extensions,
            without: without.to_vec(),
            remote: RemoteOptions::default(),
        })
    }

    /// The same context, remote stores opened with the timeouts and retries of `remote`.
    #[must_use]
    pub fn with_remote(mut self, remote: RemoteOptions) -> Ctx {
        self.remote = remote;
        self
    }

    /// Opens the store at `location` ([`open_store`] with this context's remote options).
    ///
    /// # Errors
    /// As [`open_store`].
    pub fn open_store(&self, location: &str, access: Access) -> Result<Arc<dyn Store>> {
        open_store(location, access, &self.remote)
    }

    /// Whether this build (and `--without`) has the codec `name`.
    pub fn has_codec(&self, name: &str) -> bool {
        self.extensions.codecs.contains(name)
    }

    /// Whether this build (and `--without`) has the chunk grid or codec `name`.
    pub fn has_extension(&self, name: &str) -> bool {
        self.extensions.chunk_grids.contains(name) || self.has_codec(name)
    }

    /// Opens the array at the root of `location`.
    ///
    /// # Errors
    /// No such directory, no array there, or the library's refusal.
    pub fn open_array(&self, location: &str) -> Result<Array> {
        let store = self.open_store(location, Access::Existing)?;
        Array::open_with(store, "", &self.extensions).map_err(|e| zarr(location, e))
    }

    /// Opens the array at `location` for a metadata change (resize, append, prepend): an
    /// array inside a hierarchy whose groups above it hold consolidated metadata (parent
    /// directories, or parent prefixes of an object store url, that are groups) is opened as
    /// a member of the outermost such group ([`zarr_array::find_enclosing`]), so that the
    /// change also updates the consolidated metadata of every group above it that holds
    /// some (a url costs one or two GETs per parent looked at).
    ///
    /// # Errors
    /// As [`Ctx::open_array`].
    pub fn open_array_for_update(&self, location: &str) -> Result<Array> {
        store_url(location)?;
        let remote = &self.remote;
        let open = |url: &str| zarr_store::open_url_with(url, remote);
        let Some(found) =
            zarr_array::find_enclosing(location, &open).map_err(|e| zarr(location, e))?
        else {
            return self.open_array(location);
        };
        let root = self.open_store(&found.location, Access::Existing)?;
        Array::open_with(root, &found.path, &self.extensions).map_err(|e| zarr(location, e))
    }

    /// Opens the group at the root of `location`.
    ///
    /// # Errors
    /// As [`Ctx::open_array`].
    pub fn open_group(&self, location: &str) -> Result<Group> {
        let store = self.open_store(location, Access::Existing)?;
        Group::open_with(store, "", &self.extensions).map_err(|e| zarr(location, e))
    }

    /// Creates an array at the root of `location` (the directory is created if needed).
    ///
    /// # Errors
    /// A node already there, invalid settings, store errors.
    pub fn create_array(&self, location: &str, builder: &ArrayBuilder) -> Result<Array> {
        // validate everything in memory before creating any directory (or object)
        builder
            .create_with(Arc::new(MemoryStore::new()), "", &self.extensions)
            .map_err(|e| zarr(location, e))?;
        let store = self.open_store(location, Access::Create)?;
        builder
            .create_with(store, "", &self.extensions)
            .map_err(|e| zarr(location, e))
    }
}
