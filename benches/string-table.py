#!/usr/bin/env python3
"""Strings: a 1,000,000-element `string` array (UTF-8 strings of 0..30 characters, some
non-ASCII, seeded) in chunks of 100,000, written by zarr-python 3.1.6 with its default codecs
for strings (vlen-utf8 + zstd), then read whole and written whole by zarr-python and by this
project (`string-bench read PATH`, `string-bench write SRC DST`: `read_region_vlen` /
`write_region_vlen`). The implementations take turns (each repeat starts with the other);
every write starts after `sync`. Every result's checksum (the UTF-8 byte count, the byte sum
and the position-weighted lengths, as string-bench computes it) is checked against NumPy's,
and the project's written array is read back by zarr-python and compared element by element.

Usage: python3 benches/string-table.py STRING_BENCH [--n 1000000] [--chunk 100000]
       [--repeat 5] [--dir DIR]
Prints median seconds and the ratio project speed / zarr-python speed per op.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("string_bench")
ap.add_argument("--n", type=int, default=1_000_000)
ap.add_argument("--chunk", type=int, default=100_000)
ap.add_argument("--repeat", type=int, default=5)
ap.add_argument("--dir", default=None)
args = ap.parse_args()
N = args.n
M64 = (1 << 64) - 1


def make_data(n):
    rng = np.random.default_rng(17)
    alphabet = np.array(list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 éü€✓"))
    lens = rng.integers(0, 31, size=n)
    chars = rng.integers(0, len(alphabet), size=int(lens.sum()))
    flat = "".join(alphabet[chars])
    out = np.empty(n, dtype=object)
    pos = 0
    for i, k in enumerate(lens):
        out[i] = flat[pos:pos + k]
        pos += k
    return out


def checksum(items):
    enc = [s.encode() for s in items]
    lens = np.array([len(b) for b in enc], dtype=np.uint64)
    byts = np.frombuffer(b"".join(enc), dtype=np.uint8)
    total = int(lens.sum())
    bsum = int(byts.sum(dtype=np.uint64))
    weighted = int((np.arange(len(enc), dtype=np.uint64) * lens).sum(dtype=np.uint64))
    return (total * 1_000_003 + bsum * 10_007 + weighted) & M64


DATA = make_data(N)
SUM = checksum(DATA)


def fresh(path):
    shutil.rmtree(path, ignore_errors=True)
    os.sync()


def zarr_python(op, src, dst):
    import zarr
    if op == "write":
        fresh(dst)
        t = time.perf_counter()
        a = zarr.create_array(dst, shape=(N,), chunks=(args.chunk,), dtype=str)
        a[...] = DATA
        return time.perf_counter() - t, SUM
    t = time.perf_counter()
    y = zarr.open_array(src, mode="r")[...]
    dt = time.perf_counter() - t
    return dt, checksum(y)


def project(op, src, dst):
    if op == "write":
        fresh(dst)
        cmd = [args.string_bench, "write", src, dst]
    else:
        cmd = [args.string_bench, "read", src]
    r = subprocess.run(cmd, capture_output=True, text=True, check=True)
    out = json.loads(r.stdout.strip().splitlines()[-1])
    return out["seconds"], out["checksum"]


def main():
    import zarr
    base = args.dir or tempfile.mkdtemp(prefix="zarr-string-bench-")
    src = os.path.join(base, "source")
    fresh(src)
    a = zarr.create_array(src, shape=(N,), chunks=(args.chunk,), dtype=str)
    a[...] = DATA
    codecs = [c["name"] for c in json.load(open(os.path.join(src, "zarr.json")))["codecs"]]
    impls = [("project", project), ("zarr-python", zarr_python)]
    med = {}
    for op in ["read", "write"]:
        times = {name: [] for name, _ in impls}
        for r in range(args.repeat):
            for name, run in impls[r % 2:] + impls[:r % 2]:
                dst = os.path.join(base, f"written_{name}")
                seconds, c = run(op, src, dst)
                if c != SUM:
                    sys.exit(f"{name} {op}: checksum {c}, expected {SUM}")
                times[name].append(seconds)
        for name, _ in impls:
            med[(op, name)] = statistics.median(times[name])
    back = zarr.open_array(os.path.join(base, "written_project"), mode="r")[...]
    if not np.array_equal(back.astype(object), DATA):
        sys.exit("zarr-python reads the project's string array differently")
    print(f"{N} strings (0..30 characters) in chunks of {args.chunk}, codecs {codecs}, "
          f"median of {args.repeat}, seconds")
    print(f"{'op':5} {'project':>9} {'zarr-python':>12} {'project/zarr-python speed':>26}")
    for op in ["read", "write"]:
        p, z = med[(op, "project")], med[(op, "zarr-python")]
        print(f"{op:5} {p:9.4f} {z:12.4f} {z / p:26.2f}")
    if not args.dir:
        shutil.rmtree(base, ignore_errors=True)


main()
