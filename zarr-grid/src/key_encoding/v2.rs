//! The `v2` chunk key encoding of the Zarr v3 core specification
//! (<https://zarr-specs.readthedocs.io/en/latest/v3/core/index.html#chunk-key-encoding>),
//! the key layout of Zarr v2 arrays.
//!
//! Name: `v2`. The grid indices joined by the separator: `1.-1.0` (separator `.`, the
//! default) or `1/-1/0` (separator `/`); a 0-d array's only chunk is `0`.
//!
//! ```
//! use zarr_grid::key_encoding::{ChunkKeyEncoding, V2ChunkKeyEncoding};
//! use zarr_meta::ExtensionDef;
//!
//! let def: ExtensionDef = serde_json::from_str(
//!     r#"{"name": "v2", "configuration": {"separator": "/"}}"#).unwrap();
//! let enc = V2ChunkKeyEncoding::from_def(&def).unwrap();
//! assert_eq!(enc.encode(&[1, -1, 0]), "1/-1/0");
//! assert_eq!(enc.decode("1/-1/0", 3).unwrap(), vec![1, -1, 0]);
//! assert_eq!(enc.to_def(), def);
//!
//! // no configuration means "."; unknown keys and other separators are refused
//! let plain: ExtensionDef = serde_json::from_str(r#"{"name": "v2"}"#).unwrap();
//! let enc = V2ChunkKeyEncoding::from_def(&plain).unwrap();
//! assert_eq!((enc.encode(&[2, 0]), enc.encode(&[])), ("2.0".to_string(), "0".to_string()));
//! for bad in [r#"{"name": "v2", "configuration": {"separator": "_"}}"#,
//!             r#"{"name": "v2", "configuration": {"sep": "."}}"#] {
//!     let def: ExtensionDef = serde_json::from_str(bad).unwrap();
//!     assert!(V2ChunkKeyEncoding::from_def(&def).is_err(), "{bad}");
//! }
//! ```

use serde::{Deserialize, Serialize};
use zarr_meta::{ExtensionDef, ExtensionPoint};

use super::{decode_parts, push_joined, ChunkKeyEncoding, Separator};
use crate::error::GridError;

/// The extension name.
pub const NAME: &str = "v2";

fn dot() -> Separator {
    Separator::Dot
}

/// The configuration of `v2`: `{"separator": "."}` (or `"/"`; `.` when absent).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct V2KeyEncodingConfig {
    /// The separator.
    #[serde(default = "dot")]
    pub separator: Separator,
}

impl Default for V2KeyEncodingConfig {
    fn default() -> Self {
        V2KeyEncodingConfig {
            separator: Separator::Dot,
        }
    }
}

/// The `v2` chunk key encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct V2ChunkKeyEncoding {
    config: V2KeyEncodingConfig,
}

impl V2ChunkKeyEncoding {
    /// The encoding with `separator`.
    pub fn new(separator: Separator) -> Self {
        V2ChunkKeyEncoding {
            config: V2KeyEncodingConfig { separator },
        }
    }

    /// Parses a `v2` definition.
    ///
    /// # Errors
    /// [`GridError::Meta`] for unknown keys or a separator other than `/` and `.`.
    pub fn from_def(def: &ExtensionDef) -> Result<Self, GridError> {
        let config: V2KeyEncodingConfig =
            def.parse_configuration(ExtensionPoint::ChunkKeyEncoding)?;
        Ok(V2ChunkKeyEncoding { config })
    }

    /// The configuration.
    pub fn config(&self) -> V2KeyEncodingConfig {
        self.config
    }
}

impl ChunkKeyEncoding for V2ChunkKeyEncoding {
    fn name(&self) -> &str {
        NAME
    }

    fn encode(&self, chunk: &[i64]) -> String {
        if chunk.is_empty() {
            return "0".into();
        }
        let mut key = String::new();
        push_joined(&mut key, chunk, self.config.separator);
        key
    }

    fn decode(&self, key: &str, rank: usize) -> Result<Vec<i64>, GridError> {
        if rank == 0 {
            return if key == "0" {
                Ok(Vec::new())
            } else {
                Err(GridError::InvalidChunkKey {
                    key: key.to_string(),
                    encoding: NAME,
                    reason: "the key of a 0-d array is \"0\"".into(),
                })
            };
        }
        decode_parts(key, key, self.config.separator, rank, NAME)
    }

    fn to_def(&self) -> ExtensionDef {
        super::separator_def(NAME, self.config.separator)
    }

    fn clone_box(&self) -> Box<dyn ChunkKeyEncoding> {
        Box::new(*self)
    }
}

/// The registry factory of `v2`.
pub(crate) fn factory(def: &ExtensionDef) -> Result<Box<dyn ChunkKeyEncoding>, GridError> {
    Ok(Box::new(V2ChunkKeyEncoding::from_def(def)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_of_both_separators() {
        let dot = V2ChunkKeyEncoding::new(Separator::Dot);
        let slash = V2ChunkKeyEncoding::new(Separator::Slash);
        assert_eq!(dot.encode(&[1, -1, 0]), "1.-1.0");
        assert_eq!(slash.encode(&[1, -1, 0]), "1/-1/0");
        assert_eq!(dot.encode(&[]), "0");
        assert_eq!(dot.decode("0", 0).unwrap(), Vec::<i64>::new());
        assert_eq!(dot.decode("0", 1).unwrap(), vec![0]);
        assert_eq!(slash.decode("-3/7", 2).unwrap(), vec![-3, 7]);
    }

    #[test]
    fn config_round_trips() {
        for text in [
            r#"{"name":"v2","configuration":{"separator":"."}}"#,
            r#"{"name":"v2","configuration":{"separator":"/"}}"#,
        ] {
            let def: ExtensionDef = serde_json::from_str(text).unwrap();
            let enc = V2ChunkKeyEncoding::from_def(&def).unwrap();
            assert_eq!(serde_json::to_string(&enc.to_def()).unwrap(), text);
        }
    }

    #[test]
    fn malformed_keys_are_refused() {
        let enc = V2ChunkKeyEncoding::new(Separator::Dot);
        for (key, rank, reason) in [
            ("-0.0", 2, "not a canonical integer"),
            ("+1.0", 2, "not a canonical integer"),
            ("01.0", 2, "not a canonical integer"),
            (".0", 2, "empty index"),
            ("1.", 2, "empty index"),
            ("1..0", 3, "empty index"),
            ("1. 0", 2, "not a canonical integer"),
            ("1.-9223372036854775809", 2, "does not fit in i64"),
            ("1.0.0", 2, "expected 2 indices"),
            ("1", 2, "expected 2 indices"),
            ("1/0", 2, "expected 2 indices"),
            ("c.1.0", 2, "expected 2 indices"),
            ("c.1", 2, "not a canonical integer"),
            ("", 1, "empty index"),
            ("c", 0, "the key of a 0-d array is \"0\""),
            ("", 0, "the key of a 0-d array"),
        ] {
            let err = enc.decode(key, rank).unwrap_err();
            assert!(matches!(err, GridError::InvalidChunkKey { .. }));
            assert!(
                zarr_testkit::report(&err).contains(reason),
                "{key:?}: {err}"
            );
        }
    }
}
