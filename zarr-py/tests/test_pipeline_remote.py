"""zarr-python on the engine over remote stores: with ``zarr_rs.CodecPipeline`` the engine
opens an ``ObjectStore`` (obstore's ``S3Store``, ``HTTPStore``...) or an ``FsspecStore`` (s3fs,
fsspec's HTTP filesystem) itself, and reads and writes their chunks with every request of a
batch in flight together. Checked against zarr-python's own pipeline on the local S3 server
(a seeded differential test of writes and reads), and over HTTP with a delay before every
answer (requests in flight, against zarr-python's ten). Also: the stores the engine must
leave to zarr-python (a credential callback, botocore settings, a server refusing the
engine's requests: the batch is read again there, and the later ones go there directly),
obstore's and fsspec's local directories, a forked child reading after its parent did, and
the mapping of a store's settings to the engine's, without a server."""

from __future__ import annotations

import os

import numpy as np
import pytest

zarr = pytest.importorskip("zarr")
obstore_store = pytest.importorskip("obstore.store")
pytest.importorskip("s3fs")

from test_remote import _serve  # noqa: E402
from zarr.storage import FsspecStore, ObjectStore  # noqa: E402

import zarr_rs  # noqa: E402
from zarr_rs import pipeline  # noqa: E402
from zarr_rs.pipeline import stats  # noqa: E402

RS = "zarr_rs.CodecPipeline"
DEFAULT = "zarr.core.codec_pipeline.BatchedCodecPipeline"


def _pipeline(path):
    return zarr.config.set({"codec_pipeline.path": path})


def _s3_store(kind, s3_url, name, read_only=False):
    """A new zarr-python store object of `kind` at `name` below `s3_url` (the local server's)."""
    endpoint = os.environ["AWS_ENDPOINT_URL"]
    bucket, prefix = s3_url[len("s3://") :].split("/", 1)
    if kind == "obstore":
        inner = obstore_store.S3Store(
            bucket,
            prefix=f"{prefix}/{name}",
            endpoint=endpoint,
            access_key_id="test",
            secret_access_key="test",
            region="us-east-1",
            client_options={"allow_http": True},
        )
        return ObjectStore(inner, read_only=read_only)
    return FsspecStore.from_url(
        f"{s3_url}/{name}",
        storage_options={"endpoint_url": endpoint, "key": "test", "secret": "test"},
        read_only=read_only,
    )


def _random_box(rng, shape):
    start = [int(rng.integers(0, n)) for n in shape]
    stop = [int(rng.integers(s + 1, n + 1)) for s, n in zip(start, shape)]
    return tuple(slice(a, b) for a, b in zip(start, stop))


@pytest.mark.parametrize("kind", ["obstore", "fsspec"])
def test_engine_writes_and_reads_s3_itself(kind, s3_url):
    """Seeded: arrays written through the pipeline (the engine's own requests) read back by
    zarr-python's own pipeline (zarr-python's requests), and the other way round, with
    random boxes written and random boxes, points and orthogonal selections read; the values,
    shapes and the chunks the engine moved itself checked."""
    rng = np.random.default_rng(20261208)
    layouts = [
        {"chunks": (8, 8), "compressors": None},
        {"chunks": (8, 8), "compressors": zarr.codecs.ZstdCodec(level=1)},
        {"chunks": (4, 4), "shards": (8, 16), "compressors": zarr.codecs.ZstdCodec(level=1)},
    ]
    cases = 0
    for n, layout in enumerate(layouts):
        shape = (int(rng.integers(9, 30)), int(rng.integers(9, 30)))
        expected = np.zeros(shape, dtype="int32")
        name = f"a{n}.zarr"
        with _pipeline(RS):
            a = zarr.create_array(
                _s3_store(kind, s3_url, name), shape=shape, dtype="int32", fill_value=0, **layout
            )
        for step in range(8):
            box = _random_box(rng, shape)
            value = rng.integers(-1000, 1000, size=expected[box].shape, dtype="int32")
            expected[box] = value
            # writes alternate: the engine's, zarr-python's
            writer = RS if step % 2 == 0 else DEFAULT
            with _pipeline(writer):
                w = zarr.open_array(_s3_store(kind, s3_url, name), mode="r+")
                before = stats()["files"]
                w[box] = value
                if writer == RS:
                    assert stats()["files"] > before, "the engine wrote no chunk itself"
            with _pipeline(RS):
                r = zarr.open_array(_s3_store(kind, s3_url, name, read_only=True), mode="r")
                before = stats()["files"]
                read_box = _random_box(rng, shape)
                np.testing.assert_array_equal(r[read_box], expected[read_box])
                pts = tuple(rng.integers(0, d, size=7) for d in shape)
                np.testing.assert_array_equal(r.vindex[pts], expected[pts])
                rows = sorted(set(rng.integers(0, shape[0], size=3).tolist()))
                np.testing.assert_array_equal(
                    r.oindex[rows, :], expected[rows, :]
                )
                assert stats()["files"] > before, "the engine read no chunk itself"
            cases += 1
        with _pipeline(DEFAULT):
            ref = zarr.open_array(_s3_store(kind, s3_url, name), mode="r")
            np.testing.assert_array_equal(ref[...], expected)
        # all fill value: every chunk deleted by the engine's own requests
        with _pipeline(RS):
            w = zarr.open_array(_s3_store(kind, s3_url, name), mode="r+")
            w[...] = 0
        with _pipeline(DEFAULT):
            ref = zarr.open_array(_s3_store(kind, s3_url, name), mode="r")
            assert ref.nchunks_initialized == 0
            np.testing.assert_array_equal(ref[...], 0)
    assert cases == 24


