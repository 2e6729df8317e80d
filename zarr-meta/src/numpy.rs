//! NumPy data type strings (`"<f8"`, `"|u1"`, `"int32"`, `"?"`), as numcodecs' codec
//! configurations and Zarr v2 metadata write them.
//!
//! [`NumpyDtype::parse`] reads every spelling NumPy's `np.dtype(...)` accepts for the core
//! data types: the array-protocol form (an optional byte order `<`, `>`, `=`, `|` or `!`, a
//! kind letter and a size: `"<i4"`, `">c16"`, `"|b1"`, `"|V2"`), the one-letter codes (`"?"`,
//! `"b"`, `"B"`, `"h"`, `"H"`, `"i"`, `"I"`, `"l"`, `"L"`, `"q"`, `"Q"`, `"e"`, `"f"`, `"d"`,
//! `"F"`, `"D"`, with an optional byte order) and the names (`"int32"`, `"float64"`, `"bool"`,
//! `"half"`, `"double"`, ...), and the datetimes and timedeltas (`"<M8[ns]"`, `">m8[10ms]"`,
//! `"<M8"` for the generic unit, `"datetime64[s]"`, `"timedelta64"`), and the fixed-width
//! strings (`"<U4"`: `fixed_length_utf32` of 16 bytes; `"|S3"`: `null_terminated_bytes`).
//! [`NumpyDtype::to_numpy_str`] writes NumPy's `dtype.str` form.
//!
//! ```
//! use zarr_meta::numpy::{ByteOrder, NumpyDtype};
//! use zarr_meta::DataType;
//!
//! let t = NumpyDtype::parse(">i2").unwrap();
//! assert_eq!((t.data_type, t.byte_order), (DataType::Int16, Some(ByteOrder::Big)));
//! assert_eq!(t.to_numpy_str(), ">i2");
//! assert_eq!(NumpyDtype::parse("float64").unwrap().to_numpy_str(), "<f8");
//! assert_eq!(NumpyDtype::parse("|b1").unwrap().data_type, DataType::Bool);
//! assert_eq!(NumpyDtype::parse("datetime64[10ms]").unwrap().to_numpy_str(), "<M8[10ms]");
//! assert_eq!(NumpyDtype::parse(">U4").unwrap().to_numpy_str(), ">U4");
//! assert!(NumpyDtype::parse("|O").is_err()); // objects: no data type of their own
//! ```

use std::fmt;
use std::num::NonZeroUsize;

use crate::data_type::{DataType, TimeScale};

/// The byte order of a multi-byte NumPy data type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ByteOrder {
    /// Least significant byte first (`<`).
    Little,
    /// Most significant byte first (`>`, `!`).
    Big,
}

impl ByteOrder {
    /// The byte order of this machine (NumPy's `=`).
    pub const fn native() -> ByteOrder {
        if cfg!(target_endian = "big") {
            ByteOrder::Big
        } else {
            ByteOrder::Little
        }
    }
}

/// A NumPy data type of one of the Zarr data types of this crate, with its byte order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NumpyDtype {
    /// The data type.
    pub data_type: DataType,
    /// The byte order: `None` for types without one (one-byte types and raw bytes `V`).
    pub byte_order: Option<ByteOrder>,
}

/// A string that is not a NumPy data type of a core Zarr data type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not a NumPy data type of a core Zarr data type (such as \"<i4\", \"|u1\", \"float64\" or \"bool\"), a datetime or timedelta (\"<M8[ns]\", \"<m8[10s]\") or a fixed-width string (\"<U8\", \"|S4\")")]
pub struct NumpyDtypeError {
    /// The string given.
    pub text: String,
}

impl NumpyDtype {
    /// A data type in native byte order.
    pub fn native(data_type: DataType) -> Self {
        NumpyDtype {
            data_type,
            byte_order: data_type
                .endian_component_size()
                .map(|_| ByteOrder::native()),
        }
    }

