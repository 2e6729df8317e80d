//! `zarr_rs._core.ArrayCore`: the Rust half of `zarr_rs.Array`.
//!
//! Reads decode straight into a NumPy array that the caller allocated (`out`, a flat `uint8`
//! view of it), or hand the buffer Rust filled over to NumPy as the array's owner; writes read
//! the caller's C-contiguous buffer in place. Every read and write releases the GIL.
//! Selections arrive as the Python key and its kind (see [`crate::key`]); zarr-array normalises
//! them. A selection that is one block (ints and slices of step 1, whole chunks) is read
//! and written as a region by the engine itself.

use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyType};
use serde_json::{Map, Value};
use zarr_array::selection::Selection;
use zarr_array::Array;

use crate::engine::{self, Error, VlenItems};
use crate::error::{DataTypeError, IntoPy, InvalidArgumentError, ReadOnlyError, TooLargeError};
use crate::key;
use crate::sparse;
use crate::threads::detach;

/// A Zarr array opened by the Rust engine (private: use `zarr_rs.Array`).
#[pyclass(module = "zarr_rs._core")]
#[derive(Debug)]
pub struct ArrayCore {
    pub(crate) inner: Array,
    pub(crate) read_only: bool,
}

impl ArrayCore {
    pub(crate) fn new(inner: Array, read_only: bool) -> Self {
        ArrayCore { inner, read_only }
    }

    pub(crate) fn writable(&self) -> PyResult<()> {
        if self.read_only {
            return Err(ReadOnlyError::new_err(format!(
                "array {:?} was opened read-only (open it with mode=\"r+\" or \"a\" to write)",
                engine::array_path(&self.inner)
            )));
        }
        Ok(())
    }
}

/// A contiguous byte slice of a NumPy array.
fn bytes<'a>(a: &'a PyReadonlyArray1<'_, u8>) -> PyResult<&'a [u8]> {
    a.as_slice()
        .map_err(|e| InvalidArgumentError::new_err(format!("data buffer: {e}")))
}

pub(crate) fn parse_json_map(text: &str) -> PyResult<Map<String, Value>> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(InvalidArgumentError::new_err(
            "attributes must be a JSON object (a dict)",
        )),
        Err(e) => Err(InvalidArgumentError::new_err(format!(
            "attributes are not JSON: {e}"
        ))),
    }
}

/// Elements read from a `string` / `variable_length_bytes` array as a list of `str` /
/// `bytes` (C order).
fn vlen_list<'py>(py: Python<'py>, items: VlenItems) -> PyResult<Bound<'py, PyList>> {
    match items {
        VlenItems::Strings(v) => PyList::new(py, v.iter().map(|s| PyString::new(py, s))),
        VlenItems::Bytes(v) => PyList::new(py, v.iter().map(|b| PyBytes::new(py, b))),
    }
}

/// A list of `str` (a `string` array) or `bytes` (a `variable_length_bytes` array) as the
/// elements to write; any other element is a `DataTypeError` naming its position.
fn vlen_items(a: &Array, list: &Bound<'_, PyList>) -> PyResult<VlenItems> {
    let wrong = |k: usize, item: &Bound<'_, PyAny>, want: &str| {
        let got = item
            .get_type()
            .name()
            .map_or_else(|_| "?".to_string(), |n| n.to_string());
        DataTypeError::new_err(format!(
            "element {k} is a {got}, not {want}: an array of {} holds {want} only",
            engine::data_type_name(a)
        ))
    };
    match engine::vlen_kind(a) {
        Some(true) => list
            .iter()
            .enumerate()
            .map(|(k, item)| match item.cast::<PyString>() {
                Ok(s) => Ok(s.to_str()?.to_owned()),
                Err(_) => Err(wrong(k, &item, "str")),
            })
            .collect::<PyResult<_>>()
            .map(VlenItems::Strings),
        Some(false) => list
            .iter()
            .enumerate()
            .map(|(k, item)| match item.cast::<PyBytes>() {
                Ok(b) => Ok(b.as_bytes().to_vec()),
                Err(_) => Err(wrong(k, &item, "bytes")),
            })
            .collect::<PyResult<_>>()
            .map(VlenItems::Bytes),
        None => Err(DataTypeError::new_err(format!(
            "the array holds {}, whose elements have a fixed size (write a NumPy buffer)",
            engine::data_type_name(a)
        ))),
    }
}

#[pymethods]
impl ArrayCore {
    /// The metadata document (`zarr.json`) as JSON text.
    fn metadata_json(&self) -> String {
        engine::metadata_json(&self.inner)
    }

    /// The node path inside its store.
    #[getter]
    fn path(&self) -> String {
        engine::array_path(&self.inner).to_string()
    }

    #[getter]
    fn read_only(&self) -> bool {
        self.read_only
    }

