"""The names ``zarr_rs.core`` has always offered, kept for code that imports them from here.

The package is split by concern: :mod:`zarr_rs._array` (:class:`Array`),
:mod:`zarr_rs._group` (:class:`Group`, :class:`Unreadable`), :mod:`zarr_rs._open` (the
functions that open and create nodes), :mod:`zarr_rs._attributes` (:class:`Attributes`),
:mod:`zarr_rs._dtypes` (NumPy dtypes and data conversions) and :mod:`zarr_rs._spec` (the
arguments of ``create_array``). Import the public names from :mod:`zarr_rs` itself.
"""

from __future__ import annotations

from ._array import Array, ArrayInfo, _Indexer, _reopen_array
from ._attributes import Attributes, _Writer
from ._dtypes import (
    _KIND_RANK,
    _PRODUCT_DTYPES,
    _as_data,
    _broadcast,
    _flat_bytes,
    _np_dtype,
    _object_array,
    _product_dtype,
    _vlen_items,
)
from ._group import Group, Unreadable, _reopen_group
from ._open import (
    Mode,
    _check_mode,
    _wrap_node,
    consolidate_metadata,
    create_array,
    create_group,
    open,
    open_array,
    open_group,
)
from ._spec import (
    _DEFAULT_COMPRESSORS,
    _codec_list,
    _fill_json,
    _integral_fill,
    _plain,
    _spec,
)

__all__ = [
    "Array",
    "ArrayInfo",
    "Attributes",
    "Group",
    "Mode",
    "Unreadable",
    "consolidate_metadata",
    "create_array",
    "create_group",
    "open",
    "open_array",
    "open_group",
]
