#!/usr/bin/env python3
"""Write (or check) this project's conformance corpora: Zarr v3 (v3/), Zarr v2 (v2/) and
xarray hierarchies (xarray/); the output directory's name picks one (or --kind).

Every fixture is written by an independent implementation -- zarr-python or
TensorStore -- or, for metadata documents, by hand; never by this project.
Each array that must be readable sits next to the data it must decode to,
``NAME.npy`` (NumPy format, C order, little-endian).  ``manifest.json`` lists
every fixture::

    {"path": "blosc_lz4_shuffle", "node": "array", "writer": "zarr-python",
     "expect": "read", "data": "blosc_lz4_shuffle.npy", "why": "..."}

* ``node``:   "array" or "group".
* ``writer``: "zarr-python", "tensorstore" or "hand-written" (a zarr.json
  written by this script; chunks, if any, come from zarr-python).
* ``expect``: "read" (open it and decode exactly ``data``; NaN equals NaN) or
  "reject" (a conforming reader must refuse to open it, with an error).
* ``data``:   the .npy file name for readable arrays, else null.

The category of a fixture is the first word of its name (``dtype_``,
``blosc_``, ``shard_``, ``reject_``, ...); see README.md.

Usage (with the pinned peers from ``scripts/peers-venv``)::

    PY=$(scripts/peers-venv | tail -n1)
    $PY conformance/generate.py conformance/v3 --seed 1     # (re)write the corpus
    $PY conformance/generate.py --check conformance/v3      # read it back
    $PY conformance/generate.py conformance/v2 --seed 1     # the v2 corpus (also: xarray)

Writing is deterministic for a given seed and set of peer versions: run it
twice and the trees are byte-identical.
"""
from __future__ import annotations

import argparse
import functools
import gzip
import importlib.metadata
import json
import re
import shutil
import sys
import types
import warnings
from pathlib import Path

import numpy as np

warnings.filterwarnings("ignore")  # zarr-python warns about sharding, v2 keys, ...

import numcodecs  # noqa: E402
import zarr  # noqa: E402
from zarr.codecs import (  # noqa: E402
    BloscCodec,
    BytesCodec,
    Crc32cCodec,
    GzipCodec,
    ShardingCodec,
    ShardingCodecIndexLocation,
    TransposeCodec,
    ZstdCodec,
)

# numcodecs' gzip stamps the current time into the gzip header, which would make
# every run differ; pin the header's mtime to 0 (the payload is unchanged).
import numcodecs.gzip as _numcodecs_gzip  # noqa: E402

_numcodecs_gzip._gzip = types.SimpleNamespace(
    GzipFile=functools.partial(gzip.GzipFile, mtime=0))

# Small by default: 3 x 3 chunks, partial on both axes.
SHAPE = (20, 13)
CHUNKS = (8, 5)

CORE_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
               "uint32", "uint64", "float16", "float32", "float64",
               "complex64", "complex128"]

LE = {"name": "bytes", "configuration": {"endian": "little"}}
BE = {"name": "bytes", "configuration": {"endian": "big"}}


def version(pkg: str) -> str:
    try:
        return importlib.metadata.version(pkg)
    except importlib.metadata.PackageNotFoundError:
        return "absent"


# ---------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------

class Corpus:
    """Collects fixtures under ``out`` and their manifest entries."""

    def __init__(self, out: Path, seed: int):
        self.out = out
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.fixtures: list[dict] = []
        self.skipped: list[str] = []   # what a peer could not write

    # -- data ---------------------------------------------------------------
    def sample(self, dtype, shape, specials: bool = True) -> np.ndarray:
        """Random data over the dtype's range; floats also get the awkward values."""
        dt = np.dtype(dtype)
        if not dt.isnative:  # (NumPy's generator makes native-endian values only)
            return self.sample(dt.newbyteorder("="), shape, specials).astype(dt)
        shape = tuple(shape)
        n = int(np.prod(shape, dtype=np.int64))
        if dt.kind == "b":
            a = self.rng.integers(0, 2, size=shape).astype(bool)
        elif dt.kind in "iu":
            info = np.iinfo(dt)
            a = self.rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)
            if specials and n >= 3:
                a.flat[:3] = [info.min, info.max, 0]
        elif dt.kind == "f":
            a = (self.rng.standard_normal(shape) * 100).astype(dt)
            if specials and n >= 8:
                fi = np.finfo(dt)
                a.flat[:8] = [np.nan, np.inf, -np.inf, -0.0, fi.max, fi.min,
                              fi.smallest_subnormal, fi.tiny]
        elif dt.kind == "c":
            a = (self.rng.standard_normal(shape) * 100
                 + 1j * self.rng.standard_normal(shape) * 100).astype(dt)
            if specials and n >= 4:
                a.flat[:4] = [complex(np.nan, 1), complex(np.inf, -np.inf),
                              complex(-0.0, np.nan), complex(0, -0.0)]
        elif dt.kind in "Mm":  # datetime64 / timedelta64: int64 counts, NaT is int64 min
            info = np.iinfo(np.int64)
            a = self.rng.integers(info.min + 1, info.max, size=shape, dtype=np.int64,
                                  endpoint=True)
            if specials and n >= 3:
                a.flat[:3] = [info.min, info.max, 0]
            a = a.view(dt)
        else:
            raise ValueError(dtype)
        return np.array(a, order="C")

    # -- bookkeeping -----------------------------------------------------------
    def record(self, name, data, why, writer, node="array", expect="read", zarr_format=None):
        entry = {"path": name, "node": node, "writer": writer, "expect": expect,
                 "data": None, "why": why}
        if zarr_format is not None:  # (the v3 corpus predates the field: absent means 3)
            entry["zarr_format"] = zarr_format
        if data is not None and data.dtype.kind in "OT":
            # variable-size strings and bytes: saved as NumPy's fixed-size 'U' / 'S' (no
            # pickle); the generator's bytes never end in b"\\0", which 'S' would drop
            kind = "S" if data.size and isinstance(data.flat[0], bytes) else "U"
            data = np.array(data.astype(object).tolist(), dtype=kind if data.size else f"{kind}1")
        if data is not None:
            data = np.array(data, order="C")  # (ascontiguousarray would make 0-d 1-d)
            if data.dtype.byteorder == ">":
                data = data.astype(data.dtype.newbyteorder("<"))
            np.save(self.out / f"{name}.npy", data, allow_pickle=False)
            entry["data"] = f"{name}.npy"
        self.fixtures.append(entry)

    def path(self, name) -> str:
        return str(self.out / name)

    # -- writers ---------------------------------------------------------------
    def zp(self, name, data, why, *, write=True, **create):
        """Write ``data`` with zarr-python (``zarr.create_array(**create)``).

        zarr-python does not store a chunk that is entirely fill value, so
        fill-only regions come out as missing chunks.
        """
        create.setdefault("chunks", CHUNKS if data.ndim == 2 else data.shape)
        create.setdefault("dtype", data.dtype)
        a = zarr.create_array(self.path(name), shape=data.shape, **create)
        if write and data.size:
            a[...] = data
        self.record(name, data, why, "zarr-python", zarr_format=create.get("zarr_format"))
        return a

    def zp2(self, name, data, why, **create):
        """``zp`` with ``zarr_format=2``; no compressor unless one is given."""
        create.setdefault("compressors", None)
        return self.zp(name, data, why, zarr_format=2, **create)

    def doc2(self, name, files, expect, why, node="array", data=None):
        """Hand-written v2 documents: ``files`` maps a file name (``.zarray``, ``.zgroup``,
        ``.zattrs``, ``.zmetadata``) to a dict (written as zarr-python would, indent 2) or to
        raw text (for malformed JSON)."""
        d = self.out / name
        d.mkdir(parents=True)
        for fname, meta in files.items():
            text = meta if isinstance(meta, str) else json.dumps(meta, indent=2)
            (d / fname).write_text(text)
        self.record(name, data, why, "hand-written", node=node, expect=expect, zarr_format=2)

    def ts(self, name, data, why, *, codecs=None, chunks=None, fill=None, extra=None,
           write=True):
        """Write ``data`` with TensorStore's zarr3 driver; returns False if it refused."""
        import tensorstore as ts
        if fill is None:  # zero, spelled as the data type wants it
            fill = {"b": False, "c": [0.0, 0.0]}.get(data.dtype.kind, 0)
        chunks = chunks or (CHUNKS if data.ndim == 2 else data.shape)
        meta = {"shape": list(data.shape), "data_type": str(data.dtype),
                "chunk_grid": {"name": "regular",
                               "configuration": {"chunk_shape": list(chunks)}},
                "fill_value": fill,
                "codecs": codecs or [LE]}
        meta.update(extra or {})
        try:
            t = ts.open({"driver": "zarr3",
                         "kvstore": {"driver": "file", "path": self.path(name)},
                         "metadata": meta},
                        create=True, delete_existing=True).result()
            if write and data.size:
                t.write(data).result()
        except Exception as e:  # noqa: BLE001 - report any refusal, keep going
            shutil.rmtree(self.path(name), ignore_errors=True)
            self.skipped.append(f"tensorstore {name}: {type(e).__name__}: {str(e).splitlines()[0]}")
            return False
        self.record(name, data, why, "tensorstore")
        return True

    def doc(self, name, meta, expect, why, node="array", data=None):
        """A hand-written zarr.json (a dict, or raw text for malformed JSON)."""
        d = self.out / name
        d.mkdir(parents=True)
        text = meta if isinstance(meta, str) else json.dumps(meta, indent=2) + "\n"
        (d / "zarr.json").write_text(text)
        self.record(name, data, why, "hand-written", node=node, expect=expect)

    def edit(self, name, **fields):
        """Rewrite top-level fields of a fixture's zarr.json; the entry becomes hand-written."""
        p = self.out / name / "zarr.json"
        meta = json.loads(p.read_text())
        meta.update(fields)
        p.write_text(json.dumps(meta, indent=2) + "\n")
        for e in self.fixtures:
            if e["path"] == name:
                e["writer"] = "hand-written"

    def manifest(self):
        doc = {"generator": "conformance/generate.py", "seed": self.seed,
               "zarr_python": version("zarr"), "tensorstore": version("tensorstore"),
               "numcodecs": version("numcodecs"), "numpy": version("numpy"),
               "fixtures": self.fixtures}
        (self.out / "manifest.json").write_text(json.dumps(doc, indent=1) + "\n")


# ---------------------------------------------------------------------------
# The fixtures, by category
# ---------------------------------------------------------------------------

def data_types(c: Corpus):
    """dtype_*: every core data type, random data, plain bytes codec (no compressor)."""
    for dt in CORE_DTYPES:
        c.zp(f"dtype_{dt}", c.sample(dt, SHAPE),
             f"data type {dt}, random data over the full range, 3x3 chunks with partial "
             f"edges, bytes codec only", compressors=None)
    c.zp("defaults_zarr_python", c.sample("float32", SHAPE),
         "zarr-python's default codecs (bytes + zstd level 0)")


def endianness(c: Corpus):
    """bytes_*: the bytes codec, little and big endian, for every multi-byte type."""
    c.zp("bytes_little_int32", c.sample("int32", SHAPE), "bytes codec endian=little",
         serializer=BytesCodec(endian="little"), compressors=None)
    for dt in CORE_DTYPES:
        if np.dtype(dt).itemsize == 1:
            continue
        c.zp(f"bytes_big_{dt}", c.sample(dt, SHAPE), f"bytes codec endian=big, {dt}",
             serializer=BytesCodec(endian="big"), compressors=None)


def transposes(c: Corpus):
    """transpose_*: the transpose array->array codec."""
    c.zp("transpose_2d", c.sample("float64", SHAPE), "transpose order [1,0]",
         filters=[TransposeCodec(order=(1, 0))], compressors=None)
    c.zp("transpose_3d", c.sample("uint16", (5, 6, 7)), "transpose order [2,0,1], zstd",
         chunks=(2, 3, 4), filters=[TransposeCodec(order=(2, 0, 1))],
         compressors=[ZstdCodec(level=3)])
    c.zp("transpose_identity", c.sample("int16", SHAPE), "transpose order [0,1] (a no-op)",
         filters=[TransposeCodec(order=(0, 1))], compressors=None)
    c.zp("transpose_big_gzip", c.sample("float32", SHAPE),
         "transpose [1,0], then bytes big endian, then gzip",
         filters=[TransposeCodec(order=(1, 0))], serializer=BytesCodec(endian="big"),
         compressors=[GzipCodec(level=6)])
    c.zp("transpose_4d", c.sample("int8", (3, 4, 2, 5)), "transpose order [3,1,0,2] on 4-d",
         chunks=(2, 3, 2, 4), filters=[TransposeCodec(order=(3, 1, 0, 2))], compressors=None)


