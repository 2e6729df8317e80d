//! Matrix Market coordinate files (`.mtx`, gzip-compressed `.mtx.gz`): `real`, `double`,
//! `integer` and `pattern` fields, `general` and `symmetric` matrices. Import parses blocks of
//! lines in parallel and sorts the entries on the way (files are often column-major, as
//! 10x Genomics' are); export writes `general` files in row-major order, each band's lines
//! formatted in parallel.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;

use rayon::prelude::*;
use zarr_array::{Array, DataType};

use crate::core::{
    check_budget, import, matrix_shape, nnz_of, Create, EntrySource, ExportOptions, ImportOptions,
    Progress, Reject,
};
use crate::error::{io, malformed, Result, SparseIoError};
use crate::value::{with_value_type, IoValue};

/// The value field of a Matrix Market file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Real,
    Integer,
    Pattern,
}

/// A byte reader that tells `progress` of what it reads.
struct Counting<R> {
    inner: R,
    progress: Option<Progress>,
    total: u64,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(p) = &self.progress {
            p(n as u64, self.total);
        }
        Ok(n)
    }
}

/// An opened Matrix Market file, its header read.
struct MtxSource {
    shown: String,
    reader: Box<dyn BufRead + Send>,
    field: Field,
    symmetric: bool,
    shape: [u64; 2],
    nnz: u64,
    /// The line number of the next line.
    line: u64,
    data_type: DataType,
    budget: u64,
}

/// Opens `path` (gzip recognised by its magic bytes), reads its header.
fn open(path: &Path, opts: &ImportOptions) -> Result<MtxSource> {
    let shown = path.display().to_string();
    let mut file = File::open(path).map_err(io(&shown))?;
    let mut magic = [0u8; 2];
    let gz = matches!(file.read(&mut magic), Ok(2)) && magic == [0x1f, 0x8b];
    drop(file);
    let file = File::open(path).map_err(io(&shown))?;
    let counted = Counting {
        inner: file,
        progress: opts.progress.clone(),
        total: std::fs::metadata(path).map_or(0, |m| m.len()),
    };
    let reader: Box<dyn BufRead + Send> = if gz {
        Box::new(BufReader::with_capacity(
            1 << 16,
            crate::gz::GzReader::new(counted),
        ))
    } else {
        Box::new(BufReader::with_capacity(1 << 16, counted))
    };
    let mut src = MtxSource {
        shown,
        reader,
        field: Field::Real,
        symmetric: false,
        shape: [0, 0],
        nnz: 0,
        line: 1,
        data_type: DataType::Float64,
        budget: opts.max_memory,
    };
    src.header(opts.data_type)?;
    Ok(src)
}

impl MtxSource {
    fn at(&self, line: u64) -> String {
        format!("{} line {line}", self.shown)
    }

    /// One line (without its end), at most `max` bytes; `None` at the end of the file.
    fn next_line(&mut self, max: usize) -> Result<Option<String>> {
        let mut buf = Vec::new();
        let n = (&mut self.reader)
            .take(max as u64 + 1)
            .read_until(b'\n', &mut buf)
            .map_err(io(&self.shown))?;
        if n == 0 {
            return Ok(None);
        }
        if buf.len() > max && buf.last() != Some(&b'\n') {
            return Err(malformed(
                self.at(self.line),
                format!("a header line longer than {max} bytes"),
            ));
        }
        self.line += 1;
        let text = String::from_utf8(buf)
            .map_err(|_| malformed(self.at(self.line - 1), "not UTF-8 text"))?;
        Ok(Some(text.trim_end_matches(['\n', '\r']).to_string()))
    }

