//! [`Group`]: hierarchies of arrays and groups.

use std::sync::Arc;

use serde_json::{Map, Value};
use zarr_meta::v2::{
    Attributes, ConsolidatedMetadataV2, GroupMetadataV2, ZATTRS, ZGROUP, ZMETADATA,
};
use zarr_meta::{GroupMetadata, NodeMetadata};
use zarr_store::Store;

use crate::array::Array;
use crate::builder::ArrayBuilder;
use crate::error::{ArrayError, Result};
use crate::extensions::Extensions;
use crate::path::NodePath;

/// The kind of a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum NodeKind {
    /// An array.
    Array,
    /// A group.
    Group,
}

/// A Zarr group: Zarr v3 (`zarr.json`) or Zarr v2 (`.zgroup` + `.zattrs`; see
/// [`Group::create_v2`]). Its members may be of either format.
///
/// ```
/// use std::sync::Arc;
/// use zarr_array::{ArrayBuilder, DataType, Group, NodeKind};
/// use zarr_store::MemoryStore;
///
/// let store = Arc::new(MemoryStore::new());
/// let root = Group::create(store.clone(), "", Default::default())?;
/// let sub = root.create_group("sub", Default::default())?;
/// sub.create_array("leaf", &ArrayBuilder::new(vec![3], DataType::UInt8))?;
/// assert_eq!(root.members()?, vec![("sub".to_string(), NodeKind::Group)]);
/// assert_eq!(sub.members()?, vec![("leaf".to_string(), NodeKind::Array)]);
/// # Ok::<(), zarr_array::ArrayError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Group {
    store: Arc<dyn Store>,
    path: NodePath,
    meta: GroupMetadata,
    extensions: Arc<Extensions>,
    /// A v2 group (`.zgroup`), written back as such.
    v2: bool,
}

impl Group {
    /// Creates a group (error if a node exists there).
    ///
    /// # Errors
    /// An existing node, an invalid path, store errors.
    pub fn create(
        store: Arc<dyn Store>,
        path: &str,
        attributes: Map<String, Value>,
    ) -> Result<Group> {
        Self::create_format(store, path, attributes, false)
    }

    /// Creates a Zarr v2 group (`.zgroup` and `.zattrs`, as zarr-python writes them); its
    /// [`create_group`](Group::create_group) children are v2 groups too.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use zarr_array::{ArrayBuilder, DataType, Group, NodeKind};
    /// use zarr_store::{MemoryStore, Store};
    ///
    /// let store = Arc::new(MemoryStore::new());
    /// let root = Group::create_v2(store.clone(), "", Default::default())?;
    /// root.create_array("x", &ArrayBuilder::new(vec![3], DataType::UInt8).zarr_format(2))?;
    /// assert_eq!(store.get(".zgroup")?.unwrap(), b"{\n  \"zarr_format\": 2\n}");
    /// let root = Group::open(store, "")?;
    /// assert_eq!((root.zarr_format(), root.members()?), (2, vec![("x".into(), NodeKind::Array)]));
    /// # Ok::<(), zarr_array::ArrayError>(())
    /// ```
    ///
    /// # Errors
    /// As [`Group::create`].
    pub fn create_v2(
        store: Arc<dyn Store>,
        path: &str,
        attributes: Map<String, Value>,
    ) -> Result<Group> {
        Self::create_format(store, path, attributes, true)
    }

    fn create_format(
        store: Arc<dyn Store>,
        path: &str,
        attributes: Map<String, Value>,
        v2: bool,
    ) -> Result<Group> {
        let path = NodePath::new(path)?;
        if crate::v2::find_node(&*store, &path)? != crate::v2::Found::Nothing {
            return Err(ArrayError::AlreadyExists {
                path: path.to_string(),
            });
        }
        let group = Group {
            store,
            path,
            meta: GroupMetadata {
                attributes,
                extra_fields: Map::new(),
            },
            extensions: Arc::new(Extensions::default()),
            v2,
        };
        group.write_metadata()?;
        Ok(group)
    }

    /// The Zarr format of the group's metadata: 3 (`zarr.json`) or 2 (`.zgroup`).
    pub fn zarr_format(&self) -> u8 {
        if self.v2 {
            2
        } else {
            3
        }
    }

    /// Opens the group at `path`.
    ///
    /// # Errors
    /// No node, an array, malformed metadata.
    pub fn open(store: Arc<dyn Store>, path: &str) -> Result<Group> {
        Self::open_with(store, path, &Extensions::default())
    }

    /// Opens the group at `path`; its arrays open with `extensions`.
    ///
    /// # Errors
    /// No node, an array, malformed metadata.
    pub fn open_with(store: Arc<dyn Store>, path: &str, extensions: &Extensions) -> Result<Group> {
        let path = NodePath::new(path)?;
        let bytes = match crate::v2::find_node(&*store, &path)? {
            crate::v2::Found::V3(bytes) => bytes,
            crate::v2::Found::V2Group(bytes) => {
                return Self::open_v2(store, path, &bytes, extensions)
            }
            crate::v2::Found::V2Array(_) => {
                return Err(ArrayError::WrongNodeType {
                    path: path.to_string(),
                    expected: "group",
                    found: "array",
                })
            }
            crate::v2::Found::Nothing => {
                return Err(ArrayError::NotFound {
                    path: path.to_string(),
                })
            }
        };
        let meta = match NodeMetadata::from_slice_with(&bytes, &extensions.data_types) {
            Ok(NodeMetadata::Group(g)) => g,
            Ok(NodeMetadata::Array(_)) => {
                return Err(ArrayError::WrongNodeType {
                    path: path.to_string(),
                    expected: "group",
                    found: "array",
                })
            }
            Err(source) => {
                return Err(ArrayError::Metadata {
                    path: path.to_string(),
                    source,
                })
            }
        };
        Ok(Group {
            store,
            path,
            meta,
            extensions: Arc::new(extensions.clone()),
            v2: false,
        })
    }

