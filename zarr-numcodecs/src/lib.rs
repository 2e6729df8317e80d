#![doc = include_str!("../README.md")]
#![warn(missing_docs)]
#![forbid(unsafe_code)]

use serde_json::{Map, Value};
use zarr_codecs::{ChunkRepr, Codec, CodecError, CodecFactory, CodecRegistry, Result};
use zarr_meta::{ExtensionDef, ExtensionPoint, MetaError};

pub use zarr_codecs::numcodecs::{CodecKind, NumcodecsCodec, NUMCODECS, PREFIX};

mod config;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;

#[cfg(any(
    feature = "delta",
    feature = "fixedscaleoffset",
    feature = "quantize",
    feature = "astype"
))]
mod cast;
#[cfg(any(
    feature = "delta",
    feature = "fixedscaleoffset",
    feature = "quantize",
    feature = "astype"
))]
mod dtype;

#[cfg(feature = "astype")]
pub mod astype;
#[cfg(feature = "bitround")]
pub mod bitround;
#[cfg(feature = "bz2")]
pub mod bz2;
#[cfg(any(feature = "crc32", feature = "adler32"))]
pub mod checksum32;
#[cfg(feature = "delta")]
pub mod delta;
#[cfg(feature = "fixedscaleoffset")]
pub mod fixedscaleoffset;
#[cfg(feature = "fletcher32")]
pub mod fletcher32;
#[cfg(feature = "jenkins_lookup3")]
pub mod jenkins_lookup3;
#[cfg(feature = "lz4")]
pub mod lz4;
#[cfg(feature = "lzma")]
pub mod lzma;
#[cfg(feature = "packbits")]
pub mod packbits;
#[cfg(feature = "pcodec")]
pub mod pcodec;
#[cfg(feature = "quantize")]
pub mod quantize;
#[cfg(feature = "shuffle")]
pub mod shuffle;
#[cfg(feature = "zfp")]
pub mod zfp;
#[cfg(feature = "zlib")]
pub mod zlib;

type Factory = fn(&ExtensionDef, &ChunkRepr, &CodecRegistry) -> Result<Codec>;

/// The factory of `numcodecs.<id>` in this build.
// (a build without any numcodecs feature has only the `None` arm)
#[allow(unreachable_code)]
fn factory_of(id: &str) -> Option<Factory> {
    Some(match id {
        #[cfg(feature = "zlib")]
        "zlib" => zlib::factory,
        #[cfg(feature = "bz2")]
        "bz2" => bz2::factory,
        #[cfg(feature = "lz4")]
        "lz4" => lz4::factory,
        #[cfg(feature = "lzma")]
        "lzma" => lzma::factory,
        #[cfg(feature = "shuffle")]
        "shuffle" => shuffle::factory,
        #[cfg(feature = "crc32")]
        "crc32" => checksum32::crc32_factory,
        #[cfg(feature = "adler32")]
        "adler32" => checksum32::adler32_factory,
        #[cfg(feature = "fletcher32")]
        "fletcher32" => fletcher32::factory,
        #[cfg(feature = "jenkins_lookup3")]
        "jenkins_lookup3" => jenkins_lookup3::factory,
        #[cfg(feature = "delta")]
        "delta" => delta::factory,
        #[cfg(feature = "fixedscaleoffset")]
        "fixedscaleoffset" => fixedscaleoffset::factory,
        #[cfg(feature = "bitround")]
        "bitround" => bitround::factory,
        #[cfg(feature = "quantize")]
        "quantize" => quantize::factory,
        #[cfg(feature = "packbits")]
        "packbits" => packbits::factory,
        #[cfg(feature = "astype")]
        "astype" => astype::factory,
        #[cfg(feature = "pcodec")]
        "pcodec" => pcodec::numcodecs_factory,
        #[cfg(feature = "zfp")]
        "zfpy" => zfp::numcodecs_factory,
        _ => return None,
    })
}

/// Whether this build has the numcodecs codec `id` (its cargo feature is on).
pub fn is_enabled(id: &str) -> bool {
    factory_of(id).is_some()
}

