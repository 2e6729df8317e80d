//! The [`ChunkGrid`] trait, its registry and the arithmetic shared by the regular grids.
//!
//! A chunk grid is bound to an array shape: it is built from the `chunk_grid` definition of
//! the metadata and the array's `shape` (see [`build_grid`]) and rebuilt for a new shape with
//! [`ChunkGrid::with_shape`].
//!
//! Terms, per dimension (the regular grid is the case `o = 0`, `L = 0`):
//!
//! - **position** `i` in `0..n`: what users index with (`u64`);
//! - **coordinate** `x = L + i` (`i64`), the array's **domain** is `[L, L + n)`;
//! - **grid index** `g` (`i64`, may be negative): the chunk covering coordinates
//!   `[o + g*c, o + (g+1)*c)`; `g(x) = floor((x - o) / c)`;
//! - **chunk buffer**: always the full chunk shape; the first chunk's first array element
//!   sits at the **buffer offset** `shift = (L - o) mod c`, every other chunk starts at 0.
//!
//! ```
//! use zarr_grid::{build_grid, default_registry, geometry::Region, ChunkGrid};
//! use zarr_meta::ExtensionDef;
//!
//! let def: ExtensionDef =
//!     serde_json::from_str(r#"{"name": "regular", "configuration": {"chunk_shape": [4, 4]}}"#)
//!         .unwrap();
//! let grid = build_grid(&default_registry(), &def, &[6, 4]).unwrap();
//! assert_eq!(grid.grid_range(), vec![0..2, 0..1]);
//! assert_eq!(grid.chunk_of(&[5, 2]).unwrap(), (vec![1, 0], vec![1, 2]));
//! let parts: Vec<_> = grid.chunks_in_region(&Region::whole(&[6, 4])).unwrap().collect();
//! assert_eq!(parts.len(), 2);
//! assert_eq!(parts[1].in_chunk, Region::new(vec![0, 0], vec![2, 4]).unwrap());
//! ```

use std::any::Any;
use std::fmt;
use std::num::NonZeroU64;
use std::ops::Range;

use zarr_meta::{ExtensionDef, ExtensionPoint, Registry};

use crate::error::GridError;
use crate::geometry::{GeometryError, Region};

/// The part of a region that one chunk covers: what every chunk iteration of the workspace
/// ([`ChunkGrid::chunks_in_region`], [`crate::geometry::regular_chunks_in_region`]) yields.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ChunkPart {
    /// The chunk's grid index (negative before the origin).
    pub chunk: Vec<i64>,
    /// The covered part, in positions inside the chunk buffer (the buffer offset included).
    pub in_chunk: Region,
    /// The covered part, in positions relative to the region's start.
    pub in_region: Region,
}

impl ChunkPart {
    /// Whether the part is the whole chunk buffer of `buffer_shape` (the chunk's
    /// [`ChunkGrid::chunk_buffer_shape`]), so a write can encode it without reading the chunk
    /// first.
    pub fn is_whole_chunk(&self, buffer_shape: &[u64]) -> bool {
        self.in_chunk.start.iter().all(|&s| s == 0) && self.in_chunk.shape == buffer_shape
    }

