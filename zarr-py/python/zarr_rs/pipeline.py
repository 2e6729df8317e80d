"""zarr-python's codec pipeline on the zarr-rs engine: ``zarr_rs.CodecPipeline``.

Selected with one line, for unchanged zarr-python code (and xarray, Dask, anndata on it)::

    zarr.config.set({"codec_pipeline.path": "zarr_rs.CodecPipeline"})

or ``ZARR_CODEC_PIPELINE__PATH=zarr_rs.CodecPipeline`` in the environment. zarr-python keeps
its metadata, indexing and stores; every chunk it reads or writes through this pipeline is
decoded and encoded by the engine (``zarr_rs._core.ChunkCodec``: the codec chain the codecs'
JSON describes, a v2 array's filters and compressor through the engine's numcodecs map), a
batch at a time, in parallel with the GIL released. On a store it can open itself the engine
reads and writes the chunks itself (``zarr_rs._core.EngineStore``, no Python call per
chunk): a ``LocalStore`` (each chunk read, decoded, encoded and written on one worker
thread), and an ``ObjectStore`` or ``FsspecStore`` over S3, GCS, Azure or HTTP (every request
of a batch in flight together, up to ``ZARR_CONCURRENCY``, 256 by default, each chunk decoded
as its bytes arrive). On any other store (``MemoryStore``, ``ZipStore``, a wrapper) bytes are
fetched and stored through zarr-python's ``ByteGetter`` / ``ByteSetter``, concurrently. A
selection of a few elements of a chunk (points, strided slices) decodes only what they need
(a compressed chunk's prefix, the byte spans of an uncompressed one) and the engine puts each
element in the output; a selection that covers part of a sharded chunk reads the shard index
and only the inner chunks it meets, through byte ranges;
a write of unit-step slices into part of a shard goes through the engine's partial encoder
(``ChunkCodec.encode_update``), which decodes and re-encodes only the inner chunks it touches.

There is no fallback to zarr-python's ``BatchedCodecPipeline``: a case the engine cannot do
(a codec it does not know, a data type it does not have, a buffer that is not in host
memory) is an error naming it.
"""

from __future__ import annotations

import asyncio
import json
import os
import weakref
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
from zarr.abc.codec import ArrayArrayCodec, ArrayBytesCodec, BytesBytesCodec, Codec
from zarr.abc.codec import CodecPipeline as _CodecPipelineBase
from zarr.abc.store import OffsetByteRequest, RangeByteRequest, SuffixByteRequest
from zarr.codecs._v2 import V2Codec
from zarr.core.common import concurrent_map
from zarr.core.config import config
from zarr.core.indexing import is_scalar

from zarr_rs import _core
from zarr_rs.errors import StoreError

if TYPE_CHECKING:
    from typing import Self

    from zarr.abc.store import ByteGetter, ByteSetter
    from zarr.core.array_spec import ArraySpec
    from zarr.core.buffer import Buffer, NDBuffer
    from zarr.core.chunk_grids import ChunkGrid
    from zarr.core.indexing import SelectorTuple

__all__ = ["CodecPipeline", "UnsupportedByEngineError", "stats"]


class UnsupportedByEngineError(NotImplementedError):
    """A case zarr_rs.CodecPipeline does not run on the engine (named in the message)."""


def stats() -> dict[str, int]:
    """Chunks the engine decoded (whole and in part) and encoded through the pipeline since
    the module was loaded: ``{"decoded": n, "partial": n, "encoded": n, "direct": n,
    "from_value": n, "updated": n, "files": n}`` (``direct``: of the decoded, those the engine
    decoded straight into the output array; ``files``: chunks the engine read or wrote itself
    in a store it opened, ``EngineStore``)."""
    return dict(_core.pipeline_stats())


def _fill_value(spec: ArraySpec) -> Any:
    # zarr-python's fill_value_or_default: a v2 `null` fill value reads as the type's default
    if spec.fill_value is None:
        return spec.dtype.default_scalar()
    return spec.fill_value


def _is_raw(native: np.dtype[Any]) -> bool:
    """Structured and void types: the engine carries their bytes as raw bits (`r<bits>`)."""
    return native.kind == "V"


def _engine_dtype(native: np.dtype[Any]) -> np.dtype[Any]:
    """The NumPy type of the engine's decoded bytes: native byte order but for raw types."""
    if _is_raw(native) or native.kind == "O" or native.kind == "T":
        return native
    return native.newbyteorder("=")


def _to_jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_to_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value


def _codec_json(codec: Codec) -> dict[str, Any]:
    to_dict = getattr(codec, "to_dict", None)
    if to_dict is None:
        raise UnsupportedByEngineError(
            f"zarr_rs.CodecPipeline: codec {codec!r} has no JSON form (to_dict)"
        )
    return _to_jsonable(to_dict())


_BLOSC_SHUFFLE = {0: "noshuffle", 1: "shuffle", 2: "bitshuffle"}


def _engine_codec(d: dict[str, Any]) -> dict[str, Any]:
    """zarr-python's v3 names of numcodecs' compressors that are core codecs of the engine
    (`numcodecs.zstd`, `numcodecs.gzip`, `numcodecs.blosc`, `numcodecs.crc32c`) as those
    codecs: the stored bytes are the same. A configuration they cannot take is refused."""
    name = d.get("name")
    cfg = dict(d.get("configuration") or {})

    def refuse(why: str) -> UnsupportedByEngineError:
        return UnsupportedByEngineError(f"zarr_rs.CodecPipeline: codec {name} {cfg}: {why}")

    if name == "numcodecs.zstd":
        extra = set(cfg) - {"level", "checksum"}
        if extra:
            raise refuse(f"unknown fields {sorted(extra)}")
        return {
            "name": "zstd",
            "configuration": {
                "level": int(cfg.get("level", 0)),
                "checksum": bool(cfg.get("checksum", False)),
            },
        }
    if name == "numcodecs.gzip":
        if set(cfg) - {"level"}:
            raise refuse("unknown fields")
        return {"name": "gzip", "configuration": {"level": int(cfg.get("level", 1))}}
    if name == "numcodecs.blosc":
        if set(cfg) - {"cname", "clevel", "shuffle", "blocksize", "typesize"}:
            raise refuse("unknown fields")
        # zarr-python hands a bytes -> bytes codec the chunk's bytes (item size 1), so
        # numcodecs' automatic shuffle (-1) is the bit shuffle there
        shuffle = int(cfg.get("shuffle", 1))
        typesize = int(cfg.get("typesize") or 1)
        if shuffle == -1:
            shuffle = 2 if typesize == 1 else 1
        if shuffle not in _BLOSC_SHUFFLE:
            raise refuse("shuffle must be -1, 0, 1 or 2")
        return {
            "name": "blosc",
            "configuration": {
                "cname": cfg.get("cname", "lz4"),
                "clevel": int(cfg.get("clevel", 5)),
                "shuffle": _BLOSC_SHUFFLE[shuffle],
                "typesize": typesize,
                "blocksize": int(cfg.get("blocksize", 0)),
            },
        }
    if name == "numcodecs.crc32c":
        if cfg.get("location", "end") != "end" or set(cfg) - {"location"}:
            raise refuse("the engine's crc32c appends its checksum (location 'end')")
        return {"name": "crc32c"}
    if name == "sharding_indexed":
        inner = dict(cfg)
        for key in ("codecs", "index_codecs"):
            if key in inner:
                inner[key] = [_engine_codec(c) for c in inner[key]]
        return {**d, "configuration": inner}
    return d


