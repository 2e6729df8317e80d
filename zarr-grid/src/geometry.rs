//! Shapes, regions and the iteration over the chunks of a regular grid that intersect a region.
//!
//! Positions are zero-based `u64` (what users index with). A [`Region`] is a start and a
//! shape, with the arithmetic every layer needs (intersection, containment, its offset in a
//! C-order buffer, whether it is one contiguous run of one, the bounds check against a shape).
//! [`regular_chunks_in_region`] walks the chunks of a plain regular grid (chunk `i` covers
//! `[i*c, (i+1)*c)`, what a shard's inner chunks are) that a region touches; it is the same
//! iterator, with the same [`ChunkPart`](crate::ChunkPart)s, as
//! [`ChunkGrid::chunks_in_region`](crate::ChunkGrid::chunks_in_region) of the `regular` and
//! `regular_bounded` grids. [`block_runs`] and [`copy_region`] copy an N-d block between two
//! C-order buffers, a contiguous run at a time.
//!
//! ```
//! use zarr_grid::geometry::{regular_chunks_in_region, Region};
//!
//! let region = Region::new(vec![2, 0], vec![4, 3]).unwrap();
//! let parts: Vec<_> = regular_chunks_in_region(&[4, 4], &region).collect();
//! assert_eq!(parts.len(), 2);
//! assert_eq!(parts[0].chunk, vec![0, 0]);
//! assert_eq!(parts[0].in_chunk, Region::new(vec![2, 0], vec![2, 3]).unwrap());
//! assert_eq!(parts[1].in_region.start, vec![2, 0]);
//!
//! let a = Region::new(vec![0, 0], vec![4, 4]).unwrap();
//! assert_eq!(a.intersect(&region), Region::new(vec![2, 0], vec![2, 3]).ok());
//! assert!(a.contains(&[3, 3]) && !a.contains(&[4, 0]));
//! // rows 1..3 of a 4x4 buffer are one contiguous run starting at element 4
//! let rows = Region::new(vec![1, 0], vec![2, 4]).unwrap();
//! assert!(rows.is_contiguous_in(&[4, 4]));
//! assert_eq!(rows.linear_offset(&[4, 4]), 4);
//! ```

/// A zero-based rectangular block: `start[d] .. start[d] + shape[d]` on each axis.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Region {
    /// First position on each axis.
    pub start: Vec<u64>,
    /// Length on each axis.
    pub shape: Vec<u64>,
}

/// An error in region arithmetic.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GeometryError {
    /// start and shape of different ranks.
    #[error("region start has {start} dimensions but its shape has {shape}")]
    RankMismatch {
        /// rank of start
        start: usize,
        /// rank of shape
        shape: usize,
    },
    /// start + shape overflows u64.
    #[error("region end overflows on axis {axis}")]
    Overflow {
        /// the axis
        axis: usize,
    },
    /// A region, position or shape of another rank than the buffer or array it is used with.
    #[error("{what} has {got} dimensions but {expected} are needed")]
    DimensionMismatch {
        /// What had the wrong rank.
        what: &'static str,
        /// The rank needed.
        expected: usize,
        /// The rank given.
        got: usize,
    },
    /// A region that reaches past the end of a shape on an axis.
    #[error("region {start}..{end} is out of bounds on axis {axis} (length {len})")]
    OutOfBounds {
        /// The axis.
        axis: usize,
        /// The region's first position.
        start: u64,
        /// One past the region's last position (saturated at `u64::MAX`).
        end: u64,
        /// The length of the shape on that axis.
        len: u64,
    },
    /// The element count does not fit in memory.
    #[error("region of shape {shape:?} has too many elements")]
    TooLarge {
        /// the shape
        shape: Vec<u64>,
    },
}

