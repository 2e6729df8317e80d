//! zarr-meta's integration tests in one binary (one build and link instead of one per file).

mod conformance;
mod conformance_v2;
mod fuzz_corpus;
mod roundtrip;
mod roundtrip_v2;
