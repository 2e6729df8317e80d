"""Interop with zarr-python 3.1.6 both ways, and prepends from Python read by the Rust `zarr`
command."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

import zarr_rs


def test_zarr_python_reads_what_zarr_rs_writes(tmp_path, rng):
    import zarr

    for i, kw in enumerate([{}, {"shards": (20, 30)}, {"compressors": None}]):
        data = rng.integers(0, 500, size=(40, 30)).astype("int32")
        path = str(tmp_path / f"ours{i}.zarr")
        a = zarr_rs.create_array(path, shape=data.shape, chunks=(10, 15), dtype="int32",
                                 attributes={"k": i}, dimension_names=["y", "x"], **kw)
        a[...] = data
        z = zarr.open_array(path, mode="r")
        np.testing.assert_array_equal(z[...], data)
        assert z.attrs["k"] == i and z.metadata.dimension_names == ("y", "x")


def test_zarr_rs_reads_what_zarr_python_writes(tmp_path, rng):
    import zarr

    root = zarr.open_group(str(tmp_path / "theirs.zarr"), mode="w", zarr_format=3)
    data = rng.random((33, 17)).astype("float64")
    z = root.create_array("x", shape=data.shape, chunks=(8, 8), dtype="float64", fill_value=np.nan)
    z[...] = data
    s = root.create_array("s", shape=data.shape, chunks=(4, 4), shards=(16, 8), dtype="float64")
    s[...] = data
    g = zarr_rs.open(str(tmp_path / "theirs.zarr"), mode="r")
    assert isinstance(g, zarr_rs.Group)
    np.testing.assert_array_equal(g["x"][...], data)
    np.testing.assert_array_equal(g["s"].oindex[[0, 32], ::3], data[[0, 32], ::3])
    assert np.isnan(g["x"].fill_value) and g["s"].shards == (16, 8)
    # and zarr-python reads our writes into its array
    w = zarr_rs.open(str(tmp_path / "theirs.zarr"), mode="r+")["x"]
    w[1:3] = 0.5
    data[1:3] = 0.5
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "theirs.zarr"), path="x", mode="r")[...], data)


def test_fixed_width_strings_and_datetimes_both_ways(tmp_path):
    import zarr

    labels = np.array(["x", "héllo", "", "wxyz", "ab"], dtype="<U5")
    codes = np.array([b"a", b"abc", b"", b"a\x00b", b"q"], dtype="|S3")
    times = np.array(["2020-01-01", "NaT", "1969-12-31", "2026-12-03", "2000-02-29"],
                     dtype="<M8[D]")
    theirs = zarr.open_group(str(tmp_path / "theirs.zarr"), mode="w", zarr_format=3)
    for name, data, fill in [("u", labels, "ab"), ("s", codes, b"q"), ("t", times, None)]:
        z = theirs.create_array(name, shape=data.shape, chunks=(2,), dtype=data.dtype,
                                fill_value=fill)
        z[:4] = data[:4]
    for name, data in [("u", labels), ("s", codes), ("t", times)]:
        a = zarr_rs.open(str(tmp_path / "theirs.zarr" / name), mode="r")
        assert a.dtype == data.dtype, name
        np.testing.assert_array_equal(a[...], zarr.open_array(str(tmp_path / "theirs.zarr" / name))[...])
    assert zarr_rs.open(str(tmp_path / "theirs.zarr" / "u"), mode="r").fill_value == "ab"

    for name, data, fill in [("u", labels, "zz"), ("s", codes, b"q"), ("t", times, "NaT")]:
        path = str(tmp_path / f"ours_{name}.zarr")
        a = zarr_rs.create_array(path, shape=data.shape, chunks=(2,), dtype=data.dtype,
                                 fill_value=fill)
        a[:4] = data[:4]
        z = zarr.open_array(path, mode="r")
        assert z.dtype == data.dtype, name
        got = z[...]
        np.testing.assert_array_equal(got[:4], data[:4])
        assert str(got[4]) == str(np.asarray(fill, dtype=data.dtype)[()]), (name, got[4])
    # strings narrower than the array's width are padded; wider ones are cut, as in NumPy
    a = zarr_rs.open(str(tmp_path / "ours_u.zarr"), mode="r+")
    a[0:2] = np.array(["toolongvalue", "q"])
    assert list(a[0:2]) == ["toolo", "q"]


def test_zarr_python_refuses_prepended_arrays_and_reads_the_regular_copy(tmp_path):
    import zarr

    a = zarr_rs.create_array(str(tmp_path / "p.zarr"), shape=(4, 3), chunks=(2, 3), dtype="int16")
    a[...] = 1
    a.prepend(np.full((2, 3), 2, "int16"))
    with pytest.raises(Exception, match="regular_bounded"):
        zarr.open_array(str(tmp_path / "p.zarr"), mode="r")[...]
    a.to_regular(str(tmp_path / "copy.zarr"))
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "copy.zarr"), mode="r")[...], a[...])


@pytest.mark.cli
def test_prepend_from_python_read_by_the_zarr_command(tmp_path, zarr_cli):
    path = str(tmp_path / "cli.zarr")
    a = zarr_rs.create_array(path, shape=(6, 4), chunks=(4, 4), dtype="int32")
    a[...] = 1
    a.prepend(np.full((3, 4), 2, "int32"))
    info = json.loads(subprocess.run([zarr_cli, "info", path, "--json"], check=True,
                                     capture_output=True, text=True).stdout)
    assert info["shape"] == [9, 4]
    assert info["domain"] == [[-3, 6], [0, 4]]
    subprocess.run([zarr_cli, "validate", path], check=True, capture_output=True)
    out = tmp_path / "out.npy"
    subprocess.run([zarr_cli, "export", path, str(out)], check=True, capture_output=True)
    np.testing.assert_array_equal(np.load(out), a[...])
    # and Python reads what the command prepends
    np.save(tmp_path / "more.npy", np.full((1, 4), 7, "int32"))
    subprocess.run([zarr_cli, "prepend", path, str(tmp_path / "more.npy"), "--axis", "0"], check=True,
                   capture_output=True)
    b = zarr_rs.open(path, mode="r")
    assert b.domain == ((-4, 6), (0, 4))
    np.testing.assert_array_equal(b[0], [7, 7, 7, 7])


def test_anndata_sparse_matrix_reads_as_scipy(tmp_path, rng):
    """anndata 0.12 writes X as a CSR group (data, indices, indptr); zarr_rs reads the three
    arrays and they make the same matrix."""
    import anndata as ad
    import scipy.sparse as sp
    import zarr

    x = sp.random_array((30, 20), density=0.1, format="csr", dtype="float32", rng=rng)
    before = ad.settings.zarr_write_format
    ad.settings.zarr_write_format = 3
    try:
        ad.AnnData(X=sp.csr_matrix(x)).write_zarr(str(tmp_path / "a.zarr"))
    finally:
        ad.settings.zarr_write_format = before
    g = zarr_rs.open(str(tmp_path / "a.zarr"), mode="r")
    X = g["X"]
    assert X.attrs["encoding-type"] == "csr_matrix"
    m = sp.csr_array((X["data"][...], X["indices"][...], X["indptr"][...]), shape=tuple(X.attrs["shape"]))
    np.testing.assert_array_equal(m.toarray(), x.toarray())


def _dtype_spellings(rng, n):
    """``n`` random spellings of the data types both libraries make: NumPy dtypes, their
    ``.str`` (either byte order), names and one-letter codes, Python and NumPy types, and the
    variable-size types (``str`` and their names), and spellings both refuse."""
    numeric = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
               "uint64", "float16", "float32", "float64", "complex64", "complex128"]
    units = ["Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns"]
    out = []
    for _ in range(n):
        kind = rng.integers(0, 7)
        if kind <= 2:
            dt = np.dtype(numeric[rng.integers(len(numeric))])
        elif kind == 3:
            scale = ["", "", str(rng.integers(2, 20))][rng.integers(3)]
            dt = np.dtype(f"{'Mm'[rng.integers(2)]}8[{scale}{units[rng.integers(len(units))]}]")
        elif kind == 4:
            dt = np.dtype(f"{'USV'[rng.integers(3)]}{rng.integers(1, 12)}")
        elif kind == 5:
            dt = np.dtype(f"({rng.integers(1, 4)},){numeric[rng.integers(1, len(numeric))]}")
        else:
            # (the type bytes is zarr_rs's spelling of variable_length_bytes, which
            # zarr-python refuses as a zero-length S0; the others are both libraries')
            others = [str, "str", "bytes", "string", "variable_length_bytes", "T", int, float,
                      complex, bool, "int_", "c", "p", "?", "U", "S", "g", object, "|O"]
            out.append(others[rng.integers(len(others))])
            continue
        if rng.integers(2) and dt.byteorder not in "|":
            dt = dt.newbyteorder(">" if rng.integers(2) else "<")
        form = rng.integers(4)
        if form == 0 or dt.subdtype is not None:
            out.append(dt)
        elif form == 1:
            out.append(dt.str)
        elif form == 2:
            out.append(dt.type if dt.kind in "biufc" else dt.str)
        elif dt.kind in "USV":
            out.append(dt.str[1:])
        else:
            out.append(dt.char if dt.kind in "biufc" and dt.isnative else dt.name)
    return out


@pytest.mark.filterwarnings("ignore:The data type")  # zarr-python's unstable-type warnings
def test_dtypes_make_the_data_types_zarr_python_makes(tmp_path):
    """The engine decides the Zarr data type of every ``dtype`` spelling as zarr-python does
    (the metadata's ``data_type``), the array's NumPy dtype is that type's in native order, and
    a fill value is converted to it as zarr-python converts it (seeded random spellings)."""
    import zarr

    rng = np.random.default_rng(20261207)
    for i, dtype in enumerate(_dtype_spellings(rng, 300)):
        try:
            z = zarr.create_array(store={}, shape=(3,), dtype=dtype, zarr_format=3)
        except (TypeError, ValueError) as e:
            with pytest.raises(type(e)) as ours:
                zarr_rs.create_array(str(tmp_path / f"d{i}.zarr"), shape=(3,), dtype=dtype)
            assert isinstance(ours.value, zarr_rs.errors.DataTypeError), (dtype, ours.value)
            continue
        theirs = z.metadata.data_type.to_json(zarr_format=3)
        if isinstance(theirs, dict) and theirs["name"] == "raw_bytes":
            # zarr-python's name of the core type r<bits>, which zarr-rs writes
            theirs = f"r{theirs['configuration']['length_bytes'] * 8}"
        a = zarr_rs.create_array(str(tmp_path / f"d{i}.zarr"), shape=(3,), dtype=dtype)
        assert a.metadata["data_type"] == theirs, (dtype, a.metadata["data_type"], theirs)
        if z.dtype.kind in "OT":
            assert a.dtype == np.dtype(object), dtype
            continue
        assert a.dtype == z.dtype.newbyteorder("="), (dtype, a.dtype, z.dtype)
        if a.dtype.kind in "biufc":
            fill = int(rng.integers(0, 2 if a.dtype.kind == "b" else 100))
            z = zarr.create_array(store={}, shape=(3,), dtype=dtype, fill_value=fill)
            a = zarr_rs.create_array(str(tmp_path / f"f{i}.zarr"), shape=(3,), dtype=dtype,
                                     fill_value=fill)
            theirs = json.loads(json.dumps(z.metadata.to_dict()["fill_value"]))
            assert a.metadata["fill_value"] == theirs, dtype
            np.testing.assert_array_equal(a[...], z[...])


def _json_value(rng, depth=0):
    """A random value ``json.dumps`` writes: None, bools, ints across the 64-bit ranges, finite
    floats, text, and (to depth 3) lists, tuples and dicts whose keys are str, int, float, bool
    or None."""
    k = rng.integers(0, 9 if depth < 3 else 6)
    if k == 0:
        return None
    if k == 1:
        return bool(rng.integers(2))
    if k == 2:
        return int(rng.integers(-(2**63), 2**63 - 1)) if rng.integers(2) else int(
            rng.integers(2**63, 2**64 - 1, dtype=np.uint64))
    if k == 3:
        return float(rng.standard_normal() * 10.0 ** rng.integers(-300, 300))
    if k in (4, 5):
        return "".join(rng.choice(list("aZ 09_é中\"\\\n🙂"), size=rng.integers(0, 8)))
    if k == 6:
        return [_json_value(rng, depth + 1) for _ in range(rng.integers(0, 4))]
    if k == 7:
        return tuple(_json_value(rng, depth + 1) for _ in range(rng.integers(0, 4)))
    keys = [f"k{rng.integers(100)}", int(rng.integers(-5, 5)), True, None, 0.5]
    return {keys[rng.integers(len(keys))]: _json_value(rng, depth + 1)
            for _ in range(rng.integers(0, 4))}


def test_attributes_arrive_as_json_dumps_writes_them(tmp_path):
    """Attributes, fill values and codecs reach the engine as Python objects (no JSON text);
    what it stores is what ``json.dumps`` writes of them, and zarr-python reads the same
    (seeded random nested values), for arrays and groups."""
    import zarr

    rng = np.random.default_rng(37)
    for i in range(200):
        attrs = {f"a{j}": _json_value(rng) for j in range(rng.integers(1, 4))}
        expected = json.loads(json.dumps(attrs))
        path = str(tmp_path / f"a{i}.zarr")
        if i % 2:
            zarr_rs.create_array(path, shape=(2,), dtype="uint64", fill_value=2**64 - 1,
                                 compressors=[{"name": "zstd", "configuration": {"level": 1}}],
                                 attributes=attrs)
            z = zarr.open_array(path, mode="r")
            assert z.fill_value == 2**64 - 1 and z.metadata.to_dict()["codecs"][1]["name"] == "zstd"
        else:
            zarr_rs.create_group(path, attributes=attrs)
            z = zarr.open_group(path, mode="r")
        assert zarr_rs.open(path, mode="r").attrs.asdict() == expected
        assert z.attrs.asdict() == expected


def test_attributes_refuse_what_json_cannot_hold_exactly(tmp_path):
    """An int beyond 64 bits is refused (it became a rounded float through JSON text), as are
    NaN, values json.dumps refuses, and too deep a nesting; nothing is created."""
    from zarr_rs import errors

    deep: list = []
    for _ in range(200):
        deep = [deep]
    for attrs, error in [
        ({"n": 2**70}, errors.InvalidArgumentError),
        ({"n": -(2**64)}, errors.InvalidArgumentError),
        ({"x": float("nan")}, errors.InvalidArgumentError),
        ({"x": np.int64(3)}, TypeError),
        ({"x": {(1, 2): 3}}, TypeError),
        ({"x": deep}, errors.InvalidArgumentError),
    ]:
        path = tmp_path / "r.zarr"
        with pytest.raises(error):
            zarr_rs.create_array(str(path), shape=(2,), dtype="int8", attributes=attrs)
        with pytest.raises(error):
            zarr_rs.create_group(str(path), attributes=attrs)
        assert not path.exists()
