#![no_main]
//! Chunk keys decoded by the `default` and `v2` encodings with both separators.
use libfuzzer_sys::fuzz_target;

include!("../targets_common/chunk_key.rs");

fuzz_target!(|data: &[u8]| fuzz_chunk_key(data));
