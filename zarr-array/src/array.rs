//! [`Array`]: opening a Zarr v3 (or v2) array, its metadata, attributes and chunk keys, its
//! codecs per chunk and its chunk cache. Reads are in `read.rs`, writes in `write.rs`,
//! selections in `select.rs`, growth in `grow.rs`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use ndarray::{ArrayD, IxDyn};
use serde_json::{Map, Value};
use zarr_codecs::{ChunkRepr, CodecChain};
use zarr_grid::geometry::{buffer_len, Region};
use zarr_grid::{ChunkGrid, ChunkKeyEncoding};
use zarr_meta::{ArrayMetadata, DataType, FillValue, NodeMetadata};
use zarr_store::Store;

use crate::cache::{CacheStats, ChunkCache, Invalidating};
use crate::consolidated::Hierarchy;
use crate::element::Element;
use crate::error::{ArrayError, Result, SelectionError};
use crate::extensions::Extensions;
use crate::path::NodePath;

/// How an array writes chunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WriteOptions {
    /// Store chunks that hold only the fill value (default `false`: such chunks are deleted,
    /// as zarr-python does by default).
    pub write_empty_chunks: bool,
}

/// A Zarr array in a store: Zarr v3 (`zarr.json`), or Zarr v2 (`.zarray` + `.zattrs`, see
/// [`Array::zarr_format`]; a v2 array carries the equal v3 metadata and the same API).
///
/// Cheap to clone (the store, registries and codec chain are shared). Reads and writes work
/// chunk by chunk in parallel (rayon); missing chunks read as the fill value.
#[derive(Debug, Clone)]
pub struct Array {
    pub(crate) store: Arc<dyn Store>,
    pub(crate) path: NodePath,
    pub(crate) meta: ArrayMetadata,
    pub(crate) grid: Arc<dyn ChunkGrid>,
    pub(crate) keys: Arc<dyn ChunkKeyEncoding>,
    pub(crate) chain: Arc<CodecChain>,
    pub(crate) extensions: Arc<Extensions>,
    pub(crate) options: WriteOptions,
    /// The consolidated copy the array was opened or created through, if any.
    pub(crate) hierarchy: Option<Arc<Hierarchy>>,
    /// The `.zarray` of a v2 array (its shape is `meta.shape` when written back).
    pub(crate) v2: Option<Arc<zarr_meta::v2::ArrayMetadataV2>>,
    /// The decoded-chunk cache ([`Array::with_cache`]).
    pub(crate) cache: Option<Arc<ChunkCache>>,
    /// The cache of decoded shard indexes ([`Array::with_index_cache`]).
    pub(crate) indexes: Option<Arc<ChunkCache>>,
    /// The store `store` wraps for the caches ([`Invalidating`]); `store` itself without them.
    pub(crate) base: Arc<dyn Store>,
    /// The chains of chunk shapes other than `chain`'s (a grid whose chunks differ:
    /// `rectilinear`), built when first needed.
    pub(crate) chains: Arc<ChainsByShape>,
}

/// The codec chains of a grid whose chunk buffers differ in shape, one per shape met, built
/// on first use (the chain's codecs check the shape, as at open). At most
/// [`ChainsByShape::KEEP`] are kept; past that the map starts again.
#[derive(Debug, Default)]
pub(crate) struct ChainsByShape {
    map: Mutex<HashMap<Vec<u64>, Arc<CodecChain>>>,
}

impl ChainsByShape {
    const KEEP: usize = 256;
}

/// What encodes and decodes one chunk: its buffer shape, byte length and codec chain.
#[derive(Debug, Clone)]
pub(crate) struct ChunkCodec {
    pub(crate) shape: Vec<u64>,
    pub(crate) len: usize,
    pub(crate) chain: Arc<CodecChain>,
}

impl Array {
    /// Opens the array at `path` with every extension this build supports: its `zarr.json`,
    /// or else its Zarr v2 `.zarray` (and `.zattrs`).
    ///
    /// # Errors
    /// No node, a group, malformed metadata or an unsupported extension.
    pub fn open(store: Arc<dyn Store>, path: &str) -> Result<Array> {
        Self::open_with(store, path, &Extensions::default())
    }