    /// Parses a NumPy data type string.
    ///
    /// # Errors
    /// [`NumpyDtypeError`] for anything that is not a core data type, a datetime, a
    /// timedelta or a fixed-width string (objects, structured types, sizes NumPy does not
    /// have, a scale factor of 0, `U0`).
    pub fn parse(text: &str) -> Result<Self, NumpyDtypeError> {
        let err = || NumpyDtypeError { text: text.into() };
        if let Some(t) = from_name(text) {
            return Ok(NumpyDtype::native(t));
        }
        let (order, code) = match text.as_bytes().first() {
            Some(b'<') => (Some(ByteOrder::Little), &text[1..]),
            Some(b'>' | b'!') => (Some(ByteOrder::Big), &text[1..]),
            Some(b'=') => (Some(ByteOrder::native()), &text[1..]),
            Some(b'|') => (None, &text[1..]),
            _ => (Some(ByteOrder::native()), text),
        };
        let data_type = from_char(code)
            .or_else(|| from_kind_size(code))
            .or_else(|| from_time(code))
            .ok_or_else(err)?;
        Ok(NumpyDtype {
            data_type,
            byte_order: data_type.endian_component_size().and(order),
        })
    }

    /// NumPy's `dtype.str`: `"<f8"`, `"|u1"`, `"|b1"`, `">c16"`, `"|V3"`, `"<M8[10ms]"`.
    pub fn to_numpy_str(&self) -> String {
        let order = match self.byte_order {
            _ if self.data_type.endian_component_size().is_none() => '|',
            Some(ByteOrder::Big) => '>',
            Some(ByteOrder::Little) => '<',
            None => match ByteOrder::native() {
                ByteOrder::Big => '>',
                ByteOrder::Little => '<',
            },
        };
        let kind = match self.data_type {
            DataType::Bool => 'b',
            DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => 'i',
            DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::UInt64 => 'u',
            DataType::Float16 | DataType::Float32 | DataType::Float64 => 'f',
            DataType::Complex64 | DataType::Complex128 => 'c',
            DataType::RawBits(_) => 'V',
            DataType::DateTime64(scale) => return format!("{order}M8{}", scale.numpy_suffix()),
            DataType::TimeDelta64(scale) => return format!("{order}m8{}", scale.numpy_suffix()),
            // NumPy holds variable-size strings and bytes as Python objects
            DataType::String | DataType::Bytes => return "|O".into(),
            // NumPy counts code units, not bytes
            DataType::FixedLengthUtf32(n) => return format!("{order}U{}", n.get() / 4),
            DataType::NullTerminatedBytes(n) => return format!("|S{}", n.get()),
        };
        format!("{order}{kind}{}", self.data_type.size())
    }
}

impl fmt::Display for NumpyDtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_numpy_str())
    }
}

fn from_name(name: &str) -> Option<DataType> {
    Some(match name {
        "bool" | "bool_" => DataType::Bool,
        "int8" | "byte" => DataType::Int8,
        "int16" | "short" => DataType::Int16,
        "int32" | "intc" => DataType::Int32,
        "int64" | "int" | "long" | "longlong" | "intp" => DataType::Int64,
        "uint8" | "ubyte" => DataType::UInt8,
        "uint16" | "ushort" => DataType::UInt16,
        "uint32" | "uintc" => DataType::UInt32,
        "uint64" | "uint" | "ulong" | "ulonglong" | "uintp" => DataType::UInt64,
        "float16" | "half" => DataType::Float16,
        "float32" | "single" => DataType::Float32,
        "float64" | "float" | "double" => DataType::Float64,
        "complex64" | "csingle" => DataType::Complex64,
        "complex128" | "complex" | "cdouble" => DataType::Complex128,
        _ => return None,
    })
}

fn from_char(code: &str) -> Option<DataType> {
    Some(match code {
        "?" => DataType::Bool,
        "b" => DataType::Int8,
        "B" => DataType::UInt8,
        "h" => DataType::Int16,
        "H" => DataType::UInt16,
        "i" => DataType::Int32,
        "I" => DataType::UInt32,
        "l" | "q" | "p" => DataType::Int64,
        "L" | "Q" | "P" => DataType::UInt64,
        "e" => DataType::Float16,
        "f" => DataType::Float32,
        "d" => DataType::Float64,
        "F" => DataType::Complex64,
        "D" => DataType::Complex128,
        _ => return None,
    })
}

