//! SciPy's `.npz` sparse files (`scipy.sparse.save_npz` / `load_npz`): a zip of `.npy` files,
//! `format` (`csr`, `csc`, `coo`), `shape`, `data` and `indices` + `indptr` (CSR, CSC) or
//! `row` + `col` (COO). Import streams the members side by side (the zip opened once per
//! member); export streams the values into the zip and spools the index arrays through
//! unnamed temporary files, then adds them.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Seek, Write};
use std::path::{Path, PathBuf};

use zarr_array::{Array, DataType};
use zip::read::ZipArchive;
use zip::write::{SimpleFileOptions, ZipWriter};

use crate::core::{
    check_budget, column_major, import, matrix_shape, nnz_of, row_major, Create, EntrySource,
    ExportOptions, ImportOptions, Progress, Reject,
};
use crate::error::{io, malformed, Result, SparseIoError};
use crate::mtx::Staged;
use crate::value::{data_type_of_npy, with_value_type, IoValue};

/// A `.npy` header: element type string, shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NpyHeader {
    pub(crate) descr: String,
    pub(crate) shape: Vec<u64>,
    /// Bytes before the data.
    pub(crate) header_len: u64,
}

/// Reads a `.npy` header from `r`.
pub(crate) fn read_npy_header(r: &mut impl Read, place: &str) -> Result<NpyHeader> {
    let mut pre = [0u8; 10];
    r.read_exact(&mut pre)
        .map_err(|_| malformed(place, "truncated before the end of the .npy header"))?;
    if &pre[..6] != b"\x93NUMPY" {
        return Err(malformed(place, "not a .npy file (no \\x93NUMPY magic)"));
    }
    let (len, fixed) = match pre[6] {
        1 => (u64::from(u16::from_le_bytes([pre[8], pre[9]])), 10u64),
        2 | 3 => {
            let mut more = [0u8; 2];
            r.read_exact(&mut more)
                .map_err(|_| malformed(place, "truncated in the .npy header"))?;
            (
                u64::from(u32::from_le_bytes([pre[8], pre[9], more[0], more[1]])),
                12,
            )
        }
        v => {
            return Err(malformed(
                place,
                format!(".npy format version {v} is not known"),
            ))
        }
    };
    if len > 1 << 16 {
        return Err(malformed(place, format!("a .npy header of {len} bytes")));
    }
    let mut text = vec![0u8; len as usize];
    r.read_exact(&mut text)
        .map_err(|_| malformed(place, "truncated in the .npy header"))?;
    let text = String::from_utf8_lossy(&text).to_string();
    let field = |key: &str| -> Option<String> {
        let k = text.find(&format!("'{key}'"))?;
        let rest = text[k + key.len() + 2..]
            .trim_start()
            .strip_prefix(':')?
            .trim_start();
        Some(rest.to_string())
    };
    let descr = field("descr")
        .and_then(|r| {
            let q = r.chars().next()?;
            let body = &r[1..];
            Some(body[..body.find(q)?].to_string())
        })
        .ok_or_else(|| malformed(place, format!("no 'descr' in the .npy header {text:?}")))?;
    let fortran = field("fortran_order")
        .ok_or_else(|| malformed(place, "no 'fortran_order' in the .npy header"))?;
    let shape_text = field("shape")
        .and_then(|r| Some(r.strip_prefix('(')?[..r.find(')')? - 1].to_string()))
        .ok_or_else(|| malformed(place, "no 'shape' in the .npy header"))?;
    let shape = shape_text
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.trim_end_matches('L').parse::<u64>())
        .collect::<std::result::Result<Vec<u64>, _>>()
        .map_err(|_| {
            malformed(
                place,
                format!("the shape ({shape_text}) is not one of integers"),
            )
        })?;
    if fortran.starts_with("True") && shape.len() > 1 {
        return Err(SparseIoError::Unsupported {
            place: place.into(),
            what: "a Fortran-ordered array".into(),
        });
    }
    Ok(NpyHeader {
        descr,
        shape,
        header_len: fixed + len,
    })
}

/// A `.npy` header for `n` elements of `descr` (`shape` `()` when `n` is `None`), padded as
/// NumPy pads it (the data starts at a multiple of 64).
pub(crate) fn npy_header(descr: &str, shape: &[u64]) -> Vec<u8> {
    let dims = match shape {
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
    let dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {dims}, }}");
    let unpadded = 10 + dict.len() + 1;
    let total = unpadded.div_ceil(64) * 64;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&((total - 10) as u16).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out.resize(total - 1, b' ');
    out.push(b'\n');
    out
}

