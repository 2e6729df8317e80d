""":class:`Group`: a Zarr group as a mapping of its children, on top of the Rust engine
(``zarr_rs._core.GroupCore``), and :class:`Unreadable`, a child it cannot read."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Sequence

from . import _core
from ._array import Array
from ._attributes import Attributes
from ._spec import _spec
from .errors import InvalidArgumentError, NodeTypeError


class Unreadable:
    """A child whose metadata this build cannot read (an unknown data type, codec or chunk
    grid, or a broken document), as :meth:`Group.members` lists it: ``reason`` is the error
    opening it gives."""

    def __init__(self, location: str, path: str, reason: str):
        self.store_location = location
        self.path = path
        self.reason = reason

    def __repr__(self) -> str:
        return f"<zarr_rs.Unreadable {self.path!r}: {self.reason}>"


class Group(Mapping):
    """A Zarr group (v3, or v2 where opened or created so): a mapping from child names to
    :class:`Array` and :class:`Group`.

    >>> import zarr_rs
    >>> g = zarr_rs.create_group("group.zarr", attributes={"title": "demo"})
    >>> _ = g.create_array("x", shape=(2, 2), dtype="float32")
    >>> sub = g.require_group("sub")
    >>> _ = sub.create_array("y", shape=(3,), dtype="int8")
    >>> sorted(g), g.array_keys(), g.group_keys(), len(g)
    (['sub', 'x'], ['x'], ['sub'], 2)
    >>> g["sub/y"].shape, "sub/y" in g, "z" in g
    ((3,), True, False)
    >>> print(g.tree())
    /
    ├── sub
    │   └── y (3,) int8
    └── x (2, 2) float32
    """

    def __init__(self, core: Any, location: str, path: str = ""):
        self._core = core
        self._location = location
        self._path = path

    def __reduce__(self) -> tuple:
        mode = "r" if self._core.read_only else "r+"
        return (_reopen_group, (self._location, self._path, mode))

    @property
    def path(self) -> str:
        """The group's path inside its store."""
        return self._path

    @property
    def name(self) -> str:
        """The absolute node name (``/`` + path)."""
        return "/" + self._path

    @property
    def store_location(self) -> str:
        """The path or url of the store the group is in."""
        return self._location

    @property
    def read_only(self) -> bool:
        """Whether the group was opened with mode "r"."""
        return bool(self._core.read_only)

    @property
    def attrs(self) -> Attributes:
        """The user attributes (changes are written at once)."""
        return Attributes(self._core)

    def _child_path(self, name: str) -> str:
        return f"{self._path}/{name}" if self._path else name

    def _wrap(self, core: Any, name: str) -> "Array | Group":
        path = self._child_path(name)
        if isinstance(core, _core.ArrayCore):
            return Array(core, self._location, path)
        return Group(core, self._location, path)

    def _node(self, name: str, kind: str, reason: str | None) -> "Array | Group | Unreadable":
        if kind == "unreadable":
            return Unreadable(self._location, self._child_path(name), reason or "")
        return self[name]

    def members(self, max_depth: int | None = 1) -> list[tuple[str, "Array | Group | Unreadable"]]:
        """The children as ``(name, node)`` pairs, sorted by name; ``max_depth=None`` lists
        every node below the group by relative path (``"a/b"``). A child whose metadata this
        build cannot read is an :class:`Unreadable` (with the reason) instead of failing the
        listing. From the group's consolidated metadata when it was opened through some.

        >>> import zarr_rs
        >>> g = zarr_rs.create_group("members.zarr")
        >>> _ = g.create_group("a").create_array("b", shape=(1,), dtype="int8")
        >>> [name for name, _ in g.members()], [name for name, _ in g.members(max_depth=None)]
        (['a'], ['a', 'a/b'])
        """
        if max_depth == 1:
            listed = self._core.members()
        elif max_depth is None:
            listed = self._core.members_recursive()
        else:
            if max_depth < 1:
                raise InvalidArgumentError(f"max_depth must be None or at least 1, not {max_depth}")
            listed = [m for m in self._core.members_recursive() if m[0].count("/") < max_depth]
        return [(name, self._node(name, kind, reason)) for name, kind, reason in listed]

    @property
    def is_consolidated(self) -> bool:
        """Whether the group was opened through consolidated metadata."""
        return bool(self._core.is_consolidated())

    @property
    def zarr_format(self) -> int:
        """The Zarr format of the group's metadata: 3 (``zarr.json``) or 2 (``.zgroup``)."""
        return int(self._core.zarr_format())

    def __getitem__(self, name: str) -> "Array | Group":
        node: Any = self
        for part in name.strip("/").split("/"):
            node = node._wrap(node._core.child(part), part)
            if not isinstance(node, Group) and part != name.strip("/").split("/")[-1]:
                raise NodeTypeError(f"{node.path!r} is an array, not a group")
        return node

    def __iter__(self) -> Iterator[str]:
        return iter(name for name, _, _ in self._core.members())

    def __len__(self) -> int:
        return len(self._core.members())

    def __contains__(self, name: object) -> bool:
        try:
            self[str(name)]
        except KeyError:
            return False
        return True

    def keys(self) -> list[str]:  # type: ignore[override]
        """The children's names."""
        return [name for name, _, _ in self._core.members()]

    def array_keys(self) -> list[str]:
        """The names of the child arrays."""
        return [name for name, kind, _ in self._core.members() if kind == "array"]

    def group_keys(self) -> list[str]:
        """The names of the child groups."""
        return [name for name, kind, _ in self._core.members() if kind == "group"]

    def arrays(self) -> list[tuple[str, Array]]:
        """The child arrays as ``(name, array)`` pairs."""
        return [(n, self[n]) for n in self.array_keys()]  # type: ignore[misc]

    def groups(self) -> list[tuple[str, "Group"]]:
        """The child groups as ``(name, group)`` pairs."""
        return [(n, self[n]) for n in self.group_keys()]  # type: ignore[misc]

    def create_group(
        self, name: str, *, attributes: Mapping[str, Any] | None = None,
        zarr_format: int | None = None,
    ) -> "Group":
        """Creates a child group, of this group's Zarr format unless ``zarr_format`` (2 or 3)
        says otherwise (zarr-python's view of a group, and its consolidated metadata, list the
        children of the group's format only)."""
        core = self._core.create_group(name, dict(attributes or {}), zarr_format)
        return Group(core, self._location, self._child_path(name))

    def require_group(self, name: str) -> "Group":
        """The child group ``name``, created when missing."""
        try:
            node = self[name]
        except KeyError:
            return self.create_group(name)
        if not isinstance(node, Group):
            raise NodeTypeError(f"{node.path!r} is an array, not a group")
        return node

    def create_array(self, name: str, *, shape: Sequence[int], dtype: Any, **kwargs: Any) -> Array:
        """Creates a child array; the keywords are :func:`zarr_rs.create_array`'s (the array is
        of this group's Zarr format unless ``zarr_format`` says otherwise)."""
        spec = _spec(shape=shape, dtype=dtype, **kwargs)
        core = self._core.create_array(name, spec)
        return Array(core, self._location, self._child_path(name))

    def tree(self) -> str:
        """The hierarchy below this group as indented text (arrays with shape and dtype)."""
        lines = [self.name]

        def walk(g: Group, indent: str) -> None:
            items = g.members()
            for i, (name, node) in enumerate(items):
                last = i == len(items) - 1
                branch = "└── " if last else "├── "
                if isinstance(node, Array):
                    lines.append(f"{indent}{branch}{name} {node.shape} {node.dtype}")
                elif isinstance(node, Unreadable):
                    lines.append(f"{indent}{branch}{name} (unreadable: {node.reason})")
                else:
                    lines.append(f"{indent}{branch}{name}")
                    walk(node, indent + ("    " if last else "│   "))

        walk(self, "")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<zarr_rs.Group {self._location!r} path={self._path!r}>"


def _reopen_group(location: str, path: str, mode: str) -> Group:
    """The group a pickled :class:`Group` names (a third item of ``__reduce__``'s tuple
    would be pickle state, not keywords)."""
    return Group(_core.open_group(location, path, mode), location, path)
