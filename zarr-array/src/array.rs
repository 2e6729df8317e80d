//! [`Array`]: open, create, read and write Zarr v3 (and v2) arrays.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use ndarray::{ArrayD, ArrayViewD, IxDyn};
use rayon::prelude::*;
use serde_json::{Map, Value};
use zarr_buffer::{fill_pattern, AlignedBuffer};
use zarr_codecs::{parallel, Block, BlockBuffer, ChunkRepr, CodecChain, CodecError, SourceBlock};
use zarr_grid::geometry::{buffer_len, copy_region, regular_chunks_in_region, Region};
use zarr_grid::{ChunkGrid, ChunkKeyEncoding, ChunkPart};
use zarr_meta::{ArrayMetadata, DataType, FillValue, NodeMetadata};
use zarr_store::Store;

use crate::cache::{CacheStats, ChunkCache, Entry, Invalidating};
use crate::consolidated::Hierarchy;
use crate::element::Element;
use crate::error::{try_collect, try_zeroed, ArrayError, Result, SelectionError};
use crate::extensions::Extensions;
use crate::path::NodePath;
use crate::source::{with_part_source, ValueSource};

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
    /// The decoded-chunk cache ([`Array::with_cache`]) and the store `store` wraps for it.
    pub(crate) cache: Option<(Arc<ChunkCache>, Arc<dyn Store>)>,
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
        Ok(Array {
            store,
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
            chains: Arc::default(),
        })
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
        let base = match self.cache.take() {
            Some((_, base)) => base,
            None => self.store.clone(),
        };
        if bytes == 0 {
            self.store = base;
            return self;
        }
        let cache = Arc::new(ChunkCache::new(bytes));
        self.store = Arc::new(Invalidating {
            inner: base.clone(),
            cache: cache.clone(),
        });
        self.cache = Some((cache, base));
        self
    }

    /// What the decoded-chunk cache holds and how often it answered, if the array has one
    /// ([`Array::with_cache`]).
    pub fn cache_stats(&self) -> Option<CacheStats> {
        self.cache.as_ref().map(|(c, _)| c.stats())
    }

    /// The decoded chunk `key` (`None`: not stored), from the cache when it holds it, else
    /// fetched (or taken from `fetched`, a value a batch already fetched), decoded and kept.
    fn cached_chunk(
        &self,
        cache: &ChunkCache,
        chain: &CodecChain,
        key: &str,
        fetched: Option<Option<Vec<u8>>>,
    ) -> Result<Entry> {
        let generation = cache.generation();
        if let Some(entry) = cache.get(key) {
            return Ok(entry);
        }
        let value = match fetched {
            Some(value) => value,
            None => self.store.get(key)?,
        };
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
    pub(crate) fn decoded_chunk(&self, chunk: &[i64]) -> Result<Entry> {
        match &self.cache {
            Some((cache, _)) => {
                let cc = self.chunk_codec(chunk)?;
                self.cached_chunk(cache, &cc.chain, &self.chunk_key(chunk), None)
            }
            None => Ok(self.read_chunk_bytes(chunk)?.map(Arc::new)),
        }
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

    /// The decoded chunk buffer of a chunk (the full chunk shape, C order, native byte
    /// order), or `None` when the chunk is not stored.
    ///
    /// # Errors
    /// The store's, or a corrupt chunk.
    pub fn read_chunk_bytes(&self, chunk: &[i64]) -> Result<Option<zarr_codecs::AlignedBuffer>> {
        let key = self.chunk_key(chunk);
        match self.store.get(&key)? {
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
        let len = self.region_byte_len(region)?;
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
        let elem = self.meta.data_type.size();
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
        let fill = self.meta.fill_value.as_bytes();
        // one part, into its block: `fetched` is its chunk's value when a batch fetched it
        let run = |scratch: &mut Vec<u8>,
                   part: &ChunkPart,
                   block: &mut Block<'_>,
                   fetched: Option<Option<Vec<u8>>>|
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
            if let Some((cache, _)) = &self.cache {
                let Some(decoded) = self.cached_chunk(cache, &chain, &key, fetched)? else {
                    return block.fill(fill).map_err(block_err);
                };
                return block
                    .copy_from(decoded.as_bytes(), &chunk_shape, &part.in_chunk.start)
                    .map_err(block_err);
            }
            if !whole_chunk {
                // the chain reads and decodes what the part needs: a shard's index and
                // inner chunks, `[bytes]`'s byte span, a `zstd` frame's prefix
                // (`CodecChain::decode_region`)
                let plen = buffer_len(&part.in_chunk.shape, elem)?;
                grow_to(scratch, plen, &part.in_chunk.shape)?;
                let found = with_part_source(&*self.store, &key, &chain, |source| {
                    chain.decode_region(source, &part.in_chunk, scratch)
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
            let value = match fetched {
                Some(value) => value,
                None => self.store.get(&key)?,
            };
            let Some(bytes) = value else {
                return block.fill(fill).map_err(block_err);
            };
            if let Some(dst) = block.as_contiguous_mut() {
                // the chunk is one contiguous run of the output: decode straight into it,
                // with no scratch buffer and no copy
                return chain.decode_into(&bytes, dst).map_err(codec_err);
            }
            if chain.inner_chunk_shape().is_some() {
                // a shard: each inner chunk is decoded straight into its place
                return chain.decode_into_block(&bytes, block).map_err(codec_err);
            }
            grow_to(scratch, chunk_len, &chunk_shape)?;
            chain.decode_into(&bytes, scratch).map_err(codec_err)?;
            block
                .copy_from(scratch, &chunk_shape, &part.in_chunk.start)
                .map_err(block_err)
        };
        let concurrency = self.store.fetch_concurrency();
        if let ([part], [block]) = (parts.as_slice(), blocks.as_mut_slice()) {
            // one chunk: on this thread, with no hand-over to the pool and back
            return run(&mut Vec::new(), part, block, None);
        }
        if concurrency <= rayon::current_num_threads() {
            // the calling thread reads and decodes too (`parallel`)
            let mut work: Vec<(&ChunkPart, &mut Block<'_>)> =
                parts.iter().zip(blocks.iter_mut()).collect();
            return parallel::try_for_each_mut(&mut work, Vec::<u8>::new, |scratch, _, item| {
                let (part, block) = item;
                run(scratch, part, block, None)
            });
        }
        // A store that serves more requests at once than there are threads (an object
        // store): fetch the whole chunks of a batch together, then decode them in parallel.
        // Parts of chunks still read only what they need, themselves.
        for (batch, blocks) in parts
            .chunks(2 * concurrency)
            .zip(blocks.chunks_mut(2 * concurrency))
        {
            // whole chunks are fetched in the batch; with a cache, every chunk it lacks
            let whole: Vec<bool> = batch
                .iter()
                .map(|part| match &self.cache {
                    Some((cache, _)) => !cache.contains(&self.chunk_key(&part.chunk)),
                    None => {
                        self.grid.chunk_buffer_shape(&part.chunk).as_ref()
                            == Some(&part.in_chunk.shape)
                    }
                })
                .collect();
            let keys: Vec<String> = batch
                .iter()
                .zip(&whole)
                .filter(|(_, &w)| w)
                .map(|(part, _)| self.chunk_key(&part.chunk))
                .collect();
            let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
            let mut values = self.store.get_many(&keys)?.into_iter();
            let fetched: Vec<Option<Option<Vec<u8>>>> = whole
                .iter()
                .map(|&w| if w { values.next() } else { None })
                .collect();
            // the parts of chunks read what they need themselves, each waiting on its own
            // requests: on as many threads as the store serves requests at once, not on the
            // pool's thread per core (which kept a plane through 65 chunks at 2 in flight)
            let mut work: Vec<_> = batch.iter().zip(blocks.iter_mut()).zip(fetched).collect();
            parallel::try_for_each_mut_on_threads(
                &mut work,
                concurrency,
                Vec::<u8>::new,
                |scratch, _, ((part, block), value)| run(scratch, part, block, value.take()),
            )?;
        }
        Ok(())
    }

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

    pub(crate) fn check_type<T: Element>(&self) -> Result<()> {
        if !T::holds(self.meta.data_type) {
            return Err(ArrayError::DataTypeMismatch {
                expected: self.meta.data_type,
                got: T::NAME,
            });
        }
        Ok(())
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
