//! The `sparse_layout` codec (array -> bytes): each chunk held in a sparse memory layout (COO,
//! CSR or CSC) instead of a dense C-order array.
//!
//! Name: `sparse_layout` (this project's extension, not yet registered in zarr-extensions; the
//! specification is the project's design note `sparse_layout.md`). Configuration:
//!
//! - `format`: `"coo"` (any rank >= 1), `"csr"` or `"csc"` (2-d chunks only);
//! - `index_data_type`: `"uint16"`, `"uint32"` or `"uint64"`, for COO coordinates and CSR/CSC
//!   minor indices; it must hold `chunk_shape[d] - 1` on every axis it indexes;
//! - `pointer_data_type` (`csr`/`csc` only, and required there): `"uint32"` or `"uint64"`; it
//!   must hold the chunk's element count.
//!
//! Unknown keys are errors, and so is a configuration that does not suit the chunk (a `csr`
//! codec on 3-d chunks, an index type too narrow for the chunk shape): both are checked when the
//! chain is built, that is when the metadata is read. Only fixed-size data types.
//!
//! The byte format is the one of [`zarr_layout_sparse`]: a 32-byte header, a section table, and
//! 8-byte-aligned sections. Encoding drops the elements equal to the fill value (bit patterns,
//! every NaN equal to every NaN, so `-0.0` is stored when the fill is `0.0`); a chunk with no
//! entry left is not stored at all ([`crate::CodecChain::encode`] returns `None`, even for
//! arrays that keep empty chunks, [`crate::EmptyChunks::Write`]). Decoding validates everything before use, so corrupt bytes
//! are an error, never a panic; the chain hands the decoder an 8-byte-aligned buffer
//! ([`needs_aligned_input`](crate::ArrayToBytesCodec::needs_aligned_input)), so the sections are
//! cast in place. A sparse chunk can be larger than the dense one (3-d COO with `uint16`
//! indices: 10 bytes per entry against 4 for `float32`): the decoders before this codec are
//! bounded by the spec's size bound ([`SparseLayoutCodec::encoded_size_bound`]), not by the
//! dense size.
//!
//! Sparse (not densified) access: decoding into [`crate::ChunkOut::Serialized`] runs only the
//! bytes -> bytes decoders and returns the buffer this codec would decode, and
//! [`SparseLayoutCodec::decode_sparse`] views it as a [`SparseChunk`] (zero-copy COO
//! coordinates and values, or a `sprs` matrix view for CSR/CSC).
//!
//! ```
//! # #[cfg(all(feature = "zstd", feature = "crc32c"))]
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use zarr_codecs::{default_registry, AlignedBuffer, ChunkOut, ChunkRepr, CodecChain};
//! use zarr_codecs::EncodeOptions;
//! use zarr_codecs::sparse_layout::SparseLayoutCodec;
//! use zarr_meta::{DataType, FillValue};
//!
//! let repr = ChunkRepr::new(vec![4, 5], DataType::Float32, FillValue::zero(DataType::Float32));
//! let json = r#"[{"name": "sparse_layout",
//!                 "configuration": {"format": "csr", "index_data_type": "uint16", "pointer_data_type": "uint32"}},
//!                {"name": "zstd", "configuration": {"level": 3, "checksum": false}},
//!                {"name": "crc32c"}]"#;
//! let chain = CodecChain::from_json(json, &repr, &default_registry())?;
//! let mut dense = [0.0f32; 20];
//! dense[7] = 1.5;
//! dense[13] = -2.0;
//! let chunk: Vec<u8> = dense.iter().flat_map(|v| v.to_ne_bytes()).collect();
//! let stored = chain.encode(&chunk, EncodeOptions::SKIP_EMPTY)?.expect("two entries");
//! assert_eq!(chain.decode(&stored)?.as_bytes(), &chunk[..]);
//!
//! // the sparse form, without densifying: views into the buffer the chain decoded
//! let mut buf = AlignedBuffer::default();
//! chain.decode_into(&stored, ChunkOut::Serialized(&mut buf))?;
//! let codec = SparseLayoutCodec::of(&chain).expect("a sparse_layout chain");
//! let chunk = codec.decode_sparse(buf)?; // owns the buffer
//! let mat = chunk.sprs_view::<f32, u16, u32>()?;
//! assert_eq!(mat.get(1, 2), Some(&1.5));
//! assert_eq!(mat.get(2, 3), Some(&-2.0));
//!
//! // an all-fill chunk is not stored
//! assert!(chain.encode(&[0u8; 80], EncodeOptions::SKIP_EMPTY)?.is_none());
//! assert_eq!(
//!     serde_json::to_value(&chain.to_defs()[0])?,
//!     serde_json::json!({"name": "sparse_layout",
//!         "configuration": {"format": "csr", "index_data_type": "uint16", "pointer_data_type": "uint32"}})
//! );
//! # Ok(())
//! # }
//! # #[cfg(not(all(feature = "zstd", feature = "crc32c")))]
//! # fn main() {}
//! ```

