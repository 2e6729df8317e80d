//! Elements of the core numeric types and NumPy's casts between them (`arr.astype(t)`), for
//! the numcodecs filters that change a chunk's data type (`astype`, `delta`,
//! `fixedscaleoffset`, `quantize`).
//!
//! Casts follow NumPy (C casts): integers wrap to narrower integers, integers and floats round
//! to the nearest float, floats truncate toward zero to integers, anything nonzero (NaN
//! included) is `True`, complex numbers lose their imaginary part when cast to a real type.
//! Out-of-range float-to-integer casts are undefined behaviour in NumPy; here they go through
//! a saturating cast to `int64` (NaN to 0) and wrap from there, which is what NumPy gives on
//! x86-64 for every value that fits an `int64`.
//!
//! Each function is monomorphized per pair of types (one dispatch per chunk, none per
//! element).

use bytemuck::{Pod, Zeroable};
use half::f16;
use zarr_meta::DataType;

/// One element's value, wide enough for every core type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Value {
    /// A boolean or integer.
    Int(i128),
    /// A real float.
    Float(f64),
    /// A complex number.
    Complex(f64, f64),
}

impl Value {
    fn real(self) -> Value {
        match self {
            Value::Complex(re, _) => Value::Float(re),
            other => other,
        }
    }

    pub(crate) fn as_f64(self) -> f64 {
        match self {
            Value::Int(i) => i as f64,
            Value::Float(f) | Value::Complex(f, _) => f,
        }
    }

    /// For integer targets: the value as an integer (NumPy's C cast of a float).
    fn as_i128(self) -> i128 {
        match self.real() {
            Value::Int(i) => i,
            Value::Float(f) => i128::from(f as i64),
            Value::Complex(..) => unreachable!("real() removed it"),
        }
    }
}

/// A `bool` element (any nonzero byte reads as `True`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
#[repr(transparent)]
pub(crate) struct Bool(pub u8);

/// A `complex64` element.
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
#[repr(transparent)]
pub(crate) struct C64(pub [f32; 2]);

/// A `complex128` element.
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
#[repr(transparent)]
pub(crate) struct C128(pub [f64; 2]);

/// An element of a core numeric type.
pub(crate) trait Element: Pod + Send + Sync {
    /// The value.
    fn to_value(self) -> Value;
    /// The element NumPy's cast makes of `v`.
    fn from_value(v: Value) -> Self;
}

macro_rules! int_element {
    ($($t:ty),*) => {$(
        impl Element for $t {
            #[inline(always)]
            fn to_value(self) -> Value {
                Value::Int(self as i128)
            }
            #[inline(always)]
            fn from_value(v: Value) -> Self {
                // `as` from i128 keeps the low bits: integers wrap, as in NumPy
                v.as_i128() as $t
            }
        }
    )*};
}

int_element!(i8, i16, i32, i64, u8, u16, u32, u64);

impl Element for Bool {
    #[inline(always)]
    fn to_value(self) -> Value {
        Value::Int(i128::from(self.0 != 0))
    }
    #[inline(always)]
    fn from_value(v: Value) -> Self {
        Bool(u8::from(match v {
            Value::Int(i) => i != 0,
            Value::Float(f) => f != 0.0,
            Value::Complex(re, im) => re != 0.0 || im != 0.0,
        }))
    }
}

impl Element for f16 {
    #[inline(always)]
    fn to_value(self) -> Value {
        Value::Float(self.to_f64())
    }
    #[inline(always)]
    fn from_value(v: Value) -> Self {
        f16::from_f64(v.real().as_f64())
    }
}

impl Element for f32 {
    #[inline(always)]
    fn to_value(self) -> Value {
        Value::Float(f64::from(self))
    }
    #[inline(always)]
    fn from_value(v: Value) -> Self {
        match v.real() {
            // one rounding from the integer, not two through f64
            Value::Int(i) => i as f32,
            other => other.as_f64() as f32,
        }
    }
}

impl Element for f64 {
    #[inline(always)]
    fn to_value(self) -> Value {
        Value::Float(self)
    }
    #[inline(always)]
    fn from_value(v: Value) -> Self {
        v.real().as_f64()
    }
}

impl Element for C64 {
    #[inline(always)]
    fn to_value(self) -> Value {
        Value::Complex(f64::from(self.0[0]), f64::from(self.0[1]))
    }
    #[inline(always)]
    fn from_value(v: Value) -> Self {
        match v {
            Value::Complex(re, im) => C64([re as f32, im as f32]),
            other => C64([f32::from_value(other), 0.0]),
        }
    }
}

impl Element for C128 {
    #[inline(always)]
    fn to_value(self) -> Value {
        Value::Complex(self.0[0], self.0[1])
    }
    #[inline(always)]
    fn from_value(v: Value) -> Self {
        match v {
            Value::Complex(re, im) => C128([re, im]),
            other => C128([other.as_f64(), 0.0]),
        }
    }
}

