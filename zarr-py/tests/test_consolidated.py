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


def _zmetadata(path) -> dict:
    return json.loads((pathlib.Path(path) / ".zmetadata").read_text())


def _v2_hierarchy(path) -> None:
    import zarr

    g = zarr.open_group(path, mode="w", zarr_format=2, attributes={"title": "t"})
    s = g.create_group("sub", attributes={"k": 1})
    s.create_array("x", shape=(4,), dtype="i4", chunks=(2,))
    g.create_array("Y", shape=(3, 2), dtype="f8", chunks=(2, 2), attributes={"units": "m"})


def test_consolidate_metadata_of_a_v2_group_writes_what_zarr_python_writes(tmp_path):
    import shutil

    import zarr

    theirs = str(tmp_path / "theirs.zarr")
    _v2_hierarchy(theirs)
    ours = str(tmp_path / "ours.zarr")
    shutil.copytree(theirs, ours)
    zarr.consolidate_metadata(theirs, zarr_format=2)
    group = zarr_rs.consolidate_metadata(ours)
    assert group.is_consolidated and group.zarr_format == 2
    assert (pathlib.Path(ours) / ".zmetadata").read_bytes() == (
        pathlib.Path(theirs) / ".zmetadata"
    ).read_bytes()
    assert not (pathlib.Path(ours) / "zarr.json").exists()


def test_v2_groups_open_through_their_zmetadata_and_changes_keep_it_true(tmp_path):
    import zarr

    path = str(tmp_path / "v2.zarr")
    _v2_hierarchy(path)
    zarr.consolidate_metadata(path, zarr_format=2)
    # an unconsolidated reader sees nothing the copy hides: take sub/x's own .zarray away
    (pathlib.Path(path) / "sub" / "x" / ".zarray").rename(pathlib.Path(path) / "x.zarray")
    for zarr_format in (None, 2):
        g = zarr_rs.open_group(path, mode="r", use_consolidated=True, zarr_format=zarr_format)
        assert g.is_consolidated and g.zarr_format == 2
        assert g.attrs["title"] == "t"
        assert [name for name, _ in g.members(max_depth=None)] == ["Y", "sub", "sub/x"]
        assert g["sub/x"].shape == (4,), "from the copy"
        assert g["sub"].zarr_format == 2 and g["sub"].attrs["k"] == 1
    plain = zarr_rs.open_group(path, mode="r", use_consolidated=False)
    assert not plain.is_consolidated
    assert [name for name, _ in plain.members(max_depth=None)] == ["Y", "sub"]
    (pathlib.Path(path) / "x.zarray").rename(pathlib.Path(path) / "sub" / "x" / ".zarray")

    g = zarr_rs.open_group(path, mode="r+")
    g["sub/x"].append(np.arange(3, dtype="i4"))
    g["Y"].attrs["units"] = "km"
    g["sub"].attrs["k"] = 2
    g.attrs["title"] = "u"
    g.create_group("new", attributes={"n": 1})
    z = zarr.open_group(path, mode="r", use_consolidated=True, zarr_format=2)
    assert z["sub/x"].shape == (7,)
    np.testing.assert_array_equal(z["sub/x"][4:], [0, 1, 2])
    assert (z["Y"].attrs["units"], z["sub"].attrs["k"], z.attrs["title"]) == ("km", 2, "u")
    assert sorted(k for k, _ in z.members(max_depth=None)) == ["Y", "new", "sub", "sub/x"]
    assert _zmetadata(path)["metadata"]["new/.zattrs"] == {"n": 1}

    with pytest.raises(zarr_rs.ZarrError, match="no consolidated metadata"):
        zarr_rs.open_group(path, mode="r", path="sub", use_consolidated=True)


def test_v2_groups_created_from_python(tmp_path):
    path = str(tmp_path / "made.zarr")
    g = zarr_rs.open_group(path, mode="w", zarr_format=2, attributes={"a": 1})
    assert g.zarr_format == 2 and g.create_group("c").zarr_format == 2
    assert (pathlib.Path(path) / ".zgroup").exists()
    assert zarr_rs.consolidate_metadata(path).is_consolidated
    assert list(_zmetadata(path)["metadata"]) == [".zgroup", ".zattrs", "c/.zattrs", "c/.zgroup"]
    assert zarr_rs.create_group(str(tmp_path / "v3.zarr")).zarr_format == 3
    with pytest.raises(zarr_rs.ZarrError, match="zarr_format"):
        zarr_rs.open_group(path, mode="r", zarr_format=4)


