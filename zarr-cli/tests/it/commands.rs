//! Every subcommand through the built binary, and its errors.

use crate::common::*;
use serde_json::{json, Value};

fn info(path: &std::path::Path) -> Value {
    serde_json::from_str(&ok(&["info", &s(path), "--json"])).unwrap()
}

#[test]
fn create_with_every_option_then_info() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a");
    let out = ok(&[
        "create",
        &s(&a),
        "--shape",
        "10,8",
        "--chunks",
        "4,4",
        "--dtype",
        "float32",
        "--fill-value",
        "NaN",
        "--codec",
        "gzip:3",
        "--codec",
        "crc32c",
        "--dimension-names",
        "y,x",
        "--key-encoding",
        "v2",
        "--separator",
        "/",
        "--attrs",
        r#"{"units": "m", "n": [1, 2]}"#,
    ]);
    assert!(out.contains("created"), "{out}");
    let i = info(&a);
    assert_eq!(i["shape"], json!([10, 8]));
    assert_eq!(i["domain"], json!([[0, 10], [0, 8]]));
    assert_eq!(i["data_type"], "float32");
    assert_eq!(i["fill_value"], "NaN");
    assert_eq!(
        i["chunk_grid"],
        json!({"name": "regular", "configuration": {"chunk_shape": [4, 4]}})
    );
    assert_eq!(
        i["chunk_key_encoding"],
        json!({"name": "v2", "configuration": {"separator": "/"}})
    );
    let names: Vec<&str> = i["codecs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["bytes", "gzip", "crc32c"]);
    assert_eq!(i["codecs"][1]["configuration"]["level"], 3);
    assert_eq!(i["dimension_names"], json!(["y", "x"]));
    assert_eq!(i["attributes"], json!({"units": "m", "n": [1, 2]}));
    assert_eq!(
        (i["chunks_stored"].as_u64(), i["chunks_total"].as_u64()),
        (Some(0), Some(6))
    );
    assert_eq!(i["bytes_stored"], 0);

    // the human form says the same
    let text = ok(&["info", &s(&a)]);
    for want in [
        "float32",
        "[10, 8]",
        "gzip(level=3)",
        "crc32c",
        "0 stored of 6",
        "y, x",
    ] {
        assert!(text.contains(want), "{want} missing from:\n{text}");
    }

    // sharded, bounded from the start, blosc and zstd with checksum
    let b = dir.path().join("b");
    ok(&[
        "create",
        &s(&b),
        "--shape",
        "20,20",
        "--chunks",
        "5,5",
        "--shards",
        "10,10",
        "--dtype",
        "uint16",
        "--codec",
        "blosc:lz4:5:bitshuffle",
        "--codec",
        "zstd:3:checksum",
        "--lower-bound=-100,0",
        "--origin",
        "1,2",
    ]);
    let i = info(&b);
    assert_eq!(i["domain"], json!([[-100, -80], [0, 20]]));
    assert_eq!(i["chunk_grid"]["name"], "regular_bounded");
    assert_eq!(i["chunk_grid"]["configuration"]["origin"], json!([1, 2]));
    assert_eq!(i["codecs"][0]["name"], "sharding_indexed");
    let inner = &i["codecs"][0]["configuration"];
    assert_eq!(inner["chunk_shape"], json!([5, 5]));
    assert_eq!(inner["codecs"][1]["configuration"]["cname"], "lz4");
    assert_eq!(inner["codecs"][1]["configuration"]["typesize"], 2);
    assert_eq!(inner["codecs"][2]["configuration"]["checksum"], true);
    // --lower-bound with a space works too
    ok(&[
        "create",
        &s(&dir.path().join("c")),
        "--shape",
        "4",
        "--chunks",
        "2",
        "--dtype",
        "int8",
        "--lower-bound",
        "-3",
    ]);
    // no compressor at all
    ok(&[
        "create",
        &s(&dir.path().join("raw")),
        "--shape",
        "4",
        "--chunks",
        "2",
        "--dtype",
        "int8",
        "--codec",
        "none",
    ]);
    assert_eq!(
        info(&dir.path().join("raw"))["codecs"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn create_errors() {
    let dir = tempfile::tempdir().unwrap();
    let a = s(&dir.path().join("a"));
    // usage errors: exit 2
    fails(&["create", &a, "--shape", "6,4", "--dtype", "int32"], 2); // no --chunks
    fails(
        &[
            "create", &a, "--shape", "6,x", "--chunks", "4,4", "--dtype", "int32",
        ],
        2,
    );
    fails(
        &[
            "create", &a, "--shape", "6,4", "--chunks", "4,4", "--dtype", "int33",
        ],
        2,
    );
    fails(
        &[
            "create", &a, "--shape", "6,4", "--chunks", "4,4", "--dtype", "int32", "--codec",
            "lzma",
        ],
        2,
    );
    fails(
        &[
            "create", &a, "--shape", "6,4", "--chunks", "4,4", "--dtype", "int32", "--codec",
            "gzip:10",
        ],
        2,
    );
    fails(
        &[
            "create", &a, "--shape", "6,4", "--chunks", "4,4", "--dtype", "int32", "--origin",
            "1,1",
        ],
        2,
    );
    fails(
        &[
            "create", &a, "--shape", "6,4", "--chunks", "4,4", "--dtype", "int32", "--attrs", "[1]",
        ],
        2,
    );
    fails(&["frobnicate"], 2);
    fails(&["info", &a, "--without", "no_such_extension"], 2);
    // bad input: exit 1
    let e = fails(
        &[
            "create", &a, "--shape", "6,4", "--chunks", "4", "--dtype", "int32",
        ],
        1,
    );
    assert!(e.contains("--chunks has 1 dimensions"), "{e}");
    let e = fails(
        &[
            "create",
            &a,
            "--shape",
            "6,4",
            "--chunks",
            "4,4",
            "--dtype",
            "int32",
            "--fill-value",
            "1.5",
        ],
        1,
    );
    assert!(e.contains("fill"), "{e}");
    let e = fails(
        &[
            "create", &a, "--shape", "8,8", "--chunks", "4,4", "--shards", "6,8", "--dtype",
            "int32",
        ],
        1,
    );
    assert!(e.contains("multiple"), "{e}");
    fails(
        &[
            "create", &a, "--shape", "6,4", "--chunks", "0,4", "--dtype", "int32",
        ],
        1,
    );
    assert!(
        !dir.path().join("a").exists(),
        "a failed create leaves nothing behind"
    );
    // an array already there
    ok(&[
        "create", &a, "--shape", "6,4", "--chunks", "4,4", "--dtype", "int32",
    ]);
    let e = fails(
        &[
            "create", &a, "--shape", "6,4", "--chunks", "4,4", "--dtype", "int32",
        ],
        1,
    );
    assert!(e.contains("already"), "{e}");
    // a reader lacking the grid cannot create a bounded array
    let e = fails(
        &[
            "create",
            &s(&dir.path().join("b")),
            "--shape",
            "4",
            "--chunks",
            "2",
            "--dtype",
            "int8",
            "--lower-bound=-1",
            "--without",
            "regular_bounded",
        ],
        1,
    );
    assert!(e.contains("regular_bounded"), "{e}");
}

#[test]
fn import_export_every_data_type() {
    let dir = tempfile::tempdir().unwrap();
    for (i, t) in zarr_array::zarr_meta::data_type::CORE_DATA_TYPES
        .iter()
        .enumerate()
    {
        let src = dir.path().join(format!("{t}.npy"));
        let data = random(*t, 7 * 5, i as u64 + 1);
        write_npy(&src, *t, &[7, 5], &data);
        let arr = dir.path().join(format!("{t}.zarr"));
        ok(&["import", &s(&src), &s(&arr), "--chunks", "3,2"]);
        let i = info(&arr);
        assert_eq!(i["data_type"], t.name());
        assert_eq!(i["chunks_total"], 9);
        let out = dir.path().join(format!("{t}.out.npy"));
        ok(&["export", &s(&arr), &s(&out)]);
        // the exported file is byte for byte what a little-endian C-order writer makes
        assert_eq!(
            std::fs::read(&out).unwrap(),
            std::fs::read(&src).unwrap(),
            "{t}"
        );
    }
    // a 0-d array and an array with a zero-length axis
    let zero_d = dir.path().join("0d.npy");
    write_npy(&zero_d, DataType::Float64, &[], &2.5f64.to_ne_bytes());
    ok(&["import", &s(&zero_d), &s(&dir.path().join("0d"))]);
    let out = dir.path().join("0d.out.npy");
    ok(&["export", &s(&dir.path().join("0d")), &s(&out)]);
    assert_eq!(read_npy(&out).shape, Vec::<u64>::new());
    assert_eq!(read_npy(&out).data, 2.5f64.to_ne_bytes());
    let empty = dir.path().join("empty.npy");
    write_npy(&empty, DataType::Int16, &[0, 3], &[]);
    ok(&[
        "import",
        &s(&empty),
        &s(&dir.path().join("empty")),
        "--chunks",
        "2,2",
    ]);
    ok(&["export", &s(&dir.path().join("empty")), &s(&out)]);
    assert_eq!(read_npy(&out).shape, vec![0, 3]);
}

#[test]
fn import_export_datetimes_and_timedeltas() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/v3");
    // zarr-python's arrays export to the .npy NumPy saved, byte for byte
    for (name, descr, config) in [
        (
            "dtype_datetime64_10ms",
            "<M8[10ms]",
            json!({"name": "numpy.datetime64", "configuration": {"unit": "ms", "scale_factor": 10}}),
        ),
        (
            "dtype_timedelta64_3h",
            "<m8[3h]",
            json!({"name": "numpy.timedelta64", "configuration": {"unit": "h", "scale_factor": 3}}),
        ),
        (
            "bytes_big_datetime64_us",
            "<M8[us]",
            json!({"name": "numpy.datetime64", "configuration": {"unit": "us", "scale_factor": 1}}),
        ),
        (
            "fill_nat_timedelta64",
            "<m8[s]",
            json!({"name": "numpy.timedelta64", "configuration": {"unit": "s", "scale_factor": 1}}),
        ),
    ] {
        let out = dir.path().join(format!("{name}.npy"));
        ok(&["export", &s(&corpus.join(name)), &s(&out)]);
        let want = std::fs::read(corpus.join(format!("{name}.npy"))).unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), want, "{name}");
        assert!(
            String::from_utf8_lossy(&want[..128]).contains(&format!("'descr': '{descr}'")),
            "{name}"
        );
        // and import back: the same data type, NaT as the fill value, the same file again
        let arr = dir.path().join(format!("{name}.zarr"));
        ok(&["import", &s(&out), &s(&arr), "--chunks", "8,5"]);
        let i = info(&arr);
        assert_eq!(i["data_type"], config, "{name}");
        assert_eq!(i["fill_value"], json!(i64::MIN), "{name}");
        let again = dir.path().join(format!("{name}.again.npy"));
        ok(&["export", &s(&arr), &s(&again)]);
        assert_eq!(std::fs::read(&again).unwrap(), want, "{name}");
    }
    // create by NumPy's spelling, with a NaT or integer fill value
    let a = dir.path().join("created");
    ok(&[
        "create",
        &s(&a),
        "--shape",
        "3",
        "--chunks",
        "2",
        "--dtype",
        "timedelta64[ns]",
        "--fill-value",
        "NaT",
    ]);
    let i = info(&a);
    assert_eq!(i["data_type"]["configuration"]["unit"], "ns");
    assert_eq!(i["fill_value"], json!(i64::MIN));
    let out = dir.path().join("created.npy");
    ok(&["export", &s(&a), &s(&out)]);
    let back = read_npy(&out);
    assert_eq!(back.data, [i64::MIN; 3].map(i64::to_ne_bytes).concat());
    assert!(ok(&["info", &s(&a)]).contains("numpy.timedelta64[ns]"));
    let e = fails(
        &[
            "create",
            &s(&dir.path().join("bad")),
            "--shape",
            "3",
            "--chunks",
            "2",
            "--dtype",
            "datetime64[0s]",
        ],
        2,
    );
    assert!(e.contains("unknown data type \"datetime64[0s]\""), "{e}");
}

