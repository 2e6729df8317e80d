//! The shard index cache (`Array::with_index_cache`, on by default for a sharded array on a
//! store whose reads are not cheap): each shard's index is asked for once per open array and
//! then only the inner chunks a read needs (requests pinned against a counting store, on the
//! pool's path and on the batched path of a store that serves many requests at once); writes
//! through the array keep it true; a stale index left by a write elsewhere is read again when
//! a read shows it; the bound holds; random writes and reads through one array agree with an
//! in-memory model.
#![cfg(all(feature = "zstd", feature = "sharding", feature = "crc32c"))]

use std::sync::Arc;

use zarr_array::ndarray::{s, ArrayD, IxDyn};
use zarr_array::zarr_store::testing::CountingStore;
use zarr_array::zarr_store::{MemoryStore, Store};
use zarr_array::{Array, ArrayBuilder, AxisSelection, DataType, ExtensionDef, Region, Selection};
use zarr_testkit::Rng;

/// A 32 x 32 `uint16` array in shards of 16 x 16 (four) of inner chunks of 4 x 4, inner
/// codecs zstd (`compressed`) or `bytes` alone, at "a" of `store`.
fn sharded(store: Arc<dyn Store>, compressed: bool) -> Array {
    let b = ArrayBuilder::new(vec![32, 32], DataType::UInt16)
        .chunk_shape(vec![4, 4])
        .shards(vec![16, 16]);
    let b = if compressed {
        b
    } else {
        b.compressors(Vec::<ExtensionDef>::new())
    };
    b.create(store, "a").unwrap()
}

fn region(start: [u64; 2], shape: [u64; 2]) -> Region {
    Region::new(start.to_vec(), shape.to_vec()).unwrap()
}

fn random_block(rng: &mut Rng, shape: [u64; 2]) -> ArrayD<u16> {
    ArrayD::from_shape_fn(IxDyn(&[shape[0] as usize, shape[1] as usize]), |_| {
        1 + rng.below(60_000) as u16
    })
}

fn part(model: &ArrayD<u16>, r: &Region) -> ArrayD<u16> {
    let (i, j) = (r.start[0] as usize, r.start[1] as usize);
    let (h, w) = (r.shape[0] as usize, r.shape[1] as usize);
    model.slice(s![i..i + h, j..j + w]).to_owned().into_dyn()
}

/// The `get_ranges` requests `run` makes on `counting` (and that it makes no other read).
fn ranged_requests<T>(counting: &CountingStore<MemoryStore>, run: impl FnOnce() -> T) -> (T, u64) {
    counting.reset();
    let out = run();
    let c = counting.counts();
    assert_eq!((c.get, c.size, c.open_value), (0, 0, 0), "{c:?}");
    (out, c.get_ranges)
}

