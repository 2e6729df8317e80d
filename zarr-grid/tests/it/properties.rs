//! Property tests: grid index arithmetic and key encode/decode, over random grids.

use std::num::NonZeroU64;

use proptest::prelude::*;
use zarr_grid::geometry::{indices, Region};
use zarr_grid::key_encoding::{ChunkKeyEncoding, DefaultChunkKeyEncoding, V2ChunkKeyEncoding};
use zarr_grid::{ChunkGrid, RegularChunkGrid, RegularConfig, Separator};

/// Per axis: (chunk size, origin, lower bound, length).
type Axes = Vec<(u64, i64, i64, u64)>;

fn axes(rank: std::ops::RangeInclusive<usize>) -> impl Strategy<Value = Axes> {
    prop::collection::vec((1u64..=5, -12i64..=12, -20i64..=20, 0u64..=6), rank)
}

fn nz(v: u64) -> NonZeroU64 {
    NonZeroU64::new(v).expect("strategy yields positive sizes")
}

fn regular(axes: &Axes) -> RegularChunkGrid {
    let chunks = axes.iter().map(|a| nz(a.0)).collect();
    let shape: Vec<u64> = axes.iter().map(|a| a.3).collect();
    RegularChunkGrid::new(RegularConfig::new(chunks), &shape).expect("small grids are valid")
}

#[cfg(feature = "regular-bounded")]
fn bounded(axes: &Axes) -> zarr_grid::RegularBoundedChunkGrid {
    use zarr_grid::{RegularBoundedChunkGrid, RegularBoundedConfig};
    let config = RegularBoundedConfig::new(
        axes.iter().map(|a| nz(a.0)).collect(),
        axes.iter().map(|a| a.1).collect(),
        axes.iter().map(|a| a.2).collect(),
    );
    let shape: Vec<u64> = axes.iter().map(|a| a.3).collect();
    RegularBoundedChunkGrid::new(config, &shape).expect("small grids are valid")
}

/// The grid under test: regular_bounded when compiled in, else regular (origin and lower
/// bound forced to 0).
fn grid(axes: &Axes) -> Box<dyn ChunkGrid> {
    #[cfg(feature = "regular-bounded")]
    {
        Box::new(bounded(axes))
    }
    #[cfg(not(feature = "regular-bounded"))]
    {
        Box::new(regular(axes))
    }
}

fn origin_and_lower(axes: &Axes) -> Vec<(i64, i64)> {
    if cfg!(feature = "regular-bounded") {
        axes.iter().map(|a| (a.1, a.2)).collect()
    } else {
        axes.iter().map(|_| (0, 0)).collect()
    }
}

/// C-order linear index of `p` in `shape`.
fn linear(p: &[u64], shape: &[u64]) -> usize {
    p.iter()
        .zip(shape)
        .fold(0, |acc, (&i, &n)| acc * n as usize + i as usize)
}

