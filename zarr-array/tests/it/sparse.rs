//! Arrays stored with the `sparse_layout` codec: dense reads and writes through the chain, the
//! sparse API (per-chunk zero-copy views, region reads as COO / CSR, writes from triples and
//! `sprs` matrices that never densify, chunk-parallel nnz / sum / spmv), for 2-d CSR and CSC,
//! 3-d COO, sharded arrays with a sparse inner codec, and `regular_bounded` arrays with a partly
//! filled first chunk.
// The codecs (cargo features) these tests use; `scripts/check-features` builds them without.
#![cfg(all(
    feature = "zstd",
    feature = "sharding",
    feature = "sparse",
    feature = "crc32c"
))]

use std::collections::BTreeMap;
use std::sync::Arc;

use ndarray::{arr2, Array2, ArrayD, IxDyn};
use proptest::prelude::*;
use serde_json::json;
use zarr_array::zarr_codecs::sparse_layout::SparseLayoutCodec;
use zarr_array::zarr_codecs::{ChunkIn, EncodeOptions};
use zarr_array::zarr_grid::geometry::Region;
use zarr_array::zarr_layout_sparse::sprs::{CsMat, TriMat};
use zarr_array::zarr_layout_sparse::{encode_triples, Format};
use zarr_array::{
    Array, ArrayBuilder, ArrayError, DataType, ExtensionDef, Extensions, WriteOptions,
};
use zarr_store::{MemoryStore, Store};
use zarr_testkit::Rng;

fn store() -> Arc<dyn Store> {
    Arc::new(MemoryStore::new())
}

fn def(name: &str, config: serde_json::Value) -> ExtensionDef {
    match config {
        serde_json::Value::Object(m) => ExtensionDef::with_configuration(name, m),
        _ => ExtensionDef::new(name),
    }
}

fn zstd_crc() -> Vec<ExtensionDef> {
    vec![
        def("zstd", json!({"level": 3, "checksum": false})),
        def("crc32c", json!(null)),
    ]
}

/// About `n` distinct random positions of `shape` with nonzero values.
fn random_entries(shape: &[u64], n: usize, seed: u64) -> BTreeMap<Vec<u64>, f64> {
    let mut rng = Rng::new(seed);
    let mut out = BTreeMap::new();
    for _ in 0..n {
        let pos: Vec<u64> = shape.iter().map(|&s| rng.below(s)).collect();
        out.insert(pos, (rng.below(1000) as f64) - 499.5);
    }
    out
}

fn coords_of(entries: &BTreeMap<Vec<u64>, f64>, ndim: usize) -> (Array2<u64>, Vec<f64>) {
    let mut coords = Array2::zeros((ndim, entries.len()));
    for (k, pos) in entries.keys().enumerate() {
        for d in 0..ndim {
            coords[[d, k]] = pos[d];
        }
    }
    (coords, entries.values().copied().collect())
}

fn dense_of(shape: &[u64], entries: &BTreeMap<Vec<u64>, f64>, fill: f64) -> ArrayD<f64> {
    let dims: Vec<usize> = shape.iter().map(|&n| n as usize).collect();
    let mut out = ArrayD::from_elem(IxDyn(&dims), fill);
    for (pos, &v) in entries {
        let at: Vec<usize> = pos.iter().map(|&p| p as usize).collect();
        out[IxDyn(&at)] = v;
    }
    out
}

fn sparse_array(
    store: &Arc<dyn Store>,
    path: &str,
    shape: Vec<u64>,
    chunks: Vec<u64>,
    format: Format,
    shards: Option<Vec<u64>>,
) -> Array {
    let mut b = ArrayBuilder::new(shape, DataType::Float64)
        .chunk_shape(chunks)
        .sparse(format)
        .compressors(zstd_crc());
    if let Some(s) = shards {
        b = b.shards(s);
    }
    b.create(store.clone(), path).unwrap()
}

/// The array's content checked every way: dense read, sparse region read, nnz and sum.
fn check_content(a: &Array, model: &BTreeMap<Vec<u64>, f64>) {
    let dense = a.read_all::<f64>().unwrap();
    assert_eq!(dense, dense_of(a.shape(), model, 0.0), "{}", a.path());
    let coo = a
        .sparse()
        .unwrap()
        .read_coo::<f64>(&Region::whole(a.shape()))
        .unwrap();
    let (coords, values) = coords_of(model, a.rank());
    assert_eq!(coo.coords(), coords.view(), "{}", a.path());
    assert_eq!(coo.values(), &values[..]);
    assert_eq!(a.sparse().unwrap().nnz().unwrap(), model.len() as u64);
    let sum: f64 = model.values().sum();
    assert!((a.sparse().unwrap().sum::<f64>().unwrap() - sum).abs() < 1e-6);
    // a region in the middle
    let region = Region::new(
        a.shape().iter().map(|&n| n / 4).collect(),
        a.shape().iter().map(|&n| n / 2).collect(),
    )
    .unwrap();
    let part = a.sparse().unwrap().read_coo::<f64>(&region).unwrap();
    let inside: BTreeMap<Vec<u64>, f64> = model
        .iter()
        .filter(|(p, _)| {
            p.iter()
                .enumerate()
                .all(|(d, &x)| x >= region.start[d] && x < region.start[d] + region.shape[d])
        })
        .map(|(p, v)| (p.clone(), *v))
        .collect();
    let (coords, values) = coords_of(&inside, a.rank());
    assert_eq!(part.coords(), coords.view());
    assert_eq!(part.values(), &values[..]);
    assert_eq!(
        part.to_dense(0.0).unwrap(),
        a.read_region::<f64>(&region).unwrap()
    );
}

#[test]
fn dense_reads_and_writes_of_sparse_arrays() {
    let s = store();
    for (i, (format, shape, chunks)) in [
        (Format::Csr, vec![30, 26], vec![8, 10]),
        (Format::Csc, vec![30, 26], vec![8, 10]),
        (Format::Coo, vec![30, 26], vec![8, 10]),
        (Format::Coo, vec![9, 11, 7], vec![4, 5, 3]),
    ]
    .into_iter()
    .enumerate()
    {
        let a = sparse_array(&s, &format!("d{i}"), shape.clone(), chunks, format, None);
        assert!(a.is_sparse());
        assert_eq!(a.sparse().unwrap().layout().format(), format);
        let model = random_entries(&shape, 60, 7 + i as u64);
        let dense = dense_of(&shape, &model, 0.0);
        a.write_region(&region_at(&vec![0; shape.len()], &dense), dense.view())
            .unwrap();
        check_content(&a, &model);
        // a partial dense write over existing chunks
        let start: Vec<u64> = shape.iter().map(|&n| n / 3).collect();
        let block: Vec<usize> = shape.iter().map(|&n| (n / 3) as usize).collect();
        let patch = ArrayD::from_elem(IxDyn(&block), 2.5f64);
        a.write_region(&region_at(&start, &patch), patch.view())
            .unwrap();
        let mut model = model;
        for idx in ndarray::indices(IxDyn(&block)) {
            let pos: Vec<u64> = (0..shape.len()).map(|d| start[d] + idx[d] as u64).collect();
            model.insert(pos, 2.5);
        }
        check_content(&a, &model);
        // writing fill everywhere deletes every chunk, even when keeping empty chunks
        let keep = a.clone().with_options(WriteOptions {
            write_empty_chunks: true,
        });
        let zeros = ArrayD::from_elem(
            IxDyn(&shape.iter().map(|&n| n as usize).collect::<Vec<_>>()),
            0.0,
        );
        keep.write_region(&region_at(&vec![0; shape.len()], &zeros), zeros.view())
            .unwrap();
        assert!(a.stored_chunks().unwrap().is_empty(), "{format}");
        assert_eq!(a.sparse().unwrap().nnz().unwrap(), 0);
    }
}

