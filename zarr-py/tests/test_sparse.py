"""Sparse arrays from Python against SciPy / pydata-sparse: reads hand the engine's vectors
over, writes never densify, nnz / sum / spmv on the chunks."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import sparse

import zarr_rs
from zarr_rs import errors


def random_csr(rng, shape, density, dtype="float32"):
    m = sp.random_array(shape, density=density, format="csr", dtype=dtype, rng=rng)
    m.data += 1  # no explicit zeros
    return m


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
@pytest.mark.parametrize("shards", [None, (50, 40)])
def test_scipy_round_trip(tmp_path, rng, fmt, shards):
    m = random_csr(rng, (100, 80), 0.05)
    a = zarr_rs.create_array(str(tmp_path / "s.zarr"), shape=m.shape, chunks=(25, 20), shards=shards,
                             dtype="float32", sparse=fmt)
    assert a.is_sparse and a.sparse_format == fmt
    a.write_sparse(m)
    got = a.read_csr()
    assert isinstance(got, sp.csr_array) and got.shape == m.shape
    np.testing.assert_array_equal(got.toarray(), m.toarray())
    np.testing.assert_array_equal(a[...], m.toarray())
    block = a.read_csr((slice(10, 60), slice(5, 70)))
    np.testing.assert_array_equal(block.toarray(), m.toarray()[10:60, 5:70])
    assert a.nnz() == m.nnz
    assert np.isclose(a.sum(), m.sum(), rtol=1e-5)
    x = rng.random(80).astype("float32")
    np.testing.assert_allclose(a.spmv(x), m @ x, rtol=1e-5)


def test_reads_hand_over_without_copy(tmp_path, rng):
    m = random_csr(rng, (60, 60), 0.1, "float64")
    a = zarr_rs.create_array(str(tmp_path / "z.zarr"), shape=m.shape, chunks=(20, 20), dtype="float64", sparse="csr")
    a.write_sparse(m)
    got = a.read_csr()
    # int32 indices, as SciPy picks for a matrix this size (and keeps without a copy)
    assert (got.indptr.dtype, got.indices.dtype, got.data.dtype) == (np.int32, np.int32, np.float64)
    for arr in (got.indptr, got.indices, got.data):
        assert not arr.flags.owndata  # owned by the Rust vector it came from, not copied by NumPy
        assert arr.base is not None
    indptr, indices, data = a._core.read_csr([0, 0], [60, 60])
    m2 = sp.csr_array((data, indices, indptr), shape=(60, 60), copy=False)
    assert np.shares_memory(m2.indices, indices) and np.shares_memory(m2.data, data)
    coo = a.read_coo()
    assert isinstance(coo, sparse.COO)
    assert coo.coords.dtype == np.int64


def test_csr_indices_are_int64_past_int32_positions(tmp_path):
    # 2**17 x 2**15 = 2**32 positions: SciPy's int32 no longer bounds every column and count
    shape = (1 << 17, 1 << 15)
    a = zarr_rs.create_array(str(tmp_path / "w.zarr"), shape=shape, chunks=(1 << 16, 1 << 14), dtype="float32", sparse="csr")
    m = sp.csr_array((np.array([2.0, 3.0], "float32"), ([5, shape[0] - 1], [shape[1] - 1, 7])), shape=shape)
    a.write_sparse(m)
    got = a.read_csr()
    assert (got.indptr.dtype, got.indices.dtype) == (np.int64, np.int64)
    assert got.nnz == 2 and got[5, shape[1] - 1] == 2.0 and got[shape[0] - 1, 7] == 3.0
    half = a.read_csr((slice(0, 1 << 16), slice(None)))  # 2**31 positions: still int64
    assert half.indices.dtype == np.int64 and half.nnz == 1
    small = a.read_csr((slice(0, 10), slice(0, 1 << 15)))
    assert small.indices.dtype == np.int32 and small.nnz == 1


def test_coo_any_rank(tmp_path, rng):
    dense = np.zeros((6, 7, 8), "int32")
    idx = rng.integers(0, [6, 7, 8], size=(40, 3))
    dense[tuple(idx.T)] = rng.integers(1, 100, 40)
    a = zarr_rs.create_array(str(tmp_path / "c.zarr"), shape=dense.shape, chunks=(3, 4, 4), dtype="int32", sparse="coo")
    a.write_sparse(sparse.COO.from_numpy(dense))
    np.testing.assert_array_equal(a[...], dense)
    got = a.read_coo()
    np.testing.assert_array_equal(got.todense(), dense)
    part = a.read_coo((slice(1, 5), slice(2, 7), slice(None)))
    np.testing.assert_array_equal(part.todense(), dense[1:5, 2:7])
    # replacing a block: entries there that the new block lacks are removed
    new = np.zeros((2, 3, 4), "int32")
    new[0, 0, 0] = 9
    a.write_sparse(sparse.COO.from_numpy(new), at=(1, 1, 1))
    dense[1:3, 1:4, 1:5] = new
    np.testing.assert_array_equal(a[...], dense)
    assert a.nnz() == np.count_nonzero(dense)
    assert a.sum() == dense.sum()


def test_write_block_at_offset_replaces_it(tmp_path, rng):
    m = random_csr(rng, (40, 40), 0.2)
    a = zarr_rs.create_array(str(tmp_path / "o.zarr"), shape=(40, 40), chunks=(16, 16), dtype="float32", sparse="csr")
    a.write_sparse(m)
    blk = sp.csc_array(random_csr(rng, (10, 12), 0.3))
    a.write_sparse(blk, at=(5, 20))
    want = m.toarray()
    want[5:15, 20:32] = blk.toarray()
    np.testing.assert_array_equal(a[...], want)
    # int32 and int64 index types, non-canonical input (duplicates summed)
    dup = sp.coo_array((np.array([1.0, 2.0], "float32"), (np.array([0, 0]), np.array([1, 1]))), shape=(2, 2))
    a.write_sparse(dup, at=(0, 0))
    assert a[0, 1] == 3.0 and a[0, 0] == 0


def test_sparse_writes_never_densify_the_array(tmp_path):
    # a huge, almost empty array: a dense write path would need 4e10 bytes
    a = zarr_rs.create_array(str(tmp_path / "h.zarr"), shape=(200_000, 50_000), chunks=(1000, 1000),
                             dtype="float32", sparse="csr")
    m = sp.csr_array((np.array([1.0, 2.0], "float32"), np.array([3, 49_999]), np.array([0, 1, 2])), shape=(2, 50_000))
    a.write_sparse(m, at=(199_998, 0))
    assert a.nnz() == 2 and a.sum() == 3.0
    y = a.spmv(np.ones(50_000, "float32"))
    assert y[199_998] == 1.0 and y[199_999] == 2.0 and y.sum() == 3.0


def test_dense_dtypes_in_sparse(tmp_path):
    for dt in ["int8", "uint16", "int64", "float16", "complex64"]:
        a = zarr_rs.create_array(str(tmp_path / f"{dt}.zarr"), shape=(5, 5), chunks=(2, 2), dtype=dt, sparse="coo")
        d = np.zeros((5, 5), dt)
        d[1, 3] = 3
        d[4, 0] = 2
        a[...] = d
        assert a.sum() == d.sum() and a.sum().dtype == d.sum().dtype
        np.testing.assert_array_equal(a.read_coo().todense(), d)
        m = a.read_csr()
        assert m.dtype == np.dtype(dt) and m.nnz == 2
        np.testing.assert_array_equal(m.indptr, [0, 0, 1, 1, 1, 2])
        np.testing.assert_array_equal(m.indices, [3, 0])
        np.testing.assert_array_equal(m.data, np.array([3, 2], dt))


def test_sparse_bad_input(tmp_path):
    a = zarr_rs.create_array(str(tmp_path / "b.zarr"), shape=(10, 10), chunks=(5, 5), dtype="float32", sparse="csr")
    a.write_sparse(sp.csr_array(np.eye(10, dtype="float32")))
    with pytest.raises(IndexError):
        a.write_sparse(sp.csr_array(np.ones((3, 3), "float32")), at=(8, 8))
    with pytest.raises(errors.DataTypeError):
        a.write_sparse(sp.csr_array(np.ones((2, 2), complex)))
    with pytest.raises(ValueError):
        a.spmv(np.ones(9, "float32"))
    with pytest.raises(ValueError):
        a.write_sparse(np.ones((2, 2)))
    with pytest.raises(ValueError):
        a.read_csr((1, slice(None)))
    np.testing.assert_array_equal(a[...], np.eye(10))



@pytest.mark.parametrize("kind", ["scipy", "coo"])
@pytest.mark.parametrize("at", [(-1, 0), (0, -3), (9, 0), (0, 9), (10, 10)])
def test_write_sparse_outside_the_array_is_a_bounds_error(tmp_path, kind, at):
    """A block that does not fit the array is an IndexError whatever the matrix's kind, and
    the array is left as it was: a negative ``at`` with a SciPy matrix was an OverflowError
    (``can't convert negative int to unsigned``) while a ``sparse.COO`` gave an IndexError."""
    a = zarr_rs.create_array(str(tmp_path / "b.zarr"), shape=(10, 10), chunks=(5, 5), dtype="float32", sparse="coo")
    a[1, 1] = 5
    m = sp.csr_array(np.ones((2, 2), "float32"))
    with pytest.raises(errors.BoundsError):
        a.write_sparse(m if kind == "scipy" else sparse.COO.from_scipy_sparse(m), at=at)
    assert a.nnz() == 1 and a[1, 1] == 5

def test_sum_accumulates_wider_than_the_elements(tmp_path):
    # issue 38: a uint8 matrix of sixteen 200s summed to 128 (3200 mod 256)
    m = np.zeros((5, 8), "uint8")
    m[[0, 1, 3, 4], :4] = 200  # row 4 lies in edge chunks
    a = zarr_rs.create_array(str(tmp_path / "u.zarr"), shape=m.shape, chunks=(2, 3), dtype="uint8", sparse="csr")
    a[...] = m
    want = sp.csr_array(m).sum()
    assert want == 3200 and want.dtype == np.uint64
    got = a.sum()
    assert got == 3200 and got.dtype == np.uint64
    assert a.to_dask().sum().compute() == 3200
    i = zarr_rs.create_array(str(tmp_path / "i.zarr"), shape=(3, 2), chunks=(2, 2), dtype="int32", sparse="coo")
    i[...] = np.array([[2**31 - 1, -5], [0, 0], [2**31 - 1, 17]], "int32")
    assert i.sum() == 2**32 + 10 and i.sum().dtype == np.int64
    # float16 arrays (which SciPy does not take): NumPy's sum, in float16; 4096 ones are 4096
    h = zarr_rs.create_array(str(tmp_path / "h.zarr"), shape=(64, 64), chunks=(64, 64), dtype="float16", sparse="csr")
    h[...] = np.ones((64, 64), "float16")
    assert h.sum() == 4096 and h.sum().dtype == np.float16 == np.ones((64, 64), "float16").sum().dtype


def test_spmv_computes_in_the_result_type(tmp_path):
    # issue 38: an int array times a float64 vector was refused ("cannot write float64 data")
    m = np.zeros((5, 8), "uint8")
    m[[0, 1, 3, 4], :4] = 200
    a = zarr_rs.create_array(str(tmp_path / "u.zarr"), shape=m.shape, chunks=(2, 3), dtype="uint8", sparse="csr")
    a[...] = m
    x = np.linspace(0.5, 4.0, 8)
    y = a.spmv(x)
    assert y.dtype == np.float64
    np.testing.assert_allclose(y, sp.csr_array(m) @ x)
    y = a.spmv(np.full(8, 300, "uint16"))  # uint16, as SciPy: 200 * 300 * 4 wraps at 2**16
    assert y.dtype == np.uint16
    np.testing.assert_array_equal(y, sp.csr_array(m) @ np.full(8, 300, "uint16"))
    i = zarr_rs.create_array(str(tmp_path / "i.zarr"), shape=(3, 2), chunks=(2, 2), dtype="int32", sparse="coo")
    i[...] = np.array([[2**31 - 1, -5], [0, 0], [2**31 - 1, 17]], "int32")
    np.testing.assert_array_equal(i.spmv(np.array([2.0, 0.5])), [2.0**32 - 2 - 2.5, 0, 2.0**32 - 2 + 8.5])
    # NumPy's result type (int32 with float16: float64), but a float16 one (uint8 with
    # float16) is float32, as SciPy computes it
    assert i.spmv(np.ones(2, "float16")).dtype == np.float64
    assert a.spmv(np.ones(8, "float16")).dtype == np.float32
    with pytest.raises(TypeError):
        a.spmv(np.ones(8, object))


# The differential test: sum() and spmv against SciPy (NumPy for float16 arrays, which SciPy
# does not take) for values, result dtypes and refusals, over random dtypes, shapes (matrices,
# and 1-d and 3-d arrays for sums), chunkings, shards, formats, densities and values near each
# type's limits. Sums of bool arrays are not compared: the engine has no sparse bool form (every
# sparse call on a bool array is refused with UnsupportedError).
_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "float32", "float64", "complex64", "complex128"]
_X_DTYPES = ["bool"] + _DTYPES


