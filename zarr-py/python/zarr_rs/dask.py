"""Dask: arrays whose blocks are Zarr chunks read by the Rust engine, and parallel writes.

:func:`to_dask` builds a graph whose tasks name the array by location and path (plus the
block's region), never by its data, so it pickles small and runs on a ``dask.distributed``
cluster whose workers open the array themselves (each worker process opens it once). For a
``sparse_layout`` array the blocks stay sparse:

- ``sparse="scipy"`` (the default for 2-d sparse arrays): each block is a
  :class:`CSRBlock`, a ``scipy.sparse.csr_array`` built by the engine straight from the
  chunk's sparse data; ``x.sum()``, ``x.sum(axis=0)``, ``x @ v`` and ``x.map_blocks(f)`` run
  on the sparse blocks (``CSRBlock`` adds the ``keepdims`` that Dask's reductions pass and
  the ``np.matmul`` that Dask's ``@`` calls, which plain SciPy arrays lack);
- ``sparse="pydata"`` (the default for other ranks): each block is a ``sparse.COO``;
- ``sparse=False``: dense NumPy blocks.

:func:`from_dask` writes a Dask array block by block in parallel, each task writing only
whole chunks (shards) of its own; a block layout where two tasks would write into one chunk
is refused (rechunk first), since two writers of one chunk would race.
"""

from __future__ import annotations

import itertools
import threading
from typing import Any, Literal

import numpy as np
import scipy.sparse

from .core import Array, create_array, open_array
from .errors import InvalidArgumentError


class CSRBlock(scipy.sparse.csr_array):
    """A ``scipy.sparse.csr_array`` that Dask's reductions and matrix products accept.

    Dask calls ``np.sum(block, axis=..., keepdims=True)`` and ``np.matmul(block, other)`` on
    every block; SciPy's sparse arrays take no ``keepdims`` and no ``np.matmul``. This class
    adds both (results are the small dense NumPy arrays a reduction or product yields) and
    is otherwise a plain ``csr_array``.
    """

    def sum(self, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False) -> Any:  # type: ignore[override]
        if isinstance(axis, tuple):
            axes = tuple(a % 2 for a in axis)
            axis = None if len(set(axes)) != 1 else axes[0]
        elif axis is not None:
            axis = axis % 2
        r = scipy.sparse.csr_array.sum(self, axis=axis, dtype=dtype)
        if keepdims:
            r = np.asarray(r)
            r = r.reshape((1, 1) if axis is None else (1, -1) if axis == 0 else (-1, 1))
        if out is not None:
            out[...] = r
            return out
        return r

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if ufunc is np.matmul and method == "__call__" and not kwargs and len(inputs) == 2:
            a, b = inputs
            if isinstance(a, scipy.sparse.sparray):
                return a @ np.asarray(b)
            return (b.T @ np.asarray(a).T).T
        return NotImplemented


class _Source:
    """An array named by location and path: what a task carries. Pickles to those two
    strings; each process opens the array once (cached) when a task first needs it."""

    _cache: dict[tuple[str, str, str], Array] = {}
    _lock = threading.Lock()

    def __init__(self, array: Array, mode: str = "r"):
        self.location = array.store_location
        self.path = array.path
        self.mode = mode
        self.token = array._core.metadata_json()
        self._local: Array | None = array

    def __getstate__(self) -> dict:
        if self.location.startswith("memory://"):
            raise InvalidArgumentError(
                "an array in a memory:// store cannot be sent to other processes (write it to a "
                "directory or object store)"
            )
        return {"location": self.location, "path": self.path, "mode": self.mode, "token": self.token}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._local = None

    def array(self) -> Array:
        if self._local is not None:
            return self._local
        key = (self.location, self.path, self.mode, self.token)
        with _Source._lock:
            a = _Source._cache.get(key)  # type: ignore[arg-type]
            if a is None:
                a = open_array(self.location, path=self.path, mode=self.mode)  # type: ignore[arg-type]
                _Source._cache[key] = a  # type: ignore[index]
        return a

    def __repr__(self) -> str:
        return f"zarr_rs.dask._Source({self.location!r}, path={self.path!r})"


def _block_slices(start: tuple[int, ...], count: tuple[int, ...]) -> tuple[slice, ...]:
    return tuple(slice(s, s + n) for s, n in zip(start, count))


def _read_dense(src: _Source, start: tuple[int, ...], count: tuple[int, ...]) -> np.ndarray:
    return src.array()[_block_slices(start, count)]


def _read_csr(src: _Source, start: tuple[int, ...], count: tuple[int, ...]) -> CSRBlock:
    a = src.array()
    indptr, indices, data = a._core.read_csr(list(start), list(count))
    return CSRBlock((data, indices, indptr), shape=tuple(count), copy=False)


def _read_coo(src: _Source, start: tuple[int, ...], count: tuple[int, ...]) -> Any:
    return src.array().read_coo(_block_slices(start, count))


def _spans(a: Array, blocks: str) -> list[list[tuple[int, int]]]:
    spans = a._spans()
    if blocks == "shards" or a.shards is None:
        return spans
    if blocks != "chunks":
        raise InvalidArgumentError(f"blocks={blocks!r} (use \"shards\" or \"chunks\")")
    out = []
    for sp, inner in zip(spans, a.chunks):
        axis = []
        for s, n in sp:
            axis.extend((s + k, min(inner, n - k)) for k in range(0, n, inner))
        out.append(axis)
    return out


