//! Writes that never build the dense array: [`SparseArray::write_coo`] and
//! [`SparseArray::write_sprs`]. Entries are grouped by chunk, then by leaf chunk; each leaf
//! the write touches is rewritten from its stored entries merged with the new ones, through
//! the chain's leaf rewrite (the other leaves of a shard keep their stored bytes). A 2-d
//! `write_coo` whose entries come in strictly increasing row-major order (an import's band of
//! rows) is grouped in one pass: each chunk row is a run of the entries, and each chunk's
//! entries come out in its C order, so nothing is regrouped or sorted.

use std::collections::BTreeMap;
use std::ops::Deref;

use ndarray::ArrayView2;
use rayon::prelude::*;
use zarr_codecs::{ChunkIn, CodecError, EncodeOptions};
use zarr_grid::geometry::{linear_index, regular_chunks_in_region, unravel_index, Region};
use zarr_layout_sparse::encode_positions;
use zarr_layout_sparse::sprs::{CsMatBase, SpIndex};

use super::{intersect, SparseArray, SparseElement};
use crate::error::{ArrayError, Result};

/// New entries for one stored value: (local C-order key, value), sorted and unique, and the
/// local region whose stored entries are dropped first.
struct Edit<T> {
    entries: Vec<(u64, T)>,
    clear: Option<Region>,
}

/// How many chunks the grouping of new entries by chunk (`group_by_chunk`) keeps collecting
/// entries for at once.
const MAX_OPEN_RUNS: usize = 64;

impl<T> Default for Edit<T> {
    fn default() -> Self {
        Edit {
            entries: Vec::new(),
            clear: None,
        }
    }
}

