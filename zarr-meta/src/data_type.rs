//! The data types of Zarr v3 (the core types, raw bits, NumPy's datetimes and timedeltas,
//! strings and byte strings of variable and of fixed length) and the comparison "equal to the
//! fill value".

use std::fmt;
use std::num::NonZeroUsize;

use crate::error::{MetaError, Result};
use crate::ext::{ExtensionDef, ExtensionPoint, Registry};

pub mod fixed_width;
mod time;
pub use time::{
    TimeScale, TimeScaleError, TimeUnit, DATETIME64, MAX_SCALE_FACTOR, NAT, TIMEDELTA64, TIME_UNITS,
};

/// A Zarr v3 data type: a core type, raw bits, or an extension type this crate knows.
///
/// In memory, elements are held in the machine's native byte order (the `bytes` codec
/// converts); `bool` is one byte, 0 or 1; complex numbers are (real, imaginary) pairs;
/// datetimes and timedeltas are `i64` counts of their [`TimeScale`] (`i64::MIN` is `NaT`).
///
/// NumPy's fixed-width strings are fixed-size types: [`DataType::FixedLengthUtf32`] (`U<n>`,
/// n UTF-32 code units in native byte order, NUL-padded) and [`DataType::NullTerminatedBytes`]
/// (`S<n>`, n bytes, NUL-padded), as zarr-python 3.1.6 writes them.
///
/// [`DataType::String`] and [`DataType::Bytes`] have elements of variable size
/// ([`DataType::fixed_size`] is `None`): they have no fixed-size in-memory form, so the
/// fixed-size paths (the `bytes` codec, byte buffers of whole chunks) refuse them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DataType {
    /// `bool`
    Bool,
    /// `int8`
    Int8,
    /// `int16`
    Int16,
    /// `int32`
    Int32,
    /// `int64`
    Int64,
    /// `uint8`
    UInt8,
    /// `uint16`
    UInt16,
    /// `uint32`
    UInt32,
    /// `uint64`
    UInt64,
    /// `float16`
    Float16,
    /// `float32`
    Float32,
    /// `float64`
    Float64,
    /// `complex64` (two float32)
    Complex64,
    /// `complex128` (two float64)
    Complex128,
    /// `r<N>`: raw bits, N a positive multiple of 8; the value is the byte count N/8.
    RawBits(NonZeroUsize),
    /// `numpy.datetime64`: a signed 64-bit count of the scale since the Unix epoch.
    DateTime64(TimeScale),
    /// `numpy.timedelta64`: a signed 64-bit count of the scale.
    TimeDelta64(TimeScale),
    /// `string`: UTF-8 strings of any length (variable size).
    String,
    /// `variable_length_bytes` (also read as `bytes`): byte strings of any length (variable
    /// size).
    Bytes,
    /// `fixed_length_utf32` (NumPy's `U<n>`): the value is `length_bytes`, four per code unit;
    /// shorter strings end in NUL code units.
    FixedLengthUtf32(NonZeroUsize),
    /// `null_terminated_bytes` (NumPy's `S<n>`): the value is `length_bytes`; shorter byte
    /// strings end in NUL bytes (which NumPy strips on reading an element).
    NullTerminatedBytes(NonZeroUsize),
}

/// The broad kind of a data type, for code that dispatches on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DataKind {
    /// `bool`
    Bool,
    /// signed integers
    Int,
    /// unsigned integers
    UInt,
    /// IEEE floats
    Float,
    /// complex numbers
    Complex,
    /// raw bits
    Raw,
    /// `numpy.datetime64`
    DateTime,
    /// `numpy.timedelta64`
    TimeDelta,
    /// `string` (variable size)
    String,
    /// `variable_length_bytes` (variable size)
    Bytes,
    /// `fixed_length_utf32` (NumPy's `U<n>`)
    FixedLengthUtf32,
    /// `null_terminated_bytes` (NumPy's `S<n>`)
    NullTerminatedBytes,
}

/// The core data type names, in the order of the spec.
pub const CORE_DATA_TYPES: [DataType; 14] = [
    DataType::Bool,
    DataType::Int8,
    DataType::Int16,
    DataType::Int32,
    DataType::Int64,
    DataType::UInt8,
    DataType::UInt16,
    DataType::UInt32,
    DataType::UInt64,
    DataType::Float16,
    DataType::Float32,
    DataType::Float64,
    DataType::Complex64,
    DataType::Complex128,
];