/// Runs `$body` with `$T` the element type of `$t` (a [`DataType`]); `$other` for raw bits.
macro_rules! with_element {
    ($t:expr, $T:ident => $body:expr, $other:expr) => {{
        use ::zarr_meta::DataType as D;
        match $t {
            D::Bool => {
                type $T = $crate::cast::Bool;
                $body
            }
            D::Int8 => {
                type $T = i8;
                $body
            }
            D::Int16 => {
                type $T = i16;
                $body
            }
            D::Int32 => {
                type $T = i32;
                $body
            }
            D::Int64 => {
                type $T = i64;
                $body
            }
            D::UInt8 => {
                type $T = u8;
                $body
            }
            D::UInt16 => {
                type $T = u16;
                $body
            }
            D::UInt32 => {
                type $T = u32;
                $body
            }
            D::UInt64 => {
                type $T = u64;
                $body
            }
            D::Float16 => {
                type $T = ::half::f16;
                $body
            }
            D::Float32 => {
                type $T = f32;
                $body
            }
            D::Float64 => {
                type $T = f64;
                $body
            }
            D::Complex64 => {
                type $T = $crate::cast::C64;
                $body
            }
            D::Complex128 => {
                type $T = $crate::cast::C128;
                $body
            }
            _ => $other,
        }
    }};
}

/// Runs `$body` with `$T` the element type of `$t` when it is an integer or a float (the types
/// NumPy does arithmetic on here); `$other` for the rest.
#[allow(unused_macros)]
macro_rules! with_real {
    ($t:expr, $T:ident => $body:expr, $other:expr) => {{
        use ::zarr_meta::DataType as D;
        match $t {
            D::Int8 => {
                type $T = i8;
                $body
            }
            D::Int16 => {
                type $T = i16;
                $body
            }
            D::Int32 => {
                type $T = i32;
                $body
            }
            D::Int64 => {
                type $T = i64;
                $body
            }
            D::UInt8 => {
                type $T = u8;
                $body
            }
            D::UInt16 => {
                type $T = u16;
                $body
            }
            D::UInt32 => {
                type $T = u32;
                $body
            }
            D::UInt64 => {
                type $T = u64;
                $body
            }
            D::Float16 => {
                type $T = ::half::f16;
                $body
            }
            D::Float32 => {
                type $T = f32;
                $body
            }
            D::Float64 => {
                type $T = f64;
                $body
            }
            _ => $other,
        }
    }};
}
#[allow(unused_imports)]
pub(crate) use with_real;

/// Whether `t` is an integer or a float (what [`with_real`] dispatches).
#[allow(dead_code)]
pub(crate) fn is_real(t: DataType) -> bool {
    use zarr_meta::DataKind;
    matches!(t.kind(), DataKind::Int | DataKind::UInt | DataKind::Float)
}

/// NumPy's arithmetic in one real type: integers wrap, floats round to the type (`float16`
/// computes in `float32` and rounds back, as NumPy's `float16` loops do).
#[allow(dead_code)]
pub(crate) trait Real: Element + Copy {
    /// `self + o`.
    fn add(self, o: Self) -> Self;
    /// `self - o`.
    fn sub(self, o: Self) -> Self;
    /// `self * o`.
    fn mul(self, o: Self) -> Self;
    /// `self / o` for floats (`true_divide`); unused for integers, which divide as `float64`.
    fn div(self, o: Self) -> Self;
    /// `np.around`: to the nearest integer, ties to even (integers unchanged).
    fn round_even(self) -> Self;
    /// Whether the type is a float.
    const FLOAT: bool;
}

macro_rules! int_real {
    ($($t:ty),*) => {$(
        impl Real for $t {
            #[inline(always)]
            fn add(self, o: Self) -> Self { self.wrapping_add(o) }
            #[inline(always)]
            fn sub(self, o: Self) -> Self { self.wrapping_sub(o) }
            #[inline(always)]
            fn mul(self, o: Self) -> Self { self.wrapping_mul(o) }
            #[inline(always)]
            fn div(self, o: Self) -> Self { self.checked_div(o).unwrap_or(0) }
            #[inline(always)]
            fn round_even(self) -> Self { self }
            const FLOAT: bool = false;
        }
    )*};
}

int_real!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! float_real {
    ($($t:ty),*) => {$(
        impl Real for $t {
            #[inline(always)]
            fn add(self, o: Self) -> Self { self + o }
            #[inline(always)]
            fn sub(self, o: Self) -> Self { self - o }
            #[inline(always)]
            fn mul(self, o: Self) -> Self { self * o }
            #[inline(always)]
            fn div(self, o: Self) -> Self { self / o }
            #[inline(always)]
            fn round_even(self) -> Self { self.round_ties_even() }
            const FLOAT: bool = true;
        }
    )*};
}

float_real!(f32, f64);

impl Real for f16 {
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        f16::from_f32(self.to_f32() + o.to_f32())
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        f16::from_f32(self.to_f32() - o.to_f32())
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        f16::from_f32(self.to_f32() * o.to_f32())
    }
    #[inline(always)]
    fn div(self, o: Self) -> Self {
        f16::from_f32(self.to_f32() / o.to_f32())
    }
    #[inline(always)]
    fn round_even(self) -> Self {
        f16::from_f32(self.to_f32().round_ties_even())
    }
    const FLOAT: bool = true;
}

