//! Resize, append, prepend, and the conversion of a `regular_bounded` array to `regular`.
//!
//! Every change of the metadata is a compare-and-swap on `zarr.json` ([`Array::update_metadata`],
//! the `cas` module), so concurrent writers, in any process, never undo each other's change.
//!
//! Order of writes: append and prepend reserve their positions first (the grown shape, by
//! compare-and-swap), then write their data there, chunks shared with a neighbouring append by
//! compare-and-swap; an interrupted call leaves the array grown, the positions it had not
//! written yet reading as the fill value. A shrinking resize resets the cut-off positions and
//! deletes the chunks wholly outside before its metadata; a growing one clears stale data in
//! the exposed positions after its metadata (never before: that could clear a concurrent
//! append's chunks).

use std::sync::Arc;

use ndarray::ArrayViewD;
use rayon::prelude::*;
use serde_json::{Map, Value};
use zarr_grid::geometry::{buffer_len, copy_region, Region};
use zarr_grid::{ChunkGrid, ChunkSet};
#[cfg(feature = "vlen")]
use zarr_meta::DataType;
use zarr_store::Store;

use zarr_buffer::fill_pattern;

use crate::array::Array;
use crate::element::Element;
use crate::error::{try_zeroed, ArrayError, Result};
use crate::path::NodePath;
#[cfg(feature = "vlen")]
use crate::vlen::VlenElement;

impl Array {
    fn with_grid(&self, shape: Vec<u64>, grid: Box<dyn ChunkGrid>) -> Array {
        let mut next = self.clone();
        next.meta.shape = shape;
        next.meta.chunk_grid = grid.to_def();
        next.grid = Arc::from(grid);
        next
    }

    /// Changes the shape (the upper end of every axis). Chunks wholly outside the new shape
    /// are deleted; kept chunks that lose positions have those reset to the fill value; and
    /// after growing, newly exposed positions that hold stale data (from an interrupted
    /// shrink, or a stray writer) are reset to fill.
    ///
    /// The new shape is written by compare-and-swap on `zarr.json` as the store has it at the
    /// time (see [`Array::update_attributes`]), so a concurrent append or attribute update is
    /// kept (a shrink cuts an append that came first, as it would have in that order). The
    /// cut-off positions are reset before the shape shrinks (an interrupted shrink leaves the
    /// old shape, its tail partly reset to fill); positions a growth exposes are cleared after
    /// the shape grows, never before, so that a concurrent append's chunks are not cleared
    /// (a reader may meanwhile see stale data there, only where an earlier shrink was
    /// interrupted).
    ///
    /// Every data type: a chunk of `string` or `variable_length_bytes` elements is edited as
    /// the permutation of its elements (a shard decoded and re-encoded whole).
    ///
    /// # Errors
    /// A rank mismatch, an overflow, store or codec errors; [`ArrayError::Contended`]. An
    /// error after the new shape is written (clearing the positions a growth exposes) leaves
    /// this handle with the new shape, as the store has it.
    pub fn resize(&mut self, new_shape: &[u64]) -> Result<()> {
        // refused before anything is read or written
        zarr_grid::resize(&*self.grid, new_shape)?;
        let (next, old) = self.update_metadata(|fresh| {
            let r = zarr_grid::resize(&*fresh.grid, new_shape)?;
            let next = fresh.with_grid(new_shape.to_vec(), r.grid);
            // Shrinking: the cut-off parts are reset and chunks wholly outside are deleted
            // before the metadata says so (again on each attempt, against the shape then).
            let clipped = fresh.stored_among(&r.clipped)?;
            clipped
                .par_iter()
                .try_for_each(|chunk| next.reset_outside(chunk))?;
            next.delete_chunks_in(&r.removed)?;
            Ok((next, fresh.clone()))
        })?;
        // the new metadata is written: this handle holds it even if the clearing fails
        *self = next;
        self.clear_exposed(&old)
    }

