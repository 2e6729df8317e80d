#!/usr/bin/env python3
"""A/B of two builds of this project's bench programs, interleaved in one run: a change's
before/after measurement ("no cell may drop by more than 5 %").

A and B are folders each holding a release build of `peer-bench`, `string-bench` and
`sparse-table` (e.g. from two git worktrees: `cargo build --release -p zarr-benches --bin
peer-bench --bin string-bench --bin sparse-table`, then copy the three from target/release).
The two builds take turns on every cell, the first of each pair alternating between repeats,
so that a machine's drift in load falls on both.

- peer-bench: every workload and op of `shared/bench/compare.py` (`PROGRAM OP WORKLOAD PATH
  N`); each build writes its own copy, and every read, slab, update and points op of both
  builds runs on one copy (written by A), so both decode the same bytes.
- string-bench: `read` of a 1,000,000-element `string` array (written by zarr-python with its
  default codecs, in chunks of 100,000) and `write` of it into a new array.
- sparse-table: the whole table, run by each build in turn; its time columns are compared.

Prints, per cell, the median seconds of A and of B and B/A (above 1: B is slower), and the
cells where B is more than 5 % slower. Checksums of the two builds must agree.

Usage: python3 benches/ab.py A_DIR B_DIR [--n 512] [--repeat 5] [--dir DIR]
       [--parts peer,string,sparse] [--workloads raw,zstd,blosc,shard]
       [--ops write,read,slab,update,points] [--json samples.json]
The string part needs zarr-python 3.1.6 in the running Python.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ap = argparse.ArgumentParser()
ap.add_argument("a")
ap.add_argument("b")
ap.add_argument("--n", type=int, default=512)
ap.add_argument("--repeat", type=int, default=5)
ap.add_argument("--dir", default=None)
ap.add_argument("--parts", default="peer,string,sparse")
ap.add_argument("--workloads", default="raw,zstd,blosc,shard")
ap.add_argument("--ops", default="write,read,slab,update,points")
ap.add_argument("--json", help="also write every sample here, per cell and build")
args = ap.parse_args()
builds = {"A": args.a, "B": args.b}
work = args.dir or tempfile.mkdtemp(prefix="zarr-ab-")
os.makedirs(work, exist_ok=True)
times = {}  # (part, cell) -> {"A": [...], "B": [...]}


def run(cmd):
    """Runs a bench program; returns its last stdout line as JSON."""
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def pairs(rep):
    """The two builds in this repeat's order."""
    return ("A", "B") if rep % 2 == 0 else ("B", "A")


def record(cell, build, seconds):
    times.setdefault(cell, {"A": [], "B": []})[build].append(seconds)


def agree(cell, sums):
    if len(set(sums.values())) > 1:
        sys.exit(f"checksums differ for {cell}: {sums}")


def peer():
    wls = args.workloads.split(",")
    ops = args.ops.split(",")
    exe = {k: os.path.join(v, "peer-bench") for k, v in builds.items()}
    shared = {w: os.path.join(work, f"{w}-A") for w in wls}
    for rep in range(args.repeat):
        for w in wls:
            if "write" in ops or not os.path.exists(shared[w]):
                sums = {}
                for b in pairs(rep):
                    path = os.path.join(work, f"{w}-{b}")
                    shutil.rmtree(path, ignore_errors=True)
                    subprocess.run(["sync"], check=True)
                    r = run([exe[b], "write", w, path, str(args.n)])
                    sums[b] = r["checksum"]
                    if "write" in ops:
                        record(("peer", f"{w} write"), b, r["seconds"])
                agree(f"{w} write", sums)
            for op in ops:
                if op == "write":
                    continue
                sums = {}
                for b in pairs(rep):
                    r = run([exe[b], op, w, shared[w], str(args.n)])
                    sums[b] = r["checksum"]
                    record(("peer", f"{w} {op}"), b, r["seconds"])
                agree(f"{w} {op}", sums)


def string():
    import numpy as np
    import zarr

    rng = np.random.default_rng(17)
    alphabet = np.array(list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 éü€✓"))
    n = 1_000_000
    lens = rng.integers(0, 31, size=n)
    chars = rng.integers(0, len(alphabet), size=int(lens.sum()))
    flat = "".join(alphabet[chars])
    data = np.empty(n, dtype=object)
    pos = 0
    for i, k in enumerate(lens):
        data[i] = flat[pos:pos + k]
        pos += k
    src = os.path.join(work, "strings-src")
    shutil.rmtree(src, ignore_errors=True)
    z = zarr.create_array(src, shape=(n,), chunks=(100_000,), dtype=str)
    z[...] = data
    exe = {k: os.path.join(v, "string-bench") for k, v in builds.items()}
    for rep in range(args.repeat):
        sums = {}
        for b in pairs(rep):
            r = run([exe[b], "read", src])
            sums[b] = r["checksum"]
            record(("string", "read"), b, r["seconds"])
        agree("string read", sums)
        sums = {}
        for b in pairs(rep):
            dst = os.path.join(work, f"strings-{b}")
            shutil.rmtree(dst, ignore_errors=True)
            subprocess.run(["sync"], check=True)
            r = run([exe[b], "write", src, dst])
            sums[b] = r["checksum"]
            record(("string", "write"), b, r["seconds"])
        agree("string write", sums)


def sparse():
    exe = {k: os.path.join(v, "sparse-table") for k, v in builds.items()}
    # sparse-table takes medians of 3 runs itself; each build runs it once in every other repeat
    for rep in range(max(1, args.repeat // 2)):
        for b in pairs(rep):
            out = subprocess.run([exe[b]], check=True, capture_output=True, text=True).stdout
            rows = [l for l in out.splitlines() if l.startswith("|")]
            head = [c.strip() for c in rows[0].strip("|").split("|")]
            for row in rows[2:]:
                cells = [c.strip() for c in row.strip("|").split("|")]
                for name, value in zip(head, cells):
                    if name.endswith(" ms") and name.split()[0] in ("write", "read", "spmv"):
                        if name.endswith("b ms") or value == "-":
                            continue  # the dense side is the same code in both builds
                        record(("sparse", f"{cells[0]}: {name}"), b, float(value) / 1e3)


for part in args.parts.split(","):
    {"peer": peer, "string": string, "sparse": sparse}[part]()

print(f"A = {args.a}, B = {args.b}; medians of {args.repeat} (sparse: of its runs)")
print()
print("| part | cell | A s | B s | B/A |")
print("|---|---|--:|--:|--:|")
slow = []
for (part, cell), t in times.items():
    a, b = statistics.median(t["A"]), statistics.median(t["B"])
    ratio = b / a if a > 0 else float("nan")
    print(f"| {part} | {cell} | {a:.4f} | {b:.4f} | {ratio:.3f} |")
    if ratio > 1.05:
        slow.append(f"{part} {cell} ({ratio:.3f})")
print()
if args.json:
    with open(args.json, "w") as f:
        json.dump([{"part": p, "cell": c, **t} for (p, c), t in times.items()], f, indent=1)
print("B more than 5 % slower: " + (", ".join(slow) if slow else "no cell"))
if not args.dir:
    shutil.rmtree(work, ignore_errors=True)