    /// Calls `f(in chunk, in region)` for every position the part covers, in its C order:
    /// the position's C-order linear index in a chunk buffer of `chunk_shape` and in a region
    /// buffer of `region_shape`. Stops at the first error `f` returns.
    ///
    /// ```
    /// use zarr_grid::geometry::{regular_chunks_in_region, Region};
    ///
    /// let region = Region::new(vec![1, 1], vec![2, 2]).unwrap();
    /// let part = regular_chunks_in_region(&[4, 4], &region).next().unwrap();
    /// let mut seen = Vec::new();
    /// part.try_for_each_position(&[4, 4], &[2, 2], |c, r| {
    ///     seen.push((c, r));
    ///     Ok::<(), ()>(())
    /// })
    /// .unwrap();
    /// assert_eq!(seen, [(5, 0), (6, 1), (9, 2), (10, 3)]);
    /// ```
    pub fn try_for_each_position<E>(
        &self,
        chunk_shape: &[u64],
        region_shape: &[u64],
        mut f: impl FnMut(usize, usize) -> Result<(), E>,
    ) -> Result<(), E> {
        let shape = &self.in_chunk.shape;
        if shape.contains(&0) {
            return Ok(());
        }
        let rank = shape.len();
        let mut p = vec![0u64; rank];
        let mut in_chunk = vec![0u64; rank];
        let mut in_region = vec![0u64; rank];
        loop {
            for d in 0..rank {
                in_chunk[d] = self.in_chunk.start[d] + p[d];
                in_region[d] = self.in_region.start[d] + p[d];
            }
            // both lie inside the buffers the caller holds, so they fit in usize
            f(
                crate::geometry::linear_index(&in_chunk, chunk_shape) as usize,
                crate::geometry::linear_index(&in_region, region_shape) as usize,
            )?;
            let mut d = rank;
            loop {
                if d == 0 {
                    return Ok(());
                }
                d -= 1;
                p[d] += 1;
                if p[d] < shape[d] {
                    break;
                }
                p[d] = 0;
            }
        }
    }
}

/// A chunk grid bound to an array shape.
///
/// Object safe; arrays hold a `Box<dyn ChunkGrid>` built by [`build_grid`]. Grid indices are
/// `i64` and may be negative; positions are zero-based `u64`.
pub trait ChunkGrid: fmt::Debug + Send + Sync {
    /// The grid's extension name (`regular`, `regular_bounded`, `rectilinear`).
    fn name(&self) -> &str;

    /// The array shape the grid is bound to.
    fn shape(&self) -> &[u64];

    /// The shape of every chunk buffer, when all chunks have one (`regular`,
    /// `regular_bounded`, a `rectilinear` grid whose axes are all integers); `None` when
    /// chunks differ (see [`ChunkGrid::chunk_buffer_shape`]).
    fn chunk_shape(&self) -> Option<&[NonZeroU64]>;

    /// The shape of chunk `chunk`'s buffer (what its codecs encode; a last chunk reaching
    /// past the array's end has it whole). `None` for a chunk outside
    /// [`ChunkGrid::grid_range`] or of the wrong rank.
    fn chunk_buffer_shape(&self, chunk: &[i64]) -> Option<Vec<u64>>;

    /// The array's domain `[L, L + n)` per dimension (`L = 0` for a regular grid).
    fn domain(&self) -> Vec<(i64, i64)>;

    /// The grid indices of the array's chunks, per dimension (an empty range on an axis of
    /// length 0).
    fn grid_range(&self) -> Vec<Range<i64>>;

    /// The chunk holding `position` and the position's offset inside that chunk's buffer.
    ///
    /// # Errors
    /// [`GridError::DimensionMismatch`] or [`GridError::PositionOutOfBounds`].
    fn chunk_of(&self, position: &[u64]) -> Result<(Vec<i64>, Vec<u64>), GridError>;

    /// The array positions chunk `chunk` covers (`in_region`, in zero-based array positions:
    /// the region is the whole array) and where they lie in its buffer (`in_chunk`, the
    /// buffer offset included). `None` for a chunk outside [`ChunkGrid::grid_range`] or of
    /// the wrong rank.
    fn chunk_part(&self, chunk: &[i64]) -> Option<ChunkPart>;

    /// Where the array's data starts inside the chunk buffer, per dimension: the shift
    /// `(L - o) mod c` on an axis where `chunk` is the first chunk, 0 otherwise.
    fn buffer_offset(&self, chunk: &[i64]) -> Vec<u64>;

    /// The chunks that intersect `region`, in C order of their grid indices, each with the
    /// parts of its buffer and of the region it covers. Every position of the region is
    /// covered exactly once; an empty region yields nothing.
    ///
    /// # Errors
    /// [`GridError::DimensionMismatch`] or [`GridError::RegionOutOfBounds`].
    fn chunks_in_region(
        &self,
        region: &Region,
    ) -> Result<Box<dyn Iterator<Item = ChunkPart> + Send + '_>, GridError>;

    /// The grid's definition for the metadata (typed configuration written back).
    fn to_def(&self) -> ExtensionDef;