# ---- issue 38 (16): the exception of a missing copy, zarr-python's ----


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_use_consolidated_without_a_copy_raises_what_zarr_python_raises(tmp_path, zarr_format):
    import zarr

    path = str(tmp_path / "bare.zarr")
    zarr.open_group(path, mode="w", zarr_format=zarr_format)
    with pytest.raises(Exception) as theirs:
        zarr.open_group(path, mode="r", use_consolidated=True)
    with pytest.raises(zarr_rs.errors.MetadataError, match="no consolidated metadata") as ours:
        zarr_rs.open_group(path, mode="r", use_consolidated=True)
    assert type(theirs.value) is ValueError
    assert isinstance(ours.value, ValueError) and isinstance(ours.value, zarr_rs.ZarrError)


# ---- issue 38 (14): the children of a v2 group are v2 ----


def test_children_of_a_v2_group_are_v2_unless_asked_otherwise(tmp_path):
    import zarr

    path = str(tmp_path / "v2.zarr")
    zarr.open_group(path, mode="w", zarr_format=2, attributes={"t": 1})
    g = zarr_rs.open_group(path, mode="r+", zarr_format=2)
    a = g.create_array("a", shape=(4,), chunks=(2,), dtype="int16")
    a[...] = np.arange(4, dtype="int16")
    assert (tmp_path / "v2.zarr" / "a" / ".zarray").exists()
    assert not (tmp_path / "v2.zarr" / "a" / "zarr.json").exists()
    s = g.create_group("s")
    assert s.zarr_format == 2
    s.create_array("b", shape=(3,), chunks=(3,), dtype="float64")[...] = 0.5
    v3 = g.create_group("v3", zarr_format=3)
    assert v3.zarr_format == 3 and v3.create_group("w").zarr_format == 3
    g.create_array("c3", shape=(2,), dtype="uint8", zarr_format=3)
    assert (tmp_path / "v2.zarr" / "c3" / "zarr.json").exists()

    z = zarr.open_group(path, mode="r", zarr_format=2)
    assert sorted(z.array_keys()) == ["a"] and sorted(z.group_keys()) == ["s"]
    np.testing.assert_array_equal(z["a"][...], np.arange(4))
    np.testing.assert_array_equal(z["s/b"][...], [0.5] * 3)

    # a v3 group's children are v3, and a v2 array is created where asked
    three = zarr_rs.create_group(str(tmp_path / "v3.zarr"))
    assert three.create_array("x", shape=(2,), dtype="uint8").zarr_format == 3
    two = three.create_array("y", shape=(2,), dtype="uint8", zarr_format=2)
    assert (tmp_path / "v3.zarr" / "y" / ".zarray").exists() and two.zarr_format == 2
    made = zarr_rs.create_array(
        str(tmp_path / "top.zarr"), shape=(5,), chunks=(2,), dtype="int32", zarr_format=2
    )
    made[...] = np.arange(5, dtype="int32")
    theirs = zarr.open_array(str(tmp_path / "top.zarr"), mode="r", zarr_format=2)
    np.testing.assert_array_equal(theirs[...], np.arange(5))
    with pytest.raises(ValueError, match="zarr_format"):
        zarr_rs.create_array(str(tmp_path / "bad.zarr"), shape=(2,), dtype="uint8", zarr_format=4)
    with pytest.raises(ValueError, match="zarr_format"):
        three.create_group("bad", zarr_format=1)


# ---- issue 38 (4): nodes opened by their own path keep the copies above true ----


def _view(path: str, consolidated: bool) -> dict:
    """What zarr-python sees of the hierarchy at ``path``, through its consolidated metadata
    or through every node's own: per node its kind, shape, attributes and data, and per group
    its member names."""
    import zarr

    g = zarr.open_group(path, mode="r", use_consolidated=consolidated)
    out: dict = {"": ("group", dict(g.attrs), sorted(k for k, _ in g.members()))}
    for name, node in g.members(max_depth=None):
        if isinstance(node, zarr.Array):
            out[name] = ("array", node.shape, dict(node.attrs), node[...].tolist())
        else:
            out[name] = ("group", dict(node.attrs), sorted(k for k, _ in node.members()))
    return out


