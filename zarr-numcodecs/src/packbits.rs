//! `numcodecs.packbits` (array -> array): packs booleans into bits.
//!
//! Name: `numcodecs.packbits` (Zarr v2: `{"id": "packbits"}`). No configuration (an empty
//! object is accepted). The chunk must be `bool`; the next codec sees `uint8` data of one axis
//! of `1 + ceil(n / 8)` elements (zarr-python's shape for it). Encoding is numcodecs': a
//! header byte with the number of padding bits in the last byte (0 to 7), then the elements in
//! C order, eight to a byte, the first in the most significant bit (`np.packbits`), the
//! padding bits zero. Decoding checks that the header matches the chunk's element count.
//!
//! ```
//! use zarr_codecs::{ChunkRepr, CodecChain, EncodeOptions};
//! use zarr_numcodecs::default_registry;
//! use zarr_meta::{DataType, FillValue};
//!
//! let repr = ChunkRepr::new(vec![4], DataType::Bool, FillValue::zero(DataType::Bool));
//! let json = r#"[{"name": "numcodecs.packbits", "configuration": {}}, {"name": "bytes"}]"#;
//! let chain = CodecChain::from_json(json, &repr, &default_registry())?;
//! let stored = chain.encode(&[1, 0, 0, 1], EncodeOptions::WRITE_EMPTY)?.ok_or("skipped")?;
//! assert_eq!(stored, [4, 0b1001_0000]);
//! assert_eq!(chain.decode(&stored)?.as_bytes(), &[1, 0, 0, 1]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use serde::{Deserialize, Serialize};
use zarr_meta::{DataType, ExtensionDef, ExtensionPoint, FillValue};

use zarr_codecs::ChunkRepr;
use zarr_codecs::CodecRegistry;
use zarr_codecs::{ArrayToArrayCodec, Codec};
use zarr_codecs::{CodecError, Result};

use super::{check_len, invalid};

/// The codec's name.
pub const NAME: &str = "numcodecs.packbits";

/// The configuration of `numcodecs.packbits`: empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackBitsConfig {}

crate::config::codec_def!(PackBitsConfig => NAME);

/// The `numcodecs.packbits` codec, built for one chunk representation.
#[derive(Debug, Clone)]
pub struct PackBitsCodec {
    decoded: ChunkRepr,
    encoded: ChunkRepr,
    /// The elements of a chunk.
    n: usize,
}

impl PackBitsCodec {
    /// The codec for chunks of `repr`.
    ///
    /// # Errors
    /// [`zarr_meta::MetaError::InvalidConfiguration`] for a chunk that is not `bool`.
    pub fn new(repr: &ChunkRepr) -> Result<Self> {
        if repr.data_type != DataType::Bool {
            return Err(invalid(
                NAME,
                format!("packbits packs bool data, not {}", repr.data_type),
            ));
        }
        let n = repr.validate()?;
        let fill = u8::from(repr.fill_value.as_bytes() != [0]);
        let encoded = ChunkRepr::new(
            vec![1 + n.div_ceil(8) as u64],
            DataType::UInt8,
            FillValue::from_ne_bytes(DataType::UInt8, vec![fill])?,
        );
        Ok(PackBitsCodec {
            decoded: repr.clone(),
            encoded,
            n,
        })
    }
}

/// Builds `numcodecs.packbits` from its definition.
pub(crate) fn factory(def: &ExtensionDef, repr: &ChunkRepr, _: &CodecRegistry) -> Result<Codec> {
    let _: PackBitsConfig = def.parse_configuration(ExtensionPoint::Codec)?;
    Ok(Codec::ArrayToArray(Box::new(PackBitsCodec::new(repr)?)))
}

