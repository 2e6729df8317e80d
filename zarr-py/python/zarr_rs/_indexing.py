"""What a NumPy / zarr-python style key means: the kind of selection ``a[key]`` is.

Only the dispatch is here. The key itself goes to the engine unchanged with its kind
(``"basic"``, ``"orthogonal"``, ``"points"``, or ``"blocks"`` from ``a.blocks``): zarr-array's
``Selection`` normalises it (Ellipsis, negative indices, slices, bounds, masks, broadcasting of
point arrays), gives the output shape and raises the errors, and reads a block of ints and
step-1 slices as a region, straight into the output.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np


def _is_int(k: Any) -> bool:
    return isinstance(k, numbers.Integral) and not isinstance(k, (bool, np.bool_))


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
