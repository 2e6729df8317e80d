//! The codecs of [numcodecs](https://numcodecs.readthedocs.io) 0.16, under the names
//! zarr-python 3 writes them (`numcodecs.<id>`), and the `pcodec`, `zfp` and `zfpy` codecs of
//! the zarr-extensions registry that zarrs reads.
//!
//! Each codec is one module of one shape: a configuration struct with numcodecs' parameters
//! (the codec's numcodecs configuration without its `id`, unknown fields refused), the codec
//! built from that configuration and the chunk representation it sees, and its tests. The
//! registry factory of `numcodecs.<id>` is a thin wrapper over it, and so is [`build`], which
//! builds the same codec from a Zarr v2 `{"id": ..., ...}` object (its `id` taken out):
//! one implementation serves both formats.
//!
//! | numcodecs `id` | v3 name | module | kind | cargo feature |
//! |---|---|---|---|---|
//! | `zlib` | `numcodecs.zlib` | [`zlib`] | bytes -> bytes | `zlib` |
//! | `bz2` | `numcodecs.bz2` | [`bz2`] | bytes -> bytes | `bz2` |
//! | `lz4` | `numcodecs.lz4` | [`lz4`] | bytes -> bytes | `lz4` |
//! | `lzma` | `numcodecs.lzma` | [`lzma`] | bytes -> bytes | `lzma` |
//! | `shuffle` | `numcodecs.shuffle` | [`shuffle`] | bytes -> bytes | `shuffle` |
//! | `crc32` | `numcodecs.crc32` | [`checksum32`] | bytes -> bytes | `crc32` |
//! | `adler32` | `numcodecs.adler32` | [`checksum32`] | bytes -> bytes | `adler32` |
//! | `fletcher32` | `numcodecs.fletcher32` | [`fletcher32`] | bytes -> bytes | `fletcher32` |
//! | `delta` | `numcodecs.delta` | [`delta`] | array -> array | `delta` |
//! | `fixedscaleoffset` | `numcodecs.fixedscaleoffset` | [`fixedscaleoffset`] | array -> array | `fixedscaleoffset` |
//! | `bitround` | `numcodecs.bitround` | [`bitround`] | array -> array | `bitround` |
//! | `quantize` | `numcodecs.quantize` | [`quantize`] | array -> array | `quantize` |
//! | `packbits` | `numcodecs.packbits` | [`packbits`] | array -> array | `packbits` |
//! | `astype` | `numcodecs.astype` | [`astype`] | array -> array | `astype` |
//! | `pcodec` | `numcodecs.pcodec`, `pcodec` | [`pcodec`] | array -> bytes | `pcodec` |
//! | `zfpy` | `numcodecs.zfpy`, `zfp`, `zfpy` | [`zfp`] | array -> bytes | `zfp` |
//!
//! The kinds are the ones zarr-python gives these codecs. The array -> array codecs may change
//! the representation the next codec sees: `delta`, `fixedscaleoffset` and `astype` its data
//! type (to `astype` / `encode_dtype`), `packbits` its data type and shape (`uint8`, one axis of
//! `1 + ceil(n / 8)` elements). The fill value the next codec sees is the chunk's fill value
//! cast to the new data type, as zarr-python keeps it.
//!
//! None of these codecs decodes part of a chunk (their formats have no index into the
//! decoded values: a zlib, bz2, lzma or lz4 stream, a shuffled or checksummed buffer, a
//! pcodec or zfp stream are decoded whole), so a region of a chunk stored through them is read
//! by decoding the whole chunk; the chain's partial reads stay for `[bytes]` alone, shards,
//! and prefixes of `zstd` and `blosc`.
//!
//! ```
//! use zarr_codecs::{default_registry, numcodecs, ChunkRepr, CodecChain};
//! use zarr_meta::{DataType, FillValue};
//!
//! let repr = ChunkRepr::new(vec![100], DataType::Int32, FillValue::zero(DataType::Int32));
//! // the v3 form zarr-python writes...
//! let json = r#"[{"name": "numcodecs.delta", "configuration": {"dtype": "<i4"}},
//!                {"name": "bytes", "configuration": {"endian": "little"}},
//!                {"name": "numcodecs.zlib", "configuration": {"level": 1}}]"#;
//! let chain = CodecChain::from_json(json, &repr, &default_registry())?;
//! let chunk: Vec<u8> = (0..100i32).flat_map(|v| v.to_ne_bytes()).collect();
//! let stored = chain.encode(&chunk)?;
//! assert_eq!(chain.decode(&stored)?.as_bytes(), &chunk[..]);
//!
//! // ...and the same codec built from its Zarr v2 form
//! let v2: serde_json::Map<String, serde_json::Value> =
//!     serde_json::from_str(r#"{"level": 1}"#)?;
//! let zlib = numcodecs::build("zlib", v2, &repr)?;
//! assert_eq!(zlib.name(), "numcodecs.zlib");
//! assert!(numcodecs::build("mystery", Default::default(), &repr).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use serde_json::{Map, Value};
use zarr_meta::{ExtensionDef, ExtensionPoint, MetaError};