def compressors(c: Corpus):
    """gzip_*, zstd_*, crc32c*: bytes->bytes codecs and chains of them."""
    for level in (0, 1, 9):
        c.zp(f"gzip_{level}", c.sample("int64", SHAPE), f"gzip level {level}",
             compressors=[GzipCodec(level=level)])
    c.zp("zstd_default", c.sample("float32", SHAPE), "zstd level 0 (the library default)",
         compressors=[ZstdCodec(level=0)])
    c.zp("zstd_22", c.sample("uint32", SHAPE), "zstd level 22",
         compressors=[ZstdCodec(level=22)])
    c.zp("zstd_negative", c.sample("int16", SHAPE), "zstd negative level -3 (fast mode)",
         compressors=[ZstdCodec(level=-3)])
    c.zp("zstd_checksum", c.sample("uint8", SHAPE), "zstd with checksum=true",
         compressors=[ZstdCodec(level=1, checksum=True)])
    c.zp("zstd_no_checksum", c.sample("uint8", SHAPE), "zstd with checksum=false",
         compressors=[ZstdCodec(level=5, checksum=False)])
    c.zp("crc32c", c.sample("int16", SHAPE), "crc32c after bytes",
         compressors=[Crc32cCodec()])
    c.zp("crc32c_zstd", c.sample("uint32", SHAPE), "zstd then crc32c",
         compressors=[ZstdCodec(level=1), Crc32cCodec()])
    c.zp("crc32c_gzip_zstd", c.sample("float64", SHAPE),
         "three bytes->bytes codecs: gzip, zstd, crc32c",
         compressors=[GzipCodec(level=1), ZstdCodec(level=1), Crc32cCodec()])


def blosc(c: Corpus):
    """blosc_*: 5 compressors x 3 shuffles, plus clevel 0 and an explicit blocksize."""
    # Vary the element size so that shuffle and bitshuffle see typesize 1, 4 and 8.
    dtypes = {"noshuffle": "uint8", "shuffle": "int32", "bitshuffle": "float64"}
    for cname in ["lz4", "lz4hc", "blosclz", "zstd", "zlib"]:
        for shuffle in ["noshuffle", "shuffle", "bitshuffle"]:
            dt = dtypes[shuffle]
            c.zp(f"blosc_{cname}_{shuffle}", c.sample(dt, SHAPE),
                 f"blosc cname={cname} shuffle={shuffle} clevel=5, {dt}",
                 compressors=[BloscCodec(cname=cname, clevel=5, shuffle=shuffle)])
    c.zp("blosc_clevel0", c.sample("int16", SHAPE), "blosc clevel=0 (stored, not compressed)",
         compressors=[BloscCodec(cname="lz4", clevel=0, shuffle="shuffle")])
    c.zp("blosc_blocksize", c.sample("float32", (64, 64)),
         "blosc with an explicit blocksize of 1024 bytes (several blocks per chunk)",
         chunks=(32, 32), compressors=[BloscCodec(cname="zstd", clevel=3, shuffle="shuffle",
                                                  blocksize=1024)])


def sharding(c: Corpus):
    """shard_*: sharding_indexed in its various shapes."""
    c.zp("shard_index_end", c.sample("uint16", SHAPE),
         "shards 8x10 of inner chunks 4x5, index at end (bytes+crc32c), inner zstd, partial "
         "shards at both edges", chunks=(4, 5), shards=(8, 10), compressors=[ZstdCodec(level=1)])
    c.zp("shard_index_start", c.sample("int32", SHAPE),
         "index at start, inner gzip, partial shards",
         serializer=ShardingCodec(chunk_shape=(4, 5), codecs=[BytesCodec(), GzipCodec(level=1)],
                                  index_location=ShardingCodecIndexLocation.start),
         chunks=(8, 10), compressors=None)
    d = c.sample("float32", SHAPE)
    d[0:4, 0:5] = 0          # inner chunk all fill: empty slot in the index
    d[4:8, 5:10] = 0         # another one
    d[8:16, 0:10] = 0        # a whole shard all fill: the shard is not stored
    c.zp("shard_missing_inner", d,
         "missing inner chunks (index entries 2^64-1) and one missing shard; fill 0",
         chunks=(4, 5), shards=(8, 10), fill_value=0)
    c.zp("shard_outer_codecs", c.sample("int32", SHAPE),
         "sharding followed by zstd and crc32c over the whole shard",
         serializer=ShardingCodec(chunk_shape=(4, 5), codecs=[BytesCodec()]),
         chunks=(8, 10), compressors=[ZstdCodec(level=1), Crc32cCodec()])
    c.zp("shard_index_plain", c.sample("int64", SHAPE),
         "index codecs [bytes] only (no crc32c), index at end",
         serializer=ShardingCodec(chunk_shape=(4, 5), codecs=[BytesCodec()],
                                  index_codecs=[BytesCodec()]),
         chunks=(8, 10), compressors=None)
    c.zp("shard_big_endian", c.sample("float64", SHAPE),
         "big-endian inner chunks and a big-endian index",
         serializer=ShardingCodec(chunk_shape=(4, 5), codecs=[BytesCodec(endian="big")],
                                  index_codecs=[BytesCodec(endian="big"), Crc32cCodec()]),
         chunks=(8, 10), compressors=None)
    # zarr-python checks the inner chunk shape against the untransposed shard shape, so
    # it cannot write a non-square case here; with square shards both readings agree.
    c.zp("shard_transpose_outer", c.sample("int16", SHAPE),
         "transpose [1,0] before sharding: shards 8x8 of 4x4 chunks (transposed shard)",
         filters=[TransposeCodec(order=(1, 0))],
         serializer=ShardingCodec(chunk_shape=(4, 4), codecs=[BytesCodec()]),
         chunks=(8, 8), compressors=None)
    c.zp("shard_transpose_inner", c.sample("float32", (12, 12)),
         "transpose [1,0] inside the shard's codecs", chunks=(3, 6), shards=(6, 12),
         filters=[TransposeCodec(order=(1, 0))])
    c.zp("shard_blosc_inner", c.sample("uint8", SHAPE), "blosc inside the shard",
         chunks=(4, 5), shards=(8, 10),
         compressors=[BloscCodec(cname="lz4", clevel=5, shuffle="bitshuffle")])
    d = c.sample("int16", (16, 16))
    d[0:2, 0:2] = 0
    c.zp("shard_nested", d,
         "sharding inside sharding: shards 8x8 > 4x4 > 2x2, one innermost chunk missing",
         serializer=ShardingCodec(chunk_shape=(4, 4), codecs=[
             ShardingCodec(chunk_shape=(2, 2), codecs=[BytesCodec(), ZstdCodec(level=1)])]),
         chunks=(8, 8), compressors=None, fill_value=0)
    c.zp("shard_1d", c.sample("int32", (100,)), "1-d: 100 elements, shards of 30, chunks of 10",
         chunks=(10,), shards=(30,))
    c.zp("shard_3d", c.sample("complex64", (6, 7, 5)), "3-d sharding with partial shards",
         chunks=(2, 2, 2), shards=(4, 4, 4))
    try:
        c.zp("shard_0d", np.array(7.25), "sharding on a 0-d array", chunks=(), shards=())
    except Exception as e:  # noqa: BLE001
        shutil.rmtree(c.path("shard_0d"), ignore_errors=True)
        c.skipped.append(f"zarr-python shard_0d: {type(e).__name__}: {e}")


def fill_values(c: Corpus):
    """fill_*: fill values of every kind; most chunks are missing and read as fill."""
    cases = [
        ("fill_nan_f64", "float64", np.nan),
        ("fill_nan_f32", "float32", np.nan),
        ("fill_nan_f16", "float16", np.nan),
        ("fill_inf_f32", "float32", np.inf),
        ("fill_ninf_f64", "float64", -np.inf),
        ("fill_neg_zero_f64", "float64", -0.0),
        ("fill_f16", "float16", 1.5),
        ("fill_f64", "float64", 0.1),
        ("fill_complex64", "complex64", 1 + 2j),
        ("fill_complex128_nonfinite", "complex128", complex(np.nan, -np.inf)),
        ("fill_u64_max", "uint64", np.iinfo(np.uint64).max),
        ("fill_i64_min", "int64", np.iinfo(np.int64).min),
        ("fill_u8_max", "uint8", 255),
        ("fill_i8_min", "int8", -128),
        ("fill_i16", "int16", -7),
        ("fill_u32", "uint32", 4000000000),
        ("fill_true", "bool", True),
    ]
    for name, dt, fill in cases:
        d = np.full(SHAPE, fill, dtype=dt)
        d[9:12, 6:9] = c.sample(dt, (3, 3), specials=False)  # only the centre chunk stored
        c.zp(name, d, f"fill_value {fill!r} for {dt}; 8 of 9 chunks missing",
             fill_value=fill)

    # Hex fill values ("0x" + the big-endian bit pattern) are legal for float types;
    # zarr-python writes numbers, so the chunks are written with the same value and
    # the fill_value is then rewritten by hand.
    hexes = [
        ("fill_hex_f16", "float16", "0x4248"),
        ("fill_hex_f32", "float32", "0x40490fdb"),
        ("fill_hex_f64", "float64", "0x400921fb54442d18"),
        ("fill_hex_nan_payload_f32", "float32", "0x7fc00001"),
        ("fill_hex_complex64", "complex64", ["0x3f800000", "0xc0000000"]),
    ]
    for name, dt, hx in hexes:
        dt = np.dtype(dt)
        if dt.kind == "c":
            part = np.dtype(f"float{dt.itemsize * 4}")
            re, im = (np.array([int(h, 16)], f"u{part.itemsize}").view(part)[0] for h in hx)
            fill = complex(re, im)
        else:
            fill = np.array([int(hx, 16)], f"u{dt.itemsize}").view(dt)[0]
        d = np.full(SHAPE, fill, dtype=dt)
        d[9:12, 6:9] = c.sample(dt, (3, 3), specials=False)
        c.zp(name, d, f"fill_value written as hex {hx} ({fill!r} as {dt}); zarr.json "
                      f"hand-edited, chunks by zarr-python", fill_value=fill)
        c.edit(name, fill_value=hx)


def missing_chunks(c: Corpus):
    """missing_*: chunks never written, and chunks that are stored though all fill."""
    d = c.sample("int32", SHAPE)
    d[:8, :] = 42      # first chunk row never stored
    d[16:, 10:] = 42   # the corner chunk too
    c.zp("missing_some", d, "4 of 9 chunks missing, fill 42", fill_value=42)
    c.zp("missing_all", np.full(SHAPE, -1.5, "float32"),
         "no chunk written at all: the array is all fill (-1.5)", fill_value=-1.5, write=False)
    d = c.sample("uint16", SHAPE)
    d[8:16, 5:10] = 3
    c.zp("missing_none_stored_fill", d,
         "a chunk that is all fill (3) but stored anyway (write_empty_chunks)",
         fill_value=3, config={"write_empty_chunks": True})


def shapes(c: Corpus):
    """shape_*: ranks 0, 1, 4 and 5, empty arrays, odd chunk shapes."""
    c.zp("shape_0d", np.array(42.5), "0-d array (key 'c')", chunks=())
    c.zp("shape_0d_int", np.array(-3, "int16"), "0-d int16 array, zstd", chunks=())
    c.zp("shape_0d_missing", np.array(9, "uint8"), "0-d array whose only chunk is missing",
         chunks=(), fill_value=9)
    c.zp("shape_1d", c.sample("int32", (101,)), "1-d, 101 elements in chunks of 10",
         chunks=(10,))
    c.zp("shape_4d", c.sample("uint8", (3, 4, 5, 6)), "4-d, partial chunks on every axis",
         chunks=(2, 3, 2, 4))
    c.zp("shape_5d", c.sample("float32", (2, 3, 2, 3, 2)), "5-d", chunks=(1, 2, 2, 2, 1))
    c.zp("shape_zero_len", np.zeros((0, 5), "float32"), "a dimension of length 0",
         chunks=(2, 2))
    c.zp("shape_zero_len_1d", np.zeros((0,), "int64"), "1-d, length 0", chunks=(4,))
    c.zp("shape_chunk_bigger", c.sample("int16", (3, 3)),
         "one chunk larger than the array on every axis", chunks=(8, 8))
    c.zp("shape_chunk_bigger_one_axis", c.sample("int16", (3, 20)),
         "chunk larger than the array on one axis only", chunks=(8, 6))
    c.zp("shape_unit_chunks", c.sample("int8", (3, 4)), "1x1 chunks", chunks=(1, 1))
    c.zp("shape_exact_grid", c.sample("uint32", (16, 10)),
         "chunks divide the shape exactly (no partial chunk)", chunks=(8, 5))
    c.zp("shape_long_axis", c.sample("uint8", (2, 1000)),
         "a long axis with many chunks (keys with 2-3 digits)", chunks=(2, 9))


