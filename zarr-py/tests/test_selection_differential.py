"""Seeded differential tests of indexing against zarr-python 3.1.6 and NumPy.

Random keys (ints, slices, integer and boolean lists and arrays, Ellipsis, NumPy scalars,
out-of-range and malformed items) go through ``a[key]``, ``a.oindex[key]`` and
``a.vindex[key]`` of a zarr_rs array and of a zarr-python array holding the same data. Where
zarr-python answers, zarr_rs must give the same values and shape; where zarr-python refuses,
zarr_rs must refuse with an exception of the same built-in family (IndexError, ValueError,
TypeError). Writes through the same keys must change the same elements. Where zarr-python
3.1.6 fails by a defect of its own (``oindex`` with Ellipsis beside an index array), zarr_rs is
checked against NumPy's outer indexing instead.

Values written through Python scalars and lists follow NumPy's conversion rules, as
zarr-python's do: an int out of the range of the array's type raises OverflowError.
"""

from __future__ import annotations

import numpy as np
import pytest
import zarr

import zarr_rs

SHAPE = (5, 6, 7)
CHUNKS = (2, 3, 4)
FAMILIES = (IndexError, ValueError, TypeError)


def _family(exc: BaseException) -> type | None:
    for f in FAMILIES:
        if isinstance(exc, f):
            return f
    return None


def _run(f):
    try:
        return np.asarray(f()), None
    except Exception as e:  # noqa: BLE001 - the exception itself is what is compared
        return None, e


# how often each kind of item is drawn: mostly valid items, so that most keys are answered
_KINDS = np.array([4, 2, 3, 2, 3, 2, 1, 2, 2, 0.5, 2, 0.5])


def _rand_item(rng: np.random.Generator, n: int):
    kind = rng.choice(len(_KINDS), p=_KINDS / _KINDS.sum())
    if kind == 0:
        return int(rng.integers(-n, n + (rng.random() < 0.1)))  # sometimes out of bounds
    if kind == 1:
        return np.int64(rng.integers(-n, n))
    if kind in (2, 3):
        start = rng.choice([None, int(rng.integers(-n - 2, n + 2))])
        stop = rng.choice([None, int(rng.integers(-n - 2, n + 2))])
        step = rng.choice([None, 1, 2, 3, -1] if kind == 3 else [None, 1])
        return slice(start, stop, step)
    if kind == 4:
        return [int(i) for i in rng.integers(-n, n, size=rng.integers(1, 4))]
    if kind == 5:
        return rng.integers(0, n, size=rng.integers(0, 4))
    if kind == 6:
        return rng.integers(0, n, size=(2, 2))
    if kind == 7:
        return rng.random(n) < 0.5
    if kind == 8:
        return [bool(b) for b in rng.random(n) < 0.5]
    if kind == 9:
        return rng.random(n + 1) < 0.5  # a mask of the wrong length
    if kind == 10:
        return Ellipsis
    return [int(i) for i in rng.integers(n, n + 3, size=2)]  # out of bounds


def _rand_key(rng: np.random.Generator):
    nitems = int(rng.choice([1, 2, 3, 3, 3, 3, 4]))
    items = []
    for d in range(nitems):
        items.append(_rand_item(rng, SHAPE[min(d, len(SHAPE) - 1)]))
    if rng.random() < 0.05:
        return rng.random(SHAPE) < 0.3  # a full mask
    if nitems == 1 and rng.random() < 0.5:
        return items[0]
    return tuple(items)


def _outer(data: np.ndarray, key) -> np.ndarray:
    """NumPy's outer (orthogonal) indexing of ``data``: per axis an int, a slice, positions or a
    mask, Ellipsis expanded."""
    items = list(key) if isinstance(key, tuple) else [key]
    if any(k is Ellipsis for k in items):
        at = next(i for i, k in enumerate(items) if k is Ellipsis)
        items[at : at + 1] = [slice(None)] * (data.ndim - len(items) + 1)
    items += [slice(None)] * (data.ndim - len(items))
    drop = [d for d, k in enumerate(items) if isinstance(k, (int, np.integer))]
    per_axis = []
    for k, n in zip(items, data.shape):
        if isinstance(k, (int, np.integer)):
            k = [k]
        elif isinstance(k, slice):
            k = np.arange(n)[k]
        k = np.asarray(k)
        if k.dtype == bool:
            if k.shape != (n,):
                raise IndexError("mask length")
            k = np.nonzero(k)[0]
        if k.ndim != 1:
            raise IndexError("orthogonal indexing takes 1-d arrays")
        if k.size and (k.min() < -n or k.max() >= n):
            raise IndexError("out of bounds")  # NumPy skips the check when the result is empty
        per_axis.append(k)
    return data[np.ix_(*per_axis)].squeeze(axis=tuple(drop)) if drop else data[np.ix_(*per_axis)]


