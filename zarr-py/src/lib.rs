//! `zarr_rs._core`: the extension module of the `zarr_rs` Python package.
//!
//! The public Python API lives in `python/zarr_rs/` (arrays and groups as zarr-python users
//! know them, sparse reads as SciPy / pydata-sparse objects, Dask and xarray); this module is
//! its engine: [`array::ArrayCore`] and [`group::GroupCore`] wrap zarr-array's `Array` and
//! `Group`, and every call into zarr-array goes through [`engine`]. Errors become the
//! exceptions of `zarr_rs.errors` ([`error`]).

// No `unsafe` code: the pipeline decodes chunks in parallel into the output's disjoint blocks
// through zarr-codecs' `BlockBuffer`, which checks that they are disjoint.
#![forbid(unsafe_code)]

mod array;
mod engine;
mod error;
mod group;
mod key;
mod pipeline;
mod sparse;
mod sparse_io;
mod spec;
mod threads;

/// Every allocation of the engine in this module (chunk buffers, the vectors handed to NumPy,
/// which free them through it again) comes from mimalloc, which reuses freed pages where
/// glibc, under the `MALLOC_TRIM_THRESHOLD_` that Dask's workers set, maps and unmaps each
/// large buffer anew (see Cargo.toml).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::array::ArrayCore;
use crate::engine::Access;
use crate::error::{IntoPy, InvalidArgumentError};
use crate::group::{node_to_py, GroupCore};
use crate::threads::detach;

fn read_only(mode: &str) -> PyResult<bool> {
    match mode {
        "r" => Ok(true),
        "r+" | "a" | "w" | "w-" => Ok(false),
        other => Err(InvalidArgumentError::new_err(format!(
            "mode {other:?} (use \"r\", \"r+\", \"a\", \"w\" or \"w-\")"
        ))),
    }
}

/// Opens the node (array or group) at `path` inside the store at `location` (a directory or
/// a url); a local directory must exist. Returns an `ArrayCore` or a `GroupCore`. A node
/// opened for writing inside a hierarchy with consolidated metadata above `location` is
/// opened through the outermost group holding some (`engine::open_located`), so that its
/// changes keep those copies true; so are the nodes `open_array`, `open_group`,
/// `create_group` and `create_array` open or create. `concurrency`: the requests a remote
/// store keeps in flight at once (`None`: `ZARR_CONCURRENCY`, else 256).
#[pyfunction]
#[pyo3(signature = (location, path, mode, concurrency=None))]
fn open_node(
    py: Python<'_>,
    location: &str,
    path: &str,
    mode: &str,
    concurrency: Option<usize>,
) -> PyResult<Py<PyAny>> {
    let ro = read_only(mode)?;
    let node = detach(py, || {
        let (store, path) =
            engine::open_located_with(location, path, Access::Existing, !ro, concurrency)?;
        engine::open_node(store, &path)
    })?
    .py_err()?;
    node_to_py(py, node, ro)
}

/// Opens the array at `path` inside the store at `location`; `concurrency` as
/// [`open_node`] takes it.
#[pyfunction]
#[pyo3(signature = (location, path, mode, concurrency=None))]
fn open_array(
    py: Python<'_>,
    location: &str,
    path: &str,
    mode: &str,
    concurrency: Option<usize>,
) -> PyResult<ArrayCore> {
    let ro = read_only(mode)?;
    let a = detach(py, || {
        let (store, path) =
            engine::open_located_with(location, path, Access::Existing, !ro, concurrency)?;
        engine::open_array(store, &path)
    })?
    .py_err()?;
    Ok(ArrayCore::new(a, ro))
}

