"""The xarray backend: ``xr.open_dataset(path, engine="zarr_rs")`` and
``xr.open_datatree(path, engine="zarr_rs")``.

Each array of a group becomes a lazy variable (a ``BackendArray`` over the Rust engine's
orthogonal reads: only the chunks a selection touches are read). Dimensions come from the
arrays' ``dimension_names`` (or the ``_ARRAY_DIMENSIONS`` attribute xarray writes for Zarr
v2 layouts, or ``dim_0``, ``dim_1``, ...), attributes are passed through, and CF decoding
(scale/offset, ``_FillValue`` masking, times) is left to xarray (``xr.decode_cf``, with the
usual ``decode_*`` / ``mask_and_scale`` arguments).

Fill values are taken as xarray's own ``engine="zarr"`` takes them
(``use_zarr_fill_value_as_mask``, by default true for Zarr v2 groups and false for v3): either
the array's fill value becomes ``_FillValue`` (so CF decoding masks it), or a ``_FillValue``
attribute, which xarray writes to Zarr v3 encoded (floats as base64 of their bytes), is
decoded with xarray's ``FillValueCoder``; a v3 array's own fill value goes to the variable's
``encoding["fill_value"]``.

Arrays that grew in front (``regular_bounded``) open too: position 0 is coordinate
``domain[d][0]``. Each such variable carries its domain in the attribute ``zarr_rs_domain``
(``[[lower, upper], ...]``); with ``domain_index=True`` a dimension that has no coordinate
variable gets one, ``lower..upper`` (so ``sel`` works in the array's own coordinates).
"""

from __future__ import annotations

import os
import threading
from typing import Any, Iterable

import numpy as np
import xarray as xr
from xarray.backends import BackendArray, BackendEntrypoint
from xarray.core import indexing

from ._array import Array
from ._group import Group
from ._open import open as open_node

DOMAIN_ATTR = "zarr_rs_domain"


class ZarrRsBackendArray(BackendArray):
    """A lazy xarray view of a :class:`zarr_rs.Array` (outer indexing, read by the engine)."""

    def __init__(self, array: Array):
        self.array = array
        self.shape = array.shape
        self.dtype = array.dtype
        self.lock = threading.Lock()

    def __getitem__(self, key: indexing.ExplicitIndexer) -> np.ndarray:
        return indexing.explicit_indexing_adapter(
            key, self.shape, indexing.IndexingSupport.OUTER, self._raw
        )

    def _raw(self, key: tuple) -> np.ndarray:
        if all(isinstance(k, (int, np.integer, slice)) for k in key):
            return self.array[key]
        return self.array.oindex[key]


def _dims(array: Array, name: str) -> tuple[str, ...]:
    names = array.dimension_names
    if names is not None and all(n is not None for n in names):
        return tuple(names)  # type: ignore[arg-type]
    legacy = array.attrs.get("_ARRAY_DIMENSIONS")
    if isinstance(legacy, list) and len(legacy) == array.ndim:
        return tuple(legacy)
    return tuple(
        (names[d] if names is not None and names[d] is not None else f"dim_{d}")
        for d in range(array.ndim)
    )


def _fill_value_attrs(array: Array, attrs: dict, encoding: dict, fill_as_mask: bool) -> None:
    """``_FillValue`` and ``encoding["fill_value"]`` as xarray's ``ZarrStore`` sets them."""
    if fill_as_mask:
        fill = array.fill_value
        if fill is not None:
            attrs["_FillValue"] = fill
        return
    if array.zarr_format == 3:
        encoding["fill_value"] = array.fill_value
    if "_FillValue" in attrs:
        from xarray.backends.zarr import FillValueCoder

        vlen = {str: "string", bytes: "bytes"}.get(array._vlen)  # noqa: SLF001
        attrs["_FillValue"] = FillValueCoder.decode(attrs["_FillValue"], vlen or array.dtype)


