"""The functions that open and create arrays and groups at a directory or url:
:func:`open`, :func:`open_array`, :func:`open_group`, :func:`create_array`,
:func:`create_group`, :func:`consolidate_metadata`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Sequence

from . import _core
from ._array import Array
from ._group import Group
from ._spec import _DEFAULT_COMPRESSORS, _spec
from .errors import InvalidArgumentError

Mode = Literal["r", "r+", "a", "w", "w-"]


def create_array(
    path_or_url: str,
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
    sparse: Literal["coo", "csr", "csc"] | None = None,
    overwrite: bool = False,
    write_empty_chunks: bool = False,
    path: str = "",
    zarr_format: int | None = None,
) -> Array:
    """Creates an array at a directory or url (``s3://bucket/prefix``, ``gs://``, ``az://``,
    ``file://``), with zarr-python 3's defaults: codecs ``bytes`` + ``zstd`` (level 0), chunks of
    about 1 MiB, fill value 0.

    - ``chunks``: the chunk shape (with ``shards``, the inner chunk shape);
    - ``shards``: store chunks in shards of this shape (``sharding_indexed``);
    - ``compressors``: None or ``[]`` for raw bytes, or codec dicts
      (``{"name": "zstd", "configuration": {"level": 3}}``), or zarr-python codecs;
    - ``lower_bound``: create a ``regular_bounded`` array whose position 0 is this coordinate;
    - ``sparse``: store chunks with ``sparse_layout`` in ``"coo"``, ``"csr"`` or ``"csc"`` form
      (the narrowest index types for the chunk shape), then the compressors;
    - ``overwrite``: replace a node at the location;
    - ``path``: a node below the location (default: the location itself);
    - ``zarr_format``: 3 (``zarr.json``) or 2 (``.zarray`` + ``.zattrs``, as zarr-python
      writes ``zarr_format=2``: no shards, ``lower_bound``, ``sparse`` or dimension names);
      ``None`` is 3, and in :meth:`Group.create_array` the group's format.

    >>> import zarr_rs
    >>> a = zarr_rs.create_array("create.zarr", shape=(4, 6), chunks=(2, 3), dtype="int16",
    ...                          fill_value=-1)
    >>> a[0, :3] = [1, 2, 3]
    >>> a[:2, :4].tolist()
    [[1, 2, 3, -1], [-1, -1, -1, -1]]
    >>> a.chunks, a.nchunks, a.nchunks_initialized
    ((2, 3), 4, 1)
    >>> s = zarr_rs.create_array("sharded.zarr", shape=(8, 8), chunks=(2, 2), shards=(4, 4),
    ...                          dtype="float32", compressors=None)
    >>> s.chunks, s.shards, s.metadata["codecs"][0]["name"]
    ((2, 2), (4, 4), 'sharding_indexed')
    """
    spec = _spec(
        shape=shape, dtype=dtype, chunks=chunks, shards=shards, compressors=compressors,
        fill_value=fill_value, dimension_names=dimension_names, attributes=attributes,
        lower_bound=lower_bound, sparse=sparse, overwrite=overwrite,
        write_empty_chunks=write_empty_chunks, zarr_format=zarr_format,
    )
    return Array(_core.create_array(path_or_url, path, spec), path_or_url, path)


def _wrap_node(core: Any, location: str, path: str) -> Array | Group:
    if isinstance(core, _core.ArrayCore):
        return Array(core, location, path)
    return Group(core, location, path)


def open(  # noqa: A001
    path_or_url: str, *, mode: Mode = "a", path: str = "", concurrency: int | None = None
) -> Array | Group:
    """Opens the array or group at a directory or url (``mode`` "r" reads only; "r+" and "a"
    read and write; as in zarr-python, "a" creates a group where there is no node).
    ``path`` names a node below the location. ``concurrency``: the requests a remote store
    keeps in flight at once (default ``ZARR_CONCURRENCY``, else 256).

    >>> import zarr_rs
    >>> g = zarr_rs.create_group("open.zarr")
    >>> _ = g.create_array("x", shape=(3,), dtype="float32")
    >>> zarr_rs.open("open.zarr", mode="r")
    <zarr_rs.Group 'open.zarr' path=''>
    >>> zarr_rs.open("open.zarr", path="x", mode="r").shape
    (3,)
    """
    _check_mode(mode, ("r", "r+", "a"))
    try:
        core = _core.open_node(path_or_url, path, mode, concurrency=concurrency)
        return _wrap_node(core, path_or_url, path)
    except KeyError:
        if mode != "a":
            raise
    return Group(_core.create_group(path_or_url, path, {}, False), path_or_url, path)


def open_array(path_or_url: str, *, mode: Mode = "a", path: str = "") -> Array:
    """Opens the array at a directory or url (``mode`` as :func:`open` takes it).

    >>> import zarr_rs
    >>> _ = zarr_rs.create_array("open_array.zarr", shape=(3,), dtype="uint8")
    >>> a = zarr_rs.open_array("open_array.zarr", mode="r+")
    >>> a[:] = [1, 2, 3]
    >>> r = zarr_rs.open_array("open_array.zarr", mode="r")
    >>> r[...].tolist(), r.read_only
    ([1, 2, 3], True)
    """
    core = _core.open_array(path_or_url, path, _check_mode(mode, ("r", "r+", "a")))
    return Array(core, path_or_url, path)


def open_group(
    path_or_url: str,
    *,
    mode: Mode = "a",
    path: str = "",
    attributes: Mapping[str, Any] | None = None,
    use_consolidated: bool | None = None,
    zarr_format: int | None = None,
) -> Group:
    """Opens the group at a directory or url. ``mode``: "r" (read only), "r+" (read and
    write, the group must exist), "a" (create it when missing), "w" (create it, replacing any
    node there), "w-" (create it, failing if a node is there). ``use_consolidated`` as
    zarr-python takes it: ``None`` opens through the group's consolidated metadata when it
    holds some (``zarr.json``'s, or a Zarr v2 group's ``.zmetadata``; members and children
    then need no further request), ``True`` requires it, ``False`` reads every child's own
    metadata. ``zarr_format`` as zarr-python takes it: ``None`` finds the format
    (``zarr.json`` first), ``2`` or ``3`` reads that format's documents only (a consolidated
    v2 hierarchy then opens in the one request of its ``.zmetadata``); a group created here
    is of that format (v3 by default).

    >>> import zarr_rs
    >>> g = zarr_rs.open_group("open_group.zarr", mode="w", attributes={"title": "demo"})
    >>> _ = g.create_group("sub")
    >>> r = zarr_rs.open_group("open_group.zarr", mode="r")
    >>> list(r), r.attrs["title"]
    (['sub'], 'demo')
    """
    _check_mode(mode, ("r", "r+", "a", "w", "w-"))
    attrs = dict(attributes or {})
    if mode in ("w", "w-"):
        core = _core.create_group(path_or_url, path, attrs, mode == "w", zarr_format)
        return Group(core, path_or_url, path)
    try:
        core = _core.open_group(path_or_url, path, mode, use_consolidated, zarr_format)
    except KeyError:
        if mode != "a":
            raise
        core = _core.create_group(path_or_url, path, attrs, False, zarr_format)
    return Group(core, path_or_url, path)


def consolidate_metadata(path_or_url: str, *, path: str = "") -> Group:
    """Writes the consolidated metadata of the group at a directory or url into its
    ``zarr.json`` (a Zarr v2 group: its ``.zmetadata``), as ``zarr.consolidate_metadata``
    does; returns the group, opened through it. Changes made through zarr_rs afterwards keep
    it true.

    >>> import zarr_rs
    >>> g = zarr_rs.create_group("consolidated.zarr")
    >>> _ = g.create_array("x", shape=(2,), dtype="int8")
    >>> zarr_rs.consolidate_metadata("consolidated.zarr").is_consolidated
    True
    >>> zarr_rs.open_group("consolidated.zarr", mode="r").is_consolidated
    True
    """
    return Group(_core.consolidate_metadata(path_or_url, path), path_or_url, path)


def create_group(
    path_or_url: str, *, path: str = "", attributes: Mapping[str, Any] | None = None,
    overwrite: bool = False, zarr_format: int | None = None,
) -> Group:
    """Creates a group at a directory or url (``zarr_format=2``: a Zarr v2 group, whose child
    groups are v2 too).

    >>> import zarr_rs
    >>> g = zarr_rs.create_group("v2.zarr", zarr_format=2, attributes={"k": 1})
    >>> g.zarr_format, g.create_group("child").zarr_format, g.attrs["k"]
    (2, 2, 1)
    """
    attrs = dict(attributes or {})
    core = _core.create_group(path_or_url, path, attrs, overwrite, zarr_format)
    return Group(core, path_or_url, path)


def _check_mode(mode: str, allowed: tuple[str, ...]) -> str:
    if mode not in allowed:
        raise InvalidArgumentError(f"mode {mode!r} (use one of {', '.join(map(repr, allowed))})")
    return mode