    fn header(&mut self, data_type: Option<DataType>) -> Result<()> {
        let banner = self
            .next_line(1024)?
            .ok_or_else(|| malformed(&self.shown, "an empty file (no %%MatrixMarket banner)"))?;
        let words: Vec<String> = banner
            .split_ascii_whitespace()
            .map(str::to_ascii_lowercase)
            .collect();
        if words.first().map(String::as_str) != Some("%%matrixmarket") || words.len() != 5 {
            return Err(malformed(
                self.at(1),
                "not a Matrix Market banner (%%MatrixMarket matrix coordinate <field> <symmetry>)",
            ));
        }
        if words[1] != "matrix" {
            return Err(SparseIoError::Unsupported {
                place: self.at(1),
                what: format!("the object {:?}", words[1]),
            });
        }
        if words[2] != "coordinate" {
            return Err(SparseIoError::Unsupported {
                place: self.at(1),
                what: format!(
                    "the {:?} format (only coordinate files are sparse)",
                    words[2]
                ),
            });
        }
        self.field = match words[3].as_str() {
            "real" | "double" => Field::Real,
            "integer" => Field::Integer,
            "pattern" => Field::Pattern,
            other => {
                return Err(SparseIoError::Unsupported {
                    place: self.at(1),
                    what: format!("the field {other:?}"),
                })
            }
        };
        self.symmetric = match words[4].as_str() {
            "general" => false,
            "symmetric" => true,
            other => {
                return Err(SparseIoError::Unsupported {
                    place: self.at(1),
                    what: format!("the symmetry {other:?}"),
                })
            }
        };
        // comments, then the size line
        let size = loop {
            let line = self.line;
            let Some(text) = self.next_line(4096)? else {
                return Err(malformed(
                    self.at(line),
                    "the file ends before its size line",
                ));
            };
            let t = text.trim();
            if t.is_empty() || t.starts_with('%') {
                continue;
            }
            break (line, t.to_string());
        };
        let nums: Vec<Option<u64>> = size
            .1
            .split_ascii_whitespace()
            .map(|w| w.parse().ok())
            .collect();
        let [Some(rows), Some(cols), Some(nnz)] = nums[..] else {
            return Err(malformed(
                self.at(size.0),
                format!("the size line {:?} is not `rows columns entries`", size.1),
            ));
        };
        if rows >= 1 << 62 || cols >= 1 << 62 {
            return Err(malformed(
                self.at(size.0),
                format!("a shape of {rows}x{cols} is too large"),
            ));
        }
        let cells = u128::from(rows) * u128::from(cols);
        let most = if self.symmetric {
            cells.div_ceil(2) + u128::from(rows.min(cols))
        } else {
            cells
        };
        if u128::from(nnz) > most {
            return Err(malformed(
                self.at(size.0),
                format!("{nnz} entries cannot fit a {rows}x{cols} matrix"),
            ));
        }
        if self.symmetric && rows != cols {
            return Err(malformed(
                self.at(size.0),
                format!("a symmetric matrix of shape {rows}x{cols}"),
            ));
        }
        self.shape = [rows, cols];
        self.nnz = nnz;
        self.data_type = match (data_type, self.field) {
            (Some(d), _) => d,
            (None, Field::Integer) => DataType::Int64,
            (None, _) => DataType::Float64,
        };
        Ok(())
    }
}

/// A line's error: its number, the reason, or the entry outside the matrix.
type LineError = (u64, String, Option<(u64, u64)>);

/// Whether `b` separates the fields of a line (what `str::split_ascii_whitespace` splits on).
#[inline]
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0c)
}

/// The next field of `s` from `*at` on, `*at` moved past it; `None` at the line's end.
#[inline]
fn field<'a>(s: &'a [u8], at: &mut usize) -> Option<&'a [u8]> {
    let mut i = *at;
    while i < s.len() && is_space(s[i]) {
        i += 1;
    }
    if i == s.len() {
        *at = i;
        return None;
    }
    let start = i;
    while i < s.len() && !is_space(s[i]) {
        i += 1;
    }
    *at = i;
    Some(&s[start..i])
}

/// A decimal index field as `str::parse::<u64>` reads it (an optional `+`, digits, no
/// overflow), straight from the bytes.
#[inline]
fn parse_index(f: &[u8]) -> Option<u64> {
    let digits = f.strip_prefix(b"+").unwrap_or(f);
    if digits.is_empty() {
        return None;
    }
    let mut n: u64 = 0;
    for &b in digits {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(u64::from(d))?;
    }
    Some(n)
}

