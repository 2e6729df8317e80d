//! Arrays made by `zarr import` with each codec option are read identically by zarr-python
//! 3.1.6 (through conformance/peers/read_with.py). Ignored by a plain `cargo test`:
//! `scripts/test` exports `ZARR_PEERS_PYTHON_BIN` (the peers' venv) and runs it
//! (`-- --ignored`); run without the venv, it fails.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;

/// Reads every array of `arrays` with zarr-python through `conformance/peers/read_with.py`,
/// all in one Python process (`--batch`: importing zarr-python costs about a second), and
/// compares each with the `.npy` it was imported from; the problems found.
fn zarr_python_reads(py: &Path, arrays: &[(PathBuf, Npy)]) -> Vec<String> {
    let script = repo().join("conformance/peers/read_with.py");
    let outs: Vec<PathBuf> = arrays
        .iter()
        .map(|(array, _)| array.with_extension("peer.npy"))
        .collect();
    let jobs: Vec<serde_json::Value> = arrays
        .iter()
        .zip(&outs)
        .map(|((array, _), out)| serde_json::json!(["zarr-python", array, out]))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let (jobs_file, results_file) = (
        dir.path().join("jobs.json"),
        dir.path().join("results.json"),
    );
    std::fs::write(&jobs_file, serde_json::to_vec(&jobs).unwrap()).unwrap();
    let r = Command::new(py)
        .arg(script)
        .arg("--batch")
        .arg(&jobs_file)
        .arg(&results_file)
        .output()
        .expect("run the peer reader");
    assert!(
        r.status.success(),
        "read_with.py --batch failed ({}): {}",
        r.status,
        String::from_utf8_lossy(&r.stderr)
    );
    let results: Vec<serde_json::Value> =
        serde_json::from_slice(&std::fs::read(&results_file).unwrap()).unwrap();
    assert_eq!(results.len(), arrays.len(), "one result per array");
    let mut problems = Vec::new();
    for (((array, expected), out), result) in arrays.iter().zip(&outs).zip(&results) {
        if result["exit"] != 0 {
            problems.push(format!(
                "zarr-python could not read {} (exit {}): {}",
                array.display(),
                result["exit"],
                result["message"]
            ));
            continue;
        }
        let got = read_npy(out);
        if got.data_type != expected.data_type || got.shape != expected.shape {
            problems.push(format!(
                "{}: {:?} {:?}",
                array.display(),
                got.data_type,
                got.shape
            ));
            continue;
        }
        let size = expected.data_type.size();
        let same = got
            .data
            .chunks_exact(size)
            .zip(expected.data.chunks_exact(size))
            .all(|(a, b)| expected.data_type.elements_equal(a, b));
        if !same {
            problems.push(format!("zarr-python reads {} differently", array.display()));
        }
    }
    problems
}

#[test]
#[ignore = "needs the peers' Python venv (scripts/test provides it and runs this)"]
fn zarr_python_reads_every_codec_option() {
    let py = zarr_testkit::peers::python();
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(&str, DataType, Vec<&str>)> = vec![
        ("default", DataType::Int32, vec![]),
        ("none", DataType::Int32, vec!["--codec", "none"]),
        ("zstd", DataType::Float64, vec!["--codec", "zstd:5"]),
        (
            "zstd_checksum",
            DataType::Int16,
            vec!["--codec", "zstd:-2:checksum"],
        ),
        ("gzip", DataType::UInt8, vec!["--codec", "gzip:6"]),
        (
            "blosc_lz4",
            DataType::Int32,
            vec!["--codec", "blosc:lz4:5:shuffle"],
        ),
        (
            "blosc_zstd",
            DataType::Float32,
            vec!["--codec", "blosc:zstd:3:bitshuffle"],
        ),
        (
            "blosc_zlib",
            DataType::UInt16,
            vec!["--codec", "blosc:zlib:1:noshuffle"],
        ),
        (
            "blosc_lz4hc",
            DataType::Int64,
            vec!["--codec", "blosc:lz4hc:9:shuffle"],
        ),
        (
            "blosc_blosclz",
            DataType::Complex64,
            vec!["--codec", "blosc:blosclz:5:shuffle"],
        ),
        ("crc32c", DataType::Float16, vec!["--codec", "crc32c"]),
        (
            "gzip_crc32c",
            DataType::Bool,
            vec!["--codec", "gzip:1", "--codec", "crc32c"],
        ),
        (
            "shards",
            DataType::Int32,
            vec!["--shards", "10,8", "--codec", "zstd:1"],
        ),
        ("keys_v2", DataType::UInt32, vec!["--key-encoding", "v2"]),
        ("keys_dot", DataType::Complex128, vec!["--separator", "."]),
        (
            "names_fill",
            DataType::Float32,
            vec![
                "--dimension-names",
                "y,x",
                "--fill-value",
                "NaN",
                "--attrs",
                "{\"a\": 1}",
            ],
        ),
    ];
    let mut imported = Vec::new();
    for (i, (name, t, opts)) in cases.into_iter().enumerate() {
        let src = dir.path().join(format!("{name}.npy"));
        write_npy(&src, t, &[17, 13], &random(t, 17 * 13, i as u64 + 10));
        let array = dir.path().join(name);
        let mut args = vec![
            "import".to_string(),
            s(&src),
            s(&array),
            "--chunks".into(),
            "5,4".into(),
        ];
        args.extend(opts.iter().map(|o| o.to_string()));
        ok(&args);
        imported.push((array, read_npy(&src)));
    }
    let problems = zarr_python_reads(&py, &imported);
    assert!(problems.is_empty(), "{problems:#?}");
}
