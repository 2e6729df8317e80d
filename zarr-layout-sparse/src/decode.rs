//! Decoding: validation of untrusted chunk bytes, zero-copy views and densification.

use std::fmt;
use std::ops::Deref;

use bytemuck::{Pod, PodCastError};
use ndarray::ArrayView2;
use sprs::{CompressedStorage, CsMatViewI};

use crate::error::SparseError;
use crate::header::{read_table, section_names, section_sizes, table_end, Header};
use crate::types::{element_count, Format, Layout, SparseIndex, SparsePointer};
use crate::value::{FloatKind, SparseValue};

/// A decoded, fully validated sparse chunk borrowing the encoded bytes.
///
/// Obtained from [`SparseChunk::decode`] (or [`decode`]), which checks everything the spec
/// requires before any use: header fields against the expected layout, chunk shape and value
/// size; section offsets and sizes against nnz and the buffer; pointers; index ranges and
/// canonical order. After that, every accessor is a cast of a region of the input buffer (no
/// copy) and densification cannot go out of bounds.
#[derive(Clone)]
pub struct SparseChunk<'a> {
    layout: Layout,
    shape: Vec<u64>,
    elements: usize,
    nnz: usize,
    value_size: usize,
    pointers: &'a [u8],
    indices: &'a [u8],
    values: &'a [u8],
}

impl fmt::Debug for SparseChunk<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SparseChunk")
            .field("layout", &self.layout)
            .field("shape", &self.shape)
            .field("nnz", &self.nnz)
            .field("value_size", &self.value_size)
            .finish_non_exhaustive()
    }
}

/// Decodes and validates an encoded chunk: see [`SparseChunk::decode`].
pub fn decode<'a>(
    bytes: &'a [u8],
    layout: &Layout,
    shape: &[u64],
    value_size: usize,
) -> Result<SparseChunk<'a>, SparseError> {
    SparseChunk::decode(bytes, layout, shape, value_size)
}

/// Casts a validated section; failures (which validation rules out) become errors, not panics.
fn cast<T: Pod>(bytes: &[u8]) -> Result<&[T], SparseError> {
    bytemuck::try_cast_slice(bytes).map_err(|e| match e {
        PodCastError::TargetAlignmentGreaterAndInputNotAligned => {
            let align = align_of::<T>();
            SparseError::Misaligned {
                align,
                offset: bytes.as_ptr() as usize % align,
            }
        }
        _ => SparseError::LengthMismatch {
            what: "section (not a whole number of elements)",
            expected: (bytes.len() / size_of::<T>().max(1) * size_of::<T>()) as u64,
            found: bytes.len() as u64,
        },
    })
}

/// Reads the little-endian unsigned integer of `width` bytes at element `slot`.
#[inline]
fn read_le(bytes: &[u8], slot: usize, width: usize) -> u64 {
    let at = slot * width;
    let mut a = [0u8; 8];
    a[..width].copy_from_slice(&bytes[at..at + width]);
    u64::from_le_bytes(a)
}

fn validate_coo<I: SparseIndex>(
    indices: &[I],
    shape: &[u64],
    nnz: usize,
) -> Result<(), SparseError> {
    let mut previous: Option<u64> = None;
    for k in 0..nnz {
        let mut pos = 0u64;
        for (axis, &extent) in shape.iter().enumerate() {
            let index = indices[axis * nnz + k].as_u64();
            if index >= extent {
                return Err(SparseError::IndexOutOfRange {
                    entry: k as u64,
                    axis,
                    index,
                    extent,
                });
            }
            // Cannot overflow: pos < product of the extents so far, and the element count fits.
            pos = pos * extent + index;
        }
        if previous.is_some_and(|p| pos <= p) {
            return Err(SparseError::Unsorted { entry: k as u64 });
        }
        previous = Some(pos);
    }
    Ok(())
}

