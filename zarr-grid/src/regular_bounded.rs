//! The `regular_bounded` chunk grid: a regular grid with an `origin` and a `lower_bound`, so
//! an array can grow in front of index 0 (`prepend`) without renaming a single chunk.
//!
//! Name: `regular_bounded`, as in the draft zarr-extensions #81 (with zarr-python #4516,
//! "Add Array.prepend and the regular_bounded chunk grid"); the project's spec is
//! `design/regular_bounded.md`. It is unrelated to the `zarrs.regular_bounded` grid of the
//! zarrs crate, which is never treated as an alias. Behind the cargo feature
//! `regular-bounded` (on by default).
//!
//! Per dimension (c = chunk size, o = origin, L = lower bound, n = shape): position `i` is
//! coordinate `L + i`, the domain is `[L, L + n)`, chunk `g` covers coordinates
//! `[o + g*c, o + (g+1)*c)`, and the first element sits at `shift = (L - o) mod c` of the first
//! chunk's buffer. With `o = 0` and `L = 0` it is exactly `regular`, keys included.
//!
//! ```
//! use zarr_grid::regular_bounded::{RegularBoundedChunkGrid, RegularBoundedConfig};
//! use zarr_grid::ChunkGrid;
//! use zarr_meta::{ExtensionDef, ExtensionPoint};
//!
//! let def: ExtensionDef = serde_json::from_str(r#"{
//!     "name": "regular_bounded",
//!     "configuration": {"chunk_shape": [4, 4], "origin": [0, 0], "lower_bound": [-3, 0]}
//! }"#).unwrap();
//! let config: RegularBoundedConfig = def.parse_configuration(ExtensionPoint::ChunkGrid).unwrap();
//! let grid = RegularBoundedChunkGrid::new(config, &[9, 4]).unwrap();
//! assert_eq!(grid.domain(), vec![(-3, 6), (0, 4)]);
//! assert_eq!(grid.grid_range(), vec![-1..2, 0..1]);
//! // position 0 lies at offset 1 of chunk -1
//! assert_eq!(grid.chunk_of(&[0, 0]).unwrap(), (vec![-1, 0], vec![1, 0]));
//! assert_eq!(grid.buffer_offset(&[-1, 0]), vec![1, 0]);
//! assert_eq!(grid.to_def(), def);
//!
//! // strict: every list is required, unknown keys are refused
//! let bad = r#"{"chunk_shape": [4], "origin": [0], "lower_bound": [0], "shift": [1]}"#;
//! assert!(serde_json::from_str::<RegularBoundedConfig>(bad).is_err());
//! assert!(serde_json::from_str::<RegularBoundedConfig>(r#"{"chunk_shape": [4]}"#).is_err());
//! ```

use std::num::NonZeroU64;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use zarr_meta::{ExtensionDef, ExtensionPoint, MetaError};

use crate::error::GridError;
use crate::grid::{delegate_geometry, ChunkGrid, Geometry};
use crate::regular::{self, chunk_shape_value, deserialize_chunk_shape, RegularConfig};

/// The extension name.
pub const NAME: &str = "regular_bounded";

/// The configuration of a `regular_bounded` grid:
/// `{"chunk_shape": [...], "origin": [...], "lower_bound": [...]}`, all of the array's rank.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegularBoundedConfig {
    /// The chunk shape: positive integers.
    #[serde(deserialize_with = "deserialize_chunk_shape")]
    pub chunk_shape: Vec<NonZeroU64>,
    /// The coordinate where chunk 0 starts, per dimension.
    pub origin: Vec<i64>,
    /// The coordinate of position 0 (`L`), per dimension.
    pub lower_bound: Vec<i64>,
}

impl RegularBoundedConfig {
    /// A configuration from its three lists.
    pub fn new(chunk_shape: Vec<NonZeroU64>, origin: Vec<i64>, lower_bound: Vec<i64>) -> Self {
        RegularBoundedConfig {
            chunk_shape,
            origin,
            lower_bound,
        }
    }

