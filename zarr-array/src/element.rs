//! Rust element types and the Zarr data types they hold.

use num_complex::{Complex32, Complex64};
use zarr_meta::DataType;

/// A Rust type that an array's elements can be read into and written from.
///
/// Implemented for `bool`, the integer types, [`half::f16`], `f32`, `f64`, and
/// [`Complex32`] / [`Complex64`]. Reads and writes check the array's data type at run time
/// ([`Element::holds`]).
///
/// Datetimes and timedeltas (`numpy.datetime64`, `numpy.timedelta64`) are read and written as
/// `i64`: the count of the array's [`TimeScale`](zarr_meta::data_type::TimeScale) since the
/// Unix epoch (datetimes) or elapsed (timedeltas), with `i64::MIN` for `NaT`, as NumPy holds
/// them. The unit is the array's (`array.data_type()`); nothing is converted.
/// All-zero bytes are a value of each (`Zeroable`), so read outputs come zeroed from the
/// allocator instead of being written twice.
pub trait Element:
    Copy + Send + Sync + Default + bytemuck::Zeroable + std::fmt::Debug + 'static
{
    /// The data type an array of this type gets, and the one it is read from.
    const DATA_TYPE: DataType;
    /// The Rust name, for errors.
    const NAME: &'static str;

    /// Whether an array of `data_type` reads into and writes from this type: its
    /// [`Element::DATA_TYPE`], and for `i64` also the datetimes and timedeltas.
    fn holds(data_type: DataType) -> bool {
        data_type == Self::DATA_TYPE
    }

    /// Views elements as native-order bytes, without copying.
    fn as_bytes(items: &[Self]) -> &[u8];

    /// Fills `out` from native-order bytes (`bytes.len() == out.len() * size`).
    ///
    /// # Errors
    /// A `bool` byte that is neither 0 nor 1.
    fn copy_from_bytes(out: &mut [Self], bytes: &[u8]) -> Result<(), InvalidValue>;

    /// Views elements as mutable native-order bytes, when every bit pattern is a valid value
    /// (all types but `bool`), so chunks decode straight into them.
    fn as_bytes_mut(items: &mut [Self]) -> Option<&mut [u8]>;
}

/// A stored byte that is not a valid value of the element type (a `bool` other than 0 or 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("stored byte {0} is not a valid bool")]
pub struct InvalidValue(pub u8);

macro_rules! pod_element {
    ($($t:ty => $dt:expr $(, or [$also:pat])?;)*) => {$(
        impl Element for $t {
            const DATA_TYPE: DataType = $dt;
            const NAME: &'static str = stringify!($t);
            $(
                fn holds(data_type: DataType) -> bool {
                    data_type == $dt || matches!(data_type, $also)
                }
            )?
            fn as_bytes(items: &[Self]) -> &[u8] {
                bytemuck::cast_slice(items)
            }
            fn copy_from_bytes(out: &mut [Self], bytes: &[u8]) -> Result<(), InvalidValue> {
                bytemuck::cast_slice_mut::<Self, u8>(out).copy_from_slice(bytes);
                Ok(())
            }
            fn as_bytes_mut(items: &mut [Self]) -> Option<&mut [u8]> {
                Some(bytemuck::cast_slice_mut(items))
            }
        }
    )*};
}

pod_element!(
    i8 => DataType::Int8;
    i16 => DataType::Int16;
    i32 => DataType::Int32;
    i64 => DataType::Int64, or [DataType::DateTime64(_) | DataType::TimeDelta64(_)];
    u8 => DataType::UInt8;
    u16 => DataType::UInt16;
    u32 => DataType::UInt32;
    u64 => DataType::UInt64;
    half::f16 => DataType::Float16;
    f32 => DataType::Float32;
    f64 => DataType::Float64;
    Complex32 => DataType::Complex64;
    Complex64 => DataType::Complex128;
);

impl Element for bool {
    const DATA_TYPE: DataType = DataType::Bool;
    const NAME: &'static str = "bool";
    fn as_bytes(items: &[Self]) -> &[u8] {
        bytemuck::cast_slice(items)
    }
    fn copy_from_bytes(out: &mut [Self], bytes: &[u8]) -> Result<(), InvalidValue> {
        match bytemuck::checked::try_cast_slice::<u8, bool>(bytes) {
            Ok(valid) => {
                out.copy_from_slice(valid);
                Ok(())
            }
            Err(_) => Err(InvalidValue(
                bytes.iter().copied().find(|&b| b > 1).unwrap_or(0),
            )),
        }
    }
    fn as_bytes_mut(_: &mut [Self]) -> Option<&mut [u8]> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_match_the_data_types() {
        fn check<T: Element>() {
            assert_eq!(std::mem::size_of::<T>(), T::DATA_TYPE.size(), "{}", T::NAME);
        }
        check::<bool>();
        check::<i8>();
        check::<u64>();
        check::<half::f16>();
        check::<Complex32>();
        check::<Complex64>();
    }

    #[test]
    fn datetimes_and_timedeltas_are_i64() {
        use zarr_meta::data_type::{TimeScale, TimeUnit};
        let dt = DataType::DateTime64(TimeScale::of(TimeUnit::Second));
        let td = DataType::TimeDelta64(TimeScale::try_new(TimeUnit::Millisecond, 10).unwrap());
        for t in [dt, td, DataType::Int64] {
            assert!(i64::holds(t), "{t}");
            assert!(!u64::holds(t) && !f64::holds(t) && !i32::holds(t), "{t}");
        }
        assert!(!i64::holds(DataType::UInt64));
        assert!(f64::holds(DataType::Float64));
    }

    #[test]
    fn bools_are_validated() {
        let mut out = [false; 3];
        bool::copy_from_bytes(&mut out, &[1, 0, 1]).unwrap();
        assert_eq!(out, [true, false, true]);
        assert_eq!(
            bool::copy_from_bytes(&mut out, &[2, 0, 0]),
            Err(InvalidValue(2))
        );
        assert_eq!(bool::as_bytes(&[true, false]), &[1, 0]);
    }
}