    /// The chunks of `set` to visit: all of them when there are few, otherwise only those
    /// stored (one listing), so that a resize of an array with 2^40 chunks along an edge
    /// costs what its stored chunks do.
    fn stored_among(&self, set: &ChunkSet) -> Result<Vec<Vec<i64>>> {
        const FEW: u64 = 256;
        if set.len().is_some_and(|n| n <= FEW) {
            return Ok(set.iter().collect());
        }
        Ok(self
            .stored_chunks()?
            .into_iter()
            .filter(|chunk| set.contains(chunk))
            .collect())
    }

    /// Resets every position of a stored chunk outside the array to fill, by compare-and-swap.
    fn reset_outside(&self, chunk: &[i64]) -> Result<()> {
        let Some(part) = self.grid.chunk_part(chunk) else {
            return Ok(());
        };
        let shape = self.chunk_codec(chunk)?.shape;
        self.edit_chunk(chunk, |buf, fill, elem| {
            // keep the part inside the array, fill everything else
            let mut kept = vec![0u8; buf.len()];
            fill_pattern(&mut kept, fill);
            copy_region(
                buf,
                &shape,
                &part.in_chunk.start,
                &mut kept,
                &shape,
                &part.in_chunk.start,
                &part.in_chunk.shape,
                elem,
            );
            buf.copy_from_slice(&kept);
        })
    }

    /// After a growth from `old`: resets the positions of stored chunks that are inside this
    /// array but were outside `old` (stale data an interrupted shrink left) to fill. A chunk
    /// wholly inside this array and outside `old` is deleted (no other writer has a part of
    /// it); one that straddles either shape is rewritten by compare-and-swap, keeping every
    /// other position (an append after this growth writes beyond this shape).
    fn clear_exposed(&self, old: &Array) -> Result<()> {
        if self
            .shape()
            .iter()
            .zip(old.shape())
            .all(|(new, old)| new <= old)
        {
            return Ok(());
        }
        let back = zarr_grid::resize(&*self.grid, old.shape())?;
        if back.removed.is_empty() && back.clipped.is_empty() {
            return Ok(());
        }
        let stored = self.stored_chunks()?;
        stored.par_iter().try_for_each(|chunk| -> Result<()> {
            if !back.removed.contains(chunk) && !back.clipped.contains(chunk) {
                return Ok(());
            }
            let shape = self.chunk_codec(chunk)?.shape;
            let Some(inside) = self.grid.chunk_part(chunk).map(|p| p.in_chunk) else {
                return Ok(());
            };
            let before = old.grid.chunk_part(chunk).map(|p| p.in_chunk);
            if before.is_none() && inside.shape == shape {
                self.store.delete(&self.chunk_key(chunk))?;
                return Ok(());
            }
            self.edit_chunk(chunk, |buf, fill_element, elem| {
                let original = buf.to_vec();
                let mut fill = vec![0u8; buf.len()];
                fill_pattern(&mut fill, fill_element);
                // fill what is inside this array...
                copy_region(
                    &fill,
                    &shape,
                    &inside.start,
                    buf,
                    &shape,
                    &inside.start,
                    &inside.shape,
                    elem,
                );
                // ...except what was inside `old`
                if let Some(before) = &before {
                    copy_region(
                        &original,
                        &shape,
                        &before.start,
                        buf,
                        &shape,
                        &before.start,
                        &before.shape,
                        elem,
                    );
                }
            })
        })
    }

    fn delete_chunks_in(&self, set: &ChunkSet) -> Result<()> {
        if set.is_empty() {
            return Ok(());
        }
        // one listing, then only the stored chunks of the set
        let prefix = self.path.prefix();
        for key in self.store.list_prefix(&prefix)? {
            let Some(rel) = key.get(prefix.len()..) else {
                continue;
            };
            if let Ok(idx) = self.keys.decode(rel, self.rank()) {
                if set.contains(&idx) {
                    self.store.delete(&key)?;
                }
            }
        }
        Ok(())
    }

