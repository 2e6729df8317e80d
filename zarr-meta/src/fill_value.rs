//! Fill values: every JSON form Zarr v3 allows, held as the element's bytes.

use serde_json::{Number, Value};

use crate::data_type::fixed_width::{trim_nul, utf32_decode, utf32_encode};
use crate::data_type::{DataKind, DataType, NAT};
use crate::error::{MetaError, Result};
use crate::v2::{base64_decode, base64_encode};

/// A fill value: one element of the array's data type, in native byte order.
///
/// It reads every JSON form the spec allows: integers exact over the whole range of
/// `int64`/`uint64`; floats as numbers, `"NaN"`, `"Infinity"`, `"-Infinity"` or a hex bit
/// pattern (`"0x7fc00000"`); complex numbers as `[re, im]`; `bool` as `true`/`false`;
/// `r<N>` as an array of N/8 byte values; datetimes and timedeltas as an `int64` or `"NaT"`;
/// `string` as a JSON string (held as its UTF-8 bytes); `variable_length_bytes` as a base64
/// string (held as the decoded bytes); `fixed_length_utf32` as a JSON string of at most its
/// length (held as the NUL-padded UTF-32 element) and `null_terminated_bytes` as a base64
/// string of at most its length (held NUL-padded).
///
/// ```
/// use zarr_meta::{DataType, FillValue};
/// use serde_json::json;
///
/// let f = FillValue::from_json(&json!("0x7fc00001"), DataType::Float32).unwrap();
/// assert!(f32::from_ne_bytes(f.as_bytes().try_into().unwrap()).is_nan());
/// // a non-canonical NaN keeps its bits when written back
/// assert_eq!(f.to_json(DataType::Float32), json!("0x7fc00001"));
/// let f = FillValue::from_json(&json!(18446744073709551615u64), DataType::UInt64).unwrap();
/// assert_eq!(f.as_bytes(), u64::MAX.to_ne_bytes());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FillValue {
    bytes: Vec<u8>,
}

impl FillValue {
    /// A fill value from an element's native-order bytes.
    ///
    /// # Errors
    /// If the length is not the data type's size (any length for the variable-size types;
    /// UTF-8 for `string`, UTF-32 for `fixed_length_utf32`).
    pub fn from_ne_bytes(data_type: DataType, bytes: impl Into<Vec<u8>>) -> Result<Self> {
        let bytes = bytes.into();
        match data_type.kind() {
            DataKind::Bytes => return Ok(FillValue { bytes }),
            DataKind::String => {
                return match String::from_utf8(bytes) {
                    Ok(s) => Ok(FillValue {
                        bytes: s.into_bytes(),
                    }),
                    Err(e) => Err(MetaError::InvalidFillValue {
                        data_type: data_type.name(),
                        value: format!("{:?}", e.as_bytes()),
                        reason: "a string fill value must be UTF-8".into(),
                    }),
                }
            }
            DataKind::FixedLengthUtf32 => {
                if let Err(e) = utf32_decode(&bytes) {
                    return Err(MetaError::InvalidFillValue {
                        data_type: data_type.name(),
                        value: format!("{bytes:?}"),
                        reason: e.to_string(),
                    });
                }
            }
            _ => {}
        }
        if bytes.len() != data_type.size() {
            return Err(MetaError::InvalidFillValue {
                data_type: data_type.name(),
                value: format!("{bytes:?}"),
                reason: format!("expected {} bytes", data_type.size()),
            });
        }
        Ok(FillValue { bytes })
    }

    /// The all-zero fill value (`false`, `0`, `0.0`, zero bytes; the empty string or byte
    /// string for the variable-size types).
    pub fn zero(data_type: DataType) -> Self {
        FillValue {
            bytes: vec![0; data_type.size()],
        }
    }

    /// The fill value a new array gets when none is given, as zarr-python gives it: `NaT` for
    /// datetimes and timedeltas, [`FillValue::zero`] for every other type.
    pub fn default_for(data_type: DataType) -> Self {
        match data_type.kind() {
            DataKind::DateTime | DataKind::TimeDelta => FillValue {
                bytes: NAT.to_ne_bytes().to_vec(),
            },
            _ => FillValue::zero(data_type),
        }
    }

