//! Sparse chunks: arrays whose chunks are stored with the `sparse_layout` codec (directly, or as
//! the inner codec of `sharding_indexed`), read, written and computed on in their sparse form.
//!
//! Dense reads and writes of such arrays work as for any array (the codec densifies and
//! sparsifies). On top of that:
//!
//! - [`Array::sparse_chunks`]: every stored chunk (for a sharded array, every stored inner
//!   chunk) as a [`StoredSparseChunk`], which owns the buffer the codec chain decoded (after
//!   `zstd`, `crc32c`, ...; not densified) and hands out zero-copy views of it: COO coordinates
//!   as an `ndarray::ArrayView2` plus a values slice, or a `sprs::CsMatViewI` for CSR/CSC.
//! - [`Array::read_sparse`]: the entries of a region as a global COO ([`SparseCoo`]) in array
//!   positions (or domain coordinates for `regular_bounded`); for 2-d, [`Array::read_csr`]
//!   builds a `sprs::CsMat` straight from the decoded chunks.
//! - [`Array::write_sparse_coo`] and [`Array::write_sprs`]: writes from coordinates and values
//!   or a `sprs` matrix that never build the dense array: entries are grouped by chunk, merged
//!   with the chunk's stored entries, and encoded from triples; chunks left empty are deleted.
//! - [`Array::map_reduce_sparse_chunks`]: chunk-parallel map/reduce over the sparse chunks
//!   (rayon), with [`Array::nnz`], [`Array::sum`] and the sparse matrix-vector product
//!   [`Array::spmv`] built on it.
//!
//! Entries that a chunk holds outside the array (edge chunks, the partly filled first chunk of
//! `regular_bounded`) are ignored by every read and dropped when the chunk is rewritten.
//!
//! ```
//! use std::sync::Arc;
//! use zarr_array::{ArrayBuilder, DataType};
//! use zarr_array::zarr_grid::geometry::Region;
//! use zarr_array::zarr_layout_sparse::Format;
//! use zarr_store::MemoryStore;
//!
//! let store = Arc::new(MemoryStore::new());
//! let a = ArrayBuilder::new(vec![6, 8], DataType::Float64)
//!     .chunk_shape(vec![4, 4])
//!     .sparse(Format::Csr) // narrowest index and pointer types, zstd after it
//!     .create(store, "m")?;
//! // (row, column) of three entries, as a (2, nnz) block, and their values
//! let coords = ndarray::arr2(&[[0u64, 2, 5], [1, 6, 3]]);
//! a.write_sparse_coo(coords.view(), &[1.0, 2.0, 3.0])?;
//! assert_eq!(a.nnz()?, 3);
//! assert_eq!(a.sum::<f64>()?, 6.0);
//! assert_eq!(a.spmv(&[1.0; 8])?, vec![1.0, 0.0, 2.0, 0.0, 0.0, 3.0]);
//!
//! // per chunk, views into the decoded buffers
//! for chunk in a.sparse_chunks()? {
//!     let m = chunk.sprs_view::<f64, u16, u32>()?;
//!     assert!(chunk.buffer().as_ptr_range().contains(&m.data().as_ptr().cast()));
//! }
//! // a region as COO (array positions) or CSR (the region's rows and columns)
//! let coo = a.read_sparse::<f64>(&Region::new(vec![0, 0], vec![6, 4])?)?;
//! assert_eq!(coo.coords(), ndarray::arr2(&[[0u64, 5], [1, 3]]));
//! assert_eq!(coo.to_csr()?.get(5, 3), Some(&3.0));
//! assert_eq!(a.read_csr::<f64>(&Region::whole(&[6, 8]))?.get(2, 6), Some(&2.0));
//! // dense reads see the same data
//! assert_eq!(a.read_all::<f64>()?[[2, 6]], 2.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::ops::{Deref, Range};

use ndarray::{Array2, ArrayD, ArrayView2, IxDyn};
use rayon::prelude::*;
use zarr_codecs::sparse_layout::SparseLayoutCodec;
use zarr_codecs::{AlignedBuffer, CodecChain, CodecError};
use zarr_grid::geometry::{linear_index, regular_chunks_in_region, unravel_index, Region};
use zarr_layout_sparse::sprs::{CsMat, CsMatBase, CsMatViewI, SpIndex};
use zarr_layout_sparse::{
    encode_triples, CooView, Format, Layout, SparseChunk, SparseError, SparseIndex, SparsePointer,
    SparseSum, SparseValue,
};
use zarr_layout_sparse::{with_index, with_pointer};

use crate::array::Array;
use crate::element::Element;
use crate::error::{ArrayError, Result};

/// An element type of the sparse API: an [`Element`] that is also a [`SparseValue`] (every
/// numeric type; a `bool` array is read and written densely).
pub trait SparseElement: Element + SparseValue {}

impl<T: Element + SparseValue> SparseElement for T {}

/// A numeric element for sparse computations ([`Array::sum`], [`Array::spmv`]); integer
/// arithmetic wraps around.
pub trait SparseScalar: SparseElement + SparseSum + PartialEq {
    /// Zero.
    fn zero() -> Self;
    /// The product (integers wrap around).
    fn sparse_mul(self, other: Self) -> Self;
}

macro_rules! int_scalar {
    ($($t:ty),*) => {$(
        impl SparseScalar for $t {
            fn zero() -> Self {
                0
            }
            fn sparse_mul(self, other: Self) -> Self {
                self.wrapping_mul(other)
            }
        }
    )*};
}

int_scalar!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! float_scalar {
    ($($t:ty => $zero:expr),*) => {$(
        impl SparseScalar for $t {
            fn zero() -> Self {
                $zero
            }
            fn sparse_mul(self, other: Self) -> Self {
                self * other
            }
        }
    )*};
}

float_scalar!(
    half::f16 => half::f16::ZERO,
    f32 => 0.0,
    f64 => 0.0,
    num_complex::Complex32 => num_complex::Complex32::new(0.0, 0.0),
    num_complex::Complex64 => num_complex::Complex64::new(0.0, 0.0)
);

/// How an array's stored values hold sparse chunks: the array's chain, whose leaf chunks
/// (the chunks themselves, or the inner chunks of zero or more levels of sharding) are stored
/// by a chain whose array->bytes codec is `sparse_layout`.
#[derive(Debug, Clone)]
struct Plan<'a> {
    chain: &'a CodecChain,
    leaf: &'a CodecChain,
    codec: &'a SparseLayoutCodec,
}