def _numcodec_json(codec: Any) -> dict[str, Any]:
    return _to_jsonable(codec.get_config())


class _Chunks:
    """The engine's codec chain for one chunk spec, and the NumPy side of its chunks."""

    def __init__(self, codecs: tuple[Codec, ...], spec: ArraySpec) -> None:
        self.shape = tuple(spec.shape)
        self.native = spec.dtype.to_native_dtype()
        self.view = _engine_dtype(self.native)
        if len(codecs) == 1 and isinstance(codecs[0], V2Codec):
            name, doc = ".zarray", self._zarray(codecs[0], spec)
        else:
            if any(isinstance(c, V2Codec) for c in codecs):
                raise UnsupportedByEngineError(
                    "zarr_rs.CodecPipeline: a V2Codec among other codecs"
                )
            name, doc = "zarr.json", self._zarr_json(codecs, spec)
        try:
            text = json.dumps(doc, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise UnsupportedByEngineError(
                f"zarr_rs.CodecPipeline: the codecs or data type {spec.dtype} have no JSON form: {e}"
            ) from e
        self.codec = _core.ChunkCodec(name, text)
        self.vlen = self.codec.decoded_len == 0 and self.native.kind in "OT"
        self.partial = bool(self.codec.supports_partial_decode)
        self.sharded = name == "zarr.json" and any(
            getattr(c, "to_dict", None) is not None and _codec_json(c).get("name") == "sharding_indexed"
            for c in codecs
        )

    def _zarr_json(self, codecs: tuple[Codec, ...], spec: ArraySpec) -> dict[str, Any]:
        fill = _fill_value(spec)
        if _is_raw(self.native):
            data_type: Any = f"r{self.native.itemsize * 8}"
            fill_json: Any = list(np.asarray(fill, dtype=self.native).tobytes())
        else:
            data_type = spec.dtype.to_json(zarr_format=3)
            fill_json = spec.dtype.to_json_scalar(fill, zarr_format=3)
        return {
            "zarr_format": 3,
            "node_type": "array",
            "shape": list(self.shape),
            "data_type": data_type,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(self.shape)}},
            "chunk_key_encoding": {"name": "default"},
            "fill_value": fill_json,
            "codecs": [_engine_codec(_codec_json(c)) for c in codecs],
        }

    def _zarray(self, codec: V2Codec, spec: ArraySpec) -> dict[str, Any]:
        fill = _fill_value(spec)
        if _is_raw(self.native):
            dtype: Any = f"|V{self.native.itemsize}"
            fill_json: Any = None
        else:
            dtype = spec.dtype.to_json(zarr_format=2)["name"]
            fill_json = spec.dtype.to_json_scalar(fill, zarr_format=2)
        return {
            "zarr_format": 2,
            "shape": list(self.shape),
            "chunks": list(self.shape),
            "dtype": dtype,
            "compressor": None if codec.compressor is None else _numcodec_json(codec.compressor),
            "filters": [_numcodec_json(f) for f in codec.filters] if codec.filters else None,
            "fill_value": _to_jsonable(fill_json),
            "order": spec.order,
            "dimension_separator": ".",
        }

    # decoded chunks

    def to_numpy(self, decoded: Any, shape: tuple[int, ...]) -> np.ndarray[Any, Any]:
        if self.vlen:
            arr = np.empty(len(decoded), dtype=self.native)
            arr[:] = decoded
            return arr.reshape(shape)
        return decoded.view(self.view).reshape(shape)

    # chunks to encode

    def encode(
        self, arrays: list[np.ndarray[Any, Any]], fill: bytes | None = None
    ) -> list[bytes | None]:
        """The stored bytes of each chunk; with `fill` (the bytes of one element, fixed-size
        elements only) a chunk all of whose elements have those bytes is None (empty)."""
        if self.vlen:
            return list(self.codec.encode_vlen([self._vlen_items(a) for a in arrays]))
        raw = [
            np.ascontiguousarray(a, dtype=self.view).reshape(-1).view(np.uint8) for a in arrays
        ]
        return list(self.codec.encode(raw, fill))

    def _vlen_items(self, a: np.ndarray[Any, Any]) -> list[bytes]:
        items = []
        for x in np.asarray(a).reshape(-1):
            if isinstance(x, str):
                items.append(x.encode("utf-8"))
            elif isinstance(x, bytes | bytearray | memoryview | np.bytes_):
                items.append(bytes(x))
            else:
                raise TypeError(
                    f"zarr_rs.CodecPipeline: element {x!r} of a {self.native} chunk is "
                    "neither str nor bytes"
                )
        return items


def _region_of(
    selection: SelectorTuple, shape: tuple[int, ...]
) -> tuple[list[int], list[int], tuple[Any, ...]] | None:
    """The bounding region (start, shape) of a chunk selection and the selection relative to
    it, or None when the selection is not one the region read helps (empty, reversed)."""
    if not isinstance(selection, tuple):
        selection = (selection,)
    if len(selection) != len(shape):
        return None
    start: list[int] = []
    extent: list[int] = []
    rel: list[Any] = []
    for sel, dim in zip(selection, shape, strict=True):
        if isinstance(sel, slice):
            a, b, step = sel.indices(dim)
            n = len(range(a, b, step))
            if n == 0 or step < 0:
                return None
            last = a + step * (n - 1)
            start.append(a)
            extent.append(last - a + 1)
            rel.append(slice(0, last - a + 1, step))
        elif isinstance(sel, int | np.integer):
            i = int(sel)
            if i < 0:
                i += dim
            start.append(i)
            extent.append(1)
            rel.append(0 if isinstance(sel, int | np.integer) else sel)
        elif isinstance(sel, np.ndarray) and sel.dtype.kind in "iu":
            if sel.size == 0:
                return None
            idx = np.where(sel < 0, sel + dim, sel)
            lo, hi = int(idx.min()), int(idx.max())
            start.append(lo)
            extent.append(hi - lo + 1)
            rel.append(idx - lo)
        elif isinstance(sel, np.ndarray) and sel.dtype == bool and sel.ndim == 1:
            nz = np.flatnonzero(sel)
            if nz.size == 0:
                return None
            lo, hi = int(nz[0]), int(nz[-1])
            start.append(lo)
            extent.append(hi - lo + 1)
            rel.append(sel[lo : hi + 1])
        else:
            return None
    return start, extent, tuple(rel)


