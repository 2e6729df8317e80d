"""Arrays and groups against NumPy: creation, metadata, every kind of indexing, growth."""

from __future__ import annotations

import json
import os
import pickle
import threading

import numpy as np
import pytest

import zarr_rs
from zarr_rs import errors


def make(tmp_path, data, **kw):
    kw.setdefault("chunks", tuple(max(1, n // 3) for n in data.shape))
    a = zarr_rs.create_array(str(tmp_path / "a.zarr"), shape=data.shape, dtype=data.dtype, **kw)
    a[...] = data
    return a


DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_round_trips(tmp_path, rng, dtype):
    data = (rng.random((7, 5)) * 100).astype(dtype)
    a = make(tmp_path, data)
    assert a.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(a[...], data)
    b = zarr_rs.open(str(tmp_path / "a.zarr"), mode="r")
    np.testing.assert_array_equal(b[:], data)
    np.testing.assert_array_equal(np.asarray(b), data)


def test_metadata_properties(tmp_path):
    a = zarr_rs.create_array(
        str(tmp_path / "m.zarr"), shape=(10, 8), chunks=(2, 4), shards=(4, 8), dtype="float32",
        fill_value=1.5, dimension_names=["y", "x"], attributes={"units": "m"},
    )
    assert a.shape == (10, 8) and a.ndim == 2 and a.size == 80 and len(a) == 10
    assert a.chunks == (2, 4) and a.shards == (4, 8)
    assert a.domain == ((0, 10), (0, 8))
    assert a.fill_value == np.float32(1.5) and a.fill_value.dtype == np.float32
    assert a.dimension_names == ("y", "x")
    assert dict(a.attrs) == {"units": "m"}
    assert a.nbytes == 320
    np.testing.assert_array_equal(a[...], np.full((10, 8), 1.5, np.float32))
    assert a.nchunks == 3 and a.nchunks_initialized == 0
    a[0:4] = 2.0
    assert a.nchunks_initialized == 1
    assert a.nbytes_stored > len(a._core.metadata_json())
    info = repr(a.info)
    assert "Shard shape" in info and "(4, 8)" in info
    assert a.metadata["codecs"][0]["name"] == "sharding_indexed"


def test_attributes_persist(tmp_path):
    a = zarr_rs.create_array(str(tmp_path / "t.zarr"), shape=(3,), dtype="int8")
    a.attrs["k"] = [1, 2]
    a.attrs.update(x="y", z=None)
    del a.attrs["z"]
    b = zarr_rs.open_array(str(tmp_path / "t.zarr"), mode="r")
    assert b.attrs.asdict() == {"k": [1, 2], "x": "y"}
    with open(tmp_path / "t.zarr" / "zarr.json") as f:
        assert json.load(f)["attributes"] == {"k": [1, 2], "x": "y"}


BASIC_KEYS = [
    (Ellipsis,), (slice(None),), (3,), (-1,), (slice(2, 9),), (slice(1, 10, 3), slice(None, None, 2)),
    (Ellipsis, 4), (2, Ellipsis), (slice(-5, None), -2), (slice(8, 2),), (slice(None), slice(3, 4), 0),
    (slice(100, 200),), (0, 0, 0), (slice(None, None, 7), Ellipsis, slice(1, None, 2)),
]


@pytest.mark.parametrize("key", BASIC_KEYS, ids=[repr(k) for k in BASIC_KEYS])
def test_basic_indexing_matches_numpy(tmp_path, rng, key):
    data = rng.integers(0, 1000, size=(11, 9, 5)).astype("int32")
    a = make(tmp_path, data, chunks=(4, 4, 2))
    got = a[key]
    want = data[key]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    # writes through the same key land where NumPy puts them
    ref = data.copy()
    new = rng.integers(-50, 0, size=np.shape(want)).astype("int32")
    a[key] = new
    ref[key] = new
    np.testing.assert_array_equal(a[...], ref)


def test_scalar_and_broadcast_writes(tmp_path):
    data = np.zeros((6, 4), "float64")
    a = make(tmp_path, data)
    a[1:3] = 7
    a[:, 2] = np.arange(6)
    a[4] = [1, 2, 3, 4]
    data[1:3] = 7
    data[:, 2] = np.arange(6)
    data[4] = [1, 2, 3, 4]
    np.testing.assert_array_equal(a[...], data)


def test_orthogonal_and_masks(tmp_path, rng):
    data = rng.random((10, 8)).astype("float32")
    a = make(tmp_path, data, chunks=(3, 3))
    rows = [7, 0, 0, 3]
    mask = rng.random(8) > 0.5
    np.testing.assert_array_equal(a.oindex[rows, mask], data[np.ix_(rows, np.flatnonzero(mask))])
    np.testing.assert_array_equal(a.oindex[[-1, 2], 1:6:2], data[[-1, 2]][:, 1:6:2])
    np.testing.assert_array_equal(a.oindex[3, [1, 4]], data[3, [1, 4]])
    np.testing.assert_array_equal(a[[1, 4]], data[[1, 4]])  # one array: orthogonal
    np.testing.assert_array_equal(a[:, mask], data[:, mask])
    ref = data.copy()
    a.oindex[[0, 9], [1, 2, 7]] = np.full((2, 3), -1, "float32")
    ref[np.ix_([0, 9], [1, 2, 7])] = -1
    np.testing.assert_array_equal(a[...], ref)


def test_vindex_points_and_mask(tmp_path, rng):
    data = rng.random((10, 8)).astype("float64")
    a = make(tmp_path, data, chunks=(3, 3))
    r = np.array([[0, 9], [4, 4]])
    c = np.array([[7, 0], [1, 1]])
    np.testing.assert_array_equal(a.vindex[r, c], data[r, c])
    np.testing.assert_array_equal(a[[0, 9, 2], [7, 0, 0]], data[[0, 9, 2], [7, 0, 0]])  # NumPy: points
    np.testing.assert_array_equal(a[3, [1, 4]], data[3, [1, 4]])
    mask = data > 0.7
    np.testing.assert_array_equal(a[mask], data[mask])
    np.testing.assert_array_equal(a.vindex[mask], data[mask])
    ref = data.copy()
    a.vindex[[1, 2], [3, 4]] = [10.0, 20.0]
    ref[[1, 2], [3, 4]] = [10.0, 20.0]
    a[mask] = 0.0
    ref[mask] = 0.0
    np.testing.assert_array_equal(a[...], ref)


def test_blocks(tmp_path, rng):
    data = rng.random((10, 8)).astype("float32")
    a = make(tmp_path, data, chunks=(4, 3))
    np.testing.assert_array_equal(a.blocks[1, 2], data[4:8, 6:8])
    np.testing.assert_array_equal(a.blocks[-1], data[8:10])
    np.testing.assert_array_equal(a.blocks[0:2, 1:], data[0:8, 3:])
    a.blocks[2, 0] = np.ones((2, 3), "float32")
    data[8:10, 0:3] = 1
    np.testing.assert_array_equal(a[...], data)
    with pytest.raises(IndexError):
        a.blocks[3]
    with pytest.raises(IndexError):
        a.blocks[::2]


def test_blocks_of_an_array_of_2_to_the_40_chunks(tmp_path):
    """A block is found from its own chunk index: the others are never listed (this took
    time proportional to the number of chunks)."""
    a = zarr_rs.create_array(str(tmp_path / "big.zarr"), shape=(2**40, 3), chunks=(1, 3), dtype="uint8")
    assert a.nchunks == 2**40
    a.blocks[2**40 - 1] = np.full((1, 3), 7, "uint8")
    np.testing.assert_array_equal(a.blocks[-1], [[7, 7, 7]])
    np.testing.assert_array_equal(a.blocks[5:7, 0], np.zeros((2, 3), "uint8"))
    assert a.nchunks_initialized == 1


def test_reads_own_their_buffer(tmp_path, rng):
    data = rng.random((64, 64)).astype("float32")
    a = make(tmp_path, data, chunks=(16, 16))
    whole = a[...]
    assert whole.flags.owndata and whole.flags.c_contiguous and whole.flags.writeable
    pts = a.vindex[[1, 2], [3, 4]]
    # the engine's buffer handed over: a view of one uint8 array that owns nothing else
    assert pts.base is not None and pts.base.base is None or pts.base.flags.owndata is False


def test_writes_read_any_contiguous_buffer(tmp_path):
    a = zarr_rs.create_array(str(tmp_path / "b.zarr"), shape=(4, 4), chunks=(2, 2), dtype="uint8")
    a[...] = memoryview(bytearray(range(16))).cast("B", (4, 4))
    np.testing.assert_array_equal(a[...], np.arange(16, dtype="uint8").reshape(4, 4))
    a[...] = np.arange(16, dtype="uint8").reshape(4, 4)[::-1]  # not contiguous: copied
    np.testing.assert_array_equal(a[0], [12, 13, 14, 15])


def test_gil_is_released_during_reads(tmp_path):
    data = np.arange(2_000_000, dtype="float64").reshape(2000, 1000)
    a = make(tmp_path, data, chunks=(100, 1000))
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(1)

    t = threading.Thread(target=tick)
    t.start()
    try:
        for _ in range(5):
            a[...]
    finally:
        stop.set()
        t.join()
    assert len(ticks) > 5  # the other thread ran while the engine read


def test_append_prepend_resize(tmp_path):
    a = zarr_rs.create_array(str(tmp_path / "g.zarr"), shape=(6, 4), chunks=(4, 4), dtype="int32")
    a[...] = 1
    assert a.prepend(np.full((3, 4), 2, "int32")) == (9, 4)
    assert a.domain == ((-3, 6), (0, 4))
    assert a.append(np.full((2, 4), 3, "int32"), axis=0) == (11, 4)
    want = np.concatenate([np.full((3, 4), 2), np.full((6, 4), 1), np.full((2, 4), 3)]).astype("int32")
    np.testing.assert_array_equal(a[...], want)
    b = zarr_rs.open(str(tmp_path / "g.zarr"), mode="r")
    assert b.domain == ((-3, 8), (0, 4))
    np.testing.assert_array_equal(b[...], want)
    assert a.prepend(np.zeros((11, 1), "int32"), axis=-1) == (11, 5)
    a.resize(5, 5)
    assert a.shape == (5, 5)
    np.testing.assert_array_equal(a[:, 1:], want[:5])
    reg = a.to_regular(str(tmp_path / "regular.zarr"))
    assert reg.domain == ((0, 5), (0, 5))
    np.testing.assert_array_equal(reg[...], a[...])
    assert "regular_bounded" in reg.attrs


def test_create_with_lower_bound(tmp_path):
    a = zarr_rs.create_array(str(tmp_path / "lb.zarr"), shape=(5,), chunks=(2,), dtype="int16", lower_bound=[-3])
    a[...] = np.arange(5, dtype="int16")
    assert a.domain == ((-3, 2),)
    np.testing.assert_array_equal(a.blocks[0], a[0 : a._core.block_spans(0, 1)[0][1]])


def test_compressors_and_codecs(tmp_path, rng):
    data = rng.integers(0, 10, size=(50, 40)).astype("uint16")
    for i, comp in enumerate([None, [], "gzip", {"name": "zstd", "configuration": {"level": 5, "checksum": False}},
                              [{"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 2, "blocksize": 0}}]]):
        a = zarr_rs.create_array(str(tmp_path / f"c{i}.zarr"), shape=data.shape, chunks=(16, 16), dtype="uint16",
                                 compressors=comp) if comp != "gzip" else zarr_rs.create_array(
            str(tmp_path / f"c{i}.zarr"), shape=data.shape, chunks=(16, 16), dtype="uint16",
            compressors={"name": "gzip", "configuration": {"level": 1}})
        a[...] = data
        np.testing.assert_array_equal(zarr_rs.open(str(tmp_path / f"c{i}.zarr"))[...], data)


def test_groups(tmp_path):
    root = zarr_rs.open_group(str(tmp_path / "h.zarr"), mode="w", attributes={"title": "t"})
    sub = root.create_group("sub", attributes={"a": 1})
    x = sub.create_array("x", shape=(4,), dtype="float32", chunks=(2,))
    x[...] = [1, 2, 3, 4]
    root.create_array("y", shape=(2, 2), dtype="int8")
    assert [n for n, _ in root.members()] == ["sub", "y"]
    assert root.array_keys() == ["y"] and root.group_keys() == ["sub"]
    assert isinstance(root["sub"], zarr_rs.Group)
    np.testing.assert_array_equal(root["sub/x"][...], [1, 2, 3, 4])
    assert root["sub/x"].path == "sub/x"
    assert "sub" in root and "nope" not in root
    assert root.attrs["title"] == "t" and root["sub"].attrs["a"] == 1
    tree = root.tree()
    assert "sub" in tree and "x (4,) float32" in tree
    again = zarr_rs.open(str(tmp_path / "h.zarr"), mode="r")
    assert isinstance(again, zarr_rs.Group) and len(again) == 2
    g2 = zarr_rs.open_group(str(tmp_path / "new.zarr"), mode="a")
    assert len(g2) == 0
    assert isinstance(zarr_rs.open(str(tmp_path / "new2.zarr"), mode="a"), zarr_rs.Group)
    with pytest.raises(errors.NodeExistsError):
        zarr_rs.open_group(str(tmp_path / "h.zarr"), mode="w-")
    assert len(zarr_rs.open_group(str(tmp_path / "h.zarr"), mode="w")) == 0


def test_pickle_reopens_by_location(tmp_path):
    a = make(tmp_path, np.arange(12, dtype="int64").reshape(3, 4))
    b = pickle.loads(pickle.dumps(a))
    assert len(pickle.dumps(a)) < 300
    np.testing.assert_array_equal(b[...], a[...])



def test_pickled_group_keeps_its_path_and_mode(tmp_path):
    """A group below the location, opened read-only, unpickles as that group, read-only: it
    unpickled as the root group opened read-write (the path and mode went as pickle state,
    which the path property ignored)."""
    root = zarr_rs.create_group(str(tmp_path / "g.zarr"))
    root.create_group("sub").create_array("x", shape=(2,), dtype="int8")
    g = zarr_rs.open_group(str(tmp_path / "g.zarr"), mode="r")["sub"]
    u = pickle.loads(pickle.dumps(g))
    assert (u.path, u.read_only, list(u)) == ("sub", True, ["x"])
    with pytest.raises(errors.ReadOnlyError):
        u.attrs["k"] = 1
    w = pickle.loads(pickle.dumps(zarr_rs.open_group(str(tmp_path / "g.zarr"), path="sub")))
    assert (w.path, w.read_only) == ("sub", False)

def test_file_urls(tmp_path):
    url = "file://" + str(tmp_path / "u.zarr")
    a = zarr_rs.create_array(url, shape=(3,), dtype="uint8")
    a[...] = [1, 2, 3]
    np.testing.assert_array_equal(zarr_rs.open(url, mode="r")[...], [1, 2, 3])
    assert os.path.exists(tmp_path / "u.zarr" / "zarr.json")


@pytest.mark.s3
def test_s3_round_trip(s3_url, rng):
    data = rng.random((40, 30)).astype("float32")
    a = zarr_rs.create_array(s3_url, shape=data.shape, chunks=(16, 16), dtype="float32")
    a[...] = data
    b = zarr_rs.open(s3_url, mode="r")
    np.testing.assert_array_equal(b[...], data)
    np.testing.assert_array_equal(b.oindex[[1, 39], 2:5], data[[1, 39], 2:5])
    b2 = zarr_rs.open(s3_url, mode="r+")
    b2.prepend(np.ones((5, 30), "float32"))
    np.testing.assert_array_equal(zarr_rs.open(s3_url, mode="r")[:5], 1)


def test_arrays_without_elements(tmp_path):
    """Zero-size and 0-d arrays: block selections and vindex refuse with IndexError, as
    zarr-python's do (a NumPy reshape error escaped), and to_dask gives the empty array."""
    z = zarr_rs.create_array(str(tmp_path / "z.zarr"), shape=(0, 4), chunks=(2, 2), dtype="int32")
    with pytest.raises(IndexError):
        z.blocks[0]
    with pytest.raises(IndexError):
        z.blocks[:]
    assert z.to_dask().compute().shape == (0, 4)
    assert z.to_dask().sum().compute() == 0
    e = zarr_rs.create_array(str(tmp_path / "e.zarr"), shape=(), chunks=(), dtype="int32")
    e[...] = 5
    with pytest.raises(IndexError):
        e.vindex[()]
    assert e[()] == 5 and e.oindex[()] == 5


def test_huge_reads_raise_memory_error_not_abort(tmp_path):
    """Reading an array of 2^40 strings (or ints) under a 4 GiB address-space limit raises
    MemoryError; the interpreter used to abort while listing the chunks the read meets."""
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(f"""
        import resource, zarr_rs
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
        for i, (dtype, chunk) in enumerate([(str, 2**20), (str, 2**10), ("int32", 2**10)]):
            a = zarr_rs.create_array({str(tmp_path)!r} + f"/{{i}}.zarr", shape=(2**40,),
                                     chunks=(chunk,), dtype=dtype)
            try:
                a[...]
            except MemoryError:
                print("MemoryError")
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["MemoryError"] * 3


def test_huge_selections_raise_memory_error_not_panic(tmp_path):
    """A strided or block read of 2^39 ints under a 4 GiB address-space limit raises
    MemoryError: the buffer of a selection that is not a region was allocated by a call that
    panics when NumPy cannot give it (a PanicException)."""
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(f"""
        import resource, zarr_rs
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
        a = zarr_rs.create_array({str(tmp_path / "a.zarr")!r}, shape=(2**40,), chunks=(2**10,),
                                 dtype="int32")
        for get in [lambda: a[::2], lambda: a[1::3], lambda: a.blocks[1:]]:
            try:
                get()
            except MemoryError:
                print("MemoryError")
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["MemoryError"] * 3, out.stderr[-2000:]


@pytest.mark.parametrize("dtype", [str, bytes, "int32"])
def test_selections_of_an_axis_of_length_zero(tmp_path, dtype):
    """A string array with an axis of length 0 failed on strided and orthogonal selections
    (the other axes' positions were looked up in a chunk that does not exist)."""
    a = zarr_rs.create_array(str(tmp_path / "z.zarr"), shape=(0, 4), chunks=(2, 2), dtype=dtype)
    assert a[:, ::2].shape == (0, 2)
    assert a.oindex[:, [0, 3]].shape == (0, 2)
    assert a[0:0, 1:3].shape == (0, 2)
    a[:, ::2] = np.empty((0, 2), dtype=object if dtype in (str, bytes) else dtype)
