//! Reading and writing through [`Selection`]s: the per-axis index sets are split by chunk,
//! and each chunk is decoded once, in parallel.

use std::collections::BTreeMap;

use ndarray::{ArrayD, ArrayViewD};
use rayon::prelude::*;
use zarr_codecs::{parallel, AxisSet, Block, BlockBuffer, BlockError};
use zarr_grid::geometry::{buffer_len, indices, linear_index, Region};
use zarr_store::Store;

use crate::array::{to_ndarray, Array};
use crate::element::Element;
use crate::error::{try_zeroed, ArrayError, Result};
use crate::fetch;
use crate::read::ReadInto;
use crate::selection::{normalize, AxisIndex, GridBlocks, Indexer, Selection};
use crate::source::with_part_source;
use crate::write::{index_run, Elements, FILL_INDEX, INDEX};

/// The positions of one axis that fall in one chunk: their offsets in the chunk buffer and
/// their indices in the output (or the data written), in the same order.
#[derive(Debug, Default)]
struct AxisGroup {
    offsets: Vec<u64>,
    outputs: Vec<u64>,
}

/// The points of a point selection that fall in one chunk: their positions in the chunk
/// buffer and their indices in the output, in the same order.
#[derive(Debug, Default)]
struct ChunkPoints {
    offsets: Vec<Vec<u64>>,
    outputs: Vec<u64>,
}

/// A chunk and the (buffer, output) linear positions of its selected elements.
pub(crate) type ChunkSelection = (Vec<i64>, Vec<(usize, usize)>);

/// For one axis: the chunks it touches (grid index along the axis), each with its positions.
type AxisGroups = Vec<(i64, AxisGroup)>;

impl Array {
    pub(crate) fn indexer(&self, sel: &Selection) -> Result<Indexer> {
        normalize(sel, self.shape(), &GridBlocks(&*self.grid))
    }

    /// The shape of the data `sel` reads (and a write through it takes).
    ///
    /// # Errors
    /// A selection that does not fit the array.
    pub fn selection_shape(&self, sel: &Selection) -> Result<Vec<u64>> {
        Ok(self.indexer(sel)?.output_shape())
    }

    /// The block of positions `sel` selects, when it is one (integers, slices of step 1, whole
    /// chunks): its start and shape per axis, an axis an integer selects of length 1 (the
    /// output drops it: see [`Array::selection_shape`]). None for any other selection. Reads
    /// and writes through such a selection take the region path themselves; this tells a
    /// caller that needs the region (a sparse read, the spans of Dask blocks) what it is. A
    /// block selection looks only at the chunks it names, however many the array has.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use zarr_array::{ArrayBuilder, BlockSelection, DataType, Selection};
    /// # use zarr_store::MemoryStore;
    /// let a = ArrayBuilder::new(vec![10, 6], DataType::UInt8)
    ///     .chunk_shape(vec![4, 6])
    ///     .create(Arc::new(MemoryStore::new()), "a")?;
    /// let blocks = Selection::Blocks(vec![BlockSelection::Range(Some(1), None)]);
    /// let r = a.selection_region(&blocks)?.unwrap();
    /// assert_eq!((r.start, r.shape), (vec![4, 0], vec![6, 6]));
    /// # Ok::<(), zarr_array::ArrayError>(())
    /// ```
    ///
    /// # Errors
    /// A selection that does not fit the array.
    pub fn selection_region(&self, sel: &Selection) -> Result<Option<Region>> {
        Ok(match self.indexer(sel)? {
            Indexer::Orthogonal(axes) => contiguous_region(&axes),
            Indexer::Points(..) => None,
        })
    }

