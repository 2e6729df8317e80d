//! Property tests: every format, index and pointer type, several value types, ranks 1..4 for
//! COO. dense -> encode -> decode -> densify gives the dense chunk back; the byte-level,
//! triples and sprs builders produce the same canonical bytes; the views agree with the data.

use std::fmt::Debug;

use bytemuck::{bytes_of, cast_slice};
use half::f16;
use num_complex::{Complex32, Complex64};
use proptest::prelude::*;
use proptest::sample::select;
use zarr_layout_sparse::sprs::CsMatI;
use zarr_layout_sparse::{
    encode_dense, encode_dense_bytes, encode_positions, encode_sprs, encode_triples,
    encode_triples_summed, encoded_len, encoded_size_bound, AlignedBuffer, Format, IndexType,
    Layout, PointerType, SparseChunk, SparseError, SparseIndex, SparsePointer, SparseValue,
};
use zarr_testkit::Rng;

fn layouts() -> impl Strategy<Value = Layout> {
    let index = select(IndexType::ALL.to_vec());
    let pointer = select(PointerType::ALL.to_vec());
    (0u8..3, index, pointer).prop_map(|(f, i, p)| match f {
        0 => Layout::coo(i),
        1 => Layout::csr(i, p),
        _ => Layout::csc(i, p),
    })
}

fn shapes(format: Format) -> BoxedStrategy<Vec<u64>> {
    // Mostly non-empty extents, sometimes an empty axis.
    let extent = prop_oneof![12 => 1u64..6, 1 => Just(0u64)];
    match format {
        Format::Coo => prop::collection::vec(extent, 1..=4).boxed(),
        _ => prop::collection::vec(prop_oneof![12 => 1u64..10, 1 => Just(0u64)], 2).boxed(),
    }
}

type Case<T> = (Layout, Vec<u64>, T, Vec<T>);

/// A chunk: layout, shape, fill value and dense data (about two thirds fill).
fn cases<T: Debug + Copy + 'static>(
    fills: Vec<T>,
    others: BoxedStrategy<T>,
) -> BoxedStrategy<Case<T>> {
    (layouts(), select(fills))
        .prop_flat_map(|(layout, fill)| (Just(layout), shapes(layout.format()), Just(fill)))
        .prop_flat_map(move |(layout, shape, fill)| {
            let n = shape.iter().product::<u64>() as usize;
            let element = prop_oneof![2 => Just(fill), 1 => others.clone()];
            (
                Just(layout),
                Just(shape),
                Just(fill),
                prop::collection::vec(element, n),
            )
        })
        .boxed()
}

fn f32s() -> BoxedStrategy<f32> {
    prop_oneof![
        Just(0.0f32),
        Just(-0.0),
        Just(f32::NAN),
        Just(-f32::NAN),
        Just(f32::from_bits(0x7fc0_0001)),
        Just(f32::INFINITY),
        Just(1.5),
        any::<f32>(),
    ]
    .boxed()
}

fn f64s() -> BoxedStrategy<f64> {
    prop_oneof![
        Just(0.0f64),
        Just(-0.0),
        Just(f64::NAN),
        Just(f64::from_bits(0xfff8_0000_0000_0003)),
        Just(f64::NEG_INFINITY),
        any::<f64>(),
    ]
    .boxed()
}

fn f16s() -> BoxedStrategy<f16> {
    prop_oneof![
        Just(f16::ZERO),
        Just(f16::NEG_ZERO),
        Just(f16::NAN),
        Just(f16::from_bits(0xfe01)),
        any::<u16>().prop_map(f16::from_bits),
    ]
    .boxed()
}

fn c64s() -> BoxedStrategy<Complex32> {
    (f32s(), f32s())
        .prop_map(|(re, im)| Complex32::new(re, im))
        .boxed()
}

fn c128s() -> BoxedStrategy<Complex64> {
    (f64s(), f64s())
        .prop_map(|(re, im)| Complex64::new(re, im))
        .boxed()
}

fn same<T: SparseValue>(a: &T, b: &T) -> bool {
    bytes_of(a) == bytes_of(b)
}

fn coords_of(shape: &[u64], mut pos: u64) -> Vec<u64> {
    let mut c = vec![0; shape.len()];
    for (x, &e) in c.iter_mut().zip(shape).rev() {
        *x = pos % e;
        pos /= e;
    }
    c
}

