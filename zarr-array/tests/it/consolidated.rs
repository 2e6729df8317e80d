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
/// group below it holds a copy of its own (`.zmetadata`), of its v2 nodes.
#[test]
fn v2_children_are_classified_and_copies_list_their_own_format() -> TestResult {
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
    // a v3 array below the v2 group (asked for): no v2 copy lists it
    g.create_array(
        "v3",
        &ArrayBuilder::new(vec![5], DataType::UInt8).zarr_format(3),
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
    assert_eq!(all, ["a", "b", "bad", "g", "g/c", "g/v3", "odd"]);
    assert_eq!(root.open_group("g")?.zarr_format(), 2);
    assert_eq!(root.open_array("b")?.zarr_format(), 2);

    // the root's copy is v3's: it lists the v3 array alone, and it stays true
    root.consolidate()?;
    let root = Group::open(store.clone(), "")?;
    assert!(root.is_consolidated());
    assert_eq!(root.members()?, [("a".to_string(), NodeKind::Array)]);
    assert_eq!(root.check_consolidated()?, []);
    // a v2 array changed below it leaves the v3 copy as it is
    root.open_array("b")?.resize(&[6])?;
    assert_eq!(root.check_consolidated()?, []);

    // the v2 group: no copy until consolidated, then its .zmetadata lists its v2 array only
    let mut g = Group::open(store.clone(), "g")?;
    assert!(!g.is_consolidated());
    assert_eq!(g.check_consolidated()?, []);
    let required = Group::open_consolidated(
        store.clone(),
        "g",
        &Extensions::default(),
        UseConsolidated::Require,
    );
    assert!(
        matches!(required, Err(ArrayError::NoConsolidatedMetadata { .. })),
        "{required:?}"
    );
    g.consolidate()?;
    let g = Group::open_consolidated(
        store.clone(),
        "g",
        &Extensions::default(),
        UseConsolidated::Require,
    )?;
    assert!(g.is_consolidated());
    assert_eq!(g.members()?, [("c".to_string(), NodeKind::Array)]);
    assert_eq!(g.open_array("v3")?.shape(), [5], "not listed: looked up");
    // a change of the v3 array below it leaves the v2 copy as it is
    g.open_array("v3")?.resize(&[7])?;
    assert_eq!(g.check_consolidated()?, []);
    assert_eq!(
        zmetadata_keys(&*store, "g/")?,
        [".zgroup", ".zattrs", "c/.zattrs", "c/.zarray"]
    );
    // the root's copy does not list the v2 group, and opening it through the root uses its own
    assert!(Group::open(store.clone(), "")?
        .open_group("g")?
        .is_consolidated());

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

/// The keys of the `.zmetadata` under `prefix`, in the document's order.
fn zmetadata_keys(
    store: &dyn Store,
    prefix: &str,
) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    Ok(zmetadata(store, prefix)?.keys().cloned().collect())
}

/// The `metadata` of the `.zmetadata` under `prefix`.
fn zmetadata(
    store: &dyn Store,
    prefix: &str,
) -> Result<Map<String, Value>, Box<dyn std::error::Error>> {
    let bytes = store
        .get(&format!("{prefix}.zmetadata"))?
        .ok_or("no .zmetadata")?;
    let doc: Value = serde_json::from_slice(&bytes)?;
    assert_eq!(doc["zarr_consolidated_format"], 1, "{doc}");
    Ok(doc["metadata"].as_object().ok_or("metadata")?.clone())
}

/// A v2 root with `sub/` (a group), `sub/x` and `Y`, consolidated (`.zmetadata`).
fn small_v2_hierarchy(store: Arc<dyn Store>) -> Result<Group, ArrayError> {
    let mut root = Group::create_v2(store, "", attrs(json!({"title": "t"})))?;
    let sub = root.create_group("sub", attrs(json!({"k": 1})))?;
    sub.create_array(
        "x",
        &ArrayBuilder::new(vec![4], DataType::Int32)
            .chunk_shape(vec![2])
            .zarr_format(2),
    )?;
    root.create_array(
        "Y",
        &ArrayBuilder::new(vec![3, 2], DataType::Float64)
            .chunk_shape(vec![2, 2])
            .attributes(attrs(json!({"units": "m"})))
            .zarr_format(2),
    )?;
    root.consolidate()?;
    Ok(root)
}

#[test]
fn a_consolidated_v2_hierarchy_opens_from_its_zmetadata_alone() -> TestResult {
    let counting = Arc::new(CountingStore::new(MemoryStore::new()));
    let store: Arc<dyn Store> = counting.clone();
    small_v2_hierarchy(store.clone())?;
    assert_eq!(
        zmetadata_keys(&*store, "")?,
        [
            ".zgroup",
            ".zattrs",
            "sub/.zattrs",
            "sub/.zgroup",
            "Y/.zattrs",
            "Y/.zarray",
            "sub/x/.zattrs",
            "sub/x/.zarray"
        ],
        "zarr-python's order: the group, then by depth and by name without regard to case"
    );
    let copy = zmetadata(&*store, "")?;
    assert_eq!(copy[".zattrs"], json!({"title": "t"}));
    assert_eq!(
        copy["sub/.zgroup"],
        json!({"zarr_format": 2, "consolidated_metadata": {"metadata": {}, "must_understand": false, "kind": "inline"}}),
        "member groups as zarr-python writes them"
    );
    assert_eq!(
        serde_json::to_vec(&copy["Y/.zarray"])?,
        serde_json::to_vec(&serde_json::from_slice::<Value>(
            &store.get("Y/.zarray")?.ok_or("Y")?
        )?)?,
        "each array's .zarray, key order included"
    );

    for (format, gets) in [(Some(2), 1), (None, 2)] {
        counting.reset();
        let root = Group::open_format(
            store.clone(),
            "",
            &Extensions::default(),
            UseConsolidated::IfPresent,
            format,
        )?;
        assert!(root.is_consolidated());
        assert_eq!(
            (root.zarr_format(), root.attributes()["title"].clone()),
            (2, json!("t"))
        );
        let members = root.members()?;
        assert_eq!(
            members,
            [
                ("Y".to_string(), NodeKind::Array),
                ("sub".to_string(), NodeKind::Group)
            ]
        );
        let all = root.members_recursive()?;
        let paths: Vec<&str> = all.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["Y", "sub", "sub/x"]);
        let x = root.open_array("sub/x")?;
        assert_eq!((x.shape(), x.zarr_format()), (&[4][..], 2));
        let y = root.open_array("Y")?;
        assert_eq!(y.attributes()["units"], "m");
        let sub = root.open_group("sub")?;
        assert_eq!(
            (sub.attributes()["k"].clone(), sub.zarr_format()),
            (json!(1), 2)
        );
        assert_eq!(sub.members()?, [("x".to_string(), NodeKind::Array)]);
        assert_eq!(sub.open_array("x")?.shape(), [4]);
        assert!(matches!(
            root.open_array("sub"),
            Err(ArrayError::WrongNodeType { .. })
        ));
        let c = counting.counts();
        assert_eq!(
            (c.get, c.total()),
            (gets, gets),
            "zarr_format {format:?}: the .zmetadata alone (after a zarr.json looked for): {c:?}"
        );
    }

    // Ignoring the copy reads every member's own metadata, and lists.
    let plain = Group::open_consolidated(
        store.clone(),
        "",
        &Extensions::default(),
        UseConsolidated::Ignore,
    )?;
    assert!(!plain.is_consolidated());
    assert_eq!(plain.members_recursive()?.len(), 3);
    // zarr_format 3 finds no zarr.json; a format that does not exist is refused
    let v3 = Group::open_format(
        store.clone(),
        "",
        &Extensions::default(),
        UseConsolidated::IfPresent,
        Some(3),
    );
    assert!(matches!(v3, Err(ArrayError::NotFound { .. })), "{v3:?}");
    let v4 = Group::open_format(
        store.clone(),
        "",
        &Extensions::default(),
        UseConsolidated::IfPresent,
        Some(4),
    );
    assert!(
        matches!(v4, Err(ArrayError::InvalidArgument { .. })),
        "{v4:?}"
    );
    // a member path under the root opens its own group (no copy), as a v3 one does
    assert!(!Group::open(store.clone(), "sub")?.is_consolidated());
    Ok(())
}

