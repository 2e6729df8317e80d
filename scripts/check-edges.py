#!/usr/bin/env python3
"""Checks the workspace's internal dependency edges against the architecture table.

Every dependency (normal, build and dev) of a workspace crate on another workspace crate must
be allowed below; edges only point down. Reads `cargo metadata --no-deps`.

zarr-testkit, the shared test kit (publish = false), depends on no workspace crate, so every
crate may dev-depend on it, the lowest ones included; only the unpublished zarr-benches may
also depend on it as a normal dependency (for its measuring programs).
"""
import json
import subprocess
import sys

ALLOWED = {
    "zarr-buffer": set(),
    "zarr-meta": set(),
    "zarr-store": {"zarr-buffer"},
    "zarr-grid": {"zarr-meta"},
    "zarr-layout-sparse": {"zarr-buffer"},
    "zarr-codecs": {"zarr-buffer", "zarr-meta", "zarr-grid", "zarr-layout-sparse"},
    "zarr-numcodecs": {"zarr-buffer", "zarr-meta", "zarr-grid", "zarr-codecs"},
    "zarr-array": {
        "zarr-buffer",
        "zarr-meta",
        "zarr-grid",
        "zarr-layout-sparse",
        "zarr-codecs",
        "zarr-numcodecs",
        "zarr-store",
    },
    "zarr-sparse-io": {"zarr-array"},
    "zarr-cli": {"zarr-array", "zarr-sparse-io"},
    "zarr-benches": {"zarr-array", "zarr-sparse-io"},
    "zarr-py": {"zarr-array", "zarr-sparse-io"},
    "zarr-testkit": set(),
}

# Dev-only crates: every crate may dev-depend on them; normal and build edges to them only
# from the crates listed.
DEV_ONLY = {"zarr-testkit": {"zarr-benches"}}


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
            kind = dep["kind"] or "normal"
            if target in DEV_ONLY:
                if kind != "dev" and name not in DEV_ONLY[target]:
                    problems.append(
                        f"{name} -> {target} ({kind} dependency): {target} is for dev-dependencies only"
                    )
                continue
            if target not in ALLOWED[name]:
                problems.append(f"{name} -> {target} ({kind} dependency) is not an allowed edge")
    for p in problems:
        print(f"check-edges: {p}", file=sys.stderr)
    if problems:
        return 1
    print(f"check-edges: {len(members)} crates, every internal edge allowed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
