//! Reading regions of an [`Array`]: whole and partial chunks decoded into the output, chunks
//! fetched in batches from stores that serve many requests at once, the chunk cache, and the
//! typed reads.

use std::sync::Arc;

use ndarray::ArrayD;
use zarr_codecs::{parallel, Block, BlockBuffer, CodecChain, CodecError};
use zarr_grid::geometry::{buffer_len, Region};
use zarr_grid::ChunkPart;
use zarr_store::Store;

use crate::array::{grow_to, to_ndarray, Array, ChunkCodec};
use crate::cache::{ChunkCache, Entry};
use crate::element::Element;
use crate::error::{try_collect, try_zeroed, ArrayError, Result};
use crate::fetch;
#[cfg(feature = "vlen")]
use crate::source::StoreSource;
use crate::source::{with_part_source, IndexHook};
use crate::write::{index_run, FILL_INDEX, INDEX};

impl Array {
    /// The decoded chunk buffer of a chunk (the full chunk shape, C order, native byte
    /// order), or `None` when the chunk is not stored.
    ///
    /// # Errors
    /// The store's, or a corrupt chunk.
    pub fn read_chunk_bytes(&self, chunk: &[i64]) -> Result<Option<zarr_codecs::AlignedBuffer>> {
        self.read_chunk_bytes_in(&*self.store, chunk)
    }

    /// [`Array::read_chunk_bytes`] through `store` (this array's, or a batch's replay).
    fn read_chunk_bytes_in(
        &self,
        store: &dyn Store,
        chunk: &[i64],
    ) -> Result<Option<zarr_codecs::AlignedBuffer>> {
        let key = self.chunk_key(chunk);
        match store.get(&key)? {
            None => Ok(None),
            Some(bytes) => self
                .chunk_codec(chunk)?
                .chain
                .decode(&bytes)
                .map(Some)
                .map_err(|source| ArrayError::Codec {
                    context: key,
                    source,
                }),
        }
    }

    /// Reads a region into raw bytes of its shape (C order, native byte order).
    ///
    /// # Errors
    /// As [`Array::read_region_bytes_into`].
    pub fn read_region_bytes(&self, region: &Region) -> Result<Vec<u8>> {
        let mut out = try_zeroed(self.region_byte_len(region)?, "the region read")?;
        self.read_region_bytes_into(region, &mut out)?;
        Ok(out)
    }

    /// Reads a region into `out` (C order, native byte order; `out.len()` must be the
    /// region's byte length).
    ///
    /// Chunks are fetched and decoded in parallel. A chunk that the region covers only in
    /// part is read and decoded only as far as its codecs allow: a shard's index and the inner
    /// chunks needed, the byte span of an uncompressed (`[bytes]`) chunk, the prefix of a
    /// `zstd` frame up to the part's last element. Whole shards are decoded inner chunk by
    /// inner chunk straight into `out`, and a chunk that is one contiguous run of `out` is
    /// decoded straight into it.
    ///
    /// # Errors
    /// A region outside the array, a wrong buffer length, the store's errors, corrupt chunks.
    pub fn read_region_bytes_into(&self, region: &Region, out: &mut [u8]) -> Result<()> {
        self.read_region_as(region, out, ReadInto::Fixed)
    }

