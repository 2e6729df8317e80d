//! `numcodecs.pcodec` and `pcodec` (array -> bytes): [pcodec](https://github.com/pcodec/pcodec)
//! (pco), lossless compression of numerical sequences.
//!
//! Names: `numcodecs.pcodec` (what zarr-python writes; Zarr v2: `{"id": "pcodec"}`) and
//! `pcodec` (the zarr-extensions name zarrs reads and writes); both take numcodecs'
//! configuration: `level` (0 to 12, default 8), `mode_spec` (`"auto"`, the default, or
//! `"classic"`), `delta_spec` (`"auto"`, the default, `"none"`, `"try_consecutive"` or
//! `"try_lookback"`), `paging_spec` (`"equal_pages_up_to"`, the only one), `delta_encoding_order`
//! (0 to 7: with `delta_spec` `"auto"` it means `"try_consecutive"` of that order, as in
//! numcodecs) and `equal_pages_up_to` (default 262144).
//!
//! The chunk's elements, in C order, are one pco standalone file (`pco::standalone`, what
//! numcodecs' `standalone.simple_compress` writes); the pco crate is the implementation the
//! Python package wraps, at the same version, so encodings are byte-identical. Data types:
//! `int16` to `int64`, `uint16` to `uint64`, `float16` to `float64` (pco refuses 8-bit data
//! unless told otherwise, and numcodecs does not tell it). Decoding must produce exactly the
//! chunk's element count; a stream with more or fewer numbers is an error. pco checks its
//! headers before allocating (a chunk holds at most 2^24 numbers).
//!
//! ```
//! use zarr_codecs::{ChunkRepr, CodecChain, EncodeOptions};
//! use zarr_numcodecs::default_registry;
//! use zarr_meta::{DataType, FillValue};
//!
//! let repr = ChunkRepr::new(vec![100], DataType::Int64, FillValue::zero(DataType::Int64));
//! let json = r#"[{"name": "numcodecs.pcodec", "configuration": {"level": 8}}]"#;
//! let chain = CodecChain::from_json(json, &repr, &default_registry())?;
//! let chunk: Vec<u8> = (0..100i64).flat_map(|v| (v * 1000).to_ne_bytes()).collect();
//! let stored = chain.encode(&chunk, EncodeOptions::WRITE_EMPTY)?.ok_or("skipped")?;
//! assert!(stored.len() < chunk.len() / 4);
//! assert_eq!(&stored[..4], b"pco!");
//! assert_eq!(chain.decode(&stored)?.as_bytes(), &chunk[..]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::any::Any;

use pco::standalone::guarantee;
use pco::{ChunkConfig, DeltaSpec, ModeSpec, PagingSpec};
use serde::{Deserialize, Serialize};
use zarr_meta::{DataType, ExtensionDef, ExtensionPoint};

use zarr_codecs::ChunkRepr;
use zarr_codecs::CodecRegistry;
use zarr_codecs::{ArrayToBytesCodec, Codec};
use zarr_codecs::{CodecError, Result};

use super::invalid;

/// The zarr-extensions name (zarrs).
pub const NAME: &str = "pcodec";
/// The name zarr-python writes.
pub const NUMCODECS_NAME: &str = "numcodecs.pcodec";

/// numcodecs' default level.
pub const DEFAULT_LEVEL: u32 = 8;
/// numcodecs' default page size.
pub const DEFAULT_MAX_PAGE_N: u64 = 262_144;

/// How pco picks its mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PcodecModeSpec {
    /// Detects a good mode.
    Auto,
    /// Only the classic mode.
    Classic,
}

/// How pco picks its delta encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PcodecDeltaSpec {
    /// Detects a good delta encoding.
    Auto,
    /// No delta encoding.
    None,
    /// Consecutive deltas of `delta_encoding_order`.
    TryConsecutive,
    /// Deltas against an earlier element found by lookback.
    TryLookback,
}

