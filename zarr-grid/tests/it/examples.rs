//! The spec's worked examples and the conformance documents of the grid, copied here as
//! literals so the crate's tests stand alone.

use zarr_grid::key_encoding::{build_key_encoding, default_key_encoding_registry};
use zarr_grid::{build_grid, default_registry, ChunkGrid, GridError};
use zarr_meta::{ArrayMetadata, ExtensionDef, MetaError};

/// The grid and key encoding of a whole `zarr.json`.
/// A grid with its key encoding.
type Opened = (Box<dyn ChunkGrid>, Box<dyn zarr_grid::ChunkKeyEncoding>);

fn open(doc: &str) -> Result<Opened, GridError> {
    let meta = ArrayMetadata::from_slice(doc.as_bytes())?;
    let grid = build_grid(&default_registry(), &meta.chunk_grid, &meta.shape)?;
    let keys = build_key_encoding(&default_key_encoding_registry(), &meta.chunk_key_encoding)?;
    Ok((grid, keys))
}

#[cfg(feature = "regular-bounded")]
fn all_keys(
    grid: &dyn ChunkGrid,
    keys: &dyn zarr_grid::ChunkKeyEncoding,
) -> std::collections::BTreeSet<String> {
    grid.chunk_indices().map(|g| keys.encode(&g)).collect()
}

/// `v3/reject_chunk_rank/zarr.json`: chunk_shape rank differs from shape.
const REJECT_CHUNK_RANK: &str = r#"{
  "zarr_format": 3, "node_type": "array", "shape": [4, 4], "data_type": "int32",
  "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
  "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
  "fill_value": 0,
  "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]
}"#;

/// `v3/reject_zero_chunk/zarr.json`: chunk_shape with a zero.
const REJECT_ZERO_CHUNK: &str = r#"{
  "zarr_format": 3, "node_type": "array", "shape": [4, 4], "data_type": "int32",
  "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [0, 2]}},
  "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
  "fill_value": 0,
  "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]
}"#;

/// `extensions/rbx_must_understand_false/zarr.json`: a chunk grid cannot be
/// `must_understand: false`.
const RBX_MUST_UNDERSTAND_FALSE: &str = r#"{"zarr_format": 3, "node_type": "array", "shape": [8, 8], "data_type": "float32", "chunk_grid": {"name": "regular_bounded", "configuration": {"chunk_shape": [4, 4], "origin": [0, 0], "lower_bound": [-2, 0]}, "must_understand": false}, "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}}, "fill_value": 0.0, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}"#;

/// `extensions/rb_prepended_2d/zarr.json`: regular_bounded after prepending 3 rows.
const RB_PREPENDED_2D: &str = r#"{
 "zarr_format": 3, "node_type": "array", "shape": [9, 4], "data_type": "int32",
 "chunk_grid": {"name": "regular_bounded",
   "configuration": {"chunk_shape": [4, 4], "origin": [0, 0], "lower_bound": [-3, 0]}},
 "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
 "fill_value": 0,
 "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
            {"name": "zstd", "configuration": {"level": 1, "checksum": false}}],
 "attributes": {"written_by": "holdout"}
}"#;

/// The chunk files stored next to it.
#[cfg(feature = "regular-bounded")]
const RB_PREPENDED_2D_FILES: [&str; 3] = ["c/-1/0", "c/0/0", "c/1/0"];

/// `extensions/rb_3d/zarr.json`: 3-d, every axis shifted.
const RB_3D: &str = r#"{
 "zarr_format": 3, "node_type": "array", "shape": [7, 6, 5], "data_type": "uint16",
 "chunk_grid": {"name": "regular_bounded",
   "configuration": {"chunk_shape": [3, 4, 2], "origin": [0, 0, 0], "lower_bound": [-4, -1, -7]}},
 "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
 "fill_value": 0,
 "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
            {"name": "zstd", "configuration": {"level": 1, "checksum": false}}],
 "attributes": {"written_by": "holdout"}
}"#;

