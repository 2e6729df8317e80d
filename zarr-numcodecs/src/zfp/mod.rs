//! `numcodecs.zfpy`, `zfp` and `zfpy` (array -> bytes): [ZFP](https://zfp.llnl.gov)
//! compression of 1- to 4-dimensional arrays of `int32`, `int64`, `float32` and `float64`.
//!
//! Names and configurations:
//!
//! - `numcodecs.zfpy` (what zarr-python writes; Zarr v2: `{"id": "zfpy"}`) and `zfpy` (the
//!   same codec under the name zarrs gives it) take numcodecs' `mode` (2 fixed rate, 3 fixed
//!   precision, 4 fixed accuracy, the default), `tolerance`, `rate` and `precision` (each -1
//!   when unset): the parameter of the mode is used, and a negative one means zfp's
//!   reversible (lossless) mode, as in zfpy. The stream starts with zfp's full header (magic,
//!   field type and shape, mode), which decoding reads and checks against the chunk.
//! - `zfp` (zarr-extensions, zarrs) takes `mode`: `"fixed_rate"` with `rate`,
//!   `"fixed_precision"` with `precision`, `"fixed_accuracy"` with `tolerance`,
//!   `"reversible"`, or `"expert"` with `minbits`, `maxbits`, `maxprec` and `minexp`; the
//!   stream has no header.
//!
//! The chunk (C order) is zfp's field with `nx` its last axis, `ny` the one before it, and so
//! on; a 0-d chunk is a 1-d field of one value for `zfp` (zfpy cannot write one), and chunks
//! of more than four dimensions are refused. The codec is this crate's implementation of zfp
//! 1.0's format and algorithm (built as zfpy's and zarrs' zfp are, without rounding options),
//! because the crates binding the C library need cmake or libclang to build: streams are
//! byte-identical to zfpy's (the golden test checks it). Lossy modes bound the error as zfp
//! does: in fixed-accuracy mode every decoded value is within `tolerance` of the original.
//!
//! ```
//! use zarr_codecs::{ChunkRepr, CodecChain, EncodeOptions};
//! use zarr_numcodecs::default_registry;
//! use zarr_meta::{DataType, FillValue};
//!
//! let repr = ChunkRepr::new(vec![8, 8], DataType::Float64, FillValue::zero(DataType::Float64));
//! let json = r#"[{"name": "numcodecs.zfpy", "configuration": {"mode": 4, "tolerance": 0.001}}]"#;
//! let chain = CodecChain::from_json(json, &repr, &default_registry())?;
//! let values: Vec<f64> = (0..64).map(|i| (f64::from(i) * 0.1).sin()).collect();
//! let chunk: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
//! let stored = chain.encode(&chunk, EncodeOptions::WRITE_EMPTY)?.ok_or("skipped")?;
//! assert_eq!(&stored[..3], b"zfp");
//! let back = chain.decode(&stored)?;
//! for (i, b) in back.as_bytes().chunks(8).enumerate() {
//!     let v = f64::from_ne_bytes(b.try_into().unwrap());
//!     assert!((v - values[i]).abs() <= 0.001);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod bits;
mod core;
mod perm;

use std::any::Any;

use serde::{Deserialize, Serialize};
use serde_json::Number;
use zarr_meta::{DataType, ExtensionDef, ExtensionPoint};

use self::bits::{BitReader, BitWriter};
use self::core::{
    decode_floats_block, decode_ints_block, encode_floats_block, encode_ints_block, pad_block,
    Params, MAX_BITS, MAX_PREC, MIN_BITS, MIN_EXP,
};
use zarr_codecs::ChunkRepr;
use zarr_codecs::CodecRegistry;
use zarr_codecs::{ArrayToBytesCodec, Codec};
use zarr_codecs::{CodecError, Result};

use super::invalid;

/// The zarr-extensions name (zarrs), without a header.
pub const NAME: &str = "zfp";
/// zarrs' name of numcodecs' form, with zfp's header.
pub const ZFPY_NAME: &str = "zfpy";
/// The name zarr-python writes.
pub const NUMCODECS_NAME: &str = "numcodecs.zfpy";

