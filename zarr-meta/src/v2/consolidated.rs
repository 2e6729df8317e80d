//! `.zmetadata`: the metadata documents of a whole v2 hierarchy in one object.

use serde_json::{Map, Value};

use super::{ArrayMetadataV2, Attributes, GroupMetadataV2, ZARRAY, ZATTRS, ZGROUP};
use crate::consolidated::ConsolidatedMetadata;
use crate::error::{MetaError, Result};
use crate::pyjson::{self, Layout};

/// Consolidated v2 metadata: the `.zmetadata` document,
/// `{"metadata": {KEY: DOCUMENT, ...}, "zarr_consolidated_format": 1}`, where each KEY is the
/// store key of a `.zarray`, `.zgroup` or `.zattrs` below the group that holds it (`".zgroup"`,
/// `"temperature/.zarray"`, `"a/b/.zattrs"`).
///
/// Parsing checks the envelope and that every document is a JSON object; the documents are
/// parsed when asked for ([`array`](Self::array), [`group`](Self::group),
/// [`attributes`](Self::attributes)), so that one member this build cannot read (a string
/// dtype, say) does not hide the others.
///
/// ```
/// use zarr_meta::v2::ConsolidatedMetadataV2;
///
/// let doc = br#"{"metadata": {".zattrs": {}, ".zgroup": {"zarr_format": 2},
///   "t/.zarray": {"chunks": [4], "compressor": null, "dtype": "<i8", "fill_value": 0,
///                 "filters": null, "order": "C", "shape": [10], "zarr_format": 2},
///   "t/.zattrs": {"units": "days since 2000-01-01"}}, "zarr_consolidated_format": 1}"#;
/// let c = ConsolidatedMetadataV2::from_slice(doc)?;
/// assert_eq!(c.array("t").unwrap()?.shape, vec![10]);
/// assert_eq!(c.attributes("t").unwrap()?.0["units"], "days since 2000-01-01");
/// assert!(c.group("").is_some());
/// assert_eq!(c.node_paths().collect::<Vec<_>>(), ["", "t"]);
/// # Ok::<(), zarr_meta::MetaError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ConsolidatedMetadataV2 {
    /// The documents by store key, in the document's order.
    pub metadata: Map<String, Value>,
}

const DOCUMENT_NAMES: [&str; 3] = [ZARRAY, ZGROUP, ZATTRS];

impl ConsolidatedMetadataV2 {
    /// Parses `.zmetadata` bytes.
    ///
    /// # Errors
    /// Invalid JSON, a `zarr_consolidated_format` other than 1, a missing or non-object
    /// `metadata`, a key that names no metadata document or a document that is not an
    /// object, or an unknown top-level key.
    pub fn from_slice(bytes: &[u8]) -> Result<Self> {
        let value: Value =
            serde_json::from_slice(bytes).map_err(|source| MetaError::Json { source })?;
        Self::from_value(&value)
    }

    /// Parses a `.zmetadata` document.
    ///
    /// # Errors
    /// As [`from_slice`](Self::from_slice).
    pub fn from_value(value: &Value) -> Result<Self> {
        let obj = value.as_object().ok_or(MetaError::NotAnObject)?;
        match obj.get("zarr_consolidated_format") {
            Some(Value::Number(n)) if n.as_u64() == Some(1) => {}
            Some(other) => {
                return Err(MetaError::UnsupportedConsolidatedFormat {
                    found: other.to_string(),
                })
            }
            None => {
                return Err(MetaError::MissingField {
                    field: "zarr_consolidated_format",
                })
            }
        }
        for k in obj.keys() {
            if k != "zarr_consolidated_format" && k != "metadata" {
                return Err(MetaError::UnknownKeyV2 {
                    document: super::ZMETADATA,
                    key: k.clone(),
                });
            }
        }
        let metadata = match obj.get("metadata") {
            Some(Value::Object(m)) => m,
            Some(other) => {
                return Err(MetaError::invalid(
                    "metadata",
                    format!("expected an object of metadata documents by key, got {other}"),
                ))
            }
            None => return Err(MetaError::MissingField { field: "metadata" }),
        };
        for (key, doc) in metadata {
            if split_key(key).is_none() {
                return Err(MetaError::invalid(
                    "metadata",
                    format!(
                        "key {key:?} names no metadata document (expected PATH/.zarray, \
                         PATH/.zgroup or PATH/.zattrs)"
                    ),
                ));
            }
            if !doc.is_object() {
                return Err(MetaError::ConsolidatedEntry {
                    key: key.clone(),
                    source: Box::new(MetaError::NotAnObject),
                });
            }
        }
        Ok(ConsolidatedMetadataV2 {
            metadata: metadata.clone(),
        })
    }

