//! The streaming core: [`MatrixWriter`] writes entries in row-major order into a 2-d
//! `sparse_layout` array, many chunk-row bands at a time (the chunks of a flush are encoded in
//! parallel); [`for_each_band`] walks an array band by band for export; [`import`] joins a
//! source of entries (sorted, or sorted on the way by the bucket sort `BandSorter`) to the writer,
//! removing the array again when anything fails.

use std::path::PathBuf;
use std::sync::Arc;

use zarr_array::ndarray::ArrayView2;
use zarr_array::zarr_layout_sparse::sprs::CsMat;
use zarr_array::zarr_layout_sparse::Format;
use zarr_array::{Array, ArrayBuilder, DataType, ExtensionDef, Region};

use crate::error::{array, Result, SparseIoError};
use crate::sort::{BandSorter, Entry, Sorter};
use crate::value::{with_value_type, IoValue};

/// The default memory limit: 1 GiB, as the `zarr` command's other transfers.
pub const DEFAULT_MAX_MEMORY: u64 = 1 << 30;

/// The smallest memory limit accepted.
pub const MIN_MAX_MEMORY: u64 = 1 << 20;

/// A progress callback, told `(increment, total)`: bytes of a Matrix Market file read, or
/// entries read (other imports) or written (exports), of the total the source announces.
pub type Progress = Arc<dyn Fn(u64, u64) + Send + Sync>;

/// How to import.
#[derive(Clone)]
pub struct ImportOptions {
    /// The most memory the conversion's data may take at a time (bytes).
    pub max_memory: u64,
    /// The chunk shape [default: rows that hold about 256 Ki entries, up to 65536 columns].
    pub chunks: Option<Vec<u64>>,
    /// The chunks' sparse layout [default: CSR].
    pub layout: Format,
    /// The array's data type, for Matrix Market input [default: `float64` for `real` and
    /// `pattern`, `int64` for `integer`, as SciPy's `mmread`]; other formats keep theirs.
    pub data_type: Option<DataType>,
    /// Where the external sort spills its runs [default: the system's temporary directory].
    pub temp_dir: Option<PathBuf>,
    /// Told of the input consumed.
    pub progress: Option<Progress>,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            max_memory: DEFAULT_MAX_MEMORY,
            chunks: None,
            layout: Format::Csr,
            data_type: None,
            temp_dir: None,
            progress: None,
        }
    }
}

impl std::fmt::Debug for ImportOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImportOptions")
            .field("max_memory", &self.max_memory)
            .field("chunks", &self.chunks)
            .field("layout", &self.layout)
            .field("data_type", &self.data_type)
            .field("temp_dir", &self.temp_dir)
            .finish_non_exhaustive()
    }
}

/// How to export.
#[derive(Clone)]
pub struct ExportOptions {
    /// The most memory the conversion's data may take at a time (bytes).
    pub max_memory: u64,
    /// Where the external sort (column-major outputs) spills its runs.
    pub temp_dir: Option<PathBuf>,
    /// Told of the entries written.
    pub progress: Option<Progress>,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions {
            max_memory: DEFAULT_MAX_MEMORY,
            temp_dir: None,
            progress: None,
        }
    }
}

impl std::fmt::Debug for ExportOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExportOptions")
            .field("max_memory", &self.max_memory)
            .field("temp_dir", &self.temp_dir)
            .finish_non_exhaustive()
    }
}

pub(crate) fn check_budget(budget: u64) -> Result<()> {
    if budget < MIN_MAX_MEMORY {
        return Err(SparseIoError::OverBudget {
            what: "a sparse conversion".into(),
            needed: MIN_MAX_MEMORY,
            budget,
        });
    }
    Ok(())
}

/// The array an import proposes: the source's shape and data type, the chunks and layout
/// asked for (or the defaults).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proposed {
    /// The matrix's shape.
    pub shape: Vec<u64>,
    /// The values' data type.
    pub data_type: DataType,
    /// The chunk shape.
    pub chunks: Vec<u64>,
    /// The chunks' sparse layout.
    pub layout: Format,
}

