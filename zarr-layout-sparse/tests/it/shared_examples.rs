//! The shared `sparse_layout` examples (tests/data): decode every chunk to the expected data
//! and re-encode the expected dense chunk to the same bytes, byte for byte.

use std::path::{Path, PathBuf};

use serde_json::Value;
use zarr_layout_sparse::{
    encode_dense_bytes, AlignedBuffer, ElementKind, Format, IndexType, Layout, PointerType,
    SparseChunk,
};

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// A minimal reader of version-1 `.npy` files: (descr, shape, data bytes).
fn read_npy(path: &Path) -> (String, Vec<u64>, Vec<u8>) {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[..6], b"\x93NUMPY");
    assert_eq!(bytes[6], 1, "npy version 1 expected");
    let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let header = std::str::from_utf8(&bytes[10..10 + header_len]).unwrap();
    assert!(header.contains("'fortran_order': False"));
    let field = |name: &str| {
        let start = header.find(name).unwrap() + name.len();
        header[start..].trim_start_matches([':', ' ', '\''])
    };
    let descr = field("'descr'").split('\'').next().unwrap().to_string();
    let shape_text = field("'shape'");
    let shape = shape_text[1..shape_text.find(')').unwrap()]
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().parse().unwrap())
        .collect();
    (descr, shape, bytes[10 + header_len..].to_vec())
}

/// The element kind and little-endian fill bytes of a Zarr data type and JSON fill value.
fn element(data_type: &str, fill: &Value) -> (ElementKind, Vec<u8>, &'static str) {
    match data_type {
        "float32" => (
            ElementKind::F32,
            (fill.as_f64().unwrap() as f32).to_le_bytes().to_vec(),
            "<f4",
        ),
        "float64" => (
            ElementKind::F64,
            fill.as_f64().unwrap().to_le_bytes().to_vec(),
            "<f8",
        ),
        "int32" => (
            ElementKind::I32,
            (fill.as_i64().unwrap() as i32).to_le_bytes().to_vec(),
            "<i4",
        ),
        "int64" => (
            ElementKind::I64,
            fill.as_i64().unwrap().to_le_bytes().to_vec(),
            "<i8",
        ),
        other => panic!("test data type {other} not handled"),
    }
}

fn u64s(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

fn layout_of(codec: &Value) -> Layout {
    assert_eq!(codec["name"], "sparse_layout");
    let config = &codec["configuration"];
    let format = Format::from_name(config["format"].as_str().unwrap()).unwrap();
    let index = IndexType::from_name(config["index_data_type"].as_str().unwrap()).unwrap();
    let pointer = config
        .get("pointer_data_type")
        .map(|p| PointerType::from_name(p.as_str().unwrap()).unwrap());
    Layout::new(format, index, pointer).unwrap()
}

/// Row-major iteration over all multi-indices below `bounds`.
fn multi_indices(bounds: &[u64]) -> Vec<Vec<u64>> {
    let mut out = vec![vec![]];
    for &b in bounds {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                (0..b).map(move |i| {
                    let mut p = prefix.clone();
                    p.push(i);
                    p
                })
            })
            .collect();
    }
    out
}

struct Outcome {
    stored: usize,
    missing: usize,
}

fn check_array(name: &str) -> Outcome {
    let dir = data_dir().join(name);
    let meta: Value =
        serde_json::from_slice(&std::fs::read(dir.join("zarr.json")).unwrap()).unwrap();
    let shape = u64s(&meta["shape"]);
    let chunk_shape = u64s(&meta["chunk_grid"]["configuration"]["chunk_shape"]);
    let layout = layout_of(&meta["codecs"][0]);
    let (kind, fill, descr) = element(meta["data_type"].as_str().unwrap(), &meta["fill_value"]);
    let size = kind.size();
    let (npy_descr, npy_shape, data) = read_npy(&data_dir().join(format!("{name}.npy")));
    assert_eq!(npy_descr, descr);
    assert_eq!(npy_shape, shape);

    let grid: Vec<u64> = shape
        .iter()
        .zip(&chunk_shape)
        .map(|(s, c)| s.div_ceil(*c))
        .collect();
    let mut outcome = Outcome {
        stored: 0,
        missing: 0,
    };
    for chunk_index in multi_indices(&grid) {
        // The expected dense chunk: array data inside the array, fill outside.
        let mut expected = Vec::new();
        for local in multi_indices(&chunk_shape) {
            let global: Vec<u64> = chunk_index
                .iter()
                .zip(&chunk_shape)
                .zip(&local)
                .map(|((ci, cs), l)| ci * cs + l)
                .collect();
            if global.iter().zip(&shape).all(|(g, s)| g < s) {
                let pos = global.iter().zip(&shape).fold(0, |acc, (g, s)| acc * s + g) as usize;
                expected.extend_from_slice(&data[pos * size..(pos + 1) * size]);
            } else {
                expected.extend_from_slice(&fill);
            }
        }
        let key: Vec<String> = chunk_index.iter().map(u64::to_string).collect();
        let path = dir.join("c").join(key.join("/"));
        let Ok(stored) = std::fs::read(&path) else {
            // A missing chunk reads as fill.
            assert!(
                expected.chunks(size).all(|e| kind.is_fill(e, &fill)),
                "{name}: chunk {key:?} is missing but holds non-fill data"
            );
            outcome.missing += 1;
            continue;
        };
        outcome.stored += 1;

        let buf = AlignedBuffer::from_slice(&stored);
        let chunk = SparseChunk::decode(&buf, &layout, &chunk_shape, size)
            .unwrap_or_else(|e| panic!("{name}: chunk {key:?} does not decode: {e}"));
        let dense = chunk.to_dense_bytes(&fill).unwrap();
        assert_eq!(
            dense, expected,
            "{name}: chunk {key:?} decodes to other data"
        );

        let encoded = encode_dense_bytes(&layout, &chunk_shape, kind, &fill, &expected).unwrap();
        assert_eq!(
            encoded, stored,
            "{name}: re-encoding chunk {key:?} does not reproduce its bytes"
        );
    }
    outcome
}

#[test]
fn shared_examples_decode_and_reencode_byte_for_byte() {
    let csr = check_array("sp_csr");
    assert_eq!((csr.stored, csr.missing), (6, 0));
    let coo = check_array("sp_coo_3d");
    assert_eq!((coo.stored, coo.missing), (11, 1));
}

#[test]
fn csr_on_a_3d_chunk_is_refused() {
    // The shared example `spx_csr_3d`: csr on a 3-d array must be refused.
    let layout = Layout::csr(IndexType::U32, PointerType::U32);
    assert!(layout.check_shape(&[2, 2, 2]).is_err());
}
