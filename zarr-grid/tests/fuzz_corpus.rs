//! Replays the fuzz corpus and regressions of the `chunk_key` fuzz target as an ordinary test
//! through its body, `zarr_grid::fuzzing::chunk_key::run`: no cargo-fuzz needed. See
//! fuzz/README.md.

use zarr_grid::fuzzing::chunk_key;
use zarr_testkit::corpus::{replay_fuzz_target, Inputs};

#[test]
fn chunk_key_corpus_replays_cleanly() {
    replay_fuzz_target("chunk_key", Inputs::Fixed, chunk_key::run);
}

#[test]
#[ignore = "inputs of bugs not fixed yet (fuzz/regressions/KNOWN_FAILURES)"]
fn known_failures() {
    replay_fuzz_target("chunk_key", Inputs::KnownFailures, chunk_key::run);
}