fn validate_compressed<I: SparseIndex, P: SparsePointer>(
    pointers: &[P],
    indices: &[I],
    inner: u64,
    inner_axis: usize,
    nnz: usize,
) -> Result<(), SparseError> {
    let (Some(first), Some(last)) = (pointers.first(), pointers.last()) else {
        // The pointer section has outer + 1 >= 1 entries: checked by its size.
        return Err(SparseError::LengthMismatch {
            what: "pointers section",
            expected: 1,
            found: 0,
        });
    };
    if first.as_u64() != 0 {
        return Err(SparseError::PointerBoundary {
            position: 0,
            expected: 0,
            found: first.as_u64(),
        });
    }
    if last.as_u64() != nnz as u64 {
        return Err(SparseError::PointerBoundary {
            position: pointers.len() as u64 - 1,
            expected: nnz as u64,
            found: last.as_u64(),
        });
    }
    for (position, w) in pointers.windows(2).enumerate() {
        if w[1].as_u64() < w[0].as_u64() {
            return Err(SparseError::PointerDecreasing {
                position: position as u64 + 1,
                previous: w[0].as_u64(),
                found: w[1].as_u64(),
            });
        }
    }
    // Now 0 = p[0] <= p[i] <= p[outer] = nnz: every range below is inside `indices`.
    for w in pointers.windows(2) {
        let (start, end) = (w[0].as_u64() as usize, w[1].as_u64() as usize);
        let mut previous: Option<u64> = None;
        for (k, i) in indices[start..end].iter().enumerate() {
            let index = i.as_u64();
            let entry = (start + k) as u64;
            if index >= inner {
                return Err(SparseError::IndexOutOfRange {
                    entry,
                    axis: inner_axis,
                    index,
                    extent: inner,
                });
            }
            if previous.is_some_and(|p| index <= p) {
                return Err(SparseError::Unsorted { entry });
            }
            previous = Some(index);
        }
    }
    Ok(())
}

fn scatter_coo<I: SparseIndex>(
    indices: &[I],
    shape: &[u64],
    nnz: usize,
    mut f: impl FnMut(usize, usize),
) {
    for k in 0..nnz {
        let mut pos = 0usize;
        for (axis, &extent) in shape.iter().enumerate() {
            pos = pos * extent as usize + indices[axis * nnz + k].as_u64() as usize;
        }
        f(k, pos);
    }
}

fn scatter_compressed<I: SparseIndex, P: SparsePointer>(
    pointers: &[P],
    indices: &[I],
    csc: bool,
    cols: usize,
    mut f: impl FnMut(usize, usize),
) {
    for (o, w) in pointers.windows(2).enumerate() {
        let (start, end) = (w[0].as_u64() as usize, w[1].as_u64() as usize);
        for (k, i) in indices[start..end].iter().enumerate() {
            let i = i.as_u64() as usize;
            let pos = if csc { i * cols + o } else { o * cols + i };
            f(start + k, pos);
        }
    }
}

