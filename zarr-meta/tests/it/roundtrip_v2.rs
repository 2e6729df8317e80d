//! Property tests: Zarr v2 documents (`.zarray`, `.zattrs`, `.zmetadata`) round-trip through
//! the bytes this crate writes, for every core dtype in both byte orders, every fill value
//! (including `null`) and any numcodecs configuration.

use std::num::NonZeroU64;

use proptest::prelude::*;
use serde_json::{Map, Value};
use zarr_meta::data_type::CORE_DATA_TYPES;
use zarr_meta::numpy::{ByteOrder, NumpyDtype};
use zarr_meta::v2::{
    fill_value_to_json, ArrayMetadataV2, Attributes, CodecV2, ConsolidatedMetadataV2, Order,
    Separator,
};
use zarr_meta::{DataType, FillValue};

fn dtype() -> impl Strategy<Value = NumpyDtype> {
    let t = prop_oneof![
        proptest::sample::select(CORE_DATA_TYPES.to_vec()),
        (1usize..9).prop_map(|n| DataType::from_name(&format!("r{}", n * 8)).unwrap()),
    ];
    (t, any::<bool>()).prop_map(|(data_type, big)| NumpyDtype {
        data_type,
        byte_order: data_type.endian_component_size().map(|_| {
            if big {
                ByteOrder::Big
            } else {
                ByteOrder::Little
            }
        }),
    })
}

/// A fill value of `t`, or `None` (`null`): any bit pattern (bool is 0 or 1).
fn fill(t: DataType) -> impl Strategy<Value = Option<FillValue>> {
    proptest::option::weighted(
        0.9,
        proptest::collection::vec(any::<u8>(), t.size()).prop_map(move |mut b| {
            if t == DataType::Bool {
                b[0] &= 1;
            }
            FillValue::from_ne_bytes(t, b).unwrap()
        }),
    )
}

/// JSON of the kinds a numcodecs configuration holds.
fn config_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        any::<i64>().prop_map(Value::from),
        any::<bool>().prop_map(Value::from),
        "[a-z<>|0-9]{0,6}".prop_map(Value::from),
        (-1e9f64..1e9).prop_map(Value::from),
        Just(Value::Null),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        proptest::collection::vec(inner, 0..3).prop_map(Value::Array)
    })
}

fn codec() -> impl Strategy<Value = CodecV2> {
    (
        "[a-z][a-z0-9_]{0,9}",
        proptest::collection::btree_map("[a-z_]{1,8}", config_value(), 0..4),
    )
        .prop_map(|(id, cfg)| {
            let cfg: Map<String, Value> = cfg.into_iter().filter(|(k, _)| k != "id").collect();
            CodecV2::new(id, cfg)
        })
}

/// Whether the fill value is written as a NaN (`"NaN"`, or a complex part that is one): v2
/// has one spelling for every NaN, so the payload is not kept.
fn written_as_nan(json: &Value) -> bool {
    match json {
        Value::String(s) => s == "NaN",
        Value::Array(parts) => parts.iter().any(written_as_nan),
        _ => false,
    }
}

fn array() -> impl Strategy<Value = ArrayMetadataV2> {
    (dtype(), 0usize..5)
        .prop_flat_map(|(dtype, rank)| {
            (
                Just(dtype),
                proptest::collection::vec(0u64..1 << 40, rank),
                proptest::collection::vec(1u64..1 << 20, rank),
                fill(dtype.data_type),
                any::<bool>(),
                any::<bool>(),
                proptest::option::of(codec()),
                proptest::option::of(proptest::collection::vec(codec(), 1..3)),
            )
        })
        .prop_map(
            |(dtype, shape, chunks, fill, f, slash, compressor, filters)| {
                let chunks = chunks
                    .into_iter()
                    .map(|c| NonZeroU64::new(c).unwrap())
                    .collect();
                let mut m = ArrayMetadataV2::new(shape, chunks, dtype);
                m.fill_value = fill;
                m.order = if f { Order::F } else { Order::C };
                m.dimension_separator = if slash {
                    Separator::Slash
                } else {
                    Separator::Dot
                };
                m.compressor = compressor;
                m.filters = filters;
                m
            },
        )
}

proptest! {
    #[test]
    fn zarray_round_trips(meta in array()) {
        let written = meta.to_vec_pretty();
        let text = String::from_utf8(written.clone()).unwrap();
        let again = ArrayMetadataV2::from_slice(&written).unwrap();
        prop_assert_eq!(again.to_vec_pretty(), written, "{}", text);
        let fill = fill_value_to_json(meta.fill_value.as_ref(), meta.data_type());
        if written_as_nan(&fill) {
            prop_assert_eq!(
                fill_value_to_json(again.fill_value.as_ref(), again.data_type()),
                fill
            );
            let mut again = again;
            again.fill_value.clone_from(&meta.fill_value);
            prop_assert_eq!(again, meta, "{}", text);
        } else {
            prop_assert_eq!(again, meta, "{}", text);
        }
    }

    #[test]
    fn zattrs_and_zmetadata_round_trip(
        metas in proptest::collection::vec(array(), 0..4),
        attrs in proptest::collection::btree_map("[a-zA-Z_ü東]{1,6}", config_value(), 0..4),
    ) {
        let attrs = Attributes(attrs.into_iter().collect());
        let written = attrs.to_vec_pretty();
        prop_assert_eq!(Attributes::from_slice(&written).unwrap(), attrs.clone());

        let mut c = ConsolidatedMetadataV2::default();
        c.set_group("", &Default::default());
        c.set_attributes("", &attrs);
        for (i, m) in metas.iter().enumerate() {
            c.set_array(&format!("g/a{i}"), m);
        }
        let written = c.to_vec();
        let again = ConsolidatedMetadataV2::from_slice(&written).unwrap();
        prop_assert_eq!(again.to_vec(), written);
        prop_assert_eq!(again.attributes("").unwrap().unwrap(), attrs);
        for (i, m) in metas.iter().enumerate() {
            let back = again.array(&format!("g/a{i}")).unwrap().unwrap();
            prop_assert_eq!(back.to_vec_pretty(), m.to_vec_pretty());
        }
    }
}
