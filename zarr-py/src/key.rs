//! Python keys as zarr-array [`Selection`]s.
//!
//! `zarr_rs.Array` decides what a key means (`_indexing.kind_of`, zarr-python's
//! classification: basic, orthogonal, points or blocks) and hands the key over unchanged. Only
//! its items are converted here: ints, slices and Ellipsis as they are, index arrays as NumPy
//! `int64` / `bool` arrays read in place (lists and arrays of other integer types through
//! `numpy.asarray` / `astype`). zarr-array normalises the selection (Ellipsis, missing axes,
//! negative indices, slices, bounds, masks, broadcasting of point arrays), computes its shape
//! and raises its errors: there is no second normaliser.

use numpy::{
    PyArrayDescrMethods, PyArrayDyn, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods,
};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt, PyList, PySlice, PyTuple};
use zarr_array::ndarray::{ArrayD, IxDyn};
use zarr_array::selection::{AxisSelection, BasicItem, BlockSelection, Selection, Slice};

use crate::error::{BoundsError, InvalidArgumentError};

/// An index array of a key.
enum IndexArray<'py> {
    Bool(Bound<'py, PyArrayDyn<bool>>),
    Int(Bound<'py, PyArrayDyn<i64>>),
}

/// One item of a key.
enum Item<'py> {
    Int(i64),
    Slice(Slice),
    Ellipsis,
    Array(IndexArray<'py>),
    Other,
}

/// Whether `k` is an integer as zarr-python takes one (`numbers.Integral`, not a bool).
fn is_integral(k: &Bound<'_, PyAny>) -> PyResult<bool> {
    if k.is_instance_of::<PyBool>() {
        return Ok(false);
    }
    if k.is_instance_of::<PyInt>() {
        return Ok(true);
    }
    let integral = k.py().import("numbers")?.getattr("Integral")?;
    k.is_instance(&integral)
}

/// A slice bound: None, or an integer (one beyond the range of `i64` clamps, as the axis
/// would clamp it).
fn bound(v: Bound<'_, PyAny>) -> PyResult<Option<i64>> {
    if v.is_none() {
        return Ok(None);
    }
    if !is_integral(&v)? {
        return Err(BoundsError::new_err(format!(
            "slice indices must be integers or None, not {}",
            v.get_type().name()?
        )));
    }
    match v.extract::<i64>() {
        Ok(i) => Ok(Some(i)),
        Err(_) if v.gt(0)? => Ok(Some(i64::MAX)),
        Err(_) => Ok(Some(i64::MIN)),
    }
}

fn slice_of(s: &Bound<'_, PySlice>) -> PyResult<Slice> {
    Ok(Slice {
        start: bound(s.getattr("start")?)?,
        stop: bound(s.getattr("stop")?)?,
        step: bound(s.getattr("step")?)?,
    })
}

/// `k` as an index array: a NumPy `bool` or `int64` array is taken as it is; other arrays and
/// lists go through `numpy.asarray` (integers of other types and empty arrays as `int64`).
fn index_array<'py>(k: &Bound<'py, PyAny>) -> PyResult<IndexArray<'py>> {
    let a = match k.cast::<PyUntypedArray>() {
        Ok(a) => a.clone(),
        Err(_) => k
            .py()
            .import("numpy")?
            .call_method1("asarray", (k,))?
            .cast_into::<PyUntypedArray>()?,
    };
    if let Ok(m) = a.cast::<PyArrayDyn<bool>>() {
        return Ok(IndexArray::Bool(m.clone()));
    }
    if let Ok(v) = a.cast::<PyArrayDyn<i64>>() {
        return Ok(IndexArray::Int(v.clone()));
    }
    let kind = a.dtype().kind();
    if matches!(kind, b'i' | b'u') || a.shape().contains(&0) {
        let v = a
            .call_method1("astype", ("int64",))?
            .cast_into::<PyArrayDyn<i64>>()?;
        return Ok(IndexArray::Int(v));
    }
    Err(BoundsError::new_err(format!(
        "index arrays must be integers or booleans, not {}",
        a.dtype()
    )))
}

fn item<'py>(k: &Bound<'py, PyAny>) -> PyResult<Item<'py>> {
    if k.is(k.py().Ellipsis()) {
        return Ok(Item::Ellipsis);
    }
    if let Ok(s) = k.cast::<PySlice>() {
        return Ok(Item::Slice(slice_of(s)?));
    }
    let is_array = k.cast::<PyUntypedArray>().is_ok();
    if !is_array && is_integral(k)? {
        // an integer beyond the range of i64 is outside every axis
        return Ok(k.extract::<i64>().map_or(Item::Other, Item::Int));
    }
    // array-likes as zarr-python takes them: lists, NumPy arrays, objects with `__array__`
    if is_array || k.is_instance_of::<PyList>() || k.hasattr("__array__")? {
        return Ok(Item::Array(index_array(k)?));
    }
    Ok(Item::Other)
}