/// Digits from `text[*at]` on (at most 18, so no overflow), `*at` moved past them; `None`
/// when there are none or more.
#[inline]
fn digits(text: &[u8], at: &mut usize) -> Option<u64> {
    let start = *at;
    let mut n = 0u64;
    while let Some(&b) = text.get(*at) {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        if *at - start == 18 {
            return None;
        }
        n = n * 10 + u64::from(d);
        *at += 1;
    }
    (*at > start).then_some(n)
}

/// The entry of the line at `text[at..]` when it is exactly `row col value` (`row col` for
/// a pattern file) with one space between, the indices plain digits inside the matrix and
/// the value a plain decimal of a `real` file, ending at a line end or the text's end: the
/// entry (indices from 1) and where the next line starts. `None` for anything else, which
/// the general reading then reads (and reports).
#[inline]
fn fast_line<T: IoValue>(
    text: &[u8],
    at: usize,
    field_kind: Field,
    shape: [u64; 2],
) -> Option<(u64, u64, T, usize)> {
    let mut i = at;
    let r = digits(text, &mut i)?;
    if text.get(i) != Some(&b' ') {
        return None;
    }
    i += 1;
    let c = digits(text, &mut i)?;
    if r == 0 || c == 0 || r > shape[0] || c > shape[1] {
        return None;
    }
    let v = match field_kind {
        Field::Pattern => T::one(),
        Field::Real => {
            if text.get(i) != Some(&b' ') {
                return None;
            }
            i += 1;
            let start = i;
            while i < text.len() && !is_space(text[i]) {
                i += 1;
            }
            T::parse_fast(&text[start..i])?
        }
        Field::Integer => return None,
    };
    match text.get(i) {
        None => Some((r, c, v, i + 1)),
        Some(b'\n') => Some((r, c, v, i + 1)),
        Some(_) => None,
    }
}

