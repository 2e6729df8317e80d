//! Chunk key encodings: the store key of a chunk from its grid index, and back.
//!
//! Two encodings, one module each: [`default`] (`c/1/-1/0`, 0-d `c`) and [`v2`] (`1.-1.0`,
//! 0-d `0`). Grid indices are `i64` and written with a leading `-` when negative (the
//! `regular_bounded` grid). Keys are relative to the array's own prefix.
//!
//! Decoding is strict: each part matches `0|-?[1-9][0-9]*` and fits in i64, the number of
//! parts equals the rank. `-0`, `+1`, `01`, empty parts, spaces and overflow are errors, so
//! every chunk has exactly one key and a store listing can be decoded without guessing.
//!
//! ```
//! use zarr_grid::key_encoding::{build_key_encoding, default_key_encoding_registry};
//! use zarr_meta::ExtensionDef;
//!
//! let def: ExtensionDef = serde_json::from_str(
//!     r#"{"name": "default", "configuration": {"separator": "/"}}"#).unwrap();
//! let enc = build_key_encoding(&default_key_encoding_registry(), &def).unwrap();
//! assert_eq!(enc.encode(&[1, -1, 0]), "c/1/-1/0");
//! assert_eq!(enc.decode("c/1/-1/0", 3).unwrap(), vec![1, -1, 0]);
//! assert!(enc.decode("c/01/-1/0", 3).is_err());
//! assert!(enc.decode("c/1/-1", 3).is_err());
//! ```

pub mod default;
pub mod v2;

use std::fmt;

use serde::{Deserialize, Serialize};
use zarr_meta::{ExtensionDef, ExtensionPoint, Registry};

use crate::error::GridError;

pub use self::default::{DefaultChunkKeyEncoding, DefaultKeyEncodingConfig};
pub use self::v2::{V2ChunkKeyEncoding, V2KeyEncodingConfig};

/// A chunk key encoding: grid index <-> store key (relative to the array's prefix).
pub trait ChunkKeyEncoding: fmt::Debug + Send + Sync {
    /// The encoding's extension name (`default`, `v2`).
    fn name(&self) -> &str;

    /// The key of the chunk with grid index `chunk`.
    fn encode(&self, chunk: &[i64]) -> String;

    /// The grid index of `key` for an array of rank `rank`.
    ///
    /// # Errors
    /// [`GridError::InvalidChunkKey`] if `key` is not exactly the key of a chunk of that rank.
    fn decode(&self, key: &str, rank: usize) -> Result<Vec<i64>, GridError>;

    /// The encoding's definition for the metadata.
    fn to_def(&self) -> ExtensionDef;

    /// A boxed copy.
    fn clone_box(&self) -> Box<dyn ChunkKeyEncoding>;
}

impl Clone for Box<dyn ChunkKeyEncoding> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// The separator between the parts of a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Separator {
    /// `/`
    #[serde(rename = "/")]
    Slash,
    /// `.`
    #[serde(rename = ".")]
    Dot,
}

impl Separator {
    /// The separator as a string.
    pub fn as_str(self) -> &'static str {
        match self {
            Separator::Slash => "/",
            Separator::Dot => ".",
        }
    }

    /// The separator as a character.
    pub fn as_char(self) -> char {
        match self {
            Separator::Slash => '/',
            Separator::Dot => '.',
        }
    }
}

impl fmt::Display for Separator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Parses one key part strictly: `0|-?[1-9][0-9]*`, within i64.
///
/// # Errors
/// A lower-case reason naming the part.
pub fn parse_index(part: &str) -> Result<i64, String> {
    let digits = part.strip_prefix('-').unwrap_or(part);
    let canonical = match digits.as_bytes() {
        [] => false,
        [b'0'] => digits.len() == part.len(), // "0" but never "-0"
        [first, rest @ ..] => (b'1'..=b'9').contains(first) && rest.iter().all(u8::is_ascii_digit),
    };
    if !canonical {
        return Err(if part.is_empty() {
            "empty index".to_string()
        } else {
            format!("index {part:?} is not a canonical integer (0|-?[1-9][0-9]*)")
        });
    }
    part.parse::<i64>()
        .map_err(|_| format!("index {part:?} does not fit in i64"))
}

/// The definition `{"name": name, "configuration": {"separator": sep}}` both encodings write.
pub(crate) fn separator_def(name: &str, sep: Separator) -> ExtensionDef {
    let mut map = serde_json::Map::new();
    map.insert(
        "separator".into(),
        serde_json::Value::String(sep.as_str().into()),
    );
    ExtensionDef::with_configuration(name, map)
}

