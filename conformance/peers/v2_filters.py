#!/usr/bin/env python3
"""Zarr v2 arrays with random filter chains, written and read by zarr-python 3.1.6, for the
differential test of zarr-rs' v2 filters (zarr-array/tests/interop.rs).

    v2_filters.py write DIR SEED N
    v2_filters.py check DIR

``write`` draws N cases from SEED: a dtype of either byte order (``i2`` ... ``f8``), one or
two filters (numcodecs' Delta, FixedScaleOffset, AsType, Quantize) whose ``dtype`` and
``astype`` take either byte order, order C or F, chunks that do not divide the shape, no
compressor or zstd. For case I it writes, under DIR:

* ``aI``: the array as zarr-python writes it, with the values of ``xI.npy``;
* ``bI``: the same array with no chunk (the other implementation writes ``xI.npy`` into it);
* ``rI.npy``: what zarr-python reads from ``aI``;

and ``cases.json``: one object per case with ``dtype``, ``filters`` (their configurations),
``reinterprets`` (whether a filter's ``dtype`` has another byte order than the values it
receives, so that numcodecs reinterprets their bytes) and ``skip`` (why zarr-python could
not write or read the case back, else null). The ``.npy`` files are little-endian.

``check`` reads every ``bI`` the other implementation wrote (the cases it lists in
``DIR/written.json``) with zarr-python and compares it with ``rI.npy``, and the stored chunks
with those of ``aI`` when there is no compressor; it prints one line per difference and
exits 1 if there is any, 0 otherwise.
"""
from __future__ import annotations

import json
import os
import random
import sys
import warnings

import numpy as np


def other(order: str) -> str:
    return ">" if order == "<" else "<"


def spell(code: str, order: str) -> str:
    """A NumPy dtype string with its byte order (one-byte types have none)."""
    return np.dtype(order + code).str


INTS = ["i1", "i2", "i4", "i8"]
UINTS = ["u1", "u2", "u4", "u8"]
FLOATS = ["f2", "f4", "f8"]


def same_kind(code: str) -> list[str]:
    for group in (INTS, UINTS, FLOATS):
        if code in group:
            return group
    raise ValueError(code)


def draw_case(rng: random.Random) -> dict:
    code = rng.choice(["i2", "i4", "i8", "u2", "u4", "u8", "f2", "f4", "f8"])
    order = rng.choice("<>")
    dtype = spell(code, order)
    # the values in flight: NumPy code and byte order
    flight_code, flight_order = code, order
    filters = []
    reinterprets = False
    for _ in range(rng.choice([1, 1, 2])):
        # mostly the byte order in flight, sometimes the other one (a reinterpretation)
        view_order = flight_order if rng.random() < 0.85 else other(flight_order)
        if np.dtype(flight_code).itemsize > 1 and view_order != flight_order:
            reinterprets = True
        viewed = spell(flight_code, view_order)
        kinds = ["delta", "fixedscaleoffset", "astype"]
        if flight_code in FLOATS:
            kinds.append("quantize")
        kind = rng.choice(kinds)
        out_order = rng.choice("<>")
        if kind == "delta":
            out_code = rng.choice(same_kind(flight_code))
            config = {"id": "delta", "dtype": viewed, "astype": spell(out_code, out_order)}
        elif kind == "fixedscaleoffset":
            # (x - offset) * scale of values in [0, 50] stays in [0, 1000]: no 1-byte types
            out_code = rng.choice(["i2", "i4", "i8", "u2", "u4", "f4", "f8"])
            config = {
                "id": "fixedscaleoffset",
                "offset": 0 if flight_code in UINTS else rng.choice([0, -3]),
                "scale": rng.choice([1, 2, 10]),
                "dtype": viewed,
                "astype": spell(out_code, out_order),
            }
        elif kind == "astype":
            out_code = rng.choice(["i1", "i2", "i4", "i8", "u1", "u2", "u4", "f4", "f8"])
            config = {
                "id": "astype",
                "encode_dtype": spell(out_code, out_order),
                "decode_dtype": viewed,
            }
        else:
            out_code = rng.choice(FLOATS)
            config = {
                "id": "quantize",
                "digits": rng.choice([1, 2, 3]),
                "dtype": viewed,
                "astype": spell(out_code, out_order),
            }
        filters.append(config)
        flight_code, flight_order = out_code, out_order
    rank = rng.choice([1, 2])
    shape = [rng.randint(1, 12) for _ in range(rank)]
    chunks = [rng.randint(1, s) for s in shape]
    return {
        "dtype": dtype,
        "filters": filters,
        "reinterprets": reinterprets,
        "shape": shape,
        "chunks": chunks,
        "order": rng.choice("CF"),
        "compressor": rng.choice([None, None, {"id": "zstd", "level": 1}]),
        "values_seed": rng.randrange(2**32),
    }