/// The 27 chunk files stored next to it.
#[cfg(feature = "regular-bounded")]
const RB_3D_FILES: [&str; 27] = [
    "c/-2/0/-2",
    "c/-2/0/-3",
    "c/-2/0/-4",
    "c/-2/-1/-2",
    "c/-2/-1/-3",
    "c/-2/-1/-4",
    "c/-2/1/-2",
    "c/-2/1/-3",
    "c/-2/1/-4",
    "c/0/0/-2",
    "c/0/0/-3",
    "c/0/0/-4",
    "c/0/-1/-2",
    "c/0/-1/-3",
    "c/0/-1/-4",
    "c/0/1/-2",
    "c/0/1/-3",
    "c/0/1/-4",
    "c/-1/0/-2",
    "c/-1/0/-3",
    "c/-1/0/-4",
    "c/-1/-1/-2",
    "c/-1/-1/-3",
    "c/-1/-1/-4",
    "c/-1/1/-2",
    "c/-1/1/-3",
    "c/-1/1/-4",
];

#[test]
fn reject_chunk_rank_is_refused() {
    let err = open(REJECT_CHUNK_RANK).unwrap_err();
    assert!(
        matches!(
            err,
            GridError::DimensionMismatch {
                what: "chunk_shape",
                expected: 2,
                got: 1
            }
        ),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "chunk_shape has 1 dimensions but the array has 2"
    );
}

#[test]
fn reject_zero_chunk_is_refused() {
    let err = open(REJECT_ZERO_CHUNK).unwrap_err();
    assert!(
        matches!(err, GridError::Meta(MetaError::ConfigurationShape { .. })),
        "{err}"
    );
    assert!(
        zarr_testkit::report(&err).contains("chunk_shape[0] must be a positive integer, got 0"),
        "{err}"
    );
}

#[test]
fn must_understand_false_on_a_grid_is_refused() {
    let err = open(RBX_MUST_UNDERSTAND_FALSE).unwrap_err();
    assert!(
        matches!(
            err,
            GridError::Meta(MetaError::MustUnderstandNotAllowed { .. })
        ),
        "{err}"
    );
    assert!(
        zarr_testkit::report(&err).contains("regular_bounded"),
        "{err}"
    );
}

#[cfg(feature = "regular-bounded")]
#[test]
fn rb_examples_give_their_stored_keys() {
    for (doc, files, shape) in [
        (RB_PREPENDED_2D, &RB_PREPENDED_2D_FILES[..], vec![9, 4]),
        (RB_3D, &RB_3D_FILES[..], vec![7, 6, 5]),
    ] {
        let (grid, keys) = open(doc).unwrap();
        assert_eq!(grid.name(), "regular_bounded");
        assert_eq!(grid.shape(), &shape[..]);
        let expected: std::collections::BTreeSet<String> =
            files.iter().map(|s| s.to_string()).collect();
        assert_eq!(all_keys(grid.as_ref(), keys.as_ref()), expected);
        for key in files {
            let chunk = keys.decode(key, shape.len()).unwrap();
            assert!(grid.contains_chunk(&chunk), "{key}");
            assert_eq!(keys.encode(&chunk), *key);
        }
    }
    // rb_3d: g0 = floor(L / c) and shift = L mod c on every axis
    let (grid, _) = open(RB_3D).unwrap();
    assert_eq!(grid.domain(), vec![(-4, 3), (-1, 5), (-7, -2)]);
    assert_eq!(grid.grid_range(), vec![-2..1, -1..2, -4..-1]);
    assert_eq!(grid.buffer_offset(&[-2, -1, -4]), vec![2, 3, 1]);
    assert_eq!(grid.buffer_offset(&[-1, 0, -3]), vec![0, 0, 0]);
    assert_eq!(
        grid.chunk_of(&[0, 0, 0]).unwrap(),
        (vec![-2, -1, -4], vec![2, 3, 1])
    );
    assert_eq!(
        grid.chunk_of(&[6, 5, 4]).unwrap(),
        (vec![0, 1, -2], vec![2, 0, 1])
    );
}