    /// As [`Array::read_region_bytes_into`] for the elements `kind`: `out` is the region's
    /// buffer of them (for variable-size elements, the indices of the elements `kind`'s sink
    /// keeps: see [`ReadInto`]).
    pub(crate) fn read_region_as(
        &self,
        region: &Region,
        out: &mut [u8],
        kind: ReadInto<'_>,
    ) -> Result<()> {
        let elem = match kind {
            ReadInto::Fixed => self.fixed_element_size()?,
            ReadInto::Variable(_) => INDEX,
        };
        region.check_inside(&self.meta.shape)?;
        let len = buffer_len(&region.shape, elem).map_err(|_| ArrayError::TooLarge {
            what: "a region",
            shape: region.shape.clone(),
        })?;
        if out.len() != len {
            return Err(ArrayError::InvalidArgument {
                what: "output buffer",
                reason: format!("{} bytes for a region of {len} bytes", out.len()),
            });
        }
        if len == 0 {
            return Ok(());
        }
        let parts = try_collect(
            self.grid.chunks_in_region(region)?,
            "the chunks a region meets",
        )?;
        let out_err = |source: zarr_codecs::BlockError| ArrayError::Codec {
            context: format!("{}: the output buffer", self.path),
            source: source.into(),
        };
        let mut out = BlockBuffer::new(out, &region.shape, elem).map_err(out_err)?;
        out.advise_huge_pages();
        // the parts cover the region once, on the grid's lines: one block each
        let mut blocks = out
            .split(parts.iter().map(|part| &part.in_region))
            .map_err(out_err)?;
        let fill = match kind {
            ReadInto::Fixed => self.meta.fill_value.as_bytes(),
            ReadInto::Variable(_) => &FILL_INDEX[..],
        };
        let indexes = self.index_hook();
        // one part, into its block, read through `store` (this array's, or a batch's replay)
        let run = |store: &dyn Store,
                   scratch: &mut Vec<u8>,
                   part: &ChunkPart,
                   block: &mut Block<'_>|
         -> Result<()> {
            let key = self.chunk_key(&part.chunk);
            let ChunkCodec {
                shape: chunk_shape,
                len: chunk_len,
                chain,
            } = self.chunk_codec(&part.chunk)?;
            let whole_chunk = part.in_chunk.shape == chunk_shape;
            let codec_err = |source: CodecError| ArrayError::Codec {
                context: key.clone(),
                source,
            };
            let block_err = |source: zarr_codecs::BlockError| codec_err(source.into());
            if let ReadInto::Variable(sink) = kind {
                // the part's elements kept by the sink, their indices into the block
                let Some(kept) =
                    self.read_vlen_part(store, sink, part, &chunk_shape, &chain, indexes)?
                else {
                    return block.fill(fill).map_err(block_err);
                };
                let len = buffer_len(&part.in_chunk.shape, INDEX)?;
                grow_to(scratch, len, &part.in_chunk.shape)?;
                index_run(&mut scratch[..len], kept);
                let zero = vec![0; part.in_chunk.rank()];
                return block
                    .copy_from(scratch, &part.in_chunk.shape, &zero)
                    .map_err(block_err);
            }
            if let Some(cache) = &self.cache {
                let Some(decoded) = self.cached_chunk(store, cache, &chain, &key)? else {
                    return block.fill(fill).map_err(block_err);
                };
                return block
                    .copy_from(decoded.as_bytes(), &chunk_shape, &part.in_chunk.start)
                    .map_err(block_err);
            }
            if !whole_chunk {
                // the chain reads and decodes what the part needs: a shard's index and
                // inner chunks, `[bytes]`'s byte span, a `zstd` frame's prefix
                // (`PartialDecoder::region`)
                let plen = buffer_len(&part.in_chunk.shape, elem)?;
                grow_to(scratch, plen, &part.in_chunk.shape)?;
                let found = with_part_source(store, &key, &chain, indexes, |source| {
                    chain
                        .partial_decoder()
                        .region(source, &part.in_chunk, scratch)
                })?
                .map_err(codec_err)?;
                if !found {
                    return block.fill(fill).map_err(block_err);
                }
                let zero = vec![0; part.in_chunk.rank()];
                return block
                    .copy_from(scratch, &part.in_chunk.shape, &zero)
                    .map_err(block_err);
            }
            let Some(bytes) = store.get(&key)? else {
                return block.fill(fill).map_err(block_err);
            };
            if let Some(dst) = block.as_contiguous_mut() {
                // the chunk is one contiguous run of the output: decode straight into it,
                // with no scratch buffer and no copy
                return chain.decode_into(&bytes, dst).map_err(codec_err);
            }
            if chain.partial_decoder().inner_chunk_shape().is_some() {
                // a shard: each inner chunk is decoded straight into its place
                return chain.decode_into(&bytes, block).map_err(codec_err);
            }
            grow_to(scratch, chunk_len, &chunk_shape)?;
            chain
                .decode_into(&bytes, &mut *scratch)
                .map_err(codec_err)?;
            block
                .copy_from(scratch, &chunk_shape, &part.in_chunk.start)
                .map_err(block_err)
        };
        let store = &*self.store;
        let batched = fetch::batched(store);
        if let ([part], [block]) = (parts.as_slice(), blocks.as_mut_slice()) {
            if !batched {
                // one chunk: on this thread, with no hand-over to the pool and back
                return run(store, &mut Vec::new(), part, block);
            }
        }
        let mut work: Vec<(&ChunkPart, &mut Block<'_>)> =
            parts.iter().zip(blocks.iter_mut()).collect();
        if batched {
            // a store that serves many requests at once (an object store): every chunk's
            // requests in flight together, each chunk decoded on the
            // pool as its bytes arrive
            return fetch::run_fetched(store, &mut work, &|replay, (part, block)| {
                run(replay, &mut Vec::new(), part, block)
            });
        }
        // the calling thread reads and decodes too (`parallel`)
        parallel::try_for_each_mut(&mut work, Vec::<u8>::new, |scratch, _, item| {
            let (part, block) = item;
            run(store, scratch, part, block)
        })
    }

    /// The elements of `part` of a chunk of `chunk_shape` and `chain` given to `sink` (a
    /// shard's part read as its index and the inner chunks it meets, other chunks decoded
    /// whole), read through `store` (this array's, or a batch's replay): the index of the
    /// first it keeps, `None` when the chunk is not stored.
    #[cfg(feature = "vlen")]
    fn read_vlen_part(
        &self,
        store: &dyn Store,
        sink: &dyn VlenSink,
        part: &ChunkPart,
        chunk_shape: &[u64],
        chain: &CodecChain,
        indexes: IndexHook<'_>,
    ) -> Result<Option<u64>> {
        let key = self.chunk_key(&part.chunk);
        let codec_err = |source| ArrayError::Codec {
            context: key.clone(),
            source,
        };
        let codec = chain.array_to_bytes().name();
        if part.in_chunk.shape != chunk_shape && chain.partial_decoder().reads_part() {
            let source = StoreSource::with_indexes(store, &key, indexes);
            let Some(chunk) = chain
                .partial_decoder()
                .vlen_region(&source, &part.in_chunk)
                .map_err(codec_err)?
            else {
                return Ok(None);
            };
            let whole = Region::whole(&part.in_chunk.shape);
            return sink
                .keep(&key, codec, &chunk, &part.in_chunk.shape, &whole)
                .map(Some);
        }
        let Some(bytes) = store.get(&key)? else {
            return Ok(None);
        };
        let chunk = crate::vlen::decode_vlen(chain, &bytes).map_err(codec_err)?;
        drop(bytes);
        sink.keep(&key, codec, &chunk, chunk_shape, &part.in_chunk)
            .map(Some)
    }

    /// The elements at the linear positions `srcs` of the stored chunk `chunk` given to
    /// `sink` (the chunk read through `store`, this array's or a batch's replay, and decoded
    /// whole): the index of the first it keeps, `None` when the chunk is not stored.
    #[cfg(feature = "vlen")]
    pub(crate) fn read_vlen_at(
        &self,
        store: &dyn Store,
        sink: &dyn VlenSink,
        chunk: &[i64],
        srcs: &[usize],
    ) -> Result<Option<u64>> {
        let key = self.chunk_key(chunk);
        let Some(bytes) = store.get(&key)? else {
            return Ok(None);
        };
        let chain = self.chunk_codec(chunk)?.chain;
        let decoded =
            crate::vlen::decode_vlen(&chain, &bytes).map_err(|source| ArrayError::Codec {
                context: key.clone(),
                source,
            })?;
        drop(bytes);
        let codec = chain.array_to_bytes().name();
        sink.keep_at(&key, codec, &decoded, srcs).map(Some)
    }

    /// Without the `vlen` feature no chunk of variable-size elements is read.
    #[cfg(not(feature = "vlen"))]
    pub(crate) fn read_vlen_at(
        &self,
        _: &dyn Store,
        _: &dyn VlenSink,
        _: &[i64],
        _: &[usize],
    ) -> Result<Option<u64>> {
        Err(ArrayError::VariableSizeElements {
            data_type: self.meta.data_type,
        })
    }

    /// Without the `vlen` feature no chunk of variable-size elements is read.
    #[cfg(not(feature = "vlen"))]
    fn read_vlen_part(
        &self,
        _: &dyn Store,
        _: &dyn VlenSink,
        _: &ChunkPart,
        _: &[u64],
        _: &CodecChain,
        _: IndexHook<'_>,
    ) -> Result<Option<u64>> {
        Err(ArrayError::VariableSizeElements {
            data_type: self.meta.data_type,
        })
    }

    /// The decoded chunk `key` (`None`: not stored), from the cache when it holds it, else
    /// read through `store`, decoded and kept.
    fn cached_chunk(
        &self,
        store: &dyn Store,
        cache: &ChunkCache,
        chain: &CodecChain,
        key: &str,
    ) -> Result<Entry> {
        let generation = cache.generation();
        if let Some(entry) = cache.get(key) {
            return Ok(entry);
        }
        let value = store.get(key)?;
        let entry = match value {
            None => None,
            Some(bytes) => Some(Arc::new(chain.decode(&bytes).map_err(|source| {
                ArrayError::Codec {
                    context: key.to_string(),
                    source,
                }
            })?)),
        };
        cache.insert(generation, key, entry.clone());
        Ok(entry)
    }

    /// The decoded chunk `chunk` (`None`: not stored), through the cache if there is one.
    /// It is read through `store` (this array's, or a batch's replay).
    pub(crate) fn decoded_chunk_in(&self, store: &dyn Store, chunk: &[i64]) -> Result<Entry> {
        match &self.cache {
            Some(cache) => {
                let cc = self.chunk_codec(chunk)?;
                self.cached_chunk(store, cache, &cc.chain, &self.chunk_key(chunk))
            }
            None => Ok(self.read_chunk_bytes_in(store, chunk)?.map(Arc::new)),
        }
    }

    /// Reads a region into an `ndarray` of the matching element type.
    ///
    /// # Errors
    /// A data type other than `T`'s, a region outside the array, store or codec errors.
    pub fn read_region<T: Element>(&self, region: &Region) -> Result<ArrayD<T>> {
        self.check_type::<T>()?;
        let len = self.region_byte_len(region)?;
        let n = len / self.meta.data_type.size();
        let mut items = try_zeroed(n, "the region read")?;
        match T::as_bytes_mut(&mut items) {
            Some(bytes) => self.read_region_bytes_into(region, bytes)?,
            None => {
                let mut bytes = try_zeroed(len, "the region read")?;
                self.read_region_bytes_into(region, &mut bytes)?;
                T::copy_from_bytes(&mut items, &bytes)?;
            }
        }
        to_ndarray(&region.shape, items)
    }

    /// Reads the whole array.
    ///
    /// # Errors
    /// As [`Array::read_region`].
    pub fn read_all<T: Element>(&self) -> Result<ArrayD<T>> {
        self.read_region(&Region::whole(self.shape()))
    }
}

/// The elements a region read puts into its output buffer, so that fixed-size and
/// variable-size elements share the read path (its batches, threads and partial reads).
#[derive(Clone, Copy)]
#[cfg_attr(not(feature = "vlen"), allow(dead_code))] // `Variable`: only the vlen API makes one
pub(crate) enum ReadInto<'s> {
    /// Fixed-size elements: the output holds their bytes.
    Fixed,
    /// Variable-size elements: the sink keeps the elements of each part read (a region's
    /// part of a chunk, or a selection's elements of one), and the output
    /// holds one native-endian `u64` per element naming it: the index [`VlenSink::keep`]
    /// gave the part's first element, plus the element's place in the part (C order), or
    /// [`FILL_INDEX`] for the fill value.
    Variable(&'s dyn VlenSink),
}

/// Where a read of variable-size elements keeps them ([`ReadInto::Variable`]).
pub(crate) trait VlenSink: Sync {
    /// Keeps the elements of `at` (C order), a region of the decoded chunk `chunk` of
    /// `shape` stored under `key` (`codec` decoded it, for errors), and returns the index of
    /// the first: the others follow it.
    #[cfg(feature = "vlen")]
    fn keep(
        &self,
        key: &str,
        codec: &'static str,
        chunk: &zarr_codecs::vlen::VlenChunk,
        shape: &[u64],
        at: &Region,
    ) -> Result<u64>;

    /// As [`VlenSink::keep`] for the elements at the linear positions `srcs` of the chunk,
    /// in that order.
    #[cfg(feature = "vlen")]
    fn keep_at(
        &self,
        key: &str,
        codec: &'static str,
        chunk: &zarr_codecs::vlen::VlenChunk,
        srcs: &[usize],
    ) -> Result<u64>;
}
