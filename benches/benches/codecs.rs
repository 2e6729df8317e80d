//! Codec throughput: every codec of zarr-codecs encoding and decoding one 64^3 uint16 chunk
//! (512 KiB) of compare.py's data, a 128^3 shard of 32^3 inner chunks, and partial reads of
//! that shard (one inner chunk, one plane). Throughput is the decoded size.
//!
//! `cargo bench -p zarr-benches --bench codecs`
#![forbid(unsafe_code)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use zarr_array::zarr_codecs::{default_registry, ChunkRepr, CodecChain, EncodeOptions};
use zarr_array::zarr_grid::geometry::Region;
use zarr_array::{DataType, FillValue};
use zarr_benches::block_data;

const BYTES_LE: &str = r#"{"name": "bytes", "configuration": {"endian": "little"}}"#;
const ZSTD1: &str = r#"{"name": "zstd", "configuration": {"level": 1, "checksum": false}}"#;

fn chain(codecs: &str, shape: &[u64]) -> CodecChain {
    let repr = ChunkRepr::new(
        shape.to_vec(),
        DataType::UInt16,
        FillValue::zero(DataType::UInt16),
    );
    CodecChain::from_json(codecs, &repr, &default_registry()).expect("a valid chain")
}

fn chains() -> Vec<(&'static str, String)> {
    vec![
        ("bytes_le", format!("[{BYTES_LE}]")),
        (
            "bytes_be",
            r#"[{"name": "bytes", "configuration": {"endian": "big"}}]"#.to_string(),
        ),
        (
            "transpose",
            format!(
                r#"[{{"name": "transpose", "configuration": {{"order": [2, 1, 0]}}}}, {BYTES_LE}]"#
            ),
        ),
        (
            "gzip5",
            format!(r#"[{BYTES_LE}, {{"name": "gzip", "configuration": {{"level": 5}}}}]"#),
        ),
        ("zstd1", format!("[{BYTES_LE}, {ZSTD1}]")),
        (
            "blosc_lz4",
            format!(
                r#"[{BYTES_LE}, {{"name": "blosc", "configuration": {{"cname": "lz4", "clevel": 5,
                "shuffle": "shuffle", "typesize": 2, "blocksize": 0}}}}]"#
            ),
        ),
        ("crc32c", format!(r#"[{BYTES_LE}, {{"name": "crc32c"}}]"#)),
    ]
}

fn sharding_json() -> String {
    format!(
        r#"[{{"name": "sharding_indexed", "configuration": {{
            "chunk_shape": [32, 32, 32],
            "codecs": [{BYTES_LE}, {ZSTD1}],
            "index_codecs": [{BYTES_LE}, {{"name": "crc32c"}}],
            "index_location": "end"}}}}]"#
    )
}

fn bytes_of(values: &[u16]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_ne_bytes()).collect()
}

fn codecs(c: &mut Criterion) {
    let shape = [64u64; 3];
    let chunk = bytes_of(&block_data([64, 128, 192], shape));
    let mut enc = c.benchmark_group("codec_encode");
    enc.throughput(Throughput::Bytes(chunk.len() as u64));
    let mut dec_inputs = Vec::new();
    for (name, json) in chains() {
        let chain = chain(&json, &shape);
        let encoded = chain
            .encode(&chunk, EncodeOptions::ENCODE_EMPTY)
            .expect("encodes")
            .expect("encoded");
        eprintln!(
            "{name}: 64^3 uint16 chunk {} -> {} bytes",
            chunk.len(),
            encoded.len()
        );
        enc.bench_function(BenchmarkId::from_parameter(name), |b| {
            b.iter(|| {
                chain
                    .encode(black_box(&chunk), EncodeOptions::ENCODE_EMPTY)
                    .expect("encodes")
            })
        });
        dec_inputs.push((name, chain, encoded));
    }
    enc.finish();

    let mut dec = c.benchmark_group("codec_decode");
    dec.throughput(Throughput::Bytes(chunk.len() as u64));
    for (name, chain, encoded) in &dec_inputs {
        let mut out = vec![0u8; chain.decoded_len()];
        dec.bench_function(BenchmarkId::from_parameter(name), |b| {
            b.iter(|| {
                chain
                    .decode_into(black_box(encoded), &mut out)
                    .expect("decodes")
            })
        });
    }
    dec.finish();
}

fn sharding(c: &mut Criterion) {
    let shape = [128u64; 3];
    let shard = bytes_of(&block_data([0, 128, 256], shape));
    let chain = chain(&sharding_json(), &shape);
    let stored = chain
        .encode(&shard, EncodeOptions::ENCODE_EMPTY)
        .expect("encodes")
        .expect("encoded");
    eprintln!(
        "sharding 128^3 of 32^3 (zstd 1): {} -> {} bytes",
        shard.len(),
        stored.len()
    );
    let mut g = c.benchmark_group("sharding");
    g.sample_size(20);
    g.throughput(Throughput::Bytes(shard.len() as u64));
    g.bench_function("encode_128^3", |b| {
        b.iter(|| {
            chain
                .encode(black_box(&shard), EncodeOptions::ENCODE_EMPTY)
                .expect("encodes")
        })
    });
    let mut out = vec![0u8; shard.len()];
    g.bench_function("decode_128^3", |b| {
        b.iter(|| {
            chain
                .decode_into(black_box(&stored), &mut out)
                .expect("decodes")
        })
    });
    // partial reads through the byte-range source of an in-memory shard
    let partial = [
        (
            "inner_chunk_32^3",
            Region::new(vec![32, 64, 96], vec![32; 3]),
        ),
        (
            "plane_1x128x128",
            Region::new(vec![70, 0, 0], vec![1, 128, 128]),
        ),
        ("unaligned_40^3", Region::new(vec![20, 20, 20], vec![40; 3])),
    ];
    for (name, region) in partial {
        let region = region.expect("a valid region");
        let len = region.num_elements().expect("small") as usize * 2;
        let mut out = vec![0u8; len];
        g.throughput(Throughput::Bytes(len as u64));
        g.bench_function(BenchmarkId::new("decode_region", name), |b| {
            b.iter(|| {
                chain
                    .partial_decoder()
                    .region(&stored, black_box(&region), &mut out)
                    .expect("decodes")
            })
        });
    }
    g.finish();
}

criterion_group!(benches, codecs, sharding);
criterion_main!(benches);
