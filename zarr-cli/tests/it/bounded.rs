//! Bounded memory and time: `zarr export` and `zarr import` move an array of any shape piece
//! by piece within `--max-memory`, refuse an output that cannot fit on its filesystem before
//! writing it, and a seeded corpus of mutated fixtures exported under a 4 GiB address-space
//! limit and 20 s of CPU is read or refused, never aborted, signalled or left running.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;
use zarr_testkit::Rng;

fn i32_array(dir: &Path, shape: &[u64], chunks: &str) -> (String, Vec<i32>) {
    let n: u64 = shape.iter().product();
    let values: Vec<i32> = (0..n as i32).map(|v| v * 7 - 3).collect();
    let npy_path = dir.join("in.npy");
    write_npy(&npy_path, DataType::Int32, shape, &i32s(values.clone()));
    let a = s(&dir.join("a.zarr"));
    ok(&["import", &s(&npy_path), &a, "--chunks", chunks]);
    (a, values)
}

#[test]
fn export_chunk_by_chunk_within_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let (a, values) = i32_array(dir.path(), &[6, 40], "2,4");
    let out = dir.path().join("out.npy");
    // a chunk row is 2 x 40 x 4 = 320 bytes, a chunk 32: 100 bytes forces chunk by chunk
    ok(&["export", &a, &s(&out), "--max-memory", "100"]);
    let back = read_npy(&out);
    assert_eq!(back.shape, vec![6, 40]);
    assert_eq!(to_i32(&back.data), values);
    // a region that starts and ends inside chunks
    ok(&[
        "export",
        &a,
        &s(&out),
        "--region",
        "1:5,3:37",
        "--max-memory",
        "100",
    ]);
    let back = read_npy(&out);
    assert_eq!(back.shape, vec![4, 34]);
    let want: Vec<i32> = (1..5)
        .flat_map(|r| (3..37).map(move |c| r * 40 + c))
        .map(|i| values[i])
        .collect();
    assert_eq!(to_i32(&back.data), want);
    // the same with whole chunk rows (the default budget)
    ok(&["export", &a, &s(&out), "--region", "1:5,3:37"]);
    assert_eq!(to_i32(&read_npy(&out).data), want);
    // a budget below one chunk is refused, naming the sizes and the option
    let e = fails(&["export", &a, &s(&out), "--max-memory", "16"], 1);
    assert!(e.contains("one chunk") && e.contains("--max-memory"), "{e}");
    assert!(e.contains("32 bytes") && e.contains("16 bytes"), "{e}");
    let e = fails(&["export", &a, &s(&out), "--max-memory", "12X"], 2);
    assert!(e.contains("not a size"), "{e}");
}

#[test]
fn export_reads_the_next_slab_while_it_writes_one() {
    let dir = tempfile::tempdir().unwrap();
    let (a, values) = i32_array(dir.path(), &[6, 40], "2,4");
    let out = dir.path().join("out.npy");
    // a chunk row is 320 bytes: within 1000 bytes the slabs are one chunk row each (a
    // quarter of the budget), and three of them fit, so each is read while the one before
    // is written
    ok(&["export", &a, &s(&out), "--max-memory", "1000"]);
    let back = read_npy(&out);
    assert_eq!(back.shape, vec![6, 40]);
    assert_eq!(to_i32(&back.data), values);
    ok(&[
        "export",
        &a,
        &s(&out),
        "--region",
        "1:6,3:37",
        "--max-memory",
        "1000",
    ]);
    let want: Vec<i32> = (1..6)
        .flat_map(|r| (3..37).map(move |c| r * 40 + c))
        .map(|i| values[i])
        .collect();
    assert_eq!(to_i32(&read_npy(&out).data), want);
    // a corrupt chunk in the last slab: an error naming it, and no output left behind
    std::fs::remove_file(&out).unwrap();
    let chunk = Path::new(&a).join("c/2/3");
    std::fs::write(&chunk, [1, 2, 3]).unwrap();
    let e = fails(&["export", &a, &s(&out), "--max-memory", "1000"], 1);
    assert!(e.contains("c/2/3"), "{e}");
    assert!(!out.exists());
}

