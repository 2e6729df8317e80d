//! A small, strict reader and writer of NumPy `.npy` files.
//!
//! Reads versions 1.0, 2.0 and 3.0, every data type Zarr v3 has a core type for (bool,
//! signed and unsigned integers, float16/32/64, complex64/128) plus raw bytes (`|V<n>`, Zarr's
//! `r<8n>`) and NumPy's datetimes and timedeltas (`<M8[s]`, `<m8[10ms]`: Zarr's
//! `numpy.datetime64` and `numpy.timedelta64`), either byte order, C or Fortran order. The
//! `descr` is parsed and written by [`NumpyDtype`], as Zarr v2's `dtype` is. NumPy's
//! fixed-width strings (`<U<n>`, `|S<n>`), which `zarr export` writes and `zarr import` reads
//! for Zarr's `string` and `variable_length_bytes` arrays, are [`NpyStrings`]. Writes little-endian, C order, version 1.0
//! (2.0 when the header needs it). Every header field is checked and a malformed file is an
//! error, never a panic; nothing is allocated beyond the file's own size.
//!
//! ```
//! use zarr_cli::npy::{self, Npy};
//! use zarr_array::DataType;
//!
//! let data: Vec<u8> = [1i32, 2, 3, 4, 5, 6].iter().flat_map(|v| v.to_ne_bytes()).collect();
//! let bytes = npy::to_bytes(DataType::Int32, &[2, 3], &data);
//! let back = Npy::parse(&bytes).unwrap();
//! assert_eq!(back.data_type, DataType::Int32);
//! assert_eq!(back.shape, vec![2, 3]);
//! assert_eq!(back.data, data);
//! ```

use std::io::Write;

use zarr_array::zarr_meta::numpy::{self, NumpyDtype};
use zarr_array::DataType;

use crate::error::CliError;

const MAGIC: &[u8] = b"\x93NUMPY";

/// What is wrong with a `.npy` file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NpyError {
    /// The file does not start with the `.npy` magic bytes.
    #[error("not a .npy file (it does not start with \\x93NUMPY)")]
    NotNpy,
    /// A format version this reader does not know.
    #[error("unsupported .npy format version {major}.{minor} (1.0, 2.0 and 3.0 are supported)")]
    Version {
        /// Major version.
        major: u8,
        /// Minor version.
        minor: u8,
    },
    /// The file ends inside the header.
    #[error("truncated .npy header")]
    TruncatedHeader,
    /// The header is not the dictionary NumPy writes.
    #[error("malformed .npy header: {reason}")]
    Header {
        /// What is wrong.
        reason: String,
    },
    /// A data type without a Zarr equivalent (structured, object, strings...).
    #[error("unsupported .npy data type {descr:?} (supported: bool, int8-64, uint8-64, float16/32/64, complex64/128, raw bytes V<n>, datetime64 M8[unit], timedelta64 m8[unit], strings U<n> (either byte order) and byte strings S<n>)")]
    DataType {
        /// The `descr` field.
        descr: String,
    },
    /// More or fewer data bytes than the shape needs.
    #[error("the .npy data holds {got} bytes but shape {shape:?} of {data_type} needs {expected}")]
    Length {
        /// The shape.
        shape: Vec<u64>,
        /// The data type.
        data_type: DataType,
        /// Bytes needed.
        expected: u128,
        /// Bytes present.
        got: usize,
    },
    /// A `bool` element that is neither 0 nor 1.
    #[error("bool element {index} holds the byte {value} (bools must be 0 or 1)")]
    InvalidBool {
        /// Element index (C order of the file).
        index: usize,
        /// The byte.
        value: u8,
    },
    /// An element that ends in NUL, which NumPy's fixed-width strings cannot hold (they
    /// drop trailing NULs): written as `U` / `S`, it would read back shorter.
    #[error(
        "element {index} ends in NUL, which NumPy's fixed-width strings (U<n>, S<n>) drop: \
         it would read back without it (select a region without it, or read the array \
         with zarr_rs, whose object arrays keep it)"
    )]
    TrailingNul {
        /// Element index (C order).
        index: usize,
    },
    /// A `U` element that is not UTF-8 text.
    #[error("element {index} is not UTF-8 text, which a U<n> string must be")]
    NotUtf8 {
        /// Element index (C order).
        index: usize,
    },
    /// A `U` element with a code unit that is no Unicode scalar value.
    #[error("element {index} of the <U strings: {source}")]
    InvalidCodeUnit {
        /// Element index (C order of the file).
        index: usize,
        /// The code unit.
        source: zarr_array::zarr_meta::data_type::fixed_width::InvalidCodeUnit,
    },
}

/// Checks what only the data can show: a `bool` element other than 0 or 1, a `U` element
/// that is not UTF-32; `first` is the index of the first element of `data` in the file.
fn check_elements(data_type: DataType, data: &[u8], first: usize) -> Result<(), NpyError> {
    use zarr_array::zarr_meta::data_type::fixed_width::utf32_decode;
    match data_type {
        DataType::Bool => match data.iter().position(|&b| b > 1) {
            Some(index) => Err(NpyError::InvalidBool {
                index: first.saturating_add(index),
                value: data[index],
            }),
            None => Ok(()),
        },
        DataType::FixedLengthUtf32(n) => {
            data.chunks_exact(n.get())
                .enumerate()
                .try_for_each(|(i, e)| {
                    utf32_decode(e)
                        .map(drop)
                        .map_err(|source| NpyError::InvalidCodeUnit {
                            index: first.saturating_add(i),
                            source,
                        })
                })
        }
        _ => Ok(()),
    }
}