/// zfp's codec version, in its header.
const CODEC_VERSION: u64 = 5;

/// numcodecs' `ZFPY(mode=4, tolerance=-1, rate=-1, precision=-1)`.
///
/// As a codec definition (`ExtensionDef::from(config)`) it names `numcodecs.zfpy`, what
/// zarr-python writes and zarrs reads too.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZfpyConfig {
    /// 2 (fixed rate), 3 (fixed precision) or 4 (fixed accuracy, the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<i64>,
    /// The absolute error bound of mode 4 (negative: reversible).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<Number>,
    /// The bits per value of mode 2 (negative: reversible).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Number>,
    /// The bit planes of mode 3 (negative: reversible).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<i64>,
}

// the name zarr-python writes; zarrs' `zfpy` takes the same configuration
// (`ExtensionDef::from_config(zfp::ZFPY_NAME, &config)`)
crate::config::codec_def!(ZfpyConfig => NUMCODECS_NAME);

/// zarr-extensions' `zfp` configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case", deny_unknown_fields)]
pub enum ZfpConfig {
    /// Fixed rate: `rate` bits per value.
    FixedRate {
        /// Bits per value.
        rate: f64,
    },
    /// Fixed precision: `precision` bit planes.
    FixedPrecision {
        /// Bit planes.
        precision: u32,
    },
    /// Fixed accuracy: an absolute error of at most `tolerance`.
    FixedAccuracy {
        /// The error bound.
        tolerance: f64,
    },
    /// Lossless.
    Reversible {},
    /// zfp's four parameters.
    Expert {
        /// The fewest bits per block.
        minbits: u32,
        /// The most bits per block.
        maxbits: u32,
        /// The most bit planes.
        maxprec: u32,
        /// The smallest exponent coded.
        minexp: i32,
    },
}

crate::config::codec_def!(ZfpConfig => NAME);

/// The element type of a zfp field, as its header codes it (1 int32, 2 int64, 3 float,
/// 4 double).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ZType {
    Int32 = 1,
    Int64 = 2,
    Float = 3,
    Double = 4,
}

impl ZType {
    fn of(t: DataType) -> Option<ZType> {
        match t {
            DataType::Int32 => Some(ZType::Int32),
            DataType::Int64 => Some(ZType::Int64),
            DataType::Float32 => Some(ZType::Float),
            DataType::Float64 => Some(ZType::Double),
            _ => None,
        }
    }

    fn bits(self) -> u32 {
        match self {
            ZType::Int32 | ZType::Float => 32,
            ZType::Int64 | ZType::Double => 64,
        }
    }
}

/// `zfp_stream_set_rate`; `typed`: with the field type's floor (zarrs), or without (zfpy's
/// `zfp_type_none`).
fn rate_params(rate: f64, t: Option<ZType>, dims: usize) -> Params {
    let n = 1u32 << (2 * dims);
    // C's (uint)floor(...): saturating here, where C's is undefined
    let mut bits = (f64::from(n) * rate + 0.5).floor() as u32;
    match t {
        Some(ZType::Float) => bits = bits.max(1 + 8),
        Some(ZType::Double) => bits = bits.max(1 + 11),
        _ => {}
    }
    Params {
        minbits: bits,
        maxbits: bits,
        maxprec: MAX_PREC,
        minexp: MIN_EXP,
    }
}

fn precision_params(precision: u32) -> Params {
    Params {
        minbits: MIN_BITS,
        maxbits: MAX_BITS,
        maxprec: if precision == 0 {
            MAX_PREC
        } else {
            precision.min(MAX_PREC)
        },
        minexp: MIN_EXP,
    }
}

fn accuracy_params(tolerance: f64) -> Params {
    let minexp = if tolerance > 0.0 {
        // frexp: tolerance = x 2^e with 0.5 <= x < 1, then e - 1
        frexp_exponent(tolerance) - 1
    } else {
        MIN_EXP
    };
    Params {
        minbits: MIN_BITS,
        maxbits: MAX_BITS,
        maxprec: MAX_PREC,
        minexp,
    }
}