    /// Opens the array at `path`, resolving extensions through `extensions`.
    ///
    /// # Errors
    /// No node, a group, malformed metadata or an extension `extensions` lacks (the error
    /// names it).
    pub fn open_with(store: Arc<dyn Store>, path: &str, extensions: &Extensions) -> Result<Array> {
        let path = NodePath::new(path)?;
        let bytes = match crate::v2::find_node(&*store, &path)? {
            crate::v2::Found::V3(bytes) => bytes,
            crate::v2::Found::V2Array(bytes) => {
                return Self::open_v2(store, path, &bytes, extensions)
            }
            crate::v2::Found::V2Group(_) => {
                return Err(ArrayError::WrongNodeType {
                    path: path.to_string(),
                    expected: "array",
                    found: "group",
                })
            }
            crate::v2::Found::Nothing => {
                return Err(ArrayError::NotFound {
                    path: path.to_string(),
                })
            }
        };
        let meta = match NodeMetadata::from_slice_with(&bytes, &extensions.data_types) {
            Ok(NodeMetadata::Array(m)) => *m,
            Ok(NodeMetadata::Group(_)) => {
                return Err(ArrayError::WrongNodeType {
                    path: path.to_string(),
                    expected: "array",
                    found: "group",
                })
            }
            Err(source) => {
                return Err(ArrayError::Metadata {
                    path: path.to_string(),
                    source,
                })
            }
        };
        Self::from_metadata(store, path, meta, Arc::new(extensions.clone()))
    }

    /// Builds the array object for `meta` (validating every extension) without touching the
    /// store.
    pub(crate) fn from_metadata(
        store: Arc<dyn Store>,
        path: NodePath,
        meta: ArrayMetadata,
        extensions: Arc<Extensions>,
    ) -> Result<Array> {
        let meta_err = |source| ArrayError::Metadata {
            path: path.to_string(),
            source,
        };
        extensions
            .check_storage_transformers(&meta.storage_transformers)
            .map_err(meta_err)?;
        let grid: Arc<dyn ChunkGrid> =
            zarr_grid::build_grid(&extensions.chunk_grids, &meta.chunk_grid, &meta.shape)?.into();
        let keys: Arc<dyn ChunkKeyEncoding> = zarr_grid::build_key_encoding(
            &extensions.chunk_key_encodings,
            &meta.chunk_key_encoding,
        )?
        .into();
        let codec_err = |source| ArrayError::Codec {
            context: path.to_string(),
            source,
        };
        let repr = ChunkRepr::new(
            representative_chunk_shape(&*grid),
            meta.data_type,
            meta.fill_value.clone(),
        );
        let chain =
            CodecChain::from_defs(&meta.codecs, &repr, &extensions.codecs).map_err(codec_err)?;
        // chunks of other shapes (rectilinear): every edge length of every axis must suit the
        // codecs (a shard shape its inner chunks divide), checked now rather than at the
        // first chunk of that shape
        for shape in edge_probe_shapes(&*grid, &repr.shape) {
            CodecChain::from_defs(&meta.codecs, &repr.with_shape(shape), &extensions.codecs)
                .map_err(codec_err)?;
        }
        // a sharded array on a store whose requests have latency keeps the indexes it reads
        // (on one of cheap ranged reads, a local file, an index costs a positioned read)
        let indexes = (chain.partial_decoder().inner_chunk_shape().is_some()
            && !store.cheap_ranged_reads())
        .then(|| Arc::new(ChunkCache::new(Self::DEFAULT_INDEX_CACHE)));
        let mut array = Array {
            store: store.clone(),
            base: store,
            path,
            meta,
            grid,
            keys,
            chain: Arc::new(chain),
            extensions,
            options: WriteOptions::default(),
            hierarchy: None,
            v2: None,
            cache: None,
            indexes,
            chains: Arc::default(),
        };
        array.wrap_store();
        Ok(array)
    }

