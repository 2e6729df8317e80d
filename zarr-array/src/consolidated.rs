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
//! The copy has one form today, v3's `consolidated_metadata` inside the group's `zarr.json`
//! ([`Form::Inline`]). Zarr v2's `.zmetadata` is the same thing in a second form: a `Form`
//! variant whose [`Form::read`] turns `.zmetadata` into the same path -> node document map
//! ([`ConsolidatedMetadata`], paths relative to the group) and whose [`Form::write`] writes
//! that map back as `.zmetadata`; everything above `Form` (opening, members, the walk, the
//! sync after writes) is shared.

use std::sync::{Arc, PoisonError, RwLock};

use serde_json::Value;
use zarr_meta::data_type::DataTypeFactory;
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
}

impl Form {
    /// The copy held by the group at `group`, whose `zarr.json` is `meta`.
    pub(crate) fn read(
        self,
        group: &NodePath,
        meta: &GroupMetadata,
    ) -> Result<Option<ConsolidatedMetadata>> {
        match self {
            Form::Inline => meta
                .consolidated_metadata()
                .map_err(|source| ArrayError::Metadata {
                    path: group.to_string(),
                    source,
                }),
        }
    }

    /// Writes `copy` as the copy of the group at `group` whose own document is `meta`.
    fn write(
        self,
        store: &dyn Store,
        group: &NodePath,
        meta: &mut GroupMetadata,
        copy: ConsolidatedMetadata,
    ) -> Result<()> {
        match self {
            Form::Inline => {
                store.set(&group.key("zarr.json"), &self.encode(meta, copy))?;
            }
        }
        Ok(())
    }

