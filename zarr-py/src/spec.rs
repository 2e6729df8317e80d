//! The arguments of `create_array` from the dict the Python side builds.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};
use serde_json::Value;

use crate::array::parse_json_map;
use crate::engine::{self, ArraySpec, DataType};
use crate::error::{DataTypeError, InvalidArgumentError};

fn json(text: &str, what: &str) -> PyResult<Value> {
    serde_json::from_str(text)
        .map_err(|e| InvalidArgumentError::new_err(format!("{what} is not JSON: {e}")))
}

/// The Zarr data type of a `dtype` argument, decided here only: the type `str` or `bytes` (the
/// variable-size `string` and `variable_length_bytes`); a name [`engine::data_type_named`]
/// reads (Zarr's `int32`, `r16`, `string`; NumPy's `<i4`, `float64`, `|S5`, `<M8[ns]`);
/// anything else NumPy makes a dtype of (`np.int32`, `np.dtype(">u2")`, `"int_"`,
/// StringDType: `string`), by its `dtype.str` (a subarray dtype such as `(2,)i4` is raw bytes
/// of its size, `r64`, as zarr-python makes it). Objects (which hold either variable-size
/// type), structured dtypes and the types Zarr has none of are a `DataTypeError`.
pub(crate) fn data_type_of(dtype: &Bound<'_, PyAny>) -> PyResult<DataType> {
    let py = dtype.py();
    if dtype.is(py.get_type::<PyString>()) {
        return Ok(DataType::String);
    }
    if dtype.is(py.get_type::<PyBytes>()) {
        return Ok(DataType::Bytes);
    }
    if let Ok(name) = dtype.cast::<PyString>() {
        if let Some(t) = engine::data_type_named(name.to_str()?) {
            return Ok(t);
        }
    }
    let descr = numpy::PyArrayDescr::new(py, dtype)
        .map_err(|e| DataTypeError::new_err(format!("{dtype:?} is not a data type: {e}")))?;
    use numpy::PyArrayDescrMethods;
    match descr.kind() {
        b'T' => return Ok(DataType::String),
        b'O' => {
            return Err(DataTypeError::new_err(
                "object arrays have no one Zarr data type: give dtype=str (string) or bytes \
                 (variable_length_bytes)",
            ))
        }
        _ => {}
    }
    let text: String = descr.getattr("str")?.extract()?;
    let named = if descr.has_fields() {
        None
    } else {
        engine::data_type_named(&text)
    };
    named.ok_or_else(|| {
        DataTypeError::new_err(format!(
            "{descr} has no Zarr v3 data type (bool, int8..uint64, float16..complex128, \
                 r<N>, datetime64, timedelta64, U<n>, S<n>, str, bytes)"
        ))
    })
}

/// Reads `shape`, `dtype` (see [`data_type_of`]), `chunks`, `shards`, `compressors` (JSON
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
        data_type: match d.get_item("dtype")? {
            Some(t) if !t.is_none() => data_type_of(&t)?,
            _ => return Err(InvalidArgumentError::new_err("dtype is required")),
        },
        chunks: get(d, "chunks")?,
        shards: get(d, "shards")?,
        dimension_names: get(d, "dimension_names")?,
        lower_bound: get(d, "lower_bound")?,
        sparse: get(d, "sparse")?,
        overwrite: get(d, "overwrite")?.unwrap_or(false),
        write_empty_chunks: get(d, "write_empty_chunks")?.unwrap_or(false),
        zarr_format: get(d, "zarr_format")?,
        compressors: None,
        fill_value: None,
        attributes: Default::default(),
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