def _unit_slices(
    selection: Any, shape: tuple[int, ...]
) -> tuple[list[int], list[int]] | None:
    """The (start, extent) of each dimension of a selection of unit-step slices and
    integers, one per dimension of `shape`, else None."""
    if not isinstance(selection, tuple):
        selection = (selection,)
    if len(selection) != len(shape):
        return None
    start: list[int] = []
    extent: list[int] = []
    for sel, dim in zip(selection, shape, strict=True):
        if isinstance(sel, int | np.integer) and not isinstance(sel, bool | np.bool_):
            i = int(sel) + dim if int(sel) < 0 else int(sel)
            if not 0 <= i < dim:
                return None
            start.append(i)
            extent.append(1)
            continue
        if not isinstance(sel, slice):
            return None
        a, b, step = sel.indices(dim)
        if step != 1:
            return None
        start.append(a)
        extent.append(max(0, b - a))
    return start, extent


def _placement(
    chunk_sel: Any,
    out_sel: Any,
    chunk_shape: tuple[int, ...],
    out_shape: tuple[int, ...],
    drop_axes: tuple[int, ...],
) -> tuple[list[int], list[int], list[int]] | None:
    """Where the engine decodes a chunk's box into the output (chunk start, extent, output
    start) when both selections are unit-step slices of the same extent, else None. The
    output's `drop_axes` (an integer in the chunk selection) are size-1 dimensions of it."""
    c = _unit_slices(chunk_sel, chunk_shape)
    if drop_axes:
        if not isinstance(out_sel, tuple):
            out_sel = (out_sel,)
        out_sel = list(out_sel)
        for axis in sorted(drop_axes):
            out_sel.insert(axis, slice(0, 1))
        out_sel = tuple(out_sel)
    o = _unit_slices(out_sel, out_shape)
    if c is None or o is None or c[1] != o[1]:
        return None
    return c[0], c[1], o[0]


#: The largest output (in elements) that a read gathers chunks' elements into one by one
#: (`_gather`): its flat index is made once per read.
_GATHER_MAX = 1 << 20


def _gather(
    chunk_sel: Any, out_sel: Any, chunk_shape: tuple[int, ...], out_index: np.ndarray[Any, Any]
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]] | None:
    """The positions in the chunk of the elements `chunk_sel` picks (a `uint64` array, one row
    each, in the order of ``chunk[chunk_sel]``) and the flat positions in the output where
    zarr-python's ``out[out_sel] = chunk[chunk_sel]`` (dropped axes squeezed) puts them, in the
    same order; None for a zero-dimensional chunk, or when the two do not pair up one to one.
    Made by indexing broadcast views of each axis' coordinates (no array of the chunk's size),
    so it costs what the selection holds."""
    rank = len(chunk_shape)
    if rank == 0:
        return None
    try:
        coords = []
        for axis, n in enumerate(chunk_shape):
            along = [1] * rank
            along[axis] = n
            grid = np.broadcast_to(np.arange(n, dtype=np.uint64).reshape(along), chunk_shape)
            coords.append(np.asarray(grid[chunk_sel]).reshape(-1))
        positions = np.asarray(out_index[out_sel]).reshape(-1)
    except (IndexError, TypeError, ValueError):
        return None
    if len(coords[0]) != len(positions):
        return None
    return np.ascontiguousarray(np.stack(coords, axis=1)), positions


class _Source:
    """A stored chunk read by the engine from a worker thread, through zarr-python's
    ByteGetter on its event loop."""

    def __init__(self, getter: ByteGetter, prototype: Any, loop: asyncio.AbstractEventLoop):
        self.getter = getter
        self.prototype = prototype
        self.loop = loop

    def _run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def get_ranges(self, ranges: list[tuple[str, int, int]]) -> list[bytes] | None:
        def request(kind: str, a: int, b: int) -> Any:
            if kind == "range":
                return RangeByteRequest(a, b)
            if kind == "offset":
                return OffsetByteRequest(a)
            return SuffixByteRequest(a)

        async def fetch() -> list[Buffer | None]:
            return list(
                await asyncio.gather(
                    *(self.getter.get(self.prototype, byte_range=request(*r)) for r in ranges)
                )
            )

        parts = self._run(fetch())
        if any(p is None for p in parts):
            return None
        return [p.to_bytes() for p in parts]

    def size(self) -> int | None:
        store = getattr(self.getter, "store", None)
        path = getattr(self.getter, "path", None)
        if store is not None and path is not None:
            try:
                return int(self._run(store.getsize(path)))
            except FileNotFoundError:
                return None
        got = self._run(self.getter.get(self.prototype))
        return None if got is None else len(got)


def _check_host(buf: Any, what: str) -> None:
    if not isinstance(buf.as_ndarray_like(), np.ndarray):
        raise UnsupportedByEngineError(
            f"zarr_rs.CodecPipeline: {what} of type {type(buf.as_ndarray_like()).__name__} "
            "(the engine reads and writes host memory, NumPy arrays)"
        )


#: Whether a batch on a store the engine can open is read and written by the engine itself
#: (`_engine_store`); off, every chunk goes through zarr-python's `ByteGetter` / `ByteSetter`
#: (for measuring the two paths against each other; the tests cover the other path with a
#: `MemoryStore`).
ENGINE_FILES = True


#: The engine's chains (`_Chunks`) by codecs and chunk spec, shared by every pipeline of this
#: process, the oldest dropped past `_CHAINS_MAX`.
_CHAINS: dict[Any, _Chunks] = {}
_CHAINS_MAX = 256

#: A value written that is not C-contiguous is copied into C order first when it holds at most
#: this many bytes (above, the chunks it does not cover as one run go through NumPy).
_COPY_MAX = 1 << 28

#: A batch of chunks holding at most this many bytes decoded is read or written by the engine
#: on the event loop's thread, not handed to a worker thread (`_off_loop`).
_INLINE_BYTES = 1 << 22


async def _off_loop(small: bool, fn: Any, *args: Any) -> Any:
    """`fn(*args)` (an engine call, which releases the GIL) on a worker thread so that the
    event loop goes on meanwhile, or right here for a `small` batch: handing a thread a
    millisecond of work costs a good part of it."""
    if small:
        return fn(*args)
    return await asyncio.to_thread(fn, *args)


def _engine_store(getters: list[Any], writing: bool) -> tuple[Any, list[str]] | None:
    """The engine's handle on the store that every getter of a batch reads (zarr-python's
    `StorePath`s of one open store the engine can open itself: `_engine_of`), and each
    getter's key; None when they are not that, when writing to a read-only store
    (zarr-python's `set` raises its own error then), or when the engine cannot open the
    store (zarr-python's store says why)."""
    if not ENGINE_FILES or not getters:
        return None
    from zarr.storage import StorePath

    store = None
    keys: list[str] = []
    for g in getters:
        if type(g) is not StorePath:
            return None
        if store is None:
            store = g.store
        elif g.store is not store:
            return None
        keys.append(g.path)
    if not getattr(store, "_is_open", False) or (writing and store.read_only):
        return None
    engine = _engine_of(store)
    return None if engine is None else (engine, keys)


