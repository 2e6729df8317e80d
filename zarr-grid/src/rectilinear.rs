//! The `rectilinear` chunk grid of zarr-extensions
//! (<https://github.com/zarr-developers/zarr-extensions/tree/main/chunk-grids/rectilinear>):
//! chunks whose edge lengths vary along each axis, such as one chunk per month.
//!
//! Name: `rectilinear`, behind the cargo feature `rectilinear` (on by default). The
//! configuration is `{"kind": "inline", "chunk_shapes": [...]}` with one entry per axis:
//!
//! - an integer `m`: a regular axis of edge `m`, repeated as far as the array reaches;
//! - a list whose items are edge lengths (integers) or run-length pairs `[size, count]`
//!   (`count` chunks of `size`). The listed edges must sum to at least the axis length; edges
//!   wholly past the end ("overflow chunks", allowed by the spec) are kept in the metadata
//!   but hold no data until the array grows over them.
//!
//! Chunk `g` of an axis starts at the sum of the edges before it; its buffer has its full
//! edge length (a last chunk reaching past the end included), so a buffer never starts at an
//! offset. Runs stay compressed: a `[1, 1099511627776]` entry is one run, never a list of
//! 2^40 edges, and finding the chunk of a position is a binary search over the runs' start
//! positions.
//!
//! Growing the array (resize, append) past the declared edges of a listed axis repeats its
//! last edge length: the last run's count grows (a single last edge `s` becomes `[s, k]`), so
//! the metadata keeps its length. Shrinking keeps every declared edge, so growing again
//! gives the same chunks and keys. Prepending is refused
//! ([`GridError::RectilinearPrepend`]): chunks are numbered from position 0, so chunks in
//! front would rename every stored chunk of the axis; it would need a lower bound in the
//! grid, as `regular_bounded` has.
//!
//! ```
//! use zarr_grid::rectilinear::{RectilinearChunkGrid, RectilinearConfig};
//! use zarr_grid::ChunkGrid;
//! use zarr_meta::{ExtensionDef, ExtensionPoint};
//!
//! // the example of the spec: an array of shape [6, 6, 6, 6, 6]
//! let def: ExtensionDef = serde_json::from_str(r#"{"name": "rectilinear", "configuration": {
//!     "kind": "inline",
//!     "chunk_shapes": [4, [1, 2, 3], [[4, 2]], [[1, 3], 3], [4, 4, 4]]}}"#).unwrap();
//! let config: RectilinearConfig = def.parse_configuration(ExtensionPoint::ChunkGrid).unwrap();
//! let grid = RectilinearChunkGrid::new(config, &[6; 5]).unwrap();
//! // [4, 4, 4] overflows: its third chunk lies past the end and is not one of the array's
//! assert_eq!(grid.grid_range(), vec![0..2, 0..3, 0..2, 0..4, 0..2]);
//! assert_eq!(grid.chunk_of(&[5, 5, 5, 5, 5]).unwrap(),
//!            (vec![1, 2, 1, 3, 1], vec![1, 2, 1, 2, 1]));
//! assert_eq!(grid.chunk_buffer_shape(&[1, 2, 0, 3, 1]), Some(vec![4, 3, 4, 3, 4]));
//! assert_eq!(grid.chunk_shape(), None); // chunks differ: no one chunk shape
//! assert_eq!(grid.to_def(), def);
//!
//! // the edges must cover the shape
//! let short: ExtensionDef = serde_json::from_str(r#"{"name": "rectilinear",
//!     "configuration": {"kind": "inline", "chunk_shapes": [[2, 3]]}}"#).unwrap();
//! let err = RectilinearChunkGrid::from_def(&short, &[6]).unwrap_err();
//! assert_eq!(err.to_string(), "the chunk edges of axis 0 sum to 5, short of its length 6");
//! ```

use std::num::NonZeroU64;
use std::ops::Range;

use serde::de::{self, Deserializer};
use serde::ser::{SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use zarr_meta::{ExtensionDef, ExtensionPoint};

use crate::error::GridError;
use crate::geometry::{GeometryError, Region};
use crate::grid::{check_rank, ChunkGrid, ChunkPart};

/// The extension name.
pub const NAME: &str = "rectilinear";

/// The `kind` of a configuration: how `chunk_shapes` is given. The spec defines one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// The edge lengths are listed in the metadata itself.
    #[default]
    Inline,
}