use std::any::Any;

use serde::{Deserialize, Serialize};
use zarr_layout_sparse::{
    encode_dense_bytes, ElementKind, Format, IndexType, Layout, PointerType, SparseChunk,
    SparseError,
};
use zarr_meta::{DataType, ExtensionDef, ExtensionPoint};

use crate::buffer::{is_aligned, AlignedBuffer};
use crate::chain::CodecChain;
use crate::codec::{ArrayToBytesCodec, Codec};
use crate::error::{CodecError, Result};
use crate::registry::CodecRegistry;
use crate::repr::ChunkRepr;

/// The codec's name.
pub const NAME: &str = "sparse_layout";

/// The configuration of `sparse_layout`.
///
/// Serialized as `{"format": "csr", "index_data_type": "uint16", "pointer_data_type": "uint32"}`
/// (no `pointer_data_type` for `coo`). Whether the format, index and pointer types fit together
/// is checked by [`SparseLayoutConfig::layout`]; whether they suit a chunk, when the codec is
/// built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SparseLayoutConfig {
    /// `coo`, `csr` or `csc`.
    #[serde(with = "names::format")]
    pub format: Format,
    /// The type of COO coordinates and CSR/CSC minor indices.
    #[serde(with = "names::index")]
    pub index_data_type: IndexType,
    /// The type of CSR/CSC pointers (`None` for COO).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "names::pointer"
    )]
    pub pointer_data_type: Option<PointerType>,
}

crate::config::codec_def!(SparseLayoutConfig => NAME);

impl SparseLayoutConfig {
    /// The configuration of a layout.
    pub fn from_layout(layout: &Layout) -> Self {
        SparseLayoutConfig {
            format: layout.format(),
            index_data_type: layout.index_type(),
            pointer_data_type: layout.pointer_type(),
        }
    }

    /// The layout; the pointer type must be given for `csr` and `csc` and left out for `coo`.
    ///
    /// # Errors
    /// [`SparseError::MissingPointerType`] or [`SparseError::UnexpectedPointerType`].
    pub fn layout(&self) -> Result<Layout, SparseError> {
        Layout::new(self.format, self.index_data_type, self.pointer_data_type)
    }
}

