//! `numcodecs.lzma` (bytes -> bytes): LZMA compression through liblzma (xz).
//!
//! Name: `numcodecs.lzma` (Zarr v2: `{"id": "lzma"}`). Configuration: numcodecs' `format`
//! (1 = xz, the default; 2 = the legacy `.lzma` "alone" format; 3 = raw, which needs
//! `filters`; 0 = detect xz or alone, for decoding only), `check` (-1, the default: CRC-64 for
//! xz and none otherwise; 0 none, 1 CRC-32, 4 CRC-64, 10 SHA-256; only xz stores one),
//! `preset` (0 to 9, optionally with the "extreme" bit `0x80000000`; default 6) and `filters`
//! (a filter chain as Python's `lzma` module takes it: objects with an `id` and the filter's
//! options; `preset` must then be absent). Encoding is Python's `lzma.compress(data, format,
//! check, preset, filters)`, so streams are byte-identical to numcodecs'.
//!
//! Decoding reads concatenated xz streams (as Python does), checks the integrity check, never
//! produces more than its bound, and refuses streams whose decoder would need more than 256
//! MiB of memory (the dictionary size in the header, which `xz -9e` keeps to 64 MiB).
//!
//! Filters: `{"id": 33}` (LZMA2) and `{"id": 4611686018427387905}` (LZMA1) take `preset`,
//! `dict_size`, `lc`, `lp`, `pb`, `mode` (1 fast, 2 normal), `nice_len`, `mf` (3, 4, 18, 19,
//! 20: HC3, HC4, BT2, BT3, BT4) and `depth`; `{"id": 3}` (delta) takes `dist` (1 to 256); the
//! branch filters x86 (4), PowerPC (5), IA-64 (6), ARM (7), ARM-Thumb (8) and SPARC (9) take
//! `start_offset`.
//!
//! ```
//! use zarr_codecs::{ChunkRepr, CodecChain, EncodeOptions};
//! use zarr_numcodecs::default_registry;
//! use zarr_meta::{DataType, FillValue};
//!
//! let repr = ChunkRepr::new(vec![1000], DataType::UInt8, FillValue::zero(DataType::UInt8));
//! let json = r#"[{"name": "bytes"},
//!                {"name": "numcodecs.lzma", "configuration": {"format": 1, "check": -1, "preset": 1}}]"#;
//! let chain = CodecChain::from_json(json, &repr, &default_registry())?;
//! let chunk = vec![7u8; 1000];
//! let stored = chain.encode(&chunk, EncodeOptions::WRITE_EMPTY)?.ok_or("skipped")?;
//! assert_eq!(&stored[..6], b"\xfd7zXZ\x00");
//! assert_eq!(chain.decode(&stored)?.as_bytes(), &chunk[..]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::io::Write;

use liblzma::bufread::XzDecoder;
use liblzma::stream::{Check, Filters, LzmaOptions, MatchFinder, Mode, Stream};
use liblzma::write::XzEncoder;
use serde::{Deserialize, Serialize};
use zarr_meta::{ExtensionDef, ExtensionPoint};

use zarr_codecs::ChunkRepr;
use zarr_codecs::CodecRegistry;
use zarr_codecs::{BytesToBytesCodec, Codec, Decoded};
use zarr_codecs::{CodecError, Result};

use super::invalid;
use zarr_codecs::stream;

/// The codec's name.
pub const NAME: &str = "numcodecs.lzma";

/// The most memory a decoder may use (liblzma's memory limit).
pub const DECODER_MEMLIMIT: u64 = 256 << 20;

/// `lzma.FORMAT_AUTO`, `FORMAT_XZ`, `FORMAT_ALONE`, `FORMAT_RAW`.
const FORMAT_AUTO: i64 = 0;
const FORMAT_XZ: i64 = 1;
const FORMAT_ALONE: i64 = 2;
const FORMAT_RAW: i64 = 3;

/// Python's `lzma.FILTER_*` ids.
const FILTER_LZMA1: u64 = 0x4000_0000_0000_0001;
const FILTER_LZMA2: u64 = 0x21;
const FILTER_DELTA: u64 = 0x03;
const FILTER_X86: u64 = 0x04;
const FILTER_POWERPC: u64 = 0x05;
const FILTER_IA64: u64 = 0x06;
const FILTER_ARM: u64 = 0x07;
const FILTER_ARMTHUMB: u64 = 0x08;
const FILTER_SPARC: u64 = 0x09;

