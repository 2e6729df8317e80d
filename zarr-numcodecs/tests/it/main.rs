//! zarr-numcodecs' integration tests in one binary (one build and link instead of one per
//! file).

mod fuzz_corpus;
mod golden;
mod v2;
