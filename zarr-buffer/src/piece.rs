//! [`Piece`]: one part of a value written as pieces of the value it replaces and new bytes.

use std::ops::Range;

/// One part of a new value made mostly of the value it replaces: a shard rewritten with one
/// new inner chunk is its unchanged byte ranges, the new inner chunk and a new index. A store
/// that can copy a stored range without reading it (the filesystem store, in the kernel) then
/// writes the new value without the unchanged bytes passing through memory
/// (`zarr_store`'s `StoredValue::replace`).
///
/// ```
/// use zarr_buffer::Piece;
///
/// let old = b"0123456789";
/// let pieces = [Piece::Kept(0..3), Piece::New(b"abc".to_vec()), Piece::Kept(7..10)];
/// assert_eq!(Piece::len_of(&pieces), 9);
/// assert_eq!(Piece::join(&pieces, old), Some(b"012abc789".to_vec()));
/// // a kept range must lie inside the old value
/// assert_eq!(Piece::join(&[Piece::Kept(8..11)], old), None);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// These bytes of the value being replaced, as they are (`start <= end <= its size`).
    Kept(Range<u64>),
    /// New bytes.
    New(Vec<u8>),
}

impl Piece {
    /// The length of this piece in bytes (0 for a reversed range).
    #[must_use]
    pub fn len(&self) -> u64 {
        match self {
            Piece::Kept(range) => range.end.saturating_sub(range.start),
            Piece::New(bytes) => bytes.len() as u64,
        }
    }

    /// Whether the piece holds no bytes.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The length of the value `pieces` make, saturating.
    #[must_use]
    pub fn len_of(pieces: &[Piece]) -> u64 {
        pieces.iter().fold(0u64, |n, p| n.saturating_add(p.len()))
    }

    /// Whether every kept range of `pieces` lies inside a value of `size` bytes.
    #[must_use]
    pub fn fit(pieces: &[Piece], size: u64) -> bool {
        pieces.iter().all(|p| match p {
            Piece::Kept(range) => range.start <= range.end && range.end <= size,
            Piece::New(_) => true,
        })
    }

    /// The new value `pieces` make from the old value `old`, or `None` when a kept range does
    /// not lie inside it (checked before anything is allocated).
    #[must_use]
    pub fn join(pieces: &[Piece], old: &[u8]) -> Option<Vec<u8>> {
        if !Self::fit(pieces, old.len() as u64) {
            return None;
        }
        let mut out = Vec::with_capacity(usize::try_from(Self::len_of(pieces)).ok()?);
        for piece in pieces {
            match piece {
                // fits in `old`, so in usize
                Piece::Kept(range) => {
                    out.extend_from_slice(&old[range.start as usize..range.end as usize]);
                }
                Piece::New(bytes) => out.extend_from_slice(bytes),
            }
        }
        Some(out)
    }
}