/// The zstd level of an import's chunks: 1.
///
/// Level 1 (zstd's fast end) rather than the builder's 0 (zstd's default, 3): the chunks of a
/// sparse matrix are mostly values that barely compress (random float32: 109.0 MB at either
/// level for the 20000 x 50000 benchmark's `.npz`; its `.mtx.gz` as float64, whose low bytes
/// are zeros, 190.6 MB against 185.9 MB, 2.5 % more) and 16-bit column indices, while level
/// 3 took 13-16 % of a `.mtx.gz` import's time and level 1 about half that. Row reads
/// decompress either as fast.
pub const IMPORT_ZSTD_LEVEL: i64 = 1;

impl Proposed {
    /// The compressors an import proposes: zstd at [`IMPORT_ZSTD_LEVEL`], no checksum.
    pub fn compressors(&self) -> Vec<ExtensionDef> {
        let mut config = serde_json::Map::new();
        config.insert("level".into(), IMPORT_ZSTD_LEVEL.into());
        config.insert("checksum".into(), false.into());
        vec![ExtensionDef::with_configuration("zstd", config)]
    }

    /// The builder of the proposed array: `sparse_layout`, then [`Proposed::compressors`].
    pub fn builder(&self) -> ArrayBuilder {
        ArrayBuilder::new(self.shape.clone(), self.data_type)
            .chunk_shape(self.chunks.clone())
            .sparse(self.layout)
            .compressors(self.compressors())
    }
}

/// What a [`Create`] callback fails with.
pub type CreateError = Box<dyn std::error::Error + Send + Sync>;

/// Creates the target array of an import (the caller chooses the store, the path and any
/// codecs, shards or Zarr format; `Proposed::builder` is the default).
pub type Create<'a> = &'a mut dyn FnMut(&Proposed) -> std::result::Result<Array, CreateError>;

/// Bytes an entry costs the writer while a flush runs: the buffered entry, the coordinate
/// block, zarr-array's grouping by chunk and the encoding's positions and values.
fn writer_entry_bytes<T>() -> u64 {
    64 + 4 * std::mem::size_of::<T>() as u64
}

/// A flush: the entries' coordinates (row, column pairs) and values.
type Job<T> = (Vec<u64>, Vec<T>);

/// The writer's thread: writes each flush handed to it, stops at the first error.
#[derive(Debug)]
struct Worker<T> {
    tx: std::sync::mpsc::SyncSender<Job<T>>,
    handle: std::thread::JoinHandle<Result<()>>,
}

/// Bytes an entry costs an export band: the decoded chunk and the CSR built from it.
fn reader_entry_bytes<T>() -> u64 {
    48 + 2 * std::mem::size_of::<T>() as u64
}

/// Entries per chunk the default chunking aims at.
const CHUNK_ENTRIES: u64 = 1 << 18;

/// The default chunk shape of a `rows` x `cols` matrix of about `nnz` entries: whole rows up
/// to 65536 columns (16-bit column indices), as many rows as hold about 256 Ki entries (fewer
/// when the memory limit asks), so that a row read decodes few chunks.
pub fn default_chunks<T>(rows: u64, cols: u64, nnz: u64, budget: u64) -> Vec<u64> {
    let ccols = cols.clamp(1, 1 << 16);
    let col_chunks = cols.div_ceil(ccols).max(1);
    // entries per row of one chunk column
    let per_row = (nnz / rows.max(1) / col_chunks).max(1);
    // a band of chunk rows is held by the writer: at most an eighth of the budget
    let band_entries = (budget / 8 / writer_entry_bytes::<T>() / col_chunks).max(1);
    let target = CHUNK_ENTRIES.min(band_entries);
    let crows = (target / per_row).clamp(1, rows.max(1));
    vec![crows, ccols]
}

/// Why an entry was refused by a sink; the caller names the place.
#[derive(Debug)]
pub(crate) enum Reject {
    OutOfRange,
    Duplicate,
    Unsorted { prev: (u64, u64) },
    Failed(Box<SparseIoError>),
}

