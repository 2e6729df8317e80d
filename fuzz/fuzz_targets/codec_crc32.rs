#![no_main]
//! Stored chunks decoded by fixed `numcodecs.crc32` chains (first byte: which chain).
use libfuzzer_sys::fuzz_target;

include!("../targets_common/codecs.rs");

fuzz_target!(|data: &[u8]| fuzz_codec("crc32", data));
