//! Zarr v2's codecs: the `compressor` and `filters` of a `.zarray` (numcodecs configurations,
//! [`CodecV2`]) as one codec chain of this crate, and back.
//!
//! There is no second implementation of any codec. The v2 codec registry
//! ([`V2CodecRegistry`], filled by [`register_v2_defaults`]) maps a numcodecs `id` to the Zarr
//! v3 definition of the same codec, the one zarr-python 3 writes when it converts an array:
//! `blosc` -> `blosc` (the integer `shuffle` as its name, `typesize` the item size numcodecs
//! sees), `zstd` -> `zstd`, `gzip` -> `gzip`, and every other numcodecs codec `id` ->
//! `numcodecs.<id>` with the same configuration. The v3 codec registry then builds the chain,
//! so a reader built without a codec refuses v2 arrays that need it by name, like v3 ones.
//!
//! [`v3_codecs`] lays the chain out as zarr-python 3.1.6's v2 pipeline (`zarr.codecs._v2`)
//! runs: the chunk in the array's `order` (`F` becomes a `transpose` that reverses the axes,
//! since numcodecs' filters flatten the chunk in memory order), the filters that act on the
//! typed array (`delta`, `fixedscaleoffset`, `astype`, `quantize`, `bitround`, `packbits`), the
//! `bytes` codec in the byte order of the dtype (or of the last filter's `astype`), the filters
//! that act on bytes (`shuffle`, the checksums, compressors used as filters), then the
//! compressor; `pcodec` and `zfpy` as compressors take the place of `bytes`. The stored bytes
//! are the ones numcodecs writes.
//!
//! [`v2_codecs`] is the other way, for arrays written as v2: a v3 chain of that shape becomes
//! `order`, the dtype's byte order, `filters` and `compressor`; what v2 cannot hold (sharding,
//! `crc32c`, `sparse_layout`, another transpose) is refused by name.
//!
//! ```
//! use zarr_codecs::v2::{default_v2_registry, v3_codecs};
//! use zarr_codecs::{default_registry, ChunkRepr, CodecChain};
//! use zarr_meta::v2::ArrayMetadataV2;
//!
//! let zarray = br#"{"zarr_format": 2, "shape": [20, 13], "chunks": [8, 5], "dtype": "<i2",
//!   "compressor": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0},
//!   "fill_value": 0, "order": "F", "filters": [{"id": "delta", "dtype": "<i2"}]}"#;
//! let meta = ArrayMetadataV2::from_slice(zarray)?;
//! let defs = v3_codecs(&meta, &default_v2_registry(), &default_registry())?;
//! let names: Vec<&str> = defs.iter().map(|d| d.name.as_str()).collect();
//! assert_eq!(names, ["transpose", "numcodecs.delta", "bytes", "blosc"]);
//!
//! // an unknown id is refused by name
//! let mut meta = meta;
//! meta.compressor.as_mut().unwrap().id = "mystery".into();
//! let err = v3_codecs(&meta, &default_v2_registry(), &default_registry()).unwrap_err();
//! assert_eq!(err.to_string(), "unknown codec \"mystery\"");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use serde_json::{Map, Value};
use zarr_meta::numpy::{ByteOrder, NumpyDtype};
use zarr_meta::v2::{ArrayMetadataV2, CodecV2, Order};
use zarr_meta::{DataType, ExtensionDef, ExtensionPoint, FillValue, MetaError, Registry};

use crate::bytes::{BytesConfig, Endian};
use crate::codec::Codec;
use crate::error::{CodecError, Result};
use crate::numcodecs::{CodecKind, NUMCODECS, PREFIX};
use crate::registry::{build_codec, CodecRegistry};
use crate::repr::ChunkRepr;
use crate::transpose::{TransposeConfig, TransposeOrder};

/// Turns a numcodecs configuration into the Zarr v3 definition of the same codec, for chunks
/// of the representation the codec sees (after the filters before it).
pub type V2CodecFactory = fn(&CodecV2, &ChunkRepr) -> Result<ExtensionDef>;

/// numcodecs `id` -> [`V2CodecFactory`].
pub type V2CodecRegistry = Registry<V2CodecFactory>;