#[test]
fn export_strings_and_byte_strings() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/v3");
    // zarr-python's string and bytes arrays export to the .npy NumPy saved, byte for byte
    for name in [
        "string_default_codecs",
        "string_fill_missing",
        "string_1d",
        "bytes_vlen_default_codecs",
        "bytes_vlen_fill_missing",
    ] {
        let out = dir.path().join(format!("{name}.npy"));
        ok(&["export", &s(&corpus.join(name)), &s(&out)]);
        let want = std::fs::read(corpus.join(format!("{name}.npy"))).unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), want, "{name}");
        // every stored chunk decodes
        assert!(
            ok(&["validate", &s(&corpus.join(name))]).contains(": ok ("),
            "{name}"
        );
    }
    let out = dir.path().join("part.npy");
    ok(&[
        "export",
        &s(&corpus.join("string_fill_missing")),
        &s(&out),
        "--region",
        "8:10,0:2",
    ]);
    let part = npy::NpyStrings::parse(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(part.shape, vec![2, 2]);
    assert!(part.items.iter().all(|i| i == "fill é".as_bytes()));
    // import into new arrays (vlen-utf8 / vlen-bytes + zstd) and export the same file again
    for (name, data_type) in [
        ("string_default_codecs", json!("string")),
        ("bytes_vlen_default_codecs", json!("variable_length_bytes")),
    ] {
        let src = corpus.join(format!("{name}.npy"));
        let arr = dir.path().join(format!("{name}.zarr"));
        ok(&["import", &s(&src), &s(&arr), "--chunks", "8,5"]);
        let i = info(&arr);
        assert_eq!(i["data_type"], data_type, "{name}");
        assert_eq!(
            i["codecs"][0]["name"].as_str().unwrap().get(..5),
            Some("vlen-")
        );
        let again = dir.path().join(format!("{name}.again.npy"));
        ok(&["export", &s(&arr), &s(&again)]);
        assert_eq!(
            std::fs::read(&again).unwrap(),
            std::fs::read(&src).unwrap(),
            "{name}"
        );
    }
    let a = dir.path().join("created");
    ok(&[
        "create",
        &s(&a),
        "--shape",
        "3",
        "--chunks",
        "2",
        "--dtype",
        "string",
        "--fill-value",
        "\"x\"",
    ]);
    let out = dir.path().join("created.npy");
    ok(&["export", &s(&a), &s(&out)]);
    let back = npy::NpyStrings::parse(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(back.items, vec![b"x".to_vec(); 3]);
    // write, append and prepend blocks of strings (NumPy's <U) into the string array
    let block = dir.path().join("block.npy");
    let strings = |items: &[&str]| npy::NpyStrings {
        data_type: DataType::String,
        shape: vec![items.len() as u64],
        items: items.iter().map(|i| i.as_bytes().to_vec()).collect(),
    };
    std::fs::write(&block, strings(&["é", "yz"]).to_bytes().unwrap()).unwrap();
    ok(&["write", &s(&a), &s(&block), "--at", "1"]);
    ok(&["append", &s(&a), &s(&block), "--axis", "0"]);
    std::fs::write(&block, strings(&["front"]).to_bytes().unwrap()).unwrap();
    ok(&["prepend", &s(&a), &s(&block), "--axis", "0"]);
    ok(&["export", &s(&a), &s(&out)]);
    let back = npy::NpyStrings::parse(&std::fs::read(&out).unwrap()).unwrap();
    let want: Vec<Vec<u8>> = ["front", "x", "é", "yz", "é", "yz"]
        .iter()
        .map(|i| i.as_bytes().to_vec())
        .collect();
    assert_eq!(back.items, want);
    // byte strings into a string array, a block that does not fit: refused, nothing changes
    let bytes = npy::NpyStrings {
        data_type: DataType::Bytes,
        shape: vec![1],
        items: vec![b"b".to_vec()],
    };
    std::fs::write(&block, bytes.to_bytes().unwrap()).unwrap();
    let e = fails(&["write", &s(&a), &s(&block)], 1);
    assert!(e.contains("holds byte strings (|S) but the array"), "{e}");
    std::fs::write(&block, strings(&["a", "b"]).to_bytes().unwrap()).unwrap();
    let e = fails(&["write", &s(&a), &s(&block), "--at", "5"], 1);
    assert!(e.contains("does not fit"), "{e}");
    ok(&["export", &s(&a), &s(&out)]);
    let back = npy::NpyStrings::parse(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(back.items, want);
    // NumPy's fixed-width strings kept fixed-width: fixed_length_utf32 / null_terminated_bytes
    for (name, data_type) in [
        ("fixed_utf32", "fixed_length_utf32"),
        ("fixed_utf32_fill_big_endian", "fixed_length_utf32"),
        ("null_terminated_bytes", "null_terminated_bytes"),
    ] {
        let src = corpus.join(format!("{name}.npy"));
        let out = dir.path().join(format!("{name}.npy"));
        ok(&["export", &s(&corpus.join(name)), &s(&out)]);
        assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&src).unwrap());
        let arr = dir.path().join(format!("{name}.zarr"));
        ok(&["import", &s(&src), &s(&arr), "--fixed-width"]);
        assert_eq!(info(&arr)["data_type"]["name"], data_type, "{name}");
        let again = dir.path().join(format!("{name}.again.npy"));
        ok(&["export", &s(&arr), &s(&again)]);
        assert_eq!(std::fs::read(&again).unwrap(), std::fs::read(&src).unwrap());
    }
    let a = dir.path().join("created_u");
    ok(&[
        "create",
        &s(&a),
        "--shape",
        "3",
        "--chunks",
        "2",
        "--dtype",
        "U2",
        "--fill-value",
        "\"é\"",
    ]);
    assert_eq!(
        info(&a)["data_type"],
        json!({"name": "fixed_length_utf32", "configuration": {"length_bytes": 8}})
    );
    let out = dir.path().join("created_u.npy");
    ok(&["export", &s(&a), &s(&out)]);
    let back = npy::NpyStrings::parse(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(back.items, vec!["é".as_bytes().to_vec(); 3]);
    // big-endian strings (`.astype(">U3")`) import; blosc with shuffle compresses a string
    // array (its bytes, typesize 1)
    let big = dir.path().join("big.npy");
    std::fs::write(
        &big,
        npy_file(">U2", false, "(2,)", b"\0\0\0a\0\0\0\0\0\0\0b\0\0\0c"),
    )
    .unwrap();
    let a = dir.path().join("big.zarr");
    ok(&["import", &s(&big), &s(&a), "--codec", "blosc:lz4:5:shuffle"]);
    ok(&["export", &s(&a), &s(&out)]);
    let back = npy::NpyStrings::parse(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(back.items, [b"a".to_vec(), b"bc".to_vec()]);
    // an element ending in NUL cannot be a NumPy fixed-width string: refused, not cut
    let a = dir.path().join("nul.zarr");
    ok(&[
        "create",
        &s(&a),
        "--shape",
        "2",
        "--chunks",
        "2",
        "--dtype",
        "string",
    ]);
    let store = zarr_array::zarr_store::FilesystemStore::open(&a).unwrap();
    let nul = zarr_array::ndarray::arr1(&["ok".to_string(), "nul\0".to_string()]).into_dyn();
    zarr_array::Array::open(std::sync::Arc::new(store), "")
        .unwrap()
        .write_region_vlen(&zarr_array::Region::whole(&[2]), nul.view())
        .unwrap();
    let e = fails(&["export", &s(&a), &s(&out)], 1);
    assert!(e.contains("element 1 ends in NUL"), "{e}");
}

/// A `.npy` with a hand-made header (big-endian, Fortran order).
fn npy_file(descr: &str, fortran: bool, shape: &str, body: &[u8]) -> Vec<u8> {
    let dict = format!(
        "{{'descr': '{descr}', 'fortran_order': {}, 'shape': {shape}, }}",
        if fortran { "True" } else { "False" }
    );
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&((dict.len() + 1) as u16).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out.push(b'\n');
    out.extend_from_slice(body);
    out
}

#[test]
fn import_big_endian_and_fortran_order() {
    let dir = tempfile::tempdir().unwrap();
    let values: Vec<f64> = (0..6).map(|i| i as f64 * 1.5 - 2.0).collect();
    let c_order: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
    // [[v0 v1 v2] [v3 v4 v5]] big-endian, C order
    let be: Vec<u8> = values.iter().flat_map(|v| v.to_be_bytes()).collect();
    // the same matrix column-major, little-endian
    let f: Vec<u8> = [0, 3, 1, 4, 2, 5]
        .iter()
        .flat_map(|&i| values[i].to_le_bytes())
        .collect();
    // and big-endian complex in Fortran order
    for (name, bytes) in [
        ("be", npy_file(">f8", false, "(2, 3)", &be)),
        ("fortran", npy_file("<f8", true, "(2, 3)", &f)),
    ] {
        let src = dir.path().join(format!("{name}.npy"));
        std::fs::write(&src, bytes).unwrap();
        let arr = dir.path().join(name);
        ok(&["import", &s(&src), &s(&arr), "--chunks", "2,2"]);
        let out = dir.path().join(format!("{name}.out.npy"));
        ok(&["export", &s(&arr), &s(&out)]);
        let got = read_npy(&out);
        assert_eq!(
            (got.shape.clone(), got.data.clone()),
            (vec![2, 3], c_order.clone()),
            "{name}"
        );
        // what is written is little-endian and C order
        let raw = std::fs::read(&out).unwrap();
        let text = String::from_utf8_lossy(&raw[..128]).to_string();
        assert!(
            text.contains("'<f8'") && text.contains("'fortran_order': False"),
            "{text}"
        );
    }
    let cplx: Vec<u8> = [1.0f32, -1.0, 2.0, -2.0]
        .iter()
        .flat_map(|v| v.to_be_bytes())
        .collect();
    let src = dir.path().join("c.npy");
    std::fs::write(&src, npy_file(">c8", true, "(2,)", &cplx)).unwrap();
    ok(&["import", &s(&src), &s(&dir.path().join("c"))]);
    let out = dir.path().join("c.out.npy");
    ok(&["export", &s(&dir.path().join("c")), &s(&out)]);
    let want: Vec<u8> = [1.0f32, -1.0, 2.0, -2.0]
        .iter()
        .flat_map(|v| v.to_ne_bytes())
        .collect();
    assert_eq!(read_npy(&out).data, want);
}

#[test]
fn import_errors() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.npy");
    let arr = s(&dir.path().join("a"));
    for (name, bytes) in [
        ("garbage", b"hello world".to_vec()),
        ("empty", Vec::new()),
        ("truncated", npy_file("<i4", false, "(2, 3)", &[0; 10])),
        ("unsupported", npy_file("|O", false, "(2,)", &[0; 16])),
        ("bad header", npy_file("<i4", false, "(2, ", &[])),
        ("bad bool", npy_file("|b1", false, "(2,)", &[0, 5])),
        ("short strings", npy_file("<U4", false, "(2,)", &[0; 31])),
        (
            "not a code point",
            npy_file("<U1", false, "(1,)", &[0, 0, 0x11, 0]),
        ),
    ] {
        std::fs::write(&bad, bytes).unwrap();
        let e = fails(&["import", &s(&bad), &arr], 1);
        assert!(e.contains("bad.npy"), "{name}: {e}");
    }
    let e = fails(&["import", &s(&dir.path().join("missing.npy")), &arr], 1);
    assert!(e.contains("no such file"), "{e}");
    let e = fails(&["import", &s(dir.path()), &arr], 1);
    assert!(e.contains(&s(dir.path())), "{e}");
    assert!(!dir.path().join("a").exists());
    // kept fixed-width, a U element that is not UTF-32 is refused before anything is written
    std::fs::write(
        &bad,
        npy_file("<U1", false, "(2,)", &[97, 0, 0, 0, 0, 0, 0x11, 0]),
    )
    .unwrap();
    let e = fails(&["import", &s(&bad), &arr, "--fixed-width"], 1);
    assert!(e.contains("element 1 of the <U strings"), "{e}");
    assert!(!dir.path().join("a").exists());
    // shards need --chunks
    write_npy(&bad, DataType::Int8, &[4], &[1, 2, 3, 4]);
    fails(&["import", &s(&bad), &arr, "--shards", "4"], 2);
}

#[test]
fn export_regions() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.npy");
    write_npy(&src, DataType::Int32, &[6, 5], &i32s(0..30));
    let a = dir.path().join("a");
    ok(&["import", &s(&src), &s(&a), "--chunks", "4,2"]);
    let out = dir.path().join("out.npy");
    ok(&["export", &s(&a), &s(&out), "--region", "1:3,2:5"]);
    let got = read_npy(&out);
    assert_eq!(got.shape, vec![2, 3]);
    assert_eq!(to_i32(&got.data), vec![7, 8, 9, 12, 13, 14]);
    // a single index drops its axis; missing trailing axes are whole
    ok(&["export", &s(&a), &s(&out), "--region", "4"]);
    let got = read_npy(&out);
    assert_eq!(
        (got.shape, to_i32(&got.data)),
        (vec![5], vec![20, 21, 22, 23, 24])
    );
    ok(&["export", &s(&a), &s(&out), "--region", ":,3"]);
    assert_eq!(to_i32(&read_npy(&out).data), vec![3, 8, 13, 18, 23, 28]);
    ok(&["export", &s(&a), &s(&out), "--region", "5:,:1"]);
    assert_eq!(to_i32(&read_npy(&out).data), vec![25]);
    let e = fails(&["export", &s(&a), &s(&out), "--region", "0:7"], 1);
    assert!(e.contains("axis 0 of length 6"), "{e}");
    fails(&["export", &s(&a), &s(&out), "--region", "0:2,0:1,0:1"], 1);
    fails(&["export", &s(&a), &s(&out), "--region", "a:b"], 2);
    let e = fails(&["export", &s(&dir.path().join("nope")), &s(&out)], 1);
    assert!(e.contains("no such directory"), "{e}");
    let e = fails(&["export", &s(dir.path()), &s(&out)], 1);
    assert!(e.contains("no Zarr array or group"), "{e}");
    let e = fails(
        &[
            "export",
            &s(&a),
            &s(&dir.path().join("no/such/dir/out.npy")),
        ],
        1,
    );
    assert!(e.contains("out.npy"), "{e}");
}