fn from_kind_size(code: &str) -> Option<DataType> {
    let mut chars = code.chars();
    let kind = chars.next()?;
    let size = chars.as_str();
    if size.is_empty() || !size.bytes().all(|b| b.is_ascii_digit()) || size.starts_with('0') {
        return None;
    }
    let size: usize = size.parse().ok()?;
    Some(match (kind, size) {
        ('b', 1) => DataType::Bool,
        ('i', 1) => DataType::Int8,
        ('i', 2) => DataType::Int16,
        ('i', 4) => DataType::Int32,
        ('i', 8) => DataType::Int64,
        ('u', 1) => DataType::UInt8,
        ('u', 2) => DataType::UInt16,
        ('u', 4) => DataType::UInt32,
        ('u', 8) => DataType::UInt64,
        ('f', 2) => DataType::Float16,
        ('f', 4) => DataType::Float32,
        ('f', 8) => DataType::Float64,
        ('c', 8) => DataType::Complex64,
        ('c', 16) => DataType::Complex128,
        ('V', n) => DataType::RawBits(NonZeroUsize::new(n)?),
        ('U', n) => DataType::FixedLengthUtf32(NonZeroUsize::new(n.checked_mul(4)?)?),
        ('S', n) => DataType::NullTerminatedBytes(NonZeroUsize::new(n)?),
        _ => return None,
    })
}

