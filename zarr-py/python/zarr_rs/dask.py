"""Dask: arrays whose blocks are Zarr chunks read by the Rust engine, and parallel writes.

:func:`to_dask` builds a graph whose tasks name the array by location and path (plus the
block's region), never by its data, so it pickles small and runs on a ``dask.distributed``
cluster whose workers open the array themselves (each worker process opens it once). Blocks
group whole chunks up to Dask's ``array.chunk-size`` of expected memory (``blocks=``). For a
``sparse_layout`` array the blocks stay sparse:

- ``sparse="scipy"`` (the default for 2-d sparse arrays): each block is a
  :class:`CSRBlock`, a ``scipy.sparse.csr_array`` built by the engine straight from the
  chunk's sparse data; ``x.sum()``, ``x.sum(axis=0)``, ``x @ v`` and ``x.map_blocks(f)`` run
  on the sparse blocks (``CSRBlock`` adds the ``keepdims`` that Dask's reductions pass and
  the ``np.matmul`` that Dask's ``@`` calls, which plain SciPy arrays lack); the Dask array
  is a :class:`SparseMatrix`, whose ``x @ v`` with a NumPy ``v`` is one task per row band;
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

import dask.array as da
import numpy as np
import scipy.sparse

from ._array import Array
from ._dtypes import _product_dtype
from ._open import create_array, open_array
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


class _Blocks:
    """What every read task of :func:`to_dask` carries: the array's :class:`_Source`, its
    shape and dtype (which ``dask.array.from_array`` asks for), and the kind of block to
    build. Pickles to those few fields."""

    def __init__(self, src: _Source, shape: tuple[int, ...], dtype: np.dtype, kind: Any):
        self.src, self.shape, self.dtype, self.kind = src, shape, dtype, kind
        self.ndim = len(shape)

    def __repr__(self) -> str:
        return f"zarr_rs.dask._Blocks({self.src!r}, kind={self.kind!r})"


def _read_block(blocks: _Blocks, slices: tuple[slice, ...]) -> Any:
    """One block, read by the engine: dense NumPy, a :class:`CSRBlock` or a ``sparse.COO``."""
    a = blocks.src.array()
    if blocks.kind == "scipy":
        start = [s.start for s in slices]
        count = [s.stop - s.start for s in slices]
        indptr, indices, data = a._core.read_csr(start, count)
        return CSRBlock((data, indices, indptr), shape=tuple(count), copy=False)
    if blocks.kind == "pydata":
        return a.read_coo(slices)
    return a[slices]


# The in-memory bytes of a sparse chunk, estimated from its stored bytes: SciPy's indices
# and pointers are wider than the stored ones, and the stored bytes are compressed.
_SPARSE_EXPANSION = 4


def _chunk_memory(a: Array) -> int:
    """The expected bytes of one chunk (shard) in memory: its dense size, or for a sparse
    array the mean stored chunk's bytes times ``_SPARSE_EXPANSION`` (at most the dense size)."""
    dims = [min(c, n) for c, n in zip(a._core.grid_chunk_shape, a.shape)]
    dense = int(np.prod(dims, dtype=object)) * a.dtype.itemsize
    if not a.is_sparse:
        return max(dense, 1)
    sizes = [n for _, n in a._core.stored_chunk_sizes()]
    if not sizes:
        return 1
    return max(1, min(dense, _SPARSE_EXPANSION * sum(sizes) // len(sizes)))


def _grouped(a: Array, per_block: list[int]) -> list[list[tuple[int, int]]]:
    """The spans of blocks of ``per_block[d]`` consecutive chunks (shards) along each axis
    ``d``, from the engine, which looks only at the chunks that bound each block."""
    return [a._core.block_spans(d, int(k)) for d, k in enumerate(per_block)]


def _parallelism() -> int:
    """The tasks that can run at once: the threads of the current ``dask.distributed``
    client's workers, else this machine's cores as Dask counts them."""
    import dask.system

    try:
        from distributed import default_client

        return max(1, sum(default_client().nthreads().values()))
    except (ImportError, ValueError):  # no distributed, or no client
        return max(1, dask.system.CPU_COUNT)


def _spans(a: Array, blocks: Any, min_blocks: int | None = None) -> list[list[tuple[int, int]]]:
    if a.size == 0:
        # no element, no chunk to follow: one empty block
        return [[(0, n)] for n in a.shape]
    if blocks == "chunks" and a.shards is not None:
        out = []
        for sp, inner in zip(_grouped(a, [1] * a.ndim), a.chunks):
            axis = []
            for s, n in sp:
                axis.extend((s + k, min(inner, n - k)) for k in range(0, n, inner))
            out.append(axis)
        return out
    if blocks in ("shards", "chunks"):
        return _grouped(a, [1] * a.ndim)
    if blocks == "auto":
        import dask
        from dask.utils import parse_bytes

        limit = dask.config.get("array.chunk-size", "128MiB")
        limit = parse_bytes(limit) if isinstance(limit, str) else int(limit)
        # whole chunks (shards) per block, filling the first axis first (row bands), then the
        # next, while a block's expected memory stays within Dask's array.chunk-size and
        # there are at least min_blocks blocks (as many as there are chunks, at most)
        counts = [int(n) for n in a._core.grid_shape]
        budget = max(1, limit // _chunk_memory(a))
        count = int(np.prod(counts, dtype=object))
        budget = min(budget, max(1, count // max(1, min_blocks or _parallelism())))
        per_block = []
        for n in counts:
            k = max(1, min(n, budget))
            per_block.append(k)
            budget = max(1, budget // k)
        return _grouped(a, per_block)
    if isinstance(blocks, (tuple, list)) and len(blocks) == a.ndim:
        grid = a.shards or a.chunks
        if all(isinstance(b, (int, np.integer)) and b > 0 and b % c == 0 for b, c in zip(blocks, grid)):
            return _grouped(a, [int(b) // c for b, c in zip(blocks, grid)])
        raise InvalidArgumentError(
            f"blocks={tuple(blocks)!r}: a block shape must be whole multiples of the "
            f"{'shard' if a.shards else 'chunk'} shape {grid}"
        )
    raise InvalidArgumentError(
        f"blocks={blocks!r} (use \"auto\", \"shards\", \"chunks\" or a block shape of whole chunks)"
    )


def to_dask(
    array: Array,
    *,
    sparse: Literal["scipy", "pydata"] | bool | None = None,
    blocks: Literal["auto", "shards", "chunks"] | tuple[int, ...] = "auto",
    min_blocks: int | None = None,
    name: str | None = None,
) -> Any:
    """A ``dask.array.Array`` over ``array`` whose blocks are whole chunks (shards of a
    sharded array), each read by the Rust engine.

    ``blocks``:

    - ``"auto"`` (the default): consecutive chunks (shards) grouped into blocks whose expected
      size in memory is about Dask's ``array.chunk-size`` (128 MiB unless configured, the
      budget ``dask.array.from_array(chunks="auto")`` uses), the first axis filled first
      (row bands, where Dask's auto spreads the growth over every axis), and into at least
      ``min_blocks`` blocks (when there are that many chunks) so that every worker thread
      has a block: by default the threads of the current ``dask.distributed`` client, else
      this machine's cores (``dask.system.CPU_COUNT``). A dense chunk counts its dense
      bytes; a sparse chunk its mean stored bytes times 4 (indices wider than stored, no
      compression), since its dense size overstates it by the inverse of its density (one
      listing of the stored chunks). Each task costs the scheduler milliseconds, so small
      sparse chunks one per block leave a ``dask.distributed`` cluster mostly scheduling.
    - ``"shards"``: one block per shard (per chunk of an unsharded array);
    - ``"chunks"``: one block per inner chunk of a sharded array;
    - a block shape: whole multiples of the shard (chunk) shape along every axis.

    ``sparse``: None picks sparse blocks for ``sparse_layout`` arrays (``"scipy"`` for 2-d,
    ``"pydata"`` otherwise) and dense ones for others; see the module docs.

    >>> import numpy as np, scipy.sparse, zarr_rs
    >>> from zarr_rs.dask import to_dask
    >>> s = zarr_rs.create_array("dask_sparse.zarr", shape=(4, 4), chunks=(2, 4),
    ...                          dtype="float64", sparse="csr")
    >>> s.write_sparse(scipy.sparse.csr_array(np.diag([1.0, 2.0, 3.0, 4.0])))
    >>> x = to_dask(s, blocks="chunks")
    >>> type(x).__name__, x.chunks, float(x.sum().compute())
    ('SparseMatrix', ((2, 2), (4,)), 10.0)
    >>> (x @ np.ones(4)).compute().tolist()
    [1.0, 2.0, 3.0, 4.0]
    """
    from dask.base import tokenize

    if sparse is None:
        sparse = ("scipy" if array.ndim == 2 else "pydata") if array.is_sparse else False
    if sparse and not array.is_sparse:
        raise InvalidArgumentError("sparse blocks need a sparse_layout array (create_array(..., sparse=...))")
    if sparse == "scipy" and array.ndim != 2:
        raise InvalidArgumentError("scipy.sparse blocks need a 2-d array (use sparse=\"pydata\")")
    if sparse not in (False, "scipy", "pydata"):
        raise InvalidArgumentError(f"sparse={sparse!r} (use None, False, \"scipy\" or \"pydata\")")
    spans = _spans(array, blocks, min_blocks)
    name = name or "zarr_rs-" + tokenize(
        array.store_location, array.path, array._core.metadata_json(), sparse, blocks
    )
    chunks = tuple(tuple(n for _, n in s) for s in spans)
    dt = array.dtype
    if sparse == "scipy":
        meta: Any = CSRBlock((0, 0), dtype=dt)
    elif sparse == "pydata":
        import sparse as pydata_sparse

        meta = pydata_sparse.COO.from_numpy(np.empty((0,) * array.ndim, dtype=dt))
    else:
        meta = np.empty((0,) * array.ndim, dtype=dt)
    # A Blockwise layer of read tasks (what from_array builds for any array-like), not a
    # hand-made dict: Dask fuses each read into the block-wise operation that consumes it
    # (the per-block sum, the product with a vector), so a block is built and reduced in
    # one task and never waits in a worker's memory or crosses to another worker.
    blocks_of = _Blocks(_Source(array), array.shape, dt, sparse)
    x = da.from_array(
        blocks_of, chunks=chunks, name=name, asarray=False, fancy=False, getitem=_read_block,
        meta=meta, inline_array=True,
    )
    if sparse == "scipy":
        return SparseMatrix(x.dask, x.name, x.chunks, meta=x._meta)
    return x


# The largest NumPy operand that SparseMatrix's ``@`` carries in every task (beyond it, Dask's
# own matmul, which sends the operand to the workers once).
_CARRIED_OPERAND = 1 << 20


def _band_product(blocks: list, other: np.ndarray) -> np.ndarray:
    """The product of a row band (its one block, as blockwise passes it) with ``other``."""
    (block,) = blocks
    return block @ other


class SparseMatrix(da.Array):
    """The ``dask.array.Array`` that :func:`to_dask` returns for a 2-d ``sparse_layout``
    array with SciPy blocks: a plain Dask array (every operation returns ordinary Dask
    arrays) whose ``@`` takes a short cut for a NumPy operand.

    Dask's ``x @ v`` builds a graph around ``v``: a task that holds it, one that adds an
    axis, a transfer of the result to every worker that multiplies, then a squeeze of each
    product. When ``x`` has one block along its columns and ``v`` is a NumPy vector or
    matrix of at most 1 MiB, ``x @ v`` here is instead a block-wise ``block @ v``
    with ``v`` carried in each task: one task per row band reads its block and multiplies,
    nothing travels between workers, and the product has ``x``'s row blocks. Any other
    operand (a Dask array, a larger array, blocks split along the columns) takes Dask's own
    ``matmul``. Either way the result equals SciPy's ``m @ v``.
    """

    def __matmul__(self, other: Any) -> Any:
        if (
            isinstance(other, np.ndarray)
            and other.ndim in (1, 2)
            and other.shape[0] == self.shape[1]
            and len(self.chunks[1]) == 1
            and other.nbytes <= _CARRIED_OPERAND
            and other.dtype.kind in "iufc"
        ):
            # SciPy's type of each band's block @ other (float16 results in float32)
            dtype = _product_dtype(self.dtype, other.dtype)
            # blockwise with the column index contracted and concatenate=False: the task
            # gets the row band's blocks as a list (one here) and Dask does not stack them
            # (which would copy the sparse block)
            out, new_axes = ("i", {}) if other.ndim == 1 else ("ik", {"k": other.shape[1]})
            return da.blockwise(
                _band_product, out, self, "ij", other=other, new_axes=new_axes,
                concatenate=False, dtype=dtype, meta=np.empty((0,) * other.ndim, dtype),
            )
        return super().__matmul__(other)


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

    >>> import dask.array as da, zarr_rs
    >>> d = da.arange(12, chunks=4).reshape(3, 4).rechunk((1, 4))
    >>> a = zarr_rs.from_dask(d, "from_dask.zarr")
    >>> a.chunks, a[...].sum()
    ((1, 4), np.int64(66))
    """
    import dask

    def per_axis(v: Any) -> tuple[int, ...]:
        return (int(v),) * darr.ndim if isinstance(v, (int, np.integer)) else tuple(int(c) for c in v)

    chunks = per_axis(darr.chunksize if chunks is None else chunks)
    # checked before anything is created, so that a refused layout leaves nothing behind
    _check_aligned(darr.chunks, chunks if shards is None else per_axis(shards), darr.shape)
    meta = getattr(darr, "_meta", None)
    if sparse is None:
        if scipy.sparse.issparse(meta):
            sparse = "csr"
        elif meta is not None and hasattr(meta, "coords"):
            sparse = "coo"
    # dtype= overrides the Dask array's (object arrays of str need dtype=str)
    dtype = create_kwargs.pop("dtype", darr.dtype)
    target = create_array(
        path_or_url, shape=darr.shape, dtype=dtype, chunks=chunks, shards=shards,
        sparse=sparse, path=path, **create_kwargs,
    )
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
