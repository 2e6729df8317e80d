//! Chunks as blocks of a larger buffer: decoding chunks in parallel straight into their places
//! in one output buffer, and encoding a chunk gathered straight from the caller's data.
//!
//! A chunk of an array read is a block of the output, but not a contiguous slice of it, and
//! the chunks of one read are decoded in parallel. A [`BlockBuffer`] (the output, a C-order
//! array of a shape, elements of a fixed size) is split once into [`Block`]s; the splitter
//! checks that every block lies inside the buffer and that no two of them overlap, so each
//! block can be handed to its own thread (a `Block` is `Send`) and written through safe
//! methods that never leave it: [`Block::copy_from`], [`Block::fill`],
//! [`Block::as_contiguous_mut`], element writes ([`Block::for_each_element`],
//! [`Block::element_mut`]) and a nested checked [`Block::split`] (a shard's block into its
//! inner chunks' blocks). A block is a product of per-axis index sets ([`AxisSet`]): ranges
//! (the part of a region read a chunk covers) or explicit lists (an orthogonal selection's
//! output positions, a point selection's).
//!
//! The checks cost O(n log n) for n blocks on a grid ([`BlockBuffer::split`]: per axis, the
//! blocks' intervals must be equal or disjoint, and no two blocks may have the same interval
//! on every axis) and O(buffer extent + indices) per axis for a product of index sets
//! ([`BlockBuffer::split_product`]); boxes placed freely, disjoint but on no grid, are
//! compared pairwise along their first axis ([`BlockBuffer::split_disjoint`]). A split that
//! does not pass them is an error, never undefined behaviour.
//!
//! [`SourceBlock`] is the read-only counterpart: a checked block of a source buffer (the data
//! of a region write) that a chunk is gathered from.
//!
//! This module holds every `unsafe` of zarr-codecs apart from blosc's C calls (`blosc`),
//! and so every `unsafe` behind the parallel writes of zarr-array, zarr-py and the benches:
//! the one place a block's bytes are reached through the buffer's pointer (the private
//! `Spans::into_span` a [`Block`] writes through), `Block`'s `Send`, and the `madvise` call
//! of [`BlockBuffer::advise_huge_pages`].
//!
//! ```
//! use zarr_codecs::BlockBuffer;
//! use zarr_grid::geometry::Region;
//!
//! // a 2 x 4 buffer of 1-byte elements, split into its left and right halves
//! let mut out = vec![0u8; 8];
//! let mut buffer = BlockBuffer::new(&mut out, &[2, 4], 1)?;
//! let halves = [
//!     Region::new(vec![0, 0], vec![2, 2])?,
//!     Region::new(vec![0, 2], vec![2, 2])?,
//! ];
//! let blocks = buffer.split(&halves)?;
//! std::thread::scope(|s| {
//!     for (i, mut block) in blocks.into_iter().enumerate() {
//!         s.spawn(move || block.fill(&[i as u8 + 1]));
//!     }
//! });
//! assert_eq!(out, [1, 1, 2, 2, 1, 1, 2, 2]);
//!
//! // overlapping blocks are refused
//! let mut buffer = BlockBuffer::new(&mut out, &[2, 4], 1)?;
//! let overlapping = [Region::new(vec![0, 0], vec![2, 3])?, Region::new(vec![0, 2], vec![2, 2])?];
//! assert!(buffer.split(&overlapping).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::marker::PhantomData;

use zarr_buffer::fill_pattern;
use zarr_grid::geometry::{block_runs, GeometryError, Region};

use crate::error::{CodecError, Result};
use crate::repr::ChunkRepr;

/// Why a buffer cannot be split as asked, or a block operation was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BlockError {
    /// A buffer whose length is not its shape's element count times the element size.
    #[error(
        "a buffer of shape {shape:?} with {elem}-byte elements needs {expected} bytes, got {got}"
    )]
    BufferLength {
        /// The shape.
        shape: Vec<u64>,
        /// The element size in bytes.
        elem: usize,
        /// The length needed (saturated at `u64::MAX`).
        expected: u64,
        /// The length given.
        got: u64,
    },
    /// Elements of zero bytes.
    #[error("blocks need elements of at least one byte")]
    ZeroElementSize,
    /// A block, index list or position of another rank than the buffer.
    #[error("{what} has {got} dimensions but the buffer has {expected}")]
    DimensionMismatch {
        /// What had the wrong rank.
        what: &'static str,
        /// The buffer's rank.
        expected: usize,
        /// The rank given.
        got: usize,
    },
    /// A block that does not lie inside its buffer (or a nested block outside its parent).
    #[error(transparent)]
    OutOfBounds(#[from] GeometryError),
    /// An element index of an update of variable-size elements that names neither an
    /// element of the update nor the fill value.
    #[error("element index {index:#x} names no element of the {items} given nor the fill value")]
    ElementIndex {
        /// The index.
        index: u64,
        /// The elements given.
        items: usize,
    },
    /// An index of a list that lies past the end of its axis.
    #[error("index {index} is out of bounds on axis {axis} (length {len})")]
    IndexOutOfBounds {
        /// The axis.
        axis: usize,
        /// The index.
        index: u64,
        /// The axis length.
        len: u64,
    },
    /// Two blocks of one split that share a position.
    #[error("two blocks overlap on axis {axis} at position {position}")]
    Overlap {
        /// An axis on which they overlap.
        axis: usize,
        /// A position of that axis both cover.
        position: u64,
    },
    /// Two blocks of a split of disjoint blocks ([`BlockBuffer::split_disjoint`]) that share
    /// a position.
    #[error("blocks {first} and {second} share positions")]
    Intersect {
        /// The index of one of them in the split's list.
        first: usize,
        /// The index of the other, greater than `first`.
        second: usize,
    },
    /// Two blocks of one split with the same interval on every axis.
    #[error("two blocks starting at {start:?} cover the same positions")]
    Duplicate {
        /// Their first position.
        start: Vec<u64>,
    },
    /// A block whose shape is not the one the operation needs.
    #[error("the block has shape {block:?} but {what} has shape {other:?}")]
    ShapeMismatch {
        /// What the block was matched against.
        what: &'static str,
        /// The block's shape.
        block: Vec<u64>,
        /// The shape needed.
        other: Vec<u64>,
    },
    /// A fill pattern or element value of another size than the elements.
    #[error("a value of {got} bytes for elements of {expected}")]
    ValueLength {
        /// The element size.
        expected: usize,
        /// The value's length.
        got: usize,
    },
}

/// The byte length of a C-order buffer of `shape` with `elem`-byte elements, if it fits.
fn byte_len(shape: &[u64], elem: usize) -> Option<usize> {
    shape
        .iter()
        .try_fold(elem as u64, |acc, &n| acc.checked_mul(n))
        .and_then(|n| usize::try_from(n).ok())
}

/// Checks that `buf_len` bytes hold a C-order array of `shape`, `elem` bytes an element.
fn check_buffer(shape: &[u64], elem: usize, buf_len: usize) -> Result<(), BlockError> {
    if elem == 0 {
        return Err(BlockError::ZeroElementSize);
    }
    let expected = byte_len(shape, elem);
    if expected != Some(buf_len) {
        return Err(BlockError::BufferLength {
            shape: shape.to_vec(),
            elem,
            expected: expected.map_or(u64::MAX, |n| n as u64),
            got: buf_len as u64,
        });
    }
    Ok(())
}

/// The positions a block covers on one axis: a range or an explicit list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AxisSet<'a> {
    /// The positions `start..start + len`.
    Range {
        /// The first position.
        start: u64,
        /// The number of positions.
        len: u64,
    },
    /// The listed positions, in the block's order (no position twice).
    List(&'a [u64]),
}

impl<'a> AxisSet<'a> {
    /// The number of positions.
    pub fn len(&self) -> u64 {
        match *self {
            AxisSet::Range { len, .. } => len,
            AxisSet::List(list) => list.len() as u64,
        }
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `i`-th position (`i < len()`).
    fn get(&self, i: u64) -> u64 {
        match *self {
            AxisSet::Range { start, .. } => start + i,
            AxisSet::List(list) => list[i as usize],
        }
    }

    /// The positions `start..start + len` of this set (the caller checked the bounds).
    fn sub(&self, start: u64, len: u64) -> AxisSet<'a> {
        match *self {
            AxisSet::Range { start: s, .. } => AxisSet::Range {
                start: s + start,
                len,
            },
            AxisSet::List(list) => AxisSet::List(&list[start as usize..(start + len) as usize]),
        }
    }
}

