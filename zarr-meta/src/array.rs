//! Array and group metadata documents (`zarr.json`).

use serde_json::{Map, Value};

use crate::consolidated::ConsolidatedMetadata;
use crate::data_type::{default_registry, DataType, DataTypeFactory};
use crate::error::{MetaError, Result};
use crate::ext::{ExtensionDef, Registry};
use crate::fill_value::FillValue;

/// The metadata of a Zarr v3 array: the whole `zarr.json` document.
///
/// Chunk grids, chunk key encodings, codecs and storage transformers are kept as
/// [`ExtensionDef`]s: the crates that implement them resolve them through their registries.
/// The data type and fill value are parsed here.
///
/// ```
/// use zarr_meta::ArrayMetadata;
///
/// let doc = br#"{"zarr_format": 3, "node_type": "array", "shape": [6, 4],
///   "data_type": "int32",
///   "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 4]}},
///   "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
///   "fill_value": 0, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}"#;
/// let meta = ArrayMetadata::from_slice(doc).unwrap();
/// assert_eq!(meta.shape, vec![6, 4]);
/// assert_eq!(meta.chunk_grid.name, "regular");
/// let again = ArrayMetadata::from_slice(&meta.to_vec_pretty()).unwrap();
/// assert_eq!(meta, again);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ArrayMetadata {
    /// The array's shape (positions are `0..shape[d]`).
    pub shape: Vec<u64>,
    /// The data type.
    pub data_type: DataType,
    /// The chunk grid definition.
    pub chunk_grid: ExtensionDef,
    /// The chunk key encoding definition.
    pub chunk_key_encoding: ExtensionDef,
    /// The fill value.
    pub fill_value: FillValue,
    /// The codec chain.
    pub codecs: Vec<ExtensionDef>,
    /// User attributes.
    pub attributes: Map<String, Value>,
    /// Optional names of the dimensions.
    pub dimension_names: Option<Vec<Option<String>>>,
    /// Storage transformers.
    pub storage_transformers: Vec<ExtensionDef>,
    /// Unknown top-level fields marked `"must_understand": false`, kept so they are written back.
    pub extra_fields: Map<String, Value>,
}

const ARRAY_FIELDS: [&str; 11] = [
    "zarr_format",
    "node_type",
    "shape",
    "data_type",
    "chunk_grid",
    "chunk_key_encoding",
    "fill_value",
    "codecs",
    "attributes",
    "dimension_names",
    "storage_transformers",
];

impl ArrayMetadata {
    /// A new array document with default key encoding (`default`, `/`), no attributes, no
    /// dimension names and no storage transformers.
    pub fn new(
        shape: Vec<u64>,
        data_type: DataType,
        chunk_grid: ExtensionDef,
        fill_value: FillValue,
        codecs: Vec<ExtensionDef>,
    ) -> Self {
        let mut sep = Map::new();
        sep.insert("separator".into(), Value::String("/".into()));
        ArrayMetadata {
            shape,
            data_type,
            chunk_grid,
            chunk_key_encoding: ExtensionDef::with_configuration("default", sep),
            fill_value,
            codecs,
            attributes: Map::new(),
            dimension_names: None,
            storage_transformers: Vec::new(),
            extra_fields: Map::new(),
        }
    }

    /// Parses `zarr.json` bytes with the core data types.
    ///
    /// # Errors
    /// Any structural fault of the document (see [`MetaError`]).
    pub fn from_slice(bytes: &[u8]) -> Result<Self> {
        Self::from_slice_with(bytes, &default_registry())
    }

    /// Parses `zarr.json` bytes, resolving the data type through `data_types`.
    ///
    /// # Errors
    /// Any structural fault of the document (see [`MetaError`]).
    pub fn from_slice_with(bytes: &[u8], data_types: &Registry<DataTypeFactory>) -> Result<Self> {
        let value: Value =
            serde_json::from_slice(bytes).map_err(|source| MetaError::Json { source })?;
        Self::from_value_with(&value, data_types)
    }

