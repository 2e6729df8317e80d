""":class:`Array`: a Zarr array with zarr-python's indexing, on top of the Rust engine
(``zarr_rs._core.ArrayCore``)."""

from __future__ import annotations

import json
from typing import Any, Sequence

import numpy as np

from . import _core, _indexing
from ._attributes import Attributes, _Writer
from ._dtypes import (
    _PRODUCT_DTYPES,
    _as_data,
    _flat_bytes,
    _np_dtype,
    _object_array,
    _product_dtype,
    _vlen_items,
)
from .errors import BoundsError, DataTypeError, InvalidArgumentError, ShapeError


class _Indexer:
    def __init__(self, array: "Array", kind: str):
        self._a = array
        self._kind = kind

    def __getitem__(self, key: Any) -> np.ndarray:
        return self._a._get(self._kind, key)

    def __setitem__(self, key: Any, value: Any) -> None:
        self._a._set(self._kind, key, value)


class Array:
    """A Zarr v3 array, read and written by the Rust engine.

    Indexing follows zarr-python's ``Array``: ``a[...]``, ``a[1:5, ::2]``, ``a[-1]``,
    ``a.oindex[[0, 3], :]``, ``a.vindex[[0, 1], [2, 3]]``, ``a[mask]``, ``a.blocks[0, 1]``.
    Reads return NumPy arrays that own the memory the engine decoded into; writes take any
    C-contiguous buffer of the array's dtype without copying it. The GIL is released while
    chunks are fetched, decoded and encoded.

    >>> import numpy as np, zarr_rs
    >>> a = zarr_rs.create_array("array.zarr", shape=(4, 5), chunks=(2, 2), dtype="int32")
    >>> a[...] = np.arange(20).reshape(4, 5)
    >>> a[1, 1:4].tolist()
    [6, 7, 8]
    >>> a.oindex[[0, 3], [1, 4]].tolist()
    [[1, 4], [16, 19]]
    >>> a.vindex[[0, 3], [1, 4]].tolist()
    [1, 19]
    >>> a[a[...] > 17].tolist()
    [18, 19]
    >>> a.blocks[1, 2].tolist()
    [[14], [19]]
    """

    def __init__(self, core: Any, location: str, path: str = ""):
        self._core = core
        self._location = location
        self._path = path
        self._dtype = _np_dtype(core)
        # str or bytes for the variable-size types, else None
        self._vlen = core.vlen_type
        self._meta: dict | None = None

    # ---- pickling: the location and path, never the data ----
    def __reduce__(self) -> tuple:
        if self._location.startswith("memory://"):
            raise InvalidArgumentError(
                "an array in a memory:// store cannot be pickled (other processes cannot see it)"
            )
        mode = "r" if self._core.read_only else "r+"
        return (_reopen_array, (self._location, self._path, mode))

    # ---- metadata ----
    @property
    def metadata(self) -> dict:
        """The metadata document (``zarr.json``) as a dict."""
        if self._meta is None:
            self._meta = json.loads(self._core.metadata_json())
        return self._meta

    def _changed(self) -> None:
        self._meta = None

    @property
    def store_location(self) -> str:
        """The path or url of the store the array is in."""
        return self._location

    @property
    def path(self) -> str:
        """The array's path inside its store ("" for the node at the location itself)."""
        return self._path

    @property
    def name(self) -> str:
        """The absolute node name, as zarr-python gives it (``/`` + path)."""
        return "/" + self._path

    @property
    def read_only(self) -> bool:
        """Whether the array was opened with mode "r"."""
        return bool(self._core.read_only)

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape (positions ``0..n`` per axis)."""
        return tuple(self._core.shape)

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self._core.shape)

    @property
    def size(self) -> int:
        """The number of elements."""
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def dtype(self) -> np.dtype:
        """The NumPy dtype (native byte order); ``object`` for ``string`` (elements are
        ``str``) and ``variable_length_bytes`` (``bytes``) arrays."""
        return self._dtype

    @property
    def nbytes(self) -> int:
        """The size of the array's data uncompressed, in bytes."""
        return self.size * self._dtype.itemsize

    def _sharding(self) -> dict | None:
        codecs = self.metadata.get("codecs", [])
        if len(codecs) == 1 and codecs[0].get("name") == "sharding_indexed":
            return codecs[0].get("configuration", {})
        return None

    @property
    def chunks(self) -> tuple[int, ...]:
        """The chunk shape (of a sharded array, the inner chunk shape), as zarr-python."""
        sh = self._sharding()
        if sh is not None:
            return tuple(sh["chunk_shape"])
        return tuple(self._core.grid_chunk_shape)

    @property
    def shards(self) -> tuple[int, ...] | None:
        """The shard shape of a sharded array, else None."""
        if self._sharding() is None:
            return None
        return tuple(self._core.grid_chunk_shape)

    @property
    def domain(self) -> tuple[tuple[int, int], ...]:
        """``(lower, upper)`` per axis: position ``i`` is coordinate ``lower + i``. The lower
        bound is 0 unless the array grew in front (``prepend``, the ``regular_bounded`` grid)."""
        return tuple(tuple(d) for d in self._core.domain)

    @property
    def fill_value(self) -> Any:
        """The fill value, a NumPy scalar of the array's dtype (a ``str`` or ``bytes`` for
        the variable-size types); None for a v2 array whose ``.zarray`` has
        ``"fill_value": null``, as zarr-python gives it."""
        if self._core.fill_value_is_null:
            return None
        if self._vlen is str:
            return json.loads(self._core.fill_value_json())
        if self._vlen is bytes:
            return bytes(self._core.fill_bytes())
        return np.frombuffer(bytes(self._core.fill_bytes()), dtype=self._dtype)[0]

    @property
    def dimension_names(self) -> tuple[str | None, ...] | None:
        """The dimension names, or None."""
        names = self.metadata.get("dimension_names")
        return None if names is None else tuple(names)

    @property
    def attrs(self) -> Attributes:
        """The user attributes (changes are written at once)."""
        return Attributes(_Writer(self._core, self._changed))

    @property
    def zarr_format(self) -> int:
        """The Zarr format of the array's metadata: 3 (``zarr.json``) or 2 (``.zarray``)."""
        return int(self._core.zarr_format)

    @property
    def is_sparse(self) -> bool:
        """Whether chunks are stored with ``sparse_layout`` (the sparse methods apply)."""
        return bool(self._core.is_sparse)

    @property
    def sparse_format(self) -> str | None:
        """``"coo"``, ``"csr"``, ``"csc"`` or None."""
        return self._core.sparse_format

    @property
    def nchunks(self) -> int:
        """The number of chunks (shards of a sharded array) of the grid."""
        return int(np.prod(self._core.grid_shape, dtype=object))

    @property
    def nchunks_initialized(self) -> int:
        """The number of stored chunks (shards)."""
        return len(self._core.stored_chunk_sizes())

    @property
    def nbytes_stored(self) -> int:
        """The bytes stored: every chunk (shard) plus the metadata document."""
        chunks = sum(size for _, size in self._core.stored_chunk_sizes())
        return chunks + len(self._core.metadata_json())

    @property
    def info(self) -> "ArrayInfo":
        """A summary (its ``repr`` prints like zarr-python's ``Array.info``).

        >>> import zarr_rs
        >>> info = zarr_rs.create_array("info.zarr", shape=(4, 4), chunks=(2, 4), dtype="int8").info
        >>> info.fields["Chunk shape"], info.fields["Codecs"], info.fields["Chunks initialized"]
        ((2, 4), ['bytes', 'zstd'], '0/2')
        """
        return ArrayInfo(self)

    def __repr__(self) -> str:
        return f"<zarr_rs.Array {self._location!r} path={self._path!r} shape={self.shape} dtype={self._dtype}>"

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    # ---- dense reads and writes ----
    # The key goes to the engine as it is, with its kind (``_indexing.kind_of``, or the
    # indexer used): the engine normalises it, checks it, gives the shape and raises the
    # errors. A block (ints and slices of step 1) is read and written as a region, chunks
    # decoded straight into the output the engine allocates and NumPy then owns.
    def _get(self, kind: str, key: Any) -> np.ndarray:
        if self._vlen is not None:
            shape, items = self._core.read_vlen_selection(kind, key)
            return _object_array(items, shape)
        return self._core.read_selection(kind, key, self._dtype)

    def _set(self, kind: str, key: Any, value: Any) -> None:
        shape = tuple(self._core.selection_shape(kind, key))
        if self._vlen is not None:
            self._core.write_vlen_selection(kind, key, _vlen_items(value, self._vlen, shape))
            return
        data = _as_data(value, self._dtype, shape)
        self._core.write_selection(kind, key, _flat_bytes(data))

    def __getitem__(self, key: Any) -> np.ndarray:
        return self._get(_indexing.kind_of(key, self.ndim), key)

    def __setitem__(self, key: Any, value: Any) -> None:
        self._set(_indexing.kind_of(key, self.ndim), key, value)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        a = self[...]
        return a if dtype is None else a.astype(dtype, copy=False)

    @property
    def oindex(self) -> _Indexer:
        """Orthogonal (outer) indexing: per axis an int, a slice, integer positions or a
        boolean mask."""
        return _Indexer(self, "orthogonal")

    @property
    def vindex(self) -> _Indexer:
        """Coordinate (point) indexing with integer arrays that broadcast together, or a
        boolean mask of the array's shape."""
        return _Indexer(self, "points")

    @property
    def blocks(self) -> _Indexer:
        """Whole chunks (shards of a sharded array) by chunk index per axis."""
        return _Indexer(self, "blocks")

    def get_basic_selection(self, selection: Any = Ellipsis) -> np.ndarray:
        """As ``a[selection]`` with ints, slices and Ellipsis."""
        return self._get("basic", selection)

    def set_basic_selection(self, selection: Any, value: Any) -> None:
        """As ``a[selection] = value`` with ints, slices and Ellipsis."""
        self._set("basic", selection, value)

    def get_orthogonal_selection(self, selection: Any) -> np.ndarray:
        """As ``a.oindex[selection]``."""
        return self._get("orthogonal", selection)

    def set_orthogonal_selection(self, selection: Any, value: Any) -> None:
        """As ``a.oindex[selection] = value``."""
        self._set("orthogonal", selection, value)

    def get_coordinate_selection(self, selection: Any) -> np.ndarray:
        """As ``a.vindex[selection]``."""
        return self._get("points", selection)

    def set_coordinate_selection(self, selection: Any, value: Any) -> None:
        """As ``a.vindex[selection] = value``."""
        self._set("points", selection, value)

    def get_block_selection(self, selection: Any) -> np.ndarray:
        """As ``a.blocks[selection]``."""
        return self._get("blocks", selection)

    # ---- growth ----
    def _grow_data(self, data: Any, axis: int) -> np.ndarray:
        if self._vlen is not None and not isinstance(data, np.ndarray):
            arr = np.asarray(data, dtype=object)
        else:
            arr = np.asarray(data)
        if arr.ndim != self.ndim:
            raise ShapeError(
                f"data has {arr.ndim} dimensions but the array has {self.ndim}"
            )
        if self._vlen is not None:
            return arr
        return _as_data(arr, self._dtype, arr.shape)

    def append(self, data: Any, axis: int = 0) -> tuple[int, ...]:
        """Appends ``data`` after the end of ``axis`` (its other axes match the array's);
        new chunks are written first, the metadata last. Returns the new shape.

        >>> import numpy as np, zarr_rs
        >>> a = zarr_rs.create_array("append.zarr", shape=(2, 3), chunks=(2, 3), dtype="int8")
        >>> a.append(np.ones((1, 3), dtype="int8"))
        (3, 3)
        >>> a.append(np.full((3, 2), 7, dtype="int8"), axis=1)
        (3, 5)
        >>> a[...].tolist()
        [[0, 0, 0, 7, 7], [0, 0, 0, 7, 7], [1, 1, 1, 7, 7]]
        """
        axis = self._axis(axis)
        arr = self._grow_data(data, axis)
        if self._vlen is not None:
            self._core.append_vlen(list(arr.shape), _vlen_items(arr, self._vlen, arr.shape), axis)
        else:
            self._core.append(list(arr.shape), _flat_bytes(arr), axis)
        self._changed()
        return self.shape

    def prepend(self, data: Any, axis: int = 0) -> tuple[int, ...]:
        """Adds ``data`` before position 0 of ``axis``: existing data keeps its coordinates
        (the lower bound of :attr:`domain` moves down) and existing chunks are not rewritten
        when the prepend is chunk-aligned. The grid becomes ``regular_bounded``, which
        zarr-python cannot read: :meth:`to_regular` makes a copy it can. Returns the new
        shape.

        >>> import numpy as np, zarr_rs
        >>> a = zarr_rs.create_array("prepend.zarr", shape=(2,), chunks=(2,), dtype="int8")
        >>> a[...] = [5, 6]
        >>> a.prepend(np.array([1, 2], dtype="int8"))
        (4,)
        >>> a[...].tolist(), a.domain
        ([1, 2, 5, 6], ((-2, 2),))
        """
        axis = self._axis(axis)
        arr = self._grow_data(data, axis)
        if self._vlen is not None:
            self._core.prepend_vlen(list(arr.shape), _vlen_items(arr, self._vlen, arr.shape), axis)
        else:
            self._core.prepend(list(arr.shape), _flat_bytes(arr), axis)
        self._changed()
        return self.shape

    def resize(self, *shape: Any) -> None:
        """Changes the shape: ``a.resize((10, 20))`` or ``a.resize(10, 20)``. Chunks outside
        the new shape are deleted; positions that appear read as the fill value.

        >>> import zarr_rs
        >>> a = zarr_rs.create_array("resize.zarr", shape=(4,), chunks=(2,), dtype="int8",
        ...                          fill_value=9)
        >>> a[...] = [1, 2, 3, 4]
        >>> a.resize(3)
        >>> a.resize((5,))
        >>> a[...].tolist()
        [1, 2, 3, 9, 9]
        """
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        self._core.resize([int(n) for n in shape])
        self._changed()

    def _axis(self, axis: int) -> int:
        if not -self.ndim <= axis < self.ndim:
            raise InvalidArgumentError(f"axis {axis} is out of range for an array of rank {self.ndim}")
        return axis % self.ndim

    def to_regular(self, path_or_url: str, *, path: str = "") -> "Array":
        """Copies the array onto a plain ``regular`` grid at a new location (same positions,
        chunks and codecs), for readers without ``regular_bounded`` (zarr-python, TensorStore).
        The original domain is kept in the copy's attributes under ``"regular_bounded"``.

        >>> import numpy as np, zarr_rs
        >>> a = zarr_rs.create_array("bounded.zarr", shape=(2,), chunks=(2,), dtype="int8")
        >>> a.prepend(np.ones(2, dtype="int8"))
        (4,)
        >>> r = a.to_regular("regular.zarr")
        >>> r.domain, r[...].tolist(), r.attrs["regular_bounded"]["domain"]
        (((0, 4),), [1, 1, 0, 0], [[-2, 2]])
        """
        core = self._core.to_regular(path_or_url, path)
        return Array(core, path_or_url, path)

    # ---- sparse ----
    def _region_of(self, selection: Any) -> tuple[list[int], list[int]]:
        """``(start, shape)`` of a block given as a basic key (the engine normalises it)."""
        r = self._core.selection_region("basic", selection)
        if r is None or len(r[2]) != self.ndim:
            raise InvalidArgumentError(
                "sparse reads take a block: slices with step 1 (no integer indices, no steps)"
            )
        return r[0], r[1]

    def read_csr(self, selection: Any = Ellipsis) -> Any:
        """A 2-d block as a ``scipy.sparse.csr_array``, built by the engine straight from the
        sparse chunks (no dense data); its ``indptr``, ``indices`` and ``data`` arrays own the
        vectors the engine built. The indices are int32 when the block has fewer than 2**31
        positions (as SciPy picks them), else int64.

        >>> import numpy as np, scipy.sparse, zarr_rs
        >>> s = zarr_rs.create_array("csr.zarr", shape=(4, 4), chunks=(2, 2), dtype="float64",
        ...                          sparse="csr")
        >>> s.write_sparse(scipy.sparse.csr_array(np.eye(4)))
        >>> m = s.read_csr((slice(1, 3), slice(0, 4)))
        >>> m.format, m.toarray().tolist()
        ('csr', [[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]])
        """
        import scipy.sparse

        start, count = self._region_of(selection)
        indptr, indices, data = self._core.read_csr(start, count)
        return scipy.sparse.csr_array((data, indices, indptr), shape=tuple(count), copy=False)

    def read_coo(self, selection: Any = Ellipsis) -> Any:
        """A block of any rank as a ``sparse.COO`` (pydata/sparse), coordinates relative to
        the block, sorted; the coordinate and value arrays own the vectors the engine built.

        >>> import numpy as np, zarr_rs
        >>> s = zarr_rs.create_array("coo.zarr", shape=(3, 4), dtype="int32", sparse="coo")
        >>> s[1, 2] = 5
        >>> c = s.read_coo((slice(1, 3), slice(None)))
        >>> c.coords.tolist(), c.data.tolist(), c.shape
        ([[0], [2]], [5], (2, 4))
        """
        import sparse

        start, count = self._region_of(selection)
        coords, values = self._core.read_coo(start, count)
        if any(start):
            coords -= np.asarray(start, dtype=np.int64)[:, None]
        return sparse.COO(
            coords, values, shape=tuple(count), has_duplicates=False, sorted=True,
            fill_value=self.fill_value,
        )

    def write_sparse(self, matrix: Any, at: Sequence[int] | None = None) -> None:
        """Writes a sparse matrix or array into the block that starts at ``at`` (default the
        origin) and has its shape, without densifying: afterwards the block holds exactly the
        matrix's entries, and the fill value elsewhere.

        ``matrix`` is any ``scipy.sparse`` matrix or array (2-d; CSR and CSC are read in place,
        other formats are converted to CSR) or a ``sparse.COO`` of the array's rank.

        >>> import numpy as np, scipy.sparse, zarr_rs
        >>> s = zarr_rs.create_array("write_sparse.zarr", shape=(4, 6), chunks=(2, 3),
        ...                          dtype="float32", sparse="csr")
        >>> s.write_sparse(scipy.sparse.csr_array([[1.0, 0.0], [0.0, 2.0]]), at=(2, 3))
        >>> s.nnz(), s[2:, 3:5].tolist()
        (2, [[1.0, 0.0], [0.0, 2.0]])
        """
        at = [0] * self.ndim if at is None else [int(v) for v in at]
        if len(at) != self.ndim:
            raise InvalidArgumentError(f"at has {len(at)} coordinates, the array has {self.ndim}")
        if any(v < 0 for v in at):
            # positions count from 0 (the engine takes them unsigned); the block's end is
            # checked by the engine against the array's shape
            raise BoundsError(f"the block at {at} starts before position 0 of the array")
        import scipy.sparse

        if scipy.sparse.issparse(matrix):
            self._write_scipy(matrix, at)
        elif hasattr(matrix, "coords") and hasattr(matrix, "data") and hasattr(matrix, "shape"):
            self._write_coo(matrix, at)
        else:
            raise InvalidArgumentError(
                f"write_sparse takes a scipy.sparse matrix or a sparse.COO, not {type(matrix).__name__}"
            )

    def _sparse_values(self, data: Any) -> np.ndarray:
        return _as_data(data, self._dtype, np.shape(data))

    def _write_scipy(self, m: Any, at: list[int]) -> None:
        if m.format not in ("csr", "csc"):
            m = m.tocsr()
        if not m.has_canonical_format:
            m = m.copy()
            m.sum_duplicates()
        idx = np.int64 if m.indptr.dtype.itemsize == 8 or m.indices.dtype.itemsize == 8 else np.int32
        indptr = np.ascontiguousarray(m.indptr, dtype=idx)
        indices = np.ascontiguousarray(m.indices, dtype=idx)
        data = self._sparse_values(m.data)
        self._core.write_compressed(
            m.format == "csr", tuple(int(n) for n in m.shape), indptr, indices, data, at
        )

    def _write_coo(self, m: Any, at: list[int]) -> None:
        shape = tuple(int(n) for n in m.shape)
        if len(shape) != self.ndim:
            raise ShapeError(f"a sparse array of rank {len(shape)} for an array of rank {self.ndim}")
        coords = np.asarray(m.coords, dtype=np.int64)
        coords = coords + np.asarray(at, dtype=np.int64)[:, None]
        values = self._sparse_values(m.data)
        # the block must hold exactly these entries: stored entries not among them are
        # removed by writing the fill value there (sparse work only, no dense block); the
        # engine refuses a block that does not fit the array here, before anything is written
        old = self._core.read_coo(at, list(shape))[0]
        if old.shape[1]:
            new_keys = np.ravel_multi_index(tuple(coords), self.shape)
            old_keys = np.ravel_multi_index(tuple(old), self.shape)
            gone = ~np.isin(old_keys, new_keys)
            if gone.any():
                coords = np.concatenate([old[:, gone], coords], axis=1)
                fills = np.full(int(gone.sum()), self.fill_value, dtype=self._dtype)
                values = np.concatenate([fills, values])
        self._core.write_coo(np.ascontiguousarray(coords, dtype=np.uint64), np.ascontiguousarray(values))

    def nnz(self) -> int:
        """The number of stored entries (chunk-parallel, no dense data).

        >>> import zarr_rs
        >>> s = zarr_rs.create_array("nnz.zarr", shape=(100, 100), dtype="int8", sparse="csr")
        >>> s[3, 4] = 1
        >>> s[50, 60] = 2
        >>> s.nnz(), int(s.sum())
        (2, 3)
        """
        return int(self._core.nnz())

    def sum(self) -> Any:
        """The sum of the stored entries (the array's sum when the fill value is 0), computed
        on the sparse chunks in parallel; a NumPy scalar of NumPy's dtype for the sum, as
        ``np.sum`` and SciPy's sparse ``sum()`` give: int64 for signed integers, uint64 for
        unsigned ones (both wrap around at 64 bits), the array's dtype for floating-point and
        complex arrays (accumulated wider, rounded once).

        >>> import zarr_rs
        >>> s = zarr_rs.create_array("sum.zarr", shape=(4, 4), dtype="uint8", sparse="coo")
        >>> s[0, 0] = 200
        >>> s[3, 3] = 100
        >>> total = s.sum()
        >>> int(total), total.dtype
        (300, dtype('uint64'))
        """
        return self._core.sum()[0]

    def spmv(self, x: Any) -> np.ndarray:
        """The product ``A @ x`` of a 2-d sparse array and a vector, on the sparse chunks in
        parallel (the fill value must be 0). It is computed in SciPy's result type of
        ``A @ x`` (NumPy's ``result_type`` of both, float16 results in
        float32), into which ``x`` is cast: an int32 array times a float64 vector is float64,
        an int8 array times an int8 vector int8 (wrapping around, as SciPy's does).

        >>> import numpy as np, zarr_rs
        >>> s = zarr_rs.create_array("spmv.zarr", shape=(3, 3), dtype="int32", sparse="csr")
        >>> s.vindex[[0, 1, 2], [0, 1, 2]] = [1, 2, 3]
        >>> y = s.spmv(np.array([1.0, 1.0, 0.5]))
        >>> y.tolist(), y.dtype
        ([1.0, 2.0, 1.5], dtype('float64'))
        """
        xs = np.asarray(x)
        if xs.ndim != 1:
            raise ShapeError(f"x must be a vector, it has shape {xs.shape}")
        dtype = _product_dtype(self._dtype, xs.dtype)
        if dtype.name not in _PRODUCT_DTYPES and self._dtype.kind != "b":  # bool: the engine refuses
            raise DataTypeError(
                f"no sparse product in {dtype} (a {self._dtype} array times a {xs.dtype} vector): "
                f"the engine computes in {', '.join(_PRODUCT_DTYPES)}"
            )
        return self._core.spmv(np.ascontiguousarray(xs, dtype=dtype))

    # ---- dask ----
    def to_dask(self, **kwargs: Any) -> Any:
        """A ``dask.array.Array`` whose blocks are whole chunks (shards of a sharded array),
        grouped to about Dask's ``array.chunk-size`` by default; see
        :func:`zarr_rs.dask.to_dask`.

        >>> import numpy as np, zarr_rs
        >>> a = zarr_rs.create_array("to_dask.zarr", shape=(6, 4), chunks=(2, 4), dtype="int64")
        >>> a[...] = np.arange(24).reshape(6, 4)
        >>> d = a.to_dask(blocks="chunks")
        >>> d.chunks, int(d.sum().compute())
        (((2, 2, 2), (4,)), 276)
        """
        from .dask import to_dask

        return to_dask(self, **kwargs)


