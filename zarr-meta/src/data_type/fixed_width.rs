//! NumPy's fixed-width strings: the elements of `fixed_length_utf32` (`U<n>`) and
//! `null_terminated_bytes` (`S<n>`), to and from Rust strings.
//!
//! ```
//! use zarr_meta::data_type::fixed_width::{utf32_decode, utf32_encode, trim_nul};
//! let e = utf32_encode("hé", 12).unwrap();
//! assert_eq!(e.len(), 12);
//! assert_eq!(utf32_decode(&e).unwrap(), "hé");
//! assert_eq!(utf32_encode("four", 12), None); // needs 16 bytes
//! assert_eq!(trim_nul(b"ab\0\0"), b"ab");
//! ```

/// `s` as an element of `length_bytes` bytes: UTF-32 code units in native byte order, padded
/// with NUL; `None` when `s` needs more than `length_bytes` bytes.
pub fn utf32_encode(s: &str, length_bytes: usize) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(length_bytes);
    for c in s.chars() {
        if out.len() + 4 > length_bytes {
            return None;
        }
        out.extend_from_slice(&u32::from(c).to_ne_bytes());
    }
    out.resize(length_bytes, 0);
    Some(out)
}

/// The string an element (native byte order) holds, without the NUL code units that end it
/// (as NumPy reads it).
///
/// # Errors
/// The first code unit that is not a Unicode scalar value (a surrogate, or above U+10FFFF),
/// and where it is. A length that is not a multiple of 4 counts its tail as code unit 0.
pub fn utf32_decode(element: &[u8]) -> Result<String, InvalidCodeUnit> {
    let units = element.chunks_exact(4);
    let tail = !units.remainder().is_empty();
    let mut s = String::with_capacity(element.len() / 4);
    for (index, u) in units.enumerate() {
        let unit = u32::from_ne_bytes([u[0], u[1], u[2], u[3]]);
        s.push(char::from_u32(unit).ok_or(InvalidCodeUnit { index, unit })?);
    }
    if tail {
        return Err(InvalidCodeUnit {
            index: element.len() / 4,
            unit: 0,
        });
    }
    s.truncate(s.trim_end_matches('\0').len());
    Ok(s)
}

/// `bytes` without the NUL bytes that end it (NumPy's reading of an `S<n>` element).
pub fn trim_nul(bytes: &[u8]) -> &[u8] {
    let end = bytes.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    &bytes[..end]
}

/// A code unit of a `fixed_length_utf32` element that is no Unicode scalar value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("code unit {index} of the element, {unit:#x}, is not a Unicode scalar value")]
pub struct InvalidCodeUnit {
    /// Its index among the element's code units.
    pub index: usize,
    /// Its value.
    pub unit: u32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn bad_code_units_and_lengths() {
        let mut e = utf32_encode("ab", 8).unwrap();
        e[4..].copy_from_slice(&0xd800u32.to_ne_bytes());
        assert_eq!(
            utf32_decode(&e).unwrap_err(),
            InvalidCodeUnit {
                index: 1,
                unit: 0xd800
            }
        );
        assert!(utf32_decode(&[0, 0, 0, 0, 0]).is_err());
        assert_eq!(utf32_decode(&[]).unwrap(), "");
        // NUL inside is kept, NUL at the end is not
        assert_eq!(
            utf32_decode(&utf32_encode("a\0b\0", 16).unwrap()).unwrap(),
            "a\0b"
        );
        assert_eq!(trim_nul(b"\0a\0b\0\0"), b"\0a\0b");
        assert_eq!(trim_nul(b"\0\0"), b"");
    }

    proptest! {
        #[test]
        fn utf32_round_trips(s in "[^\u{0}]{0,8}", extra in 0usize..3) {
            let n = 4 * (s.chars().count() + extra);
            let e = utf32_encode(&s, n).unwrap();
            prop_assert_eq!(e.len(), n);
            prop_assert_eq!(utf32_decode(&e).unwrap(), s.clone());
            if n >= 4 && !s.is_empty() {
                prop_assert_eq!(utf32_encode(&s, 4 * s.chars().count() - 4), None);
            }
        }
    }
}
