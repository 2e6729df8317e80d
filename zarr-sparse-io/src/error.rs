//! The errors of imports and exports: each names the place (a file and line, an `.npy`
//! member of a `.npz`, an array of a group) where the input went wrong.

use thiserror::Error;
use zarr_array::ArrayError;

/// What can go wrong moving a sparse matrix in or out.
#[derive(Debug, Error)]
pub enum SparseIoError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
    /// The input does not follow its format (a truncated file, a bad header, a value that
    /// does not parse, lengths that disagree, pointers that decrease).
    #[error("{place}: {reason}")]
    Malformed {
        /// Where: `matrix.mtx line 12`, `m.npz: indptr.npy`, `adata.zarr/X/indices`.
        place: String,
        /// What is wrong.
        reason: String,
    },
    /// An entry lies outside the matrix's shape.
    #[error("{place}: entry ({row}, {col}) lies outside the {rows}x{cols} matrix")]
    OutOfRange {
        /// Where the entry was read.
        place: String,
        /// Its zero-based row.
        row: u64,
        /// Its zero-based column.
        col: u64,
        /// The matrix's rows.
        rows: u64,
        /// The matrix's columns.
        cols: u64,
    },
    /// The same position is given twice.
    #[error("{place}: entry ({row}, {col}) is given twice")]
    Duplicate {
        /// Where the second one was read.
        place: String,
        /// Its zero-based row.
        row: u64,
        /// Its zero-based column.
        col: u64,
    },
    /// Entries of a sorted layout (CSR or CSC) out of order.
    #[error(
        "{place}: entry ({row}, {col}) comes after ({prev_row}, {prev_col}) but sorts before it"
    )]
    Unsorted {
        /// Where the entry was read.
        place: String,
        /// Its zero-based row.
        row: u64,
        /// Its zero-based column.
        col: u64,
        /// The row of the entry before it.
        prev_row: u64,
        /// The column of the entry before it.
        prev_col: u64,
    },
    /// A format, layout, data type or option this crate does not handle.
    #[error("{place}: {what} is not supported")]
    Unsupported {
        /// Where it was met.
        place: String,
        /// What.
        what: String,
    },
    /// Not even the smallest working set fits in the memory limit.
    #[error("{what} needs {needed} bytes, more than the memory limit of {budget} bytes")]
    OverBudget {
        /// What needed the memory.
        what: String,
        /// The bytes it needs.
        needed: u64,
        /// The limit.
        budget: u64,
    },
    /// The import's target array could not be created.
    #[error("{place}: creating the array: {source}")]
    Create {
        /// The source being imported.
        place: String,
        /// The creator's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The array or group side failed.
    #[error("{context}: {source}")]
    Array {
        /// What was being done, and where.
        context: String,
        /// The error.
        #[source]
        source: Box<ArrayError>,
    },
}

/// The result of this crate.
pub type Result<T, E = SparseIoError> = std::result::Result<T, E>;

/// A malformed-input error at `place`.
pub(crate) fn malformed(place: impl Into<String>, reason: impl Into<String>) -> SparseIoError {
    SparseIoError::Malformed {
        place: place.into(),
        reason: reason.into(),
    }
}

/// Maps an I/O error on `path`; the message is only made when there is an error (this sits
/// on per-entry writes).
pub(crate) fn io<P: std::fmt::Display>(path: P) -> impl FnOnce(std::io::Error) -> SparseIoError {
    move |source| SparseIoError::Io {
        path: path.to_string(),
        source,
    }
}

/// Maps an array error with its context.
pub(crate) fn array(context: impl Into<String>) -> impl FnOnce(ArrayError) -> SparseIoError {
    let context = context.into();
    move |source| SparseIoError::Array {
        context,
        source: Box::new(source),
    }
}
