//! The sparse methods of `ArrayCore`: reads that hand the index and value vectors Rust built
//! over to NumPy as the arrays' owners, writes that borrow the caller's arrays, and
//! chunk-parallel nnz / sum / SpMV. Each dispatches once on the array's data type.

use numpy::{Element as NpElement, PyArray1, PyArrayMethods, PyReadonlyArray1};
use pyo3::prelude::*;
use zarr_array::zarr_layout_sparse::sprs::SpIndex;
use zarr_array::{DataType, Promote, SparseElement, SparseScalar};

use crate::array::{unsupported, ArrayCore};
use crate::engine;
use crate::error::{DataTypeError, IntoPy, InvalidArgumentError};
use crate::threads::detach;

/// Runs `$body` with `$t` bound to the Rust element type of data type `$dt` (every numeric
/// type; `bool` and raw bits have no sparse form).
macro_rules! with_sparse_type {
    ($dt:expr, $t:ident => $body:expr) => {
        match $dt {
            DataType::Int8 => {
                type $t = i8;
                $body
            }
            DataType::Int16 => {
                type $t = i16;
                $body
            }
            DataType::Int32 => {
                type $t = i32;
                $body
            }
            DataType::Int64 => {
                type $t = i64;
                $body
            }
            DataType::UInt8 => {
                type $t = u8;
                $body
            }
            DataType::UInt16 => {
                type $t = u16;
                $body
            }
            DataType::UInt32 => {
                type $t = u32;
                $body
            }
            DataType::UInt64 => {
                type $t = u64;
                $body
            }
            DataType::Float16 => {
                type $t = half::f16;
                $body
            }
            DataType::Float32 => {
                type $t = f32;
                $body
            }
            DataType::Float64 => {
                type $t = f64;
                $body
            }
            DataType::Complex64 => {
                type $t = num_complex::Complex32;
                $body
            }
            DataType::Complex128 => {
                type $t = num_complex::Complex64;
                $body
            }
            other => Err(unsupported(format!(
                "sparse access needs a numeric data type, the array holds {}",
                other.name()
            ))),
        }
    };
}

fn data_type(core: &ArrayCore) -> PyResult<DataType> {
    engine::data_type(&engine::data_type_name(&core.inner)).py_err()
}

fn read_csr_typed<'py, T: SparseElement + NpElement>(
    py: Python<'py>,
    core: &ArrayCore,
    region: &zarr_array::zarr_grid::geometry::Region,
) -> PyResult<Bound<'py, PyAny>> {
    let a = &core.inner;
    // SciPy's own choice: int32 indices for a matrix whose positions all fit in int32
    // (then every column index and entry count does), int64 otherwise
    let positions = region.shape.iter().try_fold(1u64, |n, &d| n.checked_mul(d));
    if positions.is_some_and(|n| n <= i32::MAX as u64) {
        csr_arrays::<T, i32>(py, a, region)
    } else {
        csr_arrays::<T, i64>(py, a, region)
    }
}

/// `(indptr, indices, data)` with `I` indices, each array owning the vector Rust built.
fn csr_arrays<'py, T: SparseElement + NpElement, I: SpIndex + NpElement + bytemuck::Zeroable>(
    py: Python<'py>,
    a: &zarr_array::Array,
    region: &zarr_array::zarr_grid::geometry::Region,
) -> PyResult<Bound<'py, PyAny>> {
    let (indptr, indices, data) = detach(py, || engine::read_csr::<T, I>(a, region))?.py_err()?;
    let out = (
        PyArray1::from_vec(py, indptr),
        PyArray1::from_vec(py, indices),
        PyArray1::from_vec(py, data),
    );
    Ok(out.into_pyobject(py)?.into_any())
}

fn read_coo_typed<'py, T: SparseElement + NpElement>(
    py: Python<'py>,
    core: &ArrayCore,
    region: &zarr_array::zarr_grid::geometry::Region,
) -> PyResult<Bound<'py, PyAny>> {
    let a = &core.inner;
    let (coords, values) = detach(py, || engine::read_coo::<T>(a, region))?.py_err()?;
    let ndim = coords.nrows();
    let (flat, offset) = coords.into_raw_vec_and_offset();
    debug_assert_eq!(offset.unwrap_or(0), 0);
    let flat = match bytemuck::allocation::try_cast_vec::<u64, i64>(flat) {
        Ok(v) => v,
        Err((_, v)) => v.into_iter().map(|i| i as i64).collect(),
    };
    let coords = PyArray1::from_vec(py, flat);
    let nnz = values.len();
    let coords = coords.reshape([ndim, nnz])?;
    Ok((coords, PyArray1::from_vec(py, values))
        .into_pyobject(py)?
        .into_any())
}