    /// The buffer shape, byte length and codec chain of chunk `chunk`: the array's one chain
    /// on a regular grid, else the chain of the chunk's shape.
    ///
    /// # Errors
    /// [`SelectionError::ChunkOutsideGrid`], or the codecs' refusal of the chunk's shape.
    pub(crate) fn chunk_codec(&self, chunk: &[i64]) -> Result<ChunkCodec> {
        let base = || ChunkCodec {
            shape: self.chain.repr().shape.clone(),
            len: self.chain.decoded_len(),
            chain: self.chain.clone(),
        };
        if self.grid.chunk_shape().is_some() {
            return Ok(base());
        }
        let shape = self.grid.chunk_buffer_shape(chunk).ok_or_else(|| {
            SelectionError::ChunkOutsideGrid {
                chunk: chunk.to_vec(),
            }
        })?;
        if shape == self.chain.repr().shape {
            return Ok(base());
        }
        let mut map = self
            .chains
            .map
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(chain) = map.get(&shape) {
            return Ok(ChunkCodec {
                shape,
                len: chain.decoded_len(),
                chain: chain.clone(),
            });
        }
        let repr = self.chain.repr().with_shape(shape.clone());
        let chain = Arc::new(
            CodecChain::from_defs(&self.meta.codecs, &repr, &self.extensions.codecs).map_err(
                |source| ArrayError::Codec {
                    context: self.chunk_key(chunk),
                    source,
                },
            )?,
        );
        if map.len() >= ChainsByShape::KEEP {
            map.clear();
        }
        map.insert(shape.clone(), chain.clone());
        Ok(ChunkCodec {
            shape,
            len: chain.decoded_len(),
            chain,
        })
    }

    /// The same array with other write options.
    #[must_use]
    pub fn with_options(mut self, options: WriteOptions) -> Self {
        self.options = options;
        self
    }

    /// The same array with a cache of decoded chunks holding at most `bytes` (`0`: no cache,
    /// the default), for repeated small reads of the same chunks: region reads, point reads
    /// and orthogonal selections then decode each chunk once, while it stays in the cache.
    /// The least recently used chunks are evicted first; a chunk larger than the cache is not
    /// kept. Clones of the returned array share the cache.
    ///
    /// With a cache, a chunk is decoded whole on its first read, even when the read needs only
    /// a part of it (the parts a read without a cache decodes alone: a shard's inner chunks,
    /// `[bytes]`'s byte spans). Writes, resizes, appends and prepends through this array (and
    /// its clones) keep the cache true; writes made through another handle or another process
    /// are not seen until the chunk is evicted or written here. Sparse reads
    /// ([`Array::sparse`]) do not use it.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// use zarr_array::{ArrayBuilder, DataType, Region};
    /// let a = ArrayBuilder::new(vec![100], DataType::UInt8)
    ///     .chunk_shape(vec![10])
    ///     .create(Arc::new(zarr_store::MemoryStore::new()), "a")?
    ///     .with_cache(1 << 20);
    /// a.write_region_bytes(&Region::new(vec![0], vec![100])?, &[7; 100])?;
    /// for _ in 0..3 {
    ///     assert_eq!(a.read_region_bytes(&Region::new(vec![5], vec![2])?)?, [7, 7]);
    /// }
    /// let stats = a.cache_stats().expect("a cache");
    /// assert_eq!((stats.misses, stats.hits), (1, 2)); // chunk 0 decoded once
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_cache(mut self, bytes: usize) -> Self {
        self.cache = (bytes > 0).then(|| Arc::new(ChunkCache::new(bytes)));
        self.wrap_store();
        self
    }

    /// What the decoded-chunk cache holds and how often it answered, if the array has one
    /// ([`Array::with_cache`]).
    pub fn cache_stats(&self) -> Option<CacheStats> {
        self.cache.as_ref().map(|c| c.stats())
    }

    /// The bound of the shard index cache a sharded array opened on a store whose requests
    /// have latency starts with ([`Array::with_index_cache`]): 16 MiB, the indexes of 16 384
    /// shards of 64 inner chunks.
    pub const DEFAULT_INDEX_CACHE: usize = 16 << 20;

