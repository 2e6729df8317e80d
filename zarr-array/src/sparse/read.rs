//! Reads of a region from the sparse chunks: [`SparseArray::read_coo`] (any rank, a
//! [`SparseCoo`]) and [`SparseArray::read_csr`] (2-d, a `sprs` matrix built in parallel).

use std::ops::Range;

use ndarray::{Array2, ArrayD, ArrayView2, IxDyn};
use rayon::prelude::*;
use zarr_grid::geometry::{linear_index, unravel_index, Region};
use zarr_layout_sparse::sprs::{CsMat, CsMatI, SpIndex};

use super::{concat, sparse_err, SparseArray, SparseElement, StoredSparseChunk};
use crate::error::{try_zeroed, ArrayError, Result};

/// The part of a stored 2-d chunk that a CSR read of a region takes (and the decoded chunk,
/// dropped once its entries are copied).
struct CsrPart {
    chunk: StoredSparseChunk,
    /// Local rows and columns inside both the array and the region.
    rows: Range<u64>,
    cols: Range<u64>,
    /// The region row of local row `rows.start`.
    row0: usize,
    /// The region column of local column 0 (negative for a chunk that starts left of it).
    col0: i64,
}

impl CsrPart {
    fn of(chunk: StoredSparseChunk, region: &Region) -> Option<Self> {
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
        let row0 = (origin[0] + rows.start as i64 - region.start[0] as i64) as usize;
        let col0 = origin[1] - region.start[1] as i64;
        Some(CsrPart {
            chunk,
            row0,
            col0,
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
/// [`SparseArray::read_coo`].
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
    /// [`ArrayError::RankMismatch`] for another rank; a region too large for `usize`.
    pub fn to_csr(&self) -> Result<CsMat<T>> {
        if self.region.rank() != 2 {
            return Err(ArrayError::RankMismatch {
                operation: "a sparse matrix",
                path: "the region".into(),
                expected: 2,
                got: self.region.rank(),
            });
        }
        let dim = |n: u64| {
            usize::try_from(n).map_err(|_| ArrayError::TooLarge {
                what: "a sparse matrix",
                shape: self.region.shape.clone(),
            })
        };
        let (rows, cols) = (dim(self.region.shape[0])?, dim(self.region.shape[1])?);
        let mut indptr = try_zeroed(rows.saturating_add(1), "the row pointers of a sparse read")?;
        let mut indices = Vec::with_capacity(self.nnz());
        for k in 0..self.nnz() {
            let r = (self.coords[[0, k]] - self.region.start[0]) as usize;
            indptr[r + 1] += 1;
            indices.push((self.coords[[1, k]] - self.region.start[1]) as usize);
        }
        for r in 0..rows {
            indptr[r + 1] += indptr[r];
        }
        CsMat::try_new((rows, cols), indptr, indices, self.values.clone())
            .map_err(|e| ArrayError::SparseStructure { source: e.3 })
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

/// Rows and columns of a CSR read: the parts of the chunks that meet the region, in bands.
struct CsrPlan {
    /// Bands of parts covering the same rows (one chunk row), in row order, columns
    /// ascending inside each band: rows of different bands are disjoint.
    bands: Vec<Vec<CsrPart>>,
    /// The region rows of each band.
    band_rows: Vec<Range<usize>>,
}

impl SparseArray<'_> {
    /// The entries of `region` in COO form: coordinates in array positions (`(ndim, nnz)`,
    /// C order of the positions) and values, read from the sparse chunks without densifying.
    /// Entries that chunks hold outside the array are ignored; stored entries equal to the
    /// fill value (written by another writer) are kept.
    ///
    /// # Errors
    /// A `T` other than the array's data type, a region outside the array, and as
    /// [`SparseArray::chunks`].
    pub fn read_coo<T: SparseElement>(&self, region: &Region) -> Result<SparseCoo<T>> {
        self.array.check_type::<T>()?;
        self.check_region(region)?;
        let region_len = region
            .shape
            .iter()
            .try_fold(1u64, |acc, &n| acc.checked_mul(n));
        let (coords, values) = match region_len {
            // usual case: sort (C-order offset in the region, value) pairs
            Some(_) => self.coo_by_offset(region)?,
            // a region of more than 2^64 positions: sort the positions themselves
            None => self.coo_by_position(region)?,
        };
        Ok(SparseCoo {
            region: region.clone(),
            lower: self.lower.clone(),
            coords,
            values,
        })
    }

    /// The entries of a region of at most 2^64 positions, sorted by their C-order offset in
    /// the region.
    fn coo_by_offset<T: SparseElement>(&self, region: &Region) -> Result<(Array2<u64>, Vec<T>)> {
        let ndim = region.rank();
        let mut keyed = self.fold_stored(
            Some(region),
            Vec::new,
            |chunks| {
                let mut out = Vec::new();
                let mut local = vec![0u64; ndim];
                for c in &chunks {
                    c.for_each_in_array::<T>(|p, v| {
                        if region.contains(p) {
                            for ((l, &p), &s) in local.iter_mut().zip(p).zip(&region.start) {
                                *l = p - s;
                            }
                            out.push((linear_index(&local, &region.shape), v));
                        }
                    })
                    .map_err(sparse_err(format!("chunk {:?}", c.chunk_index())))?;
                }
                Ok(out)
            },
            concat,
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
        Ok((coords, values))
    }

    /// The entries of any region, sorted by their positions.
    fn coo_by_position<T: SparseElement>(&self, region: &Region) -> Result<(Array2<u64>, Vec<T>)> {
        let ndim = region.rank();
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
        Ok((coords, sorted))
    }

    /// A 2-d region as one `sprs` CSR matrix of the region's shape (row `r` is array row
    /// `region.start[0] + r`, column `c` array column `region.start[1] + c`), built straight
    /// from the decoded sparse chunks: the chunks that meet the region are fetched and decoded
    /// in parallel, the entries of each row are counted, and each band of chunk rows then
    /// fills its own rows of the exactly sized index and value arrays in parallel. No dense
    /// data, no per-entry coordinates and no sort: apart from the result, it holds only the
    /// decoded chunks. The same matrix as `read_coo(region)?.to_csr()`.
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
    /// let s = a.sparse()?;
    /// s.write_coo(ndarray::arr2(&[[0u64, 1, 3], [5, 2, 3]]).view(), &[1.0f32, 2.0, 3.0])?;
    /// let m = s.read_csr::<f32>(&Region::new(vec![1, 2], vec![3, 4])?)?;
    /// assert_eq!((m.rows(), m.cols(), m.nnz()), (3, 4, 2)); // (0, 5) lies above the region
    /// assert_eq!(m.get(0, 0), Some(&2.0)); // array (1, 2)
    /// assert_eq!(m.get(2, 1), Some(&3.0)); // array (3, 3)
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// Another rank than 2, a `T` other than the array's data type, a region outside the
    /// array, and as [`SparseArray::chunks`].
    pub fn read_csr<T: SparseElement>(&self, region: &Region) -> Result<CsMat<T>> {
        self.read_csr_as::<T, usize>(region)
    }

    /// [`SparseArray::read_csr`] with column indices and row pointers of the index type
    /// `I`: `i32` gives the matrix SciPy builds for a matrix that fits it (and two thirds of
    /// the memory of `usize` indices for `f32` values), with no conversion afterwards.
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
    /// let s = a.sparse()?;
    /// s.write_coo(ndarray::arr2(&[[0u64, 3], [5, 3]]).view(), &[1.0f32, 3.0])?;
    /// let m = s.read_csr_as::<f32, i32>(&Region::whole(&[4, 6]))?;
    /// assert_eq!((m.indptr().raw_storage(), m.indices()), (&[0i32, 1, 1, 1, 2][..], &[5i32, 3][..]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`SparseArray::read_csr`], and [`ArrayError::TooLarge`] when the region's columns
    /// or its entries do not fit in `I`.
    pub fn read_csr_as<T: SparseElement, I: SpIndex + bytemuck::Zeroable>(
        &self,
        region: &Region,
    ) -> Result<CsMatI<T, I>> {
        let (indptr, indices, data) = self.read_csr_arrays::<T, I>(region)?;
        let shape = (indptr.len() - 1, region.shape[1] as usize);
        CsMatI::try_new(shape, indptr, indices, data)
            .map_err(|e| ArrayError::SparseStructure { source: e.3 })
    }

    /// The `(indptr, indices, data)` arrays of [`SparseArray::read_csr_as`], without the
    /// pass over every entry that `sprs` makes to check a matrix's structure: for a library
    /// that takes the arrays as they are (SciPy's `csr_array((data, indices, indptr))`
    /// checks only their lengths). They are the arrays of a canonical CSR matrix of the
    /// region's shape: `indptr` of `rows + 1` ascending pointers from 0, and in each row
    /// the columns ascending, each once.
    ///
    /// # Errors
    /// As [`SparseArray::read_csr_as`].
    pub fn read_csr_arrays<T: SparseElement, I: SpIndex + bytemuck::Zeroable>(
        &self,
        region: &Region,
    ) -> Result<(Vec<I>, Vec<I>, Vec<T>)> {
        self.array.check_type::<T>()?;
        if self.array.rank() != 2 {
            return Err(ArrayError::RankMismatch {
                operation: "a sparse matrix",
                path: self.array.path().to_string(),
                expected: 2,
                got: self.array.rank(),
            });
        }
        self.check_region(region)?;
        let too_large = || ArrayError::TooLarge {
            what: "a sparse matrix of this index type",
            shape: region.shape.clone(),
        };
        let dim = |n: u64| usize::try_from(n).map_err(|_| too_large());
        let (rows, cols) = (dim(region.shape[0])?, dim(region.shape[1])?);
        if I::try_from_usize(cols).is_none() {
            return Err(too_large());
        }
        let mut chunks = self.chunks_in(region)?;
        chunks.sort_by_key(|c| (c.place.origin[0], c.place.origin[1]));
        let parts: Vec<CsrPart> = chunks
            .into_iter()
            .filter_map(|c| CsrPart::of(c, region))
            .collect();
        let plan = CsrPlan::of(parts);
        let indptr = plan.row_pointers::<T>(rows)?;
        if I::try_from_usize(indptr[rows]).is_none() {
            return Err(too_large());
        }
        let (indices, data) = plan.fill::<T, I>(&indptr)?;
        // every pointer is at most the last, which fits
        let indptr = indptr.into_iter().map(I::from_usize_unchecked).collect();
        Ok((indptr, indices, data))
    }
}

impl CsrPlan {
    fn of(parts: Vec<CsrPart>) -> Self {
        let mut bands: Vec<Vec<CsrPart>> = Vec::new();
        for p in parts {
            match bands.last_mut() {
                Some(band) if band[0].chunk.place.origin[0] == p.chunk.place.origin[0] => {
                    band.push(p)
                }
                _ => bands.push(vec![p]),
            }
        }
        let band_rows = bands
            .iter()
            .map(|b| b[0].row0..b[0].row0 + (b[0].rows.end - b[0].rows.start) as usize)
            .collect();
        CsrPlan { bands, band_rows }
    }

    /// The error of a part's chunk, naming it.
    fn chunk_err(p: &CsrPart) -> impl FnOnce(zarr_layout_sparse::SparseError) -> ArrayError {
        sparse_err(format!("chunk {:?}", p.chunk.chunk_index()))
    }

    /// The row pointers of the matrix: entries per row (counted band by band in parallel),
    /// then their offsets.
    fn row_pointers<T: SparseElement>(&self, rows: usize) -> Result<Vec<usize>> {
        let what = "the row pointers of a sparse read";
        let mut indptr = try_zeroed(rows.saturating_add(1), what)?;
        split_ranges(&mut indptr[1..], &self.band_rows)
            .into_par_iter()
            .zip(&self.bands)
            .try_for_each(|(counts, band)| {
                band.iter().try_for_each(|p| {
                    let r0 = p.rows.start;
                    p.chunk
                        .row_lengths_in::<T>(p.rows.clone(), p.cols.clone(), |r, n| {
                            counts[(r - r0) as usize] += n;
                        })
                        .map_err(Self::chunk_err(p))
                })
            })?;
        for r in 0..rows {
            indptr[r + 1] += indptr[r];
        }
        Ok(indptr)
    }

    /// The column indices and values, each band filling its own rows in parallel and
    /// dropping each decoded chunk once it is copied (the peak memory is about the larger
    /// of the decoded chunks and the result, not their sum).
    fn fill<T: SparseElement, I: SpIndex + bytemuck::Zeroable>(
        self,
        indptr: &[usize],
    ) -> Result<(Vec<I>, Vec<T>)> {
        let nnz = indptr[indptr.len() - 1];
        let mut indices = try_zeroed(nnz, "the column indices of a sparse read")?;
        let mut data = try_zeroed(nnz, "the values of a sparse read")?;
        let spans: Vec<Range<usize>> = self
            .band_rows
            .iter()
            .map(|r| indptr[r.start]..indptr[r.end])
            .collect();
        split_ranges(&mut indices, &spans)
            .into_par_iter()
            .zip(split_ranges(&mut data, &spans))
            .zip(self.bands.into_par_iter().zip(&self.band_rows))
            .try_for_each(|((idx, val), (band, rows))| {
                let base = indptr[rows.start];
                let mut next: Vec<usize> = indptr[rows.clone()].iter().map(|&o| o - base).collect();
                band.into_iter().try_for_each(|p| {
                    p.chunk
                        .copy_rows_in(p.rows.clone(), p.cols.clone(), p.col0, &mut next, idx, val)
                        .map_err(Self::chunk_err(&p))
                    // p, and its decoded chunk, dropped here
                })
            })?;
        Ok((indices, data))
    }
}