impl<'a> Plan<'a> {
    fn of(chain: &'a CodecChain) -> Option<Self> {
        let leaf = chain.leaf_chain();
        // array -> array codecs at any level: the leaf chain has them, or ends the descent
        // at a level whose array -> bytes codec is not sparse_layout
        if leaf.has_array_to_array() {
            return None;
        }
        let codec = leaf.array_to_bytes_as::<SparseLayoutCodec>()?;
        Some(Plan { chain, leaf, codec })
    }

    /// The region of the chunk that the leaf at leaf grid index `idx` covers.
    fn leaf_region(&self, idx: &[u64]) -> Region {
        let shape = self.leaf.repr().shape.clone();
        Region {
            start: idx.iter().zip(&shape).map(|(i, n)| i * n).collect(),
            shape,
        }
    }
}

/// Where one stored value (a chunk, or an inner chunk of a shard) lies in the array.
#[derive(Debug, Clone)]
struct Place {
    chunk: Vec<i64>,
    /// For a sharded array, the leaf's index in the chunk's grid of leaves.
    inner: Option<Vec<u64>>,
    /// Array position of the value's local position zero (negative before the array).
    origin: Vec<i64>,
    /// The local positions that lie inside the array.
    valid: Region,
}

impl Place {
    /// The place of the sub-block `ext` (in local positions) at leaf index `idx` (`None` when
    /// the chunk is the leaf); `None` when no part of it lies inside the array.
    fn sub(&self, idx: Option<Vec<u64>>, ext: &Region) -> Option<Place> {
        let valid = intersect(&self.valid, ext)?;
        Some(Place {
            chunk: self.chunk.clone(),
            inner: idx,
            origin: self
                .origin
                .iter()
                .zip(&ext.start)
                .map(|(&o, &s)| o + s as i64)
                .collect(),
            valid,
        })
    }
}

/// The part of `a` inside `ext`, relative to `ext.start`; `None` if they do not meet.
fn intersect(a: &Region, ext: &Region) -> Option<Region> {
    a.intersect(ext).map(|r| r.relative_to(&ext.start))
}

/// Above this many chunks in a region, sparse reads list the stored chunks rather than asking
/// the store for each chunk of the region.
const LIST_STORED_ABOVE: u64 = 4096;

fn sparse_err(context: impl Into<String>) -> impl FnOnce(SparseError) -> ArrayError {
    let context = context.into();
    move |source| ArrayError::Sparse { context, source }
}

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
    // Declared before `buffer`, so it is dropped first: it borrows the buffer's allocation.
    view: SparseChunk<'static>,
    buffer: AlignedBuffer,
    place: Place,
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
    /// Validates the encoded chunk in `buffer` and keeps both.
    // The widened lifetime below is the last `unsafe` of zarr-array; it goes when the sparse
    // module is rewritten (a chunk owner generic over its storage), and zarr-array then
    // forbids unsafe code.
    #[allow(unsafe_code)]
    fn new(
        buffer: AlignedBuffer,
        codec: &SparseLayoutCodec,
        place: Place,
        lower: Vec<i64>,
    ) -> std::result::Result<Self, CodecError> {
        // SAFETY: the slice covers the heap allocation of `buffer`, which this struct owns
        // from here on and never mutates, resizes or hands out mutably; moving an
        // `AlignedBuffer` moves its `Vec` header, not the allocation. `view` is dropped before
        // `buffer` (field order), and every accessor shortens the `'static` to the lifetime
        // of `&self`, so no borrow outlives the buffer.
        let bytes: &'static [u8] =
            unsafe { std::slice::from_raw_parts(buffer.as_ptr(), buffer.len()) };
        let view = codec.decode_sparse(bytes)?;
        Ok(StoredSparseChunk {
            view,
            buffer,
            place,
            lower,
        })
    }

    /// The decoded chunk: layout, shape, nnz, and every view ([`SparseChunk`]), borrowing
    /// [`StoredSparseChunk::buffer`].
    pub fn sparse(&self) -> &SparseChunk<'_> {
        &self.view
    }

    /// The buffer the codec chain decoded, which every view points into.
    pub fn buffer(&self) -> &AlignedBuffer {
        &self.buffer
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
    /// array, reading the sections with their stored types (no per-entry decoding).
    fn for_each_2d<T: SparseValue>(&self, f: impl FnMut(u64, u64, T)) -> Result<(), SparseError> {
        let valid = &self.place.valid;
        self.for_each_2d_in(
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
    fn for_each_2d_in<T: SparseValue>(
        &self,
        rows: Range<u64>,
        cols: Range<u64>,
        mut f: impl FnMut(u64, u64, T),
    ) -> Result<(), SparseError> {
        let view = &self.view;
        let values = view.values::<T>()?;
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
                let (outer, inner) = if csr { (&rows, &cols) } else { (&cols, &rows) };
                for o in outer.clone() {
                    let start = SparsePointer::as_u64(ptr[o as usize]) as usize;
                    let end = SparsePointer::as_u64(ptr[o as usize + 1]) as usize;
                    let line = &idx[start..end];
                    let lo = line.partition_point(|i| SparseIndex::as_u64(*i) < inner.start);
                    let hi = line.partition_point(|i| SparseIndex::as_u64(*i) < inner.end);
                    for (i, &v) in line[lo..hi].iter().zip(&values[start + lo..start + hi]) {
                        let i = SparseIndex::as_u64(*i);
                        if csr { f(o, i, v) } else { f(i, o, v) }
                    }
                }
            })),
            (format, None) => return Err(SparseError::MissingPointerType { format }),
        }
        Ok(())
    }
}

/// The part of a stored 2-d chunk that a CSR read of a region takes.
struct CsrPart<'c> {
    chunk: &'c StoredSparseChunk,
    /// Local rows and columns inside both the array and the region.
    rows: Range<u64>,
    cols: Range<u64>,
    /// The region row of local row `rows.start`.
    row0: usize,
    /// The region column of local column 0 (negative for a chunk that starts left of it).
    col0: i64,
}

impl<'c> CsrPart<'c> {
    fn of(chunk: &'c StoredSparseChunk, region: &Region) -> Option<Self> {
        // the region in the chunk's local positions (clipped at 0), met with its valid part
        let origin = &chunk.place.origin;
        let local = |d: usize| {
            let start = (region.start[d] as i64 - origin[d]).max(0) as u64;
            let end = (region.start[d] as i64 + region.shape[d] as i64 - origin[d]).max(0) as u64;
            let (v0, v1) = (
                chunk.place.valid.start[d],
                chunk.place.valid.start[d] + chunk.place.valid.shape[d],
            );
            let range = start.max(v0)..end.min(v1);
            (!range.is_empty()).then_some(range)
        };
        let (rows, cols) = (local(0)?, local(1)?);
        Some(CsrPart {
            chunk,
            row0: (origin[0] + rows.start as i64 - region.start[0] as i64) as usize,
            col0: origin[1] - region.start[1] as i64,
            rows,
            cols,
        })
    }
}

