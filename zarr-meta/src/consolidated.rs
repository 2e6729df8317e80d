//! Consolidated metadata of a Zarr v3 hierarchy: the `consolidated_metadata` field that
//! zarr-python 3 writes into a group's `zarr.json`.

use serde_json::{Map, Value};

use crate::array::{ArrayMetadata, GroupMetadata, NodeMetadata};
use crate::data_type::DataTypeFactory;
use crate::error::{MetaError, Result};
use crate::ext::Registry;

/// The `consolidated_metadata` of a v3 group, as zarr-python 3.1.6 writes it:
/// `{"kind": "inline", "must_understand": false, "metadata": {PATH: zarr.json, ...}}`, one
/// entry per node below the group (paths relative to it, `"a"`, `"a/b"`), each the node's
/// whole `zarr.json` document (attributes included; a member group's own
/// `consolidated_metadata` has empty `metadata`).
///
/// Parsing checks the envelope and that every entry is a JSON object; the entries are parsed
/// when asked for ([`node`](Self::node)), so that one member this build cannot read does not
/// hide the others.
///
/// ```
/// use zarr_meta::{ConsolidatedMetadata, GroupMetadata, NodeMetadata};
///
/// let doc = br#"{"attributes": {}, "zarr_format": 3, "consolidated_metadata": {
///   "kind": "inline", "must_understand": false, "metadata": {
///     "g": {"attributes": {"x": 1}, "zarr_format": 3, "node_type": "group"}}},
///   "node_type": "group"}"#;
/// let group = GroupMetadata::from_slice(doc)?;
/// let c: ConsolidatedMetadata = group.consolidated_metadata()?.unwrap();
/// let registry = zarr_meta::data_type::default_registry();
/// let Some(Ok(NodeMetadata::Group(g))) = c.node("g", &registry) else { panic!() };
/// assert_eq!(g.attributes["x"], 1);
/// // written back byte for byte in zarr-python's key order
/// let again = GroupMetadata::from_slice(&group.to_vec_pretty())?;
/// assert_eq!(again, group);
/// # Ok::<(), zarr_meta::MetaError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ConsolidatedMetadata {
    /// Every node below the group: its path relative to the group -> its `zarr.json`.
    pub metadata: Map<String, Value>,
}

impl ConsolidatedMetadata {
    /// Parses the `consolidated_metadata` object of a group.
    ///
    /// # Errors
    /// Not an object, a `kind` other than `"inline"`, `must_understand` other than `false`,
    /// a missing or non-object `metadata`, an entry that is not an object, or another key.
    pub fn from_value(value: &Value) -> Result<Self> {
        let field = |reason: String| MetaError::invalid("consolidated_metadata", reason);
        let obj = value
            .as_object()
            .ok_or_else(|| field(format!("expected an object, got {value}")))?;
        match obj.get("kind") {
            Some(Value::String(k)) if k == "inline" => {}
            Some(other) => {
                return Err(MetaError::UnsupportedConsolidatedKind {
                    kind: other.to_string(),
                })
            }
            None => return Err(field("\"kind\" is missing (expected \"inline\")".into())),
        }
        match obj.get("must_understand") {
            None | Some(Value::Bool(false)) => {}
            Some(other) => {
                return Err(field(format!(
                    "\"must_understand\" is {other} (readers may ignore consolidated metadata, \
                     so it must be false)"
                )))
            }
        }
        if let Some(k) = obj
            .keys()
            .find(|k| !matches!(k.as_str(), "kind" | "must_understand" | "metadata"))
        {
            return Err(field(format!(
                "unknown key {k:?} (expected kind, must_understand, metadata)"
            )));
        }
        let metadata = match obj.get("metadata") {
            Some(Value::Object(m)) => m,
            Some(other) => {
                return Err(field(format!(
                    "\"metadata\" must be an object of zarr.json documents by path, got {other}"
                )))
            }
            None => return Err(field("\"metadata\" is missing".into())),
        };
        for (path, doc) in metadata {
            if !doc.is_object() {
                return Err(MetaError::ConsolidatedEntry {
                    key: path.clone(),
                    source: Box::new(MetaError::NotAnObject),
                });
            }
        }
        Ok(ConsolidatedMetadata {
            metadata: metadata.clone(),
        })
    }

    /// The object as zarr-python writes it (`kind`, `must_understand`, `metadata`).
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("kind".into(), Value::String("inline".into()));
        m.insert("must_understand".into(), Value::Bool(false));
        m.insert("metadata".into(), Value::Object(self.metadata.clone()));
        Value::Object(m)
    }

    /// The `zarr.json` of the node at `path` (relative to the group), if listed.
    ///
    /// # Errors
    /// The inner `Result`: [`MetaError::ConsolidatedEntry`] if the document does not parse.
    pub fn node(
        &self,
        path: &str,
        data_types: &Registry<DataTypeFactory>,
    ) -> Option<Result<NodeMetadata>> {
        let doc = self.metadata.get(path)?;
        let parsed = match doc.get("node_type").and_then(Value::as_str) {
            Some("group") => GroupMetadata::from_value(doc).map(NodeMetadata::Group),
            _ => ArrayMetadata::from_value_with(doc, data_types)
                .map(|m| NodeMetadata::Array(Box::new(m))),
        };
        Some(parsed.map_err(|e| MetaError::ConsolidatedEntry {
            key: path.to_string(),
            source: Box::new(e),
        }))
    }

    /// Sets (or replaces) the entry of the array at `path`.
    pub fn set_array(&mut self, path: &str, meta: &ArrayMetadata) {
        self.insert(path, meta.to_value());
    }

    /// Sets (or replaces) the entry of the group at `path`. As zarr-python does, a member
    /// group's entry carries an empty `consolidated_metadata` of its own.
    pub fn set_group(&mut self, path: &str, meta: &GroupMetadata) {
        let mut meta = meta.clone();
        meta.set_consolidated_metadata(Some(ConsolidatedMetadata::default()));
        self.insert(path, meta.to_value());
    }

    /// Sets (or replaces) the entry at `path` with a node document as it is (for a node
    /// this build cannot parse, kept so that readers that can still find it).
    pub fn set_document(&mut self, path: &str, doc: Value) {
        self.insert(path, doc);
    }

    /// Removes the node at `path` and every node below it; returns how many entries went.
    pub fn remove_node(&mut self, path: &str) -> usize {
        let before = self.metadata.len();
        self.metadata.retain(|p, _| {
            !(p == path
                || p.strip_prefix(path)
                    .is_some_and(|rest| rest.starts_with('/')))
        });
        before - self.metadata.len()
    }

    /// Inserts keeping zarr-python's order: by depth, then by name without regard to case
    /// (zarr-python also applies Unicode NFKC normalisation before comparing, which this
    /// order leaves out).
    fn insert(&mut self, path: &str, doc: Value) {
        if let Some(v) = self.metadata.get_mut(path) {
            *v = doc;
            return;
        }
        self.metadata.insert(path.to_string(), doc);
        let mut entries: Vec<(String, Value)> =
            std::mem::take(&mut self.metadata).into_iter().collect();
        entries.sort_by_cached_key(|(p, _)| (p.matches('/').count(), p.to_lowercase()));
        self.metadata = entries.into_iter().collect();
    }
}
