//! Zarr v2 metadata: `.zarray`, `.zgroup`, `.zattrs` and consolidated `.zmetadata`
//! ([the v2 specification](https://zarr-specs.readthedocs.io/en/latest/v2/v2.0.html)).
//!
//! Parsing follows the specification where it is strict and zarr-python 3.1.6 where it says
//! nothing: `dtype` is NumPy's `dtype.str` of a core data type (`"<f8"`, `">i2"`, `"|u1"`,
//! `"|b1"`, `"<c16"`, raw bytes `"|V3"`) or of a datetime or timedelta (`"<M8[ns]"`,
//! `">m8[10s]"`, `"<M8"`), exactly as NumPy spells it, and any other data type is
//! refused by name; `compressor` and every `filters` entry are numcodecs configurations with an
//! `"id"`, kept as a [`CodecV2`] (id + configuration) for the codecs crate to build; `order` is
//! `"C"` or `"F"`; `dimension_separator` is `"."` (also when absent) or `"/"`. Other keys of
//! `.zarray` "SHOULD be ignored", so they are kept aside ([`ArrayMetadataV2::extra_fields`])
//! and written back; `.zgroup` "MUST NOT" have other keys than `zarr_format`, so they are
//! refused, except the `consolidated_metadata` that zarr-python writes into the group
//! entries of `.zmetadata`.
//!
//! Writing gives the bytes zarr-python 3.1.6 writes for `zarr_format=2`: its key order, two
//! spaces of indent (one line for `.zmetadata`), `\uXXXX` escapes outside ASCII and Python's
//! float spelling (`1e-05`), with fill values as it spells them.
//!
//! ```
//! use zarr_meta::v2::{ArrayMetadataV2, Order};
//! use zarr_meta::DataType;
//!
//! let doc = br#"{"zarr_format": 2, "shape": [100, 80], "chunks": [10, 10], "dtype": ">i2",
//!   "compressor": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0},
//!   "fill_value": -1, "order": "F", "filters": null, "dimension_separator": "/"}"#;
//! let meta = ArrayMetadataV2::from_slice(doc)?;
//! assert_eq!(meta.dtype.data_type, DataType::Int16);
//! assert_eq!(meta.order, Order::F);
//! assert_eq!(meta.compressor.as_ref().unwrap().id, "blosc");
//! assert_eq!(ArrayMetadataV2::from_slice(&meta.to_vec_pretty())?, meta);
//! # Ok::<(), zarr_meta::MetaError>(())
//! ```

mod consolidated;

use std::num::NonZeroU64;

use serde_json::{Map, Value};

use crate::array::parse_shape;
use crate::data_type::{DataKind, DataType};
use crate::error::{MetaError, Result};
use crate::fill_value::FillValue;
use crate::numpy::NumpyDtype;
use crate::pyjson::{self, Layout};

pub use consolidated::ConsolidatedMetadataV2;

/// The key of an array's metadata document.
pub const ZARRAY: &str = ".zarray";
/// The key of a group's metadata document.
pub const ZGROUP: &str = ".zgroup";
/// The key of a node's attributes.
pub const ZATTRS: &str = ".zattrs";
/// The key of a hierarchy's consolidated metadata (zarr-python's and xarray's default).
pub const ZMETADATA: &str = ".zmetadata";

/// The layout of the elements inside a chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Order {
    /// Row-major: the last dimension varies fastest.
    #[default]
    C,
    /// Column-major: the first dimension varies fastest.
    F,
}

impl Order {
    /// `"C"` or `"F"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Order::C => "C",
            Order::F => "F",
        }
    }
}

/// The character between the indices of a chunk key (`0.1` or `0/1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Separator {
    /// `"."`, the default.
    #[default]
    Dot,
    /// `"/"` (nested keys).
    Slash,
}

impl Separator {
    /// `"."` or `"/"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Separator::Dot => ".",
            Separator::Slash => "/",
        }
    }
}

/// A numcodecs codec configuration: `{"id": "zlib", "level": 1}` is the id `zlib` with the
/// configuration `{"level": 1}` (every key but `id`, in the document's order). The codecs
/// crate builds the codec (`zarr_codecs::numcodecs::build(id, configuration, ..)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodecV2 {
    /// The numcodecs codec id.
    pub id: String,
    /// The other keys of the configuration object.
    pub configuration: Map<String, Value>,
}

