//! The chunk format of the `vlen-utf8` and `vlen-bytes` array -> bytes codecs, as numcodecs
//! 0.16 (`VLenUTF8`, `VLenBytes`) writes it for zarr-python 3.1.6: a `u32` little-endian
//! element count, then per element (C order) a `u32` little-endian byte length and the
//! element's bytes (UTF-8 for `vlen-utf8`).
//!
//! This module holds the format only (encoding and bounded decoding); the codecs themselves
//! need the variable-size data types of zarr-meta and are not registered yet.
//!
//! A decoded chunk is held as one byte buffer and `count + 1` offsets ([`VlenChunk`]), not as
//! one allocation per element: both allocations are bounded by the stored chunk's length
//! (checked before allocating), and `Vec<String>` or `Vec<Vec<u8>>` is built only where a
//! caller asks for it.
//!
//! ```
//! use zarr_codecs::vlen::{decode, encode, VLEN_UTF8};
//! let stored = encode(["a", "", "é"].iter().map(|s| s.as_bytes()), VLEN_UTF8)?;
//! assert_eq!(stored, [3, 0, 0, 0, 1, 0, 0, 0, b'a', 0, 0, 0, 0, 2, 0, 0, 0, 0xc3, 0xa9]);
//! let chunk = decode(&stored, 3, VLEN_UTF8)?;
//! assert_eq!(chunk.to_strings(VLEN_UTF8)?, ["a", "", "é"]);
//! # Ok::<(), zarr_codecs::CodecError>(())
//! ```

use crate::error::{CodecError, Result};

/// The name of the UTF-8 codec.
pub const VLEN_UTF8: &str = "vlen-utf8";
/// The name of the byte-string codec.
pub const VLEN_BYTES: &str = "vlen-bytes";

/// Bytes of the count header and of each length prefix.
const PREFIX: usize = 4;

/// A decoded chunk of variable-size elements: their bytes back to back and where each starts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VlenChunk {
    /// `len() + 1` offsets into `data`, the first 0, non-decreasing.
    offsets: Vec<usize>,
    data: Vec<u8>,
}

impl VlenChunk {
    /// The number of elements.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Whether the chunk holds no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes of element `i` (C order), `None` past the end.
    pub fn get(&self, i: usize) -> Option<&[u8]> {
        let start = *self.offsets.get(i)?;
        let end = *self.offsets.get(i + 1)?;
        self.data.get(start..end)
    }

    /// The elements' bytes in order.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> + '_ {
        self.offsets.windows(2).map(|w| &self.data[w[0]..w[1]])
    }

    /// The elements as owned byte strings.
    pub fn to_byte_vecs(&self) -> Vec<Vec<u8>> {
        self.iter().map(<[u8]>::to_vec).collect()
    }

    /// The elements as strings.
    ///
    /// # Errors
    /// [`CodecError::Corrupt`] naming `codec` and the first element that is not UTF-8.
    pub fn to_strings(&self, codec: &'static str) -> Result<Vec<String>> {
        self.iter()
            .enumerate()
            .map(|(i, b)| {
                std::str::from_utf8(b)
                    .map(str::to_owned)
                    .map_err(|e| CodecError::Corrupt {
                        codec,
                        reason: format!("element {i} is not UTF-8 ({e})"),
                    })
            })
            .collect()
    }
}

/// Encodes elements in the vlen format.
///
/// # Errors
/// [`CodecError::Compress`] when the count or an element's length does not fit the format's
/// `u32`.
pub fn encode<'a, I>(items: I, codec: &'static str) -> Result<Vec<u8>>
where
    I: IntoIterator<Item = &'a [u8]>,
{
    let too_large = |what: &str| CodecError::Compress {
        codec,
        reason: format!("{what} does not fit the format's 32-bit field"),
    };
    let mut out = vec![0u8; PREFIX];
    let mut count: u32 = 0;
    for item in items {
        count = count
            .checked_add(1)
            .ok_or_else(|| too_large("the element count"))?;
        let len = u32::try_from(item.len()).map_err(|_| too_large("an element's length"))?;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(item);
    }
    out[..PREFIX].copy_from_slice(&count.to_le_bytes());
    Ok(out)
}

