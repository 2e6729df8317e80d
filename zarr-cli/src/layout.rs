//! Array layouts from the command line: shapes, codecs (`zstd:3`, `blosc:lz4:5:shuffle`...),
//! sharding, sparse chunks, key encodings, and the [`ArrayBuilder`] they make.

use serde_json::{json, Map, Value};
use zarr_array::zarr_codecs::crc32c::Crc32cConfig;
use zarr_array::zarr_codecs::gzip::GzipConfig;
use zarr_array::zarr_codecs::zstd::ZstdConfig;
use zarr_array::zarr_meta::numpy::NumpyDtype;
use zarr_array::zarr_meta::DataKind;
use zarr_array::{ArrayBuilder, DataType, ExtensionDef, FillValue};

use crate::error::{CliError, Result};

/// A shape or position list (a type alias, so that clap takes it as one value).
pub type Shape = Vec<u64>;
/// A list of coordinates, which may be negative.
pub type Coords = Vec<i64>;
/// Dimension names (`None`: unnamed).
pub type Names = Vec<Option<String>>;

/// A comma-separated list of non-negative integers (`6,4`; empty for a 0-d array).
///
/// # Errors
/// Anything else, as a message for clap.
pub fn parse_u64_list(s: &str) -> Result<Vec<u64>, String> {
    if s.trim().is_empty() {
        return Ok(Vec::new());
    }
    s.split(',')
        .map(|p| {
            let p = p.trim();
            p.parse::<u64>().map_err(|_| {
                format!("{p:?} is not a non-negative integer (expected a list like 6,4)")
            })
        })
        .collect()
}

/// A byte size: an integer with an optional binary unit, `K`, `M`, `G` or `T` (`KiB`... and
/// `B` accepted too): `512M`, `2G`, `1048576`.
///
/// # Errors
/// Anything else, or a size above 2^64, as a message for clap.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let bad =
        || format!("{s:?} is not a size (expected bytes or a number with K, M, G or T, like 512M)");
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(digits);
    let n: u64 = num.parse().map_err(|_| bad())?;
    let shift = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => return Err(bad()),
    };
    n.checked_mul(1u64 << shift).ok_or_else(bad)
}

/// A comma-separated list of integers that may be negative (`-100,0`).
///
/// # Errors
/// Anything else, as a message for clap.
pub fn parse_i64_list(s: &str) -> Result<Vec<i64>, String> {
    if s.trim().is_empty() {
        return Ok(Vec::new());
    }
    s.split(',')
        .map(|p| {
            let p = p.trim();
            p.parse::<i64>()
                .map_err(|_| format!("{p:?} is not an integer (expected a list like -100,0)"))
        })
        .collect()
}

/// A core data type name (`int32`), raw bits (`r16`), `string`, `variable_length_bytes`, a
/// NumPy datetime or timedelta (`datetime64[s]`, `M8[10ms]`, `timedelta64[ns]`) or a NumPy
/// fixed-width string (`U8`, `<U8`: `fixed_length_utf32`; `S4`, `|S4`:
/// `null_terminated_bytes`).
///
/// # Errors
/// An unknown name, listing the known ones.
pub fn parse_data_type(s: &str) -> Result<DataType, String> {
    let time = || {
        NumpyDtype::parse(s).ok().map(|t| t.data_type).filter(|t| {
            matches!(
                t.kind(),
                DataKind::DateTime
                    | DataKind::TimeDelta
                    | DataKind::FixedLengthUtf32
                    | DataKind::NullTerminatedBytes
            )
        })
    };
    DataType::from_name(s).or_else(time).ok_or_else(|| {
        format!(
            "unknown data type {s:?} (expected one of: bool, int8, int16, int32, int64, uint8, \
             uint16, uint32, uint64, float16, float32, float64, complex64, complex128, r<bits>, \
             string, variable_length_bytes, a NumPy datetime or timedelta such as datetime64[s] \
             or m8[10ms], or a NumPy fixed-width string such as U8 or S4)"
        )
    })
}

/// A JSON object of attributes.
///
/// # Errors
/// Text that is not a JSON object.
pub fn parse_attrs(s: &str) -> Result<Map<String, Value>, String> {
    match serde_json::from_str::<Value>(s) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err("attributes must be a JSON object, like '{\"units\": \"m\"}'".into()),
        Err(e) => Err(format!("not valid JSON: {e}")),
    }
}

