//! The `sparse_layout` codec in chains: the shared extension examples (tests/data/sparse, copied
//! from the project's shared conformance examples, written by a separate implementation)
//! decode exactly and our encoder reproduces their pre-compression bytes; composition with
//! compressors, checksums and sharding; decoders bounded by the sparse size bound, not the
//! dense size.

#![cfg(all(
    feature = "sparse",
    feature = "gzip",
    feature = "zstd",
    feature = "blosc",
    feature = "crc32c",
    feature = "sharding"
))]

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use zarr_codecs::sparse_layout::SparseLayoutCodec;
use zarr_codecs::{default_registry, ArrayToBytesCodec, ChunkRepr, CodecChain, CodecError};
use zarr_codecs::{AlignedBuffer, ChunkIn, ChunkOut, EncodeOptions};
use zarr_grid::geometry::{indices, Region};
use zarr_meta::{DataType, ExtensionDef, FillValue};

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sparse")
}

/// A minimal reader of little-endian, C-order `.npy` files: (shape, data bytes).
fn read_npy(path: &Path) -> (Vec<u64>, Vec<u8>) {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[..6], b"\x93NUMPY");
    assert_eq!(bytes[6], 1, "npy version 1 expected");
    let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let header = std::str::from_utf8(&bytes[10..10 + header_len]).unwrap();
    assert!(header.contains("'fortran_order': False"));
    assert!(header.contains("'descr': '<"), "{header}");
    let shape_text = header.split("'shape': (").nth(1).unwrap();
    let shape = shape_text[..shape_text.find(')').unwrap()]
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().parse().unwrap())
        .collect();
    (shape, bytes[10 + header_len..].to_vec())
}

fn u64s(v: &Value) -> Vec<u64> {
    serde_json::from_value(v.clone()).unwrap()
}

/// An example's chunk representation and codec chain, from its zarr.json.
fn open(name: &str) -> (Value, ChunkRepr, Result<CodecChain, CodecError>) {
    let meta: Value =
        serde_json::from_slice(&std::fs::read(data_dir().join(name).join("zarr.json")).unwrap())
            .unwrap();
    let t = DataType::from_name(meta["data_type"].as_str().unwrap()).unwrap();
    let fill = FillValue::from_json(&meta["fill_value"], t).unwrap();
    let chunk_shape = u64s(&meta["chunk_grid"]["configuration"]["chunk_shape"]);
    let repr = ChunkRepr::new(chunk_shape, t, fill);
    let defs: Vec<ExtensionDef> = serde_json::from_value(meta["codecs"].clone()).unwrap();
    let chain = CodecChain::from_defs(&defs, &repr, &default_registry());
    (meta, repr, chain)
}

/// Checks every chunk of a shared example; returns (stored, missing) chunk counts.
fn check_example(name: &str) -> (usize, usize) {
    let (meta, repr, chain) = open(name);
    let chain = chain.unwrap_or_else(|e| panic!("{name}: {e}"));
    let codec = SparseLayoutCodec::of(&chain).unwrap();
    let shape = u64s(&meta["shape"]);
    let (npy_shape, data) = read_npy(&data_dir().join(format!("{name}.npy")));
    assert_eq!(npy_shape, shape);
    let size = repr.element_size();
    let fill = repr.fill_value.as_bytes();
    let grid: Vec<u64> = shape
        .iter()
        .zip(&repr.shape)
        .map(|(s, c)| s.div_ceil(*c))
        .collect();
    let (mut stored_count, mut missing) = (0, 0);
    for chunk in indices(&grid) {
        // the expected chunk: the array's data inside the array, the fill value outside
        let mut expected = Vec::with_capacity(chain.decoded_len());
        for local in indices(&repr.shape) {
            let global: Vec<u64> = (0..shape.len())
                .map(|d| chunk[d] * repr.shape[d] + local[d])
                .collect();
            if global.iter().zip(&shape).all(|(g, s)| g < s) {
                let pos = global.iter().zip(&shape).fold(0, |acc, (g, s)| acc * s + g) as usize;
                expected.extend_from_slice(&data[pos * size..(pos + 1) * size]);
            } else {
                expected.extend_from_slice(fill);
            }
        }
        let key: Vec<String> = chunk.iter().map(u64::to_string).collect();
        let Ok(stored) = std::fs::read(data_dir().join(name).join("c").join(key.join("/"))) else {
            assert!(
                repr.is_fill(&expected),
                "{name} {key:?}: missing but not fill"
            );
            assert_eq!(
                chain.encode(&expected, EncodeOptions::SKIP_EMPTY).unwrap(),
                None
            );
            missing += 1;
            continue;
        };
        stored_count += 1;
        // decodes exactly, every way
        let decoded = chain.decode(&stored).unwrap();
        assert_eq!(decoded.as_bytes(), &expected[..], "{name} {key:?}");
        let mut out = vec![0u8; chain.decoded_len()];
        chain.decode_into(&stored, &mut out).unwrap();
        assert_eq!(out, expected, "{name} {key:?}");
        // our encoder reproduces the bytes before compression, byte for byte
        let sparse = serialized(&chain, &stored).unwrap();
        let ours = codec.encode(&expected).unwrap();
        assert_eq!(sparse.as_bytes(), &ours[..], "{name} {key:?}");
        let view = codec.decode_sparse(&sparse).unwrap();
        assert!(view.nnz() > 0);
        // and the chain round trips our own encoding
        let again = chain
            .encode(&expected, EncodeOptions::SKIP_EMPTY)
            .unwrap()
            .unwrap();
        assert_eq!(chain.decode(&again).unwrap().as_bytes(), &expected[..]);
        if meta["codecs"].as_array().unwrap().len() == 1 {
            assert_eq!(
                again, stored,
                "{name} {key:?}: no compressor, identical chunks"
            );
        }
    }
    (stored_count, missing)
}