/// How pco splits a chunk into pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PcodecPagingSpec {
    /// Equal pages of at most `equal_pages_up_to` numbers.
    EqualPagesUpTo,
}

/// The configuration of `numcodecs.pcodec` and `pcodec`: numcodecs' `PCodec(level=8, *,
/// mode_spec="auto", delta_spec="auto", paging_spec="equal_pages_up_to",
/// delta_encoding_order=None, equal_pages_up_to=262144)`.
///
/// As a codec definition (`ExtensionDef::from(config)`) it names `numcodecs.pcodec`, what
/// zarr-python writes and zarrs reads too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PcodecConfig {
    /// The compression level, 0 to 12 (default 8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<u32>,
    /// The mode spec (default `"auto"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode_spec: Option<PcodecModeSpec>,
    /// The delta spec (default `"auto"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta_spec: Option<PcodecDeltaSpec>,
    /// The paging spec (default `"equal_pages_up_to"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paging_spec: Option<PcodecPagingSpec>,
    /// The delta encoding order, 0 to 7, for `"try_consecutive"` (or `"auto"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta_encoding_order: Option<u32>,
    /// The most numbers in a page (default 262144).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equal_pages_up_to: Option<u64>,
}

// the name zarr-python writes; zarrs' `pcodec` takes the same configuration
// (`ExtensionDef::from_config(pcodec::NAME, &config)`)
crate::config::codec_def!(PcodecConfig => NUMCODECS_NAME);

/// The `numcodecs.pcodec` / `pcodec` codec, built for one chunk representation.
#[derive(Debug, Clone)]
pub struct PcodecCodec {
    name: &'static str,
    config: PcodecConfig,
    chunk_config: ChunkConfig,
    repr: ChunkRepr,
    len: usize,
}

/// Runs `$body` with `$T` pco's number type for `$t` and `$L` its latent type.
macro_rules! with_number {
    ($t:expr, $T:ident, $L:ident => $body:expr, $other:expr) => {
        match $t {
            DataType::Int16 => {
                #[allow(dead_code)]
                type $T = i16;
                #[allow(dead_code)]
                type $L = u16;
                $body
            }
            DataType::Int32 => {
                #[allow(dead_code)]
                type $T = i32;
                #[allow(dead_code)]
                type $L = u32;
                $body
            }
            DataType::Int64 => {
                #[allow(dead_code)]
                type $T = i64;
                #[allow(dead_code)]
                type $L = u64;
                $body
            }
            DataType::UInt16 => {
                #[allow(dead_code)]
                type $T = u16;
                #[allow(dead_code)]
                type $L = u16;
                $body
            }
            DataType::UInt32 => {
                #[allow(dead_code)]
                type $T = u32;
                #[allow(dead_code)]
                type $L = u32;
                $body
            }
            DataType::UInt64 => {
                #[allow(dead_code)]
                type $T = u64;
                #[allow(dead_code)]
                type $L = u64;
                $body
            }
            DataType::Float16 => {
                #[allow(dead_code)]
                type $T = half::f16;
                #[allow(dead_code)]
                type $L = u16;
                $body
            }
            DataType::Float32 => {
                #[allow(dead_code)]
                type $T = f32;
                #[allow(dead_code)]
                type $L = u32;
                $body
            }
            DataType::Float64 => {
                #[allow(dead_code)]
                type $T = f64;
                #[allow(dead_code)]
                type $L = u64;
                $body
            }
            _ => $other,
        }
    };
}

