//! [`Group`]: hierarchies of arrays and groups.

use std::sync::Arc;

use serde_json::{Map, Value};
use zarr_meta::v2::{ArrayMetadataV2, Attributes, GroupMetadataV2, ZATTRS, ZGROUP};
use zarr_meta::{ArrayMetadata, GroupMetadata};
use zarr_store::Store;

use crate::array::Array;
use crate::builder::ArrayBuilder;
use crate::consolidated::{self, Change, Disagreement, Form, Held, Hierarchy, UseConsolidated};
use crate::error::{report, ArrayError, Result};
use crate::extensions::Extensions;
use crate::path::NodePath;
use crate::v2::{find_node, Found};

/// The kind of a node, as a listing ([`Group::members`]) finds it.
#[derive(Debug, Clone)]
pub enum NodeKind {
    /// An array.
    Array,
    /// A group.
    Group,
    /// A node whose metadata this build cannot read: a broken document, or an array with a
    /// data type, codec, chunk grid or key encoding this build (or the [`Extensions`] the
    /// group was opened with) lacks. The error says which.
    Unreadable {
        /// Why it cannot be read (what opening it would return).
        reason: Arc<ArrayError>,
    },
}

impl NodeKind {
    /// `"array"`, `"group"` or `"unreadable"`.
    pub fn name(&self) -> &'static str {
        match self {
            NodeKind::Array => "array",
            NodeKind::Group => "group",
            NodeKind::Unreadable { .. } => "unreadable",
        }
    }
}

/// Two kinds are equal when they are the same variant; unreadable ones when their reasons
/// read the same.
impl PartialEq for NodeKind {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (NodeKind::Array, NodeKind::Array) | (NodeKind::Group, NodeKind::Group) => true,
            (NodeKind::Unreadable { reason: a }, NodeKind::Unreadable { reason: b }) => {
                report(&**a) == report(&**b)
            }
            _ => false,
        }
    }
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
    /// The consolidated copy this group was opened with (its own, or its root's).
    consolidated: Option<Arc<Hierarchy>>,
}