fn reversible_params() -> Params {
    Params {
        minbits: MIN_BITS,
        maxbits: MAX_BITS,
        maxprec: MAX_PREC,
        minexp: MIN_EXP - 1,
    }
}

/// `frexp`'s exponent of a finite positive double (subnormals included).
fn frexp_exponent(x: f64) -> i32 {
    if !x.is_finite() {
        return 0;
    }
    let biased = ((x.to_bits() >> 52) & 0x7ff) as i32;
    if biased == 0 {
        // subnormal: normalize
        let m = x.to_bits() & ((1 << 52) - 1);
        (64 - m.leading_zeros() as i32) - 1074
    } else {
        biased - 1022
    }
}

/// zfp's short or long encoding of the mode (`zfp_stream_mode`).
fn mode_word(p: &Params) -> (u64, u32) {
    let expert_default = p.minbits == MIN_BITS
        && p.maxbits == MAX_BITS
        && p.maxprec == MAX_PREC
        && p.minexp == MIN_EXP;
    if !expert_default {
        if p.minbits == p.maxbits
            && (1..=MAX_BITS).contains(&p.maxbits)
            && p.maxprec >= MAX_PREC
            && p.minexp == MIN_EXP
        {
            if p.maxbits <= 2048 {
                return (u64::from(p.maxbits - 1), 12);
            }
        } else if p.minbits <= MIN_BITS
            && p.maxbits >= MAX_BITS
            && p.maxprec >= 1
            && p.minexp == MIN_EXP
        {
            if p.maxprec <= 128 {
                return (u64::from(p.maxprec - 1) + 2048, 12);
            }
        } else if p.minbits <= MIN_BITS
            && p.maxbits >= MAX_BITS
            && p.maxprec >= MAX_PREC
            && p.minexp >= MIN_EXP
        {
            if p.minexp <= 843 {
                return ((p.minexp - MIN_EXP) as u64 + 2048 + 128 + 1, 12);
            }
        } else if p.minbits <= MIN_BITS
            && p.maxbits >= MAX_BITS
            && p.maxprec >= MAX_PREC
            && p.minexp < MIN_EXP
        {
            return (2048 + 128, 12);
        }
    }
    let minbits = u64::from(p.minbits.clamp(1, 0x8000) - 1);
    let maxbits = u64::from(p.maxbits.clamp(1, 0x8000) - 1);
    let maxprec = u64::from(p.maxprec.clamp(1, 0x80) - 1);
    let minexp = (p.minexp + 16495).clamp(0, 0x7fff) as u64;
    let mut mode = minexp;
    mode = (mode << 7) + maxprec;
    mode = (mode << 15) + maxbits;
    mode = (mode << 15) + minbits;
    mode = (mode << 12) + 0xfff;
    (mode, 64)
}

/// `zfp_stream_set_mode`: the parameters of a mode word; `None` for invalid ones.
fn params_of_mode(mode: u64) -> Option<Params> {
    let p = if mode <= 4094 {
        if mode < 2048 {
            let bits = mode as u32 + 1;
            Params {
                minbits: bits,
                maxbits: bits,
                maxprec: MAX_PREC,
                minexp: MIN_EXP,
            }
        } else if mode < 2048 + 128 {
            Params {
                minbits: MIN_BITS,
                maxbits: MAX_BITS,
                maxprec: mode as u32 + 1 - 2048,
                minexp: MIN_EXP,
            }
        } else if mode == 2048 + 128 {
            reversible_params()
        } else {
            Params {
                minbits: MIN_BITS,
                maxbits: MAX_BITS,
                maxprec: MAX_PREC,
                minexp: mode as i32 + MIN_EXP - (2048 + 128 + 1),
            }
        }
    } else {
        let m = mode >> 12;
        let minbits = (m & 0x7fff) as u32 + 1;
        let m = m >> 15;
        let maxbits = (m & 0x7fff) as u32 + 1;
        let m = m >> 15;
        let maxprec = (m & 0x7f) as u32 + 1;
        let m = m >> 7;
        let minexp = (m & 0x7fff) as i32 - 16495;
        Params {
            minbits,
            maxbits,
            maxprec,
            minexp,
        }
    };
    (p.minbits <= p.maxbits && (1..=64).contains(&p.maxprec)).then_some(p)
}