/// Registers every numcodecs `id` this build has (`blosc`, `zstd`, `gzip` and the codecs of
/// [`crate::numcodecs`]), and records the ones left out by a cargo feature so that using them
/// names the feature.
///
/// # Errors
/// [`MetaError::DuplicateExtension`] if one of the ids is already registered.
pub fn register_v2_defaults(registry: &mut V2CodecRegistry) -> Result<(), MetaError> {
    #[cfg(feature = "blosc")]
    registry.register("blosc", blosc as V2CodecFactory)?;
    #[cfg(not(feature = "blosc"))]
    registry.register_compiled_out("blosc", "blosc");
    #[cfg(feature = "zstd")]
    registry.register("zstd", same_config as V2CodecFactory)?;
    #[cfg(not(feature = "zstd"))]
    registry.register_compiled_out("zstd", "zstd");
    #[cfg(feature = "gzip")]
    registry.register("gzip", same_config as V2CodecFactory)?;
    #[cfg(not(feature = "gzip"))]
    registry.register_compiled_out("gzip", "gzip");
    for id in VLEN_FILTERS {
        #[cfg(feature = "vlen")]
        registry.register(id, vlen as V2CodecFactory)?;
        #[cfg(not(feature = "vlen"))]
        registry.register_compiled_out(id, "vlen");
    }
    for c in NUMCODECS {
        if crate::numcodecs::is_enabled(c.id) {
            let factory = match c.id {
                #[cfg(feature = "zfp")]
                "zfpy" => zfpy as V2CodecFactory,
                _ => numcodecs_name as V2CodecFactory,
            };
            registry.register(c.id, factory)?;
        } else {
            registry.register_compiled_out(c.id, c.feature);
        }
    }
    Ok(())
}

/// A v2 codec registry holding every numcodecs `id` of this build.
pub fn default_v2_registry() -> V2CodecRegistry {
    let mut registry = Registry::new(ExtensionPoint::Codec);
    // cannot fail: the registry is new and the ids are distinct
    let _ = register_v2_defaults(&mut registry);
    registry
}

/// numcodecs' `VLenUTF8` and `VLenBytes`: the v2 filters of `|O` arrays, which are the
/// array -> bytes codecs of the same name in v3.
const VLEN_FILTERS: [&str; 2] = ["vlen-utf8", "vlen-bytes"];

/// `vlen-utf8`, `vlen-bytes` (no configuration).
#[cfg(feature = "vlen")]
fn vlen(codec: &CodecV2, _: &ChunkRepr) -> Result<ExtensionDef> {
    if let Some(key) = codec.configuration.keys().next() {
        return Err(ExtensionDef::new(&codec.id)
            .invalid_configuration(ExtensionPoint::Codec, format!("unknown field {key:?}"))
            .into());
    }
    Ok(ExtensionDef::with_configuration(
        codec.id.clone(),
        Map::new(),
    ))
}

/// `zstd`, `gzip`: the v3 codec of the same name takes numcodecs' configuration as it is.
#[cfg(any(feature = "zstd", feature = "gzip"))]
fn same_config(codec: &CodecV2, _: &ChunkRepr) -> Result<ExtensionDef> {
    Ok(ExtensionDef::with_configuration(
        codec.id.clone(),
        codec.configuration.clone(),
    ))
}

/// The codecs of [`crate::numcodecs`]: `numcodecs.<id>` with the same configuration.
fn numcodecs_name(codec: &CodecV2, _: &ChunkRepr) -> Result<ExtensionDef> {
    Ok(ExtensionDef::with_configuration(
        format!("{PREFIX}{}", codec.id),
        codec.configuration.clone(),
    ))
}

/// v2 `zfpy`: numcodecs 0.16's configuration repeats the parameter of its mode as
/// `compression_kwargs` (`{"mode": 2, "rate": 16, "compression_kwargs": {"rate": 16}}`); the
/// v3 form zarr-python writes has no such field.
#[cfg(feature = "zfp")]
fn zfpy(codec: &CodecV2, repr: &ChunkRepr) -> Result<ExtensionDef> {
    crate::numcodecs::zfp::without_compression_kwargs(&numcodecs_name(codec, repr)?)
}