#[test]
fn csr_chunks_are_zero_copy_sprs_views() {
    let s = store();
    let a = sparse_array(&s, "csr", vec![40, 30], vec![20, 15], Format::Csr, None);
    let model = random_entries(&[40, 30], 150, 3);
    let (coords, values) = coords_of(&model, 2);
    a.sparse()
        .unwrap()
        .write_coo(coords.view(), &values)
        .unwrap();
    check_content(&a, &model);
    let dense = a.read_all::<f64>().unwrap();
    let chunks = a.sparse().unwrap().chunks().unwrap();
    assert_eq!(chunks.len(), 4);
    let mut total = 0;
    for c in &chunks {
        assert_eq!(c.format(), Format::Csr);
        assert!(c.is_whole());
        assert_eq!(c.inner_index(), None);
        let m = c.sprs_view::<f64, u16, u32>().unwrap();
        assert_eq!(m.shape(), (20, 15));
        // every part of the matrix points into the buffer the chain decoded
        let range = c.buffer().as_ptr_range();
        assert!(range.contains(&m.data().as_ptr().cast()));
        assert!(range.contains(&m.indices().as_ptr().cast()));
        assert!(range.contains(&m.indptr().raw_storage().as_ptr().cast()));
        assert_eq!(c.values::<f64>().unwrap().as_ptr(), m.data().as_ptr());
        let (r0, c0) = (c.origin()[0] as usize, c.origin()[1] as usize);
        for (&v, (r, col)) in m.iter() {
            assert_eq!(dense[[r0 + r as usize, c0 + col as usize]], v);
        }
        total += m.nnz();
        // the wrong types are errors, not panics
        assert!(c.sprs_view::<f64, u32, u32>().is_err());
        assert!(c.sprs_view::<f32, u16, u32>().is_err());
        assert!(c.coo_indices::<u16>().is_err());
    }
    assert_eq!(total, model.len());
    // spmv against the dense product
    let x: Vec<f64> = (0..30).map(|i| (i as f64) * 0.5 - 3.0).collect();
    let y = a.sparse().unwrap().spmv(&x).unwrap();
    for r in 0..40 {
        let want: f64 = (0..30).map(|c| dense[[r, c]] * x[c]).sum();
        assert!((y[r] - want).abs() < 1e-9, "row {r}");
    }
    // CSR of the whole array equals the dense data
    let csr = a
        .sparse()
        .unwrap()
        .read_coo::<f64>(&Region::whole(&[40, 30]))
        .unwrap()
        .to_csr()
        .unwrap();
    assert_eq!(
        csr.to_dense(),
        dense.into_dimensionality::<ndarray::Ix2>().unwrap()
    );
}

#[test]
fn csc_arrays_and_sprs_writes() {
    let s = store();
    let a = sparse_array(&s, "csc", vec![25, 33], vec![10, 11], Format::Csc, None);
    let layout = a.sparse().unwrap().layout();
    assert_eq!(layout.format(), Format::Csc);
    // a CSR matrix with explicit entries, written at an offset
    let mut tri = TriMat::new((7, 9));
    let mut model = BTreeMap::new();
    for (r, c, v) in [
        (0, 0, 1.0),
        (3, 8, -2.0),
        (6, 4, 3.5),
        (2, 2, 4.0),
        (6, 8, 5.0),
    ] {
        tri.add_triplet(r, c, v);
        model.insert(vec![8 + r as u64, 20 + c as u64], v);
    }
    let csr: CsMat<f64> = tri.to_csr();
    a.sparse().unwrap().write_sprs(&csr, &[8, 20]).unwrap();
    check_content(&a, &model);
    for c in a.sparse().unwrap().chunks().unwrap() {
        let m = c.sprs_view::<f64, u16, u32>().unwrap();
        assert!(m.is_csc());
        assert!(c
            .buffer()
            .as_ptr_range()
            .contains(&m.data().as_ptr().cast()));
    }
    // a CSC view over the same region replaces it: old entries there go, others stay
    a.sparse()
        .unwrap()
        .write_coo(arr2(&[[0u64, 24], [0, 32]]).view(), &[9.0, 8.0])
        .unwrap();
    model.insert(vec![0, 0], 9.0);
    model.insert(vec![24, 32], 8.0);
    let mut tri = TriMat::new((7, 9));
    tri.add_triplet(1, 1, 6.0);
    let csc: CsMat<f64> = tri.to_csc();
    a.sparse()
        .unwrap()
        .write_sprs(&csc.view(), &[8, 20])
        .unwrap();
    model.retain(|p, _| !(p[0] >= 8 && p[0] < 15 && p[1] >= 20 && p[1] < 29));
    model.insert(vec![9, 21], 6.0);
    check_content(&a, &model);
    // an empty matrix clears the region; chunks left empty are deleted
    let before = a.stored_chunks().unwrap().len();
    a.sparse()
        .unwrap()
        .write_sprs(&CsMat::<f64>::zero((7, 9)), &[8, 20])
        .unwrap();
    model.remove(&vec![9, 21]);
    check_content(&a, &model);
    assert!(a.stored_chunks().unwrap().len() < before);
    // spmv on CSC chunks
    let x: Vec<f64> = (0..33).map(|i| i as f64).collect();
    let y = a.sparse().unwrap().spmv(&x).unwrap();
    let mut want = vec![0.0; 25];
    for (p, v) in &model {
        want[p[0] as usize] += v * x[p[1] as usize];
    }
    assert_eq!(y, want);
}

#[test]
fn coo_3d_arrays_write_merge_and_delete() {
    let s = store();
    let shape = vec![12u64, 10, 8];
    let a = sparse_array(&s, "coo3", shape.clone(), vec![5, 5, 4], Format::Coo, None);
    let mut model = random_entries(&shape, 80, 11);
    let (coords, values) = coords_of(&model, 3);
    a.sparse()
        .unwrap()
        .write_coo(coords.view(), &values)
        .unwrap();
    check_content(&a, &model);
    // zero-copy coordinates and values
    for c in a.sparse().unwrap().chunks().unwrap() {
        let coo = c.coo::<f64, u16>().unwrap();
        assert_eq!(coo.indices.shape(), &[3, c.nnz()]);
        let range = c.buffer().as_ptr_range();
        assert!(range.contains(&coo.values.as_ptr().cast()));
        assert!(range.contains(&coo.indices.as_ptr().cast()));
        // edge chunks (axis 0: rows 10..15 of the chunk grid) end inside the chunk
        if c.chunk_index()[0] == 2 {
            assert_eq!(c.valid_region().shape[0], 2);
            assert!(!c.is_whole());
        }
    }
    // merge: new values win, other stored entries stay, fill removes
    let mut updates = random_entries(&shape, 30, 99);
    let existing: Vec<Vec<u64>> = model.keys().take(10).cloned().collect();
    for (i, p) in existing.iter().enumerate() {
        updates.insert(p.clone(), if i % 2 == 0 { 0.0 } else { 1234.0 });
    }
    let (coords, values) = coords_of(&updates, 3);
    a.sparse()
        .unwrap()
        .write_coo(coords.view(), &values)
        .unwrap();
    for (p, v) in updates {
        if v == 0.0 {
            model.remove(&p);
        } else {
            model.insert(p, v);
        }
    }
    check_content(&a, &model);
    // removing every entry of one chunk deletes it
    let victim = a.stored_chunks().unwrap()[0].clone();
    let in_victim: BTreeMap<Vec<u64>, f64> = model
        .iter()
        .filter(|(p, _)| (0..3).all(|d| p[d] / [5, 5, 4][d] == victim[d] as u64))
        .map(|(p, _)| (p.clone(), 0.0))
        .collect();
    let (coords, values) = coords_of(&in_victim, 3);
    a.sparse()
        .unwrap()
        .write_coo(coords.view(), &values)
        .unwrap();
    model.retain(|p, _| !in_victim.contains_key(p));
    assert!(!a.stored_chunks().unwrap().contains(&victim));
    check_content(&a, &model);
}