#[test]
fn v2_metadata_changes_keep_the_zmetadata_true() -> TestResult {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    small_v2_hierarchy(store.clone())?;
    let root = Group::open(store.clone(), "")?;

    // append through an array opened from the copy: its .zarray, then the copy
    let mut x = root.open_array("sub/x")?;
    x.append(ArrayD::from_elem(IxDyn(&[3]), 7i32).view(), 0)?;
    assert_eq!(
        zmetadata(&*store, "")?["sub/x/.zarray"]["shape"],
        json!([7])
    );
    assert_eq!(
        root.open_array("sub/x")?.shape(),
        [7],
        "the open root sees it too"
    );
    assert_eq!(
        zarr_array::Array::open(store.clone(), "sub/x")?.shape(),
        [7]
    );

    // resize and attributes through an array opened directly (no group in sight)
    let mut y = zarr_array::Array::open(store.clone(), "Y")?;
    y.resize(&[5, 2])?;
    y.update_attributes(attrs(json!({"units": "km"})))?;
    let copy = zmetadata(&*store, "")?;
    assert_eq!(copy["Y/.zarray"]["shape"], json!([5, 2]));
    assert_eq!(copy["Y/.zattrs"]["units"], "km");

    // a member group's attributes, the root's own; a new group and array below a member
    let mut sub = root.open_group("sub")?;
    sub.set_attributes(attrs(json!({"k": 2})))?;
    let deep = sub.create_group("deep", Map::new())?;
    deep.create_array(
        "z",
        &ArrayBuilder::new(vec![2], DataType::UInt8).zarr_format(2),
    )?;
    // a v3 array below a v2 group (asked for): not listed (zarr-python's v2 copy cannot
    // hold it)
    deep.create_array(
        "w",
        &ArrayBuilder::new(vec![2], DataType::UInt8).zarr_format(3),
    )?;
    let mut stale_root = Group::open(store.clone(), "")?;
    stale_root.set_attributes(attrs(json!({"title": "u"})))?;
    let copy = zmetadata(&*store, "")?;
    assert_eq!(copy["sub/.zattrs"]["k"], 2);
    assert_eq!(copy[".zattrs"]["title"], "u");
    assert_eq!(
        copy["sub/x/.zarray"]["shape"],
        json!([7]),
        "not undone by the root's write"
    );
    assert!(copy.contains_key("sub/deep/.zgroup") && copy.contains_key("sub/deep/z/.zarray"));
    assert!(!copy.keys().any(|k| k.contains("sub/deep/w")), "{copy:?}");
    assert_eq!(
        copy.keys().collect::<Vec<_>>(),
        [
            ".zgroup",
            ".zattrs",
            "sub/.zattrs",
            "sub/.zgroup",
            "Y/.zattrs",
            "Y/.zarray",
            "sub/deep/.zattrs",
            "sub/deep/.zgroup",
            "sub/x/.zattrs",
            "sub/x/.zarray",
            "sub/deep/z/.zattrs",
            "sub/deep/z/.zarray"
        ],
        "new members in zarr-python's order"
    );
    assert!(root
        .members_recursive()?
        .iter()
        .any(|(p, _)| p == "sub/deep/z"));
    assert_eq!(Group::open(store.clone(), "")?.attributes()["title"], "u");

    // converting an array to v3 in place takes it out of the v2 copy
    root.open_array("sub/deep/z")?.to_v3(true)?;
    assert!(!zmetadata(&*store, "")?.contains_key("sub/deep/z/.zarray"));

    // deleting a member removes it and everything below it from the copy
    root.delete_member("sub")?;
    assert_eq!(
        zmetadata_keys(&*store, "")?,
        [".zgroup", ".zattrs", "Y/.zattrs", "Y/.zarray"]
    );
    assert_eq!(root.members()?, [("Y".to_string(), NodeKind::Array)]);
    assert_eq!(Group::open(store.clone(), "")?.check_consolidated()?, []);
    Ok(())
}

