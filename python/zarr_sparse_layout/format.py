"""The `sparse_layout` chunk byte format, written from docs/sparse_layout.md alone.

An encoded chunk (all integers little-endian, offsets from the start of the chunk's bytes):

* a 32-byte header: magic ``ZSPL``, version 1, format (0 = COO, 1 = CSR, 2 = CSC),
  index width, pointer width (0 for COO), nnz (u64), ndim (u16), number of sections (u16),
  value size (u32), 8 reserved zero bytes;
* a section table of ``{offset: u64, nbytes: u64}`` per section;
* the sections, each starting at a multiple of 8, zero padding in between:
  COO: ``indices`` as one row-major ``(ndim, nnz)`` block, ``values``;
  CSR: ``pointers_to_1`` (rows + 1), ``indices_1`` (column of each value), ``values``;
  CSC: ``pointers_to_1`` (cols + 1), ``indices_1`` (row of each value), ``values``.

:func:`encode_chunk` writes the canonical layout byte for byte; :func:`decode_chunk` and
:func:`decode_sparse` validate untrusted bytes completely and raise :class:`ValueError` on any
violation. Only NumPy is used.
"""

from __future__ import annotations

import struct
from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "MAGIC",
    "VERSION",
    "HEADER_SIZE",
    "FORMATS",
    "INDEX_DATA_TYPES",
    "POINTER_DATA_TYPES",
    "SparseChunk",
    "align8",
    "encode_chunk",
    "decode_chunk",
    "decode_sparse",
    "fill_mask",
    "max_encoded_size",
    "resolve_index_dtype",
    "resolve_pointer_dtype",
    "check_index_dtype",
    "check_pointer_dtype",
]

MAGIC = b"ZSPL"
VERSION = 1
HEADER_SIZE = 32
SECTION_ENTRY_SIZE = 16

FORMATS = {"coo": 0, "csr": 1, "csc": 2}
_FORMAT_NAMES = {v: k for k, v in FORMATS.items()}
_N_SECTIONS = {"coo": 2, "csr": 3, "csc": 3}

INDEX_DATA_TYPES = ("uint16", "uint32", "uint64")
POINTER_DATA_TYPES = ("uint32", "uint64")

# magic, version, format, index width, pointer width, nnz, ndim, n_sections, value size, reserved
_HEADER = struct.Struct("<4sBBBBQHHIQ")
_SECTION = struct.Struct("<QQ")
assert _HEADER.size == HEADER_SIZE

_U16_MAX = 0xFFFF
_U32_MAX = 0xFFFF_FFFF


def align8(n: int) -> int:
    """Round ``n`` up to a multiple of 8."""
    return (n + 7) & ~7


# --------------------------------------------------------------------------------------------
# Types
# --------------------------------------------------------------------------------------------


def _format_name(fmt: Any) -> str:
    if not isinstance(fmt, str) or fmt not in FORMATS:
        raise ValueError(f"sparse_layout: format must be one of 'coo', 'csr', 'csc', got {fmt!r}")
    return fmt


def _uint_dtype(name: Any, allowed: tuple[str, ...], what: str) -> np.dtype:
    """Parse an unsigned integer type given by name or NumPy dtype, returned little-endian."""
    try:
        dt = np.dtype(name)
    except TypeError as e:
        raise ValueError(f"sparse_layout: {what} must be one of {allowed}, got {name!r}") from e
    if dt.kind != "u" or dt.name not in allowed:
        raise ValueError(f"sparse_layout: {what} must be one of {allowed}, got {name!r}")
    return dt.newbyteorder("<")


def _shape_tuple(shape: Any) -> tuple[int, ...]:
    try:
        out = tuple(int(s) for s in shape)
    except TypeError as e:
        raise ValueError(f"sparse_layout: shape must be a sequence of integers, got {shape!r}") from e
    if any(s < 0 for s in out):
        raise ValueError(f"sparse_layout: negative chunk shape {out}")
    return out


def _check_rank(fmt: str, shape: tuple[int, ...]) -> None:
    if len(shape) < 1:
        raise ValueError("sparse_layout: chunks must have rank >= 1")
    if len(shape) > _U16_MAX:
        raise ValueError(f"sparse_layout: rank {len(shape)} does not fit the u16 ndim field")
    if fmt in ("csr", "csc") and len(shape) != 2:
        raise ValueError(
            f"sparse_layout: format {fmt!r} needs 2-d chunks, got rank {len(shape)} (shape {shape})"
        )


