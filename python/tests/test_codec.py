"""The zarr-python codec: metadata, the shared extension examples, writing and reading."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import zarr
from numcodecs import Zstd
from zarr.codecs import Crc32cCodec, ShardingCodec, ZstdCodec
from zarr.core.chunk_grids import RegularChunkGrid
from zarr.core.dtype import Float32

import zarr_sparse_layout  # noqa: F401  (the import registers the codec)
from zarr_sparse_layout import SparseLayoutCodec, decode_sparse, encode_chunk

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def read_bytes(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def read_json(path: str):
    with open(path) as f:
        return json.load(f)


def chunk_block(full: np.ndarray, index, chunk_shape, fill) -> np.ndarray:
    """Chunk ``index`` of ``full``, padded with ``fill`` to the whole chunk shape."""
    out = np.full(chunk_shape, fill, dtype=full.dtype)
    sel = tuple(slice(i * c, (i + 1) * c) for i, c in zip(index, chunk_shape))
    part = full[sel]
    out[tuple(slice(0, s) for s in part.shape)] = part
    return out


class Metadata(unittest.TestCase):
    def test_registered_by_import(self):
        from zarr.registry import get_codec_class

        self.assertIs(get_codec_class("sparse_layout"), SparseLayoutCodec)

    def test_round_trip_dict(self):
        for d in (
            {"name": "sparse_layout", "configuration": {"format": "coo", "index_data_type": "uint16"}},
            {"name": "sparse_layout",
             "configuration": {"format": "csr", "index_data_type": "uint32", "pointer_data_type": "uint64"}},
            {"name": "sparse_layout",
             "configuration": {"format": "csc", "index_data_type": "uint64", "pointer_data_type": "uint32"}},
        ):
            self.assertEqual(SparseLayoutCodec.from_dict(d).to_dict(), d)
        must = {"name": "sparse_layout", "must_understand": True,
                "configuration": {"format": "coo", "index_data_type": "uint16"}}
        self.assertEqual(SparseLayoutCodec.from_dict(must).format, "coo")

    def test_bad_dicts(self):
        base = {"format": "csr", "index_data_type": "uint16", "pointer_data_type": "uint32"}
        bad = [
            {"name": "sparse_layout"},
            {"name": "sparse_layout", "configuration": {**base, "extra": 1}},
            {"name": "sparse_layout", "configuration": base, "extra": 1},
            {"name": "sparse_layout", "configuration": base, "must_understand": False},
            {"name": "sparse_layout", "configuration": {**base, "format": "bsr"}},
            {"name": "sparse_layout", "configuration": {**base, "index_data_type": "uint8"}},
            {"name": "sparse_layout", "configuration": {**base, "index_data_type": "int32"}},
            {"name": "sparse_layout", "configuration": {**base, "pointer_data_type": "uint16"}},
            {"name": "sparse_layout", "configuration": {"format": "csr", "index_data_type": "uint16"}},
            {"name": "sparse_layout", "configuration": {**base, "format": "coo"}},
            {"name": "sparse", "configuration": base},
        ]
        for d in bad:
            with self.subTest(d=d):
                with self.assertRaises(ValueError):
                    SparseLayoutCodec.from_dict(d)

    def test_validate_against_chunks(self):
        f32 = Float32()
        csr = SparseLayoutCodec(format="csr", index_data_type="uint16", pointer_data_type="uint32")
        csr.validate(shape=(10**6, 10**6), dtype=f32, chunk_grid=RegularChunkGrid(chunk_shape=(65536, 65535)))
        for chunks, why in (
            ((65537, 10), "cannot hold index 65536"),
            ((65536, 65536), "element count"),
            ((4, 4, 4), "2-d"),
        ):
            with self.subTest(chunks=chunks):
                with self.assertRaisesRegex(ValueError, why):
                    csr.validate(shape=chunks, dtype=f32, chunk_grid=RegularChunkGrid(chunk_shape=chunks))
        coo = SparseLayoutCodec(format="coo", index_data_type="uint16")
        coo.validate(shape=(9, 9, 9, 9, 9), dtype=f32, chunk_grid=RegularChunkGrid(chunk_shape=(65536,) * 5))
        with self.assertRaisesRegex(ValueError, "cannot hold"):
            coo.validate(shape=(9, 9), dtype=f32, chunk_grid=RegularChunkGrid(chunk_shape=(3, 65537)))

    def test_create_array_refuses_bad_metadata(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        with self.assertRaisesRegex(ValueError, "2-d"):
            zarr.create_array(os.path.join(d, "a"), shape=(4, 4, 4), chunks=(2, 2, 2), dtype="float32",
                              serializer=SparseLayoutCodec(format="csc", index_data_type="uint16",
                                                           pointer_data_type="uint32"), compressors=None)
        with self.assertRaisesRegex(ValueError, "cannot hold"):
            zarr.create_array(os.path.join(d, "b"), shape=(100000,), chunks=(70000,), dtype="float32",
                              serializer=SparseLayoutCodec(format="coo", index_data_type="uint16"),
                              compressors=None)


class SharedExamples(unittest.TestCase):
    """The extension examples written by a separate implementation (copied into tests/data)."""

    def test_sp_csr_reads(self):
        arr = zarr.open_array(os.path.join(DATA, "sp_csr"), mode="r")
        self.assertIsInstance(arr.metadata.codecs[0], SparseLayoutCodec)
        expect = np.load(os.path.join(DATA, "sp_csr.npy"))
        got = arr[:]
        self.assertEqual(got.dtype, expect.dtype)
        np.testing.assert_array_equal(got, expect)
        np.testing.assert_array_equal(arr[7:33, 20:31], expect[7:33, 20:31])

    def test_sp_coo_3d_reads(self):
        arr = zarr.open_array(os.path.join(DATA, "sp_coo_3d"), mode="r")
        expect = np.load(os.path.join(DATA, "sp_coo_3d.npy"))
        np.testing.assert_array_equal(arr[:], expect)
        np.testing.assert_array_equal(arr[3:11, 4:10, 1:7], expect[3:11, 4:10, 1:7])

    def check_chunks(self, name, raw_to_chunk):
        meta = read_json(os.path.join(DATA, name, "zarr.json"))
        full = np.load(os.path.join(DATA, name + ".npy"))
        cfg = meta["codecs"][0]["configuration"]
        chunk_shape = tuple(meta["chunk_grid"]["configuration"]["chunk_shape"])
        fill = np.array(meta["fill_value"], dtype=full.dtype)
        grid = [-(-s // c) for s, c in zip(full.shape, chunk_shape)]
        stored = 0
        for index in itertools.product(*(range(g) for g in grid)):
            path = os.path.join(DATA, name, "c", *map(str, index))
            block = chunk_block(full, index, chunk_shape, fill)
            ours = encode_chunk(block, fill, cfg["format"], cfg["index_data_type"], cfg.get("pointer_data_type"))
            nnz = int.from_bytes(ours[8:16], "little")
            with self.subTest(chunk=index):
                if not os.path.exists(path):
                    self.assertEqual(nnz, 0, "a missing chunk must be all fill")
                    continue
                stored += 1
                theirs = raw_to_chunk(read_bytes(path))
                self.assertEqual(ours, theirs)
                ch = decode_sparse(theirs, chunk_shape, full.dtype, cfg["format"], cfg["index_data_type"],
                                   cfg.get("pointer_data_type"))
                self.assertEqual(ch.nnz, nnz)
        self.assertGreater(stored, 0)

    def test_sp_csr_bytes(self):
        self.check_chunks("sp_csr", lambda raw: raw)

    def test_sp_coo_3d_bytes(self):
        import struct

        from numcodecs.checksum32 import CRC32C

        def strip(raw):
            body, crc = raw[:-4], raw[-4:]
            self.assertEqual(struct.unpack("<I", crc)[0], int(np.frombuffer(CRC32C().encode(body)[-4:], "<u4")[0]))
            return bytes(Zstd().decode(body))

        self.check_chunks("sp_coo_3d", strip)

    def test_spx_csr_3d_refused(self):
        with self.assertRaisesRegex(ValueError, "2-d"):
            zarr.open_array(os.path.join(DATA, "spx_csr_3d"), mode="r")

    def test_plain_zarr_refuses_sp_csr(self):
        # A zarr-python that has not imported this package: no entry point of this package
        # registers the codec. zarr_rs, when installed, registers its own (the engine decoding
        # it): the array then reads as the .npy beside it.
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        code = (
            "import importlib.util, sys, numpy as np, zarr\n"
            "try:\n"
            "    got = zarr.open_array(sys.argv[1], mode='r')[...]\n"
            "except Exception as e:\n"
            "    assert 'zarr_sparse_layout' not in sys.modules\n"
            "    print(type(e).__name__, e)\n"
            "    sys.exit(3)\n"
            "assert 'zarr_sparse_layout' not in sys.modules\n"
            "assert importlib.util.find_spec('zarr_rs') is not None\n"
            "assert np.array_equal(got, np.load(sys.argv[1] + '.npy'))\n"
            "print('read by zarr_rs sparse_layout')\n"
            "sys.exit(4)\n"
        )
        cwd = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, cwd)
        res = subprocess.run([sys.executable, "-c", code, os.path.join(DATA, "sp_csr")],
                             cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
        import importlib.util

        with_zarr_rs = importlib.util.find_spec("zarr_rs") is not None
        self.assertEqual(res.returncode, 4 if with_zarr_rs else 3, res.stdout + res.stderr)
        self.assertIn("sparse_layout", res.stdout)


class WriteRead(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)
        self.rng = np.random.default_rng(20)

    def sparse(self, shape, dtype, density, fill=0):
        out = np.full(shape, fill, dtype=dtype)
        mask = self.rng.random(shape) < density
        out[mask] = (self.rng.standard_normal(int(mask.sum())) * 50).astype(dtype)
        return out

    def test_write_read_all_formats(self):
        cases = [
            ("coo", (40, 30, 20), (16, 16, 8), "int32", "uint16", None),
            ("coo", (1000,), (300,), "float64", "uint32", None),
            ("csr", (100, 70), (30, 30), "float32", "uint16", "uint32"),
            ("csc", (100, 70), (30, 30), "complex128", "uint64", "uint64"),
        ]
        for fmt, shape, chunks, dtype, index, pointer in cases:
            with self.subTest(fmt=fmt, dtype=dtype):
                path = os.path.join(self.dir, f"{fmt}_{dtype}")
                x = self.sparse(shape, dtype, 0.05)
                codec = SparseLayoutCodec(format=fmt, index_data_type=index, pointer_data_type=pointer)
                arr = zarr.create_array(path, shape=shape, chunks=chunks, dtype=dtype, fill_value=0,
                                        serializer=codec, compressors=[ZstdCodec(level=3)])
                arr[:] = x
                meta = read_json(os.path.join(path, "zarr.json"))
                self.assertEqual(meta["codecs"][0], codec.to_dict())
                self.assertEqual(meta["codecs"][1]["name"], "zstd")
                back = zarr.open_array(path, mode="r")
                np.testing.assert_array_equal(back[:], x)
                # The stored chunk is our canonical encoding under zstd.
                first = os.path.join(path, "c", *["0"] * len(shape))
                raw = bytes(Zstd().decode(read_bytes(first)))
                block = chunk_block(x, (0,) * len(shape), chunks, np.zeros((), dtype))
                self.assertEqual(raw, encode_chunk(block, 0, fmt, index, pointer))

    def test_nan_fill_negative_zero_and_partial_writes(self):
        path = os.path.join(self.dir, "nan")
        x = np.full((50, 40), np.nan, dtype="float32")
        x[3, 4] = -0.0
        x[10, 1] = 0.0
        x[49, 39] = np.inf
        x[20:23, 30:35] = 7.5
        codec = SparseLayoutCodec(format="csr", index_data_type="uint16", pointer_data_type="uint32")
        arr = zarr.create_array(path, shape=x.shape, chunks=(16, 16), dtype="float32", fill_value=np.nan,
                                serializer=codec, compressors=[ZstdCodec(), Crc32cCodec()])
        arr[:] = x
        back = zarr.open_array(path, mode="r")[:]
        self.assertEqual(back.tobytes(), x.tobytes())
        arr[0:5, 0:5] = 1.0  # read-modify-write of a stored chunk
        x[0:5, 0:5] = 1.0
        np.testing.assert_array_equal(zarr.open_array(path, mode="r")[:], x)
        # All-fill chunks are not stored.
        present = {tuple(int(p) for p in os.path.relpath(os.path.join(r, f), os.path.join(path, "c")).split(os.sep))
                   for r, _, fs in os.walk(os.path.join(path, "c")) for f in fs}
        self.assertEqual(present, {(0, 0), (1, 1), (1, 2), (3, 2)})

    def test_negative_zero_chunk_is_stored(self):
        path = os.path.join(self.dir, "negzero")
        codec = SparseLayoutCodec(format="coo", index_data_type="uint16")
        arr = zarr.create_array(path, shape=(8,), chunks=(4,), dtype="float32", fill_value=0.0, serializer=codec,
                                compressors=None)
        x = np.zeros(8, dtype="float32")
        x[5] = -0.0
        arr[:] = x
        self.assertEqual(os.listdir(os.path.join(path, "c")), ["1"])
        back = zarr.open_array(path, mode="r")[:]
        self.assertEqual(back.tobytes(), x.tobytes())
        self.assertTrue(np.signbit(back[5]))

    def test_empty_chunks_never_stored(self):
        # Even with write_empty_chunks=True, an nnz = 0 chunk is not stored (the spec's rule).
        path = os.path.join(self.dir, "empty")
        codec = SparseLayoutCodec(format="coo", index_data_type="uint16")
        arr = zarr.create_array(path, shape=(20,), chunks=(10,), dtype="int8", fill_value=0, serializer=codec,
                                compressors=None, config={"write_empty_chunks": True})
        x = np.zeros(20, dtype="int8")
        x[15] = 3
        arr[:] = x
        self.assertEqual(os.listdir(os.path.join(path, "c")), ["1"])
        np.testing.assert_array_equal(zarr.open_array(path, mode="r")[:], x)

    def test_inside_sharding(self):
        path = os.path.join(self.dir, "sharded")
        x = self.sparse((64, 48), "float64", 0.03)
        inner = SparseLayoutCodec(format="csr", index_data_type="uint16", pointer_data_type="uint32")
        arr = zarr.create_array(path, shape=x.shape, shards=(32, 48), chunks=(16, 16), dtype="float64",
                                fill_value=0.0, serializer=inner, compressors=[ZstdCodec()])
        arr[:] = x
        meta = read_json(os.path.join(path, "zarr.json"))
        self.assertEqual(meta["codecs"][0]["name"], "sharding_indexed")
        self.assertEqual(meta["codecs"][0]["configuration"]["codecs"][0], inner.to_dict())
        back = zarr.open_array(path, mode="r")
        self.assertIsInstance(back.metadata.codecs[0], ShardingCodec)
        np.testing.assert_array_equal(back[:], x)
        np.testing.assert_array_equal(back[5:40, 7:9], x[5:40, 7:9])

    def test_corrupt_chunk_is_a_value_error(self):
        path = os.path.join(self.dir, "corrupt")
        codec = SparseLayoutCodec(format="coo", index_data_type="uint16")
        arr = zarr.create_array(path, shape=(8, 8), chunks=(8, 8), dtype="int16", fill_value=0, serializer=codec,
                                compressors=None)
        arr[2, 3] = 5
        chunk = os.path.join(path, "c", "0", "0")
        data = bytearray(read_bytes(chunk))
        data[0:4] = b"NOPE"
        with open(chunk, "wb") as f:
            f.write(data)
        with self.assertRaisesRegex(ValueError, "magic"):
            zarr.open_array(path, mode="r")[:]


if __name__ == "__main__":
    unittest.main()
