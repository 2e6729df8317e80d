//! [`ArrayBuilder`]: create arrays with zarr-python's defaults.

use std::sync::Arc;

use serde_json::{json, Map, Value};
use zarr_codecs::bytes::{BytesConfig, Endian};
use zarr_layout_sparse::Format;
#[cfg(feature = "sparse")]
use zarr_layout_sparse::Layout;
use zarr_meta::{ArrayMetadata, DataType, ExtensionDef, FillValue};
use zarr_store::Store;

use crate::array::{Array, WriteOptions};
use crate::consolidated::Hierarchy;
use crate::error::{ArrayError, Result};
use crate::extensions::Extensions;
use crate::path::NodePath;

/// Creates an array. Defaults match zarr-python 3: codecs `bytes` (little endian) + `zstd`
/// (level 0, no checksum), `default` chunk keys with `/`, fill value zero.
///
/// ```
/// use std::sync::Arc;
/// use zarr_array::{ArrayBuilder, DataType};
/// use zarr_store::MemoryStore;
///
/// let store = Arc::new(MemoryStore::new());
/// let array = ArrayBuilder::new(vec![6, 4], DataType::Int32)
///     .chunk_shape(vec![4, 4])
///     .dimension_names(vec![Some("y".into()), Some("x".into())])
///     .create(store, "a")?;
/// assert_eq!(array.shape(), &[6, 4]);
/// assert_eq!(array.metadata().codecs[1].name, "zstd");
/// # Ok::<(), zarr_array::ArrayError>(())
/// ```
#[derive(Debug, Clone)]
pub struct ArrayBuilder {
    shape: Vec<u64>,
    data_type: DataType,
    chunk_shape: Option<Vec<u64>>,
    shard_shape: Option<Vec<u64>>,
    fill_value: Option<FillValue>,
    filters: Vec<ExtensionDef>,
    serializer: Option<ExtensionDef>,
    sparse: Option<Format>,
    compressors: Option<Vec<ExtensionDef>>,
    key_encoding: Option<ExtensionDef>,
    dimension_names: Option<Vec<Option<String>>>,
    attributes: Map<String, Value>,
    lower_bound: Option<Vec<i64>>,
    origin: Option<Vec<i64>>,
    #[cfg(feature = "rectilinear")]
    chunk_edges: Option<Vec<zarr_grid::rectilinear::AxisEdges>>,
    overwrite: bool,
    options: WriteOptions,
    /// `None`: not stated (3, or in a group the group's format).
    zarr_format: Option<u8>,
}

impl ArrayBuilder {
    /// A builder for an array of `shape` and `data_type`.
    pub fn new(shape: Vec<u64>, data_type: DataType) -> Self {
        ArrayBuilder {
            shape,
            data_type,
            chunk_shape: None,
            shard_shape: None,
            fill_value: None,
            filters: Vec::new(),
            serializer: None,
            sparse: None,
            compressors: None,
            key_encoding: None,
            dimension_names: None,
            attributes: Map::new(),
            lower_bound: None,
            origin: None,
            #[cfg(feature = "rectilinear")]
            chunk_edges: None,
            overwrite: false,
            options: WriteOptions::default(),
            zarr_format: None,
        }
    }

    /// The chunk shape (with [`ArrayBuilder::shards`], the inner chunk shape). Default: a
    /// shape of about 1 MiB.
    #[must_use]
    pub fn chunk_shape(mut self, shape: Vec<u64>) -> Self {
        self.chunk_shape = Some(shape);
        self
    }

    /// Stores chunks in shards of this shape (`sharding_indexed`, index at the end with
    /// crc32c, as zarr-python writes it); the codecs then apply to the inner chunks.
    #[must_use]
    pub fn shards(mut self, shape: Vec<u64>) -> Self {
        self.shard_shape = Some(shape);
        self
    }

    /// The fill value.
    #[must_use]
    pub fn fill_value(mut self, fill: FillValue) -> Self {
        self.fill_value = Some(fill);
        self
    }

    /// The fill value from its JSON form.
    ///
    /// # Errors
    /// A value that does not fit the data type.
    pub fn fill_value_json(mut self, value: &Value) -> Result<Self> {
        self.fill_value = Some(
            FillValue::from_json(value, self.data_type).map_err(|source| ArrayError::Metadata {
                path: "fill_value".into(),
                source,
            })?,
        );
        Ok(self)
    }

