//! The `bytes` codec (array -> bytes): the chunk's elements in C order, in a fixed byte order.
//!
//! Name: `bytes`. Configuration: `endian`, `"little"` or `"big"`; it may be left out for data
//! types with no byte order (one-byte types and `r<N>` raw bits), as zarr-python does.
//! See the [Zarr v3 spec](https://zarr-specs.readthedocs.io/en/latest/v3/codecs/bytes/index.html).
//!
//! On a little-endian machine, `little` is a plain copy (and decoding writes straight into the
//! caller's buffer); `big` swaps each component (the two halves of a complex number swap
//! separately).
//!
//! ```
//! use zarr_codecs::{default_registry, ChunkRepr, CodecChain, EncodeOptions};
//! use zarr_meta::{DataType, FillValue};
//!
//! let repr = ChunkRepr::new(vec![2], DataType::UInt16, FillValue::zero(DataType::UInt16));
//! let json = r#"[{"name": "bytes", "configuration": {"endian": "big"}}]"#;
//! let chain = CodecChain::from_json(json, &repr, &default_registry())?;
//! let chunk: Vec<u8> = [1u16, 0x0203].iter().flat_map(|v| v.to_ne_bytes()).collect();
//! let encoded = chain.encode(&chunk, EncodeOptions::WRITE_EMPTY)?.ok_or("not stored")?;
//! assert_eq!(encoded, [0, 1, 2, 3]);
//! assert_eq!(chain.decode(&encoded)?.as_bytes(), &chunk[..]);
//! assert_eq!(serde_json::to_string(&chain.to_defs())?, json.replace(' ', ""));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use serde::{Deserialize, Serialize};
use zarr_meta::{ExtensionDef, ExtensionPoint, MetaError};

use zarr_grid::geometry::{block_runs, linear_index, Region};

use crate::codec::{ArrayToBytesCodec, Codec};
use crate::error::{CodecError, Result};
use crate::registry::CodecRegistry;
use crate::repr::ChunkRepr;
use crate::source::{single_range, ByteRange, ByteRangeSource};

/// The codec's name.
pub const NAME: &str = "bytes";

/// A byte order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Endian {
    /// Least significant byte first.
    Little,
    /// Most significant byte first.
    Big,
}

impl Endian {
    /// The byte order of this machine.
    pub const fn native() -> Endian {
        if cfg!(target_endian = "big") {
            Endian::Big
        } else {
            Endian::Little
        }
    }
}

/// The configuration of `bytes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BytesConfig {
    /// The byte order; required for data types that have one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endian: Option<Endian>,
}

/// `{"name": "bytes"}` without a byte order (one-byte types), else with the configuration.
impl From<BytesConfig> for ExtensionDef {
    fn from(config: BytesConfig) -> Self {
        match config.endian {
            None => ExtensionDef::new(NAME),
            Some(_) => crate::config::def(NAME, &config),
        }
    }
}

/// The `bytes` codec, built for one chunk representation.
#[derive(Debug, Clone)]
pub struct BytesCodec {
    repr: ChunkRepr,
    endian: Option<Endian>,
    /// The component width to swap, when the byte order differs from the machine's.
    swap: Option<usize>,
    len: usize,
}

impl BytesCodec {
    /// Whether the stored value exists (`false` when missing), after checking that its size is
    /// the chunk's: what every partial read of a `bytes` value checks first.
    fn stored_size_checked(&self, source: &dyn ByteRangeSource) -> Result<bool> {
        match source.size()? {
            None => Ok(false),
            Some(n) if n != self.len as u64 => Err(CodecError::SizeMismatch {
                codec: NAME,
                expected: self.len as u64,
                got: n,
            }),
            Some(_) => Ok(true),
        }
    }

    /// Whether the encoded bytes are the decoded ones as they are (the machine's byte order,
    /// or elements without one).
    pub fn is_native_order(&self) -> bool {
        self.swap.is_none()
    }

    /// The codec for `repr` with byte order `endian`.
    ///
    /// # Errors
    /// [`MetaError::InvalidConfiguration`] if `endian` is missing for a data type with a byte
    /// order; [`CodecError::ChunkTooLarge`] for a chunk that does not fit in memory.
    pub fn new(repr: ChunkRepr, endian: Option<Endian>) -> Result<Self> {
        let len = repr.validate()?;
        let component = repr.data_type.endian_component_size();
        let swap = match (component, endian) {
            (Some(_), None) => {
                return Err(ExtensionDef::new(NAME)
                    .invalid_configuration(
                        ExtensionPoint::Codec,
                        format!(
                            "\"endian\" is required for data type {} (\"little\" or \"big\")",
                            repr.data_type
                        ),
                    )
                    .into())
            }
            (Some(width), Some(e)) if e != Endian::native() => Some(width),
            _ => None,
        };
        Ok(BytesCodec {
            repr,
            endian,
            swap,
            len,
        })
    }

