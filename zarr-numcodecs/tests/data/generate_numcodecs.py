#!/usr/bin/env python3
"""Write the numcodecs golden vectors of zarr-numcodecs (tests/data/numcodecs/, numcodecs.json).

Each case is one chunk that zarr-python 3.1.6 writes with numcodecs 0.16.6 codecs (the
`numcodecs.<id>` names), with:

* `stored`: the chunk file zarr-python wrote;
* `decoded`: the chunk as zarr-python reads it back (C order, little-endian);
* `input`: the data written, when the codecs are lossy (so that decoded != input);
* `identical`: whether our encoding of `input` must equal `stored` byte for byte (every
  deterministic codec);
* `codecs`, `data_type`, `fill_value`, `shape`: from the array's zarr.json.

The table-driven test `golden.rs` reads every case. Files stay small (a few hundred bytes).

Usage (a venv with zarr==3.1.6 numcodecs==0.16.6 pcodec zfpy==1.0.1 numpy):

    python zarr-numcodecs/tests/data/generate_numcodecs.py
"""
from __future__ import annotations

import importlib.metadata
import json
import shutil
import tempfile
import warnings
from pathlib import Path

import numpy as np

warnings.filterwarnings("ignore")

import zarr  # noqa: E402
import zarr.codecs.numcodecs as nc  # noqa: E402

HERE = Path(__file__).resolve().parent
OUT = HERE / "numcodecs"


def le_bytes(a: np.ndarray) -> bytes:
    a = np.ascontiguousarray(a)
    return a.astype(a.dtype.newbyteorder("<")).tobytes()


def version(pkg: str) -> str:
    try:
        return importlib.metadata.version(pkg)
    except importlib.metadata.PackageNotFoundError:
        return "absent"


class Cases:
    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.cases: list[dict] = []
        self.rng = np.random.default_rng(17)

    def add(self, name: str, data: np.ndarray, *, filters=None, compressors=None,
            serializer="auto", fill=0, identical=True, lossy=False) -> None:
        path = self.tmp / name
        arr = zarr.create_array(
            store=str(path), shape=data.shape, dtype=data.dtype, chunks=data.shape,
            filters=filters, compressors=compressors, serializer=serializer,
            fill_value=fill, zarr_format=3,
        )
        arr[...] = data
        meta = json.loads((path / "zarr.json").read_text())
        key = "c/" + "/".join("0" for _ in data.shape) if data.shape else "c"
        stored = (path / key).read_bytes()
        decoded = zarr.open_array(str(path), mode="r")[...]
        assert decoded.dtype == data.dtype and decoded.shape == data.shape, name
        if not lossy:
            assert np.array_equal(decoded, data, equal_nan=True), name
        (OUT / f"{name}.stored").write_bytes(stored)
        (OUT / f"{name}.decoded").write_bytes(le_bytes(decoded))
        # (NaN and infinities stay out of the lossy data: the codecs' rounding of them is
        # not what these cases test)
        case = {
            "name": name,
            "data_type": meta["data_type"],
            "fill_value": meta["fill_value"],
            "shape": list(data.shape),
            "codecs": meta["codecs"],
            "stored": f"numcodecs/{name}.stored",
            "decoded": f"numcodecs/{name}.decoded",
            "identical": identical,
        }
        if lossy:
            (OUT / f"{name}.input").write_bytes(le_bytes(data))
            case["input"] = f"numcodecs/{name}.input"
        self.cases.append(case)

    # -- data ---------------------------------------------------------------
    def ints(self, dtype, shape, lo=-1000, hi=1000) -> np.ndarray:
        return self.rng.integers(lo, hi, size=shape).astype(dtype)

    def smooth(self, dtype, shape) -> np.ndarray:
        n = int(np.prod(shape))
        x = np.cumsum(self.rng.standard_normal(n)) + 100.0
        return x.reshape(shape).astype(dtype)