    /// The element's bytes, native byte order.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Parses a JSON fill value for `data_type`.
    ///
    /// # Errors
    /// [`MetaError::InvalidFillValue`] naming the value, the type and what is wrong.
    pub fn from_json(value: &Value, data_type: DataType) -> Result<Self> {
        let err = |reason: &str| MetaError::InvalidFillValue {
            data_type: data_type.name(),
            value: value.to_string(),
            reason: reason.to_string(),
        };
        let bytes = match data_type.kind() {
            DataKind::Bool => match value {
                Value::Bool(b) => vec![u8::from(*b)],
                _ => return Err(err("expected true or false")),
            },
            DataKind::Int => {
                let v = value.as_i64().ok_or_else(|| err("expected an integer"))?;
                let size = data_type.size();
                let min = i64::MIN >> (64 - 8 * size);
                let max = i64::MAX >> (64 - 8 * size);
                if v < min || v > max {
                    return Err(err("out of range"));
                }
                v.to_ne_bytes_sized(size)
            }
            DataKind::UInt => {
                let v = value
                    .as_u64()
                    .ok_or_else(|| err("expected a non-negative integer"))?;
                let size = data_type.size();
                if size < 8 && v >> (8 * size) != 0 {
                    return Err(err("out of range"));
                }
                v.to_ne_bytes_sized(size)
            }
            DataKind::Float => float_from_json(value, data_type.size()).map_err(err)?,
            DataKind::Complex => {
                let w = data_type.size() / 2;
                match value {
                    Value::Array(parts) if parts.len() == 2 => {
                        let mut b = float_from_json(&parts[0], w).map_err(err)?;
                        b.extend(float_from_json(&parts[1], w).map_err(err)?);
                        b
                    }
                    _ => return Err(err("expected [real, imaginary]")),
                }
            }
            DataKind::Raw => match value {
                Value::Array(items) if items.len() == data_type.size() => items
                    .iter()
                    .map(|i| {
                        i.as_u64()
                            .and_then(|v| u8::try_from(v).ok())
                            .ok_or_else(|| err("expected byte values 0..=255"))
                    })
                    .collect::<Result<Vec<u8>>>()?,
                _ => return Err(err("expected an array with one value per byte")),
            },
            DataKind::String => match value {
                Value::String(s) => s.as_bytes().to_vec(),
                _ => return Err(err("expected a string")),
            },
            DataKind::Bytes => match value {
                Value::String(s) => base64_decode(s).ok_or_else(|| err("not a base64 string"))?,
                _ => return Err(err("expected a base64 string")),
            },
            DataKind::FixedLengthUtf32 => match value {
                Value::String(s) => utf32_encode(s, data_type.size()).ok_or_else(|| {
                    err(&format!(
                        "longer than the {} code units of the type",
                        data_type.size() / 4
                    ))
                })?,
                _ => return Err(err("expected a string")),
            },
            DataKind::NullTerminatedBytes => match value {
                Value::String(s) => {
                    let mut b = base64_decode(s).ok_or_else(|| err("not a base64 string"))?;
                    if b.len() > data_type.size() {
                        return Err(err(&format!(
                            "longer than the {} bytes of the type",
                            data_type.size()
                        )));
                    }
                    b.resize(data_type.size(), 0);
                    b
                }
                _ => return Err(err("expected a base64 string")),
            },
            DataKind::DateTime | DataKind::TimeDelta => match value {
                Value::String(s) if s == "NaT" => NAT.to_ne_bytes().to_vec(),
                _ => value
                    .as_i64()
                    .ok_or_else(|| err("expected a 64-bit integer or \"NaT\""))?
                    .to_ne_bytes()
                    .to_vec(),
            },
        };
        Ok(FillValue { bytes })
    }

