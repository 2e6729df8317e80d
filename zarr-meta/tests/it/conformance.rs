//! Every array document of the conformance corpora parses and writes back equal; the
//! reject documents whose fault is structural are refused here, with the registries for the
//! grid, key encoding, codec and storage transformer names filled with the core names.
//!
//! Corpora: the project's own `conformance/v3` and, when `ZARR_CONFORMANCE_DIR` names a shared
//! corpus, its `v3` set (`zarr_testkit::corpus::conformance_corpora`).

use std::path::{Path, PathBuf};

use serde_json::Value;
use zarr_meta::{ArrayMetadata, ExtensionPoint, FillValue, GroupMetadata, MetaError, Registry};

fn corpora() -> Vec<PathBuf> {
    zarr_testkit::corpus::conformance_corpora(&["v3"])
}

fn fixtures(dir: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
    let m: Value = serde_json::from_str(&text).unwrap();
    m["fixtures"].as_array().cloned().unwrap_or_default()
}

/// The core registries as the grid / codec crates fill them (names only).
fn check_extensions(meta: &ArrayMetadata) -> Result<(), MetaError> {
    let reg = |point, names: &[&str]| {
        let mut r: Registry<()> = Registry::new(point);
        for n in names {
            r.register(*n, ()).unwrap();
        }
        r
    };
    reg(ExtensionPoint::ChunkGrid, &["regular", "regular_bounded"]).resolve(&meta.chunk_grid)?;
    reg(ExtensionPoint::ChunkKeyEncoding, &["default", "v2"]).resolve(&meta.chunk_key_encoding)?;
    let codecs = reg(
        ExtensionPoint::Codec,
        &[
            "bytes",
            "transpose",
            "gzip",
            "zstd",
            "blosc",
            "crc32c",
            "sharding_indexed",
            "sparse_layout",
            "vlen-utf8",
            "vlen-bytes",
            // the numcodecs codecs zarr-python writes, and zarrs' pcodec / zfp
            "numcodecs.zlib",
            "numcodecs.bz2",
            "numcodecs.lz4",
            "numcodecs.lzma",
            "numcodecs.shuffle",
            "numcodecs.crc32",
            "numcodecs.adler32",
            "numcodecs.fletcher32",
            "numcodecs.delta",
            "numcodecs.fixedscaleoffset",
            "numcodecs.bitround",
            "numcodecs.quantize",
            "numcodecs.packbits",
            "numcodecs.astype",
            "numcodecs.pcodec",
            "numcodecs.zfpy",
            "pcodec",
            "zfp",
            "zfpy",
        ],
    );
    for c in &meta.codecs {
        codecs.resolve(c)?;
    }
    let transformers = reg(ExtensionPoint::StorageTransformer, &[]);
    for t in &meta.storage_transformers {
        transformers.resolve(t)?;
    }
    Ok(())
}

/// Fields zarr-python always writes and other writers may leave out.
fn normalize(mut v: Value) -> Value {
    if let Some(o) = v.as_object_mut() {
        o.entry("attributes")
            .or_insert_with(|| Value::Object(Default::default()));
        if o.get("node_type") == Some(&Value::from("array")) {
            o.entry("storage_transformers")
                .or_insert_with(|| Value::Array(vec![]));
        }
    }
    v
}

/// Reject documents whose fault is inside a grid, key encoding or codec configuration, or in
/// the shape of a codec chain: the grid and codec crates refuse those (by name prefix).
const NEEDS_LATER_LAYERS: [&str; 17] = [
    "reject_chunk_rank",
    "reject_zero_chunk",
    "reject_negative_chunk",
    "reject_grid_unknown_config",
    "reject_key_separator",
    "reject_transpose",
    "reject_no_array_to_bytes",
    "reject_two_array_to_bytes",
    "reject_codec_order",
    "reject_bytes_",
    "reject_gzip_",
    "reject_zstd_",
    "reject_blosc_",
    "reject_shard_",
    "reject_unknown_codec_in_shard",
    "rbx_",
    "spx_",
];

