"""The exceptions of zarr_rs.

Every error the Rust engine reports is raised as a subclass of :class:`ZarrError` that also
subclasses the built-in exception a Python user would catch, so both ``except
zarr_rs.ZarrError`` and ``except KeyError`` (or ``FileNotFoundError``, ``IndexError``,
``ValueError``, ``OSError``) work. The message is the engine's, causes included. This module
is where each class is defined, once: the engine (``zarr_rs._core``) takes these very class
objects when it loads and raises them.

======================== ======================================== ==============================
class                    also a                                   raised for
======================== ======================================== ==============================
NodeNotFoundError        KeyError, FileNotFoundError              no array or group at a path
NodeExistsError          FileExistsError                          creating where a node exists
NodeTypeError            ValueError                               a group where an array is
                                                                  expected, or the reverse
MetadataError            ValueError                               malformed ``zarr.json``, an
                                                                  unknown extension, no
                                                                  consolidated metadata where
                                                                  ``use_consolidated=True``
                                                                  requires it
ChunkError               ValueError                               a corrupt or truncated chunk
BoundsError              IndexError                               indices or selections outside
                                                                  the array
ShapeError               ValueError                               data of the wrong shape
DataTypeError            TypeError, ValueError                    data of a type that does not
                                                                  cast safely to the array's
InvalidArgumentError     ValueError                               any other bad argument
UnsupportedError         ValueError                               an operation the array cannot
                                                                  do (sparse calls on a dense
                                                                  array, ...)
TooLargeError            MemoryError                              a buffer too large for memory
StoreError               OSError                                  the store failed (I/O, network)
ReadOnlyError            StoreError, PermissionError              writing to a read-only store
                                                                  or an array opened with "r"
======================== ======================================== ==============================
"""

from __future__ import annotations

__all__ = [
    "BoundsError",
    "ChunkError",
    "DataTypeError",
    "InvalidArgumentError",
    "MetadataError",
    "NodeExistsError",
    "NodeNotFoundError",
    "NodeTypeError",
    "ReadOnlyError",
    "ShapeError",
    "StoreError",
    "TooLargeError",
    "UnsupportedError",
    "ZarrError",
]


class ZarrError(Exception):
    """Base class of every zarr_rs error."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class NodeNotFoundError(ZarrError, KeyError, FileNotFoundError):
    """No array or group at the path."""


class NodeExistsError(ZarrError, FileExistsError):
    """A node already exists where one is being created (pass ``overwrite=True`` or
    ``mode="w"`` to replace it)."""


class NodeTypeError(ZarrError, ValueError):
    """A node of the other kind (a group where an array is expected, or the reverse)."""


class MetadataError(ZarrError, ValueError):
    """Malformed metadata, an extension this build does not know, or a group without the
    consolidated metadata that ``use_consolidated=True`` requires (zarr-python raises
    ``ValueError`` then too)."""


class ChunkError(ZarrError, ValueError):
    """A chunk that does not decode (corrupt, truncated, or invalid sparse data)."""


class BoundsError(ZarrError, IndexError):
    """An index or selection that does not fit the array."""


class ShapeError(ZarrError, ValueError):
    """Data of the wrong shape for a write, append or prepend."""


class DataTypeError(ZarrError, TypeError, ValueError):
    """Data whose type does not cast safely to the array's data type."""


class InvalidArgumentError(ZarrError, ValueError):
    """A bad argument: path, url, chunk shape, codec, axis, ..."""


class UnsupportedError(ZarrError, ValueError):
    """An operation this array does not support (sparse access to a dense array, ...)."""


class TooLargeError(ZarrError, MemoryError):
    """A buffer too large to hold in memory."""


class StoreError(ZarrError, OSError):
    """The store failed (I/O or network)."""


class ReadOnlyError(StoreError, PermissionError):
    """A write to a read-only store, or to an array or group opened with mode "r"."""
