#![doc = include_str!("../README.md")]
#![warn(missing_docs)]
// `unsafe` stands in two modules only: `block` (disjoint writes into one output buffer) and
// `blosc` (the C library's calls). Every other module is refused it.
#![deny(unsafe_code)]

#[allow(unsafe_code)]
mod block;
mod buffer;
mod chain;
mod codec;
mod config;
mod error;
mod leaf;
mod registry;
mod repr;
mod scratch;
mod source;

#[cfg(feature = "blosc")]
#[allow(unsafe_code)]
pub mod blosc;
pub mod bytes;
pub mod byteshuffle;
#[cfg(feature = "crc32c")]
pub mod crc32c;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
#[cfg(feature = "gzip")]
pub mod gzip;
pub mod numcodecs;
pub mod parallel;
#[cfg(feature = "sharding")]
pub mod sharding;
#[cfg(feature = "sparse")]
pub mod sparse_layout;
pub mod stream;
pub mod transpose;
pub mod v2;
#[cfg(feature = "vlen")]
pub mod vlen;
#[cfg(feature = "zstd")]
pub mod zstd;

pub use block::{
    AxisSet, Block, BlockBuffer, BlockError, ChunkUpdate, SourceBlock, VLEN_DATA_INDEX,
    VLEN_FILL_INDEX,
};
pub use buffer::AlignedBuffer;
pub use chain::{ChunkIn, ChunkOut, CodecChain, EmptyChunks, EncodeOptions, PartialDecoder};
pub use codec::{
    ArrayToArrayCodec, ArrayToBytesCodec, BytesToBytesCodec, Codec, Decoded, InnerChunks,
    PartialEncoder,
};
pub use error::{CodecError, Result};
pub use registry::{default_registry, register_defaults, CodecFactory, CodecRegistry};
pub use repr::ChunkRepr;
pub use source::{ByteRange, ByteRangeSource, SourceError};
pub use zarr_buffer::Piece;

/// The sparse layouts the `sparse_layout` codec stores, re-exported so that callers name the
/// same version.
#[cfg(feature = "sparse")]
pub use zarr_layout_sparse;
