//! The error type of zarr-grid.

use zarr_meta::MetaError;

use crate::geometry::GeometryError;

/// Everything that can go wrong with a chunk grid, a chunk key or the arithmetic on them.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GridError {
    /// An error from the metadata layer: an unknown or compiled-out grid or key encoding, a
    /// `must_understand` field where none is allowed, or a configuration that does not parse
    /// (unknown keys, non-integers, zero or negative chunk sizes, a bad separator).
    #[error(transparent)]
    Meta(#[from] MetaError),
    /// A list whose length disagrees with the array's rank.
    #[error("{what} has {got} dimensions but the array has {expected}")]
    DimensionMismatch {
        /// What has the wrong length (`chunk_shape`, `origin`, `position`, ...).
        what: &'static str,
        /// The array's rank.
        expected: usize,
        /// The length found.
        got: usize,
    },
    /// An axis longer than this implementation's limit: valid Zarr (shapes are u64), but
    /// positions here are signed 64-bit so that arrays can grow in front of index 0.
    #[error(
        "shape {len} on axis {axis} is beyond this implementation's limit of 2^63 - 1 \
         ({max}) positions per axis (positions are signed 64-bit, so that arrays can grow in \
         front of index 0)",
        max = i64::MAX
    )]
    ShapeTooLarge {
        /// The axis.
        axis: usize,
        /// Its length.
        len: u64,
    },
    /// A bound or chunk coordinate of the grid does not fit in i64.
    #[error(
        "{quantity} overflows i64 on axis {axis} (origin, lower_bound, shape and chunk_shape \
         lie too far apart)"
    )]
    Overflow {
        /// The axis.
        axis: usize,
        /// What overflowed (`lower_bound + shape`, `lower_bound - origin`, ...).
        quantity: &'static str,
    },
    /// A position at or past the array's length.
    #[error("position {position} is out of bounds on axis {axis} (length {len})")]
    PositionOutOfBounds {
        /// The axis.
        axis: usize,
        /// The position given.
        position: u64,
        /// The array's length on that axis.
        len: u64,
    },
    /// A region that reaches past the array's end.
    #[error("region {start}..{end} is out of bounds on axis {axis} (length {len})")]
    RegionOutOfBounds {
        /// The axis.
        axis: usize,
        /// The region's first position.
        start: u64,
        /// One past the region's last position (saturated at `u64::MAX`).
        end: u64,
        /// The array's length on that axis.
        len: u64,
    },
    /// An axis number at or past the rank.
    #[error("axis {axis} is out of range for an array of rank {rank}")]
    AxisOutOfRange {
        /// The axis given.
        axis: usize,
        /// The array's rank.
        rank: usize,
    },
    /// A store key that is not a chunk key of this encoding and rank.
    #[error("invalid chunk key {key:?} for the {encoding:?} chunk key encoding: {reason}")]
    InvalidChunkKey {
        /// The key.
        key: String,
        /// The encoding's name.
        encoding: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// An operation that only some grids support.
    #[error("cannot {operation} an array with chunk grid {name:?} (only regular and regular_bounded grids support it)")]
    UnsupportedGrid {
        /// The grid's name.
        name: String,
        /// The operation (`prepend`, ...).
        operation: &'static str,
    },
    /// The listed chunk edges of a `rectilinear` axis sum to less than its length.
    #[error("the chunk edges of axis {axis} sum to {sum}, short of its length {len}")]
    EdgesTooShort {
        /// The axis.
        axis: usize,
        /// The sum of its listed edges (saturated at `u64::MAX`).
        sum: u64,
        /// The array's length on that axis.
        len: u64,
    },
    /// A `rectilinear` axis listed with no edge at all, grown past length 0: there is no
    /// last edge length to repeat.
    #[error(
        "axis {axis} of the rectilinear grid lists no chunk edge, so it cannot grow to length \
         {len} (list an edge length for it first)"
    )]
    EmptyRectilinearAxis {
        /// The axis.
        axis: usize,
        /// The length asked for.
        len: u64,
    },
    /// Prepend on a `rectilinear` grid.
    #[error(
        "cannot prepend to an array with chunk grid \"rectilinear\": its chunks are numbered \
         from position 0, so chunks in front would rename every stored chunk of the axis; it \
         would need a lower bound in the grid (as regular_bounded has) or a rewrite of the \
         array into a new one"
    )]
    RectilinearPrepend,
    /// Region arithmetic failed.
    #[error(transparent)]
    Geometry(#[from] GeometryError),
}