#[test]
fn write_blocks_and_their_errors() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a");
    ok(&[
        "create",
        &s(&a),
        "--shape",
        "5,6",
        "--chunks",
        "2,4",
        "--dtype",
        "int32",
        "--fill-value",
        "-1",
    ]);
    let block = dir.path().join("block.npy");
    write_npy(&block, DataType::Int32, &[2, 3], &i32s([1, 2, 3, 4, 5, 6]));
    ok(&["write", &s(&a), &s(&block), "--at", "1,2"]);
    let out = dir.path().join("out.npy");
    ok(&["export", &s(&a), &s(&out)]);
    let v = to_i32(&read_npy(&out).data);
    assert_eq!(&v[6..12], &[-1, -1, 1, 2, 3, -1]);
    assert_eq!(&v[12..18], &[-1, -1, 4, 5, 6, -1]);
    assert_eq!(v.iter().filter(|&&x| x == -1).count(), 24);
    // wrong data type
    let f = dir.path().join("f.npy");
    write_npy(&f, DataType::Float64, &[2, 3], &[0; 48]);
    let e = fails(&["write", &s(&a), &s(&f)], 1);
    assert!(e.contains("float64") && e.contains("int32"), "{e}");
    // outside the array, wrong rank, wrong --at
    let e = fails(&["write", &s(&a), &s(&block), "--at", "4,4"], 1);
    assert!(e.contains("does not fit"), "{e}");
    let flat = dir.path().join("flat.npy");
    write_npy(&flat, DataType::Int32, &[3], &i32s([1, 2, 3]));
    fails(&["write", &s(&a), &s(&flat)], 1);
    fails(&["write", &s(&a), &s(&block), "--at", "1"], 1);
    // nothing changed by the failures
    let out2 = dir.path().join("out2.npy");
    ok(&["export", &s(&a), &s(&out2)]);
    assert_eq!(read_npy(&out2).data, read_npy(&out).data);
}