fn position(shape: &[u64], coords: &[u64]) -> usize {
    coords.iter().zip(shape).fold(0, |acc, (c, e)| acc * e + c) as usize
}

fn check_views<T: SparseValue + Debug, I: SparseIndex, P: SparsePointer, B: AsRef<[u8]>>(
    chunk: &SparseChunk<B>,
    dense: &[T],
) -> Result<(), TestCaseError> {
    let shape = chunk.shape().to_vec();
    match chunk.format() {
        Format::Coo => {
            let view = chunk.coo::<T, I>().unwrap();
            prop_assert_eq!(view.indices.dim(), (shape.len(), chunk.nnz()));
            for (k, value) in view.values.iter().enumerate() {
                let coords: Vec<u64> = view.indices.column(k).iter().map(|i| i.as_u64()).collect();
                prop_assert!(same(value, &dense[position(&shape, &coords)]));
            }
            prop_assert!(chunk.sprs_view::<T, I, u32>().is_err());
        }
        Format::Csr | Format::Csc => {
            let mat = chunk.sprs_view::<T, I, P>().unwrap();
            prop_assert!(mat.check_compressed_structure().is_ok());
            prop_assert_eq!(mat.is_csr(), chunk.format() == Format::Csr);
            prop_assert_eq!(mat.shape(), (shape[0] as usize, shape[1] as usize));
            prop_assert_eq!(mat.nnz(), chunk.nnz());
            let mut count = 0;
            for (value, (r, c)) in mat.iter() {
                let pos = r.index() * shape[1] as usize + c.index();
                prop_assert!(same(value, &dense[pos]));
                count += 1;
            }
            prop_assert_eq!(count, chunk.nnz());
            prop_assert!(chunk.coo_indices::<I>().is_err());
        }
    }
    Ok(())
}

fn dispatch_views<T: SparseValue + Debug, B: AsRef<[u8]>>(
    chunk: &SparseChunk<B>,
    dense: &[T],
) -> Result<(), TestCaseError> {
    macro_rules! with_p {
        ($I:ty) => {
            match chunk.layout().pointer_type() {
                Some(PointerType::U64) => check_views::<T, $I, u64, B>(chunk, dense),
                _ => check_views::<T, $I, u32, B>(chunk, dense),
            }
        };
    }
    match chunk.layout().index_type() {
        IndexType::U16 => with_p!(u16),
        IndexType::U32 => with_p!(u32),
        IndexType::U64 => with_p!(u64),
    }
}

/// Builds a `sprs` CSR (or CSC) matrix of the dense 2-d chunk; positions where
/// `pos % 4 == 0` are stored even when they hold the fill value.
fn sprs_of<T: SparseValue, I: sprs::SpIndex, P: sprs::SpIndex>(
    shape: &[u64],
    dense: &[T],
    fill: &T,
    csc: bool,
) -> CsMatI<T, I, P> {
    let (rows, cols) = (shape[0] as usize, shape[1] as usize);
    let (outer, inner) = if csc { (cols, rows) } else { (rows, cols) };
    let mut indptr = vec![P::zero()];
    let mut indices = Vec::new();
    let mut data = Vec::new();
    for o in 0..outer {
        for i in 0..inner {
            let pos = if csc { i * cols + o } else { o * cols + i };
            if !dense[pos].is_fill(fill) || pos % 4 == 0 {
                indices.push(I::from_usize(i));
                data.push(dense[pos]);
            }
        }
        indptr.push(P::from_usize(indices.len()));
    }
    let made = if csc {
        CsMatI::try_new_csc((rows, cols), indptr, indices, data)
    } else {
        CsMatI::try_new((rows, cols), indptr, indices, data)
    };
    made.map_err(|e| e.3).unwrap()
}

