#!/usr/bin/env python3
"""Sparse conversion benchmark (issue 40, item 5): a 20000 x 50000 float32 matrix at 2 %
density (20 M entries) converted into a sparse_layout array by `zarr import` from `.mtx.gz`,
`.npz` and an anndata group, against the path an anndata user takes today:

- `.mtx.gz`: `scipy.io.mmread` (or `scanpy.read_mtx` when scanpy is installed: the same
  reader) + `anndata.AnnData(X=...).write_zarr`;
- `.npz`: `scipy.sparse.load_npz` + `write_zarr`;
- the anndata group: `anndata.read_zarr` + `write_zarr` (and `read_zarr` alone, shown too).

The `.mtx.gz` is written column by column (as 10x Genomics writes its matrices), so our import
sorts it on the way (spilling bands of rows past half of --max-memory). Each conversion runs in
a fresh process; its wall time and peak RSS (ru_maxrss of that child) are measured, each
`--repeat` times, the best time and the largest peak kept.

    python benches/sparse-convert.py --zarr target/release/zarr --dir /tmp/sparse-bench

Prints a Markdown table (speed = their time / ours; memory = our peak / theirs).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROWS, COLS, DENSITY = 20000, 50000, 0.02


def make_inputs(d: Path, seed: int) -> None:
    import anndata as ad
    import numpy as np
    import scipy.io
    import scipy.sparse as sp

    if (d / "done").exists():
        return
    d.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    per_row = int(COLS * DENSITY)
    # exactly 1000 distinct columns a row: 20 M entries
    cols = np.concatenate([np.sort(rng.choice(COLS, per_row, replace=False)) for _ in range(ROWS)])
    indptr = np.arange(0, ROWS * per_row + 1, per_row, dtype=np.int64)
    data = rng.random(ROWS * per_row, dtype=np.float32) + np.float32(0.5)
    m = sp.csr_matrix((data, cols.astype(np.int32), indptr), shape=(ROWS, COLS))
    scipy.io.mmwrite(d / "m.mtx", m.tocsc())  # column-major, as 10x Genomics writes
    subprocess.run(["gzip", "-f", "-4", str(d / "m.mtx")], check=True)
    sp.save_npz(d / "m.npz", m)
    ad.AnnData(X=m).write_zarr(d / "ad.zarr")
    (d / "done").write_text("ok")


def measure(cmd: list[str], out: Path) -> tuple[float, int]:
    """Runs `cmd` in a fresh child of a fresh process: (seconds, peak RSS in bytes)."""
    shutil.rmtree(out, ignore_errors=True)
    probe = (
        "import resource, subprocess, sys, time\n"
        "t = time.perf_counter()\n"
        "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)\n"
        "t = time.perf_counter() - t\n"
        "print(t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)\n"
    )
    res = subprocess.run([sys.executable, "-c", probe, *cmd], check=True, capture_output=True, text=True)
    t, rss = res.stdout.split()
    shutil.rmtree(out, ignore_errors=True)
    return float(t), int(rss)


THEIRS = {
    "mtx": (
        "import sys, anndata as ad, scipy.io\n"
        "try:\n"
        "    import scanpy as sc; a = sc.read_mtx(sys.argv[1])\n"
        "except ImportError:\n"
        "    a = ad.AnnData(X=scipy.io.mmread(sys.argv[1]).tocsr())\n"
        "a.write_zarr(sys.argv[2])\n"
    ),
    "npz": "import sys, anndata as ad, scipy.sparse as sp\nad.AnnData(X=sp.load_npz(sys.argv[1])).write_zarr(sys.argv[2])\n",
    "group": "import sys, anndata as ad\nad.read_zarr(sys.argv[1]).write_zarr(sys.argv[2])\n",
    "read_zarr": "import sys, anndata as ad\nad.read_zarr(sys.argv[1])\n",
}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--zarr", required=True, help="the zarr command (a --release build)")
    p.add_argument("--dir", default="/tmp/sparse-bench", type=Path)
    p.add_argument("--max-memory", default="256M", help="our --max-memory")
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--seed", type=int, default=40)
    a = p.parse_args()
    d: Path = a.dir
    make_inputs(d, a.seed)
    srcs = {"mtx": d / "m.mtx.gz", "npz": d / "m.npz", "group": d / "ad.zarr" / "X"}
    rows = []
    for name, src in srcs.items():
        ours = [measure([a.zarr, "import", str(src), str(d / "ours.zarr"), "--max-memory", a.max_memory, "--temp-dir", str(d)], d / "ours.zarr") for _ in range(a.repeat)]
        # anndata reads the whole store the element is in
        their_src = src.parent if name == "group" else src
        theirs = [measure([sys.executable, "-c", THEIRS[name], str(their_src), str(d / "theirs.zarr")], d / "theirs.zarr") for _ in range(a.repeat)]
        ot, om = min(t for t, _ in ours), max(m for _, m in ours)
        tt, tm = min(t for t, _ in theirs), max(m for _, m in theirs)
        rows.append((name, ot, om, tt, tm))
    rz = [measure([sys.executable, "-c", THEIRS["read_zarr"], str(srcs["group"].parent)], d / "none") for _ in range(a.repeat)]
    print(f"20000 x 50000 float32, 2 % (20 M entries); ours: {a.zarr} --max-memory {a.max_memory}; "
          f"inputs: .mtx.gz {os.path.getsize(srcs['mtx']) >> 20} MiB, .npz {os.path.getsize(srcs['npz']) >> 20} MiB")
    print()
    print("| from | ours | peak | theirs | peak | speed | memory |")
    print("|---|--:|--:|--:|--:|--:|--:|")
    for name, ot, om, tt, tm in rows:
        print(f"| {name} | {ot:.1f} s | {om >> 20} MiB | {tt:.1f} s | {tm >> 20} MiB | {tt / ot:.2f}x | {om / tm:.2f} |")
    rt, rm = min(t for t, _ in rz), max(m for _, m in rz)
    print(f"\n`anndata.read_zarr` of the group alone: {rt:.1f} s, {rm >> 20} MiB")
    print(json.dumps({"rows": rows, "read_zarr": [rt, rm]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
