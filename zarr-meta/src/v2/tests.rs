use serde_json::{json, Value};

use super::*;
use crate::data_type::{TimeScale, TimeUnit};
use crate::numpy::ByteOrder;

fn base() -> Value {
    json!({"zarr_format": 2, "shape": [10, 6], "chunks": [4, 3], "dtype": "<i4",
           "compressor": {"id": "zlib", "level": 1}, "fill_value": 0, "order": "C",
           "filters": null})
}

fn with(key: &str, v: Value) -> Value {
    let mut d = base();
    d[key] = v;
    d
}

fn without(key: &str) -> Value {
    let mut d = base();
    d.as_object_mut().unwrap().shift_remove(key);
    d
}

fn parse(v: &Value) -> Result<ArrayMetadataV2> {
    ArrayMetadataV2::from_slice(&serde_json::to_vec(v).unwrap())
}

#[test]
fn every_core_dtype_string() {
    for (text, t, order) in [
        ("|b1", DataType::Bool, None),
        ("|i1", DataType::Int8, None),
        ("|u1", DataType::UInt8, None),
        ("<i2", DataType::Int16, Some(ByteOrder::Little)),
        (">i2", DataType::Int16, Some(ByteOrder::Big)),
        ("<i4", DataType::Int32, Some(ByteOrder::Little)),
        (">i8", DataType::Int64, Some(ByteOrder::Big)),
        ("<u2", DataType::UInt16, Some(ByteOrder::Little)),
        (">u4", DataType::UInt32, Some(ByteOrder::Big)),
        ("<u8", DataType::UInt64, Some(ByteOrder::Little)),
        ("<f2", DataType::Float16, Some(ByteOrder::Little)),
        (">f4", DataType::Float32, Some(ByteOrder::Big)),
        ("<f8", DataType::Float64, Some(ByteOrder::Little)),
        ("<c8", DataType::Complex64, Some(ByteOrder::Little)),
        (">c16", DataType::Complex128, Some(ByteOrder::Big)),
    ] {
        let fill = match t.kind() {
            DataKind::Bool => json!(false),
            DataKind::Complex => json!([0.0, 0.0]),
            _ => json!(0),
        };
        let mut d = with("dtype", json!(text));
        d["fill_value"] = fill;
        let m = parse(&d).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(m.dtype.data_type, t, "{text}");
        assert_eq!(m.dtype.byte_order, order, "{text}");
        assert_eq!(m.to_value()["dtype"], json!(text));
    }
    for (text, t, order, fill) in [
        (
            "<M8[ns]",
            DataType::DateTime64(TimeScale::of(TimeUnit::Nanosecond)),
            Some(ByteOrder::Little),
            json!(null),
        ),
        (
            ">m8[10s]",
            DataType::TimeDelta64(TimeScale::try_new(TimeUnit::Second, 10).unwrap()),
            Some(ByteOrder::Big),
            json!(3),
        ),
        (
            "<M8",
            DataType::DateTime64(TimeScale::of(TimeUnit::Generic)),
            Some(ByteOrder::Little),
            json!(i64::MIN),
        ),
    ] {
        let mut d = with("dtype", json!(text));
        d["fill_value"] = fill.clone();
        let m = parse(&d).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(
            (m.dtype.data_type, m.dtype.byte_order),
            (t, order),
            "{text}"
        );
        assert_eq!(m.to_value()["dtype"], json!(text));
        assert_eq!(m.to_value()["fill_value"], fill, "{text}");
    }
    // NaT spelled as a string reads as i64::MIN and is written as zarr-python writes it
    let mut d = with("dtype", json!("<m8[s]"));
    d["fill_value"] = json!("NaT");
    let m = parse(&d).unwrap();
    assert_eq!(
        m.fill_value.as_ref().unwrap().as_bytes(),
        i64::MIN.to_ne_bytes()
    );
    assert_eq!(m.to_value()["fill_value"], json!(i64::MIN));
    let mut d = with("dtype", json!("<M8[s]"));
    d["fill_value"] = json!("2020-01-01");
    assert!(parse(&d).is_err());
    let mut d = with("dtype", json!("|V3"));
    d["fill_value"] = json!("AAEC");
    let m = parse(&d).unwrap();
    assert_eq!(m.dtype.data_type.size(), 3);
    assert_eq!(m.fill_value.as_ref().unwrap().as_bytes(), [0, 1, 2]);
    assert_eq!(m.to_value()["fill_value"], "AAEC");
}