/// (De)serialization of the layout types by their configuration names.
mod names {
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) mod format {
        use super::*;
        use zarr_layout_sparse::Format;

        pub(crate) fn serialize<S: Serializer>(f: &Format, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_str(f.name())
        }

        pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Format, D::Error> {
            let name = String::deserialize(d)?;
            Format::from_name(&name).ok_or_else(|| {
                D::Error::custom(format!(
                    "unknown format {name:?} (expected \"coo\", \"csr\" or \"csc\")"
                ))
            })
        }
    }

    pub(super) mod index {
        use super::*;
        use zarr_layout_sparse::IndexType;

        pub(crate) fn serialize<S: Serializer>(t: &IndexType, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_str(t.name())
        }

        pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<IndexType, D::Error> {
            let name = String::deserialize(d)?;
            IndexType::from_name(&name).ok_or_else(|| {
                D::Error::custom(format!(
                    "unknown index_data_type {name:?} (expected \"uint16\", \"uint32\" or \"uint64\")"
                ))
            })
        }
    }

    pub(super) mod pointer {
        use super::*;
        use zarr_layout_sparse::PointerType;

        pub(crate) fn serialize<S: Serializer>(
            t: &Option<PointerType>,
            s: S,
        ) -> Result<S::Ok, S::Error> {
            match t {
                Some(t) => s.serialize_str(t.name()),
                None => s.serialize_none(),
            }
        }

        pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
            d: D,
        ) -> Result<Option<PointerType>, D::Error> {
            match Option::<String>::deserialize(d)? {
                None => Ok(None),
                Some(name) => PointerType::from_name(&name).map(Some).ok_or_else(|| {
                    D::Error::custom(format!(
                        "unknown pointer_data_type {name:?} (expected \"uint32\" or \"uint64\")"
                    ))
                }),
            }
        }
    }
}

/// The element kind of a data type: its size and how NaN is recognised. `None` for a data
/// type without a fixed size (the core types all have one).
pub fn element_kind(data_type: DataType) -> Option<ElementKind> {
    Some(match data_type {
        DataType::Bool => ElementKind::BOOL,
        DataType::Int8 => ElementKind::I8,
        DataType::Int16 => ElementKind::I16,
        DataType::Int32 => ElementKind::I32,
        DataType::Int64 => ElementKind::I64,
        DataType::UInt8 => ElementKind::U8,
        DataType::UInt16 => ElementKind::U16,
        DataType::UInt32 => ElementKind::U32,
        DataType::UInt64 => ElementKind::U64,
        DataType::Float16 => ElementKind::F16,
        DataType::Float32 => ElementKind::F32,
        DataType::Float64 => ElementKind::F64,
        DataType::Complex64 => ElementKind::COMPLEX64,
        DataType::Complex128 => ElementKind::COMPLEX128,
        DataType::RawBits(n) => ElementKind::opaque(n.get()).ok()?,
        _ => return None,
    })
}

/// The `sparse_layout` codec, built for one chunk representation.
#[derive(Debug, Clone)]
pub struct SparseLayoutCodec {
    repr: ChunkRepr,
    layout: Layout,
    kind: ElementKind,
    /// The dense chunk's byte length.
    len: usize,
    /// The spec's bound of an encoded chunk.
    bound: u64,
}

/// The chunk header's nnz field (bytes 8..16), for a chunk this crate encoded.
fn header_nnz(bytes: &[u8]) -> Option<u64> {
    let field: [u8; 8] = bytes.get(8..16)?.try_into().ok()?;
    Some(u64::from_le_bytes(field))
}

impl SparseLayoutCodec {
    /// The array -> bytes codec of `chain` when it is `sparse_layout` and no array -> array
    /// codec comes before it (so that its bytes, after the chain's bytes -> bytes decoders,
    /// are the chunk's sparse form, which [`SparseLayoutCodec::decode_sparse`] reads); `None`
    /// for any other chain.
    pub fn of(chain: &CodecChain) -> Option<&SparseLayoutCodec> {
        if chain.has_array_to_array() {
            return None;
        }
        chain.array_to_bytes().as_any().downcast_ref()
    }