/// liblzma's `LZMA_PRESET_EXTREME`.
const PRESET_EXTREME: u32 = 0x8000_0000;

/// One filter of a chain, as Python's `lzma` module takes it (`{"id": 33, "preset": 9}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LzmaFilter {
    /// The filter id (`lzma.FILTER_LZMA2` = 33, ...).
    pub id: u64,
    /// LZMA1/2: the preset the options start from (default 6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<u32>,
    /// LZMA1/2: the dictionary size in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dict_size: Option<u32>,
    /// LZMA1/2: literal context bits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lc: Option<u32>,
    /// LZMA1/2: literal position bits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lp: Option<u32>,
    /// LZMA1/2: position bits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pb: Option<u32>,
    /// LZMA1/2: 1 (fast) or 2 (normal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<u32>,
    /// LZMA1/2: the nice length of a match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nice_len: Option<u32>,
    /// LZMA1/2: the match finder (3, 4, 18, 19, 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mf: Option<u32>,
    /// LZMA1/2: the match finder's maximum search depth (0: automatic).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
    /// Delta: the distance in bytes, 1 to 256.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dist: Option<u32>,
    /// Branch filters: the start offset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_offset: Option<u32>,
}

/// The configuration of `numcodecs.lzma`: numcodecs'
/// `LZMA(format=1, check=-1, preset=None, filters=None)`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LzmaConfig {
    /// The container format: 1 xz (default), 2 alone, 3 raw, 0 automatic (decoding only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<i64>,
    /// The integrity check: -1 (default), 0, 1, 4 or 10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<i64>,
    /// The preset, 0 to 9 (with `0x80000000` for "extreme"); default 6.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<u32>,
    /// A custom filter chain (then no `preset`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filters: Option<Vec<LzmaFilter>>,
}

crate::config::codec_def!(LzmaConfig => NAME);

/// The `numcodecs.lzma` codec.
#[derive(Debug, Clone)]
pub struct LzmaCodec {
    config: LzmaConfig,
    format: i64,
    check: Check,
    preset: u32,
}

fn check_preset(preset: u32) -> Result<u32> {
    if preset & !PRESET_EXTREME > 9 {
        return Err(invalid(
            NAME,
            format!("preset {preset} is outside 0..=9 (with 0x80000000 for extreme)"),
        ));
    }
    Ok(preset)
}