#[test]
fn append_prepend_resize() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a");
    let base = dir.path().join("base.npy");
    write_npy(&base, DataType::Int32, &[4, 3], &i32s(0..12));
    ok(&["import", &s(&base), &s(&a), "--chunks", "3,2"]);
    let rows = dir.path().join("rows.npy");
    write_npy(
        &rows,
        DataType::Int32,
        &[2, 3],
        &i32s([100, 101, 102, 103, 104, 105]),
    );
    let cols = dir.path().join("cols.npy");
    write_npy(
        &cols,
        DataType::Int32,
        &[6, 1],
        &i32s([-1, -2, -3, -4, -5, -6]),
    );
    ok(&["append", &s(&a), &s(&rows), "--axis", "0"]);
    ok(&["prepend", &s(&a), &s(&cols), "--axis", "1"]);
    let i = info(&a);
    assert_eq!(i["shape"], json!([6, 4]));
    assert_eq!(i["domain"], json!([[0, 6], [-1, 3]]));
    let out = dir.path().join("out.npy");
    ok(&["export", &s(&a), &s(&out)]);
    assert_eq!(
        to_i32(&read_npy(&out).data),
        vec![
            -1, 0, 1, 2, -2, 3, 4, 5, -3, 6, 7, 8, -4, 9, 10, 11, -5, 100, 101, 102, -6, 103, 104,
            105
        ]
    );

    // shape mismatches, a wrong axis and a wrong type change nothing
    let before = snapshot(&a);
    let e = fails(&["append", &s(&a), &s(&rows), "--axis", "0"], 1);
    assert!(e.contains("[2, 3]") && e.contains("[k, 4]"), "{e}");
    let e = fails(&["prepend", &s(&a), &s(&rows), "--axis", "1"], 1);
    assert!(e.contains("[6, k]"), "{e}");
    let e = fails(&["append", &s(&a), &s(&cols), "--axis", "2"], 1);
    assert!(e.contains("axis"), "{e}");
    let f = dir.path().join("f.npy");
    write_npy(&f, DataType::Float32, &[1, 4], &[0; 16]);
    fails(&["prepend", &s(&a), &s(&f), "--axis", "0"], 1);
    fails(&["append", &s(&a), &s(&rows)], 2); // --axis is required
    assert_eq!(snapshot(&a), before);

    // resize down then up: the regrown part reads as fill
    ok(&["resize", &s(&a), "--shape", "3,2"]);
    ok(&["resize", &s(&a), "--shape", "4,4"]);
    ok(&["export", &s(&a), &s(&out)]);
    assert_eq!(
        to_i32(&read_npy(&out).data),
        vec![-1, 0, 0, 0, -2, 3, 0, 0, -3, 6, 0, 0, 0, 0, 0, 0]
    );
    let e = fails(&["resize", &s(&a), "--shape", "4"], 1);
    assert!(e.contains("dimensions"), "{e}");

    // a 0-d array has no axis to grow along, and the message says so
    let scalar = dir.path().join("scalar.npy");
    write_npy(&scalar, DataType::Int32, &[], &i32s([7]));
    let z = dir.path().join("z");
    ok(&["import", &s(&scalar), &s(&z)]);
    let before = snapshot(&z);
    for grow in ["append", "prepend"] {
        let e = fails(&[grow, &s(&z), &s(&scalar), "--axis", "0"], 1);
        assert!(e.contains("0-d and has no axes"), "{e}");
        assert!(!e.contains("axes 0 to"), "{e}");
    }
    assert_eq!(snapshot(&z), before);
    // one axis: not "axes 0 to 0" either
    let line = dir.path().join("line");
    write_npy(&line, DataType::Int32, &[3], &i32s([1, 2, 3]));
    let l = dir.path().join("l");
    ok(&["import", &s(&line), &s(&l)]);
    let e = fails(&["append", &s(&l), &s(&line), "--axis", "1"], 1);
    assert!(e.contains("the array has 1 dimension (axis 0)"), "{e}");
}