/// Writes `chunk` joined by `sep` after `out`.
pub(crate) fn push_joined(out: &mut String, chunk: &[i64], sep: Separator) {
    use std::fmt::Write;
    for (i, g) in chunk.iter().enumerate() {
        if i > 0 {
            out.push(sep.as_char());
        }
        // writing to a String cannot fail
        let _ = write!(out, "{g}");
    }
}

/// Decodes `parts` (the key without any prefix), `rank` indices joined by `sep`.
pub(crate) fn decode_parts(
    key: &str,
    parts: &str,
    sep: Separator,
    rank: usize,
    encoding: &'static str,
) -> Result<Vec<i64>, GridError> {
    let invalid = |reason: String| GridError::InvalidChunkKey {
        key: key.to_string(),
        encoding,
        reason,
    };
    let count = parts.split(sep.as_char()).count();
    if count != rank {
        return Err(invalid(format!(
            "expected {rank} indices separated by {sep:?}, found {count}",
            sep = sep.as_str()
        )));
    }
    parts
        .split(sep.as_char())
        .map(|p| parse_index(p).map_err(invalid))
        .collect()
}

/// Builds a chunk key encoding from its definition.
pub type ChunkKeyEncodingFactory =
    fn(&ExtensionDef) -> Result<Box<dyn ChunkKeyEncoding>, GridError>;

/// Resolves `def` through `registry` (a `must_understand` field is an error) and builds the
/// encoding.
///
/// # Errors
/// [`GridError::Meta`] for an unknown encoding, a `must_understand` field or an invalid
/// configuration (unknown keys, a separator other than `/` and `.`).
pub fn build_key_encoding(
    registry: &Registry<ChunkKeyEncodingFactory>,
    def: &ExtensionDef,
) -> Result<Box<dyn ChunkKeyEncoding>, GridError> {
    let factory = registry.resolve_required(def)?;
    factory(def)
}

/// Registers `default` and `v2`.
///
/// # Errors
/// If a name is already registered.
pub fn register_key_encodings(
    registry: &mut Registry<ChunkKeyEncodingFactory>,
) -> Result<(), GridError> {
    registry.register(default::NAME, default::factory as ChunkKeyEncodingFactory)?;
    registry.register(v2::NAME, v2::factory as ChunkKeyEncodingFactory)?;
    Ok(())
}

/// A chunk key encoding registry holding `default` and `v2`.
pub fn default_key_encoding_registry() -> Registry<ChunkKeyEncodingFactory> {
    let mut r = Registry::new(ExtensionPoint::ChunkKeyEncoding);
    // cannot fail: the registry is new and the names are distinct
    let _ = register_key_encodings(&mut r);
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_index_parsing() {
        for (part, value) in [
            ("0", 0),
            ("7", 7),
            ("-1", -1),
            ("10", 10),
            ("-9223372036854775808", i64::MIN),
            ("9223372036854775807", i64::MAX),
        ] {
            assert_eq!(parse_index(part), Ok(value), "{part}");
        }
        for (part, reason) in [
            ("", "empty index"),
            ("-0", "not a canonical integer"),
            ("+1", "not a canonical integer"),
            ("01", "not a canonical integer"),
            ("-01", "not a canonical integer"),
            ("00", "not a canonical integer"),
            ("-", "not a canonical integer"),
            (" 1", "not a canonical integer"),
            ("1 ", "not a canonical integer"),
            ("1a", "not a canonical integer"),
            ("١", "not a canonical integer"),
            ("--1", "not a canonical integer"),
            ("9223372036854775808", "does not fit in i64"),
            ("-9223372036854775809", "does not fit in i64"),
            ("99999999999999999999999", "does not fit in i64"),
        ] {
            let err = parse_index(part).unwrap_err();
            assert!(err.contains(reason), "{part:?}: {err}");
        }
    }

    #[test]
    fn registry_refuses_unknown_and_must_understand() {
        let reg = default_key_encoding_registry();
        assert_eq!(reg.names().collect::<Vec<_>>(), vec!["default", "v2"]);
        for (json, text) in [
            (r#"{"name":"v3"}"#, "unknown chunk key encoding \"v3\""),
            (
                r#"{"name":"default","must_understand":true}"#,
                "must not carry \"must_understand\"",
            ),
            (
                r#"{"name":"v2","configuration":{"separator":"/"},"must_understand":false}"#,
                "must not carry \"must_understand\"",
            ),
        ] {
            let def: ExtensionDef = serde_json::from_str(json).unwrap();
            let err = build_key_encoding(&reg, &def).unwrap_err();
            assert!(matches!(err, GridError::Meta(_)));
            assert!(zarr_testkit::report(&err).contains(text), "{json}: {err}");
        }
        let mut twice = default_key_encoding_registry();
        assert!(register_key_encodings(&mut twice).is_err());
    }
}
