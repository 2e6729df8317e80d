//! The `blosc` codec (bytes -> bytes): Blosc 1 (shuffle filters and fast compressors).
//!
//! Name: `blosc`. Configuration:
//!
//! - `cname`: `"blosclz"`, `"lz4"`, `"lz4hc"`, `"zstd"` or `"zlib"` (default `"zstd"`);
//! - `clevel`: 0 to 9 (default 5);
//! - `shuffle`: `"noshuffle"`, `"shuffle"` or `"bitshuffle"` (default, as zarr-python:
//!   `"bitshuffle"` for one-byte data types, `"shuffle"` otherwise);
//! - `typesize`: the element size the shuffle works on, at least 1 (default, as zarr-python:
//!   the data type's size);
//! - `blocksize`: bytes per Blosc block, 0 for automatic (default 0).
//!
//! Every field is written back, filled in. See the
//! [Zarr v3 spec](https://zarr-specs.readthedocs.io/en/latest/v3/codecs/blosc/index.html).
//!
//! This uses the C library c-blosc 1 (built from source by `blosc-src`) through its
//! thread-safe context functions to encode. Decoding validates the Blosc header against the
//! input (`blosc_cbuffer_validate`: the stated compressed size must be the input's length) and
//! the stated decompressed size against the bound before allocating or decompressing. Buffers
//! of LZ4 or Zstandard blocks, byte-shuffled or not, and buffers stored as they are, are then
//! decoded in this crate (the `frame` module: no scratch allocated per call, and a prefix
//! decodes only its blocks); bit shuffle and the other compressors by c-blosc.
//!
//! ```
//! use zarr_codecs::{default_registry, ChunkRepr, CodecChain, EncodeOptions};
//! use zarr_meta::{DataType, FillValue};
//!
//! let repr = ChunkRepr::new(vec![256], DataType::Float32, FillValue::zero(DataType::Float32));
//! let json = r#"[{"name": "bytes", "configuration": {"endian": "little"}},
//!   {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle"}}]"#;
//! let chain = CodecChain::from_json(json, &repr, &default_registry())?;
//! let written = serde_json::to_value(&chain.to_defs()[1])?;
//! assert_eq!(written["configuration"], serde_json::json!(
//!     {"typesize": 4, "cname": "lz4", "clevel": 5, "shuffle": "shuffle", "blocksize": 0}));
//! let chunk: Vec<u8> = (0..256).flat_map(|i| (i as f32).to_ne_bytes()).collect();
//! let encoded = chain.encode(&chunk, EncodeOptions::WRITE_EMPTY)?.ok_or("not stored")?;
//! assert_eq!(chain.decode(&encoded)?.as_bytes(), &chunk[..]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::ffi::{c_char, c_int, c_void};

use blosc_src as ffi;
use serde::{Deserialize, Serialize};
use zarr_meta::{ExtensionDef, ExtensionPoint};

mod frame;

use frame::Frame;

use crate::buffer::AlignedBuffer;
use crate::codec::{BytesToBytesCodec, Codec, Decoded};
use crate::error::{CodecError, Result};
use crate::registry::CodecRegistry;
use crate::repr::ChunkRepr;

/// The codec's name.
pub const NAME: &str = "blosc";

/// Blosc's internal compressor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BloscCname {
    /// BloscLZ.
    Blosclz,
    /// LZ4.
    Lz4,
    /// LZ4 high compression.
    Lz4hc,
    /// Zstandard.
    Zstd,
    /// zlib.
    Zlib,
}

impl BloscCname {
    fn c_name(self) -> &'static [u8] {
        match self {
            BloscCname::Blosclz => ffi::BLOSC_BLOSCLZ_COMPNAME,
            BloscCname::Lz4 => ffi::BLOSC_LZ4_COMPNAME,
            BloscCname::Lz4hc => ffi::BLOSC_LZ4HC_COMPNAME,
            BloscCname::Zstd => ffi::BLOSC_ZSTD_COMPNAME,
            BloscCname::Zlib => ffi::BLOSC_ZLIB_COMPNAME,
        }
    }
}

/// Blosc's shuffle filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BloscShuffle {
    /// No filter.
    Noshuffle,
    /// Byte shuffle.
    Shuffle,
    /// Bit shuffle.
    Bitshuffle,
}