def chunk_keys(c: Corpus):
    """keys_*: both chunk key encodings with both separators."""
    for enc, sep in [("default", "/"), ("default", "."), ("v2", "."), ("v2", "/")]:
        word = "slash" if sep == "/" else "dot"
        c.zp(f"keys_{enc}_{word}", c.sample("int32", SHAPE),
             f"chunk_key_encoding {enc} separator {sep!r}",
             chunk_key_encoding={"name": enc, "separator": sep})
        c.zp(f"keys_{enc}_{word}_3d", c.sample("uint8", (5, 4, 3)),
             f"chunk_key_encoding {enc} separator {sep!r}, 3-d", chunks=(2, 2, 2),
             chunk_key_encoding={"name": enc, "separator": sep})
    c.zp("keys_v2_0d", np.array(1.25, "float64"), "0-d with v2 keys (key '0')", chunks=(),
         chunk_key_encoding={"name": "v2", "separator": "."})
    c.zp("keys_default_dot_0d", np.array(2.5, "float64"), "0-d with default '.' keys (key 'c')",
         chunks=(), chunk_key_encoding={"name": "default", "separator": "."})


def metadata_fields(c: Corpus):
    """dim_names_*, attrs_*: optional metadata fields."""
    c.zp("dim_names", c.sample("int8", SHAPE), "dimension_names [\"y\", \"x\"]",
         dimension_names=["y", "x"])
    c.zp("dim_names_partial", c.sample("int8", (4, 3, 2)),
         "dimension_names with a null entry", chunks=(2, 2, 2),
         dimension_names=["t", None, "z"])
    c.zp("attrs_rich", c.sample("float32", SHAPE), "attributes of every JSON kind",
         attributes={"units": "m", "scale": 0.5, "count": 3, "flag": True, "none": None,
                     "list": [1, "two", 3.0, [4]], "nested": {"a": {"b": [1, 2, 3]}},
                     "unicode": "Zürich – 東京 ✓", "empty": {}})


def groups(c: Corpus):
    """group*: groups with attributes, nested groups and arrays in them."""
    root = zarr.open_group(c.path("group"), mode="w",
                           attributes={"title": "root", "version": 2, "tags": ["a", "b"]})
    top = root.create_array("top", shape=(5, 4), dtype="float64", chunks=(2, 2))
    top_d = c.sample("float64", (5, 4))
    top[...] = top_d
    sub = root.create_group("sub", attributes={"level": 1})
    leaf = sub.create_array("leaf", shape=(6,), dtype="int64", chunks=(4,),
                            attributes={"role": "leaf"})
    leaf_d = np.arange(6, dtype="int64") * 3 - 5
    leaf[...] = leaf_d
    deep = sub.create_group("deeper", attributes={"level": 2, "nested": {"k": [1, 2]}})
    deep_arr = deep.create_array("values", shape=(3, 3), dtype="uint8", chunks=(2, 2))
    deep_d = c.sample("uint8", (3, 3))
    deep_arr[...] = deep_d
    root.create_group("empty")
    c.record("group", None, "root group with attributes; members top, sub, empty", "zarr-python",
             node="group")
    c.record("group/top", top_d, "array directly in the root group", "zarr-python")
    c.record("group/sub", None, "nested group with attributes; members leaf, deeper",
             "zarr-python", node="group")
    c.record("group/sub/leaf", leaf_d, "array in a nested group, with attributes", "zarr-python")
    c.record("group/sub/deeper", None, "group two levels down", "zarr-python", node="group")
    c.record("group/sub/deeper/values", deep_d, "array three levels down", "zarr-python")
    c.record("group/empty", None, "a group with no members and no attributes", "zarr-python",
             node="group")

    # Consolidated metadata: zarr-python stores it in the root zarr.json as an extra
    # top-level field marked must_understand false, which readers may ignore.
    g = zarr.open_group(c.path("group_consolidated"), mode="w", attributes={"k": "v"})
    arr = g.create_array("a", shape=(4, 4), dtype="int32", chunks=(2, 2))
    d = c.sample("int32", (4, 4))
    arr[...] = d
    zarr.consolidate_metadata(c.path("group_consolidated"))
    c.record("group_consolidated", None,
             "group whose zarr.json carries zarr-python's consolidated_metadata "
             "(must_understand false): to be ignored or used", "zarr-python", node="group")
    c.record("group_consolidated/a", d, "array in a consolidated group", "zarr-python")


def tensorstore_fixtures(c: Corpus):
    """ts_*: the same features written by TensorStore, a second independent writer."""
    try:
        import tensorstore  # noqa: F401
    except ImportError:
        c.skipped.append("tensorstore not installed: every ts_* fixture")
        return
    for dt in ["bool", "int16", "uint64", "float32", "complex128"]:
        c.ts(f"ts_dtype_{dt}", c.sample(dt, SHAPE), f"TensorStore: {dt}, bytes codec only",
             codecs=[LE] if np.dtype(dt).itemsize > 1 else [{"name": "bytes"}])
    c.ts("ts_gzip", c.sample("int32", SHAPE), "TensorStore: gzip level 6",
         codecs=[LE, {"name": "gzip", "configuration": {"level": 6}}])
    c.ts("ts_zstd_checksum", c.sample("float64", SHAPE), "TensorStore: zstd with checksum",
         codecs=[LE, {"name": "zstd", "configuration": {"level": 3, "checksum": True}}])
    c.ts("ts_blosc", c.sample("uint16", SHAPE), "TensorStore: blosc zstd bitshuffle",
         codecs=[LE, {"name": "blosc", "configuration": {
             "cname": "zstd", "clevel": 4, "shuffle": "bitshuffle", "typesize": 2,
             "blocksize": 0}}])
    c.ts("ts_big_endian_transpose", c.sample("float64", SHAPE),
         "TensorStore: transpose [1,0], bytes big endian, gzip",
         codecs=[{"name": "transpose", "configuration": {"order": [1, 0]}}, BE,
                 {"name": "gzip", "configuration": {"level": 1}}])
    c.ts("ts_crc32c", c.sample("int8", SHAPE), "TensorStore: crc32c",
         codecs=[{"name": "bytes"}, {"name": "crc32c"}])
    c.ts("ts_shard", c.sample("uint8", (16, 16)),
         "TensorStore: sharding, blosc lz4 inside, crc32c on the index (at end)",
         chunks=(8, 8), codecs=[{"name": "sharding_indexed", "configuration": {
             "chunk_shape": [4, 4],
             "codecs": [{"name": "bytes"},
                        {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 3,
                                                            "shuffle": "shuffle",
                                                            "typesize": 1, "blocksize": 0}}],
             "index_codecs": [LE, {"name": "crc32c"}], "index_location": "end"}}])
    d = c.sample("int32", SHAPE)
    d[0:4, 0:5] = 0
    d[16:20, :] = 0
    c.ts("ts_shard_start_missing", d,
         "TensorStore: sharding, index at start, partial shards, missing inner chunks and "
         "a missing shard",
         chunks=(8, 10), codecs=[{"name": "sharding_indexed", "configuration": {
             "chunk_shape": [4, 5],
             "codecs": [LE, {"name": "zstd", "configuration": {"level": 1, "checksum": False}}],
             "index_codecs": [LE, {"name": "crc32c"}], "index_location": "start"}}])
    c.ts("ts_shard_nested", c.sample("float32", (16, 16)),
         "TensorStore: sharding inside sharding",
         chunks=(8, 8), codecs=[{"name": "sharding_indexed", "configuration": {
             "chunk_shape": [4, 4],
             "codecs": [{"name": "sharding_indexed", "configuration": {
                 "chunk_shape": [2, 2], "codecs": [LE],
                 "index_codecs": [LE, {"name": "crc32c"}], "index_location": "end"}}],
             "index_codecs": [LE, {"name": "crc32c"}], "index_location": "end"}}])
    d = np.full(SHAPE, np.nan, "float32")
    d[9:12, 6:9] = c.sample("float32", (3, 3), specials=False)
    c.ts("ts_fill_nan", d, "TensorStore: fill NaN, 8 of 9 chunks missing", fill="NaN")
    c.ts("ts_keys_v2", c.sample("uint32", SHAPE), "TensorStore: v2 chunk keys with '/'",
         extra={"chunk_key_encoding": {"name": "v2", "configuration": {"separator": "/"}}})
    c.ts("ts_keys_default_dot", c.sample("uint32", SHAPE),
         "TensorStore: default chunk keys with '.'",
         extra={"chunk_key_encoding": {"name": "default", "configuration": {"separator": "."}}})
    c.ts("ts_dim_names_attrs", c.sample("int64", (4, 3, 5)),
         "TensorStore: 3-d, dimension_names and attributes", chunks=(2, 2, 2),
         extra={"dimension_names": ["z", "y", "x"], "attributes": {"writer": "tensorstore"}})
    c.ts("ts_0d", np.array(-1.5, "float64"), "TensorStore: 0-d array")


# -- documents a reader must refuse (and a few it must accept) ------------------

def _base() -> dict:
    return {"zarr_format": 3, "node_type": "array", "shape": [4, 4], "data_type": "int32",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 2]}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": 0, "codecs": [dict(LE)], "attributes": {}}


def _with(**kw) -> dict:
    m = _base()
    m.update(kw)
    return m


def _without(*keys) -> dict:
    m = _base()
    for k in keys:
        del m[k]
    return m


def grid(shape, **cfg):
    return {"name": "regular", "configuration": {"chunk_shape": list(shape), **cfg}}


