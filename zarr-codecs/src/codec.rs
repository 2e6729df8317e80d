//! The three kinds of codec and the values that pass between them.
//!
//! A Zarr v3 codec chain is `array->array* array->bytes bytes->bytes*`:
//!
//! - an [`ArrayToArrayCodec`] (`transpose`) turns one array representation into another;
//! - the one [`ArrayToBytesCodec`] (`bytes`, `sharding_indexed`) serializes the array;
//! - [`BytesToBytesCodec`]s (`gzip`, `zstd`, `blosc`, `crc32c`) transform the bytes.
//!
//! A codec is built for one [`ChunkRepr`] (the factory receives it), so its methods need no
//! representation argument. Every decoder treats its input as untrusted and is given a bound
//! on what it may produce.

use std::any::Any;
use std::fmt;

use zarr_buffer::Piece;
use zarr_grid::geometry::{copy_region, linear_index, Region};
use zarr_meta::ExtensionDef;

use crate::block::{Block, ChunkUpdate, SourceBlock};
use crate::buffer::{is_aligned, AlignedBuffer};
use crate::chain::CodecChain;
use crate::error::{CodecError, Result};
use crate::repr::ChunkRepr;
use crate::source::ByteRangeSource;

/// Bytes passed between decoders: borrowed from the caller's input (a checksum codec only
/// strips its suffix) or owned by an earlier decoder (8-byte aligned).
#[derive(Debug)]
pub enum Decoded<'a> {
    /// A slice of the input.
    Borrowed(&'a [u8]),
    /// A buffer a decoder produced.
    Owned(AlignedBuffer),
}

impl Decoded<'_> {
    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        match self {
            Decoded::Borrowed(b) => b,
            Decoded::Owned(b) => b.as_bytes(),
        }
    }

    /// The length in bytes.
    pub fn len(&self) -> usize {
        self.as_slice().len()
    }

    /// Whether there are no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// An owned, aligned buffer (copies a borrowed slice).
    pub fn into_owned(self) -> AlignedBuffer {
        match self {
            Decoded::Borrowed(b) => AlignedBuffer::from_slice(b),
            Decoded::Owned(b) => b,
        }
    }

    /// Keeps the first `len` bytes.
    pub fn truncated(self, len: usize) -> Self {
        match self {
            Decoded::Borrowed(b) => Decoded::Borrowed(&b[..len.min(b.len())]),
            Decoded::Owned(mut b) => {
                b.truncate(len);
                Decoded::Owned(b)
            }
        }
    }
}

/// A codec that maps an array representation to another (`transpose`).
pub trait ArrayToArrayCodec: fmt::Debug + Send + Sync {
    /// The codec's name in metadata.
    fn name(&self) -> &'static str;

    /// The definition to write back to metadata.
    fn to_def(&self) -> ExtensionDef;

    /// The representation this codec encodes (what it was built for).
    fn decoded_repr(&self) -> &ChunkRepr;

    /// The representation it produces, seen by the next codec.
    fn encoded_repr(&self) -> &ChunkRepr;

    /// Encodes `input` (the decoded representation's bytes) into `out` (the encoded
    /// representation's bytes).
    ///
    /// # Errors
    /// [`CodecError::BufferLength`] if a buffer has the wrong length.
    fn encode(&self, input: &[u8], out: &mut [u8]) -> Result<()>;

    /// Decodes `input` (the encoded representation's bytes) into `out`.
    ///
    /// # Errors
    /// [`CodecError::BufferLength`] if a buffer has the wrong length.
    fn decode(&self, input: &[u8], out: &mut [u8]) -> Result<()>;

    /// For a codec that only moves elements (`transpose`): for each position of the encoded
    /// chunk (C order), the C-order index of the decoded element found there. What lets it
    /// run on variable-size elements, as a permutation of them
    /// ([`ChunkOut::Vlen`](crate::ChunkOut::Vlen)). `None` (the default)
    /// for a codec that changes element values.
    ///
    /// # Errors
    /// [`CodecError::ChunkTooLarge`] when the indices do not fit in memory.
    fn encoded_order(&self) -> Option<Result<Vec<usize>>> {
        None
    }
}

/// The byte spans `(offset, nbytes)` of the inner chunks of a stored chunk, in C order of
/// the inner chunk grid, `None` for one that is not stored.
#[cfg(feature = "sharding")]
pub(crate) type InnerSpans = Vec<Option<(u64, u64)>>;