impl BloscShuffle {
    fn code(self) -> c_int {
        (match self {
            BloscShuffle::Noshuffle => ffi::BLOSC_NOSHUFFLE,
            BloscShuffle::Shuffle => ffi::BLOSC_SHUFFLE,
            BloscShuffle::Bitshuffle => ffi::BLOSC_BITSHUFFLE,
        }) as c_int
    }
}

fn default_cname() -> BloscCname {
    BloscCname::Zstd
}

fn default_clevel() -> u8 {
    5
}

/// The configuration of `blosc` as read: the fields zarr-python fills from the data type may
/// be left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BloscConfig {
    /// The element size for the shuffle (default: the data type's size).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub typesize: Option<u32>,
    /// The compressor.
    #[serde(default = "default_cname")]
    pub cname: BloscCname,
    /// The compression level, 0 to 9.
    #[serde(default = "default_clevel")]
    pub clevel: u8,
    /// The shuffle filter (default: bit shuffle for one-byte types, byte shuffle otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shuffle: Option<BloscShuffle>,
    /// The block size in bytes, 0 for automatic.
    #[serde(default)]
    pub blocksize: u64,
}

crate::config::codec_def!(BloscConfig => NAME);

/// The configuration with every field filled in, as written back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
struct Resolved {
    typesize: u32,
    cname: BloscCname,
    clevel: u8,
    shuffle: BloscShuffle,
    blocksize: u64,
}

/// The `blosc` codec.
#[derive(Debug, Clone, Copy)]
pub struct BloscCodec {
    config: Resolved,
}

impl BloscCodec {
    /// The codec with `config`, filling left-out fields for `repr`'s data type.
    ///
    /// # Errors
    /// [`zarr_meta::MetaError::InvalidConfiguration`] for a level above 9, a type size of 0 or
    /// a block size Blosc cannot use.
    pub fn new(config: BloscConfig, repr: &ChunkRepr) -> Result<Self> {
        let item = repr.element_size();
        let invalid = |reason: String| -> CodecError {
            ExtensionDef::new(NAME)
                .invalid_configuration(ExtensionPoint::Codec, reason)
                .into()
        };
        if config.clevel > 9 {
            return Err(invalid(format!(
                "clevel {} is outside 0..=9",
                config.clevel
            )));
        }
        let typesize = config
            .typesize
            .unwrap_or(item.min(u32::MAX as usize) as u32);
        if typesize == 0 {
            return Err(invalid("typesize must be at least 1".into()));
        }
        if config.blocksize > u64::from(ffi::BLOSC_MAX_BLOCKSIZE) {
            return Err(invalid(format!(
                "blocksize {} exceeds blosc's maximum of {}",
                config.blocksize,
                ffi::BLOSC_MAX_BLOCKSIZE
            )));
        }
        let shuffle = config.shuffle.unwrap_or(if item == 1 {
            BloscShuffle::Bitshuffle
        } else {
            BloscShuffle::Shuffle
        });
        Ok(BloscCodec {
            config: Resolved {
                typesize,
                cname: config.cname,
                clevel: config.clevel,
                shuffle,
                blocksize: config.blocksize,
            },
        })
    }

    /// The configuration with every field filled in.
    pub fn config(&self) -> BloscConfig {
        BloscConfig {
            typesize: Some(self.config.typesize),
            cname: self.config.cname,
            clevel: self.config.clevel,
            shuffle: Some(self.config.shuffle),
            blocksize: self.config.blocksize,
        }
    }
}

/// Builds `blosc` from its definition.
pub(crate) fn factory(def: &ExtensionDef, repr: &ChunkRepr, _: &CodecRegistry) -> Result<Codec> {
    let config: BloscConfig = def.parse_configuration(ExtensionPoint::Codec)?;
    Ok(Codec::BytesToBytes(Box::new(BloscCodec::new(
        config, repr,
    )?)))
}

