#!/usr/bin/env python3
"""Write the golden test vectors of zarr-codecs (tests/data/golden/ and golden.json).

Each case is one stored chunk written by another implementation, with the chunk it must
decode to:

* copied cases take chunk files from the conformance corpus (written by zarr-python 3.1.6 or
  TensorStore) and the expected values from the corpus' .npy files;
* generated cases are written here with zarr-python: shards whose inner codecs are
  deterministic, so that our encoder must reproduce them byte for byte.

golden.json lists every case: the chunk's data type, fill value (JSON), shape and codecs
(the array's "codecs"), the stored file, the decoded file (the chunk in C order,
little-endian) and whether our encoding must be byte-identical ("identical"); and, under
"rejects", codec chains from the corpus that a reader must refuse.

Usage (the pinned peers from scripts/peers-venv):

    PY=$(scripts/peers-venv | tail -n1)
    $PY zarr-codecs/tests/data/generate.py CORPUS_V3

CORPUS_V3 is the ``v3`` folder of the shared conformance corpus, which the copied cases were
taken from (it lives outside this repository, so it is an argument).
"""
from __future__ import annotations

import json
import shutil
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

warnings.filterwarnings("ignore")

import zarr  # noqa: E402
from zarr.codecs import BytesCodec, Crc32cCodec, ShardingCodec, TransposeCodec  # noqa: E402

HERE = Path(__file__).resolve().parent
OUT = HERE / "golden"

COPIED = [
    "bytes_little", "bytes_big", "transpose_2d", "transpose_3d", "gzip", "zstd",
    "zstd_checksum", "crc32c", "zstd_crc32c", "dtype_bool", "dtype_float16",
    "dtype_complex64", "dtype_complex128", "fill_nan", "scalar_0d", "four_d",
    "shard_end", "shard_start_partial", "shard_transpose",
    "ts_zstd", "ts_shard", "ts_big_endian_transpose",
] + [f"blosc_{c}_{s}" for c in ["lz4", "lz4hc", "blosclz", "zstd", "zlib"]
     for s in ["noshuffle", "shuffle", "bitshuffle"]]

# deterministic codecs: our encoding must equal the writer's
IDENTICAL = {"bytes_little", "bytes_big", "transpose_2d", "crc32c"}


def chunk_key(meta: dict, idx: tuple[int, ...]) -> str:
    enc = meta["chunk_key_encoding"]
    sep = enc.get("configuration", {}).get("separator", "/")
    if not idx:
        return "c"
    return "c" + sep + sep.join(str(i) for i in idx)


def le_bytes(a: np.ndarray) -> bytes:
    a = np.ascontiguousarray(a)
    return a.astype(a.dtype.newbyteorder("<")).tobytes()


def add_case(cases: list, name: str, meta: dict, idx: tuple[int, ...], stored: bytes,
             expected: np.ndarray, identical: bool) -> None:
    shape = meta["chunk_grid"]["configuration"]["chunk_shape"]
    assert list(expected.shape) == list(shape), (name, expected.shape, shape)
    (OUT / f"{name}.stored").write_bytes(stored)
    (OUT / f"{name}.decoded").write_bytes(le_bytes(expected))
    cases.append({
        "name": name,
        "data_type": meta["data_type"],
        "fill_value": meta["fill_value"],
        "shape": shape,
        "codecs": meta["codecs"],
        "stored": f"golden/{name}.stored",
        "decoded": f"golden/{name}.decoded",
        "identical": identical,
    })


def copied(cases: list, corpus: Path) -> None:
    for name in COPIED:
        d = corpus / name
        meta = json.loads((d / "zarr.json").read_text())
        shape = meta["chunk_grid"]["configuration"]["chunk_shape"]
        idx = tuple(0 for _ in shape)
        data = np.load(corpus / f"{name}.npy")
        # chunk (0, ..., 0) lies inside the array in every case used here
        expected = data[tuple(slice(0, n) for n in shape)]
        stored = (d / chunk_key(meta, idx)).read_bytes()
        add_case(cases, name, meta, idx, stored, expected, name in IDENTICAL)


def write(tmp: Path, name: str, data: np.ndarray, shards, serializer, fill) -> dict:
    path = tmp / name
    arr = zarr.create_array(
        store=str(path), shape=data.shape, dtype=data.dtype, chunks=shards,
        serializer=serializer, compressors=None, filters=None, fill_value=fill,
        zarr_format=3,
    )
    arr[...] = data
    return json.loads((path / "zarr.json").read_text())