impl DataType {
    /// The name written in metadata (`"int32"`, `"r16"`, `"numpy.datetime64"`).
    pub fn name(&self) -> String {
        match self {
            DataType::RawBits(n) => format!("r{}", n.get() * 8),
            DataType::DateTime64(_) => DATETIME64.to_string(),
            DataType::TimeDelta64(_) => TIMEDELTA64.to_string(),
            DataType::FixedLengthUtf32(_) => FIXED_LENGTH_UTF32.to_string(),
            DataType::NullTerminatedBytes(_) => NULL_TERMINATED_BYTES.to_string(),
            other => other.static_name().unwrap_or_default().to_string(),
        }
    }

    /// The definition written in metadata's `data_type`: the short form `"int32"` for the
    /// core types and raw bits, an object with a configuration for the others.
    pub fn to_def(&self) -> ExtensionDef {
        match self {
            DataType::DateTime64(scale) | DataType::TimeDelta64(scale) => {
                ExtensionDef::with_configuration(self.name(), scale.to_configuration())
            }
            DataType::FixedLengthUtf32(n) | DataType::NullTerminatedBytes(n) => {
                let mut c = serde_json::Map::new();
                c.insert("length_bytes".into(), n.get().into());
                ExtensionDef::with_configuration(self.name(), c)
            }
            _ => ExtensionDef::short(self.name()),
        }
    }

