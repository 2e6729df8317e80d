//! The bodies of the fuzz targets that exercise this crate (cargo feature `fuzzing`; **not a
//! stable API**: it changes with the targets).
//!
//! `fuzz/fuzz_targets/<target>.rs` calls them (the `fuzz` crate enables the feature), and
//! `tests/it/fuzz_corpus.rs` replays the target's corpus and regressions through the same
//! functions under plain `cargo test`. A panic is a finding.

/// The `chunk_key` target: chunk keys decoded and encoded by every key encoding.
pub mod chunk_key {
    use crate::key_encoding::{DefaultChunkKeyEncoding, V2ChunkKeyEncoding};
    use crate::{ChunkKeyEncoding, Separator};

    /// The first byte picks a key encoding (bits 3-4: default `/`, default `.`, v2 `.`, v2
    /// `/`) and a rank (bits 0-2); the rest is the key. Decoding is strict, so a key that
    /// decodes is the canonical encoding of its indices.
    pub fn run(data: &[u8]) {
        let Some((&selector, rest)) = data.split_first() else {
            return;
        };
        let Ok(key) = std::str::from_utf8(rest) else {
            return;
        };
        let rank = usize::from(selector & 7);
        let encoding: Box<dyn ChunkKeyEncoding> = match (selector >> 3) & 3 {
            0 => Box::new(DefaultChunkKeyEncoding::new(Separator::Slash)),
            1 => Box::new(DefaultChunkKeyEncoding::new(Separator::Dot)),
            2 => Box::new(V2ChunkKeyEncoding::new(Separator::Dot)),
            _ => Box::new(V2ChunkKeyEncoding::new(Separator::Slash)),
        };
        if let Ok(indices) = encoding.decode(key, rank) {
            assert_eq!(indices.len(), rank, "decoded rank of {key:?}");
            assert_eq!(
                encoding.encode(&indices),
                key,
                "a key that decodes is the canonical encoding of its indices"
            );
            if !key.is_empty() {
                assert!(
                    store_like_key_ok(key),
                    "a decoded chunk key {key:?} must be a valid store key segment list"
                );
            }
        }
        // every index tuple encodes to a key that decodes back
        let indices: Vec<i64> = rest
            .chunks(8)
            .take(rank)
            .map(|c| {
                let mut b = [0u8; 8];
                b[..c.len()].copy_from_slice(c);
                i64::from_le_bytes(b)
            })
            .collect();
        if indices.len() == rank {
            let key = encoding.encode(&indices);
            assert_eq!(
                encoding.decode(&key, rank).ok().as_deref(),
                Some(indices.as_slice()),
                "encode then decode of {indices:?} ({key:?})"
            );
        }
    }

    /// The part of the store key rules a chunk key can break: no empty, `.` or `..` segment.
    fn store_like_key_ok(key: &str) -> bool {
        key.split('/')
            .all(|s| !s.is_empty() && s != "." && s != "..")
    }
}

/// The `chunk_grid` target: a `zarr.json` document's `shape` and `chunk_grid`, built by every
/// grid of this build and probed. For positions picked from the shape (its corners, middle,
/// and positions drawn from the input's bytes), the chunk that holds a position covers it at
/// the offset `chunk_of` gives, inside its buffer; a small region around each position is
/// covered exactly once by `chunks_in_region`; the grid written back (`to_def`) builds the
/// same grid; and growing the array at the end keeps every chunk and offset of the old
/// positions. Shrinking goes through [`crate::resize`]. Nothing may panic.
pub mod chunk_grid {
    use serde_json::Value;
    use zarr_meta::ExtensionDef;

    use crate::geometry::Region;
    use crate::{build_grid, default_registry, resize, ChunkGrid};

    /// The highest rank probed (the work per probe grows as 3^rank).
    const MAX_RANK: usize = 8;
    /// Positions probed per input, at most.
    const MAX_PROBES: usize = 12;

