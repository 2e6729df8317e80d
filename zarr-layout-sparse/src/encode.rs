//! Building canonical encoded chunks from dense chunks, coordinate triples and `sprs` matrices.
//!
//! Every builder produces the spec's canonical bytes directly: entries in canonical order
//! without duplicates, entries equal to the fill value dropped, sections at their canonical
//! offsets with zero padding.

use std::ops::Deref;

use sprs::{CsMatBase, SpIndex};

use crate::cast;
use crate::error::SparseError;
use crate::header::{canonical_sections, section_sizes, write_table, Header};
use crate::types::{Format, Layout};
use crate::value::{ElementKind, SparseSum, SparseValue};

/// Writes the low `width` bytes of `value` (little-endian) at element `slot` of `section`.
#[inline]
fn put(section: &mut [u8], slot: usize, width: usize, value: u64) {
    let at = slot * width;
    section[at..at + width].copy_from_slice(&value.to_le_bytes()[..width]);
}

/// The (outer, inner) extents of a CSR/CSC chunk.
pub(crate) fn outer_inner(format: Format, shape: &[u64]) -> (u64, u64) {
    match format {
        Format::Csc => (shape[1], shape[0]),
        _ => (shape[0], shape[1]),
    }
}

/// The dense (C order) position of the entry with canonical key `key`.
///
/// Keys are C-order linear positions for COO and CSR, and column-major linear positions
/// (`col * rows + row`) for CSC.
#[inline]
fn key_to_position(format: Format, shape: &[u64], key: u64) -> u64 {
    match format {
        Format::Csc => {
            let rows = shape[0];
            (key % rows) * shape[1] + key / rows
        }
        _ => key,
    }
}

/// The canonical key of a C-order position (see [`key_to_position`]).
#[inline]
fn position_to_key(format: Format, shape: &[u64], pos: u64) -> u64 {
    match format {
        Format::Csc => {
            let cols = shape[1];
            (pos % cols) * shape[0] + pos / cols
        }
        _ => pos,
    }
}

/// The coordinates of a C-order position.
pub(crate) fn position_to_coords(shape: &[u64], mut pos: u64) -> Vec<u64> {
    let mut coords = vec![0; shape.len()];
    for (c, &extent) in coords.iter_mut().zip(shape).rev() {
        *c = pos % extent;
        pos /= extent;
    }
    coords
}

/// Encodes a chunk from its entries' canonical keys (strictly increasing, each smaller than
/// the element count; see [`key_to_position`]) and a function writing entry `k`'s value.
///
/// `shape` must have passed `layout.check_shape`.
fn encode_keys(
    layout: &Layout,
    shape: &[u64],
    value_size: usize,
    keys: &[u64],
    mut write_value: impl FnMut(usize, &mut [u8]),
) -> Result<Vec<u8>, SparseError> {
    let format = layout.format();
    let nnz = keys.len();
    let iw = layout.index_width();
    let pw = layout.pointer_width();
    let sizes = section_sizes(
        format,
        shape,
        nnz as u64,
        value_size as u64,
        iw as u64,
        pw as u64,
    )?;
    let (sections, total) = canonical_sections(&sizes)?;
    let total = usize::try_from(total).map_err(|_| SparseError::SizeOverflow {
        what: "encoded chunk",
    })?;
    let n = format.n_sections();
    let header = Header {
        format,
        index_width: iw as u8,
        pointer_width: pw as u8,
        nnz: nnz as u64,
        ndim: shape.len() as u16,
        n_sections: n as u16,
        value_size: u32::try_from(value_size)
            .map_err(|_| SparseError::SizeOverflow { what: "value size" })?,
    };
    let mut out = vec![0u8; total];
    out[..32].copy_from_slice(&header.to_bytes());
    write_table(&mut out, &sections[..n]);

    // Sections are disjoint and in order: split the buffer into their byte ranges.
    let range = |i: usize| {
        let s = sections[i];
        s.offset as usize..(s.offset + s.nbytes) as usize
    };
    match format {
        Format::Coo => {
            let idx = &mut out[range(0)];
            for (k, &key) in keys.iter().enumerate() {
                let mut rem = key;
                for (d, &extent) in shape.iter().enumerate().rev() {
                    put(idx, d * nnz + k, iw, rem % extent);
                    rem /= extent;
                }
            }
        }
        Format::Csr | Format::Csc => {
            let (outer, inner) = outer_inner(format, shape);
            let (head, tail) = out.split_at_mut(sections[1].offset as usize);
            let ptr = &mut head[range(0)];
            let idx = &mut tail[..sections[1].nbytes as usize];
            // ptr[0] = 0 is already in place.
            let mut row = 0u64;
            for (k, &key) in keys.iter().enumerate() {
                let o = key / inner;
                while row < o {
                    row += 1;
                    put(ptr, row as usize, pw, k as u64);
                }
                put(idx, k, iw, key % inner);
            }
            while row < outer {
                row += 1;
                put(ptr, row as usize, pw, nnz as u64);
            }
        }
    }
    let values = &mut out[range(n - 1)];
    if value_size > 0 {
        for (k, v) in values.chunks_exact_mut(value_size).enumerate() {
            write_value(k, v);
        }
    }
    Ok(out)
}

