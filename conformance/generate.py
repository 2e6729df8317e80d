#!/usr/bin/env python3
"""Write (or check) this project's Zarr v3 conformance corpus.

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
        else:
            raise ValueError(dtype)
        return np.array(a, order="C")

    # -- bookkeeping -----------------------------------------------------------
    def record(self, name, data, why, writer, node="array", expect="read"):
        entry = {"path": name, "node": node, "writer": writer, "expect": expect,
                 "data": None, "why": why}
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
        a = zarr.create_array(self.path(name), shape=data.shape, dtype=data.dtype, **create)
        if write and data.size:
            a[...] = data
        self.record(name, data, why, "zarr-python")
        return a

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


CATEGORIES = [data_types, endianness, transposes, compressors, blosc, sharding, fill_values,
              missing_chunks, shapes, chunk_keys, metadata_fields, groups,
              tensorstore_fixtures, metadata_documents, numcodecs_codecs]


def generate(out: Path, seed: int) -> int:
    """Write the corpus into a scratch directory beside ``out``, then swap it in."""
    if out.exists() and any(out.iterdir()) and not (out / "manifest.json").exists():
        sys.exit(f"refusing to replace {out}: not empty and holds no manifest.json")
    scratch = out.parent / f".{out.name}.partial"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    c = Corpus(scratch, seed)
    for category in CATEGORIES:
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
    if a.shape != b.shape or a.dtype.newbyteorder("=") != b.dtype.newbyteorder("="):
        return False
    if a.dtype.kind in "fc":
        return bool(np.array_equal(a, b, equal_nan=True))
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
    opener = zarr.open_array if fx["node"] == "array" else zarr.open_group
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
        t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(root / fx["path"])}},
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


def check(root: Path, peers: list[str], verbose: bool) -> int:
    manifest = json.loads((root / "manifest.json").read_text())
    fixtures = manifest["fixtures"]
    problems = 0
    # The manifest and the tree agree.
    listed = {f["path"] for f in fixtures}
    for f in fixtures:
        if not (root / f["path"] / "zarr.json").is_file():
            print(f"MISSING {f['path']}/zarr.json")
            problems += 1
        if f["data"] and not (root / f["data"]).is_file():
            print(f"MISSING {f['data']}")
            problems += 1
        if (f["expect"] == "read") != (f["data"] is not None) and f["node"] == "array":
            print(f"BAD ENTRY {f['path']}: read arrays need data, rejects none")
            problems += 1
    for d in sorted(p.parent.relative_to(root).as_posix() for p in root.rglob("zarr.json")):
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
    return generate(args.out.resolve(), args.seed)


if __name__ == "__main__":
    sys.exit(main())