/// Whether [`check_elements`] has anything to check for elements of `data_type`.
fn has_element_checks(data_type: DataType) -> bool {
    matches!(data_type, DataType::Bool | DataType::FixedLengthUtf32(_))
}

/// A parsed `.npy` file: data in C order and native byte order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Npy {
    /// The data type.
    pub data_type: DataType,
    /// The shape (empty for a 0-d array).
    pub shape: Vec<u64>,
    /// The elements, C order, native byte order.
    pub data: Vec<u8>,
}

impl Npy {
    /// Parses a whole `.npy` file.
    ///
    /// # Errors
    /// Any malformation of the file (see [`NpyError`]).
    pub fn parse(bytes: &[u8]) -> Result<Npy, NpyError> {
        let (header, start) = split_header(bytes)?;
        let fields = parse_header(header)?;
        let (data_type, order) = parse_descr(&fields.descr)?;
        let body = &bytes[start..];
        let count = fields
            .shape
            .iter()
            .try_fold(1u128, |acc, &n| acc.checked_mul(u128::from(n)));
        let expected = count.and_then(|c| c.checked_mul(data_type.size() as u128));
        if expected != Some(body.len() as u128) {
            return Err(NpyError::Length {
                shape: fields.shape,
                data_type,
                expected: expected.unwrap_or(u128::MAX),
                got: body.len(),
            });
        }
        let mut data = body.to_vec();
        if order == ByteOrder::Swapped {
            if let Some(w) = data_type.endian_component_size() {
                swap_bytes(&mut data, w);
            }
        }
        check_elements(data_type, &data, 0)?;
        if fields.fortran_order && fields.shape.len() > 1 {
            data = fortran_to_c(&data, &fields.shape, data_type.size());
        }
        Ok(Npy {
            data_type,
            shape: fields.shape,
            data,
        })
    }

    /// The file's bytes: little-endian, C order.
    pub fn to_bytes(&self) -> Vec<u8> {
        to_bytes(self.data_type, &self.shape, &self.data)
    }
}

/// The largest header this reader accepts (NumPy writes a few hundred bytes; the format
/// allows up to 4 GiB, which would be read before anything is checked).
const MAX_HEADER: usize = 1 << 20;

/// An open `.npy` file read piece by piece: the header parsed and the file's length checked
/// against it, the data read only when asked for, so a file of any size is imported with
/// bounded memory.
#[derive(Debug)]
pub struct NpyFile {
    /// The data type.
    pub data_type: DataType,
    /// The shape (empty for a 0-d array).
    pub shape: Vec<u64>,
    /// Elements stored in Fortran order (the last axis slowest).
    pub fortran_order: bool,
    swapped: bool,
    data_offset: u64,
    file: std::fs::File,
    path: String,
}