#[test]
fn shared_examples_decode_exactly_and_reencode_byte_for_byte() {
    // CSR, no compressor
    assert_eq!(check_example("sp_csr"), (6, 0));
    // 3-d COO with zstd and crc32c; one chunk holds only fill values and is not stored
    assert_eq!(check_example("sp_coo_3d"), (11, 1));
}

#[test]
fn csr_on_a_3d_array_is_refused() {
    let (_, _, chain) = open("spx_csr_3d");
    let err = zarr_testkit::report(&chain.unwrap_err());
    assert!(
        err.starts_with("invalid configuration for codec \"sparse_layout\"")
            && err.contains("cannot hold a 3-d chunk"),
        "{err}"
    );
}

fn f32_repr(shape: Vec<u64>) -> ChunkRepr {
    ChunkRepr::new(shape, DataType::Float32, FillValue::zero(DataType::Float32))
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_ne_bytes()).collect()
}

fn sparse_def(format: &str) -> Value {
    match format {
        "coo" => {
            json!({"name": "sparse_layout", "configuration": {"format": "coo", "index_data_type": "uint16"}})
        }
        f => json!({"name": "sparse_layout", "configuration": {
            "format": f, "index_data_type": "uint16", "pointer_data_type": "uint32"}}),
    }
}

#[test]
fn sparse_layout_as_the_inner_codec_of_sharding() {
    for format in ["coo", "csr", "csc"] {
        let repr = f32_repr(vec![8, 10]);
        let codecs = json!([{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [4, 5],
            "codecs": [sparse_def(format),
                       {"name": "zstd", "configuration": {"level": 3, "checksum": false}},
                       {"name": "crc32c"}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
            "index_location": "end"}}]);
        let chain = CodecChain::from_json(&codecs.to_string(), &repr, &default_registry()).unwrap();
        assert_eq!(
            serde_json::to_value(chain.to_defs()).unwrap(),
            codecs,
            "written back as read"
        );
        // inner chunk (1, 1) holds nothing
        let mut dense = vec![0.0f32; 80];
        for (i, v) in [(0, 1.0), (13, 2.0), (37, -3.0), (42, 4.5), (44, -0.0)] {
            dense[i] = v;
        }
        let chunk = f32_bytes(&dense);
        let shard = chain
            .encode(&chunk, EncodeOptions::SKIP_EMPTY)
            .unwrap()
            .unwrap();
        assert_eq!(chain.decode(&shard).unwrap().as_bytes(), &chunk[..]);
        // a region, reading only the inner chunks it needs
        let region = Region::new(vec![2, 3], vec![5, 4]).unwrap();
        let mut out = vec![0u8; 5 * 4 * 4];
        assert!(chain
            .partial_decoder()
            .region(&&shard[..], &region, &mut out)
            .unwrap());
        let want: Vec<f32> = (2..7)
            .flat_map(|r| (3..7).map(move |c| (r, c)))
            .map(|(r, c)| dense[r * 10 + c])
            .collect();
        assert_eq!(out, f32_bytes(&want));
        // the stored inner chunks (the leaves), as sparse chunks
        assert_eq!(chain.leaf_grid_shape(), [2, 2]);
        let leaf_chain = chain.leaf_chain();
        let inner_codec = SparseLayoutCodec::of(leaf_chain).unwrap();
        let leaves = chain
            .visit_stored_leaves(&shard, None, |idx, bytes| {
                let buf = serialized(leaf_chain, bytes)?;
                let nnz = inner_codec.decode_sparse(&buf)?.nnz();
                Ok::<_, CodecError>((idx.to_vec(), nnz))
            })
            .unwrap();
        assert_eq!(
            leaves.iter().map(|l| l.0.clone()).collect::<Vec<_>>(),
            [vec![0, 0], vec![0, 1], vec![1, 0]]
        );
        let nnz: usize = leaves.iter().map(|l| l.1).sum();
        assert_eq!(nnz, 5, "-0.0 is stored");
        // re-assembling the inner chunks gives the same shard
        let all: Vec<Vec<u64>> = indices(&[2, 2]).collect();
        let same = chain
            .rewrite_leaves(Some(&shard[..]), &all, |_, b| {
                Ok::<_, CodecError>(b.map(<[u8]>::to_vec))
            })
            .unwrap();
        assert_eq!(same.unwrap(), shard);
        let none = chain.rewrite_leaves(Some(&shard[..]), &all, |_, _| Ok::<_, CodecError>(None));
        assert_eq!(none.unwrap(), None);
        let outside = chain.rewrite_leaves(Some(&shard[..]), &[vec![2, 0]], |_, b| {
            Ok::<_, CodecError>(b.map(<[u8]>::to_vec))
        });
        assert!(matches!(outside, Err(CodecError::LeafOutOfGrid { .. })));
        // a shard of fill values is not stored
        assert_eq!(
            chain
                .encode(&[0u8; 320], EncodeOptions::SKIP_EMPTY)
                .unwrap(),
            None
        );
    }
}

