//! The fixtures `zarr conformance write` produces.
//!
//! Each readable array is written through the library and its expected data is computed
//! independently, in memory (random blocks, pasted, concatenated, cropped), then saved as
//! `PATH.npy` beside it. Documents a reader must refuse are written by hand.

use std::sync::Arc;

use serde_json::{json, Map, Value};
use zarr_array::zarr_grid::geometry::Region;
use zarr_array::zarr_meta::data_type::CORE_DATA_TYPES;
use zarr_array::zarr_store::Store;
use zarr_array::{Array, ArrayBuilder, DataType, ExtensionDef, FillValue, Group};

use crate::error::{zarr, CliError, Result};
use crate::layout::{sparse_def, SparseFormat, SPARSE_CODEC};
use crate::npy;
use crate::store::Ctx;

/// Name of the grid extension.
pub const REGULAR_BOUNDED: &str = "regular_bounded";

/// A small deterministic generator (xorshift64*).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// `n` random bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(n + 8);
        while out.len() < n {
            out.extend_from_slice(&self.next_u64().to_le_bytes());
        }
        out.truncate(n);
        out
    }
}

/// An N-d block in C order, native byte order: the data a fixture must read as.
#[derive(Debug, Clone, PartialEq)]
pub struct Dense {
    /// The data type.
    pub data_type: DataType,
    /// The shape.
    pub shape: Vec<u64>,
    /// The elements.
    pub data: Vec<u8>,
}

fn count(shape: &[u64]) -> usize {
    shape.iter().product::<u64>() as usize
}

impl Dense {
    /// Every element `fill`.
    pub fn filled(data_type: DataType, shape: &[u64], fill: &[u8]) -> Dense {
        Dense {
            data_type,
            shape: shape.to_vec(),
            data: fill.repeat(count(shape)),
        }
    }

    /// Random elements over the type's whole range; floats start with NaN, +Infinity,
    /// -Infinity, -0.0 and a subnormal.
    pub fn random(data_type: DataType, shape: &[u64], rng: &mut Rng) -> Dense {
        let n = count(shape);
        let mut data = rng.bytes(n * data_type.size());
        if data_type == DataType::Bool {
            data.iter_mut().for_each(|b| *b &= 1);
        }
        if let Some(w) = data_type.float_component_size() {
            let specials: Vec<Vec<u8>> = match w {
                2 => [0x7e00u16, 0x7c00, 0xfc00, 0x8000, 0x0001]
                    .iter()
                    .map(|v| v.to_ne_bytes().to_vec())
                    .collect(),
                4 => [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0, 1e-45]
                    .iter()
                    .map(|v| v.to_ne_bytes().to_vec())
                    .collect(),
                _ => [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 5e-324]
                    .iter()
                    .map(|v| v.to_ne_bytes().to_vec())
                    .collect(),
            };
            for (i, s) in specials.iter().enumerate() {
                if (i + 1) * w <= data.len() {
                    data[i * w..(i + 1) * w].copy_from_slice(s);
                }
            }
        }
        Dense {
            data_type,
            shape: shape.to_vec(),
            data,
        }
    }

    /// Mostly `fill`, with about `permille`/1000 of the elements random (never equal to fill).
    pub fn sparse(
        data_type: DataType,
        shape: &[u64],
        fill: &[u8],
        permille: u64,
        rng: &mut Rng,
    ) -> Dense {
        let mut d = Dense::filled(data_type, shape, fill);
        let size = data_type.size();
        for i in 0..count(shape) {
            if rng.next_u64() % 1000 < permille {
                // a small finite value, as the type's bytes
                let v = (rng.next_u64() % 200) as i64 - 100;
                let v = if v == 0 { 7 } else { v };
                let bytes = element_from_i64(data_type, v);
                if !data_type.elements_equal(&bytes, fill) {
                    d.data[i * size..(i + 1) * size].copy_from_slice(&bytes);
                }
            }
        }
        d
    }

    /// Copies `block` into this array at `at`.
    pub fn paste(&mut self, at: &[u64], block: &Dense) {
        let rank = self.shape.len();
        let size = self.data_type.size();
        if count(&block.shape) == 0 {
            return;
        }
        if rank == 0 {
            self.data.copy_from_slice(&block.data);
            return;
        }
        let row = block.shape[rank - 1] as usize * size;
        let outer: Vec<u64> = block.shape[..rank - 1].to_vec();
        let mut idx = vec![0u64; rank - 1];
        for r in 0..count(&outer) {
            // destination offset of this row
            let mut off = 0u64;
            for d in 0..rank {
                let p = if d < rank - 1 { at[d] + idx[d] } else { at[d] };
                off = off * self.shape[d] + p;
            }
            let off = off as usize * size;
            self.data[off..off + row].copy_from_slice(&block.data[r * row..(r + 1) * row]);
            for d in (0..rank - 1).rev() {
                idx[d] += 1;
                if idx[d] < outer[d] {
                    break;
                }
                idx[d] = 0;
            }
        }
    }

    /// `front` then `back` along `axis`.
    pub fn concat(front: &Dense, back: &Dense, axis: usize) -> Dense {
        let mut shape = back.shape.clone();
        shape[axis] += front.shape[axis];
        let mut out = Dense::filled(back.data_type, &shape, &vec![0; back.data_type.size()]);
        out.paste(&vec![0; shape.len()], front);
        let mut at = vec![0; shape.len()];
        at[axis] = front.shape[axis];
        out.paste(&at, back);
        out
    }