def _variables(
    group: Group, domain_index: bool, fill_as_mask: bool | None = None
) -> tuple[dict, dict]:
    if fill_as_mask is None:
        # xarray's default: the Zarr fill value means "missing" in v2 data, not in v3
        fill_as_mask = group.zarr_format == 2
    variables: dict[str, xr.Variable] = {}
    coords: dict[str, xr.Variable] = {}
    for name, array in group.arrays():
        attrs = dict(array.attrs)
        attrs.pop("_ARRAY_DIMENSIONS", None)
        dims = _dims(array, name)
        if any(lo != 0 for lo, _ in array.domain):
            attrs[DOMAIN_ATTR] = [list(d) for d in array.domain]
            if domain_index:
                for dim, (lo, hi) in zip(dims, array.domain):
                    if lo != 0 and dim not in coords:
                        coords[dim] = xr.Variable((dim,), np.arange(lo, hi), {DOMAIN_ATTR: [lo, hi]})
        data = indexing.LazilyIndexedArray(ZarrRsBackendArray(array))
        encoding = {
            "chunks": array.chunks,
            "preferred_chunks": dict(zip(dims, array.shards or array.chunks)),
            "dtype": array.dtype,
        }
        _fill_value_attrs(array, attrs, encoding, fill_as_mask)
        variables[name] = xr.Variable(dims, data, attrs, encoding)
    for dim, v in coords.items():
        if dim not in variables:
            variables[dim] = v
    return variables, dict(group.attrs)


def _open_group(location: Any, group: str | None) -> Group:
    location = os.fspath(location)
    node = open_node(location, mode="r", path=(group or "").strip("/"))
    if isinstance(node, Array):
        raise ValueError(f"{location!r} (group {group!r}) is an array; give the group that holds it")
    return node


class ZarrRsBackendEntrypoint(BackendEntrypoint):
    """Opens Zarr v3 groups with the zarr_rs Rust engine (``engine="zarr_rs"``)."""

    description = "Zarr v3 groups read by the zarr-rs Rust engine (regular_bounded and sparse_layout included)"
    open_dataset_parameters = (
        "filename_or_obj", "drop_variables", "group", "domain_index", "mask_and_scale",
        "decode_times", "concat_characters", "decode_coords", "use_cftime", "decode_timedelta",
        "use_zarr_fill_value_as_mask",
    )

    def open_dataset(  # type: ignore[override]
        self,
        filename_or_obj: Any,
        *,
        drop_variables: str | Iterable[str] | None = None,
        group: str | None = None,
        domain_index: bool = False,
        mask_and_scale: bool = True,
        decode_times: bool = True,
        concat_characters: bool = True,
        decode_coords: bool = True,
        use_cftime: bool | None = None,
        decode_timedelta: bool | None = None,
        use_zarr_fill_value_as_mask: bool | None = None,
    ) -> xr.Dataset:
        g = _open_group(filename_or_obj, group)
        return self._dataset(g, drop_variables, domain_index, use_zarr_fill_value_as_mask, dict(
            mask_and_scale=mask_and_scale, decode_times=decode_times,
            concat_characters=concat_characters, decode_coords=decode_coords,
            use_cftime=use_cftime, decode_timedelta=decode_timedelta,
        ))

    @staticmethod
    def _dataset(
        g: Group, drop_variables: Any, domain_index: bool, fill_as_mask: bool | None, decode: dict
    ) -> xr.Dataset:
        variables, attrs = _variables(g, domain_index, fill_as_mask)
        if isinstance(drop_variables, str):
            drop_variables = [drop_variables]
        for name in drop_variables or ():
            variables.pop(name, None)
        ds = xr.Dataset(variables, attrs=attrs)
        return xr.decode_cf(ds, **{k: v for k, v in decode.items() if v is not None or k in ("use_cftime",)})

    def open_groups_as_dict(  # type: ignore[override]
        self,
        filename_or_obj: Any,
        *,
        drop_variables: str | Iterable[str] | None = None,
        group: str | None = None,
        domain_index: bool = False,
        use_zarr_fill_value_as_mask: bool | None = None,
        **decode: Any,
    ) -> dict[str, xr.Dataset]:
        root = _open_group(filename_or_obj, group)
        if use_zarr_fill_value_as_mask is None:
            use_zarr_fill_value_as_mask = root.zarr_format == 2
        out: dict[str, xr.Dataset] = {}

        def walk(g: Group, path: str) -> None:
            out[path] = self._dataset(
                g, drop_variables, domain_index, use_zarr_fill_value_as_mask, decode
            )
            for name, child in g.groups():
                walk(child, f"{path.rstrip('/')}/{name}")

        walk(root, "/")
        return out

    def open_datatree(  # type: ignore[override]
        self, filename_or_obj: Any, **kwargs: Any
    ) -> Any:
        return xr.DataTree.from_dict(self.open_groups_as_dict(filename_or_obj, **kwargs))

    def guess_can_open(self, filename_or_obj: Any) -> bool:
        # only when asked for by name: the zarr engine claims Zarr stores already
        return False
