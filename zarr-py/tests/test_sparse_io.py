"""zarr_rs.import_sparse / export_sparse against the other side's own readers and writers:
SciPy (mmread / mmwrite, load_npz / save_npz), anndata 0.12 (read_zarr, write_zarr,
anndata.io.sparse_dataset) and binsparse's reference implementation (load_binsparse /
save_binsparse; its descriptor checked field by field when it is not installed); and a seeded
differential test of a few hundred small random matrices (values, shapes, dtypes, and the
exception types of bad input against SciPy's)."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

import zarr_rs
from zarr_rs import errors

DTYPES = ["float32", "float64", "int32", "int64"]


def random_matrix(rng, rows, cols, density, dtype):
    m = sp.random(rows, cols, density=density, format="csr", dtype=np.float64, random_state=rng)
    m.data = np.round(m.data * 200 - 100)
    m.data[m.data == 0] = 1
    m = m.astype(dtype)
    m.eliminate_zeros()
    return m


def special(dtype):
    """A 7x6 matrix with an empty row, an empty column and entries at the corners."""
    d = np.zeros((7, 6), dtype=dtype)
    d[0, 0], d[6, 5], d[0, 5], d[3, 2], d[6, 0] = 1, -2, 3, 4, 5
    d[:, 4] = 0
    d[2, :] = 0
    return sp.csr_matrix(d)


def same(a, b):
    a, b = sp.csr_matrix(a), sp.csr_matrix(b)
    assert a.shape == b.shape
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    assert (a != b).nnz == 0


def read(arr):
    return arr.read_csr()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("gz", [False, True])
def test_matrix_market_both_ways_against_scipy(tmp_path, dtype, gz):
    rng = np.random.default_rng(1)
    for i, m in enumerate([random_matrix(rng, 40, 30, 0.1, dtype), special(dtype), sp.csr_matrix((5, 4), dtype=dtype)]):
        src = tmp_path / f"m{i}.mtx"
        scipy.io.mmwrite(src, m)
        if gz:
            gzip.open(f"{src}.gz", "wb").write(src.read_bytes())
            src = tmp_path / f"m{i}.mtx.gz"
        a = zarr_rs.import_sparse(src, str(tmp_path / f"a{i}"), dtype=dtype, chunks=(3, 4))
        same(read(a), m)
        out = tmp_path / (f"o{i}.mtx.gz" if gz else f"o{i}.mtx")
        zarr_rs.export_sparse(a, out)
        back = scipy.io.mmread(out)
        same(back.astype(dtype), m)
        # the exported file says the array's field
        head = (gzip.open(out) if gz else open(out, "rb")).readline()
        assert head.split()[3] == (b"integer" if dtype.startswith("int") else b"real")


def test_matrix_market_symmetric_and_pattern_as_scipy_reads_them(tmp_path):
    rng = np.random.default_rng(2)
    m = random_matrix(rng, 20, 20, 0.1, "float64")
    sym = sp.csr_matrix(m + m.T)
    scipy.io.mmwrite(tmp_path / "s.mtx", sym, symmetry="symmetric")
    assert b"symmetric" in (tmp_path / "s.mtx").read_bytes()[:80]
    a = zarr_rs.import_sparse(tmp_path / "s.mtx", str(tmp_path / "s"))
    same(read(a), sp.csr_matrix(scipy.io.mmread(tmp_path / "s.mtx")))
    pat = m.copy()
    pat.data[:] = 1
    scipy.io.mmwrite(tmp_path / "p.mtx", pat, field="pattern")
    a = zarr_rs.import_sparse(tmp_path / "p.mtx", str(tmp_path / "p"))
    same(read(a), sp.csr_matrix(scipy.io.mmread(tmp_path / "p.mtx")))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_npz_both_ways_against_scipy(tmp_path, dtype, fmt):
    rng = np.random.default_rng(3)
    for i, m in enumerate([random_matrix(rng, 33, 21, 0.2, dtype), special(dtype), sp.csr_matrix((3, 8), dtype=dtype)]):
        sp.save_npz(tmp_path / f"m{i}.npz", m.asformat(fmt), compressed=bool(i % 2))
        a = zarr_rs.import_sparse(tmp_path / f"m{i}.npz", str(tmp_path / f"a{i}"), chunks=(4, 5))
        same(read(a), m)
        zarr_rs.export_sparse(a, tmp_path / f"o{i}.npz", layout=fmt)
        back = sp.load_npz(tmp_path / f"o{i}.npz")
        assert back.format == fmt
        same(back, m)


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_anndata_both_ways(tmp_path, zarr_format, fmt, dtype):
    ad = pytest.importorskip("anndata")
    import zarr

    rng = np.random.default_rng(4)
    for i, m in enumerate([random_matrix(rng, 30, 17, 0.15, dtype), special(dtype), sp.csr_matrix((4, 6), dtype=dtype)]):
        m = m.asformat(fmt)
        # what anndata writes, we read (X and a layer)
        adata = ad.AnnData(X=m, layers={"counts": m.tocsr()})
        with ad.settings.override(zarr_write_format=zarr_format):
            adata.write_zarr(tmp_path / f"ad{i}.zarr")
        a = zarr_rs.import_sparse(str(tmp_path / f"ad{i}.zarr" / "X"), str(tmp_path / f"x{i}"))
        same(read(a), m)
        b = zarr_rs.import_sparse(str(tmp_path / f"ad{i}.zarr" / "layers" / "counts"), str(tmp_path / f"l{i}"))
        same(read(b), m)
        # what we write, anndata reads: read_zarr and sparse_dataset
        out = str(tmp_path / f"ours{i}.zarr")
        zarr_rs.export_sparse(a, out, format="anndata", layout=fmt, zarr_format=zarr_format)
        zarr_rs.export_sparse(a, out, format="anndata", element="layers/raw", layout="csr", zarr_format=zarr_format)
        back = ad.read_zarr(out)
        assert back.shape == m.shape
        same(back.X, m)
        assert back.X.format == fmt
        same(back.layers["raw"], m)
        ds = ad.io.sparse_dataset(zarr.open_group(out, mode="r")["X"])
        assert ds.format == fmt and ds.shape == m.shape
        same(ds.to_memory(), m)


def test_binsparse_both_ways(tmp_path):
    rng = np.random.default_rng(5)
    m = random_matrix(rng, 25, 31, 0.1, "float32")
    a = zarr_rs.import_sparse(*_npz(tmp_path, m), str(tmp_path / "a"))
    for layout, name in [("csr", "CSR"), ("csc", "CSC"), ("coo", "COOR")]:
        dest = str(tmp_path / f"bs-{layout}.zarr")
        zarr_rs.export_sparse(a, dest, format="binsparse", layout=layout)
        try:
            import binsparse
            from binsparse.conversions.scipy import from_scipy, to_scipy
        except ImportError:
            binsparse = None
        import zarr

        # the descriptor, field by field (binsparse 0.1, as the reference stores it in Zarr)
        g = zarr.open_group(dest, mode="r")
        d = dict(g.attrs)["binsparse"]["binsparse"]
        assert d["version"] == "0.1.0" and d["format"] == name
        assert d["shape"] == list(m.shape) and d["number_of_stored_values"] == m.nnz
        names = ["indices_0", "indices_1", "values"] if layout == "coo" else ["pointers_to_1", "indices_1", "values"]
        assert sorted(d["data_types"]) == sorted(names)
        for n in names:
            assert str(g[n].dtype) == d["data_types"][n]
        assert g["values"].shape == (m.nnz,)
        if binsparse is not None:
            same(to_scipy(binsparse.load_binsparse(dest)), m)
            # and the reference's own writing, read back
            ref = str(tmp_path / f"ref-{layout}.zarr")
            binsparse.save_binsparse(from_scipy(m.asformat(layout)), ref)
            b = zarr_rs.import_sparse(ref, str(tmp_path / f"b-{layout}"))
            same(read(b), m)


def _npz(tmp_path, m):
    p = tmp_path / "src.npz"
    sp.save_npz(p, m)
    return (p,)


def _mtx_text(rows, cols, entries, nnz=None, field="real"):
    lines = [f"%%MatrixMarket matrix coordinate {field} general", f"{rows} {cols} {len(entries) if nnz is None else nnz}"]
    lines += [f"{r} {c} {v}" for r, c, v in entries]
    return "\n".join(lines) + "\n"


def test_differential_random_matrices_against_scipy(tmp_path):
    """300 seeded random small matrices, each through one format both ways; then bad input,
    where SciPy's readers refuse, we refuse with the same exception type (ValueError)."""
    rng = np.random.default_rng(2026)
    formats = ["mtx", "mtx.gz", "npz-csr", "npz-csc", "npz-coo"]
    for case in range(300):
        rows, cols = int(rng.integers(0, 12)), int(rng.integers(0, 12))
        density = float(rng.choice([0.0, 0.05, 0.3, 1.0]))
        dtype = str(rng.choice(DTYPES))
        m = random_matrix(rng, rows, cols, density, dtype) if rows and cols else sp.csr_matrix((rows, cols), dtype=dtype)
        fmt = formats[case % len(formats)]
        chunks = (int(rng.integers(1, 6)), int(rng.integers(1, 6)))
        d = tmp_path / str(case)
        d.mkdir()
        if fmt.startswith("mtx"):
            src = d / f"m.{fmt}"
            scipy.io.mmwrite(d / "m.mtx", m)
            if fmt == "mtx.gz":
                gzip.open(src, "wb").write((d / "m.mtx").read_bytes())
            a = zarr_rs.import_sparse(src, str(d / "a"), dtype=dtype, chunks=chunks)
            out = d / f"o.{fmt}"
            zarr_rs.export_sparse(a, out)
            back = scipy.io.mmread(out).astype(dtype)
        else:
            layout = fmt.split("-")[1]
            sp.save_npz(d / "m.npz", m.asformat(layout), compressed=bool(case % 2))
            a = zarr_rs.import_sparse(d / "m.npz", str(d / "a"), chunks=chunks, layout=str(rng.choice(["csr", "csc", "coo"])))
            zarr_rs.export_sparse(a, d / "o.npz", layout=layout)
            back = sp.load_npz(d / "o.npz")
        assert a.shape == m.shape, case
        same(read(a), m)
        same(back, m)
    # bad Matrix Market input: where SciPy refuses, so do we, with the same type
    bad = {
        "out_of_range": _mtx_text(3, 3, [(1, 1, 1.0), (4, 1, 2.0)]),
        "zero_index": _mtx_text(3, 3, [(0, 1, 1.0)]),
        "not_a_number": _mtx_text(3, 3, [(1, 1, "x")]),
        "truncated": _mtx_text(3, 3, [(1, 1, 1.0)], nnz=3),
        "too_many": _mtx_text(3, 3, [(1, 1, 1.0), (2, 2, 2.0)], nnz=1),
        "bad_banner": "%%MatrixMarket matrix coordinate real nonsense\n1 1 0\n",
        "no_size": "%%MatrixMarket matrix coordinate real general\n",
    }
    compared = 0
    for name, text in bad.items():
        p = tmp_path / f"{name}.mtx"
        p.write_text(text)
        try:
            scipy.io.mmread(p)
            scipy_raised = None
        except Exception as e:  # noqa: BLE001 - SciPy's type is what is compared
            scipy_raised = type(e)
        with pytest.raises(errors.InvalidArgumentError if name != "bad_banner" else errors.UnsupportedError) as info:
            zarr_rs.import_sparse(p, str(tmp_path / f"t-{name}"))
        assert f"{name}.mtx" in str(info.value)
        assert not (tmp_path / f"t-{name}" / "zarr.json").exists()
        if scipy_raised is not None:
            assert issubclass(scipy_raised, ValueError), (name, scipy_raised)
            assert isinstance(info.value, ValueError)
            compared += 1
    assert compared >= 4