    /// The block `[0, shape)`, extended with `fill` where `shape` is larger.
    pub fn resized(&self, shape: &[u64], fill: &[u8]) -> Dense {
        let mut out = Dense::filled(self.data_type, shape, fill);
        let common: Vec<u64> = shape
            .iter()
            .zip(&self.shape)
            .map(|(a, b)| *a.min(b))
            .collect();
        let mut part = Dense::filled(self.data_type, &common, fill);
        // the common part of self
        let rank = shape.len();
        let size = self.data_type.size();
        if count(&common) > 0 {
            for (i, pos) in positions(&common).enumerate() {
                let mut off = 0u64;
                for (d, p) in pos.iter().enumerate() {
                    off = off * self.shape[d] + p;
                }
                let off = off as usize * size;
                part.data[i * size..(i + 1) * size].copy_from_slice(&self.data[off..off + size]);
            }
        }
        out.paste(&vec![0; rank], &part);
        out
    }
}

/// Every position of a shape, in C order.
fn positions(shape: &[u64]) -> impl Iterator<Item = Vec<u64>> + '_ {
    let n = count(shape);
    (0..n).map(move |mut i| {
        let mut pos = vec![0u64; shape.len()];
        for d in (0..shape.len()).rev() {
            pos[d] = (i as u64) % shape[d];
            i /= shape[d] as usize;
        }
        pos
    })
}

fn element_from_i64(t: DataType, v: i64) -> Vec<u8> {
    match t {
        DataType::Bool => vec![u8::from(v != 0)],
        DataType::Int8 | DataType::UInt8 => vec![v as u8],
        DataType::Int16 | DataType::UInt16 => (v as i16).to_ne_bytes().to_vec(),
        DataType::Int32 | DataType::UInt32 => (v as i32).to_ne_bytes().to_vec(),
        DataType::Int64 | DataType::UInt64 => v.to_ne_bytes().to_vec(),
        DataType::Float32 => (v as f32 * 0.25).to_ne_bytes().to_vec(),
        DataType::Float64 => (v as f64 * 0.25).to_ne_bytes().to_vec(),
        DataType::Complex64 => [(v as f32).to_ne_bytes(), (-v as f32).to_ne_bytes()].concat(),
        DataType::Complex128 => [(v as f64).to_ne_bytes(), (-v as f64).to_ne_bytes()].concat(),
        // float16: small integers are exact; build the bits by hand
        DataType::Float16 => f16_bits(v as f32).to_ne_bytes().to_vec(),
        other => vec![v as u8; other.size()],
    }
}

/// float16 bits of a small integer-valued float (|v| < 2048, exact).
fn f16_bits(v: f32) -> u16 {
    if v == 0.0 {
        return 0;
    }
    let sign: u16 = if v < 0.0 { 0x8000 } else { 0 };
    let mut m = v.abs();
    let mut e: i32 = 0;
    while m >= 2.0 {
        m /= 2.0;
        e += 1;
    }
    let frac = ((m - 1.0) * 1024.0) as u16;
    sign | (((e + 15) as u16) << 10) | frac
}

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

fn def(name: &str, config: Value) -> ExtensionDef {
    match config {
        Value::Object(m) => ExtensionDef::with_configuration(name, m),
        _ => ExtensionDef::new(name),
    }
}

fn bytes_def(endian: &str) -> ExtensionDef {
    def("bytes", json!({"endian": endian}))
}

/// A valid small array document that reject fixtures break in one place.
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

fn with(mut doc: Value, f: impl FnOnce(&mut Map<String, Value>)) -> Value {
    if let Value::Object(m) = &mut doc {
        f(m);
    }
    doc
}

/// The manifest fields of a fixture besides its path, reason and requirements.
#[derive(Debug, Clone, Copy)]
struct Head<'a> {
    node: &'a str,
    writer: &'a str,
    expect: &'a str,
    /// Whether an expected `.npy` is saved beside it.
    data: bool,
}

const READ_ARRAY: Head<'static> = Head {
    node: "array",
    writer: "zarr-cli",
    expect: "read",
    data: true,
};
const READ_GROUP: Head<'static> = Head {
    node: "group",
    writer: "zarr-cli",
    expect: "read",
    data: false,
};

/// Writes fixtures into a store and collects the manifest.
struct Writer<'a> {
    ctx: &'a Ctx,
    store: Arc<dyn Store>,
    location: String,
    fixtures: Vec<Value>,
    rng: Rng,
}

