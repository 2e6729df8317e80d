//! Zarr v2 arrays and groups through the library: created as zarr-python writes them, read,
//! written, resized and appended with the v3 API, `prepend` refused, and converted to v3 (no
//! chunk rewritten) and back.
// The codecs (cargo features) these tests use; `scripts/check-features` builds them without.
#![cfg(all(
    feature = "zstd",
    feature = "blosc",
    feature = "sharding",
    feature = "numcodecs"
))]

use std::sync::Arc;

use serde_json::{json, Map, Value};
use zarr_array::zarr_codecs::blosc::{BloscCname, BloscConfig, BloscShuffle};
use zarr_array::zarr_codecs::transpose::{TransposeConfig, TransposeOrder};
use zarr_array::{
    Array, ArrayBuilder, ArrayError, BasicItem, DataType, ExtensionDef, Group, NodeKind, Region,
    Selection, Slice,
};
use zarr_meta::data_type::CORE_DATA_TYPES;
use zarr_store::testing::CountingStore;
use zarr_store::{MemoryStore, Store};

fn all(a: &Array) -> Vec<u8> {
    a.read_selection_bytes(&Selection::all()).unwrap()
}

fn text(store: &dyn Store, key: &str) -> String {
    String::from_utf8(store.get(key).unwrap().unwrap()).unwrap()
}

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => unreachable!(),
    }
}

fn f_order() -> TransposeConfig {
    TransposeConfig {
        order: TransposeOrder::Named("F".into()),
    }
}

/// Bytes of `n` elements of `t` (0, 1, 2, ... per byte, bools 0/1).
fn data(n: usize, t: DataType) -> Vec<u8> {
    (0..n * t.size())
        .map(|i| {
            if t == DataType::Bool {
                (i % 2) as u8
            } else {
                (i % 61) as u8
            }
        })
        .collect()
}

#[test]
fn created_v2_arrays_are_what_zarr_python_writes() {
    let store = Arc::new(MemoryStore::new());
    let a = ArrayBuilder::new(vec![20, 13], DataType::Float32)
        .chunk_shape(vec![8, 5])
        .attributes(obj(json!({"units": "m"})))
        .zarr_format(2)
        .create(store.clone(), "a")
        .unwrap();
    assert_eq!(a.zarr_format(), 2);
    // the bytes of zarr-python 3.1.6's `zarr.create_array(..., zarr_format=2)` (its default
    // compressor zstd level 0), as conformance/v2/dtype_default_compressor holds them
    let want = std::fs::read_to_string(
        zarr_testkit::repo_root().join("conformance/v2/dtype_default_compressor/.zarray"),
    )
    .unwrap();
    assert_eq!(text(&*store, "a/.zarray"), want);
    assert_eq!(text(&*store, "a/.zattrs"), "{\n  \"units\": \"m\"\n}");
    assert!(store.get("a/zarr.json").unwrap().is_none());
    a.write_region_bytes(&Region::whole(&[20, 13]), &data(260, DataType::Float32))
        .unwrap();
    assert!(store.get("a/2.2").unwrap().is_some(), "v2 keys with '.'");
    let again = Array::open(store.clone(), "a").unwrap();
    assert_eq!(again.zarr_format(), 2);
    assert_eq!(all(&again), data(260, DataType::Float32));
    assert_eq!(again.attributes()["units"], "m");
}

#[test]
fn every_dtype_order_and_separator_round_trips() {
    let store = Arc::new(MemoryStore::new());
    for (i, t) in CORE_DATA_TYPES.iter().enumerate() {
        for order_f in [false, true] {
            for sep in [".", "/"] {
                let path = format!("a{i}_{order_f}_{}", sep == "/");
                let mut b = ArrayBuilder::new(vec![11, 7], *t)
                    .chunk_shape(vec![4, 3])
                    .key_encoding(ExtensionDef::with_configuration(
                        "v2",
                        obj(json!({"separator": sep})),
                    ))
                    .zarr_format(2);
                if order_f {
                    b = b.filters([f_order()]);
                }
                let a = b.create(store.clone(), &path).unwrap();
                let d = data(77, *t);
                a.write_region_bytes(&Region::whole(&[11, 7]), &d).unwrap();
                let zarray = text(&*store, &format!("{path}/.zarray"));
                assert!(zarray.contains(if order_f { "\"F\"" } else { "\"C\"" }));
                assert!(zarray.contains(&format!("\"dimension_separator\": \"{sep}\"")));
                let key = format!("{path}/2{sep}2");
                assert!(store.get(&key).unwrap().is_some(), "{key}");
                assert_eq!(
                    all(&Array::open(store.clone(), &path).unwrap()),
                    d,
                    "{path}"
                );
            }
        }
    }
}