/// `M8[10ms]`, `m8`, `M`, `datetime64[s]`, `timedelta64` (the part after the byte order).
fn from_time(code: &str) -> Option<DataType> {
    let (datetime, suffix) = [
        ("M8", true),
        ("datetime64", true),
        ("m8", false),
        ("timedelta64", false),
    ]
    .into_iter()
    .find_map(|(prefix, dt)| code.strip_prefix(prefix).map(|rest| (dt, rest)))
    .or(match code {
        "M" => Some((true, "")),
        "m" => Some((false, "")),
        _ => None,
    })?;
    let scale = TimeScale::from_numpy_suffix(suffix)?;
    Some(if datetime {
        DataType::DateTime64(scale)
    } else {
        DataType::TimeDelta64(scale)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data_type::CORE_DATA_TYPES;

    #[test]
    fn every_spelling_of_the_core_types() {
        for t in CORE_DATA_TYPES {
            // the Zarr v3 names are NumPy's names
            assert_eq!(NumpyDtype::parse(&t.name()).unwrap().data_type, t);
            let s = NumpyDtype::native(t).to_numpy_str();
            assert_eq!(NumpyDtype::parse(&s).unwrap(), NumpyDtype::native(t), "{s}");
            let big = NumpyDtype {
                data_type: t,
                byte_order: t.endian_component_size().map(|_| ByteOrder::Big),
            };
            assert_eq!(NumpyDtype::parse(&big.to_numpy_str()).unwrap(), big);
        }
        for (text, t, order) in [
            ("<f8", DataType::Float64, Some(ByteOrder::Little)),
            (">i2", DataType::Int16, Some(ByteOrder::Big)),
            ("!u4", DataType::UInt32, Some(ByteOrder::Big)),
            ("|u1", DataType::UInt8, None),
            ("<u1", DataType::UInt8, None),
            ("|b1", DataType::Bool, None),
            ("?", DataType::Bool, None),
            ("<c16", DataType::Complex128, Some(ByteOrder::Little)),
            (">c8", DataType::Complex64, Some(ByteOrder::Big)),
            ("e", DataType::Float16, Some(ByteOrder::native())),
            ("=d", DataType::Float64, Some(ByteOrder::native())),
            ("double", DataType::Float64, Some(ByteOrder::native())),
            ("int", DataType::Int64, Some(ByteOrder::native())),
        ] {
            assert_eq!(
                NumpyDtype::parse(text).unwrap(),
                NumpyDtype {
                    data_type: t,
                    byte_order: order
                },
                "{text}"
            );
        }
        assert_eq!(
            NumpyDtype::parse("|V3").unwrap().data_type.name(),
            "r24".to_string()
        );
        assert_eq!(NumpyDtype::parse("|V3").unwrap().to_numpy_str(), "|V3");
    }

    #[test]
    fn datetimes_and_timedeltas() {
        use crate::data_type::TimeUnit;
        let scaled = |u, n| TimeScale::try_new(u, n).unwrap();
        for (text, t, order, canonical) in [
            (
                "<M8[ns]",
                DataType::DateTime64(scaled(TimeUnit::Nanosecond, 1)),
                Some(ByteOrder::Little),
                "<M8[ns]",
            ),
            (
                ">m8[10ms]",
                DataType::TimeDelta64(scaled(TimeUnit::Millisecond, 10)),
                Some(ByteOrder::Big),
                ">m8[10ms]",
            ),
            (
                "<M8",
                DataType::DateTime64(scaled(TimeUnit::Generic, 1)),
                Some(ByteOrder::Little),
                "<M8",
            ),
            (
                "datetime64[D]",
                DataType::DateTime64(scaled(TimeUnit::Day, 1)),
                Some(ByteOrder::native()),
                "<M8[D]",
            ),
            (
                "timedelta64[2147483647s]",
                DataType::TimeDelta64(scaled(TimeUnit::Second, 2147483647)),
                Some(ByteOrder::native()),
                "<m8[2147483647s]",
            ),
            (
                "m",
                DataType::TimeDelta64(scaled(TimeUnit::Generic, 1)),
                Some(ByteOrder::native()),
                "<m8",
            ),
            (
                "<M8[μs]",
                DataType::DateTime64(scaled(TimeUnit::MicrosecondMicroSign, 1)),
                Some(ByteOrder::Little),
                "<M8[us]",
            ),
            (
                "|M8[Y]",
                DataType::DateTime64(scaled(TimeUnit::Year, 1)),
                None,
                "<M8[Y]",
            ),
        ] {
            let got = NumpyDtype::parse(text).unwrap();
            assert_eq!((got.data_type, got.byte_order), (t, order), "{text}");
            if cfg!(target_endian = "little") {
                assert_eq!(got.to_numpy_str(), canonical, "{text}");
            }
        }
    }

    #[test]
    fn fixed_width_strings() {
        let n = |b: usize| NonZeroUsize::new(b).unwrap();
        for (text, t, order, canonical) in [
            (
                "<U4",
                DataType::FixedLengthUtf32(n(16)),
                Some(ByteOrder::Little),
                "<U4",
            ),
            (
                ">U1",
                DataType::FixedLengthUtf32(n(4)),
                Some(ByteOrder::Big),
                ">U1",
            ),
            ("|S3", DataType::NullTerminatedBytes(n(3)), None, "|S3"),
            ("<S3", DataType::NullTerminatedBytes(n(3)), None, "|S3"),
        ] {
            let got = NumpyDtype::parse(text).unwrap();
            assert_eq!((got.data_type, got.byte_order), (t, order), "{text}");
            assert_eq!(got.to_numpy_str(), canonical, "{text}");
        }
    }

    #[test]
    fn others_are_refused() {
        for bad in [
            "",
            "<",
            "<U0",
            "|S0",
            "U04",
            "<U4611686018427387904",
            "|O",
            "<M8[xs]",
            "M8[0s]",
            "M8[01s]",
            "m8[]",
            "M8[2generic]",
            "M8[2147483648s]",
            "M[ns]",
            "<M4",
            "i3",
            "f16",
            "<i04",
            "c4",
            "V0",
            "Int32",
            "object",
            "O",
            "<f8 ",
            "u",
        ] {
            let err = NumpyDtype::parse(bad).unwrap_err();
            assert!(
                zarr_testkit::report(&err).contains("is not a NumPy data type"),
                "{bad}"
            );
        }
    }
}
