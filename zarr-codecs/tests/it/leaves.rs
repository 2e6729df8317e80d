//! The leaf chunk API of `CodecChain`: visiting the stored leaves of a stored value and
//! rewriting some of them, over nested sharding with bytes -> bytes codecs at every level.

#![cfg(all(
    feature = "sharding",
    feature = "gzip",
    feature = "zstd",
    feature = "crc32c"
))]

use std::collections::BTreeMap;

use serde_json::json;
use zarr_codecs::{default_registry, ChunkRepr, CodecChain, CodecError};
use zarr_codecs::{AlignedBuffer, ChunkIn, ChunkOut, EncodeOptions};
use zarr_grid::geometry::{copy_region, Region};
use zarr_meta::{DataType, FillValue};

type Result<T> = std::result::Result<T, CodecError>;

fn repr(shape: Vec<u64>) -> ChunkRepr {
    ChunkRepr::new(shape, DataType::UInt16, FillValue::zero(DataType::UInt16))
}

fn chain(codecs: serde_json::Value, shape: Vec<u64>) -> CodecChain {
    CodecChain::from_json(&codecs.to_string(), &repr(shape), &default_registry()).unwrap()
}

/// 8 x 8 chunks as 2 x 2 shards of 4 x 4, each 2 x 2 inner shards of 2 x 2 leaves
/// (`[bytes, gzip]`); `crc32c` after the inner shards, `zstd` after the outer ones.
fn nested() -> CodecChain {
    chain(
        json!([
            {"name": "sharding_indexed", "configuration": {
                "chunk_shape": [4, 4],
                "codecs": [
                    {"name": "sharding_indexed", "configuration": {
                        "chunk_shape": [2, 2],
                        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                   {"name": "gzip", "configuration": {"level": 1}}],
                        "index_location": "start"}},
                    {"name": "crc32c"}]}},
            {"name": "zstd", "configuration": {"level": 1, "checksum": false}}
        ]),
        vec![8, 8],
    )
}

/// An 8 x 8 chunk of u16 with every leaf (2 x 2 block) holding data except `empty` ones.
fn data(empty: &[[u64; 2]]) -> Vec<u8> {
    let mut values = [0u16; 64];
    for y in 0..8u64 {
        for x in 0..8u64 {
            if !empty.contains(&[y / 2, x / 2]) {
                values[(y * 8 + x) as usize] = (y * 8 + x + 1) as u16;
            }
        }
    }
    values.iter().flat_map(|v| v.to_ne_bytes()).collect()
}

/// The 2 x 2 block of leaf `idx` of an 8 x 8 chunk.
fn leaf_data(chunk: &[u8], idx: &[u64]) -> Vec<u8> {
    let mut out = vec![0u8; 8];
    copy_region(
        chunk,
        &[8, 8],
        &[idx[0] * 2, idx[1] * 2],
        &mut out,
        &[2, 2],
        &[0, 0],
        &[2, 2],
        2,
    );
    out
}

/// Every stored leaf of `stored`: leaf index -> its bytes.
fn leaves(chain: &CodecChain, stored: &[u8]) -> Vec<(Vec<u64>, Vec<u8>)> {
    chain
        .visit_stored_leaves(stored, None, |idx, bytes| {
            Ok::<_, CodecError>((idx.to_vec(), bytes.to_vec()))
        })
        .unwrap()
}

const EMPTY: [[u64; 2]; 3] = [[1, 1], [3, 0], [0, 3]];

#[test]
fn nested_shards_have_a_grid_of_leaves() {
    let c = nested();
    assert!(c.is_sharded());
    assert_eq!(c.leaf_shape(), &[2, 2]);
    assert_eq!(c.leaf_grid_shape(), vec![4, 4]);
    let leaf = c.leaf_chain();
    let names: Vec<String> = leaf.to_defs().into_iter().map(|d| d.name).collect();
    assert_eq!(names, ["bytes", "gzip"]);
    assert!(!leaf.is_sharded());
    assert!(std::ptr::eq(leaf.leaf_chain(), leaf));
}