#[test]
fn an_export_larger_than_the_disk_is_refused_before_it_starts() {
    let dir = tempfile::tempdir().unwrap();
    for (k, (shape, chunks)) in [("10,1099511627776", "10,10"), ("1099511627776,9", "4,9")]
        .into_iter()
        .enumerate()
    {
        let a = s(&dir.path().join(format!("huge{k}.zarr")));
        ok(&[
            "create", &a, "--shape", shape, "--chunks", chunks, "--dtype", "float32",
        ]);
        let out = dir.path().join("out.npy");
        let t = Instant::now();
        let e = fails(&["export", &a, &s(&out)], 1);
        assert!(e.contains("free") && e.contains("TiB"), "{e}");
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "refused after {:?}",
            t.elapsed()
        );
        assert!(!out.exists(), "nothing is left behind");
    }
}

#[test]
fn import_piece_by_piece_within_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let shape = [5u64, 6, 7];
    let values: Vec<i32> = (0..210).map(|v| v * 3 + 1).collect();
    let c = dir.path().join("c.npy");
    write_npy(&c, DataType::Int32, &shape, &i32s(values.clone()));
    // one position along axis 0 is 6 x 7 x 4 = 168 bytes: 200 bytes reads one at a time
    let a = s(&dir.path().join("c.zarr"));
    ok(&[
        "import",
        &s(&c),
        &a,
        "--chunks",
        "2,3,4",
        "--max-memory",
        "200",
    ]);
    let out = dir.path().join("out.npy");
    ok(&["export", &a, &s(&out)]);
    assert_eq!(to_i32(&read_npy(&out).data), values);
    // the same data stored in Fortran order is read along its last axis
    let mut fortran = Vec::new();
    for k in 0..7 {
        for j in 0..6 {
            for i in 0..5 {
                fortran.push(values[i * 42 + j * 7 + k]);
            }
        }
    }
    let f = dir.path().join("f.npy");
    let header = b"{'descr': '<i4', 'fortran_order': True, 'shape': (5, 6, 7), }";
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    let pad = 64 - (10 + header.len() + 1) % 64;
    let mut text = header.to_vec();
    text.extend(std::iter::repeat_n(b' ', pad));
    text.push(b'\n');
    bytes.extend_from_slice(&(text.len() as u16).to_le_bytes());
    bytes.extend_from_slice(&text);
    bytes.extend(fortran.iter().flat_map(|v| v.to_le_bytes()));
    std::fs::write(&f, &bytes).unwrap();
    let b = s(&dir.path().join("f.zarr"));
    ok(&[
        "import",
        &s(&f),
        &b,
        "--chunks",
        "2,3,4",
        "--max-memory",
        "150",
    ]);
    ok(&["export", &b, &s(&out)]);
    assert_eq!(to_i32(&read_npy(&out).data), values);
    // a budget below one position of the slow axis is refused
    let e = fails(
        &[
            "import",
            &s(&c),
            &s(&dir.path().join("x.zarr")),
            "--max-memory",
            "100",
        ],
        1,
    );
    assert!(e.contains("--max-memory") && e.contains("168 bytes"), "{e}");
    assert!(!dir.path().join("x.zarr").exists());
}

#[test]
fn bad_npy_files_create_nothing() {
    let dir = tempfile::tempdir().unwrap();
    // a bool element that is neither 0 nor 1, in the last of several slabs
    let p = dir.path().join("b.npy");
    let mut data = vec![1u8; 64];
    data[60] = 7;
    write_npy(&p, DataType::Bool, &[8, 8], &data);
    let a = dir.path().join("b.zarr");
    let e = fails(&["import", &s(&p), &s(&a), "--max-memory", "16"], 1);
    assert!(e.contains("bool element 60"), "{e}");
    assert!(!a.exists(), "no array is created from a bad file");
    // a header that claims 4 GiB, and a body shorter than the shape
    let mut huge = b"\x93NUMPY\x02\x00".to_vec();
    huge.extend_from_slice(&u32::MAX.to_le_bytes());
    std::fs::write(&p, &huge).unwrap();
    let e = fails(&["import", &s(&p), &s(&a)], 1);
    assert!(e.contains("header claims"), "{e}");
    let short = npy::to_bytes(DataType::Int32, &[4], &i32s([1, 2, 3, 4]));
    std::fs::write(&p, &short[..short.len() - 1]).unwrap();
    let e = fails(&["import", &s(&p), &s(&a)], 1);
    assert!(e.contains("b.npy"), "{e}");
    assert!(!a.exists());
}

