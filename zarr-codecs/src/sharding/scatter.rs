//! Parallel writes of disjoint N-d blocks into one output buffer.
//!
//! Inner chunks of a shard cover disjoint blocks of the output, but a block is not a
//! contiguous slice, so safe slice splitting cannot hand each worker its part. [`SharedOut`]
//! holds the output as a raw pointer and hands out the contiguous runs of one block at a time;
//! every access is bounds-checked, and the callers only ever pass blocks of one partition of
//! the output, so no two workers touch the same byte.

use std::marker::PhantomData;

/// Calls `f(src_offset, dst_offset, len)` (in bytes) for every contiguous run of a block of
/// shape `block` at `src_start` in a C-order buffer of shape `src_shape` and at `dst_start` in
/// one of shape `dst_shape`, elements of `elem` bytes. Trailing axes that both buffers span
/// wholly are merged into one run.
pub(crate) fn block_runs(
    src_shape: &[u64],
    src_start: &[u64],
    dst_shape: &[u64],
    dst_start: &[u64],
    block: &[u64],
    elem: usize,
    mut f: impl FnMut(usize, usize, usize),
) {
    let rank = block.len();
    if block.contains(&0) {
        return;
    }
    if rank == 0 {
        f(0, 0, elem);
        return;
    }
    let mut run = block[rank - 1] as usize * elem;
    let mut outer = rank - 1;
    while outer > 0
        && block[outer] == src_shape[outer]
        && block[outer] == dst_shape[outer]
        && src_start[outer] == 0
        && dst_start[outer] == 0
    {
        outer -= 1;
        run *= block[outer] as usize;
    }
    let strides = |shape: &[u64]| {
        let mut s = vec![elem; rank];
        for d in (0..rank - 1).rev() {
            s[d] = s[d + 1] * shape[d + 1] as usize;
        }
        s
    };
    let ss = strides(src_shape);
    let ds = strides(dst_shape);
    let base = |start: &[u64], st: &[usize]| -> usize {
        start.iter().zip(st).map(|(&a, &s)| a as usize * s).sum()
    };
    let (src_base, dst_base) = (base(src_start, &ss), base(dst_start, &ds));
    let count: usize = block[..outer].iter().map(|&n| n as usize).product();
    let mut idx = vec![0usize; outer];
    for _ in 0..count {
        let mut so = src_base;
        let mut doff = dst_base;
        for d in 0..outer {
            so += idx[d] * ss[d];
            doff += idx[d] * ds[d];
        }
        f(so, doff, run);
        for d in (0..outer).rev() {
            idx[d] += 1;
            if (idx[d] as u64) < block[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

/// An output buffer that several workers write disjoint parts of.
pub(crate) struct SharedOut<'a> {
    ptr: *mut u8,
    len: usize,
    _buffer: PhantomData<&'a mut [u8]>,
}

// SAFETY: the buffer is only reached through `run`, whose contract makes concurrent writers
// touch disjoint bytes; the exclusive borrow held for 'a keeps everyone else out.
unsafe impl Send for SharedOut<'_> {}
// SAFETY: as above.
unsafe impl Sync for SharedOut<'_> {}

impl<'a> SharedOut<'a> {
    /// Takes the buffer for the lifetime of the shared writer.
    pub(crate) fn new(out: &'a mut [u8]) -> Self {
        SharedOut {
            ptr: out.as_mut_ptr(),
            len: out.len(),
            _buffer: PhantomData,
        }
    }

    /// The bytes `start..start + len` of the buffer.
    ///
    /// # Panics
    /// If the range does not lie inside the buffer.
    ///
    /// # Safety
    /// No two slices handed out (and alive at the same time, on any thread) may overlap.
    #[allow(clippy::mut_from_ref)] // the point of this type: disjoint mutable views, see above
    pub(crate) unsafe fn run(&self, start: usize, len: usize) -> &mut [u8] {
        assert!(
            start <= self.len && len <= self.len - start,
            "block run outside the output buffer"
        );
        // SAFETY: in bounds (checked above); exclusive per the caller's contract.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(start), len) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zarr_grid::geometry::copy_region;

    #[test]
    fn runs_copy_like_copy_region() {
        let src: Vec<u8> = (0..60).collect(); // 3x4x5
        let mut want = vec![0u8; 2 * 6 * 5];
        copy_region(
            &src,
            &[3, 4, 5],
            &[1, 0, 0],
            &mut want,
            &[2, 6, 5],
            &[0, 1, 0],
            &[2, 4, 5],
            1,
        );
        let mut got = vec![0u8; 2 * 6 * 5];
        let mut runs = 0;
        block_runs(
            &[3, 4, 5],
            &[1, 0, 0],
            &[2, 6, 5],
            &[0, 1, 0],
            &[2, 4, 5],
            1,
            |s, d, n| {
                got[d..d + n].copy_from_slice(&src[s..s + n]);
                runs += 1;
            },
        );
        assert_eq!(got, want);
        assert_eq!(runs, 2);
    }
}
