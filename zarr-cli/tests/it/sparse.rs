//! `--sparse`: the sparse_layout codec as the serializer, with index and pointer types wide
//! enough for the chunk shape.
//!
//! The codec is being added to zarr-codecs; until `Extensions::default()` has
//! "sparse_layout", the tests that need it print a note and return, and the ones here check
//! that asking for it fails cleanly with the library's "unknown codec" error.

use crate::common::*;
use serde_json::{json, Value};

fn info(path: &std::path::Path) -> Value {
    serde_json::from_str(&ok(&["info", &s(path), "--json"])).unwrap()
}

/// A mostly-zero float32 matrix.
fn sparse_data(rows: usize, cols: usize) -> Vec<u8> {
    let mut v = vec![0f32; rows * cols];
    for i in 0..rows * cols / 20 {
        v[(i * 7919) % (rows * cols)] = i as f32 + 0.25;
    }
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

#[test]
fn without_the_codec_sparse_fails_cleanly() {
    // a registry without the codec (as in a build without it): `--without sparse_layout`
    let dir = tempfile::tempdir().unwrap();
    let e = fails(
        &[
            "--without",
            "sparse_layout",
            "create",
            &s(&dir.path().join("a")),
            "--shape",
            "10,10",
            "--chunks",
            "5,5",
            "--dtype",
            "float32",
            "--sparse",
            "csr",
        ],
        1,
    );
    assert!(e.contains("sparse_layout"), "{e}");
    assert!(!dir.path().join("a").exists());
}

#[test]
fn sparse_formats_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.npy");
    let data = sparse_data(30, 20);
    write_npy(&src, DataType::Float32, &[30, 20], &data);
    for (format, index, pointer) in [
        ("csr", "uint16", Some("uint32")),
        ("csc", "uint16", Some("uint32")),
        ("coo", "uint16", None),
    ] {
        let a = dir.path().join(format);
        ok(&[
            "import",
            &s(&src),
            &s(&a),
            "--chunks",
            "10,8",
            "--sparse",
            format,
        ]);
        let i = info(&a);
        let codec = &i["codecs"][0];
        assert_eq!(codec["name"], "sparse_layout");
        assert_eq!(codec["configuration"]["format"], format);
        assert_eq!(codec["configuration"]["index_data_type"], index);
        assert_eq!(
            codec["configuration"]
                .get("pointer_data_type")
                .and_then(Value::as_str),
            pointer
        );
        let out = dir.path().join(format!("{format}.out.npy"));
        ok(&["export", &s(&a), &s(&out)]);
        assert_eq!(read_npy(&out).data, data, "{format}");
        ok(&["validate", &s(&a)]);
    }
    // wide chunks need wide indices
    let wide = dir.path().join("wide");
    ok(&[
        "create",
        &s(&wide),
        "--shape",
        "2,70000",
        "--chunks",
        "2,70000",
        "--dtype",
        "float32",
        "--sparse",
        "csr",
    ]);
    assert_eq!(
        info(&wide)["codecs"][0]["configuration"]["index_data_type"],
        "uint32"
    );
    // sharded: the sparse layout applies to the inner chunks
    let sh = dir.path().join("sh");
    ok(&[
        "import",
        &s(&src),
        &s(&sh),
        "--chunks",
        "10,10",
        "--shards",
        "30,20",
        "--sparse",
        "csr",
        "--codec",
        "zstd:3",
    ]);
    let i = info(&sh);
    let inner = &i["codecs"][0]["configuration"];
    assert_eq!(inner["codecs"][0]["name"], "sparse_layout");
    assert_eq!(inner["codecs"][1]["name"], "zstd");
    let out = dir.path().join("sh.out.npy");
    ok(&["export", &s(&sh), &s(&out)]);
    assert_eq!(read_npy(&out).data, data);
    // csr/csc need 2-d
    let e = fails(
        &[
            "create",
            &s(&dir.path().join("x")),
            "--shape",
            "4,4,4",
            "--chunks",
            "2,2,2",
            "--dtype",
            "int8",
            "--sparse",
            "csr",
        ],
        1,
    );
    assert!(e.contains("2-d"), "{e}");
    // convert to dense and back
    let dense = dir.path().join("dense");
    ok(&[
        "convert",
        &s(&dir.path().join("csr")),
        &s(&dense),
        "--dense",
    ]);
    assert_eq!(
        info(&dense)["codecs"][0],
        json!({"name": "bytes", "configuration": {"endian": "little"}})
    );
    let back = dir.path().join("back");
    ok(&[
        "convert",
        &s(&dense),
        &s(&back),
        "--sparse",
        "coo",
        "--chunks",
        "15,10",
    ]);
    ok(&["export", &s(&back), &s(&out)]);
    assert_eq!(read_npy(&out).data, data);
    // a reader without the codec refuses, by name
    let e = fails(&["info", &s(&back), "--without", "sparse_layout"], 1);
    assert!(e.contains("sparse_layout"), "{e}");
    assert!(e.contains("`zarr convert SRC DST --dense`"), "{e}");
}

