//! Property tests: random chains (every codec, nested sharding, sparse layouts) over random
//! data types, chunk shapes and data round trip through every encode and decode path.

#![cfg(all(
    feature = "sparse",
    feature = "gzip",
    feature = "zstd",
    feature = "blosc",
    feature = "crc32c",
    feature = "sharding"
))]

use proptest::prelude::*;
use serde_json::{json, Value};
use zarr_codecs::EncodeOptions;
use zarr_codecs::{default_registry, BlockBuffer, ChunkRepr, CodecChain, SourceBlock};
use zarr_grid::geometry::{copy_region, Region};
use zarr_meta::{DataType, ExtensionDef, FillValue};
use zarr_testkit::Rng;

const TYPES: [&str; 10] = [
    "bool",
    "int8",
    "uint16",
    "int32",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "r24",
];

/// A divisor of `n` picked by `pick`.
fn divisor(n: u64, pick: u64) -> u64 {
    let divs: Vec<u64> = (1..=n).filter(|d| n.is_multiple_of(*d)).collect();
    divs[(pick % divs.len() as u64) as usize]
}

fn bytes_codec(seed: u64) -> Value {
    if seed.is_multiple_of(2) {
        json!({"name": "bytes", "configuration": {"endian": "little"}})
    } else {
        json!({"name": "bytes", "configuration": {"endian": "big"}})
    }
}

fn bytes_to_bytes(seed: u64) -> Vec<Value> {
    match seed % 6 {
        0 => vec![],
        1 => vec![json!({"name": "gzip", "configuration": {"level": seed % 10}})],
        2 => vec![
            json!({"name": "zstd", "configuration": {"level": (seed % 7) as i64 - 2, "checksum": seed.is_multiple_of(3)}}),
        ],
        3 => {
            let cname = ["lz4", "lz4hc", "blosclz", "zstd", "zlib"][(seed / 6 % 5) as usize];
            let shuffle = ["noshuffle", "shuffle", "bitshuffle"][(seed / 30 % 3) as usize];
            vec![
                json!({"name": "blosc", "configuration": {"cname": cname, "clevel": seed % 10, "shuffle": shuffle}}),
            ]
        }
        4 => vec![json!({"name": "crc32c"})],
        _ => vec![
            json!({"name": "zstd", "configuration": {"level": 1, "checksum": false}}),
            json!({"name": "crc32c"}),
        ],
    }
}

/// A chain for chunks of `shape`; `depth` bounds the nesting of shards.
fn chain_json(shape: &[u64], seed: u64, depth: u32) -> Vec<Value> {
    let rank = shape.len();
    let mut codecs = Vec::new();
    let mut shape = shape.to_vec();
    if seed.is_multiple_of(3) {
        let p = Rng::new(seed / 3).permutation(rank);
        shape = p.iter().map(|&a| shape[a]).collect();
        codecs.push(json!({"name": "transpose", "configuration": {"order": p}}));
    }
    let seed = seed / 3;
    if depth > 0 && seed.is_multiple_of(2) {
        let inner: Vec<u64> = shape
            .iter()
            .enumerate()
            .map(|(d, &n)| divisor(n, seed.rotate_left(7 * d as u32)))
            .collect();
        let location = if seed.is_multiple_of(4) {
            "start"
        } else {
            "end"
        };
        let index = if seed % 8 == 2 {
            vec![json!({"name": "bytes", "configuration": {"endian": "big"}})]
        } else {
            vec![
                json!({"name": "bytes", "configuration": {"endian": "little"}}),
                json!({"name": "crc32c"}),
            ]
        };
        codecs.push(json!({"name": "sharding_indexed", "configuration": {
            "chunk_shape": inner,
            "codecs": chain_json(&inner, seed.wrapping_mul(31).wrapping_add(7), depth - 1),
            "index_codecs": index,
            "index_location": location,
        }}));
        codecs.extend(bytes_to_bytes(seed / 5 % 2 * (seed / 11)));
    } else {
        codecs.push(array_to_bytes(&shape, seed / 2));
        codecs.extend(bytes_to_bytes(seed / 4));
    }
    codecs
}

