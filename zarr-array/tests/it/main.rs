//! zarr-array's integration tests that need no service and no process of their own, in one
//! binary (one build and link instead of one per file). Kept apart: the tests that scripts/test
//! runs with the peers' venv or the local S3 server (interop, interop_sparse,
//! interop_consolidated, s3, s3_faults, concurrent_updates), those that re-run their binary as
//! child processes (concurrency, kill) and those that install a counting global allocator
//! (limits, sparse_zero_copy).

#[path = "../common/mod.rs"]
mod common;

mod api;
mod cache;
mod conformance;
mod consolidated;
mod create;
mod data_types;
mod extensions;
mod faults;
mod index_cache;
mod partial_io;
mod prepend;
mod rectilinear;
mod sparse;
mod v2;
