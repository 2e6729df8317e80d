//! `numcodecs.quantize` (array -> array): keeps floats to a number of decimal digits.
//!
//! Name: `numcodecs.quantize` (Zarr v2: `{"id": "quantize"}`). Configuration: numcodecs'
//! `digits`, the decimal digits to keep; `dtype`, the data type of the decoded values (a NumPy
//! float type; it must be the chunk's, and zarr-python fills it in with it when absent, as this
//! codec does); `astype`, the float type of the encoded values (default: `dtype`). The next
//! codec sees `astype` data of the same shape (zarr-python 3 gets this wrong and cannot read
//! back its own chunks when `astype` differs from `dtype`; Zarr v2 and this codec do).
//!
//! As numcodecs: with `exp = log10(10^-digits)` rounded away from zero, `bits =
//! ceil(log2(10^-exp))` and `scale = 2^bits`, each value becomes `np.around(scale * x) /
//! scale` computed in `dtype` (ties to even), cast to `astype`. The exponent arithmetic uses
//! the same C library functions as Python (`pow`, `log10`, `log2`), so the scale is the one
//! numcodecs computes. Decoding only casts back to `dtype`: the codec is lossy, and decoded
//! values are within `0.5 / scale` (at most `10^-digits / 2`) of the original ones.
//!
//! ```
//! use zarr_codecs::{ChunkRepr, CodecChain, EncodeOptions};
//! use zarr_numcodecs::default_registry;
//! use zarr_meta::{DataType, FillValue};
//!
//! let repr = ChunkRepr::new(vec![3], DataType::Float64, FillValue::zero(DataType::Float64));
//! let json = r#"[{"name": "numcodecs.quantize", "configuration": {"digits": 1, "dtype": "<f8"}},
//!                {"name": "bytes", "configuration": {"endian": "little"}}]"#;
//! let chain = CodecChain::from_json(json, &repr, &default_registry())?;
//! let chunk: Vec<u8> = [0.1f64, 0.2222, 0.9].iter().flat_map(|v| v.to_ne_bytes()).collect();
//! let stored = chain.encode(&chunk, EncodeOptions::WRITE_EMPTY)?.ok_or("skipped")?;
//! let back: Vec<f64> = chain.decode(&stored)?.as_bytes().chunks(8)
//!     .map(|b| f64::from_ne_bytes(b.try_into().unwrap())).collect();
//! assert_eq!(back, [0.125, 0.25, 0.875]); // multiples of 1/16
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use serde::{Deserialize, Serialize};
use zarr_meta::{DataKind, DataType, ExtensionDef, ExtensionPoint};

use zarr_codecs::ChunkRepr;
use zarr_codecs::CodecRegistry;
use zarr_codecs::Result;
use zarr_codecs::{ArrayToArrayCodec, Codec};

use super::cast::{cast, cast_repr, get, set, with_real, Element, Real, Value};
use super::{check_len, dtype, invalid};

/// The codec's name.
pub const NAME: &str = "numcodecs.quantize";

/// The configuration of `numcodecs.quantize`: numcodecs' `Quantize(digits, dtype, astype=None)`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuantizeConfig {
    /// The decimal digits to keep.
    pub digits: i32,
    /// The data type of the decoded values (a NumPy float type); the chunk's when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dtype: Option<String>,
    /// The data type of the encoded values (a NumPy float type); `dtype` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub astype: Option<String>,
}

crate::config::codec_def!(QuantizeConfig => NAME);

/// The `numcodecs.quantize` codec, built for one chunk representation.
#[derive(Debug, Clone)]
pub struct QuantizeCodec {
    config: QuantizeConfig,
    scale: f64,
    decoded: ChunkRepr,
    encoded: ChunkRepr,
}

/// numcodecs' scale for `digits`: `2^ceil(log2(10^-exp))`, `exp` = `log10(10^-digits)`
/// rounded away from zero; `None` when it is not a finite nonzero number.
pub fn scale_for_digits(digits: i32) -> Option<f64> {
    let precision = 10f64.powf(-f64::from(digits));
    let exp = precision.log10();
    let exp = if exp < 0.0 { exp.floor() } else { exp.ceil() };
    let bits = 10f64.powf(-exp).log2().ceil();
    let scale = 2f64.powf(bits);
    (scale.is_finite() && scale != 0.0).then_some(scale)
}

fn float_type(field: &str, text: &str) -> Result<DataType> {
    let t = dtype::parse(NAME, field, text)?;
    if t.kind() == DataKind::Float {
        Ok(t)
    } else {
        Err(invalid(
            NAME,
            format!("{field} {text:?} is {t}: quantize takes float16, float32 and float64"),
        ))
    }
}

