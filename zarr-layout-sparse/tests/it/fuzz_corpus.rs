//! Replays the fuzz corpus and regressions of the `sparse_decode` fuzz target as an ordinary
//! test through its body, `zarr_layout_sparse::fuzzing::decode::run`: no cargo-fuzz needed.
//! See fuzz/README.md.

use zarr_layout_sparse::fuzzing::decode;
use zarr_testkit::corpus::{replay_fuzz_target, Inputs};

#[test]
fn sparse_decode_corpus_replays_cleanly() {
    replay_fuzz_target("sparse_decode", Inputs::Fixed, decode::run);
}

#[test]
#[ignore = "inputs of bugs not fixed yet (fuzz/regressions/KNOWN_FAILURES)"]
fn known_failures() {
    replay_fuzz_target("sparse_decode", Inputs::KnownFailures, decode::run);
}

/// Writes seed inputs for `sparse_decode` into `fuzz/corpus/` (then minimise with
/// `cargo fuzz cmin`): each case's layout encoding an empty chunk, a chunk with a few entries
/// and a full chunk.
#[test]
#[ignore = "writes seeds into fuzz/corpus; run by hand when the cases change"]
fn generate_seeds() {
    use zarr_layout_sparse::{encode_dense_bytes, ElementKind};

    let dir = zarr_testkit::repo_root().join("fuzz/corpus/sparse_decode");
    std::fs::create_dir_all(&dir).expect("corpus folder");
    for (i, (layout, shape, size)) in decode::cases().into_iter().enumerate() {
        let elements: u64 = shape.iter().product();
        let kind = ElementKind::opaque(size).expect("a size");
        for (p, every) in [0u64, 3, 1].into_iter().enumerate() {
            let mut dense = vec![0u8; (elements as usize) * size];
            if every > 0 {
                for (e, value) in dense.chunks_exact_mut(size).enumerate() {
                    if (e as u64).is_multiple_of(every) {
                        value[0] = (e as u8).wrapping_add(1) | 1;
                    }
                }
            }
            let bytes =
                encode_dense_bytes(&layout, &shape, kind, &vec![0; size], &dense).expect("encodes");
            let mut data = vec![i as u8];
            data.extend_from_slice(&bytes);
            std::fs::write(dir.join(format!("seed-{i}-{p}")), data).expect("seed written");
        }
    }
}
