//! Element types: the typed [`SparseValue`] trait and the untyped [`ElementKind`].
//!
//! "Equal to the fill value" compares bit patterns, with every NaN equal to every NaN: `-0.0`
//! is *not* the fill value `0.0` (it is stored, and read back as `-0.0`), while any NaN is the
//! fill value NaN. A complex number equals the fill when each part is bit-equal to the fill's
//! part or both parts are NaN.

use half::f16;
use num_complex::{Complex32, Complex64};

use crate::error::SparseError;

/// How to recognise NaN in an element's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FloatKind {
    /// Not a floating-point type: equality is bit equality.
    None,
    /// IEEE half precision (2 bytes).
    F16,
    /// IEEE single precision (4 bytes).
    F32,
    /// IEEE double precision (8 bytes).
    F64,
    /// Complex of two `f32` (8 bytes).
    Complex64,
    /// Complex of two `f64` (16 bytes).
    Complex128,
}

impl FloatKind {
    /// The element size this kind implies (`None` for [`FloatKind::None`], any size).
    pub const fn size(self) -> Option<usize> {
        match self {
            FloatKind::None => None,
            FloatKind::F16 => Some(2),
            FloatKind::F32 => Some(4),
            FloatKind::F64 | FloatKind::Complex64 => Some(8),
            FloatKind::Complex128 => Some(16),
        }
    }
}

/// An element type described by its size in bytes and how NaN is recognised: what the untyped
/// (byte-level) API needs. Values are little-endian, as the `bytes` codec writes them.
///
/// `bool` is one byte (0 or 1) without NaN: [`ElementKind::BOOL`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ElementKind {
    size: usize,
    float: FloatKind,
}

impl ElementKind {
    /// `bool`, stored as one byte.
    pub const BOOL: Self = Self::raw(1, FloatKind::None);
    /// `int8`
    pub const I8: Self = Self::raw(1, FloatKind::None);
    /// `int16`
    pub const I16: Self = Self::raw(2, FloatKind::None);
    /// `int32`
    pub const I32: Self = Self::raw(4, FloatKind::None);
    /// `int64`
    pub const I64: Self = Self::raw(8, FloatKind::None);
    /// `uint8`
    pub const U8: Self = Self::raw(1, FloatKind::None);
    /// `uint16`
    pub const U16: Self = Self::raw(2, FloatKind::None);
    /// `uint32`
    pub const U32: Self = Self::raw(4, FloatKind::None);
    /// `uint64`
    pub const U64: Self = Self::raw(8, FloatKind::None);
    /// `float16`
    pub const F16: Self = Self::raw(2, FloatKind::F16);
    /// `float32`
    pub const F32: Self = Self::raw(4, FloatKind::F32);
    /// `float64`
    pub const F64: Self = Self::raw(8, FloatKind::F64);
    /// `complex64`
    pub const COMPLEX64: Self = Self::raw(8, FloatKind::Complex64);
    /// `complex128`
    pub const COMPLEX128: Self = Self::raw(16, FloatKind::Complex128);

    const fn raw(size: usize, float: FloatKind) -> Self {
        ElementKind { size, float }
    }

    /// An element kind; the size must be non-zero and match the float kind.
    ///
    /// A `const fn`, so that [`SparseValue::KIND`] of a type outside this crate can be built.
    pub const fn new(size: usize, float: FloatKind) -> Result<Self, SparseError> {
        match float.size() {
            _ if size == 0 => Err(SparseError::InvalidElementKind { size, float }),
            Some(s) if s != size => Err(SparseError::InvalidElementKind { size, float }),
            _ => Ok(Self::raw(size, float)),
        }
    }

    /// A fixed-size type without NaN (integers, bool, raw bytes) of `size` bytes.
    pub const fn opaque(size: usize) -> Result<Self, SparseError> {
        Self::new(size, FloatKind::None)
    }

    /// Size in bytes.
    pub const fn size(&self) -> usize {
        self.size
    }

    /// How NaN is recognised.
    pub const fn float(&self) -> FloatKind {
        self.float
    }

    /// Whether the element `value` equals `fill`: bit equality, with every NaN equal to every
    /// NaN. Slices of another length than [`size`](Self::size) compare by bytes only.
    pub fn is_fill(&self, value: &[u8], fill: &[u8]) -> bool {
        if value == fill {
            return true;
        }
        if value.len() != self.size || fill.len() != self.size {
            return false;
        }
        match self.float {
            FloatKind::None => false,
            FloatKind::F16 => nan16(value) && nan16(fill),
            FloatKind::F32 => nan32(value) && nan32(fill),
            FloatKind::F64 => nan64(value) && nan64(fill),
            FloatKind::Complex64 => {
                part_eq(&value[..4], &fill[..4], nan32) && part_eq(&value[4..], &fill[4..], nan32)
            }
            FloatKind::Complex128 => {
                part_eq(&value[..8], &fill[..8], nan64) && part_eq(&value[8..], &fill[8..], nan64)
            }
        }
    }
}

fn part_eq(a: &[u8], b: &[u8], nan: fn(&[u8]) -> bool) -> bool {
    a == b || (nan(a) && nan(b))
}

fn nan16(b: &[u8]) -> bool {
    match b {
        [b0, b1] => {
            let bits = u16::from_le_bytes([*b0, *b1]);
            bits & 0x7c00 == 0x7c00 && bits & 0x03ff != 0
        }
        _ => false,
    }
}

