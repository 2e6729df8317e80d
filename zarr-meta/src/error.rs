//! The error type of zarr-meta.

use crate::ext::ExtensionPoint;

/// Everything that can be wrong with a Zarr metadata document (v3, or v2 in [`crate::v2`]).
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
    /// `zarr_format` is not the one of the document (3 in `zarr.json`, 2 in `.zarray` and
    /// `.zgroup`).
    #[error("unsupported zarr_format {found} in {document} (expected {expected})")]
    UnsupportedZarrFormat {
        /// The document: `zarr.json`, `.zarray` or `.zgroup`.
        document: &'static str,
        /// The format that document has.
        expected: u8,
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
    /// `"must_understand": false` on an extension whose specification says a reader without it
    /// must refuse the array (`sparse_layout`): refused by every reader, with it or without it.
    #[error("{point} {name:?} must not be marked \"must_understand\": false (its specification says a reader without it must refuse the array; remove the field)")]
    NeverIgnorable {
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
    /// A Zarr v2 codec configuration (`compressor` or an entry of `filters`) without a
    /// string `"id"`.
    #[error("the codec configuration in {field} has no \"id\" (a numcodecs configuration names its codec, as in {{\"id\": \"zlib\", \"level\": 1}})")]
    MissingCodecId {
        /// Where: `compressor` or `filters[i]`.
        field: String,
    },
    /// A chunk size of zero in a Zarr v2 `chunks`.
    #[error("chunks[{axis}] is 0 (every chunk size must be at least 1)")]
    ZeroChunkSize {
        /// The axis.
        axis: usize,
    },
    /// A Zarr v2 `dtype` that is not one of the data types of this crate.
    #[error("unsupported v2 dtype {dtype} ({kind}; the types read are bool \"|b1\", integers such as \"<i4\", floats such as \"<f8\", complex such as \"<c16\", raw bytes \"|V<n>\", datetimes such as \"<M8[ns]\", fixed-width strings \"<U<n>\" and \"|S<n>\", and \"|O\" with a vlen-utf8 or vlen-bytes filter)")]
    UnsupportedDtypeV2 {
        /// The dtype as written, as JSON (a quoted string, or a list for structured types).
        dtype: String,
        /// What it is.
        kind: &'static str,
    },
    /// A core data type spelled otherwise than NumPy's `dtype.str`, which Zarr v2 requires.
    #[error("v2 dtype {dtype:?} must be spelled as NumPy's dtype.str: {canonical:?}")]
    NonCanonicalDtypeV2 {
        /// The dtype as written.
        dtype: String,
        /// How it must be spelled.
        canonical: String,
    },
    /// A key that a Zarr v2 document must not have.
    #[error("unknown key {key:?} in {document} ({})", unknown_key_hint(document))]
    UnknownKeyV2 {
        /// The document: `.zgroup` or `.zmetadata`.
        document: &'static str,
        /// The key.
        key: String,
    },
    /// A `.zmetadata` whose `zarr_consolidated_format` is not 1.
    #[error("unsupported zarr_consolidated_format {found} in .zmetadata (expected 1)")]
    UnsupportedConsolidatedFormat {
        /// The value found.
        found: String,
    },
    /// Consolidated metadata in a v3 group of a kind other than `"inline"`.
    #[error("unsupported consolidated_metadata kind {kind} (expected \"inline\")")]
    UnsupportedConsolidatedKind {
        /// The kind found.
        kind: String,
    },
    /// A document inside consolidated metadata (`.zmetadata` or a group's
    /// `consolidated_metadata`) that does not parse.
    #[error("consolidated metadata entry {key:?} is invalid")]
    ConsolidatedEntry {
        /// The entry's key (`"a/b/.zarray"`, or a node path in v3).
        key: String,
        /// What is wrong with it.
        #[source]
        source: Box<MetaError>,
    },
}

fn unknown_key_hint(document: &str) -> &'static str {
    match document {
        ".zgroup" => "a v2 group document holds only \"zarr_format\"; attributes belong in .zattrs",
        _ => "a .zmetadata holds only \"metadata\" and \"zarr_consolidated_format\"",
    }
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
