//! The `zstd` codec (bytes -> bytes): Zstandard compression.
//!
//! Name: `zstd`. Configuration: `level`, an integer from zstd's minimum (negative levels are
//! the fast modes) to 22, 0 meaning zstd's default; `checksum`, whether frames carry zstd's
//! content checksum. Both default as in zarr-python (`0`, `false`) and are always written.
//! See the [zarr-extensions registry](https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/zstd).
//!
//! Compression and decompression reuse a per-thread zstd context; compression writes into a
//! per-thread staging buffer (for values whose bound is at most 4 MiB) and returns a copy of
//! the size the value took. Decompression is bounded: a frame whose declared content size
//! exceeds the bound is refused before anything is allocated, and a frame without one is
//! decompressed into a buffer of the bound, never more.
//!
//! ```
//! use zarr_codecs::{default_registry, ChunkRepr, CodecChain, EncodeOptions};
//! use zarr_meta::{DataType, FillValue};
//!
//! let repr = ChunkRepr::new(vec![1000], DataType::UInt8, FillValue::zero(DataType::UInt8));
//! let json = r#"[{"name": "bytes"}, {"name": "zstd", "configuration": {"level": 3, "checksum": true}}]"#;
//! let chain = CodecChain::from_json(json, &repr, &default_registry())?;
//! let chunk = vec![7u8; 1000];
//! let encoded = chain.encode(&chunk, EncodeOptions::WRITE_EMPTY)?.ok_or("not stored")?;
//! assert!(encoded.len() < 100);
//! assert_eq!(chain.decode(&encoded)?.as_bytes(), &chunk[..]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::cell::RefCell;

use ::zstd::zstd_safe::{
    self, zstd_sys::ZSTD_ErrorCode, CCtx, CParameter, DCtx, DParameter, InBuffer, OutBuffer,
    ResetDirective,
};
use serde::{Deserialize, Serialize};
use zarr_meta::{ExtensionDef, ExtensionPoint};

use crate::buffer::AlignedBuffer;
use crate::codec::{limit_usize, BytesToBytesCodec, Codec, Decoded};
use crate::error::{CodecError, Result};
use crate::registry::CodecRegistry;
use crate::repr::ChunkRepr;

/// The codec's name.
pub const NAME: &str = "zstd";

/// The configuration of `zstd`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZstdConfig {
    /// The compression level (0: zstd's default; negative: fast modes).
    #[serde(default)]
    pub level: i32,
    /// Whether to store zstd's content checksum in each frame.
    #[serde(default)]
    pub checksum: bool,
}

crate::config::codec_def!(ZstdConfig => NAME);

/// The `zstd` codec.
#[derive(Debug, Clone, Copy)]
pub struct ZstdCodec {
    config: ZstdConfig,
}

impl ZstdCodec {
    /// The codec with `config`.
    ///
    /// # Errors
    /// [`zarr_meta::MetaError::InvalidConfiguration`] for a level outside zstd's range.
    pub fn new(config: ZstdConfig) -> Result<Self> {
        let (min, max) = (zstd_safe::min_c_level(), zstd_safe::max_c_level());
        if config.level < min || config.level > max {
            return Err(ExtensionDef::new(NAME)
                .invalid_configuration(
                    ExtensionPoint::Codec,
                    format!("level {} is outside {min}..={max}", config.level),
                )
                .into());
        }
        Ok(ZstdCodec { config })
    }

    /// The configuration.
    pub fn config(&self) -> ZstdConfig {
        self.config
    }
}

/// Builds `zstd` from its definition.
pub(crate) fn factory(def: &ExtensionDef, _: &ChunkRepr, _: &CodecRegistry) -> Result<Codec> {
    let config: ZstdConfig = def.parse_configuration(ExtensionPoint::Codec)?;
    Ok(Codec::BytesToBytes(Box::new(ZstdCodec::new(config)?)))
}

/// The largest compressed-size bound [`ZstdCodec::encode`] compresses into the thread's
/// staging buffer; larger values are compressed straight into their own allocation.
const STAGING_MAX: usize = 4 << 20;

