//! [`CodecChain`]: a validated list of codecs that encodes and decodes whole chunks, or reads
//! a region of a stored chunk.

use zarr_grid::geometry::{copy_region, linear_index, Region};
use zarr_meta::{ExtensionDef, MetaError};

use crate::block::{Block, ChunkUpdate, SourceBlock};
use crate::buffer::AlignedBuffer;
use crate::codec::{
    decode_a2b_into, pick_points, ArrayToArrayCodec, ArrayToBytesCodec, BytesToBytesCodec, Codec,
    Decoded, InnerChunks, PartialEncoder,
};
use crate::error::{CodecError, Result};
use crate::registry::{build_codec, CodecRegistry};
use crate::repr::ChunkRepr;
use crate::scratch::with_scratch;
use crate::source::ByteRangeSource;
use zarr_buffer::Piece;

/// A codec chain built for one chunk representation: `array->array*`, exactly one
/// `array->bytes`, `bytes->bytes*`.
///
/// Building it ([`CodecChain::from_defs`]) resolves every definition through the registry
/// (skipping unknown codecs marked `"must_understand": false`), lets each codec check the
/// representation it sees, checks the order, and computes the bound every decoder is held to.
///
/// ```
/// # #[cfg(all(feature = "zstd", feature = "crc32c"))]
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use zarr_codecs::{default_registry, ChunkRepr, CodecChain, EncodeOptions};
/// use zarr_meta::{DataType, FillValue};
///
/// let repr = ChunkRepr::new(vec![4, 4], DataType::Float64, FillValue::zero(DataType::Float64));
/// let json = r#"[{"name": "transpose", "configuration": {"order": [1, 0]}},
///                {"name": "bytes", "configuration": {"endian": "big"}},
///                {"name": "zstd", "configuration": {"level": 1, "checksum": false}},
///                {"name": "crc32c"}]"#;
/// let chain = CodecChain::from_json(json, &repr, &default_registry())?;
/// let chunk: Vec<u8> = (0..16).flat_map(|i| f64::from(i).to_ne_bytes()).collect();
/// let encoded = chain.encode(&chunk, EncodeOptions::WRITE_EMPTY)?.ok_or("not stored")?;
/// let mut out = vec![0u8; chain.decoded_len()];
/// chain.decode_into(&encoded, &mut out)?;
/// assert_eq!(out, chunk);
/// // an all-fill chunk need not be stored
/// assert!(chain.encode(&vec![0u8; 128], EncodeOptions::SKIP_EMPTY)?.is_none());
/// # Ok(())
/// # }
/// # #[cfg(not(all(feature = "zstd", feature = "crc32c")))]
/// # fn main() {}
/// ```
#[derive(Debug)]
pub struct CodecChain {
    repr: ChunkRepr,
    len: usize,
    /// The array->array codecs with the byte length of what each produces.
    array_to_array: Vec<(Box<dyn ArrayToArrayCodec>, usize)>,
    array_to_bytes: Box<dyn ArrayToBytesCodec>,
    /// The byte length of the representation the array->bytes codec serializes.
    a2b_len: usize,
    bytes_to_bytes: Vec<Box<dyn BytesToBytesCodec>>,
    /// `bounds[0]`: the array->bytes codec's bound; `bounds[i + 1]`: after bytes->bytes `i`.
    bounds: Vec<u64>,
}

impl CodecChain {
    /// Builds the chain that `defs` (an array's `codecs`) describe, for chunks of `repr`.
    ///
    /// # Errors
    /// - [`CodecError::Metadata`] for an unknown or compiled-out codec or an invalid
    ///   configuration (a transpose order that is not a permutation of the chunk's axes, a
    ///   `bytes` without `endian` for a multi-byte type, a shard shape the inner chunk shape
    ///   does not divide, ...);
    /// - [`CodecError::InvalidChain`] when the chain does not have exactly one array->bytes
    ///   codec, or has codecs on the wrong side of it;
    /// - [`CodecError::ChunkTooLarge`] for chunks that do not fit in memory.
    pub fn from_defs(
        defs: &[ExtensionDef],
        repr: &ChunkRepr,
        registry: &CodecRegistry,
    ) -> Result<Self> {
        let len = repr.validate()?;
        let mut current = repr.clone();
        let mut array_to_array = Vec::new();
        let mut array_to_bytes: Option<Box<dyn ArrayToBytesCodec>> = None;
        let mut bytes_to_bytes: Vec<Box<dyn BytesToBytesCodec>> = Vec::new();
        let mut a2b_len = len;
        for def in defs {
            // a codec that sees elements takes fixed-size ones unless its factory says
            // otherwise (the vlen codecs, sharding, whose inner chain is checked the same
            // way, transpose); refused before its factory sees variable-size elements. An
            // unknown name is refused by name below (or skipped when it may be).
            if array_to_bytes.is_none()
                && current.data_type.is_variable_size()
                && registry
                    .get(&def.name)
                    .is_some_and(|f| !f.takes_variable_size())
            {
                return Err(CodecError::VariableSizeElements {
                    codec: def.name.clone(),
                    data_type: current.data_type.to_string(),
                });
            }
            let Some(codec) = build_codec(def, &current, registry)? else {
                continue;
            };
            match codec {
                Codec::ArrayToArray(c) => {
                    if let Some(a2b) = &array_to_bytes {
                        return Err(order_error(c.name(), "array -> array", a2b.name()));
                    }
                    current = c.encoded_repr().clone();
                    let n = current.byte_len()?;
                    array_to_array.push((c, n));
                    a2b_len = n;
                }
                Codec::ArrayToBytes(c) => {
                    if let Some(first) = &array_to_bytes {
                        return Err(CodecError::InvalidChain {
                            reason: format!(
                                "it has two array -> bytes codecs, {:?} and {:?} (exactly one is required)",
                                first.name(),
                                c.name()
                            ),
                        });
                    }
                    if let Some(b2b) = bytes_to_bytes.first() {
                        return Err(CodecError::InvalidChain {
                            reason: format!(
                                "bytes -> bytes codec {:?} comes before the array -> bytes codec {:?}",
                                b2b.name(),
                                c.name()
                            ),
                        });
                    }
                    array_to_bytes = Some(c);
                }
                Codec::BytesToBytes(c) => bytes_to_bytes.push(c),
            }
        }
        let Some(array_to_bytes) = array_to_bytes else {
            return Err(CodecError::InvalidChain {
                reason: "it has no array -> bytes codec (such as {\"name\": \"bytes\"})".into(),
            });
        };
        let mut bounds = vec![array_to_bytes.encoded_size_bound()];
        for c in &bytes_to_bytes {
            let last = bounds[bounds.len() - 1];
            bounds.push(c.encoded_size_bound(last));
        }
        Ok(CodecChain {
            repr: repr.clone(),
            len,
            array_to_array,
            array_to_bytes,
            a2b_len,
            bytes_to_bytes,
            bounds,
        })
    }

    /// Builds the chain from the JSON text of a `codecs` list.
    ///
    /// # Errors
    /// Invalid JSON, or as [`CodecChain::from_defs`].
    pub fn from_json(json: &str, repr: &ChunkRepr, registry: &CodecRegistry) -> Result<Self> {
        let defs: Vec<ExtensionDef> =
            serde_json::from_str(json).map_err(|source| MetaError::Json { source })?;
        CodecChain::from_defs(&defs, repr, registry)
    }

    /// The representation of the chunks this chain encodes.
    pub fn repr(&self) -> &ChunkRepr {
        &self.repr
    }

    /// The decoded chunk's size in bytes.
    pub fn decoded_len(&self) -> usize {
        self.len
    }

    /// The definitions of the codecs applied, as written back to metadata (configurations
    /// filled in as zarr-python writes them; skipped unknown codecs are not included).
    pub fn to_defs(&self) -> Vec<ExtensionDef> {
        let mut defs: Vec<ExtensionDef> = self
            .array_to_array
            .iter()
            .map(|(c, _)| c.to_def())
            .collect();
        defs.push(self.array_to_bytes.to_def());
        defs.extend(self.bytes_to_bytes.iter().map(|c| c.to_def()));
        defs
    }

    /// The largest encoding this chain can produce for a chunk (and so the largest stored
    /// value a decoder accepts).
    pub fn encoded_size_bound(&self) -> u64 {
        self.bounds[self.bounds.len() - 1]
    }

    /// The exact encoded size, when every chunk encodes to the same size (`bytes`, optionally
    /// followed by `crc32c`; what a shard index needs).
    #[cfg(feature = "sharding")]
    pub(crate) fn fixed_encoded_size(&self) -> Option<u64> {
        let mut size = self.array_to_bytes.fixed_encoded_size()?;
        for c in &self.bytes_to_bytes {
            size = c.fixed_encoded_size(size)?;
        }
        Some(size)
    }

    /// The array->bytes codec.
    pub fn array_to_bytes(&self) -> &dyn ArrayToBytesCodec {
        &*self.array_to_bytes
    }

    /// Whether the chain has array->array codecs (`transpose`) before its array->bytes codec.
    pub(crate) fn has_array_to_array(&self) -> bool {
        !self.array_to_array.is_empty()
    }

    /// Whether a chunk whose elements all equal the fill value may be stored when the caller
    /// asks to keep empty chunks: `false` when the array->bytes codec never stores one
    /// (`sparse_layout`), so it skips a chunk of fill values even when asked to
    /// write it ([`EmptyChunks::Write`]).
    pub(crate) fn stores_empty_chunks(&self) -> bool {
        self.array_to_bytes.stores_empty_chunks()
    }

