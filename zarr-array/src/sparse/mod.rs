//! Sparse chunks: arrays whose chunks are stored with the `sparse_layout` codec (directly, or as
//! the inner codec of `sharding_indexed`), read, written and computed on in their sparse form.
//!
//! Dense reads and writes of such arrays work as for any array (the codec densifies and
//! sparsifies). On top of that, [`Array::sparse`] gives a [`SparseArray`]: a handle that holds
//! the resolved plan (the leaf chain, whose leaf chunks are the chunks themselves or the inner
//! chunks of zero or more levels of sharding, and its `sparse_layout` codec), so every sparse
//! operation is a method of it and none can meet a dense array:
//!
//! - [`SparseArray::chunks`] and [`SparseArray::chunks_in`]: every stored leaf chunk (of a
//!   region) as a [`StoredSparseChunk`], which owns the buffer the codec chain decoded (after
//!   `zstd`, `crc32c`, ...; not densified) and hands out zero-copy views of it: COO coordinates
//!   as an `ndarray::ArrayView2` plus a values slice, or a `sprs::CsMatViewI` for CSR/CSC.
//! - [`SparseArray::read_coo`]: the entries of a region as a global COO ([`SparseCoo`]) in
//!   array positions (or domain coordinates for `regular_bounded`); for 2-d,
//!   [`SparseArray::read_csr`] builds a `sprs::CsMat` straight from the decoded chunks.
//! - [`SparseArray::write_coo`] and [`SparseArray::write_sprs`]: writes from coordinates and
//!   values or a `sprs` matrix that never build the dense array: entries are grouped by chunk,
//!   merged with the chunk's stored entries, and encoded from triples; chunks left empty are
//!   deleted.
//! - [`SparseArray::map_reduce`]: chunk-parallel map/reduce over the sparse chunks (rayon),
//!   with [`SparseArray::nnz`], [`SparseArray::sum`] and the sparse matrix-vector product
//!   [`SparseArray::spmv`] built on it.
//!
//! Entries that a chunk holds outside the array (edge chunks, the partly filled first chunk of
//! `regular_bounded`) are ignored by every read and dropped when the chunk is rewritten.
//!
//! The code is split by concern: this module holds the handle and the walk over stored
//! chunks, `chunk` the decoded chunk and its views, `read` the region reads, `write` the
//! writes, `compute` the map/reduce and what is built on it.
//!
//! ```
//! use std::sync::Arc;
//! use zarr_array::zarr_grid::geometry::Region;
//! use zarr_array::{ArrayBuilder, DataType};
//! use zarr_array::zarr_layout_sparse::Format;
//! use zarr_store::MemoryStore;
//!
//! let store = Arc::new(MemoryStore::new());
//! let a = ArrayBuilder::new(vec![6, 8], DataType::Float64)
//!     .chunk_shape(vec![4, 4])
//!     .sparse(Format::Csr) // narrowest index and pointer types, zstd after it
//!     .create(store, "m")?;
//! let s = a.sparse()?; // the sparse handle: fails for an array without sparse chunks
//! // (row, column) of three entries, as a (2, nnz) block, and their values
//! let coords = ndarray::arr2(&[[0u64, 2, 5], [1, 6, 3]]);
//! s.write_coo(coords.view(), &[1.0, 2.0, 3.0])?;
//! assert_eq!(s.nnz()?, 3);
//! assert_eq!(s.sum::<f64>()?, 6.0);
//! assert_eq!(s.spmv(&[1.0; 8])?, vec![1.0, 0.0, 2.0, 0.0, 0.0, 3.0]);
//!
//! // per chunk, views into the decoded buffers
//! for chunk in s.chunks()? {
//!     let m = chunk.sprs_view::<f64, u16, u32>()?;
//!     assert!(chunk.buffer().as_ptr_range().contains(&m.data().as_ptr().cast()));
//! }
//! // a region as COO (array positions) or CSR (the region's rows and columns)
//! let coo = s.read_coo::<f64>(&Region::new(vec![0, 0], vec![6, 4])?)?;
//! assert_eq!(coo.coords(), ndarray::arr2(&[[0u64, 5], [1, 3]]));
//! assert_eq!(coo.to_csr()?.get(5, 3), Some(&3.0));
//! assert_eq!(s.read_csr::<f64>(&Region::whole(&[6, 8]))?.get(2, 6), Some(&2.0));
//! // dense reads see the same data
//! assert_eq!(a.read_all::<f64>()?[[2, 6]], 2.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod chunk;
mod compute;
mod read;
mod write;

