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
