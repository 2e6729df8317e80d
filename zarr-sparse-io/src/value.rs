//! The element types a sparse matrix moves with: the real numeric types, each with its
//! Matrix Market text form and its NumPy type string.

use std::io::Write;

use zarr_array::{DataType, Element, SparseElement};

/// A value type of imports and exports: every integer type, `float32` and `float64`.
pub trait IoValue: SparseElement + Element + PartialEq + std::fmt::Debug {
    /// NumPy's little-endian type string (`<f4`).
    const NPY: &'static str;
    /// Whether Matrix Market calls it `integer` (else `real`).
    const INTEGER: bool;
    /// Parses a Matrix Market value field; `None` when it is not one, or does not fit.
    fn parse(field: &str) -> Option<Self>;
    /// Writes the value as Matrix Market text (round-trips exactly).
    fn format(self, out: &mut Vec<u8>);
    /// The value of a `pattern` entry.
    fn one() -> Self;
}

macro_rules! int_value {
    ($($t:ty => $npy:literal);* $(;)?) => {$(
        impl IoValue for $t {
            const NPY: &'static str = $npy;
            const INTEGER: bool = true;
            fn parse(field: &str) -> Option<Self> {
                field.parse().ok()
            }
            fn format(self, out: &mut Vec<u8>) {
                // writing into a Vec cannot fail
                let _ = write!(out, "{self}");
            }
            fn one() -> Self {
                1
            }
        }
    )*};
}

int_value!(
    i8 => "|i1"; i16 => "<i2"; i32 => "<i4"; i64 => "<i8";
    u8 => "|u1"; u16 => "<u2"; u32 => "<u4"; u64 => "<u8";
);

macro_rules! float_value {
    ($($t:ty => $npy:literal);* $(;)?) => {$(
        impl IoValue for $t {
            const NPY: &'static str = $npy;
            const INTEGER: bool = false;
            fn parse(field: &str) -> Option<Self> {
                // Matrix Market writers also use Fortran's exponent letter and spelled-out
                // infinities; Rust's parser takes `inf`, `infinity`, `nan` in any case
                match field.parse() {
                    Ok(v) => Some(v),
                    Err(_) if field.contains(['d', 'D']) => field.replace(['d', 'D'], "e").parse().ok(),
                    Err(_) => None,
                }
            }
            fn format(self, out: &mut Vec<u8>) {
                // Rust's shortest round-trip form; NumPy's spellings of the specials
                if self.is_nan() {
                    out.extend_from_slice(b"nan");
                } else if self.is_infinite() {
                    out.extend_from_slice(if self > 0.0 { b"inf" } else { b"-inf" });
                } else {
                    let _ = write!(out, "{self:e}");
                }
            }
            fn one() -> Self {
                1.0
            }
        }
    )*};
}

float_value!(f32 => "<f4"; f64 => "<f8");

/// Runs `$body` with `$t` bound to the Rust type of the data type `$dt` (an `IoValue`), or
/// evaluates `$other` for a data type without one.
macro_rules! with_value_type {
    ($dt:expr, $t:ident => $body:expr, $other:expr) => {{
        use zarr_array::DataType as D;
        match $dt {
            D::Int8 => {
                type $t = i8;
                $body
            }
            D::Int16 => {
                type $t = i16;
                $body
            }
            D::Int32 => {
                type $t = i32;
                $body
            }
            D::Int64 => {
                type $t = i64;
                $body
            }
            D::UInt8 => {
                type $t = u8;
                $body
            }
            D::UInt16 => {
                type $t = u16;
                $body
            }
            D::UInt32 => {
                type $t = u32;
                $body
            }
            D::UInt64 => {
                type $t = u64;
                $body
            }
            D::Float32 => {
                type $t = f32;
                $body
            }
            D::Float64 => {
                type $t = f64;
                $body
            }
            _ => $other,
        }
    }};
}
pub(crate) use with_value_type;

/// The data type of NumPy's type string `s` (either byte order mark for one-byte types),
/// among the [`IoValue`] types.
pub fn data_type_of_npy(s: &str) -> Option<DataType> {
    let d = match s {
        "|i1" | "<i1" | "i1" => DataType::Int8,
        "<i2" => DataType::Int16,
        "<i4" => DataType::Int32,
        "<i8" => DataType::Int64,
        "|u1" | "<u1" | "u1" => DataType::UInt8,
        "<u2" => DataType::UInt16,
        "<u4" => DataType::UInt32,
        "<u8" => DataType::UInt64,
        "<f4" => DataType::Float32,
        "<f8" => DataType::Float64,
        _ => return None,
    };
    Some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_round_trip_through_their_text() {
        let _s = crate::tests::serial();
        for v in [0.1f64, -3.5e-300, 1e300, 123456789.125, f64::MIN_POSITIVE] {
            let mut out = Vec::new();
            v.format(&mut out);
            assert_eq!(f64::parse(std::str::from_utf8(&out).unwrap()), Some(v));
        }
        for v in [0.1f32, -7.25e-30, 3.4e38] {
            let mut out = Vec::new();
            v.format(&mut out);
            assert_eq!(f32::parse(std::str::from_utf8(&out).unwrap()), Some(v));
        }
        assert_eq!(f64::parse("1.5D+02"), Some(150.0));
        assert_eq!(i8::parse("300"), None);
        assert_eq!(u32::parse("-1"), None);
    }
}
