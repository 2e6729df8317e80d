//! The error type of zarr-array.

use zarr_codecs::CodecError;
use zarr_grid::geometry::GeometryError;
use zarr_grid::GridError;
use zarr_meta::{DataType, ExtensionPoint, MetaError};

use crate::element::InvalidValue;
use zarr_store::StoreError;

/// Everything that can go wrong opening, reading or writing arrays and groups.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ArrayError {
    /// Malformed metadata or an unknown extension.
    #[error("{path}")]
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
    #[error("{context}")]
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
    /// A compare-and-swap update of a stored value (metadata, or a chunk two writers share)
    /// met another writer's change on every one of its attempts, and gave up; nothing of it
    /// was written.
    #[error("gave up updating {key:?}: other writers changed it first {attempts} times in a row")]
    Contended {
        /// The store key.
        key: String,
        /// How many times it was read, recomputed and written.
        attempts: u32,
    },
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
    /// A node is being created where keys are stored but no node's metadata: leftover chunks
    /// would show through the new array (even reinterpreted under another data type).
    #[error("{path:?} holds keys but no node metadata (such as {key:?}, left over from an earlier array?): delete them, or create with overwrite to clear the location")]
    NotEmpty {
        /// The node path.
        path: String,
        /// One key (or key prefix) found there.
        key: String,
    },
    /// An attribute the operation would write is already one of the user's.
    #[error("the array at {path:?} already has a user attribute {name:?}, where the regular copy keeps the original domain and grid: rename it first (its value is left as it is)")]
    AttributeInUse {
        /// The node path.
        path: String,
        /// The attribute.
        name: &'static str,
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
    #[error(
        "the array holds {expected}, not {got} (read it as {})",
        read_as(expected)
    )]
    DataTypeMismatch {
        /// The array's data type.
        expected: DataType,
        /// The Rust type's name.
        got: &'static str,
    },
    /// A byte-buffer or [`Element`](crate::Element) operation on an array whose elements have
    /// no fixed size.
    #[error("the array holds {data_type}, whose elements have no fixed size (read and write it with read_region_vlen and write_region_vlen)")]
    VariableSizeElements {
        /// The array's data type.
        data_type: DataType,
    },
    /// Data of the wrong shape for a write, append or prepend.
    #[error("data has shape {got:?} but {expected:?} is needed")]
    ShapeMismatch {
        /// The shape required.
        expected: Vec<u64>,
        /// The shape given.
        got: Vec<u64>,
    },
    /// A copy into an array of another data type ([`crate::Array::copy_to`]).
    #[error("the copy holds {dst}, not {src} as the array copied does")]
    CopyDataType {
        /// The data type of the array copied.
        src: DataType,
        /// The data type of the copy.
        dst: DataType,
    },
    /// A selection that does not fit the array.
    #[error("invalid selection")]
    InvalidSelection(#[from] SelectionError),
    /// A region that does not fit the array or the data (another rank, outside the array).
    #[error(transparent)]
    Region(#[from] GeometryError),
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
    /// An allocation the system could not give (not enough memory, or a limited address
    /// space): the operation fails instead of aborting the process.
    #[error("cannot allocate {bytes} bytes for {what}")]
    OutOfMemory {
        /// What the memory was for.
        what: &'static str,
        /// Bytes asked for.
        bytes: u64,
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
    #[error("{context}")]
    Sparse {
        /// The chunk key or what was being done.
        context: String,
        /// What is wrong.
        #[source]
        source: zarr_layout_sparse::SparseError,
    },
    /// An operation that needs an extension these [`Extensions`](crate::Extensions) lack
    /// (`prepend` without the `regular_bounded` chunk grid).
    #[error("{operation} needs the {point} {name:?}, which these extensions lack")]
    ExtensionMissing {
        /// The operation.
        operation: &'static str,
        /// The kind of extension.
        point: ExtensionPoint,
        /// Its name.
        name: &'static str,
    },
    /// An operation that needs every chunk to have one shape, on an array whose chunks differ
    /// (a `rectilinear` grid with a listed axis).
    #[error(
        "{operation} needs chunks of one shape, but the chunks of {path} differ (chunk grid \
         {grid:?})"
    )]
    ChunksDiffer {
        /// The operation.
        operation: &'static str,
        /// The array.
        path: String,
        /// Its chunk grid's name.
        grid: String,
    },
    /// A builder option whose codec this build leaves out (zarr-array's cargo features).
    #[error("{what} needs zarr-array's cargo feature {feature:?}, which this build leaves out")]
    CompiledOut {
        /// What was asked for.
        what: &'static str,
        /// The cargo feature.
        feature: &'static str,
    },
    /// An operation that needs arrays of another rank (a sparse matrix needs 2 dimensions).
    #[error("{operation} needs {expected} dimensions, {path} has {got}")]
    RankMismatch {
        /// The operation.
        operation: &'static str,
        /// The array (or region) it was asked of.
        path: String,
        /// The rank it needs.
        expected: usize,
        /// The rank it was given.
        got: usize,
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
    /// A sparse computation that needs a zero fill value (`spmv`).
    #[error("{operation} needs a zero fill value, {path} has {fill}")]
    NonZeroFill {
        /// The operation.
        operation: &'static str,
        /// The array.
        path: String,
        /// Its fill value.
        fill: String,
    },
    /// Entries that do not make a valid `sprs` sparse matrix.
    #[error("the entries do not make a valid sparse matrix")]
    SparseStructure {
        /// sprs's error.
        #[source]
        source: zarr_layout_sparse::sprs::errors::StructureError,
    },
    /// A stored element that is not a valid value of the element type read.
    #[error(transparent)]
    InvalidValue(#[from] InvalidValue),
    /// Elements that do not make an `ndarray` of the shape asked (the shape does not fit
    /// `usize` on this platform).
    #[error("cannot hold elements as an array of shape {shape:?}")]
    NdarrayShape {
        /// The shape.
        shape: Vec<u64>,
        /// ndarray's error.
        #[source]
        source: ndarray::ShapeError,
    },
    /// A group opened with [`UseConsolidated::Require`](crate::UseConsolidated::Require)
    /// holds no consolidated metadata.
    #[error("the group at {path:?} holds no consolidated metadata (write it with `zarr consolidate`, or open without requiring it)")]
    NoConsolidatedMetadata {
        /// The group's path.
        path: String,
    },
    /// An operation that a Zarr v2 array cannot do: convert it to v3 first.
    #[error(
        "{operation} is not possible on the Zarr v2 array {path:?} ({reason}): convert it to \
         Zarr v3 first (Array::to_v3, or `zarr convert --to-v3`)"
    )]
    NeedsV3 {
        /// The operation.
        operation: &'static str,
        /// The array's path.
        path: String,
        /// Why v2 cannot.
        reason: &'static str,
    },
    /// A feature of a Zarr v3 array (or of an array being created as v2) that Zarr v2 cannot
    /// express; codecs v2 cannot express are [`ArrayError::Codec`] with
    /// `CodecError::NoV2Form`.
    #[error("{path:?} cannot be written as Zarr v2: {feature} ({reason})")]
    NoV2Form {
        /// The array's path.
        path: String,
        /// The feature.
        feature: String,
        /// Why v2 cannot hold it.
        reason: String,
    },
    /// An operation this array does not support, for a reason no other variant names.
    #[error("{operation} is not supported: {reason}")]
    Unsupported {
        /// The operation.
        operation: &'static str,
        /// Why.
        reason: String,
    },
}

