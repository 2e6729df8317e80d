//! Every cast between bytes and typed values of this crate, and every `unsafe` block of it.
//!
//! A decoded chunk's sections are typed slices cast in place from the chunk's bytes (which the
//! codec chain holds 8-byte aligned): [`slice`] casts a section and [`bytes_of`] gives a value's
//! bytes to an encoder. Both are `bytemuck`'s checked casts (size and alignment), so they need
//! no `unsafe`; they live here so that the crate has one place where bytes become types.
//!
//! The one `unsafe` block is the `sprs` view of a CSR or CSC chunk:
//! `CsMatViewI::new_unchecked` skips `sprs`'s structure check, which decoding has done once
//! already. The proof stays in this module: [`CheckedCompressed::check`] validates the
//! pointers and indices (everything `sprs`'s `check_compressed_structure` checks) and records
//! where they lie and what they hold, and [`CheckedCompressed::sprs_view`] builds a view only
//! from those very slices (same addresses, lengths and types). Other slices (a cloned
//! storage, or a `B: AsRef<[u8]>` that does not return the same slice every time) are checked
//! again before a view is made, and refused when they fail: never an unchecked view of bytes
//! that were not checked.
//!
//! The layout follows regex-automata's `util/wire.rs`: one module, a SAFETY paragraph per
//! block. Its unit tests are small and touch no files, so Miri runs them (`scripts/miri`).

#![allow(unsafe_code)]

use bytemuck::{Pod, PodCastError};
use sprs::{CompressedStorage, CsMatViewI};

use crate::error::SparseError;
use crate::types::{Format, IndexType, PointerType, SparseIndex, SparsePointer};

/// `bytes` as a slice of `T`, in place: an error (never a panic) when `bytes` is not aligned
/// for `T` or not a whole number of `T`s.
pub(crate) fn slice<T: Pod>(bytes: &[u8]) -> Result<&[T], SparseError> {
    bytemuck::try_cast_slice(bytes).map_err(|e| match e {
        PodCastError::TargetAlignmentGreaterAndInputNotAligned => {
            let align = align_of::<T>();
            SparseError::Misaligned {
                align,
                offset: bytes.as_ptr().addr() % align,
            }
        }
        _ => SparseError::LengthMismatch {
            what: "section (not a whole number of elements)",
            expected: (bytes.len() / size_of::<T>().max(1) * size_of::<T>()) as u64,
            found: bytes.len() as u64,
        },
    })
}

/// The bytes of `value` (native endian: little-endian on every target this crate builds for).
pub(crate) fn bytes_of<T: Pod>(value: &T) -> &[u8] {
    bytemuck::bytes_of(value)
}

/// Where a checked slice lies: its address and its length in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    addr: usize,
    len: usize,
}

impl Span {
    fn of<T>(s: &[T]) -> Self {
        Span {
            addr: s.as_ptr().addr(),
            len: size_of_val(s),
        }
    }
}

/// The pointers and indices of a CSR or CSC chunk whose structure has been checked, recorded
/// by address, length and type, so that [`CheckedCompressed::sprs_view`] can build an
/// unchecked `sprs` view of exactly these slices.
///
/// Only [`CheckedCompressed::check`] makes one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CheckedCompressed {
    storage: CompressedStorage,
    /// (rows, columns) of the chunk.
    shape: (usize, usize),
    index: IndexType,
    pointer: PointerType,
    pointers: Span,
    indices: Span,
}

impl CheckedCompressed {
    /// Checks the pointers and indices of a `format` (CSR or CSC) chunk of `shape`:
    /// `outer + 1` pointers with `p[0] = 0`, non-decreasing, `p[outer] = indices.len()`, and in
    /// each outer slice minor indices strictly increasing and below the minor extent. `outer`
    /// is the row count for CSR, the column count for CSC.
    ///
    /// # Errors
    /// The first violation found, naming the entry or pointer; a COO `format`.
    pub(crate) fn check<I: SparseIndex, P: SparsePointer>(
        format: Format,
        shape: (usize, usize),
        pointers: &[P],
        indices: &[I],
    ) -> Result<Self, SparseError> {
        let (storage, outer, inner, inner_axis) = match format {
            Format::Csr => (CompressedStorage::CSR, shape.0, shape.1, 1),
            Format::Csc => (CompressedStorage::CSC, shape.1, shape.0, 0),
            Format::Coo => {
                return Err(SparseError::UnsupportedOperation {
                    operation: "a compressed structure check",
                    format,
                })
            }
        };
        let nnz = indices.len();
        if outer.checked_add(1) != Some(pointers.len()) {
            return Err(SparseError::LengthMismatch {
                what: "pointers section (elements)",
                expected: outer as u64 + 1,
                found: pointers.len() as u64,
            });
        }
        check_pointers(pointers, nnz)?;
        // Now 0 = p[0] <= p[i] <= p[outer] = nnz: every range below is inside `indices`.
        for w in pointers.windows(2) {
            let (start, end) = (w[0].as_u64() as usize, w[1].as_u64() as usize);
            let line = &indices[start..end];
            // strictly ascending and its last index inside: every index inside. Folded
            // without an early exit (which the compiler can vectorise); the first bad entry
            // is looked for only once the line is known to have one.
            let ascending = line
                .windows(2)
                .fold(true, |ok, p| ok & (p[0].as_u64() < p[1].as_u64()));
            let inside = line.last().is_none_or(|i| i.as_u64() < inner as u64);
            if !(ascending && inside) {
                check_line(line, start, inner, inner_axis)?;
            }
        }
        Ok(CheckedCompressed {
            storage,
            shape,
            index: I::TYPE,
            pointer: P::TYPE,
            pointers: Span::of(pointers),
            indices: Span::of(indices),
        })
    }

