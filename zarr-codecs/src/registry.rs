//! The codec registry: codec names -> factories, filled by [`register_defaults`].
//!
//! ```
//! use zarr_codecs::{default_registry, register_defaults, CodecRegistry};
//! use zarr_meta::ExtensionPoint;
//!
//! let registry = default_registry();
//! assert!(registry.contains("bytes"));
//!
//! // a reader without zstd refuses arrays that use it
//! let mut without = default_registry();
//! without.remove("zstd");
//! assert!(!without.contains("zstd"));
//! ```

use std::fmt;

use zarr_meta::ext::{Registry, Resolved};
use zarr_meta::{ExtensionDef, ExtensionPoint, MetaError};

use crate::codec::Codec;
use crate::error::Result;
use crate::repr::ChunkRepr;

/// Builds a codec from its definition for the representation it will see. Nested definitions
/// (a shard's inner and index codecs) resolve through the registry it is handed.
#[derive(Clone, Copy)]
pub struct CodecFactory(pub fn(&ExtensionDef, &ChunkRepr, &CodecRegistry) -> Result<Codec>);

impl fmt::Debug for CodecFactory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CodecFactory")
    }
}

impl CodecFactory {
    /// Runs the factory.
    ///
    /// # Errors
    /// Whatever the factory reports (an invalid configuration, above all).
    pub fn build(
        &self,
        def: &ExtensionDef,
        repr: &ChunkRepr,
        registry: &CodecRegistry,
    ) -> Result<Codec> {
        (self.0)(def, repr, registry)
    }
}

/// Codec name -> factory.
pub type CodecRegistry = Registry<CodecFactory>;

/// Registers every codec this build has, and records the ones left out by a cargo feature so
/// that using them names the feature.
///
/// | name | cargo feature |
/// |---|---|
/// | `bytes`, `transpose` | always |
/// | `gzip` | `gzip` |
/// | `zstd` | `zstd` |
/// | `blosc` | `blosc` |
/// | `crc32c` | `crc32c` |
/// | `sharding_indexed` | `sharding` (which enables `crc32c`) |
/// | `sparse_layout` | `sparse` |
/// | `vlen-utf8`, `vlen-bytes` | `vlen` |
/// | `numcodecs.<id>`, `pcodec`, `zfp`, `zfpy` | none here: recorded as compiled out (cargo feature `numcodecs`), the crate zarr-numcodecs registers them (see [`crate::numcodecs`]) |
///
/// # Errors
/// [`MetaError::DuplicateExtension`] if one of the names is already registered.
pub fn register_defaults(registry: &mut CodecRegistry) -> Result<(), MetaError> {
    registry.register(crate::bytes::NAME, CodecFactory(crate::bytes::factory))?;
    registry.register(
        crate::transpose::NAME,
        CodecFactory(crate::transpose::factory),
    )?;

    #[cfg(feature = "gzip")]
    registry.register(crate::gzip::NAME, CodecFactory(crate::gzip::factory))?;
    #[cfg(not(feature = "gzip"))]
    registry.register_compiled_out("gzip", "gzip");

    #[cfg(feature = "zstd")]
    registry.register(crate::zstd::NAME, CodecFactory(crate::zstd::factory))?;
    #[cfg(not(feature = "zstd"))]
    registry.register_compiled_out("zstd", "zstd");

    #[cfg(feature = "blosc")]
    registry.register(crate::blosc::NAME, CodecFactory(crate::blosc::factory))?;
    #[cfg(not(feature = "blosc"))]
    registry.register_compiled_out("blosc", "blosc");

    #[cfg(feature = "crc32c")]
    registry.register(crate::crc32c::NAME, CodecFactory(crate::crc32c::factory))?;
    #[cfg(not(feature = "crc32c"))]
    registry.register_compiled_out("crc32c", "crc32c");

    #[cfg(feature = "sharding")]
    registry.register(
        crate::sharding::NAME,
        CodecFactory(crate::sharding::factory),
    )?;
    #[cfg(not(feature = "sharding"))]
    registry.register_compiled_out("sharding_indexed", "sharding");

    #[cfg(feature = "vlen")]
    {
        use crate::vlen::{factory_bytes, factory_utf8, VLEN_BYTES, VLEN_UTF8};
        registry.register(VLEN_UTF8, CodecFactory(factory_utf8))?;
        registry.register(VLEN_BYTES, CodecFactory(factory_bytes))?;
    }
    #[cfg(not(feature = "vlen"))]
    {
        registry.register_compiled_out("vlen-utf8", "vlen");
        registry.register_compiled_out("vlen-bytes", "vlen");
    }
    #[cfg(feature = "sparse")]
    registry.register(
        crate::sparse_layout::NAME,
        CodecFactory(crate::sparse_layout::factory),
    )?;
    #[cfg(not(feature = "sparse"))]
    registry.register_compiled_out("sparse_layout", "sparse");
    // sparse_layout.md: "The codec is never `must_understand: false`: a reader without it must
    // refuse the array" (kept when the codec is removed from the registry)
    registry.register_never_ignored("sparse_layout");

    crate::numcodecs::register_compiled_out(registry);

    Ok(())
}

/// A registry holding every codec of this build.
pub fn default_registry() -> CodecRegistry {
    let mut registry = Registry::new(ExtensionPoint::Codec);
    // cannot fail: the registry is new and the names are distinct
    let _ = register_defaults(&mut registry);
    registry
}

/// Resolves and builds one codec; `None` for an unknown codec that may be skipped.
pub(crate) fn build_codec(
    def: &ExtensionDef,
    repr: &ChunkRepr,
    registry: &CodecRegistry,
) -> Result<Option<Codec>> {
    match registry.resolve(def)? {
        Resolved::Known(factory) => factory.build(def, repr, registry).map(Some),
        Resolved::Skipped => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_register_every_enabled_codec() {
        let r = default_registry();
        let names: Vec<&str> = r.names().collect();
        assert!(names.contains(&"bytes") && names.contains(&"transpose"));
        assert_eq!(names.contains(&"zstd"), cfg!(feature = "zstd"));
        assert_eq!(
            names.contains(&"sharding_indexed"),
            cfg!(feature = "sharding")
        );
        assert_eq!(names.contains(&"sparse_layout"), cfg!(feature = "sparse"));
        let mut again = r.clone();
        assert!(register_defaults(&mut again).is_err());
    }

    #[cfg(not(feature = "sparse"))]
    #[test]
    fn compiled_out_sparse_layout_names_its_feature() {
        let err = default_registry()
            .resolve(&ExtensionDef::new("sparse_layout"))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"unsupported codec "sparse_layout" (enable cargo feature "sparse")"#
        );
    }

    #[cfg(not(feature = "zstd"))]
    #[test]
    fn compiled_out_codec_names_its_feature() {
        let err = default_registry()
            .resolve(&ExtensionDef::new("zstd"))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"unsupported codec "zstd" (enable cargo feature "zstd")"#
        );
    }
}
