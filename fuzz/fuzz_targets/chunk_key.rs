#![no_main]
//! Chunk keys decoded by the `default` and `v2` encodings with both separators.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| zarr_grid::fuzzing::chunk_key::run(data));