#[test]
fn documents_refused_with_the_key_and_the_fix() {
    let cases: Vec<(Value, &str)> = vec![
        (
            with("zarr_format", json!(3)),
            "unsupported zarr_format 3 in .zarray (expected 2)",
        ),
        (
            with("zarr_format", json!("2")),
            "unsupported zarr_format \"2\" in .zarray",
        ),
        (
            without("zarr_format"),
            "required field \"zarr_format\" is missing",
        ),
        (without("shape"), "required field \"shape\" is missing"),
        (without("chunks"), "required field \"chunks\" is missing"),
        (without("dtype"), "required field \"dtype\" is missing"),
        (
            without("compressor"),
            "required field \"compressor\" is missing",
        ),
        (
            without("fill_value"),
            "required field \"fill_value\" is missing",
        ),
        (without("order"), "required field \"order\" is missing"),
        (without("filters"), "required field \"filters\" is missing"),
        (with("shape", json!([-1, 6])), "field \"shape\" is invalid"),
        (
            with("chunks", json!([4])),
            "chunks has 1 dimensions but the array has 2",
        ),
        (
            with("chunks", json!([4, 3, 1])),
            "chunks has 3 dimensions but the array has 2",
        ),
        (
            with("chunks", json!([4, 0])),
            "chunks[1] is 0 (every chunk size must be at least 1)",
        ),
        (
            with("chunks", json!([4, 1.5])),
            "field \"chunks\" is invalid: 1.5 is not a positive integer",
        ),
        (with("chunks", json!(4)), "field \"chunks\" is invalid"),
        (
            with("dtype", json!("<M8[0s]")),
            "unsupported v2 dtype \"<M8[0s]\" (a datetime64 with a unit or scale factor outside numpy.datetime64;",
        ),
        (
            with("dtype", json!("|S0")),
            "unsupported v2 dtype \"|S0\" (a fixed-length byte string not spelled |S<n>",
        ),
        (
            with("dtype", json!("a4")),
            "unsupported v2 dtype \"a4\" (a fixed-length byte string not spelled |S<n>",
        ),
        (
            with("dtype", json!("<U0")),
            "(a fixed-length unicode string not spelled <U<n> with n >= 1;",
        ),
        (
            with("dtype", json!("|O")),
            "unsupported v2 dtype \"|O\" (an object type whose first filter is not vlen-utf8 or vlen-bytes;",
        ),
        (
            {
                let mut d = with("dtype", json!("|O"));
                d["filters"] = json!([{"id": "vlen-array", "dtype": "<i4"}]);
                d
            },
            "(an object type whose first filter is not vlen-utf8 or vlen-bytes;",
        ),
        (
            with("dtype", json!("O")),
            "(an object (variable-length) type;",
        ),
        (
            with("dtype", json!("<m8[xs]")),
            "(a timedelta64 with a unit or scale factor outside numpy.timedelta64;",
        ),
        (
            with("dtype", json!("<i3")),
            "unsupported v2 dtype \"<i3\" (not a NumPy type string",
        ),
        (
            with("dtype", json!([["r", "|u1"], ["g", "|u1"]])),
            "(a structured data type;",
        ),
        (
            with("dtype", json!("float64")),
            "v2 dtype \"float64\" must be spelled as NumPy's dtype.str: \"<f8\"",
        ),
        (
            with("dtype", json!("i4")),
            "must be spelled as NumPy's dtype.str: \"<i4\"",
        ),
        (
            with("dtype", json!("<u1")),
            "must be spelled as NumPy's dtype.str: \"|u1\"",
        ),
        (
            with("dtype", json!("|i4")),
            "must be spelled as NumPy's dtype.str: \"<i4\"",
        ),
        (
            with("dtype", json!("=f8")),
            "must be spelled as NumPy's dtype.str",
        ),
        (with("dtype", json!(4)), "field \"dtype\" is invalid"),
        (
            with("compressor", json!({"level": 1})),
            "the codec configuration in compressor has no \"id\"",
        ),
        (
            with("compressor", json!({"id": 5})),
            "in compressor has no \"id\"",
        ),
        (
            with("compressor", json!("zlib")),
            "field \"compressor\" is invalid",
        ),
        (
            with(
                "filters",
                json!([{"id": "delta", "dtype": "<i4"}, {"dtype": "<i4"}]),
            ),
            "the codec configuration in filters[1] has no \"id\"",
        ),
        (
            with("filters", json!({"id": "delta"})),
            "field \"filters\" is invalid",
        ),
        (
            with("order", json!("K")),
            "field \"order\" is invalid: expected \"C\" or \"F\", got \"K\"",
        ),
        (
            with("dimension_separator", json!("-")),
            "field \"dimension_separator\" is invalid",
        ),
        (
            with("dimension_separator", json!(null)),
            "field \"dimension_separator\" is invalid",
        ),
        (
            with("fill_value", json!("lots")),
            "fill_value \"lots\" is invalid for data type <i4: expected an integer",
        ),
        (
            with("fill_value", json!("1")),
            "fill_value \"1\" is invalid for data type <i4",
        ),
        (
            with("fill_value", json!(1.5)),
            "fill_value 1.5 is invalid for data type <i4",
        ),
        (
            with("fill_value", json!(true)),
            "fill_value true is invalid for data type <i4",
        ),
        (with("fill_value", json!(3e9)), "out of range"),
        (with("fill_value", json!(1e30)), "out of range"),
        (
            with("fill_value", json!([0])),
            "is invalid for data type <i4",
        ),
    ];
    for (doc, needle) in cases {
        let err = parse(&doc).unwrap_err().to_string();
        assert!(
            err.contains(needle),
            "{err:?} should contain {needle:?}\n{doc}"
        );
    }
    let typed = |dtype: &str, fill: Value| {
        let mut d = with("dtype", json!(dtype));
        d["fill_value"] = fill;
        parse(&d)
    };
    for (dtype, fill, needle) in [
        ("|u1", json!(256), "out of range"),
        ("|u1", json!(-1), "expected a non-negative integer"),
        ("|i1", json!(-129), "out of range"),
        (
            "|b1",
            json!(1),
            "fill_value 1 is invalid for data type |b1: expected true or false",
        ),
        ("|b1", json!("true"), "expected true or false"),
        (
            "<f8",
            json!("nan"),
            "fill_value \"nan\" is invalid for data type <f8",
        ),
        (
            "<f8",
            json!("0x7ff8000000000000"),
            "expected a number, \"NaN\"",
        ),
        ("<f8", json!(true), "invalid for data type <f8"),
        ("<f4", json!("1.5"), "invalid for data type <f4"),
        ("<c8", json!(1.0), "expected [real, imaginary]"),
        (
            "<c8",
            json!(["0x3f800000", 0]),
            "expected [real, imaginary] of numbers",
        ),
        ("<c16", json!([1.0]), "expected [real, imaginary]"),
        ("|V2", json!([1, 2]), "expected a base64 string or null"),
        (
            "|V2",
            json!("AAEC"),
            "the base64 string holds 3 bytes, the dtype 2",
        ),
        ("|V2", json!("AA="), "not a base64 string"),
        ("|V2", json!("AB=="), "not a base64 string"),
        ("|V2", json!("A$E="), "not a base64 string"),
    ] {
        let err = typed(dtype, fill.clone()).unwrap_err().to_string();
        assert!(
            err.contains(needle),
            "{dtype} {fill}: {err:?} should contain {needle:?}"
        );
    }
    assert!(matches!(
        ArrayMetadataV2::from_slice(b"{\"zarr_format\": 2,"),
        Err(MetaError::Json { .. })
    ));
    assert!(matches!(
        ArrayMetadataV2::from_slice(b"[2]"),
        Err(MetaError::NotAnObject)
    ));
}

