//! `numcodecs.bitround` (array -> array): rounds floats to `keepbits` bits of mantissa.
//!
//! Name: `numcodecs.bitround` (Zarr v2: `{"id": "bitround"}`). Configuration: numcodecs'
//! `keepbits`, the number of mantissa bits to keep: 0 to 10 for `float16`, 23 for `float32`,
//! 52 for `float64` (all of them: no change). Only float chunks are accepted, as in numcodecs.
//! The data type and shape stay the same.
//!
//! Encoding rounds each value's bit pattern to the nearest value with `keepbits` mantissa
//! bits, ties to even (Klöwer et al. 2021, numcodecs' `BitRound`): with `m` bits dropped,
//! `bits += ((bits >> m) & 1) + (1 << (m - 1)) - 1`, then the `m` low bits are cleared (as
//! integers of the same width, wrapping). Decoding changes nothing: the codec is lossy, and
//! a decoded value is within half a unit of its last kept bit of the original.
//!
//! ```
//! use zarr_codecs::{ChunkRepr, CodecChain, EncodeOptions};
//! use zarr_numcodecs::default_registry;
//! use zarr_meta::{DataType, FillValue};
//!
//! let repr = ChunkRepr::new(vec![2], DataType::Float32, FillValue::zero(DataType::Float32));
//! let json = r#"[{"name": "numcodecs.bitround", "configuration": {"keepbits": 3}},
//!                {"name": "bytes", "configuration": {"endian": "little"}}]"#;
//! let chain = CodecChain::from_json(json, &repr, &default_registry())?;
//! let chunk: Vec<u8> = [1.3f32, -70.0].iter().flat_map(|v| v.to_ne_bytes()).collect();
//! let stored = chain.encode(&chunk, EncodeOptions::WRITE_EMPTY)?.ok_or("skipped")?;
//! let back: Vec<f32> = chain.decode(&stored)?.as_bytes().chunks(4)
//!     .map(|b| f32::from_ne_bytes(b.try_into().unwrap())).collect();
//! assert_eq!(back, [1.25, -72.0]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use serde::{Deserialize, Serialize};
use zarr_meta::{DataType, ExtensionDef, ExtensionPoint};

use zarr_codecs::ChunkRepr;
use zarr_codecs::CodecRegistry;
use zarr_codecs::Result;
use zarr_codecs::{ArrayToArrayCodec, Codec};

use super::{check_len, invalid};

/// The codec's name.
pub const NAME: &str = "numcodecs.bitround";

/// The configuration of `numcodecs.bitround`: numcodecs' `BitRound(keepbits)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BitRoundConfig {
    /// The mantissa bits to keep.
    pub keepbits: u32,
}

crate::config::codec_def!(BitRoundConfig => NAME);

/// The `numcodecs.bitround` codec, built for one chunk representation.
#[derive(Debug, Clone)]
pub struct BitRoundCodec {
    config: BitRoundConfig,
    repr: ChunkRepr,
    /// The mantissa bits dropped (0: no change).
    drop: u32,
}

/// The mantissa bits of a float type.
fn mantissa_bits(t: DataType) -> Option<u32> {
    match t {
        DataType::Float16 => Some(10),
        DataType::Float32 => Some(23),
        DataType::Float64 => Some(52),
        _ => None,
    }
}

impl BitRoundCodec {
    /// The codec with `config` for chunks of `repr`.
    ///
    /// # Errors
    /// [`zarr_meta::MetaError::InvalidConfiguration`] for a chunk that is not of a float type,
    /// or more `keepbits` than its mantissa has.
    pub fn new(config: BitRoundConfig, repr: &ChunkRepr) -> Result<Self> {
        let Some(bits) = mantissa_bits(repr.data_type) else {
            return Err(invalid(
                NAME,
                format!(
                    "bitround rounds float16, float32 and float64 data, not {}",
                    repr.data_type
                ),
            ));
        };
        if config.keepbits > bits {
            return Err(invalid(
                NAME,
                format!(
                    "keepbits {} is more than the {bits} mantissa bits of {}",
                    config.keepbits, repr.data_type
                ),
            ));
        }
        repr.validate()?;
        Ok(BitRoundCodec {
            config,
            repr: repr.clone(),
            drop: bits - config.keepbits,
        })
    }

    /// The configuration.
    pub fn config(&self) -> BitRoundConfig {
        self.config
    }
}

/// Builds `numcodecs.bitround` from its definition.
pub(crate) fn factory(def: &ExtensionDef, repr: &ChunkRepr, _: &CodecRegistry) -> Result<Codec> {
    let config: BitRoundConfig = def.parse_configuration(ExtensionPoint::Codec)?;
    Ok(Codec::ArrayToArray(Box::new(BitRoundCodec::new(
        config, repr,
    )?)))
}

