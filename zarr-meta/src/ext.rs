//! Extension definitions and the registry that resolves them.
//!
//! Every extension point of Zarr v3 (data types, chunk grids, chunk key encodings, codecs,
//! storage transformers) names its extensions with an [`ExtensionDef`]:
//! `{"name": ..., "configuration": {...}, "must_understand": bool}` or the short string form
//! `"name"`. A [`Registry`] maps names to factories for one extension point; each crate fills
//! one with its `register_defaults`, and [`Registry::resolve`] applies the `must_understand`
//! rules in one place:
//!
//! - data types, chunk grids and chunk key encodings can never be ignored, so a
//!   `must_understand` field on them is itself an error, even when the extension is known;
//! - a known extension is always used (its factory validates the configuration; a bad
//!   configuration is an error, never a reason to skip it);
//! - an unknown codec or storage transformer marked `"must_understand": false` is skipped;
//! - a name compiled out by a cargo feature gives an error that names the feature.
//!
//! ```
//! use zarr_meta::ext::{ExtensionDef, ExtensionPoint, Registry, Resolved};
//!
//! type Factory = fn(&ExtensionDef) -> Result<u32, zarr_meta::MetaError>;
//! let mut codecs: Registry<Factory> = Registry::new(ExtensionPoint::Codec);
//! codecs.register("bytes", |_| Ok(1)).unwrap();
//! codecs.register_compiled_out("zstd", "zstd");
//!
//! let bytes: ExtensionDef = serde_json::from_str(r#"{"name": "bytes"}"#).unwrap();
//! assert!(matches!(codecs.resolve(&bytes).unwrap(), Resolved::Known(_)));
//!
//! let zstd = ExtensionDef::new("zstd");
//! let err = zarr_testkit::report(&codecs.resolve(&zstd).unwrap_err());
//! assert_eq!(err, r#"unsupported codec "zstd" (enable cargo feature "zstd")"#);
//!
//! let optional: ExtensionDef =
//!     serde_json::from_str(r#"{"name": "mystery", "must_understand": false}"#).unwrap();
//! assert!(matches!(codecs.resolve(&optional).unwrap(), Resolved::Skipped));
//! ```

use std::collections::BTreeMap;
use std::fmt;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{MetaError, Result};

/// The extension points of Zarr v3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ExtensionPoint {
    /// `data_type`.
    DataType,
    /// `chunk_grid`.
    ChunkGrid,
    /// `chunk_key_encoding`.
    ChunkKeyEncoding,
    /// An entry of `codecs` (or of a nested chain such as sharding's).
    Codec,
    /// An entry of `storage_transformers`.
    StorageTransformer,
}

impl ExtensionPoint {
    /// Whether an unknown extension at this point may be skipped when it carries
    /// `"must_understand": false`. Data types, chunk grids and chunk key encodings never may.
    pub fn may_be_ignored(self) -> bool {
        matches!(
            self,
            ExtensionPoint::Codec | ExtensionPoint::StorageTransformer
        )
    }

    /// The metadata field this extension point lives in.
    pub fn field(self) -> &'static str {
        match self {
            ExtensionPoint::DataType => "data_type",
            ExtensionPoint::ChunkGrid => "chunk_grid",
            ExtensionPoint::ChunkKeyEncoding => "chunk_key_encoding",
            ExtensionPoint::Codec => "codecs",
            ExtensionPoint::StorageTransformer => "storage_transformers",
        }
    }
}

impl fmt::Display for ExtensionPoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ExtensionPoint::DataType => "data type",
            ExtensionPoint::ChunkGrid => "chunk grid",
            ExtensionPoint::ChunkKeyEncoding => "chunk key encoding",
            ExtensionPoint::Codec => "codec",
            ExtensionPoint::StorageTransformer => "storage transformer",
        })
    }
}