#[test]
fn tree_and_group_info() {
    let dir = tempfile::tempdir().unwrap();
    let demo = dir.path().join("demo");
    let out = ok(&["quickstart", &s(&demo)]);
    for want in [
        "dense",
        "prepended",
        "zarr tree",
        "zarr info",
        "zarr export",
        "regular_bounded",
    ] {
        assert!(out.contains(want), "{want}:\n{out}");
    }
    let tree = ok(&["tree", &s(&demo)]);
    assert!(tree.contains("dense  int32 [6, 4]"), "{tree}");
    assert!(
        tree.contains("prepended  int32 [9, 4] (regular_bounded)"),
        "{tree}"
    );
    let i = info(&demo);
    assert_eq!(i["node_type"], "group");
    let members: Vec<&str> = i["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert!(
        members.contains(&"dense") && members.contains(&"prepended"),
        "{members:?}"
    );
    // an array alone
    let t = ok(&["tree", &s(&demo.join("dense"))]);
    assert_eq!(t.lines().count(), 1, "{t}");
    // quickstart's advice works
    let exported = dir.path().join("p.npy");
    ok(&["export", &s(&demo.join("prepended")), &s(&exported)]);
    let v = to_i32(&read_npy(&exported).data);
    assert_eq!((v[0], v[12]), (2, 1));
    ok(&["validate", &s(&demo)]);
    // never into a non-empty directory
    let e = fails(&["quickstart", &s(&demo)], 1);
    assert!(e.contains("not empty"), "{e}");
    fails(&["tree", &s(&dir.path().join("nope"))], 1);
    // a group where an array is expected
    let e = fails(&["export", &s(&demo), &s(&exported)], 1);
    assert!(e.contains("is a group, not an array"), "{e}");
}

