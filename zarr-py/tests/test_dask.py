"""Dask: blocks follow chunks, graphs pickle small, sparse blocks stay sparse, parallel writes;
a LocalCluster with 2 worker processes over files and over the local S3 server."""

from __future__ import annotations

import pickle

import dask
import dask.array as da
import numpy as np
import pytest
import scipy.sparse as sp
import sparse

import zarr_rs
from zarr_rs import errors
from zarr_rs.dask import CSRBlock, SparseMatrix


def sparse_array(location, rng, shape=(300, 200), chunks=(100, 50), density=0.02):
    m = sp.random_array(shape, density=density, format="csr", dtype="float32", rng=rng)
    m.data += 1
    a = zarr_rs.create_array(location, shape=shape, chunks=chunks, dtype="float32", sparse="csr")
    a.write_sparse(m)
    return a, m


def test_dense_blocks_follow_chunks(tmp_path, rng):
    data = rng.random((50, 30)).astype("float64")
    a = zarr_rs.create_array(str(tmp_path / "d.zarr"), shape=data.shape, chunks=(20, 16), dtype="float64")
    a[...] = data
    x = a.to_dask(blocks="shards")
    assert x.chunks == ((20, 20, 10), (16, 14))
    assert type(x._meta) is np.ndarray
    with dask.config.set(scheduler="threads"):
        np.testing.assert_array_equal(x.compute(), data)
        assert np.isclose(x.sum().compute(), data.sum())


def test_shards_and_inner_chunks(tmp_path, rng):
    data = rng.random((40, 40)).astype("float32")
    a = zarr_rs.create_array(str(tmp_path / "s.zarr"), shape=data.shape, chunks=(10, 10), shards=(20, 40), dtype="float32")
    a[...] = data
    assert a.to_dask(blocks="shards").chunks == ((20, 20), (40,))
    assert a.to_dask(blocks=(40, 40)).chunks == ((40,), (40,))
    with pytest.raises(errors.InvalidArgumentError, match="whole multiples of the shard shape"):
        a.to_dask(blocks=(10, 40))
    with pytest.raises(errors.InvalidArgumentError):
        a.to_dask(blocks="rows")
    x = a.to_dask(blocks="chunks")
    assert x.chunks == ((10,) * 4, (10,) * 4)
    np.testing.assert_array_equal(x.compute(scheduler="sync"), data)


def test_prepended_array_blocks(tmp_path):
    a = zarr_rs.create_array(str(tmp_path / "p.zarr"), shape=(6,), chunks=(4,), dtype="int32")
    a[...] = np.arange(6, dtype="int32")
    a.prepend(np.full(3, -1, "int32"))
    x = a.to_dask(blocks="shards")
    assert x.chunks == ((3, 4, 2),)  # the partly filled first chunk is its own block
    np.testing.assert_array_equal(x.compute(scheduler="sync"), a[...])
    x = a.to_dask(min_blocks=1)  # auto: the three chunks are one small block
    assert x.chunks == ((9,),)
    np.testing.assert_array_equal(x.compute(scheduler="sync"), a[...])