/// v2 `blosc`: `{"cname", "clevel", "shuffle": -1|0|1|2, "blocksize"}` (numcodecs' `Blosc`;
/// `typesize` optional) -> v3 `blosc` with the shuffle named and `typesize` the item size the
/// compressor sees (numcodecs takes the buffer's item size).
#[cfg(feature = "blosc")]
fn blosc(codec: &CodecV2, repr: &ChunkRepr) -> Result<ExtensionDef> {
    let bad = |reason: String| -> CodecError {
        ExtensionDef::new("blosc")
            .invalid_configuration(ExtensionPoint::Codec, reason)
            .into()
    };
    let c = &codec.configuration;
    for key in c.keys() {
        if !["cname", "clevel", "shuffle", "blocksize", "typesize"].contains(&key.as_str()) {
            return Err(bad(format!("unknown field {key:?}")));
        }
    }
    let typesize = match c.get("typesize") {
        None | Some(Value::Null) => repr.element_size() as u64,
        Some(v) => v
            .as_u64()
            .filter(|t| *t > 0)
            .ok_or_else(|| bad(format!("typesize must be a positive integer, got {v}")))?,
    };
    let shuffle = match c.get("shuffle") {
        None => "shuffle",
        Some(v) => match v.as_i64() {
            Some(-1) if typesize == 1 => "bitshuffle",
            Some(-1) => "shuffle",
            Some(0) => "noshuffle",
            Some(1) => "shuffle",
            Some(2) => "bitshuffle",
            _ => {
                return Err(bad(format!(
                    "shuffle must be -1 (auto), 0, 1 or 2 (bit shuffle), got {v}"
                )))
            }
        },
    };
    let mut out = Map::new();
    out.insert("typesize".into(), Value::from(typesize));
    out.insert(
        "cname".into(),
        c.get("cname").cloned().unwrap_or_else(|| "lz4".into()),
    );
    out.insert(
        "clevel".into(),
        c.get("clevel").cloned().unwrap_or_else(|| 5.into()),
    );
    out.insert("shuffle".into(), Value::from(shuffle));
    out.insert(
        "blocksize".into(),
        c.get("blocksize").cloned().unwrap_or_else(|| 0.into()),
    );
    Ok(ExtensionDef::with_configuration("blosc", out))
}