/// The output buffer of a parallel read: a C-order array of `shape`, `elem` bytes an element,
/// that is split into disjoint [`Block`]s.
///
/// It holds the buffer's exclusive borrow; the blocks of a split borrow the `BlockBuffer`, so
/// the buffer is the caller's again once they are dropped.
pub struct BlockBuffer<'a> {
    buf: &'a mut [u8],
    shape: Vec<u64>,
    elem: usize,
}

impl std::fmt::Debug for BlockBuffer<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockBuffer")
            .field("len", &self.buf.len())
            .field("shape", &self.shape)
            .field("elem", &self.elem)
            .finish()
    }
}

impl<'a> BlockBuffer<'a> {
    /// Takes `buf` as a C-order array of `shape` with `elem`-byte elements.
    ///
    /// # Errors
    /// [`BlockError::BufferLength`] when `buf` does not have exactly that many bytes,
    /// [`BlockError::ZeroElementSize`].
    pub fn new(buf: &'a mut [u8], shape: &[u64], elem: usize) -> Result<Self, BlockError> {
        check_buffer(shape, elem, buf.len())?;
        Ok(BlockBuffer {
            buf,
            shape: shape.to_vec(),
            elem,
        })
    }

    /// The buffer's shape.
    pub fn shape(&self) -> &[u64] {
        &self.shape
    }

    /// The element size in bytes.
    pub fn elem_size(&self) -> usize {
        self.elem
    }

    fn block<'s>(base: *mut u8, len: usize, shape: &'s [u64], elem: usize) -> Block<'s> {
        Block {
            base,
            buf_len: len,
            buf_shape: shape,
            elem,
            axes: Vec::new(),
            _buf: PhantomData,
        }
    }

    /// The whole buffer as one block.
    pub fn whole(&mut self) -> Block<'_> {
        let mut block = Self::block(
            self.buf.as_mut_ptr(),
            self.buf.len(),
            &self.shape,
            self.elem,
        );
        block.axes = self
            .shape
            .iter()
            .map(|&len| AxisSet::Range { start: 0, len })
            .collect();
        block
    }

    /// Splits the buffer into the blocks `regions` (in its positions), in their order.
    ///
    /// The regions must lie on a grid: on each axis, the intervals of any two (non-empty)
    /// regions are equal or disjoint, and no two regions have the same interval on every axis.
    /// The parts of a region read (`zarr_grid::ChunkGrid::chunks_in_region`) and a shard's
    /// inner chunks are such. Empty regions give empty blocks. The check sorts each axis's
    /// intervals (O(n log n)); regions given in C order need no further sort.
    ///
    /// # Errors
    /// A region of another rank or outside the buffer, [`BlockError::Overlap`] and
    /// [`BlockError::Duplicate`] for regions not on a grid.
    pub fn split<'r, I>(&mut self, regions: I) -> Result<Vec<Block<'_>>, BlockError>
    where
        I: IntoIterator<Item = &'r Region>,
        I::IntoIter: Clone,
    {
        let regions = regions.into_iter();
        check_grid(&self.shape, regions.clone())?;
        Ok(self.range_blocks(regions))
    }

    /// Splits the buffer into the blocks `regions` (in its positions), in their order, which
    /// need only be pairwise disjoint, not on a grid as for [`BlockBuffer::split`]: boxes a
    /// caller places as it likes (zarr-py's `ChunkCodec.decode_into`). Regions on a grid pass
    /// [`BlockBuffer::split`]'s check, O(n log n); others are compared pairwise, sorted on
    /// their first axis, O(n log n + k) for k pairs whose first-axis intervals meet. Empty
    /// regions give empty blocks.
    ///
    /// # Errors
    /// A region of another rank or outside the buffer, [`BlockError::Intersect`] for two
    /// regions that share a position.
    pub fn split_disjoint(&mut self, regions: &[Region]) -> Result<Vec<Block<'_>>, BlockError> {
        for r in regions {
            r.check_inside(&self.shape)?;
        }
        if check_grid(&self.shape, regions.iter()).is_err() {
            if let Some((first, second)) = intersecting(regions) {
                return Err(BlockError::Intersect { first, second });
            }
        }
        Ok(self.range_blocks(regions.iter()))
    }

    /// The blocks of `regions`, which the caller checked lie inside the buffer and do not
    /// overlap.
    fn range_blocks<'r>(&mut self, regions: impl Iterator<Item = &'r Region>) -> Vec<Block<'_>> {
        let (base, len) = (self.buf.as_mut_ptr(), self.buf.len());
        regions
            .map(|r| {
                let mut block = Self::block(base, len, &self.shape, self.elem);
                block.axes = range_axes(&r.start, &r.shape);
                block
            })
            .collect()
    }

    /// Splits the buffer into the product of per-axis index sets: `axes[d]` lists the sets of
    /// axis `d` (pairwise disjoint, inside the axis), and the blocks are every combination of
    /// one set per axis, in C order of the combinations (the last axis's set varies fastest).
    /// An orthogonal selection's per-chunk output positions are such a product; a point
    /// selection's (a 1-d output) are one axis of lists.
    ///
    /// # Errors
    /// [`BlockError::DimensionMismatch`] when `axes` does not have the buffer's rank,
    /// [`BlockError::IndexOutOfBounds`] or an out-of-bounds range, and
    /// [`BlockError::Overlap`] when two sets of an axis share a position.
    pub fn split_product<'s>(
        &'s mut self,
        axes: &[Vec<AxisSet<'s>>],
    ) -> Result<Vec<Block<'s>>, BlockError> {
        if axes.len() != self.shape.len() {
            return Err(BlockError::DimensionMismatch {
                what: "the list of axis sets",
                expected: self.shape.len(),
                got: axes.len(),
            });
        }
        for (axis, (sets, &len)) in axes.iter().zip(&self.shape).enumerate() {
            check_axis_sets(axis, sets, len)?;
        }
        let counts: Vec<usize> = axes.iter().map(Vec::len).collect();
        let total = counts
            .iter()
            .try_fold(1usize, |acc, &n| acc.checked_mul(n))
            .ok_or(BlockError::BufferLength {
                shape: self.shape.clone(),
                elem: self.elem,
                expected: u64::MAX,
                got: self.buf.len() as u64,
            })?;
        let (base, len) = (self.buf.as_mut_ptr(), self.buf.len());
        let mut blocks = Vec::with_capacity(total);
        if total == 0 {
            return Ok(blocks);
        }
        let mut combo = vec![0usize; counts.len()];
        loop {
            let mut block = Self::block(base, len, &self.shape, self.elem);
            block.axes = combo.iter().zip(axes).map(|(&i, sets)| sets[i]).collect();
            blocks.push(block);
            let mut d = counts.len();
            loop {
                if d == 0 {
                    return Ok(blocks);
                }
                d -= 1;
                combo[d] += 1;
                if combo[d] < counts[d] {
                    break;
                }
                combo[d] = 0;
            }
        }
    }

    /// Asks the kernel to back the buffer with transparent huge pages, where the system leaves
    /// that to the program (`madvise` mode), when it is large (32 MiB or more). A whole-array
    /// read writes every byte of a freshly allocated output, and faulting it in 4 KiB pages
    /// costs about as much as decoding the chunks; 2 MiB pages take 512 times fewer faults.
    /// Only advice: pages already touched stay as they are, and the call's failure changes
    /// nothing. Does nothing on other systems than Linux.
    pub fn advise_huge_pages(&mut self) {
        #[cfg(all(target_os = "linux", not(miri)))]
        {
            const HUGE: usize = 2 << 20;
            let out = &mut *self.buf;
            if out.len() < 4 * HUGE {
                return;
            }
            let start = out.as_mut_ptr() as usize;
            let aligned = start.next_multiple_of(HUGE);
            let end = (start + out.len()) / HUGE * HUGE;
            if end > aligned {
                // SAFETY: the range lies inside `out`, which we borrow mutably; MADV_HUGEPAGE
                // changes no content and no mapping the program can observe.
                unsafe {
                    libc::madvise(
                        aligned as *mut libc::c_void,
                        end - aligned,
                        libc::MADV_HUGEPAGE,
                    );
                }
            }
        }
    }
}

