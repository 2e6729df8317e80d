//! The `gzip` codec (bytes -> bytes): DEFLATE in the gzip format (RFC 1952).
//!
//! Name: `gzip`. Configuration: `level`, 0 to 9 (required, as in the spec and zarr-python). See the
//! [Zarr v3 spec](https://zarr-specs.readthedocs.io/en/latest/v3/codecs/gzip/index.html).
//!
//! Encoding writes one gzip member with the header zarr-python (numcodecs, Python's `gzip`)
//! writes, except that the modification time is 0 so that output is reproducible. Decoding
//! reads gzip (one or more members, checking each member's CRC-32 and length) and, for
//! writers that used zlib framing instead (RFC 1950), zlib streams; trailing bytes are an
//! error. Decoding never produces more than its bound.
//!
//! ```
//! use zarr_codecs::{default_registry, ChunkRepr, CodecChain, EncodeOptions};
//! use zarr_meta::{DataType, FillValue};
//!
//! let repr = ChunkRepr::new(vec![100], DataType::Int16, FillValue::zero(DataType::Int16));
//! let json = r#"[{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 5}}]"#;
//! let chain = CodecChain::from_json(json, &repr, &default_registry())?;
//! let chunk = vec![1u8; 200];
//! let encoded = chain.encode(&chunk, EncodeOptions::WRITE_EMPTY)?.ok_or("not stored")?;
//! assert_eq!(&encoded[..2], &[0x1f, 0x8b]);
//! assert_eq!(chain.decode(&encoded)?.as_bytes(), &chunk[..]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::io::{self, Read, Write};

use flate2::bufread::{MultiGzDecoder, ZlibDecoder};
use flate2::{Compression, GzBuilder};
use serde::{Deserialize, Serialize};
use zarr_meta::{ExtensionDef, ExtensionPoint};

use crate::codec::{BytesToBytesCodec, Codec, Decoded};
use crate::error::Result;
use crate::registry::CodecRegistry;
use crate::repr::ChunkRepr;
use crate::stream;

/// The codec's name.
pub const NAME: &str = "gzip";

fn default_level() -> u32 {
    5
}

/// The configuration of `gzip`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GzipConfig {
    /// The compression level, 0 (stored) to 9 (best).
    pub level: u32,
}

crate::config::codec_def!(GzipConfig => NAME);

impl Default for GzipConfig {
    fn default() -> Self {
        GzipConfig {
            level: default_level(),
        }
    }
}

/// The `gzip` codec.
#[derive(Debug, Clone, Copy)]
pub struct GzipCodec {
    config: GzipConfig,
}

impl GzipCodec {
    /// The codec with `config`.
    ///
    /// # Errors
    /// [`zarr_meta::MetaError::InvalidConfiguration`] for a level above 9.
    pub fn new(config: GzipConfig) -> Result<Self> {
        if config.level > 9 {
            return Err(ExtensionDef::new(NAME)
                .invalid_configuration(
                    ExtensionPoint::Codec,
                    format!("level {} is outside 0..=9", config.level),
                )
                .into());
        }
        Ok(GzipCodec { config })
    }

    /// The configuration.
    pub fn config(&self) -> GzipConfig {
        self.config
    }
}

/// Builds `gzip` from its definition.
pub(crate) fn factory(def: &ExtensionDef, _: &ChunkRepr, _: &CodecRegistry) -> Result<Codec> {
    let config: GzipConfig = def.parse_configuration(ExtensionPoint::Codec)?;
    Ok(Codec::BytesToBytes(Box::new(GzipCodec::new(config)?)))
}

/// The worst-case gzip size of `n` bytes (zlib's `compressBound` plus the gzip wrapper).
fn gzip_bound(n: u64) -> u64 {
    n.saturating_add(n >> 12)
        .saturating_add(n >> 14)
        .saturating_add(n >> 25)
        .saturating_add(13 + 18)
}

fn is_gzip(input: &[u8]) -> bool {
    input.starts_with(&[0x1f, 0x8b])
}

/// A decoder of either framing over `input`.
enum Inflater<'a> {
    Gzip(MultiGzDecoder<&'a [u8]>),
    Zlib(ZlibDecoder<&'a [u8]>),
}

impl<'a> Inflater<'a> {
    fn new(input: &'a [u8]) -> Self {
        if is_gzip(input) {
            Inflater::Gzip(MultiGzDecoder::new(input))
        } else {
            Inflater::Zlib(ZlibDecoder::new(input))
        }
    }

    /// The input bytes after the end of a zlib stream (a gzip decoder reads members to the
    /// end of its input, refusing what is not one).
    fn unread(&self) -> usize {
        match self {
            Inflater::Gzip(_) => 0,
            Inflater::Zlib(d) => d.get_ref().len(),
        }
    }
}

impl Read for Inflater<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Inflater::Gzip(d) => d.read(buf),
            Inflater::Zlib(d) => d.read(buf),
        }
    }
}