    /// Runs only the bytes->bytes decoders: the bytes the array->bytes codec decodes (for
    /// `sparse_layout`, the encoded sparse chunk), in an 8-byte-aligned buffer.
    ///
    /// The buffer is the one the innermost bytes->bytes decoder produced (`zstd`, `gzip`,
    /// `blosc`), not a copy of it; the input is copied only when no decoder produced a buffer
    /// (no compressor: the stored bytes, less a `crc32c` checksum). Every decoder is held to
    /// the chain's bounds, the array->bytes codec's [`ArrayToBytesCodec::encoded_size_bound`]
    /// last, so nothing larger is allocated.
    ///
    /// # Errors
    /// [`CodecError::NotApplicable`] when the chain has array->array codecs (the bytes would
    /// then describe another representation than the chunk's); corrupt, truncated or
    /// oversized data.
    pub(crate) fn decode_to_array_bytes(&self, bytes: &[u8]) -> Result<AlignedBuffer> {
        Ok(self.decode_bytes_codecs(bytes)?.into_owned())
    }

    /// Runs only the bytes->bytes decoders, like [`CodecChain::decode_to_array_bytes`], but
    /// without copying a borrowed result: [`Decoded::Borrowed`] (a part of `bytes`, not
    /// necessarily aligned) when no decoder produced a buffer of its own.
    ///
    /// # Errors
    /// As [`CodecChain::decode_to_array_bytes`].
    pub(crate) fn decode_bytes_codecs<'a>(&self, bytes: &'a [u8]) -> Result<Decoded<'a>> {
        if let Some((c, _)) = self.array_to_array.first() {
            return Err(CodecError::NotApplicable {
                operation: "decoding to the array -> bytes codec's input",
                reason: format!(
                    "the chain has the array -> array codec {:?} before {:?}",
                    c.name(),
                    self.array_to_bytes.name()
                ),
            });
        }
        self.decode_bytes_bounded(bytes)
    }

    /// The bytes->bytes decoders on `bytes`, their output checked against the array->bytes
    /// codec's bound.
    fn decode_bytes_bounded<'a>(&self, bytes: &'a [u8]) -> Result<Decoded<'a>> {
        let decoded = self.decode_bytes(bytes, 0)?;
        if decoded.len() as u64 > self.bounds[0] {
            return Err(CodecError::ExceedsBound {
                codec: self.array_to_bytes.name(),
                limit: self.bounds[0],
            });
        }
        Ok(decoded)
    }

    /// Runs only the bytes->bytes encoders on bytes the array->bytes codec produced (the
    /// counterpart of [`CodecChain::decode_to_array_bytes`], for callers that build the
    /// encoded form themselves, such as sparse writes).
    ///
    /// # Errors
    /// [`CodecError::NotApplicable`] when the chain has array->array codecs; an encoder's
    /// failure.
    pub(crate) fn encode_from_array_bytes(&self, bytes: Vec<u8>) -> Result<Vec<u8>> {
        if let Some((c, _)) = self.array_to_array.first() {
            return Err(CodecError::NotApplicable {
                operation: "encoding from the array -> bytes codec's output",
                reason: format!(
                    "the chain has the array -> array codec {:?} before {:?}",
                    c.name(),
                    self.array_to_bytes.name()
                ),
            });
        }
        self.encode_bytes(bytes)
    }

    /// Whether [`CodecChain::decode_region`] reads only part of a stored chunk (a chain that
    /// is just `sharding_indexed`).
    pub(crate) fn supports_partial_decode(&self) -> bool {
        self.array_to_array.is_empty()
            && self.bytes_to_bytes.is_empty()
            && self.array_to_bytes.supports_partial_decode()
    }

    /// The inner chunk shape when the chain is sharded (`[sharding_indexed]` alone): the
    /// smallest unit [`CodecChain::decode_region`] reads.
    pub(crate) fn inner_chunk_shape(&self) -> Option<&[u64]> {
        if self.supports_partial_decode() {
            self.array_to_bytes.inner_chunks().map(InnerChunks::shape)
        } else {
            None
        }
    }

    fn check_chunk_len(&self, got: usize) -> Result<()> {
        if got == self.len {
            Ok(())
        } else {
            Err(CodecError::BufferLength {
                what: "the chunk",
                expected: self.len as u64,
                got: got as u64,
            })
        }
    }

    /// A zeroed buffer of `len` bytes for this chain's chunks, or
    /// [`CodecError::ChunkTooLarge`] when memory for it cannot be had.
    fn buffer(&self, len: usize) -> Result<AlignedBuffer> {
        AlignedBuffer::try_zeroed(len).ok_or_else(|| CodecError::ChunkTooLarge {
            shape: self.repr.shape.clone(),
            element_size: self.repr.element_size(),
        })
    }

    /// Runs the array->array encoders; `None` when there are none.
    fn encode_arrays(&self, chunk: &[u8]) -> Result<Option<AlignedBuffer>> {
        let mut owned: Option<AlignedBuffer> = None;
        for (c, n) in &self.array_to_array {
            let mut out = self.buffer(*n)?;
            c.encode(owned.as_deref().unwrap_or(chunk), &mut out)?;
            owned = Some(out);
        }
        Ok(owned)
    }

    /// Decodes a stored chunk of a `string` or `variable_length_bytes` array: the
    /// bytes->bytes decoders, then the vlen format (every element of the chunk shape).
    ///
    /// # Errors
    /// [`CodecError::NotApplicable`] for a chain whose array->bytes codec is not a vlen codec;
    /// corrupt, truncated or oversized data (no allocation beyond what the stored bytes and
    /// [`vlen::MAX_DECODED`](crate::vlen::MAX_DECODED) bound).
    ///
    /// Array -> array codecs that only move elements (`transpose`, as a Zarr v2 `|O` array
    /// of `order` F has) run as the permutation of the elements they are
    /// ([`ArrayToArrayCodec::encoded_order`]).
    #[cfg(feature = "vlen")]
    pub(crate) fn decode_vlen(&self, bytes: &[u8]) -> Result<crate::vlen::VlenChunk> {
        // the array -> array codecs run below, on the elements
        let decoded = self.decode_bytes_bounded(bytes)?;
        self.unpermute_vlen(self.array_to_bytes.decode_vlen(decoded.as_slice())?)
    }

    /// The elements of `chunk` (in the order the array -> bytes codec sees them) put back
    /// in the decoded order: each array -> array codec's permutation undone, the last first.
    #[cfg(feature = "vlen")]
    fn unpermute_vlen(&self, chunk: crate::vlen::VlenChunk) -> Result<crate::vlen::VlenChunk> {
        let mut chunk = chunk;
        for (c, _) in self.array_to_array.iter().rev() {
            let order = element_order(&**c)?;
            if order.len() != chunk.len() {
                return Err(CodecError::BufferLength {
                    what: "the chunk's elements",
                    expected: order.len() as u64,
                    got: chunk.len() as u64,
                });
            }
            let mut items: Vec<&[u8]> = vec![&[]; order.len()];
            for (k, &from) in order.iter().enumerate() {
                // `from` is a decoded index below the element count; `k` one of the chunk
                if let (Some(slot), Some(e)) = (items.get_mut(from), chunk.get(k)) {
                    *slot = e;
                }
            }
            chunk = crate::vlen::VlenChunk::from_items(items);
        }
        Ok(chunk)
    }

    /// The elements of `region` (of the chunk; C order of the region) of a stored chunk of a
    /// `string` or `variable_length_bytes` array read through `source`, `None` when it is not
    /// stored. A sharded chain (`[sharding_indexed]` alone) reads the shard index and then
    /// only the inner chunks the region meets (two requests); any other chain reads and
    /// decodes the whole chunk ([`CodecChain::decode_vlen`]).
    ///
    /// # Errors
    /// As [`CodecChain::decode_vlen`]; [`CodecError::RegionOutOfBounds`].
    #[cfg(feature = "vlen")]
    pub(crate) fn decode_vlen_region(
        &self,
        source: &dyn ByteRangeSource,
        region: &Region,
    ) -> Result<Option<crate::vlen::VlenChunk>> {
        check_inside(&self.repr, region)?;
        if self.supports_partial_decode() {
            return self.array_to_bytes.decode_vlen_region(source, region);
        }
        let Some(bytes) = source.get()? else {
            return Ok(None);
        };
        let chunk = self.decode_vlen(&bytes)?;
        if region.shape == self.repr.shape {
            return Ok(Some(chunk));
        }
        // the region as the one part of the chunk it covers
        let part = zarr_grid::ChunkPart {
            chunk: vec![0; region.rank()],
            in_chunk: region.clone(),
            in_region: Region::whole(&region.shape),
        };
        let mut items = Vec::new();
        part.try_for_each_position(&self.repr.shape, &region.shape, |src, _| {
            // inside the chunk (checked above), whose every element the decoder checked
            items.push(chunk.get(src).unwrap_or_default());
            Ok::<(), CodecError>(())
        })?;
        Ok(Some(crate::vlen::VlenChunk::from_items(items)))
    }

    /// Encodes the elements of a chunk of a `string` or `variable_length_bytes` array (C
    /// order, every element of the chunk shape): the vlen format, then the bytes->bytes
    /// encoders.
    ///
    /// # Errors
    /// As [`CodecChain::decode_vlen`], another number of elements, an element too large for
    /// the format.
    #[cfg(feature = "vlen")]
    pub(crate) fn encode_vlen<'a, I>(&self, items: I) -> Result<Vec<u8>>
    where
        I: IntoIterator<Item = &'a [u8]>,
        I::IntoIter: ExactSizeIterator,
    {
        if !self.array_to_array.is_empty() {
            // each array -> array codec's permutation (`transpose`), in order
            let mut items: Vec<&[u8]> = items.into_iter().collect();
            for (c, _) in &self.array_to_array {
                let order = element_order(&**c)?;
                if order.len() != items.len() {
                    return Err(CodecError::BufferLength {
                        what: "the chunk's elements",
                        expected: order.len() as u64,
                        got: items.len() as u64,
                    });
                }
                // every index of `order` is below the element count
                items = order.iter().map(|&from| items[from]).collect();
            }
            return self.encode_vlen_unpermuted(items);
        }
        self.encode_vlen_unpermuted(items)
    }

    /// [`CodecChain::encode_vlen`] of elements in the order the array -> bytes codec takes.
    #[cfg(feature = "vlen")]
    fn encode_vlen_unpermuted<'a, I>(&self, items: I) -> Result<Vec<u8>>
    where
        I: IntoIterator<Item = &'a [u8]>,
        I::IntoIter: ExactSizeIterator,
    {
        let bytes = self.array_to_bytes.encode_vlen(&mut items.into_iter())?;
        self.encode_bytes(bytes)
    }

    /// Whether encoding a borrowed chunk copies nothing before the first compressor: no array
    /// -> array codec, `[bytes]` in the machine's byte order, and a bytes -> bytes codec
    /// after it, which reads the chunk itself. (Without one, an owned buffer is the cheaper
    /// input: `[bytes]` returns it as the encoding.)
    pub(crate) fn encodes_borrowed(&self) -> bool {
        !self.bytes_to_bytes.is_empty()
            && self.array_to_array.is_empty()
            && self.array_to_bytes.encodes_as_is()
    }

    fn encode_bytes(&self, mut bytes: Vec<u8>) -> Result<Vec<u8>> {
        for c in &self.bytes_to_bytes {
            bytes = c.encode_owned(bytes)?;
        }
        Ok(bytes)
    }

    /// Encodes a whole chunk (native byte order, C order). Always produces bytes, even for a
    /// chunk of fill values (see [`CodecChain::encode_chunk`]).
    ///
    /// # Errors
    /// A chunk of the wrong length, or a codec's failure.
    pub(crate) fn encode_slice(&self, chunk: &[u8]) -> Result<Vec<u8>> {
        self.check_chunk_len(chunk.len())?;
        if self.encodes_borrowed() {
            // `[bytes]` would hand the compressor a copy of the chunk: compress the chunk
            let bytes = self.bytes_to_bytes[0].encode(chunk)?;
            return self.bytes_to_bytes[1..]
                .iter()
                .try_fold(bytes, |bytes, c| c.encode_owned(bytes));
        }
        let bytes = match self.encode_arrays(chunk)? {
            Some(arr) => self.array_to_bytes.encode(&arr)?,
            None => self.array_to_bytes.encode(chunk)?,
        };
        self.encode_bytes(bytes)
    }

    /// Encodes a chunk held in an owned buffer, reusing it where possible (`[bytes]` on a
    /// machine of the same byte order returns the buffer itself).
    ///
    /// # Errors
    /// As [`CodecChain::encode_slice`].
    pub(crate) fn encode_owned(&self, chunk: Vec<u8>) -> Result<Vec<u8>> {
        self.check_chunk_len(chunk.len())?;
        let bytes = match self.encode_arrays(&chunk)? {
            Some(arr) => self.array_to_bytes.encode(&arr)?,
            None => self.array_to_bytes.encode_owned(chunk)?,
        };
        self.encode_bytes(bytes)
    }

    /// Encodes a chunk, or returns `None` when it need not be stored: every element equals
    /// the fill value (for a sharded chain: every inner chunk does, so the shard would hold
    /// no data). The caller then deletes the stored chunk instead of writing it.
    ///
    /// # Errors
    /// As [`CodecChain::encode_slice`].
    pub(crate) fn encode_chunk(&self, chunk: &[u8]) -> Result<Option<Vec<u8>>> {
        self.check_chunk_len(chunk.len())?;
        if self.encodes_borrowed() {
            // as `encode`: the compressor reads the chunk itself
            if self.repr.is_fill(chunk) {
                return Ok(None);
            }
            return self.encode_slice(chunk).map(Some);
        }
        let bytes = match self.encode_arrays(chunk)? {
            Some(arr) => {
                if self.repr.is_fill(chunk) {
                    return Ok(None);
                }
                self.array_to_bytes.encode_or_skip(&arr)?
            }
            None => self.array_to_bytes.encode_or_skip(chunk)?,
        };
        bytes.map(|b| self.encode_bytes(b)).transpose()
    }

    /// As [`CodecChain::encode_chunk`] for the chunk that is the block `src` of a larger
    /// C-order buffer (such as the data of a region write): the chunk is gathered straight
    /// from the buffer, with no fill and, for `sharding_indexed`, no shard-sized buffer (each
    /// inner chunk is gathered from the buffer).
    ///
    /// # Errors
    /// A block of another shape or element size than the chunk, and as
    /// [`CodecChain::encode_slice`].
    pub(crate) fn encode_chunk_from_block(&self, src: SourceBlock<'_>) -> Result<Option<Vec<u8>>> {
        src.check_chunk(&self.repr)?;
        if self.encodes_borrowed() {
            // gathered into this thread's scratch buffer and compressed from there: no
            // chunk-sized allocation per chunk
            let whole = Region::whole(&self.repr.shape);
            let encoded = with_scratch(self.len, |chunk| -> Result<Option<Vec<u8>>> {
                src.copy_part_to(&whole, chunk)?;
                self.encode_chunk(chunk)
            });
            if let Some(encoded) = encoded {
                return encoded;
            }
        }
        if self.array_to_array.is_empty() {
            let bytes = self.array_to_bytes.encode_or_skip_block(src)?;
            return bytes.map(|b| self.encode_bytes(b)).transpose();
        }
        let chunk = src.gather(&self.repr)?;
        self.encode_chunk(&chunk)
    }

    /// As [`CodecChain::encode_chunk_from_block`], the encoding as parts to be stored one
    /// after the other: a shard with no bytes -> bytes codecs after it is its index and its
    /// inner chunks, never joined into one buffer; any other chain gives one part.
    ///
    /// # Errors
    /// As [`CodecChain::encode_chunk_from_block`].
    pub(crate) fn encode_chunk_parts_from_block(
        &self,
        src: SourceBlock<'_>,
    ) -> Result<Option<Vec<Vec<u8>>>> {
        if self.array_to_array.is_empty() && self.bytes_to_bytes.is_empty() {
            src.check_chunk(&self.repr)?;
            return self.array_to_bytes.encode_or_skip_block_parts(src);
        }
        Ok(self.encode_chunk_from_block(src)?.map(|bytes| vec![bytes]))
    }

    /// As [`CodecChain::encode_slice`] (bytes even for a chunk of fill values) for the chunk that
    /// is the block `src` of a larger buffer.
    ///
    /// # Errors
    /// A block of another shape or element size than the chunk, and as
    /// [`CodecChain::encode_slice`].
    pub(crate) fn encode_from_block(&self, src: SourceBlock<'_>) -> Result<Vec<u8>> {
        let chunk = src.gather(&self.repr)?;
        self.encode_owned(chunk)
    }

    /// Decodes a stored chunk straight into `out`, its block of a larger buffer (the output
    /// of a parallel region read, split by [`crate::BlockBuffer`]): `sharding_indexed`
    /// decodes each inner chunk into its place, with no shard-sized buffer; other chains
    /// decode into a chunk buffer and copy it in.
    ///
    /// # Errors
    /// A block of another shape or element size than the chunk, and as
    /// [`CodecChain::decode`].
    pub(crate) fn decode_into_block(&self, bytes: &[u8], out: &mut Block<'_>) -> Result<()> {
        out.check_chunk(&self.repr)?;
        if self.array_to_array.is_empty() {
            let cur = self.decode_bytes(bytes, 0)?;
            return self.array_to_bytes.decode_into_block(cur.as_slice(), out);
        }
        let chunk = self.decode(bytes)?;
        out.copy_from(&chunk, &self.repr.shape, &vec![0u64; self.repr.rank()])?;
        Ok(())
    }

    /// Runs the bytes->bytes decoders from the last down to `first` (inclusive).
    fn decode_bytes<'a>(&self, bytes: &'a [u8], first: usize) -> Result<Decoded<'a>> {
        let mut cur = Decoded::Borrowed(bytes);
        for i in (first..self.bytes_to_bytes.len()).rev() {
            cur = self.bytes_to_bytes[i].decode(cur, self.bounds[i])?;
        }
        Ok(cur)
    }

    /// Decodes down to the representation the array->bytes codec serializes.
    fn decode_to_array(&self, bytes: &[u8]) -> Result<AlignedBuffer> {
        let a2b = &*self.array_to_bytes;
        match self.decode_bytes(bytes, 0)? {
            Decoded::Owned(mut buf) if a2b.decodes_in_place() && buf.len() == self.a2b_len => {
                a2b.decode_in_place(&mut buf)?;
                Ok(buf)
            }
            other => {
                let mut out = self.buffer(self.a2b_len)?;
                decode_a2b_into(a2b, other.as_slice(), &mut out)?;
                Ok(out)
            }
        }
    }

    /// Decodes a stored chunk into a new 8-byte-aligned buffer (native byte order, C order).
    ///
    /// The input is untrusted: corrupt or oversized data is an error, and no decoder
    /// allocates past the chain's bounds.
    ///
    /// # Errors
    /// Corrupt, truncated or oversized data, a checksum mismatch, an invalid shard index.
    pub fn decode(&self, bytes: &[u8]) -> Result<AlignedBuffer> {
        let mut arr = self.decode_to_array(bytes)?;
        for (i, (c, _)) in self.array_to_array.iter().enumerate().rev() {
            let n = if i == 0 {
                self.len
            } else {
                self.array_to_array[i - 1].1
            };
            let mut out = self.buffer(n)?;
            c.decode(&arr, &mut out)?;
            arr = out;
        }
        Ok(arr)
    }

    /// Decodes a stored chunk straight into `out` (the decoded chunk's length), without an
    /// intermediate buffer where the chain allows: `[bytes]` copies (or swaps) into `out`,
    /// `[bytes, zstd]` decompresses into it.
    ///
    /// # Errors
    /// As [`CodecChain::decode`], and [`CodecError::BufferLength`] for an `out` of the wrong
    /// length.
    pub(crate) fn decode_into_slice(&self, bytes: &[u8], out: &mut [u8]) -> Result<()> {
        if out.len() != self.len {
            return Err(CodecError::BufferLength {
                what: "the output buffer",
                expected: self.len as u64,
                got: out.len() as u64,
            });
        }
        let a2b = &*self.array_to_bytes;
        if self.array_to_array.is_empty() {
            if self.bytes_to_bytes.is_empty() {
                return decode_a2b_into(a2b, bytes, out);
            }
            if a2b.decodes_in_place() {
                // the innermost bytes->bytes decoder writes into `out`, then the array->bytes
                // codec finishes in place
                let cur = self.decode_bytes(bytes, 1)?;
                self.bytes_to_bytes[0].decode_into(cur.as_slice(), out)?;
                return a2b.decode_in_place(out);
            }
            let cur = self.decode_bytes(bytes, 0)?;
            return decode_a2b_into(a2b, cur.as_slice(), out);
        }
        let mut arr = self.decode_to_array(bytes)?;
        for (i, (c, _)) in self.array_to_array.iter().enumerate().rev() {
            if i == 0 {
                c.decode(&arr, out)?;
            } else {
                let mut next = self.buffer(self.array_to_array[i - 1].1)?;
                c.decode(&arr, &mut next)?;
                arr = next;
            }
        }
        Ok(())
    }

    /// Decodes the part `region` of the chunk stored in `source` into `out` (C order, the
    /// region's shape, native byte order). Returns `false`, leaving `out` untouched, when the
    /// chunk is not stored.
    ///
    /// A sharded chain (`[sharding_indexed]` alone) reads the shard index with one request
    /// (none when the source keeps it from an earlier read:
    /// [`ByteRangeSource::cached_index`]) and then only the inner chunks the region touches:
    /// in one more request (byte ranges
    /// that are adjacent in the shard coalesced), or, from a source of cheap requests
    /// ([`ByteRangeSource::cheap_requests`]), each with its own request where it is decoded;
    /// inner chunks are decoded in parallel and missing ones read as the fill value.
    /// `[bytes]` alone reads the value's size and the byte span from the region's first
    /// element to its last. Any other chain reads the whole stored value; `[bytes, zstd |
    /// blosc, ...]` then decodes only the prefix of the chunk up to the region's last element
    /// (a `zstd` frame of several blocks and without checksum streamed that far, the `blosc`
    /// blocks that hold it) when that is at most three quarters of the chunk.
    ///
    /// # Errors
    /// [`CodecError::RegionOutOfBounds`], [`CodecError::BufferLength`] for an `out` of the
    /// wrong length, a failing source, or corrupt data.
    pub(crate) fn decode_region(
        &self,
        source: &dyn ByteRangeSource,
        region: &Region,
        out: &mut [u8],
    ) -> Result<bool> {
        check_region(&self.repr, region, out.len())?;
        if region.is_empty() {
            return Ok(source.size()?.is_some());
        }
        if self.array_to_array.is_empty() && self.bytes_to_bytes.is_empty() {
            return self.array_to_bytes.decode_region(source, region, out);
        }
        let Some(bytes) = source.get()? else {
            return Ok(false);
        };
        if region.shape == self.repr.shape {
            self.decode_into_slice(&bytes, out)?;
        } else if self.decode_region_from_prefix(&bytes, region, out)? {
            // only the decoded bytes up to the region's last element were produced
        } else {
            self.copy_region_out(&self.decode(&bytes)?, region, out);
        }
        Ok(true)
    }
}

