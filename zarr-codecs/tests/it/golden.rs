//! Golden test vectors: chunks written by zarr-python and TensorStore (tests/data/golden.json,
//! written by tests/data/generate.py) decode to the expected values, our encoding of the
//! deterministic ones is byte-identical, and our codec definitions are written back as
//! zarr-python writes them. One table-driven test.

#![cfg(all(
    feature = "gzip",
    feature = "zstd",
    feature = "blosc",
    feature = "crc32c",
    feature = "sharding"
))]

use std::path::{Path, PathBuf};

use serde_json::Value;
use zarr_codecs::{default_registry, ChunkRepr, CodecChain};
use zarr_meta::{DataType, ExtensionDef, FillValue};

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn manifest(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(data_dir().join(name)).unwrap()).unwrap()
}

#[test]
fn golden_vectors() {
    let dir = data_dir();
    let doc = manifest("golden.json");
    let registry = default_registry();
    let cases = doc["cases"].as_array().unwrap();
    assert!(cases.len() >= 40);
    let identical = cases
        .iter()
        .filter(|case| zarr_codecs::fuzzing::golden::check_case(&dir, case, &registry))
        .count();
    assert!(identical >= 8);
}

#[test]
fn rejected_chains() {
    let doc = manifest("golden.json");
    let registry = default_registry();
    let mut messages = Vec::new();
    for case in doc["rejects"].as_array().unwrap() {
        let t = DataType::from_name(case["data_type"].as_str().unwrap()).unwrap();
        let repr = ChunkRepr::new(
            serde_json::from_value(case["shape"].clone()).unwrap(),
            t,
            FillValue::from_json(&case["fill_value"], t).unwrap(),
        );
        let defs: Vec<ExtensionDef> = serde_json::from_value(case["codecs"].clone()).unwrap();
        let err = CodecChain::from_defs(&defs, &repr, &registry)
            .expect_err(case["name"].as_str().unwrap());
        messages.push(err.to_string());
    }
    assert_eq!(
        messages,
        [
            "invalid configuration for codec \"transpose\": order [0, 0] is not a permutation of 0..2",
            "invalid codec chain: it has no array -> bytes codec (such as {\"name\": \"bytes\"})",
            "unknown codec \"mystery\"",
        ]
    );
}