/// The Zarr v3 codec definitions equal to the `order`, `dtype`, `filters` and `compressor` of
/// `meta`, checked by building each codec (see the module docs for the layout).
///
/// # Errors
/// An unknown or compiled-out `id` (by name), an invalid configuration, or a layout that
/// numcodecs can run but a v3 chain cannot hold ([`CodecError::InvalidChain`]: a filter that
/// acts on the typed array after one that acts on bytes, a bytes filter before `pcodec` or
/// `zfpy`).
pub fn v3_codecs(
    meta: &ArrayMetadataV2,
    v2: &V2CodecRegistry,
    codecs: &CodecRegistry,
) -> Result<Vec<ExtensionDef>> {
    let data_type = meta.dtype.data_type;
    let shape: Vec<u64> = meta.chunks.iter().map(|c| c.get()).collect();
    // `null`: what zarr-python reads in a missing chunk (NaT for datetimes, zero otherwise)
    let fill = meta
        .fill_value
        .clone()
        .unwrap_or_else(|| FillValue::default_for(data_type));
    let mut current = ChunkRepr::new(shape.clone(), data_type, fill);
    let mut defs = Vec::new();
    if meta.order == Order::F && shape.len() > 1 {
        let def: ExtensionDef = TransposeConfig {
            order: TransposeOrder::Permutation((0..shape.len() as u64).rev().collect()),
        }
        .into();
        current = push_array_to_array(&mut defs, def, &current, codecs)?;
    }
    let mut byte_order = meta.dtype.byte_order;
    let mut bytes_filters: Vec<String> = Vec::new();
    let mut serializer: Option<String> = None;
    let steps = meta.filters.iter().flatten().chain(meta.compressor.iter());
    for codec in steps {
        let factory = v2.resolve_required(&ExtensionDef::new(codec.id.clone()))?;
        if VLEN_FILTERS.contains(&codec.id.as_str()) {
            // the serializer of a `|O` array; what follows acts on the bytes it gives
            if let Some(before) = bytes_filters.first().or(serializer.as_ref()) {
                return Err(CodecError::InvalidChain {
                    reason: format!(
                        "{:?} encodes the typed array but comes after {before:?}, which gives \
                         bytes",
                        codec.id
                    ),
                });
            }
            defs.push(factory(codec, &current)?);
            bytes_filters.push(codec.id.clone());
            continue;
        }
        let kind = kind_of(&codec.id);
        if kind == CodecKind::ArrayToArray && bytes_filters.is_empty() && serializer.is_none() {
            let def = factory(codec, &current)?;
            let before = current.data_type;
            current = push_array_to_array(&mut defs, def, &current, codecs)?;
            if current.data_type != before {
                byte_order = output_byte_order(codec, current.data_type);
            }
            continue;
        }
        if kind == CodecKind::ArrayToArray || serializer.is_some() {
            let after = serializer
                .clone()
                .unwrap_or_else(|| bytes_filters[0].clone());
            return Err(CodecError::InvalidChain {
                reason: format!(
                    "v2 filter {:?} acts on the typed array but comes after {after:?}, which \
                     gives bytes",
                    codec.id
                ),
            });
        }
        if kind == CodecKind::ArrayToBytes {
            if let Some(first) = bytes_filters.first() {
                return Err(CodecError::InvalidChain {
                    reason: format!(
                        "{:?} encodes the typed array but comes after the bytes filter {first:?}",
                        codec.id
                    ),
                });
            }
            defs.push(factory(codec, &current)?);
            serializer = Some(codec.id.clone());
            continue;
        }
        if bytes_filters.is_empty() && serializer.is_none() {
            defs.push(bytes_def(current.data_type, byte_order));
        }
        // a bytes filter or compressor sees the bytes (numcodecs: item size 1) after a bytes
        // filter, the typed array otherwise
        let seen = if bytes_filters.is_empty() {
            current.clone()
        } else {
            let len = current.byte_len()? as u64;
            ChunkRepr::new(vec![len], DataType::UInt8, FillValue::zero(DataType::UInt8))
        };
        defs.push(factory(codec, &seen)?);
        bytes_filters.push(codec.id.clone());
    }
    if bytes_filters.is_empty() && serializer.is_none() {
        defs.push(bytes_def(current.data_type, byte_order));
    }
    Ok(defs)
}

/// The kind of the codec of numcodecs `id` (`blosc`, `zstd`, `gzip` and unknown ids are
/// bytes -> bytes).
fn kind_of(id: &str) -> CodecKind {
    NUMCODECS
        .iter()
        .find(|c| c.id == id)
        .map_or(CodecKind::BytesToBytes, |c| c.kind)
}

/// Builds the array -> array codec `def` for `current` (checking it), appends it, and returns
/// the representation it gives the next codec.
fn push_array_to_array(
    defs: &mut Vec<ExtensionDef>,
    def: ExtensionDef,
    current: &ChunkRepr,
    codecs: &CodecRegistry,
) -> Result<ChunkRepr> {
    let built = build_codec(&def, current, codecs)?;
    let next = match built {
        Some(Codec::ArrayToArray(c)) => c.encoded_repr().clone(),
        Some(other) => {
            return Err(CodecError::InvalidChain {
                reason: format!(
                    "{:?} is {}, expected array -> array",
                    def.name,
                    other.kind()
                ),
            })
        }
        None => current.clone(),
    };
    defs.push(def);
    Ok(next)
}

/// The byte order of what a filter that changed the data type gives: the one of its `astype`
/// (`delta`, `fixedscaleoffset`, `quantize`) or `encode_dtype` (`astype`), as numcodecs
/// writes it.
fn output_byte_order(codec: &CodecV2, data_type: DataType) -> Option<ByteOrder> {
    ["astype", "encode_dtype"]
        .iter()
        .filter_map(|k| codec.configuration.get(*k)?.as_str())
        .find_map(|s| NumpyDtype::parse(s).ok())
        .map_or_else(
            || NumpyDtype::native(data_type).byte_order,
            |d| d.byte_order,
        )
}

