//! Writing regions of an [`Array`]: chunks covered whole encoded from the data, chunks covered
//! in part read, modified and written (by compare-and-swap where another writer may share
//! them), shard leaves rewritten in place, and the typed writes.

use ndarray::ArrayViewD;
use rayon::prelude::*;
use zarr_buffer::{fill_pattern, AlignedBuffer};
use zarr_codecs::{CodecChain, CodecError, SourceBlock};
use zarr_grid::geometry::{buffer_len, copy_region, regular_chunks_in_region, Region};
use zarr_grid::ChunkPart;
use zarr_store::Store;

use crate::array::{grow_to, Array, ChunkCodec};
use crate::element::Element;
use crate::error::{try_collect, ArrayError, Result, SelectionError};
use crate::source::ValueSource;

impl Array {
    /// Writes `data` (C order, native byte order, the region's shape) into a region.
    ///
    /// Chunks the region covers wholly are encoded from the data alone; others are read,
    /// modified and written. A chunk that ends up all fill value is deleted unless
    /// [`WriteOptions::write_empty_chunks`] is set. Chunks are encoded and stored in parallel.
    ///
    /// # Errors
    /// A region outside the array, a wrong data length, the store's errors.
    pub fn write_region_bytes(&self, region: &Region, data: &[u8]) -> Result<()> {
        self.write_region_in(region, data, false)
    }

    /// As [`Array::write_region_bytes`]; with `shared`, every chunk the region covers only in
    /// part is updated by a compare-and-swap read-modify-write of the chunk itself, so that a
    /// concurrent writer of another part of it (a neighbouring append) loses nothing; chunks
    /// covered whole are written plainly.
    pub(crate) fn write_region_in(&self, region: &Region, data: &[u8], shared: bool) -> Result<()> {
        let len = self.region_byte_len(region)?;
        if data.len() != len {
            return Err(ArrayError::ShapeMismatch {
                expected: region.shape.clone(),
                got: vec![(data.len() / self.meta.data_type.size().max(1)) as u64],
            });
        }
        if len == 0 {
            return Ok(());
        }
        let parts = try_collect(
            self.grid.chunks_in_region(region)?,
            "the chunks a region meets",
        )?;
        if let [part] = parts.as_slice() {
            // one chunk: on this thread, with no hand-over to the pool and back
            return self.write_chunk_part(part, &region.shape, data, shared);
        }
        parts
            .par_iter()
            .try_for_each(|part| self.write_chunk_part(part, &region.shape, data, shared))
    }