def test_auto_blocks_follow_dask_chunk_size(tmp_path, rng):
    data = rng.random((50, 30)).astype("float64")
    a = zarr_rs.create_array(str(tmp_path / "d.zarr"), shape=data.shape, chunks=(10, 10), dtype="float64")
    a[...] = data
    assert a.to_dask(min_blocks=1).chunks == ((50,), (30,))  # 12 KB: one block
    # a chunk is 800 bytes dense: 2 KiB holds 2 of them, along the first axis
    with dask.config.set({"array.chunk-size": "2KiB"}):
        x = a.to_dask(min_blocks=1)
        assert x.chunks == ((20, 20, 10), (10, 10, 10))
    # 8 KiB: all 5 chunks of the first axis (4000 bytes), then 2 of the second
    with dask.config.set({"array.chunk-size": "8KiB"}):
        x = a.to_dask(min_blocks=1)
        assert x.chunks == ((50,), (20, 10))
    np.testing.assert_array_equal(x.compute(scheduler="sync"), data)
    # a sparse chunk counts about 4x its stored bytes, far below its dense size
    s, m = sparse_array(str(tmp_path / "s.zarr"), rng, shape=(400, 300), chunks=(100, 100))
    stored = [n for _, n in s._core.stored_chunk_sizes()]
    per_chunk = 4 * sum(stored) // len(stored)
    assert per_chunk < 100 * 100 * 4
    with dask.config.set({"array.chunk-size": 2 * per_chunk + 1}):
        x = s.to_dask(min_blocks=1)
        assert x.chunks == ((200, 200), (100, 100, 100))
        assert isinstance(x._meta, sp.csr_array)
        with dask.config.set(scheduler="sync"):
            np.testing.assert_allclose((x @ np.ones(300, "float32")).compute(), m @ np.ones(300, "float32"), rtol=1e-4)
    # 12 of them: every chunk in one block
    with dask.config.set({"array.chunk-size": 12 * per_chunk}):
        assert s.to_dask(min_blocks=1).chunks == ((400,), (300,))


def test_auto_blocks_give_every_thread_a_block(tmp_path, rng, monkeypatch):
    data = rng.random((50, 30)).astype("float64")
    a = zarr_rs.create_array(str(tmp_path / "d.zarr"), shape=data.shape, chunks=(10, 10), dtype="float64")
    a[...] = data
    # 15 chunks, 12 KB: under array.chunk-size, but split so that 2, 4 or 20 threads each
    # get a block (at most one block per chunk)
    assert a.to_dask(min_blocks=2).chunks == ((50,), (10, 10, 10))
    assert a.to_dask(min_blocks=4).chunks == ((30, 20), (10, 10, 10))
    assert a.to_dask(min_blocks=20).chunks == ((10,) * 5, (10, 10, 10))
    # by default, this machine's cores when no distributed client is current
    monkeypatch.setattr(dask.system, "CPU_COUNT", 5)
    x = a.to_dask()
    assert x.chunks == ((30, 20), (10, 10, 10))
    np.testing.assert_array_equal(x.compute(scheduler="sync"), data)
    # array.chunk-size still bounds a block
    with dask.config.set({"array.chunk-size": "2KiB"}):
        assert a.to_dask(min_blocks=2).chunks == ((20, 20, 10), (10, 10, 10))


def test_reads_fuse_into_the_operation_on_the_block(tmp_path, rng):
    # a block is read in the task that sums it or multiplies it: no read task whose result
    # waits in a worker's memory or travels to another worker
    a, m = sparse_array(str(tmp_path / "f.zarr"), rng)
    x = a.to_dask(blocks="shards")
    assert x.npartitions > 1
    v = np.ones(m.shape[1], "float32")
    for expr, want in ((x.sum(), m.sum()), (x @ v, m @ v), (x.sum(axis=0), m.sum(axis=0))):
        (opt,) = dask.optimize(expr)
        names = {str(k[0] if isinstance(k, tuple) else k) for k in opt.__dask_graph__()}
        assert not any(n.startswith(x.name) for n in names), names
        np.testing.assert_allclose(opt.compute(scheduler="sync"), want, rtol=1e-4)