def _values(rng, dt, n, near_limits):
    """n nonzero values of dtype dt; near_limits: ints anywhere in the range, mostly at its
    ends (so that sums and products overflow), floats all positive near the largest (so that
    sums overflow to inf); else small values."""
    dt = np.dtype(dt)
    if dt.kind == "b":
        return np.ones(n, dt)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        if near_limits:
            pick = rng.integers(0, 3, n)
            lo = np.array(info.min, dt) + rng.integers(0, 4, n).astype(dt)
            hi = np.array(info.max, dt) - rng.integers(0, 4, n).astype(dt)
            anywhere = rng.integers(info.min, info.max, n, endpoint=True, dtype=dt)
            v = np.where(pick == 0, lo, np.where(pick == 1, hi, anywhere)).astype(dt)
        else:
            v = rng.integers(max(info.min, -100), 101, n).astype(dt)
        v[v == 0] = 1
        return v
    real = np.dtype(dt.char.lower()) if dt.kind == "c" else dt
    if near_limits:
        parts = [np.finfo(real).max * rng.uniform(0.8, 1.0, n) for _ in range(2)]
    else:
        parts = [rng.uniform(-100, 100, n) for _ in range(2)]
    v = (parts[0] + 1j * parts[1] if dt.kind == "c" else parts[0]).astype(dt)
    v[v == 0] = 1
    return v