/// Builds the numcodecs codec `id` from its numcodecs configuration (a Zarr v2 `compressor` or
/// `filters` entry without its `id`) for chunks of `repr`: the same codec the v3 name
/// `numcodecs.<id>` builds.
///
/// # Errors
/// [`MetaError::UnknownExtension`] for an id this crate does not implement,
/// [`MetaError::CompiledOut`] for one whose cargo feature is off, and the codec's own errors
/// (an invalid configuration, above all).
pub fn build(id: &str, configuration: Map<String, Value>, repr: &ChunkRepr) -> Result<Codec> {
    let name = format!("{PREFIX}{id}");
    let Some(entry) = NUMCODECS.iter().find(|c| c.id == id) else {
        return Err(MetaError::UnknownExtension {
            point: ExtensionPoint::Codec,
            name,
        }
        .into());
    };
    let Some(factory) = factory_of(id) else {
        return Err(MetaError::CompiledOut {
            point: ExtensionPoint::Codec,
            name,
            feature: entry.feature,
        }
        .into());
    };
    let def = ExtensionDef::with_configuration(name, configuration);
    factory(&def, repr, &CodecRegistry::new(ExtensionPoint::Codec))
}

/// Registers `numcodecs.<id>` for every codec of [`NUMCODECS`] this build has, and zarrs'
/// `pcodec`, `zfp` and `zfpy`; the ones left out by a cargo feature of this crate are recorded
/// as compiled out, naming that feature (replacing the record of
/// [`zarr_codecs::register_defaults`], which names zarr-array's feature `numcodecs`).
///
/// # Errors
/// [`MetaError::DuplicateExtension`] if one of the names is already registered.
pub fn register(registry: &mut CodecRegistry) -> Result<(), MetaError> {
    for c in NUMCODECS {
        match factory_of(c.id) {
            Some(f) => registry.register(c.name, CodecFactory::new(f))?,
            None => registry.register_compiled_out(c.name, c.feature),
        }
    }
    #[cfg(feature = "pcodec")]
    registry.register(pcodec::NAME, CodecFactory::new(pcodec::factory))?;
    #[cfg(not(feature = "pcodec"))]
    registry.register_compiled_out("pcodec", "pcodec");
    #[cfg(feature = "zfp")]
    {
        registry.register(zfp::NAME, CodecFactory::new(zfp::factory))?;
        registry.register(zfp::ZFPY_NAME, CodecFactory::new(zfp::zfpy_factory))?;
    }
    #[cfg(not(feature = "zfp"))]
    {
        registry.register_compiled_out("zfp", "zfp");
        registry.register_compiled_out("zfpy", "zfp");
    }
    Ok(())
}

/// A codec registry holding the codecs of zarr-codecs' default registry
/// ([`zarr_codecs::default_registry`]) and those of this build.
pub fn default_registry() -> CodecRegistry {
    let mut registry = zarr_codecs::default_registry();
    // cannot fail: zarr-codecs registers none of these names
    let _ = register(&mut registry);
    registry
}

/// An invalid-configuration error for the codec `name`.
#[allow(dead_code)]
pub(crate) fn invalid(name: &str, reason: impl Into<String>) -> CodecError {
    ExtensionDef::new(name)
        .invalid_configuration(ExtensionPoint::Codec, reason)
        .into()
}

/// Checks that a buffer handed to an array -> array codec has the length its representation
/// needs.
#[allow(dead_code)]
pub(crate) fn check_len(what: &'static str, expected: usize, got: usize) -> Result<()> {
    if expected == got {
        Ok(())
    } else {
        Err(CodecError::BufferLength {
            what,
            expected: expected as u64,
            got: got as u64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zarr_meta::DataType;

    #[test]
    fn every_name_is_registered_or_names_its_feature() {
        let registry = default_registry();
        let repr = ChunkRepr::new(
            vec![4],
            DataType::Float32,
            zarr_meta::FillValue::zero(DataType::Float32),
        );
        for c in NUMCODECS {
            assert_eq!(c.name, format!("{PREFIX}{}", c.id));
            assert_eq!(registry.contains(c.name), factory_of(c.id).is_some());
            if factory_of(c.id).is_none() {
                let err = build(c.id, Map::new(), &repr).unwrap_err();
                assert!(zarr_testkit::report(&err).contains(c.feature), "{err}");
                let err = registry.resolve(&ExtensionDef::new(c.name)).unwrap_err();
                assert!(zarr_testkit::report(&err).contains(c.feature), "{err}");
            }
        }
        // a numcodecs id no build has
        let err = build("mystery", Map::new(), &repr).unwrap_err();
        assert_eq!(err.to_string(), "unknown codec \"numcodecs.mystery\"");
    }
}
