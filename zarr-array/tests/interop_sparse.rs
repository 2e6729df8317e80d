//! Interop of the `sparse_layout` codec with the second implementation of the format (the
//! NumPy package in `python/zarr_sparse_layout`, registered with zarr-python 3.1.6 on import):
//!
//! - arrays this project writes (3-d COO, CSR, CSC, sharded with a sparse inner codec, with
//!   and without zstd / crc32c, edge chunks) are read by zarr-python through the package and
//!   equal the expected dense arrays;
//! - arrays zarr-python writes through the package decode here to the same data, and every
//!   chunk's sparse bytes (before compression) are the ones our encoder produces.
//!
//! The tests are ignored by a plain `cargo test`: `scripts/test` creates the peers' venv,
//! exports `ZARR_PEERS_PYTHON_BIN` and runs them (`-- --ignored`); run without the venv, or
//! with a peer missing, they fail.
// The codecs (cargo features) these tests use; `scripts/check-features` builds them without.
#![cfg(all(
    feature = "zstd",
    feature = "gzip",
    feature = "blosc",
    feature = "crc32c",
    feature = "sharding",
    feature = "sparse",
    feature = "numcodecs",
    feature = "regular-bounded"
))]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use ndarray::{Array2, ArrayD, IxDyn};
use serde_json::json;
use zarr_array::zarr_codecs::sparse_layout::SparseLayoutCodec;
use zarr_array::zarr_codecs::ArrayToBytesCodec;
use zarr_array::zarr_grid::geometry::{indices, Region};
use zarr_array::zarr_layout_sparse::sprs::TriMat;
use zarr_array::zarr_layout_sparse::Format;
use zarr_array::{Array, ArrayBuilder, DataType, ExtensionDef};
use zarr_store::{FilesystemStore, Store};

/// The directory holding the `zarr_sparse_layout` package.
fn package_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../python")
}

