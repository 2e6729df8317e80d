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
//! `bytes` codec in the byte order of the values the last filter gives, the filters that act
//! on bytes (`shuffle`, the checksums, compressors used as filters), then the compressor;
//! `pcodec` and `zfpy` as compressors take the place of `bytes`. The stored bytes are the ones
//! numcodecs writes.
//!
//! Byte orders follow numcodecs: a filter views the bytes it receives as its `dtype`
//! (`decode_dtype`) and gives values of its `astype` (`encode_dtype`, `dtype` when absent), so
//! the values in flight start in the byte order of the `.zarray` dtype and take the one of each
//! filter's `astype`; a filter that changes only the byte order (`Delta(dtype=">i4",
//! astype="<i4")`) changes the stored one. A filter whose `dtype` has the other byte order
//! than the values it receives makes numcodecs reinterpret their bytes (`[1, 2]` as `>i4`
//! viewed as `<i4` is `[16777216, 33554432]`): no codec chain computes that, and the array is
//! refused ([`CodecError::V2ByteReinterpretation`]).
//!
//! [`v2_codecs`] is the other way, for arrays written as v2: a v3 chain of that shape becomes
//! `order`, the dtype's byte order (the one the first filter's `dtype` views, else the
//! `bytes` codec's), `filters` and `compressor`; what v2 cannot hold (sharding, `crc32c`,
//! `sparse_layout`, another transpose, byte orders of the filters and `bytes` that numcodecs
//! would reinterpret) is refused by name.
//!
//! ```
//! use zarr_codecs::v2::{default_v2_registry, v3_codecs};
//! use zarr_codecs::{default_registry, ChunkRepr, CodecChain};
//! use zarr_meta::v2::ArrayMetadataV2;
//!
//! let zarray = br#"{"zarr_format": 2, "shape": [20, 13], "chunks": [8, 5], "dtype": "<i2",
//!   "compressor": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0},
//!   "fill_value": 0, "order": "F", "filters": null}"#;
//! let meta = ArrayMetadataV2::from_slice(zarray)?;
//! let defs = v3_codecs(&meta, &default_v2_registry(), &default_registry())?;
//! let names: Vec<&str> = defs.iter().map(|d| d.name.as_str()).collect();
//! assert_eq!(names, ["transpose", "bytes", "blosc"]);
//!
//! // a numcodecs filter is `numcodecs.<id>`, which this crate's registry knows by name only
//! // (zarr_numcodecs::register adds the codecs)
//! let mut meta = meta;
//! let delta = serde_json::json!({"id": "delta", "dtype": "<i2"});
//! meta.filters = Some(vec![zarr_meta::v2::CodecV2::from_value(&delta, "filters")?]);
//! let err = v3_codecs(&meta, &default_v2_registry(), &default_registry()).unwrap_err();
//! assert!(err.to_string().contains(r#"enable cargo feature "numcodecs""#), "{err}");
//!
//! // an unknown id is refused by name
//! meta.filters = None;
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

