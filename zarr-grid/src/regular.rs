//! The `regular` chunk grid of the Zarr v3 core specification
//! (<https://zarr-specs.readthedocs.io/en/latest/v3/chunk-grids/regular-grid/index.html>).
//!
//! Name: `regular`. Chunk `g` covers positions `[g*c, (g+1)*c)` on each axis; the last
//! chunk may reach past the array's end (its buffer still has the full chunk shape).
//!
//! ```
//! use zarr_grid::regular::{RegularChunkGrid, RegularConfig};
//! use zarr_grid::ChunkGrid;
//! use zarr_meta::{ExtensionDef, ExtensionPoint};
//!
//! let def: ExtensionDef = serde_json::from_str(
//!     r#"{"name": "regular", "configuration": {"chunk_shape": [10, 4]}}"#,
//! ).unwrap();
//! let config: RegularConfig = def.parse_configuration(ExtensionPoint::ChunkGrid).unwrap();
//! let grid = RegularChunkGrid::new(config, &[25, 4]).unwrap();
//! assert_eq!(grid.grid_range(), vec![0..3, 0..1]);
//! assert_eq!(grid.chunk_region(&[2, 0]).unwrap().shape, vec![5, 4]);
//! assert_eq!(grid.to_def(), def);
//!
//! // strict: unknown keys, zeros and non-integers are refused
//! for bad in [r#"{"chunk_shape": [10, 4], "extra": 1}"#, r#"{"chunk_shape": [0, 4]}"#,
//!             r#"{"chunk_shape": [2.5, 4]}"#, r#"{"chunk_shape": [-1, 4]}"#] {
//!     assert!(serde_json::from_str::<RegularConfig>(bad).is_err(), "{bad}");
//! }
//! ```

use std::num::NonZeroU64;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};
use zarr_meta::{ExtensionDef, ExtensionPoint};

use crate::error::GridError;
use crate::grid::{delegate_geometry, ChunkGrid, Geometry};

/// The extension name.
pub const NAME: &str = "regular";

/// The configuration of a `regular` grid: `{"chunk_shape": [...]}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegularConfig {
    /// The chunk shape: positive integers, one per dimension.
    #[serde(deserialize_with = "deserialize_chunk_shape")]
    pub chunk_shape: Vec<NonZeroU64>,
}

impl RegularConfig {
    /// A configuration from a chunk shape.
    pub fn new(chunk_shape: Vec<NonZeroU64>) -> Self {
        RegularConfig { chunk_shape }
    }

    /// The grid definition for the metadata.
    pub fn to_def(&self) -> ExtensionDef {
        let mut map = Map::new();
        map.insert("chunk_shape".into(), chunk_shape_value(&self.chunk_shape));
        ExtensionDef::with_configuration(NAME, map)
    }
}

/// The JSON list of a chunk shape.
pub(crate) fn chunk_shape_value(chunk_shape: &[NonZeroU64]) -> Value {
    Value::Array(chunk_shape.iter().map(|c| Value::from(c.get())).collect())
}

/// Reads a chunk shape, refusing zeros, negatives and non-integers with a message that says
/// which entry is wrong.
pub(crate) fn deserialize_chunk_shape<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Vec<NonZeroU64>, D::Error> {
    let items = Vec::<Value>::deserialize(d)?;
    items
        .iter()
        .enumerate()
        .map(|(axis, v)| {
            v.as_u64().and_then(NonZeroU64::new).ok_or_else(|| {
                serde::de::Error::custom(format!(
                    "chunk_shape[{axis}] must be a positive integer, got {v}"
                ))
            })
        })
        .collect()
}

/// A `regular` chunk grid bound to an array shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegularChunkGrid {
    config: RegularConfig,
    geometry: Geometry,
}

impl RegularChunkGrid {
    /// The grid of `config` for an array of `shape`.
    ///
    /// # Errors
    /// [`GridError::DimensionMismatch`] if `chunk_shape` has another rank than `shape`,
    /// [`GridError::ShapeTooLarge`] for a shape beyond `i64::MAX` (coordinates are i64).
    pub fn new(config: RegularConfig, shape: &[u64]) -> Result<Self, GridError> {
        if let Some((axis, &len)) = shape.iter().enumerate().find(|(_, &n)| n > i64::MAX as u64) {
            return Err(GridError::ShapeTooLarge { axis, len });
        }
        let rank = config.chunk_shape.len();
        let zeros = vec![0; rank];
        let geometry = Geometry::new(&config.chunk_shape, &zeros, &zeros, shape)?;
        Ok(RegularChunkGrid { config, geometry })
    }

