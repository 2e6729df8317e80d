//! [`AlignedBuf`]: an 8-byte-aligned byte buffer to decode chunks into.

use std::fmt;
use std::ops::{Deref, DerefMut};

/// A byte buffer whose start is 8-byte aligned (it is backed by a `Vec<u64>`), so every
/// section of an encoded chunk held in it can be cast in place.
///
/// ```
/// use zarr_layout_sparse::AlignedBuf;
/// let buf = AlignedBuf::from_slice(&[1, 2, 3]);
/// assert_eq!(buf.as_bytes(), &[1, 2, 3]);
/// assert_eq!(buf.as_bytes().as_ptr() as usize % 8, 0);
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct AlignedBuf {
    words: Vec<u64>,
    len: usize,
}

impl AlignedBuf {
    /// An empty buffer.
    pub const fn new() -> Self {
        AlignedBuf {
            words: Vec::new(),
            len: 0,
        }
    }

    /// A buffer of `len` zero bytes.
    pub fn zeroed(len: usize) -> Self {
        AlignedBuf {
            words: vec![0; len.div_ceil(8)],
            len,
        }
    }

    /// A copy of `bytes`.
    pub fn from_slice(bytes: &[u8]) -> Self {
        let mut buf = Self::zeroed(bytes.len());
        buf.as_bytes_mut().copy_from_slice(bytes);
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

    /// Resizes to `len` bytes; new bytes are zero.
    pub fn resize(&mut self, len: usize) {
        if len < self.len {
            // Zero the tail of the last kept word so that growing again yields zeros.
            let all: &mut [u8] = bytemuck::cast_slice_mut(&mut self.words);
            all[len..self.len].fill(0);
        }
        self.words.resize(len.div_ceil(8), 0);
        self.len = len;
    }

    /// Replaces the contents by a copy of `bytes`, reusing the allocation.
    pub fn copy_from(&mut self, bytes: &[u8]) {
        self.resize(0);
        self.resize(bytes.len());
        self.as_bytes_mut().copy_from_slice(bytes);
    }
}

impl Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        self.as_bytes_mut()
    }
}

impl AsRef<[u8]> for AlignedBuf {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl AsMut<[u8]> for AlignedBuf {
    fn as_mut(&mut self) -> &mut [u8] {
        self.as_bytes_mut()
    }
}

impl From<&[u8]> for AlignedBuf {
    fn from(bytes: &[u8]) -> Self {
        Self::from_slice(bytes)
    }
}

impl fmt::Debug for AlignedBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AlignedBuf")
            .field("len", &self.len)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resize_zeroes_new_bytes() {
        let mut b = AlignedBuf::from_slice(&[9; 13]);
        b.resize(3);
        b.resize(16);
        assert_eq!(&b[..3], &[9, 9, 9]);
        assert!(b[3..].iter().all(|&x| x == 0));
        b.copy_from(&[1, 2]);
        assert_eq!(b.as_bytes(), &[1, 2]);
        assert!(AlignedBuf::new().is_empty());
        assert_eq!(AlignedBuf::zeroed(5).len(), 5);
    }
}