impl<'a> SparseChunk<'a> {
    /// Decodes and validates an encoded chunk held in `bytes`, for a chunk of `shape` in
    /// `layout` whose values are `value_size` bytes.
    ///
    /// `bytes` must start at an 8-byte-aligned address (decoded buffers of the codec chain
    /// are; otherwise copy into an [`AlignedBuffer`](crate::AlignedBuffer)):
    /// [`SparseError::Misaligned`] otherwise. Nothing is allocated from sizes read from
    /// `bytes`, and no input makes this panic.
    pub fn decode(
        bytes: &'a [u8],
        layout: &Layout,
        shape: &[u64],
        value_size: usize,
    ) -> Result<Self, SparseError> {
        let elements = layout.check_shape(shape)?;
        if value_size == 0 {
            return Err(SparseError::InvalidElementKind {
                size: 0,
                float: FloatKind::None,
            });
        }
        let h = Header::parse(bytes)?;
        let misalignment = bytes.as_ptr() as usize % 8;
        if misalignment != 0 {
            return Err(SparseError::Misaligned {
                align: 8,
                offset: misalignment,
            });
        }
        let format = layout.format();
        if h.format != format {
            return Err(SparseError::FormatMismatch {
                expected: format,
                found: h.format,
            });
        }
        let width_check = |field, expected: usize, found: u64| {
            if expected as u64 == found {
                Ok(())
            } else {
                Err(SparseError::WidthMismatch {
                    field,
                    expected: expected as u64,
                    found,
                })
            }
        };
        width_check("index width", layout.index_width(), h.index_width.into())?;
        width_check(
            "pointer width",
            layout.pointer_width(),
            h.pointer_width.into(),
        )?;
        if usize::from(h.ndim) != shape.len() {
            return Err(SparseError::RankMismatch {
                expected: shape.len(),
                found: h.ndim.into(),
            });
        }
        let n = format.n_sections();
        if usize::from(h.n_sections) != n {
            return Err(SparseError::SectionCount {
                expected: n as u16,
                found: h.n_sections,
            });
        }
        width_check("value size", value_size, h.value_size.into())?;
        if h.nnz > elements {
            return Err(SparseError::TooManyEntries {
                nnz: h.nnz,
                elements,
            });
        }
        let buffer_len = bytes.len() as u64;
        let mut previous_end = table_end(n);
        if buffer_len < previous_end {
            return Err(SparseError::Truncated {
                what: "section table",
                needed: previous_end,
                len: buffer_len,
            });
        }
        let table = read_table(bytes, n);
        let sizes = section_sizes(
            format,
            shape,
            h.nnz,
            value_size as u64,
            layout.index_width() as u64,
            layout.pointer_width() as u64,
        )?;
        let mut slices: [&'a [u8]; 3] = [&[]; 3];
        for (i, ((section, &expected), name)) in table
            .iter()
            .zip(sizes.as_slice())
            .zip(section_names(format))
            .enumerate()
        {
            let (offset, len) = (section.offset, section.nbytes);
            if offset % 8 != 0 {
                return Err(SparseError::SectionMisaligned {
                    section: name,
                    offset,
                });
            }
            if offset < previous_end {
                return Err(SparseError::SectionOverlap {
                    section: name,
                    offset,
                    previous_end,
                });
            }
            let end = match offset.checked_add(len) {
                Some(end) if end <= buffer_len => end,
                _ => {
                    return Err(SparseError::SectionOutOfBounds {
                        section: name,
                        offset,
                        len,
                        buffer_len,
                    })
                }
            };
            if len != expected {
                return Err(SparseError::SectionSize {
                    section: name,
                    expected,
                    found: len,
                    nnz: h.nnz,
                });
            }
            // In bounds of a slice, so both fit usize.
            slices[i] = &bytes[offset as usize..end as usize];
            previous_end = end;
        }
        let (pointers, indices, values) = match format {
            Format::Coo => (&[][..], slices[0], slices[1]),
            Format::Csr | Format::Csc => (slices[0], slices[1], slices[2]),
        };
        let chunk = SparseChunk {
            layout: *layout,
            shape: shape.to_vec(),
            elements: elements as usize,
            nnz: h.nnz as usize,
            value_size,
            pointers,
            indices,
            values,
        };
        chunk.validate_structure()?;
        Ok(chunk)
    }

    fn validate_structure(&self) -> Result<(), SparseError> {
        let nnz = self.nnz;
        match (self.layout.format(), self.layout.pointer_type()) {
            (Format::Coo, _) => with_index!(self.layout.index_type(), I => {
                validate_coo::<I>(cast(self.indices)?, &self.shape, nnz)
            }),
            (format, Some(p)) => {
                let (inner, axis) = match format {
                    Format::Csc => (self.shape[0], 0),
                    _ => (self.shape[1], 1),
                };
                with_index!(self.layout.index_type(), I => with_pointer!(p, P => {
                    validate_compressed::<I, P>(
                        cast(self.pointers)?,
                        cast(self.indices)?,
                        inner,
                        axis,
                        nnz,
                    )
                }))
            }
            (format, None) => Err(SparseError::MissingPointerType { format }),
        }
    }

    /// Calls `f(k, position)` for every stored entry `k` with its C-order dense position.
    fn for_each_position(&self, mut f: impl FnMut(usize, usize)) -> Result<(), SparseError> {
        match (self.layout.format(), self.layout.pointer_type()) {
            (Format::Coo, _) => with_index!(self.layout.index_type(), I => {
                scatter_coo::<I>(cast(self.indices)?, &self.shape, self.nnz, &mut f)
            }),
            (format, Some(p)) => {
                let cols = self.shape[1] as usize;
                with_index!(self.layout.index_type(), I => with_pointer!(p, P => {
                    scatter_compressed::<I, P>(
                        cast(self.pointers)?,
                        cast(self.indices)?,
                        format == Format::Csc,
                        cols,
                        &mut f,
                    )
                }))
            }
            (format, None) => return Err(SparseError::MissingPointerType { format }),
        }
        Ok(())
    }

    /// The layout (format, index and pointer types).
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The format.
    pub fn format(&self) -> Format {
        self.layout.format()
    }

    /// The chunk shape.
    pub fn shape(&self) -> &[u64] {
        &self.shape
    }

    /// Number of elements of the dense chunk.
    pub fn element_count(&self) -> usize {
        self.elements
    }

    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.nnz
    }

    /// Size of one value in bytes.
    pub fn value_size(&self) -> usize {
        self.value_size
    }