    /// Runs one input (see the module's documentation).
    pub fn run(data: &[u8]) {
        let Ok(doc) = serde_json::from_slice::<Value>(data) else {
            return;
        };
        let Some(shape) = doc.get("shape").and_then(Value::as_array) else {
            return;
        };
        let Some(shape) = shape
            .iter()
            .map(Value::as_u64)
            .collect::<Option<Vec<u64>>>()
        else {
            return;
        };
        if shape.len() > MAX_RANK {
            return;
        }
        let Some(def) = doc
            .get("chunk_grid")
            .and_then(|g| serde_json::from_value::<ExtensionDef>(g.clone()).ok())
        else {
            return;
        };
        let registry = default_registry();
        let Ok(grid) = build_grid(&registry, &def, &shape) else {
            return;
        };
        assert_eq!(grid.shape(), shape.as_slice(), "the grid's shape");
        assert_eq!(grid.rank(), shape.len(), "the grid's rank");
        let domain = grid.domain();
        for (d, &(lo, hi)) in domain.iter().enumerate() {
            assert_eq!(
                hi.checked_sub(lo).and_then(|n| u64::try_from(n).ok()),
                Some(shape[d]),
                "the domain {domain:?} has the shape {shape:?}"
            );
        }
        let probes = probes(&shape, data);
        for p in &probes {
            check_position(grid.as_ref(), p);
            check_region(grid.as_ref(), p);
        }

        // the definition written back builds the same grid
        let written = grid.to_def();
        let again = build_grid(&registry, &written, &shape)
            .unwrap_or_else(|e| panic!("{written:?} written back does not build: {e}"));
        assert_eq!(again.to_def(), written, "to_def is stable");
        for p in &probes {
            assert_eq!(
                again.chunk_of(p).ok(),
                grid.chunk_of(p).ok(),
                "{written:?} written back places {p:?} elsewhere"
            );
        }

        // growing at the end keeps the chunks (and offsets) of every old position
        for axis in 0..shape.len() {
            let mut grown = shape.clone();
            let Some(n) = grown[axis].checked_add(1 + u64::from(data[0] % 7)) else {
                continue;
            };
            grown[axis] = n;
            let Ok(bigger) = grid.with_shape(&grown) else {
                continue;
            };
            for p in &probes {
                assert_eq!(
                    bigger.chunk_of(p).ok(),
                    grid.chunk_of(p).ok(),
                    "growing axis {axis} to {n} moves {p:?}"
                );
            }
            for p in &probes {
                check_position(bigger.as_ref(), p);
            }
        }
        // shrinking: every axis to half its length
        let half: Vec<u64> = shape.iter().map(|n| n / 2).collect();
        if let Ok(r) = resize(grid.as_ref(), &half) {
            assert_eq!(r.grid.shape(), half.as_slice(), "the shrunk grid's shape");
        }
    }

    /// The corners and middle of the shape, and positions drawn from `data`.
    fn probes(shape: &[u64], data: &[u8]) -> Vec<Vec<u64>> {
        if shape.contains(&0) {
            return Vec::new();
        }
        let mut out = vec![
            vec![0; shape.len()],
            shape.iter().map(|n| n - 1).collect(),
            shape.iter().map(|n| n / 2).collect(),
        ];
        // an FNV-1a hash of the input seeds the drawn positions
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for &b in data {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        while out.len() < MAX_PROBES {
            out.push(
                shape
                    .iter()
                    .map(|&n| {
                        h = h.rotate_left(17).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5851;
                        h % n
                    })
                    .collect(),
            );
        }
        out
    }

    /// The chunk of `p` covers it, at the offset `chunk_of` gives, inside its buffer.
    fn check_position(grid: &dyn ChunkGrid, p: &[u64]) {
        let (chunk, offset) = grid
            .chunk_of(p)
            .unwrap_or_else(|e| panic!("{p:?} is inside {:?}: {e}", grid.shape()));
        assert!(grid.contains_chunk(&chunk), "{chunk:?} of {p:?} is a chunk");
        let buffer = grid
            .chunk_buffer_shape(&chunk)
            .unwrap_or_else(|| panic!("{chunk:?} has a buffer shape"));
        assert!(
            offset.iter().zip(&buffer).all(|(o, b)| o < b),
            "{p:?}: offset {offset:?} inside the buffer {buffer:?}"
        );
        let part = grid
            .chunk_part(&chunk)
            .unwrap_or_else(|| panic!("{chunk:?} has a part"));
        assert!(part.in_region.contains(p), "{chunk:?}'s part holds {p:?}");
        let at: Vec<u64> = (0..p.len())
            .map(|d| part.in_chunk.start[d] + (p[d] - part.in_region.start[d]))
            .collect();
        assert_eq!(at, offset, "{p:?}: chunk_part and chunk_of agree");
    }

    /// The region of up to 3 positions per axis from `p` is covered once by its chunks.
    fn check_region(grid: &dyn ChunkGrid, p: &[u64]) {
        let shape = grid.shape();
        let len: Vec<u64> = p.iter().zip(shape).map(|(&s, &n)| (n - s).min(3)).collect();
        let Ok(region) = Region::new(p.to_vec(), len) else {
            return;
        };
        let parts = grid
            .chunks_in_region(&region)
            .unwrap_or_else(|e| panic!("{region:?} is inside {shape:?}: {e}"));
        let mut covered = 0u64;
        for part in parts {
            let buffer = grid
                .chunk_buffer_shape(&part.chunk)
                .unwrap_or_else(|| panic!("{:?} has a buffer shape", part.chunk));
            assert!(
                Region::whole(&buffer).contains_region(&part.in_chunk),
                "{:?}: {:?} inside its buffer {buffer:?}",
                part.chunk,
                part.in_chunk
            );
            assert_eq!(
                part.in_chunk.shape, part.in_region.shape,
                "the part's two shapes"
            );
            assert!(
                Region::whole(&region.shape).contains_region(&part.in_region),
                "{:?} inside {region:?}",
                part.in_region
            );
            covered += part.in_region.num_elements().unwrap_or(0);
        }
        assert_eq!(
            Some(covered),
            region.num_elements(),
            "{region:?} is covered exactly once"
        );
    }
}