/// One item of a listed axis: an edge length, or a run of equal edges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Edge {
    /// One chunk of this edge length (JSON: an integer).
    Single(NonZeroU64),
    /// `count` chunks of edge length `size` (JSON: `[size, count]`).
    Run {
        /// The edge length.
        size: NonZeroU64,
        /// How many chunks have it.
        count: NonZeroU64,
    },
}

impl Edge {
    /// The edge length and the number of chunks.
    pub fn size_count(self) -> (NonZeroU64, NonZeroU64) {
        match self {
            Edge::Single(size) => (size, NonZeroU64::MIN),
            Edge::Run { size, count } => (size, count),
        }
    }
}

/// The chunk edges of one axis.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum AxisEdges {
    /// A regular axis (JSON: an integer): every chunk has this edge, as far as the array
    /// reaches.
    Regular(NonZeroU64),
    /// Listed edges (JSON: a list of integers and `[size, count]` pairs), in order.
    Listed(Vec<Edge>),
}

impl AxisEdges {
    /// The listed edges expanded one per chunk, at most `limit` of them (`None` for a
    /// regular axis): for tests and display. Geometry never expands runs.
    pub fn expanded(&self, limit: usize) -> Option<Vec<u64>> {
        let AxisEdges::Listed(items) = self else {
            return None;
        };
        let mut out = Vec::new();
        for item in items {
            let (size, count) = item.size_count();
            let room = limit - out.len();
            let take = usize::try_from(count.get()).unwrap_or(usize::MAX).min(room);
            out.extend(std::iter::repeat_n(size.get(), take));
            if out.len() == limit {
                break;
            }
        }
        Some(out)
    }
}

/// The configuration of a `rectilinear` grid: `{"kind": "inline", "chunk_shapes": [...]}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RectilinearConfig {
    /// How the edges are given (`inline`, the only kind of the spec).
    pub kind: Kind,
    /// The chunk edges, one entry per axis.
    pub chunk_shapes: Vec<AxisEdges>,
}

impl RectilinearConfig {
    /// An inline configuration from its axes.
    pub fn new(chunk_shapes: Vec<AxisEdges>) -> Self {
        RectilinearConfig {
            kind: Kind::Inline,
            chunk_shapes,
        }
    }

    /// The grid definition for the metadata (keys in the order `kind`, `chunk_shapes`, as
    /// zarrs writes them).
    pub fn to_def(&self) -> ExtensionDef {
        let mut map = Map::new();
        if let Value::Object(m) = serde_json::to_value(self).unwrap_or(Value::Null) {
            map = m;
        }
        ExtensionDef::with_configuration(NAME, map)
    }

    /// The first edge length of each axis (1 for a listed axis with no edge).
    pub fn first_edges(&self) -> Vec<u64> {
        self.chunk_shapes
            .iter()
            .map(|e| match e {
                AxisEdges::Regular(c) => c.get(),
                AxisEdges::Listed(items) => items.first().map_or(1, |i| i.size_count().0.get()),
            })
            .collect()
    }

    /// The distinct edge lengths of each axis, sorted (as many as the metadata has items at
    /// most: runs are not expanded).
    pub fn distinct_edges(&self) -> Vec<Vec<u64>> {
        self.chunk_shapes
            .iter()
            .map(|e| {
                let mut sizes: Vec<u64> = match e {
                    AxisEdges::Regular(c) => vec![c.get()],
                    AxisEdges::Listed(items) => {
                        items.iter().map(|i| i.size_count().0.get()).collect()
                    }
                };
                sizes.sort_unstable();
                sizes.dedup();
                sizes
            })
            .collect()
    }

    /// The configuration grown to cover `shape`: a listed axis whose edges fall short gets
    /// chunks of its last edge length (the last run's count grows), as few as cover it.
    ///
    /// # Errors
    /// [`GridError::DimensionMismatch`], [`GridError::EmptyRectilinearAxis`] for a listed
    /// axis with no edge to repeat, [`GridError::Overflow`] when the count of chunks does not
    /// fit in u64.
    pub fn grown_to(&self, shape: &[u64]) -> Result<RectilinearConfig, GridError> {
        check_rank("chunk_shapes", shape.len(), self.chunk_shapes.len())?;
        let mut out = self.clone();
        for (axis, (edges, &n)) in out.chunk_shapes.iter_mut().zip(shape).enumerate() {
            let AxisEdges::Listed(items) = edges else {
                continue;
            };
            let sum = listed_sum(items);
            if sum >= u128::from(n) {
                continue;
            }
            let Some(last) = items.last_mut() else {
                return Err(GridError::EmptyRectilinearAxis { axis, len: n });
            };
            let (size, count) = last.size_count();
            let more = (u128::from(n) - sum).div_ceil(u128::from(size.get()));
            let count = u64::try_from(u128::from(count.get()) + more)
                .ok()
                .and_then(NonZeroU64::new)
                .ok_or(GridError::Overflow {
                    axis,
                    quantity: "the count of chunks of the last run",
                })?;
            *last = Edge::Run { size, count };
        }
        Ok(out)
    }
}

