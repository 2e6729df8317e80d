//! The partial encoder of sharded chains (`CodecChain::partial_encoder`) against its model,
//! decode, update and encode of the whole chunk: seeded random shards (nested sharding,
//! array -> array and bytes -> bytes codecs inside and around the shard, either index
//! location, fill values other than zero), random stored values and random updates.

#![cfg(all(feature = "sharding", feature = "zstd", feature = "crc32c"))]

use serde_json::{json, Value};
use zarr_codecs::{
    default_registry, ChunkRepr, ChunkUpdate, CodecChain, CodecError, EncodeOptions, Piece,
};
use zarr_grid::geometry::{copy_region, regular_chunks_in_region, Region};
use zarr_meta::{DataType, FillValue};
use zarr_testkit::Rng;

fn bytes_le() -> Value {
    json!({"name": "bytes", "configuration": {"endian": "little"}})
}

/// A random chain of leaves (no sharding) for chunks of rank `rank`.
fn leaf_codecs(rng: &mut Rng, rank: usize) -> Vec<Value> {
    let mut codecs = Vec::new();
    if rng.chance(0.3) {
        let order: Vec<usize> = rng.permutation(rank);
        codecs.push(json!({"name": "transpose", "configuration": {"order": order}}));
    }
    codecs.push(bytes_le());
    match rng.below(3) {
        0 => codecs.push(json!({"name": "zstd", "configuration": {"level": 1, "checksum": false}})),
        1 => codecs.push(json!({"name": "crc32c"})),
        _ => {}
    }
    codecs
}

/// A sharding definition for shards of `shape`, its inner chunks `inner`, their codecs
/// `codecs`.
fn sharding(rng: &mut Rng, inner: &[u64], codecs: Vec<Value>) -> Value {
    let location = if rng.chance(0.5) { "start" } else { "end" };
    json!({"name": "sharding_indexed", "configuration": {
        "chunk_shape": inner,
        "codecs": codecs,
        "index_codecs": [bytes_le(), {"name": "crc32c"}],
        "index_location": location}})
}

/// A random sharded chain: the shape of each level from the leaves up, each dividing the next.
fn random_chain(rng: &mut Rng) -> (ChunkRepr, CodecChain, String) {
    let rank = rng.range(1..4) as usize;
    let leaf: Vec<u64> = (0..rank).map(|_| rng.range(1..4)).collect();
    let nested = rng.chance(0.3);
    let mid: Vec<u64> = if nested {
        leaf.iter().map(|&l| l * rng.range(1..3)).collect()
    } else {
        leaf.clone()
    };
    let shard: Vec<u64> = mid.iter().map(|&m| m * rng.range(1..4)).collect();
    let inner_codecs = if nested {
        let codecs = leaf_codecs(rng, rank);
        let mut level = vec![sharding(rng, &leaf, codecs)];
        if rng.chance(0.5) {
            level.push(json!({"name": "crc32c"}));
        }
        level
    } else {
        leaf_codecs(rng, rank)
    };
    let mut codecs = vec![sharding(rng, &mid, inner_codecs)];
    if rng.chance(0.3) {
        codecs.push(json!({"name": "zstd", "configuration": {"level": 1, "checksum": false}}));
    }
    let fill = if rng.chance(0.5) { 0u16 } else { 7 };
    let repr = ChunkRepr::new(
        shard,
        DataType::UInt16,
        FillValue::from_ne_bytes(DataType::UInt16, fill.to_ne_bytes()).unwrap(),
    );
    let json = Value::Array(codecs).to_string();
    let chain = CodecChain::from_json(&json, &repr, &default_registry()).unwrap();
    (repr, chain, json)
}

/// Random elements of `n`, about `dense` of them other than `fill`.
fn values(rng: &mut Rng, n: usize, fill: u16, dense: f64) -> Vec<u16> {
    (0..n)
        .map(|_| {
            if rng.chance(dense) {
                rng.below(5) as u16
            } else {
                fill
            }
        })
        .collect()
}

