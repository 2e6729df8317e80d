//! The `rectilinear` grid: property tests against an expanded, element-by-element model
//! (every position maps into its chunk, the chunks tile the array exactly, run-length and
//! expanded forms agree, resize against brute force) and bounded allocation of huge runs.
#![cfg(feature = "rectilinear")]

use std::collections::BTreeSet;
use std::num::NonZeroU64;

use proptest::prelude::*;
use zarr_grid::geometry::Region;
use zarr_grid::rectilinear::{AxisEdges, Edge, RectilinearChunkGrid, RectilinearConfig};
use zarr_grid::{resize, ChunkGrid};
use zarr_testkit::CountingAlloc;

/// A request above 1 GiB fails: a run expanded into a list would error at once.
#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc::refusing_above(1 << 30);

fn nz(v: u64) -> NonZeroU64 {
    NonZeroU64::new(v).expect("positive")
}

/// One axis of a random grid: either regular, or listed items (size, count; count 1 written
/// as a single edge), plus the array length, which the listed edges cover.
#[derive(Debug, Clone)]
struct AxisCase {
    edges: AxisEdges,
    len: u64,
}

fn axis_case() -> impl Strategy<Value = AxisCase> {
    let regular = (1u64..=5, 0u64..=12).prop_map(|(c, len)| AxisCase {
        edges: AxisEdges::Regular(nz(c)),
        len,
    });
    let listed = (
        prop::collection::vec((1u64..=4, 1u64..=3, any::<bool>()), 0..=5),
        any::<u64>(),
    )
        .prop_map(|(items, pick)| {
            let edges: Vec<Edge> = items
                .iter()
                .map(|&(s, c, single)| {
                    if single {
                        Edge::Single(nz(s))
                    } else {
                        Edge::Run {
                            size: nz(s),
                            count: nz(c),
                        }
                    }
                })
                .collect();
            let sum: u64 = edges
                .iter()
                .map(|e| {
                    let (s, c) = e.size_count();
                    s.get() * c.get()
                })
                .sum();
            AxisCase {
                edges: AxisEdges::Listed(edges),
                // any length up to the sum: overflow chunks included
                len: pick % (sum + 1),
            }
        });
    prop_oneof![regular, listed]
}

/// The model: every edge of an axis expanded (a regular axis as far as `reach`).
fn expanded(edges: &AxisEdges, reach: u64) -> Vec<u64> {
    match edges {
        AxisEdges::Regular(c) => vec![c.get(); reach.div_ceil(c.get()) as usize],
        listed => listed.expanded(usize::MAX).expect("listed"),
    }
}

/// The model's chunk and offset of position `p`.
fn model_locate(edges: &[u64], p: u64) -> (i64, u64) {
    let mut start = 0;
    for (g, &e) in edges.iter().enumerate() {
        if p < start + e {
            return (g as i64, p - start);
        }
        start += e;
    }
    panic!("position {p} past the edges");
}

fn build(axes: &[AxisCase]) -> RectilinearChunkGrid {
    let config = RectilinearConfig::new(axes.iter().map(|a| a.edges.clone()).collect());
    let shape: Vec<u64> = axes.iter().map(|a| a.len).collect();
    RectilinearChunkGrid::new(config, &shape).expect("covering edges are valid")
}

