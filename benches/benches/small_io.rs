//! Small writes and reads inside large chunks (the `update` and `points` ops of compare.py):
//! a one-inner-chunk update of a shard of 8 and of 64 inner chunks of 32^3 (the time should
//! not grow with the inner chunk count: only the touched inner chunk is re-encoded), and
//! 4096 scattered points read from the sharded and the zstd workloads, without and with a
//! decoded-chunk cache (`Array::with_cache`, the repeated reads then decode nothing).
//! compare.py's data, in a `MemoryStore` (the updates also in a `FilesystemStore`).
//!
//! `cargo bench -p zarr-benches --bench small_io`
#![forbid(unsafe_code)]

use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use zarr_array::zarr_grid::geometry::Region;
use zarr_array::zarr_store::{FilesystemStore, MemoryStore, Store};
use zarr_array::{ArrayBuilder, DataType, Selection};
use zarr_benches::{block_data, make_data, zstd1, Workload};

fn shard_update(c: &mut Criterion) {
    let mut g = c.benchmark_group("shard_update_one_inner_chunk");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    let dir = tempfile::tempdir().expect("a temporary directory");
    // shards of 2^3 and 4^3 inner chunks of 32^3, in memory (the shard read whole and
    // rejoined) and on the filesystem (the index and the inner chunk read, the rest of the
    // shard copied by the kernel)
    for (kind, store) in [
        ("memory", Arc::new(MemoryStore::new()) as Arc<dyn Store>),
        (
            "filesystem",
            Arc::new(FilesystemStore::create(dir.path()).expect("store")) as Arc<dyn Store>,
        ),
    ] {
        for side in [64u64, 128] {
            let inner = (side / 32).pow(3);
            let data = make_data(side);
            let array = ArrayBuilder::new(vec![side; 3], DataType::UInt16)
                .chunk_shape(vec![32; 3])
                .shards(vec![side; 3])
                .compressors(vec![zstd1()])
                .create(store.clone(), &format!("a{side}"))
                .expect("create");
            array
                .write_region_bytes(&Region::whole(&[side; 3]), bytemuck::cast_slice(&data))
                .expect("write");
            let block = block_data([32; 3], [32; 3]);
            let region = Region::new(vec![32; 3], vec![32; 3]).expect("region");
            g.bench_with_input(BenchmarkId::new(kind, inner), &inner, |b, _| {
                b.iter(|| {
                    array
                        .write_region_bytes(&region, bytemuck::cast_slice(&block))
                        .expect("update");
                });
            });
        }
    }
    g.finish();
}

fn points(c: &mut Criterion) {
    let mut g = c.benchmark_group("points_4096");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    let n = 256u64;
    let data = make_data(n);
    let points: Vec<Vec<i64>> = (0..4096u64)
        .map(|p| {
            [7919, 104_729, 1_299_709]
                .map(|m| ((p * m) % n) as i64)
                .to_vec()
        })
        .collect();
    let selection = Selection::Points(points);
    for workload in [Workload::Zstd, Workload::Shard] {
        let store = Arc::new(MemoryStore::new());
        let array = workload.builder(n).create(store, "").expect("create");
        array
            .write_region_bytes(&Region::whole(&[n; 3]), bytemuck::cast_slice(&data))
            .expect("write");
        g.bench_function(workload.name(), |b| {
            b.iter(|| array.read_selection_bytes(&selection).expect("points"));
        });
        // the same points read again and again through a decoded-chunk cache that holds the
        // whole array (filled by the warm-up): what `Array::with_cache` saves
        let cached = array.clone().with_cache(64 << 20);
        g.bench_function(format!("{}_cached", workload.name()), |b| {
            b.iter(|| cached.read_selection_bytes(&selection).expect("points"));
        });
    }
    g.finish();
}

criterion_group!(benches, shard_update, points);
criterion_main!(benches);