fn refused(k: &Bound<'_, PyAny>, at: usize, hint: &str) -> PyErr {
    let repr = k.repr().map_or_else(|_| "?".to_string(), |r| r.to_string());
    BoundsError::new_err(format!(
        "unsupported index {repr} (item {at} of the key): {hint}"
    ))
}

/// The Selection `key` makes as a `kind` selection (`"basic"`, `"orthogonal"`, `"points"` or
/// `"blocks"`); a tuple's items are the key's items, anything else is one item.
pub(crate) fn selection(kind: &str, key: &Bound<'_, PyAny>) -> PyResult<Selection> {
    let items: Vec<Bound<'_, PyAny>> = match key.cast::<PyTuple>() {
        Ok(t) => t.iter().collect(),
        Err(_) => vec![key.clone()],
    };
    match kind {
        "basic" => {
            let mut out = Vec::with_capacity(items.len());
            for (at, k) in items.iter().enumerate() {
                out.push(match item(k)? {
                    Item::Int(i) => BasicItem::Index(i),
                    Item::Slice(s) => BasicItem::Slice(s),
                    Item::Ellipsis => BasicItem::Ellipsis,
                    _ => {
                        return Err(refused(
                            k,
                            at,
                            "use ints, slices, Ellipsis, or .oindex / .vindex for arrays",
                        ))
                    }
                });
            }
            Ok(Selection::Basic(out))
        }
        "orthogonal" => {
            let mut out = Vec::with_capacity(items.len());
            for (at, k) in items.iter().enumerate() {
                out.push(match item(k)? {
                    Item::Int(i) => AxisSelection::Index(i),
                    Item::Slice(s) => AxisSelection::Slice(s),
                    Item::Ellipsis => AxisSelection::Ellipsis,
                    Item::Array(a) => {
                        let ndim = match &a {
                            IndexArray::Bool(m) => m.ndim(),
                            IndexArray::Int(v) => v.ndim(),
                        };
                        if ndim != 1 {
                            return Err(BoundsError::new_err(format!(
                                "orthogonal selections take 1-d index arrays, item {at} of the \
                                 key has {ndim} dimensions"
                            )));
                        }
                        match a {
                            IndexArray::Bool(m) => AxisSelection::Mask(
                                m.readonly().as_array().iter().copied().collect(),
                            ),
                            IndexArray::Int(v) => AxisSelection::Indices(
                                v.readonly().as_array().iter().copied().collect(),
                            ),
                        }
                    }
                    Item::Other => {
                        return Err(refused(
                            k,
                            at,
                            "use ints, slices, Ellipsis, integer arrays or boolean masks",
                        ))
                    }
                });
            }
            Ok(Selection::Orthogonal(out))
        }
        "points" => {
            if let [k] = items.as_slice() {
                if let Item::Array(IndexArray::Bool(m)) = item(k)? {
                    return Ok(Selection::Mask(m.readonly().as_array().to_owned()));
                }
            }
            let mut out = Vec::with_capacity(items.len());
            for (at, k) in items.iter().enumerate() {
                out.push(match item(k)? {
                    // an int is a list of one position, as zarr-python takes it
                    Item::Int(i) => ArrayD::from_elem(IxDyn(&[1]), i),
                    Item::Array(IndexArray::Int(v)) => v.readonly().as_array().to_owned(),
                    _ => {
                        return Err(refused(
                            k,
                            at,
                            "vindex takes one integer array per axis, or one boolean mask of \
                             the array's shape (use .oindex for slices)",
                        ))
                    }
                });
            }
            Ok(Selection::Coordinates(out))
        }
        "blocks" => {
            let mut out = Vec::with_capacity(items.len());
            for (at, k) in items.iter().enumerate() {
                out.push(match item(k)? {
                    Item::Int(i) => BlockSelection::Index(i),
                    Item::Slice(s) if matches!(s.step, None | Some(1)) => {
                        BlockSelection::Range(s.start, s.stop)
                    }
                    Item::Slice(_) => {
                        return Err(BoundsError::new_err(
                            "block selections take slices with step 1",
                        ))
                    }
                    Item::Ellipsis => BlockSelection::Ellipsis,
                    _ => return Err(refused(k, at, "block selections take ints and slices")),
                });
            }
            Ok(Selection::Blocks(out))
        }
        other => Err(InvalidArgumentError::new_err(format!(
            "unknown selection kind {other:?}"
        ))),
    }
}