/// The expanded form of a configuration: every run written out as single edges.
fn expanded_config(axes: &[AxisCase]) -> RectilinearConfig {
    RectilinearConfig::new(
        axes.iter()
            .map(|a| match &a.edges {
                AxisEdges::Regular(c) => AxisEdges::Regular(*c),
                listed => AxisEdges::Listed(
                    listed
                        .expanded(usize::MAX)
                        .expect("listed")
                        .into_iter()
                        .map(|s| Edge::Single(nz(s)))
                        .collect(),
                ),
            })
            .collect(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn every_position_maps_into_its_chunk(axes in prop::collection::vec(axis_case(), 1..=3)) {
        let grid = build(&axes);
        let shape = grid.shape().to_vec();
        for (d, a) in axes.iter().enumerate() {
            let edges = expanded(&a.edges, a.len);
            for p in 0..a.len {
                let mut pos = vec![0; shape.len()];
                if shape.contains(&0) {
                    break;
                }
                pos[d] = p;
                let (chunk, offset) = grid.chunk_of(&pos).unwrap();
                let (g, off) = model_locate(&edges, p);
                prop_assert_eq!((chunk[d], offset[d]), (g, off));
                let buffer = grid.chunk_buffer_shape(&chunk).unwrap();
                prop_assert!(offset[d] < buffer[d]);
                prop_assert_eq!(buffer[d], edges[g as usize]);
                let (start, size) = grid.chunk_edge(d, g).unwrap();
                prop_assert_eq!((start + off, size), (p, edges[g as usize]));
            }
            // the grid's chunks along the axis are those that start before its end
            let starts: Vec<u64> = edges.iter().scan(0, |s, &e| { let at = *s; *s += e; Some(at) }).collect();
            let expect = starts.iter().filter(|&&s| s < a.len).count() as i64;
            prop_assert_eq!(grid.grid_range()[d].clone(), 0..expect);
        }
    }

    #[test]
    fn chunks_tile_the_array_exactly(
        axes in prop::collection::vec(axis_case(), 1..=3),
        picks in prop::collection::vec((any::<u64>(), any::<u64>()), 3),
    ) {
        let grid = build(&axes);
        let shape = grid.shape().to_vec();
        // every chunk's part, over the whole array, covers each position once
        let mut seen = BTreeSet::new();
        for g in grid.chunk_indices() {
            let part = grid.chunk_part(&g).unwrap();
            prop_assert_eq!(&part, &grid.chunks_in_region(&part.in_region).unwrap().next().map(|mut p| { p.in_region = part.in_region.clone(); p }).unwrap());
            for pos in zarr_grid::geometry::indices(&part.in_region.shape) {
                let at: Vec<u64> = pos.iter().zip(&part.in_region.start).map(|(a, b)| a + b).collect();
                prop_assert!(seen.insert(at.clone()), "{:?} twice", at);
                let (c, off) = grid.chunk_of(&at).unwrap();
                prop_assert_eq!(&c, &g);
                let inside: Vec<u64> = pos.iter().zip(&part.in_chunk.start).map(|(a, b)| a + b).collect();
                prop_assert_eq!(off, inside);
            }
        }
        let total: u64 = shape.iter().product();
        prop_assert_eq!(seen.len() as u64, total);
        // a region: its parts cover it once, in C order of the chunks
        let region = {
            let (start, len): (Vec<u64>, Vec<u64>) = shape.iter().zip(&picks).map(|(&n, &(a, b))| {
                let s = if n == 0 { 0 } else { a % (n + 1) };
                (s, b % (n - s + 1))
            }).unzip();
            Region::new(start, len).unwrap()
        };
        let parts: Vec<_> = grid.chunks_in_region(&region).unwrap().collect();
        let mut chunks: Vec<Vec<i64>> = parts.iter().map(|p| p.chunk.clone()).collect();
        let sorted = { let mut c = chunks.clone(); c.sort(); c };
        prop_assert_eq!(&chunks, &sorted);
        chunks.dedup();
        prop_assert_eq!(chunks.len(), parts.len());
        let covered: u64 = parts.iter().map(|p| p.in_region.shape.iter().product::<u64>()).sum();
        prop_assert_eq!(covered, region.shape.iter().product::<u64>());
        for p in &parts {
            let whole = grid.chunk_part(&p.chunk).unwrap();
            let abs = Region::new(
                p.in_region.start.iter().zip(&region.start).map(|(a, b)| a + b).collect(),
                p.in_region.shape.clone(),
            ).unwrap();
            prop_assert!(whole.in_region.contains_region(&abs));
            prop_assert_eq!(grid.buffer_offset(&p.chunk), vec![0; shape.len()]);
        }
    }

    #[test]
    fn run_length_and_expanded_forms_agree(axes in prop::collection::vec(axis_case(), 1..=3)) {
        let runs = build(&axes);
        let shape = runs.shape().to_vec();
        let flat = RectilinearChunkGrid::new(expanded_config(&axes), &shape).unwrap();
        prop_assert_eq!(runs.grid_range(), flat.grid_range());
        for g in runs.chunk_indices() {
            prop_assert_eq!(runs.chunk_part(&g), flat.chunk_part(&g));
            prop_assert_eq!(runs.chunk_buffer_shape(&g), flat.chunk_buffer_shape(&g));
        }
        // the definition written back is the one read
        let again = RectilinearChunkGrid::from_def(&runs.to_def(), &shape).unwrap();
        prop_assert_eq!(again.config(), runs.config());
    }

    #[test]
    fn resize_matches_brute_force(
        axes in prop::collection::vec(axis_case(), 1..=2),
        grow in prop::collection::vec(0u64..=9, 2),
    ) {
        let old = build(&axes);
        let new_shape: Vec<u64> = old.shape().iter().zip(&grow).map(|(&n, &g)| (n + g) % 14).collect();
        let has_empty_listed = axes.iter().zip(&new_shape).any(|(a, &n)| {
            matches!(&a.edges, AxisEdges::Listed(items) if items.is_empty()) && n > 0
        });
        let r = match resize::resize(&old, &new_shape) {
            Err(e) => {
                prop_assert!(has_empty_listed, "{e}");
                return Ok(());
            }
            Ok(r) => r,
        };
        prop_assert_eq!(r.grid.shape(), new_shape.as_slice());
        let mut removed = BTreeSet::new();
        let mut clipped = BTreeSet::new();
        for g in old.chunk_indices() {
            let before = old.chunk_part(&g).unwrap();
            match r.grid.chunk_part(&g) {
                None => { removed.insert(g); }
                Some(after) => {
                    // a kept chunk keeps its place and buffer
                    prop_assert_eq!(&after.in_region.start, &before.in_region.start);
                    prop_assert_eq!(r.grid.chunk_buffer_shape(&g), old.chunk_buffer_shape(&g));
                    if (0..g.len()).any(|d| after.in_region.shape[d] < before.in_region.shape[d]) {
                        clipped.insert(g);
                    }
                }
            }
        }
        prop_assert_eq!(r.removed.iter().collect::<BTreeSet<_>>(), removed);
        prop_assert_eq!(r.clipped.iter().collect::<BTreeSet<_>>(), clipped);
        // growth repeated the last edge: the grown chunks have its length
        for (d, a) in axes.iter().enumerate() {
            if let AxisEdges::Listed(items) = &a.edges {
                let last = items.last().map(|e| e.size_count().0.get());
                let old_count = expanded(&a.edges, 0).len() as i64;
                for g in old_count..r.grid.grid_range()[d].end {
                    prop_assert_eq!(r.grid.as_any().downcast_ref::<RectilinearChunkGrid>().unwrap().chunk_edge(d, g).map(|e| e.1), last);
                }
                let new_items = match &r.grid.as_any().downcast_ref::<RectilinearChunkGrid>().unwrap().config().chunk_shapes[d] {
                    AxisEdges::Listed(items) => items.len(),
                    AxisEdges::Regular(_) => usize::MAX,
                };
                prop_assert_eq!(new_items, items.len(), "growth keeps the metadata's length");
            }
        }
    }
}

#[test]
fn huge_runs_allocate_nothing_of_their_size() {
    // 2^40 chunks of 1, 2^40 chunks of 3, and a last chunk: one run each, no expansion
    let json = r#"{"name": "rectilinear", "configuration": {"kind": "inline",
        "chunk_shapes": [[[1, 1099511627776], [3, 1099511627776], 7], [[2, 1024]]]}}"#;
    let def: zarr_meta::ExtensionDef = serde_json::from_str(json).unwrap();
    let len = (1u64 << 40) * 4 + 7;
    let (grid, large) = ALLOC.large_allocations_of(1 << 16, || {
        let grid = RectilinearChunkGrid::from_def(&def, &[len, 2048]).unwrap();
        let far = grid.chunk_of(&[len - 1, 2047]).unwrap();
        assert_eq!(far, (vec![1i64 << 41, 1023], vec![6, 1]));
        let mid = grid.chunk_of(&[(1 << 40) + 4, 0]).unwrap();
        assert_eq!(mid, (vec![(1i64 << 40) + 1, 0], vec![1, 0]));
        assert_eq!(grid.num_chunks(), Some(((1u64 << 41) + 1) * 1024));
        let region = Region::new(vec![(1 << 40) - 1, 3], vec![3, 2]).unwrap();
        let parts: Vec<_> = grid.chunks_in_region(&region).unwrap().collect();
        assert_eq!(parts.len(), 2 * 2);
        let grown = resize::append(&grid, 0, 1 << 50).unwrap();
        assert_eq!(grown.grid.shape()[0], len + (1 << 50));
        grid
    });
    assert!(
        large.is_empty(),
        "{} allocations of 64 KiB or more",
        large.len()
    );
    assert_eq!(grid.chunk_buffer_shape(&[1i64 << 41, 0]), Some(vec![7, 2]));
}