def _views_agree(path: str) -> dict:
    consolidated, own = _view(path, True), _view(path, False)
    assert consolidated == own
    return own


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_nodes_opened_by_their_own_path_keep_the_copy_true(tmp_path, zarr_format):
    import zarr

    root = str(tmp_path / "g.zarr")
    z = zarr.open_group(root, mode="w", zarr_format=zarr_format)
    z.create_array("a0", shape=(4,), chunks=(2,), dtype="int32")[...] = np.arange(4)
    sub = z.create_group("sub", attributes={"k": 1})
    sub.create_array("x", shape=(2, 3), chunks=(2, 2), dtype="float64")[...] = 1.5
    zarr.consolidate_metadata(root)

    zarr_rs.open(root + "/a0").append(np.arange(4, 7, dtype="int32"))
    assert _views_agree(root)["a0"][1] == (7,)
    zarr_rs.open_group(root + "/sub").attrs["k"] = 2
    assert _views_agree(root)["sub"][1] == {"k": 2}
    zarr_rs.open_array(root + "/sub/x").resize(3, 3)
    assert _views_agree(root)["sub/x"][1] == (3, 3)
    zarr_rs.open_group(root + "/sub").create_group("new", attributes={"n": 1})
    assert _views_agree(root)["sub/new"][1] == {"n": 1}
    zarr_rs.create_group(root + "/sub/new/made", zarr_format=zarr_format)
    assert "sub/new/made" in _views_agree(root)
    zarr_rs.open(root + "/sub/new", mode="a").attrs["n"] = 3
    assert _views_agree(root)["sub/new"][1] == {"n": 3}
    # read-only opens look at nothing above the location and change nothing
    assert zarr_rs.open(root + "/a0", mode="r").shape == (7,)
    assert zarr_rs.open_group(root, mode="r").is_consolidated


def test_arrays_created_at_a_location_inside_a_hierarchy_are_listed(tmp_path):
    import zarr

    root = str(tmp_path / "g.zarr")
    zarr.open_group(root, mode="w").create_group("sub")
    zarr.consolidate_metadata(root)
    zarr_rs.create_array(root + "/sub/made", shape=(3,), chunks=(3,), dtype="uint8")
    zarr_rs.create_array(root, path="sub/other", shape=(2,), chunks=(2,), dtype="uint8")
    assert sorted(_views_agree(root)["sub"][2]) == ["made", "other"]


@pytest.mark.s3
def test_a_node_opened_by_its_own_url_keeps_the_copy_true(s3_url):
    root = s3_url + "/g.zarr"
    g = zarr_rs.create_group(root, attributes={"r": 1})
    x = g.create_group("sub").create_array("x", shape=(4,), chunks=(2,), dtype="int32")
    x[...] = np.arange(4, dtype="int32")
    zarr_rs.consolidate_metadata(root)
    zarr_rs.open(root + "/sub/x").append(np.arange(2, dtype="int32"))
    zarr_rs.open_group(root + "/sub").attrs["k"] = 1
    zarr_rs.open_group(root + "/sub").create_array("y", shape=(2,), chunks=(2,), dtype="uint8")
    g = zarr_rs.open_group(root, mode="r", use_consolidated=True)
    assert g["sub/x"].shape == (6,) and g["sub"].attrs["k"] == 1
    assert [name for name, _ in g.members(max_depth=None)] == ["sub", "sub/x", "sub/y"]
    np.testing.assert_array_equal(g["sub/x"][...], [0, 1, 2, 3, 0, 1])


# ---- the differential test: random hierarchies, random changes, zarr-python's two views ----


_DTYPES = ("int32", "float64", "uint8")