impl CodecV2 {
    /// A codec configuration from its id and its other keys.
    pub fn new(id: impl Into<String>, configuration: Map<String, Value>) -> Self {
        CodecV2 {
            id: id.into(),
            configuration,
        }
    }

    /// Parses a configuration object found at `field` (`"compressor"`, `"filters[1]"`).
    ///
    /// # Errors
    /// [`MetaError::MissingCodecId`] without a string `id`, [`MetaError::InvalidField`] if it
    /// is not an object.
    pub fn from_value(value: &Value, field: &str) -> Result<Self> {
        let obj = value.as_object().ok_or_else(|| {
            MetaError::invalid(
                field,
                format!("expected a numcodecs configuration object with an \"id\", got {value}"),
            )
        })?;
        let id = match obj.get("id") {
            Some(Value::String(id)) if !id.is_empty() => id.clone(),
            _ => {
                return Err(MetaError::MissingCodecId {
                    field: field.to_string(),
                })
            }
        };
        let configuration = obj
            .iter()
            .filter(|(k, _)| k.as_str() != "id")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        Ok(CodecV2 { id, configuration })
    }

    /// The configuration object, `id` first.
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("id".into(), Value::String(self.id.clone()));
        for (k, v) in &self.configuration {
            m.insert(k.clone(), v.clone());
        }
        Value::Object(m)
    }
}

/// The metadata of a Zarr v2 array: the `.zarray` document (its attributes live in `.zattrs`,
/// see [`Attributes`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ArrayMetadataV2 {
    /// The array's shape.
    pub shape: Vec<u64>,
    /// The shape of every chunk (as many entries as `shape`).
    pub chunks: Vec<NonZeroU64>,
    /// The data type with its byte order (the byte order of the stored chunks).
    pub dtype: NumpyDtype,
    /// The primary compressor, or `None` (`null`).
    pub compressor: Option<CodecV2>,
    /// The fill value, or `None` (`null`: the content of a missing chunk is undefined).
    pub fill_value: Option<FillValue>,
    /// The layout of the elements inside a chunk.
    pub order: Order,
    /// The filters, applied in order before the compressor, or `None` (`null`). An empty list
    /// in a document reads as `None`, as zarr-python reads it.
    pub filters: Option<Vec<CodecV2>>,
    /// The chunk key separator.
    pub dimension_separator: Separator,
    /// Keys the v2 specification does not define: ignored, kept to be written back.
    pub extra_fields: Map<String, Value>,
}

const ARRAY_KEYS: [&str; 9] = [
    "zarr_format",
    "shape",
    "chunks",
    "dtype",
    "compressor",
    "fill_value",
    "order",
    "filters",
    "dimension_separator",
];

impl ArrayMetadataV2 {
    /// A new array document: no compressor, no filters, order C, separator `.`, fill value 0
    /// (zarr-python's default for the core types).
    pub fn new(shape: Vec<u64>, chunks: Vec<NonZeroU64>, dtype: NumpyDtype) -> Self {
        ArrayMetadataV2 {
            shape,
            chunks,
            fill_value: Some(FillValue::zero(dtype.data_type)),
            dtype,
            compressor: None,
            order: Order::C,
            filters: None,
            dimension_separator: Separator::Dot,
            extra_fields: Map::new(),
        }
    }

    /// Parses `.zarray` bytes.
    ///
    /// # Errors
    /// Any fault of the document (see [`MetaError`]).
    pub fn from_slice(bytes: &[u8]) -> Result<Self> {
        Self::from_value(&parse_json(bytes)?)
    }

