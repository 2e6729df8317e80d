//! The `zarr` command on urls (cargo feature `object-store`, on by default): url handling
//! that needs no server, and, against a real S3-compatible server (the `s3_*` tests), every
//! subcommand on `s3://` paths, the requests `zarr info` costs, four `zarr write`
//! processes writing disjoint chunks (then disjoint whole shards) of one array at once, and
//! four processes each running 25 `zarr append` calls of string blocks on one array. The
//! `s3_*` tests are ignored by a plain `cargo test`; `scripts/test` runs them once it has
//! started the server. By hand:
//!
//! ```text
//! eval "$(scripts/s3-server)"
//! cargo test -p zarr-cli --test s3 -- --ignored
//! scripts/s3-server stop
//! ```
//!
//! Without a server (`AWS_ENDPOINT_URL` unset, or nothing answering) they fail.
#![cfg(feature = "object-store")]

mod common;

use std::process::{Command, Stdio};
use std::sync::Arc;

use common::*;
use serde_json::Value;
use zarr_array::zarr_store::{ObjectStoreBackend, Store};
use zarr_array::{Array, ArrayBuilder};
use zarr_cli::cli::InfoArgs;
use zarr_cli::store::Ctx;
use zarr_testkit::s3;

// ---------------------------------------------------------------------------------------------
// The S3 server (scripts/s3-server; scripts/test starts it).

const BUCKET: &str = "zarr-cli-test";