use rayon::prelude::*;
use zarr_codecs::sparse_layout::SparseLayoutCodec;
use zarr_codecs::{AlignedBuffer, ChunkOut, CodecChain, CodecError};
use zarr_grid::geometry::Region;
use zarr_layout_sparse::{Layout, SparseError, SparseSum, SparseValue};
use zarr_store::Store;

use crate::array::Array;
use crate::element::Element;
use crate::error::{ArrayError, Result};

pub use chunk::StoredSparseChunk;
pub use read::SparseCoo;

/// An element type of the sparse API: an [`Element`] that is also a [`SparseValue`] (every
/// numeric type; a `bool` array is read and written densely).
pub trait SparseElement: Element + SparseValue {}

impl<T: Element + SparseValue> SparseElement for T {}

/// A numeric element for sparse computations ([`SparseArray::sum`], [`SparseArray::spmv`]).
///
/// Sums are returned in NumPy's type for `sum` ([`SparseScalar::Sum`]: 64-bit for every
/// integer type, the type itself for floating-point and complex types, as SciPy's sparse
/// `sum` gives too) and accumulated in a type at least that wide ([`SparseScalar::Acc`]), so
/// a `u8` array of sixteen 200s sums to 3200. Integer arithmetic wraps around (at 64 bits for
/// sums, in the element type for products, as NumPy and SciPy do).
pub trait SparseScalar: SparseElement + SparseSum + PartialEq + Promote<Self> {
    /// The type of a sum: `i64` for signed integers, `u64` for unsigned ones, the type
    /// itself for floating-point and complex types (NumPy's result type of `sum`).
    type Sum: SparseElement + PartialEq + std::fmt::Debug;
    /// What a sum accumulates in: the sum type for integers (wrapping around), `f32` for
    /// `f16` (as NumPy sums halves), `f64` for `f32` and `f64`, `Complex64` (`f64` parts) for
    /// both complex types; rounded to [`SparseScalar::Sum`] once, at the end.
    type Acc: Copy + Send + Sync;
    /// Zero.
    fn zero() -> Self;
    /// The product (integers wrap around).
    fn sparse_mul(self, other: Self) -> Self;
    /// The accumulator of an empty sum.
    fn acc_zero() -> Self::Acc;
    /// `acc + v`.
    fn accumulate(acc: Self::Acc, v: Self) -> Self::Acc;
    /// The accumulator of two partial sums (associative).
    fn combine(a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// The sum an accumulator holds, in the sum type.
    fn finish(acc: Self::Acc) -> Self::Sum;
}

macro_rules! int_scalar {
    ($($t:ty => $sum:ty),*) => {$(
        impl SparseScalar for $t {
            type Sum = $sum;
            type Acc = $sum;
            fn zero() -> Self {
                0
            }
            fn sparse_mul(self, other: Self) -> Self {
                self.wrapping_mul(other)
            }
            fn acc_zero() -> $sum {
                0
            }
            #[inline]
            fn accumulate(acc: $sum, v: Self) -> $sum {
                acc.wrapping_add(<$sum>::from(v))
            }
            fn combine(a: $sum, b: $sum) -> $sum {
                a.wrapping_add(b)
            }
            fn finish(acc: $sum) -> $sum {
                acc
            }
        }
    )*};
}

int_scalar!(
    i8 => i64, i16 => i64, i32 => i64, i64 => i64,
    u8 => u64, u16 => u64, u32 => u64, u64 => u64
);

macro_rules! float_scalar {
    ($($t:ty => $zero:expr, $acc:ty: $widen:expr, $round:expr);* $(;)?) => {$(
        impl SparseScalar for $t {
            type Sum = $t;
            type Acc = $acc;
            fn zero() -> Self {
                $zero
            }
            fn sparse_mul(self, other: Self) -> Self {
                self * other
            }
            fn acc_zero() -> $acc {
                <$acc>::default()
            }
            #[inline]
            fn accumulate(acc: $acc, v: Self) -> $acc {
                acc + $widen(v)
            }
            fn combine(a: $acc, b: $acc) -> $acc {
                a + b
            }
            fn finish(acc: $acc) -> $t {
                $round(acc)
            }
        }
    )*};
}

float_scalar!(
    half::f16 => half::f16::ZERO, f32: half::f16::to_f32, half::f16::from_f32;
    f32 => 0.0, f64: f64::from, |a: f64| a as f32;
    f64 => 0.0, f64: |v: f64| v, |a: f64| a;
    num_complex::Complex32 => num_complex::Complex32::new(0.0, 0.0), num_complex::Complex64:
        |v: num_complex::Complex32| num_complex::Complex64::new(v.re.into(), v.im.into()),
        |a: num_complex::Complex64| num_complex::Complex32::new(a.re as f32, a.im as f32);
    num_complex::Complex64 => num_complex::Complex64::new(0.0, 0.0), num_complex::Complex64:
        |v: num_complex::Complex64| v, |a: num_complex::Complex64| a;
);

/// An exact or NumPy-safe conversion of an array element into the type `R` a product is
/// computed in ([`SparseArray::spmv_as`]): implemented for the pairs NumPy's
/// `can_cast(.., "safe")` allows (wider integers, integers of either signedness that hold
/// every value, floating-point and complex types wide enough; `i64` and `u64` into `f64` round
/// as NumPy's do), so an `R` of `np.result_type(A, x)` is always one.
pub trait Promote<R>: Copy {
    /// `self` as an `R`.
    fn promote(self) -> R;
}

macro_rules! promote_as {
    ($($src:ty => $($dst:ty),*);* $(;)?) => {$($(
        impl Promote<$dst> for $src {
            #[inline]
            fn promote(self) -> $dst {
                self as $dst
            }
        }
    )*)*};
}

promote_as!(
    i8 => i8, i16, i32, i64, f32, f64;
    i16 => i16, i32, i64, f32, f64;
    i32 => i32, i64, f64;
    i64 => i64, f64;
    u8 => u8, u16, u32, u64, i16, i32, i64, f32, f64;
    u16 => u16, u32, u64, i32, i64, f32, f64;
    u32 => u32, u64, i64, f64;
    u64 => u64, f64;
    f32 => f32, f64;
    f64 => f64;
);

macro_rules! promote_with {
    ($($src:ty => $dst:ty: $f:expr);* $(;)?) => {$(
        impl Promote<$dst> for $src {
            #[inline]
            fn promote(self) -> $dst {
                $f(self)
            }
        }
    )*};
}

promote_with!(
    i8 => half::f16: |v: i8| half::f16::from_f32(f32::from(v));
    u8 => half::f16: |v: u8| half::f16::from_f32(f32::from(v));
    half::f16 => half::f16: |v| v;
    half::f16 => f32: half::f16::to_f32;
    half::f16 => f64: half::f16::to_f64;
    num_complex::Complex32 => num_complex::Complex32: |v| v;
    num_complex::Complex32 => num_complex::Complex64:
        |v: num_complex::Complex32| num_complex::Complex64::new(v.re.into(), v.im.into());
    num_complex::Complex64 => num_complex::Complex64: |v| v;
);

macro_rules! promote_complex {
    ($c:ty, $f:ty: $($src:ty),*) => {$(
        impl Promote<$c> for $src {
            #[inline]
            fn promote(self) -> $c {
                <$c>::new(Promote::<$f>::promote(self), 0.0)
            }
        }
    )*};
}

promote_complex!(num_complex::Complex32, f32: i8, i16, u8, u16, half::f16, f32);
promote_complex!(num_complex::Complex64, f64: i8, i16, i32, i64, u8, u16, u32, u64, half::f16, f32, f64);

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
        // array -> array codecs at any level: the leaf chain has them (and `of` refuses it),
        // or ends the descent at a level whose array -> bytes codec is not sparse_layout
        let codec = SparseLayoutCodec::of(leaf)?;
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

/// The sparse side of an array whose chunks are stored with `sparse_layout`: see the
/// [module documentation](self). Made by [`Array::sparse`]; it borrows the array and holds the
/// resolved plan (the leaf chain and its `sparse_layout` codec), so its methods do not look
/// for it again and cannot meet a dense array.
#[derive(Debug, Clone)]
pub struct SparseArray<'a> {
    array: &'a Array,
    plan: Plan<'a>,
    /// The lower bounds of the array's domain (zero unless the grid is `regular_bounded`).
    lower: Vec<i64>,
}