    fn write_chunk_part(
        &self,
        part: &ChunkPart,
        data_shape: &[u64],
        data: &[u8],
        shared: bool,
    ) -> Result<()> {
        let cc = self.chunk_codec(&part.chunk)?;
        let (chunk_shape, chunk_len) = (&cc.shape, cc.len);
        let elem = self.meta.data_type.size();
        let key = self.chunk_key(&part.chunk);
        if part.in_chunk.shape == *chunk_shape && part.in_region.is_contiguous_in(data_shape) {
            // the whole chunk buffer is one contiguous run of the data: encode it in place
            let at = part.in_region.linear_offset(data_shape) as usize * elem;
            return self.store_chunk(&cc, &key, &data[at..at + chunk_len]);
        }
        // Every array position of this chunk, in its buffer.
        let covered = self
            .grid
            .chunk_part(&part.chunk)
            .map(|p| p.in_chunk)
            .ok_or_else(|| SelectionError::ChunkOutsideGrid {
                chunk: part.chunk.clone(),
            })?;
        if part.in_chunk == covered && part.in_chunk.shape == *chunk_shape {
            // the whole chunk buffer is a block of the data: encode it from there, with no
            // chunk buffer to fill first (a shard gathers each inner chunk from the data)
            let src = SourceBlock::new(data, data_shape, elem, &part.in_region).map_err(|e| {
                ArrayError::Codec {
                    context: key.clone(),
                    source: e.into(),
                }
            })?;
            return self.store_chunk_from_block(&cc, &key, src);
        }
        let rewrite_leaves = part.in_chunk != covered && leaves_rewritable(&cc.chain);
        // the part of `data` this write puts into a whole chunk buffer
        let place = |chunk: &mut [u8]| {
            copy_region(
                data,
                data_shape,
                &part.in_region.start,
                chunk,
                chunk_shape,
                &part.in_chunk.start,
                &part.in_region.shape,
                elem,
            )
        };
        if shared {
            // Positions of this chunk outside the part may be another writer's: update it by
            // compare-and-swap, from the chunk as stored at the time of the write.
            return self.update_chunk(&key, |stored| {
                if rewrite_leaves {
                    self.rewrite_shard(&cc, &key, part, data_shape, data, true, |chain, l, f| {
                        chain.rewrite_leaves(stored, l, f)
                    })
                } else {
                    let mut chunk = self.decoded_or_fill(&cc, &key, stored)?;
                    place(chunk.as_bytes_mut());
                    self.encode_shared(&cc, &key, chunk.as_bytes())
                }
            });
        }
        if rewrite_leaves {
            // a shard written in part: only the inner chunks the part touches are re-encoded
            if cc.chain.rewrites_leaves_in_place() {
                // read only its index and those inner chunks, and let the store copy the
                // rest of the shard into the new one as it is
                if let Some(value) = self.store.open_value(&key)? {
                    let source = ValueSource::new(&*self.store, &*value);
                    let pieces =
                        self.rewrite_shard(&cc, &key, part, data_shape, data, false, |c, l, f| {
                            c.rewrite_leaves_in_place(&source, l, f)
                        })?;
                    return match pieces {
                        Some(pieces) => Ok(value.replace(&pieces)?),
                        None => Ok(self.store.delete(&key)?),
                    };
                }
                let new =
                    self.rewrite_shard(&cc, &key, part, data_shape, data, false, |c, l, f| {
                        c.rewrite_leaves(None, l, f)
                    })?;
                return self.store_rewritten(&key, new);
            }
            let stored = self.store.get(&key)?;
            let new = self.rewrite_shard(&cc, &key, part, data_shape, data, false, |c, l, f| {
                c.rewrite_leaves(stored.as_deref(), l, f)
            })?;
            return self.store_rewritten(&key, new);
        }
        let mut chunk = if part.in_chunk == covered {
            // the write replaces every array position of the chunk: start from fill
            self.fill_chunk(chunk_len, chunk_shape)?
        } else {
            let stored = self.store.get(&key)?;
            self.decoded_or_fill(&cc, &key, stored.as_deref())?
        };
        place(chunk.as_bytes_mut());
        self.store_chunk(&cc, &key, chunk.as_bytes())
    }

    /// The chunk `stored` under `key` decoded, or a chunk of fill value when it is absent.
    fn decoded_or_fill(
        &self,
        cc: &ChunkCodec,
        key: &str,
        stored: Option<&[u8]>,
    ) -> Result<AlignedBuffer> {
        match stored {
            Some(bytes) => cc.chain.decode(bytes).map_err(|source| ArrayError::Codec {
                context: key.to_owned(),
                source,
            }),
            None => self.fill_chunk(cc.len, &cc.shape),
        }
    }

    /// Encodes a chunk written by compare-and-swap: `None` only when it is all fill value
    /// and the codecs cannot store an empty chunk (`sparse_layout`); otherwise a chunk of
    /// fill value is stored rather than deleted, since a delete cannot be conditional.
    fn encode_shared(&self, cc: &ChunkCodec, key: &str, chunk: &[u8]) -> Result<Option<Vec<u8>>> {
        let codec_err = |source| ArrayError::Codec {
            context: key.to_owned(),
            source,
        };
        if cc.chain.stores_empty_chunks() {
            Ok(Some(cc.chain.encode(chunk).map_err(codec_err)?))
        } else {
            cc.chain.encode_chunk(chunk).map_err(codec_err)
        }
    }