impl LzmaCodec {
    /// The codec with `config`.
    ///
    /// # Errors
    /// [`zarr_meta::MetaError::InvalidConfiguration`] for an unknown format, check, preset
    /// or filter, a check for a format without one, `preset` together with `filters`, the raw
    /// format without filters, or filter options that do not belong to the filter or are out of
    /// range.
    pub fn new(config: LzmaConfig) -> Result<Self> {
        let format = config.format.unwrap_or(FORMAT_XZ);
        if !(FORMAT_AUTO..=FORMAT_RAW).contains(&format) {
            return Err(invalid(
                NAME,
                format!("format {format} is not 0 (auto), 1 (xz), 2 (alone) or 3 (raw)"),
            ));
        }
        let check = match (config.check.unwrap_or(-1), format) {
            (-1, FORMAT_XZ) => Check::Crc64,
            (-1 | 0, _) => Check::None,
            (1, FORMAT_XZ) => Check::Crc32,
            (4, FORMAT_XZ) => Check::Crc64,
            (10, FORMAT_XZ) => Check::Sha256,
            (c @ (1 | 4 | 10), _) => {
                return Err(invalid(
                    NAME,
                    format!("check {c} needs format 1 (xz): only xz streams store a check"),
                ))
            }
            (c, _) => {
                return Err(invalid(
                    NAME,
                    format!("check {c} is not -1, 0 (none), 1 (crc32), 4 (crc64) or 10 (sha256)"),
                ))
            }
        };
        if config.preset.is_some() && config.filters.is_some() {
            return Err(invalid(NAME, "give either a preset or filters, not both"));
        }
        let preset = check_preset(config.preset.unwrap_or(6))?;
        match (&config.filters, format) {
            (None, FORMAT_RAW) => {
                return Err(invalid(NAME, "format 3 (raw) needs a filter chain"));
            }
            (Some(f), FORMAT_ALONE) if !(f.len() == 1 && f[0].id == FILTER_LZMA1) => {
                return Err(invalid(
                    NAME,
                    "format 2 (alone) takes exactly one LZMA1 filter",
                ));
            }
            (Some(f), _) => {
                // built once to check every option
                filter_chain(f)?;
            }
            _ => {}
        }
        Ok(LzmaCodec {
            config,
            format,
            check,
            preset,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &LzmaConfig {
        &self.config
    }

    /// The encoding stream of this configuration.
    fn encoder(&self) -> Result<Stream> {
        let fail = |e: liblzma::stream::Error| CodecError::Compressor {
            codec: NAME,
            source: e.into(),
        };
        match (self.format, &self.config.filters) {
            (FORMAT_XZ, None) => Stream::new_easy_encoder(self.preset, self.check).map_err(fail),
            (FORMAT_XZ, Some(f)) => {
                Stream::new_stream_encoder(&filter_chain(f)?, self.check).map_err(fail)
            }
            (FORMAT_ALONE, None) => {
                let opts = LzmaOptions::new_preset(self.preset).map_err(fail)?;
                Stream::new_lzma_encoder(&opts).map_err(fail)
            }
            (FORMAT_ALONE, Some(f)) => {
                Stream::new_lzma_encoder(&lzma_options(&f[0])?).map_err(fail)
            }
            (FORMAT_RAW, Some(f)) => Stream::new_raw_encoder(&filter_chain(f)?).map_err(fail),
            _ => Err(CodecError::Compress {
                codec: NAME,
                reason: "format 0 (auto) only decodes: give format 1, 2 or 3 to encode".into(),
            }),
        }
    }

    /// The decoding stream of this configuration.
    fn decoder(&self) -> Result<Stream> {
        let fail = |e: liblzma::stream::Error| CodecError::Decompress {
            codec: NAME,
            source: e.into(),
        };
        let concatenated = liblzma::stream::CONCATENATED;
        match (self.format, &self.config.filters) {
            (FORMAT_XZ, _) => Stream::new_stream_decoder(DECODER_MEMLIMIT, concatenated),
            (FORMAT_ALONE, _) => Stream::new_lzma_decoder(DECODER_MEMLIMIT),
            (FORMAT_RAW, Some(f)) => {
                check_decoder_memory(f)?;
                Stream::new_raw_decoder(&filter_chain(f)?)
            }
            _ => Stream::new_auto_decoder(DECODER_MEMLIMIT, concatenated),
        }
        .map_err(fail)
    }
}

/// A raw decoder takes its dictionary size from the configuration, not the stream: the same
/// memory limit as the others.
fn check_decoder_memory(filters: &[LzmaFilter]) -> Result<()> {
    for f in filters {
        if u64::from(f.dict_size.unwrap_or(0)) > DECODER_MEMLIMIT {
            return Err(CodecError::corrupt(
                NAME,
                format!(
                    "a dictionary of {} bytes is more than the decoder's memory limit of {DECODER_MEMLIMIT}",
                    f.dict_size.unwrap_or(0)
                ),
            ));
        }
    }
    Ok(())
}

/// The options of an LZMA1/2 filter: its preset, then its settings.
fn lzma_options(f: &LzmaFilter) -> Result<LzmaOptions> {
    let preset = check_preset(f.preset.unwrap_or(6))?;
    let mut o = LzmaOptions::new_preset(preset)
        .map_err(|e| invalid(NAME, format!("preset {preset}: {e}")))?;
    if let Some(v) = f.dict_size {
        if v < 4096 {
            return Err(invalid(NAME, format!("dict_size {v} is below 4096")));
        }
        o.dict_size(v);
    }
    if let Some(v) = f.lc {
        if v > 4 {
            return Err(invalid(NAME, format!("lc {v} is outside 0..=4")));
        }
        o.literal_context_bits(v);
    }
    if let Some(v) = f.lp {
        if v > 4 {
            return Err(invalid(NAME, format!("lp {v} is outside 0..=4")));
        }
        o.literal_position_bits(v);
    }
    if let Some(v) = f.pb {
        if v > 4 {
            return Err(invalid(NAME, format!("pb {v} is outside 0..=4")));
        }
        o.position_bits(v);
    }
    if let Some(v) = f.mode {
        o.mode(match v {
            1 => Mode::Fast,
            2 => Mode::Normal,
            _ => {
                return Err(invalid(
                    NAME,
                    format!("mode {v} is not 1 (fast) or 2 (normal)"),
                ))
            }
        });
    }
    if let Some(v) = f.nice_len {
        if !(2..=273).contains(&v) {
            return Err(invalid(NAME, format!("nice_len {v} is outside 2..=273")));
        }
        o.nice_len(v);
    }
    if let Some(v) = f.mf {
        o.match_finder(match v {
            0x03 => MatchFinder::HashChain3,
            0x04 => MatchFinder::HashChain4,
            0x12 => MatchFinder::BinaryTree2,
            0x13 => MatchFinder::BinaryTree3,
            0x14 => MatchFinder::BinaryTree4,
            _ => {
                return Err(invalid(
                    NAME,
                    format!("mf {v} is not 3, 4, 18, 19 or 20 (HC3, HC4, BT2, BT3, BT4)"),
                ))
            }
        });
    }
    if let Some(v) = f.depth {
        o.depth(v);
    }
    Ok(o)
}

/// The filter chain `filters` describes.
fn filter_chain(filters: &[LzmaFilter]) -> Result<Filters> {
    if filters.is_empty() || filters.len() > 4 {
        return Err(invalid(NAME, "a filter chain has 1 to 4 filters"));
    }
    let mut chain = Filters::new();
    let bad_options = |f: &LzmaFilter, what: &str| {
        invalid(
            NAME,
            format!("filter {:#x} ({what}) takes no such option: {f:?}", f.id),
        )
    };
    let lzma_keys = |f: &LzmaFilter| f.dist.is_none() && f.start_offset.is_none();
    let no_lzma_keys = |f: &LzmaFilter| {
        f.preset.is_none()
            && f.dict_size.is_none()
            && f.lc.is_none()
            && f.lp.is_none()
            && f.pb.is_none()
            && f.mode.is_none()
            && f.nice_len.is_none()
            && f.mf.is_none()
            && f.depth.is_none()
    };
    let props = |e: liblzma::stream::Error| invalid(NAME, e.to_string());
    for (i, f) in filters.iter().enumerate() {
        let last = i == filters.len() - 1;
        match f.id {
            FILTER_LZMA1 | FILTER_LZMA2 => {
                if !lzma_keys(f) {
                    return Err(bad_options(f, "LZMA"));
                }
                if !last {
                    return Err(invalid(NAME, "the LZMA filter must come last in the chain"));
                }
                let o = lzma_options(f)?;
                if f.id == FILTER_LZMA1 {
                    chain.lzma1(&o);
                } else {
                    chain.lzma2(&o);
                }
            }
            FILTER_DELTA => {
                if !no_lzma_keys(f) || f.start_offset.is_some() {
                    return Err(bad_options(f, "delta"));
                }
                let dist = f.dist.unwrap_or(1);
                if !(1..=256).contains(&dist) {
                    return Err(invalid(NAME, format!("dist {dist} is outside 1..=256")));
                }
                chain.delta_properties(&[(dist - 1) as u8]).map_err(props)?;
            }
            FILTER_X86 | FILTER_POWERPC | FILTER_IA64 | FILTER_ARM | FILTER_ARMTHUMB
            | FILTER_SPARC => {
                if !no_lzma_keys(f) || f.dist.is_some() {
                    return Err(bad_options(f, "branch"));
                }
                let offset = f.start_offset.unwrap_or(0);
                let p = if offset == 0 {
                    Vec::new()
                } else {
                    offset.to_le_bytes().to_vec()
                };
                match f.id {
                    FILTER_X86 => chain.x86_properties(&p),
                    FILTER_POWERPC => chain.powerpc_properties(&p),
                    FILTER_IA64 => chain.ia64_properties(&p),
                    FILTER_ARM => chain.arm_properties(&p),
                    FILTER_ARMTHUMB => chain.arm_thumb_properties(&p),
                    _ => chain.sparc_properties(&p),
                }
                .map_err(props)?;
            }
            id => return Err(invalid(NAME, format!("unknown filter id {id:#x}"))),
        }
        if last && !matches!(f.id, FILTER_LZMA1 | FILTER_LZMA2) {
            return Err(invalid(NAME, "a filter chain must end with an LZMA filter"));
        }
    }
    Ok(chain)
}

/// Builds `numcodecs.lzma` from its definition.
pub(crate) fn factory(def: &ExtensionDef, _: &ChunkRepr, _: &CodecRegistry) -> Result<Codec> {
    let config: LzmaConfig = def.parse_configuration(ExtensionPoint::Codec)?;
    Ok(Codec::BytesToBytes(Box::new(LzmaCodec::new(config)?)))
}

/// A generous worst case: LZMA2 stores incompressible data in chunks of 64 KiB with 3 bytes
/// of header each; the xz container adds at most a few hundred bytes.
fn lzma_bound(n: u64) -> u64 {
    n.saturating_add(n / 1024 * 8).saturating_add(1024)
}

/// The input bytes the decoder has not consumed.
fn unread(decoder: &XzDecoder<&[u8]>) -> usize {
    decoder.get_ref().len()
}

impl BytesToBytesCodec for LzmaCodec {
    fn name(&self) -> &'static str {
        NAME
    }

    fn to_def(&self) -> ExtensionDef {
        self.config.clone().into()
    }

    fn encoded_size_bound(&self, decoded_bound: u64) -> u64 {
        lzma_bound(decoded_bound)
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        let options = self.encoder()?;
        stream::compress(NAME, lzma_bound(input.len() as u64), |out| {
            let mut encoder = XzEncoder::new_stream(out, options);
            encoder.write_all(input)?;
            encoder.finish()
        })
    }

    fn decode<'a>(&self, input: Decoded<'a>, max_decoded: u64) -> Result<Decoded<'a>> {
        let input = input.as_slice();
        let hint = input.len().saturating_mul(4);
        let buf = stream::decode(
            NAME,
            XzDecoder::new_stream(input, self.decoder()?),
            unread,
            hint,
            max_decoded,
        )?;
        Ok(Decoded::Owned(buf))
    }

