//! The chunk format of the `vlen-utf8` and `vlen-bytes` array -> bytes codecs, as numcodecs
//! 0.16 (`VLenUTF8`, `VLenBytes`) writes it for zarr-python 3.1.6: a `u32` little-endian
//! element count, then per element (C order) a `u32` little-endian byte length and the
//! element's bytes (UTF-8 for `vlen-utf8`).
//!
//! The codecs are [`VlenCodec`]: `vlen-utf8` for `string` arrays and `vlen-bytes` for
//! `variable_length_bytes` arrays, each with an empty configuration, as zarr-python writes
//! `{"name": "vlen-utf8", "configuration": {}}`. Their chunks have no fixed-size form, so a
//! chain with one decodes and encodes them through
//! [`ChunkOut::Vlen`](crate::ChunkOut::Vlen) and [`ChunkIn::Vlen`](crate::ChunkIn::Vlen); the
//! byte-buffer methods of
//! [`ArrayToBytesCodec`] refuse them ([`CodecError::NotApplicable`]). A chunk holds every
//! element of the chunk shape (edge chunks padded with the fill value), and decodes to at
//! most [`MAX_DECODED`] bytes, the limit handed to the bytes->bytes codecs before it.
//!
//! A decoded chunk is held as one byte buffer and `count + 1` offsets ([`VlenChunk`]), not as
//! one allocation per element: both allocations are bounded by the stored chunk's length
//! (checked before allocating), and `Vec<String>` or `Vec<Vec<u8>>` is built only where a
//! caller asks for it.
//!
//! ```
//! use zarr_codecs::vlen::{decode, encode, VLEN_UTF8};
//! let stored = encode(["a", "", "é"].iter().map(|s| s.as_bytes()), VLEN_UTF8)?;
//! assert_eq!(stored, [3, 0, 0, 0, 1, 0, 0, 0, b'a', 0, 0, 0, 0, 2, 0, 0, 0, 0xc3, 0xa9]);
//! let chunk = decode(&stored, 3, VLEN_UTF8)?;
//! assert_eq!(chunk.to_strings(VLEN_UTF8)?, ["a", "", "é"]);
//! # Ok::<(), zarr_codecs::CodecError>(())
//! ```

use serde::Deserialize;
use zarr_meta::{DataKind, ExtensionDef, ExtensionPoint};

use crate::codec::{ArrayToBytesCodec, Codec};
use crate::error::{CodecError, Result};
use crate::registry::CodecRegistry;
use crate::repr::ChunkRepr;

/// The name of the UTF-8 codec.
pub const VLEN_UTF8: &str = "vlen-utf8";
/// The name of the byte-string codec.
pub const VLEN_BYTES: &str = "vlen-bytes";

/// Bytes of the count header and of each length prefix.
const PREFIX: usize = 4;

/// A decoded chunk of variable-size elements: their bytes back to back and where each starts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VlenChunk {
    /// `len() + 1` offsets into `data`, the first 0, non-decreasing.
    offsets: Vec<usize>,
    data: Vec<u8>,
}

impl VlenChunk {
    /// A chunk of these elements, in order.
    pub fn from_items<'a>(items: impl IntoIterator<Item = &'a [u8]>) -> VlenChunk {
        let mut chunk = VlenChunk {
            offsets: vec![0],
            data: Vec::new(),
        };
        for item in items {
            chunk.data.extend_from_slice(item);
            chunk.offsets.push(chunk.data.len());
        }
        chunk
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Whether the chunk holds no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes of element `i` (C order), `None` past the end.
    pub fn get(&self, i: usize) -> Option<&[u8]> {
        let start = *self.offsets.get(i)?;
        let end = *self.offsets.get(i + 1)?;
        self.data.get(start..end)
    }

    /// The elements' bytes in order.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> + '_ {
        self.offsets.windows(2).map(|w| &self.data[w[0]..w[1]])
    }

    /// The elements as owned byte strings.
    pub fn to_byte_vecs(&self) -> Vec<Vec<u8>> {
        self.iter().map(<[u8]>::to_vec).collect()
    }

    /// The elements as strings.
    ///
    /// # Errors
    /// [`CodecError::Corrupt`] naming `codec` and the first element that is not UTF-8.
    pub fn to_strings(&self, codec: &'static str) -> Result<Vec<String>> {
        self.iter()
            .enumerate()
            .map(|(i, b)| {
                std::str::from_utf8(b)
                    .map(str::to_owned)
                    .map_err(|e| CodecError::Corrupt {
                        codec,
                        reason: format!("element {i} is not UTF-8 ({e})"),
                    })
            })
            .collect()
    }
}