    #[getter]
    fn shape(&self) -> Vec<u64> {
        engine::shape(&self.inner)
    }

    /// `[(lower, upper)]` per axis: the coordinates of positions `0..n` (lower is 0 unless the
    /// grid is `regular_bounded`).
    #[getter]
    fn domain(&self) -> Vec<(i64, i64)> {
        engine::domain(&self.inner)
    }

    /// The Zarr data type name.
    #[getter]
    fn data_type(&self) -> String {
        engine::data_type_name(&self.inner)
    }

    /// NumPy's `dtype.str` (native byte order): `|O` (Python objects) for `string` and
    /// `variable_length_bytes`.
    #[getter]
    fn numpy_dtype(&self) -> String {
        engine::numpy_str(self.inner.data_type())
    }

    /// The Python type of each element of a variable-size array: `str` (`string`) or `bytes`
    /// (`variable_length_bytes`); None for the fixed-size types, whose elements NumPy holds.
    #[getter]
    fn vlen_type<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyType>> {
        engine::vlen_kind(&self.inner).map(|text| {
            if text {
                py.get_type::<PyString>()
            } else {
                py.get_type::<PyBytes>()
            }
        })
    }

    #[getter]
    fn item_size(&self) -> usize {
        engine::item_size(&self.inner)
    }

    /// The fill value in its JSON form.
    fn fill_value_json(&self) -> String {
        engine::fill_value_json(&self.inner).to_string()
    }

    /// The fill value's bytes, native order.
    fn fill_bytes(&self) -> Vec<u8> {
        engine::fill_bytes(&self.inner)
    }

    /// The grid's chunk shape (the shard shape of a sharded array).
    #[getter]
    fn grid_chunk_shape(&self) -> Vec<u64> {
        engine::grid_chunk_shape(&self.inner)
    }

    /// `(start, length)` in positions of each group of `per_block` consecutive chunks along
    /// `axis` (the last group may hold fewer), for Dask's block layout; refused when there
    /// would be more than 2^22 groups, so that a grid of 2^40 chunks fails at once.
    fn block_spans(
        &self,
        py: Python<'_>,
        axis: usize,
        per_block: u64,
    ) -> PyResult<Vec<(u64, u64)>> {
        let a = &self.inner;
        detach(py, || engine::block_spans(a, axis, per_block))?.py_err()
    }

    /// The number of chunks along each axis.
    #[getter]
    fn grid_shape(&self) -> Vec<u64> {
        engine::grid_shape(&self.inner)
    }

    /// The stored chunks as `(grid index, stored bytes)`.
    fn stored_chunk_sizes(&self, py: Python<'_>) -> PyResult<Vec<(Vec<i64>, u64)>> {
        let a = &self.inner;
        detach(py, || engine::stored_chunk_sizes(a))?.py_err()
    }

    /// The Zarr format of the array's metadata: 3 (`zarr.json`) or 2 (`.zarray`).
    #[getter]
    fn zarr_format(&self) -> u8 {
        engine::zarr_format(&self.inner)
    }

    #[getter]
    fn is_sparse(&self) -> bool {
        engine::is_sparse(&self.inner)
    }

    /// Whether the array has no fill value: a v2 `.zarray` with `"fill_value": null`
    /// (zarr-python's `fill_value` is then None).
    #[getter]
    fn fill_value_is_null(&self) -> bool {
        engine::fill_value_is_null(&self.inner)
    }

    /// `"coo"`, `"csr"`, `"csc"` or None.
    #[getter]
    fn sparse_format(&self) -> Option<String> {
        engine::sparse_format(&self.inner)
    }

    /// The user attributes as JSON text.
    fn attributes_json(&self) -> String {
        Value::Object(engine::attributes(&self.inner).clone()).to_string()
    }

    /// Replaces the user attributes (JSON text of an object) and writes the metadata.
    fn set_attributes_json(&mut self, py: Python<'_>, text: &str) -> PyResult<()> {
        self.writable()?;
        let map = parse_json_map(text)?;
        let a = &mut self.inner;
        detach(py, || engine::set_attributes(a, map))?.py_err()
    }

    /// The shape a selection reads (and a write through it takes): `kind` is `"basic"`,
    /// `"orthogonal"`, `"points"` or `"blocks"`, `key` the Python key.
    fn selection_shape(&self, kind: &str, key: &Bound<'_, PyAny>) -> PyResult<Vec<u64>> {
        let sel = key::selection(kind, key)?;
        engine::selection_shape(&self.inner, &sel).py_err()
    }