impl Region {
    /// A region from start and shape.
    ///
    /// # Errors
    /// If the ranks differ or an end overflows.
    pub fn new(start: Vec<u64>, shape: Vec<u64>) -> Result<Self, GeometryError> {
        if start.len() != shape.len() {
            return Err(GeometryError::RankMismatch {
                start: start.len(),
                shape: shape.len(),
            });
        }
        for (axis, (s, n)) in start.iter().zip(&shape).enumerate() {
            s.checked_add(*n).ok_or(GeometryError::Overflow { axis })?;
        }
        Ok(Region { start, shape })
    }

    /// The region `0..shape`.
    pub fn whole(shape: &[u64]) -> Self {
        Region {
            start: vec![0; shape.len()],
            shape: shape.to_vec(),
        }
    }

    /// The rank.
    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// One past the last position on each axis (saturating; [`Region::new`] checks overflow).
    pub fn end(&self) -> Vec<u64> {
        self.start
            .iter()
            .zip(&self.shape)
            .map(|(s, n)| s.saturating_add(*n))
            .collect()
    }

    /// The number of elements, or `None` on overflow.
    pub fn num_elements(&self) -> Option<u64> {
        num_elements(&self.shape)
    }

    /// Whether the region holds no element.
    pub fn is_empty(&self) -> bool {
        self.shape.contains(&0)
    }

    /// Whether `other` lies wholly inside this region.
    pub fn contains_region(&self, other: &Region) -> bool {
        self.rank() == other.rank()
            && (0..self.rank()).all(|d| {
                other.start[d] >= self.start[d]
                    && other.start[d].saturating_add(other.shape[d])
                        <= self.start[d].saturating_add(self.shape[d])
            })
    }

    /// Whether the position `pos` (of the region's rank) lies inside the region.
    pub fn contains(&self, pos: &[u64]) -> bool {
        pos.len() == self.rank()
            && pos
                .iter()
                .zip(self.start.iter().zip(&self.shape))
                .all(|(&p, (&s, &n))| p >= s && p - s < n)
    }

    /// The positions that lie in both regions (same rank, same coordinates), or `None` when
    /// they share none.
    pub fn intersect(&self, other: &Region) -> Option<Region> {
        if self.rank() != other.rank() {
            return None;
        }
        let mut start = Vec::with_capacity(self.rank());
        let mut shape = Vec::with_capacity(self.rank());
        for d in 0..self.rank() {
            let lo = self.start[d].max(other.start[d]);
            let hi = self.start[d]
                .saturating_add(self.shape[d])
                .min(other.start[d].saturating_add(other.shape[d]));
            if lo >= hi {
                return None;
            }
            start.push(lo);
            shape.push(hi - lo);
        }
        Some(Region { start, shape })
    }

    /// The region in coordinates whose zero is `origin` (every `origin[d] <= start[d]`; the
    /// start saturates at 0 otherwise): the part of a chunk at `origin` in its own positions.
    pub fn relative_to(&self, origin: &[u64]) -> Region {
        debug_assert!(origin.iter().zip(&self.start).all(|(o, s)| o <= s));
        Region {
            start: self
                .start
                .iter()
                .zip(origin)
                .map(|(&s, &o)| s.saturating_sub(o))
                .collect(),
            shape: self.shape.clone(),
        }
    }

    /// The region moved by `offset` (its start plus `offset`, saturating): a block of a
    /// chunk placed in a larger buffer at `offset`.
    pub fn shifted(&self, offset: &[u64]) -> Region {
        Region {
            start: self
                .start
                .iter()
                .zip(offset)
                .map(|(&s, &o)| s.saturating_add(o))
                .collect(),
            shape: self.shape.clone(),
        }
    }

    /// The C-order element offset of the region's start in a buffer of `shape` (see
    /// [`linear_index`]).
    pub fn linear_offset(&self, shape: &[u64]) -> u64 {
        linear_index(&self.start, shape)
    }