impl Writer<'_> {
    fn err(&self, path: &str) -> impl Fn(zarr_array::ArrayError) -> CliError {
        let context = format!("{}/{path}", self.location);
        move |e| zarr(&context, e)
    }

    fn entry(&mut self, path: &str, head: Head<'_>, why: &str, requires: &[&str]) {
        self.fixtures.push(json!({
            "path": path,
            "node": head.node,
            "writer": head.writer,
            "expect": head.expect,
            "data": if head.data { Value::String(format!("{path}.npy")) } else { Value::Null },
            "why": why,
            "requires": requires,
        }));
    }

    /// Saves the expected data beside the array, through the store (a file in a directory,
    /// an object under a remote prefix).
    fn save_npy(&self, path: &str, expected: &Dense) -> Result<()> {
        let key = format!("{path}.npy");
        let bytes = npy::to_bytes(expected.data_type, &expected.shape, &expected.data);
        self.store
            .set(&key, &bytes)
            .map_err(|e| zarr(format!("{}/{key}", self.location), e.into()))
    }

    /// Creates an array, lets `fill` write it (returning the expected data), saves the data.
    fn array(
        &mut self,
        path: &str,
        builder: ArrayBuilder,
        why: &str,
        requires: &[&str],
        fill: impl FnOnce(&mut Array, &mut Rng) -> zarr_array::Result<Dense>,
    ) -> Result<()> {
        let mut array = builder
            .create_with(self.store.clone(), path, &self.ctx.extensions)
            .map_err(self.err(path))?;
        let expected = fill(&mut array, &mut self.rng).map_err(self.err(path))?;
        self.save_npy(path, &expected)?;
        self.entry(path, READ_ARRAY, why, requires);
        Ok(())
    }

    /// An array whose data is one random block over the whole shape.
    fn random(
        &mut self,
        path: &str,
        builder: ArrayBuilder,
        shape: &[u64],
        t: DataType,
        why: &str,
        requires: &[&str],
    ) -> Result<()> {
        let shape = shape.to_vec();
        self.array(path, builder, why, requires, |a, rng| {
            let d = Dense::random(t, &shape, rng);
            a.write_region_bytes(&Region::whole(&shape), &d.data)?;
            Ok(d)
        })
    }

    /// A hand-written `zarr.json`, then (for readable arrays) data written through the
    /// library.
    fn document(
        &mut self,
        path: &str,
        doc: &[u8],
        expect: &str,
        why: &str,
        requires: &[&str],
        node: &str,
    ) -> Result<()> {
        let key = if path.is_empty() {
            "zarr.json".to_string()
        } else {
            format!("{path}/zarr.json")
        };
        self.store
            .set(&key, doc)
            .map_err(|e| zarr(&self.location, e.into()))?;
        self.entry(
            path,
            Head {
                node,
                writer: "hand-written",
                expect,
                data: false,
            },
            why,
            requires,
        );
        Ok(())
    }

    fn reject(&mut self, path: &str, doc: Value, why: &str, requires: &[&str]) -> Result<()> {
        let bytes = serde_json::to_vec_pretty(&doc).unwrap_or_default();
        self.document(path, &bytes, "reject", why, requires, "array")
    }

    /// A hand-written readable array document, filled with random data through the library.
    fn hand_array(
        &mut self,
        path: &str,
        doc: Value,
        why: &str,
        requires: &[&str],
        region: Option<(Vec<u64>, Vec<u64>)>,
    ) -> Result<()> {
        let bytes = serde_json::to_vec_pretty(&doc).unwrap_or_default();
        self.store
            .set(&format!("{path}/zarr.json"), &bytes)
            .map_err(|e| zarr(&self.location, e.into()))?;
        let array = Array::open_with(self.store.clone(), path, &self.ctx.extensions)
            .map_err(self.err(path))?;
        let t = array.data_type();
        let shape = array.shape().to_vec();
        let mut expected = Dense::filled(t, &shape, array.fill_value().as_bytes());
        let (start, size) = region.unwrap_or_else(|| (vec![0; shape.len()], shape.clone()));
        let block = Dense::random(t, &size, &mut self.rng);
        array
            .write_region_bytes(
                &Region::new(start.clone(), size).map_err(|e| zarr(path, e.into()))?,
                &block.data,
            )
            .map_err(self.err(path))?;
        expected.paste(&start, &block);
        self.save_npy(path, &expected)?;
        self.entry(
            path,
            Head {
                writer: "hand-written",
                ..READ_ARRAY
            },
            why,
            requires,
        );
        Ok(())
    }
}

const STD: [u64; 2] = [20, 13];
const STD_CHUNKS: [u64; 2] = [8, 5];

fn std_builder(t: DataType) -> ArrayBuilder {
    ArrayBuilder::new(STD.to_vec(), t).chunk_shape(STD_CHUNKS.to_vec())
}

/// Writes the whole corpus, each array with its expected `.npy`, into `store` (at
/// `location`, for messages); returns the manifest's fixtures.
///
/// # Errors
/// Library or store errors.
pub fn write_corpus(ctx: &Ctx, store: Arc<dyn Store>, location: &str) -> Result<Vec<Value>> {
    let mut w = Writer {
        ctx,
        store,
        location: location.to_string(),
        fixtures: Vec::new(),
        rng: Rng::new(1),
    };
    core_arrays(&mut w)?;
    groups(&mut w)?;
    core_rejects(&mut w)?;
    let bounded = ctx.extensions.chunk_grids.contains(REGULAR_BOUNDED);
    let sparse = ctx.has_codec(SPARSE_CODEC);
    if bounded {
        regular_bounded(&mut w)?;
    }
    if sparse {
        sparse_layout(&mut w, bounded)?;
    }
    Ok(w.fixtures)
}

