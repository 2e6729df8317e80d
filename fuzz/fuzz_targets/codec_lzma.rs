#![no_main]
//! Stored chunks decoded by fixed `numcodecs.lzma` chains (first byte: which chain).
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| zarr_numcodecs::fuzzing::run("lzma", data));