/// One extension as written in metadata: a name, an optional configuration and an optional
/// `must_understand` flag.
///
/// It reads both the object form and the short string form (`"bytes"`), and writes back the
/// form it was read in (a definition with a configuration or a flag is always an object).
#[derive(Debug, Clone, PartialEq)]
pub struct ExtensionDef {
    /// The extension's name.
    pub name: String,
    /// Its configuration object, if any.
    pub configuration: Option<Map<String, Value>>,
    /// The `must_understand` flag, if present.
    pub must_understand: Option<bool>,
    short_form: bool,
}

impl ExtensionDef {
    /// A definition with a name and nothing else, written in object form.
    pub fn new(name: impl Into<String>) -> Self {
        ExtensionDef {
            name: name.into(),
            configuration: None,
            must_understand: None,
            short_form: false,
        }
    }

    /// A definition with a configuration.
    pub fn with_configuration(name: impl Into<String>, configuration: Map<String, Value>) -> Self {
        ExtensionDef {
            configuration: Some(configuration),
            ..ExtensionDef::new(name)
        }
    }

    /// A definition whose configuration is the serialization of `config`.
    ///
    /// # Errors
    /// If `config` does not serialize to a JSON object.
    pub fn from_config<T: Serialize>(name: impl Into<String>, config: &T) -> Result<Self> {
        let name = name.into();
        match serde_json::to_value(config) {
            Ok(Value::Object(map)) => Ok(ExtensionDef::with_configuration(name, map)),
            Ok(other) => Err(MetaError::invalid(
                name,
                format!("configuration must serialize to an object, got {other}"),
            )),
            Err(source) => Err(MetaError::Json { source }),
        }
    }

    /// The short string form `"name"`, used by data types.
    pub fn short(name: impl Into<String>) -> Self {
        ExtensionDef {
            short_form: true,
            ..ExtensionDef::new(name)
        }
    }

    /// Whether this definition is written in the short string form.
    pub fn is_short_form(&self) -> bool {
        self.short_form && self.configuration.is_none() && self.must_understand.is_none()
    }

    /// Deserializes the configuration into a typed configuration struct (use
    /// `#[serde(deny_unknown_fields)]` on it). A missing configuration reads as `{}`.
    ///
    /// # Errors
    /// [`MetaError::ConfigurationShape`] naming the extension, with serde's error (what is
    /// wrong, the field) as its source.
    pub fn parse_configuration<T: DeserializeOwned>(&self, point: ExtensionPoint) -> Result<T> {
        let value = Value::Object(self.configuration.clone().unwrap_or_default());
        serde_json::from_value(value).map_err(|source| MetaError::ConfigurationShape {
            point,
            name: self.name.clone(),
            source,
        })
    }

    /// An [`MetaError::InvalidConfiguration`] for this extension.
    pub fn invalid_configuration(
        &self,
        point: ExtensionPoint,
        reason: impl Into<String>,
    ) -> MetaError {
        MetaError::InvalidConfiguration {
            point,
            name: self.name.clone(),
            reason: reason.into(),
        }
    }

    /// Parses a definition from a JSON value (object or string form).
    ///
    /// # Errors
    /// If the value is neither a string nor an object with a string `name`, or an object with
    /// fields other than `name`, `configuration` and `must_understand`.
    pub fn from_value(value: &Value, field: &str) -> Result<Self> {
        match value {
            Value::String(name) => Ok(ExtensionDef::short(name.clone())),
            Value::Object(map) => {
                let mut def = ExtensionDef::new(String::new());
                let mut have_name = false;
                for (k, v) in map {
                    match (k.as_str(), v) {
                        ("name", Value::String(s)) => {
                            def.name = s.clone();
                            have_name = true;
                        }
                        ("configuration", Value::Object(c)) => def.configuration = Some(c.clone()),
                        ("must_understand", Value::Bool(b)) => def.must_understand = Some(*b),
                        ("name" | "configuration" | "must_understand", other) => {
                            return Err(MetaError::invalid(
                                field,
                                format!("{k:?} has the wrong JSON type: {other}"),
                            ))
                        }
                        _ => {
                            return Err(MetaError::invalid(
                                field,
                                format!("unknown key {k:?} in an extension definition"),
                            ))
                        }
                    }
                }
                if !have_name {
                    return Err(MetaError::invalid(
                        field,
                        "extension definition has no \"name\"",
                    ));
                }
                if def.name.is_empty() {
                    return Err(MetaError::invalid(field, "extension name is empty"));
                }
                Ok(def)
            }
            other => Err(MetaError::invalid(
                field,
                format!("expected a name or an extension object, got {other}"),
            )),
        }
    }

