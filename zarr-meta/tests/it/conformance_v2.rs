//! Every v2 document of the conformance corpora `conformance/v2` and `conformance/xarray`
//! (`.zarray`, `.zgroup`, `.zattrs`, `.zmetadata`, and the v3 `zarr.json` of the xarray
//! hierarchies with their `consolidated_metadata`) parses and writes back: byte for byte what
//! zarr-python 3.1.6 wrote, and for hand-written documents (Python's `json.dumps`, not
//! zarr-python's key order) the same JSON value up to what zarr-python normalises too
//! (see `normalised`). Every `reject` fixture is refused, except those whose fault lies inside
//! a codec configuration (`reject_codec_*`), which the codecs crate refuses when it builds the
//! codec.

use std::path::{Path, PathBuf};

use serde_json::Value;
use zarr_meta::v2::{ArrayMetadataV2, Attributes, ConsolidatedMetadataV2, GroupMetadataV2};
use zarr_meta::GroupMetadata;

fn corpus(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../conformance")
        .join(name);
    assert!(
        dir.join("manifest.json").is_file(),
        "the conformance corpus is missing: {}",
        dir.display()
    );
    dir
}

fn fixtures(dir: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
    let m: Value = serde_json::from_str(&text).unwrap();
    m["fixtures"].as_array().cloned().unwrap()
}