def test_product_with_a_numpy_operand_is_one_task_per_row_band(tmp_path, rng):
    # one block along the columns: x @ v reads and multiplies each row band in one task that
    # carries v (no task holding v, nothing moved between workers), for a vector and a matrix
    a, m = sparse_array(str(tmp_path / "mv.zarr"), rng, chunks=(100, 200))
    x = a.to_dask(blocks="shards")
    assert isinstance(x, SparseMatrix) and isinstance(x, da.Array)
    assert x.chunks == ((100, 100, 100), (200,))
    v = rng.random(200).astype("float32")
    w = rng.random((200, 3))
    for other in (v, w):
        want = m @ other
        y = x @ other
        assert type(y) is da.Array and y.chunks[0] == x.chunks[0] and y.dtype == want.dtype
        (opt,) = dask.optimize(y)
        assert not any(name.startswith("matmul") for name in y.dask.layers), y.dask.layers
        # after optimisation every task is the fused read and product of one row band
        band = y.name.split("-", 1)[1]
        names = {str(k[0]) for k in opt.__dask_graph__()}
        assert all(n.startswith(("band_product-", "zarr_rs-band_product-")) and n.endswith(band)
                   for n in names), names
        got = y.compute(scheduler="sync")
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5)
    # the rest takes Dask's own matmul, with the same result: a Dask operand, blocks split
    # along the columns, an operand too large to carry in every task
    split = sparse_array(str(tmp_path / "split.zarr"), rng, chunks=(100, 50))[0].to_dask(blocks="shards")
    big = rng.random((200, 700))
    for y, want in ((x @ da.from_array(v), m @ v), (split @ v, split.compute().toarray() @ v),
                    (x @ big, m @ big)):
        assert any(name.startswith("matmul") for name in y.dask.layers), y.dask.layers
        np.testing.assert_allclose(y.compute(scheduler="sync"), want, rtol=1e-5)


def test_graph_pickles_small(tmp_path, rng):
    a, _ = sparse_array(str(tmp_path / "g.zarr"), rng)
    x = a.to_dask(blocks="shards")
    size = len(pickle.dumps(dict(x.__dask_graph__())))
    assert size < 600 * x.npartitions  # location, path, metadata token per task; no data


def test_sparse_blocks_never_densify(tmp_path, rng):
    a, m = sparse_array(str(tmp_path / "sp.zarr"), rng)
    x = a.to_dask(blocks="shards")
    assert isinstance(x._meta, sp.csr_array)
    blocks = []
    x.map_blocks(lambda b: blocks.append(type(b)) or b, meta=x._meta).compute(scheduler="sync")
    assert blocks and all(t is CSRBlock for t in blocks)
    with dask.config.set(scheduler="sync"):
        assert np.isclose(x.sum().compute(), m.sum(), rtol=1e-5)
        np.testing.assert_allclose(x.sum(axis=0).compute(), m.sum(axis=0), rtol=1e-5)
        np.testing.assert_allclose(x.sum(axis=1).compute(), m.sum(axis=1), rtol=1e-5)
        v = rng.random(200).astype("float32")
        np.testing.assert_allclose((x @ v).compute(), m @ v, rtol=1e-4)
        doubled = x.map_blocks(lambda b: b * 2).compute()
        assert sp.issparse(doubled)
        np.testing.assert_allclose(doubled.toarray(), 2 * m.toarray())


def test_pydata_blocks(tmp_path, rng):
    a, m = sparse_array(str(tmp_path / "pd.zarr"), rng)
    x = a.to_dask(sparse="pydata", blocks="shards")
    assert isinstance(x._meta, sparse.COO)
    with dask.config.set(scheduler="sync"):
        assert np.isclose(float(x.sum().compute()), m.sum(), rtol=1e-5)
        got = x.sum(axis=0).compute()
        np.testing.assert_allclose(got.todense() if hasattr(got, "todense") else got, m.sum(axis=0), rtol=1e-5)