/// A 1-d `.npy` array read element by element.
pub(crate) struct NpyStream<R> {
    r: BufReader<R>,
    pub(crate) len: u64,
    read: u64,
    kind: DataType,
    size: usize,
    place: String,
}

impl<R: Read> NpyStream<R> {
    /// Reads the header of a 1-d array of one of the [`IoValue`] types; `bytes` (when
    /// known: the zip member's size) must be what the header announces.
    pub(crate) fn open(r: R, place: String, bytes: Option<u64>) -> Result<Self> {
        let mut r = BufReader::with_capacity(1 << 16, r);
        let h = read_npy_header(&mut r, &place)?;
        let kind = data_type_of_npy(&h.descr).ok_or_else(|| SparseIoError::Unsupported {
            place: place.clone(),
            what: format!("the element type {:?}", h.descr),
        })?;
        let [len] = h.shape[..] else {
            return Err(malformed(&place, format!("shape {:?} is not 1-d", h.shape)));
        };
        let size = kind.size();
        if let Some(b) = bytes {
            let want = (len as u128) * size as u128 + u128::from(h.header_len);
            if u128::from(b) != want {
                return Err(malformed(
                    &place,
                    format!(
                        "holds {b} bytes but its header announces {len} elements ({want} bytes)"
                    ),
                ));
            }
        }
        Ok(NpyStream {
            r,
            len,
            read: 0,
            kind,
            size,
            place,
        })
    }

    fn next_raw_npy(&mut self) -> Result<Option<[u8; 8]>> {
        if self.read == self.len {
            return Ok(None);
        }
        let mut b = [0u8; 8];
        self.r.read_exact(&mut b[..self.size]).map_err(|e| {
            malformed(
                &self.place,
                format!(
                    "truncated after {} of {} elements ({e})",
                    self.read, self.len
                ),
            )
        })?;
        self.read += 1;
        Ok(Some(b))
    }
}

impl<R: Read> Elements for NpyStream<R> {
    fn next_raw(&mut self) -> Result<Option<[u8; 8]>> {
        self.next_raw_npy()
    }
    fn next_raws(&mut self, n: usize, out: &mut Vec<u8>) -> Result<usize> {
        let mut got = 0;
        while got < n && self.read < self.len {
            // whole elements straight from the buffer; one that straddles its end (or a
            // truncated stream, with its error) element by element
            let want = (n - got).min((self.len - self.read) as usize);
            let buf = self.r.fill_buf().map_err(io(&self.place))?;
            let k = want.min(buf.len() / self.size);
            if k == 0 {
                match self.next_raw_npy()? {
                    Some(b) => out.extend_from_slice(&b[..self.size]),
                    None => break,
                }
                got += 1;
                continue;
            }
            out.extend_from_slice(&buf[..k * self.size]);
            self.r.consume(k * self.size);
            self.read += k as u64;
            got += k;
        }
        Ok(got)
    }
    fn kind(&self) -> DataType {
        self.kind
    }
    fn place(&self) -> &str {
        &self.place
    }
    fn position(&self) -> u64 {
        self.read
    }
    fn len(&self) -> u64 {
        self.len
    }
}

/// A 1-d array of one of the [`IoValue`] types read element by element: a `.npy` member, a
/// Zarr array.
pub(crate) trait Elements {
    /// The next element's bytes (little-endian, the first `kind().size()` of them).
    fn next_raw(&mut self) -> Result<Option<[u8; 8]>>;
    /// The element type.
    fn kind(&self) -> DataType;
    /// Where the array is (for messages).
    fn place(&self) -> &str;
    /// How many elements were read.
    fn position(&self) -> u64;
    /// How many elements there are.
    fn len(&self) -> u64;

    /// Appends the bytes of up to `n` next elements to `out`; how many there were (fewer
    /// only at the end).
    fn next_raws(&mut self, n: usize, out: &mut Vec<u8>) -> Result<usize> {
        let size = self.kind().size();
        for k in 0..n {
            match self.next_raw()? {
                Some(b) => out.extend_from_slice(&b[..size]),
                None => return Ok(k),
            }
        }
        Ok(n)
    }