#[test]
fn selections_resize_append_and_attributes_work_on_v2() {
    let store = Arc::new(MemoryStore::new());
    let mut a = ArrayBuilder::new(vec![6, 4], DataType::Int32)
        .chunk_shape(vec![4, 4])
        .compressors([BloscConfig {
            typesize: None,
            cname: BloscCname::Lz4,
            clevel: 5,
            shuffle: Some(BloscShuffle::Bitshuffle),
            blocksize: 0,
        }])
        .zarr_format(2)
        .create(store.clone(), "a")
        .unwrap();
    let zarray = text(&*store, "a/.zarray");
    assert!(
        zarray.contains("\"id\": \"blosc\"") && zarray.contains("\"shuffle\": 2"),
        "{zarray}"
    );
    let d: Vec<u8> = (0..24i32).flat_map(|v| v.to_le_bytes()).collect();
    a.write_region_bytes(&Region::whole(&[6, 4]), &d).unwrap();
    let sel = Selection::Basic(vec![
        BasicItem::Slice(Slice::with_step(1, 5, 2)),
        BasicItem::Slice(Slice::with_step(0, 4, 3)),
    ]);
    let got = a.read_selection_bytes(&sel).unwrap();
    let want: Vec<u8> = [4i32, 7, 12, 15]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert_eq!(got, want);

    a.append_bytes(&[2, 4], &[1u8; 32], 0).unwrap();
    assert_eq!(a.shape(), &[8, 4]);
    assert!(text(&*store, "a/.zarray").contains("\"shape\": [\n    8,\n    4\n  ]"));
    a.resize(&[3, 4]).unwrap();
    assert!(text(&*store, "a/.zarray").contains("\"shape\": [\n    3,\n    4\n  ]"));
    assert!(
        store.get("a/1.0").unwrap().is_none(),
        "the chunk outside is deleted"
    );
    a.update_attributes(obj(json!({"k": [1, 2]}))).unwrap();
    assert_eq!(
        Array::open(store.clone(), "a").unwrap().attributes()["k"],
        json!([1, 2])
    );
    assert!(store.get("a/zarr.json").unwrap().is_none());

    // prepend: refused, with the way out in the message
    let err = a.prepend_bytes(&[1, 4], &[0u8; 16], 0).unwrap_err();
    assert!(
        matches!(
            err,
            ArrayError::NeedsV3 {
                operation: "prepend",
                ..
            }
        ),
        "{err}"
    );
    assert!(
        err.to_string().contains("convert it to Zarr v3 first"),
        "{err}"
    );
    assert_eq!(Array::open(store.clone(), "a").unwrap().shape(), &[3, 4]);
}

#[test]
fn v2_groups_open_list_and_hold_v2_children() {
    let store = Arc::new(MemoryStore::new());
    let root = Group::create_v2(store.clone(), "", obj(json!({"title": "t"}))).unwrap();
    let sub = root.create_group("sub", Map::new()).unwrap();
    assert_eq!(sub.zarr_format(), 2);
    assert!(store.get("sub/.zgroup").unwrap().is_some());
    sub.create_array(
        "x",
        &ArrayBuilder::new(vec![3], DataType::UInt8).zarr_format(2),
    )
    .unwrap();
    // a v3 child in a v2 group (asked for) is listed too
    root.create_array(
        "y",
        &ArrayBuilder::new(vec![3], DataType::UInt8).zarr_format(3),
    )
    .unwrap();
    let root = Group::open(store.clone(), "").unwrap();
    assert_eq!(root.zarr_format(), 2);
    assert_eq!(root.attributes()["title"], "t");
    assert_eq!(
        root.members().unwrap(),
        vec![
            ("sub".into(), NodeKind::Group),
            ("y".into(), NodeKind::Array)
        ]
    );
    assert_eq!(
        root.open_group("sub").unwrap().members().unwrap(),
        vec![("x".into(), NodeKind::Array)]
    );
    let err = Array::open(store.clone(), "sub").unwrap_err();
    assert!(
        matches!(err, ArrayError::WrongNodeType { found: "group", .. }),
        "{err}"
    );
    let err = Group::open(store.clone(), "sub/x").unwrap_err();
    assert!(
        matches!(err, ArrayError::WrongNodeType { found: "array", .. }),
        "{err}"
    );
    let err = Group::create(store.clone(), "sub", Map::new()).unwrap_err();
    assert!(matches!(err, ArrayError::AlreadyExists { .. }), "{err}");
}

