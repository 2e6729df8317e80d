"""The `sparse_layout` array->bytes codec for zarr-python 3 (written against zarr 3.1.6).

Metadata::

    {"name": "sparse_layout",
     "configuration": {"format": "csr", "index_data_type": "uint16", "pointer_data_type": "uint32"}}

``pointer_data_type`` is for ``csr``/``csc`` only (and required there). Unknown keys are errors,
and so is ``"must_understand": false``: a reader without this codec must refuse the array.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from zarr.abc.codec import ArrayBytesCodec
from zarr.core.buffer import Buffer, NDBuffer

from . import format as fmt

if TYPE_CHECKING:
    from typing import Self

    from zarr.core.array_spec import ArraySpec
    from zarr.core.chunk_grids import ChunkGrid
    from zarr.core.dtype.wrapper import TBaseDType, TBaseScalar, ZDType

__all__ = ["SparseLayoutCodec", "CODEC_NAME"]

CODEC_NAME = "sparse_layout"

_TOP_KEYS = {"name", "configuration", "must_understand"}
_CONFIG_KEYS = {
    "coo": {"format", "index_data_type"},
    "csr": {"format", "index_data_type", "pointer_data_type"},
    "csc": {"format", "index_data_type", "pointer_data_type"},
}


def _parse_config(format: Any, index_data_type: Any, pointer_data_type: Any) -> tuple[str, str, str | None]:
    if format not in fmt.FORMATS:
        raise ValueError(f"sparse_layout: format must be 'coo', 'csr' or 'csc', got {format!r}")
    if index_data_type not in fmt.INDEX_DATA_TYPES:
        raise ValueError(
            f"sparse_layout: index_data_type must be one of {list(fmt.INDEX_DATA_TYPES)}, "
            f"got {index_data_type!r}"
        )
    if format == "coo":
        if pointer_data_type is not None:
            raise ValueError("sparse_layout: pointer_data_type is for csr/csc only, not coo")
    elif pointer_data_type not in fmt.POINTER_DATA_TYPES:
        raise ValueError(
            f"sparse_layout: format {format!r} needs pointer_data_type in "
            f"{list(fmt.POINTER_DATA_TYPES)}, got {pointer_data_type!r}"
        )
    return format, index_data_type, pointer_data_type


def _check_chunk(codec: SparseLayoutCodec, chunk_shape: tuple[int, ...]) -> None:
    """Format vs rank, and the index / pointer types against the chunk shape."""
    chunk_shape = tuple(int(s) for s in chunk_shape)
    fmt._check_rank(codec.format, chunk_shape)
    fmt.check_index_dtype(codec.index_data_type, chunk_shape)
    if codec.pointer_data_type is not None:
        fmt.check_pointer_dtype(codec.pointer_data_type, chunk_shape)


def _check_dtype(native: np.dtype) -> None:
    fmt._value_dtypes(native)


@dataclass(frozen=True)
class SparseLayoutCodec(ArrayBytesCodec):
    """Chunks stored as COO (any rank >= 1), CSR or CSC (2-d) in the `sparse_layout` format."""

    is_fixed_size = False

    format: str
    index_data_type: str
    pointer_data_type: str | None

    def __init__(
        self,
        *,
        format: str,
        index_data_type: str,
        pointer_data_type: str | None = None,
    ) -> None:
        f, i, p = _parse_config(format, index_data_type, pointer_data_type)
        object.__setattr__(self, "format", f)
        object.__setattr__(self, "index_data_type", i)
        object.__setattr__(self, "pointer_data_type", p)

    # -- metadata --------------------------------------------------------------------------

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        if not isinstance(data, dict):
            raise TypeError(f"sparse_layout: expected a dict, got {type(data).__name__}")
        if data.get("name") != CODEC_NAME:
            raise ValueError(f"sparse_layout: expected name {CODEC_NAME!r}, got {data.get('name')!r}")
        extra = set(data) - _TOP_KEYS
        if extra:
            raise ValueError(f"sparse_layout: unknown keys {sorted(extra)}")
        if "must_understand" in data and data["must_understand"] is not True:
            raise ValueError(
                "sparse_layout: the codec cannot be must_understand: false "
                f"(got {data['must_understand']!r})"
            )
        config = data.get("configuration")
        if not isinstance(config, dict):
            raise ValueError("sparse_layout: a 'configuration' object is required")
        format = config.get("format")
        if format not in _CONFIG_KEYS:
            raise ValueError(f"sparse_layout: format must be 'coo', 'csr' or 'csc', got {format!r}")
        unknown = set(config) - _CONFIG_KEYS[format]
        if unknown:
            raise ValueError(
                f"sparse_layout: unknown configuration keys {sorted(unknown)} for format {format!r}"
            )
        return cls(
            format=format,
            index_data_type=config.get("index_data_type"),
            pointer_data_type=config.get("pointer_data_type"),
        )

    def to_dict(self) -> dict[str, Any]:
        config: dict[str, Any] = {"format": self.format, "index_data_type": self.index_data_type}
        if self.pointer_data_type is not None:
            config["pointer_data_type"] = self.pointer_data_type
        return {"name": CODEC_NAME, "configuration": config}

    def evolve_from_array_spec(self, array_spec: ArraySpec) -> Self:
        # zarr-python passes the *array* shape here at the top level (and the inner chunk shape
        # inside sharding_indexed): only the rank is a chunk property in both cases.
        fmt._check_rank(self.format, tuple(array_spec.shape))
        _check_dtype(array_spec.dtype.to_native_dtype())
        return self

    def validate(
        self,
        *,
        shape: tuple[int, ...],
        dtype: ZDType[TBaseDType, TBaseScalar],
        chunk_grid: ChunkGrid,
    ) -> None:
        _check_dtype(dtype.to_native_dtype())
        chunk_shape = getattr(chunk_grid, "chunk_shape", None)
        if chunk_shape is None:
            fmt._check_rank(self.format, tuple(shape))
        else:
            _check_chunk(self, chunk_shape)

    def compute_encoded_size(self, input_byte_length: int, _chunk_spec: ArraySpec) -> int:
        raise NotImplementedError("sparse_layout chunks have a variable encoded size")

    def max_encoded_size(self, chunk_spec: ArraySpec) -> int:
        """The spec's bound on an encoded chunk of ``chunk_spec`` (nnz = element count)."""
        return fmt.max_encoded_size(
            chunk_spec.shape,
            self.format,
            self.index_data_type,
            self.pointer_data_type,
            chunk_spec.dtype.to_native_dtype().itemsize,
        )

    # -- coding ----------------------------------------------------------------------------

    def _decode_sync(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> NDBuffer:
        # The sizes are checked here too: inside sharding_indexed, `validate` is not called on
        # the inner codecs.
        _check_chunk(self, chunk_spec.shape)
        dense = fmt.decode_chunk(
            chunk_bytes.as_numpy_array(),
            chunk_spec.shape,
            chunk_spec.dtype.to_native_dtype(),
            chunk_spec.fill_value,
            self.format,
            self.index_data_type,
            self.pointer_data_type,
        )
        return chunk_spec.prototype.nd_buffer.from_numpy_array(dense)

    async def _decode_single(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> NDBuffer:
        return self._decode_sync(chunk_bytes, chunk_spec)

    def _encode_sync(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> Buffer | None:
        _check_chunk(self, chunk_spec.shape)
        dense = chunk_array.as_numpy_array()
        if tuple(dense.shape) != tuple(chunk_spec.shape):
            dense = dense.reshape(chunk_spec.shape)
        encoded = fmt.encode_chunk(
            dense,
            chunk_spec.fill_value,
            self.format,
            self.index_data_type,
            self.pointer_data_type,
        )
        # "A chunk with nnz = 0 is not stored at all": None makes zarr-python delete the key.
        if int.from_bytes(encoded[8:16], "little") == 0:
            return None
        return chunk_spec.prototype.buffer.from_bytes(encoded)

    async def _encode_single(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> Buffer | None:
        return self._encode_sync(chunk_array, chunk_spec)
