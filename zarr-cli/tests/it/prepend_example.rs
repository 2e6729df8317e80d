//! The worked example of the prepend spec (design/regular_bounded.md), end to end through the
//! command line.

use crate::common::*;
use serde_json::{json, Value};

#[test]
fn worked_example_of_the_prepend_spec() {
    let dir = tempfile::tempdir().unwrap();
    let z = dir.path().join("z");
    let (ones, twos) = (dir.path().join("ones.npy"), dir.path().join("twos.npy"));
    write_npy(&ones, DataType::Int32, &[6, 4], &i32s([1; 24]));
    write_npy(&twos, DataType::Int32, &[3, 4], &i32s([2; 12]));

    ok(&[
        "create",
        &s(&z),
        "--shape",
        "6,4",
        "--chunks",
        "4,4",
        "--dtype",
        "int32",
    ]);
    ok(&["write", &s(&z), &s(&ones)]);
    let before = snapshot(&z);
    assert!(before.contains_key("c/0/0") && before.contains_key("c/1/0"));

    let out = ok(&["prepend", &s(&z), &s(&twos), "--axis", "0"]);
    assert!(out.contains("[9, 4]"), "{out}");

    let info: Value = serde_json::from_str(&ok(&["info", &s(&z), "--json"])).unwrap();
    assert_eq!(info["shape"], json!([9, 4]));
    assert_eq!(info["domain"], json!([[-3, 6], [0, 4]]));
    assert_eq!(info["chunk_grid"]["name"], "regular_bounded");
    assert_eq!(info["chunks_stored"], 3);
    assert_eq!(info["chunks_total"], 3);

    let after = snapshot(&z);
    assert!(after.contains_key("c/-1/0"), "{:?}", after.keys());
    for key in ["c/0/0", "c/1/0"] {
        assert_eq!(after[key], before[key], "{key} changed");
    }

    let out = dir.path().join("out.npy");
    ok(&["export", &s(&z), &s(&out)]);
    let got = read_npy(&out);
    assert_eq!(got.data_type, DataType::Int32);
    assert_eq!(got.shape, vec![9, 4]);
    let values = to_i32(&got.data);
    assert!(values[..12].iter().all(|&v| v == 2), "{values:?}");
    assert!(values[12..].iter().all(|&v| v == 1), "{values:?}");

    // a reader without the grid refuses it, by name, for every command that opens it
    for args in [
        vec!["info".to_string(), s(&z)],
        vec!["export".to_string(), s(&z), s(&dir.path().join("x.npy"))],
        vec!["validate".to_string(), s(&z)],
    ] {
        let mut args = args;
        args.extend(["--without".into(), "regular_bounded".into()]);
        let r = zarr(&args);
        assert_ne!(r.code, 0, "{args:?} must be refused");
        let all = format!("{}{}", r.stdout, r.stderr);
        assert!(all.contains("regular_bounded"), "{args:?}: {all}");
        // with the fix: a copy on a regular grid
        assert!(all.contains("--to-regular"), "{args:?}: {all}");
    }
    assert!(!dir.path().join("x.npy").exists());
}