def test_from_dask_writes_in_parallel(tmp_path, rng):
    data = rng.random((64, 48)).astype("float32")
    x = da.from_array(data, chunks=(16, 24))
    a = zarr_rs.from_dask(x, str(tmp_path / "w.zarr"))
    assert a.chunks == (16, 24)
    np.testing.assert_array_equal(zarr_rs.open(str(tmp_path / "w.zarr"), mode="r")[...], data)
    # chunks that are whole multiples of the blocks' boundaries are fine
    b = zarr_rs.from_dask(x, str(tmp_path / "w2.zarr"), chunks=(8, 12))
    np.testing.assert_array_equal(b[...], data)
    # a block layout where two tasks would write one chunk is refused, nothing is written
    with pytest.raises(errors.InvalidArgumentError) as e:
        zarr_rs.from_dask(x, str(tmp_path / "w3.zarr"), chunks=(32, 24))
    assert "rechunk" in str(e.value)
    assert not (tmp_path / "w3.zarr").exists()
    # so the retry the error suggests works
    c = zarr_rs.from_dask(x.rechunk((32, 24)), str(tmp_path / "w3.zarr"), chunks=(32, 24))
    np.testing.assert_array_equal(c[...], data)


def test_from_dask_of_strings_and_bytes(tmp_path):
    """Object Dask arrays need the Zarr type named: dtype=str or bytes."""
    words = np.array(["a", "", "ccc", "dddd", "é"], dtype=object)
    x = da.from_array(words, chunks=2)
    with pytest.raises(errors.DataTypeError, match="dtype=str"):
        zarr_rs.from_dask(x, str(tmp_path / "s.zarr"))
    a = zarr_rs.from_dask(x, str(tmp_path / "s.zarr"), dtype=str)
    assert list(a[...]) == list(words)
    raw = da.from_array(np.array([b"x", b"", b"\x00yz"], dtype=object), chunks=2)
    b = zarr_rs.from_dask(raw, str(tmp_path / "b.zarr"), dtype=bytes)
    assert list(b[...]) == [b"x", b"", b"\x00yz"]


def test_from_dask_sparse_blocks(tmp_path, rng):
    a, m = sparse_array(str(tmp_path / "src.zarr"), rng)
    b = zarr_rs.from_dask(a.to_dask(), str(tmp_path / "dst.zarr"))
    assert b.is_sparse
    np.testing.assert_array_equal(b.read_csr().toarray(), m.toarray())


def _cluster_checks(location, rng):
    from distributed import Client, LocalCluster

    a, m = sparse_array(location, rng, shape=(400, 300), chunks=(100, 100))
    v = rng.random(300).astype("float32")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, protocol="tcp") as cluster, Client(cluster) as client:
        x = a.to_dask(blocks="shards")
        total, col, prod = dask.compute(x.sum(), x.sum(axis=0), x @ v)
        assert np.isclose(total, m.sum(), rtol=1e-5)
        np.testing.assert_allclose(col, m.sum(axis=0), rtol=1e-5)
        np.testing.assert_allclose(prod, m @ v, rtol=1e-4)
        # both worker processes opened the array themselves
        seen = client.run(lambda: len(__import__("zarr_rs.dask").dask._Source._cache))
        assert len(seen) == 2
        # and a parallel write from the cluster
        out = zarr_rs.from_dask(x, location + "-copy")
        np.testing.assert_array_equal(out.read_csr().toarray(), m.toarray())


def test_local_cluster_on_files(tmp_path, rng):
    _cluster_checks(str(tmp_path / "cluster.zarr"), rng)


@pytest.mark.s3
def test_local_cluster_on_s3(s3_url, rng):
    _cluster_checks(s3_url, rng)


def test_to_dask_of_an_array_of_2_to_the_38_chunks(tmp_path):
    """Blocks are found from the chunks that bound them: to_dask() of an array of 2^38 chunks
    plans blocks of Dask's chunk size at once, and a layout of one block per chunk
    is refused at once (it took time in the number of chunks)."""
    a = zarr_rs.create_array(str(tmp_path / "big.zarr"), shape=(2**38,), chunks=(1024,), dtype="uint8")
    a[2**38 - 3 :] = np.array([1, 2, 3], dtype="uint8")
    x = a.to_dask()
    assert x.shape == (2**38,) and len(x.chunks[0]) < 2**22
    assert x[-3:].compute().tolist() == [1, 2, 3]
    with pytest.raises(errors.TooLargeError):
        a.to_dask(blocks="chunks")
