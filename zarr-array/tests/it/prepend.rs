//! Prepend through the regular_bounded grid: the spec's worked example, untouched chunks,
//! refusal by readers without the grid, and every selection type against a reference array
//! on arrays whose first chunk is partly filled on every axis, with non-zero origins.
// The codecs (cargo features) these tests use; `scripts/check-features` builds them without.
#![cfg(all(feature = "zstd", feature = "sharding", feature = "regular-bounded"))]

use std::collections::BTreeMap;
use std::sync::Arc;

use ndarray::{s, ArrayD, IxDyn};
use zarr_array::selection::{AxisSelection, BasicItem, BlockSelection, Selection, Slice};
use zarr_array::{Array, ArrayBuilder, DataType, Extensions};
use zarr_store::{FilesystemStore, MemoryStore, Store};

fn snapshot(store: &dyn Store, prefix: &str) -> BTreeMap<String, Vec<u8>> {
    store
        .list_prefix(prefix)
        .unwrap()
        .into_iter()
        .map(|k| {
            let v = store.get(&k).unwrap().unwrap();
            (k, v)
        })
        .collect()
}

#[test]
fn worked_example_of_the_spec() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::create(dir.path()).unwrap());
    let mut z = ArrayBuilder::new(vec![6, 4], DataType::Int32)
        .chunk_shape(vec![4, 4])
        .create(store.clone(), "z")
        .unwrap();
    z.write_region(
        &zarr_array::Region::new(vec![0, 0], vec![6, 4]).unwrap(),
        ArrayD::from_elem(vec![6, 4], 1i32).view(),
    )
    .unwrap();
    let before = snapshot(&*store, "z/c/");
    assert_eq!(
        before.keys().cloned().collect::<Vec<_>>(),
        vec!["z/c/0/0", "z/c/1/0"]
    );

    z.prepend(ArrayD::from_elem(vec![3, 4], 2i32).view(), 0)
        .unwrap();
    assert_eq!(z.shape(), &[9, 4]);
    assert_eq!(z.domain(), vec![(-3, 6), (0, 4)]);
    let after = snapshot(&*store, "z/c/");
    assert!(after.contains_key("z/c/-1/0"));
    for (k, v) in &before {
        assert_eq!(after.get(k), Some(v), "{k} changed");
    }
    let z = Array::open(store.clone(), "z").unwrap();
    let all = z.read_all::<i32>().unwrap();
    assert!(all.slice(s![0..3, ..]).iter().all(|&v| v == 2));
    assert!(all.slice(s![3..9, ..]).iter().all(|&v| v == 1));
    assert_eq!(z.grid().buffer_offset(&[-1, 0]), vec![1, 0]);

    let legacy = Extensions::default().without("regular_bounded");
    let err = Array::open_with(store.clone(), "z", &legacy).unwrap_err();
    assert!(
        zarr_testkit::report(&err).contains("regular_bounded"),
        "{err}"
    );
    let err = Array::open_with(store, "z", &Extensions::core()).unwrap_err();
    assert!(
        zarr_testkit::report(&err).contains("regular_bounded"),
        "{err}"
    );
}

#[test]
fn aligned_prepend_touches_no_existing_chunk() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut z = ArrayBuilder::new(vec![128], DataType::UInt8)
        .chunk_shape(vec![64])
        .create(store.clone(), "a")
        .unwrap();
    let data = ArrayD::from_shape_fn(IxDyn(&[128]), |i| i[0] as u8 + 1);
    z.write_region(&region_at(&[0], &data), data.view())
        .unwrap();
    let before = snapshot(&*store, "a/c/");
    z.prepend(ArrayD::from_elem(vec![64], 7u8).view(), 0)
        .unwrap();
    let after = snapshot(&*store, "a/c/");
    for (k, v) in &before {
        assert_eq!(after.get(k), Some(v));
    }
    assert_eq!(after.len(), 3);
    // an unaligned prepend of 10 more: new chunk c/-2 partly filled (offset 54)
    z.prepend(ArrayD::from_elem(vec![10], 9u8).view(), 0)
        .unwrap();
    assert_eq!(z.domain(), vec![(-74, 128)]);
    assert_eq!(z.grid().buffer_offset(&[-2]), vec![54]);
    let all = z.read_all::<u8>().unwrap();
    assert!(all.slice(s![0..10]).iter().all(|&v| v == 9));
    assert!(all.slice(s![10..74]).iter().all(|&v| v == 7));
    assert_eq!(all.slice(s![74..]).into_dyn(), data);
}

