#!/usr/bin/env python3
"""Zarr v2 against Zarr v3: compare.py's workloads (raw, zstd, blosc; N^3 uint16 in 64^3
chunks, compare.py's data) written and read by this project as v3 and as v2 (`peer-bench OP
WORKLOAD PATH N 2`: the `.zarray` zarr-python writes, keys `0.0.0`), and by zarr-python 3.1.6
with `zarr_format=2` (numcodecs' Zstd(level=1) and Blosc(lz4, 5, SHUFFLE)). The
implementations take turns, each repeat starting one further (A B C, B C A, ...), and every
write starts after `sync`, so that none pays for the writeback of another's output; every result's checksum is checked against
NumPy's, and each v2 array this project writes is read back by zarr-python.

Usage: python3 benches/v2-table.py PEER_BENCH [--n 256] [--repeat 3] [--dir DIR]
Prints MiB/s medians, then v2/v3 (the project's v2 form against its v3 form) and
project v2 / zarr-python v2 per workload and op.
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
ap.add_argument("peer_bench")
ap.add_argument("--n", type=int, default=256)
ap.add_argument("--repeat", type=int, default=3)
ap.add_argument("--dir", default=None)
ap.add_argument("--workloads", default="raw,zstd,blosc")
args = ap.parse_args()
N = args.n


def make_data(n):
    # compare.py's formula
    i = np.arange(n, dtype=np.uint64)[:, None, None]
    j = np.arange(n, dtype=np.uint64)[None, :, None]
    k = np.arange(n, dtype=np.uint64)[None, None, :]
    with np.errstate(over="ignore"):
        v = ((i + 2 * j + 3 * k) & np.uint64(4095)) + (
            ((i * np.uint64(73856093)) ^ (j * np.uint64(19349663)) ^ (k * np.uint64(83492791)))
            & np.uint64(15))
    return v.astype(np.uint16)


DATA = make_data(N)
SUM = int(DATA.sum(dtype=np.uint64))
MIB = DATA.nbytes / 2**20


def fresh(path):
    # a write starts with the previous output gone and the dirty pages of every earlier write
    # on disk, so that no implementation pays for the writeback of another's
    shutil.rmtree(path, ignore_errors=True)
    os.sync()


def project(fmt):
    def run(op, w, path):
        if op == "write":
            fresh(path)
        cmd = [args.peer_bench, op, w, path, str(N)] + ([str(fmt)] if op == "write" else [])
        r = subprocess.run(cmd, capture_output=True, text=True, check=True)
        out = json.loads(r.stdout.strip().splitlines()[-1])
        return out["seconds"], out["checksum"]
    return run


def zarr_python_v2(op, w, path):
    import numcodecs
    import zarr
    if op == "write":
        fresh(path)
        comp = {"raw": None, "zstd": numcodecs.Zstd(level=1),
                "blosc": numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE)}[w]
        t = time.perf_counter()
        a = zarr.create_array(path, shape=(N,) * 3, chunks=(64,) * 3, dtype="uint16",
                              zarr_format=2, compressors=comp, filters=None, fill_value=0)
        a[...] = DATA
        return time.perf_counter() - t, SUM
    t = time.perf_counter()
    y = zarr.open_array(path, mode="r")[...]
    dt = time.perf_counter() - t
    return dt, int(y.sum(dtype=np.uint64))


def main():
    base = args.dir or tempfile.mkdtemp(prefix="zarr-v2-bench-")
    impls = [("project v3", project(3)), ("project v2", project(2)),
             ("zarr-python v2", zarr_python_v2)]
    results = {}
    for w in args.workloads.split(","):
        for op in ["write", "read"]:
            times = {name: [] for name, _ in impls}
            for r in range(args.repeat):
                # each implementation follows each other in turn
                for name, run in impls[r % len(impls):] + impls[:r % len(impls)]:
                    path = os.path.join(base, f"{name.replace(' ', '_')}_{w}")
                    seconds, checksum = run(op, w, path)
                    if checksum != SUM:
                        sys.exit(f"{name} {op} {w}: checksum {checksum}, expected {SUM}")
                    times[name].append(seconds)
            for name, _ in impls:
                results[(w, op, name)] = MIB / statistics.median(times[name])
        # the project's v2 output reads back equal in zarr-python
        _, checksum = zarr_python_v2("read", w, os.path.join(base, f"project_v2_{w}"))
        if checksum != SUM:
            sys.exit(f"zarr-python reads the project's v2 {w} array differently")
    print(f"N={N} ({MIB:.0f} MiB uint16), median of {args.repeat}, MiB/s")
    print(f"{'workload':8} {'op':5} {'project v3':>11} {'project v2':>11} {'zarr-python v2':>15}"
          f" {'v2/v3':>6} {'v2/zarr-python v2':>18}")
    for w in args.workloads.split(","):
        for op in ["write", "read"]:
            v3, v2, zp = (results[(w, op, n)] for n in ["project v3", "project v2", "zarr-python v2"])
            print(f"{w:8} {op:5} {v3:11.0f} {v2:11.0f} {zp:15.0f} {v2 / v3:6.2f} {v2 / zp:18.2f}")
    if not args.dir:
        shutil.rmtree(base, ignore_errors=True)


main()