impl NpyFile {
    /// Opens the file at `path` and reads its header.
    ///
    /// # Errors
    /// I/O errors, a malformed or oversized header, a file whose length is not the header's
    /// shape and data type.
    pub fn open(path: &std::path::Path) -> Result<NpyFile, CliError> {
        use std::io::Read;
        let shown = path.display().to_string();
        let io = |e: std::io::Error| CliError::io(&shown, e);
        let bad = |source: NpyError| CliError::Npy {
            path: shown.clone(),
            source,
        };
        let mut file = std::fs::File::open(path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                CliError::input(format!("{shown}: no such file"))
            } else {
                io(e)
            }
        })?;
        let mut head = Vec::new();
        (&mut file).take(12).read_to_end(&mut head).map_err(io)?;
        if head.len() < MAGIC.len() || &head[..MAGIC.len()] != MAGIC {
            return Err(bad(NpyError::NotNpy));
        }
        let (hlen, prefix) = match head.get(6..8) {
            Some([1, 0]) => (
                head.get(8..10)
                    .map(|b| usize::from(u16::from_le_bytes([b[0], b[1]]))),
                10,
            ),
            Some([2 | 3, 0]) => (
                head.get(8..12).and_then(|b| {
                    usize::try_from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])).ok()
                }),
                12,
            ),
            Some(&[major, minor]) => return Err(bad(NpyError::Version { major, minor })),
            _ => (None, 0),
        };
        let hlen = hlen.ok_or_else(|| bad(NpyError::TruncatedHeader))?;
        if hlen > MAX_HEADER {
            return Err(bad(header_err(format!(
                "the header claims {hlen} bytes (this reader takes up to {MAX_HEADER})"
            ))));
        }
        let rest = (prefix + hlen).saturating_sub(head.len());
        (&mut file)
            .take(rest as u64)
            .read_to_end(&mut head)
            .map_err(io)?;
        let (text, start) = split_header(&head).map_err(bad)?;
        let fields = parse_header(text).map_err(bad)?;
        let (data_type, order) = parse_descr(&fields.descr).map_err(bad)?;
        let body = file
            .metadata()
            .map_err(io)?
            .len()
            .saturating_sub(start as u64);
        let expected = fields
            .shape
            .iter()
            .try_fold(data_type.size() as u128, |acc, &n| {
                acc.checked_mul(u128::from(n))
            });
        if expected != Some(u128::from(body)) {
            return Err(bad(NpyError::Length {
                shape: fields.shape,
                data_type,
                expected: expected.unwrap_or(u128::MAX),
                got: usize::try_from(body).unwrap_or(usize::MAX),
            }));
        }
        Ok(NpyFile {
            data_type,
            fortran_order: fields.fortran_order && fields.shape.len() > 1,
            shape: fields.shape,
            swapped: order == ByteOrder::Swapped,
            data_offset: start as u64,
            file,
            path: shown,
        })
    }

    /// The axis the file stores slowest: 0 in C order, the last in Fortran order.
    pub fn slow_axis(&self) -> usize {
        if self.fortran_order {
            self.shape.len() - 1
        } else {
            0
        }
    }

    /// Bytes of one position along [`NpyFile::slow_axis`] (every other axis whole).
    pub fn slab_row_bytes(&self) -> u64 {
        let slow = self.slow_axis();
        self.shape
            .iter()
            .enumerate()
            .filter(|&(d, _)| d != slow)
            .fold(self.data_type.size() as u64, |acc, (_, &n)| acc * n)
    }

    /// Reads the whole file once, `budget` bytes at a time, checking what only the data can
    /// show (a `bool` element other than 0 or 1, a `U` element that is not UTF-32), so that
    /// nothing is written from a file that turns out bad halfway. A no-op for every other
    /// data type.
    ///
    /// # Errors
    /// As [`NpyFile::read_slab`].
    pub fn check_data(&mut self, budget: u64) -> Result<(), CliError> {
        if !has_element_checks(self.data_type) || self.shape.is_empty() {
            return Ok(());
        }
        let len = self.shape[self.slow_axis()];
        let step = (budget / self.slab_row_bytes().max(1)).max(1);
        let mut at = 0;
        while at < len {
            let end = len.min(at + step);
            self.read_slab(at, end)?;
            at = end;
        }
        Ok(())
    }

    /// The elements of positions `[a, b)` along [`NpyFile::slow_axis`], every other axis
    /// whole: C order, native byte order. `a <= b <=` that axis' length; the caller bounds
    /// the size.
    ///
    /// # Errors
    /// I/O errors, an allocation that fails, a `bool` element that is neither 0 nor 1, a `U`
    /// element that is not UTF-32.
    pub fn read_slab(&mut self, a: u64, b: u64) -> Result<Vec<u8>, CliError> {
        use std::io::{Read, Seek, SeekFrom};
        let per = self.slab_row_bytes();
        let needed = (b - a) * per;
        let io = |e: std::io::Error| CliError::io(&self.path, e);
        self.file
            .seek(SeekFrom::Start(self.data_offset + a * per))
            .map_err(io)?;
        let mut data = crate::error::try_alloc(needed, "a slab of the .npy file", false)?;
        data.clear();
        (&mut self.file)
            .take(needed)
            .read_to_end(&mut data)
            .map_err(io)?;
        if data.len() as u64 != needed {
            let eof = std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "the file ended early (it was changed while being read)",
            );
            return Err(CliError::io(&self.path, eof));
        }
        if self.swapped {
            if let Some(w) = self.data_type.endian_component_size() {
                swap_bytes(&mut data, w);
            }
        }
        let first = usize::try_from(a * (per / self.data_type.size() as u64)).unwrap_or(usize::MAX);
        check_elements(self.data_type, &data, first).map_err(|source| CliError::Npy {
            path: self.path.clone(),
            source,
        })?;
        if self.fortran_order {
            let mut shape = self.shape.clone();
            let slow = self.slow_axis();
            shape[slow] = b - a;
            data = fortran_to_c(&data, &shape, self.data_type.size());
        }
        Ok(data)
    }
}

/// The `.npy` bytes of data in C order and native byte order.
pub fn to_bytes(data_type: DataType, shape: &[u64], data: &[u8]) -> Vec<u8> {
    let mut out = header(data_type, shape);
    let start = out.len();
    out.extend_from_slice(data);
    native_to_le(data_type, &mut out[start..]);
    out
}

/// The `descr` NumPy writes for a data type, little-endian (`<i4`, `|u1`, `|V3`, `<M8[s]`).
pub fn descr(data_type: DataType) -> String {
    NumpyDtype {
        data_type,
        byte_order: data_type
            .endian_component_size()
            .map(|_| numpy::ByteOrder::Little),
    }
    .to_numpy_str()
}

/// The header (magic, version, length, dictionary, padding) of a little-endian C-order file.
pub fn header(data_type: DataType, shape: &[u64]) -> Vec<u8> {
    header_of(&descr(data_type), shape)
}

/// [`header`] with the `descr` given.
fn header_of(descr: &str, shape: &[u64]) -> Vec<u8> {
    let shape_text = match shape {
        [] => "()".to_string(),
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape_text}, }}");
    // total length (magic + version + length field + dict + padding + '\n') a multiple of 64
    let pad = |prefix: usize| {
        let unpadded = prefix + dict.len() + 1;
        unpadded.div_ceil(64) * 64 - unpadded
    };
    let (version, prefix) = if 10 + dict.len() + 1 + pad(10) <= 65535 + 10 {
        (1u8, 10)
    } else {
        (2u8, 12)
    };
    let padding = pad(prefix);
    let hlen = dict.len() + padding + 1;
    let mut out = Vec::with_capacity(prefix + hlen);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[version, 0]);
    if version == 1 {
        // checked above: fits in u16
        out.extend_from_slice(&(hlen as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(hlen as u32).to_le_bytes());
    }
    out.extend_from_slice(dict.as_bytes());
    out.extend(std::iter::repeat_n(b' ', padding));
    out.push(b'\n');
    out
}

