//! `numcodecs.astype` (array -> array): stores the chunk in another data type.
//!
//! Name: `numcodecs.astype` (Zarr v2: `{"id": "astype"}`). Configuration: numcodecs'
//! `encode_dtype`, the data type of the stored values, and `decode_dtype`, that of the decoded
//! values (NumPy strings; `decode_dtype` must be the chunk's data type, and zarr-python fills it
//! in with it when absent, as this codec does). Every core data type but raw bits is accepted.
//! The next codec sees `encode_dtype` data of the same shape.
//!
//! Both directions are NumPy's `astype`: integers wrap, floats truncate toward zero to
//! integers, integers and floats round to the nearest float, nonzero (NaN included) is `True`,
//! complex numbers lose their imaginary part. A narrower `encode_dtype` loses what it cannot
//! hold, as in numcodecs; float-to-integer casts out of range, undefined in NumPy, saturate to
//! `int64` and wrap from there (what NumPy gives on x86-64).
//!
//! ```
//! use zarr_codecs::{ChunkRepr, CodecChain, EncodeOptions};
//! use zarr_numcodecs::default_registry;
//! use zarr_meta::{DataType, FillValue};
//!
//! let repr = ChunkRepr::new(vec![3], DataType::Int64, FillValue::zero(DataType::Int64));
//! let json = r#"[{"name": "numcodecs.astype", "configuration": {"encode_dtype": "|i1", "decode_dtype": "<i8"}},
//!                {"name": "bytes"}]"#;
//! let chain = CodecChain::from_json(json, &repr, &default_registry())?;
//! let chunk: Vec<u8> = [-3i64, 100, 7].iter().flat_map(|v| v.to_ne_bytes()).collect();
//! let stored = chain.encode(&chunk, EncodeOptions::WRITE_EMPTY)?.ok_or("skipped")?;
//! assert_eq!(stored, [253, 100, 7]);
//! assert_eq!(chain.decode(&stored)?.as_bytes(), &chunk[..]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use serde::{Deserialize, Serialize};
use zarr_meta::{ExtensionDef, ExtensionPoint};

use zarr_codecs::ChunkRepr;
use zarr_codecs::CodecRegistry;
use zarr_codecs::Result;
use zarr_codecs::{ArrayToArrayCodec, Codec};

use super::cast::{cast, cast_repr};
use super::{check_len, dtype};

/// The codec's name.
pub const NAME: &str = "numcodecs.astype";

/// The configuration of `numcodecs.astype`: numcodecs' `AsType(encode_dtype, decode_dtype)`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AsTypeConfig {
    /// The data type of the stored values (NumPy string).
    pub encode_dtype: String,
    /// The data type of the decoded values (NumPy string); the chunk's when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decode_dtype: Option<String>,
}

crate::config::codec_def!(AsTypeConfig => NAME);

/// The `numcodecs.astype` codec, built for one chunk representation.
#[derive(Debug, Clone)]
pub struct AsTypeCodec {
    config: AsTypeConfig,
    decoded: ChunkRepr,
    encoded: ChunkRepr,
}

