//! Untrusted chunk bytes: every corruption is an error (the right one), never a panic; random
//! mutations and truncations never panic, and whatever still decodes satisfies every invariant.
//! Also: layouts the decoder must accept, type checks of the views, and zero-copy views.

use proptest::prelude::*;
use zarr_layout_sparse::{
    encode_dense, AlignedBuffer, Format, IndexType, Layout, PointerType, SparseChunk, SparseError,
};

// CSR 4 x 5 float32, uint16 indices, uint32 pointers:
//   pointers [0, 2, 2, 4, 6] at 80 (20 bytes), indices at 104 (12 bytes), values at 120 (24).
const CSR_DENSE: [f32; 20] = [
    0.0, 1.0, 0.0, 2.0, 0.0, //
    0.0, 0.0, 0.0, 0.0, 0.0, //
    3.0, 0.0, 0.0, 0.0, 4.0, //
    0.0, 5.0, 6.0, 0.0, 0.0,
];
const CSR_SHAPE: [u64; 2] = [4, 5];
const CSR: Layout = Layout::csr(IndexType::U16, PointerType::U32);

fn csr_bytes() -> Vec<u8> {
    let bytes = encode_dense(&CSR, &CSR_SHAPE, &CSR_DENSE, &0.0).unwrap();
    assert_eq!(bytes.len(), 144);
    bytes
}

// COO 3 x 4 x 2 int32, uint32 indices: indices (3, 5) at 64 (60 bytes), values at 128 (20).
const COO_SHAPE: [u64; 3] = [3, 4, 2];
const COO: Layout = Layout::coo(IndexType::U32);

fn coo_dense() -> Vec<i32> {
    let mut d = vec![0i32; 24];
    for (pos, v) in [(1, 10), (6, -3), (9, 7), (16, 1), (23, 99)] {
        d[pos] = v;
    }
    d
}

fn coo_bytes() -> Vec<u8> {
    let bytes = encode_dense(&COO, &COO_SHAPE, &coo_dense(), &0).unwrap();
    assert_eq!(bytes.len(), 152);
    bytes
}

fn put_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

fn put_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn put_u16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_le_bytes());
}

fn csr_err(bytes: &[u8]) -> SparseError {
    let buf = AlignedBuffer::from_slice(bytes);
    SparseChunk::decode(&buf, &CSR, &CSR_SHAPE, 4).unwrap_err()
}

fn coo_err(bytes: &[u8]) -> SparseError {
    let buf = AlignedBuffer::from_slice(bytes);
    SparseChunk::decode(&buf, &COO, &COO_SHAPE, 4).unwrap_err()
}

/// Applies `edit` to a fresh CSR chunk and returns the decode error.
fn csr_with(edit: impl FnOnce(&mut Vec<u8>)) -> SparseError {
    let mut b = csr_bytes();
    edit(&mut b);
    csr_err(&b)
}

fn coo_with(edit: impl FnOnce(&mut Vec<u8>)) -> SparseError {
    let mut b = coo_bytes();
    edit(&mut b);
    coo_err(&b)
}

#[test]
fn valid_chunks_decode() {
    let b = csr_bytes();
    let buf = AlignedBuffer::from_slice(&b);
    let chunk = SparseChunk::decode(&buf, &CSR, &CSR_SHAPE, 4).unwrap();
    assert_eq!(chunk.to_dense(&0.0f32).unwrap(), CSR_DENSE);
    assert_eq!(chunk.pointers::<u32>().unwrap(), &[0, 2, 2, 4, 6]);
    assert_eq!(chunk.indices::<u16>().unwrap(), &[1, 3, 0, 4, 1, 2]);
    let b = coo_bytes();
    let buf = AlignedBuffer::from_slice(&b);
    let chunk = SparseChunk::decode(&buf, &COO, &COO_SHAPE, 4).unwrap();
    assert_eq!(chunk.to_dense(&0i32).unwrap(), coo_dense());
}

