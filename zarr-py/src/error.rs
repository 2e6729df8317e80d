//! zarr-array's errors as Python exceptions of the `zarr_rs.errors` hierarchy.
//!
//! The classes are defined once, in Python (`python/zarr_rs/errors.py`, the documented public
//! module), because each also subclasses the built-in exception a Python user catches
//! (`KeyError` and `FileNotFoundError` for a missing node, `IndexError` for a selection outside
//! the array, `TypeError` and `ValueError` for data of the wrong type, `OSError` for the store),
//! which a class made by `create_exception!` (one base) cannot. Rust holds each as a type of its
//! own (`import_exception!`): the class object is fetched once, when the module is loaded
//! ([`import`]), and raised as `BoundsError::new_err(..)`, never looked up by name. [`to_py`]
//! picks the class by matching the error's variant, never its message; the message is the Rust
//! error's, with its causes.

use pyo3::prelude::*;
use pyo3::types::PyType;
use pyo3::PyTypeInfo;
use zarr_array::zarr_store::StoreError as StoreFailure;
use zarr_array::{ArrayError, SelectionError};

/// Each class of `zarr_rs.errors` as a Rust exception type, and [`import`].
macro_rules! classes {
    ($($name:ident),* $(,)?) => {
        $(pyo3::import_exception!(zarr_rs.errors, $name);)*

        /// Fetches every class of `zarr_rs.errors` once, when the module is loaded (an error
        /// then, not a panic at a raise, when the module lacks one or it is no `ZarrError`).
        pub(crate) fn import(py: Python<'_>) -> PyResult<()> {
            let module = PyModule::import(py, "zarr_rs.errors")?;
            let base = module.getattr("ZarrError")?.cast_into::<PyType>()?;
            $(
                let class = module.getattr(stringify!($name))?.cast_into::<PyType>()?;
                if !class.is_subclass(&base)? {
                    return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                        "zarr_rs.errors.{} is not a subclass of ZarrError",
                        stringify!($name)
                    )));
                }
                // the class object, fetched and kept (import_exception!'s cell)
                $name::type_object(py);
            )*
            Ok(())
        }
    };
}

classes!(
    ZarrError,
    NodeNotFoundError,
    NodeExistsError,
    NodeTypeError,
    MetadataError,
    ChunkError,
    BoundsError,
    ShapeError,
    DataTypeError,
    InvalidArgumentError,
    UnsupportedError,
    TooLargeError,
    StoreError,
    ReadOnlyError,
);

/// Converts a zarr-array error: the class by its variant, the message the error's and each of
/// its causes, once.
pub(crate) fn to_py(e: ArrayError) -> PyErr {
    let msg = zarr_array::report(&e);
    match e {
        ArrayError::NotFound { .. } => NodeNotFoundError::new_err(msg),
        ArrayError::AlreadyExists { .. } | ArrayError::NotEmpty { .. } => {
            NodeExistsError::new_err(msg)
        }
        ArrayError::WrongNodeType { .. } => NodeTypeError::new_err(msg),
        // zarr-python raises ValueError for `use_consolidated=True` on a group without a copy
        ArrayError::Metadata { .. } | ArrayError::NoConsolidatedMetadata { .. } => {
            MetadataError::new_err(msg)
        }
        ArrayError::Codec { .. } | ArrayError::Sparse { .. } | ArrayError::InvalidValue(_) => {
            ChunkError::new_err(msg)
        }
        ArrayError::Store(s) => match s {
            StoreFailure::ReadOnly { .. } => ReadOnlyError::new_err(msg),
            StoreFailure::InvalidUrl { .. }
            | StoreFailure::UnsupportedUrl { .. }
            | StoreFailure::InvalidKey { .. }
            | StoreFailure::InvalidPrefix { .. }
            | StoreFailure::InvalidOption { .. } => InvalidArgumentError::new_err(msg),
            StoreFailure::NotFound { .. } => NodeNotFoundError::new_err(msg),
            _ => StoreError::new_err(msg),
        },
        ArrayError::DataTypeMismatch { .. } => DataTypeError::new_err(msg),
        ArrayError::ShapeMismatch { .. } => ShapeError::new_err(msg),
        // index arrays that do not broadcast: NumPy's and zarr-python's ValueError
        ArrayError::InvalidSelection(SelectionError::Broadcast { .. }) => {
            InvalidArgumentError::new_err(msg)
        }
        ArrayError::InvalidSelection(_)
        | ArrayError::Region(_)
        | ArrayError::OutOfBounds { .. } => BoundsError::new_err(msg),
        ArrayError::InvalidPath { .. }
        | ArrayError::InvalidAxis { .. }
        | ArrayError::InvalidArgument { .. }
        | ArrayError::SparseStructure { .. }
        | ArrayError::AttributeInUse { .. }
        | ArrayError::Grid(_) => InvalidArgumentError::new_err(msg),
        ArrayError::TooLarge { .. }
        | ArrayError::OutOfMemory { .. }
        | ArrayError::NdarrayShape { .. } => TooLargeError::new_err(msg),
        ArrayError::Unsupported { .. }
        | ArrayError::ExtensionMissing { .. }
        | ArrayError::RankMismatch { .. }
        | ArrayError::NotSparse { .. }
        | ArrayError::NonZeroFill { .. }
        | ArrayError::CompiledOut { .. } => UnsupportedError::new_err(msg),
        _ => ZarrError::new_err(msg),
    }
}

/// Converts a zarr-sparse-io error (`import_sparse`, `export_sparse`): bad input is an
/// `InvalidArgumentError` (a ValueError, as SciPy's readers raise), an unsupported format or
/// option an `UnsupportedError`, a memory limit too small a `TooLargeError`, a file that
/// cannot be read or written a `StoreError` (`FileNotFoundError` for a missing one), the
/// array side as [`to_py`] classes it, with the conversion's context.
pub(crate) fn sparse_to_py(e: zarr_sparse_io::SparseIoError) -> PyErr {
    use zarr_sparse_io::SparseIoError as E;
    let msg = zarr_array::report(&e);
    match e {
        E::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            pyo3::exceptions::PyFileNotFoundError::new_err(msg)
        }
        E::Io { .. } => StoreError::new_err(msg),
        E::Unsupported { .. } => UnsupportedError::new_err(msg),
        E::OverBudget { .. } => TooLargeError::new_err(msg),
        E::Array { source, .. } => {
            let class = to_py(*source);
            Python::attach(|py| PyErr::from_type(class.get_type(py), msg))
        }
        E::Create { source, .. } => match source.downcast::<ArrayError>() {
            Ok(a) => {
                let class = to_py(*a);
                Python::attach(|py| PyErr::from_type(class.get_type(py), msg))
            }
            Err(_) => InvalidArgumentError::new_err(msg),
        },
        _ => InvalidArgumentError::new_err(msg),
    }
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