#: The engine's handle on each remote store it opened (`_engine_of`), by the store's id with
#: a weak reference to it (zarr-python's stores are not all hashable) and the process that
#: opened it (a forked child opens its own: the parent's connections are not its); the oldest
#: dropped past `_ENGINES_MAX`. A handle keeps its connections open from one batch to the
#: next.
_ENGINES: dict[int, tuple[Any, Any, int]] = {}
_ENGINES_MAX = 64


def _engine_of(store: Any) -> Any:
    """The engine's own handle on zarr-python's `store` (`_core.EngineStore`), or None when
    the engine cannot open it itself:

    - a `LocalStore`: its directory;
    - an `ObjectStore` over obstore's `S3Store`, `GCSStore`, `AzureStore` or `HTTPStore`
      (with no credential provider, a Python callback), or its `LocalStore`: the same
      location, with the settings the obstore store reports (`config`, `client_options`);
    - an `FsspecStore` over `s3fs` (`s3://`: its endpoint, keys, region and `anon`),
      fsspec's HTTP filesystem (`http(s)://`, with no client or request arguments) or local
      filesystem.

    Only those exact classes: a subclass or a wrapper may change what its keys hold. Any
    other store stays with zarr-python's `ByteGetter` / `ByteSetter` (the engine still
    decodes and encodes every chunk)."""
    from zarr.storage import FsspecStore, LocalStore, ObjectStore

    kind = type(store)
    if kind is LocalStore:
        try:
            return _core.EngineStore(str(store.root))
        except StoreError:
            return None
    if kind is not ObjectStore and kind is not FsspecStore:
        return None
    held = _ENGINES.get(id(store))
    if held is not None and held[0]() is store and held[2] == os.getpid():
        return held[1]
    try:
        location = _object_location(store) if kind is ObjectStore else _fsspec_location(store)
        if location is None:
            engine = None
        elif isinstance(location, str):
            engine = _core.EngineStore(location)
        else:
            url, settings = location
            engine = _core.EngineStore.open_url(url, sorted(settings.items()), store.read_only)
    except (StoreError, OSError, ValueError, TypeError, AttributeError):
        # a location or setting the engine does not take: zarr-python's store reads it
        engine = None
    if len(_ENGINES) >= _ENGINES_MAX:
        _ENGINES.pop(next(iter(_ENGINES)))
    _ENGINES[id(store)] = (weakref.ref(store), engine, os.getpid())
    return engine


def _engine_failed(store: Any, engine: Any) -> None:
    """After the engine's own requests to a remote `store` failed (and the batch went
    through zarr-python's store instead): its later batches go there directly. The store's
    credentials are likely ones only zarr-python's store finds (an AWS profile, say), and a
    request the engine retried until it gave up would most likely fail again."""
    if engine.remote:
        _ENGINES[id(store)] = (weakref.ref(store), None, os.getpid())


def _settings(*parts: Any) -> dict[str, str]:
    """Settings as the engine takes them: strings, booleans as `true` / `false`."""
    out: dict[str, str] = {}
    for part in parts:
        for key, value in (part or {}).items():
            if value is None:
                continue
            out[str(key)] = str(value).lower() if isinstance(value, bool) else str(value)
    return out


def _object_location(store: Any) -> str | tuple[str, dict[str, str]] | None:
    """The location of an `ObjectStore`'s obstore store: a directory, or a url and its
    settings; None for any other obstore store."""
    inner = store.store
    kind = type(inner).__name__
    if type(inner).__module__.split(".")[0] != "obstore":
        return None
    if kind == "LocalStore":
        return None if inner.prefix is None else str(inner.prefix)
    if getattr(inner, "credential_provider", None) is not None:
        return None
    if kind == "HTTPStore":
        return inner.url, _settings(inner.client_options)
    scheme, bucket_key = {
        "S3Store": ("s3", "bucket"),
        "GCSStore": ("gs", "bucket"),
        "AzureStore": ("az", "container_name"),
    }.get(kind, (None, None))
    if scheme is None:
        return None
    config = _settings(inner.config, inner.client_options)
    bucket = config.pop(bucket_key, None)
    if not bucket:
        return None
    prefix = str(inner.prefix or "").strip("/")
    return f"{scheme}://{bucket}/{prefix}", config


def _fsspec_location(store: Any) -> str | tuple[str, dict[str, str]] | None:
    """The location of an `FsspecStore`: a directory (fsspec's local filesystem), a url and
    its settings (s3fs, fsspec's HTTP filesystem), or None."""
    fs = store.fs
    path = str(store.path)
    name = type(fs).__name__
    if name == "AsyncFileSystemWrapper":
        # zarr-python wraps a synchronous filesystem: the local one is a directory
        inner = getattr(fs, "sync_fs", None)
        return path if type(inner).__name__ == "LocalFileSystem" else None
    if name == "HTTPFileSystem":
        if fs.kwargs or fs.client_kwargs:
            return None
        return path, {}
    if name == "S3FileSystem":
        client = dict(getattr(fs, "client_kwargs", None) or {})
        endpoint = client.pop("endpoint_url", None) or getattr(fs, "endpoint_url", None)
        region = client.pop("region_name", None)
        given = getattr(fs, "storage_options", None) or {}
        extra = [getattr(fs, "config_kwargs", None), getattr(fs, "s3_additional_kwargs", None),
                 given.get("profile"), given.get("session")]
        if client or any(extra):
            # settings of botocore's the engine has no name for, credentials of a profile
            return None
        settings = _settings(
            {
                "endpoint": endpoint,
                "region": region,
                "access_key_id": getattr(fs, "key", None),
                "secret_access_key": getattr(fs, "secret", None),
                "session_token": getattr(fs, "token", None),
                "skip_signature": True if getattr(fs, "anon", False) else None,
            }
        )
        if endpoint and str(endpoint).startswith("http://"):
            settings["allow_http"] = "true"
        return f"s3://{path.strip('/')}", settings
    return None


