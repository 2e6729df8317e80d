//! Selections with NumPy semantics, and their normalisation into per-axis index sets.
//!
//! - [`Selection::Basic`]: integers, slices with positive steps, full axes and one ellipsis;
//! - [`Selection::Orthogonal`]: per axis an integer, a slice, an integer array or a boolean
//!   mask (the outer product of the per-axis selections, like zarr-python's `oindex`);
//! - [`Selection::Points`]: coordinate (point) selection, one output element per point
//!   (zarr-python's `vindex` with integer arrays);
//! - [`Selection::Coordinates`]: one integer array per axis, broadcast together; the output
//!   has their broadcast shape (zarr-python's `vindex` with N-d index arrays);
//! - [`Selection::Mask`]: a boolean mask of the array's shape (zarr-python's `vindex` with a
//!   mask);
//! - [`Selection::Blocks`]: whole chunks by chunk index per axis (zarr-python's `blocks`).
//!
//! Basic, orthogonal and block selections take at most one ellipsis and may leave out
//! trailing axes (they are then full). Negative integers count from the end of the axis, as in
//! NumPy. Indices are positions (zero-based), never domain coordinates. The normalisation here
//! is the only one: zarr-py hands Python keys to it unchanged.

use std::fmt;

use ndarray::{ArrayD, Dimension, IxDyn};

use zarr_grid::ChunkGrid;

use crate::error::{try_collect, ArrayError, SelectionError};

/// A slice `start:stop:step` with NumPy semantics (`step` > 0; bounds clamp; negatives count
/// from the end).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Slice {
    /// First position (default 0).
    pub start: Option<i64>,
    /// One past the last position (default the axis length).
    pub stop: Option<i64>,
    /// The step (default 1; must be positive).
    pub step: Option<i64>,
}

impl Slice {
    /// `start..stop` with step 1.
    pub fn new(start: i64, stop: i64) -> Self {
        Slice {
            start: Some(start),
            stop: Some(stop),
            step: None,
        }
    }

    /// `start..stop` with a step.
    pub fn with_step(start: i64, stop: i64, step: i64) -> Self {
        Slice {
            start: Some(start),
            stop: Some(stop),
            step: Some(step),
        }
    }

    /// The whole axis.
    pub fn full() -> Self {
        Slice::default()
    }

    /// (start, count, step) on an axis of length `len`.
    fn resolve(&self, len: u64, axis: usize) -> Result<(u64, u64, u64), ArrayError> {
        let step = self.step.unwrap_or(1);
        if step <= 0 {
            return Err(SelectionError::Step { axis, step }.into());
        }
        let len_i = i128::from(len);
        let clamp = |v: Option<i64>, default: i128| -> i128 {
            match v {
                None => default,
                Some(v) => {
                    let v = i128::from(v);
                    let v = if v < 0 { v + len_i } else { v };
                    v.clamp(0, len_i)
                }
            }
        };
        let start = clamp(self.start, 0);
        let stop = clamp(self.stop, len_i);
        let step = i128::from(step);
        let count = if stop > start {
            (stop - start + step - 1) / step
        } else {
            0
        };
        // all three fit in u64: 0 <= start, count <= len and step > 0
        Ok((start as u64, count as u64, step as u64))
    }
}

impl From<std::ops::Range<i64>> for Slice {
    fn from(r: std::ops::Range<i64>) -> Self {
        Slice::new(r.start, r.end)
    }
}

/// One item of a basic selection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BasicItem {
    /// One position (the axis is dropped from the output).
    Index(i64),
    /// A slice.
    Slice(Slice),
    /// As many full axes as needed (at most one per selection).
    Ellipsis,
}

/// One axis of an orthogonal selection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AxisSelection {
    /// One position (the axis is dropped from the output).
    Index(i64),
    /// A slice.
    Slice(Slice),
    /// Positions in any order, repeats allowed.
    Indices(Vec<i64>),
    /// A boolean mask as long as the axis.
    Mask(Vec<bool>),
    /// As many full axes as needed (at most one per selection).
    Ellipsis,
}

