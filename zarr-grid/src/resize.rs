//! Resizing and appending: the new grid, the chunks that fall wholly outside the new domain
//! (the array deletes them) and the kept chunks that lose positions (the array may reset
//! their cut-off part to the fill value).
//!
//! The work is proportional to the rank, never to the number of chunks: the sets are boxes
//! of grid indices.
//!
//! ```
//! use zarr_grid::{build_grid, default_registry, resize, ChunkGrid};
//! use zarr_meta::ExtensionDef;
//!
//! let def: ExtensionDef =
//!     serde_json::from_str(r#"{"name": "regular", "configuration": {"chunk_shape": [4, 4]}}"#)
//!         .unwrap();
//! let grid = build_grid(&default_registry(), &def, &[10, 8]).unwrap();
//! let r = resize::resize(grid.as_ref(), &[5, 8]).unwrap();
//! assert_eq!(r.grid.shape(), &[5, 8]);
//! // chunk row 2 (positions 8..10) is gone; chunk row 1 keeps positions 4..5 of 4..8
//! assert_eq!(r.removed.boxes(), &[vec![2..3, 0..2]]);
//! assert_eq!(r.clipped.iter().collect::<Vec<_>>(), vec![vec![1, 0], vec![1, 1]]);
//! ```

use std::ops::Range;

use crate::error::GridError;
use crate::grid::{range_count, ChunkGrid, ChunkIndices};

/// A set of chunk grid indices: a union of disjoint, non-empty boxes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChunkSet {
    boxes: Vec<Vec<Range<i64>>>,
}

impl ChunkSet {
    /// The empty set.
    pub fn new() -> Self {
        ChunkSet::default()
    }

    /// Adds a box (ignored if empty). The caller keeps the boxes disjoint.
    fn push(&mut self, b: Vec<Range<i64>>) {
        if b.iter().all(|r| r.start < r.end) {
            self.boxes.push(b);
        }
    }

    /// The disjoint boxes, each a range of grid indices per dimension.
    pub fn boxes(&self) -> &[Vec<Range<i64>>] {
        &self.boxes
    }

    /// Whether the set holds no chunk.
    pub fn is_empty(&self) -> bool {
        self.boxes.is_empty()
    }

    /// The number of chunks, `None` if it does not fit in `u64`.
    pub fn len(&self) -> Option<u64> {
        self.boxes
            .iter()
            .try_fold(0u64, |acc, b| acc.checked_add(range_count(b)?))
    }

    /// Whether `chunk` is in the set.
    pub fn contains(&self, chunk: &[i64]) -> bool {
        self.boxes
            .iter()
            .any(|b| b.len() == chunk.len() && b.iter().zip(chunk).all(|(r, g)| r.contains(g)))
    }

    /// Every chunk index of the set, box by box, each box in C order.
    pub fn iter(&self) -> impl Iterator<Item = Vec<i64>> + '_ {
        self.boxes.iter().flat_map(|b| ChunkIndices::new(b.clone()))
    }
}

/// The outcome of [`resize`] and [`append`].
#[derive(Debug, Clone)]
pub struct Resize {
    /// The grid bound to the new shape.
    pub grid: Box<dyn ChunkGrid>,
    /// Chunks of the old grid wholly outside the new domain: delete them.
    pub removed: ChunkSet,
    /// Chunks kept whose part inside the array shrank (the new end cuts through them):
    /// their positions past the new end should hold the fill value if the array grows again.
    pub clipped: ChunkSet,
}

/// The chunk indices of `old`'s grid that are not in `new`'s grid range. Both grids must
/// have the same chunk geometry (chunk shape and origin), as a resize keeps them.
pub fn chunks_outside(old: &dyn ChunkGrid, new: &dyn ChunkGrid) -> ChunkSet {
    let (old_r, new_r) = (old.grid_range(), new.grid_range());
    let mut set = ChunkSet::new();
    if old_r.len() != new_r.len() || old_r.iter().any(|r| r.start >= r.end) {
        if old_r.len() != new_r.len() {
            set.push(old_r);
        }
        return set;
    }
    // A chunk belongs to the box of the first axis on which it lies outside `new`.
    let mut prefix: Vec<Range<i64>> = Vec::with_capacity(old_r.len());
    for d in 0..old_r.len() {
        let (o, n) = (&old_r[d], &new_r[d]);
        for part in [o.start..o.end.min(n.start), o.start.max(n.end)..o.end] {
            let mut b = prefix.clone();
            b.push(part);
            b.extend(old_r[d + 1..].iter().cloned());
            set.push(b);
        }
        let inter = o.start.max(n.start)..o.end.min(n.end);
        if inter.start >= inter.end {
            break;
        }
        prefix.push(inter);
    }
    set
}