impl CodecChain {
    /// For `[bytes, compressor, ...]`: decodes only the chunk's bytes up to the region's last
    /// element, when the innermost compressor can stop early (`zstd`, `blosc`), and copies
    /// the region out of them. `false` when the chain cannot, or the region ends too late in
    /// the chunk for it to pay.
    fn decode_region_from_prefix(
        &self,
        bytes: &[u8],
        region: &Region,
        out: &mut [u8],
    ) -> Result<bool> {
        let elem = self.repr.element_size();
        let last: Vec<u64> = region.end().iter().map(|&e| e - 1).collect();
        let end = (linear_index(&last, &self.repr.shape) as usize + 1) * elem;
        if self.prefix_codec(end).is_none() {
            return Ok(false);
        }
        let mut run = |prefix: &mut [u8]| -> Result<bool> {
            if !self.decode_prefix_into(bytes, prefix)? {
                return Ok(false);
            }
            // every offset of the region lies below `end`
            self.copy_region_out(prefix, region, out);
            Ok(true)
        };
        match with_scratch(end, &mut run) {
            Some(done) => done,
            None => run(&mut self.buffer(end)?),
        }
    }

    /// Copies the part `region` of the chunk out of `decoded`, the chunk (C order, native byte
    /// order) decoded at least up to the region's last element, into `out` (the region's
    /// shape).
    fn copy_region_out(&self, decoded: &[u8], region: &Region, out: &mut [u8]) {
        copy_region(
            decoded,
            &self.repr.shape,
            &region.start,
            out,
            &region.shape,
            &vec![0; region.rank()],
            &region.shape,
            self.repr.element_size(),
        );
    }

