//! The codec-only limit of a compressed read: the stored chunks of compare.py's `zstd`
//! workload (N^3 uint16, 64^3 chunks, `[bytes little, zstd 1]`; N = 256 or `ZARR_BENCH_N`)
//! decompressed with the zstd crate on all cores (rayon), with no Zarr at all, beside the
//! whole-array read of the same chunks through zarr-array, from a `FilesystemStore` and
//! from a `MemoryStore`.
//!
//! A second figure, `zstd_crate_into_output`, adds what any whole-array read must also do:
//! allocate the output and copy each decoded chunk's rows into place (zarr-codecs'
//! `BlockBuffer`, the disjoint blocks a read writes, with no codec chain).
//!
//! After criterion's figures, `cargo bench` prints one summary line with the rates (medians
//! of 9 runs) and the ratios array read / codec limit.
//!
//! `cargo bench -p zarr-benches --bench codec_limit`
#![forbid(unsafe_code)]

use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, Throughput};
use rayon::prelude::*;
use zarr_array::zarr_codecs::BlockBuffer;
use zarr_array::zarr_grid::geometry::Region;
use zarr_array::zarr_store::{FilesystemStore, MemoryStore, Store};
use zarr_array::Array;
use zarr_benches::{bench_n, make_data, median_seconds, mib_s, Workload};

struct Setup {
    _dir: tempfile::TempDir,
    n: u64,
    fs: Arc<dyn Store>,
    mem: Arc<dyn Store>,
    /// The stored (compressed) chunks, as the array holds them.
    chunks: Vec<Vec<u8>>,
    /// Each chunk's grid index.
    indices: Vec<[u64; 3]>,
    chunk_len: usize,
}

fn setup() -> Setup {
    let n = bench_n();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let fs: Arc<dyn Store> =
        Arc::new(FilesystemStore::create(dir.path().join("zstd.zarr")).expect("a store"));
    let data = make_data(n);
    let array = Workload::Zstd
        .builder(n)
        .create(fs.clone(), "")
        .expect("creates");
    array
        .write_region_bytes(&Region::whole(&[n; 3]), bytemuck::cast_slice(&data))
        .expect("writes");
    let mem: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut chunks = Vec::new();
    let mut indices = Vec::new();
    for key in fs.list_prefix("").expect("lists") {
        let value = fs.get(&key).expect("reads").expect("listed");
        if let Some(rest) = key.strip_prefix("c/") {
            let idx: Vec<u64> = rest
                .split('/')
                .map(|p| p.parse().expect("an index"))
                .collect();
            indices.push([idx[0], idx[1], idx[2]]);
            chunks.push(value.clone());
        }
        mem.set(&key, &value).expect("writes");
    }
    let chunk_len = array.codecs().decoded_len();
    Setup {
        _dir: dir,
        n,
        fs,
        mem,
        chunks,
        indices,
        chunk_len,
    }
}

/// The codec-only limit plus the unavoidable rest of a whole-array read: a fresh output
/// array, every chunk decompressed with the zstd crate and its 64-element rows copied to
/// their places (a plain loop, no Zarr).
fn codec_into_output(s: &Setup) -> u64 {
    let n = s.n;
    let mut out = vec![0u8; (n * n * n * 2) as usize];
    // each chunk's block of the output (checked disjoint), written by its own task
    let regions: Vec<Region> = s
        .indices
        .iter()
        .map(|idx| {
            let start = idx.map(|x| x * 64);
            // edge chunks cut at the output's end
            let shape = start.iter().map(|&x| (n - x).min(64)).collect();
            Region::new(start.to_vec(), shape).expect("a region")
        })
        .collect();
    let mut buffer = BlockBuffer::new(&mut out, &[n; 3], 2).expect("an n^3 uint16 output");
    let blocks = buffer.split(&regions).expect("the chunks' blocks");
    blocks.into_par_iter().zip(&s.chunks).for_each_init(
        || {
            (
                zstd::bulk::Decompressor::new().expect("a decompressor"),
                vec![0u8; s.chunk_len],
            )
        },
        |(d, buf), (mut block, c)| {
            d.decompress_to_buffer(c, buf).expect("decompresses");
            block
                .copy_from(buf, &[64; 3], &[0; 3])
                .expect("a chunk of the block's shape");
        },
    );
    u64::from(out[out.len() / 2])
}

/// Decompresses every stored chunk with the zstd crate, in parallel; returns a checksum.
fn codec_only(s: &Setup) -> u64 {
    s.chunks
        .par_iter()
        .map_init(
            || {
                (
                    zstd::bulk::Decompressor::new().expect("a decompressor"),
                    vec![0u8; s.chunk_len],
                )
            },
            |(d, buf), c| {
                let got = d.decompress_to_buffer(c, buf).expect("decompresses");
                u64::from(buf[got / 2])
            },
        )
        .sum()
}

fn array_read(store: &Arc<dyn Store>, n: u64) -> u64 {
    let array = Array::open(store.clone(), "").expect("opens");
    let mut out = vec![0u8; (n * n * n * 2) as usize];
    array
        .read_region_bytes_into(&Region::whole(&[n; 3]), &mut out)
        .expect("reads");
    u64::from(out[out.len() / 2])
}

fn main() {
    let s = setup();
    let total = s.n * s.n * s.n * 2;
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    {
        let mut g = c.benchmark_group("codec_limit");
        g.throughput(Throughput::Bytes(total));
        g.bench_function("zstd_crate_all_cores", |b| b.iter(|| codec_only(&s)));
        g.bench_function("zstd_crate_into_output", |b| {
            b.iter(|| codec_into_output(&s))
        });
        g.bench_function("array_read_filesystem", |b| {
            b.iter(|| array_read(&s.fs, s.n))
        });
        g.bench_function("array_read_memory", |b| b.iter(|| array_read(&s.mem, s.n)));
        g.finish();
    }
    c.final_summary();
    // `cargo bench` passes --bench; `cargo test --benches` runs each function once, no summary
    if std::env::args().any(|a| a == "--bench") {
        let limit = mib_s(total, median_seconds(|| codec_only(&s)));
        let placed = mib_s(total, median_seconds(|| codec_into_output(&s)));
        let fs = mib_s(total, median_seconds(|| array_read(&s.fs, s.n)));
        let mem = mib_s(total, median_seconds(|| array_read(&s.mem, s.n)));
        println!(
            "codec-only limit (zstd crate, {} threads, {} chunks of {} KiB, N={}): {limit:.0} MiB/s | \
             zstd crate + copy into a fresh output: {placed:.0} MiB/s | array read filesystem: \
             {fs:.0} MiB/s ({:.2} of the limit, {:.2} of limit + copy) | array read memory: \
             {mem:.0} MiB/s ({:.2} of the limit, {:.2} of limit + copy)",
            rayon::current_num_threads(),
            s.chunks.len(),
            s.chunk_len / 1024,
            s.n,
            fs / limit,
            fs / placed,
            mem / limit,
            mem / placed,
        );
    }
}
