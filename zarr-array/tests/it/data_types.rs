//! Data types beyond the core ones through the typed API: datetimes and timedeltas are read
//! and written as `i64` counts of their scale; `string` and `variable_length_bytes` arrays
//! through `read_region_vlen` / `write_region_vlen`.
// The codecs (cargo features) these tests use; `scripts/check-features` builds them without.
#![cfg(feature = "zstd")]

use std::sync::Arc;

use serde_json::json;
use zarr_array::ndarray::{ArrayD, IxDyn};
use zarr_array::zarr_codecs::bytes::{BytesConfig, Endian};
use zarr_array::zarr_meta::data_type::{TimeScale, TimeUnit};
use zarr_array::zarr_store::{MemoryStore, Store};
use zarr_array::{Array, ArrayBuilder, ArrayError, DataType, Region};

#[test]
fn datetimes_read_and_write_as_i64() {
    let store = Arc::new(MemoryStore::new());
    let t = DataType::DateTime64(TimeScale::try_new(TimeUnit::Millisecond, 10).unwrap());
    let mut a = ArrayBuilder::new(vec![5], t)
        .chunk_shape(vec![2])
        .create(store.clone(), "t")
        .unwrap();
    // zarr-python's document: the data type as an object, NaT (int64 min) as the default fill
    let doc: serde_json::Value =
        serde_json::from_slice(&store.get("t/zarr.json").unwrap().unwrap()).unwrap();
    assert_eq!(
        doc["data_type"],
        json!({"name": "numpy.datetime64", "configuration": {"unit": "ms", "scale_factor": 10}})
    );
    assert_eq!(doc["fill_value"], json!(i64::MIN));

    let data = ArrayD::from_shape_vec(IxDyn(&[2]), vec![160_000_000_000i64, -1]).unwrap();
    a.write_region(&Region::new(vec![1], vec![2]).unwrap(), data.view())
        .unwrap();
    let back = a.read_region::<i64>(&Region::whole(&[5])).unwrap();
    assert_eq!(
        back.iter().copied().collect::<Vec<_>>(),
        [i64::MIN, 160_000_000_000, -1, i64::MIN, i64::MIN]
    );
    // the grow path checks the element type the same way
    let more = ArrayD::from_shape_vec(IxDyn(&[1]), vec![7i64]).unwrap();
    a.append(more.view(), 0).unwrap();
    assert_eq!(a.shape(), [6]);
    assert_eq!(a.read_region::<i64>(&Region::whole(&[6])).unwrap()[5], 7);

    // any other element type is refused, naming the type to read it as
    let err = a.read_region::<f64>(&Region::whole(&[6])).unwrap_err();
    assert!(matches!(err, ArrayError::DataTypeMismatch { .. }));
    assert_eq!(
        err.to_string(),
        "the array holds numpy.datetime64[10ms], not f64 (read it as i64)"
    );
    let err = a.append(more.mapv(|v| v as u64).view(), 0).unwrap_err();
    assert!(matches!(err, ArrayError::DataTypeMismatch { .. }));

    // reopened from the store: the same data type
    let again = Array::open(store, "t").unwrap();
    assert_eq!(again.data_type(), t);
}

#[test]
fn timedeltas_big_endian() {
    let store = Arc::new(MemoryStore::new());
    let t = DataType::TimeDelta64(TimeScale::of(TimeUnit::Second));
    let a = ArrayBuilder::new(vec![3], t)
        .chunk_shape(vec![3])
        .serializer(BytesConfig {
            endian: Some(Endian::Big),
        })
        .compressors(Vec::<zarr_array::ExtensionDef>::new())
        .create(store.clone(), "d")
        .unwrap();
    let data = ArrayD::from_shape_vec(IxDyn(&[3]), vec![1i64, -2, i64::MIN]).unwrap();
    a.write_region(&Region::whole(&[3]), data.view()).unwrap();
    let stored = store.get("d/c/0").unwrap().unwrap();
    let want: Vec<u8> = [1i64, -2, i64::MIN]
        .iter()
        .flat_map(|v| v.to_be_bytes())
        .collect();
    assert_eq!(stored, want);
    assert_eq!(a.read_region::<i64>(&Region::whole(&[3])).unwrap(), data);
}

#[test]
fn variable_size_types_are_refused_by_the_fixed_size_codecs() {
    let store = Arc::new(MemoryStore::new());
    let doc = json!({
        "zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "string",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": "",
        "codecs": [{"name": "bytes"}]
    });
    store
        .set("s/zarr.json", &serde_json::to_vec(&doc).unwrap())
        .unwrap();
    let err = Array::open(store.clone(), "s").unwrap_err();
    assert!(
        zarr_array::report(&err).contains(
            "codec \"bytes\" takes fixed-size elements, not the variable-size elements of data type string"
        ),
        "{}",
        zarr_array::report(&err)
    );
    for t in [DataType::String, DataType::Bytes] {
        let err = ArrayBuilder::new(vec![4], t)
            .chunk_shape(vec![2])
            .serializer(BytesConfig { endian: None })
            .create(store.clone(), "b")
            .unwrap_err();
        assert!(
            zarr_array::report(&err).contains("takes fixed-size elements"),
            "{}",
            zarr_array::report(&err)
        );
    }
}

