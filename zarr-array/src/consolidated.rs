//! Consolidated metadata: the copy of a hierarchy's metadata that a group holds, used to open
//! the hierarchy in one request and kept true by every metadata change made through this crate.
//!
//! A group opened with a copy ([`UseConsolidated`]) shares one [`Hierarchy`] with the groups and
//! arrays opened through it: members, member groups and member arrays come from the copy, with
//! no request. Every metadata write of a node (array or group, created, changed or deleted)
//! writes the node's own `zarr.json` first and then [`sync`]s the copy of every ancestor group
//! that holds one, re-read from the store just before (so that changes made through other
//! handles are kept), nearest ancestor first.
//!
//! The copy has two forms ([`Form`]): v3's `consolidated_metadata` inside the group's
//! `zarr.json` ([`Form::Inline`]) and Zarr v2's `.zmetadata` beside the group's `.zgroup`
//! ([`Form::ZMetadata`]). Both read into the same path -> node document map
//! ([`ConsolidatedMetadata`], paths relative to the group; a v2 node's document is its
//! `.zarray` or `.zgroup` with its `.zattrs` as `"attributes"`, as zarr-python holds it) and
//! are written back from it; everything above `Form` (opening, members, the walk, the sync
//! after writes) is shared. As in zarr-python, a copy lists the nodes of its own format only:
//! a v3 copy its v3 nodes, a v2 copy its v2 nodes (a walk does not go through a node of the
//! other format), so a change is carried into a copy of its own format, and only for a node
//! whose parent the copy lists (or the group itself).

use std::sync::{Arc, PoisonError, RwLock};

use serde_json::{Map, Value};
use zarr_meta::data_type::DataTypeFactory;
use zarr_meta::v2::{
    ArrayMetadataV2, ConsolidatedMetadataV2, GroupMetadataV2, ZARRAY, ZATTRS, ZGROUP, ZMETADATA,
};
use zarr_meta::{ArrayMetadata, ConsolidatedMetadata, GroupMetadata, Registry};
use zarr_store::Store;

use crate::cas::Apply;
use crate::error::{ArrayError, Result};
use crate::path::NodePath;

/// Whether opening a group uses the consolidated copy of the hierarchy below it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UseConsolidated {
    /// Use it when the group holds one (zarr-python's `use_consolidated=None`).
    #[default]
    IfPresent,
    /// Use it, and refuse a group that holds none ([`ArrayError::NoConsolidatedMetadata`];
    /// zarr-python's `use_consolidated=True`).
    Require,
    /// Read every member's own metadata (zarr-python's `use_consolidated=False`).
    Ignore,
}

/// Where a group keeps its consolidated copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// v3: `consolidated_metadata` inside the group's `zarr.json`.
    Inline,
    /// v2: `.zmetadata` beside the group's `.zgroup` (holding the group's own `.zgroup` and
    /// `.zattrs` too).
    ZMetadata,
}

impl Form {
    /// The key of the document that holds the copy of the group at `group`.
    pub(crate) fn key(self, group: &NodePath) -> String {
        match self {
            Form::Inline => group.key("zarr.json"),
            Form::ZMetadata => group.key(ZMETADATA),
        }
    }

    /// The Zarr format of the nodes a copy of this form lists.
    fn zarr_format(self) -> u8 {
        match self {
            Form::Inline => 3,
            Form::ZMetadata => 2,
        }
    }

    /// Parses `bytes`, the document at [`key`](Self::key) of the group at `group`: `None`
    /// when it holds no copy (a v3 group without `consolidated_metadata`).
    ///
    /// # Errors
    /// A `zarr.json` that is not a group's ([`ArrayError::WrongNodeType`]), a malformed
    /// document or copy ([`ArrayError::Metadata`]).
    pub(crate) fn read(self, group: &NodePath, bytes: &[u8]) -> Result<Option<Held>> {
        match self {
            Form::Inline => {
                let meta = group_metadata(group, bytes)?;
                Ok(inline_copy(group, &meta)?.map(|copy| Held::Inline { meta, copy }))
            }
            Form::ZMetadata => {
                let bad = |source| ArrayError::Metadata {
                    path: group.key(ZMETADATA),
                    source,
                };
                let doc = ConsolidatedMetadataV2::from_slice(bytes).map_err(bad)?;
                let lists_group = match doc.group("") {
                    Some(parsed) => parsed.map(|_| true).map_err(bad)?,
                    None => false,
                };
                if let Some(parsed) = doc.attributes("") {
                    parsed.map_err(bad)?;
                }
                let (copy, attributes) = doc.to_nodes();
                Ok(Some(Held::ZMetadata {
                    attributes,
                    lists_group,
                    copy,
                }))
            }
        }
    }
}