#[test]
fn nested_shards_with_a_sparse_innermost_codec() {
    // shards of 12 x 20, inner shards of 6 x 10, sparse chunks of 3 x 5 (CSR, zstd), with
    // crc32c after each level of sharding
    let s = store();
    let inner = def(
        "sharding_indexed",
        json!({"chunk_shape": [3, 5], "codecs": [
            {"name": "sparse_layout", "configuration":
                {"format": "csr", "index_data_type": "uint16", "pointer_data_type": "uint32"}},
            {"name": "zstd", "configuration": {"level": 3, "checksum": false}}]}),
    );
    let shape = vec![30u64, 37];
    let a = ArrayBuilder::new(shape.clone(), DataType::Float64)
        .chunk_shape(vec![6, 10])
        .shards(vec![12, 20])
        .serializer(inner)
        .compressors(vec![def("crc32c", json!(null))])
        .create(s.clone(), "nested")
        .unwrap();
    assert!(a.is_sparse());
    assert_eq!(a.sparse().unwrap().chunk_shape(), &[3, 5]);
    let mut model = random_entries(&shape, 90, 77);
    let (coords, values) = coords_of(&model, 2);
    a.sparse()
        .unwrap()
        .write_coo(coords.view(), &values)
        .unwrap();
    check_content(&a, &model);
    // the sparse chunks are the innermost chunks, indexed in their shard's grid of them
    let chunks = a.sparse().unwrap().chunks().unwrap();
    assert_eq!(
        chunks.iter().map(|c| c.nnz_in_array()).sum::<usize>(),
        model.len()
    );
    for c in &chunks {
        let inner = c.inner_index().unwrap();
        assert!(inner[0] < 4 && inner[1] < 4, "{inner:?}");
        assert_eq!(c.shape(), &[3, 5]);
        assert_eq!(
            c.origin(),
            &[
                c.chunk_index()[0] * 12 + inner[0] as i64 * 3,
                c.chunk_index()[1] * 20 + inner[1] as i64 * 5
            ]
        );
    }
    // an update rewrites only the sparse chunk it writes to: every other one keeps its bytes
    let key = a.chunk_key(&[0, 0]);
    let leaves = |bytes: &[u8]| -> BTreeMap<Vec<u64>, Vec<u8>> {
        a.codecs()
            .visit_stored_leaves(bytes, None, |idx, b| {
                Ok::<_, zarr_array::zarr_codecs::CodecError>((idx.to_vec(), b.to_vec()))
            })
            .unwrap()
            .into_iter()
            .collect()
    };
    let before = leaves(&s.get(&key).unwrap().unwrap());
    let updates: BTreeMap<Vec<u64>, f64> = [(vec![7u64, 8], 42.0)].into_iter().collect();
    let (coords, values) = coords_of(&updates, 2);
    a.sparse()
        .unwrap()
        .write_coo(coords.view(), &values)
        .unwrap();
    model.insert(vec![7, 8], 42.0);
    check_content(&a, &model);
    let after = leaves(&s.get(&key).unwrap().unwrap());
    for (idx, bytes) in &before {
        if idx != &[2, 1] {
            assert_eq!(&after[idx], bytes, "leaf {idx:?}");
        }
    }
    assert_ne!(before.get(&vec![2, 1]), after.get(&vec![2, 1]));
    // a sparse matrix replaces a region across shards: its old entries go
    let mut tri = TriMat::new((9, 14));
    tri.add_triplet(0, 0, 5.0);
    tri.add_triplet(8, 13, 6.0);
    let csr: CsMat<f64> = tri.to_csr();
    a.sparse().unwrap().write_sprs(&csr, &[10, 15]).unwrap();
    let replaced = Region::new(vec![10, 15], vec![9, 14]).unwrap();
    model.retain(|p, _| !replaced.contains(p));
    model.insert(vec![10, 15], 5.0);
    model.insert(vec![18, 28], 6.0);
    check_content(&a, &model);
    // a dense write of fill values over a shard deletes it
    let region = Region::new(vec![0, 0], vec![12, 20]).unwrap();
    a.write_region(
        &zarr_array::Region::new(vec![0, 0], vec![12, 20]).unwrap(),
        ArrayD::from_elem(IxDyn(&[12, 20]), 0.0f64).view(),
    )
    .unwrap();
    model.retain(|p, _| !region.contains(p));
    check_content(&a, &model);
    assert!(s.get(&key).unwrap().is_none());
}

#[test]
fn sharded_arrays_with_a_sparse_inner_codec() {
    let s = store();
    for (i, format) in [Format::Csr, Format::Csc, Format::Coo]
        .into_iter()
        .enumerate()
    {
        let shape = vec![37u64, 29];
        let a = sparse_array(
            &s,
            &format!("sh{i}"),
            shape.clone(),
            vec![5, 6],
            format,
            Some(vec![10, 12]),
        );
        assert_eq!(a.chunk_shape(), Some(vec![10, 12]));
        assert_eq!(a.sparse().unwrap().chunk_shape(), &[5, 6]);
        let mut model = random_entries(&shape, 70, 21 + i as u64);
        let (coords, values) = coords_of(&model, 2);
        a.sparse()
            .unwrap()
            .write_coo(coords.view(), &values)
            .unwrap();
        check_content(&a, &model);
        // the per-chunk views are inner chunks
        let chunks = a.sparse().unwrap().chunks().unwrap();
        let nnz: usize = chunks.iter().map(|c| c.nnz_in_array()).sum();
        assert_eq!(nnz, model.len());
        for c in &chunks {
            let inner = c.inner_index().unwrap();
            assert_eq!(c.shape(), &[5, 6]);
            assert_eq!(
                c.origin(),
                &[
                    c.chunk_index()[0] * 10 + inner[0] as i64 * 5,
                    c.chunk_index()[1] * 12 + inner[1] as i64 * 6
                ]
            );
            let values = c.values::<f64>().unwrap();
            assert!(c.buffer().as_ptr_range().contains(&values.as_ptr().cast()));
        }
        // an update touches only the inner chunks it writes to
        let shard_key = a.chunk_key(&[0, 0]);
        let before = s.get(&shard_key).unwrap().unwrap();
        let touched = [vec![1u64, 1]];
        let updates: BTreeMap<Vec<u64>, f64> = touched.iter().map(|p| (p.clone(), 42.0)).collect();
        let (coords, values) = coords_of(&updates, 2);
        a.sparse()
            .unwrap()
            .write_coo(coords.view(), &values)
            .unwrap();
        model.insert(vec![1, 1], 42.0);
        check_content(&a, &model);
        let after = s.get(&shard_key).unwrap().unwrap();
        assert_ne!(before, after);
        // spmv through shards
        let x: Vec<f64> = (0..29).map(|j| 1.0 + j as f64).collect();
        let y = a.sparse().unwrap().spmv(&x).unwrap();
        let mut want = vec![0.0; 37];
        for (p, v) in &model {
            want[p[0] as usize] += v * x[p[1] as usize];
        }
        for (got, want) in y.iter().zip(&want) {
            assert!((got - want).abs() < 1e-6);
        }
        // a region read decodes only the inner chunks it meets
        let region = Region::new(vec![11, 13], vec![3, 4]).unwrap();
        let part = a.sparse().unwrap().chunks_in(&region).unwrap();
        assert!(part.len() <= 1, "{part:?}");
        // dense writes go through the sharding codec and stay sparse inside
        let block = ArrayD::from_elem(IxDyn(&[2, 2]), -1.0f64);
        a.write_region(&region_at(&[30, 20], &block), block.view())
            .unwrap();
        for p in [[30u64, 20], [30, 21], [31, 20], [31, 21]] {
            model.insert(p.to_vec(), -1.0);
        }
        check_content(&a, &model);
        // clearing everything removes every shard
        a.sparse()
            .unwrap()
            .write_sprs(&CsMat::<f64>::zero((37, 29)), &[0, 0])
            .unwrap();
        assert!(a.stored_chunks().unwrap().is_empty());
        assert_eq!(a.sparse().unwrap().nnz().unwrap(), 0);
    }
}