def _random_case(rng):
    dt = _DTYPES[rng.integers(len(_DTYPES))]
    # mostly matrices; some 1-d and 3-d arrays (COO, summed only)
    ndim = 2 if rng.random() < 0.85 else [1, 3][rng.integers(2)]
    shape = tuple(int(n) for n in rng.integers(1, 25 if ndim < 3 else 8, ndim))
    chunks = tuple(int(rng.integers(1, n + 4)) for n in shape)
    shards = tuple(c * int(rng.integers(1, 3)) for c in chunks) if rng.random() < 0.25 else None
    fmt = ["coo", "csr", "csc"][rng.integers(3)] if ndim == 2 else "coo"
    density = [0.0, 0.05, 0.3, 1.0][rng.integers(4)]
    near = rng.random() < 0.5
    dense = np.zeros(shape, dt)
    mask = rng.random(shape) < density
    dense[mask] = _values(rng, dt, int(mask.sum()), near)
    a = zarr_rs.create_array("memory://", shape=shape, chunks=chunks, shards=shards, dtype=dt,
                             sparse=fmt)
    if dt != "float16" and ndim == 2 and rng.random() < 0.5:
        a.write_sparse(sp.csr_array(dense).asformat(fmt))
    else:
        a[...] = dense
    return a, dense, near