    /// Array->array codecs (e.g. `transpose`: a
    /// [`TransposeConfig`](zarr_codecs::transpose::TransposeConfig), or any
    /// [`ExtensionDef`]) before the serializer.
    #[must_use]
    pub fn filters(mut self, filters: impl IntoIterator<Item = impl Into<ExtensionDef>>) -> Self {
        self.filters = filters.into_iter().map(Into::into).collect();
        self
    }

    /// The array->bytes codec (default `bytes`, little endian; `vlen-utf8` / `vlen-bytes` for
    /// `string` / `variable_length_bytes`): a configuration of zarr-codecs
    /// ([`BytesConfig`](zarr_codecs::bytes::BytesConfig),
    /// [`ShardingConfig`](zarr_codecs::sharding::ShardingConfig), ...) or any [`ExtensionDef`].
    #[must_use]
    pub fn serializer(mut self, serializer: impl Into<ExtensionDef>) -> Self {
        self.serializer = Some(serializer.into());
        self
    }

    /// Stores each chunk (with [`ArrayBuilder::shards`], each inner chunk) in a sparse layout:
    /// the `sparse_layout` codec in `format`, with the narrowest index and pointer types that
    /// suit the chunk shape (the resolved types are written to the metadata). For other
    /// types, pass the codec to [`ArrayBuilder::serializer`]. The compressors still follow.
    #[must_use]
    pub fn sparse(mut self, format: Format) -> Self {
        self.sparse = Some(format);
        self
    }

    /// Bytes->bytes codecs (default `zstd` level 0; an empty list stores raw bytes): typed
    /// configurations of zarr-codecs
    /// ([`ZstdConfig`](zarr_codecs::zstd::ZstdConfig), ...) or [`ExtensionDef`]s, e.g.
    /// `.compressors([ZstdConfig { level: 3, checksum: false }])`, or
    /// `.compressors(Vec::<ExtensionDef>::new())` for none.
    #[must_use]
    pub fn compressors(
        mut self,
        compressors: impl IntoIterator<Item = impl Into<ExtensionDef>>,
    ) -> Self {
        self.compressors = Some(compressors.into_iter().map(Into::into).collect());
        self
    }

    /// The chunk key encoding (default `default` with `/`).
    #[must_use]
    pub fn key_encoding(mut self, encoding: ExtensionDef) -> Self {
        self.key_encoding = Some(encoding);
        self
    }

    /// Dimension names.
    #[must_use]
    pub fn dimension_names(mut self, names: Vec<Option<String>>) -> Self {
        self.dimension_names = Some(names);
        self
    }

    /// User attributes.
    #[must_use]
    pub fn attributes(mut self, attributes: Map<String, Value>) -> Self {
        self.attributes = attributes;
        self
    }

    /// Creates a `regular_bounded` array from the start: position 0 is coordinate
    /// `lower_bound[d]` (the domain is `[L, L + n)`).
    #[must_use]
    pub fn lower_bound(mut self, lower_bound: Vec<i64>) -> Self {
        self.lower_bound = Some(lower_bound);
        self
    }

    /// The grid origin of a `regular_bounded` array (default 0 on every axis).
    #[must_use]
    pub fn origin(mut self, origin: Vec<i64>) -> Self {
        self.origin = Some(origin);
        self
    }

    /// Creates a `rectilinear` array: the chunk edges of each axis (an integer edge repeated,
    /// or listed edges and `[size, count]` runs, which must cover the shape). Instead of
    /// [`ArrayBuilder::chunk_shape`]; not with [`ArrayBuilder::shards`],
    /// [`ArrayBuilder::sparse`] or a lower bound (a sharded rectilinear array takes a
    /// `sharding_indexed` [`ArrayBuilder::serializer`] whose inner chunks divide every edge).
    ///
    /// ```
    /// use std::num::NonZeroU64;
    /// use std::sync::Arc;
    /// use zarr_array::zarr_grid::rectilinear::{AxisEdges, Edge};
    /// use zarr_array::{ArrayBuilder, DataType, Region};
    ///
    /// let n = |v| NonZeroU64::new(v).unwrap();
    /// // one chunk per month of 2025 (days), and rows of 4
    /// let months = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31].map(|d| Edge::Single(n(d)));
    /// let a = ArrayBuilder::new(vec![365, 8], DataType::UInt16)
    ///     .chunk_edges(vec![AxisEdges::Listed(months.to_vec()), AxisEdges::Regular(n(4))])
    ///     .create(Arc::new(zarr_store::MemoryStore::new()), "daily")?;
    /// assert_eq!(a.chunk_shape(), None);
    /// assert_eq!(a.chunk_shape_of(&[1, 0]), Some(vec![28, 4]));
    /// a.write_region_bytes(&Region::new(vec![30, 0], vec![2, 1])?, &[1, 0, 2, 0])?;
    /// let stored: Vec<_> = a.stored_chunks()?;
    /// assert_eq!(stored, [vec![0, 0], vec![1, 0]]); // day 30 is January's, day 31 February's
    /// # Ok::<(), zarr_array::ArrayError>(())
    /// ```
    #[cfg(feature = "rectilinear")]
    #[must_use]
    pub fn chunk_edges(mut self, edges: Vec<zarr_grid::rectilinear::AxisEdges>) -> Self {
        self.chunk_edges = Some(edges);
        self
    }