#[cfg(feature = "vlen")]
fn strings(items: &[&str], shape: &[usize]) -> ArrayD<String> {
    ArrayD::from_shape_vec(IxDyn(shape), items.iter().map(|s| s.to_string()).collect()).unwrap()
}

#[cfg(feature = "vlen")]
fn vlen_array(store: Arc<MemoryStore>, t: DataType, codec: &str, fill: serde_json::Value) -> Array {
    ArrayBuilder::new(vec![5, 3], t)
        .chunk_shape(vec![2, 2])
        .serializer(zarr_array::ExtensionDef::with_configuration(
            codec,
            Default::default(),
        ))
        .fill_value_json(&fill)
        .unwrap()
        .create(store, "v")
        .unwrap()
}

#[cfg(feature = "vlen")]
#[test]
fn strings_round_trip_with_padded_edge_chunks() {
    let store = Arc::new(MemoryStore::new());
    let a = vlen_array(store.clone(), DataType::String, "vlen-utf8", json!("·"));
    let doc: serde_json::Value =
        serde_json::from_slice(&store.get("v/zarr.json").unwrap().unwrap()).unwrap();
    assert_eq!(doc["data_type"], "string");
    assert_eq!(doc["fill_value"], "·");
    assert_eq!(
        doc["codecs"][0],
        json!({"name": "vlen-utf8", "configuration": {}})
    );
    // a region over four chunks, two of them edge chunks, none whole
    let region = Region::new(vec![1, 1], vec![4, 2]).unwrap();
    let data = strings(
        &["a", "", "héllo", "中", "\u{1F600}", "x y", "\"", "z"],
        &[4, 2],
    );
    a.write_region_vlen(&region, data.view()).unwrap();
    assert_eq!(a.read_region_vlen::<String>(&region).unwrap(), data);
    let all = a
        .read_region_vlen::<String>(&Region::whole(&[5, 3]))
        .unwrap();
    assert_eq!(all[[0, 0]], "·");
    assert_eq!(all[[1, 1]], "a");
    assert_eq!(all[[4, 2]], "z");
    // the edge chunk (2, 1) (array rows 4.., columns 2..) holds the full chunk shape,
    // padded with the fill value
    let stored = store.get("v/c/2/1").unwrap().unwrap();
    let chain = a.codecs();
    let mut chunk = zarr_codecs::vlen::VlenChunk::default();
    chain.decode_into(&stored, &mut chunk).unwrap();
    assert_eq!(chunk.len(), 4);
    assert_eq!(chunk.to_strings("vlen-utf8").unwrap(), ["z", "·", "·", "·"]);
    // writing the fill value back everywhere deletes the chunks
    let fill = ArrayD::from_elem(IxDyn(&[5, 3]), "·".to_string());
    a.write_region_vlen(&Region::whole(&[5, 3]), fill.view())
        .unwrap();
    assert!(a.stored_chunks().unwrap().is_empty());
}

#[cfg(feature = "vlen")]
#[test]
fn byte_strings_round_trip() {
    let store = Arc::new(MemoryStore::new());
    let a = vlen_array(store, DataType::Bytes, "vlen-bytes", json!("AHo="));
    let items: Vec<Vec<u8>> = vec![vec![0, 255], vec![], b"abc".to_vec()];
    let data = ArrayD::from_shape_vec(IxDyn(&[1, 3]), items).unwrap();
    let region = Region::new(vec![4, 0], vec![1, 3]).unwrap();
    a.write_region_vlen(&region, data.view()).unwrap();
    assert_eq!(a.read_region_vlen::<Vec<u8>>(&region).unwrap(), data);
    let corner = a
        .read_region_vlen::<Vec<u8>>(&Region::new(vec![0, 0], vec![1, 1]).unwrap())
        .unwrap();
    assert_eq!(corner[[0, 0]], [0, b'z']);
}

#[cfg(feature = "vlen")]
#[test]
fn the_other_apis_refuse_variable_size_arrays() {
    let store = Arc::new(MemoryStore::new());
    let a = vlen_array(store.clone(), DataType::String, "vlen-utf8", json!(""));
    let whole = Region::whole(&[5, 3]);
    let err = a.read_region_bytes(&whole).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the array holds string, whose elements have no fixed size (read and write it with read_region_vlen and write_region_vlen)"
    );
    assert!(matches!(
        a.write_region_bytes(&whole, &[]).unwrap_err(),
        ArrayError::VariableSizeElements { .. }
    ));
    assert!(matches!(
        a.read_selection_bytes(&zarr_array::Selection::all())
            .unwrap_err(),
        ArrayError::VariableSizeElements { .. }
    ));
    let err = a.read_region::<i32>(&whole).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the array holds string, not i32 (read it as String, with read_region_vlen)"
    );
    let err = a.read_region_vlen::<Vec<u8>>(&whole).unwrap_err();
    assert!(matches!(err, ArrayError::DataTypeMismatch { .. }), "{err}");
    let wrong = strings(&["a"], &[1, 1]);
    let err = a.write_region_vlen(&whole, wrong.view()).unwrap_err();
    assert!(matches!(err, ArrayError::ShapeMismatch { .. }), "{err}");
    // a fixed-size array refuses the vlen API
    let ints = ArrayBuilder::new(vec![2], DataType::Int32)
        .chunk_shape(vec![2])
        .create(store, "i")
        .unwrap();
    assert!(matches!(
        ints.read_region_vlen::<String>(&Region::whole(&[2]))
            .unwrap_err(),
        ArrayError::DataTypeMismatch { .. }
    ));
}

