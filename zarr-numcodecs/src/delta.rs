//! `numcodecs.delta` (array -> array): each element minus the one before it.
//!
//! Name: `numcodecs.delta` (Zarr v2: `{"id": "delta"}`). Configuration: numcodecs' `dtype`,
//! the data type of the decoded values (a NumPy string such as `"<i4"` or `"int32"`; it must be
//! the chunk's data type), and `astype`, the data type of the encoded values (default:
//! `dtype`). The next codec sees `astype` data of the same shape.
//!
//! As numcodecs over the chunk in C order: the first element is stored as it is, every other
//! as the difference from the one before it, computed in `dtype` (integers wrap) and cast to
//! `astype` (NumPy's casts: integers wrap, floats truncate); decoding is the cumulative sum in
//! `dtype` of the elements cast to `dtype`. Integers, unsigned integers and floats (16 to 64
//! bits) are supported, as NumPy's `diff` and `cumsum` are for them.
//!
//! ```
//! use zarr_codecs::{ChunkRepr, CodecChain, EncodeOptions};
//! use zarr_numcodecs::default_registry;
//! use zarr_meta::{DataType, FillValue};
//!
//! let repr = ChunkRepr::new(vec![5], DataType::Int16, FillValue::zero(DataType::Int16));
//! let json = r#"[{"name": "numcodecs.delta", "configuration": {"dtype": "<i2", "astype": "<i1"}},
//!                {"name": "bytes"}]"#;
//! let chain = CodecChain::from_json(json, &repr, &default_registry())?;
//! let chunk: Vec<u8> = [100i16, 102, 104, 103, 90].iter().flat_map(|v| v.to_ne_bytes()).collect();
//! let stored = chain.encode(&chunk, EncodeOptions::WRITE_EMPTY)?.ok_or("skipped")?;
//! assert_eq!(stored, [100, 2, 2, 255, 243]); // int8: 100, 2, 2, -1, -13
//! assert_eq!(chain.decode(&stored)?.as_bytes(), &chunk[..]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use serde::{Deserialize, Serialize};
use zarr_meta::{DataType, ExtensionDef, ExtensionPoint};

use zarr_codecs::ChunkRepr;
use zarr_codecs::CodecRegistry;
use zarr_codecs::{ArrayToArrayCodec, Codec};
use zarr_codecs::{CodecError, Result};

use super::cast::{cast_repr, get, is_real, set, with_real, Element, Real, Value};
use super::{check_len, dtype, invalid};

/// The codec's name.
pub const NAME: &str = "numcodecs.delta";

/// The configuration of `numcodecs.delta`: numcodecs' `Delta(dtype, astype=None)`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeltaConfig {
    /// The data type of the decoded values (NumPy string).
    pub dtype: String,
    /// The data type of the encoded values (NumPy string); `dtype` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub astype: Option<String>,
}

crate::config::codec_def!(DeltaConfig => NAME);

/// The `numcodecs.delta` codec, built for one chunk representation.
#[derive(Debug, Clone)]
pub struct DeltaCodec {
    config: DeltaConfig,
    decoded: ChunkRepr,
    encoded: ChunkRepr,
}

fn check_real(field: &str, text: &str, t: DataType) -> Result<()> {
    if is_real(t) {
        Ok(())
    } else {
        Err(invalid(
            NAME,
            format!("{field} {text:?} is {t}: delta takes integers and floats"),
        ))
    }
}

