//! The one place that calls zarr-array: opening stores and nodes, dense and sparse reads and
//! writes, growth. The Python classes ([`crate::array`], [`crate::group`], [`crate::sparse`])
//! go through these functions only, so a change of zarr-array's API is an edit here.
//!
//! Nothing here knows Python: plain Rust values in, plain Rust values out.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value};
use zarr_array::ndarray::{Array2, ArrayView2};
use zarr_array::zarr_grid::geometry::Region;
use zarr_array::zarr_layout_sparse::sprs::{CsMatBase, SpIndex};
use zarr_array::zarr_layout_sparse::Format;
use zarr_array::zarr_store::{self, FilesystemStore, Store, StoreUrl};
use zarr_array::{
    Array, ArrayBuilder, ArrayError, BlockSelection, ExtensionDef, Extensions, Group, NodeKind,
    Promote, Selection, SparseElement, SparseScalar, UseConsolidated, WriteOptions,
};

pub(crate) use zarr_array::{ArrayError as Error, DataType, Result};

/// What a caller is about to do with a location.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// Read or modify what is there: a local directory must exist.
    Existing,
    /// Create nodes: a local directory is created when missing.
    Create,
}

/// Opens the store a path or url names (see `zarr_store::open_url`). For
/// [`Access::Existing`] a local directory must exist (nothing is created), so a mistyped path
/// is a "not found" error rather than a new empty directory.
pub(crate) fn open_store(location: &str, access: Access) -> Result<Arc<dyn Store>> {
    open_store_with(location, access, None)
}

/// [`open_store`] with a remote store's requests in flight at once (`concurrency`; `None`:
/// `ZARR_CONCURRENCY`, else the default of `zarr_store::RemoteOptions`).
pub(crate) fn open_store_with(
    location: &str,
    access: Access,
    concurrency: Option<usize>,
) -> Result<Arc<dyn Store>> {
    let not_found = || Error::NotFound {
        path: location.to_string(),
    };
    match StoreUrl::parse(location)? {
        StoreUrl::Path(path) if access == Access::Existing => {
            if !Path::new(&path).is_dir() {
                return Err(not_found());
            }
            Ok(Arc::new(FilesystemStore::open(&path)?))
        }
        StoreUrl::Remote { .. } if concurrency.is_some() => {
            let n = concurrency.unwrap_or_default();
            let n = zarr_store::parse_concurrency("concurrency", &n.to_string())?;
            let options = zarr_store::RemoteOptions::from_env()?.with_concurrency(n);
            Ok(zarr_store::open_url_with(location, &options)?)
        }
        _ => Ok(zarr_store::open_url(location)?),
    }
}

/// The store to open the node at `path` below `location` in, and the node's path in it: for
/// a node that can be written (`writable`), the store of the outermost group above
/// `location` that holds consolidated metadata, when there is one
/// ([`zarr_array::find_enclosing`]: `g.zarr/a0` opens as `a0` of `g.zarr`), so that every
/// change of the node, or of a node created there, updates the copies above it as it does
/// when the node is opened through its root; else `location`'s store and `path`. Reading
/// (`writable` false) looks at nothing above `location`.
pub(crate) fn open_located(
    location: &str,
    path: &str,
    access: Access,
    writable: bool,
) -> Result<(Arc<dyn Store>, String)> {
    open_located_with(location, path, access, writable, None)
}

/// [`open_located`] with a remote store's requests in flight at once ([`open_store_with`]).
pub(crate) fn open_located_with(
    location: &str,
    path: &str,
    access: Access,
    writable: bool,
    concurrency: Option<usize>,
) -> Result<(Arc<dyn Store>, String)> {
    if writable {
        if let Some(found) = zarr_array::find_enclosing(location, &zarr_store::open_url)? {
            let store = open_store_with(&found.location, Access::Existing, concurrency)?;
            return Ok((store, found.join(path)));
        }
    }
    Ok((
        open_store_with(location, access, concurrency)?,
        path.to_string(),
    ))
}

