#!/usr/bin/env python3
"""Read Zarr arrays with a peer implementation, for interoperability tests.

    read_with.py PEER ARRAY_PATH OUT.npy

PEER is ``zarr-python`` or ``tensorstore``.  The whole array is read and saved to
OUT.npy (NumPy format, C order, little-endian); the array's metadata as the peer
sees it is printed to stdout as one JSON document:

* zarr-python: ``arr.metadata.to_dict()`` (made JSON-serialisable: tuples become
  lists, non-finite floats the Zarr spellings "NaN", "Infinity", "-Infinity",
  NumPy scalars plain numbers);
* tensorstore: ``store.spec().to_json()``.

Exit codes: 0 read; 3 the peer refused to open the array (one line on stderr,
``refused: ...``); 1 any other error (bad arguments, a failure while reading).

    read_with.py --batch JOBS.json RESULTS.json

reads many arrays in one process (starting Python and importing a peer costs about a
second; the interop tests read hundreds of arrays): JOBS.json is a list of
``[PEER, ARRAY_PATH, OUT.npy]``, each read as above, in order; RESULTS.json gets one
object per job, ``{"exit": 0|1|3, "meta": <the metadata or null>, "message": <the
stderr line or null>}``. The batch exits 0 when it has written RESULTS.json (whatever
the jobs' exit codes), 1 when it could not.

Run it with the peers' venv:  $(scripts/peers-venv | tail -n1) conformance/peers/read_with.py ...
"""
from __future__ import annotations

import enum
import json
import math
import os
import sys
import warnings

PEERS = ("zarr-python", "tensorstore")


class Refused(Exception):
    """The peer would not open the array."""


def jsonable(x):
    """Turn what a peer reports into plain JSON (NaN etc. spelled as Zarr does)."""
    import numpy as np
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, enum.Enum):
        return jsonable(x.value)
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, bool) or x is None or isinstance(x, (int, str)):
        return x
    if isinstance(x, float):
        if math.isnan(x):
            return "NaN"
        if math.isinf(x):
            return "Infinity" if x > 0 else "-Infinity"
        return x
    if isinstance(x, complex):
        return [jsonable(x.real), jsonable(x.imag)]
    if isinstance(x, (bytes, bytearray)):
        return x.hex()
    if hasattr(x, "to_dict"):
        return jsonable(x.to_dict())
    return str(x)


def read_zarr_python(path):
    warnings.filterwarnings("ignore")
    import zarr
    try:
        arr = zarr.open_array(path, mode="r")
    except Exception as e:  # noqa: BLE001 - any failure to open is a refusal
        raise Refused(f"{type(e).__name__}: {e}") from e
    return arr[...], jsonable(arr.metadata.to_dict())


def read_tensorstore(path):
    import tensorstore as ts
    try:
        # Zarr v2 (a .zarray and no zarr.json): TensorStore's "zarr" driver
        v2 = os.path.exists(os.path.join(path, ".zarray")) and not os.path.exists(
            os.path.join(path, "zarr.json"))
        driver = "zarr" if v2 else "zarr3"
        store = ts.open({"driver": driver, "kvstore": {"driver": "file", "path": path}},
                        open=True, read=True).result()
    except Exception as e:  # noqa: BLE001
        raise Refused(f"{type(e).__name__}: {e}") from e
    return store.read().result(), store.spec().to_json()


def read(peer, path, out):
    """Reads the array at `path` with `peer` into `out`: ``(exit code, the metadata as the
    peer sees it or None, the error line or None)``."""
    if peer not in PEERS:
        return 1, None, f"error: unknown peer {peer!r} (one of {', '.join(PEERS)})"
    if not os.path.isdir(path):
        return 1, None, f"error: no such directory: {path}"
    import numpy as np
    try:
        data, meta = (read_zarr_python if peer == "zarr-python" else read_tensorstore)(path)
    except Refused as e:
        return 3, None, "refused: " + " ".join(str(e).split())
    except Exception as e:  # noqa: BLE001
        return 1, None, f"error: {type(e).__name__}: " + " ".join(str(e).split())
    try:
        data = np.array(data, order="C")  # keeps 0-d arrays 0-d
        if data.dtype.kind in "OT":
            # variable-size strings and bytes: NumPy's fixed-size 'U' / 'S' (no pickle); 'S'
            # drops trailing NULs, as NumPy does
            kind = "S" if data.size and isinstance(data.flat[0], bytes) else "U"
            data = np.array(data.astype(object).tolist(),
                            dtype=kind if data.size else f"{kind}1")
        if data.dtype.byteorder == ">":
            data = data.astype(data.dtype.newbyteorder("<"))
        np.save(out, data, allow_pickle=False)
        json.dumps(meta, allow_nan=False)  # fails here, as an error of this read, if not JSON
    except Exception as e:  # noqa: BLE001
        return 1, None, f"error: {type(e).__name__}: " + " ".join(str(e).split())
    return 0, meta, None


def main(argv) -> int:
    if len(argv) == 3 and argv[0] == "--batch":
        with open(argv[1]) as f:
            jobs = json.load(f)
        results = []
        for peer, path, out in jobs:
            code, meta, message = read(peer, path, out)
            results.append({"exit": code, "meta": meta, "message": message})
        with open(argv[2], "w") as f:
            json.dump(results, f, allow_nan=False)
        return 0
    if len(argv) != 3 or argv[0] not in PEERS:
        print(f"usage: read_with.py {{{'|'.join(PEERS)}}} ARRAY_PATH OUT.npy\n"
              "       read_with.py --batch JOBS.json RESULTS.json", file=sys.stderr)
        return 1
    code, meta, message = read(*argv)
    if message is not None:
        print(message, file=sys.stderr)
    if code == 0:
        json.dump(meta, sys.stdout, indent=1, allow_nan=False)
        print()
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