#[test]
fn wrong_shapes_change_nothing() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut z = ArrayBuilder::new(vec![4, 3], DataType::Float64)
        .chunk_shape(vec![2, 2])
        .create(store.clone(), "a")
        .unwrap();
    let before = snapshot(&*store, "");
    assert!(z
        .prepend(ArrayD::<f64>::zeros(vec![2, 2]).view(), 0)
        .is_err());
    assert!(z
        .append(ArrayD::<f64>::zeros(vec![2, 4]).view(), 1)
        .is_err());
    assert!(z
        .prepend(ArrayD::<f64>::zeros(vec![2, 3]).view(), 2)
        .is_err());
    assert!(z
        .prepend(ArrayD::<f32>::zeros(vec![2, 3]).view(), 0)
        .is_err());
    assert_eq!(snapshot(&*store, ""), before);
    assert_eq!(z.shape(), &[4, 3]);
    // prepend of nothing changes nothing (the grid stays regular)
    z.prepend(ArrayD::<f64>::zeros(vec![0, 3]).view(), 0)
        .unwrap();
    assert_eq!(snapshot(&*store, ""), before);
}

/// A 3-d array with origins (1, -2, 5), chunk (4, 3, 5), prepended on every axis so the first
/// chunk is partly filled everywhere; a reference ndarray tracks what it must hold.
fn shifted_3d() -> (Array, ArrayD<i32>) {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut z = ArrayBuilder::new(vec![7, 5, 6], DataType::Int32)
        .chunk_shape(vec![4, 3, 5])
        .origin(vec![1, -2, 5])
        .lower_bound(vec![0, 0, 0])
        .fill_value_json(&serde_json::json!(-1))
        .unwrap()
        .create(store.clone(), "z")
        .unwrap();
    let mut reference = ArrayD::from_shape_fn(IxDyn(&[7, 5, 6]), |i| {
        (i[0] * 100 + i[1] * 10 + i[2]) as i32
    });
    z.write_region(&region_at(&[0, 0, 0], &reference), reference.view())
        .unwrap();
    for (axis, k) in [(0usize, 3usize), (1, 2), (2, 1)] {
        let mut shape = reference.shape().to_vec();
        shape[axis] = k;
        let block = ArrayD::from_shape_fn(IxDyn(&shape), |i| {
            5000 + (i[0] * 37 + i[1] * 11 + i[2]) as i32 + axis as i32 * 1000
        });
        z.prepend(block.view(), axis).unwrap();
        reference =
            ndarray::concatenate(ndarray::Axis(axis), &[block.view(), reference.view()]).unwrap();
    }
    let z = Array::open(store, "z").unwrap();
    assert_eq!(z.shape(), &[10, 7, 7]);
    assert_eq!(z.domain(), vec![(-3, 7), (-2, 5), (-1, 6)]);
    (z, reference)
}

#[test]
fn every_selection_reads_like_the_reference() {
    let (z, r) = shifted_3d();
    assert_eq!(z.read_all::<i32>().unwrap(), r);
    // basic with steps and an integer and an ellipsis
    let sel = Selection::Basic(vec![
        BasicItem::Slice(Slice::with_step(1, 10, 3)),
        BasicItem::Index(-2),
        BasicItem::Ellipsis,
    ]);
    let got = z.read_selection::<i32>(&sel).unwrap();
    assert_eq!(got, r.slice(s![1..10;3, 5, ..]).into_dyn());
    // orthogonal: indices (unsorted, repeated), a mask, a slice
    let sel = Selection::Orthogonal(vec![
        AxisSelection::Indices(vec![9, 0, 3, 3]),
        AxisSelection::Mask(vec![true, false, true, true, false, false, true]),
        AxisSelection::Slice(Slice::new(2, 7)),
    ]);
    let got = z.read_selection::<i32>(&sel).unwrap();
    for (a, &i) in [9usize, 0, 3, 3].iter().enumerate() {
        for (b, &j) in [0usize, 2, 3, 6].iter().enumerate() {
            for k in 2..7 {
                assert_eq!(got[[a, b, k - 2]], r[[i, j, k]]);
            }
        }
    }
    // points
    let pts = vec![vec![0, 0, 0], vec![9, 6, 6], vec![3, 2, 1], vec![-1, 0, -1]];
    let got = z.read_selection::<i32>(&Selection::Points(pts)).unwrap();
    assert_eq!(
        got.as_slice().unwrap(),
        &[r[[0, 0, 0]], r[[9, 6, 6]], r[[3, 2, 1]], r[[9, 0, 6]]]
    );
    // blocks: chunk 0 on each axis is the partly filled first chunk
    let grid = z.grid();
    let first: Vec<i64> = grid.grid_range().iter().map(|g| g.start).collect();
    let part = grid.chunk_part(&first).unwrap();
    let got = z
        .read_selection::<i32>(&Selection::Blocks(vec![BlockSelection::Index(0); 3]))
        .unwrap();
    let (st, sh) = (&part.in_region.start, &part.in_region.shape);
    assert_eq!(
        got.shape(),
        &sh.iter().map(|&n| n as usize).collect::<Vec<_>>()[..]
    );
    assert_eq!(
        got,
        r.slice(s![
            st[0] as usize..(st[0] + sh[0]) as usize,
            st[1] as usize..(st[1] + sh[1]) as usize,
            st[2] as usize..(st[2] + sh[2]) as usize
        ])
        .into_dyn()
    );
    let got = z
        .read_selection::<i32>(&Selection::Blocks(vec![BlockSelection::Range(
            Some(1),
            None,
        )]))
        .unwrap();
    assert_eq!(got, r.slice(s![sh[0] as usize.., .., ..]).into_dyn());
}