    /// The document as JSON, keys in zarr-python's order.
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("metadata".into(), Value::Object(self.metadata.clone()));
        m.insert("zarr_consolidated_format".into(), Value::from(1));
        Value::Object(m)
    }

    /// The `.zmetadata` bytes as zarr-python writes them (one line).
    pub fn to_vec(&self) -> Vec<u8> {
        pyjson::to_vec(&self.to_value(), Layout::OneLine)
    }

    /// The `.zarray` of the node at `path` (`""` is the group holding the consolidated
    /// metadata), if there is one.
    ///
    /// # Errors
    /// The inner `Result`: [`MetaError::ConsolidatedEntry`] if the document does not parse.
    pub fn array(&self, path: &str) -> Option<Result<ArrayMetadataV2>> {
        self.document(path, ZARRAY, ArrayMetadataV2::from_value)
    }

    /// The `.zgroup` of the node at `path`, if there is one.
    ///
    /// # Errors
    /// The inner `Result`: [`MetaError::ConsolidatedEntry`] if the document does not parse.
    pub fn group(&self, path: &str) -> Option<Result<GroupMetadataV2>> {
        self.document(path, ZGROUP, GroupMetadataV2::from_value)
    }

    /// The `.zattrs` of the node at `path`, if there is one.
    ///
    /// # Errors
    /// The inner `Result`: [`MetaError::ConsolidatedEntry`] if the document does not parse.
    pub fn attributes(&self, path: &str) -> Option<Result<Attributes>> {
        self.document(path, ZATTRS, Attributes::from_value)
    }

    fn document<T>(
        &self,
        path: &str,
        name: &str,
        parse: impl Fn(&Value) -> Result<T>,
    ) -> Option<Result<T>> {
        let key = key(path, name);
        let doc = self.metadata.get(&key)?;
        Some(parse(doc).map_err(|e| MetaError::ConsolidatedEntry {
            key,
            source: Box::new(e),
        }))
    }

    /// The paths of the nodes with a `.zarray` or `.zgroup`, in the document's order.
    pub fn node_paths(&self) -> impl Iterator<Item = &str> {
        self.metadata.keys().filter_map(|k| match split_key(k) {
            Some((path, ZARRAY | ZGROUP)) => Some(path),
            _ => None,
        })
    }

    /// Sets (or replaces) the `.zarray` of the node at `path`.
    pub fn set_array(&mut self, path: &str, meta: &ArrayMetadataV2) {
        self.metadata.insert(key(path, ZARRAY), meta.to_value());
    }

    /// Sets (or replaces) the `.zgroup` of the node at `path`.
    pub fn set_group(&mut self, path: &str, meta: &GroupMetadataV2) {
        self.metadata.insert(key(path, ZGROUP), meta.to_value());
    }

    /// Sets (or replaces) the `.zattrs` of the node at `path`.
    pub fn set_attributes(&mut self, path: &str, attributes: &Attributes) {
        self.metadata
            .insert(key(path, ZATTRS), attributes.to_value());
    }

    /// The copy as zarr-python 3 holds it (and as a v3 copy is shaped): one document per
    /// node below the group, by path relative to it, each the node's `.zarray` (or
    /// `.zgroup`) with its `.zattrs` as `"attributes"` (`{}` when the copy has none), in the
    /// document's order; and the group's own attributes (its `.zattrs` entry), if listed.
    /// A `.zattrs` of a path with neither `.zarray` nor `.zgroup` names no node and is left
    /// out.
    ///
    /// ```
    /// use serde_json::json;
    /// use zarr_meta::v2::ConsolidatedMetadataV2;
    ///
    /// let doc = br#"{"metadata": {".zgroup": {"zarr_format": 2}, ".zattrs": {"t": 1},
    ///   "x/.zattrs": {"u": "m"}, "x/.zarray": {"shape": [2], "chunks": [2], "dtype": "|u1",
    ///   "fill_value": 0, "order": "C", "filters": null, "dimension_separator": ".",
    ///   "compressor": null, "zarr_format": 2}}, "zarr_consolidated_format": 1}"#;
    /// let c = ConsolidatedMetadataV2::from_slice(doc)?;
    /// let (nodes, own) = c.to_nodes();
    /// assert_eq!(nodes.metadata["x"]["attributes"], json!({"u": "m"}));
    /// assert_eq!(nodes.metadata["x"]["shape"], json!([2]));
    /// assert_eq!(own.unwrap()["t"], 1);
    /// // and back, byte for byte
    /// let again = ConsolidatedMetadataV2::from_nodes(&c.attributes("").unwrap()?.0, &nodes);
    /// assert_eq!(again.to_vec(), c.to_vec());
    /// # Ok::<(), zarr_meta::MetaError>(())
    /// ```
    pub fn to_nodes(&self) -> (ConsolidatedMetadata, Option<Map<String, Value>>) {
        let mut nodes: Map<String, Value> = Map::new();
        let mut own = None;
        let mut with_attributes: Vec<(&str, &Value)> = Vec::new();
        for (key, doc) in &self.metadata {
            match split_key(key) {
                Some(("", ZATTRS)) => own = doc.as_object().cloned(),
                Some(("", _)) | None => {}
                Some((path, ZATTRS)) => with_attributes.push((path, doc)),
                Some((path, _)) => {
                    let entry = nodes
                        .entry(path.to_string())
                        .or_insert_with(|| Value::Object(Map::new()));
                    if let (Value::Object(entry), Value::Object(doc)) = (entry, doc) {
                        for (k, v) in doc {
                            entry.insert(k.clone(), v.clone());
                        }
                    }
                }
            }
        }
        for (path, attributes) in with_attributes {
            if let Some(Value::Object(entry)) = nodes.get_mut(path) {
                entry.insert("attributes".into(), attributes.clone());
            }
        }
        for entry in nodes.values_mut() {
            if let Value::Object(entry) = entry {
                entry
                    .entry("attributes")
                    .or_insert_with(|| Value::Object(Map::new()));
            }
        }
        (ConsolidatedMetadata { metadata: nodes }, own)
    }

    /// `.zmetadata` as zarr-python 3.1.6 writes it for a v2 group whose attributes are
    /// `attributes` and whose copy holds `nodes` (documents as [`to_nodes`](Self::to_nodes)
    /// gives them): the group's `.zgroup` and `.zattrs`, then for each node, by depth and
    /// then by name without regard to case, its `.zattrs` (its `"attributes"`) and its
    /// `.zarray` (the document without `"attributes"`, for a document with a `"shape"`) or
    /// its `.zgroup` (`{"zarr_format": 2, "consolidated_metadata": {"metadata": {},
    /// "must_understand": false, "kind": "inline"}}`, as zarr-python writes member groups).
    pub fn from_nodes(attributes: &Map<String, Value>, nodes: &ConsolidatedMetadata) -> Self {
        let mut metadata = Map::new();
        metadata.insert(ZGROUP.into(), GroupMetadataV2::default().to_value());
        metadata.insert(ZATTRS.into(), Value::Object(attributes.clone()));
        let mut entries: Vec<(&String, &Value)> = nodes.metadata.iter().collect();
        entries.sort_by_cached_key(|(p, _)| (p.matches('/').count(), p.to_lowercase()));
        for (path, doc) in entries {
            let mut doc = doc.as_object().cloned().unwrap_or_default();
            let attributes = doc
                .shift_remove("attributes")
                .unwrap_or_else(|| Value::Object(Map::new()));
            metadata.insert(key(path, ZATTRS), attributes);
            if doc.contains_key("shape") {
                metadata.insert(key(path, ZARRAY), Value::Object(doc));
            } else {
                let mut member = Map::new();
                member.insert("metadata".into(), Value::Object(Map::new()));
                member.insert("must_understand".into(), Value::Bool(false));
                member.insert("kind".into(), Value::String("inline".into()));
                let group = GroupMetadataV2 {
                    consolidated_metadata: Some(Value::Object(member)),
                };
                metadata.insert(key(path, ZGROUP), group.to_value());
            }
        }
        ConsolidatedMetadataV2 { metadata }
    }

    /// Removes the node at `path` and every node below it; returns how many documents went.
    pub fn remove_node(&mut self, path: &str) -> usize {
        let before = self.metadata.len();
        self.metadata.retain(|k, _| match split_key(k) {
            Some((p, _)) => !(p == path || path.is_empty() || is_below(p, path)),
            None => true,
        });
        before - self.metadata.len()
    }
}

fn is_below(p: &str, ancestor: &str) -> bool {
    p.strip_prefix(ancestor)
        .is_some_and(|rest| rest.starts_with('/'))
}

/// The store key of document `name` of the node at `path`.
fn key(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}/{name}")
    }
}

/// A key's node path and document name (`"a/b/.zarray"` -> `("a/b", ".zarray")`).
fn split_key(key: &str) -> Option<(&str, &'static str)> {
    DOCUMENT_NAMES.iter().find_map(|name| {
        if key == *name {
            return Some(("", *name));
        }
        let path = key.strip_suffix(name)?.strip_suffix('/')?;
        (!path.is_empty()).then_some((path, *name))
    })
}