    /// The JSON form zarr-python writes for this fill value (`NaT` as the integer
    /// `-9223372036854775808`, as zarr-python 3.1.6 writes it).
    pub fn to_json(&self, data_type: DataType) -> Value {
        let b = &self.bytes;
        match data_type.kind() {
            DataKind::Bool => Value::Bool(b.first().is_some_and(|&x| x != 0)),
            DataKind::Int | DataKind::DateTime | DataKind::TimeDelta => {
                let mut w = [0u8; 8];
                let n = b.len().min(8);
                w[..n].copy_from_slice(&b[..n]);
                // sign-extend from the element's width
                let shift = 64 - 8 * n as u32;
                Value::from((i64::from_le_bytes(native_to_le(w, n)) << shift) >> shift)
            }
            DataKind::UInt => {
                let mut w = [0u8; 8];
                let n = b.len().min(8);
                w[..n].copy_from_slice(&b[..n]);
                Value::from(u64::from_le_bytes(native_to_le(w, n)))
            }
            DataKind::Float => float_to_json(b),
            DataKind::Complex => {
                let h = b.len() / 2;
                Value::Array(vec![float_to_json(&b[..h]), float_to_json(&b[h..])])
            }
            DataKind::Raw => Value::Array(b.iter().map(|&x| Value::from(x)).collect()),
            // held as UTF-8 (checked when made)
            DataKind::String => Value::String(String::from_utf8_lossy(b).into_owned()),
            DataKind::Bytes => Value::String(base64_encode(b)),
            // NumPy's reading of the element (trailing NULs dropped), as zarr-python writes it;
            // held as UTF-32 (checked when made)
            DataKind::FixedLengthUtf32 => Value::String(utf32_decode(b).unwrap_or_default()),
            DataKind::NullTerminatedBytes => Value::String(base64_encode(trim_nul(b))),
        }
    }
}

/// Converts the first `n` native-order bytes of `w` to little-endian order.
fn native_to_le(mut w: [u8; 8], n: usize) -> [u8; 8] {
    if cfg!(target_endian = "big") {
        w[..n].reverse();
    }
    w
}

trait SizedBytes {
    fn to_ne_bytes_sized(self, size: usize) -> Vec<u8>;
}

impl SizedBytes for i64 {
    fn to_ne_bytes_sized(self, size: usize) -> Vec<u8> {
        let le = self.to_le_bytes();
        let mut v = le[..size].to_vec();
        if cfg!(target_endian = "big") {
            v.reverse();
        }
        v
    }
}

impl SizedBytes for u64 {
    fn to_ne_bytes_sized(self, size: usize) -> Vec<u8> {
        (self as i64).to_ne_bytes_sized(size)
    }
}

fn float_from_json(value: &Value, width: usize) -> std::result::Result<Vec<u8>, &'static str> {
    let x: f64 = match value {
        Value::Number(n) => n.as_f64().ok_or("not a finite number")?,
        Value::String(s) => match s.as_str() {
            "NaN" => f64::NAN,
            "Infinity" => f64::INFINITY,
            "-Infinity" => f64::NEG_INFINITY,
            hex => {
                let digits = hex.strip_prefix("0x").ok_or(
                    "expected a number, \"NaN\", \"Infinity\", \"-Infinity\" or \"0x...\"",
                )?;
                if digits.len() != 2 * width || !digits.bytes().all(|c| c.is_ascii_hexdigit()) {
                    return Err("a hex bit pattern needs exactly two hex digits per byte");
                }
                let bits = u64::from_str_radix(digits, 16).map_err(|_| "bad hex bit pattern")?;
                return Ok(match width {
                    2 => (bits as u16).to_ne_bytes().to_vec(),
                    4 => (bits as u32).to_ne_bytes().to_vec(),
                    _ => bits.to_ne_bytes().to_vec(),
                });
            }
        },
        _ => return Err("expected a number or a string"),
    };
    Ok(match width {
        2 => half::f16::from_f64(x).to_ne_bytes().to_vec(),
        4 => (x as f32).to_ne_bytes().to_vec(),
        _ => x.to_ne_bytes().to_vec(),
    })
}