    /// Appends the next `n` elements as indices to `out` (as [`Elements::next_index`] reads
    /// each); `place_short` names what ends early.
    fn next_indices(&mut self, n: usize, raw: &mut Vec<u8>, out: &mut Vec<u64>) -> Result<()> {
        raw.clear();
        let got = self.next_raws(n, raw)?;
        let first = self.position() - got as u64;
        let at = out.len();
        macro_rules! widen {
            ($t:ty, $signed:expr) => {{
                let size = std::mem::size_of::<$t>();
                for (j, b) in raw.chunks_exact(size).enumerate() {
                    let v = <$t>::from_le_bytes(b.try_into().unwrap_or_default());
                    #[allow(unused_comparisons)]
                    if $signed && v < 0 as $t {
                        return Err(malformed(
                            self.place(),
                            format!("element {} is the negative index {v}", first + j as u64),
                        ));
                    }
                    out.push(v as u64);
                }
            }};
        }
        match self.kind() {
            DataType::Int8 => widen!(i8, true),
            DataType::Int16 => widen!(i16, true),
            DataType::Int32 => widen!(i32, true),
            DataType::Int64 => widen!(i64, true),
            DataType::UInt8 => widen!(u8, false),
            DataType::UInt16 => widen!(u16, false),
            DataType::UInt32 => widen!(u32, false),
            DataType::UInt64 => widen!(u64, false),
            other => {
                return Err(SparseIoError::Unsupported {
                    place: self.place().to_string(),
                    what: format!("indices of type {other}"),
                })
            }
        }
        if out.len() - at < n {
            return Err(malformed(self.place(), "ends early"));
        }
        Ok(())
    }

    /// Appends the next `n` elements as values of the stream's own type `T` (the caller
    /// checked it) to `out`.
    fn next_values<T: IoValue>(
        &mut self,
        n: usize,
        raw: &mut Vec<u8>,
        out: &mut Vec<T>,
    ) -> Result<()> {
        raw.clear();
        let got = self.next_raws(n, raw)?;
        out.extend(
            raw.chunks_exact(std::mem::size_of::<T>())
                .map(bytemuck::pod_read_unaligned::<T>),
        );
        if got < n {
            return Err(malformed(self.place(), "ends early"));
        }
        Ok(())
    }

    /// The next element as an index (any integer type; negative ones refused).
    fn next_index(&mut self) -> Result<Option<u64>> {
        let Some(b) = self.next_raw()? else {
            return Ok(None);
        };
        let v: i128 = match self.kind() {
            DataType::Int8 => i128::from(b[0] as i8),
            DataType::Int16 => i128::from(i16::from_le_bytes([b[0], b[1]])),
            DataType::Int32 => i128::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            DataType::Int64 => i128::from(i64::from_le_bytes(b)),
            DataType::UInt8 => i128::from(b[0]),
            DataType::UInt16 => i128::from(u16::from_le_bytes([b[0], b[1]])),
            DataType::UInt32 => i128::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            DataType::UInt64 => i128::from(u64::from_le_bytes(b)),
            other => {
                return Err(SparseIoError::Unsupported {
                    place: self.place().to_string(),
                    what: format!("indices of type {other}"),
                })
            }
        };
        u64::try_from(v).map(Some).map_err(|_| {
            malformed(
                self.place(),
                format!("element {} is the negative index {v}", self.position() - 1),
            )
        })
    }

    /// The next element as a value of the stream's own type `T` (the caller checked it).
    fn next_value<T: IoValue>(&mut self) -> Result<Option<T>> {
        let Some(b) = self.next_raw()? else {
            return Ok(None);
        };
        Ok(Some(bytemuck::pod_read_unaligned(
            &b[..std::mem::size_of::<T>()],
        )))
    }
}

/// The layout of a sparse matrix file or group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Compressed sparse rows.
    Csr,
    /// Compressed sparse columns.
    Csc,
    /// Coordinates.
    Coo,
}

impl Layout {
    /// The lower-case name (`csr`).
    pub fn name(self) -> &'static str {
        match self {
            Layout::Csr => "csr",
            Layout::Csc => "csc",
            Layout::Coo => "coo",
        }
    }
}

/// The compressed axis' pointers, the minor indices and the values of a CSR / CSC matrix,
/// or a COO matrix's rows, columns and values, as three streams; turned into entries in
/// row-major (CSR, COO) or column-major (CSC) order.
pub(crate) struct Triple<S> {
    pub(crate) layout: Layout,
    pub(crate) shape: [u64; 2],
    /// `indptr` (CSR, CSC) or `row` (COO).
    pub(crate) first: S,
    /// `indices` (CSR, CSC) or `col` (COO).
    pub(crate) second: S,
    pub(crate) data: S,
    /// For a doubly compressed layout (binsparse's DCSR / DCSC), the major index of each
    /// pointer interval.
    pub(crate) majors: Option<S>,
    pub(crate) budget: u64,
}