    /// The `regular_bounded` form of a regular grid (origin 0, lower bound 0): the same
    /// chunks, regions and keys.
    pub fn from_regular(regular: &RegularConfig) -> Self {
        let rank = regular.chunk_shape.len();
        RegularBoundedConfig::new(regular.chunk_shape.clone(), vec![0; rank], vec![0; rank])
    }

    /// The grid definition for the metadata (keys in the order `chunk_shape`, `origin`,
    /// `lower_bound`).
    pub fn to_def(&self) -> ExtensionDef {
        let ints = |v: &[i64]| Value::Array(v.iter().map(|&x| Value::from(x)).collect());
        let mut map = Map::new();
        map.insert("chunk_shape".into(), chunk_shape_value(&self.chunk_shape));
        map.insert("origin".into(), ints(&self.origin));
        map.insert("lower_bound".into(), ints(&self.lower_bound));
        ExtensionDef::with_configuration(NAME, map)
    }

    /// Prepends `k` positions on `axis` of an array of `shape`: `lower_bound[axis] -= k`,
    /// `shape[axis] += k`, the origin unchanged. Returns the new configuration and shape; a
    /// prepend of 0 returns them unchanged.
    ///
    /// # Errors
    /// [`GridError::AxisOutOfRange`], the validation errors of the current grid, or
    /// [`GridError::Overflow`] if the new grid does not fit in i64. Pure: on error nothing
    /// has changed.
    pub fn prepend(
        &self,
        shape: &[u64],
        axis: usize,
        k: u64,
    ) -> Result<(RegularBoundedConfig, Vec<u64>), GridError> {
        Geometry::new(&self.chunk_shape, &self.origin, &self.lower_bound, shape)?;
        if axis >= shape.len() {
            return Err(GridError::AxisOutOfRange {
                axis,
                rank: shape.len(),
            });
        }
        let lower = i128::from(self.lower_bound[axis]) - i128::from(k);
        let lower = i64::try_from(lower).map_err(|_| GridError::Overflow {
            axis,
            quantity: "lower_bound - prepended length",
        })?;
        let len = shape[axis].checked_add(k).ok_or(GridError::Overflow {
            axis,
            quantity: "shape + prepended length",
        })?;
        let mut config = self.clone();
        config.lower_bound[axis] = lower;
        let mut new_shape = shape.to_vec();
        new_shape[axis] = len;
        Geometry::new(
            &config.chunk_shape,
            &config.origin,
            &config.lower_bound,
            &new_shape,
        )?;
        Ok((config, new_shape))
    }
}

/// Prepends `k` positions on `axis` of an array whose `chunk_grid` is `grid` (a `regular` or
/// `regular_bounded` definition) and whose shape is `shape`: the pure arithmetic of
/// `Array::prepend`. A regular grid becomes `regular_bounded` with origin 0 and lower bound
/// 0 on the other axes, which keeps every key.
///
/// A prepend of 0 changes nothing: callers skip it rather than write the result (which
/// would switch a regular grid's name).
///
/// ```
/// use zarr_grid::regular_bounded::{prepend, RegularBoundedChunkGrid};
/// use zarr_grid::ChunkGrid;
/// use zarr_meta::ExtensionDef;
///
/// let regular: ExtensionDef = serde_json::from_str(
///     r#"{"name": "regular", "configuration": {"chunk_shape": [64]}}"#).unwrap();
/// let (config, shape) = prepend(&regular, &[128], 0, 10).unwrap();
/// assert_eq!((config.lower_bound.clone(), shape.clone()), (vec![-10], vec![138]));
/// let grid = RegularBoundedChunkGrid::new(config, &shape).unwrap();
/// assert_eq!(grid.grid_range(), vec![-1..2]);
/// assert_eq!(grid.buffer_offset(&[-1]), vec![54]);
/// ```
///
/// # Errors
/// [`GridError::UnsupportedGrid`] for another grid, [`GridError::Meta`] for an invalid
/// definition, and the errors of [`RegularBoundedConfig::prepend`].
pub fn prepend(
    grid: &ExtensionDef,
    shape: &[u64],
    axis: usize,
    k: u64,
) -> Result<(RegularBoundedConfig, Vec<u64>), GridError> {
    bounded_config(grid, "prepend")?.prepend(shape, axis, k)
}