#[test]
fn visiting_gives_every_stored_leaf_and_its_bytes() {
    let c = nested();
    let chunk = data(&EMPTY);
    let stored = c
        .encode(&chunk, EncodeOptions::SKIP_EMPTY)
        .unwrap()
        .unwrap();
    let got = leaves(&c, &stored);
    // in C order of the outer shards, each one's leaves in C order of its inner shards
    let mut want = Vec::new();
    for (sy, sx) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
        for (iy, ix) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
            let idx = [sy * 2 + iy, sx * 2 + ix];
            if !EMPTY.contains(&idx) {
                want.push(idx.to_vec());
            }
        }
    }
    assert_eq!(got.iter().map(|l| l.0.clone()).collect::<Vec<_>>(), want);
    // each leaf's bytes are as the leaf chain stores them (still gzip-compressed)
    for (idx, bytes) in &got {
        assert_eq!(bytes[..2], [0x1f, 0x8b], "a gzip stream");
        let decoded = c.leaf_chain().decode(bytes).unwrap();
        assert_eq!(decoded.as_bytes(), leaf_data(&chunk, idx), "leaf {idx:?}");
    }
    // only the leaves that meet a region
    let region = Region::new(vec![3, 1], vec![3, 4]).unwrap();
    let met: Vec<Vec<u64>> = c
        .visit_stored_leaves(&stored, Some(&region), |idx, _| {
            Ok::<_, CodecError>(idx.to_vec())
        })
        .unwrap();
    assert_eq!(
        met,
        [[1, 0], [1, 2], [2, 0], [2, 1], [2, 2]].map(|i| i.to_vec())
    );
    let outside = Region::new(vec![6, 6], vec![3, 1]).unwrap();
    assert!(matches!(
        c.visit_stored_leaves(&stored, Some(&outside), |_, _| Ok::<_, CodecError>(())),
        Err(CodecError::RegionOutOfBounds { .. })
    ));
    // the callback's errors come back
    let err = c
        .visit_stored_leaves(&stored, None, |idx, _| -> Result<()> {
            Err(CodecError::LeafOutOfGrid {
                leaf: idx.to_vec(),
                grid: vec![],
            })
        })
        .unwrap_err();
    assert!(matches!(err, CodecError::LeafOutOfGrid { .. }));
}

#[test]
fn rewriting_keeps_the_untouched_leaves_byte_for_byte() {
    let c = nested();
    let leaf = c.leaf_chain();
    let mut chunk = data(&EMPTY);
    let stored = c
        .encode(&chunk, EncodeOptions::SKIP_EMPTY)
        .unwrap()
        .unwrap();
    let before: BTreeMap<Vec<u64>, Vec<u8>> = leaves(&c, &stored).into_iter().collect();
    // leaf (1, 1) is missing and gets 7s; leaf (0, 0) is dropped; (2, 3) is rewritten
    let sevens: Vec<u8> = [7u16; 4].iter().flat_map(|v| v.to_ne_bytes()).collect();
    let nines: Vec<u8> = [9u16; 4].iter().flat_map(|v| v.to_ne_bytes()).collect();
    let asked = vec![vec![2, 3], vec![1, 1], vec![0, 0], vec![1, 1]];
    let new = c
        .rewrite_leaves(Some(&stored), &asked, |idx, old| -> Result<_> {
            match idx {
                [1, 1] => {
                    assert!(old.is_none());
                    leaf.encode(&sevens, EncodeOptions::ENCODE_EMPTY)
                }
                [0, 0] => {
                    assert_eq!(old, Some(&before[&vec![0, 0]][..]));
                    Ok(None)
                }
                [2, 3] => leaf.encode(&nines, EncodeOptions::ENCODE_EMPTY),
                other => panic!("leaf {other:?} was not asked for"),
            }
        })
        .unwrap()
        .unwrap();
    for (idx, value) in [([1u64, 1], 7u16), ([0, 0], 0), ([2, 3], 9)] {
        for (y, x) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
            let at = (((idx[0] * 2 + y) * 8 + idx[1] * 2 + x) * 2) as usize;
            chunk[at..at + 2].copy_from_slice(&value.to_ne_bytes());
        }
    }
    assert_eq!(c.decode(&new).unwrap().as_bytes(), &chunk[..]);
    let after: BTreeMap<Vec<u64>, Vec<u8>> = leaves(&c, &new).into_iter().collect();
    for (idx, bytes) in &before {
        if idx != &[0, 0] && idx != &[2, 3] {
            assert_eq!(&after[idx], bytes, "leaf {idx:?} kept its bytes");
        }
    }
    assert!(!after.contains_key(&vec![0, 0]));
    assert_eq!(after.len(), before.len());
    // shards written by the leaf API are the ones a whole-chunk encode writes
    assert_eq!(
        new,
        c.encode(&chunk, EncodeOptions::SKIP_EMPTY)
            .unwrap()
            .unwrap()
    );
    // no leaf asked: the value as it is
    assert_eq!(
        c.rewrite_leaves(Some(&new), &[], |_, _| -> Result<_> { unreachable!() })
            .unwrap(),
        Some(new.clone())
    );
}