/// Collects the canonical keys of the non-fill positions of a dense chunk.
fn dense_keys(
    format: Format,
    shape: &[u64],
    len: usize,
    is_fill: impl Fn(usize) -> bool,
) -> Vec<u64> {
    let positions: Vec<u64> = (0..len)
        .filter(|&i| !is_fill(i))
        .map(|i| i as u64)
        .collect();
    if format != Format::Csc {
        return positions;
    }
    // Stable counting sort of the C-order positions by column.
    let (rows, cols) = (shape[0], shape[1]);
    let mut start = vec![0usize; cols as usize + 1];
    for &p in &positions {
        start[(p % cols) as usize + 1] += 1;
    }
    for c in 0..cols as usize {
        start[c + 1] += start[c];
    }
    let mut keys = vec![0u64; positions.len()];
    for &p in &positions {
        let c = p % cols;
        let slot = &mut start[c as usize];
        keys[*slot] = c * rows + p / cols;
        *slot += 1;
    }
    keys
}

/// Encodes a dense chunk given as bytes (C order, little-endian elements of `kind`): the
/// byte-level entry point for codecs.
///
/// Elements equal to `fill` (bit equality, every NaN equal to every NaN) are dropped.
/// `dense.len()` must be the element count of `shape` times `kind.size()`, and `fill.len()`
/// must be `kind.size()`.
///
/// ```
/// use zarr_layout_sparse::{encode_dense_bytes, ElementKind, IndexType, Layout, PointerType};
/// let dense: Vec<u8> = [0.0f32, 1.5, 0.0, -0.0].iter().flat_map(|v| v.to_le_bytes()).collect();
/// let layout = Layout::csr(IndexType::U16, PointerType::U32);
/// let bytes = encode_dense_bytes(&layout, &[2, 2], ElementKind::F32, &0.0f32.to_le_bytes(), &dense)?;
/// assert_eq!(&bytes[..4], b"ZSPL");
/// assert_eq!(bytes[8], 2); // nnz: 1.5 and -0.0
/// # Ok::<(), zarr_layout_sparse::SparseError>(())
/// ```
pub fn encode_dense_bytes(
    layout: &Layout,
    shape: &[u64],
    kind: ElementKind,
    fill: &[u8],
    dense: &[u8],
) -> Result<Vec<u8>, SparseError> {
    let elements = layout.check_shape(shape)?;
    let size = kind.size();
    check_len("fill value", size as u64, fill.len())?;
    let expected = elements
        .checked_mul(size as u64)
        .ok_or(SparseError::SizeOverflow {
            what: "dense chunk",
        })?;
    check_len("dense chunk", expected, dense.len())?;
    let elem = |i: usize| &dense[i * size..(i + 1) * size];
    let keys = dense_keys(layout.format(), shape, elements as usize, |i| {
        kind.is_fill(elem(i), fill)
    });
    let format = layout.format();
    encode_keys(layout, shape, size, &keys, |k, out| {
        let pos = key_to_position(format, shape, keys[k]) as usize;
        out.copy_from_slice(elem(pos));
    })
}