#[test]
fn validate_finds_problems() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.npy");
    write_npy(
        &src,
        DataType::Float32,
        &[8, 8],
        &random(DataType::Float32, 64, 3),
    );
    let a = dir.path().join("a");
    ok(&[
        "import",
        &s(&src),
        &s(&a),
        "--chunks",
        "4,4",
        "--codec",
        "zstd:1",
        "--codec",
        "crc32c",
    ]);
    let out = ok(&["validate", &s(&a)]);
    assert!(out.contains("ok") && out.contains("4 chunks"), "{out}");

    // flip a byte of one chunk: its checksum fails
    let chunk = a.join("c/1/0");
    let mut bytes = std::fs::read(&chunk).unwrap();
    bytes[3] ^= 0x55;
    std::fs::write(&chunk, &bytes).unwrap();
    let r = zarr(&["validate", &s(&a)]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("problem: c/1/0"), "{}", r.stdout);
    assert!(!r.stdout.contains("c/0/0"), "{}", r.stdout);
    assert!(r.stderr.contains("1 problem"), "{}", r.stderr);
    assert!(!r.stderr.contains("panicked"));

    // a truncated chunk, a stray file and a chunk outside the grid
    std::fs::write(
        a.join("c/0/1"),
        &std::fs::read(a.join("c/0/0")).unwrap()[..5],
    )
    .unwrap();
    std::fs::write(a.join("c/notes.txt"), b"hello").unwrap();
    std::fs::create_dir_all(a.join("c/9")).unwrap();
    std::fs::write(a.join("c/9/9"), b"x").unwrap();
    let r = zarr(&["validate", &s(&a)]);
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("problem: c/0/1"), "{}", r.stdout);
    assert!(r.stdout.contains("problem: c/notes.txt"), "{}", r.stdout);
    assert!(r.stdout.contains("note: c/9/9"), "{}", r.stdout);
    assert!(r.stderr.contains("3 problems"), "{}", r.stderr);

    // bad metadata
    std::fs::write(a.join("zarr.json"), b"{\"zarr_format\": 3, ").unwrap();
    let r = zarr(&["validate", &s(&a)]);
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("zarr.json"), "{}", r.stdout);

    // inside a hierarchy, problems name the node
    let demo = dir.path().join("demo");
    ok(&["quickstart", &s(&demo)]);
    std::fs::write(demo.join("dense/c/0/0"), b"not zstd").unwrap();
    let r = zarr(&["validate", &s(&demo)]);
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("problem: dense/c/0/0"), "{}", r.stdout);
    fails(&["validate", &s(&dir.path().join("nope"))], 1);
}

/// Every `: `-separated part of two or more words appears once in `line`.
fn each_cause_once(line: &str) {
    for part in line.trim().split(": ") {
        if part.split_whitespace().count() >= 2 {
            assert_eq!(line.matches(part).count(), 1, "{part:?} repeated in {line}");
        }
    }
}

#[test]
fn errors_print_each_cause_once() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.npy");
    write_npy(&src, DataType::Int32, &[8, 8], &i32s(0..64));
    let out = dir.path().join("out.npy");

    // a corrupt gzip chunk: array error, codec error, then the decompressor's error
    let a = dir.path().join("a");
    ok(&[
        "import",
        &s(&src),
        &s(&a),
        "--chunks",
        "4,4",
        "--codec",
        "gzip:1",
    ]);
    std::fs::write(a.join("c/0/0"), [b'x'; 40]).unwrap();
    let r = zarr(&["validate", &s(&a)]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let problem = r
        .stdout
        .lines()
        .find(|l| l.starts_with("problem:"))
        .unwrap();
    assert!(problem.starts_with("problem: c/0/0: gzip "), "{problem}");
    each_cause_once(problem);
    let e = fails(&["export", &s(&a), &s(&out)], 1);
    assert!(e.contains(": c/0/0: gzip "), "{e}");
    each_cause_once(&e);

    // a flipped byte in a shard: the inner chunk's checksum fails
    let b = dir.path().join("b");
    ok(&[
        "import",
        &s(&src),
        &s(&b),
        "--chunks",
        "2,2",
        "--shards",
        "4,4",
        "--codec",
        "crc32c",
    ]);
    let shard = b.join("c/0/0");
    let mut bytes = std::fs::read(&shard).unwrap();
    bytes[1] ^= 0x55;
    std::fs::write(&shard, &bytes).unwrap();
    let r = zarr(&["validate", &s(&b)]);
    let problem = r
        .stdout
        .lines()
        .find(|l| l.starts_with("problem:"))
        .unwrap();
    assert!(problem.contains("checksum mismatch"), "{problem}");
    each_cause_once(problem);
    let e = fails(&["export", &s(&b), &s(&out)], 1);
    assert!(
        e.contains("inner chunk [0, 0]") && e.contains("checksum"),
        "{e}"
    );
    each_cause_once(&e);

    // missing nodes: a directory without zarr.json, a member a group does not have
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    for args in [
        vec!["info".to_string(), s(&empty)],
        vec!["export".to_string(), s(&empty), s(&out)],
    ] {
        let e = fails(&args, 1);
        assert!(e.contains("no Zarr array or group here"), "{e}");
        each_cause_once(&e);
    }
    let demo = dir.path().join("demo");
    ok(&["quickstart", &s(&demo)]);
    std::fs::create_dir(demo.join("nothing")).unwrap();
    let e = fails(&["export", &s(&demo.join("nothing")), &s(&out)], 1);
    assert!(e.contains("no Zarr array or group here"), "{e}");
    each_cause_once(&e);
}