/// The `regular_bounded` form of a `regular` or `regular_bounded` definition.
///
/// # Errors
/// [`GridError::UnsupportedGrid`] naming `operation` for another grid, [`GridError::Meta`]
/// for a `must_understand` field or an invalid configuration.
pub fn bounded_config(
    grid: &ExtensionDef,
    operation: &'static str,
) -> Result<RegularBoundedConfig, GridError> {
    if grid.must_understand.is_some() {
        return Err(MetaError::MustUnderstandNotAllowed {
            point: ExtensionPoint::ChunkGrid,
            name: grid.name.clone(),
        }
        .into());
    }
    match grid.name.as_str() {
        regular::NAME => {
            let config: RegularConfig = grid.parse_configuration(ExtensionPoint::ChunkGrid)?;
            Ok(RegularBoundedConfig::from_regular(&config))
        }
        NAME => Ok(grid.parse_configuration(ExtensionPoint::ChunkGrid)?),
        "rectilinear" => Err(GridError::RectilinearPrepend),
        other => Err(GridError::UnsupportedGrid {
            name: other.to_string(),
            operation,
        }),
    }
}

/// A `regular_bounded` chunk grid bound to an array shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegularBoundedChunkGrid {
    config: RegularBoundedConfig,
    geometry: Geometry,
}

impl RegularBoundedChunkGrid {
    /// The grid of `config` for an array of `shape`.
    ///
    /// # Errors
    /// [`GridError::DimensionMismatch`] if a list has another rank than `shape`;
    /// [`GridError::Overflow`] if `L + n`, `L - o`, the first or last chunk's start
    /// `o + g*c` or the grid index range does not fit in i64.
    pub fn new(config: RegularBoundedConfig, shape: &[u64]) -> Result<Self, GridError> {
        let geometry = Geometry::new(
            &config.chunk_shape,
            &config.origin,
            &config.lower_bound,
            shape,
        )?;
        Ok(RegularBoundedChunkGrid { config, geometry })
    }

    /// Parses a `regular_bounded` definition and binds it to `shape`.
    ///
    /// # Errors
    /// An invalid configuration or one that does not fit `shape`.
    pub fn from_def(def: &ExtensionDef, shape: &[u64]) -> Result<Self, GridError> {
        let config: RegularBoundedConfig = def.parse_configuration(ExtensionPoint::ChunkGrid)?;
        Self::new(config, shape)
    }

    /// The configuration.
    pub fn config(&self) -> &RegularBoundedConfig {
        &self.config
    }

    /// The grid after prepending `k` positions on `axis`.
    ///
    /// # Errors
    /// As [`RegularBoundedConfig::prepend`].
    pub fn prepended(&self, axis: usize, k: u64) -> Result<Self, GridError> {
        let (config, shape) = self.config.prepend(self.geometry.shape(), axis, k)?;
        Self::new(config, &shape)
    }
}