    fn check_grow_shape(&self, data_shape: &[u64], axis: usize) -> Result<u64> {
        let rank = self.rank();
        if axis >= rank {
            return Err(ArrayError::InvalidAxis { axis, rank });
        }
        let mut expected = self.shape().to_vec();
        if data_shape.len() == rank {
            expected[axis] = data_shape[axis];
        }
        if data_shape != expected.as_slice() {
            return Err(ArrayError::ShapeMismatch {
                expected,
                got: data_shape.to_vec(),
            });
        }
        Ok(data_shape[axis])
    }

    /// Appends raw bytes of shape `data_shape` after the end of `axis`.
    ///
    /// Safe with concurrent appenders, in any process, on a store with conditional writes:
    /// the grown shape is first written by compare-and-swap on `zarr.json` as the store has
    /// it then (re-read and re-applied on a conflict), which reserves the positions after
    /// the end as it was for this append alone; the data is then written there. Chunks the
    /// block fills whole are written plainly; a chunk it shares with a neighbouring append
    /// (a partly filled boundary chunk or shard) is updated by a compare-and-swap
    /// read-modify-write of the chunk itself. Every append thus lands whole, at the positions
    /// its reservation got; this handle then holds the metadata it wrote. Until the data is
    /// written (and for ever, if the process is killed meanwhile), the reserved positions
    /// read as the fill value.
    ///
    /// # Errors
    /// A shape mismatch (nothing changes; checked again against the metadata in the store),
    /// an overflow, store or codec errors; [`ArrayError::Contended`].
    pub fn append_bytes(&mut self, data_shape: &[u64], data: &[u8], axis: usize) -> Result<()> {
        self.append_with(
            data_shape,
            axis,
            |a| a.check_data_len(data_shape, data),
            |next, region| next.write_region_in(region, data, true),
        )
    }

    /// The protocol of [`Array::append_bytes`], for data of `data_shape` that `check`
    /// validates before anything changes and `write` writes into the reserved region.
    pub(crate) fn append_with(
        &mut self,
        data_shape: &[u64],
        axis: usize,
        check: impl FnOnce(&Array) -> Result<()>,
        write: impl FnOnce(&Array, &Region) -> Result<()>,
    ) -> Result<()> {
        let k = self.check_grow_shape(data_shape, axis)?;
        if k == 0 {
            return Ok(());
        }
        check(self)?;
        let (next, old_len) = self.update_metadata(|fresh| {
            let k = fresh.check_grow_shape(data_shape, axis)?;
            let r = zarr_grid::append(&*fresh.grid, axis, k)?;
            let new_shape = r.grid.shape().to_vec();
            Ok((fresh.with_grid(new_shape, r.grid), fresh.shape()[axis]))
        })?;
        let mut start = vec![0; next.rank()];
        start[axis] = old_len;
        write(&next, &Region::new(start, data_shape.to_vec())?)?;
        *self = next;
        Ok(())
    }

    /// Refuses data whose length is not that of `data_shape`, before anything is written.
    fn check_data_len(&self, data_shape: &[u64], data: &[u8]) -> Result<()> {
        let len = buffer_len(data_shape, self.fixed_element_size()?)?;
        if data.len() != len {
            return Err(ArrayError::ShapeMismatch {
                expected: data_shape.to_vec(),
                got: vec![(data.len() / self.data_type().size().max(1)) as u64],
            });
        }
        Ok(())
    }

