"""The NumPy side of an array's elements: the NumPy dtype of an array's Zarr data type (which
the engine decides), and values converted to what the engine writes (C-contiguous buffers of
the array's dtype, lists of ``str`` / ``bytes``) as NumPy's assignment converts them."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .errors import DataTypeError, ShapeError


def _np_dtype(core: Any) -> np.dtype:
    """The NumPy dtype (native byte order) of an array's Zarr data type, as the engine gives
    it: ``object`` for ``string`` and ``variable_length_bytes``, whose elements are the
    ``str`` / ``bytes`` of ``core.vlen_type``."""
    return np.dtype(core.numpy_dtype)


def _vlen_items(value: Any, kind: type, shape: tuple[int, ...]) -> list:
    """``value`` broadcast to ``shape`` as a flat list (C order) of ``kind`` (str or bytes)
    elements, for an array of variable-size elements. NumPy ``U`` / ``S`` / StringDType
    arrays are converted; anything else of another type is refused by the engine."""
    arr = value if isinstance(value, np.ndarray) else np.asarray(value, dtype=object)
    if arr.dtype.kind in "UT" and kind is str or arr.dtype.kind == "S" and kind is bytes:
        arr = arr.astype(object)
    elif arr.dtype != object:
        raise DataTypeError(
            f"cannot write {arr.dtype} data to an array of {kind.__name__} elements"
        )
    return _broadcast(arr, shape).ravel().tolist()


def _object_array(items: list, shape: Sequence[int]) -> np.ndarray:
    """A NumPy object array of ``shape`` holding ``items`` (C order)."""
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out.reshape(tuple(shape))


# Writes cast from a lower or equal kind (bool < integers, signed or not < floats < complex),
# as NumPy assignment does, and refuse what loses a kind (floats into integers, complex into
# reals, strings or objects into numbers).
_KIND_RANK = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}


def _as_data(value: Any, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    """``value`` as a C-contiguous array of ``dtype`` and ``shape``, copied only when it must be
    (another dtype, broadcasting, a non-contiguous layout). Python ints (scalars and lists) out
    of the range of an integer ``dtype`` raise OverflowError, as NumPy's and zarr-python's
    assignments do; NumPy integers and arrays are cast as NumPy casts them."""
    arr = np.asarray(value)
    if (
        dtype.kind in "iu"
        and arr.dtype.kind in "iuO"
        and not isinstance(value, (np.ndarray, np.generic))
    ):
        # NumPy checks the range of Python ints converted to a given dtype (not of arrays cast)
        arr = np.asarray(value, dtype=dtype)
    if arr.dtype != dtype:
        if arr.dtype.kind == "V" or dtype.kind == "V":
            if arr.dtype.itemsize != dtype.itemsize or arr.dtype.kind != dtype.kind:
                raise DataTypeError(f"cannot write {arr.dtype} data to an array of {dtype}")
            arr = arr.view(dtype)
        elif dtype.kind in "MmUS" and arr.dtype.kind == dtype.kind:
            # another unit or width of the same kind: NumPy's assignment (strings cut to width)
            arr = arr.astype(dtype)
        elif _KIND_RANK.get(arr.dtype.kind, 9) > _KIND_RANK.get(dtype.kind, -1):
            raise DataTypeError(
                f"cannot write {arr.dtype} data to an array of {dtype} (convert it first, "
                f"e.g. data.astype({str(dtype)!r}))"
            )
        else:
            arr = arr.astype(dtype)
    return np.ascontiguousarray(_broadcast(arr, shape))


# The types a sparse product is computed in (every numeric type but float16, which SciPy
# replaces by float32, and longdouble).
_PRODUCT_DTYPES = (
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64", "complex64", "complex128",
)


def _product_dtype(a: Any, b: Any) -> np.dtype:
    """SciPy's result type of a sparse ``A @ x`` for an ``A`` of dtype ``a`` and an ``x`` of
    ``b``: NumPy's ``result_type`` of both, with a float16 result raised to float32 (SciPy
    has no float16 arithmetic and takes the first type it supports). A DataTypeError when
    NumPy has no common type (strings, datetimes, objects)."""
    try:
        r = np.result_type(np.dtype(a), np.dtype(b))
    except TypeError as e:  # numpy's DTypePromotionError
        raise DataTypeError(f"no product of {a} and {b} data: {e}") from None
    if r.kind not in "biufc":
        raise DataTypeError(f"no product of {a} and {b} data (their common type is {r})")
    return np.dtype(np.float32) if r == np.float16 else r


def _broadcast(arr: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``arr`` broadcast to ``shape`` (a view), or a ShapeError."""
    if arr.shape == tuple(shape):
        return arr
    try:
        return np.broadcast_to(arr, shape)
    except ValueError:
        raise ShapeError(
            f"could not broadcast data of shape {arr.shape} to the selection's shape "
            f"{tuple(shape)}"
        ) from None


def _flat_bytes(arr: np.ndarray) -> np.ndarray:
    """A flat uint8 view of a C-contiguous array (no copy)."""
    return arr.reshape(-1).view(np.uint8)
