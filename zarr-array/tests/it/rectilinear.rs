//! Arrays on the `rectilinear` chunk grid: every read and write path (regions, orthogonal
//! selections, points, masks, blocks, the decoded-chunk cache), sharding over it, growth
//! (resize, append) and the refusals (prepend, a reader without the grid, sparse access).
#![cfg(feature = "rectilinear")]

use std::num::NonZeroU64;
use std::sync::Arc;

use ndarray::{ArrayD, IxDyn};
use serde_json::json;
use zarr_array::zarr_grid::rectilinear::{AxisEdges, Edge};
use zarr_array::{
    Array, ArrayBuilder, AxisSelection, BlockSelection, DataType, Extensions, Region, Selection,
    Slice,
};
use zarr_store::{MemoryStore, Store};

fn n(v: u64) -> NonZeroU64 {
    NonZeroU64::new(v).unwrap()
}

/// Axis 0: edges 3, 1, 1, [4 x 2], 5 (sum 17 over a length of 15: the last chunk reaches
/// past the end); axis 1: a regular edge of 4 over 10.
fn edges() -> Vec<AxisEdges> {
    vec![
        AxisEdges::Listed(vec![
            Edge::Single(n(3)),
            Edge::Run {
                size: n(1),
                count: n(2),
            },
            Edge::Run {
                size: n(4),
                count: n(2),
            },
            Edge::Single(n(5)),
        ]),
        AxisEdges::Regular(n(4)),
    ]
}

fn model(shape: &[usize]) -> ArrayD<i32> {
    ArrayD::from_shape_fn(IxDyn(shape), |ix| (ix[0] * 100 + ix[1]) as i32 + 1)
}

fn create(store: Arc<MemoryStore>, builder: ArrayBuilder) -> Array {
    let a = builder.create(store, "r").unwrap();
    a.write_region(&Region::whole(&[15, 10]), model(&[15, 10]).view())
        .unwrap();
    a
}

fn builder() -> ArrayBuilder {
    ArrayBuilder::new(vec![15, 10], DataType::Int32)
        .chunk_edges(edges())
        .fill_value_json(&json!(-1))
        .unwrap()
}

/// Every selection type reads what the model holds, through `a`.
fn check_reads(a: &Array) {
    let m = model(&[15, 10]);
    assert_eq!(a.read_all::<i32>().unwrap(), m);
    // regions across chunk edges, inside one chunk, one element
    for (start, shape) in [
        ([2, 3], [6, 5]),
        ([4, 0], [1, 10]),
        ([9, 8], [6, 2]),
        ([14, 9], [1, 1]),
    ] {
        let r = Region::new(start.to_vec(), shape.to_vec()).unwrap();
        let got = a.read_region::<i32>(&r).unwrap();
        let want = m.slice(ndarray::s![
            start[0] as usize..(start[0] + shape[0]) as usize,
            start[1] as usize..(start[1] + shape[1]) as usize
        ]);
        assert_eq!(got.view().into_dimensionality().unwrap(), want, "{r:?}");
    }
    // orthogonal: indices out of order and repeated, a strided slice
    let rows = vec![14, 0, 3, 3, 8, 4];
    let sel = Selection::Orthogonal(vec![
        AxisSelection::Indices(rows.clone()),
        AxisSelection::Slice(Slice::with_step(1, 10, 3)),
    ]);
    let got = a.read_selection::<i32>(&sel).unwrap();
    let cols = [1usize, 4, 7];
    for (i, &r) in rows.iter().enumerate() {
        for (j, &c) in cols.iter().enumerate() {
            assert_eq!(got[[i, j]], m[[r as usize, c]]);
        }
    }
    // a mask
    let mask: Vec<bool> = (0..15).map(|i| i % 4 == 1).collect();
    let sel = Selection::Orthogonal(vec![
        AxisSelection::Mask(mask.clone()),
        AxisSelection::Index(9),
    ]);
    let got = a.read_selection::<i32>(&sel).unwrap();
    let want: Vec<i32> = (0..15).filter(|i| mask[*i]).map(|i| m[[i, 9]]).collect();
    assert_eq!(got.iter().copied().collect::<Vec<_>>(), want);
    // points (vindex)
    let points = vec![vec![0, 0], vec![14, 9], vec![3, 4], vec![4, 3], vec![12, 5]];
    let got = a
        .read_selection::<i32>(&Selection::Points(points.clone()))
        .unwrap();
    for (i, p) in points.iter().enumerate() {
        assert_eq!(got[[i]], m[[p[0] as usize, p[1] as usize]]);
    }
    // blocks: chunk row 3 is rows 5..9
    let sel = Selection::Blocks(vec![BlockSelection::Index(3), BlockSelection::Index(0)]);
    assert_eq!(a.selection_shape(&sel).unwrap(), vec![4, 4]);
    let got = a.read_selection::<i32>(&sel).unwrap();
    assert_eq!(got[[0, 0]], m[[5, 0]]);
}

