//! Resize, append, prepend, and the conversion of a `regular_bounded` array to `regular`.
//!
//! Order of writes: new chunks first, metadata last (append, prepend), so an interrupted
//! call leaves the old array readable and unchanged; for a shrinking resize the metadata goes
//! first and chunks outside the new shape are deleted after, so an interruption leaves only
//! invisible leftovers.

use std::sync::Arc;

use ndarray::ArrayViewD;
use rayon::prelude::*;
use serde_json::{Map, Value};
use zarr_grid::geometry::{buffer_len, copy_region, Region};
use zarr_grid::{ChunkGrid, ChunkSet};
use zarr_store::Store;

use zarr_buffer::fill_pattern;

use crate::array::Array;
use crate::element::Element;
use crate::error::{ArrayError, Result};
use crate::path::NodePath;

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
    /// before growing, positions beyond the old shape are cleared, so newly exposed positions
    /// read as fill, never stale data (even after an interrupted shrink).
    ///
    /// # Errors
    /// A rank mismatch, an overflow, store or codec errors.
    pub fn resize(&mut self, new_shape: &[u64]) -> Result<()> {
        let r = zarr_grid::resize(&*self.grid, new_shape)?;
        let next = self.with_grid(new_shape.to_vec(), r.grid);
        // Growing exposes positions outside the old shape: before the metadata says they
        // exist, clear whatever an interrupted earlier shrink (or a stray writer) left there,
        // so they read as fill.
        let back = zarr_grid::resize(&*next.grid, self.shape())?;
        let straddling: Vec<Vec<i64>> = back.clipped.iter().collect();
        straddling
            .par_iter()
            .try_for_each(|chunk| self.reset_outside(chunk))?;
        self.delete_chunks_in(&back.removed)?;
        next.write_metadata()?;
        // Shrinking: the metadata first, then the cut-off parts are reset and chunks wholly
        // outside are deleted, so an interruption leaves only invisible leftovers.
        let clipped: Vec<Vec<i64>> = r.clipped.iter().collect();
        clipped
            .par_iter()
            .try_for_each(|chunk| next.reset_outside(chunk))?;
        next.delete_chunks_in(&r.removed)?;
        *self = next;
        Ok(())
    }

    /// Rewrites a stored chunk with every position outside the array set to fill.
    fn reset_outside(&self, chunk: &[i64]) -> Result<()> {
        let Some(old) = self.read_chunk_bytes(chunk)? else {
            return Ok(());
        };
        let Some(part) = self.grid.chunk_part(chunk) else {
            return Ok(());
        };
        let shape = self.chunk_shape();
        let mut fresh = vec![0u8; old.len()];
        fill_pattern(&mut fresh, self.fill_value().as_bytes());
        copy_region(
            old.as_bytes(),
            &shape,
            &part.in_chunk.start,
            &mut fresh,
            &shape,
            &part.in_chunk.start,
            &part.in_chunk.shape,
            self.data_type().size(),
        );
        self.store_chunk(&self.chunk_key(chunk), &fresh)
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
    /// # Errors
    /// A shape mismatch (nothing changes), an overflow, store or codec errors.
    pub fn append_bytes(&mut self, data_shape: &[u64], data: &[u8], axis: usize) -> Result<()> {
        let k = self.check_grow_shape(data_shape, axis)?;
        if k == 0 {
            return Ok(());
        }
        let r = zarr_grid::append(&*self.grid, axis, k)?;
        let old_len = self.shape()[axis];
        let new_shape = r.grid.shape().to_vec();
        let next = self.with_grid(new_shape, r.grid);
        let mut start = vec![0; self.rank()];
        start[axis] = old_len;
        next.write_region_bytes(&Region::new(start, data_shape.to_vec())?, data)?;
        next.write_metadata()?;
        *self = next;
        Ok(())
    }

    /// Prepends raw bytes of shape `data_shape` before position 0 of `axis`: the data takes
    /// positions `0..k`, the old data moves to `k..`, and its domain coordinates stay the
    /// same (the lower bound moves down by `k`). The grid becomes `regular_bounded`.
    ///
    /// Every existing chunk keeps its key; new chunks are written first, the metadata last;
    /// a prepend that starts chunk-aligned on an array whose first chunk is full touches no
    /// existing chunk.
    ///
    /// # Errors
    /// A shape mismatch (nothing changes), a registry without `regular_bounded`, an
    /// overflow, store or codec errors; [`ArrayError::NeedsV3`] on a Zarr v2 array (convert
    /// it with [`Array::to_v3`] first).
    pub fn prepend_bytes(&mut self, data_shape: &[u64], data: &[u8], axis: usize) -> Result<()> {
        self.check_not_v2("prepend", "v2 chunk keys cannot be negative")?;
        let k = self.check_grow_shape(data_shape, axis)?;
        if k == 0 {
            return Ok(());
        }
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
        let (config, new_shape) = zarr_grid::prepend(&self.meta.chunk_grid, self.shape(), axis, k)?;
        let def = config.to_def();
        let grid = zarr_grid::build_grid(&self.extensions.chunk_grids, &def, &new_shape)?;
        let next = self.with_grid(new_shape, grid);
        let start = vec![0; self.rank()];
        next.write_region_bytes(&Region::new(start, data_shape.to_vec())?, data)?;
        next.write_metadata()?;
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
        if T::DATA_TYPE != self.data_type() {
            return Err(ArrayError::DataTypeMismatch {
                expected: self.data_type(),
                got: T::NAME,
            });
        }
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
    /// re-encoded.
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
        let chunk_shape: Vec<Value> = self.chunk_shape().into_iter().map(Value::from).collect();
        let mut grid_config = Map::new();
        grid_config.insert("chunk_shape".into(), Value::Array(chunk_shape));
        meta.chunk_grid = zarr_meta::ExtensionDef::with_configuration("regular", grid_config);
        let (name, note) = self.domain_note()?;
        meta.attributes.insert(name.into(), note);
        let dst = Array::from_metadata(store, node, meta, self.extensions.clone())?
            .with_options(self.options);
        let chunks: Vec<Vec<i64>> = dst.grid.chunk_indices().collect();
        let elem = self.data_type().size();
        chunks.par_iter().try_for_each(|chunk| -> Result<()> {
            let Some(region) = dst.grid.chunk_region(chunk) else {
                return Ok(());
            };
            let mut buf = vec![0u8; buffer_len(&region.shape, elem)?];
            self.read_region_bytes_into(&region, &mut buf)?;
            dst.write_region_bytes(&region, &buf)
        })?;
        dst.write_metadata()?;
        Ok(dst)
    }
}