/// Dimension names `y,x` (an empty entry is a dimension without a name).
///
/// # Errors
/// Never (any text is a list of names); kept fallible for clap.
pub fn parse_names(s: &str) -> Result<Vec<Option<String>>, String> {
    Ok(s.split(',')
        .map(|n| {
            let n = n.trim();
            (!n.is_empty()).then(|| n.to_string())
        })
        .collect())
}

/// The chunk key separator.
///
/// # Errors
/// Anything but `/` and `.`.
pub fn parse_separator(s: &str) -> Result<char, String> {
    match s {
        "/" => Ok('/'),
        "." => Ok('.'),
        _ => Err("the separator is / or .".into()),
    }
}

/// A sparse chunk layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SparseFormat {
    /// Coordinates (any rank).
    Coo,
    /// Compressed sparse rows (2-d).
    Csr,
    /// Compressed sparse columns (2-d).
    Csc,
}

impl SparseFormat {
    /// The configuration value.
    pub fn as_str(self) -> &'static str {
        match self {
            SparseFormat::Coo => "coo",
            SparseFormat::Csr => "csr",
            SparseFormat::Csc => "csc",
        }
    }

    /// Parses a configuration value.
    pub fn from_name(s: &str) -> Option<Self> {
        match s {
            "coo" => Some(SparseFormat::Coo),
            "csr" => Some(SparseFormat::Csr),
            "csc" => Some(SparseFormat::Csc),
            _ => None,
        }
    }
}

/// The chunk key encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum KeyEncoding {
    /// `c/0/1` (or `c.0.1`).
    Default,
    /// `0.1` (or `0/1`), as Zarr v2 wrote them.
    V2,
}

/// The name of the `sparse_layout` codec.
pub const SPARSE_CODEC: &str = "sparse_layout";

/// The chunk grid extension of this project: `regular` with a lower bound (prepend).
pub const REGULAR_BOUNDED: &str = "regular_bounded";

/// The `sparse_layout` serializer for chunks of `chunk_shape`, with the narrowest index and
/// pointer types that hold every coordinate and the element count.
///
/// # Errors
/// CSR/CSC for a chunk that is not 2-d.
pub fn sparse_def(format: SparseFormat, chunk_shape: &[u64]) -> Result<ExtensionDef> {
    let rank = chunk_shape.len();
    if rank == 0 {
        return Err(CliError::input(
            "--sparse needs an array of at least one dimension",
        ));
    }
    if format != SparseFormat::Coo && rank != 2 {
        return Err(CliError::input(format!(
            "--sparse {} needs a 2-d array (this one has {rank} dimensions; use --sparse coo)",
            format.as_str()
        )));
    }
    // the largest coordinate the index type must hold
    let max_index = match format {
        SparseFormat::Coo => chunk_shape.iter().copied().max().unwrap_or(1),
        SparseFormat::Csr => chunk_shape[1],
        SparseFormat::Csc => chunk_shape[0],
    }
    .saturating_sub(1);
    let index = if max_index <= u64::from(u16::MAX) {
        "uint16"
    } else if max_index <= u64::from(u32::MAX) {
        "uint32"
    } else {
        "uint64"
    };
    let mut config = Map::new();
    config.insert("format".into(), json!(format.as_str()));
    config.insert("index_data_type".into(), json!(index));
    if format != SparseFormat::Coo {
        let elements = chunk_shape
            .iter()
            .try_fold(1u64, |acc, &n| acc.checked_mul(n));
        let pointer = match elements {
            Some(n) if n <= u64::from(u32::MAX) => "uint32",
            _ => "uint64",
        };
        config.insert("pointer_data_type".into(), json!(pointer));
    }
    Ok(ExtensionDef::with_configuration(SPARSE_CODEC, config))
}

