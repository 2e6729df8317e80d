//! Resource limits of decoding untrusted chunks: decompression bombs, shard indices that claim
//! huge ranges, and huge chunk shapes fail with errors, and decoding allocates no more than a
//! small multiple of the real input and output sizes.
//!
//! A counting global allocator tracks the bytes live and their peak; every test holds one lock
//! for its whole run, so the counts of one test are not mixed with another's (rayon threads
//! working for the measured call are counted, as they should be).

#![cfg(all(
    feature = "zstd",
    feature = "gzip",
    feature = "blosc",
    feature = "crc32c",
    feature = "sharding"
))]

use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};

use zarr_codecs::EncodeOptions;
use zarr_codecs::{
    default_registry, ByteRange, ByteRangeSource, ChunkRepr, CodecChain, CodecError, SourceError,
};
use zarr_grid::geometry::Region;
use zarr_meta::{DataType, FillValue};
use zarr_testkit::{child, CountingAlloc};

/// Single requests above 8 GiB fail (as on a machine without that much memory), so that a
/// regression aborts quickly instead of paging.
#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc::refusing_above(8 << 30);

/// What decoding may allocate: a small multiple of the stored and decoded sizes, plus a fixed
/// allowance for codec state (zstd's context, error values, rayon bookkeeping).
fn allowance(input: usize, output: usize) -> usize {
    4 * (input + output) + (512 << 10)
}

fn chain(t: DataType, shape: Vec<u64>, json: &str) -> CodecChain {
    let repr = ChunkRepr::new(shape, t, FillValue::zero(t));
    CodecChain::from_json(json, &repr, &default_registry()).expect("a valid chain")
}

/// Decodes `stored` with `decode` and `decode_into`, expecting errors within the allowance.
#[track_caller]
fn assert_refused_within_bounds(chain: &CodecChain, stored: &[u8], what: &str) {
    // warm up per-thread codec contexts, which are allocated once
    let _ = chain.decode(&[0u8; 16]);
    let _ = chain.decode_into(&[0u8; 16], &mut vec![0u8; chain.decoded_len()]);
    let limit = allowance(stored.len(), chain.decoded_len());
    let (result, peak) = ALLOC.peak_of(|| chain.decode(stored).map(|b| b.len()));
    assert!(
        result.is_err(),
        "{what}: decode should fail, got {result:?}"
    );
    assert!(
        peak <= limit,
        "{what}: decode allocated {peak} bytes (input {}, output {}, limit {limit})",
        stored.len(),
        chain.decoded_len()
    );
    let mut out = vec![0u8; chain.decoded_len()];
    let (result, peak) = ALLOC.peak_of(|| chain.decode_into(stored, &mut out));
    assert!(result.is_err(), "{what}: decode_into should fail");
    assert!(
        peak <= limit,
        "{what}: decode_into allocated {peak} bytes (limit {limit})"
    );
}

/// 64 MiB of zeros, the payload of every bomb.
const BOMB: usize = 64 << 20;

fn zstd_bomb(with_size: bool) -> Vec<u8> {
    let mut out = Vec::new();
    let mut encoder = zstd::stream::Encoder::new(&mut out, 3).expect("an encoder");
    if with_size {
        encoder
            .set_pledged_src_size(Some(BOMB as u64))
            .expect("a pledged size");
        encoder.include_contentsize(true).expect("content size");
    } else {
        encoder.include_contentsize(false).expect("no content size");
    }
    let block = vec![0u8; 1 << 20];
    for _ in 0..BOMB / block.len() {
        encoder.write_all(&block).expect("compresses");
    }
    encoder.finish().expect("finishes");
    out
}

const BYTES_ZSTD: &str =
    r#"[{"name":"bytes"},{"name":"zstd","configuration":{"level":0,"checksum":false}}]"#;

#[test]
fn zstd_bombs_are_refused_within_bounds() {
    let _serial = ALLOC.serial();
    let c = chain(DataType::UInt8, vec![4096], BYTES_ZSTD);
    for with_size in [true, false] {
        let bomb = zstd_bomb(with_size);
        assert!(bomb.len() < BOMB / 100);
        assert_refused_within_bounds(&c, &bomb, &format!("zstd bomb (content size {with_size})"));
    }
    // many small valid frames whose total exceeds the chunk
    let frame = zstd::bulk::compress(&[1u8; 4000], 1).expect("compresses");
    let frames: Vec<u8> = std::iter::repeat_n(frame, 20_000).flatten().collect();
    assert_refused_within_bounds(&c, &frames, "20000 zstd frames");
    // zstd nested in zstd: the outer layer is bounded by the inner layer's bound
    let c2 = chain(
        DataType::UInt8,
        vec![4096],
        r#"[{"name":"bytes"},{"name":"zstd","configuration":{"level":0,"checksum":false}},{"name":"zstd","configuration":{"level":0,"checksum":false}}]"#,
    );
    let inner = zstd_bomb(false);
    let outer = zstd::bulk::compress(&inner, 1).expect("compresses");
    assert_refused_within_bounds(&c2, &outer, "zstd bomb inside zstd");
}

