#![no_main]
//! Stored shards read whole and by regions through a slice source (first byte: which chain).
use libfuzzer_sys::fuzz_target;

include!("../targets_common/shard.rs");

fuzz_target!(|data: &[u8]| fuzz_shard(data));
