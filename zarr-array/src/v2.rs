//! Zarr v2 arrays: opened from `.zarray` + `.zattrs`, written back as zarr-python writes them,
//! and converted to and from Zarr v3 ([`Array::to_v3`], [`Array::to_v2`]).
//!
//! A v2 array is an [`Array`] like any other: it carries the Zarr v3 metadata equal to its
//! `.zarray` (a `regular` grid of its `chunks`, the `v2` chunk key encoding with its
//! `dimension_separator`, the codec chain of `zarr_codecs::v2::v3_codecs`), so every read,
//! write, selection, resize and append runs the same code, and it keeps its `.zarray` to write
//! back with the new shape. What v2 cannot hold is refused: `prepend` (v2 chunk keys cannot be
//! negative) asks for a conversion to v3 first.

use std::sync::Arc;

use serde_json::{Map, Value};
use zarr_codecs::v2::{v2_codecs, v3_codecs};
use zarr_meta::numpy::{ByteOrder, NumpyDtype};
use zarr_meta::v2::{ArrayMetadataV2, Attributes, Separator, ZARRAY, ZATTRS, ZGROUP};
use zarr_meta::{ArrayMetadata, ExtensionDef, FillValue};
use zarr_store::Store;

use crate::array::Array;
use crate::consolidated::{sync, Change};
use crate::error::{ArrayError, Result};
use crate::extensions::Extensions;
use crate::path::NodePath;

/// What a conversion ([`Array::to_v3`], [`Array::to_v2`]) did.
#[derive(Debug, Clone)]
pub struct Conversion {
    /// The array, opened in its new format.
    pub array: Array,
    /// Chunks stored under a new key (their bytes unchanged): a v3 array with `default` chunk
    /// keys going to v2. Zero for every v2 -> v3 conversion.
    pub chunks_moved: u64,
    /// Whether the metadata of the old format was deleted (`in_place`).
    pub replaced: bool,
}

/// The format of the metadata found at a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Found {
    /// `zarr.json` (its bytes).
    V3(Vec<u8>),
    /// `.zarray` (its bytes).
    V2Array(Vec<u8>),
    /// `.zgroup` (its bytes).
    V2Group(Vec<u8>),
    /// None of them.
    Nothing,
}

/// Looks for `zarr.json`, then `.zarray`, then `.zgroup` at `path` (one GET for a v3 node).
pub(crate) fn find_node(store: &dyn Store, path: &NodePath) -> Result<Found> {
    if let Some(b) = store.get(&path.key("zarr.json"))? {
        return Ok(Found::V3(b));
    }
    find_v2(store, path)
}

/// Looks for `.zarray`, then `.zgroup` at `path` (never `zarr.json`).
pub(crate) fn find_v2(store: &dyn Store, path: &NodePath) -> Result<Found> {
    if let Some(b) = store.get(&path.key(ZARRAY))? {
        return Ok(Found::V2Array(b));
    }
    if let Some(b) = store.get(&path.key(ZGROUP))? {
        return Ok(Found::V2Group(b));
    }
    Ok(Found::Nothing)
}

/// The attributes in `.zattrs` at `path` (none when it is absent).
pub(crate) fn read_attributes(store: &dyn Store, path: &NodePath) -> Result<Map<String, Value>> {
    match store.get(&path.key(ZATTRS))? {
        None => Ok(Map::new()),
        Some(b) => Attributes::from_slice(&b)
            .map(|a| a.0)
            .map_err(|source| ArrayError::Metadata {
                path: path.key(ZATTRS),
                source,
            }),
    }
}