/// A `.npy` file of NumPy's fixed-width strings: `<U<n>` (UTF-32, for Zarr `string`
/// arrays) or `|S<n>` (bytes, for `variable_length_bytes` arrays). NumPy drops the trailing
/// NULs of each element, and so does [`NpyStrings::parse`]; [`NpyStrings::to_bytes`] refuses
/// an element that ends in NUL rather than write one that would read back shorter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NpyStrings {
    /// [`DataType::String`] (`U`) or [`DataType::Bytes`] (`S`).
    pub data_type: DataType,
    /// The shape (empty for a 0-d array).
    pub shape: Vec<u64>,
    /// The elements in C order: UTF-8 for `U`, as stored for `S`.
    pub items: Vec<Vec<u8>>,
}

impl NpyStrings {
    /// Parses a whole `.npy` file of `<U<n>` or `|S<n>` elements.
    ///
    /// # Errors
    /// Another data type ([`NpyError::DataType`]), a malformed file, a `U` element that is
    /// not a Unicode code point.
    pub fn parse(bytes: &[u8]) -> Result<NpyStrings, NpyError> {
        let (header, start) = split_header(bytes)?;
        let fields = parse_header(header)?;
        let bad = || NpyError::DataType {
            descr: fields.descr.clone(),
        };
        // NumPy writes `<U` on little-endian hosts, `>U` for big-endian strings
        let (data_type, unit, big_endian) = match fields.descr.get(..2) {
            Some("<U") => (DataType::String, 4usize, false),
            Some(">U") => (DataType::String, 4, true),
            Some("|S") => (DataType::Bytes, 1, false),
            _ => return Err(bad()),
        };
        let width: usize = fields.descr[2..].parse().map_err(|_| bad())?;
        let size = width.checked_mul(unit).filter(|&n| n > 0).ok_or_else(bad)?;
        let body = &bytes[start..];
        let count = fields
            .shape
            .iter()
            .try_fold(1u128, |acc, &n| acc.checked_mul(u128::from(n)));
        let expected = count.and_then(|c| c.checked_mul(size as u128));
        if expected != Some(body.len() as u128) {
            return Err(NpyError::Length {
                shape: fields.shape,
                data_type,
                expected: expected.unwrap_or(u128::MAX),
                got: body.len(),
            });
        }
        let mut items = Vec::with_capacity(body.len() / size);
        for item in body.chunks_exact(size) {
            let mut out = Vec::new();
            if unit == 4 {
                for c in item.chunks_exact(4) {
                    let unit = [c[0], c[1], c[2], c[3]];
                    let code = if big_endian {
                        u32::from_be_bytes(unit)
                    } else {
                        u32::from_le_bytes(unit)
                    };
                    let ch = char::from_u32(code).ok_or_else(|| NpyError::Header {
                        reason: format!(
                            "element {} holds {code:#x}, not a code point",
                            items.len()
                        ),
                    })?;
                    out.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes());
                }
            } else {
                out.extend_from_slice(item);
            }
            while out.last() == Some(&0) {
                out.pop();
            }
            items.push(out);
        }
        if fields.fortran_order && fields.shape.len() > 1 {
            let index: Vec<u8> = (0..items.len() as u64).flat_map(u64::to_ne_bytes).collect();
            let order = fortran_to_c(&index, &fields.shape, 8);
            items = order
                .chunks_exact(8)
                .map(|c| {
                    let i = u64::from_ne_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
                    std::mem::take(&mut items[i as usize])
                })
                .collect();
        }
        Ok(NpyStrings {
            data_type,
            shape: fields.shape,
            items,
        })
    }

    /// The file NumPy's `np.save` writes for these elements: `<U<n>` or `|S<n>` with `n` the
    /// longest element (in characters for `U`), at least 1.
    ///
    /// # Errors
    /// [`NpyError::TrailingNul`] for an element that ends in NUL (NumPy would read it back
    /// shorter), [`NpyError::NotUtf8`] for a `U` element that is not UTF-8 (the elements of a
    /// `string` array always are).
    pub fn to_bytes(&self) -> Result<Vec<u8>, NpyError> {
        if let Some(index) = self.items.iter().position(|b| b.last() == Some(&0)) {
            return Err(NpyError::TrailingNul { index });
        }
        let strings: Vec<&str> = if self.data_type == DataType::String {
            self.items
                .iter()
                .enumerate()
                .map(|(index, b)| std::str::from_utf8(b).map_err(|_| NpyError::NotUtf8 { index }))
                .collect::<Result<_, _>>()?
        } else {
            Vec::new()
        };
        let (descr, width) = if self.data_type == DataType::String {
            let w = strings
                .iter()
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
                .max(1);
            (format!("<U{w}"), w)
        } else {
            let w = self.items.iter().map(Vec::len).max().unwrap_or(0).max(1);
            (format!("|S{w}"), w)
        };
        let mut out = header_of(&descr, &self.shape);
        if self.data_type == DataType::String {
            for s in &strings {
                let n = s.chars().count();
                for c in s.chars() {
                    out.extend_from_slice(&u32::from(c).to_le_bytes());
                }
                out.extend(std::iter::repeat_n(0u8, 4 * (width - n)));
            }
        } else {
            for b in &self.items {
                out.extend_from_slice(b);
                out.extend(std::iter::repeat_n(0u8, width - b.len()));
            }
        }
        Ok(out)
    }
}