fn to_bytes(v: &[u16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

fn random_region(rng: &mut Rng, shape: &[u64]) -> Region {
    let start: Vec<u64> = shape.iter().map(|&n| rng.below(n)).collect();
    let size: Vec<u64> = shape
        .iter()
        .zip(&start)
        .map(|(&n, &s)| rng.range(1..n - s + 1))
        .collect();
    Region::new(start, size).unwrap()
}

/// The value `pieces` make of `old`.
fn apply(old: &[u8], pieces: &[Piece]) -> Vec<u8> {
    let mut out = Vec::new();
    for p in pieces {
        match p {
            Piece::Kept(r) => out.extend_from_slice(&old[r.start as usize..r.end as usize]),
            Piece::New(b) => out.extend_from_slice(b),
        }
    }
    out
}

#[test]
fn partial_shard_updates_match_decode_update_encode() {
    let mut rng = Rng::new(37);
    let mut in_place = 0;
    for case in 0..300 {
        let (repr, chain, json) = random_chain(&mut rng);
        let ctx = format!("case {case}: {json} {:?}", repr.shape);
        let fill = u16::from_ne_bytes(repr.fill_value.as_bytes().try_into().unwrap());
        let n = repr.num_elements().unwrap() as usize;
        let encoder = chain.partial_encoder().expect(&ctx);
        // the stored value: none, or a random chunk (all-fill inner chunks not stored)
        let old_chunk: Vec<u16> = if rng.chance(0.2) {
            vec![fill; n]
        } else {
            let dense = rng.unit();
            values(&mut rng, n, fill, dense)
        };
        let old = chain
            .encode(to_bytes(&old_chunk), EncodeOptions::SKIP_EMPTY)
            .unwrap();
        // the update: a region written from a block of a larger buffer
        let region = random_region(&mut rng, &repr.shape);
        let data_shape: Vec<u64> = region.shape.iter().map(|&s| s + rng.below(3)).collect();
        let from = Region::new(
            data_shape
                .iter()
                .zip(&region.shape)
                .map(|(&d, &s)| rng.below(d - s + 1))
                .collect(),
            region.shape.clone(),
        )
        .unwrap();
        let dn = data_shape.iter().product::<u64>() as usize;
        let density = if rng.chance(0.3) { 0.0 } else { rng.unit() };
        let data = to_bytes(&values(&mut rng, dn, fill, density));
        let keep_empty = rng.chance(0.3);
        let update =
            ChunkUpdate::new(&data, &data_shape, 2, &from, region.clone(), keep_empty).unwrap();

        // the model: the chunk decoded (or fill), the region written
        let mut want = to_bytes(&old_chunk);
        copy_region(
            &data,
            &data_shape,
            &from.start,
            &mut want,
            &repr.shape,
            &region.start,
            &region.shape,
            2,
        );
        let new = encoder.encode_update(old.as_deref(), &update).expect(&ctx);
        match &new {
            Some(bytes) => assert_eq!(chain.decode(bytes).unwrap().as_bytes(), want, "{ctx}"),
            None => assert!(repr.is_fill(&want), "{ctx}: nothing stored for data"),
        }
        if !keep_empty {
            // nothing but the fill value is never stored
            assert_eq!(new.is_none(), repr.is_fill(&want), "{ctx}");
        }

        // the inner chunks the update does not touch keep their stored bytes
        // (a shard with no bytes -> bytes codec after it, whose inner chunks are spans of it)
        if let (Some(old), Some(new), true) = (&old, &new, encoder.updates_in_place()) {
            let level = chain.array_to_bytes().inner_chunks().unwrap();
            if let (Ok(before), Ok(after)) = (level.stored(old), level.stored(new)) {
                let inner = level.shape();
                let grid: Vec<u64> = repr.shape.iter().zip(inner).map(|(s, i)| s / i).collect();
                let touched: Vec<usize> = regular_chunks_in_region(inner, &region)
                    .map(|p| {
                        p.chunk
                            .iter()
                            .zip(&grid)
                            .fold(0usize, |acc, (&c, &g)| acc * g as usize + c as usize)
                    })
                    .collect();
                for (i, (b, a)) in before.iter().zip(&after).enumerate() {
                    if !touched.contains(&i) {
                        assert_eq!(b, a, "{ctx}: inner chunk {i} changed");
                    }
                }
            }
        }

        // in place: the pieces of the stored value make the same new value
        if encoder.updates_in_place() {
            in_place += 1;
            let pieces = encoder
                .encode_update_pieces(&old.as_deref(), &update)
                .expect(&ctx);
            let from_pieces = pieces.map(|p| apply(old.as_deref().unwrap_or_default(), &p));
            assert_eq!(from_pieces, new, "{ctx}");
        }
    }
    assert!(in_place > 100, "{in_place} in-place cases");
}

#[test]
fn bad_updates_are_errors() {
    let repr = ChunkRepr::new(
        vec![4, 4],
        DataType::UInt8,
        FillValue::zero(DataType::UInt8),
    );
    let json = json!([{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [2, 2], "codecs": [{"name": "bytes"}]}}]);
    let chain = CodecChain::from_json(&json.to_string(), &repr, &default_registry()).unwrap();
    let encoder = chain.partial_encoder().unwrap();
    let data = [1u8; 4];
    let whole = Region::whole(&[2, 2]);
    // a region outside the shard
    let outside = Region::new(vec![3, 3], vec![2, 2]).unwrap();
    let update = ChunkUpdate::new(&data, &[2, 2], 1, &whole, outside, false).unwrap();
    for result in [
        encoder.encode_update(None, &update).map(drop),
        encoder
            .encode_update_pieces(&None::<&[u8]>, &update)
            .map(drop),
    ] {
        assert!(
            matches!(result, Err(CodecError::RegionOutOfBounds { .. })),
            "{result:?}"
        );
    }
    // data of another length than its shape, a block outside it, another shape than the region
    let inside = Region::new(vec![0, 0], vec![2, 2]).unwrap();
    assert!(ChunkUpdate::new(&data[..3], &[2, 2], 1, &whole, inside.clone(), false).is_err());
    let far = Region::new(vec![1, 1], vec![2, 2]).unwrap();
    assert!(ChunkUpdate::new(&data, &[2, 2], 1, &far, inside, false).is_err());
    let small = Region::new(vec![0, 0], vec![1, 2]).unwrap();
    assert!(ChunkUpdate::new(&data, &[2, 2], 1, &whole, small, false).is_err());
    // a corrupt stored shard
    let update = ChunkUpdate::new(&data, &[2, 2], 1, &whole, whole.clone(), false).unwrap();
    assert!(encoder.encode_update(Some(&[0u8; 5]), &update).is_err());
    // chains without a partial encoder
    for json in [
        json!([{"name": "bytes"}]),
        json!([{"name": "transpose", "configuration": {"order": [1, 0]}},
               {"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 2]}}]),
    ] {
        let c = CodecChain::from_json(&json.to_string(), &repr, &default_registry()).unwrap();
        assert!(c.partial_encoder().is_none(), "{json}");
    }
}
