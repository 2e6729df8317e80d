//! The error type of zarr-codecs.

use zarr_meta::MetaError;

use crate::source::SourceError;

/// Everything that can go wrong building a codec chain or encoding and decoding a chunk.
///
/// Decoding treats its input as untrusted: corrupt, truncated or oversized data gives one of
/// these errors, never a panic and never an allocation past the chain's stated bound.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CodecError {
    /// A codec definition that cannot be resolved or configured: unknown name, compiled-out
    /// feature, invalid configuration, or a configuration that does not fit the chunk.
    #[error(transparent)]
    Metadata(#[from] MetaError),

    /// The codec list is not a valid chain (array->array*, array->bytes, bytes->bytes*).
    #[error("invalid codec chain: {reason}")]
    InvalidChain {
        /// What is wrong with the order or the number of codecs.
        reason: String,
    },

    /// A codec that takes fixed-size elements given a data type whose elements have no fixed
    /// size (`string`, `variable_length_bytes`).
    #[error("codec {codec:?} takes fixed-size elements, not the variable-size elements of data type {data_type} (string arrays need the codec \"vlen-utf8\", variable_length_bytes arrays \"vlen-bytes\")")]
    VariableSizeElements {
        /// The codec.
        codec: String,
        /// The data type.
        data_type: String,
    },

    /// A chunk whose size does not fit in memory.
    #[error("a chunk of shape {shape:?} and {element_size}-byte elements is too large")]
    ChunkTooLarge {
        /// The chunk shape.
        shape: Vec<u64>,
        /// The element size in bytes.
        element_size: usize,
    },

    /// A buffer handed in by the caller has the wrong length.
    #[error("{what} has {got} bytes, expected {expected}")]
    BufferLength {
        /// Which buffer.
        what: &'static str,
        /// The length needed.
        expected: u64,
        /// The length given.
        got: u64,
    },

    /// A codec decoded to a size other than the one the chunk needs.
    #[error("{codec} decoded to {got} bytes, expected {expected}")]
    SizeMismatch {
        /// The codec's name.
        codec: &'static str,
        /// The size the chunk needs.
        expected: u64,
        /// The size decoded.
        got: u64,
    },

    /// Decoding would produce more than the bound the chain allows, so it was stopped.
    #[error("{codec} data expands past the bound of {limit} bytes")]
    ExceedsBound {
        /// The codec's name.
        codec: &'static str,
        /// The bound.
        limit: u64,
    },

    /// Encoded data too short to hold what its format needs.
    #[error("{codec} data is truncated: {got} bytes, at least {needed} needed")]
    Truncated {
        /// The codec's name.
        codec: &'static str,
        /// The bytes needed.
        needed: u64,
        /// The bytes present.
        got: u64,
    },

    /// Encoded data that its codec refuses (bad header, bad stream, trailing bytes).
    #[error("{codec} data is corrupt: {reason}")]
    Corrupt {
        /// The codec's name.
        codec: &'static str,
        /// What the decoder found.
        reason: String,
    },

    /// A decompression library's error (a corrupt or truncated stream), kept as the source.
    #[error("{codec} decompression failed")]
    Decompress {
        /// The codec's name.
        codec: &'static str,
        /// The library's error (an `std::io::Error` for the streaming decompressors; downcast
        /// it to look closer).
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },

    /// Input or options the codec cannot compress (too large for its format, an option that
    /// only decodes).
    #[error("{codec} cannot compress this: {reason}")]
    Compress {
        /// The codec's name.
        codec: &'static str,
        /// Why.
        reason: String,
    },

    /// A compression library's error, kept as the source.
    #[error("{codec} compression failed")]
    Compressor {
        /// The codec's name.
        codec: &'static str,
        /// The library's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },

    /// A stored checksum (`crc32c`, or numcodecs' `crc32`, `adler32`, `fletcher32`) does not
    /// match the data.
    #[error("{codec} checksum mismatch: stored {stored:#010x}, computed {computed:#010x}")]
    ChecksumMismatch {
        /// The codec's name.
        codec: &'static str,
        /// The checksum stored after the data.
        stored: u32,
        /// The checksum of the data.
        computed: u32,
    },

    /// A shard index entry that points outside the shard or past the inner chunk's bound.
    #[error(
        "shard index entry of inner chunk {chunk:?} (offset {offset}, nbytes {nbytes}) is invalid: {reason}"
    )]
    InvalidShardIndex {
        /// The inner chunk's position in the shard's grid.
        chunk: Vec<u64>,
        /// The stored offset.
        offset: u64,
        /// The stored length.
        nbytes: u64,
        /// What is wrong with it.
        reason: &'static str,
    },

    /// An inner chunk of a shard failed to decode.
    #[error("inner chunk {chunk:?} of the shard")]
    InnerChunk {
        /// The inner chunk's position in the shard's grid.
        chunk: Vec<u64>,
        /// Why.
        #[source]
        source: Box<CodecError>,
    },

    /// A requested region that does not lie inside the chunk.
    #[error("region starting at {start:?} with shape {shape:?} does not lie inside the chunk of shape {chunk_shape:?}")]
    RegionOutOfBounds {
        /// The region's start.
        start: Vec<u64>,
        /// The region's shape.
        shape: Vec<u64>,
        /// The chunk's shape.
        chunk_shape: Vec<u64>,
    },

    /// The byte-range source failed.
    #[error("reading the chunk failed")]
    Source {
        /// The source's error.
        #[source]
        source: SourceError,
    },

    /// The byte-range source answered a range with the wrong number of bytes.
    #[error("the byte-range source returned {got} bytes for a range of {expected}")]
    ShortRead {
        /// The length asked for.
        expected: u64,
        /// The length returned.
        got: u64,
    },

    /// A `sparse_layout` chunk that cannot be encoded or decoded: corrupt or foreign bytes
    /// (checked before any use), or input that does not fit the layout.
    #[cfg(feature = "sparse")]
    #[error("sparse_layout")]
    Sparse {
        /// What the sparse layout found.
        #[from]
        source: zarr_layout_sparse::SparseError,
    },

    /// An operation that the chain cannot perform (for example a sparse view through an
    /// array -> array codec).
    #[error("{operation} is not available: {reason}")]
    NotApplicable {
        /// The operation asked for.
        operation: &'static str,
        /// Why not.
        reason: String,
    },

    /// A leaf chunk index outside the chunk's grid of leaves
    /// ([`crate::CodecChain::rewrite_leaves`]).
    #[error("leaf chunk {leaf:?} lies outside the grid of leaves {grid:?}")]
    LeafOutOfGrid {
        /// The leaf grid index given.
        leaf: Vec<u64>,
        /// The number of leaves along each axis.
        grid: Vec<u64>,
    },

    /// A block of a larger buffer that does not fit what it is used for (a chunk decoded into
    /// a block of another shape, a split whose blocks overlap).
    #[error(transparent)]
    Block(#[from] crate::block::BlockError),

    /// A codec of a Zarr v3 chain that a Zarr v2 `.zarray` cannot express
    /// ([`crate::v2::v2_codecs`]).
    #[error("codec {codec:?} has no Zarr v2 form: {reason}")]
    NoV2Form {
        /// The codec's v3 name.
        codec: String,
        /// Why v2 cannot hold it.
        reason: String,
    },

    /// A Zarr v2 filter whose `dtype` (or `decode_dtype`) has the other byte order than the
    /// values it receives: numcodecs views the bytes as that type, reinterpreting every value
    /// (`[1, 2]` as `>i4` viewed as `<i4` is `[16777216, 33554432]`), which a codec chain,
    /// computing on values, cannot express ([`crate::v2::v3_codecs`]).
    #[error("v2 filter {filter:?} views the {received}-endian values it receives as {field} {dtype:?}, reinterpreting their bytes (numcodecs' view), which a codec chain cannot express")]
    V2ByteReinterpretation {
        /// The filter's numcodecs `id`.
        filter: String,
        /// The field of its configuration (`dtype`, `decode_dtype`).
        field: &'static str,
        /// The data type it names.
        dtype: String,
        /// The byte order of the values the filter receives: `"big"` or `"little"`.
        received: &'static str,
    },

    /// The byte-range source answered with the wrong number of ranges.
    #[error("the byte-range source returned {got} ranges for {expected} requested")]
    SourceRanges {
        /// The number of ranges asked for.
        expected: usize,
        /// The number returned.
        got: usize,
    },
}

/// Shorthand for results in this crate.
pub type Result<T, E = CodecError> = std::result::Result<T, E>;

impl From<SourceError> for CodecError {
    fn from(source: SourceError) -> Self {
        CodecError::Source { source }
    }
}

impl CodecError {
    /// [`CodecError::Corrupt`]: the stored bytes of `codec` are not a valid encoding.
    pub fn corrupt(codec: &'static str, reason: impl Into<String>) -> Self {
        CodecError::Corrupt {
            codec,
            reason: reason.into(),
        }
    }
}
