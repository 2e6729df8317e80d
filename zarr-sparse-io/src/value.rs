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
    /// The value of a field that is a plain decimal which the fast path reads exactly (the
    /// value [`IoValue::parse`] gives); `None` for any other field, which `parse` then reads.
    #[inline]
    fn parse_fast(field: &[u8]) -> Option<Self> {
        let _ = field;
        None
    }
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
            #[inline]
            fn parse_fast(field: &[u8]) -> Option<Self> {
                <$t>::fast(field)
            }
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

/// `[+-]digits[.digits][(e|E)[+-]digits]` (at least one digit before the exponent): the
/// sign, the digits as an integer (at most 19 significant ones) and the power of ten it is
/// scaled by; `None` for anything else.
#[inline]
fn decimal(f: &[u8]) -> Option<(bool, u64, i32)> {
    let (neg, s) = match f.first()? {
        b'-' => (true, &f[1..]),
        b'+' => (false, &f[1..]),
        _ => (false, f),
    };
    let (mut m, mut sig, mut exp, mut any, mut i) = (0u64, 0u32, 0i32, false, 0);
    let mut digit = |d: u8, m: &mut u64| -> Option<()> {
        if *m != 0 || d != 0 {
            sig += 1;
            if sig > 19 {
                return None;
            }
        }
        *m = *m * 10 + u64::from(d);
        Some(())
    };
    while i < s.len() && s[i].is_ascii_digit() {
        digit(s[i] - b'0', &mut m)?;
        any = true;
        i += 1;
    }
    if i < s.len() && s[i] == b'.' {
        i += 1;
        while i < s.len() && s[i].is_ascii_digit() {
            digit(s[i] - b'0', &mut m)?;
            exp -= 1;
            any = true;
            i += 1;
        }
    }
    if !any {
        return None;
    }
    if i < s.len() && (s[i] == b'e' || s[i] == b'E') {
        i += 1;
        let eneg = match s.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let start = i;
        let mut e = 0i32;
        while i < s.len() && s[i].is_ascii_digit() {
            if i - start == 4 {
                return None;
            }
            e = e * 10 + i32::from(s[i] - b'0');
            i += 1;
        }
        if i == start {
            return None;
        }
        exp += if eneg { -e } else { e };
    }
    (i == s.len()).then_some((neg, m, exp))
}

/// The fast path of decimal parsing (Clinger's): a mantissa that the float type holds
/// exactly, scaled by a power of ten that it holds exactly, in one multiplication or
/// division, which IEEE arithmetic rounds correctly: the value the full parser gives.
trait FastFloat: Sized {
    fn fast(field: &[u8]) -> Option<Self>;
}

impl FastFloat for f64 {
    #[inline]
    fn fast(field: &[u8]) -> Option<Self> {
        const POW10: [f64; 23] = [
            1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
            1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
        ];
        let (neg, m, e) = decimal(field)?;
        if m > 1 << 53 {
            return None;
        }
        let v = if m == 0 {
            0.0
        } else if (0..=22).contains(&e) {
            m as f64 * POW10[e as usize]
        } else if (-22..0).contains(&e) {
            m as f64 / POW10[(-e) as usize]
        } else {
            return None;
        };
        Some(if neg { -v } else { v })
    }
}

impl FastFloat for f32 {
    #[inline]
    fn fast(field: &[u8]) -> Option<Self> {
        const POW10: [f32; 11] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10];
        let (neg, m, e) = decimal(field)?;
        if m > 1 << 24 {
            return None;
        }
        let v = if m == 0 {
            0.0
        } else if (0..=10).contains(&e) {
            m as f32 * POW10[e as usize]
        } else if (-10..0).contains(&e) {
            m as f32 / POW10[(-e) as usize]
        } else {
            return None;
        };
        Some(if neg { -v } else { v })
    }
}

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

    #[test]
    fn the_fast_decimal_path_gives_the_full_parsers_values() {
        let _s = crate::tests::serial();
        let mut rng = zarr_testkit::Rng::new(42);
        let (mut fast64, mut fast32) = (0, 0);
        let n = 200_000;
        for _ in 0..n {
            let mut t = String::new();
            match rng.below(4) {
                0 => t.push('-'),
                1 => t.push('+'),
                _ => {}
            }
            let int = rng.below(8) as usize;
            let frac = rng.below(14) as usize;
            for _ in 0..int {
                t.push((b'0' + rng.below(10) as u8) as char);
            }
            if rng.below(5) != 0 {
                t.push('.');
            }
            for _ in 0..frac {
                t.push((b'0' + rng.below(10) as u8) as char);
            }
            if rng.below(3) == 0 {
                t.push(['e', 'E', 'd'][rng.below(3) as usize]);
                match rng.below(3) {
                    0 => t.push('-'),
                    1 => t.push('+'),
                    _ => {}
                }
                for _ in 0..rng.below(4) {
                    t.push((b'0' + rng.below(10) as u8) as char);
                }
            }
            let full64 = t.parse::<f64>().ok();
            if let Some(v) = f64::parse_fast(t.as_bytes()) {
                fast64 += 1;
                assert_eq!(Some(v.to_bits()), full64.map(f64::to_bits), "{t:?}");
            }
            let full32 = t.parse::<f32>().ok();
            if let Some(v) = f32::parse_fast(t.as_bytes()) {
                fast32 += 1;
                assert_eq!(Some(v.to_bits()), full32.map(f32::to_bits), "{t:?}");
            }
        }
        // the fast path reads most such fields; what it leaves, `parse` reads
        assert!(fast64 > n / 2 && fast32 > n / 5, "{fast64} {fast32}");
        for t in [
            "", "-", ".", "e5", "1e", "1e+", "nan", "inf", "1.5D+02", "1 ", "0x10", "1_0",
        ] {
            assert_eq!(f64::parse_fast(t.as_bytes()), None, "{t:?}");
        }
        assert_eq!(
            f64::parse_fast(b"-0.0").map(f64::to_bits),
            Some((-0.0f64).to_bits())
        );
        assert_eq!(i32::parse_fast(b"12"), None);
    }
}
