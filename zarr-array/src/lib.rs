#![doc = include_str!("../README.md")]
// No unsafe code: parallel reads write disjoint blocks of their output through zarr-codecs'
// checked `BlockBuffer`, and a stored sparse chunk owns its buffer as zarr-layout-sparse's
// `SparseChunk<AlignedBuffer>`.
#![forbid(unsafe_code)]

mod array;
mod builder;
mod cache;
mod cas;
mod consolidated;
mod element;
mod error;
mod extensions;
pub mod fetch;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod group;
mod grow;
pub mod nonblocking;
mod path;
mod read;
mod select;
pub mod selection;
mod source;
#[cfg(feature = "sparse")]
mod sparse;
mod v2;
#[cfg(feature = "vlen")]
mod vlen;
mod write;

pub use array::{Array, WriteOptions};
pub use builder::ArrayBuilder;
pub use cache::CacheStats;
pub use consolidated::{find_enclosing, Disagreement, Enclosing, UseConsolidated};
pub use element::{Element, InvalidValue};
pub use error::{report, ArrayError, Result, SelectionError};
pub use extensions::{Extensions, StorageTransformerFactory};
pub use group::{Group, NodeKind};
pub use path::NodePath;
pub use selection::{AxisSelection, BasicItem, BlockSelection, Selection, Slice};
pub use source::StoreSource;
#[cfg(feature = "sparse")]
pub use sparse::{Promote, SparseArray, SparseCoo, SparseElement, SparseScalar, StoredSparseChunk};
pub use v2::Conversion;
#[cfg(feature = "vlen")]
pub use vlen::VlenElement;

pub use zarr_grid::geometry::Region;
pub use zarr_meta::{DataType, ExtensionDef, FillValue};
/// The numcodecs codecs, re-exported so that callers name the same version (with any of the
/// numcodecs features).
#[cfg(feature = "_numcodecs")]
pub use zarr_numcodecs;
/// The layers below, re-exported so that one dependency is enough.
pub use {ndarray, zarr_buffer, zarr_codecs, zarr_grid, zarr_layout_sparse, zarr_meta, zarr_store};
