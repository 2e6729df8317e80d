//! Data types beyond the core ones through the typed API: datetimes and timedeltas are read
//! and written as `i64` counts of their scale.

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
            .create(store.clone(), "b")
            .unwrap_err();
        assert!(
            zarr_array::report(&err).contains("takes fixed-size elements"),
            "{}",
            zarr_array::report(&err)
        );
    }
}