def to_dask(
    array: Array,
    *,
    sparse: Literal["scipy", "pydata"] | bool | None = None,
    blocks: Literal["shards", "chunks"] = "shards",
    name: str | None = None,
) -> Any:
    """A ``dask.array.Array`` over ``array``, one block per chunk (per shard of a sharded
    array; ``blocks="chunks"`` for the inner chunks), each read by the Rust engine.

    ``sparse``: None picks sparse blocks for ``sparse_layout`` arrays (``"scipy"`` for 2-d,
    ``"pydata"`` otherwise) and dense ones for others; see the module docs.
    """
    import dask.array as da
    from dask.base import tokenize
    from dask.highlevelgraph import HighLevelGraph

    if sparse is None:
        sparse = ("scipy" if array.ndim == 2 else "pydata") if array.is_sparse else False
    if sparse and not array.is_sparse:
        raise InvalidArgumentError("sparse blocks need a sparse_layout array (create_array(..., sparse=...))")
    if sparse == "scipy" and array.ndim != 2:
        raise InvalidArgumentError("scipy.sparse blocks need a 2-d array (use sparse=\"pydata\")")
    if sparse not in (False, "scipy", "pydata"):
        raise InvalidArgumentError(f"sparse={sparse!r} (use None, False, \"scipy\" or \"pydata\")")
    spans = _spans(array, blocks)
    src = _Source(array)
    reader = {False: _read_dense, "scipy": _read_csr, "pydata": _read_coo}[sparse]
    name = name or "zarr_rs-" + tokenize(array.store_location, array.path, src.token, sparse, blocks)
    dsk: dict = {}
    for idx in itertools.product(*(range(len(s)) for s in spans)):
        start = tuple(spans[d][i][0] for d, i in enumerate(idx))
        count = tuple(spans[d][i][1] for d, i in enumerate(idx))
        dsk[(name, *idx)] = (reader, src, start, count)
    chunks = tuple(tuple(n for _, n in s) for s in spans)
    dt = array.dtype
    if sparse == "scipy":
        meta: Any = CSRBlock((0, 0), dtype=dt)
    elif sparse == "pydata":
        import sparse as pydata_sparse

        meta = pydata_sparse.COO.from_numpy(np.empty((0,) * array.ndim, dtype=dt))
    else:
        meta = np.empty((0,) * array.ndim, dtype=dt)
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=())
    return da.Array(graph, name, chunks, dtype=dt, meta=meta)


def _write_block(src: _Source, block: Any, start: tuple[int, ...]) -> int:
    a = src.array()
    if scipy.sparse.issparse(block) or hasattr(block, "coords"):
        a.write_sparse(block, at=start)
    else:
        block = np.asarray(block)
        a[_block_slices(start, block.shape)] = block
    return 1


def _check_aligned(dchunks: tuple[tuple[int, ...], ...], grid: tuple[int, ...], shape: tuple[int, ...]) -> None:
    for d, (sizes, c) in enumerate(zip(dchunks, grid)):
        pos = 0
        for s in sizes[:-1]:
            pos += s
            if pos % c:
                raise InvalidArgumentError(
                    f"the Dask blocks along axis {d} ({sizes}) end at position {pos}, inside a "
                    f"chunk of length {c}: two tasks would write one chunk (rechunk the Dask "
                    f"array to multiples of {c}, e.g. darr.rechunk({grid}))"
                )


def from_dask(
    darr: Any,
    path_or_url: str,
    *,
    path: str = "",
    chunks: Any = None,
    shards: Any = None,
    sparse: Literal["coo", "csr", "csc"] | None = None,
    compute: bool = True,
    **create_kwargs: Any,
) -> Any:
    """Writes a Dask array to a new array at ``path_or_url``, block by block in parallel
    (on whatever scheduler is active, a ``dask.distributed`` cluster included).

    The chunk shape defaults to the Dask blocks' (``darr.chunksize``); every block boundary
    must fall on a chunk (shard) boundary, so that each chunk is written by one task: other
    layouts are refused with the rechunk that fixes them. Sparse blocks (SciPy or
    ``sparse.COO``) are written without densifying into a ``sparse_layout`` array (``sparse``
    defaults to ``"csr"`` for 2-d SciPy blocks, ``"coo"`` for ``sparse.COO`` blocks).

    Returns the new :class:`Array`, or with ``compute=False`` a ``dask.delayed`` object whose
    computation writes the data (the array's metadata is written at once).
    """
    import dask

    if chunks is None:
        chunks = tuple(int(c) for c in darr.chunksize)
    meta = getattr(darr, "_meta", None)
    if sparse is None:
        if scipy.sparse.issparse(meta):
            sparse = "csr"
        elif meta is not None and hasattr(meta, "coords"):
            sparse = "coo"
    target = create_array(
        path_or_url, shape=darr.shape, dtype=darr.dtype, chunks=chunks, shards=shards,
        sparse=sparse, path=path, **create_kwargs,
    )
    grid = target.shards or target.chunks
    _check_aligned(darr.chunks, grid, darr.shape)
    src = _Source(target, mode="r+")
    offsets = [np.concatenate([[0], np.cumsum(c)[:-1]]).astype(int) for c in darr.chunks]
    blocks = darr.to_delayed()
    tasks = []
    for idx in itertools.product(*(range(len(c)) for c in darr.chunks)):
        start = tuple(int(offsets[d][i]) for d, i in enumerate(idx))
        tasks.append(dask.delayed(_write_block, pure=False)(src, blocks[idx], start))
    done = dask.delayed(sum)(tasks)
    if not compute:
        return done
    done.compute()
    return target