/// The inner chunks of a codec that stores its chunk as a regular grid of them, each
/// encoded with one chain ([`ArrayToBytesCodec::inner_chunks`]: `sharding_indexed`): how the
/// chain's leaf API walks a level without knowing its format.
pub trait InnerChunks: Send + Sync {
    /// The inner chunk shape, which divides the chunk shape on every axis.
    fn shape(&self) -> &[u64];

    /// The chain each inner chunk is encoded with.
    fn chain(&self) -> &CodecChain;

    /// The stored bytes of every inner chunk of `encoded` (the codec's encoding of a chunk,
    /// after the chain's bytes -> bytes decoders), in C order of the inner chunk grid, `None`
    /// for one that is not stored. Checked against the encoding (no span outside it, none
    /// past the inner chain's bound), not decoded.
    ///
    /// # Errors
    /// A truncated or corrupt encoding.
    fn stored<'a>(&self, encoded: &'a [u8]) -> Result<Vec<Option<&'a [u8]>>>;

    /// The codec's encoding of a chunk whose inner chunks, already encoded with the
    /// [inner chain](InnerChunks::chain), are `inner` (C order of the inner chunk grid,
    /// `None`: not stored); `None` when no inner chunk is stored.
    ///
    /// # Errors
    /// [`CodecError::BufferLength`] for a list of the wrong length.
    fn assemble(&self, inner: &[Option<&[u8]>]) -> Result<Option<Vec<u8>>>;
}

/// What updates part of a stored chunk without decoding and encoding all of it:
/// `sharding_indexed` re-encodes only the inner chunks an update touches and keeps every
/// other inner chunk's bytes as they are. A codec offers one through
/// [`ArrayToBytesCodec::partial_encoder`], a chain through
/// [`CodecChain::partial_encoder`](crate::CodecChain::partial_encoder). It makes the new
/// value from the old one and stores nothing itself, so that the caller decides how the
/// value is written (a compare-and-swap loop, or an in-place rewrite of a stored value).
pub trait PartialEncoder: Send + Sync {
    /// The new encoding of a chunk whose encoding now is `encoded` (`None`: not stored),
    /// with `update` written into it; `None` when nothing of the chunk is left to store.
    ///
    /// # Errors
    /// An update outside the chunk, a corrupt or truncated encoding, an encoder's failure.
    fn encode_update(
        &self,
        encoded: Option<&[u8]>,
        update: &ChunkUpdate<'_>,
    ) -> Result<Option<Vec<u8>>>;

    /// Whether [`PartialEncoder::encode_update_pieces`] applies: the parts kept are byte
    /// spans of the stored value (no bytes -> bytes codec after the shard).
    fn updates_in_place(&self) -> bool;

    /// As [`PartialEncoder::encode_update`] for the encoding stored in `source`, reading
    /// only what locates the parts of the chunk (a shard's index) and the parts the update
    /// touches (two requests, and the size), and giving the new value as [`Piece`]s of the
    /// stored one: every part kept is a [`Piece::Kept`] span of it (consecutive spans one
    /// piece), so that a store can copy them without reading them (`zarr_store`'s
    /// `StoredValue::replace`). `None` when nothing is left to store.
    ///
    /// # Errors
    /// [`CodecError::NotApplicable`] unless [`PartialEncoder::updates_in_place`]; as
    /// [`PartialEncoder::encode_update`], and a failing source.
    fn encode_update_pieces(
        &self,
        source: &dyn ByteRangeSource,
        update: &ChunkUpdate<'_>,
    ) -> Result<Option<Vec<Piece>>>;
}

/// The codec that serializes an array to bytes (`bytes`, `sharding_indexed`).
pub trait ArrayToBytesCodec: fmt::Debug + Send + Sync {
    /// The codec's name in metadata.
    fn name(&self) -> &'static str;

    /// The definition to write back to metadata.
    fn to_def(&self) -> ExtensionDef;

    /// The representation this codec serializes.
    fn decoded_repr(&self) -> &ChunkRepr;

    /// The largest encoding this codec can produce for a chunk: the allocation limit for the
    /// decoders that run before it.
    fn encoded_size_bound(&self) -> u64;

    /// The exact encoded size when every chunk encodes to the same size (`bytes`).
    fn fixed_encoded_size(&self) -> Option<u64> {
        None
    }

    /// The concrete codec, for the module that owns it to find its own codec in a chain
    /// (`SparseLayoutCodec::of`); the chain itself never downcasts.
    fn as_any(&self) -> &dyn Any;