/// `bytes` mostly, `sparse_layout` (a format the rank allows) now and then.
fn array_to_bytes(shape: &[u64], seed: u64) -> Value {
    if shape.is_empty() || !(seed / 2).is_multiple_of(3) {
        return bytes_codec(seed);
    }
    let index = ["uint16", "uint32", "uint64"][(seed / 6 % 3) as usize];
    let pointer = ["uint32", "uint64"][(seed / 18 % 2) as usize];
    match (shape.len(), seed / 36 % 3) {
        (2, 1) => json!({"name": "sparse_layout", "configuration": {
            "format": "csr", "index_data_type": index, "pointer_data_type": pointer}}),
        (2, 2) => json!({"name": "sparse_layout", "configuration": {
            "format": "csc", "index_data_type": index, "pointer_data_type": pointer}}),
        _ => json!({"name": "sparse_layout", "configuration": {
            "format": "coo", "index_data_type": index}}),
    }
}

fn same(t: DataType, a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len()
        && a.chunks_exact(t.size())
            .zip(b.chunks_exact(t.size()))
            .all(|(x, y)| t.elements_equal(x, y))
}

prop_compose! {
    fn case()(
        t in prop::sample::select(TYPES.to_vec()),
        shape in prop::collection::vec(1u64..7, 0..4),
        seed in any::<u64>(),
        fill_prob in 0u32..4,
        region_seed in any::<u64>(),
    ) -> (DataType, Vec<u64>, u64, u32, u64) {
        (DataType::from_name(t).unwrap(), shape, seed, fill_prob, region_seed)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(160))]

    #[test]
    fn chains_round_trip((t, shape, seed, fill_prob, region_seed) in case()) {
        let n: usize = shape.iter().product::<u64>() as usize;
        let size = t.size();
        // a non-zero fill value now and then
        let fill_bytes: Vec<u8> = if seed % 5 == 0 { vec![1; size] } else { vec![0; size] };
        let fill = FillValue::from_ne_bytes(t, fill_bytes.clone()).unwrap();
        let repr = ChunkRepr::new(shape.clone(), t, fill);
        let codecs = chain_json(&shape, seed, 2);
        let defs: Vec<ExtensionDef> = serde_json::from_value(Value::Array(codecs.clone())).unwrap();
        let chain = CodecChain::from_defs(&defs, &repr, &default_registry())
            .map_err(|e| TestCaseError::fail(format!("{e}: {}", Value::Array(codecs.clone()))))?;

        // data: random elements, a share of them equal to the fill value
        let mut rng = Rng::new(seed);
        let mut data = vec![0u8; n * size];
        for e in data.chunks_exact_mut(size) {
            if rng.below(4) < u64::from(fill_prob) {
                e.copy_from_slice(&fill_bytes);
            } else {
                rng.fill(e);
                if t == DataType::Bool { e[0] &= 1; }
            }
        }

        let encoded = chain
            .encode(&data, EncodeOptions::ENCODE_EMPTY)
            .unwrap()
            .unwrap();
        prop_assert!(encoded.len() as u64 <= chain.encoded_size_bound());
        let decoded = chain.decode(&encoded).unwrap();
        prop_assert!(same(t, &decoded, &data), "decode: {}", Value::Array(codecs.clone()));
        let mut out = vec![0u8; data.len()];
        chain.decode_into(&encoded, &mut out).unwrap();
        prop_assert!(same(t, &out, &data), "decode_into");

        // writing empty chunks: every chunk encoded, but by a codec whose format stores no
        // empty chunk (`sparse_layout`) a chunk of fill values is still skipped
        match chain.encode(&data, EncodeOptions::WRITE_EMPTY).unwrap() {
            Some(written) => prop_assert!(same(t, &chain.decode(&written).unwrap(), &data)),
            None => prop_assert!(
                repr.is_fill(&data) && chain.array_to_bytes().name() == "sparse_layout"
            ),
        }
        match chain.encode(&data, EncodeOptions::SKIP_EMPTY).unwrap() {
            None => prop_assert!(repr.is_fill(&data)),
            Some(stored) => {
                prop_assert!(!repr.is_fill(&data));
                prop_assert!(same(t, &chain.decode(&stored).unwrap(), &data));
            }
        }

        // a random region, read from the stored chunk
        let mut rs = region_seed;
        let (mut start, mut rshape) = (Vec::new(), Vec::new());
        for &n in &shape {
            let s = rs % n;
            rs /= 7;
            let len = 1 + rs % (n - s);
            rs /= 7;
            start.push(s);
            rshape.push(len);
        }
        let region = Region::new(start.clone(), rshape.clone()).unwrap();
        let m: usize = rshape.iter().product::<u64>() as usize * size;
        let mut want = vec![0u8; m];
        copy_region(&data, &shape, &start, &mut want, &rshape, &vec![0; shape.len()], &rshape, size);
        let mut got = vec![0u8; m];
        prop_assert!(chain.partial_decoder().region(&encoded, &region, &mut got).unwrap());
        prop_assert!(same(t, &got, &want), "region");

        // the chunk as a block of a larger buffer (a region write's data, a region read's
        // output): encoding from it and decoding into it match the whole-chunk paths
        let mut ps = region_seed ^ seed;
        let (mut big_shape, mut at) = (Vec::new(), Vec::new());
        for &n in &shape {
            let pad = ps % 3;
            ps /= 3;
            let off = ps % (pad + 1);
            ps /= 3;
            big_shape.push(n + pad);
            at.push(off);
        }
        let big_len = big_shape.iter().product::<u64>() as usize * size;
        let block = Region::new(at.clone(), shape.clone()).unwrap();
        let mut src = vec![0xA5u8; big_len];
        copy_region(&data, &shape, &vec![0; shape.len()], &mut src, &big_shape, &at, &shape, size);
        let place = SourceBlock::new(&src, &big_shape, size, &block).unwrap();
        match (chain.encode(place, EncodeOptions::SKIP_EMPTY).unwrap(), chain.encode(&data, EncodeOptions::SKIP_EMPTY).unwrap()) {
            (None, None) => {}
            (Some(a), Some(b)) => prop_assert!(same(t, &chain.decode(&a).unwrap(), &chain.decode(&b).unwrap())),
            (a, b) => prop_assert!(false, "from block {:?} vs whole {:?}", a.is_some(), b.is_some()),
        }
        let kept = chain.encode(place, EncodeOptions::ENCODE_EMPTY).unwrap().unwrap();
        prop_assert!(same(t, &chain.decode(&kept).unwrap(), &data));
        let mut want = vec![0x5Au8; big_len];
        copy_region(&data, &shape, &vec![0; shape.len()], &mut want, &big_shape, &at, &shape, size);
        let mut got = vec![0x5Au8; big_len];
        {
            let mut out = BlockBuffer::new(&mut got, &big_shape, size).unwrap();
            let mut blocks = out.split([&block]).unwrap();
            chain.decode_into(&encoded, &mut blocks[0]).unwrap();
        }
        prop_assert!(same(t, &got, &want), "decode_into_block: {}", Value::Array(codecs.clone()));
        if !shape.is_empty() {
            // a block that does not fit the chunk is an error, not a panic
            let mut out = BlockBuffer::new(&mut got, &big_shape, size).unwrap();
            let mut whole = out.whole();
            prop_assert!(chain.decode_into(&encoded, &mut whole).is_err() || big_shape == shape);
            let smaller = Region::new(at.clone(), shape.iter().map(|&n| n - 1).collect()).unwrap();
            let mut blocks = out.split([&smaller]).unwrap();
            prop_assert!(chain.decode_into(&encoded, &mut blocks[0]).is_err());
            let short = SourceBlock::new(&src, &big_shape, size, &smaller).unwrap();
            prop_assert!(chain.encode(short, EncodeOptions::SKIP_EMPTY).is_err());
            prop_assert!(chain.encode(short, EncodeOptions::ENCODE_EMPTY).is_err());
            // and so is a buffer shorter than its shape
            let mut short = vec![0u8; big_len - size];
            prop_assert!(BlockBuffer::new(&mut short, &big_shape, size).is_err());
            prop_assert!(SourceBlock::new(&short, &big_shape, size, &block).is_err());
        }

        // the written definitions build the same chain
        let again = CodecChain::from_defs(&chain.to_defs(), &repr, &default_registry()).unwrap();
        let again = again.encode(&data, EncodeOptions::ENCODE_EMPTY).unwrap().unwrap();
        prop_assert_eq!(again.len(), encoded.len());
    }
}
