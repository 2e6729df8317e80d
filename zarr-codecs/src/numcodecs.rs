//! The names of the [numcodecs](https://numcodecs.readthedocs.io) codecs: their numcodecs
//! `id` (the Zarr v2 name), the Zarr v3 name zarr-python 3 writes (`numcodecs.<id>`), their
//! kind and the cargo feature of the
//! [zarr-numcodecs](https://docs.rs/zarr-numcodecs) crate that implements each.
//!
//! This crate implements none of them: the table is what the Zarr v2 codec map
//! ([`crate::v2`]) lays a v2 chain out by, and what [`crate::register_defaults`] records as
//! compiled out (cargo feature `numcodecs`, the one of zarr-array that brings zarr-numcodecs),
//! so that a reader built without zarr-numcodecs refuses an array that uses one of them by
//! naming the feature. `zarr_numcodecs::register` then registers the codecs themselves.
//!
//! ```
//! use zarr_codecs::default_registry;
//! use zarr_meta::ExtensionDef;
//!
//! let err = default_registry()
//!     .resolve(&ExtensionDef::new("numcodecs.delta"))
//!     .unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     r#"unsupported codec "numcodecs.delta" (enable cargo feature "numcodecs")"#
//! );
//! ```

use crate::registry::CodecRegistry;

/// The prefix zarr-python gives numcodecs' codecs in Zarr v3 metadata.
pub const PREFIX: &str = "numcodecs.";

/// The cargo feature (of zarr-array, zarr-cli and zarr-py) that brings zarr-numcodecs.
pub const FEATURE: &str = "numcodecs";

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

/// One numcodecs codec of zarr-numcodecs.
#[derive(Debug, Clone, Copy)]
pub struct NumcodecsCodec {
    /// numcodecs' `id` (the Zarr v2 name).
    pub id: &'static str,
    /// The Zarr v3 name zarr-python writes (`numcodecs.<id>`).
    pub name: &'static str,
    /// Its kind.
    pub kind: CodecKind,
    /// The cargo feature of zarr-numcodecs that brings it.
    pub feature: &'static str,
}

macro_rules! numcodecs_table {
    ($($id:literal, $kind:ident, $feature:literal;)*) => {
        /// Every numcodecs codec of zarr-numcodecs, whether or not a build has it.
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
    "jenkins_lookup3", BytesToBytes, "jenkins_lookup3";
    "delta", ArrayToArray, "delta";
    "fixedscaleoffset", ArrayToArray, "fixedscaleoffset";
    "bitround", ArrayToArray, "bitround";
    "quantize", ArrayToArray, "quantize";
    "packbits", ArrayToArray, "packbits";
    "astype", ArrayToArray, "astype";
    "pcodec", ArrayToBytes, "pcodec";
    "zfpy", ArrayToBytes, "zfp";
}

/// The names of zarrs' codecs that zarr-numcodecs implements besides `numcodecs.<id>`, with
/// the feature of zarr-numcodecs of each.
pub const OTHER_NAMES: [(&str, &str); 3] = [("pcodec", "pcodec"), ("zfp", "zfp"), ("zfpy", "zfp")];

/// Records every codec name of zarr-numcodecs (`numcodecs.<id>` and [`OTHER_NAMES`]) as
/// compiled out, naming the cargo feature [`FEATURE`]; registering a codec later replaces its
/// record.
pub(crate) fn register_compiled_out(registry: &mut CodecRegistry) {
    for c in NUMCODECS {
        registry.register_compiled_out(c.name, FEATURE);
    }
    for (name, _) in OTHER_NAMES {
        registry.register_compiled_out(name, FEATURE);
    }
}
