"""The user attributes of arrays and groups: :class:`Attributes`."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any


class Attributes(MutableMapping):
    """The user attributes of an array or group: a dict that writes the metadata on every
    change (``update`` writes once).

    >>> import zarr_rs
    >>> a = zarr_rs.create_array("attributes.zarr", shape=(1,), dtype="int8")
    >>> a.attrs["units"] = "m"
    >>> a.attrs.update(scale=2, offset=0.5)
    >>> del a.attrs["offset"]
    >>> zarr_rs.open_array("attributes.zarr", mode="r").attrs.asdict()
    {'units': 'm', 'scale': 2}
    """

    def __init__(self, node: Any):
        self._node = node

    def _load(self) -> dict:
        return json.loads(self._node.attributes_json())

    def _store(self, d: dict) -> None:
        self._node.set_attributes_json(json.dumps(d, allow_nan=True))

    def __getitem__(self, key: str) -> Any:
        return self._load()[key]

    def __setitem__(self, key: str, value: Any) -> None:
        d = self._load()
        d[key] = value
        self._store(d)

    def __delitem__(self, key: str) -> None:
        d = self._load()
        del d[key]
        self._store(d)

    def __iter__(self) -> Iterator[str]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())

    def update(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        """Sets several attributes with one metadata write."""
        d = self._load()
        d.update(*args, **kwargs)
        self._store(d)

    def put(self, d: Mapping[str, Any]) -> None:
        """Replaces every attribute."""
        self._store(dict(d))

    def asdict(self) -> dict:
        """A plain dict copy."""
        return self._load()

    def __repr__(self) -> str:
        return repr(self._load())


class _Writer:
    """The attribute interface of a node core that drops the cached metadata on writes."""

    def __init__(self, core: Any, changed: Any):
        self._core = core
        self._changed = changed

    def attributes_json(self) -> str:
        return self._core.attributes_json()

    def set_attributes_json(self, text: str) -> None:
        self._core.set_attributes_json(text)
        self._changed()
