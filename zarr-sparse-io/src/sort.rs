//! The external sort of entries: `(major, minor, value)` triples collected in a buffer of a
//! fixed byte size; a full buffer is sorted (in parallel) and spilled as a sorted run to an
//! unnamed temporary file, and the runs are merged k ways at the end. Input that fits the
//! buffer is sorted in memory and never touches the disk.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, Write};
use std::path::PathBuf;

use rayon::slice::ParallelSliceMut;

use crate::error::{io, Result, SparseIoError};
use crate::value::IoValue;

/// One entry: major coordinate (the row for CSR order), minor coordinate, value.
pub type Entry<T> = (u64, u64, T);

/// Bytes an entry takes in the sort buffer.
pub(crate) fn entry_bytes<T>() -> u64 {
    std::mem::size_of::<Entry<T>>() as u64
}

/// The external sorter: see the [module documentation](self).
#[derive(Debug)]
pub struct Sorter<T> {
    buf: Vec<Entry<T>>,
    cap: usize,
    runs: Vec<File>,
    dir: Option<PathBuf>,
    /// The merge's read buffers share this many bytes.
    merge_bytes: u64,
}

impl<T: IoValue> Sorter<T> {
    /// A sorter whose buffer takes at most `budget` bytes, spilling runs into `dir` (the
    /// system's temporary directory by default).
    ///
    /// # Errors
    /// A budget too small for a useful buffer (256 entries).
    pub fn new(budget: u64, dir: Option<PathBuf>) -> Result<Self> {
        let cap = budget / entry_bytes::<T>();
        if cap < 256 {
            return Err(SparseIoError::OverBudget {
                what: "the sort buffer".into(),
                needed: 256 * entry_bytes::<T>(),
                budget,
            });
        }
        Ok(Sorter {
            buf: Vec::new(),
            cap: usize::try_from(cap).unwrap_or(usize::MAX),
            runs: Vec::new(),
            dir,
            // the merge runs beside the writer: its read buffers take a quarter of the share
            merge_bytes: budget / 4,
        })
    }

    /// Adds an entry.
    ///
    /// # Errors
    /// A run that cannot be written.
    #[inline]
    pub fn push(&mut self, e: Entry<T>) -> Result<()> {
        if self.buf.len() == self.cap {
            self.spill()?;
        }
        if self.buf.capacity() == self.buf.len() {
            // grow by doubling, never past the cap (the buffer is the budget)
            let want = (self.buf.len().max(1024) * 2).min(self.cap);
            self.buf.reserve_exact(want - self.buf.len());
        }
        self.buf.push(e);
        Ok(())
    }

    /// How many runs were spilled so far.
    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    fn spill(&mut self) -> Result<()> {
        self.buf.par_sort_unstable_by_key(|e| (e.0, e.1));
        let dir = self.dir.clone().unwrap_or_else(std::env::temp_dir);
        let shown = dir.display().to_string();
        let file = tempfile::tempfile_in(&dir).map_err(io(&shown))?;
        let mut w = BufWriter::with_capacity(1 << 16, file);
        for (a, b, v) in self.buf.drain(..) {
            w.write_all(&a.to_le_bytes()).map_err(io(&shown))?;
            w.write_all(&b.to_le_bytes()).map_err(io(&shown))?;
            w.write_all(bytemuck::bytes_of(&v)).map_err(io(&shown))?;
        }
        let mut file = w.into_inner().map_err(|e| io(&shown)(e.into_error()))?;
        file.rewind().map_err(io(&shown))?;
        self.runs.push(file);
        // the buffer's memory goes back while the next one fills
        self.buf = Vec::new();
        Ok(())
    }

    /// The entries in (major, minor) order.
    ///
    /// # Errors
    /// A run that cannot be written.
    pub fn finish(mut self) -> Result<Sorted<T>> {
        if self.runs.is_empty() {
            self.buf.par_sort_unstable_by_key(|e| (e.0, e.1));
            return Ok(Sorted(Inner::Memory(
                std::mem::take(&mut self.buf).into_iter(),
            )));
        }
        if !self.buf.is_empty() {
            self.spill()?;
        }
        let per_run = (self.merge_bytes / self.runs.len() as u64).clamp(256, 1 << 20) as usize;
        let mut readers: Vec<RunReader<T>> = self
            .runs
            .into_iter()
            .map(|f| RunReader::new(f, per_run))
            .collect();
        let mut heap = BinaryHeap::with_capacity(readers.len());
        for (i, r) in readers.iter_mut().enumerate() {
            if let Some((a, b, _)) = r.peek()? {
                heap.push(Reverse((a, b, i)));
            }
        }
        Ok(Sorted(Inner::Merge { readers, heap }))
    }
}