/// The sum of listed edges (u128: at most 2^64 items of at most 2^64 - 1 each, no overflow
/// for any list that fits in memory; saturating all the same).
fn listed_sum(items: &[Edge]) -> u128 {
    items.iter().fold(0u128, |acc, e| {
        let (size, count) = e.size_count();
        acc.saturating_add(u128::from(size.get()) * u128::from(count.get()))
    })
}

impl Serialize for Edge {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Edge::Single(size) => s.serialize_u64(size.get()),
            Edge::Run { size, count } => {
                let mut seq = s.serialize_seq(Some(2))?;
                seq.serialize_element(&size.get())?;
                seq.serialize_element(&count.get())?;
                seq.end()
            }
        }
    }
}

impl Serialize for AxisEdges {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            AxisEdges::Regular(size) => s.serialize_u64(size.get()),
            AxisEdges::Listed(items) => items.serialize(s),
        }
    }
}

fn positive(v: &Value, what: &str) -> Result<NonZeroU64, String> {
    v.as_u64()
        .and_then(NonZeroU64::new)
        .ok_or_else(|| format!("{what} must be a positive integer, got {v}"))
}

fn edge_from_value(v: &Value) -> Result<Edge, String> {
    match v {
        Value::Array(pair) => match pair.as_slice() {
            [size, count] => Ok(Edge::Run {
                size: positive(size, "a run's edge length")?,
                count: positive(count, "a run's count")?,
            }),
            _ => Err(format!(
                "a run-length item must be [size, count], got {} items",
                pair.len()
            )),
        },
        other => Ok(Edge::Single(positive(other, "an edge length")?)),
    }
}

impl<'de> Deserialize<'de> for AxisEdges {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        match &v {
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    edge_from_value(item).map_err(|e| de::Error::custom(format!("item {i}: {e}")))
                })
                .collect::<Result<Vec<_>, _>>()
                .map(AxisEdges::Listed),
            other => positive(other, "a regular axis' edge length")
                .map(AxisEdges::Regular)
                .map_err(de::Error::custom),
        }
    }
}

impl<'de> Deserialize<'de> for Edge {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        edge_from_value(&v).map_err(de::Error::custom)
    }
}

/// A run of equal chunks of one axis, truncated to the chunks that meet the array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Run {
    /// The grid index of its first chunk.
    first: u64,
    /// The position where its first chunk starts.
    start: u64,
    /// The edge length.
    size: NonZeroU64,
    /// How many chunks of it meet the array (at least 1).
    count: u64,
}

/// One validated axis: the runs of chunks that meet positions `0..n`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Axis {
    n: u64,
    runs: Vec<Run>,
    /// The number of chunks that meet the array.
    chunks: u64,
}

impl Axis {
    fn new(axis: usize, edges: &AxisEdges, n: u64) -> Result<Axis, GridError> {
        if n > i64::MAX as u64 {
            return Err(GridError::ShapeTooLarge { axis, len: n });
        }
        let mut runs = Vec::new();
        if n == 0 {
            return Ok(Axis { n, runs, chunks: 0 });
        }
        match edges {
            AxisEdges::Regular(size) => {
                let count = n.div_ceil(size.get());
                runs.push(Run {
                    first: 0,
                    start: 0,
                    size: *size,
                    count,
                });
            }
            AxisEdges::Listed(items) => {
                let (mut first, mut start) = (0u64, 0u64);
                for item in items {
                    let (size, count) = item.size_count();
                    // chunks of this run needed to reach n from `start` (< n)
                    let need = (n - start).div_ceil(size.get());
                    let take = need.min(count.get());
                    runs.push(Run {
                        first,
                        start,
                        size,
                        count: take,
                    });
                    // take * size <= n - start + size - 1 < 2^64 when take = need; when
                    // take = count < need, take * size < n - start: no overflow either way
                    let reach = u128::from(start) + u128::from(take) * u128::from(size.get());
                    first += take; // first <= n <= i64::MAX
                    if reach >= u128::from(n) {
                        return Ok(Axis {
                            n,
                            runs,
                            chunks: first,
                        });
                    }
                    start = reach as u64; // reach < n
                }
                return Err(GridError::EdgesTooShort {
                    axis,
                    sum: listed_sum(items).try_into().unwrap_or(u64::MAX),
                    len: n,
                });
            }
        }
        Ok(Axis {
            n,
            chunks: runs[0].count,
            runs,
        })
    }