#[test]
fn convert_string_arrays_and_a_failed_convert_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("s.zarr");
    ok(&[
        "create",
        &s(&a),
        "--shape",
        "5",
        "--chunks",
        "2",
        "--dtype",
        "string",
    ]);
    let block = dir.path().join("block.npy");
    let words = npy::NpyStrings {
        data_type: DataType::String,
        shape: vec![5],
        items: ["a", "", "é", "zz", "x"]
            .iter()
            .map(|w| w.as_bytes().to_vec())
            .collect(),
    };
    std::fs::write(&block, words.to_bytes().unwrap()).unwrap();
    ok(&["write", &s(&a), &s(&block)]);
    // another chunk shape
    let b = dir.path().join("b.zarr");
    ok(&["convert", &s(&a), &s(&b), "--chunks", "3"]);
    let out = dir.path().join("out.npy");
    ok(&["export", &s(&b), &s(&out)]);
    assert_eq!(
        npy::NpyStrings::parse(&std::fs::read(&out).unwrap()).unwrap(),
        words
    );
    // a corrupt chunk stops the copy: the destination is removed
    std::fs::write(a.join("c").join("1"), b"\x01").unwrap();
    let c = dir.path().join("c.zarr");
    fails(&["convert", &s(&a), &s(&c), "--chunks", "3"], 1);
    assert!(!c.exists(), "a failed convert left {c:?}");
}

#[test]
fn convert_layouts() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.npy");
    let data = random(DataType::Int16, 13 * 11, 5);
    write_npy(&src, DataType::Int16, &[13, 11], &data);
    let a = dir.path().join("a");
    ok(&[
        "import",
        &s(&src),
        &s(&a),
        "--chunks",
        "4,4",
        "--dimension-names",
        "y,x",
        "--attrs",
        r#"{"k": 1}"#,
    ]);
    let check = |p: &std::path::Path| {
        let out = dir.path().join("check.npy");
        ok(&["export", &s(p), &s(&out)]);
        assert_eq!(read_npy(&out).data, data, "{}", p.display());
    };
    // rechunk, recompress, shard, unshard
    let b = dir.path().join("b");
    ok(&[
        "convert",
        &s(&a),
        &s(&b),
        "--chunks",
        "5,3",
        "--codec",
        "gzip:6",
    ]);
    let i = info(&b);
    assert_eq!(i["chunk_shape"], json!([5, 3]));
    assert_eq!(i["codecs"][1]["name"], "gzip");
    assert_eq!(i["dimension_names"], json!(["y", "x"]));
    assert_eq!(i["attributes"], json!({"k": 1}));
    check(&b);
    let c = dir.path().join("c");
    ok(&["convert", &s(&b), &s(&c), "--shards", "10,6"]);
    let i = info(&c);
    assert_eq!(i["chunk_shape"], json!([10, 6]));
    assert_eq!(
        i["codecs"][0]["configuration"]["chunk_shape"],
        json!([5, 3])
    );
    assert_eq!(i["codecs"][0]["configuration"]["codecs"][1]["name"], "gzip");
    check(&c);
    let d = dir.path().join("d");
    ok(&["convert", &s(&c), &s(&d), "--no-shards", "--codec", "none"]);
    let i = info(&d);
    assert_eq!(i["chunk_shape"], json!([5, 3]));
    assert_eq!(
        i["codecs"],
        json!([{"name": "bytes", "configuration": {"endian": "little"}}])
    );
    check(&d);
    // a plain copy keeps the metadata
    let e = dir.path().join("e");
    ok(&["convert", &s(&c), &s(&e)]);
    let (mut ic, mut ie) = (info(&c), info(&e));
    for i in [&mut ic, &mut ie] {
        i.as_object_mut().unwrap().remove("path");
    }
    assert_eq!(ic, ie);
    check(&e);

    // a prepended array, kept bounded or made regular
    let rows = dir.path().join("rows.npy");
    let front = random(DataType::Int16, 3 * 11, 6);
    write_npy(&rows, DataType::Int16, &[3, 11], &front);
    ok(&["prepend", &s(&a), &s(&rows), "--axis", "0"]);
    let whole: Vec<u8> = [front.clone(), data.clone()].concat();
    let f = dir.path().join("f");
    ok(&["convert", &s(&a), &s(&f), "--chunks", "6,6"]);
    assert_eq!(info(&f)["domain"], json!([[-3, 13], [0, 11]]));
    let g = dir.path().join("g");
    ok(&["convert", &s(&a), &s(&g), "--to-regular"]);
    let i = info(&g);
    assert_eq!(i["chunk_grid"]["name"], "regular");
    assert_eq!(i["domain"], json!([[0, 16], [0, 11]]));
    assert_eq!(
        i["attributes"]["regular_bounded"]["domain"],
        json!([[-3, 13], [0, 11]])
    );
    // a user attribute named regular_bounded is never overwritten: the conversion is refused
    let meta_path = a.join("zarr.json");
    let original = std::fs::read(&meta_path).unwrap();
    let mut doc: serde_json::Value = serde_json::from_slice(&original).unwrap();
    doc["attributes"]["regular_bounded"] = json!("mine");
    std::fs::write(&meta_path, serde_json::to_vec(&doc).unwrap()).unwrap();
    let g2 = dir.path().join("g2");
    let e = fails(&["convert", &s(&a), &s(&g2), "--to-regular"], 1);
    assert!(
        e.contains("\"regular_bounded\"") && e.contains("rename it first"),
        "{e}"
    );
    assert!(!g2.exists());
    std::fs::write(&meta_path, &original).unwrap();
    for p in [&f, &g] {
        let out = dir.path().join("x.npy");
        ok(&["export", &s(p), &s(&out)]);
        assert_eq!(read_npy(&out).data, whole);
    }
    // the regular copy opens without the grid; the original does not
    ok(&["info", &s(&g), "--without", "regular_bounded"]);
    fails(&["info", &s(&a), "--without", "regular_bounded"], 1);

    // errors
    let e = fails(&["convert", &s(&a), &s(&b)], 1);
    assert!(e.contains("already"), "{e}");
    fails(
        &[
            "convert",
            &s(&dir.path().join("nope")),
            &s(&dir.path().join("h")),
        ],
        1,
    );
    fails(
        &[
            "convert",
            &s(&a),
            &s(&dir.path().join("h")),
            "--chunks",
            "4",
        ],
        1,
    );
    fails(
        &[
            "convert",
            &s(&a),
            &s(&dir.path().join("h")),
            "--shards",
            "4,4",
            "--chunks",
            "3,3",
        ],
        1,
    );
    fails(
        &[
            "convert",
            &s(&a),
            &s(&dir.path().join("h")),
            "--shards",
            "4,4",
            "--no-shards",
        ],
        2,
    );
    fails(
        &[
            "convert",
            &s(&a),
            &s(&dir.path().join("h")),
            "--sparse",
            "coo",
            "--dense",
        ],
        2,
    );
    assert!(!dir.path().join("h").exists());
}

