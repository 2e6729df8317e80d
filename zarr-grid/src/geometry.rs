//! Shapes, regions and the iteration over the chunks of a regular grid that intersect a region.
//!
//! Positions are zero-based `u64` (what users index with). A [`Region`] is a start and a
//! shape. [`regular_chunks_in_region`] walks the chunks of a regular grid (chunk `i` covers
//! `[i*c, (i+1)*c)`) that a region touches and says, for each, which part of the chunk buffer
//! and which part of the region it covers. [`copy_region`] copies an N-d block between two
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

/// The part of a region that one chunk of a regular grid covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkPart {
    /// The chunk's grid index.
    pub chunk: Vec<u64>,
    /// The covered part, in positions inside the chunk buffer.
    pub in_chunk: Region,
    /// The covered part, in positions relative to the region's start.
    pub in_region: Region,
}

/// The chunks of a regular grid with `chunk_shape` that intersect `region`, in C order of
/// their grid indices. Every position of the region is covered exactly once. A region with
/// a zero-length axis yields nothing; a zero chunk size on an axis yields nothing.
pub fn regular_chunks_in_region<'a>(
    chunk_shape: &'a [u64],
    region: &'a Region,
) -> impl Iterator<Item = ChunkPart> + 'a {
    let rank = region.rank();
    let valid =
        chunk_shape.len() == rank && !region.is_empty() && chunk_shape.iter().all(|&c| c > 0);
    let (first, last): (Vec<u64>, Vec<u64>) = if valid {
        (0..rank)
            .map(|d| {
                let c = chunk_shape[d];
                let s = region.start[d];
                let e = s.saturating_add(region.shape[d]) - 1;
                (s / c, e / c)
            })
            .unzip()
    } else {
        (Vec::new(), Vec::new())
    };
    let mut next = if valid { Some(first.clone()) } else { None };
    std::iter::from_fn(move || {
        let idx = next.take()?;
        // advance to the following index in C order
        let mut succ = idx.clone();
        let mut d = rank;
        let mut done = true;
        while d > 0 {
            d -= 1;
            if succ[d] < last[d] {
                succ[d] += 1;
                done = false;
                break;
            }
            succ[d] = first[d];
        }
        if !done {
            next = Some(succ);
        }
        let mut in_chunk = Region::whole(&vec![0; rank]);
        let mut in_region = Region::whole(&vec![0; rank]);
        for dim in 0..rank {
            let c = chunk_shape[dim];
            let chunk_start = idx[dim] * c;
            let lo = region.start[dim].max(chunk_start);
            let hi = (region.start[dim] + region.shape[dim]).min(chunk_start + c);
            in_chunk.start[dim] = lo - chunk_start;
            in_chunk.shape[dim] = hi - lo;
            in_region.start[dim] = lo - region.start[dim];
            in_region.shape[dim] = hi - lo;
        }
        Some(ChunkPart {
            chunk: idx,
            in_chunk,
            in_region,
        })
    })
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
    loop {
        f(so, doff, run);
        // advance the odometer: the last outer axis moves fastest
        let mut d = outer;
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
                assert_eq!(p.chunk[0] * 4 + p.in_chunk.start[0] + i[0], 3 + y);
                assert_eq!(p.chunk[1] * 5 + p.in_chunk.start[1] + i[1], 1 + x);
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
    fn zero_d_and_empty() {
        assert_eq!(indices(&[]).count(), 1);
        assert_eq!(indices(&[2, 0]).count(), 0);
        let r = Region::whole(&[]);
        assert_eq!(regular_chunks_in_region(&[], &r).count(), 1);
    }
}