/// An opened node (the array boxed: it is much larger than a group).
#[derive(Debug)]
pub(crate) enum Node {
    Array(Box<Array>),
    Group(Group),
}

/// Opens the node at `path` of `store`, whichever kind it is.
pub(crate) fn open_node(store: Arc<dyn Store>, path: &str) -> Result<Node> {
    match Array::open(store.clone(), path) {
        Ok(a) => Ok(Node::Array(Box::new(a))),
        Err(ArrayError::WrongNodeType { .. }) => Ok(Node::Group(Group::open(store, path)?)),
        Err(e) => Err(e),
    }
}

pub(crate) fn open_array(store: Arc<dyn Store>, path: &str) -> Result<Array> {
    Array::open(store, path)
}

/// Opens the group at `path`; `use_consolidated` as zarr-python takes it (`None`: its
/// consolidated metadata when it holds some, `Some(true)`: required, `Some(false)`: ignored),
/// and `zarr_format` (`None`: `zarr.json`, else the v2 documents; `Some(2)`: a v2 group's
/// `.zmetadata` first, one request for a consolidated v2 hierarchy).
pub(crate) fn open_group(
    store: Arc<dyn Store>,
    path: &str,
    use_consolidated: Option<bool>,
    zarr_format: Option<u8>,
) -> Result<Group> {
    let use_consolidated = match use_consolidated {
        None => UseConsolidated::IfPresent,
        Some(true) => UseConsolidated::Require,
        Some(false) => UseConsolidated::Ignore,
    };
    Group::open_format(
        store,
        path,
        &Extensions::default(),
        use_consolidated,
        zarr_format,
    )
}

/// Writes the consolidated metadata of the group at `path` (as zarr-python's
/// `consolidate_metadata` does: into its `zarr.json`, or a v2 group's `.zmetadata`) and
/// returns the group, opened through it.
pub(crate) fn consolidate(store: Arc<dyn Store>, path: &str) -> Result<Group> {
    let mut group =
        Group::open_consolidated(store, path, &Extensions::default(), UseConsolidated::Ignore)?;
    group.consolidate()?;
    Ok(group)
}

/// Creates a group at `path` (replacing a node there when `overwrite`), Zarr v3 or, with
/// `zarr_format` 2, v2.
pub(crate) fn create_group(
    store: Arc<dyn Store>,
    path: &str,
    attributes: Map<String, Value>,
    overwrite: bool,
    zarr_format: Option<u8>,
) -> Result<Group> {
    let v2 = match zarr_format {
        None | Some(3) => false,
        Some(2) => true,
        Some(other) => {
            return Err(invalid(
                "zarr_format",
                format!("{other} (a Zarr format is 2 or 3)"),
            ))
        }
    };
    if overwrite {
        let node = zarr_array::NodePath::new(path)?;
        store.delete_prefix(&node.prefix())?;
    }
    if v2 {
        Group::create_v2(store, path, attributes)
    } else {
        Group::create(store, path, attributes)
    }
}

/// Everything `create_array` takes, as plain values.
#[derive(Debug, Clone)]
pub(crate) struct ArraySpec {
    pub shape: Vec<u64>,
    pub data_type: DataType,
    pub chunks: Option<Vec<u64>>,
    pub shards: Option<Vec<u64>>,
    /// `None`: the default (zstd); `Some([])`: raw bytes.
    pub compressors: Option<Vec<Value>>,
    pub fill_value: Option<Value>,
    pub dimension_names: Option<Vec<Option<String>>>,
    pub attributes: Map<String, Value>,
    pub lower_bound: Option<Vec<i64>>,
    /// `coo`, `csr` or `csc`.
    pub sparse: Option<String>,
    pub overwrite: bool,
    pub write_empty_chunks: bool,
    /// 2 or 3; `None`: 3, or in a group the group's format.
    pub zarr_format: Option<u8>,
}