/// A random region inside `shape`: per axis a start and a length from two fractions.
fn region_in(shape: &[u64], picks: &[(u64, u64)]) -> Region {
    let (start, len): (Vec<u64>, Vec<u64>) = shape
        .iter()
        .zip(picks)
        .map(|(&n, &(a, b))| {
            let s = if n == 0 { 0 } else { a % (n + 1) };
            (s, b % (n - s + 1))
        })
        .unzip();
    Region::new(start, len).expect("small region")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Every position maps to exactly one chunk and one offset inside its buffer, and the
    /// chunk's part says the same.
    #[test]
    fn every_position_has_one_chunk_and_offset(axes in axes(1..=4)) {
        let g = grid(&axes);
        let shape = g.shape().to_vec();
        let total = shape.iter().product::<u64>() as usize;
        let mut cover = vec![0u32; total];
        for chunk in g.chunk_indices() {
            let part = g.chunk_part(&chunk).expect("chunks of the range have a part");
            prop_assert!(!part.in_region.is_empty());
            for i in indices(&part.in_region.shape) {
                let pos: Vec<u64> = (0..i.len()).map(|d| part.in_region.start[d] + i[d]).collect();
                cover[linear(&pos, &shape)] += 1;
                let off: Vec<u64> = (0..i.len()).map(|d| part.in_chunk.start[d] + i[d]).collect();
                prop_assert_eq!(g.chunk_of(&pos).unwrap(), (chunk.clone(), off));
            }
            // the covered part lies inside the chunk buffer
            for (d, a) in axes.iter().enumerate() {
                prop_assert!(part.in_chunk.start[d] + part.in_chunk.shape[d] <= a.0);
            }
        }
        prop_assert!(cover.iter().all(|&c| c == 1));
        prop_assert_eq!(g.num_chunks(), Some(g.chunk_indices().count() as u64));
        for pos in indices(&shape) {
            let (chunk, off) = g.chunk_of(&pos).unwrap();
            prop_assert!(g.contains_chunk(&chunk));
            for d in 0..pos.len() {
                prop_assert!(off[d] < axes[d].0);
            }
        }
    }

    /// The chunks iterated for a region cover it exactly once, in C order.
    #[test]
    fn chunks_in_region_cover_it_once(
        axes in axes(1..=4),
        picks in prop::collection::vec((0u64..100, 0u64..100), 4),
    ) {
        let g = grid(&axes);
        let region = region_in(g.shape(), &picks);
        let mut cover = vec![0u32; region.num_elements().unwrap() as usize];
        let parts: Vec<_> = g.chunks_in_region(&region).unwrap().collect();
        for w in parts.windows(2) {
            prop_assert!(w[0].chunk < w[1].chunk, "C order, no repeats");
        }
        // the size hint is exact at every step
        let mut it = g.chunks_in_region(&region).unwrap();
        for left in (0..=parts.len()).rev() {
            prop_assert_eq!(it.size_hint(), (left, Some(left)));
            it.next();
        }
        for part in &parts {
            prop_assert!(!part.in_region.is_empty());
            prop_assert_eq!(&part.in_chunk.shape, &part.in_region.shape);
            for i in indices(&part.in_region.shape) {
                let rel: Vec<u64> = (0..i.len()).map(|d| part.in_region.start[d] + i[d]).collect();
                cover[linear(&rel, &region.shape)] += 1;
                let pos: Vec<u64> = (0..i.len()).map(|d| region.start[d] + rel[d]).collect();
                let off: Vec<u64> = (0..i.len()).map(|d| part.in_chunk.start[d] + i[d]).collect();
                prop_assert_eq!(g.chunk_of(&pos).unwrap(), (part.chunk.clone(), off));
            }
        }
        prop_assert!(cover.iter().all(|&c| c == 1));
    }

    /// buffer_offset is the shift (L - o) mod c for the first chunk of an axis, 0 for the
    /// others, and agrees with where the chunk's part starts; the domain is [L, L + n).
    #[test]
    fn buffer_offset_is_the_shift_of_the_first_chunk(axes in axes(1..=4)) {
        let g = grid(&axes);
        let ol = origin_and_lower(&axes);
        let range = g.grid_range();
        let domain: Vec<(i64, i64)> =
            ol.iter().zip(&axes).map(|(&(_, l), a)| (l, l + a.3 as i64)).collect();
        prop_assert_eq!(g.domain(), domain);
        for chunk in g.chunk_indices() {
            let off = g.buffer_offset(&chunk);
            let part = g.chunk_part(&chunk).unwrap();
            for d in 0..chunk.len() {
                let (o, l) = ol[d];
                let shift = (l - o).rem_euclid(axes[d].0 as i64) as u64;
                let expect = if chunk[d] == range[d].start { shift } else { 0 };
                prop_assert_eq!(off[d], expect);
                prop_assert_eq!(part.in_chunk.start[d], expect);
                // the first chunk's index is g(L) = floor((L - o) / c)
                prop_assert_eq!(range[d].start, (l - o).div_euclid(axes[d].0 as i64));
            }
        }
    }

    /// Resizing to a random shape: a chunk is removed exactly when the new grid has no part
    /// of it, and the sets hold no duplicates.
    #[test]
    fn resize_removes_exactly_the_chunks_outside(
        axes in axes(1..=3),
        new_lens in prop::collection::vec(0u64..=9, 3),
    ) {
        let g = grid(&axes);
        let new_shape: Vec<u64> = new_lens[..axes.len()].to_vec();
        let r = zarr_grid::resize(g.as_ref(), &new_shape).unwrap();
        let removed: Vec<_> = r.removed.iter().collect();
        prop_assert_eq!(removed.len() as u64, r.removed.len().unwrap());
        for chunk in g.chunk_indices() {
            prop_assert_eq!(r.removed.contains(&chunk), r.grid.chunk_part(&chunk).is_none());
            let clipped = match (g.chunk_region(&chunk), r.grid.chunk_region(&chunk)) {
                // it lost positions on some axis (the new end cuts through it)
                (Some(a), Some(b)) => b.shape.iter().zip(&a.shape).any(|(x, y)| x < y),
                _ => false,
            };
            prop_assert_eq!(r.clipped.contains(&chunk), clipped);
        }
    }

    /// Keys round-trip for every encoding and separator, and a wrong rank is refused.
    #[test]
    fn keys_round_trip(
        chunk in prop::collection::vec(
            prop_oneof![any::<i64>(), -20i64..20, Just(i64::MIN), Just(i64::MAX), Just(0)],
            0..6,
        ),
    ) {
        let encodings: [Box<dyn ChunkKeyEncoding>; 4] = [
            Box::new(DefaultChunkKeyEncoding::new(Separator::Slash)),
            Box::new(DefaultChunkKeyEncoding::new(Separator::Dot)),
            Box::new(V2ChunkKeyEncoding::new(Separator::Slash)),
            Box::new(V2ChunkKeyEncoding::new(Separator::Dot)),
        ];
        for enc in &encodings {
            let key = enc.encode(&chunk);
            prop_assert_eq!(&enc.decode(&key, chunk.len()).unwrap(), &chunk, "{}", key);
            // (the v2 key "0" of a 0-d array is also the key of chunk [0] of a 1-d one)
            if !(chunk.is_empty() && enc.name() == "v2") {
                prop_assert!(enc.decode(&key, chunk.len() + 1).is_err());
            }
            if chunk.len() > 1 {
                prop_assert!(enc.decode(&key, chunk.len() - 1).is_err());
            }
        }
    }

    /// Decoding is canonical: whatever a random string decodes to encodes back to it.
    #[test]
    fn decoded_keys_are_canonical(key in "[c0-9./+ -]{0,10}", rank in 0usize..4) {
        let encodings: [Box<dyn ChunkKeyEncoding>; 4] = [
            Box::new(DefaultChunkKeyEncoding::new(Separator::Slash)),
            Box::new(DefaultChunkKeyEncoding::new(Separator::Dot)),
            Box::new(V2ChunkKeyEncoding::new(Separator::Slash)),
            Box::new(V2ChunkKeyEncoding::new(Separator::Dot)),
        ];
        for enc in &encodings {
            if let Ok(chunk) = enc.decode(&key, rank) {
                prop_assert_eq!(chunk.len(), rank);
                prop_assert_eq!(enc.encode(&chunk), key.clone());
            }
        }
    }

    /// Writing a regular grid as regular_bounded (origin 0, lower bound 0) changes no chunk.
    #[test]
    fn regular_equals_bounded_at_zero(axes in axes(1..=4)) {
        let zeroed: Axes = axes.iter().map(|a| (a.0, 0, 0, a.3)).collect();
        let r = regular(&zeroed);
        let b = grid(&zeroed);
        prop_assert_eq!(r.grid_range(), b.grid_range());
        for chunk in r.chunk_indices() {
            prop_assert_eq!(r.chunk_part(&chunk), b.chunk_part(&chunk));
        }
    }
}

