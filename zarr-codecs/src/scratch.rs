//! A per-thread scratch buffer for chunk-sized work whose result does not outlive the call:
//! a whole chunk decoded only to pick a few elements, an inner chunk gathered only to be
//! compressed. Its pages are touched once per thread rather than faulted in afresh for every
//! chunk, and it stays in the core's cache from one chunk to the next.
//!
//! A codec's own working space inside such a call (blosc's shuffled block, decoded before it
//! is unshuffled into the chunk) has a second buffer, [`with_codec_scratch`], so that the two
//! can be held at once.

use std::cell::RefCell;
use std::thread::LocalKey;

/// The largest buffer [`with_scratch`] keeps, per thread.
const SCRATCH_MAX: usize = 8 << 20;

thread_local! {
    /// The buffer of [`with_scratch`].
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    /// The buffer of [`with_codec_scratch`].
    #[cfg(feature = "blosc")]
    static CODEC_SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` on this thread's scratch buffer of `len` bytes (its contents left by earlier
/// calls). `None`, without calling `f`, when `len` is over [`SCRATCH_MAX`], the memory cannot
/// be had, or the buffer is in use (a nested call on this thread, such as a job rayon runs
/// while `f` waits): the caller then allocates.
pub(crate) fn with_scratch<R>(len: usize, f: impl FnOnce(&mut [u8]) -> R) -> Option<R> {
    with_buffer(&SCRATCH, len, f)
}

/// As [`with_scratch`], on this thread's second buffer: a codec's working space while the
/// chunk it decodes into may be the first.
#[cfg(feature = "blosc")]
pub(crate) fn with_codec_scratch<R>(len: usize, f: impl FnOnce(&mut [u8]) -> R) -> Option<R> {
    with_buffer(&CODEC_SCRATCH, len, f)
}

fn with_buffer<R>(
    key: &'static LocalKey<RefCell<Vec<u8>>>,
    len: usize,
    f: impl FnOnce(&mut [u8]) -> R,
) -> Option<R> {
    if len > SCRATCH_MAX {
        return None;
    }
    key.with(|cell| {
        let mut buf = cell.try_borrow_mut().ok()?;
        if buf.len() < len {
            let more = len - buf.len();
            buf.try_reserve_exact(more).ok()?;
            buf.resize(len, 0);
        }
        Some(f(&mut buf[..len]))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nested_call_gets_none_and_a_too_large_one_too() {
        let outer = with_scratch(16, |buf| {
            buf.fill(7);
            with_scratch(16, |_| ()).is_none()
        });
        assert_eq!(outer, Some(true));
        // the buffer is free again, and keeps what the last call left
        assert_eq!(with_scratch(16, |buf| buf.to_vec()), Some(vec![7; 16]));
        assert!(with_scratch(SCRATCH_MAX + 1, |_| ()).is_none());
    }

    #[cfg(feature = "blosc")]
    #[test]
    fn the_codec_buffer_is_had_while_the_first_is_held() {
        let both = with_scratch(8, |chunk| {
            with_codec_scratch(8, |block| {
                block.fill(1);
                chunk.copy_from_slice(block);
                with_codec_scratch(8, |_| ()).is_none()
            })
        });
        assert_eq!(both, Some(Some(true)));
        assert_eq!(with_scratch(8, |buf| buf.to_vec()), Some(vec![1; 8]));
    }
}
