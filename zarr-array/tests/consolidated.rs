//! Consolidated metadata (a group's copy of its hierarchy's metadata): opening through it
//! costs the root's `zarr.json` alone, every metadata change made through this crate keeps it
//! true, `check_consolidated` finds a stale copy; and listings that keep going past children
//! this build cannot read.
#![cfg(all(feature = "zstd", feature = "sparse"))]

use std::sync::Arc;

use ndarray::{ArrayD, IxDyn};
use serde_json::{json, Map, Value};
use zarr_array::zarr_layout_sparse::Format;
use zarr_array::zarr_meta::GroupMetadata;
use zarr_array::{
    ArrayBuilder, ArrayError, DataType, Disagreement, Extensions, Group, NodeKind, UseConsolidated,
};
use zarr_store::testing::CountingStore;
use zarr_store::{MemoryStore, Store};

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn attrs(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// The consolidated copy in the store's root `zarr.json`, as a path -> document map.
fn stored_copy(store: &dyn Store) -> Result<Map<String, Value>, Box<dyn std::error::Error>> {
    let bytes = store.get("zarr.json")?.ok_or("no root zarr.json")?;
    let root = GroupMetadata::from_slice(&bytes)?;
    Ok(root
        .consolidated_metadata()?
        .ok_or("the root holds no consolidated metadata")?
        .metadata)
}

/// A root with `sub/` (a group), `sub/x` and `y`, consolidated.
fn small_hierarchy(store: Arc<dyn Store>) -> Result<Group, ArrayError> {
    let mut root = Group::create(store, "", attrs(json!({"title": "t"})))?;
    let sub = root.create_group("sub", attrs(json!({"k": 1})))?;
    sub.create_array(
        "x",
        &ArrayBuilder::new(vec![4], DataType::Int32).chunk_shape(vec![2]),
    )?;
    root.create_array(
        "y",
        &ArrayBuilder::new(vec![3, 2], DataType::Float64)
            .chunk_shape(vec![2, 2])
            .attributes(attrs(json!({"units": "m"}))),
    )?;
    root.consolidate()?;
    Ok(root)
}

#[test]
fn a_consolidated_hierarchy_opens_from_the_root_alone() -> TestResult {
    let counting = Arc::new(CountingStore::new(MemoryStore::new()));
    let store: Arc<dyn Store> = counting.clone();
    small_hierarchy(store.clone())?;
    let copy = stored_copy(&*store)?;
    assert_eq!(
        copy.keys().collect::<Vec<_>>(),
        ["sub", "y", "sub/x"],
        "zarr-python's order: by depth, then by name"
    );
    // the member group's own zarr.json keeps no copy
    let sub_doc: Value = serde_json::from_slice(&store.get("sub/zarr.json")?.ok_or("sub")?)?;
    assert!(sub_doc.get("consolidated_metadata").is_none(), "{sub_doc}");

    counting.reset();
    let root = Group::open(store.clone(), "")?;
    assert!(root.is_consolidated());
    let members = root.members()?;
    assert_eq!(
        members,
        [
            ("sub".to_string(), NodeKind::Group),
            ("y".to_string(), NodeKind::Array)
        ]
    );
    let all = root.members_recursive()?;
    let paths: Vec<&str> = all.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(paths, ["sub", "sub/x", "y"]);
    let x = root.open_array("sub/x")?;
    assert_eq!(x.shape(), [4]);
    let y = root.open_array("y")?;
    assert_eq!(y.attributes()["units"], "m");
    let sub = root.open_group("sub")?;
    assert_eq!(sub.attributes()["k"], 1);
    assert_eq!(sub.members()?, [("x".to_string(), NodeKind::Array)]);
    assert_eq!(sub.open_array("x")?.shape(), [4]);
    let c = counting.counts();
    assert_eq!(
        (c.get, c.total()),
        (1, 1),
        "the root's zarr.json alone: {c:?}"
    );

    // Ignoring the copy reads every member's own zarr.json, and lists.
    counting.reset();
    let plain = Group::open_consolidated(
        store.clone(),
        "",
        &Extensions::default(),
        UseConsolidated::Ignore,
    )?;
    assert!(!plain.is_consolidated());
    assert_eq!(plain.members()?, members);
    assert_eq!(plain.members_recursive()?, all);
    let c = counting.counts();
    assert!(c.list_dir >= 2 && c.get > 1, "{c:?}");

    // Requiring a copy where there is none is refused by name.
    let bare: Arc<dyn Store> = Arc::new(MemoryStore::new());
    Group::create(bare.clone(), "", Map::new())?;
    let err = Group::open_consolidated(bare, "", &Extensions::default(), UseConsolidated::Require)
        .unwrap_err();
    assert!(
        matches!(err, ArrayError::NoConsolidatedMetadata { .. }),
        "{err}"
    );
    Ok(())
}

#[test]
fn metadata_changes_keep_the_copy_true() -> TestResult {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    small_hierarchy(store.clone())?;
    let root = Group::open(store.clone(), "")?;

    // append through an array opened from the copy: its zarr.json, then the copy
    let mut x = root.open_array("sub/x")?;
    x.append(ArrayD::from_elem(IxDyn(&[3]), 7i32).view(), 0)?;
    assert_eq!(stored_copy(&*store)?["sub/x"]["shape"], json!([7]));
    assert_eq!(
        root.open_array("sub/x")?.shape(),
        [7],
        "the open root sees it too"
    );
    assert_eq!(
        zarr_array::Array::open(store.clone(), "sub/x")?.shape(),
        [7],
        "the array's own zarr.json"
    );

    // resize and attributes through an array opened directly (no group in sight)
    let mut y = zarr_array::Array::open(store.clone(), "y")?;
    y.resize(&[5, 2])?;
    y.update_attributes(attrs(json!({"units": "km"})))?;
    let copy = stored_copy(&*store)?;
    assert_eq!(copy["y"]["shape"], json!([5, 2]));
    assert_eq!(copy["y"]["attributes"]["units"], "km");

    // a member group's attributes; a new group, a new array, below a member group
    let mut sub = root.open_group("sub")?;
    sub.set_attributes(attrs(json!({"k": 2})))?;
    let deep = sub.create_group("deep", Map::new())?;
    deep.create_array("z", &ArrayBuilder::new(vec![2], DataType::UInt8))?;
    let copy = stored_copy(&*store)?;
    assert_eq!(copy["sub"]["attributes"]["k"], 2);
    assert_eq!(
        copy["sub"]["consolidated_metadata"]["metadata"],
        json!({}),
        "a member group's entry carries an empty copy, as zarr-python writes it"
    );
    assert_eq!(copy["sub/deep"]["node_type"], "group");
    assert_eq!(copy["sub/deep/z"]["shape"], json!([2]));
    assert!(
        root.members_recursive()?
            .iter()
            .any(|(p, _)| p == "sub/deep/z"),
        "the open root lists a member created through it"
    );
    let sub_doc: Value = serde_json::from_slice(&store.get("sub/zarr.json")?.ok_or("sub")?)?;
    assert!(sub_doc.get("consolidated_metadata").is_none(), "{sub_doc}");

    // the root's own attributes keep the copy as the store has it
    let mut stale_root = Group::open(store.clone(), "")?;
    root.open_array("y")?.resize(&[6, 2])?;
    stale_root.set_attributes(attrs(json!({"title": "u"})))?;
    let copy = stored_copy(&*store)?;
    assert_eq!(
        copy["y"]["shape"],
        json!([6, 2]),
        "not undone by the root's write"
    );

    // deleting a member removes it and everything below it from the copy
    root.delete_member("sub")?;
    let copy = stored_copy(&*store)?;
    assert_eq!(copy.keys().collect::<Vec<_>>(), ["y"]);
    assert_eq!(root.members()?, [("y".to_string(), NodeKind::Array)]);
    assert!(store.get("sub/x/zarr.json")?.is_none());

    // after all that, the copy agrees with every member's own metadata
    assert_eq!(Group::open(store.clone(), "")?.check_consolidated()?, []);
    Ok(())
}

#[test]
fn a_stale_copy_is_reported_and_consolidate_repairs_it() -> TestResult {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    small_hierarchy(store.clone())?;
    // another writer changes y's own zarr.json, adds a node and removes one, copy untouched
    let mut y: Value = serde_json::from_slice(&store.get("y/zarr.json")?.ok_or("y")?)?;
    y["shape"] = json!([9, 2]);
    store.set("y/zarr.json", &serde_json::to_vec(&y)?)?;
    let sub: Value = serde_json::from_slice(&store.get("sub/zarr.json")?.ok_or("sub")?)?;
    store.set("w/zarr.json", &serde_json::to_vec(&sub)?)?;
    store.delete_prefix("sub/x/")?;

    let mut root = Group::open(store.clone(), "")?;
    assert_eq!(
        root.open_array("y")?.shape(),
        [3, 2],
        "the copy is trusted, as zarr-python trusts it"
    );
    let found = root.check_consolidated()?;
    assert_eq!(
        found,
        [
            Disagreement::Differs {
                path: "y".into(),
                fields: vec!["shape".into()]
            },
            Disagreement::Missing {
                path: "sub/x".into()
            },
            Disagreement::Unlisted { path: "w".into() },
        ],
        "in the copy's order, then the unlisted ones"
    );
    root.consolidate()?;
    assert_eq!(root.check_consolidated()?, []);
    assert_eq!(root.open_array("y")?.shape(), [9, 2]);
    assert_eq!(
        stored_copy(&*store)?.keys().collect::<Vec<_>>(),
        ["sub", "w", "y"]
    );
    Ok(())
}

/// A hierarchy holding an array with a codec nobody knows, a sparse array, a broken
/// document and a plain array.
fn mixed_hierarchy(store: &Arc<dyn Store>) -> TestResult {
    let root = Group::create(store.clone(), "", Map::new())?;
    root.create_array("plain", &ArrayBuilder::new(vec![4], DataType::UInt8))?;
    root.create_array(
        "sparse",
        &ArrayBuilder::new(vec![8, 8], DataType::Float64)
            .chunk_shape(vec![4, 4])
            .sparse(Format::Coo),
    )?;
    let mut odd: Value = serde_json::from_slice(&store.get("plain/zarr.json")?.ok_or("plain")?)?;
    odd["codecs"]
        .as_array_mut()
        .ok_or("codecs")?
        .push(json!({"name": "no_such_codec", "configuration": {}}));
    store.set("odd/zarr.json", &serde_json::to_vec(&odd)?)?;
    store.set(
        "broken/zarr.json",
        b"{\"zarr_format\": 3, \"node_type\": \"array\"",
    )?;
    root.create_group("g", Map::new())?
        .create_array("inner", &ArrayBuilder::new(vec![2], DataType::UInt8))?;
    Ok(())
}

fn reason_of(members: &[(String, NodeKind)], name: &str) -> String {
    match members.iter().find(|(n, _)| n == name) {
        Some((_, NodeKind::Unreadable { reason })) => zarr_array::report(&**reason),
        other => panic!("{name}: expected an unreadable member, got {other:?}"),
    }
}

#[test]
fn listings_report_children_this_build_cannot_read() -> TestResult {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    mixed_hierarchy(&store)?;
    let without_sparse = Extensions::default().without("sparse_layout");
    for consolidated in [false, true] {
        if consolidated {
            Group::open(store.clone(), "")?.consolidate()?;
        }
        let root = Group::open_with(store.clone(), "", &without_sparse)?;
        assert_eq!(root.is_consolidated(), consolidated);
        let members = root.members()?;
        let kinds: Vec<(&str, &str)> = members
            .iter()
            .map(|(n, k)| (n.as_str(), k.name()))
            .collect();
        let broken = if consolidated {
            // a document that is not JSON cannot be consolidated: it is left out of the copy
            vec![]
        } else {
            vec![("broken", "unreadable")]
        };
        let expected: Vec<(&str, &str)> = broken
            .into_iter()
            .chain([
                ("g", "group"),
                ("odd", "unreadable"),
                ("plain", "array"),
                ("sparse", "unreadable"),
            ])
            .collect();
        assert_eq!(kinds, expected, "consolidated: {consolidated}");
        assert!(
            reason_of(&members, "odd").contains("no_such_codec"),
            "{}",
            reason_of(&members, "odd")
        );
        assert!(
            reason_of(&members, "sparse").contains("sparse_layout"),
            "{}",
            reason_of(&members, "sparse")
        );
        if !consolidated {
            let r = reason_of(&members, "broken");
            assert!(r.contains("broken"), "{r}");
        }
        let all = root.members_recursive()?;
        assert!(
            all.contains(&("g/inner".to_string(), NodeKind::Array)),
            "{all:?}"
        );
        // the readable ones open
        assert_eq!(root.open_array("plain")?.shape(), [4]);
        assert!(root.open_array("odd").is_err());
    }
    // the full build reads the sparse array
    let root = Group::open(store.clone(), "")?;
    assert!(root
        .members()?
        .contains(&("sparse".to_string(), NodeKind::Array)));
    Ok(())
}

/// A v3 group's listing classifies its Zarr v2 children as it does v3 ones (a broken
/// `.zarray` or one with a codec this build lacks is unreadable, not a failed listing), walks
/// into v2 groups, and its consolidated copy lists v3 nodes only (as zarr-python's does); a v2
/// group opens without a copy, and neither requiring nor writing one works on it yet.
#[test]
fn v2_children_are_classified_and_v2_groups_have_no_copy() -> TestResult {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut root = Group::create(store.clone(), "", Map::new())?;
    root.create_array("a", &ArrayBuilder::new(vec![4], DataType::UInt8))?;
    root.create_array(
        "b",
        &ArrayBuilder::new(vec![3], DataType::Int16).zarr_format(2),
    )?;
    let g = Group::create_v2(store.clone(), "g", Map::new())?;
    g.create_array(
        "c",
        &ArrayBuilder::new(vec![2], DataType::UInt8).zarr_format(2),
    )?;
    store.set("bad/.zarray", b"{\"zarr_format\": 2")?;
    let mut odd: Value = serde_json::from_slice(&store.get("b/.zarray")?.unwrap())?;
    odd["compressor"] = json!({"id": "no_such_codec"});
    store.set("odd/.zarray", &serde_json::to_vec(&odd)?)?;

    let members = root.members()?;
    let names: Vec<&str> = members.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["a", "b", "bad", "g", "odd"]);
    assert_eq!(members[0].1, NodeKind::Array);
    assert_eq!(members[1].1, NodeKind::Array);
    assert!(
        matches!(&members[2].1, NodeKind::Unreadable { reason } if zarr_array::report(&**reason).contains("bad/.zarray")),
        "{members:?}"
    );
    assert_eq!(members[3].1, NodeKind::Group);
    assert!(
        matches!(&members[4].1, NodeKind::Unreadable { reason } if zarr_array::report(&**reason).contains("no_such_codec")),
        "{members:?}"
    );
    let all: Vec<String> = root
        .members_recursive()?
        .into_iter()
        .map(|(p, _)| p)
        .collect();
    assert_eq!(all, ["a", "b", "bad", "g", "g/c", "odd"]);
    assert_eq!(root.open_group("g")?.zarr_format(), 2);
    assert_eq!(root.open_array("b")?.zarr_format(), 2);

    // the copy is v3's: it lists the v3 array alone, and it stays true
    root.consolidate()?;
    let root = Group::open(store.clone(), "")?;
    assert!(root.is_consolidated());
    assert_eq!(root.members()?, [("a".to_string(), NodeKind::Array)]);
    assert_eq!(root.check_consolidated()?, []);

    // a v2 group: opened without a copy
    let mut g = Group::open(store.clone(), "g")?;
    assert!(!g.is_consolidated());
    assert_eq!(g.check_consolidated()?, []);
    assert!(matches!(
        g.consolidate(),
        Err(ArrayError::Unsupported { .. })
    ));
    let required = Group::open_consolidated(
        store.clone(),
        "g",
        &Extensions::default(),
        UseConsolidated::Require,
    );
    assert!(matches!(required, Err(ArrayError::Unsupported { .. })));
    // creating over a v2 node of either kind is refused
    assert!(matches!(
        Group::create(store.clone(), "g", Map::new()),
        Err(ArrayError::AlreadyExists { .. })
    ));
    assert!(matches!(
        Group::create_v2(store.clone(), "b", Map::new()),
        Err(ArrayError::AlreadyExists { .. })
    ));
    Ok(())
}