def _sum_tolerance(exact, values, dt):
    """How far a float sum may be from the exact one: a rounding of the result, plus
    pairwise summation's error bound in the element type."""
    real = np.dtype(dt.char.lower()) if dt.kind == "c" else dt
    eps = float(np.finfo(real).eps)
    n = max(len(values), 1)
    return eps * (abs(exact) + 2 * np.log2(n + 2) * float(np.sum(np.abs(values.astype(complex)))))


def _check_sum(a, dense):
    dt = dense.dtype
    got = a.sum()
    # SciPy's sum (NumPy's for float16, which SciPy refuses; SciPy's is NumPy's for the rest)
    want = dense.sum() if dt == np.float16 else sp.coo_array(dense).sum()
    assert got.dtype == want.dtype == dense.sum().dtype, (got.dtype, want.dtype)
    if dt.kind in "iu":
        assert got == want
        return
    values = dense[dense != 0]
    exact = complex(np.sum(values.astype(np.clongdouble))) if dt.kind == "c" else float(
        np.sum(values.astype(np.longdouble)))
    for part in ("real", "imag"):
        g, w, e = (float(getattr(np.asarray(v), part)) for v in (got, want, exact))
        if not np.isfinite(w) or abs(e) > float(np.finfo(np.asarray(got).real.dtype).max):
            assert g == w, (g, w, e)
        else:
            tol = _sum_tolerance(e, values, dt)
            assert abs(g - e) <= tol and abs(w - e) <= tol, (g, w, e, tol)


