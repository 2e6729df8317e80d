//! One stored sparse chunk, decoded by the codec chain but not densified, and its views.

use std::fmt;
use std::ops::Range;

use ndarray::ArrayView2;
use zarr_codecs::sparse_layout::SparseLayoutCodec;
use zarr_codecs::{AlignedBuffer, CodecError};
use zarr_grid::geometry::Region;
use zarr_layout_sparse::sprs::{CsMatViewI, SpIndex};
use zarr_layout_sparse::{with_index, with_pointer};
use zarr_layout_sparse::{
    CooView, Format, Layout, SparseChunk, SparseError, SparseIndex, SparsePointer, SparseValue,
};

use super::Place;

/// One stored sparse chunk, decoded by the codec chain but not densified.
///
/// It owns the 8-byte-aligned buffer the chain decoded (the output of the innermost
/// compressor: no copy is made after it) and hands out views of it: the values, the COO
/// coordinates as an `(ndim, nnz)` `ndarray` view, or a `sprs` matrix view for CSR/CSC. Every
/// view borrows [`StoredSparseChunk::buffer`]; the chunk was validated once, when it was
/// decoded.
///
/// Coordinates in views are chunk-local (zero-based in the chunk's buffer). The array position
/// of local position `x` is `origin() + x`; only local positions inside
/// [`StoredSparseChunk::valid_region`] lie inside the array (entries elsewhere, in edge chunks
/// or the partly filled first chunk of `regular_bounded`, are to be ignored).
pub struct StoredSparseChunk {
    /// The validated chunk, owning the buffer its views point into.
    view: SparseChunk<AlignedBuffer>,
    pub(super) place: Place,
    lower: Vec<i64>,
}

impl fmt::Debug for StoredSparseChunk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoredSparseChunk")
            .field("chunk", &self.place.chunk)
            .field("inner", &self.place.inner)
            .field("layout", self.view.layout())
            .field("shape", &self.view.shape())
            .field("nnz", &self.view.nnz())
            .field("origin", &self.place.origin)
            .field("valid", &self.place.valid)
            .finish_non_exhaustive()
    }
}

impl StoredSparseChunk {
    /// Validates the encoded chunk in `buffer` and keeps it.
    pub(super) fn new(
        buffer: AlignedBuffer,
        codec: &SparseLayoutCodec,
        place: Place,
        lower: Vec<i64>,
    ) -> std::result::Result<Self, CodecError> {
        Ok(StoredSparseChunk {
            view: codec.decode_sparse(buffer)?,
            place,
            lower,
        })
    }

    /// The decoded chunk: layout, shape, nnz, and every view ([`SparseChunk`]), borrowing
    /// [`StoredSparseChunk::buffer`].
    pub fn sparse(&self) -> &SparseChunk<AlignedBuffer> {
        &self.view
    }

    /// The buffer the codec chain decoded, which every view points into.
    pub fn buffer(&self) -> &AlignedBuffer {
        self.view.storage()
    }

    /// The grid index of the stored chunk (for a sharded array, of the shard).
    pub fn chunk_index(&self) -> &[i64] {
        &self.place.chunk
    }

    /// For a sharded array, the index of the inner chunk in its shard's grid of sparse
    /// chunks (for nested shards, in the outermost shard's grid of innermost chunks); `None`
    /// otherwise.
    pub fn inner_index(&self) -> Option<&[u64]> {
        self.place.inner.as_deref()
    }

    /// The layout (format, index and pointer types).
    pub fn layout(&self) -> &Layout {
        self.view.layout()
    }

    /// The format.
    pub fn format(&self) -> Format {
        self.view.format()
    }

    /// The chunk shape (the inner chunk shape for a sharded array).
    pub fn shape(&self) -> &[u64] {
        self.view.shape()
    }

    /// The number of stored entries (those outside the array included).
    pub fn nnz(&self) -> usize {
        self.view.nnz()
    }

    /// The array position of the chunk's local position zero (negative on an axis where the
    /// chunk starts before the array: the partly filled first chunk of `regular_bounded`).
    pub fn origin(&self) -> &[i64] {
        &self.place.origin
    }

    /// The domain coordinate of the chunk's local position zero (`origin() + lower bound`).
    pub fn domain_origin(&self) -> Vec<i64> {
        self.place
            .origin
            .iter()
            .zip(&self.lower)
            .map(|(o, l)| o + l)
            .collect()
    }

    /// The local positions that lie inside the array.
    pub fn valid_region(&self) -> &Region {
        &self.place.valid
    }

    /// Whether every local position lies inside the array.
    pub fn is_whole(&self) -> bool {
        self.place.valid.start.iter().all(|&s| s == 0) && self.place.valid.shape == self.shape()
    }

    /// The values, in storage order (a view of the buffer).
    ///
    /// # Errors
    /// A `T` of another size than the array's data type.
    pub fn values<T: SparseValue>(&self) -> Result<&[T], SparseError> {
        self.view.values()
    }