#[test]
fn every_selection_round_trips() {
    let store = Arc::new(MemoryStore::new());
    let a = create(store.clone(), builder());
    assert_eq!(a.chunk_shape(), None);
    assert_eq!(a.chunk_shape_of(&[0, 0]), Some(vec![3, 4]));
    assert_eq!(a.chunk_shape_of(&[5, 2]), Some(vec![5, 4]));
    assert_eq!(a.grid().grid_range(), vec![0..6, 0..3]);
    assert_eq!(a.stored_chunks().unwrap().len(), 18);
    // each stored chunk decodes to its own shape
    let last = a.read_chunk_bytes(&[5, 2]).unwrap().unwrap();
    assert_eq!(last.len(), 5 * 4 * 4);
    check_reads(&a);
    // opened again, and with a cache
    let b = Array::open(store.clone(), "r").unwrap();
    check_reads(&b);
    let cached = b.with_cache(1 << 20);
    check_reads(&cached);
    check_reads(&cached);
    assert!(cached.cache_stats().unwrap().hits > 0);
    // the metadata as written: kind first, the runs as given
    let meta: serde_json::Value =
        serde_json::from_slice(&store.get("r/zarr.json").unwrap().unwrap()).unwrap();
    assert_eq!(
        meta["chunk_grid"],
        json!({"name": "rectilinear", "configuration": {"kind": "inline",
            "chunk_shapes": [[3, [1, 2], [4, 2], 5], 4]}})
    );
}

#[test]
fn selection_writes_land_in_the_right_chunks() {
    let store = Arc::new(MemoryStore::new());
    let a = create(store, builder());
    let mut m = model(&[15, 10]);
    // points
    let points = vec![vec![3, 0], vec![4, 9], vec![14, 9], vec![2, 3]];
    let values = ArrayD::from_shape_vec(IxDyn(&[4]), vec![-5, -6, -7, -8]).unwrap();
    a.write_selection(&Selection::Points(points.clone()), values.view())
        .unwrap();
    for (p, v) in points.iter().zip(values.iter()) {
        m[[p[0] as usize, p[1] as usize]] = *v;
    }
    // orthogonal, across chunk edges
    let rows = vec![0, 4, 5, 13];
    let cols = vec![2, 3, 4];
    let data = ArrayD::from_shape_fn(IxDyn(&[4, 3]), |ix| -((10 + ix[0] * 3 + ix[1]) as i32));
    let sel = Selection::Orthogonal(vec![
        AxisSelection::Indices(rows.clone()),
        AxisSelection::Indices(cols.clone()),
    ]);
    a.write_selection(&sel, data.view()).unwrap();
    for (i, &r) in rows.iter().enumerate() {
        for (j, &c) in cols.iter().enumerate() {
            m[[r as usize, c as usize]] = data[[i, j]];
        }
    }
    // a region that covers some chunks whole and others in part
    let r = Region::new(vec![3, 4], vec![10, 6]).unwrap();
    let block = ArrayD::from_elem(IxDyn(&[10, 6]), 7);
    a.write_region(&r, block.view()).unwrap();
    m.slice_mut(ndarray::s![3..13, 4..10]).fill(7);
    assert_eq!(a.read_all::<i32>().unwrap(), m);
    // a chunk written all fill is deleted
    a.write_region(
        &Region::new(vec![3, 0], vec![1, 4]).unwrap(),
        ArrayD::from_elem(IxDyn(&[1, 4]), -1).view(),
    )
    .unwrap();
    assert!(!a.stored_chunks().unwrap().contains(&vec![1, 0]));
}

