//! `numcodecs.bz2` (bytes -> bytes): bzip2 compression.
//!
//! Name: `numcodecs.bz2` (Zarr v2: `{"id": "bz2"}`). Configuration: numcodecs' `level`, 1 to
//! 9 (the block size in 100 kB), default 1 when absent. Encoding is Python's
//! `bz2.compress(data, level)` (libbzip2 1.0.8, work factor 30), byte for byte. Decoding reads
//! one or more concatenated bzip2 streams, as Python does, checks their CRCs, and never
//! produces more than its bound; the decoder's state is fixed (at most about 3.6 MB at level
//! 9), whatever the input claims.
//!
//! ```
//! use zarr_codecs::{ChunkRepr, CodecChain, EncodeOptions};
//! use zarr_numcodecs::default_registry;
//! use zarr_meta::{DataType, FillValue};
//!
//! let repr = ChunkRepr::new(vec![1000], DataType::UInt8, FillValue::zero(DataType::UInt8));
//! let json = r#"[{"name": "bytes"}, {"name": "numcodecs.bz2", "configuration": {"level": 9}}]"#;
//! let chain = CodecChain::from_json(json, &repr, &default_registry())?;
//! let chunk = vec![7u8; 1000];
//! let stored = chain.encode(&chunk, EncodeOptions::WRITE_EMPTY)?.ok_or("skipped")?;
//! assert_eq!(&stored[..4], b"BZh9");
//! assert_eq!(chain.decode(&stored)?.as_bytes(), &chunk[..]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::io::Write;

use bzip2::bufread::MultiBzDecoder;
use bzip2::write::BzEncoder;
use bzip2::Compression;
use serde::{Deserialize, Serialize};
use zarr_meta::{ExtensionDef, ExtensionPoint};

use zarr_codecs::ChunkRepr;
use zarr_codecs::CodecRegistry;
use zarr_codecs::Result;
use zarr_codecs::{BytesToBytesCodec, Codec, Decoded};

use super::invalid;
use zarr_codecs::stream;

/// The codec's name.
pub const NAME: &str = "numcodecs.bz2";

/// numcodecs' default level.
pub const DEFAULT_LEVEL: u32 = 1;

/// The configuration of `numcodecs.bz2`: numcodecs' `BZ2(level=1)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bz2Config {
    /// The compression level, 1 to 9; numcodecs' default 1 when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<u32>,
}

crate::config::codec_def!(Bz2Config => NAME);

/// The `numcodecs.bz2` codec.
#[derive(Debug, Clone, Copy)]
pub struct Bz2Codec {
    config: Bz2Config,
    level: u32,
}

impl Bz2Codec {
    /// The codec with `config`.
    ///
    /// # Errors
    /// [`zarr_meta::MetaError::InvalidConfiguration`] for a level outside 1..=9.
    pub fn new(config: Bz2Config) -> Result<Self> {
        let level = config.level.unwrap_or(DEFAULT_LEVEL);
        if !(1..=9).contains(&level) {
            return Err(invalid(NAME, format!("level {level} is outside 1..=9")));
        }
        Ok(Bz2Codec { config, level })
    }

    /// The configuration.
    pub fn config(&self) -> Bz2Config {
        self.config
    }
}

/// Builds `numcodecs.bz2` from its definition.
pub(crate) fn factory(def: &ExtensionDef, _: &ChunkRepr, _: &CodecRegistry) -> Result<Codec> {
    let config: Bz2Config = def.parse_configuration(ExtensionPoint::Codec)?;
    Ok(Codec::BytesToBytes(Box::new(Bz2Codec::new(config)?)))
}

/// bzip2's worst-case size: the input plus 1 % plus 600 bytes (the libbzip2 manual).
fn bz2_bound(n: u64) -> u64 {
    n.saturating_add(n / 100).saturating_add(600)
}

/// The input bytes the decoder has not consumed.
fn unread(decoder: &MultiBzDecoder<&[u8]>) -> usize {
    decoder.get_ref().len()
}

impl BytesToBytesCodec for Bz2Codec {
    fn name(&self) -> &'static str {
        NAME
    }

    fn to_def(&self) -> ExtensionDef {
        self.config.into()
    }

    fn encoded_size_bound(&self, decoded_bound: u64) -> u64 {
        bz2_bound(decoded_bound)
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        stream::compress(NAME, bz2_bound(input.len() as u64), |out| {
            let mut encoder = BzEncoder::new(out, Compression::new(self.level));
            encoder.write_all(input)?;
            encoder.finish()
        })
    }

    fn decode<'a>(&self, input: Decoded<'a>, max_decoded: u64) -> Result<Decoded<'a>> {
        let input = input.as_slice();
        let hint = input.len().saturating_mul(4);
        let buf = stream::decode(NAME, MultiBzDecoder::new(input), unread, hint, max_decoded)?;
        Ok(Decoded::Owned(buf))
    }

    fn decode_into(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        stream::decode_into(NAME, MultiBzDecoder::new(input), unread, out)
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
            r#"{"name":"numcodecs.bz2","configuration":{"level":9}}"#,
            r#"{"name":"numcodecs.bz2","configuration":{}}"#,
        ] {
            let back = serde_json::to_string(&codec(json).unwrap().to_def()).unwrap();
            assert_eq!(back, json);
        }
        for bad in [
            r#"{"name":"numcodecs.bz2","configuration":{"level":0}}"#,
            r#"{"name":"numcodecs.bz2","configuration":{"level":10}}"#,
            r#"{"name":"numcodecs.bz2","configuration":{"blocksize":1}}"#,
        ] {
            let err = zarr_testkit::report(&codec(bad).unwrap_err());
            assert!(
                err.starts_with("invalid configuration for codec \"numcodecs.bz2\""),
                "{err}"
            );
        }
    }

    #[test]
    fn corrupt_truncated_and_oversized_streams_are_errors() {
        let c = Bz2Codec::new(Bz2Config::default()).unwrap();
        let data: Vec<u8> = (0..5000u32).map(|i| (i % 13) as u8).collect();
        let enc = c.encode(&data).unwrap();
        assert!(matches!(
            c.decode(Decoded::Borrowed(&enc), 4999),
            Err(CodecError::ExceedsBound { .. })
        ));
        assert!(c.decode_into(&enc, &mut [0u8; 4999]).is_err());
        assert!(matches!(
            c.decode_into(&enc, &mut [0u8; 5001]),
            Err(CodecError::SizeMismatch { .. })
        ));
        for cut in [0, 3, 10, enc.len() / 2, enc.len() - 1] {
            assert!(c.decode(Decoded::Borrowed(&enc[..cut]), 5000).is_err());
        }
        let mut bad = enc.clone();
        bad[20] ^= 0x10;
        assert!(c.decode(Decoded::Borrowed(&bad), 5000).is_err());
        let mut trailing = enc.clone();
        trailing.extend_from_slice(b"junk");
        assert!(c.decode(Decoded::Borrowed(&trailing), 10_000).is_err());
        // two streams read as their concatenation, as Python's bz2 reads them
        let two = [enc.clone(), enc.clone()].concat();
        assert_eq!(
            c.decode(Decoded::Borrowed(&two), 10_000).unwrap().len(),
            10_000
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        #[test]
        fn round_trip(data in prop::collection::vec(0u8..5, 0..3000), level in 1u32..10) {
            let c = Bz2Codec::new(Bz2Config { level: Some(level) }).unwrap();
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
