//! Helpers for the black-box tests: run the built `zarr`, write and read `.npy` files.
#![allow(dead_code)] // each test binary uses a part of it

use std::path::{Path, PathBuf};
use std::process::Command;

pub use zarr_array::DataType;
pub use zarr_cli::npy::{self, Npy};

/// What a run of `zarr` gave.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `zarr` with these arguments.
pub fn zarr<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_zarr"))
        .args(args)
        .output()
        .expect("run zarr");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs `zarr`, expects success and nothing on stderr (no progress bar off a terminal);
/// returns stdout.
pub fn ok<S: AsRef<std::ffi::OsStr> + std::fmt::Debug>(args: &[S]) -> String {
    let r = zarr(args);
    assert_eq!(r.code, 0, "zarr {args:?} failed: {}{}", r.stdout, r.stderr);
    assert_eq!(r.stderr, "", "zarr {args:?} wrote to stderr");
    r.stdout
}

/// Runs `zarr`, expects exit `code` and one error line on stderr (no panic, no backtrace);
/// returns that line.
pub fn fails<S: AsRef<std::ffi::OsStr> + std::fmt::Debug>(args: &[S], code: i32) -> String {
    let r = zarr(args);
    assert_eq!(r.code, code, "zarr {args:?}: {}{}", r.stdout, r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    assert!(!r.stderr.contains("RUST_BACKTRACE"), "{}", r.stderr);
    if code == 1 {
        let lines: Vec<&str> = r.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "one line on stderr: {:?}", r.stderr);
        assert!(lines[0].starts_with("zarr: error: "), "{}", lines[0]);
    }
    r.stderr
}

/// `p` as a string argument.
pub fn s(p: &Path) -> String {
    p.to_str().expect("utf-8 path").to_string()
}

/// Writes a `.npy` file (native-order data).
pub fn write_npy(path: &Path, t: DataType, shape: &[u64], data: &[u8]) {
    std::fs::write(path, npy::to_bytes(t, shape, data)).unwrap();
}

/// Reads a `.npy` file.
pub fn read_npy(path: &Path) -> Npy {
    Npy::parse(&std::fs::read(path).unwrap()).unwrap()
}

/// Native bytes of i32 values.
pub fn i32s(v: impl IntoIterator<Item = i32>) -> Vec<u8> {
    v.into_iter().flat_map(i32::to_ne_bytes).collect()
}