@pytest.mark.parametrize("kind", ["obstore", "fsspec"])
def test_strings_and_v2_arrays_on_s3(kind, s3_url):
    """Variable-length strings (v3) and a v2 array with a numcodecs compressor, written
    through the engine's own requests and read back by zarr-python's own pipeline, and the
    other way round."""
    words = np.array([f"w{i}" * (i % 5) for i in range(60)], dtype=object).reshape(6, 10)
    numbers = np.arange(60, dtype="<f8").reshape(6, 10) / 7
    for name, data, kwargs in [
        ("s.zarr", words, {"dtype": str}),
        ("v2.zarr", numbers, {"dtype": "<f8", "zarr_format": 2,
                              "compressors": {"id": "zlib", "level": 1}}),
    ]:
        for writer, reader in [(RS, DEFAULT), (DEFAULT, RS)]:
            with _pipeline(writer):
                a = zarr.create_array(
                    _s3_store(kind, s3_url, f"{writer[:4]}-{name}"), shape=data.shape,
                    chunks=(4, 4), overwrite=True, **kwargs,
                )
                before = stats()["files"]
                a[...] = data
                a[1:3, 2:9] = data[2:4, 1:8]
                if writer == RS:
                    assert stats()["files"] > before
            want = data.copy()
            want[1:3, 2:9] = data[2:4, 1:8]
            with _pipeline(reader):
                r = zarr.open_array(_s3_store(kind, s3_url, f"{writer[:4]}-{name}"), mode="r")
                before = stats()["files"]
                got = r[...]
                assert got.tolist() == want.tolist(), (name, writer)
                assert r[2, 3:7].tolist() == want[2, 3:7].tolist()
                if reader == RS:
                    assert stats()["files"] > before


def test_a_store_the_engine_cannot_open_stays_with_zarr_python(s3_url):
    """An obstore store with a credential provider (a Python callback) and an s3fs store with
    botocore settings the engine has no name for: zarr-python's store moves the bytes, the
    engine still decodes and encodes them."""
    endpoint = os.environ["AWS_ENDPOINT_URL"]
    bucket, prefix = s3_url[len("s3://") :].split("/", 1)

    def credentials():
        return {"access_key_id": "test", "secret_access_key": "test", "token": None,
                "expires_at": None}

    stores = [
        ObjectStore(
            obstore_store.S3Store(
                bucket, prefix=f"{prefix}/p.zarr", endpoint=endpoint, region="us-east-1",
                client_options={"allow_http": True}, credential_provider=credentials,
            )
        ),
        FsspecStore.from_url(
            f"{s3_url}/q.zarr",
            storage_options={"endpoint_url": endpoint, "key": "test", "secret": "test",
                             "config_kwargs": {"max_pool_connections": 20}},
        ),
    ]
    data = np.arange(12 * 10, dtype="float64").reshape(12, 10)
    for store in stores:
        with _pipeline(RS):
            a = zarr.create_array(store, shape=data.shape, chunks=(5, 5), dtype="float64")
            before = stats()
            a[...] = data
            np.testing.assert_array_equal(a[2:11, 3:], data[2:11, 3:])
            after = stats()
        assert after["files"] == before["files"]
        assert after["encoded"] - before["encoded"] == 6  # 3 x 2 chunks
        assert after["decoded"] > before["decoded"]