/// A bytes->bytes codec given on the command line.
#[derive(Debug, Clone, PartialEq)]
pub enum CodecSpec {
    /// `zstd[:LEVEL[:checksum]]`
    Zstd {
        /// Level (-131072..=22).
        level: i32,
        /// Store a checksum in each frame.
        checksum: bool,
    },
    /// `gzip[:LEVEL]`
    Gzip {
        /// Level (0..=9).
        level: u32,
    },
    /// `blosc[:CNAME[:CLEVEL[:SHUFFLE]]]`
    Blosc {
        /// Compressor.
        cname: String,
        /// Level (0..=9).
        clevel: u32,
        /// `noshuffle`, `shuffle` or `bitshuffle`.
        shuffle: String,
    },
    /// `crc32c`
    Crc32c,
    /// `none`: no compressor at all.
    None,
}

const CODEC_FORMS: &str =
    "expected zstd:LEVEL[:checksum], gzip:LEVEL, blosc:CNAME:CLEVEL:SHUFFLE, crc32c or none";
const BLOSC_CNAMES: [&str; 6] = ["blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd"];
const BLOSC_SHUFFLES: [&str; 3] = ["noshuffle", "shuffle", "bitshuffle"];

/// Parses one `--codec` value.
///
/// # Errors
/// An unknown codec or an out-of-range setting, as a message for clap.
pub fn parse_codec(s: &str) -> Result<CodecSpec, String> {
    let parts: Vec<&str> = s.split(':').collect();
    let bad = |why: &str| format!("{why} in {s:?} ({CODEC_FORMS})");
    let int = |p: &str, lo: i64, hi: i64, what: &str| -> Result<i64, String> {
        match p.parse::<i64>() {
            Ok(v) if (lo..=hi).contains(&v) => Ok(v),
            _ => Err(bad(&format!("{what} must be an integer from {lo} to {hi}"))),
        }
    };
    match parts.as_slice() {
        ["zstd"] => Ok(CodecSpec::Zstd {
            level: 0,
            checksum: false,
        }),
        ["zstd", level] | ["zstd", level, "checksum"] => Ok(CodecSpec::Zstd {
            level: int(level, -131_072, 22, "the zstd level")? as i32,
            checksum: parts.len() == 3,
        }),
        ["gzip"] => Ok(CodecSpec::Gzip { level: 5 }),
        ["gzip", level] => Ok(CodecSpec::Gzip {
            level: int(level, 0, 9, "the gzip level")? as u32,
        }),
        ["blosc", rest @ ..] if rest.len() <= 3 => {
            let cname = rest.first().copied().unwrap_or("lz4");
            if !BLOSC_CNAMES.contains(&cname) {
                return Err(bad(&format!(
                    "blosc compressor {cname:?} is not one of {}",
                    BLOSC_CNAMES.join(", ")
                )));
            }
            let clevel = match rest.get(1) {
                Some(l) => int(l, 0, 9, "the blosc level")? as u32,
                None => 5,
            };
            let shuffle = rest.get(2).copied().unwrap_or("shuffle");
            if !BLOSC_SHUFFLES.contains(&shuffle) {
                return Err(bad(&format!(
                    "blosc shuffle {shuffle:?} is not one of {}",
                    BLOSC_SHUFFLES.join(", ")
                )));
            }
            Ok(CodecSpec::Blosc {
                cname: cname.into(),
                clevel,
                shuffle: shuffle.into(),
            })
        }
        ["crc32c"] => Ok(CodecSpec::Crc32c),
        ["none"] => Ok(CodecSpec::None),
        _ => Err(bad("unknown codec")),
    }
}