/// `zarr args` under the limits of [`limited`], which must succeed: its stderr.
fn limited_ok(args: &[&str]) -> String {
    let owned: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let (code, err) = limited(&owned);
    assert_eq!(code, Some(0), "zarr {args:?}: {err}");
    err
}

/// Issue "bounded time for nonsense": on arrays of 2^40 chunks with a few stored, every
/// command that walks chunks walks the stored ones (each run under 20 s of CPU and 4 GiB of
/// address space: a walk of the grid, or of one of its 2^20-chunk axes, would not finish).
#[test]
fn commands_on_2_pow_40_chunks_cost_what_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let a = s(&dir.path().join("a.zarr"));
    let side = 8u64 << 20;
    let shape = format!("{side},{side}");
    limited_ok(&[
        "create", &a, "--shape", &shape, "--chunks", "8,8", "--dtype", "int32",
    ]);
    let block = dir.path().join("block.npy");
    write_npy(&block, DataType::Int32, &[2, 2], &i32s([1, 2, 3, 4]));
    let far = format!("{},{}", side - 2, side - 2);
    limited_ok(&["write", &a, &s(&block), "--at", "5,5"]);
    limited_ok(&["write", &a, &s(&block), "--at", &far]);
    limited_ok(&["info", &a]);
    let out = ok(&["validate", &a]);
    assert!(out.contains("2 chunks decoded"), "{out}");
    let npy = dir.path().join("out.npy");
    limited_ok(&[
        "export",
        &a,
        &s(&npy),
        "--region",
        &format!("{}:{side},4:7", side - 3),
    ]);
    assert_eq!(to_i32(&read_npy(&npy).data), [0, 0, 0, 0, 0, 0, 0, 0, 0]);
    // shrink past the far block and grow back: it is gone
    limited_ok(&["resize", &a, "--shape", &format!("{},{side}", side / 2)]);
    limited_ok(&["resize", &a, "--shape", &shape]);
    let out = ok(&["validate", &a]);
    assert!(out.contains("1 chunk decoded"), "{out}");
    // copies into other layouts, and v2 (chunk keys moved)
    let b = s(&dir.path().join("b.zarr"));
    limited_ok(&["convert", &a, &b, "--codec", "gzip:1", "--chunks", "16,16"]);
    limited_ok(&["export", &b, &s(&npy), "--region", "4:8,4:8"]);
    assert_eq!(
        to_i32(&read_npy(&npy).data),
        [0, 0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0, 0, 0, 0]
    );
    limited_ok(&["convert", &a, "--to-v2"]);
    let out = ok(&["validate", &a]);
    assert!(out.contains("1 chunk decoded"), "{out}");
    // one axis of 2^40 chunks grown in front and behind, then copied onto a regular grid
    let c = s(&dir.path().join("c.zarr"));
    let length = 4u64 << 40;
    limited_ok(&[
        "create",
        &c,
        "--shape",
        &length.to_string(),
        "--chunks",
        "4",
        "--dtype",
        "int32",
    ]);
    let two = dir.path().join("two.npy");
    write_npy(&two, DataType::Int32, &[2], &i32s([7, 8]));
    limited_ok(&["write", &c, &s(&two), "--at", &(length - 2).to_string()]);
    limited_ok(&["prepend", &c, &s(&two), "--axis", "0"]);
    limited_ok(&["append", &c, &s(&two), "--axis", "0"]);
    limited_ok(&["info", &c]);
    let d = s(&dir.path().join("d.zarr"));
    limited_ok(&["convert", &c, &d, "--to-regular"]);
    let region = format!("{}:{}", length - 2, length + 4);
    limited_ok(&["export", &d, &s(&npy), "--region", &region]);
    assert_eq!(to_i32(&read_npy(&npy).data), [0, 0, 7, 8, 7, 8]);
    // the three stored chunks (one in front, two at the end) land in two chunks of the copy,
    // whose positions start at the first prepended element
    let out = ok(&["validate", &d]);
    assert!(out.contains("2 chunks decoded"), "{out}");
}