def values(case: dict) -> np.ndarray:
    """Values in [0, 50] (multiples of 1/8 for floats): every drawn filter holds them."""
    r = np.random.default_rng(case["values_seed"])
    n = int(np.prod(case["shape"]))
    x = r.integers(0, 51, size=n)
    dt = np.dtype(case["dtype"])
    if dt.kind == "f":
        x = x + r.integers(0, 8, size=n) / 8.0
        x = np.minimum(x, 50)
    return x.astype(dt).reshape(case["shape"])


def create(path: str, case: dict):
    import numcodecs
    import zarr

    return zarr.create_array(
        store=path,
        shape=case["shape"],
        chunks=case["chunks"],
        dtype=np.dtype(case["dtype"]),
        zarr_format=2,
        order=case["order"],
        filters=[numcodecs.get_codec(dict(f)) for f in case["filters"]],
        compressors=(
            None if case["compressor"] is None else numcodecs.get_codec(dict(case["compressor"]))
        ),
        fill_value=0,
        overwrite=True,
    )


def little(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a.astype(a.dtype.newbyteorder("<")))


def write(root: str, seed: int, n: int) -> None:
    import zarr

    rng = random.Random(seed)
    cases = []
    for i in range(n):
        case = draw_case(rng)
        case["skip"] = None
        x = values(case)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                a = create(os.path.join(root, f"a{i}"), case)
                a[...] = x
                create(os.path.join(root, f"b{i}"), case)
                r = zarr.open_array(os.path.join(root, f"a{i}"), mode="r")[...]
        except Exception as e:  # zarr-python / numcodecs refuse the case: nothing to compare
            case["skip"] = f"{type(e).__name__}: {e}"
        else:
            np.save(os.path.join(root, f"x{i}.npy"), little(x))
            np.save(os.path.join(root, f"r{i}.npy"), little(r))
        cases.append(case)
    with open(os.path.join(root, "cases.json"), "w") as f:
        json.dump(cases, f)


def chunk_files(path: str) -> dict[str, bytes]:
    out = {}
    for name in os.listdir(path):
        if not name.startswith("."):
            with open(os.path.join(path, name), "rb") as f:
                out[name] = f.read()
    return out


def check(root: str) -> int:
    import zarr

    with open(os.path.join(root, "cases.json")) as f:
        cases = json.load(f)
    with open(os.path.join(root, "written.json")) as f:
        written = json.load(f)
    bad = 0
    for i in written:
        case = cases[i]
        r = np.load(os.path.join(root, f"r{i}.npy"))
        try:
            b = zarr.open_array(os.path.join(root, f"b{i}"), mode="r")[...]
        except Exception as e:
            print(f"case {i} {case['dtype']} {case['filters']}: zarr-python cannot read ours: "
                  f"{type(e).__name__}: {e}")
            bad += 1
            continue
        if b.shape != r.shape or not np.array_equal(little(b), r):
            print(f"case {i} {case['dtype']} {case['filters']}: zarr-python reads ours as "
                  f"{b.tolist()}, its own as {r.tolist()}")
            bad += 1
            continue
        if case["compressor"] is None:
            ours = chunk_files(os.path.join(root, f"b{i}"))
            theirs = chunk_files(os.path.join(root, f"a{i}"))
            if ours != theirs:
                print(f"case {i} {case['dtype']} {case['filters']}: stored chunks differ: "
                      f"ours {sorted(ours)}, zarr-python's {sorted(theirs)}")
                bad += 1
    return 1 if bad else 0


def main(argv: list[str]) -> int:
    if len(argv) == 4 and argv[0] == "write":
        write(argv[1], int(argv[2]), int(argv[3]))
        return 0
    if len(argv) == 2 and argv[0] == "check":
        return check(argv[1])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
