//! Writes `conformance/zarrs/`: arrays on the `rectilinear` chunk grid written by zarrs, each
//! with the `.npy` it must decode to, and a `manifest.json` in the layout of
//! `conformance/v3/manifest.json`. Usage: `zarrs-writer OUT_DIR` (OUT_DIR must not exist).
//!
//! Every array is read back with zarrs and compared with its data before the `.npy` is written.
//! The data is a fixed formula of the element's position, so a rerun writes the same tree.
//!
//! `zarrs-writer --check-project NEW_DIR` checks the other direction: this project writes
//! rectilinear arrays (created, appended to, resized) and zarrs must read them exactly
//! (`project.rs`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{json, Value};
use zarrs::array::{Array, ArrayMetadata};
use zarrs::filesystem::FilesystemStore;

/// An element type the fixtures use: its NumPy descr and little-endian bytes.
trait Element:
    zarrs::array::Element + zarrs::array::ElementOwned + Copy + PartialEq + std::fmt::Debug
{
    const DESCR: &'static str;
    fn le(self) -> Vec<u8>;
    fn from_index(i: u64) -> Self;
}

impl Element for i32 {
    const DESCR: &'static str = "<i4";
    fn le(self) -> Vec<u8> {
        self.to_le_bytes().to_vec()
    }
    fn from_index(i: u64) -> Self {
        (i as i32).wrapping_mul(7919) - 1000
    }
}

impl Element for f64 {
    const DESCR: &'static str = "<f8";
    fn le(self) -> Vec<u8> {
        self.to_le_bytes().to_vec()
    }
    fn from_index(i: u64) -> Self {
        i as f64 * 0.25 - 3.0
    }
}

impl Element for u8 {
    const DESCR: &'static str = "|u1";
    fn le(self) -> Vec<u8> {
        vec![self]
    }
    fn from_index(i: u64) -> Self {
        (i % 251) as u8
    }
}

/// A NumPy `.npy` file (version 1.0, C order) of `values` with `shape`.
fn npy<T: Element>(shape: &[u64], values: &[T]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
    let shape_text = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let mut header = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {shape_text}, }}",
        T::DESCR
    );
    // magic (6) + version (2) + header length (2) + header, padded to 64 with a final newline
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&u16::try_from(header.len()).unwrap().to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    for v in values {
        out.extend(v.le());
    }
    out
}

/// One fixture: an array's metadata and the region of it that is written (the rest keeps
/// the fill value: those chunks are never stored).
struct Fixture {
    path: &'static str,
    why: &'static str,
    metadata: Value,
    written: Vec<std::ops::Range<u64>>,
}

fn write<T: Element>(out: &Path, store: &Arc<FilesystemStore>, f: &Fixture, fill: T) -> Value {
    let metadata: ArrayMetadata = serde_json::from_value(f.metadata.clone()).expect("metadata");
    let array = Array::new_with_metadata(store.clone(), &format!("/{}", f.path), metadata)
        .unwrap_or_else(|e| panic!("{}: zarrs refuses the metadata: {e}", f.path));
    array.store_metadata().expect("store metadata");
    let shape: Vec<u64> = array.shape().to_vec();
    let strides: Vec<u64> = (0..shape.len())
        .map(|d| shape[d + 1..].iter().product())
        .collect();
    let total: u64 = shape.iter().product();
    let mut expected = vec![fill; total as usize];
    let written_shape: Vec<u64> = f.written.iter().map(|r| r.end - r.start).collect();
    let written_count: u64 = written_shape.iter().product();
    let mut block = Vec::with_capacity(written_count as usize);
    for k in 0..written_count {
        // the position of the k-th element of the written region, in C order
        let mut rest = k;
        let mut flat = 0;
        for d in (0..shape.len()).rev() {
            let p = f.written[d].start + rest % written_shape[d];
            rest /= written_shape[d];
            flat += p * strides[d];
        }
        let v = T::from_index(flat);
        expected[flat as usize] = v;
        block.push(v);
    }
    array
        .store_array_subset(&f.written, &block[..])
        .unwrap_or_else(|e| panic!("{}: write: {e}", f.path));
    let back: Vec<T> = array
        .retrieve_array_subset(&array.subset_all())
        .unwrap_or_else(|e| panic!("{}: read back: {e}", f.path));
    assert_eq!(back, expected, "{}: zarrs reads back what it wrote", f.path);
    let name = format!("{}.npy", f.path);
    std::fs::write(out.join(&name), npy(&shape, &expected)).expect("write .npy");
    json!({"path": f.path, "node": "array", "writer": "zarrs", "expect": "read",
           "data": name, "why": f.why})
}

mod project;