impl CodecSpec {
    /// The codec definition for an array of `data_type` (`None` for [`CodecSpec::None`]).
    pub fn to_def(&self, data_type: DataType) -> Option<ExtensionDef> {
        let obj = |v: Value| match v {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        Some(match self {
            &CodecSpec::Zstd { level, checksum } => ZstdConfig { level, checksum }.into(),
            &CodecSpec::Gzip { level } => GzipConfig { level }.into(),
            CodecSpec::Blosc {
                cname,
                clevel,
                shuffle,
            } => ExtensionDef::with_configuration(
                // JSON, not `BloscConfig`: the names are passed through as given (`snappy`
                // included, which the registry then refuses with a clear error)
                "blosc",
                obj(json!({
                    "cname": cname, "clevel": clevel, "shuffle": shuffle,
                    // the bytes of variable-size elements (after vlen-utf8 / vlen-bytes)
                    // shuffle as bytes, as zarr-python's blosc takes them (typesize 1)
                    "typesize": data_type.size().max(1), "blocksize": 0
                })),
            ),
            CodecSpec::Crc32c => Crc32cConfig {}.into(),
            CodecSpec::None => return None,
        })
    }
}

/// The compressors a list of `--codec` values gives (`None`: keep the default).
///
/// # Errors
/// `none` together with other codecs.
pub fn compressors(specs: &[CodecSpec], data_type: DataType) -> Result<Option<Vec<ExtensionDef>>> {
    if specs.is_empty() {
        return Ok(None);
    }
    if specs.len() > 1 && specs.contains(&CodecSpec::None) {
        return Err(CliError::usage(
            "--codec none means no compressor at all: give it alone",
        ));
    }
    Ok(Some(
        specs.iter().filter_map(|c| c.to_def(data_type)).collect(),
    ))
}

/// The chunk key encoding definition.
pub fn key_encoding_def(encoding: KeyEncoding, separator: Option<char>) -> ExtensionDef {
    let (name, default_sep) = match encoding {
        KeyEncoding::Default => ("default", '/'),
        KeyEncoding::V2 => ("v2", '.'),
    };
    let mut config = Map::new();
    config.insert(
        "separator".into(),
        Value::String(separator.unwrap_or(default_sep).to_string()),
    );
    ExtensionDef::with_configuration(name, config)
}

/// A fill value from the command line: JSON (`0`, `1.5`, `true`, `[1, 2]`, `"NaN"`) or a bare
/// word read as a JSON string (`NaN`, `Infinity`, `0x7fc00000`).
///
/// # Errors
/// A value that does not fit the data type.
pub fn parse_fill(text: &str, data_type: DataType) -> Result<FillValue> {
    let value = serde_json::from_str::<Value>(text).unwrap_or_else(|_| Value::String(text.into()));
    FillValue::from_json(&value, data_type).map_err(|e| {
        CliError::input(format!(
            "--fill-value {text}: {e} (for example 0, 1.5, true, NaN, Infinity, [1.0, 0.0])"
        ))
    })
}

/// The options that describe a new array's layout (shared by create, import and convert).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ArrayOpts {
    /// The fill value (JSON, or NaN / Infinity / -Infinity / 0x... hex)
    #[arg(long, value_name = "V", allow_hyphen_values = true)]
    pub fill_value: Option<String>,
    /// A compressor or checksum, in order (repeatable): zstd:LEVEL, zstd:LEVEL:checksum, gzip:LEVEL,
    /// blosc:CNAME:CLEVEL:SHUFFLE, crc32c, none [default: zstd:0; a sparse import: zstd:1]
    #[arg(long = "codec", value_name = "CODEC", value_parser = parse_codec)]
    pub codecs: Vec<CodecSpec>,
    /// Store chunks in shards of this shape (--chunks is then the inner chunk shape)
    #[arg(long, value_name = "SHAPE", value_parser = parse_u64_list)]
    pub shards: Option<Shape>,
    /// Store each chunk in a sparse layout (the sparse_layout codec)
    #[arg(long, value_name = "FORMAT")]
    pub sparse: Option<SparseFormat>,
    /// Names of the dimensions, like y,x
    #[arg(long, value_name = "NAMES", value_parser = parse_names)]
    pub dimension_names: Option<Names>,
    /// The chunk key encoding [default: default]
    #[arg(long, value_name = "ENCODING")]
    pub key_encoding: Option<KeyEncoding>,
    /// The chunk key separator [default: / for default keys, . for v2]
    #[arg(long, value_name = "SEP", value_parser = parse_separator)]
    pub separator: Option<char>,
    /// User attributes, a JSON object
    #[arg(long, value_name = "JSON", value_parser = parse_attrs)]
    pub attrs: Option<Map<String, Value>>,
    /// Make a regular_bounded array whose position 0 is this coordinate (write negative
    /// values as --lower-bound=-100,0)
    #[arg(long, value_name = "COORDS", value_parser = parse_i64_list, allow_hyphen_values = true)]
    pub lower_bound: Option<Coords>,
    /// The grid origin of the regular_bounded array [default: 0 on every axis]
    #[arg(long, value_name = "COORDS", value_parser = parse_i64_list, allow_hyphen_values = true,
          requires = "lower_bound")]
    pub origin: Option<Coords>,
    /// The Zarr format: 3 (zarr.json) or 2 (.zarray + .zattrs, as zarr-python writes
    /// zarr_format=2; keys v2 with '.' unless --separator says '/') [default: 3]
    #[arg(long, value_name = "2|3", value_parser = clap::value_parser!(u8).range(2..=3))]
    pub zarr_format: Option<u8>,
}