    fn static_name(&self) -> Option<&'static str> {
        Some(match self {
            DataType::Bool => "bool",
            DataType::Int8 => "int8",
            DataType::Int16 => "int16",
            DataType::Int32 => "int32",
            DataType::Int64 => "int64",
            DataType::UInt8 => "uint8",
            DataType::UInt16 => "uint16",
            DataType::UInt32 => "uint32",
            DataType::UInt64 => "uint64",
            DataType::Float16 => "float16",
            DataType::Float32 => "float32",
            DataType::Float64 => "float64",
            DataType::Complex64 => "complex64",
            DataType::Complex128 => "complex128",
            DataType::String => STRING,
            DataType::Bytes => VARIABLE_LENGTH_BYTES,
            DataType::RawBits(_)
            | DataType::DateTime64(_)
            | DataType::TimeDelta64(_)
            | DataType::FixedLengthUtf32(_)
            | DataType::NullTerminatedBytes(_) => return None,
        })
    }

    /// Parses a core name, `r<N>`, `string`, `variable_length_bytes` or `bytes`; `None` for
    /// anything else (types with a configuration have no name alone: see
    /// [`DataType::from_def`]).
    pub fn from_name(name: &str) -> Option<DataType> {
        if let Some(t) = CORE_DATA_TYPES
            .iter()
            .find(|t| t.static_name() == Some(name))
        {
            return Some(*t);
        }
        match name {
            STRING => return Some(DataType::String),
            VARIABLE_LENGTH_BYTES | BYTES_ALIAS => return Some(DataType::Bytes),
            _ => {}
        }
        let bits = name.strip_prefix('r')?;
        if bits.is_empty() || bits.starts_with('0') || !bits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let bits: usize = bits.parse().ok()?;
        if !bits.is_multiple_of(8) {
            return None;
        }
        NonZeroUsize::new(bits / 8).map(DataType::RawBits)
    }

    /// The size of one element in bytes, `None` for the variable-size types (`string`,
    /// `variable_length_bytes`).
    pub fn fixed_size(&self) -> Option<usize> {
        match self {
            DataType::String | DataType::Bytes => None,
            other => Some(other.size()),
        }
    }

    /// Whether elements have no fixed size (`string`, `variable_length_bytes`).
    pub fn is_variable_size(&self) -> bool {
        self.fixed_size().is_none()
    }

    /// The size of one element in bytes, for the fixed-size paths: [`DataType::fixed_size`]
    /// of a fixed-size type, and 0 for a variable-size one. A variable-size type never reaches
    /// those paths (a codec chain refuses it unless its array->bytes codec takes variable-size
    /// elements); code that can meet one asks [`DataType::fixed_size`].
    pub fn size(&self) -> usize {
        match self {
            DataType::String | DataType::Bytes => 0,
            DataType::Bool | DataType::Int8 | DataType::UInt8 => 1,
            DataType::Int16 | DataType::UInt16 | DataType::Float16 => 2,
            DataType::Int32 | DataType::UInt32 | DataType::Float32 => 4,
            DataType::Int64
            | DataType::UInt64
            | DataType::Float64
            | DataType::Complex64
            | DataType::DateTime64(_)
            | DataType::TimeDelta64(_) => 8,
            DataType::Complex128 => 16,
            DataType::RawBits(n)
            | DataType::FixedLengthUtf32(n)
            | DataType::NullTerminatedBytes(n) => n.get(),
        }
    }

    /// The size of one component that the `bytes` codec swaps for big-endian
    /// (`None` for types of one byte and for raw bits, which have no byte order).
    pub fn endian_component_size(&self) -> Option<usize> {
        match self {
            DataType::Bool
            | DataType::Int8
            | DataType::UInt8
            | DataType::RawBits(_)
            | DataType::String
            | DataType::Bytes
            | DataType::NullTerminatedBytes(_) => None,
            // each UTF-32 code unit has the byte order
            DataType::FixedLengthUtf32(_) => Some(4),
            DataType::Complex64 => Some(4),
            DataType::Complex128 => Some(8),
            other => Some(other.size()),
        }
    }

    /// The broad kind.
    pub fn kind(&self) -> DataKind {
        match self {
            DataType::Bool => DataKind::Bool,
            DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => DataKind::Int,
            DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::UInt64 => {
                DataKind::UInt
            }
            DataType::Float16 | DataType::Float32 | DataType::Float64 => DataKind::Float,
            DataType::Complex64 | DataType::Complex128 => DataKind::Complex,
            DataType::RawBits(_) => DataKind::Raw,
            DataType::DateTime64(_) => DataKind::DateTime,
            DataType::TimeDelta64(_) => DataKind::TimeDelta,
            DataType::String => DataKind::String,
            DataType::Bytes => DataKind::Bytes,
            DataType::FixedLengthUtf32(_) => DataKind::FixedLengthUtf32,
            DataType::NullTerminatedBytes(_) => DataKind::NullTerminatedBytes,
        }
    }

    /// The float component width in bytes (2, 4 or 8) for floats and complex numbers.
    pub fn float_component_size(&self) -> Option<usize> {
        match self {
            DataType::Float16 => Some(2),
            DataType::Float32 | DataType::Complex64 => Some(4),
            DataType::Float64 | DataType::Complex128 => Some(8),
            _ => None,
        }
    }

    /// Whether two elements (native byte order) are "equal" in the sense Zarr uses for fill
    /// values: the same bit pattern, except that every NaN equals every NaN (per component
    /// for complex numbers). `-0.0` is not `0.0`.
    pub fn elements_equal(&self, a: &[u8], b: &[u8]) -> bool {
        if a.len() != b.len() {
            return false;
        }
        match self.float_component_size() {
            None => a == b,
            Some(w) => a
                .chunks_exact(w)
                .zip(b.chunks_exact(w))
                .all(|(x, y)| x == y || (is_nan(x) && is_nan(y))),
        }
    }

    /// Whether every element of `chunk` (native byte order) equals `fill`, in the sense of
    /// [`DataType::elements_equal`]. A chunk whose length is not a multiple of the element
    /// size is never all fill, nor is a buffer of a variable-size type (it has no fixed-size
    /// elements to compare).
    pub fn all_equal(&self, chunk: &[u8], fill: &[u8]) -> bool {
        let Some(size) = self.fixed_size() else {
            return false;
        };
        if fill.len() != size || !chunk.len().is_multiple_of(size) {
            return false;
        }
        let fill_has_nan = self
            .float_component_size()
            .is_some_and(|w| fill.chunks_exact(w).any(is_nan));
        if !fill_has_nan {
            // bit-pattern comparison; a NaN in the chunk never equals a non-NaN fill
            return all_repeat(chunk, fill);
        }
        chunk
            .chunks_exact(size)
            .all(|e| self.elements_equal(e, fill))
    }

    /// Resolves a `data_type` definition through a data type registry.
    ///
    /// # Errors
    /// Unknown names, a `must_understand` field, a configuration on a core type, or a bad
    /// configuration of a type that takes one.
    pub fn from_def(def: &ExtensionDef, registry: &Registry<DataTypeFactory>) -> Result<DataType> {
        // r<N> is a family of names; it resolves through the entry "r*".
        let factory = match registry.resolve_required(def) {
            Ok(f) => f,
            Err(MetaError::UnknownExtension { .. })
                if DataType::from_name(&def.name).is_some_and(|t| t.kind() == DataKind::Raw) =>
            {
                match registry.get(RAW_BITS_ENTRY) {
                    Some(f) => f,
                    None => {
                        return Err(MetaError::UnknownExtension {
                            point: ExtensionPoint::DataType,
                            name: def.name.clone(),
                        })
                    }
                }
            }
            Err(e) => return Err(e),
        };
        factory(def)
    }
}