/// The representation `repr` becomes when its elements are cast to `to` (and, for
/// `packbits`, reshaped): the fill value is cast too, as zarr-python keeps it.
#[allow(dead_code)]
pub(crate) fn cast_repr(
    repr: &zarr_codecs::ChunkRepr,
    to: DataType,
    shape: Vec<u64>,
) -> zarr_codecs::Result<zarr_codecs::ChunkRepr> {
    let fill = cast_element(repr.data_type, to, repr.fill_value.as_bytes())
        .unwrap_or_else(|| vec![0; to.size()]);
    let fill = zarr_meta::FillValue::from_ne_bytes(to, fill)?;
    Ok(zarr_codecs::ChunkRepr::new(shape, to, fill))
}

/// Reads element `i` of `bytes` (native order, any alignment).
#[inline(always)]
pub(crate) fn get<T: Pod>(bytes: &[u8], i: usize) -> T {
    let n = std::mem::size_of::<T>();
    bytemuck::pod_read_unaligned(&bytes[i * n..(i + 1) * n])
}

/// Writes element `i` of `bytes`.
#[inline(always)]
pub(crate) fn set<T: Pod>(bytes: &mut [u8], i: usize, v: T) {
    let n = std::mem::size_of::<T>();
    bytes[i * n..(i + 1) * n].copy_from_slice(bytemuck::bytes_of(&v));
}

/// Casts every element of `src` (type `S`) into `dst` (type `D`).
fn cast_typed<S: Element, D: Element>(src: &[u8], dst: &mut [u8]) {
    let n = src.len() / std::mem::size_of::<S>();
    for i in 0..n {
        set(dst, i, D::from_value(get::<S>(src, i).to_value()));
    }
}

/// Casts the elements of `src` (of type `from`) into `dst` (of type `to`), as NumPy's
/// `astype`. Both hold the same number of elements; `false` for raw-bits types, which have no
/// values.
pub(crate) fn cast(from: DataType, to: DataType, src: &[u8], dst: &mut [u8]) -> bool {
    if from == to {
        dst.copy_from_slice(src);
        return true;
    }
    with_element!(from, S => with_element!(to, T => {
        cast_typed::<S, T>(src, dst);
        true
    }, false), false)
}

/// The bytes of `value` (one element of type `from`) cast to `to`; `None` for raw bits.
pub(crate) fn cast_element(from: DataType, to: DataType, value: &[u8]) -> Option<Vec<u8>> {
    let mut out = vec![0u8; to.size()];
    cast(from, to, value, &mut out).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one<S: Element, D: Element>(v: S) -> D {
        D::from_value(v.to_value())
    }

    #[test]
    fn numpy_casts() {
        // integers wrap
        assert_eq!(one::<i32, i8>(300), 44);
        assert_eq!(one::<i64, u16>(-1), 0xffff);
        assert_eq!(one::<u64, i64>(u64::MAX), -1);
        // floats truncate toward zero
        assert_eq!(one::<f64, i32>(-2.7), -2);
        assert_eq!(one::<f32, u8>(255.9), 255);
        assert_eq!(one::<f64, u8>(300.0), 44);
        // integers round to the nearest float, once
        assert_eq!(one::<i64, f32>(16_777_217), 16_777_216.0);
        assert_eq!(one::<i64, f32>((1 << 53) + 3), 9_007_199_254_740_996.0);
        assert_eq!(one::<u64, f64>(u64::MAX), 18_446_744_073_709_551_616.0);
        assert_eq!(one::<f64, f16>(65520.0), f16::INFINITY);
        assert_eq!(one::<f32, f64>(0.1), f64::from(0.1f32));
        // booleans
        assert_eq!(one::<f64, Bool>(f64::NAN), Bool(1));
        assert_eq!(one::<f64, Bool>(-0.0), Bool(0));
        assert_eq!(one::<Bool, f32>(Bool(2)), 1.0);
        // complex
        assert_eq!(one::<C128, f64>(C128([1.5, 2.0])), 1.5);
        assert_eq!(one::<i16, C64>(-3), C64([-3.0, 0.0]));
        assert_eq!(one::<C128, C64>(C128([0.1, 0.2])), C64([0.1, 0.2]));
    }

    #[test]
    fn buffers_cast_element_by_element() {
        let src: Vec<u8> = [1.5f64, -2.5, 1e10]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let mut dst = vec![0u8; 3 * 2];
        assert!(cast(DataType::Float64, DataType::Int16, &src, &mut dst));
        let got: Vec<i16> = (0..3).map(|i| get(&dst, i)).collect();
        // 1e10 saturates to i64 and wraps to i16, as NumPy on x86-64
        assert_eq!(got, [1, -2, (10_000_000_000i64 as i16)]);
        let raw = DataType::from_name("r16").unwrap();
        assert!(!cast(raw, DataType::Int16, &[0, 0], &mut [0, 0]));
        assert_eq!(
            cast_element(DataType::Int32, DataType::Float32, &7i32.to_ne_bytes()),
            Some(7f32.to_ne_bytes().to_vec())
        );
    }
}