#[test]
fn fill_values_in_every_v2_form() {
    let rt = |dtype: &str, fill: Value| {
        let mut d = with("dtype", json!(dtype));
        d["fill_value"] = fill;
        let m = parse(&d).unwrap_or_else(|e| panic!("{dtype}: {e}"));
        m.to_value()["fill_value"].clone()
    };
    // (dtype, written, as zarr-python writes it back)
    for (dtype, fill, back) in [
        ("<f8", json!("NaN"), json!("NaN")),
        ("<f4", json!("Infinity"), json!("Infinity")),
        ("<f2", json!("-Infinity"), json!("-Infinity")),
        ("<f8", json!(-0.0), json!(-0.0)),
        ("<f8", json!(0), json!(0.0)),
        ("<f4", json!(0.1), json!(0.10000000149011612)),
        ("<f8", json!(null), json!(null)),
        ("<i4", json!(null), json!(null)),
        ("<i4", json!(-7), json!(-7)),
        ("<i8", json!(2.0), json!(2)),
        (
            "<i8",
            json!(-9223372036854775808i64),
            json!(-9223372036854775808i64),
        ),
        (
            "<u8",
            json!(18446744073709551615u64),
            json!(18446744073709551615u64),
        ),
        ("|b1", json!(true), json!(true)),
        ("<c16", json!([1.0, "NaN"]), json!([1.0, "NaN"])),
        ("<c8", json!(["-Infinity", 2]), json!(["-Infinity", 2.0])),
        ("|V1", json!("/w=="), json!("/w==")),
        ("|V4", json!("AAAAAA=="), json!("AAAAAA==")),
        // the fixed-width strings, as zarr-python 3.1.6 writes them
        ("<U4", json!("ab"), json!("ab")),
        (">U2", json!(""), json!("")),
        ("|S3", json!("cQ=="), json!("cQ==")),
        ("|S3", json!(null), json!(null)),
    ] {
        assert_eq!(rt(dtype, fill.clone()), back, "{dtype} {fill}");
    }
    let d = |dtype: &str, fill: Value| {
        let mut d = with("dtype", json!(dtype));
        d["fill_value"] = fill;
        parse(&d).unwrap_err().to_string()
    };
    assert!(d("|S4", json!(0))
        .contains("fill_value 0 is invalid for data type |S4: expected a base64 string"));
    assert!(d("<U2", json!("abc")).contains("longer than the 2 code units"));
    // a NaN with a payload has no v2 spelling but "NaN"
    let payload =
        FillValue::from_ne_bytes(DataType::Float32, 0x7fc0_0001u32.to_ne_bytes()).unwrap();
    assert_eq!(
        fill_value_to_json(Some(&payload), DataType::Float32),
        json!("NaN")
    );
}

