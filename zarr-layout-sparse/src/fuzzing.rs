//! The bodies of the fuzz targets that exercise this crate (cargo feature `fuzzing`; **not a
//! stable API**: it changes with the targets).
//!
//! `fuzz/fuzz_targets/<target>.rs` calls them (the `fuzz` crate enables the feature), and
//! `tests/it/fuzz_corpus.rs` replays the target's corpus and regressions through the same
//! functions under plain `cargo test`. A panic is a finding.

/// The `sparse_decode` target: sparse chunks decoded, densified and re-encoded.
pub mod decode {
    use crate::{
        encode_dense_bytes, AlignedBuffer, ElementKind, IndexType as I, Layout as L,
        PointerType as P, SparseChunk,
    };

    /// The fixed `(layout, chunk shape, value size)` cases of the target.
    pub fn cases() -> Vec<(L, Vec<u64>, usize)> {
        vec![
            (L::coo(I::U16), vec![4, 5], 4),
            (L::coo(I::U32), vec![3, 3, 3], 1),
            (L::coo(I::U64), vec![8], 8),
            (L::coo(I::U16), vec![2, 2, 2, 2], 2),
            (L::csr(I::U16, P::U32), vec![4, 5], 4),
            (L::csr(I::U32, P::U64), vec![6, 2], 8),
            (L::csc(I::U16, P::U32), vec![4, 5], 2),
            (L::csc(I::U64, P::U64), vec![3, 7], 16),
        ]
    }

    /// The first byte picks a case; the rest, copied to an aligned buffer, is a sparse chunk.
    /// A chunk that validates densifies, lists exactly `nnz` entries inside the shape, and
    /// re-encodes (from its dense form) to a chunk that densifies the same.
    pub fn run(data: &[u8]) {
        let Some((&selector, rest)) = data.split_first() else {
            return;
        };
        let cases = cases();
        let (layout, shape, size) = cases[usize::from(selector) % cases.len()].clone();
        let buf = AlignedBuffer::from_slice(rest);
        let Ok(chunk) = SparseChunk::decode(buf.as_bytes(), &layout, &shape, size) else {
            return;
        };
        let elements: u64 = shape.iter().product();
        assert!(
            chunk.nnz() as u64 <= elements,
            "more entries than positions"
        );
        let fill = vec![0u8; size];
        let dense = chunk
            .to_dense_bytes(&fill)
            .expect("a valid chunk densifies");
        assert_eq!(dense.len() as u64, elements * size as u64);
        let mut count = 0usize;
        for (coords, value) in chunk.byte_entries() {
            count += 1;
            assert_eq!(value.len(), size);
            assert_eq!(coords.as_slice().len(), shape.len());
            assert!(coords.as_slice().iter().zip(&shape).all(|(c, n)| c < n));
        }
        assert_eq!(count, chunk.nnz(), "entries listed");
        let kind = ElementKind::opaque(size).expect("a non-zero size");
        // the decoder does not know the fill value, so a chunk may store entries equal to it;
        // re-encoding drops those, but the dense form is the same
        let again = encode_dense_bytes(&layout, &shape, kind, &fill, &dense)
            .expect("a dense chunk encodes");
        let abuf = AlignedBuffer::from_slice(&again);
        let round = SparseChunk::decode(abuf.as_bytes(), &layout, &shape, size)
            .expect("a re-encoded chunk decodes");
        assert!(round.nnz() <= chunk.nnz(), "re-encoding adds entries");
        assert_eq!(
            round.to_dense_bytes(&fill).expect("densifies"),
            dense,
            "re-encoding changes the chunk"
        );
    }
}