/// The registry entry that stands for the whole `r<N>` family.
pub const RAW_BITS_ENTRY: &str = "r*";

/// The metadata name of [`DataType::String`].
pub const STRING: &str = "string";
/// The metadata name of [`DataType::Bytes`], as zarr-python 3.1.6 writes it.
pub const VARIABLE_LENGTH_BYTES: &str = "variable_length_bytes";
/// Another name of [`DataType::Bytes`] (zarr-extensions' `bytes`), read but not written.
pub const BYTES_ALIAS: &str = "bytes";
/// The metadata name of [`DataType::FixedLengthUtf32`].
pub const FIXED_LENGTH_UTF32: &str = "fixed_length_utf32";
/// The metadata name of [`DataType::NullTerminatedBytes`].
pub const NULL_TERMINATED_BYTES: &str = "null_terminated_bytes";

/// Builds a data type from its definition.
pub type DataTypeFactory = fn(&ExtensionDef) -> Result<DataType>;

fn core_factory(def: &ExtensionDef) -> Result<DataType> {
    if def.configuration.as_ref().is_some_and(|c| !c.is_empty()) {
        return Err(def.invalid_configuration(
            ExtensionPoint::DataType,
            "this data type takes no configuration",
        ));
    }
    DataType::from_name(&def.name).ok_or_else(|| MetaError::UnknownExtension {
        point: ExtensionPoint::DataType,
        name: def.name.clone(),
    })
}

fn datetime_factory(def: &ExtensionDef) -> Result<DataType> {
    TimeScale::from_def(def).map(DataType::DateTime64)
}

fn timedelta_factory(def: &ExtensionDef) -> Result<DataType> {
    TimeScale::from_def(def).map(DataType::TimeDelta64)
}

/// The `length_bytes` of a fixed-width string type: positive, a multiple of `unit`.
fn length_bytes(def: &ExtensionDef, unit: usize) -> Result<NonZeroUsize> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Config {
        length_bytes: u64,
    }
    let point = ExtensionPoint::DataType;
    let config: Config = def.parse_configuration(point)?;
    usize::try_from(config.length_bytes)
        .ok()
        .filter(|n| n.is_multiple_of(unit))
        .and_then(NonZeroUsize::new)
        .ok_or_else(|| {
            def.invalid_configuration(
                point,
                format!(
                    "length_bytes {} is not a positive multiple of {unit}",
                    config.length_bytes
                ),
            )
        })
}

fn fixed_length_utf32_factory(def: &ExtensionDef) -> Result<DataType> {
    length_bytes(def, 4).map(DataType::FixedLengthUtf32)
}

fn null_terminated_bytes_factory(def: &ExtensionDef) -> Result<DataType> {
    length_bytes(def, 1).map(DataType::NullTerminatedBytes)
}

/// Registers the core data types, the `r<N>` family, `numpy.datetime64`,
/// `numpy.timedelta64`, `string`, `variable_length_bytes` (also `bytes`),
/// `fixed_length_utf32` and `null_terminated_bytes`.
///
/// # Errors
/// If one of the names is already registered.
pub fn register_defaults(registry: &mut Registry<DataTypeFactory>) -> Result<()> {
    for t in CORE_DATA_TYPES {
        registry.register(t.name(), core_factory as DataTypeFactory)?;
    }
    registry.register(RAW_BITS_ENTRY, core_factory as DataTypeFactory)?;
    for name in [STRING, VARIABLE_LENGTH_BYTES, BYTES_ALIAS] {
        registry.register(name, core_factory as DataTypeFactory)?;
    }
    registry.register(DATETIME64, datetime_factory as DataTypeFactory)?;
    registry.register(
        FIXED_LENGTH_UTF32,
        fixed_length_utf32_factory as DataTypeFactory,
    )?;
    registry.register(
        NULL_TERMINATED_BYTES,
        null_terminated_bytes_factory as DataTypeFactory,
    )?;
    registry.register(TIMEDELTA64, timedelta_factory as DataTypeFactory)
}