    /// The same array with a cache of decoded shard indexes holding at most `bytes` (`0`: no
    /// cache). A sharded array opened on a store whose requests have latency (an object
    /// store, HTTP; not a local file, where an index costs a positioned read) has one of
    /// [`Array::DEFAULT_INDEX_CACHE`] bytes; this sets another bound, or turns it off or on
    /// for any store. Clones of the returned array share it.
    ///
    /// A read of part of a shard (a slab, points, a selection) then asks for the shard's
    /// index once: later reads of that shard, while its index stays in the cache, ask only
    /// for the inner chunks they need (in merged ranges), one request less per shard and one
    /// round trip less. The least recently used indexes are evicted first; an index is
    /// counted as its decoded bytes (16 per inner chunk) and its key. Whole-shard reads read
    /// the shard whole and do not use it; updates of part of a shard always read the stored
    /// index (a compare-and-swap update keeps using the stored value).
    ///
    /// Writes, deletes, resizes and partial shard updates through this array (and its clones)
    /// keep the cache true: a read after them asks for the index again. Writes made through
    /// another handle or another process are not seen until the index is evicted or the shard
    /// is written here, as with [`Array::with_cache`]; a read with such a stale index reads
    /// the inner chunks where the old index says. When that shows (the shard is gone or
    /// shorter, a range lies outside it, an inner chunk does not decode or fails its
    /// checksum), the index is read again and the read made once more, so the answer is the
    /// stored data or an error. What a read cannot show stays stale: an inner chunk stored
    /// elsewhere since, which the kept index marks as not stored, reads as the fill value, and
    /// inner chunks stored raw (`bytes` alone, no `crc32c`) of a shard rewritten elsewhere
    /// with another layout are read from their old places. Open the array again (or use
    /// `with_index_cache(0)`) to see such writes.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// use zarr_array::{ArrayBuilder, DataType, Region};
    /// let a = ArrayBuilder::new(vec![64], DataType::UInt8)
    ///     .shards(vec![32])
    ///     .chunk_shape(vec![8])
    ///     .create(Arc::new(zarr_store::MemoryStore::new()), "a")?
    ///     .with_index_cache(1 << 20);
    /// a.write_region_bytes(&Region::new(vec![0], vec![64])?, &[7; 64])?;
    /// for _ in 0..3 {
    ///     assert_eq!(a.read_region_bytes(&Region::new(vec![5], vec![2])?)?, [7, 7]);
    /// }
    /// let stats = a.index_cache_stats().expect("an index cache");
    /// assert_eq!((stats.misses, stats.hits, stats.entries), (1, 2, 1)); // shard 0's index read once
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_index_cache(mut self, bytes: usize) -> Self {
        self.indexes = (bytes > 0).then(|| Arc::new(ChunkCache::new(bytes)));
        self.wrap_store();
        self
    }

    /// What the shard index cache holds and how often it answered, if the array has one
    /// ([`Array::with_index_cache`]): entries are shard indexes.
    pub fn index_cache_stats(&self) -> Option<CacheStats> {
        self.indexes.as_ref().map(|c| c.stats())
    }

    /// Sets `store` to `base` wrapped for the caches the array has ([`Invalidating`]).
    fn wrap_store(&mut self) {
        self.store = if self.cache.is_none() && self.indexes.is_none() {
            self.base.clone()
        } else {
            Arc::new(Invalidating {
                inner: self.base.clone(),
                chunks: self.cache.clone(),
                indexes: self.indexes.clone(),
            })
        };
    }