REJECTS = [
    # malformed documents
    ("reject_bad_json", '{"zarr_format": 3, "node_type": "array", "shape": [4,', "truncated JSON"),
    ("reject_not_object", "[3]\n", "zarr.json is a JSON array, not an object"),
    ("reject_zarr_format_2", _with(zarr_format=2), "zarr_format 2 in a zarr.json"),
    ("reject_zarr_format_string", _with(zarr_format="3"), "zarr_format is a string"),
    ("reject_node_type_unknown", _with(node_type="table"), "node_type neither array nor group"),
    ("reject_missing_shape", _without("shape"), "required field shape missing"),
    ("reject_missing_data_type", _without("data_type"), "required field data_type missing"),
    ("reject_missing_chunk_grid", _without("chunk_grid"), "required field chunk_grid missing"),
    ("reject_missing_fill_value", _without("fill_value"), "required field fill_value missing"),
    ("reject_missing_codecs", _without("codecs"), "required field codecs missing"),
    ("reject_missing_chunk_key_encoding", _without("chunk_key_encoding"),
     "required field chunk_key_encoding missing"),
    # unknown things that must be understood
    ("reject_unknown_field", _with(new_core_feature={"x": 1}),
     "unknown top-level field without must_understand false"),
    ("reject_unknown_field_must_understand", _with(new_core_feature={"x": 1, "must_understand": True}),
     "unknown top-level field with must_understand true"),
    ("reject_unknown_field_scalar", _with(new_core_feature=5),
     "unknown top-level field whose value is not an object (cannot say must_understand false)"),
    ("reject_unknown_grid", _with(chunk_grid={"name": "hexagonal", "configuration": {"size": 2}}),
     "unknown chunk grid"),
    ("reject_unknown_codec", _with(codecs=[dict(LE), {"name": "mystery"}]), "unknown codec"),
    ("reject_unknown_codec_in_shard", _with(codecs=[{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [2, 2], "codecs": [dict(LE), {"name": "mystery"}],
        "index_codecs": [dict(LE)], "index_location": "end"}}]),
     "unknown codec inside sharding's codecs"),
    ("reject_unknown_key_encoding", _with(chunk_key_encoding={"name": "morton"}),
     "unknown chunk key encoding"),
    ("reject_storage_transformer", _with(storage_transformers=[{"name": "mystery"}]),
     "unknown storage transformer"),
    ("reject_dtype_unknown", _with(data_type="int33"), "unknown data type name"),
    ("reject_dtype_unknown_extension", _with(data_type={"name": "quaternion256", "configuration": {}}),
     "unknown data type extension"),
    ("reject_dtype_numpy_style", _with(data_type="<i4"), "bad data type: a NumPy/v2 type string"),
    ("reject_dtype_not_string", _with(data_type=32), "bad data type: a number"),
    ("reject_grid_must_understand", _with(chunk_grid={**grid([2, 2]), "must_understand": False}),
     "must_understand false on a chunk grid (grids can never be ignored)"),
    # invalid values
    ("reject_negative_shape", _with(shape=[-4, 4]), "negative shape"),
    ("reject_fractional_shape", _with(shape=[4.5, 4]), "shape with a non-integer"),
    ("reject_chunk_rank", _with(chunk_grid=grid([2])), "chunk_shape rank differs from shape"),
    ("reject_zero_chunk", _with(chunk_grid=grid([0, 2])), "chunk_shape with a zero"),
    ("reject_negative_chunk", _with(chunk_grid=grid([-2, 2])), "chunk_shape with a negative"),
    ("reject_grid_unknown_config", _with(chunk_grid=grid([2, 2], origin=[0, 0])),
     "regular grid with an unknown configuration key"),
    ("reject_key_separator", _with(chunk_key_encoding={"name": "default",
                                                       "configuration": {"separator": "-"}}),
     "chunk key separator neither '/' nor '.'"),
    ("reject_fill_wrong_type", _with(fill_value="lots"), "fill_value a string for int32"),
    ("reject_fill_float_for_int", _with(fill_value=1.5), "fill_value 1.5 for int32"),
    ("reject_fill_out_of_range", _with(data_type="uint8", fill_value=256),
     "fill_value 256 for uint8"),
    ("reject_fill_int_for_bool", _with(data_type="bool", fill_value=1, codecs=[{"name": "bytes"}]),
     "fill_value 1 for bool (must be true or false)"),
    ("reject_fill_scalar_for_complex", _with(data_type="complex64", fill_value=1.0),
     "fill_value a number for complex64 (must be [re, im])"),
    ("reject_fill_bad_nan_spelling", _with(data_type="float32", fill_value="nan"),
     "fill_value 'nan' (the spelling is 'NaN')"),
    ("reject_fill_hex_invalid", _with(data_type="float32", fill_value="0x3f80000g"),
     "hex fill_value with a non-hex digit"),
    ("reject_fill_null", _with(fill_value=None), "fill_value null"),
    ("reject_dim_names_length", _with(dimension_names=["x"]),
     "dimension_names length differs from the rank"),
    ("reject_attributes_not_object", _with(attributes=[1, 2]), "attributes is not an object"),
    # invalid codec chains and configurations
    ("reject_no_array_to_bytes", _with(codecs=[{"name": "zstd", "configuration": {"level": 1}}]),
     "codec chain without an array->bytes codec"),
    ("reject_empty_codecs", _with(codecs=[]), "empty codec chain"),
    ("reject_two_array_to_bytes", _with(codecs=[dict(LE), dict(LE)]),
     "two array->bytes codecs"),
    ("reject_codec_order", _with(codecs=[dict(LE), {"name": "transpose",
                                                    "configuration": {"order": [1, 0]}}]),
     "array->array codec after the array->bytes codec"),
    ("reject_transpose_order", _with(codecs=[{"name": "transpose", "configuration": {"order": [0, 0]}},
                                            dict(LE)]),
     "transpose order is not a permutation"),
    ("reject_transpose_rank", _with(codecs=[{"name": "transpose", "configuration": {"order": [2, 0, 1]}},
                                           dict(LE)]),
     "transpose order of the wrong rank"),
    ("reject_bytes_no_endian", _with(codecs=[{"name": "bytes"}]),
     "bytes codec without endian for a multi-byte type"),
    ("reject_bytes_bad_endian", _with(codecs=[{"name": "bytes", "configuration": {"endian": "middle"}}]),
     "bytes codec endian neither little nor big"),
    ("reject_gzip_level", _with(codecs=[dict(LE), {"name": "gzip", "configuration": {"level": 10}}]),
     "gzip level 10 (range 0-9)"),
    ("reject_gzip_no_level", _with(codecs=[dict(LE), {"name": "gzip"}]),
     "gzip without its required level"),
    ("reject_zstd_level", _with(codecs=[dict(LE), {"name": "zstd",
                                                   "configuration": {"level": 99, "checksum": False}}]),
     "zstd level 99"),
    ("reject_blosc_cname", _with(codecs=[dict(LE), {"name": "blosc", "configuration": {
        "cname": "brotli", "clevel": 5, "shuffle": "shuffle", "typesize": 4, "blocksize": 0}}]),
     "blosc cname brotli (not one of blosclz, lz4, lz4hc, snappy, zlib, zstd)"),
    ("reject_blosc_shuffle", _with(codecs=[dict(LE), {"name": "blosc", "configuration": {
        "cname": "lz4", "clevel": 5, "shuffle": "maybe", "typesize": 4, "blocksize": 0}}]),
     "blosc shuffle value unknown"),
    ("reject_shard_not_divisor", _with(codecs=[{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [3, 2], "codecs": [dict(LE)], "index_codecs": [dict(LE)],
        "index_location": "end"}}]),
     "inner chunk shape does not divide the shard shape"),
    ("reject_shard_index_location", _with(codecs=[{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [2, 2], "codecs": [dict(LE)], "index_codecs": [dict(LE)],
        "index_location": "middle"}}]),
     "sharding index_location neither start nor end"),
    ("reject_shard_index_compressed", _with(codecs=[{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [2, 2], "codecs": [dict(LE)],
        "index_codecs": [dict(LE), {"name": "zstd", "configuration": {"level": 1, "checksum": False}}],
        "index_location": "end"}}]),
     "sharding index codecs of variable size (zstd)"),
]

GROUP_REJECTS = [
    ("reject_group_unknown_field", {"zarr_format": 3, "node_type": "group", "attributes": {},
                                    "new_core_feature": {"x": 1}},
     "group with an unknown top-level field without must_understand false"),
    ("reject_group_zarr_format_2", {"zarr_format": 2, "node_type": "group", "attributes": {}},
     "group zarr.json with zarr_format 2"),
]


def metadata_documents(c: Corpus):
    """reject_*: hand-written documents to refuse; accept_*: unusual but valid ones."""
    for name, meta, why in REJECTS:
        c.doc(name, meta, "reject", why)
    for name, meta, why in GROUP_REJECTS:
        c.doc(name, meta, "reject", why, node="group")

    # accept_*: valid documents. Chunks are written by zarr-python, the field by hand.
    d = c.sample("int32", (4, 4))
    c.zp("accept_unknown_field_optional", d,
         "unknown top-level field with must_understand false: ignored; zarr.json hand-edited",
         chunks=(2, 2), compressors=None)
    c.edit("accept_unknown_field_optional", new_core_feature={"x": 1, "must_understand": False})
    minimal = {k: v for k, v in _base().items() if k != "attributes"}
    c.doc("accept_minimal", minimal, "read",
          "only the required fields (no attributes, dimension_names, storage_transformers); "
          "no chunks, all fill 0", data=np.zeros((4, 4), "int32"))
    c.doc("accept_empty_storage_transformers", _with(storage_transformers=[], fill_value=-1),
          "read", "storage_transformers [] (allowed); no chunks, all fill -1",
          data=np.full((4, 4), -1, "int32"))
    c.doc("accept_bytes_no_endian_u8",
          _with(data_type="uint8", fill_value=7, codecs=[{"name": "bytes"}]), "read",
          "bytes codec without configuration for a single-byte type; all fill 7",
          data=np.full((4, 4), 7, "uint8"))
    c.doc("accept_group_minimal", {"zarr_format": 3, "node_type": "group"}, "read",
          "group without attributes", node="group")
    c.doc("accept_group_unknown_field_optional",
          {"zarr_format": 3, "node_type": "group", "attributes": {"a": 1},
           "new_core_feature": {"x": 1, "must_understand": False}}, "read",
          "group with an unknown field marked must_understand false", node="group")


def _time(unit="s", scale=1, name="numpy.datetime64"):
    return {"name": name, "configuration": {"unit": unit, "scale_factor": scale}}


TIME_REJECTS = [
    ("reject_time_unknown_unit", _with(data_type=_time("sec")),
     "numpy.datetime64 with unit 'sec' (not a NumPy unit)"),
    ("reject_time_scale_zero", _with(data_type=_time(scale=0)),
     "numpy.datetime64 with scale_factor 0"),
    ("reject_time_scale_fraction", _with(data_type=_time(scale=1.5)),
     "numpy.timedelta64 with scale_factor 1.5"),
    ("reject_time_scale_too_large", _with(data_type=_time(scale=2 ** 31)),
     "numpy.datetime64 with scale_factor 2^31 (NumPy's limit is 2^31 - 1)"),
    ("reject_time_no_configuration", _with(data_type="numpy.timedelta64"),
     "numpy.timedelta64 without a configuration"),
    ("reject_time_fill_string", _with(data_type=_time(), fill_value="2020-01-01"),
     "numpy.datetime64 with a date string as fill_value (only integers and 'NaT')"),
]


def time_types(c: Corpus):
    """dtype_datetime64_*, dtype_timedelta64_*, fill_*nat*, reject_time_*: NumPy's datetimes
    and timedeltas (int64 counts of a unit times a scale factor; NaT is int64 min)."""
    for dt, why in [("datetime64[s]", "seconds"), ("datetime64[10ms]", "scale factor 10"),
                    ("datetime64[D]", "days"), ("timedelta64[ns]", "nanoseconds"),
                    ("timedelta64[3h]", "scale factor 3")]:
        name = "dtype_" + dt.replace("[", "_").rstrip("]")
        c.zp(name, c.sample(dt, SHAPE), f"data type {dt} ({why}), random counts with NaT, "
             f"int64 min + 1 and max; default fill NaT; bytes codec only", compressors=None)
    c.zp("bytes_big_datetime64_us", c.sample("datetime64[us]", SHAPE),
         "datetime64[us], bytes codec endian=big", serializer=BytesCodec(endian="big"),
         compressors=None)
    for name, dt, fill in [
        ("fill_nat_datetime64", "datetime64[ms]", np.datetime64("NaT")),
        ("fill_nat_timedelta64", "timedelta64[s]", np.timedelta64("NaT")),
        ("fill_datetime64_int", "datetime64[s]", np.datetime64(1_600_000_000, "s")),
        ("fill_timedelta64_int", "timedelta64[10us]", np.timedelta64(-7, "10us")),
    ]:
        d = np.full(SHAPE, fill, dtype=dt)
        d[9:12, 6:9] = c.sample(dt, (3, 3), specials=False)
        c.zp(name, d, f"fill_value {fill!r} for {dt}; 8 of 9 chunks missing", fill_value=fill)
    c.zp("fill_nat_string_datetime64", np.full((4, 4), np.datetime64("NaT"), "datetime64[h]"),
         "fill_value written as the string 'NaT' (zarr-python writes the integer); zarr.json "
         "hand-edited, no chunks", chunks=(2, 2), write=False)
    c.edit("fill_nat_string_datetime64", fill_value="NaT")
    for name, meta, why in TIME_REJECTS:
        if name == "reject_time_scale_fraction":
            meta["data_type"]["name"] = "numpy.timedelta64"
        c.doc(name, meta, "reject", why)


ALPHABET = ["a", "b", "z", " ", "é", "ß", "中", "\U0001F600", "\n", "\"", "\\"]


def _strings(c: Corpus, shape) -> np.ndarray:
    """Random strings of 0 to 12 characters over ASCII, Latin, CJK and an emoji."""
    lengths = c.rng.integers(0, 13, size=shape)
    picks = c.rng.integers(0, len(ALPHABET), size=int(lengths.sum()))
    out, i = [], 0
    for n in lengths.flat:
        out.append("".join(ALPHABET[k] for k in picks[i:i + n]))
        i += n
    return np.array(out, dtype=np.dtypes.StringDType()).reshape(shape)


def _byte_strings(c: Corpus, shape) -> np.ndarray:
    """Random byte strings of 0 to 12 bytes (zeros inside, never at the end)."""
    out = np.empty(shape, dtype=object)
    for idx in np.ndindex(*shape):
        b = bytearray(c.rng.bytes(int(c.rng.integers(0, 13))))
        if b and b[-1] == 0:
            b[-1] = 1
        out[idx] = bytes(b)
    return out


