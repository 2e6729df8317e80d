//! zarr-codecs' integration tests in one binary (one build and link instead of one per file).
//! limits.rs keeps a binary of its own: it installs a counting global allocator, one per
//! process, and its measurements must not count other tests' allocations.

mod chains;
mod corruption;
mod fuzz_corpus;
mod golden;
mod leaves;
mod partial;
mod partial_encode;
mod sparse;
mod vlen_corruption;