/// Issue 38 (14): the children a v2 group creates are v2 unless asked otherwise (a v3
/// child is not in the group's `.zmetadata`, nor in zarr-python's view of the group), and a
/// v3 group's children v3 unless asked otherwise.
#[test]
fn children_follow_their_group_s_format_unless_asked_otherwise() {
    let store = Arc::new(MemoryStore::new());
    let mut root = Group::create_v2(store.clone(), "", Map::new()).unwrap();
    let plain = ArrayBuilder::new(vec![4], DataType::Int16);
    let a = root.create_array("a", &plain).unwrap();
    assert_eq!(a.zarr_format(), 2);
    assert!(store.get("a/.zarray").unwrap().is_some());
    assert!(store.get("a/zarr.json").unwrap().is_none());
    let sub = root.create_group("sub", Map::new()).unwrap();
    assert_eq!(sub.create_array("b", &plain).unwrap().zarr_format(), 2);
    let v3 = root.create_group_format("v3", Map::new(), Some(3)).unwrap();
    assert_eq!(v3.zarr_format(), 3);
    assert!(store.get("v3/zarr.json").unwrap().is_some());
    assert_eq!(v3.create_array("c", &plain).unwrap().zarr_format(), 3);
    assert_eq!(
        v3.create_group_format("d", Map::new(), Some(2))
            .unwrap()
            .zarr_format(),
        2
    );
    assert_eq!(
        root.create_array("e", &plain.clone().zarr_format(3))
            .unwrap()
            .zarr_format(),
        3
    );
    let err = root
        .create_group_format("f", Map::new(), Some(4))
        .unwrap_err();
    assert!(matches!(err, ArrayError::InvalidArgument { .. }), "{err}");
    root.consolidate().unwrap();
    let zmetadata: Value =
        serde_json::from_slice(&store.get(".zmetadata").unwrap().unwrap()).unwrap();
    let keys: Vec<&String> = zmetadata["metadata"].as_object().unwrap().keys().collect();
    for key in ["a/.zarray", "sub/.zgroup", "sub/b/.zarray"] {
        assert!(keys.iter().any(|k| *k == key), "{key} in {keys:?}");
    }
    let v3_root = Group::create(store.clone(), "three", Map::new()).unwrap();
    assert_eq!(v3_root.create_array("x", &plain).unwrap().zarr_format(), 3);
    assert_eq!(
        v3_root.create_group("y", Map::new()).unwrap().zarr_format(),
        3
    );
}

#[test]
fn to_v3_rewrites_no_chunk_and_reads_equal() {
    let counting = Arc::new(CountingStore::new(MemoryStore::new()));
    let store: Arc<dyn Store> = counting.clone();
    let a = ArrayBuilder::new(vec![20, 13], DataType::Int16)
        .chunk_shape(vec![8, 5])
        .filters([f_order()])
        .key_encoding(ExtensionDef::with_configuration(
            "v2",
            obj(json!({"separator": "/"})),
        ))
        .attributes(obj(json!({"a": 1})))
        .zarr_format(2)
        .create(store.clone(), "a")
        .unwrap();
    let d = data(260, DataType::Int16);
    a.write_region_bytes(&Region::whole(&[20, 13]), &d).unwrap();
    let keys_before = counting.inner().list_prefix("").unwrap();

    counting.reset();
    let beside = a.to_v3(false).unwrap();
    let counts = counting.counts();
    assert_eq!(
        (counts.set, counts.delete, beside.chunks_moved),
        (1, 0, 0),
        "{counts:?}"
    );
    let v3 = Array::open(store.clone(), "a").unwrap();
    assert_eq!(v3.zarr_format(), 3, "zarr.json is opened first");
    assert_eq!(v3.attributes()["a"], 1);
    assert_eq!(all(&v3), d);
    let names: Vec<&str> = v3
        .metadata()
        .codecs
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(names, ["transpose", "bytes", "zstd"]);
    assert_eq!(v3.metadata().chunk_key_encoding.name, "v2");

    counting.reset();
    a.to_v3(true).unwrap();
    let counts = counting.counts();
    // zarr.json again, and .zarray and .zattrs deleted: no chunk touched
    assert_eq!((counts.set, counts.delete), (1, 2), "{counts:?}");
    let mut keys_after = counting.inner().list_prefix("").unwrap();
    keys_after.push("a/.zarray".into());
    keys_after.push("a/.zattrs".into());
    keys_after.retain(|k| k != "a/zarr.json");
    keys_after.sort();
    let mut keys_before = keys_before;
    keys_before.sort();
    assert_eq!(keys_after, keys_before);
    assert_eq!(all(&Array::open(store.clone(), "a").unwrap()), d);
}