    /// Splits one axis's positions by chunk: (grid index, [(buffer offset, output index)]).
    fn axis_groups(&self, axis: usize, ix: &AxisIndex) -> Result<AxisGroups> {
        let mut probe = vec![0u64; self.rank()];
        let mut groups: BTreeMap<i64, AxisGroup> = BTreeMap::new();
        for i in 0..ix.len() {
            probe[axis] = ix.get(i);
            let (chunk, offset) = self.grid.chunk_of(&probe)?;
            let group = groups.entry(chunk[axis]).or_default();
            group.offsets.push(offset[axis]);
            group.outputs.push(i);
        }
        Ok(groups.into_iter().collect())
    }

    /// The indexer of `sel` and the byte length of the data it reads.
    fn indexer_and_len(&self, sel: &Selection) -> Result<(Indexer, usize)> {
        let elem = self.fixed_element_size()?;
        let ix = self.indexer(sel)?;
        let out_shape = ix.output_shape();
        let len = buffer_len(&out_shape, elem).map_err(|_| ArrayError::TooLarge {
            what: "a selection",
            shape: out_shape,
        })?;
        Ok((ix, len))
    }

    /// Reads what `ix` selects into `out`, of its byte length.
    fn read_indexed_into(&self, ix: &Indexer, out: &mut [u8]) -> Result<()> {
        self.read_indexed_as(ix, out, ReadInto::Fixed)
    }

    /// As [`Array::read_indexed_into`] for the elements `kind`: `out` is the buffer of them
    /// in the selection's output shape (for variable-size elements, the indices of those
    /// `kind`'s sink keeps: see [`ReadInto`]).
    pub(crate) fn read_indexed_as(
        &self,
        ix: &Indexer,
        out: &mut [u8],
        kind: ReadInto<'_>,
    ) -> Result<()> {
        if out.is_empty() {
            return Ok(());
        }
        match ix {
            Indexer::Orthogonal(axes) => {
                if let Some(region) = contiguous_region(axes) {
                    self.read_region_as(&region, out, kind)
                } else {
                    self.read_orthogonal(axes, out, kind)
                }
            }
            Indexer::Points(points, _) => self.read_points(points, out, kind),
        }
    }

    /// The size and the fill value of the elements `kind` of a read's output.
    fn read_element(&self, kind: ReadInto<'_>) -> (usize, &[u8]) {
        match kind {
            ReadInto::Fixed => (self.data_type().size(), self.fill_value().as_bytes()),
            ReadInto::Variable(_) => (INDEX, &FILL_INDEX[..]),
        }
    }

    /// Reads a selection into raw bytes of its output shape
    /// ([`Array::selection_shape`]; C order, native byte order).
    ///
    /// # Errors
    /// A selection that does not fit, store or codec errors.
    pub fn read_selection_bytes(&self, sel: &Selection) -> Result<Vec<u8>> {
        let (ix, len) = self.indexer_and_len(sel)?;
        let mut out = try_zeroed(len, "the selection read")?;
        self.read_indexed_into(&ix, &mut out)?;
        Ok(out)
    }

    /// Reads a selection into `out` (C order, native byte order, the selection's output shape:
    /// `out.len()` must be its byte length), e.g. straight into a NumPy array's buffer.
    ///
    /// # Errors
    /// A selection that does not fit, a wrong buffer length, store or codec errors.
    pub fn read_selection_bytes_into(&self, sel: &Selection, out: &mut [u8]) -> Result<()> {
        let (ix, len) = self.indexer_and_len(sel)?;
        if out.len() != len {
            return Err(ArrayError::InvalidArgument {
                what: "output buffer",
                reason: format!("{} bytes for a selection of {len} bytes", out.len()),
            });
        }
        self.read_indexed_into(&ix, out)
    }