/// Parses the entry lines of `text` (whole lines), the first being line `line`; returns the
/// number of the line after its last (the lines are counted as they are read, so that the
/// caller need not count them first).
///
/// This is the import's hot loop: it works on the bytes (the indices parsed by hand, only a
/// value field and a comment line checked as UTF-8), where a `str` per line cost a UTF-8
/// validation and a whitespace split of every line.
fn parse_piece<T: IoValue>(
    text: &[u8],
    mut line: u64,
    field_kind: Field,
    shape: [u64; 2],
    out: &mut Vec<(u64, u64, T)>,
) -> std::result::Result<u64, LineError> {
    // the trimmed line, for messages
    fn shown(s: &[u8]) -> String {
        format!("{:?}", String::from_utf8_lossy(s).trim())
    }
    out.reserve(text.len() / 24);
    let mut pos = 0;
    while pos <= text.len() {
        // the common line, `row col value` (or `row col` for a pattern) of plain decimals
        // between single spaces, read in one pass; any other line, and every error, takes
        // the general reading below
        if let Some((r, c, v, next)) = fast_line::<T>(text, pos, field_kind, shape) {
            out.push((r - 1, c - 1, v));
            line += 1;
            pos = next;
            continue;
        }
        let end = text[pos..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(text.len(), |p| pos + p);
        let raw = &text[pos..end];
        pos = end + 1;
        let this = line;
        line += 1;
        let mut at = 0;
        let Some(first) = field(raw, &mut at) else {
            // a blank line
            continue;
        };
        if first[0] == b'%' {
            if std::str::from_utf8(raw).is_err() {
                return Err((this, "not UTF-8 text".into(), None));
            }
            continue;
        }
        let Some(second) = field(raw, &mut at) else {
            if std::str::from_utf8(raw).is_err() {
                return Err((this, "not UTF-8 text".into(), None));
            }
            return Err((this, format!("{} is not an entry", shown(raw)), None));
        };
        let (Some(r), Some(c)) = (parse_index(first), parse_index(second)) else {
            if std::str::from_utf8(raw).is_err() {
                return Err((this, "not UTF-8 text".into(), None));
            }
            return Err((
                this,
                format!("{}: indices must be positive integers", shown(raw)),
                None,
            ));
        };
        if r == 0 || c == 0 {
            return Err((this, format!("{}: indices start at 1", shown(raw)), None));
        }
        if r > shape[0] || c > shape[1] {
            return Err((this, String::new(), Some((r - 1, c - 1))));
        }
        let v = match field_kind {
            Field::Pattern => T::one(),
            _ => {
                let Some(f) = field(raw, &mut at) else {
                    return Err((this, format!("{} has no value", shown(raw)), None));
                };
                // a plain decimal of a `real` file: read from its bytes (the same value)
                let fast = match field_kind {
                    Field::Real => T::parse_fast(f),
                    _ => None,
                };
                if let Some(v) = fast {
                    v
                } else {
                    let Ok(f) = std::str::from_utf8(f) else {
                        return Err((this, "not UTF-8 text".into(), None));
                    };
                    if field_kind == Field::Integer && !T::INTEGER && f.contains(['.', 'e', 'E']) {
                        return Err((this, format!("{f:?} is not an integer"), None));
                    }
                    match T::parse(f) {
                        Some(v) => v,
                        None => {
                            return Err((
                                this,
                                format!(
                                    "{f:?} is not a value of {}",
                                    <T as zarr_array::Element>::DATA_TYPE
                                ),
                                None,
                            ))
                        }
                    }
                }
            }
        };
        if field(raw, &mut at).is_some() {
            if std::str::from_utf8(raw).is_err() {
                return Err((this, "not UTF-8 text".into(), None));
            }
            return Err((
                this,
                format!("{} has more fields than an entry", shown(raw)),
                None,
            ));
        }
        out.push((r - 1, c - 1, v));
    }
    Ok(line)
}

impl EntrySource for MtxSource {
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
        if self.symmetric {
            self.nnz.saturating_mul(2)
        } else {
            self.nnz
        }
    }
    fn row_major(&self) -> bool {
        false
    }

    fn feed<T: IoValue>(
        &mut self,
        sink: &mut (impl FnMut(u64, u64, T) -> Result<(), Reject> + Send),
        _progress: Option<&Progress>,
    ) -> Result<()> {
        // the reader tells the progress (opened with it); the blocks of text in flight (three)
        // and the entries parsed from two take about a tenth of the budget
        let block = (self.budget / 32).clamp(1 << 16, 8 << 20) as usize;
        let pieces = rayon::current_num_threads().max(1) * 2;
        // the file is read (and decompressed) on a thread of its own, a block ahead of the
        // parsing, which runs on rayon's threads; the entries parsed from a block go to the
        // sink on a thread of their own too, while the next block is parsed
        let shown = self.shown.clone();
        let mut reader: Box<dyn BufRead + Send> =
            std::mem::replace(&mut self.reader, Box::new(std::io::empty()));
        let reader = &mut *reader;
        let (tx, rx) = std::sync::mpsc::sync_channel::<Result<Vec<u8>>>(1);
        let (ptx, prx) = std::sync::mpsc::sync_channel::<Vec<Parsed<T>>>(0);
        let (nnz, symmetric, shape) = (self.nnz, self.symmetric, self.shape);
        let place = self.shown.clone();
        let seen = std::thread::scope(|scope| -> Result<u64> {
            scope.spawn(move || read_blocks(reader, &shown, block, &tx));
            // the entries in the file's order: the first error in that order is the one
            // reported, whichever thread meets it
            let pusher = scope.spawn(move || -> Result<u64> {
                let mut seen: u64 = 0;
                for parsed in prx {
                    for piece in parsed {
                        let entries = piece.map_err(|(line, reason, out)| {
                            let at = format!("{place} line {line}");
                            match out {
                                Some((row, col)) => SparseIoError::OutOfRange {
                                    place: at,
                                    row,
                                    col,
                                    rows: shape[0],
                                    cols: shape[1],
                                },
                                None => malformed(at, reason),
                            }
                        })?;
                        for (r, c, v) in entries {
                            seen += 1;
                            if seen > nnz {
                                return Err(malformed(
                                    &place,
                                    format!("more entries than the {nnz} of the size line"),
                                ));
                            }
                            sink(r, c, v).map_err(|rej| rej.at(&place, r, c, shape))?;
                            if symmetric && r != c {
                                sink(c, r, v).map_err(|rej| rej.at(&place, c, r, shape))?;
                            }
                        }
                    }
                }
                Ok(seen)
            });
            let mut failed = None;
            for msg in rx {
                let mut buf = match msg {
                    Ok(b) => b,
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                };
                if buf.last() == Some(&b'\n') {
                    buf.pop();
                }
                if buf.is_empty() {
                    continue;
                }
                // cut into pieces at line ends, each with its first line number
                let mut cuts = vec![0usize];
                let step = buf.len() / pieces + 1;
                while let Some(&last) = cuts.last() {
                    let target = last + step;
                    if target >= buf.len() {
                        break;
                    }
                    match buf[target..].iter().position(|&b| b == b'\n') {
                        Some(p) => cuts.push(target + p + 1),
                        None => break,
                    }
                }
                cuts.push(buf.len() + 1);
                let field = self.field;
                // each piece numbered from 0, its lines counted as it is parsed; then the
                // numbers made the file's, piece by piece
                let pieces: Vec<_> = cuts
                    .par_windows(2)
                    .map(|w| {
                        let end = (w[1] - 1).min(buf.len());
                        let mut out = Vec::new();
                        parse_piece::<T>(&buf[w[0]..end], 0, field, shape, &mut out)
                            .map(|lines| (out, lines))
                    })
                    .collect();
                let mut line = self.line;
                let parsed: Vec<Parsed<T>> = pieces
                    .into_iter()
                    .map(|piece| match piece {
                        Ok((out, lines)) => {
                            line += lines;
                            Ok(out)
                        }
                        Err((at, reason, out)) => Err((line + at, reason, out)),
                    })
                    .collect();
                self.line = line;
                drop(buf);
                if ptx.send(parsed).is_err() {
                    // the sink's thread stopped at an error: that error
                    break;
                }
            }
            drop(ptx);
            let pushed = pusher.join().unwrap_or_else(|_| {
                Err(malformed(&self.shown, "the thread of the entries panicked"))
            });
            // an error of the entries before a read error comes first
            match (pushed, failed) {
                (Err(e), _) | (Ok(_), Some(e)) => Err(e),
                (Ok(seen), None) => Ok(seen),
            }
        })?;
        if seen < self.nnz {
            return Err(malformed(
                &self.shown,
                format!(
                    "truncated: {seen} entries of the {} its size line states",
                    self.nnz
                ),
            ));
        }
        Ok(())
    }
}

