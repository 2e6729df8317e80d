//! Grid arithmetic: splitting a region over a big grid into chunk parts (`regular` and
//! `regular_bounded` with a partly filled first chunk), locating positions, and chunk key
//! encoding and strict decoding.
//!
//! `cargo bench -p zarr-benches --bench grid`
#![forbid(unsafe_code)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use zarr_array::zarr_grid::geometry::{copy_region, Region};
use zarr_array::zarr_grid::key_encoding::{DefaultChunkKeyEncoding, Separator, V2ChunkKeyEncoding};
use zarr_array::zarr_grid::{build_grid, default_registry, ChunkKeyEncoding};
use zarr_benches::def;

fn chunks_in_region(c: &mut Criterion) {
    let registry = default_registry();
    // a 2^40-element-per-axis array of 64^3 chunks: 2^34 chunks per axis
    let shape = [1u64 << 40; 3];
    let grids = [
        (
            "regular",
            def(serde_json::json!({"name": "regular",
                "configuration": {"chunk_shape": [64, 64, 64]}})),
        ),
        (
            "regular_bounded",
            def(serde_json::json!({"name": "regular_bounded",
                "configuration": {"chunk_shape": [64, 64, 64], "origin": [0, 0, 0],
                                  "lower_bound": [-1000, -37, 5]}})),
        ),
    ];
    // 100 x 100 x 100 = 10^6 chunk parts, the region not aligned to chunks
    let region = Region::new(
        vec![1 << 30, 1 << 20, 17],
        vec![6400 - 64, 6400 - 64, 6400 - 64],
    )
    .expect("a valid region");
    let mut g = c.benchmark_group("grid_chunks_in_region");
    g.sample_size(10);
    for (name, def) in &grids {
        let grid = build_grid(&registry, def, &shape).expect("a valid grid");
        let n = grid.chunks_in_region(&region).expect("inside").count() as u64;
        g.throughput(Throughput::Elements(n));
        g.bench_function(BenchmarkId::new(*name, format!("{n}_parts")), |b| {
            b.iter(|| {
                grid.chunks_in_region(black_box(&region))
                    .expect("inside")
                    .fold(0u64, |acc, p| acc.wrapping_add(p.in_chunk.shape[2]))
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("grid_chunk_of");
    let positions: Vec<Vec<u64>> = (0..10_000u64)
        .map(|i| vec![i * 7_919, (i * 104_729) % (1 << 40), i * 31])
        .collect();
    g.throughput(Throughput::Elements(positions.len() as u64));
    for (name, def) in &grids {
        let grid = build_grid(&registry, def, &shape).expect("a valid grid");
        g.bench_function(*name, |b| {
            b.iter(|| {
                positions
                    .iter()
                    .map(|p| grid.chunk_of(black_box(p)).expect("inside").1[0])
                    .sum::<u64>()
            })
        });
    }
    g.finish();
}

fn keys(c: &mut Criterion) {
    // 4096 chunk indices of a 3-d grid, a quarter of them negative (after prepends)
    let indices: Vec<Vec<i64>> = (0..4096i64)
        .map(|i| vec![(i / 256) - 4, (i / 16) % 16, i % 16 * 1_000_003])
        .collect();
    let encodings: [(&str, Box<dyn ChunkKeyEncoding>); 3] = [
        (
            "default_slash",
            Box::new(DefaultChunkKeyEncoding::new(Separator::Slash)),
        ),
        (
            "default_dot",
            Box::new(DefaultChunkKeyEncoding::new(Separator::Dot)),
        ),
        ("v2_dot", Box::new(V2ChunkKeyEncoding::new(Separator::Dot))),
    ];
    let mut enc = c.benchmark_group("key_encode");
    enc.throughput(Throughput::Elements(indices.len() as u64));
    for (name, e) in &encodings {
        enc.bench_function(*name, |b| {
            b.iter(|| {
                indices
                    .iter()
                    .map(|i| e.encode(black_box(i)).len())
                    .sum::<usize>()
            })
        });
    }
    enc.finish();
    let mut dec = c.benchmark_group("key_decode");
    dec.throughput(Throughput::Elements(indices.len() as u64));
    for (name, e) in &encodings {
        let keys: Vec<String> = indices.iter().map(|i| e.encode(i)).collect();
        dec.bench_function(*name, |b| {
            b.iter(|| {
                keys.iter()
                    .map(|k| e.decode(black_box(k), 3).expect("a valid key")[2])
                    .sum::<i64>()
            })
        });
    }
    dec.finish();
}

/// `copy_region`, the block copy every read and write of a chunk goes through: a 64^3
/// uint16 chunk into its place in a 256^3 output (rows of 128 bytes), against a plain
/// triple loop of row copies as the baseline.
fn copy(c: &mut Criterion) {
    let chunk = vec![7u8; 64 * 64 * 64 * 2];
    let mut out = vec![0u8; 256 * 256 * 256 * 2];
    let mut g = c.benchmark_group("geometry_copy_region");
    g.throughput(Throughput::Bytes(chunk.len() as u64));
    g.bench_function("chunk_64^3_into_256^3", |b| {
        b.iter(|| {
            copy_region(
                black_box(&chunk),
                &[64, 64, 64],
                &[0, 0, 0],
                &mut out,
                &[256, 256, 256],
                &[64, 128, 192],
                &[64, 64, 64],
                2,
            )
        })
    });
    g.bench_function("baseline_row_loop", |b| {
        b.iter(|| {
            let src = black_box(&chunk);
            for i in 0..64usize {
                for j in 0..64usize {
                    let s = (i * 64 + j) * 128;
                    let d = (((64 + i) * 256 + 128 + j) * 256 + 192) * 2;
                    out[d..d + 128].copy_from_slice(&src[s..s + 128]);
                }
            }
        })
    });
    g.finish();
}

criterion_group!(benches, chunks_in_region, keys, copy);
criterion_main!(benches);