    /// Replace a node already at the path, or clear keys left there without a node (every key
    /// under the path is deleted first).
    #[must_use]
    pub fn overwrite(mut self, overwrite: bool) -> Self {
        self.overwrite = overwrite;
        self
    }

    /// The Zarr format to create: 3 (`zarr.json`) or 2 (`.zarray` + `.zattrs`, as
    /// zarr-python writes `zarr_format=2`). Unstated, an array is v3, and one created through
    /// [`Group::create_array`](crate::Group::create_array) is of its group's format.
    ///
    /// A v2 array is stated with the same settings as a v3 one, which become its `.zarray`:
    /// the filters (numcodecs' `numcodecs.*` array -> array codecs, and a leading `transpose`
    /// reversing the axes for `order: "F"`), the serializer's byte order as the `dtype`'s, the
    /// compressors (the last one is `compressor`, any before it are filters; default `zstd`
    /// level 0, zarr-python's default for v2), and the chunk key encoding (default `v2` with
    /// `.`; `.key_encoding` with the `v2` encoding and `/` for nested keys). What v2 cannot hold
    /// (shards, `regular_bounded`, dimension names, `crc32c`, `sparse_layout`) is refused by
    /// name when the array is created.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use zarr_array::{ArrayBuilder, DataType};
    /// use zarr_array::zarr_codecs::transpose::{TransposeConfig, TransposeOrder};
    /// use zarr_store::{MemoryStore, Store};
    ///
    /// let store = Arc::new(MemoryStore::new());
    /// let a = ArrayBuilder::new(vec![6, 4], DataType::Float64)
    ///     .chunk_shape(vec![4, 4])
    ///     .filters([TransposeConfig { order: TransposeOrder::Named("F".into()) }])
    ///     .zarr_format(2)
    ///     .create(store.clone(), "a")?;
    /// assert_eq!(a.zarr_format(), 2);
    /// let zarray = String::from_utf8(store.get("a/.zarray")?.unwrap()).unwrap();
    /// assert!(zarray.contains("\"order\": \"F\"") && zarray.contains("\"id\": \"zstd\""));
    /// # Ok::<(), zarr_array::ArrayError>(())
    /// ```
    #[must_use]
    pub fn zarr_format(mut self, format: u8) -> Self {
        self.zarr_format = Some(format);
        self
    }

    /// The Zarr format stated with [`zarr_format`](Self::zarr_format), if any.
    pub fn stated_zarr_format(&self) -> Option<u8> {
        self.zarr_format
    }

    /// The Zarr format the array is created in.
    fn format(&self) -> u8 {
        self.zarr_format.unwrap_or(3)
    }

    /// Write options of the created array.
    #[must_use]
    pub fn write_options(mut self, options: WriteOptions) -> Self {
        self.options = options;
        self
    }

    fn default_chunks(&self) -> Vec<u64> {
        // halve the longest axis until a chunk holds at most ~1 MiB
        let target = (1u64 << 20) / self.data_type.size().max(1) as u64;
        let mut c: Vec<u64> = self.shape.iter().map(|&n| n.max(1)).collect();
        while c.iter().product::<u64>() > target {
            let Some((i, _)) = c.iter().enumerate().max_by_key(|(_, &v)| v) else {
                break;
            };
            c[i] = c[i].div_ceil(2);
        }
        c
    }

    /// The default array->bytes codec: `bytes` (little endian where the type has a byte
    /// order), or for `string` / `variable_length_bytes` `vlen-utf8` / `vlen-bytes`, as
    /// zarr-python writes them (`"configuration": {}`).
    fn bytes_codec(&self) -> ExtensionDef {
        match self.data_type {
            DataType::String => return ExtensionDef::with_configuration("vlen-utf8", Map::new()),
            DataType::Bytes => return ExtensionDef::with_configuration("vlen-bytes", Map::new()),
            _ => {}
        }
        let endian = self
            .data_type
            .endian_component_size()
            .map(|_| Endian::Little);
        BytesConfig { endian }.into()
    }