    /// The raw bytes of the values section.
    pub fn value_bytes(&self) -> &'a [u8] {
        self.values
    }

    /// The raw bytes of the indices section (COO `(ndim, nnz)` block, or CSR/CSC minor
    /// indices).
    pub fn index_bytes(&self) -> &'a [u8] {
        self.indices
    }

    /// The raw bytes of the pointers section (empty for COO).
    pub fn pointer_bytes(&self) -> &'a [u8] {
        self.pointers
    }

    /// The values, cast in place. `T` must have the chunk's value size.
    pub fn values<T: SparseValue>(&self) -> Result<&'a [T], SparseError> {
        if size_of::<T>() != self.value_size {
            return Err(SparseError::WidthMismatch {
                field: "value size",
                expected: self.value_size as u64,
                found: size_of::<T>() as u64,
            });
        }
        cast(self.values)
    }

    /// The indices section, cast in place: the `(ndim, nnz)` block row by row for COO, the
    /// minor indices for CSR/CSC. `I` must be the layout's index type.
    pub fn indices<I: SparseIndex>(&self) -> Result<&'a [I], SparseError> {
        if I::TYPE != self.layout.index_type() {
            return Err(SparseError::TypeMismatch {
                what: "index type",
                expected: self.layout.index_type().name(),
                found: I::TYPE.name(),
            });
        }
        cast(self.indices)
    }

    /// The CSR/CSC pointers, cast in place. `P` must be the layout's pointer type.
    pub fn pointers<P: SparsePointer>(&self) -> Result<&'a [P], SparseError> {
        let Some(expected) = self.layout.pointer_type() else {
            return Err(SparseError::UnsupportedOperation {
                operation: "pointers",
                format: self.format(),
            });
        };
        if P::TYPE != expected {
            return Err(SparseError::TypeMismatch {
                what: "pointer type",
                expected: expected.name(),
                found: P::TYPE.name(),
            });
        }
        cast(self.pointers)
    }

    /// The COO coordinates as an `(ndim, nnz)` array view over the indices section (no copy):
    /// row `d` holds every entry's coordinate on axis `d`.
    pub fn coo_indices<I: SparseIndex>(&self) -> Result<ArrayView2<'a, I>, SparseError> {
        if self.format() != Format::Coo {
            return Err(SparseError::UnsupportedOperation {
                operation: "a coo view",
                format: self.format(),
            });
        }
        let flat = self.indices::<I>()?;
        ArrayView2::from_shape((self.shape.len(), self.nnz), flat).map_err(|_| {
            SparseError::LengthMismatch {
                what: "indices section",
                expected: (self.shape.len() * self.nnz) as u64,
                found: flat.len() as u64,
            }
        })
    }

    /// A COO chunk as coordinates and values, both viewing the input buffer (no copy).
    pub fn coo<T: SparseValue, I: SparseIndex>(&self) -> Result<CooView<'a, T, I>, SparseError> {
        Ok(CooView {
            indices: self.coo_indices()?,
            values: self.values()?,
        })
    }

    /// A CSR or CSC chunk as a `sprs` matrix view over the input buffer (no copy, no second
    /// validation pass): CSR storage for a CSR chunk, CSC storage for a CSC chunk.
    ///
    /// `I` and `P` must be the layout's index and pointer types. `sprs` additionally needs
    /// the minor extent to fit `I` and the major extent + 1 to fit `P`
    /// ([`SparseError::Unrepresentable`] otherwise: in practice only a `uint16` index type
    /// with a minor extent of 65536).
    pub fn sprs_view<T: SparseValue, I: SparseIndex, P: SparsePointer>(
        &self,
    ) -> Result<CsMatViewI<'a, T, I, P>, SparseError> {
        let storage = match self.format() {
            Format::Csr => CompressedStorage::CSR,
            Format::Csc => CompressedStorage::CSC,
            Format::Coo => {
                return Err(SparseError::UnsupportedOperation {
                    operation: "a sprs view",
                    format: Format::Coo,
                })
            }
        };
        let pointers = self.pointers::<P>()?;
        let indices = self.indices::<I>()?;
        let values = self.values::<T>()?;
        let (rows, cols) = (self.shape[0] as usize, self.shape[1] as usize);
        let (outer, inner) = match storage {
            CompressedStorage::CSR => (rows, cols),
            CompressedStorage::CSC => (cols, rows),
        };
        if I::try_from_usize(inner).is_none() {
            return Err(SparseError::Unrepresentable {
                what: "minor extent",
                value: inner as u64,
            });
        }
        if outer.checked_add(1).and_then(P::try_from_usize).is_none() {
            return Err(SparseError::Unrepresentable {
                what: "major extent + 1",
                value: outer as u64,
            });
        }
        // SAFETY: `new_unchecked` requires what `sprs`'s `check_compressed_structure` checks,
        // and `decode` has established all of it: `indices` and `values` both have nnz
        // elements; `pointers` has outer + 1 elements with p[0] = 0, non-decreasing,
        // p[outer] = nnz (nnz <= buffer length <= usize::MAX / 2); every index converts to
        // usize, is smaller than the minor extent and is strictly increasing within its
        // major slice; the minor extent fits `I` and outer + 1 fits `P` (checked just above).
        let view =
            unsafe { CsMatViewI::new_unchecked(storage, (rows, cols), pointers, indices, values) };
        debug_assert!(view.check_compressed_structure().is_ok());
        Ok(view)
    }

    /// Writes the dense chunk (C order) into `out`: stored values at their positions, `fill`
    /// everywhere else. `out.len()` must be the element count.
    pub fn densify_into<T: SparseValue>(&self, out: &mut [T], fill: &T) -> Result<(), SparseError> {
        let values = self.values::<T>()?;
        if out.len() != self.elements {
            return Err(SparseError::LengthMismatch {
                what: "output buffer",
                expected: self.elements as u64,
                found: out.len() as u64,
            });
        }
        out.fill(*fill);
        self.for_each_position(|k, pos| out[pos] = values[k])
    }

    /// The dense chunk (C order) as a new vector.
    pub fn to_dense<T: SparseValue>(&self, fill: &T) -> Result<Vec<T>, SparseError> {
        let mut out = vec![*fill; self.elements];
        self.densify_into(&mut out, fill)?;
        Ok(out)
    }

    /// Writes the dense chunk (C order) as bytes into `out`, the byte-level counterpart of
    /// [`densify_into`](Self::densify_into): `fill.len()` must be the value size and
    /// `out.len()` the element count times the value size.
    pub fn densify_bytes(&self, out: &mut [u8], fill: &[u8]) -> Result<(), SparseError> {
        let size = self.value_size;
        if fill.len() != size {
            return Err(SparseError::LengthMismatch {
                what: "fill value",
                expected: size as u64,
                found: fill.len() as u64,
            });
        }
        let expected = element_count(&self.shape)?.checked_mul(size as u64).ok_or(
            SparseError::SizeOverflow {
                what: "dense chunk",
            },
        )?;
        if out.len() as u64 != expected {
            return Err(SparseError::LengthMismatch {
                what: "output buffer",
                expected,
                found: out.len() as u64,
            });
        }
        if fill.iter().all(|&b| b == 0) {
            out.fill(0);
        } else {
            for element in out.chunks_exact_mut(size) {
                element.copy_from_slice(fill);
            }
        }
        let values = self.values;
        self.for_each_position(|k, pos| {
            out[pos * size..(pos + 1) * size].copy_from_slice(&values[k * size..(k + 1) * size])
        })
    }

    /// The dense chunk (C order) as bytes in a new vector.
    pub fn to_dense_bytes(&self, fill: &[u8]) -> Result<Vec<u8>, SparseError> {
        let len = self
            .elements
            .checked_mul(self.value_size)
            .ok_or(SparseError::SizeOverflow {
                what: "dense chunk",
            })?;
        let mut out = vec![0u8; len];
        self.densify_bytes(&mut out, fill)?;
        Ok(out)
    }

    fn cursor(&self) -> Cursor<'a> {
        Cursor {
            format: self.format(),
            ndim: self.shape.len(),
            nnz: self.nnz,
            index_width: self.layout.index_width(),
            pointer_width: self.layout.pointer_width(),
            indices: self.indices,
            pointers: self.pointers,
            k: 0,
            outer: 0,
        }
    }

    /// Iterates over the stored entries in storage order: chunk-local coordinates and a
    /// reference to the value (in the input buffer).
    pub fn entries<T: SparseValue>(&self) -> Result<Entries<'a, T>, SparseError> {
        Ok(Entries {
            cursor: self.cursor(),
            values: self.values()?,
        })
    }

    /// Iterates over the stored entries in storage order: chunk-local coordinates and the
    /// value's bytes.
    pub fn byte_entries(&self) -> ByteEntries<'a> {
        ByteEntries {
            cursor: self.cursor(),
            values: self.values,
            size: self.value_size,
        }
    }
}