    /// The same grid bound to another shape of the same rank (resize, append).
    ///
    /// # Errors
    /// A rank mismatch, or a bound that overflows i64.
    fn with_shape(&self, shape: &[u64]) -> Result<Box<dyn ChunkGrid>, GridError>;

    /// A boxed copy.
    fn clone_box(&self) -> Box<dyn ChunkGrid>;

    /// The concrete grid, for downcasting.
    fn as_any(&self) -> &dyn Any;

    /// The rank.
    fn rank(&self) -> usize {
        self.shape().len()
    }

    /// The chunk shape as plain integers, when all chunks have one.
    fn chunk_shape_u64(&self) -> Option<Vec<u64>> {
        self.chunk_shape()
            .map(|cs| cs.iter().map(|c| c.get()).collect())
    }

    /// The array positions chunk `chunk` covers, clipped to the array (see
    /// [`ChunkGrid::chunk_part`] for where they lie in the buffer).
    fn chunk_region(&self, chunk: &[i64]) -> Option<Region> {
        self.chunk_part(chunk).map(|p| p.in_region)
    }

    /// The number of chunks, `None` if it does not fit in `u64`.
    fn num_chunks(&self) -> Option<u64> {
        range_count(&self.grid_range())
    }

    /// Whether `chunk` is one of the array's chunks.
    fn contains_chunk(&self, chunk: &[i64]) -> bool {
        let range = self.grid_range();
        chunk.len() == range.len() && chunk.iter().zip(&range).all(|(g, r)| r.contains(g))
    }

    /// Every chunk index of the array, in C order.
    fn chunk_indices(&self) -> ChunkIndices {
        ChunkIndices::new(self.grid_range())
    }
}

impl Clone for Box<dyn ChunkGrid> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// The number of index tuples in a box of ranges, `None` on overflow.
pub(crate) fn range_count(ranges: &[Range<i64>]) -> Option<u64> {
    ranges.iter().try_fold(1u64, |acc, r| {
        let len = if r.end > r.start {
            r.end.abs_diff(r.start)
        } else {
            0
        };
        acc.checked_mul(len)
    })
}

/// The index tuples of a box of grid index ranges, in C order (the empty tuple once for
/// rank 0, nothing if any range is empty). Owns its ranges.
#[derive(Debug, Clone)]
pub struct ChunkIndices {
    ranges: Vec<Range<i64>>,
    next: Option<Vec<i64>>,
}

impl ChunkIndices {
    /// The tuples of `ranges`.
    pub fn new(ranges: Vec<Range<i64>>) -> Self {
        let next = if ranges.iter().any(|r| r.start >= r.end) {
            None
        } else {
            Some(ranges.iter().map(|r| r.start).collect())
        };
        ChunkIndices { ranges, next }
    }
}

impl Iterator for ChunkIndices {
    type Item = Vec<i64>;

    fn next(&mut self) -> Option<Vec<i64>> {
        let cur = self.next.take()?;
        let mut succ = cur.clone();
        let mut d = succ.len();
        while d > 0 {
            d -= 1;
            // `succ[d] < end <= i64::MAX`, so the increment cannot overflow
            if succ[d] + 1 < self.ranges[d].end {
                succ[d] += 1;
                self.next = Some(succ);
                break;
            }
            succ[d] = self.ranges[d].start;
        }
        Some(cur)
    }
}

/// Builds a chunk grid from its definition and the array shape.
pub type ChunkGridFactory = fn(&ExtensionDef, &[u64]) -> Result<Box<dyn ChunkGrid>, GridError>;

/// Resolves `def` through `registry` (applying the `must_understand` rules) and builds the
/// grid for an array of `shape`.
///
/// # Errors
/// [`GridError::Meta`] for an unknown, compiled-out or `must_understand`-flagged grid or an
/// invalid configuration; the grid's own validation errors otherwise.
pub fn build_grid(
    registry: &Registry<ChunkGridFactory>,
    def: &ExtensionDef,
    shape: &[u64],
) -> Result<Box<dyn ChunkGrid>, GridError> {
    let factory = registry.resolve_required(def)?;
    factory(def, shape)
}