/// Runs a Python snippet with the package importable; panics (naming the snippet's output)
/// when it fails, a missing peer included.
fn run_python(py: &Path, script: &str, args: &[&Path]) {
    let out = Command::new(py)
        .arg("-c")
        .arg(script)
        .arg(package_dir())
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", py.display()));
    assert!(
        out.status.success(),
        "python failed ({}):\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Reads each `(array dir, out.npy)` pair with zarr-python and the package.
const READ: &str = r#"
import sys
sys.path.insert(0, sys.argv[1])
import zarr_sparse_layout, zarr, numpy
for path, out in zip(sys.argv[2::2], sys.argv[3::2]):
    a = zarr.open_array(path, mode="r")
    numpy.save(out, a[...])
"#;

/// Writes sparse arrays with zarr-python and the package under `root`, with their data as
/// `NAME.npy`.
const WRITE: &str = r#"
import os, sys
sys.path.insert(0, sys.argv[1])
import numpy as np, zarr
import zarr_sparse_layout
from zarr_sparse_layout import SparseLayoutCodec
from zarr.codecs import Crc32cCodec, ZstdCodec

root = sys.argv[2]
rng = np.random.default_rng(20240611)

def sparse(shape, dtype, density):
    x = np.zeros(shape, dtype=dtype)
    mask = rng.random(shape) < density
    x[mask] = rng.integers(-50, 50, size=int(mask.sum())).astype(dtype)
    if np.issubdtype(x.dtype, np.floating):
        x[mask] += 0.25
    return x

cases = [
    ("py_coo_3d", sparse((9, 10, 7), "int32", 0.1),
     dict(chunks=(4, 5, 3), serializer=SparseLayoutCodec(format="coo", index_data_type="uint16"),
          compressors=[ZstdCodec(level=3), Crc32cCodec()])),
    ("py_csr", sparse((30, 25), "float32", 0.1),
     dict(chunks=(10, 10),
          serializer=SparseLayoutCodec(format="csr", index_data_type="uint16", pointer_data_type="uint32"),
          compressors=[ZstdCodec(level=1)])),
    ("py_csc", sparse((30, 25), "float64", 0.05),
     dict(chunks=(10, 10),
          serializer=SparseLayoutCodec(format="csc", index_data_type="uint32", pointer_data_type="uint64"),
          compressors=None)),
    ("py_sharded", sparse((40, 36), "float32", 0.05),
     dict(shards=(20, 18), chunks=(10, 9),
          serializer=SparseLayoutCodec(format="csr", index_data_type="uint16", pointer_data_type="uint32"),
          compressors=[ZstdCodec(level=3)])),
]
for name, x, kw in cases:
    a = zarr.create_array(os.path.join(root, name), shape=x.shape, dtype=x.dtype, fill_value=0, **kw)
    a[...] = x
    np.save(os.path.join(root, name + ".npy"), x)
"#;

fn def(name: &str, config: serde_json::Value) -> ExtensionDef {
    match config {
        serde_json::Value::Object(m) => ExtensionDef::with_configuration(name, m),
        _ => ExtensionDef::new(name),
    }
}

/// About `n` random positions of `shape` with small nonzero integer values.
fn random_entries(shape: &[u64], n: usize, seed: u64) -> BTreeMap<Vec<u64>, i64> {
    let mut rng = zarr_testkit::Rng::new(seed);
    let mut out = BTreeMap::new();
    for _ in 0..n {
        let pos = shape.iter().map(|&s| rng.below(s)).collect();
        out.insert(pos, rng.below(200) as i64 - 100);
    }
    out.retain(|_, v| *v != 0);
    out
}

fn write_entries<T: zarr_array::SparseElement>(
    a: &Array,
    entries: &BTreeMap<Vec<u64>, i64>,
    cast: impl Fn(i64) -> T,
) {
    let mut coords = Array2::zeros((a.rank(), entries.len()));
    for (k, pos) in entries.keys().enumerate() {
        for (d, &p) in pos.iter().enumerate() {
            coords[[d, k]] = p;
        }
    }
    let values: Vec<T> = entries.values().map(|&v| cast(v)).collect();
    a.sparse()
        .unwrap()
        .write_coo(coords.view(), &values)
        .unwrap();
}

/// The expected dense bytes (native order) of integer-valued entries.
fn expected_bytes(a: &Array, entries: &BTreeMap<Vec<u64>, i64>) -> Vec<u8> {
    let dims: Vec<usize> = a.shape().iter().map(|&n| n as usize).collect();
    let mut dense = ArrayD::from_elem(IxDyn(&dims), 0i64);
    for (p, &v) in entries {
        let at: Vec<usize> = p.iter().map(|&x| x as usize).collect();
        dense[IxDyn(&at)] = v;
    }
    let t = a.data_type();
    dense
        .iter()
        .flat_map(|&v| match t {
            DataType::Int32 => (v as i32).to_ne_bytes().to_vec(),
            DataType::Float32 => (v as f32).to_ne_bytes().to_vec(),
            DataType::Float64 => (v as f64).to_ne_bytes().to_vec(),
            other => panic!("{other} not used here"),
        })
        .collect()
}

#[test]
#[ignore = "needs the peers' Python venv (scripts/test provides it and runs this)"]
fn zarr_python_reads_sparse_arrays_we_write() {
    let py = zarr_testkit::peers::python();
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::create(dir.path()).unwrap());
    let zstd_crc = vec![
        def("zstd", json!({"level": 3, "checksum": false})),
        def("crc32c", json!(null)),
    ];
    let mut arrays: Vec<(Array, Vec<u8>)> = Vec::new();

    // 3-d COO, edge chunks on every axis, zstd (the builder's default compressor)
    let a = ArrayBuilder::new(vec![9, 11, 7], DataType::Int32)
        .chunk_shape(vec![4, 5, 3])
        .sparse(Format::Coo)
        .create(store.clone(), "rs_coo_3d")
        .unwrap();
    let e = random_entries(a.shape(), 90, 1);
    write_entries(&a, &e, |v| v as i32);
    arrays.push((a.clone(), expected_bytes(&a, &e)));

    // CSR with zstd and crc32c, written from triples then from a sprs matrix
    let a = ArrayBuilder::new(vec![30, 26], DataType::Float32)
        .chunk_shape(vec![8, 10])
        .sparse(Format::Csr)
        .compressors(zstd_crc.clone())
        .create(store.clone(), "rs_csr")
        .unwrap();
    let mut e = random_entries(a.shape(), 80, 2);
    write_entries(&a, &e, |v| v as f32);
    let mut tri = TriMat::new((5, 6));
    tri.add_triplet(1, 2, 77.0f32);
    a.sparse()
        .unwrap()
        .write_sprs(&tri.to_csr::<usize>(), &[10, 10])
        .unwrap();
    e.retain(|p, _| !(p[0] >= 10 && p[0] < 15 && p[1] >= 10 && p[1] < 16));
    e.insert(vec![11, 12], 77);
    arrays.push((a.clone(), expected_bytes(&a, &e)));

    // CSC with explicit (wide) types, no compressor
    let a = ArrayBuilder::new(vec![30, 26], DataType::Float64)
        .chunk_shape(vec![8, 10])
        .serializer(def(
            "sparse_layout",
            json!({"format": "csc", "index_data_type": "uint32", "pointer_data_type": "uint64"}),
        ))
        .compressors(Vec::<ExtensionDef>::new())
        .create(store.clone(), "rs_csc")
        .unwrap();
    let e = random_entries(a.shape(), 70, 3);
    write_entries(&a, &e, |v| v as f64);
    arrays.push((a.clone(), expected_bytes(&a, &e)));

    // sharded, CSR inner chunks with zstd, partial edge shards, empty inner chunks
    let a = ArrayBuilder::new(vec![37, 29], DataType::Float32)
        .chunk_shape(vec![5, 6])
        .shards(vec![10, 12])
        .sparse(Format::Csr)
        .create(store.clone(), "rs_sharded")
        .unwrap();
    let e = random_entries(a.shape(), 60, 4);
    write_entries(&a, &e, |v| v as f32);
    arrays.push((a.clone(), expected_bytes(&a, &e)));

    // sharded, 3-d COO inner chunks with zstd and crc32c
    let a = ArrayBuilder::new(vec![8, 9, 10], DataType::Int32)
        .chunk_shape(vec![2, 3, 5])
        .shards(vec![4, 9, 10])
        .sparse(Format::Coo)
        .compressors(zstd_crc.clone())
        .create(store.clone(), "rs_sharded_coo_3d")
        .unwrap();
    let e = random_entries(a.shape(), 50, 5);
    write_entries(&a, &e, |v| v as i32);
    arrays.push((a.clone(), expected_bytes(&a, &e)));

    let outs = tempfile::tempdir().unwrap();
    let mut args: Vec<PathBuf> = Vec::new();
    for (a, _) in &arrays {
        args.push(dir.path().join(a.path()));
        args.push(outs.path().join(format!("{}.npy", a.path())));
    }
    let arg_refs: Vec<&Path> = args.iter().map(PathBuf::as_path).collect();
    run_python(&py, READ, &arg_refs);
    for (a, expected) in &arrays {
        let npy = std::fs::read(outs.path().join(format!("{}.npy", a.path()))).unwrap();
        let npy = common::read_npy(&npy);
        assert_eq!(npy.shape, a.shape(), "{}", a.path());
        assert_eq!(npy.data_type, Some(a.data_type()), "{}", a.path());
        assert!(
            common::same_elements(a.data_type(), &npy.data, expected),
            "zarr-python reads {} differently",
            a.path()
        );
        // and so do we
        let ours = a
            .read_selection_bytes(&zarr_array::Selection::all())
            .unwrap();
        assert!(common::same_elements(a.data_type(), &ours, expected));
    }
}

#[test]
#[ignore = "needs the peers' Python venv (scripts/test provides it and runs this)"]
fn we_read_sparse_arrays_zarr_python_writes() {
    let py = zarr_testkit::peers::python();
    let dir = tempfile::tempdir().unwrap();
    run_python(&py, WRITE, &[dir.path()]);
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::open(dir.path()).unwrap());
    for name in ["py_coo_3d", "py_csr", "py_csc", "py_sharded"] {
        let a = Array::open(store.clone(), name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(a.is_sparse(), "{name}");
        let npy = common::read_npy(&std::fs::read(dir.path().join(format!("{name}.npy"))).unwrap());
        assert_eq!(npy.shape, a.shape());
        assert_eq!(npy.data_type, Some(a.data_type()));
        // dense reads
        let dense = a
            .read_selection_bytes(&zarr_array::Selection::all())
            .unwrap();
        assert!(
            common::same_elements(a.data_type(), &dense, &npy.data),
            "{name}: data differs"
        );
        // sparse reads: every non-fill element, nothing else
        let size = a.data_type().size();
        let nonzero = npy
            .data
            .chunks_exact(size)
            .filter(|e| e.iter().any(|&b| b != 0))
            .count() as u64;
        assert_eq!(a.sparse().unwrap().nnz().unwrap(), nonzero, "{name}");
        let chunks = a.sparse().unwrap().chunks().unwrap();
        assert_eq!(
            chunks.iter().map(|c| c.nnz_in_array() as u64).sum::<u64>(),
            nonzero
        );
        // every chunk's sparse bytes are what our encoder writes for its dense chunk
        if let Some(codec) = SparseLayoutCodec::of(a.codecs()) {
            for chunk in a.stored_chunks().unwrap() {
                let stored = store.get(&a.chunk_key(&chunk)).unwrap().unwrap();
                let theirs = {
                    let mut buf = zarr_codecs::AlignedBuffer::default();
                    a.codecs()
                        .decode_into(&stored, zarr_codecs::ChunkOut::Serialized(&mut buf))
                        .unwrap();
                    buf
                };
                let region = a.grid().chunk_part(&chunk).unwrap();
                // the dense chunk: the array's data, fill outside (zarr-python pads with it)
                let mut buf = vec![0u8; a.codecs().decoded_len()];
                let chunk_shape = a.chunk_shape().expect("a regular grid");
                let mut block = vec![0u8; buffer_len(&region.in_region.shape, size)];
                a.read_region_bytes_into(&region.in_region, &mut block)
                    .unwrap();
                zarr_array::zarr_grid::geometry::copy_region(
                    &block,
                    &region.in_region.shape,
                    &vec![0; a.rank()],
                    &mut buf,
                    &chunk_shape,
                    &region.in_chunk.start,
                    &region.in_region.shape,
                    size,
                );
                let ours = codec.encode(&buf).unwrap();
                assert_eq!(theirs.as_bytes(), &ours[..], "{name} chunk {chunk:?}");
            }
        } else {
            assert_eq!(name, "py_sharded");
            assert!(chunks.iter().all(|c| c.inner_index().is_some()));
        }
        // 2-d: the product agrees with the dense data
        if a.rank() == 2 {
            let (rows, cols) = (a.shape()[0] as usize, a.shape()[1] as usize);
            let x: Vec<f64> = (0..cols).map(|c| c as f64 + 0.5).collect();
            let want: Vec<f64> = (0..rows)
                .map(|r| {
                    (0..cols)
                        .map(|c| {
                            let e = &dense[(r * cols + c) * size..(r * cols + c + 1) * size];
                            let v = match a.data_type() {
                                DataType::Float32 => {
                                    f32::from_ne_bytes(e.try_into().unwrap()) as f64
                                }
                                _ => f64::from_ne_bytes(e.try_into().unwrap()),
                            };
                            v * x[c]
                        })
                        .sum()
                })
                .collect();
            let got: Vec<f64> = match a.data_type() {
                DataType::Float32 => {
                    let xf: Vec<f32> = x.iter().map(|&v| v as f32).collect();
                    a.sparse()
                        .unwrap()
                        .spmv(&xf)
                        .unwrap()
                        .into_iter()
                        .map(f64::from)
                        .collect()
                }
                _ => a.sparse().unwrap().spmv(&x).unwrap(),
            };
            for (g, w) in got.iter().zip(&want) {
                assert!((g - w).abs() < 1e-3 * (1.0 + w.abs()), "{name}: {g} vs {w}");
            }
        }
        // a region read as COO matches the dense data
        let region = Region::new(
            a.shape().iter().map(|&n| n / 4).collect(),
            a.shape().iter().map(|&n| n / 2).collect(),
        )
        .unwrap();
        let coo_count = match a.data_type() {
            DataType::Int32 => a.sparse().unwrap().read_coo::<i32>(&region).unwrap().nnz(),
            DataType::Float32 => a.sparse().unwrap().read_coo::<f32>(&region).unwrap().nnz(),
            _ => a.sparse().unwrap().read_coo::<f64>(&region).unwrap().nnz(),
        };
        let mut want = 0;
        for pos in indices(&region.shape) {
            let lin = pos.iter().enumerate().fold(0u64, |acc, (d, &p)| {
                acc * a.shape()[d] + region.start[d] + p
            });
            let e = &npy.data[lin as usize * size..(lin as usize + 1) * size];
            if e.iter().any(|&b| b != 0) {
                want += 1;
            }
        }
        assert_eq!(coo_count, want, "{name}");
    }
}

fn buffer_len(shape: &[u64], size: usize) -> usize {
    shape.iter().product::<u64>() as usize * size
}