/// The Zarr v3 metadata equal to a `.zarray` with these attributes.
pub(crate) fn v3_metadata(
    doc: &ArrayMetadataV2,
    attributes: Map<String, Value>,
    extensions: &Extensions,
    path: &NodePath,
) -> Result<ArrayMetadata> {
    let codecs = v3_codecs(doc, &extensions.codecs_v2, &extensions.codecs).map_err(|source| {
        ArrayError::Codec {
            context: path.key(ZARRAY),
            source,
        }
    })?;
    let mut grid = Map::new();
    grid.insert(
        "chunk_shape".into(),
        Value::from(doc.chunks.iter().map(|c| c.get()).collect::<Vec<_>>()),
    );
    let data_type = doc.dtype.data_type;
    // `null` reads as zarr-python reads a missing chunk of it: NaT for datetimes and
    // timedeltas, zero for every other type
    let fill = doc
        .fill_value
        .clone()
        .unwrap_or_else(|| FillValue::default_for(data_type));
    let mut meta = ArrayMetadata::new(
        doc.shape.clone(),
        data_type,
        ExtensionDef::with_configuration("regular", grid),
        fill,
        codecs,
    );
    let mut sep = Map::new();
    sep.insert(
        "separator".into(),
        Value::from(doc.dimension_separator.as_str()),
    );
    meta.chunk_key_encoding = ExtensionDef::with_configuration("v2", sep);
    meta.attributes = attributes;
    Ok(meta)
}

/// The `.zarray` equal to the v3 metadata `meta` (with `keys` the `v2` key encoding's
/// separator), or the feature v2 cannot hold.
pub(crate) fn v2_document(meta: &ArrayMetadata, path: &NodePath) -> Result<ArrayMetadataV2> {
    let no = |feature: String, reason: &str| ArrayError::NoV2Form {
        path: path.to_string(),
        feature,
        reason: reason.to_string(),
    };
    if meta.chunk_grid.name != "regular" {
        return Err(no(
            format!("chunk grid {:?}", meta.chunk_grid.name),
            "v2 has only regular chunks starting at 0",
        ));
    }
    if !meta.storage_transformers.is_empty() {
        return Err(no(
            "storage transformers".into(),
            "v2 has no storage transformers",
        ));
    }
    if meta.dimension_names.is_some() {
        return Err(no(
            "dimension_names".into(),
            "v2 has none (xarray keeps them in the attribute _ARRAY_DIMENSIONS)",
        ));
    }
    let chunks = meta
        .chunk_grid
        .configuration
        .as_ref()
        .and_then(|c| c.get("chunk_shape"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|v| v.as_u64().and_then(std::num::NonZeroU64::new))
                .collect::<Option<Vec<_>>>()
        })
        .and_then(|c| c)
        .ok_or_else(|| no("chunk grid".into(), "no chunk shape of positive sizes"))?;
    let codecs = v2_codecs(&meta.codecs, meta.shape.len()).map_err(|source| ArrayError::Codec {
        context: path.to_string(),
        source,
    })?;
    let separator = match meta.chunk_key_encoding.name.as_str() {
        "default" | "v2" => {
            let sep = meta
                .chunk_key_encoding
                .configuration
                .as_ref()
                .and_then(|c| c.get("separator"))
                .and_then(Value::as_str);
            match (meta.chunk_key_encoding.name.as_str(), sep) {
                ("v2", Some("/")) => Separator::Slash,
                ("v2", _) => Separator::Dot,
                // default keys move to v2 keys with the same separator
                (_, Some(".")) => Separator::Dot,
                _ => Separator::Slash,
            }
        }
        other => {
            return Err(no(
                format!("chunk key encoding {other:?}"),
                "v2 has only its own keys",
            ))
        }
    };
    let byte_order = match codecs.byte_order {
        Some(o) => Some(o),
        None => meta
            .data_type
            .endian_component_size()
            .map(|_| ByteOrder::Little),
    };
    let mut doc = ArrayMetadataV2::new(
        meta.shape.clone(),
        chunks,
        NumpyDtype {
            data_type: meta.data_type,
            byte_order,
        },
    );
    doc.fill_value = Some(meta.fill_value.clone());
    doc.order = codecs.order;
    doc.filters = codecs.filters;
    doc.compressor = codecs.compressor;
    doc.dimension_separator = separator;
    Ok(doc)
}