#[test]
fn header_corruptions() {
    assert!(
        matches!(csr_with(|b| b[0] = b'X'), SparseError::BadMagic { found } if &found == b"XSPL")
    );
    assert_eq!(
        csr_with(|b| b[4] = 2),
        SparseError::UnsupportedVersion { found: 2 }
    );
    assert_eq!(
        csr_with(|b| b[4] = 0),
        SparseError::UnsupportedVersion { found: 0 }
    );
    assert_eq!(
        csr_with(|b| b[5] = 3),
        SparseError::UnknownFormat { found: 3 }
    );
    assert_eq!(
        csr_with(|b| b[5] = 2),
        SparseError::FormatMismatch {
            expected: Format::Csr,
            found: Format::Csc
        }
    );
    assert_eq!(
        csr_with(|b| b[6] = 4),
        SparseError::WidthMismatch {
            field: "index width",
            expected: 2,
            found: 4
        }
    );
    assert_eq!(
        csr_with(|b| b[7] = 8),
        SparseError::WidthMismatch {
            field: "pointer width",
            expected: 4,
            found: 8
        }
    );
    assert_eq!(
        coo_with(|b| b[7] = 4),
        SparseError::WidthMismatch {
            field: "pointer width",
            expected: 0,
            found: 4
        }
    );
    assert_eq!(
        csr_with(|b| put_u16(b, 16, 3)),
        SparseError::RankMismatch {
            expected: 2,
            found: 3
        }
    );
    assert_eq!(
        csr_with(|b| put_u16(b, 18, 2)),
        SparseError::SectionCount {
            expected: 3,
            found: 2
        }
    );
    assert_eq!(
        csr_with(|b| put_u32(b, 20, 8)),
        SparseError::WidthMismatch {
            field: "value size",
            expected: 4,
            found: 8
        }
    );
    assert_eq!(csr_with(|b| b[30] = 1), SparseError::ReservedNotZero);
}

#[test]
fn nnz_corruptions() {
    assert_eq!(
        csr_with(|b| put_u64(b, 8, u64::MAX)),
        SparseError::TooManyEntries {
            nnz: u64::MAX,
            elements: 20
        }
    );
    // More entries than the sections hold.
    assert_eq!(
        csr_with(|b| put_u64(b, 8, 7)),
        SparseError::SectionSize {
            section: "indices_1",
            expected: 14,
            found: 12,
            nnz: 7
        }
    );
    // nnz = element count, with a section table that agrees: the sections leave the buffer.
    assert_eq!(
        coo_with(|b| {
            put_u64(b, 8, 24);
            put_u64(b, 40, 3 * 24 * 4);
            put_u64(b, 48, 64 + 3 * 24 * 4);
            put_u64(b, 56, 24 * 4);
        }),
        SparseError::SectionOutOfBounds {
            section: "indices",
            offset: 64,
            len: 288,
            buffer_len: 152
        }
    );
}

#[test]
fn truncations() {
    let b = csr_bytes();
    assert_eq!(
        csr_err(&b[..20]),
        SparseError::Truncated {
            what: "header",
            needed: 32,
            len: 20
        }
    );
    assert_eq!(
        csr_err(&b[..50]),
        SparseError::Truncated {
            what: "section table",
            needed: 80,
            len: 50
        }
    );
    assert!(matches!(
        csr_err(&b[..100]),
        SparseError::SectionOutOfBounds {
            section: "pointers_to_1",
            ..
        } | SparseError::SectionOutOfBounds {
            section: "indices_1",
            ..
        }
    ));
    assert_eq!(
        csr_err(&b[..143]),
        SparseError::SectionOutOfBounds {
            section: "values",
            offset: 120,
            len: 24,
            buffer_len: 143
        }
    );
    assert!(matches!(csr_err(&[]), SparseError::Truncated { .. }));
}

#[test]
fn section_table_corruptions() {
    assert_eq!(
        csr_with(|b| put_u64(b, 48, 105)),
        SparseError::SectionMisaligned {
            section: "indices_1",
            offset: 105
        }
    );
    assert_eq!(
        csr_with(|b| put_u64(b, 48, 80)),
        SparseError::SectionOverlap {
            section: "indices_1",
            offset: 80,
            previous_end: 100
        }
    );
    // Sections in another order than the table's.
    assert_eq!(
        csr_with(|b| {
            put_u64(b, 32, 104);
            put_u64(b, 48, 80);
        }),
        SparseError::SectionOverlap {
            section: "indices_1",
            offset: 80,
            previous_end: 124
        }
    );
    // A section over the section table.
    assert_eq!(
        csr_with(|b| put_u64(b, 32, 72)),
        SparseError::SectionOverlap {
            section: "pointers_to_1",
            offset: 72,
            previous_end: 80
        }
    );
    assert_eq!(
        csr_with(|b| put_u64(b, 64, 144)),
        SparseError::SectionOutOfBounds {
            section: "values",
            offset: 144,
            len: 24,
            buffer_len: 144
        }
    );
    // offset + nbytes overflows u64.
    assert!(matches!(
        csr_with(|b| put_u64(b, 64, !7u64)),
        SparseError::SectionOutOfBounds { .. }
    ));
    assert!(matches!(
        csr_with(|b| put_u64(b, 72, u64::MAX)),
        SparseError::SectionOutOfBounds { .. }
    ));
    assert_eq!(
        csr_with(|b| put_u64(b, 56, 14)),
        SparseError::SectionSize {
            section: "indices_1",
            expected: 12,
            found: 14,
            nnz: 6
        }
    );
}