thread_local! {
    /// This thread's compression context and staging buffer.
    static CCTX: RefCell<Option<(CCtx<'static>, Vec<u8>)>> = const { RefCell::new(None) };
    static DCTX: RefCell<Option<DCtx<'static>>> = const { RefCell::new(None) };
}

pub(crate) fn error_name(code: usize) -> String {
    zstd_safe::get_error_name(code).to_string()
}

fn too_small(code: usize) -> bool {
    zstd_safe::is_error_kind(code, ZSTD_ErrorCode::ZSTD_error_dstSize_tooSmall)
}

/// Decompresses with this thread's context into `out`; zstd's error code on failure.
pub(crate) fn decompress_to(input: &[u8], out: &mut [u8]) -> std::result::Result<usize, usize> {
    DCTX.with(|cell| {
        let mut slot = cell.borrow_mut();
        let dctx = match slot.as_mut() {
            Some(d) => d,
            None => slot.insert(DCtx::try_create().ok_or(usize::MAX)?),
        };
        dctx.decompress(out, input)
    })
}

/// Decompresses the first `out.len()` bytes of a frame with this thread's context,
/// streaming, so the blocks after them are not decoded. `None` when the frame needs a window
/// larger than `2^window_log` (the caller then decodes it whole, in one shot, which needs no
/// window buffer).
fn decompress_prefix(
    input: &[u8],
    out: &mut [u8],
    window_log: u32,
) -> std::result::Result<Option<()>, CodecError> {
    let zstd_err = |code: usize| CodecError::corrupt(NAME, error_name(code));
    DCTX.with(|cell| {
        let mut slot = cell.borrow_mut();
        let dctx = match slot.as_mut() {
            Some(d) => d,
            None => slot.insert(
                DCtx::try_create().ok_or_else(|| CodecError::corrupt(NAME, "no zstd context"))?,
            ),
        };
        dctx.reset(ResetDirective::SessionAndParameters)
            .map_err(zstd_err)?;
        dctx.set_parameter(DParameter::WindowLogMax(window_log))
            .map_err(zstd_err)?;
        let want = out.len();
        let mut src = InBuffer::around(input);
        let mut dst = OutBuffer::around(out);
        let result = loop {
            let before = (src.pos(), dst.pos());
            match dctx.decompress_stream(&mut dst, &mut src) {
                Err(code)
                    if zstd_safe::is_error_kind(
                        code,
                        ZSTD_ErrorCode::ZSTD_error_frameParameter_windowTooLarge,
                    ) =>
                {
                    break Ok(None)
                }
                Err(code) => break Err(zstd_err(code)),
                Ok(_) if dst.pos() == want => break Ok(Some(())),
                // a frame ended before the prefix was complete: the next frame (values may
                // be several frames, as the one-shot decoder accepts) goes on, if there is one
                Ok(0) if src.pos() < input.len() => {}
                Ok(0) => {
                    break Err(CodecError::SizeMismatch {
                        codec: NAME,
                        expected: want as u64,
                        got: dst.pos() as u64,
                    })
                }
                Ok(_) if (src.pos(), dst.pos()) == before => {
                    break Err(CodecError::corrupt(NAME, "truncated frame"))
                }
                Ok(_) => {}
            }
        };
        // leave the context as the one-shot calls expect it
        dctx.reset(ResetDirective::SessionAndParameters)
            .map_err(zstd_err)?;
        result
    })
}

/// Whether the zstd frame `input` (its magic number checked) holds exactly one block: the
/// first block header, after the frame header, has its "last block" bit set. `false` when the
/// input is too short to tell (the decoder then reports it).
fn single_block(input: &[u8]) -> bool {
    // the frame header: magic (4 bytes), descriptor (1), window descriptor (1, absent for a
    // single segment), dictionary id (0, 1, 2 or 4), content size (0 or 1, 2, 4, 8)
    let Some(&descriptor) = input.get(4) else {
        return false;
    };
    let single_segment = descriptor & 0x20 != 0;
    let dictionary = [0, 1, 2, 4][usize::from(descriptor & 0x03)];
    let content_size = match descriptor >> 6 {
        0 => usize::from(single_segment),
        1 => 2,
        2 => 4,
        _ => 8,
    };
    let header = 5 + usize::from(!single_segment) + dictionary + content_size;
    input.get(header).is_some_and(|first| first & 0x01 != 0)
}

/// zstd's worst-case compressed size (`ZSTD_COMPRESSBOUND`) plus room for the frame header and
/// checksum, in `u64`.
pub(crate) fn compress_bound(n: u64) -> u64 {
    const KB128: u64 = 128 << 10;
    let small = if n < KB128 { (KB128 - n) >> 11 } else { 0 };
    n.saturating_add(n >> 8)
        .saturating_add(small)
        .saturating_add(32)
}

impl BytesToBytesCodec for ZstdCodec {
    fn name(&self) -> &'static str {
        NAME
    }

    fn to_def(&self) -> ExtensionDef {
        self.config.into()
    }

    fn encoded_size_bound(&self, decoded_bound: u64) -> u64 {
        compress_bound(decoded_bound)
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        let bound = limit_usize(compress_bound(input.len() as u64));
        let fail = |code: usize| CodecError::Compress {
            codec: NAME,
            reason: error_name(code),
        };
        CCTX.with(|cell| {
            let mut slot = cell.borrow_mut();
            let (cctx, staging) = match slot.as_mut() {
                Some(c) => c,
                None => slot.insert((
                    CCtx::try_create().ok_or_else(|| CodecError::Compress {
                        codec: NAME,
                        reason: "cannot create a compression context".into(),
                    })?,
                    Vec::new(),
                )),
            };
            cctx.reset(ResetDirective::SessionOnly).map_err(fail)?;
            cctx.set_parameter(CParameter::CompressionLevel(self.config.level))
                .map_err(fail)?;
            cctx.set_parameter(CParameter::ChecksumFlag(self.config.checksum))
                .map_err(fail)?;
            if bound <= STAGING_MAX {
                // compressed into this thread's staging buffer, then copied out at its size:
                // no bound-sized block per chunk held (and faulted in) until the chunk is stored
                staging.clear();
                staging.reserve(bound);
                cctx.compress2(staging, input).map_err(fail)?;
                return Ok(staging.as_slice().to_vec());
            }
            let mut out = Vec::new();
            out.try_reserve_exact(bound)
                .map_err(|_| CodecError::Compress {
                    codec: NAME,
                    reason: format!("cannot allocate {bound} bytes for the compressed value"),
                })?;
            cctx.compress2(&mut out, input).map_err(fail)?;
            Ok(out)
        })
    }

    fn decode<'a>(&self, input: Decoded<'a>, max_decoded: u64) -> Result<Decoded<'a>> {
        let input = input.as_slice();
        let content = zstd_safe::get_frame_content_size(input)
            .map_err(|_| CodecError::corrupt(NAME, "not a zstd frame"))?;
        let max = limit_usize(max_decoded);
        let first = match content {
            Some(n) if n > max_decoded => {
                return Err(CodecError::ExceedsBound {
                    codec: NAME,
                    limit: max_decoded,
                })
            }
            Some(n) => n as usize,
            None => max,
        };
        let mut buf = AlignedBuffer::zeroed(first);
        let mut result = decompress_to(input, &mut buf);
        if matches!(result, Err(code) if too_small(code)) && first < max {
            // several frames: the first frame's size is not the total
            buf = AlignedBuffer::zeroed(max);
            result = decompress_to(input, &mut buf);
        }
        match result {
            Ok(n) => {
                buf.truncate(n);
                Ok(Decoded::Owned(buf))
            }
            Err(code) if too_small(code) => Err(CodecError::ExceedsBound {
                codec: NAME,
                limit: max_decoded,
            }),
            Err(code) => Err(CodecError::corrupt(NAME, error_name(code))),
        }
    }

    fn decode_prefix_into(&self, input: &[u8], out: &mut [u8], max_decoded: u64) -> Result<bool> {
        // Only frames without a content checksum: the checksum covers the whole content, so
        // a frame that has one is decoded whole and checked.
        const MAGIC: [u8; 4] = 0xFD2F_B528u32.to_le_bytes();
        if input.len() < 5 || input[..4] != MAGIC || input[4] & 0x04 != 0 {
            return Ok(false);
        }
        // zstd decodes whole blocks: a frame of one block (at most 128 KiB, such as a shard's
        // inner chunk) saves nothing by stopping early, and streaming it would only add a copy
        // through the context's window
        if single_block(input) {
            return Ok(false);
        }
        // the window a frame of at most `max_decoded` bytes needs (zstd's range is 10..=31)
        let window_log = (64 - max_decoded.max(1).saturating_sub(1).leading_zeros()).clamp(10, 31);
        Ok(decompress_prefix(input, out, window_log)?.is_some())
    }

    fn decode_into(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        let content = zstd_safe::get_frame_content_size(input)
            .map_err(|_| CodecError::corrupt(NAME, "not a zstd frame"))?;
        if let Some(n) = content {
            if n > out.len() as u64 {
                return Err(CodecError::SizeMismatch {
                    codec: NAME,
                    expected: out.len() as u64,
                    got: n,
                });
            }
        }
        match decompress_to(input, out) {
            Ok(n) if n == out.len() => Ok(()),
            Ok(n) => Err(CodecError::SizeMismatch {
                codec: NAME,
                expected: out.len() as u64,
                got: n as u64,
            }),
            Err(code) if too_small(code) => Err(CodecError::ExceedsBound {
                codec: NAME,
                limit: out.len() as u64,
            }),
            Err(code) => Err(CodecError::corrupt(NAME, error_name(code))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
    fn config_round_trips_with_defaults_filled() {
        let c = codec(r#"{"name":"zstd"}"#).unwrap();
        assert_eq!(
            serde_json::to_string(&c.to_def()).unwrap(),
            r#"{"name":"zstd","configuration":{"level":0,"checksum":false}}"#
        );
        let json = r#"{"name":"zstd","configuration":{"level":-5,"checksum":true}}"#;
        assert_eq!(
            serde_json::to_string(&codec(json).unwrap().to_def()).unwrap(),
            json
        );
        assert!(codec(r#"{"name":"zstd","configuration":{"level":23}}"#).is_err());
        assert!(codec(r#"{"name":"zstd","configuration":{"level":1,"x":0}}"#).is_err());
        assert!(codec(r#"{"name":"zstd","configuration":{"level":"1"}}"#).is_err());
    }

    #[test]
    fn values_above_the_staging_size_compress_into_their_own_buffer() {
        let c = ZstdCodec::new(ZstdConfig::default()).unwrap();
        // a small value through the staging buffer, a large one past it, the small again
        let small: Vec<u8> = (0..5000u32).map(|i| (i % 7) as u8).collect();
        let large: Vec<u8> = (0..STAGING_MAX as u32 + 1)
            .map(|i| (i % 251) as u8)
            .collect();
        assert!(compress_bound(large.len() as u64) > STAGING_MAX as u64);
        for data in [&small, &large, &small] {
            let enc = c.encode(data).unwrap();
            assert!(enc.len() < data.len() / 2);
            // the value is exactly the frame, with no spare capacity handed out
            assert_eq!(enc.capacity() == enc.len(), data.len() < STAGING_MAX);
            let dec = c
                .decode(Decoded::Borrowed(&enc), data.len() as u64)
                .unwrap();
            assert_eq!(dec.as_slice(), &data[..]);
        }
    }

    #[test]
    fn bounded_decoding() {
        let c = ZstdCodec::new(ZstdConfig {
            level: 1,
            checksum: true,
        })
        .unwrap();
        let data = vec![3u8; 10_000];
        let enc = c.encode(&data).unwrap();
        // the declared size exceeds the bound: refused before allocating
        assert!(matches!(
            c.decode(Decoded::Borrowed(&enc), 9_999),
            Err(CodecError::ExceedsBound { .. })
        ));
        let mut out = vec![0u8; 9_999];
        assert!(c.decode_into(&enc, &mut out).is_err());
        let mut out = vec![0u8; 10_001];
        assert!(matches!(
            c.decode_into(&enc, &mut out),
            Err(CodecError::SizeMismatch { .. })
        ));
        // a frame without a content size (streamed) is still bounded
        let mut streamed = Vec::new();
        {
            use std::io::Write;
            let mut w = ::zstd::stream::write::Encoder::new(&mut streamed, 1).unwrap();
            w.include_contentsize(false).unwrap();
            w.write_all(&data).unwrap();
            w.finish().unwrap();
        }
        assert_eq!(zstd_safe::get_frame_content_size(&streamed).unwrap(), None);
        assert!(matches!(
            c.decode(Decoded::Borrowed(&streamed), 5_000),
            Err(CodecError::ExceedsBound { .. })
        ));
        let d = c.decode(Decoded::Borrowed(&streamed), 10_000).unwrap();
        assert_eq!(d.as_slice(), &data[..]);
        // two frames
        let two = [enc.clone(), enc.clone()].concat();
        let d = c.decode(Decoded::Borrowed(&two), 20_000).unwrap();
        assert_eq!(d.len(), 20_000);
        // garbage
        assert!(c.decode(Decoded::Borrowed(b"nonsense"), 100).is_err());
        assert!(c.decode(Decoded::Borrowed(&[]), 100).is_err());
        let mut trailing = enc.clone();
        trailing.extend_from_slice(b"xyz");
        assert!(c.decode(Decoded::Borrowed(&trailing), 20_000).is_err());
    }

    #[test]
    fn a_prefix_is_streamed_only_from_a_frame_of_several_blocks() {
        let c = ZstdCodec::new(ZstdConfig {
            level: 1,
            checksum: false,
        })
        .unwrap();
        for (len, blocks) in [(10_000usize, 1), (128 << 10, 1), (512 << 10, 4)] {
            let data: Vec<u8> = (0..len as u32)
                .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8 & 0x3f)
                .collect();
            let enc = c.encode(&data).unwrap();
            assert_eq!(single_block(&enc), blocks == 1, "{len} bytes");
            let mut out = vec![0u8; len / 5];
            let streamed = c.decode_prefix_into(&enc, &mut out, len as u64).unwrap();
            assert_eq!(streamed, blocks > 1, "{len} bytes");
            if streamed {
                assert_eq!(out, data[..len / 5]);
            }
        }
        // too short to hold a block header: not taken for a single block
        assert!(!single_block(&[0x28, 0xB5, 0x2F, 0xFD, 0x20, 0x05]));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn round_trip(data in prop::collection::vec(0u8..4, 0..3000), level in -3i32..6, checksum in any::<bool>()) {
            let c = ZstdCodec::new(ZstdConfig { level, checksum }).unwrap();
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
