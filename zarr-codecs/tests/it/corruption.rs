//! Defensive decoding: corrupt, truncated, extended and oversized chunks give errors, never
//! panics, and decoders never expand data past the chain's bound.

#![cfg(all(
    feature = "gzip",
    feature = "zstd",
    feature = "blosc",
    feature = "crc32c",
    feature = "sharding"
))]

use std::io::Write;

use proptest::prelude::*;
use zarr_codecs::EncodeOptions;
use zarr_codecs::{default_registry, ChunkRepr, CodecChain, CodecError};
use zarr_grid::geometry::Region;
use zarr_meta::{DataType, FillValue};

const LE: &str = r#"{"name": "bytes", "configuration": {"endian": "little"}}"#;
const INDEX: &str =
    r#"[{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]"#;

/// (name, codecs, whether truncating or extending the stored chunk must be an error)
fn chains() -> Vec<(&'static str, String, bool, bool)> {
    let shard = |inner: &str, location: &str| {
        format!(
            r#"[{{"name": "sharding_indexed", "configuration": {{"chunk_shape": [4, 3],
                "codecs": {inner}, "index_codecs": {INDEX}, "index_location": "{location}"}}}}]"#
        )
    };
    vec![
        ("bytes", format!("[{LE}]"), true, true),
        (
            "transpose",
            format!(r#"[{{"name": "transpose", "configuration": {{"order": [1, 0]}}}}, {LE}]"#),
            true,
            true,
        ),
        (
            "gzip",
            format!(r#"[{LE}, {{"name": "gzip", "configuration": {{"level": 5}}}}]"#),
            true,
            true,
        ),
        (
            "zstd",
            format!(
                r#"[{LE}, {{"name": "zstd", "configuration": {{"level": 3, "checksum": true}}}}]"#
            ),
            true,
            true,
        ),
        (
            "blosc",
            format!(
                r#"[{LE}, {{"name": "blosc", "configuration": {{"cname": "lz4", "clevel": 5, "shuffle": "shuffle"}}}}]"#
            ),
            true,
            true,
        ),
        (
            "crc32c",
            format!(r#"[{LE}, {{"name": "crc32c"}}]"#),
            true,
            true,
        ),
        (
            "zstd_crc32c",
            format!(
                r#"[{LE}, {{"name": "zstd", "configuration": {{"level": 1, "checksum": false}}}}, {{"name": "crc32c"}}]"#
            ),
            true,
            true,
        ),
        ("shard_end", shard(&format!("[{LE}]"), "end"), true, true),
        // unused bytes after the last inner chunk are allowed in a shard
        (
            "shard_start",
            shard(&format!("[{LE}]"), "start"),
            true,
            false,
        ),
        (
            "shard_zstd",
            shard(
                &format!(
                    r#"[{LE}, {{"name": "zstd", "configuration": {{"level": 1, "checksum": false}}}}]"#
                ),
                "end",
            ),
            true,
            true,
        ),
        (
            "shard_blosc_gzip",
            shard(
                &format!(
                    r#"[{LE}, {{"name": "blosc", "configuration": {{"cname": "zstd", "clevel": 1, "shuffle": "bitshuffle"}}}}, {{"name": "gzip", "configuration": {{"level": 1}}}}]"#
                ),
                "start",
            ),
            true,
            false,
        ),
        (
            "shard_nested",
            shard(
                &shard(&format!("[{LE}]"), "end").replace("[4, 3]", "[2, 1]"),
                "end",
            ),
            true,
            true,
        ),
    ]
}

fn repr() -> ChunkRepr {
    ChunkRepr::new(
        vec![8, 6],
        DataType::Int32,
        FillValue::zero(DataType::Int32),
    )
}

fn chunk() -> Vec<u8> {
    (0..48i32)
        .flat_map(|v| (v * v - 100).to_ne_bytes())
        .collect()
}

/// Decodes through every path; an `Ok` must have the chunk's length.
fn decode_all_ways(chain: &CodecChain, stored: &[u8]) -> Result<(), CodecError> {
    let decoded = chain.decode(stored)?;
    assert_eq!(decoded.len(), chain.decoded_len());
    let mut out = vec![0u8; chain.decoded_len()];
    chain.decode_into(stored, &mut out)?;
    let region = Region::new(vec![3, 1], vec![4, 4]).unwrap();
    let mut part = vec![0u8; 64];
    chain
        .partial_decoder()
        .region(&stored, &region, &mut part)?;
    Ok(())
}

#[test]
fn truncated_and_extended_chunks_are_errors() {
    for (name, json, truncation, extension) in chains() {
        let chain = CodecChain::from_json(&json, &repr(), &default_registry()).unwrap();
        let stored = chain
            .encode(chunk(), EncodeOptions::ENCODE_EMPTY)
            .unwrap()
            .unwrap();
        decode_all_ways(&chain, &stored).unwrap();
        if truncation {
            for n in 0..stored.len() {
                assert!(
                    decode_all_ways(&chain, &stored[..n]).is_err(),
                    "{name}: truncated to {n}"
                );
            }
        }
        if extension {
            for extra in [&b"\0"[..], b"garbage!", &[0x1f, 0x8b, 8, 0]] {
                let longer = [&stored[..], extra].concat();
                assert!(
                    decode_all_ways(&chain, &longer).is_err(),
                    "{name}: extended by {extra:?}"
                );
            }
        }
    }
}

#[test]
fn checksums_catch_every_flipped_bit() {
    for (name, json, _, _) in chains() {
        if name != "crc32c" && name != "zstd_crc32c" {
            continue;
        }
        let chain = CodecChain::from_json(&json, &repr(), &default_registry()).unwrap();
        let stored = chain
            .encode(chunk(), EncodeOptions::ENCODE_EMPTY)
            .unwrap()
            .unwrap();
        for bit in 0..stored.len() * 8 {
            let mut bad = stored.clone();
            bad[bit / 8] ^= 1 << (bit % 8);
            assert!(
                matches!(chain.decode(&bad), Err(CodecError::ChecksumMismatch { .. })),
                "{name}: bit {bit}"
            );
        }
    }
}

fn zstd_bytes(data: &[u8], content_size: bool) -> Vec<u8> {
    let mut out = Vec::new();
    let mut w = zstd::stream::write::Encoder::new(&mut out, 1).unwrap();
    w.include_contentsize(content_size).unwrap();
    if content_size {
        w.set_pledged_src_size(Some(data.len() as u64)).unwrap();
    }
    w.write_all(data).unwrap();
    w.finish().unwrap();
    out
}

#[test]
fn decompression_bombs_stop_at_the_bound() {
    let repr = ChunkRepr::new(vec![100], DataType::UInt8, FillValue::zero(DataType::UInt8));
    let reg = default_registry();
    let big = vec![0u8; 50 << 20];

    let zstd = CodecChain::from_json(
        r#"[{"name": "bytes"}, {"name": "zstd", "configuration": {"level": 1, "checksum": false}}]"#,
        &repr,
        &reg,
    )
    .unwrap();
    assert_eq!(
        zstd.encoded_size_bound(),
        zstd::zstd_safe::compress_bound(100) as u64 + 32
    );
    for content_size in [true, false] {
        let bomb = zstd_bytes(&big, content_size);
        assert!(bomb.len() < 10_000);
        let err = zstd.decode(&bomb).unwrap_err();
        assert!(
            matches!(err, CodecError::ExceedsBound { limit: 100, .. }),
            "{err}"
        );
        let mut out = [0u8; 100];
        assert!(zstd.decode_into(&bomb, &mut out).is_err());
    }

    let gzip = CodecChain::from_json(
        r#"[{"name": "bytes"}, {"name": "gzip", "configuration": {"level": 1}}]"#,
        &repr,
        &reg,
    )
    .unwrap();
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(1));
    enc.write_all(&big).unwrap();
    let bomb = enc.finish().unwrap();
    let err = gzip.decode(&bomb).unwrap_err();
    assert!(
        matches!(err, CodecError::ExceedsBound { limit: 100, .. }),
        "{err}"
    );

    // compressed inside a shard, and a whole shard compressed again
    let sharded = ChunkRepr::new(
        vec![4, 4],
        DataType::UInt8,
        FillValue::zero(DataType::UInt8),
    );
    let chain = CodecChain::from_json(
        r#"[{"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 2],
            "codecs": [{"name": "bytes"}, {"name": "zstd", "configuration": {"level": 1, "checksum": false}}]}},
            {"name": "zstd", "configuration": {"level": 1, "checksum": false}}]"#,
        &sharded,
        &reg,
    )
    .unwrap();
    let outer = zstd_bytes(&big, false);
    assert!(matches!(
        chain.decode(&outer),
        Err(CodecError::ExceedsBound { .. })
    ));
}

