//! The buffers codecs decode into: zarr-buffer's [`AlignedBuffer`] (8-byte aligned, so typed and
//! sparse views of a decoded chunk are casts), the one such type of the workspace.

pub use zarr_buffer::{is_aligned, AlignedBuffer};