fn invalid(what: &'static str, reason: impl Into<String>) -> Error {
    Error::InvalidArgument {
        what,
        reason: reason.into(),
    }
}

/// A data type by name: Zarr's (`int32`, `r16`, `string`, `variable_length_bytes`), `str`
/// (zarr-python's `dtype=str`: `string`), or NumPy's spelling of a core type or of one with a
/// configuration (`<i4`, `float64`, `<M8[s]`, `<U8`, `|S4`, `|V2`, as
/// `zarr_meta::numpy::NumpyDtype::parse` reads them); `None` for other text.
pub(crate) fn data_type_named(name: &str) -> Option<DataType> {
    if name == "str" {
        return Some(DataType::String);
    }
    DataType::from_name(name).or_else(|| {
        zarr_array::zarr_meta::numpy::NumpyDtype::parse(name)
            .ok()
            .map(|t| t.data_type)
    })
}

/// [`data_type_named`], or an error naming the types there are.
pub(crate) fn data_type(name: &str) -> Result<DataType> {
    data_type_named(name).ok_or_else(|| {
        invalid(
            "data type",
            format!(
                "{name:?} is not a Zarr v3 data type (bool, int8..uint64, \
                 float16..complex128, r<N>, a NumPy datetime64 / timedelta64, U<n>, S<n>)"
            ),
        )
    })
}

/// NumPy's `dtype.str` of a data type in native byte order: `|O` (Python objects) for the
/// variable-size types.
pub(crate) fn numpy_str(t: DataType) -> String {
    zarr_array::zarr_meta::numpy::NumpyDtype::native(t).to_numpy_str()
}

fn builder(spec: &ArraySpec) -> Result<ArrayBuilder> {
    let mut b = ArrayBuilder::new(spec.shape.clone(), spec.data_type)
        .overwrite(spec.overwrite)
        .write_options(WriteOptions {
            write_empty_chunks: spec.write_empty_chunks,
        })
        .attributes(spec.attributes.clone());
    if let Some(c) = &spec.chunks {
        b = b.chunk_shape(c.clone());
    }
    if let Some(s) = &spec.shards {
        b = b.shards(s.clone());
    }
    if let Some(list) = &spec.compressors {
        let defs = list
            .iter()
            .map(|v| {
                ExtensionDef::from_value(v, "compressors")
                    .map_err(|e| invalid("compressors", format!("{v}: {e}")))
            })
            .collect::<Result<Vec<_>>>()?;
        b = b.compressors(defs);
    }
    if let Some(f) = &spec.fill_value {
        b = b.fill_value_json(f)?;
    }
    if let Some(n) = &spec.dimension_names {
        b = b.dimension_names(n.clone());
    }
    if let Some(l) = &spec.lower_bound {
        b = b.lower_bound(l.clone());
    }
    if let Some(f) = spec.zarr_format {
        b = b.zarr_format(f);
    }
    if let Some(s) = &spec.sparse {
        let format = match s.as_str() {
            "coo" => Format::Coo,
            "csr" => Format::Csr,
            "csc" => Format::Csc,
            other => {
                return Err(invalid(
                    "sparse",
                    format!("{other:?} (use \"coo\", \"csr\" or \"csc\")"),
                ))
            }
        };
        b = b.sparse(format);
    }
    Ok(b)
}

/// Creates an array at `path` of `store`.
/// Creates the array a sparse import proposes (zarr-sparse-io: shape, data type, chunks,
/// sparse layout; default codecs) at `path`.
pub(crate) fn create_proposed(
    store: Arc<dyn Store>,
    path: &str,
    proposed: &zarr_sparse_io::Proposed,
) -> Result<Array> {
    proposed.builder().create(store, path)
}