impl Array {
    /// The sparse handle of an array whose chunks are stored with `sparse_layout` (directly
    /// or as the inner codec of `sharding_indexed`, at any depth, without array -> array
    /// codecs): reads, writes and computations on the sparse chunks.
    ///
    /// # Errors
    /// [`ArrayError::NotSparse`] (naming the array and its codecs) for any other array.
    /// [`ArrayError::ChunksDiffer`] for an array whose chunks differ in shape
    /// (`rectilinear`).
    pub fn sparse(&self) -> Result<SparseArray<'_>> {
        if self.grid.chunk_shape().is_none() {
            return Err(ArrayError::ChunksDiffer {
                operation: "sparse access",
                path: self.path().to_string(),
                grid: self.grid.name().to_string(),
            });
        }
        let plan = Plan::of(&self.chain).ok_or_else(|| ArrayError::NotSparse {
            path: self.path().to_string(),
            codecs: self.chain.to_defs().into_iter().map(|d| d.name).collect(),
        })?;
        Ok(SparseArray {
            array: self,
            plan,
            lower: self.domain().into_iter().map(|(l, _)| l).collect(),
        })
    }

    /// Whether the array's chunks are stored with `sparse_layout`, so that
    /// [`Array::sparse`] succeeds (a cheap test: no store access).
    pub fn is_sparse(&self) -> bool {
        self.grid.chunk_shape().is_some() && Plan::of(&self.chain).is_some()
    }
}

