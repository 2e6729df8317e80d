//! The arguments of `create_array` from the dict the Python side builds.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::Value;

use crate::array::parse_json_map;
use crate::engine::ArraySpec;
use crate::error::InvalidArgumentError;

fn json(text: &str, what: &str) -> PyResult<Value> {
    serde_json::from_str(text)
        .map_err(|e| InvalidArgumentError::new_err(format!("{what} is not JSON: {e}")))
}

/// Reads `shape`, `dtype` (a Zarr data type name), `chunks`, `shards`, `compressors` (JSON
/// text of a list of codec objects), `fill_value` (JSON text), `dimension_names`,
/// `attributes` (JSON text), `lower_bound`, `sparse`, `overwrite`, `write_empty_chunks`,
/// `zarr_format` (2 or 3; `None`: 3, or in a group the group's).
pub(crate) fn spec_from_kwargs(d: &Bound<'_, PyDict>) -> PyResult<ArraySpec> {
    fn get<'py, T: for<'a> FromPyObjectOwned<'py>>(
        d: &Bound<'py, PyDict>,
        key: &str,
    ) -> PyResult<Option<T>> {
        match d.get_item(key)? {
            None => Ok(None),
            Some(v) if v.is_none() => Ok(None),
            Some(v) => v.extract::<T>().map(Some).map_err(|e| {
                let e: PyErr = e.into();
                InvalidArgumentError::new_err(format!("{key}: {e}"))
            }),
        }
    }
    let mut spec = ArraySpec {
        shape: get(d, "shape")?
            .ok_or_else(|| InvalidArgumentError::new_err("shape is required"))?,
        data_type: get(d, "dtype")?
            .ok_or_else(|| InvalidArgumentError::new_err("dtype is required"))?,
        chunks: get(d, "chunks")?,
        shards: get(d, "shards")?,
        dimension_names: get(d, "dimension_names")?,
        lower_bound: get(d, "lower_bound")?,
        sparse: get(d, "sparse")?,
        overwrite: get(d, "overwrite")?.unwrap_or(false),
        write_empty_chunks: get(d, "write_empty_chunks")?.unwrap_or(false),
        zarr_format: get(d, "zarr_format")?,
        ..ArraySpec::default()
    };
    if let Some(text) = get::<String>(d, "compressors")? {
        match json(&text, "compressors")? {
            Value::Array(list) => spec.compressors = Some(list),
            _ => return Err(InvalidArgumentError::new_err("compressors must be a list")),
        }
    }
    if let Some(text) = get::<String>(d, "fill_value")? {
        spec.fill_value = Some(json(&text, "fill_value")?);
    }
    if let Some(text) = get::<String>(d, "attributes")? {
        spec.attributes = parse_json_map(&text)?;
    }
    Ok(spec)
}