    /// Parses a `regular` definition and binds it to `shape`.
    ///
    /// # Errors
    /// An invalid configuration or one that does not fit `shape`.
    pub fn from_def(def: &ExtensionDef, shape: &[u64]) -> Result<Self, GridError> {
        let config: RegularConfig = def.parse_configuration(ExtensionPoint::ChunkGrid)?;
        Self::new(config, shape)
    }

    /// The configuration.
    pub fn config(&self) -> &RegularConfig {
        &self.config
    }
}

impl ChunkGrid for RegularChunkGrid {
    fn name(&self) -> &str {
        NAME
    }

    fn to_def(&self) -> ExtensionDef {
        self.config.to_def()
    }

    fn with_shape(&self, shape: &[u64]) -> Result<Box<dyn ChunkGrid>, GridError> {
        Ok(Box::new(Self::new(self.config.clone(), shape)?))
    }

    delegate_geometry!();
}

/// The registry factory of `regular`.
pub(crate) fn factory(def: &ExtensionDef, shape: &[u64]) -> Result<Box<dyn ChunkGrid>, GridError> {
    Ok(Box::new(RegularChunkGrid::from_def(def, shape)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Region;

    fn def(json: &str) -> ExtensionDef {
        serde_json::from_str(json).unwrap()
    }

    fn grid(json: &str, shape: &[u64]) -> Result<RegularChunkGrid, GridError> {
        RegularChunkGrid::from_def(&def(json), shape)
    }

    #[test]
    fn config_round_trips() {
        let text = r#"{"name":"regular","configuration":{"chunk_shape":[3,1,7]}}"#;
        let g = grid(text, &[10, 1, 7]).unwrap();
        let back = serde_json::to_string(&g.to_def()).unwrap();
        assert_eq!(back, text);
        assert_eq!(g.chunk_shape_u64(), Some(vec![3, 1, 7]));
        assert_eq!(g.num_chunks(), Some(4));
        assert_eq!(g.domain(), vec![(0, 10), (0, 1), (0, 7)]);
    }

    #[test]
    fn data_positions_round_trip() {
        let g = grid(
            r#"{"name":"regular","configuration":{"chunk_shape":[4,3]}}"#,
            &[10, 7],
        )
        .unwrap();
        let parts: Vec<_> = g
            .chunks_in_region(&Region::whole(&[10, 7]))
            .unwrap()
            .collect();
        assert_eq!(parts.len(), 9);
        for p in &parts {
            assert_eq!(g.buffer_offset(&p.chunk), vec![0, 0]);
            assert_eq!(Some(p.in_region.clone()), g.chunk_region(&p.chunk));
        }
        assert_eq!(g.chunk_of(&[9, 6]).unwrap(), (vec![2, 2], vec![1, 0]));
    }

    #[test]
    fn malformed_configurations_are_refused() {
        let cases = [
            (
                r#"{"name":"regular","configuration":{"chunk_shape":[2]}}"#,
                "chunk_shape has 1 dimensions but the array has 2",
            ),
            (
                r#"{"name":"regular","configuration":{"chunk_shape":[0,2]}}"#,
                "chunk_shape[0] must be a positive integer, got 0",
            ),
            (
                r#"{"name":"regular","configuration":{"chunk_shape":[2,-2]}}"#,
                "chunk_shape[1] must be a positive integer, got -2",
            ),
            (
                r#"{"name":"regular","configuration":{"chunk_shape":[2,1.5]}}"#,
                "got 1.5",
            ),
            (
                r#"{"name":"regular","configuration":{"chunk_shape":[2,"2"]}}"#,
                "got \"2\"",
            ),
            (
                r#"{"name":"regular","configuration":{"chunk_shape":[2,2],"origin":[0,0]}}"#,
                "unknown field `origin`",
            ),
            (
                r#"{"name":"regular","configuration":{"chunk_shape":2}}"#,
                "invalid type",
            ),
            (r#"{"name":"regular"}"#, "missing field `chunk_shape`"),
        ];
        for (json, reason) in cases {
            let err = zarr_testkit::report(&grid(json, &[4, 4]).unwrap_err());
            assert!(err.contains(reason), "{json}: {err}");
        }
        let err = grid(
            r#"{"name":"regular","configuration":{"chunk_shape":[2]}}"#,
            &[1 << 63],
        )
        .unwrap_err();
        assert!(
            matches!(err, GridError::ShapeTooLarge { axis: 0, len } if len == 1 << 63),
            "{err}"
        );
        // the message names the limit, not lower_bound or origin (which regular has not)
        let text = err.to_string();
        assert!(
            text.contains("2^63 - 1") && !text.contains("lower_bound"),
            "{text}"
        );
    }
}