#[test]
fn rewriting_every_leaf_away_leaves_nothing() {
    let c = nested();
    // one leaf holds data: dropping it leaves no inner shard and no shard
    let all: Vec<[u64; 2]> = (0..4)
        .flat_map(|y| (0..4).map(move |x| [y, x]))
        .filter(|i| i != &[2, 1])
        .collect();
    let stored = c
        .encode(data(&all), EncodeOptions::SKIP_EMPTY)
        .unwrap()
        .unwrap();
    assert_eq!(leaves(&c, &stored).len(), 1);
    let gone = c
        .rewrite_leaves(Some(&stored), &[vec![2, 1]], |_, old| -> Result<_> {
            assert!(old.is_some());
            Ok(None)
        })
        .unwrap();
    assert_eq!(gone, None);
    // and every leaf of a full chunk
    let full = c
        .encode(data(&[]), EncodeOptions::SKIP_EMPTY)
        .unwrap()
        .unwrap();
    let every: Vec<Vec<u64>> = leaves(&c, &full).into_iter().map(|l| l.0).collect();
    assert_eq!(every.len(), 16);
    let none = c.rewrite_leaves(Some(&full), &every, |_, _| -> Result<_> { Ok(None) });
    assert_eq!(none.unwrap(), None);
}

#[test]
fn a_missing_shard_is_written_from_its_leaves() {
    let c = nested();
    let leaf = c.leaf_chain();
    let chunk = data(&[]);
    let written = c
        .rewrite_leaves(None, &[vec![2, 3], vec![0, 1]], |idx, old| -> Result<_> {
            assert!(old.is_none());
            leaf.encode(leaf_data(&chunk, idx), EncodeOptions::ENCODE_EMPTY)
        })
        .unwrap()
        .unwrap();
    let got: Vec<Vec<u64>> = leaves(&c, &written).into_iter().map(|l| l.0).collect();
    assert_eq!(got, [vec![0, 1], vec![2, 3]]);
    let all_but: Vec<[u64; 2]> = (0..4)
        .flat_map(|y| (0..4).map(move |x| [y, x]))
        .filter(|i| i != &[2, 3] && i != &[0, 1])
        .collect();
    assert_eq!(c.decode(&written).unwrap().as_bytes(), data(&all_but));
    // nothing written into a missing shard: still nothing
    let nothing = c.rewrite_leaves(None, &[vec![3, 3]], |_, _| -> Result<_> { Ok(None) });
    assert_eq!(nothing.unwrap(), None);
}

