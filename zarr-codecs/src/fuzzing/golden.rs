//! The check of one golden test vector (a chunk another implementation wrote, with its
//! decoded values and codec definitions; `tests/data/*.json`), shared by the golden tests of
//! zarr-codecs and zarr-numcodecs: decoded whole, into a buffer and as a region it equals the
//! expected values, our encoding round trips (and is the writer's, byte for byte, for a
//! deterministic chain), and the definitions are written back as zarr-python writes them. A
//! failed check panics, naming the case.

use std::path::Path;

use serde_json::Value;
use zarr_grid::geometry::{copy_region, Region};
use zarr_meta::{DataType, ExtensionDef, FillValue};

use crate::{ChunkRepr, CodecChain, CodecRegistry};

/// Converts little-endian element bytes to native order.
fn le_to_native(mut bytes: Vec<u8>, t: DataType) -> Vec<u8> {
    if cfg!(target_endian = "big") {
        if let Some(w) = t.endian_component_size() {
            bytes.chunks_exact_mut(w).for_each(<[u8]>::reverse);
        }
    }
    bytes
}

/// Compares decoded chunks with NaN equal to NaN (the fixtures hold NaNs).
fn same(t: DataType, a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len()
        && a.chunks_exact(t.size())
            .zip(b.chunks_exact(t.size()))
            .all(|(x, y)| t.elements_equal(x, y))
}

/// Checks one case of a golden manifest, its files in `dir`; returns whether its encoding had
/// to be identical to the writer's.
pub fn check_case(dir: &Path, case: &Value, registry: &CodecRegistry) -> bool {
    let name = case["name"].as_str().unwrap();
    let t = DataType::from_name(case["data_type"].as_str().unwrap()).unwrap();
    let fill = FillValue::from_json(&case["fill_value"], t).unwrap();
    let shape: Vec<u64> = serde_json::from_value(case["shape"].clone()).unwrap();
    let repr = ChunkRepr::new(shape.clone(), t, fill);
    let defs: Vec<ExtensionDef> = serde_json::from_value(case["codecs"].clone()).unwrap();
    let chain =
        CodecChain::from_defs(&defs, &repr, registry).unwrap_or_else(|e| panic!("{name}: {e}"));
    let read = |field: &str| {
        le_to_native(
            std::fs::read(dir.join(case[field].as_str().unwrap())).unwrap(),
            t,
        )
    };
    let stored = std::fs::read(dir.join(case["stored"].as_str().unwrap())).unwrap();
    let expected = read("decoded");
    // what was written, when lossy codecs make it differ from what reads back
    let input = case.get("input").map(|_| read("input"));

    // decode, two ways
    let decoded = chain
        .decode(&stored)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(
        same(t, &decoded, &expected),
        "{name}: decoded values differ"
    );
    let mut out = vec![0u8; chain.decoded_len()];
    chain.decode_into(&stored, &mut out).unwrap();
    assert!(same(t, &out, &expected), "{name}: decode_into differs");

    // a region: the middle of the chunk
    let start: Vec<u64> = shape.iter().map(|&n| n / 3).collect();
    let rshape: Vec<u64> = shape
        .iter()
        .map(|&n| (n - n / 3).div_ceil(2).max(1))
        .collect();
    let region = Region::new(start.clone(), rshape.clone()).unwrap();
    let mut want = vec![0u8; repr.with_shape(rshape.clone()).byte_len().unwrap()];
    copy_region(
        &expected,
        &shape,
        &start,
        &mut want,
        &rshape,
        &vec![0; shape.len()],
        &rshape,
        t.size(),
    );
    let mut got = vec![0u8; want.len()];
    assert!(chain.decode_region(&stored, &region, &mut got).unwrap());
    assert!(same(t, &got, &want), "{name}: region differs");

    // our encoding round trips; for deterministic codecs it is the writer's
    let source = input.as_deref().unwrap_or(&expected);
    let ours = chain.encode_slice(source).unwrap();
    assert!(
        same(t, &chain.decode(&ours).unwrap(), &expected),
        "{name}: round trip"
    );
    let identical = case["identical"].as_bool().unwrap();
    if identical {
        assert!(
            ours == stored,
            "{name}: our encoding differs from the writer's"
        );
        if !repr.is_fill(source) {
            assert_eq!(
                chain.encode_chunk(source).unwrap().as_deref(),
                Some(&stored[..]),
                "{name}"
            );
        }
    }

    // definitions are written back as zarr-python writes them
    if !name.starts_with("ts_") {
        let back = serde_json::to_value(chain.to_defs()).unwrap();
        assert_eq!(
            back, case["codecs"],
            "{name}: written configuration differs"
        );
    }
    identical
}
