//! `numcodecs.lz4` (bytes -> bytes): an LZ4 block behind numcodecs' size header.
//!
//! Name: `numcodecs.lz4` (Zarr v2: `{"id": "lz4"}`). Configuration: numcodecs'
//! `acceleration`, default 1 when absent (0 and negative values mean 1, as in numcodecs).
//! The format is numcodecs': the decoded size as a 4-byte little-endian integer, then one LZ4
//! block (not the LZ4 frame format). Encoding runs LZ4's C library (`LZ4_compress_fast`, as
//! numcodecs does, through the `lz4` crate's safe block functions), so blocks are
//! byte-identical. Decoding refuses a header that claims more
//! than the bound before allocating, and LZ4's safe decoder never writes past the claimed
//! size; the block must decode to exactly that size. Inputs are limited to numcodecs' maximum
//! of 0x7E000000 bytes.
//!
//! ```
//! use zarr_codecs::{ChunkRepr, CodecChain, EncodeOptions};
//! use zarr_numcodecs::default_registry;
//! use zarr_meta::{DataType, FillValue};
//!
//! let repr = ChunkRepr::new(vec![1000], DataType::UInt8, FillValue::zero(DataType::UInt8));
//! let json = r#"[{"name": "bytes"}, {"name": "numcodecs.lz4", "configuration": {"acceleration": 1}}]"#;
//! let chain = CodecChain::from_json(json, &repr, &default_registry())?;
//! let chunk = vec![7u8; 1000];
//! let stored = chain.encode(&chunk, EncodeOptions::WRITE_EMPTY)?.ok_or("skipped")?;
//! assert_eq!(&stored[..4], &1000u32.to_le_bytes());
//! assert_eq!(chain.decode(&stored)?.as_bytes(), &chunk[..]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use lz4::block::CompressionMode;
use serde::{Deserialize, Serialize};
use zarr_meta::{ExtensionDef, ExtensionPoint};

use zarr_codecs::AlignedBuffer;
use zarr_codecs::ChunkRepr;
use zarr_codecs::CodecRegistry;
use zarr_codecs::{BytesToBytesCodec, Codec, Decoded};
use zarr_codecs::{CodecError, Result};

/// The codec's name.
pub const NAME: &str = "numcodecs.lz4";

/// The largest input numcodecs (and LZ4) compresses.
pub const MAX_INPUT: usize = 0x7E00_0000;

/// The configuration of `numcodecs.lz4`: numcodecs' `LZ4(acceleration=1)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lz4Config {
    /// LZ4's acceleration: larger is faster and compresses less; values below 1 mean 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acceleration: Option<i32>,
}

crate::config::codec_def!(Lz4Config => NAME);

/// The `numcodecs.lz4` codec.
#[derive(Debug, Clone, Copy)]
pub struct Lz4Codec {
    config: Lz4Config,
    acceleration: i32,
}

impl Lz4Codec {
    /// The codec with `config` (every acceleration is valid).
    pub fn new(config: Lz4Config) -> Self {
        Lz4Codec {
            config,
            acceleration: config.acceleration.unwrap_or(1).max(1),
        }
    }

    /// The configuration.
    pub fn config(&self) -> Lz4Config {
        self.config
    }
}

/// Builds `numcodecs.lz4` from its definition.
pub(crate) fn factory(def: &ExtensionDef, _: &ChunkRepr, _: &CodecRegistry) -> Result<Codec> {
    let config: Lz4Config = def.parse_configuration(ExtensionPoint::Codec)?;
    Ok(Codec::BytesToBytes(Box::new(Lz4Codec::new(config))))
}

/// LZ4's `LZ4_COMPRESSBOUND` plus the header, in `u64`.
fn lz4_bound(n: u64) -> u64 {
    n.saturating_add(n / 255).saturating_add(16 + 4)
}

/// The header's size and the block, after checking the size against `max_decoded`.
fn split(input: &[u8], max_decoded: u64) -> Result<(usize, &[u8])> {
    let Some((header, block)) = input.split_first_chunk::<4>() else {
        return Err(CodecError::Truncated {
            codec: NAME,
            needed: 4,
            got: input.len() as u64,
        });
    };
    let size = u32::from_le_bytes(*header);
    if u64::from(size) > max_decoded {
        return Err(CodecError::ExceedsBound {
            codec: NAME,
            limit: max_decoded,
        });
    }
    if size as usize > MAX_INPUT || block.len() > i32::MAX as usize {
        return Err(CodecError::corrupt(
            NAME,
            format!("the header claims {size} bytes, more than LZ4 blocks hold"),
        ));
    }
    Ok((size as usize, block))
}

