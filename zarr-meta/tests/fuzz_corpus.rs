//! Replays the fuzz corpus and regressions of the `metadata` fuzz target (parsing part) as
//! an ordinary test through its body, `zarr_meta::fuzzing::metadata::run`: no cargo-fuzz
//! needed. See fuzz/README.md.

use zarr_meta::fuzzing::metadata;
use zarr_testkit::corpus::{replay_fuzz_target, Inputs};

#[test]
fn metadata_corpus_replays_cleanly() {
    replay_fuzz_target("metadata", Inputs::Fixed, metadata::run);
}

#[test]
#[ignore = "inputs of bugs not fixed yet (fuzz/regressions/KNOWN_FAILURES)"]
fn known_failures() {
    replay_fuzz_target("metadata", Inputs::KnownFailures, metadata::run);
}