#[cfg(feature = "vlen")]
#[test]
fn corrupt_string_chunks_are_errors() {
    let store = Arc::new(MemoryStore::new());
    let a = vlen_array(store.clone(), DataType::String, "vlen-utf8", json!(""));
    let data = strings(&["ab", "c", "", "d"], &[2, 2]);
    a.write_region_vlen(&Region::new(vec![0, 0], vec![2, 2]).unwrap(), data.view())
        .unwrap();
    let good = store.get("v/c/0/0").unwrap().unwrap();
    let whole = Region::whole(&[5, 3]);
    let read = |bytes: &[u8]| {
        store.set("v/c/0/0", bytes).unwrap();
        a.read_region_vlen::<String>(&whole)
    };
    assert!(read(&good).is_ok());
    for n in 0..good.len() {
        let err = read(&good[..n]).unwrap_err();
        assert!(
            zarr_array::report(&err).starts_with("v/c/0/0"),
            "{n}: {err}"
        );
    }
    for i in 0..good.len() {
        for b in [0u8, 0x80, 0xff] {
            let mut bad = good.clone();
            bad[i] = b;
            let _ = read(&bad);
            // a partial write reads the chunk first, and fails the same way
            let one = strings(&["q"], &[1, 1]);
            let _ = a.write_region_vlen(&Region::new(vec![0, 0], vec![1, 1]).unwrap(), one.view());
        }
    }
}

#[cfg(all(feature = "vlen", feature = "sharding"))]
#[test]
fn sharded_strings_round_trip() {
    let store = Arc::new(MemoryStore::new());
    let a = ArrayBuilder::new(vec![5, 7], DataType::String)
        .chunk_shape(vec![2, 2])
        .shards(vec![4, 4])
        .serializer(zarr_array::ExtensionDef::with_configuration(
            "vlen-utf8",
            Default::default(),
        ))
        .create(store.clone(), "s")
        .unwrap();
    let whole = Region::whole(&[5, 7]);
    let items: Vec<String> = (0..35).map(|i| format!("{i}é")).collect();
    let data = ArrayD::from_shape_vec(IxDyn(&[5, 7]), items).unwrap();
    a.write_region_vlen(&whole, data.view()).unwrap();
    assert_eq!(a.read_region_vlen::<String>(&whole).unwrap(), data);
    // a part of one shard: read, changed and written back whole
    let part = Region::new(vec![1, 2], vec![2, 3]).unwrap();
    let new = ArrayD::from_elem(IxDyn(&[2, 3]), String::new());
    a.write_region_vlen(&part, new.view()).unwrap();
    let back = a.read_region_vlen::<String>(&whole).unwrap();
    assert_eq!(back[[1, 2]], "");
    assert_eq!(back[[0, 0]], "0é");
    assert_eq!(back[[4, 6]], "34é");
    assert_eq!(a.stored_chunks().unwrap().len(), 4);
}

#[cfg(all(feature = "vlen", feature = "sharding"))]
#[test]
fn string_shards_read_in_part_fetch_only_the_inner_chunks_needed() {
    use zarr_array::ndarray::s;
    use zarr_array::zarr_store::testing::CountingStore;
    let store = Arc::new(CountingStore::new(MemoryStore::new()));
    let a = ArrayBuilder::new(vec![8, 12], DataType::String)
        .chunk_shape(vec![2, 2])
        .shards(vec![4, 4])
        .serializer(zarr_array::ExtensionDef::with_configuration(
            "vlen-utf8",
            Default::default(),
        ))
        .fill_value_json(&json!("·"))
        .unwrap()
        .create(store.clone(), "s")
        .unwrap();
    // columns 0..8 written (shards of columns 8..12 missing), then the inner chunk of rows
    // 2..4, columns 2..4 set back to the fill value, so that the shard leaves it out
    let cell = |i: usize, j: usize| {
        if j < 8 {
            format!("{i}é{j}")
        } else {
            "·".into()
        }
    };
    let mut want = ArrayD::from_shape_fn(IxDyn(&[8, 12]), |ix| cell(ix[0], ix[1]));
    let written = Region::new(vec![0, 0], vec![8, 8]).unwrap();
    let block = want.slice(s![0..8, 0..8]).to_owned().into_dyn();
    a.write_region_vlen(&written, block.view()).unwrap();
    let hole = Region::new(vec![2, 2], vec![2, 2]).unwrap();
    let fill = ArrayD::from_elem(IxDyn(&[2, 2]), "·".to_string());
    a.write_region_vlen(&hole, fill.view()).unwrap();
    want.slice_mut(s![2..4, 2..4]).fill("·".into());
    let region = |r: [u64; 4]| Region::new(vec![r[0], r[1]], vec![r[2], r[3]]).unwrap();
    let expect = |r: [u64; 4]| {
        let [i, j, h, w] = r.map(|v| v as usize);
        want.slice(s![i..i + h, j..j + w]).to_owned().into_dyn()
    };
    for (r, requests) in [
        // one shard in part: the index, then its inner chunks in one request (the index is
        // kept: `Array::with_index_cache`, on by default for a sharded array on a store
        // whose reads are not cheap, as this counting memory store's)
        ([1, 1, 2, 2], 2),
        // the missing inner chunk and its neighbours, of the same shard: its index is kept,
        // so only the inner chunks (was 2 before the index cache)
        ([2, 1, 2, 3], 1),
        // four shards in part; the part of shard (0, 0) is the missing inner chunk alone, and
        // its index is kept, so that shard costs nothing; the other three cost their index
        // and their inner chunks (was 7 before the index cache)
        ([2, 2, 4, 4], 6),
        // a shard that is not stored: the index request finds nothing
        ([1, 9, 2, 2], 1),
    ] {
        store.reset();
        let got = a.read_region_vlen::<String>(&region(r)).unwrap();
        assert_eq!(got, expect(r), "{r:?}");
        let c = store.counts();
        assert_eq!((c.get, c.get_ranges), (0, requests), "{r:?}: {c:?}");
    }
    // whole shards are one get each; every region agrees with the whole array
    store.reset();
    let back = a.read_region_vlen::<String>(&region([0, 0, 8, 8])).unwrap();
    assert_eq!(back, expect([0, 0, 8, 8]));
    assert_eq!((store.counts().get, store.counts().get_ranges), (4, 0));
    for i in 0..7 {
        for j in 0..11 {
            let r = [i, j, 2, 2];
            assert_eq!(a.read_region_vlen::<String>(&region(r)).unwrap(), expect(r));
        }
    }
    // a corrupt inner chunk is an error naming the shard, not a panic
    let shard = store.get("s/c/0/0").unwrap().unwrap();
    let mut bad = shard.clone();
    bad[..8].copy_from_slice(&[0xff; 8]);
    store.set("s/c/0/0", &bad).unwrap();
    match a.read_region_vlen::<String>(&region([0, 0, 1, 1])) {
        Err(ArrayError::Codec { context, .. }) => assert_eq!(context, "s/c/0/0"),
        other => panic!("expected a codec error, got {other:?}"),
    }
}

