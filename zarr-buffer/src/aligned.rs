//! [`AlignedBuffer`]: the 8-byte-aligned buffer decoded chunks live in.

use std::fmt;
use std::ops::{Deref, DerefMut};

/// A byte buffer whose start is 8-byte aligned (it is backed by a `Vec<u64>`), so typed views
/// of a decoded chunk (`&[f64]`, a sparse layout's sections) are casts, not copies.
///
/// ```
/// use zarr_buffer::AlignedBuffer;
///
/// let mut buf = AlignedBuffer::zeroed(12);
/// buf[..4].copy_from_slice(&7u32.to_ne_bytes());
/// assert_eq!(buf.len(), 12);
/// assert_eq!(buf.as_ptr() as usize % 8, 0);
/// let words: &[u32] = bytemuck::cast_slice(&buf);
/// assert_eq!(words, &[7, 0, 0]);
/// ```
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct AlignedBuffer {
    words: Vec<u64>,
    len: usize,
}

impl AlignedBuffer {
    /// An empty buffer.
    pub const fn new() -> Self {
        AlignedBuffer {
            words: Vec::new(),
            len: 0,
        }
    }

    /// `len` zero bytes (large buffers come straight from zeroed pages, so this is cheap).
    pub fn zeroed(len: usize) -> Self {
        AlignedBuffer {
            words: vec![0; len.div_ceil(8)],
            len,
        }
    }

    /// A zero-filled buffer of `len` bytes, or `None` when the memory cannot be had (the
    /// size comes from metadata, which is untrusted: a failed allocation must be an error,
    /// not an abort).
    pub fn try_zeroed(len: usize) -> Option<Self> {
        // zeroed by the allocator (fresh pages for large sizes), not written over
        let words = bytemuck::allocation::try_zeroed_slice_box(len.div_ceil(8)).ok()?;
        Some(AlignedBuffer {
            words: words.into_vec(),
            len,
        })
    }

    /// A copy of `bytes`.
    pub fn from_slice(bytes: &[u8]) -> Self {
        let mut buf = AlignedBuffer {
            words: Vec::with_capacity(bytes.len().div_ceil(8)),
            len: 0,
        };
        let mut chunks = bytes.chunks_exact(8);
        for c in chunks.by_ref() {
            buf.words.push(u64::from_ne_bytes([
                c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7],
            ]));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            buf.words.push(u64::from_ne_bytes(last));
        }
        buf.len = bytes.len();
        buf
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes.
    pub fn as_bytes(&self) -> &[u8] {
        let all: &[u8] = bytemuck::cast_slice(&self.words);
        &all[..self.len]
    }

    /// The bytes, mutably.
    pub fn as_bytes_mut(&mut self) -> &mut [u8] {
        let all: &mut [u8] = bytemuck::cast_slice_mut(&mut self.words);
        &mut all[..self.len]
    }

    /// Shortens the buffer to `len` bytes (no effect if it is not longer). The allocation is
    /// kept.
    pub fn truncate(&mut self, len: usize) {
        if len < self.len {
            // zero the dropped tail of the last kept word, so growing again yields zeros
            let all: &mut [u8] = bytemuck::cast_slice_mut(&mut self.words);
            all[len..self.len].fill(0);
            self.words.truncate(len.div_ceil(8));
            self.len = len;
        }
    }

    /// Resizes to `len` bytes; new bytes are zero.
    pub fn resize(&mut self, len: usize) {
        self.truncate(len);
        self.words.resize(len.div_ceil(8), 0);
        self.len = len;
    }

    /// Replaces the contents by a copy of `bytes`, reusing the allocation.
    pub fn copy_from(&mut self, bytes: &[u8]) {
        self.truncate(0);
        self.resize(bytes.len());
        self.as_bytes_mut().copy_from_slice(bytes);
    }

    /// The underlying words (the last one zero-padded past [`AlignedBuffer::len`]).
    pub fn as_words(&self) -> &[u64] {
        &self.words
    }

    /// The bytes as a `Vec<u8>` (a copy).
    pub fn to_vec(&self) -> Vec<u8> {
        self.as_bytes().to_vec()
    }
}

impl Deref for AlignedBuffer {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl DerefMut for AlignedBuffer {
    fn deref_mut(&mut self) -> &mut [u8] {
        self.as_bytes_mut()
    }
}

impl AsRef<[u8]> for AlignedBuffer {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl AsMut<[u8]> for AlignedBuffer {
    fn as_mut(&mut self) -> &mut [u8] {
        self.as_bytes_mut()
    }
}

impl From<&[u8]> for AlignedBuffer {
    fn from(bytes: &[u8]) -> Self {
        AlignedBuffer::from_slice(bytes)
    }
}

impl fmt::Debug for AlignedBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AlignedBuffer")
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

/// Whether a slice starts on an 8-byte boundary (where an [`AlignedBuffer`]'s bytes start).
pub fn is_aligned(bytes: &[u8]) -> bool {
    (bytes.as_ptr() as usize).is_multiple_of(8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncate_and_resize_keep_zeros() {
        let mut b = AlignedBuffer::from_slice(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        assert_eq!(b.as_bytes(), &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        b.truncate(3);
        assert_eq!(b.as_bytes(), &[1, 2, 3]);
        b.resize(9);
        assert_eq!(b.as_bytes(), &[1, 2, 3, 0, 0, 0, 0, 0, 0]);
        b.truncate(100);
        assert_eq!(b.len(), 9);
        assert!(is_aligned(&b));
        b.copy_from(&[7, 8]);
        assert_eq!(b.as_bytes(), &[7, 8]);
        assert!(AlignedBuffer::new().is_empty());
        assert_eq!(AlignedBuffer::zeroed(5).as_bytes(), &[0; 5]);
    }
}