#[test]
fn pointer_corruptions() {
    assert_eq!(
        csr_with(|b| put_u32(b, 80, 1)),
        SparseError::PointerBoundary {
            position: 0,
            expected: 0,
            found: 1
        }
    );
    assert_eq!(
        csr_with(|b| put_u32(b, 96, 5)),
        SparseError::PointerBoundary {
            position: 4,
            expected: 6,
            found: 5
        }
    );
    assert_eq!(
        csr_with(|b| put_u32(b, 88, 1)),
        SparseError::PointerDecreasing {
            position: 2,
            previous: 2,
            found: 1
        }
    );
    assert!(matches!(
        csr_with(|b| put_u32(b, 84, u32::MAX)),
        SparseError::PointerDecreasing { .. }
    ));
}

#[test]
fn index_corruptions() {
    // Row 0 holds columns [1, 3].
    assert_eq!(
        csr_with(|b| {
            put_u16(b, 104, 3);
            put_u16(b, 106, 1);
        }),
        SparseError::Unsorted { entry: 1 }
    );
    assert_eq!(
        csr_with(|b| put_u16(b, 106, 1)),
        SparseError::Unsorted { entry: 1 }
    );
    assert_eq!(
        csr_with(|b| put_u16(b, 106, 5)),
        SparseError::IndexOutOfRange {
            entry: 1,
            axis: 1,
            index: 5,
            extent: 5
        }
    );
    // COO: swap entries 1 and 2 on every axis.
    assert_eq!(
        coo_with(|b| {
            for axis in 0..3 {
                let at = 64 + (axis * 5 + 1) * 4;
                let (x, y) = (b[at..at + 4].to_vec(), b[at + 4..at + 8].to_vec());
                b[at..at + 4].copy_from_slice(&y);
                b[at + 4..at + 8].copy_from_slice(&x);
            }
        }),
        SparseError::Unsorted { entry: 2 }
    );
    // COO: entry 1 repeats entry 0 -> not strictly increasing.
    assert_eq!(
        coo_with(|b| {
            for axis in 0..3 {
                let at = 64 + axis * 5 * 4;
                let first = b[at..at + 4].to_vec();
                b[at + 4..at + 8].copy_from_slice(&first);
            }
        }),
        SparseError::Unsorted { entry: 1 }
    );
    assert_eq!(
        coo_with(|b| put_u32(b, 64 + 5 * 4, 4)),
        SparseError::IndexOutOfRange {
            entry: 0,
            axis: 1,
            index: 4,
            extent: 4
        }
    );
}

#[test]
fn expectations_of_the_caller() {
    let b = csr_bytes();
    let buf = AlignedBuffer::from_slice(&b);
    assert!(matches!(
        SparseChunk::decode(&buf, &CSR, &[5, 4], 4),
        Err(SparseError::SectionSize { .. })
    ));
    assert!(matches!(
        SparseChunk::decode(&buf, &CSR, &CSR_SHAPE, 0),
        Err(SparseError::InvalidElementKind { .. })
    ));
    assert!(matches!(
        SparseChunk::decode(&buf, &CSR, &[4, 5, 1], 4),
        Err(SparseError::UnsupportedRank { .. })
    ));
    let misaligned = AlignedBuffer::from_slice(&[&[0u8][..], &b].concat());
    assert_eq!(
        SparseChunk::decode(&misaligned[1..], &CSR, &CSR_SHAPE, 4).unwrap_err(),
        SparseError::Misaligned {
            align: 8,
            offset: 1
        }
    );
}