    /// For `[bytes, compressor, ...]` and a prefix of `end` bytes of the decoded chunk: the
    /// `bytes` codec and the innermost compressor, which may stop early (`zstd`, `blosc`);
    /// `None` when the chain has another shape, or `end` lies so late in the chunk (past three
    /// quarters of it) that stopping early saves too little.
    fn prefix_codec(&self, end: usize) -> Option<&dyn BytesToBytesCodec> {
        if !self.array_to_array.is_empty() || !self.array_to_bytes.decodes_prefix() {
            return None;
        }
        let innermost = self.bytes_to_bytes.first()?;
        // a prefix of more than three quarters of the chunk saves too little
        (end <= self.len / 4 * 3).then_some(&**innermost)
    }

    /// For `[bytes, compressor, ...]`: decodes the first `prefix.len()` bytes of the decoded
    /// chunk (native byte order) into `prefix`, without the rest, when the innermost
    /// compressor can stop early (`zstd`, `blosc`). `false` (leaving `prefix` unspecified)
    /// when the chain cannot ([`CodecChain::prefix_codec`]) or the compressor declines.
    fn decode_prefix_into(&self, bytes: &[u8], prefix: &mut [u8]) -> Result<bool> {
        let Some(innermost) = self.prefix_codec(prefix.len()) else {
            return Ok(false);
        };
        let cur = self.decode_bytes(bytes, 1)?;
        if !innermost.decode_prefix_into(cur.as_slice(), prefix, self.bounds[0])? {
            return Ok(false);
        }
        self.array_to_bytes.decode_prefix_in_place(prefix)?;
        Ok(true)
    }

    /// Decodes the elements at `points` (positions inside the chunk) of the chunk stored in
    /// `source` into `out` (native byte order), one element after another in the order of
    /// `points`. Returns `false`, leaving `out` untouched, when the chunk is not stored.
    ///
    /// Only what the points need is read and decoded: a sharded chain (`[sharding_indexed]`
    /// alone) reads its index and then the inner chunks the points fall in (in one more
    /// request, adjacent byte ranges coalesced, or each with its own from a source of cheap
    /// requests, as [`CodecChain::decode_region`]), decoding each of them once, in parallel,
    /// as its own chain decodes points; `[bytes]` alone reads the value's size and the
    /// points' byte spans (spans close together coalesced); `[bytes, zstd | blosc, ...]`
    /// reads the whole value and decodes only the prefix up to the last point (as
    /// [`CodecChain::decode_region`]); any other chain decodes the whole chunk.
    ///
    /// # Errors
    /// [`CodecError::RegionOutOfBounds`] for a point outside the chunk,
    /// [`CodecError::BufferLength`] for an `out` of another length than the points', a failing
    /// source, or corrupt data.
    pub(crate) fn decode_points(
        &self,
        source: &dyn ByteRangeSource,
        points: &[Vec<u64>],
        out: &mut [u8],
    ) -> Result<bool> {
        self.check_points(points, out)?;
        if points.is_empty() {
            return Ok(source.size()?.is_some());
        }
        if self.array_to_array.is_empty() && self.bytes_to_bytes.is_empty() {
            return self.array_to_bytes.decode_points(source, points, out);
        }
        let Some(bytes) = source.get()? else {
            return Ok(false);
        };
        self.decode_stored_points(&bytes, points, out)?;
        Ok(true)
    }