/// The zfp field of a chunk: sizes x first (the chunk's last axis first).
fn field_of(shape: &[u64]) -> Vec<u64> {
    if shape.is_empty() {
        vec![1]
    } else {
        shape.iter().rev().copied().collect()
    }
}

/// zfp's 52-bit field metadata (`zfp_field_metadata`); `None` when a size does not fit.
fn field_metadata(n: &[u64], t: ZType) -> Option<u64> {
    let width = match n.len() {
        1 => 48,
        2 => 24,
        3 => 16,
        _ => 12,
    };
    let mut meta = 0u64;
    for &v in n.iter().rev() {
        if v == 0 || (v - 1) >> width != 0 {
            return None;
        }
        meta = (meta << width) + (v - 1);
    }
    meta = (meta << 2) + (n.len() as u64 - 1);
    meta = (meta << 2) + (t as u64 - 1);
    Some(meta)
}

/// The field a header's metadata describes: (type code, sizes x first).
fn parse_metadata(meta: u64) -> (u64, Vec<u64>) {
    let t = (meta & 3) + 1;
    let dims = ((meta >> 2) & 3) + 1;
    let mut m = meta >> 4;
    let (width, mask) = match dims {
        // zfp reads at most 32 bits of a 1-d size
        1 => (48, 0xffff_ffff),
        2 => (24, 0xff_ffff),
        3 => (16, 0xffff),
        _ => (12, 0xfff),
    };
    let mut n = Vec::new();
    for _ in 0..dims {
        n.push((m & mask) + 1);
        m >>= width;
    }
    (t, n)
}

/// Which codec, and how it writes its stream.
#[derive(Debug, Clone, PartialEq)]
enum Form {
    /// `numcodecs.zfpy` or `zfpy`: numcodecs' configuration, a full header.
    Zfpy(ZfpyConfig),
    /// `zfp`: zarr-extensions' configuration, no header.
    Zfp(ZfpConfig),
}

/// The `numcodecs.zfpy` / `zfpy` / `zfp` codec, built for one chunk representation.
#[derive(Debug, Clone)]
pub struct ZfpCodec {
    name: &'static str,
    form: Form,
    params: Params,
    ztype: ZType,
    /// Field sizes, x first.
    field: Vec<u64>,
    repr: ChunkRepr,
    len: usize,
}

fn number(n: &Option<Number>) -> f64 {
    n.as_ref().and_then(Number::as_f64).unwrap_or(-1.0)
}

impl ZfpCodec {
    fn check_repr(
        name: &'static str,
        repr: &ChunkRepr,
        header: bool,
    ) -> Result<(ZType, Vec<u64>, usize)> {
        let ztype = ZType::of(repr.data_type).ok_or_else(|| {
            invalid(
                name,
                format!(
                    "zfp compresses int32, int64, float32 and float64 data, not {}",
                    repr.data_type
                ),
            )
        })?;
        let rank = repr.rank();
        if rank > 4 || (header && rank == 0) {
            return Err(invalid(
                name,
                format!("zfp compresses chunks of 1 to 4 dimensions, not {rank}"),
            ));
        }
        let field = field_of(&repr.shape);
        if header && field_metadata(&field, ztype).is_none() {
            return Err(invalid(
                name,
                format!(
                    "the chunk shape {:?} is too large for zfp's header",
                    repr.shape
                ),
            ));
        }
        let len = repr.validate()?;
        Ok((ztype, field, len))
    }