def variable_size_types(c: Corpus):
    """string_*, bytes_vlen_*: the variable-size data types string (vlen-utf8) and
    variable_length_bytes (vlen-bytes), as zarr-python 3.1.6 writes them."""
    from zarr.core.dtype import VariableLengthBytes
    c.zp("string_default_codecs", _strings(c, SHAPE),
         "data type string, random unicode strings (empty ones too), zarr-python's default "
         "codecs (vlen-utf8 + zstd), fill ''")
    c.zp("string_no_compressor", _strings(c, SHAPE), "data type string, vlen-utf8 alone",
         compressors=None)
    d = np.full(SHAPE, "fill é", dtype=np.dtypes.StringDType())
    d[9:12, 6:9] = _strings(c, (3, 3))
    c.zp("string_fill_missing", d, "string with fill_value 'fill é'; 8 of 9 chunks missing; "
         "the edge chunks padded with the fill value", fill_value="fill é")
    c.zp("string_1d", _strings(c, (7,)), "1-d string array, 3 chunks of 3 (the last partial)",
         chunks=(3,))
    c.zp("bytes_vlen_default_codecs", _byte_strings(c, SHAPE),
         "data type variable_length_bytes (vlen-bytes + zstd), random bytes with zeros inside",
         dtype=VariableLengthBytes())
    d = np.full(SHAPE, b"\x00z", dtype=object)
    d[9:12, 6:9] = _byte_strings(c, (3, 3))
    c.zp("bytes_vlen_fill_missing", d, "variable_length_bytes with fill_value base64 'AHo=' "
         "(b'\\x00z'); 8 of 9 chunks missing", dtype=VariableLengthBytes(),
         fill_value=b"\x00z", compressors=None)
    d = _strings(c, SHAPE)
    d[:8, :] = ""  # the first row of shards: every inner chunk fill, so none stored
    c.zp("string_sharded", d, "string in 8x8 shards of 4x4 inner chunks (vlen-utf8 + zstd "
         "inside, crc32c index at the end); partial edge shards, a shard row never stored",
         chunks=(4, 4), shards=(8, 8), fill_value="")
    # NumPy's fixed-width strings (data made here, not drawn: the fixtures after these keep
    # their random data)
    words = np.array([f"{'é' * (i % 3)}w{i % 97}"[:6] for i in range(SHAPE[0] * SHAPE[1])],
                     dtype="<U6").reshape(SHAPE)
    c.zp("fixed_utf32", words, "fixed_length_utf32 (NumPy '<U6', length_bytes 24), bytes "
         "little + zstd, non-ASCII code points, strings shorter than the width")
    d = np.full(SHAPE, "zz", dtype="<U3")
    d[9:12, 6:9] = words[9:12, 6:9].astype("<U3")
    c.zp("fixed_utf32_fill_big_endian", d, "fixed_length_utf32 (<U3) with fill_value 'zz', "
         "bytes codec big endian (each UTF-32 code unit swapped); 8 of 9 chunks missing",
         fill_value="zz", serializer=BytesCodec(endian="big"), compressors=None)
    raw = np.array([bytes([65 + i % 26]) * (i % 5) for i in range(SHAPE[0] * SHAPE[1])],
                   dtype="|S4").reshape(SHAPE)
    raw[0, 0] = b"a\x00b"  # a NUL inside is kept (only trailing ones are padding)
    raw[5:8, :] = b"q"
    c.zp("null_terminated_bytes", raw, "null_terminated_bytes (NumPy '|S4'), fill_value "
         "base64 'cQ==' (b'q'), empty and NUL-containing elements, a chunk row all fill",
         fill_value=b"q")


def v2_time_types(c: Corpus):
    """dtype_M8_*, dtype_m8_*, fill_*nat*: NumPy's datetimes and timedeltas in Zarr v2."""
    # (not the generic "<M8": zarr-python 3.1.6 writes it but cannot read its fill value)
    for dt in ["<M8[ns]", ">M8[D]", "<m8[10s]"]:
        name = ("dtype_big_" if dt[0] == ">" else "dtype_") + \
            dt[1:].replace("[", "_").rstrip("]")
        c.zp2(name, c.sample(dt, SHAPE), f"dtype {dt!r}, random counts with NaT, no compressor")
    d = np.full(SHAPE, np.timedelta64("NaT"), "<m8[ms]")
    d[9:12, 6:9] = c.sample("<m8[ms]", (3, 3), specials=False)
    c.zp2("fill_nat_m8", d, "fill_value NaT for '<m8[ms]' (written as the integer int64 min); "
          "8 of 9 chunks missing", fill_value=np.timedelta64("NaT"))


def numcodecs_codecs(c: Corpus):
    """numcodecs_*: the codecs zarr-python writes as ``numcodecs.<id>`` (numcodecs 0.16.6),
    with pcodec and zfpy from their Python packages. Lossy codecs (fixedscaleoffset,
    bitround, quantize, zfpy, a narrowing astype) store what zarr-python reads back, so that
    readers are held to zarr-python's exact values."""
    import zarr.codecs.numcodecs as nc

    def lossy(name, data, why, **create):
        a = c.zp(name, data, why, **create)
        c.fixtures.pop()
        c.record(name, a[...], why, "zarr-python")

    def smooth(dtype, shape=SHAPE):
        n = int(np.prod(shape))
        return (np.cumsum(c.rng.standard_normal(n)) + 50.0).reshape(shape).astype(dtype)

    c.zp("numcodecs_zlib", c.sample("int32", SHAPE), "numcodecs.zlib level 1",
         compressors=[nc.Zlib(level=1)])
    c.zp("numcodecs_bz2", c.sample("float64", SHAPE), "numcodecs.bz2 level 9",
         compressors=[nc.BZ2(level=9)])
    c.zp("numcodecs_lz4", c.sample("uint16", SHAPE), "numcodecs.lz4 acceleration 1",
         compressors=[nc.LZ4(acceleration=1)])
    c.zp("numcodecs_lzma", c.sample("int64", SHAPE), "numcodecs.lzma xz, default check, preset 6",
         compressors=[nc.LZMA()])
    c.zp("numcodecs_lzma_raw", c.sample("int16", SHAPE),
         "numcodecs.lzma raw format with a delta + LZMA2 filter chain",
         compressors=[nc.LZMA(format=3, filters=[{"id": 3, "dist": 2}, {"id": 33, "preset": 1}])])
    c.zp("numcodecs_shuffle", c.sample("float32", SHAPE), "numcodecs.shuffle then numcodecs.zlib",
         compressors=[nc.Shuffle(elementsize=4), nc.Zlib(level=1)])
    c.zp("numcodecs_crc32", c.sample("int32", SHAPE), "numcodecs.crc32 (checksum first)",
         compressors=[nc.CRC32()])
    c.zp("numcodecs_adler32", c.sample("uint8", SHAPE), "numcodecs.adler32 at the end, after zlib",
         compressors=[nc.Zlib(level=1), nc.Adler32(location="end")])
    c.zp("numcodecs_fletcher32", c.sample("int16", SHAPE), "numcodecs.fletcher32",
         compressors=[nc.Fletcher32()])
    c.zp("numcodecs_delta", np.cumsum(c.sample("int16", SHAPE, specials=False) // 64,
                                      dtype="int16").reshape(SHAPE),
         "numcodecs.delta int16 stored as int16, then zlib",
         filters=[nc.Delta(dtype="<i2")], compressors=[nc.Zlib(level=1)])
    # (numcodecs refuses a first element of a chunk that astype cannot hold)
    cols = np.arange(SHAPE[1]) * 20 - 100
    lossy("numcodecs_delta_astype", (cols[None, :] + np.arange(SHAPE[0])[:, None]).astype("int32"),
          "numcodecs.delta int32 stored as int8: differences that int8 cannot hold wrap, and "
          "decode (int32 sums of int8 differences) to what zarr-python reads",
          filters=[nc.Delta(dtype="<i4", astype="<i1")])
    lossy("numcodecs_fixedscaleoffset", np.linspace(1000, 1001, 260).reshape(SHAPE),
          "numcodecs.fixedscaleoffset offset 1000 scale 10, float64 stored as uint8",
          filters=[nc.FixedScaleOffset(offset=1000, scale=10, dtype="<f8", astype="|u1")])
    lossy("numcodecs_bitround", smooth("float32"), "numcodecs.bitround keepbits 8, then zlib",
          filters=[nc.BitRound(keepbits=8)], compressors=[nc.Zlib(level=1)])
    lossy("numcodecs_quantize", smooth("float64"), "numcodecs.quantize digits 2",
          filters=[nc.Quantize(digits=2, dtype="<f8")])
    c.zp("numcodecs_packbits", c.sample("bool", SHAPE), "numcodecs.packbits on bool",
         filters=[nc.PackBits()])
    lossy("numcodecs_astype", smooth("float64"), "numcodecs.astype float64 stored as float32",
          filters=[nc.AsType(encode_dtype="<f4", decode_dtype="<f8")])
    c.zp("numcodecs_pcodec", smooth("float64"), "numcodecs.pcodec level 8 (array -> bytes)",
         serializer=nc.PCodec(level=8), compressors=None)
    c.zp("numcodecs_pcodec_int", c.sample("int32", SHAPE), "numcodecs.pcodec on int32, classic mode",
         serializer=nc.PCodec(level=4, mode_spec="classic"), compressors=None)
    lossy("numcodecs_zfpy_accuracy", smooth("float64"),
          "numcodecs.zfpy fixed accuracy, tolerance 0.01 (array -> bytes)",
          serializer=nc.ZFPY(mode=4, tolerance=0.01), compressors=None)
    lossy("numcodecs_zfpy_rate", smooth("float32"), "numcodecs.zfpy fixed rate 16",
          serializer=nc.ZFPY(mode=2, rate=16), compressors=None)
    lossy("numcodecs_zfpy_precision", c.sample("int32", SHAPE, specials=False) // 1024,
          "numcodecs.zfpy fixed precision 20 on int32",
          serializer=nc.ZFPY(mode=3, precision=20), compressors=None)


# ---------------------------------------------------------------------------
# Zarr v2 (conformance/v2): zarr-python 3.1.6 with zarr_format=2, numcodecs 0.16.6
# ---------------------------------------------------------------------------

def v2_data_types(c: Corpus):
    """dtype_*: every core data type as NumPy spells it (little-endian), big-endian for every
    multi-byte type, and raw bytes |V3; no compressor."""
    for dt in CORE_DTYPES:
        d = np.dtype(dt)
        c.zp2(f"dtype_{dt}", c.sample(dt, SHAPE), f"dtype {d.str!r} ({dt}), no compressor")
        if d.itemsize > 1:
            big = d.newbyteorder(">")
            c.zp2(f"dtype_big_{dt}", c.sample(dt, SHAPE).astype(big),
                  f"dtype {big.str!r}: big-endian chunks, no compressor")
    raw = np.frombuffer(c.rng.bytes(3 * 20 * 13), dtype="V3").reshape(SHAPE).copy()
    c.zp2("dtype_raw_V3", raw, "dtype '|V3' (raw bytes, r24 in v3), fill value base64 'AQID'",
          fill_value=np.void(b"\x01\x02\x03"))
    c.zp2("dtype_default_compressor", c.sample("float32", SHAPE),
          "zarr-python's default compressor for zarr_format=2 (blosc lz4, shuffle)",
          compressors="auto")


def v2_order_and_separator(c: Corpus):
    """order_F_*, sep_*: column-major chunks and both dimension separators."""
    c.zp2("order_F_int32", c.sample("int32", SHAPE), "order 'F' (column-major chunks)",
          order="F")
    c.zp2("order_F_3d", c.sample("uint16", (5, 6, 7)), "order 'F' on 3-d, partial chunks",
          chunks=(2, 3, 4), order="F")
    c.zp2("order_F_big_zlib", c.sample(">f8", SHAPE), "order 'F', '>f8', zlib",
          order="F", compressors=numcodecs.Zlib(level=1))
    c.zp2("order_F_complex64", c.sample("complex64", SHAPE), "order 'F', '<c8'", order="F")
    c.zp2("order_F_delta_blosc", c.sample("int16", SHAPE), "order 'F' with a delta filter and "
          "blosc (filters see the chunk in F order)", order="F",
          filters=[numcodecs.Delta(dtype="<i2")],
          compressors=numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE))
    for sep, word in [("/", "slash"), (".", "dot")]:
        c.zp2(f"sep_{word}", c.sample("int32", SHAPE), f"dimension_separator {sep!r}",
              chunk_key_encoding={"name": "v2", "separator": sep})
        c.zp2(f"sep_{word}_3d", c.sample("uint8", (4, 5, 6)),
              f"dimension_separator {sep!r}, 3-d", chunks=(2, 2, 4),
              chunk_key_encoding={"name": "v2", "separator": sep})


