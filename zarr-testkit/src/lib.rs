#![doc = include_str!("../README.md")]
// Only `alloc` holds `unsafe` (the `GlobalAlloc` impl); it allows it for itself.
#![deny(unsafe_code)]

pub mod alloc;
pub mod child;
pub mod corpus;
pub mod peers;
pub mod proxy;
mod report;
pub mod rng;
pub mod s3;

pub use alloc::CountingAlloc;
pub use report::report;
pub use rng::Rng;

use std::path::PathBuf;

/// The root of the repository (the workspace folder this crate sits in).
#[must_use]
pub fn repo_root() -> PathBuf {
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    here.parent().unwrap_or(here).to_path_buf()
}