fn main() {
    let usage = "usage: zarrs-writer OUT_DIR | zarrs-writer --check-project NEW_DIR";
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, dir] = args.as_slice() {
        if flag == "--check-project" {
            if let Err(e) = project::check(Path::new(dir)) {
                eprintln!("zarrs-writer --check-project: {e}");
                std::process::exit(1);
            }
            return;
        }
    }
    let out = PathBuf::from(args.first().expect(usage));
    assert!(
        !out.exists(),
        "{} exists: give a new directory",
        out.display()
    );
    std::fs::create_dir_all(&out).expect("create OUT_DIR");
    let store = Arc::new(FilesystemStore::new(&out).expect("filesystem store"));
    let bytes = json!({"name": "bytes", "configuration": {"endian": "little"}});
    let mut fixtures = Vec::new();

    let f = Fixture {
        path: "rectilinear_rle_zstd",
        why: "rectilinear, run-length form [[4, 3], 10, 8] on axis 0 and a regular axis of 5; zstd; int32 30x13, a partial last chunk on axis 1",
        metadata: json!({
            "zarr_format": 3, "node_type": "array", "shape": [30, 13], "data_type": "int32",
            "chunk_grid": {"name": "rectilinear", "configuration": {
                "kind": "inline", "chunk_shapes": [[[4, 3], 10, 8], 5]}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": 0,
            "codecs": [bytes, {"name": "zstd", "configuration": {"level": 3, "checksum": false}}]}),
        written: vec![0..30, 0..13],
    };
    fixtures.push(write::<i32>(&out, &store, &f, 0));

    let f = Fixture {
        path: "rectilinear_explicit_fill",
        why: "rectilinear, explicit edges [1, 2, 3, 6] and [3, 7]; float64 fill -1.5; only rows 2..7 written, so chunks 0 and 3 of axis 0 are missing; '.' keys",
        metadata: json!({
            "zarr_format": 3, "node_type": "array", "shape": [12, 10], "data_type": "float64",
            "chunk_grid": {"name": "rectilinear", "configuration": {
                "kind": "inline", "chunk_shapes": [[1, 2, 3, 6], [3, 7]]}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "."}},
            "fill_value": -1.5,
            "codecs": [bytes],
            "dimension_names": ["time", "x"]}),
        written: vec![2..7, 1..9],
    };
    fixtures.push(write::<f64>(&out, &store, &f, -1.5));

    let f = Fixture {
        path: "rectilinear_last_chunk_past_end",
        why: "rectilinear, edges [5, 5, 5] on an axis of length 12 (the last chunk reaches past the end); a 3-d uint8 array with gzip",
        metadata: json!({
            "zarr_format": 3, "node_type": "array", "shape": [12, 4, 6], "data_type": "uint8",
            "chunk_grid": {"name": "rectilinear", "configuration": {
                "kind": "inline", "chunk_shapes": [[5, 5, 5], [[2, 2]], [1, 5]]}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": 7,
            "codecs": [bytes, {"name": "gzip", "configuration": {"level": 1}}]}),
        written: vec![0..12, 0..4, 0..6],
    };
    fixtures.push(write::<u8>(&out, &store, &f, 7));

    let f = Fixture {
        path: "rectilinear_sharded",
        why: "rectilinear outer grid [8, [4, 2], 4] x 6 holding sharding_indexed shards of 2x3 inner chunks (zstd, index without checksum); int32 with the last row left at the fill value",
        metadata: json!({
            "zarr_format": 3, "node_type": "array", "shape": [18, 12], "data_type": "int32",
            "chunk_grid": {"name": "rectilinear", "configuration": {
                "kind": "inline", "chunk_shapes": [[8, [4, 2], 2], 6]}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": -1,
            "codecs": [{"name": "sharding_indexed", "configuration": {
                "chunk_shape": [2, 3],
                "codecs": [bytes, {"name": "zstd", "configuration": {"level": 1, "checksum": false}}],
                "index_codecs": [bytes],
                "index_location": "end"}}]}),
        written: vec![0..17, 0..12],
    };
    fixtures.push(write::<i32>(&out, &store, &f, -1));

    let manifest = json!({
        "generator": "conformance/zarrs-writer",
        "zarrs": "0.23.14",
        "fixtures": fixtures,
    });
    std::fs::write(
        out.join("manifest.json"),
        serde_json::to_string_pretty(&manifest).unwrap() + "\n",
    )
    .expect("write manifest");
    println!("{} fixtures in {}", fixtures_len(&manifest), out.display());
}

fn fixtures_len(manifest: &Value) -> usize {
    manifest["fixtures"].as_array().map_or(0, Vec::len)
}