#[test]
fn non_canonical_layouts_are_accepted() {
    // Gaps (with garbage) between sections and trailing bytes: still valid.
    let b = csr_bytes();
    let mut moved = b[..120].to_vec();
    moved.extend_from_slice(&[0xAB; 16]);
    moved.extend_from_slice(&b[120..144]);
    moved.extend_from_slice(&[0xCD; 5]);
    put_u64(&mut moved, 64, 136);
    let buf = AlignedBuffer::from_slice(&moved);
    let chunk = SparseChunk::decode(&buf, &CSR, &CSR_SHAPE, 4).unwrap();
    assert_eq!(chunk.to_dense(&0.0f32).unwrap(), CSR_DENSE);

    // A stored value equal to the fill value is accepted (and reads as itself).
    let mut stored_fill = b.clone();
    put_u32(&mut stored_fill, 120, 0);
    let buf = AlignedBuffer::from_slice(&stored_fill);
    let chunk = SparseChunk::decode(&buf, &CSR, &CSR_SHAPE, 4).unwrap();
    assert_eq!(chunk.nnz(), 6);
    assert_eq!(chunk.to_dense(&0.0f32).unwrap()[1], 0.0);

    // An empty chunk.
    let empty = encode_dense(&CSR, &CSR_SHAPE, &[0.0f32; 20], &0.0).unwrap();
    let buf = AlignedBuffer::from_slice(&empty);
    let chunk = SparseChunk::decode(&buf, &CSR, &CSR_SHAPE, 4).unwrap();
    assert_eq!(chunk.nnz(), 0);
    assert_eq!(chunk.to_dense(&7.0f32).unwrap(), [7.0; 20]);
}

#[test]
fn typed_access_is_checked() {
    let b = csr_bytes();
    let buf = AlignedBuffer::from_slice(&b);
    let chunk = SparseChunk::decode(&buf, &CSR, &CSR_SHAPE, 4).unwrap();
    assert!(matches!(
        chunk.indices::<u32>(),
        Err(SparseError::TypeMismatch { .. })
    ));
    assert!(matches!(
        chunk.pointers::<u64>(),
        Err(SparseError::TypeMismatch { .. })
    ));
    assert!(matches!(
        chunk.values::<f64>(),
        Err(SparseError::WidthMismatch { .. })
    ));
    assert!(matches!(
        chunk.sprs_view::<f32, u32, u32>(),
        Err(SparseError::TypeMismatch { .. })
    ));
    assert!(matches!(
        chunk.coo_indices::<u16>(),
        Err(SparseError::UnsupportedOperation { .. })
    ));
    assert!(matches!(
        chunk.densify_into(&mut [0.0f32; 19], &0.0),
        Err(SparseError::LengthMismatch { .. })
    ));
    assert!(matches!(
        chunk.densify_bytes(&mut [0u8; 80], &[0u8; 8]),
        Err(SparseError::LengthMismatch { .. })
    ));
    let b = coo_bytes();
    let buf = AlignedBuffer::from_slice(&b);
    let chunk = SparseChunk::decode(&buf, &COO, &COO_SHAPE, 4).unwrap();
    assert!(matches!(
        chunk.pointers::<u32>(),
        Err(SparseError::UnsupportedOperation { .. })
    ));
    assert!(matches!(
        chunk.sprs_view::<i32, u32, u32>(),
        Err(SparseError::UnsupportedOperation { .. })
    ));
}

fn inside<T>(buf: &AlignedBuffer, slice: &[T]) -> bool {
    let range = buf.as_bytes().as_ptr_range();
    let (start, end) = (slice.as_ptr() as usize, slice.as_ptr_range().end as usize);
    start >= range.start as usize && end <= range.end as usize
}

#[test]
fn views_point_into_the_input_buffer() {
    let b = csr_bytes();
    let buf = AlignedBuffer::from_slice(&b);
    let chunk = SparseChunk::decode(&buf, &CSR, &CSR_SHAPE, 4).unwrap();
    let base = buf.as_bytes().as_ptr() as usize;
    let mat = chunk.sprs_view::<f32, u16, u32>().unwrap();
    assert_eq!(mat.indptr().raw_storage().as_ptr() as usize, base + 80);
    assert_eq!(mat.indices().as_ptr() as usize, base + 104);
    assert_eq!(mat.data().as_ptr() as usize, base + 120);
    assert!(inside(&buf, mat.indptr().raw_storage()));
    assert!(inside(&buf, mat.indices()));
    assert!(inside(&buf, mat.data()));
    assert_eq!(chunk.values::<f32>().unwrap().as_ptr(), mat.data().as_ptr());

    let b = coo_bytes();
    let buf = AlignedBuffer::from_slice(&b);
    let chunk = SparseChunk::decode(&buf, &COO, &COO_SHAPE, 4).unwrap();
    let base = buf.as_bytes().as_ptr() as usize;
    let view = chunk.coo::<i32, u32>().unwrap();
    assert_eq!(view.indices.as_ptr() as usize, base + 64);
    assert_eq!(view.values.as_ptr() as usize, base + 128);
    assert!(inside(&buf, view.indices.as_slice().unwrap()));
    assert!(inside(&buf, view.values));
    assert_eq!(view.indices.row(1).to_vec(), vec![0, 3, 0, 0, 3]);
    let (coords, value) = chunk.entries::<i32>().unwrap().nth(4).unwrap();
    assert_eq!((&coords[..], *value), (&[2u64, 3, 1][..], 99));
    assert!(inside(&buf, std::slice::from_ref(value)));
}