#[test]
fn each_shard_index_is_asked_for_once_per_open_array() {
    // the pool's path (a store that serves one request at a time) and the batched path (one
    // that serves several at once: every request of a round in flight together)
    for concurrency in [1, 8] {
        let counting =
            Arc::new(CountingStore::new(MemoryStore::new()).with_fetch_concurrency(concurrency));
        let a = sharded(counting.clone(), true);
        let mut rng = Rng::new(41);
        let model = random_block(&mut rng, [32, 32]);
        a.write_region(&region([0, 0], [32, 32]), model.view())
            .unwrap();
        let a = Array::open(counting.clone(), "a").unwrap();
        let what = format!("fetch concurrency {concurrency}");
        // a slab through shards (0, 0) and (0, 1): their indexes, then each one's inner
        // chunks in one request
        let slab = region([2, 0], [4, 32]);
        let (got, n) = ranged_requests(&counting, || a.read_region::<u16>(&slab).unwrap());
        assert_eq!(got, part(&model, &slab), "{what}");
        assert_eq!(n, 4, "{what}: first slab: 2 indexes + 2 merged data ranges");
        // the same slab again: the inner chunks alone (4 without the index cache)
        let (got, n) = ranged_requests(&counting, || a.read_region::<u16>(&slab).unwrap());
        assert_eq!(got, part(&model, &slab), "{what}");
        assert_eq!(n, 2, "{what}: second slab: data ranges only");
        // points in the same two shards: one request per shard
        let pts = vec![vec![0, 0], vec![15, 15], vec![3, 17], vec![9, 31]];
        let (got, n) = ranged_requests(&counting, || {
            a.read_selection::<u16>(&Selection::Points(pts.clone()))
                .unwrap()
        });
        let want: Vec<u16> = pts
            .iter()
            .map(|p| model[[p[0] as usize, p[1] as usize]])
            .collect();
        assert_eq!(got.iter().copied().collect::<Vec<_>>(), want, "{what}");
        assert_eq!(n, 2, "{what}: points: data ranges only");
        // an orthogonal selection of scattered indices reads the shards it meets whole (one
        // GET each), with no index request: the cache changes nothing there
        let sel = Selection::Orthogonal(vec![
            AxisSelection::Indices(vec![1, 14, 7]),
            AxisSelection::Indices(vec![30, 2, 16]),
        ]);
        counting.reset();
        let got = a.read_selection::<u16>(&sel).unwrap();
        for (x, &i) in [1usize, 14, 7].iter().enumerate() {
            for (y, &j) in [30usize, 2, 16].iter().enumerate() {
                assert_eq!(got[[x, y]], model[[i, j]], "{what}");
            }
        }
        let c = counting.counts();
        assert_eq!((c.get, c.get_ranges), (2, 0), "{what}: orthogonal: {c:?}");
        // a shard not read before: its index, then its inner chunks
        let (_, n) = ranged_requests(&counting, || {
            a.read_region::<u16>(&region([20, 20], [3, 3])).unwrap()
        });
        assert_eq!(n, 2, "{what}: a new shard");
        let stats = a.index_cache_stats().expect("on by default");
        // (the batched path looks an index up again on each run of a read, so misses are
        // counted per run; the requests above are what counts)
        assert_eq!(stats.entries, 3, "{what}: {stats:?}");
        // a clone shares the cache; an array without it asks for the index every time
        let (_, n) = ranged_requests(&counting, || a.clone().read_region::<u16>(&slab).unwrap());
        assert_eq!(n, 2, "{what}: a clone");
        let plain = a.clone().with_index_cache(0);
        assert!(plain.index_cache_stats().is_none());
        let (_, n) = ranged_requests(&counting, || plain.read_region::<u16>(&slab).unwrap());
        assert_eq!(n, 4, "{what}: no index cache");
    }
}

#[test]
fn a_read_after_a_write_through_the_array_sees_the_write() {
    // inner chunks stored raw (`bytes`): a stale index would go unnoticed, so only the
    // invalidation by the write keeps the read right
    for concurrency in [1, 8] {
        let counting =
            Arc::new(CountingStore::new(MemoryStore::new()).with_fetch_concurrency(concurrency));
        let a = sharded(counting.clone(), false);
        let mut rng = Rng::new(7);
        let mut model = ArrayD::<u16>::zeros(IxDyn(&[32, 32]));
        let first = random_block(&mut rng, [4, 4]);
        a.write_region(&region([0, 0], [4, 4]), first.view())
            .unwrap();
        model.slice_mut(s![0..4, 0..4]).assign(&first);
        let look = region([0, 0], [8, 8]);
        assert_eq!(a.read_region::<u16>(&look).unwrap(), part(&model, &look));
        // a partial update through a clone stores inner chunk (1, 1), between the others in
        // the shard: the index kept before no longer describes the shard
        let second = random_block(&mut rng, [4, 4]);
        a.clone()
            .write_region(&region([4, 4], [4, 4]), second.view())
            .unwrap();
        model.slice_mut(s![4..8, 4..8]).assign(&second);
        let (got, n) = ranged_requests(&counting, || a.read_region::<u16>(&look).unwrap());
        assert_eq!(got, part(&model, &look), "concurrency {concurrency}");
        assert_eq!(n, 2, "the index again, then the inner chunks");
        // the whole shard rewritten, then deleted (all fill) through the array
        let third = random_block(&mut rng, [16, 16]);
        a.write_region(&region([0, 0], [16, 16]), third.view())
            .unwrap();
        model.slice_mut(s![0..16, 0..16]).assign(&third);
        assert_eq!(a.read_region::<u16>(&look).unwrap(), part(&model, &look));
        let zeros = ArrayD::<u16>::zeros(IxDyn(&[16, 16]));
        a.write_region(&region([0, 0], [16, 16]), zeros.view())
            .unwrap();
        model.slice_mut(s![0..16, 0..16]).fill(0);
        assert_eq!(
            counting.get("a/c/0/0").unwrap(),
            None,
            "the shard is deleted"
        );
        assert_eq!(a.read_region::<u16>(&look).unwrap(), part(&model, &look));
    }
}

