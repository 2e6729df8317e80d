//! zarr-codecs' Zarr v2 codec map (`zarr_codecs::v2`) with the numcodecs codecs of this crate:
//! the layouts zarr-python 3.1.6's v2 pipeline runs, and the filters whose byte orders
//! numcodecs changes or reinterprets.

#![cfg(feature = "numcodecs")]

use zarr_codecs::v2::{default_v2_registry, v2_codecs, v3_codecs};
use zarr_codecs::{ChunkRepr, CodecChain, CodecError, EncodeOptions};
use zarr_meta::v2::ArrayMetadataV2;
use zarr_meta::{DataType, ExtensionDef, FillValue};
use zarr_numcodecs::default_registry;

fn meta(doc: &str) -> ArrayMetadataV2 {
    ArrayMetadataV2::from_slice(doc.as_bytes()).unwrap()
}

fn zarray(dtype: &str, order: &str, compressor: &str, filters: &str) -> ArrayMetadataV2 {
    meta(&format!(
        r#"{{"zarr_format": 2, "shape": [20, 13], "chunks": [8, 5], "dtype": "{dtype}",
        "compressor": {compressor}, "fill_value": 0, "order": "{order}",
        "filters": {filters}}}"#
    ))
}

fn names(defs: &[ExtensionDef]) -> Vec<&str> {
    defs.iter().map(|d| d.name.as_str()).collect()
}

#[test]
fn layouts_follow_zarr_pythons_v2_pipeline() {
    let v2 = default_v2_registry();
    let v3 = default_registry();
    let cases = [
        ("<f8", "C", "null", "null", vec!["bytes"]),
        (
            ">i2",
            "F",
            r#"{"id": "zlib", "level": 1}"#,
            "null",
            vec!["transpose", "bytes", "numcodecs.zlib"],
        ),
        (
            "<i4",
            "C",
            r#"{"id": "zlib", "level": 1}"#,
            r#"[{"id": "crc32"}]"#,
            vec!["bytes", "numcodecs.crc32", "numcodecs.zlib"],
        ),
        (
            "<f4",
            "C",
            r#"{"id": "pcodec"}"#,
            r#"[{"id": "bitround", "keepbits": 10}]"#,
            vec!["numcodecs.bitround", "numcodecs.pcodec"],
        ),
        (
            "<i4",
            "C",
            "null",
            r#"[{"id": "delta", "dtype": "<i4", "astype": "|i1"}]"#,
            vec!["numcodecs.delta", "bytes"],
        ),
    ];
    for (dtype, order, compressor, filters, want) in cases {
        let m = zarray(dtype, order, compressor, filters);
        let defs = v3_codecs(&m, &v2, &v3).unwrap();
        assert_eq!(names(&defs), want, "{dtype} {compressor} {filters}");
        let repr = ChunkRepr::new(
            vec![8, 5],
            m.dtype.data_type,
            FillValue::zero(m.dtype.data_type),
        );
        CodecChain::from_defs(&defs, &repr, &v3).unwrap();
        // and back
        let back = v2_codecs(&defs, 2).unwrap();
        assert_eq!(back.order, m.order);
        assert_eq!(back.filters, m.filters);
        assert_eq!(back.compressor, m.compressor);
        let has_bytes = defs.iter().any(|d| d.name == "bytes");
        let changes_type = defs.iter().any(|d| d.name == "numcodecs.delta");
        if m.dtype.data_type.size() > 1 && has_bytes && !changes_type {
            assert_eq!(back.byte_order, m.dtype.byte_order);
        }
    }
    // the big-endian bytes codec
    let defs = v3_codecs(&zarray(">i2", "C", "null", "null"), &v2, &v3).unwrap();
    assert_eq!(defs[0].to_value()["configuration"]["endian"], "big");
    // delta stored as |i1: one-byte bytes codec
    let defs = v3_codecs(
        &zarray(
            "<i4",
            "C",
            "null",
            r#"[{"id": "delta", "dtype": "<i4", "astype": "|i1"}]"#,
        ),
        &v2,
        &v3,
    )
    .unwrap();
    assert!(defs[1].configuration.is_none(), "{:?}", defs[1]);
}