def test_differential_band_sort_against_scipy(tmp_path):
    """Seeded matrices large enough to spill at the smallest max_memory, whose entries come in
    row-major, column-major (as 10x Genomics writes) and shuffled order, through the import's
    bucket sort by bands of rows: each equals SciPy's own reading of the file; a file with one
    entry given twice is refused (SciPy sums the two), naming the entry."""
    rng = np.random.default_rng(41)
    for case in range(12):
        rows, cols = int(rng.integers(100, 3000)), int(rng.integers(20, 400))
        dtype = DTYPES[case % len(DTYPES)]
        m = random_matrix(rng, rows, cols, min(1.0, float(rng.uniform(20000, 40000)) / (rows * cols)), dtype)
        coo = m.tocoo()
        r, c, v = coo.row, coo.col, coo.data
        order = [np.lexsort((c, r)), np.lexsort((r, c)), rng.permutation(len(v))][case % 3]
        entries = [(int(r[k]) + 1, int(c[k]) + 1, v[k].item()) for k in order]
        field = "integer" if dtype.startswith("int") else "real"
        text = _mtx_text(rows, cols, entries, field=field)
        src = tmp_path / f"b{case}.mtx"
        src.write_text(text)
        if case % 2:
            gzip.open(f"{src}.gz", "wb").write(text.encode())
            src = tmp_path / f"b{case}.mtx.gz"
        a = zarr_rs.import_sparse(src, str(tmp_path / f"a{case}"), dtype=dtype, max_memory=1 << 20, temp_dir=tmp_path)
        assert a.shape == m.shape, case
        same(read(a), m)
        same(read(a), sp.csr_matrix(scipy.io.mmread(src)).astype(dtype))
        # the CSC .npz of the same matrix goes through the same sort
        sp.save_npz(tmp_path / f"b{case}.npz", m.tocsc())
        b = zarr_rs.import_sparse(tmp_path / f"b{case}.npz", str(tmp_path / f"n{case}"), max_memory=1 << 20, temp_dir=tmp_path)
        same(read(b), m)
        # one entry given twice, anywhere: refused, and no array left
        k = int(rng.integers(0, len(entries)))
        twice = list(entries)
        twice.insert(int(rng.integers(0, len(entries))), entries[k])
        p = tmp_path / f"d{case}.mtx"
        p.write_text(_mtx_text(rows, cols, twice, field=field))
        with pytest.raises(errors.InvalidArgumentError, match=f"entry \\({entries[k][0] - 1}, {entries[k][1] - 1}\\) is given twice"):
            zarr_rs.import_sparse(p, str(tmp_path / f"t{case}"), dtype=dtype, max_memory=1 << 20, temp_dir=tmp_path)
        assert not (tmp_path / f"t{case}" / "zarr.json").exists()