#[cfg(not(feature = "regular-bounded"))]
#[test]
fn rb_examples_name_the_missing_feature() {
    for doc in [RB_PREPENDED_2D, RB_3D] {
        let err = zarr_testkit::report(&open(doc).unwrap_err());
        assert_eq!(
            err,
            "unsupported chunk grid \"regular_bounded\" (enable cargo feature \"regular-bounded\")"
        );
    }
}

#[test]
fn a_registry_without_regular_bounded_refuses_it_by_name() {
    let mut core = default_registry();
    core.remove("regular_bounded");
    let meta = ArrayMetadata::from_slice(RB_PREPENDED_2D.as_bytes()).unwrap();
    let err = build_grid(&core, &meta.chunk_grid, &meta.shape).unwrap_err();
    assert!(
        zarr_testkit::report(&err).contains("regular_bounded"),
        "{err}"
    );
    // never read as the zarrs crate's unrelated grid, nor as regular
    let zarrs: ExtensionDef = serde_json::from_str(
        r#"{"name": "zarrs.regular_bounded", "configuration": {"chunk_shape": [4, 4]}}"#,
    )
    .unwrap();
    let err = build_grid(&default_registry(), &zarrs, &[9, 4]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown chunk grid \"zarrs.regular_bounded\""
    );
}

#[cfg(feature = "regular-bounded")]
#[test]
fn spec_worked_example() {
    use zarr_grid::geometry::Region;

    // z = create(shape=(6, 4), chunks=(4, 4)); z.prepend(full((3, 4), 2), axis=0)
    let regular = ArrayMetadata::from_slice(
        br#"{"zarr_format": 3, "node_type": "array", "shape": [6, 4], "data_type": "int32",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 4]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}"#,
    )
    .unwrap();
    let old = build_grid(&default_registry(), &regular.chunk_grid, &regular.shape).unwrap();
    let (config, shape) = zarr_grid::prepend(&regular.chunk_grid, &regular.shape, 0, 3).unwrap();
    assert_eq!(shape, vec![9, 4]);
    let def = config.to_def();
    assert_eq!(
        serde_json::to_value(&def).unwrap(),
        serde_json::json!({"name": "regular_bounded", "configuration":
            {"chunk_shape": [4, 4], "origin": [0, 0], "lower_bound": [-3, 0]}})
    );
    let grid = build_grid(&default_registry(), &def, &shape).unwrap();
    let keys = build_key_encoding(
        &default_key_encoding_registry(),
        &regular.chunk_key_encoding,
    )
    .unwrap();
    assert_eq!(grid.domain(), vec![(-3, 6), (0, 4)]);
    let listed: Vec<String> = grid.chunk_indices().map(|g| keys.encode(&g)).collect();
    assert_eq!(listed, ["c/-1/0", "c/0/0", "c/1/0"]);
    // position 0 lies at offset 1 of chunk -1; the first chunk is shifted by 1, the rest not
    assert_eq!(grid.chunk_of(&[0, 0]).unwrap(), (vec![-1, 0], vec![1, 0]));
    assert_eq!(grid.buffer_offset(&[-1, 0]), vec![1, 0]);
    assert_eq!(grid.buffer_offset(&[0, 0]), vec![0, 0]);
    assert_eq!(grid.buffer_offset(&[1, 0]), vec![0, 0]);
    // c/0/0 and c/1/0 are unchanged: same buffer layout, positions moved by 3
    for g in old.chunk_indices() {
        let (a, b) = (old.chunk_part(&g).unwrap(), grid.chunk_part(&g).unwrap());
        assert_eq!(a.in_chunk, b.in_chunk);
        assert_eq!(a.in_region.start[0] + 3, b.in_region.start[0]);
    }
    // z[0:3] is the new chunk's rows 1..4
    let parts: Vec<_> = grid
        .chunks_in_region(&Region::new(vec![0, 0], vec![3, 4]).unwrap())
        .unwrap()
        .collect();
    assert_eq!(parts.len(), 1);
    assert_eq!(parts[0].chunk, vec![-1, 0]);
    assert_eq!(
        parts[0].in_chunk,
        Region::new(vec![1, 0], vec![3, 4]).unwrap()
    );
}

