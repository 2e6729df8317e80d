//! `numcodecs.jenkins_lookup3` (bytes -> bytes): Bob Jenkins' lookup3 hash as HDF5 computes it
//! (`H5_checksum_lookup3`), appended to the data.
//!
//! Name: `numcodecs.jenkins_lookup3` (Zarr v2: `{"id": "jenkins_lookup3"}`). Configuration:
//! `initval` (the hash's seed, an unsigned 32-bit integer, default 0) and `prefix` (`null`:
//! numcodecs' bytes hashed before the data are not supported, and are refused). The hash of
//! the data is stored after it as 4 little-endian bytes, as numcodecs 0.16.6 writes it;
//! decoding checks and strips it, and a mismatch is an error.
//!
//! ```
//! use zarr_codecs::{ChunkRepr, CodecChain, EncodeOptions};
//! use zarr_numcodecs::default_registry;
//! use zarr_meta::{DataType, FillValue};
//!
//! let repr = ChunkRepr::new(vec![1], DataType::UInt8, FillValue::zero(DataType::UInt8));
//! let json = r#"[{"name": "bytes"}, {"name": "numcodecs.jenkins_lookup3", "configuration": {"initval": 0}}]"#;
//! let chain = CodecChain::from_json(json, &repr, &default_registry())?;
//! let stored = chain.encode(b"a", EncodeOptions::WRITE_EMPTY)?.ok_or("skipped")?;
//! // numcodecs.jenkins.jenkins_lookup3(b"a", 0) == 1490454280
//! assert_eq!(stored, [b'a', 0x08, 0x87, 0xd6, 0x58]);
//! assert_eq!(chain.decode(&stored)?.as_bytes(), b"a");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use serde::{Deserialize, Serialize};
use zarr_meta::{ExtensionDef, ExtensionPoint};

use zarr_codecs::ChunkRepr;
use zarr_codecs::CodecRegistry;
use zarr_codecs::{BytesToBytesCodec, Codec, Decoded};
use zarr_codecs::{CodecError, Result};

/// The codec's name.
pub const NAME: &str = "numcodecs.jenkins_lookup3";

/// The configuration of `numcodecs.jenkins_lookup3`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JenkinsLookup3Config {
    /// The hash's seed (0 when absent; written back as given, as zarr-python does).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initval: Option<u32>,
    /// numcodecs' bytes hashed before the data: only `null` (none) is supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<NoPrefix>,
}

/// An absent `prefix` (JSON `null` parses as `None`; any other value is refused).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum NoPrefix {}

crate::config::codec_def!(JenkinsLookup3Config => NAME);

/// The `numcodecs.jenkins_lookup3` codec.
#[derive(Debug, Clone, Copy, Default)]
pub struct JenkinsLookup3Codec {
    initval: Option<u32>,
}

/// Builds `numcodecs.jenkins_lookup3` from its definition.
pub(crate) fn factory(def: &ExtensionDef, _: &ChunkRepr, _: &CodecRegistry) -> Result<Codec> {
    let c: JenkinsLookup3Config = def.parse_configuration(ExtensionPoint::Codec)?;
    Ok(Codec::BytesToBytes(Box::new(JenkinsLookup3Codec {
        initval: c.initval,
    })))
}

/// HDF5's lookup3 hash of `data` with seed `initval`.
pub fn lookup3(data: &[u8], initval: u32) -> u32 {
    fn mix(a: &mut u32, b: &mut u32, c: &mut u32) {
        *a = a.wrapping_sub(*c);
        *a ^= c.rotate_left(4);
        *c = c.wrapping_add(*b);
        *b = b.wrapping_sub(*a);
        *b ^= a.rotate_left(6);
        *a = a.wrapping_add(*c);
        *c = c.wrapping_sub(*b);
        *c ^= b.rotate_left(8);
        *b = b.wrapping_add(*a);
        *a = a.wrapping_sub(*c);
        *a ^= c.rotate_left(16);
        *c = c.wrapping_add(*b);
        *b = b.wrapping_sub(*a);
        *b ^= a.rotate_left(19);
        *a = a.wrapping_add(*c);
        *c = c.wrapping_sub(*b);
        *c ^= b.rotate_left(4);
        *b = b.wrapping_add(*a);
    }
    fn word(k: &[u8]) -> u32 {
        // the little-endian value of up to 4 bytes (missing high bytes are 0)
        k.iter()
            .enumerate()
            .fold(0u32, |w, (i, &byte)| w | u32::from(byte) << (8 * i))
    }
    // HDF5 adds the length as a 32-bit value (wrapping)
    let init = 0xdead_beef_u32
        .wrapping_add(data.len() as u32)
        .wrapping_add(initval);
    let (mut a, mut b, mut c) = (init, init, init);
    let mut k = data;
    while k.len() > 12 {
        a = a.wrapping_add(word(&k[0..4]));
        b = b.wrapping_add(word(&k[4..8]));
        c = c.wrapping_add(word(&k[8..12]));
        mix(&mut a, &mut b, &mut c);
        k = &k[12..];
    }
    if k.is_empty() {
        return c;
    }
    a = a.wrapping_add(word(&k[..k.len().min(4)]));
    if k.len() > 4 {
        b = b.wrapping_add(word(&k[4..k.len().min(8)]));
    }
    if k.len() > 8 {
        c = c.wrapping_add(word(&k[8..]));
    }
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(14));
    a ^= c;
    a = a.wrapping_sub(c.rotate_left(11));
    b ^= a;
    b = b.wrapping_sub(a.rotate_left(25));
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(16));
    a ^= c;
    a = a.wrapping_sub(c.rotate_left(4));
    b ^= a;
    b = b.wrapping_sub(a.rotate_left(14));
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(24));
    c
}