#[cfg(feature = "vlen")]
#[test]
fn strings_append_and_prepend() {
    let store = Arc::new(MemoryStore::new());
    let mut a = vlen_array(store.clone(), DataType::String, "vlen-utf8", json!("·"));
    let first = strings(&["a", "b", "c", "d", "e", "f"], &[2, 3]);
    a.write_region_vlen(&Region::new(vec![0, 0], vec![2, 3]).unwrap(), first.view())
        .unwrap();
    // three rows after the five: across the edge chunk and into new ones
    let after = strings(&["g", "h", "i", "j", "k", "l", "m", "n", "é"], &[3, 3]);
    a.append_vlen(after.view(), 0).unwrap();
    assert_eq!(a.shape(), &[8, 3]);
    // one row in front
    let before = strings(&["x", "", "z"], &[1, 3]);
    a.prepend_vlen(before.view(), 0).unwrap();
    assert_eq!(a.shape(), &[9, 3]);
    // reopened from the store, the same array
    let a = Array::open(store, "v").unwrap();
    let all = a
        .read_region_vlen::<String>(&Region::whole(&[9, 3]))
        .unwrap();
    let mut want = vec!["x", "", "z", "a", "b", "c", "d", "e", "f"];
    want.extend(["·"; 9]);
    want.extend(["g", "h", "i", "j", "k", "l", "m", "n", "é"]);
    assert_eq!(all, strings(&want, &[9, 3]));
    // a wrong shape or type changes nothing
    let mut a = a;
    assert!(matches!(
        a.append_vlen(strings(&["q"], &[1, 1]).view(), 0),
        Err(ArrayError::ShapeMismatch { .. })
    ));
    let bytes = ArrayD::from_shape_vec(IxDyn(&[1, 3]), vec![vec![1u8]; 3]).unwrap();
    assert!(matches!(
        a.append_vlen(bytes.view(), 0),
        Err(ArrayError::DataTypeMismatch { .. })
    ));
    assert_eq!(a.shape(), &[9, 3]);
}