fn unique_url(test: &str) -> String {
    format!("s3://{BUCKET}/{}", s3::unique_prefix(test))
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

// ---------------------------------------------------------------------------------------------
// Without a server.

#[test]
fn urls_without_a_server() {
    let dir = tempfile::tempdir().unwrap();
    let e = fails(&["info", "ftp://host/x"], 2);
    assert!(e.contains("unknown scheme \"ftp\""), "{e}");
    let e = fails(&["info", "s3://b/x/../y"], 2);
    assert!(e.contains("'.' and '..'"), "{e}");

    // http(s):// is read-only: refused before any request is sent (nothing listens on :9)
    let e = fails(
        &[
            "create",
            "http://127.0.0.1:9/x.zarr",
            "--shape",
            "4",
            "--chunks",
            "2",
            "--dtype",
            "int32",
        ],
        1,
    );
    assert!(e.contains("read-only"), "{e}");

    // file:// urls are directories: opening a missing one creates nothing
    let missing = dir.path().join("no such");
    let url = format!("file://{}", s(&missing).replace(' ', "%20"));
    let e = fails(&["info", &url], 1);
    assert!(e.contains("no such directory"), "{e}");
    assert!(!missing.exists());
    let made = dir.path().join("made here");
    let url = format!("file://{}", s(&made).replace(' ', "%20"));
    ok(&[
        "create", &url, "--shape", "6", "--chunks", "4", "--dtype", "uint8",
    ]);
    let by_url = json(&ok(&["info", &url, "--json"]));
    let by_path = json(&ok(&["info", &s(&made), "--json"]));
    assert_eq!(by_url["shape"], by_path["shape"]);
    assert_eq!(by_path["chunks_stored"], 0, "local stores are listed");
    let unlisted = json(&ok(&["info", &s(&made), "--json", "--no-list"]));
    assert_eq!(unlisted["chunks_stored"], Value::Null);
    assert_eq!(unlisted["bytes_stored"], Value::Null);
    assert_eq!(unlisted["chunks_total"], 2);
    let text = ok(&["info", &s(&made), "--no-list"]);
    assert!(
        text.contains("2 in the grid (stored chunks not counted"),
        "{text}"
    );
}

// ---------------------------------------------------------------------------------------------
// Every subcommand on s3:// paths.

#[test]
#[ignore = "needs the local S3 server (scripts/test starts it and runs this)"]
fn s3_subcommands() {
    s3::endpoint(BUCKET);
    let dir = tempfile::tempdir().unwrap();
    let base = unique_url("subcommands");
    let z = format!("{base}/z");
    let ones = dir.path().join("ones.npy");
    let twos = dir.path().join("twos.npy");
    write_npy(&ones, DataType::Int32, &[6, 4], &i32s([1; 24]));
    write_npy(&twos, DataType::Int32, &[3, 4], &i32s([2; 12]));

    ok(&[
        "create", &z, "--shape", "6,4", "--chunks", "4,4", "--dtype", "int32",
    ]);
    ok(&["write", &z, &s(&ones)]);
    ok(&["prepend", &z, &s(&twos), "--axis", "0"]);
    ok(&["append", &z, &s(&twos), "--axis", "0"]);

    // info: no listing by default on a remote store; --list counts
    let info = json(&ok(&["info", &z, "--json"]));
    assert_eq!(info["path"], z.as_str());
    assert_eq!(info["shape"], serde_json::json!([12, 4]));
    assert_eq!(info["domain"], serde_json::json!([[-3, 9], [0, 4]]));
    assert_eq!(info["chunks_stored"], Value::Null);
    assert_eq!(info["bytes_stored"], Value::Null);
    assert_eq!(info["ratio"], Value::Null);
    assert_eq!(info["chunks_total"], 4);
    let listed = json(&ok(&["info", &z, "--json", "--list"]));
    assert_eq!(listed["chunks_stored"], 4);
    assert!(listed["bytes_stored"].as_u64().unwrap() > 0);
    let text = ok(&["info", &z]);
    assert!(text.contains("regular_bounded"), "{text}");
    assert!(
        text.contains("4 in the grid (stored chunks not counted"),
        "{text}"
    );
    let text = ok(&["info", &z, "--list"]);
    assert!(text.contains("4 stored of 4"), "{text}");

    // export: twos, ones, twos
    let all = dir.path().join("all.npy");
    ok(&["export", &z, &s(&all)]);
    let got = read_npy(&all);
    assert_eq!(got.shape, [12, 4]);
    let mut expected = vec![2; 12];
    expected.extend([1; 24]);
    expected.extend([2; 12]);
    assert_eq!(to_i32(&got.data), expected);
    let part = dir.path().join("part.npy");
    ok(&["export", &z, &s(&part), "--region", "2:4,1:3"]);
    assert_eq!(to_i32(&read_npy(&part).data), [2, 2, 1, 1]);

    ok(&["resize", &z, "--shape", "5,4"]);
    assert_eq!(
        json(&ok(&["info", &z, "--json"]))["shape"],
        serde_json::json!([5, 4])
    );
    ok(&["validate", &z]);

    // import with shards, convert between s3 and a directory, both ways
    let data: Vec<i32> = (0..100 * 30).collect();
    let npy = dir.path().join("data.npy");
    write_npy(&npy, DataType::Int32, &[100, 30], &i32s(data.clone()));
    let sharded = format!("{base}/sharded");
    ok(&[
        "import",
        &s(&npy),
        &sharded,
        "--chunks",
        "10,10",
        "--shards",
        "50,30",
    ]);
    let local = dir.path().join("local");
    ok(&[
        "convert",
        &sharded,
        &s(&local),
        "--no-shards",
        "--chunks",
        "25,30",
    ]);
    let back = format!("{base}/back");
    ok(&["convert", &s(&local), &back, "--shards", "100,30"]);
    for source in [&sharded, &s(&local), &back] {
        let out = dir.path().join("out.npy");
        ok(&["export", source, &s(&out)]);
        assert_eq!(to_i32(&read_npy(&out).data), data, "{source}");
    }
    assert_eq!(
        json(&ok(&["info", &back, "--json", "--list"]))["chunks_stored"],
        1
    );

    // a new hierarchy needs an empty prefix; tree, info on a group, validate
    let demo = format!("{base}/demo");
    ok(&["quickstart", &demo]);
    let e = fails(&["quickstart", &demo], 1);
    assert!(e.contains("is not empty"), "{e}");
    let tree = ok(&["tree", &demo]);
    assert!(
        tree.contains("dense") && tree.contains("prepended"),
        "{tree}"
    );
    let group = json(&ok(&["info", &demo, "--json"]));
    assert_eq!(group["node_type"], "group");
    let report = ok(&["validate", &demo]);
    assert!(report.contains(": ok ("), "{report}");

    // a missing array is an input error naming the url
    let e = fails(&["info", &format!("{base}/nothing")], 1);
    assert!(e.contains("no Zarr array or group here"), "{e}");
    let e = fails(&["export", &format!("{base}/nothing"), &s(&all)], 1);
    assert!(e.contains("no Zarr array or group here"), "{e}");
}

/// `zarr append` and `zarr resize` of an array on an s3:// url inside a consolidated
/// hierarchy (v3, and v2 with `.zmetadata`) update the copy of the group above it, and
/// `zarr validate` then finds the copy true.
#[test]
#[ignore = "needs the local S3 server (scripts/test starts it and runs this)"]
fn s3_append_and_resize_keep_the_consolidated_copy_true() {
    use zarr_array::Group;
    s3::endpoint(BUCKET);
    let dir = tempfile::tempdir().unwrap();
    let twos = dir.path().join("twos.npy");
    write_npy(&twos, DataType::Int32, &[3, 4], &i32s([2; 12]));
    for format in [3u8, 2] {
        let base = unique_url(&format!("consolidated-v{format}"));
        let store: Arc<dyn Store> = Arc::new(ObjectStoreBackend::from_url(&base).unwrap());
        let mut root = if format == 2 {
            Group::create_v2(store.clone(), "", Default::default()).unwrap()
        } else {
            Group::create(store.clone(), "", Default::default()).unwrap()
        };
        // a v2 root's groups are v2 groups
        let sub = root.create_group("sub", Default::default()).unwrap();
        sub.create_array(
            "z",
            &ArrayBuilder::new(vec![6, 4], DataType::Int32)
                .chunk_shape(vec![4, 4])
                .zarr_format(format),
        )
        .unwrap();
        root.consolidate().unwrap();
        let z = format!("{base}/sub/z");
        ok(&["append", &z, &s(&twos), "--axis", "0"]);
        let listed = |store: &Arc<dyn Store>| {
            let root = Group::open(store.clone(), "").unwrap();
            assert!(root.is_consolidated(), "v{format}");
            root.open_array("sub/z").unwrap().shape().to_vec()
        };
        assert_eq!(listed(&store), [9, 4], "v{format}: the copy after append");
        ok(&["resize", &z, "--shape", "7,4"]);
        assert_eq!(listed(&store), [7, 4], "v{format}: the copy after resize");
        let report = ok(&["validate", &base]);
        assert!(report.contains(": ok ("), "v{format}: {report}");
    }
}

/// `zarr conformance write` to the server, then `zarr conformance run` there with
/// `zarr export` as the reader: every fixture read from s3:// urls.
#[test]
#[ignore = "needs the local S3 server (scripts/test starts it and runs this)"]
fn s3_conformance_write_and_run() {
    s3::endpoint(BUCKET);
    let corpus = unique_url("corpus");
    let wrote = ok(&["conformance", "write", &corpus]);
    assert!(wrote.contains("manifest.json lists them"), "{wrote}");
    let zarr_bin = env!("CARGO_BIN_EXE_zarr");
    let r = zarr(&[
        "conformance",
        "run",
        &corpus,
        "--json",
        "--jobs",
        "4",
        "--",
        zarr_bin,
        "export",
    ]);
    let report = json(&r.stdout);
    let failing: Vec<&Value> = report["fixtures"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["outcome"] != "pass")
        .collect();
    assert!(failing.is_empty(), "{failing:#?}");
    assert_eq!(r.code, 0, "{}", r.stderr);
}

// ---------------------------------------------------------------------------------------------
// Requests of `zarr info`.

#[test]
#[ignore = "needs the local S3 server (scripts/test starts it and runs this)"]
fn s3_info_requests() {
    s3::endpoint(BUCKET);
    let url = unique_url("info-requests");
    // 3 x 4 = 12 shards of 2 x 2 inner chunks, every one written
    let array = ArrayBuilder::new(vec![60, 80], zarr_array::DataType::Float32)
        .chunk_shape(vec![10, 10])
        .shards(vec![20, 20])
        .create(zarr_array::zarr_store::open_url(&url).unwrap(), "")
        .unwrap();
    let data = zarr_array::ndarray::ArrayD::from_elem(vec![60, 80], 1.5f32);
    array
        .write_region(&region_at(&[0, 0], &data), data.view())
        .unwrap();

    let (store, requests) = ObjectStoreBackend::from_url(&url)
        .unwrap()
        .with_request_counter();
    let store: Arc<dyn Store> = Arc::new(store);
    let ctx = Ctx::new(&[]).unwrap();
    let info = |json: bool, list: bool| {
        requests.reset();
        let args = InfoArgs {
            path: url.clone(),
            json,
            list,
            no_list: false,
        };
        zarr_cli::info::info_in(&ctx, store.clone(), &args).unwrap();
        let counts = requests.counts();
        eprintln!("requests: zarr info (json {json}, list {list}): {counts:?}");
        counts
    };
    for json in [false, true] {
        let c = info(json, false);
        assert_eq!(
            (c.get, c.total()),
            (1, 1),
            "info reads zarr.json only: {c:?}"
        );
        let c = info(json, true);
        assert_eq!(
            (c.get, c.list, c.head, c.total()),
            (1, 1, 0, 2),
            "info --list: zarr.json and one listing, which carries the sizes: {c:?}"
        );
    }
    // what the binary prints with --list agrees
    let listed = json(&ok(&["info", &url, "--json", "--list"]));
    assert_eq!(listed["chunks_stored"], 12);
    assert_eq!(listed["chunks_total"], 12);
    assert!(Array::open(store, "").is_ok());

    // a group with two members: its zarr.json (twice: tried as an array first), one listing
    // of one level, each member's zarr.json
    let group_url = unique_url("info-requests-group");
    let group = zarr_array::Group::create(
        zarr_array::zarr_store::open_url(&group_url).unwrap(),
        "",
        serde_json::Map::new(),
    )
    .unwrap();
    group.create_group("g", serde_json::Map::new()).unwrap();
    group
        .create_array(
            "a",
            &ArrayBuilder::new(vec![4], zarr_array::DataType::UInt8).chunk_shape(vec![2]),
        )
        .unwrap();
    let (store, requests) = ObjectStoreBackend::from_url(&group_url)
        .unwrap()
        .with_request_counter();
    let args = InfoArgs {
        path: group_url.clone(),
        json: true,
        list: false,
        no_list: false,
    };
    zarr_cli::info::info_in(&ctx, Arc::new(store), &args).unwrap();
    let c = requests.counts();
    eprintln!("requests: zarr info on a group of 2 members: {c:?}");
    assert_eq!(
        (c.get, c.list_with_delimiter, c.total()),
        (4, 1, 5),
        "{c:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Four processes writing one array at once.

/// Runs `zarr write URL BLOCK --at POSITION` for every `(block, position)` in four processes
/// at once, and waits for all of them.
fn four_writers(url: &str, blocks: &[(std::path::PathBuf, String)]) {
    assert_eq!(blocks.len(), 4);
    let children: Vec<_> = blocks
        .iter()
        .map(|(npy, at)| {
            Command::new(env!("CARGO_BIN_EXE_zarr"))
                .args(["write", url, &s(npy), "--at", at])
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn zarr write")
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "zarr write failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
#[ignore = "needs the local S3 server (scripts/test starts it and runs this)"]
fn s3_four_processes_write_one_array() {
    s3::endpoint(BUCKET);
    let dir = tempfile::tempdir().unwrap();
    let base = unique_url("four-writers");
    let n = 128u64;
    let expected: Vec<i32> = (0..(n * n) as i32).map(|v| v * 3 + 1).collect();
    // Block p: rows 32p..32p+32 (unsharded case) or shard p of the 2 x 2 shards.
    let block = |r0: u64, c0: u64, rows: u64, cols: u64| -> Vec<i32> {
        let mut out = Vec::new();
        for r in r0..r0 + rows {
            for c in c0..c0 + cols {
                out.push(expected[(r * n + c) as usize]);
            }
        }
        out
    };

    // 1. chunks of 16 x 16: each process writes a band of 32 rows (16 whole chunks)
    let dense = format!("{base}/dense");
    ok(&[
        "create", &dense, "--shape", "128,128", "--chunks", "16,16", "--dtype", "int32",
    ]);
    let bands: Vec<_> = (0..4u64)
        .map(|p| {
            let npy = dir.path().join(format!("band{p}.npy"));
            write_npy(
                &npy,
                DataType::Int32,
                &[32, n],
                &i32s(block(32 * p, 0, 32, n)),
            );
            (npy, format!("{},0", 32 * p))
        })
        .collect();
    four_writers(&dense, &bands);

    // 2. shards of 64 x 64 (inner chunks 16 x 16): each process writes one whole shard
    let sharded = format!("{base}/sharded");
    ok(&[
        "create", &sharded, "--shape", "128,128", "--chunks", "16,16", "--shards", "64,64",
        "--dtype", "int32",
    ]);
    let shards: Vec<_> = (0..4u64)
        .map(|p| {
            let (r0, c0) = (64 * (p / 2), 64 * (p % 2));
            let npy = dir.path().join(format!("shard{p}.npy"));
            write_npy(
                &npy,
                DataType::Int32,
                &[64, 64],
                &i32s(block(r0, c0, 64, 64)),
            );
            (npy, format!("{r0},{c0}"))
        })
        .collect();
    four_writers(&sharded, &shards);

    // nothing lost: every value read back, every chunk stored, every chunk decodes
    for (url, stored) in [(&dense, 64), (&sharded, 4)] {
        let out = dir.path().join("out.npy");
        ok(&["export", url, &s(&out)]);
        let got = read_npy(&out);
        assert_eq!(got.shape, [n, n]);
        let got = to_i32(&got.data);
        let wrong = got.iter().zip(&expected).filter(|(a, b)| a != b).count();
        assert_eq!(wrong, 0, "{url}: {wrong} values lost or wrong");
        let info = json(&ok(&["info", url, "--json", "--list"]));
        assert_eq!(info["chunks_stored"], stored, "{url}");
        ok(&["validate", url]);
    }
}

/// The region of `data` placed at `start`.
fn region_at<A>(start: &[u64], data: &zarr_array::ndarray::ArrayD<A>) -> zarr_array::Region {
    let shape = data.shape().iter().map(|&n| n as u64).collect();
    zarr_array::Region::new(start.to_vec(), shape).expect("a region")
}

/// 4 processes x 25 `zarr append` calls of `<U8` blocks on one `string` array on the S3
/// server, in chunks and in shards: nothing lost, nothing torn (issue 37, item 3).
#[test]
#[ignore = "needs the local S3 server (scripts/test starts it and runs this)"]
fn s3_four_processes_append_strings() {
    s3::endpoint(BUCKET);
    let base = unique_url("string-appenders");
    for sharded in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("{base}/sharded-{sharded}");
        four_processes_append_strings(&url, dir.path(), sharded);
    }
}