    /// Whether this codec's encoding of a chunk is the chunk's bytes as they are (`bytes` in
    /// the machine's byte order): a chain may then hand its first bytes -> bytes codec the
    /// chunk itself, with no copy.
    fn encodes_as_is(&self) -> bool {
        false
    }

    /// Whether [`ArrayToBytesCodec::decode_prefix_in_place`] applies: the encoding of each
    /// element lies where the element does (`bytes`), so that a prefix of the encoding
    /// decodes to the same prefix of the chunk. A chain then decodes only the prefix of a
    /// chunk that a region or points need, where its compressor can stop early.
    fn decodes_prefix(&self) -> bool {
        false
    }

    /// Decodes in place the first `prefix.len()` bytes (whole elements) of this codec's
    /// encoding of a chunk into the same bytes of the decoded chunk (`bytes`: the byte
    /// order). Only for a codec that [decodes prefixes](ArrayToBytesCodec::decodes_prefix):
    /// the default refuses.
    ///
    /// # Errors
    /// [`CodecError::NotApplicable`] (the default).
    fn decode_prefix_in_place(&self, prefix: &mut [u8]) -> Result<()> {
        let _ = prefix;
        Err(CodecError::NotApplicable {
            operation: "decoding a prefix of a chunk",
            reason: format!("codec {:?} does not encode elements in place", self.name()),
        })
    }

    /// Encodes a chunk (native byte order, C order).
    ///
    /// # Errors
    /// A wrong input length, or a failure of a nested codec.
    fn encode(&self, input: &[u8]) -> Result<Vec<u8>>;

    /// Encodes a chunk held in an owned buffer, reusing it where possible.
    ///
    /// # Errors
    /// As [`ArrayToBytesCodec::encode`].
    fn encode_owned(&self, input: Vec<u8>) -> Result<Vec<u8>> {
        self.encode(&input)
    }

    /// Encodes a chunk, or returns `None` when nothing needs to be stored because the chunk
    /// reads back as the fill value (every element equal to it; for `sharding_indexed`, every
    /// inner chunk).
    ///
    /// # Errors
    /// As [`ArrayToBytesCodec::encode`].
    fn encode_or_skip(&self, input: &[u8]) -> Result<Option<Vec<u8>>> {
        if self.decoded_repr().is_fill(input) {
            Ok(None)
        } else {
            self.encode(input).map(Some)
        }
    }

    /// As [`ArrayToBytesCodec::encode_or_skip`] for a chunk that is the block `src` of a
    /// larger C-order buffer. The default gathers the block into a chunk buffer (no fill, one
    /// copy); `sharding_indexed` gathers each inner chunk straight from the buffer.
    ///
    /// # Errors
    /// A block of another shape or element size than the chunk, and as
    /// [`ArrayToBytesCodec::encode`].
    fn encode_or_skip_block(&self, src: SourceBlock<'_>) -> Result<Option<Vec<u8>>> {
        let chunk = src.gather(self.decoded_repr())?;
        if self.decoded_repr().is_fill(&chunk) {
            Ok(None)
        } else {
            self.encode_owned(chunk).map(Some)
        }
    }

    /// As [`ArrayToBytesCodec::encode_or_skip_block`], the encoding as parts to be stored one
    /// after the other (written with one vectored write, never joined in memory). The default
    /// gives the one part; `sharding_indexed` gives its index and each stored inner chunk,
    /// with no shard-sized buffer.
    ///
    /// # Errors
    /// As [`ArrayToBytesCodec::encode_or_skip_block`].
    fn encode_or_skip_block_parts(&self, src: SourceBlock<'_>) -> Result<Option<Vec<Vec<u8>>>> {
        Ok(self.encode_or_skip_block(src)?.map(|bytes| vec![bytes]))
    }

    /// Whether a chunk whose elements all equal the fill value may be stored when the caller
    /// asks to keep empty chunks (`true`, the default). `sparse_layout` answers `false`: its
    /// format stores no chunk with nnz = 0, so such a chunk is never written.
    fn stores_empty_chunks(&self) -> bool {
        true
    }

    /// Whether [`ArrayToBytesCodec::decode_into`] must be handed an 8-byte-aligned input
    /// (the chain copies an unaligned input first).
    fn needs_aligned_input(&self) -> bool {
        false
    }

    /// Decodes `input` into `out`, which has the decoded representation's length.
    ///
    /// # Errors
    /// A wrong length or corrupt input.
    fn decode_into(&self, input: &[u8], out: &mut [u8]) -> Result<()>;