    /// The configured byte order (`None` if it was left out).
    pub fn endian(&self) -> Option<Endian> {
        self.endian
    }

    /// Decodes the first `data.len()` bytes of a chunk in place (a whole number of
    /// elements): the byte order, element by element.
    fn swap_prefix(&self, data: &mut [u8]) {
        if let Some(width) = self.swap {
            swap_in_place(data, width);
        }
    }

    fn check_len(&self, what: &'static str, got: usize) -> Result<()> {
        if got == self.len {
            Ok(())
        } else {
            Err(CodecError::BufferLength {
                what,
                expected: self.len as u64,
                got: got as u64,
            })
        }
    }
}

/// Point reads of an uncompressed chunk read the bytes between two points' elements too when
/// they are at most this far apart: one request instead of two.
pub const POINT_GAP: u64 = 4096;

/// Builds `bytes` from its definition.
pub(crate) fn factory(def: &ExtensionDef, repr: &ChunkRepr, _: &CodecRegistry) -> Result<Codec> {
    let config: BytesConfig = def.parse_configuration(ExtensionPoint::Codec)?;
    let codec = BytesCodec::new(repr.clone(), config.endian).map_err(|e| rename(e, def))?;
    Ok(Codec::ArrayToBytes(Box::new(codec)))
}

/// Reports a configuration error under the definition's own name.
fn rename(e: CodecError, def: &ExtensionDef) -> CodecError {
    match e {
        CodecError::Metadata(MetaError::InvalidConfiguration { reason, .. }) => def
            .invalid_configuration(ExtensionPoint::Codec, reason)
            .into(),
        other => other,
    }
}