/// Encodes a typed dense chunk (C order), dropping elements equal to `fill`.
///
/// ```
/// use zarr_layout_sparse::{encode_dense, IndexType, Layout};
/// let bytes = encode_dense(&Layout::coo(IndexType::U16), &[2, 3], &[0i32, 7, 0, 0, 0, 9], &0)?;
/// assert_eq!(bytes.len(), 64 + 8 + 8);
/// # Ok::<(), zarr_layout_sparse::SparseError>(())
/// ```
pub fn encode_dense<T: SparseValue>(
    layout: &Layout,
    shape: &[u64],
    dense: &[T],
    fill: &T,
) -> Result<Vec<u8>, SparseError> {
    let elements = layout.check_shape(shape)?;
    check_len("dense chunk", elements, dense.len())?;
    let keys = dense_keys(layout.format(), shape, dense.len(), |i| {
        dense[i].is_fill(fill)
    });
    let format = layout.format();
    encode_keys(layout, shape, size_of::<T>(), &keys, |k, out| {
        let pos = key_to_position(format, shape, keys[k]) as usize;
        out.copy_from_slice(cast::bytes_of(&dense[pos]));
    })
}

fn check_len(what: &'static str, expected: u64, found: usize) -> Result<(), SparseError> {
    if expected == found as u64 {
        Ok(())
    } else {
        Err(SparseError::LengthMismatch {
            what,
            expected,
            found: found as u64,
        })
    }
}

/// Sorts triples into canonical order, combines or rejects duplicates, drops fill values.
fn canonical_triples<T: SparseValue>(
    layout: &Layout,
    shape: &[u64],
    coords: &[u64],
    values: &[T],
    fill: &T,
    combine: Option<fn(T, T) -> T>,
) -> Result<(Vec<u64>, Vec<T>), SparseError> {
    layout.check_shape(shape)?;
    let ndim = shape.len();
    let expected =
        (values.len() as u64)
            .checked_mul(ndim as u64)
            .ok_or(SparseError::SizeOverflow {
                what: "coordinates",
            })?;
    check_len("coordinates", expected, coords.len())?;
    let format = layout.format();
    let mut order = Vec::with_capacity(values.len());
    for (k, tuple) in coords.chunks_exact(ndim).enumerate() {
        let mut pos = 0u64;
        for (axis, (&c, &extent)) in tuple.iter().zip(shape).enumerate() {
            if c >= extent {
                return Err(SparseError::IndexOutOfRange {
                    entry: k as u64,
                    axis,
                    index: c,
                    extent,
                });
            }
            pos = pos * extent + c;
        }
        order.push((position_to_key(format, shape, pos), k));
    }
    // Stable, so that duplicates are summed in input order.
    order.sort_by_key(|&(key, _)| key);
    let mut keys = Vec::with_capacity(order.len());
    let mut vals = Vec::with_capacity(order.len());
    let mut i = 0;
    while i < order.len() {
        let (key, first) = order[i];
        let mut value = values[first];
        i += 1;
        while i < order.len() && order[i].0 == key {
            match combine {
                Some(f) => value = f(value, values[order[i].1]),
                None => {
                    let pos = key_to_position(format, shape, key);
                    return Err(SparseError::Duplicate {
                        coords: position_to_coords(shape, pos),
                    });
                }
            }
            i += 1;
        }
        if !value.is_fill(fill) {
            keys.push(key);
            vals.push(value);
        }
    }
    Ok((keys, vals))
}

fn encode_canonical<T: SparseValue>(
    layout: &Layout,
    shape: &[u64],
    keys: &[u64],
    values: &[T],
) -> Result<Vec<u8>, SparseError> {
    encode_keys(layout, shape, size_of::<T>(), keys, |k, out| {
        out.copy_from_slice(cast::bytes_of(&values[k]))
    })
}