    /// Prepends raw bytes of shape `data_shape` before position 0 of `axis`: the data takes
    /// positions `0..k`, the old data moves to `k..`, and its domain coordinates stay the
    /// same (the lower bound moves down by `k`). The grid becomes `regular_bounded`.
    ///
    /// Every existing chunk keeps its key. As [`Array::append_bytes`], the moved lower bound
    /// is written first, by compare-and-swap, reserving the positions in front for this
    /// prepend; then the data is written there, chunks shared with a neighbouring prepend by
    /// compare-and-swap. A prepend that starts chunk-aligned on an array whose first chunk is
    /// full touches no existing chunk.
    ///
    /// # Errors
    /// A shape mismatch (nothing changes), a registry without `regular_bounded`, an
    /// overflow, store or codec errors; [`ArrayError::NeedsV3`] on a Zarr v2 array (convert
    /// it with [`Array::to_v3`] first); [`ArrayError::Contended`]. A `rectilinear` array is
    /// refused ([`zarr_grid::GridError::RectilinearPrepend`]): its chunks are numbered from
    /// position 0, so chunks in front would rename every stored chunk of the axis; it would
    /// need a lower bound in the grid, as `regular_bounded` has (or a copy into a new array).
    pub fn prepend_bytes(&mut self, data_shape: &[u64], data: &[u8], axis: usize) -> Result<()> {
        self.prepend_with(
            data_shape,
            axis,
            |a| a.check_data_len(data_shape, data),
            |next, region| next.write_region_in(region, data, true),
        )
    }

    /// The protocol of [`Array::prepend_bytes`], for data of `data_shape` that `check`
    /// validates before anything changes and `write` writes into the reserved region.
    pub(crate) fn prepend_with(
        &mut self,
        data_shape: &[u64],
        axis: usize,
        check: impl FnOnce(&Array) -> Result<()>,
        write: impl FnOnce(&Array, &Region) -> Result<()>,
    ) -> Result<()> {
        self.check_not_v2("prepend", "v2 chunk keys cannot be negative")?;
        if self.meta.chunk_grid.name == "rectilinear" {
            return Err(zarr_grid::GridError::RectilinearPrepend.into());
        }
        let k = self.check_grow_shape(data_shape, axis)?;
        if k == 0 {
            return Ok(());
        }
        check(self)?;
        if !self
            .extensions
            .chunk_grids
            .contains(zarr_grid::regular_bounded::NAME)
        {
            return Err(ArrayError::ExtensionMissing {
                operation: "prepend",
                point: zarr_meta::ExtensionPoint::ChunkGrid,
                name: zarr_grid::regular_bounded::NAME,
            });
        }
        let (next, ()) = self.update_metadata(|fresh| {
            fresh.check_not_v2("prepend", "v2 chunk keys cannot be negative")?;
            let k = fresh.check_grow_shape(data_shape, axis)?;
            let (config, new_shape) =
                zarr_grid::prepend(&fresh.meta.chunk_grid, fresh.shape(), axis, k)?;
            let def = config.to_def();
            let grid = zarr_grid::build_grid(&fresh.extensions.chunk_grids, &def, &new_shape)?;
            Ok((fresh.with_grid(new_shape, grid), ()))
        })?;
        let start = vec![0; next.rank()];
        write(&next, &Region::new(start, data_shape.to_vec())?)?;
        *self = next;
        Ok(())
    }

    /// Appends an `ndarray` after the end of `axis` (its other axes match the array's).
    ///
    /// # Errors
    /// As [`Array::append_bytes`], and a data type other than `T`'s.
    pub fn append<T: Element>(&mut self, data: ArrayViewD<'_, T>, axis: usize) -> Result<()> {
        let (shape, items) = self.typed_input(data)?;
        self.append_bytes(&shape, T::as_bytes(&items), axis)
    }

    /// Prepends an `ndarray` before position 0 of `axis` (see [`Array::prepend_bytes`]).
    ///
    /// # Errors
    /// As [`Array::prepend_bytes`], and a data type other than `T`'s.
    pub fn prepend<T: Element>(&mut self, data: ArrayViewD<'_, T>, axis: usize) -> Result<()> {
        let (shape, items) = self.typed_input(data)?;
        self.prepend_bytes(&shape, T::as_bytes(&items), axis)
    }