    fn read_orthogonal(
        &self,
        axes: &[AxisIndex],
        out: &mut [u8],
        kind: ReadInto<'_>,
    ) -> Result<()> {
        let (elem, fill) = self.read_element(kind);
        let full_shape: Vec<u64> = axes.iter().map(AxisIndex::len).collect();
        let groups: Vec<AxisGroups> = axes
            .iter()
            .enumerate()
            .map(|(d, a)| self.axis_groups(d, a))
            .collect::<Result<_>>()?;
        let counts: Vec<u64> = groups.iter().map(|g| g.len() as u64).collect();
        let combos: Vec<Vec<u64>> = indices(&counts).collect();
        // the output positions of each chunk combination: one block of the output each (the
        // per-axis groups partition the output indices), in C order of the combinations
        let sets: Vec<Vec<AxisSet<'_>>> = groups
            .iter()
            .map(|g| g.iter().map(|(_, x)| AxisSet::List(&x.outputs)).collect())
            .collect();
        let mut out = BlockBuffer::new(out, &full_shape, elem).map_err(|e| self.out_err(e))?;
        let mut blocks = out.split_product(&sets).map_err(|e| self.out_err(e))?;
        let mut work: Vec<_> = combos.iter().zip(blocks.iter_mut()).collect();
        let chunk_of = |combo: &[u64]| -> Vec<i64> {
            combo
                .iter()
                .enumerate()
                .map(|(d, &i)| groups[d][i as usize].0)
                .collect()
        };
        // one chunk's block, read through `store` (this array's, or a batch's replay)
        let each =
            |store: &dyn Store, (combo, block): &mut (&Vec<u64>, &mut Block<'_>)| -> Result<()> {
                let chunk = chunk_of(combo);
                let chunk_shape = self.chunk_codec(&chunk)?.shape;
                let offsets: Vec<&[u64]> = combo
                    .iter()
                    .enumerate()
                    .map(|(d, &i)| groups[d][i as usize].1.offsets.as_slice())
                    .collect();
                // the position in the chunk of the element at `pos` of the block
                let src_of = |pos: &[u64]| {
                    pos.iter()
                        .zip(&offsets)
                        .zip(&chunk_shape)
                        .fold(0usize, |acc, ((&p, off), &n)| {
                            acc * n as usize + off[p as usize] as usize
                        })
                };
                if let ReadInto::Variable(sink) = kind {
                    // the sink keeps the elements the block takes, in its order; the block
                    // takes their indices
                    let mut srcs = Vec::new();
                    block.for_each_element(|pos, _| srcs.push(src_of(pos)));
                    let Some(first) = self.read_vlen_at(store, sink, &chunk, &srcs)? else {
                        return block.fill(fill).map_err(|e| self.out_err(e));
                    };
                    let mut next = first;
                    block.for_each_element(|_, dst| {
                        dst.copy_from_slice(&next.to_ne_bytes());
                        next += 1;
                    });
                    return Ok(());
                }
                let Some(decoded) = self.decoded_chunk_in(store, &chunk)? else {
                    return block.fill(fill).map_err(|e| self.out_err(e));
                };
                let bytes = decoded.as_bytes();
                block.for_each_element(|pos, dst| {
                    let src = src_of(pos);
                    dst.copy_from_slice(&bytes[src * elem..(src + 1) * elem]);
                });
                Ok(())
            };
        let store = &*self.store;
        if fetch::batched(store) {
            // a store serving many requests at once: every chunk's requests in flight
            // together, each chunk decoded on the pool as its bytes arrive
            fetch::run_fetched(store, &mut work, &each)
        } else {
            work.par_iter_mut().try_for_each(|item| each(store, item))
        }
    }

    /// Groups points by chunk: each chunk (in grid order) with its points' positions in the
    /// chunk buffer and their output indices.
    fn points_by_chunk(&self, points: &[Vec<u64>]) -> Result<Vec<(Vec<i64>, ChunkPoints)>> {
        let mut by_chunk: BTreeMap<Vec<i64>, ChunkPoints> = BTreeMap::new();
        for (i, p) in points.iter().enumerate() {
            let (chunk, offset) = self.grid.chunk_of(p)?;
            let entry = by_chunk.entry(chunk).or_default();
            entry.offsets.push(offset);
            entry.outputs.push(i as u64);
        }
        Ok(by_chunk.into_iter().collect())
    }

