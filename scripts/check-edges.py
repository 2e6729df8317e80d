#!/usr/bin/env python3
"""Checks the workspace's internal dependency edges against the architecture table.

Every dependency (normal, build and dev) of a workspace crate on another workspace crate must
be allowed below; edges only point down. Reads `cargo metadata --no-deps`.
"""
import json
import subprocess
import sys

ALLOWED = {
    "zarr-buffer": set(),
    "zarr-meta": set(),
    "zarr-store": {"zarr-buffer"},
    "zarr-grid": {"zarr-meta"},
    "zarr-layout-sparse": {"zarr-buffer", "zarr-meta", "zarr-grid"},
    "zarr-codecs": {"zarr-buffer", "zarr-meta", "zarr-grid", "zarr-layout-sparse"},
    "zarr-array": {
        "zarr-buffer",
        "zarr-meta",
        "zarr-grid",
        "zarr-layout-sparse",
        "zarr-codecs",
        "zarr-store",
    },
    "zarr-cli": {"zarr-array"},
    "zarr-benches": {"zarr-array"},
    "zarr-py": {"zarr-array"},
}


def main() -> int:
    meta = json.loads(
        subprocess.check_output(["cargo", "metadata", "--no-deps", "--format-version", "1"])
    )
    members = {p["name"] for p in meta["packages"]}
    problems = []
    for pkg in meta["packages"]:
        name = pkg["name"]
        if name not in ALLOWED:
            problems.append(f"{name}: not in the architecture table")
            continue
        for dep in pkg["dependencies"]:
            target = dep["name"]
            if target not in members or target == name:
                continue
            if target not in ALLOWED[name]:
                kind = dep["kind"] or "normal"
                problems.append(f"{name} -> {target} ({kind} dependency) is not an allowed edge")
    for p in problems:
        print(f"check-edges: {p}", file=sys.stderr)
    if problems:
        return 1
    print(f"check-edges: {len(members)} crates, every internal edge allowed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