    /// The JSON value this definition writes.
    pub fn to_value(&self) -> Value {
        if self.is_short_form() {
            return Value::String(self.name.clone());
        }
        let mut map = Map::new();
        map.insert("name".into(), Value::String(self.name.clone()));
        if let Some(c) = &self.configuration {
            map.insert("configuration".into(), Value::Object(c.clone()));
        }
        if let Some(m) = self.must_understand {
            map.insert("must_understand".into(), Value::Bool(m));
        }
        Value::Object(map)
    }
}

impl Serialize for ExtensionDef {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        self.to_value().serialize(s)
    }
}

impl<'de> Deserialize<'de> for ExtensionDef {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        ExtensionDef::from_value(&v, "extension").map_err(serde::de::Error::custom)
    }
}

/// The outcome of [`Registry::resolve`].
#[derive(Debug)]
pub enum Resolved<'a, F> {
    /// The extension is known; build it with this factory.
    Known(&'a F),
    /// The extension is unknown, optional and may be ignored.
    Skipped,
}

/// Name -> factory for one extension point. Filled with `&mut`, then shared by reference.
///
/// There is no global state: a reader built without an extension is a registry that never
/// had it registered (or had it removed with [`Registry::remove`]).
#[derive(Clone)]
pub struct Registry<F> {
    point: ExtensionPoint,
    entries: BTreeMap<String, F>,
    compiled_out: BTreeMap<String, &'static str>,
    never_ignored: std::collections::BTreeSet<String>,
}

impl<F> fmt::Debug for Registry<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("point", &self.point)
            .field("names", &self.entries.keys().collect::<Vec<_>>())
            .field("compiled_out", &self.compiled_out)
            .field("never_ignored", &self.never_ignored)
            .finish()
    }
}

impl<F> Registry<F> {
    /// An empty registry for one extension point.
    pub fn new(point: ExtensionPoint) -> Self {
        Registry {
            point,
            entries: BTreeMap::new(),
            compiled_out: BTreeMap::new(),
            never_ignored: std::collections::BTreeSet::new(),
        }
    }

    /// The extension point this registry serves.
    pub fn point(&self) -> ExtensionPoint {
        self.point
    }

    /// Registers a factory under `name`.
    ///
    /// # Errors
    /// [`MetaError::DuplicateExtension`] if the name is already registered.
    pub fn register(&mut self, name: impl Into<String>, factory: F) -> Result<()> {
        let name = name.into();
        if self.entries.contains_key(&name) {
            return Err(MetaError::DuplicateExtension {
                point: self.point,
                name,
            });
        }
        self.compiled_out.remove(&name);
        self.entries.insert(name, factory);
        Ok(())
    }

    /// Records that `name` exists but this build left it out; resolving it names `feature`.
    pub fn register_compiled_out(&mut self, name: impl Into<String>, feature: &'static str) {
        let name = name.into();
        if !self.entries.contains_key(&name) {
            self.compiled_out.insert(name, feature);
        }
    }

    /// Records that `name` may never be marked `"must_understand": false` (its specification
    /// says a reader without it must refuse the array). Kept by [`Registry::remove`], so a
    /// reader built without the extension still refuses such a definition by name.
    pub fn register_never_ignored(&mut self, name: impl Into<String>) {
        self.never_ignored.insert(name.into());
    }

    /// Removes an extension, so that arrays using it are refused. Returns its factory.
    pub fn remove(&mut self, name: &str) -> Option<F> {
        self.entries.remove(name)
    }

    /// The factory registered under `name`.
    pub fn get(&self, name: &str) -> Option<&F> {
        self.entries.get(name)
    }

    /// Whether `name` is registered.
    pub fn contains(&self, name: &str) -> bool {
        self.entries.contains_key(name)
    }