#[test]
fn help_and_version() {
    let r = zarr(&["--help"]);
    assert_eq!(r.code, 0);
    for cmd in [
        "create",
        "import",
        "export",
        "write",
        "append",
        "prepend",
        "resize",
        "info",
        "tree",
        "validate",
        "convert",
        "quickstart",
        "conformance",
    ] {
        assert!(r.stdout.contains(cmd), "{cmd} missing from --help");
    }
    assert_eq!(zarr(&["--version"]).code, 0);
    assert_eq!(zarr(&["conformance", "--help"]).code, 0);
    fails(&Vec::<String>::new(), 2);
}

#[test]
fn consolidate_validate_and_tree_of_a_hierarchy_with_an_unreadable_member() {
    use zarr_array::zarr_store::{FilesystemStore, Store};
    use zarr_array::{ArrayBuilder, DataType, Group};
    let dir = tempfile::tempdir().unwrap();
    let root_dir = dir.path().join("h");
    std::fs::create_dir(&root_dir).unwrap();
    let store: std::sync::Arc<dyn Store> =
        std::sync::Arc::new(FilesystemStore::open(&root_dir).unwrap());
    let root = Group::create(store.clone(), "", Default::default()).unwrap();
    root.create_array("a", &ArrayBuilder::new(vec![4], DataType::UInt8))
        .unwrap();
    let sub = root.create_group("sub", Default::default()).unwrap();
    sub.create_array("b", &ArrayBuilder::new(vec![2, 3], DataType::Int16))
        .unwrap();
    let mut odd: Value =
        serde_json::from_slice(&store.get("a/zarr.json").unwrap().unwrap()).unwrap();
    odd["codecs"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "no_such_codec"}));
    store
        .set("odd/zarr.json", &serde_json::to_vec(&odd).unwrap())
        .unwrap();

    let tree = ok(&["tree", &s(&root_dir)]);
    let lines: Vec<&str> = tree.lines().collect();
    assert_eq!(lines[1], "├── a  uint8 [4]", "{tree}");
    assert!(
        lines[2].starts_with("├── odd  (unreadable: ") && lines[2].contains("no_such_codec"),
        "{tree}"
    );
    assert_eq!(
        lines[3..],
        ["└── sub  group", "    └── b  int16 [2, 3]"],
        "{tree}"
    );
    let i = info(&root_dir);
    let odd_member = &i["members"].as_array().unwrap()[1];
    assert_eq!(odd_member["node_type"], "unreadable", "{i}");
    assert!(
        odd_member["error"]
            .as_str()
            .unwrap()
            .contains("no_such_codec"),
        "{i}"
    );

    let out = ok(&["consolidate", &s(&root_dir)]);
    assert!(out.contains("4 nodes"), "{out}");
    let doc: Value = serde_json::from_slice(&store.get("zarr.json").unwrap().unwrap()).unwrap();
    let listed: Vec<&String> = doc["consolidated_metadata"]["metadata"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(listed, ["a", "odd", "sub", "sub/b"]);
    // the tree from the copy is the same
    assert_eq!(ok(&["tree", &s(&root_dir)]), tree);
    // validate: the copy agrees (the unknown codec is the one problem)
    let r = zarr(&["validate", &s(&root_dir)]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stdout.contains("no_such_codec") && !r.stdout.contains("consolidated"),
        "{r:?}"
    );
    std::fs::remove_dir_all(root_dir.join("odd")).unwrap();
    ok(&["consolidate", &s(&root_dir)]);
    ok(&["validate", &s(&root_dir)]);
    // an append by a writer that does not update the copy: validate says so
    let mut b: Value =
        serde_json::from_slice(&store.get("sub/b/zarr.json").unwrap().unwrap()).unwrap();
    b["shape"] = json!([5, 3]);
    store
        .set("sub/b/zarr.json", &serde_json::to_vec(&b).unwrap())
        .unwrap();
    let r = zarr(&["validate", &s(&root_dir)]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stdout
            .contains("consolidated metadata of \"sub/b\" differs from its own metadata in shape"),
        "{r:?}"
    );
    ok(&["consolidate", &s(&root_dir)]);
    ok(&["validate", &s(&root_dir)]);
    // `zarr resize` of a member updates the copy of the group above it
    ok(&["resize", &s(&root_dir.join("sub/b")), "--shape", "7,3"]);
    let doc: Value = serde_json::from_slice(&store.get("zarr.json").unwrap().unwrap()).unwrap();
    assert_eq!(
        doc["consolidated_metadata"]["metadata"]["sub/b"]["shape"],
        json!([7, 3])
    );
    ok(&["validate", &s(&root_dir)]);
}

#[test]
fn create_over_leftover_chunks_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a");
    ok(&[
        "create",
        &s(&a),
        "--shape",
        "4",
        "--chunks",
        "2",
        "--dtype",
        "uint8",
    ]);
    let block = dir.path().join("b.npy");
    write_npy(&block, DataType::UInt8, &[4], &[9, 9, 9, 9]);
    ok(&["write", &s(&a), &s(&block)]);
    std::fs::remove_file(a.join("zarr.json")).unwrap();
    let e = fails(
        &[
            "create",
            &s(&a),
            "--shape",
            "4",
            "--chunks",
            "2",
            "--dtype",
            "int16",
        ],
        1,
    );
    assert!(e.contains("holds keys but no node metadata"), "{e}");
    assert!(a.join("c").exists(), "the leftovers are kept");
}

/// 4 processes x 25 `zarr append` calls of `<U8` blocks on one `string` array on the
/// filesystem, in chunks and in shards: nothing lost, nothing torn (issue 37, item 3).
#[test]
fn files_four_processes_append_strings() {
    let dir = tempfile::tempdir().unwrap();
    for sharded in [false, true] {
        let arr = dir.path().join(format!("strings-sharded-{sharded}"));
        let blocks = dir.path().join(format!("blocks-sharded-{sharded}"));
        std::fs::create_dir(&blocks).unwrap();
        four_processes_append_strings(&s(&arr), &blocks, sharded);
    }
}