#[test]
fn prepend_on_a_sparse_array_leaves_a_partly_filled_first_chunk() {
    let s = store();
    let mut a = ArrayBuilder::new(vec![6, 8], DataType::Int32)
        .chunk_shape(vec![4, 4])
        .sparse(Format::Csr)
        .create(s.clone(), "rb")
        .unwrap();
    a.sparse()
        .unwrap()
        .write_coo(arr2(&[[0u64, 5, 2], [0, 7, 3]]).view(), &[1, 2, 3])
        .unwrap();
    // prepend 3 rows: the first chunk (-1) holds one row of data at buffer row 3
    let mut rows = ArrayD::from_elem(IxDyn(&[3, 8]), 0i32);
    rows[[0, 1]] = 10;
    rows[[2, 6]] = 11;
    a.prepend(rows.view(), 0).unwrap();
    assert_eq!(a.grid().name(), "regular_bounded");
    assert_eq!(a.domain(), vec![(-3, 6), (0, 8)]);
    assert_eq!(a.shape(), &[9, 8]);
    let coo = a
        .sparse()
        .unwrap()
        .read_coo::<i32>(&Region::whole(&[9, 8]))
        .unwrap();
    assert_eq!(coo.coords(), arr2(&[[0u64, 2, 3, 5, 8], [1, 6, 0, 3, 7]]));
    assert_eq!(coo.values(), &[10, 11, 1, 3, 2]);
    assert_eq!(
        coo.domain_coords(),
        arr2(&[[-3i64, -1, 0, 2, 5], [1, 6, 0, 3, 7]])
    );
    let first: Vec<_> = a
        .sparse()
        .unwrap()
        .chunks()
        .unwrap()
        .into_iter()
        .filter(|c| c.chunk_index() == [-1, 0])
        .collect();
    assert_eq!(first.len(), 1);
    let c = &first[0];
    assert_eq!(c.origin(), &[-1, 0]);
    assert_eq!(c.domain_origin(), vec![-4, 0]);
    assert_eq!(
        c.valid_region(),
        &Region::new(vec![1, 0], vec![3, 4]).unwrap()
    );

    // another writer stored an entry before the array's start (buffer row 0 of chunk -1):
    // readers ignore it, and rewriting the chunk drops it
    let codec = SparseLayoutCodec::of(a.codecs()).unwrap();
    let key = a.chunk_key(&[-1, 0]);
    let foreign = encode_triples(codec.layout(), &[4, 4], &[0, 2, 1, 1], &[99i32, 10], &0).unwrap();
    s.set(
        &key,
        &a.codecs()
            .encode(ChunkIn::Serialized(foreign), EncodeOptions::SKIP_EMPTY)
            .unwrap()
            .unwrap(),
    )
    .unwrap();
    let coo = a
        .sparse()
        .unwrap()
        .read_coo::<i32>(&Region::whole(&[9, 8]))
        .unwrap();
    assert_eq!(
        coo.values(),
        &[10, 11, 1, 3, 2],
        "the entry at -4 is ignored"
    );
    assert_eq!(a.sparse().unwrap().nnz().unwrap(), 5);
    assert_eq!(a.sparse().unwrap().sum::<i32>().unwrap(), 27);
    assert_eq!(a.read_all::<i32>().unwrap()[[0, 1]], 10);
    assert_eq!(
        a.sparse().unwrap().spmv(&[1; 8]).unwrap(),
        vec![10, 0, 11, 1, 0, 3, 0, 0, 2]
    );
    let csr = a
        .sparse()
        .unwrap()
        .read_csr::<i32>(&Region::whole(&[9, 8]))
        .unwrap();
    assert_eq!(csr, coo.to_csr().unwrap(), "read_csr ignores it too");
    assert_eq!(csr.nnz(), 5);
    a.sparse()
        .unwrap()
        .write_coo(arr2(&[[1u64], [1]]).view(), &[5])
        .unwrap();
    let stored = a
        .sparse()
        .unwrap()
        .chunks()
        .unwrap()
        .into_iter()
        .find(|c| c.chunk_index() == [-1, 0])
        .unwrap();
    assert_eq!(stored.nnz(), 2, "the foreign entry is gone");
    let mut seen = Vec::new();
    stored
        .for_each_in_array::<i32>(|p, v| seen.push((p.to_vec(), v)))
        .unwrap();
    assert_eq!(seen, vec![(vec![0, 1], 10), (vec![1, 1], 5)]);
}

#[test]
fn prepend_on_a_sharded_sparse_array() {
    let s = store();
    let mut a = ArrayBuilder::new(vec![6, 8], DataType::Float32)
        .chunk_shape(vec![2, 4])
        .shards(vec![4, 8])
        .sparse(Format::Coo)
        .compressors(zstd_crc())
        .create(s.clone(), "rbs")
        .unwrap();
    a.sparse()
        .unwrap()
        .write_coo(arr2(&[[0u64, 5], [7, 0]]).view(), &[1.0f32, 2.0])
        .unwrap();
    let mut rows = ArrayD::from_elem(IxDyn(&[3, 8]), 0.0f32);
    rows[[0, 3]] = 3.0;
    rows[[2, 4]] = 4.0;
    a.prepend(rows.view(), 0).unwrap();
    assert_eq!(a.domain(), vec![(-3, 6), (0, 8)]);
    // shard -1 covers coordinates -4..0: its first inner row block is only half inside
    let chunks = a.sparse().unwrap().chunks().unwrap();
    let first: Vec<_> = chunks
        .iter()
        .filter(|c| c.chunk_index() == [-1, 0])
        .collect();
    assert_eq!(first.len(), 2);
    assert_eq!(first[0].inner_index(), Some(&[0u64, 0][..]));
    assert_eq!(first[0].origin(), &[-1, 0]);
    assert_eq!(
        first[0].valid_region(),
        &Region::new(vec![1, 0], vec![1, 4]).unwrap()
    );
    assert_eq!(first[1].inner_index(), Some(&[1u64, 1][..]));
    assert!(first[1].is_whole());
    let coo = a
        .sparse()
        .unwrap()
        .read_coo::<f32>(&Region::whole(&[9, 8]))
        .unwrap();
    assert_eq!(coo.coords(), arr2(&[[0u64, 2, 3, 8], [3, 4, 7, 0]]));
    assert_eq!(coo.values(), &[3.0, 4.0, 1.0, 2.0]);
    assert_eq!(coo.domain_coords().row(0).to_vec(), vec![-3, -1, 0, 5]);
    assert_eq!(a.sparse().unwrap().nnz().unwrap(), 4);
    assert_eq!(a.sparse().unwrap().sum::<f32>().unwrap(), 10.0);
    assert_eq!(
        a.sparse().unwrap().spmv(&[1.0f32; 8]).unwrap(),
        vec![3.0, 0.0, 4.0, 1.0, 0.0, 0.0, 0.0, 0.0, 2.0]
    );
    // sparse writes into the partly filled shard
    a.sparse()
        .unwrap()
        .write_coo(arr2(&[[0u64, 1], [3, 0]]).view(), &[0.0f32, 5.0])
        .unwrap();
    let dense = a.read_all::<f32>().unwrap();
    assert_eq!(dense[[0, 3]], 0.0);
    assert_eq!(dense[[1, 0]], 5.0);
    assert_eq!(a.sparse().unwrap().nnz().unwrap(), 4);
}

