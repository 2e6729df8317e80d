//! `numcodecs.crc32` and `numcodecs.adler32` (bytes -> bytes): numcodecs' `Checksum32` codecs,
//! a 32-bit checksum stored beside the data.
//!
//! Names: `numcodecs.crc32` (CRC-32, zlib's `crc32`) and `numcodecs.adler32` (Adler-32, zlib's
//! `adler32`) (Zarr v2: `{"id": "crc32"}`, `{"id": "adler32"}`). Configuration: numcodecs'
//! `location`, `"start"` (the default for both, as numcodecs 0.16 writes them) or `"end"`:
//! where the 4-byte little-endian checksum of the data goes. Decoding checks and strips it; a
//! mismatch is an error. The two share one implementation, as in numcodecs.
//!
//! ```
//! use zarr_codecs::{ChunkRepr, CodecChain, EncodeOptions};
//! use zarr_numcodecs::default_registry;
//! use zarr_meta::{DataType, FillValue};
//!
//! let repr = ChunkRepr::new(vec![9], DataType::UInt8, FillValue::zero(DataType::UInt8));
//! let json = r#"[{"name": "bytes"}, {"name": "numcodecs.crc32", "configuration": {}}]"#;
//! let chain = CodecChain::from_json(json, &repr, &default_registry())?;
//! let stored = chain.encode(b"123456789", EncodeOptions::WRITE_EMPTY)?.ok_or("skipped")?;
//! assert_eq!(&stored[..4], &0xcbf4_3926u32.to_le_bytes()); // CRC-32's check value, first
//! assert_eq!(chain.decode(&stored)?.as_bytes(), b"123456789");
//! let mut corrupt = stored.clone();
//! corrupt[5] ^= 1;
//! assert!(chain.decode(&corrupt).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use serde::{Deserialize, Serialize};
use zarr_meta::{ExtensionDef, ExtensionPoint};

use zarr_codecs::ChunkRepr;
use zarr_codecs::CodecRegistry;
use zarr_codecs::{BytesToBytesCodec, Codec, Decoded};
use zarr_codecs::{CodecError, Result};

/// The name of the CRC-32 codec.
pub const CRC32_NAME: &str = "numcodecs.crc32";
/// The name of the Adler-32 codec.
pub const ADLER32_NAME: &str = "numcodecs.adler32";

/// Where the checksum goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Location {
    /// Before the data (numcodecs' default for `crc32` and `adler32`).
    #[default]
    Start,
    /// After the data.
    End,
}

/// The configuration of `numcodecs.<id>` (`crc32` or `adler32`): a type each, so that each
/// converts into its own codec definition.
macro_rules! checksum32_config {
    ($($(#[$doc:meta])* $feature:literal $config:ident => $name:ident;)*) => {$(
        $(#[$doc])*
        #[cfg(feature = $feature)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $config {
            /// Where the checksum goes; `"start"` when absent.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub location: Option<Location>,
        }

        #[cfg(feature = $feature)]
        crate::config::codec_def!($config => $name);
    )*};
}

checksum32_config! {
    /// The configuration of `numcodecs.crc32`: numcodecs' `CRC32(location=None)`.
    "crc32" Crc32Config => CRC32_NAME;
    /// The configuration of `numcodecs.adler32`: numcodecs' `Adler32(location=None)`.
    "adler32" Adler32Config => ADLER32_NAME;
}

/// The checksum a [`Checksum32Codec`] stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checksum32 {
    /// CRC-32 (zlib's `crc32`, the polynomial of gzip and PNG).
    #[cfg(feature = "crc32")]
    Crc32,
    /// Adler-32 (zlib's `adler32`).
    #[cfg(feature = "adler32")]
    Adler32,
}

impl Checksum32 {
    /// The codec's name.
    pub fn name(self) -> &'static str {
        match self {
            #[cfg(feature = "crc32")]
            Checksum32::Crc32 => CRC32_NAME,
            #[cfg(feature = "adler32")]
            Checksum32::Adler32 => ADLER32_NAME,
        }
    }

    /// The checksum of `data`.
    pub fn compute(self, data: &[u8]) -> u32 {
        match self {
            #[cfg(feature = "crc32")]
            Checksum32::Crc32 => crc32fast::hash(data),
            #[cfg(feature = "adler32")]
            Checksum32::Adler32 => {
                let mut a = adler2::Adler32::new();
                a.write_slice(data);
                a.checksum()
            }
        }
    }
}

/// `numcodecs.crc32` or `numcodecs.adler32`.
#[derive(Debug, Clone, Copy)]
pub struct Checksum32Codec {
    kind: Checksum32,
    location: Option<Location>,
}