impl<'a> SparseArray<'a> {
    /// The array.
    pub fn array(&self) -> &'a Array {
        self.array
    }

    /// The layout of the sparse chunks (format, index and pointer types).
    pub fn layout(&self) -> &'a Layout {
        self.plan.codec.layout()
    }

    /// The shape of the sparse chunks: the leaf shape (the array's chunk shape, or for a
    /// sharded array the innermost chunk shape).
    pub fn chunk_shape(&self) -> &'a [u64] {
        self.plan.codec.chunk_shape()
    }

    /// Every stored sparse chunk (for a sharded array, every stored inner chunk), decoded but
    /// not densified, in C order of the chunk (then inner chunk) indices. Chunks are fetched
    /// and decoded in parallel. For large arrays prefer [`SparseArray::map_reduce`], which
    /// holds only the chunks being processed.
    ///
    /// # Errors
    /// Store errors, corrupt chunks.
    pub fn chunks(&self) -> Result<Vec<StoredSparseChunk>> {
        self.fold_stored(None, Vec::new, Ok, concat)
    }

    /// The stored sparse chunks that meet `region` (whole chunks: their entries outside the
    /// region are not removed). For a sharded array, only the inner chunks that meet the
    /// region are decoded.
    ///
    /// # Errors
    /// As [`SparseArray::chunks`], and a region outside the array.
    pub fn chunks_in(&self, region: &Region) -> Result<Vec<StoredSparseChunk>> {
        self.check_region(region)?;
        self.fold_stored(Some(region), Vec::new, Ok, concat)
    }

    /// `region` lies inside the array.
    fn check_region(&self, region: &Region) -> Result<()> {
        Ok(region.check_inside(self.array.shape())?)
    }

    /// The place of a grid chunk; `None` outside the grid.
    fn place_of(&self, chunk: &[i64]) -> Option<Place> {
        let part = self.array.grid.chunk_part(chunk)?;
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
        bytes: &[u8],
        place: &Place,
        wanted: &Region,
    ) -> std::result::Result<Vec<StoredSparseChunk>, CodecError> {
        let plan = &self.plan;
        let sharded = plan.chain.is_sharded();
        let leaves = plan
            .chain
            .visit_stored_leaves(bytes, Some(wanted), |idx, leaf| {
                // a leaf wholly outside the array is not read
                let Some(sub) = place.sub(sharded.then(|| idx.to_vec()), &plan.leaf_region(idx))
                else {
                    return Ok(None);
                };
                let buffer = serialized(plan.leaf, leaf)?;
                StoredSparseChunk::new(buffer, plan.codec, sub, self.lower.clone()).map(Some)
            })?;
        Ok(leaves.into_iter().flatten().collect())
    }

    /// The stored chunks to visit: every stored chunk (listing the store) for the whole
    /// array, else the chunks that meet `region`, each with the part of its buffer wanted.
    fn targets(&self, region: Option<&Region>) -> Result<Vec<(Vec<i64>, Region)>> {
        match region {
            None => Ok(self
                .array
                .stored_chunks()?
                .into_iter()
                .map(|chunk| (chunk, Region::whole(&self.array.chain.repr().shape)))
                .collect()),
            // a region over many chunks: most of them are usually not stored in a sparse
            // array, so list the stored ones instead of asking for each
            Some(region) if self.chunks_meeting(region)? > LIST_STORED_ABOVE => {
                self.stored_targets(region)
            }
            Some(region) => Ok(self
                .array
                .grid
                .chunks_in_region(region)?
                .map(|part| (part.chunk, part.in_chunk))
                .collect()),
        }
    }

    /// The stored chunks that meet `region`, found by listing the store.
    fn stored_targets(&self, region: &Region) -> Result<Vec<(Vec<i64>, Region)>> {
        let mut out = Vec::new();
        for chunk in self.array.stored_chunks()? {
            let Some(part) = self.array.grid.chunk_part(&chunk) else {
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

    /// The number of chunks that meet a non-empty `region` inside the array (saturating).
    fn chunks_meeting(&self, region: &Region) -> Result<u64> {
        let last: Vec<u64> = region
            .start
            .iter()
            .zip(&region.shape)
            .map(|(&s, &n)| s + n - 1)
            .collect();
        let (first, _) = self.array.grid.chunk_of(&region.start)?;
        let (end, _) = self.array.grid.chunk_of(&last)?;
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
        if region.is_some_and(Region::is_empty) || self.array.shape().contains(&0) {
            return Ok(identity());
        }
        let targets = self.targets(region)?;
        // one stored chunk, read through `store` (the array's, or a batch's replay)
        let one = |store: &dyn Store, (chunk, wanted): &(Vec<i64>, Region)| -> Result<R> {
            let key = self.array.chunk_key(chunk);
            let (Some(bytes), Some(place)) = (store.get(&key)?, self.place_of(chunk)) else {
                return Ok(identity());
            };
            let chunks = self
                .collect_value(&bytes, &place, wanted)
                .map_err(|source| ArrayError::Codec {
                    context: key,
                    source,
                })?;
            map(chunks)
        };
        let store = &*self.array.store;
        if crate::fetch::batched(store) {
            // a remote store: every chunk requested at once, each decoded as it arrives
            let mut slots: Vec<_> = targets.iter().map(|t| (t, None::<R>)).collect();
            crate::fetch::run_fetched(store, &mut slots, &|replay, (target, out)| {
                *out = Some(one(replay, target)?);
                Ok(())
            })?;
            return Ok(slots
                .into_iter()
                .filter_map(|(_, r)| r)
                .fold(identity(), &reduce));
        }
        targets
            .par_iter()
            .map(|target| one(store, target))
            .try_reduce(&identity, |a, b| Ok(reduce(a, b)))
    }

    /// The array's fill value as a `T` (the caller has checked `T`).
    fn fill<T: SparseValue>(&self) -> T {
        bytemuck::pod_read_unaligned(self.array.fill_value().as_bytes())
    }
}

/// Appends `b` to `a`: the reduction that collects per-chunk lists.
fn concat<X>(mut a: Vec<X>, b: Vec<X>) -> Vec<X> {
    a.extend(b);
    a
}

/// The sparse form of a stored leaf: what its `sparse_layout` codec decodes, in the buffer the
/// chain's innermost bytes -> bytes decoder produced.
pub(crate) fn serialized(
    chain: &CodecChain,
    bytes: &[u8],
) -> std::result::Result<AlignedBuffer, CodecError> {
    let mut buffer = AlignedBuffer::default();
    chain.decode_into(bytes, ChunkOut::Serialized(&mut buffer))?;
    Ok(buffer)
}