class ArrayInfo:
    """A summary of an array; ``repr`` prints one line per field."""

    def __init__(self, a: Array):
        stored = a.nbytes_stored
        self.fields = {
            "Type": "Array",
            "Zarr format": a.zarr_format,
            "Data type": a._core.data_type if a._vlen is not None else a.dtype.name,
            "Shape": a.shape,
            "Domain": a.domain,
            "Chunk shape": a.chunks,
            "Shard shape": a.shards,
            "Sparse": a.sparse_format,
            "Fill value": (
                a.fill_value.item()
                if isinstance(a.fill_value, np.generic) and a.dtype.kind != "V"
                else a.fill_value
            ),
            "Codecs": [c.get("name") for c in a.metadata.get("codecs", [])],
            "No. bytes": a.nbytes,
            "No. bytes stored": stored,
            "Storage ratio": round(a.nbytes / stored, 1) if stored else None,
            "Chunks initialized": f"{a.nchunks_initialized}/{a.nchunks}",
        }

    def __repr__(self) -> str:
        w = max(len(k) for k in self.fields)
        return "\n".join(f"{k:<{w}} : {v}" for k, v in self.fields.items() if v is not None)


def _reopen_array(location: str, path: str, mode: str) -> Array:
    """The array a pickled :class:`Array` names (its location, path and mode)."""
    return Array(_core.open_array(location, path, mode), location, path)