impl Checksum32Codec {
    /// The codec storing `kind` at `location` (`None`: numcodecs' default, the start).
    pub fn new(kind: Checksum32, location: Option<Location>) -> Self {
        Checksum32Codec { kind, location }
    }

    /// Where the checksum goes, as configured (`None`: the start).
    pub fn location(&self) -> Option<Location> {
        self.location
    }

    /// Checks the checksum; returns where the payload lies in `input`.
    fn verify(&self, input: &[u8]) -> Result<std::ops::Range<usize>> {
        let name = self.kind.name();
        let Some(n) = input.len().checked_sub(4) else {
            return Err(CodecError::Truncated {
                codec: name,
                needed: 4,
                got: input.len() as u64,
            });
        };
        let (sum, payload) = match self.location.unwrap_or_default() {
            Location::Start => (&input[..4], 4..input.len()),
            Location::End => (&input[n..], 0..n),
        };
        let stored = u32::from_le_bytes([sum[0], sum[1], sum[2], sum[3]]);
        let computed = self.kind.compute(&input[payload.clone()]);
        if stored != computed {
            return Err(CodecError::ChecksumMismatch {
                codec: name,
                stored,
                computed,
            });
        }
        Ok(payload)
    }
}

fn build(kind: Checksum32, def: &ExtensionDef) -> Result<Codec> {
    let location = match kind {
        #[cfg(feature = "crc32")]
        Checksum32::Crc32 => {
            def.parse_configuration::<Crc32Config>(ExtensionPoint::Codec)?
                .location
        }
        #[cfg(feature = "adler32")]
        Checksum32::Adler32 => {
            def.parse_configuration::<Adler32Config>(ExtensionPoint::Codec)?
                .location
        }
    };
    Ok(Codec::BytesToBytes(Box::new(Checksum32Codec::new(
        kind, location,
    ))))
}

/// Builds `numcodecs.crc32` from its definition.
#[cfg(feature = "crc32")]
pub(crate) fn crc32_factory(def: &ExtensionDef, _: &ChunkRepr, _: &CodecRegistry) -> Result<Codec> {
    build(Checksum32::Crc32, def)
}

/// Builds `numcodecs.adler32` from its definition.
#[cfg(feature = "adler32")]
pub(crate) fn adler32_factory(
    def: &ExtensionDef,
    _: &ChunkRepr,
    _: &CodecRegistry,
) -> Result<Codec> {
    build(Checksum32::Adler32, def)
}

impl BytesToBytesCodec for Checksum32Codec {
    fn name(&self) -> &'static str {
        self.kind.name()
    }

    fn to_def(&self) -> ExtensionDef {
        let location = self.location;
        match self.kind {
            #[cfg(feature = "crc32")]
            Checksum32::Crc32 => Crc32Config { location }.into(),
            #[cfg(feature = "adler32")]
            Checksum32::Adler32 => Adler32Config { location }.into(),
        }
    }

    fn encoded_size_bound(&self, decoded_bound: u64) -> u64 {
        decoded_bound.saturating_add(4)
    }

    fn fixed_encoded_size(&self, decoded_len: u64) -> Option<u64> {
        decoded_len.checked_add(4)
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        let sum = self.kind.compute(input).to_le_bytes();
        let mut out = Vec::with_capacity(input.len() + 4);
        match self.location.unwrap_or_default() {
            Location::Start => {
                out.extend_from_slice(&sum);
                out.extend_from_slice(input);
            }
            Location::End => {
                out.extend_from_slice(input);
                out.extend_from_slice(&sum);
            }
        }
        Ok(out)
    }

    fn encode_owned(&self, mut input: Vec<u8>) -> Result<Vec<u8>> {
        match self.location.unwrap_or_default() {
            Location::Start => self.encode(&input),
            Location::End => {
                let sum = self.kind.compute(&input);
                input.extend_from_slice(&sum.to_le_bytes());
                Ok(input)
            }
        }
    }

    fn decode<'a>(&self, input: Decoded<'a>, max_decoded: u64) -> Result<Decoded<'a>> {
        let payload = self.verify(input.as_slice())?;
        if payload.len() as u64 > max_decoded {
            return Err(CodecError::ExceedsBound {
                codec: self.kind.name(),
                limit: max_decoded,
            });
        }
        Ok(match input {
            Decoded::Borrowed(b) => Decoded::Borrowed(&b[payload]),
            // the payload moves to the front of the (aligned) buffer
            Decoded::Owned(mut b) => {
                let len = payload.len();
                b.copy_within(payload, 0);
                b.truncate(len);
                Decoded::Owned(b)
            }
        })
    }

    fn decode_into(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        let payload = self.verify(input)?;
        if payload.len() != out.len() {
            return Err(CodecError::SizeMismatch {
                codec: self.kind.name(),
                expected: out.len() as u64,
                got: payload.len() as u64,
            });
        }
        out.copy_from_slice(&input[payload]);
        Ok(())
    }
}