#[test]
fn a_stale_zmetadata_is_reported_and_consolidate_repairs_it() -> TestResult {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    small_v2_hierarchy(store.clone())?;
    // another writer changes Y's own .zarray and .zattrs, adds a node and removes one
    let mut y: Value = serde_json::from_slice(&store.get("Y/.zarray")?.ok_or("Y")?)?;
    y["shape"] = json!([9, 2]);
    store.set("Y/.zarray", &serde_json::to_vec(&y)?)?;
    store.set("Y/.zattrs", br#"{"units": "mm"}"#)?;
    store.set("w/.zgroup", br#"{"zarr_format": 2}"#)?;
    store.delete_prefix("sub/x/")?;

    let mut root = Group::open(store.clone(), "")?;
    assert_eq!(root.open_array("Y")?.shape(), [3, 2], "the copy is trusted");
    assert_eq!(
        root.check_consolidated()?,
        [
            Disagreement::Differs {
                path: "Y".into(),
                fields: vec!["attributes".into(), "shape".into()]
            },
            Disagreement::Missing {
                path: "sub/x".into()
            },
            Disagreement::Unlisted { path: "w".into() },
        ]
    );
    root.consolidate()?;
    assert_eq!(root.check_consolidated()?, []);
    assert_eq!(root.open_array("Y")?.shape(), [9, 2]);
    assert_eq!(
        zmetadata_keys(&*store, "")?,
        [
            ".zgroup",
            ".zattrs",
            "sub/.zattrs",
            "sub/.zgroup",
            "w/.zattrs",
            "w/.zgroup",
            "Y/.zattrs",
            "Y/.zarray"
        ]
    );
    // a .zmetadata that does not parse is an error on open, and reported by the check
    store.set(".zmetadata", b"{\"metadata\": 3}")?;
    assert!(matches!(
        Group::open(store.clone(), ""),
        Err(ArrayError::Metadata { .. })
    ));
    let plain = Group::open_consolidated(
        store.clone(),
        "",
        &Extensions::default(),
        UseConsolidated::Ignore,
    )?;
    assert!(plain.check_consolidated().is_err());
    Ok(())
}

/// Issue 38 (4): a node opened by its own location (`g.zarr/a0`) has the groups above it
/// outside its store; `find_enclosing` finds the outermost group above that holds a copy, and
/// the node opened through it keeps every copy true. A location with no copy above opens as
/// it is; the walk stops at the first parent that is no group.
#[test]
fn a_node_opened_by_its_own_location_finds_the_copies_above() -> TestResult {
    use zarr_array::{find_enclosing, Array, Enclosing};
    use zarr_store::FilesystemStore;

    let dir = tempfile::tempdir()?;
    let top = dir.path().join("g.zarr");
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::create(&top)?);
    let mut root = Group::create(store.clone(), "", Map::new())?;
    let mid = root.create_group("mid", Map::new())?;
    mid.create_array("a0", &ArrayBuilder::new(vec![4], DataType::Int32))?;
    root.create_array("b", &ArrayBuilder::new(vec![2], DataType::UInt8))?;
    // a group without a copy between the node and the group with one
    root.consolidate()?;
    let open = |url: &str| zarr_store::open_url(url);
    let loc = |p: std::path::PathBuf| p.to_str().map(str::to_string).ok_or("utf-8 path");
    let canonical_top = loc(std::fs::canonicalize(&top)?)?;
    let found = |p| -> Result<Option<Enclosing>, Box<dyn std::error::Error>> {
        Ok(find_enclosing(&loc(p)?, &open)?)
    };
    assert_eq!(
        found(top.clone())?,
        None,
        "the group holding the copy itself"
    );
    assert_eq!(found(dir.path().to_path_buf())?, None);
    let at = |path: &str| Enclosing {
        location: canonical_top.clone(),
        path: path.to_string(),
    };
    assert_eq!(found(top.join("b"))?, Some(at("b")));
    assert_eq!(found(top.join("mid"))?, Some(at("mid")));
    assert_eq!(found(top.join("mid").join("a0"))?, Some(at("mid/a0")));
    assert_eq!(
        found(top.join("mid").join("new"))?,
        Some(at("mid/new")),
        "a node about to be created"
    );
    assert_eq!(at("mid").join("a0/"), "mid/a0");

    // through the location found, an append reaches the root's copy
    let e = found(top.join("mid").join("a0"))?.ok_or("found")?;
    let outer: Arc<dyn Store> = Arc::new(FilesystemStore::open(&e.location)?);
    let mut a0 = Array::open(outer.clone(), &e.path)?;
    a0.append(ArrayD::from_elem(IxDyn(&[3]), 5i32).view(), 0)?;
    assert_eq!(stored_copy(&*store)?["mid/a0"]["shape"], json!([7]));
    assert_eq!(root.check_consolidated()?, []);

    // the middle group holds a copy too: the outermost is still the root, and both are kept
    Group::open(store.clone(), "mid")?.consolidate()?;
    let e = found(top.join("mid").join("a0"))?.ok_or("found")?;
    assert_eq!(e, at("mid/a0"));
    let outer: Arc<dyn Store> = Arc::new(FilesystemStore::open(&e.location)?);
    Array::open(outer, &e.path)?.resize(&[9])?;
    assert_eq!(stored_copy(&*store)?["mid/a0"]["shape"], json!([9]));
    let mid_doc = GroupMetadata::from_slice(&store.get("mid/zarr.json")?.ok_or("mid")?)?;
    let mid_copy = mid_doc.consolidated_metadata()?.ok_or("mid's copy")?;
    assert_eq!(mid_copy.metadata["a0"]["shape"], json!([9]));

    // without a copy above, nothing is found; a v2 hierarchy's .zmetadata is one
    let plain = dir.path().join("plain.zarr");
    let plain_store: Arc<dyn Store> = Arc::new(FilesystemStore::create(&plain)?);
    Group::create(plain_store.clone(), "", Map::new())?
        .create_array("x", &ArrayBuilder::new(vec![2], DataType::UInt8))?;
    assert_eq!(found(plain.join("x"))?, None);
    let v2 = dir.path().join("v2.zarr");
    let v2_store: Arc<dyn Store> = Arc::new(FilesystemStore::create(&v2)?);
    let mut v2_root = Group::create_v2(v2_store.clone(), "", Map::new())?;
    v2_root
        .create_group("s", Map::new())?
        .create_array("x", &ArrayBuilder::new(vec![2], DataType::UInt8))?;
    assert_eq!(found(v2.join("s").join("x"))?, None);
    v2_root.consolidate()?;
    let e = found(v2.join("s").join("x"))?.ok_or("found")?;
    assert_eq!(e.path, "s/x");
    let outer: Arc<dyn Store> = Arc::new(FilesystemStore::open(&e.location)?);
    Array::open(outer, &e.path)?.resize(&[6])?;
    let zmetadata: Value = serde_json::from_slice(&v2_store.get(".zmetadata")?.ok_or("zm")?)?;
    assert_eq!(zmetadata["metadata"]["s/x/.zarray"]["shape"], json!([6]));
    Ok(())
}

/// The walk over urls: one GET per v3 group looked at, and two for the first parent that is
/// no group; a parent that cannot be opened ends the walk.
#[test]
fn finding_the_copies_above_a_url_costs_a_get_per_parent() -> TestResult {
    use zarr_array::{find_enclosing, Enclosing};

    let counting = |s: MemoryStore| Arc::new(CountingStore::new(s));
    let top = counting(MemoryStore::new());
    let mut root = Group::create(top.clone(), "", Map::new())?;
    root.create_group("mid", Map::new())?
        .create_array("a0", &ArrayBuilder::new(vec![4], DataType::Int32))?;
    root.consolidate()?;
    let mid = counting(MemoryStore::new());
    mid.set("zarr.json", &top.get("mid/zarr.json")?.ok_or("mid")?)?;
    let bucket = counting(MemoryStore::new());
    for s in [&top, &mid, &bucket] {
        s.reset();
    }
    let stores = [
        ("s3://bucket/data/g.zarr", top.clone()),
        ("s3://bucket/data/g.zarr/mid", mid.clone()),
        ("s3://bucket/data", bucket.clone()),
    ];
    let open = |url: &str| -> zarr_store::Result<Arc<dyn Store>> {
        match stores.iter().find(|(u, _)| *u == url) {
            Some((_, s)) => Ok(s.clone() as Arc<dyn Store>),
            None => Err(zarr_store::StoreError::NotFound { key: url.into() }),
        }
    };
    let found = find_enclosing("s3://bucket/data/g.zarr/mid/a0/", &open)?;
    assert_eq!(
        found,
        Some(Enclosing {
            location: "s3://bucket/data/g.zarr".into(),
            path: "mid/a0".into(),
        })
    );
    assert_eq!(mid.counts().total(), 1, "mid's zarr.json");
    assert_eq!(top.counts().total(), 1, "the root's zarr.json");
    assert_eq!(bucket.counts().total(), 2, "no zarr.json, no .zgroup");
    // an http(s) url is read-only: nothing is looked at
    let none = |_: &str| -> zarr_store::Result<Arc<dyn Store>> { panic!("opened") };
    assert_eq!(find_enclosing("https://h/g.zarr/mid/a0", &none)?, None);
    assert_eq!(find_enclosing("memory://", &none)?, None);
    Ok(())
}
