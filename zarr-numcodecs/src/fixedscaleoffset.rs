//! `numcodecs.fixedscaleoffset` (array -> array): `round((x - offset) * scale)`, stored in a
//! (usually narrower) type.
//!
//! Name: `numcodecs.fixedscaleoffset` (Zarr v2: `{"id": "fixedscaleoffset"}`). Configuration:
//! numcodecs' `offset` and `scale` (JSON numbers), `dtype`, the data type of the decoded
//! values (a NumPy string; it must be the chunk's data type, and zarr-python fills it in with
//! it when absent, as this codec does), and `astype`, the data type of the encoded values
//! (default: `dtype`). The next codec sees `astype` data of the same shape.
//!
//! The arithmetic is NumPy 2's, where `offset` and `scale` are Python numbers: they take the
//! array's type when they can (an integer `offset` on integer data stays integer arithmetic,
//! wrapping; any number on `float32` data is `float32` arithmetic), and a float on integer
//! data computes in `float64`. Encoding: `np.around((x - offset) * scale)` (ties to even),
//! cast to `astype`. Decoding: `enc / scale + offset` (in `astype` for float encodings, in
//! `float64` for integer ones), cast to `dtype`. The encoding is lossy by design: decoded
//! values are within `0.5 / scale` of the original ones, when `astype` holds the range.
//!
//! ```
//! use zarr_codecs::{ChunkRepr, CodecChain, EncodeOptions};
//! use zarr_numcodecs::default_registry;
//! use zarr_meta::{DataType, FillValue};
//!
//! let repr = ChunkRepr::new(vec![4], DataType::Float64, FillValue::zero(DataType::Float64));
//! let json = r#"[{"name": "numcodecs.fixedscaleoffset",
//!                 "configuration": {"offset": 1000, "scale": 10, "dtype": "<f8", "astype": "|u1"}},
//!                {"name": "bytes"}]"#;
//! let chain = CodecChain::from_json(json, &repr, &default_registry())?;
//! let chunk: Vec<u8> = [1000.0f64, 1000.12, 1000.56, 1001.0].iter().flat_map(|v| v.to_ne_bytes()).collect();
//! let stored = chain.encode(&chunk, EncodeOptions::WRITE_EMPTY)?.ok_or("skipped")?;
//! assert_eq!(stored, [0, 1, 6, 10]);
//! let back: Vec<f64> = chain.decode(&stored)?.as_bytes().chunks(8)
//!     .map(|b| f64::from_ne_bytes(b.try_into().unwrap())).collect();
//! assert_eq!(back, [1000.0, 1000.1, 1000.6, 1001.0]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use serde::{Deserialize, Serialize};
use serde_json::Number;
use zarr_meta::{DataType, ExtensionDef, ExtensionPoint};

use zarr_codecs::ChunkRepr;
use zarr_codecs::CodecRegistry;
use zarr_codecs::{ArrayToArrayCodec, Codec};
use zarr_codecs::{CodecError, Result};

use super::cast::{cast_repr, get, is_real, set, with_real, Element, Real, Value};
use super::{check_len, dtype, invalid};

/// The codec's name.
pub const NAME: &str = "numcodecs.fixedscaleoffset";

/// The configuration of `numcodecs.fixedscaleoffset`: numcodecs'
/// `FixedScaleOffset(offset, scale, dtype, astype=None)`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixedScaleOffsetConfig {
    /// The value subtracted (an integer or a float: they compute differently on integers).
    pub offset: Number,
    /// The factor applied after subtracting.
    pub scale: Number,
    /// The data type of the decoded values (NumPy string); the chunk's when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dtype: Option<String>,
    /// The data type of the encoded values (NumPy string); `dtype` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub astype: Option<String>,
}

crate::config::codec_def!(FixedScaleOffsetConfig => NAME);

/// A Python number of the configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Scalar {
    Int(i128),
    Float(f64),
}

impl Scalar {
    fn from_number(field: &str, n: &Number) -> Result<Scalar> {
        if let Some(i) = n.as_i64() {
            Ok(Scalar::Int(i128::from(i)))
        } else if let Some(u) = n.as_u64() {
            Ok(Scalar::Int(i128::from(u)))
        } else {
            n.as_f64()
                .map(Scalar::Float)
                .ok_or_else(|| invalid(NAME, format!("{field} {n} is not a number")))
        }
    }

    fn value(self) -> Value {
        match self {
            Scalar::Int(i) => Value::Int(i),
            Scalar::Float(f) => Value::Float(f),
        }
    }

    fn as_f64(self) -> f64 {
        self.value().as_f64()
    }
}

/// The `numcodecs.fixedscaleoffset` codec, built for one chunk representation.
#[derive(Debug, Clone)]
pub struct FixedScaleOffsetCodec {
    config: FixedScaleOffsetConfig,
    offset: Scalar,
    scale: Scalar,
    decoded: ChunkRepr,
    encoded: ChunkRepr,
}