    /// Parses a `.zarray` document.
    ///
    /// # Errors
    /// Any fault of the document (see [`MetaError`]).
    pub fn from_value(value: &Value) -> Result<Self> {
        let obj = value.as_object().ok_or(MetaError::NotAnObject)?;
        check_format(obj, ZARRAY)?;
        let shape = parse_shape(required(obj, "shape")?)?;
        let chunks = parse_chunks(required(obj, "chunks")?)?;
        if chunks.len() != shape.len() {
            return Err(MetaError::DimensionMismatch {
                field: "chunks",
                expected: shape.len(),
                got: chunks.len(),
            });
        }
        let dtype = match required(obj, "dtype")? {
            Value::String(s) if s == "|O" => object_dtype(obj.get("filters"))?,
            other => parse_dtype(other)?,
        };
        let compressor = match required(obj, "compressor")? {
            Value::Null => None,
            v => Some(CodecV2::from_value(v, "compressor")?),
        };
        let fill_value = fill_value_from_json(required(obj, "fill_value")?, dtype)?;
        let order = match required(obj, "order")? {
            Value::String(s) if s == "C" => Order::C,
            Value::String(s) if s == "F" => Order::F,
            other => {
                return Err(MetaError::invalid(
                    "order",
                    format!("expected \"C\" or \"F\", got {other}"),
                ))
            }
        };
        let filters = match required(obj, "filters")? {
            Value::Null => None,
            Value::Array(items) if items.is_empty() => None,
            Value::Array(items) => Some(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, f)| CodecV2::from_value(f, &format!("filters[{i}]")))
                    .collect::<Result<Vec<_>>>()?,
            ),
            other => {
                return Err(MetaError::invalid(
                    "filters",
                    format!("expected a list of numcodecs configurations or null, got {other}"),
                ))
            }
        };
        let dimension_separator = match obj.get("dimension_separator") {
            None => Separator::Dot,
            Some(Value::String(s)) if s == "." => Separator::Dot,
            Some(Value::String(s)) if s == "/" => Separator::Slash,
            Some(other) => {
                return Err(MetaError::invalid(
                    "dimension_separator",
                    format!("expected \".\" or \"/\", got {other}"),
                ))
            }
        };
        let extra_fields = obj
            .iter()
            .filter(|(k, _)| !ARRAY_KEYS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        Ok(ArrayMetadataV2 {
            shape,
            chunks,
            dtype,
            compressor,
            fill_value,
            order,
            filters,
            dimension_separator,
            extra_fields,
        })
    }

    /// The array's rank.
    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// The data type.
    pub fn data_type(&self) -> DataType {
        self.dtype.data_type
    }

    /// The document as JSON, with the keys in zarr-python's order (then the extra keys).
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("shape".into(), Value::from(self.shape.clone()));
        m.insert(
            "chunks".into(),
            Value::from(self.chunks.iter().map(|c| c.get()).collect::<Vec<_>>()),
        );
        m.insert("dtype".into(), Value::String(self.dtype.to_numpy_str()));
        m.insert(
            "fill_value".into(),
            fill_value_to_json(self.fill_value.as_ref(), self.dtype.data_type),
        );
        m.insert("order".into(), Value::String(self.order.as_str().into()));
        m.insert(
            "filters".into(),
            self.filters.as_ref().map_or(Value::Null, |f| {
                Value::Array(f.iter().map(CodecV2::to_value).collect())
            }),
        );
        m.insert(
            "dimension_separator".into(),
            Value::String(self.dimension_separator.as_str().into()),
        );
        m.insert(
            "compressor".into(),
            self.compressor
                .as_ref()
                .map_or(Value::Null, CodecV2::to_value),
        );
        m.insert("zarr_format".into(), Value::from(2));
        for (k, v) in &self.extra_fields {
            m.insert(k.clone(), v.clone());
        }
        Value::Object(m)
    }

    /// The `.zarray` bytes as zarr-python writes them.
    pub fn to_vec_pretty(&self) -> Vec<u8> {
        pyjson::to_vec(&self.to_value(), Layout::Indent2)
    }
}

/// The metadata of a Zarr v2 group: the `.zgroup` document, `{"zarr_format": 2}` (its
/// attributes live in `.zattrs`, see [`Attributes`]).
///
/// ```
/// use zarr_meta::v2::GroupMetadataV2;
/// let g = GroupMetadataV2::from_slice(br#"{"zarr_format": 2}"#).unwrap();
/// assert_eq!(g.to_vec_pretty(), b"{\n  \"zarr_format\": 2\n}");
/// let err = GroupMetadataV2::from_slice(br#"{"zarr_format": 2, "shape": [3]}"#).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "unknown key \"shape\" in .zgroup (a v2 group document holds only \"zarr_format\"; \
///      attributes belong in .zattrs)"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GroupMetadataV2 {
    /// The `consolidated_metadata` object that zarr-python 3 writes into the group entries of
    /// `.zmetadata` (`{"metadata": {}, "must_understand": false, "kind": "inline"}`), kept
    /// to be written back; `None` in a `.zgroup` of its own.
    pub consolidated_metadata: Option<Value>,
}