#[test]
fn bounds_hold_for_incompressible_data() {
    let reg = default_registry();
    // random noise: no compressor can shrink it
    let noise = zarr_testkit::Rng::new(1).bytes(200_003);
    for codecs in [
        r#"{"name": "gzip", "configuration": {"level": 0}}"#,
        r#"{"name": "gzip", "configuration": {"level": 9}}"#,
        r#"{"name": "zstd", "configuration": {"level": -7, "checksum": true}}"#,
        r#"{"name": "zstd", "configuration": {"level": 19, "checksum": false}}"#,
        r#"{"name": "blosc", "configuration": {"cname": "zlib", "clevel": 9, "shuffle": "bitshuffle"}}"#,
        r#"{"name": "blosc", "configuration": {"cname": "lz4hc", "clevel": 1, "shuffle": "noshuffle"}}"#,
    ] {
        for n in [0usize, 1, 17, 4096, 200_003] {
            let repr = ChunkRepr::new(
                vec![n as u64],
                DataType::UInt8,
                FillValue::zero(DataType::UInt8),
            );
            let json = format!(r#"[{{"name": "bytes"}}, {codecs}]"#);
            let chain = CodecChain::from_json(&json, &repr, &reg).unwrap();
            let stored = chain
                .encode(&noise[..n], EncodeOptions::ENCODE_EMPTY)
                .unwrap()
                .unwrap();
            assert!(
                stored.len() as u64 <= chain.encoded_size_bound(),
                "{codecs} n={n}"
            );
            assert_eq!(chain.decode(&stored).unwrap().as_bytes(), &noise[..n]);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn random_mutations_never_panic(
        which in 0usize..12,
        edits in prop::collection::vec((any::<u16>(), any::<u8>(), 0u8..4), 1..6),
    ) {
        let (_, json, _, _) = chains().swap_remove(which);
        let chain = CodecChain::from_json(&json, &repr(), &default_registry()).unwrap();
        let mut stored = chain.encode(chunk(), EncodeOptions::ENCODE_EMPTY).unwrap().unwrap();
        for (pos, byte, kind) in edits {
            let at = usize::from(pos) % (stored.len() + 1);
            match kind {
                0 if at < stored.len() => stored[at] ^= byte.max(1),
                1 => stored.insert(at, byte),
                2 if at < stored.len() => { stored.remove(at); }
                _ => stored.truncate(at),
            }
        }
        // an error or a chunk of the right size, never a panic
        let _ = decode_all_ways(&chain, &stored);
    }
}
