//! The error type of zarr-array.

use zarr_codecs::CodecError;
use zarr_grid::GridError;
use zarr_meta::{DataType, MetaError};
use zarr_store::StoreError;

/// Everything that can go wrong opening, reading or writing arrays and groups.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ArrayError {
    /// Malformed metadata or an unknown extension.
    #[error("{path}: {source}")]
    Metadata {
        /// The node's path.
        path: String,
        /// What is wrong.
        #[source]
        source: MetaError,
    },
    /// A grid or key problem.
    #[error(transparent)]
    Grid(#[from] GridError),
    /// A codec problem (configuration, or a corrupt chunk).
    #[error("{context}: {source}")]
    Codec {
        /// The chunk key or array path.
        context: String,
        /// What is wrong.
        #[source]
        source: CodecError,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// No node at this path.
    #[error("no array or group at {path:?}")]
    NotFound {
        /// The path.
        path: String,
    },
    /// A node of the other kind at this path.
    #[error("{path:?} is a {found}, not a {expected}")]
    WrongNodeType {
        /// The path.
        path: String,
        /// What was asked for.
        expected: &'static str,
        /// What is there.
        found: &'static str,
    },
    /// A node already exists where one is being created.
    #[error("a node already exists at {path:?} (open it, or delete it first)")]
    AlreadyExists {
        /// The path.
        path: String,
    },
    /// A path that is not a valid node path.
    #[error("invalid node path {path:?}: {reason}")]
    InvalidPath {
        /// The path.
        path: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// The Rust element type does not match the array's data type.
    #[error("the array holds {expected}, not {got} (read it as {expected})")]
    DataTypeMismatch {
        /// The array's data type.
        expected: DataType,
        /// The Rust type's name.
        got: &'static str,
    },
    /// Data of the wrong shape for a write, append or prepend.
    #[error("data has shape {got:?} but {expected:?} is needed")]
    ShapeMismatch {
        /// The shape required.
        expected: Vec<u64>,
        /// The shape given.
        got: Vec<u64>,
    },
    /// A selection that does not fit the array.
    #[error("invalid selection: {reason}")]
    InvalidSelection {
        /// What is wrong.
        reason: String,
    },
    /// An index outside an axis.
    #[error("index {index} is out of bounds for axis {axis} of length {len}")]
    OutOfBounds {
        /// The axis.
        axis: usize,
        /// The index given.
        index: i64,
        /// The axis length.
        len: u64,
    },
    /// An axis number outside the array's rank.
    #[error("axis {axis} is out of range for an array of rank {rank}")]
    InvalidAxis {
        /// The axis given.
        axis: usize,
        /// The array's rank.
        rank: usize,
    },
    /// A buffer too large for memory.
    #[error("{what} of shape {shape:?} is too large to hold in memory")]
    TooLarge {
        /// What was to be allocated.
        what: &'static str,
        /// Its shape.
        shape: Vec<u64>,
    },
    /// An invalid argument to a builder or operation.
    #[error("invalid {what}: {reason}")]
    InvalidArgument {
        /// Which argument.
        what: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// A sparse chunk or sparse data that does not fit (a view of another index type, triples
    /// outside a chunk).
    #[error("{context}: {source}")]
    Sparse {
        /// The chunk key or what was being done.
        context: String,
        /// What is wrong.
        #[source]
        source: zarr_layout_sparse::SparseError,
    },
    /// Sparse access ([`Array::sparse`](crate::Array::sparse)) to an array whose chunks are
    /// not stored with `sparse_layout`.
    #[error(
        "{path} does not store sparse chunks (codecs {codecs:?}): sparse access needs \
         sparse_layout as the array -> bytes codec, directly or inside sharding_indexed, \
         without array -> array codecs"
    )]
    NotSparse {
        /// The array's path.
        path: String,
        /// The names of its codecs, outermost first.
        codecs: Vec<String>,
    },
    /// An operation this array does not support.
    #[error("unsupported: {reason}")]
    Unsupported {
        /// Why.
        reason: String,
    },
}

/// Shorthand for results of this crate.
pub type Result<T, E = ArrayError> = std::result::Result<T, E>;

impl From<zarr_layout_sparse::SparseError> for ArrayError {
    fn from(source: zarr_layout_sparse::SparseError) -> Self {
        ArrayError::Sparse {
            context: "sparse data".into(),
            source,
        }
    }
}

impl From<zarr_grid::geometry::GeometryError> for ArrayError {
    fn from(e: zarr_grid::geometry::GeometryError) -> Self {
        ArrayError::InvalidSelection {
            reason: e.to_string(),
        }
    }
}
