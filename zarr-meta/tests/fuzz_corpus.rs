//! Replays the fuzz corpus and regressions of the `metadata` fuzz target (parsing part) as
//! an ordinary test: no cargo-fuzz needed. See `fuzz/targets_common/README.md`.

include!("../../fuzz/targets_common/metadata.rs");
include!("../../fuzz/targets_common/replay.rs");

#[test]
fn metadata_corpus_replays_cleanly() {
    let ran = replay_corpus("metadata", false, fuzz_metadata_parse);
    assert!(ran > 0, "the metadata corpus is empty");
}

#[test]
#[ignore = "inputs of bugs not fixed yet (fuzz/regressions/KNOWN_FAILURES)"]
fn known_failures() {
    replay_corpus("metadata", true, fuzz_metadata_parse);
}