def _zarr_python_crashed(exc: BaseException | None) -> bool:
    """zarr-python 3.1.6's ``oindex`` fails on Ellipsis beside an index array with NumPy's
    "truth value of an array ... is ambiguous": a defect, not a refusal. Those keys are checked
    against NumPy's outer indexing instead."""
    return isinstance(exc, ValueError) and "truth value of an" in str(exc)


@pytest.fixture
def pair(tmp_path):
    data = np.arange(np.prod(SHAPE), dtype="int32").reshape(SHAPE)
    rs = zarr_rs.create_array(str(tmp_path / "rs.zarr"), shape=SHAPE, chunks=CHUNKS, dtype="int32")
    rs[...] = data
    zp = zarr.create_array(
        zarr.storage.MemoryStore(), shape=SHAPE, chunks=CHUNKS, dtype="int32"
    )
    zp[...] = data
    return data, rs, zp


def _indexer(a, mode):
    return a if mode == "basic" else getattr(a, mode)


def test_reads_and_writes_match_zarr_python(pair):
    data, rs, zp = pair
    ids = zarr.create_array(zarr.storage.MemoryStore(), shape=SHAPE, chunks=CHUNKS, dtype="int32")
    ids[...] = np.arange(data.size, dtype="int32").reshape(SHAPE)
    rng = np.random.default_rng(20261207)
    checked = {"answered": 0, "refused": 0, "answered by NumPy": 0}
    for case in range(450):
        key = _rand_key(rng)
        mode = ["basic", "oindex", "vindex"][case % 3]
        want, want_exc = _run(lambda: _indexer(zp, mode)[key])
        got, got_exc = _run(lambda: _indexer(rs, mode)[key])
        where = f"case {case}: {mode}[{key!r}]"
        if _zarr_python_crashed(want_exc):
            if mode != "oindex":
                assert got_exc is not None, f"{where}: zarr-python fails, zarr_rs gives {got!r}"
                continue
            want, want_exc = _run(lambda: _outer(data, key))
            if want_exc is not None:
                assert got_exc is not None, f"{where}: NumPy refuses, zarr_rs gives {got!r}"
                continue
            if got_exc is not None:
                # zarr-python refuses negative steps (NegativeStepError), so may zarr_rs
                negative = any(isinstance(k, slice) and (k.step or 1) < 0 for k in key)
                assert negative and isinstance(got_exc, IndexError), f"{where}: {got_exc!r}"
                continue
            np.testing.assert_array_equal(got, want, err_msg=f"{where} against NumPy")
            assert got.shape == want.shape, where
            checked["answered by NumPy"] += 1
            continue
        if want_exc is not None:
            assert got_exc is not None, f"{where}: zarr-python raises {want_exc!r}, zarr_rs gives {got!r}"
            assert _family(got_exc) is _family(want_exc), (
                f"{where}: zarr-python raises {want_exc!r}, zarr_rs {got_exc!r}"
            )
            checked["refused"] += 1
            continue
        assert got_exc is None, f"{where}: zarr-python gives shape {want.shape}, zarr_rs raises {got_exc!r}"
        assert got.shape == want.shape, f"{where}: shape {got.shape}, zarr-python {want.shape}"
        np.testing.assert_array_equal(got, want, err_msg=where)
        checked["answered"] += 1
        # the same key as a write: the same elements change (where no element is selected
        # twice: which of two values lands there differs between zarr-python and NumPy)
        if np.unique(_indexer(ids, mode)[key]).size != want.size:
            continue
        value = rng.integers(-1000, 1000, size=want.shape).astype("int32")
        _, zp_exc = _run(lambda: _indexer(zp, mode).__setitem__(key, value))
        _, rs_exc = _run(lambda: _indexer(rs, mode).__setitem__(key, value))
        assert _family(rs_exc) is _family(zp_exc), f"{where} write: zarr-python {zp_exc!r}, zarr_rs {rs_exc!r}"
        data = zp[...]
        np.testing.assert_array_equal(rs[...], data, err_msg=f"{where} write")
    # the random keys reach both outcomes often
    assert checked["answered"] > 150 and checked["refused"] > 50, checked


def test_two_index_arrays_with_a_slice_are_refused(pair):
    """``a[[0, 2], [1, 3], :]``: NumPy would broadcast the two lists (shape (2, 7)), zarr-python
    refuses; it was read as an orthogonal selection (shape (2, 2, 7)) and written to 28
    elements instead of 14."""
    _, rs, zp = pair
    with pytest.raises(IndexError):
        zp[[0, 2], [1, 3], :]
    with pytest.raises(IndexError):
        rs[[0, 2], [1, 3], :]
    before = rs[...]
    with pytest.raises(IndexError):
        rs[[0, 2], [1, 3], :] = 0
    np.testing.assert_array_equal(rs[...], before)