/// Opens the group at `path` inside the store at `location`; `use_consolidated` and
/// `zarr_format` as zarr-python takes them (`None`: the group's consolidated metadata when
/// it holds some; the format found).
#[pyfunction]
#[pyo3(signature = (location, path, mode, use_consolidated=None, zarr_format=None))]
fn open_group(
    py: Python<'_>,
    location: &str,
    path: &str,
    mode: &str,
    use_consolidated: Option<bool>,
    zarr_format: Option<u8>,
) -> PyResult<GroupCore> {
    let ro = read_only(mode)?;
    let inner = detach(py, || {
        let (store, path) = engine::open_located(location, path, Access::Existing, !ro)?;
        engine::open_group(store, &path, use_consolidated, zarr_format)
    })?
    .py_err()?;
    Ok(GroupCore {
        inner,
        read_only: ro,
    })
}

/// Writes the consolidated metadata of the group at `path` inside the store at `location`,
/// as zarr-python's `consolidate_metadata` does; returns the group, opened through it.
#[pyfunction]
fn consolidate_metadata(py: Python<'_>, location: &str, path: &str) -> PyResult<GroupCore> {
    let inner = detach(py, || {
        let store = engine::open_store(location, Access::Existing)?;
        engine::consolidate(store, path)
    })?
    .py_err()?;
    Ok(GroupCore {
        inner,
        read_only: false,
    })
}

/// Creates a group at `path` inside the store at `location` (created when missing);
/// `overwrite` replaces a node there; `zarr_format` 2 makes a v2 group.
#[pyfunction]
#[pyo3(signature = (location, path, attributes, overwrite, zarr_format=None))]
fn create_group(
    py: Python<'_>,
    location: &str,
    path: &str,
    attributes: Option<Bound<'_, PyDict>>,
    overwrite: bool,
    zarr_format: Option<u8>,
) -> PyResult<GroupCore> {
    let attrs = spec::attributes(attributes.as_ref())?;
    let inner = detach(py, || {
        let (store, path) = engine::open_located(location, path, Access::Create, true)?;
        engine::create_group(store, &path, attrs, overwrite, zarr_format)
    })?
    .py_err()?;
    Ok(GroupCore {
        inner,
        read_only: false,
    })
}

/// Creates an array at `path` inside the store at `location` (created when missing), from
/// the settings in `spec` (a dict, see `spec::CreateArray`).
#[pyfunction]
fn create_array(
    py: Python<'_>,
    location: &str,
    path: &str,
    spec: &Bound<'_, PyAny>,
) -> PyResult<ArrayCore> {
    let spec = spec::CreateArray::read(spec)?;
    let a = detach(py, || {
        let (store, path) = engine::open_located(location, path, Access::Create, true)?;
        engine::create_array(store, &path, &spec)
    })?
    .py_err()?;
    Ok(ArrayCore::new(a, false))
}

/// NumPy's `dtype.str` (native byte order) of the Zarr data type a `dtype` argument of
/// `create_array` makes (see `spec::data_type_of`): `|O` for `string` and
/// `variable_length_bytes`.
#[pyfunction]
fn numpy_dtype(dtype: &Bound<'_, PyAny>) -> PyResult<String> {
    spec::data_type_of(dtype).map(engine::numpy_str)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    threads::loaded();
    error::import(m.py())?;
    m.add_class::<ArrayCore>()?;
    m.add_class::<GroupCore>()?;
    m.add_class::<pipeline::ChunkCodec>()?;
    m.add_class::<pipeline::EngineStore>()?;
    m.add_function(wrap_pyfunction!(pipeline::pipeline_stats, m)?)?;
    m.add_function(wrap_pyfunction!(open_node, m)?)?;
    m.add_function(wrap_pyfunction!(open_array, m)?)?;
    m.add_function(wrap_pyfunction!(open_group, m)?)?;
    m.add_function(wrap_pyfunction!(consolidate_metadata, m)?)?;
    m.add_function(wrap_pyfunction!(create_group, m)?)?;
    m.add_function(wrap_pyfunction!(create_array, m)?)?;
    m.add_function(wrap_pyfunction!(numpy_dtype, m)?)?;
    m.add_function(wrap_pyfunction!(sparse_io::import_sparse, m)?)?;
    m.add_function(wrap_pyfunction!(sparse_io::export_sparse, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