macro_rules! round_bits {
    ($name:ident, $u:ty, $n:literal) => {
        /// Rounds every element's bits in place, dropping `drop` (1 or more) mantissa bits.
        fn $name(data: &mut [u8], drop: u32) {
            let mask: $u = !0 << drop;
            let half: $u = (1 << (drop - 1)) - 1;
            for e in data.chunks_exact_mut($n) {
                let mut b = <$u>::from_ne_bytes(e.try_into().expect("an element"));
                b = b.wrapping_add(((b >> drop) & 1) + half) & mask;
                e.copy_from_slice(&b.to_ne_bytes());
            }
        }
    };
}

round_bits!(round16, u16, 2);
round_bits!(round32, u32, 4);
round_bits!(round64, u64, 8);

impl ArrayToArrayCodec for BitRoundCodec {
    fn name(&self) -> &'static str {
        NAME
    }

    fn to_def(&self) -> ExtensionDef {
        self.config.into()
    }

    fn decoded_repr(&self) -> &ChunkRepr {
        &self.repr
    }

    fn encoded_repr(&self) -> &ChunkRepr {
        &self.repr
    }

    fn encode(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        let n = self.repr.byte_len()?;
        check_len("the input", n, input.len())?;
        check_len("the output buffer", n, out.len())?;
        out.copy_from_slice(input);
        if self.drop > 0 {
            match self.repr.data_type {
                DataType::Float16 => round16(out, self.drop),
                DataType::Float32 => round32(out, self.drop),
                _ => round64(out, self.drop),
            }
        }
        Ok(())
    }

    fn decode(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        let n = self.repr.byte_len()?;
        check_len("the input", n, input.len())?;
        check_len("the output buffer", n, out.len())?;
        out.copy_from_slice(input);
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
    fn config_round_trips_and_bad_ones_are_refused() {
        let json = r#"{"name":"numcodecs.bitround","configuration":{"keepbits":10}}"#;
        let def: ExtensionDef = serde_json::from_str(json).unwrap();
        let c = factory(&def, &repr(DataType::Float32, 2), &default_registry()).unwrap();
        assert_eq!(serde_json::to_string(&c.to_def()).unwrap(), json);
        // 10 bits is float16's whole mantissa; 11 is too many
        assert!(factory(&def, &repr(DataType::Float16, 2), &default_registry()).is_ok());
        for (json, t) in [
            (r#"{"keepbits":11}"#, DataType::Float16),
            (r#"{"keepbits":-1}"#, DataType::Float32),
            (r#"{"keepbits":3}"#, DataType::Int32),
            (r#"{"keepbits":3}"#, DataType::Complex64),
            (r#"{}"#, DataType::Float32),
        ] {
            let def: ExtensionDef = serde_json::from_str(&format!(
                r#"{{"name":"numcodecs.bitround","configuration":{json}}}"#
            ))
            .unwrap();
            let err =
                zarr_testkit::report(&factory(&def, &repr(t, 2), &default_registry()).unwrap_err());
            assert!(
                err.starts_with("invalid configuration for codec \"numcodecs.bitround\""),
                "{json}: {err}"
            );
        }
    }

    fn round_f64(v: f64, keep: u32) -> f64 {
        let c = BitRoundCodec::new(
            BitRoundConfig { keepbits: keep },
            &repr(DataType::Float64, 1),
        )
        .unwrap();
        let mut out = [0u8; 8];
        c.encode(&v.to_ne_bytes(), &mut out).unwrap();
        f64::from_ne_bytes(out)
    }

    #[test]
    fn ties_go_to_even() {
        // 1 + 2^-2 and 1 + 3 * 2^-2 with one bit kept: halfway, to the even neighbour
        assert_eq!(round_f64(1.25, 1), 1.0);
        assert_eq!(round_f64(1.75, 1), 2.0);
        assert_eq!(round_f64(1.3, 52), 1.3);
        assert_eq!(round_f64(0.0, 0), 0.0);
        assert!(round_f64(f64::NAN, 4).is_nan());
        assert_eq!(round_f64(f64::INFINITY, 4), f64::INFINITY);
    }

    proptest! {
        #[test]
        fn within_half_an_ulp_of_the_kept_bits_and_idempotent(v in -1e30f64..1e30, keep in 0u32..52) {
            let r = round_f64(v, keep);
            if v != 0.0 {
                let ulp = 2f64.powi(v.abs().log2().floor() as i32 - keep as i32);
                prop_assert!((r - v).abs() <= ulp / 2.0 * (1.0 + 1e-12), "{v} -> {r}");
            }
            prop_assert_eq!(round_f64(r, keep), r);
        }
    }
}