/// Splits `out` into the disjoint, ascending ranges `ranges` (each `start..end` of `out`).
fn split_ranges<'a, X>(mut out: &'a mut [X], ranges: &[Range<usize>]) -> Vec<&'a mut [X]> {
    let mut consumed = 0;
    let mut parts = Vec::with_capacity(ranges.len());
    for r in ranges {
        let (_, tail) = std::mem::take(&mut out).split_at_mut(r.start - consumed);
        let (mine, tail) = tail.split_at_mut(r.end - r.start);
        parts.push(mine);
        out = tail;
        consumed = r.end;
    }
    parts
}

/// The entries of a region in COO form, in C order of their positions; see
/// [`Array::read_sparse`].
#[derive(Debug, Clone, PartialEq)]
pub struct SparseCoo<T> {
    region: Region,
    lower: Vec<i64>,
    coords: Array2<u64>,
    values: Vec<T>,
}

impl<T: SparseElement> SparseCoo<T> {
    /// The region that was read (array positions).
    pub fn region(&self) -> &Region {
        &self.region
    }

    /// The number of entries.
    pub fn nnz(&self) -> usize {
        self.values.len()
    }

    /// The coordinates as array positions, `(ndim, nnz)`: column `k` is entry `k`.
    pub fn coords(&self) -> ArrayView2<'_, u64> {
        self.coords.view()
    }

    /// The values, entry by entry.
    pub fn values(&self) -> &[T] {
        &self.values
    }

    /// The coordinates in the array's domain (`lower bound + position`; the same as
    /// [`SparseCoo::coords`] unless the grid is `regular_bounded`), `(ndim, nnz)`.
    pub fn domain_coords(&self) -> Array2<i64> {
        let mut out = Array2::zeros(self.coords.raw_dim());
        for ((d, k), &p) in self.coords.indexed_iter() {
            out[[d, k]] = self.lower[d] + p as i64;
        }
        out
    }

    /// The coordinates relative to the region's start, `(ndim, nnz)`.
    pub fn local_coords(&self) -> Array2<u64> {
        let mut out = self.coords.clone();
        for (mut row, &s) in out.rows_mut().into_iter().zip(&self.region.start) {
            row.mapv_inplace(|p| p - s);
        }
        out
    }

    /// The coordinates and values.
    pub fn into_parts(self) -> (Array2<u64>, Vec<T>) {
        (self.coords, self.values)
    }

    /// A 2-d region as a CSR matrix of the region's shape: row `r` is array row
    /// `region.start[0] + r`, column `c` array column `region.start[1] + c`.
    ///
    /// # Errors
    /// [`ArrayError::Unsupported`] for another rank; a region too large for `usize`.
    pub fn to_csr(&self) -> Result<CsMat<T>> {
        if self.region.rank() != 2 {
            return Err(ArrayError::Unsupported {
                reason: format!(
                    "a sparse matrix needs a 2-d region, this one has {} dimensions",
                    self.region.rank()
                ),
            });
        }
        let dim = |n: u64| {
            usize::try_from(n).map_err(|_| ArrayError::TooLarge {
                what: "a sparse matrix",
                shape: self.region.shape.clone(),
            })
        };
        let (rows, cols) = (dim(self.region.shape[0])?, dim(self.region.shape[1])?);
        let mut indptr = vec![0usize; rows + 1];
        let mut indices = Vec::with_capacity(self.nnz());
        for k in 0..self.nnz() {
            let r = (self.coords[[0, k]] - self.region.start[0]) as usize;
            indptr[r + 1] += 1;
            indices.push((self.coords[[1, k]] - self.region.start[1]) as usize);
        }
        for r in 0..rows {
            indptr[r + 1] += indptr[r];
        }
        CsMat::try_new((rows, cols), indptr, indices, self.values.clone()).map_err(|e| {
            ArrayError::InvalidArgument {
                what: "sparse matrix",
                reason: e.3.to_string(),
            }
        })
    }

    /// The region as a dense `ndarray` (positions without an entry hold `fill`). Allocates the
    /// whole region: meant for small regions and checks.
    ///
    /// # Errors
    /// A region too large for memory.
    pub fn to_dense(&self, fill: T) -> Result<ArrayD<T>> {
        let dims = self
            .region
            .shape
            .iter()
            .map(|&n| usize::try_from(n))
            .collect::<std::result::Result<Vec<usize>, _>>()
            .map_err(|_| ArrayError::TooLarge {
                what: "a region",
                shape: self.region.shape.clone(),
            })?;
        let mut out = ArrayD::from_elem(IxDyn(&dims), fill);
        let local = self.local_coords();
        let mut at = vec![0usize; dims.len()];
        for (k, &v) in self.values.iter().enumerate() {
            for (d, a) in at.iter_mut().enumerate() {
                *a = local[[d, k]] as usize;
            }
            out[IxDyn(&at)] = v;
        }
        Ok(out)
    }
}

/// New entries for one stored value: (local C-order key, value), sorted and unique, and the
/// local region whose stored entries are dropped first.
struct Edit<T> {
    entries: Vec<(u64, T)>,
    clear: Option<Region>,
}

