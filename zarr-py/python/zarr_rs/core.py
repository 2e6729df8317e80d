"""Arrays and groups: :class:`Array`, :class:`Group` and the functions that open and create
them, with zarr-python's semantics on top of the Rust engine (:mod:`zarr_rs._core`)."""

from __future__ import annotations

import base64
import json
import numbers
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any, Literal, Sequence

import numpy as np

from . import _core, _indexing
from .errors import BoundsError, DataTypeError, InvalidArgumentError, NodeTypeError, ShapeError

Mode = Literal["r", "r+", "a", "w", "w-"]

_DEFAULT_COMPRESSORS = object()


# The variable-size data types: read as NumPy object arrays of str / bytes, as zarr-python
# reads them with NumPy 1 (and as xarray and pandas hold text).
_VLEN_TYPES = {"string": str, "variable_length_bytes": bytes}


def _np_dtype(core: Any) -> np.dtype:
    """The NumPy dtype (native byte order) of an array's Zarr data type; ``object`` for
    ``string`` and ``variable_length_bytes``."""
    if core.numpy_dtype is None:
        if core.data_type in _VLEN_TYPES:
            return np.dtype(object)
        raise DataTypeError(f"the array holds {core.data_type}, which zarr_rs cannot map to NumPy")
    return np.dtype(core.numpy_dtype)


def _vlen_items(value: Any, kind: type, shape: tuple[int, ...]) -> list:
    """``value`` broadcast to ``shape`` as a flat list (C order) of ``kind`` (str or bytes)
    elements, for an array of variable-size elements. NumPy ``U`` / ``S`` / StringDType
    arrays are converted; anything else of another type is refused by the engine."""
    arr = value if isinstance(value, np.ndarray) else np.asarray(value, dtype=object)
    if arr.dtype.kind in "UT" and kind is str or arr.dtype.kind == "S" and kind is bytes:
        arr = arr.astype(object)
    elif arr.dtype != object:
        raise DataTypeError(
            f"cannot write {arr.dtype} data to an array of {kind.__name__} elements"
        )
    return _broadcast(arr, shape).ravel().tolist()


def _object_array(items: list, shape: Sequence[int]) -> np.ndarray:
    """A NumPy object array of ``shape`` holding ``items`` (C order)."""
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out.reshape(tuple(shape))


# Writes cast from a lower or equal kind (bool < integers, signed or not < floats < complex),
# as NumPy assignment does, and refuse what loses a kind (floats into integers, complex into
# reals, strings or objects into numbers).
_KIND_RANK = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}