    /// `numcodecs.zfpy` (or zarrs' `zfpy` when `name` is `"zfpy"`) with `config`, for chunks
    /// of `repr`.
    ///
    /// # Errors
    /// [`zarr_meta::MetaError::InvalidConfiguration`] for a mode other than 2, 3 or 4, a data
    /// type zfp does not compress, or a chunk of 0 or more than 4 dimensions.
    pub fn zfpy(name: &'static str, config: ZfpyConfig, repr: &ChunkRepr) -> Result<Self> {
        let (ztype, field, len) = Self::check_repr(name, repr, true)?;
        let dims = field.len();
        let params = match config.mode.unwrap_or(4) {
            4 if number(&config.tolerance) >= 0.0 => accuracy_params(number(&config.tolerance)),
            2 if number(&config.rate) >= 0.0 => rate_params(number(&config.rate), None, dims),
            3 if config.precision.unwrap_or(-1) >= 0 => {
                precision_params(u32::try_from(config.precision.unwrap_or(0)).unwrap_or(u32::MAX))
            }
            2..=4 => reversible_params(),
            m => {
                return Err(invalid(
                    name,
                    format!(
                        "mode {m} is not 2 (fixed rate), 3 (fixed precision) or 4 (fixed accuracy)"
                    ),
                ))
            }
        };
        Ok(ZfpCodec {
            name,
            form: Form::Zfpy(config),
            params,
            ztype,
            field,
            repr: repr.clone(),
            len,
        })
    }

    /// zarrs' `zfp` with `config`, for chunks of `repr`.
    ///
    /// # Errors
    /// [`zarr_meta::MetaError::InvalidConfiguration`] for expert parameters zfp refuses, a
    /// data type zfp does not compress, or a chunk of more than 4 dimensions.
    pub fn zfp(config: ZfpConfig, repr: &ChunkRepr) -> Result<Self> {
        let (ztype, field, len) = Self::check_repr(NAME, repr, false)?;
        let dims = field.len();
        let params = match &config {
            ZfpConfig::FixedRate { rate } => rate_params(*rate, Some(ztype), dims),
            ZfpConfig::FixedPrecision { precision } => precision_params(*precision),
            ZfpConfig::FixedAccuracy { tolerance } => accuracy_params(*tolerance),
            ZfpConfig::Reversible {} => reversible_params(),
            ZfpConfig::Expert {
                minbits,
                maxbits,
                maxprec,
                minexp,
            } => {
                if minbits > maxbits || !(1..=64).contains(maxprec) {
                    return Err(invalid(
                        NAME,
                        "expert mode needs minbits <= maxbits and maxprec in 1..=64",
                    ));
                }
                Params {
                    minbits: *minbits,
                    maxbits: *maxbits,
                    maxprec: *maxprec,
                    minexp: *minexp,
                }
            }
        };
        Ok(ZfpCodec {
            name: NAME,
            form: Form::Zfp(config),
            params,
            ztype,
            field,
            repr: repr.clone(),
            len,
        })
    }

    fn header(&self) -> bool {
        matches!(self.form, Form::Zfpy(_))
    }

    fn blocks(&self) -> u64 {
        self.field.iter().map(|&n| n.div_ceil(4)).product()
    }

    /// `zfp_stream_maximum_size`, plus the header.
    fn max_size(&self) -> u64 {
        let dims = self.field.len() as u32;
        let values = 1u64 << (2 * dims);
        let reversible = self.params.reversible();
        let extra: u64 = match (self.ztype, reversible) {
            (ZType::Int32, true) => 5,
            (ZType::Int64, true) => 6,
            (ZType::Int32 | ZType::Int64, false) => 0,
            (ZType::Float, true) => 1 + 1 + 8 + 5,
            (ZType::Float, false) => 1 + 8,
            (ZType::Double, true) => 1 + 1 + 11 + 6,
            (ZType::Double, false) => 1 + 11,
        };
        let prec = u64::from(self.params.maxprec.min(self.ztype.bits()));
        let maxbits = (extra + values - 1 + values * prec)
            .min(u64::from(self.params.maxbits))
            .max(u64::from(self.params.minbits));
        (148u64
            .saturating_add(self.blocks().saturating_mul(maxbits))
            .saturating_add(63)
            / 64)
            .saturating_mul(8)
    }

