//! Golden test vectors: chunks zarr-python 3.1.6 wrote with numcodecs 0.16.6 codecs
//! (tests/data/numcodecs.json, written by tests/data/generate_numcodecs.py) decode to the
//! expected values, our encoding of the deterministic ones is byte-identical, and our codec
//! definitions are written back as zarr-python writes them (the checks of zarr-codecs' golden
//! test, tests/it/golden.rs there). One table-driven test.

#![cfg(feature = "numcodecs")]

use std::path::{Path, PathBuf};

use serde_json::Value;
use zarr_numcodecs::default_registry;

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn manifest(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(data_dir().join(name)).unwrap()).unwrap()
}

/// Chunks zarr-python 3.1.6 wrote with numcodecs 0.16.6 codecs (tests/data/numcodecs.json,
/// written by tests/data/generate_numcodecs.py): decoded values equal zarr-python's, and our
/// encoding of what was written is byte-identical for every deterministic codec.
#[test]
fn numcodecs_golden_vectors() {
    let dir = data_dir();
    let doc = manifest("numcodecs.json");
    let registry = default_registry();
    let cases = doc["cases"].as_array().unwrap();
    assert!(cases.len() >= 45);
    let mut seen = std::collections::BTreeSet::new();
    for case in cases {
        zarr_codecs::fuzzing::golden::check_case(&dir, case, &registry);
        for codec in case["codecs"].as_array().unwrap() {
            seen.insert(codec["name"].as_str().unwrap().to_owned());
        }
    }
    // every numcodecs codec of this crate has a case
    for c in zarr_numcodecs::NUMCODECS {
        assert!(seen.contains(c.name), "no golden case uses {}", c.name);
    }
}
