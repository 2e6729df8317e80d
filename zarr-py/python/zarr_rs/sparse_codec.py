"""The ``sparse_layout`` codec for zarr-python, decoded and encoded by the engine.

Registered under zarr-python's ``zarr.codecs`` entry point (zarr-py/pyproject.toml), so that
zarr-python opens ``sparse_layout`` arrays (as dense NumPy data) once zarr_rs is installed,
with no other plugin. Each chunk is decoded and encoded by the engine: through
``zarr_rs.CodecPipeline`` in batches with the rest of the chain, or, on zarr-python's own
pipeline, one chunk at a time by this codec. The configuration is kept as written and checked
by the engine when zarr-python opens or creates the array (``validate``), so that a
configuration the engine refuses refuses the array even when none of its chunks is stored.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from zarr.abc.codec import ArrayBytesCodec

if TYPE_CHECKING:
    from typing import Self

    from zarr.core.array_spec import ArraySpec
    from zarr.core.buffer import Buffer, NDBuffer

NAME = "sparse_layout"


class SparseLayoutCodec(ArrayBytesCodec):
    """``sparse_layout`` (COO / CSR / CSC chunks), on the zarr-rs engine."""

    is_fixed_size = False

    def __init__(self, *, configuration: dict[str, Any]) -> None:
        if not isinstance(configuration, dict):
            raise TypeError(
                f"sparse_layout: the configuration must be an object, got {type(configuration).__name__}"
            )
        object.__setattr__(self, "_config", json.dumps(configuration, sort_keys=True))
        object.__setattr__(self, "_chunks", {})

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        if not isinstance(data, dict) or data.get("name") != NAME:
            raise ValueError(f"sparse_layout: expected a codec named {NAME!r}, got {data!r}")
        if data.get("must_understand", True) is not True:
            raise ValueError("sparse_layout: the codec cannot be must_understand: false")
        return cls(configuration=data.get("configuration", {}))

    def to_dict(self) -> dict[str, Any]:
        return {"name": NAME, "configuration": json.loads(self._config)}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SparseLayoutCodec) and self._config == other._config

    def __hash__(self) -> int:
        return hash((NAME, self._config))

    def __repr__(self) -> str:
        return f"SparseLayoutCodec(configuration={json.loads(self._config)!r})"

    def __reduce__(self) -> Any:
        return (_rebuild, (self._config,))

    def evolve_from_array_spec(self, array_spec: ArraySpec) -> Self:
        return self

    def validate(self, *, shape: tuple[int, ...], dtype: Any, chunk_grid: Any) -> None:
        """Builds the engine's chain for the array's chunks: a configuration it refuses (a
        format, a key, an index type too small for the chunk shape, CSR / CSC on other than 2
        dimensions) raises here, when zarr-python opens or creates the array, rather than at
        the first stored chunk (an array with none would read as its fill value)."""
        from zarr.core.array_spec import ArrayConfig, ArraySpec
        from zarr.core.buffer import default_buffer_prototype

        chunk_shape = getattr(chunk_grid, "chunk_shape", None)
        if chunk_shape is None:
            raise ValueError(f"sparse_layout: a chunk grid with no regular chunk shape: {chunk_grid!r}")
        spec = ArraySpec(
            shape=tuple(chunk_shape),
            dtype=dtype,
            fill_value=dtype.default_scalar(),
            config=ArrayConfig.from_dict({}),
            prototype=default_buffer_prototype(),
        )
        self._engine(spec)

    def compute_encoded_size(self, input_byte_length: int, _chunk_spec: ArraySpec) -> int:
        raise NotImplementedError("sparse_layout chunks have no fixed encoded size")

    def _engine(self, spec: ArraySpec) -> Any:
        from zarr_rs.pipeline import _Chunks

        key = (tuple(spec.shape), spec.dtype, repr(spec.fill_value))
        got = self._chunks.get(key)
        if got is None:
            got = _Chunks((self,), spec)
            self._chunks[key] = got
        return got

    async def _decode_single(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> NDBuffer:
        chunks = self._engine(chunk_spec)
        (decoded,) = chunks.codec.decode([chunk_bytes.as_numpy_array()])
        return chunk_spec.prototype.nd_buffer.from_ndarray_like(
            chunks.to_numpy(decoded, chunks.shape)
        )

    async def _encode_single(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> Buffer | None:
        import numpy as np

        chunks = self._engine(chunk_spec)
        (encoded,) = chunks.encode([np.asarray(chunk_array.as_ndarray_like())])
        return chunk_spec.prototype.buffer.from_bytes(encoded)


def _rebuild(config: str) -> SparseLayoutCodec:
    return SparseLayoutCodec(configuration=json.loads(config))
