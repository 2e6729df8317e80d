//! Property tests: fill values and whole metadata documents round-trip through JSON for
//! every data type (core, raw bits, datetimes and timedeltas of every unit).

use proptest::prelude::*;
use serde_json::{Map, Value};
use zarr_meta::data_type::{TimeScale, TimeUnit, CORE_DATA_TYPES, MAX_SCALE_FACTOR, TIME_UNITS};
use zarr_meta::{ArrayMetadata, DataType, ExtensionDef, FillValue};

fn data_type() -> impl Strategy<Value = DataType> {
    prop_oneof![
        proptest::sample::select(CORE_DATA_TYPES.to_vec()),
        (1usize..5).prop_map(|n| DataType::from_name(&format!("r{}", n * 8)).unwrap()),
        (
            proptest::sample::select(TIME_UNITS.to_vec()),
            1u64..=u64::from(MAX_SCALE_FACTOR),
            any::<bool>(),
        )
            .prop_map(|(unit, n, datetime)| {
                let n = if unit == TimeUnit::Generic { 1 } else { n };
                let scale = TimeScale::try_new(unit, n).unwrap();
                if datetime {
                    DataType::DateTime64(scale)
                } else {
                    DataType::TimeDelta64(scale)
                }
            }),
    ]
}

/// Any bit pattern that is a valid element of `t` (bool is 0 or 1).
fn element(t: DataType) -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(any::<u8>(), t.size()).prop_map(move |mut b| {
        if t == DataType::Bool {
            b[0] &= 1;
        }
        b
    })
}

proptest! {
    #[test]
    fn fill_values_round_trip_bit_exact((t, bytes) in data_type().prop_flat_map(|t| (Just(t), element(t)))) {
        let fill = FillValue::from_ne_bytes(t, bytes.clone()).unwrap();
        let json = fill.to_json(t);
        let text = serde_json::to_string(&json).unwrap();
        let parsed: Value = serde_json::from_str(&text).unwrap();
        let back = FillValue::from_json(&parsed, t).unwrap();
        prop_assert_eq!(back.as_bytes(), &bytes[..], "{} via {}", t, text);
    }

    #[test]
    fn array_metadata_round_trips(
        (t, fill) in data_type().prop_flat_map(|t| (Just(t), element(t))),
        shape in proptest::collection::vec(0u64..1_000_000_000_000, 0..5),
        attrs in proptest::collection::btree_map("[a-z]{1,6}", any::<i32>(), 0..4),
        named in any::<bool>(),
        sep in prop_oneof![Just("/"), Just(".")],
    ) {
        let rank = shape.len();
        let mut grid = Map::new();
        grid.insert("chunk_shape".into(), Value::from(vec![3u64; rank]));
        let mut meta = ArrayMetadata::new(
            shape,
            t,
            ExtensionDef::with_configuration("regular", grid),
            FillValue::from_ne_bytes(t, fill).unwrap(),
            vec![ExtensionDef::new("bytes")],
        );
        meta.chunk_key_encoding.configuration.as_mut().unwrap()
            .insert("separator".into(), Value::from(sep));
        meta.attributes = attrs.into_iter().map(|(k, v)| (k, Value::from(v))).collect();
        if named {
            meta.dimension_names = Some((0..rank).map(|d| (d % 2 == 0).then(|| format!("d{d}"))).collect());
        }
        let bytes = meta.to_vec_pretty();
        let back = ArrayMetadata::from_slice(&bytes).unwrap();
        prop_assert_eq!(&back, &meta);
        prop_assert_eq!(back.to_vec_pretty(), bytes);
    }
}