/// Writes native-order data to `w` as little-endian (the `.npy` body), in pieces.
///
/// # Errors
/// The writer's.
pub fn write_le<W: Write>(w: &mut W, data_type: DataType, data: &[u8]) -> std::io::Result<()> {
    if cfg!(target_endian = "little") || data_type.endian_component_size().is_none() {
        return w.write_all(data);
    }
    let mut buf = Vec::with_capacity(1 << 16);
    for piece in data.chunks(1 << 16) {
        buf.clear();
        buf.extend_from_slice(piece);
        native_to_le(data_type, &mut buf);
        w.write_all(&buf)?;
    }
    Ok(())
}

/// Converts native-order elements to little-endian in place (a no-op on little-endian hosts).
pub fn native_to_le(data_type: DataType, data: &mut [u8]) {
    if cfg!(target_endian = "big") {
        if let Some(w) = data_type.endian_component_size() {
            swap_bytes(data, w);
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ByteOrder {
    Native,
    Swapped,
}

fn swap_bytes(data: &mut [u8], width: usize) {
    for c in data.chunks_exact_mut(width) {
        c.reverse();
    }
}

/// The header text and the offset of the data.
fn split_header(bytes: &[u8]) -> Result<(&str, usize), NpyError> {
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        return Err(NpyError::NotNpy);
    }
    if bytes.len() < 8 {
        return Err(NpyError::TruncatedHeader);
    }
    let (major, minor) = (bytes[6], bytes[7]);
    let (hlen, start): (usize, usize) = match (major, minor) {
        (1, 0) => {
            let b = bytes.get(8..10).ok_or(NpyError::TruncatedHeader)?;
            (usize::from(u16::from_le_bytes([b[0], b[1]])), 10)
        }
        (2 | 3, 0) => {
            let b = bytes.get(8..12).ok_or(NpyError::TruncatedHeader)?;
            let n = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            (
                usize::try_from(n).map_err(|_| NpyError::TruncatedHeader)?,
                12,
            )
        }
        _ => return Err(NpyError::Version { major, minor }),
    };
    let end = start
        .checked_add(hlen)
        .filter(|&e| e <= bytes.len())
        .ok_or(NpyError::TruncatedHeader)?;
    let text = std::str::from_utf8(&bytes[start..end]).map_err(|_| NpyError::Header {
        reason: "the header is not text".into(),
    })?;
    if major == 1 && !text.is_ascii() {
        return Err(NpyError::Header {
            reason: "a version 1.0 header must be ASCII".into(),
        });
    }
    Ok((text, end))
}

struct HeaderFields {
    descr: String,
    fortran_order: bool,
    shape: Vec<u64>,
}

/// A Python literal as it appears in a `.npy` header.
#[derive(Debug, Clone, PartialEq)]
enum PyValue {
    Str(String),
    Bool(bool),
    Int(u64),
    Tuple(Vec<PyValue>),
    List(Vec<PyValue>),
    None,
}

fn header_err(reason: impl Into<String>) -> NpyError {
    NpyError::Header {
        reason: reason.into(),
    }
}

fn parse_header(text: &str) -> Result<HeaderFields, NpyError> {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
        depth: 0,
    };
    p.skip_ws();
    let dict = p.dict()?;
    p.skip_ws();
    if p.i != p.s.len() {
        return Err(header_err("text after the dictionary"));
    }
    let mut descr = None;
    let mut fortran = None;
    let mut shape = None;
    for (key, value) in dict {
        match key.as_str() {
            "descr" => match value {
                PyValue::Str(s) => descr = Some(s),
                _ => {
                    return Err(NpyError::DataType {
                        descr: "a structured data type".into(),
                    })
                }
            },
            "fortran_order" => match value {
                PyValue::Bool(b) => fortran = Some(b),
                _ => return Err(header_err("'fortran_order' must be True or False")),
            },
            "shape" => match value {
                PyValue::Tuple(items) => {
                    let dims = items
                        .into_iter()
                        .map(|v| match v {
                            PyValue::Int(n) => Ok(n),
                            _ => Err(header_err("'shape' must be a tuple of integers")),
                        })
                        .collect::<Result<Vec<u64>, _>>()?;
                    shape = Some(dims);
                }
                _ => return Err(header_err("'shape' must be a tuple of integers")),
            },
            other => return Err(header_err(format!("unexpected key {other:?}"))),
        }
    }
    Ok(HeaderFields {
        descr: descr.ok_or_else(|| header_err("no 'descr' key"))?,
        fortran_order: fortran.ok_or_else(|| header_err("no 'fortran_order' key"))?,
        shape: shape.ok_or_else(|| header_err("no 'shape' key"))?,
    })
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    depth: usize,
}

impl Parser<'_> {
    fn skip_ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn expect(&mut self, c: u8) -> Result<(), NpyError> {
        self.skip_ws();
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            Err(header_err(format!("expected '{}'", c as char)))
        }
    }

    fn dict(&mut self) -> Result<Vec<(String, PyValue)>, NpyError> {
        self.expect(b'{')?;
        let mut out: Vec<(String, PyValue)> = Vec::new();
        loop {
            self.skip_ws();
            if self.peek() == Some(b'}') {
                self.i += 1;
                return Ok(out);
            }
            let key = match self.value()? {
                PyValue::Str(s) => s,
                _ => return Err(header_err("dictionary keys must be strings")),
            };
            self.expect(b':')?;
            let value = self.value()?;
            if out.iter().any(|(k, _)| *k == key) {
                return Err(header_err(format!("duplicate key {key:?}")));
            }
            out.push((key, value));
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b'}') => {}
                _ => return Err(header_err("expected ',' or '}'")),
            }
        }
    }

    fn value(&mut self) -> Result<PyValue, NpyError> {
        self.skip_ws();
        match self.peek() {
            Some(q @ (b'\'' | b'"')) => self.string(q),
            Some(b'(') => self.sequence(b')').map(PyValue::Tuple),
            Some(b'[') => self.sequence(b']').map(PyValue::List),
            Some(c) if c.is_ascii_digit() => self.int(),
            Some(_) => {
                for (word, value) in [
                    ("True", PyValue::Bool(true)),
                    ("False", PyValue::Bool(false)),
                    ("None", PyValue::None),
                ] {
                    if self.s[self.i..].starts_with(word.as_bytes()) {
                        self.i += word.len();
                        return Ok(value);
                    }
                }
                Err(header_err("unexpected token"))
            }
            None => Err(header_err("unexpected end of header")),
        }
    }

    fn string(&mut self, quote: u8) -> Result<PyValue, NpyError> {
        self.i += 1;
        let start = self.i;
        while let Some(c) = self.peek() {
            if c == b'\\' {
                return Err(header_err("escapes in strings are not supported"));
            }
            if c == quote {
                let s = std::str::from_utf8(&self.s[start..self.i])
                    .map_err(|_| header_err("a string is not UTF-8"))?
                    .to_string();
                self.i += 1;
                return Ok(PyValue::Str(s));
            }
            self.i += 1;
        }
        Err(header_err("unterminated string"))
    }

    fn int(&mut self) -> Result<PyValue, NpyError> {
        let start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        let text = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("");
        let n = text
            .parse::<u64>()
            .map_err(|_| header_err(format!("integer {text} out of range")))?;
        // Python 2 long suffix
        if self.peek() == Some(b'L') {
            self.i += 1;
        }
        Ok(PyValue::Int(n))
    }

    fn sequence(&mut self, close: u8) -> Result<Vec<PyValue>, NpyError> {
        self.depth += 1;
        if self.depth > 32 {
            return Err(header_err("nesting too deep"));
        }
        self.i += 1;
        let mut out = Vec::new();
        loop {
            self.skip_ws();
            if self.peek() == Some(close) {
                self.i += 1;
                self.depth -= 1;
                return Ok(out);
            }
            out.push(self.value()?);
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(c) if c == close => {}
                _ => return Err(header_err("expected ',' or a closing bracket")),
            }
        }
    }
}