    /// Updates the stored chunk under `key` by compare-and-swap (`cas::update`): `encode`
    /// makes its new encoding from the value stored (`None`: absent), again on a conflict;
    /// its `None` (nothing to store) keeps a missing chunk missing and deletes a stored one
    /// (only for codecs that cannot store an empty chunk: a delete is not conditional). The
    /// one compare-and-swap loop of chunk writes, fixed-size and variable-size alike.
    pub(crate) fn update_chunk(
        &self,
        key: &str,
        mut encode: impl FnMut(Option<&[u8]>) -> Result<Option<Vec<u8>>>,
    ) -> Result<()> {
        crate::cas::update(&*self.store, key, |stored| {
            Ok(shared_apply(stored, encode(stored)?))
        })
    }

    /// Rewrites the stored chunk `chunk` by compare-and-swap: `edit(buffer, fill, size)`
    /// changes its decoded buffer (fill value when it is absent), a buffer of elements of
    /// `size` bytes of which `fill` is the fill value. A missing chunk that `edit` leaves all
    /// fill stays missing.
    ///
    /// A chunk of variable-size elements is edited as the permutation of its elements: the
    /// buffer holds each element's index (a native-endian `u64`), `fill` an index that
    /// stands for the fill value, so that edits that move and fill positions (block copies)
    /// are the same code for every data type.
    pub(crate) fn edit_chunk(
        &self,
        chunk: &[i64],
        edit: impl Fn(&mut [u8], &[u8], usize),
    ) -> Result<()> {
        let key = self.chunk_key(chunk);
        let cc = self.chunk_codec(chunk)?;
        #[cfg(feature = "vlen")]
        if self.meta.data_type.is_variable_size() {
            return self.edit_vlen_chunk(&cc, &key, edit);
        }
        let (fill, elem) = (self.meta.fill_value.as_bytes(), self.meta.data_type.size());
        self.update_chunk(&key, |stored| {
            let mut buf = self.decoded_or_fill(&cc, &key, stored)?;
            edit(buf.as_bytes_mut(), fill, elem);
            let buf = buf.as_bytes();
            match stored {
                // nothing stored and nothing to store: no write at all
                None => cc
                    .chain
                    .encode_chunk(buf)
                    .map_err(|source| ArrayError::Codec {
                        context: key.clone(),
                        source,
                    }),
                Some(_) => self.encode_shared(&cc, &key, buf),
            }
        })
    }

    /// Stores a rewritten chunk, or deletes it when nothing is left (`None`).
    fn store_rewritten(&self, key: &str, new: Option<Vec<u8>>) -> Result<()> {
        match new {
            Some(bytes) => Ok(self.store.set(key, &bytes)?),
            None => Ok(self.store.delete(key)?),
        }
    }