#[test]
fn uint16_minor_axis_of_65536() {
    // Legal (uint16 holds 65535), but sprs wants the minor extent itself to fit the index type.
    let layout = Layout::csr(IndexType::U16, PointerType::U32);
    let shape = [1, 65536];
    let mut dense = vec![0u8; 65536];
    dense[65535] = 1;
    dense[3] = 2;
    let bytes = encode_dense(&layout, &shape, &dense, &0).unwrap();
    let buf = AlignedBuffer::from_slice(&bytes);
    let chunk = SparseChunk::decode(&buf, &layout, &shape, 1).unwrap();
    assert_eq!(chunk.to_dense(&0u8).unwrap(), dense);
    assert!(matches!(
        chunk.sprs_view::<u8, u16, u32>(),
        Err(SparseError::Unrepresentable { .. })
    ));
    let entries: Vec<_> = chunk
        .entries::<u8>()
        .unwrap()
        .map(|(c, v)| (c.to_vec(), *v))
        .collect();
    assert_eq!(entries, vec![(vec![0, 3], 2), (vec![0, 65535], 1)]);
}

#[test]
fn layout_rules() {
    assert_eq!(
        Layout::new(Format::Coo, IndexType::U16, Some(PointerType::U32)),
        Err(SparseError::UnexpectedPointerType)
    );
    assert_eq!(
        Layout::new(Format::Csc, IndexType::U16, None),
        Err(SparseError::MissingPointerType {
            format: Format::Csc
        })
    );
    let coo16 = Layout::coo(IndexType::U16);
    assert_eq!(coo16.check_shape(&[65536, 2]), Ok(131072));
    assert_eq!(
        coo16.check_shape(&[2, 65537]),
        Err(SparseError::IndexTypeTooSmall {
            index_type: IndexType::U16,
            axis: 1,
            max: 65536
        })
    );
    assert!(matches!(
        coo16.check_shape(&[]),
        Err(SparseError::UnsupportedRank { .. })
    ));
    assert!(matches!(
        coo16.check_shape(&[1 << 40, 1 << 40]),
        Err(SparseError::SizeOverflow { .. }) | Err(SparseError::IndexTypeTooSmall { .. })
    ));
    // CSR indexes columns only, CSC rows only.
    let csr16 = Layout::csr(IndexType::U16, PointerType::U64);
    assert!(csr16.check_shape(&[100_000, 10]).is_ok());
    assert!(Layout::csc(IndexType::U16, PointerType::U64)
        .check_shape(&[100_000, 10])
        .is_err());
    assert_eq!(
        Layout::csr(IndexType::U32, PointerType::U32).check_shape(&[100_000, 100_000]),
        Err(SparseError::PointerTypeTooSmall {
            pointer_type: PointerType::U32,
            elements: 10_000_000_000
        })
    );
    assert_eq!(
        Layout::smallest(Format::Csr, &[100_000, 100_000]),
        Ok(Layout::csr(IndexType::U32, PointerType::U64))
    );
    assert_eq!(
        Layout::smallest(Format::Coo, &[70_000]),
        Ok(Layout::coo(IndexType::U32))
    );
    assert_eq!(
        Layout::smallest(Format::Csc, &[20, 25]),
        Ok(Layout::csc(IndexType::U16, PointerType::U32))
    );
    assert!(Layout::smallest(Format::Csr, &[2, 2, 2]).is_err());
}