def test_bad_npz_and_groups_are_refused_with_their_place(tmp_path):
    m = special("float64")
    sp.save_npz(tmp_path / "m.npz", m)
    z = dict(np.load(tmp_path / "m.npz"))
    # indptr not monotone, indices out of range, mismatched lengths, a lying shape
    cases = {
        "indptr": (dict(z, indptr=z["indptr"][::-1].copy()), "indptr.npy"),
        "indices": (dict(z, indices=z["indices"] + 100), "outside the 7x6 matrix"),
        "lengths": (dict(z, data=z["data"][:-1]), "indices but"),
        "shape": (dict(z, shape=np.array([2, 2])), "pointers for 2 rows"),
    }
    for name, (arrays, msg) in cases.items():
        p = tmp_path / f"{name}.npz"
        np.savez(p, **arrays)
        with pytest.raises(ValueError, match=msg):
            zarr_rs.import_sparse(p, str(tmp_path / f"t-{name}"))
        assert not (tmp_path / f"t-{name}" / "zarr.json").exists()
    np.savez(tmp_path / "fmt.npz", **dict(z, format=np.array(b"dia")))
    with pytest.raises(errors.UnsupportedError, match="dia"):
        zarr_rs.import_sparse(tmp_path / "fmt.npz", str(tmp_path / "t-fmt"))
    with pytest.raises(FileNotFoundError):
        zarr_rs.import_sparse(tmp_path / "missing.mtx", str(tmp_path / "t-missing"))
    # a group that is neither anndata nor binsparse
    import zarr

    zarr.open_group(tmp_path / "plain.zarr", mode="w").attrs["x"] = 1
    with pytest.raises(ValueError, match="neither an anndata"):
        zarr_rs.import_sparse(str(tmp_path / "plain.zarr"), str(tmp_path / "t-plain"))
    # a dense array is not exported as a sparse matrix, and leaves no file
    dense = zarr_rs.create_array(str(tmp_path / "dense"), shape=(3, 3), chunks=(3, 3), dtype="float64")
    with pytest.raises(errors.UnsupportedError):
        zarr_rs.export_sparse(dense, tmp_path / "d.mtx")
    assert not (tmp_path / "d.mtx").exists()
    assert json.loads((tmp_path / "dense" / "zarr.json").read_text())["shape"] == [3, 3]


def test_a_matrix_larger_than_the_memory_limit_converts(tmp_path):
    """An unsorted (column-major) Matrix Market file whose entries take far more than
    max_memory converts, spilling sorted runs; the result equals SciPy's reading."""
    rng = np.random.default_rng(6)
    m = random_matrix(rng, 3000, 2000, 0.02, "float64")  # 120 000 entries, ~2.9 MB as triples
    scipy.io.mmwrite(tmp_path / "big.mtx", m.tocsc())
    a = zarr_rs.import_sparse(tmp_path / "big.mtx", str(tmp_path / "a"), max_memory=1 << 20, temp_dir=tmp_path)
    same(read(a), m)
    zarr_rs.export_sparse(a, tmp_path / "o.npz", layout="csc", max_memory=1 << 20, temp_dir=tmp_path)
    same(sp.load_npz(tmp_path / "o.npz"), m)