/// A 3-d COO chain with uint16 indices over 4 x 4 x 4 float32 chunks, then `compressor`.
fn coo_3d_chain(compressor: Value) -> CodecChain {
    let codecs = json!([sparse_def("coo"), compressor]);
    CodecChain::from_json(
        &codecs.to_string(),
        &f32_repr(vec![4, 4, 4]),
        &default_registry(),
    )
    .unwrap()
}

fn compressors() -> Vec<Value> {
    vec![
        json!({"name": "gzip", "configuration": {"level": 1}}),
        json!({"name": "zstd", "configuration": {"level": 1, "checksum": false}}),
        json!({"name": "blosc", "configuration": {"cname": "zstd", "clevel": 1, "shuffle": "noshuffle", "typesize": 1, "blocksize": 0}}),
    ]
}

#[test]
fn decoders_are_bounded_by_the_sparse_bound_not_the_dense_size() {
    for compressor in compressors() {
        let chain = coo_3d_chain(compressor.clone());
        let codec = SparseLayoutCodec::of(&chain).unwrap();
        // 64 entries: 32 + 2 * 16 header and table, 3 * 64 * 2 indices, 64 * 4 values
        assert_eq!(codec.encoded_size_bound(), 64 + 384 + 256);
        assert!(codec.encoded_size_bound() > chain.decoded_len() as u64);
        // a chunk without fill values: its sparse form is larger than the dense chunk
        let dense: Vec<f32> = (1..=64).map(|i| i as f32).collect();
        let chunk = f32_bytes(&dense);
        let sparse = codec.encode(&chunk).unwrap();
        assert!(sparse.len() > chunk.len());
        let stored = chain
            .encode(&chunk, EncodeOptions::ENCODE_EMPTY)
            .unwrap()
            .unwrap();
        assert_eq!(
            chain.decode(&stored).unwrap().as_bytes(),
            &chunk[..],
            "{compressor}"
        );
        assert_eq!(serialized(&chain, &stored).unwrap().as_bytes(), &sparse[..]);

        // a stream that expands past the bound is refused before it is used
        let too_long = codec.encoded_size_bound() as usize + 8;
        let mut padded = sparse.clone();
        padded.resize(too_long, 0);
        let raw = ChunkRepr::new(
            vec![too_long as u64],
            DataType::UInt8,
            FillValue::zero(DataType::UInt8),
        );
        let bytes_chain = CodecChain::from_json(
            &json!([{"name": "bytes"}, compressor]).to_string(),
            &raw,
            &default_registry(),
        )
        .unwrap();
        let bomb = bytes_chain
            .encode(&padded, EncodeOptions::ENCODE_EMPTY)
            .unwrap()
            .unwrap();
        for result in [
            chain.decode(&bomb).map(|_| ()),
            serialized(&chain, &bomb).map(|_| ()),
            chain.decode_into(&bomb, &mut vec![0u8; 256]),
        ] {
            assert!(
                matches!(result, Err(CodecError::ExceedsBound { .. })),
                "{compressor}: {result:?}"
            );
        }
    }
}