    /// Whether the region, lying inside a C-order buffer of `shape`, is one contiguous run of
    /// it: leading axes of length 1, then one axis it covers in part, then axes it spans
    /// wholly. An empty region is contiguous.
    pub fn is_contiguous_in(&self, shape: &[u64]) -> bool {
        if self.is_empty() {
            return true;
        }
        let rank = shape.len().min(self.rank());
        let mut d = 0;
        while d < rank && self.shape[d] == 1 {
            d += 1;
        }
        // axis d may be partial; every later axis must be whole
        (d + 1..rank).all(|e| self.start[e] == 0 && self.shape[e] == shape[e])
    }

    /// Checks that the region has the rank of `shape` and lies inside it: the one region
    /// bounds check of the workspace (reads, writes, chunk iteration, codec regions).
    ///
    /// # Errors
    /// [`GeometryError::DimensionMismatch`], or [`GeometryError::OutOfBounds`] naming the
    /// first axis the region leaves.
    pub fn check_inside(&self, shape: &[u64]) -> Result<(), GeometryError> {
        if self.start.len() != shape.len() || self.shape.len() != shape.len() {
            return Err(GeometryError::DimensionMismatch {
                what: "region",
                expected: shape.len(),
                got: if self.start.len() != shape.len() {
                    self.start.len()
                } else {
                    self.shape.len()
                },
            });
        }
        for (axis, ((&start, &n), &len)) in
            self.start.iter().zip(&self.shape).zip(shape).enumerate()
        {
            let end = start.checked_add(n);
            if end.is_none_or(|e| e > len) {
                return Err(GeometryError::OutOfBounds {
                    axis,
                    start,
                    end: end.unwrap_or(u64::MAX),
                    len,
                });
            }
        }
        Ok(())
    }
}

/// The C-order linear index of the position `pos` in a buffer of `shape` (the caller keeps
/// `pos` inside `shape`, whose element count fits in `u64`).
pub fn linear_index(pos: &[u64], shape: &[u64]) -> u64 {
    pos.iter()
        .zip(shape)
        .fold(0u64, |acc, (&p, &n)| acc * n + p)
}

/// Writes the position of C-order linear index `lin` in a buffer of `shape` to `out` (the
/// inverse of [`linear_index`]; `out` has the rank of `shape`, whose extents are non-zero).
pub fn unravel_index(mut lin: u64, shape: &[u64], out: &mut [u64]) {
    for (o, &n) in out.iter_mut().zip(shape).rev() {
        *o = lin % n;
        lin /= n;
    }
}

/// The product of a shape, or `None` on overflow.
pub fn num_elements(shape: &[u64]) -> Option<u64> {
    shape.iter().try_fold(1u64, |acc, &n| acc.checked_mul(n))
}

/// The product of a shape as a `usize` count of elements times `elem_size` bytes, checked.
///
/// # Errors
/// [`GeometryError::TooLarge`] if it does not fit in `usize`.
pub fn buffer_len(shape: &[u64], elem_size: usize) -> Result<usize, GeometryError> {
    num_elements(shape)
        .and_then(|n| usize::try_from(n).ok())
        .and_then(|n| n.checked_mul(elem_size))
        .ok_or_else(|| GeometryError::TooLarge {
            shape: shape.to_vec(),
        })
}

/// The chunks of a plain regular grid with `chunk_shape` (chunk `i` covers `[i*c, (i+1)*c)`
/// on each axis; grid indices are never negative) that intersect `region`, in C order of
/// their grid indices, as [`ChunkPart`](crate::ChunkPart)s. Every position of the region is covered exactly
/// once. A region with a zero-length axis, a zero chunk size on an axis, a rank mismatch or a
/// region end past `i64::MAX` yield nothing.
///
/// The same iterator as [`ChunkGrid::chunks_in_region`](crate::ChunkGrid::chunks_in_region)
/// of the `regular` grid: what a shard's inner chunks are.
pub fn regular_chunks_in_region(chunk_shape: &[u64], region: &Region) -> ChunksInRegion {
    ChunksInRegion::regular(chunk_shape, region)
}

