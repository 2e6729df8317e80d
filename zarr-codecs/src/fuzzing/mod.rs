//! The bodies of the fuzz targets that exercise this crate (cargo feature `fuzzing`; **not a
//! stable API**: it changes with the targets).
//!
//! `fuzz/fuzz_targets/<target>.rs` calls them (the `fuzz` crate enables the feature), and
//! `tests/it/fuzz_corpus.rs` replays each target's corpus and regressions through the same
//! functions under plain `cargo test`. A panic is a finding.
//!
//! The fixed chains name codecs of the default features: with one of them compiled out,
//! building its chains panics (naming the feature).
//!
//! [`golden`] is the check of one golden test vector, which the golden tests of zarr-codecs
//! and zarr-numcodecs share.

pub mod codec;
pub mod golden;
pub mod shard;
#[cfg(feature = "vlen")]
pub mod vlen;