#[test]
fn a_stale_index_from_a_write_elsewhere_is_read_again_when_a_read_shows_it() {
    let counting = Arc::new(CountingStore::new(MemoryStore::new()));
    let a = sharded(counting.clone(), true);
    // another handle, which the index cache of `a` does not see
    let other = Array::open(counting.clone(), "a").unwrap();
    let mut rng = Rng::new(3);
    let mut model = random_block(&mut rng, [32, 32]);
    a.write_region(&region([0, 0], [32, 32]), model.view())
        .unwrap();
    let look = region([0, 4], [16, 8]);
    assert_eq!(a.read_region::<u16>(&look).unwrap(), part(&model, &look));
    // the shard rewritten elsewhere with its first inner chunks left out: every stored inner
    // chunk moved, so the kept index points at the wrong bytes (zstd frames that do not decode
    // or ranges past the shorter shard)
    let fill = ArrayD::<u16>::zeros(IxDyn(&[4, 16]));
    other
        .write_region(&region([0, 0], [4, 16]), fill.view())
        .unwrap();
    model.slice_mut(s![0..4, 0..16]).fill(0);
    let (got, n) = ranged_requests(&counting, || a.read_region::<u16>(&look).unwrap());
    assert_eq!(got, part(&model, &look));
    assert_eq!(
        n, 3,
        "the stale read, the index again, the inner chunks again"
    );
    // read again: the new index is kept
    let (_, n) = ranged_requests(&counting, || a.read_region::<u16>(&look).unwrap());
    assert_eq!(n, 1);
    // the shard deleted elsewhere: the kept index finds nothing, the index is asked for again
    // and the shard reads as the fill value
    counting.delete("a/c/0/0").unwrap();
    model.slice_mut(s![0..16, 0..16]).fill(0);
    let (got, n) = ranged_requests(&counting, || a.read_region::<u16>(&look).unwrap());
    assert_eq!(got, part(&model, &look));
    assert_eq!(
        n, 2,
        "the data request finds nothing, then the index request"
    );
    // the shard written elsewhere with one inner chunk: much shorter than the index kept
    // from the read of shard (0, 1) says, so the kept ranges lie past its end
    let right = region([0, 16], [16, 8]);
    assert_eq!(a.read_region::<u16>(&right).unwrap(), part(&model, &right));
    let zeros = ArrayD::<u16>::zeros(IxDyn(&[16, 16]));
    other
        .write_region(&region([0, 16], [16, 16]), zeros.view())
        .unwrap();
    let one = random_block(&mut rng, [4, 4]);
    other
        .write_region(&region([12, 28], [4, 4]), one.view())
        .unwrap();
    model.slice_mut(s![0..16, 16..32]).fill(0);
    model.slice_mut(s![12..16, 28..32]).assign(&one);
    // (15 columns: a part of the shard, read through its index; a whole shard is one GET)
    let wide = region([0, 16], [16, 15]);
    let (got, n) = ranged_requests(&counting, || a.read_region::<u16>(&wide).unwrap());
    assert_eq!(got, part(&model, &wide));
    assert_eq!(
        n, 3,
        "ranges past the end, the index again, the inner chunk"
    );
}

#[test]
fn the_index_cache_stays_within_its_bound() {
    let counting = Arc::new(CountingStore::new(MemoryStore::new()));
    let a = sharded(counting.clone(), true);
    let mut rng = Rng::new(5);
    let model = random_block(&mut rng, [32, 32]);
    a.write_region(&region([0, 0], [32, 32]), model.view())
        .unwrap();
    // an index is 16 inner chunks x 16 bytes, its key and the map's bookkeeping: room for two
    let a = a.with_index_cache(900);
    let corners = [[0, 0], [0, 16], [16, 0], [16, 16]];
    for c in corners {
        let r = region(c, [2, 2]);
        assert_eq!(a.read_region::<u16>(&r).unwrap(), part(&model, &r));
        let stats = a.index_cache_stats().unwrap();
        assert!(
            stats.bytes <= stats.capacity && stats.entries <= 2,
            "{stats:?}"
        );
    }
    assert_eq!(a.index_cache_stats().unwrap().entries, 2);
    // the two least recently used were evicted: their index is asked for again
    let (_, n) = ranged_requests(&counting, || {
        a.read_region::<u16>(&region([16, 16], [2, 2])).unwrap()
    });
    assert_eq!(n, 1, "the last shard read keeps its index");
    let (_, n) = ranged_requests(&counting, || {
        a.read_region::<u16>(&region([0, 0], [2, 2])).unwrap()
    });
    assert_eq!(n, 2, "the first shard read lost its index");
    // a bound smaller than one index keeps none
    let tiny = a.with_index_cache(100);
    tiny.read_region::<u16>(&region([0, 0], [2, 2])).unwrap();
    assert_eq!(tiny.index_cache_stats().unwrap().entries, 0);
}

