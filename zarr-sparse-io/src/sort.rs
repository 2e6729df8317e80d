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
}