fn read_u32(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(PREFIX)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Decodes a chunk of `expected` elements.
///
/// Bytes after the last element are ignored, as numcodecs ignores them.
///
/// # Errors
/// [`CodecError::Truncated`] for a missing header or an element (prefix or bytes) that runs
/// past the end, [`CodecError::Corrupt`] for a count other than `expected`; both before any
/// allocation that the input's length does not bound.
pub fn decode(bytes: &[u8], expected: u64, codec: &'static str) -> Result<VlenChunk> {
    let total = bytes.len() as u64;
    let count = read_u32(bytes, 0).ok_or(CodecError::Truncated {
        codec,
        needed: PREFIX as u64,
        got: total,
    })?;
    if u64::from(count) != expected {
        return Err(CodecError::Corrupt {
            codec,
            reason: format!("the chunk holds {count} elements, expected {expected}"),
        });
    }
    // every element needs at least its length prefix: refuse before allocating the offsets
    let needed = (PREFIX as u64) * (1 + u64::from(count));
    if needed > total {
        return Err(CodecError::Truncated {
            codec,
            needed,
            got: total,
        });
    }
    let count = count as usize; // <= total / 4, so it fits
    let mut offsets = Vec::with_capacity(count + 1);
    offsets.push(0);
    let mut data = Vec::with_capacity(bytes.len() - PREFIX * (1 + count));
    let mut pos = PREFIX;
    for _ in 0..count {
        let Some(len) = read_u32(bytes, pos) else {
            return Err(CodecError::Truncated {
                codec,
                needed: pos as u64 + PREFIX as u64,
                got: total,
            });
        };
        let start = pos + PREFIX;
        let end = start as u64 + u64::from(len);
        let Some(item) = usize::try_from(end).ok().and_then(|e| bytes.get(start..e)) else {
            return Err(CodecError::Truncated {
                codec,
                needed: end,
                got: total,
            });
        };
        data.extend_from_slice(item);
        offsets.push(data.len());
        pos = start + item.len();
    }
    Ok(VlenChunk { offsets, data })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What numcodecs 0.16.6 writes for `VLenUTF8().encode(np.array(['a', '', 'é'], object))`
    /// and `VLenBytes().encode(np.array([b'ab', b''], object))`.
    const NUMCODECS_UTF8: &str = "0300000001000000610000000002000000c3a9";
    const NUMCODECS_BYTES: &str = "0200000002000000616200000000";

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn encoding_is_what_numcodecs_writes() {
        let utf8 = encode(["a", "", "é"].iter().map(|s| s.as_bytes()), VLEN_UTF8).unwrap();
        assert_eq!(hex(&utf8), NUMCODECS_UTF8);
        let bytes = encode([&b"ab"[..], b""], VLEN_BYTES).unwrap();
        assert_eq!(hex(&bytes), NUMCODECS_BYTES);
        assert_eq!(hex(&encode([], VLEN_BYTES).unwrap()), "00000000");
    }

    #[test]
    fn decoding_round_trips_and_ignores_trailing_bytes() {
        let stored = encode([&b"ab"[..], b"", b"\xff\x00"], VLEN_BYTES).unwrap();
        let chunk = decode(&stored, 3, VLEN_BYTES).unwrap();
        assert_eq!(chunk.len(), 3);
        assert_eq!(chunk.get(0), Some(&b"ab"[..]));
        assert_eq!(chunk.get(1), Some(&b""[..]));
        assert_eq!(chunk.get(3), None);
        assert_eq!(
            chunk.to_byte_vecs(),
            [b"ab".to_vec(), vec![], vec![0xff, 0]]
        );
        let mut longer = stored.clone();
        longer.extend_from_slice(b"zz");
        assert_eq!(decode(&longer, 3, VLEN_BYTES).unwrap(), chunk);
        let err = chunk.to_strings(VLEN_UTF8).unwrap_err();
        assert!(err.to_string().contains("element 2 is not UTF-8"), "{err}");
    }

    #[test]
    fn corrupt_chunks_are_refused_before_allocating() {
        // a count of 2^32 - 1 in an 8-byte chunk: refused on length, not after reserving
        let huge = [0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0];
        let err = decode(&huge, u64::from(u32::MAX), VLEN_UTF8).unwrap_err();
        assert!(matches!(err, CodecError::Truncated { needed, got: 8, .. } if needed == 4 << 32));
        // a count other than the chunk's element count (zarr-python's 2^40 is not even storable)
        let err = decode(&huge, 1 << 40, VLEN_UTF8).unwrap_err();
        assert!(matches!(err, CodecError::Corrupt { .. }), "{err}");
        // an element longer than the bytes left
        let long = [1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, b'a'];
        let err = decode(&long, 1, VLEN_UTF8).unwrap_err();
        assert!(matches!(err, CodecError::Truncated { got: 9, .. }), "{err}");
        // a missing header, a missing prefix
        assert!(matches!(
            decode(&[1, 0], 1, VLEN_UTF8),
            Err(CodecError::Truncated {
                needed: 4,
                got: 2,
                ..
            })
        ));
        assert!(matches!(
            decode(&[2, 0, 0, 0, 0, 0, 0, 0, 1, 0], 2, VLEN_UTF8),
            Err(CodecError::Truncated { needed: 12, .. })
        ));
    }
}
