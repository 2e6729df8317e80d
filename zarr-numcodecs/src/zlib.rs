//! `numcodecs.zlib` (bytes -> bytes): DEFLATE in the zlib format (RFC 1950).
//!
//! Name: `numcodecs.zlib` (Zarr v2: `{"id": "zlib"}`). Configuration: numcodecs' `level`, -1
//! (zlib's default, 6) or 0 to 9, default 1 when absent. Encoding is Python's
//! `zlib.compress(data, level)` (zlib's own C library: window 15, memory level 8, default
//! strategy), so streams are byte-identical to numcodecs'. Decoding reads one zlib stream,
//! checks its Adler-32, and never produces more than its bound; trailing bytes are an error.
//!
//! ```
//! use zarr_codecs::{ChunkRepr, CodecChain, EncodeOptions};
//! use zarr_numcodecs::default_registry;
//! use zarr_meta::{DataType, FillValue};
//!
//! let repr = ChunkRepr::new(vec![1000], DataType::UInt8, FillValue::zero(DataType::UInt8));
//! let json = r#"[{"name": "bytes"}, {"name": "numcodecs.zlib", "configuration": {"level": 1}}]"#;
//! let chain = CodecChain::from_json(json, &repr, &default_registry())?;
//! let chunk = vec![7u8; 1000];
//! let stored = chain.encode(&chunk, EncodeOptions::WRITE_EMPTY)?.ok_or("skipped")?;
//! assert_eq!(&stored[..2], &[0x78, 0x01]);
//! assert_eq!(chain.decode(&stored)?.as_bytes(), &chunk[..]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::io::Write;

use flate2::bufread::ZlibDecoder;
use flate2::write::ZlibEncoder;
use flate2::Compression;
use serde::{Deserialize, Serialize};
use zarr_meta::{ExtensionDef, ExtensionPoint};

use zarr_codecs::ChunkRepr;
use zarr_codecs::CodecRegistry;
use zarr_codecs::Result;
use zarr_codecs::{BytesToBytesCodec, Codec, Decoded};

use super::invalid;
use zarr_codecs::stream;

/// The codec's name.
pub const NAME: &str = "numcodecs.zlib";

/// numcodecs' default level.
pub const DEFAULT_LEVEL: i32 = 1;

/// The configuration of `numcodecs.zlib`: numcodecs' `Zlib(level=1)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZlibConfig {
    /// The compression level: -1 (zlib's default) or 0 to 9; numcodecs' default 1 when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<i32>,
}

crate::config::codec_def!(ZlibConfig => NAME);

/// The `numcodecs.zlib` codec.
#[derive(Debug, Clone, Copy)]
pub struct ZlibCodec {
    config: ZlibConfig,
    level: Compression,
}

impl ZlibCodec {
    /// The codec with `config`.
    ///
    /// # Errors
    /// [`zarr_meta::MetaError::InvalidConfiguration`] for a level outside -1..=9.
    pub fn new(config: ZlibConfig) -> Result<Self> {
        let level = match config.level.unwrap_or(DEFAULT_LEVEL) {
            -1 => Compression::default(),
            l @ 0..=9 => Compression::new(l as u32),
            l => return Err(invalid(NAME, format!("level {l} is outside -1..=9"))),
        };
        Ok(ZlibCodec { config, level })
    }

    /// The configuration.
    pub fn config(&self) -> ZlibConfig {
        self.config
    }
}

/// Builds `numcodecs.zlib` from its definition.
pub(crate) fn factory(def: &ExtensionDef, _: &ChunkRepr, _: &CodecRegistry) -> Result<Codec> {
    let config: ZlibConfig = def.parse_configuration(ExtensionPoint::Codec)?;
    Ok(Codec::BytesToBytes(Box::new(ZlibCodec::new(config)?)))
}

/// zlib's `compressBound`, in `u64`.
fn zlib_bound(n: u64) -> u64 {
    n.saturating_add(n >> 12)
        .saturating_add(n >> 14)
        .saturating_add(n >> 25)
        .saturating_add(13)
}

/// The input bytes the decoder has not consumed.
fn unread(decoder: &ZlibDecoder<&[u8]>) -> usize {
    decoder.get_ref().len()
}