/// Registers the grids of this build: `regular`, `regular_bounded` (feature
/// `regular-bounded`) and `rectilinear` (feature `rectilinear`); a name compiled out is
/// recorded as such, so that its error names the feature.
///
/// # Errors
/// If a name is already registered.
pub fn register_defaults(registry: &mut Registry<ChunkGridFactory>) -> Result<(), GridError> {
    registry.register(
        crate::regular::NAME,
        crate::regular::factory as ChunkGridFactory,
    )?;
    #[cfg(feature = "regular-bounded")]
    registry.register(
        crate::regular_bounded::NAME,
        crate::regular_bounded::factory as ChunkGridFactory,
    )?;
    #[cfg(not(feature = "regular-bounded"))]
    registry.register_compiled_out("regular_bounded", "regular-bounded");
    #[cfg(feature = "rectilinear")]
    registry.register(
        crate::rectilinear::NAME,
        crate::rectilinear::factory as ChunkGridFactory,
    )?;
    #[cfg(not(feature = "rectilinear"))]
    registry.register_compiled_out("rectilinear", "rectilinear");
    Ok(())
}

/// A chunk grid registry holding every grid of this build.
pub fn default_registry() -> Registry<ChunkGridFactory> {
    let mut r = Registry::new(ExtensionPoint::ChunkGrid);
    // cannot fail: the registry is new and the names are distinct
    let _ = register_defaults(&mut r);
    r
}

/// Checks that a list has the array's rank.
pub(crate) fn check_rank(what: &'static str, expected: usize, got: usize) -> Result<(), GridError> {
    if expected == got {
        Ok(())
    } else {
        Err(GridError::DimensionMismatch {
            what,
            expected,
            got,
        })
    }
}

/// One validated dimension of a regular (bounded) grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Axis {
    c: NonZeroU64,
    o: i64,
    l: i64,
    n: u64,
    /// first grid index `g(L)`
    g0: i64,
    /// one past the last grid index (`g0` when `n = 0`)
    g_end: i64,
    /// `(L - o) mod c`
    shift: u64,
}

/// Converts a value proven to lie in `0..=u64::MAX`.
fn to_u64(x: i128) -> u64 {
    debug_assert!((0..=i128::from(u64::MAX)).contains(&x));
    x as u64
}

/// Converts a value proven to lie in the i64 range.
fn to_i64(x: i128) -> i64 {
    debug_assert!((i128::from(i64::MIN)..=i128::from(i64::MAX)).contains(&x));
    x as i64
}

impl Axis {
    /// Validates one dimension: `L + n`, `L - o`, the first and last chunk's start
    /// `o + g*c` and the index range must fit in i64.
    fn new(axis: usize, c: NonZeroU64, o: i64, l: i64, n: u64) -> Result<Axis, GridError> {
        let overflow = |quantity| GridError::Overflow { axis, quantity };
        let ci = i128::from(c.get());
        let (oi, li, ni) = (i128::from(o), i128::from(l), i128::from(n));
        let fits = |x: i128| i64::try_from(x).is_ok();
        if !fits(li + ni) {
            return Err(overflow("lower_bound + shape"));
        }
        if !fits(li - oi) {
            return Err(overflow("lower_bound - origin"));
        }
        // |L - o| < 2^63 and c >= 1, so g0 fits in i64 and g0*c in i128
        let g0 = (li - oi).div_euclid(ci);
        if !fits(oi + g0 * ci) {
            return Err(overflow("origin + first grid index * chunk size"));
        }
        let g_end = if n == 0 {
            g0
        } else {
            // L + n - 1 - o lies in (-2^64, 2^64): no overflow in i128
            let last = (li + ni - 1 - oi).div_euclid(ci);
            if !fits(last) {
                return Err(overflow("last grid index"));
            }
            // o + g*c <= L + n - 1 for the last chunk and >= the first chunk's start, so
            // this holds once the first chunk's start fits; checked all the same
            if !fits(oi + last * ci) {
                return Err(overflow("origin + last grid index * chunk size"));
            }
            if !fits(last + 1) {
                return Err(overflow("grid index range"));
            }
            last + 1
        };
        Ok(Axis {
            c,
            o,
            l,
            n,
            g0: to_i64(g0),
            g_end: to_i64(g_end),
            shift: to_u64((li - oi).rem_euclid(ci)),
        })
    }

