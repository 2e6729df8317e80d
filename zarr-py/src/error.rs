//! zarr-array's errors as Python exceptions of the `zarr_rs.errors` hierarchy.
//!
//! The classes are defined in Python (`python/zarr_rs/errors.py`) so that each can also
//! subclass the built-in exception a Python user catches (`KeyError` and `FileNotFoundError`
//! for a missing node, `IndexError` for a selection outside the array, `ValueError` for bad
//! arguments or metadata, `OSError` for the store). The mapping below picks the class from the
//! error variant, never from its message; the message is the Rust error's, with its causes.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;
use zarr_array::zarr_store::StoreError;
use zarr_array::ArrayError;

/// The `zarr_rs.errors` class name for an error.
fn class_of(e: &ArrayError) -> &'static str {
    match e {
        ArrayError::NotFound { .. } => "NodeNotFoundError",
        ArrayError::AlreadyExists { .. } | ArrayError::NotEmpty { .. } => "NodeExistsError",
        ArrayError::WrongNodeType { .. } => "NodeTypeError",
        // zarr-python raises ValueError for `use_consolidated=True` on a group without a copy
        ArrayError::Metadata { .. } | ArrayError::NoConsolidatedMetadata { .. } => "MetadataError",
        ArrayError::Codec { .. } | ArrayError::Sparse { .. } => "ChunkError",
        ArrayError::Store(s) => match s {
            StoreError::ReadOnly { .. } => "ReadOnlyError",
            StoreError::InvalidUrl { .. }
            | StoreError::UnsupportedUrl { .. }
            | StoreError::InvalidKey { .. }
            | StoreError::InvalidPrefix { .. } => "InvalidArgumentError",
            StoreError::NotFound { .. } => "NodeNotFoundError",
            _ => "StoreError",
        },
        ArrayError::InvalidPath { .. } => "InvalidArgumentError",
        ArrayError::DataTypeMismatch { .. } => "DataTypeError",
        ArrayError::ShapeMismatch { .. } => "ShapeError",
        ArrayError::InvalidSelection(_)
        | ArrayError::Region(_)
        | ArrayError::OutOfBounds { .. } => "BoundsError",
        ArrayError::InvalidAxis { .. }
        | ArrayError::InvalidArgument { .. }
        | ArrayError::SparseStructure { .. }
        | ArrayError::AttributeInUse { .. } => "InvalidArgumentError",
        ArrayError::Grid(_) => "InvalidArgumentError",
        ArrayError::TooLarge { .. }
        | ArrayError::OutOfMemory { .. }
        | ArrayError::NdarrayShape { .. } => "TooLargeError",
        ArrayError::InvalidValue(_) => "ChunkError",
        ArrayError::Unsupported { .. }
        | ArrayError::ExtensionMissing { .. }
        | ArrayError::RankMismatch { .. }
        | ArrayError::NotSparse { .. }
        | ArrayError::NonZeroFill { .. }
        | ArrayError::CompiledOut { .. } => "UnsupportedError",
        _ => "ZarrError",
    }
}

/// The message: the error and each of its causes, once.
fn message(e: &ArrayError) -> String {
    zarr_array::report(e)
}

static ERRORS: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

/// The class `name` of `zarr_rs.errors`.
pub(crate) fn class<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyType>> {
    let module = ERRORS.get_or_try_init(py, || {
        PyModule::import(py, "zarr_rs.errors").map(Bound::unbind)
    })?;
    Ok(module.bind(py).getattr(name)?.cast_into::<PyType>()?)
}

/// An error of the `zarr_rs.errors` class `name`.
pub(crate) fn raise(name: &str, msg: String) -> PyErr {
    Python::attach(|py| match class(py, name) {
        Ok(cls) => PyErr::from_type(cls, msg),
        Err(e) => PyRuntimeError::new_err(format!("{msg} (and zarr_rs.errors failed: {e})")),
    })
}

/// Converts a zarr-array error.
pub(crate) fn to_py(e: ArrayError) -> PyErr {
    raise(class_of(&e), message(&e))
}

/// `Result<T, ArrayError>` to `PyResult<T>`.
pub(crate) trait IntoPy<T> {
    fn py_err(self) -> PyResult<T>;
}

impl<T> IntoPy<T> for Result<T, ArrayError> {
    fn py_err(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}