impl GroupMetadataV2 {
    /// Parses `.zgroup` bytes.
    ///
    /// # Errors
    /// Not an object, a `zarr_format` other than 2, or any other key.
    pub fn from_slice(bytes: &[u8]) -> Result<Self> {
        Self::from_value(&parse_json(bytes)?)
    }

    /// Parses a `.zgroup` document.
    ///
    /// # Errors
    /// Not an object, a `zarr_format` other than 2, or any other key.
    pub fn from_value(value: &Value) -> Result<Self> {
        let obj = value.as_object().ok_or(MetaError::NotAnObject)?;
        check_format(obj, ZGROUP)?;
        let mut consolidated_metadata = None;
        for (k, v) in obj {
            match k.as_str() {
                "zarr_format" => {}
                "consolidated_metadata" if v.is_object() || v.is_null() => {
                    consolidated_metadata = Some(v.clone());
                }
                _ => {
                    return Err(MetaError::UnknownKeyV2 {
                        document: ZGROUP,
                        key: k.clone(),
                    })
                }
            }
        }
        Ok(GroupMetadataV2 {
            consolidated_metadata,
        })
    }

    /// The document as JSON.
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("zarr_format".into(), Value::from(2));
        if let Some(c) = &self.consolidated_metadata {
            m.insert("consolidated_metadata".into(), c.clone());
        }
        Value::Object(m)
    }

    /// The `.zgroup` bytes as zarr-python writes them.
    pub fn to_vec_pretty(&self) -> Vec<u8> {
        pyjson::to_vec(&self.to_value(), Layout::Indent2)
    }
}

/// The attributes of a v2 array or group: the `.zattrs` document, any JSON object (an absent
/// `.zattrs` means no attributes).
///
/// ```
/// use zarr_meta::v2::Attributes;
/// let a = Attributes::from_slice("{\"units\": \"m\u{b2}\", \"scale\": 1e-05}".as_bytes()).unwrap();
/// assert_eq!(a.0["units"], "m\u{b2}");
/// // as Python's json.dumps(indent=2) writes it
/// assert_eq!(a.to_vec_pretty(), b"{\n  \"units\": \"m\\u00b2\",\n  \"scale\": 1e-05\n}");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Attributes(pub Map<String, Value>);

impl Attributes {
    /// Parses `.zattrs` bytes.
    ///
    /// # Errors
    /// Invalid JSON, or JSON that is not an object.
    pub fn from_slice(bytes: &[u8]) -> Result<Self> {
        Self::from_value(&parse_json(bytes)?)
    }

    /// Parses a `.zattrs` document.
    ///
    /// # Errors
    /// If it is not an object.
    pub fn from_value(value: &Value) -> Result<Self> {
        match value {
            Value::Object(m) => Ok(Attributes(m.clone())),
            other => Err(MetaError::invalid(
                ZATTRS,
                format!("expected a JSON object of attributes, got {other}"),
            )),
        }
    }

    /// The document as JSON.
    pub fn to_value(&self) -> Value {
        Value::Object(self.0.clone())
    }

    /// The `.zattrs` bytes as zarr-python writes them.
    pub fn to_vec_pretty(&self) -> Vec<u8> {
        pyjson::to_vec(&self.to_value(), Layout::Indent2)
    }
}

fn parse_json(bytes: &[u8]) -> Result<Value> {
    serde_json::from_slice(bytes).map_err(|source| MetaError::Json { source })
}

fn required<'a>(obj: &'a Map<String, Value>, field: &'static str) -> Result<&'a Value> {
    obj.get(field).ok_or(MetaError::MissingField { field })
}

fn check_format(obj: &Map<String, Value>, document: &'static str) -> Result<()> {
    match required(obj, "zarr_format")? {
        Value::Number(n) if n.as_u64() == Some(2) => Ok(()),
        other => Err(MetaError::UnsupportedZarrFormat {
            document,
            expected: 2,
            found: other.to_string(),
        }),
    }
}

fn parse_chunks(v: &Value) -> Result<Vec<NonZeroU64>> {
    let items = v
        .as_array()
        .ok_or_else(|| MetaError::invalid("chunks", format!("expected a list, got {v}")))?;
    items
        .iter()
        .enumerate()
        .map(|(axis, i)| match i.as_u64() {
            Some(n) => NonZeroU64::new(n).ok_or(MetaError::ZeroChunkSize { axis }),
            None => Err(MetaError::invalid(
                "chunks",
                format!("{i} is not a positive integer"),
            )),
        })
        .collect()
}