    /// The run holding chunk `g < chunks`.
    fn run_of_chunk(&self, g: u64) -> &Run {
        let i = self.runs.partition_point(|r| r.first <= g) - 1;
        &self.runs[i]
    }

    /// The start position and edge length of chunk `g < chunks`.
    fn chunk(&self, g: u64) -> (u64, u64) {
        let r = self.run_of_chunk(g);
        // a chunk that meets the array starts before n
        (r.start + (g - r.first) * r.size.get(), r.size.get())
    }

    /// The chunk of position `p < n` and the offset of `p` in it.
    fn locate(&self, p: u64) -> (u64, u64) {
        let i = self.runs.partition_point(|r| r.start <= p) - 1;
        let r = &self.runs[i];
        let off = p - r.start;
        let size = r.size.get();
        (r.first + off / size, off % size)
    }

    /// The part of chunk `g` inside positions `[rs, re)`: (start in buffer, start in array,
    /// length).
    fn part(&self, g: u64, rs: u64, re: u64) -> (u64, u64, u64) {
        let (cs, size) = self.chunk(g);
        let lo = cs.max(rs);
        let hi = (u128::from(cs) + u128::from(size)).min(u128::from(re)) as u64;
        (lo - cs, lo, hi.saturating_sub(lo))
    }
}

/// A `rectilinear` chunk grid bound to an array shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RectilinearChunkGrid {
    config: RectilinearConfig,
    shape: Vec<u64>,
    axes: Vec<Axis>,
    /// The one chunk shape when every axis is regular (integer entries).
    regular: Option<Vec<NonZeroU64>>,
}

impl RectilinearChunkGrid {
    /// The grid of `config` for an array of `shape`.
    ///
    /// # Errors
    /// [`GridError::DimensionMismatch`] if `chunk_shapes` has another rank than `shape`,
    /// [`GridError::EdgesTooShort`] when the listed edges of an axis do not cover it,
    /// [`GridError::ShapeTooLarge`] for a shape beyond `i64::MAX`.
    pub fn new(config: RectilinearConfig, shape: &[u64]) -> Result<Self, GridError> {
        check_rank("chunk_shapes", shape.len(), config.chunk_shapes.len())?;
        let axes = config
            .chunk_shapes
            .iter()
            .zip(shape)
            .enumerate()
            .map(|(d, (e, &n))| Axis::new(d, e, n))
            .collect::<Result<Vec<_>, _>>()?;
        let regular = config
            .chunk_shapes
            .iter()
            .map(|e| match e {
                AxisEdges::Regular(c) => Some(*c),
                AxisEdges::Listed(_) => None,
            })
            .collect();
        Ok(RectilinearChunkGrid {
            config,
            shape: shape.to_vec(),
            axes,
            regular,
        })
    }

    /// Parses a `rectilinear` definition and binds it to `shape`.
    ///
    /// # Errors
    /// An invalid configuration or one that does not fit `shape`.
    pub fn from_def(def: &ExtensionDef, shape: &[u64]) -> Result<Self, GridError> {
        let config: RectilinearConfig = def.parse_configuration(ExtensionPoint::ChunkGrid)?;
        Self::new(config, shape)
    }

    /// The configuration.
    pub fn config(&self) -> &RectilinearConfig {
        &self.config
    }

    /// The start position and edge length of chunk `g` on `axis`, `None` outside the grid.
    pub fn chunk_edge(&self, axis: usize, g: i64) -> Option<(u64, u64)> {
        let a = self.axes.get(axis)?;
        let g = u64::try_from(g).ok().filter(|&g| g < a.chunks)?;
        Some(a.chunk(g))
    }
}

fn region_error(e: GeometryError) -> GridError {
    match e {
        GeometryError::OutOfBounds {
            axis,
            start,
            end,
            len,
        } => GridError::RegionOutOfBounds {
            axis,
            start,
            end,
            len,
        },
        GeometryError::DimensionMismatch { expected, got, .. } => GridError::DimensionMismatch {
            what: "region",
            expected,
            got,
        },
        other => GridError::Geometry(other),
    }
}

