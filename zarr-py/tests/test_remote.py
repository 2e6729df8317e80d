"""Reads over HTTP with a delay before every answer (a remote store's round trip): many
requests in flight at once (``concurrency``, default 256), and a seeded differential test of
regions, orthogonal and point selections against NumPy (values, shapes, exception types)."""

from __future__ import annotations

import functools
import http.server
import threading
import time

import numpy as np
import pytest

import zarr_rs
from zarr_rs import errors


class _Server:
    """A directory served over HTTP on loopback, each answer after `delay` seconds; counts the
    requests being answered at once."""

    def __init__(self, root, delay):
        self.lock = threading.Lock()
        self.now = 0
        self.peak = 0
        self.total = 0
        server = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (the base class' name)
                with server.lock:
                    server.now += 1
                    server.total += 1
                    server.peak = max(server.peak, server.now)
                try:
                    time.sleep(delay)
                    super().do_GET()
                finally:
                    with server.lock:
                        server.now -= 1

            def log_message(self, *args):
                pass

        class Server(http.server.ThreadingHTTPServer):
            # the listen backlog: hundreds of connections open at once
            request_queue_size = 1024
            daemon_threads = True

        handler = functools.partial(Handler, directory=str(root))
        self.httpd = Server(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def reset(self):
        with self.lock:
            self.peak = 0
            self.total = 0

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def _serve(tmp_path, delay, chunks=(2, 8, 8)):
    data = np.arange(4 * 96 * 96, dtype="uint16").reshape(4, 96, 96)
    a = zarr_rs.create_array(str(tmp_path / "a.zarr"), shape=data.shape, chunks=chunks, dtype="uint16")
    a[...] = data
    server = _Server(tmp_path, delay)
    return server, f"{server.url}/a.zarr", data


@pytest.fixture
def served(tmp_path):
    """The array behind a 200 ms round trip: long enough for every request of a read to be
    seen in flight."""
    server, url, data = _serve(tmp_path, 0.2)
    yield server, url, data
    server.close()


@pytest.fixture
def served_fast(tmp_path):
    """The array behind a 2 ms round trip, for the many reads of the differential test, in
    chunks of 2 x 16 x 16 (72 of them: each read still meets several, and the test server, a
    thread and a connection per request, answers a quarter as many as with 8 x 8)."""
    server, url, data = _serve(tmp_path, 0.002, chunks=(2, 16, 16))
    yield server, url, data
    server.close()


def test_a_plane_keeps_many_requests_in_flight(served):
    server, url, data = served
    a = zarr_rs.open(url, mode="r")
    server.reset()
    np.testing.assert_array_equal(a[1], data[1])
    # 144 chunks, far more at once than cores
    assert server.total == 144
    assert server.peak >= 64, server.peak
    few = zarr_rs.open(url, mode="r", concurrency=4)
    server.reset()
    np.testing.assert_array_equal(few[1, :40], data[1, :40])
    # the server counts a request until its handler returns, a moment after the client has
    # its answer and may have sent the next: a little over 4, never the 40 of the default
    assert 1 <= server.peak <= 6, server.peak


def test_a_bad_concurrency_is_refused(served):
    _, url, _ = served
    for bad in (0,):
        with pytest.raises(errors.InvalidArgumentError, match="concurrency"):
            zarr_rs.open(url, mode="r", concurrency=bad)
    with pytest.raises((OverflowError, TypeError)):
        zarr_rs.open(url, mode="r", concurrency=-1)


def _random_key(rng, shape):
    kind = rng.integers(4)
    if kind == 0:  # slices, some past the ends
        return tuple(
            slice(int(rng.integers(-n - 2, n + 2)), int(rng.integers(-n - 2, n + 2)), int(rng.choice([1, 1, 2, 3])))
            for n in shape
        )
    if kind == 1:  # integers and slices, some out of bounds
        return tuple(
            int(rng.integers(-n - 1, n + 1)) if rng.random() < 0.3 else slice(None) for n in shape
        )
    if kind == 2:  # orthogonal (sorted or not) index lists
        return tuple(
            list(rng.integers(-n, n + (1 if rng.random() < 0.05 else 0), size=int(rng.integers(1, 6))))
            if rng.random() < 0.5
            else slice(None)
            for n in shape
        )
    # points
    k = int(rng.integers(1, 30))
    return tuple(rng.integers(0, n + (1 if rng.random() < 0.05 else 0), size=k) for n in shape)


def _numpy_read(data, key):
    """What NumPy gives for `key` as zarr-python reads it: points (`vindex`), orthogonal lists
    (`oindex`), or basic indexing; and how `a` reads it."""
    if isinstance(key[0], np.ndarray):
        return data[key], "vindex"
    if any(isinstance(k, list) for k in key):
        axes = [np.arange(n)[k] if isinstance(k, slice) else np.asarray(k) for k, n in zip(key, data.shape)]
        return data[np.ix_(*axes)], "oindex"
    return data[key], "basic"


def test_remote_reads_match_numpy(served_fast):
    """Seeded: 200 random keys read over the delaying server, with the values, shapes and
    exception types NumPy gives."""
    _, url, data = served_fast
    a = zarr_rs.open(url, mode="r", concurrency=64)
    rng = np.random.default_rng(41)
    kinds = set()
    for case in range(200):
        key = _random_key(rng, data.shape)
        how = "vindex" if isinstance(key[0], np.ndarray) else ("oindex" if any(isinstance(k, list) for k in key) else "basic")
        try:
            want, _ = _numpy_read(data, key)
        except IndexError as e:
            want = e
        try:
            got = {"vindex": lambda: a.vindex[key], "oindex": lambda: a.oindex[key], "basic": lambda: a[key]}[how]()
        except IndexError as e:
            got = e
        kinds.add((how, isinstance(want, Exception)))
        if isinstance(want, Exception):
            assert isinstance(got, IndexError), (case, key, got)
            continue
        assert not isinstance(got, Exception), (case, key, got)
        assert got.shape == want.shape, (case, key)
        np.testing.assert_array_equal(got, want, err_msg=str((case, key)))
    # every kind of key, read and refused
    assert {("vindex", False), ("oindex", False), ("basic", False), ("basic", True)} <= kinds, kinds