/// The range axes of the block `shape` at `start`.
fn range_axes<'a>(start: &[u64], shape: &[u64]) -> Vec<AxisSet<'a>> {
    start
        .iter()
        .zip(shape)
        .map(|(&start, &len)| AxisSet::Range { start, len })
        .collect()
}

/// Checks that `regions` lie inside `shape` and on a grid (see [`BlockBuffer::split`]).
fn check_grid<'r>(
    shape: &[u64],
    regions: impl Iterator<Item = &'r Region> + Clone,
) -> Result<(), BlockError> {
    for r in regions.clone() {
        r.check_inside(shape)?;
    }
    let nonempty = || regions.clone().filter(|r| !r.is_empty());
    // per axis, the distinct intervals are pairwise disjoint
    let mut intervals: Vec<(u64, u64)> = Vec::new();
    for axis in 0..shape.len() {
        intervals.clear();
        intervals.extend(nonempty().map(|r| (r.start[axis], r.shape[axis])));
        intervals.dedup();
        intervals.sort_unstable();
        intervals.dedup();
        if let Some(w) = intervals.windows(2).find(|w| w[0].0 + w[0].1 > w[1].0) {
            return Err(BlockError::Overlap {
                axis,
                position: w[1].0,
            });
        }
    }
    // Now two regions overlap only if they have the same interval on every axis, that is the
    // same start (distinct non-empty intervals of an axis have distinct starts).
    let mut starts: Vec<&[u64]> = nonempty().map(|r| r.start.as_slice()).collect();
    if !starts.windows(2).all(|w| w[0] < w[1]) {
        starts.sort_unstable();
        if let Some(w) = starts.windows(2).find(|w| w[0] == w[1]) {
            return Err(BlockError::Duplicate {
                start: w[0].to_vec(),
            });
        }
    }
    Ok(())
}

/// The indices of two non-empty regions that share a position, the smaller first, if any
/// (the regions have one rank and lie inside a buffer, so their ends do not overflow).
fn intersecting(regions: &[Region]) -> Option<(usize, usize)> {
    let mut order: Vec<usize> = (0..regions.len())
        .filter(|&i| !regions[i].is_empty())
        .collect();
    let &first = order.first()?;
    if regions[first].rank() == 0 {
        // every region of rank 0 is the one element
        return order.get(1).map(|&second| (first, second));
    }
    // sorted by their start on axis 0, a region is compared only with the regions that start
    // before it ends there
    order.sort_by_key(|&i| regions[i].start[0]);
    for (k, &a) in order.iter().enumerate() {
        let ra = &regions[a];
        let end = ra.start[0] + ra.shape[0];
        for &b in &order[k + 1..] {
            let rb = &regions[b];
            if rb.start[0] >= end {
                break;
            }
            let meet = (1..ra.rank()).all(|d| {
                rb.start[d] < ra.start[d] + ra.shape[d] && ra.start[d] < rb.start[d] + rb.shape[d]
            });
            if meet {
                return Some((a.min(b), a.max(b)));
            }
        }
    }
    None
}

/// Checks that the sets of one axis lie inside `0..len` and are pairwise disjoint (a bitmap
/// of the axis).
fn check_axis_sets(axis: usize, sets: &[AxisSet<'_>], len: u64) -> Result<(), BlockError> {
    let words = usize::try_from(len.div_ceil(64)).map_err(|_| BlockError::IndexOutOfBounds {
        axis,
        index: len,
        len,
    })?;
    let mut seen = vec![0u64; words];
    let mut mark = |index: u64| -> Result<(), BlockError> {
        if index >= len {
            return Err(BlockError::IndexOutOfBounds { axis, index, len });
        }
        let (w, bit) = ((index / 64) as usize, 1u64 << (index % 64));
        if seen[w] & bit != 0 {
            return Err(BlockError::Overlap {
                axis,
                position: index,
            });
        }
        seen[w] |= bit;
        Ok(())
    };
    for set in sets {
        match *set {
            AxisSet::Range { start, len: n } => {
                let end = start.checked_add(n).filter(|&e| e <= len).ok_or(
                    GeometryError::OutOfBounds {
                        axis,
                        start,
                        end: start.saturating_add(n),
                        len,
                    },
                )?;
                (start..end).try_for_each(&mut mark)?;
            }
            AxisSet::List(list) => list.iter().try_for_each(|&i| mark(i))?,
        }
    }
    Ok(())
}

/// One block of a [`BlockBuffer`]: the positions of a product of per-axis index sets, which
/// no other block of the same split covers. Every write stays inside the block.
///
/// Positions passed to and from a block are block-local: position `p` of the block is the
/// buffer position `(axes[0][p[0]], axes[1][p[1]], ...)`.
pub struct Block<'b> {
    /// The first byte of the whole buffer (not of the block).
    base: *mut u8,
    /// The whole buffer's length in bytes.
    buf_len: usize,
    buf_shape: &'b [u64],
    elem: usize,
    axes: Vec<AxisSet<'b>>,
    _buf: PhantomData<&'b mut [u8]>,
}

impl std::fmt::Debug for Block<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Block")
            .field("buffer_shape", &self.buf_shape)
            .field("elem", &self.elem)
            .field("axes", &self.axes)
            .finish_non_exhaustive()
    }
}

// SAFETY: a block is the exclusive owner of its bytes of the buffer (the split checked that no
// other block of it covers them, and the buffer stays mutably borrowed while blocks exist), and
// it reaches nothing else through `base`; so moving it to another thread is like moving a
// `&mut [u8]`.
unsafe impl Send for Block<'_> {}

impl<'b> Block<'b> {
    /// The rank.
    pub fn rank(&self) -> usize {
        self.axes.len()
    }

    /// The block's shape (the number of positions on each axis).
    pub fn shape(&self) -> Vec<u64> {
        self.axes.iter().map(AxisSet::len).collect()
    }

    /// Whether the block has shape `shape`.
    pub fn has_shape(&self, shape: &[u64]) -> bool {
        shape.len() == self.axes.len() && self.axes.iter().zip(shape).all(|(a, &n)| a.len() == n)
    }

    /// The element size in bytes.
    pub fn elem_size(&self) -> usize {
        self.elem
    }

    /// The shape of the buffer the block is part of.
    pub fn buffer_shape(&self) -> &[u64] {
        self.buf_shape
    }

    /// The positions of the block on each axis.
    pub fn axes(&self) -> &[AxisSet<'b>] {
        &self.axes
    }

    /// The block's region in the buffer, when it is one (every axis a range).
    pub fn region(&self) -> Option<Region> {
        let mut start = Vec::with_capacity(self.rank());
        let mut shape = Vec::with_capacity(self.rank());
        for axis in &self.axes {
            let AxisSet::Range { start: s, len } = *axis else {
                return None;
            };
            start.push(s);
            shape.push(len);
        }
        Some(Region { start, shape })
    }

