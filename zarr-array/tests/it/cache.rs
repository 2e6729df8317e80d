//! The decoded-chunk cache (`Array::with_cache`): reads through it equal reads without it,
//! for every selection and chain; each chunk is decoded once while cached; writes, resizes,
//! appends and prepends through the array keep it true; the bound holds.

use std::sync::Arc;

use zarr_array::zarr_store::testing::CountingStore;
use zarr_array::zarr_store::{MemoryStore, Store};
use zarr_array::{
    Array, ArrayBuilder, AxisSelection, DataType, ExtensionDef, FillValue, Region, Selection,
};
use zarr_testkit::Rng;

fn builders() -> Vec<(&'static str, ArrayBuilder)> {
    let b = || ArrayBuilder::new(vec![30, 20], DataType::UInt16).chunk_shape(vec![8, 6]);
    vec![
        ("zstd", b()),
        ("bytes", b().compressors(Vec::<ExtensionDef>::new())),
        ("sharded", b().shards(vec![16, 12])),
    ]
}

fn values(n: usize, seed: u64) -> Vec<u16> {
    let mut rng = Rng::new(seed);
    (0..n).map(|_| rng.below(1000) as u16).collect()
}

fn points(rng: &mut Rng, shape: &[u64], n: usize) -> Selection {
    let pts = (0..n)
        .map(|_| shape.iter().map(|&e| rng.below(e) as i64).collect())
        .collect();
    Selection::Points(pts)
}

#[test]
fn cached_reads_equal_uncached_reads_and_decode_each_chunk_once() {
    for (name, b) in builders() {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let plain = b.create(store.clone(), "a").unwrap();
        let data = values(30 * 20, 1);
        plain
            .write_region_bytes(&Region::whole(&[30, 20]), bytemuck::cast_slice(&data))
            .unwrap();
        // a stored chunk deleted: it reads as the fill value, cached as absent
        store.delete("a/c/1/1").unwrap();
        let cached = Array::open(store.clone(), "a").unwrap().with_cache(1 << 20);
        let mut rng = Rng::new(7);
        for round in 0..3 {
            let region = Region::new(vec![3, 2], vec![20, 15]).unwrap();
            assert_eq!(
                cached.read_region_bytes(&region).unwrap(),
                plain.read_region_bytes(&region).unwrap(),
                "{name}: region, round {round}"
            );
            let sel = points(&mut rng, &[30, 20], 200);
            assert_eq!(
                cached.read_selection_bytes(&sel).unwrap(),
                plain.read_selection_bytes(&sel).unwrap(),
                "{name}: points, round {round}"
            );
            let sel = Selection::Orthogonal(vec![
                AxisSelection::Indices(vec![29, 0, 5, 5, 17]),
                AxisSelection::Indices(vec![1, 19, 7]),
            ]);
            assert_eq!(
                cached.read_selection_bytes(&sel).unwrap(),
                plain.read_selection_bytes(&sel).unwrap(),
                "{name}: orthogonal, round {round}"
            );
        }
        let stats = cached.cache_stats().unwrap();
        // every chunk of the grid (stored or not) was looked up and decoded at most once
        let grid_chunks = if name == "sharded" { 2 * 2 } else { 4 * 4 };
        assert!(stats.misses <= grid_chunks, "{name}: {stats:?}");
        assert!(
            stats.hits > 0 && stats.entries as u64 == stats.misses,
            "{name}: {stats:?}"
        );
    }
}

#[test]
fn a_cached_read_does_not_go_to_the_store_again() {
    let counting = Arc::new(CountingStore::new(MemoryStore::new()));
    let store: Arc<dyn Store> = counting.clone();
    let a = ArrayBuilder::new(vec![64], DataType::UInt8)
        .chunk_shape(vec![16])
        .create(store.clone(), "a")
        .unwrap()
        .with_cache(1 << 20);
    a.write_region_bytes(&Region::whole(&[64]), &[3; 64])
        .unwrap();
    let region = Region::new(vec![10], vec![20]).unwrap();
    a.read_region_bytes(&region).unwrap();
    let gets = counting.counts().get;
    for _ in 0..5 {
        assert_eq!(a.read_region_bytes(&region).unwrap(), vec![3; 20]);
    }
    assert_eq!(counting.counts().get, gets, "no GET after the first read");
    // the wrapped store keeps the store's compare-and-swap
    assert_eq!(
        a.store().conditional_writes(),
        counting.conditional_writes()
    );
}