    /// Parses a JSON value, resolving the data type through `data_types`.
    ///
    /// # Errors
    /// Any structural fault of the document (see [`MetaError`]).
    pub fn from_value_with(value: &Value, data_types: &Registry<DataTypeFactory>) -> Result<Self> {
        let obj = value.as_object().ok_or(MetaError::NotAnObject)?;
        check_format_and_node(obj, "array")?;
        let extra_fields = optional_unknown_fields(obj, &ARRAY_FIELDS)?;

        let shape = parse_shape(required(obj, "shape")?)?;
        let data_type_def = ExtensionDef::from_value(required(obj, "data_type")?, "data_type")?;
        let data_type = DataType::from_def(&data_type_def, data_types)?;
        let chunk_grid = ExtensionDef::from_value(required(obj, "chunk_grid")?, "chunk_grid")?;
        let chunk_key_encoding =
            ExtensionDef::from_value(required(obj, "chunk_key_encoding")?, "chunk_key_encoding")?;
        let fill_value = FillValue::from_json(required(obj, "fill_value")?, data_type)?;
        let codecs = parse_def_list(required(obj, "codecs")?, "codecs")?;
        if codecs.is_empty() {
            return Err(MetaError::invalid("codecs", "the codec chain is empty"));
        }
        let attributes = parse_attributes(obj)?;
        let dimension_names = match obj.get("dimension_names") {
            None | Some(Value::Null) => None,
            Some(Value::Array(items)) => {
                if items.len() != shape.len() {
                    return Err(MetaError::DimensionMismatch {
                        field: "dimension_names",
                        expected: shape.len(),
                        got: items.len(),
                    });
                }
                Some(
                    items
                        .iter()
                        .map(|i| match i {
                            Value::Null => Ok(None),
                            Value::String(s) => Ok(Some(s.clone())),
                            other => Err(MetaError::invalid(
                                "dimension_names",
                                format!("expected a string or null, got {other}"),
                            )),
                        })
                        .collect::<Result<Vec<_>>>()?,
                )
            }
            Some(other) => {
                return Err(MetaError::invalid(
                    "dimension_names",
                    format!("expected a list, got {other}"),
                ))
            }
        };
        let storage_transformers = match obj.get("storage_transformers") {
            None => Vec::new(),
            Some(v) => parse_def_list(v, "storage_transformers")?,
        };
        Ok(ArrayMetadata {
            shape,
            data_type,
            chunk_grid,
            chunk_key_encoding,
            fill_value,
            codecs,
            attributes,
            dimension_names,
            storage_transformers,
            extra_fields,
        })
    }

    /// The array's rank.
    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// The document as JSON, with fields in the order zarr-python writes them.
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("shape".into(), Value::from(self.shape.clone()));
        m.insert("data_type".into(), self.data_type.to_def().to_value());
        m.insert("chunk_grid".into(), self.chunk_grid.to_value());
        m.insert(
            "chunk_key_encoding".into(),
            self.chunk_key_encoding.to_value(),
        );
        m.insert("fill_value".into(), self.fill_value.to_json(self.data_type));
        m.insert(
            "codecs".into(),
            Value::Array(self.codecs.iter().map(ExtensionDef::to_value).collect()),
        );
        m.insert("attributes".into(), Value::Object(self.attributes.clone()));
        if let Some(names) = &self.dimension_names {
            m.insert(
                "dimension_names".into(),
                Value::Array(
                    names
                        .iter()
                        .map(|n| n.clone().map_or(Value::Null, Value::String))
                        .collect(),
                ),
            );
        }
        m.insert("zarr_format".into(), Value::from(3));
        m.insert("node_type".into(), Value::String("array".into()));
        m.insert(
            "storage_transformers".into(),
            Value::Array(
                self.storage_transformers
                    .iter()
                    .map(ExtensionDef::to_value)
                    .collect(),
            ),
        );
        for (k, v) in &self.extra_fields {
            m.insert(k.clone(), v.clone());
        }
        Value::Object(m)
    }

    /// The document as pretty-printed JSON bytes (two-space indent, as zarr-python writes).
    pub fn to_vec_pretty(&self) -> Vec<u8> {
        to_pretty(&self.to_value())
    }
}