/// Registers every numcodecs `id` this build has (`blosc`, `zstd`, `gzip`, `vlen-utf8`,
/// `vlen-bytes`), and records the ones left out by a cargo feature so that using them names
/// the feature; the codecs of [`crate::numcodecs`] are always registered, as
/// `numcodecs.<id>`, which the v3 registry builds (with zarr-numcodecs) or refuses naming the
/// feature `numcodecs`.
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
    // every numcodecs id, whether or not zarr-numcodecs is in the build: the v3 registry
    // builds `numcodecs.<id>` or refuses it naming the feature
    for c in NUMCODECS {
        let factory = match c.id {
            "zfpy" => zfpy as V2CodecFactory,
            _ => numcodecs_name as V2CodecFactory,
        };
        registry.register(c.id, factory)?;
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
fn zfpy(codec: &CodecV2, repr: &ChunkRepr) -> Result<ExtensionDef> {
    without_compression_kwargs(&numcodecs_name(codec, repr)?)
}

/// `def` (a `numcodecs.zfpy` definition) without the `compression_kwargs` that numcodecs 0.16's `ZFPY.get_config` adds, and
/// so zarr-python writes (`{"mode": 2, "rate": 16, "compression_kwargs": {"rate": 16}}`):
/// numcodecs derives them from the mode and its parameter and ignores the field when it reads
/// it; one that contradicts the configuration is refused.
///
/// # Errors
/// An invalid configuration: `compression_kwargs` not an object, or giving a parameter
/// another value than the configuration.
pub fn without_compression_kwargs(def: &ExtensionDef) -> Result<ExtensionDef> {
    let mut def = def.clone();
    let Some(config) = def.configuration.as_mut() else {
        return Ok(def);
    };
    let kwargs = match config.shift_remove("compression_kwargs") {
        None => return Ok(def),
        Some(serde_json::Value::Object(kwargs)) => kwargs,
        Some(other) => {
            return Err(def
                .invalid_configuration(
                    ExtensionPoint::Codec,
                    format!("compression_kwargs must be an object, got {other}"),
                )
                .into())
        }
    };
    for (k, v) in kwargs {
        if config.get(&k).is_some_and(|mine| *mine != v) {
            let reason = format!(
                "compression_kwargs gives {k} = {v}, the configuration {}",
                config[&k]
            );
            return Err(def
                .invalid_configuration(ExtensionPoint::Codec, reason)
                .into());
        }
    }
    Ok(def)
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
/// `zfpy`; [`CodecError::V2ByteReinterpretation`]: a filter's `dtype` in the other byte
/// order than the values it receives).
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
            current = push_array_to_array(&mut defs, def, &current, codecs)?;
            byte_order = filter_byte_order(codec, byte_order)?;
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

/// The fields of a numcodecs filter's configuration naming the data type it views its input
/// as and the one of its output: `dtype` and `astype` (`delta`, `fixedscaleoffset`,
/// `quantize`), `decode_dtype` and `encode_dtype` (`astype`).
fn dtype_fields(id: &str) -> Option<(&'static str, &'static str)> {
    match id {
        "delta" | "fixedscaleoffset" | "quantize" => Some(("dtype", "astype")),
        "astype" => Some(("decode_dtype", "encode_dtype")),
        _ => None,
    }
}

/// The data type `field` of `config` names, with its text (`None` when absent or not a NumPy
/// type, which building the codec refuses).
fn dtype_field(config: &Map<String, Value>, field: &str) -> Option<(String, NumpyDtype)> {
    let text = config.get(field)?.as_str()?;
    Some((text.to_string(), NumpyDtype::parse(text).ok()?))
}

fn endian_name(order: ByteOrder) -> &'static str {
    match order {
        ByteOrder::Little => "little",
        ByteOrder::Big => "big",
    }
}

/// The byte order of the values the v2 filter `codec` gives when it receives values in
/// `received` (`None`: one-byte values), as numcodecs runs it: it views the bytes it receives
/// as its `dtype` (`decode_dtype`) and gives its `astype` (`encode_dtype`; `dtype` when
/// absent); the other filters keep the byte order.
///
/// # Errors
/// [`CodecError::V2ByteReinterpretation`] for a `dtype` in the other byte order than
/// `received`: numcodecs reinterprets the bytes of every value then.
fn filter_byte_order(codec: &CodecV2, received: Option<ByteOrder>) -> Result<Option<ByteOrder>> {
    let Some((input, output)) = dtype_fields(&codec.id) else {
        return Ok(received);
    };
    let viewed = dtype_field(&codec.configuration, input);
    if let (Some(r), Some((text, d))) = (received, &viewed) {
        if d.byte_order.is_some_and(|v| v != r) {
            return Err(CodecError::V2ByteReinterpretation {
                filter: codec.id.clone(),
                field: input,
                dtype: text.clone(),
                received: endian_name(r),
            });
        }
    }
    Ok(match dtype_field(&codec.configuration, output).or(viewed) {
        Some((_, d)) => d.byte_order,
        None => received,
    })
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
    /// The byte order of the `.zarray` dtype: that of the first filter's `dtype` (or
    /// `decode_dtype`), which numcodecs views the array's bytes as, else the `bytes` codec's.
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
/// `zfpy`, a filter whose `dtype` has another byte order than the `astype` of the filter
/// before it, or a `bytes` codec storing the other byte order than the last filter's
/// `astype`: numcodecs would reinterpret the bytes there).
pub fn v2_codecs(defs: &[ExtensionDef], rank: usize) -> Result<V2Codecs> {
    let no = |codec: &ExtensionDef, reason: &str| CodecError::NoV2Form {
        codec: codec.name.clone(),
        reason: reason.to_string(),
    };
    let mut order = Order::C;
    let mut byte_order = None;
    // the byte order of the values in flight: `None` until a filter's `dtype` or the bytes
    // codec fixes it (and with it the array's); `Some(None)` for one-byte values
    let mut in_flight: Option<Option<ByteOrder>> = None;
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
                let endian = match config.get("endian").and_then(Value::as_str) {
                    Some("big") => Some(ByteOrder::Big),
                    Some(_) => Some(ByteOrder::Little),
                    None => None,
                };
                match in_flight {
                    None => byte_order = endian,
                    Some(Some(given)) if endian.is_some_and(|e| e != given) => {
                        return Err(no(
                            def,
                            &format!(
                                "it stores {}-endian values but the filters give {}-endian \
                                 ones, which numcodecs stores as they are",
                                endian_name(endian.unwrap_or(given)),
                                endian_name(given)
                            ),
                        ))
                    }
                    Some(_) => {}
                }
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
                if let (CodecKind::ArrayToArray, Some((input, output))) =
                    (entry.kind, dtype_fields(entry.id))
                {
                    let viewed = dtype_field(&config, input);
                    if let Some((text, d)) = &viewed {
                        match in_flight {
                            None => byte_order = d.byte_order,
                            Some(Some(given)) if d.byte_order.is_some_and(|v| v != given) => {
                                return Err(no(
                                    def,
                                    &format!(
                                        "its {input} {text:?} views the {}-endian values the \
                                         filter before it gives in the other byte order, \
                                         reinterpreting their bytes in numcodecs",
                                        endian_name(given)
                                    ),
                                ))
                            }
                            Some(_) => {}
                        }
                    }
                    if let Some((_, d)) = dtype_field(&config, output).or(viewed) {
                        in_flight = Some(d.byte_order);
                    }
                }
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
        let m = zarray("<i4", "C", "null", r#"[{"id": "mystery"}]"#);
        let err = v3_codecs(&m, &default_v2_registry(), &v3).unwrap_err();
        assert_eq!(err.to_string(), "unknown codec \"mystery\"");
        let mut without = default_v2_registry();
        without.remove("zlib");
        let m = zarray("<i4", "C", r#"{"id": "zlib", "level": 1}"#, "null");
        let err = v3_codecs(&m, &without, &v3).unwrap_err();
        assert!(err.to_string().contains("zlib"), "{err}");
        // a numcodecs id maps to `numcodecs.<id>`, which a build without zarr-numcodecs
        // refuses naming the feature that brings it
        let m = zarray("<i4", "C", "null", r#"[{"id": "delta", "dtype": "<i4"}]"#);
        let err = v3_codecs(&m, &default_v2_registry(), &v3).unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"unsupported codec "numcodecs.delta" (enable cargo feature "numcodecs")"#
        );
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

    /// The `.zarray` dtype of a v3 chain is the byte order numcodecs views the array's bytes
    /// in (the first filter's `dtype`), not the stored one; a chain numcodecs would run with
    /// a reinterpretation has no v2 form.
    #[test]
    fn the_v2_dtype_is_what_the_first_filter_views() {
        let defs: Vec<ExtensionDef> = serde_json::from_str(
            r#"[{"name": "numcodecs.astype", "configuration": {"encode_dtype": ">i4", "decode_dtype": "<i8"}},
                {"name": "bytes", "configuration": {"endian": "big"}}]"#,
        )
        .unwrap();
        assert_eq!(
            v2_codecs(&defs, 1).unwrap().byte_order,
            Some(ByteOrder::Little)
        );
        for (json, codec) in [
            (
                r#"[{"name": "numcodecs.delta", "configuration": {"dtype": "<i4"}},
                    {"name": "bytes", "configuration": {"endian": "big"}}]"#,
                "bytes",
            ),
            (
                r#"[{"name": "numcodecs.delta", "configuration": {"dtype": "<i4", "astype": ">i4"}},
                    {"name": "numcodecs.astype", "configuration": {"encode_dtype": "<i4", "decode_dtype": "<i4"}},
                    {"name": "bytes", "configuration": {"endian": "little"}}]"#,
                "numcodecs.astype",
            ),
        ] {
            let defs: Vec<ExtensionDef> = serde_json::from_str(json).unwrap();
            let err = v2_codecs(&defs, 1).unwrap_err();
            assert!(
                matches!(&err, CodecError::NoV2Form { codec: c, .. } if c == codec),
                "{json}: {err}"
            );
        }
    }
}
