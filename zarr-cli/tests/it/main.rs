//! The zarr command's tests that need no service, in one binary (one build and link instead
//! of one per file). The tests that scripts/test runs with the peers' venv or the local S3
//! server (conformance, interop, s3, s3_faults) keep binaries of their own.

#[path = "../common/mod.rs"]
mod common;

mod bounded;
mod commands;
mod prepend_example;
mod rectilinear;
mod sparse;
mod v2;