/// i32 values of native bytes.
pub fn to_i32(b: &[u8]) -> Vec<i32> {
    b.chunks_exact(4)
        .map(|c| i32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Deterministic pseudo-random bytes; bool bytes 0/1, floats finite.
pub fn random(t: DataType, n: usize, seed: u64) -> Vec<u8> {
    let mut out = zarr_testkit::Rng::new(seed).bytes(n * t.size());
    match t {
        DataType::Bool => out.iter_mut().for_each(|b| *b &= 1),
        DataType::Float16 => out.chunks_exact_mut(2).for_each(|c| c[1] &= 0x3f),
        DataType::Float32 | DataType::Complex64 => {
            out.chunks_exact_mut(4).for_each(|c| c[3] &= 0x3f)
        }
        DataType::Float64 | DataType::Complex128 => {
            out.chunks_exact_mut(8).for_each(|c| c[7] &= 0x3f)
        }
        _ => {}
    }
    out
}

/// The workspace root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every file under `dir` with its bytes, keyed by relative path.
pub fn snapshot(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut std::collections::BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = Default::default();
    walk(dir, dir, &mut out);
    out
}

// ---------------------------------------------------------------------------------------------
// Four processes appending string blocks to one array at once (issue 37, item 3).

/// The writers of [`four_processes_append_strings`], and the blocks each appends.
pub const STRING_WRITERS: u32 = 4;
pub const STRING_BLOCKS: u32 = 25;
/// The columns of the `string` array the writers append rows to.
const STRING_COLS: u64 = 3;

/// Row `r`, column `c` of block `b` of writer `w`: 8 characters (a `<U8` file), never the
/// fill value `""`, naming its block and its place in it.
fn string_cell(w: u32, b: u32, r: u64, c: u64) -> String {
    format!("w{w}:{b:02}:{r}{c}")
}

/// The rows of block `b` of writer `w`: 1 to 3, so that blocks end inside chunks (and
/// shards) and neighbouring appends share them.
fn string_rows(w: u32, b: u32) -> u64 {
    1 + u64::from((w + b) % 3)
}

/// Creates a `[0, 3]` `string` array at `url` (chunks of 4 rows; with `sharded`, shards of
/// 8 rows of them), then runs `zarr append URL BLOCK.npy --axis 0` from [`STRING_WRITERS`]
/// processes at once, each appending its [`STRING_BLOCKS`] `<U8` blocks (of 1 to 3 rows)
/// one after the other, as users would; then checks with `zarr export` that every block
/// landed once, whole, in consecutive rows, each writer's in the order it appended, and that
/// `zarr validate` passes. `dir` holds the `.npy` files.
pub fn four_processes_append_strings(url: &str, dir: &Path, sharded: bool) {
    let cols = STRING_COLS.to_string();
    let mut create = vec![
        "create".to_string(),
        url.to_string(),
        "--shape".into(),
        format!("0,{cols}"),
        "--chunks".into(),
        format!("4,{cols}"),
        "--dtype".into(),
        "string".into(),
    ];
    if sharded {
        create.extend(["--shards".into(), format!("8,{cols}")]);
    }
    ok(&create);
    let blocks: Vec<Vec<PathBuf>> = (0..STRING_WRITERS)
        .map(|w| {
            (0..STRING_BLOCKS)
                .map(|b| {
                    let rows = string_rows(w, b);
                    let file = npy::NpyStrings {
                        data_type: DataType::String,
                        shape: vec![rows, STRING_COLS],
                        items: (0..rows)
                            .flat_map(|r| {
                                (0..STRING_COLS).map(move |c| string_cell(w, b, r, c).into_bytes())
                            })
                            .collect(),
                    };
                    let bytes = file.to_bytes().expect("a .npy file of strings");
                    assert!(
                        String::from_utf8_lossy(&bytes).contains("'descr': '<U8'"),
                        "the blocks are <U8 files"
                    );
                    let path = dir.join(format!("w{w}b{b}.npy"));
                    std::fs::write(&path, bytes).unwrap();
                    path
                })
                .collect()
        })
        .collect();
    std::thread::scope(|scope| {
        for (w, files) in blocks.iter().enumerate() {
            scope.spawn(move || {
                for (b, file) in files.iter().enumerate() {
                    let out = Command::new(env!("CARGO_BIN_EXE_zarr"))
                        .args(["append", url, &s(file), "--axis", "0"])
                        .stdin(std::process::Stdio::null())
                        .output()
                        .expect("run zarr append");
                    assert!(
                        out.status.success(),
                        "writer {w}, block {b}: zarr append failed: {}{}",
                        String::from_utf8_lossy(&out.stdout),
                        String::from_utf8_lossy(&out.stderr)
                    );
                }
            });
        }
    });

    let out = dir.join("all.npy");
    ok(&["export", url, &s(&out)]);
    let all = npy::NpyStrings::parse(&std::fs::read(&out).unwrap()).unwrap();
    let rows: u64 = (0..STRING_WRITERS)
        .flat_map(|w| (0..STRING_BLOCKS).map(move |b| string_rows(w, b)))
        .sum();
    assert_eq!(all.shape, [rows, STRING_COLS], "the array's shape");
    let cell = |row: u64, c: u64| -> String {
        String::from_utf8_lossy(&all.items[(row * STRING_COLS + c) as usize]).into_owned()
    };
    let mut per_writer = vec![Vec::new(); STRING_WRITERS as usize];
    let mut row = 0;
    while row < rows {
        let first = cell(row, 0);
        assert_ne!(first, "", "row {row} is fill: a block was lost or torn");
        let parsed = first
            .strip_prefix('w')
            .and_then(|rest| rest.split_once(':'))
            .and_then(|(w, rest)| Some((w.parse::<u32>().ok()?, rest.split_once(':')?.0)))
            .and_then(|(w, b)| Some((w, b.parse::<u32>().ok()?)))
            .filter(|&(w, b)| w < STRING_WRITERS && b < STRING_BLOCKS);
        let (w, b) =
            parsed.unwrap_or_else(|| panic!("row {row} starts with {first:?}, no block's first"));
        for r in 0..string_rows(w, b) {
            assert!(
                row + r < rows,
                "block {b} of writer {w} is cut at its row {r}"
            );
            for c in 0..STRING_COLS {
                assert_eq!(
                    cell(row + r, c),
                    string_cell(w, b, r, c),
                    "block {b} of writer {w} is not whole at its row {r}, column {c} (array \
                     row {})",
                    row + r
                );
            }
        }
        per_writer[w as usize].push(b);
        row += string_rows(w, b);
    }
    for (w, found) in per_writer.iter().enumerate() {
        assert_eq!(
            found,
            &(0..STRING_BLOCKS).collect::<Vec<_>>(),
            "writer {w}'s blocks, in the order found"
        );
    }
    ok(&["validate", url]);
}