/// One axis of a block selection: chunk indices counted from the array's first chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlockSelection {
    /// One chunk (the axis is kept, with the chunk's length).
    Index(i64),
    /// A range of chunks with step 1. Its first chunk must exist (as in zarr-python's
    /// `blocks`: a start past the last chunk or before the first is refused, a negative start
    /// counting from the end once); the end clamps like a slice's.
    Range(Option<i64>, Option<i64>),
    /// As many full axes as needed (at most one per selection).
    Ellipsis,
}

/// What to read or write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// Basic indexing (missing trailing axes are full).
    Basic(Vec<BasicItem>),
    /// Orthogonal (outer) indexing, one entry per axis (missing trailing axes are full).
    Orthogonal(Vec<AxisSelection>),
    /// Coordinate (point) selection: `points[i]` is one position tuple.
    Points(Vec<Vec<i64>>),
    /// Coordinate selection by one integer array per axis: the arrays broadcast together (as
    /// NumPy's), each element of the broadcast shape is one point, and the output has that
    /// shape. Positions are checked before the arrays are broadcast, as zarr-python checks
    /// them.
    Coordinates(Vec<ArrayD<i64>>),
    /// The positions where a mask of the array's shape is true, in C order (a 1-d output).
    Mask(ArrayD<bool>),
    /// Whole chunks, one entry per axis (missing trailing axes are full). An array with an
    /// axis of length 0 has no block to select, as in zarr-python.
    Blocks(Vec<BlockSelection>),
}

impl Selection {
    /// Every element.
    pub fn all() -> Self {
        Selection::Basic(Vec::new())
    }
}

impl fmt::Display for Selection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:?}")
    }
}

/// One axis, normalised: the positions it selects, in output order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AxisIndex {
    /// `start, start+step, ...` (`count` of them); kept in the output.
    Range { start: u64, count: u64, step: u64 },
    /// Explicit positions; kept in the output.
    List(Vec<u64>),
    /// One position; dropped from the output.
    Single(u64),
}

impl AxisIndex {
    pub(crate) fn len(&self) -> u64 {
        match self {
            AxisIndex::Range { count, .. } => *count,
            AxisIndex::List(v) => v.len() as u64,
            AxisIndex::Single(_) => 1,
        }
    }

    pub(crate) fn get(&self, i: u64) -> u64 {
        match self {
            AxisIndex::Range { start, step, .. } => start + i * step,
            AxisIndex::List(v) => v[i as usize],
            AxisIndex::Single(p) => *p,
        }
    }

    /// The contiguous range this axis selects, if it is one.
    pub(crate) fn as_contiguous(&self) -> Option<(u64, u64)> {
        match self {
            AxisIndex::Range { start, count, step } if *step == 1 || *count <= 1 => {
                Some((*start, *count))
            }
            AxisIndex::Single(p) => Some((*p, 1)),
            _ => None,
        }
    }
}

/// A normalised selection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Indexer {
    /// The outer product of per-axis index sets.
    Orthogonal(Vec<AxisIndex>),
    /// Points (each a full position tuple), in output (C) order, and the output shape.
    Points(Vec<Vec<u64>>, Vec<u64>),
}

impl Indexer {
    /// The shape of the data this selection reads or writes.
    pub(crate) fn output_shape(&self) -> Vec<u64> {
        match self {
            Indexer::Orthogonal(axes) => axes
                .iter()
                .filter(|a| !matches!(a, AxisIndex::Single(_)))
                .map(AxisIndex::len)
                .collect(),
            Indexer::Points(_, shape) => shape.clone(),
        }
    }
}

fn position(i: i64, len: u64, axis: usize) -> Result<u64, ArrayError> {
    let p = if i < 0 {
        i128::from(len) + i128::from(i)
    } else {
        i128::from(i)
    };
    if p < 0 || p >= i128::from(len) {
        return Err(ArrayError::OutOfBounds {
            axis,
            index: i,
            len,
        });
    }
    Ok(p as u64)
}

/// The chunks along each axis, for block selections: how many there are, and the positions
/// `(start, len)` of one of them (counted from the first). Asked only for the chunks a
/// selection names, so a block of an array of 2^40 chunks costs what one of 4 chunks does.
pub(crate) trait BlockSpans {
    /// The number of chunks along `axis`.
    fn count(&self, axis: usize) -> u64;
    /// The positions of chunk `i` (`i < count(axis)`) along `axis`.
    fn span(&self, axis: usize, i: u64) -> (u64, u64);
}