    /// What `ix` selects, chunk by chunk: each chunk with the (C-order linear) positions in
    /// its buffer and in the output of its selected elements, in the same order; the
    /// mapping of the fixed-size reads (the per-axis groups of an orthogonal selection, the
    /// points grouped by chunk), for the selection writes and the variable-size types.
    pub(crate) fn selected_by_chunk(&self, ix: &Indexer) -> Result<Vec<ChunkSelection>> {
        let mut work = Vec::new();
        match ix {
            // nothing selected on some axis: no chunk to visit (and an axis of length 0 has
            // no chunk to find the others' positions in)
            Indexer::Orthogonal(axes) if axes.iter().any(|a| a.len() == 0) => {}
            Indexer::Orthogonal(axes) => {
                let full_shape: Vec<u64> = axes.iter().map(AxisIndex::len).collect();
                let groups: Vec<AxisGroups> = axes
                    .iter()
                    .enumerate()
                    .map(|(d, a)| self.axis_groups(d, a))
                    .collect::<Result<_>>()?;
                let counts: Vec<u64> = groups.iter().map(|g| g.len() as u64).collect();
                for combo in indices(&counts) {
                    let chunk: Vec<i64> = combo
                        .iter()
                        .enumerate()
                        .map(|(d, &i)| groups[d][i as usize].0)
                        .collect();
                    let parts: Vec<&AxisGroup> = combo
                        .iter()
                        .enumerate()
                        .map(|(d, &i)| &groups[d][i as usize].1)
                        .collect();
                    let chunk_shape = self.chunk_codec(&chunk)?.shape;
                    let lens: Vec<u64> = parts.iter().map(|g| g.offsets.len() as u64).collect();
                    let mut pairs = Vec::new();
                    let (mut src, mut dst) = (vec![0u64; lens.len()], vec![0u64; lens.len()]);
                    for pos in indices(&lens) {
                        for (d, &p) in pos.iter().enumerate() {
                            src[d] = parts[d].offsets[p as usize];
                            dst[d] = parts[d].outputs[p as usize];
                        }
                        // positions inside the chunk and inside the output, buffers whose
                        // sizes were checked, so they fit in usize
                        pairs.push((
                            linear_index(&src, &chunk_shape) as usize,
                            linear_index(&dst, &full_shape) as usize,
                        ));
                    }
                    work.push((chunk, pairs));
                }
            }
            Indexer::Points(points, _) => {
                for (chunk, in_chunk) in self.points_by_chunk(points)? {
                    let chunk_shape = self.chunk_codec(&chunk)?.shape;
                    let pairs = in_chunk
                        .offsets
                        .iter()
                        .zip(&in_chunk.outputs)
                        .map(|(p, &o)| (linear_index(p, &chunk_shape) as usize, o as usize))
                        .collect();
                    work.push((chunk, pairs));
                }
            }
        }
        Ok(work)
    }