#[test]
fn quickstart_and_corpus_include_sparse() {
    let dir = tempfile::tempdir().unwrap();
    let demo = dir.path().join("demo");
    let out = ok(&["quickstart", &s(&demo)]);
    assert!(out.contains("demo/sparse"), "{out}");
    assert!(ok(&["tree", &s(&demo)]).contains("sparse"));
    ok(&["validate", &s(&demo)]);
    let corpus = dir.path().join("corpus");
    ok(&["conformance", "write", &s(&corpus)]);
    let m: Value =
        serde_json::from_slice(&std::fs::read(corpus.join("manifest.json")).unwrap()).unwrap();
    let n = m["fixtures"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["path"].as_str().unwrap().starts_with("sp"))
        .count();
    assert!(n >= 8, "{n} sparse fixtures");
    ok(&[
        "conformance",
        "run",
        &s(&corpus),
        "--",
        env!("CARGO_BIN_EXE_zarr"),
        "export",
    ]);
}

/// `zarr import` / `zarr export` of sparse matrix files and groups (zarr-sparse-io): the
/// format from the name or `--format`, round trips through every format, bad input refused
/// with its place and nothing left behind.
#[test]
fn sparse_matrix_files_import_and_export() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| s(&dir.path().join(n));
    // column-major, as 10x Genomics writes; one symmetric pair of entries
    let mtx = "%%MatrixMarket matrix coordinate real general\n% made by hand\n4 5 4\n2 1 1.5\n4 1 -2\n1 3 3.25\n2 5 4\n";
    std::fs::write(dir.path().join("m.mtx"), mtx).unwrap();
    let out = ok(&["import", &p("m.mtx"), &p("a"), "--chunks", "2,3"]);
    assert!(out.contains("float64 [4, 5]"), "{out}");
    let want = [
        0.0, 0.0, 3.25, 0.0, 0.0, 1.5, 0.0, 0.0, 0.0, 4.0, 0.0, 0.0, 0.0, 0.0, 0.0, -2.0, 0.0, 0.0,
        0.0, 0.0,
    ];
    let dense = |array: &str| {
        ok(&["export", &p(array), &p(&format!("{array}.npy"))]);
        let npy = read_npy(&dir.path().join(format!("{array}.npy")));
        npy.data
            .chunks(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect::<Vec<_>>()
    };
    assert_eq!(dense("a"), want);
    // the import's own default compressor, zstd level 1; --codec replaces it
    let zstd = |array: &str| {
        let meta: Value = serde_json::from_slice(
            &std::fs::read(dir.path().join(array).join("zarr.json")).unwrap(),
        )
        .unwrap();
        meta["codecs"].as_array().unwrap()[1..].to_vec()
    };
    assert_eq!(
        zstd("a"),
        [json!({"name": "zstd", "configuration": {"level": 1, "checksum": false}})]
    );
    ok(&["import", &p("m.mtx"), &p("a5"), "--codec", "zstd:5"]);
    assert_eq!(zstd("a5")[0]["configuration"]["level"], 5);
    assert_eq!(dense("a5"), want);
    ok(&["export", &p("a"), &p("a.mtx.gz")]);
    ok(&["export", &p("a"), &p("a.npz"), "--layout", "csc"]);
    ok(&[
        "export",
        &p("a"),
        &p("ad"),
        "--format",
        "anndata",
        "--zarr-format",
        "2",
    ]);
    ok(&[
        "export",
        &p("a"),
        &p("ad"),
        "--format",
        "anndata",
        "--element",
        "layers/raw",
        "--layout",
        "csc",
    ]);
    ok(&[
        "export",
        &p("a"),
        &p("bs"),
        "--format",
        "binsparse",
        "--layout",
        "coo",
    ]);
    for (src, dst) in [
        ("a.mtx.gz", "b"),
        ("a.npz", "c"),
        ("ad/X", "d"),
        ("ad/layers/raw", "e"),
        ("bs", "f"),
    ] {
        ok(&["import", &p(src), &p(dst)]);
        assert_eq!(dense(dst), want, "{src}");
    }
    // a dense array is not a sparse matrix; --region is for .npy exports
    ok(&[
        "create",
        &p("dense"),
        "--shape",
        "4,5",
        "--chunks",
        "2,5",
        "--dtype",
        "float64",
    ]);
    let e = fails(&["export", &p("dense"), &p("x.mtx")], 1);
    assert!(e.contains("sparse"), "{e}");
    assert!(!dir.path().join("x.mtx").exists());
    let e = fails(&["export", &p("a"), &p("x.mtx"), "--region", "0:1"], 2);
    assert!(e.contains("--region"), "{e}");
    // bad input: its place named, exit code 1, no array left
    std::fs::write(
        dir.path().join("bad.mtx"),
        "%%MatrixMarket matrix coordinate real general\n4 5 2\n1 1 1\n9 1 2\n",
    )
    .unwrap();
    let e = fails(&["import", &p("bad.mtx"), &p("g")], 1);
    assert!(
        e.contains("bad.mtx line 4: entry (8, 0) lies outside the 4x5 matrix"),
        "{e}"
    );
    assert!(!dir.path().join("g").join("zarr.json").exists());
    let g = dir.path().join("g");
    assert!(
        !g.exists() || snapshot(&g).is_empty(),
        "{:?}",
        snapshot(&g).keys()
    );
}
