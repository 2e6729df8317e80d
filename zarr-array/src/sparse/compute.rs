//! Computations on the sparse chunks, chunk-parallel: [`SparseArray::map_reduce`] and what is
//! built on it ([`SparseArray::nnz`], [`SparseArray::sum`], [`SparseArray::spmv`]).

use std::any::TypeId;
use std::borrow::Cow;

use zarr_layout_sparse::{SparseError, SparseValue};

use super::{concat, sparse_err, Promote, SparseArray, SparseScalar, StoredSparseChunk};
use crate::error::{ArrayError, Result};

impl SparseArray<'_> {
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
    /// let s = a.sparse()?;
    /// s.write_coo(ndarray::arr2(&[[1u64, 5, 9]]).view(), &[4, -2, 7])?;
    /// // the largest stored value
    /// let max = s.map_reduce(
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
    /// As [`SparseArray::chunks`], and the first error `map` returns.
    pub fn map_reduce<R, ID, M, F>(&self, identity: ID, map: M, reduce: F) -> Result<R>
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
    /// As [`SparseArray::chunks`].
    pub fn nnz(&self) -> Result<u64> {
        self.map_reduce(|| 0u64, |c| Ok(c.nnz_in_array() as u64), |a, b| a + b)
    }

    /// The sum of the stored entries inside the array: the sum of the array when the fill
    /// value is zero. The result has NumPy's type for a sum ([`SparseScalar::Sum`]: `i64` or
    /// `u64` for integers, which wrap around at 64 bits as NumPy's do; the type itself for
    /// floating-point and complex types, accumulated wider and rounded once). Computed chunk
    /// by chunk in parallel.
    ///
    /// # Errors
    /// A `T` other than the array's data type, and as [`SparseArray::chunks`].
    pub fn sum<T: SparseScalar>(&self) -> Result<T::Sum> {
        self.array.check_type::<T>()?;
        let acc = self.map_reduce(
            T::acc_zero,
            |c| {
                let err = || sparse_err(format!("chunk {:?}", c.chunk_index()));
                // a chunk wholly inside the array: every stored value counts, summed straight
                // from the values section (no positions computed)
                if c.is_whole() {
                    let values = c.values::<T>().map_err(err())?;
                    return Ok(values
                        .iter()
                        .fold(T::acc_zero(), |s, &v| T::accumulate(s, v)));
                }
                let mut s = T::acc_zero();
                c.for_each_in_array::<T>(|_, v| s = T::accumulate(s, v))
                    .map_err(err())?;
                Ok(s)
            },
            T::combine,
        )?;
        Ok(T::finish(acc))
    }

    /// The sparse matrix-vector product `y = A x` of a 2-d array `A` (`x` has one element per
    /// column, `y` one per row), computed on the sparse chunks in parallel, in the array's
    /// element type (integers wrap around, as SciPy's do). The fill value must be zero.
    ///
    /// # Errors
    /// Another rank or element type, a nonzero fill value, an `x` of the wrong length, and as
    /// [`SparseArray::chunks`].
    pub fn spmv<T: SparseScalar>(&self, x: &[T]) -> Result<Vec<T>> {
        self.spmv_as::<T, T>(x)
    }

    /// The sparse matrix-vector product `y = A x` of a 2-d array `A` of element type `A`
    /// computed in another type `R` into which `A` converts ([`Promote`]): SciPy's `A @ x`
    /// for an `x` of another type, computed in the type of both, as
    /// `np.result_type(A.dtype, x.dtype)` (an `i32` array times an `f64` vector is computed
    /// in `f64`). Each chunk's values are converted once (with `R` the array's type, they are
    /// read in place, as [`SparseArray::spmv`] does).
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use zarr_array::{ArrayBuilder, DataType};
    /// # use zarr_array::zarr_layout_sparse::Format;
    /// # let a = ArrayBuilder::new(vec![2, 3], DataType::UInt8).chunk_shape(vec![2, 2])
    /// #     .sparse(Format::Csr).create(Arc::new(zarr_store::MemoryStore::new()), "m")?;
    /// let s = a.sparse()?;
    /// s.write_coo(ndarray::arr2(&[[0u64, 1], [0, 2]]).view(), &[200u8, 3])?;
    /// assert_eq!(s.spmv_as::<u8, f64>(&[0.5, 1.0, 2.5])?, vec![100.0, 7.5]);
    /// # Ok::<(), zarr_array::ArrayError>(())
    /// ```
    ///
    /// # Errors
    /// As [`SparseArray::spmv`] (the array's type must be `A`).
    pub fn spmv_as<A, R>(&self, x: &[R]) -> Result<Vec<R>>
    where
        A: SparseScalar + Promote<R>,
        R: SparseScalar,
    {
        let rows = self.check_spmv::<A>(x.len())?;
        self.spmv_with(rows, x, values_as::<A, R>)
    }

    /// `A x` in `R`, each chunk's values given as `R`s by `values` (the only part that
    /// depends on the array's type, so that the product is built once per `R`).
    fn spmv_with<R: SparseScalar>(
        &self,
        rows: usize,
        x: &[R],
        values: ValuesAs<R>,
    ) -> Result<Vec<R>> {
        // per chunk: (first array row, partial sums of its rows inside the array)
        let partials =
            self.map_reduce(Vec::new, |c| Ok(vec![spmv_chunk(c, x, values)?]), concat)?;
        let mut y = vec![R::zero(); rows];
        for (row0, part) in partials {
            for (slot, v) in y[row0..row0 + part.len()].iter_mut().zip(part) {
                *slot = slot.sparse_add(v);
            }
        }
        Ok(y)
    }

    /// Checks the operands of [`SparseArray::spmv_as`] for an array of `A` and an `x` of
    /// `x_len` elements; the number of rows of the product.
    fn check_spmv<A: SparseScalar>(&self, x_len: usize) -> Result<usize> {
        let a = self.array;
        a.check_type::<A>()?;
        if a.rank() != 2 {
            return Err(ArrayError::RankMismatch {
                operation: "spmv",
                path: a.path().to_string(),
                expected: 2,
                got: a.rank(),
            });
        }
        let fill: A = self.fill();
        if fill != A::zero() {
            return Err(ArrayError::NonZeroFill {
                operation: "spmv",
                path: a.path().to_string(),
                fill: format!("{fill:?}"),
            });
        }
        let (rows, cols) = (a.shape()[0], a.shape()[1]);
        if x_len as u64 != cols {
            return Err(ArrayError::ShapeMismatch {
                expected: vec![cols],
                got: vec![x_len as u64],
            });
        }
        usize::try_from(rows).map_err(|_| ArrayError::TooLarge {
            what: "the product vector",
            shape: vec![rows],
        })
    }
}