    /// The block's access to the buffer's bytes, with its axes beside it (see [`Spans`]).
    #[inline]
    fn spans(&mut self) -> (Spans<'_>, &[AxisSet<'b>]) {
        let spans = Spans {
            base: self.base,
            len: self.buf_len,
            _block: PhantomData,
        };
        (spans, &self.axes)
    }

    /// The bytes `offset..offset + len` of the buffer, a span of this block (see
    /// [`Spans::into_span`]).
    fn bytes_mut(&mut self, offset: usize, len: usize) -> &mut [u8] {
        self.spans().0.into_span(offset, len)
    }

    /// The whole block as one slice of the buffer, when it is one contiguous run of it: its
    /// leading axes have length 1, then one axis it covers in part, then axes it spans wholly
    /// (as [`Region::is_contiguous_in`] says).
    pub fn as_contiguous_mut(&mut self) -> Option<&mut [u8]> {
        let region = self.region()?;
        let (offset, len) = Runs::new(self.buf_shape, &region, None, self.elem).single()?;
        if len == 0 {
            return Some(&mut []);
        }
        Some(self.bytes_mut(offset, len))
    }

    /// The bytes of the element at block-local position `pos`, or `None` when `pos` does not
    /// lie inside the block.
    pub fn element_mut(&mut self, pos: &[u64]) -> Option<&mut [u8]> {
        if pos.len() != self.rank() || self.axes.iter().zip(pos).any(|(a, &p)| p >= a.len()) {
            return None;
        }
        let offset = offset_of(&self.axes, self.buf_shape, self.elem, pos);
        Some(self.bytes_mut(offset, self.elem))
    }

    /// Calls `f(block-local position, the element's bytes)` for every element of the block,
    /// in C order of the block's positions.
    pub fn for_each_element(&mut self, mut f: impl FnMut(&[u64], &mut [u8])) {
        let rank = self.rank();
        if self.axes.iter().any(AxisSet::is_empty) {
            return;
        }
        let (elem, buf_shape) = (self.elem, self.buf_shape);
        let (mut spans, axes) = self.spans();
        let mut pos = vec![0u64; rank];
        loop {
            let offset = offset_of(axes, buf_shape, elem, &pos);
            f(&pos, spans.get(offset, elem));
            let mut d = rank;
            loop {
                if d == 0 {
                    return;
                }
                d -= 1;
                pos[d] += 1;
                if pos[d] < axes[d].len() {
                    break;
                }
                pos[d] = 0;
            }
        }
    }

    /// Fills every element of the block with `pattern` (one element's bytes).
    ///
    /// # Errors
    /// [`BlockError::ValueLength`] for a pattern of another size than the elements.
    pub fn fill(&mut self, pattern: &[u8]) -> Result<(), BlockError> {
        if pattern.len() != self.elem {
            return Err(BlockError::ValueLength {
                expected: self.elem,
                got: pattern.len(),
            });
        }
        let Some(region) = self.region() else {
            self.for_each_element(|_, e| e.copy_from_slice(pattern));
            return Ok(());
        };
        let runs = Runs::new(self.buf_shape, &region, None, self.elem);
        let (mut spans, _) = self.spans();
        // the runs of this block's own region (see `Runs`)
        runs.for_each(|d, _, n| fill_pattern(spans.get(d, n), pattern));
        Ok(())
    }

    /// Copies the block-shaped part at `src_start` of `src` (a C-order buffer of `src_shape`
    /// with the block's element size) into the block.
    ///
    /// # Errors
    /// A `src` of the wrong length for `src_shape`, a `src_shape` of another rank, or a part
    /// that does not lie inside it.
    pub fn copy_from(
        &mut self,
        src: &[u8],
        src_shape: &[u64],
        src_start: &[u64],
    ) -> Result<(), BlockError> {
        check_buffer(src_shape, self.elem, src.len())?;
        if src_shape.len() != self.rank() {
            return Err(BlockError::DimensionMismatch {
                what: "the source buffer",
                expected: self.rank(),
                got: src_shape.len(),
            });
        }
        let part = Region {
            start: src_start.to_vec(),
            shape: self.shape(),
        };
        part.check_inside(src_shape)?;
        let elem = self.elem;
        let Some(region) = self.region() else {
            self.for_each_element(|pos, e| {
                let lin = pos
                    .iter()
                    .zip(src_start)
                    .zip(src_shape)
                    .fold(0u64, |acc, ((&p, &s), &n)| acc * n + s + p);
                let at = lin as usize * elem;
                e.copy_from_slice(&src[at..at + elem]);
            });
            return Ok(());
        };
        let runs = Runs::new(self.buf_shape, &region, Some((src_shape, src_start)), elem);
        let (mut spans, _) = self.spans();
        // the runs of this block's own region (see `Runs`), with the source's in lockstep
        runs.for_each(|d, s, n| spans.get(d, n).copy_from_slice(&src[s..s + n]));
        Ok(())
    }

    /// Splits the block into the blocks `regions` (in block-local positions), which must lie
    /// inside the block and on a grid, as for [`BlockBuffer::split`]: a shard's block into its
    /// inner chunks' blocks.
    ///
    /// # Errors
    /// As [`BlockBuffer::split`], against the block's shape.
    pub fn split<'r, I>(&mut self, regions: I) -> Result<Vec<Block<'_>>, BlockError>
    where
        I: IntoIterator<Item = &'r Region>,
        I::IntoIter: Clone,
    {
        let regions = regions.into_iter();
        check_grid(&self.shape(), regions.clone())?;
        Ok(regions
            .map(|r| Block {
                base: self.base,
                buf_len: self.buf_len,
                buf_shape: self.buf_shape,
                elem: self.elem,
                axes: self
                    .axes
                    .iter()
                    .zip(r.start.iter().zip(&r.shape))
                    .map(|(axis, (&start, &len))| axis.sub(start, len))
                    .collect(),
                _buf: PhantomData,
            })
            .collect())
    }

    /// Checks that the block holds a whole chunk of `repr`.
    pub(crate) fn check_chunk(&self, repr: &ChunkRepr) -> Result<()> {
        check_chunk_shape(self.has_shape(&repr.shape), self.shape(), self.elem, repr)
    }
}

/// The buffer's bytes, reached span by span on behalf of one [`Block`]: its pointer and length
/// copied out of the block, which it borrows mutably for `'s` (so that a loop over runs keeps
/// them in registers). Made only by [`Block::spans`].
struct Spans<'s> {
    base: *mut u8,
    len: usize,
    _block: PhantomData<&'s mut [u8]>,
}

impl<'s> Spans<'s> {
    /// The bytes `offset..offset + len` of the buffer, for as long as the block is borrowed
    /// (this `Spans` is used up: it hands out no other span meanwhile).
    ///
    /// Every caller (the methods of [`Block`]) passes a span that it computed, in this module,
    /// from its block's own positions (`Runs` for range blocks, `offset_of` for elements,
    /// `Region::linear_offset` of the block's region for a contiguous block), so the span holds
    /// only positions of that block.
    ///
    /// # Panics
    /// If the span does not lie inside the buffer (an internal error, checked so that it
    /// cannot become an out-of-bounds write).
    #[inline]
    fn into_span(self, offset: usize, len: usize) -> &'s mut [u8] {
        assert!(
            offset <= self.len && len <= self.len - offset,
            "block span outside its buffer"
        );
        // SAFETY: the span lies inside the buffer (asserted above), which is alive and
        // mutably borrowed for as long as the block is, and so for 's. It holds positions of
        // the block only (see the callers), and the split that made the block checked that no
        // other block covers them; the block is borrowed mutably for 's by this `Spans`
        // (consumed here) or by the one `get` made it from, so no other reference to these
        // bytes exists while the returned slice lives.
        unsafe { std::slice::from_raw_parts_mut(self.base.add(offset), len) }
    }

    /// As [`Spans::into_span`], for as long as `self` is borrowed: one span at a time.
    #[inline]
    fn get(&mut self, offset: usize, len: usize) -> &mut [u8] {
        Spans {
            base: self.base,
            len: self.len,
            _block: PhantomData,
        }
        .into_span(offset, len)
    }
}

/// The contiguous runs of a range block of a C-order buffer, computed in this module from the
/// block's own region: every write of [`Block::fill`] and [`Block::copy_from`] goes to these
/// offsets, so that the bytes a block touches (the soundness of the split) depend on this
/// module alone, not on arithmetic elsewhere. A second buffer holding a block of the same
/// shape (the source of a copy) is walked in lockstep. Trailing axes that both buffers' blocks
/// span wholly are merged, so a block that is contiguous in both is one run.
struct Runs {
    /// Bytes per run.
    run: usize,
    /// Per axis before the merged ones: (destination stride, source stride, extent), bytes.
    outer: Vec<(usize, usize, u64)>,
    /// The first run's offsets in the destination and the source.
    first: (usize, usize),
    empty: bool,
}