def write(c: Cases) -> None:
    s2 = (8, 5)
    # bytes -> bytes compressors: deterministic, so byte-identical
    c.add("zlib_default", c.ints("<i4", s2), compressors=[nc.Zlib()])
    c.add("zlib_9", c.ints("<i4", s2), compressors=[nc.Zlib(level=9)])
    c.add("zlib_0", c.ints("<u2", s2, 0, 60000), compressors=[nc.Zlib(level=0)])
    c.add("bz2_1", c.smooth("<f8", s2), compressors=[nc.BZ2(level=1)])
    c.add("bz2_9", c.ints("<i8", s2), compressors=[nc.BZ2(level=9)])
    c.add("lz4_default", c.ints("<i4", s2), compressors=[nc.LZ4()])
    c.add("lz4_accel", c.ints("<i2", (30, 7)), compressors=[nc.LZ4(acceleration=5)])
    c.add("lzma_default", c.ints("<i4", s2), compressors=[nc.LZMA()])
    c.add("lzma_preset1_crc32", c.smooth("<f4", s2), compressors=[nc.LZMA(preset=1, check=1)])
    c.add("lzma_alone", c.ints("<i4", s2), compressors=[nc.LZMA(format=2, preset=3)])
    c.add("lzma_raw_filters", c.ints("<i4", s2), compressors=[nc.LZMA(
        format=3, filters=[{"id": 3, "dist": 4}, {"id": 33, "preset": 1}])])
    # (numcodecs cannot read back xz with filters: it hands them to the decoder, which
    # Python's lzma refuses for every format but raw)
    c.add("lzma_raw_lzma2_options", c.smooth("<f8", s2), compressors=[nc.LZMA(
        format=3, filters=[{"id": 3, "dist": 8}, {"id": 33, "preset": 6, "dict_size": 65536,
                                                  "lc": 2, "lp": 1, "pb": 1}])])
    c.add("shuffle_4", c.ints("<i4", s2), compressors=[nc.Shuffle(elementsize=4)])
    c.add("shuffle_8_zlib", c.smooth("<f8", s2),
          compressors=[nc.Shuffle(elementsize=8), nc.Zlib(level=5)])
    c.add("crc32_start", c.ints("<i4", s2), compressors=[nc.CRC32()])
    c.add("crc32_end", c.ints("<i2", s2), compressors=[nc.CRC32(location="end")])
    c.add("adler32", c.ints("<i4", s2), compressors=[nc.Adler32()])
    c.add("adler32_end_lz4", c.ints("<u4", s2, 0, 100), compressors=[nc.LZ4(), nc.Adler32(location="end")])
    c.add("fletcher32", c.ints("<i4", s2), compressors=[nc.Fletcher32()])
    c.add("fletcher32_odd", c.ints("|u1", (3, 5), 0, 255), compressors=[nc.Fletcher32()])
    c.add("fletcher32_large", c.ints("<u2", (40, 20), 40000, 65535), compressors=[nc.Fletcher32()])

    # array -> array filters
    c.add("delta_i4", c.ints("<i4", s2).cumsum().reshape(s2).astype("<i4"),
          filters=[nc.Delta(dtype="<i4")])
    c.add("delta_i2_as_i1", (np.arange(40, dtype="<i2") * 3 + 100).reshape(s2),
          filters=[nc.Delta(dtype="<i2", astype="<i1")], compressors=[nc.Zlib(level=1)])
    c.add("delta_u2_wraps", c.ints("<u2", s2, 0, 65535), filters=[nc.Delta(dtype="uint16")])
    c.add("delta_f8", c.smooth("<f8", s2), filters=[nc.Delta(dtype="<f8")])
    c.add("delta_f8_as_f4", c.smooth("<f8", s2), filters=[nc.Delta(dtype="<f8", astype="<f4")],
          lossy=True)
    c.add("delta_f2", c.smooth("<f2", s2), filters=[nc.Delta(dtype="<f2")], lossy=True)
    c.add("fixedscaleoffset_u1", np.linspace(1000, 1001, 40).reshape(s2),
          filters=[nc.FixedScaleOffset(offset=1000, scale=10, dtype="<f8", astype="|u1")],
          lossy=True)
    c.add("fixedscaleoffset_f4_i2", c.smooth("<f4", s2),
          filters=[nc.FixedScaleOffset(offset=100.5, scale=100.0, dtype="<f4", astype="<i2")],
          lossy=True)
    c.add("fixedscaleoffset_i4_int", c.ints("<i4", s2),
          filters=[nc.FixedScaleOffset(offset=10, scale=2, dtype="<i4", astype="<i4")])
    c.add("fixedscaleoffset_i4_float", c.ints("<i4", s2),
          filters=[nc.FixedScaleOffset(offset=0.25, scale=0.5, dtype="<i4", astype="<i2")],
          lossy=True)
    c.add("fixedscaleoffset_f8_lz4", c.smooth("<f8", s2),
          filters=[nc.FixedScaleOffset(offset=0, scale=1000, dtype="<f8", astype="<i4")],
          compressors=[nc.LZ4()], lossy=True)
    c.add("bitround_f4", c.smooth("<f4", s2), filters=[nc.BitRound(keepbits=10)], lossy=True)
    c.add("bitround_f8", c.smooth("<f8", s2), filters=[nc.BitRound(keepbits=5)],
          compressors=[nc.Zlib()], lossy=True)
    c.add("bitround_f2", c.smooth("<f2", s2), filters=[nc.BitRound(keepbits=3)], lossy=True)
    c.add("quantize_f8", c.smooth("<f8", s2), filters=[nc.Quantize(digits=2, dtype="<f8")],
          lossy=True)
    c.add("quantize_f4", c.smooth("<f4", s2), filters=[nc.Quantize(digits=3, dtype="<f4")],
          lossy=True)
    c.add("quantize_f2", c.smooth("<f2", s2), filters=[nc.Quantize(digits=1, dtype="<f2")],
          lossy=True)
    bools = c.rng.integers(0, 2, size=(7, 3)).astype(bool)
    c.add("packbits", bools, filters=[nc.PackBits()])
    c.add("packbits_fill_true", c.rng.integers(0, 2, size=(4, 4)).astype(bool),
          filters=[nc.PackBits()], fill=True)
    c.add("astype_f8_as_f4", c.smooth("<f8", s2),
          filters=[nc.AsType(encode_dtype="<f4", decode_dtype="<f8")], lossy=True)
    c.add("astype_i8_as_i2", c.ints("<i8", s2),
          filters=[nc.AsType(encode_dtype="<i2", decode_dtype="<i8")])
    c.add("astype_f4_as_f2", c.smooth("<f4", s2),
          filters=[nc.AsType(encode_dtype="<f2", decode_dtype="<f4")], lossy=True)

    # array -> bytes: pcodec (lossless; the pco crate is the library the package wraps)
    c.add("pcodec_f8", c.smooth("<f8", s2), serializer=nc.PCodec(level=8), compressors=None)
    c.add("pcodec_i8_consecutive", c.ints("<i8", s2).cumsum().reshape(s2),
          serializer=nc.PCodec(level=3, delta_spec="try_consecutive", delta_encoding_order=2),
          compressors=None)
    c.add("pcodec_u2_classic", c.ints("<u2", (16, 9), 0, 65535),
          serializer=nc.PCodec(mode_spec="classic", delta_spec="try_lookback"), compressors=None)
    c.add("pcodec_f4_pages", c.smooth("<f4", (30, 10)),
          serializer=nc.PCodec(equal_pages_up_to=100), compressors=None)
    c.add("pcodec_f2", c.smooth("<f2", s2), serializer=nc.PCodec(), compressors=None)

    # array -> bytes: zfpy (zfp 1.0.1), every mode, type and rank, partial blocks
    def zfpy(name, data, **kw):
        c.add(name, data, serializer=nc.ZFPY(**kw), compressors=None, lossy=True)

    zfpy("zfpy_accuracy_f8_2d", c.smooth("<f8", (9, 6)), mode=4, tolerance=0.01)
    zfpy("zfpy_accuracy_f4_3d", c.smooth("<f4", (5, 3, 6)), mode=4, tolerance=0.5)
    zfpy("zfpy_accuracy_zero_tol", c.smooth("<f8", (7,)), mode=4, tolerance=0)
    zfpy("zfpy_rate_f4_1d", c.smooth("<f4", (23,)), mode=2, rate=8)
    zfpy("zfpy_rate_f8_4d", c.smooth("<f8", (2, 5, 3, 6)), mode=2, rate=12.5)
    zfpy("zfpy_rate_2d", c.smooth("<f8", (6, 6)), mode=2, rate=4)
    zfpy("zfpy_precision_i4_2d", c.ints("<i4", (7, 9), -10**6, 10**6), mode=3, precision=14)
    zfpy("zfpy_precision_f8_3d", c.smooth("<f8", (4, 5, 6)), mode=3, precision=30)
    zfpy("zfpy_reversible_f8", c.smooth("<f8", (5, 7)))
    zfpy("zfpy_reversible_i8_3d", c.ints("<i8", (3, 4, 5), -10**12, 10**12), mode=3)
    zfpy("zfpy_accuracy_i8", c.ints("<i8", (11,), -10**9, 10**9), mode=4, tolerance=1)

    # added last, so that the random data of every case above stays as it was
    c.add("jenkins_lookup3", c.ints("<i4", s2), compressors=[nc.JenkinsLookup3()])
    c.add("jenkins_lookup3_initval_zlib", c.ints("|u1", (3, 5), 0, 255),
          compressors=[nc.Zlib(level=1), nc.JenkinsLookup3(initval=12345)])


def main() -> None:
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as t:
        c = Cases(Path(t))
        write(c)
    doc = {
        "zarr_python": zarr.__version__,
        "numcodecs": version("numcodecs"),
        "pcodec": version("pcodec"),
        "zfpy": version("zfpy"),
        "cases": c.cases,
    }
    (HERE / "numcodecs.json").write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {len(c.cases)} cases")


if __name__ == "__main__":
    main()