/// The entries parsed from one piece of a block, or the error of its line.
type Parsed<T> = std::result::Result<Vec<(u64, u64, T)>, LineError>;

/// Reads `reader` in blocks of whole lines (about `block` bytes) into `tx`, until its end,
/// an error, or the receiver hangs up.
fn read_blocks(
    reader: &mut (dyn BufRead + Send),
    shown: &str,
    block: usize,
    tx: &std::sync::mpsc::SyncSender<Result<Vec<u8>>>,
) {
    let mut carry: Vec<u8> = Vec::new();
    loop {
        let want = block.saturating_sub(carry.len()).max(1 << 12);
        let mut buf = std::mem::take(&mut carry);
        // room for the whole block at once (a carried line start has only its own size): grown
        // by the read, each block would be copied as it doubled; a line longer than a block
        // still grows by doubling
        buf.reserve(want);
        let got = match reader.take(want as u64).read_to_end(&mut buf) {
            Ok(n) => n,
            Err(e) => {
                let err = match e.kind() {
                    std::io::ErrorKind::UnexpectedEof
                    | std::io::ErrorKind::InvalidInput
                    | std::io::ErrorKind::InvalidData => {
                        malformed(shown, format!("a damaged or truncated file ({e})"))
                    }
                    _ => io(shown)(e),
                };
                let _ = tx.send(Err(err));
                return;
            }
        };
        if got == 0 {
            // the last line, when the file does not end with a line end
            if !buf.is_empty() {
                let _ = tx.send(Ok(buf));
            }
            return;
        }
        match buf.iter().rposition(|&b| b == b'\n') {
            Some(end) => carry = buf.split_off(end + 1),
            None if buf.len() > block.max(1 << 20) * 4 => {
                let _ = tx.send(Err(malformed(shown, "a line longer than the read block")));
                return;
            }
            // a block without a line end: read on
            None => {
                carry = buf;
                continue;
            }
        }
        if tx.send(Ok(buf)).is_err() {
            return;
        }
    }
}