/// A COO chunk viewed in place: coordinates `(ndim, nnz)` and values.
#[derive(Debug, Clone)]
pub struct CooView<'a, T, I> {
    /// Row `d` holds every entry's coordinate on axis `d`.
    pub indices: ArrayView2<'a, I>,
    /// One value per entry.
    pub values: &'a [T],
}

/// Coordinates of one entry: a slice of `u64`, held inline up to 6 dimensions.
#[derive(Clone)]
pub struct Coords(CoordsRepr);

const INLINE_DIMS: usize = 6;

#[derive(Clone)]
enum CoordsRepr {
    Inline { len: usize, buf: [u64; INLINE_DIMS] },
    Heap(Vec<u64>),
}

impl Coords {
    fn with(ndim: usize, mut get: impl FnMut(usize) -> u64) -> Self {
        if ndim <= INLINE_DIMS {
            let mut buf = [0u64; INLINE_DIMS];
            for (d, b) in buf.iter_mut().enumerate().take(ndim) {
                *b = get(d);
            }
            Coords(CoordsRepr::Inline { len: ndim, buf })
        } else {
            Coords(CoordsRepr::Heap((0..ndim).map(get).collect()))
        }
    }

    /// The coordinates as a slice.
    pub fn as_slice(&self) -> &[u64] {
        match &self.0 {
            CoordsRepr::Inline { len, buf } => &buf[..*len],
            CoordsRepr::Heap(v) => v,
        }
    }
}