/// The metadata of a Zarr v3 group.
///
/// ```
/// use zarr_meta::GroupMetadata;
/// let g = GroupMetadata::from_slice(br#"{"zarr_format": 3, "node_type": "group",
///     "attributes": {"title": "root"}}"#).unwrap();
/// assert_eq!(g.attributes["title"], "root");
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GroupMetadata {
    /// User attributes.
    pub attributes: Map<String, Value>,
    /// Unknown top-level fields marked `"must_understand": false`, and zarr-python's
    /// `consolidated_metadata` (checked when parsed; read and set it through
    /// [`consolidated_metadata`](Self::consolidated_metadata) and
    /// [`set_consolidated_metadata`](Self::set_consolidated_metadata)), kept so they are
    /// written back.
    pub extra_fields: Map<String, Value>,
}

const CONSOLIDATED: &str = "consolidated_metadata";

const GROUP_FIELDS: [&str; 4] = [
    "zarr_format",
    "node_type",
    "attributes",
    "consolidated_metadata",
];

impl GroupMetadata {
    /// Parses `zarr.json` bytes of a group.
    ///
    /// # Errors
    /// Any structural fault of the document.
    pub fn from_slice(bytes: &[u8]) -> Result<Self> {
        let value: Value =
            serde_json::from_slice(bytes).map_err(|source| MetaError::Json { source })?;
        Self::from_value(&value)
    }

    /// Parses a group document from a JSON value.
    ///
    /// # Errors
    /// Any structural fault of the document.
    pub fn from_value(value: &Value) -> Result<Self> {
        let obj = value.as_object().ok_or(MetaError::NotAnObject)?;
        check_format_and_node(obj, "group")?;
        let mut extra_fields = optional_unknown_fields(obj, &GROUP_FIELDS)?;
        if let Some(c) = obj.get("consolidated_metadata") {
            if !c.is_null() {
                ConsolidatedMetadata::from_value(c)?;
            }
            extra_fields.insert(CONSOLIDATED.into(), c.clone());
        }
        Ok(GroupMetadata {
            attributes: parse_attributes(obj)?,
            extra_fields,
        })
    }

    /// The consolidated metadata of the hierarchy below this group, if the document has
    /// some (`null` counts as none).
    ///
    /// # Errors
    /// If the `consolidated_metadata` kept in `extra_fields` is invalid (it was checked when
    /// parsed, so only after an edit of `extra_fields`).
    pub fn consolidated_metadata(&self) -> Result<Option<ConsolidatedMetadata>> {
        match self.extra_fields.get(CONSOLIDATED) {
            None | Some(Value::Null) => Ok(None),
            Some(c) => ConsolidatedMetadata::from_value(c).map(Some),
        }
    }

    /// Sets or (with `None`) removes the consolidated metadata.
    pub fn set_consolidated_metadata(&mut self, consolidated: Option<ConsolidatedMetadata>) {
        match consolidated {
            Some(c) => {
                self.extra_fields.insert(CONSOLIDATED.into(), c.to_value());
            }
            None => {
                self.extra_fields.shift_remove(CONSOLIDATED);
            }
        }
    }

    /// The document as JSON, in zarr-python's key order (`attributes`, `zarr_format`,
    /// `consolidated_metadata`, `node_type`; then the optional unknown fields).
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("attributes".into(), Value::Object(self.attributes.clone()));
        m.insert("zarr_format".into(), Value::from(3));
        if let Some(c) = self.extra_fields.get(CONSOLIDATED) {
            m.insert(CONSOLIDATED.into(), c.clone());
        }
        m.insert("node_type".into(), Value::String("group".into()));
        for (k, v) in &self.extra_fields {
            if k != CONSOLIDATED {
                m.insert(k.clone(), v.clone());
            }
        }
        Value::Object(m)
    }

    /// The document as pretty-printed JSON bytes.
    pub fn to_vec_pretty(&self) -> Vec<u8> {
        to_pretty(&self.to_value())
    }
}