impl QuantizeCodec {
    /// The codec with `config` for chunks of `repr`.
    ///
    /// # Errors
    /// [`zarr_meta::MetaError::InvalidConfiguration`] for a type that is not a float, a
    /// `dtype` other than the chunk's, or `digits` so large or small that the scale is not a
    /// finite number.
    pub fn new(config: QuantizeConfig, repr: &ChunkRepr) -> Result<Self> {
        let t = match &config.dtype {
            Some(text) => float_type("dtype", text)?,
            None => float_type("dtype", &repr.data_type.name())?,
        };
        dtype::check_matches(NAME, "dtype", t, repr.data_type)?;
        let a = match &config.astype {
            Some(text) => float_type("astype", text)?,
            None => t,
        };
        let scale = scale_for_digits(config.digits).ok_or_else(|| {
            invalid(
                NAME,
                format!("digits {} gives no finite scale", config.digits),
            )
        })?;
        repr.validate()?;
        let encoded = cast_repr(repr, a, repr.shape.clone())?;
        Ok(QuantizeCodec {
            config,
            scale,
            decoded: repr.clone(),
            encoded,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &QuantizeConfig {
        &self.config
    }
}

/// Builds `numcodecs.quantize` from its definition.
pub(crate) fn factory(def: &ExtensionDef, repr: &ChunkRepr, _: &CodecRegistry) -> Result<Codec> {
    let config: QuantizeConfig = def.parse_configuration(ExtensionPoint::Codec)?;
    Ok(Codec::ArrayToArray(Box::new(QuantizeCodec::new(
        config, repr,
    )?)))
}

fn encode_typed<T: Real, A: Element>(src: &[u8], dst: &mut [u8], scale: f64) {
    let n = src.len() / std::mem::size_of::<T>();
    // the Python float takes the array's type
    let s = T::from_value(Value::Float(scale));
    for i in 0..n {
        let x: T = get(src, i);
        set(
            dst,
            i,
            A::from_value(s.mul(x).round_even().div(s).to_value()),
        );
    }
}

impl ArrayToArrayCodec for QuantizeCodec {
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
            encode_typed::<T, A>(input, out, self.scale)
        }, ()), ());
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
    use zarr_meta::FillValue;

    fn repr(t: DataType, n: u64) -> ChunkRepr {
        ChunkRepr::new(vec![n], t, FillValue::zero(t))
    }

    #[test]
    fn numcodecs_scales() {
        // numcodecs' docstring: digits 1, 2, 3 give steps of 1/16, 1/128, 1/1024
        assert_eq!(scale_for_digits(1), Some(16.0));
        assert_eq!(scale_for_digits(2), Some(128.0));
        assert_eq!(scale_for_digits(3), Some(1024.0));
        assert_eq!(scale_for_digits(0), Some(1.0));
        assert_eq!(scale_for_digits(-2), Some(2f64.powi(-6)));
        assert_eq!(scale_for_digits(400), None);
    }

    #[test]
    fn config_round_trips_and_bad_ones_are_refused() {
        let r = repr(DataType::Float32, 3);
        for json in [
            r#"{"name":"numcodecs.quantize","configuration":{"digits":2,"dtype":"<f4"}}"#,
            r#"{"name":"numcodecs.quantize","configuration":{"digits":3,"dtype":"float32","astype":"float16"}}"#,
            r#"{"name":"numcodecs.quantize","configuration":{"digits":1}}"#,
        ] {
            let def: ExtensionDef = serde_json::from_str(json).unwrap();
            let c = factory(&def, &r, &default_registry()).unwrap();
            assert_eq!(serde_json::to_string(&c.to_def()).unwrap(), json);
        }
        for bad in [
            r#"{"digits":2,"dtype":"<f8"}"#,
            r#"{"digits":2,"dtype":"<f4","astype":"<i4"}"#,
            r#"{"digits":400}"#,
            r#"{"dtype":"<f4"}"#,
            r#"{"digits":1.5}"#,
        ] {
            let def: ExtensionDef = serde_json::from_str(&format!(
                r#"{{"name":"numcodecs.quantize","configuration":{bad}}}"#
            ))
            .unwrap();
            let err = zarr_testkit::report(&factory(&def, &r, &default_registry()).unwrap_err());
            assert!(
                err.starts_with("invalid configuration for codec \"numcodecs.quantize\""),
                "{bad}: {err}"
            );
        }
        let i = repr(DataType::Int32, 3);
        let def: ExtensionDef =
            serde_json::from_str(r#"{"name":"numcodecs.quantize","configuration":{"digits":1}}"#)
                .unwrap();
        assert!(factory(&def, &i, &default_registry()).is_err());
    }

    proptest! {
        #[test]
        fn within_half_a_step_and_idempotent(values in prop::collection::vec(-1000.0f64..1000.0, 0..50),
                                             digits in 0i32..6) {
            let r = repr(DataType::Float64, values.len() as u64);
            let c = QuantizeCodec::new(QuantizeConfig { digits, dtype: None, astype: None }, &r).unwrap();
            let chunk: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
            let mut enc = vec![0u8; chunk.len()];
            c.encode(&chunk, &mut enc).unwrap();
            let mut dec = vec![0u8; chunk.len()];
            c.decode(&enc, &mut dec).unwrap();
            let mut again = vec![0u8; chunk.len()];
            c.encode(&dec, &mut again).unwrap();
            prop_assert_eq!(&again, &enc);
            let step = 1.0 / scale_for_digits(digits).unwrap();
            for (i, v) in values.iter().enumerate() {
                let d: f64 = get(&dec, i);
                prop_assert!((d - v).abs() <= step / 2.0, "{v} -> {d}");
            }
        }
    }
}