#[test]
fn every_selection_writes_like_the_reference() {
    let (z, mut r) = shifted_3d();
    let sel = Selection::Basic(vec![
        BasicItem::Slice(Slice::with_step(0, 10, 4)),
        BasicItem::Index(1),
    ]);
    let data = ArrayD::from_shape_fn(IxDyn(&[3, 7]), |i| -(i[0] as i32 * 7 + i[1] as i32) - 10);
    z.write_selection(&sel, data.view()).unwrap();
    r.slice_mut(s![0..10;4, 1, ..]).assign(&data);

    let sel = Selection::Orthogonal(vec![
        AxisSelection::Mask((0..10).map(|i| i % 3 == 0).collect()),
        AxisSelection::Indices(vec![6, 0]),
        AxisSelection::Index(0),
    ]);
    let data = ArrayD::from_shape_fn(IxDyn(&[4, 2]), |i| 9000 + i[0] as i32 * 2 + i[1] as i32);
    z.write_selection(&sel, data.view()).unwrap();
    for (a, i) in [0usize, 3, 6, 9].into_iter().enumerate() {
        for (b, j) in [6usize, 0].into_iter().enumerate() {
            r[[i, j, 0]] = data[[a, b]];
        }
    }

    let pts = vec![vec![0, 0, 0], vec![9, 6, 6], vec![2, 3, 4]];
    let vals = ArrayD::from_shape_vec(IxDyn(&[3]), vec![1, 2, 3]).unwrap();
    z.write_selection(&Selection::Points(pts), vals.view())
        .unwrap();
    r[[0, 0, 0]] = 1;
    r[[9, 6, 6]] = 2;
    r[[2, 3, 4]] = 3;

    let blk = Selection::Blocks(vec![
        BlockSelection::Index(0),
        BlockSelection::Index(0),
        BlockSelection::Index(0),
    ]);
    let shape = z.selection_shape(&blk).unwrap();
    let data = ArrayD::from_elem(shape.iter().map(|&n| n as usize).collect::<Vec<_>>(), 77);
    z.write_selection(&blk, data.view()).unwrap();
    r.slice_mut(s![
        0..shape[0] as usize,
        0..shape[1] as usize,
        0..shape[2] as usize
    ])
    .fill(77);

    assert_eq!(z.read_all::<i32>().unwrap(), r);
    // reopen sees the same
    let again = Array::open(z.store().clone(), "z").unwrap();
    assert_eq!(again.read_all::<i32>().unwrap(), r);
}

#[test]
fn repeated_prepends_then_append_then_resize() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut z = ArrayBuilder::new(vec![5, 2], DataType::Int16)
        .chunk_shape(vec![3, 2])
        .create(store.clone(), "z")
        .unwrap();
    let mut r = ArrayD::from_shape_fn(IxDyn(&[5, 2]), |i| (i[0] * 2 + i[1]) as i16);
    z.write_region(&region_at(&[0, 0], &r), r.view()).unwrap();
    for step in 0..4 {
        let block = ArrayD::from_elem(vec![step + 1, 2], 100 + step as i16);
        z.prepend(block.view(), 0).unwrap();
        r = ndarray::concatenate(ndarray::Axis(0), &[block.view(), r.view()]).unwrap();
        assert_eq!(z.read_all::<i16>().unwrap(), r);
    }
    let tail = ArrayD::from_elem(vec![4, 2], -5i16);
    z.append(tail.view(), 0).unwrap();
    r = ndarray::concatenate(ndarray::Axis(0), &[r.view(), tail.view()]).unwrap();
    assert_eq!(z.read_all::<i16>().unwrap(), r);
    // shrink, then grow again: the cut part reads as fill, never stale data
    z.resize(&[12, 2]).unwrap();
    z.resize(&[19, 2]).unwrap();
    let got = z.read_all::<i16>().unwrap();
    assert_eq!(got.slice(s![..12, ..]), r.slice(s![..12, ..]));
    assert!(got.slice(s![12.., ..]).iter().all(|&v| v == 0));
    let reopened = Array::open(store, "z").unwrap();
    assert_eq!(reopened.read_all::<i16>().unwrap(), got);
    assert_eq!(reopened.domain()[0].0, -10);
}