    /// The codec for chunks of `repr` in `layout`.
    ///
    /// # Errors
    /// [`zarr_meta::MetaError::InvalidConfiguration`] when the layout does not suit the chunk
    /// (format vs rank, an index type that cannot hold `chunk_shape[d] - 1`, a pointer type that
    /// cannot hold the element count) or the data type has no fixed size;
    /// [`CodecError::ChunkTooLarge`] for a chunk that does not fit in memory.
    pub fn new(layout: Layout, repr: ChunkRepr) -> Result<Self> {
        let len = repr.validate()?;
        let invalid = |reason: String| -> CodecError {
            ExtensionDef::new(NAME)
                .invalid_configuration(ExtensionPoint::Codec, reason)
                .into()
        };
        let kind = element_kind(repr.data_type).ok_or_else(|| {
            invalid(format!(
                "data type {} has no fixed size (sparse_layout holds fixed-size data types only)",
                repr.data_type
            ))
        })?;
        layout
            .check_shape(&repr.shape)
            .map_err(|e| invalid(format!("chunk shape {:?}: {e}", repr.shape)))?;
        let bound = layout
            .encoded_size_bound(&repr.shape, kind.size())
            .map_err(|_| CodecError::ChunkTooLarge {
                shape: repr.shape.clone(),
                element_size: kind.size(),
            })?;
        Ok(SparseLayoutCodec {
            repr,
            layout,
            kind,
            len,
            bound,
        })
    }

    /// The configuration written back to metadata.
    pub fn config(&self) -> SparseLayoutConfig {
        SparseLayoutConfig::from_layout(&self.layout)
    }

    /// The layout (format, index and pointer types).
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The chunk shape this codec encodes.
    pub fn chunk_shape(&self) -> &[u64] {
        &self.repr.shape
    }

    /// The element kind of the data type (size, NaN recognition).
    pub fn element_kind(&self) -> ElementKind {
        self.kind
    }

    /// The spec's bound of an encoded chunk: `align8(32 + 16 * n_sections)` plus, per section,
    /// `align8` of its size with nnz = the chunk's element count.
    pub fn encoded_size_bound(&self) -> u64 {
        self.bound
    }

