#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod error;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod geometry;
pub mod grid;
pub mod key_encoding;
#[cfg(feature = "rectilinear")]
pub mod rectilinear;
pub mod regular;
#[cfg(feature = "regular-bounded")]
pub mod regular_bounded;
pub mod resize;

pub use error::GridError;
pub use grid::{
    build_grid, default_registry, register_defaults, ChunkGrid, ChunkGridFactory, ChunkIndices,
    ChunkPart, ChunksInRegion,
};
pub use key_encoding::{
    build_key_encoding, default_key_encoding_registry, register_key_encodings, ChunkKeyEncoding,
    ChunkKeyEncodingFactory, Separator,
};
#[cfg(feature = "rectilinear")]
pub use rectilinear::{RectilinearChunkGrid, RectilinearConfig};
pub use regular::{RegularChunkGrid, RegularConfig};
#[cfg(feature = "regular-bounded")]
pub use regular_bounded::{prepend, RegularBoundedChunkGrid, RegularBoundedConfig};
pub use resize::{append, chunks_outside, resize, ChunkSet, Resize};
