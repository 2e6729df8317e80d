//! Replays the fuzz corpus and regressions of the `metadata` fuzz target (parsing part) and
//! of the `metadata_v2` target as ordinary tests through their bodies,
//! `zarr_meta::fuzzing::{metadata, metadata_v2}::run`: no cargo-fuzz needed. See
//! fuzz/README.md.

use zarr_meta::fuzzing::{metadata, metadata_v2};
use zarr_testkit::corpus::{replay_fuzz_target, Inputs};

#[test]
fn metadata_corpus_replays_cleanly() {
    replay_fuzz_target("metadata", Inputs::Fixed, metadata::run);
}

#[test]
fn metadata_v2_corpus_replays_cleanly() {
    let ran = replay_fuzz_target("metadata_v2", Inputs::Fixed, metadata_v2::run);
    assert!(ran > 100, "the metadata_v2 corpus has only {ran} inputs");
}

#[test]
#[ignore = "inputs of bugs not fixed yet (fuzz/regressions/KNOWN_FAILURES)"]
fn known_failures() {
    replay_fuzz_target("metadata", Inputs::KnownFailures, metadata::run);
}