/// The chunks of a grid.
pub(crate) struct GridBlocks<'a>(pub(crate) &'a dyn ChunkGrid);

impl BlockSpans for GridBlocks<'_> {
    fn count(&self, axis: usize) -> u64 {
        self.0
            .grid_range()
            .get(axis)
            .map_or(0, |r| r.end.saturating_sub(r.start) as u64)
    }

    fn span(&self, axis: usize, i: u64) -> (u64, u64) {
        let ranges = self.0.grid_range();
        let mut chunk: Vec<i64> = ranges.iter().map(|r| r.start).collect();
        chunk[axis] = ranges[axis].start + i as i64;
        self.0
            .chunk_region(&chunk)
            .map_or((0, 0), |r| (r.start[axis], r.shape[axis]))
    }
}

/// Normalises a selection against an array shape; `blocks` gives the chunks along each axis,
/// for block selections.
pub(crate) fn normalize(
    sel: &Selection,
    shape: &[u64],
    blocks: &dyn BlockSpans,
) -> Result<Indexer, ArrayError> {
    let rank = shape.len();
    let too_many = |kind: &'static str, got: usize| -> ArrayError {
        SelectionError::Rank { kind, got, rank }.into()
    };
    match sel {
        Selection::Basic(items) => {
            let per_axis = expand(
                items,
                rank,
                |i| matches!(i, BasicItem::Ellipsis),
                "selection",
            )?;
            let mut axes = Vec::with_capacity(rank);
            for (d, item) in per_axis.into_iter().enumerate() {
                axes.push(match item {
                    None | Some(BasicItem::Ellipsis) => full_axis(shape[d]),
                    Some(BasicItem::Index(i)) => AxisIndex::Single(position(*i, shape[d], d)?),
                    Some(BasicItem::Slice(s)) => slice_axis(s, shape[d], d)?,
                });
            }
            Ok(Indexer::Orthogonal(axes))
        }
        Selection::Orthogonal(items) => {
            let per_axis = expand(
                items,
                rank,
                |i| matches!(i, AxisSelection::Ellipsis),
                "orthogonal selection",
            )?;
            let mut axes = Vec::with_capacity(rank);
            for (d, a) in per_axis.into_iter().enumerate() {
                axes.push(match a {
                    None | Some(AxisSelection::Ellipsis) => full_axis(shape[d]),
                    Some(AxisSelection::Index(i)) => AxisIndex::Single(position(*i, shape[d], d)?),
                    Some(AxisSelection::Slice(s)) => slice_axis(s, shape[d], d)?,
                    Some(AxisSelection::Indices(v)) => AxisIndex::List(
                        v.iter()
                            .map(|&i| position(i, shape[d], d))
                            .collect::<Result<_, _>>()?,
                    ),
                    Some(AxisSelection::Mask(m)) => {
                        if m.len() as u64 != shape[d] {
                            return Err(SelectionError::MaskLength {
                                axis: d,
                                got: m.len(),
                                len: shape[d],
                            }
                            .into());
                        }
                        AxisIndex::List(
                            m.iter()
                                .enumerate()
                                .filter(|(_, &b)| b)
                                .map(|(i, _)| i as u64)
                                .collect(),
                        )
                    }
                });
            }
            Ok(Indexer::Orthogonal(axes))
        }
        Selection::Points(points) => {
            let mut out = Vec::with_capacity(points.len());
            for p in points {
                if p.len() != rank {
                    return Err(too_many("point", p.len()));
                }
                out.push(
                    p.iter()
                        .enumerate()
                        .map(|(d, &i)| position(i, shape[d], d))
                        .collect::<Result<Vec<_>, _>>()?,
                );
            }
            let n = out.len() as u64;
            Ok(Indexer::Points(out, vec![n]))
        }
        Selection::Coordinates(arrays) => coordinates(arrays, shape),
        Selection::Mask(mask) => {
            if rank == 0 {
                return Err(SelectionError::NoAxes {
                    kind: "mask selection",
                }
                .into());
            }
            if mask.ndim() != rank || mask.shape().iter().zip(shape).any(|(&m, &n)| m as u64 != n) {
                return Err(SelectionError::MaskShape {
                    got: mask.shape().to_vec(),
                    shape: shape.to_vec(),
                }
                .into());
            }
            let points = try_collect(
                mask.indexed_iter()
                    .filter(|(_, &b)| b)
                    .map(|(ix, _)| ix.slice().iter().map(|&i| i as u64).collect()),
                "the points of a mask selection",
            )?;
            let n = points.len() as u64;
            Ok(Indexer::Points(points, vec![n]))
        }
        Selection::Blocks(items) => {
            let per_axis = expand(
                items,
                rank,
                |i| matches!(i, BlockSelection::Ellipsis),
                "block selection",
            )?;
            let mut axes = Vec::with_capacity(rank);
            for (d, item) in per_axis.into_iter().enumerate() {
                let n = blocks.count(d);
                // the first block selected must exist, as zarr-python's `blocks` requires
                // (so an axis without elements refuses every block selection)
                let block = |i: i64| {
                    position(i, n, d).map_err(|_| SelectionError::BlockOutOfBounds {
                        axis: d,
                        index: i,
                        blocks: n,
                    })
                };
                let (first, count) = match item {
                    None | Some(BlockSelection::Ellipsis) => (block(0)?, n),
                    Some(BlockSelection::Index(i)) => (block(*i)?, 1),
                    Some(BlockSelection::Range(a, b)) => {
                        let first = block(a.unwrap_or(0))?;
                        // the end clamps, as a slice's does
                        let (_, end, _) = Slice {
                            start: None,
                            stop: *b,
                            step: None,
                        }
                        .resolve(n, d)?;
                        (first, end.saturating_sub(first))
                    }
                };
                if count == 0 {
                    axes.push(AxisIndex::Range {
                        start: 0,
                        count: 0,
                        step: 1,
                    });
                    continue;
                }
                let (start, _) = blocks.span(d, first);
                let (last_start, last_len) = blocks.span(d, first + count - 1);
                axes.push(AxisIndex::Range {
                    start,
                    count: last_start + last_len - start,
                    step: 1,
                });
            }
            Ok(Indexer::Orthogonal(axes))
        }
    }
}