impl BytesToBytesCodec for ZlibCodec {
    fn name(&self) -> &'static str {
        NAME
    }

    fn to_def(&self) -> ExtensionDef {
        self.config.into()
    }

    fn encoded_size_bound(&self, decoded_bound: u64) -> u64 {
        zlib_bound(decoded_bound)
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        stream::compress(NAME, zlib_bound(input.len() as u64), |out| {
            let mut encoder = ZlibEncoder::new(out, self.level);
            encoder.write_all(input)?;
            encoder.finish()
        })
    }

    fn decode<'a>(&self, input: Decoded<'a>, max_decoded: u64) -> Result<Decoded<'a>> {
        let input = input.as_slice();
        let hint = input.len().saturating_mul(4);
        let buf = stream::decode(NAME, ZlibDecoder::new(input), unread, hint, max_decoded)?;
        Ok(Decoded::Owned(buf))
    }

    fn decode_into(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        stream::decode_into(NAME, ZlibDecoder::new(input), unread, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::default_registry;
    use proptest::prelude::*;
    use zarr_codecs::CodecError;
    use zarr_meta::{DataType, FillValue};

    fn codec(json: &str) -> Result<Codec> {
        let repr = ChunkRepr::new(vec![1], DataType::UInt8, FillValue::zero(DataType::UInt8));
        factory(
            &serde_json::from_str(json).unwrap(),
            &repr,
            &default_registry(),
        )
    }

    #[test]
    fn config_round_trips_and_bad_levels_are_refused() {
        for json in [
            r#"{"name":"numcodecs.zlib","configuration":{"level":9}}"#,
            r#"{"name":"numcodecs.zlib","configuration":{}}"#,
            r#"{"name":"numcodecs.zlib","configuration":{"level":-1}}"#,
        ] {
            let back = serde_json::to_string(&codec(json).unwrap().to_def()).unwrap();
            assert_eq!(back, json);
        }
        for bad in [
            r#"{"name":"numcodecs.zlib","configuration":{"level":10}}"#,
            r#"{"name":"numcodecs.zlib","configuration":{"level":-2}}"#,
            r#"{"name":"numcodecs.zlib","configuration":{"level":1,"id":"zlib"}}"#,
        ] {
            let err = zarr_testkit::report(&codec(bad).unwrap_err());
            assert!(
                err.starts_with("invalid configuration for codec \"numcodecs.zlib\""),
                "{err}"
            );
        }
    }

    #[test]
    fn corrupt_truncated_and_oversized_streams_are_errors() {
        let c = ZlibCodec::new(ZlibConfig::default()).unwrap();
        let data: Vec<u8> = (0..5000u32).map(|i| (i % 11) as u8).collect();
        let enc = c.encode(&data).unwrap();
        assert!(matches!(
            c.decode(Decoded::Borrowed(&enc), 4999),
            Err(CodecError::ExceedsBound { .. })
        ));
        assert!(matches!(
            c.decode_into(&enc, &mut [0u8; 4999]),
            Err(CodecError::ExceedsBound { .. })
        ));
        assert!(matches!(
            c.decode_into(&enc, &mut [0u8; 5001]),
            Err(CodecError::SizeMismatch { .. })
        ));
        for cut in [0, 1, 2, enc.len() / 2, enc.len() - 1] {
            assert!(c.decode(Decoded::Borrowed(&enc[..cut]), 5000).is_err());
        }
        let mut bad = enc.clone();
        let n = bad.len();
        bad[n - 1] ^= 1; // the Adler-32
        assert!(c.decode(Decoded::Borrowed(&bad), 5000).is_err());
        let mut trailing = enc.clone();
        trailing.push(0);
        assert!(c.decode(Decoded::Borrowed(&trailing), 10_000).is_err());
        assert!(c.decode_into(&trailing, &mut vec![0u8; 5000]).is_err());
        assert!(c.decode(Decoded::Borrowed(b"not zlib"), 100).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn round_trip(data in prop::collection::vec(0u8..5, 0..3000), level in -1i32..10) {
            let c = ZlibCodec::new(ZlibConfig { level: Some(level) }).unwrap();
            let enc = c.encode(&data).unwrap();
            prop_assert!(enc.len() as u64 <= c.encoded_size_bound(data.len() as u64));
            let dec = c.decode(Decoded::Borrowed(&enc), data.len() as u64).unwrap();
            prop_assert_eq!(dec.as_slice(), &data[..]);
            let mut out = vec![0u8; data.len()];
            c.decode_into(&enc, &mut out).unwrap();
            prop_assert_eq!(out, data);
        }
    }
}
