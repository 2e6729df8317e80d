//! Zero copy on the real read path: an array stored with `[sparse_layout, zstd, crc32c]` (and a
//! sharded one with that inner chain) is read through `SparseArray::chunks`, and the values,
//! coordinates and pointers point into the very buffer the zstd decoder allocated: no copy of
//! the decoded chunk is made, and nothing of the dense chunk's size is allocated.
//!
//! The counting global allocator records every allocation at least as large as a threshold,
//! so this file holds a single test (the allocator is global to the test binary).
// The codecs (cargo features) these tests use; `scripts/check-features` builds them without.
#![cfg(all(
    feature = "zstd",
    feature = "sharding",
    feature = "sparse",
    feature = "crc32c"
))]

use std::sync::Arc;

use ndarray::Array2;
use serde_json::json;
use zarr_array::zarr_layout_sparse::Format;
use zarr_array::{ArrayBuilder, DataType, ExtensionDef};
use zarr_store::{MemoryStore, Store};
use zarr_testkit::CountingAlloc;

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc::new();

fn compressors() -> Vec<ExtensionDef> {
    let zstd = match json!({"level": 3, "checksum": false}) {
        serde_json::Value::Object(m) => ExtensionDef::with_configuration("zstd", m),
        _ => unreachable!(),
    };
    vec![zstd, ExtensionDef::new("crc32c")]
}

/// 20 entries per row of a 1000 x 1000 matrix, at regular columns, all 1.0: well compressible.
fn entries() -> (Array2<u64>, Vec<f32>) {
    let per_row = 20;
    let n = 1000 * per_row;
    let mut coords = Array2::zeros((2, n));
    for r in 0..1000u64 {
        for k in 0..per_row as u64 {
            let i = (r * per_row as u64 + k) as usize;
            coords[[0, i]] = r;
            coords[[1, i]] = (k * 50 + r % 50) % 1000;
        }
    }
    (coords, vec![1.0; n])
}

#[test]
fn sparse_chunks_view_the_buffers_the_chain_decoded() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let (coords, values) = entries();

    // one 1000 x 1000 CSR chunk (4 MB dense), sparse_layout + zstd + crc32c
    let a = ArrayBuilder::new(vec![1000, 1000], DataType::Float32)
        .chunk_shape(vec![1000, 1000])
        .sparse(Format::Csr)
        .compressors(compressors())
        .create(store.clone(), "csr")
        .unwrap();
    a.sparse()
        .unwrap()
        .write_coo(coords.view(), &values)
        .unwrap();
    let stored = store.get(&a.chunk_key(&[0, 0])).unwrap().unwrap();
    let sparse_len = {
        let mut buf = zarr_codecs::AlignedBuffer::default();
        a.codecs()
            .decode_into(&stored, zarr_codecs::ChunkOut::Serialized(&mut buf))
            .unwrap();
        buf
    }
    .len();
    // header + table, 1001 u32 pointers, 20000 u16 indices, 20000 f32 values
    assert_eq!(sparse_len, 80 + 4008 + 40000 + 80000);
    assert!(
        stored.len() < sparse_len / 2,
        "{} bytes stored",
        stored.len()
    );

    let (chunks, big) =
        ALLOC.large_allocations_of(sparse_len, || a.sparse().unwrap().chunks().unwrap());
    assert_eq!(chunks.len(), 1);
    let c = &chunks[0];
    assert_eq!(
        big,
        vec![c.buffer().as_ptr() as usize],
        "one large allocation: the zstd decoder's output, which the chunk owns"
    );
    let m = c.sprs_view::<f32, u16, u32>().unwrap();
    assert_eq!(m.nnz(), 20_000);
    let range = c.buffer().as_ptr_range();
    for p in [
        m.data().as_ptr().cast::<u8>(),
        m.indices().as_ptr().cast(),
        m.indptr().raw_storage().as_ptr().cast(),
        c.values::<f32>().unwrap().as_ptr().cast(),
    ] {
        assert!(range.contains(&p));
    }
    // the same through the computations: nothing of the dense size, no copy of the chunk
    let (nnz, big) = ALLOC.large_allocations_of(sparse_len, || a.sparse().unwrap().nnz().unwrap());
    assert_eq!(nnz, 20_000);
    assert_eq!(big.len(), 1);
    let x = vec![1.0f32; 1000];
    let (y, big) = ALLOC.large_allocations_of(sparse_len, || a.sparse().unwrap().spmv(&x).unwrap());
    assert!(y.iter().all(|&v| v == 20.0));
    assert_eq!(big.len(), 1);

    // COO inner chunks of shards: 4 inner chunks of 500 x 500, each decoded once, in place
    let b = ArrayBuilder::new(vec![1000, 1000], DataType::Float32)
        .chunk_shape(vec![500, 500])
        .shards(vec![1000, 1000])
        .sparse(Format::Coo)
        .compressors(compressors())
        .create(store.clone(), "sharded")
        .unwrap();
    b.sparse()
        .unwrap()
        .write_coo(coords.view(), &values)
        .unwrap();
    // each inner chunk holds 5000 entries: 64 + 2 * 5000 * 2 + 5000 * 4 bytes
    let inner_len = 64 + 20_000 + 20_000;
    let (chunks, big) =
        ALLOC.large_allocations_of(inner_len, || b.sparse().unwrap().chunks().unwrap());
    assert_eq!(chunks.len(), 4);
    let mut owned: Vec<usize> = chunks
        .iter()
        .map(|c| c.buffer().as_ptr() as usize)
        .collect();
    let mut big = big;
    owned.sort_unstable();
    big.sort_unstable();
    assert_eq!(big, owned, "exactly the inner chunks' decoded buffers");
    for c in &chunks {
        assert_eq!(c.buffer().len(), inner_len);
        let coo = c.coo::<f32, u16>().unwrap();
        let range = c.buffer().as_ptr_range();
        assert!(range.contains(&coo.values.as_ptr().cast()));
        assert!(range.contains(&coo.indices.as_ptr().cast()));
    }
}