#[test]
fn to_v2_moves_default_keys_and_refuses_what_v2_cannot_hold() {
    let store = Arc::new(MemoryStore::new());
    let a = ArrayBuilder::new(vec![8, 6], DataType::Float64)
        .chunk_shape(vec![4, 3])
        .create(store.clone(), "a")
        .unwrap();
    let d = data(48, DataType::Float64);
    a.write_region_bytes(&Region::whole(&[8, 6]), &d).unwrap();
    let conv = a.to_v2(true).unwrap();
    assert_eq!(conv.chunks_moved, 4);
    assert!(store.get("a/zarr.json").unwrap().is_none());
    assert!(store.get("a/c/0/0").unwrap().is_none());
    assert!(
        store.get("a/0/0").unwrap().is_some(),
        "default '/' keys keep their separator"
    );
    let v2 = Array::open(store.clone(), "a").unwrap();
    assert_eq!((v2.zarr_format(), all(&v2)), (2, d.clone()));
    // and back to v3: the same v2 keys, nothing moves
    let back = v2.to_v3(true).unwrap();
    assert_eq!(back.chunks_moved, 0);
    assert_eq!(all(&Array::open(store.clone(), "a").unwrap()), d);

    let sharded = ArrayBuilder::new(vec![8, 8], DataType::UInt8)
        .chunk_shape(vec![2, 2])
        .shards(vec![4, 4])
        .create(store.clone(), "s")
        .unwrap();
    let err = sharded.to_v2(true).unwrap_err();
    assert!(
        zarr_testkit::report(&err).contains("sharding_indexed"),
        "{err}"
    );
    assert!(store.get("s/.zarray").unwrap().is_none(), "nothing written");
    let named = ArrayBuilder::new(vec![4], DataType::UInt8)
        .dimension_names(vec![Some("x".into())])
        .create(store.clone(), "n")
        .unwrap();
    let err = named.to_v2(false).unwrap_err();
    assert!(matches!(&err, ArrayError::NoV2Form { feature, .. } if feature == "dimension_names"));
    let err = ArrayBuilder::new(vec![4], DataType::UInt8)
        .shards(vec![4])
        .chunk_shape(vec![2])
        .zarr_format(2)
        .create(store.clone(), "z")
        .unwrap_err();
    assert!(
        zarr_testkit::report(&err).contains("no Zarr v2 form"),
        "{err}"
    );
}

#[test]
fn a_reader_without_a_codec_refuses_v2_arrays_by_name() {
    let store = Arc::new(MemoryStore::new());
    ArrayBuilder::new(vec![4], DataType::Int32)
        .compressors([ExtensionDef::with_configuration(
            "numcodecs.zlib",
            obj(json!({"level": 1})),
        )])
        .zarr_format(2)
        .create(store.clone(), "a")
        .unwrap();
    assert!(text(&*store, "a/.zarray").contains("\"id\": \"zlib\""));
    let without = zarr_array::Extensions::default().without("zlib");
    let err = Array::open_with(store.clone(), "a", &without).unwrap_err();
    assert!(zarr_testkit::report(&err).contains("\"zlib\""), "{err}");
    store
        .set(
            "a/.zarray",
            text(&*store, "a/.zarray")
                .replace("zlib", "mystery")
                .as_bytes(),
        )
        .unwrap();
    let err = Array::open(store.clone(), "a").unwrap_err();
    assert_eq!(
        zarr_testkit::report(&err),
        "a/.zarray: unknown codec \"mystery\""
    );
}