#[cfg(feature = "vlen")]
#[test]
fn string_selections_agree_with_the_whole_array() {
    use zarr_array::selection::{AxisSelection, BasicItem, Selection, Slice};
    use zarr_array::zarr_store::testing::CountingStore;
    let store = Arc::new(MemoryStore::new());
    let a = vlen_array(store.clone(), DataType::String, "vlen-utf8", json!("·"));
    // rows 0..2 and 4 written; rows 2..4 (chunk row 1) stay missing, the fill value
    let cell = |i: usize, j: usize| format!("{i}é{j}");
    for rows in [0..2, 4..5] {
        let start = rows.start;
        let items: Vec<String> = rows
            .clone()
            .flat_map(|i| (0..3).map(move |j| cell(i, j)))
            .collect();
        let data = ArrayD::from_shape_vec(IxDyn(&[rows.len(), 3]), items).unwrap();
        let region = Region::new(vec![start as u64, 0], vec![rows.len() as u64, 3]).unwrap();
        a.write_region_vlen(&region, data.view()).unwrap();
    }
    let whole = a
        .read_region_vlen::<String>(&Region::whole(&[5, 3]))
        .unwrap();
    assert_eq!(whole[[1, 2]], cell(1, 2));
    assert_eq!(whole[[3, 0]], "·");
    let at = |i: usize, j: usize| whole[[i, j]].clone();
    let cases: Vec<(Selection, ArrayD<String>)> = vec![
        (
            Selection::Basic(vec![
                BasicItem::Slice(Slice::with_step(0, 5, 2)),
                BasicItem::Index(1),
            ]),
            ArrayD::from_shape_vec(IxDyn(&[3]), vec![at(0, 1), at(2, 1), at(4, 1)]).unwrap(),
        ),
        (
            Selection::Orthogonal(vec![
                AxisSelection::Indices(vec![4, 0, 3]),
                AxisSelection::Mask(vec![true, false, true]),
            ]),
            ArrayD::from_shape_vec(
                IxDyn(&[3, 2]),
                vec![at(4, 0), at(4, 2), at(0, 0), at(0, 2), at(3, 0), at(3, 2)],
            )
            .unwrap(),
        ),
        (
            Selection::Points(vec![vec![4, 2], vec![0, 0], vec![3, 1], vec![0, 0]]),
            ArrayD::from_shape_vec(IxDyn(&[4]), vec![at(4, 2), at(0, 0), at(3, 1), at(0, 0)])
                .unwrap(),
        ),
        (Selection::all(), whole.clone()),
    ];
    for (sel, want) in &cases {
        let got = a.read_selection_vlen::<String>(sel).unwrap();
        assert_eq!(&got, want, "{sel:?}");
        let dims: Vec<u64> = got.shape().iter().map(|&n| n as u64).collect();
        assert_eq!(dims, a.selection_shape(sel).unwrap(), "{sel:?}");
    }
    // through a store that serves many requests at once (an object store), the chunks are
    // fetched by the remote engine (`fetch_each`: a get each, all in flight together), with the
    // same results
    let batched = Arc::new(CountingStore::new(store.clone()).with_fetch_concurrency(64));
    let b = Array::open(batched.clone(), "v").unwrap();
    for (sel, want) in &cases {
        batched.reset();
        assert_eq!(
            &b.read_selection_vlen::<String>(sel).unwrap(),
            want,
            "{sel:?}"
        );
        let c = batched.counts();
        assert_eq!(c.get_many, 0, "{sel:?}: {c:?}");
        assert_eq!(c.total(), c.get, "{sel:?}: only the batch's gets: {c:?}");
    }
    batched.reset();
    let back = b.read_region_vlen::<String>(&Region::whole(&[5, 3]));
    assert_eq!(back.unwrap(), whole);
    let c = batched.counts();
    assert_eq!((c.get_many, c.get, c.total()), (0, 6, 6), "{c:?}");
    // a selection out of bounds and the wrong type are errors
    assert!(a
        .read_selection_vlen::<String>(&Selection::Points(vec![vec![5, 0]]))
        .is_err());
    assert!(matches!(
        a.read_selection_vlen::<Vec<u8>>(&Selection::all()),
        Err(ArrayError::DataTypeMismatch { .. })
    ));
    // a corrupt chunk is an error naming its key, not a panic
    store.set("v/c/0/0", &[9, 9, 9]).unwrap();
    match a.read_selection_vlen::<String>(&Selection::Points(vec![vec![1, 1]])) {
        Err(ArrayError::Codec { context, .. }) => assert_eq!(context, "v/c/0/0"),
        other => panic!("expected a codec error, got {other:?}"),
    }
}