/// `bytes` in `byte_order` (without one for one-byte types).
fn bytes_def(data_type: DataType, byte_order: Option<ByteOrder>) -> ExtensionDef {
    let endian = data_type.endian_component_size().map(|_| {
        match byte_order.unwrap_or_else(ByteOrder::native) {
            ByteOrder::Little => Endian::Little,
            ByteOrder::Big => Endian::Big,
        }
    });
    BytesConfig { endian }.into()
}

/// The Zarr v2 form of a v3 codec chain: what [`v2_codecs`] gives.
#[derive(Debug, Clone, PartialEq)]
pub struct V2Codecs {
    /// `F` for a leading `transpose` that reverses the axes, else `C`.
    pub order: Order,
    /// The byte order of the stored values (the `bytes` codec's).
    pub byte_order: Option<ByteOrder>,
    /// The filters (`None` when there are none, as zarr-python writes it).
    pub filters: Option<Vec<CodecV2>>,
    /// The compressor: the last bytes -> bytes codec, or `pcodec` / `zfpy`.
    pub compressor: Option<CodecV2>,
}

/// The Zarr v2 form of the v3 chain `defs` of an array of `rank` (the inverse of
/// [`v3_codecs`]).
///
/// # Errors
/// [`CodecError::NoV2Form`] naming the first codec v2 cannot express (sharding, `crc32c`,
/// `sparse_layout`, a transpose other than reversing the axes, a codec after `pcodec` or
/// `zfpy`).
pub fn v2_codecs(defs: &[ExtensionDef], rank: usize) -> Result<V2Codecs> {
    let no = |codec: &ExtensionDef, reason: &str| CodecError::NoV2Form {
        codec: codec.name.clone(),
        reason: reason.to_string(),
    };
    let mut order = Order::C;
    let mut byte_order = None;
    let mut filters = Vec::new();
    let mut compressors: Vec<CodecV2> = Vec::new();
    let mut seen_bytes = false;
    let mut serializer: Option<CodecV2> = None;
    for (i, def) in defs.iter().enumerate() {
        let config = def.configuration.clone().unwrap_or_default();
        if serializer.is_some() {
            return Err(no(
                def,
                "numcodecs' pcodec and zfpy are compressors: nothing may follow them in v2",
            ));
        }
        match def.name.as_str() {
            "transpose" => {
                let reversed: Vec<Value> = (0..rank as u64).rev().map(Value::from).collect();
                let is_f = match config.get("order") {
                    Some(Value::String(s)) => s == "F",
                    Some(Value::Array(a)) => *a == reversed,
                    _ => false,
                };
                if i != 0 || !is_f {
                    return Err(no(
                        def,
                        "v2 has only order \"F\": one transpose reversing the axes, first",
                    ));
                }
                order = Order::F;
            }
            "bytes" => {
                byte_order = match config.get("endian").and_then(Value::as_str) {
                    Some("big") => Some(ByteOrder::Big),
                    Some(_) => Some(ByteOrder::Little),
                    None => None,
                };
                seen_bytes = true;
            }
            "blosc" => {
                let mut c = Map::new();
                for k in ["cname", "clevel"] {
                    if let Some(v) = config.get(k) {
                        c.insert(k.into(), v.clone());
                    }
                }
                let shuffle = match config.get("shuffle").and_then(Value::as_str) {
                    Some("noshuffle") => 0,
                    Some("bitshuffle") => 2,
                    _ => 1,
                };
                c.insert("shuffle".into(), shuffle.into());
                c.insert(
                    "blocksize".into(),
                    config.get("blocksize").cloned().unwrap_or_else(|| 0.into()),
                );
                compressors.push(CodecV2::new("blosc", c));
            }
            id if VLEN_FILTERS.contains(&id) => {
                filters.push(CodecV2::new(id, Map::new()));
                seen_bytes = true;
            }
            "zstd" | "gzip" => {
                let mut config = config;
                // numcodecs' Zstd writes `checksum` only when it is on
                if config.get("checksum") == Some(&Value::Bool(false)) {
                    config.shift_remove("checksum");
                }
                compressors.push(CodecV2::new(def.name.clone(), config));
            }
            name => {
                let id = name.strip_prefix(PREFIX).or(match name {
                    "pcodec" | "zfpy" => Some(name),
                    _ => None,
                });
                let Some(entry) = id.and_then(|id| NUMCODECS.iter().find(|c| c.id == id)) else {
                    return Err(no(def, "Zarr v2 has no such codec"));
                };
                let codec = CodecV2::new(entry.id, config);
                match entry.kind {
                    CodecKind::ArrayToArray if !seen_bytes => filters.push(codec),
                    CodecKind::ArrayToArray => {
                        return Err(no(def, "an array -> array codec after bytes"))
                    }
                    CodecKind::ArrayToBytes => serializer = Some(codec),
                    CodecKind::BytesToBytes => compressors.push(codec),
                }
            }
        }
    }
    let compressor = match serializer {
        Some(s) => {
            filters.append(&mut compressors);
            Some(s)
        }
        None => {
            let last = compressors.pop();
            filters.append(&mut compressors);
            last
        }
    };
    Ok(V2Codecs {
        order,
        byte_order,
        filters: (!filters.is_empty()).then_some(filters),
        compressor,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::default_registry;

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

    #[cfg(all(
        feature = "zlib",
        feature = "crc32",
        feature = "pcodec",
        feature = "bitround",
        feature = "delta"
    ))]
    fn names(defs: &[ExtensionDef]) -> Vec<&str> {
        defs.iter().map(|d| d.name.as_str()).collect()
    }

    #[cfg(all(
        feature = "zlib",
        feature = "crc32",
        feature = "pcodec",
        feature = "bitround",
        feature = "delta"
    ))]
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
            crate::CodecChain::from_defs(&defs, &repr, &v3).unwrap();
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

    #[cfg(feature = "blosc")]
    #[test]
    fn blosc_shuffles_and_typesize() {
        let v2 = default_v2_registry();
        let v3 = default_registry();
        for (dtype, shuffle, want) in [
            ("<i2", -1, "shuffle"),
            ("|u1", -1, "bitshuffle"),
            ("<i4", 0, "noshuffle"),
            ("<i4", 1, "shuffle"),
            ("<f8", 2, "bitshuffle"),
        ] {
            let c = format!(
                r#"{{"id": "blosc", "cname": "zstd", "clevel": 5, "shuffle": {shuffle}, "blocksize": 0}}"#
            );
            let m = zarray(dtype, "C", &c, "null");
            let defs = v3_codecs(&m, &v2, &v3).unwrap();
            let conf = defs[1].configuration.as_ref().unwrap();
            assert_eq!(conf["shuffle"], want);
            assert_eq!(conf["typesize"], m.dtype.data_type.size() as u64);
        }
        let m = zarray(
            "<i4",
            "C",
            r#"{"id": "blosc", "cname": "brotli", "clevel": 5, "shuffle": 1, "blocksize": 0}"#,
            "null",
        );
        let defs = v3_codecs(&m, &v2, &v3).unwrap();
        let repr = ChunkRepr::new(
            vec![8, 5],
            DataType::Int32,
            FillValue::zero(DataType::Int32),
        );
        let err = crate::CodecChain::from_defs(&defs, &repr, &v3).unwrap_err();
        assert!(err.to_string().contains("blosc"), "{err}");
        let m = zarray("<i4", "C", r#"{"id": "blosc", "shuffle": 7}"#, "null");
        let err = v3_codecs(&m, &v2, &v3).unwrap_err();
        assert!(err.to_string().contains("shuffle"), "{err}");
    }

    /// `|O` arrays: the vlen filter is the array -> bytes codec, what follows sees bytes.
    #[cfg(all(feature = "vlen", feature = "zstd", feature = "blosc"))]
    #[test]
    fn object_arrays_of_strings_and_bytes() {
        let v2 = default_v2_registry();
        let v3 = default_registry();
        let doc = |filters: &str, compressor: &str, fill: &str| {
            meta(&format!(
                r#"{{"zarr_format": 2, "shape": [20, 13], "chunks": [8, 5], "dtype": "|O",
                "compressor": {compressor}, "fill_value": {fill}, "order": "C",
                "filters": {filters}}}"#
            ))
        };
        let blosc = r#"{"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}"#;
        for (m, want) in [
            (
                doc(
                    r#"[{"id": "vlen-utf8"}]"#,
                    r#"{"id": "zstd", "level": 0}"#,
                    "\"\"",
                ),
                vec!["vlen-utf8", "zstd"],
            ),
            (
                doc(r#"[{"id": "vlen-bytes"}]"#, "null", "\"cQ==\""),
                vec!["vlen-bytes"],
            ),
            (
                doc(r#"[{"id": "vlen-utf8"}]"#, blosc, "null"),
                vec!["vlen-utf8", "blosc"],
            ),
        ] {
            let defs = v3_codecs(&m, &v2, &v3).unwrap();
            let names: Vec<&str> = defs.iter().map(|d| d.name.as_str()).collect();
            assert_eq!(names, want);
            let t = m.dtype.data_type;
            let fill = m.fill_value.clone().unwrap_or_else(|| FillValue::zero(t));
            let repr = ChunkRepr::new(vec![8, 5], t, fill);
            let chain = crate::CodecChain::from_defs(&defs, &repr, &v3).unwrap();
            let items: Vec<&[u8]> = (0..40).map(|_| b"ab".as_slice()).collect();
            let encoded = chain.encode_vlen(items).unwrap();
            assert_eq!(
                chain.decode_vlen(&encoded).unwrap().get(39),
                Some(&b"ab"[..])
            );
            if want.contains(&"blosc") {
                // numcodecs compresses the bytes of the vlen encoding: item size 1
                assert_eq!(defs[1].configuration.as_ref().unwrap()["typesize"], 1);
            }
            let back = v2_codecs(&defs, 2).unwrap();
            assert_eq!(back.filters, m.filters);
            assert_eq!(back.compressor, m.compressor);
            assert_eq!(back.byte_order, None);
        }
        let bad = doc(r#"[{"id": "vlen-utf8", "x": 1}]"#, "null", "\"\"");
        let err = v3_codecs(&bad, &v2, &v3).unwrap_err();
        assert!(err.to_string().contains("unknown field \"x\""), "{err}");
    }

    #[test]
    fn unknown_and_removed_ids_are_refused_by_name() {
        let v3 = default_registry();
        let m = zarray("<i4", "C", "null", r#"[{"id": "jenkins_lookup3"}]"#);
        let err = v3_codecs(&m, &default_v2_registry(), &v3).unwrap_err();
        assert_eq!(err.to_string(), "unknown codec \"jenkins_lookup3\"");
        let mut without = default_v2_registry();
        without.remove("zlib");
        let m = zarray("<i4", "C", r#"{"id": "zlib", "level": 1}"#, "null");
        let err = v3_codecs(&m, &without, &v3).unwrap_err();
        assert!(err.to_string().contains("zlib"), "{err}");
        // a filter that acts on values after one that gives bytes
        #[cfg(all(feature = "crc32", feature = "delta"))]
        {
            let m = zarray(
                "<i4",
                "C",
                "null",
                r#"[{"id": "crc32"}, {"id": "delta", "dtype": "<i4"}]"#,
            );
            let err = v3_codecs(&m, &default_v2_registry(), &v3).unwrap_err();
            assert!(matches!(err, CodecError::InvalidChain { .. }), "{err}");
        }
    }

    #[test]
    fn what_v2_cannot_hold_is_refused_by_name() {
        for (json, name) in [
            (
                r#"[{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]"#,
                "crc32c",
            ),
            (
                r#"[{"name": "transpose", "configuration": {"order": [1, 0, 2]}}, {"name": "bytes", "configuration": {"endian": "little"}}]"#,
                "transpose",
            ),
            (
                r#"[{"name": "sharding_indexed", "configuration": {}}]"#,
                "sharding_indexed",
            ),
        ] {
            let defs: Vec<ExtensionDef> = serde_json::from_str(json).unwrap();
            let err = v2_codecs(&defs, 3).unwrap_err();
            assert!(
                matches!(&err, CodecError::NoV2Form { codec, .. } if codec == name),
                "{err}"
            );
        }
    }
}