impl ChunkGrid for RegularBoundedChunkGrid {
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

/// The registry factory of `regular_bounded`.
pub(crate) fn factory(def: &ExtensionDef, shape: &[u64]) -> Result<Box<dyn ChunkGrid>, GridError> {
    Ok(Box::new(RegularBoundedChunkGrid::from_def(def, shape)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Region;
    use crate::regular::RegularChunkGrid;

    fn def(json: &str) -> ExtensionDef {
        serde_json::from_str(json).unwrap()
    }

    fn bounded(json_config: &str, shape: &[u64]) -> Result<RegularBoundedChunkGrid, GridError> {
        let d = def(&format!(
            r#"{{"name":"regular_bounded","configuration":{json_config}}}"#
        ));
        RegularBoundedChunkGrid::from_def(&d, shape)
    }

    #[test]
    fn config_round_trips_in_order() {
        let text = r#"{"name":"regular_bounded","configuration":{"chunk_shape":[3,4,2],"origin":[0,5,-1],"lower_bound":[-4,-1,-7]}}"#;
        let g = RegularBoundedChunkGrid::from_def(&def(text), &[7, 6, 5]).unwrap();
        assert_eq!(serde_json::to_string(&g.to_def()).unwrap(), text);
        let typed: RegularBoundedConfig =
            serde_json::from_value(serde_json::to_value(g.config()).unwrap()).unwrap();
        assert_eq!(&typed, g.config());
    }

    #[test]
    fn worked_example() {
        let g = bounded(
            r#"{"chunk_shape":[4,4],"origin":[0,0],"lower_bound":[-3,0]}"#,
            &[9, 4],
        )
        .unwrap();
        assert_eq!(g.domain(), vec![(-3, 6), (0, 4)]);
        assert_eq!(g.grid_range(), vec![-1..2, 0..1]);
        assert_eq!(g.num_chunks(), Some(3));
        let first = g.chunk_part(&[-1, 0]).unwrap();
        assert_eq!(first.in_chunk, Region::new(vec![1, 0], vec![3, 4]).unwrap());
        assert_eq!(
            first.in_region,
            Region::new(vec![0, 0], vec![3, 4]).unwrap()
        );
        assert!(!first.is_whole_chunk(&[4, 4]));
        let mid = g.chunk_part(&[0, 0]).unwrap();
        assert_eq!(mid.in_chunk, Region::new(vec![0, 0], vec![4, 4]).unwrap());
        assert!(mid.is_whole_chunk(&g.chunk_buffer_shape(&[0, 0]).unwrap()));
        assert_eq!(mid.in_region.start, vec![3, 0]);
        assert_eq!(g.buffer_offset(&[0, 0]), vec![0, 0]);
        assert!(g.chunk_part(&[2, 0]).is_none());
        assert!(g.chunk_part(&[-2, 0]).is_none());
    }

    #[test]
    fn prepend_from_regular_keeps_every_chunk() {
        let regular = def(r#"{"name":"regular","configuration":{"chunk_shape":[4,4]}}"#);
        let (cfg, shape) = prepend(&regular, &[6, 4], 0, 3).unwrap();
        assert_eq!(cfg.origin, vec![0, 0]);
        assert_eq!(cfg.lower_bound, vec![-3, 0]);
        assert_eq!(shape, vec![9, 4]);
        let old = RegularChunkGrid::from_def(&regular, &[6, 4]).unwrap();
        let new = RegularBoundedChunkGrid::new(cfg.clone(), &shape).unwrap();
        // each old chunk keeps its index and its buffer layout; its positions move by 3
        for g in old.chunk_indices() {
            let (a, b) = (old.chunk_part(&g).unwrap(), new.chunk_part(&g).unwrap());
            assert_eq!(a.in_chunk, b.in_chunk);
            assert_eq!(a.in_region.start[0] + 3, b.in_region.start[0]);
        }
        // zero changes nothing, and a second prepend moves L further
        assert_eq!(
            cfg.prepend(&shape, 1, 0).unwrap(),
            (cfg.clone(), shape.clone())
        );
        let (cfg2, shape2) = prepend(&cfg.to_def(), &shape, 1, 5).unwrap();
        assert_eq!((cfg2.lower_bound, shape2), (vec![-3, -5], vec![9, 9]));
    }

    #[test]
    fn prepend_errors_change_nothing() {
        let regular = def(r#"{"name":"regular","configuration":{"chunk_shape":[4]}}"#);
        assert!(matches!(
            prepend(&regular, &[6], 1, 3),
            Err(GridError::AxisOutOfRange { axis: 1, rank: 1 })
        ));
        let near = RegularBoundedConfig::new(regular.chunk_shape_nz(), vec![0], vec![i64::MIN + 2]);
        assert!(matches!(
            near.prepend(&[6], 0, 3),
            Err(GridError::Overflow { axis: 0, .. })
        ));
        let at_min =
            RegularBoundedConfig::new(regular.chunk_shape_nz(), vec![-1], vec![i64::MIN + 4]);
        // L fits but the first chunk would start below i64::MIN
        assert!(matches!(
            at_min.prepend(&[6], 0, 2),
            Err(GridError::Overflow { axis: 0, .. })
        ));
        assert!(matches!(
            RegularBoundedConfig::from_regular(&RegularConfig::new(regular.chunk_shape_nz()))
                .prepend(&[u64::MAX - 1], 0, 2),
            Err(GridError::Overflow { .. })
        ));
        let other = def(r#"{"name":"rectilinear","configuration":{}}"#);
        let err = prepend(&other, &[6], 0, 1).unwrap_err();
        assert!(matches!(err, GridError::RectilinearPrepend));
        assert!(zarr_testkit::report(&err).contains("would need a lower bound"));
        let other = def(r#"{"name":"zarrs.regular_bounded","configuration":{}}"#);
        let err = prepend(&other, &[6], 0, 1).unwrap_err();
        assert!(matches!(err, GridError::UnsupportedGrid { .. }));
        let flagged =
            def(r#"{"name":"regular","configuration":{"chunk_shape":[4]},"must_understand":true}"#);
        assert!(prepend(&flagged, &[6], 0, 1).is_err());
    }

    trait ChunkShapeOf {
        fn chunk_shape_nz(&self) -> Vec<NonZeroU64>;
    }

    impl ChunkShapeOf for ExtensionDef {
        fn chunk_shape_nz(&self) -> Vec<NonZeroU64> {
            let c: RegularConfig = self.parse_configuration(ExtensionPoint::ChunkGrid).unwrap();
            c.chunk_shape
        }
    }

    #[test]
    fn malformed_configurations_are_refused() {
        let cases = [
            (
                r#"{"chunk_shape":[4,4],"origin":[0],"lower_bound":[0,0]}"#,
                "origin has 1 dimensions but the array has 2",
            ),
            (
                r#"{"chunk_shape":[4,4],"origin":[0,0],"lower_bound":[0,0,0]}"#,
                "lower_bound has 3 dimensions",
            ),
            (
                r#"{"chunk_shape":[4],"origin":[0,0],"lower_bound":[0,0]}"#,
                "chunk_shape has 1 dimensions",
            ),
            (
                r#"{"chunk_shape":[4,0],"origin":[0,0],"lower_bound":[0,0]}"#,
                "chunk_shape[1] must be a positive integer",
            ),
            (
                r#"{"chunk_shape":[4,4],"origin":[0,0.5],"lower_bound":[0,0]}"#,
                "invalid type: floating point",
            ),
            (
                r#"{"chunk_shape":[4,4],"origin":[0,0],"lower_bound":[0,"1"]}"#,
                "invalid type: string",
            ),
            (
                r#"{"chunk_shape":[4,4],"origin":[0,0],"lower_bound":[0,9223372036854775808]}"#,
                "expected i64",
            ),
            (
                r#"{"chunk_shape":[4,4],"origin":[0,0]}"#,
                "missing field `lower_bound`",
            ),
            (
                r#"{"chunk_shape":[4,4],"lower_bound":[0,0]}"#,
                "missing field `origin`",
            ),
            (
                r#"{"chunk_shape":[4,4],"origin":[0,0],"lower_bound":[0,0],"shift":[0,0]}"#,
                "unknown field `shift`",
            ),
            (
                r#"{"chunk_shape":[4,4],"origin":[0,0],"lower_bound":[9223372036854775806,0]}"#,
                "lower_bound + shape overflows i64 on axis 0",
            ),
            (
                r#"{"chunk_shape":[4,4],"origin":[0,9223372036854775807],"lower_bound":[0,-5]}"#,
                "lower_bound - origin overflows i64 on axis 1",
            ),
            (
                r#"{"chunk_shape":[4,3],"origin":[0,0],"lower_bound":[0,-9223372036854775808]}"#,
                "origin + first grid index * chunk size overflows i64 on axis 1",
            ),
        ];
        for (json, reason) in cases {
            let err = zarr_testkit::report(&bounded(json, &[4, 4]).unwrap_err());
            assert!(err.contains(reason), "{json}: {err}");
        }
    }
}