/// The copy inside the v3 group metadata `meta` of the group at `group`, if any.
pub(crate) fn inline_copy(
    group: &NodePath,
    meta: &GroupMetadata,
) -> Result<Option<ConsolidatedMetadata>> {
    meta.consolidated_metadata()
        .map_err(|source| ArrayError::Metadata {
            path: group.to_string(),
            source,
        })
}

/// A group's document that holds its consolidated copy, as read from the store.
#[derive(Debug, Clone)]
pub(crate) enum Held {
    /// The group's `zarr.json`, and the copy inside it.
    Inline {
        /// The group's metadata (its copy is `copy`).
        meta: GroupMetadata,
        /// The copy.
        copy: ConsolidatedMetadata,
    },
    /// `.zmetadata`: the copy, and the group's own entries in it.
    ZMetadata {
        /// The group's attributes (its `.zattrs` entry), if listed.
        attributes: Option<Map<String, Value>>,
        /// Whether the group's own `.zgroup` is listed.
        lists_group: bool,
        /// The copy (the nodes below the group).
        copy: ConsolidatedMetadata,
    },
}

impl Held {
    /// The form.
    pub(crate) fn form(&self) -> Form {
        match self {
            Held::Inline { .. } => Form::Inline,
            Held::ZMetadata { .. } => Form::ZMetadata,
        }
    }

    /// The copy.
    pub(crate) fn copy(&self) -> &ConsolidatedMetadata {
        match self {
            Held::Inline { copy, .. } | Held::ZMetadata { copy, .. } => copy,
        }
    }

    fn copy_mut(&mut self) -> &mut ConsolidatedMetadata {
        match self {
            Held::Inline { copy, .. } | Held::ZMetadata { copy, .. } => copy,
        }
    }

    /// The document's bytes, as zarr-python writes it.
    fn to_vec(&self) -> Vec<u8> {
        match self {
            Held::Inline { meta, copy } => {
                let mut meta = meta.clone();
                meta.set_consolidated_metadata(Some(copy.clone()));
                meta.to_vec_pretty()
            }
            Held::ZMetadata {
                attributes, copy, ..
            } => ConsolidatedMetadataV2::from_nodes(&attributes.clone().unwrap_or_default(), copy)
                .to_vec(),
        }
    }
}

/// The consolidated copy a group was opened with, shared by every node opened through it.
#[derive(Debug)]
pub(crate) struct Hierarchy {
    /// The group that holds the copy.
    pub(crate) root: NodePath,
    form: Form,
    copy: RwLock<ConsolidatedMetadata>,
}

impl Hierarchy {
    pub(crate) fn new(root: NodePath, form: Form, copy: ConsolidatedMetadata) -> Arc<Self> {
        Arc::new(Hierarchy {
            root,
            form,
            copy: RwLock::new(copy),
        })
    }

    /// The path of `node` relative to the root (`None` if it is not below it or is the root).
    pub(crate) fn relative<'a>(&self, node: &'a NodePath) -> Option<&'a str> {
        relative(&self.root, node)
    }

    /// The document of `node` in the copy, if listed.
    pub(crate) fn get(&self, node: &NodePath) -> Option<Value> {
        let rel = self.relative(node)?;
        self.read().metadata.get(rel).cloned()
    }

    /// Every entry strictly below `node` (`rel` paths relative to `node`), in the copy's order.
    pub(crate) fn below(&self, node: &NodePath) -> Vec<(String, Value)> {
        let prefix = if node == &self.root {
            String::new()
        } else {
            match self.relative(node) {
                Some(rel) => format!("{rel}/"),
                None => return Vec::new(),
            }
        };
        self.read()
            .metadata
            .iter()
            .filter_map(|(p, doc)| {
                let rest = p.strip_prefix(&prefix)?;
                (!rest.is_empty()).then(|| (rest.to_string(), doc.clone()))
            })
            .collect()
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, ConsolidatedMetadata> {
        self.copy.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn replace(&self, copy: ConsolidatedMetadata) {
        *self.copy.write().unwrap_or_else(PoisonError::into_inner) = copy;
    }
}

/// `node` relative to `root` (`None` if it is `root` or not below it).
fn relative<'a>(root: &NodePath, node: &'a NodePath) -> Option<&'a str> {
    if root.as_str().is_empty() {
        return (!node.as_str().is_empty()).then_some(node.as_str());
    }
    node.as_str()
        .strip_prefix(root.as_str())?
        .strip_prefix('/')
        .filter(|rest| !rest.is_empty())
}