#[test]
fn absurd_metadata_is_an_error_not_a_panic() {
    let cases = [
        r#"{"kind": "inline", "chunk_shapes": [[[18446744073709551615, 18446744073709551615], 1]]}"#,
        r#"{"kind": "inline", "chunk_shapes": [[18446744073709551615, 18446744073709551615]]}"#,
        r#"{"kind": "inline", "chunk_shapes": [18446744073709551615]}"#,
        r#"{"kind": "inline", "chunk_shapes": [[[1, 18446744073709551615]]]}"#,
    ];
    for text in cases {
        let config: RectilinearConfig = serde_json::from_str(text).unwrap();
        for len in [0, 1, 5, i64::MAX as u64] {
            if let Ok(grid) = RectilinearChunkGrid::new(config.clone(), &[len]) {
                if len > 0 {
                    let (chunk, _) = grid.chunk_of(&[len - 1]).unwrap();
                    assert!(grid.chunk_buffer_shape(&chunk).is_some());
                    let parts = grid
                        .chunks_in_region(&Region::new(vec![len - 1], vec![1]).unwrap())
                        .unwrap()
                        .count();
                    assert_eq!(parts, 1);
                }
                let _ = resize::append(&grid, 0, u64::MAX / 2);
                let _ = resize::append(&grid, 0, 3);
            }
        }
    }
    // the last chunk of 2^64 - 1 reaches past u64 positions: its part is still right
    let config: RectilinearConfig =
        serde_json::from_str(r#"{"kind": "inline", "chunk_shapes": [[3, 18446744073709551615]]}"#)
            .unwrap();
    let grid = RectilinearChunkGrid::new(config, &[10]).unwrap();
    let part = grid.chunk_part(&[1]).unwrap();
    assert_eq!(part.in_region, Region::new(vec![3], vec![7]).unwrap());
    assert_eq!(grid.chunk_buffer_shape(&[1]), Some(vec![u64::MAX]));
}