fn write_compressed_typed<T: SparseElement + NpElement, I: SpIndex + NpElement>(
    py: Python<'_>,
    core: &ArrayCore,
    csr: bool,
    shape: (usize, usize),
    arrays: (&Bound<'_, PyAny>, &Bound<'_, PyAny>, &Bound<'_, PyAny>),
    offset: Vec<u64>,
) -> PyResult<()> {
    let indptr: PyReadonlyArray1<'_, I> = arrays.0.extract()?;
    let indices: PyReadonlyArray1<'_, I> = arrays.1.extract()?;
    let data: PyReadonlyArray1<'_, T> = arrays.2.extract()?;
    let p = contiguous("indptr", indptr.as_slice())?;
    let i = contiguous("indices", indices.as_slice())?;
    let d = contiguous("data", data.as_slice())?;
    let a = &core.inner;
    detach(py, || {
        engine::write_compressed(a, csr, shape, (p, i, d), &offset)
    })?
    .py_err()
}

fn contiguous<'a, T>(what: &str, r: Result<&'a [T], numpy::AsSliceError>) -> PyResult<&'a [T]> {
    r.map_err(|e| InvalidArgumentError::new_err(format!("{what}: {e}")))
}

fn write_coo_typed<T: SparseElement + NpElement>(
    py: Python<'_>,
    core: &ArrayCore,
    coords: &Bound<'_, PyAny>,
    values: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let coords: numpy::PyReadonlyArray2<'_, u64> = coords.extract()?;
    let values: PyReadonlyArray1<'_, T> = values.extract()?;
    let v = values
        .as_slice()
        .map_err(|e| InvalidArgumentError::new_err(format!("values: {e}")))?;
    let c = coords.as_array();
    let a = &core.inner;
    detach(py, || engine::write_coo(a, c, v))?.py_err()
}

fn sum_typed<'py, T>(py: Python<'py>, core: &ArrayCore) -> PyResult<Bound<'py, PyAny>>
where
    T: SparseScalar + NpElement,
    T::Sum: NpElement,
{
    let a = &core.inner;
    let s = detach(py, || engine::sum::<T>(a))?.py_err()?;
    // a 1-element array: Python takes its element, a NumPy scalar of NumPy's sum dtype
    Ok(PyArray1::from_vec(py, vec![s]).into_any())
}

/// `A @ x` for an array of `A` and an `x` of `R`, computed in `R`.
fn spmv_typed<'py, A, R>(
    py: Python<'py>,
    core: &ArrayCore,
    x: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>>
where
    A: SparseScalar + Promote<R>,
    R: SparseScalar + NpElement,
{
    let x: PyReadonlyArray1<'_, R> = x.extract()?;
    let xs = x
        .as_slice()
        .map_err(|e| InvalidArgumentError::new_err(format!("x: {e}")))?;
    let a = &core.inner;
    let y = detach(py, || engine::spmv::<A, R>(a, xs))?.py_err()?;
    Ok(PyArray1::from_vec(py, y).into_any())
}

/// Runs `spmv_typed::<A, R>` for the array's data type `$a` and the vector's `$r`: every
/// pair where `R` is SciPy's result type of `A @ x` for some `x` (NumPy's `result_type`,
/// with `float16` results computed in `float32` as SciPy does), so `A` casts safely to `R`.
macro_rules! with_spmv_types {
    ($a:expr, $r:expr, ($py:expr, $core:expr, $x:expr);
     $($at:ident $ta:ty => [$($rt:ident $tr:ty),*]);* $(;)?) => {
        match ($a, $r) {
            $($(
                (DataType::$at, DataType::$rt) => spmv_typed::<$ta, $tr>($py, $core, $x),
            )*)*
            (a, r) => Err(DataTypeError::new_err(format!(
                    "no sparse product of a {} array and a {} vector (the vector is cast to \
                     the result type of both first)",
                    a.name(),
                    r.name()
                ),
            )),
        }
    };
}

/// The 2-d region `start`/`shape` as CSR: `(indptr, indices, data)`, every array owning the
/// vector Rust built; int32 indices when the region has at most `i32::MAX` positions (as
/// SciPy picks), else int64.
pub(crate) fn read_csr<'py>(
    core: &ArrayCore,
    py: Python<'py>,
    start: Vec<u64>,
    shape: Vec<u64>,
) -> PyResult<Bound<'py, PyAny>> {
    let region = engine::region(start, shape).py_err()?;
    with_sparse_type!(data_type(core)?, T => read_csr_typed::<T>(py, core, &region))
}