fn read(path: &Path) -> Option<Vec<u8>> {
    match std::fs::read(path) {
        Ok(b) => Some(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => panic!("{}: {e}", path.display()),
    }
}

fn json(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap()
}

/// What zarr-python 3.1.6 changes when it reads a document and writes it back, applied to a
/// hand-written `.zarray`: it adds `dimension_separator` (`"."`) when absent, reads
/// `filters: []` as `null`, and writes an integral float fill value of an integer type as
/// the integer (`5.0` -> `5`). Key order is not compared for hand-written documents.
fn normalised(mut doc: Value) -> Value {
    let o = doc.as_object_mut().unwrap();
    o.entry("dimension_separator").or_insert(".".into());
    if o.get("filters")
        .and_then(Value::as_array)
        .is_some_and(Vec::is_empty)
    {
        o.insert("filters".into(), Value::Null);
    }
    let integer = o["dtype"]
        .as_str()
        .is_some_and(|d| d.contains('i') || d.contains('u'));
    if let Some(f) = o["fill_value"].as_f64().filter(|_| integer) {
        if o["fill_value"].is_f64() && f.fract() == 0.0 {
            o.insert("fill_value".into(), Value::from(f as i64));
        }
    }
    doc
}

/// Parses and writes back every v2 document of one node; returns how many documents.
fn round_trip_node(dir: &Path, fx: &Value) -> usize {
    let path = fx["path"].as_str().unwrap();
    let node = dir.join(path);
    let exact = fx["writer"] != "hand-written";
    let mut n = 0;
    let check = |name: &str, original: &[u8], written: Vec<u8>| {
        if exact {
            assert_eq!(
                String::from_utf8_lossy(&written),
                String::from_utf8_lossy(original),
                "{path}/{name}: written back differently"
            );
        } else {
            assert_eq!(
                json(&written),
                normalised_for(name, json(original)),
                "{path}/{name}: written back to another value"
            );
        }
    };
    if fx["node"] == "array" {
        let bytes = read(&node.join(".zarray")).unwrap();
        let meta =
            ArrayMetadataV2::from_slice(&bytes).unwrap_or_else(|e| panic!("{path}/.zarray: {e}"));
        let written = meta.to_vec_pretty();
        assert_eq!(
            ArrayMetadataV2::from_slice(&written).unwrap(),
            meta,
            "{path}"
        );
        check(".zarray", &bytes, written);
        n += 1;
    } else {
        let bytes = read(&node.join(".zgroup")).unwrap();
        let meta =
            GroupMetadataV2::from_slice(&bytes).unwrap_or_else(|e| panic!("{path}/.zgroup: {e}"));
        check(".zgroup", &bytes, meta.to_vec_pretty());
        n += 1;
        if let Some(bytes) = read(&node.join(".zmetadata")) {
            n += round_trip_zmetadata(path, &bytes, exact);
        }
    }
    if let Some(bytes) = read(&node.join(".zattrs")) {
        let attrs =
            Attributes::from_slice(&bytes).unwrap_or_else(|e| panic!("{path}/.zattrs: {e}"));
        check(".zattrs", &bytes, attrs.to_vec_pretty());
        n += 1;
    }
    n
}

fn normalised_for(name: &str, doc: Value) -> Value {
    if name == ".zarray" {
        normalised(doc)
    } else {
        doc
    }
}

/// `.zmetadata`: the envelope writes back exactly, and every member parses and writes back
/// to the value it had (members are compact JSON inside one line, so values are compared).
fn round_trip_zmetadata(path: &str, bytes: &[u8], exact: bool) -> usize {
    let c = ConsolidatedMetadataV2::from_slice(bytes)
        .unwrap_or_else(|e| panic!("{path}/.zmetadata: {e}"));
    if exact {
        assert_eq!(
            String::from_utf8_lossy(&c.to_vec()),
            String::from_utf8_lossy(bytes),
            "{path}/.zmetadata: written back differently"
        );
    }
    let mut n = 1;
    let paths: Vec<&str> = c.node_paths().collect();
    assert!(paths.contains(&""), "{path}/.zmetadata: no root group");
    for p in paths {
        let key = |name: &str| {
            if p.is_empty() {
                name.to_string()
            } else {
                format!("{p}/{name}")
            }
        };
        if let Some(a) = c.array(p) {
            let a = a.unwrap_or_else(|e| panic!("{path}/.zmetadata {p}: {e}"));
            assert_eq!(a.to_value(), c.metadata[&key(".zarray")], "{path} {p}");
        } else {
            let g = c
                .group(p)
                .unwrap()
                .unwrap_or_else(|e| panic!("{path} {p}: {e}"));
            assert_eq!(g.to_value(), c.metadata[&key(".zgroup")], "{path} {p}");
        }
        if let Some(a) = c.attributes(p) {
            assert_eq!(a.unwrap().to_value(), c.metadata[&key(".zattrs")]);
        }
        n += 1;
    }
    n
}

/// The same JSON with the same key order (the v3 writer of this crate writes UTF-8 where
/// Python writes `\uXXXX` escapes, so v3 documents are compared through this).
fn same_json(a: &[u8], b: &[u8]) -> bool {
    serde_json::to_string(&json(a)).unwrap() == serde_json::to_string(&json(b)).unwrap()
}

/// The `zarr.json` of a v3 group written by zarr-python (xarray's, with consolidated
/// metadata): parses and writes back the same JSON, key order included.
fn round_trip_v3_group(dir: &Path, fx: &Value) -> usize {
    let path = fx["path"].as_str().unwrap();
    let bytes = read(&dir.join(path).join("zarr.json")).unwrap();
    let g = GroupMetadata::from_slice(&bytes).unwrap_or_else(|e| panic!("{path}: {e}"));
    let written = g.to_vec_pretty();
    assert!(
        same_json(&written, &bytes),
        "{path}/zarr.json: written back differently:\n{}",
        String::from_utf8_lossy(&written)
    );
    1
}

/// A `reject` fixture: at least one of its documents is refused.
fn refused(dir: &Path, fx: &Value) -> Result<(), String> {
    let path = fx["path"].as_str().unwrap();
    let node = dir.join(path);
    let mut errors = Vec::new();
    if let Some(b) = read(&node.join(".zarray")) {
        errors.extend(ArrayMetadataV2::from_slice(&b).err());
    }
    if let Some(b) = read(&node.join(".zgroup")) {
        errors.extend(GroupMetadataV2::from_slice(&b).err());
    }
    if let Some(b) = read(&node.join(".zattrs")) {
        errors.extend(Attributes::from_slice(&b).err());
    }
    if let Some(b) = read(&node.join(".zmetadata")) {
        match ConsolidatedMetadataV2::from_slice(&b) {
            Err(e) => errors.push(e),
            Ok(c) => {
                for p in c.node_paths().collect::<Vec<_>>() {
                    errors.extend(c.array(p).and_then(Result::err));
                    errors.extend(c.group(p).and_then(Result::err));
                    errors.extend(c.attributes(p).and_then(Result::err));
                }
            }
        }
    }
    match errors.first() {
        Some(e) => {
            let text = e.to_string();
            assert!(!text.is_empty(), "{path}: an error without a message");
            Ok(())
        }
        None => Err(path.to_string()),
    }
}

#[test]
fn v2_corpus_round_trips_and_refuses_the_rejects() {
    let dir = corpus("v2");
    let (mut docs, mut rejected, mut codec_level) = (0, 0, 0);
    let mut accepted = Vec::new();
    for fx in fixtures(&dir) {
        assert_eq!(fx["zarr_format"], 2, "{fx}");
        let path = fx["path"].as_str().unwrap();
        if fx["expect"] == "read" {
            docs += round_trip_node(&dir, &fx);
        } else if path.starts_with("reject_codec_") {
            // the documents are sound; the codec configuration is not (zarr-codecs' job)
            round_trip_node(&dir, &fx);
            codec_level += 1;
        } else {
            match refused(&dir, &fx) {
                Ok(()) => rejected += 1,
                Err(p) => accepted.push(p),
            }
        }
    }
    assert!(
        accepted.is_empty(),
        "reject fixtures accepted: {accepted:?}"
    );
    assert!(docs > 250, "only {docs} documents");
    assert!(rejected > 40, "only {rejected} rejects");
    assert_eq!(codec_level, 4);
}

#[test]
fn xarray_corpus_round_trips() {
    let dir = corpus("xarray");
    let (mut v2, mut v3, mut zmetadata) = (0, 0, 0);
    for fx in fixtures(&dir) {
        assert_eq!(fx["expect"], "read");
        match fx["zarr_format"].as_u64() {
            Some(2) => {
                v2 += round_trip_node(&dir, &fx);
                let p = dir.join(fx["path"].as_str().unwrap()).join(".zmetadata");
                zmetadata += usize::from(p.is_file());
            }
            Some(3) if fx["node"] == "group" => v3 += round_trip_v3_group(&dir, &fx),
            Some(3) => {} // v3 arrays: conformance.rs's kind of check, done below
            other => panic!("{fx}: zarr_format {other:?}"),
        }
    }
    assert!(v2 > 30 && v3 >= 3, "{v2} v2 and {v3} v3 documents");
    assert_eq!(
        zmetadata, 4,
        "weather_v2, packed_v2, labels_v2 and nested_v2 are consolidated"
    );
}

/// The v3 arrays of the xarray hierarchies, and the members of their consolidated metadata,
/// parse; the members write back to the documents they were.
#[test]
fn xarray_v3_arrays_parse() {
    let dir = corpus("xarray");
    let mut n = 0;
    for fx in fixtures(&dir) {
        if fx["zarr_format"] != 3 {
            continue;
        }
        let path = fx["path"].as_str().unwrap();
        let bytes = read(&dir.join(path).join("zarr.json")).unwrap();
        if fx["node"] == "array" {
            let meta = zarr_meta::ArrayMetadata::from_slice(&bytes)
                .unwrap_or_else(|e| panic!("{path}: {e}"));
            assert!(same_json(&meta.to_vec_pretty(), &bytes), "{path}");
            n += 1;
        } else if let Some(c) = GroupMetadata::from_slice(&bytes)
            .unwrap()
            .consolidated_metadata()
            .unwrap()
        {
            let registry = zarr_meta::data_type::default_registry();
            for (member, doc) in &json(&bytes)["consolidated_metadata"]["metadata"]
                .as_object()
                .unwrap()
                .clone()
            {
                let node = c
                    .node(member, &registry)
                    .unwrap_or_else(|| panic!("{path}: no member {member}"))
                    .unwrap_or_else(|e| panic!("{path} {member}: {e}"));
                let written = match node {
                    zarr_meta::NodeMetadata::Array(a) => json(&a.to_vec_pretty()),
                    zarr_meta::NodeMetadata::Group(g) => json(&g.to_vec_pretty()),
                };
                assert_eq!(&written, doc, "{path}: member {member}");
                n += 1;
            }
        }
    }
    assert!(n > 20, "only {n}");
}