impl Array {
    /// Opens the v2 array whose `.zarray` is `bytes`.
    pub(crate) fn open_v2(
        store: Arc<dyn Store>,
        path: NodePath,
        bytes: &[u8],
        extensions: &Extensions,
    ) -> Result<Array> {
        let doc = ArrayMetadataV2::from_slice(bytes).map_err(|source| ArrayError::Metadata {
            path: path.key(ZARRAY),
            source,
        })?;
        let attributes = read_attributes(&*store, &path)?;
        Self::from_v2_document(store, path, doc, attributes, Arc::new(extensions.clone()))
    }

    /// Builds the array object of a v2 document without touching the store.
    pub(crate) fn from_v2_document(
        store: Arc<dyn Store>,
        path: NodePath,
        doc: ArrayMetadataV2,
        attributes: Map<String, Value>,
        extensions: Arc<Extensions>,
    ) -> Result<Array> {
        let meta = v3_metadata(&doc, attributes, &extensions, &path)?;
        let mut array = Array::from_metadata(store, path, meta, extensions)?;
        // the codecs as they write themselves back (`zstd` with its `checksum`, `blosc` with
        // its `typesize`), which is the `zarr.json` zarr-python writes for them
        array.meta.codecs = array.chain.to_defs();
        array.v2 = Some(Arc::new(doc));
        Ok(array)
    }

    /// The Zarr format of the array's metadata: 3 (`zarr.json`) or 2 (`.zarray`).
    pub fn zarr_format(&self) -> u8 {
        if self.v2.is_some() {
            2
        } else {
            3
        }
    }

    /// The `.zarray` document of a v2 array, with its current shape; `None` for v3 arrays.
    /// ([`Array::metadata`] is the equal v3 metadata, for every array.)
    pub fn metadata_v2(&self) -> Option<ArrayMetadataV2> {
        self.v2.as_deref().map(|doc| {
            let mut doc = doc.clone();
            doc.shape = self.meta.shape.clone();
            doc
        })
    }

    /// Writes `.zattrs` and `.zarray` (its current shape), as zarr-python writes them; the
    /// `.zarray` written.
    pub(crate) fn write_metadata_v2(&self, doc: &ArrayMetadataV2) -> Result<ArrayMetadataV2> {
        let mut doc = doc.clone();
        doc.shape = self.meta.shape.clone();
        self.store.set(
            &self.path.key(ZATTRS),
            &Attributes(self.meta.attributes.clone()).to_vec_pretty(),
        )?;
        self.store
            .set(&self.path.key(ZARRAY), &doc.to_vec_pretty())?;
        Ok(doc)
    }

    /// Refuses `operation` on a v2 array.
    pub(crate) fn check_not_v2(&self, operation: &'static str, reason: &'static str) -> Result<()> {
        if self.v2.is_some() {
            return Err(ArrayError::NeedsV3 {
                operation,
                path: self.path.to_string(),
                reason,
            });
        }
        Ok(())
    }

