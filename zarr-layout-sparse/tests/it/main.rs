//! zarr-layout-sparse's integration tests in one binary (one build and link instead of one per
//! file).

mod corruption;
mod fuzz_corpus;
mod roundtrip;
mod shared_examples;