impl ArrayToBytesCodec for BytesCodec {
    fn name(&self) -> &'static str {
        NAME
    }

    fn to_def(&self) -> ExtensionDef {
        BytesConfig {
            endian: self.endian,
        }
        .into()
    }

    fn decoded_repr(&self) -> &ChunkRepr {
        &self.repr
    }

    fn encoded_size_bound(&self) -> u64 {
        self.len as u64
    }

    fn fixed_encoded_size(&self) -> Option<u64> {
        Some(self.len as u64)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn encodes_as_is(&self) -> bool {
        self.is_native_order()
    }

    fn decodes_prefix(&self) -> bool {
        true
    }

    fn decode_prefix_in_place(&self, prefix: &mut [u8]) -> Result<()> {
        self.swap_prefix(prefix);
        Ok(())
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        self.check_len("the chunk", input.len())?;
        match self.swap {
            None => Ok(input.to_vec()),
            Some(width) => {
                let mut out = vec![0u8; input.len()];
                copy_swapped(input, &mut out, width);
                Ok(out)
            }
        }
    }

    fn encode_owned(&self, mut input: Vec<u8>) -> Result<Vec<u8>> {
        self.check_len("the chunk", input.len())?;
        if let Some(width) = self.swap {
            swap_in_place(&mut input, width);
        }
        Ok(input)
    }

    fn decode_into(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        self.check_len("the output buffer", out.len())?;
        if input.len() != self.len {
            return Err(CodecError::SizeMismatch {
                codec: NAME,
                expected: self.len as u64,
                got: input.len() as u64,
            });
        }
        match self.swap {
            None => out.copy_from_slice(input),
            Some(width) => copy_swapped(input, out, width),
        }
        Ok(())
    }

    fn decodes_in_place(&self) -> bool {
        true
    }

    fn supports_partial_decode(&self) -> bool {
        true
    }

    /// Reads only the bytes from the region's first element to its last (the value's size,
    /// then one range request), so a slab at the start of a chunk reads a slab's bytes, not
    /// the chunk's. A stored value of another size than the chunk's is an error.
    fn decode_region(
        &self,
        source: &dyn ByteRangeSource,
        region: &Region,
        out: &mut [u8],
    ) -> Result<bool> {
        let elem = self.repr.element_size();
        let shape = &self.repr.shape;
        let linear = |pos: &mut dyn Iterator<Item = u64>| -> usize {
            pos.zip(shape)
                .fold(0usize, |acc, (p, &n)| acc * n as usize + p as usize)
        };
        // the caller checked that the (non-empty) region lies inside the chunk
        let first = linear(&mut region.start.iter().copied()) * elem;
        let last = linear(
            &mut region
                .start
                .iter()
                .zip(&region.shape)
                .map(|(&s, &n)| s + n - 1),
        );
        let end = (last + 1) * elem;
        if !self.stored_size_checked(source)? {
            return Ok(false);
        }
        let Some(got) = source.get_ranges(&[ByteRange::Range {
            start: first as u64,
            end: end as u64,
        }])?
        else {
            return Ok(false);
        };
        let mut span = single_range(got, (end - first) as u64)?;
        self.swap_prefix(&mut span);
        let zeros = vec![0u64; region.rank()];
        block_runs(
            shape,
            &region.start,
            &region.shape,
            &zeros,
            &region.shape,
            elem,
            |s, d, n| out[d..d + n].copy_from_slice(&span[s - first..s - first + n]),
        );
        Ok(true)
    }

    /// Reads only the points' elements (the value's size, then one request of their byte
    /// spans, spans less than [`POINT_GAP`] bytes apart read as one).
    fn decode_points(
        &self,
        source: &dyn ByteRangeSource,
        points: &[Vec<u64>],
        out: &mut [u8],
    ) -> Result<bool> {
        let elem = self.repr.element_size();
        if !self.stored_size_checked(source)? {
            return Ok(false);
        }
        // the points' byte offsets, in order, and the coalesced spans that hold them
        let mut offsets: Vec<(u64, usize)> = points
            .iter()
            .enumerate()
            .map(|(i, p)| (linear_index(p, &self.repr.shape) * elem as u64, i))
            .collect();
        offsets.sort_unstable();
        let mut spans: Vec<(u64, u64)> = Vec::new();
        for &(at, _) in &offsets {
            match spans.last_mut() {
                Some(s) if at <= s.1 + POINT_GAP => s.1 = s.1.max(at + elem as u64),
                _ => spans.push((at, at + elem as u64)),
            }
        }
        let ranges: Vec<ByteRange> = spans
            .iter()
            .map(|&(start, end)| ByteRange::Range { start, end })
            .collect();
        let Some(got) = source.get_ranges(&ranges)? else {
            return Ok(false);
        };
        if got.len() != ranges.len() {
            return Err(CodecError::SourceRanges {
                expected: ranges.len(),
                got: got.len(),
            });
        }
        let mut span = 0;
        for &(at, i) in &offsets {
            while at >= spans[span].1 {
                span += 1;
            }
            let (start, end) = spans[span];
            let bytes = &got[span];
            if bytes.len() as u64 != end - start {
                return Err(CodecError::ShortRead {
                    expected: end - start,
                    got: bytes.len() as u64,
                });
            }
            let from = (at - start) as usize;
            out[i * elem..(i + 1) * elem].copy_from_slice(&bytes[from..from + elem]);
        }
        self.swap_prefix(out);
        Ok(true)
    }

    fn decode_in_place(&self, data: &mut [u8]) -> Result<()> {
        if data.len() != self.len {
            return Err(CodecError::SizeMismatch {
                codec: NAME,
                expected: self.len as u64,
                got: data.len() as u64,
            });
        }
        if let Some(width) = self.swap {
            swap_in_place(data, width);
        }
        Ok(())
    }
}

/// Reverses the bytes of every `width`-byte component of `data`.
pub(crate) fn swap_in_place(data: &mut [u8], width: usize) {
    fn swap_n<const N: usize>(data: &mut [u8]) {
        for c in data.chunks_exact_mut(N) {
            let mut a = [0u8; N];
            a.copy_from_slice(c);
            a.reverse();
            c.copy_from_slice(&a);
        }
    }
    match width {
        2 => swap_n::<2>(data),
        4 => swap_n::<4>(data),
        8 => swap_n::<8>(data),
        w if w > 1 => data.chunks_exact_mut(w).for_each(<[u8]>::reverse),
        _ => {}
    }
}