def generated(cases: list) -> None:
    rng = np.random.default_rng(7)
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)

        # 3 x 5 inner chunks (Morton order over a non-power-of-two grid), some all fill
        data = rng.integers(-300, 300, size=(6, 10), dtype=np.int16)
        data[0:2, 2:4] = 0
        data[4:6, 6:10] = 0
        sharding = ShardingCodec(
            chunk_shape=(2, 2), codecs=[BytesCodec(endian="little")],
            index_codecs=[BytesCodec(endian="little"), Crc32cCodec()], index_location="end")
        meta = write(tmp, "a", data, (6, 10), sharding, 0)
        stored = (tmp / "a" / chunk_key(meta, (0, 0))).read_bytes()
        add_case(cases, "gen_shard_end", meta, (0, 0), stored, data, True)

        # index at the start, big-endian inner chunks with their own checksum, NaN fill
        data = rng.standard_normal((4, 9)).astype(np.float32)
        data[0:2, 3:6] = np.nan
        data[2:4, 0:3] = np.float32(-0.0)  # -0.0 is not the fill value
        sharding = ShardingCodec(
            chunk_shape=(2, 3), codecs=[BytesCodec(endian="big"), Crc32cCodec()],
            index_codecs=[BytesCodec(endian="little"), Crc32cCodec()], index_location="start")
        meta = write(tmp, "b", data, (4, 9), sharding, np.nan)
        stored = (tmp / "b" / chunk_key(meta, (0, 0))).read_bytes()
        add_case(cases, "gen_shard_start", meta, (0, 0), stored, data, True)

        # nested sharding
        data = rng.integers(0, 255, size=(8, 8), dtype=np.uint8)
        data[0:2, 0:2] = 0
        data[4:8, 4:8] = 0
        inner = ShardingCodec(chunk_shape=(2, 2), codecs=[BytesCodec()],
                              index_codecs=[BytesCodec(endian="little"), Crc32cCodec()])
        sharding = ShardingCodec(chunk_shape=(4, 4), codecs=[inner],
                                 index_codecs=[BytesCodec(endian="little"), Crc32cCodec()])
        meta = write(tmp, "c", data, (8, 8), sharding, 0)
        stored = (tmp / "c" / chunk_key(meta, (0, 0))).read_bytes()
        add_case(cases, "gen_shard_nested", meta, (0, 0), stored, data, True)

        # 3-d shard with transposed inner chunks
        data = rng.integers(0, 2**31, size=(4, 6, 4), dtype=np.uint32)
        data[2:4, 3:6, 0:2] = 5
        sharding = ShardingCodec(
            chunk_shape=(2, 3, 2),
            codecs=[TransposeCodec(order=(2, 0, 1)), BytesCodec(endian="little")],
            index_codecs=[BytesCodec(endian="little"), Crc32cCodec()])
        meta = write(tmp, "d", data, (4, 6, 4), sharding, 5)
        stored = (tmp / "d" / chunk_key(meta, (0, 0, 0))).read_bytes()
        add_case(cases, "gen_shard_3d_transpose", meta, (0, 0, 0), stored, data, True)


# corpus fixtures whose codec chain a reader must refuse
REJECTED = ["reject_transpose_order", "reject_no_array_to_bytes", "reject_unknown_codec"]


def rejected(corpus: Path) -> list:
    out = []
    for name in REJECTED:
        meta = json.loads((corpus / name / "zarr.json").read_text())
        out.append({
            "name": name,
            "data_type": meta["data_type"],
            "fill_value": meta["fill_value"],
            "shape": meta["chunk_grid"]["configuration"]["chunk_shape"],
            "codecs": meta["codecs"],
        })
    return out


def main() -> None:
    if len(sys.argv) != 2 or not (Path(sys.argv[1]) / "manifest.json").is_file():
        sys.exit("usage: generate.py CORPUS_V3 (a conformance corpus folder with a manifest.json)")
    corpus = Path(sys.argv[1])
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    cases: list = []
    copied(cases, corpus)
    generated(cases)
    doc = {"zarr_python": zarr.__version__, "cases": cases, "rejects": rejected(corpus)}
    (HERE / "golden.json").write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {len(cases)} cases")


if __name__ == "__main__":
    main()