#[test]
fn writes_resizes_appends_and_prepends_through_the_array_keep_the_cache_true() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut a = ArrayBuilder::new(vec![10, 10], DataType::Int32)
        .chunk_shape(vec![4, 4])
        .fill_value(FillValue::from_ne_bytes(DataType::Int32, (-1i32).to_ne_bytes()).unwrap())
        .create(store.clone(), "a")
        .unwrap()
        .with_cache(1 << 20);
    let whole = |a: &Array| a.read_all::<i32>().unwrap();
    let model = |a: &Array| {
        Array::open(store.clone(), "a")
            .unwrap()
            .read_all::<i32>()
            .unwrap()
            .into_shape_with_order(a.shape().iter().map(|&n| n as usize).collect::<Vec<_>>())
            .unwrap()
    };
    assert_eq!(whole(&a), model(&a)); // every chunk cached as absent
    a.write_region_bytes(
        &Region::new(vec![1, 1], vec![2, 2]).unwrap(),
        bytemuck::cast_slice(&[5i32; 4]),
    )
    .unwrap();
    assert_eq!(whole(&a), model(&a), "after a partial write");
    a.write_selection_bytes(
        &Selection::Points(vec![vec![9, 9], vec![0, 0]]),
        bytemuck::cast_slice(&[8i32, 9]),
    )
    .unwrap();
    assert_eq!(whole(&a), model(&a), "after a point write");
    a.resize(&[6, 6]).unwrap();
    assert_eq!(whole(&a), model(&a), "after a shrink");
    a.resize(&[10, 10]).unwrap();
    assert_eq!(whole(&a), model(&a), "after a grow");
    a.append(
        ndarray::Array2::from_elem((3, 10), 4i32).into_dyn().view(),
        0,
    )
    .unwrap();
    assert_eq!(whole(&a), model(&a), "after an append");
    a.prepend(
        ndarray::Array2::from_elem((2, 10), 6i32).into_dyn().view(),
        0,
    )
    .unwrap();
    assert_eq!(whole(&a), model(&a), "after a prepend");
    assert_eq!(whole(&a)[[0, 0]], 6);
    // a write through another handle is not seen (documented)
    let before = whole(&a)[[2, 1]];
    let other = Array::open(store.clone(), "a").unwrap();
    let region = Region::new(vec![2, 1], vec![1, 1]).unwrap();
    other
        .write_region_bytes(&region, bytemuck::cast_slice(&[77i32]))
        .unwrap();
    assert_ne!(before, 77);
    assert_eq!(whole(&a)[[2, 1]], before, "the cache keeps what it read");
    let uncached = a.clone().with_cache(0);
    assert!(uncached.cache_stats().is_none());
    assert_eq!(uncached.read_all::<i32>().unwrap()[[2, 1]], 77);
}

#[test]
fn the_cache_stays_within_its_bound() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let a = ArrayBuilder::new(vec![1000], DataType::UInt8)
        .chunk_shape(vec![100])
        .create(store, "a")
        .unwrap()
        .with_cache(350);
    a.write_region_bytes(&Region::whole(&[1000]), &[1; 1000])
        .unwrap();
    for start in (0..1000).step_by(100) {
        a.read_region_bytes(&Region::new(vec![start], vec![10]).unwrap())
            .unwrap();
        let s = a.cache_stats().unwrap();
        assert!(s.bytes <= 350 && s.entries >= 1, "{s:?}");
    }
    // a cache smaller than one chunk keeps nothing, and reads stay right
    let tiny = a.clone().with_cache(10);
    assert_eq!(
        tiny.read_region_bytes(&Region::new(vec![5], vec![3]).unwrap())
            .unwrap(),
        [1, 1, 1]
    );
    assert_eq!(tiny.cache_stats().unwrap().entries, 0);
}