    /// Reads points: grouped by chunk, each chunk fetched and decoded once, as far as its
    /// points need ([`PartialDecoder::points`]: a shard's index and the inner chunks they
    /// fall in, `[bytes]`'s element spans, a compressed chunk's prefix), the chunks in
    /// parallel; on a store that serves many requests at once (an object store), every
    /// chunk's requests in flight together (`fetch::run_fetched`).
    ///
    /// [`PartialDecoder::points`]: zarr_codecs::PartialDecoder::points
    fn read_points(&self, points: &[Vec<u64>], out: &mut [u8], kind: ReadInto<'_>) -> Result<()> {
        let (elem, fill) = self.read_element(kind);
        let work = self.points_by_chunk(points)?;
        let indexes = self.index_hook();
        // one chunk's points, in the order of its list, read through `store` (this array's,
        // or a batch's replay)
        let read_one =
            |store: &dyn Store, (chunk, in_chunk): &(Vec<i64>, ChunkPoints)| -> Result<Vec<u8>> {
                let key = self.chunk_key(chunk);
                let mut values = vec![0u8; in_chunk.offsets.len() * elem];
                if let ReadInto::Variable(sink) = kind {
                    // the sink keeps the points' elements, in the order of the list
                    let shape = self.chunk_codec(chunk)?.shape;
                    let srcs: Vec<usize> = in_chunk
                        .offsets
                        .iter()
                        // a position inside the chunk: its linear index fits in usize
                        .map(|p| linear_index(p, &shape) as usize)
                        .collect();
                    match self.read_vlen_at(store, sink, chunk, &srcs)? {
                        Some(first) => index_run(&mut values, first),
                        None => zarr_buffer::fill_pattern(&mut values, fill),
                    }
                    return Ok(values);
                }
                if self.cache.is_some() {
                    match self.decoded_chunk_in(store, chunk)? {
                        Some(decoded) => self.gather(
                            decoded.as_bytes(),
                            &self.chunk_codec(chunk)?.shape,
                            &in_chunk.offsets,
                            &mut values,
                        ),
                        None => zarr_buffer::fill_pattern(&mut values, fill),
                    }
                    return Ok(values);
                }
                let chain = &self.chunk_codec(chunk)?.chain;
                let found = with_part_source(store, &key, chain, indexes, |source| {
                    chain
                        .partial_decoder()
                        .points(source, &in_chunk.offsets, &mut values)
                })?
                .map_err(|source| ArrayError::Codec {
                    context: key.clone(),
                    source,
                })?;
                if !found {
                    zarr_buffer::fill_pattern(&mut values, fill);
                }
                Ok(values)
            };
        let store = &*self.store;
        let values: Vec<Vec<u8>> = if fetch::batched(store) {
            // every chunk's requests in flight together, each chunk decoded on the pool as
            // its bytes arrive
            let mut slots: Vec<_> = work.iter().map(|item| (item, Vec::new())).collect();
            fetch::run_fetched(store, &mut slots, &|replay, (item, values)| {
                *values = read_one(replay, item)?;
                Ok(())
            })?;
            slots.into_iter().map(|(_, values)| values).collect()
        } else {
            // the calling thread reads too (`parallel`)
            parallel::try_map(&work, |_, item| read_one(store, item))?
        };
        for ((_, in_chunk), values) in work.iter().zip(&values) {
            for (&i, v) in in_chunk.outputs.iter().zip(values.chunks_exact(elem)) {
                let i = i as usize;
                out[i * elem..(i + 1) * elem].copy_from_slice(v);
            }
        }
        Ok(())
    }

    /// Copies the elements at the chunk positions `offsets` of the decoded chunk `decoded` (C
    /// order, of `shape`) into `out`, one after the other.
    fn gather(&self, decoded: &[u8], shape: &[u64], offsets: &[Vec<u64>], out: &mut [u8]) {
        let elem = self.data_type().size();
        for (p, dst) in offsets.iter().zip(out.chunks_exact_mut(elem)) {
            // a position inside the chunk: its linear index is below the decoded length
            let at = linear_index(p, shape) as usize;
            dst.copy_from_slice(&decoded[at * elem..(at + 1) * elem]);
        }
    }

    /// The error of an output buffer that cannot be split as a read needs (not reachable
    /// through a checked selection).
    fn out_err(&self, source: BlockError) -> ArrayError {
        ArrayError::Codec {
            context: format!("{}: the output buffer", self.path),
            source: source.into(),
        }
    }

    /// Writes raw bytes (the selection's output shape, C order, native byte order) through a
    /// selection. Repeated positions in an integer selection take the last value, as NumPy.
    ///
    /// # Errors
    /// A selection that does not fit, data of the wrong length, store or codec errors.
    pub fn write_selection_bytes(&self, sel: &Selection, data: &[u8]) -> Result<()> {
        self.write_selection_as(sel, data, Elements::Fixed)
    }