/// Encodes a chunk from coordinate/value triples in any order; duplicates are an error.
///
/// `coords` holds the chunk-local coordinates entry by entry: entry `k` is
/// `coords[k * ndim..(k + 1) * ndim]`, with `values[k]`. Values equal to `fill` are dropped.
///
/// ```
/// use zarr_layout_sparse::{encode_triples, IndexType, Layout, PointerType, SparseError};
/// let layout = Layout::csc(IndexType::U32, PointerType::U32);
/// let bytes = encode_triples(&layout, &[3, 3], &[2, 1, 0, 0], &[5.0f64, 6.0], &0.0)?;
/// let dup = encode_triples(&layout, &[3, 3], &[2, 1, 2, 1], &[5.0f64, 6.0], &0.0);
/// assert!(matches!(dup, Err(SparseError::Duplicate { .. })));
/// # Ok::<(), SparseError>(())
/// ```
pub fn encode_triples<T: SparseValue>(
    layout: &Layout,
    shape: &[u64],
    coords: &[u64],
    values: &[T],
    fill: &T,
) -> Result<Vec<u8>, SparseError> {
    let (keys, vals) = canonical_triples(layout, shape, coords, values, fill, None)?;
    encode_canonical(layout, shape, &keys, &vals)
}

/// Encodes a chunk from entries given by their C-order linear positions in the chunk,
/// strictly increasing (what a merge of sorted entries produces), with one value each.
///
/// Unlike [`encode_triples`], nothing is unravelled or sorted again (CSC alone reorders its
/// keys); values equal to `fill` are dropped.
///
/// ```
/// use zarr_layout_sparse::{decode, encode_positions, encode_triples, IndexType, Layout, PointerType};
/// let layout = Layout::csr(IndexType::U32, PointerType::U32);
/// // positions 1 and 5 of a 2 x 3 chunk: (0, 1) and (1, 2)
/// let bytes = encode_positions(&layout, &[2, 3], &[1, 5], &[5.0f32, 6.0], &0.0)?;
/// assert_eq!(bytes, encode_triples(&layout, &[2, 3], &[0, 1, 1, 2], &[5.0f32, 6.0], &0.0)?);
/// # Ok::<(), zarr_layout_sparse::SparseError>(())
/// ```
///
/// # Errors
/// [`SparseError::Unsorted`] for positions that are not strictly increasing,
/// [`SparseError::IndexOutOfRange`] for one past the chunk's end, a length mismatch, and the
/// layout's limits (shape, index width).
pub fn encode_positions<T: SparseValue>(
    layout: &Layout,
    shape: &[u64],
    positions: &[u64],
    values: &[T],
    fill: &T,
) -> Result<Vec<u8>, SparseError> {
    let elements = layout.check_shape(shape)?;
    check_len("values", positions.len() as u64, values.len())?;
    if let Some(k) = positions.windows(2).position(|w| w[0] >= w[1]) {
        return Err(SparseError::Unsorted {
            entry: k as u64 + 1,
        });
    }
    if let Some(&last) = positions.last().filter(|&&p| p >= elements) {
        // a position past the end lies past the end of axis 0, the slowest
        let extent = shape.first().copied().unwrap_or(1);
        let index = match elements.checked_div(extent) {
            Some(inner) if inner > 0 => last / inner,
            _ => last,
        };
        return Err(SparseError::IndexOutOfRange {
            entry: positions.len() as u64 - 1,
            axis: 0,
            index,
            extent,
        });
    }
    let (positions, values): (std::borrow::Cow<'_, [u64]>, std::borrow::Cow<'_, [T]>) =
        if values.iter().any(|v| v.is_fill(fill)) {
            let (p, v): (Vec<u64>, Vec<T>) = positions
                .iter()
                .zip(values)
                .filter(|(_, v)| !v.is_fill(fill))
                .map(|(&p, &v)| (p, v))
                .unzip();
            (p.into(), v.into())
        } else {
            (positions.into(), values.into())
        };
    let format = layout.format();
    if format == Format::Csc {
        let mut order: Vec<(u64, usize)> = positions
            .iter()
            .enumerate()
            .map(|(k, &p)| (position_to_key(format, shape, p), k))
            .collect();
        order.sort_unstable_by_key(|&(key, _)| key);
        let keys: Vec<u64> = order.iter().map(|&(key, _)| key).collect();
        return encode_keys(layout, shape, size_of::<T>(), &keys, |k, out| {
            out.copy_from_slice(cast::bytes_of(&values[order[k].1]))
        });
    }
    encode_canonical(layout, shape, &positions, &values)
}