/// Parses a v2 `dtype`: NumPy's `dtype.str` of a core data type, a datetime or a timedelta,
/// spelled exactly as NumPy spells it (`"<f8"`, not `"float64"` or `"f8"`; `"|u1"`, not
/// `"<u1"`; `"<M8[ns]"`, not `"datetime64[ns]"`).
///
/// # Errors
/// [`MetaError::UnsupportedDtypeV2`] naming the dtype (strings, datetimes, objects, structured
/// types), [`MetaError::NonCanonicalDtypeV2`] for a core type in another spelling.
pub fn parse_dtype(value: &Value) -> Result<NumpyDtype> {
    let text = match value {
        Value::String(s) => s,
        Value::Array(_) => {
            return Err(MetaError::UnsupportedDtypeV2 {
                dtype: value.to_string(),
                kind: "a structured data type",
            })
        }
        other => {
            return Err(MetaError::invalid(
                "dtype",
                format!("expected a NumPy type string such as \"<f8\", got {other}"),
            ))
        }
    };
    match NumpyDtype::parse(text) {
        Ok(t) => {
            let canonical = t.to_numpy_str();
            if &canonical == text {
                Ok(t)
            } else {
                Err(MetaError::NonCanonicalDtypeV2 {
                    dtype: text.clone(),
                    canonical,
                })
            }
        }
        Err(_) => Err(MetaError::UnsupportedDtypeV2 {
            dtype: value.to_string(),
            kind: dtype_kind_name(text),
        }),
    }
}

/// The data type of a `|O` array, which its first filter gives: `vlen-utf8` strings or
/// `vlen-bytes` byte strings (numcodecs' `VLenUTF8`, `VLenBytes`), as zarr-python writes them.
fn object_dtype(filters: Option<&Value>) -> Result<NumpyDtype> {
    let first = filters
        .and_then(Value::as_array)
        .and_then(|f| f.first())
        .and_then(|f| f.get("id"))
        .and_then(Value::as_str);
    let data_type = match first {
        Some("vlen-utf8") => DataType::String,
        Some("vlen-bytes") => DataType::Bytes,
        _ => {
            return Err(MetaError::UnsupportedDtypeV2 {
                dtype: "\"|O\"".into(),
                kind: "an object type whose first filter is not vlen-utf8 or vlen-bytes",
            })
        }
    };
    Ok(NumpyDtype {
        data_type,
        byte_order: None,
    })
}

/// What a v2 dtype string that is not a core data type is, for the error message.
fn dtype_kind_name(text: &str) -> &'static str {
    let code = text.trim_start_matches(['<', '>', '|', '=']);
    match code.chars().next() {
        Some('S') | Some('a') => "a fixed-length byte string not spelled |S<n> with n >= 1",
        Some('U') => "a fixed-length unicode string not spelled <U<n> with n >= 1",
        Some('M') => "a datetime64 with a unit or scale factor outside numpy.datetime64",
        Some('m') => "a timedelta64 with a unit or scale factor outside numpy.timedelta64",
        Some('O') => "an object (variable-length) type",
        _ => "not a NumPy type string of a core data type",
    }
}