    fn decode_into(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        stream::decode_into(
            NAME,
            XzDecoder::new_stream(input, self.decoder()?),
            unread,
            out,
        )
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

    fn config(json: &str) -> LzmaConfig {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn config_round_trips_and_bad_ones_are_refused() {
        for json in [
            r#"{"name":"numcodecs.lzma","configuration":{"format":1,"check":-1,"preset":9}}"#,
            r#"{"name":"numcodecs.lzma","configuration":{}}"#,
            r#"{"name":"numcodecs.lzma","configuration":{"format":3,"filters":[{"id":3,"dist":4},{"id":33,"preset":1,"dict_size":65536}]}}"#,
            r#"{"name":"numcodecs.lzma","configuration":{"preset":2147483654}}"#,
        ] {
            let back = serde_json::to_string(&codec(json).unwrap().to_def()).unwrap();
            assert_eq!(back, json);
        }
        for bad in [
            r#"{"format":7}"#,
            r#"{"check":2}"#,
            r#"{"format":2,"check":4}"#,
            r#"{"preset":10}"#,
            r#"{"format":3}"#,
            r#"{"preset":1,"filters":[{"id":33}]}"#,
            r#"{"filters":[{"id":33,"dist":1}]}"#,
            r#"{"filters":[{"id":33},{"id":3}]}"#,
            r#"{"filters":[{"id":3}]}"#,
            r#"{"filters":[{"id":99},{"id":33}]}"#,
            r#"{"filters":[{"id":3,"dist":300},{"id":33}]}"#,
            r#"{"filters":[{"id":33,"mf":7}]}"#,
            r#"{"filters":[{"id":33,"x":7}]}"#,
            r#"{"filters":[]}"#,
            r#"{"format":2,"filters":[{"id":33}]}"#,
        ] {
            let json = format!(r#"{{"name":"numcodecs.lzma","configuration":{bad}}}"#);
            let err = zarr_testkit::report(&codec(&json).unwrap_err());
            assert!(
                err.starts_with("invalid configuration for codec \"numcodecs.lzma\""),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn every_format_round_trips() {
        let data: Vec<u8> = (0..20_000u32)
            .map(|i| (i % 251) as u8 ^ (i / 97) as u8)
            .collect();
        for json in [
            r#"{}"#,
            r#"{"check":0}"#,
            r#"{"check":1}"#,
            r#"{"check":10,"preset":0}"#,
            r#"{"format":2}"#,
            r#"{"format":2,"filters":[{"id":4611686018427387905,"lc":0,"lp":2,"pb":2}]}"#,
            r#"{"format":3,"filters":[{"id":33,"preset":1}]}"#,
            r#"{"format":3,"filters":[{"id":3,"dist":2},{"id":4,"start_offset":16},{"id":33,"mode":1,"nice_len":32,"mf":4,"depth":8}]}"#,
            r#"{"filters":[{"id":7},{"id":33,"preset":2147483648}]}"#,
        ] {
            let c = LzmaCodec::new(config(json)).unwrap();
            let enc = c.encode(&data).unwrap();
            assert!(enc.len() < data.len(), "{json}");
            let dec = c
                .decode(Decoded::Borrowed(&enc), data.len() as u64)
                .unwrap();
            assert_eq!(dec.as_slice(), &data[..], "{json}");
            let mut out = vec![0u8; data.len()];
            c.decode_into(&enc, &mut out).unwrap();
            assert_eq!(out, data, "{json}");
        }
        // auto decodes xz and alone, and refuses to encode
        let auto = LzmaCodec::new(config(r#"{"format":0}"#)).unwrap();
        assert!(auto.encode(&data).is_err());
        for json in [r#"{}"#, r#"{"format":2}"#] {
            let enc = LzmaCodec::new(config(json)).unwrap().encode(&data).unwrap();
            let dec = auto.decode(Decoded::Borrowed(&enc), 20_000).unwrap();
            assert_eq!(dec.as_slice(), &data[..]);
        }
    }

    #[test]
    fn corrupt_truncated_and_oversized_streams_are_errors() {
        let c = LzmaCodec::new(LzmaConfig::default()).unwrap();
        let data: Vec<u8> = (0..5000u32).map(|i| (i % 13) as u8).collect();
        let enc = c.encode(&data).unwrap();
        assert!(matches!(
            c.decode(Decoded::Borrowed(&enc), 4999),
            Err(CodecError::ExceedsBound { .. })
        ));
        assert!(c.decode_into(&enc, &mut [0u8; 4999]).is_err());
        assert!(matches!(
            c.decode_into(&enc, &mut [0u8; 5001]),
            Err(CodecError::SizeMismatch { .. })
        ));
        for cut in [0, 3, 12, enc.len() / 2, enc.len() - 1] {
            assert!(c.decode(Decoded::Borrowed(&enc[..cut]), 5000).is_err());
        }
        let mut bad = enc.clone();
        let n = bad.len();
        bad[n / 2] ^= 0x10;
        assert!(c.decode(Decoded::Borrowed(&bad), 5000).is_err());
        let mut trailing = enc.clone();
        trailing.extend_from_slice(b"junk");
        assert!(c.decode(Decoded::Borrowed(&trailing), 10_000).is_err());
        // concatenated streams, as Python reads them
        let two = [enc.clone(), enc.clone()].concat();
        assert_eq!(
            c.decode(Decoded::Borrowed(&two), 10_000).unwrap().len(),
            10_000
        );
        // an alone header claiming a 3 GiB dictionary is refused by the memory limit
        let alone = LzmaCodec::new(config(r#"{"format":2}"#)).unwrap();
        let mut big = alone.encode(&data).unwrap();
        big[1..5].copy_from_slice(&(3u32 << 30).to_le_bytes());
        let err = alone.decode(Decoded::Borrowed(&big), 5000).unwrap_err();
        assert!(
            zarr_testkit::report(&err).contains("numcodecs.lzma"),
            "{err}"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(16))]
        #[test]
        fn round_trip(data in prop::collection::vec(0u8..5, 0..3000), preset in 0u32..4) {
            let c = LzmaCodec::new(LzmaConfig { preset: Some(preset), ..Default::default() }).unwrap();
            let enc = c.encode(&data).unwrap();
            prop_assert!(enc.len() as u64 <= c.encoded_size_bound(data.len() as u64));
            let dec = c.decode(Decoded::Borrowed(&enc), data.len() as u64).unwrap();
            prop_assert_eq!(dec.as_slice(), &data[..]);
        }
    }
}