/// The decompressed size a Blosc buffer states, after checking its header against its length.
fn validated_size(input: &[u8]) -> Result<usize> {
    let header = ffi::BLOSC_MIN_HEADER_LENGTH as usize;
    if input.len() < header {
        return Err(CodecError::Truncated {
            codec: NAME,
            needed: header as u64,
            got: input.len() as u64,
        });
    }
    let (mut nbytes, mut cbytes, mut blocksize) = (0usize, 0usize, 0usize);
    // SAFETY: `input` holds at least the 16 header bytes these functions read; the
    // out-pointers are valid locals.
    let rc = unsafe {
        ffi::blosc_cbuffer_sizes(
            input.as_ptr().cast::<c_void>(),
            &mut nbytes,
            &mut cbytes,
            &mut blocksize,
        );
        ffi::blosc_cbuffer_validate(input.as_ptr().cast::<c_void>(), input.len(), &mut nbytes)
    };
    if rc != 0 {
        let reason = if cbytes != input.len() {
            format!(
                "the header states {cbytes} compressed bytes but {} are given",
                input.len()
            )
        } else {
            "invalid blosc header".to_string()
        };
        return Err(CodecError::corrupt(NAME, reason));
    }
    Ok(nbytes)
}

/// Decompresses a validated buffer of `out.len()` decompressed bytes into `out`.
fn decompress(input: &[u8], out: &mut [u8]) -> Result<()> {
    if out.is_empty() {
        return Ok(());
    }
    match Frame::native(input, out.len()) {
        Some(frame) => frame.decode_prefix(out),
        None => c_decompress(input, out),
    }
}

/// [`decompress`] by c-blosc.
fn c_decompress(input: &[u8], out: &mut [u8]) -> Result<()> {
    // SAFETY: `input` was validated (its header states exactly its length); blosc writes at
    // most `out.len()` bytes to `out`.
    let n = unsafe {
        ffi::blosc_decompress_ctx(
            input.as_ptr().cast::<c_void>(),
            out.as_mut_ptr().cast::<c_void>(),
            out.len(),
            1,
        )
    };
    if n < 0 || n as usize != out.len() {
        return Err(CodecError::corrupt(
            NAME,
            format!("decompression failed (blosc returned {n})"),
        ));
    }
    Ok(())
}