/// Per axis the item of `items` that selects along it, or None for a full axis: at most one
/// ellipsis (`is_ellipsis`) stands for as many full axes as the other items leave, and
/// missing trailing axes are full.
fn expand<'a, T>(
    items: &'a [T],
    rank: usize,
    is_ellipsis: impl Fn(&T) -> bool,
    kind: &'static str,
) -> Result<Vec<Option<&'a T>>, ArrayError> {
    let ellipses = items.iter().filter(|i| is_ellipsis(i)).count();
    if ellipses > 1 {
        return Err(SelectionError::Ellipses { count: ellipses }.into());
    }
    let explicit = items.len() - ellipses;
    if explicit > rank {
        return Err(SelectionError::Rank {
            kind,
            got: explicit,
            rank,
        }
        .into());
    }
    let mut out = Vec::with_capacity(rank);
    for item in items {
        if is_ellipsis(item) {
            out.extend((0..rank - explicit).map(|_| None));
        } else {
            out.push(Some(item));
        }
    }
    out.resize(rank, None);
    Ok(out)
}

fn slice_axis(s: &Slice, len: u64, axis: usize) -> Result<AxisIndex, ArrayError> {
    let (start, count, step) = s.resolve(len, axis)?;
    Ok(AxisIndex::Range { start, count, step })
}

/// The broadcast shape of `shapes` (NumPy's rules: aligned at the last axis, each axis of one
/// length or 1), or None.
fn broadcast_shape(shapes: &[&[usize]]) -> Option<Vec<usize>> {
    let ndim = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![1usize; ndim];
    for s in shapes {
        for (o, &n) in out[ndim - s.len()..].iter_mut().zip(s.iter()) {
            if *o == 1 {
                *o = n;
            } else if n != 1 && n != *o {
                return None;
            }
        }
    }
    Some(out)
}