/// Iterates over the C-order position tuples of a shape (the empty tuple once for rank 0).
pub fn indices(shape: &[u64]) -> impl Iterator<Item = Vec<u64>> + '_ {
    let mut next = if shape.contains(&0) {
        None
    } else {
        Some(vec![0u64; shape.len()])
    };
    std::iter::from_fn(move || {
        let cur = next.take()?;
        let mut succ = cur.clone();
        let mut d = shape.len();
        while d > 0 {
            d -= 1;
            succ[d] += 1;
            if succ[d] < shape[d] {
                next = Some(succ);
                break;
            }
            succ[d] = 0;
        }
        Some(cur)
    })
}

/// Calls `f(src_offset, dst_offset, len)` (in bytes) for every contiguous run of the block
/// `block_shape` at `src_start` of a C-order buffer of shape `src_shape` and at `dst_start` of
/// one of shape `dst_shape`, elements of `elem_size` bytes, in C order of the block. Trailing
/// axes that both buffers span wholly are merged into one run, so a block that is contiguous
/// in both is a single call.
///
/// It walks the block with running offsets (no allocation per run): the building block of
/// [`copy_region`], and of any copy into or out of a buffer that several threads share.
///
/// ```
/// use zarr_grid::geometry::block_runs;
/// // a 2x2 block at (1, 1) of a 3x4 buffer, copied to (0, 0) of a 2x2 one, 1-byte elements
/// let mut runs = Vec::new();
/// block_runs(&[3, 4], &[1, 1], &[2, 2], &[0, 0], &[2, 2], 1, |s, d, n| runs.push((s, d, n)));
/// assert_eq!(runs, vec![(5, 0, 2), (9, 2, 2)]);
/// ```
// Each of the two buffers needs its shape and start; a struct would only rename them.
#[allow(clippy::too_many_arguments)]
pub fn block_runs(
    src_shape: &[u64],
    src_start: &[u64],
    dst_shape: &[u64],
    dst_start: &[u64],
    block_shape: &[u64],
    elem_size: usize,
    mut f: impl FnMut(usize, usize, usize),
) {
    let rank = block_shape.len();
    if block_shape.contains(&0) {
        return;
    }
    if rank == 0 {
        f(0, 0, elem_size);
        return;
    }
    // Merge trailing axes where both blocks span their buffers wholly, so a run is as long
    // as possible.
    let mut run = block_shape[rank - 1] as usize * elem_size;
    let mut outer = rank - 1;
    while outer > 0
        && block_shape[outer] == src_shape[outer]
        && block_shape[outer] == dst_shape[outer]
        && src_start[outer] == 0
        && dst_start[outer] == 0
    {
        outer -= 1;
        run *= block_shape[outer] as usize;
    }
    // strides of the axes before `outer` (the run covers `outer..rank`); at most rank 32 on
    // the stack, larger ranks (not valid Zarr, but possible in memory) on the heap
    const STACK: usize = 32;
    let mut stack = [(0usize, 0usize, 0usize, 0usize); STACK];
    let mut heap = Vec::new();
    let axes: &mut [(usize, usize, usize, usize)] = if outer <= STACK {
        &mut stack[..outer]
    } else {
        heap.resize(outer, (0, 0, 0, 0));
        &mut heap
    };
    // (source stride, destination stride, extent, position) per outer axis
    let (mut s_stride, mut d_stride) = (elem_size, elem_size);
    let (mut so, mut doff) = (0usize, 0usize);
    for d in (0..rank).rev() {
        so += src_start[d] as usize * s_stride;
        doff += dst_start[d] as usize * d_stride;
        if d < outer {
            axes[d] = (s_stride, d_stride, block_shape[d] as usize, 0);
        }
        s_stride *= src_shape[d] as usize;
        d_stride *= dst_shape[d] as usize;
    }
    if outer == 0 {
        f(so, doff, run);
        return;
    }
    // Runs of a few common lengths (the rows of small chunks: 32 elements of 1, 2 or 4
    // bytes) go through loops of their own in which the length is a constant, so that a copy
    // in `f` becomes a few vector moves rather than a call to `memcpy`; a 32^3 inner chunk of
    // 16-bit data is 1024 runs of 64 bytes, and the call was half the time of gathering it.
    match run {
        32 => walk(axes, so, doff, |s, d| f(s, d, 32)),
        64 => walk(axes, so, doff, |s, d| f(s, d, 64)),
        128 => walk(axes, so, doff, |s, d| f(s, d, 128)),
        _ => walk(axes, so, doff, |s, d| f(s, d, run)),
    }
}