/// A metadata change of one node, to carry into the consolidated copies above it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Change<'a> {
    /// The array's `zarr.json` is now this (created, resized, attributes changed).
    Array(&'a ArrayMetadata),
    /// The group's `zarr.json` is now this.
    Group(&'a GroupMetadata),
    /// The v2 array's `.zarray` and `.zattrs` are now these.
    ArrayV2(&'a ArrayMetadataV2, &'a Map<String, Value>),
    /// The v2 group's `.zattrs` is now this (its `.zgroup` is always the same).
    GroupV2(&'a Map<String, Value>),
    /// The node and everything below it are gone (`Some(format)`: only its metadata of that
    /// Zarr format, after a conversion).
    Removed(Option<u8>),
}

impl Change<'_> {
    /// The node's Zarr format and its document as a copy lists it (`None` for a removal).
    fn document(self) -> Option<(u8, Value)> {
        match self {
            Change::Array(meta) => Some((3, meta.to_value())),
            Change::Group(meta) => {
                let mut meta = meta.clone();
                meta.set_consolidated_metadata(Some(ConsolidatedMetadata::default()));
                Some((3, meta.to_value()))
            }
            Change::ArrayV2(meta, attributes) => {
                Some((2, v2_document(meta.to_value(), attributes)))
            }
            Change::GroupV2(attributes) => Some((
                2,
                v2_document(GroupMetadataV2::default().to_value(), attributes),
            )),
            Change::Removed(_) => None,
        }
    }
}

/// A v2 node's document as a copy lists it: `doc` (its `.zarray` or `.zgroup`) with
/// `attributes` (its `.zattrs`) as `"attributes"`.
fn v2_document(doc: Value, attributes: &Map<String, Value>) -> Value {
    let mut doc = match doc {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    doc.insert("attributes".into(), Value::Object(attributes.clone()));
    Value::Object(doc)
}

/// Whether a copy's document describes a group (v3: `node_type`; v2: no `shape`, as
/// zarr-python tells them apart).
pub(crate) fn is_group(doc: &Value) -> bool {
    match doc.get("zarr_format").and_then(Value::as_u64) {
        Some(2) => doc.get("shape").is_none(),
        _ => doc.get("node_type").and_then(Value::as_str) == Some("group"),
    }
}

/// A v2 node's document in a copy, split into its `.zarray` / `.zgroup` and its attributes;
/// `None` for a v3 document.
pub(crate) fn v2_parts(doc: &Value) -> Option<(Value, Value)> {
    if doc.get("zarr_format").and_then(Value::as_u64) != Some(2) {
        return None;
    }
    let mut own = doc.as_object().cloned().unwrap_or_default();
    let attributes = own
        .shift_remove("attributes")
        .unwrap_or_else(|| Value::Object(Map::new()));
    // zarr-python writes an empty copy into member groups' `.zgroup` entries: not the group's
    own.shift_remove("consolidated_metadata");
    Some((Value::Object(own), attributes))
}

/// Carries `change` of the node at `node` (whose own metadata is already written) into the
/// consolidated copy of every ancestor group that holds one, nearest first (and, for a v2
/// group's attributes, into the group's own `.zmetadata`, which lists them): each
/// ancestor's document is read ([`Form::key`]: its `zarr.json`, or for a v2 group its
/// `.zmetadata`), its copy updated and written back when that changed it, by
/// compare-and-swap (re-read and re-applied when another writer changed it meanwhile:
/// concurrent changes of members all land in the copy). `hierarchy`, the copy the node was
/// opened through, is refreshed with what was written for its root.
///
/// A v3 node's entry is its metadata as the store has it when the copy is read (not
/// `change`'s when another writer changed the node since), so that the copy ends with the
/// node's last metadata whichever writer's sync comes last. A document that does not parse
/// holds no copy to keep (`zarr validate` reports it).
///
/// Costs one GET per ancestor (two for a v2 one: its `zarr.json` is looked for first), and,
/// per copy changed, one GET of a v3 node's own metadata and one PUT; nothing for the root
/// node.
pub(crate) fn sync(
    store: &dyn Store,
    node: &NodePath,
    change: Change<'_>,
    hierarchy: Option<&Hierarchy>,
) -> Result<()> {
    let mut group = match change {
        Change::GroupV2(_) => Some(node.clone()),
        _ => node.parent(),
    };
    while let Some(at) = group {
        for form in [Form::Inline, Form::ZMetadata] {
            let key = form.key(&at);
            let mut present = false;
            let written = crate::cas::update(store, &key, |current| {
                present = current.is_some();
                // a document that is not a group's, or does not parse, holds no copy to keep
                let Some(mut held) = current.and_then(|b| form.read(&at, b).ok().flatten()) else {
                    return Ok(Apply::Keep(None));
                };
                let rel = relative(&at, node);
                let now = match rel {
                    Some(_) => current_document(store, node, change)?,
                    None => Current::AsChanged,
                };
                let changed = apply(&mut held, rel, change, now);
                let copy = held.copy().clone();
                Ok(if changed {
                    Apply::Write(held.to_vec(), Some(copy))
                } else {
                    Apply::Keep(Some(copy))
                })
            })?;
            if let Some(copy) = written {
                if let Some(h) = hierarchy.filter(|h| h.root == at && h.form == form) {
                    h.replace(copy);
                }
            }
            if present {
                // the node's format is v3 when it has a zarr.json: no .zmetadata is looked for
                break;
            }
        }
        group = at.parent();
    }
    Ok(())
}

/// What a v3 node's metadata is in the store when a copy above it is updated.
enum Current {
    /// As `change` has it (or `change` is not of a v3 node, whose writers keep no order).
    AsChanged,
    /// Deleted since.
    Gone,
    /// This document, written by another writer since.
    Doc(Value),
}

/// The metadata of `node` as the store has it now, for `change` of a v3 node: another writer
/// may have changed it after `change` was written, and its own sync may already be in the
/// copy.
fn current_document(store: &dyn Store, node: &NodePath, change: Change<'_>) -> Result<Current> {
    if !matches!(change, Change::Array(_) | Change::Group(_)) {
        return Ok(Current::AsChanged);
    }
    let Some(bytes) = store.get(&node.key("zarr.json"))? else {
        return Ok(Current::Gone);
    };
    Ok(match change {
        Change::Array(meta) if bytes != meta.to_vec_pretty() => {
            match serde_json::from_slice::<Value>(&bytes) {
                Ok(doc) if doc.is_object() => Current::Doc(doc),
                _ => Current::AsChanged,
            }
        }
        Change::Group(_) => match GroupMetadata::from_slice(&bytes) {
            Ok(now) => match Change::Group(&now).document() {
                Some((_, doc)) => Current::Doc(doc),
                None => Current::AsChanged,
            },
            Err(_) => Current::AsChanged,
        },
        _ => Current::AsChanged,
    })
}

/// Applies `change` of the node at `rel` (relative to the group holding `held`; `None`: the
/// group itself), whose metadata is `now` in the store, to `held`; whether that changed it.
fn apply(held: &mut Held, rel: Option<&str>, change: Change<'_>, now: Current) -> bool {
    let format = held.form().zarr_format();
    let Some(rel) = rel else {
        // the group itself: a v2 group's attributes are in its .zmetadata
        return match (held, change) {
            (Held::ZMetadata { attributes, .. }, Change::GroupV2(new)) => {
                let before = attributes.replace(new.clone());
                before.as_ref() != Some(new)
            }
            _ => false,
        };
    };
    let copy = held.copy_mut();
    let document = match now {
        Current::AsChanged => change.document(),
        Current::Gone => None,
        Current::Doc(doc) => Some((3, doc)),
    };
    match document {
        None => match change {
            Change::Removed(Some(only)) if only != format => false,
            _ => copy.remove_node(rel) > 0,
        },
        Some((of, _)) if of != format => false,
        Some((_, doc)) => {
            let parent_listed = match rel.rsplit_once('/') {
                None => true,
                Some((parent, _)) => copy.metadata.get(parent).is_some_and(is_group),
            };
            if !(parent_listed || copy.metadata.contains_key(rel)) {
                // below a node this copy does not list (one of the other format): not listed
                return false;
            }
            if copy.metadata.get(rel) == Some(&doc) {
                return false;
            }
            copy.set_document(rel, doc);
            true
        }
    }
}

/// The copy of the hierarchy below `group` in `form` as zarr-python's
/// `consolidate_metadata` writes it, from every node's own metadata (a walk of the store
/// through the nodes of the form's Zarr format). A node this build parses is written in the
/// canonical form (zarr-python's key order), so that the copy reads as zarr-python's would; a
/// node this build cannot parse (an unknown data type) is kept as its document is, and a
/// document that is not a JSON object is left out.
pub(crate) fn collect(
    store: &dyn Store,
    group: &NodePath,
    form: Form,
    data_types: &Registry<DataTypeFactory>,
) -> Result<ConsolidatedMetadata> {
    let mut copy = ConsolidatedMetadata::default();
    for (rel, doc) in collect_raw(store, group, form)? {
        if let Some((own, attributes)) = v2_parts(&doc) {
            let attributes = attributes.as_object().cloned().unwrap_or_default();
            let canonical = if is_group(&doc) {
                GroupMetadataV2::from_value(&own).map(|g| g.to_value())
            } else {
                ArrayMetadataV2::from_value(&own).map(|a| a.to_value())
            };
            copy.set_document(&rel, v2_document(canonical.unwrap_or(own), &attributes));
        } else if is_group(&doc) {
            match GroupMetadata::from_value(&doc) {
                Ok(mut meta) => {
                    meta.set_consolidated_metadata(None);
                    copy.set_group(&rel, &meta);
                }
                Err(_) => copy.set_document(&rel, doc),
            }
        } else {
            match ArrayMetadata::from_value_with(&doc, data_types) {
                Ok(meta) => copy.set_array(&rel, &meta),
                Err(_) => copy.set_document(&rel, doc),
            }
        }
    }
    Ok(copy)
}

/// Writes `copy` as the consolidated copy of the group at `group` in `form`, with the
/// group's own metadata re-read (its attributes kept); the group's metadata.
pub(crate) fn write_copy(
    store: &dyn Store,
    group: &NodePath,
    form: Form,
    copy: ConsolidatedMetadata,
) -> Result<GroupMetadata> {
    let not_found = || ArrayError::NotFound {
        path: group.to_string(),
    };
    let (held, meta) = match form {
        Form::Inline => {
            let bytes = store.get(&group.key("zarr.json"))?.ok_or_else(not_found)?;
            let mut meta = group_metadata(group, &bytes)?;
            meta.set_consolidated_metadata(None);
            (
                Held::Inline {
                    meta: meta.clone(),
                    copy: copy.clone(),
                },
                meta,
            )
        }
        Form::ZMetadata => {
            store.get(&group.key(ZGROUP))?.ok_or_else(not_found)?;
            let attributes = crate::v2::read_attributes(store, group)?;
            (
                Held::ZMetadata {
                    attributes: Some(attributes.clone()),
                    lists_group: true,
                    copy: copy.clone(),
                },
                GroupMetadata {
                    attributes,
                    extra_fields: Map::new(),
                },
            )
        }
    };
    store.set(&form.key(group), &held.to_vec())?;
    let mut meta = meta;
    if form == Form::Inline {
        meta.set_consolidated_metadata(Some(copy));
    }
    Ok(meta)
}

/// Parses the `zarr.json` of the group at `group`: an array there is
/// [`ArrayError::WrongNodeType`].
pub(crate) fn group_metadata(group: &NodePath, bytes: &[u8]) -> Result<GroupMetadata> {
    let is_array = serde_json::from_slice::<Value>(bytes)
        .ok()
        .is_some_and(|v| v.get("node_type").and_then(Value::as_str) == Some("array"));
    if is_array {
        return Err(ArrayError::WrongNodeType {
            path: group.to_string(),
            expected: "group",
            found: "array",
        });
    }
    GroupMetadata::from_slice(bytes).map_err(|source| ArrayError::Metadata {
        path: group.to_string(),
        source,
    })
}

/// A disagreement between a group's consolidated copy and a member's own metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Disagreement {
    /// The copy lists a node that has no metadata of its own (`zarr.json`; for a v2 copy
    /// `.zarray` or `.zgroup`).
    Missing {
        /// The node's path relative to the group.
        path: String,
    },
    /// A node with metadata of its own (of the copy's Zarr format) that the copy does not
    /// list.
    Unlisted {
        /// The node's path relative to the group.
        path: String,
    },
    /// The copy's document of the node differs from the node's own (for a v2 node, its
    /// `.zattrs` is the field `attributes`).
    Differs {
        /// The node's path relative to the group.
        path: String,
        /// The top-level fields whose values differ (`shape`, `attributes`, ...).
        fields: Vec<String>,
    },
}

impl std::fmt::Display for Disagreement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Disagreement::Missing { path } => write!(
                f,
                "the consolidated metadata lists {path:?}, which has no metadata of its own"
            ),
            Disagreement::Unlisted { path } => write!(
                f,
                "{path:?} has metadata of its own but the consolidated metadata does not list it"
            ),
            Disagreement::Differs { path, fields } => write!(
                f,
                "the consolidated metadata of {path:?} differs from its own metadata in {}",
                fields.join(", ")
            ),
        }
    }
}