impl PcodecCodec {
    /// The codec named `name` (`"numcodecs.pcodec"` or `"pcodec"`) with `config`, for chunks
    /// of `repr`.
    ///
    /// # Errors
    /// [`zarr_meta::MetaError::InvalidConfiguration`] for a level above 12, a delta encoding
    /// order above 7 or with a delta spec other than `"auto"` or `"try_consecutive"`,
    /// `"try_consecutive"` without an order, a page size of 0, or a data type pco does not
    /// encode.
    pub fn new(name: &'static str, config: PcodecConfig, repr: &ChunkRepr) -> Result<Self> {
        let level = config.level.unwrap_or(DEFAULT_LEVEL);
        if level > 12 {
            return Err(invalid(name, format!("level {level} is outside 0..=12")));
        }
        let order = config.delta_encoding_order;
        if let Some(o) = order {
            if o > 7 {
                return Err(invalid(
                    name,
                    format!("delta_encoding_order {o} is outside 0..=7"),
                ));
            }
        }
        let delta_spec = match (config.delta_spec.unwrap_or(PcodecDeltaSpec::Auto), order) {
            (PcodecDeltaSpec::Auto | PcodecDeltaSpec::TryConsecutive, Some(o)) => {
                DeltaSpec::TryConsecutive(o as usize)
            }
            (PcodecDeltaSpec::TryConsecutive, None) => {
                return Err(invalid(
                    name,
                    "delta_spec \"try_consecutive\" needs a delta_encoding_order",
                ))
            }
            (_, Some(_)) => {
                return Err(invalid(
                    name,
                    "delta_encoding_order can only be set for delta_spec \"try_consecutive\" (or \"auto\")",
                ))
            }
            (PcodecDeltaSpec::Auto, None) => DeltaSpec::Auto,
            (PcodecDeltaSpec::None, None) => DeltaSpec::NoOp,
            (PcodecDeltaSpec::TryLookback, None) => DeltaSpec::TryLookback,
        };
        let mode_spec = match config.mode_spec.unwrap_or(PcodecModeSpec::Auto) {
            PcodecModeSpec::Auto => ModeSpec::Auto,
            PcodecModeSpec::Classic => ModeSpec::Classic,
        };
        let page = config.equal_pages_up_to.unwrap_or(DEFAULT_MAX_PAGE_N);
        let page = usize::try_from(page)
            .ok()
            .filter(|&p| p > 0)
            .ok_or_else(|| invalid(name, format!("equal_pages_up_to {page} is not a page size")))?;
        let supported = with_number!(repr.data_type, T, L => true, false);
        if !supported {
            return Err(invalid(
                name,
                format!(
                    "pcodec encodes 16- to 64-bit integers and floats, not {}",
                    repr.data_type
                ),
            ));
        }
        let len = repr.validate()?;
        let chunk_config = ChunkConfig::default()
            .with_compression_level(level as usize)
            .with_mode_spec(mode_spec)
            .with_delta_spec(delta_spec)
            .with_paging_spec(PagingSpec::EqualPagesUpTo(page));
        Ok(PcodecCodec {
            name,
            config,
            chunk_config,
            repr: repr.clone(),
            len,
        })
    }

    /// The configuration.
    pub fn config(&self) -> PcodecConfig {
        self.config
    }

    fn n(&self) -> usize {
        self.len / self.repr.element_size()
    }

    fn page(&self) -> usize {
        match self.chunk_config.paging_spec {
            PagingSpec::EqualPagesUpTo(p) => p,
            _ => DEFAULT_MAX_PAGE_N as usize,
        }
    }
}

fn build(name: &'static str, def: &ExtensionDef, repr: &ChunkRepr) -> Result<Codec> {
    let config: PcodecConfig = def.parse_configuration(ExtensionPoint::Codec)?;
    Ok(Codec::ArrayToBytes(Box::new(PcodecCodec::new(
        name, config, repr,
    )?)))
}

/// Builds `pcodec` from its definition.
pub(crate) fn factory(def: &ExtensionDef, repr: &ChunkRepr, _: &CodecRegistry) -> Result<Codec> {
    build(NAME, def, repr)
}

/// Builds `numcodecs.pcodec` from its definition.
pub(crate) fn numcodecs_factory(
    def: &ExtensionDef,
    repr: &ChunkRepr,
    _: &CodecRegistry,
) -> Result<Codec> {
    build(NUMCODECS_NAME, def, repr)
}