    /// Whether decoding is an equal-length transformation that
    /// [`ArrayToBytesCodec::decode_in_place`] runs without a second buffer.
    fn decodes_in_place(&self) -> bool {
        false
    }

    /// Decodes `data` in place: on entry it holds the encoded bytes, on return the decoded
    /// chunk. The default decodes from a copy.
    ///
    /// # Errors
    /// As [`ArrayToBytesCodec::decode_into`].
    fn decode_in_place(&self, data: &mut [u8]) -> Result<()> {
        let input = AlignedBuffer::from_slice(data);
        self.decode_into(&input, data)
    }

    /// Decodes `input` (a whole chunk) into `out`, its block of a larger buffer. The default
    /// decodes into a chunk buffer and copies it in; `sharding_indexed` decodes each inner
    /// chunk straight into its place.
    ///
    /// # Errors
    /// A block of another shape or element size than the chunk, and as
    /// [`ArrayToBytesCodec::decode_into`].
    fn decode_into_block(&self, input: &[u8], out: &mut Block<'_>) -> Result<()> {
        let repr = self.decoded_repr();
        out.check_chunk(repr)?;
        let mut chunk = AlignedBuffer::try_zeroed(repr.byte_len()?).ok_or_else(|| {
            CodecError::ChunkTooLarge {
                shape: repr.shape.clone(),
                element_size: repr.element_size(),
            }
        })?;
        decode_a2b_into(self, input, &mut chunk)?;
        out.copy_from(&chunk, &repr.shape, &vec![0u64; repr.rank()])?;
        Ok(())
    }

    /// The grid of inner chunks this codec stores its chunk as, each encoded with its own
    /// chain (`sharding_indexed`); `None` (the default) for a codec that stores the chunk
    /// itself, a leaf. The leaf API of [`CodecChain`] ([`CodecChain::leaf_chain`],
    /// [`CodecChain::visit_stored_leaves`], [`CodecChain::rewrite_leaves`]) walks these
    /// levels; partial reads fetch and decode whole inner chunks.
    fn inner_chunks(&self) -> Option<&dyn InnerChunks> {
        None
    }

    /// The partial encoder of this codec, for a codec that can update part of a chunk
    /// without decoding and encoding all of it (`sharding_indexed`); `None` (the default)
    /// when an update decodes, changes and encodes the whole chunk.
    fn partial_encoder(&self) -> Option<&dyn PartialEncoder> {
        None
    }

    /// Whether [`ArrayToBytesCodec::decode_region`] (and, for variable-size elements,
    /// [`ArrayToBytesCodec::decode_vlen_region`]) reads less than the whole value.
    fn supports_partial_decode(&self) -> bool {
        false
    }

    /// Decodes a chunk of variable-size elements (`string`, `variable_length_bytes`; after
    /// the chain's bytes -> bytes decoders): every element of the chunk shape, in C order.
    /// The default refuses: a codec of fixed-size elements.
    ///
    /// # Errors
    /// [`CodecError::NotApplicable`] (the default); corrupt, truncated or oversized data.
    #[cfg(feature = "vlen")]
    fn decode_vlen(&self, input: &[u8]) -> Result<crate::vlen::VlenChunk> {
        let _ = input;
        Err(no_vlen(self.name(), "decoding variable-size elements"))
    }

    /// Encodes the elements of a chunk of variable-size elements (C order, every element of
    /// the chunk shape), before the chain's bytes -> bytes encoders. The default refuses.
    ///
    /// # Errors
    /// [`CodecError::NotApplicable`] (the default), another number of elements, an element
    /// too large for the format.
    #[cfg(feature = "vlen")]
    fn encode_vlen(&self, items: &mut dyn ExactSizeIterator<Item = &[u8]>) -> Result<Vec<u8>> {
        let _ = items;
        Err(no_vlen(self.name(), "encoding variable-size elements"))
    }

    /// The elements of `region` (inside the chunk, checked by the caller; C order of the
    /// region) of a chunk of variable-size elements stored in `source`, reading only what the
    /// region needs; `None` when it is not stored. Only for a codec that
    /// [supports partial decoding](ArrayToBytesCodec::supports_partial_decode): the default
    /// refuses.
    ///
    /// # Errors
    /// [`CodecError::NotApplicable`] (the default); a failing source, corrupt data.
    #[cfg(feature = "vlen")]
    fn decode_vlen_region(
        &self,
        source: &dyn ByteRangeSource,
        region: &Region,
    ) -> Result<Option<crate::vlen::VlenChunk>> {
        let _ = (source, region);
        Err(no_vlen(
            self.name(),
            "decoding a region of variable-size elements",
        ))
    }