impl Deref for Coords {
    type Target = [u64];
    fn deref(&self) -> &[u64] {
        self.as_slice()
    }
}

impl fmt::Debug for Coords {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.as_slice().fmt(f)
    }
}

impl PartialEq for Coords {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for Coords {}

impl std::hash::Hash for Coords {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state)
    }
}

/// Walks the entries of a validated chunk, reading indices by width (no generics needed).
#[derive(Debug, Clone)]
struct Cursor<'a> {
    format: Format,
    ndim: usize,
    nnz: usize,
    index_width: usize,
    pointer_width: usize,
    indices: &'a [u8],
    pointers: &'a [u8],
    k: usize,
    outer: usize,
}

impl Cursor<'_> {
    fn next(&mut self) -> Option<(Coords, usize)> {
        let k = self.k;
        if k >= self.nnz {
            return None;
        }
        self.k += 1;
        let coords = match self.format {
            Format::Coo => Coords::with(self.ndim, |d| {
                read_le(self.indices, d * self.nnz + k, self.index_width)
            }),
            Format::Csr | Format::Csc => {
                // Validated pointers end at nnz > k, so this stops inside the section.
                while read_le(self.pointers, self.outer + 1, self.pointer_width) <= k as u64 {
                    self.outer += 1;
                }
                let minor = read_le(self.indices, k, self.index_width);
                let major = self.outer as u64;
                if self.format == Format::Csr {
                    Coords::with(2, |d| if d == 0 { major } else { minor })
                } else {
                    Coords::with(2, |d| if d == 0 { minor } else { major })
                }
            }
        };
        Some((coords, k))
    }

    fn remaining(&self) -> usize {
        self.nnz - self.k
    }
}

/// Iterator over the entries of a chunk: `(coordinates, &value)`; see
/// [`SparseChunk::entries`].
#[derive(Debug, Clone)]
pub struct Entries<'a, T> {
    cursor: Cursor<'a>,
    values: &'a [T],
}

impl<'a, T> Iterator for Entries<'a, T> {
    type Item = (Coords, &'a T);

    fn next(&mut self) -> Option<Self::Item> {
        let (coords, k) = self.cursor.next()?;
        self.values.get(k).map(|v| (coords, v))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.cursor.remaining();
        (n, Some(n))
    }
}

impl<T> ExactSizeIterator for Entries<'_, T> {}

/// Iterator over the entries of a chunk: `(coordinates, value bytes)`; see
/// [`SparseChunk::byte_entries`].
#[derive(Debug, Clone)]
pub struct ByteEntries<'a> {
    cursor: Cursor<'a>,
    values: &'a [u8],
    size: usize,
}

impl<'a> Iterator for ByteEntries<'a> {
    type Item = (Coords, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        let (coords, k) = self.cursor.next()?;
        self.values
            .get(k * self.size..(k + 1) * self.size)
            .map(|v| (coords, v))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.cursor.remaining();
        (n, Some(n))
    }
}

impl ExactSizeIterator for ByteEntries<'_> {}