/// A spilled run read back.
#[derive(Debug)]
struct RunReader<T> {
    r: BufReader<File>,
    next: Option<Entry<T>>,
}

impl<T: IoValue> RunReader<T> {
    fn new(f: File, cap: usize) -> Self {
        RunReader {
            r: BufReader::with_capacity(cap, f),
            next: None,
        }
    }

    fn peek(&mut self) -> Result<Option<Entry<T>>> {
        if self.next.is_none() {
            self.next = self.read()?;
        }
        Ok(self.next)
    }

    fn read(&mut self) -> Result<Option<Entry<T>>> {
        let mut ab = [0u8; 16];
        match self.r.read_exact(&mut ab) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(io("a spilled run")(e)),
        }
        let mut v = T::zeroed();
        self.r
            .read_exact(bytemuck::bytes_of_mut(&mut v))
            .map_err(io("a spilled run"))?;
        let a = u64::from_le_bytes(ab[..8].try_into().unwrap_or_default());
        let b = u64::from_le_bytes(ab[8..].try_into().unwrap_or_default());
        Ok(Some((a, b, v)))
    }
}

/// Sorted entries: from memory, or merged from spilled runs.
#[derive(Debug)]
pub struct Sorted<T>(Inner<T>);

#[derive(Debug)]
enum Inner<T> {
    /// Everything fitted the buffer.
    Memory(std::vec::IntoIter<Entry<T>>),
    /// A k-way merge of the runs.
    Merge {
        /// The runs.
        readers: Vec<RunReader<T>>,
        /// The next entry of each run, smallest first.
        heap: BinaryHeap<Reverse<(u64, u64, usize)>>,
    },
}

impl<T: IoValue> Iterator for Sorted<T> {
    type Item = Result<Entry<T>>;

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            Inner::Memory(it) => it.next().map(Ok),
            Inner::Merge { readers, heap } => {
                let Reverse((_, _, i)) = heap.pop()?;
                let e = readers[i].next.take()?;
                match readers[i].peek() {
                    Ok(Some((a, b, _))) => heap.push(Reverse((a, b, i))),
                    Ok(None) => {}
                    Err(err) => return Some(Err(err)),
                }
                Some(Ok(e))
            }
        }
    }
}

/// Bytes a banded entry costs while its band is put in order: the entry read back and its
/// copy in order.
fn banded_entry_bytes<T>() -> u64 {
    2 * entry_bytes::<T>()
}

/// Bytes a spilled entry takes: its major's offset in its band and its minor as two
/// little-endian `u32` when both fit (`compact`), else two `u64`; then the value.
fn record_bytes<T>(compact: bool) -> usize {
    (if compact { 8 } else { 16 }) + std::mem::size_of::<T>()
}

/// The most bands a [`BandSorter`] cuts the majors into.
const MAX_BANDS: u64 = 4096;

/// Entries a band aims at: its entries and permutation (1.75 MiB for `float64`) stay in a
/// core's cache while the band is put in order.
const BAND_ENTRIES: u64 = 1 << 16;

/// The smallest piece of a band written to the spill file at once.
const MIN_PIECE: u64 = 4 << 10;

