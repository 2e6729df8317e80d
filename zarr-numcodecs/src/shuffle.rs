//! `numcodecs.shuffle` (bytes -> bytes): groups the bytes of the elements by significance.
//!
//! Name: `numcodecs.shuffle` (Zarr v2: `{"id": "shuffle"}`). Configuration: numcodecs'
//! `elementsize`, the element size in bytes. numcodecs' default is 4; zarr-python fills it in
//! with the item size of the array's data type when it is absent, and so does this codec (the
//! element size of the representation it sees). Of `n` elements of `k` bytes, byte `b` of
//! element `i` goes to position `b * n + i` (numcodecs' `_doShuffle`, the same as blosc's byte
//! shuffle); decoding puts it back. An element size of 0 or 1 copies the bytes; an input that
//! is not a whole number of elements is an error, as in numcodecs.
//!
//! ```
//! use zarr_codecs::{ChunkRepr, CodecChain, EncodeOptions};
//! use zarr_numcodecs::default_registry;
//! use zarr_meta::{DataType, FillValue};
//!
//! let repr = ChunkRepr::new(vec![3], DataType::UInt16, FillValue::zero(DataType::UInt16));
//! let json = r#"[{"name": "bytes", "configuration": {"endian": "little"}},
//!                {"name": "numcodecs.shuffle", "configuration": {"elementsize": 2}}]"#;
//! let chain = CodecChain::from_json(json, &repr, &default_registry())?;
//! let chunk: Vec<u8> = [0x0102u16, 0x0304, 0x0506].iter().flat_map(|v| v.to_ne_bytes()).collect();
//! let stored = chain.encode(&chunk, EncodeOptions::WRITE_EMPTY)?.ok_or("skipped")?;
//! assert_eq!(stored, [2, 4, 6, 1, 3, 5]);
//! assert_eq!(chain.decode(&stored)?.as_bytes(), &chunk[..]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use serde::{Deserialize, Serialize};
use zarr_meta::{ExtensionDef, ExtensionPoint};

use zarr_codecs::byteshuffle::unshuffle;
use zarr_codecs::AlignedBuffer;
use zarr_codecs::ChunkRepr;
use zarr_codecs::CodecRegistry;
use zarr_codecs::{BytesToBytesCodec, Codec, Decoded};
use zarr_codecs::{CodecError, Result};

/// The codec's name.
pub const NAME: &str = "numcodecs.shuffle";

/// The configuration of `numcodecs.shuffle`: numcodecs' `Shuffle(elementsize=4)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShuffleConfig {
    /// The element size in bytes; when absent, that of the data type (as zarr-python fills
    /// it in).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elementsize: Option<u64>,
}

crate::config::codec_def!(ShuffleConfig => NAME);

/// The `numcodecs.shuffle` codec.
#[derive(Debug, Clone, Copy)]
pub struct ShuffleCodec {
    config: ShuffleConfig,
    elementsize: usize,
}

impl ShuffleCodec {
    /// The codec with `config`, for chunks of `repr` (whose element size stands in for a
    /// missing `elementsize`).
    ///
    /// # Errors
    /// [`zarr_meta::MetaError::InvalidConfiguration`] for an element size that does not fit
    /// in memory.
    pub fn new(config: ShuffleConfig, repr: &ChunkRepr) -> Result<Self> {
        let elementsize = match config.elementsize {
            None => repr.element_size(),
            Some(n) => usize::try_from(n)
                .map_err(|_| super::invalid(NAME, format!("elementsize {n} is too large")))?,
        };
        Ok(ShuffleCodec {
            config: ShuffleConfig {
                elementsize: Some(elementsize as u64),
            },
            elementsize,
        })
    }

    /// The configuration, with the element size filled in.
    pub fn config(&self) -> ShuffleConfig {
        self.config
    }

    fn check(&self, input: &[u8]) -> Result<()> {
        if self.elementsize > 1 && !input.len().is_multiple_of(self.elementsize) {
            return Err(CodecError::corrupt(
                NAME,
                format!(
                    "{} bytes are not a whole number of {}-byte elements",
                    input.len(),
                    self.elementsize
                ),
            ));
        }
        Ok(())
    }
}

/// Builds `numcodecs.shuffle` from its definition.
pub(crate) fn factory(def: &ExtensionDef, repr: &ChunkRepr, _: &CodecRegistry) -> Result<Codec> {
    let config: ShuffleConfig = def.parse_configuration(ExtensionPoint::Codec)?;
    Ok(Codec::BytesToBytes(Box::new(ShuffleCodec::new(
        config, repr,
    )?)))
}

/// Byte `b` of element `i` to `b * n + i`.
fn shuffle(src: &[u8], dst: &mut [u8], k: usize) {
    let n = src.len() / k;
    for (b, plane) in dst.chunks_exact_mut(n.max(1)).take(k).enumerate() {
        for (i, d) in plane.iter_mut().enumerate() {
            *d = src[i * k + b];
        }
    }
}