/// A `null` fill value reads as zarr-python 3.1.6 reads a missing chunk: NaT for datetimes and
/// timedeltas (not the epoch), zero for the other types.
#[test]
fn a_null_fill_value_reads_as_nat_for_datetimes() {
    let store = Arc::new(MemoryStore::new());
    for (i, (dtype, want)) in [
        ("<M8[s]", i64::MIN),
        (">M8[D]", i64::MIN),
        ("<m8[ms]", i64::MIN),
        ("<i8", 0),
    ]
    .into_iter()
    .enumerate()
    {
        let path = format!("t{i}");
        let zarray = json!({"zarr_format": 2, "shape": [3], "chunks": [2], "dtype": dtype,
            "compressor": null, "fill_value": null, "order": "C", "filters": null});
        store
            .set(&format!("{path}/.zarray"), zarray.to_string().as_bytes())
            .unwrap();
        let a = Array::open(store.clone(), &path).unwrap();
        let want: Vec<u8> = [want; 3].iter().flat_map(|v| v.to_ne_bytes()).collect();
        assert_eq!(all(&a), want, "{dtype}");
        // and its v3 form has that fill value
        assert_eq!(a.metadata().fill_value.as_bytes(), &want[..8], "{dtype}");
    }
}

/// Filters that change only the byte order, as zarr-python 3.1.6 writes them: the stored
/// chunk is in the byte order of the last `astype`, reads and writes match it, and a
/// conversion to v3 and back writes the same `.zarray` dtype (the one the first filter views);
/// a filter that would reinterpret the bytes is refused when the array is opened.
#[test]
fn v2_filters_that_change_the_byte_order() {
    let store = Arc::new(MemoryStore::new());
    // a <i8 array stored as >i4 (numcodecs.AsType(encode_dtype=">i4", decode_dtype="<i8"))
    let zarray = json!({"zarr_format": 2, "shape": [4], "chunks": [4], "dtype": "<i8",
        "compressor": null, "fill_value": 0, "order": "C",
        "filters": [{"id": "astype", "encode_dtype": ">i4", "decode_dtype": "<i8"}]});
    store
        .set("a/.zarray", zarray.to_string().as_bytes())
        .unwrap();
    // what zarr-python stores for [1, -2, 70000, 4]
    let stored = [0, 0, 0, 1, 255, 255, 255, 254, 0, 1, 17, 112, 0, 0, 0, 4u8];
    store.set("a/0", &stored).unwrap();
    let values: Vec<u8> = [1i64, -2, 70000, 4]
        .iter()
        .flat_map(|v| v.to_ne_bytes())
        .collect();
    let a = Array::open(store.clone(), "a").unwrap();
    assert_eq!(all(&a), values);
    a.write_region_bytes(&Region::new(vec![0], vec![4]).unwrap(), &values)
        .unwrap();
    assert_eq!(store.get("a/0").unwrap().unwrap(), stored);
    let v3 = a.to_v3(true).unwrap().array;
    let v2 = v3.to_v2(true).unwrap().array;
    assert_eq!(all(&v2), values);
    let doc: Value = serde_json::from_str(&text(&*store, "a/.zarray")).unwrap();
    assert_eq!(doc["dtype"], "<i8");
    assert_eq!(doc["filters"], zarray["filters"]);
    assert_eq!(store.get("a/0").unwrap().unwrap(), stored);
    // Delta(dtype="<i4") on a >i4 array: numcodecs views the big-endian bytes as little-endian
    let zarray = json!({"zarr_format": 2, "shape": [4], "chunks": [4], "dtype": ">i4",
        "compressor": null, "fill_value": 0, "order": "C",
        "filters": [{"id": "delta", "dtype": "<i4"}]});
    store
        .set("b/.zarray", zarray.to_string().as_bytes())
        .unwrap();
    let err = zarr_testkit::report(&Array::open(store.clone(), "b").unwrap_err());
    assert!(
        err.starts_with("b/.zarray: v2 filter \"delta\" views the big-endian values")
            && err.contains("reinterpreting their bytes"),
        "{err}"
    );
}