/// The external sort of entries whose majors (rows) lie in `0..majors`, for input that
/// comes in another order than row-major (a column-major Matrix Market file, a CSC matrix):
/// a bucket sort by bands of majors, no comparisons and no k-way merge.
///
/// The majors are cut into bands of a power of two of majors each, sized from the count the
/// source announces (a hint, never trusted for an allocation) so that a band's entries fit
/// the cache and the budget. Each entry is appended to its band's buffer as it comes; a
/// full buffer is written to one temporary file as a piece of its band. At the end each band
/// is read back alone (its pieces, then the buffer's tail), in the order its entries came,
/// and put in order by a stable counting sort of its majors: entries that came in minor
/// order (column-major input) need no further sort; a major whose minors are not in order is
/// sorted alone. Half the budget holds the buffers while entries come; at the end a third
/// holds a band being read (three are in flight while the reading runs ahead of the writer).
/// A band over its third (a count that lied, a skewed matrix) goes through the general
/// [`Sorter`] in that third instead. Input that fits the buffers never touches the disk.
/// An entry is spilled as its major's offset in its band and its minor, 32 bits each when
/// the bands and the minors allow (16 bytes a `float64` entry instead of 24).
#[derive(Debug)]
pub(crate) struct BandSorter<T> {
    /// Per band, the entries not yet written (records of [`record_bytes`]).
    bufs: Vec<Vec<u8>>,
    /// Records of two `u32` (else two `u64`).
    compact: bool,
    minors: u64,
    /// The bytes of a band's buffer.
    piece: usize,
    /// Bytes a band being read may take.
    load_budget: u64,
    majors: u64,
    /// Bands hold `1 << shift` majors.
    shift: u32,
    dir: Option<PathBuf>,
    spill: Option<(File, String)>,
    /// The end of the spill file.
    spilled: u64,
    /// Per band, its pieces in the file: (offset, entries).
    segments: Vec<Vec<(u64, u64)>>,
    _value: std::marker::PhantomData<T>,
}

impl<T: IoValue> BandSorter<T> {
    /// A sorter of entries with majors below `majors` and minors below `minors`, about
    /// `count` of them, in `budget` bytes.
    ///
    /// # Errors
    /// A budget too small for a useful buffer.
    pub(crate) fn new(
        budget: u64,
        dir: Option<PathBuf>,
        majors: u64,
        minors: u64,
        count: u64,
    ) -> Result<Self> {
        // the buffers take half while entries come; at the end they are written out and up
        // to three bands are in flight (one read, one queued, one written)
        let (bufs_budget, load_budget) = (budget / 2, budget / 3);
        if bufs_budget < MIN_PIECE || load_budget / entry_bytes::<T>() < 256 {
            return Err(SparseIoError::OverBudget {
                what: "the sort buffer".into(),
                needed: 2 * MIN_PIECE.max(256 * entry_bytes::<T>()),
                budget,
            });
        }
        let majors = majors.max(1);
        // enough bands for a band to fit half its budget (room for uneven ones), and for
        // one to fit the cache
        let for_memory = count
            .saturating_mul(banded_entry_bytes::<T>())
            .div_ceil(load_budget / 2);
        let for_cache = count.div_ceil(BAND_ENTRIES);
        let most = MAX_BANDS.min(bufs_budget / MIN_PIECE).max(1);
        let want = for_memory.max(for_cache).clamp(1, most).min(majors);
        let shift = majors.div_ceil(want).next_power_of_two().trailing_zeros();
        let compact = shift <= 32 && minors <= 1 << 32;
        let rec = record_bytes::<T>(compact) as u64;
        let bands = ((majors - 1) >> shift) + 1;
        let piece = (bufs_budget / bands / rec).max(1) * rec;
        let bands = usize::try_from(bands).unwrap_or(usize::MAX);
        Ok(BandSorter {
            bufs: vec![Vec::new(); bands],
            compact,
            minors,
            piece: usize::try_from(piece).unwrap_or(usize::MAX),
            load_budget,
            majors,
            shift,
            dir,
            spill: None,
            spilled: 0,
            segments: vec![Vec::new(); bands],
            _value: std::marker::PhantomData,
        })
    }

    /// Adds an entry (its major below the sorter's `majors`).
    ///
    /// # Errors
    /// A major out of range; a piece that cannot be written.
    #[inline]
    pub(crate) fn push(&mut self, e: Entry<T>) -> Result<()> {
        if e.0 >= self.majors || e.1 >= self.minors {
            return Err(SparseIoError::Malformed {
                place: "the sort".into(),
                reason: format!(
                    "entry ({}, {}) outside 0..{} x 0..{}",
                    e.0, e.1, self.majors, self.minors
                ),
            });
        }
        let b = (e.0 >> self.shift) as usize;
        let rec = record_bytes::<T>(self.compact);
        let buf = &mut self.bufs[b];
        if buf.capacity() == 0 {
            buf.reserve_exact(self.piece);
        }
        if self.compact {
            // the offset in the band (below 2^shift <= 2^32) and the minor (below 2^32)
            let offset = e.0 - ((b as u64) << self.shift);
            buf.extend_from_slice(&(offset | e.1 << 32).to_le_bytes());
        } else {
            buf.extend_from_slice(&e.0.to_le_bytes());
            buf.extend_from_slice(&e.1.to_le_bytes());
        }
        buf.extend_from_slice(bytemuck::bytes_of(&e.2));
        if buf.len() + rec > self.piece {
            self.write_piece(b)?;
        }
        Ok(())
    }

