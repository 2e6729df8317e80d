#!/usr/bin/env python3
"""A conformance reader built on zarr-python (3.1.6): ``zarr_python_reader.py ARRAY_PATH OUT.npy``.

Reads the whole array at ARRAY_PATH and saves it to OUT.npy (C order, little-endian, 0-d arrays
stay 0-d). Exit codes: 0 read; 3 zarr-python refused to open the array (one line on stderr,
``refused: ...``); 1 any other failure. ``zarr conformance run DIR -- python zarr_python_reader.py``
runs it on every array fixture of a corpus; any non-zero exit counts as refused.
"""
import sys
import warnings


def main(argv):
    if len(argv) != 2:
        print("usage: zarr_python_reader.py ARRAY_PATH OUT.npy", file=sys.stderr)
        return 1
    path, out = argv
    warnings.filterwarnings("ignore")
    import numpy as np
    import zarr

    try:
        arr = zarr.open_array(store=path, mode="r")
    except Exception as e:  # noqa: BLE001 - any failure to open is a refusal
        print("refused: " + " ".join(f"{type(e).__name__}: {e}".split()), file=sys.stderr)
        return 3
    try:
        data = np.array(arr[...], order="C")
    except Exception as e:  # noqa: BLE001
        print("error: " + " ".join(f"{type(e).__name__}: {e}".split()), file=sys.stderr)
        return 1
    if data.dtype.byteorder == ">":
        data = data.astype(data.dtype.newbyteorder("<"))
    np.save(out, data, allow_pickle=False)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