impl Reject {
    /// The error of entry (`row`, `col`) at `place`.
    pub(crate) fn at(
        self,
        place: impl Into<String>,
        row: u64,
        col: u64,
        shape: [u64; 2],
    ) -> SparseIoError {
        let place = place.into();
        match self {
            Reject::OutOfRange => SparseIoError::OutOfRange {
                place,
                row,
                col,
                rows: shape[0],
                cols: shape[1],
            },
            Reject::Duplicate => SparseIoError::Duplicate { place, row, col },
            Reject::Unsorted { prev } => SparseIoError::Unsorted {
                place,
                row,
                col,
                prev_row: prev.0,
                prev_col: prev.1,
            },
            Reject::Failed(e) => *e,
        }
    }
}

/// Writes entries that come in strictly increasing (row, column) order into a fresh 2-d
/// `sparse_layout` array: see the [module documentation](self).
#[derive(Debug)]
pub struct MatrixWriter<T> {
    array: Array,
    shape: [u64; 2],
    band: u64,
    cap: usize,
    /// The buffered entries' (row, column) pairs, one after the other.
    coords: Vec<u64>,
    vals: Vec<T>,
    last: Option<(u64, u64)>,
    written: u64,
    /// Writes the flushes while the next entries come (started at the first flush).
    worker: Option<Worker<T>>,
}

impl<T> Drop for MatrixWriter<T> {
    /// A writer dropped on an error waits for its thread, so that nothing is written after
    /// the caller removes what the import wrote.
    fn drop(&mut self) {
        if let Some(w) = self.worker.take() {
            drop(w.tx);
            let _ = w.handle.join();
        }
    }
}

impl<T: IoValue> MatrixWriter<T> {
    /// A writer of `array` (2-d, sparse chunks, no entries yet) holding at most `budget`
    /// bytes of entries.
    ///
    /// # Errors
    /// An array that is not 2-d or not sparse, a budget below one chunk-row band's floor.
    pub fn new(array: Array, budget: u64) -> Result<Self> {
        let ctx = format!("writing {}", array.path());
        array.sparse().map_err(crate::error::array(&ctx))?;
        let shape: [u64; 2] = array
            .shape()
            .try_into()
            .map_err(|_| SparseIoError::Unsupported {
                place: array.path().to_string(),
                what: format!("a {}-d array (sparse matrices are 2-d)", array.rank()),
            })?;
        let band = array.chunk_shape().map_or(1, |c| c[0].max(1));
        // a flush's entries on the writer's thread, and the next ones buffered beside them
        let per_entry = writer_entry_bytes::<T>() + 16 + std::mem::size_of::<T>() as u64;
        let cap = (budget / per_entry).max(1024);
        Ok(MatrixWriter {
            array,
            shape,
            band,
            cap: usize::try_from(cap).unwrap_or(usize::MAX),
            coords: Vec::new(),
            vals: Vec::new(),
            last: None,
            written: 0,
            worker: None,
        })
    }

    /// Adds the entry (`row`, `col`): after the one before it in row-major order, inside the
    /// matrix.
    #[inline]
    pub(crate) fn push(&mut self, row: u64, col: u64, v: T) -> Result<(), Reject> {
        if row >= self.shape[0] || col >= self.shape[1] {
            return Err(Reject::OutOfRange);
        }
        if let Some(prev) = self.last {
            if (row, col) <= prev {
                return Err(if (row, col) == prev {
                    Reject::Duplicate
                } else {
                    Reject::Unsorted { prev }
                });
            }
        }
        self.last = Some((row, col));
        if self.vals.len() == self.cap {
            self.flush_full().map_err(|e| Reject::Failed(Box::new(e)))?;
        }
        self.coords.extend_from_slice(&[row, col]);
        self.vals.push(v);
        Ok(())
    }

