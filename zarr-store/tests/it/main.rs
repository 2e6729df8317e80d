//! zarr-store's integration tests that need no service, in one binary (one build and link
//! instead of one per file). object_store.rs and s3_faults.rs keep binaries of their own:
//! scripts/test runs their ignored tests with the local S3 server.

mod conformance;
mod filesystem;
mod paths;
mod proptest;