def _element_count(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def check_index_dtype(index_dtype: Any, shape: Any) -> np.dtype:
    """The little-endian index type, checked to hold ``shape[d] - 1`` on every axis."""
    dt = _uint_dtype(index_dtype, INDEX_DATA_TYPES, "index_data_type")
    shape = _shape_tuple(shape)
    limit = int(np.iinfo(dt).max)
    for d, s in enumerate(shape):
        if s - 1 > limit:
            raise ValueError(
                f"sparse_layout: index_data_type {dt.name} cannot hold index {s - 1} "
                f"(chunk_shape[{d}] = {s})"
            )
    return dt


def check_pointer_dtype(pointer_dtype: Any, shape: Any) -> np.dtype:
    """The little-endian pointer type, checked to hold the chunk's element count."""
    dt = _uint_dtype(pointer_dtype, POINTER_DATA_TYPES, "pointer_data_type")
    n = _element_count(_shape_tuple(shape))
    if n > int(np.iinfo(dt).max):
        raise ValueError(
            f"sparse_layout: pointer_data_type {dt.name} cannot hold the chunk's element count {n}"
        )
    return dt


def resolve_index_dtype(shape: Any) -> np.dtype:
    """The smallest index type that holds ``shape[d] - 1`` on every axis."""
    shape = _shape_tuple(shape)
    m = max((s - 1 for s in shape), default=0)
    for name in INDEX_DATA_TYPES:
        if m <= int(np.iinfo(name).max):
            return np.dtype(name).newbyteorder("<")
    raise ValueError(f"sparse_layout: no index type holds {m}")


def resolve_pointer_dtype(shape: Any) -> np.dtype:
    """The smallest pointer type that holds the chunk's element count."""
    n = _element_count(_shape_tuple(shape))
    for name in POINTER_DATA_TYPES:
        if n <= int(np.iinfo(name).max):
            return np.dtype(name).newbyteorder("<")
    raise ValueError(f"sparse_layout: no pointer type holds {n}")


def _value_dtypes(dtype: Any) -> tuple[np.dtype, np.dtype]:
    """(native dtype, little-endian storage dtype) of a fixed-size value type."""
    try:
        dt = np.dtype(dtype)
    except TypeError as e:
        raise ValueError(f"sparse_layout: unsupported data type {dtype!r}") from e
    if dt.hasobject or dt.kind in ("O", "T") or dt.itemsize == 0:
        raise ValueError(f"sparse_layout: only fixed-size data types are supported, got {dt}")
    if dt.itemsize > _U32_MAX:
        raise ValueError(f"sparse_layout: value size {dt.itemsize} does not fit the u32 field")
    return dt, dt.newbyteorder("<")


def max_encoded_size(shape: Any, fmt: str, index_dtype: Any, pointer_dtype: Any, value_size: int) -> int:
    """The spec's bound on an encoded chunk: the canonical size with nnz = element count."""
    fmt = _format_name(fmt)
    shape = _shape_tuple(shape)
    n = _element_count(shape)
    iw = np.dtype(index_dtype).itemsize
    nsec = _N_SECTIONS[fmt]
    total = align8(HEADER_SIZE + SECTION_ENTRY_SIZE * nsec)
    if fmt == "coo":
        total += align8(len(shape) * n * iw)
    else:
        pw = np.dtype(pointer_dtype).itemsize
        major = shape[0] if fmt == "csr" else shape[1]
        total += align8((major + 1) * pw) + align8(n * iw)
    return total + align8(n * int(value_size))


# --------------------------------------------------------------------------------------------
# Fill comparison
# --------------------------------------------------------------------------------------------

_BITS = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def _float_part_equal(a: np.ndarray, f: np.ndarray) -> np.ndarray:
    """Bit equality of float arrays, every NaN equal to every NaN (-0.0 != 0.0)."""
    bits = _BITS.get(a.dtype.itemsize)
    if bits is None:  # e.g. longdouble: compare the raw bytes
        same = _bytes_equal(a, f)
    else:
        same = a.view(bits) == f.view(bits)
    return same | (np.isnan(a) & np.isnan(f))


def _bytes_equal(a: np.ndarray, f: np.ndarray) -> np.ndarray:
    size = a.dtype.itemsize
    ab = np.ascontiguousarray(a).reshape(-1).view(np.uint8).reshape(-1, size)
    fb = np.ascontiguousarray(f).reshape(-1).view(np.uint8)
    return (ab == fb).all(axis=1).reshape(a.shape)


def fill_mask(dense: np.ndarray, fill_value: Any) -> np.ndarray:
    """Boolean mask of the elements *not* equal to the fill value.

    "Equal" compares bit patterns with every NaN equal to every NaN (so -0.0 is not the fill
    0.0); a complex number equals the fill when each of its parts does.
    """
    dense = np.asarray(dense)
    native, _ = _value_dtypes(dense.dtype)
    a = np.ascontiguousarray(dense, dtype=native.newbyteorder("="))
    f = _fill_array(fill_value, a.dtype)
    kind = a.dtype.kind
    if kind in "iub":  # value equality is bit equality
        eq = a == f
    elif kind == "f":
        eq = _float_part_equal(a, f)
    elif kind == "c":
        part = np.dtype(f"f{a.dtype.itemsize // 2}")
        ap = a.view(part).reshape(a.shape + (2,))
        fp = f.view(part)
        eq = _float_part_equal(ap[..., 0], fp[0:1]) & _float_part_equal(ap[..., 1], fp[1:2])
    else:
        eq = _bytes_equal(a, f)
    return ~eq


def _fill_array(fill_value: Any, dtype: np.dtype) -> np.ndarray:
    """The fill value as a 1-element array of ``dtype``."""
    try:
        return np.array(fill_value, dtype=dtype).reshape(1)
    except (TypeError, ValueError, OverflowError) as e:
        raise ValueError(f"sparse_layout: fill value {fill_value!r} is not a {dtype} value") from e


# --------------------------------------------------------------------------------------------
# Encoding
# --------------------------------------------------------------------------------------------


def _layout(sections: list[bytes]) -> tuple[list[tuple[int, int]], int]:
    """The canonical layout of a header-less chunk: section table offsets and padded sections."""
    n = len(sections)
    pos = align8(HEADER_SIZE + SECTION_ENTRY_SIZE * n)
    table = []
    for s in sections:
        table.append((pos, len(s)))
        pos = align8(pos + len(s))
    return table, pos


def encode_chunk(
    dense: np.ndarray,
    fill_value: Any,
    format: str,
    index_dtype: Any,
    pointer_dtype: Any = None,
) -> bytes:
    """Encode a dense chunk in the canonical `sparse_layout` bytes.

    Elements equal to ``fill_value`` (bit patterns, every NaN equal to every NaN) are dropped;
    the others are stored in canonical order (COO tuples in C order, CSR row-major with sorted
    columns, CSC column-major with sorted rows). ``pointer_dtype`` (CSR/CSC only) defaults to
    the smallest type holding the element count. The result is the canonical layout, byte for
    byte, even when nnz = 0 (although such a chunk is not stored by a writer).
    """
    fmt = _format_name(format)
    dense = np.asarray(dense)
    shape = tuple(dense.shape)
    _check_rank(fmt, shape)
    native, le = _value_dtypes(dense.dtype)
    idx_dt = check_index_dtype(index_dtype, shape)
    if fmt == "coo":
        if pointer_dtype is not None:
            raise ValueError("sparse_layout: pointer_data_type is for csr/csc only")
        ptr_dt = None
    else:
        ptr_dt = resolve_pointer_dtype(shape) if pointer_dtype is None else check_pointer_dtype(pointer_dtype, shape)

    mask = fill_mask(dense, fill_value)
    if fmt == "coo":
        coords = np.nonzero(mask)  # C order
        nnz = int(coords[0].size)
        values = dense[mask]
        index_block = np.empty((len(shape), nnz), dtype=idx_dt)
        for d, c in enumerate(coords):
            index_block[d] = c
        sections = [index_block.tobytes(), values.astype(le, copy=False).tobytes()]
    else:
        if fmt == "csr":
            major, minor = np.nonzero(mask)  # row-major, columns increasing within a row
            values = dense[mask]
            n_major = shape[0]
        else:
            major, minor = np.nonzero(mask.T)  # column-major, rows increasing within a column
            values = dense.T[mask.T]
            n_major = shape[1]
        nnz = int(major.size)
        pointers = np.zeros(n_major + 1, dtype=ptr_dt)
        pointers[1:] = np.cumsum(np.bincount(major, minlength=n_major))
        sections = [
            pointers.tobytes(),
            minor.astype(idx_dt).tobytes(),
            values.astype(le, copy=False).tobytes(),
        ]

    table, total = _layout(sections)
    out = bytearray(total)  # zero padding everywhere
    _HEADER.pack_into(
        out,
        0,
        MAGIC,
        VERSION,
        FORMATS[fmt],
        idx_dt.itemsize,
        0 if ptr_dt is None else ptr_dt.itemsize,
        nnz,
        len(shape),
        len(sections),
        native.itemsize,
        0,
    )
    for i, (off, nbytes) in enumerate(table):
        _SECTION.pack_into(out, HEADER_SIZE + SECTION_ENTRY_SIZE * i, off, nbytes)
    for (off, nbytes), s in zip(table, sections):
        out[off : off + nbytes] = s
    return bytes(out)


# --------------------------------------------------------------------------------------------
# Decoding
# --------------------------------------------------------------------------------------------


class SparseChunk(NamedTuple):
    """A validated decoded chunk; the arrays are read-only views of the encoded buffer.

    * ``format``: ``"coo"``, ``"csr"`` or ``"csc"``;
    * ``shape``: the chunk shape; ``nnz``: number of stored entries;
    * ``indices``: COO: the ``(ndim, nnz)`` coordinates block; CSR/CSC: the ``(nnz,)`` minor
      indices (column of each value for CSR, row for CSC);
    * ``pointers``: CSR/CSC: the ``(major + 1,)`` pointers; COO: ``None``;
    * ``values``: the ``(nnz,)`` values, little-endian storage type.
    """

    format: str
    shape: tuple[int, ...]
    nnz: int
    indices: np.ndarray
    pointers: np.ndarray | None
    values: np.ndarray

    def coords(self) -> np.ndarray:
        """Coordinates as an ``(ndim, nnz)`` array: a view for COO, computed for CSR/CSC."""
        if self.format == "coo":
            return self.indices
        counts = np.diff(self.pointers.astype(np.int64))
        major = np.repeat(np.arange(counts.size, dtype=self.indices.dtype), counts)
        if self.format == "csr":
            return np.stack([major, self.indices])
        return np.stack([self.indices, major])


def _as_bytes_view(buf: Any) -> memoryview:
    try:
        mv = memoryview(buf)
    except TypeError as e:
        raise ValueError(f"sparse_layout: expected a bytes-like chunk, got {type(buf).__name__}") from e
    if not mv.c_contiguous:
        raise ValueError("sparse_layout: chunk buffer is not contiguous")
    if mv.format != "B" or mv.ndim != 1:
        mv = mv.cast("B")
    return mv


def decode_sparse(
    buf: Any,
    shape: Any,
    dtype: Any,
    format: str,
    index_dtype: Any,
    pointer_dtype: Any = None,
) -> SparseChunk:
    """Validate an encoded chunk and return its sections as views (no copies).

    Everything is checked before use: magic, version, format, widths, ndim, section count, value
    size, reserved bytes, the section table (8-aligned, in order, non-overlapping, inside the
    buffer), the sizes against nnz, the pointers (``p[0] = 0``, non-decreasing,
    ``p[-1] = nnz``), the indices (in range) and the order (strictly increasing, no
    duplicates). Any violation raises :class:`ValueError`.
    """
    fmt = _format_name(format)
    shape = _shape_tuple(shape)
    _check_rank(fmt, shape)
    native, le = _value_dtypes(dtype)
    idx_dt = check_index_dtype(index_dtype, shape)
    if fmt == "coo":
        if pointer_dtype is not None:
            raise ValueError("sparse_layout: pointer_data_type is for csr/csc only")
        ptr_dt = None
    else:
        if pointer_dtype is None:
            raise ValueError(f"sparse_layout: format {fmt!r} needs a pointer_data_type")
        ptr_dt = check_pointer_dtype(pointer_dtype, shape)

    mv = _as_bytes_view(buf)
    size = mv.nbytes
    if size < HEADER_SIZE:
        raise ValueError(f"sparse_layout: chunk of {size} bytes is shorter than the 32-byte header")
    magic, version, fmt_code, iw, pw, nnz, ndim, nsec, vsize, reserved = _HEADER.unpack_from(mv, 0)
    if magic != MAGIC:
        raise ValueError(f"sparse_layout: bad magic {bytes(magic)!r}, expected {MAGIC!r}")
    if version != VERSION:
        raise ValueError(f"sparse_layout: unsupported version {version}, expected {VERSION}")
    if fmt_code not in _FORMAT_NAMES:
        raise ValueError(f"sparse_layout: unknown format byte {fmt_code}")
    if _FORMAT_NAMES[fmt_code] != fmt:
        raise ValueError(
            f"sparse_layout: chunk format is {_FORMAT_NAMES[fmt_code]!r}, metadata says {fmt!r}"
        )
    if iw != idx_dt.itemsize:
        raise ValueError(
            f"sparse_layout: index width {iw} does not match index_data_type {idx_dt.name}"
        )
    want_pw = 0 if ptr_dt is None else ptr_dt.itemsize
    if pw != want_pw:
        raise ValueError(
            f"sparse_layout: pointer width {pw} does not match "
            f"{'COO (0)' if ptr_dt is None else 'pointer_data_type ' + ptr_dt.name}"
        )
    if ndim != len(shape):
        raise ValueError(f"sparse_layout: header ndim {ndim} does not match the chunk rank {len(shape)}")
    if nsec != _N_SECTIONS[fmt]:
        raise ValueError(
            f"sparse_layout: {nsec} sections, format {fmt!r} has {_N_SECTIONS[fmt]}"
        )
    if vsize != native.itemsize:
        raise ValueError(
            f"sparse_layout: value size {vsize} does not match the data type {native} "
            f"({native.itemsize} bytes)"
        )
    if reserved != 0:
        raise ValueError("sparse_layout: reserved header bytes are not zero")
    n_elements = _element_count(shape)
    if nnz > n_elements:
        raise ValueError(f"sparse_layout: nnz {nnz} exceeds the chunk's element count {n_elements}")

    # Section table.
    table_end = HEADER_SIZE + SECTION_ENTRY_SIZE * nsec
    if size < table_end:
        raise ValueError(f"sparse_layout: chunk of {size} bytes is too short for its section table")
    sections = [_SECTION.unpack_from(mv, HEADER_SIZE + SECTION_ENTRY_SIZE * i) for i in range(nsec)]
    prev_end = table_end
    for i, (off, nbytes) in enumerate(sections):
        if off % 8 != 0:
            raise ValueError(f"sparse_layout: section {i} offset {off} is not 8-aligned")
        if off < prev_end:
            raise ValueError(
                f"sparse_layout: section {i} at {off} overlaps the preceding data (ends at {prev_end})"
            )
        end = off + nbytes
        if end > size:
            raise ValueError(
                f"sparse_layout: section {i} [{off}, {end}) lies outside the {size}-byte chunk"
            )
        prev_end = end

    # Section sizes against nnz.
    if fmt == "coo":
        want = [ndim * nnz * iw, nnz * vsize]
        names = ["indices", "values"]
    else:
        n_major = shape[0] if fmt == "csr" else shape[1]
        want = [(n_major + 1) * pw, nnz * iw, nnz * vsize]
        names = ["pointers_to_1", "indices_1", "values"]
    for (off, nbytes), w, name in zip(sections, want, names):
        if nbytes != w:
            raise ValueError(
                f"sparse_layout: section {name!r} has {nbytes} bytes, expected {w} for nnz {nnz}"
            )

    def view(i: int, dt: np.dtype, count: int) -> np.ndarray:
        if count == 0:  # frombuffer refuses an offset at the very end of the buffer
            return np.frombuffer(mv, dtype=dt, count=0)
        return np.frombuffer(mv, dtype=dt, count=count, offset=sections[i][0])

    if fmt == "coo":
        indices = view(0, idx_dt, ndim * nnz).reshape(ndim, nnz)
        values = view(1, le, nnz)
        pointers = None
        _check_coo(indices, shape)
    else:
        pointers = view(0, ptr_dt, want[0] // pw)
        indices = view(1, idx_dt, nnz)
        values = view(2, le, nnz)
        minor_len = shape[1] if fmt == "csr" else shape[0]
        _check_compressed(pointers, indices, nnz, minor_len, fmt)
    if native.kind == "b" and nnz and values.view(np.uint8).max() > 1:
        raise ValueError("sparse_layout: bool values must be 0 or 1")
    return SparseChunk(fmt, shape, nnz, indices, pointers, values)


def _check_coo(coords: np.ndarray, shape: tuple[int, ...]) -> None:
    ndim, nnz = coords.shape
    if nnz == 0:
        return
    for d in range(ndim):
        if int(coords[d].max()) >= shape[d]:
            raise ValueError(
                f"sparse_layout: COO coordinate {int(coords[d].max())} on axis {d} is out of range "
                f"for chunk_shape[{d}] = {shape[d]}"
            )
    if nnz < 2:
        return
    less = np.zeros(nnz - 1, dtype=bool)
    equal = np.ones(nnz - 1, dtype=bool)
    for d in range(ndim):
        a, b = coords[d, :-1], coords[d, 1:]
        less |= equal & (a < b)
        equal &= a == b
    if not less.all():
        k = int(np.argmin(less))
        what = "duplicated" if equal[k] else "out of C order"
        raise ValueError(
            f"sparse_layout: COO entries {k} and {k + 1} are {what} "
            f"(tuples must be strictly increasing in C order)"
        )


def _check_compressed(p: np.ndarray, idx: np.ndarray, nnz: int, minor_len: int, fmt: str) -> None:
    if int(p[0]) != 0:
        raise ValueError(f"sparse_layout: pointers start at {int(p[0])}, expected 0")
    if int(p[-1]) != nnz:
        raise ValueError(f"sparse_layout: last pointer is {int(p[-1])}, expected nnz = {nnz}")
    if p.size > 1 and not (p[1:] >= p[:-1]).all():
        raise ValueError("sparse_layout: pointers are not non-decreasing")
    if nnz == 0:
        return
    if int(idx.max()) >= minor_len:
        axis = "column" if fmt == "csr" else "row"
        raise ValueError(
            f"sparse_layout: {axis} index {int(idx.max())} is out of range (< {minor_len} expected)"
        )
    # Strictly increasing within each major slice: consecutive entries k, k+1 must increase
    # unless k+1 starts a new slice.
    starts = np.zeros(nnz, dtype=bool)
    s = p[:-1].astype(np.int64)
    starts[s[s < nnz]] = True
    ok = (idx[1:] > idx[:-1]) | starts[1:]
    if not ok.all():
        k = int(np.argmin(ok))
        axis = "columns within a row" if fmt == "csr" else "rows within a column"
        raise ValueError(
            f"sparse_layout: entries {k} and {k + 1}: {axis} must be strictly increasing"
        )


def decode_chunk(
    buf: Any,
    shape: Any,
    dtype: Any,
    fill_value: Any,
    format: str,
    index_dtype: Any,
    pointer_dtype: Any = None,
) -> np.ndarray:
    """Validate an encoded chunk and return it dense (positions not stored read as fill)."""
    chunk = decode_sparse(buf, shape, dtype, format, index_dtype, pointer_dtype)
    native, _ = _value_dtypes(dtype)
    out = np.empty(chunk.shape, dtype=native)
    out[...] = _fill_array(fill_value, native)[0]
    if chunk.nnz == 0:
        return out
    if chunk.format == "coo":
        out[tuple(c.astype(np.intp) for c in chunk.indices)] = chunk.values
    else:
        counts = np.diff(chunk.pointers.astype(np.int64))
        major = np.repeat(np.arange(counts.size, dtype=np.intp), counts)
        minor = chunk.indices.astype(np.intp)
        if chunk.format == "csr":
            out[major, minor] = chunk.values
        else:
            out[minor, major] = chunk.values
    return out
