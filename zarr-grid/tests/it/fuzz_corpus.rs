//! Replays the fuzz corpora and regressions of the `chunk_key` and `chunk_grid` fuzz targets as
//! ordinary tests through their bodies (`zarr_grid::fuzzing::chunk_key::run`,
//! `zarr_grid::fuzzing::chunk_grid::run`): no cargo-fuzz needed. See fuzz/README.md.

use zarr_grid::fuzzing::{chunk_grid, chunk_key};
use zarr_testkit::corpus::{replay_fuzz_target, Inputs};

#[test]
fn chunk_key_corpus_replays_cleanly() {
    replay_fuzz_target("chunk_key", Inputs::Fixed, chunk_key::run);
}

#[test]
fn chunk_grid_corpus_replays_cleanly() {
    replay_fuzz_target("chunk_grid", Inputs::Fixed, chunk_grid::run);
}

#[test]
#[ignore = "inputs of bugs not fixed yet (fuzz/regressions/KNOWN_FAILURES)"]
fn known_failures() {
    replay_fuzz_target("chunk_key", Inputs::KnownFailures, chunk_key::run);
    replay_fuzz_target("chunk_grid", Inputs::KnownFailures, chunk_grid::run);
}