    /// Writes band `b`'s buffer to the spill file.
    fn write_piece(&mut self, b: usize) -> Result<()> {
        if self.spill.is_none() {
            let dir = self.dir.clone().unwrap_or_else(std::env::temp_dir);
            let shown = dir.display().to_string();
            let file = tempfile::tempfile_in(&dir).map_err(io(&shown))?;
            self.spill = Some((file, shown));
        }
        let Some((file, shown)) = self.spill.as_mut() else {
            return Ok(());
        };
        let buf = &mut self.bufs[b];
        file.write_all(buf).map_err(io(&*shown))?;
        let n = (buf.len() / record_bytes::<T>(self.compact)) as u64;
        self.segments[b].push((self.spilled, n));
        self.spilled += buf.len() as u64;
        buf.clear();
        Ok(())
    }

    /// The entries in (major, minor) order.
    ///
    /// # Errors
    /// A piece that cannot be written.
    pub(crate) fn finish(mut self) -> Result<Banded<T>> {
        if self.spill.is_some() {
            // the buffers' tails join the file: their memory goes to the writer
            for b in 0..self.bufs.len() {
                if !self.bufs[b].is_empty() {
                    self.write_piece(b)?;
                }
                self.bufs[b] = Vec::new();
            }
        }
        Ok(Banded {
            sorter: self,
            next_band: 0,
            merged: None,
        })
    }

    /// Band `b` in order.
    fn load(&mut self, b: usize) -> Result<Band<T>> {
        let segments = std::mem::take(&mut self.segments[b]);
        let tail = std::mem::take(&mut self.bufs[b]);
        let rec = record_bytes::<T>(self.compact);
        let n = segments.iter().map(|s| s.1).sum::<u64>() + (tail.len() / rec) as u64;
        let band0 = (b as u64) << self.shift;
        let band_len = (1u64 << self.shift).min(self.majors - band0);
        // the counting sort's counts are sized by the band's majors: used only when the band
        // is not far sparser than its majors
        let counting = band_len <= n.saturating_mul(4);
        let need = n * banded_entry_bytes::<T>() + if counting { band_len * 4 } else { 0 };
        if need > self.load_budget || n > u64::from(u32::MAX) {
            // a band over its budget: the general external sort, in the same budget
            let mut s = Sorter::<T>::new(self.load_budget, self.dir.clone())?;
            self.read_band(band0, &segments, &tail, |e| s.push(e))?;
            drop(tail);
            return Ok(Band::Merged(s.finish()?));
        }
        let mut entries = Vec::with_capacity(n as usize);
        self.read_band(band0, &segments, &tail, |e| {
            entries.push(e);
            Ok(())
        })?;
        drop(tail);
        if !counting {
            entries.par_sort_unstable_by_key(|e| (e.0, e.1));
            return Ok(Band::Memory(entries));
        }
        // a stable counting sort by major into a second buffer (the entries of a major keep
        // their input order; each major's run is written in sequence)
        let mut starts = vec![0u32; band_len as usize + 1];
        for e in &entries {
            starts[(e.0 - band0) as usize + 1] += 1;
        }
        for i in 0..band_len as usize {
            starts[i + 1] += starts[i];
        }
        let mut sorted: Vec<Entry<T>> = vec![(0, 0, T::zeroed()); entries.len()];
        {
            let mut next = starts.clone();
            for &e in &entries {
                let k = (e.0 - band0) as usize;
                sorted[next[k] as usize] = e;
                next[k] += 1;
            }
        }
        drop(entries);
        // each major's minors in order (column-major input has them so already)
        for w in starts.windows(2) {
            let row = &mut sorted[w[0] as usize..w[1] as usize];
            if !row.windows(2).all(|p| p[0].1 <= p[1].1) {
                row.sort_unstable_by_key(|e| e.1);
            }
        }
        Ok(Band::Memory(sorted))
    }

