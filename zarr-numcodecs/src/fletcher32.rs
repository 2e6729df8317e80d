//! `numcodecs.fletcher32` (bytes -> bytes): the Fletcher-32 checksum of HDF5 and netCDF-4,
//! appended to the data.
//!
//! Name: `numcodecs.fletcher32` (Zarr v2: `{"id": "fletcher32"}`). No configuration (an empty
//! object is accepted). The checksum is HDF5's `H5_checksum_fletcher32`, which numcodecs
//! reproduces: the data read as big-endian 16-bit words (an odd last byte as the high byte of
//! a word), both sums folded to 16 bits every 360 words, `sum2 << 16 | sum1`. It is stored
//! after the data as 4 little-endian bytes; decoding checks and strips it, and a mismatch is an
//! error.
//!
//! ```
//! use zarr_codecs::{ChunkRepr, CodecChain, EncodeOptions};
//! use zarr_numcodecs::default_registry;
//! use zarr_meta::{DataType, FillValue};
//!
//! let repr = ChunkRepr::new(vec![4], DataType::UInt8, FillValue::zero(DataType::UInt8));
//! let json = r#"[{"name": "bytes"}, {"name": "numcodecs.fletcher32", "configuration": {}}]"#;
//! let chain = CodecChain::from_json(json, &repr, &default_registry())?;
//! let stored = chain.encode(&[1, 2, 3, 4], EncodeOptions::WRITE_EMPTY)?.ok_or("skipped")?;
//! assert_eq!(stored, [1, 2, 3, 4, 0x06, 0x04, 0x08, 0x05]);
//! assert_eq!(chain.decode(&stored)?.as_bytes(), &[1, 2, 3, 4]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use serde::{Deserialize, Serialize};
use zarr_meta::{ExtensionDef, ExtensionPoint};

use zarr_codecs::ChunkRepr;
use zarr_codecs::CodecRegistry;
use zarr_codecs::{BytesToBytesCodec, Codec, Decoded};
use zarr_codecs::{CodecError, Result};

/// The codec's name.
pub const NAME: &str = "numcodecs.fletcher32";

/// The configuration of `numcodecs.fletcher32`: empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fletcher32Config {}

crate::config::codec_def!(Fletcher32Config => NAME);

/// The `numcodecs.fletcher32` codec.
#[derive(Debug, Clone, Copy, Default)]
pub struct Fletcher32Codec;

/// Builds `numcodecs.fletcher32` from its definition.
pub(crate) fn factory(def: &ExtensionDef, _: &ChunkRepr, _: &CodecRegistry) -> Result<Codec> {
    let _: Fletcher32Config = def.parse_configuration(ExtensionPoint::Codec)?;
    Ok(Codec::BytesToBytes(Box::new(Fletcher32Codec)))
}

/// HDF5's Fletcher-32 of `data`.
pub fn fletcher32(data: &[u8]) -> u32 {
    let fold = |s: u32| (s & 0xffff) + (s >> 16);
    let (mut sum1, mut sum2) = (0u32, 0u32);
    let whole = data.len() / 2 * 2;
    // 360 words keep both sums below 2^32 between folds (wrapping as C's would, regardless)
    for block in data[..whole].chunks(720) {
        for w in block.chunks_exact(2) {
            sum1 = sum1.wrapping_add(u32::from(w[0]) << 8 | u32::from(w[1]));
            sum2 = sum2.wrapping_add(sum1);
        }
        sum1 = fold(sum1);
        sum2 = fold(sum2);
    }
    if let Some(&last) = data.get(whole) {
        sum1 += u32::from(last) << 8;
        sum2 += sum1;
        sum1 = fold(sum1);
        sum2 = fold(sum2);
    }
    sum1 = fold(sum1);
    sum2 = fold(sum2);
    sum2 << 16 | sum1
}