/// Seeded: 900 random region, orthogonal and point reads of 10 `string` arrays (1 to 3
/// dimensions, plain chunks and shards, some chunks missing) against the array held in memory:
/// the elements of each part read are moved into the result by runs or, out of order (indices
/// in any order, repeats), one by one; both must give every element once, in place.
#[cfg(feature = "vlen")]
#[test]
fn string_reads_agree_with_a_model_in_any_order() {
    use zarr_array::selection::{AxisSelection, Selection};
    let mut rng = zarr_testkit::Rng::new(3701);
    let vlen = zarr_array::ExtensionDef::with_configuration("vlen-utf8", Default::default());
    for case in 0..10 {
        let rank = 1 + case % 3;
        let shape: Vec<u64> = (0..rank).map(|_| rng.range(1..9)).collect();
        let chunks: Vec<u64> = shape.iter().map(|&n| rng.range(1..n + 2)).collect();
        let store = Arc::new(MemoryStore::new());
        let mut builder = ArrayBuilder::new(shape.clone(), DataType::String)
            .serializer(vlen.clone())
            .fill_value_json(&json!("·"))
            .unwrap();
        builder = if case % 2 == 1 {
            let shards: Vec<u64> = chunks.iter().map(|&c| c * rng.range(1..3)).collect();
            builder.chunk_shape(chunks.clone()).shards(shards)
        } else {
            builder.chunk_shape(chunks.clone())
        };
        let a = builder.create(store.clone(), "s").unwrap();
        let dims: Vec<usize> = shape.iter().map(|&n| n as usize).collect();
        let mut model = ArrayD::from_elem(IxDyn(&dims), "·".to_string());
        // a few random blocks written: the chunks no block meets stay missing
        for _ in 0..3 {
            let start: Vec<u64> = shape.iter().map(|&n| rng.below(n)).collect();
            let size: Vec<u64> = start
                .iter()
                .zip(&shape)
                .map(|(&s, &n)| rng.range(1..n - s + 1))
                .collect();
            let region = Region::new(start.clone(), size.clone()).unwrap();
            let udims: Vec<usize> = size.iter().map(|&n| n as usize).collect();
            let block = ArrayD::from_shape_fn(IxDyn(&udims), |_| {
                "é中".repeat(rng.index(3)) + &rng.below(1000).to_string()
            });
            a.write_region_vlen(&region, block.view()).unwrap();
            for (pos, v) in block.indexed_iter() {
                let at: Vec<usize> = (0..rank).map(|d| pos[d] + start[d] as usize).collect();
                model[IxDyn(&at)] = v.clone();
            }
        }
        for _ in 0..30 {
            // a region
            let start: Vec<u64> = shape.iter().map(|&n| rng.below(n)).collect();
            let size: Vec<u64> = start
                .iter()
                .zip(&shape)
                .map(|(&s, &n)| rng.range(0..n - s + 1))
                .collect();
            let region = Region::new(start.clone(), size.clone()).unwrap();
            let got = a.read_region_vlen::<String>(&region).unwrap();
            let udims: Vec<usize> = size.iter().map(|&n| n as usize).collect();
            let want = ArrayD::from_shape_fn(IxDyn(&udims), |pos| {
                let at: Vec<usize> = (0..rank).map(|d| pos[d] + start[d] as usize).collect();
                model[IxDyn(&at)].clone()
            });
            assert_eq!(got, want, "case {case}: {region:?}");
            // indices in any order, repeats allowed, on every axis
            let picks: Vec<Vec<usize>> = dims
                .iter()
                .map(|&n| (0..rng.range(1..6)).map(|_| rng.index(n)).collect())
                .collect();
            let sel = Selection::Orthogonal(
                picks
                    .iter()
                    .map(|p| AxisSelection::Indices(p.iter().map(|&i| i as i64).collect()))
                    .collect(),
            );
            let got = a.read_selection_vlen::<String>(&sel).unwrap();
            let odims: Vec<usize> = picks.iter().map(Vec::len).collect();
            let want = ArrayD::from_shape_fn(IxDyn(&odims), |pos| {
                let at: Vec<usize> = (0..rank).map(|d| picks[d][pos[d]]).collect();
                model[IxDyn(&at)].clone()
            });
            assert_eq!(got, want, "case {case}: {sel:?}");
            // points
            let points: Vec<Vec<i64>> = (0..rng.range(1..12))
                .map(|_| shape.iter().map(|&n| rng.below(n) as i64).collect())
                .collect();
            let sel = Selection::Points(points.clone());
            let got = a.read_selection_vlen::<String>(&sel).unwrap();
            let want: Vec<String> = points
                .iter()
                .map(|p| {
                    let at: Vec<usize> = p.iter().map(|&i| i as usize).collect();
                    model[IxDyn(&at)].clone()
                })
                .collect();
            assert_eq!(
                got.as_slice().unwrap(),
                want.as_slice(),
                "case {case}: {sel:?}"
            );
        }
    }
}

#[cfg(feature = "vlen")]
#[test]
fn string_selection_writes() {
    use zarr_array::selection::{AxisSelection, Selection};
    let store = Arc::new(MemoryStore::new());
    let a = vlen_array(store, DataType::String, "vlen-utf8", json!("·"));
    // orthogonal: rows 4 and 0, columns 0 and 2 (into missing chunks)
    let sel = Selection::Orthogonal(vec![
        AxisSelection::Indices(vec![4, 0]),
        AxisSelection::Mask(vec![true, false, true]),
    ]);
    a.write_selection_vlen(&sel, strings(&["a", "b", "c", "d"], &[2, 2]).view())
        .unwrap();
    // points, one repeated: the last value wins, as NumPy
    let pts = Selection::Points(vec![vec![2, 1], vec![0, 0], vec![2, 1]]);
    a.write_selection_vlen(&pts, strings(&["x", "é", "y"], &[3]).view())
        .unwrap();
    let all = a
        .read_region_vlen::<String>(&Region::whole(&[5, 3]))
        .unwrap();
    let mut want = vec!["·"; 15];
    for (i, j, v) in [
        (4, 0, "a"),
        (4, 2, "b"),
        (0, 0, "é"),
        (0, 2, "d"),
        (2, 1, "y"),
    ] {
        want[i * 3 + j] = v;
    }
    assert_eq!(all, strings(&want, &[5, 3]));
    assert!(matches!(
        a.write_selection_vlen(&pts, strings(&["x"], &[1]).view()),
        Err(ArrayError::ShapeMismatch { .. })
    ));
}

/// The string array of `shape` (values `"{row}.{col}"`, fill `"-"`), in `[2, 2]` chunks or
/// `[4, 2]` shards of them, Zarr v3 or v2, fully written.
#[cfg(all(feature = "vlen", feature = "sharding"))]
fn written_strings(store: Arc<dyn Store>, shape: &[u64], sharded: bool, format: u8) -> Array {
    let mut b = ArrayBuilder::new(shape.to_vec(), DataType::String)
        .chunk_shape(vec![2, 2])
        .fill_value_json(&json!("-"))
        .unwrap()
        .zarr_format(format);
    if sharded {
        b = b.shards(vec![4, 2]);
    }
    let a = b.create(store, "r").unwrap();
    let all = ArrayD::from_shape_fn(IxDyn(&[shape[0] as usize, shape[1] as usize]), |ix| {
        format!("{}.{}", ix[0], ix[1])
    });
    a.write_region_vlen(&Region::whole(shape), all.view())
        .unwrap();
    a
}

