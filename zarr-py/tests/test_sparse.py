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