impl AsTypeCodec {
    /// The codec with `config` for chunks of `repr`.
    ///
    /// # Errors
    /// [`zarr_meta::MetaError::InvalidConfiguration`] for a data type that is not a core one
    /// (or is raw bits), or a `decode_dtype` other than the chunk's.
    pub fn new(config: AsTypeConfig, repr: &ChunkRepr) -> Result<Self> {
        let e = dtype::parse(NAME, "encode_dtype", &config.encode_dtype)?;
        if let Some(text) = &config.decode_dtype {
            let d = dtype::parse(NAME, "decode_dtype", text)?;
            dtype::check_matches(NAME, "decode_dtype", d, repr.data_type)?;
        } else {
            dtype::parse(NAME, "the chunk's data type", &repr.data_type.name())?;
        }
        repr.validate()?;
        let encoded = cast_repr(repr, e, repr.shape.clone())?;
        Ok(AsTypeCodec {
            config,
            decoded: repr.clone(),
            encoded,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &AsTypeConfig {
        &self.config
    }
}

/// Builds `numcodecs.astype` from its definition.
pub(crate) fn factory(def: &ExtensionDef, repr: &ChunkRepr, _: &CodecRegistry) -> Result<Codec> {
    let config: AsTypeConfig = def.parse_configuration(ExtensionPoint::Codec)?;
    Ok(Codec::ArrayToArray(Box::new(AsTypeCodec::new(
        config, repr,
    )?)))
}

impl ArrayToArrayCodec for AsTypeCodec {
    fn name(&self) -> &'static str {
        NAME
    }

    fn to_def(&self) -> ExtensionDef {
        self.config.clone().into()
    }

    fn decoded_repr(&self) -> &ChunkRepr {
        &self.decoded
    }

    fn encoded_repr(&self) -> &ChunkRepr {
        &self.encoded
    }

    fn encode(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        check_len("the input", self.decoded.byte_len()?, input.len())?;
        check_len("the output buffer", self.encoded.byte_len()?, out.len())?;
        cast(self.decoded.data_type, self.encoded.data_type, input, out);
        Ok(())
    }

    fn decode(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        check_len("the input", self.encoded.byte_len()?, input.len())?;
        check_len("the output buffer", self.decoded.byte_len()?, out.len())?;
        cast(self.encoded.data_type, self.decoded.data_type, input, out);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::default_registry;
    use proptest::prelude::*;
    use zarr_meta::data_type::CORE_DATA_TYPES;
    use zarr_meta::{DataType, FillValue};

    fn repr(t: DataType, n: u64) -> ChunkRepr {
        ChunkRepr::new(vec![n], t, FillValue::zero(t))
    }

    #[test]
    fn config_round_trips_and_bad_ones_are_refused() {
        let r = repr(DataType::Float64, 2);
        for json in [
            r#"{"name":"numcodecs.astype","configuration":{"encode_dtype":"<f4","decode_dtype":"<f8"}}"#,
            r#"{"name":"numcodecs.astype","configuration":{"encode_dtype":"int16"}}"#,
        ] {
            let def: ExtensionDef = serde_json::from_str(json).unwrap();
            let c = factory(&def, &r, &default_registry()).unwrap();
            assert_eq!(serde_json::to_string(&c.to_def()).unwrap(), json);
        }
        for bad in [
            r#"{"encode_dtype":"<f4","decode_dtype":"<f4"}"#,
            r#"{"encode_dtype":"<U3"}"#,
            r#"{"encode_dtype":"|V8"}"#,
            r#"{"decode_dtype":"<f8"}"#,
            r#"{"encode_dtype":"<f4","extra":0}"#,
        ] {
            let def: ExtensionDef = serde_json::from_str(&format!(
                r#"{{"name":"numcodecs.astype","configuration":{bad}}}"#
            ))
            .unwrap();
            let err = zarr_testkit::report(&factory(&def, &r, &default_registry()).unwrap_err());
            assert!(
                err.starts_with("invalid configuration for codec \"numcodecs.astype\""),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn fill_value_is_cast() {
        let r = ChunkRepr::new(
            vec![2],
            DataType::Float32,
            FillValue::from_ne_bytes(DataType::Float32, (-1.5f32).to_ne_bytes()).unwrap(),
        );
        let c = AsTypeCodec::new(
            AsTypeConfig {
                encode_dtype: "<i2".into(),
                decode_dtype: None,
            },
            &r,
        )
        .unwrap();
        assert_eq!(
            c.encoded_repr().fill_value.as_bytes(),
            (-1i16).to_ne_bytes()
        );
    }

    proptest! {
        #[test]
        fn widening_round_trips(values in prop::collection::vec(any::<i16>(), 0..50), to in 0usize..14) {
            // int16 into every type that holds it exactly
            let target = CORE_DATA_TYPES[to];
            let holds = matches!(target, DataType::Int16 | DataType::Int32 | DataType::Int64
                | DataType::Float32 | DataType::Float64 | DataType::Complex64 | DataType::Complex128);
            let r = repr(DataType::Int16, values.len() as u64);
            let c = AsTypeCodec::new(AsTypeConfig { encode_dtype: target.name(), decode_dtype: Some("<i2".into()) }, &r).unwrap();
            let chunk: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
            let mut enc = vec![0u8; c.encoded_repr().byte_len().unwrap()];
            c.encode(&chunk, &mut enc).unwrap();
            let mut dec = vec![0u8; chunk.len()];
            c.decode(&enc, &mut dec).unwrap();
            if holds {
                prop_assert_eq!(dec, chunk);
            }
        }
    }
}
