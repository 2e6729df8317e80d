//! The codec-only limit of a sharded write: compare.py's `shard` workload (N^3 uint16, shards
//! 256^3 of 32^3 inner chunks, inner `[bytes little, zstd 1]`; N = 256 or `ZARR_BENCH_N`) as
//! zstd work alone, beside the whole-array write through zarr-array.
//!
//! - `zstd_only`: the inner chunks, gathered into buffers of their own before the clock
//!   starts, compressed at level 1 with the zstd crate on all cores (rayon, one reused
//!   compressor per thread). No implementation that writes this array's bytes can be faster.
//! - `gather_and_zstd`: the same, with each inner chunk first copied out of the N^3 array into
//!   a reused per-thread buffer (a plain loop, no Zarr): the floor for a write from memory.
//! - `array_write_memory`, `array_write_filesystem`: `write_region_bytes` of the whole array
//!   into a `MemoryStore` and a `FilesystemStore`.
//!
//! After criterion's figures, `cargo bench` prints one summary line with the rates (medians
//! of 9 runs) and the ratios array write / limit.
//!
//! `ZARR_BENCH_N=512 cargo bench -p zarr-benches --bench shard_write_limit`
#![forbid(unsafe_code)]

use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, Throughput};
use rayon::prelude::*;
use zarr_array::zarr_grid::geometry::Region;
use zarr_array::zarr_store::{FilesystemStore, MemoryStore, Store};
use zarr_benches::{bench_n, make_data, median_seconds, mib_s, Workload};

/// The inner chunk's edge, and the shard's, in elements (compare.py's `shard` workload).
const INNER: usize = 32;

struct Setup {
    n: usize,
    data: Vec<u8>,
    /// Each inner chunk's bytes, C order, in the order of `starts`.
    gathered: Vec<Vec<u8>>,
    /// Each inner chunk's first element in the array.
    starts: Vec<[usize; 3]>,
}

fn setup() -> Setup {
    let n = bench_n() as usize;
    assert!(
        n.is_multiple_of(256),
        "ZARR_BENCH_N must be a multiple of the 256^3 shard"
    );
    let data: Vec<u8> = bytemuck::cast_slice(&make_data(n as u64)).to_vec();
    let per = n / INNER;
    let starts: Vec<[usize; 3]> = (0..per * per * per)
        .map(|c| {
            [
                c / (per * per) * INNER,
                c / per % per * INNER,
                c % per * INNER,
            ]
        })
        .collect();
    let gathered = starts
        .iter()
        .map(|&s| {
            let mut buf = vec![0u8; INNER * INNER * INNER * 2];
            gather(&data, n, s, &mut buf);
            buf
        })
        .collect();
    Setup {
        n,
        data,
        gathered,
        starts,
    }
}

/// Copies the inner chunk at `start` of the n^3 uint16 array `data` into `out`.
fn gather(data: &[u8], n: usize, [i0, j0, k0]: [usize; 3], out: &mut [u8]) {
    let row = INNER * 2;
    for (r, dst) in out.chunks_exact_mut(row).enumerate() {
        let (i, j) = (i0 + r / INNER, j0 + r % INNER);
        let at = ((i * n + j) * n + k0) * 2;
        dst.copy_from_slice(&data[at..at + row]);
    }
}

/// A level-1 compressor and an output buffer of the bound, per thread.
fn compressor() -> (zstd::bulk::Compressor<'static>, Vec<u8>) {
    let c = zstd::bulk::Compressor::new(1).expect("a compressor");
    let bound = zstd::zstd_safe::compress_bound(INNER * INNER * INNER * 2);
    (c, Vec::with_capacity(bound))
}

/// Compresses every pre-gathered inner chunk; returns the compressed bytes.
fn zstd_only(s: &Setup) -> u64 {
    s.gathered
        .par_iter()
        .map_init(compressor, |(c, out), chunk| {
            out.clear();
            c.compress_to_buffer(chunk, out).expect("compresses") as u64
        })
        .sum()
}

/// Gathers each inner chunk from the array into a reused buffer, then compresses it.
fn gather_and_zstd(s: &Setup) -> u64 {
    s.starts
        .par_iter()
        .map_init(
            || (compressor(), vec![0u8; INNER * INNER * INNER * 2]),
            |((c, out), buf), &start| {
                gather(&s.data, s.n, start, buf);
                out.clear();
                c.compress_to_buffer(&buf[..], out).expect("compresses") as u64
            },
        )
        .sum()
}

fn array_write(store: &Arc<dyn Store>, s: &Setup) -> u64 {
    let n = s.n as u64;
    let array = Workload::Shard
        .builder(n)
        .create(store.clone(), "")
        .expect("creates");
    array
        .write_region_bytes(&Region::whole(&[n; 3]), &s.data)
        .expect("writes");
    store.delete_prefix("").expect("clears");
    n
}

fn main() {
    let s = setup();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let fs: Arc<dyn Store> =
        Arc::new(FilesystemStore::create(dir.path().join("shard.zarr")).expect("a store"));
    let mem: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let total = s.data.len() as u64;
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    {
        let mut g = c.benchmark_group("shard_write_limit");
        g.throughput(Throughput::Bytes(total));
        g.bench_function("zstd_only", |b| b.iter(|| zstd_only(&s)));
        g.bench_function("gather_and_zstd", |b| b.iter(|| gather_and_zstd(&s)));
        g.bench_function("array_write_memory", |b| b.iter(|| array_write(&mem, &s)));
        g.bench_function("array_write_filesystem", |b| {
            b.iter(|| array_write(&fs, &s))
        });
        g.finish();
    }
    c.final_summary();
    // `cargo bench` passes --bench; `cargo test --benches` runs each function once, no summary
    if std::env::args().any(|a| a == "--bench") {
        let limit = mib_s(total, median_seconds(|| zstd_only(&s)));
        let floor = mib_s(total, median_seconds(|| gather_and_zstd(&s)));
        let mem_rate = mib_s(total, median_seconds(|| array_write(&mem, &s)));
        let fs_rate = mib_s(total, median_seconds(|| array_write(&fs, &s)));
        println!(
            "shard write limit (zstd crate level 1, {} threads, {} inner chunks of {} KiB, N={}): \
             zstd only {limit:.0} MiB/s | gather + zstd {floor:.0} MiB/s | array write memory: \
             {mem_rate:.0} MiB/s ({:.2} of zstd only, {:.2} of gather + zstd) | array write \
             filesystem: {fs_rate:.0} MiB/s ({:.2}, {:.2})",
            rayon::current_num_threads(),
            s.starts.len(),
            INNER * INNER * INNER * 2 / 1024,
            s.n,
            mem_rate / limit,
            mem_rate / floor,
            fs_rate / limit,
            fs_rate / floor,
        );
    }
}