#[test]
fn edge_chunks_ignore_entries_outside_the_array() {
    let s = store();
    let a = sparse_array(&s, "edge", vec![10, 7], vec![4, 4], Format::Coo, None);
    let codec = SparseLayoutCodec::of(a.codecs()).unwrap();
    // chunk (2, 1) covers rows 8..10 and columns 4..7: local (3, 3) is outside the array
    let bytes = encode_triples(
        codec.layout(),
        &[4, 4],
        &[1, 2, 3, 3, 2, 3],
        &[1.0, 2.0, 3.0],
        &0.0,
    )
    .unwrap();
    s.set(
        &a.chunk_key(&[2, 1]),
        &a.codecs()
            .encode(ChunkIn::Serialized(bytes), EncodeOptions::SKIP_EMPTY)
            .unwrap()
            .unwrap(),
    )
    .unwrap();
    let mut model = BTreeMap::new();
    model.insert(vec![9, 6], 1.0);
    check_content(&a, &model);
    assert_eq!(a.sparse().unwrap().spmv(&[1.0; 7]).unwrap()[9], 1.0);
    let c = &a.sparse().unwrap().chunks().unwrap()[0];
    assert_eq!(c.nnz(), 3);
    assert_eq!(c.nnz_in_array(), 1);
}

#[test]
fn errors_are_reported() {
    let s = store();
    let a = sparse_array(&s, "err", vec![5, 5], vec![2, 2], Format::Csr, None);
    let bad_type = a.sparse().unwrap().read_coo::<f32>(&Region::whole(&[5, 5]));
    assert!(matches!(bad_type, Err(ArrayError::DataTypeMismatch { .. })));
    assert!(matches!(
        a.sparse()
            .unwrap()
            .write_coo(arr2(&[[0u64, 0], [1, 1]]).view(), &[1.0, 2.0]),
        Err(ArrayError::InvalidArgument { .. })
    ));
    assert!(matches!(
        a.sparse()
            .unwrap()
            .write_coo(arr2(&[[5u64], [0]]).view(), &[1.0]),
        Err(ArrayError::OutOfBounds { axis: 0, .. })
    ));
    assert!(matches!(
        a.sparse()
            .unwrap()
            .write_coo(arr2(&[[1u64, 2]]).view(), &[1.0, 2.0]),
        Err(ArrayError::ShapeMismatch { .. })
    ));
    assert!(a
        .sparse()
        .unwrap()
        .read_coo::<f64>(&Region::new(vec![3, 3], vec![3, 1]).unwrap())
        .is_err());
    assert!(matches!(
        a.sparse()
            .unwrap()
            .read_csr::<f64>(&Region::new(vec![3, 3], vec![3, 1]).unwrap()),
        Err(ArrayError::Region(_))
    ));
    assert!(matches!(
        a.sparse().unwrap().read_csr::<f32>(&Region::whole(&[5, 5])),
        Err(ArrayError::DataTypeMismatch { .. })
    ));
    assert!(a
        .sparse()
        .unwrap()
        .write_sprs(&CsMat::<f64>::zero((3, 3)), &[3, 0])
        .is_err());
    assert!(matches!(
        a.sparse().unwrap().spmv(&[1.0; 4]),
        Err(ArrayError::ShapeMismatch { .. })
    ));
    // nothing was written
    assert!(a.stored_chunks().unwrap().is_empty());
    // a dense array has no sparse chunks
    let dense = ArrayBuilder::new(vec![4], DataType::Float64)
        .create(s.clone(), "dense")
        .unwrap();
    assert!(!dense.is_sparse());
    let err = dense.sparse().unwrap_err();
    assert!(
        zarr_testkit::report(&err).contains("does not store sparse chunks"),
        "{err}"
    );
    match err {
        ArrayError::NotSparse { path, codecs } => {
            assert_eq!(path, "dense");
            assert_eq!(codecs, ["bytes", "zstd"]);
        }
        other => panic!("{other:?}"),
    }
    // spmv needs 2-d and a zero fill
    let v = sparse_array(&s, "v3", vec![3, 3, 3], vec![2, 2, 2], Format::Coo, None);
    assert!(matches!(
        v.sparse().unwrap().spmv(&[1.0; 3]),
        Err(ArrayError::RankMismatch {
            expected: 2,
            got: 3,
            ..
        })
    ));
    assert!(matches!(
        v.sparse()
            .unwrap()
            .read_csr::<f64>(&Region::whole(&[3, 3, 3])),
        Err(ArrayError::RankMismatch {
            expected: 2,
            got: 3,
            ..
        })
    ));
    let nan = ArrayBuilder::new(vec![3, 3], DataType::Float64)
        .fill_value_json(&json!("NaN"))
        .unwrap()
        .sparse(Format::Coo)
        .create(s.clone(), "nan")
        .unwrap();
    assert!(matches!(
        nan.sparse().unwrap().spmv(&[1.0; 3]),
        Err(ArrayError::NonZeroFill {
            operation: "spmv",
            ..
        })
    ));
    // a corrupt chunk is an error naming its key
    s.set(&a.chunk_key(&[0, 0]), b"garbage").unwrap();
    let err = zarr_testkit::report(&a.sparse().unwrap().chunks().unwrap_err());
    assert!(err.starts_with("err/c/0/0: "), "{err}");
    let sparse = a.sparse().unwrap();
    let err = zarr_testkit::report(&sparse.read_csr::<f64>(&Region::whole(&[5, 5])).unwrap_err());
    assert!(err.starts_with("err/c/0/0: "), "{err}");
    // a reader without the extension refuses the array by name
    let err = Array::open_with(s.clone(), "err", &Extensions::core()).unwrap_err();
    assert!(
        zarr_testkit::report(&err).contains("sparse_layout"),
        "{err}"
    );
}

#[test]
fn nan_fill_arrays_store_only_non_nan_and_read_back() {
    let s = store();
    let a = ArrayBuilder::new(vec![6, 6], DataType::Float32)
        .chunk_shape(vec![3, 3])
        .fill_value_json(&json!("NaN"))
        .unwrap()
        .sparse(Format::Csr)
        .create(s.clone(), "nanfill")
        .unwrap();
    let mut data = ArrayD::from_elem(IxDyn(&[6, 6]), f32::NAN);
    data[[0, 0]] = -0.0;
    data[[4, 5]] = 1.5;
    a.write_region(&region_at(&[0, 0], &data), data.view())
        .unwrap();
    assert_eq!(a.stored_chunks().unwrap().len(), 2);
    let coo = a
        .sparse()
        .unwrap()
        .read_coo::<f32>(&Region::whole(&[6, 6]))
        .unwrap();
    assert_eq!(coo.values().len(), 2);
    assert_eq!(coo.values()[0].to_bits(), (-0.0f32).to_bits());
    let back = a.read_all::<f32>().unwrap();
    assert!(back[[1, 1]].is_nan());
    assert_eq!(back[[4, 5]], 1.5);
    assert_eq!(a.sparse().unwrap().nnz().unwrap(), 2);
    // writing NaN removes the entry
    a.sparse()
        .unwrap()
        .write_coo(arr2(&[[4u64], [5]]).view(), &[f32::NAN])
        .unwrap();
    assert_eq!(a.stored_chunks().unwrap().len(), 1);
}

