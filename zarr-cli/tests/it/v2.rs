//! The `zarr` command on Zarr v2 nodes: create and import as v2, info, tree, validate and
//! export of zarr-python's v2 arrays and groups, and `convert --to-v3` / `--to-v2`.

use crate::common::*;

#[test]
fn create_import_info_and_export_v2() {
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("in.npy");
    let data = i32s(0..24);
    write_npy(&npy, zarr_array::DataType::Int32, &[6, 4], &data);
    let a = dir.path().join("a");
    let out = ok(&[
        "import",
        &s(&npy),
        &s(&a),
        "--chunks",
        "4,4",
        "--zarr-format",
        "2",
        "--codec",
        "blosc:lz4:5:shuffle",
    ]);
    assert!(out.contains("imported"), "{out}");
    let zarray = std::fs::read_to_string(a.join(".zarray")).unwrap();
    assert!(zarray.contains("\"id\": \"blosc\""), "{zarray}");
    assert!(a.join("1.0").is_file() && !a.join("zarr.json").exists());
    let info = ok(&["info", &s(&a)]);
    assert!(info.contains("zarr format:  2"), "{info}");
    let json = ok(&["info", &s(&a), "--json"]);
    assert!(json.contains("\"zarr_format\":2"), "{json}");
    let out_npy = dir.path().join("out.npy");
    ok(&["export", &s(&a), &s(&out_npy)]);
    assert_eq!(read_npy(&out_npy).data, data);
    let v = ok(&["validate", &s(&a)]);
    assert!(
        v.contains("ok (1 array, 0 groups, 2 chunks decoded)"),
        "{v}"
    );

    // nested keys with --separator /
    let b = dir.path().join("b");
    ok(&[
        "create",
        &s(&b),
        "--shape",
        "4,4",
        "--chunks",
        "2,2",
        "--dtype",
        "uint8",
        "--zarr-format",
        "2",
        "--separator",
        "/",
    ]);
    let zarray = std::fs::read_to_string(b.join(".zarray")).unwrap();
    assert!(
        zarray.contains("\"dimension_separator\": \"/\""),
        "{zarray}"
    );
    let e = fails(
        &[
            "create",
            &s(&dir.path().join("c")),
            "--shape",
            "4",
            "--chunks",
            "2",
            "--dtype",
            "uint8",
            "--zarr-format",
            "2",
            "--shards",
            "4",
        ],
        1,
    );
    assert!(e.contains("sharding_indexed") && e.contains("v2"), "{e}");
}

#[test]
fn tree_info_and_validate_zarr_pythons_v2_groups() {
    let group = repo().join("conformance/v2/group");
    let tree = ok(&["tree", &s(&group)]);
    assert!(tree.contains("group (v2)"), "{tree}");
    assert!(
        tree.contains("<i4") || tree.contains("<f8") || tree.contains("(v2)"),
        "{tree}"
    );
    let info = ok(&["info", &s(&group)]);
    assert!(
        info.contains("node:         group") && info.contains("zarr format:  2"),
        "{info}"
    );
    let v = ok(&["validate", &s(&group)]);
    assert!(v.contains(": ok ("), "{v}");
    // a broken .zmetadata is a problem
    let r = zarr(&[
        "validate",
        &s(&repo().join("conformance/v2/reject_zmetadata_format")),
    ]);
    assert_eq!(r.code, 1);
    assert!(
        r.stdout
            .contains("problem: .zmetadata: consolidated metadata: .zmetadata"),
        "{}",
        r.stdout
    );
    // a corrupt chunk is found
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a");
    let npy = dir.path().join("in.npy");
    write_npy(&npy, zarr_array::DataType::Int32, &[4], &i32s(1..5));
    ok(&[
        "import",
        &s(&npy),
        &s(&a),
        "--chunks",
        "2",
        "--zarr-format",
        "2",
    ]);
    std::fs::write(a.join("0"), b"garbage").unwrap();
    let r = zarr(&["validate", &s(&a)]);
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("problem: 0: "), "{}", r.stdout);
}

