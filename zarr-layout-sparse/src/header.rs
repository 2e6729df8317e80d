//! The chunk header, the section table and the canonical placement of sections.

use crate::error::SparseError;
use crate::types::Format;

/// The magic bytes every encoded chunk starts with.
pub const MAGIC: [u8; 4] = *b"ZSPL";
/// The format version this crate reads and writes.
pub const VERSION: u8 = 1;
/// Length of the fixed header in bytes.
pub const HEADER_LEN: usize = 32;
/// Length of one section table entry (`offset: u64, nbytes: u64`).
pub const SECTION_ENTRY_LEN: usize = 16;

/// The fixed 32-byte header of an encoded chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Header {
    /// The sparse format.
    pub format: Format,
    /// Index width in bytes (2, 4 or 8).
    pub index_width: u8,
    /// Pointer width in bytes (0 for COO; 4 or 8).
    pub pointer_width: u8,
    /// Number of stored entries.
    pub nnz: u64,
    /// Number of dimensions of the chunk.
    pub ndim: u16,
    /// Number of sections (2 for COO, 3 for CSR/CSC).
    pub n_sections: u16,
    /// Size of one value in bytes.
    pub value_size: u32,
}

impl Header {
    /// Reads the header: checks the length, the magic, the version, the format byte and that
    /// the reserved bytes are zero. The other fields are checked by
    /// [`SparseChunk::decode`](crate::SparseChunk::decode) against the expected layout.
    pub fn parse(bytes: &[u8]) -> Result<Header, SparseError> {
        let Some(h) = bytes.first_chunk::<HEADER_LEN>() else {
            return Err(SparseError::Truncated {
                what: "header",
                needed: HEADER_LEN as u64,
                len: bytes.len() as u64,
            });
        };
        let magic = [h[0], h[1], h[2], h[3]];
        if magic != MAGIC {
            return Err(SparseError::BadMagic { found: magic });
        }
        if h[4] != VERSION {
            return Err(SparseError::UnsupportedVersion { found: h[4] });
        }
        let format = Format::from_code(h[5]).ok_or(SparseError::UnknownFormat { found: h[5] })?;
        if h[24..32].iter().any(|&b| b != 0) {
            return Err(SparseError::ReservedNotZero);
        }
        Ok(Header {
            format,
            index_width: h[6],
            pointer_width: h[7],
            nnz: read_u64(h, 8),
            ndim: u16::from_le_bytes([h[16], h[17]]),
            n_sections: u16::from_le_bytes([h[18], h[19]]),
            value_size: u32::from_le_bytes([h[20], h[21], h[22], h[23]]),
        })
    }

    /// The header's 32 bytes.
    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        let mut h = [0u8; HEADER_LEN];
        h[..4].copy_from_slice(&MAGIC);
        h[4] = VERSION;
        h[5] = self.format.code();
        h[6] = self.index_width;
        h[7] = self.pointer_width;
        h[8..16].copy_from_slice(&self.nnz.to_le_bytes());
        h[16..18].copy_from_slice(&self.ndim.to_le_bytes());
        h[18..20].copy_from_slice(&self.n_sections.to_le_bytes());
        h[20..24].copy_from_slice(&self.value_size.to_le_bytes());
        h
    }
}

/// One entry of the section table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Section {
    /// Offset of the section from the start of the chunk.
    pub offset: u64,
    /// Length of the section in bytes, without padding.
    pub nbytes: u64,
}

/// Reads `u64` little-endian at `at`; the caller guarantees `at + 8 <= bytes.len()`.
fn read_u64(bytes: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(a)
}

/// The binsparse names of a format's sections, in table order.
pub(crate) const fn section_names(format: Format) -> &'static [&'static str] {
    match format {
        Format::Coo => &["indices", "values"],
        Format::Csr | Format::Csc => &["pointers_to_1", "indices_1", "values"],
    }
}

/// Rounds up to a multiple of 8.
pub(crate) const fn align8(x: u64) -> Option<u64> {
    match x.checked_add(7) {
        Some(v) => Some(v & !7),
        None => None,
    }
}

fn overflow(what: &'static str) -> SparseError {
    SparseError::SizeOverflow { what }
}

/// End of the section table: `32 + 16 * n_sections`.
pub(crate) const fn table_end(n_sections: usize) -> u64 {
    (HEADER_LEN + SECTION_ENTRY_LEN * n_sections) as u64
}

/// The byte length of each section of a chunk of `shape` with `nnz` entries.
pub(crate) fn section_sizes(
    format: Format,
    shape: &[u64],
    nnz: u64,
    value_size: u64,
    index_width: u64,
    pointer_width: u64,
) -> Result<Vec3, SparseError> {
    let ndim = shape.len();
    if !format.supports_rank(ndim) {
        return Err(SparseError::UnsupportedRank { format, ndim });
    }
    let values = nnz
        .checked_mul(value_size)
        .ok_or(overflow("values section"))?;
    match format {
        Format::Coo => {
            let indices = (ndim as u64)
                .checked_mul(nnz)
                .and_then(|x| x.checked_mul(index_width))
                .ok_or(overflow("indices section"))?;
            Ok(Vec3::two(indices, values))
        }
        Format::Csr | Format::Csc => {
            let outer = if format == Format::Csr {
                shape[0]
            } else {
                shape[1]
            };
            let pointers = outer
                .checked_add(1)
                .and_then(|x| x.checked_mul(pointer_width))
                .ok_or(overflow("pointers section"))?;
            let indices = nnz
                .checked_mul(index_width)
                .ok_or(overflow("indices section"))?;
            Ok(Vec3::three(pointers, indices, values))
        }
    }
}