/// A registry holding every data type of this crate.
pub fn default_registry() -> Registry<DataTypeFactory> {
    let mut r = Registry::new(ExtensionPoint::DataType);
    // cannot fail: the registry is new and the names are distinct
    let _ = register_defaults(&mut r);
    r
}

/// The name, and for the time types the scale in NumPy's brackets:
/// `numpy.datetime64[10ms]`.
impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataType::DateTime64(s) | DataType::TimeDelta64(s) => {
                write!(f, "{}[{s}]", self.name())
            }
            DataType::FixedLengthUtf32(n) | DataType::NullTerminatedBytes(n) => {
                write!(f, "{}[{} bytes]", self.name(), n.get())
            }
            _ => f.write_str(&self.name()),
        }
    }
}

fn is_nan(component: &[u8]) -> bool {
    match component.len() {
        2 => {
            let bits = u16::from_ne_bytes([component[0], component[1]]);
            (bits & 0x7c00) == 0x7c00 && (bits & 0x03ff) != 0
        }
        4 => {
            let mut b = [0u8; 4];
            b.copy_from_slice(component);
            f32::from_ne_bytes(b).is_nan()
        }
        8 => {
            let mut b = [0u8; 8];
            b.copy_from_slice(component);
            f64::from_ne_bytes(b).is_nan()
        }
        _ => false,
    }
}