    /// Runs `f` on every block in zfp's order (x fastest), with the element offset of each of
    /// its values in the chunk (`None` past the chunk's edge) and its filled sizes, x first.
    fn for_each_block(&self, mut f: impl FnMut(&[Option<usize>], &[usize])) {
        let n = &self.field;
        let dims = n.len();
        let nb: Vec<u64> = n.iter().map(|&v| v.div_ceil(4)).collect();
        let mut stride = vec![1u64; dims];
        for a in 1..dims {
            stride[a] = stride[a - 1] * n[a - 1];
        }
        let mut offsets = [None; 256];
        let offsets = &mut offsets[..1 << (2 * dims)];
        for b in 0..nb.iter().product::<u64>() {
            let mut rem = b;
            let mut origin = [0u64; 4];
            let mut size = [0usize; 4];
            for a in 0..dims {
                origin[a] = (rem % nb[a]) * 4;
                rem /= nb[a];
                size[a] = (n[a] - origin[a]).min(4) as usize;
            }
            for (i, o) in offsets.iter_mut().enumerate() {
                *o = (0..dims)
                    .try_fold(0u64, |off, a| {
                        let c = (i >> (2 * a)) & 3;
                        (c < size[a]).then(|| off + (origin[a] + c as u64) * stride[a])
                    })
                    .map(|off| off as usize);
            }
            f(offsets, &size[..dims]);
        }
    }

    fn encode_typed<T: bytemuck::Pod + Default>(
        &self,
        input: &[u8],
        w: &mut BitWriter,
        mut block: impl FnMut(&mut BitWriter, &mut [T]),
    ) {
        let esize = std::mem::size_of::<T>();
        let mut buf = [T::default(); 256];
        self.for_each_block(|offsets, size| {
            let q = &mut buf[..offsets.len()];
            for (v, o) in q.iter_mut().zip(offsets) {
                if let Some(o) = o {
                    *v = bytemuck::pod_read_unaligned(&input[o * esize..(o + 1) * esize]);
                }
            }
            pad_block(q, size);
            block(w, q);
        });
    }