    /// [`CodecChain::decode_points`] of a stored value already in memory (a shard's inner
    /// chunk, read by the sharding codec): the same reads of it, with no copy of it made.
    ///
    /// # Errors
    /// As [`CodecChain::decode_points`].
    #[cfg(feature = "sharding")]
    pub(crate) fn decode_points_in(
        &self,
        stored: &[u8],
        points: &[Vec<u64>],
        out: &mut [u8],
    ) -> Result<()> {
        self.check_points(points, out)?;
        if points.is_empty() {
            return Ok(());
        }
        if self.array_to_array.is_empty() && self.bytes_to_bytes.is_empty() {
            // a value in memory is always there
            return self
                .array_to_bytes
                .decode_points(&stored, points, out)
                .map(drop);
        }
        self.decode_stored_points(stored, points, out)
    }

    /// Checks that every point lies inside the chunk and that `out` holds one element each.
    fn check_points(&self, points: &[Vec<u64>], out: &[u8]) -> Result<()> {
        let elem = self.repr.element_size();
        let shape = &self.repr.shape;
        if let Some(p) = points
            .iter()
            .find(|p| p.len() != shape.len() || p.iter().zip(shape).any(|(&i, &n)| i >= n))
        {
            return Err(CodecError::RegionOutOfBounds {
                start: p.clone(),
                shape: vec![1; p.len()],
                chunk_shape: shape.clone(),
            });
        }
        if out.len() != points.len() * elem {
            return Err(CodecError::BufferLength {
                what: "the output buffer",
                expected: (points.len() * elem) as u64,
                got: out.len() as u64,
            });
        }
        Ok(())
    }

    /// The points (checked, at least one) of the stored value `bytes` of a chain with more
    /// than `[bytes]`: only the prefix up to the last point decoded where the chain can stop
    /// early, the whole chunk otherwise, into this thread's scratch buffer.
    fn decode_stored_points(
        &self,
        bytes: &[u8],
        points: &[Vec<u64>],
        out: &mut [u8],
    ) -> Result<()> {
        let elem = self.repr.element_size();
        let shape = &self.repr.shape;
        let last = points
            .iter()
            .map(|p| linear_index(p, shape) as usize)
            .max()
            .unwrap_or(0);
        let end = (last + 1) * elem;
        // into this thread's scratch buffer: no chunk-sized allocation faulted in per chunk
        let mut run = |chunk: &mut [u8]| -> Result<()> {
            if self.decode_prefix_into(bytes, &mut chunk[..end])? {
                pick_points(&chunk[..end], shape, points, elem, out);
            } else {
                self.decode_into_slice(bytes, chunk)?;
                pick_points(chunk, shape, points, elem, out);
            }
            Ok(())
        };
        match with_scratch(self.len, &mut run) {
            Some(done) => done,
            None => run(&mut self.buffer(self.len)?),
        }
    }
}

impl CodecChain {
    /// The chain's partial encoder, which updates part of a stored chunk re-encoding only
    /// what the update touches: for a chain whose array -> bytes codec has one
    /// ([`ArrayToBytesCodec::partial_encoder`]: `sharding_indexed`, which re-encodes only the
    /// inner chunks touched) and no array -> array codec before it, the bytes -> bytes codecs
    /// running on the whole value around it. `None` for any other chain: the caller decodes
    /// the chunk, updates it and encodes it.
    pub fn partial_encoder(&self) -> Option<&dyn PartialEncoder> {
        (self.array_to_array.is_empty() && self.array_to_bytes.partial_encoder().is_some())
            .then_some(self as &dyn PartialEncoder)
    }

    /// The array -> bytes codec's partial encoder, for a chain that has one.
    fn a2b_partial_encoder(&self, operation: &'static str) -> Result<&dyn PartialEncoder> {
        match self.array_to_bytes.partial_encoder() {
            Some(p) if self.array_to_array.is_empty() => Ok(p),
            _ => Err(CodecError::NotApplicable {
                operation,
                reason: format!(
                    "the chain has array -> array codecs, or the array -> bytes codec {:?} has \
                     no partial encoder",
                    self.array_to_bytes.name()
                ),
            }),
        }
    }
}

impl PartialEncoder for CodecChain {
    fn encode_update(
        &self,
        encoded: Option<&[u8]>,
        update: &ChunkUpdate<'_>,
    ) -> Result<Option<Vec<u8>>> {
        let codec = self.a2b_partial_encoder("updating part of a chunk")?;
        let decoded = encoded.map(|b| self.decode_bytes_bounded(b)).transpose()?;
        codec
            .encode_update(decoded.as_ref().map(Decoded::as_slice), update)?
            .map(|bytes| self.encode_bytes(bytes))
            .transpose()
    }

    fn updates_in_place(&self) -> bool {
        self.bytes_to_bytes.is_empty()
            && self
                .a2b_partial_encoder("")
                .is_ok_and(PartialEncoder::updates_in_place)
    }

    fn encode_update_pieces(
        &self,
        source: &dyn ByteRangeSource,
        update: &ChunkUpdate<'_>,
    ) -> Result<Option<Vec<Piece>>> {
        const OPERATION: &str = "updating part of a stored chunk in place";
        let codec = self.a2b_partial_encoder(OPERATION)?;
        if let Some(c) = self.bytes_to_bytes.first() {
            return Err(CodecError::NotApplicable {
                operation: OPERATION,
                reason: format!(
                    "the bytes -> bytes codec {:?} runs on the whole stored value",
                    c.name()
                ),
            });
        }
        codec.encode_update_pieces(source, update)
    }
}

/// A chunk handed to [`CodecChain::encode`].
///
/// `From` conversions make the common cases plain: a borrowed slice (`&chunk`), an owned
/// `Vec<u8>` and a [`SourceBlock`].
pub enum ChunkIn<'a> {
    /// A whole chunk (native byte order, C order), borrowed. A chain that starts with `[bytes]`
    /// in the machine's byte order and a compressor hands it to the compressor uncopied.
    Slice(&'a [u8]),
    /// A whole chunk in an owned buffer, reused where the chain can (`[bytes]` alone in the
    /// machine's byte order returns it as the encoding).
    Owned(Vec<u8>),
    /// The chunk as the block of a larger C-order buffer (such as the data of a region write),
    /// gathered straight from it: no fill, and for `sharding_indexed` no shard-sized buffer.
    Block(SourceBlock<'a>),
    /// The elements of a chunk of a `string` or `variable_length_bytes` array (C order, every
    /// element of the chunk shape). Always encoded: whether a chunk of fill elements is stored
    /// is the caller's choice.
    #[cfg(feature = "vlen")]
    Vlen(&'a mut dyn ExactSizeIterator<Item = &'a [u8]>),
    /// What the array -> bytes codec produces (for `sparse_layout`, the encoded sparse chunk,
    /// built by the caller): only the bytes -> bytes codecs run. Refused
    /// ([`CodecError::NotApplicable`]) by a chain with array -> array codecs.
    Serialized(Vec<u8>),
}

impl std::fmt::Debug for ChunkIn<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChunkIn::Slice(chunk) => f.debug_tuple("Slice").field(&chunk.len()).finish(),
            ChunkIn::Owned(chunk) => f.debug_tuple("Owned").field(&chunk.len()).finish(),
            ChunkIn::Block(block) => f.debug_tuple("Block").field(block).finish(),
            #[cfg(feature = "vlen")]
            ChunkIn::Vlen(items) => f.debug_tuple("Vlen").field(&items.len()).finish(),
            ChunkIn::Serialized(bytes) => f.debug_tuple("Serialized").field(&bytes.len()).finish(),
        }
    }
}

impl<'a> From<&'a [u8]> for ChunkIn<'a> {
    fn from(chunk: &'a [u8]) -> Self {
        ChunkIn::Slice(chunk)
    }
}

impl<'a, const N: usize> From<&'a [u8; N]> for ChunkIn<'a> {
    fn from(chunk: &'a [u8; N]) -> Self {
        ChunkIn::Slice(chunk)
    }
}

impl<'a> From<&'a Vec<u8>> for ChunkIn<'a> {
    fn from(chunk: &'a Vec<u8>) -> Self {
        ChunkIn::Slice(chunk)
    }
}

impl From<Vec<u8>> for ChunkIn<'_> {
    fn from(chunk: Vec<u8>) -> Self {
        ChunkIn::Owned(chunk)
    }
}

impl<'a> From<SourceBlock<'a>> for ChunkIn<'a> {
    fn from(block: SourceBlock<'a>) -> Self {
        ChunkIn::Block(block)
    }
}