impl Fletcher32Codec {
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
        let computed = fletcher32(payload);
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

impl BytesToBytesCodec for Fletcher32Codec {
    fn name(&self) -> &'static str {
        NAME
    }

    fn to_def(&self) -> ExtensionDef {
        Fletcher32Config {}.into()
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
        let sum = fletcher32(&input);
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
    use crate::default_registry;
    use proptest::prelude::*;
    use zarr_meta::{DataType, FillValue};

    /// HDF5's algorithm as written there: 360-word blocks over a running count.
    fn reference(data: &[u8]) -> u32 {
        let (mut sum1, mut sum2) = (0u32, 0u32);
        let mut len = data.len() / 2;
        let mut i = 0;
        while len > 0 {
            let mut tlen = len.min(360);
            len -= tlen;
            while tlen > 0 {
                sum1 += (u32::from(data[i]) << 8) | u32::from(data[i + 1]);
                i += 2;
                sum2 += sum1;
                tlen -= 1;
            }
            sum1 = (sum1 & 0xffff) + (sum1 >> 16);
            sum2 = (sum2 & 0xffff) + (sum2 >> 16);
        }
        if data.len() % 2 == 1 {
            sum1 += u32::from(data[i]) << 8;
            sum2 += sum1;
            sum1 = (sum1 & 0xffff) + (sum1 >> 16);
            sum2 = (sum2 & 0xffff) + (sum2 >> 16);
        }
        sum1 = (sum1 & 0xffff) + (sum1 >> 16);
        sum2 = (sum2 & 0xffff) + (sum2 >> 16);
        (sum2 << 16) | sum1
    }

    #[test]
    fn config_and_errors() {
        let repr = ChunkRepr::new(vec![1], DataType::UInt8, FillValue::zero(DataType::UInt8));
        let reg = default_registry();
        for json in [
            r#"{"name":"numcodecs.fletcher32"}"#,
            r#"{"name":"numcodecs.fletcher32","configuration":{}}"#,
        ] {
            let def: ExtensionDef = serde_json::from_str(json).unwrap();
            let c = factory(&def, &repr, &reg).unwrap();
            assert_eq!(
                serde_json::to_string(&c.to_def()).unwrap(),
                r#"{"name":"numcodecs.fletcher32","configuration":{}}"#
            );
        }
        let def: ExtensionDef =
            serde_json::from_str(r#"{"name":"numcodecs.fletcher32","configuration":{"x":1}}"#)
                .unwrap();
        assert!(factory(&def, &repr, &reg).is_err());

        let c = Fletcher32Codec;
        assert!(matches!(
            c.decode(Decoded::Borrowed(&[1, 2]), 10),
            Err(CodecError::Truncated { .. })
        ));
        let enc = c.encode(&[5; 10]).unwrap();
        assert!(matches!(
            c.decode(Decoded::Borrowed(&enc), 9),
            Err(CodecError::ExceedsBound { .. })
        ));
        let err = c.decode(Decoded::Borrowed(&enc[1..]), 100).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("numcodecs.fletcher32 checksum mismatch"),
            "{err}"
        );
    }

    proptest! {
        #[test]
        fn matches_hdf5_and_round_trips(data in prop::collection::vec(any::<u8>(), 0..2000)) {
            prop_assert_eq!(fletcher32(&data), reference(&data));
            let enc = Fletcher32Codec.encode(&data).unwrap();
            let dec = Fletcher32Codec.decode(Decoded::Borrowed(&enc), data.len() as u64).unwrap();
            prop_assert_eq!(dec.as_slice(), &data[..]);
        }
    }

    #[test]
    fn large_sums_fold_without_overflow() {
        let data = vec![0xffu8; 1 << 16];
        assert_eq!(fletcher32(&data), reference(&data));
        let mut bad = Fletcher32Codec.encode(&data).unwrap();
        bad[100] = 0;
        assert!(Fletcher32Codec
            .decode(Decoded::Borrowed(&bad), 1 << 20)
            .is_err());
    }
}