impl Runs {
    /// The runs of `block` (inside `dst_shape`, checked by the caller) and of the block of the
    /// same shape at `src.1` of a buffer of `src.0` (the destination itself when `None`).
    fn new(dst_shape: &[u64], block: &Region, src: Option<(&[u64], &[u64])>, elem: usize) -> Runs {
        let (src_shape, src_start) = src.unwrap_or((dst_shape, &block.start));
        let shape = &block.shape;
        let rank = shape.len();
        // the axes from `merged` on form one run
        let mut merged = rank;
        let mut run = elem;
        while merged > 0 {
            let d = merged - 1;
            run *= shape[d] as usize;
            merged = d;
            let whole = |buf: &[u64], start: &[u64]| shape[d] == buf[d] && start[d] == 0;
            if !(whole(dst_shape, &block.start) && whole(src_shape, src_start)) {
                break;
            }
        }
        let (mut dst_stride, mut src_stride) = (elem, elem);
        let (mut dst0, mut src0) = (0usize, 0usize);
        let mut outer = vec![(0, 0, 0); merged];
        for d in (0..rank).rev() {
            dst0 += block.start[d] as usize * dst_stride;
            src0 += src_start[d] as usize * src_stride;
            if d < merged {
                outer[d] = (dst_stride, src_stride, shape[d]);
            }
            dst_stride *= dst_shape[d] as usize;
            src_stride *= src_shape[d] as usize;
        }
        Runs {
            run,
            outer,
            first: (dst0, src0),
            empty: shape.contains(&0),
        }
    }

    /// The one run `(offset, length)` of the destination, when the block is one contiguous run
    /// of it (`(0, 0)` for an empty block).
    fn single(&self) -> Option<(usize, usize)> {
        if self.empty {
            return Some((0, 0));
        }
        self.outer
            .iter()
            .all(|&(_, _, n)| n == 1)
            .then_some((self.first.0, self.run))
    }

    /// Calls `f(destination offset, source offset, length)` for every run, in C order.
    fn for_each(&self, mut f: impl FnMut(usize, usize, usize)) {
        if self.empty {
            return;
        }
        let mut pos = vec![0u64; self.outer.len()];
        let (mut dst, mut src) = self.first;
        loop {
            f(dst, src, self.run);
            // the odometer: the last outer axis moves fastest
            let mut d = self.outer.len();
            loop {
                if d == 0 {
                    return;
                }
                d -= 1;
                let (ds, ss, n) = self.outer[d];
                pos[d] += 1;
                dst += ds;
                src += ss;
                if pos[d] < n {
                    break;
                }
                dst -= ds * n as usize;
                src -= ss * n as usize;
                pos[d] = 0;
            }
        }
    }
}

/// The byte offset in a buffer of `buf_shape` (`elem`-byte elements) of the block-local
/// position `pos` (inside the block) of a block with `axes`.
fn offset_of(axes: &[AxisSet<'_>], buf_shape: &[u64], elem: usize, pos: &[u64]) -> usize {
    let lin = axes
        .iter()
        .zip(pos)
        .zip(buf_shape)
        .fold(0u64, |acc, ((axis, &p), &n)| acc * n + axis.get(p));
    lin as usize * elem
}

fn check_chunk_shape(matches: bool, block: Vec<u64>, elem: usize, repr: &ChunkRepr) -> Result<()> {
    if elem != repr.element_size() {
        return Err(BlockError::ValueLength {
            expected: repr.element_size(),
            got: elem,
        }
        .into());
    }
    if !matches {
        return Err(BlockError::ShapeMismatch {
            what: "the chunk",
            block,
            other: repr.shape.clone(),
        }
        .into());
    }
    Ok(())
}

/// A block of a C-order source buffer (the data of a region write, or a chunk buffer), checked
/// once: its data holds the shape's elements, and the block lies inside it. A chunk is
/// gathered from it ([`SourceBlock::gather_into`]) with no fill and no copy of the rest.
#[derive(Debug, Clone, Copy)]
pub struct SourceBlock<'a> {
    data: &'a [u8],
    shape: &'a [u64],
    elem: usize,
    block: &'a Region,
}

impl<'a> SourceBlock<'a> {
    /// The block `block` of `data`, a C-order buffer of `shape` with `elem`-byte elements.
    ///
    /// # Errors
    /// [`BlockError::BufferLength`] when `data` does not hold `shape`'s elements, and a
    /// block of another rank or outside `shape`.
    pub fn new(
        data: &'a [u8],
        shape: &'a [u64],
        elem: usize,
        block: &'a Region,
    ) -> Result<Self, BlockError> {
        check_buffer(shape, elem, data.len())?;
        block.check_inside(shape)?;
        Ok(SourceBlock {
            data,
            shape,
            elem,
            block,
        })
    }

    /// The block's shape.
    pub fn shape(&self) -> &'a [u64] {
        &self.block.shape
    }

    /// The element size in bytes.
    pub fn elem_size(&self) -> usize {
        self.elem
    }

    /// Appends the part `part` of the block (block-local positions) to `out`, in C order of
    /// the part.
    ///
    /// # Errors
    /// A part of another rank or outside the block.
    pub fn gather_into(&self, part: &Region, out: &mut Vec<u8>) -> Result<(), BlockError> {
        self.part_runs(part, |s, _, n| out.extend_from_slice(&self.data[s..s + n]))
    }

    /// Copies the part `part` of the block (block-local positions) into `out`, which holds
    /// exactly the part's elements, in C order of the part.
    ///
    /// # Errors
    /// A part of another rank or outside the block, an `out` of another length.
    pub fn copy_part_to(&self, part: &Region, out: &mut [u8]) -> Result<(), BlockError> {
        check_buffer(&part.shape, self.elem, out.len())?;
        self.part_runs(part, |s, d, n| {
            out[d..d + n].copy_from_slice(&self.data[s..s + n])
        })
    }

    /// Checks that `part` (block-local) lies inside the block, then calls `f` with each run
    /// of it: (offset in the source data, offset in the part's own C-order buffer, length),
    /// as [`block_runs`].
    fn part_runs(
        &self,
        part: &Region,
        f: impl FnMut(usize, usize, usize),
    ) -> Result<(), BlockError> {
        part.check_inside(&self.block.shape)?;
        let start: Vec<u64> = self
            .block
            .start
            .iter()
            .zip(&part.start)
            .map(|(b, p)| b + p)
            .collect();
        let zeros = vec![0u64; part.rank()];
        block_runs(
            self.shape,
            &start,
            &part.shape,
            &zeros,
            &part.shape,
            self.elem,
            f,
        );
        Ok(())
    }

    /// Checks that the block is a whole chunk of `repr`.
    pub(crate) fn check_chunk(&self, repr: &ChunkRepr) -> Result<()> {
        check_chunk_shape(
            self.block.shape == repr.shape,
            self.block.shape.clone(),
            self.elem,
            repr,
        )
    }

    /// The chunk of `repr` that the block is, gathered into a new buffer, allocated fallibly
    /// and never zero-filled.
    pub(crate) fn gather(&self, repr: &ChunkRepr) -> Result<Vec<u8>> {
        self.check_chunk(repr)?;
        let len = repr.byte_len()?;
        let mut buf = Vec::new();
        buf.try_reserve_exact(len)
            .map_err(|_| CodecError::ChunkTooLarge {
                shape: repr.shape.clone(),
                element_size: repr.element_size(),
            })?;
        self.gather_into(&Region::whole(&repr.shape), &mut buf)?;
        Ok(buf)
    }
}

/// An update of part of a chunk: the block `from` of a C-order source buffer (the data of a
/// region write) is written to `region` of the chunk, which has the same shape. What a
/// [`PartialEncoder`](crate::PartialEncoder) applies to a stored chunk.
#[derive(Debug, Clone)]
pub struct ChunkUpdate<'a> {
    data: &'a [u8],
    data_shape: &'a [u64],
    elem: usize,
    /// Where the written values lie in `data`.
    from: Region,
    /// Where they go in the chunk.
    region: Region,
    keep_empty: bool,
    /// For variable-size elements, the elements that `data`'s indices name.
    items: Option<&'a [&'a [u8]]>,
}

/// The bit of an element index of an update of variable-size elements
/// ([`ChunkUpdate::new_vlen`]) that names an element of the update: `VLEN_DATA_INDEX | i` is
/// element `i`.
pub const VLEN_DATA_INDEX: u64 = 1 << 63;
/// The element index of an update of variable-size elements that names the fill value.
pub const VLEN_FILL_INDEX: u64 = u64::MAX;

