//! Decoding: validation of untrusted chunk bytes, zero-copy views and densification.

use std::fmt;
use std::ops::{Deref, Range};

use ndarray::ArrayView2;
use sprs::CsMatViewI;

use crate::cast::{self, CheckedCompressed};
use crate::error::SparseError;
use crate::header::{read_table, section_names, section_sizes, table_end, Header};
use crate::types::{element_count, Format, Layout, SparseIndex, SparsePointer};
use crate::value::{FloatKind, SparseValue};

/// A decoded, fully validated sparse chunk over its encoded bytes, held in storage `B`.
///
/// Generic over its storage, as regex-automata's DFAs are: `SparseChunk<&[u8]>` borrows the
/// bytes, `SparseChunk<AlignedBuffer>` (or any other `B: AsRef<[u8]>`) owns them, and the
/// two behave the same. [`SparseChunk::decode`] (or [`decode`]) checks everything the spec
/// requires before any use: header fields against the expected layout, chunk shape and value
/// size; section offsets and sizes against nnz and the buffer; pointers; index ranges and
/// canonical order. It keeps the sections as byte ranges of the storage, so afterwards every
/// accessor borrows `&self` and is a cast of a region of the storage (no copy), and
/// densification cannot go out of bounds.
///
/// `B::as_ref` must return the same bytes every time, as every byte container and borrowed
/// slice does. (A `B` that returns other bytes later makes accessors fail or panic, never
/// read out of bounds: [`SparseChunk::sprs_view`], the one view made without a check, checks
/// the sections again when they are not the ones validated, [`SparseError::StorageChanged`]
/// when they fail.) A clone clones the storage and checks the CSR/CSC structure of the copy
/// once.
pub struct SparseChunk<B> {
    bytes: B,
    layout: Layout,
    shape: Vec<u64>,
    elements: usize,
    nnz: usize,
    value_size: usize,
    pointers: Range<usize>,
    indices: Range<usize>,
    values: Range<usize>,
    /// For CSR and CSC, the checked pointers and indices the `sprs` view is built from.
    compressed: Option<CheckedCompressed>,
}

impl<B: AsRef<[u8]> + Clone> Clone for SparseChunk<B> {
    fn clone(&self) -> Self {
        let mut chunk = SparseChunk {
            bytes: self.bytes.clone(),
            layout: self.layout,
            shape: self.shape.clone(),
            elements: self.elements,
            nnz: self.nnz,
            value_size: self.value_size,
            pointers: self.pointers.clone(),
            indices: self.indices.clone(),
            values: self.values.clone(),
            compressed: self.compressed,
        };
        // Record the copy's sections, so that its views need no further check; should the
        // copy not hold the same structure, the old record stays and `sprs_view` refuses it.
        if let (Some(_), Some(p)) = (self.compressed, self.layout.pointer_type()) {
            let dims = (self.shape[0] as usize, self.shape[1] as usize);
            let recheck = with_index!(self.layout.index_type(), I => with_pointer!(p, P => {
                chunk.pointers::<P>().and_then(|ptr| {
                    CheckedCompressed::check::<I, P>(
                        self.layout.format(),
                        dims,
                        ptr,
                        chunk.indices::<I>()?,
                    )
                })
            }));
            if let Ok(checked) = recheck {
                chunk.compressed = Some(checked);
            }
        }
        chunk
    }
}