    /// The metadata document this builder creates.
    ///
    /// # Errors
    /// Inconsistent ranks.
    pub fn metadata(&self) -> Result<ArrayMetadata> {
        let rank = self.shape.len();
        let chunks = self
            .chunk_shape
            .clone()
            .unwrap_or_else(|| self.default_chunks());
        let check = |what: &'static str, n: usize| {
            if n == rank {
                Ok(())
            } else {
                Err(ArrayError::InvalidArgument {
                    what,
                    reason: format!("has {n} dimensions but the shape has {rank}"),
                })
            }
        };
        check("chunk shape", chunks.len())?;
        if let Some(names) = &self.dimension_names {
            check("dimension names", names.len())?;
        }
        let compressors = match &self.compressors {
            Some(compressors) => compressors.clone(),
            None => default_compressors()?,
        };
        let mut inner = self.filters.clone();
        let serializer = match (&self.serializer, self.sparse) {
            (Some(s), _) => s.clone(),
            (None, Some(format)) => sparse_def(format, &chunks)?,
            (None, None) => self.bytes_codec(),
        };
        inner.push(serializer);
        inner.extend(compressors);
        let (grid_chunks, codecs) = match &self.shard_shape {
            None => (chunks, inner),
            Some(shards) => {
                check("shard shape", shards.len())?;
                (shards.clone(), vec![sharding_def(chunks, inner)?])
            }
        };
        #[cfg(feature = "rectilinear")]
        if let Some(edges) = &self.chunk_edges {
            let conflict = [
                (self.shard_shape.is_some(), "shards"),
                (self.sparse.is_some(), "sparse"),
                (
                    self.lower_bound.is_some() || self.origin.is_some(),
                    "a lower bound",
                ),
                (self.chunk_shape.is_some(), "a chunk shape"),
            ];
            if let Some((_, what)) = conflict.iter().find(|(on, _)| *on) {
                return Err(ArrayError::InvalidArgument {
                    what: "chunk edges",
                    reason: format!("a rectilinear grid cannot be combined with {what}"),
                });
            }
            check("chunk edges", edges.len())?;
            let config = zarr_grid::rectilinear::RectilinearConfig::new(edges.clone());
            return Ok(self.finish_metadata(config.to_def(), codecs));
        }
        let chunk_grid = match (&self.lower_bound, &self.origin) {
            (None, None) => ExtensionDef::with_configuration(
                "regular",
                obj(json!({"chunk_shape": grid_chunks})),
            ),
            (lower, origin) => {
                let lower = lower.clone().unwrap_or_else(|| vec![0; rank]);
                let origin = origin.clone().unwrap_or_else(|| vec![0; rank]);
                check("lower bound", lower.len())?;
                check("origin", origin.len())?;
                ExtensionDef::with_configuration(
                    "regular_bounded",
                    obj(
                        json!({"chunk_shape": grid_chunks, "origin": origin, "lower_bound": lower}),
                    ),
                )
            }
        };
        Ok(self.finish_metadata(chunk_grid, codecs))
    }

    /// The metadata of `chunk_grid` and `codecs` with the rest of the builder's settings.
    fn finish_metadata(
        &self,
        chunk_grid: ExtensionDef,
        codecs: Vec<ExtensionDef>,
    ) -> ArrayMetadata {
        let mut meta = ArrayMetadata::new(
            self.shape.clone(),
            self.data_type,
            chunk_grid,
            self.fill_value
                .clone()
                .unwrap_or_else(|| FillValue::default_for(self.data_type)),
            codecs,
        );
        if let Some(k) = &self.key_encoding {
            meta.chunk_key_encoding = k.clone();
        } else if self.format() == 2 {
            let mut sep = Map::new();
            sep.insert("separator".into(), Value::from("."));
            meta.chunk_key_encoding = ExtensionDef::with_configuration("v2", sep);
        }
        meta.dimension_names.clone_from(&self.dimension_names);
        meta.attributes = self.attributes.clone();
        meta
    }

    /// Creates the array at `path` with every extension this build supports.
    ///
    /// # Errors
    /// A node already at the path ([`ArrayError::AlreadyExists`]) or keys stored there without
    /// a node ([`ArrayError::NotEmpty`]: leftover chunks would read through the new array),
    /// unless overwriting; invalid settings, store errors.
    pub fn create(&self, store: Arc<dyn Store>, path: &str) -> Result<Array> {
        self.create_with(store, path, &Extensions::default())
    }

    /// Creates the array at `path`, validating it against `extensions`.
    ///
    /// # Errors
    /// As [`ArrayBuilder::create`], and extensions that `extensions` lacks.
    pub fn create_with(
        &self,
        store: Arc<dyn Store>,
        path: &str,
        extensions: &Extensions,
    ) -> Result<Array> {
        self.create_node(
            store,
            NodePath::new(path)?,
            Arc::new(extensions.clone()),
            None,
        )
    }

    /// Creates the array at `node`; `hierarchy` is the consolidated copy of the group it is
    /// created through, refreshed when the array's entry is added to it.
    pub(crate) fn create_node(
        &self,
        store: Arc<dyn Store>,
        node: NodePath,
        extensions: Arc<Extensions>,
        hierarchy: Option<Arc<Hierarchy>>,
    ) -> Result<Array> {
        let meta = self.metadata()?;
        // validate everything before touching the store
        let mut array = match self.format() {
            3 => Array::from_metadata(store.clone(), node.clone(), meta, extensions)?,
            2 => {
                let doc = crate::v2::v2_document(&meta, &node)?;
                Array::from_v2_document(
                    store.clone(),
                    node.clone(),
                    doc,
                    meta.attributes,
                    extensions,
                )?
            }
            other => {
                return Err(ArrayError::InvalidArgument {
                    what: "zarr_format",
                    reason: format!("{other} is neither 2 nor 3"),
                })
            }
        }
        .with_options(self.options);
        array.hierarchy = hierarchy;
        // one listing tells an empty location (the usual case) from a node or its leftovers
        // (chunks of a deleted array, which would read through the new array)
        let prefix = node.prefix();
        let listing = store.list_dir(&prefix)?;
        if let Some(key) = listing.keys.first().or(listing.prefixes.first()) {
            if !self.overwrite {
                return Err(
                    if crate::v2::find_node(&*store, &node)? != crate::v2::Found::Nothing {
                        ArrayError::AlreadyExists {
                            path: node.to_string(),
                        }
                    } else {
                        ArrayError::NotEmpty {
                            path: node.to_string(),
                            key: key.clone(),
                        }
                    },
                );
            }
            store.delete_prefix(&prefix)?;
        }
        array.write_metadata()?;
        Ok(array)
    }
}