@pytest.mark.parametrize("kind", ["obstore", "fsspec"])
def test_a_plane_over_http_keeps_many_requests_in_flight(kind, tmp_path):
    """A plane of 144 chunks behind a 200 ms round trip: zarr-python's own pipeline keeps
    ten requests in flight (`async.concurrency`); on the engine's own requests, far more."""
    server, url, data = _serve(tmp_path, 0.2)
    try:
        if kind == "obstore":
            inner = obstore_store.HTTPStore.from_url(url, client_options={"allow_http": True})
            store = ObjectStore(inner, read_only=True)
        else:
            store = FsspecStore.from_url(url, read_only=True)
        with _pipeline(RS):
            a = zarr.open_array(store, mode="r")
            before = stats()["files"]
            server.reset()
            np.testing.assert_array_equal(a[1], data[1])
            assert stats()["files"] - before == 144
        assert server.peak >= 64, server.peak
    finally:
        server.close()


def test_settings_of_obstore_and_fsspec_stores_map_to_the_engines():
    """Without a server: each store the engine takes gives its location and settings (the
    engine builds its client without contacting anything), and one it does not take, none."""
    gcs = ObjectStore(obstore_store.GCSStore("bkt", prefix="p/q", skip_signature=True))
    assert pipeline._object_location(gcs) == ("gs://bkt/p/q", {"skip_signature": "true"})
    az = ObjectStore(obstore_store.AzureStore("ctr", account_name="acc", skip_signature=True))
    url, settings = pipeline._object_location(az)
    assert url == "az://ctr/" and settings == {"account_name": "acc", "skip_signature": "true"}
    s3 = ObjectStore(
        obstore_store.S3Store("bkt", endpoint="http://127.0.0.1:1", region="eu-west-1",
                              skip_signature=True, client_options={"allow_http": True})
    )
    url, settings = pipeline._object_location(s3)
    assert url == "s3://bkt/"
    assert settings == {"endpoint": "http://127.0.0.1:1", "region": "eu-west-1",
                        "skip_signature": "true", "allow_http": "true"}
    for store in (gcs, az, s3):
        engine = pipeline._engine_of(store)
        assert engine is not None and engine.remote
        # one handle per store object, kept from one batch to the next
        assert pipeline._engine_of(store) is engine
    mem = ObjectStore(obstore_store.MemoryStore())
    assert pipeline._engine_of(mem) is None
    fs_http = FsspecStore.from_url("http://127.0.0.1:1/x.zarr", read_only=True)
    assert pipeline._fsspec_location(fs_http) == ("http://127.0.0.1:1/x.zarr", {})
    fs_s3 = FsspecStore.from_url(
        "s3://bkt/x.zarr",
        storage_options={"endpoint_url": "http://127.0.0.1:1", "anon": True},
    )
    assert pipeline._fsspec_location(fs_s3) == (
        "s3://bkt/x.zarr",
        {"endpoint": "http://127.0.0.1:1", "skip_signature": "true", "allow_http": "true"},
    )
    # an AWS profile's credentials, which only botocore reads: zarr-python's store
    profiled = FsspecStore.from_url("s3://bkt/x.zarr", storage_options={"profile": "p"})
    assert pipeline._fsspec_location(profiled) is None
    # a setting the engine's client does not know, a bucket that is not the url's: refused
    with pytest.raises(zarr_rs.errors.StoreError, match="no setting"):
        zarr_rs._core.EngineStore.open_url("s3://bkt", [("no_such_setting", "1")])
    with pytest.raises(zarr_rs.errors.StoreError, match="not the url"):
        zarr_rs._core.EngineStore.open_url("s3://bkt", [("bucket", "other")])


