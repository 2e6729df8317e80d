#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod aligned;
mod fill;
mod piece;
mod range;

pub use aligned::{is_aligned, AlignedBuffer};
pub use fill::fill_pattern;
pub use piece::Piece;
pub use range::ByteRange;