/// Whether `chunk` is `pattern` repeated (chunk.len() a multiple of pattern.len()).
fn all_repeat(chunk: &[u8], pattern: &[u8]) -> bool {
    if pattern.len() <= 8 && 8 % pattern.len() == 0 {
        // compare eight bytes at a time against the pattern repeated to a word
        let mut word = [0u8; 8];
        for (i, b) in word.iter_mut().enumerate() {
            *b = pattern[i % pattern.len()];
        }
        let word = u64::from_ne_bytes(word);
        let mut words = chunk.chunks_exact(8);
        let body = words
            .by_ref()
            .all(|w| u64::from_ne_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]) == word);
        return body
            && words
                .remainder()
                .chunks_exact(pattern.len())
                .all(|e| e == pattern);
    }
    chunk.chunks_exact(pattern.len()).all(|e| e == pattern)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for t in CORE_DATA_TYPES {
            assert_eq!(DataType::from_name(&t.name()), Some(t));
        }
        assert_eq!(DataType::from_name("r8").map(|t| t.size()), Some(1));
        assert_eq!(
            DataType::from_name("r24").map(|t| t.name()),
            Some("r24".into())
        );
        for bad in [
            "r0", "r7", "r", "r08", "r-8", "int33", "Int32", "float", "r8x",
        ] {
            assert_eq!(DataType::from_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn nan_equals_nan_but_negative_zero_is_not_zero() {
        let t = DataType::Float32;
        let nan1 = f32::NAN.to_ne_bytes();
        let nan2 = f32::from_bits(0x7fc0_0001).to_ne_bytes();
        assert!(t.elements_equal(&nan1, &nan2));
        assert!(!t.elements_equal(&(-0.0f32).to_ne_bytes(), &0.0f32.to_ne_bytes()));
        let chunk: Vec<u8> = [f32::NAN, -f32::NAN]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        assert!(t.all_equal(&chunk, &nan1));
        let zeros: Vec<u8> = [0.0f32, -0.0]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        assert!(!t.all_equal(&zeros, &0.0f32.to_ne_bytes()));
        assert!(t.all_equal(&[0u8; 16], &0.0f32.to_ne_bytes()));
        let f16_nan = 0x7e00u16.to_ne_bytes();
        let f16_nan2 = 0xfe01u16.to_ne_bytes();
        assert!(DataType::Float16.elements_equal(&f16_nan, &f16_nan2));
        // complex: per component
        let c = |a: f64, b: f64| [a.to_ne_bytes(), b.to_ne_bytes()].concat();
        assert!(DataType::Complex128.elements_equal(&c(f64::NAN, 1.0), &c(-f64::NAN, 1.0)));
        assert!(!DataType::Complex128.elements_equal(&c(f64::NAN, 1.0), &c(f64::NAN, 2.0)));
    }

    fn resolve(doc: serde_json::Value) -> Result<DataType> {
        let def = ExtensionDef::from_value(&doc, "data_type")?;
        DataType::from_def(&def, &default_registry())
    }

    #[test]
    fn time_types_parse_and_write_back_exactly() {
        use serde_json::json;
        for (doc, t) in [
            (
                json!({"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 1}}),
                DataType::DateTime64(TimeScale::of(TimeUnit::Second)),
            ),
            (
                json!({"name": "numpy.datetime64", "configuration": {"unit": "ms", "scale_factor": 10}}),
                DataType::DateTime64(TimeScale::try_new(TimeUnit::Millisecond, 10).unwrap()),
            ),
            (
                json!({"name": "numpy.timedelta64", "configuration": {"unit": "h", "scale_factor": 3}}),
                DataType::TimeDelta64(TimeScale::try_new(TimeUnit::Hour, 3).unwrap()),
            ),
            (
                json!({"name": "numpy.timedelta64", "configuration": {"unit": "μs", "scale_factor": 2147483647}}),
                DataType::TimeDelta64(
                    TimeScale::try_new(TimeUnit::MicrosecondMicroSign, 2147483647).unwrap(),
                ),
            ),
            (
                json!({"name": "numpy.datetime64", "configuration": {"unit": "generic", "scale_factor": 1}}),
                DataType::DateTime64(TimeScale::of(TimeUnit::Generic)),
            ),
        ] {
            assert_eq!(resolve(doc.clone()).unwrap(), t, "{doc}");
            assert_eq!(t.to_def().to_value(), doc);
            assert_eq!(t.size(), 8);
            assert_eq!(t.endian_component_size(), Some(8));
        }
        for unit in TIME_UNITS {
            assert_eq!(TimeUnit::from_str_exact(unit.as_str()), Some(unit));
        }
        assert_eq!(
            DataType::DateTime64(TimeScale::try_new(TimeUnit::Millisecond, 10).unwrap())
                .to_string(),
            "numpy.datetime64[10ms]"
        );
        assert_eq!(
            DataType::TimeDelta64(TimeScale::of(TimeUnit::Day)).kind(),
            DataKind::TimeDelta
        );
    }

    #[test]
    fn bad_time_configurations_are_metadata_errors() {
        use serde_json::json;
        let dt = |c: serde_json::Value| json!({"name": "numpy.datetime64", "configuration": c});
        for (doc, message) in [
            (
                dt(json!({"unit": "sec", "scale_factor": 1})),
                "invalid configuration for data type \"numpy.datetime64\": unknown unit \"sec\" (expected one of Y, M, W, D, h, m, s, ms, us, μs, ns, ps, fs, as, generic)",
            ),
            (
                dt(json!({"unit": "s", "scale_factor": 0})),
                "invalid configuration for data type \"numpy.datetime64\": scale_factor 0 is out of range (expected 1 to 2147483647)",
            ),
            (
                dt(json!({"unit": "s", "scale_factor": 2147483648u64})),
                "scale_factor 2147483648 is out of range (expected 1 to 2147483647)",
            ),
            (
                dt(json!({"unit": "generic", "scale_factor": 2})),
                "the unit \"generic\" takes scale_factor 1, got 2",
            ),
            (
                dt(json!({"unit": "s", "scale_factor": 1.5})),
                "invalid configuration for data type \"numpy.datetime64\": invalid type: floating point `1.5`, expected u64",
            ),
            (
                dt(json!({"unit": "s", "scale_factor": "1"})),
                "invalid type: string \"1\", expected u64",
            ),
            (
                dt(json!({"unit": "s", "scale_factor": -1})),
                "invalid value: integer `-1`, expected u64",
            ),
            (dt(json!({"unit": "s"})), "missing field `scale_factor`"),
            (
                dt(json!({"unit": "s", "scale_factor": 1, "tz": "UTC"})),
                "unknown field `tz`",
            ),
            (
                json!("numpy.timedelta64"),
                "invalid configuration for data type \"numpy.timedelta64\": missing field `unit`",
            ),
            (
                json!({"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 1}, "must_understand": true}),
                "must not carry \"must_understand\"",
            ),
        ] {
            let err = zarr_testkit::report(&resolve(doc.clone()).unwrap_err());
            assert!(err.contains(message), "{doc}: {err}");
        }
    }

    #[test]
    fn variable_size_types() {
        use serde_json::json;
        for (doc, t, back) in [
            (json!("string"), DataType::String, json!("string")),
            (
                json!("variable_length_bytes"),
                DataType::Bytes,
                json!("variable_length_bytes"),
            ),
            (
                json!("bytes"),
                DataType::Bytes,
                json!("variable_length_bytes"),
            ),
            (
                json!({"name": "string", "configuration": {}}),
                DataType::String,
                json!("string"),
            ),
        ] {
            assert_eq!(resolve(doc.clone()).unwrap(), t, "{doc}");
            assert_eq!(t.to_def().to_value(), back);
            assert_eq!(t.fixed_size(), None);
            assert!(t.is_variable_size());
            assert_eq!(t.endian_component_size(), None);
            // no fixed-size elements to compare, so never "all fill"
            assert!(!t.all_equal(&[], &[]));
            assert!(!t.all_equal(b"abab", b"ab"));
        }
        assert_eq!(DataType::String.kind(), DataKind::String);
        assert_eq!(DataType::Int32.fixed_size(), Some(4));
        assert!(!DataType::Float64.is_variable_size());
        let err = resolve(json!({"name": "string", "configuration": {"length": 3}})).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid configuration for data type \"string\": this data type takes no configuration"
        );
    }

    #[test]
    fn fixed_width_string_types() {
        use serde_json::json;
        let n = |b: usize| NonZeroUsize::new(b).unwrap();
        for (doc, t, endian) in [
            (
                json!({"name": "fixed_length_utf32", "configuration": {"length_bytes": 60}}),
                DataType::FixedLengthUtf32(n(60)),
                Some(4),
            ),
            (
                json!({"name": "null_terminated_bytes", "configuration": {"length_bytes": 3}}),
                DataType::NullTerminatedBytes(n(3)),
                None,
            ),
        ] {
            assert_eq!(resolve(doc.clone()).unwrap(), t, "{doc}");
            assert_eq!(t.to_def().to_value(), doc);
            assert_eq!(t.fixed_size(), Some(t.size()));
            assert_eq!(t.endian_component_size(), endian);
        }
        assert_eq!(
            DataType::FixedLengthUtf32(n(8)).to_string(),
            "fixed_length_utf32[8 bytes]"
        );
        let bad = |name: &str, c: serde_json::Value| {
            zarr_testkit::report(&resolve(json!({"name": name, "configuration": c})).unwrap_err())
        };
        for (name, c, message) in [
            (
                "fixed_length_utf32",
                json!({"length_bytes": 6}),
                "length_bytes 6 is not a positive multiple of 4",
            ),
            (
                "fixed_length_utf32",
                json!({"length_bytes": 0}),
                "length_bytes 0 is not a positive multiple of 4",
            ),
            (
                "null_terminated_bytes",
                json!({"length_bytes": 0}),
                "length_bytes 0 is not a positive multiple of 1",
            ),
            (
                "null_terminated_bytes",
                json!({"length_bytes": -1}),
                "expected u64",
            ),
            (
                "null_terminated_bytes",
                json!({"length_bytes": 2, "x": 1}),
                "unknown field `x`",
            ),
            (
                "fixed_length_utf32",
                json!({}),
                "missing field `length_bytes`",
            ),
        ] {
            let e = bad(name, c.clone());
            assert!(e.contains(message), "{name} {c}: {e}");
        }
    }

    #[test]
    fn registry_resolves_core_and_raw_bits() {
        let r = default_registry();
        let t = DataType::from_def(&ExtensionDef::short("r16"), &r).unwrap();
        assert_eq!(t.size(), 2);
        let err = DataType::from_def(&ExtensionDef::short("int33"), &r).unwrap_err();
        assert_eq!(err.to_string(), "unknown data type \"int33\"");
    }
}