/// Copies `src` to `dst` reversing the bytes of every `width`-byte component.
pub(crate) fn copy_swapped(src: &[u8], dst: &mut [u8], width: usize) {
    fn copy_n<const N: usize>(src: &[u8], dst: &mut [u8]) {
        for (d, s) in dst.chunks_exact_mut(N).zip(src.chunks_exact(N)) {
            let mut a = [0u8; N];
            a.copy_from_slice(s);
            a.reverse();
            d.copy_from_slice(&a);
        }
    }
    match width {
        2 => copy_n::<2>(src, dst),
        4 => copy_n::<4>(src, dst),
        8 => copy_n::<8>(src, dst),
        w if w > 1 => {
            for (d, s) in dst.chunks_exact_mut(w).zip(src.chunks_exact(w)) {
                d.copy_from_slice(s);
                d.reverse();
            }
        }
        _ => dst.copy_from_slice(src),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::default_registry;
    use proptest::prelude::*;
    use zarr_meta::{DataType, FillValue};

    fn repr(t: DataType, shape: Vec<u64>) -> ChunkRepr {
        ChunkRepr::new(shape, t, FillValue::zero(t))
    }

    fn build(json: &str, r: &ChunkRepr) -> Result<Codec> {
        let def: ExtensionDef = serde_json::from_str(json).unwrap();
        factory(&def, r, &default_registry())
    }

    #[test]
    fn config_round_trips_and_endian_is_required_for_multibyte() {
        for json in [
            r#"{"name":"bytes","configuration":{"endian":"little"}}"#,
            r#"{"name":"bytes"}"#,
        ] {
            let c = build(json, &repr(DataType::UInt8, vec![3])).unwrap();
            assert_eq!(serde_json::to_string(&c.to_def()).unwrap(), json);
        }
        let err = build(r#"{"name":"bytes"}"#, &repr(DataType::Int32, vec![3])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid configuration for codec \"bytes\": \"endian\" is required for data type int32 (\"little\" or \"big\")"
        );
        assert!(build(
            r#"{"name":"bytes","configuration":{"endian":"middle"}}"#,
            &repr(DataType::Int32, vec![3])
        )
        .is_err());
        assert!(build(
            r#"{"name":"bytes","configuration":{"endian":"big","x":1}}"#,
            &repr(DataType::Int32, vec![3])
        )
        .is_err());
        // raw bits have no byte order
        let r8 = DataType::from_name("r24").unwrap();
        assert!(build(r#"{"name":"bytes"}"#, &repr(r8, vec![3])).is_ok());
    }

    #[test]
    fn big_endian_swaps_complex_components_separately() {
        let r = repr(DataType::Complex64, vec![1]);
        let Codec::ArrayToBytes(c) =
            build(r#"{"name":"bytes","configuration":{"endian":"big"}}"#, &r).unwrap()
        else {
            panic!()
        };
        let chunk: Vec<u8> = [1.0f32, 2.0].iter().flat_map(|v| v.to_ne_bytes()).collect();
        let enc = c.encode(&chunk).unwrap();
        let want: Vec<u8> = [1.0f32, 2.0].iter().flat_map(|v| v.to_be_bytes()).collect();
        assert_eq!(enc, want);
        let mut out = vec![0u8; 8];
        c.decode_into(&enc, &mut out).unwrap();
        assert_eq!(out, chunk);
        assert!(matches!(
            c.decode_into(&enc[1..], &mut out),
            Err(CodecError::SizeMismatch { .. })
        ));
    }

    proptest! {
        #[test]
        fn round_trip(width in prop::sample::select(vec![1usize, 2, 4, 8, 16, 3]), n in 0usize..40, big in any::<bool>(), seed in any::<u64>()) {
            let t = match width {
                1 => DataType::UInt8, 2 => DataType::Int16, 4 => DataType::Float32,
                8 => DataType::Float64, 16 => DataType::Complex128,
                _ => DataType::from_name("r24").unwrap(),
            };
            let r = repr(t, vec![n as u64]);
            let codec = BytesCodec::new(r, Some(if big { Endian::Big } else { Endian::Little })).unwrap();
            let data = zarr_testkit::Rng::new(seed).bytes(n * width);
            let enc = codec.encode(&data).unwrap();
            let mut out = vec![0u8; data.len()];
            codec.decode_into(&enc, &mut out).unwrap();
            prop_assert_eq!(&out, &data);
            let mut inplace = enc.clone();
            codec.decode_in_place(&mut inplace).unwrap();
            prop_assert_eq!(&inplace, &data);
            prop_assert_eq!(codec.encode_owned(data.clone()).unwrap(), enc);
        }
    }
}