/// A codec of `feature`, which this build of zarr-codecs leaves out.
#[allow(dead_code)] // every codec feature on
fn compiled_out(what: &'static str, feature: &'static str) -> ArrayError {
    ArrayError::CompiledOut { what, feature }
}

/// zarr-python's default compressor: `zstd` level 0 without a checksum.
fn default_compressors() -> Result<Vec<ExtensionDef>> {
    #[cfg(feature = "zstd")]
    {
        let zstd = zarr_codecs::zstd::ZstdConfig {
            level: 0,
            checksum: false,
        };
        Ok(vec![zstd.into()])
    }
    #[cfg(not(feature = "zstd"))]
    Err(compiled_out(
        "the default compressor zstd (pass `compressors` to choose others)",
        "zstd",
    ))
}

/// `sharding_indexed` with inner chunks of `chunks` stored through `codecs`, the index as
/// zarr-python writes it (`[bytes little, crc32c]`, at the end).
fn sharding_def(chunks: Vec<u64>, codecs: Vec<ExtensionDef>) -> Result<ExtensionDef> {
    #[cfg(feature = "sharding")]
    {
        Ok(zarr_codecs::sharding::ShardingConfig::new(chunks, codecs).into())
    }
    #[cfg(not(feature = "sharding"))]
    {
        let _ = (chunks, codecs);
        Err(compiled_out("shards (sharding_indexed)", "sharding"))
    }
}

/// The `sparse_layout` codec in `format` with the narrowest types for chunks of `chunks`.
fn sparse_def(format: Format, chunks: &[u64]) -> Result<ExtensionDef> {
    #[cfg(feature = "sparse")]
    {
        let layout = Layout::smallest(format, chunks).map_err(|source| ArrayError::Sparse {
            context: format!("a {format} sparse layout for chunks of shape {chunks:?}"),
            source,
        })?;
        Ok(zarr_codecs::sparse_layout::SparseLayoutConfig::from_layout(&layout).into())
    }
    #[cfg(not(feature = "sparse"))]
    {
        let _ = (format, chunks);
        Err(compiled_out("a sparse layout (sparse_layout)", "sparse"))
    }
}

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}