def v2_fill_values(c: Corpus):
    """fill_*: every v2 form of fill_value; 8 of 9 chunks missing (read as the fill value)."""
    cases = [
        ("fill_nan_f64", "<f8", np.nan), ("fill_nan_f32", "<f4", np.nan),
        ("fill_nan_f16", "<f2", np.nan), ("fill_inf_f32", "<f4", np.inf),
        ("fill_ninf_f64", "<f8", -np.inf), ("fill_neg_zero_f64", "<f8", -0.0),
        ("fill_f32_tenth", "<f4", 0.1), ("fill_f64_small", "<f8", 1e-05),
        ("fill_f64_large", ">f8", 1e300), ("fill_f16", "<f2", 1.5),
        ("fill_complex64", "<c8", 1 + 2j),
        ("fill_complex128_nonfinite", "<c16", complex(np.nan, -np.inf)),
        ("fill_u64_max", "<u8", np.iinfo(np.uint64).max),
        ("fill_i64_min", "<i8", np.iinfo(np.int64).min), ("fill_u8_max", "|u1", 255),
        ("fill_i8_min", "|i1", -128), ("fill_i16_big", ">i2", -7), ("fill_true", "|b1", True),
    ]
    for name, dt, fill in cases:
        d = np.full(SHAPE, fill, dtype=dt)
        d[9:12, 6:9] = c.sample(dt, (3, 3), specials=False)
        c.zp2(name, d, f"fill_value {fill!r} for {dt}; 8 of 9 chunks missing", fill_value=fill)
    raw = np.full(SHAPE, np.void(b"\xff\x00\x7f"), dtype="V3")
    raw[9:12, 6:9] = np.frombuffer(c.rng.bytes(27), dtype="V3").reshape(3, 3)
    c.zp2("fill_raw_V3", raw, "fill_value for '|V3' as base64 '/wB/'; 8 of 9 chunks missing",
          fill_value=np.void(b"\xff\x00\x7f"))
    # null: the content of a missing chunk is undefined, so every chunk is written
    c.zp2("fill_null_f64", c.sample("<f8", SHAPE), "fill_value null (every chunk stored)",
          fill_value=None)
    c.zp2("fill_null_i32", c.sample("<i4", SHAPE), "fill_value null for '<i4'", fill_value=None)


def v2_compressors(c: Corpus):
    """blosc_*, codec_*: every numcodecs compressor, as the v2 ``compressor``."""
    dtypes = {0: "uint8", 1: "int32", 2: "float64"}
    words = {0: "noshuffle", 1: "shuffle", 2: "bitshuffle"}
    for cname in ["lz4", "lz4hc", "blosclz", "zstd", "zlib"]:
        for shuffle in (0, 1, 2):
            dt = dtypes[shuffle]
            c.zp2(f"blosc_{cname}_{words[shuffle]}", c.sample(dt, SHAPE),
                  f"blosc cname={cname} shuffle={shuffle} ({words[shuffle]}) clevel=5, {dt}",
                  compressors=numcodecs.Blosc(cname=cname, clevel=5, shuffle=shuffle))
    c.zp2("blosc_autoshuffle", c.sample("int16", SHAPE),
          "blosc shuffle=-1 (AUTOSHUFFLE: byte shuffle for items over one byte)",
          compressors=numcodecs.Blosc(cname="lz4", clevel=5, shuffle=-1))
    c.zp2("blosc_autoshuffle_u8", c.sample("uint8", SHAPE),
          "blosc shuffle=-1 on one-byte items (AUTOSHUFFLE: bit shuffle)",
          compressors=numcodecs.Blosc(cname="zstd", clevel=3, shuffle=-1))
    c.zp2("blosc_clevel0", c.sample("int16", SHAPE), "blosc clevel=0 (stored, not compressed)",
          compressors=numcodecs.Blosc(cname="lz4", clevel=0, shuffle=1))
    c.zp2("blosc_blocksize", c.sample("float32", (64, 64)),
          "blosc with an explicit blocksize of 1024 bytes", chunks=(32, 32),
          compressors=numcodecs.Blosc(cname="zstd", clevel=3, shuffle=1, blocksize=1024))
    codecs = [
        ("codec_zstd_0", "float32", numcodecs.Zstd(level=0), "zstd level 0"),
        ("codec_zstd_22", "uint32", numcodecs.Zstd(level=22), "zstd level 22"),
        ("codec_zstd_negative", "int16", numcodecs.Zstd(level=-3), "zstd level -3"),
        ("codec_zstd_checksum", "uint8", numcodecs.Zstd(level=1, checksum=True),
         "zstd with checksum"),
        ("codec_gzip_1", "int64", numcodecs.GZip(level=1), "gzip level 1"),
        ("codec_gzip_9", "float64", numcodecs.GZip(level=9), "gzip level 9"),
        ("codec_zlib_1", "int32", numcodecs.Zlib(level=1), "zlib level 1"),
        ("codec_zlib_9", "uint16", numcodecs.Zlib(level=9), "zlib level 9"),
        ("codec_bz2_1", "float32", numcodecs.BZ2(level=1), "bz2 level 1"),
        ("codec_bz2_9", "float64", numcodecs.BZ2(level=9), "bz2 level 9"),
        ("codec_lz4_1", "uint16", numcodecs.LZ4(acceleration=1), "lz4 acceleration 1"),
        ("codec_lz4_10", "int32", numcodecs.LZ4(acceleration=10), "lz4 acceleration 10"),
        ("codec_lzma", "int64", numcodecs.LZMA(), "lzma xz format, default check and preset"),
        ("codec_lzma_raw", "int16",
         numcodecs.LZMA(format=3, filters=[{"id": 3, "dist": 2}, {"id": 33, "preset": 1}]),
         "lzma raw format with a delta + LZMA2 filter chain"),
        ("codec_crc32", "int32", numcodecs.CRC32(), "crc32 as the compressor"),
        ("codec_adler32", "uint8", numcodecs.Adler32(), "adler32 as the compressor"),
        ("codec_fletcher32", "int16", numcodecs.Fletcher32(), "fletcher32 as the compressor"),
    ]
    for name, dt, codec, why in codecs:
        c.zp2(name, c.sample(dt, SHAPE), why, compressors=codec)
    smooth = _smooth(c)
    try:
        from numcodecs.pcodec import PCodec
        c.zp2("codec_pcodec", smooth("float64"), "pcodec level 8 as the compressor",
              compressors=PCodec(level=8))
        c.zp2("codec_pcodec_int", c.sample("int32", SHAPE), "pcodec level 4, mode classic",
              compressors=PCodec(level=4, mode_spec="classic"))
    except ImportError as e:
        c.skipped.append(f"pcodec: {e}")
    try:
        from numcodecs.zfpy import ZFPY
        _lossy(c, "codec_zfpy_accuracy", smooth("float64"),
               "zfpy fixed accuracy, tolerance 0.01 (lossy: the .npy is what zarr-python reads)",
               compressors=ZFPY(mode=4, tolerance=0.01))
        _lossy(c, "codec_zfpy_rate", smooth("float32"), "zfpy fixed rate 16",
               compressors=ZFPY(mode=2, rate=16))
    except ImportError as e:
        c.skipped.append(f"zfpy: {e}")


def _smooth(c: Corpus):
    def smooth(dtype, shape=SHAPE):
        n = int(np.prod(shape))
        return (np.cumsum(c.rng.standard_normal(n)) + 50.0).reshape(shape).astype(dtype)
    return smooth


def _lossy(c: Corpus, name, data, why, **create):
    """A lossy codec: the expected data is what zarr-python reads back."""
    a = c.zp2(name, data, why, **create)
    c.fixtures.pop()
    c.record(name, a[...], why, "zarr-python", zarr_format=2)


def v2_filters(c: Corpus):
    """filter_*: numcodecs filters (applied before the compressor, decoded in reverse)."""
    smooth = _smooth(c)
    zlib = numcodecs.Zlib(level=1)
    c.zp2("filter_shuffle", c.sample("float32", SHAPE), "shuffle (elementsize 4), then zlib",
          filters=[numcodecs.Shuffle(elementsize=4)], compressors=zlib)
    c.zp2("filter_delta", np.cumsum(c.sample("int16", SHAPE, specials=False) // 64,
                                    dtype="int16").reshape(SHAPE),
          "delta '<i2', then zlib", filters=[numcodecs.Delta(dtype="<i2")], compressors=zlib)
    cols = np.arange(SHAPE[1]) * 20 - 100
    _lossy(c, "filter_delta_astype",
           (cols[None, :] + np.arange(SHAPE[0])[:, None]).astype("int32"),
           "delta '<i4' stored as '|i1' (differences wrap)",
           filters=[numcodecs.Delta(dtype="<i4", astype="|i1")])
    _lossy(c, "filter_fixedscaleoffset", np.linspace(1000, 1001, 260).reshape(SHAPE),
           "fixedscaleoffset offset 1000 scale 10, '<f8' stored as '|u1'",
           filters=[numcodecs.FixedScaleOffset(offset=1000, scale=10, dtype="<f8",
                                               astype="|u1")])
    _lossy(c, "filter_bitround", smooth("float32"), "bitround keepbits 8, then zlib",
           filters=[numcodecs.BitRound(keepbits=8)], compressors=zlib)
    _lossy(c, "filter_quantize", smooth("float64"), "quantize digits 2",
           filters=[numcodecs.Quantize(digits=2, dtype="<f8")])
    c.zp2("filter_packbits", c.sample("bool", SHAPE), "packbits on '|b1'",
          filters=[numcodecs.PackBits()])
    _lossy(c, "filter_astype", smooth("float64"), "astype '<f8' stored as '<f4'",
           filters=[numcodecs.AsType(encode_dtype="<f4", decode_dtype="<f8")])
    c.zp2("filter_crc32_zlib", c.sample("int32", SHAPE), "crc32 as a filter, then zlib",
          filters=[numcodecs.CRC32()], compressors=zlib)
    c.zp2("filter_chain", np.cumsum(c.sample("int32", SHAPE, specials=False) // 4096,
                                    dtype="int32").reshape(SHAPE),
          "two filters (delta, shuffle) and blosc zstd noshuffle",
          filters=[numcodecs.Delta(dtype="<i4"), numcodecs.Shuffle(elementsize=4)],
          compressors=numcodecs.Blosc(cname="zstd", clevel=3, shuffle=0))


def v2_shapes(c: Corpus):
    """shape_*, missing_*: ranks 0 to 4, empty arrays, odd chunks, missing chunks."""
    c.zp2("shape_0d", np.array(42.5), "0-d array (chunk key '0')", chunks=())
    c.zp2("shape_0d_missing", np.array(9, "uint8"), "0-d array whose chunk is missing",
          chunks=(), fill_value=9)
    c.zp2("shape_1d", c.sample("int32", (101,)), "1-d, 101 elements in chunks of 10",
          chunks=(10,))
    c.zp2("shape_4d", c.sample("uint8", (3, 4, 5, 6)), "4-d, partial chunks on every axis",
          chunks=(2, 3, 2, 4))
    c.zp2("shape_zero_len", np.zeros((0, 5), "float32"), "a dimension of length 0",
          chunks=(2, 2))
    c.zp2("shape_chunk_bigger", c.sample("int16", (3, 3)), "a chunk larger than the array",
          chunks=(8, 8))
    c.zp2("shape_unit_chunks", c.sample("int8", (3, 4)), "1x1 chunks", chunks=(1, 1))
    c.zp2("shape_long_axis", c.sample("uint8", (2, 1000)), "112 chunks along one axis",
          chunks=(2, 9))
    d = c.sample("int32", SHAPE)
    d[:8, :] = 42
    d[16:, 10:] = 42
    c.zp2("missing_some", d, "4 of 9 chunks missing, fill 42", fill_value=42)
    c.zp2("missing_all", np.full(SHAPE, -1.5, "float32"), "no chunk written: all fill -1.5",
          fill_value=-1.5, write=False)


def v2_groups(c: Corpus):
    """group*, attrs_*: groups, nested members, attributes, consolidated .zmetadata."""
    c.zp2("attrs_rich", c.sample("float32", SHAPE), "attributes of every JSON kind, unicode "
          "(written with \\uXXXX escapes) and a float Python spells 1e-05",
          attributes={"units": "m", "scale": 0.5, "small": 1e-05, "count": 3, "flag": True,
                      "none": None, "list": [1, "two", 3.0, [4]],
                      "nested": {"a": {"b": [1, 2, 3]}}, "unicode": "Zürich – 東京 ✓ 🎉",
                      "empty": {}})
    for name, consolidated in [("group", False), ("group_consolidated", True)]:
        root = zarr.open_group(c.path(name), mode="w", zarr_format=2,
                               attributes={"title": "root", "version": 2})
        top = root.create_array("top", shape=(5, 4), dtype="float64", chunks=(2, 2),
                                compressors=numcodecs.Zlib(level=1), fill_value=np.nan,
                                attributes={"units": "K"})
        top_d = c.sample("float64", (5, 4))
        top[...] = top_d
        sub = root.create_group("sub", attributes={"level": 1})
        leaf = sub.create_array("leaf", shape=(6,), dtype="int64", chunks=(4,))
        leaf_d = np.arange(6, dtype="int64") * 3 - 5
        leaf[...] = leaf_d
        deep = sub.create_group("deeper")
        vals = deep.create_array("values", shape=(3, 3), dtype=">u2", chunks=(2, 2),
                                 chunk_key_encoding={"name": "v2", "separator": "/"})
        vals_d = c.sample(">u2", (3, 3))
        vals[...] = vals_d
        root.create_group("empty")
        what = "with a consolidated .zmetadata" if consolidated else "without .zmetadata"
        if consolidated:
            zarr.consolidate_metadata(c.path(name))
        c.record(name, None, f"root group with attributes, {what}; members top, sub, empty",
                 "zarr-python", node="group", zarr_format=2)
        c.record(f"{name}/top", top_d, "array in the root group, attributes, NaN fill",
                 "zarr-python", zarr_format=2)
        c.record(f"{name}/sub", None, "nested group with attributes", "zarr-python",
                 node="group", zarr_format=2)
        c.record(f"{name}/sub/leaf", leaf_d, "array in a nested group", "zarr-python",
                 zarr_format=2)
        c.record(f"{name}/sub/deeper", None, "group two levels down", "zarr-python",
                 node="group", zarr_format=2)
        c.record(f"{name}/sub/deeper/values", vals_d, "array three levels down, '>u2', '/' keys",
                 "zarr-python", zarr_format=2)
        c.record(f"{name}/empty", None, "a group with no members", "zarr-python",
                 node="group", zarr_format=2)