impl ChunkGrid for RectilinearChunkGrid {
    fn name(&self) -> &str {
        NAME
    }

    fn shape(&self) -> &[u64] {
        &self.shape
    }

    fn chunk_shape(&self) -> Option<&[NonZeroU64]> {
        self.regular.as_deref()
    }

    fn chunk_buffer_shape(&self, chunk: &[i64]) -> Option<Vec<u64>> {
        if chunk.len() != self.axes.len() {
            return None;
        }
        (0..chunk.len())
            .map(|d| self.chunk_edge(d, chunk[d]).map(|(_, size)| size))
            .collect()
    }

    fn domain(&self) -> Vec<(i64, i64)> {
        // n <= i64::MAX, checked in Axis::new
        self.shape.iter().map(|&n| (0, n as i64)).collect()
    }

    fn grid_range(&self) -> Vec<Range<i64>> {
        // chunks <= n <= i64::MAX
        self.axes.iter().map(|a| 0..a.chunks as i64).collect()
    }

    fn chunk_of(&self, position: &[u64]) -> Result<(Vec<i64>, Vec<u64>), GridError> {
        // chunk indices < chunks <= n <= i64::MAX
        crate::grid::chunk_of_axes(
            &self.axes,
            position,
            |a| a.n,
            |a, p| {
                let (g, off) = a.locate(p);
                (g as i64, off)
            },
        )
    }

    fn chunk_part(&self, chunk: &[i64]) -> Option<ChunkPart> {
        if chunk.len() != self.axes.len() {
            return None;
        }
        let rank = chunk.len();
        let mut in_chunk = Region::whole(&vec![0; rank]);
        let mut in_region = Region::whole(&vec![0; rank]);
        for (d, (a, &g)) in self.axes.iter().zip(chunk).enumerate() {
            let g = u64::try_from(g).ok().filter(|&g| g < a.chunks)?;
            let (buf, pos, len) = a.part(g, 0, a.n);
            in_chunk.start[d] = buf;
            in_chunk.shape[d] = len;
            in_region.start[d] = pos;
            in_region.shape[d] = len;
        }
        Some(ChunkPart {
            chunk: chunk.to_vec(),
            in_chunk,
            in_region,
        })
    }

    fn buffer_offset(&self, chunk: &[i64]) -> Vec<u64> {
        vec![0; chunk.len()]
    }

    fn chunks_in_region(
        &self,
        region: &Region,
    ) -> Result<Box<dyn Iterator<Item = ChunkPart> + Send + '_>, GridError> {
        region.check_inside(&self.shape).map_err(region_error)?;
        let mut bounds = Vec::with_capacity(self.axes.len());
        for (d, a) in self.axes.iter().enumerate() {
            let rs = region.start[d];
            let re = rs + region.shape[d];
            if re == rs {
                return Ok(Box::new(std::iter::empty()));
            }
            bounds.push((rs, re, a.locate(rs).0, a.locate(re - 1).0));
        }
        let next = Some(bounds.iter().map(|b| b.2).collect());
        Ok(Box::new(RectilinearChunks {
            grid: self,
            bounds,
            next,
        }))
    }

    fn to_def(&self) -> ExtensionDef {
        self.config.to_def()
    }

    fn with_shape(&self, shape: &[u64]) -> Result<Box<dyn ChunkGrid>, GridError> {
        Ok(Box::new(Self::new(self.config.grown_to(shape)?, shape)?))
    }

    fn clone_box(&self) -> Box<dyn ChunkGrid> {
        Box::new(self.clone())
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// The chunks of a rectilinear grid that meet a region, in C order; each chunk's place is
/// found by a binary search over its axis' runs.
struct RectilinearChunks<'a> {
    grid: &'a RectilinearChunkGrid,
    /// Per axis: region start, region end, first and last chunk.
    bounds: Vec<(u64, u64, u64, u64)>,
    next: Option<Vec<u64>>,
}

