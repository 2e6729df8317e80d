//! Where arrays live: opening stores (the one place that turns a PATH into a store) and
//! opening arrays and groups with the registries the global `--without` options leave.

use std::path::Path;
use std::sync::Arc;

use zarr_array::zarr_store::{FilesystemStore, MemoryStore, Store};
use zarr_array::{Array, ArrayBuilder, Extensions, Group};

use crate::error::{zarr, CliError, Result};

/// What the caller is about to do with a store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Read or modify what is there: the location must exist.
    Existing,
    /// Create a node: the location is created when missing.
    Create,
}

/// Opens the store at `location`.
///
/// Today `location` is a filesystem directory whose root holds the node. This is the only
/// function that interprets it, so URLs (`s3://`, `file://`, ...) plug in here.
///
/// # Errors
/// A missing location (for [`Access::Existing`]), a file where a directory is expected, or
/// the store's errors.
pub fn open_store(location: &str, access: Access) -> Result<Arc<dyn Store>> {
    if location.is_empty() {
        return Err(CliError::usage("an empty PATH (give a directory)"));
    }
    let path = Path::new(location);
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
        Access::Create => {
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
}

/// Extensions of this project that `--without` accepts even when this build lacks them.
const PROJECT_EXTENSIONS: [&str; 2] = ["regular_bounded", "sparse_layout"];

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
        })
    }

    /// Whether this build (and `--without`) has the codec `name`.
    pub fn has_codec(&self, name: &str) -> bool {
        self.extensions.codecs.contains(name)
    }

    /// Opens the array at the root of `location`.
    ///
    /// # Errors
    /// No such directory, no array there, or the library's refusal.
    pub fn open_array(&self, location: &str) -> Result<Array> {
        let store = open_store(location, Access::Existing)?;
        Array::open_with(store, "", &self.extensions).map_err(|e| zarr(location, e))
    }

    /// Opens the group at the root of `location`.
    ///
    /// # Errors
    /// As [`Ctx::open_array`].
    pub fn open_group(&self, location: &str) -> Result<Group> {
        let store = open_store(location, Access::Existing)?;
        Group::open_with(store, "", &self.extensions).map_err(|e| zarr(location, e))
    }

    /// Creates an array at the root of `location` (the directory is created if needed).
    ///
    /// # Errors
    /// A node already there, invalid settings, store errors.
    pub fn create_array(&self, location: &str, builder: &ArrayBuilder) -> Result<Array> {
        // validate everything in memory before creating any directory
        builder
            .create_with(Arc::new(MemoryStore::new()), "", &self.extensions)
            .map_err(|e| zarr(location, e))?;
        let store = open_store(location, Access::Create)?;
        builder
            .create_with(store, "", &self.extensions)
            .map_err(|e| zarr(location, e))
    }
}