/// Binds `grid` to `new_shape` (same rank; the lower bound stays, the upper end moves) and
/// says which chunks to delete and which are cut.
///
/// # Errors
/// A rank mismatch or an overflow of the new grid; nothing changes on error.
pub fn resize(grid: &dyn ChunkGrid, new_shape: &[u64]) -> Result<Resize, GridError> {
    crate::grid::check_rank("shape", grid.rank(), new_shape.len())?;
    let new = grid.with_shape(new_shape)?;
    let removed = chunks_outside(grid, new.as_ref());
    let mut clipped = ChunkSet::new();
    let old_range = grid.grid_range();
    let new_range = new.grid_range();
    if new_range.iter().all(|r| r.start < r.end) {
        // Along axis d the new last chunk is cut if the old array reached past the new end
        // and that chunk held positions past it.
        let probe: Vec<i64> = new_range.iter().map(|r| r.start).collect();
        let cut: Vec<bool> = (0..new_range.len())
            .map(|d| {
                let last = new_range[d].end - 1;
                let mut at = probe.clone();
                at[d] = last;
                let (Some(before), Some(after)) = (grid.chunk_region(&at), new.chunk_region(&at))
                else {
                    return false;
                };
                before.shape[d] > after.shape[d]
            })
            .collect();
        // A chunk belongs to the box of the first axis on which it is cut.
        for d in 0..new_range.len() {
            if !cut[d] {
                continue;
            }
            // only chunks the old grid had: intersect with its range
            let b = new_range
                .iter()
                .zip(&old_range)
                .enumerate()
                .map(|(e, (r, o))| {
                    let r = match e.cmp(&d) {
                        std::cmp::Ordering::Less if cut[e] => r.start..r.end - 1,
                        std::cmp::Ordering::Equal => r.end - 1..r.end,
                        _ => r.clone(),
                    };
                    r.start.max(o.start)..r.end.min(o.end)
                })
                .collect();
            clipped.push(b);
        }
    }
    Ok(Resize {
        grid: new,
        removed,
        clipped,
    })
}

/// Appends `k` positions on `axis`: the new shape has `shape[axis] + k`.
///
/// # Errors
/// [`GridError::AxisOutOfRange`], or [`GridError::Overflow`] if the new length or the grid
/// does not fit; nothing changes on error.
pub fn append(grid: &dyn ChunkGrid, axis: usize, k: u64) -> Result<Resize, GridError> {
    let mut shape = grid.shape().to_vec();
    let rank = shape.len();
    let len = shape
        .get_mut(axis)
        .ok_or(GridError::AxisOutOfRange { axis, rank })?;
    *len = len.checked_add(k).ok_or(GridError::Overflow {
        axis,
        quantity: "shape + appended length",
    })?;
    resize(grid, &shape)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::regular::{RegularChunkGrid, RegularConfig};
    use std::collections::BTreeSet;
    use std::num::NonZeroU64;

    fn regular(chunks: &[u64], shape: &[u64]) -> RegularChunkGrid {
        let cs = chunks
            .iter()
            .map(|&c| NonZeroU64::new(c).unwrap())
            .collect();
        RegularChunkGrid::new(RegularConfig::new(cs), shape).unwrap()
    }

    /// Checks `removed` and `clipped` against a brute-force walk over every old chunk.
    fn check(old: &dyn ChunkGrid, new_shape: &[u64]) {
        let r = resize(old, new_shape).unwrap();
        let mut removed = BTreeSet::new();
        let mut clipped = BTreeSet::new();
        for g in old.chunk_indices() {
            match r.grid.chunk_region(&g) {
                None => {
                    removed.insert(g);
                }
                Some(after) => {
                    let before = old.chunk_region(&g).unwrap();
                    if (0..g.len()).any(|d| after.shape[d] < before.shape[d]) {
                        clipped.insert(g);
                    }
                }
            }
        }
        let got: Vec<_> = r.removed.iter().collect();
        assert_eq!(got.len() as u64, r.removed.len().unwrap(), "disjoint boxes");
        assert_eq!(
            got.into_iter().collect::<BTreeSet<_>>(),
            removed,
            "{new_shape:?}"
        );
        let got: Vec<_> = r.clipped.iter().collect();
        assert_eq!(got.len() as u64, r.clipped.len().unwrap(), "disjoint boxes");
        assert_eq!(
            got.into_iter().collect::<BTreeSet<_>>(),
            clipped,
            "{new_shape:?}"
        );
    }

    #[test]
    fn resize_matches_brute_force() {
        let old = regular(&[4, 3, 2], &[10, 7, 5]);
        for a in [0, 3, 4, 8, 10, 13] {
            for b in [0, 2, 6, 7, 9] {
                for c in [1, 4, 5, 6] {
                    check(&old, &[a, b, c]);
                }
            }
        }
    }

    #[cfg(feature = "regular-bounded")]
    #[test]
    fn resize_of_a_bounded_grid_matches_brute_force() {
        use crate::regular_bounded::{RegularBoundedChunkGrid, RegularBoundedConfig};
        let cs = vec![NonZeroU64::new(4).unwrap(), NonZeroU64::new(3).unwrap()];
        let cfg = RegularBoundedConfig::new(cs, vec![1, -2], vec![-3, -7]);
        let old = RegularBoundedChunkGrid::new(cfg, &[11, 9]).unwrap();
        for a in [0, 1, 2, 5, 11, 14] {
            for b in [0, 1, 3, 9, 10] {
                check(&old, &[a, b]);
            }
        }
    }

    #[test]
    fn append_grows_and_refuses_overflow() {
        let g = regular(&[4], &[6]);
        let r = append(&g, 0, 5).unwrap();
        assert_eq!(r.grid.shape(), &[11]);
        assert!(r.removed.is_empty() && r.clipped.is_empty());
        assert!(matches!(
            append(&g, 1, 5),
            Err(GridError::AxisOutOfRange { axis: 1, rank: 1 })
        ));
        assert!(matches!(
            append(&g, 0, u64::MAX),
            Err(GridError::Overflow { .. })
        ));
        assert!(matches!(
            resize(&g, &[1, 2]),
            Err(GridError::DimensionMismatch { .. })
        ));
    }

    #[test]
    fn zero_d_resize() {
        let g = regular(&[], &[]);
        let r = resize(&g, &[]).unwrap();
        assert!(r.removed.is_empty() && r.clipped.is_empty());
    }
}