    fn decode_typed<T: bytemuck::Pod + Default>(
        &self,
        r: &mut BitReader<'_>,
        out: &mut [u8],
        mut block: impl FnMut(&mut BitReader<'_>, &mut [T]),
    ) {
        let esize = std::mem::size_of::<T>();
        let mut buf = [T::default(); 256];
        self.for_each_block(|offsets, _| {
            let q = &mut buf[..offsets.len()];
            block(r, q);
            for (v, o) in q.iter().zip(offsets) {
                if let Some(o) = o {
                    out[o * esize..(o + 1) * esize].copy_from_slice(bytemuck::bytes_of(v));
                }
            }
        });
    }

    fn encode_stream(&self, input: &[u8]) -> Vec<u8> {
        let mut w = BitWriter::with_capacity(self.max_size() as usize);
        if self.header() {
            for c in [
                u64::from(b'z'),
                u64::from(b'f'),
                u64::from(b'p'),
                CODEC_VERSION,
            ] {
                w.write_bits(c, 8);
            }
            let meta = field_metadata(&self.field, self.ztype).unwrap_or(0);
            w.write_bits(meta, 52);
            let (mode, size) = mode_word(&self.params);
            w.write_bits(mode, size);
        }
        let p = self.params;
        let dims = self.field.len();
        match self.ztype {
            ZType::Int32 => {
                self.encode_typed::<i32>(input, &mut w, |w, b| encode_ints_block(w, &p, b, dims))
            }
            ZType::Int64 => {
                self.encode_typed::<i64>(input, &mut w, |w, b| encode_ints_block(w, &p, b, dims))
            }
            ZType::Float => {
                self.encode_typed::<f32>(input, &mut w, |w, b| encode_floats_block(w, &p, b, dims))
            }
            ZType::Double => {
                self.encode_typed::<f64>(input, &mut w, |w, b| encode_floats_block(w, &p, b, dims))
            }
        }
        w.finish()
    }

    fn corrupt(&self, reason: impl Into<String>) -> CodecError {
        CodecError::corrupt(self.name, reason)
    }

    fn decode_stream(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        let mut r = BitReader::new(input);
        let mut p = self.params;
        if self.header() {
            if input.len() < 8 {
                return Err(CodecError::Truncated {
                    codec: self.name,
                    needed: 8,
                    got: input.len() as u64,
                });
            }
            let magic: Vec<u64> = (0..4).map(|_| r.read_bits(8)).collect();
            if magic[..3] != [u64::from(b'z'), u64::from(b'f'), u64::from(b'p')]
                || magic[3] != CODEC_VERSION
            {
                return Err(self.corrupt("not a zfp stream of codec version 5 (zfp 1.0)"));
            }
            let (t, n) = parse_metadata(r.read_bits(52));
            if t != self.ztype as u64 || n != self.field {
                return Err(self.corrupt(format!(
                    "the header describes a field of type {t} and sizes {n:?} (x first), the chunk is {} {:?}",
                    self.repr.data_type, self.repr.shape
                )));
            }
            let mut mode = r.read_bits(12);
            if mode > 4094 {
                mode += r.read_bits(52) << 12;
            }
            p = params_of_mode(mode)
                .ok_or_else(|| self.corrupt("invalid compression mode in the header"))?;
        }
        let dims = self.field.len();
        match self.ztype {
            ZType::Int32 => {
                self.decode_typed::<i32>(&mut r, out, |r, b| decode_ints_block(r, &p, b, dims))
            }
            ZType::Int64 => {
                self.decode_typed::<i64>(&mut r, out, |r, b| decode_ints_block(r, &p, b, dims))
            }
            ZType::Float => {
                self.decode_typed::<f32>(&mut r, out, |r, b| decode_floats_block(r, &p, b, dims))
            }
            ZType::Double => {
                self.decode_typed::<f64>(&mut r, out, |r, b| decode_floats_block(r, &p, b, dims))
            }
        }
        r.align();
        if r.overran() {
            return Err(CodecError::Truncated {
                codec: self.name,
                needed: r.tell().div_ceil(8),
                got: input.len() as u64,
            });
        }
        Ok(())
    }
}

/// Builds `numcodecs.zfpy` from its definition.
pub(crate) fn numcodecs_factory(
    def: &ExtensionDef,
    repr: &ChunkRepr,
    _: &CodecRegistry,
) -> Result<Codec> {
    let config: ZfpyConfig = zarr_codecs::v2::without_compression_kwargs(def)?
        .parse_configuration(ExtensionPoint::Codec)?;
    Ok(Codec::ArrayToBytes(Box::new(ZfpCodec::zfpy(
        NUMCODECS_NAME,
        config,
        repr,
    )?)))
}

/// Builds zarrs' `zfpy` from its definition.
pub(crate) fn zfpy_factory(
    def: &ExtensionDef,
    repr: &ChunkRepr,
    _: &CodecRegistry,
) -> Result<Codec> {
    let config: ZfpyConfig = zarr_codecs::v2::without_compression_kwargs(def)?
        .parse_configuration(ExtensionPoint::Codec)?;
    Ok(Codec::ArrayToBytes(Box::new(ZfpCodec::zfpy(
        ZFPY_NAME, config, repr,
    )?)))
}

/// Builds `zfp` from its definition.
pub(crate) fn factory(def: &ExtensionDef, repr: &ChunkRepr, _: &CodecRegistry) -> Result<Codec> {
    let config: ZfpConfig = def.parse_configuration(ExtensionPoint::Codec)?;
    Ok(Codec::ArrayToBytes(Box::new(ZfpCodec::zfp(config, repr)?)))
}

impl ArrayToBytesCodec for ZfpCodec {
    fn name(&self) -> &'static str {
        self.name
    }

    fn to_def(&self) -> ExtensionDef {
        match &self.form {
            Form::Zfpy(c) => crate::config::def(self.name, c),
            Form::Zfp(c) => crate::config::def(self.name, c),
        }
    }

    fn decoded_repr(&self) -> &ChunkRepr {
        &self.repr
    }

    fn encoded_size_bound(&self) -> u64 {
        self.max_size()
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
        Ok(self.encode_stream(input))
    }

    fn decode_into(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        if out.len() != self.len {
            return Err(CodecError::BufferLength {
                what: "the output buffer",
                expected: self.len as u64,
                got: out.len() as u64,
            });
        }
        self.decode_stream(input, out)
    }
}

#[cfg(test)]
mod tests;