/// The region `start`/`shape` as COO: `(coords, values)`, coords int64 of shape
/// `(ndim, nnz)` in array positions, C order.
pub(crate) fn read_coo<'py>(
    core: &ArrayCore,
    py: Python<'py>,
    start: Vec<u64>,
    shape: Vec<u64>,
) -> PyResult<Bound<'py, PyAny>> {
    let region = engine::region(start, shape).py_err()?;
    with_sparse_type!(data_type(core)?, T => read_coo_typed::<T>(py, core, &region))
}

/// Replaces the 2-d region at `offset` with a CSR (`csr=True`) or CSC matrix given by
/// its arrays (indices int32 or int64, data of the array's dtype; read in place).
#[allow(clippy::too_many_arguments)]
pub(crate) fn write_compressed(
    core: &ArrayCore,
    py: Python<'_>,
    csr: bool,
    shape: (usize, usize),
    indptr: &Bound<'_, PyAny>,
    indices: &Bound<'_, PyAny>,
    data: &Bound<'_, PyAny>,
    offset: Vec<u64>,
) -> PyResult<()> {
    core.writable()?;
    let arrays = (indptr, indices, data);
    let wide = indptr
        .getattr("dtype")?
        .getattr("itemsize")?
        .extract::<usize>()?
        == 8;
    with_sparse_type!(data_type(core)?, T => if wide {
        write_compressed_typed::<T, i64>(py, core, csr, shape, arrays, offset)
    } else {
        write_compressed_typed::<T, i32>(py, core, csr, shape, arrays, offset)
    })
}

/// Writes entries: `coords` uint64 `(ndim, nnz)` array positions, `values` of the array's
/// dtype. A value equal to the fill value removes the entry.
pub(crate) fn write_coo(
    core: &ArrayCore,
    py: Python<'_>,
    coords: &Bound<'_, PyAny>,
    values: &Bound<'_, PyAny>,
) -> PyResult<()> {
    core.writable()?;
    with_sparse_type!(data_type(core)?, T => write_coo_typed::<T>(py, core, coords, values))
}

/// The number of stored entries inside the array (chunk-parallel).
pub(crate) fn nnz(core: &ArrayCore, py: Python<'_>) -> PyResult<u64> {
    let a = &core.inner;
    detach(py, || engine::nnz(a))?.py_err()
}

/// The sum of the stored entries, as a 1-element array of NumPy's dtype for the sum of the
/// array's (int64 / uint64 for integers, the array's dtype otherwise).
pub(crate) fn sum<'py>(core: &ArrayCore, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
    with_sparse_type!(data_type(core)?, T => sum_typed::<T>(py, core))
}

/// `A @ x` for a 2-d array, `x` a contiguous 1-d array of the product's dtype (the result
/// type of both, which the array's dtype casts to safely), computed in that type.
pub(crate) fn spmv<'py>(
    core: &ArrayCore,
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    use half::f16;
    use num_complex::{Complex32 as c64, Complex64 as c128};
    let a = data_type(core)?;
    // an array type without a sparse form: the same refusal as every other sparse call
    with_sparse_type!(a, T => Ok::<_, PyErr>(std::mem::size_of::<T>()))?;
    let name: String = x.getattr("dtype")?.getattr("name")?.extract()?;
    let r = engine::data_type(&name).py_err()?;
    with_spmv_types!(a, r, (py, core, x);
        Int8 i8 => [Int8 i8, Int16 i16, Int32 i32, Int64 i64, Float32 f32, Float64 f64,
            Complex64 c64, Complex128 c128];
        Int16 i16 => [Int16 i16, Int32 i32, Int64 i64, Float32 f32, Float64 f64, Complex64 c64,
            Complex128 c128];
        Int32 i32 => [Int32 i32, Int64 i64, Float64 f64, Complex128 c128];
        Int64 i64 => [Int64 i64, Float64 f64, Complex128 c128];
        UInt8 u8 => [UInt8 u8, UInt16 u16, UInt32 u32, UInt64 u64, Int16 i16, Int32 i32,
            Int64 i64, Float32 f32, Float64 f64, Complex64 c64, Complex128 c128];
        UInt16 u16 => [UInt16 u16, UInt32 u32, UInt64 u64, Int32 i32, Int64 i64, Float32 f32,
            Float64 f64, Complex64 c64, Complex128 c128];
        UInt32 u32 => [UInt32 u32, UInt64 u64, Int64 i64, Float64 f64, Complex128 c128];
        UInt64 u64 => [UInt64 u64, Float64 f64, Complex128 c128];
        Float16 f16 => [Float32 f32, Float64 f64, Complex64 c64, Complex128 c128];
        Float32 f32 => [Float32 f32, Float64 f64, Complex64 c64, Complex128 c128];
        Float64 f64 => [Float64 f64, Complex128 c128];
        Complex64 c64 => [Complex64 c64, Complex128 c128];
        Complex128 c128 => [Complex128 c128];
    )
}
