//! Writing regions of an [`Array`], each chunk by one of three branches: a chunk covered whole
//! is encoded from the data; a chunk covered in part whose codecs have a partial encoder (a
//! shard, of fixed-size or variable-size elements) is updated through it, which re-encodes only what the part touches; any other chunk
//! covered in part is read, decoded, updated and encoded. Chunks covered in part are written
//! by compare-and-swap where another writer may share them. And the typed writes.

use ndarray::ArrayViewD;
use rayon::prelude::*;
use zarr_buffer::{fill_pattern, AlignedBuffer};
use zarr_codecs::{ChunkUpdate, EmptyChunks, EncodeOptions, SourceBlock};
use zarr_grid::geometry::{buffer_len, copy_region, Region};
use zarr_grid::ChunkPart;
use zarr_store::{Store, Write};

use crate::array::{Array, ChunkCodec};
use crate::element::Element;
use crate::error::{try_collect, ArrayError, Result, SelectionError};
use crate::fetch;
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
        self.write_region_as(region, data, shared, Elements::Fixed)
    }

    /// As [`Array::write_region_in`] for the elements `kind`: `data` is the region's buffer
    /// of them (for variable-size elements, their indices: see [`Elements`]).
    pub(crate) fn write_region_as(
        &self,
        region: &Region,
        data: &[u8],
        shared: bool,
        kind: Elements<'_>,
    ) -> Result<()> {
        let elem = self.element_size(kind)?;
        region.check_inside(&self.meta.shape)?;
        let len = buffer_len(&region.shape, elem).map_err(|_| ArrayError::TooLarge {
            what: "a region",
            shape: region.shape.clone(),
        })?;
        if data.len() != len {
            return Err(ArrayError::ShapeMismatch {
                expected: region.shape.clone(),
                got: vec![(data.len() / elem) as u64],
            });
        }
        if len == 0 {
            return Ok(());
        }
        let parts = try_collect(
            self.grid.chunks_in_region(region)?,
            "the chunks a region meets",
        )?;
        let store = &*self.store;
        if fetch::batched(store) && !shared {
            return self.write_parts_batched(&parts, &region.shape, data, kind);
        }
        if let [part] = parts.as_slice() {
            // one chunk: on this thread, with no hand-over to the pool and back
            return self.write_chunk_part(store, part, &region.shape, data, shared, kind);
        }
        parts.par_iter().try_for_each(|part| {
            self.write_chunk_part(store, part, &region.shape, data, shared, kind)
        })
    }

    /// Writes `parts` on a store that serves many requests at once (an object store): the
    /// chunks read for a read-modify-write all in flight together ([`fetch::run_fetched`]),
    /// each chunk encoded on the pool, then every chunk uploaded at once
    /// ([`Store::write_each`]), in groups of parts whose bytes fit the store's
    /// [`Store::max_bytes_in_flight`].
    fn write_parts_batched(
        &self,
        parts: &[ChunkPart],
        shape: &[u64],
        data: &[u8],
        kind: Elements<'_>,
    ) -> Result<()> {
        let budget = self.store.max_bytes_in_flight();
        let elem = self.element_size(kind)? as u64;
        let len = |part: &ChunkPart| part.in_chunk.shape.iter().product::<u64>() * elem;
        let mut rest = parts;
        while !rest.is_empty() {
            let (mut n, mut bytes) = (1, len(&rest[0]));
            while let Some(part) = rest.get(n) {
                bytes = bytes.saturating_add(len(part));
                if bytes > budget {
                    break;
                }
                n += 1;
            }
            let (group, later) = rest.split_at(n);
            rest = later;
            let mut group: Vec<&ChunkPart> = group.iter().collect();
            let writes = fetch::run_fetched_writes(&*self.store, &mut group, &|store, part| {
                self.write_chunk_part(store, part, shape, data, false, kind)
            })?;
            let batch: Vec<Write<'_>> = writes
                .iter()
                .map(|(key, value)| match value {
                    Some(value) => Write::Set(key, value),
                    None => Write::Delete(key),
                })
                .collect();
            self.store.write_each(&batch)?;
        }
        Ok(())
    }

    /// Writes one part of a chunk through `store` (this array's, or a batch's replay, which
    /// keeps the writes for [`Store::write_each`]).
    fn write_chunk_part(
        &self,
        store: &dyn Store,
        part: &ChunkPart,
        data_shape: &[u64],
        data: &[u8],
        shared: bool,
        kind: Elements<'_>,
    ) -> Result<()> {
        let cc = self.chunk_codec(&part.chunk)?;
        let chunk_shape = &cc.shape;
        let elem = self.element_size(kind)?;
        let key = self.chunk_key(&part.chunk);
        let fixed = matches!(kind, Elements::Fixed);
        if fixed
            && part.in_chunk.shape == *chunk_shape
            && part.in_region.is_contiguous_in(data_shape)
        {
            let chunk_len = cc.len;
            // the whole chunk buffer is one contiguous run of the data: encode it in place
            let at = part.in_region.linear_offset(data_shape) as usize * elem;
            return self.store_chunk(store, &cc, &key, &data[at..at + chunk_len]);
        }
        // Every array position of this chunk, in its buffer.
        let covered = self
            .grid
            .chunk_part(&part.chunk)
            .map(|p| p.in_chunk)
            .ok_or_else(|| SelectionError::ChunkOutsideGrid {
                chunk: part.chunk.clone(),
            })?;
        if fixed && part.in_chunk == covered && part.in_chunk.shape == *chunk_shape {
            // the whole chunk buffer is a block of the data: encode it from there, with no
            // chunk buffer to fill first (a shard gathers each inner chunk from the data)
            let src = SourceBlock::new(data, data_shape, elem, &part.in_region).map_err(|e| {
                ArrayError::Codec {
                    context: key.clone(),
                    source: e.into(),
                }
            })?;
            return self.store_chunk_from_block(store, &cc, &key, src);
        }
        let codec_err = |source| ArrayError::Codec {
            context: key.clone(),
            source,
        };
        // a chunk written in part whose codecs update part of a chunk (a shard: only the
        // inner chunks the part touches are re-encoded)
        let partial = match cc.chain.partial_encoder() {
            Some(encoder) if part.in_chunk != covered => {
                let keep_empty = shared || self.options.write_empty_chunks;
                let (from, at) = (&part.in_region, part.in_chunk.clone());
                let update = match kind {
                    Elements::Fixed => {
                        ChunkUpdate::new(data, data_shape, elem, from, at, keep_empty)
                    }
                    Elements::Variable(items) => {
                        ChunkUpdate::new_vlen(data, data_shape, items, from, at, keep_empty)
                    }
                }
                .map_err(|e| codec_err(e.into()))?;
                Some((encoder, update))
            }
            _ => None,
        };
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
            return self.update_chunk(&key, |stored| match &partial {
                Some((encoder, update)) => encoder.encode_update(stored, update).map_err(codec_err),
                None => {
                    let mut chunk = self.decoded_or_fill(kind, &cc, &key, stored)?;
                    place(chunk.buf.as_bytes_mut());
                    self.encode_shared(kind, &cc, &key, &chunk, stored.is_some())
                }
            });
        }
        if let Some((encoder, update)) = &partial {
            if encoder.updates_in_place() {
                // read only what the update needs (a shard's index and the inner chunks it
                // touches), and let the store copy the rest into the new value as it is
                if let Some(value) = store.open_value(&key)? {
                    let source = ValueSource::new(store, &*value);
                    return match encoder
                        .encode_update_pieces(&source, update)
                        .map_err(codec_err)?
                    {
                        Some(pieces) => Ok(value.replace(&pieces)?),
                        None => Ok(store.delete(&key)?),
                    };
                }
                let new = encoder.encode_update(None, update).map_err(codec_err)?;
                return self.store_rewritten(store, &key, new);
            }
            let stored = store.get(&key)?;
            let new = encoder
                .encode_update(stored.as_deref(), update)
                .map_err(codec_err)?;
            return self.store_rewritten(store, &key, new);
        }
        let mut chunk = if part.in_chunk == covered {
            // the write replaces every array position of the chunk: start from fill
            self.fill_buf(kind, &cc)?
        } else {
            let stored = store.get(&key)?;
            self.decoded_or_fill(kind, &cc, &key, stored.as_deref())?
        };
        place(chunk.buf.as_bytes_mut());
        self.store_buf(store, kind, &cc, &key, &chunk)
    }

    /// The size of an element of a chunk buffer of `kind`.
    pub(crate) fn element_size(&self, kind: Elements<'_>) -> Result<usize> {
        match kind {
            Elements::Fixed => self.fixed_element_size(),
            Elements::Variable(_) => Ok(INDEX),
        }
    }

    /// A chunk buffer of `kind` for a chunk of `cc` holding the fill value.
    pub(crate) fn fill_buf(&self, kind: Elements<'_>, cc: &ChunkCodec) -> Result<ChunkBuf> {
        match kind {
            Elements::Fixed => Ok(ChunkBuf::bytes(self.fill_chunk(cc.len, &cc.shape)?)),
            Elements::Variable(_) => self.vlen_buf(cc, "", None),
        }
    }

    /// The chunk buffer of `kind` of the chunk `stored` under `key` (decoded), or one of fill
    /// value when it is absent.
    pub(crate) fn decoded_or_fill(
        &self,
        kind: Elements<'_>,
        cc: &ChunkCodec,
        key: &str,
        stored: Option<&[u8]>,
    ) -> Result<ChunkBuf> {
        match (kind, stored) {
            (Elements::Fixed, Some(bytes)) => {
                cc.chain
                    .decode(bytes)
                    .map(ChunkBuf::bytes)
                    .map_err(|source| ArrayError::Codec {
                        context: key.to_owned(),
                        source,
                    })
            }
            (Elements::Fixed, None) => self.fill_buf(kind, cc),
            (Elements::Variable(_), stored) => self.vlen_buf(cc, key, stored),
        }
    }

    /// Encodes a chunk buffer written by compare-and-swap (`stored`: the chunk was stored):
    /// `None` (nothing to store) only when it is all fill value and the codecs cannot store
    /// an empty chunk (`sparse_layout`), or, for variable-size elements, when it was not
    /// stored; otherwise a chunk of fill value is stored rather than deleted, since a delete
    /// cannot be conditional.
    fn encode_shared(
        &self,
        kind: Elements<'_>,
        cc: &ChunkCodec,
        key: &str,
        chunk: &ChunkBuf,
        stored: bool,
    ) -> Result<Option<Vec<u8>>> {
        let codec_err = |source| ArrayError::Codec {
            context: key.to_owned(),
            source,
        };
        match kind {
            // a chunk of fill values too, where the codecs can store one
            Elements::Fixed => cc
                .chain
                .encode(chunk.buf.as_bytes(), EncodeOptions::WRITE_EMPTY)
                .map_err(codec_err),
            Elements::Variable(data) => self.encode_vlen_buf(cc, key, chunk, data, stored),
        }
    }

    /// Encodes and stores a chunk buffer of `kind`, or deletes the key when it is all fill
    /// value (unless [`WriteOptions::write_empty_chunks`] is set).
    pub(crate) fn store_buf(
        &self,
        store: &dyn Store,
        kind: Elements<'_>,
        cc: &ChunkCodec,
        key: &str,
        chunk: &ChunkBuf,
    ) -> Result<()> {
        match kind {
            Elements::Fixed => self.store_chunk(store, cc, key, chunk.buf.as_bytes()),
            Elements::Variable(data) => {
                let encoded = self.encode_vlen_buf(cc, key, chunk, data, false)?;
                self.store_rewritten(store, key, encoded)
            }
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
        let (kind, fill) = if self.meta.data_type.is_variable_size() {
            // the chunk's element indices, moved and filled: no element of data
            (Elements::Variable(&[]), &FILL_INDEX[..])
        } else {
            (Elements::Fixed, self.meta.fill_value.as_bytes())
        };
        let elem = self.element_size(kind)?;
        self.update_chunk(&key, |stored| {
            let mut buf = self.decoded_or_fill(kind, &cc, &key, stored)?;
            edit(buf.buf.as_bytes_mut(), fill, elem);
            match (kind, stored) {
                // nothing stored and nothing to store: no write at all
                (Elements::Fixed, None) => cc
                    .chain
                    .encode(buf.buf.as_bytes(), EncodeOptions::SKIP_EMPTY)
                    .map_err(|source| ArrayError::Codec {
                        context: key.clone(),
                        source,
                    }),
                _ => self.encode_shared(kind, &cc, &key, &buf, stored.is_some()),
            }
        })
    }

    /// How chunks are encoded: a chunk of fill values skipped unless
    /// [`WriteOptions::write_empty_chunks`](crate::WriteOptions) is set.
    pub(crate) fn encode_options(&self) -> EncodeOptions {
        EncodeOptions {
            empty_chunks: if self.options.write_empty_chunks {
                EmptyChunks::Write
            } else {
                EmptyChunks::Skip
            },
        }
    }

    /// Stores a rewritten chunk, or deletes it when nothing is left (`None`).
    pub(crate) fn store_rewritten(
        &self,
        store: &dyn Store,
        key: &str,
        new: Option<Vec<u8>>,
    ) -> Result<()> {
        match new {
            Some(bytes) => Ok(store.set(key, &bytes)?),
            None => Ok(store.delete(key)?),
        }
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
    pub(crate) fn store_chunk(
        &self,
        store: &dyn Store,
        cc: &ChunkCodec,
        key: &str,
        chunk: &[u8],
    ) -> Result<()> {
        let codec_err = |source| ArrayError::Codec {
            context: key.to_string(),
            source,
        };
        // None when the chunk is all fill value (bit patterns, NaN equal to NaN), unless
        // empty chunks are written; a codec whose format stores no empty chunk
        // (sparse_layout) never writes one
        let encoded = cc
            .chain
            .encode(chunk, self.encode_options())
            .map_err(codec_err)?;
        self.store_rewritten(store, key, encoded)
    }

    /// As [`Array::store_chunk`] for the chunk that is the block `place` of `data`.
    fn store_chunk_from_block(
        &self,
        store: &dyn Store,
        cc: &ChunkCodec,
        key: &str,
        src: SourceBlock<'_>,
    ) -> Result<()> {
        let codec_err = |source| ArrayError::Codec {
            context: key.to_string(),
            source,
        };
        let options = self.encode_options();
        if options.empty_chunks != EmptyChunks::Skip {
            // one buffer, even for a chunk of fill values where the codecs store one
            let encoded = cc.chain.encode(src, options).map_err(codec_err)?;
            return self.store_rewritten(store, key, encoded);
        }
        // a shard as its index and inner chunks, written one after the other
        match cc.chain.encode_parts(src, options).map_err(codec_err)? {
            Some(parts) => {
                let parts: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
                store.set_parts(key, &parts)?;
            }
            None => store.delete(key)?,
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

/// The elements the write paths (regions, selections, resizes) put into chunk buffers, so
/// that fixed-size and variable-size elements share them.
#[derive(Clone, Copy)]
#[cfg_attr(not(feature = "vlen"), allow(dead_code))] // `Variable`: only the vlen API makes one
pub(crate) enum Elements<'d> {
    /// Fixed-size elements: a chunk buffer is the decoded chunk, the data written its bytes.
    Fixed,
    /// Variable-size elements (`string`, `variable_length_bytes`), those of the data
    /// written: a chunk buffer holds one native-endian `u64` per element naming it (the
    /// index of an element of the stored chunk, [`DATA_INDEX`] `| i` for element `i` of the
    /// data, [`FILL_INDEX`] for the fill value) and the data written is the indices of its
    /// elements, so that the block copies of fixed-size chunks place them; the chunk is
    /// made of the elements named when it is encoded.
    Variable(&'d [&'d [u8]]),
}

/// The size of an element index of [`Elements::Variable`].
pub(crate) const INDEX: usize = std::mem::size_of::<u64>();
/// The bit of an element index of [`Elements::Variable`] that names an element of the data
/// (that of an update of a chunk's part, [`ChunkUpdate::new_vlen`], which takes the indices).
#[cfg(feature = "vlen")]
pub(crate) const DATA_INDEX: u64 = zarr_codecs::VLEN_DATA_INDEX;
/// The element index of [`Elements::Variable`] that names the fill value.
pub(crate) const FILL_INDEX: [u8; INDEX] = zarr_codecs::VLEN_FILL_INDEX.to_ne_bytes();

/// Writes the element indices `first`, `first + 1`, ... into `buf`, one per [`INDEX`] bytes
/// (native-endian `u64`s), as [`Elements::Variable`]'s buffers and a read's
/// [`ReadInto::Variable`](crate::read::ReadInto) output hold them.
pub(crate) fn index_run(buf: &mut [u8], first: u64) {
    for (index, i) in buf.chunks_exact_mut(INDEX).zip(first..) {
        index.copy_from_slice(&i.to_ne_bytes());
    }
}

/// A chunk buffer of a write (see [`Elements`]): the decoded chunk, or the indices of its
/// elements with the stored chunk they name.
pub(crate) struct ChunkBuf {
    pub(crate) buf: AlignedBuffer,
    /// The stored chunk of variable-size elements that `buf`'s indices below
    /// [`DATA_INDEX`] name.
    #[cfg(feature = "vlen")]
    pub(crate) stored: Option<zarr_codecs::vlen::VlenChunk>,
}

impl ChunkBuf {
    /// A chunk buffer of fixed-size elements.
    pub(crate) fn bytes(buf: AlignedBuffer) -> ChunkBuf {
        ChunkBuf {
            buf,
            #[cfg(feature = "vlen")]
            stored: None,
        }
    }
}

#[cfg(not(feature = "vlen"))]
impl Array {
    /// Without the `vlen` feature no chunk of variable-size elements is read or written.
    fn vlen_buf(&self, _: &ChunkCodec, _: &str, _: Option<&[u8]>) -> Result<ChunkBuf> {
        Err(ArrayError::VariableSizeElements {
            data_type: self.meta.data_type,
        })
    }

    /// Without the `vlen` feature no chunk of variable-size elements is read or written.
    fn encode_vlen_buf(
        &self,
        _: &ChunkCodec,
        _: &str,
        _: &ChunkBuf,
        _: &[&[u8]],
        _: bool,
    ) -> Result<Option<Vec<u8>>> {
        Err(ArrayError::VariableSizeElements {
            data_type: self.meta.data_type,
        })
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