    /// The buffer is full: writes the bands before the last entry's band, or everything
    /// when that band alone fills the buffer (its chunks are then merged with the rest of it
    /// at the next flush).
    fn flush_full(&mut self) -> Result<()> {
        let last_row = self.last.map_or(0, |l| l.0);
        let band_start = last_row / self.band * self.band;
        // the first entry of the last entry's band (rows increase)
        let (mut lo, mut hi) = (0, self.vals.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.coords[2 * mid] < band_start {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let n = if lo == 0 { self.vals.len() } else { lo };
        self.flush(n)
    }

    /// Hands the first `n` buffered entries to the writer's thread (which writes them while
    /// the next ones come; it takes them once it has written the flush before).
    fn flush(&mut self, n: usize) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        // the buffers go to the writer's thread as they are; the entries after the first
        // `n` (part of a band) start the next ones
        let mut coords = std::mem::take(&mut self.coords);
        let mut vals = std::mem::take(&mut self.vals);
        if n < vals.len() {
            self.coords.reserve_exact(coords.len().max(1024));
            self.coords.extend_from_slice(&coords[2 * n..]);
            self.vals.reserve_exact(vals.len().max(512));
            self.vals.extend_from_slice(&vals[n..]);
            coords.truncate(2 * n);
            vals.truncate(n);
        }
        self.written += n as u64;
        if self.worker.is_none() {
            let (tx, rx) = std::sync::mpsc::sync_channel::<Job<T>>(0);
            let array = self.array.clone();
            let handle = std::thread::spawn(move || -> Result<()> {
                for (coords, vals) in rx {
                    write_job(&array, &coords, &vals)?;
                }
                Ok(())
            });
            self.worker = Some(Worker { tx, handle });
        }
        let sent = self
            .worker
            .as_ref()
            .is_some_and(|w| w.tx.send((coords, vals)).is_ok());
        if sent {
            Ok(())
        } else {
            // the thread stopped at an error: that error
            self.join().and(Err(SparseIoError::Malformed {
                place: self.array.path().to_string(),
                reason: "the writer stopped".into(),
            }))
        }
    }

    /// Waits for the writer's thread; its error.
    fn join(&mut self) -> Result<()> {
        match self.worker.take() {
            Some(w) => {
                drop(w.tx);
                w.handle.join().unwrap_or_else(|_| {
                    Err(SparseIoError::Malformed {
                        place: self.array.path().to_string(),
                        reason: "the writer's thread panicked".into(),
                    })
                })
            }
            None => Ok(()),
        }
    }

    /// Writes what is left; the array.
    ///
    /// # Errors
    /// Store and codec errors.
    pub fn finish(mut self) -> Result<Array> {
        let n = self.vals.len();
        self.flush(n)?;
        self.join()?;
        Ok(self.array.clone())
    }
}

/// Writes one flush's entries (`coords`: (row, column) pairs) into `array`: zarr-array
/// groups entries in row-major order by chunk in one pass, without a sort.
fn write_job<T: IoValue>(array: &Array, coords: &[u64], vals: &[T]) -> Result<()> {
    let n = vals.len();
    let view = ArrayView2::from_shape((n, 2), coords)
        .map_err(|e| SparseIoError::Malformed {
            place: array.path().to_string(),
            reason: e.to_string(),
        })?
        .reversed_axes();
    let ctx = format!("writing {}", array.path());
    array
        .sparse()
        .and_then(|s| s.write_coo(view, vals))
        .map_err(crate::error::array(ctx))
}

/// A source of entries: its header, then its entries fed to a sink.
pub(crate) trait EntrySource {
    /// Where the source is (for messages).
    fn place(&self) -> String;
    /// The matrix's shape.
    fn shape(&self) -> [u64; 2];
    /// Its data type.
    fn data_type(&self) -> DataType;
    /// About how many entries it holds (sizes the default chunks only: untrusted).
    fn nnz_hint(&self) -> u64;
    /// Whether its entries come in strictly increasing row-major order (else they are sorted
    /// on the way).
    fn row_major(&self) -> bool;
    /// Feeds every entry to `sink`, naming the place of any it refuses; tells `progress` of
    /// the input consumed.
    fn feed<T: IoValue>(
        &mut self,
        sink: &mut (impl FnMut(u64, u64, T) -> Result<(), Reject> + Send),
        progress: Option<&Progress>,
    ) -> Result<()>;
}

/// The key prefix of the node at `path`.
pub(crate) fn prefix_of(path: &str) -> String {
    let p = path.trim_matches('/');
    if p.is_empty() {
        String::new()
    } else {
        format!("{p}/")
    }
}

/// The keys under a prefix at one moment: what a failed conversion restores to by deleting
/// every key it added (a directory's other files are never touched).
pub(crate) struct Snapshot {
    prefix: String,
    pub(crate) keys: std::collections::HashSet<String>,
}

impl Snapshot {
    pub(crate) fn take(
        store: &Arc<dyn zarr_array::zarr_store::Store>,
        prefix: &str,
    ) -> Result<Self> {
        let keys = store
            .list_prefix(prefix)
            .map_err(|e| array(format!("listing {prefix}"))(e.into()))?;
        Ok(Snapshot {
            prefix: prefix.to_string(),
            keys: keys.into_iter().collect(),
        })
    }