#[test]
fn map_reduce_runs_on_the_sparse_chunks() {
    let s = store();
    let a = sparse_array(
        &s,
        "mr",
        vec![50, 40],
        vec![10, 10],
        Format::Csr,
        Some(vec![20, 20]),
    );
    let model = random_entries(&[50, 40], 200, 5);
    let (coords, values) = coords_of(&model, 2);
    a.sparse()
        .unwrap()
        .write_coo(coords.view(), &values)
        .unwrap();
    let (max, count) = a
        .sparse()
        .unwrap()
        .map_reduce(
            || (f64::MIN, 0usize),
            |c| {
                let m = c.sprs_view::<f64, u16, u32>()?;
                Ok((m.data().iter().copied().fold(f64::MIN, f64::max), m.nnz()))
            },
            |a, b| (a.0.max(b.0), a.1 + b.1),
        )
        .unwrap();
    assert_eq!(count, model.len());
    assert_eq!(max, model.values().copied().fold(f64::MIN, f64::max));
}

#[test]
fn integer_and_complex_arrays() {
    let s = store();
    let a = ArrayBuilder::new(vec![8, 8], DataType::Int16)
        .chunk_shape(vec![4, 4])
        .sparse(Format::Coo)
        .create(s.clone(), "i16")
        .unwrap();
    a.sparse()
        .unwrap()
        .write_coo(arr2(&[[0u64, 7], [0, 7]]).view(), &[i16::MAX, 2])
        .unwrap();
    assert_eq!(
        a.sparse().unwrap().sum::<i16>().unwrap(),
        i64::from(i16::MAX) + 2,
        "summed in i64, as NumPy's sum"
    );
    assert_eq!(a.sparse().unwrap().spmv(&[1i16; 8]).unwrap()[7], 2);
    let z = ArrayBuilder::new(vec![4, 4], DataType::Complex64)
        .chunk_shape(vec![2, 2])
        .sparse(Format::Csc)
        .create(s.clone(), "c64")
        .unwrap();
    let v = num_complex::Complex32::new(1.0, -2.0);
    z.sparse()
        .unwrap()
        .write_coo(arr2(&[[3u64], [1]]).view(), &[v])
        .unwrap();
    assert_eq!(
        z.sparse().unwrap().sum::<num_complex::Complex32>().unwrap(),
        v
    );
    assert_eq!(z.read_all::<num_complex::Complex32>().unwrap()[[3, 1]], v);
}

/// Sums accumulate as NumPy's do (issue 38): 64-bit for integers (a `u8` array of sixteen
/// 200s sums to 3200, not 3200 mod 256), and halves in `f32` (4096 ones are 4096, where
/// adding in `f16` stops at 2048), through whole chunks and edge chunks alike.
#[test]
fn sums_accumulate_wider_than_the_elements() {
    let s = store();
    let build = |path: &str, dt: DataType| {
        ArrayBuilder::new(vec![5, 8], dt)
            .chunk_shape(vec![2, 4])
            .sparse(Format::Csr)
            .create(s.clone(), path)
            .unwrap()
    };
    // sixteen entries: rows 0..4 lie in whole chunks, row 4 in the edge chunks
    let rows: Vec<u64> = (0..16).map(|i| [0, 1, 3, 4][i % 4]).collect();
    let cols: Vec<u64> = (0..16).map(|i| (i / 4 * 2 + i % 2) as u64).collect();
    let coords = Array2::from_shape_vec((2, 16), [rows, cols].concat()).unwrap();
    let u = build("u8", DataType::UInt8);
    u.sparse()
        .unwrap()
        .write_coo(coords.view(), &[200u8; 16])
        .unwrap();
    assert_eq!(u.sparse().unwrap().nnz().unwrap(), 16);
    let total: u64 = u.sparse().unwrap().sum::<u8>().unwrap();
    assert_eq!(total, 3200);
    let i = build("i8", DataType::Int8);
    i.sparse()
        .unwrap()
        .write_coo(coords.view(), &[-128i8; 16])
        .unwrap();
    let total: i64 = i.sparse().unwrap().sum::<i8>().unwrap();
    assert_eq!(total, -2048);
    let w = build("u64", DataType::UInt64);
    w.sparse()
        .unwrap()
        .write_coo(coords.view(), &[u64::MAX; 16])
        .unwrap();
    assert_eq!(
        w.sparse().unwrap().sum::<u64>().unwrap(),
        u64::MAX.wrapping_mul(16),
        "wraps around at 64 bits, as NumPy's sum"
    );

    let h = ArrayBuilder::new(vec![4096], DataType::Float16)
        .chunk_shape(vec![4096])
        .sparse(Format::Coo)
        .create(s.clone(), "f16")
        .unwrap();
    let all = Array2::from_shape_vec((1, 4096), (0..4096u64).collect()).unwrap();
    h.sparse()
        .unwrap()
        .write_coo(all.view(), &[half::f16::ONE; 4096])
        .unwrap();
    assert_eq!(
        h.sparse().unwrap().sum::<half::f16>().unwrap(),
        half::f16::from_f32(4096.0)
    );
}

