"""Bad input raises the right exception (a zarr_rs.ZarrError that is also the built-in one a
Python user catches) and leaves the array unchanged."""

from __future__ import annotations

import glob
import os

import numpy as np
import pytest

import zarr_rs
from zarr_rs import errors


@pytest.fixture
def arr(tmp_path):
    a = zarr_rs.create_array(str(tmp_path / "e.zarr"), shape=(8, 6), chunks=(4, 3), dtype="int32")
    a[...] = np.arange(48, dtype="int32").reshape(8, 6)
    return a


def unchanged(a):
    np.testing.assert_array_equal(
        zarr_rs.open(a.store_location, mode="r")[...], np.arange(48, dtype="int32").reshape(8, 6)
    )


def test_missing_paths(tmp_path):
    for call in (
        lambda: zarr_rs.open(str(tmp_path / "nope.zarr"), mode="r"),
        lambda: zarr_rs.open_array(str(tmp_path / "nope.zarr")),
        lambda: zarr_rs.open_group(str(tmp_path / "nope.zarr"), mode="r+"),
    ):
        with pytest.raises(errors.NodeNotFoundError) as e:
            call()
        assert isinstance(e.value, KeyError) and isinstance(e.value, FileNotFoundError)
        assert isinstance(e.value, zarr_rs.ZarrError)
    assert not os.path.exists(tmp_path / "nope.zarr")  # reading creates nothing


def test_missing_child(tmp_path):
    g = zarr_rs.open_group(str(tmp_path / "g.zarr"), mode="w")
    with pytest.raises(KeyError):
        g["missing"]


def test_wrong_node_type(tmp_path, arr):
    with pytest.raises(errors.NodeTypeError):
        zarr_rs.open_group(arr.store_location, mode="r")
    zarr_rs.open_group(str(tmp_path / "grp.zarr"), mode="w")
    with pytest.raises(ValueError):
        zarr_rs.open_array(str(tmp_path / "grp.zarr"), mode="r")


def test_out_of_bounds(arr):
    for key in [(8,), (0, -7), (slice(None), slice(None), 0)]:
        with pytest.raises(IndexError):
            arr[key]
        with pytest.raises(errors.BoundsError):
            arr[key] = 1
    with pytest.raises(IndexError):
        arr.oindex[[0, 9], :]
    with pytest.raises(IndexError):
        arr.vindex[[0, 1], [0, 6]]
    with pytest.raises(IndexError):
        arr.oindex[np.ones(5, bool), :]
    with pytest.raises(IndexError):
        arr[::-1]
    unchanged(arr)


def test_shape_mismatch(arr):
    with pytest.raises(errors.ShapeError) as e:
        arr[0:2] = np.ones((3, 6), "int32")
    assert isinstance(e.value, ValueError)
    with pytest.raises(ValueError):
        arr.append(np.ones((2, 5), "int32"))
    with pytest.raises(ValueError):
        arr.prepend(np.ones((2, 6, 1), "int32"))
    unchanged(arr)
    assert arr.shape == (8, 6) and arr.domain == ((0, 8), (0, 6))


def test_wrong_dtype(arr):
    for bad in (np.full((8, 6), 1.5), np.full((8, 6), "x"), np.ones((8, 6), complex)):
        with pytest.raises(errors.DataTypeError) as e:
            arr[...] = bad
        assert isinstance(e.value, TypeError) and isinstance(e.value, ValueError)
    with pytest.raises(errors.DataTypeError):
        zarr_rs.create_array(arr.store_location + "2", shape=(2,), dtype=object)
    unchanged(arr)


def test_read_only(arr):
    ro = zarr_rs.open(arr.store_location, mode="r")
    with pytest.raises(errors.ReadOnlyError) as e:
        ro[0] = 5
    assert isinstance(e.value, PermissionError)
    with pytest.raises(PermissionError):
        ro.attrs["x"] = 1
    with pytest.raises(PermissionError):
        ro.append(np.ones((1, 6), "int32"))
    unchanged(arr)


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError):
        zarr_rs.create_array(str(tmp_path / "x.zarr"), shape=(4,), chunks=(2, 2), dtype="int8")
    with pytest.raises(ValueError):
        zarr_rs.create_array(str(tmp_path / "x.zarr"), shape=(4,), dtype="int8", sparse="dia")
    with pytest.raises(ValueError):
        zarr_rs.create_array(str(tmp_path / "x.zarr"), shape=(4,), dtype="int8", compressors=[{"name": "nope"}])
    with pytest.raises(ValueError):
        zarr_rs.open(str(tmp_path), mode="x")
    with pytest.raises(ValueError):
        zarr_rs.open("ftp://host/x")
    with pytest.raises(FileExistsError):
        zarr_rs.create_array(str(tmp_path / "y.zarr"), shape=(1,), dtype="int8")
        zarr_rs.create_array(str(tmp_path / "y.zarr"), shape=(1,), dtype="int8")


def test_corrupt_chunk_and_metadata(arr):
    path = arr.store_location
    chunk = sorted(glob.glob(os.path.join(path, "c", "*", "*")))[0]
    with open(chunk, "r+b") as f:
        f.write(b"\x00garbage\xff" * 3)
    with pytest.raises(errors.ChunkError) as e:
        arr[...]
    assert isinstance(e.value, ValueError) and "c/" in str(e.value)
    np.testing.assert_array_equal(arr[4:8, 3:6], np.arange(48).reshape(8, 6)[4:8, 3:6])
    with open(os.path.join(path, "zarr.json"), "w") as f:
        f.write('{"zarr_format": 3, "node_type": "array", "shape": "x"}')
    with pytest.raises(errors.MetadataError) as e:
        zarr_rs.open(path)
    assert isinstance(e.value, ValueError)


def test_sparse_calls_on_dense_arrays(arr):
    with pytest.raises(errors.UnsupportedError):
        arr.nnz()
    with pytest.raises(ValueError):
        arr.read_csr()


def test_engine_raises_the_classes_of_errors_py(tmp_path, monkeypatch):
    """The engine raises the very classes of zarr_rs.errors, which it holds from its import:
    rebinding a name in the module afterwards changes nothing (no lookup by name at a raise)."""
    originals = {name: getattr(errors, name) for name in errors.__all__}

    class Impostor(Exception):
        pass

    for name in errors.__all__:
        monkeypatch.setattr(errors, name, Impostor)
    with pytest.raises(originals["NodeNotFoundError"]) as e:
        zarr_rs.open_array(str(tmp_path / "nope.zarr"), mode="r")
    assert type(e.value) is originals["NodeNotFoundError"]
    a = zarr_rs.create_array(str(tmp_path / "a.zarr"), shape=(4,), chunks=(2,), dtype="int32")
    with pytest.raises(originals["BoundsError"]) as e:
        a.blocks[5]
    assert type(e.value) is originals["BoundsError"]
    assert isinstance(e.value, IndexError)
