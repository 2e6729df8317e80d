//! Sparse chunks at 1 % density: a 2000 x 2000 float32 array in 1000 x 1000 chunks, random
//! positions, stored in a `FilesystemStore` twice (`sparse_layout` CSR + zstd 3, and dense
//! bytes + zstd 3), read through the sparse handle as one CSR (`read_csr`, and
//! `read_coo(..).to_csr()`), as zero-copy chunk views (`chunks`), and densely (`read_all`,
//! then CSR built by hand). Throughput is the dense size of the array, so the rates compare.
//! `sparse-table` covers more densities.
//!
//! `cargo bench -p zarr-benches --bench sparse`
#![forbid(unsafe_code)]

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use zarr_array::ndarray::Array2;
use zarr_array::zarr_grid::geometry::Region;
use zarr_array::zarr_layout_sparse::Format;
use zarr_array::zarr_store::FilesystemStore;
use zarr_array::{ArrayBuilder, DataType};
use zarr_benches::{bytes_little, dense_to_csr, zstd3};
use zarr_testkit::Rng;

const N: u64 = 2000;
const CHUNK: u64 = 1000;
const DENSITY: f64 = 0.01;

fn sparse_vs_dense(c: &mut Criterion) {
    let mut rng = Rng::new(0x5eed);
    let mut data = vec![0f32; (N * N) as usize];
    let (mut rows, mut cols, mut values) = (Vec::new(), Vec::new(), Vec::new());
    for (i, v) in data.iter_mut().enumerate() {
        if rng.unit() < DENSITY {
            *v = 1.0 + rng.unit() as f32;
            rows.push(i as u64 / N);
            cols.push(i as u64 % N);
            values.push(*v);
        }
    }
    let nnz = values.len();
    rows.extend(cols);
    let coords = Array2::from_shape_vec((2, nnz), rows).expect("2 x nnz");

    let dir = tempfile::tempdir().expect("a temporary directory");
    let store = Arc::new(FilesystemStore::create(dir.path().join("sparse.zarr")).expect("a store"));
    let sparse = ArrayBuilder::new(vec![N, N], DataType::Float32)
        .chunk_shape(vec![CHUNK, CHUNK])
        .sparse(Format::Csr)
        .compressors([zstd3()])
        .create(store.clone(), "sparse")
        .expect("creates");
    sparse
        .sparse()
        .expect("sparse")
        .write_coo(coords.view(), &values)
        .expect("writes");
    let dense = ArrayBuilder::new(vec![N, N], DataType::Float32)
        .chunk_shape(vec![CHUNK, CHUNK])
        .serializer(bytes_little())
        .compressors([zstd3()])
        .create(store, "dense")
        .expect("creates");
    let whole = Region::whole(&[N, N]);
    dense
        .write_region_bytes(&whole, bytemuck::cast_slice(&data))
        .expect("writes");
    drop(data);

    let mut g = c.benchmark_group("sparse_1pct_2000x2000_f32");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .throughput(Throughput::Bytes(N * N * 4));
    g.bench_function("read_csr", |b| {
        b.iter(|| {
            let m = sparse
                .sparse()
                .expect("sparse")
                .read_csr::<f32>(black_box(&whole))
                .expect("reads");
            assert_eq!(m.nnz(), nnz);
        })
    });
    g.bench_function("read_sparse_to_csr", |b| {
        b.iter(|| {
            let m = sparse
                .sparse()
                .expect("sparse")
                .read_coo::<f32>(black_box(&whole))
                .expect("reads")
                .to_csr()
                .expect("2-d");
            assert_eq!(m.nnz(), nnz);
        })
    });
    g.bench_function("sparse_chunks_views", |b| {
        b.iter(|| {
            let chunks = sparse.sparse().expect("sparse").chunks().expect("reads");
            let n: usize = chunks.iter().map(|c| c.nnz()).sum();
            assert_eq!(n, nnz);
        })
    });
    g.bench_function("dense_read_all_to_csr", |b| {
        b.iter(|| {
            let d = dense.read_all::<f32>().expect("reads");
            let m = dense_to_csr(N as usize, N as usize, d.as_slice().expect("C order"));
            assert_eq!(m.nnz(), nnz);
        })
    });
    g.finish();
}

criterion_group!(benches, sparse_vs_dense);
criterion_main!(benches);