    /// Opens the v2 group whose `.zgroup` is `bytes`: its `.zattrs`, and its `.zmetadata`
    /// when there is one, which is checked (the consolidated copy is not used yet: members
    /// are listed from the store).
    fn open_v2(
        store: Arc<dyn Store>,
        path: NodePath,
        bytes: &[u8],
        extensions: &Extensions,
    ) -> Result<Group> {
        let bad = |key: &str| {
            let key = path.key(key);
            move |source| ArrayError::Metadata { path: key, source }
        };
        GroupMetadataV2::from_slice(bytes).map_err(bad(ZGROUP))?;
        let attributes = crate::v2::read_attributes(&*store, &path)?;
        if let Some(b) = store.get(&path.key(ZMETADATA))? {
            ConsolidatedMetadataV2::from_slice(&b).map_err(bad(ZMETADATA))?;
        }
        Ok(Group {
            store,
            path,
            meta: GroupMetadata {
                attributes,
                extra_fields: Map::new(),
            },
            extensions: Arc::new(extensions.clone()),
            v2: true,
        })
    }

    fn write_metadata(&self) -> Result<()> {
        if self.v2 {
            self.store.set(
                &self.path.key(ZATTRS),
                &Attributes(self.meta.attributes.clone()).to_vec_pretty(),
            )?;
            self.store.set(
                &self.path.key(ZGROUP),
                &GroupMetadataV2::default().to_vec_pretty(),
            )?;
            return Ok(());
        }
        self.store
            .set(&self.path.key("zarr.json"), &self.meta.to_vec_pretty())?;
        Ok(())
    }

    /// The node path.
    pub fn path(&self) -> &str {
        self.path.as_str()
    }

    /// The user attributes.
    pub fn attributes(&self) -> &Map<String, Value> {
        &self.meta.attributes
    }

    /// Replaces the user attributes and writes the metadata.
    ///
    /// # Errors
    /// Store errors.
    pub fn set_attributes(&mut self, attributes: Map<String, Value>) -> Result<()> {
        self.meta.attributes = attributes;
        self.write_metadata()
    }

    /// Creates a child group.
    ///
    /// # Errors
    /// An invalid name, an existing node, store errors.
    pub fn create_group(&self, name: &str, attributes: Map<String, Value>) -> Result<Group> {
        let path = self.path.child(name)?;
        let mut g = Group::create_format(self.store.clone(), path.as_str(), attributes, self.v2)?;
        g.extensions = self.extensions.clone();
        Ok(g)
    }

    /// Creates a child array.
    ///
    /// # Errors
    /// An invalid name, an existing node, invalid settings, store errors.
    pub fn create_array(&self, name: &str, builder: &ArrayBuilder) -> Result<Array> {
        let path = self.path.child(name)?;
        builder.create_with(self.store.clone(), path.as_str(), &self.extensions)
    }

    /// Opens a child array.
    ///
    /// # Errors
    /// As [`Array::open_with`].
    pub fn open_array(&self, name: &str) -> Result<Array> {
        let path = self.path.child(name)?;
        Array::open_with(self.store.clone(), path.as_str(), &self.extensions)
    }

    /// Opens a child group.
    ///
    /// # Errors
    /// As [`Group::open_with`].
    pub fn open_group(&self, name: &str) -> Result<Group> {
        let path = self.path.child(name)?;
        Group::open_with(self.store.clone(), path.as_str(), &self.extensions)
    }

    /// The direct children (arrays and groups, of either format), sorted by name. Folders
    /// without a `zarr.json`, `.zarray` or `.zgroup` are not nodes and are left out.
    ///
    /// # Errors
    /// Store errors, or a child whose `zarr.json` is not valid metadata.
    pub fn members(&self) -> Result<Vec<(String, NodeKind)>> {
        let listing = self.store.list_dir(&self.path.prefix())?;
        let mut out = Vec::new();
        for prefix in listing.prefixes {
            let name = prefix
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .unwrap_or_default()
                .to_string();
            let Ok(child) = self.path.child(&name) else {
                continue;
            };
            let parsed = match crate::v2::find_node(&*self.store, &child)? {
                crate::v2::Found::Nothing => continue,
                crate::v2::Found::V3(bytes) => {
                    NodeMetadata::from_slice_with(&bytes, &self.extensions.data_types).map(|m| {
                        match m {
                            NodeMetadata::Array(_) => NodeKind::Array,
                            NodeMetadata::Group(_) => NodeKind::Group,
                        }
                    })
                }
                crate::v2::Found::V2Array(bytes) => {
                    zarr_meta::v2::ArrayMetadataV2::from_slice(&bytes).map(|_| NodeKind::Array)
                }
                crate::v2::Found::V2Group(bytes) => {
                    GroupMetadataV2::from_slice(&bytes).map(|_| NodeKind::Group)
                }
            };
            let kind = parsed.map_err(|source| ArrayError::Metadata {
                path: child.to_string(),
                source,
            })?;
            out.push((name, kind));
        }
        out.sort();
        Ok(out)
    }
}
