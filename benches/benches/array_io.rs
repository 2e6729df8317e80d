//! Array I/O through zarr-array: whole-array and partial reads and writes of compare.py's
//! data (a 256^3 uint16 array, 32 MiB; `ZARR_BENCH_N` changes N) through a `MemoryStore` and a
//! `FilesystemStore` in a temporary directory, sharded partial reads, and prepend.
//!
//! `cargo bench -p zarr-benches --bench array_io`
#![forbid(unsafe_code)]

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{
    criterion_group, criterion_main, BatchSize, BenchmarkGroup, BenchmarkId, Criterion, Throughput,
};
use zarr_array::zarr_grid::geometry::Region;
use zarr_array::zarr_store::{FilesystemStore, MemoryStore, Store};
use zarr_array::{Array, ArrayBuilder, DataType, ExtensionDef};
use zarr_benches::{bench_n, make_data, Workload};

fn group<'a>(c: &'a mut Criterion, name: &str) -> BenchmarkGroup<'a, WallTime> {
    let mut g = c.benchmark_group(name);
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    g
}

fn region_bytes(r: &Region) -> u64 {
    r.num_elements().expect("small") * 2
}

/// Named stores.
type Stores = Vec<(&'static str, Arc<dyn Store>)>;

/// The stores each bench runs on; the temporary directory lives as long as the list.
fn stores() -> (tempfile::TempDir, Stores) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let fs = FilesystemStore::create(dir.path().join("bench.zarr")).expect("a store");
    let list: Stores = vec![
        ("memory", Arc::new(MemoryStore::new())),
        ("filesystem", Arc::new(fs)),
    ];
    (dir, list)
}

fn dense(c: &mut Criterion) {
    let n = bench_n();
    let data = make_data(n);
    let bytes: &[u8] = bytemuck::cast_slice(&data);
    let whole = Region::whole(&[n; 3]);
    // 100^3, not aligned to the 64^3 chunks: 27 chunks, 26 of them in part
    let part = Region::new(vec![n / 2 - 50, n / 2 - 37, 11], vec![100; 3]).expect("valid");
    let part_data = zarr_benches::block_data([n / 2 - 50, n / 2 - 37, 11], [100; 3]);
    let slab = Region::new(vec![n / 2, 0, 0], vec![1, n, n]).expect("valid");
    let (_dir, stores) = stores();
    for workload in [Workload::Raw, Workload::Zstd, Workload::Blosc] {
        let mut g = group(c, &format!("array_{workload}"));
        for (store_name, store) in &stores {
            let path = workload.name();
            let array = workload
                .builder(n)
                .create(store.clone(), path)
                .expect("creates");
            array.write_region_bytes(&whole, bytes).expect("writes");

            g.throughput(Throughput::Bytes(region_bytes(&whole)));
            g.bench_function(BenchmarkId::new("write_all", store_name), |b| {
                b.iter(|| {
                    array
                        .write_region_bytes(&whole, black_box(bytes))
                        .expect("writes")
                })
            });
            let mut out = vec![0u8; bytes.len()];
            g.bench_function(BenchmarkId::new("read_all", store_name), |b| {
                b.iter(|| {
                    let a = Array::open(store.clone(), path).expect("opens");
                    a.read_region_bytes_into(&whole, &mut out).expect("reads");
                })
            });
            assert!(out == bytes, "read back what was written");

            g.throughput(Throughput::Bytes(region_bytes(&part)));
            let mut out = vec![0u8; region_bytes(&part) as usize];
            g.bench_function(BenchmarkId::new("read_100^3_unaligned", store_name), |b| {
                b.iter(|| {
                    array
                        .read_region_bytes_into(black_box(&part), &mut out)
                        .expect("reads")
                })
            });
            let pbytes: &[u8] = bytemuck::cast_slice(&part_data);
            g.bench_function(BenchmarkId::new("write_100^3_unaligned", store_name), |b| {
                b.iter(|| {
                    array
                        .write_region_bytes(&part, black_box(pbytes))
                        .expect("writes")
                })
            });

            g.throughput(Throughput::Bytes(region_bytes(&slab)));
            let mut out = vec![0u8; region_bytes(&slab) as usize];
            g.bench_function(BenchmarkId::new("read_slab", store_name), |b| {
                b.iter(|| {
                    array
                        .read_region_bytes_into(black_box(&slab), &mut out)
                        .expect("reads")
                })
            });
        }
        g.finish();
    }
}