/// Compares `copy`, held by the group at `group` in `form`, with every node's own metadata.
pub(crate) fn check(
    store: &dyn Store,
    group: &NodePath,
    form: Form,
    copy: &ConsolidatedMetadata,
) -> Result<Vec<Disagreement>> {
    let actual = collect_raw(store, group, form)?;
    let by_path: std::collections::HashMap<&str, &Value> =
        actual.iter().map(|(p, d)| (p.as_str(), d)).collect();
    let mut out = Vec::new();
    for (path, listed) in &copy.metadata {
        let Some(own) = by_path.get(path.as_str()) else {
            out.push(Disagreement::Missing { path: path.clone() });
            continue;
        };
        let fields = differing_fields(listed, own);
        if !fields.is_empty() {
            out.push(Disagreement::Differs {
                path: path.clone(),
                fields,
            });
        }
    }
    for (path, _) in &actual {
        if !copy.metadata.contains_key(path) {
            out.push(Disagreement::Unlisted { path: path.clone() });
        }
    }
    Ok(out)
}

/// Every node below `group` of the form's Zarr format with its own document as JSON, as a
/// copy of that form lists it (v3: its `zarr.json`, `consolidated_metadata` left out; v2:
/// its `.zarray` or `.zgroup` with its `.zattrs` as `"attributes"`). The walk goes through
/// groups of that format only, as zarr-python's does.
fn collect_raw(store: &dyn Store, group: &NodePath, form: Form) -> Result<Vec<(String, Value)>> {
    let mut out = Vec::new();
    let mut pending = vec![group.clone()];
    while let Some(dir) = pending.pop() {
        for prefix in store.list_dir(&dir.prefix())?.prefixes {
            let name = prefix
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .unwrap_or("");
            let Ok(child) = dir.child(name) else { continue };
            let Some(doc) = own_document(store, &child, form)? else {
                continue;
            };
            if is_group(&doc) {
                pending.push(child.clone());
            }
            if let Some(rel) = relative(group, &child) {
                out.push((rel.to_string(), doc));
            }
        }
    }
    Ok(out)
}

