//! Formats, index and pointer types, and the [`Layout`] that bundles them.

use std::fmt;

use crate::error::SparseError;

/// A sparse memory layout of one chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// Coordinate list, any rank >= 1: an `(ndim, nnz)` index block and the values.
    Coo,
    /// Compressed sparse rows (2-d): row pointers, column indices, values.
    Csr,
    /// Compressed sparse columns (2-d): column pointers, row indices, values.
    Csc,
}

impl Format {
    /// The format byte of the chunk header (0, 1, 2).
    pub const fn code(self) -> u8 {
        match self {
            Format::Coo => 0,
            Format::Csr => 1,
            Format::Csc => 2,
        }
    }

    /// The format for a header format byte.
    pub const fn from_code(code: u8) -> Option<Self> {
        match code {
            0 => Some(Format::Coo),
            1 => Some(Format::Csr),
            2 => Some(Format::Csc),
            _ => None,
        }
    }

    /// The name used in the codec configuration: `"coo"`, `"csr"` or `"csc"`.
    pub const fn name(self) -> &'static str {
        match self {
            Format::Coo => "coo",
            Format::Csr => "csr",
            Format::Csc => "csc",
        }
    }

    /// The format for a configuration name (exact, lower case).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "coo" => Some(Format::Coo),
            "csr" => Some(Format::Csr),
            "csc" => Some(Format::Csc),
            _ => None,
        }
    }

    /// Number of sections of an encoded chunk: 2 for COO, 3 for CSR and CSC.
    pub const fn n_sections(self) -> usize {
        match self {
            Format::Coo => 2,
            Format::Csr | Format::Csc => 3,
        }
    }

    /// Whether the format is compressed (CSR or CSC, with a pointer section).
    pub const fn is_compressed(self) -> bool {
        matches!(self, Format::Csr | Format::Csc)
    }

    /// Whether the format can hold a chunk of rank `ndim`.
    pub const fn supports_rank(self, ndim: usize) -> bool {
        match self {
            Format::Coo => ndim >= 1,
            Format::Csr | Format::Csc => ndim == 2,
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The type of COO coordinates and CSR/CSC minor indices (`index_data_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IndexType {
    /// `uint16`
    U16,
    /// `uint32`
    U32,
    /// `uint64`
    U64,
}

impl IndexType {
    /// All index types, narrowest first.
    pub const ALL: [IndexType; 3] = [IndexType::U16, IndexType::U32, IndexType::U64];

    /// Width in bytes (2, 4, 8).
    pub const fn width(self) -> usize {
        match self {
            IndexType::U16 => 2,
            IndexType::U32 => 4,
            IndexType::U64 => 8,
        }
    }

    /// The index type of a width in bytes.
    pub const fn from_width(width: usize) -> Option<Self> {
        match width {
            2 => Some(IndexType::U16),
            4 => Some(IndexType::U32),
            8 => Some(IndexType::U64),
            _ => None,
        }
    }

    /// The largest value the type holds.
    pub const fn max_value(self) -> u64 {
        match self {
            IndexType::U16 => u16::MAX as u64,
            IndexType::U32 => u32::MAX as u64,
            IndexType::U64 => u64::MAX,
        }
    }

    /// The Zarr data type name: `"uint16"`, `"uint32"` or `"uint64"`.
    pub const fn name(self) -> &'static str {
        match self {
            IndexType::U16 => "uint16",
            IndexType::U32 => "uint32",
            IndexType::U64 => "uint64",
        }
    }

    /// The index type of a Zarr data type name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }
}

impl fmt::Display for IndexType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The type of CSR/CSC pointers (`pointer_data_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PointerType {
    /// `uint32`
    U32,
    /// `uint64`
    U64,
}

impl PointerType {
    /// All pointer types, narrowest first.
    pub const ALL: [PointerType; 2] = [PointerType::U32, PointerType::U64];

    /// Width in bytes (4, 8).
    pub const fn width(self) -> usize {
        match self {
            PointerType::U32 => 4,
            PointerType::U64 => 8,
        }
    }

    /// The pointer type of a width in bytes.
    pub const fn from_width(width: usize) -> Option<Self> {
        match width {
            4 => Some(PointerType::U32),
            8 => Some(PointerType::U64),
            _ => None,
        }
    }

    /// The largest value the type holds.
    pub const fn max_value(self) -> u64 {
        match self {
            PointerType::U32 => u32::MAX as u64,
            PointerType::U64 => u64::MAX,
        }
    }

    /// The Zarr data type name: `"uint32"` or `"uint64"`.
    pub const fn name(self) -> &'static str {
        match self {
            PointerType::U32 => "uint32",
            PointerType::U64 => "uint64",
        }
    }

    /// The pointer type of a Zarr data type name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }
}

impl fmt::Display for PointerType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for u16 {}
    impl Sealed for u32 {}
    impl Sealed for u64 {}
}

/// A Rust type usable as a sparse index: `u16`, `u32` or `u64`.
pub trait SparseIndex:
    sprs::SpIndex + bytemuck::Pod + fmt::Debug + Send + Sync + sealed::Sealed
{
    /// The matching [`IndexType`].
    const TYPE: IndexType;
    /// Widen to `u64`.
    fn as_u64(self) -> u64;
}

/// A Rust type usable as a CSR/CSC pointer: `u32` or `u64`.
pub trait SparsePointer:
    sprs::SpIndex + bytemuck::Pod + fmt::Debug + Send + Sync + sealed::Sealed
{
    /// The matching [`PointerType`].
    const TYPE: PointerType;
    /// Widen to `u64`.
    fn as_u64(self) -> u64;
}

impl SparseIndex for u16 {
    const TYPE: IndexType = IndexType::U16;
    fn as_u64(self) -> u64 {
        u64::from(self)
    }
}

impl SparseIndex for u32 {
    const TYPE: IndexType = IndexType::U32;
    fn as_u64(self) -> u64 {
        u64::from(self)
    }
}

impl SparseIndex for u64 {
    const TYPE: IndexType = IndexType::U64;
    fn as_u64(self) -> u64 {
        self
    }
}

impl SparsePointer for u32 {
    const TYPE: PointerType = PointerType::U32;
    fn as_u64(self) -> u64 {
        u64::from(self)
    }
}

impl SparsePointer for u64 {
    const TYPE: PointerType = PointerType::U64;
    fn as_u64(self) -> u64 {
        self
    }
}

/// A resolved `sparse_layout` configuration: format, index type and (CSR/CSC only) pointer
/// type.
///
/// A `Layout` is always self-consistent: COO has no pointer type, CSR and CSC have one.
/// Whether it suits a chunk shape is checked by [`Layout::check_shape`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Layout {
    format: Format,
    index: IndexType,
    pointer: Option<PointerType>,
}

