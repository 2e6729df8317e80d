"""Text arrays from Python: zarr_rs against zarr-python 3.1.6 reading and writing 1,000,000
strings (0-30 ASCII characters, seeded) in chunks of 100,000 with zarr-python's default codecs
(vlen-utf8 + zstd).

Read: the whole array of zarr-python's writing, zarr-python to a NumPy StringDType array (its
NumPy 2 default), zarr_rs to an object array of ``str``; the two are checked equal. Write: the
whole array from one object array of ``str``, each library into its own array. Each figure is
the median of --repeat runs; ratios are zarr-python's time over zarr_rs's.

Usage: python zarr-py/bench/strings.py [--repeat 5] [--n 1000000]
Needs: zarr_rs installed (scripts/test does it, in debug: build it with
``maturin develop --release -m zarr-py/Cargo.toml`` for figures), zarr==3.1.6.
"""

from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np
import zarr

import zarr_rs


def median_time(f, k):
    ts = []
    for _ in range(k):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return sorted(ts)[k // 2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--n", type=int, default=1_000_000)
    args = ap.parse_args()
    n = args.n
    rng = np.random.default_rng(1)
    alphabet = np.array(list("abcdefghijklmnopqrstuvwxyz0123456789"))
    lens = rng.integers(0, 31, n)
    flat = rng.choice(alphabet, int(lens.sum()))
    words = np.array(["".join(p) for p in np.split(flat, np.cumsum(lens)[:-1])], dtype=object)
    d = tempfile.mkdtemp()
    z = zarr.create_array(d + "/zp", shape=(n,), chunks=(100_000,), dtype=str)
    z[...] = words
    a = zarr_rs.open(d + "/zp")
    got = a[...]
    want = zarr.open_array(d + "/zp", mode="r")[...]
    assert got.dtype == object and got.tolist() == np.asarray(want, dtype=object).tolist()
    tz = median_time(lambda: zarr.open_array(d + "/zp", mode="r")[...], args.repeat)
    tr = median_time(lambda: a[...], args.repeat)
    print(f"read  {n} strings: zarr-python {tz:.3f} s, zarr_rs {tr:.3f} s: {tz / tr:.2f}x")
    b = zarr_rs.create_array(d + "/rs", shape=(n,), chunks=(100_000,), dtype=str)
    wz = median_time(lambda: z.__setitem__(Ellipsis, words), args.repeat)
    wr = median_time(lambda: b.__setitem__(Ellipsis, words), args.repeat)
    assert zarr.open_array(d + "/rs", mode="r")[...].tolist() == words.tolist()
    print(f"write {n} strings: zarr-python {wz:.3f} s, zarr_rs {wr:.3f} s: {wz / wr:.2f}x")


if __name__ == "__main__":
    main()