/// What to read an array of `t` as, for [`ArrayError::DataTypeMismatch`]: `i64` for datetimes
/// and timedeltas (see [`Element`](crate::Element)), else the data type itself.
fn read_as(t: &DataType) -> String {
    match t {
        DataType::DateTime64(_) | DataType::TimeDelta64(_) => "i64".into(),
        DataType::String => "String, with read_region_vlen".into(),
        DataType::Bytes => "Vec<u8>, with read_region_vlen".into(),
        other => other.to_string(),
    }
}

/// Why a selection does not fit the array it selects from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SelectionError {
    /// More axes (basic and orthogonal selections) or coordinates (points) than the array has.
    #[error("the {kind} has {got} axes but the array has {rank}")]
    Rank {
        /// `"selection"`, `"orthogonal selection"` or `"point"`.
        kind: &'static str,
        /// The axes given.
        got: usize,
        /// The array's rank.
        rank: usize,
    },
    /// More than one `...`.
    #[error("a selection takes at most one ellipsis, this one has {count}")]
    Ellipses {
        /// The ellipses given.
        count: usize,
    },
    /// A slice step of zero or below.
    #[error("slice step {step} on axis {axis}: only positive steps are supported")]
    Step {
        /// The axis.
        axis: usize,
        /// The step given.
        step: i64,
    },
    /// A boolean mask of another length than its axis.
    #[error("boolean mask of length {got} on axis {axis} of length {len}")]
    MaskLength {
        /// The axis.
        axis: usize,
        /// The mask's length.
        got: usize,
        /// The axis length.
        len: u64,
    },
    /// A coordinate or mask selection of an array without axes.
    #[error("a {kind} needs an array of at least one axis, this one has none")]
    NoAxes {
        /// `"coordinate selection"` or `"mask selection"`.
        kind: &'static str,
    },
    /// Index arrays of a coordinate selection whose shapes do not broadcast together.
    #[error("index arrays of shapes {shapes:?} do not broadcast together")]
    Broadcast {
        /// The shapes of the index arrays.
        shapes: Vec<Vec<usize>>,
    },
    /// A boolean mask of another shape than the array.
    #[error("boolean mask of shape {got:?} for an array of shape {shape:?}")]
    MaskShape {
        /// The mask's shape.
        got: Vec<usize>,
        /// The array's shape.
        shape: Vec<u64>,
    },
    /// A block of a block selection outside its axis: an index, the first block of a range
    /// (zarr-python's `blocks` refuses a range that starts past the last block or before the
    /// first, a negative start counting from the end once), or block 0 of a full axis that has
    /// no elements.
    #[error("block {index} is out of bounds for axis {axis}, which has {blocks} blocks")]
    BlockOutOfBounds {
        /// The axis.
        axis: usize,
        /// The block index given (0 for a full axis).
        index: i64,
        /// The blocks (chunks of the grid) along the axis.
        blocks: u64,
    },
    /// A chunk position outside the grid (a block selection, or a chunk index asked of
    /// [`Array::read_chunk`](crate::Array::read_chunk) and the like).
    #[error("chunk {chunk:?} lies outside the grid")]
    ChunkOutsideGrid {
        /// The chunk's grid position.
        chunk: Vec<i64>,
    },
}