/// Where [`CodecChain::decode_into`] puts a decoded chunk.
///
/// `From` conversions make the common cases plain: `&mut [u8]`, `&mut Vec<u8>` (its
/// contents, at their length) and `&mut Block`.
#[derive(Debug)]
pub enum ChunkOut<'o, 'b> {
    /// A buffer of the decoded chunk's length ([`CodecChain::decoded_len`]; native byte
    /// order, C order), written without an intermediate buffer where the chain allows
    /// (`[bytes]` copies or swaps into it, `[bytes, zstd]` decompresses into it).
    Slice(&'o mut [u8]),
    /// The chunk's block of a larger buffer (the output of a parallel region read, split by
    /// [`crate::BlockBuffer`]): `sharding_indexed` decodes each inner chunk into its place,
    /// with no shard-sized buffer; other chains decode into a chunk buffer and copy it in.
    Block(&'o mut Block<'b>),
    /// The elements of a chunk of a `string` or `variable_length_bytes` array (replaced).
    /// Array -> array codecs that only move elements (`transpose`) run as the permutation
    /// they are.
    #[cfg(feature = "vlen")]
    Vlen(&'o mut crate::vlen::VlenChunk),
    /// What the array -> bytes codec decodes (for `sparse_layout`, the encoded sparse chunk),
    /// replacing the buffer: only the bytes -> bytes decoders run, and the buffer is the one
    /// the innermost of them produced, not a copy (the stored bytes are copied only when none
    /// did). Refused ([`CodecError::NotApplicable`]) by a chain with array -> array codecs.
    Serialized(&'o mut AlignedBuffer),
}

impl<'o> From<&'o mut [u8]> for ChunkOut<'o, '_> {
    fn from(out: &'o mut [u8]) -> Self {
        ChunkOut::Slice(out)
    }
}

impl<'o, const N: usize> From<&'o mut [u8; N]> for ChunkOut<'o, '_> {
    fn from(out: &'o mut [u8; N]) -> Self {
        ChunkOut::Slice(out)
    }
}

impl<'o> From<&'o mut Vec<u8>> for ChunkOut<'o, '_> {
    fn from(out: &'o mut Vec<u8>) -> Self {
        ChunkOut::Slice(out)
    }
}

impl<'o, 'b> From<&'o mut Block<'b>> for ChunkOut<'o, 'b> {
    fn from(out: &'o mut Block<'b>) -> Self {
        ChunkOut::Block(out)
    }
}

#[cfg(feature = "vlen")]
impl<'o> From<&'o mut crate::vlen::VlenChunk> for ChunkOut<'o, '_> {
    fn from(out: &'o mut crate::vlen::VlenChunk) -> Self {
        ChunkOut::Vlen(out)
    }
}

/// What [`CodecChain::encode`] does with a chunk whose elements all equal the fill value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum EmptyChunks {
    /// Skipped (`None`): the default, as zarr-python's `write_empty_chunks=False`.
    #[default]
    Skip,
    /// Encoded where the codecs store one, as `write_empty_chunks=True`; skipped by an
    /// array -> bytes codec whose format stores no empty chunk (`sparse_layout`).
    Write,
    /// Encoded always, even by a codec whose format stores no empty chunk: the bytes a
    /// codec call must return (as a codec of another library's pipeline).
    Encode,
}

/// How [`CodecChain::encode`] treats a chunk.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EncodeOptions {
    /// What becomes of a chunk of fill values.
    pub empty_chunks: EmptyChunks,
}

impl EncodeOptions {
    /// A chunk of fill values is skipped (`None`): the default.
    pub const SKIP_EMPTY: EncodeOptions = EncodeOptions {
        empty_chunks: EmptyChunks::Skip,
    };
    /// A chunk of fill values is encoded where the codecs store one.
    pub const WRITE_EMPTY: EncodeOptions = EncodeOptions {
        empty_chunks: EmptyChunks::Write,
    };
    /// Every chunk is encoded (never `None`).
    pub const ENCODE_EMPTY: EncodeOptions = EncodeOptions {
        empty_chunks: EmptyChunks::Encode,
    };

    /// Whether a chunk of fill values is encoded by `chain` rather than skipped.
    fn keeps_empty(self, chain: &CodecChain) -> bool {
        match self.empty_chunks {
            EmptyChunks::Skip => false,
            EmptyChunks::Write => chain.stores_empty_chunks(),
            EmptyChunks::Encode => true,
        }
    }
}

/// Reads parts of stored chunks of a [`CodecChain`] ([`CodecChain::partial_decoder`]):
/// regions, points and regions of variable-size elements, reading and decoding only what
/// they need where the chain allows.
#[derive(Debug, Clone, Copy)]
pub struct PartialDecoder<'a> {
    chain: &'a CodecChain,
}

impl PartialDecoder<'_> {
    /// Whether a part of a stored chunk is read without reading the whole of it and decoding
    /// it whole: a chain that is `sharding_indexed` alone (its index and the inner chunks
    /// the part meets), or `[bytes]` alone (the part's byte span).
    pub fn reads_part(&self) -> bool {
        self.chain.supports_partial_decode()
    }

    /// The inner chunk shape when the chain is `sharding_indexed` alone: the smallest unit
    /// of a stored chunk that a partial read decodes.
    pub fn inner_chunk_shape(&self) -> Option<&[u64]> {
        self.chain.inner_chunk_shape()
    }

    /// Decodes the part `region` of the chunk stored in `source` into `out` (C order, the
    /// region's shape, native byte order). Returns `false`, leaving `out` untouched, when the
    /// chunk is not stored.
    ///
    /// A sharded chain (`[sharding_indexed]` alone) reads the shard index with one request
    /// (none when the source keeps it from an earlier read:
    /// [`ByteRangeSource::cached_index`]) and then only the inner chunks the region touches:
    /// in one more request (byte ranges
    /// that are adjacent in the shard coalesced), or, from a source of cheap requests
    /// ([`ByteRangeSource::cheap_requests`]), each with its own request where it is decoded;
    /// inner chunks are decoded in parallel and missing ones read as the fill value.
    /// `[bytes]` alone reads the value's size and the byte span from the region's first
    /// element to its last. Any other chain reads the whole stored value; `[bytes, zstd |
    /// blosc, ...]` then decodes only the prefix of the chunk up to the region's last element
    /// (a `zstd` frame of several blocks and without checksum streamed that far, the `blosc`
    /// blocks that hold it) when that is at most three quarters of the chunk.
    ///
    /// # Errors
    /// [`CodecError::RegionOutOfBounds`], [`CodecError::BufferLength`] for an `out` of the
    /// wrong length, a failing source, or corrupt data.
    pub fn region(
        &self,
        source: &dyn ByteRangeSource,
        region: &Region,
        out: &mut [u8],
    ) -> Result<bool> {
        self.chain.decode_region(source, region, out)
    }

    /// Decodes the elements at `points` (positions inside the chunk) of the chunk stored in
    /// `source` into `out` (native byte order), one element after another in the order of
    /// `points`. Returns `false`, leaving `out` untouched, when the chunk is not stored.
    ///
    /// Only what the points need is read and decoded: a sharded chain (`[sharding_indexed]`
    /// alone) reads its index and then the inner chunks the points fall in (as
    /// [`PartialDecoder::region`]), decoding each of them once, in parallel; `[bytes]` alone
    /// reads the value's size and the points' byte spans (spans close together coalesced);
    /// `[bytes, zstd | blosc, ...]` reads the whole value and decodes only the prefix up to
    /// the last point; any other chain decodes the whole chunk.
    ///
    /// # Errors
    /// [`CodecError::RegionOutOfBounds`] for a point outside the chunk,
    /// [`CodecError::BufferLength`] for an `out` of another length than the points', a failing
    /// source, or corrupt data.
    pub fn points(
        &self,
        source: &dyn ByteRangeSource,
        points: &[Vec<u64>],
        out: &mut [u8],
    ) -> Result<bool> {
        self.chain.decode_points(source, points, out)
    }

    /// The elements of `region` (of the chunk; C order of the region) of a stored chunk of a
    /// `string` or `variable_length_bytes` array read through `source`, `None` when it is not
    /// stored. A sharded chain (`[sharding_indexed]` alone) reads the shard index and then
    /// only the inner chunks the region meets (two requests); any other chain reads and
    /// decodes the whole chunk.
    ///
    /// # Errors
    /// [`CodecError::RegionOutOfBounds`], a failing source, corrupt data, or a chain whose
    /// array -> bytes codec does not take variable-size elements.
    #[cfg(feature = "vlen")]
    pub fn vlen_region(
        &self,
        source: &dyn ByteRangeSource,
        region: &Region,
    ) -> Result<Option<crate::vlen::VlenChunk>> {
        self.chain.decode_vlen_region(source, region)
    }
}