/// Valid chunks of several layouts for the mutation test: (layout, shape, value size, bytes).
fn valid_chunks() -> Vec<(Layout, Vec<u64>, usize, Vec<u8>)> {
    let csc = Layout::csc(IndexType::U32, PointerType::U64);
    let csc_dense: Vec<f64> = (0..18)
        .map(|i| if i % 3 == 1 { i as f64 } else { 0.0 })
        .collect();
    let coo1 = Layout::coo(IndexType::U64);
    let coo1_dense: Vec<u8> = (0..13).map(|i| (i % 4 == 0) as u8).collect();
    vec![
        (CSR, CSR_SHAPE.to_vec(), 4, csr_bytes()),
        (COO, COO_SHAPE.to_vec(), 4, coo_bytes()),
        (
            csc,
            vec![6, 3],
            8,
            encode_dense(&csc, &[6, 3], &csc_dense, &0.0).unwrap(),
        ),
        (
            coo1,
            vec![13],
            1,
            encode_dense(&coo1, &[13], &coo1_dense, &0).unwrap(),
        ),
    ]
}

#[derive(Debug, Clone)]
enum Edit {
    /// Set one byte.
    Byte(usize, u8),
    /// Set one u64 field of the header or section table (nnz, offsets, sizes).
    Field(usize, u64),
    /// Set one narrow header field (widths, ndim, section count, value size).
    Narrow(usize, u8),
}

fn edits() -> impl Strategy<Value = Edit> {
    let interesting = prop_oneof![
        Just(0u64),
        Just(1),
        0u64..256,
        Just(u64::MAX),
        Just(!7u64),
        Just(1 << 32),
        Just(1 << 62),
    ];
    prop_oneof![
        // Anywhere, or in the structural bytes (header, table, pointers, indices).
        2 => (any::<usize>(), any::<u8>()).prop_map(|(p, v)| Edit::Byte(p, v)),
        2 => (0usize..128, any::<u8>()).prop_map(|(p, v)| Edit::Byte(p, v)),
        2 => (0usize..7, interesting).prop_map(|(f, v)| Edit::Field(f, v)),
        1 => (prop::sample::select(vec![6usize, 7, 16, 18, 20]), any::<u8>())
            .prop_map(|(p, v)| Edit::Narrow(p, v)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn mutations_and_truncations_never_panic(
        which in 0usize..4,
        edits in prop::collection::vec(edits(), 0..5),
        cut in prop::option::weighted(0.15, any::<usize>()),
        misalign in prop::bool::weighted(0.05),
    ) {
        let (layout, shape, value_size, mut b) = valid_chunks().swap_remove(which);
        for edit in edits {
            match edit {
                Edit::Byte(p, v) => {
                    let n = b.len();
                    b[p % n] = v;
                }
                // nnz at 8, then the table's offset/nbytes pairs from 32.
                Edit::Field(f, v) => {
                    let at = if f == 0 { 8 } else { 32 + 8 * (f - 1) };
                    if at + 8 <= b.len() {
                        put_u64(&mut b, at, v);
                    }
                }
                Edit::Narrow(p, v) => b[p] = v,
            }
        }
        if let Some(c) = cut {
            b.truncate(c % (b.len() + 1));
        }
        let buf = if misalign {
            AlignedBuffer::from_slice(&[&[0u8][..], &b].concat())
        } else {
            AlignedBuffer::from_slice(&b)
        };
        let bytes = if misalign { &buf[1..] } else { &buf[..] };
        if let Ok(chunk) = SparseChunk::decode(bytes, &layout, &shape, value_size) {
            // Whatever decodes satisfies every invariant: all uses succeed.
            let dense = chunk.to_dense_bytes(&vec![0u8; value_size]).unwrap();
            prop_assert_eq!(dense.len(), chunk.element_count() * value_size);
            prop_assert_eq!(chunk.byte_entries().count(), chunk.nnz());
            match (layout.format(), layout.index_type(), value_size) {
                (Format::Csr, IndexType::U16, 4) => {
                    let m = chunk.sprs_view::<f32, u16, u32>().unwrap();
                    prop_assert!(m.check_compressed_structure().is_ok());
                    prop_assert_eq!(m.iter().count(), chunk.nnz());
                }
                (Format::Csc, IndexType::U32, 8) => {
                    let m = chunk.sprs_view::<f64, u32, u64>().unwrap();
                    prop_assert!(m.check_compressed_structure().is_ok());
                    prop_assert_eq!(m.iter().count(), chunk.nnz());
                }
                (Format::Coo, IndexType::U32, 4) => {
                    prop_assert_eq!(chunk.coo::<i32, u32>().unwrap().values.len(), chunk.nnz());
                }
                (Format::Coo, IndexType::U64, 1) => {
                    prop_assert_eq!(chunk.coo::<u8, u64>().unwrap().indices.ncols(), chunk.nnz());
                }
                _ => unreachable!(),
            }
        }
    }
}
