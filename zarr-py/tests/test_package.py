"""The package's surface: what ``zarr_rs`` and ``zarr_rs.core`` offer stays importable where it
was."""

from __future__ import annotations

import pickle

import zarr_rs
import zarr_rs.core

# Every name ``zarr_rs.core`` defined when it held arrays, groups, attributes and dtypes
# together (before the split by concern): code that imports them from there keeps working.
# (``_VLEN_TYPES``, a table of Zarr data type names, is gone: the engine names the element
# type, ``ArrayCore.vlen_type``.)
CORE_NAMES = """
Mode _DEFAULT_COMPRESSORS _np_dtype _vlen_items _object_array _KIND_RANK _as_data
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


# ---- zarr_rs._core against its stubs ----

def _stub_tree():
    import ast
    import pathlib

    path = pathlib.Path(zarr_rs._core.__file__).with_name("_core.pyi")
    if not path.exists():  # an installed wheel may leave the stubs out; the source tree has them
        path = pathlib.Path(__file__).parents[1] / "python" / "zarr_rs" / "_core.pyi"
    return ast.parse(path.read_text())


def _params(fn) -> list[tuple[str, bool]]:
    """``(name, has a default)`` per parameter, ``self`` and the positional-only marker left
    out."""
    import ast

    if isinstance(fn, ast.FunctionDef):
        args = fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs
        defaults = [False] * (len(fn.args.posonlyargs) + len(fn.args.args) - len(fn.args.defaults))
        defaults += [True] * len(fn.args.defaults)
        defaults += [d is not None for d in fn.args.kw_defaults]
        return [(a.arg, d) for a, d in zip(args, defaults) if a.arg != "self"]
    import inspect

    return [
        (p.name, p.default is not inspect.Parameter.empty)
        for p in inspect.signature(fn).parameters.values()
        if p.name != "self"
    ]


def _stub_members(body) -> dict:
    """The names a stub body declares: functions (``ast.FunctionDef``, ``kind`` "property" when
    decorated so), classes and annotated variables; plain assignments are type aliases of the
    stubs only (``SelectionKind``), not names of the module."""
    import ast

    out = {}
    for node in body:
        if isinstance(node, ast.FunctionDef):
            prop = any(isinstance(d, ast.Name) and d.id == "property" for d in node.decorator_list)
            out[node.name] = ("property" if prop else "function", node)
        elif isinstance(node, ast.ClassDef):
            out[node.name] = ("class", node)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out[node.target.id] = ("value", node)
    return out


def _public(names) -> set[str]:
    return {n for n in names if not n.startswith("__") or n == "__version__"}


def test_core_stubs_match_the_extension():
    """``_core.pyi`` declares exactly what the extension exports: the same module names, the
    same members of each class (properties as properties), and the same parameters (names,
    order, which have defaults) for every function and method."""
    import inspect

    core = zarr_rs._core
    stubs = _stub_members(_stub_tree().body)
    assert set(stubs) == _public(dir(core)), (
        f"only in the stubs: {sorted(set(stubs) - _public(dir(core)))}, "
        f"only in the extension: {sorted(_public(dir(core)) - set(stubs))}"
    )
    for name, (kind, node) in stubs.items():
        obj = getattr(core, name)
        if kind == "function":
            assert _params(node) == _params(obj), f"{name}: stubs {_params(node)}, extension {_params(obj)}"
        if kind != "class":
            continue
        # dunders (a constructor's `__init__`) are typing conveniences, not exports
        members = {m: v for m, v in _stub_members(node.body).items() if not m.startswith("__")}
        real = {n for n in dir(obj) if not n.startswith("__")}
        assert set(members) == real, (
            f"{name}: only in the stubs {sorted(set(members) - real)}, "
            f"only in the extension {sorted(real - set(members))}"
        )
        for m, (mkind, mnode) in members.items():
            attr = inspect.getattr_static(obj, m)
            is_prop = type(attr).__name__ == "getset_descriptor"
            assert is_prop == (mkind == "property"), f"{name}.{m}: property in one place only"
            if not is_prop:
                got = _params(getattr(obj, m))
                assert _params(mnode) == got, f"{name}.{m}: stubs {_params(mnode)}, extension {got}"


# ---- docstrings ----

# the modules whose docstring examples run here (in a fresh directory: they create stores)
DOCTEST_MODULES = ["zarr_rs", "zarr_rs._open", "zarr_rs._array", "zarr_rs._group",
                   "zarr_rs._attributes", "zarr_rs.dask"]


def _public_api():
    """``(name, object)`` of every public function, class, method and property of zarr_rs and
    of its public modules (dask, errors, xarray_backend)."""
    import inspect

    import zarr_rs.dask
    import zarr_rs.errors
    import zarr_rs.xarray_backend

    out = []

    def add(name, obj):
        out.append((name, obj))
        if inspect.isclass(obj):
            for m, v in vars(obj).items():
                if not m.startswith("_"):
                    out.append((f"{name}.{m}", v))

    for n in zarr_rs.__all__:
        if n not in ("__version__", "errors"):
            add(n, getattr(zarr_rs, n))
    for mod in (zarr_rs.dask, zarr_rs.errors, zarr_rs.xarray_backend):
        out.append((mod.__name__, mod))
        for n, o in vars(mod).items():
            if not n.startswith("_") and getattr(o, "__module__", None) == mod.__name__:
                add(f"{mod.__name__}.{n}", o)
    return out


def test_every_public_name_has_a_docstring():
    import inspect

    missing = [n for n, o in _public_api() if not isinstance(o, str) and not inspect.getdoc(o)]
    assert not missing, f"no docstring: {missing}"


def test_the_entry_points_show_an_example():
    import zarr_rs.dask

    for obj in (zarr_rs, zarr_rs.create_array, zarr_rs.open, zarr_rs.open_array,
                zarr_rs.open_group, zarr_rs.create_group, zarr_rs.consolidate_metadata,
                zarr_rs.Array, zarr_rs.Group, zarr_rs.Attributes, zarr_rs.Array.append,
                zarr_rs.Array.prepend, zarr_rs.Array.resize, zarr_rs.Array.read_csr,
                zarr_rs.Array.read_coo, zarr_rs.Array.write_sparse, zarr_rs.Array.spmv,
                zarr_rs.dask.to_dask, zarr_rs.dask.from_dask):
        assert ">>> " in (obj.__doc__ or ""), f"{obj.__qualname__ if hasattr(obj, '__qualname__') else obj} has no example"


def test_docstring_examples_run(tmp_path, monkeypatch):
    """Every ``>>>`` example of the package runs and prints what it shows."""
    import doctest
    import importlib

    monkeypatch.chdir(tmp_path)
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report: list[str] = []
    for name in DOCTEST_MODULES:
        for test in finder.find(importlib.import_module(name)):
            runner.run(test, out=report.append)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, "".join(report)
    assert result.attempted >= 100, result