/// Imports a Matrix Market file into an array made by `create`.
///
/// # Errors
/// See [`SparseIoError`]; on error the array is removed.
pub fn import_mtx(path: &Path, opts: &ImportOptions, create: Create<'_>) -> Result<Array> {
    check_budget(opts.max_memory)?;
    let src = open(path, opts)?;
    import(src, opts, create)
}

/// A file written under a temporary name beside its destination, renamed there when complete
/// (nothing half-written is left under the destination's name).
pub(crate) struct Staged {
    pub(crate) file: tempfile::NamedTempFile,
    dest: std::path::PathBuf,
}

impl Staged {
    pub(crate) fn new(dest: &Path) -> Result<Self> {
        let shown = dest.display().to_string();
        let dir = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => std::path::PathBuf::from("."),
        };
        let file = tempfile::Builder::new()
            .prefix(".zarr-export-")
            .tempfile_in(&dir)
            .map_err(io(&shown))?;
        Ok(Staged {
            file,
            dest: dest.to_path_buf(),
        })
    }

    pub(crate) fn commit(self) -> Result<()> {
        let shown = self.dest.display().to_string();
        self.file.as_file().sync_all().map_err(io(&shown))?;
        self.file
            .persist(&self.dest)
            .map_err(|e| io(&shown)(e.error))?;
        Ok(())
    }
}

/// Exports a 2-d sparse array as a Matrix Market coordinate file (`general`, `real` or
/// `integer`), gzip-compressed when `path` ends in `.gz`.
///
/// # Errors
/// See [`SparseIoError`]; on error no file is left at `path`.
pub fn export_mtx(array: &Array, path: &Path, opts: &ExportOptions) -> Result<()> {
    check_budget(opts.max_memory)?;
    let dt = array.data_type();
    with_value_type!(
        dt,
        T => export_as::<T>(array, path, opts),
        Err(SparseIoError::Unsupported { place: array.path().to_string(), what: format!("the data type {dt}") })
    )
}

fn export_as<T: IoValue>(array: &Array, path: &Path, opts: &ExportOptions) -> Result<()> {
    let shown = path.display().to_string();
    let shape = matrix_shape(array)?;
    let nnz = nnz_of(array)?;
    let staged = Staged::new(path)?;
    let file = staged.file.as_file().try_clone().map_err(io(&shown))?;
    let gz = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gz"));
    let buffered = std::io::BufWriter::with_capacity(1 << 16, file);
    let mut out = if gz {
        Out::Gz(flate2::write::GzEncoder::new(
            buffered,
            flate2::Compression::new(4),
        ))
    } else {
        Out::Plain(buffered)
    };
    let field = if T::INTEGER { "integer" } else { "real" };
    write!(
        out,
        "%%MatrixMarket matrix coordinate {field} general\n%written by zarr-rs\n{} {} {nnz}\n",
        shape[0], shape[1]
    )
    .map_err(io(&shown))?;
    let mut written = 0u64;
    crate::core::for_each_band::<T>(array, opts.max_memory / 2, |r0, m| {
        let rows = m.rows();
        let pieces = (rayon::current_num_threads() * 4).max(1);
        let step = rows.div_ceil(pieces).max(1);
        let texts: Vec<Vec<u8>> = (0..rows)
            .step_by(step)
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(|start| {
                let mut text = Vec::new();
                for i in start..(start + step).min(rows) {
                    let Some(row) = m.outer_view(i) else { continue };
                    for (c, &v) in row.iter() {
                        let _ = write!(text, "{} {} ", r0 + i as u64 + 1, c + 1);
                        v.format(&mut text);
                        text.push(b'\n');
                    }
                }
                text
            })
            .collect();
        for t in texts {
            out.write_all(&t).map_err(io(&shown))?;
        }
        written += m.nnz() as u64;
        if let Some(p) = &opts.progress {
            p(m.nnz() as u64, nnz);
        }
        Ok(())
    })?;
    out.finish().map_err(io(&shown))?;
    if written != nnz {
        return Err(malformed(
            array.path(),
            format!("the array changed during the export ({nnz} entries counted, {written} read)"),
        ));
    }
    staged.commit()
}

