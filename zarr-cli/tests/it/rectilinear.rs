//! The `zarr` command on `rectilinear` arrays (chunk edges that vary along an axis): `info`
//! shows the edges, `export` reads every position, `validate` decodes every chunk, `append`
//! grows by the last edge, `convert` copies onto a regular grid, `prepend` is refused saying
//! why, and a reader built without the grid refuses the array by name.

use std::num::NonZeroU64;
use std::sync::Arc;

use crate::common::*;
use zarr_array::zarr_grid::rectilinear::{AxisEdges, Edge};
use zarr_array::zarr_store::FilesystemStore;
use zarr_array::{ArrayBuilder, Region};

fn n(v: u64) -> NonZeroU64 {
    NonZeroU64::new(v).unwrap()
}

#[test]
fn commands_on_a_rectilinear_array() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.zarr");
    std::fs::create_dir_all(&path).unwrap();
    let store = Arc::new(FilesystemStore::open(&path).unwrap());
    // rows in chunks of 1, 2 and two of 3 (a run), columns in chunks of 4
    let edges = vec![
        AxisEdges::Listed(vec![
            Edge::Single(n(1)),
            Edge::Single(n(2)),
            Edge::Run {
                size: n(3),
                count: n(2),
            },
        ]),
        AxisEdges::Regular(n(4)),
    ];
    let a = ArrayBuilder::new(vec![9, 6], DataType::Int32)
        .chunk_edges(edges)
        .create(store, "")
        .unwrap();
    let values: Vec<i32> = (0..54).map(|v| v * 3 - 7).collect();
    a.write_region_bytes(&Region::whole(&[9, 6]), &i32s(values.clone()))
        .unwrap();
    let p = s(&path);

    let info = ok(&["info", &p]);
    assert!(info.contains("rectilinear"), "{info}");
    let out = ok(&["validate", &p]);
    assert!(out.contains("8 chunks decoded"), "{out}");
    let npy = dir.path().join("out.npy");
    ok(&["export", &p, &s(&npy)]);
    let back = read_npy(&npy);
    assert_eq!(back.shape, vec![9, 6]);
    assert_eq!(to_i32(&back.data), values);

    // append three rows: the last edge (3) repeats, and they read back after the old ones
    let block = dir.path().join("block.npy");
    let more: Vec<i32> = (0..18).map(|v| 1000 + v).collect();
    write_npy(&block, DataType::Int32, &[3, 6], &i32s(more.clone()));
    ok(&["append", &p, &s(&block), "--axis", "0"]);
    ok(&["export", &p, &s(&npy)]);
    let back = read_npy(&npy);
    assert_eq!(back.shape, vec![12, 6]);
    assert_eq!(to_i32(&back.data), [values.clone(), more.clone()].concat());

    // a copy onto a regular grid holds the same data
    let regular = s(&dir.path().join("regular.zarr"));
    ok(&["convert", &p, &regular, "--chunks", "4,4"]);
    let info = ok(&["info", &regular]);
    assert!(info.contains("regular"), "{info}");
    ok(&["export", &regular, &s(&npy)]);
    assert_eq!(to_i32(&read_npy(&npy).data), [values, more].concat());

    // prepend is refused before anything is written, saying why
    let before = snapshot(&path);
    let row = dir.path().join("row.npy");
    write_npy(&row, DataType::Int32, &[1, 6], &i32s([0; 6]));
    let e = fails(&["prepend", &p, &s(&row), "--axis", "0"], 1);
    assert!(e.contains("rectilinear"), "{e}");
    assert_eq!(snapshot(&path), before);

    // a reader without the grid refuses the array by name
    let e = fails(&["export", &p, &s(&npy), "--without", "rectilinear"], 1);
    assert!(e.contains("rectilinear"), "{e}");
}