    /// The array position (possibly negative) of the first element of chunk `g`'s buffer.
    fn chunk_start(&self, g: i64) -> i128 {
        i128::from(self.o) + i128::from(g) * i128::from(self.c.get()) - i128::from(self.l)
    }

    /// The part of chunk `g` inside positions `[rs, re)`: (start in buffer, start in array,
    /// length).
    fn part(&self, g: i64, rs: u64, re: u64) -> (u64, u64, u64) {
        let cs = self.chunk_start(g);
        let lo = cs.max(i128::from(rs));
        let hi = (cs + i128::from(self.c.get())).min(i128::from(re));
        let len = (hi - lo).max(0);
        (to_u64(lo - cs), to_u64(lo), to_u64(len))
    }

    /// The grid index and buffer offset of position `p < n`.
    fn locate(&self, p: u64) -> (i64, u64) {
        let x = i128::from(self.l) + i128::from(p) - i128::from(self.o);
        let c = i128::from(self.c.get());
        (to_i64(x.div_euclid(c)), to_u64(x.rem_euclid(c)))
    }
}

/// The validated arithmetic of a regular grid with an origin and a lower bound, bound to a
/// shape. Both `regular` and `regular_bounded` are built on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Geometry {
    shape: Vec<u64>,
    chunk_shape: Vec<NonZeroU64>,
    axes: Vec<Axis>,
}

impl Geometry {
    /// Validates the grid for `shape`; the lists must have equal lengths (checked by the
    /// callers, which name the field).
    pub(crate) fn new(
        chunk_shape: &[NonZeroU64],
        origin: &[i64],
        lower_bound: &[i64],
        shape: &[u64],
    ) -> Result<Geometry, GridError> {
        let rank = shape.len();
        check_rank("chunk_shape", rank, chunk_shape.len())?;
        check_rank("origin", rank, origin.len())?;
        check_rank("lower_bound", rank, lower_bound.len())?;
        let axes = (0..rank)
            .map(|d| Axis::new(d, chunk_shape[d], origin[d], lower_bound[d], shape[d]))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Geometry {
            shape: shape.to_vec(),
            chunk_shape: chunk_shape.to_vec(),
            axes,
        })
    }

    pub(crate) fn shape(&self) -> &[u64] {
        &self.shape
    }

    pub(crate) fn chunk_shape(&self) -> &[NonZeroU64] {
        &self.chunk_shape
    }

    pub(crate) fn domain(&self) -> Vec<(i64, i64)> {
        // L + n fits in i64 (checked in Axis::new)
        self.axes
            .iter()
            .map(|a| (a.l, to_i64(i128::from(a.l) + i128::from(a.n))))
            .collect()
    }

    pub(crate) fn grid_range(&self) -> Vec<Range<i64>> {
        self.axes.iter().map(|a| a.g0..a.g_end).collect()
    }

    pub(crate) fn chunk_of(&self, position: &[u64]) -> Result<(Vec<i64>, Vec<u64>), GridError> {
        chunk_of_axes(&self.axes, position, |a| a.n, Axis::locate)
    }

    pub(crate) fn chunk_part(&self, chunk: &[i64]) -> Option<ChunkPart> {
        if chunk.len() != self.axes.len() {
            return None;
        }
        let rank = chunk.len();
        let mut in_chunk = Region::whole(&vec![0; rank]);
        let mut in_region = Region::whole(&vec![0; rank]);
        for (d, (a, &g)) in self.axes.iter().zip(chunk).enumerate() {
            if !(a.g0..a.g_end).contains(&g) {
                return None;
            }
            let (buf, pos, len) = a.part(g, 0, a.n);
            in_chunk.start[d] = buf;
            in_chunk.shape[d] = len;
            in_region.start[d] = pos;
            in_region.shape[d] = len;
        }
        Some(ChunkPart {
            chunk: chunk.to_vec(),
            in_chunk,
            in_region,
        })
    }

    pub(crate) fn buffer_offset(&self, chunk: &[i64]) -> Vec<u64> {
        self.axes
            .iter()
            .enumerate()
            .map(|(d, a)| {
                if chunk.get(d) == Some(&a.g0) {
                    a.shift
                } else {
                    0
                }
            })
            .collect()
    }

    pub(crate) fn chunks_in_region(&self, region: &Region) -> Result<ChunksInRegion, GridError> {
        region.check_inside(&self.shape).map_err(|e| match e {
            GeometryError::OutOfBounds {
                axis,
                start,
                end,
                len,
            } => GridError::RegionOutOfBounds {
                axis,
                start,
                end,
                len,
            },
            GeometryError::DimensionMismatch { expected, got, .. } => {
                GridError::DimensionMismatch {
                    what: "region",
                    expected,
                    got,
                }
            }
            other => GridError::Geometry(other),
        })?;
        let mut axes = Vec::with_capacity(self.axes.len());
        for (axis, a) in self.axes.iter().enumerate() {
            let rs = region.start[axis];
            // inside the shape: checked above
            let re = rs + region.shape[axis];
            let (first, last) = if re > rs {
                (a.locate(rs).0, a.locate(re - 1).0)
            } else {
                (0, -1)
            };
            axes.push(RegionAxis {
                axis: *a,
                rs,
                re,
                first,
                last,
            });
        }
        let empty = axes.iter().any(|r| r.re == r.rs);
        let next = if empty {
            None
        } else {
            Some(axes.iter().map(|r| r.first).collect())
        };
        Ok(ChunksInRegion { axes, next })
    }
}