    /// Validates the encoded chunk held in `bytes` (8-byte aligned: a buffer the chain
    /// decoded, see [`crate::ChunkOut::Serialized`]) and views it in place.
    /// `bytes` is the chunk's storage: a borrowed `&[u8]` or an owned buffer
    /// ([`AlignedBuffer`]), which the chunk then keeps.
    ///
    /// # Errors
    /// [`CodecError::Sparse`] for corrupt bytes, a chunk of another layout, shape or value
    /// size, or an unaligned buffer.
    pub fn decode_sparse<B: AsRef<[u8]>>(&self, bytes: B) -> Result<SparseChunk<B>> {
        if bytes.as_ref().len() as u64 > self.bound {
            return Err(CodecError::ExceedsBound {
                codec: NAME,
                limit: self.bound,
            });
        }
        SparseChunk::decode(bytes, &self.layout, &self.repr.shape, self.kind.size())
            .map_err(CodecError::from)
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

/// Builds `sparse_layout` from its definition.
pub(crate) fn factory(def: &ExtensionDef, repr: &ChunkRepr, _: &CodecRegistry) -> Result<Codec> {
    let config: SparseLayoutConfig = def.parse_configuration(ExtensionPoint::Codec)?;
    let layout = config.layout()?;
    let codec = SparseLayoutCodec::new(layout, repr.clone())?;
    Ok(Codec::ArrayToBytes(Box::new(codec)))
}

impl ArrayToBytesCodec for SparseLayoutCodec {
    fn name(&self) -> &'static str {
        NAME
    }

    fn to_def(&self) -> ExtensionDef {
        self.config().into()
    }

    fn decoded_repr(&self) -> &ChunkRepr {
        &self.repr
    }

    fn encoded_size_bound(&self) -> u64 {
        self.bound
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
        self.check_len("the chunk", input.len())?;
        Ok(encode_dense_bytes(
            &self.layout,
            &self.repr.shape,
            self.kind,
            self.repr.fill_value.as_bytes(),
            input,
        )?)
    }

    fn encode_or_skip(&self, input: &[u8]) -> Result<Option<Vec<u8>>> {
        self.check_len("the chunk", input.len())?;
        if self.repr.is_fill(input) {
            return Ok(None);
        }
        let bytes = self.encode(input)?;
        Ok((header_nnz(&bytes) != Some(0)).then_some(bytes))
    }

    fn stores_empty_chunks(&self) -> bool {
        false
    }

    fn needs_aligned_input(&self) -> bool {
        true
    }

    fn decode_into(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        self.check_len("the output buffer", out.len())?;
        if !is_aligned(input) {
            return self.decode_into(&AlignedBuffer::from_slice(input), out);
        }
        let chunk = self.decode_sparse(input)?;
        chunk.densify_bytes(out, self.repr.fill_value.as_bytes())?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::default_registry;
    use crate::CodecChain;
    use proptest::prelude::*;
    use zarr_meta::FillValue;

    fn repr(t: DataType, shape: Vec<u64>) -> ChunkRepr {
        ChunkRepr::new(shape, t, FillValue::zero(t))
    }

    fn build(json: &str, r: &ChunkRepr) -> Result<Codec> {
        let def: ExtensionDef = serde_json::from_str(json).unwrap();
        factory(&def, r, &default_registry())
    }

    fn sparse(json: &str, r: &ChunkRepr) -> Box<dyn ArrayToBytesCodec> {
        match build(json, r).unwrap() {
            Codec::ArrayToBytes(c) => c,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn config_round_trips() {
        let r2 = repr(DataType::Float32, vec![20, 25]);
        for json in [
            r#"{"name":"sparse_layout","configuration":{"format":"coo","index_data_type":"uint16"}}"#,
            r#"{"name":"sparse_layout","configuration":{"format":"csr","index_data_type":"uint32","pointer_data_type":"uint64"}}"#,
            r#"{"name":"sparse_layout","configuration":{"format":"csc","index_data_type":"uint64","pointer_data_type":"uint32"}}"#,
        ] {
            let c = build(json, &r2).unwrap();
            assert_eq!(c.kind(), "array -> bytes");
            assert_eq!(serde_json::to_string(&c.to_def()).unwrap(), json);
        }
        let config: SparseLayoutConfig = serde_json::from_str(
            r#"{"format":"csr","index_data_type":"uint16","pointer_data_type":"uint32"}"#,
        )
        .unwrap();
        assert_eq!(
            config.layout().unwrap(),
            Layout::csr(IndexType::U16, PointerType::U32)
        );
        assert_eq!(
            SparseLayoutConfig::from_layout(&config.layout().unwrap()),
            config
        );
    }

    #[test]
    fn bad_configurations_are_refused() {
        let r2 = repr(DataType::Float32, vec![20, 25]);
        let cases = [
            // unknown key
            (
                r#"{"format":"coo","index_data_type":"uint16","extra":1}"#,
                "unknown field `extra`",
            ),
            (
                r#"{"format":"bsr","index_data_type":"uint16"}"#,
                "unknown format \"bsr\"",
            ),
            (
                r#"{"format":"coo","index_data_type":"uint8"}"#,
                "unknown index_data_type",
            ),
            (
                r#"{"format":"coo","index_data_type":"int32"}"#,
                "unknown index_data_type",
            ),
            (
                r#"{"format":"csr","index_data_type":"uint16","pointer_data_type":"uint16"}"#,
                "unknown pointer_data_type",
            ),
            (
                r#"{"format":"csr","index_data_type":"uint16"}"#,
                "needs a pointer_data_type",
            ),
            (
                r#"{"format":"coo","index_data_type":"uint16","pointer_data_type":"uint32"}"#,
                "takes no pointer_data_type",
            ),
            (r#"{"index_data_type":"uint16"}"#, "missing field `format`"),
            (r#"{"format":"coo"}"#, "missing field `index_data_type`"),
            (r#"{"format":"coo","index_data_type":16}"#, "invalid type"),
        ];
        for (config, message) in cases {
            let json = format!(r#"{{"name":"sparse_layout","configuration":{config}}}"#);
            let err = zarr_testkit::report(&build(&json, &r2).unwrap_err());
            // serde's errors, or the layout's own (CodecError::Sparse)
            assert!(
                (err.starts_with("invalid configuration for codec \"sparse_layout\": ")
                    || err.starts_with("sparse_layout: "))
                    && err.contains(message),
                "{config}: {err}"
            );
        }
        assert!(build(r#"{"name":"sparse_layout"}"#, &r2).is_err());
    }

    #[test]
    fn configurations_must_suit_the_chunk() {
        let csr = r#"{"name":"sparse_layout","configuration":{"format":"csr","index_data_type":"uint16","pointer_data_type":"uint32"}}"#;
        // csr on 3-d chunks (the spx_csr_3d example)
        let err =
            zarr_testkit::report(&build(csr, &repr(DataType::Float32, vec![2, 2, 2])).unwrap_err());
        assert!(err.contains("cannot hold a 3-d chunk"), "{err}");
        // coo on 0-d chunks
        let coo16 = r#"{"name":"sparse_layout","configuration":{"format":"coo","index_data_type":"uint16"}}"#;
        assert!(build(coo16, &repr(DataType::Int8, vec![]))
            .unwrap_err()
            .to_string()
            .contains("cannot hold a 0-d chunk"));
        // uint16 holds 65535 (extent 65536) but not 65536
        assert!(build(coo16, &repr(DataType::UInt8, vec![65536, 1])).is_ok());
        let err = zarr_testkit::report(
            &build(coo16, &repr(DataType::UInt8, vec![2, 65537])).unwrap_err(),
        );
        assert!(
            err.contains("index type uint16 cannot hold index 65536 on axis 1"),
            "{err}"
        );
        // csr indexes columns only, csc rows only
        assert!(build(csr, &repr(DataType::UInt8, vec![100_000, 4])).is_ok());
        assert!(build(csr, &repr(DataType::UInt8, vec![4, 100_000])).is_err());
        let csc = csr.replace("\"csr\"", "\"csc\"");
        assert!(build(&csc, &repr(DataType::UInt8, vec![4, 100_000])).is_ok());
        assert!(build(&csc, &repr(DataType::UInt8, vec![100_000, 4])).is_err());
        // the pointer type must hold the element count
        let csr64 = csr.replace("uint16", "uint64");
        let err = zarr_testkit::report(
            &build(&csr64, &repr(DataType::UInt8, vec![1 << 16, 1 << 16])).unwrap_err(),
        );
        assert!(err.contains("pointer type uint32 cannot hold"), "{err}");
        assert!(build(
            &csr64.replace("\"uint32\"", "\"uint64\""),
            &repr(DataType::UInt8, vec![1 << 16, 1 << 16])
        )
        .is_ok());
    }

    #[test]
    fn must_understand_false_is_refused_with_or_without_the_codec() {
        // sparse_layout.md: the codec is never `must_understand: false`
        let r2 = repr(DataType::Int32, vec![3, 3]);
        let json = r#"{"name":"sparse_layout","must_understand":false,"configuration":{"format":"coo","index_data_type":"uint16"}}"#;
        let mut without = default_registry();
        without.remove(NAME);
        for registry in [&default_registry(), &without] {
            let err = CodecChain::from_json(&format!("[{json}]"), &r2, registry).unwrap_err();
            let err = zarr_testkit::report(&err);
            assert!(
                err.contains("\"sparse_layout\" must not be marked \"must_understand\": false"),
                "{err}"
            );
        }
        // `true` (the default) is allowed, and not written back
        let on = json.replace("false", "true");
        let chain = CodecChain::from_json(&format!("[{on}]"), &r2, &default_registry()).unwrap();
        assert_eq!(chain.to_defs()[0].must_understand, None);
        // a reader without the codec refuses the array by name
        let plain = json.replace(r#""must_understand":false,"#, "");
        let err = CodecChain::from_json(&format!("[{plain}]"), &r2, &without).unwrap_err();
        assert_eq!(err.to_string(), "unknown codec \"sparse_layout\"");
    }

    #[test]
    fn decoding_refuses_corrupt_and_foreign_chunks() {
        let r = repr(DataType::Int32, vec![3, 4]);
        let c = sparse(
            r#"{"name":"sparse_layout","configuration":{"format":"csr","index_data_type":"uint16","pointer_data_type":"uint32"}}"#,
            &r,
        );
        let dense: Vec<u8> = [0i32, 5, 0, 0, 0, 0, 0, 7, 1, 0, 0, 0]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let enc = c.encode(&dense).unwrap();
        let mut out = vec![0u8; 48];
        c.decode_into(&enc, &mut out).unwrap();
        assert_eq!(out, dense);
        // an unaligned input is copied first
        let mut shifted = vec![0u8; enc.len() + 1];
        shifted[1..].copy_from_slice(&enc);
        c.decode_into(&shifted[1..], &mut out).unwrap();
        assert_eq!(out, dense);
        // every single-byte change of the header and table is refused or decodes validly
        for i in 0..enc.len() {
            let mut bad = enc.clone();
            bad[i] ^= 0x40;
            let _ = c.decode_into(&bad, &mut out);
        }
        // the trailing padding is not needed; anything shorter is refused
        let field = |at: usize| u64::from_le_bytes(enc[at..at + 8].try_into().unwrap()) as usize;
        let values_end = field(32 + 2 * 16) + field(32 + 2 * 16 + 8);
        assert!(values_end < enc.len());
        for n in 0..enc.len() {
            assert_eq!(
                c.decode_into(&enc[..n], &mut out).is_ok(),
                n >= values_end,
                "truncated to {n}"
            );
        }
        assert!(matches!(
            c.decode_into(b"not a sparse chunk at all, really", &mut out),
            Err(CodecError::Sparse { .. })
        ));
        // a chunk of another format
        let coo = sparse(
            r#"{"name":"sparse_layout","configuration":{"format":"coo","index_data_type":"uint16"}}"#,
            &r,
        );
        let err = zarr_testkit::report(&coo.decode_into(&enc, &mut out).unwrap_err());
        assert!(err.contains("stored as csr"), "{err}");
        // wrong buffer lengths
        assert!(matches!(
            c.decode_into(&enc, &mut [0u8; 47]),
            Err(CodecError::BufferLength { .. })
        ));
        assert!(matches!(
            c.encode(&dense[1..]),
            Err(CodecError::BufferLength { .. })
        ));
    }

    #[test]
    fn empty_chunks_are_not_stored_and_minus_zero_is() {
        let r = repr(DataType::Float64, vec![2, 2]);
        let c = sparse(
            r#"{"name":"sparse_layout","configuration":{"format":"coo","index_data_type":"uint16"}}"#,
            &r,
        );
        assert!(!c.stores_empty_chunks());
        assert_eq!(c.encode_or_skip(&[0u8; 32]).unwrap(), None);
        let minus_zero: Vec<u8> = [0.0f64, -0.0, 0.0, 0.0]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let enc = c
            .encode_or_skip(&minus_zero)
            .unwrap()
            .expect("-0.0 is stored");
        assert_eq!(header_nnz(&enc), Some(1));
        let mut out = vec![0u8; 32];
        c.decode_into(&enc, &mut out).unwrap();
        assert_eq!(out, minus_zero);
        // NaN fill: every NaN is the fill value
        let nan = ChunkRepr::new(
            vec![2, 2],
            DataType::Float32,
            FillValue::from_ne_bytes(DataType::Float32, f32::NAN.to_ne_bytes()).unwrap(),
        );
        let c = sparse(
            r#"{"name":"sparse_layout","configuration":{"format":"csc","index_data_type":"uint16","pointer_data_type":"uint32"}}"#,
            &nan,
        );
        let other_nan = f32::from_bits(0x7fc0_0001);
        let chunk: Vec<u8> = [f32::NAN, other_nan, 1.0, f32::NAN]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let enc = c.encode_or_skip(&chunk).unwrap().unwrap();
        assert_eq!(header_nnz(&enc), Some(1));
        let all_nan: Vec<u8> = [other_nan; 4]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        assert_eq!(c.encode_or_skip(&all_nan).unwrap(), None);
    }

    #[test]
    fn every_fixed_size_data_type_has_a_kind() {
        for t in zarr_meta::data_type::CORE_DATA_TYPES {
            let kind = element_kind(t).unwrap();
            assert_eq!(kind.size(), t.size(), "{t}");
        }
        let r24 = DataType::from_name("r24").unwrap();
        assert_eq!(element_kind(r24).unwrap().size(), 3);
    }

    fn data_type(i: usize) -> DataType {
        [
            DataType::Bool,
            DataType::Int8,
            DataType::UInt16,
            DataType::Int32,
            DataType::Float16,
            DataType::Float32,
            DataType::Float64,
            DataType::Complex64,
            DataType::Complex128,
            DataType::from_name("r24").unwrap(),
        ][i]
    }

    /// A chunk of `n` elements of `t`, about `density` of them not equal to zero.
    fn sparse_chunk(t: DataType, n: usize, density: u8, seed: u64) -> Vec<u8> {
        let size = t.size();
        let mut out = vec![0u8; n * size];
        let mut rng = zarr_testkit::Rng::new(seed);
        for e in out.chunks_exact_mut(size) {
            if rng.below(100) >= u64::from(density) {
                continue;
            }
            rng.fill(e);
            if t == DataType::Bool {
                e[0] = 1;
            }
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]
        #[test]
        fn round_trip_every_format(
            format in 0usize..3,
            dims in prop::collection::vec(1u64..7, 1..4),
            index in 0usize..3,
            pointer in 0usize..2,
            t in 0usize..10,
            density in 0u8..=100,
            seed in any::<u64>(),
        ) {
            let format = [Format::Coo, Format::Csr, Format::Csc][format];
            let shape = if format == Format::Coo { dims } else { vec![dims[0], *dims.last().unwrap() + 1] };
            let pointer = format.is_compressed().then_some(PointerType::ALL[pointer]);
            let layout = Layout::new(format, IndexType::ALL[index], pointer).unwrap();
            let t = data_type(t);
            let r = repr(t, shape.clone());
            let c = SparseLayoutCodec::new(layout, r.clone()).unwrap();
            let n: u64 = shape.iter().product();
            let chunk = sparse_chunk(t, n as usize, density, seed);
            let enc = c.encode(&chunk).unwrap();
            prop_assert!(enc.len() as u64 <= c.encoded_size_bound());
            prop_assert_eq!(enc.len() % 8, 0);
            let mut out = vec![0u8; chunk.len()];
            c.decode_into(&enc, &mut out).unwrap();
            prop_assert_eq!(&out, &chunk);
            let skipped = c.encode_or_skip(&chunk).unwrap();
            prop_assert_eq!(skipped.is_none(), r.is_fill(&chunk));
            // the chain with compressors after it
            if !cfg!(all(feature = "zstd", feature = "crc32c")) {
                return Ok(());
            }
            let json = format!(
                r#"[{}, {{"name": "zstd", "configuration": {{"level": 1, "checksum": false}}}}, {{"name": "crc32c"}}]"#,
                serde_json::to_string(&c.to_def()).unwrap()
            );
            let chain = CodecChain::from_json(&json, &r, &default_registry()).unwrap();
            let stored = chain.encode_slice(&chunk).unwrap();
            prop_assert!(stored.len() as u64 <= chain.encoded_size_bound());
            let decoded = chain.decode(&stored).unwrap();
            prop_assert_eq!(decoded.as_bytes(), &chunk[..]);
            let buf = chain.decode_to_array_bytes(&stored).unwrap();
            prop_assert_eq!(buf.as_bytes(), &enc[..]);
            let view = c.decode_sparse(&buf).unwrap();
            let nonfill = chunk.chunks_exact(t.size()).filter(|e| !r.is_fill(e)).count();
            prop_assert_eq!(view.nnz(), nonfill);
        }
    }
}