/// A [`Selection::Coordinates`]: the positions checked axis by axis, then broadcast.
fn coordinates(arrays: &[ArrayD<i64>], shape: &[u64]) -> Result<Indexer, ArrayError> {
    let rank = shape.len();
    if rank == 0 {
        return Err(SelectionError::NoAxes {
            kind: "coordinate selection",
        }
        .into());
    }
    if arrays.len() != rank {
        return Err(SelectionError::Rank {
            kind: "coordinate selection",
            got: arrays.len(),
            rank,
        }
        .into());
    }
    let mut positions: Vec<ArrayD<u64>> = Vec::with_capacity(rank);
    for (d, a) in arrays.iter().enumerate() {
        let v = a
            .iter()
            .map(|&i| position(i, shape[d], d))
            .collect::<Result<Vec<_>, _>>()?;
        positions.push(ArrayD::from_shape_vec(a.raw_dim(), v).map_err(|_| {
            SelectionError::Broadcast {
                shapes: vec![a.shape().to_vec()],
            }
        })?);
    }
    let shapes: Vec<&[usize]> = arrays.iter().map(|a| a.shape()).collect();
    let broadcast_error = || SelectionError::Broadcast {
        shapes: shapes.iter().map(|s| s.to_vec()).collect(),
    };
    let out_shape = broadcast_shape(&shapes).ok_or_else(broadcast_error)?;
    let n = out_shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .ok_or_else(|| ArrayError::TooLarge {
            what: "a coordinate selection",
            shape: out_shape.iter().map(|&n| n as u64).collect(),
        })?;
    let mut per_axis = Vec::with_capacity(rank);
    for p in &positions {
        let view = p.broadcast(IxDyn(&out_shape)).ok_or_else(broadcast_error)?;
        per_axis.push(try_collect(
            view.iter().copied(),
            "the points of a coordinate selection",
        )?);
    }
    let points = try_collect(
        (0..n).map(|k| per_axis.iter().map(|v| v[k]).collect()),
        "the points of a coordinate selection",
    )?;
    Ok(Indexer::Points(
        points,
        out_shape.iter().map(|&n| n as u64).collect(),
    ))
}