fn parse_descr(descr: &str) -> Result<(DataType, ByteOrder), NpyError> {
    let bad = || NpyError::DataType {
        descr: descr.to_string(),
    };
    let parsed = NumpyDtype::parse(descr).map_err(|_| bad())?;
    // '|' (not applicable) is only right for types without a byte order
    if descr.starts_with('|') && parsed.data_type.endian_component_size().is_some() {
        return Err(bad());
    }
    let byte_order = match parsed.byte_order {
        Some(order) if order != numpy::ByteOrder::native() => ByteOrder::Swapped,
        _ => ByteOrder::Native,
    };
    Ok((parsed.data_type, byte_order))
}

/// Reorders Fortran-order elements into C order.
fn fortran_to_c(data: &[u8], shape: &[u64], elem: usize) -> Vec<u8> {
    let rank = shape.len();
    let mut out = vec![0u8; data.len()];
    if data.is_empty() {
        return out;
    }
    // Fortran strides (in elements)
    let mut fstride = vec![1usize; rank];
    for d in 1..rank {
        fstride[d] = fstride[d - 1] * shape[d - 1] as usize;
    }
    let mut pos = vec![0u64; rank];
    let mut f = 0usize;
    for c in out.chunks_exact_mut(elem) {
        c.copy_from_slice(&data[f * elem..(f + 1) * elem]);
        // next C-order position (last axis fastest)
        let mut d = rank;
        while d > 0 {
            d -= 1;
            pos[d] += 1;
            f += fstride[d];
            if pos[d] < shape[d] {
                break;
            }
            f -= fstride[d] * pos[d] as usize;
            pos[d] = 0;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(descr: &str, fortran: bool, shape: &str, body: &[u8]) -> Vec<u8> {
        let dict = format!(
            "{{'descr': '{descr}', 'fortran_order': {}, 'shape': {shape}, }}",
            if fortran { "True" } else { "False" }
        );
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&[1, 0]);
        out.extend_from_slice(&((dict.len() + 1) as u16).to_le_bytes());
        out.extend_from_slice(dict.as_bytes());
        out.push(b'\n');
        out.extend_from_slice(body);
        out
    }

    #[test]
    fn round_trip_every_type() {
        for t in zarr_array::zarr_meta::data_type::CORE_DATA_TYPES {
            let n = 6 * t.size();
            let mut data: Vec<u8> = (0..n).map(|i| (i * 7 % 251) as u8).collect();
            if t == DataType::Bool {
                data.iter_mut().for_each(|b| *b &= 1);
            }
            let bytes = to_bytes(t, &[2, 3], &data);
            assert_eq!(bytes[..header(t, &[2, 3]).len()].len() % 64, 0);
            let back = Npy::parse(&bytes).unwrap();
            assert_eq!(
                (back.data_type, back.shape, back.data),
                (t, vec![2, 3], data)
            );
        }
        let raw = DataType::from_name("r24").unwrap();
        let back = Npy::parse(&to_bytes(raw, &[2], &[1, 2, 3, 4, 5, 6])).unwrap();
        assert_eq!(back.data_type, raw);
    }

    #[test]
    fn fixed_width_strings() {
        let items: Vec<Vec<u8>> = ["a", "", "héllo", "\u{1F600}"]
            .iter()
            .map(|s| s.as_bytes().to_vec())
            .collect();
        let s = NpyStrings {
            data_type: DataType::String,
            shape: vec![2, 2],
            items: items.clone(),
        };
        let bytes = s.to_bytes().unwrap();
        assert!(String::from_utf8_lossy(&bytes[..64]).contains("'descr': '<U5'"));
        assert_eq!(NpyStrings::parse(&bytes).unwrap(), s);
        let b = NpyStrings {
            data_type: DataType::Bytes,
            shape: vec![3],
            items: vec![vec![0, 1], vec![], vec![255]],
        };
        let bytes = b.to_bytes().unwrap();
        assert!(String::from_utf8_lossy(&bytes[..64]).contains("'descr': '|S2'"));
        assert_eq!(NpyStrings::parse(&bytes).unwrap(), b);
        // an element ending in NUL is refused: NumPy would read it back without the NUL
        let nul = NpyStrings {
            data_type: DataType::String,
            shape: vec![2],
            items: vec![b"ok".to_vec(), b"nul\0".to_vec()],
        };
        assert_eq!(nul.to_bytes(), Err(NpyError::TrailingNul { index: 1 }));
        // big-endian UTF-32, as `.astype(">U3")` saves it
        let big = file(">U2", false, "(2,)", b"\0\0\0a\0\0\0\0\0\0\0b\0\0\0c");
        let got = NpyStrings::parse(&big).unwrap();
        assert_eq!(got.items, [b"a".to_vec(), b"bc".to_vec()]);
        // Fortran order, and NumPy's dropping of trailing NULs
        let f = file("|S2", true, "(2, 2)", b"a\0c\0b\0d\0");
        let got = NpyStrings::parse(&f).unwrap();
        assert_eq!(
            got.items,
            [b"a".to_vec(), b"b".to_vec(), b"c".to_vec(), b"d".to_vec()]
        );
        for (bad, want) in [
            (
                file("<i4", false, "(1,)", &[0; 4]),
                "unsupported .npy data type",
            ),
            (
                file("<U0", false, "(1,)", &[]),
                "unsupported .npy data type",
            ),
            (file("<U1", false, "(2,)", &[0; 4]), "needs 8"),
            (
                file("<U1", false, "(1,)", &[0, 0, 0x11, 0]),
                "not a code point",
            ),
        ] {
            let err = zarr_testkit::report(&NpyStrings::parse(&bad).unwrap_err());
            assert!(err.contains(want), "{err}");
        }
    }

    #[test]
    fn datetimes_and_timedeltas() {
        use zarr_array::zarr_meta::data_type::{TimeScale, TimeUnit};
        let data: Vec<u8> = [i64::MIN, 0, 1_600_000_000]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        for (t, text) in [
            (
                DataType::DateTime64(TimeScale::of(TimeUnit::Second)),
                "<M8[s]",
            ),
            (
                DataType::TimeDelta64(TimeScale::try_new(TimeUnit::Millisecond, 10).unwrap()),
                "<m8[10ms]",
            ),
            (
                DataType::DateTime64(TimeScale::of(TimeUnit::Generic)),
                "<M8",
            ),
        ] {
            assert_eq!(descr(t), text);
            let back = Npy::parse(&to_bytes(t, &[3], &data)).unwrap();
            assert_eq!((back.data_type, back.data.clone()), (t, data.clone()));
        }
        // big-endian timedeltas as NumPy writes them with '>'
        let body: Vec<u8> = [3i64, -1].iter().flat_map(|v| v.to_be_bytes()).collect();
        let back = Npy::parse(&file(">m8[h]", false, "(2,)", &body)).unwrap();
        assert_eq!(
            back.data_type,
            DataType::TimeDelta64(TimeScale::of(TimeUnit::Hour))
        );
        let want: Vec<u8> = [3i64, -1].iter().flat_map(|v| v.to_ne_bytes()).collect();
        assert_eq!(back.data, want);
        for bad in ["|M8[s]", "<M8[0s]", "<M8[xs]"] {
            let err =
                zarr_testkit::report(&Npy::parse(&file(bad, false, "(1,)", &[0; 8])).unwrap_err());
            assert!(err.contains("unsupported .npy data type"), "{bad}: {err}");
        }
    }

    #[test]
    fn zero_d_and_empty() {
        let b = to_bytes(DataType::Float64, &[], &1.5f64.to_ne_bytes());
        let back = Npy::parse(&b).unwrap();
        assert_eq!(back.shape, Vec::<u64>::new());
        let b = to_bytes(DataType::Int16, &[0, 4], &[]);
        assert_eq!(Npy::parse(&b).unwrap().shape, vec![0, 4]);
    }

    #[test]
    fn big_endian_and_fortran() {
        let body: Vec<u8> = [1i32, 2, 3, 4, 5, 6]
            .iter()
            .flat_map(|v| v.to_be_bytes())
            .collect();
        let c = Npy::parse(&file(">i4", false, "(2, 3)", &body)).unwrap();
        let want: Vec<u8> = [1i32, 2, 3, 4, 5, 6]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        assert_eq!(c.data, want);
        // Fortran order: column-major 1 4 2 5 3 6 is the C array [[1,2,3],[4,5,6]]
        let body: Vec<u8> = [1i32, 4, 2, 5, 3, 6]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let f = Npy::parse(&file("<i4", true, "(2, 3)", &body)).unwrap();
        assert_eq!(f.data, want);
        // 3-d Fortran
        let shape = [2u64, 3, 4];
        let mut fbody = vec![0u8; 24];
        for i in 0..2 {
            for j in 0..3 {
                for k in 0..4 {
                    fbody[i + 2 * j + 6 * k] = (i * 12 + j * 4 + k) as u8;
                }
            }
        }
        let f = Npy::parse(&file("|u1", true, "(2, 3, 4)", &fbody)).unwrap();
        assert_eq!(f.shape, shape);
        assert_eq!(f.data, (0..24u8).collect::<Vec<_>>());
    }

    #[test]
    fn fixed_width_strings_are_fixed_size_elements() {
        use zarr_array::zarr_meta::data_type::fixed_width::utf32_encode;
        let t = DataType::FixedLengthUtf32(std::num::NonZeroUsize::new(8).unwrap());
        let data = [utf32_encode("hé", 8).unwrap(), utf32_encode("", 8).unwrap()].concat();
        let bytes = to_bytes(t, &[2], &data);
        assert!(String::from_utf8_lossy(&bytes[..64]).contains("'descr': '<U2'"));
        let back = Npy::parse(&bytes).unwrap();
        assert_eq!((back.data_type, back.data), (t, data.clone()));
        // a big-endian file reads into native order
        let mut be = file(">U2", false, "(2,)", &[]);
        be.extend(
            data.chunks(4)
                .flat_map(|u| u32::from_ne_bytes([u[0], u[1], u[2], u[3]]).to_be_bytes()),
        );
        assert_eq!(Npy::parse(&be).unwrap().data, data);
        let s = DataType::NullTerminatedBytes(std::num::NonZeroUsize::new(3).unwrap());
        let back = Npy::parse(&to_bytes(s, &[1], b"ab\0")).unwrap();
        assert_eq!((back.data_type, back.data), (s, b"ab\0".to_vec()));
    }

    #[test]
    fn bad_files_are_errors() {
        let good = file("<i4", false, "(2,)", &[0; 8]);
        assert!(Npy::parse(&good).is_ok());
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (b"hello".to_vec(), "not a .npy"),
            (good[..7].to_vec(), "truncated"),
            (good[..20].to_vec(), "truncated"),
            (good[..good.len() - 1].to_vec(), "needs 8"),
            ([good.clone(), vec![0]].concat(), "needs 8"),
            (file("<i4", false, "(2, -1)", &[]), "malformed"),
            (
                file("|O", false, "(2,)", &[0; 16]),
                "unsupported .npy data type",
            ),
            (file("<U4", false, "(2,)", &[0; 31]), "needs 32"),
            (
                file("|i4", false, "(2,)", &[0; 8]),
                "unsupported .npy data type",
            ),
            (
                file("<i4", false, "(18446744073709551615, 2)", &[]),
                "needs",
            ),
            (file("|b1", false, "(2,)", &[1, 2]), "bool element 1"),
            (file("<i4", false, "[2]", &[0; 8]), "tuple"),
        ];
        for (bytes, want) in cases {
            let err = zarr_testkit::report(&Npy::parse(&bytes).unwrap_err());
            assert!(err.contains(want), "{err} (wanted {want})");
        }
        let mut v9 = good.clone();
        v9[6] = 9;
        assert!(matches!(Npy::parse(&v9), Err(NpyError::Version { .. })));
        // every truncation and every single-byte corruption of the header is handled
        for n in 0..good.len() {
            let _ = Npy::parse(&good[..n]);
        }
        for i in 0..good.len() {
            for b in [0u8, b'\'', b'(', b'{', 0xff, b'9'] {
                let mut bad = good.clone();
                bad[i] = b;
                let _ = Npy::parse(&bad);
            }
        }
        // structured descr
        let _ = Npy::parse(&file("x", false, "(1,)", &[]));
        let dict = "{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (1,), }";
        let mut st = MAGIC.to_vec();
        st.extend_from_slice(&[1, 0]);
        st.extend_from_slice(&(dict.len() as u16).to_le_bytes());
        st.extend_from_slice(dict.as_bytes());
        assert!(matches!(Npy::parse(&st), Err(NpyError::DataType { .. })));
    }
}