/// Random writes (values, fill value that removes inner chunks and shards, whole shards) and
/// reads (regions, points, orthogonal selections) through one array and its clones, against
/// an in-memory model, on both read paths, with both inner chains, and with an index cache
/// that evicts all the time; a fresh handle reads everything back at the end.
#[test]
fn random_writes_and_reads_through_one_array_agree_with_a_model() {
    // (seed, inner chunks compressed, fetch concurrency, index cache bound: the default, or
    // room for two indexes, so that they are evicted all the time)
    let default = Array::DEFAULT_INDEX_CACHE;
    for (seed, compressed, concurrency, bound) in [
        (1, true, 1, default),
        (2, false, 1, 700),
        (3, true, 8, 700),
        (4, false, 8, default),
    ] {
        let counting =
            Arc::new(CountingStore::new(MemoryStore::new()).with_fetch_concurrency(concurrency));
        let a = sharded(counting.clone(), compressed).with_index_cache(bound);
        let mut model = ArrayD::<u16>::zeros(IxDyn(&[32, 32]));
        let mut rng = Rng::new(seed);
        let random_region = |rng: &mut Rng| {
            let h = 1 + rng.below(20);
            let w = 1 + rng.below(20);
            region([rng.below(33 - h), rng.below(33 - w)], [h, w])
        };
        for step in 0..300 {
            let what = format!("seed {seed} step {step}");
            // the array or a clone of it (which shares its index cache)
            let reader = a.clone();
            match rng.below(10) {
                0..=2 => {
                    let r = random_region(&mut rng);
                    let block = if rng.chance(0.3) {
                        ArrayD::zeros(IxDyn(&[r.shape[0] as usize, r.shape[1] as usize]))
                    } else {
                        random_block(&mut rng, [r.shape[0], r.shape[1]])
                    };
                    let writer = if rng.chance(0.5) { &a } else { &reader };
                    writer.write_region(&r, block.view()).unwrap();
                    let (i, j) = (r.start[0] as usize, r.start[1] as usize);
                    model
                        .slice_mut(s![i..i + block.shape()[0], j..j + block.shape()[1]])
                        .assign(&block);
                }
                3..=5 => {
                    let r = random_region(&mut rng);
                    assert_eq!(
                        reader.read_region::<u16>(&r).unwrap(),
                        part(&model, &r),
                        "{what}"
                    );
                }
                6..=7 => {
                    let pts: Vec<Vec<i64>> = (0..1 + rng.below(12))
                        .map(|_| vec![rng.below(32) as i64, rng.below(32) as i64])
                        .collect();
                    let got = reader
                        .read_selection::<u16>(&Selection::Points(pts.clone()))
                        .unwrap();
                    let want: Vec<u16> = pts
                        .iter()
                        .map(|p| model[[p[0] as usize, p[1] as usize]])
                        .collect();
                    assert_eq!(got.iter().copied().collect::<Vec<_>>(), want, "{what}");
                }
                _ => {
                    let rows: Vec<u64> = (0..1 + rng.below(5)).map(|_| rng.below(32)).collect();
                    let cols: Vec<u64> = (0..1 + rng.below(5)).map(|_| rng.below(32)).collect();
                    let sel = Selection::Orthogonal(vec![
                        AxisSelection::Indices(rows.iter().map(|&i| i as i64).collect()),
                        AxisSelection::Indices(cols.iter().map(|&j| j as i64).collect()),
                    ]);
                    let got = reader.read_selection::<u16>(&sel).unwrap();
                    for (x, &i) in rows.iter().enumerate() {
                        for (y, &j) in cols.iter().enumerate() {
                            assert_eq!(got[[x, y]], model[[i as usize, j as usize]], "{what}");
                        }
                    }
                }
            }
        }
        let stats = a.index_cache_stats().unwrap();
        assert!(stats.hits > 0, "seed {seed}: {stats:?}");
        let fresh = Array::open(counting.clone(), "a").unwrap();
        assert_eq!(
            fresh.read_region::<u16>(&region([0, 0], [32, 32])).unwrap(),
            model
        );
    }
}