def test_an_int_and_a_mask_are_orthogonal(pair):
    data, rs, _ = pair
    mask = np.array([True, False, True, False, False, True])
    np.testing.assert_array_equal(rs[1, mask, 2], data[1, mask, 2])
    np.testing.assert_array_equal(rs[1, mask], data[1, mask])
    rows = np.array([True, False, True, False, True])
    np.testing.assert_array_equal(rs[rows, 2, 3], data[[0, 2, 4], 2, 3])


@pytest.mark.parametrize(
    "dtype, value",
    [("uint8", -1), ("uint8", 300), ("int8", 128), ("int16", [1, 40000]), ("uint64", -1)],
)
def test_python_ints_out_of_range_raise_overflow(tmp_path, dtype, value):
    a = zarr_rs.create_array(str(tmp_path / "a.zarr"), shape=(4,), chunks=(2,), dtype=dtype)
    key = slice(0, 2) if isinstance(value, list) else 0
    with pytest.raises(OverflowError):
        a[key] = value
    np.testing.assert_array_equal(a[...], np.zeros(4, dtype=dtype))
    # NumPy integers and arrays keep NumPy's assignment (a cast), as zarr-python's do
    a[0:2] = np.array([1, 2], dtype="int64")
    np.testing.assert_array_equal(a[0:2], [1, 2])


@pytest.mark.parametrize(
    "dtype, fill, exc",
    [("int8", 300, OverflowError), ("uint8", -1, OverflowError), ("int16", 1.5, TypeError),
     ("uint16", np.int64(70000), OverflowError)],
)
def test_fill_values_out_of_range_are_refused(tmp_path, dtype, fill, exc):
    with pytest.raises(exc):
        zarr_rs.create_array(str(tmp_path / "a.zarr"), shape=(4,), chunks=(2,), dtype=dtype, fill_value=fill)
    a = zarr_rs.create_array(str(tmp_path / "b.zarr"), shape=(4,), chunks=(2,), dtype=dtype, fill_value=2.0)
    assert a.fill_value == 2


def test_scalar_writes_differential(tmp_path):
    """Python scalars of every kind written to arrays of every integer type: zarr_rs stores
    what zarr-python stores, or both raise OverflowError."""
    rng = np.random.default_rng(5)
    dtypes = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
    for i in range(200):
        dtype = dtypes[i % len(dtypes)]
        info = np.iinfo(dtype)
        value = int(rng.choice([info.min - 1, info.min, 0, info.max, info.max + 1,
                                int(rng.integers(-(2**40), 2**40))]))
        zp = zarr.create_array(zarr.storage.MemoryStore(), shape=(2,), chunks=(2,), dtype=dtype)
        rs = zarr_rs.create_array(str(tmp_path / f"{i}.zarr"), shape=(2,), chunks=(2,), dtype=dtype)
        _, zp_exc = _run(lambda: zp.__setitem__(0, value))
        _, rs_exc = _run(lambda: rs.__setitem__(0, value))
        assert type(rs_exc) is type(zp_exc) or (
            isinstance(rs_exc, OverflowError) and isinstance(zp_exc, OverflowError)
        ), f"{value} -> {dtype}: zarr-python {zp_exc!r}, zarr_rs {rs_exc!r}"
        np.testing.assert_array_equal(rs[...], zp[...], err_msg=f"{value} -> {dtype}")


# ---- block selections (``a.blocks[key]``) ----

# shapes with partial edge chunks, one chunk per axis, and axes without elements
_BLOCK_CASES = [
    ((10,), (4,)), ((8,), (4,)), ((5, 7), (2, 3)), ((6, 5, 4), (4, 2, 3)),
    ((0, 4), (2, 2)), ((4, 0), (2, 2)), ((3,), (5,)),
]


def _rand_block_item(rng: np.random.Generator, n: int):
    """One item of a block key for an axis of ``n`` chunks: ints (some out of range), NumPy
    ints, slices (some starting outside, some with a step), Ellipsis, or a list (refused)."""
    m = max(n, 1)
    kind = rng.choice(6, p=[0.3, 0.1, 0.4, 0.08, 0.07, 0.05])
    if kind == 0:
        return int(rng.integers(-m - 1, m + 2))
    if kind == 1:
        return np.int64(rng.integers(-m, m))
    if kind == 2:
        def bound():
            return None if rng.random() < 0.3 else int(rng.integers(-m - 2, m + 3))
        return slice(bound(), bound(), rng.choice([None, None, 1, 2]))
    if kind == 3:
        return Ellipsis
    if kind == 4:
        return slice(None)
    return [0]