fn nan32(b: &[u8]) -> bool {
    <[u8; 4]>::try_from(b).is_ok_and(|a| f32::from_le_bytes(a).is_nan())
}

fn nan64(b: &[u8]) -> bool {
    <[u8; 8]>::try_from(b).is_ok_and(|a| f64::from_le_bytes(a).is_nan())
}

/// A typed element of a sparse chunk.
///
/// Implemented for the integers, `half::f16`, `f32`, `f64`, `num_complex::Complex32` and
/// `Complex64`. `bool` is not [`bytemuck::Pod`]: a bool array is handled as `u8` (0 or 1).
pub trait SparseValue: bytemuck::Pod + Send + Sync {
    /// The untyped description of this type.
    const KIND: ElementKind;

    /// Whether `self` equals the fill value: bit equality, with every NaN equal to every NaN
    /// (`-0.0` is not `0.0`). Complex numbers compare part by part.
    fn is_fill(&self, fill: &Self) -> bool;
}

/// A [`SparseValue`] whose duplicates can be summed when building from triples.
pub trait SparseSum: SparseValue {
    /// The sum of two values (integers wrap around instead of overflowing).
    fn sparse_add(self, other: Self) -> Self;
}

macro_rules! int_value {
    ($($t:ty => $kind:ident),* $(,)?) => {$(
        impl SparseValue for $t {
            const KIND: ElementKind = ElementKind::$kind;
            fn is_fill(&self, fill: &Self) -> bool {
                self == fill
            }
        }
        impl SparseSum for $t {
            fn sparse_add(self, other: Self) -> Self {
                self.wrapping_add(other)
            }
        }
    )*};
}

int_value!(
    i8 => I8, i16 => I16, i32 => I32, i64 => I64,
    u8 => U8, u16 => U16, u32 => U32, u64 => U64,
);

macro_rules! float_value {
    ($($t:ty => $kind:ident),* $(,)?) => {$(
        impl SparseValue for $t {
            const KIND: ElementKind = ElementKind::$kind;
            fn is_fill(&self, fill: &Self) -> bool {
                self.to_bits() == fill.to_bits() || (self.is_nan() && fill.is_nan())
            }
        }
        impl SparseSum for $t {
            fn sparse_add(self, other: Self) -> Self {
                self + other
            }
        }
    )*};
}

float_value!(f16 => F16, f32 => F32, f64 => F64);

macro_rules! complex_value {
    ($($t:ty => $kind:ident),* $(,)?) => {$(
        impl SparseValue for $t {
            const KIND: ElementKind = ElementKind::$kind;
            fn is_fill(&self, fill: &Self) -> bool {
                let eq = |a: f64, b: f64, bits_eq: bool| bits_eq || (a.is_nan() && b.is_nan());
                eq(
                    f64::from(self.re),
                    f64::from(fill.re),
                    self.re.to_bits() == fill.re.to_bits(),
                ) && eq(
                    f64::from(self.im),
                    f64::from(fill.im),
                    self.im.to_bits() == fill.im.to_bits(),
                )
            }
        }
        impl SparseSum for $t {
            fn sparse_add(self, other: Self) -> Self {
                self + other
            }
        }
    )*};
}

complex_value!(Complex32 => COMPLEX64, Complex64 => COMPLEX128);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cast;

    fn both<T: SparseValue>(a: T, b: T) -> bool {
        let typed = a.is_fill(&b);
        let bytes = T::KIND.is_fill(cast::bytes_of(&a), cast::bytes_of(&b));
        assert_eq!(typed, bytes, "typed and byte-level comparison disagree");
        typed
    }

    #[test]
    fn nan_and_signed_zero() {
        assert!(both(f32::NAN, -f32::NAN));
        assert!(both(f32::from_bits(0x7fc0_0001), f32::NAN));
        assert!(!both(-0.0f32, 0.0));
        assert!(both(0.0f64, 0.0));
        assert!(!both(-0.0f64, 0.0));
        assert!(both(f64::NAN, f64::from_bits(0xfff8_0000_0000_0001)));
        assert!(both(f16::NAN, f16::from_bits(0xfe01)));
        assert!(!both(f16::NEG_ZERO, f16::ZERO));
        assert!(!both(f16::INFINITY, f16::NAN));
        assert!(!both(1.0f32, f32::NAN));
    }

    #[test]
    fn complex_parts() {
        let nan = f32::NAN;
        assert!(both(Complex32::new(nan, 1.0), Complex32::new(-nan, 1.0)));
        assert!(!both(Complex32::new(nan, 1.0), Complex32::new(nan, 2.0)));
        assert!(!both(Complex32::new(-0.0, 0.0), Complex32::new(0.0, 0.0)));
        assert!(both(
            Complex64::new(0.0, f64::NAN),
            Complex64::new(0.0, f64::NAN)
        ));
        assert!(!both(
            Complex64::new(0.0, f64::NAN),
            Complex64::new(f64::NAN, 0.0)
        ));
    }

    #[test]
    fn integers() {
        assert!(both(0i32, 0));
        assert!(!both(1u8, 0));
        assert!(both(u64::MAX, u64::MAX));
    }

    #[test]
    fn element_kind_validation() {
        assert!(ElementKind::new(4, FloatKind::F32).is_ok());
        assert!(ElementKind::new(8, FloatKind::F32).is_err());
        assert!(ElementKind::new(0, FloatKind::None).is_err());
        assert_eq!(ElementKind::opaque(3).map(|k| k.size()), Ok(3));
        assert_eq!(<Complex64 as SparseValue>::KIND.size(), 16);
    }
}