fn check_roundtrip<T: SparseValue + Debug>(
    layout: Layout,
    shape: &[u64],
    fill: T,
    dense: &[T],
    seed: u64,
) -> Result<(), TestCaseError> {
    let size = size_of::<T>();
    let bytes = encode_dense(&layout, shape, dense, &fill).unwrap();
    let nnz = dense.iter().filter(|v| !v.is_fill(&fill)).count();

    // The byte-level builder writes the same bytes.
    let from_bytes =
        encode_dense_bytes(&layout, shape, T::KIND, bytes_of(&fill), cast_slice(dense)).unwrap();
    prop_assert_eq!(&from_bytes, &bytes);

    // Canonical length, within the bound, padded to 8.
    let (iw, pw) = (layout.index_width(), layout.pointer_width());
    let len = encoded_len(layout.format(), shape, nnz as u64, size, iw, pw).unwrap();
    prop_assert_eq!(bytes.len() as u64, len);
    prop_assert!(len <= encoded_size_bound(layout.format(), shape, size, iw, pw).unwrap());
    prop_assert_eq!(bytes.len() % 8, 0);

    // Decode, densify, compare (NaN equal to NaN: it is the fill value).
    let buf = AlignedBuffer::from_slice(&bytes);
    let chunk = SparseChunk::decode(&buf, &layout, shape, size).unwrap();
    prop_assert_eq!(chunk.nnz(), nnz);
    let out = chunk.to_dense(&fill).unwrap();
    for (got, want) in out.iter().zip(dense) {
        if want.is_fill(&fill) {
            prop_assert!(same(got, &fill));
        } else {
            prop_assert!(same(got, want), "{:?} read back as {:?}", want, got);
        }
    }
    let out_bytes = chunk.to_dense_bytes(bytes_of(&fill)).unwrap();
    prop_assert_eq!(&out_bytes[..], cast_slice::<T, u8>(&out));

    // Re-encoding the decoded chunk gives the same bytes.
    prop_assert_eq!(&encode_dense(&layout, shape, &out, &fill).unwrap(), &bytes);

    // Entries, typed and untyped.
    let mut count = 0;
    for ((coords, value), (coords_b, value_b)) in
        chunk.entries::<T>().unwrap().zip(chunk.byte_entries())
    {
        prop_assert_eq!(&coords, &coords_b);
        prop_assert_eq!(bytes_of(value), value_b);
        prop_assert!(same(value, &dense[position(shape, &coords)]));
        count += 1;
    }
    prop_assert_eq!(count, nnz);

    dispatch_views(&chunk, dense)?;

    // Triples in shuffled order, with some explicit fill values, give the same bytes.
    let mut triples: Vec<(u64, T)> = dense
        .iter()
        .enumerate()
        .filter(|&(i, v)| !v.is_fill(&fill) || i % 5 == 0)
        .map(|(i, v)| (i as u64, *v))
        .collect();
    Rng::new(seed).shuffle(&mut triples);
    let coords: Vec<u64> = triples
        .iter()
        .flat_map(|&(pos, _)| coords_of(shape, pos))
        .collect();
    let values: Vec<T> = triples.iter().map(|t| t.1).collect();
    prop_assert_eq!(
        &encode_triples(&layout, shape, &coords, &values, &fill).unwrap(),
        &bytes
    );

    // Sorted C-order positions (the same entries, fill values included) give the same bytes;
    // a repeated or out-of-order position and one past the end are refused.
    triples.sort_by_key(|t| t.0);
    let positions: Vec<u64> = triples.iter().map(|t| t.0).collect();
    let sorted_values: Vec<T> = triples.iter().map(|t| t.1).collect();
    prop_assert_eq!(
        &encode_positions(&layout, shape, &positions, &sorted_values, &fill).unwrap(),
        &bytes
    );
    if positions.len() >= 2 {
        let mut swapped = positions.clone();
        swapped.swap(0, 1);
        let unsorted = encode_positions(&layout, shape, &swapped, &sorted_values, &fill);
        prop_assert!(
            matches!(unsorted, Err(SparseError::Unsorted { entry: 1 })),
            "{:?}",
            unsorted
        );
    }
    if !positions.is_empty() {
        let mut past = positions.clone();
        *past.last_mut().unwrap() = dense.len() as u64;
        let out = encode_positions(&layout, shape, &past, &sorted_values, &fill);
        let refused = matches!(out, Err(SparseError::IndexOutOfRange { axis: 0, .. }));
        prop_assert!(refused, "{:?}", out);
    }

    // Repeating a triple is an error when duplicates are not summed.
    if let Some(&first) = values.first() {
        let mut coords2 = coords.clone();
        coords2.extend_from_slice(&coords[..shape.len()]);
        let mut values2 = values.clone();
        values2.push(first);
        let dup = encode_triples(&layout, shape, &coords2, &values2, &fill);
        let is_duplicate = matches!(dup, Err(SparseError::Duplicate { .. }));
        prop_assert!(is_duplicate, "expected a duplicate error, got {:?}", dup);
    }

    // sprs matrices (CSR and CSC storage, assorted index types) give the same bytes.
    if shape.len() == 2 {
        let csr = sprs_of::<T, i32, usize>(shape, dense, &fill, false);
        prop_assert_eq!(&encode_sprs(&layout, &csr, &fill).unwrap(), &bytes);
        let csc = sprs_of::<T, u16, u32>(shape, dense, &fill, true);
        prop_assert_eq!(&encode_sprs(&layout, &csc.view(), &fill).unwrap(), &bytes);
    }
    Ok(())
}

