"""Dask over a sparse matrix: zarr_rs sparse blocks vs zarr-python + the NumPy sparse_layout
plugin vs a dense + zstd array, on a dask.distributed LocalCluster.

The matrix: 20000 x 5000 float32 at 1 % density (1e6 entries; seeded), chunks 2000 x 5000
(row bands: 10 blocks).
Three stores of it, each written once:

  zarr_rs sparse   sparse_layout CSR + zstd (zarr_rs.create_array(..., sparse="csr")), read with
                   Array.to_dask(): each block a scipy.sparse.csr_array built by the engine
  zarr-python+plugin  the same array read by zarr-python 3.1.6 with the NumPy sparse_layout codec
                   of this repo's python/ package (which densifies each chunk), via
                   dask.array.from_zarr
  dense+zstd       the dense matrix, bytes + zstd (zarr-python's defaults), via dask.array.from_zarr

Ops, each timed on a fresh 2-worker LocalCluster (1 thread per worker, processes, loopback),
after one untimed warm-up run (imports, the workers opening the array), the median of
--repeat runs: x.sum() and x @ v (v a float32 vector of ones). Each result is checked against
SciPy's. Peak worker memory: the largest peak RSS (VmHWM, reset after the warm-up) of the two
worker processes over the timed runs, and the same minus each worker's RSS at the reset (the
interpreter, imports and opened array): what the op itself added.

Usage: python zarr-py/bench/dask_sparse.py [--dir DIR] [--repeat 3] [--json out.json]
Needs: zarr_rs installed (scripts/test does it), zarr==3.1.6, dask, distributed, scipy; run from
the repository root (the plugin is imported from ./python).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time

import numpy as np
import scipy.sparse as sp

ROWS, COLS, DENSITY, CHUNK = 20000, 5000, 0.01, (2000, 5000)


def matrix() -> sp.csr_array:
    rng = np.random.default_rng(20000)
    m = sp.random_array((ROWS, COLS), density=DENSITY, format="csr", dtype=np.float32, rng=rng)
    m.data += np.float32(1)
    return m


def write_stores(root: str, m: sp.csr_array) -> dict[str, str]:
    import zarr
    import zarr_rs

    paths = {k: os.path.join(root, f"{k}.zarr") for k in ("sparse", "dense")}
    for p in paths.values():
        shutil.rmtree(p, ignore_errors=True)
    a = zarr_rs.create_array(paths["sparse"], shape=m.shape, chunks=CHUNK, dtype="float32", sparse="csr")
    a.write_sparse(m)
    d = zarr.create_array(paths["dense"], shape=m.shape, chunks=CHUNK, dtype="float32", fill_value=0)
    d[...] = m.toarray()
    return paths


def du(path: str) -> int:
    return sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(path) for f in fs)


def _status(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def worker_reset_peak() -> int:
    """Resets the process's peak RSS (VmHWM) to its current RSS and returns that RSS.
    (ru_maxrss would not do: Linux keeps it across fork and exec, so a worker would inherit
    the peak of the process that started it.)"""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    return _status("VmRSS")


def worker_peak() -> int:
    """The peak RSS since the last reset (VmHWM)."""
    return _status("VmHWM")


def opener(case: str, path: str):
    """A function that builds the Dask array for a case (run on the client)."""
    import dask.array as da

    if case == "zarr_rs sparse":
        import zarr_rs

        return zarr_rs.open_array(path, mode="r").to_dask()
    import zarr

    if case == "zarr-python+plugin":
        import zarr_sparse_layout  # noqa: F401  (registers the codec)
    return da.from_zarr(zarr.open_array(path, mode="r"))


def run_case(case: str, path: str, op: str, repeat: int, m: sp.csr_array, v: np.ndarray,
             scheduler: str) -> dict:
    import contextlib

    import dask

    want = m.sum() if op == "sum" else m @ v

    def timed(run_all) -> tuple[list[float], dict, dict]:
        x = opener(case, path)
        (x.sum() if op == "sum" else x @ v).compute()  # warm-up: imports, opening the array
        base = run_all(worker_reset_peak)
        times = []
        for _ in range(repeat):
            x = opener(case, path)
            t = time.perf_counter()
            got = (x.sum() if op == "sum" else x @ v).compute()
            times.append(time.perf_counter() - t)
            got = np.asarray(got.todense() if hasattr(got, "todense") else got)
            if not np.allclose(got, want, rtol=1e-4):
                raise SystemExit(f"{case} {op}: wrong result")
        return times, base, run_all(worker_peak)

    if scheduler == "threads":
        # one process, Dask's thread pool (2 threads): the peak is this process's
        with dask.config.set(scheduler="threads", num_workers=2):
            times, base, peaks = timed(lambda f: {"self": f()})
    else:
        from distributed import Client, LocalCluster

        with contextlib.ExitStack() as stack:
            cluster = stack.enter_context(LocalCluster(
                n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                dashboard_address=None))
            client = stack.enter_context(Client(cluster))
            if case == "zarr-python+plugin":
                client.run(lambda: __import__("zarr_sparse_layout"))
            times, base, peaks = timed(client.run)
    return {
        "case": case, "op": op, "scheduler": scheduler, "seconds": statistics.median(times),
        "runs": times, "peak_rss_mib": max(peaks.values()) / 2**20,
        "peak_above_start_mib": max(peaks[w] - base[w] for w in peaks) / 2**20,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "zarr-rs-dask-bench"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--scheduler", default="distributed,threads",
                    help="distributed (a 2-process LocalCluster) and/or threads (one process)")
    ap.add_argument("--json")
    args = ap.parse_args()
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    plugin = os.path.join(repo, "python")
    sys.path.insert(0, plugin)
    os.environ["PYTHONPATH"] = plugin + os.pathsep + os.environ.get("PYTHONPATH", "")
    os.makedirs(args.dir, exist_ok=True)
    m = matrix()
    paths = write_stores(args.dir, m)
    v = np.ones(COLS, np.float32)
    cases = {"zarr_rs sparse": paths["sparse"], "zarr-python+plugin": paths["sparse"], "dense+zstd": paths["dense"]}
    print(f"{ROWS}x{COLS} float32, density {DENSITY}, nnz {m.nnz}, chunks {CHUNK}; stored: "
          f"sparse {du(paths['sparse']) / 2**20:.1f} MiB, dense+zstd {du(paths['dense']) / 2**20:.1f} MiB")
    rows = []
    for scheduler in args.scheduler.split(","):
        for op in ("sum", "matvec"):
            for case, path in cases.items():
                r = run_case(case, path, op, args.repeat, m, v, scheduler)
                rows.append(r)
                print(f"{scheduler:11s} {op:6s} {case:20s} {r['seconds'] * 1e3:8.1f} ms   peak RSS "
                      f"{r['peak_rss_mib']:7.1f} MiB (+{r['peak_above_start_mib']:.1f} MiB over start)")
            ours = next(r for r in rows if r["op"] == op and r["case"] == "zarr_rs sparse"
                        and r["scheduler"] == scheduler)
            for r in rows:
                if r["op"] == op and r is not ours and r["scheduler"] == scheduler:
                    print(f"       zarr_rs sparse vs {r['case']}: {r['seconds'] / ours['seconds']:.1f}x faster, "
                          f"memory over start {ours['peak_above_start_mib'] / max(r['peak_above_start_mib'], 1e-9):.2f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
