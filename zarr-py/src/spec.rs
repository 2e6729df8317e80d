//! The arguments of `create_array` and `create_group` as the Python side passes them: plain
//! Python values (a dict of them for `create_array`, read by [`CreateArray`]), never JSON text.
//! Attributes, codec objects and fill values become JSON values here ([`to_json`]), as
//! `json.dumps` would write them; the Zarr data type of a `dtype` is decided here only
//! ([`data_type_of`]).

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

use crate::engine::{self, ArraySpec, DataType};
use crate::error::{DataTypeError, InvalidArgumentError};

/// How deep [`to_json`] nests (serde_json's own limit when it parses text).
const MAX_DEPTH: usize = 128;

/// A Python value as JSON, as `json.dumps` reads it: None, bools, ints (of 64 bits; larger
/// ones are refused, not rounded to a float), finite floats, str, lists and tuples, dicts
/// (keys str, or int, float, bool or None written as `json.dumps` writes them). Another
/// type is a `DataTypeError` (a `TypeError`, as `json.dumps` raises), NaN, infinities, a
/// larger int or too deep a nesting an `InvalidArgumentError`; `what` names the argument.
pub(crate) fn to_json(v: &Bound<'_, PyAny>, what: &str) -> PyResult<Value> {
    value(v, what, 0)
}

fn value(v: &Bound<'_, PyAny>, what: &str, depth: usize) -> PyResult<Value> {
    if depth > MAX_DEPTH {
        return Err(InvalidArgumentError::new_err(format!(
            "{what}: nested more than {MAX_DEPTH} levels deep"
        )));
    }
    if v.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = v.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if let Some(n) = number(v, what)? {
        return Ok(Value::Number(n));
    }
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(Value::String(s.to_str()?.to_owned()));
    }
    if let Ok(d) = v.cast::<PyDict>() {
        return object(d, what, depth).map(Value::Object);
    }
    if let Ok(l) = v.cast::<PyList>() {
        return array(l.as_any(), what, depth).map(Value::Array);
    }
    if let Ok(t) = v.cast::<PyTuple>() {
        return array(t.as_any(), what, depth).map(Value::Array);
    }
    Err(DataTypeError::new_err(format!(
        "{what}: a {} is not a JSON value (give None, bool, int, float, str, list or dict)",
        v.get_type().name()?
    )))
}

/// An int (not a bool) or a float as a JSON number; `None` for anything else.
fn number(v: &Bound<'_, PyAny>, what: &str) -> PyResult<Option<Number>> {
    if v.is_instance_of::<PyBool>() {
        return Ok(None);
    }
    if v.is_instance_of::<PyInt>() {
        if let Ok(i) = v.extract::<i64>() {
            return Ok(Some(i.into()));
        }
        if let Ok(u) = v.extract::<u64>() {
            return Ok(Some(u.into()));
        }
        return Err(InvalidArgumentError::new_err(format!(
            "{what}: the integer {v} is outside JSON's 64-bit range"
        )));
    }
    if let Ok(f) = v.cast::<PyFloat>() {
        let x = f.value();
        return Number::from_f64(x).map(Some).ok_or_else(|| {
            InvalidArgumentError::new_err(format!("{what}: {x} is not a JSON number"))
        });
    }
    Ok(None)
}

/// The items of a list or tuple.
fn array(items: &Bound<'_, PyAny>, what: &str, depth: usize) -> PyResult<Vec<Value>> {
    items
        .try_iter()?
        .map(|x| value(&x?, what, depth + 1))
        .collect()
}

/// A dict, its keys written as `json.dumps` writes them.
fn object(d: &Bound<'_, PyDict>, what: &str, depth: usize) -> PyResult<Map<String, Value>> {
    let mut map = Map::with_capacity(d.len());
    for (k, x) in d.iter() {
        let key = if let Ok(s) = k.cast::<PyString>() {
            s.to_str()?.to_owned()
        } else if k.is_none() {
            "null".into()
        } else if let Ok(b) = k.cast::<PyBool>() {
            if b.is_true() { "true" } else { "false" }.into()
        } else if let Some(n) = number(&k, what)? {
            n.to_string()
        } else {
            return Err(DataTypeError::new_err(format!(
                "{what}: keys must be str, int, float, bool or None, not {}",
                k.get_type().name()?
            )));
        };
        map.insert(key, value(&x, what, depth + 1)?);
    }
    Ok(map)
}

/// A dict of attributes (`None`: none) as a JSON object.
pub(crate) fn attributes(d: Option<&Bound<'_, PyDict>>) -> PyResult<Map<String, Value>> {
    d.map_or_else(|| Ok(Map::new()), |d| object(d, "attributes", 0))
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

/// The arguments of `create_array`: a dict with `shape` and `dtype` (see [`data_type_of`]),
/// and optionally `chunks`, `shards`, `compressors` (absent: the default, zstd; else a list of
/// codec objects, `[]` for none), `fill_value` (its JSON form), `dimension_names`,
/// `attributes` (a dict), `lower_bound`, `sparse`, `overwrite`, `write_empty_chunks`,
/// `zarr_format` (2 or 3; absent: 3, or in a group the group's).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub(crate) struct CreateArray<'py> {
    shape: Vec<u64>,
    dtype: Bound<'py, PyAny>,
    #[pyo3(default)]
    chunks: Option<Vec<u64>>,
    #[pyo3(default)]
    shards: Option<Vec<u64>>,
    #[pyo3(default)]
    compressors: Option<Bound<'py, PyList>>,
    #[pyo3(default)]
    fill_value: Option<Bound<'py, PyAny>>,
    #[pyo3(default)]
    dimension_names: Option<Vec<Option<String>>>,
    #[pyo3(default)]
    attributes: Option<Bound<'py, PyDict>>,
    #[pyo3(default)]
    lower_bound: Option<Vec<i64>>,
    #[pyo3(default)]
    sparse: Option<String>,
    #[pyo3(default)]
    overwrite: bool,
    #[pyo3(default)]
    write_empty_chunks: bool,
    #[pyo3(default)]
    zarr_format: Option<u8>,
}

impl CreateArray<'_> {
    /// Reads the arguments from `spec` (an `InvalidArgumentError` naming the one missing or of
    /// the wrong type, with the reason).
    pub(crate) fn read(spec: &Bound<'_, PyAny>) -> PyResult<ArraySpec> {
        let args: CreateArray<'_> = spec.extract().map_err(|e: PyErr| {
            let py = spec.py();
            let mut msg = format!("create_array arguments: {e}");
            // the reasons pyo3 chains as causes (a few: a chain may loop)
            let mut cause = e.cause(py);
            for _ in 0..4 {
                let Some(c) = cause else { break };
                msg.push_str(&format!(": {c}"));
                cause = c.cause(py);
            }
            InvalidArgumentError::new_err(msg)
        })?;
        args.into_spec()
    }

    fn into_spec(self) -> PyResult<ArraySpec> {
        let compressors = self
            .compressors
            .map(|list| array(list.as_any(), "compressors", 0))
            .transpose()?;
        Ok(ArraySpec {
            shape: self.shape,
            data_type: data_type_of(&self.dtype)?,
            chunks: self.chunks,
            shards: self.shards,
            compressors,
            fill_value: self
                .fill_value
                .map(|f| to_json(&f, "fill_value"))
                .transpose()?,
            dimension_names: self.dimension_names,
            attributes: attributes(self.attributes.as_ref())?,
            lower_bound: self.lower_bound,
            sparse: self.sparse,
            overwrite: self.overwrite,
            write_empty_chunks: self.write_empty_chunks,
            zarr_format: self.zarr_format,
        })
    }
}