macro_rules! roundtrip_tests {
    ($($name:ident: $t:ty => $fills:expr, $others:expr;)*) => {$(
        proptest! {
            #![proptest_config(ProptestConfig::with_cases(96))]
            #[test]
            fn $name((layout, shape, fill, dense) in cases::<$t>($fills, $others), seed in any::<u64>()) {
                check_roundtrip::<$t>(layout, &shape, fill, &dense, seed)?;
            }
        }
    )*};
}

roundtrip_tests! {
    roundtrip_i32: i32 => vec![0, -1, 7], prop_oneof![Just(0i32), Just(-1), any::<i32>()].boxed();
    roundtrip_u16: u16 => vec![0, u16::MAX], any::<u16>().boxed();
    roundtrip_i64: i64 => vec![0, i64::MIN], any::<i64>().boxed();
    roundtrip_bool_as_u8: u8 => vec![0, 1], (0u8..2).boxed();
    roundtrip_f16: f16 => vec![f16::ZERO, f16::NAN], f16s();
    roundtrip_f32: f32 => vec![0.0, f32::NAN, -0.0, 1.0], f32s();
    roundtrip_f64: f64 => vec![0.0, f64::NAN], f64s();
    roundtrip_complex64: Complex32 => vec![Complex32::new(0.0, 0.0), Complex32::new(f32::NAN, 0.0)], c64s();
    roundtrip_complex128: Complex64 => vec![Complex64::new(0.0, 0.0), Complex64::new(f64::NAN, f64::NAN)], c128s();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Duplicates summed: each stored value split into two parts (integers wrap), plus pairs
    /// that cancel to the fill value, in shuffled order, encode like the dense chunk.
    #[test]
    fn summed_duplicates((layout, shape, _fill, dense) in cases::<i32>(vec![0], any::<i32>().boxed()),
                         parts in prop::collection::vec(any::<i32>(), 64),
                         seed in any::<u64>()) {
        let mut triples: Vec<(u64, i32)> = Vec::new();
        for (i, &v) in dense.iter().enumerate() {
            let a = parts[i % parts.len()];
            triples.push((i as u64, a));
            triples.push((i as u64, v.wrapping_sub(a)));
        }
        Rng::new(seed).shuffle(&mut triples);
        let coords: Vec<u64> = triples.iter().flat_map(|&(p, _)| coords_of(&shape, p)).collect();
        let values: Vec<i32> = triples.iter().map(|t| t.1).collect();
        let summed = encode_triples_summed(&layout, &shape, &coords, &values, &0).unwrap();
        prop_assert_eq!(summed, encode_dense(&layout, &shape, &dense, &0).unwrap());
    }

    /// Float duplicates are summed in input order.
    #[test]
    fn summed_floats_in_input_order(a in -1e3f64..1e3, b in -1e3f64..1e3, c in -1e3f64..1e3) {
        let layout = Layout::coo(IndexType::U16);
        let bytes = encode_triples_summed(&layout, &[4], &[2, 1, 2, 2], &[a, 9.0, b, c], &0.0).unwrap();
        let buf = AlignedBuffer::from_slice(&bytes);
        let chunk = SparseChunk::decode(&buf, &layout, &[4], 8).unwrap();
        let dense = chunk.to_dense(&0.0f64).unwrap();
        prop_assert_eq!(dense[2].to_bits(), (a + b + c).to_bits());
        prop_assert_eq!(dense[1], 9.0);
    }
}
