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