impl JenkinsLookup3Codec {
    /// Checks the hash and returns the payload length.
    fn verify(&self, input: &[u8]) -> Result<usize> {
        let Some(n) = input.len().checked_sub(4) else {
            return Err(CodecError::Truncated {
                codec: NAME,
                needed: 4,
                got: input.len() as u64,
            });
        };
        let (payload, sum) = input.split_at(n);
        let stored = u32::from_le_bytes([sum[0], sum[1], sum[2], sum[3]]);
        let computed = lookup3(payload, self.initval.unwrap_or(0));
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

impl BytesToBytesCodec for JenkinsLookup3Codec {
    fn name(&self) -> &'static str {
        NAME
    }

    fn to_def(&self) -> ExtensionDef {
        JenkinsLookup3Config {
            initval: self.initval,
            prefix: None,
        }
        .into()
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
        let sum = lookup3(&input, self.initval.unwrap_or(0));
        input.extend_from_slice(&sum.to_le_bytes());
        Ok(input)
    }

    fn decode<'a>(&self, input: Decoded<'a>, max_decoded: u64) -> Result<Decoded<'a>> {
        let n = self.verify(input.as_slice())?;
        if n as u64 > max_decoded {
            return Err(CodecError::ExceedsBound {
                codec: NAME,
                limit: max_decoded,
            });
        }
        Ok(input.truncated(n))
    }

    fn decode_into(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        let n = self.verify(input)?;
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
    use zarr_meta::{DataType, FillValue};

    #[test]
    fn hashes_as_numcodecs() {
        // numcodecs 0.16.6: numcodecs.jenkins.jenkins_lookup3(data, initval)
        let forty: Vec<u8> = (0..40).collect();
        let cases: [(&[u8], u32, u32); 10] = [
            (b"", 0, 3_735_928_559),
            (b"", 7, 3_735_928_566),
            (b"a", 0, 1_490_454_280),
            (b"a", 7, 3_410_928_457),
            (b"abcdefghijkl", 0, 1_074_985_083),
            (b"abcdefghijkl", 7, 2_154_566_824),
            (b"abcdefghijklm", 0, 2_457_938_169),
            (b"abcdefghijklm", 7, 4_154_586_032),
            (&forty, 0, 480_225_416),
            (&forty, 7, 1_652_560_766),
        ];
        for (data, initval, want) in cases {
            assert_eq!(lookup3(data, initval), want, "{data:?} {initval}");
        }
    }

    #[test]
    fn config_and_errors() {
        let repr = ChunkRepr::new(vec![1], DataType::UInt8, FillValue::zero(DataType::UInt8));
        let reg = default_registry();
        for json in [
            r#"{"name":"numcodecs.jenkins_lookup3"}"#,
            r#"{"name":"numcodecs.jenkins_lookup3","configuration":{"initval":0,"prefix":null}}"#,
        ] {
            let def: ExtensionDef = serde_json::from_str(json).unwrap();
            assert!(factory(&def, &repr, &reg).is_ok(), "{json}");
        }
        for json in [
            r#"{"name":"numcodecs.jenkins_lookup3","configuration":{"prefix":[1,2]}}"#,
            r#"{"name":"numcodecs.jenkins_lookup3","configuration":{"initval":-1}}"#,
            r#"{"name":"numcodecs.jenkins_lookup3","configuration":{"seed":1}}"#,
        ] {
            let def: ExtensionDef = serde_json::from_str(json).unwrap();
            assert!(factory(&def, &repr, &reg).is_err(), "{json}");
        }
        let codec = JenkinsLookup3Codec { initval: None };
        let mut stored = codec.encode(b"abc").unwrap();
        assert_eq!(codec.verify(&stored).unwrap(), 3);
        stored[0] ^= 1;
        assert!(matches!(
            codec.verify(&stored),
            Err(CodecError::ChecksumMismatch { .. })
        ));
        assert!(matches!(
            codec.verify(&[1, 2]),
            Err(CodecError::Truncated { .. })
        ));
    }
}