fn core_arrays(w: &mut Writer<'_>) -> Result<()> {
    for t in CORE_DATA_TYPES {
        w.random(
            &format!("dtype_{}", t.name()),
            std_builder(t).compressors(vec![]),
            &STD,
            t,
            &format!("data type {t}, random data over the whole range, 8x5 chunks with partial edges, bytes codec only"),
            &[],
        )?;
    }
    for t in [
        DataType::UInt16,
        DataType::Int32,
        DataType::Float64,
        DataType::Complex64,
    ] {
        w.random(
            &format!("bytes_big_{}", t.name()),
            std_builder(t)
                .serializer(bytes_def("big"))
                .compressors(vec![]),
            &STD,
            t,
            &format!("bytes codec endian big, {t}"),
            &[],
        )?;
    }
    w.random(
        "transpose_2d",
        std_builder(DataType::Float32).filters(vec![def("transpose", json!({"order": [1, 0]}))]),
        &STD,
        DataType::Float32,
        "transpose order [1, 0], then bytes and zstd",
        &[],
    )?;
    w.random(
        "transpose_3d",
        ArrayBuilder::new(vec![6, 7, 8], DataType::Int16)
            .chunk_shape(vec![3, 4, 5])
            .filters(vec![def("transpose", json!({"order": [2, 0, 1]}))]),
        &[6, 7, 8],
        DataType::Int16,
        "transpose order [2, 0, 1] on a 3-d array",
        &[],
    )?;
    let compressed: Vec<(&str, DataType, Vec<ExtensionDef>, &str)> = vec![
        (
            "gzip_1",
            DataType::Int32,
            vec![def("gzip", json!({"level": 1}))],
            "gzip level 1",
        ),
        (
            "gzip_9",
            DataType::Float32,
            vec![def("gzip", json!({"level": 9}))],
            "gzip level 9",
        ),
        (
            "zstd_0",
            DataType::Int64,
            vec![def("zstd", json!({"level": 0, "checksum": false}))],
            "zstd level 0 (the default)",
        ),
        (
            "zstd_checksum",
            DataType::UInt32,
            vec![def("zstd", json!({"level": 7, "checksum": true}))],
            "zstd level 7 with checksum",
        ),
        (
            "zstd_negative",
            DataType::Int16,
            vec![def("zstd", json!({"level": -5, "checksum": false}))],
            "zstd negative level -5",
        ),
        (
            "crc32c",
            DataType::Int32,
            vec![ExtensionDef::new("crc32c")],
            "crc32c after bytes",
        ),
        (
            "zstd_crc32c",
            DataType::Float64,
            vec![
                def("zstd", json!({"level": 3, "checksum": false})),
                ExtensionDef::new("crc32c"),
            ],
            "zstd then crc32c",
        ),
        (
            "gzip_zstd_crc32c",
            DataType::UInt8,
            vec![
                def("gzip", json!({"level": 2})),
                def("zstd", json!({"level": 1, "checksum": false})),
                ExtensionDef::new("crc32c"),
            ],
            "three bytes->bytes codecs: gzip, zstd, crc32c",
        ),
    ];
    for (name, t, compressors, why) in compressed {
        w.random(
            name,
            std_builder(t).compressors(compressors),
            &STD,
            t,
            why,
            &[],
        )?;
    }
    let blosc = [
        ("lz4", "shuffle", DataType::Int32),
        ("lz4hc", "noshuffle", DataType::UInt8),
        ("blosclz", "bitshuffle", DataType::Float64),
        ("zstd", "bitshuffle", DataType::Int16),
        ("zlib", "shuffle", DataType::Float32),
    ];
    for (cname, shuffle, t) in blosc {
        let c = def(
            "blosc",
            json!({"cname": cname, "clevel": 5, "shuffle": shuffle, "typesize": t.size(), "blocksize": 0}),
        );
        w.random(
            &format!("blosc_{cname}_{shuffle}"),
            std_builder(t).compressors(vec![c]),
            &STD,
            t,
            &format!("blosc cname={cname} shuffle={shuffle} clevel=5, {t}"),
            &[],
        )?;
    }

    // sharding
    w.random(
        "shard_basic",
        std_builder(DataType::Int32).chunk_shape(vec![4, 5]).shards(vec![8, 10]),
        &STD,
        DataType::Int32,
        "shards 8x10 of inner chunks 4x5 (zstd inside), index at the end with crc32c, partial shards",
        &[],
    )?;
    w.array(
        "shard_missing_inner",
        std_builder(DataType::Float32)
            .chunk_shape(vec![4, 5])
            .shards(vec![8, 10])
            .fill_value(
                FillValue::from_json(&json!(7.5), DataType::Float32)
                    .unwrap_or_else(|_| FillValue::zero(DataType::Float32)),
            ),
        "inner chunks missing from a shard and a shard missing, fill 7.5",
        &[],
        |a, rng| {
            let fill = a.fill_value().as_bytes().to_vec();
            let mut d = Dense::filled(DataType::Float32, &STD, &fill);
            let block = Dense::random(DataType::Float32, &[5, 6], rng);
            a.write_region_bytes(&Region::new(vec![1, 2], vec![5, 6])?, &block.data)?;
            d.paste(&[1, 2], &block);
            Ok(d)
        },
    )?;
    w.random(
        "shard_1d",
        ArrayBuilder::new(vec![100], DataType::UInt16)
            .chunk_shape(vec![10])
            .shards(vec![30]),
        &[100],
        DataType::UInt16,
        "1-d: 100 elements, shards of 30, chunks of 10",
        &[],
    )?;
    let shard_start = with(base_doc(), |m| {
        m.insert("shape".into(), json!([20, 13]));
        m.insert("data_type".into(), json!("uint16"));
        m.insert(
            "chunk_grid".into(),
            json!({"name": "regular", "configuration": {"chunk_shape": [8, 10]}}),
        );
        m.insert("codecs".into(), json!([{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [4, 5],
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 3}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
            "index_location": "start"}}]));
    });
    w.hand_array(
        "shard_index_start",
        shard_start,
        "sharding with the index at the start, gzip inside",
        &[],
        None,
    )?;
    let nested = with(base_doc(), |m| {
        m.insert("shape".into(), json!([20, 13]));
        m.insert("data_type".into(), json!("float32"));
        m.insert("fill_value".into(), json!(-1.0));
        m.insert(
            "chunk_grid".into(),
            json!({"name": "regular", "configuration": {"chunk_shape": [8, 8]}}),
        );
        m.insert("codecs".into(), json!([{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [4, 4],
            "codecs": [{"name": "sharding_indexed", "configuration": {
                "chunk_shape": [2, 2],
                "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
                "index_location": "end"}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
            "index_location": "end"}}]));
    });
    w.hand_array(
        "shard_nested",
        nested,
        "sharding inside sharding (8x8 > 4x4 > 2x2), written in part",
        &[],
        Some((vec![3, 1], vec![14, 9])),
    )?;

    // fill values, with one block written and the other chunks missing
    let fills: Vec<(&str, DataType, Value)> = vec![
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
    for (name, t, fill) in fills {
        let why = format!("fill_value {fill} for {t}; 8 of 9 chunks missing");
        let fv =
            FillValue::from_json(&fill, t).map_err(|e| CliError::input(format!("{name}: {e}")))?;
        w.array(name, std_builder(t).fill_value(fv), &why, &[], |a, rng| {
            let mut d = Dense::filled(t, &STD, a.fill_value().as_bytes());
            let block = Dense::random(t, &[8, 5], rng);
            a.write_region_bytes(&Region::new(vec![8, 5], vec![8, 5])?, &block.data)?;
            d.paste(&[8, 5], &block);
            Ok(d)
        })?;
    }
    w.array(
        "missing_all",
        std_builder(DataType::Int32).fill_value(
            FillValue::from_json(&json!(42), DataType::Int32)
                .unwrap_or_else(|_| FillValue::zero(DataType::Int32)),
        ),
        "no chunk stored at all: every element is the fill value 42",
        &[],
        |a, _| {
            Ok(Dense::filled(
                DataType::Int32,
                &STD,
                a.fill_value().as_bytes(),
            ))
        },
    )?;

    // shapes
    w.random(
        "shape_0d",
        ArrayBuilder::new(vec![], DataType::Float64).chunk_shape(vec![]),
        &[],
        DataType::Float64,
        "0-d array (key c)",
        &[],
    )?;
    w.random(
        "shape_1d",
        ArrayBuilder::new(vec![101], DataType::Int32).chunk_shape(vec![10]),
        &[101],
        DataType::Int32,
        "1-d, 101 elements in chunks of 10",
        &[],
    )?;
    w.random(
        "shape_4d",
        ArrayBuilder::new(vec![5, 4, 3, 6], DataType::UInt8).chunk_shape(vec![2, 3, 2, 4]),
        &[5, 4, 3, 6],
        DataType::UInt8,
        "4-d, partial chunks on every axis",
        &[],
    )?;
    w.random(
        "shape_zero_len",
        ArrayBuilder::new(vec![0, 5], DataType::Float32).chunk_shape(vec![3, 3]),
        &[0, 5],
        DataType::Float32,
        "a dimension of length 0",
        &[],
    )?;
    w.random(
        "shape_chunk_bigger",
        ArrayBuilder::new(vec![5, 3], DataType::Int16).chunk_shape(vec![8, 8]),
        &[5, 3],
        DataType::Int16,
        "one chunk larger than the array",
        &[],
    )?;

    // chunk key encodings
    for (name, enc, sep) in [
        ("keys_default_dot", "default", "."),
        ("keys_v2_dot", "v2", "."),
        ("keys_v2_slash", "v2", "/"),
    ] {
        w.random(
            name,
            std_builder(DataType::UInt16).key_encoding(def(enc, json!({"separator": sep}))),
            &STD,
            DataType::UInt16,
            &format!("chunk_key_encoding {enc} with separator {sep:?}"),
            &[],
        )?;
    }
    w.random(
        "dim_names",
        std_builder(DataType::Int8).dimension_names(vec![Some("y".into()), None]),
        &STD,
        DataType::Int8,
        "dimension_names [\"y\", null]",
        &[],
    )?;
    let attrs = obj(json!({
        "title": "attributes of every JSON kind", "unicode": "Zarr \u{2013} \u{00e9}t\u{00e9}",
        "int": -3, "float": 2.5, "bool": true, "null": null, "list": [1, "two", [3]],
        "nested": {"a": {"b": []}}
    }));
    w.random(
        "attrs_rich",
        std_builder(DataType::Float32).attributes(attrs),
        &STD,
        DataType::Float32,
        "attributes of every JSON kind and unicode",
        &[],
    )?;
    Ok(())
}

fn groups(w: &mut Writer<'_>) -> Result<()> {
    let err = |e| zarr("group", e);
    let root = Group::create(
        w.store.clone(),
        "group",
        obj(json!({"title": "a group", "n": 3})),
    )
    .map_err(err)?;
    w.entry(
        "group",
        READ_GROUP,
        "group with attributes; members a, sub, empty",
        &[],
    );
    w.random(
        "group/a",
        ArrayBuilder::new(vec![5, 4], DataType::Int32).chunk_shape(vec![2, 2]),
        &[5, 4],
        DataType::Int32,
        "array directly in a group",
        &[],
    )?;
    root.create_group("sub", obj(json!({"level": 2})))
        .map_err(err)?;
    w.entry(
        "group/sub",
        READ_GROUP,
        "nested group with attributes; member b",
        &[],
    );
    w.random(
        "group/sub/b",
        ArrayBuilder::new(vec![7], DataType::Float64).chunk_shape(vec![3]),
        &[7],
        DataType::Float64,
        "array in a nested group",
        &[],
    )?;
    root.create_group("empty", Map::new()).map_err(err)?;
    w.entry("group/empty", READ_GROUP, "a group without members", &[]);
    let bad_group =
        json!({"zarr_format": 3, "node_type": "group", "attributes": {}, "surprise": 1});
    let bytes = serde_json::to_vec_pretty(&bad_group).unwrap_or_default();
    w.document(
        "reject_group_unknown_field",
        &bytes,
        "reject",
        "group with an unknown field not marked must_understand false",
        &[],
        "group",
    )?;
    Ok(())
}

fn core_rejects(w: &mut Writer<'_>) -> Result<()> {
    w.document(
        "reject_bad_json",
        b"{\"zarr_format\": 3, \"node_type\": \"array\", \"shape\": [4, ",
        "reject",
        "truncated JSON",
        &[],
        "array",
    )?;
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "reject_zarr_format_2",
            with(base_doc(), |m| {
                m.insert("zarr_format".into(), json!(2));
            }),
            "zarr_format 2 in a zarr.json",
        ),
        (
            "reject_missing_shape",
            with(base_doc(), |m| {
                m.remove("shape");
            }),
            "required field shape missing",
        ),
        (
            "reject_missing_codecs",
            with(base_doc(), |m| {
                m.remove("codecs");
            }),
            "required field codecs missing",
        ),
        (
            "reject_unknown_grid",
            with(base_doc(), |m| {
                m.insert(
                    "chunk_grid".into(),
                    json!({"name": "hexagonal", "configuration": {"chunk_shape": [2, 2]}}),
                );
            }),
            "unknown chunk grid",
        ),
        (
            "reject_unknown_codec",
            with(base_doc(), |m| {
                m.insert("codecs".into(), json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "lzma9"}]));
            }),
            "unknown codec",
        ),
        (
            "reject_unknown_data_type",
            with(base_doc(), |m| {
                m.insert("data_type".into(), json!("int3"));
            }),
            "unknown data type",
        ),
        (
            "reject_fill_string_for_int",
            with(base_doc(), |m| {
                m.insert("fill_value".into(), json!("abc"));
            }),
            "fill_value a string for int32",
        ),
        (
            "reject_unknown_field",
            with(base_doc(), |m| {
                m.insert("surprise".into(), json!({"a": 1}));
            }),
            "unknown top-level field without must_understand false",
        ),
        (
            "reject_no_array_to_bytes",
            with(base_doc(), |m| {
                m.insert(
                    "codecs".into(),
                    json!([{"name": "gzip", "configuration": {"level": 1}}]),
                );
            }),
            "codec chain without an array->bytes codec",
        ),
        (
            "reject_chunk_shape_zero",
            with(base_doc(), |m| {
                m.insert(
                    "chunk_grid".into(),
                    json!({"name": "regular", "configuration": {"chunk_shape": [0, 2]}}),
                );
            }),
            "a chunk size of 0",
        ),
        (
            "reject_gzip_level",
            with(base_doc(), |m| {
                m.insert("codecs".into(), json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 10}}]));
            }),
            "gzip level 10 (0-9)",
        ),
        (
            "reject_blosc_cname",
            with(base_doc(), |m| {
                m.insert("codecs".into(), json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "blosc", "configuration": {"cname": "brotli", "clevel": 5, "shuffle": "shuffle", "typesize": 4, "blocksize": 0}}]));
            }),
            "blosc cname brotli",
        ),
        (
            "reject_transpose_order",
            with(base_doc(), |m| {
                m.insert("codecs".into(), json!([{"name": "transpose", "configuration": {"order": [0, 0]}}, {"name": "bytes", "configuration": {"endian": "little"}}]));
            }),
            "transpose order that is not a permutation",
        ),
        (
            "reject_shard_not_divisor",
            with(base_doc(), |m| {
                m.insert(
                    "chunk_grid".into(),
                    json!({"name": "regular", "configuration": {"chunk_shape": [4, 4]}}),
                );
                m.insert("codecs".into(), json!([{"name": "sharding_indexed", "configuration": {"chunk_shape": [3, 3], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}], "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}], "index_location": "end"}}]));
            }),
            "inner chunk shape that does not divide the shard",
        ),
    ];
    for (name, doc, why) in cases {
        w.reject(name, doc, why, &[])?;
    }
    Ok(())
}

fn regular_bounded(w: &mut Writer<'_>) -> Result<()> {
    let rb = &[REGULAR_BOUNDED];
    let i32s = |v: i32, n: usize| -> Vec<u8> { v.to_ne_bytes().repeat(n) };
    w.array(
        "rb_prepended_2d",
        ArrayBuilder::new(vec![6, 4], DataType::Int32).chunk_shape(vec![4, 4]),
        "the worked example: 6x4 of ones in 4x4 chunks, three rows of twos prepended (domain [-3, 6) x [0, 4), chunk -1 partly filled)",
        rb,
        |a, _| {
            a.write_region_bytes(&Region::whole(&[6, 4]), &i32s(1, 24))?;
            a.prepend_bytes(&[3, 4], &i32s(2, 12), 0)?;
            let ones = Dense { data_type: DataType::Int32, shape: vec![6, 4], data: i32s(1, 24) };
            let twos = Dense { data_type: DataType::Int32, shape: vec![3, 4], data: i32s(2, 12) };
            Ok(Dense::concat(&twos, &ones, 0))
        },
    )?;
    w.random(
        "rb_created",
        ArrayBuilder::new(vec![10, 7], DataType::Int16)
            .chunk_shape(vec![4, 3])
            .lower_bound(vec![-5, 2]),
        &[10, 7],
        DataType::Int16,
        "created regular_bounded: lower_bound [-5, 2], origin 0",
        rb,
    )?;
    w.random(
        "rb_origin",
        ArrayBuilder::new(vec![9, 8], DataType::Float32)
            .chunk_shape(vec![4, 3])
            .lower_bound(vec![-3, 4])
            .origin(vec![1, -2]),
        &[9, 8],
        DataType::Float32,
        "lower_bound [-3, 4] with origin [1, -2]: partly filled first chunks on both axes",
        rb,
    )?;
    w.array(
        "rb_prepend_3d",
        ArrayBuilder::new(vec![5, 4, 6], DataType::UInt8).chunk_shape(vec![2, 3, 4]),
        "3-d, prepended by 1, 2 and 3 on axes 0, 1 and 2",
        rb,
        |a, rng| {
            let mut cur = Dense::random(DataType::UInt8, &[5, 4, 6], rng);
            a.write_region_bytes(&Region::whole(&[5, 4, 6]), &cur.data)?;
            for axis in 0..3 {
                let mut shape = cur.shape.clone();
                shape[axis] = axis as u64 + 1;
                let block = Dense::random(DataType::UInt8, &shape, rng);
                a.prepend_bytes(&shape, &block.data, axis)?;
                cur = Dense::concat(&block, &cur, axis);
            }
            Ok(cur)
        },
    )?;
    w.array(
        "rb_sharded",
        ArrayBuilder::new(vec![12, 10], DataType::Int32)
            .chunk_shape(vec![4, 4])
            .shards(vec![8, 8]),
        "sharded (8x8 shards of 4x4 chunks), prepended by 5 rows: part of a shard",
        rb,
        |a, rng| {
            let base = Dense::random(DataType::Int32, &[12, 10], rng);
            a.write_region_bytes(&Region::whole(&[12, 10]), &base.data)?;
            let front = Dense::random(DataType::Int32, &[5, 10], rng);
            a.prepend_bytes(&[5, 10], &front.data, 0)?;
            Ok(Dense::concat(&front, &base, 0))
        },
    )?;
    w.array(
        "rb_grow_mix",
        ArrayBuilder::new(vec![30], DataType::Int32).chunk_shape(vec![8]),
        "1-d: prepend 5, append 7, prepend 3, resize to 40",
        rb,
        |a, rng| {
            let mut cur = Dense::random(DataType::Int32, &[30], rng);
            a.write_region_bytes(&Region::whole(&[30]), &cur.data)?;
            let p5 = Dense::random(DataType::Int32, &[5], rng);
            a.prepend_bytes(&[5], &p5.data, 0)?;
            cur = Dense::concat(&p5, &cur, 0);
            let a7 = Dense::random(DataType::Int32, &[7], rng);
            a.append_bytes(&[7], &a7.data, 0)?;
            cur = Dense::concat(&cur, &a7, 0);
            let p3 = Dense::random(DataType::Int32, &[3], rng);
            a.prepend_bytes(&[3], &p3.data, 0)?;
            cur = Dense::concat(&p3, &cur, 0);
            a.resize(&[40])?;
            Ok(cur.resized(&[40], a.fill_value().as_bytes()))
        },
    )?;
    w.random(
        "rb_keys_v2",
        ArrayBuilder::new(vec![10, 3], DataType::UInt8)
            .chunk_shape(vec![4, 2])
            .lower_bound(vec![-6, 0])
            .key_encoding(def("v2", json!({"separator": "."}))),
        &[10, 3],
        DataType::UInt8,
        "v2 chunk keys with negative grid indices (-2.0, -1.1)",
        rb,
    )?;
    w.array(
        "rb_fill_nan",
        ArrayBuilder::new(vec![10, 10], DataType::Float64)
            .chunk_shape(vec![4, 4])
            .lower_bound(vec![-2, -2])
            .fill_value(
                FillValue::from_json(&json!("NaN"), DataType::Float64)
                    .unwrap_or_else(|_| FillValue::zero(DataType::Float64)),
            ),
        "fill NaN, lower_bound [-2, -2], only a 3x3 block written",
        rb,
        |a, rng| {
            let mut d = Dense::filled(DataType::Float64, &[10, 10], a.fill_value().as_bytes());
            let block = Dense::random(DataType::Float64, &[3, 3], rng);
            a.write_region_bytes(&Region::new(vec![3, 3], vec![3, 3])?, &block.data)?;
            d.paste(&[3, 3], &block);
            Ok(d)
        },
    )?;
    let grid = |config: Value| json!({"name": REGULAR_BOUNDED, "configuration": config});
    let good = json!({"chunk_shape": [2, 2], "origin": [0, 0], "lower_bound": [-1, 0]});
    let rejects: Vec<(&str, Value, &str)> = vec![
        (
            "rbx_must_understand_false",
            with(base_doc(), |m| {
                m.insert("chunk_grid".into(), json!({"name": REGULAR_BOUNDED, "configuration": good.clone(), "must_understand": false}));
            }),
            "a chunk grid cannot carry must_understand (grids can never be ignored)",
        ),
        (
            "rbx_unknown_key",
            with(base_doc(), |m| {
                m.insert("chunk_grid".into(), grid(json!({"chunk_shape": [2, 2], "origin": [0, 0], "lower_bound": [-1, 0], "offset": [0, 0]})));
            }),
            "an unknown configuration key",
        ),
        (
            "rbx_rank",
            with(base_doc(), |m| {
                m.insert(
                    "chunk_grid".into(),
                    grid(json!({"chunk_shape": [2, 2], "origin": [0, 0], "lower_bound": [-1]})),
                );
            }),
            "lower_bound of the wrong rank",
        ),
        (
            "rbx_overflow",
            with(base_doc(), |m| {
                m.insert("chunk_grid".into(), grid(json!({"chunk_shape": [2, 2], "origin": [1, 0], "lower_bound": [i64::MIN, 0]})));
            }),
            "lower_bound - origin overflows i64",
        ),
        (
            "rbx_zero_chunk",
            with(base_doc(), |m| {
                m.insert(
                    "chunk_grid".into(),
                    grid(json!({"chunk_shape": [0, 2], "origin": [0, 0], "lower_bound": [0, 0]})),
                );
            }),
            "a chunk size of 0",
        ),
    ];
    for (name, doc, why) in rejects {
        w.reject(name, doc, why, rb)?;
    }
    Ok(())
}

fn sparse_layout(w: &mut Writer<'_>, bounded: bool) -> Result<()> {
    let sp = &[SPARSE_CODEC];
    struct Case {
        name: &'static str,
        t: DataType,
        shape: Vec<u64>,
        chunks: Vec<u64>,
        shards: Option<Vec<u64>>,
        format: SparseFormat,
        fill: Value,
        compressors: Option<Vec<ExtensionDef>>,
        permille: u64,
        why: &'static str,
    }
    let base = |name, t, shape: &[u64], chunks: &[u64], format, fill, why| Case {
        name,
        t,
        shape: shape.to_vec(),
        chunks: chunks.to_vec(),
        shards: None,
        format,
        fill,
        compressors: None,
        permille: 50,
        why,
    };
    let cases = vec![
        Case {
            compressors: Some(vec![]),
            ..base(
                "sp_csr",
                DataType::Float32,
                &[60, 50],
                &[20, 25],
                SparseFormat::Csr,
                json!(0.0),
                "CSR chunks, no compressor, 5% dense",
            )
        },
        base(
            "sp_csc",
            DataType::Int32,
            &[40, 30],
            &[16, 16],
            SparseFormat::Csc,
            json!(-1),
            "CSC chunks, zstd, fill -1, partial edge chunks",
        ),
        Case {
            compressors: Some(vec![
                def("zstd", json!({"level": 3, "checksum": false})),
                ExtensionDef::new("crc32c"),
            ]),
            permille: 80,
            ..base(
                "sp_coo_2d_nan",
                DataType::Float64,
                &[30, 30],
                &[10, 10],
                SparseFormat::Coo,
                json!("NaN"),
                "2-d COO, fill NaN, zstd then crc32c",
            )
        },
        Case {
            permille: 30,
            ..base(
                "sp_coo_3d",
                DataType::UInt16,
                &[10, 12, 8],
                &[4, 4, 4],
                SparseFormat::Coo,
                json!(0),
                "3-d COO",
            )
        },
        Case {
            shards: Some(vec![20, 20]),
            permille: 40,
            ..base(
                "sp_sharded_csr",
                DataType::Float32,
                &[40, 30],
                &[10, 10],
                SparseFormat::Csr,
                json!(0.0),
                "CSR inner chunks of 20x20 shards",
            )
        },
        Case {
            permille: 0,
            ..base(
                "sp_empty",
                DataType::Float64,
                &[20, 20],
                &[10, 10],
                SparseFormat::Csr,
                json!(0.0),
                "nothing stored: every chunk all fill",
            )
        },
    ];
    for c in cases {
        let fv = FillValue::from_json(&c.fill, c.t)
            .map_err(|e| CliError::input(format!("{}: {e}", c.name)))?;
        let mut b = ArrayBuilder::new(c.shape.clone(), c.t)
            .chunk_shape(c.chunks.clone())
            .fill_value(fv)
            .serializer(sparse_def(c.format, &c.chunks)?);
        if let Some(s) = c.shards {
            b = b.shards(s);
        }
        if let Some(comp) = c.compressors {
            b = b.compressors(comp);
        }
        let (t, shape, permille) = (c.t, c.shape, c.permille);
        w.array(c.name, b, c.why, sp, |a, rng| {
            let d = Dense::sparse(t, &shape, a.fill_value().as_bytes(), permille, rng);
            a.write_region_bytes(&Region::whole(&shape), &d.data)?;
            Ok(d)
        })?;
    }
    if bounded {
        w.array(
            "sp_rb_coo",
            ArrayBuilder::new(vec![12, 9], DataType::Int64)
                .chunk_shape(vec![5, 4])
                .serializer(sparse_def(SparseFormat::Coo, &[5, 4])?),
            "COO chunks on a regular_bounded grid: prepended by 3 rows (partly filled first chunk)",
            &[REGULAR_BOUNDED, SPARSE_CODEC],
            |a, rng| {
                let base = Dense::sparse(DataType::Int64, &[12, 9], &[0; 8], 100, rng);
                a.write_region_bytes(&Region::whole(&[12, 9]), &base.data)?;
                let front = Dense::sparse(DataType::Int64, &[3, 9], &[0; 8], 200, rng);
                a.prepend_bytes(&[3, 9], &front.data, 0)?;
                Ok(Dense::concat(&front, &base, 0))
            },
        )?;
    }
    let codec = |config: Value| json!([{"name": SPARSE_CODEC, "configuration": config}]);
    let rejects: Vec<(&str, Value, &str)> = vec![
        (
            "spx_csr_3d",
            with(base_doc(), |m| {
                m.insert("shape".into(), json!([4, 4, 4]));
                m.insert(
                    "chunk_grid".into(),
                    json!({"name": "regular", "configuration": {"chunk_shape": [2, 2, 2]}}),
                );
                m.insert("codecs".into(), codec(json!({"format": "csr", "index_data_type": "uint16", "pointer_data_type": "uint32"})));
            }),
            "sparse_layout csr on a 3-d array",
        ),
        (
            "spx_index_too_small",
            with(base_doc(), |m| {
                m.insert("shape".into(), json!([4, 70000]));
                m.insert(
                    "chunk_grid".into(),
                    json!({"name": "regular", "configuration": {"chunk_shape": [4, 70000]}}),
                );
                m.insert("codecs".into(), codec(json!({"format": "csr", "index_data_type": "uint16", "pointer_data_type": "uint32"})));
            }),
            "index_data_type uint16 cannot hold column 69999",
        ),
        (
            "spx_unknown_key",
            with(base_doc(), |m| {
                m.insert(
                    "codecs".into(),
                    codec(json!({"format": "coo", "index_data_type": "uint16", "sorted": true})),
                );
            }),
            "an unknown configuration key",
        ),
        (
            "spx_bad_format",
            with(base_doc(), |m| {
                m.insert(
                    "codecs".into(),
                    codec(json!({"format": "dia", "index_data_type": "uint16"})),
                );
            }),
            "format neither coo, csr nor csc",
        ),
    ];
    for (name, doc, why) in rejects {
        w.reject(name, doc, why, sp)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_helpers() {
        let t = DataType::UInt8;
        let a = Dense {
            data_type: t,
            shape: vec![2, 3],
            data: vec![1, 2, 3, 4, 5, 6],
        };
        let b = Dense {
            data_type: t,
            shape: vec![1, 3],
            data: vec![7, 8, 9],
        };
        assert_eq!(
            Dense::concat(&b, &a, 0).data,
            vec![7, 8, 9, 1, 2, 3, 4, 5, 6]
        );
        let c = Dense {
            data_type: t,
            shape: vec![2, 1],
            data: vec![0, 0],
        };
        assert_eq!(Dense::concat(&c, &a, 1).data, vec![0, 1, 2, 3, 0, 4, 5, 6]);
        assert_eq!(a.resized(&[3, 2], &[9]).data, vec![1, 2, 4, 5, 9, 9]);
        let mut z = Dense::filled(t, &[3, 3], &[0]);
        z.paste(
            &[1, 1],
            &Dense {
                data_type: t,
                shape: vec![2, 2],
                data: vec![1, 2, 3, 4],
            },
        );
        assert_eq!(z.data, vec![0, 0, 0, 0, 1, 2, 0, 3, 4]);
        assert_eq!(f16_bits(1.0), 0x3c00);
        assert_eq!(f16_bits(-2.0), 0xc000);
        assert_eq!(f16_bits(100.0), 0x5640);
    }
}
