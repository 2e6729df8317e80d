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

/// The function that builds a codec from its definition for the representation it will see.
/// Nested definitions (a shard's inner and index codecs) resolve through the registry it is
/// handed.
pub type BuildFn = fn(&ExtensionDef, &ChunkRepr, &CodecRegistry) -> Result<Codec>;

/// Builds a codec from its definition, and says before building it whether the codec takes
/// variable-size elements (`string`, `variable_length_bytes`): a codec that does not is
/// refused for them ([`crate::CodecError::VariableSizeElements`]) before its factory sees
/// such a representation.
#[derive(Clone, Copy)]
pub struct CodecFactory {
    build: BuildFn,
    variable_size: bool,
}

impl fmt::Debug for CodecFactory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CodecFactory")
            .field("variable_size", &self.variable_size)
            .finish_non_exhaustive()
    }
}

impl CodecFactory {
    /// The factory `build` of a codec that takes fixed-size elements only.
    pub const fn new(build: BuildFn) -> Self {
        CodecFactory {
            build,
            variable_size: false,
        }
    }

    /// The same factory, for a codec that takes variable-size elements too (the vlen codecs,
    /// `sharding_indexed` over them, `transpose`, which only moves elements).
    #[must_use]
    pub const fn taking_variable_size(self) -> Self {
        CodecFactory {
            variable_size: true,
            ..self
        }
    }

    /// Whether the codec takes variable-size elements.
    pub fn takes_variable_size(&self) -> bool {
        self.variable_size
    }

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
        (self.build)(def, repr, registry)
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
    registry.register(crate::bytes::NAME, CodecFactory::new(crate::bytes::factory))?;
    registry.register(
        crate::transpose::NAME,
        CodecFactory::new(crate::transpose::factory).taking_variable_size(),
    )?;

    #[cfg(feature = "gzip")]
    registry.register(crate::gzip::NAME, CodecFactory::new(crate::gzip::factory))?;
    #[cfg(not(feature = "gzip"))]
    registry.register_compiled_out("gzip", "gzip");

    #[cfg(feature = "zstd")]
    registry.register(crate::zstd::NAME, CodecFactory::new(crate::zstd::factory))?;
    #[cfg(not(feature = "zstd"))]
    registry.register_compiled_out("zstd", "zstd");

    #[cfg(feature = "blosc")]
    registry.register(crate::blosc::NAME, CodecFactory::new(crate::blosc::factory))?;
    #[cfg(not(feature = "blosc"))]
    registry.register_compiled_out("blosc", "blosc");

    #[cfg(feature = "crc32c")]
    registry.register(
        crate::crc32c::NAME,
        CodecFactory::new(crate::crc32c::factory),
    )?;
    #[cfg(not(feature = "crc32c"))]
    registry.register_compiled_out("crc32c", "crc32c");

    #[cfg(feature = "sharding")]
    registry.register(
        crate::sharding::NAME,
        CodecFactory::new(crate::sharding::factory).taking_variable_size(),
    )?;
    #[cfg(not(feature = "sharding"))]
    registry.register_compiled_out("sharding_indexed", "sharding");

    #[cfg(feature = "vlen")]
    {
        use crate::vlen::{factory_bytes, factory_utf8, VLEN_BYTES, VLEN_UTF8};
        registry.register(
            VLEN_UTF8,
            CodecFactory::new(factory_utf8).taking_variable_size(),
        )?;
        registry.register(
            VLEN_BYTES,
            CodecFactory::new(factory_bytes).taking_variable_size(),
        )?;
    }
    #[cfg(not(feature = "vlen"))]
    {
        registry.register_compiled_out("vlen-utf8", "vlen");
        registry.register_compiled_out("vlen-bytes", "vlen");
    }
    #[cfg(feature = "sparse")]
    registry.register(
        crate::sparse_layout::NAME,
        CodecFactory::new(crate::sparse_layout::factory),
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