    /// Converts a v2 array to Zarr v3 where it is: writes the `zarr.json` equal to its
    /// `.zarray` (order `F` as a `transpose`, its chunk keys as the `v2` key encoding with its
    /// separator, numcodecs' codecs under the `numcodecs.*` names zarr-python 3 uses), so no
    /// chunk is rewritten or moved. With `in_place`, `.zarray` and `.zattrs` are deleted after
    /// (v2 readers no longer see the array); otherwise they stay beside it (v3 readers, this
    /// library included, open `zarr.json` first). A v3 array is returned as it is.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use zarr_array::{Array, ArrayBuilder, DataType};
    /// use zarr_store::{MemoryStore, Store};
    ///
    /// let store = Arc::new(MemoryStore::new());
    /// let a = ArrayBuilder::new(vec![4], DataType::Int32).zarr_format(2).create(store.clone(), "a")?;
    /// a.write_region_bytes(&zarr_array::Region::new(vec![0], vec![4])?, &[1u8; 16])?;
    /// let v3 = a.to_v3(true)?;
    /// assert_eq!((v3.chunks_moved, v3.array.zarr_format()), (0, 3));
    /// assert!(store.get("a/.zarray")?.is_none());
    /// let all = zarr_array::Selection::all();
    /// assert_eq!(Array::open(store, "a")?.read_selection_bytes(&all)?, vec![1u8; 16]);
    /// # Ok::<(), zarr_array::ArrayError>(())
    /// ```
    ///
    /// # Errors
    /// Store errors.
    pub fn to_v3(&self, in_place: bool) -> Result<Conversion> {
        let mut array = self.clone();
        if self.v2.is_none() {
            return Ok(Conversion {
                array,
                chunks_moved: 0,
                replaced: false,
            });
        }
        array.v2 = None;
        array.write_metadata()?;
        if in_place {
            self.store.delete(&self.path.key(ZARRAY))?;
            self.store.delete(&self.path.key(ZATTRS))?;
            // a v2 copy above no longer lists it (v3 copies now do)
            sync(&*self.store, &self.path, Change::Removed(Some(2)), None)?;
        }
        Ok(Conversion {
            array,
            chunks_moved: 0,
            replaced: in_place,
        })
    }

    /// Converts a v3 array to Zarr v2 where it is: writes the `.zarray` and `.zattrs` equal to
    /// its `zarr.json`. Chunks keep their bytes; with the `default` chunk key encoding each
    /// stored chunk moves to its v2 key (`c/0/1` -> `0/1`, counted in
    /// [`Conversion::chunks_moved`]); with `v2` keys nothing moves. With `in_place`,
    /// `zarr.json` is deleted after. A v2 array is returned as it is.
    ///
    /// # Errors
    /// [`ArrayError::NoV2Form`] (or [`ArrayError::Codec`] with
    /// `CodecError::NoV2Form`) naming what v2 cannot hold: a chunk grid other than `regular`
    /// (`regular_bounded`), dimension names, storage transformers, sharding, `crc32c`,
    /// `sparse_layout`, a transpose other than order `F`; nothing is written then. Store
    /// errors.
    pub fn to_v2(&self, in_place: bool) -> Result<Conversion> {
        if self.v2.is_some() {
            return Ok(Conversion {
                array: self.clone(),
                chunks_moved: 0,
                replaced: false,
            });
        }
        let doc = v2_document(&self.meta, &self.path)?;
        let array = Array::from_v2_document(
            self.store.clone(),
            self.path.clone(),
            doc.clone(),
            self.meta.attributes.clone(),
            self.extensions.clone(),
        )?
        .with_options(self.options);
        let mut moved = 0;
        for chunk in self.stored_chunks()? {
            let (old, new) = (self.chunk_key(&chunk), array.chunk_key(&chunk));
            if old == new {
                continue;
            }
            if let Some(bytes) = self.store.get(&old)? {
                self.store.set(&new, &bytes)?;
                moved += 1;
            }
        }
        array.write_metadata()?;
        if in_place {
            // the chunks left under their v3 keys belong to no array once zarr.json is gone
            let old_keys = self.stored_chunks_under_old_keys(&array)?;
            self.store.delete(&self.path.key("zarr.json"))?;
            for key in old_keys {
                self.store.delete(&key)?;
            }
            // a v3 copy above no longer lists it (v2 copies now do)
            sync(&*self.store, &self.path, Change::Removed(Some(3)), None)?;
        }
        Ok(Conversion {
            array,
            chunks_moved: moved,
            replaced: in_place,
        })
    }

    /// The keys of this (v3) array's stored chunks that `v2` stores elsewhere.
    fn stored_chunks_under_old_keys(&self, v2: &Array) -> Result<Vec<String>> {
        Ok(self
            .stored_chunks()?
            .into_iter()
            .map(|c| (self.chunk_key(&c), v2.chunk_key(&c)))
            .filter(|(old, new)| old != new)
            .map(|(old, _)| old)
            .collect())
    }
}