/// Up to three section sizes (a fixed-capacity list, to avoid allocating).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Vec3 {
    items: [u64; 3],
    len: usize,
}

impl Vec3 {
    const fn two(a: u64, b: u64) -> Self {
        Vec3 {
            items: [a, b, 0],
            len: 2,
        }
    }
    const fn three(a: u64, b: u64, c: u64) -> Self {
        Vec3 {
            items: [a, b, c],
            len: 3,
        }
    }
    pub(crate) fn as_slice(&self) -> &[u64] {
        &self.items[..self.len]
    }
}

/// The canonical placement of sections of the given sizes, and the total chunk length.
pub(crate) fn canonical_sections(sizes: &Vec3) -> Result<([Section; 3], u64), SparseError> {
    let mut sections = [Section::default(); 3];
    let mut end = table_end(sizes.len);
    for (slot, &nbytes) in sections.iter_mut().zip(sizes.as_slice()) {
        let offset = align8(end).ok_or(overflow("encoded chunk"))?;
        end = offset
            .checked_add(nbytes)
            .ok_or(overflow("encoded chunk"))?;
        *slot = Section { offset, nbytes };
    }
    let total = align8(end).ok_or(overflow("encoded chunk"))?;
    Ok((sections, total))
}

/// The spec's upper bound of the encoded length of a chunk of `shape`: `align8(32 + 16 *
/// n_sections)` plus, per section, `align8` of its size when nnz is the chunk's element count.
///
/// `index_width` and `pointer_width` are in bytes (`pointer_width` is ignored for COO). A sparse
/// chunk can be larger than the dense one; decoders size their limits from this bound.
///
/// ```
/// use zarr_layout_sparse::{encoded_size_bound, Format};
/// // 3-d COO, uint16 indices, float32 values, 2x2x2 chunk: 64 + align8(48) + align8(32)
/// assert_eq!(encoded_size_bound(Format::Coo, &[2, 2, 2], 4, 2, 0).unwrap(), 64 + 48 + 32);
/// ```
pub fn encoded_size_bound(
    format: Format,
    shape: &[u64],
    value_size: usize,
    index_width: usize,
    pointer_width: usize,
) -> Result<u64, SparseError> {
    let elements = shape
        .iter()
        .try_fold(1u64, |acc, &d| acc.checked_mul(d))
        .ok_or(overflow("chunk element count"))?;
    let pointer_width = if format.is_compressed() {
        pointer_width
    } else {
        0
    };
    let sizes = section_sizes(
        format,
        shape,
        elements,
        value_size as u64,
        index_width as u64,
        pointer_width as u64,
    )?;
    Ok(canonical_sections(&sizes)?.1)
}

/// The exact length of the canonical encoding of a chunk of `shape` with `nnz` entries.
pub fn encoded_len(
    format: Format,
    shape: &[u64],
    nnz: u64,
    value_size: usize,
    index_width: usize,
    pointer_width: usize,
) -> Result<u64, SparseError> {
    let pointer_width = if format.is_compressed() {
        pointer_width
    } else {
        0
    };
    let sizes = section_sizes(
        format,
        shape,
        nnz,
        value_size as u64,
        index_width as u64,
        pointer_width as u64,
    )?;
    Ok(canonical_sections(&sizes)?.1)
}

/// Reads the section table of `n` entries; the caller has checked that it fits.
pub(crate) fn read_table(bytes: &[u8], n: usize) -> [Section; 3] {
    let mut sections = [Section::default(); 3];
    for (i, s) in sections.iter_mut().enumerate().take(n) {
        let at = HEADER_LEN + SECTION_ENTRY_LEN * i;
        *s = Section {
            offset: read_u64(bytes, at),
            nbytes: read_u64(bytes, at + 8),
        };
    }
    sections
}

/// Writes the section table of `sections` after the header.
pub(crate) fn write_table(out: &mut [u8], sections: &[Section]) {
    for (i, s) in sections.iter().enumerate() {
        let at = HEADER_LEN + SECTION_ENTRY_LEN * i;
        out[at..at + 8].copy_from_slice(&s.offset.to_le_bytes());
        out[at + 8..at + 16].copy_from_slice(&s.nbytes.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip() {
        let h = Header {
            format: Format::Csc,
            index_width: 4,
            pointer_width: 8,
            nnz: 123_456_789_000,
            ndim: 2,
            n_sections: 3,
            value_size: 16,
        };
        assert_eq!(Header::parse(&h.to_bytes()), Ok(h));
    }

    #[test]
    fn bound_examples() {
        // CSR 20x25 float32, uint32 indices and pointers: 80 + align8(84) + 2000 + 2000.
        assert_eq!(
            encoded_size_bound(Format::Csr, &[20, 25], 4, 4, 4),
            Ok(80 + 88 + 2000 + 2000)
        );
        assert_eq!(
            encoded_size_bound(Format::Csc, &[3, 5], 1, 2, 8),
            Ok(80 + 48 + 32 + 16)
        );
        assert!(encoded_size_bound(Format::Csr, &[2, 2, 2], 4, 4, 4).is_err());
        assert!(encoded_size_bound(Format::Coo, &[], 4, 4, 0).is_err());
        assert!(encoded_size_bound(Format::Coo, &[u64::MAX, 2], 4, 4, 0).is_err());
        assert_eq!(encoded_len(Format::Coo, &[4], 0, 4, 2, 0), Ok(64));
    }
}