    /// The COO coordinates as an `(ndim, nnz)` view of the buffer (COO chunks only).
    ///
    /// # Errors
    /// Another format, or an `I` other than the index type.
    pub fn coo_indices<I: SparseIndex>(&self) -> Result<ArrayView2<'_, I>, SparseError> {
        self.view.coo_indices()
    }

    /// Coordinates and values of a COO chunk, both views of the buffer.
    ///
    /// # Errors
    /// As [`StoredSparseChunk::coo_indices`] and [`StoredSparseChunk::values`].
    pub fn coo<T: SparseValue, I: SparseIndex>(&self) -> Result<CooView<'_, T, I>, SparseError> {
        self.view.coo()
    }

    /// A CSR or CSC chunk as a `sprs` matrix view of the buffer (CSR storage for CSR, CSC
    /// storage for CSC), with the stored index and pointer types.
    ///
    /// # Errors
    /// A COO chunk, or `T`, `I`, `P` other than the stored types.
    pub fn sprs_view<T: SparseValue, I: SparseIndex, P: SparsePointer>(
        &self,
    ) -> Result<CsMatViewI<'_, T, I, P>, SparseError> {
        self.view.sprs_view()
    }

    /// Calls `f(array position, value)` for every stored entry that lies inside the array, in
    /// storage order.
    ///
    /// # Errors
    /// A `T` of another size than the array's data type.
    pub fn for_each_in_array<T: SparseValue>(
        &self,
        mut f: impl FnMut(&[u64], T),
    ) -> Result<(), SparseError> {
        let whole = self.is_whole();
        let mut pos = vec![0u64; self.shape().len()];
        for (local, &v) in self.view.entries::<T>()? {
            if !whole && !self.place.valid.contains(&local) {
                continue;
            }
            for ((p, &l), &o) in pos.iter_mut().zip(local.iter()).zip(&self.place.origin) {
                // inside the array, so origin + local >= 0
                *p = (o + l as i64) as u64;
            }
            f(&pos, v);
        }
        Ok(())
    }

    /// The number of stored entries that lie inside the array.
    pub fn nnz_in_array(&self) -> usize {
        if self.is_whole() {
            return self.nnz();
        }
        self.view
            .byte_entries()
            .filter(|(local, _)| self.place.valid.contains(local))
            .count()
    }

    /// Calls `f(local row, local column, value)` for every entry of a 2-d chunk inside the
    /// array, reading the sections with their stored types (no per-entry decoding); the
    /// values are taken from `values` (the chunk's values in storage order, of any type: the
    /// stored ones, or those converted to another type).
    pub(super) fn for_each_2d_of<T: Copy>(
        &self,
        values: &[T],
        f: impl FnMut(u64, u64, T),
    ) -> Result<(), SparseError> {
        let valid = &self.place.valid;
        self.for_each_2d_with(
            values,
            valid.start[0]..valid.start[0] + valid.shape[0],
            valid.start[1]..valid.start[1] + valid.shape[1],
            f,
        )
    }

    /// Calls `f(local row, local column, value)` for every entry of a 2-d chunk in the local
    /// rows `rows` and columns `cols`. For each row the columns come in ascending order (the
    /// rows themselves are visited in row order for COO and CSR, column by column for CSC).
    /// CSR rows and CSC columns are cut to the range by binary search, as their indices are
    /// sorted (checked when the chunk was decoded).
    pub(super) fn for_each_2d_in<T: SparseValue>(
        &self,
        rows: Range<u64>,
        cols: Range<u64>,
        f: impl FnMut(u64, u64, T),
    ) -> Result<(), SparseError> {
        self.for_each_2d_with(self.view.values::<T>()?, rows, cols, f)
    }

    /// [`StoredSparseChunk::for_each_2d_in`] with the values taken from `values` (one per
    /// stored entry, in storage order).
    fn for_each_2d_with<T: Copy>(
        &self,
        values: &[T],
        rows: Range<u64>,
        cols: Range<u64>,
        mut f: impl FnMut(u64, u64, T),
    ) -> Result<(), SparseError> {
        let view = &self.view;
        debug_assert_eq!(values.len(), view.nnz());
        let layout = *view.layout();
        match (layout.format(), layout.pointer_type()) {
            (Format::Coo, _) => with_index!(layout.index_type(), I => {
                let idx = view.indices::<I>()?;
                let (rs, cs) = idx.split_at(view.nnz());
                for ((r, c), &v) in rs.iter().zip(cs).zip(values) {
                    let (r, c) = (SparseIndex::as_u64(*r), SparseIndex::as_u64(*c));
                    if rows.contains(&r) && cols.contains(&c) {
                        f(r, c, v);
                    }
                }
            }),
            (format, Some(pt)) => with_index!(layout.index_type(), I => with_pointer!(pt, P => {
                let ptr = view.pointers::<P>()?;
                let idx = view.indices::<I>()?;
                let csr = format == Format::Csr;
                let (outer, inner) = if csr { (rows, cols) } else { (cols, rows) };
                for (o, at, line) in cut_lines(ptr, idx, outer, inner) {
                    for (i, &v) in line.iter().zip(&values[at..at + line.len()]) {
                        let i = SparseIndex::as_u64(*i);
                        if csr { f(o, i, v) } else { f(i, o, v) }
                    }
                }
            })),
            (format, None) => return Err(SparseError::MissingPointerType { format }),
        }
        Ok(())
    }

    /// Calls `f(local row, n)` for the local rows `rows`, `n` being the number of the row's
    /// entries in the local columns `cols` (a row may be reported more than once for COO and
    /// CSC, whose entries are counted one by one; CSR rows are cut by binary search without
    /// visiting their entries).
    pub(super) fn row_lengths_in<T: SparseValue>(
        &self,
        rows: Range<u64>,
        cols: Range<u64>,
        mut f: impl FnMut(u64, usize),
    ) -> Result<(), SparseError> {
        let view = &self.view;
        let layout = *view.layout();
        if let (Format::Csr, Some(pt)) = (layout.format(), layout.pointer_type()) {
            with_index!(layout.index_type(), I => with_pointer!(pt, P => {
                let (ptr, idx) = (view.pointers::<P>()?, view.indices::<I>()?);
                for (o, _, line) in cut_lines(ptr, idx, rows, cols) {
                    f(o, line.len());
                }
            }));
            return Ok(());
        }
        self.for_each_2d_in::<T>(rows, cols, |r, _, _| f(r, 1))
    }

    /// Copies the entries in the local rows `rows` and columns `cols` into the column indices
    /// and values of a CSR matrix: those of local row `r` go from `next[r - rows.start]` on
    /// (which moves past them), their columns shifted by `col0`. CSR rows are copied as
    /// slices, COO and CSC entries one by one; for each row the columns come in ascending order.
    /// The caller checks that every shifted column fits in `J`.
    pub(super) fn copy_rows_in<T: SparseValue, J: SpIndex>(
        &self,
        rows: Range<u64>,
        cols: Range<u64>,
        col0: i64,
        next: &mut [usize],
        indices: &mut [J],
        values: &mut [T],
    ) -> Result<(), SparseError> {
        let view = &self.view;
        let layout = *view.layout();
        let r0 = rows.start;
        if let (Format::Csr, Some(pt)) = (layout.format(), layout.pointer_type()) {
            let stored = view.values::<T>()?;
            with_index!(layout.index_type(), I => with_pointer!(pt, P => {
                let (ptr, idx) = (view.pointers::<P>()?, view.indices::<I>()?);
                for (o, at, line) in cut_lines(ptr, idx, rows, cols) {
                    let k = &mut next[(o - r0) as usize];
                    let n = line.len();
                    values[*k..*k + n].copy_from_slice(&stored[at..at + n]);
                    for (out, i) in indices[*k..*k + n].iter_mut().zip(line) {
                        *out = J::from_usize_unchecked((col0 + SparseIndex::as_u64(*i) as i64) as usize);
                    }
                    *k += n;
                }
            }));
            return Ok(());
        }
        self.for_each_2d_in::<T>(rows, cols, |r, c, v| {
            let k = &mut next[(r - r0) as usize];
            indices[*k] = J::from_usize_unchecked((col0 + c as i64) as usize);
            values[*k] = v;
            *k += 1;
        })
    }
}

