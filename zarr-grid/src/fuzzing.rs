//! The bodies of the fuzz targets that exercise this crate (cargo feature `fuzzing`; **not a
//! stable API**: it changes with the targets).
//!
//! `fuzz/fuzz_targets/<target>.rs` calls them (the `fuzz` crate enables the feature), and
//! `tests/fuzz_corpus.rs` replays the target's corpus and regressions through the same
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