impl ArrayToArrayCodec for PackBitsCodec {
    fn name(&self) -> &'static str {
        NAME
    }

    fn to_def(&self) -> ExtensionDef {
        PackBitsConfig {}.into()
    }

    fn decoded_repr(&self) -> &ChunkRepr {
        &self.decoded
    }

    fn encoded_repr(&self) -> &ChunkRepr {
        &self.encoded
    }

    fn encode(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        check_len("the input", self.n, input.len())?;
        check_len("the output buffer", 1 + self.n.div_ceil(8), out.len())?;
        out[0] = ((8 - self.n % 8) % 8) as u8;
        for (byte, bits) in out[1..].iter_mut().zip(input.chunks(8)) {
            *byte = bits
                .iter()
                .enumerate()
                .fold(0u8, |b, (k, &v)| b | (u8::from(v != 0) << (7 - k)));
        }
        Ok(())
    }

    fn decode(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        check_len("the input", 1 + self.n.div_ceil(8), input.len())?;
        check_len("the output buffer", self.n, out.len())?;
        let padding = ((8 - self.n % 8) % 8) as u8;
        if input[0] != padding {
            return Err(CodecError::Corrupt {
                codec: NAME,
                reason: format!(
                    "the header says {} padding bits, but a chunk of {} elements has {padding}",
                    input[0], self.n
                ),
            });
        }
        for (bits, &byte) in out.chunks_mut(8).zip(&input[1..]) {
            for (k, v) in bits.iter_mut().enumerate() {
                *v = (byte >> (7 - k)) & 1;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::default_registry;
    use proptest::prelude::*;

    fn repr(n: u64) -> ChunkRepr {
        ChunkRepr::new(vec![n], DataType::Bool, FillValue::zero(DataType::Bool))
    }

    #[test]
    fn config_shape_and_refusals() {
        let reg = default_registry();
        let def: ExtensionDef = serde_json::from_str(r#"{"name":"numcodecs.packbits"}"#).unwrap();
        let c = factory(&def, &repr(13), &reg).unwrap();
        assert_eq!(
            serde_json::to_string(&c.to_def()).unwrap(),
            r#"{"name":"numcodecs.packbits","configuration":{}}"#
        );
        let Codec::ArrayToArray(c) = c else {
            panic!("array -> array")
        };
        assert_eq!(c.encoded_repr().shape, [3]);
        assert_eq!(c.encoded_repr().data_type, DataType::UInt8);
        let bad: ExtensionDef =
            serde_json::from_str(r#"{"name":"numcodecs.packbits","configuration":{"x":1}}"#)
                .unwrap();
        assert!(factory(&bad, &repr(13), &reg).is_err());
        let int = ChunkRepr::new(vec![3], DataType::UInt8, FillValue::zero(DataType::UInt8));
        assert!(factory(&def, &int, &reg).is_err());
        // a true fill value packs to 1
        let t = ChunkRepr::new(
            vec![3],
            DataType::Bool,
            FillValue::from_ne_bytes(DataType::Bool, vec![1]).unwrap(),
        );
        let c = PackBitsCodec::new(&t).unwrap();
        assert_eq!(c.encoded_repr().fill_value.as_bytes(), [1]);
    }

    #[test]
    fn a_wrong_header_is_corrupt() {
        let c = PackBitsCodec::new(&repr(13)).unwrap();
        let mut out = [0u8; 13];
        assert!(matches!(
            c.decode(&[2, 0xff, 0xff], &mut out),
            Err(CodecError::Corrupt { .. })
        ));
        c.decode(&[3, 0xff, 0xf8], &mut out).unwrap();
        assert_eq!(out, [1; 13]);
        assert!(c.decode(&[3, 0xff], &mut out).is_err());
    }

    proptest! {
        #[test]
        fn round_trip(bits in prop::collection::vec(0u8..2, 0..100)) {
            let c = PackBitsCodec::new(&repr(bits.len() as u64)).unwrap();
            let mut enc = vec![0u8; c.encoded_repr().byte_len().unwrap()];
            c.encode(&bits, &mut enc).unwrap();
            prop_assert_eq!(enc[0] as usize, (8 - bits.len() % 8) % 8);
            let mut dec = vec![0u8; bits.len()];
            c.decode(&enc, &mut dec).unwrap();
            prop_assert_eq!(dec, bits);
        }
    }
}