impl<'a> ChunkUpdate<'a> {
    /// The update writing the block `from` of `data` (a C-order buffer of `data_shape` with
    /// `elem`-byte elements) to `region` of the chunk. With `keep_empty`, parts of the chunk
    /// stored separately (a shard's inner chunks) that end up all fill value are stored all
    /// the same (a compare-and-swap write, which cannot delete, or `write_empty_chunks`),
    /// where the codecs can store them.
    ///
    /// # Errors
    /// [`BlockError::BufferLength`] when `data` does not hold `data_shape`'s elements, a
    /// block outside `data_shape`, and a `region` of another shape than the block.
    pub fn new(
        data: &'a [u8],
        data_shape: &'a [u64],
        elem: usize,
        from: &Region,
        region: Region,
        keep_empty: bool,
    ) -> Result<Self, BlockError> {
        check_buffer(data_shape, elem, data.len())?;
        from.check_inside(data_shape)?;
        if from.shape != region.shape {
            return Err(BlockError::ShapeMismatch {
                what: "the region updated",
                block: from.shape.clone(),
                other: region.shape,
            });
        }
        Ok(ChunkUpdate {
            data,
            data_shape,
            elem,
            from: from.clone(),
            region,
            keep_empty,
            items: None,
        })
    }

    /// The update of variable-size elements (`string`, `variable_length_bytes`) writing the
    /// block `from` of `indices` (a C-order buffer of `data_shape` holding one native-endian
    /// `u64` per element: [`VLEN_DATA_INDEX`] `| i` for `items[i]`, [`VLEN_FILL_INDEX`] for
    /// the fill value) to `region` of the chunk; `keep_empty` as for [`ChunkUpdate::new`].
    ///
    /// # Errors
    /// As [`ChunkUpdate::new`] (with 8-byte elements), and [`BlockError::ElementIndex`] for
    /// an index of the block that names no element of `items` nor the fill value.
    pub fn new_vlen(
        indices: &'a [u8],
        data_shape: &'a [u64],
        items: &'a [&'a [u8]],
        from: &Region,
        region: Region,
        keep_empty: bool,
    ) -> Result<Self, BlockError> {
        const INDEX: usize = std::mem::size_of::<u64>();
        let mut update = ChunkUpdate::new(indices, data_shape, INDEX, from, region, keep_empty)?;
        let mut bad = None;
        Runs::new(data_shape, from, None, INDEX).for_each(|at, _, n| {
            for index in indices[at..at + n].chunks_exact(INDEX) {
                let mut i = [0; INDEX];
                i.copy_from_slice(index);
                let i = u64::from_ne_bytes(i);
                let names_item = i & VLEN_DATA_INDEX != 0
                    && usize::try_from(i & !VLEN_DATA_INDEX).is_ok_and(|k| k < items.len());
                if i != VLEN_FILL_INDEX && !names_item && bad.is_none() {
                    bad = Some(i);
                }
            }
        });
        if let Some(index) = bad {
            return Err(BlockError::ElementIndex {
                index,
                items: items.len(),
            });
        }
        update.items = Some(items);
        Ok(update)
    }

    /// The elements an update of variable-size elements writes ([`ChunkUpdate::new_vlen`]);
    /// `None` for fixed-size elements.
    pub fn items(&self) -> Option<&'a [&'a [u8]]> {
        self.items
    }

    /// Where the update writes in the chunk.
    pub fn region(&self) -> &Region {
        &self.region
    }

    /// Whether parts of the chunk left all fill value are stored all the same.
    pub fn keep_empty(&self) -> bool {
        self.keep_empty
    }

    /// The update of a part of the chunk stored on its own (a shard's inner chunk), as an
    /// update of that part: `part` is a region of this update's region (positions relative
    /// to its start), `at` where it lies in the part's own chunk (same shape).
    ///
    /// # Errors
    /// A `part` outside the update's region, an `at` of another shape.
    pub fn sub(&self, part: &Region, at: Region) -> Result<ChunkUpdate<'a>, BlockError> {
        part.check_inside(&self.region.shape)?;
        if part.shape != at.shape {
            return Err(BlockError::ShapeMismatch {
                what: "the region updated",
                block: part.shape.clone(),
                other: at.shape,
            });
        }
        let from = Region {
            start: self
                .from
                .start
                .iter()
                .zip(&part.start)
                .map(|(a, b)| a + b)
                .collect(),
            shape: part.shape.clone(),
        };
        Ok(ChunkUpdate {
            data: self.data,
            data_shape: self.data_shape,
            elem: self.elem,
            from,
            region: at,
            keep_empty: self.keep_empty,
            items: self.items,
        })
    }

    /// Writes the update's values into `chunk`, a C-order buffer of `chunk_shape` (the
    /// decoded chunk, or a chunk of fill value).
    ///
    /// # Errors
    /// A chunk buffer of another length, or a region outside the chunk.
    pub fn write_into(&self, chunk: &mut [u8], chunk_shape: &[u64]) -> Result<()> {
        check_buffer(chunk_shape, self.elem, chunk.len())?;
        self.region
            .check_inside(chunk_shape)
            .map_err(BlockError::from)?;
        zarr_grid::geometry::copy_region(
            self.data,
            self.data_shape,
            &self.from.start,
            chunk,
            chunk_shape,
            &self.region.start,
            &self.region.shape,
            self.elem,
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zarr_grid::geometry::block_runs;

    fn region(start: &[u64], shape: &[u64]) -> Region {
        Region::new(start.to_vec(), shape.to_vec()).unwrap()
    }

    /// The regions of a regular grid of `chunk` over `shape` (edge blocks cut), in C order.
    fn grid(shape: &[u64], chunk: &[u64]) -> Vec<Region> {
        zarr_grid::geometry::regular_chunks_in_region(chunk, &Region::whole(shape))
            .map(|p| p.in_region)
            .collect()
    }

    #[test]
    fn runs_are_the_runs_of_the_block() {
        // the module's own walk gives exactly the runs zarr-grid's `block_runs` gives, for
        // blocks that merge no axis, some axes and all of them, with and without a source
        // (destination shape, block start, block shape, source shape, source start)
        type Case<'a> = (&'a [u64], &'a [u64], &'a [u64], &'a [u64], &'a [u64]);
        let cases: [Case<'_>; 6] = [
            (&[5, 7], &[1, 2], &[3, 4], &[6, 9], &[2, 0]),
            (&[4, 4, 4], &[1, 0, 0], &[2, 4, 4], &[2, 4, 4], &[0, 0, 0]),
            (&[4, 4, 4], &[1, 1, 0], &[2, 2, 4], &[3, 5, 4], &[1, 2, 0]),
            (&[4, 4, 4], &[0, 0, 1], &[4, 4, 2], &[4, 4, 3], &[0, 0, 1]),
            (&[], &[], &[], &[], &[]),
            (&[3, 3], &[1, 1], &[0, 2], &[3, 3], &[0, 0]),
        ];
        for (dst_shape, start, shape, src_shape, src_start) in cases {
            let block = Region {
                start: start.to_vec(),
                shape: shape.to_vec(),
            };
            for elem in [1, 4] {
                let mut got = Vec::new();
                Runs::new(dst_shape, &block, Some((src_shape, src_start)), elem)
                    .for_each(|d, s, n| got.push((s, d, n)));
                let mut want = Vec::new();
                block_runs(
                    src_shape,
                    src_start,
                    dst_shape,
                    start,
                    shape,
                    elem,
                    |s, d, n| want.push((s, d, n)),
                );
                assert_eq!(got, want, "{dst_shape:?} {start:?} {shape:?} {src_shape:?}");
                let mut alone = Vec::new();
                Runs::new(dst_shape, &block, None, elem).for_each(|d, _, n| alone.push((d, n)));
                let mut want_alone = Vec::new();
                block_runs(
                    dst_shape,
                    start,
                    dst_shape,
                    start,
                    shape,
                    elem,
                    |_, d, n| want_alone.push((d, n)),
                );
                assert_eq!(alone, want_alone);
                // one run exactly when the region is contiguous in the buffer
                let single = Runs::new(dst_shape, &block, None, elem).single().is_some();
                assert_eq!(single, block.is_contiguous_in(dst_shape), "{block:?}");
            }
        }
    }

    #[test]
    fn threads_write_disjoint_blocks() {
        // 5 x 7 buffer of u16, blocks of 2 x 3 (edge blocks cut), each thread fills its block
        // with its number and copies a source into it
        let shape = [5u64, 7];
        let mut out = vec![0u8; 5 * 7 * 2];
        let regions = grid(&shape, &[2, 3]);
        assert_eq!(regions.len(), 9);
        let src: Vec<u8> = (0..35u16).flat_map(u16::to_ne_bytes).collect();
        let mut buffer = BlockBuffer::new(&mut out, &shape, 2).unwrap();
        let blocks = buffer.split(&regions).unwrap();
        std::thread::scope(|s| {
            for (i, (mut block, r)) in blocks.into_iter().zip(&regions).enumerate() {
                let src = &src;
                s.spawn(move || {
                    block.fill(&(i as u16).to_ne_bytes()).unwrap();
                    if i.is_multiple_of(2) {
                        block.copy_from(src, &shape, &r.start).unwrap();
                    }
                });
            }
        });
        let got: Vec<u16> = out
            .chunks_exact(2)
            .map(|b| u16::from_ne_bytes([b[0], b[1]]))
            .collect();
        for y in 0..5u64 {
            for x in 0..7u64 {
                let i = (y / 2 * 3 + x / 3) as u16;
                let want = if i.is_multiple_of(2) {
                    (y * 7 + x) as u16
                } else {
                    i
                };
                assert_eq!(got[(y * 7 + x) as usize], want, "({y}, {x})");
            }
        }
    }

    #[test]
    fn contiguous_blocks_are_slices() {
        let mut out = vec![0u8; 4 * 3];
        let mut buffer = BlockBuffer::new(&mut out, &[4, 3], 1).unwrap();
        let regions = [region(&[0, 0], &[1, 3]), region(&[1, 0], &[3, 3])];
        let mut blocks = buffer.split(&regions).unwrap();
        std::thread::scope(|s| {
            for (i, block) in blocks.iter_mut().enumerate() {
                s.spawn(move || {
                    let run = block.as_contiguous_mut().unwrap();
                    run.fill(i as u8 + 1);
                    run.len()
                });
            }
        });
        drop(blocks);
        assert_eq!(out, [1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2]);
        // a column is no run
        let mut buffer = BlockBuffer::new(&mut out, &[4, 3], 1).unwrap();
        let mut blocks = buffer.split(&[region(&[0, 1], &[4, 1])]).unwrap();
        assert!(blocks[0].as_contiguous_mut().is_none());
    }

    #[test]
    fn nested_splits_stay_inside_their_parent() {
        // a 6 x 6 buffer: two 6 x 3 "shards", each split on two threads into 3 x 3 inner
        // blocks, written on threads of their own
        let mut out = vec![0u8; 36];
        let mut buffer = BlockBuffer::new(&mut out, &[6, 6], 1).unwrap();
        let shards = [region(&[0, 0], &[6, 3]), region(&[0, 3], &[6, 3])];
        let inner = grid(&[6, 3], &[3, 3]);
        let blocks = buffer.split(&shards).unwrap();
        std::thread::scope(|s| {
            for (i, mut shard) in blocks.into_iter().enumerate() {
                let inner = &inner;
                s.spawn(move || {
                    let parts = shard.split(inner).unwrap();
                    std::thread::scope(|s| {
                        for (j, mut part) in parts.into_iter().enumerate() {
                            s.spawn(move || part.fill(&[(10 * (i + 1) + j) as u8]).unwrap());
                        }
                    });
                    // a nested block outside the parent is refused
                    assert!(matches!(
                        shard.split(&[region(&[4, 0], &[3, 3])]),
                        Err(BlockError::OutOfBounds(_))
                    ));
                });
            }
        });
        let rows: Vec<&[u8]> = out.chunks(6).collect();
        assert_eq!(rows[0], [10, 10, 10, 20, 20, 20]);
        assert_eq!(rows[5], [11, 11, 11, 21, 21, 21]);
    }

    #[test]
    fn scattered_elements_of_an_orthogonal_product() {
        // a 3 x 4 output of u32: axis 0 in sets {0, 2} and {1}, axis 1 in {3, 0} and {1, 2}
        let mut out = vec![0u8; 3 * 4 * 4];
        let a0 = [vec![0u64, 2], vec![1]];
        let a1 = [vec![3u64, 0], vec![1, 2]];
        let axes: Vec<Vec<AxisSet<'_>>> = [&a0, &a1]
            .iter()
            .map(|sets| sets.iter().map(|s| AxisSet::List(s)).collect())
            .collect();
        let mut buffer = BlockBuffer::new(&mut out, &[3, 4], 4).unwrap();
        let blocks = buffer.split_product(&axes).unwrap();
        assert_eq!(blocks.len(), 4);
        assert_eq!(blocks[1].shape(), vec![2, 2]);
        std::thread::scope(|s| {
            for (b, mut block) in blocks.into_iter().enumerate() {
                s.spawn(move || {
                    // each element gets 100 * block + its block-local C index
                    let mut k = 0u32;
                    block.for_each_element(|_, e| {
                        e.copy_from_slice(&(100 * b as u32 + k).to_ne_bytes());
                        k += 1;
                    });
                    if b == 3 {
                        block
                            .element_mut(&[0, 1])
                            .unwrap()
                            .copy_from_slice(&7u32.to_ne_bytes());
                        assert!(block.element_mut(&[1, 0]).is_none());
                    }
                });
            }
        });
        let got: Vec<u32> = out
            .chunks_exact(4)
            .map(|b| u32::from_ne_bytes(b.try_into().unwrap()))
            .collect();
        #[rustfmt::skip]
        let want = [
            1, 100, 101, 0,
            201, 300, 7, 200,
            3, 102, 103, 2,
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn point_lists_fill_and_copy() {
        // a 1-d output of 6 points in two lists; a list block fills and copies element-wise
        let mut out = vec![0u8; 6];
        let lists = [vec![4u64, 0, 2], vec![1, 5, 3]];
        let axes = vec![lists.iter().map(|l| AxisSet::List(l)).collect::<Vec<_>>()];
        let mut buffer = BlockBuffer::new(&mut out, &[6], 1).unwrap();
        let mut blocks = buffer.split_product(&axes).unwrap();
        blocks[0].fill(&[9]).unwrap();
        blocks[1].copy_from(&[7, 8, 9, 10], &[4], &[1]).unwrap();
        assert!(blocks[1].copy_from(&[7, 8, 9], &[3], &[1]).is_err());
        assert!(blocks[1].fill(&[1, 2]).is_err());
        drop(blocks);
        assert_eq!(out, [9, 8, 9, 10, 9, 9]);
    }

    #[test]
    fn overlaps_and_out_of_bounds_are_refused() {
        let mut out = vec![0u8; 16];
        let mut buffer = BlockBuffer::new(&mut out, &[4, 4], 1).unwrap();
        // intervals that overlap on an axis
        let err = buffer
            .split(&[region(&[0, 0], &[2, 2]), region(&[1, 2], &[2, 2])])
            .unwrap_err();
        assert_eq!(
            err,
            BlockError::Overlap {
                axis: 0,
                position: 1
            }
        );
        // the same block twice, out of order
        let err = buffer
            .split(&[
                region(&[2, 0], &[2, 2]),
                region(&[0, 0], &[2, 2]),
                region(&[2, 0], &[2, 2]),
            ])
            .unwrap_err();
        assert_eq!(err, BlockError::Duplicate { start: vec![2, 0] });
        // outside the buffer, or of another rank
        assert!(matches!(
            buffer.split(&[region(&[3, 0], &[2, 2])]),
            Err(BlockError::OutOfBounds(GeometryError::OutOfBounds {
                axis: 0,
                ..
            }))
        ));
        assert!(buffer.split(&[region(&[0], &[2])]).is_err());
        // empty blocks take part in nothing
        let blocks = buffer
            .split(&[region(&[0, 0], &[4, 4]), region(&[1, 1], &[0, 2])])
            .unwrap();
        assert_eq!(blocks.len(), 2);
        drop(blocks);
        // index sets: repeated or out-of-bounds positions, ranges past the end
        let twice = [vec![0u64, 1], vec![1]];
        let all = [AxisSet::Range { start: 0, len: 4 }];
        let axes = vec![
            twice.iter().map(|l| AxisSet::List(l)).collect(),
            all.to_vec(),
        ];
        assert_eq!(
            buffer.split_product(&axes).unwrap_err(),
            BlockError::Overlap {
                axis: 0,
                position: 1
            }
        );
        let far = [vec![4u64]];
        let axes = vec![far.iter().map(|l| AxisSet::List(l)).collect(), all.to_vec()];
        assert_eq!(
            buffer.split_product(&axes).unwrap_err(),
            BlockError::IndexOutOfBounds {
                axis: 0,
                index: 4,
                len: 4
            }
        );
        let long = [AxisSet::Range { start: 1, len: 4 }];
        assert!(buffer
            .split_product(&[all.to_vec(), long.to_vec()])
            .is_err());
        assert!(buffer.split_product(&[all.to_vec()]).is_err());
        // a buffer of the wrong length, a copy from outside the source
        assert!(matches!(
            BlockBuffer::new(&mut [0u8; 15], &[4, 4], 1),
            Err(BlockError::BufferLength { expected: 16, .. })
        ));
        assert!(BlockBuffer::new(&mut [], &[0], 0).is_err());
        let mut whole = buffer.whole();
        assert!(whole.copy_from(&[0; 16], &[4, 4], &[1, 0]).is_err());
        assert!(whole.copy_from(&[0; 15], &[4, 4], &[0, 0]).is_err());
    }

    #[test]
    fn disjoint_blocks_off_a_grid() {
        // a 4 x 4 buffer in a pinwheel of four 1 x 3 / 3 x 1 blocks around a 2 x 2 centre:
        // disjoint, on no grid (split refuses them), each filled on its own thread
        let mut out = vec![0u8; 16];
        let mut buffer = BlockBuffer::new(&mut out, &[4, 4], 1).unwrap();
        let wheel = [
            region(&[0, 0], &[1, 3]),
            region(&[0, 3], &[3, 1]),
            region(&[3, 1], &[1, 3]),
            region(&[1, 0], &[3, 1]),
            region(&[1, 1], &[2, 2]),
            region(&[2, 2], &[0, 2]),
        ];
        assert!(buffer.split(&wheel).is_err());
        let blocks = buffer.split_disjoint(&wheel).unwrap();
        std::thread::scope(|s| {
            for (i, mut block) in blocks.into_iter().enumerate() {
                s.spawn(move || block.fill(&[i as u8 + 1]).unwrap());
            }
        });
        #[rustfmt::skip]
        let want = [
            1, 1, 1, 2,
            4, 5, 5, 2,
            4, 5, 5, 2,
            4, 3, 3, 3,
        ];
        assert_eq!(out, want);
        // two that share a position are named, the smaller index first, whatever the order
        let mut buffer = BlockBuffer::new(&mut out, &[4, 4], 1).unwrap();
        let crossed = [
            region(&[2, 0], &[2, 4]),
            region(&[0, 0], &[1, 1]),
            region(&[0, 2], &[3, 1]),
        ];
        assert_eq!(
            buffer.split_disjoint(&crossed).unwrap_err(),
            BlockError::Intersect {
                first: 0,
                second: 2
            }
        );
        // outside the buffer or of another rank, before any overlap
        assert!(matches!(
            buffer.split_disjoint(&[region(&[0, 0], &[4, 4]), region(&[3, 3], &[1, 2])]),
            Err(BlockError::OutOfBounds(_))
        ));
        assert!(buffer.split_disjoint(&[region(&[0], &[1])]).is_err());
        // rank 0: the one element, once
        let mut one = [0u8; 2];
        let mut scalar = BlockBuffer::new(&mut one, &[], 2).unwrap();
        let whole = Region::whole(&[]);
        assert_eq!(
            scalar
                .split_disjoint(&[whole.clone(), whole.clone()])
                .unwrap_err(),
            BlockError::Intersect {
                first: 0,
                second: 1
            }
        );
        let mut blocks = scalar.split_disjoint(std::slice::from_ref(&whole)).unwrap();
        blocks[0].copy_from(&[7, 8], &[], &[]).unwrap();
        drop(blocks);
        assert_eq!(one, [7, 8]);
    }

    #[test]
    fn random_disjoint_splits_match_a_census() {
        // seeded random boxes in a small 3-d buffer: split_disjoint refuses exactly the sets
        // in which some position is covered twice (a census of the positions), and a split
        // it accepts writes each block's number to exactly its positions
        let cases = if cfg!(miri) { 12 } else { 400 };
        let shape = [5u64, 4, 6];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for case in 0..cases {
            let count = 1 + next(6) as usize;
            let regions: Vec<Region> = (0..count)
                .map(|_| {
                    let start: Vec<u64> = shape.iter().map(|&d| next(d)).collect();
                    let len = start.iter().zip(&shape).map(|(&s, &d)| next(d - s + 1));
                    region(&start, &len.collect::<Vec<_>>())
                })
                .collect();
            let mut census = vec![0usize; 120];
            let mut owner = vec![0u8; 120];
            for (i, r) in regions.iter().enumerate() {
                let mut at = |p: [u64; 3]| {
                    let k = ((p[0] * 4 + p[1]) * 6 + p[2]) as usize;
                    census[k] += 1;
                    owner[k] = i as u8 + 1;
                };
                for a in r.start[0]..r.start[0] + r.shape[0] {
                    for b in r.start[1]..r.start[1] + r.shape[1] {
                        for c in r.start[2]..r.start[2] + r.shape[2] {
                            at([a, b, c]);
                        }
                    }
                }
            }
            let mut out = vec![0u8; 120];
            let mut buffer = BlockBuffer::new(&mut out, &shape, 1).unwrap();
            match buffer.split_disjoint(&regions) {
                Ok(blocks) => {
                    assert!(census.iter().all(|&c| c <= 1), "case {case}: {regions:?}");
                    for (i, mut block) in blocks.into_iter().enumerate() {
                        block.fill(&[i as u8 + 1]).unwrap();
                    }
                    assert_eq!(out, owner, "case {case}: {regions:?}");
                }
                Err(BlockError::Intersect { first, second }) => {
                    assert!(census.iter().any(|&c| c > 1), "case {case}: {regions:?}");
                    let (a, b) = (&regions[first], &regions[second]);
                    assert!(first < second);
                    assert!((0..3).all(|d| a.start[d] < b.start[d] + b.shape[d]
                        && b.start[d] < a.start[d] + a.shape[d]));
                }
                Err(e) => panic!("case {case}: {e}"),
            }
        }
    }

    #[test]
    fn many_blocks_out_of_order() {
        // n x n blocks of 1 x 1, given in reverse order (the sorting path); fewer under Miri,
        // which runs this thousands of times slower
        let n: u64 = if cfg!(miri) { 16 } else { 64 };
        let len = (n * n) as usize;
        let mut out = vec![0u8; len];
        let mut regions = grid(&[n, n], &[1, 1]);
        regions.reverse();
        let mut buffer = BlockBuffer::new(&mut out, &[n, n], 1).unwrap();
        let mut blocks = buffer.split(&regions).unwrap();
        for (i, block) in blocks.iter_mut().enumerate() {
            block.fill(&[(i % 251) as u8]).unwrap();
        }
        drop(blocks);
        assert_eq!(out[len - 1], 0);
        assert_eq!(out[0], ((len - 1) % 251) as u8);
    }

    #[test]
    fn source_blocks_gather_their_parts() {
        let data: Vec<u8> = (0..12).collect(); // 3 x 4
        let block = region(&[1, 1], &[2, 3]);
        let src = SourceBlock::new(&data, &[3, 4], 1, &block).unwrap();
        let mut out = Vec::new();
        src.gather_into(&region(&[0, 1], &[2, 2]), &mut out)
            .unwrap();
        assert_eq!(out, [6, 7, 10, 11]);
        assert!(src
            .gather_into(&region(&[1, 1], &[2, 2]), &mut out)
            .is_err());
        assert!(SourceBlock::new(&data, &[3, 4], 1, &region(&[2, 2], &[2, 2])).is_err());
        assert!(SourceBlock::new(&data[1..], &[3, 4], 1, &block).is_err());
        // the same part copied into a buffer of its size, which takes no other size
        let mut exact = [0u8; 4];
        src.copy_part_to(&region(&[0, 1], &[2, 2]), &mut exact)
            .unwrap();
        assert_eq!(exact, [6, 7, 10, 11]);
        assert!(src
            .copy_part_to(&region(&[0, 0], &[2, 3]), &mut exact)
            .is_err());
        assert!(src
            .copy_part_to(&region(&[1, 1], &[2, 2]), &mut exact)
            .is_err());
    }
}