impl Layout {
    /// A COO layout.
    pub const fn coo(index: IndexType) -> Self {
        Layout {
            format: Format::Coo,
            index,
            pointer: None,
        }
    }

    /// A CSR layout.
    pub const fn csr(index: IndexType, pointer: PointerType) -> Self {
        Layout {
            format: Format::Csr,
            index,
            pointer: Some(pointer),
        }
    }

    /// A CSC layout.
    pub const fn csc(index: IndexType, pointer: PointerType) -> Self {
        Layout {
            format: Format::Csc,
            index,
            pointer: Some(pointer),
        }
    }

    /// A layout from its parts; the pointer type must be given exactly for CSR and CSC.
    pub fn new(
        format: Format,
        index: IndexType,
        pointer: Option<PointerType>,
    ) -> Result<Self, SparseError> {
        match (format, pointer) {
            (Format::Coo, None) => Ok(Self::coo(index)),
            (Format::Coo, Some(_)) => Err(SparseError::UnexpectedPointerType),
            (Format::Csr | Format::Csc, None) => Err(SparseError::MissingPointerType { format }),
            (Format::Csr | Format::Csc, Some(p)) => Ok(Layout {
                format,
                index,
                pointer: Some(p),
            }),
        }
    }

    /// The narrowest layout of `format` that suits `shape` (what a writer that chooses types
    /// automatically records).
    pub fn smallest(format: Format, shape: &[u64]) -> Result<Self, SparseError> {
        let mut last_err = None;
        for index in IndexType::ALL {
            let pointers: &[Option<PointerType>] = if format.is_compressed() {
                &[Some(PointerType::U32), Some(PointerType::U64)]
            } else {
                &[None]
            };
            for &pointer in pointers {
                let layout = Layout::new(format, index, pointer)?;
                match layout.check_shape(shape) {
                    Ok(_) => return Ok(layout),
                    Err(
                        e @ (SparseError::IndexTypeTooSmall { .. }
                        | SparseError::PointerTypeTooSmall { .. }),
                    ) => last_err = Some(e),
                    Err(e) => return Err(e),
                }
            }
        }
        Err(last_err.unwrap_or(SparseError::SizeOverflow {
            what: "chunk element count",
        }))
    }

