//! The NumPy data type strings of numcodecs' configurations (`"<i4"`, `"float64"`), checked
//! against the chunk representation a codec sees.

use zarr_meta::numpy::NumpyDtype;
use zarr_meta::{DataKind, DataType};

use zarr_codecs::Result;

use super::invalid;

/// Parses the data type `text` of the configuration field `field` of codec `name`.
///
/// The byte order of the string is the byte order of the values in a Zarr v2 chunk; codecs
/// compute on values (native order here), so it does not change the result.
///
/// # Errors
/// An invalid configuration naming the field, for anything but a core data type.
pub(crate) fn parse(name: &str, field: &str, text: &str) -> Result<DataType> {
    match NumpyDtype::parse(text) {
        Ok(t) => match t.data_type.kind() {
            DataKind::Raw => Err(invalid(
                name,
                format!("{field} {text:?} is raw bytes, which have no values"),
            )),
            DataKind::FixedLengthUtf32 | DataKind::NullTerminatedBytes => Err(invalid(
                name,
                format!("{field} {text:?} is a fixed-width string, which has no numeric values"),
            )),
            _ => Ok(t.data_type),
        },
        Err(e) => Err(invalid(name, format!("{field}: {e}"))),
    }
}

/// Checks that the data type the configuration names (`dtype`) is the one the codec sees.
pub(crate) fn check_matches(
    name: &str,
    field: &str,
    configured: DataType,
    seen: DataType,
) -> Result<()> {
    if configured == seen {
        Ok(())
    } else {
        Err(invalid(
            name,
            format!("{field} is {configured} but the codec receives {seen} data"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_types_with_values() {
        assert_eq!(parse("delta", "dtype", "<i4").unwrap(), DataType::Int32);
        for (text, why) in [
            ("|V2", "is raw bytes, which have no values"),
            (
                "<U3",
                "is a fixed-width string, which has no numeric values",
            ),
            (
                "|S3",
                "is a fixed-width string, which has no numeric values",
            ),
            ("|O", "is not a NumPy data type"),
        ] {
            let e = zarr_testkit::report(&parse("delta", "dtype", text).unwrap_err());
            assert!(e.contains(why), "{text}: {e}");
        }
    }
}