    /// Decodes the part `region` of the chunk stored in `source` into `out` (C order, the
    /// region's shape). Returns `false`, leaving `out` untouched, when the value does not
    /// exist. The default reads the whole value; `sharding_indexed` reads its index and the
    /// inner chunks it needs.
    ///
    /// The caller has checked that `region` lies inside the chunk and that `out` has the
    /// region's length.
    ///
    /// # Errors
    /// A failing source or corrupt data.
    fn decode_region(
        &self,
        source: &dyn ByteRangeSource,
        region: &Region,
        out: &mut [u8],
    ) -> Result<bool> {
        let Some(bytes) = source.get()? else {
            return Ok(false);
        };
        let repr = self.decoded_repr();
        if region.shape == repr.shape {
            decode_a2b_into(self, &bytes, out)?;
        } else {
            let mut chunk = AlignedBuffer::try_zeroed(repr.byte_len()?).ok_or_else(|| {
                CodecError::ChunkTooLarge {
                    shape: repr.shape.clone(),
                    element_size: repr.element_size(),
                }
            })?;
            decode_a2b_into(self, &bytes, &mut chunk)?;
            copy_region(
                &chunk,
                &repr.shape,
                &region.start,
                out,
                &region.shape,
                &vec![0; region.rank()],
                &region.shape,
                repr.element_size(),
            );
        }
        Ok(true)
    }

    /// Decodes the elements at `points` (positions inside the chunk) of the chunk stored in
    /// `source` into `out`, one element after another in the order of `points`. Returns
    /// `false`, leaving `out` untouched, when the value does not exist. The default reads and
    /// decodes the whole value; `bytes` reads only the points' byte spans, `sharding_indexed`
    /// its index and the inner chunks the points fall in.
    ///
    /// The caller has checked that every point lies inside the chunk and that `out` holds
    /// `points.len()` elements.
    ///
    /// # Errors
    /// A failing source or corrupt data.
    fn decode_points(
        &self,
        source: &dyn ByteRangeSource,
        points: &[Vec<u64>],
        out: &mut [u8],
    ) -> Result<bool> {
        let Some(bytes) = source.get()? else {
            return Ok(false);
        };
        let repr = self.decoded_repr();
        let mut chunk = AlignedBuffer::try_zeroed(repr.byte_len()?).ok_or_else(|| {
            CodecError::ChunkTooLarge {
                shape: repr.shape.clone(),
                element_size: repr.element_size(),
            }
        })?;
        decode_a2b_into(self, &bytes, &mut chunk)?;
        pick_points(&chunk, &repr.shape, points, repr.element_size(), out);
        Ok(true)
    }
}

/// Copies the elements at `points` (positions in a C-order buffer of `shape`) out of `buf`
/// into `out`, one after another. The caller has checked that every point's element lies in
/// `buf` and that `out` holds `points.len()` elements.
pub(crate) fn pick_points(
    buf: &[u8],
    shape: &[u64],
    points: &[Vec<u64>],
    elem: usize,
    out: &mut [u8],
) {
    for (p, dst) in points.iter().zip(out.chunks_exact_mut(elem)) {
        let at = linear_index(p, shape) as usize * elem;
        dst.copy_from_slice(&buf[at..at + elem]);
    }
}

/// The error of a variable-size operation asked of a codec of fixed-size elements.
#[cfg(feature = "vlen")]
fn no_vlen(codec: &str, operation: &'static str) -> CodecError {
    CodecError::NotApplicable {
        operation,
        reason: format!(
            "the array -> bytes codec is {codec:?}, not vlen-utf8, vlen-bytes or sharding_indexed over one"
        ),
    }
}

/// Calls `decode_into`, first copying the input to an aligned buffer if the codec needs one.
pub(crate) fn decode_a2b_into<C: ArrayToBytesCodec + ?Sized>(
    codec: &C,
    input: &[u8],
    out: &mut [u8],
) -> Result<()> {
    if codec.needs_aligned_input() && !is_aligned(input) {
        codec.decode_into(&AlignedBuffer::from_slice(input), out)
    } else {
        codec.decode_into(input, out)
    }
}

/// A codec that transforms bytes (`gzip`, `zstd`, `blosc`, `crc32c`).
pub trait BytesToBytesCodec: fmt::Debug + Send + Sync {
    /// The codec's name in metadata.
    fn name(&self) -> &'static str;