#[test]
fn gzip_bombs_are_refused_within_bounds() {
    let _serial = ALLOC.serial();
    let c = chain(
        DataType::UInt8,
        vec![4096],
        r#"[{"name":"bytes"},{"name":"gzip","configuration":{"level":1}}]"#,
    );
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let block = vec![0u8; 1 << 20];
    for _ in 0..BOMB / block.len() {
        gz.write_all(&block).expect("compresses");
    }
    let bomb = gz.finish().expect("finishes");
    assert!(bomb.len() < BOMB / 100);
    assert_refused_within_bounds(&c, &bomb, "gzip bomb");
    // a zlib stream (accepted for writers that used zlib framing)
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    for _ in 0..BOMB / block.len() {
        z.write_all(&block).expect("compresses");
    }
    let bomb = z.finish().expect("finishes");
    assert_refused_within_bounds(&c, &bomb, "zlib bomb");
    // thousands of gzip members, each small
    let mut member = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    member.write_all(&[7u8; 4000]).expect("compresses");
    let member = member.finish().expect("finishes");
    let members: Vec<u8> = std::iter::repeat_n(member, 20_000).flatten().collect();
    assert_refused_within_bounds(&c, &members, "20000 gzip members");
}

#[test]
fn blosc_headers_claiming_huge_sizes_are_refused_within_bounds() {
    let _serial = ALLOC.serial();
    let c = chain(
        DataType::UInt8,
        vec![4096],
        r#"[{"name":"bytes"},{"name":"blosc","configuration":{"cname":"lz4","clevel":5,"shuffle":"noshuffle","typesize":1,"blocksize":0}}]"#,
    );
    let good = c
        .encode(&[3u8; 4096], EncodeOptions::ENCODE_EMPTY)
        .expect("encodes")
        .expect("encodes");
    for nbytes in [u32::MAX, 1 << 31, 1 << 20, 4097] {
        let mut bad = good.clone();
        bad[4..8].copy_from_slice(&nbytes.to_le_bytes());
        assert_refused_within_bounds(&c, &bad, &format!("blosc claiming {nbytes} bytes"));
    }
    // a header claiming a compressed size beyond the buffer
    let mut bad = good.clone();
    bad[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
    assert_refused_within_bounds(&c, &bad, "blosc claiming a huge compressed size");
}

/// A source that claims to be huge and refuses (and records) any request for more than 1 MiB
/// in total, so that a codec asking for what a forged index claims is caught, not served.
struct HugeSource {
    stored: Vec<u8>,
    refused: AtomicUsize,
}

#[derive(Debug, thiserror::Error)]
#[error("asked for {0} bytes")]
struct TooMuch(u64);

impl ByteRangeSource for HugeSource {
    fn get_ranges(&self, ranges: &[ByteRange]) -> Result<Option<Vec<Vec<u8>>>, SourceError> {
        let size = 1u64 << 50;
        let mut total = 0u64;
        for r in ranges {
            let Some(span) = r.resolve(size) else {
                return Err(SourceError::new(TooMuch(u64::MAX)));
            };
            total = total.saturating_add(span.end - span.start);
        }
        if total > 1 << 20 {
            self.refused.fetch_add(1, Ordering::SeqCst);
            return Err(SourceError::new(TooMuch(total)));
        }
        // serve the real bytes where there are some, zeros past them
        Ok(Some(
            ranges
                .iter()
                .map(|r| {
                    let span = r.resolve(size).unwrap_or(0..0);
                    (span.start..span.end)
                        .map(|i| {
                            // the index lies at the end of the claimed size
                            let from_end = size - i;
                            let n = self.stored.len() as u64;
                            if from_end <= n {
                                self.stored[(n - from_end) as usize]
                            } else {
                                0
                            }
                        })
                        .collect()
                })
                .collect(),
        ))
    }

    fn size(&self) -> Result<Option<u64>, SourceError> {
        Ok(Some(1 << 50))
    }
}

/// `[bytes]` inner chunks of 2 bytes, index (no checksum) at the end.
const SHARD_END: &str = r#"[{"name":"sharding_indexed","configuration":{"chunk_shape":[2],"codecs":[{"name":"bytes"}],"index_codecs":[{"name":"bytes","configuration":{"endian":"little"}}],"index_location":"end"}}]"#;

fn index_of(entries: &[(u64, u64)]) -> Vec<u8> {
    entries
        .iter()
        .flat_map(|&(o, n)| o.to_le_bytes().into_iter().chain(n.to_le_bytes()))
        .collect()
}

#[test]
fn shard_indices_claiming_huge_ranges_are_refused_within_bounds() {
    let _serial = ALLOC.serial();
    let c = chain(DataType::UInt8, vec![8], SHARD_END);
    let m = u64::MAX;
    let forged: Vec<(&str, Vec<(u64, u64)>)> = vec![
        ("huge nbytes", vec![(0, 1 << 40), (m, m), (m, m), (m, m)]),
        ("huge offset", vec![(1 << 62, 2), (m, m), (m, m), (m, m)]),
        (
            "offset + nbytes overflows",
            vec![(m - 1, 2), (m, m), (m, m), (m, m)],
        ),
        ("one missing half", vec![(0, m), (m, m), (m, m), (m, m)]),
        (
            "everything far apart",
            vec![(0, 2), (1 << 30, 2), (1 << 40, 2), (1 << 49, 2)],
        ),
    ];
    for (what, entries) in forged {
        let stored = index_of(&entries);
        // the whole shard: every entry must lie inside the 64 stored bytes
        assert_refused_within_bounds(&c, &stored, what);
        // parts of a shard through a source claiming 2^50 bytes (reading the whole shard
        // reads the whole stored value, which is real input)
        let source = HugeSource {
            stored: stored.clone(),
            refused: AtomicUsize::new(0),
        };
        let first = Region::new(vec![0], vec![2]).expect("a region");
        let part = Region::new(vec![1], vec![6]).expect("a region");
        for r in [first, part] {
            let mut out = vec![0u8; r.shape[0] as usize];
            let (result, peak) =
                ALLOC.peak_of(|| c.partial_decoder().region(&source, &r, &mut out));
            assert!(
                peak <= allowance(64, 8),
                "{what}: decode_region allocated {peak} bytes ({result:?})"
            );
        }
        assert_eq!(
            source.refused.load(Ordering::SeqCst),
            0,
            "{what}: the codec asked the source for more than 1 MiB"
        );
    }
}

#[test]
fn zstd_bombs_inside_shards_are_refused_within_bounds() {
    let _serial = ALLOC.serial();
    let c = chain(
        DataType::Int32,
        vec![4, 4],
        r#"[{"name":"sharding_indexed","configuration":{"chunk_shape":[2,2],"codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd","configuration":{"level":0,"checksum":false}}],"index_codecs":[{"name":"bytes","configuration":{"endian":"little"}}],"index_location":"end"}}]"#,
    );
    let bomb = zstd_bomb(false);
    let n = bomb.len() as u64;
    let m = u64::MAX;
    let mut stored = bomb.clone();
    stored.extend(index_of(&[(0, n), (m, m), (m, m), (m, m)]));
    assert_refused_within_bounds(&c, &stored, "a zstd bomb as an inner chunk");
    let part = Region::new(vec![0, 0], vec![1, 1]).expect("a region");
    let mut out = vec![0u8; 4];
    let (result, peak) = ALLOC.peak_of(|| c.partial_decoder().region(&stored, &part, &mut out));
    assert!(result.is_err(), "a bomb inner chunk read in part");
    assert!(
        peak <= allowance(stored.len(), 64),
        "allocated {peak} bytes"
    );
}

#[test]
fn huge_chunk_shapes_are_refused_when_the_chain_is_built() {
    let _serial = ALLOC.serial();
    let registry = default_registry();
    for shape in [
        vec![1u64 << 40, 1 << 40],
        vec![u64::MAX],
        vec![1 << 62, 4],
        vec![1 << 21, 1 << 21, 1 << 21],
    ] {
        let repr = ChunkRepr::new(
            shape.clone(),
            DataType::Float64,
            FillValue::zero(DataType::Float64),
        );
        let (result, peak) = ALLOC.peak_of(|| {
            CodecChain::from_json(
                r#"[{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd","configuration":{"level":0,"checksum":false}}]"#,
                &repr,
                &registry,
            )
            .map(|c| c.decoded_len())
        });
        assert!(
            matches!(result, Err(CodecError::ChunkTooLarge { .. })),
            "chunk shape {shape:?}: {result:?}"
        );
        assert!(
            peak < 64 << 10,
            "chunk shape {shape:?}: allocated {peak} bytes"
        );
    }
}

/// A chain for chunks that fit in the address space but not in memory (2^50 bytes) builds
/// without allocating; decoding a few stored bytes for it must fail on the stored size before
/// allocating the chunk.
///
/// Runs in a child process: today the decoders allocate the whole decoded chunk first, and a
/// failed allocation aborts the process rather than returning an error.
#[test]
fn small_inputs_for_huge_chunks_fail_without_allocating_the_chunk() {
    child_case("huge_chunk_decode");
}

/// Building a sharding codec must not allocate per inner chunk: a shard of 2^40 one-byte inner
/// chunks (a 16 TiB index) is legal metadata and must build (or be refused) cheaply.
#[test]
fn sharding_codecs_build_without_allocating_per_inner_chunk() {
    child_case("huge_shard_build");
}

/// Runs one of the cases of `child_cases` in a child process (this test binary, filtered to
/// `child_cases`), and fails with its output if it does not exit cleanly.
fn child_case(case: &str) {
    child::run_to_completion("child_cases", case);
}

/// The cases `child_case` runs, each in a child process of its own.
#[test]
#[ignore = "the child process of the tests above (zarr_testkit::child), run by them"]
fn child_cases() {
    let case = child::role();
    let _serial = ALLOC.serial();
    match case.as_str() {
        "huge_chunk_decode" => {
            let shapes = vec![1u64 << 25, 1 << 25];
            for json in [
                r#"[{"name":"bytes"}]"#,
                r#"[{"name":"bytes"},{"name":"crc32c"}]"#,
                r#"[{"name":"bytes"},{"name":"zstd","configuration":{"level":0,"checksum":false}}]"#,
                r#"[{"name":"bytes"},{"name":"gzip","configuration":{"level":1}}]"#,
                r#"[{"name":"transpose","configuration":{"order":[1,0]}},{"name":"bytes"}]"#,
            ] {
                let c = chain(DataType::UInt8, shapes.clone(), json);
                let stored = [0u8; 64];
                let (result, peak) = ALLOC.peak_of(|| c.decode(&stored).map(|b| b.len()));
                assert!(result.is_err(), "{json}: {result:?}");
                assert!(peak <= allowance(64, 0), "{json}: allocated {peak} bytes");
                let region = Region::new(vec![0, 0], vec![1, 1]).expect("a region");
                let mut out = [0u8; 1];
                let (result, peak) =
                    ALLOC.peak_of(|| c.partial_decoder().region(&&stored[..], &region, &mut out));
                assert!(result.is_err(), "{json}: {result:?}");
                assert!(
                    peak <= allowance(64, 1),
                    "{json}: region allocated {peak} bytes"
                );
            }
        }
        "huge_shard_build" => {
            let json = r#"[{"name":"sharding_indexed","configuration":{"chunk_shape":[1,1],"codecs":[{"name":"bytes"}],"index_codecs":[{"name":"bytes","configuration":{"endian":"little"}}],"index_location":"end"}}]"#;
            // a moderate one: 2^22 inner chunks must not cost 100+ MiB and seconds
            let repr = ChunkRepr::new(
                vec![2048, 2048],
                DataType::UInt8,
                FillValue::zero(DataType::UInt8),
            );
            let start = std::time::Instant::now();
            let (result, peak) = ALLOC
                .peak_of(|| CodecChain::from_json(json, &repr, &default_registry()).map(|_| ()));
            println!(
                "2048x2048 shard of 1x1 chunks: {result:?}, {peak} bytes, {:?}",
                start.elapsed()
            );
            assert!(
                peak < 1 << 20,
                "building a 2048x2048 shard of 1x1 chunks allocated {peak} bytes"
            );
            // 2^40 inner chunks: legal metadata (the index is 16 TiB), must not abort
            let repr = ChunkRepr::new(
                vec![1 << 20, 1 << 20],
                DataType::UInt8,
                FillValue::zero(DataType::UInt8),
            );
            let (result, peak) = ALLOC
                .peak_of(|| CodecChain::from_json(json, &repr, &default_registry()).map(|_| ()));
            println!("2^20 x 2^20 shard of 1x1 chunks: {result:?}, {peak} bytes");
            assert!(peak < 1 << 20, "building allocated {peak} bytes");
        }
        other => panic!("unknown case {other}"),
    }
    child::done(&case);
}