/// The chain's public contract: encode a chunk in, decode a chunk out, read parts, update
/// parts. Every fast path (a borrowed chunk compressed uncopied, this thread's scratch buffer
/// for blocks, decoding in place, `zstd` / `blosc` prefix decoding, a shard's per-inner-chunk
/// work) is chosen here, inside the chain.
impl CodecChain {
    /// Encodes a chunk, or returns `None` when it need not be stored: every element equals
    /// the fill value (for a sharded chain: every inner chunk does, so the shard would hold
    /// no data) and `options` skips such chunks ([`EmptyChunks`]). The caller then deletes
    /// the stored chunk instead.
    ///
    /// Variable-size elements ([`ChunkIn::Vlen`]) and array -> bytes output
    /// ([`ChunkIn::Serialized`]) are always encoded.
    ///
    /// # Errors
    /// A chunk of the wrong length, a block of another shape or element size than the chunk,
    /// another number of elements, an element too large for the format, input the chain
    /// does not take (variable-size elements for fixed-size codecs, array -> bytes output for
    /// a chain with array -> array codecs), or a codec's failure.
    pub fn encode<'a>(
        &self,
        chunk: impl Into<ChunkIn<'a>>,
        options: EncodeOptions,
    ) -> Result<Option<Vec<u8>>> {
        let keep = options.keeps_empty(self);
        match chunk.into() {
            ChunkIn::Slice(chunk) if keep => self.encode_slice(chunk).map(Some),
            ChunkIn::Slice(chunk) => self.encode_chunk(chunk),
            ChunkIn::Owned(chunk) if keep => self.encode_owned(chunk).map(Some),
            ChunkIn::Owned(chunk) => self.encode_chunk(&chunk),
            ChunkIn::Block(src) if keep => self.encode_from_block(src).map(Some),
            ChunkIn::Block(src) => self.encode_chunk_from_block(src),
            #[cfg(feature = "vlen")]
            ChunkIn::Vlen(items) => self.encode_vlen(items).map(Some),
            ChunkIn::Serialized(bytes) => self.encode_from_array_bytes(bytes).map(Some),
        }
    }

    /// As [`CodecChain::encode`], the encoding as parts to be stored one after the other: a
    /// shard of a [`ChunkIn::Block`] with no bytes -> bytes codecs after it is its index and
    /// its inner chunks, never joined into one buffer; anything else gives one part.
    ///
    /// # Errors
    /// As [`CodecChain::encode`].
    pub fn encode_parts<'a>(
        &self,
        chunk: impl Into<ChunkIn<'a>>,
        options: EncodeOptions,
    ) -> Result<Option<Vec<Vec<u8>>>> {
        match chunk.into() {
            ChunkIn::Block(src) if !options.keeps_empty(self) => {
                self.encode_chunk_parts_from_block(src)
            }
            chunk => Ok(self.encode(chunk, options)?.map(|bytes| vec![bytes])),
        }
    }

    /// Decodes a stored chunk into `out`: a buffer of the decoded chunk's length, a block of
    /// a larger buffer, the elements of a chunk of variable-size elements, or the array ->
    /// bytes codec's input ([`ChunkOut`]).
    ///
    /// The input is untrusted: corrupt or oversized data is an error, and no decoder
    /// allocates past the chain's bounds.
    ///
    /// # Errors
    /// Corrupt, truncated or oversized data, a checksum mismatch, an invalid shard index;
    /// [`CodecError::BufferLength`] for a buffer of the wrong length, a block of another
    /// shape or element size than the chunk; output the chain does not make (elements of
    /// variable size from a fixed-size codec, array -> bytes input for a chain with array ->
    /// array codecs).
    pub fn decode_into<'o, 'b: 'o>(
        &self,
        bytes: &[u8],
        out: impl Into<ChunkOut<'o, 'b>>,
    ) -> Result<()> {
        match out.into() {
            ChunkOut::Slice(out) => self.decode_into_slice(bytes, out),
            ChunkOut::Block(out) => self.decode_into_block(bytes, out),
            #[cfg(feature = "vlen")]
            ChunkOut::Vlen(out) => {
                *out = self.decode_vlen(bytes)?;
                Ok(())
            }
            ChunkOut::Serialized(out) => {
                *out = self.decode_to_array_bytes(bytes)?;
                Ok(())
            }
        }
    }

    /// The chain's partial decoder, which reads regions and points of stored chunks.
    pub fn partial_decoder(&self) -> PartialDecoder<'_> {
        PartialDecoder { chain: self }
    }
}

fn order_error(codec: &str, kind: &str, a2b: &str) -> CodecError {
    CodecError::InvalidChain {
        reason: format!("{kind} codec {codec:?} comes after the array -> bytes codec {a2b:?}"),
    }
}

/// Checks that `region` lies inside the chunk and that `out_len` is its byte length.
pub(crate) fn check_region(repr: &ChunkRepr, region: &Region, out_len: usize) -> Result<()> {
    check_inside(repr, region)?;
    let expected = repr.with_shape(region.shape.clone()).byte_len()?;
    if out_len != expected {
        return Err(CodecError::BufferLength {
            what: "the output buffer",
            expected: expected as u64,
            got: out_len as u64,
        });
    }
    Ok(())
}

/// [`CodecError::RegionOutOfBounds`] unless `region` lies inside the chunk.
fn check_inside(repr: &ChunkRepr, region: &Region) -> Result<()> {
    region
        .check_inside(&repr.shape)
        .map_err(|_| CodecError::RegionOutOfBounds {
            start: region.start.clone(),
            shape: region.shape.clone(),
            chunk_shape: repr.shape.clone(),
        })
}

