"""Seeded differential test: string and bytes arrays copied to other layouts.

Random string (and bytes) arrays, some grown in front, are copied with ``to_regular`` and with
``zarr convert`` into new chunk shapes, and written from Dask and read back through it; each copy must hold the same
elements as the source and as a NumPy mirror, and zarr-python 3.1.6 must read the regular
copy as the same elements. A copy that fails leaves nothing behind.
"""

from __future__ import annotations

import os
import subprocess

import dask.array as da
import numpy as np
import pytest
import zarr

import zarr_rs
from zarr_rs import errors


def _words(rng: np.random.Generator, n: int, kind: type) -> np.ndarray:
    alphabet = ["", "a", "é", "zz", "\u00ff", "日本", "x" * 9, "nul\x00", " "]
    out = np.empty(n, dtype=object)
    for i in range(n):
        w = "".join(rng.choice(alphabet, size=int(rng.integers(0, 3))))
        out[i] = w if kind is str else w.encode()
    return out


def test_string_copies_match_the_source(tmp_path, zarr_cli):
    rng = np.random.default_rng(38)
    for case in range(60):
        kind = str if case % 3 else bytes
        rank = int(rng.integers(1, 3))
        shape = tuple(int(n) for n in rng.integers(1, 7, size=rank))
        chunks = tuple(int(c) for c in rng.integers(1, 5, size=rank))
        data = _words(rng, int(np.prod(shape)), kind).reshape(shape)
        loc = str(tmp_path / f"src{case}.zarr")
        a = zarr_rs.create_array(loc, shape=shape, chunks=chunks, dtype=kind)
        a[...] = data
        mirror = data
        if rng.random() < 0.6:
            front = _words(rng, int(np.prod((2,) + shape[1:])), kind).reshape((2,) + shape[1:])
            a.prepend(front)
            mirror = np.concatenate([front, data])
        where = f"case {case} ({kind.__name__}, shape {a.shape}, chunks {chunks})"
        np.testing.assert_array_equal(a[...], mirror, err_msg=where)

        regular = a.to_regular(str(tmp_path / f"reg{case}.zarr"))
        np.testing.assert_array_equal(regular[...], mirror, err_msg=f"{where}: to_regular")
        zp = zarr.open_array(str(tmp_path / f"reg{case}.zarr"), mode="r")[...]
        assert [bytes(x) if kind is bytes else x for x in zp.ravel()] == list(mirror.ravel()), where

        new_chunks = tuple(int(c) for c in rng.integers(1, 6, size=rank))
        copy = zarr_rs.from_dask(
            da.from_array(mirror, chunks=new_chunks), str(tmp_path / f"dask{case}.zarr"),
            dtype=kind,
        )
        np.testing.assert_array_equal(copy[...], mirror, err_msg=f"{where}: from_dask")
        np.testing.assert_array_equal(copy.to_dask().compute(), mirror, err_msg=f"{where}: to_dask")

        out = str(tmp_path / f"conv{case}.zarr")
        args = ["convert", loc, out, "--chunks", ",".join(map(str, new_chunks))]
        if rng.random() < 0.5:
            args.append("--to-regular")
        subprocess.run([zarr_cli, *args], check=True, capture_output=True)
        np.testing.assert_array_equal(
            zarr_rs.open_array(out)[...], mirror, err_msg=f"{where}: zarr {' '.join(args)}"
        )


def test_a_failed_to_regular_leaves_nothing(tmp_path):
    """A corrupt chunk stops the copy: the destination is removed, not left reading as ""."""
    loc = str(tmp_path / "s.zarr")
    a = zarr_rs.create_array(loc, shape=(4,), chunks=(2,), dtype=str)
    a[...] = np.array(["a", "b", "c", "d"], dtype=object)
    a.prepend(np.array(["front"], dtype=object))
    chunk = tmp_path / "s.zarr" / "c" / "1"  # of c/-1, c/0, c/1
    assert chunk.is_file()
    chunk.write_bytes(b"\x01\x02")
    with pytest.raises(errors.ChunkError):
        a.to_regular(str(tmp_path / "copy.zarr"))
    left = list((tmp_path / "copy.zarr").rglob("*")) if os.path.exists(tmp_path / "copy.zarr") else []
    # nothing but the lock files conditional writes leave (listings never show them)
    assert not [p for p in left if p.is_file() and not p.name.startswith(".tmp-")], left