/// An export's output: plain or gzip-compressed.
pub(crate) enum Out<W: Write> {
    Plain(W),
    Gz(flate2::write::GzEncoder<W>),
}

impl<W: Write> Write for Out<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Out::Plain(w) => w.write(buf),
            Out::Gz(w) => w.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Out::Plain(w) => w.flush(),
            Out::Gz(w) => w.flush(),
        }
    }
}

impl<W: Write> Out<W> {
    /// Ends the stream (the gzip trailer) and flushes it.
    pub(crate) fn finish(self) -> std::io::Result<()> {
        match self {
            Out::Plain(mut w) => w.flush(),
            Out::Gz(w) => w.finish()?.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parser before the byte-level one (a `str` per line): the reference.
    fn reference<T: IoValue>(
        text: &[u8],
        mut line: u64,
        field: Field,
        shape: [u64; 2],
        out: &mut Vec<(u64, u64, T)>,
    ) -> std::result::Result<(), LineError> {
        for raw in text.split(|&b| b == b'\n') {
            let this = line;
            line += 1;
            let Ok(s) = std::str::from_utf8(raw) else {
                return Err((this, "not UTF-8 text".into(), None));
            };
            let s = s.trim();
            if s.is_empty() || s.starts_with('%') {
                continue;
            }
            let mut w = s.split_ascii_whitespace();
            let (Some(r), Some(c)) = (w.next(), w.next()) else {
                return Err((this, format!("{s:?} is not an entry"), None));
            };
            let (Ok(r), Ok(c)) = (r.parse::<u64>(), c.parse::<u64>()) else {
                return Err((
                    this,
                    format!("{s:?}: indices must be positive integers"),
                    None,
                ));
            };
            if r == 0 || c == 0 {
                return Err((this, format!("{s:?}: indices start at 1"), None));
            }
            if r > shape[0] || c > shape[1] {
                return Err((this, String::new(), Some((r - 1, c - 1))));
            }
            let v = match field {
                Field::Pattern => T::one(),
                _ => {
                    let Some(f) = w.next() else {
                        return Err((this, format!("{s:?} has no value"), None));
                    };
                    if field == Field::Integer && !T::INTEGER && f.contains(['.', 'e', 'E']) {
                        return Err((this, format!("{f:?} is not an integer"), None));
                    }
                    match T::parse(f) {
                        Some(v) => v,
                        None => {
                            return Err((
                                this,
                                format!(
                                    "{f:?} is not a value of {}",
                                    <T as zarr_array::Element>::DATA_TYPE
                                ),
                                None,
                            ))
                        }
                    }
                }
            };
            if w.next().is_some() {
                return Err((this, format!("{s:?} has more fields than an entry"), None));
            }
            out.push((r - 1, c - 1, v));
        }
        Ok(())
    }

    /// A random entry line: mostly well-formed, with the ways lines go wrong.
    fn line(rng: &mut zarr_testkit::Rng) -> Vec<u8> {
        const INDEX: &[&str] = &[
            "1",
            "2",
            "7",
            "+3",
            "0",
            "-1",
            "12",
            "99",
            "1.5",
            "",
            "x",
            "18446744073709551615",
            "18446744073709551616",
            "0007",
            "+",
            "1e2",
        ];
        const VALUE: &[&str] = &[
            "1",
            "-2.5",
            "3e4",
            "1.0E-3",
            "1d2",
            "-4D-1",
            "nan",
            "inf",
            "-Infinity",
            "x",
            "7",
            "+8",
            "0.1",
            "1e400",
            "",
            "1,5",
            "42",
        ];
        const SPACE: &[&str] = &[" ", "  ", "\t", " \t "];
        let mut out = Vec::new();
        match rng.below(15) {
            0 => return b"".to_vec(),
            1 => return b"% a comment".to_vec(),
            2 => return b"  %x 1 2".to_vec(),
            3 => return b"\r".to_vec(),
            // `row col [value]` between single spaces (the one-pass reading's lines, and its
            // near misses)
            4..=6 => {
                let fields = [2, 3, 3, 3][rng.index(4)];
                for k in 0..fields {
                    if k > 0 {
                        out.push(b' ');
                    }
                    let pool = if k < 2 { INDEX } else { VALUE };
                    out.extend_from_slice(pool[rng.index(pool.len())].as_bytes());
                }
                return out;
            }
            _ => {}
        }
        if rng.chance(0.2) {
            out.extend_from_slice(SPACE[rng.index(SPACE.len())].as_bytes());
        }
        let fields = [1, 2, 3, 3, 3, 3, 4][rng.index(7)];
        for k in 0..fields {
            if k > 0 {
                out.extend_from_slice(SPACE[rng.index(SPACE.len())].as_bytes());
            }
            let pool = if k < 2 { INDEX } else { VALUE };
            out.extend_from_slice(pool[rng.index(pool.len())].as_bytes());
        }
        if rng.chance(0.05) {
            let at = rng.index(out.len() + 1);
            out.insert(at, 0xff);
        }
        if rng.chance(0.2) {
            out.extend_from_slice(b" \r");
        }
        out
    }

    fn same<T: IoValue>(a: &[(u64, u64, T)], b: &[(u64, u64, T)]) -> bool {
        // NaN is not equal to itself: compare the bits
        a.len() == b.len()
            && a.iter().zip(b).all(|(x, y)| {
                x.0 == y.0 && x.1 == y.1 && bytemuck::bytes_of(&x.2) == bytemuck::bytes_of(&y.2)
            })
    }

    fn check<T: IoValue>(seed: u64, field: Field) {
        let mut rng = zarr_testkit::Rng::new(seed);
        let shape = [10, 20];
        for case in 0..1000 {
            let n = 1 + rng.index(6);
            let lines: Vec<Vec<u8>> = (0..n).map(|_| line(&mut rng)).collect();
            let text = lines.join(&b'\n');
            let (mut a, mut b) = (Vec::new(), Vec::new());
            let fast = parse_piece::<T>(&text, 5, field, shape, &mut a).map(drop);
            let slow = reference::<T>(&text, 5, field, shape, &mut b);
            let shown = String::from_utf8_lossy(&text);
            match (&fast, &slow) {
                (Ok(()), Ok(())) => assert!(same(&a, &b), "case {case} {shown:?}: {a:?} {b:?}"),
                (Err(f), Err(s)) => {
                    // the same line refused; the same reason unless the text is not UTF-8
                    // (the reference checks a whole line first, the parser a field)
                    assert_eq!(f.0, s.0, "case {case} {shown:?}: {f:?} {s:?}");
                    if std::str::from_utf8(&text).is_ok() {
                        assert_eq!(f, s, "case {case} {shown:?}");
                    }
                }
                _ => panic!("case {case} {shown:?}: {fast:?} against {slow:?}"),
            }
        }
    }

    #[test]
    fn the_byte_parser_reads_lines_as_the_str_parser_did() {
        check::<f64>(40, Field::Real);
        check::<f32>(41, Field::Real);
        check::<i64>(42, Field::Integer);
        check::<f64>(43, Field::Integer);
        check::<u8>(44, Field::Pattern);
        check::<f32>(45, Field::Pattern);
    }
}