    /// Deletes the keys added since (best effort: the conversion's error is what is
    /// reported).
    pub(crate) fn restore(&self, store: &Arc<dyn zarr_array::zarr_store::Store>) {
        if let Ok(now) = store.list_prefix(&self.prefix) {
            for k in now.into_iter().filter(|k| !self.keys.contains(k)) {
                let _ = store.delete(&k);
            }
        }
    }
}

/// Imports `src` into an array made by `create`: see the [module documentation](self).
pub(crate) fn import(
    mut src: impl EntrySource,
    opts: &ImportOptions,
    create: Create<'_>,
) -> Result<Array> {
    check_budget(opts.max_memory)?;
    let dt = src.data_type();
    with_value_type!(
        dt,
        T => import_as::<T>(&mut src, opts, create),
        Err(SparseIoError::Unsupported {
            place: src.place(),
            what: format!("the data type {dt}"),
        })
    )
}

fn import_as<T: IoValue>(
    src: &mut impl EntrySource,
    opts: &ImportOptions,
    create: Create<'_>,
) -> Result<Array> {
    let shape = src.shape();
    let budget = opts.max_memory;
    let chunks = match &opts.chunks {
        Some(c) => c.clone(),
        None => default_chunks::<T>(shape[0], shape[1], src.nnz_hint(), budget),
    };
    let proposed = Proposed {
        shape: shape.to_vec(),
        data_type: <T as zarr_array::Element>::DATA_TYPE,
        chunks,
        layout: opts.layout,
    };
    let array = create(&proposed).map_err(|source| SparseIoError::Create {
        place: src.place(),
        source,
    })?;
    let store = array.store().clone();
    let prefix = prefix_of(array.path());
    // keys that were there before (not the node's metadata, just created): kept on failure
    let metadata = [".zarray", ".zattrs", "zarr.json"].map(|k| format!("{prefix}{k}"));
    let mut before = Snapshot::take(&store, &prefix)?;
    before.keys.retain(|k| !metadata.contains(k));
    let result = fill::<T>(src, array, opts);
    if result.is_err() {
        // nothing half-written is left behind; the import's error is the one reported
        before.restore(&store);
    }
    result
}

fn fill<T: IoValue>(
    src: &mut impl EntrySource,
    array: Array,
    opts: &ImportOptions,
) -> Result<Array> {
    let shape = src.shape();
    let budget = opts.max_memory;
    let progress = opts.progress.as_ref();
    if src.row_major() {
        let mut w = MatrixWriter::<T>::new(array, budget)?;
        src.feed::<T>(&mut |r, c, v| w.push(r, c, v), progress)?;
        return w.finish();
    }
    // half the budget sorts, half writes; the sort cuts the rows into bands that each fit
    // its half (no k-way merge)
    let mut sorter = BandSorter::<T>::new(
        budget / 2,
        opts.temp_dir.clone(),
        shape[0],
        shape[1],
        src.nnz_hint(),
    )?;
    src.feed::<T>(
        &mut |r, c, v| {
            if r >= shape[0] || c >= shape[1] {
                return Err(Reject::OutOfRange);
            }
            sorter
                .push((r, c, v))
                .map_err(|e| Reject::Failed(Box::new(e)))
        },
        progress,
    )?;
    let mut w = MatrixWriter::<T>::new(array, budget / 2)?;
    let place = src.place();
    let mut sorted = sorter.finish()?;
    // the bands are read back and put in order on a thread of their own, a band or two
    // ahead of the writer
    let (tx, rx) = std::sync::mpsc::sync_channel::<Result<Vec<Entry<T>>>>(1);
    std::thread::scope(|scope| -> Result<()> {
        scope.spawn(move || loop {
            let next = match sorted.next_entries() {
                Ok(Some(v)) => Ok(v),
                Ok(None) => return,
                Err(e) => Err(e),
            };
            let failed = next.is_err();
            if tx.send(next).is_err() || failed {
                return;
            }
        });
        for entries in rx {
            for (r, c, v) in entries? {
                w.push(r, c, v).map_err(|rej| rej.at(&place, r, c, shape))?;
            }
        }
        Ok(())
    })?;
    w.finish()
}

/// Walks a 2-d sparse array in bands of whole chunk rows (as many as the budget holds,
/// measured on the bands read so far), each read as one CSR matrix (its chunks decoded in
/// parallel) and handed to `f` with its first row.
///
/// # Errors
/// An array that is not 2-d or sparse, store and codec errors, `f`'s errors.
pub fn for_each_band<T: IoValue>(
    array: &Array,
    budget: u64,
    mut f: impl FnMut(u64, CsMat<T>) -> Result<()>,
) -> Result<()> {
    let ctx = format!("reading {}", array.path());
    let s = array.sparse().map_err(crate::error::array(&ctx))?;
    let shape = matrix_shape(array)?;
    let step = array.chunk_shape().map_or(1, |c| c[0].max(1));
    let entries = (budget / reader_entry_bytes::<T>()).max(1);
    // a band's row pointers (8 bytes a row) take at most a sixteenth of the budget
    let most_bands = (budget / 16 / 8 / step).max(1);
    let mut k = 1u64;
    let mut r0 = 0;
    while r0 < shape[0] {
        let n = k.saturating_mul(step).min(shape[0] - r0);
        let region = Region::new(vec![r0, 0], vec![n, shape[1]])
            .map_err(|e| crate::error::array(&ctx)(e.into()))?;
        let m = s
            .read_csr::<T>(&region)
            .map_err(crate::error::array(&ctx))?;
        let per_band = (m.nnz() as u64).div_ceil(n.div_ceil(step)).max(1);
        let empty = m.nnz() == 0;
        f(r0, m)?;
        r0 += n;
        // empty bands (a matrix far taller than its entries) are crossed ever faster
        k = if empty {
            k.saturating_mul(2)
        } else {
            (entries / per_band).max(1)
        }
        .min(most_bands);
    }
    Ok(())
}

/// The shape of a 2-d array.
pub(crate) fn matrix_shape(array: &Array) -> Result<[u64; 2]> {
    array
        .shape()
        .try_into()
        .map_err(|_| SparseIoError::Unsupported {
            place: array.path().to_string(),
            what: format!("a {}-d array (sparse matrices are 2-d)", array.rank()),
        })
}

/// The entries of `array` in column-major order (`(col, row, value)`), through the external
/// sort.
pub(crate) fn column_major<T: IoValue>(
    array: &Array,
    opts: &ExportOptions,
) -> Result<crate::sort::Sorted<T>> {
    let mut sorter = Sorter::<T>::new(opts.max_memory / 2, opts.temp_dir.clone())?;
    for_each_band::<T>(array, opts.max_memory / 2, |r0, m| {
        for (i, row) in m.outer_iterator().enumerate() {
            for (c, &v) in row.iter() {
                sorter.push((c as u64, r0 + i as u64, v))?;
            }
        }
        Ok(())
    })?;
    sorter.finish()
}

/// The entries in row-major order, collected band by band into a callback.
pub(crate) fn row_major<T: IoValue>(
    array: &Array,
    budget: u64,
    mut f: impl FnMut(Entry<T>) -> Result<()>,
) -> Result<()> {
    for_each_band::<T>(array, budget, |r0, m| {
        for (i, row) in m.outer_iterator().enumerate() {
            for (c, &v) in row.iter() {
                f((r0 + i as u64, c as u64, v))?;
            }
        }
        Ok(())
    })
}

/// The number of stored entries of a sparse array.
pub(crate) fn nnz_of(array: &Array) -> Result<u64> {
    let ctx = format!("counting the entries of {}", array.path());
    array
        .sparse()
        .and_then(|s| s.nnz())
        .map_err(crate::error::array(ctx))
}