/// Issue 38, item 9: resizing a string array to a shape that is not chunk-aligned failed
/// ("decoding into a byte buffer is not available"), sharded ones even when growing. Any
/// shape works now: a kept edge chunk loses its cut elements (reset to fill, so a growth
/// after shows fill there, not the old values), on v3 and v2, chunked and sharded.
#[cfg(all(feature = "vlen", feature = "sharding"))]
#[test]
fn string_arrays_resize_to_any_shape_and_cut_elements_come_back_as_fill() {
    for (sharded, format) in [(false, 3), (true, 3), (false, 2)] {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let mut a = written_strings(store.clone(), &[5, 3], sharded, format);
        let case = format!("sharded {sharded}, v{format}");
        a.resize(&[3, 2])
            .unwrap_or_else(|e| panic!("{case}: {}", zarr_array::report(&e)));
        assert_eq!(a.shape(), [3, 2], "{case}");
        let got: ArrayD<String> = a.read_region_vlen(&Region::whole(&[3, 2])).unwrap();
        let want = ArrayD::from_shape_fn(IxDyn(&[3, 2]), |ix| format!("{}.{}", ix[0], ix[1]));
        assert_eq!(got, want, "{case}");
        a.resize(&[6, 4])
            .unwrap_or_else(|e| panic!("{case}: {}", zarr_array::report(&e)));
        let reopened = Array::open(store.clone(), "r").unwrap();
        assert_eq!(reopened.shape(), [6, 4], "{case}");
        let got: ArrayD<String> = reopened.read_region_vlen(&Region::whole(&[6, 4])).unwrap();
        let want = ArrayD::from_shape_fn(IxDyn(&[6, 4]), |ix| {
            if ix[0] < 3 && ix[1] < 2 {
                format!("{}.{}", ix[0], ix[1])
            } else {
                "-".to_string()
            }
        });
        assert_eq!(got, want, "{case}");
    }
}

/// The same for `variable_length_bytes`, and a shrink to an empty axis and back.
#[cfg(all(feature = "vlen", feature = "sharding"))]
#[test]
fn bytes_arrays_resize_to_any_shape() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut a = ArrayBuilder::new(vec![7], DataType::Bytes)
        .chunk_shape(vec![3])
        .create(store, "b")
        .unwrap();
    let items = ArrayD::from_shape_fn(IxDyn(&[7]), |ix| vec![ix[0] as u8 + 1; ix[0] + 1]);
    a.write_region_vlen(&Region::whole(&[7]), items.view())
        .unwrap();
    a.resize(&[4]).unwrap();
    a.resize(&[0]).unwrap();
    a.resize(&[5]).unwrap();
    let got: ArrayD<Vec<u8>> = a.read_region_vlen(&Region::whole(&[5])).unwrap();
    assert!(got.iter().all(Vec::is_empty), "{got:?}");
    a.write_region_vlen(
        &Region::whole(&[5]),
        items.slice(zarr_array::ndarray::s![..5]).into_dyn(),
    )
    .unwrap();
    a.resize(&[2]).unwrap();
    a.resize(&[4]).unwrap();
    let got: ArrayD<Vec<u8>> = a.read_region_vlen(&Region::whole(&[4])).unwrap();
    assert_eq!(
        got.as_slice().unwrap(),
        [vec![1], vec![2, 2], vec![], vec![]]
    );
}

/// A resize whose work after the new metadata fails (clearing the exposed positions) leaves
/// the handle with the shape the store has: it used to keep its old shape.
#[cfg(all(feature = "vlen", feature = "sharding"))]
#[test]
fn a_resize_failing_after_its_metadata_leaves_the_handle_as_the_store() {
    use zarr_array::zarr_store::testing::{Fault, FaultOp, FaultyStore};
    let faulty = Arc::new(FaultyStore::new(MemoryStore::new()));
    let store: Arc<dyn Store> = faulty.clone();
    let mut a = written_strings(store.clone(), &[5, 3], true, 3);
    // growing lists the stored chunks after the metadata is written: that listing fails
    faulty.set_fault(Some(Fault::from(FaultOp::List, 0)));
    let result = a.resize(&[7, 3]);
    faulty.set_fault(None);
    assert!(result.is_err(), "the listing fault must surface");
    assert_eq!(Array::open(store, "r").unwrap().shape(), [7, 3]);
    assert_eq!(a.shape(), [7, 3], "the handle disagrees with the store");
}

