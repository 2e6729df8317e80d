//! Small writes and reads that touch little of a chunk: a shard update re-encodes only the
//! inner chunks it touches (every other inner chunk's bytes kept), and a point read fetches and
//! decodes only what its points need.
// The codecs (cargo features) these tests use; `scripts/check-features` builds them without.
#![cfg(all(feature = "zstd", feature = "sharding"))]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use zarr_array::zarr_codecs::{
    BytesToBytesCodec, ChunkRepr, Codec, CodecFactory, CodecRegistry, Decoded,
};
use zarr_array::zarr_store::testing::CountingStore;
use zarr_array::zarr_store::{MemoryStore, Store};
use zarr_array::{
    Array, ArrayBuilder, DataType, ExtensionDef, Extensions, Region, Selection, WriteOptions,
};

/// How many times the `test.counting` codec encoded a value since the last reset.
static ENCODED: AtomicUsize = AtomicUsize::new(0);
/// The tests that read `ENCODED` take turns.
static COUNTING: Mutex<()> = Mutex::new(());

fn counting_turn() -> MutexGuard<'static, ()> {
    COUNTING.lock().unwrap_or_else(|e| e.into_inner())
}

/// A bytes -> bytes codec that stores its input as it is and counts its encodes: inside a
/// shard's inner codecs, the number of inner chunks encoded.
#[derive(Debug)]
struct Counting;

impl BytesToBytesCodec for Counting {
    fn name(&self) -> &'static str {
        "test.counting"
    }

    fn to_def(&self) -> ExtensionDef {
        ExtensionDef::new("test.counting")
    }

    fn encoded_size_bound(&self, decoded_bound: u64) -> u64 {
        decoded_bound
    }

    fn encode(&self, input: &[u8]) -> zarr_array::zarr_codecs::Result<Vec<u8>> {
        ENCODED.fetch_add(1, Ordering::SeqCst);
        Ok(input.to_vec())
    }

    fn decode<'a>(
        &self,
        input: Decoded<'a>,
        _max_decoded: u64,
    ) -> zarr_array::zarr_codecs::Result<Decoded<'a>> {
        Ok(input)
    }
}

fn counting_factory(
    _: &ExtensionDef,
    _: &ChunkRepr,
    _: &CodecRegistry,
) -> zarr_array::zarr_codecs::Result<Codec> {
    Ok(Codec::BytesToBytes(Box::new(Counting)))
}

fn counting_extensions() -> Extensions {
    let mut ext = Extensions::default();
    ext.codecs
        .register("test.counting", CodecFactory::new(counting_factory))
        .unwrap();
    ext
}

/// `v(i, j) = i * 1000 + j + 1` over a block, C order.
fn values(start: [u64; 2], shape: [u64; 2], offset: u32) -> Vec<u32> {
    (0..shape[0])
        .flat_map(|i| {
            (0..shape[1])
                .map(move |j| (start[0] + i) as u32 * 1000 + (start[1] + j) as u32 + 1 + offset)
        })
        .collect()
}

