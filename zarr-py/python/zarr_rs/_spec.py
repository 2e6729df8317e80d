"""The arguments of ``create_array`` as the engine takes them (``spec::CreateArray`` in
``zarr-py/src/spec.rs``): plain Python values, compressors as codec objects, the fill value in
its Zarr JSON form."""

from __future__ import annotations

import base64
import numbers
from collections.abc import Mapping
from typing import Any, Sequence

import numpy as np

from . import _core
from .errors import DataTypeError, InvalidArgumentError

_DEFAULT_COMPRESSORS = object()


def _spec(
    *,
    shape: Sequence[int] | int,
    dtype: Any,
    chunks: Sequence[int] | int | None = None,
    shards: Sequence[int] | None = None,
    compressors: Any = _DEFAULT_COMPRESSORS,
    fill_value: Any = None,
    dimension_names: Sequence[str | None] | None = None,
    attributes: Mapping[str, Any] | None = None,
    lower_bound: Sequence[int] | None = None,
    sparse: str | None = None,
    overwrite: bool = False,
    write_empty_chunks: bool = False,
    zarr_format: int | None = None,
) -> dict:
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    if isinstance(chunks, (int, np.integer)):
        chunks = (int(chunks),) * len(shape)
    spec: dict[str, Any] = {
        "shape": [int(n) for n in shape],
        # the engine decides the Zarr data type (of NumPy's dtype, str or bytes)
        "dtype": dtype,
        "chunks": None if chunks is None else [int(n) for n in chunks],
        "shards": None if shards is None else [int(n) for n in shards],
        "dimension_names": None if dimension_names is None else list(dimension_names),
        "attributes": dict(attributes or {}),
        "lower_bound": None if lower_bound is None else [int(v) for v in lower_bound],
        "sparse": sparse,
        "overwrite": bool(overwrite),
        "write_empty_chunks": bool(write_empty_chunks),
        "zarr_format": None if zarr_format is None else int(zarr_format),
    }
    if compressors is not _DEFAULT_COMPRESSORS:
        spec["compressors"] = _codec_list(compressors)
    if fill_value is not None:
        # the fill value as the elements of the data type the engine makes of ``dtype``
        element = np.dtype(_core.numpy_dtype(dtype))
        spec["fill_value"] = _fill_json(fill_value, element)
    return spec


def _codec_list(compressors: Any) -> list:
    """Compressors as Zarr codec objects: None or [] for none; a dict, a name, a
    zarr-python codec (anything with ``to_dict()``) or a list of those."""
    if compressors is None:
        return []
    if not isinstance(compressors, (list, tuple)):
        compressors = [compressors]
    out = []
    for c in compressors:
        if isinstance(c, str):
            out.append({"name": c})
        elif isinstance(c, Mapping):
            out.append(dict(c))
        elif hasattr(c, "to_dict"):
            out.append(_plain(c.to_dict()))
        else:
            raise InvalidArgumentError(f"compressor {c!r}: give a dict like {{'name': 'zstd', 'configuration': {{'level': 3}}}}")
    return out


def _plain(v: Any) -> Any:
    """JSON-able: enums to their values (zarr-python's codec dicts hold some)."""
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if hasattr(v, "value") and not isinstance(v, (int, float, str, bool)):
        return v.value
    return v


def _integral_fill(v: Any, dt: np.dtype) -> int:
    """An integer fill value: refused (never wrapped or truncated) when out of ``dt``'s range
    or not a whole number."""
    if isinstance(v, (numbers.Integral, np.bool_)):
        x = int(v)
    elif isinstance(v, (numbers.Real, np.floating)) and float(v).is_integer():
        x = int(v)
    else:
        raise DataTypeError(f"the fill value of a {dt} array must be a whole number, not {v!r}")
    info = np.iinfo(dt)
    if not info.min <= x <= info.max:
        raise OverflowError(f"fill value {x} out of bounds for {dt} ({info.min}..{info.max})")
    return x


def _fill_json(v: Any, dt: np.dtype) -> Any:
    """A fill value in its Zarr JSON form."""
    if dt.kind == "O":
        # string / variable_length_bytes: the text itself, bytes as base64 (zarr-python's form)
        if isinstance(v, (bytes, bytearray, np.bytes_)):
            return base64.standard_b64encode(bytes(v)).decode()
        if not isinstance(v, str):
            raise DataTypeError(f"the fill value of a str or bytes array must be one, not {v!r}")
        return v
    if dt.kind == "V":
        return list(bytes(np.asarray(v, dtype=dt).tobytes()))
    if dt.kind in "Mm":
        t = np.asarray(v).astype(dt)
        return "NaT" if np.isnat(t) else int(t.view("i8"))
    if dt.kind == "S":
        return base64.standard_b64encode(np.asarray(v, dtype=dt).item()).decode()
    if dt.kind == "U":
        return str(np.asarray(v, dtype=dt).item())
    if dt.kind in "iu" and not isinstance(v, str):
        x = _integral_fill(v, dt)
    else:
        x = np.asarray(v).astype(dt).item() if not isinstance(v, str) else v
    def f(z: float) -> Any:
        if np.isnan(z):
            return "NaN"
        if np.isinf(z):
            return "Infinity" if z > 0 else "-Infinity"
        return z
    if dt.kind == "c":
        return [f(x.real), f(x.imag)]
    if dt.kind == "f":
        return f(x)
    return x