    /// `(start, shape, output shape)` of the block a selection covers, when it is one (ints
    /// and slices of step 1): an axis an int selects has length 1 in `shape` and is dropped
    /// from the output shape. None for any other selection.
    #[allow(clippy::type_complexity)]
    fn selection_region(
        &self,
        kind: &str,
        key: &Bound<'_, PyAny>,
    ) -> PyResult<Option<(Vec<u64>, Vec<u64>, Vec<u64>)>> {
        let sel = key::selection(kind, key)?;
        let a = &self.inner;
        let Some((start, shape)) = engine::selection_region(a, &sel).py_err()? else {
            return Ok(None);
        };
        let out = engine::selection_shape(a, &sel).py_err()?;
        Ok(Some((start, shape, out)))
    }

    /// Reads a selection into a new NumPy array of `dtype` (the array's) and the selection's
    /// shape; the engine decodes straight into its buffer (no copy). A block (ints and slices
    /// of step 1, whole chunks) is read as a region into an array that owns its buffer; any
    /// other selection into a flat `uint8` array, returned viewed as `dtype`. Buffers come
    /// from `numpy.zeros`, so one too large for memory raises MemoryError. The GIL is
    /// released while the engine reads.
    fn read_selection<'py>(
        &self,
        py: Python<'py>,
        kind: &str,
        key: &Bound<'py, PyAny>,
        dtype: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let sel = key::selection(kind, key)?;
        let a = &self.inner;
        let shape = engine::selection_shape(a, &sel).py_err()?;
        let len = shape
            .iter()
            .try_fold(a.data_type().size(), |n, &d| {
                n.checked_mul(usize::try_from(d).ok()?)
            })
            .ok_or_else(|| TooLargeError::new_err(format!("a selection of shape {shape:?}")))?;
        let np = py.import("numpy")?;
        // only basic and block selections are asked (an orthogonal or point selection's
        // index lists would be normalised once more)
        let block = matches!(sel, Selection::Basic(_) | Selection::Blocks(_))
            && engine::selection_region(a, &sel).py_err()?.is_some();
        let (out, flat) = if block {
            let out = np.call_method1("zeros", (shape.clone(), dtype))?;
            let flat = out
                .call_method1("reshape", (-1,))?
                .call_method1("view", ("uint8",))?;
            (out, flat)
        } else {
            let flat = np.call_method1("zeros", (len, "uint8"))?;
            let out = flat
                .call_method1("view", (dtype,))?
                .call_method1("reshape", (shape,))?;
            (out, flat)
        };
        let flat = flat.cast_into::<PyArray1<u8>>()?;
        let mut rw = flat.readwrite();
        let dst = rw
            .as_slice_mut()
            .map_err(|e| InvalidArgumentError::new_err(format!("output buffer: {e}")))?;
        detach(py, || engine::read_selection_bytes_into(a, &sel, dst))?.py_err()?;
        Ok(out)
    }

    /// Writes `data` (flat `uint8` view of C-contiguous data of the selection's shape)
    /// through a selection (a block as a region). The GIL is released.
    fn write_selection(
        &self,
        py: Python<'_>,
        kind: &str,
        key: &Bound<'_, PyAny>,
        data: PyReadonlyArray1<'_, u8>,
    ) -> PyResult<()> {
        self.writable()?;
        let sel = key::selection(kind, key)?;
        let src = bytes(&data)?;
        let a = &self.inner;
        detach(py, || engine::write_selection_bytes(a, &sel, src))?.py_err()
    }

    /// Reads a selection of a `string` / `variable_length_bytes` array: `(shape, list)` of
    /// `str` / `bytes` in C order. The GIL is released while chunks are read.
    fn read_vlen_selection<'py>(
        &self,
        py: Python<'py>,
        kind: &str,
        key: &Bound<'py, PyAny>,
    ) -> PyResult<(Vec<u64>, Bound<'py, PyList>)> {
        let sel = key::selection(kind, key)?;
        let a = &self.inner;
        let (shape, items) = detach(py, || engine::read_vlen_selection(a, &sel))?.py_err()?;
        Ok((shape, vlen_list(py, items)?))
    }

    /// Writes `items` (a list of `str` / `bytes`, C order, the selection's shape) through a
    /// selection.
    fn write_vlen_selection(
        &self,
        py: Python<'_>,
        kind: &str,
        key: &Bound<'_, PyAny>,
        items: &Bound<'_, PyList>,
    ) -> PyResult<()> {
        self.writable()?;
        let sel = key::selection(kind, key)?;
        let a = &self.inner;
        let items = vlen_items(a, items)?;
        detach(py, || engine::write_vlen_selection(a, &sel, items))?.py_err()
    }

    /// Appends `items` (a list of `str` / `bytes`, C order) of `shape` after the end of
    /// `axis`.
    fn append_vlen(
        &mut self,
        py: Python<'_>,
        shape: Vec<u64>,
        items: &Bound<'_, PyList>,
        axis: usize,
    ) -> PyResult<()> {
        self.writable()?;
        let items = vlen_items(&self.inner, items)?;
        let a = &mut self.inner;
        detach(py, || engine::append_vlen(a, &shape, items, axis))?.py_err()
    }

    /// Prepends `items` (a list of `str` / `bytes`, C order) of `shape` before position 0
    /// of `axis` (`regular_bounded`).
    fn prepend_vlen(
        &mut self,
        py: Python<'_>,
        shape: Vec<u64>,
        items: &Bound<'_, PyList>,
        axis: usize,
    ) -> PyResult<()> {
        self.writable()?;
        let items = vlen_items(&self.inner, items)?;
        let a = &mut self.inner;
        detach(py, || engine::prepend_vlen(a, &shape, items, axis))?.py_err()
    }

    /// Changes the shape.
    fn resize(&mut self, py: Python<'_>, shape: Vec<u64>) -> PyResult<()> {
        self.writable()?;
        let a = &mut self.inner;
        detach(py, || engine::resize(a, &shape))?.py_err()
    }

    /// Appends data of `shape` after the end of `axis`.
    fn append(
        &mut self,
        py: Python<'_>,
        shape: Vec<u64>,
        data: PyReadonlyArray1<'_, u8>,
        axis: usize,
    ) -> PyResult<()> {
        self.writable()?;
        let src = bytes(&data)?;
        let a = &mut self.inner;
        detach(py, || engine::append(a, &shape, src, axis))?.py_err()
    }

    /// Prepends data of `shape` before position 0 of `axis` (`regular_bounded`).
    fn prepend(
        &mut self,
        py: Python<'_>,
        shape: Vec<u64>,
        data: PyReadonlyArray1<'_, u8>,
        axis: usize,
    ) -> PyResult<()> {
        self.writable()?;
        let src = bytes(&data)?;
        let a = &mut self.inner;
        detach(py, || engine::prepend(a, &shape, src, axis))?.py_err()
    }

    /// The 2-d region `start`/`shape` as CSR: `(indptr, indices, data)`, every array owning
    /// the vector Rust built; int32 indices when the region fits them, else int64.
    fn read_csr<'py>(
        &self,
        py: Python<'py>,
        start: Vec<u64>,
        shape: Vec<u64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        sparse::read_csr(self, py, start, shape)
    }

    /// The region `start`/`shape` as COO: `(coords, values)`, coords int64 of shape
    /// `(ndim, nnz)` in array positions, C order.
    fn read_coo<'py>(
        &self,
        py: Python<'py>,
        start: Vec<u64>,
        shape: Vec<u64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        sparse::read_coo(self, py, start, shape)
    }

    /// Replaces the 2-d region at `offset` with a CSR (`csr=True`) or CSC matrix given by
    /// its arrays (indices int32 or int64, data of the array's dtype; read in place).
    #[allow(clippy::too_many_arguments)]
    fn write_compressed(
        &self,
        py: Python<'_>,
        csr: bool,
        shape: (usize, usize),
        indptr: &Bound<'_, PyAny>,
        indices: &Bound<'_, PyAny>,
        data: &Bound<'_, PyAny>,
        offset: Vec<u64>,
    ) -> PyResult<()> {
        sparse::write_compressed(self, py, csr, shape, indptr, indices, data, offset)
    }

    /// Writes entries: `coords` uint64 `(ndim, nnz)` array positions, `values` of the array's
    /// dtype. A value equal to the fill value removes the entry.
    fn write_coo(
        &self,
        py: Python<'_>,
        coords: &Bound<'_, PyAny>,
        values: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        sparse::write_coo(self, py, coords, values)
    }

    /// The number of stored entries inside the array (chunk-parallel).
    fn nnz(&self, py: Python<'_>) -> PyResult<u64> {
        sparse::nnz(self, py)
    }

    /// The sum of the stored entries, as a 1-element array of NumPy's sum dtype.
    fn sum<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        sparse::sum(self, py)
    }

    /// `A @ x` for a 2-d array, `x` a contiguous 1-d array of the product's dtype.
    fn spmv<'py>(&self, py: Python<'py>, x: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        sparse::spmv(self, py, x)
    }

    /// Copies the array onto a `regular` grid at `location` (a path or url of a new node).
    fn to_regular(&self, py: Python<'_>, location: &str, path: &str) -> PyResult<ArrayCore> {
        let a = &self.inner;
        let copy = detach(py, || {
            let (store, path) = engine::open_located(location, path, engine::Access::Create, true)?;
            engine::to_regular(a, store, &path)
        })?
        .py_err()?;
        Ok(ArrayCore::new(copy, false))
    }
}

/// A sparse operation this array does not support, as a Python exception.
pub(crate) fn unsupported(reason: String) -> PyErr {
    crate::error::to_py(Error::Unsupported {
        operation: "sparse access",
        reason,
    })
}
