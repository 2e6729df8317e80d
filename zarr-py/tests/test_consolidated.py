"""Consolidated metadata from Python: groups open through it, ``consolidate_metadata`` writes
what zarr-python writes, changes through zarr_rs keep it true for zarr-python, and children
this build cannot read are listed as such."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import zarr_rs


def _root_doc(path) -> dict:
    return json.loads((pathlib.Path(path) / "zarr.json").read_text())


def test_consolidate_metadata_writes_what_zarr_python_writes(tmp_path):
    import shutil

    import zarr

    theirs = str(tmp_path / "theirs.zarr")
    g = zarr.open_group(theirs, mode="w", attributes={"title": "t"})
    g.create_group("sub", attributes={"k": 1}).create_array("x", shape=(4,), dtype="i4")
    g.create_array("Y", shape=(3, 2), dtype="f8", chunks=(2, 2), dimension_names=["t", "u"])
    ours = str(tmp_path / "ours.zarr")
    shutil.copytree(theirs, ours)
    zarr.consolidate_metadata(theirs)
    group = zarr_rs.consolidate_metadata(ours)
    assert group.is_consolidated
    assert json.dumps(_root_doc(ours)) == json.dumps(_root_doc(theirs))


def test_groups_open_through_their_copy_and_changes_keep_it_true(tmp_path):
    import zarr

    path = str(tmp_path / "h.zarr")
    root = zarr_rs.create_group(path)
    sub = root.create_group("sub")
    a = sub.create_array("a", shape=(4, 2), chunks=(2, 2), dtype="float32")
    a[...] = 1.5
    zarr_rs.consolidate_metadata(path)

    g = zarr_rs.open_group(path, mode="r+", use_consolidated=True)
    assert g.is_consolidated
    assert [name for name, _ in g.members(max_depth=None)] == ["sub", "sub/a"]
    arr = g["sub/a"]
    arr.append(np.full((3, 2), 2.5, dtype="float32"))
    g["sub"].attrs["k"] = 7
    g.create_array("b", shape=(5,), chunks=(5,), dtype="int8")

    z = zarr.open_group(path, mode="r", use_consolidated=True)
    assert z["sub/a"].shape == (7, 2)
    assert z["sub"].attrs["k"] == 7
    assert sorted(k for k, _ in z.members(max_depth=None)) == ["b", "sub", "sub/a"]
    np.testing.assert_array_equal(z["sub/a"][5], [2.5, 2.5])

    assert not zarr_rs.open_group(path, mode="r", use_consolidated=False).is_consolidated
    bare = str(tmp_path / "bare.zarr")
    zarr_rs.create_group(bare)
    with pytest.raises(zarr_rs.ZarrError, match="no consolidated metadata"):
        zarr_rs.open_group(bare, mode="r", use_consolidated=True)


def test_members_list_children_this_build_cannot_read(tmp_path):
    path = tmp_path / "m.zarr"
    root = zarr_rs.create_group(str(path))
    root.create_array("plain", shape=(3,), chunks=(3,), dtype="uint8")
    doc = json.loads((path / "plain" / "zarr.json").read_text())
    doc["codecs"].append({"name": "no_such_codec"})
    (path / "odd").mkdir()
    (path / "odd" / "zarr.json").write_text(json.dumps(doc))
    for consolidated in (False, True):
        if consolidated:
            zarr_rs.consolidate_metadata(str(path))
        g = zarr_rs.open_group(str(path), mode="r")
        assert g.is_consolidated == consolidated
        members = dict(g.members())
        assert isinstance(members["plain"], zarr_rs.Array)
        odd = members["odd"]
        assert isinstance(odd, zarr_rs.Unreadable), odd
        assert "no_such_codec" in odd.reason and odd.path == "odd"
        assert g.array_keys() == ["plain"] and list(g) == ["odd", "plain"]
