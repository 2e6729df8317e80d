"""Arrays of variable-size elements: ``string`` (read and written as NumPy object arrays of
``str``) and ``variable_length_bytes`` (of ``bytes``), against NumPy, zarr-python 3.1.6 and
xarray."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
import zarr

import zarr_rs
from zarr_rs import errors

CORPUS = pathlib.Path(__file__).resolve().parents[2] / "conformance"


def _words(rng, n):
    alphabet = list("abcdeé中 ")
    return np.array(
        ["".join(rng.choice(alphabet, size=int(k))) for k in rng.integers(0, 9, size=n)],
        dtype=object,
    )


@pytest.mark.parametrize(
    "name", ["string_1d", "string_fill_missing", "string_sharded", "string_default_codecs",
             "bytes_vlen_fill_missing", "bytes_vlen_default_codecs"]
)
def test_reads_what_zarr_python_wrote(name):
    path = str(CORPUS / "v3" / name)
    a = zarr_rs.open(path)
    want = zarr.open_array(path, mode="r")[...]
    assert a.dtype == np.dtype(object)
    got = a[...]
    assert got.shape == want.shape
    assert [x for x in got.ravel()] == [x if isinstance(x, bytes) else str(x) for x in np.asarray(want, dtype=object).ravel()]
    # a selection of every kind agrees with NumPy on the whole
    if a.ndim == 2:
        np.testing.assert_array_equal(a[1:, ::2], got[1:, ::2])
        np.testing.assert_array_equal(a.oindex[[0, -1], [1, 0]], got[[0, -1]][:, [1, 0]])
        np.testing.assert_array_equal(a.vindex[[0, 1], [1, 0]], got[[0, 1], [1, 0]])
    else:
        np.testing.assert_array_equal(a[::3], got[::3])
        np.testing.assert_array_equal(a[[2, 0]], got[[2, 0]])


def test_create_write_read_select(tmp_path, rng):
    a = zarr_rs.create_array(str(tmp_path / "s"), shape=(7, 5), chunks=(3, 2), dtype=str,
                             fill_value="-")
    assert a.dtype == np.dtype(object) and a.fill_value == "-"
    assert a.metadata["data_type"] == "string"
    want = np.full((7, 5), "-", dtype=object)
    np.testing.assert_array_equal(a[...], want)
    block = _words(rng, 12).reshape(3, 4)
    a[2:5, 1:] = block
    want[2:5, 1:] = block
    np.testing.assert_array_equal(a[...], want)
    # NumPy U and StringDType data, a scalar broadcast, a mask, points, orthogonal writes
    a[0] = np.array(["u", "vv", "www", "x", "y"])
    want[0] = ["u", "vv", "www", "x", "y"]
    a[6, :] = "z"
    want[6, :] = "z"
    mask = np.zeros((7, 5), dtype=bool)
    mask[[1, 3], [0, 4]] = True
    a[mask] = ["m1", "m2"]
    want[mask] = ["m1", "m2"]
    a.vindex[[5, 4], [0, 1]] = ["p", "q"]
    want[[5, 4], [0, 1]] = ["p", "q"]
    a.oindex[[1, 2], [2, 3]] = np.array([["a", "b"], ["c", "d"]], dtype=np.dtypes.StringDType())
    want[np.ix_([1, 2], [2, 3])] = [["a", "b"], ["c", "d"]]
    np.testing.assert_array_equal(a[...], want)
    np.testing.assert_array_equal(a[mask], want[mask])
    assert a[3, 4] == want[3, 4] and a[-1, -1] == "z"
    # zarr-python reads it the same
    z = zarr.open_array(str(tmp_path / "s"), mode="r")
    assert np.asarray(z[...], dtype=object).tolist() == want.tolist()



@pytest.mark.parametrize(
    "dtype, element, numpy_str",
    [(str, str, "|O"), ("variable_length_bytes", bytes, "|O"), ("int32", None, "<i4"),
     ("U3", None, "<U3")],
)
def test_the_engine_names_the_element_type(tmp_path, dtype, element, numpy_str):
    """The Python type of a variable-size array's elements and every array's NumPy dtype come
    from the engine (``vlen_type``, ``numpy_dtype``), not from a table of Zarr data type names
    kept in Python."""
    a = zarr_rs.create_array(str(tmp_path / "a.zarr"), shape=(2,), dtype=dtype)
    assert a._core.vlen_type is element
    assert a._core.numpy_dtype == numpy_str
    assert a.dtype == np.dtype(numpy_str)

def test_bytes_arrays(tmp_path):
    a = zarr_rs.create_array(str(tmp_path / "b"), shape=(5,), chunks=(2,), dtype=bytes,
                             fill_value=b"\x00z")
    assert a.metadata["data_type"] == "variable_length_bytes"
    assert a.fill_value == b"\x00z"
    a[1:4] = [b"", b"\xff\x00", b"abc"]
    assert a[...].tolist() == [b"\x00z", b"", b"\xff\x00", b"abc", b"\x00z"]
    a[0] = np.array(b"np", dtype="S2")
    assert a[0] == b"np"
    z = zarr.open_array(str(tmp_path / "b"), mode="r")
    assert list(z[...]) == [b"np", b"", b"\xff\x00", b"abc", b"\x00z"]


def test_append_and_prepend(tmp_path):
    a = zarr_rs.create_array(str(tmp_path / "g"), shape=(2, 2), chunks=(2, 2), dtype=str)
    a[...] = [["a", "b"], ["c", "d"]]
    assert a.append([["e", "f"]]) == (3, 2)
    assert a.append(np.array([["g"], ["h"], ["i"]]), axis=1) == (3, 3)
    assert a.prepend([["0", "1", "2"], ["3", "4", "5"]]) == (5, 3)
    assert a.domain == ((-2, 3), (0, 3))
    assert a[...].tolist() == [["0", "1", "2"], ["3", "4", "5"], ["a", "b", "g"],
                               ["c", "d", "h"], ["e", "f", "i"]]
    b = zarr_rs.open(str(tmp_path / "g"))
    assert b[...].tolist() == a[...].tolist()


def test_bad_input_leaves_the_array_unchanged(tmp_path):
    a = zarr_rs.create_array(str(tmp_path / "e"), shape=(4,), chunks=(2,), dtype=str)
    a[...] = ["w", "x", "y", "z"]
    with pytest.raises(errors.DataTypeError) as e:
        a[1:3] = [1, 2]
    assert "element 0 is a int, not str" in str(e.value)
    with pytest.raises(errors.DataTypeError):
        a[0] = b"bytes"
    with pytest.raises(errors.DataTypeError):
        a[:2] = np.arange(2)
    with pytest.raises(errors.ShapeError):
        a[:2] = ["only", "three", "values"]
    with pytest.raises(IndexError):
        a[7]
    with pytest.raises(ValueError):
        a.append([["2-d"]])
    assert a[...].tolist() == ["w", "x", "y", "z"] and a.shape == (4,)
    with pytest.raises(errors.DataTypeError):
        zarr_rs.create_array(str(tmp_path / "o"), shape=(2,), dtype=object)
    with pytest.raises(errors.DataTypeError):
        zarr_rs.create_array(str(tmp_path / "f"), shape=(2,), dtype=str, fill_value=3)


def test_corrupt_string_chunk_is_an_error(tmp_path):
    a = zarr_rs.create_array(str(tmp_path / "c"), shape=(4,), chunks=(2,), dtype=str,
                             compressors=[])
    a[...] = ["ab", "cd", "ef", "gh"]
    chunk = tmp_path / "c" / "c" / "0"
    chunk.write_bytes(chunk.read_bytes()[:-1])
    with pytest.raises(errors.ChunkError):
        a[...]
    assert a[2:].tolist() == ["ef", "gh"]


@pytest.mark.parametrize("fixture", ["labels_v3", "labels_v2"])
def test_xarray_opens_string_coordinates(fixture):
    xr = pytest.importorskip("xarray")
    path = str(CORPUS / "xarray" / fixture)
    got = xr.open_dataset(path, engine="zarr_rs")
    want = xr.open_dataset(path, engine="zarr", consolidated=True)
    xr.testing.assert_identical(got.load(), want.load())


def _string_values(rng, shape):
    n = int(np.prod(shape))
    return _words(rng, n).reshape(shape) if n else np.empty(shape, dtype=object)


def _as_lists(a):
    return np.asarray(a, dtype=object).tolist()


def test_resize_differential_against_zarr_python(tmp_path):
    """Issue 38, item 9: string arrays resized to random shapes (growing, shrinking, each axis
    on its own), chunked or sharded, Zarr v3 or v2 (of order C or F: item 10), as zarr-python
    3.1.6 resizes them: the
    same shape and values, each read by both. Then a second resize of ours against NumPy:
    positions a shrink cut come back as the fill value (zarr-python 3.1.6 keeps the old
    values of a partly kept chunk there, so this step is not compared with it)."""
    import shutil

    rng = np.random.default_rng(38)
    for case in range(240):
        ndim = int(rng.integers(1, 4))
        shape = tuple(int(n) for n in rng.integers(1, 8, size=ndim))
        chunks = tuple(int(n) for n in rng.integers(1, 5, size=ndim))
        fmt = 2 if rng.random() < 0.3 else 3
        shards = None
        if fmt == 3 and rng.random() < 0.5:
            shards = tuple(c * int(rng.integers(1, 3)) for c in chunks)
        new_shape = tuple(int(n) for n in rng.integers(0, 9, size=ndim))
        order = "F" if fmt == 2 and rng.random() < 0.5 else "C"
        label = (f"case {case}: {shape} -> {new_shape}, chunks {chunks}, shards {shards}, "
                 f"v{fmt}, order {order}")
        ours_path, theirs_path = tmp_path / f"o{case}", tmp_path / f"t{case}"
        kwargs = {"shards": shards} if shards else {}
        if fmt == 2:
            kwargs["order"] = order
        z = zarr.create_array(str(theirs_path), shape=shape, chunks=chunks, dtype=str,
                              fill_value="-", zarr_format=fmt, **kwargs)
        values = _string_values(rng, shape)
        z[...] = values
        shutil.copytree(theirs_path, ours_path)
        z.resize(new_shape)
        a = zarr_rs.open_array(str(ours_path))
        a.resize(new_shape)
        assert a.shape == z.shape == new_shape, label
        want = _as_lists(z[...])
        assert _as_lists(a[...]) == want, label
        # each reads what the other resized
        assert _as_lists(zarr.open_array(str(ours_path), mode="r")[...]) == want, label
        assert _as_lists(zarr_rs.open_array(str(theirs_path))[...]) == want, label

        # a second resize of ours, against the NumPy model
        model = np.full(new_shape, "-", dtype=object)
        keep = tuple(slice(0, min(a_, b_)) for a_, b_ in zip(shape, new_shape))
        model[keep] = values[keep]
        again = tuple(int(n) for n in rng.integers(0, 9, size=ndim))
        grown = np.full(again, "-", dtype=object)
        keep = tuple(slice(0, min(a_, b_)) for a_, b_ in zip(new_shape, again))
        grown[keep] = model[keep]
        a.resize(again)
        assert a.shape == again, label
        assert _as_lists(a[...]) == _as_lists(grown), f"{label}, then -> {again}"
        reopened = zarr_rs.open_array(str(ours_path))
        assert reopened.shape == again, label
        assert _as_lists(zarr.open_array(str(ours_path), mode="r")[...]) == _as_lists(grown), label


@pytest.mark.parametrize("ndim", [2, 3])
def test_v2_object_arrays_of_order_f(tmp_path, rng, ndim):
    """Issue 38, item 10: a v2 ``|O`` string array of order F (a ``transpose`` before the vlen
    codec: its chunks' elements in F order) as zarr-python 3.1.6 writes it: read, written in
    part (both ways), converted to v3, and each reads what the other wrote."""
    shape = (5, 4, 3)[:ndim]
    chunks = (2, 3, 2)[:ndim]
    path = str(tmp_path / "f")
    z = zarr.create_array(path, shape=shape, chunks=chunks, dtype=str, zarr_format=2,
                          order="F", fill_value="")
    want = _string_values(rng, shape)
    z[...] = want
    a = zarr_rs.open_array(path)
    assert a.metadata["codecs"][0]["name"] == "transpose"
    assert _as_lists(a[...]) == _as_lists(want)
    part = tuple(slice(1, n - 1) for n in shape)
    block = _string_values(rng, want[part].shape)
    a[part] = block
    want[part] = block
    assert _as_lists(zarr.open_array(path, mode="r")[...]) == _as_lists(want)
    assert _as_lists(a.vindex[tuple([0, n - 1] for n in shape)]) == _as_lists(
        want[tuple([0, n - 1] for n in shape)])
    z[(0,) * ndim] = "zp"
    want[(0,) * ndim] = "zp"
    assert _as_lists(zarr_rs.open_array(path)[...]) == _as_lists(want)
    # still the v2 array zarr-python made
    assert (tmp_path / "f" / ".zarray").exists() and not (tmp_path / "f" / "zarr.json").exists()


def _random_selection(rng, shape):
    """A random selection of an array of ``shape``: its kind (``basic``, ``orthogonal``,
    ``points`` or ``mask``), the key for ``zarr_rs`` and the key for NumPy. About one in ten
    has an index out of bounds."""
    out = rng.random() < 0.1
    kind = ["basic", "orthogonal", "points", "mask"][int(rng.integers(0, 4))]
    ndim = len(shape)
    if kind == "basic":
        key = []
        for n in shape:
            if rng.random() < 0.3:
                key.append(int(rng.integers(-n, n)))
            else:
                start, stop = (int(v) for v in rng.integers(-n - 2, n + 2, size=2))
                step = int(rng.choice([1, 1, 2, 3]))
                key.append(slice(start, stop, step))
        if out:
            axis = int(rng.integers(0, ndim))
            key[axis] = shape[axis] + int(rng.integers(0, 3))
        return kind, tuple(key), tuple(key)
    if kind == "orthogonal":
        lists = [
            [int(v) for v in rng.integers(-n, n, size=int(rng.integers(1, n + 2)))]
            for n in shape
        ]
        if out:
            lists[int(rng.integers(0, ndim))].append(max(shape) + 1)
        return kind, tuple(lists), np.ix_(*lists)
    if kind == "points":
        count = int(rng.integers(1, 8))
        coords = [rng.integers(-n, n, size=count) for n in shape]
        if out:
            coords[int(rng.integers(0, ndim))][0] = shape[0] + shape[-1] + 1
        return kind, tuple(coords), tuple(coords)
    mask = rng.random(shape) < 0.3
    return kind, mask, mask


def _access(a, kind, key):
    """What ``a[...]`` is for a selection of ``kind``: the array itself or its indexer."""
    return {"basic": a, "orthogonal": a.oindex, "points": a.vindex, "mask": a}[kind]


def test_string_regions_and_selections_differential_against_numpy(tmp_path):
    """Seeded: 24 random string arrays (1 to 3 dimensions, chunks of random shapes, some in
    shards, a random fill value), each through 14 random writes and reads of every selection
    kind, compared with NumPy object arrays after every step: values, shapes and, for
    selections out of bounds, IndexError on both sides (and the array unchanged). zarr-python
    reads every array the same at the end."""
    rng = np.random.default_rng(2026)
    cases = 0
    for case in range(24):
        ndim = int(rng.integers(1, 4))
        shape = tuple(int(n) for n in rng.integers(1, 9 if ndim < 3 else 5, size=ndim))
        chunks = tuple(int(rng.integers(1, n + 2)) for n in shape)
        shards = None
        if rng.random() < 0.4:
            shards = tuple(c * int(rng.integers(1, 3)) for c in chunks)
        fill = str(rng.choice(["", "-", "fill é"]))
        path = str(tmp_path / f"a{case}")
        a = zarr_rs.create_array(path, shape=shape, chunks=chunks, shards=shards, dtype=str,
                                 fill_value=fill)
        want = np.full(shape, fill, dtype=object)
        for _ in range(14):
            kind, key, np_key = _random_selection(rng, shape)
            try:
                expected = want[np_key]
            except IndexError:
                expected = IndexError
            if rng.random() < 0.5:
                # a write of random words (or one broadcast)
                if expected is IndexError:
                    value = _words(rng, 1)[0]
                else:
                    value = _words(rng, np.size(expected)).reshape(np.shape(expected))
                    if np.ndim(expected) == 0 or rng.random() < 0.2:
                        value = _words(rng, 1)[0]  # one word, broadcast
                if expected is IndexError:
                    with pytest.raises(IndexError):
                        _access(a, kind, key)[key] = value
                else:
                    _access(a, kind, key)[key] = value
                    want[np_key] = value
            elif expected is IndexError:
                with pytest.raises(IndexError):
                    _access(a, kind, key)[key]
            else:
                got = _access(a, kind, key)[key]
                assert np.shape(got) == np.shape(expected), (case, kind, key)
                assert np.asarray(got, dtype=object).tolist() == np.asarray(
                    expected, dtype=object).tolist(), (case, kind, key)
            whole = a[...]
            assert whole.shape == shape
            assert whole.tolist() == want.tolist(), (case, kind, key)
            cases += 1
        z = zarr.open_array(path, mode="r")
        assert np.asarray(z[...], dtype=object).tolist() == want.tolist(), case
    assert cases == 24 * 14