fn float_to_json(b: &[u8]) -> Value {
    let (x, bits, canonical_nan, hex_width): (f64, u64, u64, usize) = match b.len() {
        2 => {
            let bits = u16::from_ne_bytes([b[0], b[1]]);
            (
                half::f16::from_bits(bits).to_f64(),
                u64::from(bits),
                0x7e00,
                4,
            )
        }
        4 => {
            let bits = u32::from_ne_bytes([b[0], b[1], b[2], b[3]]);
            (
                f64::from(f32::from_bits(bits)),
                u64::from(bits),
                0x7fc0_0000,
                8,
            )
        }
        8 => {
            let mut w = [0u8; 8];
            w.copy_from_slice(b);
            let bits = u64::from_ne_bytes(w);
            (f64::from_bits(bits), bits, 0x7ff8_0000_0000_0000, 16)
        }
        _ => return Value::Null,
    };
    if x.is_nan() {
        if bits == canonical_nan {
            Value::String("NaN".into())
        } else {
            Value::String(format!("0x{bits:0hex_width$x}"))
        }
    } else if x.is_infinite() {
        Value::String(if x > 0.0 { "Infinity" } else { "-Infinity" }.into())
    } else {
        Number::from_f64(x).map_or(Value::Null, Value::Number)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rt(v: Value, t: DataType) -> Value {
        FillValue::from_json(&v, t).unwrap().to_json(t)
    }

    #[test]
    fn integer_extremes_are_exact() {
        assert_eq!(rt(json!(i64::MIN), DataType::Int64), json!(i64::MIN));
        assert_eq!(rt(json!(u64::MAX), DataType::UInt64), json!(u64::MAX));
        assert_eq!(rt(json!(-128), DataType::Int8), json!(-128));
        assert_eq!(rt(json!(65535), DataType::UInt16), json!(65535));
        for (v, t) in [
            (json!(128), DataType::Int8),
            (json!(-129), DataType::Int8),
            (json!(-1), DataType::UInt8),
            (json!(256), DataType::UInt8),
            (json!(1.5), DataType::Int32),
            (json!("1"), DataType::Int32),
            (json!(true), DataType::Int32),
            (json!(1), DataType::Bool),
        ] {
            assert!(FillValue::from_json(&v, t).is_err(), "{v} {t}");
        }
    }

    #[test]
    fn float_forms() {
        assert_eq!(rt(json!("NaN"), DataType::Float64), json!("NaN"));
        assert_eq!(rt(json!("Infinity"), DataType::Float16), json!("Infinity"));
        assert_eq!(
            rt(json!("-Infinity"), DataType::Float32),
            json!("-Infinity")
        );
        assert_eq!(rt(json!("0x7fc00000"), DataType::Float32), json!("NaN"));
        assert_eq!(
            rt(json!("0x3ff0000000000000"), DataType::Float64),
            json!(1.0)
        );
        assert_eq!(rt(json!(0.5), DataType::Float16), json!(0.5));
        assert_eq!(rt(json!(-0.0), DataType::Float64), json!(-0.0));
        let f = FillValue::from_json(&json!(-0.0), DataType::Float64).unwrap();
        assert_eq!(f.as_bytes(), (-0.0f64).to_ne_bytes());
        for bad in [
            json!("nan"),
            json!("0x7fc0"),
            json!("0xzzzzzzzz"),
            json!(null),
            json!([1]),
        ] {
            assert!(
                FillValue::from_json(&bad, DataType::Float32).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn time_fill_values() {
        use crate::data_type::{TimeScale, TimeUnit};
        let t = DataType::DateTime64(TimeScale::of(TimeUnit::Second));
        let d = DataType::TimeDelta64(TimeScale::try_new(TimeUnit::Millisecond, 10).unwrap());
        for ty in [t, d] {
            assert_eq!(rt(json!("NaT"), ty), json!(i64::MIN));
            assert_eq!(rt(json!(i64::MIN), ty), json!(i64::MIN));
            assert_eq!(rt(json!(i64::MAX), ty), json!(i64::MAX));
            assert_eq!(rt(json!(-5), ty), json!(-5));
            let f = FillValue::from_json(&json!(1_600_000_000), ty).unwrap();
            assert_eq!(f.as_bytes(), 1_600_000_000i64.to_ne_bytes());
            for bad in [
                json!("nat"),
                json!("2020-01-01"),
                json!(1.5),
                json!(u64::MAX),
                json!(null),
                json!(true),
            ] {
                let err = FillValue::from_json(&bad, ty).unwrap_err().to_string();
                assert!(
                    err.contains("expected a 64-bit integer or \"NaT\""),
                    "{bad}: {err}"
                );
            }
        }
    }

    #[test]
    fn strings_and_bytes() {
        for v in ["", "ab", "héllo \u{1F600}", "NaN"] {
            assert_eq!(rt(json!(v), DataType::String), json!(v));
            let f = FillValue::from_json(&json!(v), DataType::String).unwrap();
            assert_eq!(f.as_bytes(), v.as_bytes());
        }
        assert_eq!(rt(json!("AHo="), DataType::Bytes), json!("AHo="));
        let f = FillValue::from_json(&json!("AHo="), DataType::Bytes).unwrap();
        assert_eq!(f.as_bytes(), [0, b'z']);
        assert_eq!(rt(json!(""), DataType::Bytes), json!(""));
        for (bad, t) in [
            (json!(0), DataType::String),
            (json!(null), DataType::String),
            (json!(["a"]), DataType::String),
            (json!("not base64!"), DataType::Bytes),
            (json!([0, 1]), DataType::Bytes),
        ] {
            assert!(FillValue::from_json(&bad, t).is_err(), "{bad} {t}");
        }
        assert!(FillValue::from_ne_bytes(DataType::String, vec![0xff]).is_err());
        assert_eq!(
            FillValue::from_ne_bytes(DataType::Bytes, vec![0xff, 0, 1])
                .unwrap()
                .as_bytes(),
            [0xff, 0, 1]
        );
        assert!(FillValue::zero(DataType::String).as_bytes().is_empty());
    }

    #[test]
    fn fixed_width_strings() {
        use std::num::NonZeroUsize;
        let u4 = DataType::FixedLengthUtf32(NonZeroUsize::new(16).unwrap());
        let s3 = DataType::NullTerminatedBytes(NonZeroUsize::new(3).unwrap());
        // as zarr-python 3.1.6 writes them
        for v in ["", "ab", "héll", "a\u{0}b"] {
            assert_eq!(rt(json!(v), u4), json!(v));
        }
        let f = FillValue::from_json(&json!("ab"), u4).unwrap();
        assert_eq!(f.as_bytes().len(), 16);
        assert_eq!(&f.as_bytes()[..4], &u32::from('a').to_ne_bytes());
        assert_eq!(rt(json!("cQ=="), s3), json!("cQ=="));
        assert_eq!(
            FillValue::from_json(&json!("cQ=="), s3).unwrap().as_bytes(),
            b"q\0\0"
        );
        assert_eq!(rt(json!(""), s3), json!(""));
        for (bad, t, reason) in [
            (json!("hello"), u4, "longer than the 4 code units"),
            (json!(1), u4, "expected a string"),
            (json!("YWJjZA=="), s3, "longer than the 3 bytes"),
            (json!("not base64!"), s3, "not a base64 string"),
            (json!(null), s3, "expected a base64 string"),
        ] {
            let e = FillValue::from_json(&bad, t).unwrap_err().to_string();
            assert!(e.contains(reason), "{bad}: {e}");
        }
        let surrogate = [0xd800u32.to_ne_bytes(), [0; 4], [0; 4], [0; 4]].concat();
        assert!(FillValue::from_ne_bytes(u4, surrogate).is_err());
        assert!(FillValue::from_ne_bytes(s3, vec![1, 2]).is_err());
        assert_eq!(FillValue::default_for(u4).to_json(u4), json!(""));
    }

    #[test]
    fn complex_and_raw() {
        assert_eq!(
            rt(json!([1.0, "NaN"]), DataType::Complex64),
            json!([1.0, "NaN"])
        );
        assert!(FillValue::from_json(&json!(1.0), DataType::Complex128).is_err());
        let r16 = DataType::from_name("r16").unwrap();
        assert_eq!(rt(json!([1, 255]), r16), json!([1, 255]));
        assert!(FillValue::from_json(&json!([1]), r16).is_err());
        assert!(FillValue::from_json(&json!([1, 256]), r16).is_err());
    }
}
