#![no_main]
//! Shards of strings decoded whole and by regions (first byte: one of three fixed chains).
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| zarr_codecs::fuzzing::vlen::run_shard(data));