#[test]
fn object_arrays_of_strings_and_bytes() {
    // as zarr-python 3.1.6 writes them
    for (filter, fill, t) in [
        ("vlen-utf8", json!(""), DataType::String),
        ("vlen-utf8", json!("zz"), DataType::String),
        ("vlen-bytes", json!("cQ=="), DataType::Bytes),
        ("vlen-utf8", json!(null), DataType::String),
    ] {
        let doc = json!({"shape": [3], "chunks": [2], "dtype": "|O", "fill_value": fill,
            "order": "C", "filters": [{"id": filter}], "dimension_separator": ".",
            "compressor": {"id": "zstd", "level": 0}, "zarr_format": 2});
        let m = parse(&doc).unwrap_or_else(|e| panic!("{filter} {fill}: {e}"));
        assert_eq!(m.data_type(), t);
        assert_eq!(m.to_value(), doc);
    }
    // numbers (older zarr-python wrote `0`) read as zarr-python 3.1.6 reads them: str(x)
    for (fill, want) in [
        (json!(0), "0"),
        (json!(-7), "-7"),
        (json!(u64::MAX), "18446744073709551615"),
        (json!(0.0), "0.0"),
        (json!(1.5), "1.5"),
        (json!(1e20), "1e+20"),
        (json!(true), "True"),
    ] {
        let mut doc = with("dtype", json!("|O"));
        doc["filters"] = json!([{"id": "vlen-utf8"}]);
        doc["fill_value"] = fill.clone();
        let m = parse(&doc).unwrap_or_else(|e| panic!("{fill}: {e}"));
        assert_eq!(
            m.fill_value.as_ref().unwrap().as_bytes(),
            want.as_bytes(),
            "{fill}"
        );
    }
    // zarr-python refuses them for byte strings, and so do we
    let mut doc = with("dtype", json!("|O"));
    doc["filters"] = json!([{"id": "vlen-bytes"}]);
    doc["fill_value"] = json!(0);
    let e = parse(&doc).unwrap_err().to_string();
    assert!(
        e.contains("fill_value 0 is invalid for data type |O"),
        "{e}"
    );
}