/// pco's worst-case file size for `n` numbers of latent type `L` in pages of at most `page`
/// (computed without listing the pages, so a huge chunk costs nothing).
fn bound<L: pco::data_types::Latent>(n: usize, page: usize) -> u64 {
    let pages = n.div_ceil(page) as u64;
    let per_page = guarantee::chunk_size::<L>(page.min(n.max(1))) as u64;
    (guarantee::header_size() as u64 + 1).saturating_add(pages.max(1).saturating_mul(per_page))
}

fn encode_typed<T: pco::data_types::Number + bytemuck::Pod>(
    input: &[u8],
    config: &ChunkConfig,
) -> pco::errors::PcoResult<Vec<u8>> {
    match bytemuck::try_cast_slice::<u8, T>(input) {
        Ok(values) => pco::standalone::simple_compress(values, config),
        Err(_) => {
            pco::standalone::simple_compress(&bytemuck::pod_collect_to_vec::<u8, T>(input), config)
        }
    }
}

fn decode_typed<T: pco::data_types::Number + bytemuck::Pod>(
    name: &'static str,
    input: &[u8],
    out: &mut [u8],
) -> Result<()> {
    let corrupt = |e: pco::errors::PcoError| CodecError::Decompress {
        codec: name,
        source: e.into(),
    };
    let n = out.len() / std::mem::size_of::<T>();
    let check = |p: pco::Progress| -> Result<()> {
        if p.n_processed != n || !p.finished {
            return Err(CodecError::corrupt(
                name,
                format!(
                    "the stream holds {} numbers, the chunk {n}",
                    if p.finished {
                        p.n_processed.to_string()
                    } else {
                        "more".to_string()
                    }
                ),
            ));
        }
        Ok(())
    };
    match bytemuck::try_cast_slice_mut::<u8, T>(out) {
        Ok(values) => {
            check(pco::standalone::simple_decompress_into(input, values).map_err(corrupt)?)
        }
        Err(_) => {
            let mut values = vec![T::default(); n];
            check(pco::standalone::simple_decompress_into(input, &mut values).map_err(corrupt)?)?;
            out.copy_from_slice(bytemuck::cast_slice(&values));
            Ok(())
        }
    }
}