impl DeltaCodec {
    /// The codec with `config` for chunks of `repr`.
    ///
    /// # Errors
    /// [`zarr_meta::MetaError::InvalidConfiguration`] for a data type that is not an
    /// integer or float, or a `dtype` other than the chunk's.
    pub fn new(config: DeltaConfig, repr: &ChunkRepr) -> Result<Self> {
        let t = dtype::parse(NAME, "dtype", &config.dtype)?;
        check_real("dtype", &config.dtype, t)?;
        dtype::check_matches(NAME, "dtype", t, repr.data_type)?;
        let a = match &config.astype {
            Some(text) => {
                let a = dtype::parse(NAME, "astype", text)?;
                check_real("astype", text, a)?;
                a
            }
            None => t,
        };
        repr.validate()?;
        let encoded = cast_repr(repr, a, repr.shape.clone())?;
        Ok(DeltaCodec {
            config,
            decoded: repr.clone(),
            encoded,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &DeltaConfig {
        &self.config
    }
}

/// Builds `numcodecs.delta` from its definition.
pub(crate) fn factory(def: &ExtensionDef, repr: &ChunkRepr, _: &CodecRegistry) -> Result<Codec> {
    let config: DeltaConfig = def.parse_configuration(ExtensionPoint::Codec)?;
    Ok(Codec::ArrayToArray(Box::new(DeltaCodec::new(
        config, repr,
    )?)))
}

fn encode_typed<T: Real, A: Element>(src: &[u8], dst: &mut [u8]) -> Result<()> {
    let n = src.len() / std::mem::size_of::<T>();
    let mut prev: Option<T> = None;
    for i in 0..n {
        let cur: T = get(src, i);
        let d = match prev {
            None => {
                // the first element is stored as it is: an integer `astype` must hold it
                // (NumPy refuses the assignment, so numcodecs fails too); differences wrap
                let v = cur.to_value();
                if let (Value::Int(i), Value::Int(_)) = (v, A::from_value(v).to_value()) {
                    // NumPy lets a negative value wrap into an unsigned type, nothing else
                    let unsigned = A::from_value(Value::Int(-1)).to_value() != Value::Int(-1);
                    if A::from_value(v).to_value() != v && (i > 0 || !unsigned) {
                        return Err(CodecError::Compress {
                            codec: NAME,
                            reason: format!(
                                "the first element of the chunk, {v:?}, does not fit astype (numcodecs refuses it too)"
                            ),
                        });
                    }
                }
                cur
            }
            Some(p) => cur.sub(p),
        };
        set(dst, i, A::from_value(d.to_value()));
        prev = Some(cur);
    }
    Ok(())
}

fn decode_typed<T: Real, A: Element>(src: &[u8], dst: &mut [u8]) {
    let n = src.len() / std::mem::size_of::<A>();
    let mut acc: Option<T> = None;
    for i in 0..n {
        let e = T::from_value(get::<A>(src, i).to_value());
        let s = match acc {
            None => e,
            Some(a) => a.add(e),
        };
        set(dst, i, s);
        acc = Some(s);
    }
}

impl ArrayToArrayCodec for DeltaCodec {
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
        with_real!(self.decoded.data_type, T => with_real!(self.encoded.data_type, A => {
            encode_typed::<T, A>(input, out)
        }, Ok(())), Ok(()))
    }

    fn decode(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        check_len("the input", self.encoded.byte_len()?, input.len())?;
        check_len("the output buffer", self.decoded.byte_len()?, out.len())?;
        with_real!(self.decoded.data_type, T => with_real!(self.encoded.data_type, A => {
            decode_typed::<T, A>(input, out)
        }, ()), ());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::default_registry;
    use proptest::prelude::*;
    use zarr_meta::FillValue;

    fn repr(t: DataType, n: u64) -> ChunkRepr {
        ChunkRepr::new(vec![n], t, FillValue::zero(t))
    }

    fn codec(json: &str, r: &ChunkRepr) -> Result<Codec> {
        factory(&serde_json::from_str(json).unwrap(), r, &default_registry())
    }

    #[test]
    fn config_round_trips_and_bad_ones_are_refused() {
        let r = repr(DataType::Int32, 4);
        for json in [
            r#"{"name":"numcodecs.delta","configuration":{"dtype":"<i4"}}"#,
            r#"{"name":"numcodecs.delta","configuration":{"dtype":"int32","astype":"float64"}}"#,
        ] {
            let back = serde_json::to_string(&codec(json, &r).unwrap().to_def()).unwrap();
            assert_eq!(back, json);
        }
        for bad in [
            r#"{"dtype":"<i2"}"#,
            r#"{"dtype":"<i4","astype":"|b1"}"#,
            r#"{"dtype":"<i4","astype":"<c8"}"#,
            r#"{"dtype":"<i4","astype":"|V4"}"#,
            r#"{"dtype":"<U4"}"#,
            r#"{"astype":"<i4"}"#,
            r#"{"dtype":"<i4","x":1}"#,
        ] {
            let json = format!(r#"{{"name":"numcodecs.delta","configuration":{bad}}}"#);
            let err = zarr_testkit::report(&codec(&json, &r).unwrap_err());
            assert!(
                err.starts_with("invalid configuration for codec \"numcodecs.delta\""),
                "{bad}: {err}"
            );
        }
        let b = repr(DataType::Bool, 4);
        assert!(codec(
            r#"{"name":"numcodecs.delta","configuration":{"dtype":"|b1"}}"#,
            &b
        )
        .is_err());
    }

    #[test]
    fn encoded_repr_has_astype_and_the_cast_fill() {
        let r = ChunkRepr::new(
            vec![2, 3],
            DataType::Float64,
            FillValue::from_ne_bytes(DataType::Float64, 2.75f64.to_ne_bytes()).unwrap(),
        );
        let c = DeltaCodec::new(
            DeltaConfig {
                dtype: "<f8".into(),
                astype: Some("<i2".into()),
            },
            &r,
        )
        .unwrap();
        assert_eq!(c.encoded_repr().data_type, DataType::Int16);
        assert_eq!(c.encoded_repr().shape, [2, 3]);
        assert_eq!(c.encoded_repr().fill_value.as_bytes(), 2i16.to_ne_bytes());
        assert!(c.encode(&[0; 47], &mut [0; 12]).is_err());
        assert!(c.decode(&[0; 12], &mut [0; 47]).is_err());
    }

    #[test]
    fn floats_accumulate_in_dtype() {
        // float32 differences summed as float64, as numpy's cumsum(out=float64) does
        let r = repr(DataType::Float64, 3);
        let c = DeltaCodec::new(
            DeltaConfig {
                dtype: "float64".into(),
                astype: Some("float32".into()),
            },
            &r,
        )
        .unwrap();
        let enc: Vec<u8> = [0.1f32, 0.2, 0.3]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let mut out = vec![0u8; 24];
        c.decode(&enc, &mut out).unwrap();
        let got: Vec<f64> = (0..3).map(|i| get(&out, i)).collect();
        let want = [
            f64::from(0.1f32),
            f64::from(0.1f32) + f64::from(0.2f32),
            f64::from(0.1f32) + f64::from(0.2f32) + f64::from(0.3f32),
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn a_first_element_astype_cannot_hold_is_refused() {
        let r = repr(DataType::Int32, 3);
        let c = DeltaCodec::new(
            DeltaConfig {
                dtype: "<i4".into(),
                astype: Some("|i1".into()),
            },
            &r,
        )
        .unwrap();
        let chunk: Vec<u8> = [300i32, 301, 100]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        assert!(c.encode(&chunk, &mut [0; 3]).is_err());
        // later differences wrap, as in numcodecs
        let chunk: Vec<u8> = [100i32, 301, 100]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let mut enc = [0u8; 3];
        c.encode(&chunk, &mut enc).unwrap();
        assert_eq!(enc, [100, 201, 55]);
    }

    proptest! {
        #[test]
        fn integers_round_trip_whatever_wraps(values in prop::collection::vec(any::<i32>(), 0..100),
                                              narrow in any::<bool>()) {
            let r = repr(DataType::Int32, values.len() as u64);
            let astype = if narrow { "<u4" } else { "<i8" };
            let c = DeltaCodec::new(DeltaConfig { dtype: "<i4".into(), astype: Some(astype.into()) }, &r).unwrap();
            let chunk: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
            let mut enc = vec![0u8; c.encoded_repr().byte_len().unwrap()];
            c.encode(&chunk, &mut enc).unwrap();
            let mut dec = vec![0u8; chunk.len()];
            c.decode(&enc, &mut dec).unwrap();
            prop_assert_eq!(dec, chunk);
        }

        #[test]
        fn floats_round_trip_when_exact(values in prop::collection::vec(-1000i32..1000, 0..100)) {
            let r = repr(DataType::Float32, values.len() as u64);
            let c = DeltaCodec::new(DeltaConfig { dtype: "<f4".into(), astype: None }, &r).unwrap();
            let chunk: Vec<u8> = values.iter().flat_map(|&v| (v as f32 / 4.0).to_ne_bytes()).collect();
            let mut enc = vec![0u8; chunk.len()];
            c.encode(&chunk, &mut enc).unwrap();
            let mut dec = vec![0u8; chunk.len()];
            c.decode(&enc, &mut dec).unwrap();
            prop_assert_eq!(dec, chunk);
        }
    }
}