#[test]
fn convert_to_v3_and_back() {
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("in.npy");
    let data = i32s(0..24);
    write_npy(&npy, zarr_array::DataType::Int32, &[6, 4], &data);
    let a = dir.path().join("a");
    ok(&[
        "import",
        &s(&npy),
        &s(&a),
        "--chunks",
        "4,4",
        "--zarr-format",
        "2",
    ]);
    let chunk_before = std::fs::read(a.join("1.0")).unwrap();
    let out = ok(&["convert", &s(&a), "--to-v3", "--keep"]);
    assert!(out.contains("no chunk rewritten"), "{out}");
    assert!(a.join("zarr.json").is_file() && a.join(".zarray").is_file());
    let out = ok(&["convert", &s(&a), "--to-v3"]);
    assert!(out.contains("already Zarr v3"), "{out}");
    let out_npy = dir.path().join("out.npy");
    ok(&["export", &s(&a), &s(&out_npy)]);
    assert_eq!(read_npy(&out_npy).data, data);
    assert_eq!(std::fs::read(a.join("1.0")).unwrap(), chunk_before);

    // v3 with default keys -> v2: chunks move, bytes unchanged
    let b = dir.path().join("b");
    ok(&["import", &s(&npy), &s(&b), "--chunks", "4,4"]);
    let out = ok(&["convert", &s(&b), "--to-v2"]);
    assert!(out.contains("2 chunks moved"), "{out}");
    assert!(!b.join("zarr.json").exists() && b.join(".zarray").is_file());
    assert!(b.join("1/0").is_file() && !b.join("c").exists());
    ok(&["export", &s(&b), &s(&out_npy)]);
    assert_eq!(read_npy(&out_npy).data, data);
    // what v2 cannot hold is refused by name
    let c = dir.path().join("c");
    ok(&[
        "import",
        &s(&npy),
        &s(&c),
        "--chunks",
        "2,2",
        "--shards",
        "4,4",
    ]);
    let e = fails(&["convert", &s(&c), "--to-v2"], 1);
    assert!(e.contains("sharding_indexed"), "{e}");
    fails(
        &["convert", &s(&c), &s(&dir.path().join("d")), "--to-v2"],
        2,
    );
}

/// `zarr consolidate` of a v2 hierarchy writes its `.zmetadata`; `tree` lists from it the
/// same; `validate` reports a `.zmetadata` that disagrees with a member's own metadata; `zarr
/// resize` and `zarr append` of a member update it.
#[test]
fn consolidate_validate_tree_and_resize_of_a_v2_hierarchy() {
    use serde_json::{json, Value};
    use zarr_array::zarr_store::{FilesystemStore, Store};
    use zarr_array::{ArrayBuilder, DataType, Group};
    let dir = tempfile::tempdir().unwrap();
    let root_dir = dir.path().join("h");
    std::fs::create_dir(&root_dir).unwrap();
    let store: std::sync::Arc<dyn Store> =
        std::sync::Arc::new(FilesystemStore::open(&root_dir).unwrap());
    let root = Group::create_v2(store.clone(), "", Default::default()).unwrap();
    let v2 = |shape: Vec<u64>, t| ArrayBuilder::new(shape, t).zarr_format(2);
    root.create_array("a", &v2(vec![4], DataType::UInt8))
        .unwrap();
    let sub = root.create_group("sub", Default::default()).unwrap();
    sub.create_array("b", &v2(vec![2, 3], DataType::Int16))
        .unwrap();
    let tree = ok(&["tree", &s(&root_dir)]);

    let out = ok(&["consolidate", &s(&root_dir)]);
    assert!(out.contains("3 nodes"), "{out}");
    let zmetadata =
        || -> Value { serde_json::from_slice(&store.get(".zmetadata").unwrap().unwrap()).unwrap() };
    let keys: Vec<String> = zmetadata()["metadata"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(
        keys,
        [
            ".zgroup",
            ".zattrs",
            "a/.zattrs",
            "a/.zarray",
            "sub/.zattrs",
            "sub/.zgroup",
            "sub/b/.zattrs",
            "sub/b/.zarray"
        ]
    );
    assert!(store.get("zarr.json").unwrap().is_none());
    assert_eq!(ok(&["tree", &s(&root_dir)]), tree, "the tree from the copy");
    ok(&["validate", &s(&root_dir)]);

    // a writer that does not update the copy: validate says so
    let mut b: Value =
        serde_json::from_slice(&store.get("sub/b/.zarray").unwrap().unwrap()).unwrap();
    b["shape"] = json!([5, 3]);
    store
        .set("sub/b/.zarray", &serde_json::to_vec(&b).unwrap())
        .unwrap();
    let r = zarr(&["validate", &s(&root_dir)]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stdout.contains(
            ".zmetadata: the consolidated metadata of \"sub/b\" differs from its own metadata in shape"
        ),
        "{r:?}"
    );
    ok(&["consolidate", &s(&root_dir)]);
    ok(&["validate", &s(&root_dir)]);

    // `zarr resize` and `zarr append` of a member update the copy of the group above it
    ok(&["resize", &s(&root_dir.join("sub/b")), "--shape", "7,3"]);
    assert_eq!(
        zmetadata()["metadata"]["sub/b/.zarray"]["shape"],
        json!([7, 3])
    );
    let npy = dir.path().join("in.npy");
    write_npy(&npy, DataType::UInt8, &[2], &[9, 9]);
    ok(&["append", &s(&root_dir.join("a")), &s(&npy), "--axis", "0"]);
    assert_eq!(zmetadata()["metadata"]["a/.zarray"]["shape"], json!([6]));
    ok(&["validate", &s(&root_dir)]);
}