    /// As [`Array::write_selection_bytes`] for the elements `kind`: `data` is the buffer of
    /// them in the selection's output shape (for variable-size elements, their indices: see
    /// [`Elements`]).
    pub(crate) fn write_selection_as(
        &self,
        sel: &Selection,
        data: &[u8],
        kind: Elements<'_>,
    ) -> Result<()> {
        let elem = self.element_size(kind)?;
        let ix = self.indexer(sel)?;
        let out_shape = ix.output_shape();
        let len = buffer_len(&out_shape, elem).map_err(|_| ArrayError::TooLarge {
            what: "a selection",
            shape: out_shape.clone(),
        })?;
        if data.len() != len {
            return Err(ArrayError::ShapeMismatch {
                expected: out_shape,
                got: vec![(data.len() / elem) as u64],
            });
        }
        if len == 0 {
            return Ok(());
        }
        if let Indexer::Orthogonal(axes) = &ix {
            if let Some(region) = contiguous_region(axes) {
                return self.write_region_as(&region, data, false, kind);
            }
        }
        // (chunk) -> [(offset in chunk buffer, index into data)], the points of a chunk in
        // their order, so that a repeated point takes its last value
        let work = self.selected_by_chunk(&ix)?;
        work.par_iter()
            .try_for_each(|(chunk, entries)| -> Result<()> {
                let key = self.chunk_key(chunk);
                let cc = self.chunk_codec(chunk)?;
                let stored = self.store.get(&key)?;
                let mut buf = self.decoded_or_fill(kind, &cc, &key, stored.as_deref())?;
                drop(stored);
                let bytes = buf.buf.as_bytes_mut();
                for &(dst, src) in entries {
                    bytes[dst * elem..(dst + 1) * elem]
                        .copy_from_slice(&data[src * elem..(src + 1) * elem]);
                }
                self.store_buf(&*self.store, kind, &cc, &key, &buf)
            })
    }

    /// Reads a selection into an `ndarray` (NumPy semantics; see [`Selection`]).
    ///
    /// # Errors
    /// A data type other than `T`'s, a selection that does not fit, store or codec errors.
    pub fn read_selection<T: Element>(&self, sel: &Selection) -> Result<ArrayD<T>> {
        self.check_type::<T>()?;
        let (ix, len) = self.indexer_and_len(sel)?;
        let n = len / self.data_type().size();
        let mut items = try_zeroed(n, "the selection read")?;
        match T::as_bytes_mut(&mut items) {
            Some(bytes) => self.read_indexed_into(&ix, bytes)?,
            None => {
                let mut bytes = try_zeroed(len, "the selection read")?;
                self.read_indexed_into(&ix, &mut bytes)?;
                T::copy_from_bytes(&mut items, &bytes)?;
            }
        }
        to_ndarray(&ix.output_shape(), items)
    }

    /// Writes an `ndarray` through a selection; its shape must be the selection's.
    ///
    /// # Errors
    /// A data type other than `T`'s, a shape mismatch, store or codec errors.
    pub fn write_selection<T: Element>(
        &self,
        sel: &Selection,
        data: ArrayViewD<'_, T>,
    ) -> Result<()> {
        self.check_type::<T>()?;
        let want = self.selection_shape(sel)?;
        let got: Vec<u64> = data.shape().iter().map(|&n| n as u64).collect();
        if want != got {
            return Err(ArrayError::ShapeMismatch {
                expected: want,
                got,
            });
        }
        let items: Vec<T> = data.iter().copied().collect();
        self.write_selection_bytes(sel, T::as_bytes(&items))
    }
}

/// The region an orthogonal selection covers when every axis is contiguous.
fn contiguous_region(axes: &[AxisIndex]) -> Option<Region> {
    let mut start = Vec::with_capacity(axes.len());
    let mut shape = Vec::with_capacity(axes.len());
    for a in axes {
        let (s, n) = a.as_contiguous()?;
        start.push(s);
        shape.push(n);
    }
    Some(Region { start, shape })
}
