//! `import_sparse` / `export_sparse`: sparse matrices in and out of `sparse_layout` arrays
//! through zarr-sparse-io (Matrix Market, SciPy `.npz`, anndata and binsparse groups),
//! streamed within `max_memory`. The Python wrapper is `zarr_rs/sparse_io.py`.

use std::path::{Path, PathBuf};

use pyo3::prelude::*;
use zarr_array::zarr_layout_sparse::Format;
use zarr_sparse_io::{ExportOptions, GroupKind, ImportOptions, Layout, SparseIoError};

use crate::engine::{self, Access};
use crate::error::{sparse_to_py, IntoPy, InvalidArgumentError};
use crate::threads::detach;

/// The format of `name`: `given`, else from its extension (`mtx` for `.mtx` / `.mtx.gz`,
/// `npz`), else `group` (an anndata element or a binsparse group).
fn format_of(name: &str, given: Option<&str>) -> PyResult<&'static str> {
    let lower = name.to_ascii_lowercase();
    Ok(match given {
        Some("mtx") => "mtx",
        Some("npz") => "npz",
        Some("anndata") => "anndata",
        Some("binsparse") => "binsparse",
        Some(other) => {
            return Err(InvalidArgumentError::new_err(format!(
                "format {other:?} (use \"mtx\", \"npz\", \"anndata\" or \"binsparse\")"
            )))
        }
        None if lower.ends_with(".mtx") || lower.ends_with(".mtx.gz") => "mtx",
        None if lower.ends_with(".npz") => "npz",
        None => "group",
    })
}

fn layout_of(name: &str) -> PyResult<Layout> {
    match name {
        "csr" => Ok(Layout::Csr),
        "csc" => Ok(Layout::Csc),
        "coo" => Ok(Layout::Coo),
        other => Err(InvalidArgumentError::new_err(format!(
            "layout {other:?} (use \"csr\", \"csc\" or \"coo\")"
        ))),
    }
}

/// Imports the sparse matrix at `source` (a file, or the location of a group) into a new
/// `sparse_layout` array at `path` of the store at `location`.
#[pyfunction]
#[pyo3(signature = (source, location, path, format=None, chunks=None, layout="csr", dtype=None, max_memory=None, temp_dir=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn import_sparse(
    py: Python<'_>,
    source: &str,
    location: &str,
    path: &str,
    format: Option<&str>,
    chunks: Option<Vec<u64>>,
    layout: &str,
    dtype: Option<&str>,
    max_memory: Option<u64>,
    temp_dir: Option<PathBuf>,
) -> PyResult<()> {
    let kind = format_of(source, format)?;
    let layout = match layout_of(layout)? {
        Layout::Csr => Format::Csr,
        Layout::Csc => Format::Csc,
        Layout::Coo => Format::Coo,
    };
    let data_type = dtype.map(engine::data_type).transpose().py_err()?;
    if data_type.is_some() && kind != "mtx" {
        return Err(InvalidArgumentError::new_err(
            "dtype applies to Matrix Market input only (other formats keep their values' type)",
        ));
    }
    let opts = ImportOptions {
        max_memory: max_memory.unwrap_or(zarr_sparse_io::DEFAULT_MAX_MEMORY),
        chunks,
        layout,
        data_type,
        temp_dir,
        progress: None,
    };
    let (store, path) = detach(py, || {
        engine::open_located(location, path, Access::Create, true)
    })?
    .py_err()?;
    let result = detach(py, || {
        let mut create = |p: &zarr_sparse_io::Proposed| {
            engine::create_proposed(store.clone(), &path, p).map_err(Into::into)
        };
        match kind {
            "mtx" => zarr_sparse_io::import_mtx(Path::new(source), &opts, &mut create),
            "npz" => zarr_sparse_io::import_npz(Path::new(source), &opts, &mut create),
            _ => match engine::open_store(source, Access::Existing) {
                Ok(src) => zarr_sparse_io::import_group(src, "", source, &opts, &mut create),
                Err(e) => Err(SparseIoError::Array {
                    context: format!("opening {source}"),
                    source: Box::new(e),
                }),
            },
        }
    })?;
    result.map(|_| ()).map_err(sparse_to_py)
}

/// Exports the 2-d sparse array at `path` of `location` to `dest` (a `.mtx`, `.mtx.gz` or
/// `.npz` file, or with format "anndata" / "binsparse" the location of the group to write).
#[pyfunction]
#[pyo3(signature = (location, path, dest, format=None, layout="csr", element="X", zarr_format=3, max_memory=None, temp_dir=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn export_sparse(
    py: Python<'_>,
    location: &str,
    path: &str,
    dest: &str,
    format: Option<&str>,
    layout: &str,
    element: &str,
    zarr_format: u8,
    max_memory: Option<u64>,
    temp_dir: Option<PathBuf>,
) -> PyResult<()> {
    let kind = format_of(dest, format)?;
    if kind == "group" {
        return Err(InvalidArgumentError::new_err(format!(
            "{dest}: the format is not known from the name (.mtx, .mtx.gz, .npz): pass format=\"anndata\" or \"binsparse\" for a group"
        )));
    }
    let layout = layout_of(layout)?;
    let opts = ExportOptions {
        max_memory: max_memory.unwrap_or(zarr_sparse_io::DEFAULT_MAX_MEMORY),
        temp_dir,
        progress: None,
    };
    let array = detach(py, || {
        let (store, path) = engine::open_located(location, path, Access::Existing, false)?;
        engine::open_array(store, &path)
    })?
    .py_err()?;
    detach(py, || match kind {
        "mtx" => zarr_sparse_io::export_mtx(&array, Path::new(dest), &opts),
        "npz" => zarr_sparse_io::export_npz(&array, Path::new(dest), layout, &opts),
        _ => {
            let group = if kind == "binsparse" {
                GroupKind::Binsparse
            } else {
                GroupKind::Anndata {
                    element: element.to_string(),
                }
            };
            match engine::open_store(dest, Access::Create) {
                Ok(store) => zarr_sparse_io::export_group(
                    &array,
                    store,
                    "",
                    &group,
                    layout,
                    zarr_format,
                    &opts,
                ),
                Err(e) => Err(SparseIoError::Array {
                    context: format!("opening {dest}"),
                    source: Box::new(e),
                }),
            }
        }
    })?
    .map_err(sparse_to_py)
}