#[derive(Debug, Clone)]
struct RegionAxis {
    axis: Axis,
    rs: u64,
    re: u64,
    first: i64,
    last: i64,
}

/// The chunks of a regular grid (an origin and a lower bound on each axis; `0` and `0` for
/// `regular`) that intersect a region, in C order of their grid indices: the one chunk
/// iterator of the workspace. [`ChunkGrid::chunks_in_region`] of the `regular` and
/// `regular_bounded` grids yields it (boxed), and
/// [`regular_chunks_in_region`](crate::geometry::regular_chunks_in_region) for a plain
/// regular grid (a shard's inner chunks). Owns its data, so it can be sent to another thread.
#[derive(Debug, Clone)]
pub struct ChunksInRegion {
    axes: Vec<RegionAxis>,
    next: Option<Vec<i64>>,
}

impl ChunksInRegion {
    /// The chunks of the plain regular grid `chunk_shape` (origin 0) that meet `region`;
    /// nothing for a rank mismatch, a zero chunk size or a region past `i64::MAX`.
    pub(crate) fn regular(chunk_shape: &[u64], region: &Region) -> Self {
        let nothing = ChunksInRegion {
            axes: Vec::new(),
            next: None,
        };
        if chunk_shape.len() != region.rank() || region.start.len() != region.rank() {
            return nothing;
        }
        let Some(chunks) = chunk_shape
            .iter()
            .map(|&c| NonZeroU64::new(c))
            .collect::<Option<Vec<_>>>()
        else {
            return nothing;
        };
        let zeros = vec![0; region.rank()];
        Geometry::new(&chunks, &zeros, &zeros, &region.end())
            .and_then(|g| g.chunks_in_region(region))
            .unwrap_or(nothing)
    }
}

impl Iterator for ChunksInRegion {
    type Item = ChunkPart;

    fn next(&mut self) -> Option<ChunkPart> {
        let idx = self.next.take()?;
        let rank = idx.len();
        let mut succ = idx.clone();
        let mut d = rank;
        while d > 0 {
            d -= 1;
            // succ[d] < last <= i64::MAX - 1: no overflow
            if succ[d] < self.axes[d].last {
                succ[d] += 1;
                self.next = Some(succ);
                break;
            }
            succ[d] = self.axes[d].first;
        }
        let mut in_chunk = Region::whole(&vec![0; rank]);
        let mut in_region = Region::whole(&vec![0; rank]);
        for (d, r) in self.axes.iter().enumerate() {
            let (buf, pos, len) = r.axis.part(idx[d], r.rs, r.re);
            in_chunk.start[d] = buf;
            in_chunk.shape[d] = len;
            in_region.start[d] = pos - r.rs;
            in_region.shape[d] = len;
        }
        Some(ChunkPart {
            chunk: idx,
            in_chunk,
            in_region,
        })
    }