    /// The registered names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }

    /// Applies the `must_understand` rules to `def` and finds its factory.
    ///
    /// # Errors
    /// - [`MetaError::MustUnderstandNotAllowed`] for a `must_understand` field on a data type,
    ///   chunk grid or chunk key encoding (known or not);
    /// - [`MetaError::NeverIgnorable`] for `"must_understand": false` on a name registered
    ///   with [`Registry::register_never_ignored`];
    /// - [`MetaError::CompiledOut`] for a name left out by a cargo feature;
    /// - [`MetaError::UnknownExtension`] for any other unknown name that may not be skipped.
    pub fn resolve(&self, def: &ExtensionDef) -> Result<Resolved<'_, F>> {
        if !self.point.may_be_ignored() && def.must_understand.is_some() {
            return Err(MetaError::MustUnderstandNotAllowed {
                point: self.point,
                name: def.name.clone(),
            });
        }
        if def.must_understand == Some(false) && self.never_ignored.contains(&def.name) {
            return Err(MetaError::NeverIgnorable {
                point: self.point,
                name: def.name.clone(),
            });
        }
        if let Some(f) = self.entries.get(&def.name) {
            return Ok(Resolved::Known(f));
        }
        if let Some(feature) = self.compiled_out.get(&def.name) {
            return Err(MetaError::CompiledOut {
                point: self.point,
                name: def.name.clone(),
                feature,
            });
        }
        if self.point.may_be_ignored() && def.must_understand == Some(false) {
            return Ok(Resolved::Skipped);
        }
        Err(MetaError::UnknownExtension {
            point: self.point,
            name: def.name.clone(),
        })
    }

    /// Like [`Registry::resolve`] for points that can never be skipped: the factory, or an error.
    ///
    /// # Errors
    /// As [`Registry::resolve`]; a skippable unknown extension is reported as unknown.
    pub fn resolve_required(&self, def: &ExtensionDef) -> Result<&F> {
        match self.resolve(def)? {
            Resolved::Known(f) => Ok(f),
            Resolved::Skipped => Err(MetaError::UnknownExtension {
                point: self.point,
                name: def.name.clone(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reg(point: ExtensionPoint) -> Registry<u8> {
        let mut r = Registry::new(point);
        r.register("known", 1).unwrap();
        r
    }

    fn def(json: &str) -> ExtensionDef {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn never_ignored_names_refuse_must_understand_false_even_once_removed() {
        let mut r = reg(ExtensionPoint::Codec);
        r.register_never_ignored("known");
        r.register_never_ignored("absent");
        let off = def(r#"{"name": "known", "must_understand": false}"#);
        let err = r.resolve(&off).map(|_| ()).unwrap_err();
        assert!(matches!(err, MetaError::NeverIgnorable { ref name, .. } if name == "known"));
        assert!(matches!(
            r.resolve(&def(r#"{"name": "known"}"#)),
            Ok(Resolved::Known(_))
        ));
        assert!(r
            .resolve(&def(r#"{"name": "known", "must_understand": true}"#))
            .is_ok());
        r.remove("known");
        let err = r.resolve(&off).map(|_| ()).unwrap_err();
        assert!(matches!(err, MetaError::NeverIgnorable { .. }), "{err}");
        let absent = def(r#"{"name": "absent", "must_understand": false}"#);
        assert!(matches!(
            r.resolve(&absent),
            Err(MetaError::NeverIgnorable { .. })
        ));
        // any other unknown optional codec is still skipped
        let other = def(r#"{"name": "other", "must_understand": false}"#);
        assert!(matches!(r.resolve(&other), Ok(Resolved::Skipped)));
    }

    #[test]
    fn duplicate_names_are_refused() {
        let mut r = reg(ExtensionPoint::Codec);
        let err = r.register("known", 2).unwrap_err();
        assert!(matches!(err, MetaError::DuplicateExtension { .. }));
        assert_eq!(err.to_string(), "codec \"known\" is registered twice");
    }

    #[test]
    fn must_understand_is_an_error_on_grids_keys_and_types() {
        for point in [
            ExtensionPoint::ChunkGrid,
            ExtensionPoint::ChunkKeyEncoding,
            ExtensionPoint::DataType,
        ] {
            let r = reg(point);
            for flag in ["true", "false"] {
                for name in ["known", "unknown"] {
                    let d = def(&format!(
                        r#"{{"name": "{name}", "must_understand": {flag}}}"#
                    ));
                    let err = r.resolve(&d).unwrap_err();
                    assert!(
                        matches!(err, MetaError::MustUnderstandNotAllowed { .. }),
                        "{err}"
                    );
                    assert!(zarr_testkit::report(&err).contains(name));
                }
            }
        }
    }

    #[test]
    fn unknown_optional_codec_is_skipped_and_required_is_refused() {
        let r = reg(ExtensionPoint::Codec);
        assert!(matches!(
            r.resolve(&def(r#"{"name": "x", "must_understand": false}"#))
                .unwrap(),
            Resolved::Skipped
        ));
        let err = r
            .resolve(&def(r#"{"name": "x", "must_understand": true}"#))
            .unwrap_err();
        assert_eq!(err.to_string(), "unknown codec \"x\"");
        let err = r.resolve(&def(r#""x""#)).unwrap_err();
        assert_eq!(err.to_string(), "unknown codec \"x\"");
        // a known codec is used even when it says it may be skipped
        assert!(matches!(
            r.resolve(&def(r#"{"name": "known", "must_understand": false}"#))
                .unwrap(),
            Resolved::Known(1)
        ));
    }

    #[test]
    fn unknown_grid_key_encoding_and_transformer_name_themselves() {
        for (point, text) in [
            (
                ExtensionPoint::ChunkGrid,
                "unknown chunk grid \"hexagonal\"",
            ),
            (
                ExtensionPoint::ChunkKeyEncoding,
                "unknown chunk key encoding \"hexagonal\"",
            ),
            (
                ExtensionPoint::StorageTransformer,
                "unknown storage transformer \"hexagonal\"",
            ),
            (ExtensionPoint::Codec, "unknown codec \"hexagonal\""),
        ] {
            let err = reg(point)
                .resolve(&def(r#"{"name": "hexagonal"}"#))
                .unwrap_err();
            assert_eq!(err.to_string(), text);
        }
    }

    #[test]
    fn compiled_out_names_the_feature() {
        let mut r = reg(ExtensionPoint::ChunkGrid);
        r.register_compiled_out("regular_bounded", "regular-bounded");
        let err = r
            .resolve(&def(r#"{"name": "regular_bounded"}"#))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "unsupported chunk grid \"regular_bounded\" (enable cargo feature \"regular-bounded\")"
        );
    }

    #[test]
    fn removed_extension_is_unknown() {
        let mut r = reg(ExtensionPoint::ChunkGrid);
        assert_eq!(r.remove("known"), Some(1));
        assert!(matches!(
            r.resolve(&def(r#"{"name": "known"}"#)),
            Err(MetaError::UnknownExtension { .. })
        ));
    }

    #[test]
    fn definitions_round_trip_in_their_form() {
        for text in [
            r#""bytes""#,
            r#"{"name":"bytes"}"#,
            r#"{"name":"zstd","configuration":{"level":0,"checksum":false}}"#,
            r#"{"name":"x","must_understand":false}"#,
        ] {
            let d = def(text);
            let back: Value = serde_json::to_value(&d).unwrap();
            let orig: Value = serde_json::from_str(text).unwrap();
            assert_eq!(back, orig);
        }
    }

    #[test]
    fn malformed_definitions_are_refused() {
        for text in [
            r#"{"configuration":{}}"#,
            r#"{"name":""}"#,
            r#"{"name":3}"#,
            r#"{"name":"x","configuration":[]}"#,
            r#"{"name":"x","must_understand":"no"}"#,
            r#"{"name":"x","extra":1}"#,
            "7",
            "null",
        ] {
            assert!(
                serde_json::from_str::<ExtensionDef>(text).is_err(),
                "{text}"
            );
        }
    }
}