/// `n` zeroed values in a vector allocated fallibly: an output buffer of a read, whose size the
/// caller computed (and checked against the address space) from the request. The memory comes
/// zeroed from the allocator (fresh pages for large sizes), so nothing writes it twice.
///
/// # Errors
/// [`ArrayError::OutOfMemory`] naming `what` and the bytes.
pub(crate) fn try_zeroed<T: bytemuck::Zeroable>(n: usize, what: &'static str) -> Result<Vec<T>> {
    bytemuck::allocation::try_zeroed_slice_box(n)
        .map(Vec::from)
        .map_err(|()| ArrayError::OutOfMemory {
            what,
            bytes: (n as u64).saturating_mul(size_of::<T>() as u64),
        })
}

/// The items of `iter` in a vector grown fallibly: a list whose length the request decides
/// (the chunks a region meets), which must fail with an error, not abort the process, when
/// it does not fit in memory.
///
/// # Errors
/// [`ArrayError::OutOfMemory`] naming `what` and the bytes.
pub(crate) fn try_collect<T>(iter: impl Iterator<Item = T>, what: &'static str) -> Result<Vec<T>> {
    let too_many = |n: usize| ArrayError::OutOfMemory {
        what,
        bytes: (n as u64).saturating_mul(size_of::<T>() as u64),
    };
    let mut v = Vec::new();
    v.try_reserve_exact(iter.size_hint().0)
        .map_err(|_| too_many(iter.size_hint().0))?;
    for item in iter {
        if v.len() == v.capacity() {
            v.try_reserve(1).map_err(|_| too_many(v.len() + 1))?;
        }
        v.push(item);
    }
    Ok(v)
}

/// An error and its causes as one message: the `Display` of `error` and of each error of its
/// [`source`](std::error::Error::source) chain, joined with `": "`.
///
/// The errors of this workspace print their own context only and leave their cause to
/// `source()`, so the report shows each cause once. A cause whose text the message already
/// ends with (an error of another library that prints its source too) is not repeated.
///
/// ```
/// use zarr_array::{report, ArrayError};
/// use zarr_array::zarr_meta::MetaError;
///
/// let e = ArrayError::Metadata { path: "temps".into(), source: MetaError::NotAnObject };
/// assert_eq!(e.to_string(), "temps");
/// assert_eq!(report(&e), "temps: metadata must be a JSON object");
/// ```
#[must_use]
pub fn report(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut cause = error.source();
    while let Some(e) = cause {
        let text = e.to_string();
        if !message.ends_with(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        cause = e.source();
    }
    message
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