/// A chunk's values as `R`s: borrowed when `R` is the array's type, converted otherwise.
type ValuesAs<R> =
    for<'c> fn(&'c StoredSparseChunk) -> std::result::Result<Cow<'c, [R]>, SparseError>;

/// The values of a chunk of an `A` array as `R`s.
fn values_as<A: SparseValue + Promote<R>, R: SparseValue>(
    c: &StoredSparseChunk,
) -> std::result::Result<Cow<'_, [R]>, SparseError> {
    if TypeId::of::<A>() == TypeId::of::<R>() {
        return c.values::<R>().map(Cow::Borrowed);
    }
    Ok(Cow::Owned(
        c.values::<A>()?.iter().map(|&v| v.promote()).collect(),
    ))
}

/// One chunk's part of `A x`: its first array row and the partial sums of its rows inside
/// the array.
fn spmv_chunk<R: SparseScalar>(
    c: &StoredSparseChunk,
    x: &[R],
    values: ValuesAs<R>,
) -> Result<(usize, Vec<R>)> {
    let err = || sparse_err(format!("chunk {:?}", c.chunk_index()));
    let valid = c.valid_region();
    let row0 = c.origin()[0] + valid.start[0] as i64;
    let col0 = c.origin()[1];
    let mut y = vec![R::zero(); valid.shape[0] as usize];
    let first = valid.start[0];
    let values = values(c).map_err(err())?;
    c.for_each_2d_of(&values, |r, col, v| {
        let slot = &mut y[(r - first) as usize];
        *slot = slot.sparse_add(v.sparse_mul(x[(col0 + col as i64) as usize]));
    })
    .map_err(err())?;
    Ok((row0 as usize, y))
}