    /// The index cache for the reads of one operation: the cache and its generation before
    /// the operation's first request (an index read then may not be kept after a write
    /// through this array since).
    pub(crate) fn index_hook(&self) -> crate::source::IndexHook<'_> {
        self.indexes.as_deref().map(|c| (c, c.generation()))
    }

    /// The metadata document (for a v2 array, the v3 metadata equal to its `.zarray`; see
    /// [`Array::metadata_v2`]).
    pub fn metadata(&self) -> &ArrayMetadata {
        &self.meta
    }

    /// The node path.
    pub fn path(&self) -> &str {
        self.path.as_str()
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// The registries the array was opened with.
    pub fn extensions(&self) -> &Extensions {
        &self.extensions
    }

    /// The shape (positions `0..shape[d]`).
    pub fn shape(&self) -> &[u64] {
        &self.meta.shape
    }

    /// The rank.
    pub fn rank(&self) -> usize {
        self.meta.shape.len()
    }

    /// The domain `[L, L + n)` per dimension (`L = 0` unless the grid is `regular_bounded`).
    pub fn domain(&self) -> Vec<(i64, i64)> {
        self.grid.domain()
    }

    /// The data type.
    pub fn data_type(&self) -> DataType {
        self.meta.data_type
    }

    /// The fill value.
    pub fn fill_value(&self) -> &FillValue {
        &self.meta.fill_value
    }

    /// The chunk grid.
    pub fn grid(&self) -> &dyn ChunkGrid {
        &*self.grid
    }

    /// The chunk shape of every chunk buffer (for a sharded array, the shard shape), or
    /// `None` when chunks differ in shape (a `rectilinear` grid with a listed axis; see
    /// [`Array::chunk_shape_of`]).
    pub fn chunk_shape(&self) -> Option<Vec<u64>> {
        self.grid.chunk_shape_u64()
    }

    /// The buffer shape of chunk `chunk` (a last chunk reaching past the array's end has it
    /// whole), `None` for a chunk outside the grid.
    pub fn chunk_shape_of(&self, chunk: &[i64]) -> Option<Vec<u64>> {
        self.grid.chunk_buffer_shape(chunk)
    }

    /// The codec chain.
    pub fn codecs(&self) -> &CodecChain {
        &self.chain
    }

    /// The dimension names, if any.
    pub fn dimension_names(&self) -> Option<&[Option<String>]> {
        self.meta.dimension_names.as_deref()
    }

    /// The user attributes.
    pub fn attributes(&self) -> &Map<String, Value> {
        &self.meta.attributes
    }

    /// Replaces the user attributes and writes the metadata, by compare-and-swap on the
    /// `zarr.json` as the store has it now (see [`Array::update_attributes`]); this handle
    /// then holds that metadata.
    ///
    /// # Errors
    /// The store's; [`ArrayError::Contended`] when other writers win every attempt.
    pub fn set_attributes(&mut self, attributes: Map<String, Value>) -> Result<()> {
        let (next, ()) = self.update_metadata(|fresh| {
            let mut next = fresh.clone();
            next.meta.attributes.clone_from(&attributes);
            Ok((next, ()))
        })?;
        *self = next;
        Ok(())
    }

    /// Merges `updates` into the user attributes (a `null` value removes a key) and writes
    /// the metadata.
    ///
    /// The merge is applied to the array's `zarr.json` as the store has it at the time of the
    /// write, by compare-and-swap (re-read and re-applied when another writer changed it
    /// meanwhile), so concurrent updates of different keys, from any process, all land, and
    /// a concurrent resize or append is not undone. This handle then holds the metadata
    /// written. On a store without conditional writes, and for a Zarr v2 array, the last
    /// writer wins.
    ///
    /// # Errors
    /// The store's; [`ArrayError::Contended`] when other writers win every attempt.
    pub fn update_attributes(&mut self, updates: Map<String, Value>) -> Result<()> {
        let (next, ()) = self.update_metadata(|fresh| {
            let mut next = fresh.clone();
            crate::cas::merge_attributes(&mut next.meta.attributes, &updates);
            Ok((next, ()))
        })?;
        *self = next;
        Ok(())
    }

    /// Changes the metadata by compare-and-swap on `zarr.json` (see the `cas` module):
    /// `change` gets the array as its `zarr.json` is now and returns the changed array (and
    /// an answer); on a conflict it runs again on the newer metadata, so it re-validates. The
    /// consolidated copies above are then updated the same way. A Zarr v2 array (two
    /// documents, `.zarray` and `.zattrs`) is changed from this handle's metadata and written
    /// plainly: the last writer wins.
    pub(crate) fn update_metadata<T>(
        &self,
        change: impl Fn(&Array) -> Result<(Array, T)>,
    ) -> Result<(Array, T)> {
        if self.v2.is_some() {
            let (next, out) = change(self)?;
            next.write_metadata()?;
            return Ok((next, out));
        }
        let key = self.path.key("zarr.json");
        let (next, out) = crate::cas::update(&*self.store, &key, |current| {
            let fresh = self.as_stored(current)?;
            let (next, out) = change(&fresh)?;
            Ok(crate::cas::Apply::Write(
                next.meta.to_vec_pretty(),
                (next, out),
            ))
        })?;
        crate::consolidated::sync(
            &*self.store,
            &self.path,
            crate::consolidated::Change::Array(&next.meta),
            self.hierarchy.as_deref(),
        )?;
        Ok((next, out))
    }

    /// This array as its `zarr.json` `current` says it is now (this handle's store, path,
    /// extensions, options and consolidated copy).
    fn as_stored(&self, current: Option<&[u8]>) -> Result<Array> {
        let Some(bytes) = current else {
            return Err(ArrayError::NotFound {
                path: self.path.to_string(),
            });
        };
        if bytes == self.meta.to_vec_pretty().as_slice() {
            return Ok(self.clone());
        }
        let meta = match NodeMetadata::from_slice_with(bytes, &self.extensions.data_types) {
            Ok(NodeMetadata::Array(meta)) => *meta,
            Ok(NodeMetadata::Group(_)) => {
                return Err(ArrayError::WrongNodeType {
                    path: self.path.to_string(),
                    expected: "array",
                    found: "group",
                })
            }
            Err(source) => {
                return Err(ArrayError::Metadata {
                    path: self.path.to_string(),
                    source,
                })
            }
        };
        let mut fresh = Self::from_metadata(
            self.store.clone(),
            self.path.clone(),
            meta,
            self.extensions.clone(),
        )?
        .with_options(self.options);
        fresh.hierarchy.clone_from(&self.hierarchy);
        Ok(fresh)
    }

    /// Writes the array's `zarr.json` (a v2 array: its `.zattrs` and `.zarray`), then the
    /// consolidated copies of the groups above it (see the consolidated module).
    pub(crate) fn write_metadata(&self) -> Result<()> {
        if let Some(doc) = &self.v2 {
            let doc = self.write_metadata_v2(doc)?;
            return crate::consolidated::sync(
                &*self.store,
                &self.path,
                crate::consolidated::Change::ArrayV2(&doc, &self.meta.attributes),
                self.hierarchy.as_deref(),
            );
        }
        self.store
            .set(&self.path.key("zarr.json"), &self.meta.to_vec_pretty())?;
        crate::consolidated::sync(
            &*self.store,
            &self.path,
            crate::consolidated::Change::Array(&self.meta),
            self.hierarchy.as_deref(),
        )
    }

    /// The chunk key encoding (`default` or `v2`, with its separator), as resolved from the
    /// metadata: encodes grid indices to keys relative to the array and decodes them back.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use zarr_array::{ArrayBuilder, DataType};
    /// let a = ArrayBuilder::new(vec![8, 8], DataType::UInt8)
    ///     .chunk_shape(vec![4, 4])
    ///     .create(Arc::new(zarr_store::MemoryStore::new()), "a")?;
    /// assert_eq!(a.chunk_key_encoding().encode(&[1, -2]), "c/1/-2");
    /// assert_eq!(a.chunk_key(&[1, 0]), "a/c/1/0");
    /// # Ok::<(), zarr_array::ArrayError>(())
    /// ```
    pub fn chunk_key_encoding(&self) -> &dyn ChunkKeyEncoding {
        &*self.keys
    }

    /// The store key of a chunk (grid indices may be negative).
    pub fn chunk_key(&self, chunk: &[i64]) -> String {
        self.path.key(&self.keys.encode(chunk))
    }

    /// The grid indices of the chunks present in the store, sorted. Keys that do not decode,
    /// or decode to a chunk outside the array's grid, are left out.
    ///
    /// # Errors
    /// The store's.
    pub fn stored_chunks(&self) -> Result<Vec<Vec<i64>>> {
        let prefix = self.path.prefix();
        let mut out: Vec<Vec<i64>> = self
            .store
            .list_prefix(&prefix)?
            .into_iter()
            .filter_map(|k| self.chunk_of_key(&prefix, &k))
            .collect();
        out.sort();
        Ok(out)
    }

    /// As [`Array::stored_chunks`], each with the size of its stored value in bytes: one
    /// listing on an object store (the sizes come with it), a size per chunk elsewhere.
    ///
    /// # Errors
    /// The store's.
    pub fn stored_chunk_sizes(&self) -> Result<Vec<(Vec<i64>, u64)>> {
        let prefix = self.path.prefix();
        let mut out: Vec<(Vec<i64>, u64)> = self
            .store
            .list_prefix_sizes(&prefix)?
            .into_iter()
            .filter_map(|(k, size)| Some((self.chunk_of_key(&prefix, &k)?, size)))
            .collect();
        out.sort();
        Ok(out)
    }

    /// The chunk a listed key under the array's `prefix` stores, if it is one of the grid's.
    fn chunk_of_key(&self, prefix: &str, key: &str) -> Option<Vec<i64>> {
        let rel = key.get(prefix.len()..)?;
        let idx = self.keys.decode(rel, self.rank()).ok()?;
        self.grid.contains_chunk(&idx).then_some(idx)
    }

    /// The element size of the fixed-size paths (byte buffers, typed [`Element`] data).
    ///
    /// # Errors
    /// [`ArrayError::VariableSizeElements`] for a `string` or `variable_length_bytes` array.
    pub(crate) fn fixed_element_size(&self) -> Result<usize> {
        self.meta
            .data_type
            .fixed_size()
            .ok_or(ArrayError::VariableSizeElements {
                data_type: self.meta.data_type,
            })
    }

    /// Checks a region against the shape and returns its byte length.
    pub(crate) fn region_byte_len(&self, region: &Region) -> Result<usize> {
        let elem = self.fixed_element_size()?;
        region.check_inside(&self.meta.shape)?;
        buffer_len(&region.shape, elem).map_err(|_| ArrayError::TooLarge {
            what: "a region",
            shape: region.shape.clone(),
        })
    }

    pub(crate) fn check_type<T: Element>(&self) -> Result<()> {
        if !T::holds(self.meta.data_type) {
            return Err(ArrayError::DataTypeMismatch {
                expected: self.meta.data_type,
                got: T::NAME,
            });
        }
        Ok(())
    }
}