#[test]
fn on_local_files_the_index_cache_is_off_by_default_and_works_when_asked_for() {
    use zarr_array::zarr_store::FilesystemStore;
    let dir = tempfile::tempdir().unwrap();
    let fs = Arc::new(CountingStore::new(
        FilesystemStore::create(dir.path()).unwrap(),
    ));
    let a = sharded(fs.clone(), false);
    // an index read from a local file costs a positioned read of the file opened anyway
    assert!(a.index_cache_stats().is_none());
    let a = a.with_index_cache(1 << 20);
    let mut rng = Rng::new(11);
    let mut model = ArrayD::<u16>::zeros(IxDyn(&[32, 32]));
    let first = random_block(&mut rng, [4, 4]);
    a.write_region(&region([0, 0], [4, 4]), first.view())
        .unwrap();
    model.slice_mut(s![0..4, 0..4]).assign(&first);
    // inner chunks (0, 0) and (1, 1): one stored, one not
    let look = region([0, 0], [8, 8]);
    for (pass, want) in [("first", 2), ("second", 1)] {
        fs.reset();
        assert_eq!(a.read_region::<u16>(&look).unwrap(), part(&model, &look));
        let c = fs.counts();
        assert_eq!(
            (c.open_value, c.get_ranges),
            (1, want),
            "{pass} read: the file opened, its index (the first time), the stored inner chunk"
        );
    }
    // a partial update on the filesystem replaces the opened value (in the kernel): through
    // the array, that drops the kept index too
    let second = random_block(&mut rng, [4, 4]);
    fs.reset();
    a.write_region(&region([4, 4], [4, 4]), second.view())
        .unwrap();
    model.slice_mut(s![4..8, 4..8]).assign(&second);
    assert_eq!(fs.counts().open_value, 1, "the update opened the shard");
    fs.reset();
    assert_eq!(a.read_region::<u16>(&look).unwrap(), part(&model, &look));
    assert_eq!(
        fs.counts().get_ranges,
        3,
        "the index again, both inner chunks"
    );
}

#[test]
fn a_partial_shard_update_uses_the_stored_index_not_the_kept_one() {
    // inner chunks stored raw, so that a stale index would go unnoticed; the update keeps the
    // other inner chunks' stored bytes by their place in the stored shard
    let counting = Arc::new(CountingStore::new(MemoryStore::new()));
    let a = sharded(counting.clone(), false);
    let other = Array::open(counting.clone(), "a").unwrap();
    let mut rng = Rng::new(13);
    let mut model = ArrayD::<u16>::zeros(IxDyn(&[32, 32]));
    let first = random_block(&mut rng, [4, 4]);
    a.write_region(&region([12, 12], [4, 4]), first.view())
        .unwrap();
    model.slice_mut(s![12..16, 12..16]).assign(&first);
    // `a` keeps the index of a shard of one inner chunk
    let whole = region([0, 0], [16, 15]);
    assert_eq!(a.read_region::<u16>(&whole).unwrap(), part(&model, &whole));
    // another handle stores inner chunk (0, 0), before it in the shard: every span moves
    let second = random_block(&mut rng, [4, 4]);
    other
        .write_region(&region([0, 0], [4, 4]), second.view())
        .unwrap();
    model.slice_mut(s![0..4, 0..4]).assign(&second);
    // a partial update through `a` of a third inner chunk keeps both stored ones
    let third = random_block(&mut rng, [4, 4]);
    a.write_region(&region([4, 8], [4, 4]), third.view())
        .unwrap();
    model.slice_mut(s![4..8, 8..12]).assign(&third);
    let fresh = Array::open(counting.clone(), "a").unwrap();
    assert_eq!(
        fresh.read_region::<u16>(&region([0, 0], [32, 32])).unwrap(),
        model
    );
    // and `a`, whose write dropped its kept index, reads it all too
    assert_eq!(a.read_region::<u16>(&whole).unwrap(), part(&model, &whole));
}