/// The document of the node at `path` in the form's Zarr format, if it has one that is a
/// JSON object (and, for v2, no `.zattrs` or one that is).
fn own_document(store: &dyn Store, path: &NodePath, form: Form) -> Result<Option<Value>> {
    let object = |bytes: &[u8]| match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(doc)) => Some(doc),
        _ => None,
    };
    if form == Form::Inline {
        let Some(bytes) = store.get(&path.key("zarr.json"))? else {
            return Ok(None);
        };
        return Ok(object(&bytes).map(Value::Object));
    }
    let doc = match store.get(&path.key(ZARRAY))? {
        Some(bytes) => object(&bytes),
        None => match store.get(&path.key(ZGROUP))? {
            Some(bytes) => object(&bytes),
            None => return Ok(None),
        },
    };
    let Some(doc) = doc else { return Ok(None) };
    // attributes that are not a JSON object (NaN, which JSON cannot hold) leave the node out
    let attributes = match store.get(&path.key(ZATTRS))? {
        Some(bytes) => match object(&bytes) {
            Some(attributes) => attributes,
            None => return Ok(None),
        },
        None => Map::new(),
    };
    Ok(Some(v2_document(Value::Object(doc), &attributes)))
}

/// The top-level fields in which two node documents differ; `consolidated_metadata` and
/// fields both documents leave at their default (`storage_transformers: []`, a v2
/// `dimension_separator` of `"."`) are not differences.
fn differing_fields(listed: &Value, own: &Value) -> Vec<String> {
    let empty = serde_json::Map::new();
    let a = listed.as_object().unwrap_or(&empty);
    let b = own.as_object().unwrap_or(&empty);
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| k.as_str() != "consolidated_metadata")
        .filter(|k| {
            let (x, y) = (a.get(*k), b.get(*k));
            let is_default = |v: Option<&Value>| match (k.as_str(), v) {
                (_, None) => true,
                ("storage_transformers", Some(Value::Array(items))) => items.is_empty(),
                ("dimension_separator", Some(Value::String(s))) => s == ".",
                _ => false,
            };
            x != y && !(is_default(x) && is_default(y))
        })
        .cloned()
        .collect()
}

