"""The byte format: round trips, canonical layout, fill semantics, corruption."""

from __future__ import annotations

import struct
import unittest

import numpy as np

from zarr_sparse_layout.format import (
    HEADER_SIZE,
    align8,
    decode_chunk,
    decode_sparse,
    encode_chunk,
    fill_mask,
    max_encoded_size,
    resolve_index_dtype,
    resolve_pointer_dtype,
)

INDEX_TYPES = ("uint16", "uint32", "uint64")
POINTER_TYPES = ("uint32", "uint64")
NUMERIC = (
    "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64",
    "complex64", "complex128", "bool",
)


def bits_equal(a: np.ndarray, b: np.ndarray) -> bool:
    """Exact equality of the element bytes (so NaN payloads and -0.0 count)."""
    a = np.ascontiguousarray(a)
    b = np.ascontiguousarray(b)
    if a.shape != b.shape or a.dtype.itemsize != b.dtype.itemsize:
        return False
    return a.tobytes() == b.astype(a.dtype).tobytes()


def random_chunk(rng: np.random.Generator, shape, dtype, density: float, fill) -> np.ndarray:
    dt = np.dtype(dtype)
    out = np.full(shape, fill, dtype=dt)
    mask = rng.random(shape) < density
    n = int(mask.sum())
    if dt.kind == "b":
        vals = rng.random(n) < 0.5
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        vals = rng.integers(info.min, info.max, size=n, endpoint=True, dtype=dt)
    elif dt.kind == "f":
        vals = (rng.standard_normal(n) * 100).astype(dt)
    elif dt.kind == "c":
        vals = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dt)
    elif dt.kind == "S":
        vals = np.array([bytes(rng.integers(0, 256, dt.itemsize, dtype=np.uint8)) for _ in range(n)], dtype=dt)
    elif dt.kind == "U":
        vals = np.array(["".join(chr(c) for c in rng.integers(97, 123, dt.itemsize // 4)) for _ in range(n)], dtype=dt)
    else:
        raise AssertionError(dt)
    out[mask] = vals
    return out


def pointer_for(fmt: str):
    return None if fmt == "coo" else "uint32"


def header(buf: bytes):
    return struct.unpack_from("<4sBBBBQHHIQ", buf, 0)


def table(buf: bytes, n: int):
    return [struct.unpack_from("<QQ", buf, HEADER_SIZE + 16 * i) for i in range(n)]


def set_u64(buf: bytes, offset: int, value: int) -> bytes:
    b = bytearray(buf)
    struct.pack_into("<Q", b, offset, value)
    return bytes(b)


class RoundTrip(unittest.TestCase):
    def check(self, dense, fill, fmt, index, pointer=None):
        enc = encode_chunk(dense, fill, fmt, index, pointer)
        dec = decode_chunk(enc, dense.shape, dense.dtype, fill, fmt, index,
                           pointer if pointer is not None or fmt == "coo" else resolve_pointer_dtype(dense.shape))
        self.assertEqual(dec.dtype, dense.dtype)
        self.assertTrue(bits_equal(dec, dense), f"{fmt} {dense.dtype} {index} {pointer}")
        # Canonical: encoding the decoded chunk gives the same bytes.
        self.assertEqual(encode_chunk(dec, fill, fmt, index, pointer), enc)
        return enc

    def test_coo_ranks_1_to_4(self):
        rng = np.random.default_rng(1)
        shapes = [(17,), (5, 9), (4, 3, 6), (3, 4, 2, 5)]
        for shape in shapes:
            for density in (0.0, 0.05, 0.3, 0.9, 1.0):
                for index in INDEX_TYPES:
                    with self.subTest(shape=shape, density=density, index=index):
                        dense = random_chunk(rng, shape, "float32", density, 0.0)
                        self.check(dense, 0.0, "coo", index)

    def test_csr_csc(self):
        rng = np.random.default_rng(2)
        for shape in [(1, 1), (7, 11), (11, 7), (1, 20), (20, 1), (32, 32)]:
            for density in (0.0, 0.02, 0.25, 0.7, 1.0):
                for index in INDEX_TYPES:
                    for pointer in POINTER_TYPES:
                        for fmt in ("csr", "csc"):
                            with self.subTest(fmt=fmt, shape=shape, density=density, index=index, pointer=pointer):
                                dense = random_chunk(rng, shape, "int32", density, 0)
                                self.check(dense, 0, fmt, index, pointer)

    def test_dtypes(self):
        rng = np.random.default_rng(3)
        for dtype in NUMERIC + ("S3", "U2"):
            fill = np.zeros((), dtype=dtype)[()]
            for fmt in ("coo", "csr", "csc"):
                for density in (0.1, 0.6):
                    with self.subTest(dtype=dtype, fmt=fmt, density=density):
                        dense = random_chunk(rng, (9, 13), dtype, density, fill)
                        self.check(dense, fill, fmt, "uint16", pointer_for(fmt))

    def test_nonzero_fill(self):
        rng = np.random.default_rng(4)
        for dtype, fill in [("int16", -7), ("uint8", 255), ("float64", 1.5), ("complex64", 1 - 2j), ("bool", True)]:
            for fmt in ("coo", "csr", "csc"):
                with self.subTest(dtype=dtype, fmt=fmt):
                    dense = random_chunk(rng, (6, 8), dtype, 0.3, fill)
                    enc = self.check(dense, fill, fmt, "uint32", pointer_for(fmt))
                    self.assertEqual(header(enc)[5], int(fill_mask(dense, fill).sum()))

    def test_big_endian_input_same_bytes(self):
        rng = np.random.default_rng(5)
        dense = random_chunk(rng, (8, 8), "<f8", 0.3, 0.0)
        for fmt in ("coo", "csr", "csc"):
            self.assertEqual(
                encode_chunk(dense.astype(">f8"), 0.0, fmt, "uint16", pointer_for(fmt)),
                encode_chunk(dense, 0.0, fmt, "uint16", pointer_for(fmt)),
            )
            dec = decode_chunk(encode_chunk(dense, 0.0, fmt, "uint16", pointer_for(fmt)), (8, 8), ">f8",
                               0.0, fmt, "uint16", pointer_for(fmt))
            self.assertEqual(dec.dtype, np.dtype(">f8"))
            np.testing.assert_array_equal(dec, dense)

    def test_fortran_ordered_input(self):
        rng = np.random.default_rng(6)
        dense = random_chunk(rng, (5, 6, 7), "int64", 0.2, 0)
        for fmt, d in (("coo", dense), ("csr", dense[0]), ("csc", dense[0])):
            self.assertEqual(
                encode_chunk(np.asfortranarray(d), 0, fmt, "uint16", pointer_for(fmt)),
                encode_chunk(d, 0, fmt, "uint16", pointer_for(fmt)),
            )

    def test_stored_fill_values_are_accepted(self):
        # Encoders drop fill values, decoders accept them: build a COO chunk that stores 0.0.
        dense = np.array([0.0, 1.0, 0.0, 2.0], dtype="float32")
        enc = bytearray(encode_chunk(dense, -1.0, "coo", "uint16"))  # stores all four
        self.assertEqual(header(bytes(enc))[5], 4)
        out = decode_chunk(bytes(enc), (4,), "float32", 0.0, "coo", "uint16")
        np.testing.assert_array_equal(out, dense)


class Canonical(unittest.TestCase):
    def test_layout_fields(self):
        dense = np.array([[0, 1, 0, 0], [0, 0, 0, 0], [2, 0, -0.0, 3]], dtype="float32")
        for fmt, code, nsec in (("coo", 0, 2), ("csr", 1, 3), ("csc", 2, 3)):
            with self.subTest(fmt=fmt):
                ptr = pointer_for(fmt)
                enc = encode_chunk(dense, 0.0, fmt, "uint16", ptr)
                magic, ver, f, iw, pw, nnz, ndim, n, vs, res = header(enc)
                self.assertEqual((magic, ver, f, iw, pw, nnz, ndim, n, vs, res),
                                 (b"ZSPL", 1, code, 2, 0 if ptr is None else 4, 4, 2, nsec, 4, 0))
                secs = table(enc, nsec)
                pos = align8(32 + 16 * nsec)
                covered = bytearray(len(enc))
                covered[: 32 + 16 * nsec] = b"\x01" * (32 + 16 * nsec)
                for off, nb in secs:
                    self.assertEqual(off, pos)
                    covered[off: off + nb] = b"\x01" * nb
                    pos = align8(off + nb)
                self.assertEqual(len(enc), pos)
                # Padding bytes are zero.
                self.assertTrue(all(enc[i] == 0 for i in range(len(enc)) if not covered[i]))

    def test_known_bytes_csr(self):
        dense = np.array([[0, 1, 0, 0], [0, 0, 0, 0], [2, 0, -0.0, 3]], dtype="float32")
        enc = encode_chunk(dense, 0.0, "csr", "uint16", "uint32")
        expect = (
            b"ZSPL" + bytes([1, 1, 2, 4]) + struct.pack("<QHHIQ", 4, 2, 3, 4, 0)
            + struct.pack("<QQQQQQ", 80, 16, 96, 8, 104, 16)
            + struct.pack("<4I", 0, 1, 1, 4)
            + struct.pack("<4H", 1, 0, 2, 3)
            + struct.pack("<4f", 1.0, 2.0, -0.0, 3.0)
        )
        self.assertEqual(enc, expect)

    def test_canonical_order(self):
        dense = np.zeros((3, 3), dtype="int8")
        dense[0, 2] = 1
        dense[1, 0] = 2
        dense[2, 1] = 3
        coo = decode_sparse(encode_chunk(dense, 0, "coo", "uint16"), (3, 3), "int8", "coo", "uint16")
        np.testing.assert_array_equal(coo.indices, [[0, 1, 2], [2, 0, 1]])
        np.testing.assert_array_equal(coo.values, [1, 2, 3])
        csc = decode_sparse(encode_chunk(dense, 0, "csc", "uint16", "uint32"), (3, 3), "int8", "csc", "uint16", "uint32")
        np.testing.assert_array_equal(csc.pointers, [0, 1, 2, 3])
        np.testing.assert_array_equal(csc.indices, [1, 2, 0])
        np.testing.assert_array_equal(csc.values, [2, 3, 1])
        np.testing.assert_array_equal(csc.coords(), [[1, 2, 0], [0, 1, 2]])

    def test_nnz_zero(self):
        dense = np.zeros((4, 5), dtype="float64")
        for fmt in ("coo", "csr", "csc"):
            enc = encode_chunk(dense, 0.0, fmt, "uint16", pointer_for(fmt))
            self.assertEqual(header(enc)[5], 0)
            np.testing.assert_array_equal(decode_chunk(enc, (4, 5), "float64", 0.0, fmt, "uint16", pointer_for(fmt)), dense)

    def test_size_bound(self):
        rng = np.random.default_rng(7)
        for fmt, shape in (("coo", (3, 4, 5)), ("csr", (6, 7)), ("csc", (6, 7))):
            for index in INDEX_TYPES:
                bound = max_encoded_size(shape, fmt, index, "uint64" if fmt != "coo" else None, 8)
                full = random_chunk(rng, shape, "float64", 1.0, 0.0)
                full[full == 0] = 1.0
                enc = encode_chunk(full, 0.0, fmt, index, "uint64" if fmt != "coo" else None)
                self.assertEqual(len(enc), bound)

    def test_resolve_types(self):
        self.assertEqual(resolve_index_dtype((65536, 3)).name, "uint16")
        self.assertEqual(resolve_index_dtype((65537, 3)).name, "uint32")
        self.assertEqual(resolve_pointer_dtype((65536, 65536)).name, "uint64")
        self.assertEqual(resolve_pointer_dtype((65536, 65535)).name, "uint32")


class FillSemantics(unittest.TestCase):
    def test_negative_zero_is_stored(self):
        dense = np.array([0.0, -0.0, 0.0], dtype="float32")
        enc = encode_chunk(dense, 0.0, "coo", "uint16")
        self.assertEqual(header(enc)[5], 1)
        out = decode_chunk(enc, (3,), "float32", 0.0, "coo", "uint16")
        self.assertTrue(np.signbit(out[1]) and not np.signbit(out[0]))

    def test_every_nan_is_the_nan_fill(self):
        nan_a = np.array([0x7FC00000, 0xFFC00001, 0x7F800001], dtype="uint32").view("float32")
        dense = np.concatenate([nan_a, np.array([1.0, np.inf], dtype="float32")])
        enc = encode_chunk(dense, np.nan, "coo", "uint16")
        self.assertEqual(header(enc)[5], 2)
        # A NaN is stored when the fill is not NaN, bit pattern preserved.
        enc = encode_chunk(nan_a, 0.0, "coo", "uint16")
        out = decode_chunk(enc, (3,), "float32", 0.0, "coo", "uint16")
        self.assertTrue(bits_equal(out, nan_a))

    def test_float16_nan(self):
        dense = np.array([0x7E00, 0xFE01, 0x3C00], dtype="uint16").view("float16")
        self.assertEqual(fill_mask(dense, np.float16("nan")).tolist(), [False, False, True])

    def test_complex_parts(self):
        nan = np.nan
        dense = np.array([complex(nan, 1), complex(-nan, 1), complex(nan, 2), complex(0, nan), complex(nan, 0)],
                         dtype="complex64")
        self.assertEqual(fill_mask(dense, complex(nan, 1)).tolist(), [False, False, True, True, True])
        self.assertEqual(fill_mask(np.array([complex(0.0, -0.0)], "complex128"), 0j).tolist(), [True])

    def test_integers_and_bool(self):
        self.assertEqual(fill_mask(np.array([0, 5, -1], "int64"), -1).tolist(), [True, True, False])
        self.assertEqual(fill_mask(np.array([True, False]), False).tolist(), [True, False])


class Views(unittest.TestCase):
    def test_decode_sparse_returns_views(self):
        rng = np.random.default_rng(8)
        dense = random_chunk(rng, (10, 12), "float64", 0.3, 0.0)
        for fmt in ("coo", "csr", "csc"):
            enc = bytearray(encode_chunk(dense, 0.0, fmt, "uint32", pointer_for(fmt)))
            buf = np.frombuffer(enc, dtype=np.uint8)
            ch = decode_sparse(buf, dense.shape, "float64", fmt, "uint32", pointer_for(fmt))
            arrays = [ch.indices, ch.values] + ([ch.pointers] if ch.pointers is not None else [])
            for a in arrays:
                self.assertTrue(np.shares_memory(a, buf), fmt)
            # Writing through the buffer shows in the view: a view, not a copy.
            off = table(bytes(enc), len(arrays))[-1][0]
            before = ch.values[0]
            enc[off: off + 8] = struct.pack("<d", 12345.0)
            self.assertEqual(ch.values[0], 12345.0)
            self.assertNotEqual(before, 12345.0)
            if fmt == "coo":
                self.assertEqual(ch.coords().shape, (2, ch.nnz))
                self.assertTrue(np.shares_memory(ch.coords(), buf))


class Corruption(unittest.TestCase):
    """Every violation is a ValueError, never another exception."""

    def setUp(self):
        rng = np.random.default_rng(9)
        self.dense = random_chunk(rng, (6, 9), "float32", 0.4, 0.0)
        # Row 0 and column 0 hold >= 2 entries each, for the order tests.
        self.dense[0, 0] = 3.0
        self.dense[0, 1] = 1.0
        self.dense[0, 3] = 2.0
        self.dense[2, 0] = 4.0
        self.coo = encode_chunk(self.dense, 0.0, "coo", "uint16")
        self.csr = encode_chunk(self.dense, 0.0, "csr", "uint16", "uint32")
        self.csc = encode_chunk(self.dense, 0.0, "csc", "uint16", "uint32")

    def dec(self, buf, fmt="coo", shape=None, dtype="float32", index="uint16", pointer=None):
        if pointer is None and fmt != "coo":
            pointer = "uint32"
        return decode_chunk(buf, shape or self.dense.shape, dtype, 0.0, fmt, index, pointer)

    def bad(self, buf, pattern, **kw):
        with self.assertRaisesRegex(ValueError, pattern):
            self.dec(buf, **kw)

    def patch(self, buf, offset, data):
        b = bytearray(buf)
        b[offset: offset + len(data)] = data
        return bytes(b)

    def test_valid(self):
        for fmt in ("coo", "csr", "csc"):
            np.testing.assert_array_equal(self.dec(getattr(self, fmt), fmt=fmt), self.dense)

    def test_header(self):
        self.bad(self.patch(self.coo, 0, b"ZSPX"), "magic")
        self.bad(self.patch(self.coo, 4, b"\x02"), "version")
        self.bad(self.patch(self.coo, 5, b"\x07"), "format byte")
        self.bad(self.patch(self.coo, 5, b"\x01"), "format")
        self.bad(self.csr, "format", fmt="csc")
        self.bad(self.patch(self.coo, 6, b"\x04"), "index width")
        self.bad(self.coo, "index width", index="uint32")
        self.bad(self.patch(self.coo, 7, b"\x04"), "pointer width")
        self.bad(self.patch(self.csr, 7, b"\x08"), "pointer width", fmt="csr")
        self.bad(self.csr, "pointer width", fmt="csr", pointer="uint64")
        self.bad(self.patch(self.coo, 16, struct.pack("<H", 3)), "ndim")
        self.bad(self.patch(self.coo, 18, struct.pack("<H", 3)), "sections")
        self.bad(self.patch(self.csr, 18, struct.pack("<H", 2)), "sections", fmt="csr")
        self.bad(self.patch(self.coo, 20, struct.pack("<I", 8)), "value size")
        self.bad(self.coo, "value size", dtype="float64")
        self.bad(self.patch(self.coo, 24, b"\x01"), "reserved")

    def test_truncation(self):
        for fmt in ("coo", "csr", "csc"):
            buf = getattr(self, fmt)
            off, nbytes = table(buf, 2 if fmt == "coo" else 3)[-1]
            end = off + nbytes  # the canonical length adds only zero padding after this
            self.assertLess(len(buf) - end, 8)
            for n in range(len(buf)):
                with self.subTest(fmt=fmt, n=n):
                    if n < end:
                        with self.assertRaises(ValueError):
                            self.dec(buf[:n], fmt=fmt)
                    else:  # the padding is not needed by a decoder
                        np.testing.assert_array_equal(self.dec(buf[:n], fmt=fmt), self.dense)

    def test_nnz(self):
        n = self.dense.size
        self.bad(set_u64(self.coo, 8, n + 1), "exceeds")
        self.bad(set_u64(self.coo, 8, 2**64 - 1), "exceeds")
        nnz = header(self.coo)[5]
        self.bad(set_u64(self.coo, 8, nnz + 1), "section")
        self.bad(set_u64(self.coo, 8, nnz - 1), "section")
        self.bad(set_u64(self.csr, 8, nnz - 1), "section", fmt="csr")

    def test_section_table(self):
        secs = table(self.coo, 2)
        self.bad(set_u64(self.coo, 32, secs[0][0] + 4), "8-aligned")
        self.bad(set_u64(self.coo, 32, 32), "overlaps")
        self.bad(set_u64(self.coo, 48, secs[0][0]), "overlaps")  # values on top of indices
        self.bad(set_u64(self.coo, 48, 2**64 - 8), "outside")
        self.bad(set_u64(self.coo, 56, 2**64 - 1), "outside")
        self.bad(set_u64(self.coo, 40, secs[0][1] + 2), "section")

    def test_csr_pointers(self):
        off = table(self.csr, 3)[0][0]
        self.bad(self.patch(self.csr, off, struct.pack("<I", 1)), "start at", fmt="csr")
        rows = self.dense.shape[0]
        self.bad(self.patch(self.csr, off + 4 * rows, struct.pack("<I", 1)), "last pointer", fmt="csr")
        p = np.frombuffer(self.csr, "<u4", rows + 1, off).copy()
        p[1], p[2] = p[-1], 0
        self.bad(self.patch(self.csr, off, p.tobytes()), "non-decreasing", fmt="csr")

    def test_indices_range_and_order(self):
        for fmt in ("csr", "csc"):
            buf = getattr(self, fmt)
            off = table(buf, 3)[1][0]
            self.bad(self.patch(buf, off, struct.pack("<H", 60000)), "out of range", fmt=fmt)
            idx = np.frombuffer(buf, "<u2", 2, off).copy()
            swapped = self.patch(buf, off, idx[::-1].tobytes())
            self.bad(swapped, "strictly increasing", fmt=fmt)
            dup = self.patch(buf, off, np.array([idx[0], idx[0]], "<u2").tobytes())
            self.bad(dup, "strictly increasing", fmt=fmt)
        off = table(self.coo, 2)[0][0]
        nnz = header(self.coo)[5]
        self.bad(self.patch(self.coo, off + 2 * nnz, struct.pack("<H", 9)), "out of range")
        self.bad(self.patch(self.coo, off, struct.pack("<H", 6)), "out of range")
        coords = np.frombuffer(self.coo, "<u2", 2 * nnz, off).reshape(2, nnz).copy()
        coords[:, [0, 1]] = coords[:, [1, 0]]
        self.bad(self.patch(self.coo, off, coords.tobytes()), "C order")
        coords[:, 0] = coords[:, 1]
        self.bad(self.patch(self.coo, off, coords.tobytes()), "duplicated")

    def test_bool_values(self):
        dense = np.array([[False, True], [True, False]])
        enc = encode_chunk(dense, False, "csr", "uint16", "uint32")
        off = table(enc, 3)[2][0]
        with self.assertRaisesRegex(ValueError, "bool"):
            decode_chunk(self.patch(enc, off, b"\x02"), (2, 2), "bool", False, "csr", "uint16", "uint32")

    def test_non_canonical_layout_accepted(self):
        # Gaps between 8-aligned sections and trailing bytes are fine for a decoder.
        nnz = header(self.coo)[5]
        secs = table(self.coo, 2)
        idx = self.coo[secs[0][0]: secs[0][0] + secs[0][1]]
        val = self.coo[secs[1][0]: secs[1][0] + secs[1][1]]
        o0 = 128
        o1 = align8(o0 + len(idx)) + 24
        buf = bytearray(b"\xAA" * (o1 + len(val) + 13))
        buf[:32] = self.coo[:32]
        struct.pack_into("<QQQQ", buf, 32, o0, len(idx), o1, len(val))
        buf[o0: o0 + len(idx)] = idx
        buf[o1: o1 + len(val)] = val
        np.testing.assert_array_equal(self.dec(bytes(buf)), self.dense)
        self.assertEqual(nnz, len(val) // 4)

    def test_bad_arguments(self):
        with self.assertRaises(ValueError):
            self.dec(self.csr, fmt="csr", shape=(6, 9, 1))
        with self.assertRaises(ValueError):
            self.dec(self.coo, fmt="bsr")
        with self.assertRaises(ValueError):
            self.dec(self.coo, index="int16")
        with self.assertRaises(ValueError):
            self.dec(self.coo, index="uint8")
        with self.assertRaises(ValueError):
            decode_chunk(self.coo, (70000, 9), "float32", 0.0, "coo", "uint16", None)
        with self.assertRaises(ValueError):
            self.dec(12345)
        with self.assertRaises(ValueError):
            encode_chunk(np.zeros((2, 2, 2)), 0.0, "csr", "uint16", "uint32")
        with self.assertRaises(ValueError):
            encode_chunk(np.zeros(3, dtype=object), 0, "coo", "uint16")
        with self.assertRaises(ValueError):
            encode_chunk(np.zeros((2, 2)), 0.0, "coo", "uint16", "uint32")

    def test_fuzz_never_other_exceptions(self):
        rng = np.random.default_rng(10)
        kinds = [("coo", self.coo), ("csr", self.csr), ("csc", self.csc)]
        for trial in range(3000):
            fmt, buf = kinds[trial % 3]
            b = bytearray(buf)
            for _ in range(int(rng.integers(1, 4))):
                # Bias the flips towards the header, table and index sections.
                pos = int(rng.integers(0, min(len(b), 160 if trial % 2 else len(b))))
                b[pos] = int(rng.integers(0, 256))
            if trial % 7 == 0:
                b = b[: int(rng.integers(0, len(b) + 1))]
            try:
                out = self.dec(bytes(b), fmt=fmt)
            except ValueError:
                continue
            self.assertEqual(out.shape, self.dense.shape)


if __name__ == "__main__":
    unittest.main()