#[cfg(feature = "regular-bounded")]
#[test]
fn prepending_10_to_a_128_long_axis() {
    let regular: ExtensionDef =
        serde_json::from_str(r#"{"name": "regular", "configuration": {"chunk_shape": [64]}}"#)
            .unwrap();
    let (config, shape) = zarr_grid::prepend(&regular, &[128], 0, 10).unwrap();
    let grid = build_grid(&default_registry(), &config.to_def(), &shape).unwrap();
    let keys = build_key_encoding(
        &default_key_encoding_registry(),
        &serde_json::from_str(r#"{"name": "default"}"#).unwrap(),
    )
    .unwrap();
    let listed: Vec<String> = grid.chunk_indices().map(|g| keys.encode(&g)).collect();
    assert_eq!(listed, ["c/-1", "c/0", "c/1"]);
    assert_eq!(grid.buffer_offset(&[-1]), vec![54]);
    assert_eq!(grid.chunk_of(&[0]).unwrap(), (vec![-1], vec![54]));
    assert_eq!(grid.chunk_of(&[9]).unwrap(), (vec![-1], vec![63]));
    assert_eq!(grid.chunk_of(&[10]).unwrap(), (vec![0], vec![0]));
    // a chunk-aligned prepend of 54 more touches no existing chunk's layout
    let (config, shape) = zarr_grid::prepend(&config.to_def(), &shape, 0, 54).unwrap();
    let grid = build_grid(&default_registry(), &config.to_def(), &shape).unwrap();
    assert_eq!(grid.grid_range(), vec![-1..2]);
    assert_eq!(grid.buffer_offset(&[-1]), vec![0]);
}

#[test]
fn conformance_key_fixtures() {
    // the stored chunk files of v3/keys_* (shape [10, 9], chunks [4, 4])
    for (encoding, first, last) in [
        (
            r#"{"name": "default", "configuration": {"separator": "/"}}"#,
            "c/0/0",
            "c/2/2",
        ),
        (
            r#"{"name": "default", "configuration": {"separator": "."}}"#,
            "c.0.0",
            "c.2.2",
        ),
        (
            r#"{"name": "v2", "configuration": {"separator": "."}}"#,
            "0.0",
            "2.2",
        ),
        (
            r#"{"name": "v2", "configuration": {"separator": "/"}}"#,
            "0/0",
            "2/2",
        ),
    ] {
        let doc = format!(
            r#"{{"zarr_format": 3, "node_type": "array", "shape": [10, 9], "data_type": "int32",
            "chunk_grid": {{"name": "regular", "configuration": {{"chunk_shape": [4, 4]}}}},
            "chunk_key_encoding": {encoding}, "fill_value": 0,
            "codecs": [{{"name": "bytes"}}]}}"#
        );
        let (grid, keys) = open(&doc).unwrap();
        let listed: Vec<String> = grid.chunk_indices().map(|g| keys.encode(&g)).collect();
        assert_eq!(listed.len(), 9);
        assert_eq!((listed[0].as_str(), listed[8].as_str()), (first, last));
    }
    // scalar_0d: shape [], chunk_shape [], its one chunk is "c"
    let (grid, keys) = open(
        r#"{"zarr_format": 3, "node_type": "array", "shape": [], "data_type": "int32",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": []}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0, "codecs": [{"name": "bytes"}]}"#,
    )
    .unwrap();
    let listed: Vec<String> = grid.chunk_indices().map(|g| keys.encode(&g)).collect();
    assert_eq!(listed, ["c"]);
}