/// The builder for a new array of `shape` and `data_type` laid out as the options say.
///
/// # Errors
/// Options that contradict each other or the shape.
pub fn builder(
    shape: &[u64],
    data_type: DataType,
    chunks: Option<&[u64]>,
    opts: &ArrayOpts,
) -> Result<ArrayBuilder> {
    let rank = shape.len();
    let check_rank = |what: &str, n: usize| {
        if n == rank {
            Ok(())
        } else {
            Err(CliError::input(format!(
                "{what} has {n} dimensions but the array has {rank} (shape {shape:?})"
            )))
        }
    };
    let mut b = ArrayBuilder::new(shape.to_vec(), data_type);
    let v2 = opts.zarr_format == Some(2);
    if v2 {
        b = b.zarr_format(2);
    }
    let chunks: Vec<u64> = match chunks {
        Some(c) => c.to_vec(),
        None if opts.shards.is_some() => {
            return Err(CliError::usage(
                "--shards needs --chunks (the shape of the chunks inside each shard)",
            ))
        }
        None => default_chunks(shape, data_type)?,
    };
    check_rank("--chunks", chunks.len())?;
    if chunks.contains(&0) {
        return Err(CliError::input(format!(
            "--chunks {chunks:?}: chunk sizes must be positive"
        )));
    }
    b = b.chunk_shape(chunks.clone());
    if let Some(shards) = &opts.shards {
        check_rank("--shards", shards.len())?;
        if let Some(d) = (0..rank).find(|&d| shards[d] == 0 || shards[d] % chunks[d] != 0) {
            return Err(CliError::input(format!(
                "--shards {shards:?}: each shard size must be a positive multiple of the chunk \
                 size (axis {d}: {} is not a multiple of {})",
                shards[d], chunks[d]
            )));
        }
        b = b.shards(shards.clone());
    }
    if let Some(fill) = &opts.fill_value {
        b = b.fill_value(parse_fill(fill, data_type)?);
    }
    if let Some(c) = compressors(&opts.codecs, data_type)? {
        b = b.compressors(c);
    }
    if let Some(format) = opts.sparse {
        b = b.serializer(sparse_def(format, &chunks)?);
    }
    if let Some(names) = &opts.dimension_names {
        check_rank("--dimension-names", names.len())?;
        b = b.dimension_names(names.clone());
    }
    match (opts.key_encoding, opts.separator) {
        (None, None) => {}
        (None, sep) if v2 => b = b.key_encoding(key_encoding_def(KeyEncoding::V2, sep)),
        (enc, sep) => {
            b = b.key_encoding(key_encoding_def(enc.unwrap_or(KeyEncoding::Default), sep))
        }
    }
    if let Some(attrs) = &opts.attrs {
        b = b.attributes(attrs.clone());
    }
    if let Some(lower) = &opts.lower_bound {
        check_rank("--lower-bound", lower.len())?;
        b = b.lower_bound(lower.clone());
        if let Some(origin) = &opts.origin {
            check_rank("--origin", origin.len())?;
            b = b.origin(origin.clone());
        }
    }
    Ok(b)
}

