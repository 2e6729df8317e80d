#![no_main]
//! Stored shards read whole and by regions through a slice source (first byte: which chain).
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| zarr_codecs::fuzzing::shard::run(data));
