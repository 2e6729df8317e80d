//! [`Group`]: hierarchies of arrays and groups.

use std::sync::Arc;

use serde_json::{Map, Value};
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

/// A Zarr v3 group.
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
        let path = NodePath::new(path)?;
        if store.get(&path.key("zarr.json"))?.is_some() {
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
        };
        group.write_metadata()?;
        Ok(group)
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
        let bytes = store
            .get(&path.key("zarr.json"))?
            .ok_or_else(|| ArrayError::NotFound {
                path: path.to_string(),
            })?;
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
        })
    }

    fn write_metadata(&self) -> Result<()> {
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
        let mut g = Group::create(self.store.clone(), path.as_str(), attributes)?;
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

    /// The direct children (arrays and groups), sorted by name. Folders without a
    /// `zarr.json` are not nodes and are left out.
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
            let Some(bytes) = self.store.get(&child.key("zarr.json"))? else {
                continue;
            };
            let kind = match NodeMetadata::from_slice_with(&bytes, &self.extensions.data_types) {
                Ok(NodeMetadata::Array(_)) => NodeKind::Array,
                Ok(NodeMetadata::Group(_)) => NodeKind::Group,
                Err(source) => {
                    return Err(ArrayError::Metadata {
                        path: child.to_string(),
                        source,
                    })
                }
            };
            out.push((name, kind));
        }
        out.sort();
        Ok(out)
    }
}