#[test]
fn sharding_over_a_rectilinear_grid() {
    let store = Arc::new(MemoryStore::new());
    let sharding = json!({"name": "sharding_indexed", "configuration": {
        "chunk_shape": [1, 2],
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                         {"name": "crc32c"}]}});
    let def = zarr_array::ExtensionDef::from_value(&sharding, "codecs").unwrap();
    let a = create(
        store.clone(),
        builder()
            .serializer(def.clone())
            .compressors(Vec::<zarr_array::ExtensionDef>::new()),
    );
    check_reads(&a);
    check_reads(&Array::open(store, "r").unwrap());
    // inner chunks that do not divide every edge: refused when the array is made, naming
    // the shard shape
    let bad = json!({"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 2]}});
    let bad = zarr_array::ExtensionDef::from_value(&bad, "codecs").unwrap();
    let err = builder()
        .serializer(bad)
        .compressors(Vec::<zarr_array::ExtensionDef>::new())
        .create(Arc::new(MemoryStore::new()), "r")
        .unwrap_err();
    let text = zarr_array::report(&err);
    assert!(text.contains("sharding"), "{text}");
}

#[test]
fn append_repeats_the_last_edge_and_keeps_the_metadata_compact() {
    let store = Arc::new(MemoryStore::new());
    let mut a = create(store.clone(), builder());
    // 2 rows fill the last chunk (5 long, 3 used); 7 more add two chunks of 5
    let more = ArrayD::from_shape_fn(IxDyn(&[9, 10]), |ix| 5000 + (ix[0] * 10 + ix[1]) as i32);
    a.append(more.view(), 0).unwrap();
    assert_eq!(a.shape(), &[24, 10]);
    assert_eq!(a.grid().grid_range(), vec![0..8, 0..3]);
    assert_eq!(a.chunk_shape_of(&[7, 0]), Some(vec![5, 4]));
    let meta: serde_json::Value =
        serde_json::from_slice(&store.get("r/zarr.json").unwrap().unwrap()).unwrap();
    assert_eq!(
        meta["chunk_grid"]["configuration"]["chunk_shapes"],
        json!([[3, [1, 2], [4, 2], [5, 3]], 4])
    );
    let all = Array::open(store.clone(), "r")
        .unwrap()
        .read_all::<i32>()
        .unwrap();
    assert_eq!(
        all.slice(ndarray::s![..15, ..]).into_dyn(),
        model(&[15, 10])
    );
    assert_eq!(all.slice(ndarray::s![15.., ..]).into_dyn(), more);
    // along the regular axis: the edge simply repeats
    let cols = ArrayD::from_elem(IxDyn(&[24, 3]), 9);
    a.append(cols.view(), 1).unwrap();
    assert_eq!(a.grid().grid_range(), vec![0..8, 0..4]);
    // shrink then grow: the declared edges stay, so the chunks (and keys) do too, and the
    // cut-off positions read as fill
    a.resize(&[4, 13]).unwrap();
    assert_eq!(a.grid().grid_range(), vec![0..2, 0..4]);
    a.resize(&[24, 13]).unwrap();
    assert_eq!(a.chunk_shape_of(&[4, 0]), Some(vec![4, 4]));
    let back = a.read_all::<i32>().unwrap();
    assert_eq!(
        back.slice(ndarray::s![..4, ..10]).into_dyn(),
        model(&[4, 10])
    );
    assert!(back.slice(ndarray::s![4.., ..]).iter().all(|&v| v == -1));
}

#[test]
fn prepend_is_refused_saying_what_it_would_need() {
    let store = Arc::new(MemoryStore::new());
    let mut a = create(store.clone(), builder());
    let before = store.get("r/zarr.json").unwrap();
    let err = a
        .prepend(ArrayD::from_elem(IxDyn(&[2, 10]), 1).view(), 0)
        .unwrap_err();
    let text = zarr_array::report(&err);
    assert!(
        text.contains("cannot prepend") && text.contains("would need a lower bound"),
        "{text}"
    );
    assert_eq!(store.get("r/zarr.json").unwrap(), before);
    assert_eq!(a.shape(), &[15, 10]);
}

#[test]
fn a_reader_without_the_grid_refuses_it_by_name() {
    let store = Arc::new(MemoryStore::new());
    create(store.clone(), builder());
    let without = Extensions::default().without("rectilinear");
    let err = Array::open_with(store, "r", &without).unwrap_err();
    let text = zarr_array::report(&err);
    assert!(text.contains("rectilinear"), "{text}");
}

#[test]
fn builder_conflicts_and_sparse_are_refused() {
    let store = Arc::new(MemoryStore::new());
    let err = builder()
        .shards(vec![8, 8])
        .create(store.clone(), "x")
        .unwrap_err();
    assert!(zarr_array::report(&err).contains("cannot be combined with shards"));
    let short = ArrayBuilder::new(vec![15, 10], DataType::Int32)
        .chunk_edges(vec![
            AxisEdges::Listed(vec![Edge::Single(n(14))]),
            AxisEdges::Regular(n(4)),
        ])
        .create(store.clone(), "y")
        .unwrap_err();
    let text = zarr_array::report(&short);
    assert!(text.contains("sum to 14, short of its length 15"), "{text}");
    let a = create(store, builder());
    assert!(!a.is_sparse());
    let err = a.sparse().unwrap_err();
    assert!(
        matches!(err, zarr_array::ArrayError::ChunksDiffer { .. }),
        "{err}"
    );
}

#[test]
fn integer_axes_only_have_one_chunk_shape() {
    let a = ArrayBuilder::new(vec![10, 7], DataType::UInt8)
        .chunk_edges(vec![AxisEdges::Regular(n(4)), AxisEdges::Regular(n(3))])
        .create(Arc::new(MemoryStore::new()), "a")
        .unwrap();
    assert_eq!(a.chunk_shape(), Some(vec![4, 3]));
    let data = ArrayD::from_shape_fn(IxDyn(&[10, 7]), |ix| (ix[0] * 7 + ix[1]) as u8);
    a.write_region(&Region::whole(&[10, 7]), data.view())
        .unwrap();
    assert_eq!(a.read_all::<u8>().unwrap(), data);
}