#[test]
fn corrupt_shards_and_bad_leaves_are_errors() {
    // one level, an index without checksum at the end: point an entry outside the shard
    let c = chain(
        json!([{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [2, 2],
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}]),
        vec![4, 4],
    );
    let chunk: Vec<u8> = (1..=16u16).flat_map(|v| v.to_ne_bytes()).collect();
    let mut stored = c
        .encode(&chunk, EncodeOptions::SKIP_EMPTY)
        .unwrap()
        .unwrap();
    assert_eq!(leaves(&c, &stored).len(), 4);
    let n = stored.len();
    stored[n - 64..n - 56].copy_from_slice(&1000u64.to_le_bytes());
    let keep = |_: &[u64], b: Option<&[u8]>| -> Result<_> { Ok(b.map(<[u8]>::to_vec)) };
    assert!(matches!(
        c.visit_stored_leaves(&stored, None, |_, _| Ok::<_, CodecError>(())),
        Err(CodecError::InvalidShardIndex { .. })
    ));
    assert!(matches!(
        c.rewrite_leaves(Some(&stored), &[vec![1, 1]], keep),
        Err(CodecError::InvalidShardIndex { .. })
    ));
    // a truncated shard
    assert!(matches!(
        c.visit_stored_leaves(&stored[..10], None, |_, _| Ok::<_, CodecError>(())),
        Err(CodecError::Truncated { .. })
    ));
    // nested: a flipped bit in an inner shard, under its crc32c (and the outer zstd)
    let nested = nested();
    let full = nested
        .encode(data(&[]), EncodeOptions::SKIP_EMPTY)
        .unwrap()
        .unwrap();
    let mut shard = serialized(&nested, &full).unwrap().to_vec();
    shard[0] ^= 1;
    let bad = nested
        .encode(ChunkIn::Serialized(shard), EncodeOptions::SKIP_EMPTY)
        .unwrap()
        .unwrap();
    assert!(matches!(
        nested.visit_stored_leaves(&bad, None, |_, _| Ok::<_, CodecError>(())),
        Err(CodecError::ChecksumMismatch { .. })
    ));
    assert!(matches!(
        nested.rewrite_leaves(Some(&bad), &[vec![0, 0]], keep),
        Err(CodecError::ChecksumMismatch { .. })
    ));
    assert!(nested
        .visit_stored_leaves(
            &full[..full.len() - 3],
            None,
            |_, _| Ok::<_, CodecError>(())
        )
        .is_err());
    // a leaf outside the grid
    assert!(matches!(
        nested.rewrite_leaves(Some(&full), &[vec![4, 0]], keep),
        Err(CodecError::LeafOutOfGrid { .. })
    ));
    assert!(matches!(
        nested.rewrite_leaves(Some(&full), &[vec![0]], keep),
        Err(CodecError::LeafOutOfGrid { .. })
    ));
}

#[test]
fn an_unsharded_chain_is_its_own_single_leaf() {
    let c = chain(
        json!([{"name": "bytes", "configuration": {"endian": "little"}},
               {"name": "zstd", "configuration": {"level": 1, "checksum": false}}]),
        vec![8, 8],
    );
    assert!(!c.is_sharded());
    assert!(std::ptr::eq(c.leaf_chain(), &c));
    assert_eq!(c.leaf_shape(), &[8, 8]);
    assert_eq!(c.leaf_grid_shape(), vec![1, 1]);
    let stored = c
        .encode(data(&[]), EncodeOptions::ENCODE_EMPTY)
        .unwrap()
        .unwrap();
    assert_eq!(leaves(&c, &stored), [(vec![0, 0], stored.clone())]);
    let replaced = c
        .rewrite_leaves(Some(&stored), &[vec![0, 0]], |idx, old| -> Result<_> {
            assert_eq!((idx, old), (&[0u64, 0][..], Some(&stored[..])));
            Ok(Some(b"new".to_vec()))
        })
        .unwrap();
    assert_eq!(replaced.as_deref(), Some(&b"new"[..]));
}

#[test]
fn array_to_array_codecs_are_refused() {
    let transposed = chain(
        json!([{"name": "transpose", "configuration": {"order": [1, 0]}},
               {"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 2]}}]),
        vec![4, 4],
    );
    let inside = chain(
        json!([{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [2, 2],
            "codecs": [{"name": "transpose", "configuration": {"order": [1, 0]}},
                       {"name": "bytes", "configuration": {"endian": "little"}}]}}]),
        vec![4, 4],
    );
    // a level with array -> array codecs ends the descent
    assert!(!transposed.is_sharded());
    assert_eq!(inside.leaf_shape(), &[2, 2]);
    let chunk: Vec<u8> = (1..=16u16).flat_map(|v| v.to_ne_bytes()).collect();
    for c in [&transposed, &inside] {
        let stored = c
            .encode(&chunk, EncodeOptions::ENCODE_EMPTY)
            .unwrap()
            .unwrap();
        assert!(matches!(
            c.visit_stored_leaves(&stored, None, |_, _| Ok::<_, CodecError>(())),
            Err(CodecError::NotApplicable { .. })
        ));
        assert!(matches!(
            c.rewrite_leaves(Some(&stored), &[], |_, _| -> Result<_> { Ok(None) }),
            Err(CodecError::NotApplicable { .. })
        ));
    }
}

/// The array -> bytes codec's input decoded from a stored chunk.
fn serialized(chain: &CodecChain, bytes: &[u8]) -> std::result::Result<AlignedBuffer, CodecError> {
    let mut buf = AlignedBuffer::default();
    chain.decode_into(bytes, ChunkOut::Serialized(&mut buf))?;
    Ok(buf)
}
