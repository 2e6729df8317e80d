//! The error type of zarr-meta.

use crate::ext::ExtensionPoint;

/// Everything that can be wrong with a Zarr v3 metadata document.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MetaError {
    /// The document is not valid JSON.
    #[error("metadata is not valid JSON")]
    Json {
        /// The parser's error.
        #[source]
        source: serde_json::Error,
    },
    /// The document is JSON but not an object.
    #[error("metadata must be a JSON object")]
    NotAnObject,
    /// `zarr_format` is not 3.
    #[error("unsupported zarr_format {found} (this library reads Zarr v3 only)")]
    UnsupportedZarrFormat {
        /// The value found.
        found: String,
    },
    /// `node_type` is not what the caller asked for.
    #[error("node_type is {found:?}, expected {expected:?}")]
    WrongNodeType {
        /// What was asked for.
        expected: &'static str,
        /// What the document says.
        found: String,
    },
    /// A required field is missing.
    #[error("required field {field:?} is missing")]
    MissingField {
        /// The field name.
        field: &'static str,
    },
    /// A field has the wrong JSON type or an invalid value.
    #[error("field {field:?} is invalid: {reason}")]
    InvalidField {
        /// The field name.
        field: String,
        /// What is wrong with it.
        reason: String,
    },
    /// An unknown top-level field that is not marked `"must_understand": false`.
    #[error("unknown metadata field {field:?} (only fields marked \"must_understand\": false may be ignored)")]
    UnknownField {
        /// The field name.
        field: String,
    },
    /// An extension that no registry knows.
    #[error("unknown {point} {name:?}")]
    UnknownExtension {
        /// The extension point.
        point: ExtensionPoint,
        /// The extension's name.
        name: String,
    },
    /// An extension this build knows of but was compiled without.
    #[error("unsupported {point} {name:?} (enable cargo feature {feature:?})")]
    CompiledOut {
        /// The extension point.
        point: ExtensionPoint,
        /// The extension's name.
        name: String,
        /// The cargo feature that brings it in.
        feature: &'static str,
    },
    /// `must_understand` given where the spec says it can never apply.
    #[error("{point} {name:?} must not carry \"must_understand\" ({point}s can never be ignored)")]
    MustUnderstandNotAllowed {
        /// The extension point.
        point: ExtensionPoint,
        /// The extension's name.
        name: String,
    },
    /// A known extension whose configuration is invalid.
    #[error("invalid configuration for {point} {name:?}: {reason}")]
    InvalidConfiguration {
        /// The extension point.
        point: ExtensionPoint,
        /// The extension's name.
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// A known extension whose configuration does not have the fields and types it takes.
    #[error("invalid configuration for {point} {name:?}")]
    ConfigurationShape {
        /// The extension point.
        point: ExtensionPoint,
        /// The extension's name.
        name: String,
        /// What serde found wrong (an unknown or missing field, a value of the wrong type).
        #[source]
        source: serde_json::Error,
    },
    /// A name registered twice in one registry.
    #[error("{point} {name:?} is registered twice")]
    DuplicateExtension {
        /// The extension point.
        point: ExtensionPoint,
        /// The extension's name.
        name: String,
    },
    /// A fill value that does not fit the data type.
    #[error("fill_value {value} is invalid for data type {data_type}: {reason}")]
    InvalidFillValue {
        /// The data type's name.
        data_type: String,
        /// The JSON value given.
        value: String,
        /// What is wrong.
        reason: String,
    },
    /// A dimension count that disagrees with the shape.
    #[error("{field} has {got} dimensions but the array has {expected}")]
    DimensionMismatch {
        /// Which field disagrees.
        field: &'static str,
        /// The array's rank.
        expected: usize,
        /// The field's rank.
        got: usize,
    },
}

/// Shorthand for results in this crate.
pub type Result<T, E = MetaError> = std::result::Result<T, E>;

impl MetaError {
    pub(crate) fn invalid(field: impl Into<String>, reason: impl Into<String>) -> Self {
        MetaError::InvalidField {
            field: field.into(),
            reason: reason.into(),
        }
    }
}
