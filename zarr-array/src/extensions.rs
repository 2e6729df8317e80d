//! [`Extensions`]: the bundle of registries an array is opened with.

use zarr_codecs::v2::V2CodecRegistry;
use zarr_codecs::CodecRegistry;
use zarr_grid::{ChunkGridFactory, ChunkKeyEncodingFactory};
use zarr_meta::data_type::DataTypeFactory;
use zarr_meta::{ExtensionDef, ExtensionPoint, MetaError, Registry, Resolved};

/// A storage transformer factory. No storage transformer is built in; the registry exists so
/// that unknown ones are refused (or skipped when optional) in the one place that says so.
pub type StorageTransformerFactory = fn(&ExtensionDef) -> Result<(), MetaError>;

/// Every registry a reader consults: data types, chunk grids, chunk key encodings, codecs
/// (Zarr v3 names, and numcodecs `id`s for Zarr v2's `compressor` and `filters`) and storage
/// transformers.
///
/// `Extensions::default()` holds everything this build supports; `without` removes one
/// extension so that arrays using it are refused by name:
///
/// ```
/// use zarr_array::Extensions;
/// let legacy = Extensions::default().without("regular_bounded");
/// assert!(!legacy.chunk_grids.contains("regular_bounded"));
/// assert!(legacy.chunk_grids.contains("regular"));
///
/// // a v2 `.zarray` names numcodecs ids: without "zlib", v2 arrays compressed with it are
/// // refused by name (v3 arrays name it "numcodecs.zlib")
/// let no_zlib = Extensions::default().without("zlib");
/// assert!(!no_zlib.codecs_v2.contains("zlib"));
/// assert!(no_zlib.codecs.contains("numcodecs.zlib"));
/// ```
#[derive(Debug, Clone)]
pub struct Extensions {
    /// Data types.
    pub data_types: Registry<DataTypeFactory>,
    /// Chunk grids.
    pub chunk_grids: Registry<ChunkGridFactory>,
    /// Chunk key encodings.
    pub chunk_key_encodings: Registry<ChunkKeyEncodingFactory>,
    /// Codecs.
    pub codecs: CodecRegistry,
    /// Zarr v2 codecs by numcodecs `id`, each turned into the v3 definition that `codecs`
    /// builds ([`zarr_codecs::v2`]).
    pub codecs_v2: V2CodecRegistry,
    /// Storage transformers (none built in).
    pub storage_transformers: Registry<StorageTransformerFactory>,
}

impl Default for Extensions {
    fn default() -> Self {
        Extensions {
            data_types: zarr_meta::data_type::default_registry(),
            chunk_grids: zarr_grid::default_registry(),
            chunk_key_encodings: zarr_grid::default_key_encoding_registry(),
            codecs: default_codecs(),
            codecs_v2: zarr_codecs::v2::default_v2_registry(),
            storage_transformers: Registry::new(ExtensionPoint::StorageTransformer),
        }
    }
}

/// zarr-codecs' default codec registry, with the codecs of zarr-numcodecs when a feature
/// brings it (without, their names are refused naming the feature `numcodecs`).
fn default_codecs() -> CodecRegistry {
    #[allow(unused_mut)] // without zarr-numcodecs, nothing is added
    let mut codecs = zarr_codecs::default_registry();
    #[cfg(feature = "_numcodecs")]
    // cannot fail: zarr-codecs registers none of zarr-numcodecs' names
    let _ = zarr_numcodecs::register(&mut codecs);
    codecs
}

impl Extensions {
    /// The core of Zarr v3 only: everything but the extensions of this project
    /// (`regular_bounded`, `sparse_layout`), as a reader that predates them would be.
    pub fn core() -> Self {
        Extensions::default()
            .without("regular_bounded")
            .without("sparse_layout")
    }

    /// The same registries without the extension `name` (at every extension point).
    #[must_use]
    pub fn without(mut self, name: &str) -> Self {
        self.data_types.remove(name);
        self.chunk_grids.remove(name);
        self.chunk_key_encodings.remove(name);
        self.codecs.remove(name);
        self.codecs_v2.remove(name);
        self.storage_transformers.remove(name);
        self
    }

    /// Checks every storage transformer of an array: unknown ones are refused unless optional.
    ///
    /// # Errors
    /// The registry's error for an unknown required transformer.
    pub fn check_storage_transformers(&self, defs: &[ExtensionDef]) -> Result<(), MetaError> {
        for def in defs {
            if let Resolved::Known(factory) = self.storage_transformers.resolve(def)? {
                factory(def)?;
            }
        }
        Ok(())
    }
}