class CodecPipeline(_CodecPipelineBase):
    """zarr-python's ``CodecPipeline`` on the zarr-rs engine (see the module's docstring)."""

    def __init__(self, codecs: Iterable[Codec]) -> None:
        self.codecs = tuple(codecs)
        self._check_order()
        self._chunks: dict[Any, _Chunks] = {}

    def __getstate__(self) -> dict[str, Any]:
        # the engine's chains are built again where the pipeline is unpickled
        return {"codecs": self.codecs}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.codecs = state["codecs"]
        self._chunks = {}

    def _check_order(self) -> None:
        # the checks zarr-python's codecs_from_list makes, with its messages
        from zarr.core.codec_pipeline import codecs_from_list

        codecs_from_list(self.codecs)

    # the abstract interface

    @classmethod
    def from_codecs(cls, codecs: Iterable[Codec]) -> Self:
        """The pipeline of these codecs (zarr-python's constructor of every pipeline)."""
        return cls(codecs)

    def evolve_from_array_spec(self, array_spec: ArraySpec) -> Self:
        return type(self)(c.evolve_from_array_spec(array_spec=array_spec) for c in self.codecs)

    def __iter__(self) -> Iterator[Codec]:
        return iter(self.codecs)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CodecPipeline) and self.codecs == other.codecs

    def __hash__(self) -> int:
        return hash(self.codecs)

    def __repr__(self) -> str:
        return f"zarr_rs.CodecPipeline({list(self.codecs)!r})"

    @property
    def supports_partial_decode(self) -> bool:
        """False: zarr-python's partial-decode route is not taken; `read` reads the parts of
        a shard it needs itself, through byte ranges."""
        return False

    @property
    def supports_partial_encode(self) -> bool:
        """False: `write` updates whole chunks (a shard is read once and re-encoded)."""
        return False

    def validate(
        self, *, shape: tuple[int, ...], dtype: Any, chunk_grid: ChunkGrid
    ) -> None:
        for codec in self.codecs:
            codec.validate(shape=shape, dtype=dtype, chunk_grid=chunk_grid)

    def compute_encoded_size(self, byte_length: int, array_spec: ArraySpec) -> int:
        for codec in self.codecs:
            byte_length = codec.compute_encoded_size(byte_length, array_spec)
            array_spec = codec.resolve_metadata(array_spec)
        return byte_length

    # the engine's chains, one per chunk spec

    def _chunks_of(self, spec: ArraySpec) -> _Chunks:
        key = (
            tuple(spec.shape),
            spec.dtype,
            repr(spec.fill_value),
            spec.order,
        )
        got = self._chunks.get(key)
        if got is None:
            # shared by the pipelines of equal codecs (zarr-python makes one per array it
            # opens): the engine's chain is built once, not at every open
            try:
                shared = (self.codecs, key)
                got = _CHAINS.get(shared)
            except TypeError:  # a codec that cannot be hashed
                shared = None
            if got is None:
                got = _Chunks(self.codecs, spec)
                if shared is not None:
                    if len(_CHAINS) >= _CHAINS_MAX:
                        del _CHAINS[next(iter(_CHAINS))]
                    _CHAINS[shared] = got
            self._chunks[key] = got
        return got

    # decode / encode

    async def decode(
        self, chunk_bytes_and_specs: Iterable[tuple[Buffer | None, ArraySpec]]
    ) -> Iterable[NDBuffer | None]:
        items = list(chunk_bytes_and_specs)
        out: list[NDBuffer | None] = [None] * len(items)
        for chunks, idx in self._group([spec for _, spec in items]).items():
            decoded = chunks.codec.decode(
                [None if items[i][0] is None else items[i][0].as_numpy_array() for i in idx]
            )
            for i, d in zip(idx, decoded, strict=True):
                if d is not None:
                    spec = items[i][1]
                    out[i] = spec.prototype.nd_buffer.from_ndarray_like(
                        chunks.to_numpy(d, chunks.shape)
                    )
        return out

    async def encode(
        self, chunk_arrays_and_specs: Iterable[tuple[NDBuffer | None, ArraySpec]]
    ) -> Iterable[Buffer | None]:
        items = list(chunk_arrays_and_specs)
        out: list[Buffer | None] = [None] * len(items)
        for chunks, idx in self._group([spec for _, spec in items]).items():
            todo = [i for i in idx if items[i][0] is not None]
            arrays = []
            for i in todo:
                buf = items[i][0]
                _check_host(buf, "a chunk")
                arrays.append(np.asarray(buf.as_ndarray_like()))
            for i, b in zip(todo, chunks.encode(arrays), strict=True):
                out[i] = items[i][1].prototype.buffer.from_bytes(b)
        return out

    def _small(self, batch: list[Any], own: tuple[Any, Any] | None = None) -> bool:
        """Whether the chunks of `batch` hold at most `_INLINE_BYTES` decoded, and the engine
        reads and writes them in no remote store of its own (`own`): the engine then works
        on the event loop's thread (a worker thread's hand-off costs more)."""
        if own is not None and own[0].remote:
            # its requests wait: the event loop goes on meanwhile
            return False
        total = 0
        for item in batch:
            chunks = self._chunks_of(item[1])
            total += int(np.prod(chunks.shape, dtype=np.int64)) * chunks.view.itemsize
            if total > _INLINE_BYTES:
                return False
        return True

    def _group(self, specs: list[ArraySpec]) -> dict[_Chunks, list[int]]:
        groups: dict[_Chunks, list[int]] = {}
        for i, spec in enumerate(specs):
            groups.setdefault(self._chunks_of(spec), []).append(i)
        return groups

    # read / write

    async def read(
        self,
        batch_info: Iterable[tuple[ByteGetter, ArraySpec, SelectorTuple, SelectorTuple, bool]],
        out: NDBuffer,
        drop_axes: tuple[int, ...] = (),
    ) -> None:
        batch = list(batch_info)
        if not batch:
            return
        _check_host(out, "an output buffer")
        out_arr = out.as_ndarray_like()
        # the engine writes into `out` itself when it is C-contiguous with the engine's
        # element type (a chunk whose selections are not unit-step slices goes through NumPy)
        out_bytes = None
        if (
            out_arr.flags.c_contiguous
            and out_arr.flags.writeable
            and not out_arr.dtype.hasobject
            and out_arr.dtype.kind != "T"
        ):
            out_bytes = out_arr.reshape(-1).view(np.uint8)
        # the output's shape with its dropped axes (integers in the chunk selections) as
        # size-1 dimensions
        full_shape = list(out_arr.shape)
        for axis in sorted(drop_axes):
            full_shape.insert(axis, 1)
        full_shape = tuple(full_shape)

        def direct_ok(chunks: _Chunks) -> bool:
            return out_bytes is not None and not chunks.vlen and out_arr.dtype == chunks.view

        # a chunk read in part through a region (its bounding box: a shard's inner chunks it
        # meets, an uncompressed chunk's byte span), or whole; a selection of elements that
        # is no box (points, strided slices) into a small output goes to `place`, which has
        # the engine decode only the elements it picks
        whole: list[int] = []
        partial: list[tuple[int, tuple[list[int], list[int], tuple[Any, ...]]]] = []
        for i, (_, spec, chunk_sel, _, _) in enumerate(batch):
            chunks = self._chunks_of(spec)
            region = _region_of(chunk_sel, chunks.shape) if chunks.partial else None
            picks = (
                direct_ok(chunks)
                and out_arr.size <= _GATHER_MAX
                and _unit_slices(chunk_sel, chunks.shape) is None
            )
            if region is not None and tuple(region[1]) != chunks.shape and not picks:
                partial.append((i, region))
            else:
                whole.append(i)

        index_of_out: list[np.ndarray[Any, Any]] = []

        def out_index() -> np.ndarray[Any, Any]:
            # the flat element index of each element of `out`, made once per read
            if not index_of_out:
                index_of_out.append(np.arange(out_arr.size, dtype=np.int64).reshape(out_arr.shape))
            return index_of_out[0]

        def place(
            group: list[int],
            fetched: list[Buffer | None] | None,
            own: tuple[Any, dict[int, str]] | None = None,
        ) -> None:
            """Decodes the chunks `group` into `out`: their bytes `fetched` through
            zarr-python's getters, or read by the engine from `own` (its files and each
            chunk's key)."""
            bytes_of = {} if fetched is None else dict(zip(group, fetched, strict=True))

            def stored(positions: list[int]) -> list[Any]:
                if own is not None:
                    return own[0].get_many([own[1][i] for i in positions])
                return [
                    None if bytes_of[i] is None else bytes_of[i].as_numpy_array()
                    for i in positions
                ]

            for chunks, idx in self._group([batch[i][1] for i in group]).items():
                positions = [group[k] for k in idx]
                direct: list[tuple[int, tuple[list[int], list[int], list[int]]]] = []
                rest: list[int] = []
                for i in positions:
                    p = (
                        _placement(batch[i][2], batch[i][3], chunks.shape, full_shape, drop_axes)
                        if direct_ok(chunks)
                        else None
                    )
                    if p is None:
                        rest.append(i)
                    else:
                        direct.append((i, p))
                if direct:
                    # straight into `out`: the engine decodes each chunk into its box (and
                    # reads it first, from a store it opened)
                    boxes = [p for _, p in direct]
                    if own is not None:
                        got = chunks.codec.read_into(
                            own[0], [own[1][i] for i, _ in direct], out_bytes,
                            list(full_shape), boxes,
                        )
                    else:
                        got = chunks.codec.decode_into(
                            stored([i for i, _ in direct]), out_bytes, list(full_shape), boxes
                        )
                    for (i, _), was in zip(direct, got, strict=True):
                        if not was:
                            out[batch[i][3]] = _fill_value(batch[i][1])
                if rest and direct_ok(chunks) and out_arr.size <= _GATHER_MAX:
                    # a few elements of each chunk (points, strided slices): the engine
                    # decodes only what they need and puts each where it goes in `out`
                    gathers = [_gather(batch[i][2], batch[i][3], chunks.shape, out_index())
                               for i in rest]
                    picked = [i for i, g in zip(rest, gathers, strict=True) if g is not None]
                    if picked:
                        pts = [g[0] for g in gathers if g is not None]
                        pos = [g[1] for g in gathers if g is not None]
                        if own is not None:
                            got = chunks.codec.read_points(
                                own[0], [own[1][i] for i in picked], pts, out_bytes, pos
                            )
                        else:
                            got = chunks.codec.decode_points(
                                stored(picked), pts, out_bytes, pos
                            )
                        for i, was in zip(picked, got, strict=True):
                            if not was:
                                out[batch[i][3]] = _fill_value(batch[i][1])
                        rest = [i for i, g in zip(rest, gathers, strict=True) if g is None]
                if not rest:
                    continue
                decoded = chunks.codec.decode(stored(rest))
                for i, d in zip(rest, decoded, strict=True):
                    _, spec, chunk_sel, out_sel, _ = batch[i]
                    if d is None:
                        out[out_sel] = _fill_value(spec)
                        continue
                    tmp = chunks.to_numpy(d, chunks.shape)[chunk_sel]
                    if drop_axes:
                        tmp = tmp.squeeze(axis=drop_axes)
                    out[out_sel] = tmp

        # the chunks of a store the engine opens itself (`_engine_of`) are read by the
        # engine; on a store failure (a file it cannot read, a symbolic link its filesystem
        # store refuses, a request refused) the batch is read again through zarr-python's
        # getters, which follow the store's own rules
        own = _engine_store([g for g, *_ in batch], writing=False)
        if own is not None:
            # the engine's chains are built here, on the loop's thread, before the worker
            # thread looks them up
            for i in range(len(batch)):
                self._chunks_of(batch[i][1])
            files, keys = own
            small = self._small(batch, own)
            try:
                if whole:
                    await _off_loop(
                        small, place, whole, None, (files, {i: keys[i] for i in whole})
                    )
                if partial:
                    await _off_loop(
                        small, self._read_partial, batch, partial, out, drop_axes, files, keys
                    )
                return
            except StoreError:
                _engine_failed(batch[0][0].store, own[0])

        if whole:
            # in groups: the next group is fetched on the event loop while a worker thread
            # decodes the last one (the engine, GIL released) and places it in `out`
            size = max(16, 2 * int(config.get("async.concurrency") or 10))
            groups = [whole[k : k + size] for k in range(0, len(whole), size)]

            async def fetch(group: list[int]) -> list[Buffer | None]:
                return await concurrent_map(
                    [(batch[i][0], batch[i][1].prototype) for i in group],
                    lambda getter, prototype: getter.get(prototype=prototype),
                    config.get("async.concurrency"),
                )

            if len(groups) == 1:
                place(groups[0], await fetch(groups[0]))
            else:
                # the engine's chains are built here, on the loop's thread, before any worker
                # thread looks them up
                for i in whole:
                    self._chunks_of(batch[i][1])
                pending = asyncio.ensure_future(fetch(groups[0]))
                for k, group in enumerate(groups):
                    fetched = await pending
                    if k + 1 < len(groups):
                        pending = asyncio.ensure_future(fetch(groups[k + 1]))
                    await asyncio.to_thread(place, group, fetched)

        if partial:
            for i, _ in partial:
                self._chunks_of(batch[i][1])
            loop = asyncio.get_running_loop()
            sources = [_Source(batch[i][0], batch[i][1].prototype, loop) for i, _ in partial]
            await asyncio.to_thread(
                self._read_partial, batch, partial, out, drop_axes, None, sources
            )

    def _read_partial(
        self,
        batch: list[tuple[ByteGetter, ArraySpec, SelectorTuple, SelectorTuple, bool]],
        partial: list[tuple[int, tuple[list[int], list[int], tuple[Any, ...]]]],
        out: NDBuffer,
        drop_axes: tuple[int, ...],
        files: Any,
        sources: list[Any],
    ) -> None:
        """Reads the region of each chunk of `partial` that its selection meets into `out`:
        through `files` (the engine's, `sources` then the chunks' keys, one per chunk of
        `batch`) or through `sources` (one `_Source` per entry of `partial`). Runs on a
        worker thread (a `_Source` calls back into the event loop)."""
        by_chunks: dict[_Chunks, list[int]] = {}
        for k, (i, _) in enumerate(partial):
            by_chunks.setdefault(self._chunks_of(batch[i][1]), []).append(k)
        for chunks, ks in by_chunks.items():
            regions = [(partial[k][1][0], partial[k][1][1]) for k in ks]
            if files is not None:
                keys = [sources[partial[k][0]] for k in ks]
                decoded = chunks.codec.read_regions(files, keys, regions)
            else:
                decoded = chunks.codec.decode_regions([sources[k] for k in ks], regions)
            for k, d in zip(ks, decoded, strict=True):
                i, (_, extent, rel) = partial[k]
                _, spec, _, out_sel, _ = batch[i]
                if d is None:
                    out[out_sel] = _fill_value(spec)
                    continue
                tmp = chunks.to_numpy(d, tuple(extent))[rel]
                if drop_axes:
                    tmp = tmp.squeeze(axis=drop_axes)
                out[out_sel] = tmp

    async def write(
        self,
        batch_info: Iterable[tuple[ByteSetter, ArraySpec, SelectorTuple, SelectorTuple, bool]],
        value: NDBuffer,
        drop_axes: tuple[int, ...] = (),
    ) -> None:
        batch = list(batch_info)
        if not batch:
            return
        _check_host(value, "a value")
        # the engine's chains are built here, on the loop's thread, before any worker thread
        # looks them up
        for i in range(len(batch)):
            self._chunks_of(batch[i][1])
        # the chunks of a store the engine opens itself are read and written by the engine;
        # on a store failure
        # the batch is written again through zarr-python's setters (writing a chunk twice
        # leaves what writing it once does)
        own = _engine_store([s for s, *_ in batch], writing=True)
        if own is not None:
            try:
                await self._write(batch, value, drop_axes, own)
                return
            except StoreError:
                _engine_failed(batch[0][0].store, own[0])
        await self._write(batch, value, drop_axes, None)

    async def _write(
        self,
        batch: list[tuple[ByteSetter, ArraySpec, SelectorTuple, SelectorTuple, bool]],
        value: NDBuffer,
        drop_axes: tuple[int, ...],
        own: tuple[Any, list[str]] | None,
    ) -> None:
        """`write` through zarr-python's setters, or through `own` (the engine's handle on the
        store, `_engine_store`, and each chunk's key)."""
        val = value.as_ndarray_like()
        if (
            isinstance(val, np.ndarray)
            and val.ndim
            and not val.flags.c_contiguous
            and not val.dtype.hasobject
            and val.nbytes <= _COPY_MAX
        ):
            # a view (`a[box] = data[box]`): one C-order copy, so that the engine encodes
            # and updates chunks straight from it rather than through NumPy
            val = np.ascontiguousarray(val)
        small = self._small(batch, own)

        # the stored chunks a write covers in part are read and merged first
        def takes_whole(i: int) -> bool:
            _, spec, _, out_sel, complete = batch[i]
            return (
                complete
                and val.shape == tuple(spec.shape)
                and val[out_sel].shape == tuple(spec.shape)
            )

        merged: list[np.ndarray[Any, Any] | None] = [None] * len(batch)
        to_read = [i for i in range(len(batch)) if not takes_whole(i)]
        reading = set(to_read)
        fetch = [i for i in to_read if not batch[i][4]]
        existing_bytes: dict[int, np.ndarray[Any, Any] | None]
        if own is not None:
            files, keys = own
            got = await _off_loop(small, files.get_many, [keys[i] for i in fetch])
            existing_bytes = dict(zip(fetch, got, strict=True))
        else:
            # zarr-python's sharding codec reads a shard before writing it even when the
            # write covers the whole of it (one get per shard written, which zarr-python's
            # tests count): the same requests here, whose bytes are not needed
            touch = [
                i
                for i in range(len(batch))
                if i not in reading and self._chunks_of(batch[i][1]).sharded
            ]
            if touch:
                await concurrent_map(
                    [(batch[i][0], batch[i][1].prototype) for i in touch],
                    lambda setter, prototype: setter.get(prototype=prototype),
                    config.get("async.concurrency"),
                )
            fetched = await concurrent_map(
                [(batch[i][0], batch[i][1].prototype) for i in fetch],
                lambda setter, prototype: setter.get(prototype=prototype),
                config.get("async.concurrency"),
            )
            existing_bytes = {
                i: None if b is None else b.as_numpy_array()
                for i, b in zip(fetch, fetched, strict=True)
            }
        # a shard written in part, from a box of the value: updated by the engine's partial
        # encoder, which decodes and re-encodes only the inner chunks the box touches
        encoded: dict[int, bytes] = {}
        updated = self._update_in_part(batch, val, drop_axes, fetch, existing_bytes, encoded)
        existing: dict[int, np.ndarray[Any, Any]] = {}
        stored = [i for i in fetch if existing_bytes[i] is not None and i not in updated]
        for chunks, idx in self._group([batch[i][1] for i in stored]).items():
            positions = [stored[k] for k in idx]
            decoded = chunks.codec.decode([existing_bytes[i] for i in positions])
            for i, d in zip(positions, decoded, strict=True):
                existing[i] = chunks.to_numpy(d, chunks.shape)

        # chunks a write covers whole, from a value of the engine's element type: encoded by
        # the engine straight from the value's buffer (no copy per chunk when the chunk is
        # a contiguous run of it), the empty-chunk check made there too; in a store of its
        # own the engine stores them itself (`written`)
        written: set[int] = set()
        from_value = await _off_loop(
            small, self._encode_from_value, batch, val, drop_axes, encoded, own, written
        )
        done = from_value | updated

        for i, (_, spec, chunk_sel, out_sel, _) in enumerate(batch):
            if i in done:
                continue
            if i not in reading:
                merged[i] = np.asarray(val)
                continue
            chunks = self._chunks_of(spec)
            base = existing.get(i)
            if base is None:
                arr = np.empty(chunks.shape, dtype=chunks.native)
                arr[...] = _fill_value(spec)
            else:
                arr = np.array(base, dtype=chunks.native, copy=True)
            if chunk_sel == () or is_scalar(val, spec.dtype.to_native_dtype()):
                chunk_value = val
            else:
                chunk_value = val[out_sel]
                if drop_axes:
                    item = tuple(
                        None if axis in drop_axes else slice(None) for axis in range(len(spec.shape))
                    )
                    chunk_value = chunk_value[item]
            arr[chunk_sel] = chunk_value
            merged[i] = arr

        # write_empty_chunks as zarr-python decides it: a chunk equal to the fill value is
        # deleted rather than stored; the engine compares the bytes where that is zarr-python's
        # test (`_fill_bytes`), NumPy (zarr-python's `all_equal`) elsewhere
        keep: dict[tuple[_Chunks, bytes | None], list[int]] = {}
        for i, (_, spec, _, _, _) in enumerate(batch):
            if i in done:
                continue
            chunks = self._chunks_of(spec)
            fill = None
            if not spec.config.write_empty_chunks:
                fill = None if chunks.vlen else _fill_bytes(spec, chunks)
                if fill is None and spec.prototype.nd_buffer.from_ndarray_like(
                    merged[i]
                ).all_equal(_fill_value(spec)):
                    continue
            keep.setdefault((chunks, fill), []).append(i)
        for (chunks, fill), positions in keep.items():
            for i, b in zip(
                positions, chunks.encode([merged[i] for i in positions], fill), strict=True
            ):
                if b is not None:
                    encoded[i] = b

        todo = [i for i in range(len(batch)) if i not in written]
        if own is not None:
            files, keys = own
            await _off_loop(
                small, files.set_many, [keys[i] for i in todo], [encoded.get(i) for i in todo]
            )
            return

        async def store(setter: ByteSetter, i: int) -> None:
            if i in encoded:
                await setter.set(batch[i][1].prototype.buffer.from_bytes(encoded[i]))
            else:
                await setter.delete()

        await concurrent_map(
            [(batch[i][0], i) for i in todo],
            store,
            config.get("async.concurrency"),
        )

    def _update_in_part(
        self,
        batch: list[tuple[ByteSetter, ArraySpec, SelectorTuple, SelectorTuple, bool]],
        val: Any,
        drop_axes: tuple[int, ...],
        fetch: list[int],
        existing_bytes: dict[int, np.ndarray[Any, Any] | None],
        encoded: dict[int, bytes],
    ) -> set[int]:
        """Updates the chunks of `batch` written in part (`fetch`, whose stored bytes are
        `existing_bytes`) in the engine when the value is a C-contiguous NumPy array of the
        engine's element type and both selections are unit-step slices: a shard through its
        partial encoder (`ChunkCodec.encode_update`, only the inner chunks the box touches),
        any other chunk decoded, updated and encoded in one call (`ChunkCodec.update_chunk`)
        where zarr-python's empty-chunk test is a comparison of bytes. A chunk left with
        nothing to store gets no entry in `encoded` (it is deleted). A scalar value is a block
        of the box's shape. Returns the chunks done."""
        if not isinstance(val, np.ndarray) or val.dtype.hasobject or val.dtype.kind == "T":
            return set()
        scalar = val.ndim == 0
        if not scalar and not val.flags.c_contiguous:
            return set()
        full_shape = list(val.shape)
        for axis in sorted(drop_axes):
            full_shape.insert(axis, 1)
        full_shape_t = tuple(full_shape)
        flat: Any = None
        done: set[int] = set()
        for i in fetch:
            _, spec, chunk_sel, out_sel, _ = batch[i]
            chunks = self._chunks_of(spec)
            if chunks.vlen or val.dtype != chunks.view:
                continue
            partial_encoder = chunks.sharded and chunks.codec.supports_partial_encode
            fill: bytes | None = None
            if not partial_encoder:
                # a chunk that is no shard: decoded, updated and encoded in one engine call,
                # where the empty-chunk test is a comparison of bytes (`_fill_bytes`)
                if chunks.sharded:
                    continue
                if not spec.config.write_empty_chunks:
                    fill = _fill_bytes(spec, chunks)
                    if fill is None:
                        continue
            if scalar:
                c = _unit_slices(chunk_sel, chunks.shape)
                if c is None:
                    continue
                block = np.full(tuple(c[1]), val, dtype=val.dtype)
                p: Any = (c[0], c[1], [0] * len(c[1]))
                data, data_shape = block.reshape(-1).view(np.uint8), list(block.shape)
            else:
                p = _placement(chunk_sel, out_sel, chunks.shape, full_shape_t, drop_axes)
                if p is None:
                    continue
                if flat is None:
                    flat = val.reshape(-1).view(np.uint8)
                data, data_shape = flat, full_shape
            if partial_encoder:
                b = chunks.codec.encode_update(
                    existing_bytes[i], data, data_shape, p, bool(spec.config.write_empty_chunks)
                )
            else:
                b = chunks.codec.update_chunk(existing_bytes[i], data, data_shape, p, fill)
            if b is not None:
                encoded[i] = b
            done.add(i)
        return done

    def _encode_from_value(
        self,
        batch: list[tuple[ByteSetter, ArraySpec, SelectorTuple, SelectorTuple, bool]],
        val: Any,
        drop_axes: tuple[int, ...],
        encoded: dict[int, bytes],
        own: tuple[Any, list[str]] | None,
        written: set[int],
    ) -> set[int]:
        """Encodes the chunks of `batch` that the value covers whole straight from its buffer
        (`ChunkCodec.encode_from`), when it is a C-contiguous NumPy array of the engine's
        element type; an empty chunk (all fill value, `write_empty_chunks` off) gets no entry
        in `encoded` (it is deleted). With `own` (the engine's handle on the store and each
        chunk's key) the engine stores or deletes each chunk itself
        (`ChunkCodec.write_from`) and adds it to `written`. Returns the chunks done. Runs on a
        worker thread."""
        if not isinstance(val, np.ndarray) or val.ndim == 0 or not val.flags.c_contiguous:
            return set()
        if val.dtype.hasobject or val.dtype.kind == "T":
            return set()
        full_shape = list(val.shape)
        for axis in sorted(drop_axes):
            full_shape.insert(axis, 1)
        full_shape_t = tuple(full_shape)
        groups: dict[_Chunks, list[tuple[int, tuple[list[int], list[int], list[int]], Any]]] = {}
        for i, (_, spec, chunk_sel, out_sel, complete) in enumerate(batch):
            if not complete:
                continue
            chunks = self._chunks_of(spec)
            if chunks.vlen or val.dtype != chunks.view:
                continue
            p = _placement(chunk_sel, out_sel, chunks.shape, full_shape_t, drop_axes)
            if p is None or any(p[0]) or tuple(p[1]) != chunks.shape:
                continue
            fill: Any = None
            if not spec.config.write_empty_chunks:
                fill = _fill_bytes(spec, chunks)
                if fill is None:
                    continue
            groups.setdefault(chunks, []).append((i, p, fill))
        done: set[int] = set()
        flat = val.reshape(-1).view(np.uint8)
        for chunks, items in groups.items():
            # one call per fill value (every chunk of one spec has the same)
            by_fill: dict[Any, list[tuple[int, Any]]] = {}
            for i, p, fill in items:
                by_fill.setdefault(fill, []).append((i, p))
            for fill, its in by_fill.items():
                boxes = [p for _, p in its]
                if own is not None:
                    files, keys = own
                    chunks.codec.write_from(
                        files, [keys[i] for i, _ in its], flat, full_shape, boxes, fill
                    )
                    written.update(i for i, _ in its)
                    done.update(i for i, _ in its)
                    continue
                got = chunks.codec.encode_from(flat, full_shape, boxes, fill)
                for (i, _), b in zip(its, got, strict=True):
                    if b is not None:
                        encoded[i] = b
                    done.add(i)
        return done


def _fill_bytes(spec: ArraySpec, chunks: _Chunks) -> bytes | None:
    """The bytes of one element equal to the fill value, when zarr-python's empty-chunk test
    (``NDBuffer.all_equal``) is the same as comparing bytes for this data type, else None (a
    chunk of it is checked by NumPy)."""
    fill = _fill_value(spec)
    kind = chunks.view.kind
    if kind in "biuMmSU":
        pass
    elif kind == "f" and np.asarray(fill).dtype.kind == "f" and fill == 0.0:
        # zarr-python compares the bits against a zero fill value (0.0 and -0.0 differ)
        pass
    else:
        # float NaN and other fill values compare by value, structured types field by field
        return None
    try:
        return np.asarray(fill, dtype=chunks.view).tobytes()
    except (TypeError, ValueError, OverflowError):
        return None


# zarr-python finds a pipeline class by its module and name: `zarr_rs.CodecPipeline`.
CodecPipeline.__module__ = "zarr_rs"


def _register() -> None:
    from zarr.registry import register_pipeline

    register_pipeline(CodecPipeline)


_register()