impl Group {
    /// Creates a group (error if a node exists there). The consolidated copies of the
    /// groups above it (if any) list it afterwards.
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
    /// [`create_group`](Group::create_group) and [`create_array`](Group::create_array)
    /// children are v2 too, unless asked otherwise.
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
        Self::create_node(
            store,
            NodePath::new(path)?,
            attributes,
            Arc::new(Extensions::default()),
            v2,
            None,
        )
    }

    /// Creates the group at `path` (v2: `.zgroup` + `.zattrs`, else `zarr.json`), unless a
    /// node of either format is there; `consolidated` is the copy of the group it is created
    /// through.
    fn create_node(
        store: Arc<dyn Store>,
        path: NodePath,
        attributes: Map<String, Value>,
        extensions: Arc<Extensions>,
        v2: bool,
        consolidated: Option<Arc<Hierarchy>>,
    ) -> Result<Group> {
        if find_node(&*store, &path)? != Found::Nothing {
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
            extensions,
            v2,
            consolidated,
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

    /// Opens the group at `path`, using its consolidated copy when it holds one
    /// ([`UseConsolidated::IfPresent`]).
    ///
    /// # Errors
    /// No node, an array, malformed metadata.
    pub fn open(store: Arc<dyn Store>, path: &str) -> Result<Group> {
        Self::open_with(store, path, &Extensions::default())
    }

    /// Opens the group at `path`; its arrays open with `extensions`. Uses the group's
    /// consolidated copy when it holds one ([`UseConsolidated::IfPresent`]).
    ///
    /// # Errors
    /// No node, an array, malformed metadata.
    pub fn open_with(store: Arc<dyn Store>, path: &str, extensions: &Extensions) -> Result<Group> {
        Self::open_consolidated(store, path, extensions, UseConsolidated::IfPresent)
    }

    /// Opens the group at `path` (one GET for a v3 group), saying whether its consolidated
    /// copy is used: its `zarr.json`, or else its Zarr v2 `.zmetadata` (which lists the
    /// group's own `.zgroup` and `.zattrs` too) or `.zgroup` (and `.zattrs`). As
    /// [`open_format`](Self::open_format) with no Zarr format given.
    ///
    /// With the copy, the group's members, member groups and member arrays (at any depth:
    /// [`open_array`](Self::open_array) and [`open_group`](Self::open_group) take relative
    /// paths such as `"a/b/c"`) come from it with no further request, so a hierarchy of any
    /// size opens in one request (two for a v2 one, whose `zarr.json` is looked for first,
    /// unless [`open_format`](Self::open_format) is told it is v2). The copy is trusted as
    /// zarr-python trusts it: a member changed by a writer that did not update the copy opens
    /// as the copy says (`zarr validate` reports such a stale copy,
    /// [`consolidate`](Self::consolidate) rewrites it, and [`UseConsolidated::Ignore`] reads
    /// every member's own metadata). A node the copy does not list is looked up in the store.
    /// A copy lists the nodes of its group's Zarr format only (as zarr-python's does): a v2
    /// node below a v3 group with a copy, or a v3 node below a v2 one, is looked up in the
    /// store. The copy is the one of the group opened: `Group::open(store, "a/b")` uses
    /// `a/b`'s own copy, if any, not the root's; open the root and then `open_group("a/b")`
    /// to use the root's (`Array::open` always reads the array's own metadata).
    ///
    /// # Errors
    /// No node, an array, malformed metadata, and with [`UseConsolidated::Require`] a group
    /// without consolidated metadata ([`ArrayError::NoConsolidatedMetadata`]).
    pub fn open_consolidated(
        store: Arc<dyn Store>,
        path: &str,
        extensions: &Extensions,
        use_consolidated: UseConsolidated,
    ) -> Result<Group> {
        Self::open_format(store, path, extensions, use_consolidated, None)
    }

    /// Opens the group at `path` as [`open_consolidated`](Self::open_consolidated) does, with
    /// its Zarr format known (zarr-python's `zarr_format`): `Some(3)` reads `zarr.json` only,
    /// `Some(2)` the v2 documents only, so that a consolidated v2 hierarchy opens in the one
    /// GET of its `.zmetadata`; `None` looks for `zarr.json` first.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use zarr_array::{ArrayBuilder, DataType, Extensions, Group, UseConsolidated};
    /// use zarr_store::{testing::CountingStore, MemoryStore, Store};
    ///
    /// let counting = Arc::new(CountingStore::new(MemoryStore::new()));
    /// let store: Arc<dyn Store> = counting.clone();
    /// let mut root = Group::create_v2(store.clone(), "", Default::default())?;
    /// root.create_group("g", Default::default())?
    ///     .create_array("x", &ArrayBuilder::new(vec![3], DataType::UInt8).zarr_format(2))?;
    /// root.consolidate()?; // writes .zmetadata, as zarr.consolidate_metadata does
    /// counting.reset();
    /// let root = Group::open_format(store, "", &Extensions::default(), UseConsolidated::IfPresent, Some(2))?;
    /// assert_eq!(root.open_group("g")?.open_array("x")?.shape(), [3]);
    /// assert_eq!(counting.counts().total(), 1, "the .zmetadata alone");
    /// # Ok::<(), zarr_array::ArrayError>(())
    /// ```
    ///
    /// # Errors
    /// As [`open_consolidated`](Self::open_consolidated); a format other than 2 or 3
    /// ([`ArrayError::InvalidArgument`]).
    pub fn open_format(
        store: Arc<dyn Store>,
        path: &str,
        extensions: &Extensions,
        use_consolidated: UseConsolidated,
        zarr_format: Option<u8>,
    ) -> Result<Group> {
        if let Some(f) = zarr_format.filter(|f| !matches!(f, 2 | 3)) {
            return Err(ArrayError::InvalidArgument {
                what: "zarr_format",
                reason: format!("{f} (a Zarr format is 2 or 3)"),
            });
        }
        let path = NodePath::new(path)?;
        if zarr_format != Some(2) {
            match store.get(&path.key("zarr.json"))? {
                Some(bytes) => {
                    return Self::open_v3(store, path, &bytes, extensions, use_consolidated)
                }
                None if zarr_format == Some(3) => {
                    return Err(ArrayError::NotFound {
                        path: path.to_string(),
                    })
                }
                None => {}
            }
        }
        Self::open_v2(store, path, extensions, use_consolidated)
    }

    /// Opens the v3 group whose `zarr.json` is `bytes`.
    fn open_v3(
        store: Arc<dyn Store>,
        path: NodePath,
        bytes: &[u8],
        extensions: &Extensions,
        use_consolidated: UseConsolidated,
    ) -> Result<Group> {
        let meta = consolidated::group_metadata(&path, bytes)?;
        let copy = match use_consolidated {
            UseConsolidated::Ignore => None,
            _ => consolidated::inline_copy(&path, &meta)?,
        };
        if copy.is_none() && use_consolidated == UseConsolidated::Require {
            return Err(ArrayError::NoConsolidatedMetadata {
                path: path.to_string(),
            });
        }
        Ok(Group {
            store,
            consolidated: copy.map(|c| Hierarchy::new(path.clone(), Form::Inline, c)),
            path,
            meta,
            extensions: Arc::new(extensions.clone()),
            v2: false,
        })
    }

    /// Opens the v2 group at `path`: from its `.zmetadata` when it has one and it is to be
    /// used (the group's own `.zgroup` and `.zattrs` as listed there, when both are: one
    /// GET), else from its `.zgroup` and `.zattrs`.
    fn open_v2(
        store: Arc<dyn Store>,
        path: NodePath,
        extensions: &Extensions,
        use_consolidated: UseConsolidated,
    ) -> Result<Group> {
        let mut copy = None;
        if use_consolidated != UseConsolidated::Ignore {
            if let Some(bytes) = store.get(&Form::ZMetadata.key(&path))? {
                copy = Form::ZMetadata.read(&path, &bytes)?;
            }
        }
        let attributes = match &copy {
            Some(Held::ZMetadata {
                attributes: Some(attributes),
                lists_group: true,
                ..
            }) => attributes.clone(),
            _ => {
                let bytes = match crate::v2::find_v2(&*store, &path)? {
                    Found::V2Group(bytes) => bytes,
                    Found::V2Array(_) => {
                        return Err(ArrayError::WrongNodeType {
                            path: path.to_string(),
                            expected: "group",
                            found: "array",
                        })
                    }
                    _ => {
                        return Err(ArrayError::NotFound {
                            path: path.to_string(),
                        })
                    }
                };
                GroupMetadataV2::from_slice(&bytes).map_err(|source| ArrayError::Metadata {
                    path: path.key(ZGROUP),
                    source,
                })?;
                crate::v2::read_attributes(&*store, &path)?
            }
        };
        if copy.is_none() && use_consolidated == UseConsolidated::Require {
            return Err(ArrayError::NoConsolidatedMetadata {
                path: path.to_string(),
            });
        }
        Ok(Group {
            store,
            consolidated: copy
                .map(|h| Hierarchy::new(path.clone(), Form::ZMetadata, h.copy().clone())),
            path,
            meta: GroupMetadata {
                attributes,
                extra_fields: Map::new(),
            },
            extensions: Arc::new(extensions.clone()),
            v2: true,
        })
    }

    /// Writes the group's `zarr.json` (keeping the consolidated copy as the store has it
    /// now, so that changes other handles made to it are not undone), then the copies of
    /// the groups above it. A v2 group writes its `.zattrs` and `.zgroup`, then its own
    /// `.zmetadata` (which lists its attributes) and the v2 copies above it.
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
            return consolidated::sync(
                &*self.store,
                &self.path,
                Change::GroupV2(&self.meta.attributes),
                self.consolidated.as_deref(),
            );
        }
        let key = self.path.key("zarr.json");
        // By compare-and-swap, so that a copy another writer updated meanwhile is kept.
        let meta = crate::cas::update(&*self.store, &key, |current| {
            let mut meta = self.meta.clone();
            if meta.consolidated_metadata().ok().flatten().is_some() {
                if let Some(stored) =
                    current.and_then(|bytes| zarr_meta::GroupMetadata::from_slice(bytes).ok())
                {
                    meta.set_consolidated_metadata(stored.consolidated_metadata().ok().flatten());
                }
            }
            Ok(crate::cas::Apply::Write(meta.to_vec_pretty(), meta))
        })?;
        consolidated::sync(
            &*self.store,
            &self.path,
            Change::Group(&meta),
            self.consolidated.as_deref(),
        )
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

    /// Merges `updates` into the user attributes (a `null` value removes a key) and writes
    /// the metadata, as [`Array::update_attributes`] does: applied by compare-and-swap to the
    /// group's `zarr.json` as the store has it then, so that concurrent updates of different
    /// keys, from any process, all land; this handle then holds the attributes written. On a
    /// store without conditional writes, and for a Zarr v2 group, the last writer wins.
    ///
    /// # Errors
    /// Store errors, a group document that no longer parses; [`ArrayError::Contended`].
    pub fn update_attributes(&mut self, updates: Map<String, Value>) -> Result<()> {
        let merge = |attributes: &mut Map<String, Value>| {
            crate::cas::merge_attributes(attributes, &updates)
        };
        if self.v2 {
            merge(&mut self.meta.attributes);
            return self.write_metadata();
        }
        let key = self.path.key("zarr.json");
        let meta = crate::cas::update(&*self.store, &key, |current| {
            let Some(bytes) = current else {
                return Err(ArrayError::NotFound {
                    path: self.path.to_string(),
                });
            };
            let mut meta = consolidated::group_metadata(&self.path, bytes)?;
            merge(&mut meta.attributes);
            Ok(crate::cas::Apply::Write(meta.to_vec_pretty(), meta))
        })?;
        consolidated::sync(
            &*self.store,
            &self.path,
            Change::Group(&meta),
            self.consolidated.as_deref(),
        )?;
        self.meta.attributes = meta.attributes;
        Ok(())
    }

    /// Creates a child group of the group's Zarr format (a v2 group in a v2 group).
    ///
    /// # Errors
    /// An invalid name, an existing node, store errors.
    pub fn create_group(&self, name: &str, attributes: Map<String, Value>) -> Result<Group> {
        self.create_group_format(name, attributes, None)
    }

    /// Creates a child group of the Zarr format `zarr_format` (2 or 3; `None`: the group's
    /// own, as [`create_group`](Self::create_group)). A consolidated copy lists the nodes of
    /// its group's format only, as zarr-python's does: a v3 child of a v2 group is not in its
    /// `.zmetadata` (nor seen by zarr-python's view of the group), nor a v2 child in a v3
    /// group's copy.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use zarr_array::Group;
    /// use zarr_store::{MemoryStore, Store};
    ///
    /// let store = Arc::new(MemoryStore::new());
    /// let root = Group::create_v2(store.clone(), "", Default::default())?;
    /// assert_eq!(root.create_group("a", Default::default())?.zarr_format(), 2);
    /// assert_eq!(root.create_group_format("b", Default::default(), Some(3))?.zarr_format(), 3);
    /// assert!(store.get("a/.zgroup")?.is_some() && store.get("b/zarr.json")?.is_some());
    /// # Ok::<(), zarr_array::ArrayError>(())
    /// ```
    ///
    /// # Errors
    /// As [`create_group`](Self::create_group); a format other than 2 or 3
    /// ([`ArrayError::InvalidArgument`]).
    pub fn create_group_format(
        &self,
        name: &str,
        attributes: Map<String, Value>,
        zarr_format: Option<u8>,
    ) -> Result<Group> {
        let v2 = match zarr_format {
            None => self.v2,
            Some(2) => true,
            Some(3) => false,
            Some(other) => {
                return Err(ArrayError::InvalidArgument {
                    what: "zarr_format",
                    reason: format!("{other} (a Zarr format is 2 or 3)"),
                })
            }
        };
        let path = self.path.child(name)?;
        Group::create_node(
            self.store.clone(),
            path,
            attributes,
            self.extensions.clone(),
            v2,
            self.consolidated.clone(),
        )
    }

    /// Creates a child array, of the group's Zarr format unless `builder` states one
    /// ([`ArrayBuilder::zarr_format`]): a v2 array in a v2 group, as zarr-python creates
    /// it there.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use zarr_array::{ArrayBuilder, DataType, Group};
    /// use zarr_store::{MemoryStore, Store};
    ///
    /// let store = Arc::new(MemoryStore::new());
    /// let root = Group::create_v2(store.clone(), "", Default::default())?;
    /// let a = root.create_array("a", &ArrayBuilder::new(vec![3], DataType::UInt8))?;
    /// assert_eq!(a.zarr_format(), 2);
    /// assert!(store.get("a/.zarray")?.is_some() && store.get("a/zarr.json")?.is_none());
    /// # Ok::<(), zarr_array::ArrayError>(())
    /// ```
    ///
    /// # Errors
    /// An invalid name, an existing node, invalid settings, store errors.
    pub fn create_array(&self, name: &str, builder: &ArrayBuilder) -> Result<Array> {
        let path = self.path.child(name)?;
        let follows;
        let builder = match builder.stated_zarr_format() {
            None if self.v2 => {
                follows = builder.clone().zarr_format(2);
                &follows
            }
            _ => builder,
        };
        builder.create_node(
            self.store.clone(),
            path,
            self.extensions.clone(),
            self.consolidated.clone(),
        )
    }

    /// Opens the array at the relative path `name` (`"a"`, `"a/b/c"`), from the
    /// consolidated copy when the group holds one that lists it (no request).
    ///
    /// # Errors
    /// As [`Array::open_with`].
    pub fn open_array(&self, name: &str) -> Result<Array> {
        let path = self.descendant(name)?;
        let mut array = match self.listed(&path) {
            Some(doc) => self.array_from_doc(&path, &doc)?,
            None => Array::open_with(self.store.clone(), path.as_str(), &self.extensions)?,
        };
        array.hierarchy = self.consolidated.clone();
        Ok(array)
    }

    /// Opens the group at the relative path `name` (`"a"`, `"a/b"`), from the consolidated
    /// copy when the group holds one that lists it (no request).
    ///
    /// # Errors
    /// As [`Group::open_with`].
    pub fn open_group(&self, name: &str) -> Result<Group> {
        let path = self.descendant(name)?;
        match self.listed(&path) {
            Some(doc) => self.group_from_doc(&path, &doc),
            // not in the copy (or no copy): the group's own metadata, and its own copy if any
            None => Group::open_with(self.store.clone(), path.as_str(), &self.extensions),
        }
    }

    /// Deletes the member at the relative path `name` and everything below it, then removes
    /// it from the consolidated copies of the groups above it.
    ///
    /// # Errors
    /// An invalid path, no node there, store errors.
    pub fn delete_member(&self, name: &str) -> Result<()> {
        let path = self.descendant(name)?;
        if find_node(&*self.store, &path)? == Found::Nothing {
            return Err(ArrayError::NotFound {
                path: path.to_string(),
            });
        }
        self.store.delete_prefix(&path.prefix())?;
        consolidated::sync(
            &*self.store,
            &path,
            Change::Removed(None),
            self.consolidated.as_deref(),
        )
    }

    /// The direct children, sorted by name: arrays, groups, and children whose metadata
    /// this build cannot read ([`NodeKind::Unreadable`], with the error opening them would
    /// give), so that one such child does not hide the others. From the consolidated copy
    /// when the group holds one (no request), else from a listing of the store (one LIST and
    /// one GET per child, two or three for a v2 one). Folders without a `zarr.json`,
    /// `.zarray` or `.zgroup` are not nodes and are left out. A copy lists the members of
    /// its group's Zarr format only (as zarr-python's does: a v3 group's its v3 members, a
    /// v2 group's `.zmetadata` its v2 members).
    ///
    /// # Errors
    /// Store errors.
    pub fn members(&self) -> Result<Vec<(String, NodeKind)>> {
        let mut out: Vec<(String, NodeKind)> = match &self.consolidated {
            Some(h) => h
                .below(&self.path)
                .into_iter()
                .filter(|(rel, _)| !rel.contains('/'))
                .map(|(rel, doc)| {
                    let kind = self.classify_listed(&rel, &doc);
                    (rel, kind)
                })
                .collect(),
            None => self
                .listed_children(&self.path)?
                .into_iter()
                .map(|(child, doc)| {
                    let kind = self.classify_child(&child, &doc);
                    (child.name().to_string(), kind)
                })
                .collect(),
        };
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    /// Every node below the group, at any depth, by path relative to it (`"a"`, `"a/b"`),
    /// sorted by path; kinds as [`members`](Self::members) gives them. From the consolidated
    /// copy when the group holds one (no request), else by a walk of the store that goes
    /// into every readable group.
    ///
    /// # Errors
    /// Store errors.
    pub fn members_recursive(&self) -> Result<Vec<(String, NodeKind)>> {
        let mut out = Vec::new();
        match &self.consolidated {
            Some(h) => {
                for (rel, doc) in h.below(&self.path) {
                    let kind = self.classify_listed(&rel, &doc);
                    out.push((rel, kind));
                }
            }
            None => {
                let mut pending = vec![self.path.clone()];
                while let Some(dir) = pending.pop() {
                    for (child, doc) in self.listed_children(&dir)? {
                        let kind = self.classify_child(&child, &doc);
                        if kind == NodeKind::Group {
                            pending.push(child.clone());
                        }
                        let rel = self.relative(&child).to_string();
                        out.push((rel, kind));
                    }
                }
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    /// Whether the group was opened with a consolidated copy (its own or its root's).
    pub fn is_consolidated(&self) -> bool {
        self.consolidated.is_some()
    }

    /// Writes the consolidated copy of the hierarchy below this group, as zarr-python's
    /// `zarr.consolidate_metadata` does: for a v3 group into its `zarr.json` (one entry per
    /// v3 node below, each the node's `zarr.json`), for a v2 group as its `.zmetadata` (the
    /// group's `.zgroup` and `.zattrs`, then each v2 node's `.zattrs` and `.zarray` or
    /// `.zgroup`), in zarr-python's order, from every node's own metadata (a walk of the
    /// store through the nodes of the group's format); the group uses it from then on.
    /// Member groups' own metadata are left as they are.
    ///
    /// # Errors
    /// Store errors.
    pub fn consolidate(&mut self) -> Result<()> {
        let form = self.form();
        let copy =
            consolidated::collect(&*self.store, &self.path, form, &self.extensions.data_types)?;
        self.meta = consolidated::write_copy(&*self.store, &self.path, form, copy.clone())?;
        self.consolidated = Some(Hierarchy::new(self.path.clone(), form, copy));
        Ok(())
    }

    /// Compares the consolidated copy this group holds in the store (read again: its
    /// `zarr.json`, or a v2 group's `.zmetadata`) with every member's own metadata; empty
    /// when they agree or the group holds none.
    ///
    /// # Errors
    /// Store errors, or this group's own metadata (or its copy) malformed.
    pub fn check_consolidated(&self) -> Result<Vec<Disagreement>> {
        let form = self.form();
        let Some(bytes) = self.store.get(&form.key(&self.path))? else {
            if self.v2 {
                return Ok(Vec::new());
            }
            return Err(ArrayError::NotFound {
                path: self.path.to_string(),
            });
        };
        match form.read(&self.path, &bytes)? {
            Some(held) => consolidated::check(&*self.store, &self.path, form, held.copy()),
            None => Ok(Vec::new()),
        }
    }

    /// Where this group keeps a consolidated copy: `zarr.json` (v3) or `.zmetadata` (v2).
    fn form(&self) -> Form {
        if self.v2 {
            Form::ZMetadata
        } else {
            Form::Inline
        }
    }

    /// `name` below this group as a node path.
    fn descendant(&self, name: &str) -> Result<NodePath> {
        let rel = NodePath::new(name)?;
        if rel.as_str().is_empty() {
            return Err(ArrayError::InvalidPath {
                path: name.to_string(),
                reason: "a member path names at least one node below the group",
            });
        }
        NodePath::new(&self.path.key(rel.as_str()))
    }

    /// `node` relative to this group.
    fn relative<'a>(&self, node: &'a NodePath) -> &'a str {
        let prefix = self.path.prefix();
        node.as_str().strip_prefix(&prefix).unwrap_or(node.as_str())
    }

    /// The document of `node` in the consolidated copy, if the group has one that lists it.
    fn listed(&self, node: &NodePath) -> Option<Value> {
        self.consolidated.as_ref()?.get(node)
    }

    /// The children of `dir` that are nodes (a `zarr.json`, else a `.zarray` or `.zgroup`),
    /// with their metadata document.
    fn listed_children(&self, dir: &NodePath) -> Result<Vec<(NodePath, Child)>> {
        let listing = self.store.list_dir(&dir.prefix())?;
        let children: Vec<NodePath> = listing
            .prefixes
            .iter()
            .filter_map(|prefix| {
                let name = prefix.trim_end_matches('/').rsplit('/').next()?;
                dir.child(name).ok()
            })
            .collect();
        let store = &*self.store;
        let found: Vec<Found> = if crate::fetch::batched(store) {
            // a remote store: every child's metadata requested at once
            let mut slots: Vec<(&NodePath, Found)> =
                children.iter().map(|c| (c, Found::Nothing)).collect();
            crate::fetch::run_fetched(store, &mut slots, &|replay, (child, found)| {
                *found = find_node(replay, child)?;
                Ok(())
            })?;
            slots.into_iter().map(|(_, found)| found).collect()
        } else {
            children
                .iter()
                .map(|child| find_node(store, child))
                .collect::<Result<_>>()?
        };
        let mut out = Vec::new();
        for (child, found) in children.into_iter().zip(found) {
            let doc = match found {
                Found::Nothing => continue,
                // a document that is not JSON becomes a string, which classifies as unreadable
                Found::V3(bytes) => {
                    Child::V3(serde_json::from_slice(&bytes).unwrap_or_else(|_| {
                        Value::String(String::from_utf8_lossy(&bytes).into_owned())
                    }))
                }
                Found::V2Array(bytes) => Child::V2Array(bytes),
                Found::V2Group(bytes) => Child::V2Group(bytes),
            };
            out.push((child, doc));
        }
        Ok(out)
    }

    /// [`classify`](Self::classify) of an entry of the consolidated copy at `rel` (a path
    /// that is not a valid node path is unreadable).
    fn classify_listed(&self, rel: &str, doc: &Value) -> NodeKind {
        match self.descendant(rel) {
            Ok(path) => self.classify(&path, doc),
            Err(e) => NodeKind::Unreadable {
                reason: Arc::new(e),
            },
        }
    }

    /// [`classify`](Self::classify) of a child found in the store, v3 or v2: a v2 array is
    /// readable when its `.zarray` parses and maps to v3 metadata this build resolves (its
    /// `.zattrs` is not read), a v2 group when its `.zgroup` parses.
    fn classify_child(&self, path: &NodePath, child: &Child) -> NodeKind {
        let metadata = |key: &str, source| NodeKind::Unreadable {
            reason: Arc::new(ArrayError::Metadata {
                path: path.key(key),
                source,
            }),
        };
        match child {
            Child::V3(doc) => self.classify(path, doc),
            Child::V2Group(bytes) => match GroupMetadataV2::from_slice(bytes) {
                Ok(_) => NodeKind::Group,
                Err(source) => metadata(ZGROUP, source),
            },
            Child::V2Array(bytes) => match ArrayMetadataV2::from_slice(bytes) {
                Ok(doc) => match Array::from_v2_document(
                    self.store.clone(),
                    path.clone(),
                    doc,
                    Map::new(),
                    self.extensions.clone(),
                ) {
                    Ok(_) => NodeKind::Array,
                    Err(e) => NodeKind::Unreadable {
                        reason: Arc::new(e),
                    },
                },
                Err(source) => metadata(zarr_meta::v2::ZARRAY, source),
            },
        }
    }

    /// What kind of node the document `doc` of `path` (in a consolidated copy) describes,
    /// and whether this build can open it (an array's data type, grid, key encoding, codecs
    /// and storage transformers are resolved, without a request).
    fn classify(&self, path: &NodePath, doc: &Value) -> NodeKind {
        let opened = if consolidated::is_group(doc) {
            self.group_from_doc(path, doc).map(|_| NodeKind::Group)
        } else {
            self.array_from_doc(path, doc).map(|_| NodeKind::Array)
        };
        opened.unwrap_or_else(|e| NodeKind::Unreadable {
            reason: Arc::new(e),
        })
    }

    /// The array at `path` whose document in the consolidated copy is `doc` (a `zarr.json`,
    /// or a v2 `.zarray` with its attributes).
    fn array_from_doc(&self, path: &NodePath, doc: &Value) -> Result<Array> {
        if consolidated::is_group(doc) {
            return Err(ArrayError::WrongNodeType {
                path: path.to_string(),
                expected: "array",
                found: "group",
            });
        }
        let bad = |source| ArrayError::Metadata {
            path: path.to_string(),
            source,
        };
        if let Some((zarray, attributes)) = consolidated::v2_parts(doc) {
            let zarray = ArrayMetadataV2::from_value(&zarray).map_err(bad)?;
            let attributes = Attributes::from_value(&attributes).map_err(bad)?;
            return Array::from_v2_document(
                self.store.clone(),
                path.clone(),
                zarray,
                attributes.0,
                self.extensions.clone(),
            );
        }
        let meta = ArrayMetadata::from_value_with(doc, &self.extensions.data_types).map_err(bad)?;
        Array::from_metadata(
            self.store.clone(),
            path.clone(),
            meta,
            self.extensions.clone(),
        )
    }

    /// The group at `path` whose document in the consolidated copy is `doc` (a `zarr.json`,
    /// or a v2 `.zgroup` with its attributes), sharing this group's copy.
    fn group_from_doc(&self, path: &NodePath, doc: &Value) -> Result<Group> {
        if !consolidated::is_group(doc) {
            return Err(ArrayError::WrongNodeType {
                path: path.to_string(),
                expected: "group",
                found: "array",
            });
        }
        let bad = |source| ArrayError::Metadata {
            path: path.to_string(),
            source,
        };
        let (meta, v2) = match consolidated::v2_parts(doc) {
            Some((zgroup, attributes)) => {
                GroupMetadataV2::from_value(&zgroup).map_err(bad)?;
                let attributes = Attributes::from_value(&attributes).map_err(bad)?;
                let meta = GroupMetadata {
                    attributes: attributes.0,
                    extra_fields: Map::new(),
                };
                (meta, true)
            }
            None => {
                let mut meta = GroupMetadata::from_value(doc).map_err(bad)?;
                // a member's entry carries an empty copy of its own: not the member's
                meta.set_consolidated_metadata(None);
                (meta, false)
            }
        };
        Ok(Group {
            store: self.store.clone(),
            path: path.clone(),
            meta,
            extensions: self.extensions.clone(),
            v2,
            consolidated: self.consolidated.clone(),
        })
    }
}

/// A child node's metadata as found in the store.
enum Child {
    /// Its `zarr.json` as JSON.
    V3(Value),
    /// Its `.zarray`.
    V2Array(Vec<u8>),
    /// Its `.zgroup`.
    V2Group(Vec<u8>),
}
