"""Normalising NumPy / zarr-python style keys into what the engine takes.

The engine reads regions (a start and a shape, the fast path: chunks decode straight into the
output), orthogonal selections (per axis an int, a slice, integer positions or a boolean mask)
and points. Everything here is cheap bookkeeping on keys; no data passes through it.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import BoundsError, InvalidArgumentError


def _is_int(k: Any) -> bool:
    return isinstance(k, numbers.Integral) and not isinstance(k, (bool, np.bool_))


def _is_array_like(k: Any) -> bool:
    return isinstance(k, (list, np.ndarray)) or (
        hasattr(k, "__array__") and not isinstance(k, (slice, type(Ellipsis)))
    )


# zarr-python's (3.1.6, zarr.core.indexing) classification of key items, which decides what
# ``a[key]`` means: the same predicates, so that the same keys are taken the same way.
def _is_bool(k: Any) -> bool:
    return type(k) in (bool, np.bool_)


def _is_int_list(k: Any) -> bool:
    return isinstance(k, list) and len(k) > 0 and all(_is_int(i) for i in k)


def _is_bool_list(k: Any) -> bool:
    return isinstance(k, list) and len(k) > 0 and all(_is_bool(i) for i in k)


def _is_int_array(k: Any) -> bool:
    return not np.isscalar(k) and hasattr(k, "shape") and hasattr(k, "dtype") and k.dtype.kind in "ui"


def _is_bool_array(k: Any) -> bool:
    return hasattr(k, "shape") and hasattr(k, "dtype") and k.dtype == bool


def _is_int_or_bool_iterable(k: Any) -> bool:
    return _is_int_list(k) or _is_int_array(k) or _is_bool_array(k) or _is_bool_list(k)


def kind_of(key: Any, ndim: int) -> str:
    """What ``a[key]`` is, decided as zarr-python decides it: ``"points"`` for a boolean mask
    or one index per axis made of ints and integer arrays only (at least one array);
    ``"orthogonal"`` for one index array (or mask) per axis, or at most one of them beside ints
    and slices; ``"basic"`` otherwise (which takes ints, slices and Ellipsis, and refuses any
    other item). So ``a[[0, 2], [1, 3], :]``, which NumPy would broadcast, is refused, as
    zarr-python refuses it."""
    if isinstance(key, tuple) and len(key) == 1:
        # zarr-python classifies a 1-tuple by its item (its ``pop_fields``)
        key = key[0]
    if _is_bool_array(key):
        return "points"
    if ndim == 1 and (_is_int_list(key) or _is_int_array(key) or _is_bool_list(key)):
        return "points"
    if (
        isinstance(key, tuple)
        and len(key) == ndim
        and not any(isinstance(k, slice) or k is Ellipsis for k in key)
        and all(_is_int(k) or _is_int_list(k) or _is_int_array(k) for k in key)
        and any(_is_int_list(k) or _is_int_array(k) for k in key)
    ):
        return "points"
    if not ndim:
        return "basic"
    items = key if isinstance(key, tuple) else (key,)
    if len(items) == ndim and all(_is_int_or_bool_iterable(k) for k in items):
        return "orthogonal"
    # zarr-python takes ints and slices alone as orthogonal too; the result is the basic
    # selection's, which the engine reads as a region
    if (
        len(items) <= ndim
        and sum(_is_int_or_bool_iterable(k) for k in items) == 1
        and all(_is_int_or_bool_iterable(k) or isinstance(k, (int, slice)) for k in items)
    ):
        return "orthogonal"
    return "basic"


def _expand(key: Any, ndim: int) -> tuple:
    """The key as a tuple of ndim items (Ellipsis expanded, missing trailing axes full)."""
    if not isinstance(key, tuple):
        key = (key,)
    n_ell = sum(1 for k in key if k is Ellipsis)
    if n_ell > 1:
        raise BoundsError("an index can only have a single ellipsis ('...')")
    explicit = len(key) - n_ell
    if explicit > ndim:
        raise BoundsError(
            f"too many indices for array: array is {ndim}-dimensional, but {explicit} were indexed"
        )
    out: list = []
    for k in key:
        if k is Ellipsis:
            out.extend([slice(None)] * (ndim - explicit))
        else:
            out.append(k)
    out.extend([slice(None)] * (ndim - len(out)))
    return tuple(out)


def _position(i: int, n: int, axis: int) -> int:
    i = int(i)
    p = i + n if i < 0 else i
    if p < 0 or p >= n:
        raise BoundsError(f"index {i} is out of bounds for axis {axis} with size {n}")
    return p


@dataclass
class Region:
    """A block: start and shape per axis, and the axes an integer index drops."""

    start: list[int]
    count: list[int]
    drop: list[int]

    @property
    def out_shape(self) -> tuple[int, ...]:
        return tuple(c for d, c in enumerate(self.count) if d not in self.drop)


def _slice_tuple(s: slice) -> tuple:
    def conv(v: Any) -> int | None:
        if v is None:
            return None
        if not _is_int(v):
            raise BoundsError(f"slice indices must be integers or None, not {type(v).__name__}")
        return int(v)

    step = conv(s.step)
    if step is not None and step <= 0:
        raise BoundsError(f"slice step {step}: only positive steps are supported")
    return (conv(s.start), conv(s.stop), step)


def basic(key: Any, shape: tuple[int, ...]) -> Region | tuple:
    """A basic key (ints, slices, Ellipsis) as a Region when every slice has step 1, else as
    an orthogonal selection for the engine."""
    items = _expand(key, len(shape))
    start: list[int] = []
    count: list[int] = []
    drop: list[int] = []
    strided = False
    for d, (k, n) in enumerate(zip(items, shape)):
        if _is_int(k):
            p = _position(k, n, d)
            start.append(p)
            count.append(1)
            drop.append(d)
        elif isinstance(k, slice):
            a, b, step = _slice_tuple(k)
            lo, hi, st = slice(a, b, step).indices(n)
            if st != 1:
                strided = True
            start.append(lo)
            count.append(max(0, hi - lo))
        else:
            raise BoundsError(
                f"unsupported index {k!r} on axis {d} (use ints, slices, Ellipsis, or .oindex / "
                ".vindex for arrays)"
            )
    if strided:
        return orthogonal(items, shape)
    return Region(start, count, drop)


def orthogonal(key: Any, shape: tuple[int, ...]) -> tuple:
    """An orthogonal selection (``.oindex``): per axis an int, a slice, integer positions or
    a boolean mask."""
    items = _expand(key, len(shape))
    out: list = []
    for d, k in enumerate(items):
        if _is_int(k):
            out.append(int(k))
        elif isinstance(k, slice):
            out.append(_slice_tuple(k))
        elif _is_array_like(k):
            arr = np.asarray(k)
            if arr.ndim != 1:
                raise BoundsError(
                    f"orthogonal selection takes 1-d index arrays, axis {d} has {arr.ndim} dimensions"
                )
            if arr.dtype == bool:
                out.append(np.ascontiguousarray(arr))
            elif arr.size == 0 or np.issubdtype(arr.dtype, np.integer):
                out.append(np.ascontiguousarray(arr, dtype=np.int64))
            else:
                raise BoundsError(f"index arrays must be integers or booleans, not {arr.dtype}")
        else:
            raise BoundsError(f"unsupported index {k!r} on axis {d}")
    return ("orthogonal", out)


def points(key: Any, shape: tuple[int, ...]) -> tuple[tuple, tuple[int, ...]]:
    """A coordinate or mask selection (``.vindex``): the engine's points and the output
    shape (the broadcast shape of the index arrays)."""
    ndim = len(shape)
    if not ndim:
        raise BoundsError("a 0-d array has no coordinates to select (use a[()] or a[...])")
    if not isinstance(key, tuple):
        key = (key,)
    if len(key) == 1 and ndim > 1 or (len(key) == 1 and np.asarray(key[0]).dtype == bool):
        mask = np.asarray(key[0])
        if mask.dtype != bool:
            raise BoundsError(f"vindex takes one index array per axis ({ndim}), or a boolean mask")
        if mask.shape != tuple(shape):
            raise BoundsError(f"boolean mask of shape {mask.shape} for an array of shape {shape}")
        per_axis = [np.ascontiguousarray(a, dtype=np.int64) for a in np.nonzero(mask)]
        return ("points", per_axis), (len(per_axis[0]) if per_axis else 0,)
    if len(key) != ndim:
        raise BoundsError(f"vindex needs one index array per axis ({ndim}), got {len(key)}")
    arrays = []
    for d, k in enumerate(key):
        if isinstance(k, slice):
            raise BoundsError("vindex takes integer arrays (use .oindex for slices)")
        a = np.asarray(k)
        if a.size and not np.issubdtype(a.dtype, np.integer):
            raise BoundsError(f"index arrays must be integers, axis {d} has {a.dtype}")
        if _is_int(k):
            # an int is a list of one position, as zarr-python takes it: all ints give shape (1,)
            a = a.reshape(1)
        a = a.astype(np.int64, copy=False)
        # positions are checked before the arrays are broadcast, as zarr-python checks them
        if a.size and (a.min() < -shape[d] or a.max() >= shape[d]):
            bad = int(a.min()) if a.min() < -shape[d] else int(a.max())
            raise BoundsError(f"index {bad} is out of bounds for axis {d} with size {shape[d]}")
        arrays.append(a)
    try:
        bcast = np.broadcast_arrays(*arrays)
    except ValueError as e:
        raise InvalidArgumentError(f"index arrays do not broadcast together: {e}") from None
    out_shape = bcast[0].shape if bcast else ()
    per_axis = [np.ascontiguousarray(b.reshape(-1)) for b in bcast]
    return ("points", per_axis), out_shape


def blocks(key: Any, ndim: int) -> list:
    """A block selection (``.blocks``): per axis a chunk index or a ``(start, stop)`` range of
    chunk indices (step 1), for the engine, which finds the positions those chunks cover."""
    items = _expand(key, ndim)
    out: list = []
    for d, k in enumerate(items):
        if _is_int(k):
            out.append(int(k))
        elif isinstance(k, slice):
            a, b, step = _slice_tuple(k)
            if step not in (None, 1):
                raise BoundsError("block selections take slices with step 1")
            out.append((a, b))
        else:
            raise BoundsError(f"block selections take ints and slices, not {k!r} (axis {d})")
    return out