/// Issue 38, item 10: a Zarr v2 `|O` string array of order F (its chunks' elements in F
/// order, as zarr-python 3.1.6 writes them) could not be read ("codec transpose takes
/// fixed-size elements"). It reads and writes now, byte for byte as zarr-python does, and
/// converts to v3 (a `transpose` before `vlen-utf8`).
#[cfg(feature = "vlen")]
#[test]
fn v2_string_arrays_of_order_f_read_and_write_as_zarr_python() {
    let store = Arc::new(MemoryStore::new());
    // exactly what zarr-python 3.1.6 writes for
    // create_array(shape=(2, 3), chunks=(2, 3), dtype=str, zarr_format=2, order="F",
    // compressors=None, fill_value="") and [["a", "bb", "c"], ["dé", "", "f"]]
    let zarray = json!({
        "shape": [2, 3], "chunks": [2, 3], "dtype": "|O", "fill_value": "", "order": "F",
        "filters": [{"id": "vlen-utf8"}], "dimension_separator": ".", "compressor": null,
        "zarr_format": 2
    });
    store
        .set("f/.zarray", &serde_json::to_vec(&zarray).unwrap())
        .unwrap();
    let chunk: &[u8] =
        b"\x06\x00\x00\x00\x01\x00\x00\x00a\x03\x00\x00\x00d\xc3\xa9\x02\x00\x00\x00bb\x00\x00\x00\x00\x01\x00\x00\x00c\x01\x00\x00\x00f";
    store.set("f/0.0", chunk).unwrap();
    let a =
        Array::open(store.clone(), "f").unwrap_or_else(|e| panic!("{}", zarr_array::report(&e)));
    let want = strings(&["a", "bb", "c", "dé", "", "f"], &[2, 3]);
    let got: ArrayD<String> = a.read_region_vlen(&Region::whole(&[2, 3])).unwrap();
    assert_eq!(got, want);
    // a part of the chunk, and a selection
    let got: ArrayD<String> = a
        .read_region_vlen(&Region::new(vec![0, 1], vec![2, 2]).unwrap())
        .unwrap();
    assert_eq!(got, strings(&["bb", "c", "", "f"], &[2, 2]));
    // written back whole: the same bytes; a partial write keeps the F order
    a.write_region_vlen(&Region::whole(&[2, 3]), want.view())
        .unwrap();
    assert_eq!(store.get("f/0.0").unwrap().unwrap(), chunk);
    a.write_region_vlen(
        &Region::new(vec![1, 2], vec![1, 1]).unwrap(),
        strings(&["g"], &[1, 1]).view(),
    )
    .unwrap();
    let changed = store.get("f/0.0").unwrap().unwrap();
    assert!(
        changed.ends_with(b"\x01\x00\x00\x00c\x01\x00\x00\x00g"),
        "{changed:?}"
    );
    let got: ArrayD<String> = a.read_region_vlen(&Region::whole(&[2, 3])).unwrap();
    assert_eq!(got, strings(&["a", "bb", "c", "dé", "", "g"], &[2, 3]));
    // converted to v3: the transpose comes along, the data reads the same
    let v3 = a.to_v3(false).unwrap().array;
    assert_eq!(v3.zarr_format(), 3);
    let got: ArrayD<String> = v3.read_region_vlen(&Region::whole(&[2, 3])).unwrap();
    assert_eq!(got, strings(&["a", "bb", "c", "dé", "", "g"], &[2, 3]));
    // and created by ArrayBuilder with the same .zarray
    let b = ArrayBuilder::new(vec![2, 3], DataType::String)
        .chunk_shape(vec![2, 3])
        .filters([zarr_array::zarr_codecs::transpose::TransposeConfig {
            order: zarr_array::zarr_codecs::transpose::TransposeOrder::Named("F".into()),
        }])
        .zarr_format(2)
        .create(store.clone(), "g")
        .unwrap();
    b.write_region_vlen(&Region::whole(&[2, 3]), want.view())
        .unwrap();
    let written: serde_json::Value =
        serde_json::from_slice(&store.get("g/.zarray").unwrap().unwrap()).unwrap();
    assert_eq!(
        (&written["order"], &written["dtype"]),
        (&json!("F"), &json!("|O"))
    );
    let got: ArrayD<String> = Array::open(store, "g")
        .unwrap()
        .read_region_vlen(&Region::whole(&[2, 3]))
        .unwrap();
    assert_eq!(got, want);
}

/// Copying a string or bytes array into another layout (`Array::copy_to`: `zarr convert`,
/// `to_regular`) refused its variable-size elements; they are copied as elements now, into
/// other chunks, shards, and a v2 array of order F.
#[cfg(all(feature = "vlen", feature = "sharding"))]
#[test]
fn string_arrays_copy_into_another_layout() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let src = written_strings(store.clone(), &[5, 3], false, 3);
    let all: ArrayD<String> = src.read_region_vlen(&Region::whole(&[5, 3])).unwrap();
    let layouts: [(&str, Option<Vec<u64>>, u8); 3] = [
        ("d1", None, 3),
        ("d2", Some(vec![4, 3]), 3),
        ("d3", None, 2),
    ];
    for (path, shards, format) in layouts {
        let mut b = ArrayBuilder::new(vec![5, 3], DataType::String)
            .chunk_shape(if shards.is_some() {
                vec![2, 3]
            } else {
                vec![3, 2]
            })
            .fill_value_json(&json!("-"))
            .unwrap()
            .zarr_format(format);
        if let Some(s) = shards {
            b = b.shards(s);
        }
        if format == 2 {
            b = b.filters([zarr_array::zarr_codecs::transpose::TransposeConfig {
                order: zarr_array::zarr_codecs::transpose::TransposeOrder::Named("F".into()),
            }]);
        }
        let dst = b.create(store.clone(), path).unwrap();
        let written = src
            .copy_to(&dst)
            .unwrap_or_else(|e| panic!("{path}: {}", zarr_array::report(&e)));
        assert!(written > 0, "{path}");
        let got: ArrayD<String> = Array::open(store.clone(), path)
            .unwrap()
            .read_region_vlen(&Region::whole(&[5, 3]))
            .unwrap();
        assert_eq!(got, all, "{path}");
    }
}