pub(crate) fn create_array(store: Arc<dyn Store>, path: &str, spec: &ArraySpec) -> Result<Array> {
    builder(spec)?.create(store, path)
}

/// Creates an array as a child of a group (with `overwrite`, replacing a node there).
pub(crate) fn create_child_array(group: &Group, name: &str, spec: &ArraySpec) -> Result<Array> {
    group.create_array(name, &builder(spec)?)
}

/// Creates a group as a child of a group, of `zarr_format` (`None`: the group's).
pub(crate) fn create_child_group(
    group: &Group,
    name: &str,
    attributes: Map<String, Value>,
    zarr_format: Option<u8>,
) -> Result<Group> {
    group.create_group_format(name, attributes, zarr_format)
}

/// A listed node: its path relative to the group, `"array"`, `"group"` or `"unreadable"`,
/// and for an unreadable one the error opening it gives.
pub(crate) type Member = (String, &'static str, Option<String>);

fn member((name, kind): (String, NodeKind)) -> Member {
    let reason = match &kind {
        NodeKind::Unreadable { reason } => Some(zarr_array::report(&**reason)),
        _ => None,
    };
    (name, kind.name(), reason)
}

pub(crate) fn group_members(group: &Group) -> Result<Vec<Member>> {
    Ok(group.members()?.into_iter().map(member).collect())
}

pub(crate) fn group_members_recursive(group: &Group) -> Result<Vec<Member>> {
    Ok(group.members_recursive()?.into_iter().map(member).collect())
}

pub(crate) fn open_child(group: &Group, name: &str) -> Result<Node> {
    match group.open_array(name) {
        Ok(a) => Ok(Node::Array(Box::new(a))),
        Err(ArrayError::WrongNodeType { .. }) => Ok(Node::Group(group.open_group(name)?)),
        Err(e) => Err(e),
    }
}

pub(crate) fn group_path(group: &Group) -> &str {
    group.path()
}

pub(crate) fn group_attributes(group: &Group) -> &Map<String, Value> {
    group.attributes()
}

pub(crate) fn set_group_attributes(
    group: &mut Group,
    attributes: Map<String, Value>,
) -> Result<()> {
    group.set_attributes(attributes)
}

// ---- arrays: metadata ----

pub(crate) fn metadata_json(a: &Array) -> String {
    a.metadata().to_value().to_string()
}

pub(crate) fn array_path(a: &Array) -> &str {
    a.path()
}

pub(crate) fn shape(a: &Array) -> Vec<u64> {
    a.shape().to_vec()
}

pub(crate) fn domain(a: &Array) -> Vec<(i64, i64)> {
    a.domain()
}

pub(crate) fn data_type_name(a: &Array) -> String {
    a.data_type().name()
}

pub(crate) fn item_size(a: &Array) -> usize {
    a.data_type().size()
}

/// The fill value's bytes (native order).
pub(crate) fn fill_bytes(a: &Array) -> Vec<u8> {
    a.fill_value().as_bytes().to_vec()
}

/// The chunk shape of the grid (for a sharded array, the shard shape); for a grid whose
/// chunks differ (rectilinear), the first chunk's (`block_spans` gives each chunk's extent).
pub(crate) fn grid_chunk_shape(a: &Array) -> Vec<u64> {
    a.chunk_shape()
        .unwrap_or_else(|| a.codecs().repr().shape.clone())
}

pub(crate) fn grid_shape(a: &Array) -> Vec<u64> {
    a.grid()
        .grid_range()
        .iter()
        .map(|r| r.end.saturating_sub(r.start) as u64)
        .collect()
}

/// The most block spans [`block_spans`] lists along one axis.
const MAX_BLOCK_SPANS: u64 = 1 << 22;

/// `(start, length)` of each group of `per_block` consecutive chunks along `axis`: the
/// engine's [`Array::selection_region`] of each group's block selection, so only the chunks bounding a group are
/// looked at.
pub(crate) fn block_spans(a: &Array, axis: usize, per_block: u64) -> Result<Vec<(u64, u64)>> {
    let counts = grid_shape(a);
    let Some(&n) = counts.get(axis) else {
        return Err(Error::InvalidAxis {
            axis,
            rank: a.rank(),
        });
    };
    let per_block = per_block.max(1);
    let groups = n.div_ceil(per_block);
    if groups > MAX_BLOCK_SPANS {
        return Err(Error::TooLarge {
            what: "the list of Dask blocks along one axis (give larger blocks)",
            shape: vec![groups],
        });
    }
    let mut items: Vec<BlockSelection> = (0..counts.len())
        .map(|_| BlockSelection::Index(0))
        .collect();
    (0..groups)
        .map(|g| {
            let first = g * per_block;
            let last = (first + per_block).min(n);
            items[axis] = BlockSelection::Range(Some(first as i64), Some(last as i64));
            // a block selection is always one region
            let r = a
                .selection_region(&Selection::Blocks(items.clone()))?
                .ok_or_else(|| Error::InvalidArgument {
                    what: "block selection",
                    reason: "it does not select one region".into(),
                })?;
            Ok((r.start[axis], r.shape[axis]))
        })
        .collect()
}

pub(crate) fn stored_chunk_sizes(a: &Array) -> Result<Vec<(Vec<i64>, u64)>> {
    a.stored_chunk_sizes()
}

/// 3 (`zarr.json`) or 2 (`.zarray`).
pub(crate) fn zarr_format(a: &Array) -> u8 {
    a.zarr_format()
}

pub(crate) fn is_sparse(a: &Array) -> bool {
    a.is_sparse()
}

pub(crate) fn fill_value_is_null(a: &Array) -> bool {
    a.metadata_v2().is_some_and(|doc| doc.fill_value.is_none())
}

pub(crate) fn sparse_format(a: &Array) -> Option<String> {
    a.sparse().ok().map(|s| s.layout().format().to_string())
}

pub(crate) fn set_attributes(a: &mut Array, attributes: Map<String, Value>) -> Result<()> {
    a.set_attributes(attributes)
}

pub(crate) fn attributes(a: &Array) -> &Map<String, Value> {
    a.attributes()
}

pub(crate) fn fill_value_json(a: &Array) -> Value {
    a.fill_value().to_json(a.data_type())
}

// ---- arrays: dense reads and writes ----

pub(crate) fn region(start: Vec<u64>, shape: Vec<u64>) -> Result<Region> {
    Ok(Region::new(start, shape)?)
}

/// Reads a selection into `out` (C order, native byte order, the selection's shape).
pub(crate) fn read_selection_bytes_into(a: &Array, sel: &Selection, out: &mut [u8]) -> Result<()> {
    a.read_selection_bytes_into(sel, out)
}

pub(crate) fn write_selection_bytes(a: &Array, sel: &Selection, data: &[u8]) -> Result<()> {
    a.write_selection_bytes(sel, data)
}

pub(crate) fn selection_shape(a: &Array, sel: &Selection) -> Result<Vec<u64>> {
    a.selection_shape(sel)
}

/// `(start, shape)` of the block `sel` selects, when it is one (see
/// [`Array::selection_region`]).
pub(crate) fn selection_region(a: &Array, sel: &Selection) -> Result<Option<(Vec<u64>, Vec<u64>)>> {
    Ok(a.selection_region(sel)?.map(|r| (r.start, r.shape)))
}

// ---- arrays of variable-size elements (`string`, `variable_length_bytes`) ----

/// Elements of a `string` (UTF-8 text) or `variable_length_bytes` array, in C order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum VlenItems {
    Strings(Vec<String>),
    Bytes(Vec<Vec<u8>>),
}