/// The odometer of [`block_runs`] over its outer axes (at least one), each `(source stride,
/// destination stride, extent, position)`, from the offsets `so` and `doff` of the first run.
#[inline(always)]
fn walk(
    axes: &mut [(usize, usize, usize, usize)],
    mut so: usize,
    mut doff: usize,
    mut f: impl FnMut(usize, usize),
) {
    let last = axes.len() - 1;
    let (inner_s, inner_d, inner_n, _) = axes[last];
    loop {
        // the last outer axis, which moves fastest, as a plain loop (most runs are here: the
        // rows of a block)
        let (mut s, mut d) = (so, doff);
        for _ in 0..inner_n {
            f(s, d);
            s += inner_s;
            d += inner_d;
        }
        // advance the odometer over the axes before it
        let mut d = last;
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            let (ss, ds, n, i) = &mut axes[d];
            *i += 1;
            so += *ss;
            doff += *ds;
            if *i < *n {
                break;
            }
            so -= *ss * *n;
            doff -= *ds * *n;
            *i = 0;
        }
    }
}

/// Copies the block `block_shape` at `src_start` of a C-order buffer of shape `src_shape`
/// to `dst_start` of a C-order buffer of shape `dst_shape`, elements of `elem_size` bytes.
///
/// The caller guarantees that both blocks lie inside their buffers and that the buffers have
/// the lengths their shapes say; a violation panics (slice indexing), so callers check
/// untrusted shapes before calling.
// Each of the two buffers needs its data, shape and start; a struct would only rename them.
#[allow(clippy::too_many_arguments)]
pub fn copy_region(
    src: &[u8],
    src_shape: &[u64],
    src_start: &[u64],
    dst: &mut [u8],
    dst_shape: &[u64],
    dst_start: &[u64],
    block_shape: &[u64],
    elem_size: usize,
) {
    block_runs(
        src_shape,
        src_start,
        dst_shape,
        dst_start,
        block_shape,
        elem_size,
        |s, d, n| dst[d..d + n].copy_from_slice(&src[s..s + n]),
    );
}