/// The chunk shape the library picks when none is given (about 1 MiB per chunk).
fn default_chunks(shape: &[u64], data_type: DataType) -> Result<Vec<u64>> {
    let meta = ArrayBuilder::new(shape.to_vec(), data_type)
        .metadata()
        .map_err(|e| crate::error::zarr("default chunks", e))?;
    Ok(meta
        .chunk_grid
        .configuration
        .as_ref()
        .and_then(|c| c.get("chunk_shape"))
        .and_then(Value::as_array)
        .map(|v| v.iter().filter_map(Value::as_u64).collect())
        .unwrap_or_else(|| shape.iter().map(|&n| n.max(1)).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codecs_parse() {
        assert_eq!(
            parse_codec("zstd:3").unwrap(),
            CodecSpec::Zstd {
                level: 3,
                checksum: false
            }
        );
        assert_eq!(
            parse_codec("zstd:-3:checksum").unwrap(),
            CodecSpec::Zstd {
                level: -3,
                checksum: true
            }
        );
        assert_eq!(parse_codec("gzip:9").unwrap(), CodecSpec::Gzip { level: 9 });
        assert!(parse_codec("gzip:10").is_err());
        assert!(parse_codec("blosc:brotli:5:shuffle").is_err());
        assert!(parse_codec("blosc:lz4:5:sort").is_err());
        assert!(parse_codec("lzma").is_err());
        let b = parse_codec("blosc:zstd:3:bitshuffle").unwrap();
        let def = b.to_def(DataType::Float64).unwrap();
        assert_eq!(def.configuration.unwrap()["typesize"], json!(8));
        let def = parse_codec("blosc:lz4:5:shuffle")
            .unwrap()
            .to_def(DataType::String)
            .unwrap();
        assert_eq!(def.configuration.unwrap()["typesize"], json!(1));
    }

    #[test]
    fn sparse_types_fit_the_chunk() {
        let c = |f, s: &[u64]| sparse_def(f, s).unwrap().configuration.unwrap();
        assert_eq!(
            c(SparseFormat::Coo, &[100, 100])["index_data_type"],
            "uint16"
        );
        assert!(c(SparseFormat::Coo, &[100, 100])
            .get("pointer_data_type")
            .is_none());
        assert_eq!(
            c(SparseFormat::Coo, &[65536, 1])["index_data_type"],
            "uint16"
        );
        assert_eq!(
            c(SparseFormat::Coo, &[65537, 1])["index_data_type"],
            "uint32"
        );
        assert_eq!(
            c(SparseFormat::Csr, &[70000, 10])["index_data_type"],
            "uint16"
        );
        assert_eq!(
            c(SparseFormat::Csc, &[70000, 10])["index_data_type"],
            "uint32"
        );
        assert_eq!(
            c(SparseFormat::Csr, &[10, 10])["pointer_data_type"],
            "uint32"
        );
        assert_eq!(
            c(SparseFormat::Csr, &[1 << 17, 1 << 16])["pointer_data_type"],
            "uint64"
        );
        assert!(sparse_def(SparseFormat::Csr, &[2, 2, 2]).is_err());
    }

    #[test]
    fn sparse_types_agree_with_the_layout_crate() {
        use zarr_array::zarr_layout_sparse::{Format, Layout};
        let shapes: [&[u64]; 7] = [
            &[1, 1],
            &[100, 100],
            &[65536, 3],
            &[3, 65537],
            &[70000, 70000],
            &[1 << 33, 2],
            &[65536, 65537],
        ];
        for shape in shapes {
            for (ours, theirs) in [
                (SparseFormat::Coo, Format::Coo),
                (SparseFormat::Csr, Format::Csr),
                (SparseFormat::Csc, Format::Csc),
            ] {
                let def = sparse_def(ours, shape).unwrap();
                let c = def.configuration.unwrap();
                let layout = Layout::smallest(theirs, shape).unwrap();
                assert_eq!(
                    c["index_data_type"],
                    layout.index_type().name(),
                    "{shape:?} {ours:?}"
                );
                assert_eq!(
                    c.get("pointer_data_type").and_then(Value::as_str),
                    layout.pointer_type().map(|p| p.name()),
                    "{shape:?} {ours:?}"
                );
            }
        }
    }

    #[test]
    fn lists() {
        assert_eq!(parse_u64_list("6, 4").unwrap(), vec![6, 4]);
        assert_eq!(parse_u64_list("").unwrap(), Vec::<u64>::new());
        assert!(parse_u64_list("6,-4").is_err());
        assert_eq!(parse_i64_list("-100,0").unwrap(), vec![-100, 0]);
        assert_eq!(
            parse_names("y,").unwrap(),
            vec![Some("y".to_string()), None]
        );
    }
}