/// Whether the array holds variable-size elements: `Some(true)` for `string`, `Some(false)`
/// for `variable_length_bytes`, `None` for the fixed-size types.
pub(crate) fn vlen_kind(a: &Array) -> Option<bool> {
    match a.data_type() {
        DataType::String => Some(true),
        DataType::Bytes => Some(false),
        _ => None,
    }
}

fn not_vlen(a: &Array) -> Error {
    invalid(
        "data type",
        format!(
            "the array holds {}, not string or variable_length_bytes",
            a.data_type().name()
        ),
    )
}

/// The elements of an owned array in C order, without copying them.
fn c_order<T>(a: zarr_array::ndarray::ArrayD<T>) -> Vec<T> {
    if a.is_standard_layout() {
        a.into_raw_vec_and_offset().0
    } else {
        a.into_iter().collect()
    }
}

/// An owned array of `shape` over `items` (C order), or a shape mismatch.
fn shaped<T>(shape: &[u64], items: Vec<T>) -> Result<zarr_array::ndarray::ArrayD<T>> {
    let got = vec![items.len() as u64];
    let dims = shape
        .iter()
        .map(|&n| usize::try_from(n).ok())
        .collect::<Option<Vec<usize>>>();
    dims.and_then(|d| zarr_array::ndarray::ArrayD::from_shape_vec(d, items).ok())
        .ok_or(Error::ShapeMismatch {
            expected: shape.to_vec(),
            got,
        })
}