def _per_axis(key, ndim: int) -> list:
    """The item of a block key along each axis (``slice(None)`` for a full one)."""
    items = list(key) if isinstance(key, tuple) else [key]
    if any(k is Ellipsis for k in items):
        at = next(i for i, k in enumerate(items) if k is Ellipsis)
        items[at : at + 1] = [slice(None)] * (ndim - len(items) + 1)
    return items + [slice(None)] * (ndim - len(items))


def _blocks_by_numpy(data: np.ndarray, key, chunks) -> np.ndarray:
    """The elements of the chunks a block key names, chunk indices taken as NumPy takes
    positions (an int is one chunk and keeps its axis; slices clamp)."""
    per_axis = []
    for k, n, c in zip(_per_axis(key, data.ndim), data.shape, chunks):
        ids = np.arange(-(-n // c))
        ids = ids[[k]] if isinstance(k, (int, np.integer)) else ids[k]
        per_axis.append(np.concatenate([np.arange(i * c, min(i * c + c, n)) for i in ids] or [np.arange(0)]).astype(int))
    return data[np.ix_(*per_axis)]


def _zarr_python_wraps_twice(key, shape, chunks) -> bool:
    """zarr-python 3.1.6's ``blocks`` adds the number of chunks to a negative slice end, then
    multiplies it by the chunk length and lets the slice wrap it again: an end before the first
    block (``blocks[:-4]`` of 3 blocks) selects a part of a chunk, not nothing. A defect, not a
    meaning; those keys are checked against NumPy's reading of chunk indices instead."""
    for k, n, c in zip(_per_axis(key, len(shape)), shape, chunks):
        if isinstance(k, slice) and k.stop is not None and k.stop < -(-(-n // c)):
            return True
    return False


def test_block_selections_match_zarr_python(tmp_path):
    """Random ``a.blocks[key]`` reads and writes against zarr-python 3.1.6: the same values and
    shape where it answers, the same exception family where it refuses (ranges starting past
    the last block or before the first, any block of an array without elements, steps, index
    lists). zarr_rs checked that an array had elements in Python and read ranges that start
    outside the axis as empty or whole; now zarr-array's ``Selection::Blocks`` alone decides."""
    rng = np.random.default_rng(37005)
    checked = {"answered": 0, "refused": 0, "answered by NumPy": 0, "written": 0}
    for shape, chunks in _BLOCK_CASES:
        data = np.arange(int(np.prod(shape)), dtype="int32").reshape(shape)
        rs = zarr_rs.create_array(str(tmp_path / f"{shape}.zarr"), shape=shape, chunks=chunks, dtype="int32")
        rs[...] = data
        zp = zarr.create_array(zarr.storage.MemoryStore(), shape=shape, chunks=chunks, dtype="int32")
        zp[...] = data
        nblocks = [-(-n // c) for n, c in zip(shape, chunks)]
        for case in range(60):
            nitems = int(rng.integers(1, len(shape) + 1))
            items = [_rand_block_item(rng, nblocks[min(d, len(shape) - 1)]) for d in range(nitems)]
            key = items[0] if nitems == 1 and rng.random() < 0.5 else tuple(items)
            where = f"shape {shape} chunks {chunks}: blocks[{key!r}]"
            want, want_exc = _run(lambda: zp.blocks[key])
            got, got_exc = _run(lambda: rs.blocks[key])
            if want_exc is not None:
                assert got_exc is not None, f"{where}: zarr-python raises {want_exc!r}, zarr_rs gives {got!r}"
                assert _family(got_exc) is _family(want_exc), f"{where}: {want_exc!r} against {got_exc!r}"
                checked["refused"] += 1
                continue
            assert got_exc is None, f"{where}: zarr-python gives shape {want.shape}, zarr_rs raises {got_exc!r}"
            if _zarr_python_wraps_twice(key, shape, chunks):
                want = _blocks_by_numpy(data, key, chunks)
                checked["answered by NumPy"] += 1
            else:
                checked["answered"] += 1
            assert got.shape == want.shape, f"{where}: shape {got.shape}, expected {want.shape}"
            np.testing.assert_array_equal(got, want, err_msg=where)
            if _zarr_python_wraps_twice(key, shape, chunks) or not want.size:
                continue
            # the same key as a write changes the same elements
            value = rng.integers(-1000, 1000, size=want.shape).astype("int32")
            zp.blocks[key] = value
            rs.blocks[key] = value
            data = zp[...]
            np.testing.assert_array_equal(rs[...], data, err_msg=f"{where} write")
            checked["written"] += 1
    assert checked["answered"] > 100 and checked["refused"] > 80 and checked["written"] > 80, checked
    assert checked["answered by NumPy"] > 0, checked