/// Where a node named by its own location (a directory or url) sits in a hierarchy whose
/// consolidated metadata is kept above it: what [`find_enclosing`] returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Enclosing {
    /// The location of the outermost group above the node that holds a consolidated copy (a
    /// canonical directory path, or a url).
    pub location: String,
    /// The node's path below that group (`"a0"`, `"sub/a0"`).
    pub path: String,
}

impl Enclosing {
    /// The node at `below` (a path below the node, `""` for the node itself) as a path
    /// below [`location`](Self::location).
    pub fn join(&self, below: &str) -> String {
        let below = below.trim_matches('/');
        if below.is_empty() {
            self.path.clone()
        } else {
            format!("{}/{below}", self.path)
        }
    }
}

/// Finds the groups above the node at `location` whose consolidated copies list it, when
/// the node is opened by its own location (`g.zarr/a0`, `s3://bucket/g.zarr/sub`): a store
/// opened there has the node at its root, so the groups above are outside it and a change of
/// the node would leave their copies stale. Walks up the directory (or the url's path) while
/// the parent holds a group document (a group's `zarr.json`, or a v2 `.zgroup`), and returns
/// the outermost of those groups that holds a copy (`consolidated_metadata` in its
/// `zarr.json`, or a `.zmetadata`) with the node's path below it; opening the store there
/// and the node at that path, every change of the node updates every copy above it
/// ([`sync`] walks the store's ancestors). `None` when no group above holds a copy (the
/// location is then opened as it is, and a change costs no request for copies), and for
/// `memory://` and read-only (`http(s)://`) urls, and a url with a query or fragment.
///
/// `location` need not exist (a node about to be created there). A parent that cannot be
/// read (no permission above a prefix, an i/o error) ends the walk, as a parent that is no
/// group does: the hierarchy is what can be read. `open_remote` opens the store of a
/// parent's url (local directories are opened here, never created).
///
/// Costs, per parent looked at, one GET for a v3 group, and for a v2 group or a parent that
/// is not a group two (three for a v2 group: its `.zmetadata`); a local directory the same
/// in file reads.
///
/// ```
/// use zarr_array::{find_enclosing, ArrayBuilder, DataType, Group};
/// use zarr_store::{open_url, FilesystemStore};
/// # let dir = std::env::temp_dir().join(format!("zarr-enclosing-doc-{}", std::process::id()));
/// # let _ = std::fs::remove_dir_all(&dir);
/// let store = std::sync::Arc::new(FilesystemStore::create(dir.join("g.zarr"))?);
/// let mut root = Group::create(store, "", Default::default())?;
/// root.create_array("a0", &ArrayBuilder::new(vec![4], DataType::UInt8))?;
/// root.consolidate()?;
/// let inner = dir.join("g.zarr").join("a0");
/// let found = find_enclosing(inner.to_str().unwrap(), &open_url)?.unwrap();
/// assert!(found.location.ends_with("g.zarr"));
/// assert_eq!((found.path.as_str(), found.join("")), ("a0", "a0".to_string()));
/// assert_eq!(find_enclosing(found.location.as_str(), &open_url)?, None);
/// # std::fs::remove_dir_all(&dir).ok();
/// # Ok::<(), zarr_array::ArrayError>(())
/// ```
///
/// # Errors
/// A location that is not a valid path or url ([`ArrayError::Store`]).
pub fn find_enclosing(
    location: &str,
    open_remote: &dyn Fn(&str) -> zarr_store::Result<std::sync::Arc<dyn Store>>,
) -> Result<Option<Enclosing>> {
    use zarr_store::StoreUrl;
    let url = StoreUrl::parse(location)?;
    let mut names: Vec<String> = Vec::new();
    let mut found = None;
    match url {
        StoreUrl::Path(path) => {
            let Some(mut at) = canonical(&path) else {
                return Ok(None);
            };
            while let Some(parent) = at.parent().map(std::path::Path::to_path_buf) {
                let Some(name) = at.file_name().and_then(|n| n.to_str()) else {
                    break;
                };
                let Ok(store) = zarr_store::FilesystemStore::open(&parent) else {
                    break;
                };
                let Some(step) = step(&store, name, &mut names) else {
                    break;
                };
                let Some(parent_location) = parent.to_str() else {
                    break;
                };
                if step {
                    found = Some((parent_location.to_string(), names.len()));
                }
                at = parent;
            }
        }
        StoreUrl::Remote { .. } if !url.is_read_only() && !location.contains(['?', '#']) => {
            let mut at = location.trim_end_matches('/').to_string();
            while let Some((parent, name)) = parent_url(&at) {
                let Ok(store) = open_remote(&parent) else {
                    break;
                };
                let Some(step) = step(&*store, &name, &mut names) else {
                    break;
                };
                if step {
                    found = Some((parent.clone(), names.len()));
                }
                at = parent;
            }
        }
        _ => {}
    }
    Ok(found.map(|(location, depth)| Enclosing {
        location,
        // `names` runs from the node up; the first `depth` of them lie below the group found
        path: names[..depth]
            .iter()
            .rev()
            .cloned()
            .collect::<Vec<_>>()
            .join("/"),
    }))
}