#[cfg(feature = "regular-bounded")]
proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// After a prepend of k on an axis, every old position (now k further on) keeps its chunk
    /// and offset, so every existing chunk keeps its key and layout.
    #[test]
    fn prepend_keeps_every_position_in_its_chunk(
        axes in axes(1..=3),
        axis_pick in 0usize..3,
        k in 0u64..=9,
        from_regular in any::<bool>(),
    ) {
        let axes: Axes = if from_regular {
            axes.iter().map(|a| (a.0, 0, 0, a.3)).collect()
        } else {
            axes
        };
        let axis = axis_pick % axes.len();
        let old = bounded(&axes);
        let def = if from_regular { regular(&axes).to_def() } else { old.to_def() };
        let (config, shape) = zarr_grid::prepend(&def, old.shape(), axis, k).unwrap();
        prop_assert_eq!(config.lower_bound[axis], axes[axis].2 - k as i64);
        prop_assert_eq!(shape[axis], axes[axis].3 + k);
        let new = zarr_grid::RegularBoundedChunkGrid::new(config, &shape).unwrap();
        for pos in indices(old.shape()) {
            let mut moved = pos.clone();
            moved[axis] += k;
            prop_assert_eq!(new.chunk_of(&moved).unwrap(), old.chunk_of(&pos).unwrap());
        }
    }
}