    /// The checked chunk as a `sprs` matrix view (CSR storage for CSR, CSC for CSC) over
    /// `pointers`, `indices` and `values`, without a second structure check.
    ///
    /// Slices other than the checked ones (another address, length or type: a clone of the
    /// chunk's storage, say) are checked first, as `sprs` would.
    ///
    /// # Errors
    /// [`SparseError::StorageChanged`] when `pointers` or `indices` are not the slices that
    /// were checked and fail the check; [`SparseError::LengthMismatch`] when
    /// `values` does not hold one value per index; [`SparseError::Unrepresentable`] when the
    /// minor extent does not fit `I` or the major extent + 1 does not fit `P` (as `sprs`
    /// requires; in practice only a `uint16` index type with a minor extent of 65536).
    pub(crate) fn sprs_view<'a, T, I: SparseIndex, P: SparsePointer>(
        &self,
        pointers: &'a [P],
        indices: &'a [I],
        values: &'a [T],
    ) -> Result<CsMatViewI<'a, T, I, P>, SparseError> {
        if I::TYPE != self.index
            || P::TYPE != self.pointer
            || Span::of(pointers) != self.pointers
            || Span::of(indices) != self.indices
        {
            // Not the checked slices (a clone of the chunk's storage, or a storage that hands
            // out other bytes): check these ones, as `sprs` would.
            let format = match self.storage {
                CompressedStorage::CSR => Format::Csr,
                CompressedStorage::CSC => Format::Csc,
            };
            let recheck = Self::check(format, self.shape, pointers, indices)
                .map_err(|_| SparseError::StorageChanged)?;
            return recheck.sprs_view(pointers, indices, values);
        }
        if values.len() != indices.len() {
            return Err(SparseError::LengthMismatch {
                what: "values section (elements)",
                expected: indices.len() as u64,
                found: values.len() as u64,
            });
        }
        let (outer, inner) = match self.storage {
            CompressedStorage::CSR => (self.shape.0, self.shape.1),
            CompressedStorage::CSC => (self.shape.1, self.shape.0),
        };
        if I::try_from_usize(inner).is_none() {
            return Err(SparseError::Unrepresentable {
                what: "minor extent",
                value: inner as u64,
            });
        }
        if outer.checked_add(1).and_then(P::try_from_usize).is_none() {
            return Err(SparseError::Unrepresentable {
                what: "major extent + 1",
                value: outer as u64,
            });
        }
        // SAFETY: `new_unchecked` requires what `sprs`'s `check_compressed_structure` checks,
        // and all of it holds. `pointers` and `indices` are the slices `check` validated: the
        // same addresses and byte lengths, and `I`, `P` the same types (`SparseIndex` and
        // `SparsePointer` are sealed, one `TYPE` per Rust type), so the same elements. Their
        // bytes are those `check` read: the chunk that holds this record owns or borrows its
        // storage immutably and never hands it out mutably, and safe code cannot rewrite or
        // free memory it has handed out as `&[u8]` while the owner is only shared (a storage
        // that returns *other* memory is caught by the address check). The view borrows the
        // slices for `'a`, so they stay as they are while it lives. What `check` established:
        // `pointers` has outer + 1 elements with p[0] = 0, non-decreasing, p[outer] = nnz =
        // `indices.len()` (below `usize::MAX / 2`, as `indices` is a slice of elements of at
        // least 2 bytes); every index is below the minor extent (so it converts to usize) and
        // indices are strictly increasing within each outer slice. `values` has one element
        // per index, the minor extent fits `I` and outer + 1 fits `P` (all checked just above).
        let view = unsafe {
            CsMatViewI::new_unchecked(self.storage, self.shape, pointers, indices, values)
        };
        debug_assert!(view.check_compressed_structure().is_ok());
        Ok(view)
    }
}