/// Reads a region of a `string` / `variable_length_bytes` array.
pub(crate) fn read_vlen_region(a: &Array, region: &Region) -> Result<VlenItems> {
    match vlen_kind(a) {
        Some(true) => Ok(VlenItems::Strings(c_order(a.read_region_vlen(region)?))),
        Some(false) => Ok(VlenItems::Bytes(c_order(a.read_region_vlen(region)?))),
        None => Err(not_vlen(a)),
    }
}

/// Reads a selection of a `string` / `variable_length_bytes` array: its shape and elements.
/// A selection that is one block is read as a region (chunk regions decoded whole).
pub(crate) fn read_vlen_selection(a: &Array, sel: &Selection) -> Result<(Vec<u64>, VlenItems)> {
    let shape = a.selection_shape(sel)?;
    if let Some(region) = a.selection_region(sel)? {
        return Ok((shape, read_vlen_region(a, &region)?));
    }
    let items = match vlen_kind(a) {
        Some(true) => VlenItems::Strings(c_order(a.read_selection_vlen(sel)?)),
        Some(false) => VlenItems::Bytes(c_order(a.read_selection_vlen(sel)?)),
        None => return Err(not_vlen(a)),
    };
    Ok((shape, items))
}

/// Writes `items` (C order, the region's shape) into a region.
pub(crate) fn write_vlen_region(a: &Array, region: &Region, items: VlenItems) -> Result<()> {
    match items {
        VlenItems::Strings(v) => a.write_region_vlen(region, shaped(&region.shape, v)?.view()),
        VlenItems::Bytes(v) => a.write_region_vlen(region, shaped(&region.shape, v)?.view()),
    }
}

/// Writes `items` (C order, the selection's shape) through a selection; a selection that is
/// one block is written as a region.
pub(crate) fn write_vlen_selection(a: &Array, sel: &Selection, items: VlenItems) -> Result<()> {
    if let Some(region) = a.selection_region(sel)? {
        return write_vlen_region(a, &region, items);
    }
    let shape = a.selection_shape(sel)?;
    match items {
        VlenItems::Strings(v) => a.write_selection_vlen(sel, shaped(&shape, v)?.view()),
        VlenItems::Bytes(v) => a.write_selection_vlen(sel, shaped(&shape, v)?.view()),
    }
}

/// Appends `items` of `shape` after the end of `axis`.
pub(crate) fn append_vlen(
    a: &mut Array,
    shape: &[u64],
    items: VlenItems,
    axis: usize,
) -> Result<()> {
    match items {
        VlenItems::Strings(v) => a.append_vlen(shaped(shape, v)?.view(), axis),
        VlenItems::Bytes(v) => a.append_vlen(shaped(shape, v)?.view(), axis),
    }
}

