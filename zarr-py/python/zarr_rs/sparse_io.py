"""Sparse matrices in and out of ``sparse_layout`` arrays: Matrix Market (``.mtx``,
``.mtx.gz``), SciPy ``.npz``, anndata elements and binsparse groups, streamed within
``max_memory`` bytes whatever the matrix's size (the Rust crate zarr-sparse-io).

>>> import scipy.sparse as sp, scipy.io, zarr_rs
>>> scipy.io.mmwrite("m.mtx", sp.random(50, 40, density=0.1, format="csr"))
>>> a = zarr_rs.import_sparse("m.mtx", "m.zarr")            # CSR chunks of whole rows
>>> zarr_rs.export_sparse(a, "m.npz", layout="csc")          # scipy.sparse.load_npz reads it
>>> zarr_rs.export_sparse(a, "adata.zarr", format="anndata")  # anndata.read_zarr reads it
"""

from __future__ import annotations

import os
from typing import Literal

from . import _core
from .core import Array, open_array

__all__ = ["export_sparse", "import_sparse"]

Format = Literal["mtx", "npz", "anndata", "binsparse"]
Layout = Literal["csr", "csc", "coo"]


def import_sparse(
    source: str | os.PathLike[str],
    store: str,
    *,
    path: str = "",
    format: Format | None = None,  # noqa: A002
    chunks: tuple[int, int] | None = None,
    layout: Layout = "csr",
    dtype: str | None = None,
    max_memory: int | None = None,
    temp_dir: str | os.PathLike[str] | None = None,
) -> Array:
    """Imports a sparse matrix into a new ``sparse_layout`` array at ``path`` of ``store``
    and returns it.

    ``source`` is a Matrix Market file (``.mtx``, ``.mtx.gz``: coordinate, real / integer /
    pattern, general / symmetric), a SciPy ``.npz`` (csr, csc, coo), or the directory (or
    url) of an anndata element (``adata.zarr/X``, ``adata.zarr/layers/counts``: a
    ``csr_matrix`` / ``csc_matrix`` group, Zarr v2 or v3) or of a binsparse group; ``format``
    overrides what the name says. ``chunks`` and ``layout`` shape the array (default: CSR
    chunks of whole rows holding about 256 Ki entries); ``dtype`` sets a Matrix Market
    import's type (default float64, int64 for ``integer`` files). At most ``max_memory``
    bytes (default 1 GiB) are held; unsorted entries are sorted on the way, spilled to
    ``temp_dir``. Bad input raises (``InvalidArgumentError``, a ValueError, naming the file
    and line, member or array) and leaves no array behind.
    """
    _core.import_sparse(
        os.fspath(source),
        store,
        path,
        format,
        None if chunks is None else [int(c) for c in chunks],
        layout,
        dtype,
        max_memory,
        None if temp_dir is None else os.fspath(temp_dir),
    )
    return open_array(store, path=path, mode="r+")


def export_sparse(
    array: Array | str,
    dest: str | os.PathLike[str],
    *,
    path: str = "",
    format: Format | None = None,  # noqa: A002
    layout: Layout = "csr",
    element: str = "X",
    zarr_format: Literal[2, 3] = 3,
    max_memory: int | None = None,
    temp_dir: str | os.PathLike[str] | None = None,
) -> None:
    """Exports a 2-d sparse array (an :class:`Array`, or a store location with ``path``) to
    ``dest``: a ``.mtx`` / ``.mtx.gz`` file (general, real or integer), a ``.npz`` in
    ``layout`` (what ``scipy.sparse.load_npz`` reads), or with ``format="anndata"`` an
    AnnData store (``anndata.read_zarr`` reads it; created with ``obs`` and ``var``, or
    ``element`` added to the store there) or ``format="binsparse"`` a binsparse group, in
    Zarr ``zarr_format``. Streams band by band within ``max_memory`` bytes; nothing is left
    at ``dest`` on error.
    """
    if isinstance(array, Array):
        location, path = array.store_location, array.path
    else:
        location = array
    _core.export_sparse(
        location,
        path,
        os.fspath(dest),
        format,
        layout,
        element,
        zarr_format,
        max_memory,
        None if temp_dir is None else os.fspath(temp_dir),
    )