/// A filter that acts on values after one that gives bytes has no v3 chain.
#[test]
fn a_value_filter_after_a_bytes_filter_is_refused() {
    let m = zarray(
        "<i4",
        "C",
        "null",
        r#"[{"id": "crc32"}, {"id": "delta", "dtype": "<i4"}]"#,
    );
    let err = v3_codecs(&m, &default_v2_registry(), &default_registry()).unwrap_err();
    assert!(matches!(err, CodecError::InvalidChain { .. }), "{err}");
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// Native bytes of `values` as `t`.
fn native(t: DataType, values: &[f64]) -> Vec<u8> {
    values
        .iter()
        .flat_map(|&v| match t {
            DataType::Int16 => (v as i16).to_ne_bytes().to_vec(),
            DataType::Int32 => (v as i32).to_ne_bytes().to_vec(),
            DataType::Int64 => (v as i64).to_ne_bytes().to_vec(),
            DataType::UInt16 => (v as u16).to_ne_bytes().to_vec(),
            DataType::Float32 => (v as f32).to_ne_bytes().to_vec(),
            DataType::Float64 => v.to_ne_bytes().to_vec(),
            other => unreachable!("{other}"),
        })
        .collect()
}

/// Filters whose `astype` (`encode_dtype`) has another byte order than their `dtype`
/// (`decode_dtype`) and the array's: the stored bytes (written by zarr-python 3.1.6 with
/// numcodecs 0.16) are in the `astype`'s byte order, read and written here as there.
#[test]
fn filters_that_change_only_the_byte_order() {
    let v2 = default_v2_registry();
    let v3 = default_registry();
    // dtype, filters, the values written, the chunk zarr-python stores, the values read
    type Case<'a> = (&'a str, &'a str, &'a [f64], &'a str, &'a [f64]);
    let cases: [Case<'_>; 6] = [
        (
            ">i4",
            r#"[{"id": "delta", "dtype": ">i4", "astype": "<i4"}]"#,
            &[1.0, 2.0, 3.0, -5.0],
            "010000000100000001000000f8ffffff",
            &[1.0, 2.0, 3.0, -5.0],
        ),
        (
            ">u2",
            r#"[{"id": "fixedscaleoffset", "scale": 2, "offset": 10, "dtype": ">u2", "astype": "<u2"}]"#,
            &[10.0, 20.0, 300.0, 11.0],
            "0000140044020200",
            &[10.0, 20.0, 300.0, 11.0],
        ),
        (
            "<f4",
            r#"[{"id": "astype", "encode_dtype": ">f4", "decode_dtype": "<f4"}]"#,
            &[1.5, -2.25, 3.0, 0.0],
            "3fc00000c01000004040000000000000",
            &[1.5, -2.25, 3.0, 0.0],
        ),
        (
            ">f8",
            r#"[{"id": "quantize", "digits": 2, "dtype": ">f8", "astype": "<f4"}]"#,
            &[1.234567, -2.5, 100.125, 0.001],
            "00009e3f000020c00040c84200000000",
            &[1.234375, -2.5, 100.125, 0.0],
        ),
        (
            "<i8",
            r#"[{"id": "astype", "encode_dtype": ">i4", "decode_dtype": "<i8"}]"#,
            &[1.0, -2.0, 70000.0, 4.0],
            "00000001fffffffe0001117000000004",
            &[1.0, -2.0, 70000.0, 4.0],
        ),
        (
            ">i2",
            r#"[{"id": "delta", "dtype": ">i2", "astype": ">i2"},
                {"id": "astype", "encode_dtype": "<i4", "decode_dtype": ">i2"}]"#,
            &[7.0, 9.0, -3.0, 0.0],
            "0700000002000000f4ffffff03000000",
            &[7.0, 9.0, -3.0, 0.0],
        ),
    ];
    for (dtype, filters, written, stored, read) in cases {
        let m = meta(&format!(
            r#"{{"zarr_format": 2, "shape": [4], "chunks": [4], "dtype": "{dtype}",
            "compressor": null, "fill_value": 0, "order": "C", "filters": {filters}}}"#
        ));
        let t = m.dtype.data_type;
        let defs = v3_codecs(&m, &v2, &v3).unwrap();
        let repr = ChunkRepr::new(vec![4], t, FillValue::zero(t));
        let chain = CodecChain::from_defs(&defs, &repr, &v3).unwrap();
        let stored = hex(stored);
        assert_eq!(
            chain.decode(&stored).unwrap().as_bytes(),
            &native(t, read)[..],
            "{dtype} {filters}"
        );
        assert_eq!(
            chain
                .encode(native(t, written), EncodeOptions::ENCODE_EMPTY)
                .unwrap(),
            Some(stored),
            "{dtype} {filters}"
        );
        // and back: the same dtype and filters
        let back = v2_codecs(&defs, 1).unwrap();
        assert_eq!(back.byte_order, m.dtype.byte_order, "{dtype} {filters}");
        assert_eq!(back.filters, m.filters, "{dtype} {filters}");
    }
}

/// A filter whose `dtype` has the other byte order than the values it receives: numcodecs
/// reinterprets their bytes (`[1, 2]` as `>i4` viewed as `<i4`), which no chain can say.
#[test]
fn byte_reinterpretations_are_refused() {
    let v2 = default_v2_registry();
    let v3 = default_registry();
    for (dtype, filters, filter, field, received) in [
        (
            ">i4",
            r#"[{"id": "delta", "dtype": "<i4"}]"#,
            "delta",
            "dtype",
            "big",
        ),
        (
            "<i4",
            r#"[{"id": "delta", "dtype": "int32", "astype": ">i4"},
                {"id": "astype", "encode_dtype": "<i8", "decode_dtype": "<i4"}]"#,
            "astype",
            "decode_dtype",
            "big",
        ),
        (
            ">f8",
            r#"[{"id": "astype", "encode_dtype": "<f8", "decode_dtype": "float64"}]"#,
            "astype",
            "decode_dtype",
            "big",
        ),
    ] {
        let m = zarray(dtype, "C", "null", filters);
        let err = v3_codecs(&m, &v2, &v3).unwrap_err();
        assert!(
            matches!(&err, CodecError::V2ByteReinterpretation { filter: f, field: g, received: r, .. }
                if f == filter && *g == field && *r == received),
            "{dtype} {filters}: {err}"
        );
        assert!(err.to_string().contains("reinterpreting"), "{err}");
    }
    // one-byte values have no byte order
    let m = zarray(
        "|i1",
        "C",
        "null",
        r#"[{"id": "astype", "encode_dtype": ">i2", "decode_dtype": "|i1"}]"#,
    );
    let defs = v3_codecs(&m, &v2, &v3).unwrap();
    assert_eq!(defs[1].to_value()["configuration"]["endian"], "big");
}
