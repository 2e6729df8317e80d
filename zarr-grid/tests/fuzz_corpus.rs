//! Replays the fuzz corpus and regressions of the `chunk_key` fuzz target as an ordinary
//! test: no cargo-fuzz needed. See `fuzz/targets_common/README.md`.

include!("../../fuzz/targets_common/chunk_key.rs");
include!("../../fuzz/targets_common/replay.rs");

#[test]
fn chunk_key_corpus_replays_cleanly() {
    let ran = replay_corpus("chunk_key", false, fuzz_chunk_key);
    assert!(ran > 0, "the chunk_key corpus is empty");
}

#[test]
#[ignore = "inputs of bugs not fixed yet (fuzz/regressions/KNOWN_FAILURES)"]
fn known_failures() {
    replay_corpus("chunk_key", true, fuzz_chunk_key);
}
