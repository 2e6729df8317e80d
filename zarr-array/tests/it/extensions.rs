//! The codecs of zarr-numcodecs (cargo feature `numcodecs`): a reader built without them
//! refuses arrays that use them, v3 and v2, with an error naming the feature.

use std::sync::Arc;

use zarr_array::zarr_store::{MemoryStore, Store};
use zarr_array::{report, Array, Extensions};

/// A v3 array of `int32` stored through `numcodecs.delta`, as zarr-python writes it.
const DELTA_V3: &str = r#"{"zarr_format": 3, "node_type": "array", "shape": [8],
  "data_type": "int32", "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
  "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
  "fill_value": 0,
  "codecs": [{"name": "numcodecs.delta", "configuration": {"dtype": "<i4"}},
             {"name": "bytes", "configuration": {"endian": "little"}}]}"#;

/// The same as a Zarr v2 array with a `delta` filter.
const DELTA_V2: &str = r#"{"zarr_format": 2, "shape": [8], "chunks": [4], "dtype": "<i4",
  "compressor": null, "fill_value": 0, "order": "C",
  "filters": [{"id": "delta", "dtype": "<i4"}]}"#;

fn store() -> Arc<MemoryStore> {
    let store = Arc::new(MemoryStore::new());
    store.set("v3/zarr.json", DELTA_V3.as_bytes()).unwrap();
    store.set("v2/.zarray", DELTA_V2.as_bytes()).unwrap();
    store
}

/// What a build without the feature `numcodecs` has: zarr-codecs' registry alone, which
/// knows zarr-numcodecs' codecs by name only.
fn without_numcodecs() -> Extensions {
    Extensions {
        codecs: zarr_array::zarr_codecs::default_registry(),
        ..Extensions::default()
    }
}

#[test]
fn a_reader_without_numcodecs_refuses_numcodecs_delta_naming_the_feature() {
    let store = store();
    for path in ["v3", "v2"] {
        let err = Array::open_with(store.clone(), path, &without_numcodecs()).unwrap_err();
        let message = report(&err);
        assert!(
            message.contains(
                r#"unsupported codec "numcodecs.delta" (enable cargo feature "numcodecs")"#
            ),
            "{path}: {message}"
        );
    }
}

/// The default extensions of this build: with the feature, both arrays open and read back
/// what delta encoding of `0..8` stores; without it (`--no-default-features`), they are
/// refused like above.
#[test]
fn the_default_reader_opens_numcodecs_delta_with_the_feature() {
    let store = store();
    let values: Vec<i32> = (0..8).collect();
    // delta of 0..4 and 4..8, chunk by chunk: [0, 1, 1, 1] and [4, 1, 1, 1]
    let chunks: [(&str, [i32; 4]); 2] = [("0", [0, 1, 1, 1]), ("1", [4, 1, 1, 1])];
    for (key, chunk) in chunks {
        let bytes: Vec<u8> = chunk.iter().flat_map(|v| v.to_le_bytes()).collect();
        store.set(&format!("v3/c/{key}"), &bytes).unwrap();
        store.set(&format!("v2/{key}"), &bytes).unwrap();
    }
    for path in ["v3", "v2"] {
        let opened = Array::open(store.clone(), path);
        if cfg!(feature = "delta") {
            let a = opened.unwrap();
            let read: Vec<i32> = a
                .read_selection(&zarr_array::Selection::all())
                .unwrap()
                .iter()
                .copied()
                .collect();
            assert_eq!(read, values, "{path}");
        } else {
            // without any numcodecs feature, zarr-numcodecs is not built: zarr-codecs names
            // `numcodecs`; with another of its features alone, zarr-numcodecs names `delta`
            let message = report(&opened.unwrap_err());
            assert!(
                message.contains(r#"(enable cargo feature "numcodecs")"#)
                    || message.contains(r#"(enable cargo feature "delta")"#),
                "{path}: {message}"
            );
        }
    }
}