/// Runs `zarr args` under `ulimit -v 4 GiB` and `-t 20` s of CPU, killed after 60 s of wall
/// time: its exit code (None when killed by a signal or the deadline) and stderr.
fn limited(args: &[String]) -> (Option<i32>, String) {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 4194304; ulimit -t 20; exec \"$@\"")
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_zarr"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run sh");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                std::io::Read::read_to_string(&mut e, &mut err).unwrap();
            }
            return (status.code(), err);
        }
        if Instant::now() > deadline {
            child.kill().ok();
            child.wait().ok();
            return (None, "killed after 60 s".into());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

/// The number of mutated fixtures (seeded): the 1000.
const MUTANTS: usize = 1000;

#[test]
fn mutated_fixtures_export_or_refuse_within_limits() {
    let corpus = repo().join("conformance/v3");
    let mut arrays: Vec<_> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() && p.join("zarr.json").exists())
        .filter(|p| {
            let doc: Option<serde_json::Value> =
                serde_json::from_slice(&std::fs::read(p.join("zarr.json")).unwrap()).ok();
            doc.is_some_and(|d| {
                d["node_type"] == "array" && d["shape"].as_array().is_some_and(|s| !s.is_empty())
            })
        })
        .collect();
    arrays.sort();
    assert!(
        arrays.len() >= 20,
        "the corpus has arrays: {}",
        arrays.len()
    );
    // sizes an export either writes quickly or must refuse up front (2^40 elements fit on
    // no disk here); a mid-size output such as 2^31 rows would be a real multi-GiB export
    let big = [0u64, 1, 3, 1 << 40, 1 << 62, (1 << 63) - 1, u64::MAX];
    let mut rng = Rng::new(0x05ee_db0d);
    let dir = tempfile::tempdir().unwrap();
    let mut outcomes = [0usize; 2];
    for k in 0..MUTANTS {
        let src = &arrays[rng.below(arrays.len() as u64) as usize];
        let node = dir.path().join(format!("m{k}"));
        copy_dir(src, &node);
        let path = node.join("zarr.json");
        let mut doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let rank = doc["shape"].as_array().unwrap().len();
        let axis = rng.below(rank as u64) as usize;
        let value = big[rng.below(big.len() as u64) as usize];
        match rng.below(3) {
            0 => doc["shape"][axis] = value.into(),
            1 => {
                if let Some(c) = doc["chunk_grid"]["configuration"]["chunk_shape"].get_mut(axis) {
                    *c = value.into();
                }
            }
            _ => {
                doc["shape"][axis] = value.into();
                if let Some(c) = doc["chunk_grid"]["configuration"]["chunk_shape"].get_mut(axis) {
                    *c = big[rng.below(big.len() as u64) as usize].into();
                }
            }
        }
        std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
        let out = node.join("out.npy");
        let (code, err) = limited(&["export".into(), s(&node), s(&out)]);
        let what = format!("mutant {k} of {} ({doc}): {err}", src.display());
        match code {
            Some(0) => outcomes[0] += 1,
            Some(1) => {
                assert_eq!(err.lines().count(), 1, "{what}");
                assert!(err.starts_with("zarr: error: "), "{what}");
                outcomes[1] += 1;
            }
            other => panic!("exit {other:?}: {what}"),
        }
        assert!(!err.contains("panicked"), "{what}");
        std::fs::remove_dir_all(&node).unwrap();
    }
    // both outcomes occur: the mutations are not all refused up front
    assert!(outcomes[0] > 0 && outcomes[1] > 0, "{outcomes:?}");
}
