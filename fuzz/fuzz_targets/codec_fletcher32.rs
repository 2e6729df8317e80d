#![no_main]
//! Stored chunks decoded by fixed `numcodecs.fletcher32` chains (first byte: which chain).
use libfuzzer_sys::fuzz_target;

include!("../targets_common/codecs.rs");

fuzz_target!(|data: &[u8]| fuzz_codec("fletcher32", data));