#[test]
fn raw_chunks_beyond_the_bound_are_refused() {
    let chain = CodecChain::from_json(
        &json!([sparse_def("coo")]).to_string(),
        &f32_repr(vec![4, 4, 4]),
        &default_registry(),
    )
    .unwrap();
    let codec = SparseLayoutCodec::of(&chain).unwrap();
    let chunk = f32_bytes(&[1.0; 64]);
    let mut stored = chain
        .encode(&chunk, EncodeOptions::ENCODE_EMPTY)
        .unwrap()
        .unwrap();
    assert_eq!(stored.len() as u64, codec.encoded_size_bound());
    // trailing bytes after the last section are allowed, up to the bound
    stored.extend_from_slice(&[0; 8]);
    assert!(matches!(
        chain.decode(&stored),
        Err(CodecError::ExceedsBound { .. })
    ));
    assert!(matches!(
        serialized(&chain, &stored),
        Err(CodecError::ExceedsBound { .. })
    ));
}

#[test]
fn sparse_access_needs_a_chain_without_array_to_array_codecs() {
    let codecs =
        json!([{"name": "transpose", "configuration": {"order": [1, 0]}}, sparse_def("csr")]);
    let chain = CodecChain::from_json(
        &codecs.to_string(),
        &f32_repr(vec![3, 4]),
        &default_registry(),
    )
    .unwrap();
    assert!(SparseLayoutCodec::of(&chain).is_none());
    let mut dense = [0.0f32; 12];
    dense[5] = 1.0;
    let stored = chain
        .encode(f32_bytes(&dense), EncodeOptions::ENCODE_EMPTY)
        .unwrap()
        .unwrap();
    assert_eq!(
        chain.decode(&stored).unwrap().as_bytes(),
        &f32_bytes(&dense)[..]
    );
    assert!(matches!(
        serialized(&chain, &stored),
        Err(CodecError::NotApplicable { .. })
    ));
    assert!(matches!(
        chain.encode(ChunkIn::Serialized(stored), EncodeOptions::SKIP_EMPTY),
        Err(CodecError::NotApplicable { .. })
    ));
}

#[test]
fn encode_from_array_bytes_is_the_inverse_of_decode_to_array_bytes() {
    let chain =
        coo_3d_chain(json!({"name": "zstd", "configuration": {"level": 3, "checksum": true}}));
    // a codec that stores no empty chunk skips one even when asked to write it
    assert_eq!(
        chain
            .encode(&[0u8; 256], EncodeOptions::WRITE_EMPTY)
            .unwrap(),
        None
    );
    // and encodes it when a codec call must return its bytes
    assert!(chain
        .encode(&[0u8; 256], EncodeOptions::ENCODE_EMPTY)
        .unwrap()
        .is_some());
    let codec = SparseLayoutCodec::of(&chain).unwrap();
    let mut dense = [0.0f32; 64];
    dense[17] = 7.0;
    let sparse = codec.encode(&f32_bytes(&dense)).unwrap();
    let stored = chain
        .encode(
            ChunkIn::Serialized(sparse.clone()),
            EncodeOptions::SKIP_EMPTY,
        )
        .unwrap()
        .unwrap();
    assert_eq!(
        stored,
        chain
            .encode(f32_bytes(&dense), EncodeOptions::ENCODE_EMPTY)
            .unwrap()
            .unwrap()
    );
    assert_eq!(serialized(&chain, &stored).unwrap().as_bytes(), &sparse[..]);
    // the decoded buffer is aligned for in-place views
    let buf = serialized(&chain, &stored).unwrap();
    assert_eq!(buf.as_ptr() as usize % 8, 0);
    let view = codec.decode_sparse(&buf).unwrap();
    let coo = view.coo::<f32, u16>().unwrap();
    assert_eq!(coo.values, &[7.0]);
    assert!(buf
        .as_bytes()
        .as_ptr_range()
        .contains(&coo.values.as_ptr().cast()));
    assert_eq!(coo.indices.column(0).to_vec(), [1, 0, 1]);
}

/// The array -> bytes codec's input decoded from a stored chunk.
fn serialized(chain: &CodecChain, bytes: &[u8]) -> std::result::Result<AlignedBuffer, CodecError> {
    let mut buf = AlignedBuffer::default();
    chain.decode_into(bytes, ChunkOut::Serialized(&mut buf))?;
    Ok(buf)
}
