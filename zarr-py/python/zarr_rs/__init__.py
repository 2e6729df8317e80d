"""zarr_rs: Zarr v3 for NumPy, SciPy, Dask and xarray on the zarr-rs Rust engine.

>>> import numpy as np, zarr_rs
>>> a = zarr_rs.create_array("data.zarr", shape=(6, 4), chunks=(4, 4), dtype="int32")
>>> a[...] = 1
>>> a.prepend(np.full((3, 4), 2, dtype="int32"))      # grow in front (regular_bounded)
(9, 4)
>>> a.domain
((-3, 6), (0, 4))

- :func:`open`, :func:`open_array`, :func:`open_group`, :func:`create_array`,
  :func:`create_group`: arrays and groups at a directory or url (``s3://``, ``gs://``,
  ``az://``, ``http(s)://`` read-only, ``file://``), with zarr-python's indexing;
  groups open through their consolidated metadata (``use_consolidated``), which
  :func:`consolidate_metadata` writes and every change made through zarr_rs keeps true;
  children this build cannot read are listed as :class:`Unreadable`;
- :meth:`Array.read_csr` / :meth:`Array.read_coo` / :meth:`Array.write_sparse` and
  :meth:`Array.nnz` / :meth:`Array.sum` / :meth:`Array.spmv`: ``sparse_layout`` arrays as
  SciPy and pydata/sparse objects, never densified;
- :meth:`Array.to_dask` and :func:`from_dask`: Dask arrays whose blocks are whole chunks
  (sparse blocks for sparse arrays), graphs that run on ``dask.distributed``;
- ``xr.open_dataset(path, engine="zarr_rs")`` and ``xr.open_datatree(...)``;
- ``zarr_rs.CodecPipeline``: zarr-python's codec pipeline on the engine
  (``zarr.config.set({"codec_pipeline.path": "zarr_rs.CodecPipeline"})``);
- :func:`import_sparse` / :func:`export_sparse`: sparse matrices in and out (Matrix Market,
  SciPy ``.npz``, anndata elements, binsparse groups), streamed within a memory limit;
- :mod:`zarr_rs.errors`: the exceptions.
"""

from . import errors
from ._core import __version__
from ._array import Array
from ._attributes import Attributes
from ._group import Group, Unreadable
from ._open import (
    consolidate_metadata,
    create_array,
    create_group,
    open,
    open_array,
    open_group,
)
from .errors import ZarrError
from .sparse_io import export_sparse, import_sparse

__all__ = [
    "Array",
    "Attributes",
    "CodecPipeline",
    "Group",
    "Unreadable",
    "ZarrError",
    "__version__",
    "consolidate_metadata",
    "create_array",
    "create_group",
    "errors",
    "export_sparse",
    "from_dask",
    "import_sparse",
    "open",
    "open_array",
    "open_group",
    "to_zarr",
]


def from_dask(*args, **kwargs):  # noqa: ANN002, ANN003, ANN201
    """Writes a Dask array to a new array, block by block in parallel; see
    :func:`zarr_rs.dask.from_dask`."""
    from .dask import from_dask as f

    return f(*args, **kwargs)


to_zarr = from_dask


def __getattr__(name: str):  # noqa: ANN202
    # zarr_rs.CodecPipeline, zarr-python's codec pipeline on the engine, imports zarr-python:
    # loaded when asked for
    if name == "CodecPipeline":
        from .pipeline import CodecPipeline

        return CodecPipeline
    raise AttributeError(f"module 'zarr_rs' has no attribute {name!r}")
