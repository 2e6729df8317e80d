//! The crate's error type.

use crate::types::{Format, IndexType, PointerType};
use crate::value::FloatKind;

/// Everything that can go wrong while building, encoding, decoding or viewing a sparse chunk.
///
/// Chunk bytes are untrusted: every violation of the format found while decoding is reported
/// through one of these variants, never by a panic.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SparseError {
    /// The chunk does not start with the magic bytes `ZSPL`.
    #[error("bad magic {found:?}: not a sparse_layout chunk (expected \"ZSPL\")")]
    BadMagic {
        /// The first four bytes of the chunk.
        found: [u8; 4],
    },

    /// The chunk's format version is not 1.
    #[error("unsupported sparse_layout chunk version {found} (this reader knows version 1)")]
    UnsupportedVersion {
        /// The version byte found.
        found: u8,
    },

    /// The format byte is not 0 (COO), 1 (CSR) or 2 (CSC).
    #[error("unknown sparse format code {found} (expected 0 = coo, 1 = csr, 2 = csc)")]
    UnknownFormat {
        /// The format byte found.
        found: u8,
    },

    /// The chunk is stored in another format than the codec configuration says.
    #[error("chunk is stored as {found} but the configuration says {expected}")]
    FormatMismatch {
        /// The format of the configuration.
        expected: Format,
        /// The format of the chunk.
        found: Format,
    },

    /// A width or size field of the header disagrees with the configuration.
    #[error("{field} mismatch: expected {expected}, found {found}")]
    WidthMismatch {
        /// The field: `"index width"`, `"pointer width"` or `"value size"`.
        field: &'static str,
        /// The value the configuration implies.
        expected: u64,
        /// The value found.
        found: u64,
    },

    /// A typed view was requested with another index, pointer or value type than the chunk holds.
    #[error("{what} mismatch: the chunk holds {expected}, {found} was requested")]
    TypeMismatch {
        /// What was requested: `"index type"` or `"pointer type"`.
        what: &'static str,
        /// The type the chunk holds.
        expected: &'static str,
        /// The type requested.
        found: &'static str,
    },

    /// The number of dimensions disagrees with the expected chunk shape.
    #[error("rank mismatch: expected {expected} dimensions, found {found}")]
    RankMismatch {
        /// The rank of the expected chunk shape.
        expected: usize,
        /// The rank found.
        found: usize,
    },

    /// The format cannot hold a chunk of this rank (CSR and CSC are 2-d, COO needs rank >= 1).
    #[error("format {format} cannot hold a {ndim}-d chunk (coo needs at least 1 dimension, csr and csc exactly 2)")]
    UnsupportedRank {
        /// The format.
        format: Format,
        /// The rank asked for.
        ndim: usize,
    },

    /// The number of sections is not the one the format has.
    #[error("expected {expected} sections, found {found}")]
    SectionCount {
        /// Sections of the format (2 for COO, 3 for CSR/CSC).
        expected: u16,
        /// Sections in the header.
        found: u16,
    },

    /// The reserved header bytes (24..32) are not zero.
    #[error("reserved header bytes are not zero")]
    ReservedNotZero,

    /// The buffer ends before the header or the section table does.
    #[error("truncated {what}: needs {needed} bytes, the buffer has {len}")]
    Truncated {
        /// What is cut short: `"header"` or `"section table"`.
        what: &'static str,
        /// Bytes needed.
        needed: u64,
        /// Bytes present.
        len: u64,
    },

    /// The buffer (or a section of it) is not aligned for an in-place cast.
    #[error("buffer is not {align}-byte aligned (address % {align} = {offset}); copy it into an AlignedBuffer first")]
    Misaligned {
        /// The alignment needed.
        align: usize,
        /// The buffer's address modulo `align`.
        offset: usize,
    },

    /// A section does not start at a multiple of 8.
    #[error("section {section} starts at offset {offset}, not a multiple of 8")]
    SectionMisaligned {
        /// The section's binsparse name.
        section: &'static str,
        /// Its offset.
        offset: u64,
    },

    /// A section does not lie inside the buffer.
    #[error("section {section} (offset {offset}, {len} bytes) does not fit in the {buffer_len}-byte buffer")]
    SectionOutOfBounds {
        /// The section's binsparse name.
        section: &'static str,
        /// Its offset.
        offset: u64,
        /// Its length in bytes.
        len: u64,
        /// The buffer's length.
        buffer_len: u64,
    },

    /// A section overlaps the header, the section table or the section before it.
    #[error("section {section} at offset {offset} overlaps the bytes before it (which end at {previous_end})")]
    SectionOverlap {
        /// The section's binsparse name.
        section: &'static str,
        /// Its offset.
        offset: u64,
        /// Where the previous section (or the section table) ends.
        previous_end: u64,
    },

    /// A section's length disagrees with the number of stored entries.
    #[error("section {section} holds {found} bytes, expected {expected} for nnz = {nnz}")]
    SectionSize {
        /// The section's binsparse name.
        section: &'static str,
        /// Bytes implied by nnz and the shape.
        expected: u64,
        /// Bytes in the section table.
        found: u64,
        /// The header's nnz.
        nnz: u64,
    },

    /// The chunk claims more entries than it has elements.
    #[error("nnz {nnz} exceeds the chunk's element count {elements}")]
    TooManyEntries {
        /// The header's nnz.
        nnz: u64,
        /// The chunk's element count.
        elements: u64,
    },

    /// A size computation overflows.
    #[error("the size of {what} overflows")]
    SizeOverflow {
        /// What was being computed.
        what: &'static str,
    },

    /// The first pointer is not 0 or the last pointer is not nnz.
    #[error("pointer {position} is {found}, expected {expected}")]
    PointerBoundary {
        /// The position in the pointer section.
        position: u64,
        /// The value required there.
        expected: u64,
        /// The value found.
        found: u64,
    },

    /// The pointers decrease.
    #[error("pointers decrease at position {position} ({previous} then {found})")]
    PointerDecreasing {
        /// The position of the smaller pointer.
        position: u64,
        /// The pointer before it.
        previous: u64,
        /// The pointer found.
        found: u64,
    },

    /// Entries are not strictly increasing in the canonical order (or repeat a position).
    #[error("entry {entry} is out of canonical order (entries must be strictly increasing, without duplicates)")]
    Unsorted {
        /// The first entry found out of order.
        entry: u64,
    },

    /// A coordinate is not smaller than the chunk's extent on its axis.
    #[error("entry {entry}: index {index} on axis {axis} is out of range for extent {extent}")]
    IndexOutOfRange {
        /// The entry.
        entry: u64,
        /// The axis.
        axis: usize,
        /// The index found.
        index: u64,
        /// The extent of the chunk on that axis.
        extent: u64,
    },

    /// Two input entries have the same coordinates and duplicates were not to be summed.
    #[error("duplicate entry at coordinates {coords:?} (sum duplicates or remove them)")]
    Duplicate {
        /// The repeated coordinates.
        coords: Vec<u64>,
    },

    /// The index type cannot hold the largest index of an axis.
    #[error("index type {index_type} cannot hold index {max} on axis {axis}; choose a wider index_data_type")]
    IndexTypeTooSmall {
        /// The configured index type.
        index_type: IndexType,
        /// The axis.
        axis: usize,
        /// The largest index of that axis.
        max: u64,
    },

    /// The pointer type cannot hold the chunk's element count.
    #[error("pointer type {pointer_type} cannot hold the chunk's element count {elements}; choose uint64")]
    PointerTypeTooSmall {
        /// The configured pointer type.
        pointer_type: PointerType,
        /// The chunk's element count.
        elements: u64,
    },

    /// CSR and CSC need a pointer type.
    #[error("format {format} needs a pointer_data_type")]
    MissingPointerType {
        /// The format.
        format: Format,
    },

    /// COO takes no pointer type.
    #[error("format coo takes no pointer_data_type")]
    UnexpectedPointerType,

    /// A caller's buffer has the wrong length.
    #[error("{what} has length {found}, expected {expected}")]
    LengthMismatch {
        /// The buffer.
        what: &'static str,
        /// The length required.
        expected: u64,
        /// The length given.
        found: u64,
    },

    /// An element size that is zero or does not match its float kind.
    #[error("invalid element kind: size {size} with float kind {float:?}")]
    InvalidElementKind {
        /// The element size in bytes.
        size: usize,
        /// The float kind.
        float: FloatKind,
    },

    /// The operation does not exist for the chunk's format.
    #[error("{operation} is not available for format {format}")]
    UnsupportedOperation {
        /// The operation asked for.
        operation: &'static str,
        /// The chunk's format.
        format: Format,
    },

    /// A chunk's storage returned other bytes than the ones validated when it was decoded:
    /// its `AsRef<[u8]>` must return the same slice every time (every byte container and
    /// borrowed slice does; an inline byte array moves with the chunk, so it does not).
    #[error(
        "the chunk's storage returned other bytes than the ones it was decoded from (its \
         AsRef<[u8]> must return the same slice every time)"
    )]
    StorageChanged,

    /// A dimension cannot be represented by the index types of a `sprs` view.
    #[error("{what} {value} cannot be represented by the requested sprs index type")]
    Unrepresentable {
        /// What does not fit.
        what: &'static str,
        /// Its value.
        value: u64,
    },
}