/// Encodes elements in the vlen format.
///
/// # Errors
/// [`CodecError::Compress`] when the count or an element's length does not fit the format's
/// `u32`.
pub fn encode<'a, I>(items: I, codec: &'static str) -> Result<Vec<u8>>
where
    I: IntoIterator<Item = &'a [u8]>,
{
    let too_large = |what: &str| CodecError::Compress {
        codec,
        reason: format!("{what} does not fit the format's 32-bit field"),
    };
    let items = items.into_iter();
    // a length prefix for each element at least (the elements' bytes grow it as they come;
    // at most 64 MiB reserved ahead on an iterator's word)
    let mut out = Vec::new();
    let ahead = PREFIX.saturating_mul(items.size_hint().0.saturating_add(1));
    // a failed reservation only means growing as the elements come
    let _ = out.try_reserve(ahead.min(1 << 26));
    out.extend_from_slice(&[0; PREFIX]);
    let mut count: u32 = 0;
    for item in items {
        count = count
            .checked_add(1)
            .ok_or_else(|| too_large("the element count"))?;
        let len = u32::try_from(item.len()).map_err(|_| too_large("an element's length"))?;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(item);
    }
    out[..PREFIX].copy_from_slice(&count.to_le_bytes());
    Ok(out)
}

fn read_u32(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(PREFIX)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Decodes a chunk of `expected` elements.
///
/// Bytes after the last element are ignored, as numcodecs ignores them.
///
/// # Errors
/// [`CodecError::Truncated`] for a missing header or an element (prefix or bytes) that runs
/// past the end, [`CodecError::Corrupt`] for a count other than `expected`; both before any
/// allocation that the input's length does not bound.
pub fn decode(bytes: &[u8], expected: u64, codec: &'static str) -> Result<VlenChunk> {
    let total = bytes.len() as u64;
    let count = read_u32(bytes, 0).ok_or(CodecError::Truncated {
        codec,
        needed: PREFIX as u64,
        got: total,
    })?;
    if u64::from(count) != expected {
        return Err(CodecError::Corrupt {
            codec,
            reason: format!("the chunk holds {count} elements, expected {expected}"),
        });
    }
    // every element needs at least its length prefix: refuse before allocating the offsets
    let needed = (PREFIX as u64) * (1 + u64::from(count));
    if needed > total {
        return Err(CodecError::Truncated {
            codec,
            needed,
            got: total,
        });
    }
    let count = count as usize; // <= total / 4, so it fits
    let mut offsets = Vec::with_capacity(count + 1);
    offsets.push(0);
    let mut data = Vec::with_capacity(bytes.len() - PREFIX * (1 + count));
    let mut pos = PREFIX;
    for _ in 0..count {
        let Some(len) = read_u32(bytes, pos) else {
            return Err(CodecError::Truncated {
                codec,
                needed: pos as u64 + PREFIX as u64,
                got: total,
            });
        };
        let start = pos + PREFIX;
        let end = start as u64 + u64::from(len);
        let Some(item) = usize::try_from(end).ok().and_then(|e| bytes.get(start..e)) else {
            return Err(CodecError::Truncated {
                codec,
                needed: end,
                got: total,
            });
        };
        data.extend_from_slice(item);
        offsets.push(data.len());
        pos = start + item.len();
    }
    Ok(VlenChunk { offsets, data })
}

/// The largest stored chunk (after the bytes->bytes codecs) of the vlen codecs: 1 GiB more
/// than the count header and one length prefix per element.
pub const MAX_DECODED: u64 = 1 << 30;

/// The `vlen-utf8` or `vlen-bytes` array->bytes codec, built for one chunk representation.
#[derive(Debug, Clone)]
pub struct VlenCodec {
    name: &'static str,
    repr: ChunkRepr,
    count: u64,
}

/// The configuration of both codecs: empty.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct VlenConfig {}

impl VlenCodec {
    /// The codec `name` ([`VLEN_UTF8`] or [`VLEN_BYTES`]) for chunks of `repr`.
    ///
    /// # Errors
    /// A data type the codec does not encode (`vlen-utf8` takes `string`, `vlen-bytes`
    /// `variable_length_bytes`), or a chunk whose element count overflows.
    pub fn new(name: &'static str, repr: &ChunkRepr) -> Result<Self> {
        let wanted = if name == VLEN_UTF8 {
            DataKind::String
        } else {
            DataKind::Bytes
        };
        if repr.data_type.kind() != wanted {
            let takes = if name == VLEN_UTF8 {
                "string"
            } else {
                "variable_length_bytes"
            };
            return Err(ExtensionDef::new(name)
                .invalid_configuration(
                    ExtensionPoint::Codec,
                    format!("it encodes data type {takes}, not {}", repr.data_type),
                )
                .into());
        }
        let count = repr
            .num_elements()
            .ok_or_else(|| CodecError::ChunkTooLarge {
                shape: repr.shape.clone(),
                element_size: PREFIX,
            })?;
        Ok(VlenCodec {
            name,
            repr: repr.clone(),
            count,
        })
    }

    /// The number of elements of a chunk (of the full chunk shape).
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Decodes a chunk (after the bytes->bytes codecs); for `vlen-utf8`, every element is
    /// checked to be UTF-8.
    ///
    /// # Errors
    /// As [`decode`], and [`CodecError::Corrupt`] for an element of `vlen-utf8` that is not
    /// UTF-8.
    pub fn decode_chunk(&self, bytes: &[u8]) -> Result<VlenChunk> {
        let chunk = decode(bytes, self.count, self.name)?;
        if self.name == VLEN_UTF8 {
            if let Some((i, e)) = chunk
                .iter()
                .enumerate()
                .find_map(|(i, b)| std::str::from_utf8(b).err().map(|e| (i, e)))
            {
                return Err(CodecError::Corrupt {
                    codec: self.name,
                    reason: format!("element {i} is not UTF-8 ({e})"),
                });
            }
        }
        Ok(chunk)
    }

    /// Encodes the elements of a chunk (C order, exactly [`VlenCodec::count`] of them).
    ///
    /// # Errors
    /// Another number of elements, or as [`encode`].
    pub fn encode_chunk<'a, I>(&self, items: I) -> Result<Vec<u8>>
    where
        I: IntoIterator<Item = &'a [u8]>,
        I::IntoIter: ExactSizeIterator,
    {
        let items = items.into_iter();
        if items.len() as u64 != self.count {
            return Err(CodecError::BufferLength {
                what: "the chunk's elements",
                expected: self.count,
                got: items.len() as u64,
            });
        }
        encode(items, self.name)
    }

    fn not_fixed(&self, operation: &'static str) -> CodecError {
        CodecError::NotApplicable {
            operation,
            reason: format!(
                "{} chunks hold variable-size elements, which have no fixed-size buffer",
                self.name
            ),
        }
    }
}

fn factory(name: &'static str, def: &ExtensionDef, repr: &ChunkRepr) -> Result<Codec> {
    let _: VlenConfig = def.parse_configuration(ExtensionPoint::Codec)?;
    Ok(Codec::ArrayToBytes(Box::new(VlenCodec::new(name, repr)?)))
}

pub(crate) fn factory_utf8(
    def: &ExtensionDef,
    repr: &ChunkRepr,
    _: &CodecRegistry,
) -> Result<Codec> {
    factory(VLEN_UTF8, def, repr)
}

pub(crate) fn factory_bytes(
    def: &ExtensionDef,
    repr: &ChunkRepr,
    _: &CodecRegistry,
) -> Result<Codec> {
    factory(VLEN_BYTES, def, repr)
}

impl ArrayToBytesCodec for VlenCodec {
    fn name(&self) -> &'static str {
        self.name
    }

    fn to_def(&self) -> ExtensionDef {
        ExtensionDef::with_configuration(self.name, serde_json::Map::new())
    }

    fn decoded_repr(&self) -> &ChunkRepr {
        &self.repr
    }

    fn encoded_size_bound(&self) -> u64 {
        self.count
            .saturating_add(1)
            .saturating_mul(PREFIX as u64)
            .saturating_add(MAX_DECODED)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn decode_vlen(&self, input: &[u8]) -> Result<VlenChunk> {
        self.decode_chunk(input)
    }

    fn encode_vlen(&self, items: &mut dyn ExactSizeIterator<Item = &[u8]>) -> Result<Vec<u8>> {
        self.encode_chunk(items)
    }

    fn encode(&self, _: &[u8]) -> Result<Vec<u8>> {
        Err(self.not_fixed("encoding a byte buffer"))
    }

    fn decode_into(&self, _: &[u8], _: &mut [u8]) -> Result<()> {
        Err(self.not_fixed("decoding into a byte buffer"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What numcodecs 0.16.6 writes for `VLenUTF8().encode(np.array(['a', '', 'é'], object))`
    /// and `VLenBytes().encode(np.array([b'ab', b''], object))`.
    const NUMCODECS_UTF8: &str = "0300000001000000610000000002000000c3a9";
    const NUMCODECS_BYTES: &str = "0200000002000000616200000000";

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    fn repr(t: zarr_meta::DataType, shape: Vec<u64>, fill: &str) -> ChunkRepr {
        let fill = zarr_meta::FillValue::from_json(&serde_json::json!(fill), t).unwrap();
        ChunkRepr::new(shape, t, fill)
    }

    fn chain(json: &str, r: &ChunkRepr) -> Result<crate::CodecChain> {
        crate::CodecChain::from_json(json, r, &crate::default_registry())
    }

    #[cfg(feature = "zstd")]
    #[test]
    fn chains_round_trip_through_the_bytes_codecs() {
        use zarr_meta::DataType;
        let r = repr(DataType::String, vec![2, 2], "");
        let c = chain(
            r#"[{"name":"vlen-utf8","configuration":{}},{"name":"zstd","configuration":{"level":0,"checksum":false}}]"#,
            &r,
        )
        .unwrap();
        let items = ["a", "", "héllo", "\u{1F600}"];
        let stored = c.encode_vlen(items.iter().map(|s| s.as_bytes())).unwrap();
        assert_eq!(
            c.decode_vlen(&stored)
                .unwrap()
                .to_strings(VLEN_UTF8)
                .unwrap(),
            items
        );
        assert_eq!(
            serde_json::to_string(&c.to_defs()).unwrap(),
            r#"[{"name":"vlen-utf8","configuration":{}},{"name":"zstd","configuration":{"level":0,"checksum":false}}]"#
        );
        // another number of elements than the chunk shape holds
        let err = c.encode_vlen([&b"a"[..]]).unwrap_err();
        assert!(matches!(err, CodecError::BufferLength { .. }), "{err}");
        // the fixed-size paths refuse clearly
        let err = c.decode(&stored).unwrap_err();
        assert!(err.to_string().contains("variable-size elements"), "{err}");
        let b = repr(DataType::Bytes, vec![3], "AHo=");
        let c = chain(r#"[{"name":"vlen-bytes"}]"#, &b).unwrap();
        let items: [&[u8]; 3] = [b"\0\xff", b"", b"z"];
        let stored = c.encode_vlen(items).unwrap();
        assert_eq!(stored, encode(items, VLEN_BYTES).unwrap());
        assert_eq!(
            c.decode_vlen(&stored).unwrap().to_byte_vecs(),
            items.map(<[u8]>::to_vec)
        );
    }

    #[test]
    fn codecs_take_only_their_data_type() {
        use zarr_meta::DataType;
        let cases = [
            (
                DataType::Bytes,
                r#"[{"name":"vlen-utf8"}]"#,
                "it encodes data type string, not variable_length_bytes",
            ),
            (
                DataType::String,
                r#"[{"name":"vlen-bytes"}]"#,
                "it encodes data type variable_length_bytes, not string",
            ),
            (
                DataType::Int32,
                r#"[{"name":"vlen-utf8"}]"#,
                "it encodes data type string, not int32",
            ),
        ];
        for (t, json, want) in cases {
            let r = if t == DataType::Int32 {
                ChunkRepr::new(vec![2], t, zarr_meta::FillValue::zero(t))
            } else {
                repr(t, vec![2], "")
            };
            let err = chain(json, &r).unwrap_err().to_string();
            assert!(err.contains(want), "{json}: {err}");
        }
        let r = repr(DataType::String, vec![2], "");
        let err = chain(r#"[{"name":"vlen-utf8","configuration":{"x":1}}]"#, &r).unwrap_err();
        assert!(
            zarr_testkit::report(&err).contains("unknown field `x`"),
            "{err}"
        );
    }

    #[test]
    fn corrupt_chunks_are_errors() {
        use zarr_meta::DataType;
        let r = repr(DataType::String, vec![3], "");
        let c = chain(r#"[{"name":"vlen-utf8"}]"#, &r).unwrap();
        let good = encode(["ab", "c", ""].iter().map(|s| s.as_bytes()), VLEN_UTF8).unwrap();
        assert!(c.decode_vlen(&good).is_ok());
        // every truncation is an error, never a panic
        for n in 0..good.len() - 4 {
            assert!(c.decode_vlen(&good[..n]).is_err(), "{n}");
        }
        // a count that is not the chunk's, a huge count or length in a short input
        let mut wrong = good.clone();
        wrong[0] = 2;
        assert!(c
            .decode_vlen(&wrong)
            .unwrap_err()
            .to_string()
            .contains("holds 2 elements, expected 3"));
        let mut huge = good.clone();
        huge[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            c.decode_vlen(&huge).unwrap_err(),
            CodecError::Truncated { .. }
        ));
        // not UTF-8
        let bad = encode([&b"\xff"[..], b"", b""], VLEN_UTF8).unwrap();
        assert_eq!(
            c.decode_vlen(&bad).unwrap_err().to_string(),
            "vlen-utf8 data is corrupt: element 0 is not UTF-8 (invalid utf-8 sequence of 1 bytes from index 0)"
        );
        // every single-byte corruption is handled
        for i in 0..good.len() {
            for b in [0u8, 1, 0x7f, 0xff] {
                let mut x = good.clone();
                x[i] = b;
                let _ = c.decode_vlen(&x);
            }
        }
    }

    #[test]
    fn encoding_is_what_numcodecs_writes() {
        let utf8 = encode(["a", "", "é"].iter().map(|s| s.as_bytes()), VLEN_UTF8).unwrap();
        assert_eq!(hex(&utf8), NUMCODECS_UTF8);
        let bytes = encode([&b"ab"[..], b""], VLEN_BYTES).unwrap();
        assert_eq!(hex(&bytes), NUMCODECS_BYTES);
        assert_eq!(hex(&encode([], VLEN_BYTES).unwrap()), "00000000");
    }

    #[test]
    fn decoding_round_trips_and_ignores_trailing_bytes() {
        let stored = encode([&b"ab"[..], b"", b"\xff\x00"], VLEN_BYTES).unwrap();
        let chunk = decode(&stored, 3, VLEN_BYTES).unwrap();
        assert_eq!(chunk.len(), 3);
        assert_eq!(chunk.get(0), Some(&b"ab"[..]));
        assert_eq!(chunk.get(1), Some(&b""[..]));
        assert_eq!(chunk.get(3), None);
        assert_eq!(
            chunk.to_byte_vecs(),
            [b"ab".to_vec(), vec![], vec![0xff, 0]]
        );
        let mut longer = stored.clone();
        longer.extend_from_slice(b"zz");
        assert_eq!(decode(&longer, 3, VLEN_BYTES).unwrap(), chunk);
        let err = chunk.to_strings(VLEN_UTF8).unwrap_err();
        assert!(err.to_string().contains("element 2 is not UTF-8"), "{err}");
    }

    #[test]
    fn corrupt_chunks_are_refused_before_allocating() {
        // a count of 2^32 - 1 in an 8-byte chunk: refused on length, not after reserving
        let huge = [0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0];
        let err = decode(&huge, u64::from(u32::MAX), VLEN_UTF8).unwrap_err();
        assert!(matches!(err, CodecError::Truncated { needed, got: 8, .. } if needed == 4 << 32));
        // a count other than the chunk's element count (zarr-python's 2^40 is not even storable)
        let err = decode(&huge, 1 << 40, VLEN_UTF8).unwrap_err();
        assert!(matches!(err, CodecError::Corrupt { .. }), "{err}");
        // an element longer than the bytes left
        let long = [1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, b'a'];
        let err = decode(&long, 1, VLEN_UTF8).unwrap_err();
        assert!(matches!(err, CodecError::Truncated { got: 9, .. }), "{err}");
        // a missing header, a missing prefix
        assert!(matches!(
            decode(&[1, 0], 1, VLEN_UTF8),
            Err(CodecError::Truncated {
                needed: 4,
                got: 2,
                ..
            })
        ));
        assert!(matches!(
            decode(&[2, 0, 0, 0, 0, 0, 0, 0, 1, 0], 2, VLEN_UTF8),
            Err(CodecError::Truncated { needed: 12, .. })
        ));
    }
}
