//! The table of fixtures, in manifest order: core arrays, groups, core documents to refuse,
//! then `regular_bounded` and `sparse_layout` (written only when the registry has them).

use serde_json::{json, Map, Value};
use zarr_array::zarr_meta::data_type::CORE_DATA_TYPES;
use zarr_array::{DataType, ExtensionDef};

use super::spec::{
    def, Case, Content, Data, Document, First, Grid, Grow, Layout, Node, Serializer,
};
use crate::layout::{SparseFormat, REGULAR_BOUNDED, SPARSE_CODEC};

/// Every fixture, in manifest order.
pub(super) fn all() -> Vec<Case> {
    [
        data_types(),
        codecs(),
        sharding(),
        fill_values(),
        shapes_and_keys(),
        groups(),
        core_rejects(),
        bounded(),
        bounded_rejects(),
        sparse(),
        sparse_rejects(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The shape and chunks of most core fixtures: partial chunks at both edges.
const STD: [u64; 2] = [20, 13];
const STD_CHUNKS: [u64; 2] = [8, 5];

fn std(t: DataType) -> Layout {
    Layout::new(t, &STD, &STD_CHUNKS)
}

fn no_compressor(layout: Layout) -> Layout {
    Layout {
        compressors: Some(vec![]),
        ..layout
    }
}

fn data_types() -> Vec<Case> {
    let every_type = CORE_DATA_TYPES.iter().map(|&t| {
        Case::array(
            format!("dtype_{}", t.name()),
            format!("data type {t}, random data over the whole range, 8x5 chunks with partial edges, bytes codec only"),
            no_compressor(std(t)),
        )
    });
    let big_endian = [
        DataType::UInt16,
        DataType::Int32,
        DataType::Float64,
        DataType::Complex64,
    ]
    .into_iter()
    .map(|t| {
        Case::array(
            format!("bytes_big_{}", t.name()),
            format!("bytes codec endian big, {t}"),
            no_compressor(Layout {
                serializer: Serializer::BytesBig,
                ..std(t)
            }),
        )
    });
    every_type.chain(big_endian).collect()
}

fn transpose(order: Value) -> Vec<ExtensionDef> {
    vec![def("transpose", json!({ "order": order }))]
}

fn zstd(level: i64, checksum: bool) -> ExtensionDef {
    def("zstd", json!({"level": level, "checksum": checksum}))
}

fn gzip(level: u32) -> ExtensionDef {
    def("gzip", json!({ "level": level }))
}

fn crc32c() -> ExtensionDef {
    ExtensionDef::new("crc32c")
}

fn codecs() -> Vec<Case> {
    let mut cases = vec![
        Case::array(
            "transpose_2d",
            "transpose order [1, 0], then bytes and zstd",
            Layout {
                filters: transpose(json!([1, 0])),
                ..std(DataType::Float32)
            },
        ),
        Case::array(
            "transpose_3d",
            "transpose order [2, 0, 1] on a 3-d array",
            Layout {
                filters: transpose(json!([2, 0, 1])),
                ..Layout::new(DataType::Int16, &[6, 7, 8], &[3, 4, 5])
            },
        ),
    ];
    let compressed = [
        ("gzip_1", DataType::Int32, vec![gzip(1)], "gzip level 1"),
        ("gzip_9", DataType::Float32, vec![gzip(9)], "gzip level 9"),
        (
            "zstd_0",
            DataType::Int64,
            vec![zstd(0, false)],
            "zstd level 0 (the default)",
        ),
        (
            "zstd_checksum",
            DataType::UInt32,
            vec![zstd(7, true)],
            "zstd level 7 with checksum",
        ),
        (
            "zstd_negative",
            DataType::Int16,
            vec![zstd(-5, false)],
            "zstd negative level -5",
        ),
        (
            "crc32c",
            DataType::Int32,
            vec![crc32c()],
            "crc32c after bytes",
        ),
        (
            "zstd_crc32c",
            DataType::Float64,
            vec![zstd(3, false), crc32c()],
            "zstd then crc32c",
        ),
        (
            "gzip_zstd_crc32c",
            DataType::UInt8,
            vec![gzip(2), zstd(1, false), crc32c()],
            "three bytes->bytes codecs: gzip, zstd, crc32c",
        ),
    ];
    cases.extend(compressed.into_iter().map(|(name, t, compressors, why)| {
        Case::array(
            name,
            why,
            Layout {
                compressors: Some(compressors),
                ..std(t)
            },
        )
    }));
    let blosc = [
        ("lz4", "shuffle", DataType::Int32),
        ("lz4hc", "noshuffle", DataType::UInt8),
        ("blosclz", "bitshuffle", DataType::Float64),
        ("zstd", "bitshuffle", DataType::Int16),
        ("zlib", "shuffle", DataType::Float32),
    ];
    cases.extend(blosc.into_iter().map(|(cname, shuffle, t)| {
        let blosc = def(
            "blosc",
            json!({"cname": cname, "clevel": 5, "shuffle": shuffle, "typesize": t.size(), "blocksize": 0}),
        );
        Case::array(
            format!("blosc_{cname}_{shuffle}"),
            format!("blosc cname={cname} shuffle={shuffle} clevel=5, {t}"),
            Layout {
                compressors: Some(vec![blosc]),
                ..std(t)
            },
        )
    }));
    cases
}

/// `{"name": "bytes", "configuration": {"endian": "little"}}`
fn bytes_le() -> Value {
    json!({"name": "bytes", "configuration": {"endian": "little"}})
}

/// The index codecs every sharding document here uses: bytes then crc32c.
fn index_codecs() -> Value {
    json!([bytes_le(), {"name": "crc32c"}])
}

/// A `sharding_indexed` codec entry.
fn sharding_codec(chunk_shape: Value, codecs: Value, index_location: &str) -> Value {
    json!({"name": "sharding_indexed", "configuration": {
        "chunk_shape": chunk_shape,
        "codecs": codecs,
        "index_codecs": index_codecs(),
        "index_location": index_location}})
}

fn regular_grid(chunk_shape: Value) -> Value {
    json!({"name": "regular", "configuration": {"chunk_shape": chunk_shape}})
}

fn sharding() -> Vec<Case> {
    let sharded = |t| Layout {
        chunks: vec![4, 5],
        shards: Some(vec![8, 10]),
        ..std(t)
    };
    let index_start = base_doc_with(&[
        ("shape", json!([20, 13])),
        ("data_type", json!("uint16")),
        ("chunk_grid", regular_grid(json!([8, 10]))),
        (
            "codecs",
            json!([sharding_codec(
                json!([4, 5]),
                json!([bytes_le(), {"name": "gzip", "configuration": {"level": 3}}]),
                "start"
            )]),
        ),
    ]);
    let inner = sharding_codec(json!([2, 2]), json!([bytes_le()]), "end");
    let nested = base_doc_with(&[
        ("shape", json!([20, 13])),
        ("data_type", json!("float32")),
        ("fill_value", json!(-1.0)),
        ("chunk_grid", regular_grid(json!([8, 8]))),
        (
            "codecs",
            json!([sharding_codec(json!([4, 4]), json!([inner]), "end")]),
        ),
    ]);
    vec![
        Case::array(
            "shard_basic",
            "shards 8x10 of inner chunks 4x5 (zstd inside), index at the end with crc32c, partial shards",
            sharded(DataType::Int32),
        ),
        Case::array(
            "shard_missing_inner",
            "inner chunks missing from a shard and a shard missing, fill 7.5",
            Layout {
                fill_value: Some(json!(7.5)),
                ..sharded(DataType::Float32)
            },
        )
        .data(block(&[1, 2], &[5, 6])),
        Case::array(
            "shard_1d",
            "1-d: 100 elements, shards of 30, chunks of 10",
            Layout {
                shards: Some(vec![30]),
                ..Layout::new(DataType::UInt16, &[100], &[10])
            },
        ),
        Case::hand_written(
            "shard_index_start",
            "sharding with the index at the start, gzip inside",
            index_start,
        ),
        Case::hand_written(
            "shard_nested",
            "sharding inside sharding (8x8 > 4x4 > 2x2), written in part",
            nested,
        )
        .data(block(&[3, 1], &[14, 9])),
    ]
}

/// A random block at `start`, the rest fill.
fn block(start: &[u64], shape: &[u64]) -> Data {
    Data::first(First::Block {
        start: start.to_vec(),
        shape: shape.to_vec(),
    })
}

fn fill_values() -> Vec<Case> {
    let fills = [
        ("fill_nan_f64", DataType::Float64, json!("NaN")),
        ("fill_inf_f32", DataType::Float32, json!("Infinity")),
        ("fill_neg_zero_f64", DataType::Float64, json!(-0.0)),
        (
            "fill_complex128",
            DataType::Complex128,
            json!([1.5, "-Infinity"]),
        ),
        ("fill_u64_max", DataType::UInt64, json!(u64::MAX)),
        ("fill_i8_min", DataType::Int8, json!(-128)),
        ("fill_true", DataType::Bool, json!(true)),
        ("fill_hex_nan_f32", DataType::Float32, json!("0x7fc00001")),
        ("fill_f16", DataType::Float16, json!(1.5)),
    ];
    let mut cases: Vec<Case> = fills
        .into_iter()
        .map(|(name, t, fill)| {
            let why = format!("fill_value {fill} for {t}; 8 of 9 chunks missing");
            let layout = Layout {
                fill_value: Some(fill),
                ..std(t)
            };
            Case::array(name, why, layout).data(block(&[8, 5], &[8, 5]))
        })
        .collect();
    cases.push(
        Case::array(
            "missing_all",
            "no chunk stored at all: every element is the fill value 42",
            Layout {
                fill_value: Some(json!(42)),
                ..std(DataType::Int32)
            },
        )
        .data(Data::first(First::Nothing)),
    );
    cases
}

fn shapes_and_keys() -> Vec<Case> {
    let mut cases = vec![
        Case::array(
            "shape_0d",
            "0-d array (key c)",
            Layout::new(DataType::Float64, &[], &[]),
        ),
        Case::array(
            "shape_1d",
            "1-d, 101 elements in chunks of 10",
            Layout::new(DataType::Int32, &[101], &[10]),
        ),
        Case::array(
            "shape_4d",
            "4-d, partial chunks on every axis",
            Layout::new(DataType::UInt8, &[5, 4, 3, 6], &[2, 3, 2, 4]),
        ),
        Case::array(
            "shape_zero_len",
            "a dimension of length 0",
            Layout::new(DataType::Float32, &[0, 5], &[3, 3]),
        ),
        Case::array(
            "shape_chunk_bigger",
            "one chunk larger than the array",
            Layout::new(DataType::Int16, &[5, 3], &[8, 8]),
        ),
    ];
    let keys = [
        ("keys_default_dot", "default", "."),
        ("keys_v2_dot", "v2", "."),
        ("keys_v2_slash", "v2", "/"),
    ];
    cases.extend(keys.into_iter().map(|(name, encoding, separator)| {
        Case::array(
            name,
            format!("chunk_key_encoding {encoding} with separator {separator:?}"),
            Layout {
                key_encoding: Some(def(encoding, json!({ "separator": separator }))),
                ..std(DataType::UInt16)
            },
        )
    }));
    let attributes = json!({
        "title": "attributes of every JSON kind", "unicode": "Zarr \u{2013} \u{00e9}t\u{00e9}",
        "int": -3, "float": 2.5, "bool": true, "null": null, "list": [1, "two", [3]],
        "nested": {"a": {"b": []}}
    });
    cases.extend([
        Case::array(
            "dim_names",
            "dimension_names [\"y\", null]",
            Layout {
                dimension_names: Some(vec![Some("y".into()), None]),
                ..std(DataType::Int8)
            },
        ),
        Case::array(
            "attrs_rich",
            "attributes of every JSON kind and unicode",
            Layout {
                attributes: object(attributes),
                ..std(DataType::Float32)
            },
        ),
    ]);
    cases
}

fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

fn groups() -> Vec<Case> {
    vec![
        Case::group(
            "group",
            "group with attributes; members a, sub, empty",
            json!({"title": "a group", "n": 3}),
        ),
        Case::array(
            "group/a",
            "array directly in a group",
            Layout::new(DataType::Int32, &[5, 4], &[2, 2]),
        ),
        Case::group(
            "group/sub",
            "nested group with attributes; member b",
            json!({"level": 2}),
        ),
        Case::array(
            "group/sub/b",
            "array in a nested group",
            Layout::new(DataType::Float64, &[7], &[3]),
        ),
        Case::group("group/empty", "a group without members", json!({})),
        Case {
            path: "reject_group_unknown_field".into(),
            why: "group with an unknown field not marked must_understand false".into(),
            requires: &[],
            node: Node::Reject {
                node_type: "group",
                doc: Document::Json(
                    json!({"zarr_format": 3, "node_type": "group", "attributes": {}, "surprise": 1}),
                ),
            },
        },
    ]
}

/// A valid small array document that the documents to refuse break in one place.
fn base_doc() -> Value {
    json!({
        "zarr_format": 3,
        "node_type": "array",
        "shape": [4, 4],
        "data_type": "int32",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 2]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0,
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "attributes": {}
    })
}

/// The base document with these fields set (replaced in place, or added at the end).
fn base_doc_with(fields: &[(&str, Value)]) -> Value {
    let mut doc = base_doc();
    if let Value::Object(m) = &mut doc {
        for (name, value) in fields {
            m.insert((*name).into(), value.clone());
        }
    }
    doc
}

/// The base document without this field.
fn base_doc_without(field: &str) -> Value {
    let mut doc = base_doc();
    if let Value::Object(m) = &mut doc {
        m.remove(field);
    }
    doc
}

fn core_rejects() -> Vec<Case> {
    let codecs = |list: Value| base_doc_with(&[("codecs", list)]);
    let not_divisor = base_doc_with(&[
        ("chunk_grid", regular_grid(json!([4, 4]))),
        (
            "codecs",
            json!([sharding_codec(json!([3, 3]), json!([bytes_le()]), "end")]),
        ),
    ]);
    vec![
        Case {
            path: "reject_bad_json".into(),
            why: "truncated JSON".into(),
            requires: &[],
            node: Node::Reject {
                node_type: "array",
                doc: Document::Raw(
                    b"{\"zarr_format\": 3, \"node_type\": \"array\", \"shape\": [4, ",
                ),
            },
        },
        Case::reject(
            "reject_zarr_format_2",
            "zarr_format 2 in a zarr.json",
            base_doc_with(&[("zarr_format", json!(2))]),
        ),
        Case::reject(
            "reject_missing_shape",
            "required field shape missing",
            base_doc_without("shape"),
        ),
        Case::reject(
            "reject_missing_codecs",
            "required field codecs missing",
            base_doc_without("codecs"),
        ),
        Case::reject(
            "reject_unknown_grid",
            "unknown chunk grid",
            base_doc_with(&[(
                "chunk_grid",
                json!({"name": "hexagonal", "configuration": {"chunk_shape": [2, 2]}}),
            )]),
        ),
        Case::reject(
            "reject_unknown_codec",
            "unknown codec",
            codecs(json!([bytes_le(), {"name": "lzma9"}])),
        ),
        Case::reject(
            "reject_unknown_data_type",
            "unknown data type",
            base_doc_with(&[("data_type", json!("int3"))]),
        ),
        Case::reject(
            "reject_fill_string_for_int",
            "fill_value a string for int32",
            base_doc_with(&[("fill_value", json!("abc"))]),
        ),
        Case::reject(
            "reject_unknown_field",
            "unknown top-level field without must_understand false",
            base_doc_with(&[("surprise", json!({"a": 1}))]),
        ),
        Case::reject(
            "reject_no_array_to_bytes",
            "codec chain without an array->bytes codec",
            codecs(json!([{"name": "gzip", "configuration": {"level": 1}}])),
        ),
        Case::reject(
            "reject_chunk_shape_zero",
            "a chunk size of 0",
            base_doc_with(&[("chunk_grid", regular_grid(json!([0, 2])))]),
        ),
        Case::reject(
            "reject_gzip_level",
            "gzip level 10 (0-9)",
            codecs(json!([bytes_le(), {"name": "gzip", "configuration": {"level": 10}}])),
        ),
        Case::reject(
            "reject_blosc_cname",
            "blosc cname brotli",
            codecs(
                json!([bytes_le(), {"name": "blosc", "configuration": {"cname": "brotli", "clevel": 5, "shuffle": "shuffle", "typesize": 4, "blocksize": 0}}]),
            ),
        ),
        Case::reject(
            "reject_transpose_order",
            "transpose order that is not a permutation",
            codecs(json!([{"name": "transpose", "configuration": {"order": [0, 0]}}, bytes_le()])),
        ),
        Case::reject(
            "reject_shard_not_divisor",
            "inner chunk shape that does not divide the shard",
            not_divisor,
        ),
    ]
}

const RB: &[&str] = &[REGULAR_BOUNDED];

fn bounded_layout(t: DataType, shape: &[u64], chunks: &[u64], lower_bound: &[i64]) -> Layout {
    Layout {
        grid: Grid::Bounded {
            lower_bound: lower_bound.to_vec(),
            origin: None,
        },
        ..Layout::new(t, shape, chunks)
    }
}

fn prepend(axis: usize, len: u64) -> Grow {
    Grow::Prepend {
        axis,
        len,
        content: Content::Random,
    }
}

fn bounded() -> Vec<Case> {
    let ones_then_twos = Data::first(First::Whole(Content::Constant(1))).then(Grow::Prepend {
        axis: 0,
        len: 3,
        content: Content::Constant(2),
    });
    let grow_mix = Data::random()
        .then(prepend(0, 5))
        .then(Grow::Append {
            axis: 0,
            len: 7,
            content: Content::Random,
        })
        .then(prepend(0, 3))
        .then(Grow::Resize(vec![40]));
    let cases = vec![
        Case::array(
            "rb_prepended_2d",
            "the worked example: 6x4 of ones in 4x4 chunks, three rows of twos prepended (domain [-3, 6) x [0, 4), chunk -1 partly filled)",
            Layout::new(DataType::Int32, &[6, 4], &[4, 4]),
        )
        .data(ones_then_twos),
        Case::array(
            "rb_created",
            "created regular_bounded: lower_bound [-5, 2], origin 0",
            bounded_layout(DataType::Int16, &[10, 7], &[4, 3], &[-5, 2]),
        ),
        Case::array(
            "rb_origin",
            "lower_bound [-3, 4] with origin [1, -2]: partly filled first chunks on both axes",
            Layout {
                grid: Grid::Bounded {
                    lower_bound: vec![-3, 4],
                    origin: Some(vec![1, -2]),
                },
                ..Layout::new(DataType::Float32, &[9, 8], &[4, 3])
            },
        ),
        Case::array(
            "rb_prepend_3d",
            "3-d, prepended by 1, 2 and 3 on axes 0, 1 and 2",
            Layout::new(DataType::UInt8, &[5, 4, 6], &[2, 3, 4]),
        )
        .data(
            Data::random()
                .then(prepend(0, 1))
                .then(prepend(1, 2))
                .then(prepend(2, 3)),
        ),
        Case::array(
            "rb_sharded",
            "sharded (8x8 shards of 4x4 chunks), prepended by 5 rows: part of a shard",
            Layout {
                shards: Some(vec![8, 8]),
                ..Layout::new(DataType::Int32, &[12, 10], &[4, 4])
            },
        )
        .data(Data::random().then(prepend(0, 5))),
        Case::array(
            "rb_grow_mix",
            "1-d: prepend 5, append 7, prepend 3, resize to 40",
            Layout::new(DataType::Int32, &[30], &[8]),
        )
        .data(grow_mix),
        Case::array(
            "rb_keys_v2",
            "v2 chunk keys with negative grid indices (-2.0, -1.1)",
            Layout {
                key_encoding: Some(def("v2", json!({"separator": "."}))),
                ..bounded_layout(DataType::UInt8, &[10, 3], &[4, 2], &[-6, 0])
            },
        ),
        Case::array(
            "rb_fill_nan",
            "fill NaN, lower_bound [-2, -2], only a 3x3 block written",
            Layout {
                fill_value: Some(json!("NaN")),
                ..bounded_layout(DataType::Float64, &[10, 10], &[4, 4], &[-2, -2])
            },
        )
        .data(block(&[3, 3], &[3, 3])),
    ];
    cases.into_iter().map(|c| c.requires(RB)).collect()
}

fn bounded_rejects() -> Vec<Case> {
    let grid = |config: Value| {
        base_doc_with(&[(
            "chunk_grid",
            json!({"name": REGULAR_BOUNDED, "configuration": config}),
        )])
    };
    let good = json!({"chunk_shape": [2, 2], "origin": [0, 0], "lower_bound": [-1, 0]});
    let cases = vec![
        Case::reject(
            "rbx_must_understand_false",
            "a chunk grid cannot carry must_understand (grids can never be ignored)",
            base_doc_with(&[(
                "chunk_grid",
                json!({"name": REGULAR_BOUNDED, "configuration": good, "must_understand": false}),
            )]),
        ),
        Case::reject(
            "rbx_unknown_key",
            "an unknown configuration key",
            grid(
                json!({"chunk_shape": [2, 2], "origin": [0, 0], "lower_bound": [-1, 0], "offset": [0, 0]}),
            ),
        ),
        Case::reject(
            "rbx_rank",
            "lower_bound of the wrong rank",
            grid(json!({"chunk_shape": [2, 2], "origin": [0, 0], "lower_bound": [-1]})),
        ),
        Case::reject(
            "rbx_overflow",
            "lower_bound - origin overflows i64",
            grid(json!({"chunk_shape": [2, 2], "origin": [1, 0], "lower_bound": [i64::MIN, 0]})),
        ),
        Case::reject(
            "rbx_zero_chunk",
            "a chunk size of 0",
            grid(json!({"chunk_shape": [0, 2], "origin": [0, 0], "lower_bound": [0, 0]})),
        ),
    ];
    cases.into_iter().map(|c| c.requires(RB)).collect()
}

const SP: &[&str] = &[SPARSE_CODEC];

/// A sparse fixture: `format` chunks of `chunks`, about `permille`/1000 of the elements set.
fn sparse_case(
    name: &str,
    why: &str,
    layout: Layout,
    format: SparseFormat,
    fill: Value,
    permille: u64,
) -> Case {
    let layout = Layout {
        serializer: Serializer::Sparse(format),
        fill_value: Some(fill),
        ..layout
    };
    Case::array(name, why, layout)
        .data(Data::first(First::Whole(Content::Sparse { permille })))
        .requires(SP)
}

fn sparse() -> Vec<Case> {
    let coo_on_bounded =
        Data::first(First::Whole(Content::Sparse { permille: 100 })).then(Grow::Prepend {
            axis: 0,
            len: 3,
            content: Content::Sparse { permille: 200 },
        });
    vec![
        sparse_case(
            "sp_csr",
            "CSR chunks, no compressor, 5% dense",
            no_compressor(Layout::new(DataType::Float32, &[60, 50], &[20, 25])),
            SparseFormat::Csr,
            json!(0.0),
            50,
        ),
        sparse_case(
            "sp_csc",
            "CSC chunks, zstd, fill -1, partial edge chunks",
            Layout::new(DataType::Int32, &[40, 30], &[16, 16]),
            SparseFormat::Csc,
            json!(-1),
            50,
        ),
        sparse_case(
            "sp_coo_2d_nan",
            "2-d COO, fill NaN, zstd then crc32c",
            Layout {
                compressors: Some(vec![zstd(3, false), crc32c()]),
                ..Layout::new(DataType::Float64, &[30, 30], &[10, 10])
            },
            SparseFormat::Coo,
            json!("NaN"),
            80,
        ),
        sparse_case(
            "sp_coo_3d",
            "3-d COO",
            Layout::new(DataType::UInt16, &[10, 12, 8], &[4, 4, 4]),
            SparseFormat::Coo,
            json!(0),
            30,
        ),
        sparse_case(
            "sp_sharded_csr",
            "CSR inner chunks of 20x20 shards",
            Layout {
                shards: Some(vec![20, 20]),
                ..Layout::new(DataType::Float32, &[40, 30], &[10, 10])
            },
            SparseFormat::Csr,
            json!(0.0),
            40,
        ),
        sparse_case(
            "sp_empty",
            "nothing stored: every chunk all fill",
            Layout::new(DataType::Float64, &[20, 20], &[10, 10]),
            SparseFormat::Csr,
            json!(0.0),
            0,
        ),
        Case::array(
            "sp_rb_coo",
            "COO chunks on a regular_bounded grid: prepended by 3 rows (partly filled first chunk)",
            Layout {
                serializer: Serializer::Sparse(SparseFormat::Coo),
                ..Layout::new(DataType::Int64, &[12, 9], &[5, 4])
            },
        )
        .data(coo_on_bounded)
        .requires(&[REGULAR_BOUNDED, SPARSE_CODEC]),
    ]
}

fn sparse_rejects() -> Vec<Case> {
    let codec = |config: Value| json!([{"name": SPARSE_CODEC, "configuration": config}]);
    let csr_u16 =
        codec(json!({"format": "csr", "index_data_type": "uint16", "pointer_data_type": "uint32"}));
    let cases = vec![
        Case::reject(
            "spx_csr_3d",
            "sparse_layout csr on a 3-d array",
            base_doc_with(&[
                ("shape", json!([4, 4, 4])),
                ("chunk_grid", regular_grid(json!([2, 2, 2]))),
                ("codecs", csr_u16.clone()),
            ]),
        ),
        Case::reject(
            "spx_index_too_small",
            "index_data_type uint16 cannot hold column 69999",
            base_doc_with(&[
                ("shape", json!([4, 70000])),
                ("chunk_grid", regular_grid(json!([4, 70000]))),
                ("codecs", csr_u16),
            ]),
        ),
        Case::reject(
            "spx_unknown_key",
            "an unknown configuration key",
            base_doc_with(&[(
                "codecs",
                codec(json!({"format": "coo", "index_data_type": "uint16", "sorted": true})),
            )]),
        ),
        Case::reject(
            "spx_must_understand_false",
            "sparse_layout can never be marked must_understand false (a reader without it must refuse the array)",
            base_doc_with(&[(
                "codecs",
                json!([{"name": SPARSE_CODEC, "must_understand": false,
                        "configuration": {"format": "coo", "index_data_type": "uint16"}}]),
            )]),
        ),
        Case::reject(
            "spx_bad_format",
            "format neither coo, csr nor csc",
            base_doc_with(&[(
                "codecs",
                codec(json!({"format": "dia", "index_data_type": "uint16"})),
            )]),
        ),
    ];
    cases.into_iter().map(|c| c.requires(SP)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_unique_and_requirements_known() {
        let cases = all();
        let mut paths: Vec<&str> = cases.iter().map(|c| c.path.as_str()).collect();
        paths.sort_unstable();
        paths.dedup();
        assert_eq!(paths.len(), cases.len(), "a path used twice");
        for case in &cases {
            for name in case.requires {
                assert!([REGULAR_BOUNDED, SPARSE_CODEC].contains(name), "{name}");
            }
            // the names say which extension a fixture needs
            assert!(!case.path.starts_with("rb") || case.requires.contains(&REGULAR_BOUNDED));
            assert!(!case.path.starts_with("sp") || case.requires.contains(&SPARSE_CODEC));
        }
    }
}
