#![doc = include_str!("../README.md")]

#[cfg(target_endian = "big")]
compile_error!(
    "zarr-layout-sparse needs a little-endian target: its views are in-place casts of \
     little-endian chunk bytes"
);

mod aligned;
mod decode;
mod encode;
mod error;
mod header;
mod types;
mod value;

pub use aligned::AlignedBuf;
pub use decode::{decode, ByteEntries, CooView, Coords, Entries, SparseChunk};
pub use encode::{
    encode_dense, encode_dense_bytes, encode_sprs, encode_triples, encode_triples_summed,
};
pub use error::SparseError;
pub use header::{
    encoded_len, encoded_size_bound, Header, Section, HEADER_LEN, MAGIC, SECTION_ENTRY_LEN, VERSION,
};
pub use types::{
    element_count, Format, IndexType, Layout, PointerType, SparseIndex, SparsePointer,
};
pub use value::{ElementKind, FloatKind, SparseSum, SparseValue};

/// Re-exported so that callers name the same `sprs` and `ndarray` versions as the views.
pub use ndarray;
pub use sprs;