#[test]
fn written_as_zarr_python_writes() {
    let doc = br#"{"zarr_format": 2, "shape": [20, 13], "chunks": [8, 5], "dtype": ">f8",
        "compressor": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0},
        "fill_value": 1e-05, "order": "F",
        "filters": [{"id": "delta", "dtype": ">f8", "astype": ">f4"}],
        "dimension_separator": "/"}"#;
    let m = ArrayMetadataV2::from_slice(doc).unwrap();
    let text = String::from_utf8(m.to_vec_pretty()).unwrap();
    assert_eq!(
        text,
        r#"{
  "shape": [
    20,
    13
  ],
  "chunks": [
    8,
    5
  ],
  "dtype": ">f8",
  "fill_value": 1e-05,
  "order": "F",
  "filters": [
    {
      "id": "delta",
      "dtype": ">f8",
      "astype": ">f4"
    }
  ],
  "dimension_separator": "/",
  "compressor": {
    "id": "blosc",
    "cname": "lz4",
    "clevel": 5,
    "shuffle": 1,
    "blocksize": 0
  },
  "zarr_format": 2
}"#
    );
    assert_eq!(ArrayMetadataV2::from_slice(text.as_bytes()).unwrap(), m);
}

#[test]
fn defaults_unknown_keys_and_empty_filters() {
    // no dimension_separator: "." (written back explicitly, as zarr-python does)
    let m = parse(&base()).unwrap();
    assert_eq!(m.dimension_separator, Separator::Dot);
    assert_eq!(m.to_value()["dimension_separator"], ".");
    // other keys "SHOULD be ignored": kept aside and written back after the known ones
    let m = parse(&with("created_by", json!({"tool": "x"}))).unwrap();
    assert_eq!(m.extra_fields["created_by"]["tool"], "x");
    let keys: Vec<String> = m.to_value().as_object().unwrap().keys().cloned().collect();
    assert_eq!(keys.last().map(String::as_str), Some("created_by"));
    // an empty filter list reads as no filters (zarr-python does the same)
    let m = parse(&with("filters", json!([]))).unwrap();
    assert_eq!(m.filters, None);
    assert_eq!(m.to_value()["filters"], Value::Null);
    // 0-d
    let mut d = with("shape", json!([]));
    d["chunks"] = json!([]);
    assert_eq!(parse(&d).unwrap().rank(), 0);
}