/// The entries of each outer line `o` of `outer` (CSR rows, CSC columns) whose inner index
/// lies in `inner`, as `(o, position of the first, their inner indices)`: each line cut by
/// binary search, its indices being sorted (checked when the chunk was decoded).
fn cut_lines<'a, I: SparseIndex, P: SparsePointer>(
    ptr: &'a [P],
    idx: &'a [I],
    outer: Range<u64>,
    inner: Range<u64>,
) -> impl Iterator<Item = (u64, usize, &'a [I])> + 'a {
    outer.map(move |o| {
        let start = SparsePointer::as_u64(ptr[o as usize]) as usize;
        let end = SparsePointer::as_u64(ptr[o as usize + 1]) as usize;
        let line = &idx[start..end];
        // a line wholly inside `inner` (a read of whole chunk rows) needs no search
        let lo = match line.first() {
            Some(i) if SparseIndex::as_u64(*i) < inner.start => {
                line.partition_point(|i| SparseIndex::as_u64(*i) < inner.start)
            }
            _ => 0,
        };
        let hi = match line.last() {
            Some(i) if SparseIndex::as_u64(*i) >= inner.end => {
                line.partition_point(|i| SparseIndex::as_u64(*i) < inner.end)
            }
            _ => line.len(),
        };
        (o, start + lo, &line[lo..hi.max(lo)])
    })
}