/// The chunk shape the array's chain is built for: the grid's one chunk shape, or for a grid
/// whose chunks differ, the shape of its first chunk (of its first declared edges when the
/// array has no chunk).
fn representative_chunk_shape(grid: &dyn ChunkGrid) -> Vec<u64> {
    if let Some(shape) = grid.chunk_shape_u64() {
        return shape;
    }
    if let Some(shape) = grid.chunk_buffer_shape(&vec![0; grid.rank()]) {
        return shape;
    }
    #[cfg(feature = "rectilinear")]
    if let Some(r) = grid
        .as_any()
        .downcast_ref::<zarr_grid::rectilinear::RectilinearChunkGrid>()
    {
        return r.config().first_edges();
    }
    vec![1; grid.rank()]
}

/// Shapes that, with `base`, put every edge length of every axis of a grid whose chunks
/// differ before the codecs once (each differs from `base` on one axis): what a codec checks
/// of a shape is per axis (a shard shape its inner chunk shape divides), so these cover every
/// chunk's shape. Nothing for a regular grid.
fn edge_probe_shapes(grid: &dyn ChunkGrid, base: &[u64]) -> Vec<Vec<u64>> {
    #[cfg(feature = "rectilinear")]
    if let Some(r) = grid
        .as_any()
        .downcast_ref::<zarr_grid::rectilinear::RectilinearChunkGrid>()
    {
        let mut out = Vec::new();
        for (axis, sizes) in r.config().distinct_edges().into_iter().enumerate() {
            for size in sizes {
                if size != base[axis] {
                    let mut shape = base.to_vec();
                    shape[axis] = size;
                    out.push(shape);
                }
            }
        }
        return out;
    }
    let _ = (grid, base);
    Vec::new()
}

pub(crate) fn to_ndarray<T>(shape: &[u64], items: Vec<T>) -> Result<ArrayD<T>> {
    let dims: Vec<usize> = shape.iter().map(|&n| n as usize).collect();
    ArrayD::from_shape_vec(IxDyn(&dims), items).map_err(|source| ArrayError::NdarrayShape {
        shape: shape.to_vec(),
        source,
    })
}

/// Grows `buf` to `len` bytes, failing with [`ArrayError::TooLarge`] rather than aborting
/// when the memory cannot be had (chunk sizes come from untrusted metadata).
pub(crate) fn grow_to(buf: &mut Vec<u8>, len: usize, shape: &[u64]) -> Result<()> {
    if len > buf.len() {
        buf.try_reserve_exact(len - buf.len())
            .map_err(|_| ArrayError::TooLarge {
                what: "a chunk",
                shape: shape.to_vec(),
            })?;
    }
    buf.resize(len, 0);
    Ok(())
}