impl ArrayToBytesCodec for PcodecCodec {
    fn name(&self) -> &'static str {
        self.name
    }

    fn to_def(&self) -> ExtensionDef {
        crate::config::def(self.name, &self.config)
    }

    fn decoded_repr(&self) -> &ChunkRepr {
        &self.repr
    }

    fn encoded_size_bound(&self) -> u64 {
        let (n, page) = (self.n(), self.page());
        with_number!(self.repr.data_type, T, L => bound::<L>(n, page), u64::MAX)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        if input.len() != self.len {
            return Err(CodecError::BufferLength {
                what: "the chunk",
                expected: self.len as u64,
                got: input.len() as u64,
            });
        }
        let config = &self.chunk_config;
        with_number!(self.repr.data_type, T, L => encode_typed::<T>(input, config), Ok(Vec::new()))
            .map_err(|e| CodecError::Compressor {
                codec: self.name,
                source: e.into(),
            })
    }

    fn decode_into(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        if out.len() != self.len {
            return Err(CodecError::BufferLength {
                what: "the output buffer",
                expected: self.len as u64,
                got: out.len() as u64,
            });
        }
        with_number!(self.repr.data_type, T, L => decode_typed::<T>(self.name, input, out), Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::default_registry;
    use proptest::prelude::*;
    use zarr_meta::FillValue;

    fn repr(t: DataType, n: u64) -> ChunkRepr {
        ChunkRepr::new(vec![n], t, FillValue::zero(t))
    }

    fn codec(json: &str, r: &ChunkRepr) -> Result<Codec> {
        let def: ExtensionDef = serde_json::from_str(json).unwrap();
        let registry = default_registry();
        registry.get(&def.name).unwrap().build(&def, r, &registry)
    }

    #[test]
    fn config_round_trips_and_bad_ones_are_refused() {
        let r = repr(DataType::Float32, 10);
        for json in [
            r#"{"name":"numcodecs.pcodec","configuration":{"level":8,"mode_spec":"auto","delta_spec":"auto","paging_spec":"equal_pages_up_to","equal_pages_up_to":262144}}"#,
            r#"{"name":"pcodec","configuration":{"level":3,"delta_spec":"try_consecutive","delta_encoding_order":2}}"#,
            r#"{"name":"numcodecs.pcodec","configuration":{}}"#,
        ] {
            let back = serde_json::to_string(&codec(json, &r).unwrap().to_def()).unwrap();
            assert_eq!(back, json);
        }
        for bad in [
            r#"{"level":13}"#,
            r#"{"delta_encoding_order":8}"#,
            r#"{"delta_spec":"none","delta_encoding_order":1}"#,
            r#"{"delta_spec":"try_consecutive"}"#,
            r#"{"mode_spec":"try_float_mult"}"#,
            r#"{"paging_spec":"exact"}"#,
            r#"{"equal_pages_up_to":0}"#,
            r#"{"id":"pcodec"}"#,
        ] {
            let json = format!(r#"{{"name":"numcodecs.pcodec","configuration":{bad}}}"#);
            let err = zarr_testkit::report(&codec(&json, &r).unwrap_err());
            assert!(
                err.starts_with("invalid configuration for codec \"numcodecs.pcodec\""),
                "{bad}: {err}"
            );
        }
        for t in [DataType::UInt8, DataType::Bool, DataType::Complex64] {
            assert!(codec(r#"{"name":"pcodec"}"#, &repr(t, 4)).is_err());
        }
    }

    #[test]
    fn corrupt_truncated_and_wrong_sized_streams_are_errors() {
        let r = repr(DataType::Int32, 1000);
        let Codec::ArrayToBytes(c) = codec(r#"{"name":"pcodec"}"#, &r).unwrap() else {
            panic!("array -> bytes")
        };
        let chunk: Vec<u8> = (0..1000i32).flat_map(|v| (v * v).to_ne_bytes()).collect();
        let enc = c.encode(&chunk).unwrap();
        assert!(enc.len() as u64 <= c.encoded_size_bound());
        let mut out = vec![0u8; chunk.len()];
        c.decode_into(&enc, &mut out).unwrap();
        assert_eq!(out, chunk);
        for cut in [0, 3, 8, enc.len() / 2, enc.len() - 1] {
            assert!(c.decode_into(&enc[..cut], &mut out).is_err(), "{cut}");
        }
        // a stream of another length
        let small = repr(DataType::Int32, 999);
        let Codec::ArrayToBytes(s) = codec(r#"{"name":"pcodec"}"#, &small).unwrap() else {
            panic!("array -> bytes")
        };
        assert!(s.decode_into(&enc, &mut vec![0u8; 999 * 4]).is_err());
        let big = repr(DataType::Int32, 1001);
        let Codec::ArrayToBytes(b) = codec(r#"{"name":"pcodec"}"#, &big).unwrap() else {
            panic!("array -> bytes")
        };
        assert!(b.decode_into(&enc, &mut vec![0u8; 1001 * 4]).is_err());
        // unaligned output
        let mut unaligned = vec![0u8; chunk.len() + 1];
        c.decode_into(&enc, &mut unaligned[1..]).unwrap();
        assert_eq!(&unaligned[1..], &chunk[..]);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        #[test]
        fn round_trip(values in prop::collection::vec(any::<f64>(), 0..500), level in 0u32..13) {
            let r = repr(DataType::Float64, values.len() as u64);
            let c = PcodecCodec::new(NAME, PcodecConfig { level: Some(level), ..Default::default() }, &r).unwrap();
            let chunk: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
            let enc = c.encode(&chunk).unwrap();
            prop_assert!(enc.len() as u64 <= c.encoded_size_bound());
            let mut out = vec![0u8; chunk.len()];
            c.decode_into(&enc, &mut out).unwrap();
            prop_assert_eq!(out, chunk);
        }
    }
}
