//! The `crc32c` codec (bytes -> bytes): appends a CRC32C checksum.
//!
//! Name: `crc32c`. No configuration (an empty object is accepted). Encoding appends the
//! 4-byte little-endian CRC32C (Castagnoli) of the data; decoding checks and strips it, and a
//! mismatch is an error. See the
//! [Zarr v3 spec](https://zarr-specs.readthedocs.io/en/latest/v3/codecs/crc32c/index.html).
//!
//! ```
//! use zarr_codecs::{default_registry, ChunkRepr, CodecChain, EncodeOptions};
//! use zarr_meta::{DataType, FillValue};
//!
//! let repr = ChunkRepr::new(vec![3], DataType::UInt8, FillValue::zero(DataType::UInt8));
//! let json = r#"[{"name": "bytes"}, {"name": "crc32c"}]"#;
//! let chain = CodecChain::from_json(json, &repr, &default_registry())?;
//! let encoded = chain.encode(&[1, 2, 3], EncodeOptions::WRITE_EMPTY)?.ok_or("not stored")?;
//! assert_eq!(encoded.len(), 7);
//! assert_eq!(chain.decode(&encoded)?.as_bytes(), &[1, 2, 3]);
//! let mut corrupt = encoded.clone();
//! corrupt[0] ^= 1;
//! assert!(chain.decode(&corrupt).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use serde::{Deserialize, Serialize};
use zarr_meta::{ExtensionDef, ExtensionPoint};

use crate::codec::{BytesToBytesCodec, Codec, Decoded};
use crate::error::{CodecError, Result};
use crate::registry::CodecRegistry;
use crate::repr::ChunkRepr;

/// The codec's name.
pub const NAME: &str = "crc32c";

/// The configuration of `crc32c`: empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Crc32cConfig {}

/// `{"name": "crc32c"}`: the codec has no configuration object to write.
impl From<Crc32cConfig> for ExtensionDef {
    fn from(_: Crc32cConfig) -> Self {
        ExtensionDef::new(NAME)
    }
}

/// The `crc32c` codec.
#[derive(Debug, Clone, Copy, Default)]
pub struct Crc32cCodec;

/// Builds `crc32c` from its definition.
pub(crate) fn factory(def: &ExtensionDef, _: &ChunkRepr, _: &CodecRegistry) -> Result<Codec> {
    let _: Crc32cConfig = def.parse_configuration(ExtensionPoint::Codec)?;
    Ok(Codec::BytesToBytes(Box::new(Crc32cCodec)))
}

impl Crc32cCodec {
    /// Checks the checksum and returns the payload length.
    fn verify(input: &[u8]) -> Result<usize> {
        let Some(n) = input.len().checked_sub(4) else {
            return Err(CodecError::Truncated {
                codec: NAME,
                needed: 4,
                got: input.len() as u64,
            });
        };
        let (payload, sum) = input.split_at(n);
        let stored = u32::from_le_bytes([sum[0], sum[1], sum[2], sum[3]]);
        let computed = ::crc32c::crc32c(payload);
        if stored != computed {
            return Err(CodecError::ChecksumMismatch {
                codec: NAME,
                stored,
                computed,
            });
        }
        Ok(n)
    }
}

impl BytesToBytesCodec for Crc32cCodec {
    fn name(&self) -> &'static str {
        NAME
    }

    fn to_def(&self) -> ExtensionDef {
        Crc32cConfig {}.into()
    }

    fn encoded_size_bound(&self, decoded_bound: u64) -> u64 {
        decoded_bound.saturating_add(4)
    }

    fn fixed_encoded_size(&self, decoded_len: u64) -> Option<u64> {
        decoded_len.checked_add(4)
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(input.len() + 4);
        out.extend_from_slice(input);
        self.encode_owned(out)
    }

    fn encode_owned(&self, mut input: Vec<u8>) -> Result<Vec<u8>> {
        let sum = ::crc32c::crc32c(&input);
        input.extend_from_slice(&sum.to_le_bytes());
        Ok(input)
    }

    fn decode<'a>(&self, input: Decoded<'a>, max_decoded: u64) -> Result<Decoded<'a>> {
        let n = Self::verify(input.as_slice())?;
        if n as u64 > max_decoded {
            return Err(CodecError::ExceedsBound {
                codec: NAME,
                limit: max_decoded,
            });
        }
        Ok(input.truncated(n))
    }

    fn decode_into(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        let n = Self::verify(input)?;
        if n != out.len() {
            return Err(CodecError::SizeMismatch {
                codec: NAME,
                expected: out.len() as u64,
                got: n as u64,
            });
        }
        out.copy_from_slice(&input[..n]);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::default_registry;
    use proptest::prelude::*;
    use zarr_meta::{DataType, FillValue};

    #[test]
    fn config_and_known_value() {
        let repr = ChunkRepr::new(vec![1], DataType::UInt8, FillValue::zero(DataType::UInt8));
        let reg = default_registry();
        for json in [
            r#"{"name":"crc32c"}"#,
            r#"{"name":"crc32c","configuration":{}}"#,
        ] {
            let def: ExtensionDef = serde_json::from_str(json).unwrap();
            let c = factory(&def, &repr, &reg).unwrap();
            assert_eq!(
                serde_json::to_string(&c.to_def()).unwrap(),
                r#"{"name":"crc32c"}"#
            );
        }
        let def: ExtensionDef =
            serde_json::from_str(r#"{"name":"crc32c","configuration":{"x":1}}"#).unwrap();
        assert!(factory(&def, &repr, &reg).is_err());
        // the check value of CRC-32C
        let enc = Crc32cCodec.encode(b"123456789").unwrap();
        assert_eq!(&enc[9..], &0xe306_9283u32.to_le_bytes());
    }

    #[test]
    fn errors() {
        let c = Crc32cCodec;
        assert!(matches!(
            c.decode(Decoded::Borrowed(&[1, 2]), 10),
            Err(CodecError::Truncated { .. })
        ));
        let enc = c.encode(&[5; 10]).unwrap();
        assert!(matches!(
            c.decode(Decoded::Borrowed(&enc), 9),
            Err(CodecError::ExceedsBound { .. })
        ));
        let mut out = [0u8; 9];
        assert!(matches!(
            c.decode_into(&enc, &mut out),
            Err(CodecError::SizeMismatch { .. })
        ));
        let err = c.decode(Decoded::Borrowed(&enc[1..]), 100).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("crc32c checksum mismatch: stored 0x"),
            "{err}"
        );
    }

    proptest! {
        #[test]
        fn round_trip_and_every_bit_flip_is_caught(data in prop::collection::vec(any::<u8>(), 0..200), bit in any::<usize>()) {
            let enc = Crc32cCodec.encode(&data).unwrap();
            let dec = Crc32cCodec.decode(Decoded::Borrowed(&enc), data.len() as u64).unwrap();
            prop_assert_eq!(dec.as_slice(), &data[..]);
            let mut bad = enc.clone();
            let bit = bit % (bad.len() * 8);
            bad[bit / 8] ^= 1 << (bit % 8);
            prop_assert!(Crc32cCodec.decode(Decoded::Borrowed(&bad), 1000).is_err());
        }
    }
}