impl SparseArray<'_> {
    /// Writes entries given as coordinates (array positions, `(ndim, nnz)`: column `k` is
    /// entry `k`) and values, without building the dense array: entries are grouped by chunk
    /// and each chunk is rewritten from its stored entries merged with the new ones (new
    /// values win). A value equal to the fill value removes the entry; a chunk left without
    /// entries is deleted. Chunks are rewritten in parallel. Entries of a 2-d array given in
    /// strictly increasing row-major order (`coords` in standard layout) are grouped without
    /// a sort.
    ///
    /// # Errors
    /// A `T` other than the array's data type, coordinates of the wrong shape, outside the
    /// array or repeated, store and codec errors.
    pub fn write_coo<T: SparseElement>(
        &self,
        coords: ArrayView2<'_, u64>,
        values: &[T],
    ) -> Result<()> {
        self.array.check_type::<T>()?;
        let ndim = self.array.rank();
        if coords.nrows() != ndim || coords.ncols() != values.len() {
            return Err(ArrayError::ShapeMismatch {
                expected: vec![ndim as u64, values.len() as u64],
                got: coords.shape().iter().map(|&n| n as u64).collect(),
            });
        }
        if ndim == 2 && coords.ncols() == values.len() {
            // rows then columns, or (row, column) pairs (the transpose of an (nnz, 2) block)
            let work = if let (Some(rows), Some(cols)) =
                (coords.row(0).to_slice(), coords.row(1).to_slice())
            {
                self.group_row_major(|k| rows[k], |k| cols[k], values)?
            } else if let Some(pairs) = coords.t().to_slice() {
                self.group_row_major(|k| pairs[2 * k], |k| pairs[2 * k + 1], values)?
            } else {
                None
            };
            if let Some(work) = work {
                let fill: T = self.fill();
                return work
                    .into_par_iter()
                    .try_for_each(|(chunk, edit)| self.write_chunk(&chunk, edit, fill));
            }
        }
        let mut positions = Vec::with_capacity(ndim * values.len());
        for k in 0..values.len() {
            positions.extend(coords.column(k).iter().copied());
        }
        let entries = values
            .iter()
            .enumerate()
            .map(|(k, &v)| Ok((&positions[k * ndim..(k + 1) * ndim], v)));
        self.write_entries(entries, None)
    }

    /// Writes a 2-d `sprs` matrix (CSR or CSC storage, any index types, owned or a view) into
    /// the region that starts at `offset` and has the matrix's shape, without building the
    /// dense array: afterwards the region holds the matrix (its stored entries, and the fill
    /// value elsewhere: entries stored in the region before are removed). Chunks are rewritten
    /// in parallel; a chunk left without entries is deleted.
    ///
    /// # Errors
    /// A `T` other than the array's data type, an array that is not 2-d, a region outside the
    /// array, store and codec errors.
    pub fn write_sprs<T, I, Iptr, IptrS, IndS, DataS>(
        &self,
        mat: &CsMatBase<T, I, IptrS, IndS, DataS, Iptr>,
        offset: &[u64],
    ) -> Result<()>
    where
        T: SparseElement,
        I: SpIndex,
        Iptr: SpIndex,
        IptrS: Deref<Target = [Iptr]>,
        IndS: Deref<Target = [I]>,
        DataS: Deref<Target = [T]>,
    {
        self.array.check_type::<T>()?;
        if self.array.rank() != 2 || offset.len() != 2 {
            let (path, got) = if self.array.rank() == 2 {
                ("the offset".to_string(), offset.len())
            } else {
                (self.array.path().to_string(), self.array.rank())
            };
            return Err(ArrayError::RankMismatch {
                operation: "writing a sparse matrix",
                path,
                expected: 2,
                got,
            });
        }
        let region = Region::new(offset.to_vec(), vec![mat.rows() as u64, mat.cols() as u64])?;
        self.check_region(&region)?;
        // entry by entry, with no list of all the positions
        let entries = mat
            .iter()
            .map(|(&v, (r, c))| match (r.try_index(), c.try_index()) {
                (Some(r), Some(c)) => Ok(([offset[0] + r as u64, offset[1] + c as u64], v)),
                _ => Err(ArrayError::InvalidArgument {
                    what: "sparse matrix",
                    reason: "an index does not convert to usize".into(),
                }),
            });
        self.write_entries(entries, Some(&region))
    }

    /// Writes entries (`positions` entry by entry) into the sparse chunks; with `clear`, the
    /// stored entries inside that region are removed first.
    fn write_entries<T: SparseElement, P: AsRef<[u64]>>(
        &self,
        entries: impl Iterator<Item = Result<(P, T)>>,
        clear: Option<&Region>,
    ) -> Result<()> {
        let mut work = self.group_by_chunk(entries)?;
        work.par_iter_mut().try_for_each(|(chunk, edit)| {
            edit.entries.sort_unstable_by_key(|e| e.0);
            self.check_unique(chunk, &edit.entries)
        })?;
        if let Some(region) = clear.filter(|r| !r.is_empty()) {
            for part in self.array.grid.chunks_in_region(region)? {
                work.entry(part.chunk).or_default().clear = Some(part.in_chunk);
            }
        }
        let fill: T = self.fill();
        let work: Vec<(Vec<i64>, Edit<T>)> = work.into_iter().collect();
        work.into_par_iter()
            .try_for_each(|(chunk, edit)| self.write_chunk(&chunk, edit, fill))
    }

    /// The new entries by chunk, each with its C-order key in the chunk (unsorted). Entries
    /// mostly come in runs of one chunk (a matrix row's part in one chunk, a box): the last
    /// [`MAX_OPEN_RUNS`] chunks met stay open, so the grid is asked only for a chunk not among
    /// them.
    fn group_by_chunk<T: SparseElement, P: AsRef<[u64]>>(
        &self,
        entries: impl Iterator<Item = Result<(P, T)>>,
    ) -> Result<BTreeMap<Vec<i64>, Edit<T>>> {
        /// The chunk of the current run, the array position of its buffer's first element
        /// (negative for a first chunk that starts before the array) and the run's entries.
        struct Run<T> {
            chunk: Vec<i64>,
            base: Vec<i64>,
            entries: Vec<(u64, T)>,
        }
        fn flush<T>(work: &mut BTreeMap<Vec<i64>, Edit<T>>, run: Run<T>) {
            match work.get_mut(&run.chunk) {
                Some(edit) => edit.entries.extend(run.entries),
                None => {
                    let edit = Edit {
                        entries: run.entries,
                        clear: None,
                    };
                    work.insert(run.chunk, edit);
                }
            }
        }
        /// Whether `pos` lies in the chunk of `run`, with its chunk-local position in `local`.
        fn contains<T>(run: &Run<T>, pos: &[u64], chunk_shape: &[u64], local: &mut [u64]) -> bool {
            pos.iter()
                .zip(&run.base)
                .zip(chunk_shape)
                .zip(local)
                .all(|(((&p, &b), &c), l)| {
                    let off = p as i64 - b;
                    *l = off as u64;
                    off >= 0 && (off as u64) < c
                })
        }
        let ndim = self.array.rank();
        let shape = self.array.shape();
        let chunk_shape = self.array.chain.repr().shape.clone();
        let mut work: BTreeMap<Vec<i64>, Edit<T>> = BTreeMap::new();
        // the runs still open, the current one at `cur`: a matrix row crosses a few chunks
        // and the next row the same ones, so they stay open across rows and the grid is asked
        // once per chunk and band rather than once per row and chunk
        let mut open: Vec<Run<T>> = Vec::new();
        let mut cur = 0;
        let mut local = vec![0u64; ndim];
        for entry in entries {
            let (pos, v) = entry?;
            let pos = pos.as_ref();
            if pos.len() != ndim {
                return Err(ArrayError::InvalidArgument {
                    what: "sparse entry",
                    reason: format!(
                        "a position of {} coordinates in a {ndim}-d array",
                        pos.len()
                    ),
                });
            }
            for (axis, (&p, &n)) in pos.iter().zip(shape).enumerate() {
                if p >= n {
                    return Err(ArrayError::OutOfBounds {
                        axis,
                        index: i64::try_from(p).unwrap_or(i64::MAX),
                        len: n,
                    });
                }
            }
            // positions are below the shape, itself below 2^63 (the grid's checks)
            let in_cur = open
                .get(cur)
                .is_some_and(|r| contains(r, pos, &chunk_shape, &mut local));
            if !in_cur {
                match open
                    .iter()
                    .position(|r| contains(r, pos, &chunk_shape, &mut local))
                {
                    Some(i) => cur = i,
                    None => {
                        let (chunk, offset) = self.array.grid.chunk_of(pos)?;
                        let base = pos
                            .iter()
                            .zip(&offset)
                            .map(|(&p, &o)| p as i64 - o as i64)
                            .collect();
                        local.copy_from_slice(&offset);
                        if open.len() == MAX_OPEN_RUNS {
                            flush(&mut work, open.remove(0));
                        }
                        open.push(Run {
                            chunk,
                            base,
                            entries: Vec::new(),
                        });
                        cur = open.len() - 1;
                    }
                }
            }
            open[cur]
                .entries
                .push((linear_index(&local, &chunk_shape), v));
        }
        for done in open {
            flush(&mut work, done);
        }
        Ok(work)
    }

    /// The new entries of a 2-d write by chunk when they come in strictly increasing
    /// row-major order (what an import or a CSR matrix gives), `None` otherwise (the general
    /// grouping then runs, which reports a position given twice). A chunk row's entries are
    /// then one run, and each chunk's entries come out in its C order and unique: one pass,
    /// no regrouping by open runs and no sort.
    ///
    /// # Errors
    /// A position outside the array (the first in order, as the general grouping reports).
    #[allow(clippy::type_complexity)]
    fn group_row_major<T: Copy>(
        &self,
        row: impl Fn(usize) -> u64,
        col: impl Fn(usize) -> u64,
        values: &[T],
    ) -> Result<Option<Vec<(Vec<i64>, Edit<T>)>>> {
        let shape = self.array.shape();
        let n = values.len();
        let mut prev: Option<(u64, u64)> = None;
        for k in 0..n {
            let (r, c) = (row(k), col(k));
            for (axis, (p, len)) in [(r, shape[0]), (c, shape[1])].into_iter().enumerate() {
                if p >= len {
                    return Err(ArrayError::OutOfBounds {
                        axis,
                        index: i64::try_from(p).unwrap_or(i64::MAX),
                        len,
                    });
                }
            }
            if prev.is_some_and(|p| p >= (r, c)) {
                return Ok(None);
            }
            prev = Some((r, c));
        }
        let chunk_shape = &self.array.chain.repr().shape;
        let (crows, ccols) = (chunk_shape[0] as i64, chunk_shape[1] as i64);
        let mut work = Vec::new();
        let mut a = 0;
        while a < n {
            // the chunk of (row, column 0): where this chunk row and its columns start
            let (chunk0, off) = self.array.grid.chunk_of(&[row(a), 0])?;
            let base_r = row(a) as i64 - off[0] as i64;
            let base_c = -(off[1] as i64);
            let end_r = base_r + crows;
            // the first entry past this chunk row (rows increase)
            let (mut lo, mut hi) = (a + 1, n);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                if (row(mid) as i64) < end_r {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            let b = lo;
            let key = |k: usize| -> (i64, u64) {
                let lc = col(k) as i64 - base_c;
                let local = (row(k) as i64 - base_r) as u64 * ccols as u64;
                (lc / ccols, local + (lc % ccols) as u64)
            };
            let max_col = (a..b).map(&col).max().unwrap_or(0);
            if (max_col as i64 - base_c) < ccols {
                // one chunk (every matrix of at most one chunk's columns)
                let entries = (a..b).map(|k| (key(k).1, values[k])).collect();
                work.push((
                    chunk0,
                    Edit {
                        entries,
                        clear: None,
                    },
                ));
            } else {
                // by column chunk; a chunk's entries keep their (row-major) order
                let mut by: BTreeMap<i64, Vec<(u64, T)>> = BTreeMap::new();
                for (k, &v) in values.iter().enumerate().take(b).skip(a) {
                    let (j, local) = key(k);
                    by.entry(j).or_default().push((local, v));
                }
                for (j, entries) in by {
                    let chunk = vec![chunk0[0], chunk0[1] + j];
                    work.push((
                        chunk,
                        Edit {
                            entries,
                            clear: None,
                        },
                    ));
                }
            }
            a = b;
        }
        Ok(Some(work))
    }

    /// Refuses a position given twice among the sorted `entries` of `chunk`.
    fn check_unique<T>(&self, chunk: &[i64], entries: &[(u64, T)]) -> Result<()> {
        let Some(w) = entries.windows(2).find(|w| w[0].0 == w[1].0) else {
            return Ok(());
        };
        let chunk_shape = self.array.chain.repr().shape.clone();
        let mut local = vec![0; chunk_shape.len()];
        unravel_index(w[0].0, &chunk_shape, &mut local);
        let pos: Vec<i64> = match self.place_of(chunk) {
            Some(p) => p
                .origin
                .iter()
                .zip(&local)
                .map(|(o, l)| o + *l as i64)
                .collect(),
            None => local.iter().map(|&l| l as i64).collect(),
        };
        Err(ArrayError::InvalidArgument {
            what: "coordinates",
            reason: format!("position {pos:?} is given twice"),
        })
    }

    /// Applies `edit` to one stored chunk: rewritten, deleted when left without entries.
    fn write_chunk<T: SparseElement>(&self, chunk: &[i64], edit: Edit<T>, fill: T) -> Result<()> {
        let store = &self.array.store;
        let key = self.array.chunk_key(chunk);
        let Some(place) = self.place_of(chunk) else {
            return Ok(());
        };
        let existing = store.get(&key)?;
        if existing.is_none() && edit.entries.is_empty() {
            return Ok(());
        }
        let rewritten = self
            .rewrite_value(existing.as_deref(), &place.valid, edit, fill)
            .map_err(|source| ArrayError::Codec {
                context: key.clone(),
                source,
            })?;
        match rewritten {
            Some(bytes) => store.set(&key, &bytes)?,
            None if existing.is_some() => store.delete(&key)?,
            None => {}
        }
        Ok(())
    }

    /// The new bytes of one stored value (a chunk or shard) after `edit`; `None` when it
    /// ends up without entries. Only the sparse chunks (leaves) the edit touches are decoded
    /// and re-encoded; the others keep their stored bytes. Stored entries outside `valid`
    /// (outside the array) are dropped from the sparse chunks that are rewritten.
    fn rewrite_value<T: SparseElement>(
        &self,
        existing: Option<&[u8]>,
        valid: &Region,
        edit: Edit<T>,
        fill: T,
    ) -> std::result::Result<Option<Vec<u8>>, CodecError> {
        let plan = &self.plan;
        let lshape = &plan.leaf.repr().shape;
        let grid = plan.chain.leaf_grid_shape();
        let groups = self.group_by_leaf(edit);
        // a leaf wholly outside the array receives no entries
        let jobs: BTreeMap<Vec<u64>, (Region, Edit<T>)> = groups
            .into_iter()
            .filter(|(idx, _)| idx.iter().zip(&grid).all(|(i, n)| i < n))
            .filter_map(|(idx, e)| {
                let valid_leaf = intersect(valid, &plan.leaf_region(&idx))?;
                Some((idx, (valid_leaf, e)))
            })
            .collect();
        let leaves: Vec<Vec<u64>> = jobs.keys().cloned().collect();
        plan.chain.rewrite_leaves(existing, &leaves, |idx, stored| {
            let (valid_leaf, e) = &jobs[idx];
            self.rewrite_leaf(stored, lshape, valid_leaf, e, fill)
        })
    }

    /// A chunk's edit split by leaf (the chunk's C order keeps each leaf's entries sorted),
    /// with every leaf the cleared region meets (a missing one stays missing).
    fn group_by_leaf<T>(&self, edit: Edit<T>) -> BTreeMap<Vec<u64>, Edit<T>> {
        let shape = &self.plan.chain.repr().shape;
        let lshape = &self.plan.leaf.repr().shape;
        let mut groups: BTreeMap<Vec<u64>, Edit<T>> = BTreeMap::new();
        let rank = shape.len();
        if shape == lshape {
            // the chunk is its one leaf (no sharding): the keys are the leaf's already
            groups.insert(vec![0; rank], edit);
            return groups;
        }
        let (mut pos, mut idx, mut local) = (vec![0; rank], vec![0; rank], vec![0; rank]);
        for (key, v) in edit.entries {
            unravel_index(key, shape, &mut pos);
            for d in 0..rank {
                idx[d] = pos[d] / lshape[d];
                local[d] = pos[d] % lshape[d];
            }
            let entry = (linear_index(&local, lshape), v);
            match groups.get_mut(idx.as_slice()) {
                Some(group) => group.entries.push(entry),
                None => {
                    let mut group = Edit::default();
                    group.entries.push(entry);
                    groups.insert(idx.clone(), group);
                }
            }
        }
        if let Some(clear) = &edit.clear {
            for part in regular_chunks_in_region(lshape, clear) {
                let idx: Vec<u64> = part.chunk.iter().map(|&g| g as u64).collect();
                groups.entry(idx).or_default().clear = Some(part.in_chunk);
            }
        }
        groups
    }

    /// The new encoded bytes of one leaf: its stored entries inside `valid` and outside the
    /// edit's cleared region, merged with the edit's entries (which win); `None` when none is
    /// left.
    fn rewrite_leaf<T: SparseElement>(
        &self,
        existing: Option<&[u8]>,
        shape: &[u64],
        valid: &Region,
        edit: &Edit<T>,
        fill: T,
    ) -> std::result::Result<Option<Vec<u8>>, CodecError> {
        let plan = &self.plan;
        if existing.is_none() {
            // a new leaf (an import's): the edit's entries alone, those equal to the fill
            // value dropped, with no merge
            let keep = edit.entries.iter().filter(|e| !e.1.is_fill(&fill));
            let positions: Vec<u64> = keep.clone().map(|e| e.0).collect();
            if positions.is_empty() {
                return Ok(None);
            }
            let values: Vec<T> = keep.map(|e| e.1).collect();
            let bytes = encode_positions(plan.codec.layout(), shape, &positions, &values, &fill)?;
            return plan
                .leaf
                .encode(ChunkIn::Serialized(bytes), EncodeOptions::SKIP_EMPTY);
        }
        // the stored entries kept (C-order key in the leaf, value), sorted by key
        let mut stored: Vec<(u64, T)> = Vec::new();
        if let Some(bytes) = existing {
            let buffer = super::serialized(plan.leaf, bytes)?;
            let view = plan.codec.decode_sparse(buffer)?;
            stored.reserve(view.nnz());
            for (local, &v) in view.entries::<T>()? {
                let dropped = !valid.contains(&local)
                    || edit.clear.as_ref().is_some_and(|c| c.contains(&local));
                if !dropped {
                    stored.push((linear_index(&local, shape), v));
                }
            }
            // CSC stores column by column; COO and CSR are in C order already
            if !stored.is_sorted_by_key(|e| e.0) {
                stored.sort_unstable_by_key(|e| e.0);
            }
        }
        // merged with the edit's entries (sorted, unique), which win on equal keys
        let new = &edit.entries;
        let mut positions = Vec::with_capacity(stored.len() + new.len());
        let mut values = Vec::with_capacity(stored.len() + new.len());
        let (mut i, mut j) = (0, 0);
        loop {
            let (key, v) = match (stored.get(i), new.get(j)) {
                (Some(&(ks, vs)), Some(&(kn, _))) if ks < kn => {
                    i += 1;
                    (ks, vs)
                }
                (Some(&(ks, _)), Some(&(kn, vn))) => {
                    i += usize::from(ks == kn);
                    j += 1;
                    (kn, vn)
                }
                (Some(&e), None) => {
                    i += 1;
                    e
                }
                (None, Some(&e)) => {
                    j += 1;
                    e
                }
                (None, None) => break,
            };
            if !v.is_fill(&fill) {
                positions.push(key);
                values.push(v);
            }
        }
        if values.is_empty() {
            return Ok(None);
        }
        let bytes = encode_positions(plan.codec.layout(), shape, &positions, &values, &fill)?;
        plan.leaf
            .encode(ChunkIn::Serialized(bytes), EncodeOptions::SKIP_EMPTY)
    }
}