/// Either kind of node.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeMetadata {
    /// An array.
    Array(Box<ArrayMetadata>),
    /// A group.
    Group(GroupMetadata),
}

impl NodeMetadata {
    /// Parses a `zarr.json` of either kind, by its `node_type`.
    ///
    /// # Errors
    /// Any structural fault of the document.
    pub fn from_slice_with(bytes: &[u8], data_types: &Registry<DataTypeFactory>) -> Result<Self> {
        let value: Value =
            serde_json::from_slice(bytes).map_err(|source| MetaError::Json { source })?;
        let obj = value.as_object().ok_or(MetaError::NotAnObject)?;
        match obj.get("node_type") {
            Some(Value::String(s)) if s == "group" => {
                GroupMetadata::from_value(&value).map(NodeMetadata::Group)
            }
            _ => ArrayMetadata::from_value_with(&value, data_types)
                .map(|m| NodeMetadata::Array(Box::new(m))),
        }
    }
}

fn to_pretty(value: &Value) -> Vec<u8> {
    // serializing a Value to memory cannot fail
    serde_json::to_vec_pretty(value).unwrap_or_default()
}

fn required<'a>(obj: &'a Map<String, Value>, field: &'static str) -> Result<&'a Value> {
    obj.get(field).ok_or(MetaError::MissingField { field })
}

fn check_format_and_node(obj: &Map<String, Value>, expected: &'static str) -> Result<()> {
    match required(obj, "zarr_format")? {
        Value::Number(n) if n.as_u64() == Some(3) => {}
        other => {
            return Err(MetaError::UnsupportedZarrFormat {
                document: "zarr.json",
                expected: 3,
                found: other.to_string(),
            })
        }
    }
    match required(obj, "node_type")? {
        Value::String(s) if s == expected => Ok(()),
        other => Err(MetaError::WrongNodeType {
            expected,
            found: other
                .as_str()
                .map_or_else(|| other.to_string(), str::to_string),
        }),
    }
}

/// Unknown top-level fields: each must be an object with `"must_understand": false`.
fn optional_unknown_fields(obj: &Map<String, Value>, known: &[&str]) -> Result<Map<String, Value>> {
    let mut extra = Map::new();
    for (k, v) in obj {
        if known.contains(&k.as_str()) {
            continue;
        }
        let optional = v
            .as_object()
            .and_then(|o| o.get("must_understand"))
            .is_some_and(|m| m == &Value::Bool(false));
        if !optional {
            return Err(MetaError::UnknownField { field: k.clone() });
        }
        extra.insert(k.clone(), v.clone());
    }
    Ok(extra)
}

pub(crate) fn parse_shape(v: &Value) -> Result<Vec<u64>> {
    let items = v
        .as_array()
        .ok_or_else(|| MetaError::invalid("shape", format!("expected a list, got {v}")))?;
    items
        .iter()
        .map(|i| {
            i.as_u64().ok_or_else(|| {
                MetaError::invalid("shape", format!("{i} is not a non-negative integer"))
            })
        })
        .collect()
}

fn parse_def_list(v: &Value, field: &str) -> Result<Vec<ExtensionDef>> {
    v.as_array()
        .ok_or_else(|| MetaError::invalid(field, format!("expected a list, got {v}")))?
        .iter()
        .map(|d| ExtensionDef::from_value(d, field))
        .collect()
}

fn parse_attributes(obj: &Map<String, Value>) -> Result<Map<String, Value>> {
    match obj.get("attributes") {
        None => Ok(Map::new()),
        Some(Value::Object(m)) => Ok(m.clone()),
        Some(other) => Err(MetaError::invalid(
            "attributes",
            format!("expected an object, got {other}"),
        )),
    }
}