#[test]
fn groups_and_attributes() {
    assert_eq!(
        GroupMetadataV2::from_slice(br#"{"zarr_format": 2}"#).unwrap(),
        GroupMetadataV2::default()
    );
    for (doc, needle) in [
        (
            &br#"{"zarr_format": 3}"#[..],
            "unsupported zarr_format 3 in .zgroup (expected 2)",
        ),
        (br#"{}"#, "required field \"zarr_format\" is missing"),
        (br#"[]"#, "must be a JSON object"),
        (
            br#"{"zarr_format": 2, "attributes": {}}"#,
            "unknown key \"attributes\" in .zgroup",
        ),
        (
            br#"{"zarr_format": 2, "consolidated_metadata": 3}"#,
            "unknown key",
        ),
    ] {
        let err = GroupMetadataV2::from_slice(doc).unwrap_err().to_string();
        assert!(err.contains(needle), "{err:?} should contain {needle:?}");
    }
    let g = GroupMetadataV2::from_slice(
        br#"{"zarr_format": 2, "consolidated_metadata": {"metadata": {}, "must_understand": false, "kind": "inline"}}"#,
    )
    .unwrap();
    assert!(g.consolidated_metadata.is_some());
    assert_eq!(GroupMetadataV2::from_value(&g.to_value()).unwrap(), g);

    let a = Attributes::from_slice(br#"{"a": [1, {"b": null}], "c": 0.5}"#).unwrap();
    assert_eq!(Attributes::from_slice(&a.to_vec_pretty()).unwrap(), a);
    assert_eq!(Attributes::default().to_vec_pretty(), b"{}");
    let err = Attributes::from_slice(b"[1]").unwrap_err().to_string();
    assert_eq!(
        err,
        "field \".zattrs\" is invalid: expected a JSON object of attributes, got [1]"
    );
}

#[test]
fn consolidated_documents() {
    let doc = json!({"metadata": {
        ".zattrs": {"title": "t"}, ".zgroup": {"zarr_format": 2},
        "a/.zattrs": {}, "a/.zarray": base(),
        "g/.zattrs": {}, "g/.zgroup": {"zarr_format": 2},
        "g/b/.zattrs": {}, "g/b/.zarray": with("dtype", json!("<U0")),
    }, "zarr_consolidated_format": 1});
    let mut c = ConsolidatedMetadataV2::from_value(&doc).unwrap();
    assert_eq!(c.node_paths().collect::<Vec<_>>(), ["", "a", "g", "g/b"]);
    assert_eq!(c.attributes("").unwrap().unwrap().0["title"], "t");
    assert_eq!(c.array("a").unwrap().unwrap().shape, [10, 6]);
    assert!(c.array("g").is_none());
    // a member this build cannot read is an error of that member only
    let err = c.array("g/b").unwrap().unwrap_err();
    assert_eq!(
        zarr_testkit::report(&err),
        "consolidated metadata entry \"g/b/.zarray\" is invalid: unsupported v2 dtype \"<U0\" \
         (a fixed-length unicode string not spelled <U<n> with n >= 1; the types read are bool \
         \"|b1\", integers such as \"<i4\", floats such as \"<f8\", complex such as \"<c16\", \
         raw bytes \"|V<n>\", datetimes such as \"<M8[ns]\", fixed-width strings \"<U<n>\" and \
         \"|S<n>\", and \"|O\" with a vlen-utf8 or vlen-bytes filter)"
    );
    assert_eq!(ConsolidatedMetadataV2::from_slice(&c.to_vec()).unwrap(), c);
    let mut m = c.array("a").unwrap().unwrap();
    m.shape[0] = 12;
    c.set_array("a", &m);
    assert_eq!(c.array("a").unwrap().unwrap().shape, [12, 6]);
    assert_eq!(c.remove_node("g"), 4);
    assert_eq!(c.node_paths().collect::<Vec<_>>(), ["", "a"]);

    for (doc, needle) in [
        (
            json!({"metadata": {}}),
            "required field \"zarr_consolidated_format\" is missing",
        ),
        (
            json!({"metadata": {}, "zarr_consolidated_format": 2}),
            "unsupported zarr_consolidated_format 2 in .zmetadata (expected 1)",
        ),
        (
            json!({"zarr_consolidated_format": 1}),
            "required field \"metadata\" is missing",
        ),
        (
            json!({"metadata": [], "zarr_consolidated_format": 1}),
            "field \"metadata\" is invalid",
        ),
        (
            json!({"metadata": {"a/.zarray": 3}, "zarr_consolidated_format": 1}),
            "consolidated metadata entry \"a/.zarray\" is invalid",
        ),
        (
            json!({"metadata": {"a/0.0": {}}, "zarr_consolidated_format": 1}),
            "key \"a/0.0\" names no metadata document",
        ),
        (
            json!({"metadata": {"/.zarray": {}}, "zarr_consolidated_format": 1}),
            "names no metadata document",
        ),
        (
            json!({"metadata": {}, "zarr_consolidated_format": 1, "extra": 1}),
            "unknown key \"extra\" in .zmetadata",
        ),
    ] {
        let err = ConsolidatedMetadataV2::from_value(&doc)
            .unwrap_err()
            .to_string();
        assert!(err.contains(needle), "{err:?} should contain {needle:?}");
    }
}

#[test]
fn base64_round_trips() {
    for n in 0..10usize {
        let bytes: Vec<u8> = (0..n).map(|i| (i * 37 + 200) as u8).collect();
        let text = base64_encode(&bytes);
        assert_eq!(base64_decode(&text), Some(bytes), "{text}");
    }
    assert_eq!(base64_encode(b"abc"), "YWJj");
    assert_eq!(base64_encode(b"ab"), "YWI=");
    assert_eq!(base64_encode(b"a"), "YQ==");
    for bad in ["Y", "YQ=", "YQ==YQ==", "Y===", "YR==", "Y Q="] {
        assert_eq!(base64_decode(bad), None, "{bad}");
    }
}