/// Parses a v2 `fill_value` for `dtype`: `null`; `true`/`false` for bool; integers (and
/// integral floats such as `0.0`, which zarr-python reads as integers) for integer types;
/// numbers, `"NaN"`, `"Infinity"` and `"-Infinity"` for floats; `[re, im]` of those for
/// complex types; a base64 string of the element's bytes for raw types (`|V<n>`); an integer
/// or `"NaT"` for datetimes and timedeltas; a string, or a number or boolean read as Python's
/// `str` of it (`0` is `"0"`, as zarr-python 3.1.6 reads it), for `|O` strings.
///
/// # Errors
/// [`MetaError::InvalidFillValue`] naming the value, the dtype and what is wrong.
pub fn fill_value_from_json(value: &Value, dtype: NumpyDtype) -> Result<Option<FillValue>> {
    let data_type = dtype.data_type;
    let err = |reason: &str| MetaError::InvalidFillValue {
        data_type: dtype.to_numpy_str(),
        value: value.to_string(),
        reason: reason.to_string(),
    };
    let is_v3_only_string = |v: &Value| {
        v.as_str()
            .is_some_and(|s| !matches!(s, "NaN" | "Infinity" | "-Infinity"))
    };
    let v3_form = match (data_type.kind(), value) {
        (_, Value::Null) => return Ok(None),
        (DataKind::Raw, Value::String(s)) => {
            let bytes = base64_decode(s).ok_or_else(|| err("not a base64 string"))?;
            if bytes.len() != data_type.size() {
                return Err(err(&format!(
                    "the base64 string holds {} bytes, the dtype {}",
                    bytes.len(),
                    data_type.size()
                )));
            }
            return FillValue::from_ne_bytes(data_type, bytes).map(Some);
        }
        (DataKind::Raw, _) => return Err(err("expected a base64 string or null")),
        // older zarr-python wrote numbers (`0`) as the fill value of `|O` string arrays;
        // zarr-python 3 reads them as Python's `str` of the number
        (DataKind::String, Value::Number(n)) => Value::String(match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.to_string(),
            (_, Some(u)) => u.to_string(),
            _ => crate::pyjson::python_float_repr(n.as_f64().unwrap_or(f64::NAN)),
        }),
        (DataKind::String, Value::Bool(b)) => {
            Value::String(if *b { "True" } else { "False" }.into())
        }
        (DataKind::Int | DataKind::UInt, Value::Number(n)) if n.is_f64() => {
            let x = n.as_f64().unwrap_or(f64::NAN);
            if x.fract() != 0.0 {
                return Err(err("expected an integer"));
            }
            // integral floats within 2^64 convert exactly; range is checked as for integers
            if x < 0.0 && x >= -(2f64.powi(63)) {
                Value::from(x as i64)
            } else if (0.0..2f64.powi(64)).contains(&x) {
                Value::from(x as u64)
            } else {
                return Err(err("out of range"));
            }
        }
        (DataKind::Float, v) if is_v3_only_string(v) => {
            return Err(err(
                "expected a number, \"NaN\", \"Infinity\", \"-Infinity\" or null",
            ))
        }
        (DataKind::Complex, Value::Array(parts)) if parts.iter().any(is_v3_only_string) => {
            return Err(err(
                "expected [real, imaginary] of numbers, \"NaN\", \"Infinity\" or \"-Infinity\"",
            ))
        }
        (_, v) => v.clone(),
    };
    FillValue::from_json(&v3_form, data_type)
        .map(Some)
        .map_err(|e| match e {
            MetaError::InvalidFillValue { reason, .. } => err(&reason),
            other => other,
        })
}

/// The v2 JSON form of a fill value, as zarr-python writes it (`null` for `None`; a NaN with a
/// payload is written `"NaN"`, since v2 has no spelling for its bits).
pub fn fill_value_to_json(fill: Option<&FillValue>, data_type: DataType) -> Value {
    let Some(fill) = fill else {
        return Value::Null;
    };
    let nan_as_string = |v: Value| match v {
        Value::String(s) if s.starts_with("0x") => Value::String("NaN".into()),
        other => other,
    };
    match data_type.kind() {
        DataKind::Raw => Value::String(base64_encode(fill.as_bytes())),
        DataKind::Float => nan_as_string(fill.to_json(data_type)),
        DataKind::Complex => match fill.to_json(data_type) {
            Value::Array(parts) => Value::Array(parts.into_iter().map(nan_as_string).collect()),
            other => other,
        },
        _ => fill.to_json(data_type),
    }
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding, as Python's `base64.standard_b64encode`.
pub(crate) fn base64_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for group in bytes.chunks(3) {
        let b = [
            group[0],
            *group.get(1).unwrap_or(&0),
            *group.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= group.len() {
                out.push(char::from(BASE64[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Decodes standard base64 with padding (the length a multiple of 4); `None` if malformed.
pub(crate) fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let s = text.as_bytes();
    if !s.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    for (g, group) in s.chunks(4).enumerate() {
        let last = g + 1 == s.len() / 4;
        let pad = group.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && !last) {
            return None;
        }
        let mut n = 0u32;
        for &c in &group[..4 - pad] {
            let v = BASE64.iter().position(|&x| x == c)? as u32;
            n = (n << 6) | v;
        }
        n <<= 6 * pad as u32;
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        // the bits that padding drops must be zero (one spelling per byte string)
        if pad > 0 && bytes[3 - pad..].iter().any(|&b| b != 0) {
            return None;
        }
        out.extend_from_slice(&bytes[..3 - pad]);
    }
    Some(out)
}

#[cfg(test)]
mod tests;