fn bytes(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

/// A 32 x 32 array of one shard of 4 x 4 inner chunks of 8 x 8, inner codecs
/// `[bytes, test.counting]` after `filters`, written whole.
fn counted_shard(options: WriteOptions, filters: Vec<ExtensionDef>) -> (Arc<MemoryStore>, Array) {
    let store = Arc::new(MemoryStore::new());
    let a = ArrayBuilder::new(vec![32, 32], DataType::UInt32)
        .chunk_shape(vec![8, 8])
        .shards(vec![32, 32])
        .filters(filters)
        .compressors(vec![ExtensionDef::new("test.counting")])
        .write_options(options)
        .create_with(store.clone(), "a", &counting_extensions())
        .unwrap();
    a.write_region_bytes(
        &Region::whole(&[32, 32]),
        &bytes(&values([0, 0], [32, 32], 0)),
    )
    .unwrap();
    (store, a)
}

/// The values of the whole array after writing `offset`-shifted values into `region`.
fn expected_after(region: &Region, offset: u32) -> Vec<u32> {
    let mut want = values([0, 0], [32, 32], 0);
    for i in region.start[0]..region.start[0] + region.shape[0] {
        for j in region.start[1]..region.start[1] + region.shape[1] {
            want[(i * 32 + j) as usize] += offset;
        }
    }
    want
}

/// `transpose`, inside the shard: an array -> array codec of the inner chunks, which the
/// shard's partial encoder runs per inner chunk (issue 37: it re-encoded the whole shard).
fn inner_transpose() -> Vec<ExtensionDef> {
    vec![ExtensionDef::from_config("transpose", &serde_json::json!({"order": [1, 0]})).unwrap()]
}

#[test]
fn a_shard_update_encodes_only_the_inner_chunks_it_touches() {
    let _turn = counting_turn();
    for (options, filters) in [
        (WriteOptions::default(), vec![]),
        (
            WriteOptions {
                write_empty_chunks: true,
            },
            vec![],
        ),
        (WriteOptions::default(), inner_transpose()),
    ] {
        // (region, inner chunks it touches)
        for (start, shape, touched) in [
            ([8, 8], [8, 8], 1),  // exactly one inner chunk
            ([9, 10], [2, 3], 1), // a part of one
            ([4, 8], [8, 8], 2),  // across two along the first axis
            ([6, 6], [4, 4], 4),  // the corner of four
            ([0, 0], [32, 8], 4), // a column of inner chunks, wholly
        ] {
            let (store, a) = counted_shard(options, filters.clone());
            ENCODED.store(0, Ordering::SeqCst);
            let region = Region::new(start.to_vec(), shape.to_vec()).unwrap();
            let before = store.get("a/c/0/0").unwrap().unwrap();
            a.write_region_bytes(&region, &bytes(&values(start, shape, 7)))
                .unwrap();
            assert_eq!(
                ENCODED.load(Ordering::SeqCst),
                touched,
                "{region:?} {filters:?}: encoded another number of inner chunks than it touches"
            );
            let got = a.read_region_bytes(&Region::whole(&[32, 32])).unwrap();
            assert_eq!(got, bytes(&expected_after(&region, 7)), "{region:?}");
            // the shard is as large as before (the codec stores its input as it is)
            let after = store.get("a/c/0/0").unwrap().unwrap();
            assert_eq!(before.len(), after.len());
        }
    }
}

#[test]
fn a_shard_update_keeps_the_other_inner_chunks_bytes() {
    let _turn = counting_turn();
    // a peer reads the shard as a whole: every inner chunk decodes to its values, and the
    // untouched ones' encoded bytes are the ones stored before
    let (store, a) = counted_shard(WriteOptions::default(), vec![]);
    let before = store.get("a/c/0/0").unwrap().unwrap();
    let region = Region::new(vec![16, 24], vec![8, 8]).unwrap();
    a.write_region_bytes(&region, &bytes(&values([16, 24], [8, 8], 3)))
        .unwrap();
    let after = store.get("a/c/0/0").unwrap().unwrap();
    // inner chunks are 8 * 8 * 4 = 256 bytes each, stored in Morton order, then the index
    let inner = 256;
    let changed: Vec<usize> = (0..16)
        .filter(|i| before[i * inner..(i + 1) * inner] != after[i * inner..(i + 1) * inner])
        .collect();
    // inner chunk (2, 3) alone was rewritten: one 256-byte slot of the shard changed
    assert_eq!(changed.len(), 1, "{changed:?}");
    assert_eq!(
        a.read_region_bytes(&Region::whole(&[32, 32])).unwrap(),
        bytes(&expected_after(&region, 3))
    );
}

#[test]
fn shard_updates_of_every_chain_read_back() {
    let _turn = counting_turn();
    // transposed inner codecs, zstd, a missing shard and an update that leaves only fill
    // values: every one through the shard's partial encoder
    let zstd =
        ExtensionDef::from_config("zstd", &serde_json::json!({"level": 1, "checksum": false}))
            .unwrap();
    let transpose =
        ExtensionDef::from_config("transpose", &serde_json::json!({"order": [1, 0]})).unwrap();
    for filters in [vec![], vec![transpose]] {
        let store = Arc::new(MemoryStore::new());
        let a = ArrayBuilder::new(vec![40, 36], DataType::UInt32)
            .chunk_shape(vec![8, 6])
            .shards(vec![16, 12])
            .filters(filters.clone())
            .compressors(vec![zstd.clone()])
            .create(store.clone(), "a")
            .unwrap();
        let whole = Region::whole(&[40, 36]);
        let mut want = vec![0u32; 40 * 36];
        // into missing shards first, then over stored ones, then back to fill
        for (start, shape, offset) in [
            ([3, 5], [9, 20], 1u32),
            ([0, 0], [40, 36], 2),
            ([17, 13], [5, 5], 9),
            ([30, 30], [10, 6], 0),
        ] {
            let v: Vec<u32> = if offset == 0 {
                vec![0; (shape[0] * shape[1]) as usize]
            } else {
                values(start, shape, offset)
            };
            a.write_region_bytes(
                &Region::new(start.to_vec(), shape.to_vec()).unwrap(),
                &bytes(&v),
            )
            .unwrap();
            for i in 0..shape[0] {
                for j in 0..shape[1] {
                    want[((start[0] + i) * 36 + start[1] + j) as usize] =
                        v[(i * shape[1] + j) as usize];
                }
            }
            assert_eq!(
                a.read_region_bytes(&whole).unwrap(),
                bytes(&want),
                "{filters:?}"
            );
        }
        // the last write left rows 32.. of shard (2, 2) holding fill values from column 30
        // on; zeroing the rest of it, in part, leaves no inner chunk, and the shard is deleted
        assert!(store.get("a/c/2/2").unwrap().is_some());
        let region = Region::new(vec![32, 24], vec![8, 6]).unwrap();
        a.write_region_bytes(&region, &[0u8; 8 * 6 * 4]).unwrap();
        assert!(store.get("a/c/2/2").unwrap().is_none(), "{filters:?}");
    }
}

/// Scattered points (the last ones repeated, out of order), with the values `values` gives.
fn scattered(shape: [u64; 2], n: u64) -> Vec<Vec<i64>> {
    let mut pts: Vec<Vec<i64>> = (0..n)
        .map(|p| {
            vec![
                ((p * 7919) % shape[0]) as i64,
                ((p * 104_729) % shape[1]) as i64,
            ]
        })
        .collect();
    pts.push(pts[3].clone());
    pts.push(vec![shape[0] as i64 - 1, shape[1] as i64 - 1]);
    pts.push(vec![0, 0]);
    pts
}

/// Filters, serializer (`None`: the default), compressors, and whether the array is sharded.
type Chain = (
    Vec<ExtensionDef>,
    Option<ExtensionDef>,
    Vec<ExtensionDef>,
    bool,
);

#[test]
fn point_reads_of_every_chain_are_right() {
    let zstd =
        ExtensionDef::from_config("zstd", &serde_json::json!({"level": 1, "checksum": false}))
            .unwrap();
    let transpose =
        ExtensionDef::from_config("transpose", &serde_json::json!({"order": [1, 0]})).unwrap();
    let big = ExtensionDef::from_config("bytes", &serde_json::json!({"endian": "big"})).unwrap();
    // (filters, serializer, compressors, shards)
    let chains: Vec<Chain> = vec![
        (vec![], None, vec![], false),
        (vec![], Some(big.clone()), vec![], false),
        (vec![], None, vec![zstd.clone()], false),
        (vec![transpose.clone()], None, vec![zstd.clone()], false),
        (vec![], None, vec![], true),
        (vec![], Some(big), vec![zstd.clone()], true),
        (vec![transpose], None, vec![zstd], true),
    ];
    let shape = [45u64, 38];
    for (filters, serializer, compressors, sharded) in chains {
        let store = Arc::new(MemoryStore::new());
        let mut b = ArrayBuilder::new(shape.to_vec(), DataType::UInt32)
            .chunk_shape(vec![6, 5])
            .filters(filters.clone())
            .compressors(compressors.clone());
        if let Some(s) = serializer.clone() {
            b = b.serializer(s);
        }
        if sharded {
            b = b.shards(vec![18, 20]);
        }
        let a = b.create(store, "a").unwrap();
        let what = format!("{filters:?} {serializer:?} {compressors:?} sharded {sharded}");
        // the lower rows only: the rest stays unstored and reads as fill
        a.write_region_bytes(
            &Region::new(vec![0, 0], vec![30, 38]).unwrap(),
            &bytes(&values([0, 0], [30, 38], 0)),
        )
        .unwrap();
        let pts = scattered(shape, 300);
        let got = a
            .read_selection_bytes(&Selection::Points(pts.clone()))
            .unwrap();
        let want: Vec<u32> = pts
            .iter()
            .map(|p| {
                let (i, j) = (p[0] as u64, p[1] as u64);
                if i < 30 {
                    (i * 1000 + j + 1) as u32
                } else {
                    0
                }
            })
            .collect();
        assert_eq!(got, bytes(&want), "{what}");
    }
}

#[test]
fn a_sharded_point_read_fetches_only_the_index_and_the_inner_chunks_it_needs() {
    // one shard of 8 x 8 inner chunks of 8 x 8, uncompressed: every stored inner chunk is 256
    // bytes, the index 64 * 16 + 4 bytes
    let counting = Arc::new(CountingStore::new(MemoryStore::new()));
    let a = uncompressed_shard(counting.clone());
    a.write_region_bytes(
        &Region::whole(&[64, 64]),
        &bytes(&values([0, 0], [64, 64], 0)),
    )
    .unwrap();
    // three points in inner chunk (0, 0), one in (7, 7), one in (3, 5)
    let pts = scattered_in_shard();
    counting.reset();
    let got = a
        .read_selection_bytes(&Selection::Points(pts.clone()))
        .unwrap();
    let want: Vec<u32> = pts
        .iter()
        .map(|p| (p[0] * 1000 + p[1] + 1) as u32)
        .collect();
    assert_eq!(got, bytes(&want));
    let counts = counting.counts();
    assert_eq!(counts.get, 0, "{counts:?}");
    // the index, then the three inner chunks in one request
    assert_eq!(counts.get_ranges, 2, "{counts:?}");
    assert_eq!(counts.bytes_read, 64 * 16 + 4 + 3 * 256, "{counts:?}");
}

#[test]
fn a_sharded_read_on_the_filesystem_opens_the_shard_once_and_reads_each_inner_chunk_it_needs() {
    use zarr_array::zarr_store::FilesystemStore;
    // uncompressed inner chunks are 256 bytes each; the index is 64 * 16 + 4 bytes
    let (inner, index) = (256u64, 64 * 16 + 4u64);
    let dir = tempfile::tempdir().unwrap();
    let fs = Arc::new(CountingStore::new(
        FilesystemStore::create(dir.path()).unwrap(),
    ));
    let a = uncompressed_shard(fs.clone());
    // inner chunk (7, 7) is never written: it is not stored and reads as the fill value
    a.write_region_bytes(
        &Region::new(vec![0, 0], vec![56, 64]).unwrap(),
        &bytes(&values([0, 0], [56, 64], 0)),
    )
    .unwrap();
    a.write_region_bytes(
        &Region::new(vec![56, 0], vec![8, 56]).unwrap(),
        &bytes(&values([56, 0], [8, 56], 0)),
    )
    .unwrap();
    let value = |i: u64, j: u64| {
        if i >= 56 && j >= 56 {
            0
        } else {
            (i * 1000 + j + 1) as u32
        }
    };
    // points in inner chunks (0, 0) (three), (3, 5) and (7, 7) (not stored)
    let pts = scattered_in_shard();
    fs.reset();
    let got = a
        .read_selection_bytes(&Selection::Points(pts.clone()))
        .unwrap();
    let want: Vec<u32> = pts
        .iter()
        .map(|p| value(p[0] as u64, p[1] as u64))
        .collect();
    assert_eq!(got, bytes(&want));
    let counts = fs.counts();
    assert_eq!((counts.get, counts.open_value), (0, 1), "{counts:?}");
    // the index, then each stored inner chunk with its own positioned read
    assert_eq!(counts.get_ranges, 3, "{counts:?}");
    assert_eq!(counts.bytes_read, index + 2 * inner, "{counts:?}");
    // regions over the corners of four inner chunks (one of them not stored in the first), a
    // part of the shard: read as a part, not as the whole shard
    for (start, shape, stored) in [([52u64, 52u64], [8u64, 8u64], 3u64), ([4, 4], [8, 8], 4)] {
        fs.reset();
        let region = Region::new(start.to_vec(), shape.to_vec()).unwrap();
        let got = a.read_region_bytes(&region).unwrap();
        let want: Vec<u32> = (start[0]..start[0] + shape[0])
            .flat_map(|i| (start[1]..start[1] + shape[1]).map(move |j| value(i, j)))
            .collect();
        assert_eq!(got, bytes(&want), "{start:?}");
        let counts = fs.counts();
        assert_eq!((counts.get, counts.open_value), (0, 1), "{counts:?}");
        assert_eq!(counts.get_ranges, 1 + stored, "{counts:?}");
        assert_eq!(counts.bytes_read, index + stored * inner, "{counts:?}");
    }
}

/// A 64 x 64 `uint32` array of one shard of 8 x 8 uncompressed inner chunks of 8 x 8 at "a" of
/// `store`: every stored inner chunk is 256 bytes, the index 64 * 16 + 4.
fn uncompressed_shard(store: Arc<dyn Store>) -> Array {
    ArrayBuilder::new(vec![64, 64], DataType::UInt32)
        .chunk_shape(vec![8, 8])
        .shards(vec![64, 64])
        .compressors(Vec::<ExtensionDef>::new())
        .create(store, "a")
        .unwrap()
}

/// Five points of [`uncompressed_shard`]: three in inner chunk (0, 0), one in (7, 7), one in
/// (3, 5).
fn scattered_in_shard() -> Vec<Vec<i64>> {
    vec![
        vec![1, 1],
        vec![63, 63],
        vec![2, 7],
        vec![30, 41],
        vec![0, 0],
    ]
}

/// A 64 x 64 array of one shard of 8 x 8 inner chunks of 8 x 8, inner codecs `[bytes]` and
/// `compressors`, the index at `location`.
fn one_shard(store: Arc<dyn Store>, location: &str, compressors: serde_json::Value) -> Array {
    let mut codecs =
        vec![serde_json::json!({"name": "bytes", "configuration": {"endian": "little"}})];
    codecs.extend(compressors.as_array().cloned().unwrap_or_default());
    let sharding = ExtensionDef::from_config(
        "sharding_indexed",
        &serde_json::json!({
            "chunk_shape": [8, 8],
            "codecs": codecs,
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
            "index_location": location,
        }),
    )
    .unwrap();
    let a = ArrayBuilder::new(vec![64, 64], DataType::UInt32)
        .chunk_shape(vec![64, 64])
        .serializer(sharding)
        .compressors(Vec::<ExtensionDef>::new())
        .create(store, "a")
        .unwrap();
    a.write_region_bytes(
        &Region::whole(&[64, 64]),
        &bytes(&values([0, 0], [64, 64], 0)),
    )
    .unwrap();
    a
}

#[test]
fn a_shard_update_on_the_filesystem_reads_only_the_index_and_the_inner_chunks_it_touches() {
    use zarr_array::zarr_store::FilesystemStore;
    // uncompressed inner chunks are 256 bytes each; the index is 64 * 16 + 4 bytes
    let (inner, index) = (256u64, 64 * 16 + 4u64);
    let zstd =
        serde_json::json!([{"name": "zstd", "configuration": {"level": 1, "checksum": false}}]);
    for location in ["end", "start"] {
        for compressors in [serde_json::json!([]), zstd.clone()] {
            let dir = tempfile::tempdir().unwrap();
            let fs = Arc::new(CountingStore::new(
                FilesystemStore::create(dir.path()).unwrap(),
            ));
            // the same writes through the whole-value path, to compare the shard bytes with
            let memory = Arc::new(MemoryStore::new());
            let a = one_shard(fs.clone(), location, compressors.clone());
            let m = one_shard(memory.clone(), location, compressors.clone());
            let mut want = values([0, 0], [64, 64], 0);
            // (region, inner chunks it touches, of which it covers only a part: only those
            // are read, one covered whole is encoded from the data alone)
            for (start, shape, touched, in_part, offset) in [
                ([8u64, 8u64], [8u64, 8u64], 1u64, 0u64, 5u32), // exactly one inner chunk
                ([9, 10], [2, 3], 1, 1, 6),                     // a part of one
                ([4, 4], [8, 8], 4, 4, 7),                      // the corner of four
                ([0, 56], [16, 8], 2, 0, 8),                    // two, wholly, the last column
            ] {
                let region = Region::new(start.to_vec(), shape.to_vec()).unwrap();
                let data = bytes(&values(start, shape, offset));
                fs.reset();
                a.write_region_bytes(&region, &data).unwrap();
                m.write_region_bytes(&region, &data).unwrap();
                let what = format!("index at {location}, {compressors}, {region:?}");
                let c = fs.counts();
                assert_eq!((c.open_value, c.get, c.set), (1, 0, 1), "{what}: {c:?}");
                let stored = fs.get("a/c/0/0").unwrap().unwrap();
                assert_eq!(
                    Some(stored.clone()),
                    memory.get("a/c/0/0").unwrap(),
                    "{what}: the shard is the whole-value rewrite's, byte for byte"
                );
                assert_eq!(
                    c.bytes_kept + c.bytes_written,
                    stored.len() as u64,
                    "{what}"
                );
                if compressors == serde_json::json!([]) {
                    assert_eq!(c.bytes_read, index + in_part * inner, "{what}: {c:?}");
                    assert_eq!(c.bytes_kept, (64 - touched) * inner, "{what}: {c:?}");
                } else {
                    assert!(c.bytes_read < stored.len() as u64 / 4, "{what}: {c:?}");
                }
                for i in start[0]..start[0] + shape[0] {
                    for j in start[1]..start[1] + shape[1] {
                        want[(i * 64 + j) as usize] = (i * 1000 + j + 1) as u32 + offset;
                    }
                }
                assert_eq!(
                    a.read_region_bytes(&Region::whole(&[64, 64])).unwrap(),
                    bytes(&want),
                    "{what}"
                );
            }
            // writing fill over all of it in parts leaves no inner chunk: the shard goes
            let zeros = vec![0u8; 32 * 64 * 4];
            for half in [0u64, 32] {
                a.write_region_bytes(&Region::new(vec![half, 0], vec![32, 64]).unwrap(), &zeros)
                    .unwrap();
            }
            assert_eq!(fs.get("a/c/0/0").unwrap(), None, "index at {location}");
            assert!(fs
                .list_prefix("")
                .unwrap()
                .iter()
                .all(|k| !k.contains(".tmp")));
        }
    }
}

#[test]
fn a_shard_update_over_a_corrupt_index_fails_and_leaves_the_shard_as_it_was() {
    use zarr_array::zarr_store::FilesystemStore;
    let dir = tempfile::tempdir().unwrap();
    let fs: Arc<dyn Store> = Arc::new(FilesystemStore::create(dir.path()).unwrap());
    let a = one_shard(fs.clone(), "end", serde_json::json!([]));
    let region = Region::new(vec![8, 8], vec![8, 8]).unwrap();
    let data = bytes(&values([8, 8], [8, 8], 1));
    let mut shard = fs.get("a/c/0/0").unwrap().unwrap();
    let n = shard.len();
    for (what, corrupt) in [
        ("a flipped index bit (crc32c)", n - 10),
        ("an offset past the shard", n - 1028 + 3),
    ] {
        let mut bad = shard.clone();
        bad[corrupt] ^= 0x40;
        if what.starts_with("an offset") {
            // a consistent checksum over an entry that points outside the shard
            let body = bad.len() - 4;
            let crc = crc32c_of(&bad[n - 1028..body]);
            bad[body..].copy_from_slice(&crc.to_le_bytes());
        }
        fs.set("a/c/0/0", &bad).unwrap();
        let err = a.write_region_bytes(&region, &data).unwrap_err();
        assert!(!err.to_string().is_empty(), "{what}");
        assert_eq!(
            fs.get("a/c/0/0").unwrap().unwrap(),
            bad,
            "{what}: nothing written"
        );
    }
    // the good shard back: the update goes through
    fs.set("a/c/0/0", &shard).unwrap();
    a.write_region_bytes(&region, &data).unwrap();
    shard = fs.get("a/c/0/0").unwrap().unwrap();
    assert_eq!(shard.len(), n);
}

/// CRC-32C (Castagnoli), bit by bit: the checksum of the shard index codec `crc32c`.
fn crc32c_of(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0x82F6_3B78
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A plane through chunks of an object store (a store that serves many requests at once, with
/// a round trip each): the parts of chunks, each read by itself, keep as many requests in
/// flight as the store serves, not one per core (a plane through 65 chunks waited on 2 at a
/// time). Values read are the values written.
#[test]
fn a_plane_through_chunks_of_an_object_store_keeps_many_requests_in_flight() {
    let mem = Arc::new(MemoryStore::new());
    let n = 16u64;
    let a = ArrayBuilder::new(vec![n, n, n], DataType::UInt16)
        .chunk_shape(vec![4, 4, 4])
        .create(mem.clone(), "a")
        .unwrap();
    let data: Vec<u16> = (0..n * n * n).map(|i| i as u16).collect();
    let raw: Vec<u8> = data.iter().flat_map(|v| v.to_ne_bytes()).collect();
    a.write_region_bytes(&Region::whole(&[n, n, n]), &raw)
        .unwrap();
    let remote = Arc::new(
        CountingStore::new(mem)
            .with_fetch_concurrency(16)
            .with_latency(std::time::Duration::from_millis(20)),
    );
    let a = Array::open(remote.clone(), "a").unwrap();
    // the plane [5, :, :]: 16 chunks, each read in part
    let plane = a
        .read_region_bytes(&Region::new(vec![5, 0, 0], vec![1, n, n]).unwrap())
        .unwrap();
    let got: Vec<u16> = plane
        .chunks_exact(2)
        .map(|b| u16::from_ne_bytes([b[0], b[1]]))
        .collect();
    let want: Vec<u16> = data[(5 * n * n) as usize..(6 * n * n) as usize].to_vec();
    assert_eq!(got, want);
    let peak = remote.counts().peak_in_flight;
    assert!(
        peak >= 8,
        "{peak} requests in flight at most, for 16 chunks"
    );
}

/// Orthogonal and point selections on an object store keep many requests in flight too.
#[test]
fn selections_on_an_object_store_keep_many_requests_in_flight() {
    let mem = Arc::new(MemoryStore::new());
    let n = 16u64;
    let a = ArrayBuilder::new(vec![n, n], DataType::UInt32)
        .chunk_shape(vec![2, 2])
        .create(mem.clone(), "a")
        .unwrap();
    let data: Vec<u32> = (0..(n * n) as u32).collect();
    a.write_region_bytes(&Region::whole(&[n, n]), &bytes(&data))
        .unwrap();
    let remote = Arc::new(
        CountingStore::new(mem)
            .with_fetch_concurrency(16)
            .with_latency(std::time::Duration::from_millis(20)),
    );
    let a = Array::open(remote.clone(), "a").unwrap();
    let rows: Vec<i64> = (0..n as i64).step_by(2).collect();
    let sel = Selection::Orthogonal(vec![
        zarr_array::AxisSelection::Indices(rows.clone()),
        zarr_array::AxisSelection::Indices(vec![1, 5, 9, 13]),
    ]);
    let got = a.read_selection::<u32>(&sel).unwrap();
    let want: Vec<u32> = rows
        .iter()
        .flat_map(|&r| [1u32, 5, 9, 13].map(|c| r as u32 * n as u32 + c))
        .collect();
    assert_eq!(got.as_slice().unwrap(), want.as_slice());
    let peak = remote.counts().peak_in_flight;
    assert!(
        peak >= 8,
        "orthogonal: {peak} requests in flight at most, for 32 chunks"
    );
    remote.reset();
    let points = Selection::Points((0..n as i64).map(|i| vec![i, (i * 7) % n as i64]).collect());
    let got = a.read_selection::<u32>(&points).unwrap();
    let want: Vec<u32> = (0..n).map(|i| (i * n + (i * 7) % n) as u32).collect();
    assert_eq!(got.as_slice().unwrap(), want.as_slice());
    let peak = remote.counts().peak_in_flight;
    assert!(
        peak >= 8,
        "points: {peak} requests in flight at most, for 16 chunks"
    );
}

/// The string of row `i`, column `j` of the string arrays below.
#[cfg(feature = "vlen")]
fn word(i: usize, j: usize) -> String {
    format!("{i}é{j}")
}

/// A `[n, n]` string array of chunks of 2 x 2 (with `shards`, shards of that shape), every
/// element written, in `mem`; then the same array opened through a counting object store:
/// 16 requests served at once, 20 ms each.
#[cfg(feature = "vlen")]
fn remote_strings(
    n: u64,
    shards: Option<Vec<u64>>,
) -> (Arc<CountingStore<Arc<MemoryStore>>>, Array) {
    use zarr_array::ndarray::{ArrayD, IxDyn};
    let mem = Arc::new(MemoryStore::new());
    let mut builder = ArrayBuilder::new(vec![n, n], DataType::String).chunk_shape(vec![2, 2]);
    if let Some(shards) = shards {
        builder = builder.shards(shards);
    }
    let a = builder.create(mem.clone(), "s").unwrap();
    let all = ArrayD::from_shape_fn(IxDyn(&[n as usize, n as usize]), |ix| word(ix[0], ix[1]));
    a.write_region_vlen(&Region::whole(&[n, n]), all.view())
        .unwrap();
    let remote = Arc::new(
        CountingStore::new(mem)
            .with_fetch_concurrency(16)
            .with_latency(std::time::Duration::from_millis(20)),
    );
    let a = Array::open(remote.clone(), "s").unwrap();
    (remote, a)
}

/// String reads on an object store batch their requests as fixed-size reads do (issue 37,
/// item 3): every chunk's request in the one batch of the remote engine (`fetch_each`, as many
/// in flight as the store serves), and shards read in part (each its index, then its inner
/// chunks) keep as many requests in flight as the store serves, not one per core.
#[cfg(feature = "vlen")]
#[test]
fn string_reads_on_an_object_store_batch_their_requests() {
    let check = |a: &Array, region: &Region| {
        let got = a.read_region_vlen::<String>(region).unwrap();
        for (ix, v) in got.indexed_iter() {
            let (i, j) = (
                ix[0] + region.start[0] as usize,
                ix[1] + region.start[1] as usize,
            );
            assert_eq!(v, &word(i, j), "{region:?}: element ({i}, {j})");
        }
    };
    // 64 chunks read whole: a get each, 16 in flight
    let (remote, a) = remote_strings(16, None);
    remote.reset();
    check(&a, &Region::whole(&[16, 16]));
    let c = remote.counts();
    assert_eq!((c.get_many, c.get, c.get_ranges), (0, 64, 0), "{c:?}");
    assert!(c.peak_in_flight >= 16, "{c:?}");

    // 16 shards of 4 x 4: the region [1, 15) x [1, 15) covers the 4 in the middle whole (a
    // get each) and the 12 around them in part (their index, then the inner chunks met)
    let (remote, a) = remote_strings(16, Some(vec![4, 4]));
    remote.reset();
    check(&a, &Region::new(vec![1, 1], vec![14, 14]).unwrap());
    let c = remote.counts();
    assert_eq!((c.get_many, c.get, c.get_ranges), (0, 4, 24), "{c:?}");
    assert!(
        c.peak_in_flight >= 8,
        "{} requests in flight at most, for 16 shards: {c:?}",
        c.peak_in_flight
    );
}

/// A partial string write into a shard: what it reads, writes and encodes (issue 37, item 3).
/// The shard is updated by sharding's partial encoder, which takes variable-size elements:
/// the write of 2 x 3 elements of one inner chunk reads the shard's index and that inner
/// chunk, encodes that inner chunk alone (as for numbers,
/// `a_shard_update_encodes_only_the_inner_chunks_it_touches`) and keeps the other inner
/// chunks' values.
#[cfg(feature = "vlen")]
#[test]
fn a_partial_string_write_into_a_shard_re_encodes_only_the_inner_chunk_touched() {
    use zarr_array::ndarray::{ArrayD, IxDyn};
    let _turn = counting_turn();
    let store = Arc::new(CountingStore::new(MemoryStore::new()));
    let a = ArrayBuilder::new(vec![32, 32], DataType::String)
        .chunk_shape(vec![8, 8])
        .shards(vec![32, 32])
        .compressors(vec![ExtensionDef::new("test.counting")])
        .create_with(store.clone(), "s", &counting_extensions())
        .unwrap();
    let mut want = ArrayD::from_shape_fn(IxDyn(&[32, 32]), |ix| word(ix[0], ix[1]));
    a.write_region_vlen(&Region::whole(&[32, 32]), want.view())
        .unwrap();
    let region = Region::new(vec![9, 10], vec![2, 3]).unwrap();
    let new = ArrayD::from_shape_fn(IxDyn(&[2, 3]), |ix| format!("new{}{}", ix[0], ix[1]));
    store.reset();
    ENCODED.store(0, Ordering::SeqCst);
    a.write_region_vlen(&region, new.view()).unwrap();
    let c = store.counts();
    // the index and the inner chunk, then the new value with the other inner chunks kept
    assert_eq!((c.get, c.get_ranges, c.set), (0, 2, 1), "{c:?}");
    assert!(c.bytes_kept > 8 * c.bytes_written, "{c:?}");
    assert_eq!(
        ENCODED.load(Ordering::SeqCst),
        1,
        "inner chunks encoded by a write into one of them"
    );
    for i in 0..2 {
        for j in 0..3 {
            want[[9 + i, 10 + j]] = new[[i, j]].clone();
        }
    }
    let back = a
        .read_region_vlen::<String>(&Region::whole(&[32, 32]))
        .unwrap();
    assert_eq!(back, want);

    // an append of a row into the shard (compare-and-swap) encodes the 4 inner chunks of
    // the row it touches
    let mut t = ArrayBuilder::new(vec![30, 32], DataType::String)
        .chunk_shape(vec![8, 8])
        .shards(vec![32, 32])
        .compressors(vec![ExtensionDef::new("test.counting")])
        .create_with(store.clone(), "t", &counting_extensions())
        .unwrap();
    let mut want = ArrayD::from_shape_fn(IxDyn(&[30, 32]), |ix| word(ix[0], ix[1]));
    t.write_region_vlen(&Region::whole(&[30, 32]), want.view())
        .unwrap();
    let row = ArrayD::from_shape_fn(IxDyn(&[1, 32]), |ix| format!("row{}", ix[1]));
    ENCODED.store(0, Ordering::SeqCst);
    t.append_vlen(row.view(), 0).unwrap();
    assert_eq!(
        ENCODED.load(Ordering::SeqCst),
        4,
        "inner chunks encoded by an append"
    );
    want.append(zarr_array::ndarray::Axis(0), row.view())
        .unwrap();
    let back = t
        .read_region_vlen::<String>(&Region::whole(&[31, 32]))
        .unwrap();
    assert_eq!(back, want);
}