def _zarray(**kw) -> dict:
    m = {"shape": [4, 4], "chunks": [2, 2], "dtype": "<i4", "fill_value": 0, "order": "C",
         "filters": None, "dimension_separator": ".", "compressor": None, "zarr_format": 2}
    m.update(kw)
    return m


def _zarray_without(*keys) -> dict:
    m = _zarray()
    for k in keys:
        del m[k]
    return m


V2_REJECTS = [
    ("reject_bad_json", '{"zarr_format": 2, "shape": [4,', "truncated JSON"),
    ("reject_not_object", "[2]", ".zarray is a JSON list"),
    ("reject_zarr_format_3", _zarray(zarr_format=3), "zarr_format 3 in a .zarray"),
    ("reject_zarr_format_string", _zarray(zarr_format="2"), "zarr_format is a string"),
    *[(f"reject_missing_{k}", _zarray_without(k), f"required key {k} missing")
      for k in ["zarr_format", "shape", "chunks", "dtype", "compressor", "fill_value", "order",
                "filters"]],
    ("reject_negative_shape", _zarray(shape=[-4, 4]), "negative shape"),
    ("reject_chunks_rank", _zarray(chunks=[2]), "chunks of another rank than shape"),
    ("reject_chunks_zero", _zarray(chunks=[0, 2]), "a chunk size of 0"),
    ("reject_chunks_negative", _zarray(chunks=[-2, 2]), "a negative chunk size"),
    ("reject_chunks_fraction", _zarray(chunks=[1.5, 2]), "a fractional chunk size"),
    ("reject_dtype_name", _zarray(dtype="int32"), "dtype 'int32' (a NumPy name, not dtype.str)"),
    ("reject_dtype_no_byte_order", _zarray(dtype="i4"), "dtype 'i4' without its byte order"),
    ("reject_dtype_u1_little", _zarray(dtype="<u1"), "dtype '<u1' (NumPy spells it '|u1')"),
    ("reject_dtype_bad_size", _zarray(dtype="<i3"), "dtype '<i3' (no such size)"),
    ("reject_dtype_unknown_kind", _zarray(dtype="<q8"), "dtype with an unknown kind letter"),
    ("reject_dtype_number", _zarray(dtype=4), "dtype a number"),
    ("reject_compressor_no_id", _zarray(compressor={"level": 1}), "compressor without id"),
    ("reject_compressor_id_not_string", _zarray(compressor={"id": 1}), "compressor id a number"),
    ("reject_compressor_string", _zarray(compressor="zlib"), "compressor a string, not an object"),
    ("reject_filter_no_id", _zarray(filters=[{"dtype": "<i4"}]), "a filter without id"),
    ("reject_filters_object", _zarray(filters={"id": "delta", "dtype": "<i4"}),
     "filters an object, not a list"),
    ("reject_order", _zarray(order="K"), "order neither C nor F"),
    ("reject_separator", _zarray(dimension_separator="-"), "dimension_separator '-'"),
    ("reject_fill_string_for_int", _zarray(fill_value="lots"), "fill_value a string for '<i4'"),
    ("reject_fill_float_for_int", _zarray(fill_value=1.5), "fill_value 1.5 for '<i4'"),
    ("reject_fill_out_of_range", _zarray(dtype="|u1", fill_value=256), "fill_value 256 for '|u1'"),
    ("reject_fill_int_for_bool", _zarray(dtype="|b1", fill_value=1), "fill_value 1 for '|b1'"),
    ("reject_fill_nan_spelling", _zarray(dtype="<f4", fill_value="nan"),
     "fill_value 'nan' (v2 spells it 'NaN')"),
    ("reject_fill_hex_float", _zarray(dtype="<f4", fill_value="0x7fc00000"),
     "a hex fill_value (a v3 form, not a v2 one)"),
    ("reject_fill_scalar_for_complex", _zarray(dtype="<c8", fill_value=1.0),
     "fill_value a number for '<c8' (v2 writes [re, im])"),
    ("reject_fill_raw_not_base64", _zarray(dtype="|V2", fill_value="not base64!"),
     "fill_value for '|V2' that is not base64"),
    ("reject_fill_raw_length", _zarray(dtype="|V2", fill_value="AAEC"),
     "fill_value for '|V2' of 3 bytes"),
    # faults inside a codec configuration: refused when the codec is built
    ("reject_codec_unknown_id", _zarray(compressor={"id": "mystery"}), "an unknown compressor id"),
    ("reject_codec_unknown_filter", _zarray(filters=[{"id": "mystery"}]), "an unknown filter id"),
    ("reject_codec_blosc_cname", _zarray(compressor={"id": "blosc", "cname": "brotli",
                                                     "clevel": 5, "shuffle": 1, "blocksize": 0}),
     "blosc cname brotli"),
    ("reject_codec_zlib_level", _zarray(compressor={"id": "zlib", "level": 10}),
     "zlib level 10"),
]

V2_GROUP_REJECTS = [
    ("reject_group_zarr_format_3", {".zgroup": {"zarr_format": 3}}, "a .zgroup with zarr_format 3"),
    ("reject_group_unknown_key", {".zgroup": {"zarr_format": 2, "attributes": {}}},
     "a .zgroup with another key (the spec: other keys MUST NOT be present)"),
    ("reject_group_missing_format", {".zgroup": {}}, "a .zgroup without zarr_format"),
    ("reject_group_attrs_not_object", {".zgroup": {"zarr_format": 2}, ".zattrs": [1, 2]},
     "a .zattrs that is a list"),
    ("reject_zmetadata_format", {".zgroup": {"zarr_format": 2},
                                 ".zmetadata": {"metadata": {".zgroup": {"zarr_format": 2}},
                                                "zarr_consolidated_format": 2}},
     "a .zmetadata with zarr_consolidated_format 2"),
    ("reject_zmetadata_no_metadata", {".zgroup": {"zarr_format": 2},
                                      ".zmetadata": {"zarr_consolidated_format": 1}},
     "a .zmetadata without metadata"),
    ("reject_zmetadata_member_not_object",
     {".zgroup": {"zarr_format": 2},
      ".zmetadata": {"metadata": {".zgroup": {"zarr_format": 2}, "a/.zarray": [4]},
                     "zarr_consolidated_format": 1}},
     "a .zmetadata whose member document is not an object"),
]


def v2_documents(c: Corpus):
    """reject_*: hand-written v2 documents to refuse; accept_*: unusual but valid ones."""
    for name, meta, why in V2_REJECTS:
        c.doc2(name, {".zarray": meta}, "reject", why)
    for name, files, why in V2_GROUP_REJECTS:
        c.doc2(name, files, "reject", why, node="group")
    c.doc2("reject_array_attrs_not_object", {".zarray": _zarray(), ".zattrs": "[1, 2]"},
           "reject", "an array whose .zattrs is a list")
    c.doc2("accept_unknown_key", {".zarray": _zarray(created_by={"tool": "x"})}, "read",
           "a key the spec does not define (other keys SHOULD be ignored); all fill 0",
           data=np.zeros((4, 4), "int32"))
    c.doc2("accept_no_separator", {".zarray": _zarray_without("dimension_separator")}, "read",
           "no dimension_separator (the default '.'), as zarr-python 2 wrote it; all fill 0",
           data=np.zeros((4, 4), "int32"))
    c.doc2("accept_filters_empty", {".zarray": _zarray(filters=[], fill_value=3)}, "read",
           "filters [] (zarr-python reads it as null, with a warning); all fill 3",
           data=np.full((4, 4), 3, "int32"))
    c.doc2("accept_fill_integral_float", {".zarray": _zarray(fill_value=5.0)}, "read",
           "fill_value 5.0 for '<i4' (zarr-python reads an integral float as the integer)",
           data=np.full((4, 4), 5, "int32"))
    c.doc2("accept_group_no_attrs", {".zgroup": {"zarr_format": 2}}, "read",
           "a group without .zattrs", node="group")
    # zarr-python 2 wrote sorted keys with an indent of 4; chunks by zarr-python 3
    d = c.sample("int16", SHAPE)
    c.zp2("accept_zarr_python2_layout", d, "the .zarray rewritten as zarr-python 2 wrote it "
          "(sorted keys, indent 4, no dimension_separator); chunks by zarr-python 3",
          compressors=numcodecs.Zlib(level=1))
    p = c.out / "accept_zarr_python2_layout" / ".zarray"
    meta = json.loads(p.read_text())
    del meta["dimension_separator"]
    p.write_text(json.dumps(meta, indent=4, sort_keys=True, separators=(",", ": ")))
    c.fixtures[-1]["writer"] = "hand-written"


# ---------------------------------------------------------------------------
# xarray (conformance/xarray): Dataset.to_zarr, consolidated, zarr_format 2 and 3
# ---------------------------------------------------------------------------

def _record_hierarchy(c: Corpus, name: str, fmt: int, why: str, writer: str):
    """One group fixture for the root and one per member, each array with what zarr-python
    reads from it (the stored, CF-encoded values)."""
    root = zarr.open_group(c.path(name), mode="r", zarr_format=fmt, use_consolidated=False)
    c.record(name, None, why, writer, node="group", zarr_format=fmt)
    for path, node in sorted(root.members(max_depth=None), key=lambda m: m[0]):
        full = f"{name}/{path}"
        if isinstance(node, zarr.Array):
            attrs = dict(node.attrs)
            what = ", ".join(f"{k}={attrs[k]!r}" for k in sorted(attrs)
                             if k in ("units", "calendar", "scale_factor", "add_offset",
                                      "_FillValue", "dtype", "_ARRAY_DIMENSIONS"))
            c.record(full, node[...], f"variable {path} ({node.dtype}); {what}", writer,
                     zarr_format=fmt)
        else:
            c.record(full, None, f"group {path}", writer, node="group", zarr_format=fmt)


