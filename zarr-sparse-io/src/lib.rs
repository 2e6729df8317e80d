//! Sparse matrices in and out of `sparse_layout` arrays, streamed in bounded memory: Matrix
//! Market (`.mtx`, `.mtx.gz`), SciPy `.npz` (CSR, CSC, COO), anndata's sparse groups and
//! binsparse groups.
//!
//! - **Import** ([`import_mtx`], [`import_npz`], [`import_group`]) reads a source's header, creates the target
//!   array through the caller's [`Create`] callback (which picks the store, the path and any
//!   codecs; the import proposes the shape, the data type, CSR chunks of whole rows sized for
//!   row reads, zstd at level 1), and streams the entries into it: sources in row-major order (CSR) straight
//!   to the [`MatrixWriter`], others through a bucket sort by bands of rows (each band's
//!   entries spilled to a temporary file past half the memory limit, then read back band by
//!   band and put in order by a counting sort of its rows: no k-way merge, and no comparisons
//!   for column-major input). The writer encodes many
//!   chunk-row bands at a time, their chunks in parallel. On any error the array is removed.
//! - **Export** ([`export_mtx`], [`export_npz`], [`export_group`]) walks the array band by band
//!   ([`for_each_band`]: whole chunk rows, as many as the limit holds), writing row-major
//!   outputs directly and column-major ones through the external sort. Files are written
//!   under a temporary name and renamed when complete.
//!
//! Every input is untrusted: headers that lie about shapes, counts or lengths, indices out
//! of range, entries given twice, pointers that decrease, truncated files give a
//! [`SparseIoError`] naming the place, never a panic, and no allocation is sized by a header.
//!
//! ```
//! use std::sync::Arc;
//! use zarr_array::zarr_store::MemoryStore;
//! use zarr_sparse_io::{import_mtx, export_mtx, ImportOptions, ExportOptions};
//!
//! let dir = tempfile::tempdir()?;
//! let mtx = dir.path().join("m.mtx");
//! std::fs::write(&mtx, "%%MatrixMarket matrix coordinate real general\n3 4 2\n3 1 2.5\n1 4 -1\n")?;
//! let store = Arc::new(MemoryStore::new());
//! let a = import_mtx(&mtx, &ImportOptions::default(), &mut |p| Ok(p.builder().create(store.clone(), "m")?))?;
//! assert_eq!(a.shape(), &[3, 4]);
//! assert_eq!(a.read_all::<f64>()?[[2, 0]], 2.5);
//! let back = dir.path().join("back.mtx");
//! export_mtx(&a, &back, &ExportOptions::default())?;
//! assert!(std::fs::read_to_string(&back)?.contains("3 4 2\n1 4 -1e0\n3 1 2.5e0\n"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod core;
mod error;
mod group;
mod gz;
mod mtx;
mod npz;
mod sort;
mod value;

pub use crate::core::{
    default_chunks, for_each_band, Create, CreateError, ExportOptions, ImportOptions, MatrixWriter,
    Progress, Proposed, DEFAULT_MAX_MEMORY, IMPORT_ZSTD_LEVEL, MIN_MAX_MEMORY,
};
pub use error::{Result, SparseIoError};
pub use group::{export_group, import_group, GroupKind};
pub use mtx::{export_mtx, import_mtx};
pub use npz::{export_npz, import_npz, Layout};
pub use sort::{Entry, Sorted, Sorter};
pub use value::IoValue;

#[cfg(test)]
mod tests;