    /// The definition to write back to metadata.
    fn to_def(&self) -> ExtensionDef;

    /// The largest encoding of an input of at most `decoded_bound` bytes (`crc32c`: + 4,
    /// compressors: their worst-case expansion).
    fn encoded_size_bound(&self, decoded_bound: u64) -> u64;

    /// The exact encoded size of an input of `decoded_len` bytes, when it depends on nothing
    /// else (`crc32c`).
    fn fixed_encoded_size(&self, decoded_len: u64) -> Option<u64> {
        let _ = decoded_len;
        None
    }

    /// Encodes `input`.
    ///
    /// # Errors
    /// A compressor's failure.
    fn encode(&self, input: &[u8]) -> Result<Vec<u8>>;

    /// Encodes an owned input, reusing it where possible (`crc32c` appends in place).
    ///
    /// # Errors
    /// As [`BytesToBytesCodec::encode`].
    fn encode_owned(&self, input: Vec<u8>) -> Result<Vec<u8>> {
        self.encode(&input)
    }

    /// Decodes `input`, producing at most `max_decoded` bytes: data that would expand further
    /// is an error ([`CodecError::ExceedsBound`]), and nothing larger is allocated.
    ///
    /// # Errors
    /// Corrupt, truncated or oversized data.
    fn decode<'a>(&self, input: Decoded<'a>, max_decoded: u64) -> Result<Decoded<'a>>;

    /// Decodes only the first `out.len()` bytes of the decoded value into `out`, for a
    /// codec that can stop early (`zstd` stops after the blocks that hold them, skipping the
    /// rest of the frame; `blosc` after the blocks that hold them). `max_decoded` bounds the
    /// whole decoded value. Returns `false` (leaving `out` unspecified) when the codec cannot,
    /// or when stopping early would save nothing (a `blosc` prefix that needs every block),
    /// and the caller decodes the whole value instead.
    ///
    /// # Errors
    /// Corrupt input, or a value shorter than `out`.
    fn decode_prefix_into(&self, input: &[u8], out: &mut [u8], max_decoded: u64) -> Result<bool> {
        let _ = (input, out, max_decoded);
        Ok(false)
    }

    /// Decodes `input` into `out`, which must be filled exactly.
    ///
    /// # Errors
    /// As [`BytesToBytesCodec::decode`], and [`CodecError::SizeMismatch`] when the data
    /// decodes to another length.
    fn decode_into(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
        let decoded = self.decode(Decoded::Borrowed(input), out.len() as u64)?;
        if decoded.len() != out.len() {
            return Err(CodecError::SizeMismatch {
                codec: self.name(),
                expected: out.len() as u64,
                got: decoded.len() as u64,
            });
        }
        out.copy_from_slice(decoded.as_slice());
        Ok(())
    }
}

/// A built codec of one of the three kinds, as a factory returns it.
#[derive(Debug)]
pub enum Codec {
    /// An array->array codec.
    ArrayToArray(Box<dyn ArrayToArrayCodec>),
    /// An array->bytes codec.
    ArrayToBytes(Box<dyn ArrayToBytesCodec>),
    /// A bytes->bytes codec.
    BytesToBytes(Box<dyn BytesToBytesCodec>),
}

impl Codec {
    /// The codec's name in metadata.
    pub fn name(&self) -> &'static str {
        match self {
            Codec::ArrayToArray(c) => c.name(),
            Codec::ArrayToBytes(c) => c.name(),
            Codec::BytesToBytes(c) => c.name(),
        }
    }

    /// The definition to write back to metadata.
    pub fn to_def(&self) -> ExtensionDef {
        match self {
            Codec::ArrayToArray(c) => c.to_def(),
            Codec::ArrayToBytes(c) => c.to_def(),
            Codec::BytesToBytes(c) => c.to_def(),
        }
    }

    /// `"array -> array"`, `"array -> bytes"` or `"bytes -> bytes"`.
    pub fn kind(&self) -> &'static str {
        match self {
            Codec::ArrayToArray(_) => "array -> array",
            Codec::ArrayToBytes(_) => "array -> bytes",
            Codec::BytesToBytes(_) => "bytes -> bytes",
        }
    }
}

/// Converts a bound to a `usize` allocation limit.
pub(crate) fn limit_usize(bound: u64) -> usize {
    usize::try_from(bound).unwrap_or(usize::MAX)
}