fn full_axis(len: u64) -> AxisIndex {
    AxisIndex::Range {
        start: 0,
        count: len,
        step: 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Chunks given as their spans, per axis.
    struct Spans(Vec<(u64, u64)>);

    impl BlockSpans for Spans {
        fn count(&self, _: usize) -> u64 {
            self.0.len() as u64
        }

        fn span(&self, _: usize, i: u64) -> (u64, u64) {
            self.0[i as usize]
        }
    }

    const NO_BLOCKS: Spans = Spans(Vec::new());

    #[test]
    fn slices_follow_numpy() {
        let cases = [
            (Slice::new(1, 8), 10, (1, 7, 1)),
            (Slice::with_step(1, 8, 3), 10, (1, 3, 3)),
            (Slice::new(-3, 100), 10, (7, 3, 1)),
            (Slice::new(5, 2), 10, (5, 0, 1)),
            (Slice::full(), 0, (0, 0, 1)),
            (
                Slice {
                    start: Some(-100),
                    stop: Some(-8),
                    step: Some(2),
                },
                10,
                (0, 1, 2),
            ),
        ];
        for (s, len, want) in cases {
            assert_eq!(s.resolve(len, 0).unwrap(), want, "{s:?}");
        }
        assert!(Slice::with_step(0, 5, 0).resolve(10, 0).is_err());
        assert!(Slice::with_step(5, 0, -1).resolve(10, 0).is_err());
    }

    #[test]
    fn basic_with_ellipsis_and_index() {
        let sel = Selection::Basic(vec![BasicItem::Ellipsis, BasicItem::Index(-1)]);
        let ix = normalize(&sel, &[4, 5, 6], &NO_BLOCKS).unwrap();
        assert_eq!(ix.output_shape(), vec![4, 5]);
        assert!(normalize(
            &Selection::Basic(vec![BasicItem::Index(6)]),
            &[6],
            &NO_BLOCKS
        )
        .is_err());
        let two = Selection::Basic(vec![BasicItem::Ellipsis, BasicItem::Ellipsis]);
        assert!(normalize(&two, &[6], &NO_BLOCKS).is_err());
    }

    #[test]
    fn masks_and_points() {
        let sel = Selection::Orthogonal(vec![
            AxisSelection::Mask(vec![true, false, true]),
            AxisSelection::Indices(vec![-1, 0, 0]),
        ]);
        let ix = normalize(&sel, &[3, 4], &NO_BLOCKS).unwrap();
        assert_eq!(ix.output_shape(), vec![2, 3]);
        let bad_mask = Selection::Orthogonal(vec![
            AxisSelection::Mask(vec![true]),
            AxisSelection::Index(0),
        ]);
        assert!(normalize(&bad_mask, &[3, 4], &NO_BLOCKS).is_err());
        let pts = Selection::Points(vec![vec![0, 1], vec![2, -1]]);
        assert_eq!(
            normalize(&pts, &[3, 4], &NO_BLOCKS).unwrap(),
            Indexer::Points(vec![vec![0, 1], vec![2, 3]], vec![2])
        );
        assert!(normalize(&Selection::Points(vec![vec![3, 0]]), &[3, 4], &NO_BLOCKS).is_err());
    }

    #[test]
    fn orthogonal_and_blocks_take_an_ellipsis_and_leave_out_trailing_axes() {
        let sel = Selection::Orthogonal(vec![
            AxisSelection::Ellipsis,
            AxisSelection::Indices(vec![0, -1]),
        ]);
        let ix = normalize(&sel, &[4, 5, 6], &NO_BLOCKS).unwrap();
        assert_eq!(ix.output_shape(), vec![4, 5, 2]);
        let sel = Selection::Orthogonal(vec![AxisSelection::Mask(vec![true, false, true, true])]);
        assert_eq!(
            normalize(&sel, &[4, 5], &NO_BLOCKS).unwrap().output_shape(),
            vec![3, 5]
        );
        let two = Selection::Orthogonal(vec![AxisSelection::Ellipsis, AxisSelection::Ellipsis]);
        assert!(matches!(
            normalize(&two, &[4], &NO_BLOCKS),
            Err(ArrayError::InvalidSelection(SelectionError::Ellipses {
                count: 2
            }))
        ));
        let spans = Spans(vec![(0, 3), (3, 4), (7, 2)]);
        let sel = Selection::Blocks(vec![BlockSelection::Ellipsis, BlockSelection::Index(-1)]);
        assert_eq!(
            normalize(&sel, &[9], &spans).unwrap(),
            Indexer::Orthogonal(vec![AxisIndex::Range {
                start: 7,
                count: 2,
                step: 1
            }])
        );
    }

    fn arr(shape: &[usize], v: Vec<i64>) -> ArrayD<i64> {
        ArrayD::from_shape_vec(IxDyn(shape), v).unwrap()
    }

    #[test]
    fn coordinates_broadcast_and_keep_their_shape() {
        // (2, 1) against (3,): NumPy's broadcast shape (2, 3), points in C order
        let sel = Selection::Coordinates(vec![arr(&[2, 1], vec![0, -1]), arr(&[3], vec![0, 1, 2])]);
        let ix = normalize(&sel, &[4, 5], &NO_BLOCKS).unwrap();
        assert_eq!(ix.output_shape(), vec![2, 3]);
        let Indexer::Points(points, _) = ix else {
            panic!("not points")
        };
        assert_eq!(
            points,
            vec![
                vec![0, 0],
                vec![0, 1],
                vec![0, 2],
                vec![3, 0],
                vec![3, 1],
                vec![3, 2]
            ]
        );
        // shapes that do not broadcast
        let bad = Selection::Coordinates(vec![arr(&[2], vec![0, 1]), arr(&[3], vec![0, 1, 2])]);
        assert!(matches!(
            normalize(&bad, &[4, 5], &NO_BLOCKS),
            Err(ArrayError::InvalidSelection(
                SelectionError::Broadcast { .. }
            ))
        ));
        // positions are checked before the arrays are broadcast, as zarr-python checks them
        let both = Selection::Coordinates(vec![arr(&[2], vec![0, 4]), arr(&[3], vec![0, 1, 2])]);
        assert!(matches!(
            normalize(&both, &[4, 5], &NO_BLOCKS),
            Err(ArrayError::OutOfBounds {
                axis: 0,
                index: 4,
                len: 4
            })
        ));
        // one array per axis; an array without axes has no coordinates
        let one = Selection::Coordinates(vec![arr(&[1], vec![0])]);
        assert!(normalize(&one, &[4, 5], &NO_BLOCKS).is_err());
        assert!(matches!(
            normalize(&Selection::Coordinates(vec![]), &[], &NO_BLOCKS),
            Err(ArrayError::InvalidSelection(SelectionError::NoAxes { .. }))
        ));
        // empty arrays select nothing, in the broadcast shape
        let empty = Selection::Coordinates(vec![arr(&[0], vec![]), arr(&[1], vec![2])]);
        assert_eq!(
            normalize(&empty, &[4, 5], &NO_BLOCKS)
                .unwrap()
                .output_shape(),
            vec![0]
        );
    }

    #[test]
    fn masks_select_their_true_positions_in_c_order() {
        let mask = ArrayD::from_shape_vec(IxDyn(&[2, 2]), vec![false, true, true, true]).unwrap();
        let ix = normalize(&Selection::Mask(mask), &[2, 2], &NO_BLOCKS).unwrap();
        assert_eq!(
            ix,
            Indexer::Points(vec![vec![0, 1], vec![1, 0], vec![1, 1]], vec![3])
        );
        let short = ArrayD::from_shape_vec(IxDyn(&[2]), vec![true, true]).unwrap();
        assert!(matches!(
            normalize(&Selection::Mask(short), &[3], &NO_BLOCKS),
            Err(ArrayError::InvalidSelection(
                SelectionError::MaskShape { .. }
            ))
        ));
    }

    #[test]
    fn blocks_cover_whole_chunks() {
        // a partly filled first chunk: 3 positions, then 4, then 2
        let spans = Spans(vec![(0, 3), (3, 4), (7, 2)]);
        let ix = normalize(
            &Selection::Blocks(vec![BlockSelection::Index(1)]),
            &[9],
            &spans,
        )
        .unwrap();
        assert_eq!(
            ix,
            Indexer::Orthogonal(vec![AxisIndex::Range {
                start: 3,
                count: 4,
                step: 1
            }])
        );
        let ix = normalize(
            &Selection::Blocks(vec![BlockSelection::Range(Some(1), None)]),
            &[9],
            &spans,
        )
        .unwrap();
        assert_eq!(ix.output_shape(), vec![6]);
        assert!(normalize(
            &Selection::Blocks(vec![BlockSelection::Index(3)]),
            &[9],
            &spans
        )
        .is_err());
    }

    #[test]
    fn block_ranges_start_inside_the_axis_as_zarr_python_requires() {
        let spans = Spans(vec![(0, 3), (3, 4), (7, 2)]);
        let blocks = |items: Vec<BlockSelection>, shape: &[u64], spans: &Spans| {
            normalize(&Selection::Blocks(items), shape, spans)
        };
        let range = |a: Option<i64>, b: Option<i64>| vec![BlockSelection::Range(a, b)];
        // a start at or past the last block, or before the first (counted from the end once),
        // is refused where it used to clamp to an empty or a whole selection
        for (a, b) in [
            (Some(3), None),
            (Some(5), Some(6)),
            (Some(-4), None),
            (Some(-9), Some(1)),
        ] {
            assert!(
                matches!(
                    blocks(range(a, b), &[9], &spans),
                    Err(ArrayError::InvalidSelection(
                        SelectionError::BlockOutOfBounds {
                            axis: 0,
                            blocks: 3,
                            ..
                        }
                    ))
                ),
                "{a:?}..{b:?}"
            );
        }
        // a start inside: the end clamps, before the start it selects nothing
        assert_eq!(
            blocks(range(Some(-1), None), &[9], &spans)
                .unwrap()
                .output_shape(),
            vec![2]
        );
        assert_eq!(
            blocks(range(Some(2), Some(99)), &[9], &spans)
                .unwrap()
                .output_shape(),
            vec![2]
        );
        assert_eq!(
            blocks(range(Some(1), Some(-5)), &[9], &spans)
                .unwrap()
                .output_shape(),
            vec![0]
        );
        assert_eq!(
            blocks(range(Some(2), Some(1)), &[9], &spans)
                .unwrap()
                .output_shape(),
            vec![0]
        );
        // an axis without elements has no block 0: explicit, full or left out, all refused
        let none = Spans(vec![]);
        for items in [range(None, None), vec![BlockSelection::Ellipsis], vec![]] {
            assert!(matches!(
                blocks(items, &[0], &none),
                Err(ArrayError::InvalidSelection(
                    SelectionError::BlockOutOfBounds {
                        axis: 0,
                        index: 0,
                        blocks: 0
                    }
                ))
            ));
        }
    }
}
