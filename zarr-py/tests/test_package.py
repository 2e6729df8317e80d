"""The package's surface: what ``zarr_rs`` and ``zarr_rs.core`` offer stays importable where it
was."""

from __future__ import annotations

import pickle

import zarr_rs
import zarr_rs.core

# Every name ``zarr_rs.core`` defined when it held arrays, groups, attributes and dtypes
# together (before the split by concern): code that imports them from there keeps working.
CORE_NAMES = """
Mode _DEFAULT_COMPRESSORS _VLEN_TYPES _np_dtype _vlen_items _object_array _KIND_RANK _as_data
_PRODUCT_DTYPES _product_dtype _broadcast _flat_bytes Attributes _Indexer Array _Writer ArrayInfo
Unreadable Group _reopen_array _reopen_group _spec _codec_list _plain _integral_fill _fill_json
create_array _wrap_node open open_array open_group consolidate_metadata create_group _check_mode
""".split()


def test_core_keeps_every_name_it_had():
    missing = [n for n in CORE_NAMES if not hasattr(zarr_rs.core, n)]
    assert not missing, f"zarr_rs.core lost {missing}"
    # the public ones are the very objects zarr_rs offers
    for name in zarr_rs.__all__:
        if hasattr(zarr_rs.core, name):
            assert getattr(zarr_rs.core, name) is getattr(zarr_rs, name), name


def test_every_public_name_imports_from_zarr_rs():
    for name in zarr_rs.__all__:
        assert getattr(zarr_rs, name) is not None, name
    from zarr_rs import (  # noqa: F401
        Array, Attributes, Group, Unreadable, ZarrError, consolidate_metadata, create_array,
        create_group, errors, from_dask, open, open_array, open_group, to_zarr,
    )


def test_pickles_of_the_old_module_paths_still_load(tmp_path):
    """Pickles written before the split name ``zarr_rs.core._reopen_array``; they still load."""
    a = zarr_rs.create_array(str(tmp_path / "a.zarr"), shape=(3,), dtype="int16")
    a[...] = [1, 2, 3]
    old = pickle.dumps((zarr_rs.core._reopen_array, (str(tmp_path / "a.zarr"), "", "r")))
    f, args = pickle.loads(old)
    assert list(f(*args)[...]) == [1, 2, 3]