    /// Exact: the chunks from the next one to the last, in C order (so a caller can reserve
    /// the room for them, or refuse, before collecting 2^40 of them).
    fn size_hint(&self) -> (usize, Option<usize>) {
        let Some(next) = &self.next else {
            return (0, Some(0));
        };
        let mut remaining: u128 = 1;
        let mut later: u128 = 1;
        for (a, &at) in self.axes.iter().zip(next).rev() {
            let after = u128::from((a.last - at).unsigned_abs());
            remaining = remaining.saturating_add(after.saturating_mul(later));
            later = later.saturating_mul(u128::from((a.last - a.first).unsigned_abs()) + 1);
        }
        match usize::try_from(remaining) {
            Ok(n) => (n, Some(n)),
            Err(_) => (usize::MAX, None),
        }
    }
}

/// Implements the [`ChunkGrid`] methods that delegate to a `geometry: Geometry` field.
macro_rules! delegate_geometry {
    () => {
        fn shape(&self) -> &[u64] {
            self.geometry.shape()
        }

        fn chunk_shape(&self) -> Option<&[std::num::NonZeroU64]> {
            Some(self.geometry.chunk_shape())
        }

        fn chunk_buffer_shape(&self, chunk: &[i64]) -> Option<Vec<u64>> {
            self.contains_chunk(chunk).then(|| {
                self.geometry
                    .chunk_shape()
                    .iter()
                    .map(|c| c.get())
                    .collect()
            })
        }

        fn domain(&self) -> Vec<(i64, i64)> {
            self.geometry.domain()
        }

        fn grid_range(&self) -> Vec<std::ops::Range<i64>> {
            self.geometry.grid_range()
        }

        fn chunk_of(
            &self,
            position: &[u64],
        ) -> Result<(Vec<i64>, Vec<u64>), $crate::error::GridError> {
            self.geometry.chunk_of(position)
        }

        fn chunk_part(&self, chunk: &[i64]) -> Option<$crate::grid::ChunkPart> {
            self.geometry.chunk_part(chunk)
        }

        fn buffer_offset(&self, chunk: &[i64]) -> Vec<u64> {
            self.geometry.buffer_offset(chunk)
        }

        fn chunks_in_region(
            &self,
            region: &$crate::geometry::Region,
        ) -> Result<
            Box<dyn Iterator<Item = $crate::grid::ChunkPart> + Send + '_>,
            $crate::error::GridError,
        > {
            Ok(Box::new(self.geometry.chunks_in_region(region)?))
        }

        fn clone_box(&self) -> Box<dyn $crate::grid::ChunkGrid> {
            Box::new(self.clone())
        }

        fn as_any(&self) -> &dyn std::any::Any {
            self
        }
    };
}
pub(crate) use delegate_geometry;