def _random_hierarchy(rng, root: str, fmt: int) -> tuple[list[str], list[str]]:
    """A random hierarchy of ``fmt`` at ``root`` (written by zarr-python or by zarr_rs, at
    random), consolidated by either; its group paths and array paths ("" is the root)."""
    import zarr

    by_python = bool(rng.integers(2))
    groups, arrays = [""], []
    if by_python:
        top = zarr.open_group(root, mode="w", zarr_format=fmt, attributes={"r": 0})
    else:
        top = zarr_rs.create_group(root, zarr_format=fmt, attributes={"r": 0})
    pending = [("", top, 0)]
    while pending:
        path, g, depth = pending.pop()
        for i in range(int(rng.integers(1, 3))):
            name = f"a{i}"
            ndim = int(rng.integers(1, 3))
            shape = tuple(int(n) for n in rng.integers(1, 5, size=ndim))
            chunks = tuple(int(n) for n in rng.integers(1, 4, size=ndim))
            dtype = _DTYPES[int(rng.integers(len(_DTYPES)))]
            a = g.create_array(name, shape=shape, chunks=chunks, dtype=dtype)
            a[...] = rng.integers(0, 100, size=shape).astype(dtype)
            arrays.append(f"{path}/{name}".strip("/"))
        if depth < 2:
            for i in range(int(rng.integers(0, 3))):
                name = f"g{i}"
                child = g.create_group(name, attributes={"d": depth + 1})
                child_path = f"{path}/{name}".strip("/")
                groups.append(child_path)
                pending.append((child_path, child, depth + 1))
    if bool(rng.integers(2)):
        zarr.consolidate_metadata(root)
    else:
        zarr_rs.consolidate_metadata(root)
    return groups, arrays


def _open_node(rng, root: str, node: str, groups: list[str]):
    """The node at ``node`` opened through zarr_rs in one of four ways: through the root,
    through the root's location with ``path=``, by its own path, or through a group between
    the root and it; and the way's name."""
    parts = node.split("/") if node else []
    ways = ["root", "path=", "own"]
    if len(parts) > 1:
        ways.append("middle")
    way = ways[int(rng.integers(len(ways)))]
    if way == "root":
        g = zarr_rs.open_group(root, mode="r+")
        return (g[node] if node else g), way
    if way == "path=":
        return zarr_rs.open(root, mode="r+", path=node), way
    if way == "own":
        return zarr_rs.open(f"{root}/{node}" if node else root, mode="r+"), way
    cut = int(rng.integers(1, len(parts)))
    middle = "/".join(parts[:cut])
    assert middle in groups
    return zarr_rs.open_group(f"{root}/{middle}", mode="r+")["/".join(parts[cut:])], way


def _random_change(rng, root: str, groups: list[str], arrays: list[str], serial: int) -> str:
    """One random change made through zarr_rs (append, resize, attributes, a new child);
    what it was, for the failure message."""
    kind = ["append", "resize", "attrs", "child"][int(rng.integers(4))]
    if kind in ("append", "resize"):
        node = arrays[int(rng.integers(len(arrays)))]
        a, way = _open_node(rng, root, node, groups)
        if kind == "append":
            extra = (int(rng.integers(1, 4)),) + a.shape[1:]
            a.append(rng.integers(0, 100, size=extra).astype(a.dtype))
        else:
            a.resize(*(int(n) for n in rng.integers(1, 7, size=a.ndim)))
        return f"{kind} {node!r} via {way}"
    if kind == "attrs":
        pool = groups + arrays
        node = pool[int(rng.integers(len(pool)))]
        n, way = _open_node(rng, root, node, groups)
        n.attrs[f"k{serial}"] = int(rng.integers(1000))
        return f"attrs of {node!r} via {way}"
    node = groups[int(rng.integers(len(groups)))]
    g, way = _open_node(rng, root, node, groups)
    name = f"n{serial}"
    child = f"{node}/{name}".strip("/")
    if bool(rng.integers(2)):
        g.create_group(name, attributes={"new": serial})
        groups.append(child)
    else:
        a = g.create_array(name, shape=(3,), chunks=(2,), dtype="int32")
        a[...] = np.arange(3, dtype="int32") + serial
        arrays.append(child)
    return f"new child {child!r} via {way}"


def test_changes_through_any_path_keep_the_copy_what_zarr_python_reads(tmp_path):
    """Seeded: 50 random hierarchies (v2 and v3, nested groups and arrays), consolidated,
    then 4 random changes each made through zarr_rs opened by a random path; after each,
    zarr-python opening the root with ``use_consolidated=True`` sees exactly what it sees
    with ``use_consolidated=False`` (shapes, attributes, data, member lists)."""
    rng = np.random.default_rng(38)
    changes = 0
    for case in range(50):
        fmt = 2 if case % 2 else 3
        root = str(tmp_path / f"h{case}.zarr")
        groups, arrays = _random_hierarchy(rng, root, fmt)
        _views_agree(root)
        for step in range(4):
            what = _random_change(rng, root, groups, arrays, step)
            consolidated, own = _view(root, True), _view(root, False)
            assert consolidated == own, f"case {case} (v{fmt}), change {step}: {what}"
            changes += 1
    assert changes == 200