    fn typed_input<T: Element>(&self, data: ArrayViewD<'_, T>) -> Result<(Vec<u64>, Vec<T>)> {
        self.check_type::<T>()?;
        let shape = data.shape().iter().map(|&n| n as u64).collect();
        Ok((shape, data.iter().copied().collect()))
    }

    /// The attribute a copy on a plain `regular` grid keeps the original domain and chunk grid
    /// in ([`Array::to_regular`], `zarr convert --to-regular`): its name, `"regular_bounded"`,
    /// and its value `{"domain": [[start, end], ...], "chunk_grid": {...}}`.
    ///
    /// # Errors
    /// [`ArrayError::AttributeInUse`] when the array's own attributes already have that name
    /// (a user's value is never overwritten).
    pub fn domain_note(&self) -> Result<(&'static str, Value)> {
        const NAME: &str = "regular_bounded";
        if self.meta.attributes.contains_key(NAME) {
            return Err(ArrayError::AttributeInUse {
                path: self.path().to_string(),
                name: NAME,
            });
        }
        let domain: Vec<Value> = self
            .domain()
            .iter()
            .map(|(a, b)| Value::from(vec![*a, *b]))
            .collect();
        let mut note = Map::new();
        note.insert("domain".into(), Value::from(domain));
        note.insert("chunk_grid".into(), self.meta.chunk_grid.to_value());
        Ok((NAME, Value::Object(note)))
    }

    /// Copies this array onto a plain `regular` grid at `path` of `store` (same positions,
    /// data, chunk shape, codecs and key encoding), so that readers without
    /// `regular_bounded` can read it. The original domain, origin and lower bound are kept in
    /// the copy's attributes under `"regular_bounded"` ([`Array::domain_note`]). Every chunk is
    /// re-encoded. A copy that fails is removed: nothing is left at `path`.
    ///
    /// # Errors
    /// A node already at `path`, a user attribute named `"regular_bounded"`
    /// ([`ArrayError::AttributeInUse`]), store or codec errors.
    pub fn to_regular(&self, store: Arc<dyn Store>, path: &str) -> Result<Array> {
        let node = NodePath::new(path)?;
        if store.get(&node.key("zarr.json"))?.is_some() {
            return Err(ArrayError::AlreadyExists {
                path: node.to_string(),
            });
        }
        let mut meta = self.meta.clone();
        // a grid whose chunks differ (rectilinear) becomes regular with its first chunk's shape
        let chunk_shape: Vec<Value> = self
            .chain
            .repr()
            .shape
            .iter()
            .map(|&c| Value::from(c))
            .collect();
        let mut grid_config = Map::new();
        grid_config.insert("chunk_shape".into(), Value::Array(chunk_shape));
        meta.chunk_grid = zarr_meta::ExtensionDef::with_configuration("regular", grid_config);
        let (name, note) = self.domain_note()?;
        meta.attributes.insert(name.into(), note);
        let dst = Array::from_metadata(store.clone(), node.clone(), meta, self.extensions.clone())?
            .with_options(self.options);
        if let Err(e) = self.copy_to(&dst).and_then(|_| dst.write_metadata()) {
            // a failed copy leaves nothing behind: no chunk without its node
            let _ = store.delete_prefix(&node.prefix());
            return Err(e);
        }
        Ok(dst)
    }