/// `A x` computed in the type of both operands, as SciPy's `A @ x`: an `i32` array times an
/// `f64` vector in `f64`, a `u8` array times a `u16` vector in `u16`, and each chunk's values
/// converted (whole and edge chunks, CSR and CSC).
#[test]
fn spmv_in_a_wider_type() {
    let s = store();
    for (k, format) in [Format::Csr, Format::Csc, Format::Coo]
        .into_iter()
        .enumerate()
    {
        let a = ArrayBuilder::new(vec![5, 7], DataType::Int32)
            .chunk_shape(vec![2, 3])
            .sparse(format)
            .create(s.clone(), &format!("i32-{k}"))
            .unwrap();
        let coords = arr2(&[[0u64, 0, 2, 4, 4], [0, 6, 3, 1, 6]]);
        let values = [i32::MAX, -3, 7, i32::MIN, 1];
        a.sparse()
            .unwrap()
            .write_coo(coords.view(), &values)
            .unwrap();
        let x = [0.5, 1.0, 2.0, 0.25, 3.0, 5.0, 1.5];
        let y = a.sparse().unwrap().spmv_as::<i32, f64>(&x).unwrap();
        let want = [
            f64::from(i32::MAX) * 0.5 - 4.5,
            0.0,
            1.75,
            0.0,
            f64::from(i32::MIN) + 1.5,
        ];
        assert_eq!(y, want, "{format:?}");
        // the same type: read in place, integers wrap
        assert_eq!(
            a.sparse().unwrap().spmv(&[2i32; 7]).unwrap(),
            [
                i32::MAX.wrapping_mul(2) - 6,
                0,
                14,
                0,
                2i32.wrapping_mul(i32::MIN) + 2
            ]
        );
        // the array's type is checked
        assert!(matches!(
            a.sparse().unwrap().spmv_as::<i16, f64>(&x),
            Err(ArrayError::DataTypeMismatch { .. })
        ));
    }
    let b = ArrayBuilder::new(vec![2, 2], DataType::UInt8)
        .chunk_shape(vec![2, 2])
        .sparse(Format::Csr)
        .create(s.clone(), "u8")
        .unwrap();
    b.sparse()
        .unwrap()
        .write_coo(arr2(&[[0u64, 0], [0, 1]]).view(), &[200u8, 100])
        .unwrap();
    assert_eq!(
        b.sparse().unwrap().spmv_as::<u8, u16>(&[300, 2]).unwrap(),
        [60200, 0]
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// Random writes (sparse and dense) against a model, for every format, with and without
    /// sharding, on a regular or a regular_bounded grid.
    #[test]
    fn sparse_writes_match_a_model(
        format in 0usize..3,
        rows in 1u64..20,
        cols in 1u64..20,
        sharded in any::<bool>(),
        lower in -5i64..5,
        seed in any::<u64>(),
    ) {
        let format = [Format::Coo, Format::Csr, Format::Csc][format];
        let s = store();
        let mut b = ArrayBuilder::new(vec![rows, cols], DataType::Float64)
            .chunk_shape(vec![3, 4])
            .sparse(format)
            .lower_bound(vec![lower, 0])
            .origin(vec![1, 0]);
        if sharded {
            b = b.shards(vec![6, 8]);
        }
        let a = b.create(s.clone(), "p").unwrap();
        let mut model = BTreeMap::new();
        for round in 0..3u64 {
            let updates = random_entries(&[rows, cols], 12, seed ^ round);
            let (coords, mut values) = coords_of(&updates, 2);
            if round == 2 {
                values.iter_mut().step_by(3).for_each(|v| *v = 0.0);
            }
            a.sparse().unwrap().write_coo(coords.view(), &values).unwrap();
            for ((p, _), v) in updates.iter().zip(&values) {
                if *v == 0.0 { model.remove(p); } else { model.insert(p.clone(), *v); }
            }
        }
        prop_assert_eq!(a.read_all::<f64>().unwrap(), dense_of(&[rows, cols], &model, 0.0));
        let coo = a.sparse().unwrap().read_coo::<f64>(&Region::whole(&[rows, cols])).unwrap();
        let (coords, values) = coords_of(&model, 2);
        prop_assert_eq!(coo.coords(), coords.view());
        prop_assert_eq!(coo.values(), &values[..]);
        let dom = coo.domain_coords();
        for k in 0..coo.nnz() {
            prop_assert_eq!(dom[[0, k]], lower + coords[[0, k]] as i64);
        }
        prop_assert_eq!(a.sparse().unwrap().nnz().unwrap(), model.len() as u64);
        let x: Vec<f64> = (0..cols).map(|c| c as f64 + 1.0).collect();
        let y = a.sparse().unwrap().spmv(&x).unwrap();
        let mut want = vec![0.0; rows as usize];
        for (p, v) in &model { want[p[0] as usize] += v * x[p[1] as usize]; }
        for (g, w) in y.iter().zip(&want) { prop_assert!((g - w).abs() < 1e-6); }
        let csr = coo.to_csr().unwrap();
        prop_assert_eq!(csr.to_dense(), dense_of(&[rows, cols], &model, 0.0).into_dimensionality::<ndarray::Ix2>().unwrap());
        // the direct CSR read gives the same matrix, for the whole array and for sub-regions
        prop_assert_eq!(&a.sparse().unwrap().read_csr::<f64>(&Region::whole(&[rows, cols])).unwrap(), &csr);
        let mut rng = Rng::new(seed ^ 0x5eed);
        for _ in 0..4 {
            let (r0, c0) = (rng.below(rows), rng.below(cols));
            let (nr, nc) = (rng.below(rows - r0 + 1), rng.below(cols - c0 + 1));
            let region = Region::new(vec![r0, c0], vec![nr, nc]).unwrap();
            let direct = a.sparse().unwrap().read_csr::<f64>(&region).unwrap();
            prop_assert_eq!(&direct, &a.sparse().unwrap().read_coo::<f64>(&region).unwrap().to_csr().unwrap());
            prop_assert_eq!(direct.shape(), (nr as usize, nc as usize));
            // narrow indices: the same matrix, and sprs (try_new) finds its structure sound
            let narrow = a.sparse().unwrap().read_csr_as::<f64, i16>(&region).unwrap();
            let wide = |v: &[i16]| v.iter().map(|&i| i as usize).collect::<Vec<_>>();
            prop_assert_eq!(wide(narrow.indptr().raw_storage()), direct.indptr().raw_storage().to_vec());
            prop_assert_eq!(wide(narrow.indices()), direct.indices());
            prop_assert_eq!(narrow.data(), direct.data());
        }
        // replace a block with a sprs matrix
        let mut tri = TriMat::new(((rows / 2) as usize, (cols / 2) as usize));
        if rows >= 2 && cols >= 2 { tri.add_triplet(0, 0, 7.0); }
        let m: CsMat<f64> = tri.to_csr();
        a.sparse().unwrap().write_sprs(&m, &[rows / 4, cols / 4]).unwrap();
        model.retain(|p, _| !(p[0] >= rows / 4 && p[0] < rows / 4 + rows / 2 && p[1] >= cols / 4 && p[1] < cols / 4 + cols / 2));
        if rows >= 2 && cols >= 2 { model.insert(vec![rows / 4, cols / 4], 7.0); }
        prop_assert_eq!(a.read_all::<f64>().unwrap(), dense_of(&[rows, cols], &model, 0.0));
        prop_assert_eq!(a.sparse().unwrap().nnz().unwrap(), model.len() as u64);
    }
}

#[test]
fn csr_reads_refuse_an_index_type_too_narrow_for_the_matrix() {
    let s = store();
    let a = ArrayBuilder::new(vec![300, 200], DataType::Float32)
        .chunk_shape(vec![100, 100])
        .sparse(Format::Csr)
        .create(s.clone(), "counts")
        .unwrap();
    let sparse = a.sparse().unwrap();
    // 40 000 entries: every column index fits i16, the entry count (and last pointer) not
    let (rows, cols): (Vec<u64>, Vec<u64>) = (0..40_000u64).map(|k| (k / 200, k % 200)).unzip();
    let coords = Array2::from_shape_vec((2, 40_000), [rows, cols].concat()).unwrap();
    sparse
        .write_coo(coords.view(), &vec![1.0f32; 40_000])
        .unwrap();
    let whole = Region::whole(&[300, 200]);
    let err = sparse.read_csr_as::<f32, i16>(&whole).unwrap_err();
    assert!(matches!(err, ArrayError::TooLarge { .. }), "{err}");
    let part = Region::new(vec![0, 0], vec![100, 200]).unwrap(); // 20 000 entries fit
    assert_eq!(sparse.read_csr_as::<f32, i16>(&part).unwrap().nnz(), 20_000);
    assert_eq!(
        sparse.read_csr_as::<f32, i32>(&whole).unwrap().nnz(),
        40_000
    );
    // 2**15 columns: the column indices do not fit i16, whatever the entries
    let b = ArrayBuilder::new(vec![2, 1 << 15], DataType::Float32)
        .chunk_shape(vec![2, 1 << 14])
        .sparse(Format::Csr)
        .create(s.clone(), "columns")
        .unwrap();
    let wide = Region::whole(&[2, 1 << 15]);
    let err = b
        .sparse()
        .unwrap()
        .read_csr_as::<f32, i16>(&wide)
        .unwrap_err();
    assert!(matches!(err, ArrayError::TooLarge { .. }), "{err}");
    assert!(b.sparse().unwrap().read_csr_as::<f32, i32>(&wide).is_ok());
}

#[test]
fn regions_of_more_than_2_pow_64_positions_read_sparse() {
    let s = store();
    let huge = 1u64 << 40;
    let a = sparse_array(
        &s,
        "huge",
        vec![huge, huge],
        vec![1 << 20, 1 << 20],
        Format::Coo,
        None,
    );
    let coords = arr2(&[[huge - 1, 5, 5], [0, huge - 2, 7]]);
    a.sparse()
        .unwrap()
        .write_coo(coords.view(), &[1.0, 2.0, 3.0])
        .unwrap();
    // the whole array holds 2^80 positions: the keyed sort cannot be used
    let coo = a
        .sparse()
        .unwrap()
        .read_coo::<f64>(&Region::whole(&[huge, huge]))
        .unwrap();
    assert_eq!(coo.coords(), arr2(&[[5u64, 5, huge - 1], [7, huge - 2, 0]]));
    assert_eq!(coo.values(), &[3.0, 2.0, 1.0]);
    // a region of 2^60 positions sorts by offset; both list the stored chunks rather than
    // asking for each of their 2^40 and 2^20 chunks
    let part = a
        .sparse()
        .unwrap()
        .read_coo::<f64>(&Region::new(vec![5, 0], vec![huge - 5, 1 << 20]).unwrap())
        .unwrap();
    assert_eq!(part.coords(), arr2(&[[5u64, huge - 1], [7, 0]]));
    assert_eq!(part.values(), &[3.0, 1.0]);
    assert_eq!(a.sparse().unwrap().nnz().unwrap(), 3);
}

/// The region of `data` placed at `start`.
fn region_at<A>(start: &[u64], data: &ndarray::ArrayD<A>) -> zarr_array::Region {
    let shape = data.shape().iter().map(|&n| n as u64).collect();
    zarr_array::Region::new(start.to_vec(), shape).expect("a region")
}

/// sparse_layout.md: "The codec is never `must_understand: false`: a reader without it must
/// refuse the array". A definition marked so is refused by a reader with the codec and by one
/// without it, both naming the codec, instead of being used by one and skipped by the other.
#[test]
fn sparse_layout_marked_must_understand_false_is_refused_with_or_without_the_codec() {
    let s = store();
    sparse_array(&s, "mu", vec![4, 4], vec![2, 2], Format::Csr, None);
    let raw = s.get("mu/zarr.json").unwrap().unwrap();
    let mut doc: serde_json::Value = serde_json::from_slice(&raw).unwrap();
    let codecs = doc["codecs"].as_array_mut().unwrap();
    let sparse = codecs
        .iter_mut()
        .find(|c| c["name"] == "sparse_layout")
        .unwrap();
    sparse["must_understand"] = json!(false);
    s.set("mu/zarr.json", &serde_json::to_vec(&doc).unwrap())
        .unwrap();
    let without = Extensions::default().without("sparse_layout");
    for (who, result) in [
        ("with the codec", Array::open(s.clone(), "mu")),
        ("without it", Array::open_with(s.clone(), "mu", &without)),
    ] {
        let e = zarr_testkit::report(&result.unwrap_err());
        assert!(
            e.contains("\"sparse_layout\"") && e.contains("must_understand"),
            "{who}: {e}"
        );
    }
    // without the field, the reader that lacks the codec refuses it by name
    doc["codecs"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .for_each(|c| {
            c.as_object_mut().unwrap().remove("must_understand");
        });
    s.set("mu/zarr.json", &serde_json::to_vec(&doc).unwrap())
        .unwrap();
    let e = zarr_testkit::report(&Array::open_with(s.clone(), "mu", &without).unwrap_err());
    assert!(e.contains("sparse_layout"), "{e}");
    assert!(Array::open(s, "mu").is_ok());
}

/// A 2-d `write_coo` of entries in row-major order (grouped in one pass, no sort) against
/// the same entries shuffled (the general grouping): the same stored bytes key by key, the
/// same errors, and the model's content, over seeded random arrays: every format, shards,
/// `regular_bounded` grids, several column chunks, empty rows and columns, values equal to
/// the fill value, writes merged into stored chunks, positions given twice or outside.
#[test]
fn row_major_writes_match_the_general_grouping() {
    let mut rng = Rng::new(40);
    let mut rounds_checked = 0;
    for case in 0..300u64 {
        let (rows, cols) = (1 + rng.below(40), 1 + rng.below(40));
        let chunks = vec![
            1 + rng.below(9),
            1 + rng.below(if case % 4 == 0 { 60 } else { 12 }),
        ];
        let format = [Format::Coo, Format::Csr, Format::Csc][case as usize % 3];
        let sharded = case % 5 == 1;
        let lower = if case % 3 == 2 {
            rng.below(7) as i64 - 3
        } else {
            0
        };
        let make = |s: &Arc<dyn Store>| {
            let mut b = ArrayBuilder::new(vec![rows, cols], DataType::Float32)
                .chunk_shape(chunks.clone())
                .sparse(format);
            if lower != 0 {
                b = b.lower_bound(vec![lower, 0]).origin(vec![1, 0]);
            }
            if sharded {
                b = b.shards(vec![chunks[0] * 2, chunks[1] * 3]);
            }
            b.create(s.clone(), "a").unwrap()
        };
        let (fast_store, general_store) = (store(), store());
        let (fast, general) = (make(&fast_store), make(&general_store));
        let mut model: BTreeMap<Vec<u64>, f32> = BTreeMap::new();
        for round in 0..3 {
            // some rows and columns left empty: entries in a random sub-rectangle
            let (r_hi, c_hi) = (1 + rng.below(rows), 1 + rng.below(cols));
            let n = rng.below(r_hi * c_hi + 1) as usize;
            let mut entries: BTreeMap<(u64, u64), f32> = BTreeMap::new();
            for _ in 0..n {
                let v = if rng.below(6) == 0 {
                    0.0
                } else {
                    rng.below(100) as f32 + 0.5
                };
                entries.insert((rng.below(r_hi), rng.below(c_hi)), v);
            }
            let mut sorted: Vec<(u64, u64, f32)> =
                entries.iter().map(|(&(r, c), &v)| (r, c, v)).collect();
            let bad = rng.below(10);
            if bad == 0 && !sorted.is_empty() {
                // a position given twice (still in row-major order, not strictly)
                let k = rng.index(sorted.len());
                sorted.insert(k, sorted[k]);
            } else if bad == 1 {
                // a position outside the array (one: the shuffled order meets it too)
                let c = rng.below(cols + 2);
                sorted.push(if c >= cols {
                    (rows - 1, c, 1.0)
                } else {
                    (rows + rng.below(3), c, 1.0)
                });
            }
            let mut shuffled = sorted.clone();
            rng.shuffle(&mut shuffled);
            if shuffled.len() > 1
                && shuffled
                    .windows(2)
                    .all(|w| (w[0].0, w[0].1) <= (w[1].0, w[1].1))
            {
                shuffled.reverse();
            }
            // the coordinates as rows then columns, or as (row, column) pairs
            let pairs = case % 2 == 1;
            let write = |a: &Array, e: &[(u64, u64, f32)]| {
                let mut coords = if pairs {
                    Array2::zeros((e.len(), 2)).reversed_axes()
                } else {
                    Array2::zeros((2, e.len()))
                };
                for (k, &(r, c, _)) in e.iter().enumerate() {
                    coords[[0, k]] = r;
                    coords[[1, k]] = c;
                }
                let values: Vec<f32> = e.iter().map(|x| x.2).collect();
                a.sparse().unwrap().write_coo(coords.view(), &values)
            };
            let (got, want) = (write(&fast, &sorted), write(&general, &shuffled));
            match (&got, &want) {
                (Ok(()), Ok(())) => {
                    assert!(
                        bad > 1 || bad == 0 && sorted.is_empty(),
                        "case {case}: {bad}"
                    );
                    for ((r, c), v) in entries {
                        if v == 0.0 {
                            model.remove(&vec![r, c]);
                        } else {
                            model.insert(vec![r, c], v);
                        }
                    }
                }
                (Err(g), Err(w)) => {
                    assert!(bad <= 1, "case {case}: {g}");
                    assert_eq!(g.to_string(), w.to_string(), "case {case}");
                    // a refused write leaves nothing behind: the arrays stay as they were
                    break;
                }
                _ => panic!("case {case} round {round}: {got:?} against {want:?}"),
            }
            rounds_checked += 1;
            let keys = |s: &Arc<dyn Store>| {
                let mut k = s.list_prefix("").unwrap();
                k.sort();
                k
            };
            assert_eq!(keys(&fast_store), keys(&general_store), "case {case}");
            for k in keys(&fast_store) {
                assert_eq!(
                    fast_store.get(&k).unwrap(),
                    general_store.get(&k).unwrap(),
                    "case {case}: {k}"
                );
            }
        }
        let dense = fast.read_all::<f32>().unwrap();
        for ((r, c), v) in dense
            .indexed_iter()
            .map(|(i, v)| ((i[0] as u64, i[1] as u64), *v))
        {
            assert_eq!(
                v,
                model.get(&vec![r, c]).copied().unwrap_or(0.0),
                "case {case} ({r}, {c})"
            );
        }
    }
    assert!(rounds_checked > 600, "{rounds_checked}");
}