#[cfg(all(test, feature = "crc32", feature = "adler32"))]
mod tests {
    use super::*;
    use crate::default_registry;
    use proptest::prelude::*;
    use zarr_codecs::AlignedBuffer;
    use zarr_meta::{DataType, FillValue};

    fn codec(json: &str) -> Result<Codec> {
        let repr = ChunkRepr::new(vec![1], DataType::UInt8, FillValue::zero(DataType::UInt8));
        let def: ExtensionDef = serde_json::from_str(json).unwrap();
        let registry = default_registry();
        let factory = registry.get(&def.name).unwrap();
        factory.build(&def, &repr, &registry)
    }

    #[test]
    fn config_round_trips_and_known_values() {
        for json in [
            r#"{"name":"numcodecs.crc32","configuration":{}}"#,
            r#"{"name":"numcodecs.crc32","configuration":{"location":"end"}}"#,
            r#"{"name":"numcodecs.adler32","configuration":{"location":"start"}}"#,
        ] {
            let back = serde_json::to_string(&codec(json).unwrap().to_def()).unwrap();
            assert_eq!(back, json);
        }
        for bad in [
            r#"{"name":"numcodecs.crc32","configuration":{"location":"middle"}}"#,
            r#"{"name":"numcodecs.adler32","configuration":{"value":1}}"#,
        ] {
            assert!(codec(bad).is_err(), "{bad}");
        }
        // the check values of CRC-32 and Adler-32
        assert_eq!(Checksum32::Crc32.compute(b"123456789"), 0xcbf4_3926);
        assert_eq!(Checksum32::Adler32.compute(b"123456789"), 0x091e_01de);
        assert_eq!(Checksum32::Adler32.compute(b""), 1);
        let end = Checksum32Codec::new(Checksum32::Adler32, Some(Location::End));
        assert_eq!(
            end.encode(b"123456789").unwrap()[9..],
            0x091e_01deu32.to_le_bytes()
        );
    }

    #[test]
    fn errors() {
        for kind in [Checksum32::Crc32, Checksum32::Adler32] {
            for location in [Location::Start, Location::End] {
                let c = Checksum32Codec::new(kind, Some(location));
                assert!(matches!(
                    c.decode(Decoded::Borrowed(&[1, 2, 3]), 10),
                    Err(CodecError::Truncated { .. })
                ));
                let enc = c.encode(&[5; 10]).unwrap();
                assert!(matches!(
                    c.decode(Decoded::Borrowed(&enc), 9),
                    Err(CodecError::ExceedsBound { .. })
                ));
                assert!(matches!(
                    c.decode_into(&enc, &mut [0u8; 9]),
                    Err(CodecError::SizeMismatch { .. })
                ));
                let err = c.decode(Decoded::Borrowed(&enc[1..]), 100).unwrap_err();
                assert!(
                    err.to_string()
                        .starts_with(&format!("{} checksum mismatch", kind.name())),
                    "{err}"
                );
                // an owned input keeps its buffer
                let owned = Decoded::Owned(AlignedBuffer::from_slice(&enc));
                assert_eq!(c.decode(owned, 10).unwrap().as_slice(), &[5; 10]);
            }
        }
    }

    proptest! {
        #[test]
        fn round_trip_and_every_bit_flip_is_caught(
            data in prop::collection::vec(any::<u8>(), 0..200),
            bit in any::<usize>(),
            adler in any::<bool>(),
            end in any::<bool>(),
        ) {
            let kind = if adler { Checksum32::Adler32 } else { Checksum32::Crc32 };
            let location = Some(if end { Location::End } else { Location::Start });
            let c = Checksum32Codec::new(kind, location);
            let enc = c.encode_owned(data.clone()).unwrap();
            prop_assert_eq!(&enc, &c.encode(&data).unwrap());
            let dec = c.decode(Decoded::Borrowed(&enc), data.len() as u64).unwrap();
            prop_assert_eq!(dec.as_slice(), &data[..]);
            let mut bad = enc.clone();
            let bit = bit % (bad.len() * 8);
            bad[bit / 8] ^= 1 << (bit % 8);
            prop_assert!(c.decode(Decoded::Borrowed(&bad), 1000).is_err());
        }
    }
}