def xarray_hierarchies(c: Corpus):
    """weather_v*, packed_v*, labels_v*: xarray datasets; nested_v*: zarr-python's consolidated
    metadata over nested groups, for comparison."""
    import pandas as pd
    import xarray as xr
    for fmt in (2, 3):
        time = pd.date_range("2000-01-01", periods=10, freq="D")
        temp = (c.rng.standard_normal((10, 4, 5)) * 10 + 280).astype("float32")
        temp[0, 0, 0] = np.nan
        precip = np.abs(c.rng.standard_normal((10, 4, 5)))
        ds = xr.Dataset(
            {"temperature": (("time", "lat", "lon"), temp,
                             {"units": "K", "long_name": "air temperature"}),
             "precipitation": (("time", "lat", "lon"), precip, {"units": "mm/day"}),
             "station": (("lat", "lon"), np.arange(20, dtype="int32").reshape(4, 5))},
            coords={"time": time,
                    "lat": ("lat", np.linspace(-30, 30, 4), {"units": "degrees_north"}),
                    "lon": ("lon", np.linspace(0, 40, 5), {"units": "degrees_east"})},
            attrs={"title": "synthetic weather", "Conventions": "CF-1.8",
                   "history": "written by conformance/generate.py"})
        encoding = {"temperature": {"chunks": (5, 2, 5)},
                    "precipitation": {"chunks": (10, 4, 5)},
                    "time": {"units": "days since 2000-01-01", "dtype": "int64"}}
        name = f"weather_v{fmt}"
        ds.to_zarr(c.path(name), zarr_format=fmt, consolidated=True, mode="w",
                   encoding=encoding)
        _record_hierarchy(c, name, fmt, "xarray Dataset.to_zarr (consolidated): float32 with "
                          "a NaN, float64, int32, CF-encoded time (days since 2000-01-01), "
                          "coordinates with units", "xarray")

        raw = c.rng.standard_normal((6, 7)) * 5 + 20
        raw[2, 3] = np.nan
        mask = c.rng.integers(0, 2, (6, 7)).astype(bool)
        lead = pd.to_timedelta(np.arange(6) * 6, unit="h")
        ds = xr.Dataset(
            {"sst": (("y", "x"), raw, {"units": "degC"}),
             "mask": (("y", "x"), mask),
             "lead": (("y",), lead)},
            coords={"start": ("y", pd.date_range("2020-02-28", periods=6, freq="12h"))},
            attrs={"source": "synthetic", "unicode": "Zürich"})
        if fmt == 2:
            comp = {"compressors": [numcodecs.Zstd(level=3)]}
        else:
            comp = {"compressors": [zarr.codecs.ZstdCodec(level=3)]}
        encoding = {"sst": {"dtype": "int16", "scale_factor": 0.01, "add_offset": 20.0,
                            "_FillValue": -32768, "chunks": (3, 7), **comp},
                    "start": {"units": "hours since 2020-01-01", "dtype": "int64"},
                    "lead": {"units": "hours", "dtype": "int32"}}
        name = f"packed_v{fmt}"
        ds.to_zarr(c.path(name), zarr_format=fmt, consolidated=True, mode="w",
                   encoding=encoding)
        _record_hierarchy(c, name, fmt, "xarray Dataset.to_zarr (consolidated): float64 "
                          "packed as int16 (scale_factor, add_offset, _FillValue), bool, "
                          "timedelta as int32 hours, time coordinate, zstd", "xarray")

        # string coordinates as real datasets have them: NumPy '<U' (station ids), '|S'
        # (byte codes), pandas/object strings (names; v2 '|O' + vlen-utf8, v3 'string'), with
        # a CF time axis
        stations = np.array(["KSEA", "KPDX", "Zürich-Kloten", "KSFO"])
        codes = np.array([b"A1", b"B", b"C33", b""], dtype="S3")
        names = pd.Index(["Seattle", "Portland", "Zürich", ""], dtype=object)
        time = pd.date_range("2021-06-01", periods=5, freq="6h")
        # (its own generator, so that the fixtures written after it keep their data)
        obs = (np.random.default_rng(fmt).standard_normal((5, 4)) * 3 + 15).astype("float32")
        ds = xr.Dataset(
            {"obs": (("time", "station"), obs, {"units": "degC"}),
             "code": (("station",), codes),
             "name": (("station",), names.to_numpy())},
            coords={"time": time, "station": ("station", stations, {"long_name": "station id"})},
            attrs={"title": "synthetic station observations"})
        encoding = {"obs": {"chunks": (2, 4)},
                    "time": {"units": "hours since 2021-06-01", "dtype": "int64"}}
        name = f"labels_v{fmt}"
        ds.to_zarr(c.path(name), zarr_format=fmt, consolidated=True, mode="w",
                   encoding=encoding)
        _record_hierarchy(c, name, fmt, "xarray Dataset.to_zarr (consolidated): a NumPy '<U' "
                          "string coordinate, '|S' byte strings, object strings, CF-encoded "
                          "time (hours since 2021-06-01), float32", "xarray")

        name = f"nested_v{fmt}"
        root = zarr.open_group(c.path(name), mode="w", zarr_format=fmt,
                               attributes={"level": 0})
        a = root.create_group("A", attributes={"level": 1})
        b = a.create_group("b", attributes={"level": 2})
        x = b.create_array("x", shape=(3, 2), dtype="float32", chunks=(2, 2))
        x[...] = c.sample("float32", (3, 2), specials=False)
        y = root.create_array("y", shape=(4,), dtype="int8", chunks=(4,), attributes={"k": "v"})
        y[...] = np.arange(4, dtype="int8")
        root.create_group("c")  # (not "a": zarr-python orders the members case-insensitively,
        #                          and the order of a tie depends on which task ends first)
        zarr.consolidate_metadata(c.path(name))
        _record_hierarchy(c, name, fmt, "zarr-python consolidate_metadata over nested groups "
                          "(A, A/b, c) and arrays",
                          "zarr-python")


# The corpora and their categories: the output directory's name picks one (--kind overrides).
CORPORA = {
    "v3": [data_types, endianness, transposes, compressors, blosc, sharding, fill_values,
           missing_chunks, shapes, chunk_keys, metadata_fields, groups,
           tensorstore_fixtures, metadata_documents, numcodecs_codecs, time_types,
           variable_size_types],
    "v2": [v2_data_types, v2_order_and_separator, v2_fill_values, v2_compressors, v2_filters,
           v2_shapes, v2_groups, v2_documents, v2_time_types],
    "xarray": [xarray_hierarchies],
}


def generate(out: Path, seed: int, kind: str) -> int:
    """Write the corpus into a scratch directory beside ``out``, then swap it in."""
    if out.exists() and any(out.iterdir()) and not (out / "manifest.json").exists():
        sys.exit(f"refusing to replace {out}: not empty and holds no manifest.json")
    scratch = out.parent / f".{out.name}.partial"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    c = Corpus(scratch, seed)
    for category in CORPORA[kind]:
        category(c)
    c.manifest()
    names = [f["path"] for f in c.fixtures]
    assert len(names) == len(set(names)), "duplicate fixture names"
    shutil.rmtree(out, ignore_errors=True)
    scratch.rename(out)
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"{len(c.fixtures)} fixtures, {size / 1024:.0f} KiB in {out}", file=sys.stderr)
    for s in c.skipped:
        print(f"not written: {s}", file=sys.stderr)
    return 0


# ---------------------------------------------------------------------------
# Checking
# ---------------------------------------------------------------------------

def same(a: np.ndarray, b: np.ndarray) -> bool:
    if a.dtype.kind in "OTUS" and b.dtype.kind in "OTUS":  # variable-size strings and bytes
        return a.shape == b.shape and a.astype(object).tolist() == b.astype(object).tolist()
    if a.shape != b.shape or a.dtype.newbyteorder("=") != b.dtype.newbyteorder("="):
        return False
    if a.dtype.kind in "fc":
        return bool(np.array_equal(a, b, equal_nan=True))
    if a.dtype.kind in "Mm":  # NaT never equals NaT: compare the int64 counts
        return bool(np.array_equal(a.astype(a.dtype.newbyteorder("=")).view(np.int64),
                                   b.astype(b.dtype.newbyteorder("=")).view(np.int64)))
    return bool(np.array_equal(a, b))


# Where a peer is known to disagree with the corpus (the corpus follows the spec).
KNOWN_DEVIATIONS = {
    ("zarr-python", "accept_group_unknown_field_optional"):
        "zarr-python 3.1.6 refuses every unknown field in group metadata, even with "
        "must_understand false",
    ("tensorstore", "shard_outer_codecs"):
        "TensorStore 0.1.86 refuses codecs after sharding_indexed",
}


def check_zarr_python(root: Path, fx: dict) -> tuple[str, str]:
    """Returns (status, detail); status is ok / FAIL / refused / lax."""
    p = str(root / fx["path"])
    fmt = fx.get("zarr_format", 3)
    opener = functools.partial(zarr.open_array if fx["node"] == "array" else zarr.open_group,
                               zarr_format=fmt)
    if fx["expect"] == "reject":
        try:
            node = opener(p, mode="r")
            if fx["node"] == "array":
                node[...]
        except Exception as e:  # noqa: BLE001
            return "refused", f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:150]
        return "lax", "zarr-python opened and read it"
    try:
        node = opener(p, mode="r")
        if fx["node"] == "group":
            dict(node.attrs)
            members = sorted(k for k, _ in node.members())
            return "ok", f"members {members}"
        got = node[...]
    except Exception as e:  # noqa: BLE001
        return "FAIL", f"{type(e).__name__}: {e}"[:300]
    want = np.load(root / fx["data"])
    if not same(np.asarray(got), want):
        return "FAIL", f"data differs (got {got.dtype}{got.shape}, want {want.dtype}{want.shape})"
    return "ok", ""


def check_tensorstore(root: Path, fx: dict) -> tuple[str, str]:
    import tensorstore as ts
    if fx["node"] != "array":
        return "skip", "groups: TensorStore has none"
    try:
        driver = "zarr" if fx.get("zarr_format", 3) == 2 else "zarr3"
        t = ts.open({"driver": driver, "kvstore": {"driver": "file", "path": str(root / fx["path"])}},
                    open=True, read=True).result()
        got = t.read().result()
    except Exception as e:  # noqa: BLE001
        text = str(e).splitlines()[0] if str(e) else ""
        text = re.sub(r'^.*?Error reading local file "[^"]*": ', "", text)  # keep the reason
        text = re.sub(r" \[tensorstore_spec=.*$", "", text)
        msg = f"{type(e).__name__}: {text}"[:150]
        return ("refused" if fx["expect"] == "reject" else "cannot"), msg
    if fx["expect"] == "reject":
        return "lax", "TensorStore opened and read it"
    want = np.load(root / fx["data"])
    return ("ok", "") if same(np.asarray(got), want) else ("FAIL", "data differs")


def metadata_file(fx: dict) -> str:
    """The document that makes a fixture's directory a node: zarr.json (v3), else .zarray or
    .zgroup (v2)."""
    if fx.get("zarr_format", 3) == 3:
        return "zarr.json"
    return ".zarray" if fx["node"] == "array" else ".zgroup"


def check(root: Path, peers: list[str], verbose: bool) -> int:
    manifest = json.loads((root / "manifest.json").read_text())
    fixtures = manifest["fixtures"]
    problems = 0
    # The manifest and the tree agree.
    listed = {f["path"] for f in fixtures}
    for f in fixtures:
        doc = metadata_file(f)
        if not (root / f["path"] / doc).is_file():
            print(f"MISSING {f['path']}/{doc}")
            problems += 1
        if f["data"] and not (root / f["data"]).is_file():
            print(f"MISSING {f['data']}")
            problems += 1
        if (f["expect"] == "read") != (f["data"] is not None) and f["node"] == "array":
            print(f"BAD ENTRY {f['path']}: read arrays need data, rejects none")
            problems += 1
    docs = [p for name in ("zarr.json", ".zarray", ".zgroup") for p in root.rglob(name)]
    for d in sorted({p.parent.relative_to(root).as_posix() for p in docs}):
        if d not in listed:
            print(f"UNLISTED {d}")
            problems += 1

    for peer in peers:
        fn = check_zarr_python if peer == "zarr-python" else check_tensorstore
        counts: dict[str, int] = {}
        for f in fixtures:
            status, detail = fn(root, f)
            known = KNOWN_DEVIATIONS.get((peer, f["path"]))
            if known and status in ("FAIL", "cannot"):
                status, detail = "known", f"{known}; {detail}"
            counts[status] = counts.get(status, 0) + 1
            if status == "FAIL" and peer == "zarr-python":
                problems += 1
            if verbose or status in ("FAIL", "lax", "cannot", "known"):
                print(f"{peer:11} {status:7} {f['path']}" + (f"  ({detail})" if detail else ""))
        print(f"{peer}: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    print(f"{len(fixtures)} fixtures; {problems} problem(s)")
    return 1 if problems else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", nargs="?", type=Path, help="directory to (re)write the corpus into")
    ap.add_argument("--seed", type=int, default=1, help="random seed for the data (default 1)")
    ap.add_argument("--check", type=Path, metavar="DIR",
                    help="read back the corpus in DIR with the peers instead of writing; exit 1 "
                         "if zarr-python misreads a 'read' fixture (a lax accept of a 'reject' "
                         "document is only reported)")
    ap.add_argument("--peers", default="zarr-python",
                    help="with --check: comma-separated peers among zarr-python,tensorstore "
                         "(TensorStore results are informational)")
    ap.add_argument("--kind", choices=sorted(CORPORA),
                    help="which corpus to write (default: the output directory's name, e.g. "
                         "conformance/v2 writes the v2 corpus; any other name writes v3)")
    ap.add_argument("-v", "--verbose", action="store_true", help="with --check: one line per fixture")
    args = ap.parse_args(argv)
    if args.check:
        peers = [p.strip() for p in args.peers.split(",") if p.strip()]
        bad = set(peers) - {"zarr-python", "tensorstore"}
        if bad:
            ap.error(f"unknown peer(s): {', '.join(sorted(bad))}")
        return check(args.check.resolve(), peers, args.verbose)
    if args.out is None:
        ap.error("give an output directory, or --check DIR")
    kind = args.kind or (args.out.name if args.out.name in CORPORA else "v3")
    return generate(args.out.resolve(), args.seed, kind)


if __name__ == "__main__":
    sys.exit(main())