    /// Reads the pieces of the band that starts at major `band0`, then its buffer's tail,
    /// entry by entry, into `f`.
    fn read_band(
        &mut self,
        band0: u64,
        segments: &[(u64, u64)],
        tail: &[u8],
        mut f: impl FnMut(Entry<T>) -> Result<()>,
    ) -> Result<()> {
        let compact = self.compact;
        let rec = record_bytes::<T>(compact);
        let mut each = |bytes: &[u8]| -> Result<()> {
            for r in bytes.chunks_exact(rec) {
                let first = u64::from_le_bytes(r[..8].try_into().unwrap_or_default());
                let (a, m, at) = if compact {
                    (band0 + (first & 0xffff_ffff), first >> 32, 8)
                } else {
                    let m = u64::from_le_bytes(r[8..16].try_into().unwrap_or_default());
                    (first, m, 16)
                };
                let mut v = T::zeroed();
                bytemuck::bytes_of_mut(&mut v).copy_from_slice(&r[at..]);
                f((a, m, v))?;
            }
            Ok(())
        };
        if let Some((file, shown)) = self.spill.as_mut() {
            let mut buf = vec![0u8; rec * 8192];
            for &(off, count) in segments {
                file.seek(std::io::SeekFrom::Start(off))
                    .map_err(io(&*shown))?;
                let mut left = count as usize;
                while left > 0 {
                    let k = left.min(8192);
                    file.read_exact(&mut buf[..k * rec]).map_err(io(&*shown))?;
                    each(&buf[..k * rec])?;
                    left -= k;
                }
            }
        }
        each(tail)
    }
}

/// One band's entries in order.
#[derive(Debug)]
enum Band<T> {
    Memory(Vec<Entry<T>>),
    Merged(Sorted<T>),
}

/// The entries of a [`BandSorter`] in (major, minor) order, band after band.
#[derive(Debug)]
pub(crate) struct Banded<T> {
    sorter: BandSorter<T>,
    next_band: usize,
    merged: Option<Sorted<T>>,
}