#[test]
fn conversion_to_regular_keeps_positions_and_data() {
    let (z, r) = shifted_3d();
    let dst: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let copy = z.to_regular(dst.clone(), "copy").unwrap();
    let legacy = Array::open_with(dst, "copy", &Extensions::core()).unwrap();
    assert_eq!(legacy.read_all::<i32>().unwrap(), r);
    assert_eq!(copy.metadata().chunk_grid.name, "regular");
    assert_eq!(
        legacy.attributes()["regular_bounded"]["domain"],
        serde_json::json!([[-3, 7], [-2, 5], [-1, 6]])
    );
    // a user attribute of that name is never overwritten: the copy is refused, nothing written
    let (mut z, _) = shifted_3d();
    let mine = serde_json::json!({"regular_bounded": "the user's own"});
    z.update_attributes(mine.as_object().unwrap().clone())
        .unwrap();
    let dst: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let err = z.to_regular(dst.clone(), "copy").unwrap_err();
    assert!(
        matches!(
            err,
            zarr_array::ArrayError::AttributeInUse {
                name: "regular_bounded",
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("rename it first"), "{err}");
    assert!(dst.list_prefix("").unwrap().is_empty());
    assert_eq!(z.attributes()["regular_bounded"], "the user's own");
}

#[test]
fn prepend_by_part_of_a_shard_reads_every_selection() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut z = ArrayBuilder::new(vec![10, 6], DataType::UInt32)
        .chunk_shape(vec![2, 3])
        .shards(vec![4, 6])
        .create(store.clone(), "s")
        .unwrap();
    let mut r = ArrayD::from_shape_fn(IxDyn(&[10, 6]), |i| (i[0] * 6 + i[1]) as u32 + 1);
    z.write_region(&region_at(&[0, 0], &r), r.view()).unwrap();
    let before = snapshot(&*store, "s/c/");
    // 3 rows: the new first shard is partly filled, and one of its inner chunks too
    let block = ArrayD::from_shape_fn(IxDyn(&[3, 6]), |i| 1000 + (i[0] * 6 + i[1]) as u32);
    z.prepend(block.view(), 0).unwrap();
    r = ndarray::concatenate(ndarray::Axis(0), &[block.view(), r.view()]).unwrap();
    let after = snapshot(&*store, "s/c/");
    for (k, v) in &before {
        assert_eq!(after.get(k), Some(v), "{k} changed by an aligned prepend");
    }
    assert_eq!(z.read_all::<u32>().unwrap(), r);
    let sel = Selection::Orthogonal(vec![
        AxisSelection::Indices(vec![0, 2, 3, 12]),
        AxisSelection::Slice(Slice::with_step(0, 6, 2)),
    ]);
    let got = z.read_selection::<u32>(&sel).unwrap();
    assert_eq!(
        got,
        r.select(ndarray::Axis(0), &[0, 2, 3, 12])
            .slice(s![.., 0..6;2])
            .into_dyn()
    );
    // partial read inside the partly filled shard, and a write there
    let part = z
        .read_selection::<u32>(&Selection::Basic(vec![BasicItem::Slice(Slice::new(1, 4))]))
        .unwrap();
    assert_eq!(part, r.slice(s![1..4, ..]).into_dyn());
    let ones = ArrayD::from_elem(vec![2, 6], 7u32);
    z.write_selection(
        &Selection::Basic(vec![BasicItem::Slice(Slice::new(0, 2))]),
        ones.view(),
    )
    .unwrap();
    r.slice_mut(s![0..2, ..]).fill(7);
    let reopened = Array::open(store, "s").unwrap();
    assert_eq!(reopened.read_all::<u32>().unwrap(), r);
}

/// The region of `data` placed at `start`.
fn region_at<A>(start: &[u64], data: &ndarray::ArrayD<A>) -> zarr_array::Region {
    let shape = data.shape().iter().map(|&n| n as u64).collect();
    zarr_array::Region::new(start.to_vec(), shape).expect("a region")
}