/// The element order of an array -> array codec run on variable-size elements
/// ([`ArrayToArrayCodec::encoded_order`]); refused for a codec that changes values (which
/// [`CodecChain::from_defs`] does not build for such elements).
#[cfg(feature = "vlen")]
fn element_order(codec: &dyn ArrayToArrayCodec) -> Result<Vec<usize>> {
    codec.encoded_order().unwrap_or_else(|| {
        Err(CodecError::NotApplicable {
            operation: "reordering variable-size elements",
            reason: format!("codec {:?} changes element values", codec.name()),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::default_registry;
    use zarr_meta::{DataType, FillValue};

    fn repr(t: DataType, shape: Vec<u64>) -> ChunkRepr {
        ChunkRepr::new(shape, t, FillValue::zero(t))
    }

    fn chain(json: &str, r: &ChunkRepr) -> Result<CodecChain> {
        CodecChain::from_json(json, r, &default_registry())
    }

    /// Issue 38, item 10: `transpose` on variable-size elements (a Zarr v2 `|O` array of
    /// order F) is the permutation of the elements: the vlen codec sees them in the
    /// transposed C order (the F order of the chunk), and decoding puts them back; sharded
    /// too, with the transpose inside the shard or around it.
    #[cfg(all(feature = "vlen", feature = "sharding"))]
    #[test]
    fn transpose_permutes_variable_size_elements() {
        let fill = FillValue::from_json(&serde_json::json!(""), DataType::String).unwrap();
        let r = ChunkRepr::new(vec![2, 3], DataType::String, fill.clone());
        let items = ["a", "bb", "c", "dé", "", "f"];
        let bytes =
            |v: &[&'static str]| -> Vec<&'static [u8]> { v.iter().map(|s| s.as_bytes()).collect() };
        let f = chain(
            r#"[{"name":"transpose","configuration":{"order":[1,0]}},{"name":"vlen-utf8"}]"#,
            &r,
        )
        .unwrap();
        let encoded = f.encode_vlen(bytes(&items)).unwrap();
        // as stored: the elements in F order, read by the plain vlen codec
        let transposed = ChunkRepr::new(vec![3, 2], DataType::String, fill.clone());
        let plain = chain(r#"[{"name":"vlen-utf8"}]"#, &transposed).unwrap();
        let stored = plain.decode_vlen(&encoded).unwrap();
        let stored: Vec<Vec<u8>> = stored.iter().map(<[u8]>::to_vec).collect();
        let want_f: Vec<Vec<u8>> = ["a", "dé", "bb", "", "c", "f"]
            .iter()
            .map(|s| s.as_bytes().to_vec())
            .collect();
        assert_eq!(stored, want_f);
        let back = f.decode_vlen(&encoded).unwrap();
        assert_eq!(back.iter().collect::<Vec<_>>(), bytes(&items));
        // a three-axis permutation, inside and around a shard
        let r3 = ChunkRepr::new(vec![2, 2, 4], DataType::String, fill);
        let many: Vec<String> = (0..16).map(|i| format!("e{i}")).collect();
        let many: Vec<&[u8]> = many.iter().map(|s| s.as_bytes()).collect();
        for json in [
            r#"[{"name":"transpose","configuration":{"order":[2,0,1]}},{"name":"vlen-utf8"},{"name":"zstd","configuration":{"level":0}}]"#,
            r#"[{"name":"sharding_indexed","configuration":{"chunk_shape":[1,2,2],
                "codecs":[{"name":"transpose","configuration":{"order":[1,2,0]}},{"name":"vlen-utf8"}],
                "index_codecs":[{"name":"bytes","configuration":{"endian":"little"}}]}}]"#,
            r#"[{"name":"transpose","configuration":{"order":[2,1,0]}},
                {"name":"sharding_indexed","configuration":{"chunk_shape":[2,1,2],
                "codecs":[{"name":"vlen-utf8"}],
                "index_codecs":[{"name":"bytes","configuration":{"endian":"little"}}]}}]"#,
        ] {
            let c = chain(json, &r3).unwrap_or_else(|e| panic!("{json}: {e}"));
            let encoded = c.encode_vlen(many.iter().copied()).unwrap();
            let back = c.decode_vlen(&encoded).unwrap();
            assert_eq!(back.iter().collect::<Vec<_>>(), many, "{json}");
            // a region of it, as the array reads a part of a chunk
            let region = Region::new(vec![1, 0, 1], vec![1, 2, 2]).unwrap();
            let part = c.decode_vlen_region(&encoded, &region).unwrap().unwrap();
            let want: Vec<&[u8]> = [9, 10, 13, 14].iter().map(|&i| many[i]).collect();
            assert_eq!(part.iter().collect::<Vec<_>>(), want, "{json}");
        }
    }

    /// Issue 37: the chain knows no codec by name or type, so a codec of another crate
    /// takes variable-size elements by saying so when it registers, and runs through every
    /// variable-size path of the chain as `vlen-utf8` does; registered without saying so, it
    /// is refused before its factory is called.
    #[cfg(all(feature = "vlen", feature = "zstd"))]
    #[test]
    fn a_registered_codec_takes_variable_size_elements() {
        use crate::registry::CodecFactory;
        use crate::vlen::{VlenCodec, VLEN_UTF8};

        #[derive(Debug)]
        struct Wrapped(VlenCodec);
        impl ArrayToBytesCodec for Wrapped {
            fn name(&self) -> &'static str {
                "test.vlen"
            }
            fn to_def(&self) -> ExtensionDef {
                ExtensionDef::new("test.vlen")
            }
            fn decoded_repr(&self) -> &ChunkRepr {
                self.0.decoded_repr()
            }
            fn encoded_size_bound(&self) -> u64 {
                self.0.encoded_size_bound()
            }
            fn as_any(&self) -> &dyn std::any::Any {
                self
            }
            fn encode(&self, input: &[u8]) -> Result<Vec<u8>> {
                self.0.encode(input)
            }
            fn decode_into(&self, input: &[u8], out: &mut [u8]) -> Result<()> {
                self.0.decode_into(input, out)
            }
            fn decode_vlen(&self, input: &[u8]) -> Result<crate::vlen::VlenChunk> {
                self.0.decode_chunk(input)
            }
            fn encode_vlen(
                &self,
                items: &mut dyn ExactSizeIterator<Item = &[u8]>,
            ) -> Result<Vec<u8>> {
                self.0.encode_chunk(items)
            }
        }
        fn factory(_: &ExtensionDef, r: &ChunkRepr, _: &CodecRegistry) -> Result<Codec> {
            Ok(Codec::ArrayToBytes(Box::new(Wrapped(VlenCodec::new(
                VLEN_UTF8, r,
            )?))))
        }
        let fill = FillValue::from_json(&serde_json::json!(""), DataType::String).unwrap();
        let r = ChunkRepr::new(vec![2, 3], DataType::String, fill);
        let json = r#"[{"name":"transpose","configuration":{"order":[1,0]}},
                       {"name":"test.vlen"},{"name":"zstd","configuration":{"level":1}}]"#;
        let mut registry = default_registry();
        registry
            .register(
                "test.vlen",
                CodecFactory::new(factory).taking_variable_size(),
            )
            .unwrap();
        let c = CodecChain::from_json(json, &r, &registry).unwrap();
        let items: Vec<&[u8]> = ["a", "bb", "", "dé", "e", "ff"]
            .iter()
            .map(|s| s.as_bytes())
            .collect();
        let encoded = c.encode_vlen(items.iter().copied()).unwrap();
        let back = c.decode_vlen(&encoded).unwrap();
        assert_eq!(back.iter().collect::<Vec<_>>(), items);
        let region = Region::new(vec![0, 1], vec![2, 2]).unwrap();
        let part = c.decode_vlen_region(&encoded, &region).unwrap().unwrap();
        let want: Vec<&[u8]> = [1, 2, 4, 5].iter().map(|&i| items[i]).collect();
        assert_eq!(part.iter().collect::<Vec<_>>(), want);
        // fixed-size paths stay refused
        assert!(c.decode(&encoded).is_err());

        let mut fixed = default_registry();
        fixed
            .register("test.vlen", CodecFactory::new(factory))
            .unwrap();
        let err = CodecChain::from_json(r#"[{"name":"test.vlen"}]"#, &r, &fixed).unwrap_err();
        assert!(
            matches!(&err, CodecError::VariableSizeElements { codec, .. } if codec == "test.vlen"),
            "{err}"
        );
    }

    #[test]
    fn variable_size_types_are_refused_by_fixed_size_codecs() {
        for t in [DataType::String, DataType::Bytes] {
            let r = repr(t, vec![4]);
            for json in [
                r#"[{"name":"bytes","configuration":{"endian":"little"}}]"#,
                r#"[{"name":"transpose","configuration":{"order":[0]}},{"name":"bytes"}]"#,
            ] {
                let err = chain(json, &r).unwrap_err();
                assert!(
                    matches!(err, CodecError::VariableSizeElements { .. }),
                    "{json}: {err}"
                );
            }
            let err = chain(r#"[{"name":"bytes"}]"#, &r).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!("codec \"bytes\" takes fixed-size elements, not the variable-size elements of data type {t} (string arrays need the codec \"vlen-utf8\", variable_length_bytes arrays \"vlen-bytes\")")
            );
            // a codec this build lacks is refused by its name
            let err = chain(r#"[{"name":"vlen-utf16"}]"#, &r).unwrap_err();
            assert_eq!(err.to_string(), "unknown codec \"vlen-utf16\"");
        }
    }

    #[cfg(feature = "crc32c")]
    #[test]
    fn order_is_checked() {
        let r = repr(DataType::Int32, vec![2, 2]);
        let err = chain(r#"[{"name":"crc32c"}]"#, &r).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid codec chain: it has no array -> bytes codec (such as {\"name\": \"bytes\"})"
        );
        for bad in [
            r#"[{"name":"bytes","configuration":{"endian":"little"}},{"name":"bytes","configuration":{"endian":"little"}}]"#,
            r#"[{"name":"crc32c"},{"name":"bytes","configuration":{"endian":"little"}}]"#,
            r#"[{"name":"bytes","configuration":{"endian":"little"}},{"name":"transpose","configuration":{"order":[1,0]}}]"#,
        ] {
            assert!(
                matches!(chain(bad, &r), Err(CodecError::InvalidChain { .. })),
                "{bad}"
            );
        }
        let err = chain(
            r#"[{"name":"bytes","configuration":{"endian":"little"}},{"name":"mystery"}]"#,
            &r,
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "unknown codec \"mystery\"");
        assert!(chain("[1]", &r).is_err());
    }

    #[test]
    fn chains_are_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<CodecChain>();
        assert_send_sync::<crate::CodecError>();
        assert_send_sync::<AlignedBuffer>();
    }

    #[test]
    fn optional_unknown_codec_is_skipped() {
        let r = repr(DataType::UInt8, vec![3]);
        let c = chain(
            r#"[{"name":"bytes"},{"name":"mystery","must_understand":false}]"#,
            &r,
        )
        .unwrap();
        assert_eq!(c.encode_slice(&[1, 2, 3]).unwrap(), vec![1, 2, 3]);
        assert_eq!(c.to_defs().len(), 1);
        #[cfg(feature = "sharding")]
        assert_eq!(c.fixed_encoded_size(), Some(3));
    }

    #[test]
    fn wrong_lengths_are_errors() {
        let r = repr(DataType::UInt16, vec![3]);
        let c = chain(r#"[{"name":"bytes","configuration":{"endian":"big"}}]"#, &r).unwrap();
        assert!(matches!(
            c.encode_slice(&[0; 5]),
            Err(CodecError::BufferLength { .. })
        ));
        assert!(matches!(
            c.decode(&[0; 5]),
            Err(CodecError::SizeMismatch { .. })
        ));
        let mut out = [0u8; 5];
        assert!(matches!(
            c.decode_into(&[0; 6], &mut out),
            Err(CodecError::BufferLength { .. })
        ));
        let region = Region::new(vec![1], vec![3]).unwrap();
        let src: &[u8] = &[0; 6];
        assert!(matches!(
            c.decode_region(&src, &region, &mut [0; 6]),
            Err(CodecError::RegionOutOfBounds { .. })
        ));
    }

    #[cfg(feature = "gzip")]
    #[test]
    fn a_borrowed_chunk_encodes_as_an_owned_one() {
        // `[bytes]` in the machine's order hands the compressor the chunk itself; in the
        // other order, its swapped copy
        let r = repr(DataType::UInt16, vec![40]);
        let chunk: Vec<u8> = (0..80).map(|i| (i * 7 % 13) as u8).collect();
        for endian in ["little", "big"] {
            let c = chain(
                &format!(
                    r#"[{{"name":"bytes","configuration":{{"endian":"{endian}"}}}},{{"name":"gzip","configuration":{{"level":1}}}}]"#
                ),
                &r,
            )
            .unwrap();
            let borrowed = c.encode_slice(&chunk).unwrap();
            assert_eq!(borrowed, c.encode_owned(chunk.clone()).unwrap(), "{endian}");
            assert_eq!(
                c.decode(&borrowed).unwrap().as_bytes(),
                &chunk[..],
                "{endian}"
            );
            assert!(c.encode_slice(&chunk[1..]).is_err(), "{endian}");
        }
    }

    #[cfg(feature = "gzip")]
    #[test]
    fn region_of_a_plain_chunk() {
        let r = repr(DataType::UInt8, vec![3, 4]);
        let c = chain(
            r#"[{"name":"bytes"},{"name":"gzip","configuration":{"level":1}}]"#,
            &r,
        )
        .unwrap();
        let chunk: Vec<u8> = (0..12).collect();
        let stored = c.encode_slice(&chunk).unwrap();
        let region = Region::new(vec![1, 1], vec![2, 2]).unwrap();
        let mut out = [0u8; 4];
        assert!(c.decode_region(&stored, &region, &mut out).unwrap());
        assert_eq!(out, [5, 6, 9, 10]);
        let missing: Option<&[u8]> = None;
        assert!(!c.decode_region(&missing, &region, &mut out).unwrap());
    }
}