    /// The format.
    pub const fn format(&self) -> Format {
        self.format
    }

    /// The index type.
    pub const fn index_type(&self) -> IndexType {
        self.index
    }

    /// The pointer type (`None` for COO).
    pub const fn pointer_type(&self) -> Option<PointerType> {
        self.pointer
    }

    /// Index width in bytes.
    pub const fn index_width(&self) -> usize {
        self.index.width()
    }

    /// Pointer width in bytes, 0 for COO (as in the chunk header).
    pub const fn pointer_width(&self) -> usize {
        match self.pointer {
            Some(p) => p.width(),
            None => 0,
        }
    }

    /// Number of sections of an encoded chunk.
    pub const fn n_sections(&self) -> usize {
        self.format.n_sections()
    }

    /// Checks that the layout suits a chunk shape and returns the chunk's element count.
    ///
    /// The rank must suit the format, the index type must hold `shape[d] - 1` on every axis it
    /// indexes (all axes for COO, columns for CSR, rows for CSC), the pointer type must hold
    /// the element count, and the element count must fit `u64` and `usize`.
    pub fn check_shape(&self, shape: &[u64]) -> Result<u64, SparseError> {
        let ndim = shape.len();
        if !self.format.supports_rank(ndim) || ndim > usize::from(u16::MAX) {
            return Err(SparseError::UnsupportedRank {
                format: self.format,
                ndim,
            });
        }
        let elements = element_count(shape)?;
        for (axis, &extent) in shape.iter().enumerate() {
            let indexed = match self.format {
                Format::Coo => true,
                Format::Csr => axis == 1,
                Format::Csc => axis == 0,
            };
            if indexed && extent > 0 && extent - 1 > self.index.max_value() {
                return Err(SparseError::IndexTypeTooSmall {
                    index_type: self.index,
                    axis,
                    max: extent - 1,
                });
            }
        }
        if let Some(p) = self.pointer {
            if elements > p.max_value() {
                return Err(SparseError::PointerTypeTooSmall {
                    pointer_type: p,
                    elements,
                });
            }
        }
        Ok(elements)
    }

    /// The spec's upper bound of an encoded chunk's length for a chunk of `shape` whose
    /// values are `value_size` bytes: see [`encoded_size_bound`](crate::encoded_size_bound).
    pub fn encoded_size_bound(&self, shape: &[u64], value_size: usize) -> Result<u64, SparseError> {
        crate::header::encoded_size_bound(
            self.format,
            shape,
            value_size,
            self.index_width(),
            self.pointer_width(),
        )
    }
}

/// The number of elements of a chunk shape, checked against `u64` and `usize` overflow.
pub fn element_count(shape: &[u64]) -> Result<u64, SparseError> {
    let n = shape
        .iter()
        .try_fold(1u64, |acc, &d| acc.checked_mul(d))
        .ok_or(SparseError::SizeOverflow {
            what: "chunk element count",
        })?;
    usize::try_from(n).map_err(|_| SparseError::SizeOverflow {
        what: "chunk element count",
    })?;
    Ok(n)
}