impl<B> fmt::Debug for SparseChunk<B> {
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
pub fn decode<B: AsRef<[u8]>>(
    bytes: B,
    layout: &Layout,
    shape: &[u64],
    value_size: usize,
) -> Result<SparseChunk<B>, SparseError> {
    SparseChunk::decode(bytes, layout, shape, value_size)
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

impl<B: AsRef<[u8]>> SparseChunk<B> {
    /// Decodes and validates an encoded chunk held in `bytes` (borrowed, `&[u8]`, or owned,
    /// an [`AlignedBuffer`](crate::AlignedBuffer)), for a chunk of `shape` in `layout` whose
    /// values are `value_size` bytes, and keeps `bytes`.
    ///
    /// The bytes must start at an 8-byte-aligned address (decoded buffers of the codec chain
    /// are; otherwise copy into an [`AlignedBuffer`](crate::AlignedBuffer)):
    /// [`SparseError::Misaligned`] otherwise. Nothing is allocated from sizes read from
    /// `bytes`, and no input makes this panic.
    pub fn decode(
        bytes: B,
        layout: &Layout,
        shape: &[u64],
        value_size: usize,
    ) -> Result<Self, SparseError> {
        let (sections, nnz, compressed) =
            Self::validate(bytes.as_ref(), layout, shape, value_size)?;
        let [pointers, indices, values] = sections;
        Ok(SparseChunk {
            bytes,
            layout: *layout,
            shape: shape.to_vec(),
            // checked by `validate` against usize
            elements: element_count(shape)? as usize,
            nnz,
            value_size,
            pointers,
            indices,
            values,
            compressed,
        })
    }

    /// Everything [`SparseChunk::decode`] checks: the byte ranges of the pointers (empty for
    /// COO), indices and values, nnz, and for CSR and CSC the checked structure.
    #[allow(clippy::type_complexity)] // the parts of one chunk, put together by `decode`
    fn validate(
        bytes: &[u8],
        layout: &Layout,
        shape: &[u64],
        value_size: usize,
    ) -> Result<([Range<usize>; 3], usize, Option<CheckedCompressed>), SparseError> {
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
        let mut ranges: [Range<usize>; 3] = [0..0, 0..0, 0..0];
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
            ranges[i] = offset as usize..end as usize;
            previous_end = end;
        }
        let [a, b, c] = ranges;
        let sections = match format {
            Format::Coo => [0..0, a, b],
            Format::Csr | Format::Csc => [a, b, c],
        };
        // at most the element count, which fits usize
        let nnz = h.nnz as usize;
        let section = |i: usize| &bytes[sections[i].clone()];
        let compressed = match (format, layout.pointer_type()) {
            (Format::Coo, _) => {
                with_index!(layout.index_type(), I => {
                    validate_coo::<I>(cast::slice(section(1))?, shape, nnz)?
                });
                None
            }
            (format, Some(p)) => {
                // 2-d (checked by `check_shape`), extents below the element count
                let dims = (shape[0] as usize, shape[1] as usize);
                Some(
                    with_index!(layout.index_type(), I => with_pointer!(p, P => {
                        CheckedCompressed::check::<I, P>(
                            format,
                            dims,
                            cast::slice(section(0))?,
                            cast::slice(section(1))?,
                        )?
                    })),
                )
            }
            (format, None) => return Err(SparseError::MissingPointerType { format }),
        };
        Ok((sections, nnz, compressed))
    }

    /// The storage the chunk was decoded from, which every view points into.
    pub fn storage(&self) -> &B {
        &self.bytes
    }

    /// The storage the chunk was decoded from.
    pub fn into_storage(self) -> B {
        self.bytes
    }

    /// The bytes of one section.
    fn section(&self, range: &Range<usize>) -> &[u8] {
        &self.bytes.as_ref()[range.clone()]
    }

    /// Calls `f(k, position)` for every stored entry `k` with its C-order dense position.
    fn for_each_position(&self, mut f: impl FnMut(usize, usize)) -> Result<(), SparseError> {
        match (self.layout.format(), self.layout.pointer_type()) {
            (Format::Coo, _) => with_index!(self.layout.index_type(), I => {
                scatter_coo::<I>(cast::slice(self.section(&self.indices))?, &self.shape, self.nnz, &mut f)
            }),
            (format, Some(p)) => {
                let cols = self.shape[1] as usize;
                with_index!(self.layout.index_type(), I => with_pointer!(p, P => {
                    scatter_compressed::<I, P>(
                        cast::slice(self.section(&self.pointers))?,
                        cast::slice(self.section(&self.indices))?,
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
    pub fn value_bytes(&self) -> &[u8] {
        self.section(&self.values)
    }

    /// The raw bytes of the indices section (COO `(ndim, nnz)` block, or CSR/CSC minor
    /// indices).
    pub fn index_bytes(&self) -> &[u8] {
        self.section(&self.indices)
    }

    /// The raw bytes of the pointers section (empty for COO).
    pub fn pointer_bytes(&self) -> &[u8] {
        self.section(&self.pointers)
    }

    /// The values, cast in place. `T` must have the chunk's value size.
    pub fn values<T: SparseValue>(&self) -> Result<&[T], SparseError> {
        if size_of::<T>() != self.value_size {
            return Err(SparseError::WidthMismatch {
                field: "value size",
                expected: self.value_size as u64,
                found: size_of::<T>() as u64,
            });
        }
        cast::slice(self.value_bytes())
    }

    /// The indices section, cast in place: the `(ndim, nnz)` block row by row for COO, the
    /// minor indices for CSR/CSC. `I` must be the layout's index type.
    pub fn indices<I: SparseIndex>(&self) -> Result<&[I], SparseError> {
        if I::TYPE != self.layout.index_type() {
            return Err(SparseError::TypeMismatch {
                what: "index type",
                expected: self.layout.index_type().name(),
                found: I::TYPE.name(),
            });
        }
        cast::slice(self.index_bytes())
    }

    /// The CSR/CSC pointers, cast in place. `P` must be the layout's pointer type.
    pub fn pointers<P: SparsePointer>(&self) -> Result<&[P], SparseError> {
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
        cast::slice(self.pointer_bytes())
    }

    /// The COO coordinates as an `(ndim, nnz)` array view over the indices section (no copy):
    /// row `d` holds every entry's coordinate on axis `d`.
    pub fn coo_indices<I: SparseIndex>(&self) -> Result<ArrayView2<'_, I>, SparseError> {
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
    pub fn coo<T: SparseValue, I: SparseIndex>(&self) -> Result<CooView<'_, T, I>, SparseError> {
        Ok(CooView {
            indices: self.coo_indices()?,
            values: self.values()?,
        })
    }

    /// A CSR or CSC chunk as a `sprs` matrix view over the storage (no copy, no second
    /// validation pass): CSR storage for a CSR chunk, CSC storage for a CSC chunk.
    ///
    /// `I` and `P` must be the layout's index and pointer types. `sprs` additionally needs
    /// the minor extent to fit `I` and the major extent + 1 to fit `P`
    /// ([`SparseError::Unrepresentable`] otherwise: in practice only a `uint16` index type
    /// with a minor extent of 65536). [`SparseError::StorageChanged`] when the storage no
    /// longer returns the bytes the chunk was decoded from (see [`SparseChunk`]).
    pub fn sprs_view<T: SparseValue, I: SparseIndex, P: SparsePointer>(
        &self,
    ) -> Result<CsMatViewI<'_, T, I, P>, SparseError> {
        let Some(checked) = &self.compressed else {
            return Err(SparseError::UnsupportedOperation {
                operation: "a sprs view",
                format: self.format(),
            });
        };
        checked.sprs_view(
            self.pointers::<P>()?,
            self.indices::<I>()?,
            self.values::<T>()?,
        )
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
        let values = self.value_bytes();
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

    fn cursor(&self) -> Cursor<'_> {
        Cursor {
            format: self.format(),
            ndim: self.shape.len(),
            nnz: self.nnz,
            index_width: self.layout.index_width(),
            pointer_width: self.layout.pointer_width(),
            indices: self.index_bytes(),
            pointers: self.pointer_bytes(),
            k: 0,
            outer: 0,
        }
    }

    /// Iterates over the stored entries in storage order: chunk-local coordinates and a
    /// reference to the value (in the input buffer).
    pub fn entries<T: SparseValue>(&self) -> Result<Entries<'_, T>, SparseError> {
        Ok(Entries {
            cursor: self.cursor(),
            values: self.values()?,
        })
    }

    /// Iterates over the stored entries in storage order: chunk-local coordinates and the
    /// value's bytes.
    pub fn byte_entries(&self) -> ByteEntries<'_> {
        ByteEntries {
            cursor: self.cursor(),
            values: self.value_bytes(),
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

#[cfg(test)]
mod tests {
    //! The views of decoded chunks, borrowed and owned: small and without files, so Miri runs
    //! them (`scripts/miri`).

    use super::*;
    use crate::encode::encode_dense;
    use crate::types::{IndexType, PointerType};
    use crate::AlignedBuffer;

    /// A 3 x 4 matrix with 4 stored values.
    const DENSE: [f32; 12] = [0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 3.0, 4.0];
    const SHAPE: [u64; 2] = [3, 4];

    fn encoded(layout: &Layout) -> AlignedBuffer {
        AlignedBuffer::from_slice(&encode_dense(layout, &SHAPE, &DENSE, &0.0).unwrap())
    }

    fn layouts() -> [Layout; 3] {
        [
            Layout::coo(IndexType::U16),
            Layout::csr(IndexType::U16, PointerType::U32),
            Layout::csc(IndexType::U32, PointerType::U64),
        ]
    }

    /// Every view of `chunk` reads inside its storage and gives back `DENSE`.
    fn check_views<B: AsRef<[u8]>>(chunk: &SparseChunk<B>) {
        let storage = chunk.storage().as_ref().as_ptr_range();
        assert!(storage.contains(&chunk.value_bytes().as_ptr()), "no copy");
        assert_eq!(chunk.nnz(), 4);
        assert_eq!(chunk.to_dense(&0.0f32).unwrap(), DENSE);
        let mut seen = 0;
        for (coords, value) in chunk.entries::<f32>().unwrap() {
            let pos = (coords.as_slice()[0] * 4 + coords.as_slice()[1]) as usize;
            assert_eq!(*value, DENSE[pos]);
            seen += 1;
        }
        assert_eq!(seen, 4);
        let in_storage_order: &[f32] = match chunk.format() {
            Format::Csc => &[2.0, 1.0, 3.0, 4.0],
            _ => &[1.0, 2.0, 3.0, 4.0],
        };
        assert_eq!(chunk.values::<f32>().unwrap(), in_storage_order);
        match chunk.format() {
            Format::Coo => {
                let coo = chunk.coo::<f32, u16>().unwrap();
                assert_eq!(coo.indices.row(0).to_vec(), [0, 2, 2, 2]);
                assert_eq!(coo.indices.row(1).to_vec(), [1, 0, 2, 3]);
                assert!(chunk.sprs_view::<f32, u16, u32>().is_err());
            }
            Format::Csr => {
                let m = chunk.sprs_view::<f32, u16, u32>().unwrap();
                assert!(m.is_csr());
                assert_eq!(m.get(2, 3), Some(&4.0));
                assert!(storage.contains(&m.indptr().raw_storage().as_ptr().cast::<u8>()));
                assert!(
                    chunk.sprs_view::<f32, u16, u64>().is_err(),
                    "wrong pointer type"
                );
            }
            Format::Csc => {
                let m = chunk.sprs_view::<f32, u32, u64>().unwrap();
                assert!(m.is_csc());
                assert_eq!(m.get(0, 1), Some(&1.0));
                assert_eq!(m.get(1, 1), None);
                assert!(
                    chunk.sprs_view::<f32, u16, u64>().is_err(),
                    "wrong index type"
                );
            }
        }
        assert!(chunk.values::<f64>().is_err(), "wrong value size");
    }

    #[test]
    fn borrowed_and_owned_chunks_give_the_same_views() {
        for layout in layouts() {
            let buf = encoded(&layout);
            let borrowed = SparseChunk::decode(buf.as_bytes(), &layout, &SHAPE, 4).unwrap();
            check_views(&borrowed);
            let owned = SparseChunk::decode(buf.clone(), &layout, &SHAPE, 4).unwrap();
            check_views(&owned);
            // the owner moves with its views' storage: the sections are offsets, not pointers
            let moved = Box::new(owned);
            check_views(&moved);
            let cloned = (*moved).clone();
            check_views(&cloned);
            assert_eq!(cloned.into_storage().as_bytes(), buf.as_bytes());
        }
    }

    /// A storage that hands out other bytes on every call after the first.
    struct Shifty {
        a: AlignedBuffer,
        b: AlignedBuffer,
        calls: std::cell::Cell<usize>,
    }

    impl AsRef<[u8]> for Shifty {
        fn as_ref(&self) -> &[u8] {
            let n = self.calls.get();
            self.calls.set(n + 1);
            if n == 0 {
                &self.a
            } else {
                &self.b
            }
        }
    }

    #[test]
    fn a_storage_that_changes_gets_an_error_not_an_unchecked_view() {
        let layout = Layout::csr(IndexType::U16, PointerType::U32);
        let buf = encoded(&layout);
        let shifty = Shifty {
            a: buf.clone(),
            b: buf,
            calls: Default::default(),
        };
        let chunk = SparseChunk::decode(shifty, &layout, &SHAPE, 4).unwrap();
        // equal bytes elsewhere: checked again, then viewed
        assert_eq!(
            chunk.sprs_view::<f32, u16, u32>().unwrap().get(2, 3),
            Some(&4.0)
        );
        // bytes that break the structure: refused
        let mut bad = encoded(&layout);
        let end = chunk.indices.end;
        bad[end - 2..end].copy_from_slice(&9u16.to_le_bytes());
        let shifty = Shifty {
            a: chunk.into_storage().a,
            b: bad,
            calls: Default::default(),
        };
        let chunk = SparseChunk::decode(shifty, &layout, &SHAPE, 4).unwrap();
        assert_eq!(
            chunk.sprs_view::<f32, u16, u32>().unwrap_err(),
            SparseError::StorageChanged
        );
        // the checked accessors still read in bounds of what the storage returns
        assert_eq!(chunk.values::<f32>().unwrap(), &[1.0, 2.0, 3.0, 4.0]);
    }

    #[test]
    fn bad_bytes_are_refused_in_either_storage() {
        let layout = Layout::csr(IndexType::U16, PointerType::U32);
        let mut buf = encoded(&layout);
        let len = buf.len();
        assert!(SparseChunk::decode(&buf[..len - 1], &layout, &SHAPE, 4).is_err());
        assert!(SparseChunk::decode(&buf[1..], &layout, &SHAPE, 4).is_err());
        assert!(SparseChunk::decode(buf.as_bytes(), &layout, &[4, 3], 4).is_err());
        // the last pointer no longer equals nnz
        let pointers = SparseChunk::decode(buf.as_bytes(), &layout, &SHAPE, 4)
            .unwrap()
            .pointers
            .clone();
        buf[pointers.end - 4..pointers.end].copy_from_slice(&3u32.to_le_bytes());
        assert!(matches!(
            SparseChunk::decode(buf, &layout, &SHAPE, 4),
            Err(SparseError::PointerBoundary { position: 3, .. })
        ));
    }
}