    /// The group document `meta` holding `copy`, as [`Form::write`] writes it (for
    /// [`Form::Inline`], the bytes of `zarr.json`).
    fn encode(self, meta: &mut GroupMetadata, copy: ConsolidatedMetadata) -> Vec<u8> {
        match self {
            Form::Inline => {
                meta.set_consolidated_metadata(Some(copy));
                meta.to_vec_pretty()
            }
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
    /// The node and everything below it are gone.
    Removed,
}

/// Carries `change` of the node at `node` (whose own metadata is already written) into the
/// consolidated copy of every ancestor group that holds one, nearest first: each ancestor's
/// `zarr.json` is read, its copy updated and written back, by compare-and-swap (re-read and
/// re-applied when another writer changed it meanwhile: concurrent changes of members all
/// land in the copy). `hierarchy`, the copy the node was opened through, is refreshed with
/// what was written for its root.
///
/// The node's entry is its metadata as the store has it when the copy is read (not `change`'s
/// when another writer changed the node since), so that the copy ends with the node's last
/// metadata whichever writer's sync comes last.
///
/// Costs one GET per ancestor, and one GET of the node and one PUT per ancestor that holds a
/// copy; nothing for the root node.
pub(crate) fn sync(
    store: &dyn Store,
    node: &NodePath,
    change: Change<'_>,
    hierarchy: Option<&Hierarchy>,
) -> Result<()> {
    let mut ancestor = node.parent();
    while let Some(group) = ancestor {
        let form = Form::Inline;
        let written = crate::cas::update(store, &group.key("zarr.json"), |current| {
            let Some(mut meta) = current.and_then(|bytes| GroupMetadata::from_slice(bytes).ok())
            else {
                return Ok(Apply::Keep(None));
            };
            let Some(mut copy) = form.read(&group, &meta)? else {
                return Ok(Apply::Keep(None));
            };
            if let Some(rel) = relative(&group, node) {
                carry_current(store, node, &mut copy, rel, change)?;
            }
            let bytes = form.encode(&mut meta, copy.clone());
            Ok(Apply::Write(bytes, Some(copy)))
        })?;
        if let Some(copy) = written {
            if let Some(h) = hierarchy.filter(|h| h.root == group && h.form == form) {
                h.replace(copy);
            }
        }
        ancestor = group.parent();
    }
    Ok(())
}

/// Carries `change` of `node` into `copy` (at `rel`), with the node's metadata as the store
/// has it now: another writer may have changed it after `change` was written, and its own
/// sync may already be in the copy.
fn carry_current(
    store: &dyn Store,
    node: &NodePath,
    copy: &mut ConsolidatedMetadata,
    rel: &str,
    change: Change<'_>,
) -> Result<()> {
    if matches!(change, Change::Removed) {
        apply(copy, rel, change);
        return Ok(());
    }
    let Some(bytes) = store.get(&node.key("zarr.json"))? else {
        // deleted meanwhile
        apply(copy, rel, Change::Removed);
        return Ok(());
    };
    match change {
        Change::Array(meta) if bytes != meta.to_vec_pretty() => {
            match serde_json::from_slice::<Value>(&bytes) {
                Ok(doc) if doc.is_object() => copy.set_document(rel, doc),
                _ => apply(copy, rel, change),
            }
        }
        Change::Group(_) => match GroupMetadata::from_slice(&bytes) {
            Ok(now) => apply(copy, rel, Change::Group(&now)),
            Err(_) => apply(copy, rel, change),
        },
        _ => apply(copy, rel, change),
    }
    Ok(())
}

fn apply(copy: &mut ConsolidatedMetadata, rel: &str, change: Change<'_>) {
    match change {
        Change::Array(meta) => copy.set_array(rel, meta),
        Change::Group(meta) => {
            let mut meta = meta.clone();
            meta.set_consolidated_metadata(None);
            copy.set_group(rel, &meta);
        }
        Change::Removed => {
            copy.remove_node(rel);
        }
    }
}

/// The copy of the hierarchy below `group` as zarr-python's `consolidate_metadata` writes it,
/// from every node's own `zarr.json` (a walk of the store). A node this build parses is
/// written in the canonical form (zarr-python's key order), so that the copy reads as
/// zarr-python's would; an array this build cannot parse (an unknown data type) is kept as
/// its document is, and a document that is not a JSON object is left out.
pub(crate) fn collect(
    store: &dyn Store,
    group: &NodePath,
    data_types: &Registry<DataTypeFactory>,
) -> Result<ConsolidatedMetadata> {
    let mut copy = ConsolidatedMetadata::default();
    for (rel, doc) in collect_raw(store, group)? {
        if doc.get("node_type").and_then(Value::as_str) == Some("group") {
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

/// Writes `copy` as the consolidated copy of the group at `group` (its `zarr.json` re-read,
/// its attributes kept).
pub(crate) fn write_copy(
    store: &dyn Store,
    group: &NodePath,
    copy: ConsolidatedMetadata,
) -> Result<GroupMetadata> {
    let bytes = store
        .get(&group.key("zarr.json"))?
        .ok_or_else(|| ArrayError::NotFound {
            path: group.to_string(),
        })?;
    let mut meta = group_metadata(group, &bytes)?;
    Form::Inline.write(store, group, &mut meta, copy)?;
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
    /// The copy lists a node that has no `zarr.json` of its own.
    Missing {
        /// The node's path relative to the group.
        path: String,
    },
    /// A node with its own `zarr.json` that the copy does not list.
    Unlisted {
        /// The node's path relative to the group.
        path: String,
    },
    /// The copy's document of the node differs from the node's own.
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
                "the consolidated metadata lists {path:?}, which has no zarr.json"
            ),
            Disagreement::Unlisted { path } => write!(
                f,
                "{path:?} has a zarr.json but the consolidated metadata does not list it"
            ),
            Disagreement::Differs { path, fields } => write!(
                f,
                "the consolidated metadata of {path:?} differs from its zarr.json in {}",
                fields.join(", ")
            ),
        }
    }
}

/// Compares the copy held by the group at `group` with every node's own `zarr.json`.
pub(crate) fn check(
    store: &dyn Store,
    group: &NodePath,
    copy: &ConsolidatedMetadata,
) -> Result<Vec<Disagreement>> {
    let actual = collect_raw(store, group)?;
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

/// Every node below `group` with its own document as JSON (`consolidated_metadata` left out).
fn collect_raw(store: &dyn Store, group: &NodePath) -> Result<Vec<(String, Value)>> {
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
            let Some(bytes) = store.get(&child.key("zarr.json"))? else {
                continue;
            };
            let Ok(Value::Object(doc)) = serde_json::from_slice::<Value>(&bytes) else {
                continue;
            };
            if doc.get("node_type").and_then(Value::as_str) == Some("group") {
                pending.push(child.clone());
            }
            if let Some(rel) = relative(group, &child) {
                out.push((rel.to_string(), Value::Object(doc)));
            }
        }
    }
    Ok(out)
}

/// The top-level fields in which two node documents differ; `consolidated_metadata` and
/// fields both documents leave at their default (`storage_transformers: []`) are not
/// differences.
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
            let is_default = |v: Option<&Value>| match v {
                None => true,
                Some(Value::Array(items)) => {
                    items.is_empty() && k.as_str() == "storage_transformers"
                }
                Some(_) => false,
            };
            x != y && !(is_default(x) && is_default(y))
        })
        .cloned()
        .collect()
}
