//! The bench programs run end to end on small sizes (correctness only; nothing is timed).

use std::process::Command;

use zarr_benches::{checksum, make_data};

fn last_line(out: &std::process::Output) -> String {
    assert!(
        out.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    stdout
        .lines()
        .rfind(|l| !l.trim().is_empty())
        .unwrap_or_default()
        .to_string()
}

#[test]
fn peer_bench_writes_and_reads_every_workload() {
    let n = 64u64;
    let data = make_data(n);
    let sum = checksum(&data);
    let plane = (n / 2 * n * n) as usize..((n / 2 + 1) * n * n) as usize;
    let slab_sum = checksum(&data[plane]);
    let dir = tempfile::tempdir().unwrap();
    for w in ["raw", "zstd", "blosc", "shard"] {
        let path = dir.path().join(format!("{w}.zarr"));
        for (op, want) in [("write", sum), ("read", sum), ("slab", slab_sum)] {
            let out = Command::new(env!("CARGO_BIN_EXE_peer-bench"))
                .args([op, w, path.to_str().unwrap(), &n.to_string()])
                .output()
                .unwrap();
            let v: serde_json::Value = serde_json::from_str(&last_line(&out)).unwrap();
            assert_eq!(v["checksum"].as_u64(), Some(want), "{op} {w}");
            assert!(v["seconds"].as_f64().unwrap() >= 0.0);
        }
    }
    let bad = Command::new(env!("CARGO_BIN_EXE_peer-bench"))
        .args(["read", "lz4", "x", "8"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
}

/// The latency benchmark at a small size, as a test of requests in flight and requests made
/// (not of time): 2 rounds for a read of 32^3 chunks (the metadata, then all 64 chunks at
/// once), every upload in flight at once, and a plane through shards in 3 rounds of few
/// requests (the metadata, the 4 shard indexes, each shard's inner chunks in one request).
#[test]
fn latency_bench_keeps_every_request_in_flight() {
    let out = Command::new(env!("CARGO_BIN_EXE_latency-bench"))
        .args(["--n", "128", "--latency-ms", "30", "--repeat", "1"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<serde_json::Value> = stdout
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let row = |workload: &str, op: &str| -> (u64, u64) {
        let r = rows
            .iter()
            .find(|r| r["workload"] == workload && r["op"] == op)
            .unwrap_or_else(|| panic!("no row {workload} {op}: {stdout}"));
        (
            r["requests"].as_u64().unwrap(),
            r["peak_in_flight"].as_u64().unwrap(),
        )
    };
    // 128^3 in 32^3 chunks: 64 objects
    assert_eq!(row("chunks", "write"), (64, 64));
    assert_eq!(row("chunks", "read"), (65, 64));
    // the plane [64]: 16 chunks
    assert_eq!(row("chunks", "plane"), (17, 16));
    // one shard of 128^3: one PUT, one GET
    assert_eq!(row("shards", "write"), (1, 1));
    assert_eq!(row("shards", "read"), (2, 1));
    // the metadata, the index, the 16 inner chunks the plane meets in one request
    assert_eq!(row("shards", "plane"), (3, 1));
}

#[test]
fn prepend_table_prints_a_row_per_grid() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_prepend-table"))
        .args(["--grids", "2", "--repeat", "1", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(last_line(&out).contains("grid arithmetic"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let row = stdout
        .lines()
        .find(|l| l.starts_with("| 8 |"))
        .unwrap_or_else(|| panic!("no row for 8 chunks in {stdout}"));
    assert_eq!(row.matches('|').count(), 8, "{row}");
}

#[test]
fn string_bench_reads_and_writes_a_string_array() {
    use std::sync::Arc;
    use zarr_array::ndarray::arr1;
    use zarr_array::zarr_grid::geometry::Region;
    use zarr_array::zarr_store::FilesystemStore;
    use zarr_array::{ArrayBuilder, DataType};

    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.zarr");
    let dst = dir.path().join("dst.zarr");
    let a = ArrayBuilder::new(vec![3], DataType::String)
        .chunk_shape(vec![2])
        .create(Arc::new(FilesystemStore::create(&src).unwrap()), "")
        .unwrap();
    let items = arr1(&["ab".to_string(), "é".into(), String::new()]).into_dyn();
    a.write_region_vlen(&Region::whole(&[3]), items.view())
        .unwrap();
    // 4 UTF-8 bytes, byte sum 97 + 98 + 0xC3 + 0xA9 = 559, weighted lengths 0*2 + 1*2 + 2*0
    let want = 4 * 1_000_003 + 559 * 10_007 + 2;
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_string-bench"))
            .args(args)
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_str(&last_line(&out)).unwrap();
        v["checksum"].as_u64()
    };
    let (src, dst) = (src.to_str().unwrap(), dst.to_str().unwrap());
    assert_eq!(run(&["read", src]), Some(want));
    assert_eq!(run(&["write", src, dst]), Some(want));
    assert_eq!(run(&["read", dst]), Some(want));
}