impl BytesToBytesCodec for BloscCodec {
    fn name(&self) -> &'static str {
        NAME
    }

    fn to_def(&self) -> ExtensionDef {
        // every field filled in, in the order of `BloscConfig`
        crate::config::def(NAME, &self.config)
    }

    fn encoded_size_bound(&self, decoded_bound: u64) -> u64 {
        decoded_bound.saturating_add(u64::from(ffi::BLOSC_MAX_OVERHEAD))
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        if input.len() > ffi::BLOSC_MAX_BUFFERSIZE as usize {
            return Err(CodecError::Compress {
                codec: NAME,
                reason: format!(
                    "{} bytes exceed blosc's maximum buffer of {} bytes",
                    input.len(),
                    ffi::BLOSC_MAX_BUFFERSIZE
                ),
            });
        }
        let dest_size = input.len() + ffi::BLOSC_MAX_OVERHEAD as usize;
        let mut out: Vec<u8> = Vec::with_capacity(dest_size);
        let c = &self.config;
        // SAFETY: `out` has capacity `dest_size`, which blosc never writes past; the compressor
        // name is a NUL-terminated constant; `input` is valid for `input.len()` bytes.
        let n = unsafe {
            ffi::blosc_compress_ctx(
                c_int::from(c.clevel),
                c.shuffle.code(),
                c.typesize as usize,
                input.len(),
                input.as_ptr().cast::<c_void>(),
                out.as_mut_ptr().cast::<c_void>(),
                dest_size,
                c.cname.c_name().as_ptr().cast::<c_char>(),
                c.blocksize as usize,
                1,
            )
        };
        if n <= 0 || n as usize > dest_size {
            return Err(CodecError::Compress {
                codec: NAME,
                reason: format!("blosc returned {n}"),
            });
        }
        // SAFETY: blosc initialised the first `n <= dest_size` bytes.
        unsafe { out.set_len(n as usize) };
        Ok(out)
    }

    fn decode<'a>(&self, input: Decoded<'a>, max_decoded: u64) -> Result<Decoded<'a>> {
        let input = input.as_slice();
        let nbytes = validated_size(input)?;
        if nbytes as u64 > max_decoded {
            return Err(CodecError::ExceedsBound {
                codec: NAME,
                limit: max_decoded,
            });
        }
        let mut buf = AlignedBuffer::zeroed(nbytes);
        decompress(input, &mut buf)?;
        Ok(Decoded::Owned(buf))
    }

    /// Decodes only the blocks that hold the first `out.len()` bytes (here, or by
    /// `blosc_getitem` for the buffers c-blosc decodes).
    fn decode_prefix_into(&self, input: &[u8], out: &mut [u8], max_decoded: u64) -> Result<bool> {
        let nbytes = validated_size(input)?;
        if nbytes as u64 > max_decoded || out.len() > nbytes {
            return Err(CodecError::SizeMismatch {
                codec: NAME,
                expected: out.len() as u64,
                got: nbytes as u64,
            });
        }
        if let Some(frame) = Frame::native(input, nbytes) {
            frame.decode_prefix(out)?;
            return Ok(true);
        }
        // items are counted in the buffer's own type size (header byte 3)
        let typesize = usize::from(input[3]);
        if typesize == 0 || !out.len().is_multiple_of(typesize) {
            return Ok(false);
        }
        if out.is_empty() {
            return Ok(true);
        }
        // blosc decodes whole blocks (header bytes 8..12: the block size): a prefix that needs
        // every block saves nothing over decoding the buffer, and `blosc_getitem` would also
        // allocate its scratch blocks on every call
        let blocksize = u32::from_le_bytes([input[8], input[9], input[10], input[11]]) as usize;
        if blocksize == 0 || out.len().div_ceil(blocksize) >= nbytes.div_ceil(blocksize) {
            return Ok(false);
        }
        let Ok(nitems) = c_int::try_from(out.len() / typesize) else {
            return Ok(false);
        };
        // SAFETY: `input` was validated (its header states exactly its length, which bounds
        // every block offset blosc reads); items `0..nitems` lie inside the stated `nbytes`,
        // and blosc writes `nitems * typesize = out.len()` bytes to `out`.
        let n = unsafe {
            ffi::blosc_getitem(
                input.as_ptr().cast::<c_void>(),
                0,
                nitems,
                out.as_mut_ptr().cast::<c_void>(),
            )
        };
        if n < 0 || n as usize != out.len() {
            return Err(CodecError::corrupt(
                NAME,
                format!("decompression failed (blosc returned {n})"),
            ));
        }
        Ok(true)
    }

    fn decode_into(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        let nbytes = validated_size(input)?;
        if nbytes != out.len() {
            return Err(CodecError::SizeMismatch {
                codec: NAME,
                expected: out.len() as u64,
                got: nbytes as u64,
            });
        }
        decompress(input, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::default_registry;
    use proptest::prelude::*;
    use zarr_meta::{DataType, FillValue};

    fn codec(json: &str, t: DataType) -> Result<Codec> {
        let repr = ChunkRepr::new(vec![1], t, FillValue::zero(t));
        factory(
            &serde_json::from_str(json).unwrap(),
            &repr,
            &default_registry(),
        )
    }

    #[test]
    fn config_fills_typesize_and_shuffle_like_zarr_python() {
        let c = codec(
            r#"{"name":"blosc","configuration":{"cname":"lz4","clevel":1}}"#,
            DataType::Float64,
        )
        .unwrap();
        assert_eq!(
            serde_json::to_string(&c.to_def()).unwrap(),
            r#"{"name":"blosc","configuration":{"typesize":8,"cname":"lz4","clevel":1,"shuffle":"shuffle","blocksize":0}}"#
        );
        let c = codec(r#"{"name":"blosc"}"#, DataType::UInt8).unwrap();
        assert_eq!(
            serde_json::to_string(&c.to_def()).unwrap(),
            r#"{"name":"blosc","configuration":{"typesize":1,"cname":"zstd","clevel":5,"shuffle":"bitshuffle","blocksize":0}}"#
        );
        for bad in [
            r#"{"name":"blosc","configuration":{"cname":"snappy"}}"#,
            r#"{"name":"blosc","configuration":{"clevel":10}}"#,
            r#"{"name":"blosc","configuration":{"typesize":0}}"#,
            r#"{"name":"blosc","configuration":{"shuffle":"yes"}}"#,
            r#"{"name":"blosc","configuration":{"clevel":1,"other":1}}"#,
        ] {
            assert!(codec(bad, DataType::Int32).is_err(), "{bad}");
        }
    }

    /// lz4, clevel 5, byte shuffle, automatic block size, over int32 elements.
    fn lz4_int32() -> BloscCodec {
        lz4_int32_with(BloscShuffle::Shuffle)
    }

    /// lz4, clevel 5, automatic block size, over int32 elements, with `shuffle`.
    fn lz4_int32_with(shuffle: BloscShuffle) -> BloscCodec {
        BloscCodec::new(
            BloscConfig {
                typesize: Some(4),
                cname: BloscCname::Lz4,
                clevel: 5,
                shuffle: Some(shuffle),
                blocksize: 0,
            },
            &ChunkRepr::new(vec![1], DataType::Int32, FillValue::zero(DataType::Int32)),
        )
        .unwrap()
    }

    #[test]
    fn a_prefix_is_decoded_here_or_by_c_blosc_when_it_skips_a_block() {
        // 1 MB: blosc splits it into blocks (their size in header bytes 8..12)
        let data: Vec<u8> = (0..250_000u32)
            .flat_map(|i| (i / 3).to_le_bytes())
            .collect();
        for (shuffle, c_blosc) in [
            (BloscShuffle::Bitshuffle, true),
            (BloscShuffle::Shuffle, false),
        ] {
            let c = lz4_int32_with(shuffle);
            let enc = c.encode(&data).unwrap();
            let block = u32::from_le_bytes(enc[8..12].try_into().unwrap()) as usize;
            let blocks = data.len().div_ceil(block);
            assert!(blocks >= 2, "{block}");
            let last = (blocks - 1) * block;
            // c-blosc's `blosc_getitem` only where it saves a block; here every prefix
            for (len, decoded) in [
                (4, true),
                (block, true),
                (last, true),
                (last + 4, !c_blosc),
                (data.len(), !c_blosc),
            ] {
                let mut out = vec![0u8; len];
                let got = c.decode_prefix_into(&enc, &mut out, 1 << 21).unwrap();
                assert_eq!(got, decoded, "{len} of {blocks} blocks of {block}");
                if decoded {
                    assert_eq!(out, data[..len], "{len}");
                }
            }
        }
    }

    #[test]
    fn header_is_validated() {
        let c = lz4_int32();
        let data: Vec<u8> = (0..4000u32).flat_map(|i| (i / 3).to_le_bytes()).collect();
        let enc = c.encode(&data).unwrap();
        assert!(matches!(
            c.decode(Decoded::Borrowed(&enc[..10]), 1 << 20),
            Err(CodecError::Truncated { .. })
        ));
        assert!(matches!(
            c.decode(Decoded::Borrowed(&enc[..enc.len() - 1]), 1 << 20),
            Err(CodecError::Corrupt { .. })
        ));
        let mut long = enc.clone();
        long.push(0);
        assert!(c.decode(Decoded::Borrowed(&long), 1 << 20).is_err());
        assert!(matches!(
            c.decode(Decoded::Borrowed(&enc), 15_999),
            Err(CodecError::ExceedsBound { .. })
        ));
        let mut out = vec![0u8; 15_999];
        assert!(matches!(
            c.decode_into(&enc, &mut out),
            Err(CodecError::SizeMismatch { .. })
        ));
        // a header claiming a huge size is refused before allocating
        let mut huge = enc.clone();
        huge[4..8].copy_from_slice(&0x7fff_0000u32.to_le_bytes());
        assert!(c.decode(Decoded::Borrowed(&huge), 1 << 20).is_err());
    }

    /// Data that compresses: runs and ramps of small values.
    fn compressible(len: usize, seed: u8) -> Vec<u8> {
        (0..len)
            .map(|i| ((i / (1 + seed as usize % 7)) as u8).wrapping_mul(seed | 1) % 23)
            .collect()
    }

    #[test]
    fn lz4_and_zstd_buffers_are_decoded_here_the_rest_by_c_blosc() {
        let data = compressible(100_000, 3);
        for (cname, shuffle, native) in [
            (BloscCname::Lz4, BloscShuffle::Shuffle, true),
            (BloscCname::Lz4hc, BloscShuffle::Noshuffle, true),
            (
                BloscCname::Zstd,
                BloscShuffle::Shuffle,
                cfg!(feature = "zstd"),
            ),
            (BloscCname::Lz4, BloscShuffle::Bitshuffle, false),
            (BloscCname::Blosclz, BloscShuffle::Shuffle, false),
            (BloscCname::Zlib, BloscShuffle::Noshuffle, false),
        ] {
            let c = BloscCodec::new(
                BloscConfig {
                    typesize: Some(4),
                    cname,
                    clevel: 5,
                    shuffle: Some(shuffle),
                    blocksize: 0,
                },
                &ChunkRepr::new(vec![1], DataType::Int32, FillValue::zero(DataType::Int32)),
            )
            .unwrap();
            let enc = c.encode(&data).unwrap();
            let frame = Frame::native(&enc, validated_size(&enc).unwrap());
            assert_eq!(frame.is_some(), native, "{cname:?} {shuffle:?}");
            let mut out = vec![0u8; data.len()];
            c.decode_into(&enc, &mut out).unwrap();
            assert_eq!(out, data, "{cname:?} {shuffle:?}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// Whole buffers and every prefix, decoded here, are what c-blosc decodes.
        #[test]
        fn decoded_here_as_c_blosc_decodes(
            len in 0usize..40_000,
            seed in any::<u8>(),
            cname in prop::sample::select(vec![BloscCname::Lz4, BloscCname::Lz4hc, BloscCname::Zstd]),
            shuffle in prop::sample::select(vec![BloscShuffle::Noshuffle, BloscShuffle::Shuffle]),
            typesize in prop::sample::select(vec![1u32, 2, 3, 4, 8, 16, 17]),
            clevel in 0u8..10,
            blocksize in prop::sample::select(vec![0u64, 128, 1000, 4096, 16384]),
            cut in 0.0f64..=1.0,
        ) {
            let data = compressible(len, seed);
            let repr = ChunkRepr::new(vec![1], DataType::UInt8, FillValue::zero(DataType::UInt8));
            let c = BloscCodec::new(BloscConfig { typesize: Some(typesize), cname, clevel, shuffle: Some(shuffle), blocksize }, &repr).unwrap();
            let enc = c.encode(&data).unwrap();
            let mut by_c = vec![0u8; len];
            c_decompress(&enc, &mut by_c).unwrap();
            prop_assert_eq!(&by_c, &data);
            let mut here = vec![0u8; len];
            c.decode_into(&enc, &mut here).unwrap();
            prop_assert_eq!(&here, &data);
            let prefix = (len as f64 * cut) as usize;
            let mut out = vec![0u8; prefix];
            prop_assert!(c.decode_prefix_into(&enc, &mut out, len as u64).unwrap() || len == 0);
            prop_assert_eq!(&out[..], &data[..prefix]);
        }

        /// A damaged buffer is an error or some bytes, never a panic, and never more bytes.
        #[test]
        fn damaged_buffers_are_refused_or_decoded_in_bounds(
            len in 1usize..20_000,
            seed in any::<u8>(),
            cname in prop::sample::select(vec![BloscCname::Lz4, BloscCname::Zstd]),
            shuffle in prop::sample::select(vec![BloscShuffle::Noshuffle, BloscShuffle::Shuffle]),
            damage in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
            cut in 0.0f64..=1.0,
        ) {
            let data = compressible(len, seed);
            let repr = ChunkRepr::new(vec![1], DataType::UInt16, FillValue::zero(DataType::UInt16));
            let c = BloscCodec::new(BloscConfig { typesize: Some(2), cname, clevel: 5, shuffle: Some(shuffle), blocksize: 1024 }, &repr).unwrap();
            let mut enc = c.encode(&data).unwrap();
            for (at, byte) in damage {
                // the header's sizes stay, so that the damage reaches the blocks
                let i = at.index(enc.len() - 16) + 16;
                enc[i] = byte;
            }
            let _ = c.decode(Decoded::Borrowed(&enc), len as u64);
            let mut out = vec![0u8; (len as f64 * cut) as usize];
            let _ = c.decode_prefix_into(&enc, &mut out, len as u64);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn round_trip(
            data in prop::collection::vec(0u8..6, 0..3000),
            cname in prop::sample::select(vec![BloscCname::Blosclz, BloscCname::Lz4, BloscCname::Lz4hc, BloscCname::Zstd, BloscCname::Zlib]),
            shuffle in prop::sample::select(vec![BloscShuffle::Noshuffle, BloscShuffle::Shuffle, BloscShuffle::Bitshuffle]),
            typesize in prop::sample::select(vec![1u32, 2, 4, 8]),
            clevel in 0u8..10,
            blocksize in prop::sample::select(vec![0u64, 256, 1024]),
        ) {
            let repr = ChunkRepr::new(vec![1], DataType::UInt8, FillValue::zero(DataType::UInt8));
            let c = BloscCodec::new(BloscConfig { typesize: Some(typesize), cname, clevel, shuffle: Some(shuffle), blocksize }, &repr).unwrap();
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