/// Decompresses `block` into `out`, which it must fill exactly. LZ4's safe decoder reads only
/// `block` and writes at most `out.len()` bytes whatever the input.
fn decompress(block: &[u8], out: &mut [u8]) -> Result<()> {
    // `split` checked that the size fits in an i32
    let n =
        lz4::block::decompress_to_buffer(block, Some(out.len() as i32), out).map_err(|source| {
            CodecError::Decompress {
                codec: NAME,
                source: source.into(),
            }
        })?;
    if n != out.len() {
        return Err(CodecError::SizeMismatch {
            codec: NAME,
            expected: out.len() as u64,
            got: n as u64,
        });
    }
    Ok(())
}

impl BytesToBytesCodec for Lz4Codec {
    fn name(&self) -> &'static str {
        NAME
    }

    fn to_def(&self) -> ExtensionDef {
        self.config.into()
    }

    fn encoded_size_bound(&self, decoded_bound: u64) -> u64 {
        lz4_bound(decoded_bound)
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        if input.len() > MAX_INPUT {
            return Err(CodecError::Compress {
                codec: NAME,
                reason: format!(
                    "{} bytes is more than LZ4 compresses ({MAX_INPUT})",
                    input.len()
                ),
            });
        }
        let bound =
            lz4::block::compress_bound(input.len()).map_err(|source| CodecError::Compressor {
                codec: NAME,
                source: source.into(),
            })?;
        let mut out = vec![0u8; 4 + bound];
        // the size header (4 bytes, little-endian) then the block, as numcodecs writes them
        let mode = Some(CompressionMode::FAST(self.acceleration));
        let n = lz4::block::compress_to_buffer(input, mode, true, &mut out).map_err(|source| {
            CodecError::Compressor {
                codec: NAME,
                source: source.into(),
            }
        })?;
        out.truncate(n);
        Ok(out)
    }

    fn decode<'a>(&self, input: Decoded<'a>, max_decoded: u64) -> Result<Decoded<'a>> {
        let (size, block) = split(input.as_slice(), max_decoded)?;
        let mut out = AlignedBuffer::zeroed(size);
        decompress(block, &mut out)?;
        Ok(Decoded::Owned(out))
    }

    fn decode_into(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        let (size, block) = split(input, u64::MAX)?;
        if size != out.len() {
            return Err(CodecError::SizeMismatch {
                codec: NAME,
                expected: out.len() as u64,
                got: size as u64,
            });
        }
        decompress(block, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::default_registry;
    use proptest::prelude::*;
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
    fn config_round_trips_and_unknown_fields_are_refused() {
        for json in [
            r#"{"name":"numcodecs.lz4","configuration":{"acceleration":5}}"#,
            r#"{"name":"numcodecs.lz4","configuration":{}}"#,
            r#"{"name":"numcodecs.lz4","configuration":{"acceleration":-3}}"#,
        ] {
            let back = serde_json::to_string(&codec(json).unwrap().to_def()).unwrap();
            assert_eq!(back, json);
        }
        let err = zarr_testkit::report(
            &codec(r#"{"name":"numcodecs.lz4","configuration":{"level":1}}"#).unwrap_err(),
        );
        assert!(err.contains("unknown field `level`"), "{err}");
    }

    #[test]
    fn corrupt_truncated_and_oversized_blocks_are_errors() {
        let c = Lz4Codec::new(Lz4Config::default());
        let data: Vec<u8> = (0..5000u32).map(|i| (i % 17) as u8).collect();
        let enc = c.encode(&data).unwrap();
        assert!(matches!(
            c.decode(Decoded::Borrowed(&enc), 4999),
            Err(CodecError::ExceedsBound { .. })
        ));
        assert!(matches!(
            c.decode_into(&enc, &mut [0u8; 4999]),
            Err(CodecError::SizeMismatch { .. })
        ));
        assert!(matches!(
            c.decode(Decoded::Borrowed(&enc[..3]), 5000),
            Err(CodecError::Truncated { .. })
        ));
        for cut in [4, 5, enc.len() / 2, enc.len() - 1] {
            assert!(c.decode(Decoded::Borrowed(&enc[..cut]), 5000).is_err());
        }
        // a header claiming 4 GiB is refused before allocating
        let mut bomb = enc.clone();
        bomb[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            c.decode(Decoded::Borrowed(&bomb), 1 << 20),
            Err(CodecError::ExceedsBound { .. })
        ));
        // a header claiming more than the block holds
        let mut lie = enc.clone();
        lie[..4].copy_from_slice(&6000u32.to_le_bytes());
        assert!(c.decode(Decoded::Borrowed(&lie), 10_000).is_err());
        let mut trailing = enc.clone();
        trailing.push(0);
        assert!(c.decode(Decoded::Borrowed(&trailing), 10_000).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn round_trip(data in prop::collection::vec(0u8..5, 0..3000), acceleration in -2i32..20) {
            let c = Lz4Codec::new(Lz4Config { acceleration: Some(acceleration) });
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