    /// The shard under `key` with the part `part` written, as `rewrite` makes it from the
    /// chain, the leaves (inner chunks) the part touches and the function that writes one
    /// ([`CodecChain::rewrite_leaves`] of the stored bytes, or
    /// [`CodecChain::rewrite_leaves_in_place`] of an opened value): that function decodes a
    /// leaf when the part covers it only in part, writes the part into it and re-encodes it;
    /// every other leaf keeps its encoded bytes as they are. With `keep_empty` (a
    /// compare-and-swap write, which cannot delete), leaves of fill value are stored.
    #[allow(clippy::too_many_arguments)] // the chunk, the data part written and the rewrite
    fn rewrite_shard<R>(
        &self,
        cc: &ChunkCodec,
        key: &str,
        part: &ChunkPart,
        data_shape: &[u64],
        data: &[u8],
        keep_empty: bool,
        rewrite: impl FnOnce(&CodecChain, &[Vec<u64>], &LeafWriter<'_>) -> Result<R, LeafError>,
    ) -> Result<R> {
        let codec_err = |source: CodecError| ArrayError::Codec {
            context: key.to_string(),
            source,
        };
        let elem = self.meta.data_type.size();
        let leaf_chain = cc.chain.leaf_chain();
        let leaf_shape = cc.chain.leaf_shape().to_vec();
        let leaf_len = buffer_len(&leaf_shape, elem)?;
        // the leaves the part touches, in C order of the leaf grid (as `rewrite_leaves` sorts)
        let leaf_parts: Vec<ChunkPart> =
            regular_chunks_in_region(&leaf_shape, &part.in_chunk).collect();
        let leaves: Vec<Vec<u64>> = leaf_parts
            .iter()
            .map(|p| p.chunk.iter().map(|&g| g as u64).collect())
            .collect();
        let keep_empty =
            (keep_empty || self.options.write_empty_chunks) && leaf_chain.stores_empty_chunks();
        let write_leaf = |leaf: &[u64], old: Option<&[u8]>| -> Result<_, LeafError> {
            let i = leaves
                .binary_search_by(|l| l.as_slice().cmp(leaf))
                .map_err(|_| ArrayError::InvalidArgument {
                    what: "leaf",
                    reason: format!("{leaf:?} is not one of the leaves written"),
                })?;
            let lp = &leaf_parts[i];
            let mut buf = match old {
                Some(bytes) if lp.in_chunk.shape != leaf_shape => {
                    leaf_chain.decode(bytes).map_err(codec_err)?.to_vec()
                }
                _ => {
                    let mut b = Vec::new();
                    grow_to(&mut b, leaf_len, &leaf_shape)?;
                    let fill = self.meta.fill_value.as_bytes();
                    if lp.in_chunk.shape != leaf_shape && fill.iter().any(|&b| b != 0) {
                        fill_pattern(&mut b, fill);
                    }
                    b
                }
            };
            // the leaf part's first position in the data
            let from: Vec<u64> = part
                .in_region
                .start
                .iter()
                .zip(&lp.in_region.start)
                .map(|(&a, &b)| a + b)
                .collect();
            copy_region(
                data,
                data_shape,
                &from,
                &mut buf,
                &leaf_shape,
                &lp.in_chunk.start,
                &lp.in_chunk.shape,
                elem,
            );
            let encoded = if keep_empty {
                Some(leaf_chain.encode_owned(buf).map_err(codec_err)?)
            } else {
                leaf_chain.encode_chunk(&buf).map_err(codec_err)?
            };
            Ok(encoded)
        };
        rewrite(&cc.chain, &leaves, &write_leaf).map_err(|e| match e {
            LeafError::Codec(source) => codec_err(source),
            LeafError::Array(e) => e,
        })
    }

    /// A chunk buffer of `len` bytes (a chunk of `shape`) holding the fill value.
    pub(crate) fn fill_chunk(&self, len: usize, shape: &[u64]) -> Result<AlignedBuffer> {
        let mut c = AlignedBuffer::try_zeroed(len).ok_or_else(|| ArrayError::TooLarge {
            what: "a chunk",
            shape: shape.to_vec(),
        })?;
        let fill = self.meta.fill_value.as_bytes();
        if fill.iter().any(|&b| b != 0) {
            fill_pattern(c.as_bytes_mut(), fill);
        }
        Ok(c)
    }

    /// Encodes and stores one whole chunk buffer, or deletes the key when it is all fill.
    pub(crate) fn store_chunk(&self, cc: &ChunkCodec, key: &str, chunk: &[u8]) -> Result<()> {
        let codec_err = |source| ArrayError::Codec {
            context: key.to_string(),
            source,
        };
        // a codec whose format stores no empty chunk (sparse_layout) never writes one
        let encoded = if self.options.write_empty_chunks && cc.chain.stores_empty_chunks() {
            Some(cc.chain.encode(chunk).map_err(codec_err)?)
        } else {
            // None when the chunk is all fill value (bit patterns, NaN equal to NaN)
            cc.chain.encode_chunk(chunk).map_err(codec_err)?
        };
        match encoded {
            Some(bytes) => self.store.set(key, &bytes)?,
            None => self.store.delete(key)?,
        }
        Ok(())
    }

    /// As [`Array::store_chunk`] for the chunk that is the block `place` of `data`.
    fn store_chunk_from_block(
        &self,
        cc: &ChunkCodec,
        key: &str,
        src: SourceBlock<'_>,
    ) -> Result<()> {
        let codec_err = |source| ArrayError::Codec {
            context: key.to_string(),
            source,
        };
        if self.options.write_empty_chunks && cc.chain.stores_empty_chunks() {
            let bytes = cc.chain.encode_from_block(src).map_err(codec_err)?;
            return Ok(self.store.set(key, &bytes)?);
        }
        // a shard as its index and inner chunks, written one after the other
        match cc
            .chain
            .encode_chunk_parts_from_block(src)
            .map_err(codec_err)?
        {
            Some(parts) => {
                let parts: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
                self.store.set_parts(key, &parts)?;
            }
            None => self.store.delete(key)?,
        }
        Ok(())
    }

    /// Writes an `ndarray` of the region's shape into a region.
    ///
    /// # Errors
    /// A data type other than `T`'s, data of another shape than the region's
    /// ([`ArrayError::ShapeMismatch`]), a region outside the array, store or codec errors.
    pub fn write_region<T: Element>(&self, region: &Region, data: ArrayViewD<'_, T>) -> Result<()> {
        self.check_type::<T>()?;
        let shape: Vec<u64> = data.shape().iter().map(|&n| n as u64).collect();
        if shape != region.shape {
            return Err(ArrayError::ShapeMismatch {
                expected: region.shape.clone(),
                got: shape,
            });
        }
        match data.as_slice() {
            Some(items) => self.write_region_bytes(region, T::as_bytes(items)),
            None => {
                let items: Vec<T> = data.iter().copied().collect();
                self.write_region_bytes(region, T::as_bytes(&items))
            }
        }
    }
}

/// What writes one leaf of a shard rewrite: its new encoded bytes (`None`: not stored) from
/// its grid index and stored bytes.
type LeafWriter<'a> =
    dyn Fn(&[u64], Option<&[u8]>) -> Result<Option<Vec<u8>>, LeafError> + Sync + 'a;

/// The error of a leaf rewrite: the sharding levels' (a [`CodecError`]) or the leaf's own.
enum LeafError {
    Codec(CodecError),
    Array(ArrayError),
}

impl From<CodecError> for LeafError {
    fn from(e: CodecError) -> Self {
        LeafError::Codec(e)
    }
}

impl From<ArrayError> for LeafError {
    fn from(e: ArrayError) -> Self {
        LeafError::Array(e)
    }
}

/// What a compare-and-swap write of a chunk does with its new encoding `new` (`None`: nothing
/// left to store) given what was `stored`.
fn shared_apply(stored: Option<&[u8]>, new: Option<Vec<u8>>) -> crate::cas::Apply<()> {
    match (new, stored) {
        (Some(bytes), _) => crate::cas::Apply::Write(bytes, ()),
        (None, None) => crate::cas::Apply::Keep(()),
        // the codecs cannot store an empty chunk (`sparse_layout`): a plain delete
        (None, Some(_)) => crate::cas::Apply::Delete(()),
    }
}

/// Whether a partial write of a chunk may rewrite only the leaves it touches
/// ([`CodecChain::rewrite_leaves`]): the chain is sharded and no level has array -> array
/// codecs, the leaf chain's included.
fn leaves_rewritable(chain: &CodecChain) -> bool {
    if !chain.is_sharded() {
        return false;
    }
    let mut level = chain;
    loop {
        if level.has_array_to_array() {
            return false;
        }
        match level.array_to_bytes().inner_chain() {
            Some(inner) => level = inner,
            None => return true,
        }
    }
}