fn real_type(field: &str, text: &str) -> Result<DataType> {
    let t = dtype::parse(NAME, field, text)?;
    if is_real(t) {
        Ok(t)
    } else {
        Err(invalid(
            NAME,
            format!("{field} {text:?} is {t}: fixedscaleoffset takes integers and floats"),
        ))
    }
}

impl FixedScaleOffsetCodec {
    /// The codec with `config` for chunks of `repr`.
    ///
    /// # Errors
    /// [`zarr_meta::MetaError::InvalidConfiguration`] for a data type that is not an
    /// integer or float, or a `dtype` other than the chunk's.
    pub fn new(config: FixedScaleOffsetConfig, repr: &ChunkRepr) -> Result<Self> {
        let t = match &config.dtype {
            Some(text) => real_type("dtype", text)?,
            None => {
                let t = repr.data_type;
                if !is_real(t) {
                    return Err(invalid(
                        NAME,
                        format!("the chunk's data type {t} is not an integer or float"),
                    ));
                }
                t
            }
        };
        dtype::check_matches(NAME, "dtype", t, repr.data_type)?;
        let a = match &config.astype {
            Some(text) => real_type("astype", text)?,
            None => t,
        };
        let offset = Scalar::from_number("offset", &config.offset)?;
        let scale = Scalar::from_number("scale", &config.scale)?;
        repr.validate()?;
        let encoded = cast_repr(repr, a, repr.shape.clone())?;
        Ok(FixedScaleOffsetCodec {
            config,
            offset,
            scale,
            decoded: repr.clone(),
            encoded,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &FixedScaleOffsetConfig {
        &self.config
    }
}

/// Builds `numcodecs.fixedscaleoffset` from its definition.
pub(crate) fn factory(def: &ExtensionDef, repr: &ChunkRepr, _: &CodecRegistry) -> Result<Codec> {
    let config: FixedScaleOffsetConfig = def.parse_configuration(ExtensionPoint::Codec)?;
    Ok(Codec::ArrayToArray(Box::new(FixedScaleOffsetCodec::new(
        config, repr,
    )?)))
}

/// A Python integer as a value of the integer type `T`, as NumPy 2 takes it (it must fit).
fn fit<T: Real>(field: &str, i: i128, t: DataType) -> Result<T> {
    let v = T::from_value(Value::Int(i));
    if v.to_value() == Value::Int(i) {
        Ok(v)
    } else {
        Err(CodecError::Compress {
            codec: NAME,
            reason: format!("{field} {i} is out of range for {t} (NumPy refuses it too)"),
        })
    }
}

fn encode_typed<T: Real, A: Element>(
    src: &[u8],
    dst: &mut [u8],
    offset: Scalar,
    scale: Scalar,
    t: DataType,
) -> Result<()> {
    let n = src.len() / std::mem::size_of::<T>();
    let round = |f: f64| A::from_value(Value::Float(f.round_ties_even()));
    if T::FLOAT {
        // Python numbers take the float type of the array
        let (o, s) = (T::from_value(offset.value()), T::from_value(scale.value()));
        for i in 0..n {
            let x: T = get(src, i);
            set(
                dst,
                i,
                A::from_value(x.sub(o).mul(s).round_even().to_value()),
            );
        }
        return Ok(());
    }
    match (offset, scale) {
        (Scalar::Int(o), Scalar::Int(s)) => {
            let (o, s) = (fit::<T>("offset", o, t)?, fit::<T>("scale", s, t)?);
            for i in 0..n {
                let x: T = get(src, i);
                set(dst, i, A::from_value(x.sub(o).mul(s).to_value()));
            }
        }
        (Scalar::Int(o), Scalar::Float(s)) => {
            let o = fit::<T>("offset", o, t)?;
            for i in 0..n {
                let x: T = get(src, i);
                set(dst, i, round(x.sub(o).to_value().as_f64() * s));
            }
        }
        (Scalar::Float(o), s) => {
            let s = s.as_f64();
            for i in 0..n {
                let x: T = get(src, i);
                set(dst, i, round((x.to_value().as_f64() - o) * s));
            }
        }
    }
    Ok(())
}

fn decode_typed<T: Element, A: Real>(src: &[u8], dst: &mut [u8], offset: Scalar, scale: Scalar) {
    let n = src.len() / std::mem::size_of::<A>();
    if A::FLOAT {
        let (o, s) = (A::from_value(offset.value()), A::from_value(scale.value()));
        for i in 0..n {
            let e: A = get(src, i);
            set(dst, i, T::from_value(e.div(s).add(o).to_value()));
        }
    } else {
        // integers divide as float64
        let (o, s) = (offset.as_f64(), scale.as_f64());
        for i in 0..n {
            let e = get::<A>(src, i).to_value().as_f64();
            set(dst, i, T::from_value(Value::Float(e / s + o)));
        }
    }
}

impl ArrayToArrayCodec for FixedScaleOffsetCodec {
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
        let t = self.decoded.data_type;
        with_real!(t, T => with_real!(self.encoded.data_type, A => {
            encode_typed::<T, A>(input, out, self.offset, self.scale, t)
        }, Ok(())), Ok(()))
    }

    fn decode(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        check_len("the input", self.encoded.byte_len()?, input.len())?;
        check_len("the output buffer", self.decoded.byte_len()?, out.len())?;
        with_real!(self.decoded.data_type, T => with_real!(self.encoded.data_type, A => {
            decode_typed::<T, A>(input, out, self.offset, self.scale)
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

    fn config(json: &str) -> FixedScaleOffsetConfig {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn config_round_trips_and_bad_ones_are_refused() {
        let r = repr(DataType::Float64, 4);
        for json in [
            r#"{"name":"numcodecs.fixedscaleoffset","configuration":{"offset":1000,"scale":10,"dtype":"<f8","astype":"|u1"}}"#,
            r#"{"name":"numcodecs.fixedscaleoffset","configuration":{"offset":0.5,"scale":100.0}}"#,
        ] {
            let back = serde_json::to_string(&codec(json, &r).unwrap().to_def()).unwrap();
            assert_eq!(back, json);
        }
        for bad in [
            r#"{"offset":0,"scale":1,"dtype":"<f4"}"#,
            r#"{"offset":0,"scale":1,"dtype":"<f8","astype":"|b1"}"#,
            r#"{"offset":0,"dtype":"<f8"}"#,
            r#"{"offset":"0","scale":1}"#,
            r#"{"offset":0,"scale":1,"id":"fixedscaleoffset"}"#,
        ] {
            let json = format!(r#"{{"name":"numcodecs.fixedscaleoffset","configuration":{bad}}}"#);
            let err = zarr_testkit::report(&codec(&json, &r).unwrap_err());
            assert!(
                err.starts_with("invalid configuration for codec \"numcodecs.fixedscaleoffset\""),
                "{bad}: {err}"
            );
        }
    }

    fn run(c: &FixedScaleOffsetCodec, chunk: &[u8]) -> (Vec<u8>, Vec<u8>) {
        let mut enc = vec![0u8; c.encoded_repr().byte_len().unwrap()];
        c.encode(chunk, &mut enc).unwrap();
        let mut dec = vec![0u8; chunk.len()];
        c.decode(&enc, &mut dec).unwrap();
        (enc, dec)
    }

    #[test]
    fn numpy_arithmetic() {
        // integer data, integer offset and scale: integer arithmetic, wrapping
        let r = repr(DataType::Int16, 3);
        let c = FixedScaleOffsetCodec::new(
            config(r#"{"offset":100,"scale":3,"dtype":"<i2","astype":"<i2"}"#),
            &r,
        )
        .unwrap();
        let chunk: Vec<u8> = [100i16, 110, 20000]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let (enc, _) = run(&c, &chunk);
        let enc: Vec<i16> = (0..3).map(|i| get(&enc, i)).collect();
        assert_eq!(enc, [0, 30, 19900i16.wrapping_mul(3)]);
        // an integer offset out of range fails to encode, as in NumPy
        let r8 = repr(DataType::Int8, 1);
        let c = FixedScaleOffsetCodec::new(config(r#"{"offset":1000,"scale":1}"#), &r8).unwrap();
        assert!(c.encode(&[1], &mut [0]).is_err());
        // float32 data computes in float32, ties to even
        let r = repr(DataType::Float32, 4);
        let c = FixedScaleOffsetCodec::new(config(r#"{"offset":0,"scale":2,"astype":"<i4"}"#), &r)
            .unwrap();
        let chunk: Vec<u8> = [0.25f32, 0.75, -0.25, 1.3]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let (enc, dec) = run(&c, &chunk);
        let enc: Vec<i32> = (0..4).map(|i| get(&enc, i)).collect();
        assert_eq!(enc, [0, 2, 0, 3]);
        let dec: Vec<f32> = (0..4).map(|i| get(&dec, i)).collect();
        assert_eq!(dec, [0.0, 1.0, 0.0, 1.5]);
    }

    proptest! {
        #[test]
        fn decoded_values_are_within_half_a_step(values in prop::collection::vec(-100.0f64..100.0, 0..100),
                                                  scale in prop::sample::select(vec![1.0f64, 10.0, 1000.0])) {
            let r = repr(DataType::Float64, values.len() as u64);
            let c = FixedScaleOffsetCodec::new(FixedScaleOffsetConfig {
                offset: Number::from_f64(-100.0).unwrap(),
                scale: Number::from_f64(scale).unwrap(),
                dtype: Some("<f8".into()),
                astype: Some("<u4".into()),
            }, &r).unwrap();
            let chunk: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
            let (_, dec) = run(&c, &chunk);
            for (i, v) in values.iter().enumerate() {
                let d: f64 = get(&dec, i);
                prop_assert!((d - v).abs() <= 0.5 / scale + 1e-9, "{v} -> {d}");
            }
        }
    }
}