/// The chunk of `position` and the position's offset in it, axis by axis: `len(axis)` is the
/// axis' length, `locate(axis, p)` the chunk index and offset of a position `p` inside it.
/// Shared by the grids whose axes are independent.
///
/// # Errors
/// A position of another rank, or outside an axis.
pub(crate) fn chunk_of_axes<A>(
    axes: &[A],
    position: &[u64],
    len: impl Fn(&A) -> u64,
    locate: impl Fn(&A, u64) -> (i64, u64),
) -> Result<(Vec<i64>, Vec<u64>), GridError> {
    check_rank("position", axes.len(), position.len())?;
    let mut chunk = Vec::with_capacity(position.len());
    let mut offset = Vec::with_capacity(position.len());
    for (axis, (a, &p)) in axes.iter().zip(position).enumerate() {
        let n = len(a);
        if p >= n {
            return Err(GridError::PositionOutOfBounds {
                axis,
                position: p,
                len: n,
            });
        }
        let (g, off) = locate(a, p);
        chunk.push(g);
        offset.push(off);
    }
    Ok((chunk, offset))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nz(v: &[u64]) -> Vec<NonZeroU64> {
        v.iter().map(|&c| NonZeroU64::new(c).unwrap()).collect()
    }

    #[test]
    fn axis_validation_catches_every_overflow() {
        let c = |v| NonZeroU64::new(v).unwrap();
        let cases: [(u64, i64, i64, u64, &str); 5] = [
            (4, 0, i64::MAX - 2, 3, "lower_bound + shape"),
            (4, i64::MAX, -2, 1, "lower_bound - origin"),
            (3, 0, i64::MIN, 1, "origin + first grid index * chunk size"),
            (1, -(1 << 62), 0, (1 << 62) + 1, "last grid index"),
            (1, -1, i64::MAX - 2, 2, "grid index range"),
        ];
        for (chunk, o, l, n, quantity) in cases {
            match Axis::new(0, c(chunk), o, l, n) {
                Err(GridError::Overflow { quantity: q, .. }) => assert_eq!(q, quantity),
                other => panic!("{chunk} {o} {l} {n}: {other:?}"),
            }
        }
        // the extremes that do fit
        let a = Axis::new(0, c(1), 0, i64::MIN, 5).unwrap();
        assert_eq!((a.g0, a.g_end, a.shift), (i64::MIN, i64::MIN + 5, 0));
        let a = Axis::new(0, c(u64::MAX), 0, 0, 10).unwrap();
        assert_eq!((a.g0, a.g_end, a.shift), (0, 1, 0));
        assert_eq!(a.part(0, 0, 10), (0, 0, 10));
    }

    #[test]
    fn empty_axis_has_no_chunks() {
        let g = Geometry::new(&nz(&[4, 4]), &[0, 0], &[-3, 0], &[0, 4]).unwrap();
        assert_eq!(g.grid_range(), vec![-1..-1, 0..1]);
        assert_eq!(range_count(&g.grid_range()), Some(0));
        assert!(g.chunk_part(&[-1, 0]).is_none());
        assert_eq!(
            g.chunks_in_region(&Region::whole(&[0, 4])).unwrap().count(),
            0
        );
        assert!(g.chunk_of(&[0, 0]).is_err());
    }

    #[test]
    fn zero_d_grid_has_one_chunk() {
        let g = Geometry::new(&[], &[], &[], &[]).unwrap();
        assert_eq!(range_count(&g.grid_range()), Some(1));
        assert_eq!(g.chunk_of(&[]).unwrap(), (vec![], vec![]));
        let parts: Vec<_> = g.chunks_in_region(&Region::whole(&[])).unwrap().collect();
        assert_eq!(parts.len(), 1);
        assert!(parts[0].chunk.is_empty());
        assert_eq!(ChunkIndices::new(vec![]).count(), 1);
    }

    #[test]
    fn region_errors() {
        let g = Geometry::new(&nz(&[4]), &[0], &[0], &[10]).unwrap();
        let bad = Region {
            start: vec![8],
            shape: vec![3],
        };
        assert!(matches!(
            g.chunks_in_region(&bad),
            Err(GridError::RegionOutOfBounds { end: 11, .. })
        ));
        let huge = Region {
            start: vec![u64::MAX],
            shape: vec![3],
        };
        assert!(matches!(
            g.chunks_in_region(&huge),
            Err(GridError::RegionOutOfBounds { end: u64::MAX, .. })
        ));
        assert!(matches!(
            g.chunks_in_region(&Region::whole(&[1, 1])),
            Err(GridError::DimensionMismatch { .. })
        ));
        assert!(matches!(
            g.chunk_of(&[10]),
            Err(GridError::PositionOutOfBounds {
                position: 10,
                len: 10,
                ..
            })
        ));
    }

    #[test]
    fn chunk_indices_iterate_in_c_order() {
        let all: Vec<_> = ChunkIndices::new(vec![-1..1, 3..5]).collect();
        assert_eq!(all, vec![vec![-1, 3], vec![-1, 4], vec![0, 3], vec![0, 4]]);
        assert_eq!(ChunkIndices::new(vec![0..2, 5..5]).count(), 0);
        let top: Vec<_> = ChunkIndices::new(vec![0..1, i64::MAX - 1..i64::MAX]).collect();
        assert_eq!(top, vec![vec![0, i64::MAX - 1]]);
    }
}