def _check_spmv(rng, a, dense, near):
    xdt = np.dtype(_X_DTYPES[rng.integers(len(_X_DTYPES))])
    # near-limit floats in x overflow in an order-dependent way: only ints go near limits
    x = _values(rng, xdt, dense.shape[1], near and xdt.kind in "iu")
    x[rng.random(len(x)) < 0.2] = 0
    if near and dense.dtype.kind in "fc":
        # the matrix's values are positive and near the largest: with x >= 0 (and real) every
        # product is too, so a row overflows to inf in any order of summation or none
        x = np.maximum(x.real, 0).astype(xdt)
    got = a.spmv(x)
    if dense.dtype == np.float16:
        # SciPy has no float16 matrices; its rule for their products: float16 results are
        # computed in float32
        rt = np.result_type(dense.dtype, xdt)
        rt = np.dtype(np.float32) if rt == np.float16 else rt
        want = sp.csr_array(dense.astype(rt)) @ x.astype(rt)
    else:
        want = sp.csr_array(dense) @ x
    assert got.dtype == want.dtype, (dense.dtype, xdt, got.dtype, want.dtype)
    assert got.shape == want.shape == (dense.shape[0],)
    if want.dtype.kind in "iu":
        np.testing.assert_array_equal(got, want)
        return
    eps = float(np.finfo(want.dtype).eps)
    scale = np.abs(dense.astype(np.clongdouble)) @ np.abs(x.astype(np.clongdouble))
    tol = 4 * (dense.shape[1] + 1) * eps * scale
    for part in (np.real, np.imag):
        g, w = part(got), part(want)
        fin = np.isfinite(w)
        np.testing.assert_array_equal(g[~fin], w[~fin])  # overflowed rows: inf alike
        assert np.all(np.abs(g[fin] - w[fin]) <= tol[fin]), (got, want)


def test_sum_and_spmv_match_scipy_differential():
    rng = np.random.default_rng(3800)
    seen = set()
    for k in range(300):
        a, dense, near = _random_case(rng)
        with np.errstate(over="ignore"):  # SciPy's sums that overflow, as the engine's do
            _check_sum(a, dense)
            if dense.ndim == 2:
                _check_spmv(rng, a, dense, near)
        seen.add((dense.dtype.name, a.sparse_format))
        if k % 3 == 0 and dense.ndim == 2:
            # refusals where SciPy refuses: a vector of the wrong length (ValueError), of a
            # type with no common type with the array's (TypeError)
            bad = [np.ones(dense.shape[1] + 1, dense.dtype), np.ones(dense.shape[1], object),
                   np.array(["a"] * dense.shape[1]), np.zeros(dense.shape[1], "datetime64[s]")]
            x = bad[rng.integers(len(bad))]
            m = sp.csr_array(dense.astype(np.float32)) if dense.dtype == np.float16 else sp.csr_array(dense)
            with pytest.raises(Exception) as want:
                m @ x
            with pytest.raises(Exception) as got:
                a.spmv(x)
            if isinstance(want.value, TypeError):
                assert isinstance(got.value, TypeError), (x.dtype, got.value, want.value)
            else:
                assert isinstance(want.value, ValueError), want.value
                # a ValueError, not a DataTypeError (which is both)
                assert isinstance(got.value, errors.ShapeError), (x.dtype, got.value, want.value)
    assert len(seen) > 30  # most dtypes met every format


def test_sum_and_spmv_dask_blocks_agree(tmp_path, rng):
    # to_dask() blocks (SciPy's sums and products of each block) agree with the engine's
    for k, dt in enumerate(["uint8", "int16", "int64", "uint64", "float32", "complex64"]):
        dense = np.zeros((13, 11), dt)
        mask = rng.random(dense.shape) < 0.4
        dense[mask] = _values(rng, dt, int(mask.sum()), near_limits=dt[0] in "iu")
        a = zarr_rs.create_array(str(tmp_path / f"d{k}.zarr"), shape=dense.shape, chunks=(4, 11), dtype=dt,
                                 sparse="csr")
        a[...] = dense
        x = a.to_dask()
        total = x.sum().compute()
        assert total.dtype == a.sum().dtype
        assert total == a.sum() if dt[0] in "iu" else np.isclose(total, a.sum(), rtol=1e-5)
        v = np.arange(11, dtype="float64")
        y = (x @ v).compute()
        assert y.dtype == a.spmv(v).dtype == np.result_type(dt, v.dtype)
        np.testing.assert_allclose(y, a.spmv(v), rtol=1e-6)
