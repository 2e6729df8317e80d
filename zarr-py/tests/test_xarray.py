"""xarray: the zarr_rs backend opens groups written by zarr_rs and by xarray itself."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

import zarr_rs


def test_open_group_written_by_zarr_rs(tmp_path, rng):
    root = zarr_rs.open_group(str(tmp_path / "ds.zarr"), mode="w", attributes={"title": "demo"})
    t = root.create_array("temp", shape=(4, 5), dtype="float32", chunks=(2, 5),
                          dimension_names=["y", "x"], attributes={"units": "K"})
    data = rng.random((4, 5)).astype("float32")
    t[...] = data
    y = root.create_array("y", shape=(4,), dtype="int64", dimension_names=["y"])
    y[...] = [10, 20, 30, 40]
    ds = xr.open_dataset(str(tmp_path / "ds.zarr"), engine="zarr_rs")
    assert ds.attrs["title"] == "demo"
    assert ds["temp"].dims == ("y", "x") and ds["temp"].attrs["units"] == "K"
    # lazy until asked
    assert not isinstance(ds["temp"].variable._data, np.ndarray)
    np.testing.assert_array_equal(ds["temp"].values, data)
    np.testing.assert_array_equal(ds["temp"].sel(y=30).values, data[2])
    np.testing.assert_array_equal(ds["temp"].isel(x=[0, 3], y=slice(1, 3)).values, data[1:3][:, [0, 3]])


def test_open_group_written_by_xarray(tmp_path, rng):
    ds = xr.Dataset(
        {"v": (("t", "z"), rng.random((6, 3))), "n": (("t",), np.arange(6, dtype="int16"))},
        coords={"t": np.arange(6) * 2.0},
        attrs={"source": "xarray"},
    )
    ds["v"].attrs["scale_factor"] = 2.0
    ds.to_zarr(str(tmp_path / "x.zarr"), zarr_format=3, consolidated=False)
    got = xr.open_dataset(str(tmp_path / "x.zarr"), engine="zarr_rs")
    want = xr.open_dataset(str(tmp_path / "x.zarr"), engine="zarr", consolidated=False)
    xr.testing.assert_identical(got.load(), want.load())


def test_regular_bounded_domain(tmp_path):
    root = zarr_rs.open_group(str(tmp_path / "rb.zarr"), mode="w")
    a = root.create_array("v", shape=(4,), chunks=(2,), dtype="float64", dimension_names=["time"])
    a[...] = [1, 2, 3, 4]
    a.prepend(np.array([-1.0, 0.0]))
    ds = xr.open_dataset(str(tmp_path / "rb.zarr"), engine="zarr_rs")
    np.testing.assert_array_equal(ds["v"].values, [-1, 0, 1, 2, 3, 4])
    assert ds["v"].attrs["zarr_rs_domain"] == [[-2, 4]]
    idx = xr.open_dataset(str(tmp_path / "rb.zarr"), engine="zarr_rs", domain_index=True)
    assert idx["v"].sel(time=0).item() == 1.0
    np.testing.assert_array_equal(idx["time"].values, np.arange(-2, 4))


def test_open_datatree(tmp_path):
    root = zarr_rs.open_group(str(tmp_path / "tree.zarr"), mode="w", attributes={"level": 0})
    root.create_array("a", shape=(2,), dtype="int8", dimension_names=["i"])[...] = [1, 2]
    sub = root.create_group("sub", attributes={"level": 1})
    sub.create_array("b", shape=(3,), dtype="int8", dimension_names=["j"])[...] = [3, 4, 5]
    tree = xr.open_datatree(str(tmp_path / "tree.zarr"), engine="zarr_rs")
    assert tree.attrs["level"] == 0 and tree["sub"].attrs["level"] == 1
    np.testing.assert_array_equal(tree["sub"]["b"].values, [3, 4, 5])
    np.testing.assert_array_equal(tree["a"].values, [1, 2])


def _random_dataset(rng: np.random.Generator) -> tuple[xr.Dataset, dict]:
    """A small dataset with the fill value, scale and offset encodings xarray writes, and
    values equal to the fill value so that masking shows."""
    n = int(rng.integers(3, 9))
    variables: dict = {}
    encoding: dict = {}
    for i in range(int(rng.integers(1, 4))):
        dtype = rng.choice(["float32", "float64", "int8", "int16", "int32", "uint8", "uint16"])
        name = f"v{i}"
        if dtype.startswith("float"):
            data = rng.normal(size=(n, 2)).astype(dtype)
            if rng.random() < 0.5:
                data[0, 0] = np.nan
        else:
            info = np.iinfo(dtype)
            data = rng.integers(max(info.min, -100), min(info.max, 100), size=(n, 2)).astype(dtype)
        enc: dict = {}
        attrs: dict = {}
        choice = rng.integers(0, 4)
        if choice == 1:
            fill = -9999 if dtype[0] in "fi" and dtype not in ("int8",) else 7
            enc["_FillValue"] = fill
            data[-1, -1] = fill
        elif choice == 2 and not dtype.startswith("float"):
            # packed data: ints with scale/offset (and a fill value) decode to floats
            attrs["scale_factor"] = 0.5
            attrs["add_offset"] = -3.0
            enc["_FillValue"] = 7
            data[1, 0] = 7
        elif choice == 3:
            enc["_FillValue"] = None
        variables[name] = xr.Variable(("t", "c"), data, attrs)
        encoding[name] = enc
    coords = {"t": np.datetime64("2020-01-01") + np.arange(n).astype("timedelta64[D]")}
    return xr.Dataset(variables, coords=coords, attrs={"seed": int(rng.integers(0, 1000))}), encoding


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_fill_values_and_decoding_match_the_zarr_engine(tmp_path, zarr_format):
    """Seeded differential test: datasets written by xarray with every fill value encoding
    (none, a value, None, packed ints with scale/offset), read with engine="zarr" and
    engine="zarr_rs" in three decoding modes; every variable, value and attribute equal."""
    rng = np.random.default_rng(1000 + zarr_format)
    modes = [{}, {"mask_and_scale": False}, {"decode_cf": False}]
    for case in range(60):
        ds, encoding = _random_dataset(rng)
        path = str(tmp_path / f"{case}.zarr")
        ds.to_zarr(path, zarr_format=zarr_format, consolidated=False, encoding=encoding)
        for mode in modes:
            want = xr.open_dataset(path, engine="zarr", consolidated=False, **mode).load()
            got = xr.open_dataset(path, engine="zarr_rs", **mode).load()
            try:
                xr.testing.assert_identical(got, want)
            except AssertionError as e:
                raise AssertionError(f"case {case} (v{zarr_format}, {mode}): {e}") from None


def test_v3_float_fill_value_attribute_is_decoded(tmp_path):
    """xarray writes a v3 float _FillValue as base64 of its bytes: it masks, and reads back
    as the number with mask_and_scale=False."""
    ds = xr.Dataset({"v": (("x",), np.array([1.0, -9999.0, 3.0]))})
    ds.to_zarr(str(tmp_path / "f.zarr"), zarr_format=3, consolidated=False,
               encoding={"v": {"_FillValue": -9999.0}})
    got = xr.open_dataset(str(tmp_path / "f.zarr"), engine="zarr_rs")
    assert np.isnan(got["v"].values[1])
    raw = xr.open_dataset(str(tmp_path / "f.zarr"), engine="zarr_rs", mask_and_scale=False)
    assert raw["v"].attrs["_FillValue"] == -9999.0


def test_v2_fill_value_masks(tmp_path):
    """In v2 data the array's fill value is the missing value (xarray's default)."""
    ds = xr.Dataset({"n": (("x",), np.array([1, -1, 3], dtype="int16"))})
    ds.to_zarr(str(tmp_path / "m.zarr"), zarr_format=2, consolidated=False,
               encoding={"n": {"_FillValue": -1}})
    got = xr.open_dataset(str(tmp_path / "m.zarr"), engine="zarr_rs")
    assert np.isnan(got["n"].values[1]) and got["n"].values[0] == 1


def test_a_v2_null_fill_value_is_none_and_does_not_mask(tmp_path):
    """``"fill_value": null`` in a ``.zarray``: zarr-python's fill value is None, and xarray
    sets no _FillValue (nothing is masked)."""
    import zarr

    z = zarr.create_array(str(tmp_path / "n.zarr"), shape=(3,), chunks=(3,), dtype="int16",
                          fill_value=None, zarr_format=2)
    z[...] = [0, 1, 2]
    a = zarr_rs.open_array(str(tmp_path / "n.zarr"))
    assert a.zarr_format == 2 and a.fill_value is None and z.fill_value is None
    assert "Zarr format        : 2" in repr(a.info)  # and no fill value line