use crate::grid::ChunksInRegion;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_region_once() {
        let region = Region::new(vec![3, 1], vec![7, 9]).unwrap();
        let mut seen = [0u8; 7 * 9];
        for p in regular_chunks_in_region(&[4, 5], &region) {
            for i in indices(&p.in_region.shape) {
                let y = p.in_region.start[0] + i[0];
                let x = p.in_region.start[1] + i[1];
                seen[(y * 9 + x) as usize] += 1;
                // the chunk position maps back to the same array position
                assert_eq!(p.chunk[0] as u64 * 4 + p.in_chunk.start[0] + i[0], 3 + y);
                assert_eq!(p.chunk[1] as u64 * 5 + p.in_chunk.start[1] + i[1], 1 + x);
            }
        }
        assert!(seen.iter().all(|&n| n == 1));
    }

    #[test]
    fn copy_region_copies_the_block() {
        let src: Vec<u8> = (0..24).collect(); // shape 4x6
        let mut dst = vec![0u8; 9]; // shape 3x3
        copy_region(
            &src,
            &[4, 6],
            &[1, 2],
            &mut dst,
            &[3, 3],
            &[1, 0],
            &[2, 3],
            1,
        );
        assert_eq!(dst, vec![0, 0, 0, 8, 9, 10, 14, 15, 16]);
        let mut whole = vec![0u8; 24];
        copy_region(
            &src,
            &[4, 6],
            &[0, 0],
            &mut whole,
            &[4, 6],
            &[0, 0],
            &[4, 6],
            1,
        );
        assert_eq!(whole, src);
    }

    #[test]
    fn region_arithmetic() {
        let r = |s: &[u64], n: &[u64]| Region::new(s.to_vec(), n.to_vec()).unwrap();
        let a = r(&[2, 3], &[4, 5]);
        assert_eq!(a.intersect(&r(&[4, 0], &[9, 4])), Some(r(&[4, 3], &[2, 1])));
        assert_eq!(a.intersect(&r(&[6, 3], &[1, 1])), None);
        assert_eq!(a.intersect(&r(&[0], &[9])), None);
        assert_eq!(a.relative_to(&[2, 1]), r(&[0, 2], &[4, 5]));
        assert_eq!(a.shifted(&[1, 1]), r(&[3, 4], &[4, 5]));
        assert!(a.contains(&[5, 7]) && !a.contains(&[6, 7]) && !a.contains(&[5]));
        assert_eq!(a.linear_offset(&[10, 10]), 23);
        let mut pos = [0; 2];
        unravel_index(23, &[10, 10], &mut pos);
        assert_eq!(pos, [2, 3]);
        // contiguity: whole trailing axes, one partial axis, then leading ones of length 1
        assert!(r(&[1, 0, 0], &[2, 4, 4]).is_contiguous_in(&[8, 4, 4]));
        assert!(r(&[1, 2, 0], &[1, 2, 4]).is_contiguous_in(&[8, 4, 4]));
        assert!(!r(&[1, 2, 0], &[2, 2, 4]).is_contiguous_in(&[8, 4, 4]));
        assert!(!r(&[0, 0, 1], &[1, 2, 3]).is_contiguous_in(&[8, 4, 4]));
        assert!(r(&[0, 0, 1], &[1, 1, 3]).is_contiguous_in(&[8, 4, 4]));
        assert!(Region::whole(&[]).is_contiguous_in(&[]));
        // the bounds check
        assert_eq!(a.check_inside(&[6, 8]), Ok(()));
        assert_eq!(
            a.check_inside(&[6, 7]),
            Err(GeometryError::OutOfBounds {
                axis: 1,
                start: 3,
                end: 8,
                len: 7
            })
        );
        let far = Region {
            start: vec![u64::MAX],
            shape: vec![2],
        };
        assert!(matches!(
            far.check_inside(&[9]),
            Err(GeometryError::OutOfBounds { end: u64::MAX, .. })
        ));
        assert!(matches!(
            a.check_inside(&[6]),
            Err(GeometryError::DimensionMismatch {
                expected: 1,
                got: 2,
                ..
            })
        ));
    }

    #[test]
    fn zero_d_and_empty() {
        assert_eq!(indices(&[]).count(), 1);
        assert_eq!(indices(&[2, 0]).count(), 0);
        let r = Region::whole(&[]);
        assert_eq!(regular_chunks_in_region(&[], &r).count(), 1);
        let empty = Region::new(vec![1, 1], vec![0, 2]).unwrap();
        assert_eq!(regular_chunks_in_region(&[2, 2], &empty).count(), 0);
        let zero_chunk = Region::whole(&[4]);
        assert_eq!(regular_chunks_in_region(&[0], &zero_chunk).count(), 0);
        assert_eq!(regular_chunks_in_region(&[2, 2], &zero_chunk).count(), 0);
    }
}