impl Array {
    fn sparse_plan(&self) -> Result<Plan<'_>> {
        Plan::of(&self.chain).ok_or_else(|| {
            let names: Vec<String> = self.chain.to_defs().into_iter().map(|d| d.name).collect();
            ArrayError::Unsupported {
                reason: format!(
                    "{} does not store sparse chunks (codecs {names:?}): sparse access needs \
                     sparse_layout as the array -> bytes codec, directly or inside \
                     sharding_indexed, without array -> array codecs",
                    self.path()
                ),
            }
        })
    }

    /// Whether the array's chunks are stored with `sparse_layout` (directly or as the inner
    /// codec of `sharding_indexed`, without array -> array codecs), so that the sparse API
    /// applies.
    pub fn is_sparse(&self) -> bool {
        Plan::of(&self.chain).is_some()
    }

    /// The layout of the array's sparse chunks, if it has any.
    pub fn sparse_layout(&self) -> Option<&Layout> {
        Plan::of(&self.chain).map(|p| p.codec.layout())
    }

    /// The shape of the array's sparse chunks (the inner chunk shape for a sharded array).
    pub fn sparse_chunk_shape(&self) -> Option<&[u64]> {
        Plan::of(&self.chain).map(|p| p.codec.chunk_shape())
    }

    fn lower_bounds(&self) -> Vec<i64> {
        self.domain().into_iter().map(|(l, _)| l).collect()
    }

    /// The place of a grid chunk; `None` outside the grid.
    fn place_of(&self, chunk: &[i64]) -> Option<Place> {
        let part = self.grid.chunk_part(chunk)?;
        let origin = part
            .in_region
            .start
            .iter()
            .zip(&part.in_chunk.start)
            .map(|(&a, &b)| a as i64 - b as i64)
            .collect();
        Some(Place {
            chunk: chunk.to_vec(),
            inner: None,
            origin,
            valid: part.in_chunk,
        })
    }

    /// Decodes the sparse chunks of one stored value that meet `wanted` (local positions).
    fn collect_value(
        &self,
        plan: &Plan<'_>,
        bytes: &[u8],
        place: &Place,
        wanted: &Region,
    ) -> std::result::Result<Vec<StoredSparseChunk>, CodecError> {
        let sharded = plan.chain.is_sharded();
        let leaves = plan
            .chain
            .visit_stored_leaves(bytes, Some(wanted), |idx, leaf| {
                // a leaf wholly outside the array is not read
                let Some(sub) = place.sub(sharded.then(|| idx.to_vec()), &plan.leaf_region(idx))
                else {
                    return Ok(None);
                };
                let buffer = plan.leaf.decode_to_array_bytes(leaf)?;
                StoredSparseChunk::new(buffer, plan.codec, sub, self.lower_bounds()).map(Some)
            })?;
        Ok(leaves.into_iter().flatten().collect())
    }

    /// The stored chunks to visit: every stored chunk (listing the store) for the whole
    /// array, else the chunks that meet `region`, each with the part of its buffer wanted.
    fn sparse_targets(&self, region: Option<&Region>) -> Result<Vec<(Vec<i64>, Region)>> {
        match region {
            None => Ok(self
                .stored_chunks()?
                .into_iter()
                .map(|chunk| (chunk, Region::whole(&self.chunk_shape())))
                .collect()),
            // a region over many chunks: most of them are usually not stored in a sparse
            // array, so list the stored ones instead of asking for each
            Some(region) if self.chunks_meeting(region)? > LIST_STORED_ABOVE => {
                let mut out = Vec::new();
                for chunk in self.stored_chunks()? {
                    let Some(part) = self.grid.chunk_part(&chunk) else {
                        continue;
                    };
                    // the chunk's array positions met with the region, in buffer positions
                    let Some(met) = intersect(region, &part.in_region) else {
                        continue;
                    };
                    let wanted = Region {
                        start: met
                            .start
                            .iter()
                            .zip(&part.in_chunk.start)
                            .map(|(&m, &b)| m + b)
                            .collect(),
                        shape: met.shape,
                    };
                    out.push((chunk, wanted));
                }
                Ok(out)
            }
            Some(region) => Ok(self
                .grid
                .chunks_in_region(region)?
                .map(|part| (part.chunk, part.in_chunk))
                .collect()),
        }
    }

    /// The number of chunks that meet a non-empty `region` inside the array (saturating).
    fn chunks_meeting(&self, region: &Region) -> Result<u64> {
        let last: Vec<u64> = region
            .start
            .iter()
            .zip(&region.shape)
            .map(|(&s, &n)| s + n - 1)
            .collect();
        let (first, _) = self.grid.chunk_of(&region.start)?;
        let (end, _) = self.grid.chunk_of(&last)?;
        Ok(first
            .iter()
            .zip(&end)
            .fold(1u64, |acc, (&a, &b)| acc.saturating_mul(b.abs_diff(a) + 1)))
    }

    /// Runs `map` on the sparse chunks of every stored chunk (in parallel; one call per
    /// stored chunk or shard) and combines the results with `reduce`.
    fn fold_stored<R, ID, M, F>(
        &self,
        region: Option<&Region>,
        identity: ID,
        map: M,
        reduce: F,
    ) -> Result<R>
    where
        R: Send,
        ID: Fn() -> R + Sync + Send,
        M: Fn(Vec<StoredSparseChunk>) -> Result<R> + Sync + Send,
        F: Fn(R, R) -> R + Sync + Send,
    {
        let plan = self.sparse_plan()?;
        if region.is_some_and(Region::is_empty) || self.shape().contains(&0) {
            return Ok(identity());
        }
        let targets = self.sparse_targets(region)?;
        targets
            .par_iter()
            .map(|(chunk, wanted)| -> Result<R> {
                let key = self.chunk_key(chunk);
                let (Some(bytes), Some(place)) = (self.store.get(&key)?, self.place_of(chunk))
                else {
                    return Ok(identity());
                };
                let chunks =
                    self.collect_value(&plan, &bytes, &place, wanted)
                        .map_err(|source| ArrayError::Codec {
                            context: key,
                            source,
                        })?;
                map(chunks)
            })
            .try_reduce(&identity, |a, b| Ok(reduce(a, b)))
    }

    /// Every stored sparse chunk (for a sharded array, every stored inner chunk), decoded but
    /// not densified, in C order of the chunk (then inner chunk) indices. Chunks are fetched
    /// and decoded in parallel. For large arrays prefer
    /// [`Array::map_reduce_sparse_chunks`], which holds only the chunks being processed.
    ///
    /// # Errors
    /// An array without sparse chunks ([`ArrayError::Unsupported`]), store errors, corrupt
    /// chunks.
    pub fn sparse_chunks(&self) -> Result<Vec<StoredSparseChunk>> {
        self.fold_stored(None, Vec::new, Ok, |mut a, b| {
            a.extend(b);
            a
        })
    }

    /// The stored sparse chunks that meet `region` (whole chunks: their entries outside the
    /// region are not removed). For a sharded array, only the inner chunks that meet the
    /// region are decoded.
    ///
    /// # Errors
    /// As [`Array::sparse_chunks`], and a region outside the array.
    pub fn sparse_chunks_in(&self, region: &Region) -> Result<Vec<StoredSparseChunk>> {
        self.check_sparse_region(region)?;
        self.fold_stored(Some(region), Vec::new, Ok, |mut a, b| {
            a.extend(b);
            a
        })
    }

    /// Chunk-parallel map/reduce over the stored sparse chunks (rayon): `map` runs on each
    /// sparse chunk as soon as its stored chunk is decoded, the results are combined with
    /// `reduce` (associative; `identity()` is its neutral element). Only the chunks being
    /// processed are held in memory.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use zarr_array::{ArrayBuilder, DataType};
    /// # use zarr_array::zarr_layout_sparse::Format;
    /// # let a = ArrayBuilder::new(vec![10], DataType::Int32).chunk_shape(vec![4])
    /// #     .sparse(Format::Coo).create(Arc::new(zarr_store::MemoryStore::new()), "v")?;
    /// # a.write_sparse_coo(ndarray::arr2(&[[1u64, 5, 9]]).view(), &[4, -2, 7])?;
    /// // the largest stored value
    /// let max = a.map_reduce_sparse_chunks(
    ///     || i32::MIN,
    ///     |chunk| {
    ///         let mut m = i32::MIN;
    ///         chunk.for_each_in_array::<i32>(|_, v| m = m.max(v))?;
    ///         Ok(m)
    ///     },
    ///     i32::max,
    /// )?;
    /// assert_eq!(max, 7);
    /// # Ok::<(), zarr_array::ArrayError>(())
    /// ```
    ///
    /// # Errors
    /// As [`Array::sparse_chunks`], and the first error `map` returns.
    pub fn map_reduce_sparse_chunks<R, ID, M, F>(
        &self,
        identity: ID,
        map: M,
        reduce: F,
    ) -> Result<R>
    where
        R: Send,
        ID: Fn() -> R + Sync + Send,
        M: Fn(&StoredSparseChunk) -> Result<R> + Sync + Send,
        F: Fn(R, R) -> R + Sync + Send,
    {
        self.fold_stored(
            None,
            &identity,
            |chunks| {
                chunks
                    .iter()
                    .try_fold(identity(), |acc, c| Ok(reduce(acc, map(c)?)))
            },
            &reduce,
        )
    }

    /// The number of stored entries inside the array (entries equal to the fill value that
    /// another writer stored included), computed chunk by chunk in parallel.
    ///
    /// # Errors
    /// As [`Array::sparse_chunks`].
    pub fn nnz(&self) -> Result<u64> {
        self.map_reduce_sparse_chunks(|| 0u64, |c| Ok(c.nnz_in_array() as u64), |a, b| a + b)
    }

    /// The sum of the stored entries inside the array: the sum of the array when the fill
    /// value is zero. Integers wrap around. Computed chunk by chunk in parallel.
    ///
    /// # Errors
    /// A `T` other than the array's data type, and as [`Array::sparse_chunks`].
    pub fn sum<T: SparseScalar>(&self) -> Result<T> {
        self.check_type::<T>()?;
        self.map_reduce_sparse_chunks(
            T::zero,
            |c| {
                let mut s = T::zero();
                c.for_each_in_array::<T>(|_, v| s = s.sparse_add(v))
                    .map_err(sparse_err(format!("chunk {:?}", c.chunk_index())))?;
                Ok(s)
            },
            T::sparse_add,
        )
    }

    /// The sparse matrix-vector product `y = A x` of a 2-d array `A` (`x` has one element per
    /// column, `y` one per row), computed on the sparse chunks in parallel. The fill value
    /// must be zero.
    ///
    /// # Errors
    /// Another rank or element type, a nonzero fill value, an `x` of the wrong length, and as
    /// [`Array::sparse_chunks`].
    pub fn spmv<T: SparseScalar>(&self, x: &[T]) -> Result<Vec<T>> {
        self.check_type::<T>()?;
        if self.rank() != 2 {
            return Err(ArrayError::Unsupported {
                reason: format!(
                    "spmv needs a 2-d array, {} has {} dimensions",
                    self.path(),
                    self.rank()
                ),
            });
        }
        let fill: T = bytemuck::pod_read_unaligned(self.fill_value().as_bytes());
        if fill != T::zero() {
            return Err(ArrayError::Unsupported {
                reason: format!(
                    "spmv needs a zero fill value, {} has {:?}",
                    self.path(),
                    fill
                ),
            });
        }
        let (rows, cols) = (self.shape()[0], self.shape()[1]);
        if x.len() as u64 != cols {
            return Err(ArrayError::ShapeMismatch {
                expected: vec![cols],
                got: vec![x.len() as u64],
            });
        }
        let rows = usize::try_from(rows).map_err(|_| ArrayError::TooLarge {
            what: "the product vector",
            shape: vec![rows],
        })?;
        // per chunk: (first array row, partial sums of its rows inside the array)
        let partials = self.map_reduce_sparse_chunks(
            Vec::new,
            |c| {
                let valid = c.valid_region();
                let row0 = c.origin()[0] + valid.start[0] as i64;
                let col0 = c.origin()[1];
                let mut y = vec![T::zero(); valid.shape[0] as usize];
                let first = valid.start[0];
                c.for_each_2d::<T>(|r, col, v| {
                    let slot = &mut y[(r - first) as usize];
                    *slot = slot.sparse_add(v.sparse_mul(x[(col0 + col as i64) as usize]));
                })
                .map_err(sparse_err(format!("chunk {:?}", c.chunk_index())))?;
                Ok(vec![(row0 as usize, y)])
            },
            |mut a, b| {
                a.extend(b);
                a
            },
        )?;
        let mut y = vec![T::zero(); rows];
        for (row0, part) in partials {
            for (slot, v) in y[row0..row0 + part.len()].iter_mut().zip(part) {
                *slot = slot.sparse_add(v);
            }
        }
        Ok(y)
    }

    fn check_sparse_region(&self, region: &Region) -> Result<()> {
        let inside = region.rank() == self.rank()
            && region.start.len() == region.shape.len()
            && (0..self.rank()).all(|d| {
                region.start[d]
                    .checked_add(region.shape[d])
                    .is_some_and(|end| end <= self.shape()[d])
            });
        if inside {
            Ok(())
        } else {
            Err(ArrayError::InvalidSelection {
                reason: format!(
                    "region {:?}+{:?} does not lie inside the shape {:?}",
                    region.start,
                    region.shape,
                    self.shape()
                ),
            })
        }
    }

    /// The entries of `region` in COO form: coordinates in array positions (`(ndim, nnz)`,
    /// C order of the positions) and values, read from the sparse chunks without densifying.
    /// Entries that chunks hold outside the array are ignored; stored entries equal to the
    /// fill value (written by another writer) are kept.
    ///
    /// # Errors
    /// A `T` other than the array's data type, a region outside the array, and as
    /// [`Array::sparse_chunks`].
    pub fn read_sparse<T: SparseElement>(&self, region: &Region) -> Result<SparseCoo<T>> {
        self.check_type::<T>()?;
        self.check_sparse_region(region)?;
        let ndim = self.rank();
        let region_len = region
            .shape
            .iter()
            .try_fold(1u64, |acc, &n| acc.checked_mul(n));
        let (coords, values) = match region_len {
            // usual case: sort (C-order offset in the region, value) pairs
            Some(_) => {
                let mut keyed = self.fold_stored(
                    Some(region),
                    Vec::new,
                    |chunks| {
                        let mut out = Vec::new();
                        let mut local = vec![0u64; ndim];
                        for c in &chunks {
                            c.for_each_in_array::<T>(|p, v| {
                                if region.contains(p) {
                                    for ((l, &p), &s) in local.iter_mut().zip(p).zip(&region.start)
                                    {
                                        *l = p - s;
                                    }
                                    out.push((linear_index(&local, &region.shape), v));
                                }
                            })
                            .map_err(sparse_err(format!("chunk {:?}", c.chunk_index())))?;
                        }
                        Ok(out)
                    },
                    |mut a, b| {
                        a.extend(b);
                        a
                    },
                )?;
                keyed.sort_unstable_by_key(|&(key, _)| key);
                let nnz = keyed.len();
                let mut coords = Array2::zeros((ndim, nnz));
                let mut values = Vec::with_capacity(nnz);
                let mut pos = vec![0u64; ndim];
                for (k, (key, v)) in keyed.into_iter().enumerate() {
                    unravel_index(key, &region.shape, &mut pos);
                    for (d, (&p, &s)) in pos.iter().zip(&region.start).enumerate() {
                        coords[[d, k]] = p + s;
                    }
                    values.push(v);
                }
                (coords, values)
            }
            // a region of more than 2^64 positions: sort the positions themselves
            None => {
                let (positions, values) = self.fold_stored(
                    Some(region),
                    || (Vec::new(), Vec::new()),
                    |chunks| {
                        let mut pos = Vec::new();
                        let mut vals = Vec::new();
                        for c in &chunks {
                            c.for_each_in_array::<T>(|p, v| {
                                if region.contains(p) {
                                    pos.extend_from_slice(p);
                                    vals.push(v);
                                }
                            })
                            .map_err(sparse_err(format!("chunk {:?}", c.chunk_index())))?;
                        }
                        Ok((pos, vals))
                    },
                    |mut a, b| {
                        a.0.extend(b.0);
                        a.1.extend(b.1);
                        a
                    },
                )?;
                let nnz = values.len();
                let at = |k: usize| &positions[k * ndim..(k + 1) * ndim];
                let mut order: Vec<usize> = (0..nnz).collect();
                order.sort_unstable_by(|&a, &b| at(a).cmp(at(b)));
                let mut coords = Array2::zeros((ndim, nnz));
                let mut sorted = Vec::with_capacity(nnz);
                for (k, &i) in order.iter().enumerate() {
                    for (d, &p) in at(i).iter().enumerate() {
                        coords[[d, k]] = p;
                    }
                    sorted.push(values[i]);
                }
                (coords, sorted)
            }
        };
        Ok(SparseCoo {
            region: region.clone(),
            lower: self.lower_bounds(),
            coords,
            values,
        })
    }

    /// A 2-d region as one `sprs` CSR matrix of the region's shape (row `r` is array row
    /// `region.start[0] + r`, column `c` array column `region.start[1] + c`), built straight
    /// from the decoded sparse chunks: the chunks that meet the region are fetched and decoded
    /// in parallel, the entries of each row are counted, and each band of chunk rows then
    /// fills its own rows of the exactly sized index and value arrays in parallel. No dense
    /// data, no per-entry coordinates and no sort: apart from the result, it holds only the
    /// decoded chunks. The same matrix as `read_sparse(region)?.to_csr()`.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use zarr_array::{ArrayBuilder, DataType};
    /// # use zarr_array::zarr_grid::geometry::Region;
    /// # use zarr_array::zarr_layout_sparse::Format;
    /// let a = ArrayBuilder::new(vec![4, 6], DataType::Float32)
    ///     .chunk_shape(vec![2, 4])
    ///     .sparse(Format::Csr)
    ///     .create(Arc::new(zarr_store::MemoryStore::new()), "m")?;
    /// a.write_sparse_coo(ndarray::arr2(&[[0u64, 1, 3], [5, 2, 3]]).view(), &[1.0f32, 2.0, 3.0])?;
    /// let m = a.read_csr::<f32>(&Region::new(vec![1, 2], vec![3, 4])?)?;
    /// assert_eq!((m.rows(), m.cols(), m.nnz()), (3, 4, 2)); // (0, 5) lies above the region
    /// assert_eq!(m.get(0, 0), Some(&2.0)); // array (1, 2)
    /// assert_eq!(m.get(2, 1), Some(&3.0)); // array (3, 3)
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// Another rank than 2, a `T` other than the array's data type, a region outside the
    /// array, and as [`Array::sparse_chunks`].
    pub fn read_csr<T: SparseElement>(&self, region: &Region) -> Result<CsMat<T>> {
        self.check_type::<T>()?;
        if self.rank() != 2 {
            return Err(ArrayError::Unsupported {
                reason: format!(
                    "a sparse matrix needs a 2-d array, {} has {} dimensions",
                    self.path(),
                    self.rank()
                ),
            });
        }
        self.check_sparse_region(region)?;
        let dim = |n: u64| {
            usize::try_from(n).map_err(|_| ArrayError::TooLarge {
                what: "a sparse matrix",
                shape: region.shape.clone(),
            })
        };
        let (rows, cols) = (dim(region.shape[0])?, dim(region.shape[1])?);
        let mut chunks = self.sparse_chunks_in(region)?;
        chunks.sort_by_key(|c| (c.place.origin[0], c.place.origin[1]));
        let parts: Vec<CsrPart<'_>> = chunks
            .iter()
            .filter_map(|c| CsrPart::of(c, region))
            .collect();
        // bands of parts covering the same rows (one chunk row), in row order, columns
        // ascending inside each band: rows of different bands are disjoint
        let bands: Vec<&[CsrPart<'_>]> = parts
            .chunk_by(|a, b| a.chunk.place.origin[0] == b.chunk.place.origin[0])
            .collect();
        let band_rows: Vec<Range<usize>> = bands
            .iter()
            .map(|b| b[0].row0..b[0].row0 + (b[0].rows.end - b[0].rows.start) as usize)
            .collect();
        let visit = |p: &CsrPart<'_>, f: &mut dyn FnMut(usize, usize, T)| {
            let (r0, c0) = (p.rows.start, p.col0);
            p.chunk
                .for_each_2d_in::<T>(p.rows.clone(), p.cols.clone(), |r, c, v| {
                    f((r - r0) as usize, (c0 + c as i64) as usize, v)
                })
                .map_err(sparse_err(format!("chunk {:?}", p.chunk.chunk_index())))
        };

        // entries per row, then their offsets
        let mut indptr = vec![0usize; rows + 1];
        split_ranges(&mut indptr[1..], &band_rows)
            .into_par_iter()
            .zip(&bands)
            .try_for_each(|(counts, band)| {
                band.iter()
                    .try_for_each(|p| visit(p, &mut |r, _, _| counts[r] += 1))
            })?;
        for r in 0..rows {
            indptr[r + 1] += indptr[r];
        }
        let nnz = indptr[rows];

        let mut indices = vec![0usize; nnz];
        let mut data = vec![T::default(); nnz];
        let spans: Vec<Range<usize>> = band_rows
            .iter()
            .map(|r| indptr[r.start]..indptr[r.end])
            .collect();
        split_ranges(&mut indices, &spans)
            .into_par_iter()
            .zip(split_ranges(&mut data, &spans))
            .zip(bands.par_iter().zip(&band_rows))
            .try_for_each(|((idx, val), (band, rows))| {
                let base = indptr[rows.start];
                let mut next: Vec<usize> = indptr[rows.clone()].iter().map(|&o| o - base).collect();
                band.iter().try_for_each(|p| {
                    visit(p, &mut |r, c, v| {
                        let k = &mut next[r];
                        idx[*k] = c;
                        val[*k] = v;
                        *k += 1;
                    })
                })
            })?;
        CsMat::try_new((rows, cols), indptr, indices, data).map_err(|e| {
            ArrayError::InvalidArgument {
                what: "sparse matrix",
                reason: e.3.to_string(),
            }
        })
    }

    /// Writes entries given as coordinates (array positions, `(ndim, nnz)`: column `k` is
    /// entry `k`) and values, without building the dense array: entries are grouped by chunk
    /// and each chunk is rewritten from its stored entries merged with the new ones (new
    /// values win). A value equal to the fill value removes the entry; a chunk left without
    /// entries is deleted. Chunks are rewritten in parallel.
    ///
    /// # Errors
    /// A `T` other than the array's data type, coordinates of the wrong shape, outside the
    /// array or repeated, an array without sparse chunks, store and codec errors.
    pub fn write_sparse_coo<T: SparseElement>(
        &self,
        coords: ArrayView2<'_, u64>,
        values: &[T],
    ) -> Result<()> {
        self.check_type::<T>()?;
        let ndim = self.rank();
        if coords.nrows() != ndim || coords.ncols() != values.len() {
            return Err(ArrayError::ShapeMismatch {
                expected: vec![ndim as u64, values.len() as u64],
                got: coords.shape().iter().map(|&n| n as u64).collect(),
            });
        }
        let mut positions = Vec::with_capacity(ndim * values.len());
        for k in 0..values.len() {
            positions.extend(coords.column(k).iter().copied());
        }
        self.write_entries(&positions, values, None)
    }

    /// Writes a 2-d `sprs` matrix (CSR or CSC storage, any index types, owned or a view) into
    /// the region that starts at `offset` and has the matrix's shape, without building the
    /// dense array: afterwards the region holds the matrix (its stored entries, and the fill
    /// value elsewhere: entries stored in the region before are removed). Chunks are rewritten
    /// in parallel; a chunk left without entries is deleted.
    ///
    /// # Errors
    /// A `T` other than the array's data type, an array that is not 2-d, a region outside the
    /// array, an array without sparse chunks, store and codec errors.
    pub fn write_sprs<T, I, Iptr, IptrS, IndS, DataS>(
        &self,
        mat: &CsMatBase<T, I, IptrS, IndS, DataS, Iptr>,
        offset: &[u64],
    ) -> Result<()>
    where
        T: SparseElement,
        I: SpIndex,
        Iptr: SpIndex,
        IptrS: Deref<Target = [Iptr]>,
        IndS: Deref<Target = [I]>,
        DataS: Deref<Target = [T]>,
    {
        self.check_type::<T>()?;
        if self.rank() != 2 || offset.len() != 2 {
            return Err(ArrayError::Unsupported {
                reason: format!(
                    "a sparse matrix is written into a 2-d array at a 2-d offset ({} has {} dimensions, the offset {})",
                    self.path(),
                    self.rank(),
                    offset.len()
                ),
            });
        }
        let region = Region::new(offset.to_vec(), vec![mat.rows() as u64, mat.cols() as u64])?;
        self.check_sparse_region(&region)?;
        let mut positions = Vec::with_capacity(2 * mat.nnz());
        let mut values = Vec::with_capacity(mat.nnz());
        for (&v, (r, c)) in mat.iter() {
            let (Some(r), Some(c)) = (r.try_index(), c.try_index()) else {
                return Err(ArrayError::InvalidArgument {
                    what: "sparse matrix",
                    reason: "an index does not convert to usize".into(),
                });
            };
            positions.push(offset[0] + r as u64);
            positions.push(offset[1] + c as u64);
            values.push(v);
        }
        self.write_entries(&positions, &values, Some(&region))
    }

    /// Writes entries (`positions` entry by entry) into the sparse chunks; with `clear`, the
    /// stored entries inside that region are removed first.
    fn write_entries<T: SparseElement>(
        &self,
        positions: &[u64],
        values: &[T],
        clear: Option<&Region>,
    ) -> Result<()> {
        let plan = self.sparse_plan()?;
        let ndim = self.rank();
        let fill: T = bytemuck::pod_read_unaligned(self.fill_value().as_bytes());
        let chunk_shape = self.chunk_shape();
        let mut work: BTreeMap<Vec<i64>, Edit<T>> = BTreeMap::new();
        for (k, &v) in values.iter().enumerate() {
            let pos = &positions[k * ndim..(k + 1) * ndim];
            for (axis, (&p, &n)) in pos.iter().zip(self.shape()).enumerate() {
                if p >= n {
                    return Err(ArrayError::OutOfBounds {
                        axis,
                        index: i64::try_from(p).unwrap_or(i64::MAX),
                        len: n,
                    });
                }
            }
            let (chunk, offset) = self.grid.chunk_of(pos)?;
            work.entry(chunk)
                .or_insert_with(|| Edit {
                    entries: Vec::new(),
                    clear: None,
                })
                .entries
                .push((linear_index(&offset, &chunk_shape), v));
        }
        for (chunk, edit) in &mut work {
            edit.entries.sort_by_key(|e| e.0);
            if let Some(w) = edit.entries.windows(2).find(|w| w[0].0 == w[1].0) {
                let mut local = vec![0; ndim];
                unravel_index(w[0].0, &chunk_shape, &mut local);
                let place = self.place_of(chunk);
                let pos: Vec<i64> = match place {
                    Some(p) => p
                        .origin
                        .iter()
                        .zip(&local)
                        .map(|(o, l)| o + *l as i64)
                        .collect(),
                    None => local.iter().map(|&l| l as i64).collect(),
                };
                return Err(ArrayError::InvalidArgument {
                    what: "coordinates",
                    reason: format!("position {pos:?} is given twice"),
                });
            }
        }
        if let Some(region) = clear.filter(|r| !r.is_empty()) {
            for part in self.grid.chunks_in_region(region)? {
                work.entry(part.chunk)
                    .or_insert_with(|| Edit {
                        entries: Vec::new(),
                        clear: None,
                    })
                    .clear = Some(part.in_chunk);
            }
        }
        let work: Vec<(Vec<i64>, Edit<T>)> = work.into_iter().collect();
        work.into_par_iter()
            .try_for_each(|(chunk, edit)| -> Result<()> {
                let key = self.chunk_key(&chunk);
                let Some(place) = self.place_of(&chunk) else {
                    return Ok(());
                };
                let existing = self.store.get(&key)?;
                if existing.is_none() && edit.entries.is_empty() {
                    return Ok(());
                }
                let rewritten = self
                    .rewrite_value(&plan, existing.as_deref(), &place.valid, edit, fill)
                    .map_err(|source| ArrayError::Codec {
                        context: key.clone(),
                        source,
                    })?;
                match rewritten {
                    Some(bytes) => self.store.set(&key, &bytes)?,
                    None if existing.is_some() => self.store.delete(&key)?,
                    None => {}
                }
                Ok(())
            })
    }

    /// The new bytes of one stored value (a chunk or shard) after `edit`; `None` when it
    /// ends up without entries. Only the sparse chunks (leaves) the edit touches are decoded
    /// and re-encoded; the others keep their stored bytes. Stored entries outside `valid`
    /// (outside the array) are dropped from the sparse chunks that are rewritten.
    fn rewrite_value<T: SparseElement>(
        &self,
        plan: &Plan<'_>,
        existing: Option<&[u8]>,
        valid: &Region,
        edit: Edit<T>,
        fill: T,
    ) -> std::result::Result<Option<Vec<u8>>, CodecError> {
        let shape = &plan.chain.repr().shape;
        let lshape = &plan.leaf.repr().shape;
        let grid = plan.chain.leaf_grid_shape();
        // new entries by leaf (the chunk's C order keeps each leaf's sorted)
        let mut groups: BTreeMap<Vec<u64>, Edit<T>> = BTreeMap::new();
        let rank = shape.len();
        let (mut pos, mut local) = (vec![0; rank], vec![0; rank]);
        for (key, v) in edit.entries {
            unravel_index(key, shape, &mut pos);
            let mut idx = vec![0; rank];
            for d in 0..rank {
                idx[d] = pos[d] / lshape[d];
                local[d] = pos[d] % lshape[d];
            }
            groups
                .entry(idx)
                .or_insert_with(|| Edit {
                    entries: Vec::new(),
                    clear: None,
                })
                .entries
                .push((linear_index(&local, lshape), v));
        }
        if let Some(clear) = &edit.clear {
            // every leaf the cleared region meets (a missing one stays missing)
            for part in regular_chunks_in_region(lshape, clear) {
                let idx: Vec<u64> = part.chunk.iter().map(|&g| g as u64).collect();
                groups
                    .entry(idx)
                    .or_insert_with(|| Edit {
                        entries: Vec::new(),
                        clear: None,
                    })
                    .clear = Some(part.in_chunk);
            }
        }
        // a leaf wholly outside the array receives no entries
        let jobs: BTreeMap<Vec<u64>, (Region, Edit<T>)> = groups
            .into_iter()
            .filter(|(idx, _)| idx.iter().zip(&grid).all(|(i, n)| i < n))
            .filter_map(|(idx, e)| {
                let valid_leaf = intersect(valid, &plan.leaf_region(&idx))?;
                Some((idx, (valid_leaf, e)))
            })
            .collect();
        let leaves: Vec<Vec<u64>> = jobs.keys().cloned().collect();
        plan.chain.rewrite_leaves(existing, &leaves, |idx, stored| {
            let (valid_leaf, e) = &jobs[idx];
            self.rewrite_leaf(plan, stored, lshape, valid_leaf, e, fill)
        })
    }

    fn rewrite_leaf<T: SparseElement>(
        &self,
        plan: &Plan<'_>,
        existing: Option<&[u8]>,
        shape: &[u64],
        valid: &Region,
        edit: &Edit<T>,
        fill: T,
    ) -> std::result::Result<Option<Vec<u8>>, CodecError> {
        // (key, 0 for stored / 1 for new, value): sorted, the last of each key wins
        let mut merged: Vec<(u64, u8, T)> = Vec::with_capacity(edit.entries.len());
        if let Some(bytes) = existing {
            let buffer = plan.leaf.decode_to_array_bytes(bytes)?;
            let view = plan.codec.decode_sparse(&buffer)?;
            for (local, &v) in view.entries::<T>()? {
                let dropped = !valid.contains(&local)
                    || edit.clear.as_ref().is_some_and(|c| c.contains(&local));
                if !dropped {
                    merged.push((linear_index(&local, shape), 0, v));
                }
            }
        }
        merged.extend(edit.entries.iter().map(|&(k, v)| (k, 1, v)));
        merged.sort_unstable_by_key(|e| (e.0, e.1));
        let mut coords = Vec::with_capacity(merged.len() * shape.len());
        let mut values = Vec::with_capacity(merged.len());
        let mut local = vec![0; shape.len()];
        for (i, &(key, _, v)) in merged.iter().enumerate() {
            let superseded = merged.get(i + 1).is_some_and(|next| next.0 == key);
            if superseded || v.is_fill(&fill) {
                continue;
            }
            unravel_index(key, shape, &mut local);
            coords.extend_from_slice(&local);
            values.push(v);
        }
        if values.is_empty() {
            return Ok(None);
        }
        let bytes = encode_triples(plan.codec.layout(), shape, &coords, &values, &fill)?;
        plan.leaf.encode_from_array_bytes(bytes).map(Some)
    }
}