def _as_data(value: Any, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    """``value`` as a C-contiguous array of ``dtype`` and ``shape``, copied only when it must be
    (another dtype, broadcasting, a non-contiguous layout). Python ints (scalars and lists) out
    of the range of an integer ``dtype`` raise OverflowError, as NumPy's and zarr-python's
    assignments do; NumPy integers and arrays are cast as NumPy casts them."""
    arr = np.asarray(value)
    if (
        dtype.kind in "iu"
        and arr.dtype.kind in "iuO"
        and not isinstance(value, (np.ndarray, np.generic))
    ):
        # NumPy checks the range of Python ints converted to a given dtype (not of arrays cast)
        arr = np.asarray(value, dtype=dtype)
    if arr.dtype != dtype:
        if arr.dtype.kind == "V" or dtype.kind == "V":
            if arr.dtype.itemsize != dtype.itemsize or arr.dtype.kind != dtype.kind:
                raise DataTypeError(f"cannot write {arr.dtype} data to an array of {dtype}")
            arr = arr.view(dtype)
        elif dtype.kind in "MmUS" and arr.dtype.kind == dtype.kind:
            # another unit or width of the same kind: NumPy's assignment (strings cut to width)
            arr = arr.astype(dtype)
        elif _KIND_RANK.get(arr.dtype.kind, 9) > _KIND_RANK.get(dtype.kind, -1):
            raise DataTypeError(
                f"cannot write {arr.dtype} data to an array of {dtype} (convert it first, "
                f"e.g. data.astype({str(dtype)!r}))"
            )
        else:
            arr = arr.astype(dtype)
    return np.ascontiguousarray(_broadcast(arr, shape))


# The types a sparse product is computed in (every numeric type but float16, which SciPy
# replaces by float32, and longdouble).
_PRODUCT_DTYPES = (
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64", "complex64", "complex128",
)


def _product_dtype(a: Any, b: Any) -> np.dtype:
    """SciPy's result type of a sparse ``A @ x`` for an ``A`` of dtype ``a`` and an ``x`` of
    ``b``: NumPy's ``result_type`` of both, with a float16 result raised to float32 (SciPy
    has no float16 arithmetic and takes the first type it supports). A DataTypeError when
    NumPy has no common type (strings, datetimes, objects)."""
    try:
        r = np.result_type(np.dtype(a), np.dtype(b))
    except TypeError as e:  # numpy's DTypePromotionError
        raise DataTypeError(f"no product of {a} and {b} data: {e}") from None
    if r.kind not in "biufc":
        raise DataTypeError(f"no product of {a} and {b} data (their common type is {r})")
    return np.dtype(np.float32) if r == np.float16 else r


def _broadcast(arr: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``arr`` broadcast to ``shape`` (a view), or a ShapeError."""
    if arr.shape == tuple(shape):
        return arr
    try:
        return np.broadcast_to(arr, shape)
    except ValueError:
        raise ShapeError(
            f"could not broadcast data of shape {arr.shape} to the selection's shape "
            f"{tuple(shape)}"
        ) from None


def _flat_bytes(arr: np.ndarray) -> np.ndarray:
    """A flat uint8 view of a C-contiguous array (no copy)."""
    return arr.reshape(-1).view(np.uint8)


class Attributes(MutableMapping):
    """The user attributes of an array or group: a dict that writes the metadata on every
    change (``update`` writes once)."""

    def __init__(self, node: Any):
        self._node = node

    def _load(self) -> dict:
        return json.loads(self._node.attributes_json())

    def _store(self, d: dict) -> None:
        self._node.set_attributes_json(json.dumps(d, allow_nan=True))

    def __getitem__(self, key: str) -> Any:
        return self._load()[key]

    def __setitem__(self, key: str, value: Any) -> None:
        d = self._load()
        d[key] = value
        self._store(d)

    def __delitem__(self, key: str) -> None:
        d = self._load()
        del d[key]
        self._store(d)

    def __iter__(self) -> Iterator[str]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())

    def update(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        """Sets several attributes with one metadata write."""
        d = self._load()
        d.update(*args, **kwargs)
        self._store(d)

    def put(self, d: Mapping[str, Any]) -> None:
        """Replaces every attribute."""
        self._store(dict(d))

    def asdict(self) -> dict:
        """A plain dict copy."""
        return self._load()

    def __repr__(self) -> str:
        return repr(self._load())


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
    """

    def __init__(self, core: Any, location: str, path: str = ""):
        self._core = core
        self._location = location
        self._path = path
        self._dtype = _np_dtype(core)
        # str or bytes for the variable-size types, else None
        self._vlen = _VLEN_TYPES.get(core.data_type) if core.numpy_dtype is None else None
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
        """A summary (its ``repr`` prints like zarr-python's ``Array.info``)."""
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
        if kind == "blocks":
            self._check_blocks(key)
        if self._vlen is not None:
            shape, items = self._core.read_vlen_selection(kind, key)
            return _object_array(items, shape)
        return self._core.read_selection(kind, key, self._dtype)

    def _set(self, kind: str, key: Any, value: Any) -> None:
        if kind == "blocks":
            self._check_blocks(key)
        shape = tuple(self._core.selection_shape(kind, key))
        if self._vlen is not None:
            self._core.write_vlen_selection(kind, key, _vlen_items(value, self._vlen, shape))
            return
        data = _as_data(value, self._dtype, shape)
        self._core.write_selection(kind, key, _flat_bytes(data))

    def _check_blocks(self, key: Any) -> None:
        if self.size == 0:
            # as zarr-python: an array without elements has no block to select
            raise BoundsError(f"block selection {key!r} of an array of shape {self.shape}, which has no elements")

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
        new chunks are written first, the metadata last. Returns the new shape."""
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
        shape."""
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
        the new shape are deleted; positions that appear read as the fill value."""
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
        The original domain is kept in the copy's attributes under ``"regular_bounded"``."""
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
        positions (as SciPy picks them), else int64."""
        import scipy.sparse

        start, count = self._region_of(selection)
        indptr, indices, data = self._core.read_csr(start, count)
        return scipy.sparse.csr_array((data, indices, indptr), shape=tuple(count), copy=False)

    def read_coo(self, selection: Any = Ellipsis) -> Any:
        """A block of any rank as a ``sparse.COO`` (pydata/sparse), coordinates relative to
        the block, sorted; the coordinate and value arrays own the vectors the engine built."""
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
        other formats are converted to CSR) or a ``sparse.COO`` of the array's rank."""
        at = [0] * self.ndim if at is None else [int(v) for v in at]
        if len(at) != self.ndim:
            raise InvalidArgumentError(f"at has {len(at)} coordinates, the array has {self.ndim}")
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
        for d, (a, n, N) in enumerate(zip(at, shape, self.shape)):
            if a < 0 or a + n > N:
                from .errors import BoundsError

                raise BoundsError(f"the block at {at} of shape {shape} exceeds the array's shape {self.shape}")
        coords = np.asarray(m.coords, dtype=np.int64)
        coords = coords + np.asarray(at, dtype=np.int64)[:, None]
        values = self._sparse_values(m.data)
        # the block must hold exactly these entries: stored entries not among them are
        # removed by writing the fill value there (sparse work only, no dense block)
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
        """The number of stored entries (chunk-parallel, no dense data)."""
        return int(self._core.nnz())

    def sum(self) -> Any:
        """The sum of the stored entries (the array's sum when the fill value is 0), computed
        on the sparse chunks in parallel; a NumPy scalar of NumPy's dtype for the sum, as
        ``np.sum`` and SciPy's sparse ``sum()`` give: int64 for signed integers, uint64 for
        unsigned ones (both wrap around at 64 bits), the array's dtype for floating-point and
        complex arrays (accumulated wider, rounded once)."""
        return self._core.sum()[0]

    def spmv(self, x: Any) -> np.ndarray:
        """The product ``A @ x`` of a 2-d sparse array and a vector, on the sparse chunks in
        parallel (the fill value must be 0). It is computed in SciPy's result type of
        ``A @ x`` (NumPy's ``result_type`` of both, float16 results in
        float32), into which ``x`` is cast: an int32 array times a float64 vector is float64,
        an int8 array times an int8 vector int8 (wrapping around, as SciPy's does)."""
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
        :func:`zarr_rs.dask.to_dask`."""
        from .dask import to_dask

        return to_dask(self, **kwargs)


class _Writer:
    """The attribute interface of a node core that drops the cached metadata on writes."""

    def __init__(self, core: Any, changed: Any):
        self._core = core
        self._changed = changed

    def attributes_json(self) -> str:
        return self._core.attributes_json()

    def set_attributes_json(self, text: str) -> None:
        self._core.set_attributes_json(text)
        self._changed()


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


class Unreadable:
    """A child whose metadata this build cannot read (an unknown data type, codec or chunk
    grid, or a broken document), as :meth:`Group.members` lists it: ``reason`` is the error
    opening it gives."""

    def __init__(self, location: str, path: str, reason: str):
        self.store_location = location
        self.path = path
        self.reason = reason

    def __repr__(self) -> str:
        return f"<zarr_rs.Unreadable {self.path!r}: {self.reason}>"


class Group(Mapping):
    """A Zarr v3 group: a mapping from child names to :class:`Array` and :class:`Group`."""

    def __init__(self, core: Any, location: str, path: str = ""):
        self._core = core
        self._location = location
        self._path = path

    def __reduce__(self) -> tuple:
        mode = "r" if self._core.read_only else "r+"
        return (_reopen_group, (self._location, self._path, mode))

    @property
    def path(self) -> str:
        """The group's path inside its store."""
        return self._path

    @property
    def name(self) -> str:
        """The absolute node name (``/`` + path)."""
        return "/" + self._path

    @property
    def store_location(self) -> str:
        """The path or url of the store the group is in."""
        return self._location

    @property
    def read_only(self) -> bool:
        """Whether the group was opened with mode "r"."""
        return bool(self._core.read_only)

    @property
    def attrs(self) -> Attributes:
        """The user attributes (changes are written at once)."""
        return Attributes(self._core)

    def _child_path(self, name: str) -> str:
        return f"{self._path}/{name}" if self._path else name

    def _wrap(self, core: Any, name: str) -> "Array | Group":
        path = self._child_path(name)
        if isinstance(core, _core.ArrayCore):
            return Array(core, self._location, path)
        return Group(core, self._location, path)

    def _node(self, name: str, kind: str, reason: str | None) -> "Array | Group | Unreadable":
        if kind == "unreadable":
            return Unreadable(self._location, self._child_path(name), reason or "")
        return self[name]

    def members(self, max_depth: int | None = 1) -> list[tuple[str, "Array | Group | Unreadable"]]:
        """The children as ``(name, node)`` pairs, sorted by name; ``max_depth=None`` lists
        every node below the group by relative path (``"a/b"``). A child whose metadata this
        build cannot read is an :class:`Unreadable` (with the reason) instead of failing the
        listing. From the group's consolidated metadata when it was opened through some."""
        if max_depth == 1:
            listed = self._core.members()
        elif max_depth is None:
            listed = self._core.members_recursive()
        else:
            if max_depth < 1:
                raise InvalidArgumentError(f"max_depth must be None or at least 1, not {max_depth}")
            listed = [m for m in self._core.members_recursive() if m[0].count("/") < max_depth]
        return [(name, self._node(name, kind, reason)) for name, kind, reason in listed]

    @property
    def is_consolidated(self) -> bool:
        """Whether the group was opened through consolidated metadata."""
        return bool(self._core.is_consolidated())

    @property
    def zarr_format(self) -> int:
        """The Zarr format of the group's metadata: 3 (``zarr.json``) or 2 (``.zgroup``)."""
        return int(self._core.zarr_format())

    def __getitem__(self, name: str) -> "Array | Group":
        node: Any = self
        for part in name.strip("/").split("/"):
            node = node._wrap(node._core.child(part), part)
            if not isinstance(node, Group) and part != name.strip("/").split("/")[-1]:
                raise NodeTypeError(f"{node.path!r} is an array, not a group")
        return node

    def __iter__(self) -> Iterator[str]:
        return iter(name for name, _, _ in self._core.members())

    def __len__(self) -> int:
        return len(self._core.members())

    def __contains__(self, name: object) -> bool:
        try:
            self[str(name)]
        except KeyError:
            return False
        return True

    def keys(self) -> list[str]:  # type: ignore[override]
        """The children's names."""
        return [name for name, _, _ in self._core.members()]

    def array_keys(self) -> list[str]:
        """The names of the child arrays."""
        return [name for name, kind, _ in self._core.members() if kind == "array"]

    def group_keys(self) -> list[str]:
        """The names of the child groups."""
        return [name for name, kind, _ in self._core.members() if kind == "group"]

    def arrays(self) -> list[tuple[str, Array]]:
        """The child arrays as ``(name, array)`` pairs."""
        return [(n, self[n]) for n in self.array_keys()]  # type: ignore[misc]

    def groups(self) -> list[tuple[str, "Group"]]:
        """The child groups as ``(name, group)`` pairs."""
        return [(n, self[n]) for n in self.group_keys()]  # type: ignore[misc]

    def create_group(
        self, name: str, *, attributes: Mapping[str, Any] | None = None,
        zarr_format: int | None = None,
    ) -> "Group":
        """Creates a child group, of this group's Zarr format unless ``zarr_format`` (2 or 3)
        says otherwise (zarr-python's view of a group, and its consolidated metadata, list the
        children of the group's format only)."""
        core = self._core.create_group(name, dict(attributes or {}), zarr_format)
        return Group(core, self._location, self._child_path(name))

    def require_group(self, name: str) -> "Group":
        """The child group ``name``, created when missing."""
        try:
            node = self[name]
        except KeyError:
            return self.create_group(name)
        if not isinstance(node, Group):
            raise NodeTypeError(f"{node.path!r} is an array, not a group")
        return node

    def create_array(self, name: str, *, shape: Sequence[int], dtype: Any, **kwargs: Any) -> Array:
        """Creates a child array; the keywords are :func:`zarr_rs.create_array`'s (the array is
        of this group's Zarr format unless ``zarr_format`` says otherwise)."""
        spec = _spec(shape=shape, dtype=dtype, **kwargs)
        core = self._core.create_array(name, spec)
        return Array(core, self._location, self._child_path(name))

    def tree(self) -> str:
        """The hierarchy below this group as indented text (arrays with shape and dtype)."""
        lines = [self.name]

        def walk(g: Group, indent: str) -> None:
            items = g.members()
            for i, (name, node) in enumerate(items):
                last = i == len(items) - 1
                branch = "└── " if last else "├── "
                if isinstance(node, Array):
                    lines.append(f"{indent}{branch}{name} {node.shape} {node.dtype}")
                elif isinstance(node, Unreadable):
                    lines.append(f"{indent}{branch}{name} (unreadable: {node.reason})")
                else:
                    lines.append(f"{indent}{branch}{name}")
                    walk(node, indent + ("    " if last else "│   "))

        walk(self, "")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<zarr_rs.Group {self._location!r} path={self._path!r}>"


def _reopen_array(location: str, path: str, mode: str) -> Array:
    return open_array(location, path=path, mode=mode)  # type: ignore[arg-type]


def _reopen_group(location: str, path: str, mode: str) -> Group:
    """The group a pickled :class:`Group` names (a third item of ``__reduce__``'s tuple
    would be pickle state, not keywords)."""
    return open_group(location, path=path, mode=mode)  # type: ignore[arg-type]


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


def open(path_or_url: str, *, mode: Mode = "a", path: str = "") -> Array | Group:  # noqa: A001
    """Opens the array or group at a directory or url (``mode`` "r" reads only; "r+" and "a"
    read and write; as in zarr-python, "a" creates a group where there is no node).
    ``path`` names a node below the location."""
    _check_mode(mode, ("r", "r+", "a"))
    try:
        return _wrap_node(_core.open_node(path_or_url, path, mode), path_or_url, path)
    except KeyError:
        if mode != "a":
            raise
    return Group(_core.create_group(path_or_url, path, {}, False), path_or_url, path)


def open_array(path_or_url: str, *, mode: Mode = "a", path: str = "") -> Array:
    """Opens the array at a directory or url."""
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
    is of that format (v3 by default)."""
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
    it true."""
    return Group(_core.consolidate_metadata(path_or_url, path), path_or_url, path)


def create_group(
    path_or_url: str, *, path: str = "", attributes: Mapping[str, Any] | None = None,
    overwrite: bool = False, zarr_format: int | None = None,
) -> Group:
    """Creates a group at a directory or url (``zarr_format=2``: a Zarr v2 group, whose child
    groups are v2 too)."""
    attrs = dict(attributes or {})
    core = _core.create_group(path_or_url, path, attrs, overwrite, zarr_format)
    return Group(core, path_or_url, path)


def _check_mode(mode: str, allowed: tuple[str, ...]) -> str:
    if mode not in allowed:
        raise InvalidArgumentError(f"mode {mode!r} (use one of {', '.join(map(repr, allowed))})")
    return mode