@pytest.mark.parametrize("kind", ["obstore", "fsspec"])
def test_local_directories_of_obstore_and_fsspec_stores(kind, tmp_path):
    """obstore's `LocalStore` and fsspec's local filesystem are directories the engine reads
    and writes itself, as it does a `LocalStore`'s; zarr-python's own pipeline reads back
    what it wrote."""
    root = tmp_path / "d.zarr"
    root.mkdir()

    def store():
        if kind == "obstore":
            return ObjectStore(obstore_store.LocalStore(root))
        return FsspecStore.from_url(f"file://{root}")

    data = np.arange(20 * 14, dtype="uint16").reshape(20, 14)
    with _pipeline(RS):
        a = zarr.create_array(store(), shape=data.shape, chunks=(6, 4), dtype="uint16")
        before = stats()["files"]
        a[...] = data
        a[3:9, 2:5] = 7
        data[3:9, 2:5] = 7
        np.testing.assert_array_equal(a[1:19, 1:13], data[1:19, 1:13])
        # 16 chunks written, 4 read and written again, 16 read
        assert stats()["files"] - before == 16 + 4 + 4 + 16
    with _pipeline(DEFAULT):
        np.testing.assert_array_equal(zarr.open_array(store(), mode="r")[...], data)


def _read_plane_in_child(url):
    """In a forked child: the array opened anew (zarr-python's stores and zarr_rs's arrays
    are not shared across a fork) through the pipeline and through zarr_rs."""
    with _pipeline(RS):
        before = stats()["files"]
        a = zarr.open_array(FsspecStore.from_url(url, read_only=True), mode="r")
        plane = a[2]
        engine_read = stats()["files"] - before
    return plane, engine_read, zarr_rs.open(url, mode="r")[3]


def test_a_forked_child_reads_through_the_engine(tmp_path):
    """The parent reads over HTTP with the engine's own requests, through the pipeline and
    through zarr_rs (its I/O runtime and its threads started, its connections open); a child
    forked from it (multiprocessing's fork, the default on Linux) starts a runtime and a
    pool of its own rather than waiting forever on the parent's threads, which it does not
    have."""
    import multiprocessing

    server, url, data = _serve(tmp_path, 0.001)
    try:
        with _pipeline(RS):
            a = zarr.open_array(FsspecStore.from_url(url, read_only=True), mode="r")
            np.testing.assert_array_equal(a[1], data[1])
        np.testing.assert_array_equal(zarr_rs.open(url, mode="r")[0], data[0])
        with multiprocessing.get_context("fork").Pool(2) as pool:
            results = pool.map_async(_read_plane_in_child, [url, url]).get(timeout=120)
        for plane, engine_read, other in results:
            np.testing.assert_array_equal(plane, data[2])
            assert engine_read == 144
            np.testing.assert_array_equal(other, data[3])
    finally:
        server.close()


def test_a_store_the_engine_fails_on_goes_to_zarr_python_after(tmp_path):
    """A server that refuses the engine's requests (here by their client; in life, a store
    whose credentials only zarr-python's store finds): the batch is read again through
    zarr-python's store, and the later batches go there directly."""
    import functools
    import http.server
    import threading

    data = np.arange(12 * 12, dtype="int16").reshape(12, 12)
    a = zarr_rs.create_array(str(tmp_path / "a.zarr"), shape=data.shape, chunks=(4, 4),
                             dtype="int16")
    a[...] = data
    refused = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (the base class' name)
            if "aiohttp" not in self.headers.get("User-Agent", ""):
                refused.append(self.path)
                self.send_error(403)
                return
            super().do_GET()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=str(tmp_path))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/a.zarr"
        with _pipeline(RS):
            z = zarr.open_array(FsspecStore.from_url(url, read_only=True), mode="r")
            before = stats()
            np.testing.assert_array_equal(z[...], data)
            assert refused, "the engine made no request"
            n = len(refused)
            np.testing.assert_array_equal(z[2:9, 3:], data[2:9, 3:])
            assert len(refused) == n, "the engine was asked again"
            after = stats()
        assert after["files"] == before["files"]
        assert after["decoded"] - before["decoded"] >= 9 + 6
    finally:
        server.shutdown()
        server.server_close()
