//! The `default` chunk key encoding of the Zarr v3 core specification
//! (<https://zarr-specs.readthedocs.io/en/latest/v3/core/index.html#chunk-key-encoding>).
//!
//! Name: `default`. Key `c` followed by each grid index after the separator: `c/1/-1/0`
//! (separator `/`, the default) or `c.1.-1.0` (separator `.`); a 0-d array's only chunk is
//! `c`. Negative indices come from the `regular_bounded` grid.
//!
//! ```
//! use zarr_grid::key_encoding::{ChunkKeyEncoding, DefaultChunkKeyEncoding};
//! use zarr_meta::ExtensionDef;
//!
//! let def: ExtensionDef = serde_json::from_str(
//!     r#"{"name": "default", "configuration": {"separator": "."}}"#).unwrap();
//! let enc = DefaultChunkKeyEncoding::from_def(&def).unwrap();
//! assert_eq!(enc.encode(&[1, -1, 0]), "c.1.-1.0");
//! assert_eq!(enc.decode("c.1.-1.0", 3).unwrap(), vec![1, -1, 0]);
//! assert_eq!(enc.to_def(), def);
//!
//! // no configuration means "/"; unknown keys and other separators are refused
//! let plain: ExtensionDef = serde_json::from_str(r#"{"name": "default"}"#).unwrap();
//! assert_eq!(DefaultChunkKeyEncoding::from_def(&plain).unwrap().encode(&[]), "c");
//! for bad in [r#"{"name": "default", "configuration": {"separator": "-"}}"#,
//!             r#"{"name": "default", "configuration": {"separator": "/", "x": 1}}"#] {
//!     let def: ExtensionDef = serde_json::from_str(bad).unwrap();
//!     assert!(DefaultChunkKeyEncoding::from_def(&def).is_err(), "{bad}");
//! }
//! ```

use serde::{Deserialize, Serialize};
use zarr_meta::{ExtensionDef, ExtensionPoint};

use super::{decode_parts, push_joined, ChunkKeyEncoding, Separator};
use crate::error::GridError;

/// The extension name.
pub const NAME: &str = "default";

fn slash() -> Separator {
    Separator::Slash
}

/// The configuration of `default`: `{"separator": "/"}` (or `"."`; `/` when absent).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DefaultKeyEncodingConfig {
    /// The separator.
    #[serde(default = "slash")]
    pub separator: Separator,
}

impl Default for DefaultKeyEncodingConfig {
    fn default() -> Self {
        DefaultKeyEncodingConfig {
            separator: Separator::Slash,
        }
    }
}

/// The `default` chunk key encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct DefaultChunkKeyEncoding {
    config: DefaultKeyEncodingConfig,
}

impl DefaultChunkKeyEncoding {
    /// The encoding with `separator`.
    pub fn new(separator: Separator) -> Self {
        DefaultChunkKeyEncoding {
            config: DefaultKeyEncodingConfig { separator },
        }
    }

    /// Parses a `default` definition.
    ///
    /// # Errors
    /// [`GridError::Meta`] for unknown keys or a separator other than `/` and `.`.
    pub fn from_def(def: &ExtensionDef) -> Result<Self, GridError> {
        let config: DefaultKeyEncodingConfig =
            def.parse_configuration(ExtensionPoint::ChunkKeyEncoding)?;
        Ok(DefaultChunkKeyEncoding { config })
    }

    /// The configuration.
    pub fn config(&self) -> DefaultKeyEncodingConfig {
        self.config
    }
}

impl ChunkKeyEncoding for DefaultChunkKeyEncoding {
    fn name(&self) -> &str {
        NAME
    }

    fn encode(&self, chunk: &[i64]) -> String {
        let mut key = String::from("c");
        if !chunk.is_empty() {
            key.push(self.config.separator.as_char());
            push_joined(&mut key, chunk, self.config.separator);
        }
        key
    }

    fn decode(&self, key: &str, rank: usize) -> Result<Vec<i64>, GridError> {
        let sep = self.config.separator;
        let invalid = |reason: String| GridError::InvalidChunkKey {
            key: key.to_string(),
            encoding: NAME,
            reason,
        };
        if rank == 0 {
            return if key == "c" {
                Ok(Vec::new())
            } else {
                Err(invalid("the key of a 0-d array is \"c\"".into()))
            };
        }
        let parts = key
            .strip_prefix('c')
            .and_then(|rest| rest.strip_prefix(sep.as_char()))
            .ok_or_else(|| invalid(format!("expected the prefix \"c{sep}\"")))?;
        decode_parts(key, parts, sep, rank, NAME)
    }

    fn to_def(&self) -> ExtensionDef {
        super::separator_def(NAME, self.config.separator)
    }

    fn clone_box(&self) -> Box<dyn ChunkKeyEncoding> {
        Box::new(*self)
    }
}

/// The registry factory of `default`.
pub(crate) fn factory(def: &ExtensionDef) -> Result<Box<dyn ChunkKeyEncoding>, GridError> {
    Ok(Box::new(DefaultChunkKeyEncoding::from_def(def)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_of_both_separators() {
        let slash = DefaultChunkKeyEncoding::new(Separator::Slash);
        let dot = DefaultChunkKeyEncoding::new(Separator::Dot);
        assert_eq!(slash.encode(&[1, -1, 0]), "c/1/-1/0");
        assert_eq!(dot.encode(&[1, -1, 0]), "c.1.-1.0");
        assert_eq!(slash.encode(&[]), "c");
        assert_eq!(slash.decode("c", 0).unwrap(), Vec::<i64>::new());
        assert_eq!(dot.decode("c.-10", 1).unwrap(), vec![-10]);
        assert_eq!(
            slash.encode(&[i64::MIN, i64::MAX]),
            "c/-9223372036854775808/9223372036854775807"
        );
    }

    #[test]
    fn config_round_trips() {
        for text in [
            r#"{"name":"default","configuration":{"separator":"/"}}"#,
            r#"{"name":"default","configuration":{"separator":"."}}"#,
        ] {
            let def: ExtensionDef = serde_json::from_str(text).unwrap();
            let enc = DefaultChunkKeyEncoding::from_def(&def).unwrap();
            assert_eq!(serde_json::to_string(&enc.to_def()).unwrap(), text);
        }
    }

    #[test]
    fn malformed_keys_are_refused() {
        let enc = DefaultChunkKeyEncoding::new(Separator::Slash);
        for (key, rank, reason) in [
            ("c/-0/0", 2, "not a canonical integer"),
            ("c/+1/0", 2, "not a canonical integer"),
            ("c/01/0", 2, "not a canonical integer"),
            ("c//0", 2, "empty index"),
            ("c/1/", 2, "empty index"),
            ("c/ 1/0", 2, "not a canonical integer"),
            ("c/1/0 ", 2, "not a canonical integer"),
            ("c/9223372036854775808/0", 2, "does not fit in i64"),
            ("c/1/0/0", 2, "expected 2 indices"),
            ("c/1", 2, "expected 2 indices"),
            ("c/", 1, "empty index"),
            ("c", 1, "expected the prefix \"c/\""),
            ("c.1.0", 2, "expected the prefix \"c/\""),
            ("d/1/0", 2, "expected the prefix"),
            ("/c/1/0", 2, "expected the prefix"),
            ("1/0", 2, "expected the prefix"),
            ("c/0", 0, "the key of a 0-d array is \"c\""),
            ("", 0, "the key of a 0-d array"),
            ("zarr.json", 1, "expected the prefix"),
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