impl BytesToBytesCodec for GzipCodec {
    fn name(&self) -> &'static str {
        NAME
    }

    fn to_def(&self) -> ExtensionDef {
        self.config.into()
    }

    fn encoded_size_bound(&self, decoded_bound: u64) -> u64 {
        gzip_bound(decoded_bound)
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        stream::compress(NAME, gzip_bound(input.len() as u64), |out| {
            let mut encoder = GzBuilder::new()
                .mtime(0)
                .write(out, Compression::new(self.config.level));
            encoder.write_all(input)?;
            encoder.finish()
        })
    }

    fn decode<'a>(&self, input: Decoded<'a>, max_decoded: u64) -> Result<Decoded<'a>> {
        let input = input.as_slice();
        // a single gzip member states its length (mod 2^32) in its last four bytes: a hint
        // for the first allocation, never trusted beyond the bound
        let hint = match input.len() {
            n if is_gzip(input) && n >= 18 => {
                let t = &input[n - 4..];
                u32::from_le_bytes([t[0], t[1], t[2], t[3]]) as usize
            }
            n => n.saturating_mul(4),
        };
        let buf = stream::decode(
            NAME,
            Inflater::new(input),
            Inflater::unread,
            hint,
            max_decoded,
        )?;
        Ok(Decoded::Owned(buf))
    }

    fn decode_into(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        stream::decode_into(NAME, Inflater::new(input), Inflater::unread, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::CodecError;
    use crate::registry::default_registry;
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
    fn config() {
        let json = r#"{"name":"gzip","configuration":{"level":1}}"#;
        assert_eq!(
            serde_json::to_string(&codec(json).unwrap().to_def()).unwrap(),
            json
        );
        assert!(codec(r#"{"name":"gzip","configuration":{"level":10}}"#).is_err());
        assert!(codec(r#"{"name":"gzip","configuration":{"level":-1}}"#).is_err());
        assert!(codec(r#"{"name":"gzip","configuration":{"level":1,"x":1}}"#).is_err());
        assert!(codec(r#"{"name":"gzip","configuration":{}}"#).is_err());
        assert!(codec(r#"{"name":"gzip"}"#).is_err());
    }

    #[test]
    fn header_matches_python_gzip_with_mtime_zero() {
        let enc = GzipCodec::new(GzipConfig { level: 5 })
            .unwrap()
            .encode(b"abc")
            .unwrap();
        assert_eq!(&enc[..10], &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255]);
    }

    #[test]
    fn reads_zlib_framing_and_refuses_garbage() {
        let c = GzipCodec::new(GzipConfig::default()).unwrap();
        let data: Vec<u8> = (0..5000u32).map(|i| (i % 7) as u8).collect();
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), Compression::new(3));
        z.write_all(&data).unwrap();
        let zlib = z.finish().unwrap();
        assert_eq!(
            c.decode(Decoded::Borrowed(&zlib), 5000).unwrap().as_slice(),
            &data[..]
        );
        let mut out = vec![0u8; 5000];
        c.decode_into(&zlib, &mut out).unwrap();
        assert_eq!(out, data);
        let mut trailing = zlib.clone();
        trailing.push(0);
        assert!(c.decode(Decoded::Borrowed(&trailing), 5000).is_err());
        assert!(c.decode_into(&trailing, &mut out).is_err());

        let gz = c.encode(&data).unwrap();
        // bound
        assert!(matches!(
            c.decode(Decoded::Borrowed(&gz), 4999),
            Err(CodecError::ExceedsBound { .. })
        ));
        let mut small = vec![0u8; 4999];
        assert!(matches!(
            c.decode_into(&gz, &mut small),
            Err(CodecError::ExceedsBound { .. })
        ));
        let mut big = vec![0u8; 5001];
        assert!(matches!(
            c.decode_into(&gz, &mut big),
            Err(CodecError::SizeMismatch { .. })
        ));
        // truncated, garbage appended, bad trailer
        assert!(c
            .decode(Decoded::Borrowed(&gz[..gz.len() - 1]), 5000)
            .is_err());
        let mut g = gz.clone();
        g.extend_from_slice(b"junk");
        assert!(c.decode(Decoded::Borrowed(&g), 5000).is_err());
        let mut g = gz.clone();
        let n = g.len();
        g[n - 6] ^= 0xff; // the CRC
        assert!(c.decode(Decoded::Borrowed(&g), 5000).is_err());
        // two members read as their concatenation
        let two = [gz.clone(), gz.clone()].concat();
        assert_eq!(
            c.decode(Decoded::Borrowed(&two), 10_000).unwrap().len(),
            10_000
        );
        // a lying length hint does not defeat the bound
        let mut lie = gz.clone();
        lie[n - 4..].copy_from_slice(&1u32.to_le_bytes());
        assert!(c.decode(Decoded::Borrowed(&lie), 100).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn round_trip(data in prop::collection::vec(0u8..5, 0..3000), level in 0u32..10) {
            let c = GzipCodec::new(GzipConfig { level }).unwrap();
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
