//! zarr-grid's integration tests in one binary (one build and link instead of one per file).
//! rectilinear.rs keeps a binary of its own: it installs a global allocator that refuses large
//! requests.

mod corpus;
mod examples;
mod fuzz_corpus;
mod properties;
mod vectors;
