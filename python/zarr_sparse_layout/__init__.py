"""A NumPy implementation of the `sparse_layout` Zarr v3 codec (docs/sparse_layout.md).

Importing this package registers ``SparseLayoutCodec`` under the name ``"sparse_layout"`` in
zarr-python's codec registry, and selects it there (zarr-python's ``codecs.sparse_layout``
setting) over another implementation such as zarr_rs's, which registers one through an entry
point. Nothing is registered through an entry point here, so a zarr-python without zarr_rs
that has not imported this package still refuses arrays that use ``sparse_layout``.

The byte format itself (:mod:`zarr_sparse_layout.format`) needs only NumPy; zarr-python is
needed for the codec class only.
"""

from .format import (
    SparseChunk,
    decode_chunk,
    decode_sparse,
    encode_chunk,
    max_encoded_size,
)

__all__ = [
    "SparseChunk",
    "SparseLayoutCodec",
    "decode_chunk",
    "decode_sparse",
    "encode_chunk",
    "max_encoded_size",
    "register",
]

__version__ = "0.1.0"


def register() -> None:
    """Register the codec with zarr-python (done once on import; calling again is harmless)."""
    import zarr
    from zarr.registry import fully_qualified_name, register_codec

    from .codec import CODEC_NAME, SparseLayoutCodec

    register_codec(CODEC_NAME, SparseLayoutCodec)
    # imported, this implementation is the one chosen (zarr-python would otherwise warn and
    # pick the last one registered)
    zarr.config.set({f"codecs.{CODEC_NAME}": fully_qualified_name(SparseLayoutCodec)})


try:
    from .codec import SparseLayoutCodec
except ImportError:  # zarr-python not installed: the byte format still works
    SparseLayoutCodec = None  # type: ignore[assignment,misc]
else:
    register()