/// `p[0] = 0`, non-decreasing, `p[last] = nnz` (`pointers` is not empty).
fn check_pointers<P: SparsePointer>(pointers: &[P], nnz: usize) -> Result<(), SparseError> {
    let (Some(first), Some(last)) = (pointers.first(), pointers.last()) else {
        return Err(SparseError::LengthMismatch {
            what: "pointers section",
            expected: 1,
            found: 0,
        });
    };
    if first.as_u64() != 0 {
        return Err(SparseError::PointerBoundary {
            position: 0,
            expected: 0,
            found: first.as_u64(),
        });
    }
    if last.as_u64() != nnz as u64 {
        return Err(SparseError::PointerBoundary {
            position: pointers.len() as u64 - 1,
            expected: nnz as u64,
            found: last.as_u64(),
        });
    }
    for (position, w) in pointers.windows(2).enumerate() {
        if w[1].as_u64() < w[0].as_u64() {
            return Err(SparseError::PointerDecreasing {
                position: position as u64 + 1,
                previous: w[0].as_u64(),
                found: w[1].as_u64(),
            });
        }
    }
    Ok(())
}

/// Checks a compressed line that starts at entry `start`, entry by entry: the first index
/// outside `0..inner`, or not above the previous, is the error.
fn check_line<I: SparseIndex>(
    line: &[I],
    start: usize,
    inner: usize,
    inner_axis: usize,
) -> Result<(), SparseError> {
    let mut previous: Option<u64> = None;
    for (k, i) in line.iter().enumerate() {
        let (index, entry) = (i.as_u64(), (start + k) as u64);
        if index >= inner as u64 {
            return Err(SparseError::IndexOutOfRange {
                entry,
                axis: inner_axis,
                index,
                extent: inner as u64,
            });
        }
        if previous.is_some_and(|p| index <= p) {
            return Err(SparseError::Unsorted { entry });
        }
        previous = Some(index);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `[u64]` words as bytes: an 8-byte-aligned byte slice without unsafe code.
    fn word_bytes(words: &[u64]) -> &[u8] {
        bytemuck::cast_slice(words)
    }

    #[test]
    fn slices_cast_in_place_or_fail_cleanly() {
        let words = [0x0004_0003_0002_0001u64, 0x0008_0007_0006_0005];
        let bytes = word_bytes(&words);
        let u16s = slice::<u16>(bytes).unwrap();
        assert_eq!(u16s, &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(u16s.as_ptr().cast::<u8>(), bytes.as_ptr(), "no copy");
        assert_eq!(slice::<u64>(bytes).unwrap(), &words);
        assert_eq!(slice::<u8>(&bytes[1..]).unwrap().len(), 15);
        assert_eq!(
            slice::<u32>(&bytes[2..10]),
            Err(SparseError::Misaligned {
                align: 4,
                offset: 2
            })
        );
        assert!(matches!(
            slice::<u32>(&bytes[..6]),
            Err(SparseError::LengthMismatch {
                expected: 4,
                found: 6,
                ..
            })
        ));
        assert_eq!(slice::<u64>(&bytes[..0]).unwrap(), &[] as &[u64]);
        assert_eq!(bytes_of(&0x0102_0304u32), &[4, 3, 2, 1]);
        assert_eq!(bytes_of(&-1.0f64), &(-1.0f64).to_le_bytes());
    }

    /// A 3 x 4 CSR matrix: row 0 holds column 1, row 1 nothing, row 2 columns 0, 2, 3.
    /// (Statics, not consts: a const has no one address, and these tests compare addresses.
    /// The indices are 8-byte aligned so that they can be read as wider types in place.)
    static PTR: [u32; 4] = [0, 1, 1, 4];
    static IDX: &[u16] = &IDX_ALIGNED.0;
    static VAL: [f32; 4] = [1.0, 2.0, 3.0, 4.0];

    #[repr(C, align(8))]
    struct Aligned([u16; 4]);
    static IDX_ALIGNED: Aligned = Aligned([1, 0, 2, 3]);

    #[test]
    fn checked_sections_become_sprs_views_of_the_same_memory() {
        let c = CheckedCompressed::check(Format::Csr, (3, 4), &PTR, IDX).unwrap();
        let m = c.sprs_view(&PTR, IDX, &VAL).unwrap();
        assert!(m.is_csr());
        assert_eq!((m.rows(), m.cols(), m.nnz()), (3, 4, 4));
        assert_eq!(m.get(0, 1), Some(&1.0));
        assert_eq!(m.get(1, 1), None);
        assert_eq!(m.get(2, 3), Some(&4.0));
        assert_eq!(m.data().as_ptr(), VAL.as_ptr());
        assert_eq!(m.indices().as_ptr(), IDX.as_ptr());
        assert!(m.check_compressed_structure().is_ok());
        // read as CSC: 3 rows x 4 columns needs 5 pointers
        assert!(CheckedCompressed::check(Format::Csc, (3, 4), &PTR, IDX).is_err());
        let c = CheckedCompressed::check(Format::Csc, (4, 3), &PTR, IDX).unwrap();
        let m = c.sprs_view(&PTR, IDX, &VAL).unwrap();
        assert!(m.is_csc());
        assert_eq!(m.get(3, 2), Some(&4.0));
        assert!(CheckedCompressed::check(Format::Coo, (3, 4), &PTR, IDX).is_err());
    }

    #[test]
    fn slices_that_were_not_checked_are_checked_first() {
        let c = CheckedCompressed::check(Format::Csr, (3, 4), &PTR, IDX).unwrap();
        // equal contents elsewhere in memory are checked, then viewed
        let (ptr, idx) = (PTR.to_vec(), IDX.to_vec());
        let m = c.sprs_view(&ptr, &idx, &VAL).unwrap();
        assert_eq!(m.indices().as_ptr(), idx.as_ptr());
        assert_eq!(m.get(2, 3), Some(&4.0));
        // other contents that break the structure are refused
        assert_eq!(
            c.sprs_view(&[0u32, 1, 1, 5], IDX, &VAL).unwrap_err(),
            SparseError::StorageChanged
        );
        assert_eq!(
            c.sprs_view(&PTR, &[1u16, 0, 2, 2], &VAL).unwrap_err(),
            SparseError::StorageChanged
        );
        // a shorter slice at the same address, and the same bytes as another type
        assert_eq!(
            c.sprs_view(&PTR[..3], IDX, &VAL).unwrap_err(),
            SparseError::StorageChanged
        );
        let wide: &[u32] = bytemuck::cast_slice(IDX);
        assert_eq!(
            c.sprs_view(&PTR, wide, &VAL[..2]).unwrap_err(),
            SparseError::StorageChanged
        );
        assert!(matches!(
            c.sprs_view(&PTR, IDX, &VAL[..3]),
            Err(SparseError::LengthMismatch { .. })
        ));
    }

    #[test]
    fn every_structural_violation_is_found() {
        let check = |p: &[u32], i: &[u16]| CheckedCompressed::check(Format::Csr, (3, 4), p, i);
        assert!(matches!(
            check(&[1, 1, 1, 4], IDX),
            Err(SparseError::PointerBoundary { position: 0, .. })
        ));
        assert!(matches!(
            check(&[0, 1, 1, 3], IDX),
            Err(SparseError::PointerBoundary { position: 3, .. })
        ));
        assert!(matches!(
            check(&[0, 2, 1, 4], IDX),
            Err(SparseError::PointerDecreasing { position: 2, .. })
        ));
        assert!(matches!(
            check(&[0, 1, 4], IDX),
            Err(SparseError::LengthMismatch { .. })
        ));
        assert!(matches!(
            check(&PTR, &[1, 0, 4, 3]),
            Err(SparseError::IndexOutOfRange {
                entry: 2,
                axis: 1,
                index: 4,
                extent: 4
            })
        ));
        assert!(matches!(
            check(&PTR, &[1, 2, 2, 3]),
            Err(SparseError::Unsorted { entry: 2 })
        ));
        assert!(matches!(
            check(&PTR, &[1, 3, 2, 0]),
            Err(SparseError::Unsorted { entry: 2 })
        ));
        // an empty matrix
        let (ptr, idx, val): ([u32; 1], [u16; 0], [f32; 0]) = ([0], [], []);
        let c = CheckedCompressed::check(Format::Csr, (0, 5), &ptr, &idx).unwrap();
        assert_eq!(c.sprs_view(&ptr, &idx, &val).unwrap().nnz(), 0);
    }

    #[test]
    fn extents_sprs_cannot_index_are_refused() {
        // a row of 65536 columns: every index fits u16, the extent does not
        let (ptr, idx) = ([0u32, 1], [65535u16]);
        let c = CheckedCompressed::check(Format::Csr, (1, 65536), &ptr, &idx).unwrap();
        assert!(matches!(
            c.sprs_view(&ptr, &idx, &[1u8]),
            Err(SparseError::Unrepresentable {
                what: "minor extent",
                ..
            })
        ));
    }
}