impl<T: IoValue> Banded<T> {
    /// The next entries in order (a band, or part of one); `None` after the last.
    ///
    /// # Errors
    /// A spill that cannot be read or written.
    pub(crate) fn next_entries(&mut self) -> Result<Option<Vec<Entry<T>>>> {
        loop {
            if let Some(m) = &mut self.merged {
                let part = m
                    .by_ref()
                    .take(BAND_ENTRIES as usize)
                    .collect::<Result<Vec<_>>>()?;
                if !part.is_empty() {
                    return Ok(Some(part));
                }
                self.merged = None;
            }
            if self.next_band >= self.sorter.bufs.len() {
                return Ok(None);
            }
            let b = self.next_band;
            self.next_band += 1;
            match self.sorter.load(b)? {
                Band::Memory(v) if v.is_empty() => {}
                Band::Memory(v) => return Ok(Some(v)),
                Band::Merged(m) => self.merged = Some(m),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spilled_runs_merge_into_order() {
        let _s = crate::tests::serial();
        let mut rng = zarr_testkit::Rng::new(7);
        let mut s = Sorter::<f32>::new(256 * entry_bytes::<f32>(), None).unwrap();
        let mut all = Vec::new();
        for _ in 0..5000 {
            let e = (rng.below(100), rng.below(100), rng.below(1000) as f32);
            all.push(e);
            s.push(e).unwrap();
        }
        assert!(s.runs() >= 19);
        let got: Vec<_> = s.finish().unwrap().map(Result::unwrap).collect();
        all.sort_by_key(|e| (e.0, e.1));
        let key = |v: &[Entry<f32>]| v.iter().map(|e| (e.0, e.1)).collect::<Vec<_>>();
        assert_eq!(key(&got), key(&all));
        let mut in_mem = Sorter::<f32>::new(1 << 20, None).unwrap();
        in_mem.push((3, 1, 1.0)).unwrap();
        in_mem.push((1, 2, 2.0)).unwrap();
        assert_eq!(in_mem.runs(), 0);
        let got: Vec<_> = in_mem.finish().unwrap().map(Result::unwrap).collect();
        assert_eq!(got, vec![(1, 2, 2.0), (3, 1, 1.0)]);
    }

    /// Everything a [`BandSorter`] gives back, band after band.
    fn drain(s: BandSorter<f32>) -> Vec<Entry<f32>> {
        let mut out = Vec::new();
        let mut b = s.finish().unwrap();
        while let Some(part) = b.next_entries().unwrap() {
            assert!(!part.is_empty());
            out.extend(part);
        }
        out
    }

    #[test]
    fn bands_sort_every_order_against_a_reference() {
        let _s = crate::tests::serial();
        let mut rng = zarr_testkit::Rng::new(41);
        let (mut spilled, mut merged, mut sparse, mut wide) = (0, 0, 0, 0);
        for case in 0..300 {
            let rows = 1 + rng.below(if case % 10 == 0 { 1 << 40 } else { 400 });
            // minors past 32 bits: the wide records
            let cols = 1 + rng.below(300) + if case % 7 == 3 { 1 << 33 } else { 0 };
            let n = rng.below(6000) as usize;
            let mut all: Vec<Entry<f32>> = (0..n)
                .map(|k| {
                    // a few rows far denser than the rest (skewed bands), some duplicates
                    let r = if rng.below(8) == 0 {
                        rows / 2
                    } else {
                        rng.below(rows)
                    };
                    (r, rng.below(cols), k as f32)
                })
                .collect();
            match case % 3 {
                0 => all.sort_by_key(|e| (e.0, e.1)),
                // column-major, as 10x Genomics writes
                1 => all.sort_by_key(|e| (e.1, e.0)),
                _ => {}
            }
            // the announced count may lie either way
            let count = match case % 4 {
                0 => n as u64,
                1 => (n / 50) as u64,
                2 => n as u64 * 20,
                _ => rng.below(1 << 50),
            };
            let budget = [20 << 10, 64 << 10, 1 << 20][case % 3];
            let mut s = BandSorter::<f32>::new(budget, None, rows, cols, count).unwrap();
            for &e in &all {
                s.push(e).unwrap();
            }
            spilled += usize::from(s.spill.is_some());
            wide += usize::from(!s.compact && s.spill.is_some());
            let bands = s.bufs.len();
            // which bands go through the general sort, or the comparison sort
            for b in 0..bands {
                let band0 = (b as u64) << s.shift;
                let len = (1u64 << s.shift).min(rows - band0);
                let k = all.iter().filter(|e| e.0 >> s.shift == b as u64).count() as u64;
                let counting = len <= k * 4;
                let need = k * banded_entry_bytes::<f32>() + if counting { len * 4 } else { 0 };
                if need > s.load_budget {
                    merged += 1;
                } else if k > 0 && !counting {
                    sparse += 1;
                }
            }
            let got = drain(s);
            let mut want = all.clone();
            want.sort_by_key(|e| (e.0, e.1));
            let keys = |v: &[Entry<f32>]| v.iter().map(|e| (e.0, e.1)).collect::<Vec<_>>();
            assert_eq!(keys(&got), keys(&want), "case {case}");
            // the values too (the entries of a position given twice in any order)
            let mut g: Vec<_> = got.iter().map(|e| (e.0, e.1, e.2.to_bits())).collect();
            let mut w: Vec<_> = want.iter().map(|e| (e.0, e.1, e.2.to_bits())).collect();
            g.sort_unstable();
            w.sort_unstable();
            assert_eq!(g, w, "case {case}");
        }
        // every path was taken: spills, bands over their budget, bands sorted by comparison
        assert!(
            spilled > 50 && merged > 5 && sparse > 5 && wide > 5,
            "{spilled} {merged} {sparse} {wide}"
        );
        // a major or minor outside the sorter's range is refused, not a panic
        let mut s = BandSorter::<f32>::new(1 << 20, None, 10, 7, 5).unwrap();
        assert!(s.compact);
        assert!(s.push((10, 0, 1.0)).is_err());
        assert!(s.push((0, 7, 1.0)).is_err());
        assert!(s.push((0, u64::MAX, 1.0)).is_err());
        assert!(BandSorter::<f32>::new(1 << 10, None, 10, 7, 5).is_err());
    }
}