#[test]
fn corpus_documents_parse_write_back_and_reject() {
    let corpora = corpora();
    let mut read = 0;
    let mut rejected = 0;
    for dir in &corpora {
        for f in fixtures(dir) {
            let path = f["path"].as_str().unwrap();
            let bytes = std::fs::read(dir.join(path).join("zarr.json")).unwrap();
            let expect = f["expect"].as_str().unwrap();
            let is_group = f["node"] == "group";
            if expect == "reject" {
                if NEEDS_LATER_LAYERS.iter().any(|n| path.starts_with(n)) {
                    continue;
                }
                let outcome = if is_group {
                    GroupMetadata::from_slice(&bytes).map(|_| ())
                } else {
                    ArrayMetadata::from_slice(&bytes).and_then(|m| check_extensions(&m))
                };
                assert!(outcome.is_err(), "{path} should be refused");
                rejected += 1;
                continue;
            }
            let original: Value = serde_json::from_slice(&bytes).unwrap();
            let written = if is_group {
                GroupMetadata::from_slice(&bytes).unwrap().to_value()
            } else {
                let meta =
                    ArrayMetadata::from_slice(&bytes).unwrap_or_else(|e| panic!("{path}: {e}"));
                check_extensions(&meta).unwrap_or_else(|e| panic!("{path}: {e}"));
                let again = ArrayMetadata::from_slice(&meta.to_vec_pretty()).unwrap();
                assert_eq!(again, meta, "{path}");
                meta.to_value()
            };
            let (mut written, mut original) = (written, normalize(original));
            if !is_group {
                // a fill value may be written in another of its JSON forms (a hex bit pattern
                // of a number comes back as the number): compare the element's bits
                let t = ArrayMetadata::from_slice(&bytes).unwrap().data_type;
                for doc in [&mut written, &mut original] {
                    let fill = FillValue::from_json(&doc["fill_value"], t).unwrap();
                    doc["fill_value"] = Value::from(fill.as_bytes().to_vec());
                }
            }
            assert_eq!(written, original, "{path} writes back differently");
            read += 1;
        }
    }
    if !corpora.is_empty() {
        assert!(read > 0 && rejected > 0, "{read} read, {rejected} rejected");
    }
    eprintln!("{read} documents written back equal, {rejected} refused, over {corpora:?}");
}

#[test]
fn refusals_name_the_problem() {
    let base = r#"{"zarr_format": 3, "node_type": "array", "shape": [4, 4], "data_type": "int32",
      "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 2]}},
      "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
      "fill_value": 0, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}"#;
    let with = |k: &str, v: &str| {
        let mut doc: Value = serde_json::from_str(base).unwrap();
        doc[k] = serde_json::from_str(v).unwrap();
        serde_json::to_vec(&doc).unwrap()
    };
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (b"{\"zarr_format\": 3,".to_vec(), "not valid JSON"),
        (with("zarr_format", "2"), "zarr_format 2"),
        (with("shape", "[-4, 4]"), "shape"),
        (with("fill_value", "\"lots\""), "fill_value \"lots\""),
        (
            with("data_type", "\"int33\""),
            "unknown data type \"int33\"",
        ),
        (with("new_core_feature", r#"{"x": 1}"#), "new_core_feature"),
        (with("node_type", "\"group\""), "node_type"),
        (with("codecs", "[]"), "codecs"),
        (with("dimension_names", "[\"a\"]"), "dimension_names"),
        (with("attributes", "[]"), "attributes"),
        (
            with("data_type", r#"{"name": "int32", "must_understand": true}"#),
            "must not carry",
        ),
    ];
    for (doc, needle) in cases {
        let err = zarr_testkit::report(&ArrayMetadata::from_slice(&doc).unwrap_err());
        assert!(err.contains(needle), "{err:?} should mention {needle:?}");
    }
    let grid = with(
        "chunk_grid",
        r#"{"name": "regular", "configuration": {"chunk_shape": [2, 2]}, "must_understand": false}"#,
    );
    let meta = ArrayMetadata::from_slice(&grid).unwrap();
    let err = zarr_testkit::report(&check_extensions(&meta).unwrap_err());
    assert!(err.contains("must not carry"), "{err}");
    let transformer = with("storage_transformers", r#"[{"name": "mystery"}]"#);
    let err = zarr_testkit::report(
        &check_extensions(&ArrayMetadata::from_slice(&transformer).unwrap()).unwrap_err(),
    );
    assert_eq!(err, "unknown storage transformer \"mystery\"");
    let optional = with("new_core_feature", r#"{"x": 1, "must_understand": false}"#);
    let meta = ArrayMetadata::from_slice(&optional).unwrap();
    assert!(meta.to_value().get("new_core_feature").is_some());
}