    /// Copies the data of this array into `dst`, an array of the same shape and data type
    /// (any chunk shape, codecs, sharding or key encoding; fixed-size or variable-size
    /// elements), and returns the number of `dst`'s chunks (shards, if it is sharded)
    /// written.
    ///
    /// Only `dst`'s chunks that meet a stored chunk of this array can hold anything but the
    /// fill value, so only those are written, found from one listing: the cost follows the
    /// chunks stored, not the grid (which may hold 2^40 chunks). Each is read from this
    /// array whole and written whole, in parallel, so memory is about one of `dst`'s chunks
    /// per worker. `dst`'s positions are this array's zero-based positions; a fill value of
    /// `dst` that differs from this array's shows where nothing is stored.
    ///
    /// # Example
    /// ```
    /// # use std::sync::Arc;
    /// use zarr_array::{ArrayBuilder, DataType, Region};
    /// let store = Arc::new(zarr_store::MemoryStore::new());
    /// let src = ArrayBuilder::new(vec![1 << 40], DataType::UInt8)
    ///     .chunk_shape(vec![4])
    ///     .create(store.clone(), "src")?;
    /// src.write_region_bytes(&Region::new(vec![6], vec![2])?, &[1, 2])?;
    /// let dst = ArrayBuilder::new(vec![1 << 40], DataType::UInt8)
    ///     .chunk_shape(vec![16])
    ///     .create(store, "dst")?;
    /// assert_eq!(src.copy_to(&dst)?, 1);
    /// assert_eq!(dst.read_region_bytes(&Region::new(vec![5], vec![4])?)?, [0, 1, 2, 0]);
    /// # Ok::<(), zarr_array::ArrayError>(())
    /// ```
    ///
    /// # Errors
    /// Another shape or data type ([`ArrayError::ShapeMismatch`],
    /// [`ArrayError::CopyDataType`]), a chunk of `dst` too large to hold, store or codec
    /// errors.
    pub fn copy_to(&self, dst: &Array) -> Result<u64> {
        self.copy_to_with(dst, &|_| {})
    }

    /// As [`Array::copy_to`], calling `done(bytes)` after each chunk of `dst` is written
    /// (its bytes in memory), for progress reports.
    ///
    /// # Errors
    /// As [`Array::copy_to`].
    pub fn copy_to_with(&self, dst: &Array, done: &(dyn Fn(u64) + Sync)) -> Result<u64> {
        if dst.shape() != self.shape() {
            return Err(ArrayError::ShapeMismatch {
                expected: self.shape().to_vec(),
                got: dst.shape().to_vec(),
            });
        }
        if dst.data_type() != self.data_type() {
            return Err(ArrayError::CopyDataType {
                src: self.data_type(),
                dst: dst.data_type(),
            });
        }
        let mut chunks = std::collections::BTreeSet::new();
        for stored in self.stored_chunks()? {
            let Some(region) = self.grid.chunk_region(&stored) else {
                continue;
            };
            for part in dst.grid.chunks_in_region(&region)? {
                chunks.insert(part.chunk);
            }
        }
        let chunks: Vec<Vec<i64>> = chunks.into_iter().collect();
        let elem = self.data_type().size();
        chunks.par_iter().try_for_each(|chunk| -> Result<()> {
            let Some(region) = dst.grid.chunk_region(chunk) else {
                return Ok(());
            };
            let bytes = match self.data_type() {
                #[cfg(feature = "vlen")]
                DataType::String => self.copy_vlen_region::<String>(dst, &region)?,
                #[cfg(feature = "vlen")]
                DataType::Bytes => self.copy_vlen_region::<Vec<u8>>(dst, &region)?,
                _ => {
                    let mut buf =
                        try_zeroed(buffer_len(&region.shape, elem)?, "a chunk of the copy")?;
                    self.read_region_bytes_into(&region, &mut buf)?;
                    dst.write_region_bytes(&region, &buf)?;
                    buf.len()
                }
            };
            done(bytes as u64);
            Ok(())
        })?;
        Ok(chunks.len() as u64)
    }

    /// Copies the variable-size elements of `region` into `dst`; the bytes they hold.
    #[cfg(feature = "vlen")]
    fn copy_vlen_region<T: VlenElement>(&self, dst: &Array, region: &Region) -> Result<usize> {
        let items = self.read_region_vlen::<T>(region)?;
        dst.write_region_vlen(region, items.view())?;
        Ok(items.iter().map(|e| e.as_stored().len()).sum())
    }
}