/// One step of [`find_enclosing`]'s walk to the parent at the root of `store`, from its
/// child `name`: `None` when the parent is no group (or `name` no node name), else whether
/// it holds a copy (`name` is pushed onto `names`).
fn step(store: &dyn Store, name: &str, names: &mut Vec<String>) -> Option<bool> {
    NodePath::root().child(name).ok()?;
    let holds_copy = group_holds_copy(store)?;
    names.push(name.to_string());
    Some(holds_copy)
}

/// Whether the group at the root of `store` holds a consolidated copy; `None` when there is
/// no group there (or it cannot be read).
fn group_holds_copy(store: &dyn Store) -> Option<bool> {
    let root = NodePath::root();
    match store.get("zarr.json").ok()? {
        Some(bytes) => {
            let meta = group_metadata(&root, &bytes).ok()?;
            Some(inline_copy(&root, &meta).ok().flatten().is_some())
        }
        None => {
            store.get(ZGROUP).ok()??;
            Some(store.get(ZMETADATA).ok()?.is_some())
        }
    }
}

/// `path` made absolute with links resolved; for a path that does not exist (yet), its
/// parent's so resolved, joined with its name.
fn canonical(path: &std::path::Path) -> Option<std::path::PathBuf> {
    if let Ok(p) = std::fs::canonicalize(path) {
        return Some(p);
    }
    let name = path.file_name()?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => std::path::Path::new("."),
    };
    Some(std::fs::canonicalize(parent).ok()?.join(name))
}

/// The url of the parent of the node at the object store url `url` (`s3://b/a/z` ->
/// `s3://b/a`, `s3://b/z` -> `s3://b`) and the node's name; `None` for a bucket (container)
/// itself.
fn parent_url(url: &str) -> Option<(String, String)> {
    let (scheme, rest) = url.split_once("://")?;
    let (parent, name) = rest.trim_end_matches('/').rsplit_once('/')?;
    (!parent.is_empty() && !name.is_empty())
        .then(|| (format!("{scheme}://{parent}"), name.to_string()))
}