/// `copy_region` against a copy element by element, for buffers and a block given per axis as
/// (source extent beside the block, destination extent beside it, block extent, source start,
/// destination start), each start clipped to its room.
fn check_copy_region(axes: &[(u64, u64, u64, u64, u64)], elem: usize) -> Result<(), TestCaseError> {
    let src_shape: Vec<u64> = axes.iter().map(|d| d.0 + d.2).collect();
    let dst_shape: Vec<u64> = axes.iter().map(|d| d.1 + d.2).collect();
    let block: Vec<u64> = axes.iter().map(|d| d.2).collect();
    let src_start: Vec<u64> = axes.iter().map(|d| d.3 % (d.0 + 1)).collect();
    let dst_start: Vec<u64> = axes.iter().map(|d| d.4 % (d.1 + 1)).collect();
    let n = |s: &[u64]| s.iter().product::<u64>() as usize * elem;
    let src: Vec<u8> = (0..n(&src_shape)).map(|i| (i % 251) as u8).collect();
    let mut got = vec![0u8; n(&dst_shape)];
    zarr_grid::geometry::copy_region(
        &src, &src_shape, &src_start, &mut got, &dst_shape, &dst_start, &block, elem,
    );
    let mut want = vec![0u8; n(&dst_shape)];
    for p in zarr_grid::geometry::indices(&block) {
        let s: Vec<u64> = p.iter().zip(&src_start).map(|(a, b)| a + b).collect();
        let d: Vec<u64> = p.iter().zip(&dst_start).map(|(a, b)| a + b).collect();
        let (s, d) = (linear(&s, &src_shape) * elem, linear(&d, &dst_shape) * elem);
        want[d..d + elem].copy_from_slice(&src[s..s + elem]);
    }
    prop_assert_eq!(got, want);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    /// `copy_region` (the odometer of `block_runs`) against a copy element by element, for
    /// random buffers of rank 0 to 5, blocks anywhere in both, and element sizes 1 to 8.
    #[test]
    fn copy_region_matches_an_element_by_element_copy(
        dims in proptest::collection::vec((1u64..6, 1u64..6, 0u64..6, 0u64..6, 0u64..6), 0..=5),
        elem in 1usize..=8,
    ) {
        check_copy_region(&dims, elem)?;
    }

    /// The same for blocks whose rows are 32, 64 or 128 bytes, which `block_runs` walks in
    /// loops of their own (the row's axis spanning the buffers or not, so that rows merge
    /// with the axes before them or not).
    #[test]
    fn copy_region_with_rows_of_the_lengths_walked_apart(
        dims in proptest::collection::vec((0u64..3, 0u64..3, 1u64..4, 0u64..3, 0u64..3), 0..=3),
        row in prop::sample::select(vec![32usize, 64, 128]),
        elem in prop::sample::select(vec![1usize, 2, 4, 8]),
        last in (0u64..3, 0u64..3, 0u64..3, 0u64..3),
    ) {
        let mut axes = dims;
        axes.push((last.0, last.1, (row / elem) as u64, last.2, last.3));
        check_copy_region(&axes, elem)?;
    }
}