impl BytesToBytesCodec for ShuffleCodec {
    fn name(&self) -> &'static str {
        NAME
    }

    fn to_def(&self) -> ExtensionDef {
        self.config.into()
    }

    fn encoded_size_bound(&self, decoded_bound: u64) -> u64 {
        decoded_bound
    }

    fn fixed_encoded_size(&self, decoded_len: u64) -> Option<u64> {
        Some(decoded_len)
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        self.check(input)?;
        if self.elementsize <= 1 {
            return Ok(input.to_vec());
        }
        let mut out = vec![0u8; input.len()];
        shuffle(input, &mut out, self.elementsize);
        Ok(out)
    }

    fn decode<'a>(&self, input: Decoded<'a>, max_decoded: u64) -> Result<Decoded<'a>> {
        let src = input.as_slice();
        if src.len() as u64 > max_decoded {
            return Err(CodecError::ExceedsBound {
                codec: NAME,
                limit: max_decoded,
            });
        }
        self.check(src)?;
        if self.elementsize <= 1 {
            return Ok(input);
        }
        let mut out = AlignedBuffer::zeroed(src.len());
        unshuffle(src, self.elementsize, &mut out);
        Ok(Decoded::Owned(out))
    }

    fn decode_into(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        if input.len() != out.len() {
            return Err(CodecError::SizeMismatch {
                codec: NAME,
                expected: out.len() as u64,
                got: input.len() as u64,
            });
        }
        self.check(input)?;
        if self.elementsize <= 1 {
            out.copy_from_slice(input);
        } else {
            unshuffle(input, self.elementsize, out);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::default_registry;
    use proptest::prelude::*;
    use zarr_meta::{DataType, FillValue};

    fn repr() -> ChunkRepr {
        ChunkRepr::new(
            vec![1],
            DataType::Float64,
            FillValue::zero(DataType::Float64),
        )
    }

    fn codec(json: &str) -> Result<Codec> {
        factory(
            &serde_json::from_str(json).unwrap(),
            &repr(),
            &default_registry(),
        )
    }

    #[test]
    fn config_round_trips_and_is_filled_in() {
        let json = r#"{"name":"numcodecs.shuffle","configuration":{"elementsize":4}}"#;
        let back = serde_json::to_string(&codec(json).unwrap().to_def()).unwrap();
        assert_eq!(back, json);
        // zarr-python fills in the data type's item size
        let c = codec(r#"{"name":"numcodecs.shuffle","configuration":{}}"#).unwrap();
        assert_eq!(
            serde_json::to_string(&c.to_def()).unwrap(),
            r#"{"name":"numcodecs.shuffle","configuration":{"elementsize":8}}"#
        );
        assert!(
            codec(r#"{"name":"numcodecs.shuffle","configuration":{"elementsize":-1}}"#).is_err()
        );
        assert!(codec(r#"{"name":"numcodecs.shuffle","configuration":{"typesize":4}}"#).is_err());
    }

    #[test]
    fn partial_elements_are_refused() {
        let c = ShuffleCodec::new(
            ShuffleConfig {
                elementsize: Some(4),
            },
            &repr(),
        )
        .unwrap();
        assert!(c.encode(&[1, 2, 3, 4, 5]).is_err());
        assert!(matches!(
            c.decode(Decoded::Borrowed(&[1, 2, 3, 4, 5]), 100),
            Err(CodecError::Corrupt { .. })
        ));
        assert!(matches!(
            c.decode(Decoded::Borrowed(&[1, 2, 3, 4]), 3),
            Err(CodecError::ExceedsBound { .. })
        ));
        assert!(matches!(
            c.decode_into(&[1, 2, 3, 4], &mut [0; 8]),
            Err(CodecError::SizeMismatch { .. })
        ));
    }

    proptest! {
        #[test]
        fn round_trip(elements in prop::collection::vec(any::<u8>(), 0..400), k in 0u64..17) {
            let k1 = k.max(1) as usize;
            let data = &elements[..elements.len() / k1 * k1];
            let c = ShuffleCodec::new(ShuffleConfig { elementsize: Some(k) }, &repr()).unwrap();
            let enc = c.encode(data).unwrap();
            if k > 1 {
                let n = data.len() / k as usize;
                for (i, e) in data.chunks_exact(k as usize).enumerate() {
                    for (b, &v) in e.iter().enumerate() {
                        prop_assert_eq!(enc[b * n + i], v);
                    }
                }
            }
            let dec = c.decode(Decoded::Borrowed(&enc), data.len() as u64).unwrap();
            prop_assert_eq!(dec.as_slice(), data);
            let mut out = vec![0u8; data.len()];
            c.decode_into(&enc, &mut out).unwrap();
            prop_assert_eq!(out, data);
        }
    }
}
