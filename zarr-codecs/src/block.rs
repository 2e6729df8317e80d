//! Chunks as blocks of a larger buffer: decoding a chunk straight into its place in an array
//! region, and encoding a chunk gathered straight from the caller's data.
//!
//! A chunk of an array read is a block of the output, but not a contiguous slice of it, and
//! the chunks of one read are decoded in parallel. [`SharedOut`] holds the output as a raw
//! pointer and hands out one contiguous run at a time; every run is bounds-checked, and the
//! callers only ever write blocks of one partition of the output, so no two workers touch
//! the same byte. [`BlockPlace`] says where a chunk lies in such a buffer (or in the data a
//! write takes its chunks from).

use std::marker::PhantomData;

use zarr_grid::geometry::{block_runs, Region};

use crate::error::{CodecError, Result};
use zarr_buffer::fill_pattern;

use crate::repr::ChunkRepr;

/// An output buffer that several workers write disjoint parts of.
///
/// ```
/// use zarr_codecs::SharedOut;
/// let mut buf = vec![0u8; 8];
/// let out = SharedOut::new(&mut buf);
/// std::thread::scope(|s| {
///     // SAFETY: the two runs are disjoint.
///     s.spawn(|| unsafe { out.run(0, 4) }.fill(1));
///     s.spawn(|| unsafe { out.run(4, 4) }.fill(2));
/// });
/// assert_eq!(buf, [1, 1, 1, 1, 2, 2, 2, 2]);
/// ```
pub struct SharedOut<'a> {
    ptr: *mut u8,
    len: usize,
    _buffer: PhantomData<&'a mut [u8]>,
}

impl std::fmt::Debug for SharedOut<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedOut")
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

// SAFETY: the buffer is only reached through `run`, whose contract makes concurrent writers
// touch disjoint bytes; the exclusive borrow held for 'a keeps everyone else out.
unsafe impl Send for SharedOut<'_> {}
// SAFETY: as above.
unsafe impl Sync for SharedOut<'_> {}

impl<'a> SharedOut<'a> {
    /// Takes the buffer for the lifetime of the shared writer.
    pub fn new(out: &'a mut [u8]) -> Self {
        SharedOut {
            ptr: out.as_mut_ptr(),
            len: out.len(),
            _buffer: PhantomData,
        }
    }

    /// The buffer's length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes `start..start + len` of the buffer (no reference to the rest of it is made).
    ///
    /// # Panics
    /// If the range does not lie inside the buffer.
    ///
    /// # Safety
    /// No two slices handed out (and alive at the same time, on any thread) may overlap.
    #[allow(clippy::mut_from_ref)] // the point of this type: disjoint mutable views, see above
    pub unsafe fn run(&self, start: usize, len: usize) -> &mut [u8] {
        assert!(
            start <= self.len && len <= self.len - start,
            "block run outside the output buffer"
        );
        // SAFETY: in bounds (checked above); exclusive per the caller's contract.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(start), len) }
    }

    /// Copies the block `block` at `src_start` of `src` (a C-order buffer of `src_shape`) to
    /// `dst_start` of this buffer (of shape `dst_shape`), run by run.
    ///
    /// # Panics
    /// If a run lies outside either buffer.
    ///
    /// # Safety
    /// No other thread writes or reads the destination block at the same time.
    #[allow(clippy::too_many_arguments)] // two buffers, each with shape and start
    pub unsafe fn copy_block(
        &self,
        src: &[u8],
        src_shape: &[u64],
        src_start: &[u64],
        dst_shape: &[u64],
        dst_start: &[u64],
        block: &[u64],
        elem: usize,
    ) {
        block_runs(
            src_shape,
            src_start,
            dst_shape,
            dst_start,
            block,
            elem,
            // SAFETY: the runs of one block are disjoint; other blocks are the caller's.
            |s, d, n| unsafe { self.run(d, n) }.copy_from_slice(&src[s..s + n]),
        );
    }

    /// Fills the block `block` at `dst_start` of this buffer (of shape `dst_shape`) with the
    /// element `fill`.
    ///
    /// # Panics
    /// If a run lies outside the buffer.
    ///
    /// # Safety
    /// No other thread writes or reads the block at the same time.
    pub unsafe fn fill_block(
        &self,
        dst_shape: &[u64],
        dst_start: &[u64],
        block: &[u64],
        fill: &[u8],
    ) {
        block_runs(
            dst_shape,
            dst_start,
            dst_shape,
            dst_start,
            block,
            fill.len(),
            // SAFETY: as for `copy_block`.
            |_, d, n| fill_pattern(unsafe { self.run(d, n) }, fill),
        );
    }
}

/// Where a whole chunk lies in a larger C-order buffer: at `start` of a buffer of `shape`
/// (elements of the chunk's data type).
#[derive(Debug, Clone, Copy)]
pub struct BlockPlace<'a> {
    /// The shape of the larger buffer.
    pub shape: &'a [u64],
    /// The chunk's first position in it.
    pub start: &'a [u64],
}

impl BlockPlace<'_> {
    /// Checks that a chunk of `repr` lies inside a buffer of `self.shape` holding `len`
    /// bytes.
    pub(crate) fn check(&self, repr: &ChunkRepr, len: usize) -> Result<()> {
        let elem = repr.element_size() as u64;
        let block = Region {
            start: self.start.to_vec(),
            shape: repr.shape.clone(),
        };
        let inside = block.check_inside(self.shape).is_ok();
        let expected = self
            .shape
            .iter()
            .try_fold(elem, |acc, &n| acc.checked_mul(n));
        if !inside || expected != Some(len as u64) {
            return Err(CodecError::BufferLength {
                what: "the buffer holding the chunk as a block",
                expected: expected.unwrap_or(u64::MAX),
                got: len as u64,
            });
        }
        Ok(())
    }

    /// The chunk's bytes gathered out of `src` (the larger buffer) into a new buffer,
    /// allocated fallibly and never zero-filled.
    pub(crate) fn gather(&self, src: &[u8], repr: &ChunkRepr) -> Result<Vec<u8>> {
        self.check(repr, src.len())?;
        let too_large = || CodecError::ChunkTooLarge {
            shape: repr.shape.clone(),
            element_size: repr.element_size(),
        };
        let len = repr.byte_len()?;
        let mut buf = Vec::new();
        buf.try_reserve_exact(len).map_err(|_| too_large())?;
        let zeros = vec![0u64; repr.rank()];
        // the runs come in order of the chunk's bytes
        block_runs(
            self.shape,
            self.start,
            &repr.shape,
            &zeros,
            &repr.shape,
            repr.element_size(),
            |s, _, n| buf.extend_from_slice(&src[s..s + n]),
        );
        Ok(buf)
    }
}