impl<S: Elements> Triple<S> {
    /// Checks the lengths the headers announce.
    pub(crate) fn check_lengths(&self) -> Result<()> {
        let (n1, n2, nd) = (self.first.len(), self.second.len(), self.data.len());
        match self.layout {
            Layout::Csr | Layout::Csc => {
                let major = if self.layout == Layout::Csr {
                    self.shape[0]
                } else {
                    self.shape[1]
                };
                let intervals = self.majors.as_ref().map_or(major, Elements::len);
                if self.majors.is_some() && intervals > major {
                    return Err(malformed(
                        self.first.place(),
                        format!("{intervals} nonempty lines of {major}"),
                    ));
                }
                if n1 != intervals + 1 {
                    return Err(malformed(
                        self.first.place(),
                        format!(
                            "{n1} pointers for {major} {} (want {})",
                            if self.layout == Layout::Csr {
                                "rows"
                            } else {
                                "columns"
                            },
                            major + 1
                        ),
                    ));
                }
                if n2 != nd {
                    return Err(malformed(
                        self.second.place(),
                        format!("{n2} indices but {nd} values in {}", self.data.place()),
                    ));
                }
            }
            Layout::Coo => {
                if n1 != nd || n2 != nd {
                    return Err(malformed(
                        self.first.place(),
                        format!("{n1} rows, {n2} columns and {nd} values: the lengths differ"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Feeds the entries (row, column) to `sink`; a CSR / CSC line's indices are sorted when
    /// they are not (a line held whole, within the budget).
    pub(crate) fn feed<T: IoValue>(
        &mut self,
        sink: &mut (impl FnMut(u64, u64, T) -> Result<(), Reject> + Send),
        progress: Option<&Progress>,
    ) -> Result<()> {
        let shape = self.shape;
        let data_place = self.data.place().to_string();
        let mut done = 0u64;
        let total = self.data.len();
        let tell = |n: &mut u64| {
            if let Some(p) = progress {
                if *n >= 1 << 16 {
                    p(*n, total);
                    *n = 0;
                }
            }
        };
        match self.layout {
            Layout::Coo => {
                while let Some(r) = self.first.next_index()? {
                    let c = self
                        .second
                        .next_index()?
                        .ok_or_else(|| malformed(self.second.place(), "ends early"))?;
                    let v = self
                        .data
                        .next_value::<T>()?
                        .ok_or_else(|| malformed(&data_place, "ends early"))?;
                    let k = self.data.position() - 1;
                    sink(r, c, v)
                        .map_err(|rej| rej.at(format!("{data_place} element {k}"), r, c, shape))?;
                    done += 1;
                    tell(&mut done);
                }
            }
            Layout::Csr | Layout::Csc => {
                let csr = self.layout == Layout::Csr;
                let minor_len = if csr { shape[1] } else { shape[0] };
                let nnz = self.data.len();
                let mut prev = self.first.next_index()?.unwrap_or(0);
                if prev != 0 {
                    return Err(malformed(
                        self.first.place(),
                        format!("the first pointer is {prev}, not 0"),
                    ));
                }
                let (mut idx, mut vals, mut raw) = (Vec::new(), Vec::<T>::new(), Vec::new());
                let mut pairs: Vec<(u64, T)> = Vec::new();
                let line_cap =
                    (self.budget / 8 / (std::mem::size_of::<(u64, T)>() as u64)).max(1024);
                let major_len = if csr { shape[0] } else { shape[1] };
                let mut k = 0u64;
                let mut last_major: Option<u64> = None;
                while let Some(p) = self.first.next_index()? {
                    if p < prev || p > nnz {
                        return Err(malformed(
                            self.first.place(),
                            format!(
                                "pointer {} is {p} after {prev}: pointers must not decrease nor pass the {nnz} values",
                                k + 1
                            ),
                        ));
                    }
                    let count = p - prev;
                    let major = match self.majors.as_mut() {
                        None => k,
                        Some(m) => {
                            let id = m
                                .next_index()?
                                .ok_or_else(|| malformed(m.place(), "ends early"))?;
                            if id >= major_len || last_major.is_some_and(|l| id <= l) {
                                return Err(malformed(
                                    m.place(),
                                    format!(
                                        "element {k} is {id}: line indices must increase and stay below {major_len}"
                                    ),
                                ));
                            }
                            last_major = Some(id);
                            id
                        }
                    };
                    if count > line_cap {
                        return Err(SparseIoError::OverBudget {
                            what: format!(
                                "{} {major} of {} ({count} entries)",
                                if csr { "row" } else { "column" },
                                self.first.place()
                            ),
                            needed: count * std::mem::size_of::<(u64, T)>() as u64 * 8,
                            budget: self.budget,
                        });
                    }
                    // the line's indices and values read in bulk
                    let n = count as usize;
                    idx.clear();
                    vals.clear();
                    self.second.next_indices(n, &mut raw, &mut idx)?;
                    self.data.next_values::<T>(n, &mut raw, &mut vals)?;
                    if let Some(j) = idx.iter().position(|&i| i >= minor_len) {
                        let i = idx[j];
                        let (r, c) = if csr { (major, i) } else { (i, major) };
                        return Err(SparseIoError::OutOfRange {
                            place: format!(
                                "{} element {}",
                                self.second.place(),
                                self.second.position() - (n - j) as u64
                            ),
                            row: r,
                            col: c,
                            rows: shape[0],
                            cols: shape[1],
                        });
                    }
                    if !idx.is_sorted() {
                        // a line whose indices are not in order (SciPy allows it): sorted
                        // with its values, stably as before
                        pairs.clear();
                        pairs.extend(idx.iter().copied().zip(vals.iter().copied()));
                        pairs.sort_by_key(|e| e.0);
                        idx.clear();
                        vals.clear();
                        idx.extend(pairs.iter().map(|e| e.0));
                        vals.extend(pairs.iter().map(|e| e.1));
                    }
                    for (&i, &v) in idx.iter().zip(&vals) {
                        let (r, c) = if csr { (major, i) } else { (i, major) };
                        sink(r, c, v).map_err(|rej| {
                            rej.at(
                                format!(
                                    "{} ({} {major})",
                                    self.second.place(),
                                    if csr { "row" } else { "column" }
                                ),
                                r,
                                c,
                                shape,
                            )
                        })?;
                    }
                    done += count;
                    tell(&mut done);
                    prev = p;
                    k += 1;
                }
                if prev != nnz {
                    return Err(malformed(
                        self.first.place(),
                        format!("the last pointer is {prev} but there are {nnz} values"),
                    ));
                }
            }
        }
        if let Some(p) = progress {
            p(done, total);
        }
        Ok(())
    }
}

/// A `.npz` file opened: its format, shape, and the members read when fed.
struct NpzSource {
    path: PathBuf,
    shown: String,
    layout: Layout,
    shape: [u64; 2],
    data_type: DataType,
    nnz: u64,
    budget: u64,
}

fn archive(path: &Path, shown: &str) -> Result<ZipArchive<BufReader<File>>> {
    let f = File::open(path).map_err(io(shown))?;
    ZipArchive::new(BufReader::new(f))
        .map_err(|e| malformed(shown, format!("not a readable zip file ({e})")))
}

/// Reads a small member (`format.npy`, `shape.npy`) whole.
fn small_member(
    z: &mut ZipArchive<BufReader<File>>,
    shown: &str,
    name: &str,
) -> Result<(NpyHeader, Vec<u8>)> {
    let place = format!("{shown}: {name}");
    let mut f = z.by_name(name).map_err(|_| {
        malformed(
            shown,
            format!("no {name} (not a scipy.sparse.save_npz file)"),
        )
    })?;
    if f.size() > 4096 {
        return Err(malformed(
            &place,
            format!("{} bytes for a small array", f.size()),
        ));
    }
    let h = read_npy_header(&mut f, &place)?;
    let mut body = Vec::new();
    f.read_to_end(&mut body)
        .map_err(|e| malformed(&place, format!("unreadable ({e})")))?;
    Ok((h, body))
}

fn open_npz(path: &Path, opts: &ImportOptions) -> Result<NpzSource> {
    let shown = path.display().to_string();
    let mut z = archive(path, &shown)?;
    let (fh, fb) = small_member(&mut z, &shown, "format.npy")?;
    let fplace = format!("{shown}: format.npy");
    let format = match (fh.descr.as_bytes().first(), fh.descr.get(1..2)) {
        (Some(b'|') | Some(b'<'), Some("S")) => String::from_utf8_lossy(&fb)
            .trim_end_matches('\0')
            .to_string(),
        (Some(b'<'), Some("U")) => fb
            .chunks_exact(4)
            .filter_map(|c| char::from_u32(u32::from_le_bytes([c[0], c[1], c[2], c[3]])))
            .filter(|&c| c != '\0')
            .collect(),
        _ => {
            return Err(malformed(
                &fplace,
                format!("a format of type {:?}, not a string", fh.descr),
            ))
        }
    };
    let layout = match format.as_str() {
        "csr" => Layout::Csr,
        "csc" => Layout::Csc,
        "coo" => Layout::Coo,
        other => {
            return Err(SparseIoError::Unsupported {
                place: fplace,
                what: format!("the sparse format {other:?}"),
            })
        }
    };
    let (sh, sb) = small_member(&mut z, &shown, "shape.npy")?;
    let splace = format!("{shown}: shape.npy");
    if sh.shape != [2] {
        return Err(malformed(
            &splace,
            format!("shape {:?}: a matrix's shape has 2 numbers", sh.shape),
        ));
    }
    let dims: Vec<u64> = match sh.descr.as_str() {
        "<i8" | "<u8" => sb
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap_or_default()) as u64)
            .collect(),
        "<i4" | "<u4" => sb
            .chunks_exact(4)
            .map(|c| i32::from_le_bytes(c.try_into().unwrap_or_default()) as u64)
            .collect(),
        d => return Err(malformed(&splace, format!("a shape of type {d:?}"))),
    };
    let [rows, cols] = dims[..] else {
        return Err(malformed(&splace, "truncated"));
    };
    if rows >= 1 << 62 || cols >= 1 << 62 {
        return Err(malformed(
            &splace,
            format!("a negative or huge shape ({rows}, {cols})"),
        ));
    }
    let dplace = format!("{shown}: data.npy");
    let d = z
        .by_name("data.npy")
        .map_err(|_| malformed(&shown, "no data.npy"))?;
    let size = d.size();
    let data = NpyStream::open(d, dplace, Some(size))?;
    Ok(NpzSource {
        path: path.to_path_buf(),
        shown,
        layout,
        shape: [rows, cols],
        data_type: data.kind(),
        nnz: data.len(),
        budget: opts.max_memory,
    })
}

impl EntrySource for NpzSource {
    fn place(&self) -> String {
        self.shown.clone()
    }
    fn shape(&self) -> [u64; 2] {
        self.shape
    }
    fn data_type(&self) -> DataType {
        self.data_type
    }
    fn nnz_hint(&self) -> u64 {
        self.nnz
    }
    fn row_major(&self) -> bool {
        self.layout == Layout::Csr
    }
    fn feed<T: IoValue>(
        &mut self,
        sink: &mut (impl FnMut(u64, u64, T) -> Result<(), Reject> + Send),
        progress: Option<&Progress>,
    ) -> Result<()> {
        let (n1, n2) = match self.layout {
            Layout::Coo => ("row.npy", "col.npy"),
            _ => ("indptr.npy", "indices.npy"),
        };
        // each member is read (and inflated) on a thread of its own, a few blocks ahead
        let block = (self.budget / 64).clamp(1 << 14, 1 << 20) as usize;
        let (path, shown) = (&self.path, &self.shown);
        std::thread::scope(|scope| -> Result<()> {
            let open = |name: &'static str| -> Result<NpyStream<Prefetched>> {
                let (tx, rx) = std::sync::mpsc::sync_channel::<Fetched>(2);
                scope.spawn(move || pump(path, shown, name, block, &tx));
                let size = match rx.recv() {
                    Ok(Fetched::Size(n)) => n,
                    Ok(Fetched::Failed(e)) => return Err(e),
                    _ => return Err(malformed(shown, format!("{name}: unreadable"))),
                };
                let r = Prefetched {
                    rx,
                    buf: Vec::new(),
                    at: 0,
                    failed: None,
                };
                NpyStream::open(r, format!("{shown}: {name}"), Some(size))
            };
            let mut t = Triple {
                layout: self.layout,
                shape: self.shape,
                first: open(n1)?,
                second: open(n2)?,
                data: open("data.npy")?,
                majors: None,
                budget: self.budget,
            };
            t.check_lengths()?;
            t.feed(sink, progress)
        })
    }
}

/// What a member's reading thread sends: the member's size first, then its bytes.
enum Fetched {
    Size(u64),
    Data(Vec<u8>),
    Failed(SparseIoError),
    Io(std::io::Error),
}

/// Reads the member `name` of the zip at `path` into `tx` in blocks, until its end, an
/// error, or the receiver hangs up.
fn pump(
    path: &Path,
    shown: &str,
    name: &str,
    block: usize,
    tx: &std::sync::mpsc::SyncSender<Fetched>,
) {
    let mut z = match archive(path, shown) {
        Ok(z) => z,
        Err(e) => {
            let _ = tx.send(Fetched::Failed(e));
            return;
        }
    };
    // the member's raw bytes, inflated here by zlib-rs (the zip crate's flate2 inflates with
    // the C zlib, half as fast) with its CRC-32 and size checked at its end
    let raw = z.index_for_name(name).map(|i| z.by_index_raw(i));
    let m = match raw {
        Some(Ok(m)) if !m.encrypted() => m,
        _ => {
            let _ = tx.send(Fetched::Failed(malformed(shown, format!("no {name}"))));
            return;
        }
    };
    let deflated = match m.compression() {
        zip::CompressionMethod::Deflated => true,
        zip::CompressionMethod::Stored => false,
        other => {
            let _ = tx.send(Fetched::Failed(SparseIoError::Unsupported {
                place: format!("{shown}: {name}"),
                what: format!("the zip compression method {other}"),
            }));
            return;
        }
    };
    let (size, crc) = (m.size(), m.crc32());
    let mut m = crate::gz::ZipMember::new(m, deflated, crc, size);
    if tx.send(Fetched::Size(size)).is_err() {
        return;
    }
    loop {
        let mut buf = Vec::with_capacity(block);
        match (&mut m).take(block as u64).read_to_end(&mut buf) {
            Ok(0) => return,
            Ok(_) => {
                if tx.send(Fetched::Data(buf)).is_err() {
                    return;
                }
            }
            Err(e) => {
                let _ = tx.send(Fetched::Io(e));
                return;
            }
        }
    }
}

/// The bytes a member's reading thread sends, as a reader.
struct Prefetched {
    rx: std::sync::mpsc::Receiver<Fetched>,
    buf: Vec<u8>,
    at: usize,
    failed: Option<std::io::ErrorKind>,
}

impl Read for Prefetched {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if let Some(kind) = self.failed {
            return Err(kind.into());
        }
        while self.at == self.buf.len() {
            match self.rx.recv() {
                Ok(Fetched::Data(b)) => {
                    self.buf = b;
                    self.at = 0;
                }
                Ok(Fetched::Io(e)) => {
                    self.failed = Some(e.kind());
                    return Err(e);
                }
                // the end of the member (the thread is done)
                Ok(_) | Err(_) => return Ok(0),
            }
        }
        let n = out.len().min(self.buf.len() - self.at);
        out[..n].copy_from_slice(&self.buf[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// Imports a SciPy `.npz` sparse matrix into an array made by `create`.
///
/// # Errors
/// See [`SparseIoError`]; on error the array is removed.
pub fn import_npz(path: &Path, opts: &ImportOptions, create: Create<'_>) -> Result<Array> {
    check_budget(opts.max_memory)?;
    let src = open_npz(path, opts)?;
    import(src, opts, create)
}

/// The index type SciPy picks for a matrix: `int32` when every index and pointer fits it.
pub(crate) fn index_descr(nnz: u64, shape: [u64; 2]) -> &'static str {
    if nnz.max(shape[0]).max(shape[1]) <= i32::MAX as u64 {
        "<i4"
    } else {
        "<i8"
    }
}

/// Appends index `i` in the type `descr` to `w`.
pub(crate) fn put_index(w: &mut impl Write, descr: &str, i: u64) -> std::io::Result<()> {
    if descr == "<i4" {
        w.write_all(&(i as i32).to_le_bytes())
    } else {
        w.write_all(&(i as i64).to_le_bytes())
    }
}

/// A spool: an unnamed temporary file written through a buffer, read back once.
pub(crate) struct Spool {
    w: BufWriter<File>,
    pub(crate) len: u64,
}

impl Spool {
    pub(crate) fn new(dir: Option<&Path>) -> Result<Self> {
        let dir = dir.map_or_else(std::env::temp_dir, Path::to_path_buf);
        let f = tempfile::tempfile_in(&dir).map_err(io(dir.display().to_string()))?;
        Ok(Spool {
            w: BufWriter::with_capacity(1 << 16, f),
            len: 0,
        })
    }

    pub(crate) fn index(&mut self, descr: &str, i: u64) -> Result<()> {
        self.len += 1;
        put_index(&mut self.w, descr, i).map_err(io("a temporary file"))
    }

    /// The spooled bytes, from the start.
    pub(crate) fn reader(self) -> Result<BufReader<File>> {
        let mut f = self
            .w
            .into_inner()
            .map_err(|e| io("a temporary file")(e.into_error()))?;
        f.rewind().map_err(io("a temporary file"))?;
        Ok(BufReader::with_capacity(1 << 16, f))
    }
}

/// Exports a 2-d sparse array as a SciPy `.npz` in `layout` (members stored uncompressed,
/// which `load_npz` reads as it reads `save_npz(compressed=False)`'s).
///
/// # Errors
/// See [`SparseIoError`]; on error no file is left at `path`.
pub fn export_npz(array: &Array, path: &Path, layout: Layout, opts: &ExportOptions) -> Result<()> {
    check_budget(opts.max_memory)?;
    let dt = array.data_type();
    with_value_type!(
        dt,
        T => export_as::<T>(array, path, layout, opts),
        Err(SparseIoError::Unsupported { place: array.path().to_string(), what: format!("the data type {dt}") })
    )
}

fn zip_opts(bytes: u64) -> SimpleFileOptions {
    SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored)
        .large_file(bytes >= u32::MAX as u64)
}

fn export_as<T: IoValue>(
    array: &Array,
    path: &Path,
    layout: Layout,
    opts: &ExportOptions,
) -> Result<()> {
    let shown = path.display().to_string();
    let shape = matrix_shape(array)?;
    let nnz = nnz_of(array)?;
    let staged = Staged::new(path)?;
    let file = staged.file.as_file().try_clone().map_err(io(&shown))?;
    let mut z = ZipWriter::new(BufWriter::with_capacity(1 << 16, file));
    let zerr = |e: zip::result::ZipError| malformed(&shown, format!("writing the zip: {e}"));
    let idx = index_descr(nnz, shape);
    let tmp = opts.temp_dir.as_deref();
    let size = std::mem::size_of::<T>() as u64;
    // data.npy streamed; the index arrays spooled
    let data_header = npy_header(T::NPY, &[nnz]);
    z.start_file("data.npy", zip_opts(data_header.len() as u64 + nnz * size))
        .map_err(zerr)?;
    z.write_all(&data_header).map_err(io(&shown))?;
    let mut a = Spool::new(tmp)?;
    let mut b = Spool::new(tmp)?;
    let mut written = 0u64;
    let tell = |n: u64| {
        if let Some(p) = &opts.progress {
            p(n, nnz);
        }
    };
    let (a_name, b_name, a_len) = match layout {
        Layout::Csr | Layout::Coo => {
            let mut row_ptr = 0u64;
            let mut cur = 0u64;
            if layout == Layout::Csr {
                a.index(idx, 0)?;
            }
            row_major::<T>(array, opts.max_memory / 2, |(r, c, v)| {
                z.write_all(bytemuck::bytes_of(&v)).map_err(io(&shown))?;
                b.index(idx, c)?;
                if layout == Layout::Coo {
                    a.index(idx, r)?;
                } else {
                    while cur < r {
                        a.index(idx, row_ptr)?;
                        cur += 1;
                    }
                }
                row_ptr += 1;
                written += 1;
                if written.is_multiple_of(1 << 16) {
                    tell(1 << 16);
                }
                Ok(())
            })?;
            if layout == Layout::Csr {
                while cur < shape[0] {
                    a.index(idx, row_ptr)?;
                    cur += 1;
                }
                ("indptr.npy", "indices.npy", shape[0] + 1)
            } else {
                ("row.npy", "col.npy", nnz)
            }
        }
        Layout::Csc => {
            a.index(idx, 0)?;
            let mut ptr = 0u64;
            let mut cur = 0u64;
            for e in column_major::<T>(array, opts)? {
                let (c, r, v) = e?;
                z.write_all(bytemuck::bytes_of(&v)).map_err(io(&shown))?;
                b.index(idx, r)?;
                while cur < c {
                    a.index(idx, ptr)?;
                    cur += 1;
                }
                ptr += 1;
                written += 1;
                if written.is_multiple_of(1 << 16) {
                    tell(1 << 16);
                }
            }
            while cur < shape[1] {
                a.index(idx, ptr)?;
                cur += 1;
            }
            ("indptr.npy", "indices.npy", shape[1] + 1)
        }
    };
    tell(written % (1 << 16));
    if written != nnz {
        return Err(malformed(
            array.path(),
            format!("the array changed during the export ({nnz} entries counted, {written} read)"),
        ));
    }
    let isize = if idx == "<i4" { 4 } else { 8 };
    for (name, spool, len) in [(a_name, a, a_len), (b_name, b, nnz)] {
        let h = npy_header(idx, &[len]);
        z.start_file(name, zip_opts(h.len() as u64 + len * isize))
            .map_err(zerr)?;
        z.write_all(&h).map_err(io(&shown))?;
        std::io::copy(&mut spool.reader()?, &mut z).map_err(io(&shown))?;
    }
    let fmt = layout.name().as_bytes();
    let mut body = npy_header("|S3", &[]);
    body.extend_from_slice(fmt);
    z.start_file("format.npy", zip_opts(body.len() as u64))
        .map_err(zerr)?;
    z.write_all(&body).map_err(io(&shown))?;
    let mut body = npy_header("<i8", &[2]);
    for d in shape {
        body.extend_from_slice(&(d as i64).to_le_bytes());
    }
    z.start_file("shape.npy", zip_opts(body.len() as u64))
        .map_err(zerr)?;
    z.write_all(&body).map_err(io(&shown))?;
    let mut w = z.finish().map_err(zerr)?;
    w.flush().map_err(io(&shown))?;
    drop(w);
    staged.commit()
}