/// Prepends `items` of `shape` before position 0 of `axis` (`regular_bounded`).
pub(crate) fn prepend_vlen(
    a: &mut Array,
    shape: &[u64],
    items: VlenItems,
    axis: usize,
) -> Result<()> {
    match items {
        VlenItems::Strings(v) => a.prepend_vlen(shaped(shape, v)?.view(), axis),
        VlenItems::Bytes(v) => a.prepend_vlen(shaped(shape, v)?.view(), axis),
    }
}

// ---- growth ----

pub(crate) fn resize(a: &mut Array, shape: &[u64]) -> Result<()> {
    a.resize(shape)
}

pub(crate) fn append(a: &mut Array, shape: &[u64], data: &[u8], axis: usize) -> Result<()> {
    a.append_bytes(shape, data, axis)
}

pub(crate) fn prepend(a: &mut Array, shape: &[u64], data: &[u8], axis: usize) -> Result<()> {
    a.prepend_bytes(shape, data, axis)
}

pub(crate) fn to_regular(a: &Array, store: Arc<dyn Store>, path: &str) -> Result<Array> {
    a.to_regular(store, path)
}

// ---- sparse ----

/// A 2-d region as CSR with `I` indices: `(indptr, indices, data)`, unchecked by `sprs`
/// (SciPy takes them as they are).
#[allow(clippy::type_complexity)]
pub(crate) fn read_csr<T: SparseElement, I: SpIndex + bytemuck::Zeroable>(
    a: &Array,
    region: &Region,
) -> Result<(Vec<I>, Vec<I>, Vec<T>)> {
    a.sparse()?.read_csr_arrays::<T, I>(region)
}

/// A region as COO: coordinates `(ndim, nnz)` in array positions (C order of the positions),
/// and values.
pub(crate) fn read_coo<T: SparseElement>(
    a: &Array,
    region: &Region,
) -> Result<(Array2<u64>, Vec<T>)> {
    Ok(a.sparse()?.read_coo::<T>(region)?.into_parts())
}

/// Writes entries at array positions (`(ndim, nnz)`); a value equal to the fill value removes
/// the entry.
pub(crate) fn write_coo<T: SparseElement>(
    a: &Array,
    coords: ArrayView2<'_, u64>,
    values: &[T],
) -> Result<()> {
    a.sparse()?.write_coo(coords, values)
}

/// Replaces the 2-d region at `offset` with a compressed matrix (CSR when `csr`, else CSC)
/// given as borrowed slices.
pub(crate) fn write_compressed<T: SparseElement, I: SpIndex>(
    a: &Array,
    csr: bool,
    shape: (usize, usize),
    parts: (&[I], &[I], &[T]),
    offset: &[u64],
) -> Result<()> {
    let (indptr, indices, data) = parts;
    let bad = |e: (&[I], &[I], &[T], _)| invalid("sparse matrix", format!("{}", e.3));
    let m = if csr {
        CsMatBase::try_new(shape, indptr, indices, data).map_err(bad)?
    } else {
        CsMatBase::try_new_csc(shape, indptr, indices, data).map_err(bad)?
    };
    a.sparse()?.write_sprs(&m, offset)
}

pub(crate) fn nnz(a: &Array) -> Result<u64> {
    a.sparse()?.nnz()
}

pub(crate) fn sum<T: SparseScalar>(a: &Array) -> Result<T::Sum> {
    a.sparse()?.sum::<T>()
}

pub(crate) fn spmv<A: SparseScalar + Promote<R>, R: SparseScalar>(
    a: &Array,
    x: &[R],
) -> Result<Vec<R>> {
    a.sparse()?.spmv_as::<A, R>(x)
}