use crate::codec::Codec;
use crate::error::{CodecError, Result};
use crate::registry::{CodecFactory, CodecRegistry};
use crate::repr::ChunkRepr;

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
#[cfg(any(feature = "zlib", feature = "bz2", feature = "lzma"))]
mod stream;

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

/// The prefix zarr-python gives numcodecs' codecs in Zarr v3 metadata.
pub const PREFIX: &str = "numcodecs.";

/// The kind of a codec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodecKind {
    /// array -> array (numcodecs' filters that change values or types).
    ArrayToArray,
    /// array -> bytes.
    ArrayToBytes,
    /// bytes -> bytes (compressors, `shuffle`, checksums).
    BytesToBytes,
}

/// One numcodecs codec this crate implements.
#[derive(Debug, Clone, Copy)]
pub struct NumcodecsCodec {
    /// numcodecs' `id` (the Zarr v2 name).
    pub id: &'static str,
    /// The Zarr v3 name zarr-python writes (`numcodecs.<id>`).
    pub name: &'static str,
    /// Its kind.
    pub kind: CodecKind,
    /// The cargo feature of zarr-codecs that brings it.
    pub feature: &'static str,
}

macro_rules! numcodecs_table {
    ($($id:literal, $kind:ident, $feature:literal;)*) => {
        /// Every numcodecs codec of this crate, whether or not this build has its feature.
        pub const NUMCODECS: &[NumcodecsCodec] = &[$(NumcodecsCodec {
            id: $id,
            name: concat!("numcodecs.", $id),
            kind: CodecKind::$kind,
            feature: $feature,
        }),*];
    };
}

numcodecs_table! {
    "zlib", BytesToBytes, "zlib";
    "bz2", BytesToBytes, "bz2";
    "lz4", BytesToBytes, "lz4";
    "lzma", BytesToBytes, "lzma";
    "shuffle", BytesToBytes, "shuffle";
    "crc32", BytesToBytes, "crc32";
    "adler32", BytesToBytes, "adler32";
    "fletcher32", BytesToBytes, "fletcher32";
    "delta", ArrayToArray, "delta";
    "fixedscaleoffset", ArrayToArray, "fixedscaleoffset";
    "bitround", ArrayToArray, "bitround";
    "quantize", ArrayToArray, "quantize";
    "packbits", ArrayToArray, "packbits";
    "astype", ArrayToArray, "astype";
    "pcodec", ArrayToBytes, "pcodec";
    "zfpy", ArrayToBytes, "zfp";
}

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

/// Registers `numcodecs.<id>` for every codec of [`NUMCODECS`] (compiled-out ones as such),
/// and zarrs' `pcodec`, `zfp` and `zfpy`.
pub(crate) fn register(registry: &mut CodecRegistry) -> Result<(), MetaError> {
    for c in NUMCODECS {
        match factory_of(c.id) {
            Some(f) => registry.register(c.name, CodecFactory(f))?,
            None => registry.register_compiled_out(c.name, c.feature),
        }
    }
    #[cfg(feature = "pcodec")]
    registry.register(pcodec::NAME, CodecFactory(pcodec::factory))?;
    #[cfg(not(feature = "pcodec"))]
    registry.register_compiled_out("pcodec", "pcodec");
    #[cfg(feature = "zfp")]
    {
        registry.register(zfp::NAME, CodecFactory(zfp::factory))?;
        registry.register(zfp::ZFPY_NAME, CodecFactory(zfp::zfpy_factory))?;
    }
    #[cfg(not(feature = "zfp"))]
    {
        registry.register_compiled_out("zfp", "zfp");
        registry.register_compiled_out("zfpy", "zfp");
    }
    Ok(())
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
    use crate::registry::default_registry;
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
        let err = build("jenkins_lookup3", Map::new(), &repr).unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown codec \"numcodecs.jenkins_lookup3\""
        );
    }
}