impl Iterator for RectilinearChunks<'_> {
    type Item = ChunkPart;

    fn next(&mut self) -> Option<ChunkPart> {
        let idx = self.next.take()?;
        let rank = idx.len();
        let mut succ = idx.clone();
        let mut d = rank;
        while d > 0 {
            d -= 1;
            if succ[d] < self.bounds[d].3 {
                succ[d] += 1;
                self.next = Some(succ);
                break;
            }
            succ[d] = self.bounds[d].2;
        }
        let mut in_chunk = Region::whole(&vec![0; rank]);
        let mut in_region = Region::whole(&vec![0; rank]);
        for (d, &(rs, re, _, _)) in self.bounds.iter().enumerate() {
            let (buf, pos, len) = self.grid.axes[d].part(idx[d], rs, re);
            in_chunk.start[d] = buf;
            in_chunk.shape[d] = len;
            in_region.start[d] = pos - rs;
            in_region.shape[d] = len;
        }
        Some(ChunkPart {
            // grid indices < n <= i64::MAX
            chunk: idx.iter().map(|&g| g as i64).collect(),
            in_chunk,
            in_region,
        })
    }
}

/// The registry factory of `rectilinear`.
pub(crate) fn factory(def: &ExtensionDef, shape: &[u64]) -> Result<Box<dyn ChunkGrid>, GridError> {
    Ok(Box::new(RectilinearChunkGrid::from_def(def, shape)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(json: &str) -> ExtensionDef {
        serde_json::from_str(json).unwrap()
    }

    fn grid(shapes: &str, shape: &[u64]) -> Result<RectilinearChunkGrid, GridError> {
        RectilinearChunkGrid::from_def(
            &def(&format!(
                r#"{{"name":"rectilinear","configuration":{{"kind":"inline","chunk_shapes":{shapes}}}}}"#
            )),
            shape,
        )
    }

    #[test]
    fn config_round_trips_in_order() {
        let text = r#"{"name":"rectilinear","configuration":{"kind":"inline","chunk_shapes":[4,[1,2,3],[[4,2]],[[1,3],3],[4,4,4]]}}"#;
        let g = RectilinearChunkGrid::from_def(&def(text), &[6; 5]).unwrap();
        assert_eq!(serde_json::to_string(&g.to_def()).unwrap(), text);
        // keys in the other order parse too
        let swapped =
            r#"{"name":"rectilinear","configuration":{"chunk_shapes":[[2,3]],"kind":"inline"}}"#;
        let g = RectilinearChunkGrid::from_def(&def(swapped), &[5]).unwrap();
        assert_eq!(g.grid_range(), vec![0..2]);
    }

    #[test]
    fn spec_indexing_example() {
        // the diagram of the spec: edges [[16, 10], [24, 14]]
        let g = grid("[[16,10],[24,14]]", &[26, 38]).unwrap();
        assert_eq!(g.chunk_of(&[20, 15]).unwrap(), (vec![1, 0], vec![4, 15]));
        assert_eq!(g.chunk_buffer_shape(&[0, 1]), Some(vec![16, 14]));
        assert_eq!(g.chunk_buffer_shape(&[2, 0]), None);
    }

    #[test]
    fn growth_repeats_the_last_edge_compactly() {
        let g = grid("[[5,[3,2]],7]", &[11, 7]).unwrap();
        let grown = g.config().grown_to(&[20, 30]).unwrap();
        let text = serde_json::to_string(&grown.chunk_shapes).unwrap();
        assert_eq!(text, "[[5,[3,5]],7]");
        let g = grid("[[5,3]]", &[8]).unwrap();
        let grown = g.config().grown_to(&[9]).unwrap();
        assert_eq!(
            serde_json::to_string(&grown.chunk_shapes).unwrap(),
            "[[5,[3,2]]]"
        );
        // the edges cover already: unchanged (overflow chunks stay)
        let g = grid("[[5,3,3,3]]", &[6]).unwrap();
        assert_eq!(g.config().grown_to(&[10]).unwrap(), *g.config());
        let empty = grid("[[]]", &[0]).unwrap();
        assert!(matches!(
            empty.config().grown_to(&[1]),
            Err(GridError::EmptyRectilinearAxis { axis: 0, len: 1 })
        ));
        let huge = grid("[[[1,18446744073709551615]]]", &[3]).unwrap();
        assert!(huge.config().grown_to(&[i64::MAX as u64]).is_ok());
    }

    #[test]
    fn regular_axes_have_a_chunk_shape() {
        let g = grid("[4,3]", &[10, 7]).unwrap();
        assert_eq!(g.chunk_shape_u64(), Some(vec![4, 3]));
        assert_eq!(g.grid_range(), vec![0..3, 0..3]);
        assert_eq!(g.chunk_buffer_shape(&[2, 2]), Some(vec![4, 3]));
    }
}