/// Encodes a chunk from coordinate/value triples in any order, summing duplicates (in input
/// order; integers wrap around). Sums equal to `fill` are dropped.
///
/// `coords` is laid out as for [`encode_triples`].
pub fn encode_triples_summed<T: SparseSum>(
    layout: &Layout,
    shape: &[u64],
    coords: &[u64],
    values: &[T],
    fill: &T,
) -> Result<Vec<u8>, SparseError> {
    let (keys, vals) = canonical_triples(layout, shape, coords, values, fill, Some(T::sparse_add))?;
    encode_canonical(layout, shape, &keys, &vals)
}

/// Encodes a `sprs` matrix (CSR or CSC storage, any index and pointer types, owned or a view)
/// as a 2-d chunk of `mat.shape()` in the layout's format (CSR, CSC or COO).
///
/// Stored values equal to `fill` are dropped; a matrix holding the same position twice is an
/// error.
///
/// ```
/// use zarr_layout_sparse::{encode_sprs, IndexType, Layout, PointerType};
/// let mat = sprs::CsMat::new((2, 3), vec![0, 1, 2], vec![2, 0], vec![1.0f32, 2.0]);
/// let bytes = encode_sprs(&Layout::csc(IndexType::U16, PointerType::U32), &mat, &0.0)?;
/// assert_eq!(bytes[5], 2); // CSC
/// # Ok::<(), zarr_layout_sparse::SparseError>(())
/// ```
pub fn encode_sprs<T, I, Iptr, IptrStorage, IndStorage, DataStorage>(
    layout: &Layout,
    mat: &CsMatBase<T, I, IptrStorage, IndStorage, DataStorage, Iptr>,
    fill: &T,
) -> Result<Vec<u8>, SparseError>
where
    T: SparseValue,
    I: SpIndex,
    Iptr: SpIndex,
    IptrStorage: Deref<Target = [Iptr]>,
    IndStorage: Deref<Target = [I]>,
    DataStorage: Deref<Target = [T]>,
{
    let shape = [mat.rows() as u64, mat.cols() as u64];
    layout.check_shape(&shape)?;
    let format = layout.format();
    let mut entries: Vec<(u64, T)> = Vec::with_capacity(mat.nnz());
    for (k, (value, (r, c))) in mat.iter().enumerate() {
        let (r, c) = match (r.try_index(), c.try_index()) {
            (Some(r), Some(c)) => (r as u64, c as u64),
            _ => {
                return Err(SparseError::IndexOutOfRange {
                    entry: k as u64,
                    axis: 0,
                    index: u64::MAX,
                    extent: shape[0],
                })
            }
        };
        for (axis, (i, extent)) in [(r, shape[0]), (c, shape[1])].into_iter().enumerate() {
            if i >= extent {
                return Err(SparseError::IndexOutOfRange {
                    entry: k as u64,
                    axis,
                    index: i,
                    extent,
                });
            }
        }
        entries.push((position_to_key(format, &shape, r * shape[1] + c), *value));
    }
    // Already sorted when the storage order is the target order (and the matrix is valid).
    if !entries.windows(2).all(|w| w[0].0 < w[1].0) {
        entries.sort_by_key(|e| e.0);
        if let Some(w) = entries.windows(2).find(|w| w[0].0 == w[1].0) {
            let pos = key_to_position(format, &shape, w[0].0);
            return Err(SparseError::Duplicate {
                coords: position_to_coords(&shape, pos),
            });
        }
    }
    entries.retain(|e| !e.1.is_fill(fill));
    let keys: Vec<u64> = entries.iter().map(|e| e.0).collect();
    encode_keys(layout, &shape, size_of::<T>(), &keys, |k, out| {
        out.copy_from_slice(cast::bytes_of(&entries[k].1))
    })
}
