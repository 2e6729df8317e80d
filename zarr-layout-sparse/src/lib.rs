#![doc = include_str!("../README.md")]
// Every `unsafe` block and every cast between bytes and typed values is in the `cast` module.
#![deny(unsafe_code)]

/// Runs `$body` with the type alias `$I` set to the Rust type of an [`IndexType`](crate::IndexType).
#[macro_export]
macro_rules! with_index {
    ($t:expr, $I:ident => $body:expr) => {
        match $t {
            $crate::IndexType::U16 => {
                type $I = u16;
                $body
            }
            $crate::IndexType::U32 => {
                type $I = u32;
                $body
            }
            $crate::IndexType::U64 => {
                type $I = u64;
                $body
            }
        }
    };
}

/// Runs `$body` with the type alias `$P` set to the Rust type of a [`PointerType`](crate::PointerType).
#[macro_export]
macro_rules! with_pointer {
    ($t:expr, $P:ident => $body:expr) => {
        match $t {
            $crate::PointerType::U32 => {
                type $P = u32;
                $body
            }
            $crate::PointerType::U64 => {
                type $P = u64;
                $body
            }
        }
    };
}

#[cfg(target_endian = "big")]
compile_error!(
    "zarr-layout-sparse needs a little-endian target: its views are in-place casts of \
     little-endian chunk bytes"
);

mod cast;
mod decode;
mod encode;
mod error;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod header;
mod types;
mod value;

pub use decode::{decode, ByteEntries, CooView, Coords, Entries, SparseChunk};
pub use encode::{
    encode_dense, encode_dense_bytes, encode_positions, encode_sprs, encode_triples,
    encode_triples_summed,
};
pub use error::SparseError;
pub use header::{
    encoded_len, encoded_size_bound, Header, Section, HEADER_LEN, MAGIC, SECTION_ENTRY_LEN, VERSION,
};
pub use types::{
    element_count, Format, IndexType, Layout, PointerType, SparseIndex, SparsePointer,
};
pub use value::{ElementKind, FloatKind, SparseSum, SparseValue};
/// The 8-byte-aligned buffer to decode chunks into (zarr-buffer's), so every section of an
/// encoded chunk held in it can be cast in place.
pub use zarr_buffer::AlignedBuffer;

/// Re-exported so that callers name the same `sprs` and `ndarray` versions as the views.
pub use ndarray;
pub use sprs;