fn sharded(c: &mut Criterion) {
    let n = bench_n();
    let data = make_data(n);
    let bytes: &[u8] = bytemuck::cast_slice(&data);
    let whole = Region::whole(&[n; 3]);
    let (_dir, stores) = stores();
    let regions = [
        (
            "inner_chunk_32^3",
            Region::new(vec![32, 64, 96], vec![32; 3]).expect("valid"),
        ),
        (
            "unaligned_100^3",
            Region::new(vec![n / 2 - 50, n / 2 - 37, 11], vec![100; 3]).expect("valid"),
        ),
        (
            "slab",
            Region::new(vec![n / 2, 0, 0], vec![1, n, n]).expect("valid"),
        ),
    ];
    let mut g = group(c, "array_shard");
    for (store_name, store) in &stores {
        let array = Workload::Shard
            .builder(n)
            .create(store.clone(), "shard")
            .expect("creates");
        array.write_region_bytes(&whole, bytes).expect("writes");
        g.throughput(Throughput::Bytes(region_bytes(&whole)));
        g.bench_function(BenchmarkId::new("write_all", store_name), |b| {
            b.iter(|| {
                array
                    .write_region_bytes(&whole, black_box(bytes))
                    .expect("writes")
            })
        });
        let mut out = vec![0u8; bytes.len()];
        g.bench_function(BenchmarkId::new("read_all", store_name), |b| {
            b.iter(|| {
                array
                    .read_region_bytes_into(&whole, &mut out)
                    .expect("reads")
            })
        });
        for (name, region) in &regions {
            g.throughput(Throughput::Bytes(region_bytes(region)));
            let mut out = vec![0u8; region_bytes(region) as usize];
            g.bench_function(BenchmarkId::new(format!("read_{name}"), store_name), |b| {
                b.iter(|| {
                    array
                        .read_region_bytes_into(black_box(region), &mut out)
                        .expect("reads")
                })
            });
        }
    }
    g.finish();
}

/// Prepend to a 256^3 uint8 array of 64^3 chunks (64 chunks stored): one chunk row aligned
/// (16 new chunks, no existing chunk touched), and 32 rows into a partly filled first chunk
/// row (a read-modify-write of its 16 chunks).
fn prepend(c: &mut Criterion) {
    let n = 256u64;
    let data: Vec<u8> = (0..n * n * n).map(|i| (i % 251) as u8 + 1).collect();
    let rows = |k: u64| -> Vec<u8> { (0..k * n * n).map(|i| (i % 13) as u8 + 1).collect() };
    let make = |store: Arc<dyn Store>, first_prepend: Option<u64>| -> Array {
        let mut a = ArrayBuilder::new(vec![n; 3], DataType::UInt8)
            .chunk_shape(vec![64; 3])
            .compressors(Vec::<ExtensionDef>::new())
            .create(store, "p")
            .expect("creates");
        a.write_region_bytes(&Region::whole(&[n; 3]), &data)
            .expect("writes");
        if let Some(k) = first_prepend {
            a.prepend_bytes(&[k, n, n], &rows(k), 0).expect("prepends");
        }
        a
    };
    let mut g = group(c, "prepend");
    for (name, first, k) in [
        ("aligned_64_rows", None, 64u64),
        ("into_partial_chunk_32_rows", Some(32u64), 32u64),
    ] {
        let new = rows(k);
        g.throughput(Throughput::Bytes(new.len() as u64));
        g.bench_function(BenchmarkId::new(name, "memory"), |b| {
            b.iter_batched(
                || make(Arc::new(MemoryStore::new()), first),
                |mut a| {
                    a.prepend_bytes(&[k, n, n], black_box(&new), 0)
                        .expect("prepends");
                    a
                },
                BatchSize::PerIteration,
            )
        });
        let dir = tempfile::tempdir().expect("a temporary directory");
        let mut round = 0u32;
        g.bench_function(BenchmarkId::new(name, "filesystem"), |b| {
            b.iter_batched(
                || {
                    // the previous round's array is done with: keep the disk use flat
                    let _ = std::fs::remove_dir_all(dir.path().join(format!("p{round}.zarr")));
                    round += 1;
                    let root = dir.path().join(format!("p{round}.zarr"));
                    make(
                        Arc::new(FilesystemStore::create(&root).expect("a store")),
                        first,
                    )
                },
                |mut a| {
                    a.prepend_bytes(&[k, n, n], black_box(&new), 0)
                        .expect("prepends");
                    a
                },
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, dense, sharded, prepend);
criterion_main!(benches);
